/* Integer arithmetic and bit manipulation: flags, carries, shifts, division, 64-bit. */
#include <stdint.h>
#include <stdio.h>

static uint32_t seed = 12345;
static uint32_t rnd(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

static const uint32_t edge[] = {0, 1, 2, 3, 7, 31, 32, 33, 0x7fffffff, 0x80000000, 0x80000001,
                                0xfffffffe, 0xffffffff, 0x12345678, 0xdeadbeef, 0x00ff00ff};
#define NEDGE (sizeof edge / sizeof edge[0])

static uint32_t rotl(uint32_t x, unsigned n) { return (x << (n & 31)) | (x >> ((32 - n) & 31)); }

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

struct bits {
  unsigned a : 3;
  signed b : 5;
  unsigned c : 12;
  signed d : 12;
};

int main(void) {
  uint64_t h = 0;
  for (unsigned i = 0; i < NEDGE; i++) {
    for (unsigned j = 0; j < NEDGE; j++) {
      uint32_t a = edge[i], b = edge[j];
      int32_t sa = (int32_t)a, sb = (int32_t)b;
      h = mix(h, a + b);
      h = mix(h, a - b);
      h = mix(h, a * b);
      h = mix(h, (uint64_t)a * b);
      h = mix(h, (uint64_t)((int64_t)sa * sb));
      if (b) h = mix(h, a / b), h = mix(h, a % b);
      if (sb && !(sa == INT32_MIN && sb == -1)) h = mix(h, (uint32_t)(sa / sb)), h = mix(h, (uint32_t)(sa % sb));
      h = mix(h, a << (b & 31));
      h = mix(h, a >> (b & 31));
      h = mix(h, (uint32_t)(sa >> (b & 31)));
      h = mix(h, rotl(a, b));
      h = mix(h, (a < b) | (sa < sb) << 1 | (a == b) << 2 | (sa >= sb) << 3);
      h = mix(h, __builtin_add_overflow(sa, sb, &sa) | __builtin_sub_overflow(a, b, &a) << 1);
      h = mix(h, a & ~b);
      h = mix(h, a | ~b);
    }
    uint32_t a = edge[i];
    h = mix(h, a ? __builtin_clz(a) : 99);
    h = mix(h, a ? __builtin_ctz(a) : 99);
    h = mix(h, __builtin_popcount(a));
    h = mix(h, __builtin_bswap32(a));
    h = mix(h, __builtin_bswap16((uint16_t)a));
    h = mix(h, (uint32_t)(int8_t)a + (uint32_t)(int16_t)a + (uint8_t)a + (uint16_t)a);
  }
  printf("edge hash %016llx\n", (unsigned long long)h);

  uint64_t acc = 1;
  int64_t sacc = -1;
  for (int i = 0; i < 2000; i++) {
    uint32_t x = rnd(), y = rnd() | 1;
    uint64_t X = ((uint64_t)rnd() << 32) | rnd(), Y = ((uint64_t)rnd() << 32) | rnd();
    acc = mix(acc, X / (Y >> (x & 63) | 1));
    acc = mix(acc, X % (Y >> (y & 63) | 1));
    sacc += (int64_t)X / (int64_t)((Y >> 7) | 1);
    acc = mix(acc, X * Y + (X >> (x & 63)) + (Y << (y & 63)));
    acc = mix(acc, (uint64_t)((int64_t)X >> (x & 63)));
    acc = mix(acc, x / y + x % y);
    acc = mix(acc, (uint32_t)((int32_t)x / (int32_t)y));
    struct bits bf = {x, (int)y, x >> 7, (int)(y >> 9)};
    acc = mix(acc, bf.a + bf.b + bf.c + bf.d);
    bf.c += bf.d;
    bf.b -= bf.a;
    acc = mix(acc, (uint64_t)bf.c << 7 ^ (uint64_t)(int64_t)bf.b);
    uint32_t sat = x > 0xfffffff0u - y ? 0xffffffffu : x + y;
    acc = mix(acc, sat);
    int32_t s16 = (int16_t)x * (int16_t)y;
    acc = mix(acc, (uint32_t)s16);
  }
  printf("random hash %016llx %lld\n", (unsigned long long)acc, (long long)sacc);
  return (int)(acc & 0x3f);
}
