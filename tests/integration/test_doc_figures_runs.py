"""Every figure marked in README.md and docs/ equals what its run gives today
(scripts/doc_figures.py; the runs are listed in docs/figures.yaml)."""
import os
import subprocess
import sys

import pytest

from conftest import vtoe_binary
from integration_paths import REDUCED, ROOT, TIMEOUT_FACTOR


# Exact numbers of full-length runs: checked by the normal build (`make test`). Under asan the
# same scenarios and architectures run through tests/integration/test_golden.py, compared byte for
# byte, so only the 97 repetitions are left out (VTOE_FULL_SCALE=1 runs them; docs/fuzzing.md).
@pytest.mark.skipif(REDUCED, reason="exact figures of 97 full runs: the normal build checks them; "
                    "the golden cases run the same code under asan (VTOE_FULL_SCALE=1 to run)")
def test_quoted_figures_match_their_runs(tmp_path):
    env = dict(os.environ, VTOE_BIN=str(vtoe_binary()))
    # The figures of vtoe runs; those of the studies are checked by tests/scripts/test_study_*.py
    # (quick variants) and `make studies` (full ones).
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "doc_figures.py"), "check",
                           "--kind", "runs", "--out", str(tmp_path)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=1800 * TIMEOUT_FACTOR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 of " not in proc.stdout, proc.stdout  # the docs do carry marked figures
