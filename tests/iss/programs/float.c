/* Floating point: arithmetic, conversions, libm, printf/strtod of every float format. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double vz = 0.0;

static uint64_t bits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}
static uint32_t fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

int main(void) {
  static const double vals[] = {0.0, -0.0, 1.0, -1.5, 3.14159265358979, 1e-310, 2.5e300,
                                123456.789, -7.25e-5, 0.1, 1.0 / 3.0, 4294967296.5, -2147483649.0};
  const size_t n = sizeof vals / sizeof *vals;
  for (size_t i = 0; i < n; i++) {
    double v = vals[i];
    printf("%g %e %f %.17g %a %10.3f %-12.4e| %G %E\n", v, v, v, v, v, v, v, v, v);
  }
  double inf = 1.0 / vz, nan = vz / vz;
  printf("%f %f %f %e %g %F\n", inf, -inf, nan, -nan, fabs(nan), inf);
  printf("nan bits %016llx %016llx %08x\n", (unsigned long long)bits(inf - inf),
         (unsigned long long)bits(sqrt(-1.0 + vz)), fbits((float)(inf * vz)));
  uint64_t h = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      double a = vals[i], b = vals[j];
      float fa = (float)a, fb = (float)b;
      h = h * 31 + bits(a + b) + bits(a - b) + bits(a * b) + (b != 0 ? bits(a / b) : 0);
      h = h * 31 + fbits(fa + fb) + fbits(fa * fb) + fbits(fa - fb) + (fb != 0 ? fbits(fa / fb) : 0);
      h = h * 31 + (a < b) + 2 * (a <= b) + 4 * (a == b) + 8 * (a > b) + 16 * isunordered(a, b);
      h = h * 31 + bits(fma(a, b, 1.0)) + bits(a * b + a);
    }
  printf("arith %016llx\n", (unsigned long long)h);
  for (size_t i = 0; i < n; i++) {
    double v = vals[i];
    printf("%d %u %lld %d %u|", (int)v, (unsigned)v, (long long)v, (int)(float)v,
           (unsigned)(float)v);
  }
  printf("\n");
  static const int ints[] = {0, 1, -1, 16777217, -16777217, 2147483647, (int)0x80000000};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    printf("%.1f %.1f %.1f|", (double)ints[i], (double)(float)ints[i], (double)(unsigned)ints[i]);
  printf("\n");
  for (double x = -3.0; x <= 3.0; x += 0.375) {
    printf("%.6g %.6g %.6g %.6g %.6g %.6g %.6g %.6g\n", sin(x), cos(x), tan(x), exp(x),
           x > 0 ? log(x) : 0.0, atan2(x, 1.5), pow(fabs(x), 1.7), sqrt(fabs(x)));
    printf("  %.6g %.6g %.6g %.6g %.6g %.6g %g %g\n", floor(x), ceil(x), round(x), trunc(x),
           fmod(x, 1.25), hypot(x, 2), rint(x), nearbyint(x * 1.5));
    printf("  %.6g %.6g %.6g %.6gf\n", sinf((float)x), expf((float)x), sqrtf(fabsf((float)x)),
           powf(2.0f, (float)x));
  }
  const char* nums[] = {"3.25", "-1e10", "0x1.8p3", "inf", "nan", "1e-400", "12abc", "  42.5e-2"};
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    char* end;
    double d = strtod(nums[i], &end);
    printf("strtod(%s)=%g rest=[%s] atof=%g strtof=%g\n", nums[i], d, end, atof(nums[i]),
           (double)strtof(nums[i], NULL));
  }
  static const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (int m = 0; m < 4; m++) {
    fesetround(modes[m]);
    volatile double a = 1.0, b = 3.0;
    printf("mode %d: %.20f %ld %.1f\n", m, a / b, lrint(2.5 + vz), rint(-1.5 + vz));
  }
  fesetround(FE_TONEAREST);
  double acc = 0;
  for (int i = 1; i < 20000; i++) acc += 1.0 / ((double)i * i);
  printf("basel %.15f pi %.15f\n", acc, sqrt(acc * 6));
  printf("limits %g %g %g %g\n", DBL_MAX, DBL_MIN, FLT_MAX, FLT_EPSILON);
  return (int)(acc * 10);
}
