"""The HaaS study (scripts/study_haas.py): its verdicts fail when the runs disagree (the analytic
timer check among them), and a quick run passes every checked row with exits by cause for every
configuration."""
import copy
import json
import os
import sys
from pathlib import Path

import pytest

import study_haas as s
from scripts_paths import (TIMEOUT_FACTOR, check_docs_quote_quick_figures,
                           check_report_opens_with_verdict_table, run_once)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        env["VTOE_BIN"] = str(ROOT / "build" / env.get("VTOE_PRESET", "release") / "app" / "vtoe")
    out, proc = run_once(tmp_path_factory, "haas",
                         [sys.executable, str(ROOT / "scripts" / "study_haas.py"), "--quick",
                          "--jobs", "2", "--out"], env=env, timeout=600 * TIMEOUT_FACTOR)
    assert (out / "summary.json").exists(), proc.stdout + proc.stderr
    (out / "stdout.txt").write_text(proc.stdout)
    summary = json.loads((out / "summary.json").read_text())
    failed = [r["id"] for r in summary["rows"] if r["verdict"] == "fail"]
    # Exit status 1 exactly when a verdict fails.
    assert proc.returncode == (1 if failed else 0), proc.stdout + proc.stderr
    return out


def runs_of(study):
    summary = json.loads((study / "summary.json").read_text())
    return [({"config": r["config"], "workload": r["workload"]},
             {k: v for k, v in r.items() if k not in ("config", "workload")})
            for r in summary["runs"]]


def test_quick_study_passes_every_checked_row_with_exits_for_every_config(study):
    summary = json.loads((study / "summary.json").read_text())
    checked = [r for r in summary["rows"] if r["class"] != "not checkable"]
    assert checked and all(r["verdict"] == "pass" for r in checked), \
        [(r["id"], r["vtoe"]) for r in checked if r["verdict"] != "pass"]
    report = (study / "report.md").read_text()
    for r in summary["rows"]:
        assert f"| {r['id']} | {r['claim']} |" in report
    # Table 2 has a column per virtualized configuration, a row per cause.
    assert "| Exit cause (per s, transmit) | " + " | ".join(c for c in s.CONFIGS if c != "bare") \
        in report
    for cause in ("WFI (HLT)", "Stage-2 abort", "Interrupt: device", "Interrupt: timer",
                  "Interrupt: IPI"):
        assert f"| {cause}" in report
    # The analytic check from the runs themselves: OPTI's timer exits are the two tick rates.
    runs = {(p["config"], p["workload"]): m for p, m in runs_of(study)}
    opti = runs[("opti", "tx")]
    assert (opti["exits"]["timer"] + opti["exits"]["vtimer"]) / opti["measured_s"] == \
        pytest.approx(s.HOST_HZ + s.GUEST_HZ, rel=0.02)
    assert runs[("opti", "rr")]["latency"]["p99_us"] >= runs[("opti", "rr")]["latency"]["p1_us"]


def verdicts(runs):
    return {r["id"]: r["verdict"] for r in s.analyse(runs)}


def test_verdicts_fail_when_the_runs_disagree(study):
    runs = runs_of(study)
    # Synchronised ticks would merge into 250 exits/s: the analytic check must fail.
    merged = copy.deepcopy(runs)
    for p, m in merged:
        if p["config"] == "opti":
            m["exits"]["vtimer"] = 0
    assert verdicts(merged)["H8"] == "fail"
    # Without the halt poll's host time, VFIO no longer costs more than VHOST.
    no_poll = copy.deepcopy(runs)
    for p, m in no_poll:
        if p["config"] == "vfio":
            m["hypervisor"] = 0.01
    assert verdicts(no_poll)["H13"] == "fail"
    # Device interrupts that exit under vfio break the pass-through claim.
    noisy = copy.deepcopy(runs)
    for p, m in noisy:
        if p["config"] == "vfio" and p["workload"] == "tx":
            m["per_s"]["irq_device"] = 5000.0
    assert verdicts(noisy)["H5"] == "fail"


def test_report_opens_with_the_verdict_table_the_script_prints(study):
    check_report_opens_with_verdict_table(study)


def test_the_docs_quote_the_quick_variants_figures_as_it_gives_them(study):
    figures = check_docs_quote_quick_figures("haas_quick", study)


def test_the_quick_variant_sweeps_halt_polling_in_the_runs_that_use_it(study):
    """The quick sensitivity sweep (scripts/study_sensitivity.py): halt polling's window at
    half and twice the study's value in the four vfio runs, through the sweep runner."""
    summary = json.loads((study / "summary.json").read_text())
    sens = summary["sensitivity"]
    (c,) = sens["constants"]
    assert c["id"] == "halt_poll" and c["values"] == [100.0, 200.0, 400.0]
    assert c["runs_per_value"] == 4
    # The runs reached vtoe with the values swept: the sweep's resolved scenarios say so.
    seen = sorted(line.strip() for f in (study / "sensitivity").glob("haas-halt_poll-*/points/*/"
                                                                     "scenario.yaml")
                  for line in f.read_text().splitlines() if "halt_poll:" in line)
    assert seen == ["halt_poll: 100us"] * 4 + ["halt_poll: 400us"] * 4
    # At the study's value the sweep's verdicts and margins are the study's own.
    rows = {r["id"]: r for r in summary["rows"]}
    for rid, by in sens["rows"].items():
        e = by["halt_poll"]
        assert e["verdicts"][1] == rows[rid]["verdict"] and e["margins"][1] == rows[rid].get("margin")
    # Every verdict says whether it holds over the range; the report has the table and the plot.
    assert set(sens["verdicts"]) == set(rows)
    section = (study / "report.md").read_text().split("## Sensitivity to the assumed costs")[1]
    for rid, v in sens["verdicts"].items():
        assert f"| {rid} | {v['verdict']} | " in section
    assert "(sensitivity.png)" in section and (study / "sensitivity.png").stat().st_size > 0


def test_h2b_fails_with_the_back_end_on_the_vms_own_core(study, monkeypatch):
    """The third core is the mechanism: the same back-end thread on the VM's core (core 0, which
    then also takes the TOE's interrupt) falls off the line rate as vhost does."""
    runs = runs_of(study)
    shared = s.CONFIGS["vhost3"][:-2] + ["platform.irq_core=0", "hypervisor.backend_thread=true"]
    monkeypatch.setitem(s.ALL_CONFIGS, "vhost3", shared)
    _, m = s.run_point({"config": "vhost3", "workload": "rx_fast"}, quick=True)
    swapped = [(p, m if (p["config"], p["workload"]) == ("vhost3", "rx_fast") else x)
               for p, x in runs]
    rows = {r["id"]: r for r in s.analyse(swapped)}
    assert rows["H2b"]["verdict"] == "fail", rows["H2b"]["vtoe"]
    assert verdicts(runs)["H2b"] == "pass"


def test_h10_measures_ipis_on_two_vcpus_and_fails_when_timers_still_exit(study):
    runs = runs_of(study)
    two = {p["config"]: m for p, m in runs if p["config"] in s.CONFIGS2}
    # The guest's wake-ups of the stream on vCPU 1 exit as IPIs in both; DTID removes the rest.
    assert two["dtid2"]["per_s"]["irq_ipi"] > 0 and two["opti2"]["per_s"]["irq_ipi"] > 0
    assert two["dtid2"]["per_s"]["irq_timer"] == 0 < two["opti2"]["per_s"]["irq_timer"]
    assert verdicts(runs)["H10"] == "pass"
    ticking = copy.deepcopy(runs)
    for p, m in ticking:
        if p["config"] == "dtid2":
            m["per_s"]["irq_timer"] = 500.0
            m["per_s"]["total"] += 500.0
    assert verdicts(ticking)["H10"] == "fail"
    no_ipi = copy.deepcopy(runs)
    for p, m in no_ipi:
        if p["config"] == "dtid2":
            m["per_s"]["total"] -= m["per_s"]["irq_ipi"]
            m["per_s"]["irq_ipi"] = 0.0
    assert verdicts(no_ipi)["H10"] == "fail"
