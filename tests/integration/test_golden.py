"""Golden results: every case of tests/golden/cases.txt gives byte-identical results.json.

A refactoring must leave these untouched; an intended change of results regenerates them with
`python3 scripts/golden.py update` and says in the commit what moved and why.
"""
import json

import pytest

from integration_paths import ROOT

GOLDEN = ROOT / "tests" / "golden"


def cases():
    out = []
    for line in (GOLDEN / "cases.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, rest = line.partition(":")
            out.append(pytest.param(name.strip(), rest.split(), id=name.strip()))
    return out


@pytest.mark.parametrize("name,args", cases())
def test_results_match_golden(vtoe, name, args):
    scenario, sets = args[0], args[1:]
    _, out = vtoe.scenario(scenario, extra=sets)
    got = (out / "results.json").read_bytes()
    want = (GOLDEN / f"{name}.json").read_bytes()
    if got != want:
        # Name the first differing key so the failure says what moved.
        g, w = json.loads(got), json.loads(want)
        diffs = []

        def walk(a, b, path):
            if isinstance(a, dict) and isinstance(b, dict):
                for k in list(dict.fromkeys([*a, *b])):
                    walk(a.get(k), b.get(k), f"{path}.{k}")
            elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                for i, (x, y) in enumerate(zip(a, b)):
                    walk(x, y, f"{path}[{i}]")
            elif a != b:
                diffs.append(f"{path}: golden {b!r}, run {a!r}")

        walk(g, w, name)
        pytest.fail("results differ from tests/golden:\n" + "\n".join(diffs[:20]))
