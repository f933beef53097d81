#!/usr/bin/env python3
"""`make studies`: the four related papers as studies, one verdict summary.

Runs scripts/study_{miniproxy,haas,socksdirect,virttas}.py one after another (each prints its
verdict table and writes OUT/<study>/report.md and summary.json), then prints and writes
OUT/summary.md: per study its runs, how many verdicts pass, fail or are not posed, and which
fail; then checks the figures the docs quote from this variant of the studies (full, or
`<study>_quick` with --quick) against the summaries just written (scripts/doc_figures.py,
docs/figures.yaml); and OUT/report.html, one page with every study's verdict table, its
sensitivity to the assumed costs, its figures, the commit and the commands that made it
(`vtoe report OUT`: python/vtoe/report.py, from OUT/studies.json).

Exit status 2 when matplotlib is missing (unless --no-figures, which writes no page either);
1 when a study fails to run, a verdict fails (a construction guard among them) or a
quoted figure differs from the fresh run; `scripts/doc_figures.py update --kind studies
--summary NAME=DIR ...` (the command is printed) rewrites the figures after an intended change.

    python3 scripts/studies.py [--quick] [--jobs N] [--out DIR] [--only STUDY ...] [--no-docs]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import doc_figures
import study_common

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ["miniproxy", "haas", "socksdirect", "virttas"]


def figure_name(study, quick):
    """The study's name in docs/figures.yaml for this variant."""
    return f"{study}_quick" if quick else study


def flips(summary):
    """The verdicts that flip inside an assumed cost's range (scripts/study_sensitivity.py), and
    the constant that flips each, nearest the study's value first."""
    sens = summary.get("sensitivity")
    if sens is None:
        return "not swept"
    found = [f"{i} ({', '.join(f['constant'] for f in v['flips'])})"
             for i, v in sens["verdicts"].items() if v["flips"]]
    return ", ".join(found) or "none"


def summary_table(summaries, walls):
    """Lines of the combined summary: a row per study."""
    lines = ["| study | variant | runs | pass | fail | not posed | failing | flips under an assumed "
             "cost | wall (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, s in summaries.items():
        if s is None:
            lines.append(f"| {name} | - | - | - | - | - | the study did not run to its end | - | "
                         f"{walls[name]:.0f} |")
            continue
        n = s["counts"]
        failing = [f"{i} ({v['class']})" for i, v in s["verdicts"].items()
                   if v["verdict"] == study_common.FAIL]
        lines.append(f"| {name} | {s['variant']} | {len(s['runs'])} | {n['pass']} | {n['fail']} | "
                     f"{n['not posed']} | {', '.join(failing) or '-'} | {flips(s)} | "
                     f"{walls[name]:.0f} |")
    return lines


def check_docs(summaries, out, quick):
    """(ok, lines): the docs' figures of these studies' variant against their fresh summaries."""
    runs = doc_figures.load_runs()
    names = {figure_name(s, quick): out / s for s in summaries if summaries[s] is not None}
    names = {n: p for n, p in names.items() if n in runs}
    if not names:
        return True, ["No figures quoted from these studies."]
    figures = doc_figures.select(doc_figures.find_figures(doc_figures.documents()), runs,
                                 "studies", list(names))
    doc_figures.prepare(figures, runs, out, 1, names)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        bad = doc_figures.check(figures)
    lines = buf.getvalue().splitlines()
    lines.append(f"{len(figures) - bad} of {len(figures)} figures the docs quote from "
                 f"{', '.join(sorted(names))} match these runs")
    if bad:
        lines.append("After an intended change: python3 scripts/doc_figures.py update --kind "
                     "studies " + " ".join(f"--summary {n}={p}" for n, p in sorted(names.items())))
    return bad == 0, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="each study's quick variant (CI)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "studies")
    ap.add_argument("--only", nargs="+", choices=STUDIES, help="these studies only")
    ap.add_argument("--no-docs", action="store_true", help="skip the check of the docs' figures")
    ap.add_argument("--no-figures", action="store_true", help="the studies draw no figures")
    args = ap.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    begin = time.monotonic()
    # The tree the studies ran from, as it was when they started.
    args.commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    args.dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    study_common.plotting(args.no_figures, "studies")  # fail before any run, not after
    studies = args.only or STUDIES
    args.out.mkdir(parents=True, exist_ok=True)
    summaries, walls, codes, commands = {}, {}, {}, {}
    for study in studies:
        out = args.out / study
        summary = out / "summary.json"
        if summary.exists():
            summary.unlink()  # a stale summary must not pass for this run's
        cmd = [sys.executable, str(ROOT / "scripts" / f"study_{study}.py"), "--jobs",
               str(args.jobs), "--out", str(out)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--no-figures"] if args.no_figures else []
        commands[study] = "python3 " + " ".join(
            os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in cmd[1:])
        print(f"== {study}: {' '.join(cmd[1:])}", flush=True)
        start = time.monotonic()
        codes[study] = subprocess.run(cmd).returncode
        walls[study] = time.monotonic() - start
        summaries[study] = json.loads(summary.read_text()) if summary.exists() else None
    lines = [f"# The studies ({'quick' if args.quick else 'full'} variants)", ""]
    lines += summary_table(summaries, walls)
    ok = all(s is not None for s in summaries.values()) and \
        all(s["counts"]["fail"] == 0 for s in summaries.values() if s)
    if not args.no_docs:
        docs_ok, doc_lines = check_docs(summaries, args.out, args.quick)
        lines += ["", "Figures quoted in the docs:", ""] + [f"- {x}" for x in doc_lines]
        ok = ok and docs_ok
    crashed = [s for s, c in codes.items() if c not in (0, 1)]
    ok = ok and not crashed
    lines += ["", f"Verdict: {'every verdict passes or is not posed' if ok else 'FAILED'}"
              + (f" (studies that did not run to their end: {', '.join(crashed)})"
                 if crashed else "") + "."]
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines[2:]))
    print(f"{args.out / 'summary.md'}")
    page = write_page(args, studies, commands, walls, codes, time.monotonic() - begin)
    if page:
        print(page)
    return 0 if ok else 1


def git(*argv):
    """git's answer, or None outside a work tree (Popen: the tests stand in for subprocess.run
    with the studies)."""
    try:
        with subprocess.Popen(["git", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) as proc:
            out = proc.communicate()[0]
    except OSError:
        return None
    return out.strip() if proc.returncode == 0 else None


def write_page(args, studies, commands, walls, codes, wall):
    """OUT/studies.json (the commit, the commands, the walls) and OUT/report.html from it and
    the studies' reports; None with --no-figures (a page without its figures is not written)."""
    info = {"commit": args.commit, "dirty": args.dirty,
            "variant": "quick" if args.quick else "full",
            "command": " ".join(["python3 scripts/studies.py", *args.argv]),
            "wall_s": wall,
            "studies": [{"name": s, "command": commands[s], "wall_s": walls[s],
                         "returncode": codes[s]} for s in studies
                        if (args.out / s / "report.md").is_file()]}
    (args.out / "studies.json").write_text(json.dumps(info, indent=1) + "\n")
    if args.no_figures:
        print("report.html not written (--no-figures: the page shows the figures)")
        return None
    sys.path.insert(0, str(ROOT / "python"))
    from vtoe import report
    return report.make_report(args.out)


if __name__ == "__main__":
    sys.exit(main())
