"""Figures quoted in README.md come from runs: the headline throughput table equals the golden
results (which tests/integration/test_golden.py checks against fresh runs), and the paper summary
block is the summary of a fresh `make paper` report."""
import json
import re

import pytest

from scripts_paths import REDUCED, ROOT, paper_reproduction

README = (ROOT / "README.md").read_text()


def golden_mbps(case):
    vm = json.loads((ROOT / "tests" / "golden" / f"{case}.json").read_text())["vms"][0]
    return vm["tx_mbps"] + vm["rx_mbps"]


def table_row(label):
    line = next(l for l in README.splitlines() if l.startswith(f"| {label}"))
    return [float(re.match(r"\s*([0-9.]+)", cell).group(1)) for cell in line.strip("|").split("|")[1:]]


@pytest.mark.parametrize("label,direction", [("transmit, vtoe", "tx"), ("receive, vtoe", "rx")])
def test_headline_table_is_the_golden_runs(label, direction):
    quoted = table_row(label)
    runs = [golden_mbps(f"{arch}_{direction}") for arch in ("native", "de", "da")]
    assert quoted == [round(v, 1) for v in runs], f"README quotes {quoted}, the runs give {runs}"


# The README's summary is that of the full `make paper` (93 full-length runs and the fit): the same
# run test_reproduce.py checks, made once per session. Under asan that run is the quick variant,
# whose numbers differ (VTOE_FULL_SCALE=1 runs the full one there too; docs/fuzzing.md).
@pytest.mark.skipif(REDUCED, reason="exact summary of the full paper runs: the normal build checks "
                    "it; test_reproduce.py runs reproduce.py under asan (VTOE_FULL_SCALE=1 to run)")
def test_paper_summary_is_a_fresh_reports(tmp_path_factory):
    block = README[README.index("<!-- paper-summary:start -->"):README.index("<!-- paper-summary:end -->")]
    lines = [l for l in block.splitlines() if l.startswith("- ")]
    assert len(lines) == 6
    out, _ = paper_reproduction(tmp_path_factory)
    report = (out / "report.md").read_text()
    summary = report[report.index("## Summary"):report.index("## Numbers of section 5")]
    for line in lines:
        assert line in summary, f"README says {line!r}; the report's summary is:\n{summary}"
