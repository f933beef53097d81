/* Loads and stores of every size, signed and unsigned, arrays, structs and a byte-wise sort. */
#include "lockstep.h"

struct rec {
  unsigned char tag;
  signed char delta;
  short h;
  u32 w;
  u64 d;
};

static struct rec recs[24];
static unsigned char bytes[80];

int main(void) {
  for (int i = 0; i < 24; i++) {
    recs[i].tag = (unsigned char)(i * 37);
    recs[i].delta = (signed char)(i * -11);
    recs[i].h = (short)(i * -1234);
    recs[i].w = (u32)i * 0x01010101u;
    recs[i].d = (u64)i << 35 | (u32)i;
  }
  struct rec tmp = recs[3];
  recs[3] = recs[20];
  recs[20] = tmp;
  for (int i = 0; i < 80; i++) bytes[i] = (unsigned char)((i * 73) ^ 0x5a);
  for (int i = 1; i < 80; i++) { /* insertion sort */
    unsigned char v = bytes[i];
    int j = i - 1;
    while (j >= 0 && bytes[j] > v) {
      bytes[j + 1] = bytes[j];
      j--;
    }
    bytes[j + 1] = v;
  }
  s32 sum = 0;
  for (int i = 0; i < 24; i++) sum += recs[i].tag + recs[i].delta + recs[i].h + (s32)recs[i].w + (s32)(recs[i].d >> 32);
  for (int i = 0; i < 80; i += 7) sum += bytes[i];
  return sum & 0x7f;
}
