#!/usr/bin/env python3
"""Debian's kernel in lockstep with qemu-system-arm 7.2 from start_kernel (issue 43, item 1):
both boot the same vmlinuz and initramfs; QEMU runs at full speed to a breakpoint at
start_kernel (its GDB stub), where the script turns on its one-instruction blocks and its log
through the stub's monitor commands (`singlestep on`, `log cpu,nochain,int`), so that it logs
r0-r15 and the CPSR before every instruction from there; vtoe traces from the first
instruction at start_kernel (`vtoe system run --trace FIFO --trace-at ADDR`); both logs stream
through named pipes and are compared state by state from QEMU's first state at start_kernel, up
to --steps instructions, QEMU's first asynchronous interrupt or the first divergence, which is
printed with the function (System.map) and both register files.

Both kernels see the same device tree, byte for byte: at start_kernel the script reads from
QEMU's memory the blob its kernel got (r8 holds its address at start_kernel; QEMU's own tree by
default, or --dtb FILE through QEMU's -dtb path) and starts vtoe with it unchanged
(`--dtb FILE --dtb-as-is`, at the same address, since both place it after the initrd).

    scripts/linux_lockstep.py [--steps N] [--virtualization] [--vtoe PATH] [--dtb FILE|own]

Defaults: build/linux/{vmlinuz,initrd.cpio,System.map}, build/release/app/vtoe, 5 000 000 steps.
Exit status 0 when the steps are equal, 1 at a divergence, 2 when a side ends early."""
import argparse
import bisect
import os
import socket
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "system"))
from lockstep import ASYNC, STATE, describe, mode  # noqa: E402


def symbols(system_map: Path):
    addrs, names = [], []
    for line in system_map.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1].lower() in "tw":
            addrs.append(int(parts[0], 16))
            names.append(parts[2])
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def where(syms, pc):
    addrs, names = syms
    i = bisect.bisect_right(addrs, pc) - 1
    return f"{names[i]}+0x{pc - addrs[i]:x}" if i >= 0 else f"0x{pc:08x}"


class Gdb:
    """Just enough of GDB's remote protocol to stop QEMU at an address and send monitor
    commands."""

    def __init__(self, port):
        for _ in range(100):
            try:
                self.s = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"QEMU's GDB stub on port {port} does not answer")

    def cmd(self, payload, timeout=600):
        self.s.settimeout(timeout)
        self.s.sendall(f"${payload}#{sum(payload.encode()) % 256:02x}".encode())
        data = b""
        while True:
            data += self.s.recv(4096)
            m = re.search(rb"\$([^#]*)#..", data)
            # O + hex digits: console output of qRcmd, before its answer
            if m and not re.fullmatch(rb"O[0-9a-fA-F]+", m.group(1)):
                self.s.sendall(b"+")
                return m.group(1).decode()
            if m:
                self.s.sendall(b"+")
                data = data[m.end():]

    def monitor(self, text):
        return self.cmd("qRcmd," + text.encode().hex())

    def reg(self, n):
        """Core register rn (QEMU's stub answers `g`, not `p`)."""
        words = self.cmd("g")
        return int.from_bytes(bytes.fromhex(words[8 * n:8 * n + 8]), "little")

    def read(self, addr, length):
        """Guest memory at a virtual address (the current translation)."""
        out = b""
        while len(out) < length:
            n = min(2048, length - len(out))
            reply = self.cmd(f"m{addr + len(out):x},{n:x}")
            if reply.startswith("E") or not reply:
                raise RuntimeError(f"QEMU cannot read 0x{addr + len(out):08x}: {reply}")
            out += bytes.fromhex(reply)
        return out


# Where ARM's head.S maps the device tree until paging_init: FDT_FIXED_BASE plus the blob's
# offset in its section (1 MiB; 2 MiB with LPAE).
FDT_FIXED_BASE = 0xFF800000


def kernel_dtb(gdb) -> bytes:
    """The device tree the kernel was given, from QEMU's memory at start_kernel: head.S's
    __mmap_switched enters start_kernel with its physical address in r8 (what it stores in
    __atags_pointer), mapped at FDT_FIXED_BASE."""
    pa = gdb.reg(8)
    for section in (1 << 20, 2 << 20):
        va = FDT_FIXED_BASE + pa % section
        try:
            header = gdb.read(va, 8)
        except RuntimeError:
            continue
        if header[:4] == bytes.fromhex("d00dfeed"):
            return gdb.read(va, int.from_bytes(header[4:8], "big"))
    raise RuntimeError(f"no device tree mapped for r8 0x{pa:08x} at start_kernel")


class Stream:
    """States read from a pipe by a thread of its own (bounded queue of parsed states)."""

    def __init__(self, path, start_pc=None):
        self.path, self.start_pc = path, start_pc
        self.states, self.done, self.async_irq = [], False, False
        self.cond = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        started = self.start_pc is None
        buf = ""
        # Unbuffered: a read returns what the pipe holds (a text read would wait for the whole
        # size, and the last states of a writer that runs on untraced would never come).
        with open(self.path, "rb", buffering=0) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                buf += chunk.decode(errors="replace")
                cut = buf.rfind("PSR=")
                end = buf.find("\n", cut)
                if cut < 0 or end < 0:
                    continue
                text, buf = buf[:end + 1], buf[end + 1:]
                a = ASYNC.search(text) if started else None
                if a:
                    text = text[:a.start()]
                new = []
                for m in STATE.finditer(text):
                    s = tuple(int(g, 16) for g in m.groups())
                    if not started:
                        if s[15] != self.start_pc:
                            continue
                        started = True
                    new.append(s)
                with self.cond:
                    self.states.extend(new)
                    if a:
                        self.async_irq = True
                    self.cond.notify_all()
                if a:
                    break
                while len(self.states) > 4_000_000:  # the comparison is far behind: wait
                    time.sleep(0.05)
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def get(self, i):
        with self.cond:
            while len(self.states) <= i and not self.done:
                self.cond.wait(1)
            return self.states[i] if i < len(self.states) else None

    def trim(self, n):
        with self.cond:
            del self.states[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5_000_000)
    ap.add_argument("--virtualization", action="store_true")
    ap.add_argument("--vtoe", default=str(ROOT / "build" / "release" / "app" / "vtoe"))
    ap.add_argument("--kernel", default=str(ROOT / "build" / "linux" / "vmlinuz"))
    ap.add_argument("--initrd", default=str(ROOT / "build" / "linux" / "initrd.cpio"))
    ap.add_argument("--system-map", default=str(ROOT / "build" / "linux" / "System.map"))
    ap.add_argument("--append", default="console=ttyAMA0")
    ap.add_argument("--dtb", help="QEMU's -dtb (default: its own tree); vtoe gets the blob QEMU's "
                                  "kernel got, unchanged ('own': each simulator its own)")
    args = ap.parse_args()

    syms = symbols(Path(args.system_map))
    start = syms[0][syms[1].index("start_kernel")]
    tmp = Path(tempfile.mkdtemp(prefix="linux-lockstep-"))
    qfifo, vfifo = tmp / "qemu.fifo", tmp / "vtoe.fifo"
    os.mkfifo(qfifo)
    os.mkfifo(vfifo)
    own = args.dtb == "own"
    machine = "virt,highmem=off" + (",virtualization=on" if args.virtualization else "")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    qemu_cmd = ["qemu-system-arm", "-M", machine, "-cpu", "cortex-a15", "-nodefaults",
                "-display", "none", "-serial", "null", "-kernel", args.kernel, "-initrd",
                args.initrd, "-append", args.append, "-D", str(qfifo), "-S", "-gdb",
                f"tcp:127.0.0.1:{port}"]
    vtoe_cmd = [args.vtoe, "system", "run", "--kernel", args.kernel, "--initrd", args.initrd,
                "--append", args.append, "--trace", str(vfifo), "--trace-at", hex(start),
                # Beyond the steps compared: vtoe runs on untraced after its bound and its last
                # buffered states would stay in its stdio buffer.
                "--trace-limit", str(args.steps + 10_000)]
    if args.dtb and not own:
        qemu_cmd += ["-dtb", args.dtb]
    if args.virtualization:
        vtoe_cmd.append("--virtualization")
    t0 = time.monotonic()
    procs = [subprocess.Popen(qemu_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        return compare(args, start, syms, procs, port, qfifo, vfifo, vtoe_cmd, own, tmp, t0)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        print(f"{time.monotonic() - t0:.0f} s", file=sys.stderr)


def compare(args, start, syms, procs, port, qfifo, vfifo, vtoe_cmd, own, tmp, t0):
    """QEMU to start_kernel, vtoe started with the tree QEMU's kernel got, then the states
    compared one by one; the exit status."""
    q = Stream(qfifo, start)
    gdb = Gdb(port)
    assert gdb.cmd(f"Z1,{start:x},4") == "OK", "QEMU refused the breakpoint at start_kernel"
    stop = gdb.cmd("c")
    print(f"QEMU at start_kernel ({stop[:3]}) after {time.monotonic() - t0:.1f} s", file=sys.stderr)
    gdb.cmd(f"z1,{start:x},4")
    if not own:
        dtb = tmp / "kernel.dtb"
        dtb.write_bytes(kernel_dtb(gdb))
        vtoe_cmd += ["--dtb", str(dtb), "--dtb-as-is"]
    procs.append(subprocess.Popen(vtoe_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    v = Stream(vfifo)
    gdb.monitor("singlestep on")
    gdb.monitor("log cpu,nochain,int")
    gdb.s.sendall(b"$D#44")  # detach: QEMU runs on
    status, base, prev = 0, 0, None
    for step in range(args.steps):
        i = step - base
        a, b = q.get(i), v.get(i)
        if a is None or b is None:
            side = "QEMU" if a is None else "vtoe"
            if a is None and q.async_irq:
                print(f"equal for {step} steps from start_kernel, up to QEMU's first "
                      f"asynchronous interrupt")
            else:
                print(f"{side}'s log ended after {step} steps")
                status = 2
            break
        if a != b:
            print(f"divergence before step {step} from start_kernel, after the instruction "
                  f"at 0x{prev[15]:08x} ({where(syms, prev[15])}) in {mode(prev)} mode "
                  f"(differs: {', '.join(f'r{k}' if k < 16 else 'cpsr' for k in range(17) if a[k] != b[k])})"
                  f"\n  qemu {describe(a)}\n  vtoe {describe(b)}")
            status = 1
            break
        prev = a
        if step % 500_000 == 0:
            print(f"{step} steps equal ({time.monotonic() - t0:.0f} s)", file=sys.stderr,
                  flush=True)
        if i >= 1_000_000:  # keep the memory bounded
            q.trim(i)
            v.trim(i)
            base += i
    else:
        print(f"equal for {args.steps} steps from start_kernel (0x{start:08x})")
    return status


if __name__ == "__main__":
    sys.exit(main())
