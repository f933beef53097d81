#!/usr/bin/env python3
"""TCP under loss (issue 12): the goodput of a 4 MiB echo with 2 % random loss in both
directions, in one run,
  (a) Linux to Linux: a Python echo server in one namespace, the client in the other;
  (b) Linux to vtoe's guest through NetVP (scenarios/netvp/echo.yaml, port 7);
both on the same kind of veth pair (scripts/netvp-lab.sh with offloads off, as in the issue)
with the same nftables rule on the input and output hooks of the client's namespace
(tests/netvp/loss_echo.py). Goodput is the bytes echoed over the time from the established
connection to the end of the echoed stream; the handshake is printed apart (a lost SYN or
SYN-ACK costs a 1 s initial RTO on either path). The two paths run in labs of their own, side by
side, and their runs alternate (a, b, a, b, ...), so that a busier moment of a shared machine
falls on both. Prints every run, the median of each path and the ratio vtoe / Linux of the
medians (issue 12's goal: >= 0.5). Single echoes move by tens of per cent (a 200 ms
retransmission timeout on either path turns one into ~140 Mbit/s), hence 15 runs by default.
Usage (root): bench/netvp_loss_bench.py [--runs 15] [--loss 2] [--bytes 4194304] [--vtoe PATH] [--linux-cc CC]
                                        [--only linux|vtoe] [--set KEY=VALUE ...]
"""
import argparse
import contextlib
import json
import os
import signal
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


class LinuxPath:
    """(a): a Linux echo server in a lab of its own, loss on the client's side."""

    name = "linux"

    def __init__(self, args):
        self.args = args

    def __enter__(self):
        self.lab = Lab().__enter__()
        # The server side gets the address the simulated TOE has in (b).
        subprocess.run(["ip", "-n", self.lab.server_ns, "addr", "add", f"{SERVER_IP}/24", "dev",
                        "vtoe0"], check=True)
        loss_echo.add_loss(self.lab.client_ns, self.args.loss)
        self.server = loss_echo.start_server_in(self.lab.server_ns, 7007, self.args.runs,
                                                self.args.linux_cc)
        return self

    def run(self, i):
        return loss_echo.run_client_in(self.lab.client_ns, SERVER_IP, 7007, self.args.bytes,
                                       salt=i, cc=self.args.linux_cc)

    def finish(self):
        self.server.wait(timeout=30)
        print(f"  linux: loss rule dropped {loss_echo.dropped(self.lab.client_ns)}")

    def __exit__(self, *exc):
        if self.server.poll() is None:
            self.server.kill()
        self.lab.__exit__(*exc)


class VtoePath:
    """(b): the guest's echo server through NetVP, in a lab of its own, the same loss rule. The
    simulation runs until the runs are done and is then ended with SIGINT (its results cover
    the simulated time up to there)."""

    name = "vtoe "

    def __init__(self, args):
        self.args = args

    def __enter__(self):
        self.lab = Lab().__enter__()
        self.tmp = tempfile.TemporaryDirectory()
        loss_echo.add_loss(self.lab.client_ns, self.args.loss)
        self.out = Path(self.tmp.name) / "out"
        cmd = ["ip", "netns", "exec", self.lab.server_ns, self.args.vtoe, "run",
               str(ROOT / "scenarios/netvp/echo.yaml"), "--out", str(self.out), "--quiet",
               "--set", "duration=3600s"]
        for s in self.args.set:
            cmd += ["--set", s]
        self.sim = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
        deadline = time.time() + 10
        while subprocess.run(["ip", "netns", "exec", self.lab.client_ns, "ping", "-c", "1", "-W",
                              "1", SERVER_IP], capture_output=True).returncode != 0:
            if time.time() > deadline or self.sim.poll() is not None:
                self.sim.kill()
                raise SystemExit(f"the simulated host never answered: {self.sim.communicate()[1]}")
        return self

    def run(self, i):
        return loss_echo.run_client_in(self.lab.client_ns, SERVER_IP, 7, self.args.bytes, salt=i,
                                       cc=self.args.linux_cc)

    def finish(self):
        drops = loss_echo.dropped(self.lab.client_ns)
        self.sim.send_signal(signal.SIGINT)
        _, err = self.sim.communicate(timeout=60)
        if self.sim.returncode != 130:  # ended by SIGINT, its results kept
            raise SystemExit(f"vtoe failed: {err}")
        res = json.loads((self.out / "results.json").read_text())
        run = json.loads((self.out / "run.json").read_text())
        tcp = res["stats"]["toe.ppm.tcpip"]
        keys = ("tcp_data_segs_out", "retransmits", "fast_retransmits", "rto_timeouts",
                "tlp_probes", "tlp_recoveries", "sack_lost_marks", "dsacks_sent", "dsacks_in",
                "fast_recoveries_undone", "spurious_rto_undone", "hystart_exits", "ooo_segments")
        print(f"  vtoe: loss rule dropped {drops}")
        print("  vtoe's engine, all runs: " + ", ".join(f"{k} {tcp[k]}" for k in keys))
        print(f"  vtoe pacing: max lag {run['pacing']['max_lag_us']:.0f} us, mean "
              f"{run['pacing']['mean_lag_us']:.0f} us, wire queue drops "
              f"{run['pacing'].get('wire_queue_drops', 0)}")

    def __exit__(self, *exc):
        if self.sim.poll() is None:
            self.sim.kill()
            self.sim.wait()
        self.tmp.cleanup()
        self.lab.__exit__(*exc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=15)
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
    paths = []
    if args.only != "vtoe":
        paths.append(LinuxPath(args))
    if args.only != "linux":
        paths.append(VtoePath(args))
    keys = f" ({' '.join(args.set)})" if args.set else ""
    print("(a) Linux to Linux; (b) Linux to vtoe's guest through NetVP" + keys +
          "; the runs alternate between the paths, so both see the same machine")
    results = {p.name: [] for p in paths}
    with contextlib.ExitStack() as stack:
        for p in paths:
            stack.enter_context(p)
        for i in range(args.runs):
            for p in paths:
                r = p.run(i)
                print_run(p.name, i + 1, r)
                results[p.name].append(r)
        for p in paths:
            p.finish()
    lin, vt = results.get("linux"), results.get("vtoe ")
    if lin:
        print(f"linux to linux: {fmt(lin)} Mbit/s (median {med(lin):.1f})")
    if vt:
        print(f"linux to vtoe:  {fmt(vt)} Mbit/s (median {med(vt):.1f})")
    if lin and vt:
        print(f"ratio vtoe / linux (medians): {med(vt) / med(lin):.3f}   (issue 12 goal: >= 0.5)")


if __name__ == "__main__":
    main()
