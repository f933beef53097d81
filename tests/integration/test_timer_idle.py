"""Timer interrupts and idling as a hypervisor sees them (issue 30 item 1): guest and host ticks,
halt polling, direct interrupts, exits per second by cause, vCPU occupancy; bad keys name the
file and key."""
import pytest

BASE = "scenarios/paper/cpu_1g_tx.yaml"
SHORT = ["duration=60ms", "warmup=20ms", "architecture=da", "guest.tick=250Hz",
         "guest.tick_phase=1.3ms", "hypervisor.scheduler.tick=4ms",
         "hypervisor.scheduler.timeslice=32ms"]


def test_a_dedicated_core_with_direct_interrupts_takes_no_exit(vtoe, tmp_path):
    res, _ = vtoe.scenario(BASE, *SHORT, "hypervisor.trap_wfi=false", "hypervisor.direct_irq=true",
                           "hypervisor.direct_timer=true", "hypervisor.tickless=true")
    vm = res["vms"][0]
    assert vm["exits_per_s"]["total"] == 0, vm["exits_per_s"]
    assert vm["tx_mbps"] > 900
    # The host sees the vCPU on the core all the time; the guest itself is mostly idle.
    assert vm["cpu"]["vcpu_occupancy"] == 1.0
    assert vm["cpu"]["guest_kernel"] + vm["cpu"]["guest_user"] < 0.5
    assert res["stats"]["vm0.tick"]["ticks"] == 10  # 40 ms at 250 Hz


def test_halt_polling_burns_host_time_and_catches_the_next_interrupt(vtoe, tmp_path):
    runs = {poll: vtoe.scenario(BASE, *SHORT, f"hypervisor.halt_poll={poll}",
                                out=tmp_path / poll)[0] for poll in ("0s", "200us")}
    off, on = runs["0s"]["vms"][0], runs["200us"]["vms"][0]
    assert on["cpu"]["hypervisor"] > off["cpu"]["hypervisor"] + 0.3, (off["cpu"], on["cpu"])
    assert on["cpu"]["vcpu_occupancy"] > off["cpu"]["vcpu_occupancy"]
    assert runs["200us"]["stats"]["cpu0"]["halt_poll_hits"] > 0
    assert runs["0s"]["stats"]["cpu0"]["halt_poll_hits"] == 0


@pytest.mark.parametrize("sets,key", [
    (["architecture=da", "hypervisor.halt_poll=40ms"], "hypervisor.halt_poll"),
    (["architecture=de", "hypervisor.direct_irq=true"], "hypervisor.direct_irq"),
    (["architecture=da", "hypervisor.scheduler.tick_phase=10ms"],
     "hypervisor.scheduler.tick_phase"),
    (["architecture=da", "guest.tick=250Hz", "guest.tick_phase=5ms"], "guest.tick_phase"),
])
def test_bad_timer_keys_name_the_key(vtoe, sets, key):
    args = ["run", BASE, "--quiet", "--out", vtoe.tmp / "bad"]
    for s in sets:
        args += ["--set", s]
    proc = vtoe.run(*args, check=False)
    assert proc.returncode != 0
    assert key in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
