"""scripts/iss_calibration.py reads ISS runs and turns their profiles into the cost table's
fields: checked on made-up runs whose answers are known (a copy of 0.25 cycles per byte over a
fixed 100, 900 cycles of system call per call, 20 cycles of stall per register access)."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import iss_calibration  # noqa: E402


def fake_run(d, size, copy_fn):
    """A window of 1e6 instructions at 1.25 cycles each and 100 commands: the copy function
    takes (100 + 0.25 * size) cycles per command, the syscall path 900 cycles per call."""
    insns, cpi, commands = 1_000_000, 1.25, 100
    copy_share = (100 + 0.25 * size) * commands / cpi / insns
    syscall_share = 900 * commands / cpi / insns
    profile = [{"image": "kernel", "symbol": copy_fn, "samples": 1, "share": copy_share},
               {"image": "kernel", "symbol": "vfs_write", "samples": 1, "share": syscall_share / 2},
               {"image": "kernel", "symbol": "vector_swi", "samples": 1, "share": syscall_share / 2},
               {"image": "kernel", "symbol": "memset", "samples": 1,
                "share": 1 - copy_share - syscall_share}]
    r = {"vms": [{"message_size": size}],
         "iss": {"instructions": {"user": 0, "kernel": insns},
                 "cycles": {"user": 5000, "kernel": int(insns * cpi) - 5000},
                 "toe_commands": commands, "toe_completions": commands, "toe_interrupts": 50,
                 "toe_register_accesses": 400, "device_stall_cycles": 8000,
                 "profile": {"by_symbol": profile}}}
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps(r))


def test_fields_come_out_of_the_profiles(tmp_path):
    for name in iss_calibration.RUNS:
        size = 1000 if name.endswith("1000") else 2000
        fake_run(tmp_path / name, size, "arm_copy_to_user" if name.startswith("rx")
                 else "arm_copy_from_user")
    measured, covered = iss_calibration.measure(tmp_path)
    assert abs(measured["copy_per_byte"]["measured_cycles"] - 0.25) < 1e-9
    assert abs(measured["copy_per_byte_rx"]["measured_cycles"] - 0.25) < 1e-9
    assert abs(measured["copy_fixed"]["measured_cycles"] - 100) < 1e-6
    assert abs(measured["syscall"]["measured_cycles"] - 900) < 1e-6
    assert measured["doorbell"]["measured_cycles"] == 20
    assert measured["app_per_message"]["measured_cycles"] == 50
    assert measured["ecq_entry"]["measured_cycles"] is None  # inlined: in kthread_event
    assert measured["isr"]["measured_cycles"] == 0  # no interrupt function in these profiles
    assert all(0 < c < 1 for c in covered.values())
    md = iss_calibration.table(measured, {"syscall": 1000.0}, markdown=True)
    assert "| syscall | 1000 | 900 | call | 0.90 |" in md
