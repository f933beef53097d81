/* Integer operations with flags, carries, shifts, multiplies and library division. */
#include "lockstep.h"

static u32 seed = 0x2545f491;
static u32 next(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

int main(void) {
  u32 acc = 0;
  u64 wide = 1;
  for (int i = 0; i < 150; i++) {
    u32 a = next(), b = next() | 1;
    s32 sa = (s32)a, sb = (s32)b;
    acc += a * b + (a >> (b & 31)) - (u32)(sa >> (a & 31));
    acc ^= (a << (b & 15)) | (b >> 3);
    acc += a / b + a % b + (u32)(sa / sb);
    wide = wide * a + b;
    wide ^= (u64)((s64)sa * sb);
    acc += (u32)(wide >> 32) + (a < b) + (sa < sb) * 2;
    acc += __builtin_clz(a | 1) + __builtin_bswap32(b);
    acc = (acc << 7) | (acc >> 25);
    if (acc & 0x100) acc -= b;
    else acc += a;
  }
  return (int)(acc ^ (u32)wide ^ (u32)(wide >> 32)) & 0x7f;
}
