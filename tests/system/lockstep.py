"""The lockstep comparison shared by tests/system: QEMU's `-d cpu,nochain` log and
`vtoe system run --trace` print the same layout (r0-r15 and the CPSR before each instruction);
`states` reads either, `first_divergence` compares two of them."""
import re

STATE = re.compile(r"R00=([0-9a-f]{8}) R01=([0-9a-f]{8}) R02=([0-9a-f]{8}) R03=([0-9a-f]{8})\s+"
                   r"R04=([0-9a-f]{8}) R05=([0-9a-f]{8}) R06=([0-9a-f]{8}) R07=([0-9a-f]{8})\s+"
                   r"R08=([0-9a-f]{8}) R09=([0-9a-f]{8}) R10=([0-9a-f]{8}) R11=([0-9a-f]{8})\s+"
                   r"R12=([0-9a-f]{8}) R13=([0-9a-f]{8}) R14=([0-9a-f]{8}) R15=([0-9a-f]{8})\s+"
                   r"PSR=([0-9a-f]{8})")
ASYNC = re.compile(r"Taking exception (5|6) \[(IRQ|FIQ)\]|Taking exception \d+ \[Virtual (IRQ|FIQ)")
MODES = {0x10: "usr", 0x11: "fiq", 0x12: "irq", 0x13: "svc", 0x16: "mon", 0x17: "abt",
         0x1a: "hyp", 0x1b: "und", 0x1f: "sys"}


def states(text):
    """r0-r15 and the CPSR before each instruction, up to the first asynchronous interrupt."""
    cut = ASYNC.search(text)
    return [tuple(int(g, 16) for g in m.groups()) for m in STATE.finditer(text[:cut.start()]
                                                                           if cut else text)]


def mode(state):
    return MODES.get(state[16] & 0x1f, "?")


def describe(state):
    regs = " ".join(f"r{i}={v:08x}" for i, v in enumerate(state[:16]))
    return f"{regs} cpsr={state[16]:08x} ({mode(state)})"


def first_divergence(want, got):
    """The first step whose states differ, or None; a shorter `got` is not a divergence here."""
    for step, (q, v) in enumerate(zip(want, got)):
        if q != v:
            return step
    return None


def side_by_side(want, got, step):
    """The divergence as the tests print it: the instruction before it, both states."""
    q, v = want[step], got[step]
    prev = want[step - 1] if step else None
    where = (f"after the instruction at 0x{prev[15]:08x} in {mode(prev)} mode"
             if prev else "at the start")
    diff = [f"r{i}" if i < 16 else "cpsr" for i in range(17) if q[i] != v[i]]
    return (f"divergence before step {step}, {where} (differs: {', '.join(diff)})\n"
            f"  qemu {describe(q)}\n  vtoe {describe(v)}")
