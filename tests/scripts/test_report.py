"""`vtoe report DIR`: the page of a short real run (summary, CPU and exits, time series, latency
CDFs, scenario, command, build), of a real sweep (each metric against each knob, spreads over
seeds), of a paper report (each figure beside the paper's numbers); the C++ command delegating
to the Python package, and its errors when Python or matplotlib is missing."""
import base64
import html
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from scripts_paths import ROOT, TIMEOUT_FACTOR, run_once

from vtoe import report
from vtoe.page import Page

PY = sys.executable
RUN_SETS = ["--set", "duration=30ms", "--set", "warmup=5ms", "--stats-interval", "1ms"]


def images(page_html: str) -> list[bytes]:
    """Every <img> of the page, decoded (each must be a data: URI: nothing outside the file)."""
    srcs = re.findall(r'<img src="([^"]*)"', page_html)
    out = []
    for src in srcs:
        assert src.startswith("data:image/png;base64,"), src[:60]
        out.append(base64.b64decode(src.split(",", 1)[1]))
    return out


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def no_outside_references(page_html: str):
    for attr in re.findall(r'(?:src|href)="([^"]*)"', page_html):
        assert attr.startswith(("data:", "#")), attr[:80]
    assert "<script" not in page_html and "<link" not in page_html


# The run and the sweep are made once per session, also under pytest-xdist (run_once).
@pytest.fixture(scope="module")
def quick_run(tmp_path_factory, vtoe_bin):
    out, proc = run_once(tmp_path_factory, "report-quick",
                         [str(vtoe_bin), "run", "scenarios/quickstart.yaml", *RUN_SETS, "--out"],
                         cwd=ROOT, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    return out, proc


@pytest.fixture(scope="module")
def rpc_run(tmp_path_factory, vtoe_bin):
    out = tmp_path_factory.mktemp("report") / "rpc"
    proc = subprocess.run([str(vtoe_bin), "run", "scenarios/native/rpc.yaml", *RUN_SETS,
                           "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_run_removes_an_earlier_page(tmp_path, vtoe_bin):
    (tmp_path / "report.html").write_text("the page of an earlier run")
    proc = subprocess.run([str(vtoe_bin), "run", "scenarios/quickstart.yaml", "--set",
                           "duration=3ms", "--set", "warmup=1ms", "--out", str(tmp_path), "-q"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results.json").is_file() and not (tmp_path / "report.html").exists()


def test_run_json_records_the_command(quick_run):
    out, _ = quick_run
    run = json.loads((out / "run.json").read_text())
    assert run["command"].endswith(
        "run scenarios/quickstart.yaml --set duration=30ms --set warmup=5ms --stats-interval 1ms "
        f"--out {out}")


def test_summary_is_what_the_cli_printed(quick_run):
    out, proc = quick_run
    results = json.loads((out / "results.json").read_text())
    run = json.loads((out / "run.json").read_text())
    printed = proc.stdout.rstrip("\n").splitlines()
    assert printed[-1].startswith("results: ")
    assert report.summary_text(results, run).splitlines() == printed[:-1]


def test_run_page(quick_run):
    out, _ = quick_run
    page = report.make_report(out)
    assert page == out / "report.html"
    text = page.read_text()
    no_outside_references(text)
    results = json.loads((out / "results.json").read_text())
    run = json.loads((out / "run.json").read_text())
    for title in ("Summary", "CPU and VM exits per VM", "Over time: throughput, queues, link use",
                  "Latency distributions", "Scenario, command and build"):
        assert f">{title}</h2>" in text
    # The summary table as printed, the command, the build, the scenario resolved.
    assert html.escape(report.summary_text(results, run)) in text
    assert "run scenarios/quickstart.yaml --set duration=30ms" in text
    assert run["build"]["git"] in text and run["build"]["binary"] in text
    assert "duration: 30ms" in text and "warmup: 5ms" in text
    # Figures: CPU and exits, and one per group of time-series columns that are not all 0.
    import pandas as pd
    ts = pd.read_csv(out / "timeseries.csv")
    groups = [(t, c) for t, c in report._ts_groups(list(ts.columns)) if ts[c].any().any()]
    titles = [t for t, _ in groups]
    assert "Throughput (Mbit/s)" in titles and "Link, engine and memory use (share)" in titles
    assert "Queues (mean occupancy)" in titles
    imgs = images(text)
    assert len(imgs) == 1 + len(groups) + 1  # CPU and exits, the time series, the latency CDFs
    for data in imgs:
        w, h = png_size(data)
        assert w > 300 and h > 150
    for t in titles:
        assert f'alt="{t}"' in text
    # The quickstart's tcp_tx: its messages' latency to the completion and to the peer's
    # receipt, and the TOE's RTT samples, in one figure and a row each of the table.
    assert 'alt="latency CDF of host"' in text
    for kind in ("send_to_completion", "send_to_peer_receipt", "rtt"):
        assert f'<td class="text">{kind}</td>' in text
    assert f"<td>{results['vms'][0]['rtt']['count']}</td>" in text


def test_run_page_latency_cdf(rpc_run):
    text = report.make_report(rpc_run, rpc_run / "page.html").read_text()
    results = json.loads((rpc_run / "results.json").read_text())
    lat = results["vms"][0]["latency"]
    assert lat["count"] > 0
    assert 'alt="latency CDF of host"' in text
    assert f"<td>{lat['count']}</td>" in text and "request_response" in text


@pytest.fixture(scope="module")
def topology_run(tmp_path_factory, vtoe_bin):
    # A slow switch port (1 Gbit/s behind 10) with a small buffer: it queues and drops.
    out, proc = run_once(tmp_path_factory, "report-topology",
                         [str(vtoe_bin), "run", "scenarios/topology/two_hosts_switch.yaml",
                          "--set", "links.1.rate=1Gbps", "--set", "switches.0.buffer=32KiB",
                          "--set", "duration=20ms", "--set", "warmup=5ms", "--stats-interval",
                          "1ms", "--out"], cwd=ROOT, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_topology_run_page_draws_links_switch_queues_and_hosts(topology_run, tmp_path):
    out = topology_run
    text = report.make_report(out, tmp_path / "topology.html").read_text()
    for title in ("Links: use of the line rate per direction (share)",
                  "Switch output queues (bytes: mean and highest in each interval)",
                  "Switch output queues (frames, mean)",
                  "Links and switch ports: frames, drops and ECN marks in each interval",
                  "Hosts of the topology: throughput (Mbit/s)"):
        assert f'alt="{title}"' in text, title
    # The switch's ports and the links' windows in the tables.
    assert "tor: output ports (measured window)" in text and "a_to_b_utilization" in text
    assert '<td class="text">to_server0</td>' in text


def test_every_time_series_column_has_a_figure():
    cols = ["time_s", "vm.a.tx_mbps", "vm.a.cpu.guest_user_share", "cpu.idle_share",
            "vm.a.vm_exits.irq_count", "toe.tx_utilization_share", "toe.ccb_mean_entries",
            "channel.0.sendq_mean_contexts", "vm.a.credit", "vm.a.cwnd_bytes",
            "toe.retransmits_count", "core.1.busy_share", "link.l1.a_to_b_utilization_share",
            "link.l1.drops_count", "switch.s0.port1.queue_mean_bytes",
            "switch.s0.port1.queue_max_bytes", "switch.s0.port1.queue_mean_frames",
            "switch.s0.port1.drops_count", "host.b.tx_mbps", "host.b.vm.x.rx_mbps",
            "host.b.core.0.busy_share", "something.new"]
    groups = dict(report._ts_groups(cols))
    drawn = [c for cs in groups.values() for c in cs]
    assert sorted(drawn) == sorted(cols[1:])  # each once, time_s as the x axis
    assert groups["Queues (mean occupancy)"] == ["toe.ccb_mean_entries",
                                                 "channel.0.sendq_mean_contexts"]
    assert groups["Links: use of the line rate per direction (share)"] == [
        "link.l1.a_to_b_utilization_share"]
    assert groups["Switch output queues (bytes: mean and highest in each interval)"] == [
        "switch.s0.port1.queue_mean_bytes", "switch.s0.port1.queue_max_bytes"]
    assert groups["Switch output queues (frames, mean)"] == ["switch.s0.port1.queue_mean_frames"]
    assert groups["Links and switch ports: frames, drops and ECN marks in each interval"] == [
        "link.l1.drops_count", "switch.s0.port1.drops_count"]
    assert groups["Hosts of the topology: throughput (Mbit/s)"] == ["host.b.tx_mbps",
                                                                    "host.b.vm.x.rx_mbps"]
    assert groups["Throughput (Mbit/s)"] == ["vm.a.tx_mbps"]
    assert groups["Hosts of the topology: cores busy and flows completed"] == [
        "host.b.core.0.busy_share"]
    assert groups["Other columns"] == ["something.new"]


# ---------------------------------------------------------------------------------------- sweeps

SWEEP = """\
base: scenarios/quickstart.yaml
name: report-test
set: [duration=12ms, warmup=3ms, network.loss=0.002]
grid:
  toe.bandwidth: [1Gbps, 10Gbps]
  vms.0.workload.message_size: [1000, 8000]
seeds: [1, 2]
"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory, vtoe_bin):
    spec = tmp_path_factory.mktemp("report-sweep-file") / "s.yaml"
    spec.write_text(SWEEP)
    out, proc = run_once(tmp_path_factory, "report-sweep",
                         [PY, str(ROOT / "scripts" / "sweep.py"), str(spec), "--vtoe",
                          str(vtoe_bin), "--jobs", "2", "--out"],
                         cwd=ROOT, timeout=600 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"page: {out / 'report.html'}" in proc.stdout
    return out


def test_sweep_writes_its_page(sweep_dir):
    import pandas as pd

    text = (sweep_dir / "report.html").read_text()
    no_outside_references(text)
    df = pd.read_csv(sweep_dir / "results.csv")
    knobs, fixed, metrics, constant = report.sweep_layout(df)
    assert knobs == ["toe.bandwidth", "vms.0.workload.message_size"]
    assert fixed == {"duration": "12ms", "warmup": "3ms", "network.loss": 0.002}
    assert "vm.tx_mbps" in metrics and "toe.tx_mbps" in metrics and "seed" not in metrics
    assert "vm.message_size" in metrics  # a result column, even if a knob sets it
    # One figure per metric, each with a panel per knob.
    assert len(images(text)) == len(metrics)
    for m in metrics:
        assert f'alt="{m}"' in text
    assert "1Gbps, 10Gbps" in text and "1000, 8000" in text
    assert "4 points" not in text and "8 points" in text and "2 seeds (1, 2)" in text


def test_sweep_figure_has_a_line_per_other_knob_and_a_band_per_seed_range(sweep_dir):
    import pandas as pd
    from matplotlib.collections import PolyCollection

    df = pd.read_csv(sweep_dir / "results.csv")
    fig = report._metric_figure(df, "vm.tx_mbps", ["toe.bandwidth", "vms.0.workload.message_size"],
                                per_vm=False)
    ax_bw, ax_size = fig.axes
    # Against the bandwidth, one line per message size, and the other way round.
    assert sorted(ln.get_label() for ln in ax_bw.lines) == ["message_size=1000",
                                                             "message_size=8000"]
    assert sorted(ln.get_label() for ln in ax_size.lines) == ["bandwidth=10Gbps",
                                                               "bandwidth=1Gbps"]
    # Each point is the mean over the two seeds; the band spans their range (the link loses
    # frames, so the seeds differ).
    for line in ax_bw.lines:
        size = int(line.get_label().split("=")[1])
        sel = df[df["vms.0.workload.message_size"] == size]
        xs, ys = line.get_data()
        assert list(xs) == [1e9, 1e10]
        for x, y in zip(xs, ys):
            bw = "1Gbps" if x == 1e9 else "10Gbps"
            assert y == pytest.approx(sel[sel["toe.bandwidth"] == bw]["vm.tx_mbps"].mean())
    bands = [c for c in ax_bw.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    spread = df.groupby(["toe.bandwidth", "vms.0.workload.message_size"])["vm.tx_mbps"].agg(
        lambda s: s.max() - s.min())
    assert spread.max() > 0


def test_sweep_point_page_tells_the_points_command(sweep_dir):
    point = sorted((sweep_dir / "points").iterdir())[0]
    info = json.loads((point / "point.json").read_text())
    text = report.make_report(point).read_text()
    sets = " ".join(f"--set {k}={v}" for k, v in info["overrides"].items())
    assert info["base"] == str(ROOT / "scenarios" / "quickstart.yaml")
    assert f"vtoe run {info['base']} {sets} --seed {info['seed']} --out {point}" in text


def test_sweep_figure_without_legend_says_so():
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2] * 20, "b": [i // 2 for i in range(40)], "seed": 1,
                       "point_id": [str(i) for i in range(40)], "m": range(40)})
    unlabelled = []
    fig = report._metric_figure(df, "m", ["a", "b"], per_vm=False, unlabelled=unlabelled)
    assert unlabelled == ["a: 20 lines"]
    assert fig.axes[0].get_legend() is None and fig.axes[1].get_legend() is not None


def test_sweep_knob_left_to_the_base_by_some_points(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"policy": ["rr", "dwrr", "fcfs"], "toe.bandwidth": [None, None, "10Gbps"],
                       "seed": 1, "point_id": ["a", "b", "c"], "m": [1.0, 2.0, 3.0]})
    df.to_csv(tmp_path / "results.csv", index=False)
    knobs, fixed, metrics, _ = report.sweep_layout(pd.read_csv(tmp_path / "results.csv"))
    assert knobs == ["policy", "toe.bandwidth"] and fixed == {} and metrics == ["m"]
    text = report.make_report(tmp_path).read_text()
    assert "<td class=\"text\">(base), 10Gbps</td>" in text
    assert len(images(text)) == 1


def test_sweep_no_report_flag(tmp_path, vtoe_bin):
    (tmp_path / "s.yaml").write_text(
        "base: scenarios/quickstart.yaml\nname: nr\nset: [duration=4ms, warmup=1ms]\n"
        "grid: {vms.0.workload.message_size: [1000, 2000]}\n")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "report.html").write_text("a page of an earlier table")
    proc = subprocess.run([PY, str(ROOT / "scripts" / "sweep.py"), str(tmp_path / "s.yaml"),
                           "--out", str(tmp_path / "o"), "--vtoe", str(vtoe_bin), "--no-report"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "results.csv").is_file()
    assert not (tmp_path / "o" / "report.html").exists()


# ---------------------------------------------------------------------------------------- the paper

def fake_paper(out: Path):
    """A report as scripts/reproduce.py writes it (its own Report class), with two figures."""
    import reproduce

    from vtoe.page import require_matplotlib

    plt = require_matplotlib()
    manifest = {"numbers": [
        {"id": "native_tx", "what": "native transmit (Mbit/s)", "paper": 4991,
         "source": "§5.1, Fig. 9a", "tolerance": 10, "label": "fitted"},
        {"id": "dwrr", "what": "DWRR share error (%)", "paper": 0, "source": "§5.2, Fig. 12",
         "tolerance": 10, "label": "mechanism"}], "fitted": []}
    rep = reproduce.Report(manifest)
    rep.number("native_tx", 4996.7)
    rep.number("dwrr", 2.5)
    for name in ("fig9a", "fig12"):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2, 3], [3, 1, 2])
        reproduce.save(fig, out, name)
        plt.close(fig)
    rep.section("Fig. 9a: transmit throughput, 10 Gbit/s",
                ["8000-byte messages: native 4997 Mbit/s.", ""]
                + reproduce.table(["message size", "Native"], [[8000, "4997"]])
                + ["", "![Fig. 9a](fig9a.png)"])
    rep.section("Fig. 12: weighted shares over time", ["![Fig. 12](fig12.png)"])
    rep.claim("Transmit: throughput rises with the message size", "9a", True, "1 < 2", "rising")
    rep.claim("DWRR keeps shares 4:1:2:2", "12", False, "4:1:2:3", "within 10%")
    rep.claim("Tickle improves on BOOST", "13a-c", True, "x", "y")
    rep.write(out / "report.md", "# vtoe: reproduction of section 5\n\n3 simulations.")
    (out / "summary.json").write_text("{}\n")


def test_paper_page_puts_each_figure_beside_the_papers_numbers(tmp_path):
    fake_paper(tmp_path)
    assert report.kind_of(tmp_path) == "paper"
    text = report.make_report(tmp_path).read_text()
    no_outside_references(text)
    assert "<title>vtoe: reproduction of section 5</title>" in text
    imgs = images(text)
    assert len(imgs) == 2
    assert imgs[0] == (tmp_path / "fig9a.png").read_bytes()  # embedded as drawn
    sections = {m.group(1): m.group(2) for m in re.finditer(
        r"<section id=\"s\d+\"><h2>([^<]*)</h2>(.*?)</section>", text, re.S)}
    fig9a = sections["Fig. 9a: transmit throughput, 10 Gbit/s"]
    left, right = re.match(r'<div class="side"><div>(.*?)</div><div>(.*)</div></div>', fig9a,
                           re.S).groups()
    assert "The paper: Fig. 9a" in left and "4991 (§5.1, Fig. 9a)" in left
    # vtoe's value, the error and the verdict in their columns
    assert ('<td class="text">4997</td><td class="text">+0.1%</td><td class="text">'
            '<span class="holds">within</span></td>') in left
    assert '<td class="text">|error| &lt;= 10%</td>' in text  # a pipe inside a cell
    assert "throughput rises with the message size" in left and "DWRR" not in left
    assert "Tickle" not in left
    assert 'alt="Fig. 9a"' in right and "8000-byte messages" in right
    fig12 = sections["Fig. 12: weighted shares over time"]
    assert "DWRR keeps shares" in fig12 and "DWRR share error" in fig12
    assert '<span class="fails"><strong>does not hold</strong></span>' in fig12
    # The report's other sections are there as HTML tables.
    assert "Claims of section 5" in sections and "<table>" in sections["Claims of section 5"]


def test_a_studys_report_md_is_a_page_too(tmp_path):
    from vtoe.page import require_matplotlib

    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1])
    fig.savefig(tmp_path / "study_clock.png")
    plt.close(fig)
    (tmp_path / "report.md").write_text(
        "# vtoe: TOE design-space study\n\nQuick mode.\n\n## Verdicts\n\n"
        "| # | verdict |\n|---|---|\n| 1 | **fail** |\n\n*1 engine*: knee.\n\n"
        "## Fig. 1: not the paper's\n\n### clock\n\nSee [toe.md](../docs/toe.md).\n\n"
        "```\nvtoe run x.yaml\n```\n\n![clock](study_clock.png)\n")
    text = report.make_report(tmp_path).read_text()
    no_outside_references(text)
    assert "<title>vtoe: TOE design-space study</title>" in text and "<p>Quick mode.</p>" in text
    assert "<h3>clock</h3>" in text and "See toe.md (../docs/toe.md)." in text
    assert "<pre>vtoe run x.yaml</pre>" in text and "<strong>fail</strong>" in text
    assert "<p><em>1 engine</em>: knee.</p>" in text
    assert '<div class="side">' not in text  # no paper's numbers to put beside the figure
    assert len(images(text)) == 1


def fake_studies(out: Path):
    """What `make studies` leaves in its directory (scripts/studies.py): studies.json, summary.md
    and a folder per study with its report.md and figures."""
    from vtoe.page import require_matplotlib

    plt = require_matplotlib()
    out.mkdir(parents=True, exist_ok=True)
    names = ["haas", "virttas"]
    for name in names:
        (out / name).mkdir()
        for png in ("rtt_cdf.png", "sensitivity.png"):
            fig, ax = plt.subplots(figsize=(3, 2))
            ax.plot([0, 1], [1, 0])
            fig.savefig(out / name / png)
            plt.close(fig)
        (out / name / "report.md").write_text(
            f"# {name}: a study\n\n## Verdicts\n\n| # | verdict | class | reason |\n"
            "|---|---|---|---|\n| X1 | pass | shape | 1.2; test: > 1 |\n\n"
            "## Sensitivity to the assumed costs\n\n| # | verdict | across every range | "
            "flipped by |\n|---|---|---|---|\n| X1 | pass | flips | c at 3 |\n\n"
            "![verdict margins against the assumed constants](sensitivity.png)\n\n"
            "## Tables\n\n![cdf](rtt_cdf.png)\n")
    (out / "summary.md").write_text("# The studies (full variants)\n\n| study | pass |\n"
                                    "|---|---|\n| haas | 1 |\n| virttas | 1 |\n")
    (out / "studies.json").write_text(json.dumps({
        "commit": "0123456789ab", "dirty": False, "variant": "full",
        "command": "python3 scripts/studies.py --jobs 2", "wall_s": 600.0,
        "studies": [{"name": n, "command": f"python3 scripts/study_{n}.py --jobs 2 --out "
                     f"out/studies/{n}", "wall_s": 1.0, "returncode": 0} for n in names]}))
    return out


def test_studies_page_has_every_study_the_commit_and_the_commands(tmp_path):
    d = fake_studies(tmp_path / "studies")
    text = report.make_report(d).read_text()
    no_outside_references(text)
    assert "Made at git 0123456789ab by python3 scripts/studies.py --jobs 2, 600 s." in text
    assert "python3 scripts/study_virttas.py --jobs 2 --out out/studies/virttas" in text
    for name in ("haas", "virttas"):
        assert f"<h2>{name}: a study</h2>" in text
    # Each study's own sections sit under its section; its figures are embedded.
    assert text.count("<h3>Sensitivity to the assumed costs</h3>") == 2
    assert len(images(text)) == 4
    (d / "virttas" / "sensitivity.png").unlink()
    with pytest.raises(report.ReportError, match="sensitivity.png"):
        report.make_report(d)
    (d / "virttas" / "report.md").unlink()
    with pytest.raises(report.ReportError, match="no report.md for virttas"):
        report.make_report(d)


def test_paper_page_missing_figure_is_an_error(tmp_path):
    fake_paper(tmp_path)
    (tmp_path / "fig12.png").unlink()
    with pytest.raises(report.ReportError, match="fig12.png"):
        report.make_report(tmp_path)


# ---------------------------------------------------------------------------------------- the command

def test_vtoe_report_command(quick_run, vtoe_bin, tmp_path):
    out, _ = quick_run
    page = tmp_path / "p.html"
    proc = subprocess.run([str(vtoe_bin), "report", str(out), "--out", str(page)],
                          capture_output=True, text=True, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"report: {page}"
    assert page.read_text() == report.run_page(out).render()


def test_vtoe_report_errors(vtoe_bin, tmp_path):
    proc = subprocess.run([str(vtoe_bin), "report", str(tmp_path)], capture_output=True,
                          text=True, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"vtoe report: {tmp_path}: no results.json (a run), "
                                   "results.csv (a sweep), report.md (make paper's or a "
                                   "study's output) or studies.json (make studies') in it")
    proc = subprocess.run([str(vtoe_bin), "report"], capture_output=True, text=True)
    assert proc.returncode == 2 and "dir is required" in proc.stderr
    env = dict(os.environ, VTOE_PYTHON=str(tmp_path / "no-python"))
    proc = subprocess.run([str(vtoe_bin), "report", str(tmp_path)], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"vtoe report: cannot run {tmp_path / 'no-python'} (No such "
                                  "file or directory): the report page is made by the Python "
                                  "package vtoe with matplotlib")


def blocked_python(tmp_path, module):
    """A Python for VTOE_PYTHON in which `module` cannot be imported."""
    fake = tmp_path / "blocked"
    (fake / module).mkdir(parents=True)
    (fake / module / "__init__.py").write_text(f"raise ImportError('no module named {module}')\n")
    wrapper = tmp_path / "python-without"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={fake}:$PYTHONPATH exec {PY} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_missing_matplotlib_is_an_error_not_a_page_without_figures(quick_run, vtoe_bin, tmp_path):
    out, _ = quick_run
    page = tmp_path / "p.html"
    env = dict(os.environ, VTOE_PYTHON=str(blocked_python(tmp_path, "matplotlib")))
    proc = subprocess.run([str(vtoe_bin), "report", str(out), "--out", str(page)],
                          capture_output=True, text=True, env=env, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"vtoe report: matplotlib is missing for {PY}")
    assert "make venv" in proc.stderr
    assert not page.exists()


@pytest.mark.parametrize("module, message", [
    ("pandas", "vtoe report: pandas is missing for {py}"),
    ("vtoe", "vtoe report: {py} cannot import the vtoe Python package"),
])
def test_missing_package_names_it_and_the_interpreter(quick_run, vtoe_bin, tmp_path, module,
                                                      message):
    out, _ = quick_run
    env = dict(os.environ, VTOE_PYTHON=str(blocked_python(tmp_path, module)))
    proc = subprocess.run([str(vtoe_bin), "report", str(out), "--out", str(tmp_path / "p.html")],
                          capture_output=True, text=True, env=env, timeout=120 * TIMEOUT_FACTOR)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message.format(py=PY)), proc.stderr
    assert "make venv" in proc.stderr and not (tmp_path / "p.html").exists()


def test_page_machinery_is_deterministic_and_escapes(tmp_path):
    def build():
        page = Page("a <b> & c")
        sec = page.section("S", intro="x < y")
        fig, ax = page.figure(width=3, height=2)
        ax.plot([0, 1], [1, 0])
        sec.add_figure(fig, alt="line")
        sec.add_table(["k", "v"], [["<i>", 1.23456789], ["n", float("nan")]])
        return page

    a, b = build().render(), build().render()
    assert a == b
    assert "<title>a &lt;b&gt; &amp; c</title>" in a and "x &lt; y" in a
    assert "<td class=\"text\">&lt;i&gt;</td><td>1.235</td>" in a
    assert build().figure_count == 1


# ---------------------------------------------------------------------------------------- in a browser

CHECK = """<script>
var vtoeErrors = [];
window.addEventListener("error", function (e) {
  vtoeErrors.push((e.message ||
                   ("cannot load " + (e.target && (e.target.src || e.target.href)))).slice(0, 120));
}, true);
window.addEventListener("load", function () {
  var imgs = Array.from(document.images);
  var r = {images: imgs.length,
           loaded: imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
           svgs: document.querySelectorAll("svg").length,
           sections: document.querySelectorAll("section").length,
           height: document.body.scrollHeight, errors: vtoeErrors};
  var pre = document.createElement("pre");
  pre.id = "vtoe-check";
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
});
</script>"""


def chromium():
    import shutil
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is missing: "
                    "scripts/install-deps.sh installs Debian's chromium package")
def test_pages_render_in_headless_chromium(quick_run, sweep_dir, topology_run, tmp_path):
    """Each kind of page in headless Chromium: it renders, every figure loads (naturalWidth > 0),
    nothing fails to load and nothing reaches the console. The page has no script of its own;
    a copy gets one in <head> that records errors and, at load, what it sees."""
    paper = tmp_path / "paper"
    paper.mkdir()
    fake_paper(paper)
    pages = {"run": report.make_report(quick_run[0], tmp_path / "run.html"),
             "topology": report.make_report(topology_run, tmp_path / "topology.html"),
             "sweep": sweep_dir / "report.html",
             "paper": report.make_report(paper),
             "studies": report.make_report(fake_studies(tmp_path / "studies"))}
    procs = {}
    for name, page in pages.items():
        copy = tmp_path / f"{name}.check.html"
        copy.write_text(page.read_text().replace("<head>", "<head>" + CHECK, 1))
        procs[name] = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
             "--v=0", f"--user-data-dir={tmp_path / ('profile-' + name)}",
             "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for name, proc in procs.items():
        dom, err = proc.communicate(timeout=120 * TIMEOUT_FACTOR)
        assert proc.returncode == 0, err
        m = re.search(r'<pre id="vtoe-check">(.*?)</pre>', dom, re.S)
        assert m, f"{name}: the page did not finish loading:\n{err[-2000:]}"
        seen = json.loads(html.unescape(m.group(1)))
        expected = len(images(pages[name].read_text()))
        assert expected > 0
        assert seen["images"] == expected and seen["loaded"] == expected, (name, seen)
        assert seen["errors"] == [], (name, seen)
        assert seen["sections"] >= 2 and seen["height"] > 1000, (name, seen)
        console = [ln for ln in err.splitlines() if ":CONSOLE" in ln]
        assert console == [], (name, console)


def test_run_page_of_an_iss_run_shows_where_the_instructions_went(quick_run, tmp_path):
    """platform.cpu_model=iss adds results.json's iss section (docs/iss-mode.md): its counts and
    the profile by image and function get a section of their own (here on a copy of the quick
    run with such a section added: a real one boots Linux, tests/system/test_iss_mode.py)."""
    import shutil
    out, _ = quick_run
    d = tmp_path / "iss"
    shutil.copytree(out, d)
    results = json.loads((d / "results.json").read_text())
    results["iss"] = {
        "command": "toe_stream 10.0.0.2 5001 0 8000",
        "instructions": {"user": 1200, "kernel": 98800}, "cycles": {"user": 1500, "kernel": 123000},
        "toe_commands": 10, "toe_completions": 10, "toe_interrupts": 9,
        "per_toe_command": {"instructions": 10000.0, "cycles": 12450.0},
        "per_interrupt": {"interrupts_handled": 9, "instructions": 1900.5, "cycles": 2315.5},
        "device_stall_cycles": 400, "boot_s": 1.77, "boot_instructions": 3300000000,
        "profile": {"interval_instructions": 1009, "samples": 99,
                    "by_image": {"kernel": 0.9, "vtoe_toe": 0.1},
                    "by_symbol": [{"image": "kernel", "symbol": "arm_copy_from_user",
                                   "samples": 60, "share": 0.606},
                                  {"image": "vtoe_toe", "symbol": "toe_post", "samples": 10,
                                   "share": 0.101}]}}
    (d / "results.json").write_text(json.dumps(results))
    text = report.make_report(d).read_text()
    assert ">Linux on the ISS: where the instructions went</h2>" in text
    assert "toe_stream 10.0.0.2 5001 0 8000" in text and "10000.0 / 12450.0" in text
    assert "1900.5 / 2315.5" in text
    assert "arm_copy_from_user" in text and "60.60%" in text and "toe_post" in text
    assert "every 1009 instructions" in text
    # A run without the section has none.
    assert ">Linux on the ISS" not in report.make_report(out).read_text()
