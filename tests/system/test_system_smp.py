"""More than one core (`vtoe system run --smp N`) against qemu-system-arm 7.2's `-smp N`.

- tests/system/target/smp_cores.c on two cores: PSCI CPU_ON, AFFINITY_INFO and CPU_OFF, each
  core's MPIDR and banked GIC registers, SGIs between the cores through GICD_SGIR, LDREX/STREX
  across cores. What it prints must be QEMU's; two runs must give byte-identical consoles and
  --stats (the cores interleave by quantum, deterministically).
- Debian's armmp kernel boots with 2 and 4 cores to its initramfs and /proc/cpuinfo lists them
  (release preset only: billions of instructions).
- GDB sees one thread per core: a breakpoint that core 1 hits stops there, each thread's
  registers are its core's.
- kvm-unit-tests' arm32 tests that need several cores (arm/unittests.cfg's smp list, MAX_SMP 4)
  give QEMU's SUMMARY and EXIT lines, except where QEMU 7.2 departs from the GIC architecture.
- What the platform cannot do with several cores is refused with a clear error.
Skipped, with the reason, without the cross compiler, qemu-system-arm or the Linux images."""
import json
import re
import os
import shutil
import subprocess
import sys

import pytest

from test_kvm_unit_tests import TARBALL
from test_kvm_unit_tests import images as kvm_images  # noqa: F401 (a fixture)
from test_kvm_unit_tests import result as kvm_result
from system_paths import (MISSING, QEMU, QEMU_ARGS, ROOT, SKIP_REASON, free_port, gdb_session,
                          qemu_machine, target_dir, vtoe_binary)

LINUX = ROOT / "build" / "linux"
KERNEL, BUSYBOX = LINUX / "vmlinuz", LINUX / "extract" / "bin" / "busybox"
MARKER = "VTOE-INITRAMFS-REACHED"
APPEND = "console=ttyAMA0 earlycon=pl011,0x9000000"
# Per core; the bare-metal program retires about 0.7 million on each.
BARE_METAL_MAX = 20_000_000
LINUX_MAX = int(os.environ.get("VTOE_BOOT_MAX_INSTRUCTIONS", 4_000_000_000))


# kvm-unit-tests' smp list: unittests.cfg name -> (image, -append arguments, cores, RAM MiB).
KVM_UNIT_TESTS = {
    "selftest-setup": ("selftest.flat", "setup smp=2 mem=256", 2, 256),
    "selftest-smp": ("selftest.flat", "smp", 4, None),
    "psci": ("psci.flat", "", 4, None),
    "gicv2-ipi": ("gic.flat", "ipi", 4, None),
    "gicv2-mmio": ("gic.flat", "mmio", 4, None),
    "gicv2-mmio-3p": ("gic.flat", "mmio", 3, None),
    "gicv2-active": ("gic.flat", "active", 4, None),
}
# Where QEMU 7.2's GIC departs from the architecture (the manual wins): it keeps GICD_ITARGETSR
# bits for CPU interfaces that do not exist (GICv2: RAZ/WI), so these checks fail there and pass
# on vtoe.
QEMU_GIC_DEPARTURES = {
    "gicv2-mmio": ["ITARGETSR: bits for non-existent CPUs masked",
                   "ITARGETSR: byte writes successful"],
    "gicv2-mmio-3p": ["ITARGETSR: bits for non-existent CPUs masked",
                      "ITARGETSR: byte writes successful", "ITARGETSR: register content preserved"],
}


def smp_elf():
    path = target_dir() / "smp_cores.elf"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build builds tests/system/target)")
    return path


def vtoe_smp(args, stats=None, timeout=120):
    cmd = [str(vtoe_binary()), "system", "run", *args]
    if stats:
        cmd += ["--stats", str(stats)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
def test_two_cores_print_what_qemu_prints_and_twice_the_same(tmp_path):
    program = smp_elf()
    ref = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-smp", "2", "-kernel",
                          str(program)], capture_output=True, text=True, timeout=60)
    assert ref.returncode == 0, f"QEMU: status {ref.returncode}\n{ref.stdout}\n{ref.stderr}"
    assert ref.stdout.endswith("power off\n"), f"QEMU did not reach SYSTEM_OFF:\n{ref.stdout}"
    assert "counter=0x00030d40" in ref.stdout  # 2 x 100000 increments, none lost

    outputs = []
    for i in range(2):
        stats = tmp_path / f"stats{i}.json"
        run = vtoe_smp(["--smp", "2", "--kernel", str(program), "--max-instructions",
                        str(BARE_METAL_MAX)], stats)
        assert run.returncode == 0, f"vtoe: status {run.returncode}\n{run.stdout}\n{run.stderr}"
        assert run.stdout == ref.stdout
        j = json.loads(stats.read_text())
        assert j["cpus"] == 2 and len(j["instructions_by_cpu"]) == 2
        assert all(n > 500_000 for n in j["instructions_by_cpu"])  # 100000 increments each
        for volatile in ("wall_seconds", "mips"):
            j.pop(volatile)
        outputs.append((run.stdout, j))
    assert outputs[0] == outputs[1], "two runs of the same image differ"


def test_what_several_cores_cannot_do_is_refused(tmp_path):
    for bad in ("0", "9"):
        run = vtoe_smp(["--smp", bad, "--kernel", "/nonexistent"])
        assert run.returncode != 0 and "--smp" in run.stderr, run.stderr
    kernel = target_dir() / "hello.elf"
    if not kernel.exists():
        pytest.skip(f"{kernel} is missing (no ARM cross compiler)")
    run = vtoe_smp(["--smp", "2", "--kernel", str(kernel), "--trace", str(tmp_path / "t")])
    assert run.returncode != 0 and "--trace" in run.stderr and "--smp 2" in run.stderr, run.stderr


@pytest.mark.skipif(shutil.which("gdb-multiarch") is None or bool(MISSING),
                    reason="needs gdb-multiarch and the bare-metal programs")
def test_gdb_shows_a_thread_per_core():
    program = smp_elf()
    port = free_port()
    gdb, out, err, status = gdb_session(
        ["--smp", "2", "--kernel", str(program)],
        ["gdb-multiarch", "-batch", "-nx", str(program), "-ex", f"target remote 127.0.0.1:{port}",
         "-ex", "info threads", "-ex", "break secondary_main", "-ex", "continue", "-ex",
         "info threads", "-ex", "print/x $r0", "-ex", "print/x $sp", "-ex", "thread 1", "-ex",
         "print/x $sp", "-ex", "delete", "-ex", "continue"], port)
    text = gdb.stdout
    assert "Thread 2 hit Breakpoint 1" in text, text + gdb.stderr
    assert text.count("Thread 2") >= 2 and "Thread 1" in text, text
    values = re.findall(r"^\$\d+ = (0x[0-9a-f]+)$", text, re.M)
    assert len(values) == 3, text
    r0, sp1, sp0 = (int(v, 16) for v in values)
    assert r0 == sp1 and sp0 != sp1, text  # core 1 on its own stack (its r0), core 0 on its own
    assert "exited normally" in text, text
    assert status == 0 and out.endswith("power off\n"), err


def test_one_core_by_default_has_one_cpu_node(tmp_path):
    kernel = target_dir() / "hello.elf"
    if not kernel.exists():
        pytest.skip(f"{kernel} is missing (no ARM cross compiler)")
    stats = tmp_path / "stats.json"
    run = vtoe_smp(["--kernel", str(kernel)], stats)
    assert run.returncode == 0, run.stderr
    assert "cpus" not in json.loads(stats.read_text())  # --stats unchanged for one core


@pytest.mark.skipif(os.environ.get("VTOE_PRESET", "release") != "release",
                    reason="billions of instructions: too slow under the sanitizers")
@pytest.mark.skipif(not (KERNEL.exists() and BUSYBOX.exists()),
                    reason=f"{KERNEL} and {BUSYBOX} are missing: scripts/fetch-debian-linux.sh "
                           "(make linux-images) fetches them")
@pytest.mark.parametrize("cpus", [2, 4])
def test_linux_boots_and_lists_every_cpu(cpus, tmp_path):
    initrd = tmp_path / "initrd.cpio"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_initramfs.py"), "--busybox",
                    str(BUSYBOX), "--out", str(initrd), "--run", "/bin/busybox cat /proc/cpuinfo"],
                   check=True)
    stats = tmp_path / "stats.json"
    run = vtoe_smp(["--smp", str(cpus), "--kernel", str(KERNEL), "--initrd", str(initrd),
                    "--append", APPEND, "--max-instructions", str(LINUX_MAX)], stats, timeout=900)
    tail = "\n".join(run.stdout.splitlines()[-30:])
    assert run.returncode == 0 and MARKER in run.stdout, f"{tail}\n{run.stderr[-2000:]}"
    processors = [line for line in run.stdout.splitlines() if line.startswith("processor")]
    assert len(processors) == cpus, tail
    assert f"smp: Brought up 1 node, {cpus} CPUs" in run.stdout, tail
    j = json.loads(stats.read_text())
    assert j["stop"] == "power-off" and j["cpus"] == cpus
    print(f"vtoe --smp {cpus} boot to the marker: {j['instructions']} instructions "
          f"({j['instructions_by_cpu']}), {j['wall_seconds']:.1f} s")


def kvm_reports(text):
    """A kvm-unit-tests run's PASS, FAIL and SKIP lines."""
    return [line for line in text.splitlines() if re.match(r"(PASS|FAIL|SKIP): ", line)]


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
@pytest.mark.skipif(not TARBALL.exists(),
                    reason=f"kvm-unit-tests' source snapshot {TARBALL} is not here")
@pytest.mark.parametrize("name", sorted(KVM_UNIT_TESTS))
def test_kvm_unit_tests_smp_list_as_on_qemu(kvm_images, name):
    image, args, cpus, mem = KVM_UNIT_TESTS[name]
    flat = kvm_images / image
    qemu_mem = ["-m", str(mem)] if mem else []
    ref = subprocess.run([QEMU, *qemu_machine(False), *QEMU_ARGS, "-smp", str(cpus), *qemu_mem,
                          "-kernel", str(flat), "-append", args],
                         capture_output=True, text=True, timeout=60)
    # The GIC tests wait 100 ms of simulated time per check (mdelay): 1e8 instructions each.
    run = vtoe_smp(["--smp", str(cpus), *(["--memory", f"{mem}MiB"] if mem else []), "--kernel",
                    str(flat), "--append", args, "--max-instructions", "3000000000"])
    want, got = kvm_reports(ref.stdout), kvm_reports(run.stdout)
    assert want, f"QEMU:\n{ref.stdout}\n{ref.stderr}"
    departures = QEMU_GIC_DEPARTURES.get(name, [])
    for check in departures:
        want = [line.replace("FAIL: ", "PASS: ", 1) if line.endswith(check) else line
                for line in want]
    assert got == want, (f"--- qemu\n{ref.stdout}--- vtoe ({run.returncode})\n"
                         f"{run.stdout}{run.stderr}")
    if not departures:
        assert kvm_result(run.stdout) == kvm_result(ref.stdout)
    else:
        assert kvm_result(run.stdout)[-1] == "EXIT: STATUS=1"  # every check passes on vtoe
