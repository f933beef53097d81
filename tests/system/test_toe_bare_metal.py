"""The TOE on the system platform, driven by ARM code on the ISS (vtoe only: QEMU's virt machine
has no TOE). tests/system/target/toe_send.c programs channel 0's rings through the generated
contract header, connects to the built-in scenario's peer, sends 6 contexts of 8000 bytes of the
stream pattern and closes, taking the completions by interrupt (SPI 112). The peer's sink checks
every byte; the TOE's DMA went through the SystemMMU and the interconnect to the ISS's RAM."""
import json
import subprocess

import pytest

from system_paths import target_dir, vtoe_binary

SENDS, SEND_BYTES = 6, 8000


def test_arm_code_drives_the_toe_to_the_peer(tmp_path):
    program = target_dir() / "toe_send.elf"
    if not program.exists():
        pytest.skip(f"{program} is missing (no ARM cross compiler)")
    stats = tmp_path / "stats.json"
    run = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(program),
                          "--max-instructions", "20000000", "--stats", str(stats)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = dict(line.split("=", 1) for line in run.stdout.splitlines() if "=" in line)
    assert int(lines["toe channels"], 16) == 8
    assert int(lines["connected"], 16) == 1
    assert int(lines["send done"], 16) == SENDS
    assert int(lines["sent bytes"], 16) == SENDS * SEND_BYTES
    assert int(lines["closed"], 16) == 1
    assert int(lines["peer closed"], 16) == 1
    assert int(lines["errors"], 16) == 0
    assert int(lines["channel status"], 16) == 0
    assert int(lines["interrupts taken"], 16) == 1
    s = json.loads(stats.read_text())
    toe = s["toe"]
    assert toe["tx_bytes"] == SENDS * SEND_BYTES
    assert toe["peer_bytes_received"] == SENDS * SEND_BYTES
    assert toe["peer_pattern_errors"] == 0
    assert toe["bad_register_accesses"] == 0
    # The rings' set-up, the doorbells, the ECQ heads and the reads above.
    assert toe["register_accesses"] > 20
    assert toe["link_frames"] > SENDS * SEND_BYTES // 1448


def run_toe_send(*args, max_instructions=20_000_000):
    program = target_dir() / "toe_send.elf"
    if not program.exists():
        pytest.skip(f"{program} is missing (no ARM cross compiler)")
    run = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(program),
                          "--max-instructions", str(max_instructions), *args],
                         capture_output=True, text=True, timeout=120)
    return run, dict(line.split("=", 1) for line in run.stdout.splitlines() if "=" in line)


def test_the_scenario_sets_up_the_toe_and_its_peer(tmp_path):
    """One scenario configures both platforms: toe.* keys reach the system platform's TOE, and
    the peer runs what vms[0]'s workload needs, where it says (here a port nobody connects to:
    the Connect is refused, reported as errors, and the run still ends)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text("toe:\n  channels: 3\n")
    run, lines = run_toe_send("--scenario", str(scenario), "--set", "vms.0.workload.port=6000")
    assert run.returncode == 0, run.stdout + run.stderr
    assert int(lines["toe channels"], 16) == 3
    assert int(lines["connected"], 16) == 0
    assert int(lines["errors"], 16) > 0
    assert int(lines["sent bytes"], 16) == 0


def test_a_bad_scenario_key_names_the_key():
    run, _ = run_toe_send("--set", "toe.bandwidth=fast")
    assert run.returncode != 0
    assert "toe.bandwidth" in run.stderr and "fast" in run.stderr


def test_a_run_that_does_not_power_off_shows_the_consoles_last_lines():
    """A bounded run that ends before its program does says where, and what the console said
    last (for a kernel: its last words; for a driver: how far it got)."""
    run, _ = run_toe_send(max_instructions=300_000)
    assert run.returncode == 4, run.stderr
    assert "stopped after" in run.stderr
    tail = run.stderr[run.stderr.index("the console's last lines:"):]
    assert "  | toe channels=0x00000008" in tail
    assert "power off" not in run.stdout
