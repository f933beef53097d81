"""vtoe from Python: run a scenario, run a sweep (locally or on a Dask cluster), read results and
time series, validate scenarios with the JSON Schema of their keys.

Installed into build/venv by ``make venv`` (``pip install -e '.[plot,dask]'``)::

    import vtoe

    run = vtoe.run("scenarios/quickstart.yaml", {"duration": "40ms"}, stats_interval="1ms")
    run.results["vms"][0]["tx_mbps"]        # results.json as a dict
    run.frame()                              # one row per VM, numeric columns
    ts = run.timeseries()                    # one row per interval, every column numeric
    df = vtoe.sweep({"name": "demo", "base": "scenarios/quickstart.yaml",
                     "grid": {"toe.bandwidth": ["1Gbps", "10Gbps"],
                              "vms.0.workload.message_size": [1000, 4000]}})
    df["toe.bandwidth_bps"]                  # unit text became numbers, the unit in the name

Running
-------
``run(scenario=None, overrides=None, *, seed=None, out=None, stats_interval=None, vtoe=None,
timeout=None, args=()) -> Run``
    Runs ``vtoe run`` once (``scenario`` None: the built-in default scenario; ``overrides``: a
    dict key -> value, as ``--set``) into ``out`` (default: a new temporary directory) and
    returns a :class:`Run`: ``out``, ``results`` (dict), ``info`` (run.json), ``frame()``,
    ``timeseries()``. Raises :class:`VtoeError` with vtoe's one-line message if it fails.
``sweep(spec, jobs=None, scheduler=None, out=None, vtoe=None, resume=True, numeric=True,
**kw) -> pandas.DataFrame``
    :func:`run_sweep` (below), with unit text turned into numbers (:func:`numeric`).
``load_results(path) -> dict``, ``load_timeseries(path) -> pandas.DataFrame``
    A run directory's results.json; its time series (timeseries.csv, converted once to
    timeseries.parquet beside it).
``numeric(df) -> pandas.DataFrame``
    Columns of unit text ("10Gbps", "2.5ms", "50%") become numbers named with their unit
    (``toe.bandwidth_bps``, ``duration_s``, ``..._ratio``, ``_hz``, ``_bytes``).
``schema(vtoe=None) -> dict``, ``validate_scenario(path, vtoe=None)``
    The scenario keys as JSON Schema (``vtoe schema``); a scenario file checked against it with
    the ``jsonschema`` package (raises ``jsonschema.ValidationError``).

Report pages
------------
``vtoe.report.make_report(dir, out=None) -> Path``
    One self-contained HTML page (figures embedded) of a run directory, a sweep directory or a
    directory with a report.md (``make paper``, the studies); ``vtoe report DIR`` and
    ``python -m vtoe.report DIR`` run it. ``vtoe.page.Page`` is the machinery (sections,
    tables, matplotlib figures as PNG data URIs). See docs/outputs.md.

Sweeps
------
``load_sweep(path) -> Sweep``
    Read and validate a sweep file (format in docs/sweeps.md). Raises ``SweepError`` (a
    ``ValueError``) whose message is one line naming the file and the field.
``sweep_from_dict(data, source="<dict>", sweep_dir=None, default_name=None) -> Sweep``
    The same for a dict (``name`` is then required; a relative ``base`` is looked up in the
    repository root, then in ``sweep_dir``).
``points_of(spec) -> list[Point]``
    The points, in order: the ``grid`` product (last key fastest), then ``points``; each holds
    the ``set`` overrides, each is repeated for every seed in ``seeds``; duplicates dropped.
    A ``Point`` has ``id`` (12 hex digits, stable: a hash of the sorted overrides and the seed),
    ``overrides`` (dict key -> value, in command-line order) and ``seed`` (``None``: the
    scenario's seed); it unpacks as ``(id, overrides, seed)``.
``run_sweep(spec, jobs=None, scheduler=None, out=None, vtoe=None, resume=True,
timeout=3600, quiet=False) -> pandas.DataFrame``
    ``spec``: a ``Sweep``, a path or a dict. Runs every point not already finished in
    ``out`` (default ``out/sweeps/<name>`` under the repository root) with ``jobs`` parallel
    vtoe processes (default: the number of cores), or on the Dask scheduler at ``scheduler``
    (``tcp://HOST:PORT``; each worker must have the repository and the vtoe binary at the same
    path). ``vtoe``: the binary (default: $VTOE_BIN, else
    build/$VTOE_PRESET/app/vtoe, release by default). ``timeout``: seconds per point. Writes
    ``out/points/<id>/{results.json,run.json,scenario.yaml,point.json}``, ``out/failures.json``,
    ``out/results.csv`` and ``out/results.parquet``, and returns the table. A failing point does
    not stop the others; it is listed in ``df.attrs["failures"]`` (dicts with ``point_id``,
    ``overrides``, ``seed``, ``returncode``, ``error``). ``df.attrs["executed"]`` and
    ``df.attrs["skipped"]`` list the ids run now and those resumed from an earlier run.
``gather(spec, out) -> pandas.DataFrame``
    The table from the point directories already in ``out``, without running anything.
``find_vtoe(vtoe=None) -> Path``
    The binary discovery used by ``run_sweep``.

Table columns, in this order: one per override key (named as the key), ``seed``, ``point_id``,
the flattened top-level result fields (``vtoe_version``, ``architecture``, ``sim_time_s``,
``measured_s``, ``toe.tx_mbps``, ``toe.rx_mbps``, ``toe.utilization``, ``links.0.drops``, ``peer.*``
...), ``vm`` (index of the VM), the VM's fields (``vm.name``, ``vm.workload``, ``vm.message_size``,
``vm.tx_mbps``, ``vm.rx_mbps``, ``vm.transactions``, ``vm.mean_latency_us``, ``vm.cpu.guest_user``,
``vm.cpu.guest_kernel``, ``vm.cpu.hypervisor``, ``vm.cpu.idle``, ``vm.interrupts``,
``vm.vm_exits.<cause>``, ...), and ``wall_s`` (from run.json, the only non-deterministic column).
``stats`` and ``channels`` stay in each point's results.json.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from .sweep import (DEFAULT_TIMEOUT, REPO_ROOT, Point, Sweep, SweepError, find_vtoe, gather,
                    load_sweep, point_id, points_of, result_rows, run_sweep, sweep_from_dict)
from .units import numeric

__version__ = "0.1.0"

__all__ = ["DEFAULT_TIMEOUT", "Point", "Run", "Sweep", "SweepError", "VtoeError", "find_vtoe",
           "gather", "load_results", "load_sweep", "load_timeseries", "numeric", "point_id",
           "points_of", "result_rows", "run", "run_sweep", "schema", "sweep", "sweep_from_dict",
           "validate_scenario"]


class VtoeError(RuntimeError):
    """vtoe refused a scenario or failed; the message is vtoe's own last line."""


class Run:
    """One finished ``vtoe run``: its directory and what it wrote."""

    def __init__(self, out):
        self.out = Path(out)
        self.results = load_results(self.out)
        info = self.out / "run.json"
        self.info = json.loads(info.read_text()) if info.is_file() else {}

    def frame(self):
        """results.json as a table, one row per VM (columns as in a sweep's table), numeric."""
        import pandas as pd

        return numeric(pd.DataFrame(result_rows(self.results)))

    def timeseries(self):
        """The run's time series (needs ``stats_interval``)."""
        return load_timeseries(self.out)

    def __repr__(self):
        return f"Run({str(self.out)!r})"


def _set_text(value) -> str:
    from .sweep import set_text
    return set_text(value)


def run(scenario=None, overrides=None, *, seed=None, out=None, stats_interval=None, vtoe=None,
        timeout=None, args=()) -> Run:
    binary = find_vtoe(vtoe)
    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="vtoe-run-"))
    cmd = [str(binary), "run"] + ([str(scenario)] if scenario is not None else [])
    for k, v in (overrides or {}).items():
        cmd += ["--set", f"{k}={_set_text(v)}"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if stats_interval is not None:
        cmd += ["--stats-interval", _set_text(stats_interval)]
    cmd += ["--out", str(out), "--quiet", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise VtoeError(lines[-1] if lines else f"vtoe exited {proc.returncode}")
    return Run(out)


def sweep(spec, jobs=None, scheduler=None, out=None, vtoe=None, resume=True, numeric=True, **kw):
    df = run_sweep(spec, jobs=jobs, scheduler=scheduler, out=out, vtoe=vtoe, resume=resume, **kw)
    if not numeric:
        return df
    from .units import numeric as to_numeric

    attrs = dict(df.attrs)
    df = to_numeric(df)
    df.attrs.update(attrs)
    return df


def load_results(path) -> dict:
    """results.json of a run directory (or the file itself)."""
    path = Path(path)
    return json.loads((path / "results.json" if path.is_dir() else path).read_text())


def load_timeseries(path):
    """The time series of a run directory (or of timeseries.csv / .parquet itself) as a
    DataFrame, one row per interval, ``time_s`` first. The CSV is what vtoe writes; the Parquet
    file is made from it the first time (pyarrow) and read from then on while it is newer."""
    import pandas as pd

    path = Path(path)
    if path.is_dir():
        path = path / "timeseries.csv"
    csv, pq = path.with_suffix(".csv"), path.with_suffix(".parquet")
    if pq.is_file() and (not csv.is_file() or pq.stat().st_mtime >= csv.stat().st_mtime):
        return pd.read_parquet(pq)
    if not csv.is_file():
        raise FileNotFoundError(f"{csv}: no time series (run with --stats-interval, or set "
                                "stats_interval in the scenario)")
    df = pd.read_csv(csv)
    try:
        df.to_parquet(pq, index=False)
    except (ImportError, OSError):
        pass  # no pyarrow, or a read-only directory: the CSV is the data
    return df


def schema(vtoe=None) -> dict:
    """The scenario keys as JSON Schema (draft 2020-12), from ``vtoe schema``."""
    proc = subprocess.run([str(find_vtoe(vtoe)), "schema"], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


def validate_scenario(path, vtoe=None, schema_doc=None) -> None:
    """Checks a scenario file against :func:`schema` with ``jsonschema``; raises
    ``jsonschema.ValidationError`` naming the first bad key. (``vtoe validate`` makes the
    further checks that need several keys or the built platform.)"""
    import jsonschema
    import yaml

    data = yaml.safe_load(Path(path).read_text()) or {}
    jsonschema.validate(data, schema_doc or schema(vtoe),
                        cls=jsonschema.Draft202012Validator)
