/* LDM from an address that is not word aligned: an alignment fault (SIGBUS) on ARMv7. */
static char buf[16] __attribute__((aligned(8)));
int main(void) {
  int r;
  __asm__ volatile("ldm %1, {r2, r3}\n mov %0, r2" : "=r"(r) : "r"(buf + 2) : "r2", "r3", "memory");
  return r;
}
