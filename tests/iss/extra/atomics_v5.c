/* Built for ARMv5TE, where there is no LDREX/STREX: libgcc's __sync_* builtins call the kernel
   user helpers at 0xffff0fc0 (cmpxchg) and 0xffff0f60 (cmpxchg64) and read their version at
   0xffff0ffc. */
#include <stdio.h>

static int counter;
static long long big;
static short half;

int main(void) {
  for (int i = 0; i < 100; i++) __sync_fetch_and_add(&counter, 3);
  int old = __sync_val_compare_and_swap(&counter, 300, 7);
  int failed = __sync_bool_compare_and_swap(&counter, 300, 9);
  for (int i = 0; i < 10; i++) __sync_fetch_and_add(&big, 1LL << 33);
  long long prev = __sync_val_compare_and_swap(&big, 10LL << 33, -1);
  for (int i = 0; i < 5; i++) __sync_fetch_and_sub(&half, 1000);
  __sync_synchronize();
  printf("%d %d %d %lld %lld %d\n", old, counter, failed, prev, big, half);
  return counter;
}
