#!/usr/bin/env bash
# Installs the tools the build and the tests need. Idempotent: each step checks first, so a
# second run on a ready machine takes a few seconds.
#   scripts/setup.sh demo   what the build needs, for `npm start`: the wasm32 target,
#                           wasm-bindgen-cli, the npm devDependencies (binaryen's wasm-opt)
#   scripts/setup.sh        all of that, and what the tests need besides: cargo-fuzz and a
#                           nightly toolchain, the consumer projects' tools, Chromium
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-all}
case "$mode" in
  demo | all) ;;
  *) echo "usage: scripts/setup.sh [demo]" >&2; exit 2 ;;
esac
step() { printf '[setup] %s\n' "$*"; }

# 1. The wasm target for the machine's Rust toolchain.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 2. wasm-bindgen-cli at exactly the version of the wasm-bindgen crate in Cargo.lock:
#    the generated JS glue and the crate's schema must match.
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [ -z "$want" ]; then
  echo "[setup] cannot read the wasm-bindgen version from Cargo.lock" >&2
  exit 1
fi
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  step "cargo install wasm-bindgen-cli $want (found: ${have:-none}); takes a few minutes once"
  # Not --locked: the CLI's own lockfile pins a crate version the registry no longer serves.
  cargo install wasm-bindgen-cli --version "$want" --force
fi

# 3. npm packages (wasm-opt from binaryen, miniflare/wrangler, playwright-core, typescript).
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.setup-lock; then
  step "npm ci"
  # --loglevel=error: the reference packages (pi 1.6.0, devDependencies for the differential
  # tests) declare node >=22.19, and npm warns of that on Node 20 (EBADENGINE); they run on
  # Node 20.19+ in every test here, so the warning is replaced by the note below.
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.setup-lock
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 1 : 0)' &&
    step "note: pi's packages (devDependencies, the reference for the tests) ask for Node 22.19+ and run here on $(node -v)"
fi

if [ "$mode" = demo ]; then
  step "ready for the demo and the build"
  exit 0
fi

# 2b. cargo-fuzz and the nightly toolchain it builds with, for the fuzz targets (fuzz/,
#     scripts/fuzz.sh). Without a nightly toolchain scripts/fuzz.sh unlocks the stable one.
if ! rustup toolchain list | grep -q '^nightly'; then
  step "rustup toolchain install nightly --profile minimal"
  rustup toolchain install nightly --profile minimal ||
    echo "[setup] no nightly toolchain to be had; the fuzz targets build on stable with RUSTC_BOOTSTRAP=1"
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  step "cargo install --locked cargo-fuzz"
  cargo install --locked cargo-fuzz
fi

# 3b. The consumer projects (tests/consumers/*: Vite, esbuild, Rollup, webpack, wrangler,
#     Node apps, vitest with jsdom), each from its own committed lockfile. The package itself
#     is not in their lockfiles: the consumer test puts a freshly packed copy into their
#     node_modules.
consumer_ci() {
  local dir=$1
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  mkdir -p "$dir/node_modules"
  cp "$dir/package-lock.json" "$dir/node_modules/.setup-lock"
}
pending=()
for lock in tests/consumers/*/package-lock.json; do
  dir=$(dirname "$lock")
  cmp -s "$lock" "$dir/node_modules/.setup-lock" || pending+=("$dir")
done
if [ "${#pending[@]}" -gt 0 ]; then
  # Four at a time: mostly waiting on the disk and the network (with a warm npm cache on two
  # cores, 14 s for all of them, against 20 s one after another).
  step "npm ci in ${pending[*]}"
  export -f consumer_ci
  printf '%s\n' "${pending[@]}" | xargs -P 4 -I{} bash -c 'consumer_ci "$1"' _ {}
fi

# 4. Debian's Chromium and ChromeDriver for the browser tests. Never a downloaded browser.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  step "apt-get install chromium chromium-driver"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi

step "ready"
