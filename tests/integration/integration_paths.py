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
