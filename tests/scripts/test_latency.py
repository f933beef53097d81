"""Latency distributions: an rpc run's results.json carries percentiles consistent with its
transactions and mean, python/vtoe/latency.py draws the CDF, and sweep tables leave the CDF out."""
import json
import subprocess

import pytest

from vtoe import latency
from vtoe.sweep import result_rows


@pytest.fixture(scope="module")
def rpc_results(tmp_path_factory, vtoe_bin):
    out = tmp_path_factory.mktemp("rpc")
    subprocess.run([str(vtoe_bin), "run", "scenarios/native/rpc.yaml", "--set", "duration=8ms",
                    "--set", "warmup=2ms", "--out", str(out)], check=True, capture_output=True)
    return json.loads((out / "results.json").read_text())


def test_rpc_percentiles_agree_with_transactions_and_mean(rpc_results):
    vm = rpc_results["vms"][0]
    d = latency.distribution(rpc_results)
    assert d["kind"] == "request_response"
    assert d["count"] == vm["transactions"] > 100
    keys = ["min_us", "p1_us", "p50_us", "p99_us", "p999_us", "max_us"]
    values = [d[k] for k in keys]
    assert values == sorted(values), values
    # Buckets are at most 0.8 % wide: the mean lies within the recorded range, widened by that.
    assert d["min_us"] <= vm["mean_latency_us"] <= d["max_us"] * 1.008
    xs, ps = latency.cdf(rpc_results)
    assert ps[-1] == 1.0 and xs == sorted(xs) and xs[-1] == d["max_us"]


def test_cdf_plot_and_sweep_table(rpc_results, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cdf.png"
    latency.plot_cdf({"native": rpc_results}, out=png, title="rpc")
    assert png.stat().st_size > 1000
    row = result_rows(rpc_results)[0]
    assert "vm.latency.p99_us" in row
    assert not any(".cdf" in k for k in row)


def test_a_workload_without_latency_names_the_vm():
    with pytest.raises(KeyError, match=r"vms\[0\] \(tcp_tx\)"):
        latency.distribution({"vms": [{"workload": "tcp_tx"}]})
