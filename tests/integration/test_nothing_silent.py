"""A run that moved nothing says so (docs/outputs.md, "Runs that moved nothing"): configurations
that cannot move data are refused naming the key, and a complete run in which a talking workload
moved nothing warns on stderr (even with --quiet), marks the VM in results.json and exits 5."""
import json
import struct

NO_PROGRESS = 5
# quickstart's tcp_tx through a TOE so slow that not one 1500-byte frame leaves in 20 ms.
CRAWL = ["toe.bandwidth=100kbps", "duration=30ms", "warmup=10ms"]


def run(vtoe, tmp_path, *sets, scenario="scenarios/quickstart.yaml"):
    out = tmp_path / "out"
    args = ["run", scenario, "--out", out, "--quiet"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    results = json.loads((out / "results.json").read_text()) if proc.returncode != 2 else None
    warnings = json.loads((out / "run.json").read_text())["warnings"] if results else None
    return proc, results, warnings


def test_a_tx_buffer_below_one_segment_is_refused_naming_the_key(vtoe, tmp_path):
    for command in (["validate", "scenarios/quickstart.yaml"],
                    ["run", "scenarios/quickstart.yaml", "--out", tmp_path / "out", "--quiet"]):
        proc = vtoe.run(*command, "--set", "toe.tx_buffer=1KiB", check=False)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("vtoe: --set toe.tx_buffer: 1024 bytes cannot hold one "
                                      "segment"), proc.stderr
        assert "give at least 1448B" in proc.stderr
    # One segment's payload (1500 - 40 - 12 bytes of timestamps) is accepted; without
    # timestamps a segment carries 1460 bytes, so 1448 is then too little.
    vtoe.run("validate", "scenarios/quickstart.yaml", "--set", "toe.tx_buffer=1448B")
    proc = vtoe.run("validate", "scenarios/quickstart.yaml", "--set", "toe.tx_buffer=1448B",
                    "--set", "toe.tcp.timestamps=false", check=False)
    assert proc.returncode == 2 and "give at least 1460B" in proc.stderr, proc.stderr


def test_a_loss_of_one_on_the_only_path_is_refused_naming_the_key(vtoe):
    proc = vtoe.run("validate", "scenarios/quickstart.yaml", "--set", "network.loss=1",
                    check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("vtoe: --set network.loss: "), proc.stderr
    vtoe.run("validate", "scenarios/quickstart.yaml", "--set", "network.loss=0.99")
    proc = vtoe.run("validate", "scenarios/topology/two_hosts_switch.yaml", "--set",
                    "links.1.loss=1", check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("vtoe: --set links.1.loss: "), proc.stderr


def test_a_run_that_moves_nothing_warns_even_when_quiet_and_exits_5(vtoe, tmp_path):
    proc, results, warnings = run(vtoe, tmp_path, *CRAWL)
    assert proc.returncode == NO_PROGRESS, proc.stderr
    said = ("vm host (tcp_tx): no progress in the measured window (no byte delivered, no "
            "transaction completed)")
    assert f"vtoe: warning: {said}" in proc.stderr
    assert any(w.startswith(said) for w in warnings), warnings
    # --quiet keeps the other warnings (here: the window's halves differ) off stderr.
    assert "halves" not in proc.stderr and any("halves" in w for w in warnings)
    assert results["vms"][0]["no_progress"] is True and results["vms"][0]["tx_mbps"] == 0


def test_a_workload_meant_to_move_nothing_says_so(vtoe, tmp_path):
    proc, results, warnings = run(vtoe, tmp_path, *CRAWL,
                                  "vms.0.workload.expect_progress=false")
    assert proc.returncode == 0, proc.stderr
    assert results["vms"][0]["no_progress"] is False
    assert not any("no progress" in w for w in warnings)


def test_a_workload_stopped_before_the_window_is_not_judged(vtoe, tmp_path):
    proc, results, _ = run(vtoe, tmp_path, *CRAWL, "vms.0.workload.stop=5ms")
    assert proc.returncode == 0, proc.stderr
    assert results["vms"][0]["no_progress"] is False


def test_a_server_waiting_for_clients_is_not_judged(vtoe, tmp_path):
    # A second VM's sink has no client in this scenario: it waits, as a server does.
    proc, results, warnings = run(vtoe, tmp_path, "duration=30ms", "warmup=10ms",
                                  "architecture=de", "vms.1.name=idle",
                                  "vms.1.workload.type=sink")
    assert proc.returncode == 0, proc.stderr
    assert [(v["workload"], v["no_progress"]) for v in results["vms"]] == [
        ("tcp_tx", False), ("sink", False)]
    assert results["vms"][0]["tx_mbps"] > 1000 and results["vms"][1]["rx_mbps"] == 0
    assert not any("no progress" in w for w in warnings)


def test_a_capture_stops_at_its_bound_and_says_so(vtoe, tmp_path):
    out = tmp_path / "out"
    limit = 200_000
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--pcap", "--pcap-limit", f"{limit}B", "--pcap-snaplen", "128",
                    "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr  # the run itself is complete
    pcap = out / "link0.pcap"
    said = f"{pcap} reached its bound of {limit} bytes (--pcap-limit) at "
    assert f"vtoe: warning: {said}" in proc.stderr, proc.stderr
    assert any(w.startswith(said) for w in json.loads((out / "run.json").read_text())["warnings"])
    # Whole records only, each at most 16 + 128 bytes: the file ends within one of the bound.
    size = pcap.stat().st_size
    assert limit - (16 + 128) < size <= limit
    data, at, records = pcap.read_bytes(), 24, 0
    while at < len(data):  # record headers: seconds, nanoseconds, kept length, frame length
        _, _, kept, length = struct.unpack_from("<IIII", data, at)
        assert kept == min(length, 128)
        at, records = at + 16 + kept, records + 1
    frames = json.loads((out / "results.json").read_text())["links"][0]["frames"]
    assert at == size and records < frames


def test_without_a_bound_reached_a_capture_is_whole_and_nothing_is_said(vtoe, tmp_path):
    out = tmp_path / "out"
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=2ms", "--set",
                    "warmup=1ms", "--pcap", "--out", out, "--quiet")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert json.loads((out / "run.json").read_text())["warnings"] == []


def test_a_time_series_stops_at_its_bound_and_says_so(vtoe, tmp_path):
    out, limit = tmp_path / "out", 3000
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--stats-interval", "100us", "--stats-limit", f"{limit}B",
                    "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    said = f"{out}/timeseries.csv reached its bound of {limit} bytes (--stats-limit) at "
    assert f"vtoe: warning: {said}" in proc.stderr, proc.stderr
    text = (out / "timeseries.csv").read_text()
    assert len(text) <= limit and text.endswith("\n")
    # Whole rows from the start, one per 100 us, none after the bound: no gap in time.
    times = [float(line.split(",")[0]) for line in text.splitlines()[1:]]
    assert times == [round((i + 1) * 1e-4, 9) for i in range(len(times))] and len(times) < 50


def test_a_capture_window_keeps_only_its_frames(vtoe, tmp_path):
    out = tmp_path / "out"
    vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set", "warmup=1ms",
             "--pcap-window", "2ms:3ms", "--out", out, "--quiet")
    data, at, stamps = (out / "link0.pcap").read_bytes(), 24, []
    while at < len(data):
        sec, nsec, kept, _ = struct.unpack_from("<IIII", data, at)
        stamps.append(sec * 10**9 + nsec)
        at += 16 + kept
    assert len(stamps) > 100 and 2_000_000 <= min(stamps) and max(stamps) < 3_000_000
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--pcap-window", "5ms:6ms", "--out", out, "--quiet", check=False)
    assert proc.returncode == 2 and "the capture would be empty" in proc.stderr, proc.stderr


def test_a_timeline_trace_stops_at_its_bound_and_says_so(vtoe, tmp_path):
    out = tmp_path / "out"
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--trace", "--trace-limit", "1000", "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    said = f"{out}/trace.json reached its bound of 1000 events (--trace-limit) at "
    assert f"vtoe: warning: {said}" in proc.stderr, proc.stderr
    events = json.loads((out / "trace.json").read_text())["traceEvents"]
    assert len([e for e in events if e["ph"] != "M"]) == 1000  # lane names aside
