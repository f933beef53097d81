"""`vtoe system run` ended by hand or given a file it cannot read: it says where the core was and
keeps its --stats file, or names the file. Needs no cross compiler: the program is a zImage-shaped
image written here (a branch over the header, the magic at 0x24, then from 0x40: "R\n" to the
PL011 and a branch to itself)."""
import json
import select
import signal
import struct
import subprocess
import time

from system_paths import vtoe_binary

PROGRAM = [0xE3A00409,  # mov r0, #0x09000000 (the PL011's data register)
           0xE3A01052,  # mov r1, #'R'
           0xE5801000,  # str r1, [r0]
           0xE3A0100A,  # mov r1, #'\n'
           0xE5801000,  # str r1, [r0]
           0xEAFFFFFE]  # b . (at 0x54)


def loop_image(path):
    words = [0] * 16
    words[0] = 0xEA00000E  # b 0x40
    words[9] = 0x016F2818  # zImage magic
    path.write_bytes(struct.pack(f"<{16 + len(PROGRAM)}I", *words, *PROGRAM))
    return path


def test_ctrl_c_says_where_the_core_was_and_keeps_the_stats(tmp_path):
    stats = tmp_path / "stats.json"
    proc = subprocess.Popen([str(vtoe_binary()), "system", "run", "--kernel",
                             str(loop_image(tmp_path / "loop.bin")), "--stats", str(stats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Once the program has written to the UART it runs: nothing ends its loop but the signal.
    assert select.select([proc.stdout], [], [], 60)[0], "no output from the program"
    assert proc.stdout.readline() == "R\n"
    time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    # The kernel is loaded at RAM + 0x10000; the loop is its instruction at 0x54.
    assert "stopped by SIGINT at 0x40010054 in SVC mode (A32" in err, err
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
