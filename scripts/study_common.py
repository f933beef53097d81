"""What the study scripts (scripts/study_*.py) share: the binary they run, the verdict words and
the claims table that opens each report (a summary per class, then one row per claim)."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The columns of a claims table; a study with a model of its own adds "model" after "paper".
CLAIM_COLUMNS = ("id", "claim", "paper", "vtoe", "test", "class", "verdict")


def vtoe_bin() -> str:
    return os.environ.get("VTOE_BIN") or str(ROOT / "build" / "release" / "app" / "vtoe")


def verdict(ok) -> str:
    return "pass" if ok else "FAIL"


def claims_table(rows, columns=CLAIM_COLUMNS) -> list[str]:
    """The summary line (checked rows passing, per class), a blank line and the table."""
    classes = {}
    for r in rows:
        classes.setdefault(r["class"], []).append(r["verdict"])
    lines = ["Summary: " + "; ".join(
        f"{c}: {v.count('pass')} of {len(v)} pass" if c != "not checkable" else
        f"{len(v)} not checkable" for c, v in classes.items()) + ".", ""]
    lines.append("| " + " | ".join("#" if c == "id" else c for c in columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for r in rows:
        lines.append("| " + " | ".join(r[c] for c in columns) + " |")
    return lines
