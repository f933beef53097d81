#!/usr/bin/env python3
"""The VirtTAS study (paper: shared/papers/virttas-multiplexing.tex): `make studies`.

Four VM pairs across two servers linked directly (10 Gbit/s), micro-RPC echo of 16 to 4096
bytes, three client processes per VM (the paper's three threads), in five configurations
(scenarios/study/virttas/, docs/software-stack.md):

  vk    kernel: each VM's kernel stack on its 3 vCPUs, device-emulated vNIC, a vswitch core (13)
  vi    Independent-TAS: a polling stack on 2 dedicated cores per VM + 1 app core, vswitch (13)
  vs    Virt-TAS: one polling fast path on 4 host cores shared by the VMs, 1 app core each (8)
  vtda  vtoe's shared TOE, direct access: 1 core per VM (4)
  vtde  vtoe's shared TOE, device emulation: 1 core per VM + the hypervisor's core 0 (5)

The paper's text gives only the core counts (13, 13, 8: "nearly 40 % less"); its throughput
figures are not in our copy, so its claims are goals (hypotheses here, never reproductions).
Every point is a vtoe run; the script writes OUT/report.md (default out/studies/virttas/) whose
every row gives the paper's value, vtoe's, the test, its class and a verdict computed from the
runs, OUT/summary.json with every number and OUT/throughput.png.

    python3 scripts/study_virttas.py [--quick] [--jobs N] [--out DIR]

--quick (run by `make test` through tests/scripts/test_study_virttas.py) runs 16 and 4096 bytes
only, 10 ms each; the checks are the same.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import study_common
from study_common import verdict, vtoe_bin

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "scenarios" / "study" / "virttas"
CONFIGS = ["vk", "vi", "vs", "vtda", "vtde"]
NAMES = {"vk": "kernel", "vi": "Independent-TAS", "vs": "Virt-TAS", "vtda": "vtoe TOE, DA",
         "vtde": "vtoe TOE, DE"}
PAPER_CORES = {"vk": 13, "vi": 13, "vs": 8}  # 000:41, 000:48, 000:53
SIZES = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
QUICK_SIZES = [16, 4096]
PAIRS = 4
# SocksDirect (shared/papers/socksdirect-evaluation.tex:117): 8-byte inter-host round trip 1.7 us,
# "17x lower than Linux": Linux's is 28.9 us (bare metal, two Xeon servers, 100 GbE).
LINUX_RTT_US = 1.7 * 17


def run_point(point, duration="20ms"):
    """One vtoe run: (point, measured dict). Raises on a failed run."""
    cfg, size = point["config"], point["size"]
    sets = [f"duration={duration}"]
    for i in range(1 if cfg == "nk" else PAIRS):
        sets += [f"vms.{i}.workload.message_size={size}B", f"vms.{i}.workload.response_size={size}B"]
    with tempfile.TemporaryDirectory() as out:
        cmd = [vtoe_bin(), "run", str(STUDY / f"{cfg}.yaml"), "--out", out, "--quiet"]
        for s in sets:
            cmd += ["--set", s]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        # 5: a pair moved nothing (docs/outputs.md); the results are written, and row G judges it.
        if proc.returncode not in (0, 5):
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        res = json.loads((Path(out) / "results.json").read_text())
    host_b = res["hosts"][0]
    if cfg == "nk":  # one pair, native: the round trip
        v = res["vms"][0]
        return point, {"rtt_us": v["mean_latency_us"], "transactions": v["transactions"],
                       "errors": [x["error"] for x in res["vms"] + host_b["vms"] if x.get("error")]}
    a, b = res["cores"], host_b["cores"]
    tps = sum(v["transactions"] for v in res["vms"]) / res["measured_s"]
    stack = {k: v for k, v in res["stats"].items() if k in ("stack", "b.stack")}
    return point, {
        "tps": tps,
        "gbps": tps * size * 8 / 1e9,  # payload each way
        # Mean over every transaction (the pairs weighted by what they did).
        "latency_us": sum(v["mean_latency_us"] * v["transactions"] for v in res["vms"]) /
        max(1, sum(v["transactions"] for v in res["vms"])),
        "per_vm_tps": [v["transactions"] / res["measured_s"] for v in res["vms"]],
        "cores_a": a["allocated"], "cores_b": b["allocated"],
        # Cores busy per server: polling stack cores count whole (they spin), as the host sees them.
        "busy_a": a.get("software_stack", {}).get("busy_polling", a["busy"]),
        "busy_b": b.get("software_stack", {}).get("busy_polling", b["busy"]),
        "work_busy_a": a["busy"], "work_busy_b": b["busy"],
        "errors": [v["error"] for v in res["vms"] + host_b["vms"] if v.get("error")],
        "stack_drops": sum(s.get("drops", 0) for s in stack.values()),
    }


def grid(quick):
    return ([{"config": c, "size": m} for c in CONFIGS for m in (QUICK_SIZES if quick else SIZES)] +
            [{"config": "nk", "size": 16}])


def per_core(m):
    """Transactions per second per allocated core (both servers)."""
    return m["tps"] / (m["cores_a"] + m["cores_b"])


def analyse(runs, quick):
    anchor = [m for p, m in runs if p["config"] == "nk"]
    runs = [(p, m) for p, m in runs if p["config"] != "nk"]
    by = {(p["config"], p["size"]): m for p, m in runs}
    sizes = sorted({p["size"] for p, _ in runs})
    rows = []

    def row(id_, claim, paper, vtoe, test, cls, ok):
        rows.append({"id": id_, "claim": claim, "paper": paper, "vtoe": vtoe, "test": test,
                     "class": cls, "verdict": verdict(ok)})

    # V1: the core counts, and the saving they give.
    got = {c: {(by[(c, m)]["cores_a"], by[(c, m)]["cores_b"]) for m in sizes} for c in PAPER_CORES}
    exact = all(got[c] == {(n, n)} for c, n in PAPER_CORES.items())
    cores = {c: sorted(got[c])[0][0] for c in PAPER_CORES}
    saving = 100 * (1 - cores["vs"] / cores["vk"])
    row("V1", "cores per server: kernel 13, Independent-TAS 13, Virt-TAS 8 (000:41, 48, 53)",
        "13 / 13 / 8", " / ".join(str(cores[c]) for c in ("vk", "vi", "vs")),
        "allocated cores of both servers equal the paper's at every size", "construction", exact)
    row("V1b", "Virt-TAS needs 'nearly 40 % less' cores (000:54)", "38.5 %", f"{saving:.1f} %",
        "35 % <= saving <= 40 %", "construction", 35 <= saving <= 40)

    # V2: Virt-TAS has the highest throughput per allocated core (the goal of 000:22).
    margins = [min(per_core(by[("vs", m)]) / per_core(by[(c, m)]) for c in ("vi", "vk"))
               for m in sizes]
    row("V2", "Virt-TAS: higher throughput per allocated core than kernel and Independent-TAS "
        "('resource efficiency', 000:22)", "goal, no number",
        f"VS / best other: {min(margins):.2f}x to {max(margins):.2f}x",
        "VS per core > VI and > VK at every size", "hypothesis", min(margins) > 1.0)

    # V3: the shared fast path keeps up with per-VM stacks at small messages.
    small = [m for m in sizes if m <= 256]
    ratios = [by[("vs", m)]["tps"] / by[("vi", m)]["tps"] for m in small]
    row("V3", "a shared fast path loses no aggregate throughput to per-VM stacks at small "
        "messages ('higher throughput', 000:22)", "goal, no number",
        f"VS / VI: {min(ratios):.3f} to {max(ratios):.3f}", "VS >= 0.95 x VI for m <= 256 B",
        "hypothesis", min(ratios) >= 0.95)

    # V4: Independent-TAS's goal against the kernel stack (000:45-46).
    tput = [by[("vi", m)]["tps"] / by[("vk", m)]["tps"] for m in sizes]
    lat = [by[("vi", m)]["latency_us"] / by[("vk", m)]["latency_us"] for m in sizes]
    row("V4", "a per-VM TAS increases throughput and reduces latency against the kernel stack "
        "(000:45-46)", "goal, no number",
        f"VI / VK throughput {min(tput):.2f}x to {max(tput):.2f}x, latency {min(lat):.2f}x to "
        f"{max(lat):.2f}x", "VI throughput > VK and VI latency < VK at every size",
        "hypothesis", min(tput) > 1.0 and max(lat) < 1.0)

    # V5: vtoe's question: the shared hardware fast path against VirtTAS's software one.
    hw = [per_core(by[("vtda", m)]) / per_core(by[("vs", m)]) for m in sizes]
    row("V5", "(vtoe) the shared TOE under DA gives more throughput per allocated core than "
        "the shared software fast path", "-", f"VT-DA / VS: {min(hw):.2f}x to {max(hw):.2f}x",
        "VT-DA per core > VS per core at every size", "hypothesis", min(hw) > 1.0)

    # V6: device emulation's VMM intervention costs throughput against direct access.
    de = [by[("vtde", m)]["tps"] / by[("vtda", m)]["tps"] for m in sizes]
    row("V6", "(vtoe, toe-virtualization paper §5) device emulation's traps cost throughput "
        "against direct access", "DE < DA", f"VT-DE / VT-DA: {min(de):.2f} to {max(de):.2f}",
        "VT-DE < VT-DA at every size", "shape", max(de) < 1.0)

    # V7: throughput falls and latency rises with the message size (copies per byte).
    mono = all(by[(c, sizes[0])]["tps"] > by[(c, sizes[-1])]["tps"] for c in CONFIGS)
    row("V7", "transactions per second fall from the smallest to the largest message in every "
        "configuration", "-", "yes" if mono else "no",
        f"tps({sizes[0]} B) > tps({sizes[-1]} B) for each configuration", "shape", mono)

    # V8: the kernel stack's assumed costs against a measured Linux round trip. vtoe charges CPU
    # work only (no interrupt moderation, no scheduler wake-up latency), so its round trip should
    # be below Linux's, and not so far below that the per-packet work would be negligible.
    if anchor:
        rtt = anchor[0]["rtt_us"]
        row("V8", "(plausibility of the assumed kernel-stack costs) a native kernel stack's 16 B "
            "round trip between two hosts against SocksDirect's measured Linux 8 B inter-host "
            "round trip (004:117)", f"{LINUX_RTT_US:.1f} us", f"{rtt:.1f} us",
            "0.25 x Linux <= vtoe <= Linux", "shape",
            0.25 * LINUX_RTT_US <= rtt <= LINUX_RTT_US and not anchor[0]["errors"])

    # G: every run is sound: no failed workload, no stack drop, every pair makes progress.
    errors = [e for _, m in runs for e in m["errors"]]
    drops = sum(m["stack_drops"] for _, m in runs)
    stalled = sum(1 for _, m in runs for t in m["per_vm_tps"] if t <= 0)
    row("G", "every run: no workload error, no software-stack drop, all four pairs progress",
        "-", f"{len(errors)} errors, {drops} drops, {stalled} stalled pairs",
        "all zero", "construction", not errors and drops == 0 and stalled == 0)
    return rows


def figure(runs, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for c in CONFIGS:
        pts = sorted((p["size"], m) for p, m in runs if p["config"] == c)
        xs = [s for s, _ in pts]
        axes[0].plot(xs, [m["tps"] / 1e3 for _, m in pts], "o-", label=NAMES[c])
        axes[1].plot(xs, [per_core(m) / 1e3 for _, m in pts], "o-", label=NAMES[c])
    for ax, y in zip(axes, ("transactions/s (thousands)", "per allocated core (thousands)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(y)
    axes[0].set_title("VirtTAS multiplex.throughput analogue")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)
    return True


def report(rows, runs, quick, out, drew):
    lines = ["# VirtTAS: a shared TCP fast path against per-VM stacks, posed in vtoe", "",
             "Paper: the VirtTAS multiplexing experiment (shared/papers/virttas-multiplexing.tex, "
             "a thesis-chapter fragment). Setup: four VM pairs across two servers linked "
             "directly at 10 Gbit/s (the paper gives no rate), micro-RPC echo, three client "
             "processes per VM, one request outstanding each. The paper's text states only the "
             "core counts; its throughput figure is not in our copy, so its goals are checked "
             "as hypotheses (consistent or not), never as reproductions. Costs of the software "
             "stacks are assumed, not measured (docs/software-stack.md, "
             "scenarios/paper/calibration.yaml `assumed`). " +
             ("Quick run (16 and 4096 B, 10 ms). " if quick else ""), ""]
    lines += study_common.claims_table(rows)
    lines += ["", "## Every run", "",
              "Cores busy count a polling stack's dedicated cores whole (they spin); "
              "'work' is the time the cores did modelled work.", "",
              "| configuration | size (B) | transactions/s | Gbit/s each way | mean latency (us) "
              "| cores A + B | busy A + B | work A + B | per allocated core | per busy core |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for p, m in sorted(runs, key=lambda r: (CONFIGS.index(r[0]["config"]), r[0]["size"])):
        busy = m["busy_a"] + m["busy_b"]
        lines.append(f"| {NAMES[p['config']]} | {p['size']} | {m['tps']:.0f} | {m['gbps']:.3f} | "
                     f"{m['latency_us']:.1f} | {m['cores_a']} + {m['cores_b']} | "
                     f"{m['busy_a']:.2f} + {m['busy_b']:.2f} | "
                     f"{m['work_busy_a']:.2f} + {m['work_busy_b']:.2f} | "
                     f"{per_core(m):.0f} | {m['tps'] / busy if busy else 0:.0f} |")
    lines += ["", "Notes:", "",
              "- The paper's 'four VMs across two servers' is read as four VMs per server (four "
              "pairs): only then do 4 x 3 + 1 = 13 cores add up per server (SPEC.md 1.1).",
              "- Every interrupt reaches core 0 (docs/cpu.md), which also runs VM 0's first "
              "vCPU: pair 0 is slower than the others in every configuration.",
              "- A hypothesis row that fails is a finding (the paper's goal is not borne out in "
              "vtoe), not a defect: the script exits 0 unless a construction or shape row fails.",
              "- Above one MSS (1448 B) a message takes two segments and every configuration's "
              "latency nearly doubles (2048 B): the TCP exchange, common to all stacks, bounds "
              "it there, so per-VM and kernel stacks tie at that size.",
              "- V8 anchors the kernel stack's assumed costs (docs/software-stack.md): one native "
              "client and server on their kernel stacks (scenarios/study/virttas/nk.yaml); "
              "vtoe charges CPU work only, so its round trip is a lower bound of a real stack's.",
              "- One request outstanding per connection: the offered load is 12 transactions in "
              "flight; the paper states neither connections nor pipelining."]
    if drew:
        lines += ["", "![throughput against message size](throughput.png)"]
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="16 and 4096 B, 10 ms each (CI)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(ROOT / "out" / "studies" / "virttas"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    duration = "10ms" if args.quick else "20ms"
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda p: run_point(p, duration), grid(args.quick)))
    rows = analyse(runs, args.quick)
    pairs = [(p, m) for p, m in runs if p["config"] != "nk"]  # the four-pair configurations
    drew = figure(pairs, out)
    report(rows, pairs, args.quick, out, drew)
    (out / "summary.json").write_text(json.dumps(
        {"rows": rows, "runs": [{**p, **m} for p, m in runs]}, indent=1) + "\n")
    failed = [r["id"] for r in rows if r["verdict"] == "FAIL"]
    print(f"virttas: {len(runs)} runs, {len(rows)} rows, "
          f"{'failed: ' + ', '.join(failed) if failed else 'every checked row passes'}; "
          f"{out / 'report.md'}")
    # A paper's goal that vtoe does not bear out is a finding, reported; a construction or shape
    # row that fails is a defect of the model or the scenarios.
    return 1 if any(r["verdict"] == "FAIL" and r["class"] != "hypothesis" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
