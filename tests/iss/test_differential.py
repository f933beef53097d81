"""The ISS against qemu-arm: every corpus program, A32 and T32, at -O0/-O2/-Os, must print the
same (stdout and stderr) and exit with the same status under `vtoe iss run` as under qemu-arm.
Also: bad input and guest faults end with a clear error, never a simulator crash.

Needs Debian's gcc-arm-linux-gnueabihf (with libc6-dev-armhf-cross) and qemu-user, which
scripts/install-deps.sh installs; without them these tests are skipped and say why."""
import json
import subprocess

import pytest

from iss_paths import HERE, MISSING, OUT, QEMU, SKIP_REASON, corpus, vtoe_binary  # noqa: F401

PROGRAMS = sorted(p.stem for p in (HERE / "programs").glob("*.c"))
VARIANTS = [f"{m}-{o}" for m in ("arm", "thumb") for o in ("O0", "O2", "Os")]
# Arguments per program (default: two words, so argv handling is exercised too).
ARGS = {"coremark": ["30"]}

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

STDIN = b"The quick brown fox\n jumps over\tthe lazy dog.\n" * 50


def run(cmd, timeout=300):
    # A fixed environment and input: both runs must see the same argv, envp and stdin.
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env=env, cwd=OUT,
                          input=STDIN)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("program", PROGRAMS)
def test_same_as_qemu(corpus, program, variant):
    exe = f"./{program}-{variant}"
    args = ARGS.get(program, ["alpha", "beta gamma"])
    ref = run([QEMU, "-cpu", "cortex-a15", exe, *args])
    got = run([str(vtoe_binary()), "iss", "run", exe, *args])
    assert got.stderr.decode(errors="replace") == ref.stderr.decode(errors="replace")
    assert got.stdout.decode(errors="replace") == ref.stdout.decode(errors="replace")
    assert got.returncode == ref.returncode


def test_stats_json(corpus, tmp_path):
    stats = tmp_path / "stats.json"
    got = run([str(vtoe_binary()), "iss", "run", "--stats", str(stats), "./crc-thumb-O2"])
    data = json.loads(stats.read_text())
    assert data["exit_status"] == got.returncode
    assert data["instructions"] == sum(data["by_class"].values()) > 100000
    assert data["by_class"]["load"] > 0 and data["by_class"]["branch"] > 0
    assert 0 < data["decoded"] < data["instructions"]
    assert data["mips"] > 0


def fails_with(args, status, *texts):
    got = run([str(vtoe_binary()), "iss", "run", *map(str, args)])
    err = got.stderr.decode()
    assert got.returncode == status, err
    for t in texts:
        assert t in err, err
    assert "Traceback" not in err and "terminate called" not in err
    return err


def test_guest_faults(corpus):
    f = corpus / "faults"
    fails_with([f / "jump_unmapped"], 139, "instruction fetch from unmapped address 0x12345678")
    fails_with([f / "load_unmapped"], 139, "read from unmapped address 0x0badc0de")
    fails_with([f / "undefined"], 132, "undefined instruction at 0x", "A32 encoding 0xe7f123f4")
    fails_with([f / "unknown_syscall"], 159, "unknown system call 9999")
    fails_with([f / "unaligned"], 135, "bus error: alignment fault: address 0x")
    ref = run([QEMU, "-cpu", "cortex-a15", str(f / "unaligned")])
    assert ref.returncode in (-7, 135), "qemu-arm takes SIGBUS too (the shell shows 135)"


def test_bad_programs(corpus, tmp_path):
    fails_with([corpus / "faults" / "dynamic"], 1, "dynamically linked")
    fails_with([HERE / "Makefile"], 1, "not an ELF file")
    fails_with([tmp_path / "missing"], 1, "cannot open")
    data = (corpus / "crc-arm-O2").read_bytes()
    (tmp_path / "truncated").write_bytes(data[:100])
    fails_with([tmp_path / "truncated"], 1, "truncated")
    (tmp_path / "header").write_bytes(data[:30])
    fails_with([tmp_path / "header"], 1, "truncated ELF header")
    x86 = bytearray(data)
    x86[18:20] = (3).to_bytes(2, "little")  # e_machine = EM_386
    (tmp_path / "x86").write_bytes(bytes(x86))
    fails_with([tmp_path / "x86"], 1, "not an ARM ELF")
    elf64 = bytearray(data)
    elf64[4] = 2
    (tmp_path / "elf64").write_bytes(bytes(elf64))
    fails_with([tmp_path / "elf64"], 1, "not a 32-bit ELF")


def test_kuser_helpers(corpus):
    """ARMv5 code reaches the kernel user helpers page (cmpxchg, cmpxchg64, barrier, version)."""
    exe = "./extra/atomics_v5"
    ref = run([QEMU, "-cpu", "cortex-a15", exe])
    got = run([str(vtoe_binary()), "iss", "run", exe])
    assert got.stdout == ref.stdout and got.stdout.startswith(b"300 7 0 85899345920 -1 -5000")
    assert got.returncode == ref.returncode == 7
