"""Integration: whole scenarios through the vtoe command line."""
import json
import shutil
import subprocess

import pytest

from integration_paths import ROOT, release_only

SHORT = ["duration=60ms", "warmup=10ms"]


def test_quickstart_reports_throughput_and_cpu_breakdown(vtoe, tmp_path):
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--out", tmp_path / "q", *sum((["--set", s] for s in SHORT), []))
    assert "tx Mbit/s" in proc.stdout and "idle" in proc.stdout
    res = json.loads((tmp_path / "q" / "results.json").read_text())
    for key in ("sim_time_s", "measured_s", "vms", "toe", "links"):
        assert key in res
    vm = res["vms"][0]
    assert vm["tx_mbps"] > 1000
    cpu = vm["cpu"]
    assert set(cpu) == {"guest_user", "guest_kernel", "hypervisor", "idle"}
    assert sum(cpu.values()) == pytest.approx(1.0, abs=1e-3)
    assert res["measured_s"] == pytest.approx(0.05)
    assert res["links"][0]["frames"] > 1000
    assert res["peer"]["pattern_errors"] == 0
    run = json.loads((tmp_path / "q" / "run.json").read_text())
    assert run["wall_s"] > 0
    assert "wall" not in json.dumps(res)


def test_same_seed_gives_byte_identical_results(vtoe, tmp_path):
    outs = []
    for i in range(2):
        _, out = vtoe.scenario("scenarios/native/lossy_tx.yaml", *SHORT, out=tmp_path / f"r{i}", extra=["--pcap"])
        outs.append(out)
    assert (outs[0] / "results.json").read_bytes() == (outs[1] / "results.json").read_bytes()
    assert (outs[0] / "link0.pcap").read_bytes() == (outs[1] / "link0.pcap").read_bytes()
    _, other = vtoe.scenario("scenarios/native/lossy_tx.yaml", *SHORT, "seed=8", out=tmp_path / "r2")
    assert (other / "results.json").read_bytes() != (outs[0] / "results.json").read_bytes()


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_pcap_decodes_cleanly_with_checksums_verified(vtoe, tmp_path):
    _, out = vtoe.scenario("scenarios/native/lossy_tx.yaml", "duration=20ms", "warmup=5ms", extra=["--pcap"])
    pcap = out / "link0.pcap"
    base = ["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
            "-o", "udp.check_checksum:TRUE"]
    total = subprocess.run(base + ["-T", "fields", "-e", "frame.number"], capture_output=True, text=True, check=True)
    frames = len(total.stdout.split())
    assert frames > 1000
    bad = subprocess.run(base + ["-Y", "_ws.malformed || ip.checksum.status == 0 || tcp.checksum.status == 0"],
                         capture_output=True, text=True, check=True)
    assert bad.stdout.strip() == "", bad.stdout[:2000]
    handshake = subprocess.run(base + ["-Y", "tcp.flags.syn == 1 && tcp.options.mss_val && tcp.options.wscale.shift"],
                               capture_output=True, text=True, check=True)
    assert len(handshake.stdout.strip().splitlines()) >= 2  # SYN and SYN-ACK carry MSS and window scale
    ns = subprocess.run(["tshark", "-r", str(pcap), "-c", "3", "-T", "fields", "-e", "frame.time_epoch"],
                        capture_output=True, text=True, check=True)
    assert all(len(t.split(".")[1]) == 9 for t in ns.stdout.split())  # nanosecond timestamps


def test_receive_and_rpc_workloads_move_verified_data(vtoe):
    rx, _ = vtoe.scenario("scenarios/native/rx_10g.yaml", *SHORT)
    assert rx["vms"][0]["rx_mbps"] > 1000 and rx["vms"][0]["error"] == ""
    rpc, _ = vtoe.scenario("scenarios/native/rpc.yaml", *SHORT)
    assert rpc["vms"][0]["transactions"] > 100
    assert rpc["vms"][0]["mean_latency_us"] > 0


def test_lossy_link_recovers_by_retransmission(vtoe):
    res, _ = vtoe.scenario("scenarios/native/lossy_tx.yaml", "duration=300ms", "warmup=10ms")
    assert res["links"][0]["drops"] > 10
    tcp = res["stats"]["toe.ppm.tcpip"]
    assert tcp["retransmits"] > 0 and tcp["fast_retransmits"] > 0
    assert res["vms"][0]["tx_mbps"] > 20
    # Every byte the peer got is the guest's pattern, in order, despite the losses.
    assert res["peer"]["pattern_errors"] == 0
    assert res["peer"]["rx_bytes"] > 1_000_000


def test_bbr_keeps_its_rate_where_loss_holds_newreno_to_the_mathis_rate(vtoe, tmp_path):
    # The lossy scenario at 2 % loss each way: NewReno's window follows the losses, BBR's
    # (toe.tcp.congestion=bbr) follows the delivery rate, paced; both deliver every byte.
    path = ["network.loss=0.02", "duration=100ms", "warmup=10ms"]
    reno, _ = vtoe.scenario("scenarios/native/lossy_tx.yaml", *path, out=tmp_path / "reno")
    bbr, _ = vtoe.scenario("scenarios/native/lossy_tx.yaml", *path, "toe.tcp.congestion=bbr",
                           out=tmp_path / "bbr")
    assert bbr["vms"][0]["tx_mbps"] > 4 * reno["vms"][0]["tx_mbps"]
    tcp = bbr["stats"]["toe.ppm.tcpip"]
    assert tcp["retransmits"] > 0 and tcp["rto_timeouts"] == 0 and tcp["pacing_waits"] > 0
    assert reno["stats"]["toe.ppm.tcpip"]["pacing_waits"] == 0
    assert bbr["peer"]["pattern_errors"] == 0 and reno["peer"]["pattern_errors"] == 0


# A 1 Gbit/s line behind a 128-frame MAC queue: the TOE's window outgrows the queue and frames
# are dropped. With ECN on both ends and threshold marking at 32 frames, the queue marks CE
# instead: the same goodput (the line is the limit) without a drop or a retransmission.
ECN_PATH = ["toe.bandwidth=1Gbps", "toe.mac_queue=128", "network.link_delay=50us",
            "network.ecn_threshold=32", "duration=100ms", "warmup=20ms"]


def test_ecn_marks_replace_queue_drops(vtoe, tmp_path):
    off, _ = vtoe.scenario("scenarios/quickstart.yaml", *ECN_PATH, out=tmp_path / "off")
    on, out = vtoe.scenario("scenarios/quickstart.yaml", *ECN_PATH, "toe.tcp.ecn=on",
                            out=tmp_path / "on", extra=["--pcap"])
    t_off, t_on = off["stats"]["toe.ppm.tcpip"], on["stats"]["toe.ppm.tcpip"]
    peer_on = on["stats"]["peer.tcpip"]
    # Default (passive at both ends): nobody asks, nothing is ECT, the queue drops.
    assert t_off["ecn_negotiated"] == 0 and off["stats"]["toe.mac"]["ce_marks"] == 0
    assert t_off["retransmits"] > 0
    # On: negotiated, marked, echoed, answered with CWR; nothing lost or retransmitted.
    assert t_on["ecn_negotiated"] == 1 and peer_on["ecn_negotiated"] == 1
    assert on["stats"]["toe.mac"]["ce_marks"] > 0 and on["stats"]["toe.mac"]["tx_drops"] == 0
    assert peer_on["ce_received"] > 0 and t_on["ece_received"] > 0
    assert t_on["ecn_reductions"] > 0 and t_on["cwr_sent"] == t_on["ecn_reductions"]
    assert t_on["retransmits"] == 0
    assert on["peer"]["pattern_errors"] == 0
    assert on["vms"][0]["tx_mbps"] >= 0.98 * off["vms"][0]["tx_mbps"]
    if shutil.which("tshark") is None:
        return
    pcap = out / "link0.pcap"
    base = ["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-T", "fields",
            "-e", "frame.number"]

    def count(flt):
        res = subprocess.run(base + ["-Y", flt], capture_output=True, text=True, check=True)
        return len(res.stdout.split())

    assert count("tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.flags.ece == 1 && tcp.flags.cwr == 1") == 1
    assert count("tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.flags.ece == 1 && tcp.flags.cwr == 0") == 1
    data = count("tcp.len > 0")
    assert data > 1000
    # New data is ECT(0) or, marked in the queue, CE; nothing else is ECN-capable.
    assert count("tcp.len > 0 && (ip.dsfield.ecn == 2 || ip.dsfield.ecn == 3)") == data
    assert count("ip.dsfield.ecn == 3") > 0
    assert count("tcp.len == 0 && ip.dsfield.ecn != 0") == 0
    assert count("ip.checksum.status == 0") == 0


@pytest.mark.parametrize("args, needle", [
    (["run", "tests/integration/data/unknown_key.yaml"], "network.link_dealy"),
    (["run", "tests/integration/data/bad_unit.yaml"], "platform.cpu_freq"),
    (["run", "tests/integration/data/out_of_range.yaml"], "network.loss"),
    (["run", "tests/integration/data/does_not_exist.yaml"], "does_not_exist.yaml"),
    (["run", "scenarios/quickstart.yaml", "--set", "vms.0.workload.type=ftp"], "vms.0.workload.type"),
    (["run", "scenarios/quickstart.yaml", "--set", "duration=fast"], "duration"),
])
def test_bad_input_is_one_clear_line_and_nothing_runs(vtoe, tmp_path, args, needle):
    out = tmp_path / "bad"
    proc = vtoe.run(*args, "--out", out, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert needle in lines[0]
    assert not (out / "results.json").exists()


def test_keys_lists_every_key_with_default_and_meaning(vtoe):
    proc = vtoe.run("keys")
    for key in ("platform.cpu_freq", "toe.bandwidth", "vms[].workload.message_size", "guest.costs.copy_per_byte"):
        assert key in proc.stdout


def test_a_short_multi_vm_run_warns_and_a_steady_one_does_not(vtoe):
    """Averages that hide something are flagged in run.json (and on stderr without --quiet)."""
    # One run (not --quiet) gives both: run.json's warnings and the same lines on stderr.
    out = vtoe.tmp / "short"
    proc = vtoe.run("run", "scenarios/native/tx_10g.yaml", "--set", "architecture=de", "--set",
                    "vms.1.name=vm1", "--set", "duration=100ms", "--set", "warmup=10ms", "--out", out)
    warnings = json.loads((out / "run.json").read_text())["warnings"]
    assert any("shorter than ten VM switch intervals" in w for w in warnings), warnings
    assert any(w.startswith("vm host: throughput differs between the halves") for w in warnings), warnings
    assert "vtoe: warning: the measured window (90 ms) is shorter" in proc.stderr
    for w in warnings:
        assert f"vtoe: warning: {w}" in proc.stderr, proc.stderr
    _, steady = vtoe.scenario("scenarios/native/tx_10g.yaml", extra=[], out=vtoe.tmp / "steady")
    assert json.loads((steady / "run.json").read_text())["warnings"] == []


@release_only("figures")
def test_goodput_never_exceeds_the_line(vtoe):
    """vms[].tx_mbps is goodput (bytes the peer acknowledged): no VM and no total exceeds the line's
    goodput, which the old send()-side count did (Fig. 11's DWRR total was 954 Mbit/s)."""
    line = 1e3 * (1500 - 40) / (1500 + 38)  # 1 Gbit/s, MTU 1500: 949.3 Mbit/s
    for scenario in ("scenarios/virt/qos_4vm.yaml", "scenarios/virt/io_cpu_mix.yaml"):
        res, _ = vtoe.scenario(scenario, out=vtoe.tmp / scenario.split("/")[-1])
        total = sum(v["tx_mbps"] for v in res["vms"])
        assert total <= line, f"{scenario}: total goodput {total} > line goodput {line:.1f}"
        for v in res["vms"]:
            assert v["tx_mbps"] <= line
            assert "tx_sent_mbps" in v


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n"])
def test_an_empty_scenario_file_is_an_error_naming_it(vtoe, text):
    path = vtoe.tmp / "empty.yaml"
    path.write_text(text)
    proc = vtoe.run("run", path, "--out", vtoe.tmp / "out", check=False)
    assert proc.returncode == 2
    assert f"{path}: the scenario file sets no keys" in proc.stderr


def test_a_trace_window_after_the_run_is_an_error(vtoe):
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--trace", "--trace-window", "2s:3s",
                    "--out", vtoe.tmp / "tw", check=False)
    assert proc.returncode == 2
    assert "--trace-window starts at 2000 ms, at or after the end of the run" in proc.stderr
    assert not (vtoe.tmp / "tw" / "trace.json").exists()


def test_rerunning_into_an_out_directory_leaves_only_this_runs_files(vtoe):
    out = vtoe.tmp / "again"
    vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=20ms", "--set", "warmup=5ms",
             "--pcap", "--trace", "--out", out, "--quiet")
    assert (out / "link0.pcap").exists() and (out / "trace.json").exists()
    vtoe.run("run", "scenarios/quickstart.yaml", "--set", "duration=20ms", "--set", "warmup=5ms",
             "--out", out, "--quiet")
    assert sorted(p.name for p in out.iterdir()) == ["results.json", "run.json", "scenario.yaml"]


@pytest.mark.parametrize("sets,key,text", [
    (["platform.dram_size=2GiB"], "platform.dram_size", "would reach the TOE's registers"),
    (["guest.socket.send_buffer=64MiB", "guest.socket.recv_buffer=64MiB"], "guest.socket.send_buffer",
     "do not fit a guest's 128 MiB"),
    (["toe.mtu=9000B", "toe.ppm.rx_fifo=8KiB"], "toe.ppm.rx_fifo", "cannot hold one frame of toe.mtu"),
    (["toe.sram=2KiB"], "toe.sram", "cannot hold a connection's segment in each direction"),
])
def test_resources_that_cannot_fit_are_configuration_errors(vtoe, sets, key, text):
    args = ["run", "scenarios/quickstart.yaml", "--out", vtoe.tmp / "o"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"--set {key}" in proc.stderr and text in proc.stderr
    assert "uncaught exception" not in proc.stderr and "overlaps" not in proc.stderr
