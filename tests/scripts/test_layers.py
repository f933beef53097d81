"""tests/architecture/check_layers.py: the repository's includes point down, and an upward one fails."""
import subprocess
import sys

from scripts_paths import ROOT

CHECK = ROOT / "tests" / "architecture" / "check_layers.py"


def run(root):
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root)], capture_output=True,
                          text=True)


def test_repository_includes_point_down():
    proc = run(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def fake_tree(tmp_path, model_include):
    (tmp_path / "CMakeLists.txt").write_text(
        "foreach(dir models/core models/toe\n            hypervisor guest)\n  add_subdirectory(${dir})\nendforeach()\n")
    for d in ("models/core", "models/toe", "hypervisor", "guest"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "models/core/module.h").write_text("#pragma once\n")
    (tmp_path / "hypervisor/hypervisor.h").write_text('#include "models/core/module.h"\n')
    (tmp_path / "guest/os.h").write_text('#include "hypervisor/hypervisor.h"\n')
    (tmp_path / "models/toe/toe.cpp").write_text(f'#include <vector>\n#include "{model_include}"\n')
    return tmp_path


def test_downward_includes_pass(tmp_path):
    assert run(fake_tree(tmp_path, "models/core/module.h")).returncode == 0


def test_an_upward_include_fails_naming_file_and_line(tmp_path):
    proc = run(fake_tree(tmp_path, "hypervisor/hypervisor.h"))
    assert proc.returncode == 1
    assert "models/toe/toe.cpp:2: models/toe/ includes hypervisor/hypervisor.h" in proc.stdout


def test_a_missing_project_header_fails(tmp_path):
    proc = run(fake_tree(tmp_path, "models/core/nothing.h"))
    assert proc.returncode == 1
    assert "does not exist" in proc.stdout


def test_an_upward_library_link_fails(tmp_path):
    root = fake_tree(tmp_path, "models/core/module.h")
    (root / "models/toe/CMakeLists.txt").write_text(
        "add_library(vtoe_toe STATIC toe.cpp)\ntarget_link_libraries(vtoe_toe PUBLIC vtoe_core vtoe_hypervisor)\n")
    (root / "hypervisor/CMakeLists.txt").write_text("add_library(vtoe_hypervisor STATIC x.cpp)\n")
    proc = run(root)
    assert proc.returncode == 1
    assert "vtoe_toe links vtoe_hypervisor from hypervisor/" in proc.stdout
