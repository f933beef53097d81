#!/usr/bin/env bash
# Simulation speed (docs/performance.md): simulated seconds per wall-clock second, and per second of
# CPU time (less sensitive to a shared machine), for the issue's three targets:
#   native 10 Gbit/s transmit, platform.timing lt   target >= 1.5
#   native 10 Gbit/s transmit, platform.timing at   target >= 1.0
#   four VMs, direct access, 10 Gbit/s, timing at   target >= 0.5
# Usage: bench/run_bench.sh [path/to/vtoe] [repeats] [duration]
set -euo pipefail
VTOE=${1:-build/release/app/vtoe}
REPEATS=${2:-3}
DURATION=${3:-1s}
here=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$VTOE" "$REPEATS" "$DURATION" "$here" <<'PY'
import json, os, resource, subprocess, sys, tempfile
vtoe, repeats, duration, here = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cases = [
    ("native tx 10G, lt", "scenarios/native/tx_10g.yaml", ["platform.timing=lt"], 1.5),
    ("native tx 10G, at", "scenarios/native/tx_10g.yaml", ["platform.timing=at"], 1.0),
    ("4 VMs DA 10G, at", "scenarios/bench/da_4vm_10g.yaml", ["platform.timing=at"], 0.5),
]
print(f"duration {duration}, warmup 100ms; load average {os.getloadavg()[0]:.2f}")
with tempfile.TemporaryDirectory() as tmp:
    for name, scenario, sets, target in cases:
        for i in range(repeats):
            out = os.path.join(tmp, f"r{i}")
            args = [vtoe, "run", os.path.join(here, scenario), "--out", out, "--quiet",
                    "--set", f"duration={duration}", "--set", "warmup=100ms"]
            for s in sets:
                args += ["--set", s]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(args, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            run = json.load(open(os.path.join(out, "run.json")))
            res = json.load(open(os.path.join(out, "results.json")))
            tx = sum(v["tx_mbps"] for v in res["vms"])
            print(f"{name}: sim {run['sim_s']:.3f} s in {run['wall_s']:.3f} s wall, {cpu:.3f} s CPU"
                  f" -> {run['sim_seconds_per_wall_second']:.3f} sim s / wall s, "
                  f"{run['sim_s'] / cpu:.3f} sim s / CPU s (target {target}); "
                  f"tx {tx:.1f} Mbit/s, {res['links'][0]['frames']} frames")
PY
