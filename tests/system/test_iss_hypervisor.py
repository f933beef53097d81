"""Guests on the ISS under the hypervisor model (hypervisor/iss_hypervisor.h): every entry to Hyp
mode lands in the model, which emulates each VM's distributor and UART behind stage-2 aborts,
answers PSCI over HVC, injects the virtual timer and device interrupts through the GIC's list
registers, and switches vCPU states with the credit scheduler.

Checked: bare-metal programs print in each of two VMs what they print on the bare platform
(the trapped UART, PSCI over HVC); a guest access the syndrome cannot describe stops that VM,
named with the IPA and the PC, and the run fails; Debian's kernel boots to init in two VMs; and
`vtoe run` with platform.cpu_model=iss and architecture=da moves data through the TOE channel
the guest drives directly (its DMA through the SystemMMU with the VM's stage 2, its interrupts
from the bit vector). The Linux runs are release-only (each boot 3.3e9 instructions)."""
import json
import re
import subprocess

import pytest

from system_paths import MISSING, ROOT, SKIP_REASON, preset, target_dir, vtoe_binary

LINUX = ROOT / "build" / "linux"
KERNEL, INITRD = LINUX / "vmlinuz", LINUX / "initrd.cpio"
INITRAMFS = ROOT / "build" / preset() / "target" / "initramfs.cpio"
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"

bare_metal = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
linux = pytest.mark.skipif(
    preset() != "release" or not (KERNEL.exists() and INITRD.exists() and INITRAMFS.exists()),
    reason="release preset with build/linux (make linux-images) and the build's initramfs")


def system_run(tmp_path, *args, timeout=300):
    stats = tmp_path / "stats.json"
    p = subprocess.run([str(vtoe_binary()), "system", "run", *args, "--stats", str(stats)],
                       capture_output=True, text=True, timeout=timeout)
    return p, (json.loads(stats.read_text()) if stats.exists() else None)


def console_of(out, vm):
    """The lines VM `vm` printed, its "[vmN] " prefix removed."""
    tag = f"[vm{vm}] "
    return [line[len(tag):] for line in out.splitlines() if line.startswith(tag)]


@bare_metal
@pytest.mark.parametrize("program", ["hello", "psci"])
def test_each_guest_prints_what_the_bare_platform_prints(program, tmp_path):
    elf = str(target_dir() / f"{program}.elf")
    bare = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", elf],
                          capture_output=True, text=True, timeout=120)
    assert bare.returncode == 0, bare.stderr
    p, stats = system_run(tmp_path, "--kernel", elf, "--guests", "2")
    assert p.returncode == 0, p.stderr
    expected = [line for line in bare.stdout.splitlines() if line]
    for vm in (0, 1):
        assert console_of(p.stdout, vm) == expected
    hyp = stats["hypervisor"]
    assert [v["stop"] for v in hyp["vms"]] == ["power-off", "power-off"]
    for v in hyp["vms"]:
        assert v["exits"]["hvc"] >= 1  # PSCI's SYSTEM_OFF at least
        assert v["exits"]["data_abort"] >= len(expected)  # the UART's writes trap
        # Each trap costs what Xen 4.17 retires for it on the ISS (docs/calibration.md).
        assert v["hypervisor_cycles"]["data_abort"] == 1896 * v["exits"]["data_abort"]
        assert v["hypervisor_cycles"]["hvc"] == 3487 * v["exits"]["hvc"]
    # Every instruction retired is one VM's (the bare-metal programs run at PL1 only).
    assert sum(v["instructions"]["kernel"] for v in hyp["vms"]) == stats["instructions"]
    assert all(v["instructions"]["user"] == 0 and v["instructions"]["kernel"] > 0
               for v in hyp["vms"])
    # The hypervisor is the model: no code runs in Hyp mode (an HVC retires after its entry, so
    # the HVCs themselves are all the ISS counts there).
    assert stats["by_mode"]["hyp"] == sum(v["exits"]["hvc"] for v in hyp["vms"])


@bare_metal
def test_an_access_the_syndrome_cannot_describe_stops_the_vm(tmp_path):
    # uart.c reads the PL011's ID registers with a load that writes its base register back.
    p, stats = system_run(tmp_path, "--kernel", str(target_dir() / "uart.elf"), "--guests", "2")
    assert p.returncode == 1
    assert re.search(r"vm1 stopped: a device access the syndrome does not describe: a load from "
                     r"IPA 0x9000fe0 .* at pc 0x[0-9a-f]+ in mode 0x13", p.stderr), p.stderr
    assert stats["hypervisor"]["vms"][0]["stop"].startswith("a device access")


def test_guests_need_no_memory_or_device_tree_of_their_own():
    for extra in (["--memory", "256MiB"], ["--dtb", "x.dtb"]):
        p = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", "k", "--guests", "2",
                            *extra], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "--guests" in p.stderr, p.stderr


@linux
def test_linux_boots_to_init_in_two_vms(tmp_path):
    p, stats = system_run(tmp_path, "--kernel", str(KERNEL), "--initrd", str(INITRD),
                          "--append", "console=ttyAMA0", "--guests", "2",
                          "--max-instructions", "12000000000", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    for vm in (0, 1):
        lines = console_of(p.stdout, vm)
        assert "VTOE-INITRAMFS-REACHED" in lines, lines[-10:]
    hyp = stats["hypervisor"]
    assert hyp["vm_switches"] > 2  # the credit scheduler shared the core
    for v in hyp["vms"]:
        assert v["stop"] == "power-off"
        assert v["exits"]["vtimer"] > 0 and v["exits"]["timer"] > 0
        assert v["run_seconds"] > 1
        assert v["instructions"]["user"] > 0 and v["instructions"]["kernel"] > 1e9


@linux
def test_direct_access_transmit_through_linux_in_a_vm(tmp_path):
    out = tmp_path / "da"
    p = subprocess.run([str(vtoe_binary()), "run", str(QUICKSTART), "--out", str(out),
                        "--set", "platform.cpu_model=iss", "--set", "architecture=da",
                        "--set", "duration=40ms", "--set", "warmup=10ms"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads((out / "results.json").read_text())
    assert r["architecture"] == "da"
    assert r["vms"][0]["tx_mbps"] > 100
    assert r["peer"]["bytes_received"] > 0 and r["peer"]["pattern_errors"] == 0
    hyp = r["iss"]["hypervisor"]
    vm = hyp["vms"][0]
    # The TOE's completions arrive as physical interrupts the model turns into virtual ones;
    # the channel itself is mapped, so its registers never trap (the UART's and GIC's do).
    assert vm["exits"]["irq"] > 10
    assert vm["stop"] == ""
    assert "toe_stream: connected" in (out / "console.log").read_text()
