#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, `cmake --preset fuzz`: clang, ASan, UBSan) and runs
# each for SECONDS: first every saved regression input (tests/fuzz/regressions/<harness>/), then
# fuzzing from the seed corpus (tests/fuzz/corpus/<harness>/, copied to build/fuzz/corpus/ where
# the corpus grows). A crash, sanitizer report, leak or an input slower than FUZZ_TIMEOUT seconds
# (5 by default, for shared CI machines; 1 on a quiet one) fails the run and leaves the input in
# build/fuzz/artifacts/; turn it into a regression by copying it to tests/fuzz/regressions/<harness>/.
#   scripts/fuzz.sh SECONDS [HARNESS...]      (harnesses: frames tcp_session scenario guest)
# FUZZ_REPLAY_ONLY="h1 h2": those harnesses only replay their seed corpus and regressions.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [HARNESS...]}
shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(frames tcp_session scenario guest)
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is missing (scripts/install-deps.sh installs clang and libclang-rt-14-dev)" >&2
  exit 2
fi
[ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build build/fuzz -j "$(nproc)" --target "${targets[@]}" >/dev/null
mkdir -p build/fuzz/artifacts
status=0
# Per-harness options. tcp_session: inputs past 2 KiB only repeat what the harness's operation cap
# (512) cuts off anyway. guest: its platforms live for the whole process and SystemC's coroutine
# stacks hide pointers from LeakSanitizer, so no per-input leak check; entropic scheduling's
# bookkeeping of its many features per input cost more than the simulation; inputs past 512
# bytes simulate more per input and more per simulated millisecond: half the executions per
# second (its state carries over from input to input, so long sequences still happen;
# docs/fuzzing.md).
extra_flags() {
  case $1 in
    tcp_session) echo -max_len=2048 -entropic=0 ;;
    guest) echo -max_len=512 -detect_leaks=0 -entropic=0 ;;
  esac
}
for h in "${harnesses[@]}"; do
  bin=build/fuzz/tests/fuzz/fuzz_$h
  read -r -a extra <<<"$(extra_flags "$h")"
  corpus=build/fuzz/corpus/$h
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/"$h"/* "$corpus"/ 2>/dev/null || true
  regressions=(tests/fuzz/regressions/"$h"/*)
  if [ -e "${regressions[0]}" ]; then
    if ! "$bin" "${extra[@]}" -timeout="${FUZZ_TIMEOUT:-5}" -rss_limit_mb=2048 "${regressions[@]}" >build/fuzz/"$h"-regressions.log 2>&1; then
      echo "fuzz: $h: a saved regression input fails again (build/fuzz/$h-regressions.log)" >&2
      status=1
    fi
  fi
  log=build/fuzz/$h.log
  if [[ " ${FUZZ_REPLAY_ONLY:-} " == *" $h "* ]]; then
    # Replay the seed corpus without mutating it (make fuzz-smoke, for a harness with an open
    # finding that mutation reaches within seconds: docs/fuzzing.md).
    if "$bin" "${extra[@]}" -runs=0 -timeout="${FUZZ_TIMEOUT:-5}" -rss_limit_mb=2048 \
        tests/fuzz/corpus/"$h" >"$log" 2>&1; then
      echo "fuzz: $h: seed corpus replayed (no mutation: FUZZ_REPLAY_ONLY), no crash or report"
    else
      echo "fuzz: $h: FAILED replaying the seed corpus, see $log" >&2
      tail -30 "$log" >&2
      status=1
    fi
    continue
  fi
  # ASan records the call stack of every allocation for its reports; that bookkeeping was a
  # quarter of fuzz_scenario's time and most of its memory growth (docs/fuzzing.md). While
  # fuzzing it is off; a saved input run alone (below) reports with the stacks.
  if ASAN_OPTIONS="malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
      "$bin" "${extra[@]}" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-5}" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix=build/fuzz/artifacts/"$h"- "$corpus" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $h: $runs executions in $seconds s, no crash, leak, sanitizer report or hang"
  else
    echo "fuzz: $h: FAILED, see $log and build/fuzz/artifacts/ (run the saved input alone," \
      "$bin ${extra[*]} ARTIFACT, for a report with allocation stacks)" >&2
    tail -30 "$log" >&2
    status=1
  fi
done
exit $status
