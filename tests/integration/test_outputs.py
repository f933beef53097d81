"""What a run gives besides results.json (issue 31): the time series, an end by Ctrl-C with results,
`vtoe validate` agreeing with `vtoe run`, and `vtoe schema` as a JSON Schema every scenario meets."""
import csv
import json
import os
import pty
import select
import signal
import subprocess
import time

import pytest
import yaml

from integration_paths import ROOT, TIMEOUT_FACTOR

SHORT = ("--set", "duration=20ms", "--set", "warmup=5ms")
# qos_4vm's VMs take 30 ms turns on the one core: in a window this short, vm1-vm3 wait for theirs
# and move nothing, which the scenario means here (else vtoe warns and exits 5).
WAITING = tuple(x for i in (1, 2, 3) for x in ("--set", f"vms.{i}.workload.expect_progress=false"))


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_time_series_is_deterministic_numeric_and_adds_up_to_the_results(vtoe, tmp_path):
    a, b, plain = tmp_path / "a", tmp_path / "b", tmp_path / "plain"
    for out in (a, b):
        vtoe.run("run", "scenarios/virt/qos_4vm.yaml", *SHORT, *WAITING, "--stats-interval", "1ms",
                 "--out", out, "--quiet")
    vtoe.run("run", "scenarios/virt/qos_4vm.yaml", *SHORT, *WAITING, "--out", plain, "--quiet")
    series = (a / "timeseries.csv").read_bytes()
    assert series == (b / "timeseries.csv").read_bytes()
    # The series observes only: results.json is the one of a run without it.
    assert (a / "results.json").read_bytes() == (plain / "results.json").read_bytes()
    assert not (plain / "timeseries.csv").exists()
    table = rows(a / "timeseries.csv")
    assert [float(r["time_s"]) for r in table] == pytest.approx([i / 1000 for i in range(1, 21)])
    for r in table:
        for k, v in r.items():
            float(v)  # every column is a number (units are in the names)
    results = json.loads((a / "results.json").read_text())
    measured = [r for r in table if float(r["time_s"]) > 0.005 + 1e-9]
    assert len(measured) == 15
    for vm in results["vms"]:
        mean = sum(float(r[f"vm.{vm['name']}.tx_mbps"]) for r in measured) / len(measured)
        assert mean == pytest.approx(vm["tx_mbps"], rel=1e-6, abs=1e-3)
        exits = sum(float(r[f"vm.{vm['name']}.vm_exits.data_abort_count"]) for r in measured)
        assert exits == vm["vm_exits"]["data_abort"]
    # Queues, utilisation and credit are there and move.
    assert max(float(r["toe.tx_utilization_share"]) for r in table) > 0.1
    assert float(table[-1]["toe.ccb_mean_entries"]) >= 1  # vm0's connection, open throughout
    assert "vm.vm3.vsendq_mean_contexts" in table[0] and "channel.0.sendq_mean_contexts" in table[0]
    assert len({r["vm.vm1.credit"] for r in table}) > 1


def test_ctrl_c_ends_an_ordinary_run_with_results_so_far(vtoe, tmp_path):
    # Standard error is a terminal here: after 3 s of wall time the progress line shows there.
    out = tmp_path / "out"
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(vtoe.bin), "run", "scenarios/virt/qos_4vm.yaml", "--set",
                             "duration=600s", "--set", "warmup=1ms", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 30 * TIMEOUT_FACTOR
    while b"ms simulated" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 4096)
    proc.send_signal(signal.SIGINT)
    summary, _ = proc.communicate(timeout=60 * TIMEOUT_FACTOR)
    os.close(master)
    assert b"ms simulated" in seen and b"s left" in seen, seen
    assert proc.returncode == 130  # the results are kept, and a script can tell the run was cut
    assert "stopped by SIGINT" not in summary and "results:" in summary
    results = json.loads((out / "results.json").read_text())
    assert 0 < results["measured_s"] < 600 and results["vms"][0]["tx_mbps"] > 0
    warnings = json.loads((out / "run.json").read_text())["warnings"]
    assert any(w.startswith("stopped by SIGINT at ") for w in warnings), warnings


def test_ctrl_c_in_the_warm_up_writes_nothing_and_exits_130(vtoe, tmp_path):
    out = tmp_path / "out"
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(vtoe.bin), "run", "scenarios/virt/qos_4vm.yaml", "--set",
                             "duration=600s", "--set", "warmup=500s", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 30 * TIMEOUT_FACTOR
    while b"ms simulated" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 4096)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60 * TIMEOUT_FACTOR)
    while select.select([master], [], [], 0.5)[0]:
        try:
            seen += os.read(master, 4096)
        except OSError:
            break
    os.close(master)
    assert proc.returncode == 130
    assert b"during the warm-up: no results" in seen, seen
    assert not (out / "results.json").exists()


def test_validate_refuses_what_run_refuses_and_its_advice_is_accepted(vtoe, tmp_path):
    eight = tmp_path / "eight.yaml"
    eight.write_text(yaml.safe_dump({
        "architecture": "de", "duration": "2ms", "warmup": "1ms",
        "vms": [{"name": f"v{i}", "workload": {"type": "tcp_tx"}} for i in range(8)]}))
    ran = vtoe.run("run", eight, "--out", tmp_path / "out", "--quiet", check=False)
    checked = vtoe.run("validate", eight, check=False)
    assert ran.returncode == checked.returncode == 2
    assert checked.stderr == ran.stderr and "platform.dram_size" in checked.stderr
    assert "lower platform.guest_memory to at most 126MiB" in checked.stderr
    vtoe.run("validate", eight, "--set", "platform.guest_memory=126MiB")


def scenario_files():
    # Scenario files only: sweeps (base/grid) and the calibration manifest are other formats.
    out = []
    for p in sorted((ROOT / "scenarios").rglob("*.yaml")):
        data = yaml.safe_load(p.read_text()) or {}
        if not ({"base", "grid", "points", "numbers", "fitted"} & set(data)):
            out.append(p)
    return out


def test_every_scenario_meets_the_json_schema(vtoe):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(vtoe.run("schema").stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    check = jsonschema.Draft202012Validator(schema)
    files = scenario_files()
    assert len(files) >= 15
    for p in files:
        errors = [e.message for e in check.iter_errors(yaml.safe_load(p.read_text()))]
        assert not errors, f"{p.relative_to(ROOT)}: {errors}"
    # It refuses what vtoe refuses: an unknown key, a value without its unit, a bad choice.
    for bad in ({"toe": {"bandwdith": "1Gbps"}}, {"duration": "100"},
                {"architecture": "xen"}, {"vms": [{"workload": {"message_size": "big"}}]}):
        assert list(check.iter_errors(bad)), bad


def vcd_changes(path):
    """{signal name: [(time, value), ...]} of a VCD file (scalars and vectors)."""
    names, changes, t, scope = {}, {}, 0, []
    header = True
    for line in path.read_text().splitlines():
        words = line.split()
        if not words:
            continue
        if header:
            if words[0] == "$scope":
                scope.append(words[2])
            elif words[0] == "$upscope":
                scope.pop()
            elif words[0] == "$var":
                names[words[3]] = ".".join(scope[1:] + [words[4]])
            elif words[0] == "$enddefinitions":
                header = False
            continue
        if words[0].startswith("#"):
            t = int(words[0][1:])
        elif words[0][0] in "01xz" and len(words) == 1:
            changes.setdefault(names[words[0][1:]], []).append((t, words[0][0]))
        elif words[0][0] == "b":
            changes.setdefault(names[words[1]], []).append((t, int(words[0][1:], 2)))
    return names, changes


def test_vcd_traces_interrupts_queues_link_and_scheduler(vtoe, tmp_path):
    vcd = tmp_path / "wave.vcd"
    # 40 ms: the VMs' queues build up after the first VM switch (30 ms).
    short = ("--set", "duration=40ms", "--set", "warmup=1ms", *WAITING)
    vtoe.run("run", "scenarios/virt/qos_4vm.yaml", *short, "--vcd", vcd, "--out", tmp_path / "a",
             "--quiet")
    vtoe.run("run", "scenarios/virt/qos_4vm.yaml", *short, "--out", tmp_path / "b", "--quiet")
    assert (tmp_path / "a" / "results.json").read_bytes() == \
        (tmp_path / "b" / "results.json").read_bytes()  # the probe only reads
    names, changes = vcd_changes(vcd)
    assert {"gic.irq", "gic.spi0", "toe.irq_vector", "toe.ccb_entries", "toe.channel0.sendq",
            "vtoe_manager.vm0.vsendq", "link.tx_busy", "link.rx_busy",
            "scheduler.running_vm"} <= set(names.values())
    # The TOE's interrupt and the link switch many times, the VMs' queues fill, the VMs take turns.
    assert len(changes["gic.spi0"]) > 10 and len(changes["link.tx_busy"]) > 10
    assert max(v for _, v in changes["vtoe_manager.vm0.vsendq"]) > 1
    assert {v for _, v in changes["scheduler.running_vm"]} >= {0, 1}
    times = [t for t, _ in changes["gic.spi0"]]
    assert times == sorted(times) and max(times) <= 40_000_000  # ns


def test_a_waveform_stops_at_its_bound_and_says_so(vtoe, tmp_path):
    vcd, out, limit = tmp_path / "wave.vcd", tmp_path / "out", 8192
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--vcd", vcd, "--vcd-limit", f"{limit}B", "--out", out,
                    "--quiet")
    assert proc.returncode == 0, proc.stderr  # the run itself is complete
    said = f"{vcd} reached its bound of {limit} bytes (--vcd-limit) at "
    assert f"vtoe: warning: {said}" in proc.stderr, proc.stderr
    assert any(w.startswith(said) for w in json.loads((out / "run.json").read_text())["warnings"])
    assert limit - 64 < vcd.stat().st_size <= limit
    # The changes from the start of the run up to the bound, none after it.
    _, changes = vcd_changes(vcd)
    times = sorted(t for c in changes.values() for t, _ in c)
    assert times[0] == 0 and times[-1] < 5_000_000  # ns
    # Without the bound the same run writes more, and says nothing.
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set",
                    "warmup=1ms", "--vcd", tmp_path / "whole.vcd", "--out", out, "--quiet")
    assert proc.stderr == "" and (tmp_path / "whole.vcd").stat().st_size > limit


def test_a_waveform_window_keeps_only_its_changes(vtoe, tmp_path):
    vcd, out = tmp_path / "wave.vcd", tmp_path / "out"
    short = ("run", "scenarios/quickstart.yaml", "--set", "duration=5ms", "--set", "warmup=1ms",
             "--out", out, "--quiet")
    vtoe.run(*short, "--vcd", vcd, "--vcd-window", "2ms:3ms")
    _, changes = vcd_changes(vcd)
    # Every variable's value at the window's start, then its changes inside it.
    assert all(c[0][0] == 2_000_000 for c in changes.values())
    times = [t for c in changes.values() for t, _ in c]
    assert len(times) > 100 and max(times) < 3_000_000
    for bad, says in ((("--vcd", vcd, "--vcd-window", "5ms:6ms"), "the waveform would be empty"),
                      (("--vcd", vcd, "--vcd-limit", "big"), "--vcd-limit big"),
                      (("--vcd-limit", "1MiB"), "--vcd-limit requires --vcd")):
        proc = vtoe.run(*short, *bad, check=False)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_trace_has_counter_tracks_and_lanes_named_by_vm(vtoe, tmp_path):
    out = tmp_path / "out"
    vtoe.run("run", "scenarios/virt/qos_4vm.yaml", "--set", "vms.0.name=alice", "--set",
             "duration=60ms", "--trace", "--out", out, "--quiet")
    events = json.loads((out / "trace.json").read_text())["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    assert {"vm.alice.tx_mbps", "toe.tx_utilization_share", "vm.alice.credit"} <= \
        {e["name"] for e in counters}
    assert any(e["args"]["value"] > 0 for e in counters if e["name"] == "vm.alice.tx_mbps")
    lanes = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "alice exits" in lanes and not any(name.startswith("vm0 ") for name in lanes)


def test_time_series_counts_receive_drops_and_out_of_order_segments_per_interval(vtoe, tmp_path):
    # The study's 64-record CCB case (docs/study-toe.md): 256 clients ramp up together and the
    # PPM's receive FIFO drops frames. results.json counts those drops over the measured window
    # but the stack's out-of-order segments over the whole run; the series has both per interval.
    out = tmp_path / "ccb"
    sets = ["network.peer=sim", "platform.cpu_freq=16GHz", "network.clients.connections=100000000",
            "network.clients.bytes=64KiB", "network.peer_buffer=16KiB", "toe.ccb.connections=65536",
            "toe.tx_buffer=16KiB", "toe.rx_buffer=16KiB", "guest.socket.send_buffer=4KiB",
            "guest.socket.recv_buffer=4KiB", "vms.0.workload.backlog=65535", "toe.ccb.cache=64",
            "network.clients.concurrency=256", "platform.device_freq=800MHz", "duration=10ms",
            "warmup=5ms"]
    vtoe.run("run", "scenarios/netvp/sink.yaml", *[a for s in sets for a in ("--set", s)],
             "--stats-interval", "1ms", "--out", out, "--quiet")
    table = rows(out / "timeseries.csv")
    stats = json.loads((out / "results.json").read_text())["stats"]
    measured = [r for r in table if float(r["time_s"]) > 0.005 + 1e-9]
    drops = sum(float(r["toe.rx_fifo_drops_count"]) for r in measured)
    assert drops == stats["toe.ppm"]["rx_fifo_drops"] > 0
    ooo = sum(float(r["toe.ooo_segments_count"]) for r in table)
    assert ooo == stats["toe.ppm.tcpip"]["ooo_segments"] > 0
