"""Paths inside one host (issue 30 item 2): a shared-memory ring pair between two VMs set up by
the monitor (scenarios/virt/shm.yaml), the user-space TOE channel (polled, no system call or
interrupt, da only) and zero copy; regions that overlap memory they must not, and a user-space
channel under de, are refused naming the key."""
import pytest

SHM = "scenarios/virt/shm.yaml"
LOOP = "scenarios/virt/loopback.yaml"
TWO_CORES = ["platform.cores=2", "vms.0.pin=0", "vms.1.pin=1", "duration=5ms", "warmup=1ms"]


def test_shared_memory_requests_cross_without_the_toe(vtoe):
    res, _ = vtoe.scenario(SHM)
    client, server = res["vms"]
    assert client["error"] == "" and server["error"] == ""
    assert client["transactions"] > 1000
    # Nothing went through the TOE or took an interrupt: the rings are polled.
    assert res["stats"]["toe.ppm"]["frames_rx"] == 0
    assert res["stats"]["hypervisor"]["physical_irqs"] == 0
    assert res["stats"]["client.app0"]["shm_garbage"] == 0
    # Bytes each way: requests and echoes of 64 B.
    assert client["tx_mbps"] == pytest.approx(server["rx_mbps"], rel=0.01)
    assert client["latency"]["p99_us"] < 2


def test_paths_order_by_latency_shm_user_socket(vtoe):
    """SocksDirect's intra-host order: shared memory < kernel bypass < kernel socket."""
    shm, _ = vtoe.scenario(SHM)
    p50 = {"shm": shm["vms"][0]["latency"]["p50_us"]}
    for path in ["user", "socket"]:
        res, _ = vtoe.scenario(LOOP, f"vms.0.workload.path={path}", f"vms.1.workload.path={path}",
                               *TWO_CORES)
        assert res["vms"][0]["error"] == ""
        p50[path] = res["vms"][0]["latency"]["p50_us"]
        if path == "user":  # polled: the channel raised no interrupt
            assert res["stats"]["client.driver"]["interrupts"] == 0
            assert res["stats"]["client.driver"]["polls"] > 0
    assert p50["shm"] < p50["user"] < p50["socket"], p50


def test_zero_copy_moves_large_messages_faster(vtoe):
    mbps = {}
    for zc in ["false", "true"]:
        res, _ = vtoe.scenario(SHM, "vms.0.workload.type=tcp_tx", "vms.1.workload.type=sink",
                               "vms.0.workload.message_size=64KiB",
                               "vms.1.workload.message_size=64KiB",
                               f"vms.0.workload.zero_copy={zc}", f"vms.1.workload.zero_copy={zc}")
        assert res["vms"][1]["error"] == ""
        mbps[zc] = res["vms"][1]["rx_mbps"]
    assert mbps["true"] > 2 * mbps["false"], mbps


@pytest.mark.parametrize("sets,key,words", [
    (["shared_memory.0.pa=20MiB"], "shared_memory.0.pa", "VM 'client''s RAM"),
    (["shared_memory.0.pa=8MiB"], "shared_memory.0.pa", "hypervisor"),
    (["shared_memory.0.ipa=2049MiB"], "shared_memory.0.ipa", "own RAM"),
    (["shared_memory.1.vms=client,server", "shared_memory.1.pa=272MiB",
      "shared_memory.0.pa=272MiB"], "shared_memory.1.pa", "shared_memory[0]"),
    (["shared_memory.0.vms=client,nobody"], "shared_memory.0.vms", "nobody"),
    (["vms.1.workload.path=socket"], "vms.0.workload.peer", "path shm"),
    (["vms.0.workload.type=flows"], "vms.0.workload.path", "flows"),
])
def test_bad_shared_memory_is_refused_naming_the_key(vtoe, sets, key, words):
    args = ["run", SHM, "--quiet", "--out", vtoe.tmp / "bad"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert key in proc.stderr and words in proc.stderr, proc.stderr


def test_a_user_space_channel_under_de_is_refused(vtoe):
    proc = vtoe.run("run", LOOP, "--quiet", "--out", vtoe.tmp / "bad", "--set", "architecture=de",
                    "--set", "vms.0.workload.path=user", check=False)
    assert proc.returncode != 0
    assert "vms.0.workload.path" in proc.stderr and "architecture da" in proc.stderr, proc.stderr


def test_connect_workload_sets_up_connections_and_scales_with_cores(vtoe):
    """Issue 30 item 4: connections set up and reset one after another, per process and core."""
    rate = {}
    for n in [1, 2]:
        res, _ = vtoe.scenario("scenarios/native/rpc.yaml", "vms.0.workload.type=connect",
                               "duration=6ms", "warmup=2ms", f"platform.cores={n}",
                               f"vms.0.workload.processes={n}")
        vm = res["vms"][0]
        assert vm["error"] == ""
        assert vm["latency"]["kind"] == "connection_setup"
        rate[n] = vm["transactions"] / res["measured_s"]
    assert rate[1] > 50_000  # far more than the TOE's 256 contexts: none is held in TIME_WAIT
    assert rate[2] > 1.6 * rate[1], rate


@pytest.mark.parametrize("sets,words", [
    (["vms.0.workload.cooperative=true"], "path user"),
    (["vms.0.workload.cooperative=true", "vms.0.workload.path=user", "vms.0.vcpus=2",
      "vms.0.pin=0,1", "vms.1.pin=0"], "one vCPU"),
])
def test_cooperative_threads_that_cannot_share_a_core_are_refused(vtoe, sets, words):
    args = ["run", LOOP, "--quiet", "--out", vtoe.tmp / "bad", "--set", "platform.cores=2"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert "vms.0.workload.cooperative" in proc.stderr and words in proc.stderr, proc.stderr


def test_more_channels_than_the_interrupt_vector_has_bits_are_refused(vtoe):
    """The TOE's control unit has one interrupt-vector bit per channel: 32 channels at most."""
    proc = vtoe.run("run", LOOP, "--quiet", "--out", vtoe.tmp / "bad", "--set", "architecture=da",
                    "--set", "toe.channels=33", check=False)
    assert proc.returncode != 0
    assert "toe.channels" in proc.stderr and "32" in proc.stderr, proc.stderr


def test_one_echo_process_serves_many_connections_round_robin(vtoe):
    """SocksDirect's connection-count test: two processes, many connections between them."""
    res, _ = vtoe.scenario(LOOP, "vms.0.workload.connections=64",
                           "vms.1.workload.connections=64", *TWO_CORES)
    client, server = res["vms"]
    assert client["error"] == "" and server["error"] == ""
    assert client["transactions"] > 100
    assert server["transactions"] == 64  # connections accepted, all before the first request
    assert res["stats"]["server.app0"]["server_processes"] == 0  # no process per connection
