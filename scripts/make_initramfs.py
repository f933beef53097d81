#!/usr/bin/env python3
"""Builds the boot test's initramfs: a newc cpio archive holding busybox and an /init (busybox
sh) that prints a marker and powers off (`poweroff -f`: PSCI SYSTEM_OFF ends the run).

    scripts/make_initramfs.py --busybox PATH --out FILE [--marker TEXT] [--kallsyms]

With --kallsyms, /init first prints the running kernel's symbol table (/proc/kallsyms, the
format of System.map) between KALLSYMS_BEGIN and KALLSYMS_END: Debian's linux-image package ships
only a stub System.map (the real one is in the 600 MB -dbg package), and a debugger needs
start_kernel's address.

Written in Python rather than with cpio(1) so that /dev/console (the device init's output goes
to) can be put in the archive without root rights."""
import argparse
import stat
from pathlib import Path

MARKER = "VTOE-INITRAMFS-REACHED"
KALLSYMS_BEGIN, KALLSYMS_END = "VTOE-KALLSYMS-BEGIN", "VTOE-KALLSYMS-END"


def init_script(marker: str, kallsyms: bool = False) -> bytes:
    dump = ""
    if kallsyms:
        # kptr_restrict 0: real addresses for root (Linux has no KASLR on 32-bit ARM).
        dump = (f"/bin/busybox mount -t proc proc /proc\n"
                f"/bin/busybox echo 0 > /proc/sys/kernel/kptr_restrict\n"
                f"/bin/busybox echo {KALLSYMS_BEGIN}\n"
                f"/bin/busybox cat /proc/kallsyms\n"
                f"/bin/busybox echo {KALLSYMS_END}\n")
    return (f"#!/bin/busybox sh\n{dump}"
            f"/bin/busybox echo {marker}\n"
            f"/bin/busybox poweroff -f\n").encode()


def entry(name: str, mode: int, data: bytes = b"", ino: int = 1, rdev=(0, 0)) -> bytes:
    """One newc record: header, name (NUL-terminated, padded to 4), data (padded to 4)."""
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0]
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    rec = head + name.encode() + b"\0"
    rec += b"\0" * (-len(rec) % 4)
    rec += data + b"\0" * (-len(data) % 4)
    return rec


def build(busybox: bytes, marker: str = MARKER, kallsyms: bool = False) -> bytes:
    items = [
        ("bin", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("dev", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
        ("proc", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("sys", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("bin/busybox", stat.S_IFREG | 0o755, busybox, (0, 0)),
        ("init", stat.S_IFREG | 0o755, init_script(marker, kallsyms), (0, 0)),
    ]
    out = b"".join(entry(n, m, d, ino=i + 1, rdev=r) for i, (n, m, d, r) in enumerate(items))
    return out + entry("TRAILER!!!", 0, ino=0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busybox", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--marker", default=MARKER)
    ap.add_argument("--kallsyms", action="store_true",
                    help="print /proc/kallsyms between two markers before the marker")
    a = ap.parse_args(argv)
    a.out.write_bytes(build(a.busybox.read_bytes(), a.marker, a.kallsyms))


if __name__ == "__main__":
    main()
