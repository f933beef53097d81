#!/usr/bin/env python3
"""Speed of this build against a reference build, in one run (docs/performance.md).

The machine's load moves wall-clock figures by tens of per cent from minute to minute, so the two
binaries run alternately, run for run, and each scenario's figure is the median of its runs; the
ratio of the medians is what this benchmark reports. Both binaries run the same scenario files
(this tree's), so a ratio compares code, not inputs.

    bench/speed.py --ref 63b27a0                    # builds the reference, 5 runs of each scenario
    bench/speed.py --ref 63b27a0 --runs 7 --only native,de
    bench/speed.py --ref 63b27a0 --ns3              # and ns-3 3.37 on a comparable transfer
    bench/speed.py --ref 63b27a0 --current build/pgo/app/vtoe   # the profile-guided build
    bench/speed.py --ref build/release/app/vtoe --current build/pgo/app/vtoe  # two builds of one tree

The reference is built from `git archive REF` under build/bench/ref-<sha>/ (Release, the same
compiler), once; a REF that is an executable file is used as the reference binary as it is. With --ns3 the script installs Debian's libns3-dev if it is missing and builds
bench/ns3/bulk_10g.cc, a 10 Gbit/s bulk TCP transfer over a point-to-point link.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, scenario, overrides. Every case simulates `--duration` (the scenario's duration, of which the
# first 100 ms are warm-up).
CASES = [
    ("native", "scenarios/native/tx_10g.yaml", []),
    ("native-at", "scenarios/native/tx_10g.yaml", ["platform.timing=at"]),
    ("de", "scenarios/native/tx_10g.yaml", ["architecture=de"]),
    ("da", "scenarios/native/tx_10g.yaml", ["architecture=da"]),
    ("4vm-de", "scenarios/bench/da_4vm_10g.yaml", ["architecture=de"]),
    ("4vm-da", "scenarios/bench/da_4vm_10g.yaml", []),
    ("2host-4pair", "scenarios/bench/two_hosts_4pairs.yaml", []),  # issue 29: >= 0.3 sim s/s
]


def sh(args, **kw):
    return subprocess.run(args, check=True, **kw)


def build_reference(ref):
    if os.path.isfile(ref) and os.access(ref, os.X_OK):  # a binary, e.g. build/release/app/vtoe
        return os.path.abspath(ref), os.path.abspath(ref)
    sha = sh(["git", "-C", HERE, "rev-parse", "--verify", f"{ref}^{{commit}}"],
             capture_output=True, text=True).stdout.strip()
    top = os.path.join(HERE, "build", "bench", f"ref-{sha[:12]}")
    binary = os.path.join(top, "build", "app", "vtoe")
    if os.path.exists(binary):
        return sha, binary
    src = os.path.join(top, "src")
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.Popen(["git", "-C", HERE, "archive", sha], stdout=subprocess.PIPE)
    sh(["tar", "-x", "-C", src], stdin=archive.stdout)
    if archive.wait() != 0:
        sys.exit(f"speed.py: git archive {sha} failed")
    print(f"building the reference {sha[:12]} in {top} ...", file=sys.stderr, flush=True)
    sh(["cmake", "-S", src, "-B", os.path.join(top, "build"), "-G", "Ninja",
        "-DCMAKE_BUILD_TYPE=Release"], stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", os.path.join(top, "build"), "--target", "vtoe", "-j",
        str(os.cpu_count() or 2)], stdout=subprocess.DEVNULL)
    return sha, binary


def run_vtoe(binary, scenario, sets, duration, out):
    args = [binary, "run", os.path.join(HERE, scenario), "--out", out, "--quiet",
            "--set", f"duration={duration}", "--set", "warmup=100ms"]
    for s in sets:
        args += ["--set", s]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sh(args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run = json.load(open(os.path.join(out, "run.json")))
    results = json.load(open(os.path.join(out, "results.json")))
    frames = sum(link["frames"] for link in results.get("links", []))
    return {"wall_s": run["wall_s"], "cpu_s": cpu, "sim_s": run["sim_s"], "frames": frames,
            "results": results}


def build_ns3():
    need = [p for p in ("libns3-dev", "libgsl-dev")
            if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                              text=True).stdout.find("install ok installed") < 0]
    if need:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        print(f"installing {' '.join(need)} ...", file=sys.stderr, flush=True)
        sh(sudo + ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + need,
           stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    binary = os.path.join(HERE, "build", "bench", "ns3-bulk-10g")
    source = os.path.join(HERE, "bench", "ns3", "bulk_10g.cc")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "ns3-core", "ns3-network",
                                "ns3-internet", "ns3-point-to-point", "ns3-applications"],
                               check=True, capture_output=True, text=True).stdout.split()
        sh(["g++", "-O2", "-std=c++17", source, "-o", binary] + flags)
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"],
                             capture_output=True, text=True).stdout
    return binary, version


def run_ns3(binary, seconds):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = sh([binary, f"--seconds={seconds}"], capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.loads(out.strip().splitlines()[-1])
    r["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r


def seconds_of(text):
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    raise SystemExit(f"speed.py: --duration {text!r}: give it in s or ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="commit of the reference build (e.g. 63b27a0), or a vtoe binary")
    ap.add_argument("--current", default=os.path.join(HERE, "build", "release", "app", "vtoe"),
                    help="the binary under test (default build/release/app/vtoe)")
    ap.add_argument("--runs", type=int, default=5, help="runs per binary and scenario (odd)")
    ap.add_argument("--duration", default="1s",
                    help="simulated time of each run, 100 ms warm-up included (over 100ms)")
    ap.add_argument("--only", help="comma-separated case names: " +
                    ",".join(c[0] for c in CASES))
    ap.add_argument("--ns3", action="store_true", help="also compare with ns-3 (libns3-dev)")
    ap.add_argument("--json", help="write every run's figures to this file")
    a = ap.parse_args()
    cases = CASES
    if a.only:
        names = a.only.split(",")
        unknown = set(names) - {c[0] for c in CASES}
        if unknown:
            ap.error(f"--only: unknown case(s) {', '.join(sorted(unknown))}")
        cases = [c for c in CASES if c[0] in names]
    if not os.access(a.current, os.X_OK):
        ap.error(f"--current {a.current}: not an executable (make build first)")
    sha, ref = build_reference(a.ref)
    ns3 = build_ns3() if a.ns3 else None

    record = {"ref": sha, "current": a.current, "runs": a.runs, "duration": a.duration,
              "load_before": os.getloadavg()[0], "cases": {}}
    print(f"reference {sha if os.sep in sha else sha[:12]} against {a.current}; {a.runs} runs each, alternating; "
          f"{a.duration} simulated (100 ms of it warm-up); load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, scenario, sets in cases:
            runs = {"ref": [], "cur": []}
            same = True
            try:  # a case newer than the reference (topologies before 63b27a0's time) has none
                run_vtoe(ref, scenario, sets, "110ms", os.path.join(tmp, "probe"))
            except subprocess.CalledProcessError:
                cur = [run_vtoe(a.current, scenario, sets, a.duration, os.path.join(tmp, "cur"))
                       for _ in range(a.runs)]
                sim = cur[0]["sim_s"]
                wall = statistics.median(r["wall_s"] for r in cur)
                record["cases"][name] = {"cur": [{k: v for k, v in r.items() if k != "results"}
                                                 for r in cur], "reference": "cannot run it"}
                print(f"{name:<10} the reference cannot run this scenario; current "
                      f"{sim / wall:6.3f} sim s per wall s (median)", flush=True)
                continue
            for i in range(a.runs):
                for which, binary in (("ref", ref), ("cur", a.current)) if i % 2 == 0 else \
                        (("cur", a.current), ("ref", ref)):
                    r = run_vtoe(binary, scenario, sets, a.duration, os.path.join(tmp, which))
                    runs[which].append(r)
            same = runs["ref"][0]["results"] == runs["cur"][0]["results"]
            record["cases"][name] = {
                w: [{k: v for k, v in r.items() if k != "results"} for r in rs]
                for w, rs in runs.items()}
            med = {w: statistics.median(r["wall_s"] for r in rs) for w, rs in runs.items()}
            cpu = {w: statistics.median(r["cpu_s"] for r in rs) for w, rs in runs.items()}
            sim = runs["cur"][0]["sim_s"]
            record["cases"][name]["speedup_wall"] = med["ref"] / med["cur"]
            record["cases"][name]["speedup_cpu"] = cpu["ref"] / cpu["cur"]
            record["cases"][name]["same_results"] = same
            print(f"{name:<10} ref {sim / med['ref']:6.3f}  current {sim / med['cur']:6.3f} sim s "
                  f"per wall s (medians)  speed-up {med['ref'] / med['cur']:5.2f} wall, "
                  f"{cpu['ref'] / cpu['cur']:5.2f} CPU; results "
                  f"{'identical' if same else 'DIFFER'}", flush=True)
        if ns3:
            binary, version = ns3
            sim = seconds_of(a.duration)
            vt, n3 = [], []
            for i in range(a.runs):
                vt.append(run_vtoe(a.current, CASES[0][1], [], a.duration,
                                   os.path.join(tmp, "cur")))
                n3.append(run_ns3(binary, sim))
            v_wall = statistics.median(r["wall_s"] for r in vt)
            n_wall = statistics.median(r["wall_s"] for r in n3)
            v_frames = vt[0]["frames"]
            n_mbps = n3[0]["rx_mbps"]
            v_mbps = sum(v["tx_mbps"] for v in vt[0]["results"]["vms"])
            record["ns3"] = {"version": version, "vtoe": [{k: v for k, v in r.items()
                                                          if k != "results"} for r in vt],
                             "ns3": n3, "ratio": n_wall / v_wall}
            print(f"ns-3 {version}: {sim / n_wall:.3f} sim s per wall s at {n_mbps:.0f} Mbit/s; "
                  f"vtoe native {sim / v_wall:.3f} at {v_mbps:.0f} Mbit/s ({v_frames} frames); "
                  f"vtoe / ns-3 = {n_wall / v_wall:.1f} (medians of {a.runs}, alternating)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
