"""``vtoe report DIR [--out FILE]``: one self-contained HTML page for a run directory, a sweep
directory, a directory with a report.md (``make paper``'s out/paper, a study's) or ``make
studies``' directory (out/studies: every study on one page), figures drawn with matplotlib and
embedded (docs/outputs.md, "The report page").

    python -m vtoe.report out/quickstart            # -> out/quickstart/report.html
    vtoe-report out/sweeps/example --out /tmp/s.html
    build/release/app/vtoe report out/paper          # the C++ program runs this module

From Python: ``vtoe.report.make_report(dir, out=None) -> Path``; ``run_page``, ``sweep_page``
and ``paper_page`` return a :class:`vtoe.page.Page` to add to or write elsewhere.

What DIR is, is told by what it holds: ``report.md`` (make paper's, a study's), ``studies.json``
(make studies', beside a folder per study with its report.md), ``results.csv`` (a sweep),
``results.json`` (a run, a sweep's point included).

Exit status of the command: 0 when the page is written; 2 when DIR is none of those, or a
package the page needs (matplotlib, pandas) is missing: the message names it and the
interpreter, and no page is written.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from .page import MissingDependency, Page, esc, fmt, require_matplotlib, side_by_side

CPU_CLASSES = ("guest_user", "guest_kernel", "hypervisor", "idle")
CPU_LABELS = {"guest_user": "user", "guest_kernel": "kernel", "hypervisor": "hyp", "idle": "idle"}
CPU_COLORS = {"guest_user": "#4c72b0", "guest_kernel": "#55a868", "hypervisor": "#c44e52",
              "idle": "#cccccc"}
EXIT_CAUSES = ("data_abort", "irq", "wfi", "hvc", "timer", "vtimer")


class ReportError(Exception):
    """DIR cannot be reported on; the message says why (one line)."""


def kind_of(d: Path) -> str:
    """'paper', 'studies', 'sweep' or 'run', from the files in ``d``; ReportError otherwise."""
    if not d.is_dir():
        raise ReportError(f"{d}: not a directory")
    if (d / "report.md").is_file():
        return "paper"
    if (d / "studies.json").is_file():
        return "studies"
    if (d / "results.csv").is_file():
        return "sweep"
    if (d / "results.json").is_file():
        return "run"
    raise ReportError(f"{d}: no results.json (a run), results.csv (a sweep), report.md "
                      "(make paper's or a study's output) or studies.json (make studies') in it")


def make_report(d, out=None) -> Path:
    """Write the page for directory ``d`` to ``out`` (default ``d/report.html``); returns it."""
    d = Path(d)
    kind = kind_of(d)
    page = {"paper": paper_page, "studies": studies_page, "sweep": sweep_page,
            "run": run_page}[kind](d)
    return page.write(Path(out) if out is not None else d / "report.html")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise ReportError(f"{path}: not JSON ({e})") from e


# ------------------------------------------------------------------------------------------ a run

def summary_text(results: dict, run_info: dict) -> str:
    """The summary `vtoe run` prints (app/runner.cpp), from results.json and run.json, without
    its last line (the paths of the files)."""
    scenario = run_info.get("scenario", "")
    label = "built-in default scenario" if scenario in ("", "(built-in default)") else scenario
    version = results.get("vtoe_version", "")
    wall = float(run_info.get("wall_s", 0.0))
    sim = float(results["sim_time_s"])
    lines = [f"vtoe {version}: {label}, architecture {results['architecture']}, seed "
             f"{results['seed']}",
             f"simulated {sim:g} s (measured {float(results['measured_s']):g} s after warm-up) in "
             f"{wall:.2f} s wall ({sim / wall if wall > 0 else 0:.2f} sim s per wall s)", "",
             f"{'vm':<10}{'workload':<9}{'msg B':>8}{'tx Mbit/s':>11}{'rx Mbit/s':>11}"
             f"{'user':>8}{'kernel':>8}{'hyp':>8}{'idle':>8}"]
    for v in results["vms"]:
        cpu = "".join(f"{v['cpu'][k] * 100:>7.1f}%" for k in CPU_CLASSES)
        lines.append(f"{v['name']:<10}{v['workload']:<9}{int(v['message_size']):>8}"
                     f"{v['tx_mbps']:>11.1f}{v['rx_mbps']:>11.1f}{cpu}")
        if v.get("error"):
            lines.append(f"  error: {v['error']}")
    link = results["links"][0]
    lines += ["", f"TOE: tx {results['toe']['tx_mbps']:.1f} Mbit/s, rx "
              f"{results['toe']['rx_mbps']:.1f} Mbit/s; {link['name']}: {link['frames']} frames, "
              f"{link['drops']} dropped"]
    return "\n".join(lines)


def _command_of(d: Path, run_info: dict) -> tuple[str, str]:
    """(command, where it comes from). A sweep's point ran into a temporary directory: its
    command is told from point.json, with the point's directory as --out."""
    point = _read_json(d / "point.json")
    if run_info.get("command") and not point.get("base"):
        return run_info["command"], "run.json"
    if point.get("base"):
        from .sweep import set_text

        parts = ["vtoe", "run", point["base"]]
        parts += [f"--set {k}={set_text(v)}" for k, v in point.get("overrides", {}).items()]
        if point.get("seed") is not None:
            parts.append(f"--seed {point['seed']}")
        parts.append(f"--out {d}")
        return " ".join(parts), "point.json (a sweep's point; the sweep ran it with --quiet " \
            "into a temporary directory and moved the files here)"
    return "", ""


def _cpu_and_exits(sec, results: dict, plt):
    vms = results["vms"]
    names = [v["name"] for v in vms]
    fig, axes = Page.figure(width=10, height=max(2.2, 0.45 * len(vms) + 1.4), ncols=2)
    ax = axes[0]
    left = [0.0] * len(vms)
    for k in CPU_CLASSES:
        vals = [v["cpu"][k] * 100 for v in vms]
        ax.barh(names, vals, left=left, color=CPU_COLORS[k], label=CPU_LABELS[k])
        left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set(xlabel="share of the core (%)", title="CPU time by class, per VM")
    ax.legend(fontsize=7, ncol=4, loc="lower right")
    ax = axes[1]
    exits = {c: [v.get("vm_exits", {}).get(c, 0) for v in vms] for c in EXIT_CAUSES}
    shown = [c for c in EXIT_CAUSES if any(exits[c])]
    if shown:
        height = 0.8 / len(shown)
        for i, c in enumerate(shown):
            ax.barh([j + i * height for j in range(len(vms))], exits[c], height=height, label=c)
        ax.set_yticks([j + 0.4 - height / 2 for j in range(len(vms))], names)
        ax.invert_yaxis()
        ax.set(xlabel="VM exits in the measured window", title="VM exits by cause, per VM")
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, f"no VM exits ({results['architecture']})", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
    sec.add_figure(fig, alt="CPU time by class and VM exits by cause, per VM")
    rows = [[v["name"]] + [f"{v['cpu'][k] * 100:.1f}%" for k in CPU_CLASSES]
            + [v.get("vm_exits", {}).get(c, 0) for c in EXIT_CAUSES] for v in vms]
    sec.add_table(["vm"] + [CPU_LABELS[k] for k in CPU_CLASSES] + list(EXIT_CAUSES), rows)
    if any("exits_per_s" in v for v in vms):
        keys = list(next(v["exits_per_s"] for v in vms if "exits_per_s" in v))
        sec.add_table(["vm (exits per second)"] + keys,
                      [[v["name"]] + [v.get("exits_per_s", {}).get(k, "") for k in keys]
                       for v in vms])


# Time series columns, grouped into figures by what they measure. A column no group takes goes
# into the last figure, so that every column of timeseries.csv is drawn somewhere.
def _ts_groups(columns: list[str]) -> list[tuple[str, list[str]]]:
    taken: set[str] = set()

    def grab(pred):
        out = [c for c in columns if c != "time_s" and c not in taken and pred(c)]
        taken.update(out)
        return out

    net = ("link.", "switch.", "host.")
    groups = [
        # The network's columns (docs/outputs.md: links, switch ports, hosts), before the
        # platform's groups take them by their endings.
        ("Links: use of the line rate per direction (share)",
         grab(lambda c: c.startswith("link.") and c.endswith("_utilization_share"))),
        ("Switch output queues (bytes: mean and highest in each interval)",
         grab(lambda c: c.startswith("switch.") and c.endswith("_bytes"))),
        ("Switch output queues (frames, mean)",
         grab(lambda c: c.startswith("switch.") and c.endswith("queue_mean_frames"))),
        ("Links and switch ports: frames, drops and ECN marks in each interval",
         grab(lambda c: c.startswith(("link.", "switch.")) and c.endswith("_count"))),
        ("Hosts of the topology: throughput (Mbit/s)",
         grab(lambda c: c.startswith("host.") and c.endswith("_mbps"))),
        ("Hosts of the topology: cores busy and flows completed",
         grab(lambda c: c.startswith("host."))),
        ("Throughput (Mbit/s)", grab(lambda c: c.endswith("_mbps") and not c.startswith(net))),
        ("CPU share of the core, per VM and class", grab(lambda c: ".cpu." in c
                                                        or c == "cpu.idle_share")),
        ("Cores busy (share)", grab(lambda c: c.startswith("core.") and c.endswith("_share"))),
        ("Link, engine and memory use (share)", grab(lambda c: c.endswith("_share"))),
        ("Queues (mean occupancy)", grab(lambda c: re.search(
            r"(_contexts|_entries|queue|_frames)", c) is not None and not c.endswith("_count"))),
        ("VM exits in each interval", grab(lambda c: ".vm_exits." in c)),
        ("TCP congestion windows (bytes)", grab(lambda c: c.endswith("cwnd_bytes"))),
        ("TCP connections open", grab(lambda c: c.endswith("connections_count"))),
        ("Credit scheduler balance", grab(lambda c: c.endswith(".credit"))),
        ("Events in each interval (retransmits, drops, out of order)",
         grab(lambda c: c.endswith("_count"))),
    ]
    groups.append(("Other columns", grab(lambda c: True)))
    return [(t, cols) for t, cols in groups if cols]


def _cpu_colors(columns: list[str]) -> list:
    """A colour per VM (matplotlib's cycle), darker for user, lighter for kernel and hyp; idle
    grey."""
    from matplotlib.colors import to_rgba

    vms = list(dict.fromkeys(c.split(".cpu.")[0] for c in columns if ".cpu." in c))
    shade = {"guest_user": 1.0, "guest_kernel": 0.65, "hypervisor": 0.35}
    out = []
    for c in columns:
        if ".cpu." not in c:
            out.append(CPU_COLORS["idle"])
            continue
        vm, cls = c.split(".cpu.")
        out.append(to_rgba(f"C{vms.index(vm) % 10}", shade.get(cls.removesuffix("_share"), 0.5)))
    return out


def _timeseries(sec, d: Path, results: dict, plt):
    import pandas as pd

    ts = pd.read_csv(d / "timeseries.csv")
    warmup = float(results["sim_time_s"]) - float(results["measured_s"])
    rows = len(ts)
    step = float(ts["time_s"].iloc[0]) if rows else 0.0
    sec.add_note(f"timeseries.csv: {rows} rows, one every {step * 1e3:g} ms of simulated time; "
                 "each point is the interval ending at its time; the shaded band is the warm-up "
                 "(outside the measured window).")
    t_ms = ts["time_s"] * 1e3
    for title, cols in _ts_groups(list(ts.columns)):
        quiet = [c for c in cols if not ts[c].any()]
        live = [c for c in cols if c not in quiet]
        if not live:
            sec.add_note(f"{title}: every column is 0 over the run ({', '.join(cols)}).")
            continue
        fig, ax = Page.figure(width=10, height=3.4)
        if title.startswith("CPU share"):
            ax.stackplot(t_ms, [ts[c] * 100 for c in live], colors=_cpu_colors(live),
                         labels=[c.removeprefix("vm.").removesuffix("_share") for c in live])
            ax.set_ylabel("% of the core")
            ax.set_ylim(0, 101)
        else:
            for c in live:
                ax.plot(t_ms, ts[c], lw=1, label=c, drawstyle="steps-pre")
        if warmup > 0:
            ax.axvspan(0, warmup * 1e3, color="0.9", zorder=0)
        _plain_numbers(ax)
        ax.set(xlabel="simulated time (ms)", title=title)
        ax.set_xlim(0, float(t_ms.iloc[-1]) if rows else 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        sec.add_figure(fig, alt=title)
        if quiet:
            sec.add_note(f"0 all along, not drawn: {', '.join(quiet)}.")


def _latency(sec, results: dict, plt):
    from .latency import KEYS, plot_cdf

    vms = results["vms"]
    # Every distribution of each VM (latency, peer_latency, rtt), those with samples drawn.
    have = [(i, k) for i, v in enumerate(vms) for k in KEYS if v.get(k, {}).get("count")]
    empty = [v["name"] for v in vms if "latency" in v and not v["latency"].get("count")]
    if empty:
        sec.add_warning(f"a latency distribution with no samples: {', '.join(empty)}")
    if not have:
        if not empty:
            kinds = sorted({v["workload"] for v in vms})
            sec.add_note(f"No latency distribution in results.json (workloads: "
                         f"{', '.join(kinds)}).")
        return
    for i in dict.fromkeys(i for i, _ in have):
        v = vms[i]
        fig, ax = Page.figure(width=7.5, height=3.6)
        for k in (k for j, k in have if j == i):
            plot_cdf({v[k].get("kind", k): results}, vm=i, ax=ax, key=k)
        ax.set_title(f"{v['name']}: latency CDFs")
        sec.add_figure(fig, alt=f"latency CDF of {v['name']}")
    keys = ["count", "min_us", "p1_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"]
    sec.add_table(["vm", "kind"] + keys,
                  [[vms[i]["name"], vms[i][k].get("kind", k)]
                   + [vms[i][k].get(q, "") for q in keys] for i, k in have],
                  text_columns=(0, 1))


def _dict_table(sec, items: list[dict], title: str, skip=()):
    """A list of flat-ish dicts (channels, links, hosts, switches) as a table."""
    if not items:
        return
    keys = [k for k in items[0] if k not in skip]
    rows = []
    for it in items:
        row = []
        for k in keys:
            val = it.get(k, "")
            if isinstance(val, dict):
                val = ", ".join(f"{a} {fmt(b)}" for a, b in val.items())
            elif isinstance(val, list):
                val = ", ".join(fmt(x) for x in val)
            row.append(val)
        rows.append(row)
    sec.add_html(f"<h3>{esc(title)}</h3>")
    sec.add_table(keys, rows, text_columns=(0, 1))


def _iss_section(page, iss: dict, top: int = 25):
    """platform.cpu_model=iss: the counts from the ISS and where the instructions went."""
    sec = page.section("Linux on the ISS: where the instructions went",
                       "Counted by the ISS in the measured window (results.json iss; "
                       "docs/iss-mode.md): the guest's PC sampled every "
                       f"{iss.get('profile', {}).get('interval_instructions', '?')} instructions "
                       "and named from the kernel's System.map, the module and the program.")
    rows = [["command", iss.get("command", "")],
            ["instructions, user / kernel",
             f"{iss['instructions']['user']} / {iss['instructions']['kernel']}"],
            ["cycles, user / kernel", f"{iss['cycles']['user']} / {iss['cycles']['kernel']}"],
            ["TOE commands / completions / interrupts",
             f"{iss.get('toe_commands')} / {iss.get('toe_completions')} / "
             f"{iss.get('toe_interrupts')}"],
            ["per TOE command: instructions / cycles",
             f"{iss['per_toe_command']['instructions']} / {iss['per_toe_command']['cycles']}"],
            ["per interrupt handled: instructions / cycles",
             f"{iss.get('per_interrupt', {}).get('instructions', '')} / "
             f"{iss.get('per_interrupt', {}).get('cycles', '')}"],
            ["device stall cycles", iss.get("device_stall_cycles", "")],
            ["boot: simulated s / instructions",
             f"{iss.get('boot_s')} / {iss.get('boot_instructions')}"]]
    sec.add_table(["", "value"], rows, text_columns=(0, 1))
    profile = iss.get("profile", {})
    if profile.get("by_image"):
        sec.add_table(["image", "share"],
                      [[k, f"{v * 100:.1f}%"] for k, v in profile["by_image"].items()],
                      text_columns=(0,))
    fns = profile.get("by_symbol", [])[:top]
    if fns:
        sec.add_table(["function", "image", "samples", "share"],
                      [[f["symbol"] or "(unnamed)", f["image"], f["samples"],
                        f"{f['share'] * 100:.2f}%"] for f in fns], text_columns=(0, 1))


def run_page(d) -> Page:
    """The page of one run directory (what `vtoe run --out d` wrote)."""
    d = Path(d)
    plt = require_matplotlib()
    require_pandas()
    results = _read_json(d / "results.json")
    if not results:
        raise ReportError(f"{d}: no results.json")
    run_info = _read_json(d / "run.json")
    build = run_info.get("build", {})
    page = Page(f"vtoe run: {d.name}",
                [f"{d}: architecture {results['architecture']}, seed {results['seed']}, "
                 f"{results['sim_time_s']:g} s simulated, {results['measured_s']:g} s measured "
                 "after the warm-up.",
                 f"Made by vtoe {build['version']}, git {build['git']}." if build else
                 "No run.json here: the build, the command and the wall time are unknown."])

    sec = page.section("Summary", "What `vtoe run` printed (wall-clock figures from run.json).")
    for w in run_info.get("warnings", []):
        sec.add_warning(f"warning: {w}")
    for v in results["vms"]:
        if v.get("error"):
            sec.add_warning(f"{v['name']}: {v['error']}")
    sec.add_pre(summary_text(results, run_info))
    sec.add_table(["vm", "workload", "msg B", "tx Mbit/s", "rx Mbit/s", "transactions",
                   "mean latency µs", "interrupts", "channel", "direct access"],
                  [[v["name"], v["workload"], v["message_size"], v["tx_mbps"], v["rx_mbps"],
                    v.get("transactions", 0), v.get("mean_latency_us", 0), v.get("interrupts", 0),
                    v.get("channel", ""), v.get("direct_access", "")] for v in results["vms"]],
                  text_columns=(0, 1))
    toe = results.get("toe", {})
    sec.add_table(["TOE"] + list(toe), [["measured window"] + list(toe.values())])

    _cpu_and_exits(page.section("CPU and VM exits per VM",
                                "Measured window; each VM's share of the core by class (idle "
                                "is the core's, the same for every VM; the rest of the core "
                                "went to the other VMs), and its VM exits by cause (results.json "
                                "vms[].cpu, vms[].vm_exits)."),
                   results, plt)

    sec = page.section("Over time: throughput, queues, link use")
    if (d / "timeseries.csv").is_file():
        _timeseries(sec, d, results, plt)
    else:
        sec.add_note("No timeseries.csv: the run had no --stats-interval (or stats_interval in "
                     "the scenario); run again with e.g. --stats-interval 1ms for these figures.")

    _latency(page.section("Latency distributions"), results, plt)

    sec = page.section("Channels, links and hosts")
    _dict_table(sec, results.get("channels", []), "TOE channels")
    _dict_table(sec, results.get("links", []), "Links (whole run)")
    _dict_table(sec, results.get("hosts", []), "Hosts (whole run)")
    _dict_table(sec, results.get("switches", []), "Switches (whole run)", skip=("ports",))
    for sw in results.get("switches", []):
        ports = [p for p in sw.get("ports", []) if p.get("link")]
        if ports:
            sec.add_html(f"<h3>{esc(sw['name'])}: output ports (measured window)</h3>")
            sec.add_table(["port", "link", "tx frames", "drops", "queue mean B", "queue max B",
                           "queue mean frames", "queue max frames"],
                          [[p["port"], p["link"], p["tx_frames"], p["drops"],
                            p["queue_bytes"]["mean"], p["queue_bytes"]["max"],
                            p["queue_frames"]["mean"], p["queue_frames"]["max"]] for p in ports],
                          text_columns=(1,))
    if results.get("peer"):
        sec.add_table(["peer"] + list(results["peer"]), [["whole run"] + list(results["peer"].values())])

    if results.get("iss"):
        _iss_section(page, results["iss"])

    sec = page.section("Scenario, command and build")
    command, source = _command_of(d, run_info)
    if command:
        sec.add_html(f"<h3>Command</h3><p class=\"note\">from {esc(source)}</p>")
        sec.add_pre(command)
    else:
        sec.add_note("The command is not recorded: run.json has no \"command\" (a build older "
                     "than the field) and the directory is not a sweep's point.")
    if run_info:
        sec.add_html("<h3>Build</h3>")
        sec.add_table(["field", "value"],
                      [[k, v] for k, v in build.items()]
                      + [[k, run_info[k]] for k in ("scenario", "wall_s",
                                                     "sim_seconds_per_wall_second")
                         if k in run_info], text_columns=(0, 1))
    if (d / "scenario.yaml").is_file():
        sec.add_html("<h3>Scenario (every key resolved)</h3>")
        sec.add_pre((d / "scenario.yaml").read_text(), summary="scenario.yaml")
    point = _read_json(d / "point.json")
    if point:
        sec.add_pre(json.dumps(point, indent=2), summary="point.json (sweep point)")
    return page


# ------------------------------------------------------------------------------------------ a sweep

# Columns of a sweep's table that are not metrics.
NOT_METRICS = {"seed", "point_id", "vm", "wall_s", "sim_time_s", "measured_s", "vm.channel",
               "vm.direct_access", "schema_version"}


def sweep_layout(df):
    """(knobs: override columns with more than one value, fixed: {column: value} of the others,
    metrics: numeric result columns that vary, constant: result columns that do not)."""
    import pandas as pd

    cols = list(df.columns)
    overrides = cols[:cols.index("seed")] if "seed" in cols else []
    knobs = [c for c in overrides if df[c].nunique(dropna=False) > 1]
    fixed = {c: df[c].iloc[0] for c in overrides if c not in knobs}
    if "seed" in cols and df["seed"].nunique() > 1:
        pass  # seeds are repeats of a point, never a knob: they give the spreads
    metrics, constant = [], []
    for c in cols[len(overrides):]:
        if c in NOT_METRICS or c in knobs or not pd.api.types.is_numeric_dtype(df[c]) \
                or pd.api.types.is_bool_dtype(df[c]):
            continue
        (metrics if df[c].nunique(dropna=True) > 1 else constant).append(c)
    return knobs, fixed, metrics, constant


def _knob_positions(values):
    """x positions for a knob's values: numbers (units understood) on a numeric axis, else
    categories in the table's order. Returns (mapping value -> x, numeric?)."""
    uniq = list(dict.fromkeys(values))
    nums = {}
    for v in uniq:
        n = to_number(v)
        if n is None:
            return {v: i for i, v in enumerate(uniq)}, False
        nums[v] = n
    return nums, True


def to_number(value):
    """A knob's value as a number ("10Gbps" -> 1e10, "4000" -> 4000.0), None if it is not one."""
    from .units import parse

    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return None if value != value else float(value)
    parsed = parse(str(value))
    if parsed is not None:
        return parsed[0]
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


MAX_LEGEND = 16
UNSET = "(base)"  # a knob's value where a point leaves it to the base scenario


def _plain_numbers(ax):
    """Tick labels as the values themselves: no offset (0.12 + 1e-5 x ...) above the axis."""
    try:
        ax.ticklabel_format(axis="y", useOffset=False)
    except AttributeError:  # a log or categorical axis
        pass


def _metric_figure(df, metric, knobs, per_vm: bool, unlabelled: list | None = None):
    """One figure: ``metric`` against each knob (a panel each). Panels with more lines than
    MAX_LEGEND get no legend; they are listed in ``unlabelled``."""
    import numpy as np

    unlabelled = [] if unlabelled is None else unlabelled
    fig, axes = Page.figure(width=min(4.2 * len(knobs), 13), height=3.3, ncols=len(knobs),
                            squeeze=False)
    for ax, knob in zip(axes[0], knobs):
        others = [k for k in knobs if k != knob] + (["vm.name"] if per_vm else [])
        pos, numeric = _knob_positions(list(df[knob]))
        groups = df.groupby(others, sort=False, dropna=False) if others else [((), df)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, key)) or metric
            stats = g.groupby(knob, sort=False)[metric].agg(["mean", "min", "max", "count"])
            stats = stats.loc[sorted(stats.index, key=lambda v: pos[v])]
            xs = np.array([pos[v] for v in stats.index], dtype=float)
            line = ax.plot(xs, stats["mean"], marker="o", ms=3, lw=1, label=label)[0]
            if (stats["count"] > 1).any():
                ax.fill_between(xs, stats["min"], stats["max"], color=line.get_color(),
                                alpha=0.2, lw=0)
        if not numeric:
            ax.set_xticks(list(pos.values()), [str(v) for v in pos], rotation=30, fontsize=7)
        else:
            values = sorted(set(pos.values()))
            if values[0] > 0 and values[-1] / values[0] >= 10:
                ax.set_xscale("log")
            if len(values) <= 8:
                labels = {x: str(v) for v, x in pos.items()}
                ax.set_xticks(values, [labels[x] for x in values], fontsize=7)
                ax.minorticks_off()
        _plain_numbers(ax)
        ax.set_xlabel(knob, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        handles = ax.get_legend_handles_labels()[0]
        if 1 < len(handles) <= MAX_LEGEND:
            ax.legend(fontsize=6)
        elif len(handles) > MAX_LEGEND:
            unlabelled.append(f"{knob}: {len(handles)} lines")
    fig.suptitle(metric, fontsize=10)
    # Fixed margins instead of tight_layout (the metric is the title, not a label): drawing
    # a sweep's dozens of figures takes a third less time.
    fig.subplots_adjust(left=0.09 if len(knobs) < 3 else 0.06, right=0.98, bottom=0.2, top=0.86,
                        wspace=0.25)
    return fig


def _sweep_metric_is_per_vm(metric: str) -> bool:
    return metric.startswith("vm.")


def sweep_page(d, max_metrics: int = 60) -> Page:
    """The page of a sweep directory: each metric against each knob, one figure per metric,
    one line per combination of the other knobs (and per VM for per-VM metrics); the band is
    the range over seeds where a point ran with several."""
    import pandas as pd

    d = Path(d)
    require_matplotlib()
    require_pandas()
    df = pd.read_csv(d / "results.csv")
    failures = _read_json(d / "failures.json") if (d / "failures.json").is_file() else []
    knobs, fixed, metrics, constant = sweep_layout(df)
    for k in knobs:  # a point that does not set a knob runs with the base scenario's value
        if df[k].isna().any():
            df[k] = df[k].astype(object).where(df[k].notna(), UNSET)
    points = df["point_id"].nunique() if "point_id" in df else len(df)
    seeds = sorted(df["seed"].dropna().unique()) if "seed" in df else []
    page = Page(f"vtoe sweep: {d.name}",
                [f"{d}: {points} points, {len(df)} rows (one per point and VM), "
                 f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
                 f"{' (' + ', '.join(str(int(s)) for s in seeds[:10]) + ')' if seeds else ''}."])
    sec = page.section("Sweep")
    if failures:
        sec.add_warning(f"{len(failures)} points failed and are not in the table "
                        "(failures.json below).")
        sec.add_table(["point", "overrides", "seed", "error"],
                      [[f["point_id"], " ".join(f"{k}={v}" for k, v in f["overrides"].items()),
                        f.get("seed"), f["error"]] for f in failures], text_columns=(0, 1, 3))
    sec.add_table(["knob", "values"], [[k, ", ".join(str(v) for v in dict.fromkeys(df[k]))]
                                       for k in knobs], text_columns=(0, 1))
    if fixed:
        sec.add_table(["fixed override", "value"], [[k, v] for k, v in fixed.items()],
                      text_columns=(0, 1))
    if not knobs:
        sec.add_warning("No override takes more than one value: there is nothing to draw "
                        "against (the table is below).")
    shown = metrics[:max_metrics]
    if len(metrics) > max_metrics:
        sec.add_warning(f"{len(metrics)} metrics vary; the first {max_metrics} are drawn, not: "
                        + ", ".join(metrics[max_metrics:]))
    if constant:
        sec.add_note("The same at every point (not drawn): " + ", ".join(
            f"{c} = {fmt(df[c].iloc[0]) or '(empty)'}" for c in constant))
    multi_vm = "vm.name" in df and df["vm.name"].nunique() > 1
    if knobs:
        fsec = page.section("Metrics against knobs",
                            "One figure per metric, one panel per knob; each line holds the "
                            "other knobs" + (" and the VM" if multi_vm else "") + " fixed; "
                            "points are means over seeds, the band their range.")
        for metric in shown:
            per_vm = multi_vm and _sweep_metric_is_per_vm(metric)
            data = df if per_vm else df.drop_duplicates(subset=["point_id"])
            unlabelled: list[str] = []
            fig = _metric_figure(data, metric, knobs, per_vm, unlabelled)
            fsec.add_figure(fig, alt=metric, tight=False, caption=(
                f"Too many lines for a legend ({'; '.join(unlabelled)}): the table below has "
                "every value." if unlabelled else None))
    tsec = page.section("Table")
    cols = knobs + [c for c in ("seed", "vm.name") if c in df] + shown
    tsec.add_note(f"results.csv, columns drawn above ({len(df)} rows"
                  + (", first 200" if len(df) > 200 else "") + ").")
    tsec.add_table(cols, df[cols].head(200).values.tolist(),
                   text_columns=range(len(knobs) + 2))
    return page


# ------------------------------------------------------------------------------------------ the paper

_FIG_RE = re.compile(r"^Fig\. (\d+)([a-z]?)\b")


def _claim_covers(claim_fig: str, num: str, letter: str) -> bool:
    """Claims name figures as 9a, 13a-c, 13b-d, 12, 7: does one cover section Fig. num+letter?"""
    m = re.match(r"^(\d+)([a-z])?(?:-([a-z]))?$", claim_fig.strip())
    if not m or m.group(1) != num:
        return False
    if not letter or not m.group(2):
        return True
    lo, hi = m.group(2), m.group(3) or m.group(2)
    return lo <= letter <= hi


def parse_markdown(text: str) -> list[tuple[str, list[str]]]:
    """report.md's level-2 sections: [(title, lines)], the lines before the first as title ''."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        else:
            sections[-1][1].append(line)
    return sections


def _inline(text: str) -> str:
    out = esc(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![*\w])\*([^*\s][^*]*)\*(?![*\w])", r"<em>\1</em>", out)
    # A link keeps its text and shows its target: the page refers to nothing outside itself.
    out = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", out)
    return out


def markdown_html(lines: list[str], images: dict[str, str], skip_images=False) -> str:
    """The small part of Markdown reproduce.py writes: paragraphs, ``- `` lists, pipe tables and
    ``![alt](file)`` images (given as data URIs in ``images``; a missing one is an error)."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("# "):
            out.append(f"<h2>{_inline(line[2:])}</h2>")
            i += 1
        elif line.startswith("### "):
            out.append(f"<h3>{_inline(line[4:])}</h3>")
            i += 1
        elif line.startswith("```"):
            i += 1
            code = []
            while i < len(lines) and not lines[i].startswith("```"):
                code.append(lines[i])
                i += 1
            i += 1
            out.append(f"<pre>{esc(chr(10).join(code))}</pre>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = _cells(lines[i])
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append(cells)
                i += 1
            out.append(_html_table(rows[0], rows[1:]))
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        elif (m := re.fullmatch(r"!\[([^\]]*)\]\(([^)]+)\)", line.strip())):
            if not skip_images:
                if m.group(2) not in images:
                    raise ReportError(f"report.md shows {m.group(2)}, which is not in the directory")
                out.append(f'<figure><img src="{images[m.group(2)]}" alt="{esc(m.group(1))}">'
                           "</figure>")
            i += 1
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(
                    ("|", "- ", "!", "#", "```")):
                para.append(lines[i])
                i += 1
            out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f'<th class="text">{_inline(c)}</th>' for c in header)
    body = "".join("<tr>" + "".join(f'<td class="text">{_verdict(c)}</td>' for c in r) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _verdict(cell: str) -> str:
    text = _inline(cell)
    if cell in ("holds", "within"):
        return f'<span class="holds">{text}</span>'
    if "does not hold" in cell or "outside" in cell:
        return f'<span class="fails">{text}</span>'
    return text


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row; ``\\|`` is a pipe inside a cell."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _table_rows(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    rows = [_cells(ln) for ln in lines if ln.startswith("|")]
    rows = [r for r in rows if not all(re.fullmatch(r":?-+:?", c) for c in r)]
    return (rows[0], rows[1:]) if rows else ([], [])


def paper_page(d) -> Page:
    """The page of a directory with a report.md (``make paper``'s, ``make study-toe``'s, a
    study's of ``make studies``): report.md as HTML with its figures embedded; in make paper's,
    each figure of section 5 with the paper's numbers and claims for it on the left and vtoe's
    figure and table on the right."""
    d = Path(d)
    require_matplotlib()
    sections = parse_markdown((d / "report.md").read_text())
    images = _report_images(d)
    head = sections[0][1]
    title = next((ln[2:] for ln in head if ln.startswith("# ")), "vtoe: reproduction")
    page = Page(title, [ln for ln in head if ln.strip() and not ln.startswith("# ")])
    by_title = dict(sections[1:])
    _, numbers = _table_rows(by_title.get("Numbers of section 5", []))
    _, claims = _table_rows(by_title.get("Claims of section 5", []))
    paper = bool(numbers or claims)  # make paper's report; a study's has neither table
    for name, lines in sections[1:]:
        sec = page.section(name)
        m = _FIG_RE.match(name)
        if not m or not paper:
            sec.add_html(markdown_html(lines, images))
            continue
        num, letter = m.group(1), m.group(2)
        fig_ref = f"Fig. {num}{letter}"
        mine = [r for r in numbers if len(r) > 1 and re.search(
            rf"Fig\. {num}{letter or '[a-z]?'}\b", r[1])]
        said = [r for r in claims if len(r) > 1 and _claim_covers(r[1], num, letter)]
        left = [f"<h3>The paper: {esc(fig_ref)}</h3>"]
        if mine:
            left.append(_html_table(["number", "paper (source)", "vtoe", "error", "verdict"],
                                    [[r[0], r[1], r[2], r[3], r[-1]] for r in mine]))
        if said:
            left.append(_html_table(["claim", "test", "verdict"],
                                    [[r[0], r[2], r[3]] for r in said]))
        if not mine and not said:
            left.append("<p class=\"note\">The report compares no number or claim of the paper "
                        "with this figure.</p>")
        right = [f"<h3>vtoe</h3>", markdown_html(lines, images)]
        sec.add_html(side_by_side("".join(left), "".join(right)))
    return page


def _report_images(d: Path) -> dict[str, str]:
    """The figures a report.md shows, as data URIs; one it shows but the folder lacks is an error."""
    from .page import file_data_uri

    images = {}
    for md in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (d / "report.md").read_text()):
        if not (d / md).is_file():
            raise ReportError(f"{d}/report.md shows {md}, which is not in the directory")
        images[md] = file_data_uri(d / md)
    return images


def studies_page(d) -> Page:
    """``make studies``' page (scripts/studies.py writes DIR/studies.json): the commit and the
    commands that made it, the summary of every study's verdicts, then each study's report.md
    (its verdict table, sensitivity to the assumed costs with its plot, tables and figures)."""
    d = Path(d)
    require_matplotlib()
    info = _read_json(d / "studies.json")
    studies = info.get("studies") or []
    missing = [s["name"] for s in studies if not (d / s["name"] / "report.md").is_file()]
    if missing:
        raise ReportError(f"{d}: no report.md for {', '.join(missing)} (the study did not run "
                          "to its end)")
    dirty = " (with uncommitted changes)" if info.get("dirty") else ""
    page = Page(f"vtoe: the related papers as studies ({info.get('variant', '?')} variants)",
                [f"Made at git {info.get('commit', '?')}{dirty} by {info.get('command', '?')}, "
                 f"{info.get('wall_s', 0):.0f} s."])
    sec = page.section("Summary")
    summary = (d / "summary.md").read_text().splitlines() if (d / "summary.md").is_file() else []
    sec.add_html(markdown_html([ln for ln in summary if not ln.startswith("# ")], {}))
    sec.add_html("<h3>Commands</h3>" + markdown_html(
        ["```"] + [s["command"] for s in studies] + ["```"], {}))
    for s in studies:
        sd = d / s["name"]
        images = _report_images(sd)
        lines = (sd / "report.md").read_text().splitlines()
        title = next((ln[2:] for ln in lines if ln.startswith("# ")), s["name"])
        # The study's level-2 sections become level 3 under its own.
        body = [("### " + ln[3:]) if ln.startswith("## ") else ln for ln in lines
                if not ln.startswith("# ")]
        page.section(title).add_html(markdown_html(body, images))
    return page


# ------------------------------------------------------------------------------------------ command

def require_pandas():
    try:
        import pandas  # noqa: F401
    except ImportError as e:
        raise MissingDependency(
            f"pandas is missing for {sys.executable} ({e}): install it with `make venv` "
            "(build/venv) or `pip install 'pandas>=2.0'`") from e


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="vtoe report", description="Write one self-contained HTML page (figures embedded) "
        "for a run directory, a sweep directory or a report.md directory (make paper's, a "
        "study's).")
    ap.add_argument("dir", help="run directory (results.json), sweep directory (results.csv), "
                    "out/paper or a study's directory (report.md), or out/studies (studies.json)")
    ap.add_argument("--out", metavar="FILE", help="the page (default DIR/report.html)")
    args = ap.parse_args(argv)
    try:
        path = make_report(args.dir, args.out)
    except (ReportError, MissingDependency) as e:
        print(f"vtoe report: {e}", file=sys.stderr)
        return 2
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
