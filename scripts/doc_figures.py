#!/usr/bin/env python3
"""Figures quoted in README.md and docs/ come from runs, and this script keeps them so.

A quoted figure carries, right after it, a comment that says how it is computed:

    **4996.7<!--= native_tx.vms[0].tx_mbps | .1f -->** Mbit/s

`native_tx` names a run in docs/figures.yaml (a scenario and its overrides); the expression reads
that run's results.json (dict keys as attributes, list items by index; Python arithmetic, abs,
min, max, sum, round) and the format after `|` is Python's format spec. Markdown does not show
the comment.

A name may also be a study of docs/figures.yaml's `studies:` (a study script and its arguments,
one name per variant: `virttas` the full study, `virttas_quick` its `--quick` variant); the
expression then reads the study's summary.json (`virttas.verdicts.V3.verdict`,
`virttas.figures.v3_min`). A quoted figure is a number, a word (`**fail<!--= ... -->**`) or a
code span (`` `not posed`<!--= ... --> ``).

    doc_figures.py check    run what the marked figures need; exit 1 naming every figure that
                            differs from its run (file, line, quoted, computed)
    doc_figures.py update   the same runs; rewrite every marked figure with the computed value
    doc_figures.py list     the marked figures and their expressions, without running anything

--kind runs|studies limits the figures to those of vtoe runs or of studies, --only NAME (glob,
repeatable) to those whose every name matches; --summary NAME=PATH takes a study's summary.json
(or its output directory) from a run already made instead of running the study (`make studies`
checks the full variants' figures so, scripts/studies.py).
"""
import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RUNS_FILE = ROOT / "docs" / "figures.yaml"
# A figure: an optional sign and digits (".", "," allowed inside), a word, or a code span; then
# the marker.
MARKER = re.compile(r"([-+\u2212]?[0-9][0-9.,]*|(?<![\w.\-])[A-Za-z][A-Za-z0-9_-]*|`[^`\n]+`)?"
                    r"<!--=\s*(.+?)\s*(?:\|\s*([^|>]*?)\s*)?-->")


class Node:
    """Attribute-style access to a results.json value (`run.vms[0].tx_mbps`)."""

    def __init__(self, value, path):
        self._value, self._path = value, path

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        if not isinstance(self._value, dict) or key not in self._value:
            raise KeyError(f"{self._path}.{key} is not in the results")
        return wrap(self._value[key], f"{self._path}.{key}")

    def __getitem__(self, index):
        try:
            return wrap(self._value[index], f"{self._path}[{index!r}]")
        except (IndexError, KeyError, TypeError):
            raise KeyError(f"{self._path}[{index!r}] is not in the results") from None


def wrap(value, path):
    return value if isinstance(value, (int, float, str, bool)) or value is None else Node(value, path)


class Figure:
    def __init__(self, doc, line, quoted, expr, fmt, start, end):
        self.doc, self.line, self.quoted, self.expr, self.fmt = doc, line, quoted, expr, fmt or ""
        self.start, self.end = start, end  # span of the quoted value in the file's text
        self.computed = None
        self.error = None

    def where(self):
        try:
            doc = self.doc.relative_to(ROOT)
        except ValueError:
            doc = self.doc
        return f"{doc}:{self.line}"


def documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def find_figures(paths):
    figures = []
    for path in paths:
        text = path.read_text()
        for m in MARKER.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            quoted = m.group(1)
            if quoted is None:
                start = end = m.start()
            elif quoted.startswith("`"):  # a code span: the figure is inside the backticks
                start, end, quoted = m.start(1) + 1, m.end(1) - 1, quoted[1:-1]
            else:
                start, end = m.start(1), m.end(1)
            figures.append(Figure(path, line, quoted, m.group(2), m.group(3), start, end))
    return figures


def load_runs():
    """{name: (kind, argv)}: kind "run" (a vtoe run: scenario and overrides) or "study" (a study
    script and its arguments)."""
    spec = yaml.safe_load(RUNS_FILE.read_text()) or {}
    runs = spec.get("runs") or {}
    studies = spec.get("studies") or {}
    if not isinstance(runs, dict) or not isinstance(studies, dict):
        raise SystemExit(f"{RUNS_FILE}: `runs` and `studies` must map names to command lines")
    both = set(runs) & set(studies)
    if both:
        raise SystemExit(f"{RUNS_FILE}: {', '.join(sorted(both))} both a run and a study")
    table = {name: ("run", shlex.split(str(cmd))) for name, cmd in runs.items()}
    table.update({name: ("study", shlex.split(str(cmd))) for name, cmd in studies.items()})
    return table


def names_in(expr, runs):
    return {n for n in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\b", expr) if n in runs}


def vtoe_binary():
    if os.environ.get("VTOE_BIN"):
        return Path(os.environ["VTOE_BIN"])
    return ROOT / "build" / os.environ.get("VTOE_PRESET", "release") / "app" / "vtoe"


def summary_path(path):
    path = Path(path)
    return path / "summary.json" if path.is_dir() else path


def run_all(names, runs, out_root, jobs, summaries=None):
    """{name: results}: vtoe runs in parallel (`jobs`), studies one after another (each with
    `jobs` of its own); a study named in `summaries` is read from there instead of run."""
    summaries = summaries or {}
    binary = vtoe_binary()
    if any(runs[n][0] == "run" for n in names) and not binary.exists():
        raise SystemExit(f"{binary} is missing: build first (make build)")

    def one(name):
        out = out_root / name
        cmd = [str(binary), "run", *runs[name][1], "--out", str(out), "--quiet"]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"run {name} ({' '.join(cmd)}) failed:\n{proc.stderr}")
        return name, json.loads((out / "results.json").read_text())

    def study(name):
        if name in summaries:
            path = summary_path(summaries[name])
            if not path.exists():
                raise SystemExit(f"study {name}: {path} is missing")
            return json.loads(path.read_text())
        out = out_root / name
        script, *args = runs[name][1]
        cmd = [sys.executable, str(ROOT / script), *args, "--jobs", str(jobs), "--out", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                              env=dict(os.environ, VTOE_BIN=str(binary)))
        # A study that exits 1 has failing verdicts, which its figures quote: only a missing
        # summary is an error here.
        if not (out / "summary.json").exists():
            raise SystemExit(f"study {name} ({' '.join(cmd)}) wrote no summary.json:\n"
                             f"{proc.stdout}{proc.stderr}")
        return json.loads((out / "summary.json").read_text())

    plain = sorted(n for n in names if runs[n][0] == "run")
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = dict(pool.map(one, plain))
    for name in sorted(n for n in names if runs[n][0] == "study"):
        results[name] = study(name)
    return results


def normalise(s):
    return (s or "").replace("\u2212", "-")


def evaluate(figures, results):
    env = {"abs": abs, "min": min, "max": max, "sum": sum, "round": round, "len": len}
    env.update({name: Node(value, name) for name, value in results.items()})
    for f in figures:
        try:
            value = eval(f.expr, {"__builtins__": {}}, env)  # our own docs, not user input
            f.computed = format(value, f.fmt)
        except Exception as e:  # noqa: BLE001 -- reported per figure
            f.error = f"{type(e).__name__}: {e}"


def check(figures):
    bad = 0
    for f in figures:
        if f.error:
            print(f"{f.where()}: `{f.expr}`: {f.error}")
            bad += 1
        elif f.quoted is None:
            print(f"{f.where()}: no figure before the marker for `{f.expr}` (computed {f.computed})")
            bad += 1
        elif normalise(f.quoted) != normalise(f.computed):
            print(f"{f.where()}: quotes {f.quoted}, the run gives {f.computed} (`{f.expr}`)")
            bad += 1
    return bad


def update(figures):
    by_doc = {}
    for f in figures:
        if f.error:
            raise SystemExit(f"{f.where()}: `{f.expr}`: {f.error}")
        by_doc.setdefault(f.doc, []).append(f)
    changed = 0
    for doc, figs in by_doc.items():
        text = doc.read_text()
        for f in sorted(figs, key=lambda f: f.start, reverse=True):
            if normalise(f.quoted) != normalise(f.computed):
                text = text[:f.start] + f.computed + text[f.end:]
                changed += 1
        doc.write_text(text)
    return changed


KINDS = {"runs": "run", "studies": "study"}


def select(figures, runs, kind="all", only=()):
    """The figures to check: those of `kind` (runs, studies or all) whose every name matches a
    pattern of `only` (all when empty). A figure naming no known run is kept (an error)."""
    chosen = []
    for f in figures:
        names = names_in(f.expr, runs)
        if names and kind != "all" and any(runs[n][0] != KINDS[kind] for n in names):
            continue
        if names and only and not all(any(fnmatch.fnmatchcase(n, p) for p in only)
                                      for n in names):
            continue
        chosen.append(f)
    return chosen


def prepare(figures, runs, out, jobs, summaries=None):
    """Runs (or reads) what the figures need and evaluates them; returns the names used."""
    needed = set()
    for f in figures:
        names = names_in(f.expr, runs)
        if not names:
            f.error = f"names no run of {RUNS_FILE.relative_to(ROOT)}"
        needed |= names
    results = run_all(needed, runs, out, jobs, summaries)
    evaluate([f for f in figures if not f.error], results)
    return needed


def parse_summaries(items):
    summaries = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--summary {item}: NAME=PATH")
        summaries[name] = Path(path)
    return summaries


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["check", "update", "list"])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "doc-figures",
                    help="where the runs write (default build/doc-figures)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kind", choices=["all", "runs", "studies"], default="all",
                    help="only the figures of vtoe runs, or of studies (default all)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only figures whose every run or study matches (glob; repeatable)")
    ap.add_argument("--summary", action="append", default=[], metavar="NAME=PATH",
                    help="a study's summary.json (or output directory) instead of running it")
    ap.add_argument("docs", nargs="*", type=Path, help="documents (default README.md and docs/*.md)")
    args = ap.parse_intermixed_args(argv)  # documents before or after the options
    paths = [p.resolve() for p in args.docs] or documents()
    runs = load_runs()
    figures = select(find_figures(paths), runs, args.kind, args.only)
    if args.action == "list":
        for f in figures:
            print(f"{f.where()}: {f.quoted} = {f.expr} | {f.fmt}")
        return 0
    needed = prepare(figures, runs, args.out, args.jobs, parse_summaries(args.summary))
    if args.action == "update":
        print(f"{update(figures)} of {len(figures)} figures rewritten from {len(needed)} runs")
        return 0
    bad = check(figures)
    print(f"{len(figures) - bad} of {len(figures)} quoted figures match their runs ({len(needed)} runs)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
