#!/usr/bin/env python3
"""Builds the boot test's initramfs: a newc cpio archive holding busybox and an /init (busybox
sh) that prints a marker and powers off (`poweroff -f`: PSCI SYSTEM_OFF ends the run).

    scripts/make_initramfs.py --busybox PATH --out FILE [--marker TEXT] [--kallsyms]
                              [--module KO]... [--program FILE]... [--run COMMAND]...

With --module, /init mounts /proc, /sys and devtmpfs on /dev and loads each module with busybox's
insmod, printing `VTOE-INSMOD NAME ok` and `VTOE-MODULE-TEXT STEM ADDRESS` (where its .text
went, for a profile) or `VTOE-INSMOD NAME failed (status N)` (a module that
does not load skips the commands). --program puts FILE in /bin under its own name; each --run
COMMAND is run in order after the modules, followed by `VTOE-RUN-EXIT STATUS COMMAND`. With
--command-line-run, /init then runs the command the kernel's command line gives as
`vtoe_run="PROGRAM ARGS"` (the kernel hands unknown key=value parameters to init as environment
variables) or, without one, prints `VTOE-READY` and reads the command as a line from the console
(`vtoe run` types it into the serial port: the system waits idle there, the point where a
booted snapshot is taken), after a line `VTOE-WORKLOAD-START` that tells `vtoe run` the
workload begins: one archive, built by the set-up, serves every scenario
(platform.cpu_model=iss). The marker comes last, before the power-off, whatever happened.

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
WORKLOAD_START = "VTOE-WORKLOAD-START"
READY = "VTOE-READY"
MODULE_TEXT = "VTOE-MODULE-TEXT"
KALLSYMS_BEGIN, KALLSYMS_END = "VTOE-KALLSYMS-BEGIN", "VTOE-KALLSYMS-END"


def workload(modules, commands, command_line_run=False) -> str:
    if not modules and not commands and not command_line_run:
        return ""
    bb = "/bin/busybox"
    lines = [f"{bb} mount -t proc proc /proc", f"{bb} mount -t sysfs sysfs /sys",
             f"{bb} mount -t devtmpfs devtmpfs /dev", "loaded=1"]
    if modules:  # real addresses in /sys/module/*/sections for root (no KASLR on 32-bit ARM)
        lines.append(f"{bb} echo 0 > /proc/sys/kernel/kptr_restrict")
    for name in modules:
        stem = name[:-3] if name.endswith(".ko") else name
        # Where Linux put the module's .text: a profiler names its functions from the .ko.
        lines.append(f"if {bb} insmod /lib/modules/{name}; then {bb} echo VTOE-INSMOD {name} ok; "
                     f"{bb} echo {MODULE_TEXT} {stem} $({bb} cat /sys/module/{stem}/sections/.text); "
                     f"else s=$?; loaded=0; {bb} echo VTOE-INSMOD {name} failed \\(status $s\\); fi")
    for cmd in commands:
        # Single quotes inside the command are closed and reopened for the echo.
        quoted = cmd.replace("'", "'\\''")
        lines.append(f"if [ $loaded = 1 ]; then {cmd}; {bb} echo VTOE-RUN-EXIT $? '{quoted}'; "
                     f"else {bb} echo VTOE-RUN-SKIPPED '{quoted}': a module did not load; fi")
    if command_line_run:
        # Without vtoe_run on the command line, the command comes from the console.
        lines.append(f'if [ -z "$vtoe_run" ] && [ $loaded = 1 ]; then {bb} echo {READY}; '
                     f'read -r vtoe_run; fi')
        # Unquoted: the shell splits the variable into the program and its arguments.
        lines.append(f'if [ -z "$vtoe_run" ]; then {bb} echo VTOE-RUN-SKIPPED: no command from the '
                     f'kernel command line or the console; elif [ $loaded = 1 ]; then '
                     f'{bb} echo {WORKLOAD_START}; $vtoe_run; {bb} echo VTOE-RUN-EXIT $? "$vtoe_run"; '
                     f'else {bb} echo VTOE-RUN-SKIPPED "$vtoe_run": a module did not load; fi')
    return "\n".join(lines) + "\n"


def init_script(marker: str, kallsyms: bool = False, modules=(), commands=(),
                command_line_run=False) -> bytes:
    dump = ""
    if kallsyms:
        # kptr_restrict 0: real addresses for root (Linux has no KASLR on 32-bit ARM).
        dump = (f"/bin/busybox mount -t proc proc /proc\n"
                f"/bin/busybox echo 0 > /proc/sys/kernel/kptr_restrict\n"
                f"/bin/busybox echo {KALLSYMS_BEGIN}\n"
                f"/bin/busybox cat /proc/kallsyms\n"
                f"/bin/busybox echo {KALLSYMS_END}\n")
    return (f"#!/bin/busybox sh\nexport PATH=/bin\n{dump}{workload(modules, commands, command_line_run)}"
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


def build(busybox: bytes, marker: str = MARKER, kallsyms: bool = False, modules=(),
          programs=(), commands=(), command_line_run=False) -> bytes:
    """modules and programs: (name, bytes) pairs, put in /lib/modules and /bin."""
    items = [
        ("bin", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("dev", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
        ("proc", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("sys", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("bin/busybox", stat.S_IFREG | 0o755, busybox, (0, 0)),
        ("init", stat.S_IFREG | 0o755,
         init_script(marker, kallsyms, [n for n, _ in modules], commands, command_line_run),
         (0, 0)),
    ]
    if modules:
        items += [("lib", stat.S_IFDIR | 0o755, b"", (0, 0)),
                  ("lib/modules", stat.S_IFDIR | 0o755, b"", (0, 0))]
        items += [(f"lib/modules/{n}", stat.S_IFREG | 0o644, d, (0, 0)) for n, d in modules]
    items += [(f"bin/{n}", stat.S_IFREG | 0o755, d, (0, 0)) for n, d in programs]
    out = b"".join(entry(n, m, d, ino=i + 1, rdev=r) for i, (n, m, d, r) in enumerate(items))
    return out + entry("TRAILER!!!", 0, ino=0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busybox", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--marker", default=MARKER)
    ap.add_argument("--kallsyms", action="store_true",
                    help="print /proc/kallsyms between two markers before the marker")
    ap.add_argument("--module", action="append", default=[], type=Path,
                    help="a kernel module for /lib/modules, loaded by /init (repeatable)")
    ap.add_argument("--program", action="append", default=[], type=Path,
                    help="a program for /bin (repeatable)")
    ap.add_argument("--run", action="append", default=[], metavar="COMMAND",
                    help="a command /init runs after loading the modules (repeatable)")
    ap.add_argument("--command-line-run", action="store_true",
                    help="then run the kernel command line's vtoe_run=\"PROGRAM ARGS\"")
    a = ap.parse_args(argv)
    modules = [(m.name, m.read_bytes()) for m in a.module]
    programs = [(p.name, p.read_bytes()) for p in a.program]
    a.out.write_bytes(build(a.busybox.read_bytes(), a.marker, a.kallsyms, modules, programs,
                            a.run, a.command_line_run))


if __name__ == "__main__":
    main()
