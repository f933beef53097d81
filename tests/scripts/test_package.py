"""The vtoe Python package as a new user meets it: installed into the venv (no sys.path edits), it
runs a scenario and a four-point sweep, reads a time series, and gives numeric columns."""
import os
import subprocess
import sys
import textwrap

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")



def test_a_script_outside_the_repository_imports_vtoe_and_sweeps(tmp_path, vtoe_bin):
    # A fresh interpreter in another directory (no scripts/ or tests/ on its path): the import
    # works because `make venv` installed the package.
    script = tmp_path / "study.py"
    script.write_text(textwrap.dedent(f"""\
        import vtoe
        df = vtoe.sweep({{"name": "four", "base": "scenarios/quickstart.yaml",
                          "set": {{"duration": "6ms", "warmup": "2ms"}},
                          "grid": {{"toe.bandwidth": ["1Gbps", "10Gbps"],
                                    "vms.0.workload.message_size": [1000, 8000]}}}},
                         jobs=2, out={str(tmp_path / "sweep")!r}, vtoe={str(vtoe_bin)!r},
                         quiet=True)
        assert len(df) == 4, df
        assert sorted(df["toe.bandwidth_bps"]) == [1e9, 1e9, 1e10, 1e10]
        assert str(df["duration_s"].dtype) == "float64" and set(df["duration_s"]) == {{0.006}}
        assert (df["vm.tx_mbps"] > 0).all()
        run = vtoe.run("scenarios/quickstart.yaml", {{"duration": "4ms", "warmup": "1ms"}},
                       stats_interval="1ms", vtoe={str(vtoe_bin)!r})
        ts = run.timeseries()
        assert list(ts["time_s"]) == [0.001, 0.002, 0.003, 0.004]
        assert all(str(t) in ("float64", "int64") for t in ts.dtypes), ts.dtypes
        assert (run.out / "timeseries.parquet").is_file()
        assert vtoe.load_timeseries(run.out).equals(ts)
        assert run.frame()["vm.tx_mbps"].iloc[0] == run.results["vms"][0]["tx_mbps"]
        print("ok")
        """))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_numeric_turns_unit_text_into_numbers_named_by_unit():
    from vtoe import numeric

    df = pd.DataFrame({"toe.bandwidth": ["1Gbps", "400Mbps"], "loss": ["0.5%", 0],
                       "name": ["a", "b"], "vm.tx_mbps": [1.0, 2.0], "mixed": ["1Gbps", "2ms"]})
    out = numeric(df)
    assert list(out.columns) == ["toe.bandwidth_bps", "loss_ratio", "name", "vm.tx_mbps", "mixed"]
    assert list(out["toe.bandwidth_bps"]) == [1e9, 4e8]
    assert list(out["loss_ratio"]) == [0.005, 0.0]
    assert list(out["mixed"]) == ["1Gbps", "2ms"]  # two units: left as text


def test_run_reports_vtoes_error(vtoe_bin):
    import vtoe

    with pytest.raises(vtoe.VtoeError, match="toe.bandwidth"):
        vtoe.run(None, {"toe.bandwidth": "fast"}, vtoe=vtoe_bin)
