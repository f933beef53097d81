"""Latency distributions from results.json: a VM's ``latency`` block (rpc: request/response,
flows: time to completion, connect: setup, tcp_tx: send() to completion, tcp_rx: the peer's send
to recv()), ``peer_latency`` (tcp_tx: send() to the simulated peer's receipt) and ``rtt`` (the
TOE's round-trip time samples) each carry p1/p50/p90/p99/p99.9 and the CDF as steps
``[[upper_us, samples up to it], ...]`` of vtoe's log-bucket histogram (bucket width at most
0.8 %); docs/outputs.md, "Latency", defines each.

    from vtoe import latency
    xs, ps = latency.cdf(results, vm=0)          # µs, cumulative fraction 0..1
    xs, ps = latency.cdf(results, vm=0, key="rtt")
    ax = latency.plot_cdf({"native": r1, "da": r2}, out="out/cdf.png")
"""
from __future__ import annotations

from typing import Mapping


KEYS = ("latency", "peer_latency", "rtt")


def distribution(results: Mapping, vm: int = 0, key: str = "latency") -> Mapping:
    """The ``key`` block of VM ``vm``; KeyError naming the VM and its workload if it has none."""
    v = results["vms"][vm]
    if key not in v:
        raise KeyError(f"vms[{vm}] ({v.get('workload', '?')}) has no {key} distribution "
                       "(docs/outputs.md, \"Latency\", says which workloads have one)")
    return v[key]


def cdf(results: Mapping, vm: int = 0, key: str = "latency") -> tuple[list[float], list[float]]:
    """(latencies in µs, cumulative fractions) of VM ``vm``'s measured window, one point per
    non-empty bucket; empty lists when nothing completed."""
    d = distribution(results, vm, key)
    count = d["count"]
    if not count:
        return [], []
    xs = [float(edge) for edge, _ in d["cdf"]]
    ps = [seen / count for _, seen in d["cdf"]]
    return xs, ps


def plot_cdf(runs: Mapping[str, Mapping], vm: int = 0, ax=None, out=None, title=None,
             log_x: bool = True, key: str = "latency"):
    """Step plot of the latency CDF of each run (label -> results.json dict), the p1 and p99
    marked; saves to ``out`` when given. Returns the matplotlib axes."""
    import matplotlib

    if ax is None:
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    for label, results in runs.items():
        xs, ps = cdf(results, vm, key)
        if not xs:
            continue
        d = distribution(results, vm, key)
        line = ax.step(xs, ps, where="post", label=f"{label} (p50 {d['p50_us']:.2f} µs)")[0]
        for q in ("p1_us", "p99_us"):
            ax.axvline(d[q], color=line.get_color(), linestyle=":", linewidth=0.8)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("fraction of samples ≤ latency")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    if out is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(out)
    return ax
