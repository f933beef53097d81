#!/usr/bin/env python3
"""The SocksDirect study (paper: shared/papers/socksdirect-evaluation.tex, evaluation): `make studies`.

Intra-host paths between two VMs, each on a core of its own under direct access
(scenarios/study/socksdirect/pair.yaml), as --set overrides:

  K   kernel socket over the TOE's loopback (the Linux analogue: system calls, interrupts, copies)
  U   the user-space TOE channel over the same loopback: no system call, the ECQ polled, no
      interrupt (the RDMA / NIC-hairpin analogue)
  UZ  U with zero copy (the TOE's DMA from and to pinned user pages at >= 8 KiB)
  S   a shared-memory ring pair set up by the monitor, polled (SocksDirect's intra-host path)
  SZ  S with page remapping at >= 8 KiB (SocksDirect's zero copy)

Sweeps: message size (ping-pong RTT with p1/p50/p99, and one-way streaming throughput), pairs of
VMs on their own cores (S, U and K, 1 to 16 pairs as the paper's Fig. corenum), connections
served round robin by one rpc client (S, U and K, across toe.ccb.cache as the paper's
Fig. connnum), and connection setup per second (K and U, the connect workload). The report orders the paths by latency as the paper's text does, and gives a verdict
per claim computed from the runs (docs/studies-socksdirect.md). The report opens with the
verdict table (pass, fail or not posed, with the reason; the script prints it too);
OUT/summary.json holds every number (the figures the doc quotes among them). A run with an
application error, or with a pair below a tenth of the other pairs' median, fails its guard
(row G) and is no data point: the verdicts that need it are not posed. The script exits 1 when
any verdict fails.

    python3 scripts/study_socksdirect.py [--quick] [--jobs N] [--out DIR] [--no-figures]

--quick (run by `make test` through tests/scripts/test_study_socksdirect.py) runs fewer sizes
with shorter windows; the checks are the same.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

import study_common
import study_sensitivity
from study_common import verdict, vtoe_bin

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "scenarios" / "study" / "socksdirect" / "pair.yaml"
SYSCALL_CYCLES = 1000.0  # guest.costs.syscall (its default): one kernel crossing, 0.5 us at 2 GHz
PATHS = {
    "K": {"path": "socket", "zero_copy": False},
    "U": {"path": "user", "zero_copy": False},
    "UZ": {"path": "user", "zero_copy": True},
    "S": {"path": "shm", "zero_copy": False},
    "SZ": {"path": "shm", "zero_copy": True},
}
ORDER = ["S", "U", "K"]  # the paper's: shared memory < NIC hairpin / RDMA < kernel (004:108-111)
SIZES = [8, 512, 8192, 65536, 1048576]
QUICK_SIZES = [8, 8192, 1048576]
# Pairs of VMs on their own cores, up to the paper's 16 (004:193): 32 VMs under da, each with a
# TOE channel of its own (toe.channels at most 32, a bit each in the TOE's interrupt vector).
PAIRS = [1, 2, 4, 8, 16]
QUICK_PAIRS = [1, 4, 16]
PAIR_PATHS = ["S", "U", "K"]
# Connections one rpc client serves round robin (004:181-185), against the TOE's on-chip
# connection cache (toe.ccb.cache), the NIC cache behind RDMA's drop past 512. Both ends of a
# loopback connection hold a context in the one TOE: CCB_CACHE / 2 connections fit.
CCB_CACHE = 256
CONNS = [1, 32, 128, 256, 1024]
QUICK_CONNS = [1, 128, 1024]
WORKERS = 4  # co-located workers on the client's core (SD6), of which ACTIVE send
ACTIVE = [1, 2, 4]
# SD6 paths: the client's; the server is a kernel-socket echo in every case (its idle workers
# sleep), so the client's way of sharing its core is the difference.
SHARE = {"K": {"path": "socket", "cooperative": False},
         "U": {"path": "user", "cooperative": False},
         "UC": {"path": "user", "cooperative": True}}


def swept(p):
    """Is the point in the sensitivity sweeps? The scaling runs (several pairs, many connections)
    are not: they would double the study's time (docs/studies-socksdirect.md)."""
    return p["kind"] not in ("conns", "pairs")


def uses_socket(p):
    """Does the point make system calls (a kernel-socket VM in it)? Co-located workers' runs
    always do: their server is a kernel-socket echo."""
    return swept(p) and (p["kind"] == "share" or p["path"] == "K")


def uses_poll(p):
    """Does a VM of the point poll (shared memory or the user-space TOE channel)?"""
    if not swept(p):
        return False
    if p["kind"] == "share":
        return p["share"] in ("U", "UC")
    return p["path"] != "K"


# The assumed costs the verdicts rest on (neither measured nor fitted: docs/calibration.md),
# swept by scripts/study_sensitivity.py over the points that use them.
ASSUMED = [
    study_sensitivity.Constant(
        "syscall", "a kernel crossing", ("guest.costs.syscall",),
        "assumed 1000 cycles (0.5 us), S2's threshold; Linux on vtoe's ISS takes 1027 "
        "(docs/calibration.md), the paper's Xeon 0.2 us = 400 cycles at 2 GHz (x0.4)",
        lambda p: {"guest.costs.syscall": SYSCALL_CYCLES} if uses_socket(p) else {},
        factors=(0.4, 0.5, 0.71, 1.41, 2.0)),
    study_sensitivity.Constant(
        "poll", "one turn of a polling loop", ("guest.costs.poll",),
        "assumed 100 cycles: a load of a cache line the other core owns (about 50 ns); half "
        "to twice",
        lambda p: {"guest.costs.poll": 100.0} if uses_poll(p) else {}),
    study_sensitivity.Constant(
        "page_remap", "remapping or pinning a 4 KiB page", ("guest.costs.page_remap",),
        "assumed 1000 cycles per page (a page-table update and a TLB invalidation); half to "
        "twice",
        lambda p: {"guest.costs.page_remap": 1000.0}
        if p["kind"] in ("rtt", "stream") and PATHS[p["path"]]["zero_copy"] and
        p["size"] >= 8192 else {}),
    study_sensitivity.Constant(
        "coop_switch", "a switch between user-level threads", ("guest.costs.coop_switch",),
        "assumed 200 cycles (saving and restoring registers, no kernel); half to twice",
        lambda p: {"guest.costs.coop_switch": 200.0}
        if p["kind"] == "share" and p["share"] == "UC" else {}, quick=True),
    study_sensitivity.Constant(
        "context_switch", "a switch between kernel processes", ("guest.costs.context_switch",),
        "assumed 1500 cycles; Linux on vtoe's ISS spends 2415 in the scheduler per command, "
        "more than one switch (docs/calibration.md); half to twice",
        lambda p: {"guest.costs.context_switch": 1500.0} if uses_socket(p) else {}),
]


def window(size, quick):
    """(duration, warmup): large messages take milliseconds each."""
    if size >= 65536:
        return ("40ms", "8ms") if quick else ("100ms", "10ms")
    return ("8ms", "3ms") if quick else ("20ms", "4ms")


# ------------------------------------------------------------------------------------------ runs

def scenario(point, quick):
    """The scenario of one point, as a dict (the pair, or several pairs side by side)."""
    base = yaml.safe_load(PAIR.read_text())
    path = PATHS[point["path"]]
    size = point.get("size", 8)
    duration, warmup = window(size, quick)
    base["duration"], base["warmup"] = duration, warmup
    client_type = {"rtt": "rpc", "stream": "tcp_tx", "connect": "connect",
                   "share": "rpc", "conns": "rpc", "pairs": "rpc"}[point["kind"]]
    server_type = "echo" if point["kind"] in ("rtt", "share", "conns", "pairs") else "sink"
    pairs = point.get("pairs", 1)
    vms, regions = [], []
    for i in range(pairs):
        c, s = (f"client{i}", f"server{i}") if pairs > 1 else ("client", "server")
        common = {"path": path["path"], "zero_copy": path["zero_copy"]}
        vms.append({"name": c, "pin": str(2 * i), "workload": {
            **common, "type": client_type, "peer": s, "start": "1ms", "message_size": size,
            "response_size": size}})
        vms.append({"name": s, "pin": str(2 * i + 1), "workload": {
            **common, "type": server_type, "message_size": size}})
        regions.append({"name": f"pair{i}", "vms": f"{c},{s}", "size": "4MiB", "slot": "64KiB"})
    base["vms"], base["shared_memory"] = vms, regions
    # Each channel's interrupt on its own VM's core (a vector per queue, as RSS or irqbalance
    # place them): on one core the hypervisor's handling for every pair starves that core's
    # pair. The co-located workers (SD6) keep the TOE's one interrupt on core 0.
    base["platform"] = {"cores": 2 * pairs,
                        "irq_steering": "core" if point["kind"] == "share" else "vm"}
    if pairs > 1:
        # 1 GiB of DRAM holds 32 guests of 24 MiB and the pairs' regions (not 128 MiB each).
        base["platform"]["guest_memory"] = "24MiB"
    if 2 * pairs > base["toe"].get("channels", 8):  # a channel of its own for every VM
        base["toe"]["channels"] = 2 * pairs
    if point["kind"] == "conns":
        # Every connection is set up (K about 13 us each) before the measured window opens.
        setup_ms = 2 + point["conns"] * 0.02
        base["warmup"] = f"{setup_ms:.2f}ms"
        base["duration"] = f"{setup_ms + (5 if quick else 10):.2f}ms"
        vms[0]["workload"]["connections"] = point["conns"]
        vms[1]["workload"]["connections"] = point["conns"]  # one echo process serves them all
        base["toe"]["ccb"] = {"cache": point.get("cache", CCB_CACHE),
                              "connections": 2 * max(CONNS) + 16}
    if point["kind"] == "connect":
        base["vms"][1]["workload"]["path"] = "socket" if path["path"] == "socket" else "user"
    if point["kind"] == "share":
        client, server = base["vms"][0]["workload"], base["vms"][1]["workload"]
        client.update(SHARE[point["share"]])
        client.update({"processes": point["workers"], "active": point["active"],
                       "zero_copy": False})
        server.update({"path": "socket", "zero_copy": False})
    return base


def run_point(point, quick=False):
    """One vtoe run: (point, measured dict). Raises on a failed run."""
    with tempfile.TemporaryDirectory() as out:
        scen = Path(out) / "scenario.yaml"
        scen.write_text(yaml.safe_dump(scenario(point, quick)))
        cmd = [vtoe_bin(), "run", str(scen), "--out", out, "--quiet"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} ({point}) failed:\n{proc.stderr}")
        res = json.loads((Path(out) / "results.json").read_text())
    return point, measure(point, res)


def measure(point, res):
    """The measured dict of one point's results.json."""
    clients, servers = res["vms"][0::2], res["vms"][1::2]
    s = res["measured_s"]
    m = {
        "msgs_per_s": sum(c["transactions"] for c in clients) / s,  # rtt: round trips
        "per_pair": [c["transactions"] / s for c in clients],
        "rx_gbps": sum(v["rx_mbps"] for v in servers) / 1e3,
        "interrupts": sum(v["interrupts"] for v in res["vms"]),
        "error": "; ".join(v["error"] for v in res["vms"] if v["error"]),
    }
    if point["kind"] == "stream":
        m["msgs_per_s"] = m["rx_gbps"] * 1e9 / 8 / point["size"]
    if "latency" in clients[0]:
        m["latency"] = {k: clients[0]["latency"][k] for k in ("count", "p1_us", "p50_us", "p99_us")}
        m["latency"]["mean_us"] = clients[0]["mean_latency_us"]
        m["cdf"] = clients[0]["latency"]["cdf"]
    return m


def pair_counts(quick):
    return QUICK_PAIRS if quick else PAIRS


def conn_counts(quick):
    return QUICK_CONNS if quick else CONNS


def grid(quick):
    sizes = QUICK_SIZES if quick else SIZES
    points = [{"kind": k, "path": p, "size": m} for k in ("rtt", "stream") for p in PATHS
              for m in sizes]
    # The scaling series has its own one-pair runs: its points are not in the sensitivity sweeps,
    # and a ratio of a swept run to an unswept one would measure the sweep.
    points += [{"kind": "pairs", "path": p, "size": 8, "pairs": n} for p in PAIR_PATHS
               for n in pair_counts(quick)]
    points += [{"kind": "conns", "path": p, "conns": n} for p in PAIR_PATHS
               for n in conn_counts(quick)]
    points += [{"kind": "connect", "path": p} for p in ("K", "U")]
    points += [{"kind": "share", "path": "K", "share": c, "workers": k, "active": a}
               for c in SHARE for k, a in [(1, 1)] + [(WORKERS, a) for a in ACTIVE]]
    return points


def key(p):
    if p["kind"] == "share":
        return ("share", p["share"], p["workers"], p["active"])
    if p["kind"] == "conns":
        return ("conns", p["path"], 8, p["conns"])
    return (p["kind"], p["path"], p.get("size", 8), p.get("pairs", 1))


# ---------------------------------------------------------------------------------------- checks

def guard(runs):
    """{key: why} for every run that failed its guard: an application error, or (several pairs
    side by side, equal weight and equal work) a pair below a tenth of the other pairs' median."""
    failed = {}
    for p, m in runs:
        why = [m["error"]] if m["error"] else []
        if p.get("pairs", 1) > 1:
            why += [f"pair {i} {m['per_pair'][i]:,.0f} round trips/s against the other pairs' "
                    f"median {med:,.0f}" for i, med in study_common.starved(m["per_pair"])]
        if why:
            failed[key(p)] = "; ".join(why)
    return failed


def label(k):
    return " ".join(str(x) for x in k)


def analyse(runs, costs=None):
    """The verdict rows; `costs` {key: value}: the assumed costs of these runs where they are
    not the defaults (the sensitivity sweep: S2's threshold is the system call's cost)."""
    syscall_us = (costs or {}).get("guest.costs.syscall", SYSCALL_CYCLES) / 2e9 * 1e6
    r = {key(p): m for p, m in runs}
    failed = guard(runs)
    rows = []

    def row(rid, claim, paper, vtoe, test, cls, ok, uses=None, why=None, margin=None):
        """A verdict row; `uses(key)` picks the runs its verdict rests on (a failed one makes it
        not posed); `ok` None (with `why`) for a claim not posed; `margin`: how far the test is
        from failing, as a fraction of its threshold (the sensitivity plot)."""
        x = {"id": rid, "claim": claim, "paper": paper, "vtoe": vtoe, "test": test, "class": cls,
             "verdict": verdict(ok)}
        if ok is None:
            x["reason"] = why or test
        if margin is not None:
            x["margin"] = margin
        return study_common.not_posed(x, [label(k) for k in sorted(failed, key=str)
                                          if uses and uses(k)])

    def single(k):  # the one-pair size sweeps
        return k[0] in ("rtt", "stream") and k[3] == 1
    sizes = sorted({p["size"] for p, _ in runs if p["kind"] == "rtt" and "pairs" not in p})
    big = max(sizes)

    def rtt(path, size=8, q="p50_us"):
        return r[("rtt", path, size, 1)]["latency"][q]

    def rate(path, size):
        return r[("stream", path, size, 1)]["msgs_per_s"]

    order = sorted(ORDER, key=lambda p: rtt(p))
    rows.append(row("S1", "Intra-host round trip: shared memory below the NIC hairpin below the "
                          "kernel socket (004:108-110)", "0.3 < 1.5 < 10.5 us",
                    ", ".join(f"{p} {rtt(p):.2f} (p1 {rtt(p, q='p1_us'):.2f}, p99 "
                              f"{rtt(p, q='p99_us'):.2f})" for p in order) + " us",
                    "p50 and p99 at 8 B: S < U < K", "shape",
                    order == ORDER and rtt("S", q="p99_us") < rtt("U", q="p1_us") and
                    rtt("U", q="p99_us") < rtt("K", q="p1_us"), single,
                    margin=min(1 - rtt("S", q="p99_us") / rtt("U", q="p1_us"),
                               1 - rtt("U", q="p99_us") / rtt("K", q="p1_us"))))
    one_way = rtt("S") / 2
    rows.append(row("S2", "Shared-memory one-way delay below one kernel crossing (004:111)",
                    "0.15 < 0.2 us", f"{one_way:.3f} us against {syscall_us:.3f} us "
                    "(guest.costs.syscall)", "RTT(S)/2 < one system call", "shape",
                    one_way < syscall_us, single, margin=1 - one_way / syscall_us))
    rtt_x = rtt("K") / rtt("S")
    msg_x = rate("S", 8) / rate("K", 8)
    rows.append(row("S3", "Small messages: shared memory far ahead of the kernel socket "
                          "(004:78-79, 108)", "35x lower RTT, 20x msg/s",
                    f"{rtt_x:.1f}x lower RTT, {msg_x:.1f}x msg/s at 8 B",
                    "both >= 5 (the order of magnitude, not 20x / 35x)", "shape",
                    rtt_x >= 5 and msg_x >= 5, single, margin=min(rtt_x, msg_x) / 5 - 1))
    at8k = rate("S", 8192) / rate("K", 8192)
    rows.append(row("S4", "8 KiB: copy-bound, the gap shrinks to +60 % throughput "
                          "(004:113)", "1.6x", f"{at8k:.2f}x at 8 KiB against {msg_x:.1f}x at 8 B",
                    "ratio at 8 KiB < 0.5 x ratio at 8 B", "shape", at8k < 0.5 * msg_x, single,
                    margin=1 - at8k / (0.5 * msg_x)))
    zc = rate("SZ", big) / rate("K", big)
    lat_zc = rtt("K", big) / rtt("SZ", big)
    rows.append(row("S5", "Zero copy (page remapping) restores the gap for large messages "
                          "(004:113)", "1 MiB: 26x throughput, 13x lower latency",
                    f"{big // 1024} KiB: {zc:.1f}x throughput, {lat_zc:.1f}x lower RTT "
                    f"(S without remapping: {rate('S', big) / rate('K', big):.2f}x)",
                    "SZ/K throughput at the largest size > S/K at 8 KiB, and >= 3", "shape",
                    zc > at8k and zc >= 3, single, margin=min(zc / at8k - 1, zc / 3 - 1)))
    uz = max(rate("UZ", m) / rate("U", m) for m in sizes if m >= 8192)
    rows.append(row("S6z", "Kernel bypass plus zero copy beats its copying self from 8 KiB "
                           "(004:120, the inter-host 2x over LibVMA)", "2x",
                    f"best UZ/U throughput at >= 8 KiB: {uz:.2f}x",
                    "UZ > U at some size >= 8 KiB", "shape", uz > 1, single, margin=uz - 1))
    n = max(pairs_of(runs))
    scale = {p: r[("pairs", p, 8, n)]["msgs_per_s"] / r[("pairs", p, 8, 1)]["msgs_per_s"]
             for p in PAIR_PATHS}
    rows.append(row("S10", "Throughput scales linearly with cores (004:88, 190-193)",
                    "306 M msg/s with 16 pairs = 13.3x one pair",
                    f"{n} pairs: " + ", ".join(f"{p} {scale[p]:.2f}x" for p in PAIR_PATHS) +
                    " one pair",
                    f"S >= {0.9 * n:.1f}x (U and K reported: their pairs share one TOE)", "shape",
                    scale["S"] >= 0.9 * n, lambda k: k[0] == "pairs",
                    margin=scale["S"] / (0.9 * n) - 1))
    x1 = r[("pairs", "S", 8, 1)]["msgs_per_s"] / r[("pairs", "K", 8, 1)]["msgs_per_s"]
    xn = r[("pairs", "S", 8, n)]["msgs_per_s"] / r[("pairs", "K", 8, n)]["msgs_per_s"]
    rows.append(row("S13", f"With {n} pairs shared memory's lead over the kernel socket is no "
                           "smaller than with one (004:193)", "40x Linux with 16 pairs (20x "
                    "with one, 004:79)", f"S/K round trips per second: {x1:.1f}x with one pair, "
                    f"{xn:.1f}x with {n}", f"S/K with {n} pairs >= S/K with one", "shape",
                    xn >= x1, lambda k: k[0] == "pairs" and k[1] in ("S", "K"),
                    margin=xn / x1 - 1))
    conn = {p: r[("connect", p, 8, 1)]["msgs_per_s"] for p in ("K", "U")}
    rows.append(row("S11", "Connection setup: a user-space path far above the kernel per core "
                           "(004:88, 198)", "1.4 M/s per core, 20x Linux",
                    f"K {conn['K'] / 1e3:.0f} k/s, U {conn['U'] / 1e3:.0f} k/s on one core "
                    f"({conn['U'] / conn['K']:.2f}x)",
                    "U > K (vtoe has no monitor-based setup yet: the TOE sets connections up "
                    "for both)", "shape", conn["U"] > conn["K"], lambda k: k[0] == "connect",
                    margin=conn["U"] / conn["K"] - 1))
    def share(c, k, a):
        return r[("share", c, k, a)]["latency"]["p50_us"]

    alone = share("UC", 1, 1)
    coop = [share("UC", WORKERS, a) for a in ACTIVE]
    kern = [share("K", WORKERS, a) for a in ACTIVE]
    rows.append(row("S12", "Idle co-located workers cost nothing; latency grows with active "
                           "ones and stays below the kernel's (004:201-205)",
                    "figure only (sharecore-lat)",
                    f"{WORKERS} workers, p50 us by active {ACTIVE}: cooperative "
                    + ", ".join(f"{v:.2f}" for v in coop) + f" (alone {alone:.2f}); kernel "
                    + ", ".join(f"{v:.2f}" for v in kern) + "; polling without cooperation "
                    + ", ".join(f"{share('U', WORKERS, a):.2f}" for a in ACTIVE),
                    "cooperative: 1 active of 4 <= 1.05 x alone, all active > 1 active, below "
                    "the kernel's at every count", "shape",
                    coop[0] <= 1.05 * alone and coop[-1] > coop[0] and
                    all(c < k for c, k in zip(coop, kern)), lambda k: k[0] == "share",
                    margin=min([1 - coop[0] / (1.05 * alone), coop[-1] / coop[0] - 1] +
                               [1 - c / k for c, k in zip(coop, kern)])))
    conns = conn_counts_of(runs)
    most, fits = max(conns), CCB_CACHE // 2

    def conn_rate(path, c):
        return r[("conns", path, 8, c)]["msgs_per_s"]

    keep = {p: conn_rate(p, most) / conn_rate(p, 1) for p in PAIR_PATHS}
    rows.append(row("S8", "One queue multiplexes connections: no drop with their number, unlike "
                          "RDMA, LibVMA and Linux (004:183-185)", "flat to 100 M connections",
                    f"{most} connections against one, round trips per second: " +
                    ", ".join(f"{p} {keep[p]:.2f}" for p in PAIR_PATHS),
                    "S keeps >= 0.9 and more than U and K keep", "shape",
                    keep["S"] >= 0.9 and keep["S"] > max(keep["U"], keep["K"]),
                    lambda k: k[0] == "conns",
                    margin=min(keep["S"] / 0.9 - 1, keep["S"] / max(keep["U"], keep["K"]) - 1)))
    below = conn_rate("U", fits) / conn_rate("U", 1)
    past = conn_rate("U", most) / conn_rate("U", fits)
    rows.append(row("S9", "The RDMA analogue falls off past the NIC's connection cache (004:185)",
                    "sharp drop past 512 connections",
                    f"U: {fits} connections ({2 * fits} contexts, toe.ccb.cache) {below:.2f}x one "
                    f"connection, {most} {past:.2f}x {fits}",
                    f"U at {most} < 0.8x U at {fits}, and at {fits} >= 0.8x one connection",
                    "shape", past < 0.8 and below >= 0.8,
                    lambda k: k[0] == "conns" and k[1] == "U",
                    margin=min(1 - past / 0.8, below / 0.8 - 1)))
    rows.append(row("N1", "Absolute numbers (0.3 us, 23 M msg/s, 306 M msg/s), inter-host "
                          "results", "stated", "-", "hardware specific; inter-host not in this "
                    "study", "not checkable", None, why="hardware specific (Xeon, RDMA NIC); "
                    "inter-host paths are not in this study"))
    n_runs = len(runs)
    rows.append(row("G", "Every run: no application error; side-by-side pairs (equal weight, "
                         "equal work) each above a tenth of the other pairs' median", "-",
                    "; ".join(f"{label(k)}: {v}" for k, v in sorted(failed.items(), key=str))
                    or f"all {n_runs} runs sound", "no run fails its guard", "construction",
                    not failed))
    return rows


def pairs_of(runs):
    return sorted({p["pairs"] for p, _ in runs if p["kind"] == "pairs" and p["path"] == "S"})


def conn_counts_of(runs):
    return sorted({p["conns"] for p, _ in runs if p["kind"] == "conns"})


def figures(runs):
    """The numbers docs/studies-socksdirect.md quotes, from the same runs as the rows."""
    r = {key(p): m for p, m in runs}
    sizes = sorted({p["size"] for p, _ in runs if p["kind"] == "rtt" and "pairs" not in p})
    big = max(sizes)

    def rtt(path, size=8):
        return r[("rtt", path, size, 1)]["latency"]["p50_us"]

    def rate(path, size):
        return r[("stream", path, size, 1)]["msgs_per_s"]

    return {
        "runs": len(runs), "sizes": sizes, "largest": big,
        "rtt_p50_us": {p: {str(m): rtt(p, m) for m in sizes} for p in PATHS},
        "rtt_x_8": rtt("K") / rtt("S"), "msg_x_8": rate("S", 8) / rate("K", 8),
        "msg_x_8k": rate("S", 8192) / rate("K", 8192), "rtt_x_8k": rtt("K", 8192) / rtt("S", 8192),
        "zc_msg_x": rate("SZ", big) / rate("K", big), "zc_rtt_x": rtt("K", big) / rtt("SZ", big),
        "pairs": max(pairs_of(runs)),
        "scale": {p: r[("pairs", p, 8, max(pairs_of(runs)))]["msgs_per_s"] /
                  r[("pairs", p, 8, 1)]["msgs_per_s"] for p in PAIR_PATHS},
        "pairs_msgs_per_s": {p: {str(n): r[("pairs", p, 8, n)]["msgs_per_s"]
                                 for n in pairs_of(runs)} for p in PAIR_PATHS},
        "conns_msgs_per_s": {p: {str(c): r[("conns", p, 8, c)]["msgs_per_s"]
                                 for c in conn_counts_of(runs)} for p in PAIR_PATHS},
        "ccb_cache": CCB_CACHE,
        "connect_per_s": {p: r[("connect", p, 8, 1)]["msgs_per_s"] for p in ("K", "U")},
        "share_p50_us": {c: {"alone": r[("share", c, 1, 1)]["latency"]["p50_us"],
                             **{str(a): r[("share", c, WORKERS, a)]["latency"]["p50_us"]
                                for a in ACTIVE}} for c in SHARE},
    }


# ---------------------------------------------------------------------------------------- report

def tables(runs):
    r = {key(p): m for p, m in runs}
    sizes = sorted({p["size"] for p, _ in runs if p["kind"] == "rtt" and "pairs" not in p})
    lines = ["## Round trip against message size (µs, p50 [p1, p99]), paths ordered by latency",
             "", "| Path | " + " | ".join(f"{m} B" for m in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    paths = sorted(PATHS, key=lambda p: r[("rtt", p, sizes[0], 1)]["latency"]["p50_us"])
    for p in paths:
        cells = []
        for m in sizes:
            lat = r[("rtt", p, m, 1)]["latency"]
            cells.append(f"{lat['p50_us']:.2f} [{lat['p1_us']:.2f}, {lat['p99_us']:.2f}]")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "## One-way streaming against message size (messages/s; Gbit/s)", "",
              "| Path | " + " | ".join(f"{m} B" for m in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
    for p in paths:
        lines.append(f"| {p} | " + " | ".join(
            f"{r[('stream', p, m, 1)]['msgs_per_s'] / 1e6:.3f} M; "
            f"{r[('stream', p, m, 1)]['rx_gbps']:.2f}" for m in sizes) + " |")
    lines += ["", "## Path / K ratios (streaming messages/s)", "",
              "| Path | " + " | ".join(f"{m} B" for m in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
    for p in paths:
        lines.append(f"| {p} | " + " | ".join(
            f"{r[('stream', p, m, 1)]['msgs_per_s'] / r[('stream', 'K', m, 1)]['msgs_per_s']:.2f}"
            for m in sizes) + " |")
    pairs = pairs_of(runs)
    lines += ["", "## Pairs on their own cores (8 B round trips per second, all pairs)", "",
              "| Path | " + " | ".join(f"{n} pair(s)" for n in pairs) + " |",
              "|---|" + "---|" * len(pairs)]
    for p in PAIR_PATHS:
        lines.append(f"| {p} | " + " | ".join(
            f"{r[('pairs', p, 8, n)]['msgs_per_s'] / 1e6:.3f} M" for n in pairs) + " |")
    conns = conn_counts_of(runs)
    lines += ["", f"## Connections served round robin by one client (8 B round trips per "
              f"second; toe.ccb.cache {CCB_CACHE})", "",
              "| Path | " + " | ".join(f"{c}" for c in conns) + " |",
              "|---|" + "---|" * len(conns)]
    for p in PAIR_PATHS:
        lines.append(f"| {p} | " + " | ".join(
            f"{r[('conns', p, 8, c)]['msgs_per_s'] / 1e6:.3f} M" for c in conns) + " |")
    lines += ["", f"## Co-located workers: {WORKERS} rpc processes on the client's core "
              "(p50 round trip µs [p99])", "",
              "| Client | alone | " + " | ".join(f"{a} active" for a in ACTIVE) + " |",
              "|---|---|" + "---|" * len(ACTIVE)]
    for c in SHARE:
        cells = [r[("share", c, 1, 1)]["latency"]] + [r[("share", c, WORKERS, a)]["latency"]
                                                      for a in ACTIVE]
        lines.append(f"| {c} | " + " | ".join(f"{x['p50_us']:.2f} [{x['p99_us']:.2f}]"
                                              for x in cells) + " |")
    lines += ["", "## Connection setup (connect workload, one core)", "",
              "| Path | connections/s | setup p50 (µs) |", "|---|---|---|"]
    for p in ("K", "U"):
        m = r[("connect", p, 8, 1)]
        lines.append(f"| {p} | {m['msgs_per_s']:.0f} | {m['latency']['p50_us']:.2f} |")
    return lines


def figure(plt, runs, out):
    if plt is None:
        return False
    sys.path.insert(0, str(ROOT / "python"))
    from vtoe import latency
    r = {key(p): m for p, m in runs}
    data = {p: {"vms": [{"workload": "rpc", "latency": {**r[("rtt", p, 8, 1)]["latency"],
                                                          "cdf": r[("rtt", p, 8, 1)]["cdf"]}}]}
            for p in PATHS}
    ax = latency.plot_cdf(data, title="SocksDirect: 8 B round trip between two VMs")
    ax.figure.tight_layout()
    ax.figure.savefig(out / "rtt_cdf.png", dpi=110)
    sizes = sorted({p["size"] for p, _ in runs if p["kind"] == "rtt" and "pairs" not in p})
    fig, (tput, lat) = plt.subplots(1, 2, figsize=(10, 4))
    for p in PATHS:  # the paper's Fig. msgsize-intra: throughput and latency against size
        tput.plot(sizes, [r[("stream", p, m, 1)]["msgs_per_s"] / 1e6 for m in sizes], "o-",
                  label=p)
        lat.plot(sizes, [r[("rtt", p, m, 1)]["latency"]["p50_us"] for m in sizes], "o-",
                 label=p)
    for ax, ylabel in ((tput, "M messages/s (one way)"), (lat, "round trip p50 (µs)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (B)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("SocksDirect: intra-host paths against message size")
    fig.tight_layout()
    fig.savefig(out / "msgsize.png", dpi=110)
    pairs, conns = pairs_of(runs), conn_counts_of(runs)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for p in PAIR_PATHS:
        left.plot(pairs, [r[("pairs", p, 8, n)]["msgs_per_s"] / 1e6 for n in pairs], "o-",
                  label=p)
        right.plot(conns, [r[("conns", p, 8, c)]["msgs_per_s"] / 1e6 for c in conns], "o-",
                   label=p)
    left.set_xlabel("pairs of VMs, each VM on a core of its own")
    right.set_xlabel("connections served round robin by one client")
    right.set_xscale("log", base=2)
    right.axvline(CCB_CACHE, color="grey", linestyle=":", label="toe.ccb.cache")
    for ax in (left, right):
        ax.set_yscale("log")
        ax.set_ylabel("M round trips/s (8 B)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("SocksDirect: scaling with cores and with connections")
    fig.tight_layout()
    fig.savefig(out / "scaling.png", dpi=110)
    return True


def report(rows, runs, quick, out, drew, no_figures=False, sensitivity=()):
    lines = study_common.report_head("SocksDirect: intra-host paths, reproduced by vtoe", rows)
    lines += ["Paper: *SocksDirect* evaluation (shared/papers/socksdirect-evaluation.tex). Setup: "
             "two VMs under direct access, each on a 2 GHz core of its own, one TOE; K kernel "
             "sockets over the TOE's loopback, U the user-space TOE channel (polled), S a "
             "shared-memory ring pair set up by the monitor (polled), Z zero copy. " +
             ("Quick run (fewer sizes, shorter windows). " if quick else "") +
             "Mapping and departures: docs/studies-socksdirect.md.", ""]
    lines += study_common.claims_table(rows)
    lines += [""] + list(sensitivity)
    lines += [""] + tables(runs)
    if drew:
        lines += ["", "![8 B round-trip CDF](rtt_cdf.png)", "",
                  "![Throughput and latency against message size](msgsize.png)", "",
                  "![Scaling with pairs and with connections](scaling.png)"]
    lines += study_common.figure_note(drew, no_figures)
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes, shorter windows (CI)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(ROOT / "out" / "studies" / "socksdirect"))
    ap.add_argument("--no-figures", action="store_true", help="write the report without figures")
    args = ap.parse_args(argv)
    plt = study_common.plotting(args.no_figures, "socksdirect")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda p: run_point(p, args.quick), grid(args.quick)))
    rows = analyse(runs)
    drew = figure(plt, runs, out)
    sens = sensitivity(runs, args, out)
    report(rows, runs, args.quick, out, drew, args.no_figures,
           study_sensitivity.report_lines(sens, study_sensitivity.plot(plt, sens, out),
                                          args.quick))
    return study_common.finish(
        "socksdirect", rows, [{**p, **{k: v for k, v in m.items() if k != "cdf"}}
                              for p, m in runs], figures(runs), out, args.quick, sens)


def sensitivity(runs, args, out):
    """The verdicts again with each assumed cost over its range (study_sensitivity.py): each
    point's scenario is written once, the constant is a --set over it."""
    def spec_of(point, values, scratch):
        text = yaml.safe_dump(scenario(point, args.quick))
        path = scratch / f"{label(key(point)).replace(' ', '-')}.yaml"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        return path, values
    study = study_sensitivity.Study("socksdirect", [p for p, _ in runs], runs, spec_of, measure,
                                    analyse)
    return study_sensitivity.sweep(study, ASSUMED, out, args.jobs, args.quick)


if __name__ == "__main__":
    sys.exit(main())
