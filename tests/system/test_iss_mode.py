"""platform.cpu_model=iss: `vtoe run` boots Debian's Linux on the ISS with the build's initramfs
(target/: the TOE driver module and the applications), the scenario's workload runs as the ARM
program whose command `vtoe run` types on the console, and results.json counts the CPU from the
instructions the ISS retired. Checked: transmit, receive and rpc each move data through Linux's
driver (the peer's pattern check included), the CPU shares add up and come from the ISS, a run
that starts from the booted snapshot the first one saved gives byte-identical results and
console, a snapshot serves another workload, and what the ISS model does not run yet, or a
module that does not load, ends with a clear error (the key, or the console's last lines).

The boots are release-only (3.3e9 instructions each, about 15 s); the refusals run everywhere."""
import json
import subprocess
import sys

import pytest

from system_paths import ROOT, preset, vtoe_binary

LINUX = ROOT / "build" / "linux"
KERNEL, BUSYBOX = LINUX / "vmlinuz", LINUX / "extract" / "bin" / "busybox"
INITRAMFS = ROOT / "build" / preset() / "target" / "initramfs.cpio"
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"
# 30 ms measured: with the default caches the core is memory-bound and the simulated time after
# the boot costs little wall time.
SHORT = ("platform.cpu_model=iss", "duration=32ms", "warmup=2ms")

boots = pytest.mark.skipif(
    preset() != "release" or not (KERNEL.exists() and INITRAMFS.exists()),
    reason="release preset with build/linux/vmlinuz and the build's initramfs (make linux-images, "
           "then make build): each boot retires 3.3e9 instructions")


def run(tmp_path, *sets, name="run"):
    """A run whose booted snapshots are kept in tmp_path/snapshots (shared by the test's runs)."""
    out = tmp_path / name
    args = [str(vtoe_binary()), "run", str(QUICKSTART), "--out", str(out),
            "--set", f"platform.iss.snapshot_dir={tmp_path / 'snapshots'}"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    return p, out


def results(out):
    return json.loads((out / "results.json").read_text())


def snapshot(out):
    return json.loads((out / "run.json").read_text())["snapshot"]


def check_cpu(r):
    cpu = r["vms"][0]["cpu"]
    assert cpu["hypervisor"] == 0.0
    assert abs(cpu["guest_user"] + cpu["guest_kernel"] + cpu["idle"] - 1.0) < 1e-5, cpu
    iss = r["iss"]
    assert iss["instructions"]["kernel"] > 0 and iss["cycles"]["kernel"] > 0, iss
    assert iss["boot_instructions"] > 1e9, iss  # Linux booted on the ISS before the workload
    # The user share is the user-mode cycles, and user mode's waits for cache line fills, over
    # the window's cycles at cpu_freq.
    window_cycles = r["measured_s"] * iss["cpu_freq_hz"]
    caches = iss["caches"]
    stall_cycles = caches["miss_stall_user_s"] * iss["cpu_freq_hz"] if caches["enabled"] else 0
    assert cpu["guest_user"] == pytest.approx((iss["cycles"]["user"] + stall_cycles) / window_cycles,
                                              abs=1e-5)
    if caches["enabled"]:  # the default (platform.cpu_caches: on)
        assert caches["icache"]["size"] == 32768 and caches["dcache"]["ways"] == 2, caches
        assert 0 < caches["icache"]["misses"] < caches["icache"]["accesses"], caches
        assert 0 < caches["dcache"]["read_misses"] < caches["dcache"]["reads"], caches
        assert 0 < caches["miss_stall_s"] < r["measured_s"], caches


@boots
def test_transmit_through_linux_is_measured_from_the_iss_and_its_snapshot_repeats_it(tmp_path):
    p, out = run(tmp_path, *SHORT)
    assert p.returncode == 0, p.stderr
    booted = snapshot(out)
    assert booted["saved"] and not booted["restored"], booted
    assert "host      tcp_tx       8000" in p.stdout, p.stdout
    r = results(out)
    assert r["cpu_model"] == "iss" and r["measured_s"] == pytest.approx(0.030)
    v = r["vms"][0]
    # The peer's sink received it (with the default caches the core is memory-bound: hundreds of
    # Mbit/s, docs/performance.md; without, it sends near the line rate).
    assert v["tx_mbps"] > 100, v
    assert r["peer"]["pattern_errors"] == 0 and r["peer"]["bytes_received"] > 100_000, r["peer"]
    check_cpu(r)
    iss = r["iss"]
    assert iss["command"] == "toe_stream 10.0.0.2 5001 0 8000"
    # One 8000-byte send() posts one command; the software's whole cost per command (copy by
    # programmed I/O included) is thousands of instructions, not tens nor millions.
    assert iss["toe_commands"] > 100 and 1_000 < iss["per_toe_command"]["instructions"] < 100_000
    assert iss["toe_interrupts"] > 0 and iss["irq_entries"] >= iss["toe_interrupts"]
    # An interrupt's handling, entry to return (the vector, the GIC, the driver, the softirqs):
    # hundreds to thousands of instructions; every IRQ taken is handled (one may straddle an end).
    per_irq = iss["per_interrupt"]
    assert abs(per_irq["interrupts_handled"] - iss["irq_entries"]) <= 1, per_irq
    assert 200 < per_irq["instructions"] < 20_000 and per_irq["cycles"] >= per_irq["instructions"]
    console = (out / "console.log").read_text()
    assert "VTOE-INSMOD vtoe_toe.ko ok" in console and "VTOE-READY" in console
    assert "VTOE-WORKLOAD-START" in console and iss["command"] in console  # typed, echoed
    # From the booted snapshot: the same results and console, byte for byte, in a fraction of
    # the time (the boot retires 3.3e9 instructions; the restore replays the devices' inputs).
    again, out2 = run(tmp_path, *SHORT, name="again")
    assert again.returncode == 0, again.stderr
    restored = snapshot(out2)
    assert restored["restored"] and restored["path"] == booted["path"], restored
    assert restored["wall_s"] < booted["wall_s"] / 5, (restored, booted)
    assert (out2 / "results.json").read_bytes() == (out / "results.json").read_bytes()
    assert (out2 / "console.log").read_bytes() == (out / "console.log").read_bytes()


@boots
def test_receive_and_rpc_run_as_linux_programs_from_one_boot(tmp_path):
    # Caches off here (the transmit test has them on): the same programs, a boot 40 % cheaper,
    # and one boot for both workloads (the snapshot's key leaves the workload out).
    p, out = run(tmp_path, *SHORT, "platform.cpu_caches=off", "vms.0.workload.type=tcp_rx",
                 name="rx")
    assert p.returncode == 0, p.stderr
    assert snapshot(out)["saved"], snapshot(out)
    r = results(out)
    assert r["vms"][0]["rx_mbps"] > 100 and r["vms"][0]["tx_mbps"] == 0, r["vms"][0]
    assert r["iss"]["command"] == "toe_sink 5001 0 8000"
    check_cpu(r)
    p, out = run(tmp_path, *SHORT, "platform.cpu_caches=off", "vms.0.workload.type=rpc",
                 "vms.0.workload.message_size=100", name="rpc")
    assert p.returncode == 0, p.stderr
    assert snapshot(out)["restored"], snapshot(out)
    r = results(out)
    assert r["vms"][0]["transactions"] > 100, r["vms"][0]
    assert r["iss"]["command"] == "toe_rpc 10.0.0.2 5001 100 64 0"
    check_cpu(r)


@boots
def test_a_module_that_does_not_load_ends_the_run_with_the_console(tmp_path):
    broken = tmp_path / "vtoe_toe.ko"
    broken.write_bytes(b"not an ELF module")
    initrd = tmp_path / "initrd.cpio"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_initramfs.py"), "--busybox",
                    str(BUSYBOX), "--module", str(broken), "--command-line-run", "--out",
                    str(initrd)], check=True)
    p, out = run(tmp_path, *SHORT, "platform.cpu_caches=off", f"platform.iss.initramfs={initrd}")
    assert p.returncode == 1, p.stderr
    assert "the workload did not start" in p.stderr, p.stderr
    assert "VTOE-INSMOD vtoe_toe.ko failed" in p.stderr, p.stderr
    assert not (out / "results.json").exists()


@pytest.mark.parametrize("sets, key", [
    (("architecture=de",), "architecture"),
    (("platform.cores=2",), "platform.cores"),
    (("vms.0.workload.type=echo",), "vms.0.workload.type"),
    (("vms.0.workload.processes=2",), "vms.0.workload.processes"),
    (("platform.iss.kernel=/nonexistent/zImage",), "platform.iss.kernel"),
    (("stats_interval=1ms",), "stats_interval"),
])
def test_what_the_iss_model_does_not_run_is_refused_naming_the_key(tmp_path, sets, key):
    p, _ = run(tmp_path, "platform.cpu_model=iss", *sets)
    assert p.returncode == 2, p.stderr
    assert f"--set {key}:" in p.stderr, p.stderr
    assert "platform.cpu_model=iss" in p.stderr, p.stderr
