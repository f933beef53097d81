"""The SocksDirect study (scripts/study_socksdirect.py): a quick run passes every checked row and
its report orders the paths by latency with p1 and p99; the verdicts fail when the runs disagree."""
import copy
import json
import os
import sys
from pathlib import Path

import study_socksdirect as s
import study_common
from scripts_paths import (TIMEOUT_FACTOR, check_docs_quote_quick_figures,
                           check_report_opens_with_verdict_table, run_once)

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        env["VTOE_BIN"] = str(ROOT / "build" / env.get("VTOE_PRESET", "release") / "app" / "vtoe")
    out, proc = run_once(tmp_path_factory, "socksdirect",
                         [sys.executable, str(ROOT / "scripts" / "study_socksdirect.py"),
                          "--quick", "--jobs", "2", "--out"], env=env,
                         timeout=600 * TIMEOUT_FACTOR)
    assert (out / "summary.json").exists(), proc.stdout + proc.stderr
    (out / "stdout.txt").write_text(proc.stdout)
    summary = json.loads((out / "summary.json").read_text())
    failed = [r["id"] for r in summary["rows"] if r["verdict"] == "fail"]
    # Exit status 1 exactly when a verdict fails.
    assert proc.returncode == (1 if failed else 0), proc.stdout + proc.stderr
    return out


def runs_of(study):
    summary = json.loads((study / "summary.json").read_text())
    point_keys = ("kind", "path", "size", "pairs", "share", "workers", "active", "conns")
    return [({k: r[k] for k in point_keys if k in r},
             {k: v for k, v in r.items() if k not in point_keys}) for r in summary["runs"]]


def test_quick_study_passes_and_orders_the_paths_by_latency(study):
    summary = json.loads((study / "summary.json").read_text())
    checked = [r for r in summary["rows"] if r["class"] != "not checkable"]
    assert checked and all(r["verdict"] == "pass" for r in checked), \
        [(r["id"], r["vtoe"]) for r in checked if r["verdict"] != "pass"]
    report = (study / "report.md").read_text()
    for r in summary["rows"]:
        assert f"| {r['id']} | {r['claim']} |" in report
    # The round-trip table lists the paths fastest first, each cell p50 [p1, p99].
    table = report.split("## Round trip against message size")[1].split("##")[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| Path")]
    assert [p for p in rows if p in s.ORDER] == s.ORDER
    assert "[" in table and "]" in table


def test_verdicts_fail_when_the_runs_disagree(study):
    runs = runs_of(study)
    rows = {r["id"]: r["verdict"] for r in s.analyse(runs)}
    assert rows["S1"] == rows["S3"] == rows["S5"] == "pass"
    # Shared memory as slow as the kernel socket breaks the order and the gap.
    slow = copy.deepcopy(runs)
    for p, m in slow:
        if p["kind"] == "rtt" and p["path"] == "S":
            m["latency"] = {k: v * 30 if k.endswith("_us") else v
                            for k, v in m["latency"].items()}
    verdicts = {r["id"]: r["verdict"] for r in s.analyse(slow)}
    assert verdicts["S1"] == "fail" and verdicts["S3"] == "fail"
    # Zero copy that moves nothing faster fails S5.
    flat = copy.deepcopy(runs)
    k_rates = {(p["kind"], p.get("size")): m["msgs_per_s"] for p, m in runs if p["path"] == "K"}
    for p, m in flat:
        if p["path"] == "SZ":
            m["msgs_per_s"] = k_rates[(p["kind"], p.get("size"))]
    assert {r["id"]: r["verdict"] for r in s.analyse(flat)}["S5"] == "fail"


def test_report_opens_with_the_verdict_table_the_script_prints(study):
    check_report_opens_with_verdict_table(study)


def test_the_docs_quote_the_quick_variants_figures_as_it_gives_them(study):
    figures = check_docs_quote_quick_figures("socksdirect_quick", study)


def test_a_starved_pair_fails_the_guard_and_the_scaling_verdict_is_not_posed(study):
    runs = runs_of(study)
    starved = copy.deepcopy(runs)
    for p, m in starved:
        if p["kind"] == "pairs" and p["path"] == "S" and p["pairs"] == max(s.QUICK_PAIRS):
            m["per_pair"] = [m["per_pair"][0] / 20] + m["per_pair"][1:]
    rows = {r["id"]: r for r in s.analyse(starved)}
    assert rows["G"]["verdict"] == "fail" and "pair 0" in rows["G"]["vtoe"]
    assert rows["S10"]["verdict"] == "not posed" and "pairs S 8 16" in rows["S10"]["reason"]
    assert rows["S1"]["verdict"] == "pass"  # the one-pair sweeps do not need that run
    # The quick run itself: every pair of every multi-pair run within a tenth of the others.
    for p, m in runs:
        assert len(m["per_pair"]) == p.get("pairs", 1)
        assert not study_common.starved(m["per_pair"])


def test_the_scaling_verdicts_fail_when_the_runs_disagree(study):
    runs = runs_of(study)
    # The quick run has the paper's 16 pairs and connections past the TOE's connection cache.
    assert max(p.get("pairs", 1) for p, _ in runs) == 16
    assert max(p.get("conns", 1) for p, _ in runs) > s.CCB_CACHE
    # The kernel socket scaling as well as shared memory: its lead no longer grows (S13).
    linear = copy.deepcopy(runs)
    k1 = next(m["msgs_per_s"] for p, m in runs if p["kind"] == "pairs" and p["path"] == "K"
              and p["pairs"] == 1)
    for p, m in linear:
        if p["kind"] == "pairs" and p["path"] == "K" and p["pairs"] > 1:
            m["msgs_per_s"] = 2 * k1 * p["pairs"]
    assert {r["id"]: r["verdict"] for r in s.analyse(linear)}["S13"] == "fail"
    # No cliff past the connection cache (a cache as large as the connections): S9 fails, and
    # S8 with it once the TOE paths keep their rate as shared memory does.
    flat = copy.deepcopy(runs)
    base = {p["path"]: m["msgs_per_s"] for p, m in runs if p["kind"] == "conns" and p["conns"] == 1}
    for p, m in flat:
        if p["kind"] == "conns":
            m["msgs_per_s"] = base[p["path"]]
    rows = {r["id"]: r["verdict"] for r in s.analyse(flat)}
    assert rows["S9"] == "fail" and rows["S8"] == "fail"
