"""Debian's Xen 4.17 for armhf (scripts/fetch-debian-xen.sh puts it in build/xen) boots Debian's
kernel (build/linux, scripts/fetch-debian-linux.sh) as dom0 to its init, whose marker dom0
prints on Xen's console (hvc0): on qemu-system-arm 7.2 as the reference, and on vtoe's ISS in Hyp
mode, with QEMU's command line (`--device guest-loader,...` for the two boot modules). Release
preset only; each run is time-boxed. A boot that stops fails with how far it got. Skipped, with
the reason, when the images or qemu-system-arm are missing."""
import json
import os
import shutil
import subprocess
import time

import pytest

from system_paths import QEMU, QEMU_ARGS, ROOT, vtoe_binary

XEN_DIR, LINUX = ROOT / "build" / "xen", ROOT / "build" / "linux"
XEN, KERNEL, INITRD = XEN_DIR / "xen", LINUX / "vmlinuz", LINUX / "initrd.cpio"
MARKER = "VTOE-INITRAMFS-REACHED"
XEN_APPEND = "dom0_mem=512M console=dtuart dtuart=/pl011@9000000"
# Where QEMU's guest-loader puts dom0's kernel and initrd in the reference command line.
MODULES = [f"guest-loader,addr=0x60000000,kernel={KERNEL},bootargs=console=hvc0",
           f"guest-loader,addr=0x64000000,initrd={INITRD}"]
# Time boxes (wall seconds; vtoe takes about 15 s, QEMU 7 s on an idle machine); VTOE_XEN_TIMEOUT
# overrides vtoe's.
QEMU_TIMEOUT = 120
VTOE_TIMEOUT = int(os.environ.get("VTOE_XEN_TIMEOUT", 90))
# A bound on the run, not a target: the boot to dom0's power-off retires 3.5e9 instructions
# (VTOE_XEN_MAX_INSTRUCTIONS overrides it).
MAX_INSTRUCTIONS = int(os.environ.get("VTOE_XEN_MAX_INSTRUCTIONS", 6_000_000_000))


def missing_reason():
    if not XEN.exists():
        error = XEN_DIR / "fetch-error.txt"
        why = error.read_text().strip() if error.exists() else "not fetched yet"
        return f"{XEN} is missing ({why}): scripts/fetch-debian-xen.sh fetches it"
    if not (KERNEL.exists() and INITRD.exists()):
        return f"{KERNEL} and {INITRD} are missing: scripts/fetch-debian-linux.sh fetches them"
    return ""


needs_images = [
    pytest.mark.skipif(bool(missing_reason()), reason=missing_reason() or "-"),
    pytest.mark.skipif(os.environ.get("VTOE_PRESET", "release") != "release",
                       reason="billions of instructions: release preset only"),
]


def with_marks(marks):
    def apply(fn):
        for mark in marks:
            fn = mark(fn)
        return fn
    return apply


@pytest.mark.parametrize("device, message", [
    ("guest-loader,addr=0x60000000,kernel=/nonexistent/dom0",
     "--device guest-loader kernel /nonexistent/dom0: cannot open"),
    ("guest-loader,kernel=/nonexistent/dom0", "no addr="),
    ("loader,addr=0x60000000,kernel=k", "unknown device 'loader'"),
])
def test_guest_loader_errors_name_the_option_and_the_file(device, message, tmp_path):
    kernel = tmp_path / "raw.bin"
    kernel.write_bytes(b"\xfe\xff\xff\xea")  # b .
    run = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(kernel),
                          "--device", device, "--max-instructions", "10"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and message in run.stderr, run.stderr


@with_marks(needs_images)
def test_qemu_boots_dom0_to_its_init():
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} is missing (qemu-system-arm)")
    cmd = [QEMU, "-M", "virt,virtualization=on,highmem=off", *QEMU_ARGS, "-m", "2048",
           "-kernel", str(XEN), "-append", XEN_APPEND]
    for module in MODULES:
        cmd += ["-device", module]
    t0 = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=QEMU_TIMEOUT)
    seconds = time.monotonic() - t0
    assert MARKER in run.stdout, run.stdout[-3000:] + run.stderr
    print(f"QEMU: Xen boots dom0 to its init and powers off in {seconds:.1f} s")


@with_marks(needs_images)
def test_vtoe_boots_dom0_to_its_init(tmp_path):
    stats = tmp_path / "stats.json"
    cmd = [str(vtoe_binary()), "system", "run", "--virtualization", "--memory", "2GiB",
           "--kernel", str(XEN), "--append", XEN_APPEND,
           "--max-instructions", str(MAX_INSTRUCTIONS), "--stats", str(stats)]
    for module in MODULES:
        cmd += ["--device", module]
    t0 = time.monotonic()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=VTOE_TIMEOUT)
        out, err = run.stdout, run.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if e.stdout else ""
        err = f"time box of {VTOE_TIMEOUT} s reached"
    seconds = time.monotonic() - t0
    if MARKER in out:
        j = json.loads(stats.read_text())
        # dom0's power-off reaches Xen, which halts the machine through PSCI SYSTEM_OFF.
        assert "(XEN) Hardware Dom0 halted" in out and run.returncode == 0, err[-2000:]
        assert j["stop"] == "power-off"
        # dom0 ran below Xen: hypercalls (HVC) and stage-2 data aborts (its GIC distributor,
        # which Xen emulates) reached Hyp mode.
        traps = j["hyp_traps_by_ec"]
        assert traps.get("0x12", 0) > 0 and traps.get("0x24", 0) > 0, traps
        print(f"vtoe: Xen boots dom0 to its init in {seconds:.1f} s "
              f"({j.get('instructions', '?')} instructions, {j.get('mips', 0):.0f} MIPS, "
              f"Hyp traps {j.get('hyp_traps_by_ec', {})})")
        return
    lines = [line for line in out.splitlines() if line.strip()]
    pytest.fail(f"no {MARKER} after {seconds:.0f} s; the last console lines:\n" +
                "\n".join(lines[-15:]) + "\n" + err[-2000:])
