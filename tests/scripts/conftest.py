import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))


def vtoe_binary() -> Path:
    """$VTOE_BIN, else build/$VTOE_PRESET (as `make test` sets it), else build/release."""
    env = os.environ.get("VTOE_BIN")
    if env:
        return Path(env).resolve()
    presets = [os.environ.get("VTOE_PRESET"), "release"]
    for preset in filter(None, presets):
        path = ROOT / "build" / preset / "app" / "vtoe"
        if path.is_file():
            return path
    pytest.fail("the vtoe binary is missing: build it first (make build) or set $VTOE_BIN")


@pytest.fixture(scope="session")
def vtoe_bin() -> Path:
    return vtoe_binary()
