/* Large allocations: realloc growth past the mmap threshold (mremap), calloc, many frees;
   getrusage and clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

int main(void) {
  unsigned char* p = NULL;
  size_t n = 0;
  unsigned sum = 0;
  for (size_t size = 1000; size < (8u << 20); size = size * 3 / 2) {
    p = realloc(p, size);
    if (!p) return 1;
    for (size_t i = n; i < size; i += 997) p[i] = (unsigned char)(i * 31);
    n = size;
    for (size_t i = 0; i < n; i += 997 * 5) sum = sum * 33 + p[i];
  }
  printf("realloc to %zu: %08x\n", n, sum);
  free(p);
  double* big = calloc(1 << 18, sizeof *big);
  for (int i = 0; i < (1 << 18); i++) big[i] = i * 0.5;
  double s = 0;
  for (int i = 0; i < (1 << 18); i += 3) s += big[i];
  printf("calloc sum %.1f\n", s);
  free(big);
  char* blocks[300];
  for (int r = 0; r < 5; r++) {
    for (int i = 0; i < 300; i++) blocks[i] = malloc((size_t)(i * 37 % 5000) + 1);
    for (int i = 0; i < 300; i += 2) free(blocks[i]);
    for (int i = 1; i < 300; i += 2) free(blocks[i]);
  }
  struct rusage ru;
  printf("getrusage %d clock %s\n", getrusage(RUSAGE_SELF, &ru), clock() >= 0 ? "ok" : "bad");
  return 0;
}
