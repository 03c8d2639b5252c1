#!/usr/bin/env bash
# Builds the cargo-fuzz targets (fuzz/, libFuzzer) and runs them on their seed corpora.
#
#   bash scripts/fuzz.sh smoke                  every target, a fixed number of runs each
#                                               (the npm test stage); a crash fails it
#   bash scripts/fuzz.sh run TARGET [FLAGS...]  one target for longer: FLAGS go to libFuzzer,
#                                               e.g. -runs=10000000 or -max_total_time=3600
#   bash scripts/fuzz.sh list                   the target names
#
# Targets are built without a sanitizer: the crate forbids unsafe code, and what the fuzzing
# is after (panics, stack overflows, hangs, broken invariants) is caught without one, about
# twice as fast. Debug assertions and overflow checks are on. New corpus entries go to
# fuzz/corpus/TARGET (not committed; `node fuzz/seeds.mjs` re-seeds it), crashes to
# fuzz/artifacts/TARGET/. Committed reproducers of fixed crashes in fuzz/regressions/TARGET/
# run every time.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(sse json openai_completions openai_responses anthropic google schema messages)
# Known crash classes left aside while their fixes are under way (fuzz/src/known.rs). Empty
# this (PI_FUZZ_SKIP=) once the bounds of issue 12 have landed.
export PI_FUZZ_SKIP=${PI_FUZZ_SKIP-}
SMOKE_RUNS=${SMOKE_RUNS:-20000}

dict_of() {
  case $1 in
    sse | openai_* | anthropic | google) echo fuzz/dict/sse.dict ;;
    *) echo fuzz/dict/json.dict ;;
  esac
}

# The nightly toolchain when there is one (scripts/setup.sh installs it); else the stable
# one with its nightly features unlocked, which builds the same targets.
cargo_fuzz() {
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo +nightly fuzz "$@"
  else
    RUSTC_BOOTSTRAP=1 cargo fuzz "$@"
  fi
}

build() {
  local start=$SECONDS
  (cd fuzz && cargo_fuzz build --sanitizer none --debug-assertions "$@")
  echo "fuzz build took $((SECONDS - start)) s"
  node fuzz/seeds.mjs >/dev/null
}

bin() {
  local host
  host=$(rustc -vV | sed -n 's/^host: //p')
  echo "fuzz/target/$host/release/$1"
}

# libFuzzer flags every run shares: the dictionary, a per-input time limit that turns a hang
# into a crash, a memory limit, and inputs up to 4 KB (larger seeds run once, whole).
common_flags() {
  mkdir -p "fuzz/artifacts/$1"
  echo "-dict=$(dict_of "$1") -timeout=10 -rss_limit_mb=2048 -max_len=4096" \
    "-artifact_prefix=fuzz/artifacts/$1/ -print_final_stats=1"
}

regressions() {
  [ -d "fuzz/regressions/$1" ] && echo "fuzz/regressions/$1"
  true
}

case ${1:-} in
  list)
    printf '%s\n' "${TARGETS[@]}"
    ;;
  smoke)
    start=$SECONDS
    build
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    passed=0
    failed=0
    for t in "${TARGETS[@]}"; do
      log="$scratch/$t.log"
      mkdir -p "$scratch/$t"
      # New entries go to the scratch corpus, so each smoke run starts from the same seeds;
      # -seed fixes the mutations, so a failure here reproduces.
      # shellcheck disable=SC2046
      if "$(bin "$t")" "$scratch/$t" "fuzz/corpus/$t" $(regressions "$t") $(common_flags "$t") \
        -seed=1 -runs="$SMOKE_RUNS" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz $t: ok, $runs runs"
        passed=$((passed + 1))
      else
        echo "fuzz $t: FAILED"
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' -A2 "$log" | head -20
        failed=$((failed + 1))
      fi
    done
    echo "fuzz smoke took $((SECONDS - start)) s (PI_FUZZ_SKIP=$PI_FUZZ_SKIP)"
    echo "fuzz smoke: $passed passed; $failed failed"
    [ "$failed" -eq 0 ]
    ;;
  run)
    t=${2:?usage: scripts/fuzz.sh run TARGET [libFuzzer flags]}
    shift 2
    build "$t"
    # shellcheck disable=SC2046
    exec "$(bin "$t")" "fuzz/corpus/$t" $(regressions "$t") $(common_flags "$t") "$@"
    ;;
  *)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
