"""What the study scripts share (scripts/study_common.py): the starved-peer guard, the verdict
words and table, and the refusal to skip figures silently."""
import builtins
import json

import pytest

import study_common as c


def test_a_peer_below_a_tenth_of_the_others_median_is_starved():
    # VirtTAS's pair 0 under Independent-TAS at 16 B, before interrupts reached every core.
    assert c.starved([133, 158e3, 157e3, 159e3]) == [(0, 158e3)]
    assert c.starved([15.9e3, 158e3, 157e3, 159e3]) == []  # just above a tenth
    assert c.starved([15.7e3, 158e3, 157e3, 159e3]) == [(0, 158e3)]
    assert c.starved([0, 0, 100]) == [(0, 50.0), (1, 50.0)]
    assert c.starved([5, 100]) == [(0, 100)]
    assert c.starved([7]) == []  # no peers


def test_verdict_words_and_not_posed_rows():
    assert [c.verdict(True), c.verdict(False), c.verdict(None)] == ["pass", "fail", "not posed"]
    row = {"id": "V3", "vtoe": "0.81", "test": "t", "class": "hypothesis", "verdict": "fail"}
    c.not_posed(row, set())
    assert row["verdict"] == "fail"
    c.not_posed(row, {"vi 16 B"})
    assert row["verdict"] == "not posed" and "vi 16 B" in row["reason"]
    assert row["vtoe"] == "0.81 (from failed runs)"


def test_verdict_table_gives_a_reason_for_every_row():
    rows = [{"id": "A", "vtoe": "1.2x", "test": "> 1", "class": "shape", "verdict": "pass"},
            {"id": "B", "vtoe": "0.8x", "test": "> 1", "class": "shape", "verdict": "fail"},
            {"id": "C", "vtoe": "-", "test": "x", "class": "not checkable",
             "verdict": "not posed", "reason": "needs two cores"}]
    lines = c.verdict_table(rows)
    assert lines[2] == "| A | pass | shape | 1.2x; test: > 1 |"
    assert lines[3] == "| B | **fail** | shape | 0.8x; test: > 1 |"
    assert lines[4] == "| C | not posed | not checkable | needs two cores |"


def test_finish_writes_verdicts_by_id_and_fails_on_a_failed_verdict(tmp_path, capsys):
    rows = [{"id": "A", "vtoe": "1", "test": "t", "class": "shape", "verdict": "pass"},
            {"id": "G", "vtoe": "pair 0 starved", "test": "t", "class": "construction",
             "verdict": "fail"}]
    assert c.finish("demo", rows, [{}], {"x": 1.5}, tmp_path, quick=True) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["variant"] == "quick" and summary["figures"] == {"x": 1.5}
    assert summary["verdicts"]["G"]["verdict"] == "fail"
    assert summary["counts"] == {"pass": 1, "fail": 1, "not posed": 0}
    out = capsys.readouterr().out
    assert "| G | **fail** | construction |" in out and "1 fail (G)" in out
    assert c.finish("demo", rows[:1], [{}], {}, tmp_path, quick=False) == 0
    with pytest.raises(ValueError, match="twice"):
        c.finish("demo", rows[:1] * 2, [], {}, tmp_path, quick=False)


def test_a_missing_matplotlib_is_an_error_not_a_silent_skip(monkeypatch, capsys):
    real = builtins.__import__

    def no_matplotlib(name, *args, **kw):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(SystemExit) as stop:
        c.plotting(False, "virttas")
    assert stop.value.code == 2  # not 1, a failed verdict
    err = capsys.readouterr().err
    assert "virttas: matplotlib is missing" in err and "--no-figures" in err
    assert c.plotting(True, "virttas") is None  # asked for no figures: none, and said so
    assert c.figure_note(False, True) == ["", "Figures not drawn (--no-figures)."]
