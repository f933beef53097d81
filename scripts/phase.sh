#!/usr/bin/env bash
# Times the phases of a test run (.ci/run, make test, make asan) against CI's budget.
#   scripts/phase.sh run NAME CMD [ARGS...]   runs CMD, appends "NAME<TAB>seconds<TAB>status" to
#                                             $VTOE_PHASES (no file: just runs CMD); CMD's status
#   scripts/phase.sh report [TOTAL_SECONDS]   prints the phases recorded in $VTOE_PHASES and
#                                             their sum (and the whole run's time, if given)
set -uo pipefail
case ${1:-} in
  run)
    name=$2
    shift 2
    start=$EPOCHREALTIME
    "$@"
    status=$?
    if [ -n "${VTOE_PHASES:-}" ]; then
      awk -v n="$name" -v a="$start" -v b="$EPOCHREALTIME" -v s="$status" \
        'BEGIN { printf "%s\t%.1f\t%d\n", n, b - a, s }' >>"$VTOE_PHASES"
    fi
    exit $status
    ;;
  report)
    [ -n "${VTOE_PHASES:-}" ] && [ -f "$VTOE_PHASES" ] || exit 0
    awk -F'\t' -v total="${2:-}" '
      { t += $2; printf "  %-34s %7.1f s  %5.1f min%s\n", $1, $2, $2 / 60, ($3 != 0 ? "  FAILED" : "") }
      END {
        printf "  %-34s %7.1f s  %5.1f min\n", "sum of the phases", t, t / 60
        if (total != "") printf "  %-34s %7.1f s  %5.1f min (budget 45 min; CI stops at 90)\n", "whole run", total, total / 60
      }' "$VTOE_PHASES"
    ;;
  *)
    echo "usage: scripts/phase.sh run NAME CMD [ARGS...] | report [TOTAL_SECONDS]" >&2
    exit 2
    ;;
esac
