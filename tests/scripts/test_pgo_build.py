"""The profile-guided build (`make pgo`, build/pgo/app/vtoe) gives the release build's results byte
for byte, on runs outside its training set (scripts/pgo-train.sh): other topologies, more cores,
shared memory, loopback, the `at` timing mode with several DMA reads in flight, a capture.

Skipped unless both binaries exist: CI does not build the PGO binary (two builds and a training
run). After `make pgo`, `VTOE_PRESET=pgo pytest tests/integration/test_golden.py` checks the 16
golden files with it too (docs/performance.md, "Session 9").
"""
import subprocess

import pytest
from scripts_paths import ROOT

PGO = ROOT / "build" / "pgo" / "app" / "vtoe"
RELEASE = ROOT / "build" / "release" / "app" / "vtoe"

pytestmark = pytest.mark.skipif(not (PGO.is_file() and RELEASE.is_file()),
                                reason="needs build/pgo/app/vtoe (make pgo) and build/release/app/vtoe")

SHORT = ["--set", "duration=30ms", "--set", "warmup=5ms"]
CASES = {
    "two_platforms": ["scenarios/topology/two_platforms.yaml", *SHORT],
    "two_hosts_switch": ["scenarios/topology/two_hosts_switch.yaml", *SHORT],
    "rpc_two_cores": ["scenarios/multicore/rpc_two_cores.yaml", *SHORT],
    "de_rpc_two_vms": ["scenarios/multicore/de_rpc_two_vms.yaml", *SHORT],
    "shm": ["scenarios/virt/shm.yaml", *SHORT],
    "loopback": ["scenarios/virt/loopback.yaml", *SHORT],
    "qos_4vm_at": ["scenarios/virt/qos_4vm.yaml", *SHORT, "--set", "platform.timing=at",
                   "--set", "toe.dma_outstanding=4"],
    "lossy_da_pcap": ["scenarios/native/lossy_tx.yaml", *SHORT, "--set", "architecture=da",
                      "--pcap"],
}


def outputs(binary, args, out):
    subprocess.run([str(binary), "run", *args, "--out", str(out), "--quiet"], cwd=ROOT,
                   check=True, timeout=120)
    files = sorted(p for p in out.iterdir() if p.name == "results.json" or p.suffix == ".pcap")
    return {p.name: p.read_bytes() for p in files}


@pytest.mark.parametrize("name", CASES)
def test_pgo_binary_gives_the_release_results(tmp_path, name):
    release = outputs(RELEASE, CASES[name], tmp_path / "release")
    pgo = outputs(PGO, CASES[name], tmp_path / "pgo")
    assert "results.json" in release
    assert pgo.keys() == release.keys()
    for file, data in release.items():
        assert pgo[file] == data, f"{name}: {file} differs between build/pgo and build/release"
