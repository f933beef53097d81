@ Start-up and exception vectors of the bare-metal test programs (ARM target code).
@ Entered as QEMU's -kernel enters an ELF on virt: at _start, in SVC (virtualization=off) or Hyp
@ (virtualization=on), interrupts masked, MMU off. Sets a stack per mode, VBAR (HVBAR in Hyp),
@ clears .bss, records the CPSR at entry (start_cpsr), calls main() and powers off through PSCI.
        .syntax unified
        .arm
        .section .text.start, "ax"
        .global _start
_start:
        mrs     r4, cpsr
        and     r5, r4, #0x1f
        cmp     r5, #0x1a                       @ Hyp: one stack, HVBAR
        bne     1f
        ldr     sp, =svc_stack_top
        ldr     r0, =hyp_vectors
        mcr     p15, 4, r0, c12, c0, 0          @ HVBAR
        b       2f
1:      cps     #0x12                           @ IRQ
        ldr     sp, =irq_stack_top
        cps     #0x1b                           @ UND
        ldr     sp, =und_stack_top
        cps     #0x17                           @ ABT
        ldr     sp, =abt_stack_top
        cps     #0x13                           @ SVC
        ldr     sp, =svc_stack_top
        ldr     r0, =vectors
        mcr     p15, 0, r0, c12, c0, 0          @ VBAR
2:      isb
        ldr     r0, =__bss_start
        ldr     r1, =__bss_end
        mov     r2, #0
3:      cmp     r0, r1
        strlo   r2, [r0], #4
        blo     3b
        ldr     r0, =start_cpsr
        str     r4, [r0]
        bl      main
        bl      power_off
4:      b       4b

        .balign 32
        .global vectors
vectors:
        b       .                               @ reset
        b       und_entry
        b       svc_entry
        b       pabt_entry
        b       dabt_entry
        b       hyp_entry                       @ Hyp trap (HVBAR + 0x14)
        b       irq_entry
        b       fiq_entry

@ Each entry calls on_exception(kind, lr, spsr) in C; a non-zero return value is where to
@ resume (an abort with nowhere sensible to return to), zero means "the architectural return".
@ Hyp mode's own table: exceptions taken to Hyp return with ERET (ELR_hyp), not LR.
        .balign 32
        .global hyp_vectors
hyp_vectors:
        b       .                               @ reset
        b       hyp_entry                       @ undefined instruction in Hyp
        b       hyp_entry                       @ HVC in Hyp
        b       hyp_entry                       @ prefetch abort in Hyp
        b       hyp_entry                       @ data abort in Hyp
        b       hyp_entry                       @ Hyp trap
        b       hyp_irq_entry                   @ IRQ routed to Hyp (HCR.IMO)
        b       hyp_irq_entry                   @ FIQ routed to Hyp (HCR.FMO)

        .macro ENTRY name, kind, adjust
\name:
        push    {r0-r3, r12, lr}
        mov     r0, #\kind
        mov     r1, lr
        mrs     r2, spsr
        bl      on_exception
        cmp     r0, #0
        strne   r0, [sp, #20]                   @ resume there instead
        pop     {r0-r3, r12, lr}
        subs    pc, lr, #\adjust
        .endm

        ENTRY   und_entry, 1, 0
        ENTRY   svc_entry, 2, 0
        ENTRY   pabt_entry, 3, 4
        ENTRY   dabt_entry, 4, 4
        ENTRY   irq_entry, 6, 4
        ENTRY   fiq_entry, 7, 4
@ Hyp trap (HVC from a guest, trapped instructions, stage-2 aborts): on_hyp_trap(hsr, elr,
@ spsr) in C returns where to resume (zero: ELR_hyp as it is).
hyp_irq_entry:
        push    {r0-r3, r12, lr}
        bl      on_hyp_irq
        pop     {r0-r3, r12, lr}
        eret
hyp_entry:
        push    {r0-r3, r12, lr}
        mrc     p15, 4, r0, c5, c2, 0           @ HSR
        mrs     r1, elr_hyp
        mrs     r2, spsr
        bl      on_hyp_trap
        cmp     r0, #0
        msrne   elr_hyp, r0
        pop     {r0-r3, r12, lr}
        eret

        .section .bss
        .balign 8
        .space  4096
irq_stack_top:
        .space  1024
und_stack_top:
        .space  1024
abt_stack_top:
        .space  8192
svc_stack_top:
        .section .note.GNU-stack, "", %progbits
