"""`vtoe system run --gdb PORT` with gdb-multiarch: GDB reads the target description
(target.xml), stops at a breakpoint on main, reads registers and memory, steps one instruction,
writes a register, and the program runs on to PSCI SYSTEM_OFF, which GDB sees as the exit.
Skipped, with the reason, without gdb-multiarch or the bare-metal programs' cross compiler."""
import shutil
import socket
import subprocess

import pytest

from system_paths import CC, target_dir, vtoe_binary

GDB = "gdb-multiarch"
pytestmark = pytest.mark.skipif(shutil.which(GDB) is None or shutil.which(CC) is None,
                                reason=f"needs {GDB} and {CC} (scripts/install-deps.sh)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def symbol(elf, name):
    nm = shutil.which("arm-linux-gnueabihf-nm") or "nm"
    for line in subprocess.run([nm, str(elf)], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise AssertionError(f"no symbol {name} in {elf}")


def test_gdb_breaks_steps_reads_and_sees_the_exit():
    elf = target_dir() / "hello.elf"
    if not elf.exists():
        pytest.fail(f"{elf} is missing: build first")
    port = free_port()
    vtoe = subprocess.Popen([str(vtoe_binary()), "system", "run", "--kernel", str(elf),
                             "--gdb", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        # vtoe says when it listens; GDB connects after that.
        assert "waiting for GDB" in vtoe.stderr.readline()
        gdb = subprocess.run(
            [GDB, "-batch", "-nx", str(elf), "-ex", f"target remote 127.0.0.1:{port}",
             "-ex", "break main", "-ex", "continue", "-ex", "print/x $pc",
             "-ex", "print/x $cpsr", "-ex", "x/1wx &start_cpsr", "-ex", "stepi",
             "-ex", "print/x $pc", "-ex", "set $r5 = 0x1234", "-ex", "print/x $r5",
             "-ex", "delete", "-ex", "continue"],
            capture_output=True, text=True, timeout=60)
        out, err = vtoe.communicate(timeout=60)
    finally:
        if vtoe.poll() is None:
            vtoe.kill()
    main = symbol(elf, "main")
    text = gdb.stdout
    assert "Breakpoint 1, " in text and "in main ()" in text, text + gdb.stderr
    pcs = [int(line.split("=")[1], 16) for line in text.splitlines()
           if line.startswith("$") and "0x" in line]
    # Breakpoint after main's prologue (GDB skips it), then one instruction further.
    assert main <= pcs[0] < main + 16 and pcs[2] == pcs[0] + 4, text
    assert pcs[1] & 0x1f == 0x13, "SVC mode at main"
    assert ":\t0x000001d3" in text, "start_cpsr in memory: SVC with A, I, F masked"
    assert pcs[3] == 0x1234
    assert "exited normally" in text, text
    assert vtoe.returncode == 0, err
    assert out.startswith("hello from the system platform\n")
