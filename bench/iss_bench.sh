#!/usr/bin/env bash
# ISS speed: the CoreMark-like corpus program on `vtoe iss run` and on qemu-arm, in MIPS (guest
# instructions per wall-clock microsecond) and their ratio. The instruction count is vtoe's
# (--stats); qemu-arm runs the same binary, so its MIPS is that count over its wall time.
# Usage: bench/iss_bench.sh [path/to/vtoe] [iterations] [repeats]
set -euo pipefail
VTOE=${1:-build/release/app/vtoe}
ITER=${2:-2000}
REPEATS=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=$here/build/iss-corpus
make -s -C "$here/tests/iss" OUT="$corpus" "$corpus/coremark-arm-O2" "$corpus/coremark-thumb-O2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for prog in coremark-arm-O2 coremark-thumb-O2; do
  for i in $(seq 1 "$REPEATS"); do
    "$VTOE" iss run --stats "$out/s.json" "$corpus/$prog" "$ITER" >/dev/null || true
    start=$(date +%s.%N)
    qemu-arm -cpu cortex-a15 "$corpus/$prog" "$ITER" >/dev/null || true
    end=$(date +%s.%N)
    python3 - "$out/s.json" "$start" "$end" "$prog" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
qemu_s = float(sys.argv[3]) - float(sys.argv[2])
qemu_mips = s["instructions"] / qemu_s / 1e6
print(f"{sys.argv[4]}: {s['instructions'] / 1e6:.1f} M instructions; vtoe {s['mips']:.1f} MIPS "
      f"({s['wall_seconds']:.2f} s), qemu-arm {qemu_mips:.1f} MIPS ({qemu_s:.2f} s); "
      f"vtoe/qemu {s['mips'] / qemu_mips:.3f}")
PY
  done
done
