#!/usr/bin/env python3
"""Reproduce section 5 of the reference paper (Chang et al., "Virtualization Technology for TCP/IP
Offload Engine", IEEE TCC 2014) with vtoe.

Runs every experiment of section 5 (the sweeps in scenarios/paper/), draws one figure per paper
figure (PNG and SVG) into OUT (default out/paper/), and writes OUT/report.md: for each figure a
table of the paper's numbers against ours with the error in percent where the paper gives
numbers, our measured values, and each qualitative claim of section 5 marked holds / does not
hold with the figure that shows it. OUT/summary.json holds every number the report quotes.

    python3 scripts/reproduce.py [--jobs N] [--scheduler tcp://HOST:PORT] [--out DIR] [--quick]
                                 [--no-report]

OUT/report.html is the same report as one page, each figure beside the paper's numbers for it
(vtoe.report; --no-report leaves it out).

--quick runs shorter simulations (for CI); the claims are checked the same way.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from vtoe import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]

FIGURES = ["fig07", "fig09ab", "fig09cd", "fig10", "fig11", "fig12", "fig13"]
SIZES = [1000, 2000, 4000, 8000]
# Shorter windows for --quick (CI). Fig. 12's phases are fixed by its scenario.
QUICK = {
    "fig07": {"duration": "200ms", "warmup": "30ms"},
    "fig09ab": {"duration": "50ms", "warmup": "15ms"},
    "fig09cd": {"duration": "60ms", "warmup": "15ms"},
    "fig10": {"duration": "100ms", "warmup": "30ms"},
    "fig11": {"duration": "120ms", "warmup": "30ms"},
    "fig13": {"duration": "200ms", "warmup": "30ms"},
}
MANIFEST = ROOT / "scenarios" / "paper" / "calibration.yaml"
ARCH_LABEL = {"native": "Native", "de": "Device emulation (DE)", "da": "Direct access (DA)"}


def rate(df):
    return float((df["vm.tx_mbps"] + df["vm.rx_mbps"]).sum())


# ------------------------------------------------------------------------------------------ verdicts
# Plain functions, so that tests/scripts/test_verdicts.py can give them inputs that must fail.

def pct(ours, paper):
    return 100.0 * (ours - paper) / paper


def line_goodput_mbps(line_bps, mtu=1500, tcp_options=12):
    """TCP payload rate of a saturated Ethernet line: MSS = MTU - 40 (IPv4 + TCP headers) minus
    the options every segment carries (12: the timestamps option, on by default) per MTU + 38
    bytes on the wire (14 header, 4 FCS, 8 preamble, 12 inter-frame gap)."""
    return line_bps / 1e6 * (mtu - 40 - tcp_options) / (mtu + 38)


LINE_1G = line_goodput_mbps(1e9)  # 941.5 Mbit/s


def within_pct(ours, paper, tolerance):
    return abs(pct(ours, paper)) <= tolerance


def all_within(values, lo, hi):
    """Every value inside the paper's own range [lo, hi], no slack."""
    return len(values) > 0 and all(lo <= v <= hi for v in values)


def strictly_increasing(seq):
    return len(seq) > 1 and all(a < b for a, b in zip(seq, seq[1:]))


def strictly_decreasing(seq):
    return len(seq) > 1 and all(a > b for a, b in zip(seq, seq[1:]))


def share_error_pct(values, weights):
    """Largest error, in percent, of each value's share against its weight's share."""
    total, wsum = sum(values), sum(weights)
    if total <= 0:
        return float("inf")
    return max(abs(100.0 * (v / total - w / wsum) / (w / wsum)) for v, w in zip(values, weights))


def jain(values):
    """Jain's fairness index: 1 when all equal, 1/n when one takes everything."""
    sq = sum(v * v for v in values)
    return (sum(values) ** 2) / (len(values) * sq) if sq > 0 else 0.0


def number_holds(entry, ours):
    """The verdict on one number of the manifest: inside the paper's range, or within the
    tolerance (percent) of the paper's value; for a paper value of 0 (an error measure), at most
    the tolerance."""
    paper = entry["paper"]
    if isinstance(paper, list):
        values = ours if isinstance(ours, list) else [ours]
        return all_within(values, paper[0], paper[1])
    if paper == 0:
        return ours <= entry["tolerance"]
    return within_pct(ours, paper, entry["tolerance"])


# Warnings a figure's runs give by design: Fig. 12 is one run whose workloads stop inside its
# window (the phases), drawn against time from its time series.
EXPECTED_WARNINGS = {"fig12": "throughput differs between the halves of the measured window"}


def run_warnings(runs_dir, frames):
    """(number of runs, [(figure/point, warning)]) from the run.json of every point of this
    report's sweeps (not of points an earlier report left in the same directory)."""
    found, count = [], 0
    for name, df in frames.items():
        for point in sorted(df["point_id"].unique()):
            run = Path(runs_dir) / name / "points" / point / "run.json"
            count += 1
            for w in json.loads(run.read_text()).get("warnings", []):
                if name in EXPECTED_WARNINGS and EXPECTED_WARNINGS[name] in w:
                    continue
                found.append((f"{name}/{point}", w))
    return count, found


def load_manifest(path=MANIFEST):
    import yaml
    data = yaml.safe_load(Path(path).read_text())
    labels = {"fitted", "mechanism", "predicted"}
    for n in data["numbers"]:
        if n["label"] not in labels:
            raise ValueError(f"{path}: number {n['id']}: label {n['label']!r} is not one of {sorted(labels)}")
        if not isinstance(n["paper"], list) and "tolerance" not in n:
            raise ValueError(f"{path}: number {n['id']}: a value needs a tolerance")
    return data


class Report:
    def __init__(self, manifest=None):
        self.sections, self.claims, self.summary = [], [], {}
        self.manifest = manifest or {"numbers": [], "fitted": []}
        self.numbers = {}
        self.out_of_sample = None
        self.runs, self.warnings = 0, []

    def value(self, key, v):
        self.summary[key] = round(float(v), 3)
        return self.summary[key]

    def claim(self, text, figure, holds, evidence, test):
        """A qualitative claim; `test` states the comparison and its tolerance."""
        self.claims.append((text, figure, bool(holds), evidence, test))

    def number(self, nid, ours):
        self.numbers[nid] = ours

    def number_rows(self):
        rows, counts = [], {}
        for n in self.manifest["numbers"]:
            ours = self.numbers.get(n["id"])
            if ours is None:
                raise KeyError(f"the report measured no value for manifest number {n['id']}")
            ok = number_holds(n, ours)
            c = counts.setdefault(n["label"], [0, 0])
            c[0] += 1
            c[1] += ok
            paper = n["paper"]
            if isinstance(paper, list):
                vals = ours if isinstance(ours, list) else [ours]
                shown = ", ".join(f"{v:.3g}" for v in vals)
                test, err = f"inside [{paper[0]}, {paper[1]}]", "-"
            elif paper == 0:
                shown, test, err = f"{ours:.1f}", f"<= {n['tolerance']}", "-"
            else:
                shown = f"{ours:.0f}" if abs(ours) >= 100 else f"{ours:.3g}"
                # The pipes escaped: the text is a cell of a Markdown table.
                test, err = f"\\|error\\| <= {n['tolerance']}%", f"{pct(ours, paper):+.1f}%"
            rows.append([n["what"], f"{paper} ({n['source']})", shown, err, test, n["label"],
                         "within" if ok else "**outside**"])
        return rows, counts

    def section(self, title, lines):
        self.sections.append((title, lines))

    def write(self, path, header):
        rows, counts = self.number_rows()
        out = [header, "", "## Summary", ""]
        for label, what in (("predicted", "predicted numbers (nothing was tuned toward them)"),
                            ("mechanism", "mechanism numbers (follow from an algorithm the paper specifies)"),
                            ("fitted", "fitted numbers (a constant was set to produce them; not evidence)")):
            n, k = counts.get(label, [0, 0])
            out.append(f"- {n} {what}: {k} within tolerance")
        held = sum(1 for c in self.claims if c[2])
        out += [f"- {held} of {len(self.claims)} qualitative claims hold"]
        if self.out_of_sample:
            out += [f"- {self.out_of_sample}"]
        warned = sorted(self.warnings)
        out += [f"- {len(warned)} of {self.runs} runs warned that their window is too short or "
                "their result unsteady" + (" (listed at the end)" if warned else "")]
        out += ["",
                "## Numbers of section 5", "",
                "Labels and fitted constants: `scenarios/paper/calibration.yaml`.", ""]
        out += table(["number", "paper (source)", "vtoe", "error", "test", "label", "verdict"], rows)
        out += ["", "Fitted constants:", ""]
        out += table(["key", "from", "to", "fitted to", "when"],
                     [[f"`{f['key']}`", f["from"], f["to"], f["fitted_to"], f["when"]]
                      for f in self.manifest["fitted"]])
        out += ["", "## Claims of section 5", "",
                "| Claim | Figure | Test | Verdict | Evidence |", "|---|---|---|---|---|"]
        for text, fig, holds, ev, test in self.claims:
            out.append(f"| {text} | {fig} | {test} | {'holds' if holds else '**does not hold**'} | {ev} |")
        out += ["", f"{held} of {len(self.claims)} claims hold.", ""]
        for title, lines in self.sections:
            out += [f"## {title}", ""] + lines + [""]
        if warned:
            out += ["## Run warnings", "", "What `vtoe run` warned about (stderr and `run.json`):", ""]
            out += table(["run", "warning"], [[w[0], w[1]] for w in warned]) + [""]
        path.write_text("\n".join(out))


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def save(fig, out, name):
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"{name}.{ext}", dpi=120)


# ------------------------------------------------------------------------------------------ figures

def fig09ab(df, rep, plt, out):
    for fig_id, wl, title in (("9a", "tcp_tx", "Transmit"), ("9b", "tcp_rx", "Receive")):
        d = df[df["vm.workload"] == wl]
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        series = {}
        for arch in ("native", "de", "da"):
            ys = [rate(d[(d["architecture"] == arch) & (d["vm.message_size"] == s)]) for s in SIZES]
            series[arch] = ys
            for s, y in zip(SIZES, ys):
                rep.value(f"fig{fig_id}.{arch}.{s}", y)
            ax.plot(SIZES, ys, marker="o", label=ARCH_LABEL[arch])
        ax.set(xlabel="message size (bytes)", ylabel="throughput (Mbit/s)",
               title=f"Fig. {fig_id}: {title}, 10 Gbit/s TOE")
        ax.set_ylim(bottom=0)
        ax.legend()
        save(fig, out, f"fig{fig_id}")
        plt.close(fig)
        d8 = {a: series[a][-1] for a in ("native", "de", "da")}
        ratio = d8["da"] / d8["de"]
        rep.value(f"fig{fig_id}.da_over_de", ratio)
        if wl == "tcp_tx":
            rep.number("native_tx", d8["native"])
            rep.number("de_tx", d8["de"])
            rep.number("da_gain_over_de_tx", 100 * (ratio - 1))
            rep.number("da_over_native_tx", d8["da"] / d8["native"])
            rep.number("de_over_native_tx", d8["de"] / d8["native"])
        else:
            rep.number("native_rx", d8["native"])
            rep.number("de_rx", d8["de"])
            rep.number("da_rx", d8["da"])
            rep.number("da_gain_over_de_rx", 100 * (ratio - 1))
        lines = [f"8000-byte messages: native {d8['native']:.0f}, DE {d8['de']:.0f}, DA {d8['da']:.0f} "
                 f"Mbit/s; DA/DE {ratio:.3f} (the paper's numbers and their labels: Summary)."]
        lines += [""] + table(["message size"] + [ARCH_LABEL[a] for a in ("native", "de", "da")],
                              [[s] + [f"{series[a][i]:.0f}" for a in ("native", "de", "da")]
                               for i, s in enumerate(SIZES)])
        lines += ["", f"![Fig. {fig_id}](fig{fig_id}.png)"]
        rep.section(f"Fig. {fig_id}: {title.lower()} throughput, 10 Gbit/s", lines)
        rising = all(strictly_increasing(series[a]) for a in series)
        rep.claim(f"{title}: throughput rises with the message size", fig_id, rising,
                  "; ".join(f"{a} " + " < ".join(f"{y:.0f}" for y in series[a]) for a in series),
                  "strictly increasing over 1000-8000 B, each architecture")
        order = all(series["native"][i] > series["da"][i] > series["de"][i] for i in range(len(SIZES)))
        rep.claim(f"{title}: native > DA > DE at every message size", fig_id, order,
                  f"8000 B: {series['native'][-1]:.0f} > {series['da'][-1]:.0f} > {series['de'][-1]:.0f}",
                  "strict order at each of the four sizes")
        idle = float(d["vm.cpu.idle"].max())
        util = float(d["toe.utilization"].max())
        rep.claim(f"{title}: the CPU, not the 10 Gbit/s link, is the limit", fig_id,
                  idle < 0.05 and util < 0.9,
                  f"largest idle fraction {idle:.3f}, largest line utilization {util:.2f}",
                  "idle < 5% and line utilization < 90% at every point")


def fig09cd(df, rep, plt, out):
    for fig_id, wl, title, lo, hi in (("9c", "tcp_tx", "transmit", 5, 23), ("9d", "tcp_rx", "receive", 7, 15)):
        d = df[df["vm.workload"] == wl]
        fig, ax = plt.subplots(figsize=(7, 3.8))
        parts = ["vm.cpu.guest_user", "vm.cpu.guest_kernel", "vm.cpu.hypervisor", "vm.cpu.idle"]
        labels, bottoms, x = [], None, 0
        rows, gaps = [], []
        for s in SIZES:
            vals = {}
            for arch in ("de", "da"):
                r = d[(d["architecture"] == arch) & (d["vm.message_size"] == s)].iloc[0]
                vals[arch] = r
                bottom = 0.0
                for p, color in zip(parts, ("#4c72b0", "#55a868", "#c44e52", "#dddddd")):
                    ax.bar(x, r[p], bottom=bottom, color=color, label=p.split(".")[-1] if x == 0 else None)
                    bottom += r[p]
                labels.append(f"{arch.upper()}-{s}")
                x += 1
                rep.value(f"fig{fig_id}.{arch}.{s}.idle", r["vm.cpu.idle"])
                rep.value(f"fig{fig_id}.{arch}.{s}.mbps", r["vm.tx_mbps"] + r["vm.rx_mbps"])
            gap = 100 * (vals["da"]["vm.cpu.idle"] - vals["de"]["vm.cpu.idle"])
            gaps.append(gap)
            rows.append([s, f"{vals['de']['vm.tx_mbps'] + vals['de']['vm.rx_mbps']:.0f}",
                         f"{100 * vals['de']['vm.cpu.idle']:.1f}%",
                         f"{vals['da']['vm.tx_mbps'] + vals['da']['vm.rx_mbps']:.0f}",
                         f"{100 * vals['da']['vm.cpu.idle']:.1f}%", f"{gap:+.1f} points"])
            x += 0.5
        ax.set_xticks([i + (i // 2) * 0.5 for i in range(len(labels))], labels, rotation=45, fontsize=8)
        ax.set(ylabel="fraction of CPU time", title=f"Fig. {fig_id}: CPU time, {title}, 1 Gbit/s TOE")
        ax.legend(fontsize=7, loc="upper left")
        save(fig, out, f"fig{fig_id}")
        plt.close(fig)
        lines = table(["message size", "DE Mbit/s", "DE idle", "DA Mbit/s", "DA idle", "DA - DE idle"], rows)
        lines += ["", f"Paper: DA leaves {lo}-{hi}% more idle CPU than DE ({title}).", "",
                  f"![Fig. {fig_id}](fig{fig_id}.png)"]
        rep.section(f"Fig. {fig_id}: CPU breakdown, {title}, 1 Gbit/s", lines)
        rep.claim(f"1 Gbit/s {title}: DA leaves more idle CPU than DE at every message size", fig_id,
                  all(g > 0 for g in gaps), ", ".join(f"{g:+.1f}" for g in gaps),
                  "DA idle - DE idle > 0 at each size")
        rep.number("tx_idle_gap" if wl == "tcp_tx" else "rx_idle_gap", gaps)
        if wl == "tcp_tx":
            de1 = float(d[(d["architecture"] == "de") & (d["vm.message_size"] == 1000)]["vm.tx_mbps"].iloc[0])
            da1 = float(d[(d["architecture"] == "da") & (d["vm.message_size"] == 1000)]["vm.tx_mbps"].iloc[0])
            rep.number("de1000_below_line", de1 / LINE_1G)
            rep.claim("DE cannot reach 1 Gbit/s with 1000-byte messages while DA can", fig_id,
                      de1 < 0.97 * LINE_1G <= da1,
                      f"DE {de1:.0f}, DA {da1:.0f} Mbit/s; line goodput {LINE_1G:.1f}",
                      f"DE < 97% and DA >= 97% of the line goodput (from MTU 1500: {LINE_1G:.1f})")
        idle_rises = all(
            strictly_increasing(list(d[d["architecture"] == a].sort_values("vm.message_size")["vm.cpu.idle"]))
            for a in ("de", "da"))
        rep.claim(f"1 Gbit/s {title}: idle time grows with the message size", fig_id, idle_rises,
                  "DE and DA idle vs message size", "strictly increasing over 1000-8000 B, DE and DA")


def fig10(df, rep, plt, out):
    d = df.copy()
    # Group by the VMs each point configures to send (the sweep stops the others at 1 ns), not by
    # those measured active: a starved VM must count against its group, not move the point.
    stops = [c for c in (f"vms.{i}.workload.stop" for i in (1, 2, 3)) if c in d.columns]
    d["configured"] = 4 - d[stops].notna().sum(axis=1)
    totals = d.groupby(["architecture", "vm.message_size", "configured"])["vm.tx_mbps"].sum()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    rows, flat, worst = [], True, (2.0, "")
    for ax, arch in zip(axes, ("de", "da")):
        for j, s in enumerate(SIZES):
            ys = [float(totals.get((arch, s, n), float("nan"))) for n in (1, 2, 3, 4)]
            for n, y in zip((1, 2, 3, 4), ys):
                rep.value(f"fig10.{arch}.{s}.{n}vm", y)
            ax.bar([n + (j - 1.5) * 0.2 for n in (1, 2, 3, 4)], ys, width=0.2, label=f"{s} B")
            flat &= min(ys) >= 0.95 * max(ys)
            if min(ys) / max(ys) < worst[0]:
                worst = (min(ys) / max(ys), f"{arch.upper()} {s} B: " + ", ".join(f"{y:.0f}" for y in ys))
            rows.append([ARCH_LABEL[arch], s] + [f"{y:.0f}" for y in ys])
        ax.set(title=f"{arch.upper()}", xlabel="number of VMs", xticks=[1, 2, 3, 4])
    axes[0].set_ylabel("total throughput (Mbit/s)")
    axes[1].legend(fontsize=7)
    fig.suptitle("Fig. 10: throughput vs number of VMs, 10 Gbit/s TOE")
    save(fig, out, "fig10")
    plt.close(fig)
    rep.section("Fig. 10: scalability, 10 Gbit/s", table(["architecture", "message size", "1 VM", "2 VMs", "3 VMs", "4 VMs"], rows)
                + ["", "![Fig. 10](fig10.png)"])
    rep.claim("No degradation of total throughput as the number of guests grows (DE and DA)", "10", flat,
              f"worst: {worst[1]} (min/max {worst[0]:.2f})",
              "every (architecture, size): min >= 95% of max over 1-4 configured VMs")


def fig11(df, rep, plt, out):
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
    shares = {}
    rows = []
    for ax, policy, tag in zip(axes, ("rr", "dwrr"), ("11a", "11b")):
        d = df[df["toe.dispatcher.policy"] == policy].sort_values("vm")
        ys = list(d["vm.tx_mbps"])
        for i, y in enumerate(ys):
            rep.value(f"fig{tag}.vm{i}", y)
        shares[policy] = [y / sum(ys) for y in ys]
        ax.bar([f"VM{i}\n{int(m)} B" for i, m in enumerate(d["vm.message_size"])], ys)
        ax.set(title=f"Fig. {tag}: {'round robin' if policy == 'rr' else 'DWRR'}")
        rows.append([policy.upper()] + [f"{y:.0f}" for y in ys] + [f"{sum(ys):.0f}"])
    axes[0].set_ylabel("throughput (Mbit/s)")
    save(fig, out, "fig11")
    plt.close(fig)
    rep.section("Fig. 11: dispatching policy, four VMs with 1000/2000/4000/8000-byte messages, 1 Gbit/s",
                table(["policy", "VM0", "VM1", "VM2", "VM3", "total"], rows) + ["", "![Fig. 11](fig11.png)"])
    rr, dw = shares["rr"], shares["dwrr"]
    rep.claim("Round robin is unfair when message sizes differ", "11a", rr[3] > 3 * rr[0],
              f"shares {', '.join(f'{100 * s:.0f}%' for s in rr)}",
              "VM3 (8000 B) gets > 3x VM0's (1000 B) share")
    rep.claim("DWRR shares the TOE fairly despite different message sizes", "11b",
              share_error_pct(dw, [1, 1, 1, 1]) <= 10,
              f"shares {', '.join(f'{100 * s:.0f}%' for s in dw)}",
              "every VM's share within 10% of 1/4")


# Fig. 12's phases (scenarios/paper/weights.yaml): from, to (ms), label.
FIG12_PHASES = [(20, 400, "phase 1 (all)"), (420, 800, "phase 2 (VM0 stopped)"),
                (820, 1200, "phase 3 (VM1 only)")]


def fig12(df, rep, plt, out, runs_dir):
    """Throughput against time, as the paper draws it, from the one run's time series; the
    phases' means are the numbers the claims test."""
    from vtoe import load_timeseries

    point = df["point_id"].iloc[0]
    ts = load_timeseries(runs_dir / "points" / point)
    names = sorted(df["vm.name"].unique(), key=lambda n: list(df["vm.name"]).index(n))
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for i, n in enumerate(names):
        ax.plot(ts["time_s"] * 1e3, ts[f"vm.{n}.tx_mbps"], color=f"C{i}", lw=1, label=f"VM{i}")
    for lo, _, _ in FIG12_PHASES[1:]:
        ax.axvline(lo - 20, color="0.6", lw=0.8, ls=":")
    ax.set(xlabel="time (ms)", ylabel="throughput (Mbit/s)",
           title="Fig. 12: DWRR with weights 4:1:2:2, 1 Gbit/s TOE")
    ax.legend(fontsize=7, ncol=4)
    save(fig, out, "fig12")
    plt.close(fig)
    rows, data = [], {}
    for lo, hi, label in FIG12_PHASES:
        # Rows are intervals ending at time_s: the phase's are those inside [lo, hi].
        phase = ts[(ts["time_s"] * 1e3 > lo + 1e-6) & (ts["time_s"] * 1e3 <= hi + 1e-6)]
        ys = [float(phase[f"vm.{n}.tx_mbps"].mean()) for n in names]
        data[lo] = ys
        for i, y in enumerate(ys):
            rep.value(f"fig12.{label.split()[0]}{label.split()[1]}.vm{i}", y)
        rows.append([label] + [f"{y:.0f}" for y in ys] + [f"{sum(ys):.0f}"])
    rep.section("Fig. 12: weighted shares over time",
                table(["phase", "VM0", "VM1", "VM2", "VM3", "total"], rows)
                + ["", "One run's time series (stats_interval), the phases' means in the table.",
                   "", "![Fig. 12](fig12.png)"])
    p1, p2, p3 = data[20], data[420], data[820]
    e1 = share_error_pct(p1, [4, 1, 2, 2])
    e2 = share_error_pct(p2[1:], [1, 2, 2])
    rep.number("dwrr_4122", e1)
    rep.number("dwrr_122_after_stop", e2)
    rep.number("dwrr_lone_vm", p3[1] / LINE_1G)
    rep.claim("DWRR keeps shares 4:1:2:2 when all four VMs send", "12", e1 <= 10,
              f"{p1[0]:.0f}:{p1[1]:.0f}:{p1[2]:.0f}:{p1[3]:.0f} Mbit/s (worst share error {e1:.1f}%)",
              "every VM's share within 10% of its weight's")
    rep.claim("With VM0 stopped, VM1:VM2:VM3 share 1:2:2 and the TOE stays busy", "12",
              e2 <= 10 and sum(p2[1:]) >= 0.95 * LINE_1G,
              f"{p2[1]:.0f}:{p2[2]:.0f}:{p2[3]:.0f}, total {sum(p2[1:]):.0f} (worst share error {e2:.1f}%)",
              f"VM1-VM3 shares within 10% of 1:2:2 and total >= 95% of {LINE_1G:.1f}")
    rep.claim("A VM alone gets the whole TOE", "12",
              p3[1] >= 0.95 * LINE_1G and sum(p3) - p3[1] < 0.01 * LINE_1G,
              f"VM1 {p3[1]:.0f} Mbit/s, the others {sum(p3) - p3[1]:.1f}",
              f"VM1 >= 95% of {LINE_1G:.1f}, the others < 1%")


def io_ratio(df):
    return df.groupby("point_id")["vm.workload"].transform(lambda s: int((s == "tcp_tx").sum()))


def fig07(df, rep, plt, out):
    d = df.copy()
    d["io"] = io_ratio(d)
    totals = d.groupby("io")["vm.tx_mbps"].sum().sort_index(ascending=False)
    fig, ax = plt.subplots(figsize=(5, 3.4))
    labels = [f"{n}:{4 - n}" for n in totals.index]
    ax.bar(labels, list(totals))
    ax.set(xlabel="I/O-intensive : CPU-intensive VMs", ylabel="total throughput (Mbit/s)",
           title="Fig. 7: baseline credit scheduler, 1 Gbit/s")
    save(fig, out, "fig07")
    plt.close(fig)
    for n, y in totals.items():
        rep.value(f"fig07.io{n}", y)
    rep.section("Fig. 7: I/O- vs CPU-intensive VMs, baseline credit scheduler",
                table(["I/O : CPU"] + labels, [["total Mbit/s"] + [f"{y:.0f}" for y in totals]]) + ["", "![Fig. 7](fig07.png)"])
    ys = list(totals)
    rep.claim("Network throughput drops as CPU-intensive VMs replace I/O ones (baseline credit)", "7",
              strictly_decreasing(ys), " > ".join(f"{y:.0f}" for y in ys),
              "strictly decreasing from 4:0 to 1:3")


def fig13(df, rep, plt, out):
    d = df.copy()
    d["io"] = io_ratio(d)
    variant = {("false", "false"): "credit", ("true", "false"): "+BOOST", ("true", "true"): "+BOOST+Tickle"}
    d["variant"] = [variant[(str(b).lower(), str(t).lower())] for b, t in
                    zip(d["hypervisor.scheduler.boost"], d["hypervisor.scheduler.tickle"])]
    totals = d.groupby(["io", "variant"])["vm.tx_mbps"].sum()
    fig, axes = plt.subplots(1, 4, figsize=(11, 3.2), sharey=True)
    rows = []
    for ax, n, tag in zip(axes, (1, 2, 3, 4), "abcd"):
        ys = [float(totals[(n, v)]) for v in variant.values()]
        for v, y in zip(variant.values(), ys):
            rep.value(f"fig13{tag}.{v}", y)
        ax.bar(list(variant.values()), ys, color=["C0", "C1", "C2"])
        ax.set_title(f"Fig. 13{tag}: {n}:{4 - n}")
        ax.tick_params(axis="x", labelsize=7)
        rows.append([f"{n}:{4 - n}"] + [f"{y:.0f}" for y in ys])
    axes[0].set_ylabel("network throughput (Mbit/s)")
    save(fig, out, "fig13")
    plt.close(fig)
    rep.section("Fig. 13: BOOST and Tickle, 1 Gbit/s", table(["I/O : CPU"] + list(variant.values()), rows)
                + ["", "![Fig. 13](fig13.png)"])
    t = lambda n, v: float(totals[(n, v)])  # noqa: E731
    mixed = (1, 2, 3)
    rep.claim("With one I/O VM among CPU VMs, baseline credit gives poor network throughput", "13a",
              t(1, "credit") < 0.5 * LINE_1G, f"{t(1, 'credit'):.0f} Mbit/s", f"< 50% of {LINE_1G:.1f}")
    rep.claim("BOOST alone does not saturate the TOE", "13a", t(1, "+BOOST") < 0.95 * LINE_1G,
              f"{t(1, '+BOOST'):.0f} Mbit/s", f"1:3, +BOOST < 95% of {LINE_1G:.1f}")
    rep.claim("BOOST improves on the baseline credit scheduler when CPU VMs compete", "13a-c",
              all(t(n, "+BOOST") > 1.01 * t(n, "credit") for n in mixed),
              ", ".join(f"{n}:{4 - n} {t(n, 'credit'):.1f} -> {t(n, '+BOOST'):.1f}" for n in mixed),
              "+BOOST more than 1% above credit at 1:3, 2:2 and 3:1 (a smaller difference is "
              "within a run's noise)")
    rep.claim("Tickle improves on BOOST alone when CPU VMs compete", "13a-c",
              all(t(n, "+BOOST+Tickle") > t(n, "+BOOST") for n in mixed),
              ", ".join(f"{n}:{4 - n} {t(n, '+BOOST'):.0f} -> {t(n, '+BOOST+Tickle'):.0f}" for n in mixed),
              "+BOOST+Tickle > +BOOST at 1:3, 2:2 and 3:1")
    rep.claim("BOOST + Tickle saturates the TOE at every I/O:CPU ratio", "13a-d",
              all(t(n, "+BOOST+Tickle") >= 0.95 * LINE_1G for n in (1, 2, 3, 4)),
              ", ".join(f"{t(n, '+BOOST+Tickle'):.0f}" for n in (1, 2, 3, 4)), f">= 95% of {LINE_1G:.1f} at each ratio")
    rep.claim("With only I/O VMs every policy reaches full TOE utilization", "13d",
              all(t(4, v) >= 0.95 * LINE_1G for v in variant.values()),
              ", ".join(f"{t(4, v):.0f}" for v in variant.values()), f">= 95% of {LINE_1G:.1f}, each variant")
    # Figs. 13b-c: the CPU is shared more fairly as I/O VMs replace CPU VMs (Jain's index of the
    # VMs' run time over the window), and fairly once all four do I/O.
    run = d.groupby(["io", "variant"])["vm.scheduler.run_ms"].apply(list)
    fair = {(n, v): jain(run[(n, v)]) for n in (1, 2, 3, 4) for v in variant.values()}
    for (n, v), j in fair.items():
        rep.value(f"fig13.jain.{n}.{v}", j)
    rising = all(strictly_increasing([fair[(n, v)] for n in (1, 2, 3, 4)]) for v in variant.values())
    rep.claim("The CPU is shared more fairly as the number of I/O VMs grows, and fairly at 4:0", "13b-d",
              rising and all(fair[(4, v)] >= 0.95 for v in variant.values()),
              "; ".join(f"{v} " + ", ".join(f"{fair[(n, v)]:.2f}" for n in (1, 2, 3, 4)) for v in variant.values()),
              "Jain's index of VM run time strictly increasing 1:3 -> 4:0 for each variant, >= 0.95 at 4:0")


def out_of_sample(result, rep):
    """scripts/fit.py's check: constants fitted on three numbers, the rest predicted."""
    rows = []
    for r in result["predictions"]:
        if "error_pct" in r:
            err = f"{r['error_pct']:+.1f}%"
        else:
            err = "inside" if r["error_points"] == 0 else f"{r['error_points']:.1f} points outside"
        vt = r["vtoe"] if not isinstance(r["vtoe"], list) else ", ".join(f"{v:.1f}" for v in r["vtoe"])
        rows.append([r["number"], f"{r['paper']} ({r['source']})", vt, err])
    consts = ", ".join(f"`{k}` = {v}" for k, v in result["constants"].items())
    lines = [f"Fitted on: {'; '.join(result['fitted_on'])} ({result['fit_runs']} runs, bisection). "
             f"Model: {result['model']}.", "", f"Constants found: {consts}.", ""]
    lines += table(["predicted number", "paper (source)", "vtoe with the fitted constants", "error"], rows)
    rep.section("Out-of-sample check (scripts/fit.py)", lines)
    worst = max(abs(r["error_pct"]) for r in result["predictions"] if "error_pct" in r)
    rep.out_of_sample = (f"out of sample (fitted on native tx, native rx and DE tx at 8000 B only): "
                         f"{len(result['predictions'])} other numbers predicted, largest error "
                         f"{worst:.1f}% (table below)")


# ------------------------------------------------------------------------------------------ main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulations (default: cores)")
    ap.add_argument("--scheduler", default=None, help="Dask scheduler address, tcp://HOST:PORT")
    ap.add_argument("--out", default=str(ROOT / "out" / "paper"), help="output directory")
    ap.add_argument("--quick", action="store_true", help="shorter simulations (CI)")
    ap.add_argument("--vtoe", default=None, help="path of the vtoe binary")
    ap.add_argument("--no-fit", action="store_true", help="skip the out-of-sample check (scripts/fit.py)")
    ap.add_argument("--no-report", action="store_true",
                    help="do not write OUT/report.html (report.md with the figures, one page)")
    ap.add_argument("--timing", choices=["lt", "at"], default="lt",
                    help="platform.timing of every run: lt (loosely timed, the default) or at "
                         "(approximately timed memory system)")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    frames, failures = {}, []
    for name in FIGURES:
        spec = load_sweep(ROOT / "scenarios" / "paper" / f"{name}.sweep.yaml")
        if args.quick:
            spec.set.update(QUICK.get(name, {}))
        spec.set["platform.timing"] = args.timing
        # Never resume: runs left from another binary would put stale numbers in the report.
        df = run_sweep(spec, jobs=args.jobs, scheduler=args.scheduler, out=out / "runs" / name,
                       vtoe=args.vtoe, resume=False, quiet=True)
        failures += df.attrs.get("failures", [])
        frames[name] = df
        print(f"{name}: {df['point_id'].nunique()} points", file=sys.stderr)
    if failures:
        for f in failures:
            print(f"failed point {f['point_id']} {f['overrides']}: {f['error']}", file=sys.stderr)
        return 1

    rep = Report(load_manifest())
    rep.runs, rep.warnings = run_warnings(out / "runs", frames)
    fig09ab(frames["fig09ab"], rep, plt, out)
    fig09cd(frames["fig09cd"], rep, plt, out)
    fig07(frames["fig07"], rep, plt, out)
    fig10(frames["fig10"], rep, plt, out)
    fig11(frames["fig11"], rep, plt, out)
    fig12(frames["fig12"], rep, plt, out, out / "runs" / "fig12")
    fig13(frames["fig13"], rep, plt, out)
    if not args.no_fit:
        import fit
        out_of_sample(fit.run(out / "fit", jobs=args.jobs, vtoe=args.vtoe, quick=args.quick,
                              timing=args.timing), rep)
    elapsed = time.monotonic() - started
    points = sum(f["point_id"].nunique() for f in frames.values())
    header = ("# vtoe: reproduction of section 5\n\n"
              f"{points} simulations{' (quick mode: shorter runs)' if args.quick else ''}, "
              f"platform.timing: {args.timing}; "
              "every number below is in summary.json and comes from the runs under runs/.")
    rep.write(out / "report.md", header)
    (out / "summary.json").write_text(json.dumps(rep.summary, indent=1, sort_keys=True) + "\n")
    held = sum(1 for c in rep.claims if c[2])
    if not args.no_report:
        from vtoe.report import make_report
        print(f"page: {make_report(out)}")
    else:
        (out / "report.html").unlink(missing_ok=True)  # a page of an earlier report is stale
    print(f"report: {out / 'report.md'} ({held}/{len(rep.claims)} claims hold; {points} simulations in "
          f"{elapsed:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
