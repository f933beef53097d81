#!/usr/bin/env python3
"""Replays and shrinks a failure of fuzz_guest that needs the state earlier inputs left.

fuzz_guest's platforms live for the whole process, so an input may fail only after others ran.
With FUZZ_GUEST_TRACE=FILE the harness records every input it runs, in order (a 32-bit
little-endian length, then the bytes). This script splits such a record into one file per input
and finds a short sequence that still fails when libFuzzer runs the files in order in one
process (`fuzz_guest -detect_leaks=0 f1 f2 ...`):

    python3 scripts/fuzz_trace.py split TRACE DIR                # DIR/000000, DIR/000001, ...
    python3 scripts/fuzz_trace.py shrink DIR OUT.txt [--bin B] [--match TEXT]

shrink keeps the last input, finds the shortest failing suffix of the ones before it (binary
search), then drops chunks of it while the failure stays (halving the chunk size), and writes
the remaining file names, one a line, to OUT.txt. A run fails when fuzz_guest exits with an
error and, with --match, its stderr contains TEXT (e.g. "took no interrupt").
"""
import argparse
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def split(trace, out):
    out.mkdir(parents=True, exist_ok=True)
    data = trace.read_bytes()
    i = k = 0
    while i + 4 <= len(data):
        (n,) = struct.unpack_from("<I", data, i)
        i += 4
        (out / f"{k:06d}").write_bytes(data[i : i + n])
        i += n
        k += 1
    print(f"{k} inputs in {out}")


def shrink(folder, out, binary, match):
    def fails(files):
        r = subprocess.run(
            [str(binary), "-detect_leaks=0", *map(str, files)],
            capture_output=True, text=True, errors="replace",
        )
        return r.returncode != 0 and match in r.stderr

    files = sorted(p for p in folder.iterdir() if p.is_file())
    last, before = files[-1], files[:-1]
    if not fails(files):
        sys.exit("the whole sequence does not fail")
    if fails([last]):
        before = []
    else:
        lo, hi = 0, len(before)  # before[lo:] fails, before[hi:] does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fails(before[mid:] + [last]) else (lo, mid)
        before = before[lo:]
    print(f"shortest failing suffix: {len(before) + 1} inputs", flush=True)
    n = max(len(before) // 2, 1)
    while before:
        i = 0
        while i < len(before):
            cand = before[:i] + before[i + n :]
            if fails(cand + [last]):
                before = cand
            else:
                i += n
        print(f"chunks of {n}: {len(before) + 1} inputs", flush=True)
        if n == 1:
            break
        n //= 2
    out.write_text("".join(f"{p}\n" for p in before + [last]))
    print(f"{len(before) + 1} inputs in {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("trace", type=Path)
    s.add_argument("dir", type=Path)
    m = sub.add_parser("shrink")
    m.add_argument("dir", type=Path)
    m.add_argument("out", type=Path)
    m.add_argument("--bin", type=Path, default=ROOT / "build/fuzz/tests/fuzz/fuzz_guest")
    m.add_argument("--match", default="")
    a = ap.parse_args()
    if a.cmd == "split":
        split(a.trace, a.dir)
    else:
        shrink(a.dir, a.out, a.bin, a.match)


if __name__ == "__main__":
    main()
