"""Paths the script tests share (a module of its own: conftest names collide across test folders)."""
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The sanitizer build (`make asan` sets VTOE_PRESET=asan; docs/fuzzing.md) runs the same tests on a
# binary many times slower (ASan, and SystemC processes as POSIX threads): subprocess timeouts grow
# by VTOE_TIMEOUT_FACTOR (4 there, else 1), and tests whose point is scale or duration run fewer
# iterations of the same code paths (scaled()); VTOE_FULL_SCALE=1 keeps the full counts under asan.
SANITIZED = os.environ.get("VTOE_PRESET") == "asan"
TIMEOUT_FACTOR = float(os.environ.get("VTOE_TIMEOUT_FACTOR") or (4 if SANITIZED else 1))
REDUCED = SANITIZED and os.environ.get("VTOE_FULL_SCALE") != "1"


def scaled(full, sanitized):
    """A count for a test whose point is scale or duration: `full` normally, `sanitized` under asan."""
    return sanitized if REDUCED else full


def run_once(tmp_path_factory, name, cmd, **kw):
    """Runs `cmd` + [its output directory] once per test session, also under pytest-xdist, whose
    workers would each set up a module-scoped fixture: the first worker runs it under a lock in
    the session's shared temporary directory, the others take its result. Returns (out, proc)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        out = tmp_path_factory.mktemp(name)
        return out, subprocess.run([*cmd, str(out)], capture_output=True, text=True, **kw)
    shared = tmp_path_factory.getbasetemp().parent  # one per session, shared by its workers
    out, record = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            out.mkdir(exist_ok=True)
            proc = subprocess.run([*cmd, str(out)], capture_output=True, text=True, **kw)
            record.write_text(json.dumps([proc.returncode, proc.stdout, proc.stderr]))
    code, stdout, stderr = json.loads(record.read_text())
    return out, subprocess.CompletedProcess(cmd, code, stdout, stderr)


# Under asan the out-of-sample fit (scripts/fit.py: a sequential bisection, dozens of runs one
# after another) is left out: its runs are the same simulations as the sweeps', and the normal
# build checks its section of the report (VTOE_FULL_SCALE=1 keeps it; docs/fuzzing.md).
NO_FIT = ["--no-fit"] if REDUCED else []


_PAPER = {}


def paper_reproduction(tmp_path_factory):
    """scripts/reproduce.py, once per test session (run_once): the full `make paper` in the normal
    build, whose report both test_reproduce.py and the README's summary check; `--quick` without
    the fit under asan. Returns (out, proc)."""
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        preset = env.get("VTOE_PRESET", "release")
        env["VTOE_BIN"] = str(ROOT / "build" / preset / "app" / "vtoe")
    quick = ["--quick", *NO_FIT] if REDUCED else []
    if "run" in _PAPER:  # one run per process; run_once shares it between pytest-xdist workers
        return _PAPER["run"]
    out, proc = run_once(tmp_path_factory, "paper-quick" if quick else "paper",
                         [sys.executable, str(ROOT / "scripts" / "reproduce.py"), *quick, "--out"],
                         env=env, timeout=1800 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _PAPER["run"] = (out, proc)
    return out, proc


def doc_figures_module():
    """scripts/doc_figures.py as a module."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import doc_figures
    return doc_figures


def check_quoted_figures(name, out):
    """The figures the docs quote from study run `name` (docs/figures.yaml, e.g. virttas_quick),
    evaluated against the summary.json in `out`: returns (figures, messages of those that differ).
    The docs must quote at least one."""
    import contextlib
    import io

    df = doc_figures_module()
    runs = df.load_runs()
    assert name in runs, f"docs/figures.yaml names no study {name}"
    figures = df.select(df.find_figures(df.documents()), runs, "studies", [name])
    assert figures, f"the docs quote no figure of {name}"
    df.prepare(figures, runs, Path(out), 1, {name: Path(out)})
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.check(figures)
    return figures, buf.getvalue().splitlines()


def check_report_opens_with_verdict_table(study):
    """A study's report opens with the verdict table its script printed, every verdict is pass,
    fail or not posed, and every one not posed says why."""
    import json

    sys.path.insert(0, str(ROOT / "scripts"))
    import study_common

    summary = json.loads((study / "summary.json").read_text())
    table = study_common.verdict_table(summary["rows"])
    report = (study / "report.md").read_text().splitlines()
    assert report[2:4] == ["## Verdicts", ""] and report[4:4 + len(table)] == table
    assert "\n".join(table) in (study / "stdout.txt").read_text()
    assert {r["verdict"] for r in summary["rows"]} <= {"pass", "fail", "not posed"}
    assert all(r.get("reason") for r in summary["rows"] if r["verdict"] == "not posed")


def check_docs_quote_quick_figures(name, study):
    """The docs quote study run `name`'s figures as its summary in `study` gives them."""
    figures, differ = check_quoted_figures(name, study)
    assert not differ, "\n".join(differ) + "\nupdate: python3 scripts/doc_figures.py update " \
        "--kind studies --summary " + name + "=" + str(study)
    return figures
