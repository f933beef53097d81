"""scripts/compare_timing.py: claims whose verdict differs are listed, the differences are bucketed
and the largest shown, from two report directories written here."""
import json

import compare_timing as ct

REPORT = """# vtoe: reproduction of section 5

## Claims of section 5

| Claim | Figure | Test | Verdict | Evidence |
|---|---|---|---|---|
| Transmit rises with size | 9a | strictly increasing | {a} | x |
| Fair shares | 12 | within 10 % | {b} | y |
"""


def write(d, numbers, a="holds", b="holds"):
    d.mkdir()
    (d / "summary.json").write_text(json.dumps(numbers))
    (d / "report.md").write_text(REPORT.format(a=a, b=b))


def test_claims_numbers_and_largest_moves(tmp_path):
    write(tmp_path / "lt", {"n1": 100.0, "n2": 200.0, "n3": 0.5, "n4": 0.0})
    write(tmp_path / "at", {"n1": 100.0, "n2": 230.0, "n3": 0.501, "n4": 1.0},
          b="**does not hold**")
    text = ct.compare(tmp_path / "lt", tmp_path / "at", top=2)
    assert "2 of 2 hold in lt, 1 of 2 in at" in text
    assert "| Fair shares | 12 | holds | does not hold |" in text
    assert "Transmit rises" not in text  # same verdict in both: not listed
    assert "| < 0.1 % | 1 |" in text      # n1
    assert "| < 1 % | 2 |" in text        # n1, n3
    assert "| >= 10 % | 2 |" in text      # n2 (+15 %), n4 (from 0)
    assert "| `n2` | 200 | 230 | +15.0 % |" in text
    assert "| `n4` | 0 | 1 | n/a |" in text


def test_identical_reports(tmp_path):
    write(tmp_path / "a", {"n": 1.0})
    write(tmp_path / "b", {"n": 1.0})
    text = ct.compare(tmp_path / "a", tmp_path / "b")
    assert "Every claim has the same verdict in both." in text
    assert "| >= 10 % | 0 |" in text
