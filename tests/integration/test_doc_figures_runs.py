"""Every figure marked in README.md and docs/ equals what its run gives today
(scripts/doc_figures.py; the runs are listed in docs/figures.yaml)."""
import os
import subprocess
import sys

from conftest import vtoe_binary
from integration_paths import ROOT


def test_quoted_figures_match_their_runs(tmp_path):
    env = dict(os.environ, VTOE_BIN=str(vtoe_binary()))
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "doc_figures.py"), "check",
                           "--out", str(tmp_path)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 of " not in proc.stdout, proc.stdout  # the docs do carry marked figures
