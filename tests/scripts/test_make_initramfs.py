"""scripts/make_initramfs.py: the boot test's initramfs is a newc archive that cpio(1) reads,
with /init (busybox sh, printing the marker and powering off), busybox and /dev/console."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import make_initramfs  # noqa: E402


def parse_newc(blob):
    """name -> (mode, rdevmajor, rdevminor, data), by the format's definition."""
    out, pos = {}, 0
    while True:
        head = blob[pos:pos + 110]
        assert head[:6] == b"070701", f"bad magic at {pos}"
        f = [int(head[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        namesize, filesize = f[11], f[6]
        name = blob[pos + 110:pos + 110 + namesize - 1].decode()
        pos += 110 + namesize
        pos += -pos % 4
        data = blob[pos:pos + filesize]
        pos += filesize + (-filesize % 4)
        if name == "TRAILER!!!":
            return out
        out[name] = (f[1], f[9], f[10], data)


def test_archive_contents(tmp_path):
    blob = make_initramfs.build(b"\x7fELF fake busybox", marker="MARK")
    entries = parse_newc(blob)
    assert set(entries) == {"bin", "dev", "dev/console", "proc", "sys", "bin/busybox", "init"}
    mode, major, minor, _ = entries["dev/console"]
    assert (mode & 0o170000, major, minor) == (0o020000, 5, 1)
    init = entries["init"][3].decode()
    assert init.startswith("#!/bin/busybox sh\n")
    assert "echo MARK" in init and "poweroff -f" in init
    assert entries["bin/busybox"][3] == b"\x7fELF fake busybox"
    assert entries["init"][0] & 0o111


def test_kallsyms_init_prints_the_symbols_between_markers_before_the_marker():
    init = make_initramfs.init_script("MARK", kallsyms=True).decode()
    begin, table, end = (init.index(make_initramfs.KALLSYMS_BEGIN), init.index("/proc/kallsyms"),
                         init.index(make_initramfs.KALLSYMS_END))
    assert init.index("mount -t proc") < init.index("kptr_restrict") < begin < table < end
    assert end < init.index("echo MARK") < init.index("poweroff -f")
    assert "kallsyms" not in make_initramfs.init_script("MARK").decode()


@pytest.mark.skipif(shutil.which("cpio") is None, reason="cpio is not installed")
def test_cpio_reads_it(tmp_path):
    bb = tmp_path / "busybox"
    bb.write_bytes(b"x" * 1001)  # an odd size: the padding must be right
    out = tmp_path / "initrd.cpio"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_initramfs.py"), "--busybox",
                    str(bb), "--out", str(out)], check=True)
    listing = subprocess.run(["cpio", "-it", "--quiet"], input=out.read_bytes(),
                             capture_output=True, check=True).stdout.decode().split()
    assert listing == ["bin", "dev", "dev/console", "proc", "sys", "bin/busybox", "init"]
