"""scripts/regmap.py: the committed C++ headers, C headers and docs/registers.md are what the
devices' descriptions generate; a hand edit or a stale output fails; bad descriptions fail with
the file and the key; the C headers compile for ARM code with their struct sizes checked."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import regmap  # noqa: E402


def run(root: Path, *args):
    return subprocess.run([sys.executable, str(root / "scripts" / "regmap.py"), *args],
                          capture_output=True, text=True)


def test_committed_outputs_match_the_descriptions():
    r = run(ROOT, "check")
    assert r.returncode == 0, r.stderr


def copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for d in ("models", "platform"):
        for src in (ROOT / d).rglob("*.regs.yaml"):
            dst = root / src.relative_to(ROOT)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    for f in regmap.outputs():
        dst = root / f.relative_to(ROOT)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dst)
    (root / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "regmap.py", root / "scripts")
    return root


def test_a_hand_edit_of_an_output_is_found(tmp_path):
    root = copy_tree(tmp_path)
    assert run(root, "check").returncode == 0
    header = root / "target" / "include" / "vtoe" / "toe.h"
    header.write_text(header.read_text().replace("#define TOE_CTRL 0x0u", "#define TOE_CTRL 0x8u"))
    r = run(root, "check")
    assert r.returncode == 1
    assert "target/include/vtoe/toe.h" in r.stderr
    assert run(root, "generate").returncode == 0
    assert "#define TOE_CTRL 0x0u" in header.read_text()


def test_a_description_change_without_regenerating_is_found(tmp_path):
    root = copy_tree(tmp_path)
    desc = root / "models" / "toe" / "toe.regs.yaml"
    desc.write_text(desc.read_text().replace("offset: 0x004\n        w1c: 0x1", "offset: 0x008\n        w1c: 0x1"))
    r = run(root, "check")
    assert r.returncode == 1
    for out in ("models/toe/descriptors.h", "target/include/vtoe/toe.h", "docs/registers.md"):
        assert out in r.stderr


@pytest.mark.parametrize("text, message", [
    ("device: x\ntitle: t\nnamespace: n\nc_prefix: X\n", "missing key `cpp_header`"),
    ("device: x\ntitle: t\nnamespace: n\nc_prefix: X\ncpp_header: a.h\n"
     "banks:\n  - name: b\n    size: 0x10\n    registers:\n      - {name: R, offset: 0x10}\n",
     "past the bank's size"),
    ("device: x\ntitle: t\nnamespace: n\nc_prefix: X\ncpp_header: a.h\n"
     "banks:\n  - name: b\n    size: 0x10\n    registers:\n      - {name: R}\n",
     "register R: missing key `offset`"),
    ("device: x\ntitle: t\nnamespace: n\nc_prefix: X\ncpp_header: a.h\n"
     "banks:\n  - name: b\n    size: 0x10\n    registers:\n      - {name: R, offset: 0, access: [8]}\n",
     "access size 8 does not fit a 4-byte register"),
    ("device: x\ntitle: t\nnamespace: n\nc_prefix: X\ncpp_header: a.h\n"
     "banks:\n  - name: b\n    size: 0x10\n    registers:\n      - {name: R, offset: 0}\n"
     "      - {name: R, offset: 4}\n", "registers named twice: R"),
])
def test_bad_descriptions_name_the_file_and_the_key(tmp_path, text, message):
    path = tmp_path / "bad.regs.yaml"
    path.write_text(text)
    with pytest.raises(regmap.DescriptionError) as e:
        regmap.load(path)
    assert str(path) in str(e.value) and message in str(e.value), str(e.value)


def test_the_generated_cpp_tables_follow_the_description():
    toe = next(d for d in regmap.descriptions() if d["device"] == "toe")
    header = regmap.cpp_header(toe)
    # The ring registers are one strided array per register of the group.
    assert 'kRingTail{"RING_TAIL", 0x110, 4, 4, 0x20,' in header
    assert "constexpr std::uint64_t kRingTail = 0x10;" in header
    assert "constexpr std::uint64_t kRegionSize = 0x21000;" in header
    assert "static_assert(sizeof(EcqDesc) == 32" in header


@pytest.mark.skipif(shutil.which("arm-linux-gnueabihf-gcc") is None, reason="no ARM cross compiler")
def test_the_c_headers_compile_as_arm_c99(tmp_path):
    src = tmp_path / "all.c"
    src.write_text("".join(f'#include "vtoe/{h.name}"\n'
                           for h in sorted((ROOT / "target" / "include" / "vtoe").glob("*.h"))) +
                   "int main(void) { struct toe_send_desc d = {0}; d.length = TOE_DESC_BYTES;\n"
                   "  return (int)(d.length + GICD_SGIR + PL011_FR + VIRT_UART_BASE) & 1; }\n")
    r = subprocess.run(["arm-linux-gnueabihf-gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c",
                        f"-I{ROOT / 'target' / 'include'}", str(src), "-o", str(tmp_path / "all.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
