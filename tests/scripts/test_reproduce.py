"""The paper reproduction: figures and report are produced, and the report's numbers are the
underlying simulation results. The normal build checks the full `make paper` run, once per test
session (test_readme_figures.py compares the README's summary with the same report); under asan
it is the quick variant without the out-of-sample fit."""
import json

import pytest

from scripts_paths import NO_FIT, paper_reproduction


@pytest.fixture(scope="module")
def reproduction(tmp_path_factory):
    return paper_reproduction(tmp_path_factory)


def point_results(out, sweep):
    for pdir in sorted((out / "runs" / sweep / "points").iterdir()):
        if (pdir / "results.json").exists():
            yield json.loads((pdir / "point.json").read_text()), json.loads((pdir / "results.json").read_text())


def test_every_figure_in_png_and_svg_and_a_report(reproduction):
    out, proc = reproduction
    for name in ("fig07", "fig9a", "fig9b", "fig9c", "fig9d", "fig10", "fig11", "fig12", "fig13"):
        for ext in ("png", "svg"):
            assert (out / f"{name}.{ext}").stat().st_size > 1000, name
    report = (out / "report.md").read_text()
    assert "## Claims of section 5" in report and "| Claim | Figure | Test | Verdict | Evidence |" in report
    assert "## Summary" in report and "predicted numbers" in report and "fitted numbers" in report
    for fig in ("9a", "9b", "9c", "9d", "10", "11a", "11b", "12", "13a", "7"):
        assert f"| {fig} |" in report
    assert "claims hold" in proc.stdout
    # The same report as one page, every figure embedded (tests/scripts/test_report.py checks
    # its content and loads it in a browser).
    page = (out / "report.html").read_text()
    assert f"page: {out / 'report.html'}" in proc.stdout
    assert page.count('<img src="data:image/png;base64,') == report.count("![Fig.")
    assert ">Claims of section 5</h2>" in page and '<div class="side">' in page
    if not NO_FIT:
        assert "## Out-of-sample check (scripts/fit.py)" in report and "out of sample (fitted on" in report


def test_report_numbers_are_the_simulation_results(reproduction):
    out, _ = reproduction
    summary = json.loads((out / "summary.json").read_text())
    checked = 0
    for point, res in point_results(out, "fig09ab"):
        vm = res["vms"][0]
        fig = "9a" if vm["workload"] == "tcp_tx" else "9b"
        key = f"fig{fig}.{res['architecture']}.{vm['message_size']}"
        assert summary[key] == pytest.approx(vm["tx_mbps"] + vm["rx_mbps"], abs=1e-3), key
        checked += 1
    for point, res in point_results(out, "fig11"):
        tag = "11a" if point["overrides"]["toe.dispatcher.policy"] == "rr" else "11b"
        for i, vm in enumerate(res["vms"]):
            assert summary[f"fig{tag}.vm{i}"] == pytest.approx(vm["tx_mbps"], abs=1e-3)
            checked += 1
    assert checked >= 24 + 8
    # The report quotes the same numbers.
    report = (out / "report.md").read_text()
    assert f"{summary['fig9a.native.8000']:.0f}" in report
