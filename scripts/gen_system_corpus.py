#!/usr/bin/env python3
"""Generates the system-mode corpus (issue 43, item 2): bare-metal ARMv7-A programs, one per
instruction family, instruction set (A32, T32) and start mode (SVC without the Virtualization
Extensions, Hyp with them), each made of many cases. A case puts the core in a known state (every
general and banked register, the SPSRs, HCR/HSTR/HCPTR/CPACR), enters a mode (every mode, legal
or not for the instruction), executes the instruction under test and returns to the harness with
SVC; whatever the instruction does instead (an Undefined Instruction, an abort, a trap to Hyp
mode, an exception return elsewhere) lands in a handler that reads the exception's syndrome and
fault registers into general registers and goes back to the harness too. Before each case the
harness reads every banked register (MRS banked), every SPSR and the CP15 registers software can
read into general registers, so that a lockstep comparison of r0-r15 and CPSR after every
instruction (tests/system/test_system_corpus.py, against qemu-system-arm 7.2) compares them too.

    scripts/gen_system_corpus.py OUT_DIR [--only NAME,...]  writes OUT_DIR/NAME.S and builds
                                                            OUT_DIR/NAME.elf (arm-linux-gnueabihf-gcc)
    scripts/gen_system_corpus.py --list                     prints the programs' names

A program's name is FAMILY-ISA-START (for example `srs-t32-hyp`); START `hyp` runs on
`-M virt,virtualization=on` (vtoe: --virtualization), `svc` without. Deterministic: the random
register values come from a generator seeded with the program's name."""
import argparse
import random
import subprocess
import sys
import zlib
from pathlib import Path

USR, FIQ, IRQ, SVC, MON, ABT, HYP, UND, SYS = 0x10, 0x11, 0x12, 0x13, 0x16, 0x17, 0x1A, 0x1B, 0x1F
MODE_NAMES = {USR: "usr", FIQ: "fiq", IRQ: "irq", SVC: "svc", MON: "mon", ABT: "abt", HYP: "hyp",
              UND: "und", SYS: "sys"}
PL1 = [FIQ, IRQ, SVC, ABT, UND, SYS]
MASKS = 0x1C0  # A, I, F
T_BIT = 0x20
DATA_WORDS = 256  # the data area the cases load from and store to: 1 KiB, 8-byte aligned

# Banked registers that MRS/MSR (banked) name, with the mode that owns them.
BANKED = ([(f"r{n}_usr", USR) for n in range(8, 13)] + [("sp_usr", USR), ("lr_usr", USR)] +
          [(f"r{n}_fiq", FIQ) for n in range(8, 13)] +
          [("sp_fiq", FIQ), ("lr_fiq", FIQ), ("spsr_fiq", FIQ)] +
          [(f"{r}_{m}", code) for m, code in (("irq", IRQ), ("svc", SVC), ("abt", ABT),
                                               ("und", UND)) for r in ("sp", "lr", "spsr")] +
          [("elr_hyp", HYP), ("sp_hyp", HYP), ("spsr_hyp", HYP)])

# CP15 registers read before every case: (name, opc1, CRn, CRm, opc2, readable from PL1,
# readable from Hyp). Time-dependent ones (the counters) are left out: each simulator has its own.
CP15_PL1 = [
    ("MIDR", 0, 0, 0, 0), ("CTR", 0, 0, 0, 1), ("MPIDR", 0, 0, 0, 5), ("ID_PFR0", 0, 0, 1, 0),
    ("ID_PFR1", 0, 0, 1, 1), ("ID_DFR0", 0, 0, 1, 2), ("ID_MMFR0", 0, 0, 1, 4),
    ("ID_MMFR1", 0, 0, 1, 5), ("ID_MMFR2", 0, 0, 1, 6), ("ID_MMFR3", 0, 0, 1, 7),
    ("ID_ISAR0", 0, 0, 2, 0), ("ID_ISAR1", 0, 0, 2, 1), ("ID_ISAR2", 0, 0, 2, 2),
    ("ID_ISAR3", 0, 0, 2, 3), ("ID_ISAR4", 0, 0, 2, 4), ("ID_ISAR5", 0, 0, 2, 5),
    ("CLIDR", 1, 0, 0, 1), ("CSSELR", 2, 0, 0, 0),
    ("SCTLR", 0, 1, 0, 0), ("CPACR", 0, 1, 0, 2), ("TTBR0", 0, 2, 0, 0), ("TTBR1", 0, 2, 0, 1),
    ("TTBCR", 0, 2, 0, 2), ("DACR", 0, 3, 0, 0), ("DFSR", 0, 5, 0, 0), ("IFSR", 0, 5, 0, 1),
    ("DFAR", 0, 6, 0, 0), ("IFAR", 0, 6, 0, 2), ("PAR", 0, 7, 4, 0), ("PRRR", 0, 10, 2, 0),
    ("NMRR", 0, 10, 2, 1), ("VBAR", 0, 12, 0, 0), ("CONTEXTIDR", 0, 13, 0, 1),
    ("TPIDRURW", 0, 13, 0, 2), ("TPIDRURO", 0, 13, 0, 3), ("TPIDRPRW", 0, 13, 0, 4),
    ("CNTFRQ", 0, 14, 0, 0), ("CNTKCTL", 0, 14, 1, 0),
]
CP15_HYP = [
    ("VPIDR", 4, 0, 0, 0), ("VMPIDR", 4, 0, 0, 5), ("HSCTLR", 4, 1, 0, 0), ("HCR", 4, 1, 1, 0),
    ("HDCR", 4, 1, 1, 1), ("HCPTR", 4, 1, 1, 2), ("HSTR", 4, 1, 1, 3), ("HTCR", 4, 2, 0, 2),
    ("VTCR", 4, 2, 1, 2), ("HSR", 4, 5, 2, 0), ("HDFAR", 4, 6, 0, 0), ("HIFAR", 4, 6, 0, 2),
    ("HPFAR", 4, 6, 0, 4), ("HMAIR0", 4, 10, 2, 0), ("HMAIR1", 4, 10, 2, 1), ("HVBAR", 4, 12, 0, 0),
    ("HTPIDR", 4, 13, 0, 2), ("CNTHCTL", 4, 14, 1, 0),
]
# The PMU (counting off at reset: every count reads 0 on both); PMCEID0 is ARMv8's (undefined).
CP15_PMU = [
    ("PMCR", 0, 9, 12, 0), ("PMCNTENSET", 0, 9, 12, 1), ("PMCNTENCLR", 0, 9, 12, 2),
    ("PMOVSR", 0, 9, 12, 3), ("PMSELR", 0, 9, 12, 5), ("PMCEID0", 0, 9, 12, 6),
    ("PMCCNTR", 0, 9, 13, 0), ("PMXEVTYPER", 0, 9, 13, 1), ("PMXEVCNTR", 0, 9, 13, 2),
    ("PMUSERENR", 0, 9, 14, 0), ("PMINTENSET", 0, 9, 14, 1), ("PMINTENCLR", 0, 9, 14, 2),
    ("PMEVCNTR0", 0, 14, 8, 0), ("PMEVTYPER5", 0, 14, 12, 5),
]
CP15_64 = [("TTBR0_64", 0, 2), ("TTBR1_64", 1, 2), ("PAR_64", 0, 7)]
CP15_64_HYP = [("HTTBR", 4, 2), ("VTTBR", 6, 2)]


class Case:
    """One case: `setup` runs in the harness's mode before the entry (A32), `regs` are the values
    of r0-r12 at the entry (others random), `body` runs in `mode` with `isa` and ends in the
    exit (SVC), appended unless `exit` is False."""

    def __init__(self, name, mode, body, regs=None, setup=(), psr_extra=0, exit=True):
        self.name, self.mode, self.body = name, mode, list(body)
        self.regs = dict(regs or {})
        self.setup = list(setup)
        self.psr_extra = psr_extra
        self.exit = exit


def modes(hyp):
    return [USR] + PL1 + ([HYP] if hyp else [])


# --- the families -------------------------------------------------------------------------------

def fam_srs(isa, hyp):
    forms = ["da", "db", "ia", "ib"] if isa == "a32" else ["db", "ia"]
    for mode in modes(hyp):
        for form in forms:
            for wb in ("", "!"):
                for target in (SVC, ABT, UND, IRQ, FIQ, SYS, USR, MON, HYP):
                    if target in (USR, MON, HYP) and (form, wb) != ("db", ""):
                        continue
                    yield Case(f"srs{form}{wb} #{MODE_NAMES[target]} in {MODE_NAMES[mode]}", mode,
                               [f"srs{form} sp{wb}, #0x{target:x}"])


def fam_rfe(isa, hyp):
    forms = ["da", "db", "ia", "ib"] if isa == "a32" else ["db", "ia"]
    # Frames: (return address label, CPSR to load).
    frames = [("exit_a32", SVC | MASKS), ("exit_a32", USR | MASKS | 0xF0000000),
              ("exit_t32", SVC | MASKS | T_BIT), ("exit_a32", ABT | 0x80 | 0x08000000),
              ("exit_a32", SYS | MASKS | 0x000F0000), ("exit_a32", HYP | MASKS),
              ("exit_a32", MON | MASKS), ("exit_a32", 0x15 | MASKS)]
    # Not in Hyp mode, where the architecture makes RFE undefined and QEMU 7.2 runs it.
    for mode in [m for m in modes(hyp) if m != HYP]:
        for form in forms:
            for wb in ("", "!"):
                for i, (label, psr) in enumerate(frames):
                    if i > 2 and (form, wb) != ("ia", ""):
                        continue
                    # The frame sits at data+0x100; rn points where the form reads it from.
                    off = {"ia": 0, "ib": -4, "da": 4, "db": 8}[form]
                    setup = [f"ldr r0, ={label}", "ldr r1, =data", "str r0, [r1, #0x100]",
                             f"ldr r0, =0x{psr:08x}", "str r0, [r1, #0x104]"]
                    yield Case(f"rfe{form}{wb} to {label} cpsr {psr:08x} in {MODE_NAMES[mode]}",
                               mode, [f"rfe{form} r2{wb}"], regs={2: f"data+0x100+{off}"},
                               setup=setup)


def fam_cps(isa, hyp):
    for mode in modes(hyp):
        for base in (0x1C0, 0x000):
            for op in ("cpsie", "cpsid"):
                for flags in ("a", "i", "f", "if", "aif"):
                    yield Case(f"{op} {flags} from masks {base:x} in {MODE_NAMES[mode]}", mode,
                               [f"{op} {flags}"], psr_extra=base - MASKS)
            for target in (USR, FIQ, IRQ, SVC, MON, ABT, HYP, UND, SYS, 0x15):
                yield Case(f"cps #{target:x} in {MODE_NAMES[mode]}", mode, [f"cps #0x{target:x}"],
                           psr_extra=base - MASKS)
            yield Case(f"cpsid if, #und in {MODE_NAMES[mode]}", mode, ["cpsid if, #0x1b"],
                       psr_extra=base - MASKS)
            yield Case(f"cpsie a, #abt in {MODE_NAMES[mode]}", mode, ["cpsie a, #0x17"],
                       psr_extra=base - MASKS)


def fam_mrs_msr(isa, hyp):
    values = [0x00000010, 0xF80F01D3, 0x000001DF, 0x000001D1, 0x000001D7, 0x000001DA, 0x000001D6,
              0x000001D5, 0x600001F3, 0x0F0000DB, 0x00000110]
    fields = ["c", "x", "s", "f", "fsxc", "fc", "sx"]
    for mode in modes(hyp):
        yield Case(f"mrs cpsr in {MODE_NAMES[mode]}", mode, ["mrs r3, cpsr"])
        yield Case(f"mrs spsr in {MODE_NAMES[mode]}", mode, ["mrs r3, spsr"])
        for v in values:
            for f in fields:
                yield Case(f"msr cpsr_{f}, r5={v:08x} in {MODE_NAMES[mode]}", mode,
                           [f"msr cpsr_{f}, r5", "mrs r6, cpsr"], regs={5: v})
                yield Case(f"msr spsr_{f}, r5={v:08x} in {MODE_NAMES[mode]}", mode,
                           [f"msr spsr_{f}, r5", "mrs r6, spsr"], regs={5: v})
            if isa == "a32":
                for f in ("c", "f", "fsxc"):
                    imm = v & 0xFF if f != "f" else v & 0xF0000000
                    yield Case(f"msr cpsr_{f}, #{imm:x} in {MODE_NAMES[mode]}", mode,
                               [f"msr cpsr_{f}, #0x{imm:x}", "mrs r6, cpsr"])
                    yield Case(f"msr spsr_{f}, #{imm:x} in {MODE_NAMES[mode]}", mode,
                               [f"msr spsr_{f}, #0x{imm:x}", "mrs r6, spsr"])
        yield Case(f"msr apsr_nzcvq in {MODE_NAMES[mode]}", mode,
                   ["msr apsr_nzcvq, r5", "mrs r6, apsr"], regs={5: 0xF8000000})
        yield Case(f"msr apsr_g in {MODE_NAMES[mode]}", mode,
                   ["msr apsr_g, r5", "mrs r6, apsr"], regs={5: 0x000F0000})


def fam_banked(isa, hyp):
    for mode in modes(hyp):
        for reg, _ in BANKED:
            yield Case(f"mrs r4, {reg} in {MODE_NAMES[mode]}", mode, [f"mrs r4, {reg}"])
            value = 0x400102D3 if reg.startswith("spsr") else 0x40010400
            yield Case(f"msr {reg}, r5 in {MODE_NAMES[mode]}", mode,
                       [f"msr {reg}, r5", f"mrs r4, {reg}"], regs={5: value})


def fam_eret(isa, hyp):
    # Exception returns: ERET, SUBS PC, LR, #imm, MOVS PC, LR and LDM with the PC and ^ (A32),
    # from every mode, to each SPSR. The other ALU forms with S and the PC (ADDS PC, BICS PC ...)
    # are left out: QEMU 7.2 runs them as ordinary writes of the PC (flags set, no return), not
    # as the exception returns the architecture makes them.
    spsrs = [SVC | MASKS, USR | MASKS, SYS | MASKS | T_BIT, ABT | MASKS, HYP | MASKS, MON | MASKS,
             FIQ | 0x40]
    for mode in modes(hyp):
        for spsr in spsrs:
            label = "exit_t32" if spsr & T_BIT else "exit_a32"
            set_spsr = [f"ldr r0, =0x{spsr:08x}", "msr spsr_fsxc, r0"]
            if mode == HYP:  # Hyp mode returns to ELR_hyp (T32's SUBS PC, LR, #0 is ERET)
                set_spsr += [f"ldr r0, ={label}", "msr elr_hyp, r0"]
            forms = [("eret", [f"ldr lr, ={label}"] + (["msr elr_hyp, lr"] if mode == HYP else [])
                      + ["eret"]),
                     ("subs pc, lr, #4", [f"ldr lr, ={label}+4", "subs pc, lr, #4"]),
                     ("subs pc, lr, #0", [f"ldr lr, ={label}", "subs pc, lr, #0"])]
            if isa == "a32":
                forms += [("movs pc, lr", [f"ldr lr, ={label}", "movs pc, lr"])]
            if isa == "a32" and mode != HYP:  # LDM ^ in Hyp: undefined, QEMU 7.2 runs it
                forms += [("ldmia sp!, {r0, pc}^", ["ldr sp, =data+0x80", f"ldr r0, ={label}",
                                                    "str r0, [sp, #4]", "ldmia sp!, {r0, pc}^"]),
                          ("ldmib sp, {r1, r2, pc}^", ["ldr sp, =data+0x80", f"ldr r0, ={label}",
                                                       "str r0, [sp, #12]",
                                                       "ldmib sp, {r1, r2, pc}^"])]
            if mode == SYS and spsr & 0x1F == SYS:
                continue  # QEMU 7.2 loses SP and LR in a return from System to System mode
            for form, body in forms:
                # MSR SPSR in usr/sys is unpredictable: skip it there, the SPSR is the harness's.
                pre = set_spsr if mode not in (USR, SYS) else []
                yield Case(f"{form} to spsr {spsr:08x} in {MODE_NAMES[mode]}", mode, pre + body,
                           exit=False)


def fam_ldm_user(isa, hyp):
    # Not in System mode (UNPREDICTABLE): QEMU 7.2 reads and writes its stale copy of the user
    # SP and LR there.
    if isa != "a32":
        return
    # Nor in Hyp mode, where the architecture makes them undefined and QEMU 7.2 runs them (with
    # its stale copy of LR_usr).
    for mode in [m for m in modes(hyp) if m not in (SYS, HYP)]:
        yield Case(f"stmia {{r0-r14}}^ in {MODE_NAMES[mode]}", mode,
                   ["stmia r0, {r0-r14}^", "ldm r0, {r1-r12}"], regs={0: "data+0x40"})
        yield Case(f"stmdb {{r8-r14}}^ in {MODE_NAMES[mode]}", mode,
                   ["stmdb r0, {r8-r14}^", "ldmdb r0, {r1-r7}"], regs={0: "data+0x80"})
        yield Case(f"ldmia {{r8-r14}}^ in {MODE_NAMES[mode]}", mode,
                   ["ldmia r0, {r8-r14}^", "nop", "mrs r1, sp_usr" if mode not in (USR, SYS)
                    else "nop"], regs={0: "data+0x40"},
                   setup=["ldr r1, =data+0x40", "ldr r2, =0x40011111", "str r2, [r1, #20]",
                          "ldr r2, =0x40022222", "str r2, [r1, #24]"])
        yield Case(f"ldmib {{r13, r14}}^ in {MODE_NAMES[mode]}", mode,
                   ["ldmib r0, {r13, r14}^", "nop"], regs={0: "data+0x40"})


def fam_ldrt(isa, hyp):
    a32 = ["ldrt r1, [r0], #4", "ldrt r1, [r0], #-4", "ldrt r1, [r0], r2", "ldrt r1, [r0], -r2",
           "ldrt r1, [r0], r2, lsl #2", "ldrbt r1, [r0], #1", "ldrbt r1, [r0], -r2",
           "ldrht r1, [r0], #2", "ldrht r1, [r0], r2", "ldrsbt r1, [r0], #1",
           "ldrsbt r1, [r0], -r2", "ldrsht r1, [r0], #2", "ldrsht r1, [r0], r2",
           "strt r3, [r0], #4", "strt r3, [r0], r2, lsl #1", "strbt r3, [r0], #-1",
           "strbt r3, [r0], r2", "strht r3, [r0], #2", "strht r3, [r0], -r2",
           "ldrt r1, [r0]", "strt r3, [r0]", "ldrt r1, [r0], #5"]
    t32 = ["ldrt r1, [r0, #4]", "ldrt r1, [r0]", "ldrbt r1, [r0, #3]", "ldrht r1, [r0, #2]",
           "ldrsbt r1, [r0, #255]", "ldrsht r1, [r0, #6]", "strt r3, [r0, #8]",
           "strbt r3, [r0, #1]", "strht r3, [r0, #2]", "ldrt r1, [r0, #1]", "ldrt r8, [r0, #16]"]
    for mode in modes(hyp):
        for insn in (a32 if isa == "a32" else t32):
            yield Case(f"{insn} in {MODE_NAMES[mode]}", mode, [insn, "ldr r4, [r5]"],
                       regs={0: "data+0x40", 2: 8, 5: "data+0x40"})


def fam_exceptions(isa, hyp):
    # SVC, SMC, HVC, BKPT, UDF and the undefined space, from every mode.
    for mode in modes(hyp):
        m = MODE_NAMES[mode]
        yield Case(f"svc #0x12 in {m}", mode, ["svc #0x12"], exit=False)
        yield Case(f"svc #0x0 in {m}", mode, ["svc #0"], exit=False)
        if isa == "a32":
            yield Case(f"svc #0xabcdef in {m}", mode, ["svc #0xabcdef"], exit=False)
            yield Case(f"svcne (condition fails) in {m}", mode, ["svcne #1"], psr_extra=0x40000000)
        yield Case(f"bkpt #0x12 in {m}", mode, ["bkpt #0x12"])
        yield Case(f"bkpt #0x0 in {m}", mode, ["bkpt #0"])
        yield Case(f"udf #0x5 in {m}", mode, ["udf #5"])
        if isa == "t32":
            yield Case(f"udf.w #0x1234 in {m}", mode, ["udf.w #0x1234"])
        else:
            yield Case(f"udf #0xfff1 in {m}", mode, ["udf #0xfff1"])
        for r0 in (0x12345678, 0x84000000):  # not PSCI; PSCI_VERSION
            yield Case(f"hvc #0 r0={r0:x} in {m}", mode, ["hvc #0"], regs={0: r0})
            yield Case(f"smc #0 r0={r0:x} in {m}", mode, ["smc #0"], regs={0: r0})
        yield Case(f"hvc #0xabc in {m}", mode, ["hvc #0xabc"], regs={0: 1})
        if hyp and mode != HYP:
            yield Case(f"smc #0 with HCR.TSC in {m}", mode, ["smc #0"], regs={0: 0x12345678},
                       setup=["ldr r0, =0x00080000", "mcr p15, 4, r0, c1, c1, 0"])


def fam_hints(isa, hyp):
    for mode in modes(hyp):
        m = MODE_NAMES[mode]
        for insn in ("nop", "yield", "sev", "wfe", "dmb sy", "dmb ish", "dmb ishst", "dmb osh",
                     "dmb nsh", "dmb st", "dsb sy", "dsb ish", "dsb nshst", "isb sy", "clrex",
                     "pld [r0]", "pli [r0, #4]", "pldw [r0]", "dbg #3"):
            yield Case(f"{insn} in {m}", mode, [insn], regs={0: "data"})
        if hyp and mode != HYP:
            # WFI/WFE trapped to Hyp mode (HCR.TWI, HCR.TWE): the only WFI that cannot sleep.
            yield Case(f"wfi with HCR.TWI in {m}", mode, ["wfi"],
                       setup=["ldr r0, =0x00002000", "mcr p15, 4, r0, c1, c1, 0"])
            yield Case(f"wfe with HCR.TWE in {m}", mode, ["wfe"],
                       setup=["ldr r0, =0x00004000", "mcr p15, 4, r0, c1, c1, 0"])
            yield Case(f"wfine (condition fails) with HCR.TWI in {m}", mode,
                       (["it ne"] if isa == "t32" else []) + ["wfine"],
                       setup=["ldr r0, =0x00002000", "mcr p15, 4, r0, c1, c1, 0"],
                       psr_extra=0x40000000)


def fam_exclusive(isa, hyp):
    seqs = [
        ["ldrex r1, [r0]", "strex r2, r3, [r0]", "strex r4, r3, [r0]"],
        ["ldrexb r1, [r0]", "strexb r2, r3, [r0]"],
        ["ldrexh r1, [r0]", "strexh r2, r3, [r0]"],
        ["ldrexd r6, r7, [r0]", "strexd r2, r6, r7, [r0]", "ldrd r8, r9, [r0]"],
        ["ldrex r1, [r0]", "clrex", "strex r2, r3, [r0]"],
        ["strex r2, r3, [r0]"],
        ["ldrex r1, [r0]", "str r3, [r0]", "strex r2, r3, [r0]"],
        ["ldrex r1, [r0]", "strex r2, r3, [r5]"],
        ["ldrex r1, [r5]"],  # unaligned: an alignment fault
        ["ldrexh r1, [r5]"],
        ["strex r2, r3, [r5]"],
        ["ldrex r1, [r0]", "svc #0x33"],  # the exit's exception return clears the monitor
    ]
    for mode in modes(hyp):
        for i, seq in enumerate(seqs):
            yield Case(f"exclusive sequence {i} in {MODE_NAMES[mode]}", mode, seq,
                       regs={0: "data+0x20", 5: "data+0x22", 3: 0x5A5A1234})
    # The monitor across an exception return: LDREX in one case, STREX after an SVC round trip.
    for mode in (SVC, USR):
        yield Case(f"strex after an exception return in {MODE_NAMES[mode]}", mode,
                   ["ldrex r1, [r0]", "svc #0x44", "strex r2, r3, [r0]"],
                   regs={0: "data+0x20", 3: 7})


def fam_cp15(isa, hyp):
    regs = CP15_PL1 + ([("ACTLR", 0, 1, 0, 1), ("AIDR", 1, 0, 0, 7), ("REVIDR", 0, 0, 0, 6),
                        ("TLBTR", 0, 0, 0, 3), ("CCSIDR", 1, 0, 0, 0), ("ADFSR", 0, 5, 1, 0),
                        ("AIFSR", 0, 5, 1, 1), ("FCSEIDR", 0, 13, 0, 0), ("ISR", 0, 12, 1, 0)])
    for mode in modes(hyp):
        m = MODE_NAMES[mode]
        for name, op1, crn, crm, op2 in regs + CP15_HYP + CP15_PMU:
            yield Case(f"mrc {name} in {m}", mode, [f"mrc p15, {op1}, r4, c{crn}, c{crm}, {op2}"])
        for name, op1, crm in CP15_64 + CP15_64_HYP:
            yield Case(f"mrrc {name} in {m}", mode, [f"mrrc p15, {op1}, r4, r5, c{crm}"])
        # Writes of registers that leave the harness working, read back.
        for name, op1, crn, crm, op2, value in (
                ("TPIDRURW", 0, 13, 0, 2, 0x11223344), ("TPIDRURO", 0, 13, 0, 3, 0x55667788),
                ("TPIDRPRW", 0, 13, 0, 4, 0x99AABBCC), ("CONTEXTIDR", 0, 13, 0, 1, 0x00000142),
                ("DFSR", 0, 5, 0, 0, 0xFFFFFFFF), ("IFSR", 0, 5, 0, 1, 0xFFFFFFFF),
                ("DFAR", 0, 6, 0, 0, 0x12345678), ("IFAR", 0, 6, 0, 2, 0x9ABCDEF0),
                ("DACR", 0, 3, 0, 0, 0x5555AAAA), ("TTBR0", 0, 2, 0, 0, 0x12345FFF),
                ("TTBR1", 0, 2, 0, 1, 0xFFFFFFFF), ("TTBCR", 0, 2, 0, 2, 0x00000037),
                ("PRRR", 0, 10, 2, 0, 0xFFFFFFFF), ("CPACR", 0, 1, 0, 2, 0xFFFFFFFF),
                ("CSSELR", 2, 0, 0, 0, 0x0000000F), ("PAR", 0, 7, 4, 0, 0xFFFFFFFF),
                ("CNTKCTL", 0, 14, 1, 0, 0xFFFFFFFF), ("HTPIDR", 4, 13, 0, 2, 0x13572468),
                ("HDFAR", 4, 6, 0, 0, 0x2468ACE0), ("HPFAR", 4, 6, 0, 4, 0xFFFFFFFF),
                ("HSTR", 4, 1, 1, 3, 0x0001BFFF), ("VPIDR", 4, 0, 0, 0, 0x410FC0F1),
                ("VMPIDR", 4, 0, 0, 5, 0x80000F01), ("HMAIR0", 4, 10, 2, 0, 0x12345678),
                ("CNTHCTL", 4, 14, 1, 0, 0xFFFFFFFF)):
            yield Case(f"mcr {name} {value:x} in {m}", mode,
                       [f"mcr p15, {op1}, r5, c{crn}, c{crm}, {op2}", "isb",
                        f"mrc p15, {op1}, r4, c{crn}, c{crm}, {op2}"], regs={5: value})
        yield Case(f"mcrr TTBR0 in {m}", mode, ["mcrr p15, 0, r4, r5, c2", "mrrc p15, 0, r6, r7, c2"],
                   regs={4: 0x12345678, 5: 0xFF})
        # Cache and TLB maintenance and the barriers in CP15.
        for op1, crn, crm, op2 in ((0, 7, 5, 0), (0, 7, 5, 1), (0, 7, 10, 1), (0, 7, 14, 1),
                                   (0, 7, 6, 1), (0, 8, 7, 0), (0, 8, 7, 1), (0, 8, 3, 0),
                                   (0, 7, 10, 5), (0, 7, 10, 4), (0, 7, 5, 4), (4, 8, 7, 0)):
            yield Case(f"mcr p15, {op1}, c{crn}, c{crm}, {op2} in {m}", mode,
                       [f"mcr p15, {op1}, r0, c{crn}, c{crm}, {op2}"], regs={0: "data"})
        # Address translation with the MMU off: PAR holds the address (not from Hyp mode, where
        # QEMU 7.2 reports the long-descriptor format).
        if mode != HYP:
            yield Case(f"ats1cpr in {m}", mode, ["mcr p15, 0, r0, c7, c8, 0", "isb",
                                                 "mrc p15, 0, r4, c7, c4, 0"],
                       regs={0: "data+0x123"})
        # CP14: the debug ID and the ThumbEE and Jazelle registers.
        for op1, crn, crm, op2 in ((0, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 2, 2),
                                   (6, 0, 0, 0), (6, 1, 0, 0), (7, 0, 0, 0), (7, 1, 0, 0)):
            yield Case(f"mrc p14, {op1}, c{crn}, c{crm}, {op2} in {m}", mode,
                       [f"mrc p14, {op1}, r4, c{crn}, c{crm}, {op2}"])
        if hyp and mode != HYP:
            # Hyp traps of CP15 accesses: HSTR.T1/T13/T15 (and HCR.TVM, TID*, TAC, TSW). Not
            # HCR.TRVM: QEMU 7.2 does not trap the reads it covers; the architecture (and vtoe)
            # does.
            for hstr, hcr, insn in ((0x2, 0, "mrc p15, 0, r4, c1, c0, 0"),
                                    (0x2000, 0, "mrc p15, 0, r4, c13, c0, 2"),
                                    (0x8000, 0, "mcr p15, 0, r4, c15, c0, 0"),
                                    (0x8, 0, "mrc p15, 0, r4, c3, c0, 0"),
                                    (0, 1 << 26, "mcr p15, 0, r4, c3, c0, 0"),
                                    (0, 1 << 15, "mrc p15, 1, r4, c0, c0, 1"),
                                    (0, 1 << 16, "mrc p15, 0, r4, c0, c0, 1"),
                                    (0, 1 << 17, "mrc p15, 1, r4, c0, c0, 0"),
                                    (0, 1 << 21, "mrc p15, 0, r4, c1, c0, 1"),
                                    (0, 1 << 20, "mcr p15, 0, r4, c7, c5, 0"),
                                    (0, 1 << 19, "mcr p15, 0, r4, c7, c10, 4"),
                                    (0, 1 << 25, "mcr p15, 0, r4, c8, c7, 0")):
                yield Case(f"{insn} with HSTR {hstr:x} HCR {hcr:x} in {m}", mode, [insn],
                           regs={4: 0},
                           setup=[f"ldr r0, =0x{hstr:x}", "mcr p15, 4, r0, c1, c1, 3",
                                  f"ldr r0, =0x{hcr:x}", "mcr p15, 4, r0, c1, c1, 0"])


def fam_vfp(isa, hyp):
    # VFP and Advanced SIMD enables: CPACR cp10/cp11 and ASEDIS, FPEXC.EN, HCPTR.TCP10/11 and TASE.
    # MVFR0/1 are left out: vtoe reports the VFPv3-D16 it implements (QEMU: 32 D registers,
    # Advanced SIMD, VFPv4), see docs/iss.md.
    insns = ["vmrs r4, fpexc", "vmrs r4, fpscr", "vmrs r4, fpsid", "vmsr fpscr, r5", "vmov s0, r5", "vadd.f32 s0, s1, s2",
             "vldr d0, [r0]", "vmsr fpexc, r6"]
    states = [  # (CPACR, FPEXC, HCPTR)
        (0x00F00000, 0x40000000, 0x000033FF), (0x00000000, 0x40000000, 0x000033FF),
        (0x00500000, 0x40000000, 0x000033FF), (0x00F00000, 0x00000000, 0x000033FF),
        (0x00A00000, 0x40000000, 0x000033FF),
    ] + ([(0x00F00000, 0x40000000, 0x00000FFF | 0x400), (0x00F00000, 0x40000000, 0x000037FF),
          (0x00F00000, 0x40000000, 0x000073FF)] if hyp else [])
    for mode in modes(hyp):
        for cpacr, fpexc, hcptr in states:
            for insn in insns:
                setup = ["ldr r0, =0x00f00000", "mcr p15, 0, r0, c1, c0, 2", "isb",
                         f"ldr r0, =0x{fpexc:x}", "vmsr fpexc, r0",
                         f"ldr r0, =0x{cpacr:x}", "mcr p15, 0, r0, c1, c0, 2", "isb"]
                if hyp:
                    setup += [f"ldr r0, =0x{hcptr:x}", "mcr p15, 4, r0, c1, c1, 2", "isb"]
                yield Case(f"{insn} with CPACR {cpacr:x} FPEXC {fpexc:x} HCPTR {hcptr:x} in "
                           f"{MODE_NAMES[mode]}", mode, [insn],
                           regs={0: "data", 5: 0x03000000, 6: 0x40000000}, setup=setup)


def fam_random(isa, hyp):
    # Random streams across modes: ALU, loads and stores, and a system instruction every few.
    rng = random.Random(f"random-{isa}-{hyp}")
    alu = ["adds", "subs", "adcs", "sbcs", "rsbs", "ands", "orrs", "eors", "bics"]
    system = ["mrs r{d}, cpsr", "cpsid i", "cpsie a", "cps #0x1f", "cps #0x13", "cps #0x17",
              "mrs r{d}, spsr", "msr cpsr_f, r{n}", "msr cpsr_c, r{n}", "mrs r{d}, sp_usr",
              "mrs r{d}, lr_irq", "msr sp_und, r{n}", "clrex", "isb", "mrc p15, 0, r{d}, c1, c0, 0",
              "mrc p15, 0, r{d}, c13, c0, 3", "mcr p15, 0, r{n}, c13, c0, 2",
              "ldrt r{d}, [r7]", "strt r{n}, [r7]", "srsdb sp!, #0x1f", "svc #0x77"]
    for k in range(40):
        mode = rng.choice(modes(hyp))
        body = []
        for _ in range(12):
            # r7, not banked in any mode, is the base of the loads and stores: never written.
            d = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 9, 10])
            n, m = rng.randrange(0, 11), rng.randrange(0, 11)
            if rng.random() < 0.35:
                body.append(rng.choice(system).format(d=d, n=n))
            elif rng.random() < 0.2:
                body.append(f"ldr r{d}, [r7, #{rng.randrange(0, 64) * 4}]")
            else:
                body.append(f"{rng.choice(alu)} r{d}, r{n}, r{m}")
        yield Case(f"random stream {k} in {MODE_NAMES[mode]}", mode, body,
                   regs={7: "data+0x100"})


def fam_regress(isa, hyp):
    # The divergences the corpus found, one case each, so that `make test`'s sample holds them
    # (the whole family runs there).
    yield Case("VPIDR and VMPIDR read as MIDR and MPIDR after reset", HYP if hyp else SVC,
               ["mrc p15, 4, r4, c0, c0, 0", "mrc p15, 4, r5, c0, c0, 5"] if hyp else ["nop"])
    yield Case("srsdb #svc in sys: undefined", SYS, ["srsdb sp!, #0x13"])
    yield Case("mrs spsr in sys: System mode's own", SYS, ["msr spsr_fsxc, r5", "mrs r4, spsr"],
               regs={5: 0x600001D3})
    yield Case("mrs spsr in usr: undefined", USR, ["mrs r4, spsr"])
    yield Case("eret in sys: with System mode's SPSR", SYS,
               ["msr spsr_fsxc, r5", "ldr lr, =exit_a32", "eret"], regs={5: 0x000001D3},
               exit=False)
    yield Case("subs pc, lr, #0 in sys, an invalid mode in the SPSR: the mode stays", SYS,
               ["msr spsr_fsxc, r5", "ldr lr, =exit_a32", "subs pc, lr, #0"],
               regs={5: 0x000001C5}, exit=False)
    conduit = "smc #0" if hyp else "hvc #0"
    yield Case(f"{conduit} with a function PSCI does not know: NOT_SUPPORTED", SVC, [conduit],
               regs={0: 0x12345678})
    yield Case("wfe: a hint, never asleep", SVC, ["wfe"])
    yield Case("smc #0 without Hyp mode's conduit: undefined" if not hyp else "smc #0 PSCI_VERSION",
               SVC, ["smc #0"], regs={0: 0x84000000})
    if hyp:
        yield Case("wfe with HCR.TWE: not trapped", SVC, ["wfe"],
                   setup=["ldr r0, =0x00004000", "mcr p15, 4, r0, c1, c1, 0"])
    yield Case("strex to another (unaligned) address than ldrex's: fails, no alignment fault",
               USR, ["ldrex r1, [r0]", "strex r2, r3, [r5]"],
               regs={0: "data+0x20", 5: "data+0x22"})
    yield Case("mrc p14 DBGDIDR in usr", USR, ["mrc p14, 0, r4, c0, c0, 0"])
    yield Case("vmsr fpexc in usr: undefined", USR, ["vmsr fpexc, r6"], regs={6: 0x40000000},
               setup=["ldr r0, =0x00f00000", "mcr p15, 0, r0, c1, c0, 2", "isb"])
    yield Case("mrc p14 DBGDSCRint in usr: undefined", USR, ["mrc p14, 0, r4, c0, c1, 0"])
    yield Case("mrc p14 JIDR in svc: zero", SVC, ["mrc p14, 7, r4, c0, c0, 0"])
    yield Case("mcrr TTBR0, then mcr TTBR0: the high word stays", SVC,
               ["mcrr p15, 0, r4, r5, c2", "mcr p15, 0, r6, c2, c0, 0", "mrrc p15, 0, r7, r8, c2"],
               regs={4: 0x1000, 5: 0xFF, 6: 0x2000})
    if hyp:
        yield Case("vmrs fpexc in usr with HCPTR.TCP10: undefined, not trapped", USR,
                   ["vmrs r4, fpexc"],
                   setup=["ldr r0, =0x00f00000", "mcr p15, 0, r0, c1, c0, 2", "isb",
                          "ldr r0, =0x00000fff", "mcr p15, 4, r0, c1, c1, 2", "isb"])
    # CP15 registers read back as QEMU 7.2 keeps them (the Hyp ones' reset values are in the
    # register read before every case of the hyp programs).
    for name, crn, crm, op2, value in (("DFSR", 5, 0, 0, 0xFFFFFFFF), ("IFSR", 5, 0, 1, 0xFFFFFFFF),
                                       ("TTBCR", 2, 0, 2, 0x00000037),
                                       ("CPACR", 1, 0, 2, 0xFFFFFFFF),
                                       ("CNTKCTL", 14, 1, 0, 0xFFFFFFFF)):
        yield Case(f"mcr {name} {value:x}, read back", SVC,
                   [f"mcr p15, 0, r5, c{crn}, c{crm}, {op2}", "isb",
                    f"mrc p15, 0, r4, c{crn}, c{crm}, {op2}"], regs={5: value})
    if hyp:
        yield Case("mcr HCPTR 0xfff, read back", HYP,
                   ["mcr p15, 4, r5, c1, c1, 2", "isb", "mrc p15, 4, r4, c1, c1, 2"],
                   regs={5: 0x00000FFF})
        yield Case("mrs r4, lr_usr in hyp: undefined", HYP, ["mrs r4, lr_usr"])
        yield Case("vmrs fpexc in hyp with HCPTR.TCP10: undefined, HSR EC 0x07", HYP,
                   ["vmrs r4, fpexc"],
                   setup=["ldr r0, =0x00000fff", "mcr p15, 4, r0, c1, c1, 2", "isb"])
        yield Case("subs pc, lr, #4 in hyp: undefined", HYP,
                   ["ldr lr, =exit_a32+4", "msr elr_hyp, lr", "subs pc, lr, #4"])


FAMILIES = {
    "srs": fam_srs, "rfe": fam_rfe, "cps": fam_cps, "mrsmsr": fam_mrs_msr, "banked": fam_banked,
    "eret": fam_eret, "ldmuser": fam_ldm_user, "ldrt": fam_ldrt, "exc": fam_exceptions,
    "hints": fam_hints, "excl": fam_exclusive, "cp15": fam_cp15, "vfp": fam_vfp,
    "random": fam_random, "regress": fam_regress,
}


# --- the program ---------------------------------------------------------------------------------

def dump(hyp):
    """Reads the banked registers, the SPSRs and the CP15 registers into r0-r12, in turn."""
    lines = []
    reg = 0

    def rd(insn):
        nonlocal reg
        lines.append(insn.format(r=f"r{reg}"))
        reg = (reg + 1) % 13

    if hyp:
        for name, mode in BANKED:
            if mode == HYP and name != "elr_hyp":
                continue
            if mode == USR and name.startswith("r"):
                continue  # the harness's own r8-r12
            if name == "lr_usr":
                continue  # Hyp mode's LR
            rd(f"mrs {{r}}, {name}")
    else:
        # Without the Virtualization Extensions MRS (banked) is undefined: visit each mode.
        for mode in (FIQ, IRQ, ABT, UND, SYS):
            lines.append(f"cps #0x{mode:x}")
            if mode == FIQ:
                reg = 0  # into r0-r6: FIQ's r8-r12 read before anything lands on them
            for r in (["r8", "r9", "r10", "r11", "r12"] if mode == FIQ else []) + ["sp", "lr"]:
                rd(f"mov {{r}}, {r}")
            if mode != SYS:
                rd("mrs {r}, spsr")
            lines.append("cps #0x13")
    rd("mrs {r}, spsr")
    for name, op1, crn, crm, op2 in CP15_PL1 + (CP15_HYP if hyp else []):
        rd(f"mrc p15, {op1}, {{r}}, c{crn}, c{crm}, {op2}  @ {name}")
    for name, op1, crm in CP15_64 + (CP15_64_HYP if hyp else []):
        lines.append(f"mrrc p15, {op1}, r{reg}, r{(reg + 1) % 13}, c{crm}  @ {name}")
        reg = (reg + 2) % 13
    return lines


def program(family, isa, start):
    hyp = start == "hyp"
    name = f"{family}-{isa}-{start}"
    rng = random.Random(zlib.crc32(name.encode()))
    cases = list(FAMILIES[family](isa, hyp))
    out = [f"@ {name}: generated by scripts/gen_system_corpus.py; {len(cases)} cases.",
           "        .syntax unified", "        .arch armv7ve", "        .fpu vfpv3-d16",
           "        .arch_extension sec", "        .arch_extension virt", "        .arm",
           "        .section .text.start, \"ax\"", "        .global _start", "_start:"]
    harness_mode = HYP if hyp else SVC
    # Every mode's SP in the stack area, distinct; VBAR (and HVBAR); the reset values of the
    # control registers the cases change, kept to put them back.
    out += ["ldr sp, =stacks+4032", "ldr r0, =vectors", "mcr p15, 0, r0, c12, c0, 0"]
    if hyp:
        out += ["ldr r0, =hyp_vectors", "mcr p15, 4, r0, c12, c0, 0"]
    out += ["mrc p15, 0, r0, c1, c0, 2", "ldr r1, =saved_cpacr", "str r0, [r1]",
            "b case_0", ".ltorg"]

    def reset_state():
        lines = ["ldr r1, =saved_cpacr", "ldr r0, [r1]", "mcr p15, 0, r0, c1, c0, 2"]
        lines += ["mov r0, #0", "mcr p15, 0, r0, c13, c0, 2"]
        if hyp:
            lines += ["mov r0, #0", "mcr p15, 4, r0, c1, c1, 0",  # HCR
                      "mcr p15, 4, r0, c1, c1, 3",  # HSTR
                      "ldr r0, =0x33ff", "mcr p15, 4, r0, c1, c1, 2"]  # HCPTR
        lines += ["isb", "clrex"]
        # Banked registers: SPs in the stack area, LRs and SPSRs random. With the Virtualization
        # Extensions through MSR (banked), without them by visiting each mode.
        for i, (reg, mode) in enumerate(BANKED):
            if mode == HYP or (mode == USR and reg.startswith("r")):
                continue
            if mode == harness_mode or (hyp and reg == "lr_usr"):
                continue
            if reg.startswith("sp"):
                value = f"stacks+{(i + 1) * 64}"
            elif reg.startswith("spsr"):
                value = f"0x{rng.choice([USR, SVC, ABT, UND, SYS, IRQ, FIQ]) | MASKS | rng.choice([0, 0xF0000000, 0x60000000]):08x}"
            else:
                value = f"0x{rng.getrandbits(32) & ~3:08x}"
            if hyp:
                lines += [f"ldr r0, ={value}", f"msr {reg}, r0"]
            else:
                plain = reg.split("_")[0]
                target = SYS if mode == USR else mode
                lines += [f"ldr r0, ={value}", f"cps #0x{target:x}",
                          "msr spsr_fsxc, r0" if plain == "spsr" else f"mov {plain}, r0",
                          "cps #0x13"]
        return lines

    for n, case in enumerate(cases):
        body_label = f"body_{n}"
        out += [f"@ case {n}: {case.name}", f"case_{n}:",
                f"ldr r0, =case_{n + 1}", "ldr r1, =resume", "str r0, [r1]",
                f"ldr r0, =1f", "ldr r1, =dump_ret", "str r0, [r1]", "b dump", "1:"]
        out += reset_state()
        out += case.setup
        psr = case.mode | MASKS | (T_BIT if isa == "t32" else 0)
        psr = (psr + case.psr_extra) & 0xFFFFFFFF
        out += [f"ldr r0, =0x{psr:08x}", "msr spsr_fsxc, r0", f"ldr lr, ={body_label}"]
        if hyp:
            out += ["msr elr_hyp, lr"]
        for r in range(13):
            value = case.regs.get(r, rng.getrandbits(32))
            out.append(f"ldr r{r}, ={value if isinstance(value, str) else f'0x{value:08x}'}")
        out += ["eret" if hyp else "movs pc, lr", ".ltorg"]
        out += ["        .balign 4", "        .thumb" if isa == "t32" else "        .arm",
                f"{body_label}:"] + case.body
        if case.exit:
            out += ["svc #0"]
        out += ["b .", "        .arm", "        .balign 4", ".ltorg"]
    # The end: power off through PSCI (SMC from Hyp mode, HVC from SVC).
    out += [f"case_{len(cases)}:", "ldr r0, =0x84000008", "smc #0" if hyp else "hvc #0", "b .",
            ".ltorg"]
    # The harness's read of every register, then back to where it was called from.
    out += ["dump:"] + dump(hyp) + ["ldr r0, =dump_ret", "ldr pc, [r0]", ".ltorg"]
    # Exit stubs for exception returns.
    out += ["        .balign 4", "exit_a32:", "svc #0", "b .", "        .thumb",
            "        .balign 4", "exit_t32:", "svc #0", "b .", "        .arm", "        .balign 32"]
    # PL1 vectors: record the exception, read its registers, back to the harness.
    out += ["vectors:"] + [f"b pl1_entry_{k}" for k in range(8)]
    for k in range(8):
        out += [f"pl1_entry_{k}:", f"mov r8, #{k}", "b pl1_common"]
    out += ["pl1_common:", "mrs r0, spsr", "mov r1, lr", "mrc p15, 0, r2, c5, c0, 0",
            "mrc p15, 0, r3, c6, c0, 0", "mrc p15, 0, r4, c5, c0, 1", "mrc p15, 0, r5, c6, c0, 2"]
    if hyp:
        out += ["hvc #0x77", "b ."]
    else:
        out += ["cps #0x13", "ldr r0, =resume", "ldr pc, [r0]"]
    if hyp:
        out += ["        .balign 32", "hyp_vectors:"] + [f"b hyp_entry_{k}" for k in range(8)]
        for k in range(8):
            out += [f"hyp_entry_{k}:", f"mov r8, #{k}", "b hyp_common"]
        out += ["hyp_common:", "mrc p15, 4, r0, c5, c2, 0", "mrs r1, elr_hyp", "mrs r2, spsr",
                "mrc p15, 4, r3, c6, c0, 0", "mrc p15, 4, r4, c6, c0, 2",
                "mrc p15, 4, r5, c6, c0, 4", "mov r6, lr", "ldr r0, =resume", "ldr pc, [r0]"]
    out += [".ltorg", "        .data", "        .balign 8", "resume: .word 0",
            "dump_ret: .word 0", "saved_cpacr: .word 0", "        .balign 64",
            "data:"] + [f"        .word 0x{rng.getrandbits(32):08x}" for _ in range(DATA_WORDS)]
    out += ["        .balign 64", "stacks: .space 4096", "        .section .note.GNU-stack,\"\",%progbits"]
    return name, len(cases), "\n".join(
        line if line.startswith((" ", "@")) or line.endswith(":") else "        " + line
        for line in out) + "\n"


def names():
    return [f"{f}-{isa}-{start}" for f in FAMILIES for isa in ("a32", "t32")
            for start in ("svc", "hyp") if any(True for _ in FAMILIES[f](isa, start == "hyp"))]


def build(out_dir: Path, name: str, root: Path) -> Path:
    family, isa, start = name.split("-")
    _, count, text = program(family, isa, start)
    src = out_dir / f"{name}.S"
    src.write_text(text)
    elf = out_dir / f"{name}.elf"
    subprocess.run(["arm-linux-gnueabihf-gcc", "-nostdlib", "-nostartfiles", "-static",
                    "-Wl,--no-warn-rwx-segments", "-T", str(root / "target/baremetal/link.ld"),
                    "-o", str(elf), str(src)], check=True, capture_output=True, text=True)
    return elf


def main():
    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(names()))
        return 0
    if args.out is None:
        ap.error("OUT_DIR is needed")
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = args.only.split(",") if args.only else names()
    for name in wanted:
        try:
            build(args.out, name, root)
        except subprocess.CalledProcessError as e:
            print(f"{name}: {e.stderr}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
