"""`make studies` (scripts/studies.py): the four studies' verdicts in one summary, which fails
when a verdict fails or a study does not run to its end, and one page (OUT/report.html) with
every study's report, the commit and the commands."""
import json
import subprocess

import pytest

import studies


def fake_study(verdicts, flips=None):
    """A stand-in for subprocess.run of a study script: writes a summary.json whose verdicts
    are `verdicts` ({study: {id: verdict}}; a study missing from it writes nothing), with the
    sensitivity sweep's flips ({study: {id: constant}}) when given, and a report.md."""
    def run(cmd, **kw):
        out = cmd[cmd.index("--out") + 1]
        study = cmd[1].rsplit("study_", 1)[1][:-3]
        if study not in verdicts:
            return subprocess.CompletedProcess(cmd, 2)
        rows = [{"id": i, "class": "construction" if i == "G" else "shape", "verdict": v,
                 "vtoe": "-", "test": "-"} for i, v in verdicts[study].items()]
        counts = {w: sum(1 for r in rows if r["verdict"] == w)
                  for w in ("pass", "fail", "not posed")}
        summary = {"study": study, "variant": "quick" if "--quick" in cmd else "full",
                   "counts": counts, "rows": rows, "runs": [{}] * 3, "figures": {},
                   "verdicts": {r["id"]: {"verdict": r["verdict"], "class": r["class"],
                                          "reason": "-"} for r in rows}}
        if flips is not None:
            summary["sensitivity"] = {"verdicts": {r["id"]: {
                "verdict": r["verdict"], "holds": r["id"] not in flips.get(study, {}),
                "flips": [{"constant": flips[study][r["id"]], "at": 1.0, "to": "fail"}]
                if r["id"] in flips.get(study, {}) else []} for r in rows}}
        (studies.Path(out) / "summary.json").parent.mkdir(parents=True, exist_ok=True)
        (studies.Path(out) / "summary.json").write_text(json.dumps(summary))
        (studies.Path(out) / "report.md").write_text(
            f"# The {study} study\n\n## Verdicts\n\n| # | verdict |\n|---|---|\n" +
            "".join(f"| {r['id']} | {r['verdict']} |\n" for r in rows))
        return subprocess.CompletedProcess(cmd, 1 if counts["fail"] else 0)
    return run


ALL_PASS = {s: {"A": "pass", "N1": "not posed", "G": "pass"} for s in studies.STUDIES}


@pytest.mark.parametrize("verdicts,code", [
    (ALL_PASS, 0),
    ({**ALL_PASS, "virttas": {"V3": "not posed", "G": "fail"}}, 1),  # a guard fails
    ({**ALL_PASS, "haas": {"H6": "fail", "G": "pass"}}, 1),           # a verdict fails
    ({s: v for s, v in ALL_PASS.items() if s != "socksdirect"}, 1),  # a study did not finish
])
def test_the_summary_fails_when_a_verdict_fails_or_a_study_does_not_finish(
        tmp_path, monkeypatch, capsys, verdicts, code):
    monkeypatch.setattr(studies.subprocess, "run", fake_study(verdicts))
    assert studies.main(["--quick", "--no-docs", "--no-figures", "--out", str(tmp_path)]) == code
    text = (tmp_path / "summary.md").read_text()
    printed = capsys.readouterr().out
    assert all(line in printed for line in text.splitlines()[2:])  # the summary is printed
    for s in studies.STUDIES:
        assert f"| {s} |" in text
    if code:
        assert "Verdict: FAILED" in text
    if "G" in verdicts.get("virttas", {}) and verdicts["virttas"]["G"] == "fail":
        assert "| virttas | quick | 3 | 0 | 1 | 1 | G (construction) | not swept |" in text
    if "socksdirect" not in verdicts:
        assert "| socksdirect | - |" in text and "did not run to their end: socksdirect" in text


def test_a_stale_summary_is_not_taken_for_a_fresh_one(tmp_path, monkeypatch):
    (tmp_path / "haas").mkdir()
    (tmp_path / "haas" / "summary.json").write_text(json.dumps({"counts": {"fail": 0}}))
    monkeypatch.setattr(studies.subprocess, "run", fake_study({}))
    assert studies.main(["--only", "haas", "--no-docs", "--no-figures", "--out",
                         str(tmp_path)]) == 1
    assert not (tmp_path / "haas" / "summary.json").exists()


@pytest.mark.parametrize("quick", [False, True])
def test_the_docs_figures_of_the_variant_run_are_checked_against_its_summaries(
        tmp_path, monkeypatch, quick):
    name = "virttas_quick" if quick else "virttas"
    (tmp_path / "virttas").mkdir()
    (tmp_path / "virttas" / "summary.json").write_text(json.dumps(
        {"figures": {"v3_min": 0.809}, "verdicts": {"G": {"verdict": "fail"}}}))
    doc = tmp_path / "doc.md"
    monkeypatch.setattr(studies.doc_figures, "documents", lambda: [doc])
    other = "virttas" if quick else "virttas_quick"  # the other variant's figure is not checked
    doc.write_text(f"V3 0.81<!--= {name}.figures.v3_min | .2f -->, G **fail<!--= "
                   f"{name}.verdicts.G.verdict -->**, 7<!--= {other}.figures.v3_min | .0f -->\n")
    summaries = {"virttas": {"counts": {"fail": 1}}}
    ok, lines = studies.check_docs(summaries, tmp_path, quick)
    assert ok and lines[-1].startswith("2 of 2 figures"), lines
    doc.write_text(f"V3 0.82<!--= {name}.figures.v3_min | .2f -->, G **pass<!--= "
                   f"{name}.verdicts.G.verdict -->**\n")
    ok, lines = studies.check_docs(summaries, tmp_path, quick)
    assert not ok and "quotes 0.82, the run gives 0.81" in lines[0]
    assert "quotes pass, the run gives fail" in lines[1]
    assert f"--summary {name}={tmp_path / 'virttas'}" in lines[-1]


def test_the_summary_names_the_verdicts_an_assumed_cost_flips_and_the_page_shows_every_study(
        tmp_path, monkeypatch):
    monkeypatch.setattr(studies.subprocess, "run", fake_study(
        ALL_PASS, flips={"haas": {"A": "halt_poll"}}))
    assert studies.main(["--quick", "--no-docs", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "summary.md").read_text()
    assert "| haas | quick | 3 | 2 | 0 | 1 | - | A (halt_poll) |" in text
    assert "| virttas | quick | 3 | 2 | 0 | 1 | - | none |" in text
    info = json.loads((tmp_path / "studies.json").read_text())
    assert info["command"] == "python3 scripts/studies.py --quick --no-docs --out " + str(tmp_path)
    assert [s["name"] for s in info["studies"]] == studies.STUDIES
    assert info["studies"][0]["command"].startswith("python3 scripts/study_miniproxy.py --jobs")
    page = (tmp_path / "report.html").read_text()
    assert f"Made at git {info['commit']}" in page and "scripts/study_socksdirect.py" in page
    for s in studies.STUDIES:
        assert f"<h2>The {s} study</h2>" in page
    assert "A (halt_poll)" in page  # the summary's table


def test_no_page_without_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(studies.subprocess, "run", fake_study(ALL_PASS))
    assert studies.main(["--quick", "--no-docs", "--no-figures", "--out", str(tmp_path)]) == 0
    assert not (tmp_path / "report.html").exists()
    assert "report.html not written (--no-figures" in capsys.readouterr().out
