"""The paper reproduction in quick mode: figures and report are produced, and the report's
numbers are the underlying simulation results."""
import json
import os
import sys
from pathlib import Path

import pytest

from scripts_paths import REDUCED, TIMEOUT_FACTOR, run_once

# Under asan the out-of-sample fit (scripts/fit.py: a sequential bisection, dozens of runs one
# after another) is left out: its runs are the same simulations as the sweeps', and the normal
# build checks its section of the report (VTOE_FULL_SCALE=1 keeps it; docs/fuzzing.md).
NO_FIT = ["--no-fit"] if REDUCED else []

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reproduction(tmp_path_factory):
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        preset = env.get("VTOE_PRESET", "release")
        env["VTOE_BIN"] = str(ROOT / "build" / preset / "app" / "vtoe")
    out, proc = run_once(tmp_path_factory, "paper",
                         [sys.executable, str(ROOT / "scripts" / "reproduce.py"), "--quick", *NO_FIT,
                          "--out"], env=env, timeout=1800 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc


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
