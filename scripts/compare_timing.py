#!/usr/bin/env python3
"""How far apart two reproductions of section 5 are (docs/timing.md): typically `make paper`
(platform.timing: lt) against `scripts/reproduce.py --timing at`.

    python3 scripts/compare_timing.py out/paper-lt out/paper-at [--top 15] [--out FILE]

Reads each directory's summary.json (every number of the report) and report.md (the claims and
their verdicts) and prints Markdown: the claims whose verdict differs, the distribution of the
relative differences of the numbers, and the numbers that moved most.
"""
import argparse
import json
import re
import sys
from pathlib import Path

CLAIM = re.compile(r"^\| (?P<text>[^|]+) \| (?P<fig>[^|]+) \| [^|]+ \| (?P<verdict>holds|\*\*does not hold\*\*) \|")


def claims(report):
    out = {}
    for line in Path(report).read_text().splitlines():
        m = CLAIM.match(line)
        if m:
            out[(m["fig"].strip(), m["text"].strip())] = m["verdict"] == "holds"
    return out


def relative(a, b):
    if a == b:
        return 0.0
    if a == 0:
        return float("inf")
    return (b - a) / abs(a)


def compare(a_dir, b_dir, top=15):
    a_dir, b_dir = Path(a_dir), Path(b_dir)
    na = json.loads((a_dir / "summary.json").read_text())
    nb = json.loads((b_dir / "summary.json").read_text())
    ca, cb = claims(a_dir / "report.md"), claims(b_dir / "report.md")
    lines = [f"Claims: {sum(ca.values())} of {len(ca)} hold in {a_dir.name}, "
             f"{sum(cb.values())} of {len(cb)} in {b_dir.name}."]
    changed = [k for k in ca if k in cb and ca[k] != cb[k]]
    if changed:
        lines += ["", f"| claim | figure | {a_dir.name} | {b_dir.name} |", "|---|---|---|---|"]
        for fig, text in changed:
            v = lambda h: "holds" if h else "does not hold"
            lines.append(f"| {text} | {fig} | {v(ca[(fig, text)])} | {v(cb[(fig, text)])} |")
    else:
        lines.append("Every claim has the same verdict in both.")
    keys = sorted(k for k in na if k in nb and isinstance(na[k], (int, float))
                  and isinstance(nb[k], (int, float)))
    diffs = sorted(((abs(relative(na[k], nb[k])), k) for k in keys), reverse=True)
    finite = [d for d, _ in diffs if d != float("inf")]
    buckets = [(0.001, "< 0.1 %"), (0.01, "< 1 %"), (0.05, "< 5 %"), (0.10, "< 10 %")]
    lines += ["", f"{len(keys)} numbers in both reports; relative difference "
              f"{b_dir.name} vs {a_dir.name}:", "", "| difference | numbers |", "|---|---|"]
    for limit, label in buckets:
        lines.append(f"| {label} | {sum(1 for d in finite if d < limit)} |")
    lines.append(f"| >= 10 % | {sum(1 for d, _ in diffs if d >= 0.10)} |")
    lines += ["", f"The {min(top, len(diffs))} that moved most:", "",
              f"| number | {a_dir.name} | {b_dir.name} | difference |", "|---|---|---|---|"]
    for d, k in diffs[:top]:
        pct = "n/a" if d == float("inf") else f"{relative(na[k], nb[k]) * 100:+.1f} %"
        lines.append(f"| `{k}` | {na[k]:.4g} | {nb[k]:.4g} | {pct} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--out", default=None, help="also write the Markdown here")
    args = ap.parse_args(argv)
    text = compare(args.a, args.b, args.top)
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
