#!/usr/bin/env bash
# The size report by component: rebuilds the .wasm with its function names kept (the shipped
# build strips them), runs twiggy over it and sums the bytes of each part of the code
# (scripts/size-attribution.mjs). `npm run size`; takes about a minute. twiggy is installed
# here once, with cargo, if it is missing.
#
# `npm run size -- --loop-only` measures the build without the built-in providers (cargo
# `--no-default-features`; never shipped): what the loop, its JS binding and argument
# validation cost before any provider. It prints the gzip of that .wasm as shipped.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v twiggy >/dev/null 2>&1; then
  echo "[size] cargo install --locked twiggy"
  cargo install --locked twiggy
fi

features=()
out=target/size-attribution
cargo_dir=target
args=()
for a in "$@"; do
  if [ "$a" = "--loop-only" ]; then
    features=(--no-default-features)
    out=target/size-attribution-loop-only
    cargo_dir=$out/cargo
  else
    args+=("$a")
  fi
done
mkdir -p "$out"
# The loop-only build has its own target directory, so that its .wasm is never where
# build.sh looks.
CARGO_TARGET_DIR="$cargo_dir" cargo build --release --target wasm32-unknown-unknown --quiet "${features[@]}"
wasm-bindgen --target web --no-typescript --keep-debug --out-dir "$out" --out-name named \
  "$cargo_dir/wasm32-unknown-unknown/release/pi_agent_wasm.wasm"
# The shipped build's passes, with the names kept (--debuginfo): the sizes are the shipped
# code's, give or take what the names hold back.
node_modules/.bin/wasm-opt --debuginfo --low-memory-unused --flatten --rereloop -Oz --flatten --rereloop -Oz -Oz --merge-similar-functions -Oz --gufa -Oz \
  "$out/named_bg.wasm" -o "$out/named.wasm"
node_modules/.bin/wasm-opt --strip-debug --strip-producers --strip-target-features "$out/named.wasm" -o "$out/ship.wasm"
twiggy top -n 1000000 --format csv "$out/named.wasm" > "$out/top.csv"
node scripts/size-attribution.mjs "$out/top.csv" --wasm "$out/ship.wasm" "${args[@]}"
