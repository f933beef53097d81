"""Debian's Linux (linux-image-*-armmp, armhf) with a busybox initramfs whose /init prints a
marker and powers off (scripts/fetch-debian-linux.sh puts both under build/linux; `make test`
runs it first). QEMU must boot it to the marker and exit 0; vtoe must do the same with and
without --virtualization (release preset only: billions of instructions); a boot that stops
early fails with how far it got (the last console line and the instruction count). Skipped, with the reason, when the images or
qemu-system-arm are missing."""
import json
import os
import shutil
import subprocess
import time

import pytest

from system_paths import QEMU, QEMU_ARGS, ROOT, qemu_machine, vtoe_binary

LINUX = ROOT / "build" / "linux"
KERNEL, INITRD = LINUX / "vmlinuz", LINUX / "initrd.cpio"
MARKER = "VTOE-INITRAMFS-REACHED"
APPEND = "console=ttyAMA0"
# vtoe boots with the early console too, so that a boot that stops shows its last kernel line.
VTOE_APPEND = APPEND + " earlycon=pl011,0x9000000"
# A bound on each vtoe boot, not a target: the boot to the marker retires 3.29e9 instructions
# (about 16 s of CPU time at the ISS's 200 MIPS with the MMU on); VTOE_BOOT_MAX_INSTRUCTIONS
# overrides it.
MAX_INSTRUCTIONS = int(os.environ.get("VTOE_BOOT_MAX_INSTRUCTIONS", 4_000_000_000))

pytestmark = [
    pytest.mark.skipif(not (KERNEL.exists() and INITRD.exists()),
                       reason=f"{KERNEL} and {INITRD} are missing: scripts/fetch-debian-linux.sh "
                              "(run by make test) fetches them from the Debian registry"),
    pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"{QEMU} is missing (qemu-system-arm)"),
]


@pytest.mark.skipif(os.environ.get("VTOE_PRESET", "release") != "release",
                    reason="QEMU alone: the release run checks the images once")
def test_qemu_boots_to_the_marker():
    t0 = time.monotonic()
    run = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-kernel", str(KERNEL),
                          "-initrd", str(INITRD), "-append", APPEND],
                         capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - t0
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    assert MARKER in run.stdout, run.stdout[-2000:]
    print(f"QEMU boot to the marker and power-off: {seconds:.1f} s")


@pytest.mark.skipif(os.environ.get("VTOE_PRESET", "release") != "release",
                    reason="billions of instructions: too slow under the sanitizers (the release "
                           "run boots the same kernel)")
@pytest.mark.parametrize("virtualization", [False, True], ids=["svc", "hyp"])
def test_vtoe_boots_to_the_marker(virtualization, tmp_path):
    stats = tmp_path / "stats.json"
    cmd = [str(vtoe_binary()), "system", "run", "--kernel", str(KERNEL), "--initrd", str(INITRD),
           "--append", VTOE_APPEND, "--max-instructions", str(MAX_INSTRUCTIONS), "--stats",
           str(stats)]
    if virtualization:
        cmd.append("--virtualization")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode == 0 and MARKER in run.stdout:
        j = json.loads(stats.read_text())
        assert j["stop"] == "power-off" and j["psci_calls"] >= 1
        print(f"vtoe boot to the marker: {j['instructions']} instructions, "
              f"{j['wall_seconds']:.1f} s, {j['mips']:.0f} MIPS")
        return
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    last = lines[-1] if lines else "(no console output)"
    count = json.loads(stats.read_text())["instructions"] if stats.exists() else 0
    pytest.fail(f"boot stopped after {count} instructions (status {run.returncode}); last console "
                f"line: {last!r}\n{run.stderr[-2000:]}")
