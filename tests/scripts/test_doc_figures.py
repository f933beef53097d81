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
