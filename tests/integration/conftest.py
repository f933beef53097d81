import json
import os
import subprocess
from pathlib import Path

import pytest

from integration_paths import ROOT, TIMEOUT_FACTOR


def vtoe_binary() -> Path:
    preset = os.environ.get("VTOE_PRESET", "release")
    path = ROOT / "build" / preset / "app" / "vtoe"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make build)")
    return path


class Vtoe:
    """Runs the vtoe binary and reads what it wrote."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.bin = vtoe_binary()

    def run(self, *args, check=True, timeout=600):
        proc = subprocess.run([str(self.bin), *map(str, args)], capture_output=True, text=True,
                              timeout=timeout * TIMEOUT_FACTOR, cwd=ROOT)
        if check and proc.returncode != 0:
            raise AssertionError(f"vtoe {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return proc

    def scenario(self, scenario, *sets, out=None, extra=()):
        out = Path(out or self.tmp / "out")
        args = ["run", scenario, "--out", out, "--quiet", *extra]
        for s in sets:
            args += ["--set", s]
        self.run(*args)
        return json.loads((out / "results.json").read_text()), out


@pytest.fixture
def vtoe(tmp_path):
    return Vtoe(tmp_path)
