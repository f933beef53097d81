"""`vtoe compare A B`: what moved between two runs, and an exit status scripts can use."""
import json


def test_identical_runs_compare_equal_and_a_change_is_listed(vtoe, tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    c = tmp_path / "c"
    vtoe.scenario("scenarios/native/tx_10g.yaml", "duration=40ms", out=a)
    vtoe.scenario("scenarios/native/tx_10g.yaml", "duration=40ms", out=b)
    vtoe.scenario("scenarios/native/tx_10g.yaml", "duration=40ms", "guest.costs.copy_per_byte=3.0",
                  out=c)
    same = vtoe.run("compare", a, b, check=False)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("0 of "), same.stdout
    moved = vtoe.run("compare", a / "results.json", c, check=False)
    assert moved.returncode == 1, moved.stdout
    rows = {line.split()[0]: line for line in moved.stdout.splitlines()[:-1]}
    assert "vms.host.tx_mbps" in rows, moved.stdout  # VMs are addressed by name
    # A slower copy lowers throughput; the row shows both values and the relative change.
    ra = json.loads((a / "results.json").read_text())["vms"][0]["tx_mbps"]
    rc = json.loads((c / "results.json").read_text())["vms"][0]["tx_mbps"]
    assert rc < ra and "%" in rows["vms.host.tx_mbps"]
    # Within a generous tolerance nothing moved.
    loose = vtoe.run("compare", a, c, "--tolerance", "100", check=False)
    assert loose.returncode == 0, loose.stdout


def test_a_missing_or_broken_input_is_a_usage_error_naming_the_file(vtoe, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for args in ([tmp_path / "nothing", bad], [bad, bad]):
        proc = vtoe.run("compare", *args, check=False)
        assert proc.returncode == 2
        assert str(args[0]) in proc.stderr, proc.stderr


def test_latency_percentiles_are_compared_and_cdf_steps_are_not(vtoe, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    vtoe.scenario("scenarios/native/rpc.yaml", "duration=15ms", out=a)
    vtoe.scenario("scenarios/native/rpc.yaml", "duration=15ms", "vms.0.workload.message_size=400",
                  out=b)
    moved = vtoe.run("compare", a, b, check=False)
    assert moved.returncode == 1
    assert "vms.host.latency.p99_us" in moved.stdout and ".cdf." not in moved.stdout
