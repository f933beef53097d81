#!/usr/bin/env python3
"""One description per device, three outputs: the C++ register bank's header, the C header ARM
code includes, and the docs' register tables.

Each `*.regs.yaml` under models/ and platform/ describes a device's register banks (registers,
register groups, fields), and the contract's constants, enums and structs. From it come:

  cpp_header   (the path the description names)  constants, RegisterInfo tables, enums, structs
  c_header     (target/include/vtoe/NAME.h)      the same as C99 #defines, enums and structs
                                                 (for bare metal, Linux user space and the kernel)
  docs/registers.md                              one section per device

    scripts/regmap.py generate   # writes every output
    scripts/regmap.py check      # exit 1 naming each output that differs from its description

The outputs are committed (the C++ build and the ARM build need no Python); `make test` runs
`check`, so an output edited by hand or a description changed without regenerating fails.
"""
import argparse
import re
import textwrap
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "registers.md"
TYPES = {  # description type -> (C++, C, bytes)
    "u8": ("std::uint8_t", "uint8_t", 1),
    "u16": ("std::uint16_t", "uint16_t", 2),
    "u32": ("std::uint32_t", "uint32_t", 4),
    "u64": ("std::uint64_t", "uint64_t", 8),
    "i32": ("std::int32_t", "int32_t", 4),
    "int": ("int", "int", 4),
}
ACCESS = {1: "core::kAccess8", 2: "core::kAccess16", 4: "core::kAccess32", 8: "core::kAccess64"}


class DescriptionError(Exception):
    pass


def camel(snake: str) -> str:
    """RING_ADDR_LO -> RingAddrLo."""
    return "".join(p[:1].upper() + p[1:].lower() for p in snake.split("_") if p)


def upper_snake(name: str) -> str:
    """CmdDone -> CMD_DONE; ADDR_LO stays."""
    if name.isupper():
        return name
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def num(v, where):
    if isinstance(v, bool) or not isinstance(v, int):
        raise DescriptionError(f"{where}: expected an integer, got {v!r}")
    return v


def hexs(v: int) -> str:
    return f"0x{v:x}"


def load(path: Path):
    try:
        d = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise DescriptionError(f"{path}: {e}")
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if not isinstance(d, dict):
        raise DescriptionError(f"{rel}: not a mapping of keys")
    for key in ("device", "title", "namespace", "c_prefix", "cpp_header"):
        if key not in d:
            raise DescriptionError(f"{rel}: missing key `{key}`")
    d["_path"] = rel
    d.setdefault("c_header", f"target/include/vtoe/{d['device']}.h")
    d.setdefault("banks", [])
    d.setdefault("constants", [])
    d.setdefault("enums", [])
    d.setdefault("structs", [])
    d.setdefault("includes", [])
    for b in d["banks"]:
        flatten_bank(d, b)
    return d


def need(mapping, key, where):
    if not isinstance(mapping, dict) or key not in mapping:
        raise DescriptionError(f"{where}: missing key `{key}`")
    return mapping[key]


def flatten_bank(d, bank):
    """A bank's registers with groups expanded: each entry one RegisterInfo."""
    where = f"{d['_path']}: bank {bank.get('name')}"
    bank.setdefault("base", 0)
    bank.setdefault("count", 1)
    bank.setdefault("stride", bank.get("size", 0))
    if "size" not in bank:
        raise DescriptionError(f"{where}: missing key `size`")
    flat = []
    for item in bank.get("registers", []):
        if "group" in item:
            g = item
            gw = f"{where}: group {g['group']}"
            count, stride, base = num(g.get("count", 1), gw), num(g.get("stride", 0), gw), num(need(g, "offset", gw), gw)
            for r in need(g, "registers", gw):
                flat.append(reg_info(r, f"{g['group']}_{need(r, 'name', gw)}", base + num(need(r, "offset", gw), gw), count,
                                     stride, gw, group=g["group"]))
        else:
            flat.append(reg_info(item, need(item, "name", where),
                                 num(need(item, "offset", f"{where}: register {item['name']}"), where), item.get("count", 1),
                                 item.get("stride", 0), where))
    if bank.get("prefix"):  # registers named after their bank (GICD_CTLR, GICC_CTLR)
        for r in flat:
            r["full"] = f"{bank['prefix']}_{r['full']}"
            r["prefixed"] = True
    names = [r["full"] for r in flat]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise DescriptionError(f"{where}: registers named twice: {', '.join(sorted(dup))}")
    bank["_flat"] = sorted(flat, key=lambda r: r["offset"])
    end = max((r["offset"] + (r["count"] - 1) * r["stride"] + r["bytes"] for r in flat), default=0)
    if end > bank["size"]:
        raise DescriptionError(f"{where}: registers reach {hexs(end)}, past the bank's size {hexs(bank['size'])}")


def reg_info(r, full, offset, count, stride, where, group=None):
    where = f"{where}: register {r.get('name')}"
    width = num(r.get("bytes", 4), where)
    if width not in (1, 2, 4, 8):
        raise DescriptionError(f"{where}: bytes must be 1, 2, 4 or 8")
    access = r.get("access", [width])
    for a in access:
        if a not in (1, 2, 4, 8) or a > width:
            raise DescriptionError(f"{where}: access size {a} does not fit a {width}-byte register")
    stride = stride or width
    mode = r.get("mode", "rw")
    if mode not in ("rw", "ro", "wo"):
        raise DescriptionError(f"{where}: mode must be rw, ro or wo")
    fields = []
    for f in r.get("fields", []):
        bits = need(f, "bits", where)
        lo, hi = (bits, bits) if isinstance(bits, int) else tuple(int(x) for x in str(bits).split(":")[::-1])
        fields.append({"name": need(f, "name", where), "lo": lo, "hi": hi, "description": f.get("description", "")})
    return {
        "name": r["name"], "full": full, "group": group, "offset": offset, "bytes": width,
        "count": num(count, where), "stride": num(stride, where), "reset": num(r.get("reset", 0), where),
        "read_only": num(r.get("read_only", 0), where), "w1c": num(r.get("w1c", 0), where),
        "access": sorted(set(access)), "mode": mode, "fields": fields,
        "description": " ".join(str(r.get("description", "")).split()),
    }


HEADER_NOTE = "Generated by scripts/regmap.py from {src}; do not edit (edit the description)."


def cpp_header(d) -> str:
    ns = d["namespace"]
    out = [f"// {d['title']}.", f"// {HEADER_NOTE.format(src=d['_path'])}",
           "// clang-format off", "#pragma once", "", "#include <cstdint>", ""]
    if d["banks"]:
        out += ['#include "models/core/register.h"', ""]
    for inc in d["includes"]:
        out.append(f'#include "{inc}"')
    out += [f"namespace {ns} {{", ""]
    regs_ns = d.get("cpp_register_namespace", "reg")
    if d["banks"] or any(c.get("register") for c in d["constants"]):
        if regs_ns:
            out += [f"namespace {regs_ns} {{"]
        for b in d["banks"]:
            bn = camel(b["name"])
            out.append(f"// Bank {b['name']}: {' '.join(str(b.get('description', '')).split())}")
            out.append(f"constexpr std::uint64_t k{bn}Base = {hexs(b['base'])};")
            out.append(f"constexpr std::uint64_t k{bn}Size = {hexs(b['size'])};")
            if b["count"] > 1:
                out.append(f"constexpr std::uint64_t k{bn}Stride = {hexs(b['stride'])};")
            groups = {}
            for r in b["_flat"]:
                if r["group"]:
                    groups.setdefault(r["group"], []).append(r)
            emitted_groups = set()
            for r in b["_flat"]:
                if r["group"]:
                    g = r["group"]
                    if g not in emitted_groups:
                        emitted_groups.add(g)
                        first = min(x["offset"] for x in groups[g])
                        out.append(f"constexpr std::uint64_t k{camel(g)}Base = {hexs(first)};")
                        out.append(f"constexpr std::uint64_t k{camel(g)}Stride = {hexs(r['stride'])};")
                    out.append(f"constexpr std::uint64_t k{camel(r['full'])} = {hexs(r['offset'] - first_of(groups[g]))};"
                               f"  // within one {g.lower()}")
                else:
                    out.append(f"constexpr std::uint64_t k{camel(r['full'])} = {hexs(r['offset'])};")
                for f in r["fields"]:
                    mask = ((1 << (f["hi"] - f["lo"] + 1)) - 1) << f["lo"]
                    out.append(f"constexpr std::uint{8 * r['bytes']}_t k{camel(r['full'])}{camel(f['name'])} = "
                               f"{hexs(mask)}u;")
            out.append("")
        if d["banks"]:
            end = max(b["base"] + b["count"] * b["stride"] if b["count"] > 1 else b["base"] + b["size"]
                      for b in d["banks"])
            out += [f"constexpr std::uint64_t kRegionSize = {hexs(end)};  // every bank's window", ""]
        out += constants(c for c in d["constants"] if c.get("register"))
        if regs_ns:
            out += [f"}}  // namespace {regs_ns}", ""]
    out += constants(c for c in d["constants"] if not c.get("register"))
    for e in d["enums"]:
        et = TYPES[e.get("type", "u32")][0]
        if e.get("description"):
            out.append(f"// {' '.join(str(e['description']).split())}")
        out.append(f"enum class {e['name']} : {et} {{")
        for v in e["values"]:
            c = f"  // {' '.join(str(v['description']).split())}" if v.get("description") else ""
            out.append(f"  {v['name']} = {v['value']},{c}")
        out += ["};", ""]
    for s in d["structs"]:
        if s.get("description"):
            out.append(f"// {' '.join(str(s['description']).split())}")
        out.append(f"struct {s['name']} {{")
        for f in s["fields"]:
            t, n = parse_type(f["type"], f"{d['_path']}: struct {s['name']}")
            dim = f"[{n}]" if n else ""
            c = f"  // {' '.join(str(f['description']).split())}" if f.get("description") else ""
            out.append(f"  {TYPES[t][0]} {f['name']}{dim};{c}")
        out += ["};", f"static_assert(sizeof({s['name']}) == {s['bytes']}, \"{s['name']} is {s['bytes']} bytes\");", ""]
    if d["banks"]:
        out += ["// The registers as the model's core::Reg fields take them (offsets within their bank).",
                "namespace reg_info {"]
        for b in d["banks"]:
            for r in b["_flat"]:
                acc = " | ".join(ACCESS[a] for a in r["access"])
                out.append(
                    f"inline constexpr core::RegisterInfo k{camel(r['full'])}{{\"{r['full']}\", {hexs(r['offset'])}, "
                    f"{r['bytes']}, {r['count']}, {hexs(r['stride'])}, {hexs(r['reset'])}, {hexs(r['read_only'])}, "
                    f"{hexs(r['w1c'])}, {acc}, {str(r['mode'] != 'wo').lower()}, {str(r['mode'] != 'ro').lower()}, "
                    f"{cstr(r['description'])}}};")
            names = ", ".join(f"&k{camel(r['full'])}" for r in b["_flat"])
            out.append(f"inline constexpr const core::RegisterInfo* k{camel(b['name'])}Bank[] = {{{names}}};")
        out += ["}  // namespace reg_info", ""]
    out += [f"}}  // namespace {ns}", ""]
    return "\n".join(out)


def wrap_comments(text: str, lead: str = "// ", width: int = 100) -> str:
    """Comment lines longer than `width` wrapped, with the indentation kept."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if len(line) <= width or not stripped.startswith(lead):
            out.append(line)
            continue
        indent = line[: len(line) - len(stripped)] + lead
        out += textwrap.wrap(stripped[len(lead):], width=width, initial_indent=indent,
                             subsequent_indent=indent, break_long_words=False)
    return "\n".join(out)


def constants(cs):
    out = []
    for c in cs:
        ctype = TYPES[c.get("type", "u32")][0]
        if c.get("description"):
            out.append(f"// {' '.join(str(c['description']).split())}")
        out.append(f"constexpr {ctype} k{camel(c['name'])} = {format_value(c)};")
    return out + ([""] if out else [])


def first_of(regs):
    return min(r["offset"] for r in regs)


def cstr(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_value(c):
    v = c["value"]
    if isinstance(v, int):
        t = c.get("type", "u32")
        suffix = "ull" if t == "u64" else ("u" if t.startswith("u") else "")
        return (hexs(v) if c.get("hex") else str(v)) + suffix
    return str(v)


def parse_type(t, where):
    m = re.fullmatch(r"(\w+)(?:\[(\d+)\])?", t)
    if not m or m.group(1) not in TYPES:
        raise DescriptionError(f"{where}: unknown type {t!r}")
    return m.group(1), int(m.group(2)) if m.group(2) else 0


def c_header(d) -> str:
    p = d["c_prefix"]
    guard = f"VTOE_{d['device'].upper()}_H"
    out = [f"/* {d['title']}.", f"   {HEADER_NOTE.format(src=d['_path'])} */",
           f"#ifndef {guard}", f"#define {guard}", "",
           # The kernel has no <stdint.h>; <linux/types.h> gives the same uintN_t (target/linux).
           "#ifdef __KERNEL__", "#include <linux/types.h>", "#else", "#include <stdint.h>",
           "#endif", ""]
    for b in d["banks"]:
        bn = f"{p}_{b['name'].upper()}"
        out.append(f"/* Bank {b['name']}: {' '.join(str(b.get('description', '')).split())} */")
        out.append(f"#define {bn}_BASE {hexs(b['base'])}u")
        out.append(f"#define {bn}_SIZE {hexs(b['size'])}u")
        if b["count"] > 1:
            out.append(f"#define {bn}_STRIDE {hexs(b['stride'])}u")
        seen = set()
        for r in b["_flat"]:
            name = r["full"] if r.get("prefixed") else f"{p}_{r['full']}"
            if r["group"]:
                g = r["group"]
                members = [x for x in b["_flat"] if x["group"] == g]
                if g not in seen:
                    seen.add(g)
                    out.append(f"#define {p}_{g}_BASE {hexs(first_of(members))}u")
                    out.append(f"#define {p}_{g}_STRIDE {hexs(r['stride'])}u")
                out.append(f"#define {name} {hexs(r['offset'] - first_of(members))}u /* within one {g.lower()} */")
            else:
                out.append(f"#define {name} {hexs(r['offset'])}u")
                if r["count"] > 1:
                    out.append(f"#define {name}_COUNT {r['count']}u")
                    out.append(f"#define {name}_STRIDE {hexs(r['stride'])}u")
            for f in r["fields"]:
                mask = ((1 << (f["hi"] - f["lo"] + 1)) - 1) << f["lo"]
                out.append(f"#define {name}_{f['name']} {hexs(mask)}u")
                if f["hi"] > f["lo"]:
                    out.append(f"#define {name}_{f['name']}_SHIFT {f['lo']}")
        out.append("")
    for c in d["constants"]:
        v = c["value"]
        if isinstance(v, int):
            t = c.get("type", "u32")
            # 32-bit ARM code casts addresses to pointers: a u64 that fits is an unsigned int.
            wide = t == "u64" and v > 0xFFFFFFFF
            v = (hexs(v) if c.get("hex") else str(v)) + ("ull" if wide else "u" if t.startswith("u") else "")
        out.append(f"#define {p}_{c['name']} {v}")
    if d["constants"]:
        out.append("")
    for e in d["enums"]:
        ep = e.get("c_prefix", f"{p}_{upper_snake(e['name'])}")
        out.append(f"/* {e['name']} */")
        for v in e["values"]:
            out.append(f"#define {ep}_{upper_snake(v['name'])} ({v['value']})")
        out.append("")
    for s in d["structs"]:
        out.append(f"struct {s['c_name']} {{")
        for f in s["fields"]:
            t, n = parse_type(f["type"], d["_path"])
            dim = f"[{n}]" if n else ""
            out.append(f"  {TYPES[t][1]} {f['name']}{dim};")
        out += ["};", f"_Static_assert(sizeof(struct {s['c_name']}) == {s['bytes']}, \"{s['c_name']} size\");", ""]
    out += [f"#endif /* {guard} */", ""]
    names = [m.group(1) for m in re.finditer(r"^#define (\w+) ", "\n".join(out), re.M)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DescriptionError(f"{d['_path']}: C names defined twice: {', '.join(twice)}")
    return "\n".join(out)


def docs(descriptions) -> str:
    out = ["# Registers", "",
           "Every register target of the platform, from the descriptions its models and its ARM code are",
           "generated from (`scripts/regmap.py generate`; `make test` checks that this page, the C++ headers",
           "and the C headers under `target/include/vtoe/` match them). Offsets are bytes within the bank;",
           "a bank repeated `count` times sits at `base + i * stride`. Access: the sizes in bytes a bus",
           "access may have; any other access, an offset with no register, a write to an `ro` register or",
           "a read of a `wo` one is a bad access, counted and answered by the device's bad-access policy",
           "([core.md](core.md#registers-and-peripherals)).", ""]
    for d in descriptions:
        if not d["banks"]:
            continue
        out += [f"## {d['title']}", "", f"Description: `{d['_path']}`; C header: `{d['c_header']}`.", ""]
        if d.get("description"):
            out += [" ".join(str(d["description"]).split()), ""]
        for b in d["banks"]:
            rep = f", {b['count']} of them every {hexs(b['stride'])}" if b["count"] > 1 else ""
            out += [f"### Bank `{b['name']}` (base {hexs(b['base'])}, {hexs(b['size'])} bytes{rep})", ""]
            if b.get("description"):
                out += [" ".join(str(b["description"]).split()), ""]
            out += ["| Offset | Register | Access | Mode | Reset | Description |", "|---|---|---|---|---|---|"]
            for r in b["_flat"]:
                off = hexs(r["offset"])
                if r["count"] > 1:
                    off += f" + n × {hexs(r['stride'])} (n < {r['count']})"
                desc = r["description"]
                if r["w1c"]:
                    desc += f" Write 1 to clear: {hexs(r['w1c'])}."
                if r["fields"]:
                    desc += " Fields: " + "; ".join(
                        f"{f['name']} [{f['hi']}:{f['lo']}]" + (f" {f['description']}" if f["description"] else "")
                        if f["hi"] != f["lo"] else f"{f['name']} [{f['lo']}]" + (f" {f['description']}" if f["description"] else "")
                        for f in r["fields"])
                out.append(f"| {off} | {r['full']} | {'/'.join(str(a) for a in r['access'])} | {r['mode']} | "
                           f"{hexs(r['reset'])} | {desc.strip()} |")
            out.append("")
        for st in d["structs"]:
            desc = " ".join(str(st.get("description", "")).split())
            out += [f"### `{st['name']}` (C: `struct {st['c_name']}`, {st['bytes']} bytes)", ""]
            if desc:
                out += [desc, ""]
            out += ["| Byte | Field | Type | Meaning |", "|---|---|---|---|"]
            at = 0
            for f in st["fields"]:
                t, n = parse_type(f["type"], d["_path"])
                size = TYPES[t][2]
                at = (at + size - 1) // size * size  # natural alignment, as the C compiler lays it out
                ty = f"{t} × {n}" if n else t
                out.append(f"| {at} | `{f['name']}` | {ty} | {' '.join(str(f.get('description', '')).split())} |")
                at += size * (n or 1)
            out.append("")
        for e in d["enums"]:
            ep = e.get("c_prefix", f"{d['c_prefix']}_{upper_snake(e['name'])}")
            desc = " ".join(str(e.get("description", "")).split())
            out += [f"### `{e['name']}` (C: `{ep}_*`)" + (f": {desc}" if desc else ""), "",
                    "| Name | Value | Meaning |", "|---|---|---|"]
            for v in e["values"]:
                out.append(f"| `{v['name']}` | {v['value']} | {' '.join(str(v.get('description', '')).split())} |")
            out.append("")
        if d["constants"] and d["banks"]:
            out += ["| Constant | Value | Meaning |", "|---|---|---|"]
            for c in d["constants"]:
                out.append(f"| `{d['c_prefix']}_{c['name']}` | {hexs(c['value']) if c.get('hex') else c['value']} | "
                           f"{' '.join(str(c.get('description', '')).split())} |")
            out.append("")
    return "\n".join(out)


def descriptions():
    paths = sorted(list((ROOT / "models").rglob("*.regs.yaml")) + list((ROOT / "platform").rglob("*.regs.yaml")))
    return [load(p) for p in paths]


def outputs():
    ds = descriptions()
    files = {}
    for d in ds:
        files[ROOT / d["cpp_header"]] = wrap_comments(cpp_header(d))
        files[ROOT / d["c_header"]] = c_header(d)
    files[DOCS] = docs(ds)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["generate", "check"])
    a = ap.parse_args()
    try:
        files = outputs()
    except DescriptionError as e:
        print(f"regmap: {e}", file=sys.stderr)
        return 2
    stale = []
    for path, text in files.items():
        rel = path.relative_to(ROOT).as_posix()
        if a.command == "generate":
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                print(f"regmap: wrote {rel}")
        elif not path.exists() or path.read_text() != text:
            stale.append(rel)
    if stale:
        print("regmap: generated from the register descriptions but differ from them (run "
              "scripts/regmap.py generate): " + ", ".join(stale), file=sys.stderr)
        return 1
    if a.command == "check":
        print(f"regmap: {len(files)} outputs match their descriptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
