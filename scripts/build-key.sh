#!/usr/bin/env bash
# Prints a key for the package's build inputs: the content of every file the build reads
# (the crate, the hand-written JS, the build scripts, the lockfiles that pin wasm-bindgen,
# binaryen and pi-ai's model data) and the Rust compiler's version. scripts/build.sh keeps
# each build's pkg/ under this key, so a fresh clone of sources already built on this machine
# (`npm start`) copies it instead of building again.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  rustc -V 2>/dev/null || echo "no rustc"
  find src Cargo.toml Cargo.lock package-lock.json .cargo \
    scripts/build.sh scripts/package-wasm.mjs scripts/gen-models.mjs scripts/size-report.mjs \
    -type f 2>/dev/null | LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -c1-32
