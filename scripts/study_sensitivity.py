"""Every assumed cost a study's verdicts rest on, swept (issue 40): the constants that are neither
measured nor fitted (docs/calibration.md, scenarios/paper/calibration.yaml `assumed`, and those
the study scripts name) are each set to a range of values around the study's own (half to twice
at least), the runs that use the constant are repeated through the sweep runner (vtoe.run_sweep,
python/vtoe/sweep.py), and the study's own analysis gives the verdicts again. Per verdict the
report says whether it holds across every range and, where not, which constant flips it and at
what value, with a plot of each verdict's margin against each constant.

A study hands over its points and runs, how a point runs with a constant changed
(`spec_of(point, values, scratch) -> (scenario file, overrides)`), how a results.json becomes
its measured dict (`measure`), and its analysis (`analyse(runs, costs) -> rows`); a row with a
`margin` (positive: the test passes, by that fraction) is plotted, every row's verdict is
compared. Runs that the constant does not touch are the study's own runs, not repeated."""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import study_common

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

# Multiples of a constant's study value: half to twice, even steps on a log scale (the study's
# value, 1, is the study's own runs). --quick: the two ends only.
FACTORS = (0.5, 0.71, 1.41, 2.0)
QUICK_FACTORS = (0.5, 2.0)


@dataclass
class Constant:
    """An assumed constant: `id` (short, in file names), `label`, `keys` the scenario keys it
    sets (several move together, e.g. a stack's transmit and receive cost), `why` it is assumed
    and why the range is plausible, `study_values(point)` -> {key: the point's value} ({} when
    the point does not use the constant), `factors` (default FACTORS), and whether the quick
    variant sweeps it."""
    id: str
    label: str
    keys: tuple
    why: str
    study_values: object
    factors: tuple = FACTORS
    quick: bool = False
    unit: str = "cycles"

    def scaled(self, point, factor):
        return {k: v * factor for k, v in self.study_values(point).items()}


@dataclass
class Study:
    """What the sweep needs of a study script."""
    name: str
    points: list                      # the study's points, in its order
    runs: list                        # [(point, measured)] of the study's own runs
    spec_of: object                   # (point, {key: value}, scratch dir) -> (Path, {key: value})
    measure: object                   # (point, results.json dict) -> measured dict
    analyse: object                   # (runs, {key: value}) -> rows
    key: object = field(default=lambda p: json.dumps(p, sort_keys=True))


def _run_points(jobs, out, name, specs):
    """specs: [(tag, base Path, overrides)] -> {tag: results.json dict}. One vtoe.run_sweep per
    scenario file (the sweep runner: parallel runs, resume, a failed point reported)."""
    from vtoe import point_id, run_sweep
    by_base = {}
    for tag, base, overrides in specs:
        by_base.setdefault(str(base), []).append((tag, overrides))
    results = {}
    for i, (base, items) in enumerate(sorted(by_base.items())):
        sweep_dir = out / f"{name}-{i}"
        points = [{k: _plain(v) for k, v in o.items()} for _, o in items]
        df = run_sweep({"name": f"{name}-{i}", "base": base, "points": points}, jobs=jobs,
                       out=sweep_dir, quiet=True, timeout=600)
        if df.attrs["failures"]:
            f = df.attrs["failures"][0]
            raise RuntimeError(f"sensitivity run failed: {base} {f['overrides']}: {f['error']}")
        for (tag, _), o in zip(items, points):
            pid = point_id(o, None)
            results[tag] = json.loads((sweep_dir / "points" / pid / "results.json").read_text())
    return results


def _plain(v):
    """A value as a sweep point holds it: numbers stay numbers, with no float noise."""
    if isinstance(v, float):
        return float(f"{v:.6g}")
    return v


def flip_at(xs, margins, verdicts, study_value):
    """Where a verdict first differs from its verdict at the study's value, going outwards
    from it: between the last swept value that keeps it and the first that does not, at the
    margin's zero crossing (log-linear) when the margins cross zero there, else at their
    geometric mean. None when the verdict never changes."""
    i = xs.index(study_value)
    nearest = None
    for step in (1, -1):
        j = i
        while 0 <= j + step < len(xs) and verdicts[j + step] == verdicts[i]:
            j += step
        k = j + step
        if not 0 <= k < len(xs):
            continue
        m0, m1 = margins[j], margins[k]
        t = m0 / (m0 - m1) if (m0 is not None and m1 is not None and m0 != m1 and
                               (m0 > 0) != (m1 > 0)) else 0.5
        at = math.exp(math.log(xs[j]) + t * (math.log(xs[k]) - math.log(xs[j])))
        if nearest is None or abs(math.log(at / study_value)) < abs(math.log(nearest[0] /
                                                                         study_value)):
            nearest = (at, verdicts[k])
    return nearest


def sweep(study: Study, constants, out, jobs, quick):
    """Runs every constant's values; returns the sensitivity record of summary.json:
    {constants: [...], rows: {id: {constant: {values, margins, verdicts}}},
     verdicts: {id: {holds, flips: [{constant, at, factor}]}}}."""
    begin = time.monotonic()
    out = Path(out) / "sensitivity"
    scratch = out / "scenarios"
    scratch.mkdir(parents=True, exist_ok=True)
    swept = [c for c in constants if c.quick or not quick]
    base_rows = study.analyse(study.runs, {})
    record = {"constants": [], "rows": {r["id"]: {} for r in base_rows}, "verdicts": {}}
    for c in swept:
        factors = sorted(set(QUICK_FACTORS if quick else c.factors) | {1.0})
        used = [p for p in study.points if c.study_values(p)]
        values0 = {}
        for p in used:
            for k, v in c.study_values(p).items():
                values0.setdefault(k, set()).add(v)
        specs = []
        for f in factors:
            if f == 1.0:
                continue
            for p in used:
                base, overrides = study.spec_of(p, c.scaled(p, f), scratch)
                specs.append(((f, study.key(p)), base, overrides))
        results = _run_points(jobs, out, f"{study.name}-{c.id}", specs)
        # The constant's value on the plot: its first key's study value times the factor.
        k0 = c.keys[0]
        v0 = sorted(values0.get(k0, {0}))[0]
        record["constants"].append({
            "id": c.id, "label": c.label, "keys": list(c.keys), "unit": c.unit, "why": c.why,
            "study_values": {k: sorted(v) for k, v in values0.items()},
            "factors": factors, "values": [v0 * f for f in factors], "runs_per_value": len(used)})
        for f in factors:
            if f == 1.0:
                rows = base_rows
            else:
                runs = [(p, study.measure(p, results[(f, study.key(p))])
                         if (f, study.key(p)) in results else m) for p, m in study.runs]
                costs = {k: v * f for k, vs in values0.items() for v in sorted(vs)[:1]}
                rows = study.analyse(runs, costs)
            for r in rows:
                entry = record["rows"].setdefault(r["id"], {}).setdefault(
                    c.id, {"values": [], "margins": [], "verdicts": []})
                entry["values"].append(v0 * f)
                entry["margins"].append(r.get("margin"))
                entry["verdicts"].append(r["verdict"])
    for r in base_rows:
        flips = []
        for c in record["constants"]:
            e = record["rows"][r["id"]].get(c["id"])
            study_value = c["values"][c["factors"].index(1.0)]
            found = e and flip_at(e["values"], e["margins"], e["verdicts"], study_value)
            if found:
                flips.append({"constant": c["id"], "at": found[0], "to": found[1],
                              "factor": found[0] / study_value})
        record["verdicts"][r["id"]] = {"verdict": r["verdict"], "holds": not flips,
                                       "flips": flips}
    runs = sum(c["runs_per_value"] * (len(c["factors"]) - 1) for c in record["constants"])
    print(f"{study.name}: sensitivity sweep of {len(record['constants'])} assumed costs, "
          f"{runs} runs, {time.monotonic() - begin:.1f} s (wall)", flush=True)
    return record


def across(v):
    """What a verdict does over every range: it holds (a pass that stays), stays failed, stays
    not posed, or flips."""
    if v["flips"]:
        return "flips"
    return {study_common.PASS: "holds", study_common.FAIL: "fails throughout"}.get(
        v["verdict"], "not posed throughout")


def none(rows, why):
    """The record of a study whose verdicts rest on no assumed cost: every verdict holds, and
    the report says why nothing is swept."""
    return {"constants": [], "rows": {}, "none": why,
            "verdicts": {r["id"]: {"verdict": r["verdict"], "holds": True, "flips": []}
                         for r in rows}}


def fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def report_lines(record, drew, quick):
    """The report's section: the constants swept, per verdict whether it holds, the plot."""
    lines = ["## Sensitivity to the assumed costs", ""]
    if not record["constants"]:
        return lines + [record.get("none", "No assumed cost is swept."), ""]
    lines += ["Each constant below is neither measured nor fitted; it is set to each value of "
              "its range (multiples of the study's value) in the runs that use it, the other "
              "runs kept, and the verdicts computed again. A verdict that flips inside a range "
              "rests on that assumption; the plot shows each verdict's margin (how far its "
              "test is from failing, as a fraction of its threshold) against each constant." +
              (" Quick run: the ends of the ranges only, and only the constants the quick "
               "variant sweeps." if quick else ""), "",
              "| constant | study value | values swept | runs per value | why assumed, why "
              "this range |", "|---|---|---|---|---|"]
    for c in record["constants"]:
        study = "; ".join(f"`{k}` {'/'.join(fmt(x) for x in v)}"
                          for k, v in c["study_values"].items())
        values = ", ".join(fmt(v) for v in c["values"])
        lines.append(f"| {c['id']}: {c['label']} | {study} {c['unit']} | {values} | "
                     f"{c['runs_per_value']} | {c['why']} |")
    lines += ["", "| # | verdict | across every range | flipped by (where the margin crosses "
              "zero) |", "|---|---|---|---|"]
    for rid, v in record["verdicts"].items():
        unit = {c["id"]: c["unit"] for c in record["constants"]}
        flips = "; ".join(f"{f['constant']} at {fmt(f['at'])} {unit[f['constant']]} "
                          f"(x{f['factor']:.2f} the study's value): {f['to']}"
                          for f in v["flips"]) or "-"
        lines.append(f"| {rid} | {v['verdict']} | {across(v)} | {flips} |")
    if drew:
        lines += ["", "![verdict margins against the assumed constants](sensitivity.png)"]
    return lines + [""]


def plot(plt, record, out):
    """OUT/sensitivity.png: a panel per constant, each verdict's margin (positive: passes)
    against the constant's value; the study's value marked."""
    if plt is None or not record["constants"]:
        return False
    cs = record["constants"]
    fig, axes = plt.subplots(1, len(cs), figsize=(4.2 * len(cs), 3.6), squeeze=False)
    for ax, c in zip(axes[0], cs):
        for rid, by_c in record["rows"].items():
            e = by_c.get(c["id"])
            if not e or all(m is None for m in e["margins"]):
                continue
            pts = [(x, m) for x, m in zip(e["values"], e["margins"]) if m is not None]
            ax.plot([x for x, _ in pts], [m for _, m in pts], "o-", label=rid, markersize=3)
        ax.axhline(0, color="k", linewidth=0.8)
        ax.axvline(c["values"][c["factors"].index(1.0)], color="grey", linestyle=":")
        ax.set_xscale("log")
        ax.set_xlabel(f"{c['keys'][0]} ({c['unit']})", fontsize=8)
        ax.set_title(c["label"], fontsize=9)
        ax.set_ylabel("verdict margin (> 0 passes)")
        ax.set_yscale("symlog", linthresh=0.1)
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(Path(out) / "sensitivity.png", dpi=100)
    plt.close(fig)
    return True
