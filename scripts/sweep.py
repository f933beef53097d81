#!/usr/bin/env python3
"""Run a vtoe design-space sweep: python3 scripts/sweep.py SWEEP.yaml [options].

See docs/sweeps.md; the library is the vtoe package (python/vtoe/sweep.py)."""

import argparse
import dataclasses
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV_PYTHON = HERE.parent / "build" / "venv" / "bin" / "python"


def _use_venv():
    """Re-run under build/venv (made by `make venv`) when this interpreter lacks the packages."""
    try:
        import pandas, pyarrow, tqdm, vtoe, yaml  # noqa: F401
    except ImportError as e:
        if VENV_PYTHON.exists() and Path(sys.prefix).resolve() != VENV_PYTHON.parents[1].resolve():
            os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(Path(__file__).resolve()),
                                        *sys.argv[1:]])
        sys.exit(f"sweep: {e.name} is missing: run `make venv` and use build/venv/bin/python")


if __name__ == "__main__":
    _use_venv()

from vtoe import DEFAULT_TIMEOUT, SweepError, load_sweep, points_of, run_sweep  # noqa: E402
from vtoe.sweep import set_text  # noqa: E402

SUMMARY_COLUMNS = ("vm.name", "vm.tx_mbps", "vm.rx_mbps", "vm.cpu.idle", "vm.transactions")
SUMMARY_MAX_ROWS = 60


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="sweep.py", description="Run every point of a vtoe sweep file and gather the results "
        "into OUT/results.csv and OUT/results.parquet.")
    ap.add_argument("sweep", help="sweep file (YAML)")
    ap.add_argument("--jobs", "-j", type=int, default=None,
                    help="parallel vtoe processes on this machine (default: number of cores)")
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run the points on this Dask scheduler's workers instead")
    ap.add_argument("--out", metavar="DIR", help="output directory (default out/sweeps/<name>)")
    ap.add_argument("--vtoe", metavar="PATH", help="vtoe binary (default: $VTOE_BIN, "
                    "build/release/app/vtoe)")
    ap.add_argument("--no-resume", action="store_true",
                    help="rerun every point, even those already finished in DIR")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                    help=f"per point (default {DEFAULT_TIMEOUT:g})")
    ap.add_argument("--seeds", type=int, metavar="N",
                    help="run every point with seeds 1..N (instead of the file's seeds:), so "
                    "that the table and the page show each figure's spread over seeds")
    ap.add_argument("--list", action="store_true", help="print the points and exit")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary")
    ap.add_argument("--no-report", action="store_true",
                    help="do not write OUT/report.html (the page of the sweep's figures)")
    args = ap.parse_args(argv)

    try:
        spec = load_sweep(args.sweep)
        if args.seeds is not None:
            if args.seeds < 1:
                raise SweepError(f"--seeds {args.seeds}: give 1 or more")
            spec = dataclasses.replace(spec, seeds=list(range(1, args.seeds + 1)))
        if args.list:
            for pid, overrides, seed in points_of(spec):
                sets = " ".join(f"{k}={set_text(v)}" for k, v in overrides.items())
                print(pid, sets + ("" if seed is None else f" seed={seed}"))
            return 0
        df = run_sweep(spec, jobs=args.jobs, scheduler=args.scheduler, out=args.out,
                       vtoe=args.vtoe, resume=not args.no_resume, timeout=args.timeout,
                       quiet=args.quiet)
    except SweepError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sweep: interrupted; finished points are kept, run again to resume",
              file=sys.stderr)
        return 130
    except OSError as e:
        # e.g. the Dask scheduler cannot be reached
        print(f"sweep: {e}", file=sys.stderr)
        return 2

    out = Path(df.attrs["out"])
    failures = df.attrs["failures"]
    if args.quiet:  # run_sweep printed nothing: still report the failures
        for f in failures:
            sets = " ".join(f"{k}={set_text(v)}" for k, v in f["overrides"].items())
            seed = "" if f["seed"] is None else f" seed={f['seed']}"
            print(f"sweep: point {f['point_id']} failed ({sets}{seed}): {f['error']}",
                  file=sys.stderr)
    if not args.quiet:
        overrides = list(df.columns)[:list(df.columns).index("seed")]
        show = overrides + ["seed"] + [c for c in SUMMARY_COLUMNS if c in df.columns]
        if 0 < len(df) <= SUMMARY_MAX_ROWS:
            print(df[show].to_string(index=False))
        total = len(df.attrs["executed"]) + len(df.attrs["skipped"])
        print(f"{total} points: {len(df.attrs['executed']) - len(failures)} ran, "
              f"{len(df.attrs['skipped'])} already done, {len(failures)} failed")
        print(f"table: {out / 'results.csv'} ({len(df)} rows), {out / 'results.parquet'}")
        if failures:
            print(f"failures: {out / 'failures.json'}")
    if args.no_report or not len(df):
        (out / "report.html").unlink(missing_ok=True)  # a page of an earlier table is stale
    else:
        from vtoe.page import MissingDependency
        from vtoe.report import ReportError, make_report

        try:
            page = make_report(out)
        except (MissingDependency, ReportError) as e:
            (out / "report.html").unlink(missing_ok=True)
            print(f"sweep: the report page was not written: {e} (--no-report skips it)",
                  file=sys.stderr)
            return 1
        if not args.quiet:
            print(f"page: {page}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
