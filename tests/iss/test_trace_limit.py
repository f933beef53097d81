"""`vtoe iss run --trace` is bounded: a long program once wrote 30 GB of trace in four minutes.
--trace-limit (default 400,000 instructions, about 230 MB) and --trace-from choose the window; the program
runs to its end untraced after it, and stderr says where the trace stopped."""
import re
import subprocess

import pytest

from iss_paths import MISSING, SKIP_REASON, corpus, vtoe_binary  # noqa: F401  (fixture)

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


def records(path):
    """The trace's records, one per instruction (core registers to FPSCR)."""
    return re.findall(r"R00=.*?FPSCR: [0-9a-f]+\n", path.read_text(), re.S)


def iss(*args):
    return subprocess.run([str(vtoe_binary()), "iss", "run", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_trace_stops_at_its_limit_and_the_program_runs_on(corpus, tmp_path):
    exe = corpus / "crc-arm-O2"
    whole = iss("--stats", tmp_path / "s.json", exe)
    first, window = tmp_path / "first.log", tmp_path / "window.log"
    limited = iss("--trace", first, "--trace-limit", 1000, exe)
    # Same exit status and output as an untraced run: the program finished.
    assert (limited.returncode, limited.stdout) == (whole.returncode, whole.stdout)
    assert len(records(first)) == 1000
    assert "the trace stopped after 1000 instructions (--trace-limit" in limited.stderr
    # A window further on: its first record is the 501st of the whole trace.
    later = iss("--trace", window, "--trace-from", 500, "--trace-limit", 10, exe)
    assert later.returncode == whole.returncode and len(records(window)) == 10
    assert records(window) == records(first)[500:510]
