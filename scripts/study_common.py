"""What the study scripts (scripts/study_*.py) share: the binary they run, the verdict words, the
guard against starved peers, the verdict table that opens each report (and that the script
prints), the claims table, the figure check and summary.json."""
from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The columns of a claims table; a study with a model of its own adds "model" after "paper".
CLAIM_COLUMNS = ("id", "claim", "paper", "vtoe", "test", "class", "verdict")

# A verdict is one of these. "not posed": the claim is not tested (not checkable here, or a run it
# needs failed its guard); the row's `reason` says why.
PASS, FAIL, NOT_POSED = "pass", "fail", "not posed"

# A pair, flow or VM that gets less than this fraction of the median of its peers (those the
# scenario gives equal weight and equal work) makes its run a failed run, not a data point.
STARVED_FRACTION = 0.1


def vtoe_bin() -> str:
    return os.environ.get("VTOE_BIN") or str(ROOT / "build" / "release" / "app" / "vtoe")


def verdict(ok) -> str:
    """pass, fail, or not posed (ok is None)."""
    if ok is None:
        return NOT_POSED
    return PASS if ok else FAIL


def starved(values, fraction=STARVED_FRACTION) -> list[tuple[int, float]]:
    """(index, peers' median) of every value below `fraction` of the median of the others: the
    members of a group of peers (equal weight, equal work) that the run starved. A group of one
    has no peers."""
    found = []
    for i, v in enumerate(values):
        others = [x for j, x in enumerate(values) if j != i]
        if others:
            median = statistics.median(others)
            if v < fraction * median:
                found.append((i, median))
    return found


def not_posed(row, failed):
    """Turns `row` into a "not posed" row when a run it needs failed its guard (`failed`: the
    failed runs' labels, in the order to name them); its value stays, marked as from failed
    runs."""
    if failed and row["verdict"] != NOT_POSED:
        row["verdict"] = NOT_POSED
        row["reason"] = "needs runs that failed their guard (G): " + ", ".join(failed)
        row["vtoe"] = f"{row['vtoe']} (from failed runs)"
    return row


def reason(row) -> str:
    """Why the row has its verdict: the row's own reason (not posed), else the value and the test."""
    if row.get("reason"):
        return row["reason"]
    return f"{row['vtoe']}; test: {row['test']}"


def verdict_table(rows) -> list[str]:
    """The table that opens a report: one row per claim, its verdict and the reason."""
    lines = ["| # | verdict | class | reason |", "|---|---|---|---|"]
    for r in rows:
        shown = f"**{r['verdict']}**" if r["verdict"] == FAIL else r["verdict"]
        lines.append(f"| {r['id']} | {shown} | {r['class']} | {reason(r).replace('|', '/')} |")
    return lines


def count(rows) -> dict:
    return {v: sum(1 for r in rows if r["verdict"] == v) for v in (PASS, FAIL, NOT_POSED)}


def claims_table(rows, columns=CLAIM_COLUMNS) -> list[str]:
    """The summary line (verdicts per class), a blank line and the table."""
    classes = {}
    for r in rows:
        classes.setdefault(r["class"], []).append(r["verdict"])
    lines = ["Summary: " + "; ".join(
        f"{c}: " + ", ".join(f"{v.count(w)} {w}" for w in (PASS, FAIL, NOT_POSED) if v.count(w))
        for c, v in classes.items()) + ".", ""]
    lines.append("| " + " | ".join("#" if c == "id" else c for c in columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for r in rows:
        lines.append("| " + " | ".join(r[c] for c in columns) + " |")
    return lines


def report_head(title, rows) -> list[str]:
    """A report's first lines: its title and the verdict table."""
    return [f"# {title}", "", "## Verdicts", ""] + verdict_table(rows) + [""]


def plotting(no_figures, study):
    """matplotlib's pyplot, or None when --no-figures asked for none. A missing matplotlib is an
    error (exit status 2) that says what to do, never a silent skip."""
    if no_figures:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        # Exit status 2: not a failed verdict (1), a study that cannot run as asked.
        print(f"{study}: matplotlib is missing ({e}): install it (make venv, or pip install "
              f"matplotlib) or pass --no-figures to write the report without figures",
              file=sys.stderr)
        raise SystemExit(2) from None
    return plt


def figure_note(drawn, no_figures) -> list[str]:
    return ["", "Figures not drawn (--no-figures)."] if no_figures and not drawn else []


def finish(study, rows, runs, figures, out, quick, sensitivity=None) -> int:
    """Writes OUT/summary.json (verdicts by id, the figures the docs quote, rows, runs, and the
    sweep of the assumed costs: scripts/study_sensitivity.py), prints the verdict table and a
    one-line summary; returns the exit status: 1 when a verdict fails (a verdict that flips
    inside an assumed cost's range is a finding the report states, not a failure)."""
    ids = [r["id"] for r in rows]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"{study}: row ids used twice: {sorted(dup)}")
    variant = "quick" if quick else "full"
    summary = {"study": study, "variant": variant, "counts": count(rows),
               "verdicts": {r["id"]: {"verdict": r["verdict"], "class": r["class"],
                                      "reason": reason(r)} for r in rows},
               "figures": figures, "rows": rows, "runs": runs}
    if sensitivity is not None:
        summary["sensitivity"] = sensitivity
    (Path(out) / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{study} ({variant}): verdicts")
    print("\n".join(verdict_table(rows)))
    n = count(rows)
    failed = [r["id"] for r in rows if r["verdict"] == FAIL]
    print(f"{study} ({variant}): {len(runs)} runs, {n[PASS]} pass, {n[FAIL]} fail"
          f"{' (' + ', '.join(failed) + ')' if failed else ''}, {n[NOT_POSED]} not posed; "
          f"{Path(out) / 'report.md'}")
    sys.stdout.flush()
    return 1 if failed else 0
