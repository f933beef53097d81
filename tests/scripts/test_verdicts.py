"""The verdict functions of scripts/reproduce.py fail when they should: each gets inputs that must
fail as well as inputs that must pass, and the calibration manifest is checked for shape."""
import math

import pytest

import reproduce as r


def test_line_goodput_follows_from_mtu_and_headers():
    assert r.line_goodput_mbps(1e9) == pytest.approx(941.48, abs=0.01)  # timestamps on
    assert r.line_goodput_mbps(1e9, tcp_options=0) == pytest.approx(949.28, abs=0.01)
    assert r.line_goodput_mbps(10e9, mtu=9000) == pytest.approx(10e3 * 8948 / 9038)
    assert r.LINE_1G < 1000


def test_within_pct_fails_outside_the_tolerance():
    assert r.within_pct(3004, 2745, 10)          # +9.4 %
    assert not r.within_pct(3100, 2745, 10)      # +12.9 %
    assert not r.within_pct(2400, 2745, 10)      # -12.6 %


def test_ranges_have_no_slack():
    assert r.all_within([7.0, 15.0, 10.0], 7, 15)
    assert not r.all_within([6.7, 8.6], 7, 15), "6.7 is outside 7-15: no half-point slack"
    assert not r.all_within([], 7, 15), "no values is not agreement"


def test_monotonic_checks_are_strict_and_need_two_points():
    assert r.strictly_increasing([1, 2, 3])
    assert not r.strictly_increasing([1, 2, 2])
    assert not r.strictly_increasing([5])
    assert r.strictly_decreasing([944, 316, 142, 105])
    assert not r.strictly_decreasing([944, 316, 316, 105])


def test_share_error_catches_a_wrong_weight():
    assert r.share_error_pct([418, 105, 209, 209], [4, 1, 2, 2]) < 1
    assert r.share_error_pct([237, 237, 237, 237], [4, 1, 2, 2]) > 10, "equal shares are not 4:1:2:2"
    assert math.isinf(r.share_error_pct([0, 0, 0], [1, 2, 2]))


def test_jain_index():
    assert r.jain([1, 1, 1, 1]) == pytest.approx(1.0)
    assert r.jain([1, 0, 0, 0]) == pytest.approx(0.25)


def test_number_verdicts_for_values_ranges_and_error_measures():
    value = {"paper": 36.6, "tolerance": 10}
    assert not r.number_holds(value, 25.4), "a 25.4 % gain is not the paper's 36.6 % within 10 %"
    assert r.number_holds(value, 35.0)
    rng = {"paper": [5, 23]}
    assert not r.number_holds(rng, [47.0, 24.6, 14.0, 7.4])
    assert r.number_holds(rng, [22.0, 5.0])
    err = {"paper": 0, "tolerance": 10}
    assert r.number_holds(err, 0.1) and not r.number_holds(err, 10.5)


def test_manifest_numbers_are_labelled_and_complete():
    m = r.load_manifest()
    labels = [n["label"] for n in m["numbers"]]
    assert len(m["numbers"]) == 15
    assert labels.count("fitted") == 9 and labels.count("mechanism") == 3 and labels.count("predicted") == 3
    assert all(n["source"].startswith("§5") for n in m["numbers"])
    keys = {f["key"] for f in m["fitted"]}
    assert {"guest.costs.copy_per_byte", "hypervisor.costs.irq", "guest.socket.recv_buffer"} <= keys


def test_a_bad_label_is_refused(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("fitted: []\nnumbers:\n  - {id: x, what: x, paper: 1, source: §5, tolerance: 1, label: guessed}\n")
    with pytest.raises(ValueError, match="label 'guessed'"):
        r.load_manifest(bad)
