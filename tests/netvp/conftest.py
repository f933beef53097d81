"""Fixtures of the NetVP tests; the lab itself is in netvp_lab.py."""
import pytest

from netvp_lab import Lab, raw_sockets_allowed, vtoe_binary


@pytest.fixture
def lab(tmp_path):
    why = raw_sockets_allowed()
    if why:
        pytest.skip(why)
    assert vtoe_binary().exists(), f"{vtoe_binary()} is missing: build first"
    lab = Lab(tmp_path)
    try:
        yield lab
    finally:
        lab.down()
