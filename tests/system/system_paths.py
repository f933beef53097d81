"""Paths and tools shared by the system-platform tests (tests/system). A module of its own, not a
conftest.py: tests elsewhere import `conftest` by name and must find theirs."""
import os
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
QEMU = "qemu-system-arm"
CC = "arm-linux-gnueabihf-gcc"
MISSING = [tool for tool in (CC, QEMU) if shutil.which(tool) is None]
SKIP_REASON = (f"system-platform tests against QEMU need {' and '.join(MISSING)} "
               "(Debian: gcc-arm-linux-gnueabihf qemu-system-arm; scripts/install-deps.sh "
               "installs them)")
# QEMU's virt machine as vtoe models it: highmem off (32-bit map), one Cortex-A15.
QEMU_ARGS = ["-cpu", "cortex-a15", "-nodefaults", "-display", "none", "-serial", "stdio"]


def preset():
    return os.environ.get("VTOE_PRESET", "release")


def vtoe_binary() -> Path:
    path = ROOT / "build" / preset() / "app" / "vtoe"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return path


def target_dir() -> Path:
    """Where CMake puts the bare-metal programs (tests/system/target/CMakeLists.txt)."""
    return ROOT / "build" / preset() / "tests" / "system" / "target"


def qemu_machine(virtualization: bool):
    return ["-M", "virt,highmem=off" + (",virtualization=on" if virtualization else "")]


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gdb_session(vtoe_args, gdb_commands, port):
    """`vtoe system run *vtoe_args --gdb PORT` and, once it listens, gdb_commands (a whole GDB
    command line) against it; returns (GDB's CompletedProcess, vtoe's stdout, vtoe's stderr,
    vtoe's exit status). vtoe is killed if it is still running at the end."""
    import subprocess
    vtoe = subprocess.Popen([str(vtoe_binary()), "system", "run", *vtoe_args, "--gdb", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # vtoe says when it listens; GDB connects after that.
        assert "waiting for GDB" in vtoe.stderr.readline()
        gdb = subprocess.run(gdb_commands, capture_output=True, text=True, timeout=60)
        out, err = vtoe.communicate(timeout=60)
    finally:
        if vtoe.poll() is None:
            vtoe.kill()
    return gdb, out, err, vtoe.returncode
