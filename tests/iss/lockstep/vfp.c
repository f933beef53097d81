/* VFP arithmetic, comparisons and conversions whose results come back to core registers. */
#include "lockstep.h"

int main(void) {
  volatile double x = 1.0, y = 3.0;
  volatile float f = 0.5f;
  s32 acc = 0;
  for (int i = 1; i < 40; i++) {
    double a = x * i / y - (double)i * 0.25;
    float b = f * (float)i + 1.5f;
    acc += (s32)(a * 1000.0);
    acc += (s32)b;
    acc += a < (double)b ? 1 : 2;
    acc += (u32)(b * 3.0f) & 7;
    x = a > 0 ? a : -a;
  }
  return acc & 0x7f;
}
