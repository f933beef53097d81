"""Guest IPIs: a VM of two vCPUs whose kernel wakes a process on the other vCPU sends a
reschedule IPI; the target vCPU, in guest mode, exits to take it (HaaS's DTID keeps these
exits), a blocked one is woken without one."""
import pytest

TX = "scenarios/study/haas/tx.yaml"
SHORT = ["duration=40ms", "warmup=10ms", "architecture=da", "hypervisor.direct_irq=true"]
TWO = ["platform.cores=2", "vms.0.vcpus=2", "vms.0.pin=0,1", "vms.0.workload.processes=2"]


def test_a_wake_up_on_the_other_vcpu_is_an_ipi_exit_there(vtoe):
    res, _ = vtoe.scenario(TX, *SHORT, *TWO, "hypervisor.trap_wfi=false")
    vm = res["vms"][0]
    assert vm["error"] == ""
    sent = res["stats"]["hypervisor"]["guest_sgis"]
    assert sent > 0
    # Idle in guest mode (WFI not trapped): every IPI is an exit of the target vCPU.
    assert vm["exits_per_s"]["irq_ipi"] * res["measured_s"] == pytest.approx(sent, abs=1)


def test_a_blocked_vcpu_takes_its_ipi_without_an_exit(vtoe):
    res, _ = vtoe.scenario(TX, *SHORT, *TWO)  # WFI trapped: the idle vCPU has exited already
    assert res["stats"]["hypervisor"]["guest_sgis"] > 0
    assert res["vms"][0]["exits_per_s"]["irq_ipi"] == 0


def test_one_vcpu_sends_no_ipis(vtoe):
    res, _ = vtoe.scenario(TX, *SHORT, "hypervisor.trap_wfi=false")
    assert "guest_sgis" not in res["stats"]["hypervisor"]
    assert res["vms"][0]["exits_per_s"]["irq_ipi"] == 0
