"""The Miniproxy study (scripts/study_miniproxy.py): its model gives the paper's figures, its
verdicts fail when the runs disagree, and a quick run (vtoe on light hosts) passes every row."""
import json
import os
import sys
from pathlib import Path

import pytest

import study_miniproxy as s
from scripts_paths import (TIMEOUT_FACTOR, check_docs_quote_quick_figures,
                           check_report_opens_with_verdict_table, run_once)

ROOT = Path(__file__).resolve().parents[2]


def test_slow_start_rounds_follow_iw_times_mss():
    assert s.rounds(10_000) == 1
    assert s.rounds(14_480) == 1  # IW * MSS exactly
    assert s.rounds(14_481) == 2
    assert s.rounds(25_000) == 2
    assert s.rounds(500_000) == 6


def test_model_gives_the_papers_stated_reductions():
    def cut(n, size, index):
        base = s.model([50.0], size)[index]
        return s.pct(s.model([50.0 / (n + 1)] * (n + 1), size)[index], base)

    assert [round(cut(n, 10_000, 0), 1) for n in (1, 2, 3)] == [25.0, 33.3, 37.5]
    assert [round(cut(n, 25_000, 1), 1) for n in (1, 2, 3)] == [33.3, 44.4, 50.0]
    assert s.model([25.0, 25.0], 10_000, esf=False)[0] == 200.0  # no ESF: TTFB stays 4D
    assert s.model([10.0, 40.0], 10_000)[0] == 180.0  # 2D + 2 max D_j


def fake_runs(scale=1.0):
    """Runs that agree with the model (scale 1), or whose proxied TTFB and TTC are off."""
    runs = []
    for p in s.grid(quick=True):
        ttfb, _ = s.model(p["hops"], p["size"], p["esf"])
        ttc = s.serialised(p["hops"], p["size"], p["esf"])
        f = scale if p["n"] else 1.0
        runs.append((p, {"ttfb_ms": ttfb * f, "ttc_ms": ttc * f, "flows_done": 1, "flows": 1,
                         "retransmits": 0, "hystart": 0}))
    return runs


def test_verdicts_pass_on_the_model_and_fail_on_runs_that_miss_it():
    good = {r["id"]: r["verdict"] for r in s.analyse(fake_runs(), quick=True)}
    assert all(good[k] == "pass" for k in ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "G"))
    bad = {r["id"]: r["verdict"] for r in s.analyse(fake_runs(1.05), quick=True)}
    assert bad["P1"] == "fail" and bad["P2"] == "fail" and bad["P5"] == "fail"
    lossy = fake_runs()
    lossy[0][1]["retransmits"] = 1
    assert {r["id"]: r["verdict"] for r in s.analyse(lossy, quick=True)}["G"] == "fail"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        env["VTOE_BIN"] = str(ROOT / "build" / env.get("VTOE_PRESET", "release") / "app" / "vtoe")
    out, proc = run_once(tmp_path_factory, "miniproxy",
                         [sys.executable, str(ROOT / "scripts" / "study_miniproxy.py"), "--quick",
                          "--jobs", "2", "--out"], env=env, timeout=600 * TIMEOUT_FACTOR)
    assert (out / "summary.json").exists(), proc.stdout + proc.stderr
    (out / "stdout.txt").write_text(proc.stdout)
    summary = json.loads((out / "summary.json").read_text())
    failed = [r["id"] for r in summary["rows"] if r["verdict"] == "fail"]
    # Exit status 1 exactly when a verdict fails.
    assert proc.returncode == (1 if failed else 0), proc.stdout + proc.stderr
    return out


def test_quick_study_passes_every_checked_row_with_the_runs_numbers(study):
    summary = json.loads((study / "summary.json").read_text())
    verdicts = {r["id"]: r["verdict"] for r in summary["rows"]}
    for rid in ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "G"):
        assert verdicts[rid] == "pass", rid
    report = (study / "report.md").read_text()
    for r in summary["rows"]:
        assert f"| {r['id']} | {r['claim']} |" in report
    runs = {(r["set"], r["n"], r["size"], r["esf"]): r for r in summary["runs"]}
    # The paper's 10 kB TTFB figures, from the runs themselves.
    base = runs[("chain", 0, 10_000, True)]["ttfb_ms"]
    assert base == pytest.approx(200.0, abs=1.0)
    one = runs[("chain", 1, 10_000, True)]["ttfb_ms"]
    assert s.pct(one, base) == pytest.approx(25.0, abs=1.0)
    assert f"{one:.2f}" in report
    assert all(r["flows_done"] == r["flows"] == s.FLOWS for r in summary["runs"])


def test_report_opens_with_the_verdict_table_the_script_prints(study):
    check_report_opens_with_verdict_table(study)


def test_the_docs_quote_the_quick_variants_figures_as_it_gives_them(study):
    figures = check_docs_quote_quick_figures("miniproxy_quick", study)
