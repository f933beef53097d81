"""Integration: topologies (hosts:, switches:, links:) through the vtoe command line."""
import json

import pytest

from integration_paths import ROOT

SCENARIO = "scenarios/topology/two_hosts_switch.yaml"
SHORT = []  # the scenario is short already (40 ms, vm1 runs after vm0's first 30 ms slice)


def test_each_workload_reaches_its_own_host_through_the_switch(vtoe):
    res, _ = vtoe.scenario(SCENARIO, *SHORT)
    hosts = {h["name"]: h for h in res["hosts"]}
    assert hosts["server0"]["ip"] == "10.0.0.2" and hosts["server1"]["ip"] == "10.0.0.101"
    # vm0 streams to server0 only; vm1's rpc is answered by server1 only.
    assert hosts["server0"]["rx_bytes"] > 1_000_000 and hosts["server0"]["tx_bytes"] == 0
    assert hosts["server1"]["rx_bytes"] > 0
    assert hosts["server1"]["tx_bytes"] == hosts["server1"]["rx_bytes"]  # 1000 B each way
    assert all(h["pattern_errors"] == 0 for h in res["hosts"])
    assert res["vms"][1]["transactions"] > 0
    links = {l["name"]: l for l in res["links"]}
    assert list(links) == ["uplink", "to_server0", "to_server1"]
    # What the platform sends up the uplink leaves the switch towards one server or the other
    # (plus the flooded ARP requests; a few frames may still be on the wire at the end).
    up = links["uplink"]["a_to_b_frames"]
    down = links["to_server0"]["a_to_b_frames"] + links["to_server1"]["a_to_b_frames"]
    assert abs(up - down) <= 8
    assert links["to_server1"]["frames"] < links["to_server0"]["frames"]
    (tor,) = res["switches"]
    assert tor["name"] == "tor" and tor["drops"] == 0 and tor["no_route"] == 0
    assert tor["frames"] == pytest.approx(sum(l["frames"] for l in res["links"]) / 2, abs=8)
    assert res["peer"]["rx_bytes"] == hosts["server0"]["rx_bytes"]  # the peer is hosts[0]
    assert "server1.tcpip" in res["stats"] and "tor" in res["stats"]


def test_same_seed_gives_byte_identical_results_and_a_pcap_per_link(vtoe, tmp_path):
    outs = []
    for i in range(2):
        _, out = vtoe.scenario(SCENARIO, *SHORT, "links.1.loss=0.001", out=tmp_path / f"r{i}",
                               extra=["--pcap"])
        outs.append(out)
    for name in ("results.json", "uplink.pcap", "to_server0.pcap", "to_server1.pcap"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
        assert (outs[0] / name).stat().st_size > 1000
    assert not (outs[0] / "link0.pcap").exists()


def test_a_slower_port_with_a_small_buffer_drops_and_tcp_recovers(vtoe):
    # server0's port runs at 1 Gbit/s behind a 10 Gbit/s uplink: the switch's buffer overflows.
    res, _ = vtoe.scenario(SCENARIO, *SHORT, "links.1.rate=1Gbps", "switches.0.buffer=32KiB")
    (tor,) = res["switches"]
    assert tor["port_drops"][1] > 0 and tor["drops"] == sum(tor["port_drops"])
    assert tor["port_drops"][0] == 0 and tor["port_drops"][2] == 0
    server0 = res["hosts"][0]
    assert server0["rx_bytes"] > 500_000 and server0["pattern_errors"] == 0
    assert res["stats"]["server0.tcpip"]["retransmits"] > 0 or res["stats"]["toe.ppm.tcpip"][
        "retransmits"] > 0


def test_a_vm_waiting_for_its_retransmission_timer_holds_the_dispatchers_pool(vtoe, tmp_path):
    # docs/topology.md, "Loss on one VM's link holds up the other VM's sends": vm0's lost
    # segments leave its contexts waiting in the TOE for its timer (200 ms), and the four
    # contexts of toe.dispatcher.depth that the manager keeps in the TOE are all vm0's.
    def run(depth):
        out = tmp_path / f"depth{depth}"
        proc = vtoe.run("run", SCENARIO, "--set", "links.1.loss=0.01", "--set",
                        f"toe.dispatcher.depth={depth}", "--out", out, "--quiet", check=False)
        res = json.loads((out / "results.json").read_text())
        return proc, res["vms"][1], {link["name"]: link for link in res["links"]}
    proc, vm1, links = run(4)
    assert proc.returncode == 5 and "vm vm1 (rpc): no progress" in proc.stderr, proc.stderr
    assert vm1["transactions"] == 0 and vm1["no_progress"]
    assert links["to_server1"]["frames"] < 10  # ARP and the handshake; no request
    # With room for vm1's request beside vm0's stuck contexts, vm1 goes on.
    proc, vm1, links = run(64)
    assert proc.returncode == 0, proc.stderr
    assert vm1["transactions"] > 100 and links["to_server1"]["frames"] > 200


def test_every_link_switch_port_and_host_over_time_and_in_totals(vtoe):
    # server0's port at 1 Gbit/s behind the 10 Gbit/s uplink, a 32 KiB buffer: the port's queue
    # fills and drops; the time series shows it, and its rows add up to results.json's totals.
    res, out = vtoe.scenario(SCENARIO, *SHORT, "links.1.rate=1Gbps", "switches.0.buffer=32KiB",
                             extra=["--stats-interval", "1ms"])
    import csv
    with open(out / "timeseries.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40
    cols = list(rows[0])
    for link in ("uplink", "to_server0", "to_server1"):
        for k in ("a_to_b_utilization_share", "b_to_a_utilization_share", "frames_count",
                  "drops_count", "ecn_marks_count"):
            assert f"link.{link}.{k}" in cols
    for port in (0, 1, 2):
        for k in ("queue_mean_bytes", "queue_max_bytes", "queue_mean_frames", "tx_frames_count",
                  "drops_count"):
            assert f"switch.tor.port{port}.{k}" in cols
    assert "switch.tor.port3.drops_count" not in cols  # no link on port 3
    for host in ("server0", "server1"):
        assert f"host.{host}.tx_mbps" in cols and f"host.{host}.rx_mbps" in cols
    # The platform's columns come first, as they were.
    assert cols.index("dram.utilization_share") < cols.index("link.uplink.frames_count")

    def total(col):
        return sum(float(r[col]) for r in rows)

    links = {l["name"]: l for l in res["links"]}
    (tor,) = res["switches"]
    for name, l in links.items():  # the rows cover the whole run, warm-up included
        assert total(f"link.{name}.frames_count") == l["frames"]
        assert total(f"link.{name}.drops_count") == l["drops"]
    assert total("switch.tor.port1.drops_count") == tor["port_drops"][1] > 0
    peak = max(float(r["switch.tor.port1.queue_max_bytes"]) for r in rows)
    assert 0.5 * 32768 < peak <= 32768
    assert all(float(r["switch.tor.port1.queue_max_bytes"])
               >= float(r["switch.tor.port1.queue_mean_bytes"]) for r in rows)
    # The measured window's totals: per port, per link direction, per host.
    p1 = tor["ports"][1]
    assert p1["link"] == "to_server0" and tor["ports"][3]["link"] is None
    assert 0 < p1["queue_bytes"]["mean"] <= p1["queue_bytes"]["max"] <= 32768
    assert 0 < p1["queue_frames"]["mean"] <= p1["queue_frames"]["max"]
    assert p1["drops"] > 0 and p1["tx_frames"] > 0
    measured = [r for r in rows if float(r["time_s"]) > 0.010 + 1e-9]
    w = links["to_server0"]["window"]
    assert links["to_server0"]["a"] == "tor:1" and links["to_server0"]["b"] == "server0"
    assert links["to_server0"]["rate_gbps"] == 1.0
    assert w["a_to_b_utilization"] > 0.9  # the slow port is the bottleneck
    mean_use = sum(float(r["link.to_server0.a_to_b_utilization_share"]) for r in measured) / 30
    assert mean_use == pytest.approx(w["a_to_b_utilization"], abs=0.01)
    assert w["a_to_b_frames"] + w["b_to_a_frames"] == total("link.to_server0.frames_count") - sum(
        float(r["link.to_server0.frames_count"]) for r in rows if r not in measured)
    server0 = res["hosts"][0]
    mean_rx = sum(float(r["host.server0.rx_mbps"]) for r in measured) / 30
    assert server0["rx_mbps"] == pytest.approx(mean_rx, rel=0.01) and server0["rx_mbps"] > 500


def test_the_trace_covers_every_host_link_and_switch_port(vtoe, tmp_path):
    # Two platforms: B's lanes name B's VMs (echo0, echo1), A's its own; every link, port and
    # host has its counter tracks.
    _, out = vtoe.scenario("scenarios/topology/two_platforms.yaml", "duration=15ms",
                           "warmup=5ms", out=tmp_path / "t", extra=["--trace"])
    events = json.loads((out / "trace.json").read_text())["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    lanes = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            lanes.setdefault(procs[e["pid"]], set()).add(e["args"]["name"])
    assert {"echo0 exits", "echo1 exits"} <= lanes["b.hypervisor"]
    assert not any(n.startswith("client") for n in lanes["b.hypervisor"] | lanes["b.cpu0"])
    assert {"client0 exits", "client1 exits"} <= lanes["hypervisor"]
    assert not any(n.startswith("echo") for n in lanes["hypervisor"] | lanes["cpu0"])
    counters = {e["name"] for e in events if e["ph"] == "C"}
    for name in ("link.to_a.a_to_b_utilization_share", "link.to_b.frames_count",
                 "switch.tor.port0.queue_mean_bytes", "switch.tor.port1.drops_count",
                 "host.b.vm.echo0.rx_mbps", "host.b.vm.echo1.tx_mbps", "host.b.core.0.busy_share"):
        assert name in counters, name
    assert any(e["args"]["value"] > 0 for e in events
               if e["ph"] == "C" and e["name"] == "host.b.vm.echo0.tx_mbps")


def read_pcapng(path):
    """(timestamp ns, captured bytes, original length, comment or None) of each enhanced packet
    block; checks the section header and the one interface (Ethernet, ns resolution)."""
    import struct
    data = path.read_bytes()
    assert struct.unpack_from("<III", data, 0) == (0x0A0D0D0A, 28, 0x1A2B3C4D)
    pos, out = 28, []
    assert struct.unpack_from("<IIHH", data, pos)[::2] == (1, 1)  # IDB, LINKTYPE_ETHERNET
    assert data[pos + 16:pos + 21] == bytes([9, 0, 1, 0, 9])  # if_tsresol = 9 (ns)
    pos += struct.unpack_from("<I", data, pos + 4)[0]
    while pos < len(data):
        kind, size = struct.unpack_from("<II", data, pos)
        assert kind == 6 and size % 4 == 0 and struct.unpack_from("<I", data, pos + size - 4)[0] == size
        _, hi, lo, cap, orig = struct.unpack_from("<IIIII", data, pos + 8)
        opts = pos + 28 + (cap + 3) // 4 * 4
        comment = None
        if opts < pos + size - 4:
            code, n = struct.unpack_from("<HH", data, opts)
            assert code == 1
            comment = data[opts + 4:opts + 4 + n].decode()
        out.append(((hi << 32) | lo, data[pos + 28:pos + 28 + cap], orig, comment))
        pos += size
    return out


def test_pcapng_of_named_links_comments_every_frame_the_loss_model_dropped(vtoe, tmp_path):
    _, out = vtoe.scenario(SCENARIO, *SHORT, "links.1.loss=0.005", out=tmp_path / "ng",
                           extra=["--pcap=to_server0", "--pcap-format", "pcapng"])
    res = json.loads((out / "results.json").read_text())
    assert sorted(p.name for p in out.glob("*.pcap*")) == ["to_server0.pcapng"]
    records = read_pcapng(out / "to_server0.pcapng")
    link = next(l for l in res["links"] if l["name"] == "to_server0")
    assert len(records) == link["frames"]  # every frame that entered, dropped ones included
    dropped = [r for r in records if r[3] is not None]
    assert len(dropped) == link["drops"] > 10
    note = "dropped by the loss model of link to_server0 ({}, network.loss / links[].loss)"
    assert {r[3] for r in dropped} == {note.format("a_to_b"), note.format("b_to_a")}
    times = [r[0] for r in records]
    assert times == sorted(times) and times[-1] <= 40_000_000  # ns, within the 40 ms run
    assert all(len(r[1]) == r[2] for r in records)  # whole frames by default
    # Wireshark reads it and shows the comments.
    import shutil
    import subprocess
    if shutil.which("tshark"):
        shown = subprocess.run(["tshark", "-r", str(out / "to_server0.pcapng"), "-Y",
                                "frame.comment", "-T", "fields", "-e", "frame.comment"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        assert len([ln for ln in shown if "loss model" in ln]) == len(dropped)
    # A name that is no link's is an error naming it and the links there are.
    proc = vtoe.run("run", SCENARIO, "--pcap=nowhere", "--out", tmp_path / "bad", "--quiet",
                    check=False)
    assert proc.returncode == 2
    assert proc.stderr == ("vtoe: --pcap=nowhere: no link is named 'nowhere' (links: uplink, "
                           "to_server0, to_server1)\n"), proc.stderr


def test_pcapng_snap_length_and_size_bound(vtoe, tmp_path):
    _, out = vtoe.scenario(SCENARIO, *SHORT, out=tmp_path / "snap",
                           extra=["--pcap=uplink", "--pcap-format", "pcapng", "--pcap-snaplen",
                                  "64", "--pcap-limit", "20KiB"])
    path = out / "uplink.pcapng"
    records = read_pcapng(path)
    assert path.stat().st_size <= 20 * 1024
    assert all(len(r[1]) == min(64, r[2]) for r in records) and max(r[2] for r in records) > 64
    run = json.loads((out / "run.json").read_text())
    assert any(w.startswith(f"{path} reached its bound of 20480 bytes (--pcap-limit)")
               for w in run["warnings"]), run["warnings"]


BASE = """\
duration: 5ms
warmup: 1ms
hosts:
  - name: a
  - name: b
switches:
  - name: sw
    ports: 4
links:
  - {a: platform, b: "sw:0"}
  - {a: "sw:1", b: a}
  - {a: "sw:2", b: b}
"""


PROXY = "  - {name: px, kind: proxy, peer: b}\n"  # a third host


@pytest.mark.parametrize("extra, sets, key, words", [
    ("", ["links.1.b=nobody"], "links.1.b", "no host or switch is named 'nobody'"),
    ("", ["links.1.a=sw:4"], "links.1.a", "has no port 4"),
    ("", ["links.1.a=sw"], "links.1.a", "name its port"),
    ("", ["links.2.a=sw:1"], "links.2.a", "already an end of links.1"),
    ("  - {a: \"sw:3\", b: \"sw:2\"}\n", [], "links.3", "already an end"),
    ("", ["hosts.1.ip=10.0.0.2"], "hosts.1.ip", "already the address of host a"),
    ("", ["hosts.1.ip=10.0.0.1"], "hosts.1.ip", "already the address of VM vm0"),
    ("", ["hosts.1.ip=10.1.0.5"], "hosts.1.ip", "subnet"),
    ("", ["vms.0.workload.peer=nobody"], "vms.0.workload.peer", "no host is named 'nobody'"),
    ("", ["hosts.2.name=c"], "hosts.2.name", "is the end of no link"),
    ("", ["links.0.rate=1Gbps"], "links.0.rate", "toe.bandwidth"),
    ("", ["hosts.2.name=c", "links.0.a=a", "links.1.b=c"], "vms.0.workload.peer",
     "has no path to the platform"),
    (PROXY, ["links.2.a=px"], "links.2.a", "is a proxy: name its port"),
    (PROXY, ["links.2.a=px:0"], "hosts.2.name", "needs a link on both ports"),
    (PROXY, ["links.2.a=px:0", "links.3.a=sw:2", "links.3.b=px:1", "vms.0.workload.peer=px"],
     "vms.0.workload.peer", "is a proxy"),
    ("", ["hosts.0.app=flow_client", "hosts.0.peer=b"], "hosts.0.peer", "no flow_server"),
    ("", ["hosts.0.app=flow_client"], "hosts.0.peer", "needs the host it connects to"),

    ("", ["switches.0.table=a=9"], "switches.0.table", "has 4 ports"),
    ("", ["hosts.0.name=toe"], "hosts.0.name", "part of the platform"),
])
def test_bad_topologies_are_configuration_errors_naming_file_and_key(vtoe, tmp_path, extra, sets,
                                                                     key, words):
    path = tmp_path / "topo.yaml"
    # A host entry joins hosts:, anything else is appended (to links:).
    path.write_text(BASE.replace("switches:", extra + "switches:") if extra.startswith("  - {name")
                    else BASE + extra)
    args = ["run", path, "--out", tmp_path / "out", "--quiet"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "terminate" not in proc.stderr
    assert words in proc.stderr, proc.stderr
    assert f"'{key}" in proc.stderr or f"--set {key}" in proc.stderr, proc.stderr
    if not any(s.startswith(key + "=") for s in sets):
        assert "topo.yaml" in proc.stderr, proc.stderr


def test_a_loop_of_links_between_switches_is_an_error_naming_the_link(vtoe, tmp_path):
    path = tmp_path / "loop.yaml"
    # Two links between sw and sw2: a second path, which the switches (no spanning tree) forbid.
    path.write_text(BASE.replace("    ports: 4\n", "    ports: 6\n  - name: sw2\n    ports: 4\n")
                    + "  - {a: \"sw:3\", b: \"sw2:0\"}\n  - {a: \"sw2:1\", b: \"sw:4\"}\n")
    proc = vtoe.run("run", path, "--out", tmp_path / "out", "--quiet", check=False)
    assert proc.returncode != 0
    assert "loop.yaml" in proc.stderr and "'links.4.b'" in proc.stderr, proc.stderr
    assert "closes a loop" in proc.stderr


def test_workload_peer_without_links_is_an_error(vtoe, tmp_path):
    proc = vtoe.run("run", "scenarios/quickstart.yaml", "--out", tmp_path / "out", "--quiet",
                    "--set", "vms.0.workload.peer=server0", check=False)
    assert proc.returncode != 0
    assert "vms.0.workload.peer" in proc.stderr and "no links" in proc.stderr, proc.stderr


def test_two_full_platforms_exchange_requests_through_a_switch(vtoe, tmp_path):
    res, out = vtoe.scenario("scenarios/topology/two_platforms.yaml", extra=["--pcap"])
    (b,) = res["hosts"]
    assert b["kind"] == "platform" and b["architecture"] == "de"
    # B's one core, busy in the measured window (two echo VMs and the hypervisor's handlers).
    assert b["cores"]["allocated"] == 1 and 0.2 < b["cores"]["busy"] <= 1.0
    for vm, echo in zip(res["vms"], b["vms"]):
        assert vm["error"] == "" and vm["transactions"] > 100
        # Echoed, but for what was still on its way back at the end.
        assert echo["tx_bytes"] > 0 and 0 <= echo["rx_bytes"] - echo["tx_bytes"] <= 16_000
    assert res["switches"][0]["drops"] == 0
    assert "b.toe.mac" in res["stats"] and "b.echo0.sockets" in res["stats"]
    again, out2 = vtoe.scenario("scenarios/topology/two_platforms.yaml", out=tmp_path / "again",
                                extra=["--pcap"])
    assert (out / "results.json").read_bytes() == (out2 / "results.json").read_bytes()
    assert (out / "to_b.pcap").read_bytes() == (out2 / "to_b.pcap").read_bytes()


@pytest.mark.parametrize("sets, key, words", [
    (["hosts.0.scenario=missing.yaml"], "hosts.0.scenario", "no scenario file"),
    (["vms.0.workload.peer=b"], "vms.0.workload.peer", "name its VM, b/echo0"),
    (["vms.0.workload.peer=b/nosuch"], "vms.0.workload.peer", "has no VM 'nosuch'"),
    (["vms.0.ip=10.0.0.21"], "hosts.0.scenario", "already the address of VM client0"),
])
def test_bad_platform_hosts_are_configuration_errors(vtoe, tmp_path, sets, key, words):
    args = ["run", "scenarios/topology/two_platforms.yaml", "--out", tmp_path / "o", "--quiet"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0 and words in proc.stderr, proc.stderr
    assert key in proc.stderr and "Traceback" not in proc.stderr


def test_guest_flows_workload_times_each_flow_against_the_simulated_peer(vtoe, tmp_path):
    # One connection per flow through the TOE: 100 B request, 25 kB response (two rounds of slow
    # start), 1 ms each way. TTFB is two round trips (handshake, request), TTC one more.
    path = tmp_path / "flows.yaml"
    path.write_text("duration: 60ms\nwarmup: 10ms\nnetwork: {link_delay: 1ms}\nvms:\n"
                    "  - workload: {type: flows, message_size: 100, response_size: 25000, "
                    "port: 80, gap: 1ms}\n")
    res, _ = vtoe.scenario(path)
    vm = res["vms"][0]
    assert vm["error"] == "" and vm["workload"] == "flows"
    flows = vm["flows"]
    assert flows["done"] >= 5
    assert flows["mean_ttfb_ms"] == pytest.approx(4.0, abs=0.5)
    assert flows["mean_ttc_ms"] - flows["mean_ttfb_ms"] == pytest.approx(2.0, abs=0.5)
    assert vm["mean_latency_us"] / 1000 == pytest.approx(flows["mean_ttc_ms"], rel=0.05)
    assert res["peer"]["tx_bytes"] >= 25000 * flows["done"]
