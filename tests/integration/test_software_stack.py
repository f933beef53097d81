"""Integration: software TCP/IP stacks (software_stack.*) through the vtoe command line."""
import pytest

VS = "scenarios/study/virttas/vs.yaml"  # Virt-TAS: 8 cores, a shared fast path on cores 4-7
VK = "scenarios/study/virttas/vk.yaml"  # kernel: 13 cores, 3 vCPUs per VM, vswitch on core 12
SHORT = ["duration=6ms", "warmup=3ms"]


def test_stacks_charge_their_cores_and_runs_are_byte_identical(vtoe, tmp_path):
    outs = []
    for i in range(2):
        res, out = vtoe.scenario(VS, *SHORT, out=tmp_path / f"r{i}")
        outs.append(out)
    assert (outs[0] / "results.json").read_bytes() == (outs[1] / "results.json").read_bytes()
    cores = res["cores"]
    assert cores["allocated"] == 8
    assert cores["software_stack"] == {"mode": "tas_shared", "dedicated_cores": [4, 5, 6, 7],
                                       "busy_polling": pytest.approx(
                                           sum(cores["busy_per_core"][:4]) + 4, abs=1e-3)}
    # The fast path's cores did the stack's work, for every VM's frames (and host B's too).
    assert all(b > 0.01 for b in cores["busy_per_core"][4:])
    stack = res["stats"]["stack"]
    assert stack["frames_tx"] > 100 and stack["frames_rx"] > 100 and stack["drops"] == 0
    # Statistics are the measured window's: a frame or two straddles its edges on a lane.
    assert sum(stack[f"lane{i}_frames"] for i in range(4)) == pytest.approx(
        stack["frames_tx"] + stack["frames_rx"], abs=8)
    assert res["stats"]["b.stack"]["frames_rx"] > 100
    assert all(v["transactions"] > 0 and not v["error"] for v in res["vms"])


def test_the_kernel_stack_runs_on_each_vms_vcpus_beside_a_virtual_switch(vtoe):
    res, _ = vtoe.scenario(VK, *SHORT)
    stack = res["stats"]["stack"]
    # Lanes 0-11: the VMs' vCPUs (three each); lane 12: the switch on core 12, every frame.
    # (a frame or two may still be on a lane at the end)
    assert stack["lane12_frames"] == pytest.approx(stack["frames_tx"] + stack["frames_rx"], abs=8)
    assert sum(stack[f"lane{i}_frames"] for i in range(12)) == pytest.approx(
        stack["lane12_frames"], abs=8)
    assert res["cores"]["busy_per_core"][12] > 0.01
    assert res["cores"]["software_stack"]["dedicated_cores"] == [12]


@pytest.mark.parametrize("scenario,sets,key,words", [
    (VS, ["software_stack.cores=4,5,6,9"], "software_stack.cores", "does not exist"),
    (VS, ["software_stack.cores=4,5,6,7,3"], "vms.3.pin", "runs nothing else"),
    (VS, ["software_stack.mode=tas_vm", "software_stack.cores=4,5,6"], "software_stack.cores",
     "same number"),
    (VS, ["software_stack.mode=kernel"], "software_stack.cores", "own cores"),
    (VK, ["software_stack.mode=tas_shared"], "software_stack.cores", "needs the shared"),
    (VK, ["software_stack.vswitch_core=13"], "software_stack.vswitch_core", "does not exist"),
    (VK, ["software_stack.vswitch_core=11"], "vms.3.pin", "runs nothing else"),
    ("scenarios/quickstart.yaml", ["software_stack.mode=kernel", "software_stack.vswitch_core=0"],
     "software_stack.vswitch_core", "native"),
])
def test_bad_stack_settings_are_configuration_errors_naming_file_and_key(vtoe, tmp_path, scenario,
                                                                        sets, key, words):
    args = ["run", scenario, "--out", tmp_path / "out", "--quiet"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "terminate" not in proc.stderr
    assert words in proc.stderr, proc.stderr
    assert f"'{key}" in proc.stderr or f"--set {key}" in proc.stderr, proc.stderr


def test_time_series_has_every_cores_busy_share_and_averages_to_the_results(vtoe, tmp_path):
    import csv
    res, out = vtoe.scenario(VS, *SHORT, extra=["--stats-interval", "1ms"])
    rows = list(csv.DictReader((out / "timeseries.csv").open()))
    measured = [r for r in rows if float(r["time_s"]) > 0.003 + 1e-9]
    assert len(measured) == 3
    for k, busy in enumerate(res["cores"]["busy_per_core"]):
        mean = sum(float(r[f"core.{k}.busy_share"]) for r in measured) / len(measured)
        assert mean == pytest.approx(busy, abs=1e-4), k
    assert f"core.{len(res['cores']['busy_per_core'])}.busy_share" not in rows[0]


@pytest.mark.parametrize("scenario,sets,key,words", [
    ("scenarios/topology/two_hosts_switch.yaml", ["links.0.b=nowhere:0"], "links.0.b",
     "no host or switch"),
    ("scenarios/multicore/de_rpc_two_vms.yaml", ["vms.0.vcpus=5"], "vms.0.vcpus",
     "vCPUs pinned on a host of 2 cores"),
    (VS, ["software_stack.cores=4,5,6,3"], "vms.3.pin", "runs nothing else"),
])
def test_validate_makes_the_builders_checks(vtoe, scenario, sets, key, words):
    args = ["validate", scenario]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode == 2
    assert words in proc.stderr and key in proc.stderr, proc.stderr
