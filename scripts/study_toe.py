#!/usr/bin/env python3
"""TOE design-space study (beyond the paper): `make study-toe`.

Runs every sweep of scenarios/study/toe/ (TOE clock, PPM engines, PPM datapath width, DMA burst,
DMA reads in flight, latency against the clock, CCB cache against the number of connections),
draws one figure per sweep into OUT (default out/study-toe/) and writes OUT/report.md: for each sweep a table of the
measured values with the utilisation of every resource at each point, the knee of the curve and
the resource that limits before and after it. OUT/summary.json holds every number the report
quotes.

    python3 scripts/study_toe.py [--jobs N] [--scheduler tcp://HOST:PORT] [--out DIR] [--quick]

--quick runs shorter simulations and fewer CCB points (for CI); the analysis is the same.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from reproduce import save, table  # one report style for both (scripts/ is this script's folder)
from vtoe import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]

STUDY = ROOT / "scenarios" / "study" / "toe"
# sweep name -> (knob, metric, direction, axis label, metric label)
SWEEPS = {
    "clock": ("platform.device_freq", "tx_mbps", "up", "TOE clock (MHz)", "throughput (Mbit/s)"),
    "engines": ("toe.ppm.engines", "tx_mbps", "up", "PPM engines at 50 MHz", "throughput (Mbit/s)"),
    "datapath": ("toe.ppm.datapath", "tx_mbps", "up", "PPM datapath (bytes/cycle) at 100 MHz",
                 "throughput (Mbit/s)"),
    "burst": ("toe.dma_burst", "tx_mbps", "up", "DMA burst (bytes), 4 GHz CPU",
              "throughput (Mbit/s)"),
    "outstanding": ("toe.dma_outstanding", "tx_mbps", "up",
                    "Tx DMA reads in flight, 1 KiB bursts, 4 GHz CPU", "throughput (Mbit/s)"),
    "outstanding_latency": ("toe.dma_outstanding", "tx_mbps", "up",
                            "Tx DMA reads in flight, 256 B bursts, 200 ns DRAM latency, "
                            "51.2 Gbit/s DRAM, 16 GHz CPU", "throughput (Mbit/s)"),
    "sram": ("toe.sram", "rx_mbps", "up", "shared local buffer SRAM (bytes), 100 us link delay",
             "receive throughput (Mbit/s)"),
    "latency": ("platform.device_freq", "mean_latency_us", "down", "TOE clock (MHz)",
                "mean request/response latency (us)"),
    "ccb": ("network.clients.concurrency", "rx_mbps", "ccb", "connections open at once",
            "receive goodput (Mbit/s)"),
}
QUICK = {"duration": "30ms", "warmup": "10ms"}
QUICK_GRID = {"ccb": {"toe.ccb.cache": [16, 4096], "network.clients.concurrency": [1, 16, 256]}}
# Resources whose utilisation (0..1) results.json reports, by the column it is in.
RESOURCES = {
    "link (transmit)": "toe.utilization",
    "link (receive)": "toe.rx_utilization",
    "PPM transmit engines": "toe.ppm_tx_utilization",
    "PPM receive engines": "toe.ppm_rx_utilization",
    "DRAM": "toe.dram_utilization",
    "host CPU": "cpu_busy",
}
# Shown beside them but never named as the limit: the SRAM's peak fill is not a busy time
# (promised receive windows fill it whenever they can).
SHOWN = {"shared SRAM peak": "toe.sram_peak_utilization"}
KNEE_SHARE = 0.95  # a knee: where the curve first comes within 5 % of its best value

_UNITS = {"hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3,  # -> MHz
          "b": 1, "kib": 1024, "mib": 1 << 20}


def number(value) -> float:
    """A knob's value as a number: 400MHz -> 400 (MHz), 4KiB -> 4096 (bytes), 8 -> 8."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(value))
    if not m:
        raise ValueError(f"not a number with a unit: {value!r}")
    unit = m.group(2).lower()
    if unit and unit not in _UNITS:
        raise ValueError(f"unknown unit in {value!r}")
    return float(m.group(1)) * (_UNITS[unit] if unit else 1.0)


def knee(xs, ys, direction="up"):
    """Index of the first point within KNEE_SHARE of the best value (the largest for 'up', the
    smallest for 'down'), or None when the curve is flat (best and worst within 5 %)."""
    if len(ys) < 2:
        return None
    best, worst = (max(ys), min(ys)) if direction == "up" else (min(ys), max(ys))
    if best == 0 or abs(best - worst) <= 0.05 * abs(best):
        return None
    for i, y in enumerate(ys):
        if (direction == "up" and y >= KNEE_SHARE * best) or (
                direction == "down" and y <= best / KNEE_SHARE):
            return i
    return None


def last_good(ys):
    """For a curve that falls as load grows: index of the last point within KNEE_SHARE of the
    best, when a later point falls below it; None if none does."""
    if not ys:
        return None
    best = max(ys)
    below = [i for i, y in enumerate(ys) if y < KNEE_SHARE * best and i > ys.index(best)]
    return below[0] - 1 if below else None


def limit(row) -> tuple[str, float]:
    """The most utilised resource at a point and its utilisation."""
    name, col = max(RESOURCES.items(), key=lambda kv: row.get(kv[1], 0.0))
    return name, float(row.get(col, 0.0))


def points_table(df, knob, metric):
    """One row per point: knob value, metric summed (or averaged for latency) over VMs, resource
    utilisations."""
    rows = []
    for pid, g in df.groupby("point_id", sort=False):
        first = g.iloc[0]
        r = {"point_id": pid, "x": number(first[knob]), "label": str(first[knob])}
        col = "vm." + metric
        r["y"] = float(g[col].mean() if metric.endswith("latency_us") else g[col].sum())
        for name, c in {**RESOURCES, **SHOWN}.items():
            if c == "cpu_busy":
                r[c] = float(1.0 - g["vm.cpu.idle"].mean())
            else:
                v = first.get(c, 0.0)
                r[c] = float(v) if v == v else 0.0  # NaN (a column some points lack) -> 0
        rows.append(r)
    return sorted(rows, key=lambda r: r["x"])


def ccb_stats(runs: Path, pid: str) -> dict:
    stats = json.loads((runs / "points" / pid / "results.json").read_text())["stats"]
    s, ppm = stats["toe.ccb"], stats.get("toe.ppm", {})
    hits, misses = s.get("record_hits", 0), s.get("record_misses", 0)
    # Frames the PPM's receive FIFO dropped (an engine slowed by misses falls behind the wire).
    dropped, taken = ppm.get("rx_fifo_drops", 0), ppm.get("frames_rx", 0)
    return {"misses": misses, "miss_rate": misses / (hits + misses) if hits + misses else 0.0,
            "fifo_drop_rate": dropped / (dropped + taken) if dropped + taken else 0.0}


def ccb_capacity_effect(series: dict) -> dict:
    """How much the CCB's capacity moves goodput: at each clock and number of connections, the
    smallest cache against the largest; the largest difference found, and where."""
    by_clock = {}
    for label, rows in series.items():
        cache = int(label.split(",")[0].split()[-1])
        clock = label.split(", ", 1)[1] if ", " in label else ""
        by_clock.setdefault(clock, {})[cache] = {r["x"]: r for r in rows}
    best = None
    for clock, caches in by_clock.items():
        small, large = caches[min(caches)], caches[max(caches)]
        for x in sorted(set(small) & set(large)):
            if large[x]["y"] <= 0:
                continue
            drop = 1 - small[x]["y"] / large[x]["y"]
            if best is None or drop > best["drop"]:
                best = {"drop": drop, "clock": clock, "connections": small[x]["label"],
                        "small_cache": min(caches), "large_cache": max(caches),
                        "small": small[x]["y"], "large": large[x]["y"],
                        "miss_rate": small[x].get("miss_rate", 0.0),
                        "fifo_drop_rate": small[x].get("fifo_drop_rate", 0.0),
                        "limit": limit_text(small[x])}
    if best is None:
        return {"drop": 0.0, "text": "*CCB capacity*: no pair of caches to compare."}
    where = f" with the {best['clock']}" if best["clock"] else ""
    best["text"] = (f"*CCB capacity*: the largest effect is at {best['connections']} connections"
                    f"{where}: {best['small_cache']} records on chip give {best['small']:.4g} "
                    f"Mbit/s against {best['large']:.4g} with {best['large_cache']} "
                    f"({-100 * best['drop']:+.1f} %; record miss rate {best['miss_rate']:.3f}, "
                    f"{100 * best['fifo_drop_rate']:.1f} % of received frames dropped by the "
                    f"PPM's receive FIFO; the limit with the small cache is {best['limit']}).")
    return best


SATURATED = 0.9  # a resource this busy is a capacity limit; below it the limit is a latency


def limit_text(row) -> str:
    name, u = limit(row)
    if u >= SATURATED:
        return f"the {name} (utilisation {u:.2f} at {row['label']})"
    return (f"a latency, not a capacity: no resource is saturated (the busiest is the {name} at "
            f"{u:.2f} at {row['label']})")


def describe(rows, i, direction, ylabel):
    fmt = lambda r: f"{r['label']}"  # noqa: E731
    if i is None:
        return (f"flat over {fmt(rows[0])}..{fmt(rows[-1])} ({rows[0]['y']:.4g} to "
                f"{rows[-1]['y']:.4g}): no knee in this range; the limit at the last point is "
                + limit_text(rows[-1]))
    best = max(r["y"] for r in rows) if direction == "up" else min(r["y"] for r in rows)
    text = f"knee at {fmt(rows[i])} ({ylabel} {rows[i]['y']:.4g}, best {best:.4g})"
    if i > 0:
        text += "; below it the limit is " + limit_text(rows[i - 1])
    text += "; from it on, " + limit_text(rows[i])
    return text


def analyse(name, df, runs: Path, plt, out: Path, report: list, summary: dict):
    knob, metric, direction, xlabel, ylabel = SWEEPS[name]
    report += [f"## {name}: {ylabel} against {xlabel}", ""]
    series = {}
    if name == "ccb":
        clocks = "platform.device_freq" in df.columns and df["platform.device_freq"].nunique() > 1
        keys = ["platform.device_freq", "toe.ccb.cache"] if clocks else ["toe.ccb.cache"]
        groups = [(k if isinstance(k, tuple) else (k,), g) for k, g in df.groupby(keys)]
        for key, g in sorted(groups, key=lambda kg: [number(v) for v in kg[0]]):
            label = f"CCB cache {key[-1]}" + (f", TOE at {key[0]}" if clocks else "")
            series[label] = points_table(g, knob, metric)
    elif name == "clock":
        for engines, g in df.groupby("toe.ppm.engines", sort=True):
            series[f"{engines} PPM engine(s)"] = points_table(g, knob, metric)
    else:
        series[name] = points_table(df, knob, metric)

    fig, (ax, au) = plt.subplots(1, 2, figsize=(11, 4))
    summary[name] = {}
    for label, rows in series.items():
        xs, ys = [r["x"] for r in rows], [r["y"] for r in rows]
        ax.plot(xs, ys, marker="o", label=label)
        header = [knob, ylabel] + [f"{k} util." for k in {**RESOURCES, **SHOWN}]
        extra = {}
        if name == "ccb":
            for r in rows:
                r.update(ccb_stats(runs, r["point_id"]))
            header += ["CCB misses", "miss rate", "receive FIFO drops"]
        report += [f"**{label}**", ""]
        report += table(header, [
            [r["label"], f"{r['y']:.4g}"] + [f"{r[c]:.2f}" for c in {**RESOURCES, **SHOWN}.values()] +
            ([r["misses"], f"{r['miss_rate']:.3f}", f"{r['fifo_drop_rate']:.3f}"]
             if name == "ccb" else []) for r in rows])
        if name == "ccb":
            i = last_good(ys)
            if i is None:
                verdict = (f"no knee up to {rows[-1]['label']} connections: goodput stays within "
                           f"5 % of its best ({max(ys):.4g}); record miss rate at most "
                           f"{max(r['miss_rate'] for r in rows):.3f}; the limit at the last "
                           f"point is {limit_text(rows[-1])}")
            else:
                nxt = rows[i + 1]
                cause = (f"CCB record misses (miss rate {nxt['miss_rate']:.3f}; otherwise "
                         f"{limit_text(nxt)})" if nxt["miss_rate"] > 0.05 else limit_text(nxt))
                verdict = (f"knee after {rows[i]['label']} connections: at {nxt['label']} goodput "
                           f"falls to {nxt['y']:.4g} from a best of {max(ys):.4g}; cause: {cause}")
            extra = {"knee_index": i}
        else:
            i = knee(xs, ys, direction)
            verdict = describe(rows, i, direction, ylabel)
            extra = {"knee_index": i, "knee_at": rows[i]["label"] if i is not None else None}
        report += ["", f"*{label}*: {verdict}.", ""]
        summary[name][label] = {"points": rows, "verdict": verdict, **extra}
        for res, col in RESOURCES.items():
            if label == list(series)[0]:
                au.plot(xs, [r[col] for r in rows], marker=".", label=res)
    for a in (ax, au):
        a.set_xscale("log", base=2)
        a.set_xlabel(xlabel)
        a.grid(True, alpha=0.3)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if name == "ccb":
        effect = ccb_capacity_effect(series)
        summary[name]["capacity_effect"] = effect
        report += [effect["text"], ""]
    au.set_ylabel(f"utilisation ({list(series)[0]})")
    au.set_ylim(0, 1.05)
    au.legend(fontsize=8)
    save(fig, out, f"study_{name}")
    plt.close(fig)
    report += [f"![{name}](study_{name}.png)", ""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulations (default: cores)")
    ap.add_argument("--scheduler", default=None, help="Dask scheduler address, tcp://HOST:PORT")
    ap.add_argument("--out", default=str(ROOT / "out" / "study-toe"), help="output directory")
    ap.add_argument("--quick", action="store_true", help="shorter simulations, fewer points")
    ap.add_argument("--vtoe", default=None, help="path of the vtoe binary")
    ap.add_argument("--only", default=None, help="comma-separated sweep names (default: all)")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.only.split(",") if args.only else list(SWEEPS)
    unknown = [n for n in names if n not in SWEEPS]
    if unknown:
        print(f"--only: unknown sweep {unknown[0]!r} (known: {', '.join(SWEEPS)})", file=sys.stderr)
        return 2
    started = time.monotonic()
    report = ["# vtoe: TOE design-space study", ""]
    summary, failures, points = {}, [], 0
    for name in names:
        spec = load_sweep(STUDY / f"{name}.sweep.yaml")
        if args.quick:
            spec.set.update(QUICK)
            spec.grid.update(QUICK_GRID.get(name, {}))
        runs = out / "runs" / name
        # Never resume: runs left from another binary would put stale numbers in the report.
        df = run_sweep(spec, jobs=args.jobs, scheduler=args.scheduler, out=runs, vtoe=args.vtoe,
                       resume=False, quiet=True)
        failures += df.attrs.get("failures", [])
        if df.empty:
            continue
        points += df["point_id"].nunique()
        print(f"{name}: {df['point_id'].nunique()} points", file=sys.stderr)
        analyse(name, df, runs, plt, out, report, summary)
    for f in failures:
        print(f"failed point {f['point_id']} {f['overrides']}: {f['error']}", file=sys.stderr)
    elapsed = time.monotonic() - started
    report[1:1] = ["", f"{points} simulations{' (quick mode)' if args.quick else ''} in "
                   f"{elapsed:.0f} s wall; every number below is in summary.json and comes from "
                   "the runs under runs/. A knee is the first point within 5 % of the curve's "
                   "best value; the limiting resource at a point is the one with the highest "
                   "utilisation among the link, the PPM's engines, DRAM and the host CPU."]
    (out / "report.md").write_text("\n".join(report) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    print(f"report: {out / 'report.md'} ({points} simulations in {elapsed:.0f} s wall)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
