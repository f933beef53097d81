#!/usr/bin/env python3
"""Memory over a long run (docs/performance.md): is vtoe's resident memory flat?

Runs one scenario for a long simulated time and samples the process's resident set size
(VmRSS in /proc/<pid>/status) every `--every` wall seconds. The simulated time reached at each
sample is not visible from outside, so the report is against wall time, which grows in step with
simulated time in a steady run. It prints the samples, the RSS at 10 % and at the end of the run
and the growth between them: a leak or an unbounded queue shows as growth that continues; a
flat run grows by start-up effects only (buffers reaching their working size early on).

  bench/memory_flat.py build/release/app/vtoe scenarios/native/tx_10g.yaml --duration 60s
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vtoe")
    ap.add_argument("scenario")
    ap.add_argument("--duration", default="60s", help="simulated time (default 60s)")
    ap.add_argument("--every", type=float, default=2.0, help="wall seconds between samples")
    ap.add_argument("--set", action="append", default=[], help="extra --set KEY=VALUE")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.vtoe, "run", args.scenario, "--out", tmp, "--quiet",
               "--set", f"duration={args.duration}", "--set", "warmup=0ms"]
        for s in args.set:
            cmd += ["--set", s]
        start = time.monotonic()
        proc = subprocess.Popen(cmd)
        samples = []
        while proc.poll() is None:
            try:
                samples.append((time.monotonic() - start, rss_kib(proc.pid)))
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(args.every)
        if proc.wait() != 0:
            print(f"vtoe exited with {proc.returncode}", file=sys.stderr)
            return 1
        run = json.loads((Path(tmp) / "run.json").read_text())
    samples = [s for s in samples if s[1] > 0]
    if len(samples) < 5:
        print("too few samples: run longer or sample more often", file=sys.stderr)
        return 1
    print(f"scenario {args.scenario}, {run['sim_s']:.1f} s simulated in {run['wall_s']:.1f} s wall")
    for t, kib in samples:
        print(f"  {t:7.1f} s wall  {kib / 1024:8.1f} MiB")
    # The first sample at or after 10 % of the run's wall time (the one at 0 s is the process
    # still starting: its RSS is that of exec, not of the simulation).
    tenth = samples[-1][0] / 10
    early = next(k for t, k in samples if t >= tenth)
    last = samples[-1][1]
    peak = max(k for _, k in samples)
    print(f"RSS at 10 % of the run {early / 1024:.1f} MiB, at the end {last / 1024:.1f} MiB, "
          f"peak {peak / 1024:.1f} MiB: growth {100.0 * (last - early) / early:+.1f} % "
          f"from 10 % to the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
