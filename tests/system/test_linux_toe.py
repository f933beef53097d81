"""Linux drives the TOE: Debian's kernel boots on `vtoe system run` with an initramfs whose /init
loads the TOE driver (target/linux, vtoe_toe.ko, built against that kernel's own headers) and
runs target/apps/toe_stream, which connects through /dev/toe to the built-in scenario's peer
(10.0.0.2:5001, a sink checking the stream pattern) and sends 64 KiB, after two connects that
must fail with their errno (a port where nothing listens, an address with no host). Checked from
the console (the driver's probe line, insmod's and the program's exit statuses, the TOE's
interrupt count in /proc/interrupts) and from --stats (every byte at the peer, no pattern error,
no bad register access). A second boot runs target/apps/toe_rpc against the peer's RPC server
(the scenario's rpc workload, by --set): requests sent, answers received through recv() and
checked byte by byte; a third runs target/apps/toe_sink against the peer's tcp_rx source:
listen, accept, and the pattern checked in every byte received. QEMU's virt machine has no TOE:
there the same initramfs shows that the module loads into the same kernel and that the program
fails with a clear error; a module that does not load is reported and the workload skipped, the
boot still ending at the marker.

Skipped, with the reason, without the kernel and busybox (scripts/fetch-debian-linux.sh), the
module (scripts/fetch-linux-headers.sh, then the build) or the programs (the cross compiler).
Release preset only: billions of instructions."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from system_paths import QEMU, QEMU_ARGS, ROOT, preset, qemu_machine, vtoe_binary

LINUX = ROOT / "build" / "linux"
KERNEL, BUSYBOX = LINUX / "vmlinuz", LINUX / "extract" / "bin" / "busybox"
MODULE = ROOT / "build" / preset() / "target" / "linux" / "module" / "vtoe_toe.ko"
APPS = ROOT / "build" / preset() / "target" / "apps"
PROGRAMS = (APPS / "toe_stream", APPS / "toe_rpc", APPS / "toe_sink")
MARKER = "VTOE-INITRAMFS-REACHED"
APPEND = "console=ttyAMA0 earlycon=pl011,0x9000000"
PEER, PORT, BYTES, CHUNK = "10.0.0.2", 5001, 65536, 8000
STREAM = f"toe_stream {PEER} {PORT} {BYTES} {CHUNK}"
# Before the stream, in the same boot: a port where nothing listens (the peer answers with a
# reset) and an address where no host is (no answer: the driver's 10 s bound on Connect).
REFUSED = f"toe_stream {PEER} {PORT + 1} 1000"
UNREACHABLE = f"toe_stream 10.0.0.9 {PORT} 1000"
RPC_REQUEST, RPC_RESPONSE, RPC_COUNT = 20000, 10000, 3
RPC = f"toe_rpc {PEER} {PORT} {RPC_REQUEST} {RPC_RESPONSE} {RPC_COUNT}"
SINK_BYTES = 262144
SINK = f"toe_sink {PORT} {SINK_BYTES} 16384"
# A bound, not a target: the bare boot to the marker retires 3.29e9 instructions and the module
# and the transfer about 2e7 more; VTOE_BOOT_MAX_INSTRUCTIONS overrides it.
MAX_INSTRUCTIONS = int(os.environ.get("VTOE_BOOT_MAX_INSTRUCTIONS", 4_000_000_000))
# The driver's probe line (target/linux/toe_main.c).
PROBE = re.compile(r"vtoe-toe c000000\.toe: TOE at 0x0c000000: (\d+) channels \(device tree: "
                   r"(\d+)\), IRQ (\d+) \(GIC ID 144\)")

pytestmark = [
    pytest.mark.skipif(preset() != "release",
                       reason="billions of instructions: the release run boots the same kernel"),
    pytest.mark.skipif(not (KERNEL.exists() and BUSYBOX.exists()),
                       reason=f"{KERNEL} and {BUSYBOX} are missing: scripts/fetch-debian-linux.sh "
                              "(make linux-images) fetches them"),
    pytest.mark.skipif(not MODULE.exists(),
                       reason=f"{MODULE} is missing: it is built where the kernel's headers are "
                              "(scripts/fetch-linux-headers.sh, make linux-images) and "
                              "arm-linux-gnueabihf-gcc-12 is"),
    pytest.mark.skipif(not all(p.exists() for p in PROGRAMS),
                       reason=f"{' or '.join(map(str, PROGRAMS))} is missing (no ARM cross "
                              "compiler)"),
]


def initramfs(path, module=MODULE, commands=(STREAM,)):
    runs = [a for c in commands for a in ("--run", c)]
    programs = [a for p in PROGRAMS for a in ("--program", str(p))]
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_initramfs.py"),
                    "--busybox", str(BUSYBOX), "--out", str(path), "--module", str(module),
                    *programs, *runs], check=True)
    return path


def last_lines(console, n=25):
    lines = [line for line in console.splitlines() if line.strip()]
    return "\n".join(lines[-n:]) or "(no console output)"


def boot_on_vtoe(tmp_path, commands, sets=()):
    """Boots with an initramfs running `commands`; returns the console, the --stats JSON and
    what to say on failure (the kernel's last console lines included)."""
    stats = tmp_path / "stats.json"
    initrd = initramfs(tmp_path / "initrd.cpio", commands=commands)
    t0 = time.monotonic()
    run = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(KERNEL),
                          "--initrd", str(initrd), "--append", APPEND, "--max-instructions",
                          str(MAX_INSTRUCTIONS), "--stats", str(stats),
                          *[a for kv in sets for a in ("--set", kv)]],
                         capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    out = run.stdout
    s = json.loads(stats.read_text()) if stats.exists() else {}
    where = (f"status {run.returncode}, stop {s.get('stop')!r} after {s.get('instructions')} "
             f"instructions; the kernel's last console lines:\n{last_lines(out)}\n"
             f"{run.stderr[-1500:]}")
    assert "VTOE-INSMOD vtoe_toe.ko ok" in out, f"the module did not load ({where})"
    assert run.returncode == 0 and MARKER in out and s["stop"] == "power-off", where
    s["wall"] = wall
    return out, s, where


def test_linux_drives_the_toe_on_vtoe(tmp_path):
    out, s, where = boot_on_vtoe(tmp_path, (REFUSED, UNREACHABLE, STREAM, "cat /proc/interrupts",
                                            "rmmod vtoe_toe"))
    wall = s["wall"]
    probe = PROBE.search(out)
    assert probe, f"the module loaded but did not probe the TOE ({where})"
    channels, dt_channels, irq = (int(g) for g in probe.groups())
    assert channels == dt_channels >= 1
    assert "toe_stream: connect: Connection refused" in out, where
    assert f"VTOE-RUN-EXIT 1 {REFUSED}" in out, where
    assert "no answer to Connect to 10.0.0.9:5001" in out, where
    assert "toe_stream: connect: Connection timed out" in out, where
    assert f"VTOE-RUN-EXIT 1 {UNREACHABLE}" in out, where
    assert f"VTOE-RUN-EXIT 0 {STREAM}" in out, f"toe_stream failed ({where})"
    assert f"toe_stream: sent {BYTES} bytes" in out
    # The ECQ's interrupt reached the driver's handler (/proc/interrupts: IRQ, count, ..., name).
    counts = re.search(rf"^\s*{irq}:\s+(\d+)\s.*\b144 Level\s+vtoe-toe$", out, re.M)
    assert counts and int(counts.group(1)) >= 1, where
    # Unloading disables the channel and frees the sockets the TOE had not released yet.
    assert re.search(r"vtoe-toe c000000\.toe: removed after \d+ interrupts", out), where
    assert "VTOE-RUN-EXIT 0 rmmod vtoe_toe" in out, where
    toe = s["toe"]
    assert toe["tx_bytes"] == BYTES
    assert toe["peer_bytes_received"] == BYTES
    assert toe["peer_pattern_errors"] == 0
    assert toe["bad_register_accesses"] == 0
    print(f"Linux drives the TOE on vtoe: {s['instructions']} instructions, {wall:.1f} s wall, "
          f"{int(counts.group(1))} TOE interrupts, {toe['register_accesses']} register accesses")


def test_linux_receives_through_the_toe_on_vtoe(tmp_path):
    # The peer runs the RPC server of the scenario's rpc workload: RPC_RESPONSE bytes of 0xa5 for
    # every RPC_REQUEST bytes. Answers larger than the driver's 4 KiB receive buffer make recv()
    # wrap around it and give space back while the TOE still holds the rest.
    sets = ("vms.0.workload.type=rpc", f"vms.0.workload.message_size={RPC_REQUEST}",
            f"vms.0.workload.response_size={RPC_RESPONSE}")
    out, s, where = boot_on_vtoe(tmp_path, (RPC,), sets)
    assert f"VTOE-RUN-EXIT 0 {RPC}" in out, f"toe_rpc failed ({where})"
    done = re.search(r"toe_rpc: (\d+) requests, (\d+) bytes sent, (\d+) received in (\d+) recv "
                     r"calls, (\d+) bad bytes", out)
    assert done, where
    requests, sent, received, calls, bad = (int(g) for g in done.groups())
    assert (requests, sent, received, bad) == (RPC_COUNT, RPC_COUNT * RPC_REQUEST,
                                               RPC_COUNT * RPC_RESPONSE, 0)
    assert calls >= RPC_COUNT * -(-RPC_RESPONSE // 4096)
    toe = s["toe"]
    assert toe["peer_bytes_sent"] == toe["rx_bytes"] == RPC_COUNT * RPC_RESPONSE
    assert toe["peer_bytes_received"] == toe["tx_bytes"] == RPC_COUNT * RPC_REQUEST
    assert toe["bad_register_accesses"] == 0
    print(f"Linux receives through the TOE on vtoe: {s['instructions']} instructions, "
          f"{s['wall']:.1f} s wall, {calls} recv calls")


def test_linux_accepts_and_receives_through_the_toe_on_vtoe(tmp_path):
    # The peer runs the scenario's tcp_rx source: it connects to the TOE's address on the
    # workload's port (retrying every millisecond while nothing listens there) and streams the
    # pattern for ever. toe_sink listens, accepts and checks SINK_BYTES of it.
    out, s, where = boot_on_vtoe(tmp_path, (SINK,), ("vms.0.workload.type=tcp_rx",))
    assert f"VTOE-RUN-EXIT 0 {SINK}" in out, f"toe_sink failed ({where})"
    assert "toe_sink: accepted a connection" in out, where
    done = re.search(r"toe_sink: received (\d+) bytes in (\d+) recv calls, (\d+) not the "
                     r"pattern's", out)
    assert done, where
    received, calls, bad = (int(g) for g in done.groups())
    assert (received, bad) == (SINK_BYTES, 0)
    assert calls >= SINK_BYTES // 4096  # no recv() takes more than the receive buffer holds
    toe = s["toe"]
    assert toe["rx_bytes"] >= SINK_BYTES and toe["bad_register_accesses"] == 0
    # The run ends with the power-off although the source would stream on.
    assert s["simulated_seconds"] < 10, s["simulated_seconds"]
    print(f"Linux accepts and receives through the TOE on vtoe: {s['instructions']} "
          f"instructions, {s['wall']:.1f} s wall, {calls} recv calls")


@pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"{QEMU} is missing (qemu-system-arm)")
def test_the_module_loads_on_qemu_and_the_program_says_there_is_no_toe(tmp_path):
    run = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-kernel", str(KERNEL),
                          "-initrd", str(initramfs(tmp_path / "initrd.cpio")), "-append",
                          "console=ttyAMA0"], capture_output=True, text=True, timeout=120)
    out = run.stdout.replace("\r", "")
    assert run.returncode == 0 and MARKER in out, last_lines(out)
    assert "VTOE-INSMOD vtoe_toe.ko ok" in out, last_lines(out)
    assert not PROBE.search(out)
    assert "toe_stream: open /dev/toe: No such file or directory" in out, last_lines(out)
    assert f"VTOE-RUN-EXIT 1 {STREAM}" in out


@pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"{QEMU} is missing (qemu-system-arm)")
def test_a_module_that_does_not_load_is_reported_and_the_workload_skipped(tmp_path):
    broken = tmp_path / "vtoe_toe.ko"
    broken.write_bytes(MODULE.read_bytes()[:4096])  # a truncated ELF: insmod must refuse it
    run = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-kernel", str(KERNEL),
                          "-initrd", str(initramfs(tmp_path / "initrd.cpio", broken)),
                          "-append", "console=ttyAMA0"], capture_output=True, text=True,
                         timeout=120)
    out = run.stdout.replace("\r", "")
    assert run.returncode == 0 and MARKER in out, last_lines(out)
    assert "invalid module format" in out, last_lines(out)
    assert re.search(r"VTOE-INSMOD vtoe_toe\.ko failed \(status [1-9]\d*\)", out), last_lines(out)
    assert f"VTOE-RUN-SKIPPED {STREAM}: a module did not load" in out, last_lines(out)
    assert "toe_stream: connected" not in out
