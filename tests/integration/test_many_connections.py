"""rpc over many pre-established connections served round robin (issue 30 item 4, SocksDirect's
connection-count test): past the TOE's connection-record cache every request misses, so the rate
drops and latency grows; more connections than the TOE holds is a configuration error."""

BASE = "scenarios/native/rpc.yaml"
SETS = ["duration=25ms", "warmup=10ms", "vms.0.workload.message_size=8",
        "vms.0.workload.response_size=8", "toe.ccb.connections=1024", "toe.ccb.cache=256"]


def run(vtoe, tmp_path, connections, *extra):
    res, _ = vtoe.scenario(BASE, *SETS, f"vms.0.workload.connections={connections}", *extra,
                           out=tmp_path / f"c{connections}{len(extra)}")
    vm = res["vms"][0]
    assert vm["error"] == ""
    return vm, res["stats"]["toe.ccb"]


def test_connections_past_the_record_cache_cost_rate_and_latency(vtoe, tmp_path):
    one, ccb1 = run(vtoe, tmp_path, 1)
    many, ccb_many = run(vtoe, tmp_path, 768)
    cached, ccb_cached = run(vtoe, tmp_path, 768, "toe.ccb.cache=1024")
    assert ccb1["record_misses"] == 0 and ccb_cached["record_misses"] == 0
    assert ccb_many["record_misses"] >= many["transactions"]  # every request misses
    assert many["transactions"] < 0.95 * one["transactions"]
    assert many["latency"]["p50_us"] > one["latency"]["p50_us"]
    # A cache that holds every record serves them all as one connection is served.
    assert abs(cached["transactions"] / one["transactions"] - 1) < 0.02


def test_more_connections_than_the_toe_holds_is_a_configuration_error(vtoe):
    proc = vtoe.run("run", BASE, "--quiet", "--out", vtoe.tmp / "bad", "--set",
                    "vms.0.workload.connections=1024", check=False)
    assert proc.returncode != 0
    assert "vms.0.workload.connections" in proc.stderr and "toe.ccb.connections" in proc.stderr
