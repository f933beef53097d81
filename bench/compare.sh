#!/usr/bin/env bash
# Speed of two vtoe binaries in one run: native, DE and DA 10 Gbit/s transmit (1 s simulated),
# the binaries alternating so that both see the same machine load. Prints wall seconds per run and
# the median per binary and scenario. Usage: bench/compare.sh OLD_VTOE NEW_VTOE [repeats]
set -euo pipefail
OLD=$1
NEW=$2
REPEATS=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for arch in native de da; do
  for i in $(seq 1 "$REPEATS"); do
    for which in old new; do
      bin=$OLD; [ "$which" = new ] && bin=$NEW
      "$bin" run "$here/scenarios/native/tx_10g.yaml" --set architecture=$arch --set duration=1s \
        --set warmup=100ms --out "$out/$which-$arch-$i" --quiet
    done
  done
done
python3 - "$out" "$REPEATS" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
print(f"{'scenario':<10}{'old wall s (median)':>22}{'new wall s (median)':>22}{'new/old':>9}")
for arch in ("native", "de", "da"):
    med = {}
    for which in ("old", "new"):
        walls = [json.load(open(f"{out}/{which}-{arch}-{i}/run.json"))["wall_s"] for i in range(1, n + 1)]
        med[which] = statistics.median(walls)
    print(f"{arch:<10}{med['old']:>22.3f}{med['new']:>22.3f}{med['new'] / med['old']:>9.3f}")
PY
