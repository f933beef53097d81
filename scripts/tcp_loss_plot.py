#!/usr/bin/env python3
"""TCP under loss (issue 12): plots the simulated-peer sweep scripts/sweeps/tcp_loss.yaml (the
TOE's goodput against random link loss and RTT, NewReno and CUBIC) beside the Mathis et al.
model, goodput = MSS / RTT * sqrt(3/2) / sqrt(p) (MSS 1448 bytes with timestamps, RTT = twice
network.link_delay), and prints the table with each point's share of the model and its RTOs.
Usage: python3 scripts/sweep.py scripts/sweeps/tcp_loss.yaml --jobs 2
       python3 scripts/tcp_loss_plot.py [out/sweeps/tcp-loss] [--png FILE]
"""
import argparse
import json
import math
import sys
from pathlib import Path

MSS = 1448
UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(text: str) -> float:
    for unit in ("us", "ms", "s"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * UNITS[unit]
    raise ValueError(text)


def mathis_mbps(rtt_s: float, p: float) -> float:
    return MSS * 8 / rtt_s * math.sqrt(1.5) / math.sqrt(p) / 1e6


def load(out: Path):
    rows = []
    for d in sorted((out / "points").iterdir()):
        point = json.loads((d / "point.json").read_text())
        res = json.loads((d / "results.json").read_text())
        o = point["overrides"]
        tcp = res["stats"]["toe.ppm.tcpip"]
        rtt = 2 * seconds(o["network.link_delay"])
        p = float(o["network.loss"])
        rows.append({"cc": o["toe.tcp.congestion"], "rtt_ms": rtt * 1e3, "loss": p,
                     "mbps": res["vms"][0]["tx_mbps"], "mathis": mathis_mbps(rtt, p),
                     "rto": tcp["rto_timeouts"], "retx": tcp["retransmits"],
                     "tlp": tcp["tlp_probes"], "seed": point["seed"]})
    return sorted(rows, key=lambda r: (r["cc"], r["rtt_ms"], r["loss"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default="out/sweeps/tcp-loss")
    ap.add_argument("--png", help="write the plot here (default OUT/tcp_loss.png)")
    args = ap.parse_args()
    out = Path(args.out)
    rows = load(out)
    print("| congestion | RTT | loss | goodput (Mbit/s) | Mathis (Mbit/s) | ratio | RTOs "
          "| retransmissions |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cc']} | {r['rtt_ms']:g} ms | {r['loss'] * 100:g} % | {r['mbps']:.1f} | "
              f"{r['mathis']:.1f} | {r['mbps'] / r['mathis']:.2f} | {r['rto']} | {r['retx']} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing: no plot (build/venv has it)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = {}
    for rtt in sorted({r["rtt_ms"] for r in rows}):
        pts = [r for r in rows if r["rtt_ms"] == rtt]
        losses = sorted({r["loss"] for r in pts})
        line, = ax.plot([x * 100 for x in losses], [mathis_mbps(rtt / 1e3, x) for x in losses],
                        "k:", linewidth=1)
        for cc, marker, style in (("newreno", "o", "-"), ("cubic", "s", "--")):
            sel = [r for r in pts if r["cc"] == cc]
            h, = ax.plot([r["loss"] * 100 for r in sel], [r["mbps"] for r in sel], style,
                         marker=marker, color=colours.get(rtt),
                         label=f"{cc}, RTT {rtt:g} ms")
            colours[rtt] = h.get_color()
    ax.plot([], [], "k:", label="Mathis et al. (MSS/RTT·1.22/√p)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("random loss per frame, each direction (%)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title("TOE to simulated peer, 10 Gbit/s link")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    png = Path(args.png) if args.png else out / "tcp_loss.png"
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"plot: {png}")


if __name__ == "__main__":
    main()
