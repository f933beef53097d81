"""`vtoe system run` ended by hand or given a file it cannot read: it says where the core was and
keeps its --stats file, or names the file. Needs no cross compiler: the program is a zImage-shaped
image written here (a branch over the header, the magic at 0x24, a branch to itself at 0x40)."""
import json
import signal
import struct
import subprocess
import time

from system_paths import vtoe_binary

LOOP = 0xEAFFFFFE  # b .


def loop_image(path):
    words = [0] * 16
    words[0] = 0xEA00000E  # b 0x40
    words[9] = 0x016F2818  # zImage magic
    path.write_bytes(struct.pack("<17I", *words, LOOP))
    return path


def test_ctrl_c_says_where_the_core_was_and_keeps_the_stats(tmp_path):
    stats = tmp_path / "stats.json"
    proc = subprocess.Popen([str(vtoe_binary()), "system", "run", "--kernel",
                             str(loop_image(tmp_path / "loop.bin")), "--stats", str(stats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # the loop runs forever: nothing ends it but the signal
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    # The kernel is loaded at RAM + 0x10000; the loop is its instruction at 0x40.
    assert "stopped by SIGINT at 0x40010040 in SVC mode (A32" in err, err
    assert "statistics in " + str(stats) in err, err
    s = json.loads(stats.read_text())
    assert s["stop"] == "interrupted" and s["exit_status"] == 130
    assert s["instructions"] > 1000 and f"after {s['instructions']} instructions" in err


def test_a_kernel_that_is_a_directory_is_named(tmp_path):
    proc = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == f"vtoe: system run: kernel {tmp_path}: is a directory\n"


def test_an_initrd_that_cannot_be_read_is_named(tmp_path):
    missing = tmp_path / "initrd.cpio"
    proc = subprocess.run([str(vtoe_binary()), "system", "run", "--kernel",
                           str(loop_image(tmp_path / "loop.bin")), "--initrd", str(missing)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"initrd {missing}: cannot open: No such file or directory" in proc.stderr
