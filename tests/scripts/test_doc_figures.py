"""scripts/doc_figures.py: markers are found, evaluated, and a figure that differs fails."""
import importlib.util

import pytest

from scripts_paths import ROOT

spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
doc_figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(doc_figures)

RESULTS = {"a": {"vms": [{"tx_mbps": 4996.74, "cpu": {"idle": 0.0}}], "stats": {"host.sockets": {"n": 4}}},
           "b": {"vms": [{"tx_mbps": 3013.04}]}}


def figures(tmp_path, text):
    doc = tmp_path / "doc.md"
    doc.write_text(text)
    figs = doc_figures.find_figures([doc])
    doc_figures.evaluate(figs, RESULTS)
    return doc, figs


def test_matching_figures_pass(tmp_path):
    _, figs = figures(tmp_path, "tx **4996.7<!--= a.vms[0].tx_mbps | .1f --> Mbit/s**, ratio "
                                "1.658<!--= a.vms[0].tx_mbps / b.vms[0].tx_mbps | .3f -->, "
                                "n 4<!--= a.stats[\"host.sockets\"].n | d -->\n")
    assert len(figs) == 3
    assert doc_figures.check(figs) == 0


@pytest.mark.parametrize("text", [
    "4996.8<!--= a.vms[0].tx_mbps | .1f -->",          # differs in the last digit
    "<!--= a.vms[0].tx_mbps | .1f -->",                # no figure before the marker
    "1<!--= a.vms[3].tx_mbps | .1f -->",               # no such VM
    "1<!--= a.vms[0].rx_mbps | .1f -->",               # no such key
    "1<!--= a.vms[0].tx_mbps / 0 | .1f -->",           # cannot be computed
])
def test_a_figure_that_differs_or_cannot_be_computed_fails(tmp_path, text):
    _, figs = figures(tmp_path, text + "\n")
    assert doc_figures.check(figs) == 1


def test_minus_sign_and_hyphen_are_the_same_figure(tmp_path):
    _, figs = figures(tmp_path, "\u22120.3<!--= (b.vms[0].tx_mbps / 3022 - 1) * 100 | +.1f -->\n")
    assert doc_figures.check(figs) == 0


def test_update_rewrites_only_the_figures(tmp_path):
    doc, figs = figures(tmp_path, "a 1.0<!--= a.vms[0].tx_mbps | .1f --> b 2<!--= b.vms[0].tx_mbps | .0f --> c\n")
    assert doc_figures.update(figs) == 2
    assert doc.read_text() == ("a 4996.7<!--= a.vms[0].tx_mbps | .1f --> b 3013<!--= b.vms[0].tx_mbps | .0f --> c\n")


def test_words_and_code_spans_are_figures_too(tmp_path):
    results = {"s": {"verdicts": {"V3": {"verdict": "fail"}, "H2b": {"verdict": "not posed"}}}}
    doc = tmp_path / "doc.md"
    doc.write_text("V3 **fail<!--= s.verdicts.V3.verdict -->**, H2b `not posed`<!--= "
                   "s.verdicts.H2b.verdict -->, V3 again pass<!--= s.verdicts.V3.verdict -->\n")
    figs = doc_figures.find_figures([doc])
    doc_figures.evaluate(figs, results)
    assert [f.quoted for f in figs] == ["fail", "not posed", "pass"]
    assert doc_figures.check(figs) == 1  # the third quotes pass where the run gives fail
    doc_figures.update(figs)
    assert doc.read_text() == ("V3 **fail<!--= s.verdicts.V3.verdict -->**, H2b `not posed`<!--= "
                               "s.verdicts.H2b.verdict -->, V3 again fail<!--= "
                               "s.verdicts.V3.verdict -->\n")


def test_a_word_glued_to_a_number_is_no_figure(tmp_path):
    _, figs = figures(tmp_path, "1.31x<!--= a.vms[0].tx_mbps | .1f -->\n")
    assert figs[0].quoted is None and doc_figures.check(figs) == 1


RUNS = {"native_tx": ("run", ["x.yaml"]), "virttas": ("study", ["scripts/study_virttas.py"]),
        "virttas_quick": ("study", ["scripts/study_virttas.py", "--quick"])}


def test_select_by_kind_and_name(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("1<!--= native_tx.a --> 2<!--= virttas.b --> 3<!--= virttas_quick.c --> "
                   "4<!--= virttas.d + native_tx.e --> 5<!--= nothing.f -->\n")
    figs = doc_figures.find_figures([doc])

    def quoted(kind="all", only=()):
        return [f.quoted for f in doc_figures.select(figs, RUNS, kind, only)]

    assert quoted() == ["1", "2", "3", "4", "5"]
    assert quoted("runs") == ["1", "5"]  # an unknown name stays, to be reported
    assert quoted("studies") == ["2", "3", "5"]
    assert quoted("studies", ["virttas_quick"]) == ["3", "5"]
    assert quoted("all", ["virttas*"]) == ["2", "3", "5"]


def test_a_study_is_read_from_its_summary(tmp_path):
    (tmp_path / "summary.json").write_text('{"figures": {"v3_min": 0.8123}}')
    doc = tmp_path / "doc.md"
    doc.write_text("V3 0.81<!--= virttas.figures.v3_min | .2f --> and 0.8<!--= "
                   "virttas.figures.v3_min | .2f -->\n")
    figs = doc_figures.find_figures([doc])
    doc_figures.prepare(figs, RUNS, tmp_path / "runs", 1, {"virttas": tmp_path})
    assert doc_figures.check(figs) == 1 and figs[0].computed == figs[1].computed == "0.81"
    with pytest.raises(SystemExit, match="missing"):
        doc_figures.prepare(figs, RUNS, tmp_path / "runs", 1, {"virttas": tmp_path / "none"})
