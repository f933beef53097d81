/* VFP arithmetic, comparisons and conversions; compiled code and every VFPv3 data-processing
   instruction through inline assembly on ordinary, signed-zero, infinite, NaN and subnormal
   operands (the lock-step trace compares d0-d15 and FPSCR after each). */
#include "lockstep.h"

static const u64 kBits[] = {
    0x3ff0000000000000ull, 0xc004000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000001ull, 0x7ff4000000000000ull,
    0x0000000000000003ull, 0x41dfffffffc00000ull, 0xc1e0000000200000ull, 0x3fe5555555555555ull,
    0x47efffffe0000000ull, 0x36a0000000000000ull};
#define N (sizeof kBits / sizeof kBits[0])

static double d_of(u64 b) {
  union { u64 b; double d; } u = {b};
  return u.d;
}

#define D2(insn) __asm__ volatile(insn " %P0, %P1, %P2" : "=w"(r) : "w"(x), "w"(y)); sink += r;
#define D3(insn) r = z; __asm__ volatile(insn " %P0, %P1, %P2" : "+w"(r) : "w"(x), "w"(y)); sink += r;
#define D1(insn) __asm__ volatile(insn " %P0, %P1" : "=w"(r) : "w"(x)); sink += r;
#define S2(insn) __asm__ volatile(insn " %0, %1, %2" : "=t"(fr) : "t"(fx), "t"(fy)); fsink += fr;
#define S3(insn) fr = fz; __asm__ volatile(insn " %0, %1, %2" : "+t"(fr) : "t"(fx), "t"(fy)); fsink += fr;

int main(void) {
  volatile double x0 = 1.0, y0 = 3.0;
  volatile float f = 0.5f;
  s32 acc = 0;
  for (int i = 1; i < 20; i++) {
    double a = x0 * i / y0 - (double)i * 0.25;
    float b = f * (float)i + 1.5f;
    acc += (s32)(a * 1000.0) + (s32)b + (a < (double)b ? 1 : 2) + ((u32)(b * 3.0f) & 7);
    x0 = a > 0 ? a : -a;
  }
  double sink = 0, r;
  float fsink = 0, fr;
  for (unsigned i = 0; i < N; i++) {
    for (unsigned j = 0; j < N; j += 3) {
      double x = d_of(kBits[i]), y = d_of(kBits[j]), z = d_of(kBits[(i + j) % N]);
      float fx = (float)x, fy = (float)y, fz = (float)z;
      D2("vadd.f64") D2("vsub.f64") D2("vmul.f64") D2("vnmul.f64") D2("vdiv.f64")
      D3("vmla.f64") D3("vmls.f64") D3("vnmla.f64") D3("vnmls.f64")
      S2("vadd.f32") S2("vsub.f32") S2("vmul.f32") S2("vdiv.f32") S3("vmla.f32") S3("vnmls.f32")
      __asm__ volatile("vcmp.f64 %P0, %P1\n vmrs APSR_nzcv, fpscr" ::"w"(x), "w"(y) : "cc");
      __asm__ volatile("vcmpe.f32 %0, #0\n vmrs APSR_nzcv, fpscr" ::"t"(fx) : "cc");
    }
    double x = d_of(kBits[i]);
    float fx = (float)x;
    D1("vabs.f64") D1("vneg.f64") D1("vsqrt.f64") D1("vmov.f64")
    __asm__ volatile("vsqrt.f32 %0, %1" : "=t"(fr) : "t"(fx)); fsink += fr;
    u32 iv;
    __asm__ volatile("vcvt.s32.f64 %0, %P2\n vmov %1, %0" : "=&t"(fr), "=r"(iv) : "w"(x));
    acc += (s32)iv;
    __asm__ volatile("vcvtr.u32.f64 %0, %P2\n vmov %1, %0" : "=&t"(fr), "=r"(iv) : "w"(x));
    acc += (s32)iv;
    __asm__ volatile("vcvt.f32.f64 %0, %P1" : "=t"(fr) : "w"(x)); fsink += fr;
    __asm__ volatile("vcvt.f64.f32 %P0, %1" : "=w"(r) : "t"(fx)); sink += r;
    __asm__ volatile("vmov %0, %2\n vcvt.f64.s32 %P1, %0" : "=&t"(fr), "=w"(r) : "r"(iv)); sink += r;
    r = x;
    __asm__ volatile("vcvt.s32.f64 %P0, %P0, #16\n vcvt.f64.s32 %P0, %P0, #16" : "+w"(r)); sink += r;
  }
  __asm__ volatile("vmov.f64 %P0, #-1.25\n vmov.f32 %1, #0.125" : "=w"(r), "=t"(fr)); sink += r;
  for (u32 mode = 0; mode < 4; mode++) {  /* the rounding modes through FPSCR */
    u32 fpscr = mode << 22;
    double x = d_of(kBits[11]), y = 3.0;
    __asm__ volatile("vmsr fpscr, %0" ::"r"(fpscr));
    D2("vdiv.f64") D2("vadd.f64")
    __asm__ volatile("vcvtr.s32.f64 %0, %P1" : "=t"(fr) : "w"(r)); fsink += fr;
  }
  __asm__ volatile("vmsr fpscr, %0" ::"r"(0u));
  return (acc + (s32)(sink != sink) + (s32)(fsink != fsink)) & 0x7f;
}
