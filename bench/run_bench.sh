#!/usr/bin/env bash
# Simulation speed: runs the native 10 Gbit/s transmit scenario and prints simulated seconds per
# wall-clock second (target >= 1.0 on one core). Usage: bench/run_bench.sh [path/to/vtoe] [repeats]
set -euo pipefail
VTOE=${1:-build/release/app/vtoe}
REPEATS=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "scenario: scenarios/native/tx_10g.yaml (duration 1s, warmup 100ms)"
for i in $(seq 1 "$REPEATS"); do
  "$VTOE" run "$here/scenarios/native/tx_10g.yaml" --set duration=1s --set warmup=100ms --out "$out/r$i" --quiet
  python3 - "$out/r$i" <<'PY'
import json, sys
d = sys.argv[1]
run = json.load(open(d + "/run.json")); res = json.load(open(d + "/results.json"))
print(f"run: sim {run['sim_s']:.3f} s in {run['wall_s']:.3f} s wall -> "
      f"{run['sim_seconds_per_wall_second']:.3f} sim s / wall s; "
      f"tx {res['vms'][0]['tx_mbps']:.1f} Mbit/s, {res['links'][0]['frames']} frames")
PY
done
