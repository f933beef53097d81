#!/usr/bin/env bash
# Random-program check of the ISS: csmith programs (Debian package csmith), each built for A32 and
# T32 at -O0/-O2/-Os, run on `vtoe iss run` and on qemu-arm; prints DIFF lines for mismatches
# and keeps those binaries in the work directory. Not part of `make test` (slow, needs csmith).
#   tests/iss/csmith_fuzz.sh [FIRST_SEED [COUNT [WORKDIR]]]
set -uo pipefail
first=${1:-1}
count=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${3:-$root/build/iss-fuzz}
vtoe=${VTOE:-$root/build/${VTOE_PRESET:-release}/app/vtoe}
[ -x "$vtoe" ] || { echo "csmith_fuzz: $vtoe is missing (make build)"; exit 2; }
for tool in csmith arm-linux-gnueabihf-gcc qemu-arm; do
  command -v $tool >/dev/null || { echo "csmith_fuzz: $tool is missing"; exit 2; }
done
inc=$(ls -d /usr/include/csmith* | head -1)
mkdir -p "$work" && cd "$work" || exit 2
runs=0 diffs=0
for seed in $(seq "$first" $((first + count - 1))); do
  csmith --seed "$seed" > "p$seed.c" 2>/dev/null || continue
  keep=0
  for m in arm thumb; do
    for o in O0 O2 Os; do
      b=p$seed-$m-$o
      arm-linux-gnueabihf-gcc -static -march=armv7-a+fp -mfpu=vfpv3-d16 -mfloat-abi=hard -m$m \
        -$o -w -I"$inc" "p$seed.c" -o "$b" || { echo "csmith_fuzz: $b does not build"; continue; }
      # Programs that run long on qemu (some csmith ones loop for minutes) are skipped: the ISS,
      # an interpreter, is about ten times slower.
      # stdout and exit status (a program killed by a signal gets each simulator's own message)
      ref=$(timeout 3 qemu-arm -cpu cortex-a15 "./$b" 2>/dev/null; echo "exit $?")
      if [ "${ref##*exit }" = 124 ]; then rm -f "$b"; continue; fi
      got=$(timeout 120 "$vtoe" iss run "./$b" 2>/dev/null; echo "exit $?")
      runs=$((runs + 1))
      if [ "$ref" != "$got" ]; then
        diffs=$((diffs + 1))
        keep=1
        echo "DIFF $b: qemu [$(echo "$ref" | tail -2 | tr '\n' ' ')] vtoe [$(echo "$got" | tail -3 | tr '\n' ' ')]"
      else
        rm -f "$b"
      fi
    done
  done
  [ "$keep" = 1 ] || rm -f "p$seed.c"
done
echo "csmith_fuzz: seeds $first..$((first + count - 1)): $runs runs, $diffs mismatches"
[ "$diffs" -eq 0 ]
