/* A CoreMark-like workload: linked-list search and sort, matrix multiply, a state machine and
   CRC-16 over the results. Loop-heavy; used for the ISS speed figure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t crc16(uint16_t crc, uint8_t data) {
  for (int i = 0; i < 8; i++) {
    uint8_t x = (uint8_t)((data ^ crc) & 1);
    data >>= 1;
    crc = x ? (uint16_t)((crc ^ 0x4002) >> 1 | 0x8000) : (uint16_t)(crc >> 1);
  }
  return crc;
}
static uint16_t crc16w(uint16_t crc, uint32_t v) {
  for (int i = 0; i < 4; i++) crc = crc16(crc, (uint8_t)(v >> (8 * i)));
  return crc;
}

struct node {
  struct node* next;
  int16_t data;
  int16_t idx;
};

static struct node* list_reverse(struct node* l) {
  struct node* r = NULL;
  while (l) {
    struct node* n = l->next;
    l->next = r;
    r = l;
    l = n;
  }
  return r;
}

static struct node* list_sort(struct node* l, int by_data) {
  /* merge sort on a singly linked list */
  int insize = 1;
  if (!l) return l;
  for (;;) {
    struct node *p = l, *tail = NULL;
    l = NULL;
    int merges = 0;
    while (p) {
      merges++;
      struct node* q = p;
      int psize = 0, qsize = insize;
      for (int i = 0; i < insize && q; i++) psize++, q = q->next;
      while (psize > 0 || (qsize > 0 && q)) {
        struct node* e;
        int take_p;
        if (psize == 0) take_p = 0;
        else if (qsize == 0 || !q) take_p = 1;
        else take_p = by_data ? p->data <= q->data : p->idx <= q->idx;
        if (take_p) e = p, p = p->next, psize--;
        else e = q, q = q->next, qsize--;
        if (tail) tail->next = e;
        else l = e;
        tail = e;
      }
      p = q;
    }
    tail->next = NULL;
    if (merges <= 1) return l;
    insize *= 2;
  }
}

#define N 24
static int32_t A[N][N], B[N][N], C[N][N];

static uint16_t matrix(int seed) {
  uint16_t crc = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (i * 7 + j * 3 + seed) % 101 - 50;
      B[i][j] = (i * 5 - j * 11 + seed) % 37;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      int32_t s = 0;
      for (int k = 0; k < N; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) crc = crc16w(crc, (uint32_t)(C[i][j] + (C[i][j] > 1000 ? 7 : 0)));
  return crc;
}

enum state { START, INT, FLOAT, EXP, SCI, INVALID, NSTATES };

static enum state scan(const char* s, int counts[NSTATES]) {
  enum state st = START;
  for (; *s && *s != ','; s++) {
    char c = *s;
    switch (st) {
      case START:
        if (c >= '0' && c <= '9') st = INT;
        else if (c == '+' || c == '-') st = INT;
        else if (c == '.') st = FLOAT;
        else st = INVALID;
        break;
      case INT:
        if (c == '.') st = FLOAT;
        else if (c < '0' || c > '9') st = INVALID;
        break;
      case FLOAT:
        if (c == 'e' || c == 'E') st = EXP;
        else if (c < '0' || c > '9') st = INVALID;
        break;
      case EXP:
        if (c == '+' || c == '-' || (c >= '0' && c <= '9')) st = SCI;
        else st = INVALID;
        break;
      case SCI:
        if (c < '0' || c > '9') st = INVALID;
        break;
      default:
        break;
    }
    counts[st]++;
  }
  return st;
}

int main(int argc, char** argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 40;
  enum { NODES = 200 };
  struct node* pool = malloc(NODES * sizeof *pool);
  static const char* inputs[] = {"5012", "1234", "-874", "+122", "35.54400", ".1234500", "-110.700",
                                 "+0.64400", "5.500e+3", "-.123e-2", "-87e+832", "+0.6e-12",
                                 "T0.3e-1F", "-T.T++Tq", "1T3.4e4z", "34.0e-T^"};
  uint16_t crc = 0;
  for (int it = 0; it < iterations; it++) {
    for (int i = 0; i < NODES; i++) {
      pool[i].next = i + 1 < NODES ? &pool[i + 1] : NULL;
      pool[i].idx = (int16_t)i;
      pool[i].data = (int16_t)((i * 7919 + it * 31) & 0x3fff);
    }
    struct node* l = list_sort(pool, 1);
    for (struct node* p = l; p; p = p->next) crc = crc16(crc, (uint8_t)p->data);
    l = list_reverse(l);
    int found = 0;
    for (int k = 0; k < 50; k++) {
      int16_t want = (int16_t)((k * 7919 + it * 31) & 0x3fff);
      for (struct node* p = l; p; p = p->next)
        if (p->data == want) {
          found += p->idx;
          break;
        }
    }
    crc = crc16w(crc, (uint32_t)found);
    l = list_sort(l, 0);
    crc = crc16(crc, (uint8_t)l->data);
    crc = crc16(crc, matrix(it));
    int counts[NSTATES] = {0};
    for (size_t k = 0; k < sizeof inputs / sizeof *inputs; k++)
      crc = crc16(crc, (uint8_t)scan(inputs[(k + it) % 16], counts));
    for (int k = 0; k < NSTATES; k++) crc = crc16w(crc, (uint32_t)counts[k]);
  }
  printf("coremark-like: %d iterations, crc %04x\n", iterations, crc);
  free(pool);
  return crc & 0x7f;
}
