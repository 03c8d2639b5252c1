#!/usr/bin/env bash
# Builds the npm package into pkg/: cargo (wasm32, release) -> wasm-bindgen --target web ->
# wasm-opt -Oz -> inline copy and glue patch -> entry shims -> model catalogue -> size report
# with the gzip budget check.
set -euo pipefail
cd "$(dirname "$0")/.."

name=pi_agent_wasm
# The key of this build's inputs, taken before anything is built (scripts/build-key.sh).
key=$(bash scripts/build-key.sh)
# Panic locations of dependencies carry their source paths; the registry's prefix is cut, so
# the shipped .wasm names no directory of the machine that built it (and is 0.5 KB smaller).
remap=()
for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  [ -d "$dir" ] && remap+=("--remap-path-prefix=${dir}=")
done
# RUSTFLAGS replaces the target's rustflags of .cargo/config.toml, so its stack size is given
# here again (without it the shipped build had the default 1 MiB stack).
# -inline-threshold=0: LLVM inlines only what shrinks the code (0.3 KB of gzip).
RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-zstack-size=2097152 -C llvm-args=-inline-threshold=0 ${remap[*]}" \
  cargo build --release --target wasm32-unknown-unknown --quiet
rm -rf pkg
wasm-bindgen --target web --no-typescript --out-dir pkg --out-name "$name" \
  "target/wasm32-unknown-unknown/release/$name.wasm"
# -Oz twice: the second run finds what the first one's inlining exposed (0.6 KB of gzip).
# --flatten --rereloop first rebuilds the control flow for -Oz to shrink (1.2 KB of gzip), and
# once more after the first -Oz (0.4 KB). (--converge was measured too: 0.05 KB for 25 s more.)
# --low-memory-unused lets constant address parts fold into load/store offsets (1.3 KB):
# Rust places the stack first, so the low 1 KB is the far end of a 2 MB stack, which the
# bounded recursion never reaches, and nothing else lives there.
# --merge-similar-functions folds functions that differ only in constants into one with a
# parameter (generic instances, import shims): 0.2 KB of gzip, with a last -Oz after it.
# --gufa (whole-program inference of the values each place can hold) then finds constants and
# dead paths -Oz alone does not: 0.16 KB of gzip (--dae-optimizing found the same, not more).
node_modules/.bin/wasm-opt --low-memory-unused --flatten --rereloop -Oz --flatten --rereloop -Oz -Oz --merge-similar-functions -Oz --gufa -Oz --strip-debug --strip-producers --strip-target-features \
  "pkg/${name}_bg.wasm" -o "pkg/${name}_bg.wasm"
node scripts/package-wasm.mjs
cp src/js/*.js src/js/*.d.ts pkg/
# A stray pkg/.gitignore (as wasm-pack writes) would make npm leave the build out of the tarball.
rm -f pkg/.gitignore
# The `pi-agent-wasm/models` entry: pi-ai's model catalogue, generated from node_modules.
node scripts/gen-models.mjs
node scripts/size-report.mjs

# Keep this build (pkg/ and its size report) under its inputs' key: scripts/ensure-build.sh
# copies it into a fresh clone of the same sources instead of building again. The five newest
# builds are kept.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/pi-agent-wasm/builds"
if rm -rf "$cache/$key.tmp" && mkdir -p "$cache/$key.tmp" 2>/dev/null; then
  cp -r pkg "$cache/$key.tmp/pkg" && cp target/size-report.json "$cache/$key.tmp/" &&
    rm -rf "${cache:?}/$key" && mv "$cache/$key.tmp" "$cache/$key"
  ls -1dt "$cache"/*/ 2>/dev/null | tail -n +6 | xargs -r rm -rf
fi
mkdir -p target
echo "$key" >target/pkg.key
