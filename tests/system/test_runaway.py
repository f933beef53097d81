"""Runaway bounds of the system platform (issue 43, item 5): `--max-instructions N` takes only
positive counts and ends the run after exactly N instructions and exception entries together
(status 4), and an exception storm with no progress ends quickly with status 4 naming the vector,
the mode and the faulting instruction. The guest is tests/system/target/exception_loop.c: VBAR at
a vector table of UDF instructions, then a UDF (it runs for ever on qemu-system-arm too)."""
import json
import subprocess

import pytest

from system_paths import MISSING, SKIP_REASON, target_dir, vtoe_binary

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


def program():
    path = target_dir() / "exception_loop.elf"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build builds tests/system/target)")
    return path


def symbol(name):
    out = subprocess.run(["arm-linux-gnueabihf-nm", str(program())], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts[-1] == name:
            return int(parts[0], 16)
    raise AssertionError(f"{name} not in {program()}")


def run(tmp_path, *args, timeout=60):
    stats = tmp_path / "stats.json"
    proc = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(program()),
                           "--stats", str(stats), *args],
                          capture_output=True, text=True, timeout=timeout)
    return proc, (json.loads(stats.read_text()) if stats.exists() else None)


@pytest.mark.parametrize("bound", [1, 2, 12345, 15000])
def test_the_bound_is_exact_and_counts_exception_entries(tmp_path, bound):
    proc, stats = run(tmp_path, "--max-instructions", str(bound))
    assert proc.returncode == 4, proc.stderr
    assert stats["stop"] == "max-instructions"
    assert stats["instructions"] + stats["exception_entries"] == bound, stats
    assert f"(--max-instructions {bound})" in proc.stderr
    if stats["exception_entries"]:  # stopped inside the loop: it says which exception
        assert "the last exception: undefined from the instruction at" in proc.stderr


def test_an_exception_storm_ends_quickly_naming_vector_mode_and_instruction(tmp_path):
    proc, stats = run(tmp_path, timeout=20)
    assert proc.returncode == 4, proc.stderr
    assert stats["stop"] == "exception-loop"
    und_vector = symbol("udf_vectors") + 4
    assert "exception loop with no progress" in proc.stderr
    assert (f"undefined from the instruction at 0x{und_vector:08x} (A32 0xe7f000f0, und mode) "
            f"to the vector at 0x{und_vector:08x} (und mode)") in proc.stderr, proc.stderr
    # Detected after a bounded number of entries, long before any time-out.
    assert stats["exception_entries"] <= 20000, stats


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_the_bound_must_be_a_positive_count(tmp_path, bad):
    proc = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(program()),
                           "--max-instructions", bad], capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and proc.returncode != 4, proc.stderr
    assert "--max-instructions" in proc.stderr, proc.stderr
    assert proc.stdout == ""
