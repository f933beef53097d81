"""NetVP (paper §4.3): real Linux TCP/IP talks to the simulated TOE through a raw socket."""
import hashlib
import json
import os
import resource
import shutil
import socket
import struct
import subprocess
import time

import pytest

from netvp_lab import PEER_IP, TOE_IP, scaled


def pattern(offset, n):
    return bytes(((i * 7 + (i >> 8)) & 0xFF) for i in range(offset, offset + n))


def test_arp_and_ping_reach_the_simulated_toe(lab):
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lab.start("scenarios/netvp/sink.yaml", "duration=4s")
    ping = lab.peer("ping", "-c", "5", "-i", "0.2", "-W", "1", TOE_IP, capture_output=True, text=True)
    assert ping.returncode == 0 and " 0% packet loss" in ping.stdout, ping.stdout
    neigh = lab.peer("ip", "neigh", "show", TOE_IP, capture_output=True, text=True).stdout
    assert "02:00:00:00:00:01" in neigh  # the TOE's MAC, learnt by ARP
    res, run = lab.wait()
    tcp = res["stats"]["toe.ppm.tcpip"]
    assert tcp["echo_requests_in"] >= 5 and tcp["arp_in"] >= 1
    # Mostly quiet: the pacer waited for the wire in wall time instead of ticking through it
    # (ticking every 50 us took half a CPU: 2 s of CPU time here).
    assert run["pacing"]["idle_waits"] > 10 and run["pacing"]["slept_s"] > 3, run["pacing"]
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    assert cpu < 1.2, f"a 4 s NetVP run that only answers pings took {cpu:.2f} s of CPU"


def test_linux_streams_megabytes_into_the_guest_sink(lab, tmp_path):
    lab.start("scenarios/netvp/sink.yaml", "duration=6s")
    data = os.urandom(8 << 20)
    src = tmp_path / "data.bin"
    src.write_bytes(data)
    t0 = time.time()
    with open(src, "rb") as f:
        nc = lab.peer("timeout", "30", "nc", "-N", TOE_IP, "5001", stdin=f, capture_output=True)
    elapsed = time.time() - t0
    assert nc.returncode == 0, nc.stderr
    res, run = lab.wait()
    vm = res["vms"][0]
    got = vm["rx_mbps"] * res["measured_s"] * 1e6 / 8
    assert got == pytest.approx(len(data), rel=1e-3), (got, len(data))
    assert vm["transactions"] == 1 and vm["error"] == ""
    assert run["pacing"]["stopped"] == ""
    # The lab's veths keep Linux's default offloads: the peer's segments come with partial
    # checksums and as TSO super-segments, which NetVP finished and cut; nothing was dropped for it.
    tcp = res["stats"]["toe.ppm.tcpip"]
    if os.environ.get("VTOE_LAB_OFFLOADS", "on") != "off":
        assert run["ingress"]["checksums_completed"] + run["ingress"]["segmented"] > 0, run["ingress"]
    assert run["ingress"]["oversized_dropped"] == 0
    assert tcp["drop_bad_tcp_checksum"] == 0 and res["stats"]["toe.mac"]["rx_errors"] == 0
    print(f"ingress fix-ups: {run['ingress']}")
    print(f"8 MiB in {elapsed:.2f} s wall -> {len(data) * 8 / elapsed / 1e6:.0f} Mbit/s; "
          f"max lag {run['pacing']['max_lag_us']:.0f} us")


def iperf_bytes(csv: str) -> list:
    """The bytes of each stream in iperf 2's CSV report (-y C: ...,id,interval,bytes,bits/s)."""
    return [int(line.split(",")[7]) for line in csv.splitlines() if line.count(",") == 8]


def test_iperf_clients_from_linux_stream_into_the_guest_sink(lab):
    # iperf (2) as users run it against a server: four parallel streams for two seconds, with
    # Linux's default offloads on the lab's veths.
    lab.start("scenarios/netvp/sink.yaml", "duration=6s")
    iperf = lab.peer("timeout", "20", "iperf", "-c", TOE_IP, "-p", "5001", "-t", "2", "-P", "4",
                     "-y", "C", capture_output=True, text=True)
    assert iperf.returncode == 0, iperf.stdout + iperf.stderr
    streams = iperf_bytes(iperf.stdout)
    assert len(streams) == 4 and min(streams) > 0, iperf.stdout
    res, run = lab.wait()
    vm = res["vms"][0]
    assert vm["transactions"] == 4 and vm["error"] == ""
    # rx_mbps is rounded to 4 decimals: over a 6 s run, up to 38 bytes
    got = vm["rx_mbps"] * res["measured_s"] * 1e6 / 8
    assert abs(got - sum(streams)) < 64, (got, streams)
    assert res["stats"]["toe.ppm.tcpip"]["drop_bad_tcp_checksum"] == 0
    assert run["ingress"]["oversized_dropped"] == 0
    print(f"iperf: {sum(streams) * 8 / 2e6:.0f} Mbit/s over 4 streams")


def test_a_guest_client_streams_into_an_iperf_server_on_linux(lab):
    server = lab.peer_popen("timeout", "20", "iperf", "-s", "-p", "5001", "-y", "C",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        total = 16 << 20
        lab.start("scenarios/netvp/sink.yaml", "duration=4s", "vms.0.workload.type=tcp_tx",
                  f"network.peer_ip={PEER_IP}", f"vms.0.workload.total_bytes={total}",
                  "vms.0.workload.message_size=65536")
        res, _ = lab.wait()
        time.sleep(1)  # the guest's connection has closed; iperf reports it on the way out
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert res["vms"][0]["error"] == ""
    streams = iperf_bytes(out)
    # iperf 2's server does not count the first 4 bytes of a stream (its header flags); Linux to
    # Linux it reports the same 4 bytes less.
    assert len(streams) == 1 and total - 4 <= streams[0] <= total, out + err


def iperf3(lab, *args):
    """Runs iperf3 -c against the guest with JSON output; returns (returncode, parsed JSON)."""
    proc = lab.peer("timeout", "30", "iperf3", "-c", TOE_IP, "-J", *args, capture_output=True,
                    text=True)
    return proc.returncode, json.loads(proc.stdout)


def test_iperf3_tests_the_guest_forward_reverse_and_in_parallel(lab):
    # The guest's iperf3 server (workload type iperf3) against Linux's iperf3 client, as a user
    # would test any host: a forward test, a reverse test with two streams, and a UDP test the
    # server refuses with iperf3's own error.
    lab.start("scenarios/netvp/iperf3.yaml", "duration=60s")
    rc, fwd = iperf3(lab, "-t", "2")
    assert rc == 0 and "error" not in fwd, fwd.get("error")
    sent, received = fwd["end"]["sum_sent"]["bytes"], fwd["end"]["sum_received"]["bytes"]
    assert 0 < received <= sent, (sent, received)
    rc, rev = iperf3(lab, "-t", "2", "-R", "-P", "2")
    assert rc == 0 and "error" not in rev, rev.get("error")
    # The client found both streams' results by their ids, and each stream carried data.
    assert len(rev["end"]["streams"]) == 2
    assert all(st["receiver"]["bytes"] > 0 for st in rev["end"]["streams"]), rev["end"]["streams"]
    guest_sent, got = rev["end"]["sum_sent"]["bytes"], rev["end"]["sum_received"]["bytes"]
    assert 0 < got <= guest_sent, (guest_sent, got)
    _, udp = iperf3(lab, "-t", "1", "-u")  # (iperf3 -J exits 0 with the error in its JSON)
    assert "not implemented" in udp.get("error", ""), udp
    lab.interrupt()  # the tests are done: end the 60 s run here
    res, _ = lab.wait()
    vm = res["vms"][0]
    assert vm["error"] == "" and vm["transactions"] == 2  # tests completed
    # The guest read everything the forward test sent (it reported what came before the test's
    # end, as iperf3 does; rx_mbps is rounded to 4 decimals: tens of bytes). tx_mbps counts what
    # the client acknowledged: at least what it read, at most what the guest reported writing
    # (the client stops reading at the test's end and resets the streams) plus the control
    # connections' few hundred bytes.
    guest_rx = vm["rx_mbps"] * res["measured_s"] * 1e6 / 8
    guest_tx = vm["tx_mbps"] * res["measured_s"] * 1e6 / 8
    assert abs(guest_rx - sent) < 512, (guest_rx, sent, received)
    assert got - 512 < guest_tx < guest_sent + 4096, (guest_tx, got, guest_sent)
    print(f"iperf3: forward {received * 8 / 2e6:.0f} Mbit/s, reverse {got * 8 / 2e6:.0f} Mbit/s")


def nc_echo(lab, tmp_path, data):
    """What the guest's echo server on port 7 sends back for `data`, sent with nc."""
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    with open(src, "rb") as f:
        # -N: half-close after the input, then read until the guest closes its side.
        return lab.peer("timeout", "20", "nc", "-N", TOE_IP, "7", stdin=f,
                        capture_output=True).stdout


def test_echo_returns_every_byte_unchanged(lab, tmp_path):
    lab.start("scenarios/netvp/echo.yaml", "duration=8s")
    data = os.urandom(4 << 20)
    echoed = nc_echo(lab, tmp_path, data)
    assert hashlib.sha256(echoed).hexdigest() == hashlib.sha256(data).hexdigest(), len(echoed)
    res, _ = lab.wait()
    assert res["vms"][0]["tx_mbps"] > 0


def test_sigint_ends_a_real_time_run_with_results_for_what_was_simulated(lab, tmp_path):
    # A NetVP run is real time; a user ends it by hand. The rates must cover the simulated time
    # up to the signal, not the ten minutes the scenario asked for.
    lab.start("scenarios/netvp/echo.yaml", "duration=600s")
    data = os.urandom(1 << 20)
    assert nc_echo(lab, tmp_path, data) == data
    t0 = time.time()
    lab.interrupt()
    res, run = lab.wait(timeout=30)
    assert time.time() - t0 < 10
    assert 0 < res["measured_s"] < 60 and res["sim_time_s"] == res["measured_s"]
    echoed = res["vms"][0]["tx_mbps"] * res["measured_s"] * 1e6 / 8
    assert echoed == pytest.approx(len(data), rel=1e-3), (echoed, res["measured_s"])
    assert "SIGINT" in run["pacing"]["stopped"], run["pacing"]
    assert any("SIGINT" in w for w in run["warnings"]), run["warnings"]


def test_guest_client_connects_out_to_a_linux_server(lab, tmp_path):
    sink = tmp_path / "received.bin"
    with open(sink, "wb") as f:
        server = lab.peer_popen("timeout", "20", "nc", "-l", "-p", "5001", stdout=f)
        time.sleep(0.5)
        # A guest tcp_tx client: sends the stream pattern to the Linux peer, then closes.
        lab.start("scenarios/netvp/sink.yaml", "duration=5s", "vms.0.workload.type=tcp_tx",
                  f"network.peer_ip={PEER_IP}", "vms.0.workload.total_bytes=2MiB",
                  "vms.0.workload.message_size=8000")
        res, _ = lab.wait()
        server.wait(timeout=30)
    got = sink.read_bytes()
    assert len(got) >= 2 << 20
    assert got == pattern(0, len(got))


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_bridge_capture_decodes_cleanly(lab, tmp_path):
    t_start = time.time()
    lab.start("scenarios/netvp/sink.yaml", "duration=4s", extra=["--pcap"])
    data = os.urandom(1 << 20)
    src = tmp_path / "d.bin"
    src.write_bytes(data)
    with open(src, "rb") as f:
        lab.peer("timeout", "20", "nc", "-N", TOE_IP, "5001", stdin=f, capture_output=True)
    lab.wait()
    pcap = lab.out / "netvp.pcap"
    base = ["tshark", "-r", str(pcap), "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    frames = subprocess.run(base + ["-T", "fields", "-e", "frame.number"], capture_output=True, text=True)
    assert len(frames.stdout.split()) > 500
    bad = subprocess.run(base + ["-Y", "_ws.malformed || ip.checksum.status == 0 || tcp.checksum.status == 0"],
                         capture_output=True, text=True)
    assert bad.stdout.strip() == "", bad.stdout[:1000]
    # Wall-clock timestamps (run.json says so): the capture lies within the run's wall time, so
    # mergecap can interleave it with a capture taken on the Linux peer.
    run = json.loads((lab.out / "run.json").read_text())
    assert run["pcap_clock"].startswith("wall")
    times = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-e", "frame.time_epoch"],
                           capture_output=True, text=True).stdout.split()
    assert t_start - 1 <= float(times[0]) <= float(times[-1]) <= time.time() + 1, (t_start, times[:1])


def ecn_capture(path):
    """(source IP, TCP flags, sequence number, payload bytes, IP ECN field) of every TCP/IPv4
    frame of a pcap."""
    raw = path.read_bytes()
    order = "<" if raw[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off = 24
    while off + 16 <= len(raw):
        incl = struct.unpack(order + "I", raw[off + 8:off + 12])[0]
        f = raw[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ihl = (f[14] & 0x0F) * 4
        total = struct.unpack("!H", f[16:18])[0]
        doff = (f[14 + ihl + 12] >> 4) * 4
        seq = struct.unpack("!I", f[14 + ihl + 4:14 + ihl + 8])[0]
        yield ".".join(map(str, f[26:30])), f[14 + ihl + 13], seq, total - ihl - doff, f[15] & 3


@pytest.mark.parametrize("mode, agreed", [("passive", True), ("off", False)])
def test_linux_asking_for_ecn_gets_it_from_a_passive_toe(lab, tmp_path, mode, agreed):
    # Linux with tcp_ecn=1 asks in its SYN (ECE+CWR); the TOE's default (passive) agrees with
    # ECE in the SYN-ACK and Linux sends its data ECT(0); `off` refuses (no ECE, Not-ECT data).
    assert lab.peer("sysctl", "-qw", "net.ipv4.tcp_ecn=1").returncode == 0
    lab.start("scenarios/netvp/sink.yaml", "duration=4s", f"toe.tcp.ecn={mode}", extra=["--pcap"])
    src = tmp_path / "d.bin"
    src.write_bytes(os.urandom(1 << 20))
    with open(src, "rb") as f:
        nc = lab.peer("timeout", "20", "nc", "-N", TOE_IP, "5001", stdin=f, capture_output=True)
    assert nc.returncode == 0, nc.stderr
    res, _ = lab.wait()
    assert res["stats"]["toe.ppm.tcpip"]["ecn_negotiated"] == (1 if agreed else 0)
    segs = list(ecn_capture(lab.out / "netvp.pcap"))
    syn, ack, ece, cwr = 0x02, 0x10, 0x40, 0x80
    syns = [fl for src_ip, fl, _, _, _ in segs if src_ip == PEER_IP and fl & syn and not fl & ack]
    synacks = [fl for src_ip, fl, _, _, _ in segs if src_ip == TOE_IP and fl & syn and fl & ack]
    assert syns and all(fl & (ece | cwr) == ece | cwr for fl in syns), syns
    assert synacks and all(fl & (ece | cwr) == (ece if agreed else 0) for fl in synacks), synacks
    # Linux's new data is ECT(0) on an ECN connection (CE had anything marked it: nothing does
    # on a veth); its retransmissions, as ours, are Not-ECT (RFC 3168 6.1.5).
    seen, new, again = set(), [], []
    for src_ip, _, seq, n, e in segs:
        if src_ip == PEER_IP and n > 0:
            (again if seq in seen else new).append(e)
            seen.add(seq)
    assert len(new) > 100
    assert all(e in ((2, 3) if agreed else (0,)) for e in new), sorted(set(new))
    assert all(e == 0 for e in again), sorted(set(again))
    print(f"{mode}: {len(new)} new data frames from Linux, {len(again)} retransmitted")
    # The TOE's own segments here are pure ACKs and the SYN-ACK: never ECT.
    assert all(e == 0 for src_ip, _, _, _, e in segs if src_ip == TOE_IP)


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def good_syn(eth: bytes, sport: int, dport: int, seq: int) -> bytes:
    """A well-formed SYN (correct checksums) from the peer to the TOE."""
    src, dst = socket.inet_aton(PEER_IP), socket.inet_aton(TOE_IP)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 0x50, 0x02, 1024, 0, 0)
    tcp = tcp[:16] + struct.pack("!H", csum(src + dst + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return eth + ip + tcp


def raw_frames(peer_mac: bytes, toe_mac: bytes):
    """Malformed and hostile frames for the TOE, built by hand."""
    eth = toe_mac + peer_mac + b"\x08\x00"
    ip_hdr = bytes.fromhex("45000028abcd40004006") + b"\x00\x00" + socket.inet_aton(PEER_IP) + socket.inet_aton(TOE_IP)
    frames = [
        eth,                                                     # IPv4 frame without a header
        eth + b"\x45\x00",                                       # truncated IPv4
        eth + ip_hdr + b"\x00" * 20,                             # IPv4 header checksum 0: bad
        eth + bytes.fromhex("4f00") + b"\x00" * 40,              # IHL 60 bytes > frame
        eth + ip_hdr[:9] + b"\x11" + ip_hdr[10:] + b"\x01" * 8,  # UDP, bad checksums
    ]
    # TCP SYN flood to a closed port with bogus options, and RSTs with random sequence numbers.
    for i in range(200):
        tcp = struct.pack("!HHIIBBHHH", 40000 + i, 9999, i * 7919, 0, 0x70, 0x02, 1024, 0xBEEF, 0)
        tcp += bytes([2, 1, 0, 0, 3, 9, 9, 9])  # MSS option with length 1: malformed
        frames.append(eth + ip_hdr + tcp)
        frames.append(eth + ip_hdr + struct.pack("!HHIIBBHHH", 50000, 5001, i * 104729, 0, 0x50, 0x04, 0, 0, 0))
    frames.append(eth + b"\xff" * 1500)                          # IPv4 garbage, full size
    frames += [good_syn(eth, 45000 + i, 9999, i) for i in range(20)]  # closed port: RST
    return frames


def test_hostile_frames_from_the_wire_while_a_transfer_runs(lab, tmp_path):
    lab.start("scenarios/netvp/sink.yaml", "duration=8s")
    data = os.urandom(4 << 20)
    src = tmp_path / "d.bin"
    src.write_bytes(data)
    with open(src, "rb") as f:
        transfer = lab.peer_popen("timeout", "30", "nc", "-N", TOE_IP, "5001", stdin=f)
        # A raw socket of the test's own in the peer's namespace sends the garbage.
        mac = lab.peer("cat", "/sys/class/net/vtoe-peer0/address", capture_output=True, text=True).stdout.strip()
        script = (
            "import socket,sys,pickle; s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('vtoe-peer0',0));"
            "fs=pickle.load(sys.stdin.buffer); [s.send(f) for _ in range(3) for f in fs]")
        import pickle
        frames = raw_frames(bytes.fromhex(mac.replace(":", "")), bytes.fromhex("020000000001"))
        lab.peer("python3", "-c", script, input=pickle.dumps(frames), check=True)
        assert transfer.wait(timeout=40) == 0
    res, _ = lab.wait()
    got = res["vms"][0]["rx_mbps"] * res["measured_s"] * 1e6 / 8
    assert got == pytest.approx(len(data), rel=1e-3)
    tcp = res["stats"]["toe.ppm.tcpip"]
    drops = sum(v for k, v in tcp.items() if k.startswith("drop_"))
    assert drops > 100 and tcp["rst_sent"] > 0
    assert tcp["drop_bad_ip_checksum"] > 0 and tcp["drop_truncated"] > 0


def costar_binary():
    from netvp_lab import vtoe_binary
    return vtoe_binary().parent.parent / "tools" / "costar" / "costar"


def test_two_guests_with_their_own_addresses_and_costar(lab, tmp_path):
    lab.start("scenarios/netvp/two_guests.yaml", "duration=10s")
    for ip, mac in ((TOE_IP, "02:00:00:00:00:01"), ("10.0.0.11", "02:00:00:00:10:01")):
        ping = lab.peer("ping", "-c", "2", "-W", "1", ip, capture_output=True, text=True)
        assert ping.returncode == 0, ping.stdout
        neigh = lab.peer("ip", "neigh", "show", ip, capture_output=True, text=True).stdout
        assert mac in neigh, neigh  # each guest answers ARP with its own MAC
    report = tmp_path / "costar.json"
    costar = lab.peer(str(costar_binary()), "client", "--target", f"{TOE_IP}:5001", "--target", "10.0.0.11:5001",
                      "--connections", "4", "--threads", "2", "--bytes", "4MiB", "--mode", "send",
                      "--timeout", "20", "--json", str(report), capture_output=True, text=True, timeout=120)
    assert costar.returncode == 0, costar.stdout + costar.stderr
    import json
    total = json.loads(report.read_text())["total"]
    assert total["connections"] == 4 and total["failed"] == 0
    res, _ = lab.wait()
    for vm in res["vms"]:  # two connections of 4 MiB each reached each guest
        got = vm["rx_mbps"] * res["measured_s"] * 1e6 / 8
        assert got == pytest.approx(8 << 20, rel=1e-3), (vm["name"], got)
        assert vm["transactions"] == 2 and vm["error"] == ""


def test_a_reset_from_linux_is_handled_and_the_guest_serves_the_next_client(lab, tmp_path):
    lab.start("scenarios/netvp/sink.yaml", "duration=6s")
    # A client that sends 1 MiB and then aborts: SO_LINGER 0 makes Linux close with an RST.
    script = (
        "import socket,struct; s=socket.create_connection(('10.0.0.1',5001));"
        "s.sendall(b'x'*(1<<20)); s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii',1,0));"
        "s.close()")
    lab.peer("python3", "-c", script, check=True, timeout=30)
    time.sleep(0.5)
    # The guest's sink dropped the reset connection and accepts the next one.
    data = os.urandom(2 << 20)
    src = tmp_path / "d.bin"
    src.write_bytes(data)
    with open(src, "rb") as f:
        nc = lab.peer("timeout", "20", "nc", "-N", TOE_IP, "5001", stdin=f, capture_output=True)
    assert nc.returncode == 0, nc.stderr
    res, _ = lab.wait()
    vm = res["vms"][0]
    assert vm["transactions"] == 2 and vm["error"] == ""
    assert res["stats"]["toe.ppm.tcpip"]["rst_in"] >= 1
    got = vm["rx_mbps"] * res["measured_s"] * 1e6 / 8
    assert len(data) <= got <= len(data) + (1 << 20) + 1  # the reset connection's bytes may be cut short


def test_costar_echoes_through_ten_thousand_connections_at_once(lab, tmp_path):
    # Issue 13's server load through NetVP: thousands of Linux connections open at once into the
    # guest's echo server, each echoing 32 KiB that Costar verifies byte for byte, with the keys
    # docs/user-guide.md gives for 10,000 clients. (Before the core model's ready set was
    # ordered, picking among thousands of ready server processes was linear: the simulation fell
    # 30 s behind the wire and 9,832 of 10,000 connections failed.)
    # 4,000 by default (500 under ASan, where the simulation runs many times slower than the
    # wire); VTOE_NETVP_CONNECTIONS=10000 runs the full case. Before the inbound wire carried a
    # poll's frames at the line rate, they entered the MAC at one instant, the PPM's receive
    # FIFO dropped ~40 % of them, and a few hundred connections got no echo at all (one run in
    # five at 10,000; 53 of 4,000 in one CI run): docs/netvp.md, "Fixed".
    n = int(os.environ.get("VTOE_NETVP_CONNECTIONS") or scaled(4000, 500))
    lab.start("scenarios/netvp/echo.yaml", "duration=120s", "toe.ccb.connections=16384",
              "vms.0.workload.backlog=16384", "guest.socket.send_buffer=4KiB",
              "guest.socket.recv_buffer=4KiB")
    report = tmp_path / "costar.json"
    costar = lab.peer(str(costar_binary()), "client", "--target", f"{TOE_IP}:7", "--connections",
                      str(n), "--threads", "2", "--bytes", "32KiB", "--mode", "echo",
                      "--timeout", "60", "--json", str(report), capture_output=True, text=True,
                      timeout=600)
    total = json.loads(report.read_text())["total"] if report.exists() else {}
    assert costar.returncode == 0, (total, costar.stderr[-2000:])
    assert total["connections"] == n and total["failed"] == 0
    assert total["bytes"] == n * 32 * 1024
    lab.interrupt()  # every connection is done: end the 120 s run here
    res, run = lab.wait()
    vm, stats = res["vms"][0], res["stats"]
    assert vm["error"] == "" and vm["transactions"] == n
    assert stats["host.sockets"]["sockets_freed"] == n  # every socket went back to the kernel
    assert stats["toe.ppm.tcpip"]["drop_listen_overflow"] == 0
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    wire = stats["netvp_wire"]
    print(f"{n} echo connections in {total['seconds']:.1f} s; simulation lag up to "
          f"{run['pacing']['max_lag_us'] / 1e6:.1f} s; largest child process {peak_mib:.0f} MiB; "
          f"inbound wire: {wire['frames']} frames, {wire['drops']} dropped full, "
          f"{wire['stale_drops']} stale, wall wait up to {wire['wall_wait_us']['max'] / 1e3:.0f} "
          f"ms; PPM receive FIFO drops {stats['toe.ppm']['rx_fifo_drops']}")
