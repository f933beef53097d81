"""`vtoe system run --gdb PORT` with gdb-multiarch: GDB reads the target description
(target.xml), stops at a breakpoint on main, reads registers and memory, steps one instruction,
writes a register, and the program runs on to PSCI SYSTEM_OFF, which GDB sees as the exit. And
the issue's check: GDB stops Debian's kernel at start_kernel on vtoe as on QEMU.
Skipped, with the reason, without gdb-multiarch or the bare-metal programs' cross compiler."""
import shutil
import socket
import subprocess
import time

import pytest

from system_paths import (CC, QEMU, QEMU_ARGS, ROOT, free_port, gdb_session, preset, qemu_machine,
                          target_dir, vtoe_binary)

GDB = "gdb-multiarch"
pytestmark = pytest.mark.skipif(shutil.which(GDB) is None or shutil.which(CC) is None,
                                reason=f"needs {GDB} and {CC} (scripts/install-deps.sh)")


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
    gdb, out, err, status = gdb_session(
        ["--kernel", str(elf)],
        [GDB, "-batch", "-nx", str(elf), "-ex", f"target remote 127.0.0.1:{port}",
         "-ex", "break main", "-ex", "continue", "-ex", "print/x $pc",
         "-ex", "print/x $cpsr", "-ex", "x/1wx &start_cpsr", "-ex", "stepi",
         "-ex", "print/x $pc", "-ex", "set $r5 = 0x1234", "-ex", "print/x $r5",
         "-ex", "delete", "-ex", "continue"], port)
    main = symbol(elf, "main")
    text = gdb.stdout
    assert "Breakpoint 1, " in text and "in main ()" in text, text + gdb.stderr
    pcs = [int(line.split("=")[1], 16) for line in text.splitlines()
           if line.startswith("$") and "0x" in line]
    # Breakpoint after main's prologue (GDB skips it), then one instruction further.
    assert main <= pcs[0] < main + 16 and pcs[2] == pcs[0] + 4, text
    assert pcs[1] & 0x1f == 0x13, "SVC mode at main"
    # SVC with A, I, F masked, and Z set as QEMU 7.2 starts
    assert ":\t0x400001d3" in text, "start_cpsr in memory: SVC with A, I, F masked"
    assert pcs[3] == 0x1234
    assert "exited normally" in text, text
    assert status == 0, err
    assert out.startswith("hello from the system platform\n")


LINUX = ROOT / "build" / "linux"
KERNEL, INITRD, SYSTEM_MAP = LINUX / "vmlinuz", LINUX / "initrd.cpio", LINUX / "System.map"


def gdb_at(port, address):
    """GDB's commands for a kernel without symbols: a breakpoint by address, then the stop."""
    return [GDB, "-batch", "-nx", "-iex", "set tcp auto-retry on", "-iex",
            "set tcp connect-timeout 60", "-ex", f"target remote 127.0.0.1:{port}", "-ex",
            f"break *{address:#x}", "-ex", "continue", "-ex", "print/x $pc", "-ex",
            "print/x $cpsr", "-ex", f"x/1wx {address:#x}", "-ex", "kill"]


def stop_report(text):
    """($pc, $cpsr, the word at the breakpoint) from GDB's output."""
    values = [int(line.split("=")[1], 16) for line in text.splitlines()
              if line.startswith("$") and "0x" in line]
    words = [line.split(":")[1].split() for line in text.splitlines()
             if line.startswith("0x") and ":\t" in line]
    assert len(values) == 2 and words, text
    return values[0], values[1], int(words[-1][0], 16)


@pytest.mark.skipif(preset() != "release",
                    reason="2e9 instructions of decompression first: the release run only")
@pytest.mark.skipif(not (KERNEL.exists() and INITRD.exists() and SYSTEM_MAP.exists()),
                    reason=f"{KERNEL}, {INITRD} and {SYSTEM_MAP} are made by "
                           "scripts/fetch-debian-linux.sh (make test runs it)")
@pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"needs {QEMU}")
def test_gdb_stops_at_start_kernel_as_on_qemu():
    """`break *start_kernel` (the address from System.map) and continue: the kernel runs its
    decompressor with the MMU off, then its own code at virtual addresses; QEMU's gdbstub
    matches a breakpoint against the PC whatever the translation, and so does vtoe's."""
    address = next(int(line.split()[0], 16) for line in SYSTEM_MAP.read_text().splitlines()
                   if line.endswith(" T start_kernel"))
    boot = ["kernel", str(KERNEL), "initrd", str(INITRD), "append", "console=ttyAMA0"]
    reports = {}
    for name in ("qemu", "vtoe"):
        port = free_port()
        if name == "qemu":  # -S: stopped before the first instruction, as vtoe waits
            cmd = [QEMU, *qemu_machine(False), *QEMU_ARGS, "-gdb", f"tcp::{port}", "-S"]
            cmd += ["-" + a if i % 2 == 0 else a for i, a in enumerate(boot)]
        else:
            cmd = [str(vtoe_binary()), "system", "run", "--gdb", str(port)]
            cmd += ["--" + a if i % 2 == 0 else a for i, a in enumerate(boot)]
        target = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        try:
            gdb = subprocess.run(gdb_at(port, address), capture_output=True, text=True,
                                 timeout=600)
            target.wait(timeout=60)
        finally:
            if target.poll() is None:
                target.kill()
                target.wait()
        assert f"Breakpoint 1, {address:#010x} in ?? ()" in gdb.stdout, (
            f"{name}: {gdb.stdout}{gdb.stderr}{target.stderr.read()}")
        reports[name] = stop_report(gdb.stdout)
    pc, cpsr, word = reports["vtoe"]
    assert pc == address and cpsr & 0x1f == 0x13, "in SVC mode at start_kernel"
    assert reports["vtoe"] == reports["qemu"], reports


def rsp_packet(payload):
    return f"${payload}#{sum(payload.encode()) % 256:02x}".encode()


def rsp_reply(sock):
    """The next packet's payload (acks and other bytes before '$' skipped); acknowledged."""
    data = b""
    while not (b"$" in data and b"#" in data[data.index(b"$"):] and
               len(data) >= data.index(b"#", data.index(b"$")) + 3):
        chunk = sock.recv(4096)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    start = data.index(b"$")
    sock.sendall(b"+")
    return data[start + 1:data.index(b"#", start)].decode()


@pytest.mark.skipif(preset() != "release", reason="a kernel boot: the release run only")
@pytest.mark.skipif(not (KERNEL.exists() and INITRD.exists()),
                    reason=f"{KERNEL} and {INITRD} are made by scripts/fetch-debian-linux.sh")
def test_ctrl_c_stops_a_running_kernel():
    """GDB's Ctrl-C (0x03 on the wire) while the kernel boots: the core stops with T02
    (SIGINT, as QEMU's gdbstub answers), registers can be read, and k ends the run."""
    port = free_port()
    vtoe = subprocess.Popen([str(vtoe_binary()), "system", "run", "--kernel", str(KERNEL),
                             "--initrd", str(INITRD), "--append", "console=ttyAMA0", "--gdb",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert "waiting for GDB" in vtoe.stderr.readline()
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(rsp_packet("c"))
            time.sleep(0.5)
            sock.sendall(b"\x03")
            assert rsp_reply(sock) == "T02"
            sock.sendall(rsp_packet("g"))
            registers = rsp_reply(sock)
            assert len(registers) == 17 * 8, registers
            sock.sendall(rsp_packet("k"))
        _, err = vtoe.communicate(timeout=60)
    finally:
        if vtoe.poll() is None:
            vtoe.kill()
            vtoe.wait()
    assert "ended by GDB (kill)" in err, err
