"""Paths the integration tests share (a module of its own: conftest names collide across test folders)."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The sanitizer build (`make asan` sets VTOE_PRESET=asan; docs/fuzzing.md) runs the same tests on a
# binary many times slower (ASan, and SystemC processes as POSIX threads): subprocess timeouts grow
# by VTOE_TIMEOUT_FACTOR (4 there, else 1), and tests whose point is scale or duration run fewer
# iterations of the same code paths (scaled()); VTOE_FULL_SCALE=1 keeps the full counts under asan.
SANITIZED = os.environ.get("VTOE_PRESET") == "asan"
TIMEOUT_FACTOR = float(os.environ.get("VTOE_TIMEOUT_FACTOR") or (4 if SANITIZED else 1))
REDUCED = SANITIZED and os.environ.get("VTOE_FULL_SCALE") != "1"


def scaled(full, sanitized):
    """A count for a test whose point is scale or duration: `full` normally, `sanitized` under asan."""
    return sanitized if REDUCED else full


# Under asan, pytest runs what ASan, UBSan and LeakSanitizer can catch that ctest and the fuzzers do
# not: every architecture and timing mode through the golden cases (byte for byte), bad input,
# servers, topologies, traces and outputs. These run in the normal build only (VTOE_FULL_SCALE=1
# runs them under asan too; docs/fuzzing.md, "What runs under the sanitizers"):
#  - figures: throughput, shares and CPU relations between runs of the golden cases' scenarios at
#    other sizes or counts: numbers, not memory behaviour;
#  - deep: regressions that need seconds of simulated time (about 220 s each under asan), whose
#    code paths fuzz_guest drives under ASan and UBSan in every `make test`;
#  - scale: many thousands of connections, the same paths as the scaled-down server tests.
def release_only(why):
    import pytest
    reasons = {
        "figures": "figures of the golden cases' scenarios at other sizes: the normal build checks them",
        "deep": "a regression seconds deep into a run: the normal build runs it, fuzz_guest covers its paths under ASan",
        "scale": "scale (thousands of connections): the normal build runs it, the smaller server tests run under asan",
    }
    return pytest.mark.skipif(REDUCED, reason=f"{reasons[why]} (VTOE_FULL_SCALE=1 runs it under asan)")
