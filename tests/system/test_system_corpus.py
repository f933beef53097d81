"""The generated system-mode corpus (issue 43, item 2; scripts/gen_system_corpus.py) in lockstep
with qemu-system-arm 7.2: each program runs under `qemu-system-arm -singlestep -d cpu,nochain,int`
and `vtoe system run --trace`, and r0-r15 and the CPSR must be equal before every instruction.
The programs read every banked register, SPSR and readable CP15 register into general registers
before each case and in each exception handler, so those are compared too.

`make test` runs a fixed sample (every family once and `regress` in its four variants, `SAMPLE`;
under the sanitizers `regress` only); VTOE_SYSTEM_CORPUS=all runs all of them
(`make system-corpus`), VTOE_SYSTEM_CORPUS=NAME,NAME... the ones named. A divergence names the program, the case (its comment in the
generated source) and both states; the program's source, both logs and the ELF stay in the test's
temporary directory. Skipped without the cross compiler or qemu-system-arm."""
import os
import re
import subprocess
import sys

import pytest

from lockstep import first_divergence, side_by_side, states
from system_paths import MISSING, QEMU, QEMU_ARGS, ROOT, SKIP_REASON, qemu_machine, vtoe_binary

sys.path.insert(0, str(ROOT / "scripts"))
import gen_system_corpus  # noqa: E402

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

# One program per family, instruction sets and start modes taken in turn, and the divergences
# fixed in all four variants.
SAMPLE = ["srs-a32-hyp", "rfe-t32-svc", "cps-a32-svc", "mrsmsr-t32-hyp", "banked-a32-hyp",
          "eret-a32-hyp", "ldmuser-a32-svc", "ldrt-t32-hyp", "exc-a32-svc", "exc-t32-hyp",
          "hints-t32-hyp", "excl-a32-svc", "cp15-a32-hyp", "vfp-t32-svc", "random-a32-hyp",
          "regress-a32-svc", "regress-a32-hyp", "regress-t32-svc", "regress-t32-hyp"]
SANITIZED_SAMPLE = [n for n in SAMPLE if n.startswith("regress-")]
# Programs whose difference from QEMU is QEMU's, with the reason (none today).
KNOWN = {}
MAX_INSTRUCTIONS = 5_000_000


def selected():
    which = os.environ.get("VTOE_SYSTEM_CORPUS", "sample")
    if which == "all":
        return gen_system_corpus.names()
    if which == "sample":
        return SAMPLE if os.environ.get("VTOE_PRESET", "release") == "release" else SANITIZED_SAMPLE
    return which.split(",")


def where(source: str, elf, want, step: int) -> str:
    """The case being run before `step` (the last `case_N` label the trace passed) and the label
    nearest below the instruction (the case's body, the harness's register dump, a handler)."""
    nm = subprocess.run(["arm-linux-gnueabihf-nm", "-n", str(elf)], capture_output=True,
                        text=True, check=True).stdout
    labels = [(int(a, 16), sym) for a, _, sym in (line.split() for line in nm.splitlines())
              if sym.startswith(("case_", "body_", "dump", "vectors", "hyp_vectors", "pl1_",
                                 "hyp_", "exit_"))]
    cases = {a: int(sym[5:]) for a, sym in labels if re.fullmatch(r"case_\d+", sym)}
    case = next((cases[s[15]] for s in reversed(want[:step]) if s[15] in cases), None)
    pc = want[step - 1][15] if step else 0
    near = max(((a, sym) for a, sym in labels if a <= pc), default=(0, "?"))[1]
    m = re.search(rf"^@ case {case}: (.*)$", source, re.M)
    return f"case {case} ({m.group(1) if m else '?'}), in {near}"


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN[n], strict=True)) if n in KNOWN else n
    for n in selected()])
def test_corpus_program_in_lockstep_with_qemu(tmp_path, name):
    elf = gen_system_corpus.build(tmp_path, name, ROOT)
    hyp = name.endswith("-hyp")
    log = tmp_path / "qemu.log"
    subprocess.run([QEMU, *qemu_machine(hyp), *QEMU_ARGS, "-kernel", str(elf), "-singlestep",
                    "-d", "cpu,nochain,int", "-D", str(log)],
                   capture_output=True, text=True, timeout=120, check=True)
    trace = tmp_path / "vtoe.trace"
    cmd = [str(vtoe_binary()), "system", "run", "--kernel", str(elf), "--trace", str(trace),
           "--trace-limit", str(MAX_INSTRUCTIONS), "--max-instructions", str(MAX_INSTRUCTIONS)]
    if hyp:
        cmd.append("--virtualization")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    want = states(log.read_text(errors="replace"))
    got = states(trace.read_text())
    assert len(want) > 1000, f"{name}: QEMU's log {log} has {len(want)} steps"
    step = first_divergence(want, got)
    if step is not None:
        source = (tmp_path / f"{name}.S").read_text()
        pytest.fail(f"{name}: {where(source, elf, want, step)}: "
                    f"{side_by_side(want, got, step)}\n  (logs in {tmp_path})")
    assert len(got) == len(want), (f"{name}: vtoe traced {len(got)} steps, QEMU {len(want)} "
                                   f"(vtoe: {run.stderr.strip()[-600:]})")
    assert run.returncode == 0, run.stderr[-2000:]
