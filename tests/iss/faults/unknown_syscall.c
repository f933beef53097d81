/* A system call number no Linux has. */
int main(void) {
  register int r7 __asm__("r7") = 9999;
  register int r0 __asm__("r0") = 0;
  __asm__ volatile("svc 0" : "+r"(r0) : "r"(r7) : "memory");
  return r0;
}
