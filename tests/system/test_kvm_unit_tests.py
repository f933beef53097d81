"""kvm-unit-tests' arm32 images on the system platform (issue 43, item 4): they are raw images
(neither ELF nor zImage), which `vtoe system run --kernel` loads as QEMU's -kernel does (RAM +
0x10000, r2 = the DTB). Each test listed here runs on qemu-system-arm 7.2 and on vtoe with the
arguments of arm/unittests.cfg; the SUMMARY and EXIT lines must be the same (QEMU's own result,
failures and skips included: gicv2-mmio-up reports 2 unexpected failures on both, psci and
pci-test skip on both).

TESTS is arm/unittests.cfg's whole single-core arm32 list (the entries without `arch = arm64`
whose `smp` is 1 or $MAX_SMP): selftest-vectors-kernel, selftest-vectors-user, pci-test (the
host bridge alone: no pci-testdev, so a skip), pmu-cycle-counter (the PMU's cycle counter),
gicv2-mmio-up and psci; plus pl031, which the cfg does not list (its RTC waits 4 s of simulated
time: about 4e9 instructions, 40 s of CPU). The SMP entries (selftest-setup, selftest-smp,
gicv2-ipi, gicv2-mmio, gicv2-mmio-3p, gicv2-active) wait for --smp; gicv3-* need a GICv3.

The suite's source is the snapshot in ../shared/kvm-unit-tests (a peer's suite, used as it is),
built once into build/kvm-unit-tests with arm-linux-gnueabihf-gcc (about 10 s). Skipped, with
the reason, without the snapshot, the cross compiler or qemu-system-arm, and outside the release
build (the suite's CPU time)."""
import fcntl
import os
import re
import shutil
import subprocess

import pytest

from system_paths import MISSING, QEMU, QEMU_ARGS, ROOT, SKIP_REASON, qemu_machine, vtoe_binary

TARBALL = ROOT.parent / "shared" / "kvm-unit-tests" / "kvm-unit-tests.tar.gz"
OUT = ROOT / "build" / "kvm-unit-tests"

pytestmark = [pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON),
              pytest.mark.skipif(not TARBALL.exists(),
                                 reason=f"kvm-unit-tests' source snapshot {TARBALL} is not here"),
              pytest.mark.skipif(os.environ.get("VTOE_PRESET", "release") != "release",
                                 reason="the release suite only (about 50 s of CPU)")]

# unittests.cfg name -> (image, -append arguments)
TESTS = {
    "selftest-vectors-kernel": ("selftest.flat", "vectors-kernel"),
    "selftest-vectors-user": ("selftest.flat", "vectors-user"),
    "psci": ("psci.flat", ""),
    "gicv2-mmio-up": ("gic.flat", "mmio"),
    "pci-test": ("pci-test.flat", ""),
    "pmu-cycle-counter": ("pmu.flat", "cycle-counter 0"),
    "pl031": ("pl031.flat", ""),
}


@pytest.fixture(scope="module")
def images():
    """arm/*.flat, built once (a lock keeps two pytest-xdist workers from building together)."""
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT.parent / "kvm-unit-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        src = OUT / "kvm-unit-tests"
        if not (src / "arm" / "selftest.flat").exists():
            shutil.rmtree(OUT, ignore_errors=True)
            OUT.mkdir()
            subprocess.run(["tar", "xzf", str(TARBALL), "-C", str(OUT)], check=True)
            for cmd in (["./configure", "--arch=arm", "--cross-prefix=arm-linux-gnueabihf-"],
                        ["make", "-j2"]):
                proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
                if proc.returncode != 0:
                    pytest.fail(f"building kvm-unit-tests: {' '.join(cmd)}:\n{proc.stdout}\n"
                                f"{proc.stderr}")
    return src / "arm"


def result(text):
    """The SUMMARY and EXIT lines of a run."""
    return [line for line in text.splitlines() if re.match(r"(SUMMARY|EXIT): ", line)]


@pytest.mark.parametrize("name", sorted(TESTS))
def test_same_result_as_qemu(images, name):
    image, args = TESTS[name]
    flat = images / image
    ref = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-kernel", str(flat),
                          "-append", args], capture_output=True, text=True, timeout=60)
    want = result(ref.stdout)
    assert want and want[-1].startswith("EXIT: "), f"QEMU:\n{ref.stdout}\n{ref.stderr}"
    run = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(flat), "--append",
                          args, "--max-instructions", "6000000000"],
                         capture_output=True, text=True, timeout=300)
    assert result(run.stdout) == want, (f"--- qemu\n{ref.stdout}--- vtoe (status "
                                        f"{run.returncode})\n{run.stdout}{run.stderr}")
