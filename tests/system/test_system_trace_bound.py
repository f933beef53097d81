"""`vtoe system run --trace` is bounded (docs/outputs.md, "Bounds of every output"): at most
--trace-limit instructions (1,000,000 by default, about 220 MB), and a trace that reached its
bound says so on stderr and in the --stats file's warnings. The guest is
tests/system/target/exception_loop.c, cut short by --max-instructions."""
import json
import re
import subprocess

import pytest

from system_paths import MISSING, SKIP_REASON, target_dir, vtoe_binary

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


def run(tmp_path, *args):
    program = target_dir() / "exception_loop.elf"
    if not program.exists():
        pytest.fail(f"{program} is missing: build first (make build builds tests/system/target)")
    stats, trace = tmp_path / "stats.json", tmp_path / "trace.log"
    proc = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(program),
                           "--stats", str(stats), "--trace", str(trace),
                           "--max-instructions", "3000", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr  # --max-instructions
    records = len(re.findall(r"^PSR=", trace.read_text(), re.M))
    return proc, json.loads(stats.read_text()), records, trace


def test_a_trace_at_its_bound_says_so(tmp_path):
    proc, stats, records, trace = run(tmp_path, "--trace-limit", "1000")
    assert records == 1000
    said = f"{trace} reached its bound of 1000 instructions (--trace-limit) at instruction "
    assert f"vtoe: system run: warning: {said}" in proc.stderr, proc.stderr
    assert len(stats["warnings"]) == 1 and stats["warnings"][0].startswith(said)
    left_out = int(re.search(r"the (\d+) instructions after that", stats["warnings"][0])[1])
    assert 0 < left_out < 3000


def test_a_trace_within_its_bound_says_nothing(tmp_path):
    proc, stats, records, _ = run(tmp_path, "--trace-limit", "5000")
    assert 1000 < records <= 3000
    assert "--trace-limit" not in proc.stderr and stats["warnings"] == []
