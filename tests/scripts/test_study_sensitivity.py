"""The sweep of the studies' assumed costs (scripts/study_sensitivity.py): only the runs a constant
touches are repeated, with the constant scaled; a verdict that changes inside a range is a flip
at the value where its margin crosses zero; the report and the plot say so. The sweep's own runs
go through vtoe.run_sweep, which the quick studies exercise (tests/scripts/test_study_*.py)."""
import math

import pytest

import study_common
import study_sensitivity as sens


@pytest.mark.parametrize("margins,verdicts,at,to", [
    # The margin crosses zero between 0.5 and 1: log-linear, halfway in log terms.
    ([-0.2, 0.2, 0.4], ["fail", "pass", "pass"], math.sqrt(0.5), "fail"),
    # A crossing a quarter of the way from 1 towards 2.
    ([0.5, 0.3, -0.9], ["pass", "pass", "fail"], 2 ** 0.25, "fail"),
    # No margins (a verdict without a number): the geometric mean of the two values.
    ([None, None, None], ["pass", "pass", "not posed"], math.sqrt(2), "not posed"),
])
def test_a_flip_is_where_the_margin_crosses_zero(margins, verdicts, at, to):
    got = sens.flip_at([0.5, 1.0, 2.0], margins, verdicts, 1.0)
    assert got[0] == pytest.approx(at) and got[1] == to


def test_the_flip_nearest_the_study_value_is_reported_and_a_steady_verdict_has_none():
    xs = [0.25, 0.5, 1.0, 2.0, 4.0]
    # Fails below x0.5 and above x2: the upper crossing (x2^1.1) is nearer 1 than the lower one
    # (x0.5^1.47).
    got = sens.flip_at(xs, [-1, 0.9, 1, 0.1, -0.9], ["fail", "pass", "pass", "pass", "fail"], 1.0)
    assert got[0] == pytest.approx(2 * 2 ** 0.1) and got[1] == "fail"
    assert sens.flip_at(xs, [1, 1, 1, 1, 1], ["pass"] * 5, 1.0) is None


def fake_study(calls):
    """Two points; the constant `cost` (study value 100) is used by point a only; the verdict
    passes while a's measured value, the constant itself, is below 150."""
    points = [{"p": "a"}, {"p": "b"}]
    runs = [(p, {"x": 100.0 if p["p"] == "a" else 7.0}) for p in points]

    def spec_of(point, values, scratch):
        calls.append((point["p"], values))
        return scratch / "base.yaml", values

    def analyse(rs, costs):
        x = dict((p["p"], m) for p, m in rs)["a"]["x"]
        margin = 1 - x / 150
        return [{"id": "A", "verdict": study_common.verdict(margin > 0), "margin": margin},
                {"id": "B", "verdict": study_common.PASS}]

    study = sens.Study("fake", points, runs, spec_of, lambda p, res: {"x": res["x"]}, analyse)
    constant = sens.Constant("cost", "a cost", ("k.cost",), "assumed",
                             lambda p: {"k.cost": 100.0} if p["p"] == "a" else {})
    return study, constant


def test_only_the_points_a_constant_touches_run_again_with_it_scaled(tmp_path, monkeypatch):
    calls = []
    study, constant = fake_study(calls)
    ran = []

    def run_points(jobs, out, name, specs):
        ran.extend(specs)
        return {tag: {"x": overrides["k.cost"]} for tag, _, overrides in specs}

    monkeypatch.setattr(sens, "_run_points", run_points)
    record = sens.sweep(study, [constant], tmp_path, 1, quick=False)
    assert [p for p, _ in calls] == ["a"] * len(sens.FACTORS)
    assert sorted(o["k.cost"] for _, _, o in ran) == pytest.approx(
        [100 * f for f in sorted(sens.FACTORS)])
    c = record["constants"][0]
    assert c["runs_per_value"] == 1 and 1.0 in c["factors"]
    assert c["values"] == pytest.approx([100 * f for f in sorted(sens.FACTORS + (1.0,))])
    a = record["verdicts"]["A"]
    assert not a["holds"] and a["flips"][0]["constant"] == "cost"
    assert a["flips"][0]["at"] == pytest.approx(150, rel=0.01) and a["flips"][0]["to"] == "fail"
    assert record["verdicts"]["B"] == {"verdict": "pass", "holds": True, "flips": []}
    lines = "\n".join(sens.report_lines(record, True, False))
    assert "| A | pass | flips | cost at 148.7 cycles (x1.49" in lines and "| B | pass | holds | - |" in lines
    assert "![verdict margins against the assumed constants](sensitivity.png)" in lines
    # Quick: the two ends of the range, of the constants the quick variant sweeps only.
    assert sens.sweep(study, [constant], tmp_path, 1, quick=True)["constants"] == []
    constant.quick = True
    calls.clear()
    quick = sens.sweep(study, [constant], tmp_path, 1, quick=True)
    assert quick["constants"][0]["factors"] == [0.5, 1.0, 2.0] and len(calls) == 2


def test_the_plot_is_drawn_for_swept_constants_only(tmp_path, monkeypatch):
    plt = study_common.plotting(False, "test")
    study, constant = fake_study([])
    monkeypatch.setattr(sens, "_run_points", lambda jobs, out, name, specs: {
        tag: {"x": o["k.cost"]} for tag, _, o in specs})
    record = sens.sweep(study, [constant], tmp_path, 1, quick=False)
    assert sens.plot(plt, record, tmp_path) and (tmp_path / "sensitivity.png").stat().st_size
    nothing = sens.none(study.analyse(study.runs, {}), "no assumed cost")
    assert not sens.plot(plt, nothing, tmp_path / "none")
    assert nothing["verdicts"]["A"]["holds"]
    assert "no assumed cost" in "\n".join(sens.report_lines(nothing, False, False))
