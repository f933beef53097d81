"""Figures quoted in README.md come from runs: the headline throughput table equals the golden
results (which tests/integration/test_golden.py checks against fresh runs), and the paper summary
block is the summary of a fresh `make paper` report."""
import json
import os
import re
import subprocess
import sys

import pytest

from scripts_paths import REDUCED, ROOT, TIMEOUT_FACTOR

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


# The full `make paper` (93 full-length runs) for six exact summary lines: the normal build checks
# them; under asan tests/scripts/test_reproduce.py runs reproduce.py itself (VTOE_FULL_SCALE=1 runs
# this one too; docs/fuzzing.md).
@pytest.mark.skipif(REDUCED, reason="exact summary of the full paper runs: the normal build checks "
                    "it; test_reproduce.py runs reproduce.py under asan (VTOE_FULL_SCALE=1 to run)")
def test_paper_summary_is_a_fresh_reports(tmp_path, vtoe_bin):
    block = README[README.index("<!-- paper-summary:start -->"):README.index("<!-- paper-summary:end -->")]
    lines = [l for l in block.splitlines() if l.startswith("- ")]
    assert len(lines) == 6
    env = dict(os.environ, VTOE_BIN=str(vtoe_bin))
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "reproduce.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=1800 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "report.md").read_text()
    summary = report[report.index("## Summary"):report.index("## Numbers of section 5")]
    for line in lines:
        assert line in summary, f"README says {line!r}; the report's summary is:\n{summary}"
