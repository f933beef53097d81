#!/usr/bin/env python3
"""The folders are the architecture: a folder may include only itself and the folders before it.

The order is the one the top-level CMakeLists.txt adds the folders in (bottom-up), so the rule is
written once. Every `#include "a/b/c.h"` of every source under those folders is checked; an include
that points up (or sideways to a later folder) is reported with file and line, and so is an include
of a project header that does not exist. Exit status 1 on any violation.

    python3 tests/architecture/check_layers.py [--root DIR]
"""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_order(root: Path):
    text = (root / "CMakeLists.txt").read_text()
    m = re.search(r"foreach\(dir\s+([\w/\s]+?)\)", text)
    if not m:
        raise SystemExit("check_layers: no `foreach(dir ...)` folder list in CMakeLists.txt")
    return m.group(1).split()


def owner(path: str, layers):
    """The layer a repository-relative path belongs to (longest matching folder), or None."""
    best = None
    for layer in layers:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def check(root: Path):
    layers = layer_order(root)
    rank = {layer: i for i, layer in enumerate(layers)}
    problems = []
    for layer in layers:
        for src in sorted((root / layer).rglob("*")):
            if src.suffix not in (".h", ".hpp", ".cpp", ".cc") or not src.is_file():
                continue
            rel = src.relative_to(root).as_posix()
            here = owner(rel, layers)
            if here != layer:  # a nested layer (models/tcpip inside models/) is checked as itself
                continue
            for n, line in enumerate(src.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                target = owner(inc, layers)
                if target is None:
                    if "/" in inc and not (root / inc).exists() and not (src.parent / inc).exists():
                        problems.append(f"{rel}:{n}: includes \"{inc}\", which is in no layer")
                    continue
                if not (root / inc).exists():
                    problems.append(f"{rel}:{n}: includes \"{inc}\", which does not exist")
                if rank[target] > rank[here]:
                    problems.append(f"{rel}:{n}: {here}/ includes {inc} from {target}/, "
                                    f"which comes after it in the layer order")
    problems += check_links(root, layers, rank)
    return layers, problems


def check_links(root: Path, layers, rank):
    """The libraries each folder's CMakeLists.txt links obey the same order."""
    lib_layer, links = {}, []
    for layer in layers:
        cm = root / layer / "CMakeLists.txt"
        if not cm.exists():
            continue
        text = cm.read_text()
        for name in re.findall(r"add_(?:library|executable)\(\s*(\w+)", text):
            lib_layer[name] = layer
        for m in re.finditer(r"target_link_libraries\(\s*(\w+)([^)]*)\)", text):
            links += [(layer, m.group(1), dep) for dep in m.group(2).split()]
    problems = []
    for layer, target, dep in links:
        there = lib_layer.get(dep)
        if there is not None and rank[there] > rank[layer]:
            problems.append(f"{layer}/CMakeLists.txt: {target} links {dep} from {there}/, "
                            f"which comes after it in the layer order")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    a = ap.parse_args()
    layers, problems = check(a.root)
    if problems:
        print("\n".join(problems))
        print(f"check_layers: {len(problems)} include(s) break the layer order "
              f"({' < '.join(layers)})")
        return 1
    print(f"check_layers: {len(layers)} layers, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
