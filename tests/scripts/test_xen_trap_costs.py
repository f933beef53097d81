"""scripts/xen_trap_costs.py turns a Xen boot's hyp_handling (`vtoe system run --stats`) into
cycles per trap at the ISS mode's stated CPI, beside the hypervisor model's constants: checked
on made-up stats whose answers are known, and with the real program's key defaults."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import xen_trap_costs  # noqa: E402

DEFAULTS = {"platform.iss.cpi.alu": "1", "platform.iss.cpi.system": "8",
            "platform.iss.cpi.load": "1", "platform.cpu_freq": "2GHz",
            "hypervisor.costs.exit": "1000", "hypervisor.costs.data_abort": "2500",
            "hypervisor.costs.irq": "3300", "hypervisor.costs.vgic_inject": "1500"}


def test_cycles_per_trap_follow_the_classes_and_the_model_adds_exit_to_its_own():
    stats = {"hyp_handling": {
        # 10 data aborts: 1000 ALU and 100 system instructions each -> 1800 cycles per trap.
        "0x24": {"handled": 10, "instructions": 11000,
                 "by_class": {"alu": 10000, "system": 1000}},
        # 4 interrupts: 2000 loads each.
        "irq": {"handled": 4, "instructions": 8000, "by_class": {"load": 8000}},
        "0x12": {"handled": 0, "instructions": 0, "by_class": {}}}}
    rows, freq = xen_trap_costs.costs(stats, DEFAULTS)
    assert freq == "2GHz"
    by = {r["cause"]: r for r in rows}
    assert set(by) == {"0x24", "irq"}  # a cause never handled is left out
    assert by["0x24"]["cycles"] == 1800 and by["0x24"]["instructions"] == 1100
    assert by["0x24"]["us"] == pytest.approx(0.9)
    assert by["0x24"]["model_cycles"] == 3500  # exit + data_abort
    assert by["irq"]["cycles"] == 2000 and by["irq"]["model_cycles"] == 5800
    assert rows[0]["cause"] == "0x24"  # the largest total first


def test_a_class_without_a_cpi_is_an_error():
    stats = {"hyp_handling": {"0x24": {"handled": 1, "instructions": 1,
                                       "by_class": {"vfp": 1}}}}
    with pytest.raises(SystemExit, match="no platform.iss.cpi"):
        xen_trap_costs.costs(stats, DEFAULTS)


def test_the_program_prints_the_table_from_a_stats_file(tmp_path, vtoe_bin):
    stats = tmp_path / "s.json"
    stats.write_text(json.dumps({"hyp_handling": {
        "0x24": {"handled": 2, "instructions": 2000, "by_class": {"alu": 2000}}}}))
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "xen_trap_costs.py"),
                        "--vtoe", str(vtoe_bin), "--from", str(stats), "--markdown"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # 1000 ALU cycles per trap at the program's own defaults (alu 1; exit 1000 + data_abort 2500).
    row = ("| 0x24 | stage-2 data abort (MMIO emulated) | 2 | 1000 | 1000 (0.50) | "
           "exit + data_abort | 3500 | 0.29 |")
    assert row in p.stdout, p.stdout
