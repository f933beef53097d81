"""Paths, tools and the corpus fixture shared by the ISS tests. A module of its own, not a
conftest.py: tests elsewhere import `conftest` by name and must find theirs.

When the cross compiler or qemu-arm is missing, every ISS test is skipped and a warning in the
summary says why (visible under pytest -q too)."""
import fcntl
import os
import shutil
import subprocess
import warnings
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


def vtoe_binary() -> Path:
    preset = os.environ.get("VTOE_PRESET", "release")
    path = ROOT / "build" / preset / "app" / "vtoe"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return path


if MISSING:
    warnings.warn(SKIP_REASON, UserWarning)


@pytest.fixture(scope="session")
def corpus():
    """Builds the corpus (tests/iss/Makefile) into build/iss-corpus once per session (per worker
    under pytest-xdist: a lock keeps two workers' makes from writing the same files at once)."""
    jobs = str(os.cpu_count() or 2)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT.parent / "iss-corpus.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(["make", "-s", "-C", str(HERE), f"OUT={OUT}", "-j", jobs],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building the ISS corpus failed:\n{proc.stdout}\n{proc.stderr}")
    return OUT
