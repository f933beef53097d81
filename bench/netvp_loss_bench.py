#!/usr/bin/env python3
"""TCP under loss (issue 12): the goodput of a 4 MiB echo with 2 % random loss in both
directions, in one run,
  (a) Linux to Linux: a Python echo server in one namespace, the client in the other;
  (b) Linux to vtoe's guest through NetVP (scenarios/netvp/echo.yaml, port 7);
both on the same kind of veth pair (scripts/netvp-lab.sh with offloads off, as in the issue)
with the same nftables rule on the input and output hooks of the client's namespace
(tests/netvp/loss_echo.py). Goodput is the bytes echoed over the time from the established
connection to the end of the echoed stream; the handshake is printed apart (a lost SYN or
SYN-ACK costs a 1 s initial RTO on either path). Prints every run, the median of each path and
the ratio vtoe / Linux of the medians (issue 12's goal: >= 0.5).
Usage (root): bench/netvp_loss_bench.py [--runs 3] [--loss 2] [--bytes 4194304] [--vtoe PATH] [--linux-cc CC]
                                        [--only linux|vtoe] [--set KEY=VALUE ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "netvp"))
import loss_echo  # noqa: E402

LAB = ROOT / "scripts" / "netvp-lab.sh"
SERVER_IP, CLIENT_IP = "10.0.0.1", "10.0.0.2"


class Lab:
    """A lab of our own (unique namespace names), offloads off, removed on exit."""

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.server_ns, self.client_ns = f"vb{tag}s", f"vb{tag}p"
        self.env = dict(os.environ, VTOE_SIM_NS=self.server_ns, VTOE_PEER_NS=self.client_ns,
                        VTOE_IF="vtoe0", VTOE_PEER_IF="vtoe-peer0",
                        VTOE_PEER_ADDR=f"{CLIENT_IP}/24", VTOE_LAB_OFFLOADS="off")

    def __enter__(self):
        subprocess.run([str(LAB), "up"], env=self.env, check=True, capture_output=True)
        return self

    def __exit__(self, *exc):
        subprocess.run([str(LAB), "down"], env=self.env, capture_output=True)


def print_run(path, i, r, extra=""):
    print(f"  {path} run {i}: {r['goodput_mbps']:8.1f} Mbit/s  "
          f"({r['elapsed_s'] * 1e3:7.1f} ms after "
          f"a {r['connect_s'] * 1e3:.1f} ms connect, "
          f"intact {r['intact']}, Linux retransmits {r['linux_retransmits']}, "
          f"options {','.join(r['linux_options'])}, congestion {r['linux_congestion']}){extra}",
          flush=True)
    if not r["intact"]:
        raise SystemExit(f"{path} run {i}: the echo came back wrong: {r}")


def linux_to_linux(args):
    with Lab() as lab:
        # The server side gets the address the simulated TOE has in (b).
        subprocess.run(["ip", "-n", lab.server_ns, "addr", "add", f"{SERVER_IP}/24", "dev",
                        "vtoe0"], check=True)
        loss_echo.add_loss(lab.client_ns, args.loss)
        server = loss_echo.start_server_in(lab.server_ns, 7007, args.runs, args.linux_cc)
        runs = []
        for i in range(args.runs):
            r = loss_echo.run_client_in(lab.client_ns, SERVER_IP, 7007, args.bytes, salt=i,
                                        cc=args.linux_cc)
            print_run("linux", i + 1, r)
            runs.append(r)
        server.wait(timeout=30)
        drops = loss_echo.dropped(lab.client_ns)
        print(f"  linux: loss rule dropped {drops}")
        return runs


def linux_to_vtoe(args):
    with Lab() as lab, tempfile.TemporaryDirectory() as tmp:
        loss_echo.add_loss(lab.client_ns, args.loss)
        out = Path(tmp) / "out"
        duration = 6 + 4 * args.runs
        cmd = ["ip", "netns", "exec", lab.server_ns, args.vtoe, "run",
               str(ROOT / "scenarios/netvp/echo.yaml"), "--out", str(out), "--quiet",
               "--set", f"duration={duration}s"]
        for s in args.set:
            cmd += ["--set", s]
        sim = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while subprocess.run(["ip", "netns", "exec", lab.client_ns, "ping", "-c", "1", "-W", "1",
                              SERVER_IP], capture_output=True).returncode != 0:
            if time.time() > deadline or sim.poll() is not None:
                sim.kill()
                raise SystemExit(f"the simulated host never answered: {sim.communicate()[1]}")
        runs = []
        for i in range(args.runs):
            r = loss_echo.run_client_in(lab.client_ns, SERVER_IP, 7, args.bytes, salt=i,
                                        cc=args.linux_cc)
            print_run("vtoe ", i + 1, r)
            runs.append(r)
        drops = loss_echo.dropped(lab.client_ns)
        _, err = sim.communicate(timeout=duration + 60)
        if sim.returncode != 0:
            raise SystemExit(f"vtoe failed: {err}")
        res = json.loads((out / "results.json").read_text())
        run = json.loads((out / "run.json").read_text())
        tcp = res["stats"]["toe.ppm.tcpip"]
        keys = ("tcp_data_segs_out", "retransmits", "fast_retransmits", "rto_timeouts",
                "tlp_probes", "tlp_recoveries", "sack_lost_marks", "dsacks_sent", "dsacks_in",
                "fast_recoveries_undone", "spurious_rto_undone", "hystart_exits", "ooo_segments")
        print(f"  vtoe: loss rule dropped {drops}")
        print("  vtoe's engine, all runs: " + ", ".join(f"{k} {tcp[k]}" for k in keys))
        print(f"  vtoe pacing: max lag {run['pacing']['max_lag_us']:.0f} us, mean "
              f"{run['pacing']['mean_lag_us']:.0f} us, wire queue drops "
              f"{run['pacing'].get('wire_queue_drops', 0)}")
        return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--loss", type=int, default=2, help="per cent, each direction")
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--vtoe", default=str(ROOT / "build/release/app/vtoe"))
    ap.add_argument("--set", action="append", default=[], help="scenario key for the vtoe run")
    ap.add_argument("--only", choices=("linux", "vtoe"), help="measure one path only")
    ap.add_argument("--linux-cc", default="",
                    help="Linux's congestion control on the echo sockets (default: the host's, "
                    "net.ipv4.tcp_congestion_control; bbr on these machines)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (network namespaces)")
    if loss_echo.nft_missing():
        raise SystemExit(loss_echo.nft_missing())
    cc = args.linux_cc or Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    print(f"{args.bytes} bytes echoed, {args.loss} % TCP loss each way, {args.runs} runs per path; "
          f"Linux congestion control {cc}; kernel {os.uname().release}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    fmt = lambda rs: ", ".join(f"{r['goodput_mbps']:.1f}" for r in rs)  # noqa: E731
    med = lambda rs: statistics.median(r["goodput_mbps"] for r in rs)  # noqa: E731
    if args.only != "vtoe":
        print("(a) Linux to Linux")
        lin = linux_to_linux(args)
    if args.only != "linux":
        keys = f" ({' '.join(args.set)})" if args.set else ""
        print(f"(b) Linux to vtoe's guest through NetVP{keys}")
        vt = linux_to_vtoe(args)
    if args.only != "vtoe":
        print(f"linux to linux: {fmt(lin)} Mbit/s (median {med(lin):.1f})")
    if args.only != "linux":
        print(f"linux to vtoe:  {fmt(vt)} Mbit/s (median {med(vt):.1f})")
    if not args.only:
        print(f"ratio vtoe / linux (medians): {med(vt) / med(lin):.3f}   (issue 12 goal: >= 0.5)")

if __name__ == "__main__":
    main()
