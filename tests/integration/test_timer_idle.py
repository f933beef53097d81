"""Timer interrupts and idling as a hypervisor sees them (issue 30 item 1): guest and host ticks,
halt polling, direct interrupts, exits per second by cause, vCPU occupancy; bad keys name the
file and key."""
import csv

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


def test_the_time_series_has_guest_tick_exits_beside_host_tick_exits(vtoe):
    """Issue 30 item 4: vm_exits.vtimer_count per interval; under OPTI (WFI not trapped) the
    guest's 250 Hz tick exits at its rate, beside the host's 250 Hz."""
    res, out = vtoe.scenario("scenarios/study/haas/tx.yaml", "architecture=da",
                             "hypervisor.trap_wfi=false", "duration=50ms", "warmup=10ms",
                             "stats_interval=10ms")
    rows = list(csv.DictReader(open(out / "timeseries.csv")))
    name = res["vms"][0]["name"]
    vtimer = sum(float(r[f"vm.{name}.vm_exits.vtimer_count"]) for r in rows)
    timer = sum(float(r[f"vm.{name}.vm_exits.timer_count"]) for r in rows)
    # 50 ms of rows at 250 Hz each: about 12 of each (the rows cover the warm-up too).
    assert 10 <= vtimer <= 14 and 10 <= timer <= 14, (vtimer, timer)
