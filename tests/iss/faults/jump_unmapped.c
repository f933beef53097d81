/* Calls a function at an unmapped address: the ISS reports the fault with the address. */
#include <stdio.h>
int main(void) {
  void (*f)(void) = (void (*)(void))0x12345678;
  puts("before");
  fflush(stdout);
  f();
  return 0;
}
