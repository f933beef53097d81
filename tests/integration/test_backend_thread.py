"""Device emulation with a back-end thread on a core of its own (hypervisor.backend_thread, the
HaaS study's vhost3): the exit only queues the kick, the back end's core does the emulation, and
its injections reach the vCPU on the other core through an IPI exit there."""
RX = "scenarios/study/haas/rx.yaml"
SHORT = ["duration=40ms", "warmup=10ms", "toe.bandwidth=3.5Gbps", "architecture=de"]
THIRD_CORE = ["platform.cores=2", "vms.0.pin=0", "platform.irq_core=1"]


def test_a_backend_core_takes_the_emulation_off_the_vcpus_core(vtoe):
    inline, _ = vtoe.scenario(RX, *SHORT, *THIRD_CORE)
    backend, _ = vtoe.scenario(RX, *SHORT, *THIRD_CORE, "hypervisor.backend_thread=true")
    vm_in, vm_be = inline["vms"][0], backend["vms"][0]
    assert vm_in["error"] == "" and vm_be["error"] == ""
    stats = backend["stats"]["vtoe_manager"]
    assert stats["backend_kicks"] > 0 and stats["backend_passes"] > 0
    assert "backend_kicks" not in inline["stats"]["vtoe_manager"] or \
        inline["stats"]["vtoe_manager"]["backend_kicks"] == 0
    # The doorbells' emulation moves to core 1 (busier), the VM on core 0 receives more
    # (the interrupt's half of it is on core 1 in both runs, platform.irq_core).
    assert vm_be["rx_mbps"] > 1.01 * vm_in["rx_mbps"]
    assert backend["cores"]["busy_per_core"][1] > 1.2 * inline["cores"]["busy_per_core"][1]
    # Injections from core 1 into the vCPU running on core 0 are IPI exits there; the device's
    # interrupt itself never reaches core 0.
    assert vm_be["exits_per_s"]["irq_ipi"] > 0 and vm_be["exits_per_s"]["irq_device"] == 0


def test_a_backend_thread_needs_device_emulation(vtoe):
    proc = vtoe.run("run", RX, "--quiet", "--out", vtoe.tmp / "bad", "--set", "architecture=da",
                    "--set", "hypervisor.backend_thread=true", check=False)
    assert proc.returncode != 0
    assert "hypervisor.backend_thread" in proc.stderr and "de" in proc.stderr, proc.stderr
