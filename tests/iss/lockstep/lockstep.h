/* Freestanding start for the lock-step programs: no libc, so that qemu-arm and vtoe execute the
   same instructions from the same register file. _start sets its own stack, clears every
   register and the flags, then calls main at the label lockstep_begin (where the comparison
   starts) and exits with main's result. */
#ifndef LOCKSTEP_H
#define LOCKSTEP_H

typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

unsigned lockstep_stack[2048] __attribute__((aligned(8)));

int main(void);

__attribute__((naked, noreturn, used)) void _start(void) {
  __asm__ volatile(
      "ldr sp, =lockstep_stack + 8192\n"
      "mov r0, #0\n mov r1, #0\n mov r2, #0\n mov r3, #0\n mov r4, #0\n mov r5, #0\n"
      "mov r6, #0\n mov r7, #0\n mov r8, #0\n mov r9, #0\n mov r10, #0\n mov r11, #0\n"
      "mov r12, #0\n mov lr, #0\n msr APSR_nzcvqg, r0\n"
      ".global lockstep_begin\n"
      "lockstep_begin:\n"
      "bl main\n"
      "mov r7, #1\n"
      "svc 0\n"
      ".ltorg\n");  // the stack address right here, not at the end of a long file
}

/* What the compiler may call for struct copies and clears. */
void* memcpy(void* d, const void* s, unsigned n) {
  unsigned char* dp = d;
  const unsigned char* sp = s;
  while (n--) *dp++ = *sp++;
  return d;
}
void* memset(void* d, int c, unsigned n) {
  unsigned char* dp = d;
  while (n--) *dp++ = (unsigned char)c;
  return d;
}

/* libgcc's division-by-zero handler calls raise(); the programs never divide by zero. */
int raise(int sig) { return sig; }

#endif
