"""Two VMs on one TOE (issue 30 item 2, toe.loopback): their connection is carried inside the TOE,
no frame reaches the link, under direct access and device emulation; without the key, or with a
peer that cannot be served, the scenario is refused naming the key."""
import pytest

SCENARIO = "scenarios/virt/loopback.yaml"


@pytest.mark.parametrize("arch", ["da", "de"])
def test_requests_between_two_vms_never_reach_the_link(vtoe, tmp_path, arch):
    res, _ = vtoe.scenario(SCENARIO, f"architecture={arch}", "duration=25ms")
    client, server = res["vms"]
    assert client["error"] == "" and server["error"] == ""
    assert client["transactions"] > 100
    assert client["latency"]["p1_us"] <= client["latency"]["p99_us"]
    assert res["links"][0]["frames"] == 0
    # Each transaction is at least a request and a response through the loop; the first one
    # counted in the window may have sent its request before the window began.
    assert res["stats"]["toe.ppm"]["frames_looped"] >= 2 * client["transactions"] - 1
    assert res["stats"]["toe.ppm.tcpip"]["drop_martian"] == 0


def test_a_stream_between_two_vms_keeps_its_bytes(vtoe, tmp_path):
    res, _ = vtoe.scenario(SCENARIO, "vms.0.workload.type=tcp_tx", "vms.0.workload.message_size=8000",
                           "vms.1.workload.type=sink", "vms.1.workload.message_size=8000",
                           "duration=25ms")
    client, server = res["vms"]
    assert client["tx_mbps"] > 500 and server["error"] == ""
    assert abs(server["rx_mbps"] - client["tx_mbps"]) < 0.1 * client["tx_mbps"]


@pytest.mark.parametrize("sets,words", [
    (["toe.loopback=false"], "toe.loopback"),
    (["vms.0.workload.peer=client"], "its own peer"),
    (["vms.0.workload.type=tcp_rx"], "tcp_rx"),
])
def test_vm_peers_that_cannot_work_are_refused(vtoe, sets, words):
    args = ["run", SCENARIO, "--quiet", "--out", vtoe.tmp / "bad"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert "vms.0.workload.peer" in proc.stderr and words in proc.stderr, proc.stderr
