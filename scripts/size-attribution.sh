#!/usr/bin/env bash
# The size report by component: rebuilds the .wasm with its function names kept (the shipped
# build strips them), runs twiggy over it and sums the bytes of each part of the code
# (scripts/size-attribution.mjs). `npm run size`; takes about a minute. twiggy is installed
# here once, with cargo, if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v twiggy >/dev/null 2>&1; then
  echo "[size] cargo install --locked twiggy"
  cargo install --locked twiggy
fi

out=target/size-attribution
mkdir -p "$out"
cargo build --release --target wasm32-unknown-unknown --quiet
wasm-bindgen --target web --no-typescript --keep-debug --out-dir "$out" --out-name named \
  target/wasm32-unknown-unknown/release/pi_agent_wasm.wasm
# The shipped build's passes, with the names kept (--debuginfo): the sizes are the shipped
# code's, give or take what the names hold back.
node_modules/.bin/wasm-opt --debuginfo --low-memory-unused --flatten --rereloop -Oz --flatten --rereloop -Oz -Oz \
  "$out/named_bg.wasm" -o "$out/named.wasm"
twiggy top -n 1000000 --format csv "$out/named.wasm" > "$out/top.csv"
node scripts/size-attribution.mjs "$out/top.csv" "$@"
