"""Lock-step check of the ISS against qemu-arm: the register file before every instruction.

The freestanding programs in lockstep/ (no libc: both simulators execute exactly the same
instructions from the same state) run under `qemu-arm -singlestep -d cpu,nochain` and under
`vtoe iss run --trace`; from the label lockstep_begin on, r0-r15 and the APSR flags (N Z C V Q,
GE, T) must be equal before every instruction, and for the VFP program also d0-d15 and FPSCR
(with the cumulative exception flags). The first divergence is reported with its
address, the instruction and both register files. Skipped, with the reason, without the cross
compiler or qemu-arm (see iss_paths.py)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from iss_paths import HERE, MISSING, QEMU, SKIP_REASON, corpus, vtoe_binary  # noqa: F401

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

PROGRAMS = sorted(p.stem for p in (HERE / "lockstep").glob("*.c"))
VARIANTS = [f"{m}-{o}" for m in ("arm", "thumb") for o in ("O0", "O2", "Os")]
STATE = re.compile(r"R00=([0-9a-f]{8}) R01=([0-9a-f]{8}) R02=([0-9a-f]{8}) R03=([0-9a-f]{8})\s+"
                   r"R04=([0-9a-f]{8}) R05=([0-9a-f]{8}) R06=([0-9a-f]{8}) R07=([0-9a-f]{8})\s+"
                   r"R08=([0-9a-f]{8}) R09=([0-9a-f]{8}) R10=([0-9a-f]{8}) R11=([0-9a-f]{8})\s+"
                   r"R12=([0-9a-f]{8}) R13=([0-9a-f]{8}) R14=([0-9a-f]{8}) R15=([0-9a-f]{8})\s+"
                   r"PSR=([0-9a-f]{8})")
PSR_MASK = 0xF80F0020  # N Z C V Q, GE, T: what user code can see
FPSCR_MASK = 0xF7C0009F  # N Z C V, AHP, DN, FZ, rounding mode, cumulative exception flags
DREG = re.compile(r"d(\d\d)=([0-9a-f]{16})")
FPSCR = re.compile(r"FPSCR: ([0-9a-f]{8})")


def states(text, vfp=False):
    """One tuple per step: r0-r15, PSR, and with vfp d0-d15 and FPSCR."""
    if not vfp:
        return [tuple(int(g, 16) for g in m.groups()) for m in STATE.finditer(text)]
    out = []
    for block in text.split("R00=")[1:]:
        m = STATE.match("R00=" + block)
        d = [int(v, 16) for n, v in DREG.findall(block) if int(n) < 16]
        f = FPSCR.search(block)
        out.append(tuple(int(g, 16) for g in m.groups()) + tuple(d) +
                   ((int(f.group(1), 16) & FPSCR_MASK),))
    return out


def symbol(exe, name):
    nm = shutil.which("arm-linux-gnueabihf-nm") or "nm"
    out = subprocess.run([nm, str(exe)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise AssertionError(f"{exe}: no symbol {name}")


def disassemble(exe, addr):
    objdump = shutil.which("arm-linux-gnueabihf-objdump")
    if not objdump:
        return "?"
    out = subprocess.run([objdump, "-d", f"--start-address={addr}", f"--stop-address={addr + 4}",
                          str(exe)], capture_output=True, text=True).stdout
    lines = [l.strip() for l in out.splitlines() if re.match(rf"\s*{addr:x}:", l)]
    return lines[0] if lines else "?"


def regfile(s):
    regs = " ".join(f"r{i}={v:08x}" for i, v in enumerate(s[:16]))
    vfp = "".join(f" d{i}={v:016x}" for i, v in enumerate(s[17:33]))
    fpscr = f" fpscr={s[33]:08x}" if len(s) > 33 else ""
    return f"{regs} psr={s[16]:08x}{vfp}{fpscr}"


def first_divergence(ref, got):
    """Index of the first state that differs (registers, or flags under PSR_MASK), or None."""
    for i, (a, b) in enumerate(zip(ref, got)):
        if a[:16] != b[:16] or (a[16] & PSR_MASK) != (b[16] & PSR_MASK) or a[17:] != b[17:]:
            return i
    return None if len(ref) == len(got) else min(len(ref), len(got))


def test_divergence_is_found():
    a = (0,) * 15 + (0x10000, 0x10)
    b = (0,) * 15 + (0x10000, 0x40000010)
    assert first_divergence([a, a], [a, a]) is None
    assert first_divergence([a, a], [a, b]) == 1
    assert first_divergence([a, a], [a]) == 1
    assert first_divergence([a], [(0,) * 15 + (0x10000, 0x10 | 0x1c0)]) is None  # A, I, F bits


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("program", PROGRAMS)
def test_lockstep(corpus, program, variant, tmp_path):
    exe = corpus / "lockstep" / f"{program}-{variant}"
    qlog, vlog = tmp_path / "qemu.log", tmp_path / "vtoe.log"
    vfp = program.startswith("vfp")  # VFP registers too (the logs are much longer)
    ref_run = subprocess.run([QEMU, "-singlestep", "-d", "cpu,fpu,nochain" if vfp else "cpu,nochain",
                              "-D", str(qlog), str(exe)], capture_output=True, timeout=300)
    got_run = subprocess.run([str(vtoe_binary()), "iss", "run", "--trace", str(vlog),
                              "--trace-limit", "2000000", str(exe)],
                             capture_output=True, timeout=300)
    begin = symbol(exe, "lockstep_begin")
    ref, got = states(qlog.read_text(), vfp), states(vlog.read_text(), vfp)
    ref = ref[next(i for i, s in enumerate(ref) if s[15] == begin):]
    got = got[next(i for i, s in enumerate(got) if s[15] == begin):]
    i = first_divergence(ref, got)
    if i is not None:
        where = ref[i - 1] if i > 0 else ref[0]
        msg = [f"{exe.name}: first divergence before step {i} of {len(ref)} (qemu) / {len(got)} "
               f"(vtoe)",
               f"  last instruction: {disassemble(exe, where[15])}"]
        if i < len(ref):
            msg.append(f"  qemu: {regfile(ref[i])}")
        if i < len(got):
            msg.append(f"  vtoe: {regfile(got[i])}")
        else:
            msg.append(f"  vtoe stopped: {got_run.stderr.decode(errors='replace').strip()}")
        pytest.fail("\n".join(msg))
    assert got_run.returncode == ref_run.returncode
    assert len(ref) > 1000
    qlog.unlink()  # tens of MB each; kept only when the check fails
    vlog.unlink()
