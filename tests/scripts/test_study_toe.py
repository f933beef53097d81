"""The TOE design-space study (scripts/study_toe.py): its knee and limit functions fail when they
should, and a quick run writes a figure per sweep and a report whose numbers are the runs'."""
import json
import os
import sys
from pathlib import Path

import pytest

import study_toe as s
from scripts_paths import TIMEOUT_FACTOR, run_once

ROOT = Path(__file__).resolve().parents[2]


def test_numbers_carry_their_units():
    assert s.number("400MHz") == 400
    assert s.number("1.6GHz") == pytest.approx(1600)
    assert s.number("4KiB") == 4096
    assert s.number("16B") == 16
    assert s.number(8) == 8
    with pytest.raises(ValueError):
        s.number("4 parsecs")


def test_knee_is_the_first_point_within_five_percent_of_the_best():
    assert s.knee([1, 2, 4, 8], [100, 200, 390, 400]) == 2       # 390 >= 0.95 * 400
    assert s.knee([1, 2, 4, 8], [100, 200, 370, 400]) == 3       # 370 < 380
    assert s.knee([1, 2, 4], [400, 401, 402]) is None, "a flat curve has no knee"
    assert s.knee([1, 2, 4], [30, 10, 9.6], "down") == 1          # 10 <= 9.6 / 0.95
    assert s.knee([1], [5]) is None


def test_last_good_finds_where_a_falling_curve_leaves_its_best():
    assert s.last_good([100, 99, 97, 80, 50]) == 2
    assert s.last_good([100, 99, 98]) is None
    assert s.last_good([50, 100, 99, 60]) == 2, "only falls after the best count"


def test_limit_is_the_most_utilised_resource():
    row = {"toe.utilization": 0.5, "toe.ppm_tx_utilization": 1.0, "toe.ppm_rx_utilization": 0.1,
           "toe.dram_utilization": 0.7, "cpu_busy": 0.3}
    assert s.limit(row) == ("PPM transmit engines", 1.0)
    row["cpu_busy"] = 1.0
    row["toe.ppm_tx_utilization"] = 0.2
    assert s.limit(row) == ("host CPU", 1.0)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    env = dict(os.environ)
    if "VTOE_BIN" not in env:
        env["VTOE_BIN"] = str(ROOT / "build" / env.get("VTOE_PRESET", "release") / "app" / "vtoe")
    out, proc = run_once(tmp_path_factory, "study",
                         [sys.executable, str(ROOT / "scripts" / "study_toe.py"), "--quick",
                          "--only", "clock,ccb", "--out"], env=env, timeout=1200 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_quick_study_draws_figures_and_names_knees(study):
    for name in ("clock", "ccb"):
        assert (study / f"study_{name}.png").stat().st_size > 0
        assert (study / f"study_{name}.svg").stat().st_size > 0
    report = (study / "report.md").read_text()
    summary = json.loads((study / "summary.json").read_text())
    # A slow TOE clock is limited by the PPM and a fast one is not: the knee names both.
    one = summary["clock"]["1 PPM engine(s)"]
    assert one["knee_at"] is not None
    assert "PPM transmit engines" in one["verdict"]
    assert one["verdict"] in report
    slowest = one["points"][0]
    assert slowest["toe.ppm_tx_utilization"] > 0.95


def test_report_numbers_are_the_runs(study):
    summary = json.loads((study / "summary.json").read_text())
    for label, curve in summary["clock"].items():
        for p in curve["points"]:
            res = json.loads((study / "runs" / "clock" / "points" / p["point_id"] /
                              "results.json").read_text())
            assert p["y"] == pytest.approx(sum(vm["tx_mbps"] for vm in res["vms"]))
            assert p["toe.utilization"] == pytest.approx(res["toe"]["utilization"])
    effect = summary["ccb"].pop("capacity_effect")
    curves = summary["ccb"]
    small = curves[f"CCB cache {effect['small_cache']}, {effect['clock']}"]["points"]
    large = curves[f"CCB cache {effect['large_cache']}, {effect['clock']}"]["points"]
    at = [p["label"] for p in small].index(effect["connections"])
    assert effect["drop"] == pytest.approx(1 - small[at]["y"] / large[at]["y"])
    for curve in curves.values():
        for p in curve["points"]:
            st = json.loads((study / "runs" / "ccb" / "points" / p["point_id"] /
                             "results.json").read_text())["stats"]["toe.ccb"]
            assert p["misses"] == st["record_misses"]


def test_ccb_capacity_effect_compares_the_smallest_and_largest_cache_at_each_point():
    row = lambda x, y, miss=0.0: {"x": x, "y": y, "label": str(x), "miss_rate": miss,  # noqa: E731
                                   "fifo_drop_rate": 0.0, "toe.ppm_rx_utilization": 1.0}
    series = {
        "CCB cache 16, TOE at 200MHz": [row(1, 100), row(64, 50, 0.3)],
        "CCB cache 4096, TOE at 200MHz": [row(1, 100), row(64, 100)],
        "CCB cache 16, TOE at 400MHz": [row(1, 100), row(64, 90, 0.2)],
        "CCB cache 4096, TOE at 400MHz": [row(1, 100), row(64, 100)],
    }
    effect = s.ccb_capacity_effect(series)
    assert effect["drop"] == pytest.approx(0.5)
    assert effect["clock"] == "TOE at 200MHz" and effect["connections"] == "64"
    assert "-50.0 %" in effect["text"] and "PPM receive engines" in effect["text"]
    # Equal curves: no effect, and the text says so with the figures.
    flat = {k: [row(1, 100)] for k in series}
    assert s.ccb_capacity_effect(flat)["drop"] == pytest.approx(0.0)
