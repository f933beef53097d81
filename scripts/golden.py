#!/usr/bin/env python3
"""Golden results: run the cases of tests/golden/cases.txt and compare or update their results.json.

    python3 scripts/golden.py compare [--bin PATH] [--only NAME ...]   # exit 1 on any difference
    python3 scripts/golden.py update  [--bin PATH] [--only NAME ...]   # rewrite tests/golden/*.json

results.json holds no wall-clock figure, so the comparison is exact (byte for byte).
"""
import argparse
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def default_binary() -> Path:
    preset = os.environ.get("VTOE_PRESET", "release")
    return ROOT / "build" / preset / "app" / "vtoe"


def cases():
    out = []
    for line in (GOLDEN / "cases.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition(":")
        out.append((name.strip(), rest.split()))
    return out


def run_case(binary: Path, args, out_dir: Path) -> bytes:
    proc = subprocess.run([str(binary), "run", *args, "--out", str(out_dir), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"vtoe run {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return (out_dir / "results.json").read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("action", choices=["compare", "update"])
    ap.add_argument("--bin", type=Path, default=None, help="vtoe binary (default: the build's)")
    ap.add_argument("--only", nargs="*", default=None, help="case names")
    a = ap.parse_args()
    binary = a.bin or default_binary()
    if not binary.exists():
        print(f"golden: {binary} is missing (build first: make build)", file=sys.stderr)
        return 2
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in cases():
            if a.only and name not in a.only:
                continue
            got = run_case(binary, args, Path(tmp) / name)
            path = GOLDEN / f"{name}.json"
            if a.action == "update":
                path.write_bytes(got)
                print(f"golden: wrote {path.relative_to(ROOT)}")
                continue
            want = path.read_bytes() if path.exists() else b""
            if got == want:
                print(f"golden: {name} identical")
                continue
            failed.append(name)
            diff = difflib.unified_diff(want.decode().splitlines(), got.decode().splitlines(),
                                        f"golden/{name}.json", f"run/{name}", lineterm="", n=1)
            print(f"golden: {name} DIFFERS\n" + "\n".join(list(diff)[:60]))
    if failed:
        print(f"golden: {len(failed)} case(s) differ: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
