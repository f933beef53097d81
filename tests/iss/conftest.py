"""Shared by the ISS tests: tool detection, the corpus build, the vtoe binary. When the cross
compiler or qemu-arm is missing, every test here is skipped and the summary says why (even
under pytest -q)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "build" / "iss-corpus"
CC = "arm-linux-gnueabihf-gcc"
QEMU = "qemu-arm"
MISSING = [tool for tool in (CC, QEMU) if shutil.which(tool) is None]
SKIP_REASON = (f"ISS tests against qemu-arm need {' and '.join(MISSING)} "
               "(Debian: gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user; "
               "scripts/install-deps.sh installs them)")


def pytest_terminal_summary(terminalreporter):
    if MISSING:
        terminalreporter.write_line(f"tests/iss SKIPPED: {SKIP_REASON}", yellow=True, bold=True)


def vtoe_binary() -> Path:
    preset = os.environ.get("VTOE_PRESET", "release")
    path = ROOT / "build" / preset / "app" / "vtoe"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return path


@pytest.fixture(scope="session")
def corpus():
    """Builds the corpus (tests/iss/Makefile) into build/iss-corpus once per session."""
    jobs = str(os.cpu_count() or 2)
    proc = subprocess.run(["make", "-s", "-C", str(HERE), f"OUT={OUT}", "-j", jobs],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building the ISS corpus failed:\n{proc.stdout}\n{proc.stderr}")
    return OUT
