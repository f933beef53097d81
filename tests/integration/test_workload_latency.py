"""Latency for every workload (docs/outputs.md, "Latency"): tcp_tx's messages to their completion
and to the peer's receipt, tcp_rx's from the peer's send to recv(), the TOE's RTT samples; and the
seeded sources of variation (link jitter, rpc think times), off by default, that give seeds a
spread."""
import json

import pytest

QUICK = ["duration=12ms", "warmup=4ms"]
KEYS = ("count", "min_us", "p1_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "cdf")


def ordered(d):
    return d["min_us"] <= d["p1_us"] <= d["p50_us"] <= d["p90_us"] <= d["p99_us"] \
        <= d["p999_us"] <= d["max_us"]


def test_tcp_tx_times_each_message_to_its_completion_and_to_the_peer(vtoe):
    res, _ = vtoe.scenario("scenarios/quickstart.yaml", *QUICK)
    (vm,) = res["vms"]
    lat, peer, rtt = vm["latency"], vm["peer_latency"], vm["rtt"]
    assert lat["kind"] == "send_to_completion" and peer["kind"] == "send_to_peer_receipt"
    assert rtt["kind"] == "rtt"
    for d in (lat, peer, rtt):
        assert list(d)[1:] == list(KEYS) and ordered(d), d
        assert d["cdf"][-1][1] == d["count"]
    # One sample per message_size message of the window, give or take the buffers in flight.
    messages = vm["tx_mbps"] * 1e6 / 8 * res["measured_s"] / vm["message_size"]
    assert lat["count"] == pytest.approx(messages, rel=0.1)
    assert peer["count"] == pytest.approx(messages, rel=0.1)
    # SendDone comes once the TOE has the message in its send buffer, before it is on the wire:
    # the peer's application reads it later.
    assert lat["p50_us"] < peer["p50_us"]
    # Every round trip crosses the link twice (1 us each way by default).
    assert rtt["count"] > 10 and rtt["min_us"] >= 2.0
    assert vm["mean_latency_us"] == 0 and vm["transactions"] == 0  # as before


def test_tcp_rx_times_each_message_from_the_peers_send_to_recv(vtoe):
    res, _ = vtoe.scenario("scenarios/native/rx_10g.yaml", *QUICK)
    vm = res["vms"][0]
    lat = vm["latency"]
    assert lat["kind"] == "peer_send_to_recv" and lat["count"] > 100 and ordered(lat)
    assert "peer_latency" not in vm
    messages = vm["rx_mbps"] * 1e6 / 8 * res["measured_s"] / vm["message_size"]
    assert lat["count"] == pytest.approx(messages, rel=0.1)
    # The TOE only acknowledges here: pure ACKs time no round trip (its SYN-ACK did, in the
    # warm-up), so the window has no RTT sample.
    assert vm["rtt"]["count"] == 0 and vm["rtt"]["cdf"] == []


def test_rpc_keeps_its_request_response_latency_with_p90(vtoe):
    res, _ = vtoe.scenario("scenarios/native/rpc.yaml", *QUICK)
    lat = res["vms"][0]["latency"]
    assert lat["kind"] == "request_response" and ordered(lat)
    assert res["vms"][0]["transactions"] == lat["count"]


def test_without_variation_seeds_give_no_spread_and_jitter_gives_one(vtoe, tmp_path):
    def run(seed, *sets):
        res, _ = vtoe.scenario("scenarios/quickstart.yaml", *QUICK, f"seed={seed}", *sets,
                               out=tmp_path / f"s{seed}{len(sets)}")
        return res["vms"][0]

    plain = [run(s) for s in (1, 2)]
    jittered = [run(s, "network.jitter=20us") for s in (1, 2)]
    # Lossless and without jitter the seed moves nothing that times a message.
    assert plain[0]["latency"] == plain[1]["latency"]
    assert plain[0]["rtt"]["p99_us"] - plain[0]["rtt"]["p1_us"] < 20
    # With up to 20 us more per frame and direction, RTTs spread over about 40 us, and the
    # seeds give different distributions.
    for v in jittered:
        assert v["rtt"]["p99_us"] - v["rtt"]["p1_us"] > 15
        assert v["rtt"]["min_us"] >= plain[0]["rtt"]["min_us"]
    assert jittered[0]["rtt"] != jittered[1]["rtt"]
    # The peer receives each message later and less regularly; send() to completion hardly
    # moves (the TOE's send buffer takes the messages whatever the network does).
    assert jittered[0]["peer_latency"] != jittered[1]["peer_latency"]
    assert jittered[0]["peer_latency"]["p50_us"] > plain[0]["peer_latency"]["p50_us"]


def test_rpc_think_time_spaces_requests_at_random(vtoe, tmp_path):
    base, _ = vtoe.scenario("scenarios/native/rpc.yaml", *QUICK, out=tmp_path / "b")
    runs = [vtoe.scenario("scenarios/native/rpc.yaml", *QUICK, f"seed={s}",
                          "vms.0.workload.think_time=20us", out=tmp_path / f"t{s}")[0]
            for s in (1, 2)]
    n = [r["vms"][0]["transactions"] for r in runs]
    # A transaction is about 10 us back to back; a 20 us mean wait before each leaves about a
    # third as many, a different number for each seed.
    assert all(0.15 * base["vms"][0]["transactions"] < k < 0.6 * base["vms"][0]["transactions"]
               for k in n), (n, base["vms"][0]["transactions"])
    assert n[0] != n[1]
    # Latency runs from the request's send(): the wait is not in it.
    for r in runs:
        assert r["vms"][0]["latency"]["p50_us"] < 2 * base["vms"][0]["latency"]["p50_us"]


@pytest.mark.parametrize("key, value", [("network.jitter", "-1us"), ("network.jitter", "5"),
                                        ("vms.0.workload.think_time", "abc")])
def test_bad_variation_keys_are_errors_naming_file_and_key(vtoe, tmp_path, key, value):
    scenario = tmp_path / "s.yaml"
    top, _, leaf = key.rpartition(".")
    if key.startswith("vms"):
        scenario.write_text(f"vms:\n  - workload: {{type: rpc, {leaf}: {value}}}\n")
    else:
        scenario.write_text(f"network:\n  {leaf}: {value}\n")
    proc = vtoe.run("validate", scenario, check=False)
    assert proc.returncode == 2, proc.stderr
    assert str(scenario) in proc.stderr and key in proc.stderr, proc.stderr


def test_run_with_seeds_gives_each_figure_its_spread(vtoe, tmp_path):
    out = tmp_path / "seeds"
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=12ms", "--set",
                    "warmup=4ms", "--set", "network.jitter=20us", "--seeds", "3", "--out", out)
    doc = json.loads((out / "seeds.json").read_text())
    assert doc["seeds"] == 3 and [r["seed"] for r in doc["runs"]] == [1, 2, 3]
    assert all(r["exit"] == 0 for r in doc["runs"])
    per_seed = [json.loads((out / f"seed-{k}" / "results.json").read_text()) for k in (1, 2, 3)]
    assert [r["seed"] for r in per_seed] == [1, 2, 3]
    spread = doc["spread"]
    rtt = [r["vms"][0]["rtt"]["p50_us"] for r in per_seed]
    assert spread["vms.0.rtt.p50_us"] == {"min": min(rtt), "mean": pytest.approx(sum(rtt) / 3),
                                          "max": max(rtt), "runs": 3}
    assert spread["vms.0.peer_latency.p99_us"]["min"] < spread["vms.0.peer_latency.p99_us"]["max"]
    assert "links.0.window.a_to_b_utilization" in spread and "toe.tx_mbps" in spread
    assert not any(".cdf." in k for k in spread)
    assert "vms.0.rtt.p50_us: " in proc.stdout and f"spread: {out}/seeds.json" in proc.stdout
    # One seed or many, not both.
    bad = vtoe.run("run", "scenarios/quickstart.yaml", "--seeds", "2", "--seed", "4", "--out",
                   tmp_path / "bad", check=False)
    assert bad.returncode == 2 and "--seeds and --seed" in bad.stderr
