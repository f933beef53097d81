"""Lock-step check of the system platform against qemu-system-arm 7.2 (issue 43, item 1, first
step): each bare-metal program of tests/system/target runs under `qemu-system-arm -singlestep
-d cpu,nochain,int` and under `vtoe system run --trace`, and r0-r15 and the whole CPSR (mode,
masks, flags, T, IT) must be equal before every instruction, through every synchronous
exception (SVC, undefined, aborts, HVC, traps to Hyp mode) and every mode change. An
asynchronous interrupt is taken at a time that depends on each simulator's timing, so the
comparison ends at QEMU's first IRQ or FIQ entry (`Taking exception 5 [IRQ]` in its log). The
first divergence is reported with the step, the instruction's address and mode and both
register files. Skipped, with the reason, without the cross compiler or qemu-system-arm.

Not compared yet (the issue's full harness): the banked registers, SPSRs and CP15 registers
that software can read."""
import subprocess

import pytest

from system_paths import (MISSING, QEMU, QEMU_ARGS, SKIP_REASON, qemu_machine, target_dir,
                          vtoe_binary)
from lockstep import MODES, describe, states
from test_bare_metal import PROGRAMS

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

# Programs whose registers legitimately differ: what they read depends on each simulator's time.
TIMING = {
    "cntvoff": "reads the generic timer's count (CNTVCT/CNTPCT), each simulator's own time",
}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=TIMING[n], strict=True)) if n in TIMING else n
    for n in sorted(PROGRAMS)])
def test_registers_equal_qemu_before_every_instruction(tmp_path, name):
    hyp = PROGRAMS[name]
    program = target_dir() / f"{name}.elf"
    if not program.exists():
        pytest.fail(f"{program} is missing: build first (make build builds tests/system/target)")
    log = tmp_path / "qemu.log"
    subprocess.run([QEMU, *qemu_machine(hyp), *QEMU_ARGS, "-kernel", str(program), "-singlestep",
                    "-d", "cpu,nochain,int", "-D", str(log)],
                   capture_output=True, text=True, timeout=120, check=True)
    trace = tmp_path / "vtoe.trace"
    cmd = [str(vtoe_binary()), "system", "run", "--kernel", str(program), "--trace", str(trace),
           "--max-instructions", "2000000", "--trace-limit", "2000000"]
    if hyp:
        cmd.append("--virtualization")
    subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    want = states(log.read_text(errors="replace"))
    got = states(trace.read_text())
    assert want, f"no state in QEMU's log {log}"
    for step, (q, v) in enumerate(zip(want, got)):
        if q != v:
            pytest.fail(f"{name}: divergence before step {step}, the instruction at "
                        f"0x{q[15]:08x} in {MODES.get(q[16] & 0x1f, '?')} mode "
                        f"(previous: 0x{want[step - 1][15]:08x})\n  qemu {describe(q)}\n"
                        f"  vtoe {describe(v)}")
    # vtoe ran at least as far as QEMU's comparable part (it may go on past QEMU's first IRQ).
    assert len(got) >= len(want), f"{name}: vtoe traced {len(got)} steps, QEMU {len(want)}"
