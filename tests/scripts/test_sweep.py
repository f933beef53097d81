"""Tests of the sweep runner (scripts/sweep.py, the vtoe package's vtoe.sweep): points, validation, local and
Dask runs, resume, failures. Short runs (20 ms simulated) keep the whole file at a few seconds."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("yaml")
pytest.importorskip("tqdm")

from scripts_paths import ROOT, TIMEOUT_FACTOR  # noqa: E402
from vtoe import (Point, SweepError, load_sweep, point_id, points_of,  # noqa: E402
                  run_sweep, sweep_from_dict)

SWEEP_PY = ROOT / "scripts" / "sweep.py"
SHORT = "set: [duration=20ms, warmup=5ms]\n"

# 6 points, 4 VMs each: 24 rows.
SIX_POINTS = """\
base: scenarios/virt/qos_4vm.yaml
name: six
set: [duration=20ms, warmup=5ms]
grid:
  architecture: [de, da]
  vms.0.workload.message_size: [1000, 4000, 16000]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def sweep_cli(*args, vtoe, check=None, timeout=300):
    # The sweep's page (report.html) has its own tests (test_report.py).
    proc = subprocess.run([sys.executable, str(SWEEP_PY), *map(str, args), "--vtoe", str(vtoe),
                           "--quiet", "--no-report"], capture_output=True, text=True, timeout=timeout * TIMEOUT_FACTOR,
                          cwd=ROOT)
    if check is not None:
        assert proc.returncode == check, proc.stderr
    return proc


def read_csv(path: Path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def lookup(tree, dotted: str):
    for part in dotted.split("."):
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree


def leaves(tree, prefix=""):
    """Dotted paths of every scalar under tree (a latency distribution's ``cdf`` steps stay out
    of the table, as vtoe.sweep leaves them)."""
    if isinstance(tree, dict):
        items = [(k, v) for k, v in tree.items() if k != "cdf"]
    elif isinstance(tree, list):
        items = enumerate(tree)
    else:
        return [prefix]
    return [p for k, v in items for p in leaves(v, f"{prefix}.{k}" if prefix else str(k))]


def same(text: str, value) -> bool:
    if isinstance(value, bool):
        return text == str(value)
    if isinstance(value, (int, float)):
        return float(text) == float(value)
    return text == value


def table_without_wall(path: Path):
    cols, rows = read_csv(path)
    for r in rows:
        r.pop("wall_s")
    return cols, rows


# ------------------------------------------------------------------------------------------------
# Points and validation

def spec(**fields):
    data = {"base": "scenarios/native/tx_10g.yaml", "name": "t"}
    data.update(fields)
    return sweep_from_dict(data)


def test_points_are_grid_product_then_points_times_seeds():
    s = spec(set=["duration=20ms", "warmup=5ms"],
             grid={"architecture": ["native", "da"],
                   "vms.0.workload.message_size": [1000, 2000, 4000]},
             points=[{"architecture": "da", "toe.channels": 2}, {"warmup": "10ms"}],
             seeds=[1, 2])
    pts = points_of(s)
    assert len(pts) == (2 * 3 + 2) * 2
    assert all(isinstance(p, Point) for p in pts)
    # Order: grid product with the last key fastest, then points; seeds innermost.
    first = [(p.overrides["architecture"], p.overrides["vms.0.workload.message_size"], p.seed)
             for p in pts[:12]]
    assert first[:4] == [("native", 1000, 1), ("native", 1000, 2), ("native", 2000, 1),
                         ("native", 2000, 2)]
    assert first[6] == ("da", 1000, 1)
    # Every point carries the common overrides, a point may override them, in command-line order.
    assert list(pts[0].overrides) == ["duration", "warmup", "architecture",
                                      "vms.0.workload.message_size"]
    assert pts[12].overrides == {"duration": "20ms", "warmup": "5ms", "architecture": "da",
                                 "toe.channels": 2}
    assert pts[14].overrides == {"duration": "20ms", "warmup": "10ms"}
    pid, overrides, seed = pts[12]
    assert (pid, overrides, seed) == (pts[12].id, pts[12].overrides, 1)
    # Ids: 12 hex digits, all different.
    assert len({p.id for p in pts}) == len(pts)
    assert all(len(p.id) == 12 and int(p.id, 16) >= 0 for p in pts)


def test_ids_are_stable():
    overrides = {"duration": "20ms", "vms.0.workload.message_size": 1000}
    # Fixed value: an id must not change between versions, or resume breaks.
    assert point_id(overrides, 1) == point_id(dict(reversed(overrides.items())), 1)
    assert point_id(overrides, 1) == point_id({"duration": "20ms",
                                               "vms.0.workload.message_size": "1000"}, 1)
    assert point_id(overrides, 1) != point_id(overrides, 2)
    assert point_id(overrides, None) != point_id(overrides, 1)
    assert point_id(overrides, 1) != point_id({**overrides, "warmup": "5ms"}, 1)
    assert point_id({"a.b": 1}, None) == "bb5686a18d07"
    # Same points from the same file, in another process too.
    a = [tuple(p) for p in points_of(spec(grid={"toe.channels": [1, 2]}, seeds=[3]))]
    code = ("from vtoe import *; "
            "print([p.id for p in points_of(sweep_from_dict({'name': 't', "
            "'base': 'scenarios/native/tx_10g.yaml', 'grid': {'toe.channels': [1, 2]}, "
            "'seeds': [3]}))])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "123"}).stdout
    assert out.strip() == str([p[0] for p in a])


def test_duplicate_points_are_dropped():
    s = spec(grid={"toe.channels": [1, 2]}, points=[{"toe.channels": 2}, {"toe.channels": "2"}])
    assert [p.overrides for p in points_of(s)] == [{"toe.channels": 1}, {"toe.channels": 2}]


def test_set_as_mapping_and_default_name(tmp_path):
    f = write(tmp_path / "my-sweep.yaml",
              "base: scenarios/quickstart.yaml\nset: {duration: 20ms}\ngrid: {toe.channels: [1]}\n")
    s = load_sweep(f)
    assert s.name == "my-sweep"
    assert s.base == ROOT / "scenarios" / "quickstart.yaml"
    assert points_of(s)[0].overrides == {"duration": "20ms", "toe.channels": 1}


def test_base_relative_to_the_sweep_file(tmp_path):
    shutil.copy(ROOT / "scenarios" / "quickstart.yaml", tmp_path / "mine.yaml")
    f = write(tmp_path / "s.yaml", "base: mine.yaml\ngrid: {toe.channels: [1]}\n")
    assert load_sweep(f).base == tmp_path / "mine.yaml"


@pytest.mark.parametrize("text, field, words", [
    ("base: scenarios/quickstart.yaml\ngird: {a: [1]}\n", "gird", "did you mean 'grid'"),
    ("grid: {a: [1]}\n", "base", "missing"),
    ("base: nothere.yaml\ngrid: {a: [1]}\n", "base", "not found"),
    ("base: scenarios/quickstart.yaml\ngrid: {}\n", "grid", "empty"),
    ("base: scenarios/quickstart.yaml\n", "grid", "give 'grid' or 'points'"),
    ("base: scenarios/quickstart.yaml\ngrid: {toe.bandwidth: 10Gbps}\n", "grid.toe.bandwidth",
     "expected a list"),
    ("base: scenarios/quickstart.yaml\ngrid: {toe.bandwidth: []}\n", "grid.toe.bandwidth",
     "empty list"),
    ("base: scenarios/quickstart.yaml\ngrid: [a, b]\n", "grid", "expected a mapping"),
    ("base: scenarios/quickstart.yaml\ngrid: {a: [[1]]}\n", "grid.a", "scalar"),
    ("base: scenarios/quickstart.yaml\npoints: [{a: {b: 1}}]\n", "points.0.a", "scalar"),
    ("base: scenarios/quickstart.yaml\npoints: []\n", "points", "non-empty list"),
    ("base: scenarios/quickstart.yaml\nset: [duration]\ngrid: {a: [1]}\n", "set.0", "key=value"),
    ("base: scenarios/quickstart.yaml\ngrid: {a: [1]}\nseeds: 3\n", "seeds", "list of integers"),
    ("base: scenarios/quickstart.yaml\ngrid: {a: [1]}\nseeds: [1, 1]\n", "seeds", "duplicates"),
    ("base: scenarios/quickstart.yaml\ngrid: {seed: [1, 2]}\n", "grid", "'seeds'"),
    ("base: scenarios/quickstart.yaml\nname: a/b\ngrid: {a: [1]}\n", "name", "letters"),
    ("base: scenarios/quickstart.yaml\ngrid: {'a b': [1]}\n", "grid", "bad key"),
])
def test_validation_errors_name_the_file_and_field(tmp_path, text, field, words):
    f = write(tmp_path / "bad.yaml", text)
    with pytest.raises(SweepError) as e:
        load_sweep(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: field '{field}': "), msg
    assert words in msg
    assert "\n" not in msg


def test_cli_reports_bad_sweep_in_one_line(tmp_path, vtoe_bin):
    f = write(tmp_path / "bad.yaml", "base: scenarios/quickstart.yaml\ngrid: {}\n")
    proc = sweep_cli(f, vtoe=vtoe_bin, check=2)
    assert proc.stderr == f"sweep: {f}: field 'grid': is empty (give at least one key with a " \
                          "list of values)\n"
    assert not (ROOT / "out" / "sweeps" / "bad").exists()


def test_cli_lists_points(tmp_path, vtoe_bin):
    f = write(tmp_path / "s.yaml", SIX_POINTS)
    proc = sweep_cli(f, "--list", vtoe=vtoe_bin, check=0)
    lines = proc.stdout.splitlines()
    assert len(lines) == 6
    assert lines[0] == (f"{points_of(load_sweep(f))[0].id} duration=20ms warmup=5ms "
                        "architecture=de vms.0.workload.message_size=1000")


def test_cli_seeds_runs_every_point_with_seeds_one_to_n(tmp_path, vtoe_bin):
    f = write(tmp_path / "s.yaml", SIX_POINTS)
    lines = sweep_cli(f, "--list", "--seeds", "3", vtoe=vtoe_bin, check=0).stdout.splitlines()
    assert len(lines) == 18
    assert [ln.rsplit(" ", 1)[1] for ln in lines[:3]] == ["seed=1", "seed=2", "seed=3"]
    proc = sweep_cli(f, "--list", "--seeds", "0", vtoe=vtoe_bin, check=2)
    assert proc.stderr == "sweep: --seeds 0: give 1 or more\n"


# ------------------------------------------------------------------------------------------------
# Local run: the table holds exactly what the points' results.json say

@pytest.fixture(scope="module")
def local_run(tmp_path_factory, vtoe_bin):
    d = tmp_path_factory.mktemp("local")
    f = write(d / "six.yaml", SIX_POINTS)
    sweep_cli(f, "--jobs", 2, "--out", d / "out", vtoe=vtoe_bin, check=0)
    return f, d / "out"


def test_local_run_table_equals_results_json(local_run):
    sweep_file, out = local_run
    points = points_of(load_sweep(sweep_file))
    cols, rows = read_csv(out / "results.csv")
    assert json.loads((out / "failures.json").read_text()) == []

    # Stable column order: overrides, seed, point_id, run-wide results, vm, VM results, wall_s.
    assert cols[:6] == ["duration", "warmup", "architecture", "vms.0.workload.message_size",
                        "seed", "point_id"]
    assert cols[-1] == "wall_s"
    assert cols.index("vm") < cols.index("vm.name")
    for c in ("sim_time_s", "measured_s", "toe.tx_mbps", "toe.rx_mbps", "toe.utilization",
              "vm.name", "vm.tx_mbps", "vm.rx_mbps", "vm.cpu.guest_user", "vm.cpu.guest_kernel",
              "vm.cpu.hypervisor", "vm.cpu.idle", "vm.vm_exits.data_abort", "vm.transactions",
              "vm.mean_latency_us", "vm.message_size", "vm.workload"):
        assert c in cols, c
    assert "architecture" in cols and cols.count("architecture") == 1

    # One row per point and VM, in point order.
    assert len(rows) == 6 * 4
    assert [r["point_id"] for r in rows[::4]] == [p.id for p in points]
    for p, group in zip(points, [rows[i:i + 4] for i in range(0, 24, 4)]):
        pdir = out / "points" / p.id
        results = json.loads((pdir / "results.json").read_text())
        run = json.loads((pdir / "run.json").read_text())
        stored = json.loads((pdir / "point.json").read_text())
        assert stored["overrides"] == p.overrides and stored["seed"] is None
        assert (pdir / "scenario.yaml").is_file()
        expected_cols = {c for c in leaves({k: v for k, v in results.items()
                                            if k not in ("vms", "stats", "channels", "seed")})}
        expected_cols |= {"vm." + c for c in leaves(results["vms"][0])} | {"vm", "wall_s", "seed",
                                                                           "point_id"}
        expected_cols |= set(p.overrides)
        assert set(cols) == expected_cols
        for i, row in enumerate(group):
            assert row["vm"] == str(i)
            assert float(row["wall_s"]) == run["wall_s"]
            assert row["seed"] == str(results["seed"])
            for k, v in p.overrides.items():
                assert row[k] == str(v)
            for c in cols:
                if c in ("vm", "wall_s", "seed", "point_id") or c in p.overrides:
                    continue
                value = (lookup(results["vms"][i], c[3:]) if c.startswith("vm.")
                         else lookup(results, c))
                assert same(row[c], value), (p.id, i, c, row[c], value)
            assert row["architecture"] == results["architecture"]
            assert row["vm.name"] == f"vm{i}"

    # The Parquet file holds the same table.
    pq = pd.read_parquet(out / "results.parquet")
    csv_df = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(pq.columns) == cols
    pd.testing.assert_frame_equal(pq.astype(str), csv_df.astype(str))


def test_library_returns_the_same_table(local_run, vtoe_bin):
    sweep_file, out = local_run
    df = run_sweep(load_sweep(sweep_file), out=out, vtoe=vtoe_bin, quiet=True)
    assert df.attrs["executed"] == [] and len(df.attrs["skipped"]) == 6
    assert df.attrs["failures"] == []
    csv_df = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert list(df.columns) == list(csv_df.columns)
    pd.testing.assert_frame_equal(df.astype(str).reset_index(drop=True),
                                  csv_df.astype(str).reset_index(drop=True))


# ------------------------------------------------------------------------------------------------
# Resume

def logging_vtoe(tmp_path: Path, real: Path, build: str = "") -> tuple[Path, Path]:
    """A vtoe wrapper that logs its arguments, one line per run (not the sweep's --version
    query). `build`: what its --version says on the "build:" line instead of the real binary's."""
    log = tmp_path / "runs.log"
    wrapper = tmp_path / "vtoe-logged"
    version = (f'if [ "$1" = --version ]; then echo "vtoe 0"; echo "build: {build}"; exit 0; fi\n'
               if build else 'if [ "$1" = --version ]; then exec \'' + str(real) + '\' "$@"; fi\n')
    wrapper.write_text(f"#!/bin/sh\n{version}echo \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper, log


def runs(log: Path) -> list[str]:
    """The `vtoe run` calls the wrapper saw (not the sweep's `vtoe validate` checks)."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if line.startswith("run ")]


def test_resume_runs_only_missing_or_unfinished_points(tmp_path, vtoe_bin):
    wrapper, log = logging_vtoe(tmp_path, vtoe_bin)
    s = load_sweep(write(tmp_path / "r.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
                         "grid:\n  vms.0.workload.message_size: [1000, 2000, 4000]\n"
                         "  architecture: [native, da]\n"))
    out = tmp_path / "out"
    pts = points_of(s)
    first = run_sweep(s, jobs=2, out=out, vtoe=wrapper, quiet=True)
    assert len(runs(log)) == 6 and len(first) == 6
    assert sorted(first.attrs["executed"]) == sorted(p.id for p in pts)

    def again():
        before = len(runs(log))
        df = run_sweep(s, jobs=2, out=out, vtoe=wrapper, quiet=True)
        pd.testing.assert_frame_equal(df.drop(columns="wall_s"), first.drop(columns="wall_s"))
        assert (out / "results.csv").read_text().count("\n") == 7
        return runs(log)[before:], df

    new, df = again()                                    # everything finished: nothing runs
    assert new == [] and df.attrs["executed"] == [] and len(df.attrs["skipped"]) == 6

    shutil.rmtree(out / "points" / pts[2].id)             # deleted point: runs again, alone
    mtimes = {p.id: (out / "points" / p.id / "results.json").stat().st_mtime_ns
              for p in pts if p is not pts[2]}
    new, df = again()
    assert len(new) == 1 and "message_size=2000" in new[0] and "architecture=native" in new[0]
    assert df.attrs["executed"] == [pts[2].id]
    assert all((out / "points" / i / "results.json").stat().st_mtime_ns == t
               for i, t in mtimes.items())

    (out / "points" / pts[4].id / "results.json").unlink()  # interrupted point: no results.json
    new, df = again()
    assert df.attrs["executed"] == [pts[4].id] and len(new) == 1

    # A stale temporary directory left by a killed sweep is ignored and removed.
    (out / "points" / f".tmp-{pts[0].id}-x").mkdir()
    new, df = again()
    assert new == [] and not list((out / "points").glob(".tmp-*"))

    # point.json from other overrides (or another base file): the point reruns.
    pj = out / "points" / pts[5].id / "point.json"
    record = json.loads(pj.read_text())
    record["base_sha256"] = "0" * 64
    pj.write_text(json.dumps(record))
    new, df = again()
    assert df.attrs["executed"] == [pts[5].id]

    df = run_sweep(s, jobs=2, out=out, vtoe=wrapper, resume=False, quiet=True)
    assert len(df.attrs["executed"]) == 6

    # The CLI resumes the same way; --no-resume reruns everything.
    before = len(runs(log))
    sweep_cli(tmp_path / "r.yaml", "--out", out, vtoe=wrapper, check=0)
    assert len(runs(log)) == before
    sweep_cli(tmp_path / "r.yaml", "--out", out, "--no-resume", vtoe=wrapper, check=0)
    assert len(runs(log)) == before + 6


@pytest.mark.parametrize("grid,where,reason", [
    ("toe.bandwidth: [1Gbps, fast]", "toe.bandwidth=fast", "expected a bandwidth"),
    ("toe.channlz: [1, 2]", "toe.channlz=1", "unknown key"),
    ("vms.0.workload.message_size: [1000, 0]", "vms.0.workload.message_size=0", "below"),
])
def test_a_bad_grid_value_is_refused_before_any_point_runs(tmp_path, vtoe_bin, grid, where, reason):
    wrapper, log = logging_vtoe(tmp_path, vtoe_bin)
    f = write(tmp_path / "bad.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
              f"grid:\n  {grid}\n")
    proc = sweep_cli(f, "--out", tmp_path / "out", vtoe=wrapper, check=2)
    assert f"{f}: {where}: " in proc.stderr and reason in proc.stderr, proc.stderr
    assert runs(log) == []  # nothing ran


def test_points_of_another_build_run_again(tmp_path, vtoe_bin):
    # The same sweep after a rebuild: every point's record names the build that ran it, so none
    # is taken from the earlier binary; with the same build nothing runs again.
    s = load_sweep(write(tmp_path / "b.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
                         "grid:\n  vms.0.workload.message_size: [1000, 2000]\n"))
    out = tmp_path / "out"
    old, log = logging_vtoe(tmp_path, vtoe_bin, build="git aaaa, binary fnv1a64:1")
    run_sweep(s, jobs=2, out=out, vtoe=old, quiet=True)
    assert len(runs(log)) == 2
    record = json.loads(next((out / "points").glob("*/point.json")).read_text())
    assert record["build"] == "git aaaa, binary fnv1a64:1"
    run_sweep(s, jobs=2, out=out, vtoe=old, quiet=True)
    assert len(runs(log)) == 2
    new, _ = logging_vtoe(tmp_path, vtoe_bin, build="git bbbb, binary fnv1a64:2")
    df = run_sweep(s, jobs=2, out=out, vtoe=new, quiet=True)
    assert len(runs(log)) == 4 and len(df.attrs["executed"]) == 2
    # The real binary reports its own build, which run.json carries as well.
    run_sweep(s, jobs=2, out=out, vtoe=vtoe_bin, quiet=True)
    point = next((out / "points").glob("*/"))
    build = json.loads((point / "run.json").read_text())["build"]
    assert json.loads((point / "point.json").read_text())["build"] == (
        f"git {build['git']}, binary {build['binary']}")


# ------------------------------------------------------------------------------------------------
# Failures

def test_a_grid_point_is_checked_whole(tmp_path, vtoe_bin):
    # A second VM is valid only with a hypervisor: each value alone on the native base is refused,
    # the point as a whole is not.
    wrapper, log = logging_vtoe(tmp_path, vtoe_bin)
    f = write(tmp_path / "whole.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
              "grid:\n  architecture: [de]\n  vms.1.name: [b]\n")
    assert vtoe_validate(vtoe_bin, "vms.1.name=b").returncode == 2
    run_sweep(load_sweep(f), jobs=1, out=tmp_path / "out", vtoe=wrapper, quiet=True)
    assert len(runs(log)) == 1
    # What `vtoe run` refuses when it builds the platform, the check refuses before anything runs.
    g = write(tmp_path / "late.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
              "grid:\n  network.clients.connections: [0, 5]\n")
    proc = sweep_cli(g, "--out", tmp_path / "out2", vtoe=wrapper, check=2)
    assert f"{g}: network.clients.connections=5: " in proc.stderr, proc.stderr
    assert "clients need a server" in proc.stderr
    assert len(runs(log)) == 1


def vtoe_validate(vtoe_bin, *sets):
    args = [str(vtoe_bin), "validate", "scenarios/native/tx_10g.yaml"]
    for s in sets:
        args += ["--set", s]
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT)


def lenient_vtoe(tmp_path, vtoe_bin):
    """vtoe whose `validate` passes everything: its points fail only when they run."""
    w = write(tmp_path / "vtoe-lenient",
              f"#!/bin/sh\nif [ \"$1\" = validate ]; then exit 0; fi\nexec '{vtoe_bin}' \"$@\"\n")
    w.chmod(0o755)
    return w


def test_failing_points_are_reported_and_others_complete(tmp_path, vtoe_bin):
    # Points that fail when run (here: a vtoe whose `validate` passes everything, as one built
    # before validate built the platform): the points fail, the others complete.
    f = write(tmp_path / "f.yaml", "base: scenarios/native/tx_10g.yaml\n" + SHORT +
              "grid:\n  network.clients.connections: [0, 5]\npoints:\n"
              "  - {platform.dram_size: 2GiB}\n  - {vms.0.workload.message_size: 2000}\n")
    out = tmp_path / "out"
    lenient = lenient_vtoe(tmp_path, vtoe_bin)
    proc = sweep_cli(f, "--out", out, "--jobs", 2, vtoe=lenient, check=1)
    pts = points_of(load_sweep(f))
    failures = json.loads((out / "failures.json").read_text())
    assert [x["point_id"] for x in failures] == [pts[1].id, pts[2].id]
    assert failures[0]["overrides"] == pts[1].overrides
    assert failures[0]["returncode"] == 2
    clients_error = (f"vtoe: {ROOT}/scenarios/native/tx_10g.yaml: key 'network.clients.vm': the "
                     "clients need a server: VM 0 runs tcp_tx, not sink or echo")
    assert failures[0]["error"] == clients_error
    assert failures[1]["error"].startswith("vtoe: --set platform.dram_size: DRAM of 2048 MiB")
    _, rows = read_csv(out / "results.csv")
    assert [r["point_id"] for r in rows] == [pts[0].id, pts[3].id]
    # Failed points keep their stderr for inspection but never look finished.
    assert (out / "points" / pts[1].id / "stderr.txt").read_text().strip() == failures[0]["error"]
    assert not (out / "points" / pts[1].id / "results.json").exists()
    # Reported on stderr with id, overrides and error, with and without --quiet.
    line = (f"sweep: point {pts[1].id} failed (duration=20ms warmup=5ms "
            f"network.clients.connections=5): {clients_error}")
    assert line in proc.stderr
    proc = subprocess.run([sys.executable, str(SWEEP_PY), str(f), "--out", str(out), "--vtoe",
                           str(lenient)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1
    assert line in proc.stderr
    assert "2 failed" in proc.stdout


def test_a_point_that_moves_nothing_is_data_not_a_failure(tmp_path, vtoe_bin):
    # vtoe exits 5 for a run whose workload moved nothing (docs/outputs.md): the point's results
    # are kept, and its row says so.
    s = spec(set=["duration=30ms", "warmup=10ms"], grid={"toe.bandwidth": ["100kbps", "10Gbps"]})
    df = run_sweep(s, jobs=2, out=tmp_path / "out", vtoe=vtoe_bin, quiet=True)
    assert df.attrs["failures"] == []
    by_rate = {r["toe.bandwidth"]: r for r in df.to_dict("records")}
    assert by_rate["100kbps"]["vm.no_progress"] and by_rate["100kbps"]["vm.tx_mbps"] == 0
    assert not by_rate["10Gbps"]["vm.no_progress"] and by_rate["10Gbps"]["vm.tx_mbps"] > 1000


@pytest.mark.parametrize("script, error", [
    ("exec sleep 30", "timeout after 0.5 s"),
    ("echo 'about to crash' >&2; kill -SEGV $$", "about to crash"),
    ("kill -KILL $$", "killed by signal 9"),
    ("exit 0", "vtoe exited 0 but wrote no results.json"),
])
def test_timeouts_and_crashes_are_failures(tmp_path, script, error):
    fake = write(tmp_path / "fake-vtoe", f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    s = spec(grid={"toe.channels": [1, 2]})
    start = time.monotonic()
    df = run_sweep(s, jobs=2, out=tmp_path / "out", vtoe=fake, timeout=0.5, quiet=True)
    assert time.monotonic() - start < 10
    assert len(df) == 0
    assert [x["error"] for x in df.attrs["failures"]] == [error, error]
    assert json.loads((tmp_path / "out" / "failures.json").read_text()) == df.attrs["failures"]


# ------------------------------------------------------------------------------------------------
# Dask: a real scheduler and worker on 127.0.0.1; the point function travels with the tasks

@pytest.fixture
def dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    dask = Path(sys.executable).parent / "dask"
    if not dask.exists():
        pytest.skip(f"{dask} is missing")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    sched_file = tmp_path / "scheduler.json"
    procs = []

    def start(*args, name):
        log = open(tmp_path / f"{name}.log", "w")
        procs.append(subprocess.Popen([str(dask), *args], cwd=tmp_path, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True))
        return procs[-1]

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(sched_file), name="scheduler")
        deadline = time.monotonic() + 60
        while not sched_file.exists() or not sched_file.read_text().strip():
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        start("worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1",
              "--nworkers", "1", "--nthreads", "2", "--no-dashboard",
              "--local-directory", str(tmp_path / "worker"), name="worker")
        from distributed import Client
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def test_dask_run_gives_the_local_table(local_run, dask_cluster, tmp_path, vtoe_bin):
    sweep_file, local_out = local_run
    out = tmp_path / "dask-out"
    sweep_cli(sweep_file, "--scheduler", dask_cluster, "--out", out, vtoe=vtoe_bin, check=0)
    assert table_without_wall(out / "results.csv") == table_without_wall(local_out / "results.csv")
    for p in points_of(load_sweep(sweep_file)):
        a = (out / "points" / p.id / "results.json").read_bytes()
        assert a == (local_out / "points" / p.id / "results.json").read_bytes()
    # Resume works the same way through the scheduler.
    df = run_sweep(load_sweep(sweep_file), scheduler=dask_cluster, out=out, vtoe=vtoe_bin,
                   quiet=True)
    assert df.attrs["executed"] == [] and len(df) == 24
    shutil.rmtree(out / "points" / df["point_id"].iloc[0])
    df = run_sweep(load_sweep(sweep_file), scheduler=dask_cluster, out=out, vtoe=vtoe_bin,
                   quiet=True)
    assert df.attrs["executed"] == [df["point_id"].iloc[0]] and len(df) == 24


def test_dask_failures_and_bad_address(dask_cluster, tmp_path, vtoe_bin):
    s = spec(set=["duration=20ms", "warmup=5ms"], grid={"platform.dram_size": ["512MiB", "2GiB"]})
    df = run_sweep(s, scheduler=dask_cluster, out=tmp_path / "out",
                   vtoe=lenient_vtoe(tmp_path, vtoe_bin), quiet=True)
    assert len(df) == 1
    assert [x["error"][:46] for x in df.attrs["failures"]] == [
        "vtoe: --set platform.dram_size: DRAM of 2048 M"]
    with pytest.raises(SweepError, match="--scheduler"):
        run_sweep(s, scheduler="127.0.0.1:8786", out=tmp_path / "out", vtoe=vtoe_bin)
