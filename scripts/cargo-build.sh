#!/usr/bin/env bash
# The cargo step of scripts/build.sh: the crate for wasm32, release. Its own script so that
# scripts/ensure-build.sh can run it while npm installs, with the very same flags (a change of
# RUSTFLAGS would make the build's own call compile everything again).
set -euo pipefail
cd "$(dirname "$0")/.."

# Panic locations of dependencies carry their source paths; the registry's prefix is cut, so
# the shipped .wasm names no directory of the machine that built it (and is 0.5 KB smaller).
remap=()
for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  [ -d "$dir" ] && remap+=("--remap-path-prefix=${dir}=")
done
RUSTFLAGS="${RUSTFLAGS:-} ${remap[*]}" cargo build --release --target wasm32-unknown-unknown --quiet
