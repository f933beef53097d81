/* qsort and bsearch on integers, strings and structs; malloc/free churn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned seed = 1;
static unsigned rnd(void) { return seed = seed * 1103515245u + 12345u; }

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}
static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

struct rec {
  short key;
  char name[9];
  double w;
};
static int cmp_rec(const void* a, const void* b) {
  const struct rec *x = a, *y = b;
  if (x->key != y->key) return x->key - y->key;
  return strcmp(x->name, y->name);
}

int main(void) {
  enum { N = 3000 };
  int* v = malloc(N * sizeof *v);
  for (int i = 0; i < N; i++) v[i] = (int)(rnd() >> 8) - (1 << 22);
  qsort(v, N, sizeof *v, cmp_int);
  unsigned h = 0;
  for (int i = 0; i < N; i++) h = h * 33 + (unsigned)v[i];
  int found = 0;
  for (int i = 0; i < 500; i++) {
    int key = (int)(rnd() >> 8) - (1 << 22);
    if (i % 3 == 0) key = v[rnd() % N];
    found += bsearch(&key, v, N, sizeof *v, cmp_int) != NULL;
  }
  printf("ints %08x min %d max %d found %d\n", h, v[0], v[N - 1], found);
  free(v);

  char* words[400];
  for (int i = 0; i < 400; i++) {
    int len = 1 + rnd() % 12;
    words[i] = malloc(len + 1);
    for (int j = 0; j < len; j++) words[i][j] = (char)('a' + rnd() % 26);
    words[i][len] = 0;
  }
  qsort(words, 400, sizeof *words, cmp_str);
  for (int i = 0; i < 400; i += 57) printf("%s ", words[i]);
  printf("\n");
  for (int i = 0; i < 400; i++) free(words[i]);

  struct rec* r = calloc(700, sizeof *r);
  for (int i = 0; i < 700; i++) {
    r[i].key = (short)(rnd() % 50);
    snprintf(r[i].name, sizeof r[i].name, "n%u", rnd() % 10000);
    r[i].w = i;
  }
  qsort(r, 700, sizeof *r, cmp_rec);
  h = 0;
  for (int i = 0; i < 700; i++) h = h * 31 + (unsigned)r[i].key + (unsigned)r[i].name[1];
  printf("recs %08x first %d:%s last %d:%s\n", h, r[0].key, r[0].name, r[699].key, r[699].name);
  free(r);

  /* Big allocations go through mmap, many small ones through brk. */
  void* big[8];
  for (int i = 0; i < 8; i++) {
    big[i] = malloc((size_t)(i + 1) << 18);
    memset(big[i], i, (size_t)(i + 1) << 18);
  }
  unsigned s = 0;
  for (int i = 0; i < 8; i++) s += ((unsigned char*)big[i])[((size_t)(i + 1) << 18) - 1];
  for (int i = 0; i < 8; i++) free(big[i]);
  void* p = NULL;
  for (int i = 0; i < 2000; i++) {
    p = realloc(p, (size_t)(i % 97) * 40 + 1);
    ((char*)p)[0] = (char)i;
  }
  free(p);
  printf("alloc %u\n", s);
  return (int)(h & 0x7f);
}
