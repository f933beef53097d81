"""Decoder coverage: every instruction in Debian's static armhf C library, libm and libgcc
(objdump's disassembly of libc.a, libm.a, libgcc.a, A32 and T32) must decode, except the
instruction sets this core does not have (Advanced SIMD, iWMMXt: glibc selects them only when
AT_HWCAP announces them) and the permanently undefined UDF."""
import os
import re
import shutil
import subprocess

import pytest

from iss_paths import CC, MISSING, ROOT, SKIP_REASON

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

# Mnemonics the ISS rejects on purpose.
ALLOWED = re.compile(r"^(v(ld|st)[1-4]|vpadd|vceq|vcgt|vcge|vtst|vand|vorr|vorn|veor|vbic|vbsl|"
                     r"vdup|vext|vrev|vzip|vuzp|vtrn|vpmax|vpmin|vqadd|vqsub|vshr|vshl|vsri|"
                     r"vsli|vmovl|vmovn|vmax|vmin|vabd|vcnt|vclz|vtbl|vswp|"
                     r"ldfp|stfp|wldr|wstr|tmcr|tmrc|udf)")
LINE = re.compile(r"^\s*[0-9a-f]+:\t([0-9a-f]{8}|[0-9a-f]{4}(?: [0-9a-f]{4})?) *\t(\S+)")


def tool():
    preset = os.environ.get("VTOE_PRESET", "release")
    path = ROOT / "build" / preset / "tests" / "unit" / "cpu" / "iss_decode_check"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return path


def test_c_library_decodes():
    objdump = shutil.which("arm-linux-gnueabihf-objdump")
    assert objdump, "arm-linux-gnueabihf-objdump comes with the cross compiler"
    lines = []
    for lib in ("libc.a", "libm.a", "libgcc.a"):
        path = subprocess.run([CC, f"-print-file-name={lib}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dis = subprocess.run([objdump, "-d", path], capture_output=True, text=True).stdout
        for line in dis.splitlines():
            m = LINE.match(line)
            if not m or m.group(2).startswith("."):  # .word/.short: data in code
                continue
            enc, text = m.group(1).split(), line.split("\t", 2)[-1].strip()
            if len(enc) == 1 and len(enc[0]) == 8:
                lines.append(f"A {enc[0]} {text}")
            else:
                lines.append(f"T {enc[0]} {enc[1] if len(enc) > 1 else '0'} {text}")
    assert len(lines) > 100000
    out = subprocess.run([str(tool())], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout
    rejected = [l for l in out.splitlines() if l]
    unexpected = [l for l in rejected
                  if not ALLOWED.match(l.split(" ", 3 if l.startswith("T") else 2)[-1])]
    assert not unexpected, f"{len(unexpected)} instructions do not decode:\n" + \
        "\n".join(sorted(set(unexpected))[:40])
