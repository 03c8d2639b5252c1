#!/usr/bin/env bash
# Runs every test from a fresh clone: setup (idempotent), lint, native tests, the build,
# wasm tests in Node and Chromium, the JS tests (Node, Chromium, workerd, pack-and-install,
# the docs) and the consumer projects (bundlers, dev servers, Workers and Node apps using the
# package).
#
# Ends with a summary: one line per stage with its time and its counts, then the totals and
# the line "tests: N passed, M failed". A stage that runs tests must run at least one: a
# stage that counted none fails (a runner that printed no report, or a report the counter
# does not read, would otherwise pass unseen). The log is plain text: bytes that are not
# UTF-8 and control characters other than tab and newline are written as \xNN.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0
begun=$(date +%s)
summary=()

# Plain text: invalid UTF-8 and control characters (but tab and newline) as \xNN; CRLF as LF.
plain() {
  perl -CO -MEncode -ne 'BEGIN { $| = 1 }
    $_ = Encode::decode("UTF-8", $_, sub { sprintf "\\x%02X", shift });
    s/\r\n/\n/g;
    s/([\x00-\x08\x0b-\x1f\x7f])/sprintf("\\x%02X", ord $1)/ge;
    print'
}

# Reads "N passed; M failed" (cargo, wasm-bindgen-test, the fuzz smoke run) and "# pass N" /
# "# fail N" (node --test) from a log; prints "P F".
count() {
  awk '
    /[0-9]+ passed; [0-9]+ failed/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
    /^# pass [0-9]+$/ { p += $3 }
    /^# fail [0-9]+$/ { f += $3 }
    END { print p+0, f+0 }' "$1"
}

finish() {
  local total=$(( $(date +%s) - begun ))
  printf '\n== summary\n'
  printf '%-34s %7s %8s %8s  %s\n' stage seconds passed failed result
  local line
  for line in "${summary[@]}"; do printf '%s\n' "$line"; done
  printf '%-34s %7d %8d %8d\n' total "$total" "$passed" "$failed"
  printf '\ntests: %d passed, %d failed\n' "$passed" "$failed"
}

# step NAME CMD...: a stage that checks without counting tests (setup, lint, the build).
step() {
  local name=$1 start rc=0
  shift
  printf '\n== %s\n' "$name"
  start=$(date +%s)
  "$@" 2>&1 | plain || rc=$?
  local took=$(( $(date +%s) - start ))
  if [ "$rc" -ne 0 ]; then
    summary+=("$(printf '%-34s %7d %8s %8s  %s' "$name" "$took" - 1 "FAILED (exit $rc)")")
    failed=$((failed + 1))
    finish
    exit 1
  fi
  summary+=("$(printf '%-34s %7d %8s %8s  %s' "$name" "$took" - - ok)")
}

# run NAME CMD...: a stage that runs tests; shows their output, counts them, and fails when
# the command failed, a test failed, or no test ran.
run() {
  local name=$1 log="$logs/$1.log" start rc=0 p f
  shift
  printf '\n== %s\n' "$name"
  start=$(date +%s)
  "$@" 2>&1 | plain | tee "$log" || rc=$?
  local took=$(( $(date +%s) - start ))
  read -r p f < <(count "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  local result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc)"
    # A stage that broke before reporting a failed test still counts as one failure.
    [ "$f" -gt 0 ] || { f=1; failed=$((failed + 1)); }
  elif [ "$f" -gt 0 ]; then
    result=FAILED
  elif [ "$p" -eq 0 ]; then
    result="FAILED (no test ran)"
    f=1
    failed=$((failed + 1))
  fi
  summary+=("$(printf '%-34s %7d %8d %8d  %s' "$name" "$took" "$p" "$f" "$result")")
  if [ "$result" != ok ]; then
    echo "stage '$name': $result"
    finish
    exit 1
  fi
}

purity_guard() {
  # The core must not touch JS or the host clock: only src/wasm and src/js may.
  # Comment lines are skipped: docs may name what the code must not use.
  if grep -rnE 'wasm_bindgen|js_sys|web_sys|SystemTime|Instant::now|std::thread|tokio' src --include=*.rs \
    | grep -vE '^src/(wasm|js)/' | grep -vE '^[^:]+:[0-9]+:\s*//' \
    | grep -vE '^src/lib\.rs:.*(pub mod wasm|cfg\(target_arch)'; then
    echo "core purity guard: the lines above use host or JS APIs outside src/wasm"
    return 1
  fi
  # JSON text is read only through src/json.rs (its nesting bound and lone-surrogate rule);
  # serde_json's reader is only the oracle of its tests.
  if grep -rnE 'serde_json::(from_(str|slice|reader)|Deserializer)' src --include=*.rs | grep -vE '^src/json(\.rs|/)' \
    | grep -vE '^[^:]+:[0-9]+:\s*//'; then
    echo "json guard: the lines above read JSON text without crate::json::parse (no depth bound)"
    return 1
  fi
  echo ok
}

build() {
  bash scripts/build.sh
  # The variant that traps on purpose, for tests/js/trap.test.mjs (into target/, never pkg/).
  node tests/js/shared/trap-build.mjs
}

step setup bash scripts/setup.sh
step "core purity guard" purity_guard
step "cargo fmt --check" cargo fmt --check
step "cargo clippy (native)" cargo clippy --all-targets --quiet -- -D warnings
# With the test-trap feature: its cfg-gated lines are compiled by nothing else before the JS tests.
step "cargo clippy (wasm32)" cargo clippy --target wasm32-unknown-unknown --lib --tests --features test-trap --quiet -- -D warnings
# The loop-only build that `npm run size -- --loop-only` measures.
step "cargo clippy (wasm32, loop only)" cargo clippy --target wasm32-unknown-unknown --lib --no-default-features --quiet -- -D warnings

run "native tests" cargo test --quiet
# cargo-fuzz targets (fuzz/): build, then each target over its seeds and a fixed number of
# mutations; a crash or a broken invariant fails the stage.
run "fuzz smoke" bash scripts/fuzz.sh smoke
step build build
run "wasm tests (Node)" cargo test --target wasm32-unknown-unknown --test wasm
run "wasm tests (Chromium)" env WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  cargo test --target wasm32-unknown-unknown --test wasm
step typescript node_modules/.bin/tsc -p tests/types
run "JS tests" node --test --test-concurrency=2 tests/js/
# The package as users install it, in real consumer projects (tests/consumers/*): Vite 5/6/8
# build and dev server (in 6 and 8 also the agent in a module Web Worker), esbuild, Rollup,
# webpack, a wrangler Worker, Node ESM/CJS/bundled, and vitest with jsdom.
run "consumer projects" node --test tests/consumers/consumers.test.mjs

finish
