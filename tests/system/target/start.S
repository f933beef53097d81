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
        ldr     r0, =vectors
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
hyp_entry:
        b       hyp_entry                       @ Hyp programs install their own

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
