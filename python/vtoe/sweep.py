"""The sweep runner: points of a sweep file, run locally or on Dask, gathered into a table
(the public API is documented in ``vtoe/__init__.py``)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

# The repository the package is installed from (editable, as `make venv` does), or $VTOE_ROOT.
REPO_ROOT = Path(os.environ.get("VTOE_ROOT") or Path(__file__).resolve().parents[2])
DEFAULT_TIMEOUT = 3600.0
# vtoe run's exit status when a VM's workload moved nothing in the measured window (results kept).
EXIT_NO_PROGRESS = 5
FIELDS = ("base", "name", "set", "grid", "points", "seeds")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_KEY_RE = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
# Result fields that are not columns of the table: per-module counters and per-channel lists are
# too wide; they stay in OUT/points/<id>/results.json. `seed` is its own column.
_SKIPPED_RESULT_FIELDS = ("stats", "channels", "seed")


class SweepError(ValueError):
    """A bad sweep file or argument. The message is one line naming the file and the field."""


@dataclass
class Sweep:
    """A parsed and validated sweep (see :func:`load_sweep`)."""

    name: str
    base: Path                       # absolute path of the base scenario
    set: dict = field(default_factory=dict)      # key -> value, applied to every point
    grid: dict = field(default_factory=dict)     # key -> list of values (cartesian product)
    points: list = field(default_factory=list)   # list of {key: value}
    seeds: list | None = None                    # None: the scenario's own seed
    source: str = "<dict>"                       # file the sweep came from (for messages)


@dataclass(frozen=True)
class Point:
    """One run of the sweep: ``id`` (12 hex digits), ``overrides`` (ordered dict), ``seed``."""

    id: str
    overrides: dict
    seed: int | None

    def __iter__(self):  # allows `for pid, overrides, seed in points_of(spec)`
        return iter((self.id, self.overrides, self.seed))


# ----------------------------------------------------------------------------------------------
# Loading and validation

def _fail(source, fld, msg):
    where = f"field '{fld}': " if fld else ""
    raise SweepError(f"{source}: {where}{msg}")


def _check_value(source, fld, value):
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        if isinstance(value, str) and (value == "" or "\n" in value):
            _fail(source, fld, f"expected a non-empty one-line value, got {value!r}")
        return value
    kind = "nothing" if value is None else type(value).__name__
    _fail(source, fld, f"expected a scalar value (number, string or bool), got {kind}")


def _check_key(source, fld, key):
    if not isinstance(key, str) or not _KEY_RE.match(key):
        _fail(source, fld, f"bad key {key!r} (expected a dotted key such as toe.bandwidth)")
    if key == "seed":
        _fail(source, fld, "'seed' cannot be overridden here; use the top-level 'seeds' list")
    return key


def _overrides_mapping(source, fld, value):
    if not isinstance(value, dict):
        _fail(source, fld, f"expected a mapping of key: value, got {type(value).__name__}")
    return {_check_key(source, fld, k): _check_value(source, f"{fld}.{k}", v)
            for k, v in value.items()}


def set_text(value) -> str:
    """The text of ``value`` as given to ``vtoe run --set key=TEXT``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _resolve_base(source, base, sweep_dir):
    if not isinstance(base, str) or not base:
        _fail(source, "base", "expected the path of a scenario file")
    path = Path(base)
    candidates = [path] if path.is_absolute() else [REPO_ROOT / path]
    if not path.is_absolute() and sweep_dir is not None:
        candidates.append(sweep_dir / path)
    for c in candidates:
        if c.is_file():
            return c.resolve()
    looked = " or ".join(str(c) for c in candidates)
    _fail(source, "base", f"scenario file not found: {base} (looked for {looked})")


def sweep_from_dict(data: dict, source: str = "<dict>", sweep_dir: Path | None = None,
                    default_name: str | None = None) -> Sweep:
    """Validate a sweep given as a dict (the content of a sweep file)."""
    if not isinstance(data, dict):
        _fail(source, None, "expected a mapping with fields " + ", ".join(FIELDS))
    unknown = [k for k in data if k not in FIELDS]
    if unknown:
        import difflib

        near = difflib.get_close_matches(str(unknown[0]), FIELDS, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        _fail(source, str(unknown[0]),
              "unknown field (accepted: " + ", ".join(FIELDS) + ")" + hint)
    if "base" not in data:
        _fail(source, "base", "missing (the scenario file every point starts from)")
    base = _resolve_base(source, data["base"], sweep_dir)

    name = data.get("name", default_name)
    if name is None:
        _fail(source, "name", "missing (required when the sweep is not read from a file)")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        _fail(source, "name", f"expected letters, digits, '.', '_' or '-', got {name!r}")

    sets = data.get("set", {}) or {}
    if isinstance(sets, list):
        parsed = {}
        for i, item in enumerate(sets):
            if not isinstance(item, str) or "=" not in item:
                _fail(source, f"set.{i}", f"expected 'key=value', got {item!r}")
            k, v = item.split("=", 1)
            parsed[_check_key(source, f"set.{i}", k.strip())] = _check_value(
                source, f"set.{i}", v.strip())
        sets = parsed
    else:
        sets = _overrides_mapping(source, "set", sets)

    grid = {}
    if "grid" in data:
        g = data["grid"]
        if not isinstance(g, dict):
            _fail(source, "grid", f"expected a mapping of key: [values], got {type(g).__name__}")
        if not g:
            _fail(source, "grid", "is empty (give at least one key with a list of values)")
        for k, values in g.items():
            _check_key(source, "grid", k)
            if not isinstance(values, list):
                _fail(source, f"grid.{k}", f"expected a list of values, got {values!r}")
            if not values:
                _fail(source, f"grid.{k}", "is an empty list")
            grid[k] = [_check_value(source, f"grid.{k}", v) for v in values]

    points = []
    if "points" in data:
        p = data["points"]
        if not isinstance(p, list) or not p:
            _fail(source, "points", "expected a non-empty list of mappings of key: value")
        points = [_overrides_mapping(source, f"points.{i}", item) for i, item in enumerate(p)]

    if not grid and not points:
        _fail(source, "grid", "missing: give 'grid' or 'points' (or both)")

    seeds = None
    if "seeds" in data:
        s = data["seeds"]
        if not isinstance(s, list) or not s:
            _fail(source, "seeds", f"expected a non-empty list of integers, got {s!r}")
        for v in s:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 64:
                _fail(source, "seeds", f"expected integers in 0..2^64-1, got {v!r}")
        if len(set(s)) != len(s):
            _fail(source, "seeds", "has duplicates")
        seeds = list(s)

    return Sweep(name=name, base=base, set=sets, grid=grid, points=points, seeds=seeds,
                 source=source)


def load_sweep(path) -> Sweep:
    """Read and validate a sweep file; raises :class:`SweepError` with a one-line message."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise SweepError(f"{path}: cannot read sweep file: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SweepError(f"{path}{line}: invalid YAML: {problem}") from None
    return sweep_from_dict(data, source=str(path), sweep_dir=path.resolve().parent,
                           default_name=path.stem)


def _as_sweep(spec) -> Sweep:
    if isinstance(spec, Sweep):
        return spec
    if isinstance(spec, (str, os.PathLike)):
        return load_sweep(spec)
    if isinstance(spec, dict):
        return sweep_from_dict(spec)
    raise TypeError(f"spec must be a Sweep, a path or a dict, not {type(spec).__name__}")


# ----------------------------------------------------------------------------------------------
# Points

def point_id(overrides: dict, seed: int | None) -> str:
    """Stable id of a point: 12 hex digits of a SHA-256 of its sorted overrides and seed."""
    canon = json.dumps({"overrides": sorted((k, set_text(v)) for k, v in overrides.items()),
                        "seed": seed}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


def points_of(spec) -> list[Point]:
    """The points of a sweep, in order: grid product (last key varies fastest), then the explicit
    points; each with the common ``set`` overrides under it, times each seed. Duplicates are
    dropped. Each item unpacks as ``(id, overrides, seed)``."""
    spec = _as_sweep(spec)
    combos = []
    if spec.grid:
        keys = list(spec.grid)
        for values in itertools.product(*(spec.grid[k] for k in keys)):
            combos.append(dict(zip(keys, values)))
    combos.extend(spec.points)
    out, seen = [], set()
    for combo in combos:
        overrides = dict(spec.set)
        overrides.update(combo)
        for seed in (spec.seeds or [None]):
            pid = point_id(overrides, seed)
            if pid not in seen:
                seen.add(pid)
                out.append(Point(pid, overrides, seed))
    return out


# ----------------------------------------------------------------------------------------------
# Running one point (also on Dask workers: keep this self-contained, standard library only)

def find_vtoe(vtoe=None) -> Path:
    """The vtoe binary: ``vtoe`` if given, else $VTOE_BIN, else build/$VTOE_PRESET/app/vtoe
    (release by default; relative to the repository root)."""
    if vtoe:
        p = Path(vtoe)
        if not p.is_file():
            raise SweepError(f"--vtoe {vtoe}: no such file")
        return p.resolve()
    env = os.environ.get("VTOE_BIN")
    if env:
        p = Path(env)
        if not p.is_file():
            raise SweepError(f"$VTOE_BIN={env}: no such file")
        return p.resolve()
    p = REPO_ROOT / "build" / os.environ.get("VTOE_PRESET", "release") / "app" / "vtoe"
    if p.is_file():
        return p
    raise SweepError("vtoe binary not found: build it with `make build`, or pass --vtoe PATH "
                     "or set $VTOE_BIN")


def vtoe_command(vtoe, base, overrides: dict, seed, out) -> list[str]:
    """The command line that runs one point."""
    cmd = [str(vtoe), "run", str(base)]
    for k, v in overrides.items():
        cmd += ["--set", f"{k}={set_text(v)}"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    return cmd + ["--out", str(out), "--quiet"]


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def run_point(task: dict) -> dict:
    """Run one point in a private temporary directory and return what it wrote.

    ``task``: {id, vtoe, base, overrides, seed, timeout, cwd}. Returns {id, ok, returncode,
    error, stderr, elapsed_s, host, files: {name: text}} where ``files`` holds results.json,
    run.json and scenario.yaml on success. Nothing is written on the caller's side, so the same
    function serves local threads and remote Dask workers."""
    import socket

    start = time.monotonic()
    res = {"id": task["id"], "ok": False, "returncode": None, "error": "", "stderr": "",
           "files": {}, "host": socket.gethostname()}
    tmp = tempfile.mkdtemp(prefix=f"vtoe-sweep-{task['id']}-")
    try:
        cmd = vtoe_command(task["vtoe"], task["base"], task["overrides"], task["seed"], tmp)
        cwd = task.get("cwd") if os.path.isdir(task.get("cwd") or "") else None
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=task["timeout"],
                                  cwd=cwd)
        except subprocess.TimeoutExpired as e:
            err = e.stderr or ""
            if isinstance(err, bytes):
                err = err.decode(errors="replace")
            res.update(error=f"timeout after {task['timeout']:g} s", stderr=err)
            return res
        except OSError as e:
            res.update(error=f"cannot run {cmd[0]}: {e.strerror}")
            return res
        res["returncode"] = proc.returncode
        res["stderr"] = proc.stderr
        # A point whose workload moved nothing is data, not a failure: its results.json says
        # so (vm.no_progress) and run.json has the warning.
        if proc.returncode not in (0, EXIT_NO_PROGRESS):
            why = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                   else f"exit status {proc.returncode}")
            res["error"] = _last_line(proc.stderr) or why
            return res
        for name in ("results.json", "run.json", "scenario.yaml", "timeseries.csv"):
            p = Path(tmp) / name
            if p.is_file():
                res["files"][name] = p.read_text()
        if "results.json" not in res["files"]:
            res["error"] = f"vtoe exited {proc.returncode} but wrote no results.json"
            return res
        res["ok"] = True
        return res
    finally:
        res["elapsed_s"] = time.monotonic() - start
        shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# Point directories, resume

def _base_digest(base: Path) -> str:
    return hashlib.sha256(base.read_bytes()).hexdigest()


def build_id(vtoe: Path, timeout: float = 10) -> str:
    """The identity of the binary that runs the points: what `vtoe --version` reports on its
    "build:" line (git describe and the binary's hash, also in each run.json), or for a binary
    that does not say, the SHA-256 of the file. A point run by another build is run again."""
    try:
        out = subprocess.run([str(vtoe), "--version"], capture_output=True, text=True,
                             timeout=timeout).stdout
        m = re.search(r"^build: (.+)$", out, re.M)
        if m:
            return m.group(1).strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "sha256:" + hashlib.sha256(Path(vtoe).read_bytes()).hexdigest()


def validate_points(spec, vtoe: Path, points, timeout: float = 60, jobs: int | None = None) -> None:
    """Before anything runs: every distinct point, whole (the sweep's common overrides and the
    point's own), checked by `vtoe validate BASE --set key=value ...`, which makes the checks
    `vtoe run` makes when it builds the platform. A point vtoe refuses raises SweepError naming the
    sweep file, the point's overrides and vtoe's reason, so a typo in the last grid value does not
    surface hours into the sweep. Values are not checked alone: a value that is valid only with
    another one of the same point (``architecture: de`` with ``vms.1.name: b``) passes."""
    from concurrent.futures import ThreadPoolExecutor

    common = dict(spec.set)
    distinct = []
    for p in points:
        own = [(k, set_text(v)) for k, v in p.overrides.items()
               if not (k in common and common[k] == v)]
        if own not in distinct:
            distinct.append(own)
    base_cmd = [str(vtoe), "validate", str(spec.base)]
    for k, v in common.items():
        base_cmd += ["--set", f"{k}={set_text(v)}"]

    def check(own):
        cmd = list(base_cmd)
        for k, v in own:
            cmd += ["--set", f"{k}={v}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode == 0:
            return None
        reason = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return reason.removeprefix("vtoe: ")

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        reasons = list(pool.map(check, distinct))
    for own, reason in zip(distinct, reasons):  # the first refused point, in sweep order
        if reason is not None:
            where = " ".join(f"{k}={v}" for k, v in own) or "set"
            raise SweepError(f"{spec.source}: {where}: {reason}")


def _point_record(point: Point, base: Path, digest: str, build: str) -> dict:
    return {"id": point.id, "overrides": point.overrides, "seed": point.seed,
            "base": str(base), "base_sha256": digest, "build": build}


def _is_done(pdir: Path, record: dict) -> bool:
    if not (pdir / "results.json").is_file():
        return False
    try:
        stored = json.loads((pdir / "point.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(stored, dict):
        return False
    return {k: stored.get(k) for k in record} == json.loads(json.dumps(record))


def _write_point_dir(points_dir: Path, pid: str, files: dict):
    """Write files into points_dir/.tmp-<id>-* and rename it to points_dir/<id>: a directory
    named <id> with a results.json in it is always complete."""
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{pid}-", dir=points_dir))
    for name, text in files.items():
        (tmp / name).write_text(text)
    final = points_dir / pid
    if final.exists():
        shutil.rmtree(final)
    os.rename(tmp, final)


# ----------------------------------------------------------------------------------------------
# Gathering

# Lists that stay out of the table: a latency distribution's CDF steps (python/vtoe/latency.py
# reads them from results.json).
_UNFLATTENED = {"cdf"}


def _flatten(prefix: str, value, out: dict):
    if isinstance(value, dict):
        for k, v in value.items():
            if k in _UNFLATTENED:
                continue
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(f"{prefix}.{i}", v, out)
    else:
        out[prefix] = value


def result_rows(results: dict) -> list[dict]:
    """Flatten one results.json into rows, one per VM (long format).

    Top-level scalars and nested mappings become dotted columns (``toe.tx_mbps``), ``links`` is
    flattened by index (``links.0.drops``), each ``vms[i]`` gives a row with ``vm`` = i and its
    fields as ``vm.<field>`` (``vm.cpu.idle``, ``vm.vm_exits.data_abort``). ``stats``,
    ``channels`` and ``seed`` are not flattened (``seed`` is a column of its own)."""
    common = {}
    for k, v in results.items():
        if k in _SKIPPED_RESULT_FIELDS or k == "vms":
            continue
        _flatten(k, v, common)
    vms = results.get("vms") or []
    if not vms:
        return [dict(common)]
    rows = []
    for i, vm in enumerate(vms):
        row = dict(common)
        row["vm"] = i
        _flatten("vm", vm, row)
        rows.append(row)
    return rows


def _ordered_union(lists: Iterable[Iterable[str]]) -> list[str]:
    seen, out = set(), []
    for cols in lists:
        for c in cols:
            if c not in seen:
                seen.add(c)
                out.append(c)
    return out


def gather(spec, out, points: list[Point] | None = None):
    """Build the table from the finished point directories under ``out`` (points without a
    results.json are left out). Returns a pandas DataFrame; does not write files."""
    import pandas as pd

    spec = _as_sweep(spec)
    points = points_of(spec) if points is None else points
    out = Path(out)
    override_cols = _ordered_union(p.overrides for p in points)
    rows, result_cols, vm_cols = [], [], []
    for p in points:
        pdir = out / "points" / p.id
        try:
            results = json.loads((pdir / "results.json").read_text())
        except (OSError, ValueError):
            continue
        try:
            wall = json.loads((pdir / "run.json").read_text()).get("wall_s")
        except (OSError, ValueError):
            wall = None
        head = dict(p.overrides)
        head["seed"] = results.get("seed", p.seed)
        head["point_id"] = p.id
        for r in result_rows(results):
            for c in r:
                if c in head:
                    continue  # e.g. `architecture` when it is an override: same value
                (vm_cols if c == "vm" or c.startswith("vm.") else result_cols).append(c)
            row = {**r, **head, "wall_s": wall}
            rows.append(row)
    result_cols = [c for c in _ordered_union([result_cols]) if c not in override_cols]
    vm_cols = _ordered_union([vm_cols])
    columns = override_cols + ["seed", "point_id"] + result_cols + vm_cols + ["wall_s"]
    df = pd.DataFrame(rows, columns=columns)
    for c in override_cols:
        # An integer override missing from some points: keep integers (nullable), not floats.
        values = [v for v in (p.overrides.get(c) for p in points) if v is not None]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            df[c] = df[c].astype("Int64")
    return df


def _parquet_safe(df):
    """Columns holding mixed Python types (e.g. 2 and "2Gbps") become strings for Parquet."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            types = {type(v) for v in df[c] if v is not None and v == v}
            if len(types) > 1:
                df[c] = df[c].map(lambda v: v if v is None or v != v else set_text(v))
    return df


def write_table(df, out):
    """Write OUT/results.csv and OUT/results.parquet atomically."""
    out = Path(out)
    tmp_csv = out / ".results.csv.tmp"
    df.to_csv(tmp_csv, index=False)
    os.replace(tmp_csv, out / "results.csv")
    tmp_pq = out / ".results.parquet.tmp"
    _parquet_safe(df).to_parquet(tmp_pq, index=False)
    os.replace(tmp_pq, out / "results.parquet")


# ----------------------------------------------------------------------------------------------
# The sweep

def _progress(total, desc, quiet):
    from tqdm import tqdm

    # On a terminal only (disable=None), unless quiet.
    return tqdm(total=total, desc=desc, unit="pt", file=sys.stderr,
                disable=True if quiet else None, dynamic_ncols=True)


def _say(bar, msg, quiet):
    if quiet:
        return
    from tqdm import tqdm

    tqdm.write(msg, file=sys.stderr)


def _run_local(tasks, jobs, on_done):
    from concurrent.futures import ThreadPoolExecutor, as_completed

    # Each worker thread waits on one vtoe subprocess: `jobs` simulations run in parallel.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_point, t) for t in tasks]
        try:
            for f in as_completed(futures):
                on_done(f.result())
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _run_dask(tasks, scheduler, on_done):
    import cloudpickle
    from distributed import Client, as_completed

    # The scheduler and the workers need not have the vtoe package installed, so ship
    # run_point's code with the tasks: a by-value copy of it is not the module's own function
    # object, so Dask's pickling falls back to cloudpickle, which sends it (and the helpers it
    # calls, copied along) by value.
    module = sys.modules[__name__]
    registered = module.__name__ in cloudpickle.list_registry_pickle_by_value()
    cloudpickle.register_pickle_by_value(module)
    try:
        remote_run_point = cloudpickle.loads(cloudpickle.dumps(run_point))
    finally:
        if not registered:
            cloudpickle.unregister_pickle_by_value(module)
    try:
        client = Client(scheduler, timeout="30s")
    except OSError as e:
        raise SweepError(f"--scheduler {scheduler}: cannot connect: {e}") from None
    with client:
        futures = client.map(remote_run_point, tasks,
                             key=[f"vtoe-point-{t['id']}" for t in tasks], pure=False)
        try:
            for f in as_completed(futures):
                on_done(f.result())
        except BaseException:
            client.cancel(futures)
            raise


def run_sweep(spec, jobs=None, scheduler=None, out=None, vtoe=None, resume=True,
              timeout=DEFAULT_TIMEOUT, quiet=False):
    """Run every point of ``spec`` that is not already finished and return the table.

    See the package docstring (python/vtoe/__init__.py) for the arguments and the files
    written."""
    spec = _as_sweep(spec)
    points = points_of(spec)
    out = Path(out) if out is not None else REPO_ROOT / "out" / "sweeps" / spec.name
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"--jobs {jobs}: expected a positive integer")
    if timeout is not None and timeout <= 0:
        raise SweepError(f"--timeout {timeout}: expected a positive number of seconds")
    if scheduler is not None and not re.match(r"^(tcp|tls|inproc|ws|wss|ucx)://", str(scheduler)):
        raise SweepError(f"--scheduler {scheduler}: expected an address such as tcp://HOST:PORT")
    binary = find_vtoe(vtoe)
    points_dir = out / "points"
    points_dir.mkdir(parents=True, exist_ok=True)
    for stale in points_dir.glob(".tmp-*"):      # left by an interrupted sweep
        shutil.rmtree(stale, ignore_errors=True)

    digest = _base_digest(spec.base)
    build = build_id(binary, min(timeout or 10, 10))
    if not build.startswith("sha256:"):  # a vtoe that says which build it is can check values
        validate_points(spec, binary, points, jobs=jobs)
    records = {p.id: _point_record(p, spec.base, digest, build) for p in points}
    todo, skipped = [], []
    for p in points:
        if resume and _is_done(points_dir / p.id, records[p.id]):
            skipped.append(p.id)
        else:
            todo.append(p)

    by_id = {p.id: p for p in points}
    tasks = [{"id": p.id, "vtoe": str(binary), "base": str(spec.base), "overrides": p.overrides,
              "seed": p.seed, "timeout": timeout, "cwd": str(REPO_ROOT)} for p in todo]
    executed, failures = [], []
    bar = _progress(len(tasks), spec.name, quiet)

    def on_done(res):
        pid = res["id"]
        record = dict(records[pid], host=res.get("host"), elapsed_s=round(res["elapsed_s"], 3))
        point_json = json.dumps(record, indent=2) + "\n"
        executed.append(pid)
        if res["ok"]:
            _write_point_dir(points_dir, pid, {**res["files"], "point.json": point_json})
        else:
            p = by_id[pid]
            failures.append({"point_id": pid, "overrides": p.overrides, "seed": p.seed,
                             "returncode": res["returncode"], "error": res["error"],
                             "host": res.get("host")})
            # A directory without results.json: kept for inspection, rerun next time.
            _write_point_dir(points_dir, pid, {"point.json": point_json,
                                               "stderr.txt": res.get("stderr") or ""})
            sets = " ".join(f"{k}={set_text(v)}" for k, v in p.overrides.items())
            seed = f" seed={p.seed}" if p.seed is not None else ""
            _say(bar, f"sweep: point {pid} failed ({sets}{seed}): {res['error']}", quiet)
        bar.update(1)

    try:
        if not tasks:
            pass
        elif scheduler:
            _run_dask(tasks, scheduler, on_done)
        else:
            _run_local(tasks, jobs or os.cpu_count() or 1, on_done)
    finally:
        bar.close()
        order = {p.id: i for i, p in enumerate(points)}
        failures.sort(key=lambda f: order[f["point_id"]])
        tmp = out / ".failures.json.tmp"
        tmp.write_text(json.dumps(failures, indent=2) + "\n")
        os.replace(tmp, out / "failures.json")

    df = gather(spec, out, points)
    write_table(df, out)
    df.attrs.update(executed=sorted(executed, key=lambda i: order[i]), skipped=skipped,
                    failures=failures, out=str(out))
    return df
