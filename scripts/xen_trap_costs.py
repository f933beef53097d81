#!/usr/bin/env python3
"""What a trap costs a real hypervisor: Debian's Xen 4.17 boots Debian's kernel as dom0 on the
ISS (docs/system.md, "Xen: dom0 to its init"), and the ISS counts, for every entry to Hyp mode
from another mode, the instructions Xen retires until it returns out of Hyp mode, by cause (the
HSR exception class, or a physical interrupt) and by instruction class (`vtoe system run
--stats`: hyp_handling). This script prints them per trap, as cycles at the ISS mode's stated
CPI (platform.iss.cpi.*) and as time at platform.cpu_freq, beside the hypervisor model's
constants for the same work (hypervisor.costs.*, each trap paying `exit` plus its own).

    scripts/xen_trap_costs.py [--vtoe BIN] [--from STATS.json] [--markdown]

Without --from it runs the boot (build/xen/xen, build/linux/vmlinuz and initrd.cpio: make
linux-images fetches them). What this measures is Xen's handling during dom0's boot (the
virtual GIC's distributor emulated on stage-2 data aborts, console and event-channel hypercalls,
the timer's and the UART's interrupts injected), with the caches' stalls left out: evidence
for the model's orders of magnitude, not the TOE's traps under DE (docs/calibration.md)."""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
XEN = ROOT / "build" / "xen" / "xen"
KERNEL = ROOT / "build" / "linux" / "vmlinuz"
INITRD = ROOT / "build" / "linux" / "initrd.cpio"

# Cause -> (what it is, the model's constants its handling stands for).
CAUSES = {
    "0x24": ("stage-2 data abort (MMIO emulated)", ["exit", "data_abort"]),
    "irq": ("physical IRQ (acknowledged, injected as virtual)", ["exit", "irq", "vgic_inject"]),
    "0x12": ("HVC (hypercall)", ["exit", "hvc"]),
    "0x01": ("trapped WFI/WFE", ["exit", "wfi"]),
    "0x03": ("trapped CP15 access (set/way cache maintenance)", ["exit"]),
    "0x20": ("stage-2 prefetch abort", ["exit"]),
    "0x05": ("trapped CP14 debug register", ["exit"]),
    "0x08": ("trapped VMRS of an ID register", ["exit"]),
}


def key_defaults(vtoe):
    """The defaults of every scenario key, from `vtoe keys` (name, type, default, ...)."""
    out = subprocess.run([str(vtoe), "keys"], capture_output=True, text=True, check=True).stdout
    defaults = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and "." in parts[0]:
            defaults[parts[0]] = parts[2]
    return defaults


def boot_stats(vtoe, stats):
    for f, how in ((XEN, "make linux-images fetches Debian's Xen"),
                   (KERNEL, "make linux-images"), (INITRD, "make linux-images")):
        if not f.exists():
            sys.exit(f"xen_trap_costs: {f} is missing ({how})")
    cmd = [str(vtoe), "system", "run", "--virtualization", "--memory", "2GiB", "--kernel", str(XEN),
           "--append", "dom0_mem=512M console=dtuart dtuart=/pl011@9000000",
           "--device", f"guest-loader,addr=0x60000000,kernel={KERNEL},bootargs=console=hvc0",
           "--device", f"guest-loader,addr=0x64000000,initrd={INITRD}",
           "--max-instructions", "6000000000", "--stats", str(stats)]
    print("xen_trap_costs: " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def costs(stats, defaults):
    """One row per cause Xen handled: traps, instructions and cycles per trap, the model's."""
    cpi = {k.rsplit(".", 1)[1]: int(v) for k, v in defaults.items()
           if k.startswith("platform.iss.cpi.")}
    freq = defaults.get("platform.cpu_freq", "2GHz")
    hz = float(freq[:-3]) * 1e9 if freq.endswith("GHz") else float(freq[:-3]) * 1e6
    rows = []
    for cause, h in stats.get("hyp_handling", {}).items():
        n = h["handled"]
        if not n:
            continue
        missing = set(h["by_class"]) - set(cpi)
        if missing:
            sys.exit(f"xen_trap_costs: no platform.iss.cpi for {sorted(missing)}")
        cycles = sum(count * cpi[cls] for cls, count in h["by_class"].items())
        what, keys = CAUSES.get(cause, (f"HSR class {cause}", ["exit"]))
        model = sum(float(defaults[f"hypervisor.costs.{k}"]) for k in keys)
        rows.append({"cause": cause, "what": what, "traps": n,
                     "instructions": h["instructions"] / n, "cycles": cycles / n,
                     "us": cycles / n / hz * 1e6, "model_keys": keys, "model_cycles": model})
    rows.sort(key=lambda r: -r["traps"] * r["cycles"])
    return rows, freq


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vtoe", default=str(ROOT / "build" / "release" / "app" / "vtoe"))
    ap.add_argument("--from", dest="source", help="a --stats file of a Xen boot (else: boot)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    defaults = key_defaults(args.vtoe)
    if args.source:
        stats = json.loads(Path(args.source).read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "xen-stats.json"
            boot_stats(args.vtoe, path)
            stats = json.loads(path.read_text())
    rows, freq = costs(stats, defaults)
    if not rows:
        sys.exit("xen_trap_costs: the stats hold no hyp_handling (not a run with a hypervisor)")
    head = ["cause", "what", "traps", "instructions / trap", f"cycles / trap (at {freq}: us)",
            "model: hypervisor.costs", "model cycles", "measured / model"]
    lines = []
    for r in rows:
        lines.append([r["cause"], r["what"], str(r["traps"]), f"{r['instructions']:.0f}",
                      f"{r['cycles']:.0f} ({r['us']:.2f})", " + ".join(r["model_keys"]),
                      f"{r['model_cycles']:.0f}", f"{r['cycles'] / r['model_cycles']:.2f}"])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(head, *lines)]
        for line in [head] + lines:
            print("  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip())


if __name__ == "__main__":
    main()
