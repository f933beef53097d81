#!/usr/bin/env python3
"""Debian's Xen in lockstep with qemu-system-arm 7.2 from its first instruction (issue 43,
items 1 and 8): both boot build/xen/xen with dom0's modules as the reference command line has
them and one device tree, byte for byte: QEMU gets its own (`dumpdtb` of the same command line,
its random `rng-seed` and `kaslr-seed` removed with fdtput) as `-dtb`, which it rewrites as it
loads it (/memory again, /chosen); a first QEMU run stops at Xen's entry (its GDB stub) and the
blob at r2 is dumped from its memory, which vtoe gets unchanged (`--dtb FILE --dtb-as-is`);
QEMU logs r0-r15 and the CPSR before every instruction (`-singlestep -d cpu,nochain`)
into a file until it holds --steps states, vtoe traces as many (`--trace`), and
tests/system/lockstep.py compares them from Xen's entry (0x40010000: QEMU runs its boot stub
first), printing the first divergence with both register files.

    scripts/xen_lockstep.py [--steps N] [--vtoe PATH] [--keep DIR]

Defaults: build/xen/xen, build/linux/{vmlinuz,initrd.cpio}, build/release/app/vtoe, 300 000
steps (QEMU's log is about 235 bytes a step). Exit status 0 when the steps are equal, 1 at a
divergence, 2 when a side ends early or a tool is missing."""
import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "system"))
sys.path.insert(0, str(ROOT / "scripts"))
from linux_lockstep import Gdb  # noqa: E402
from lockstep import describe, first_divergence, side_by_side, states  # noqa: E402

ENTRY = 0x40010000  # where QEMU's boot stub enters a zImage-format image (RAM + 0x10000)
APPEND = "dom0_mem=512M console=dtuart dtuart=/pl011@9000000"


def entry_dtb(qemu, out: Path):
    """The blob QEMU gives Xen: QEMU stopped at Xen's entry, r2's blob read from its memory (the
    MMU is off: physical addresses)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*qemu, "-S", "-gdb", f"tcp:127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        gdb = Gdb(port)
        assert gdb.cmd(f"Z1,{ENTRY:x},4") == "OK", "QEMU refused the breakpoint at Xen's entry"
        gdb.cmd("c")
        r2 = gdb.reg(2)
        header = gdb.read(r2, 8)
        assert header[:4] == bytes.fromhex("d00dfeed"), f"no device tree at r2 0x{r2:08x}"
        out.write_bytes(gdb.read(r2, int.from_bytes(header[4:8], "big")))
    finally:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300_000)
    ap.add_argument("--vtoe", default=str(ROOT / "build" / "release" / "app" / "vtoe"))
    ap.add_argument("--keep", help="keep the logs and the device tree in this directory")
    args = ap.parse_args()
    xen = ROOT / "build" / "xen" / "xen"
    kernel, initrd = ROOT / "build" / "linux" / "vmlinuz", ROOT / "build" / "linux" / "initrd.cpio"
    for f in (xen, kernel, initrd, Path(args.vtoe)):
        if not f.exists():
            print(f"xen_lockstep: {f} is missing (make linux-images, make build)", file=sys.stderr)
            return 2
    for tool in ("qemu-system-arm", "fdtput"):
        if shutil.which(tool) is None:
            print(f"xen_lockstep: {tool} is missing", file=sys.stderr)
            return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xen-lockstep-"))
    work.mkdir(parents=True, exist_ok=True)
    modules = [f"guest-loader,addr=0x60000000,kernel={kernel},bootargs=console=hvc0",
               f"guest-loader,addr=0x64000000,initrd={initrd}"]
    qemu = ["qemu-system-arm", "-cpu", "cortex-a15", "-m", "2048", "-nodefaults", "-display",
            "none", "-kernel", str(xen), "-append", APPEND]
    for m in modules:
        qemu += ["-device", m]
    dtb = work / "virt.dtb"
    subprocess.run([*qemu, "-M", f"virt,virtualization=on,highmem=off,dumpdtb={dtb}"],
                   check=True, capture_output=True)
    for prop in ("rng-seed", "kaslr-seed"):
        subprocess.run(["fdtput", "-d", str(dtb), "/chosen", prop], check=True)

    machine = ["-M", "virt,virtualization=on,highmem=off", "-dtb", str(dtb)]
    seen = work / "xen.dtb"
    entry_dtb([*qemu, *machine, "-serial", "null"], seen)

    qlog = work / "qemu.log"
    proc = subprocess.Popen([*qemu, *machine,
                             "-serial", f"file:{work / 'qemu-console.txt'}", "-singlestep", "-d",
                             "cpu,nochain", "-D", str(qlog)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    want_bytes = (args.steps + 1000) * 260
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if qlog.exists() and qlog.stat().st_size > want_bytes:
            break
        time.sleep(0.5)
    proc.kill()
    proc.wait()

    vlog = work / "vtoe.log"
    cmd = [args.vtoe, "system", "run", "--virtualization", "--memory", "2GiB", "--kernel",
           str(xen), "--dtb", str(seen), "--dtb-as-is", "--append", APPEND, "--trace", str(vlog),
           "--trace-limit", str(args.steps), "--max-instructions", str(args.steps + 1000)]
    for m in modules:
        cmd += ["--device", m]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1200)

    want = states(qlog.read_text(errors="replace"))
    start = next((i for i, s in enumerate(want) if s[15] == ENTRY), None)
    if start is None:
        print(f"xen_lockstep: QEMU never reached 0x{ENTRY:08x} ({len(want)} states)")
        return 2
    want = want[start:start + args.steps]
    got = states(vlog.read_text(errors="replace"))[:args.steps]
    step = first_divergence(want, got)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if step is not None:
        print(side_by_side(want, got, step))
        for i in range(max(0, step - 3), step):
            print(f"  qemu[{i}] {describe(want[i])}")
        return 1
    if len(got) < len(want) or len(want) < args.steps:
        print(f"xen_lockstep: equal for {min(len(want), len(got))} steps, then a side ended "
              f"(QEMU {len(want)}, vtoe {len(got)})")
        return 2
    print(f"xen_lockstep: {args.steps} steps equal from 0x{ENTRY:08x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
