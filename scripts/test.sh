#!/usr/bin/env bash
# Runs every test from a fresh clone: setup (idempotent), lint, native tests, the build,
# wasm tests in Node and Chromium, the JS tests (Node, Chromium, workerd, pack-and-install)
# and the consumer projects (bundlers, dev servers, Workers and Node apps using the package).
# Ends with one line "tests: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0
stage() { printf '\n== %s\n' "$*"; }

# Adds up "N passed; M failed" (cargo, wasm-bindgen-test) or "# pass N"/"# fail N" (node --test).
count() {
  local log=$1 p f
  # cargo / wasm-bindgen-test: "test result: ok. N passed; M failed"
  p=$(awk '/[0-9]+ passed; [0-9]+ failed/ { for (i = 1; i < NF; i++) if ($(i+1) ~ /^passed/) s += $i } END { print s+0 }' "$log")
  f=$(awk '/[0-9]+ passed; [0-9]+ failed/ { for (i = 1; i < NF; i++) if ($(i+1) ~ /^failed/) s += $i } END { print s+0 }' "$log")
  # node --test: "# pass N" / "# fail N"
  p=$((p + $(awk '/^# pass [0-9]+$/ { s += $3 } END { print s+0 }' "$log")))
  f=$((f + $(awk '/^# fail [0-9]+$/ { s += $3 } END { print s+0 }' "$log")))
  passed=$((passed + p))
  failed=$((failed + f))
}

# run NAME CMD...: runs a test stage, shows its output, counts its results.
run() {
  local name=$1 log="$logs/$1.log"
  shift
  stage "$name"
  local rc=0 before=$failed
  "$@" 2>&1 | tee "$log" || rc=$?
  count "$log"
  if [ "$rc" -ne 0 ]; then
    echo "stage '$name' failed (exit $rc)"
    # A stage that broke before reporting a failed test still counts as one failure.
    [ "$failed" -gt "$before" ] || failed=$((failed + 1))
    echo "tests: $passed passed, $failed failed"
    exit 1
  fi
}

stage setup
start=$(date +%s)
bash scripts/setup.sh
echo "setup took $(( $(date +%s) - start )) s"

stage "core purity guard"
# The core must not touch JS or the host clock: only src/wasm and src/js may.
# Comment lines are skipped: docs may name what the code must not use.
if grep -rnE 'wasm_bindgen|js_sys|web_sys|SystemTime|Instant::now|std::thread|tokio' src --include=*.rs \
  | grep -vE '^src/(wasm|js)/' | grep -vE '^[^:]+:[0-9]+:\s*//' \
  | grep -vE '^src/lib\.rs:.*(pub mod wasm|cfg\(target_arch)'; then
  echo "core purity guard: the lines above use host or JS APIs outside src/wasm"
  exit 1
fi
# JSON text is read only through src/json.rs (its nesting bound and lone-surrogate rule);
# serde_json's reader is only the oracle of its tests.
if grep -rnE 'serde_json::(from_(str|slice|reader)|Deserializer)' src --include=*.rs | grep -vE '^src/json(\.rs|/)' \
  | grep -vE '^[^:]+:[0-9]+:\s*//'; then
  echo "json guard: the lines above read JSON text without crate::json::parse (no depth bound)"
  exit 1
fi
echo ok

stage "cargo fmt --check"
cargo fmt --check
stage "cargo clippy (native, all targets)"
cargo clippy --all-targets --quiet -- -D warnings
stage "cargo clippy (wasm32, lib and wasm tests)"
# With the test-trap feature: its cfg-gated lines are compiled by nothing else before the JS tests.
cargo clippy --target wasm32-unknown-unknown --lib --tests --features test-trap --quiet -- -D warnings
stage "cargo clippy (wasm32, the loop-only build that npm run size -- --loop-only measures)"
cargo clippy --target wasm32-unknown-unknown --lib --no-default-features --quiet -- -D warnings

run native-tests cargo test --quiet

# cargo-fuzz targets (fuzz/): build, then each target over its seeds and a fixed number of
# mutations; a crash or a broken invariant fails the stage.
run fuzz-smoke bash scripts/fuzz.sh smoke

stage build
bash scripts/build.sh
# The variant that traps on purpose, for tests/js/trap.test.mjs (into target/, never pkg/).
node tests/js/shared/trap-build.mjs

run wasm-node cargo test --target wasm32-unknown-unknown --test wasm
run wasm-chromium env WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  cargo test --target wasm32-unknown-unknown --test wasm

stage "typescript"
node_modules/.bin/tsc -p tests/types
echo "tsc --noEmit: ok"

run js-tests node --test --test-concurrency=2 tests/js/

# The package as users install it, in real consumer projects (tests/consumers/*): Vite 5/6/8
# build and dev server (in 6 and 8 also the agent in a module Web Worker), esbuild, Rollup,
# webpack, a wrangler Worker, Node ESM/CJS/bundled, and vitest with jsdom.
start=$(date +%s)
run consumers node --test tests/consumers/consumers.test.mjs
echo "consumer projects took $(( $(date +%s) - start )) s"

printf '\ntests: %d passed, %d failed\n' "$passed" "$failed"
