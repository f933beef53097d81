/* Branches: switch tables, function pointers, recursion, conditional execution. */
#include "lockstep.h"

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int sq(int x) { return x * x; }
static int neg(int x) { return -x; }
static int half(int x) { return x / 2; }
static int (*const fns[])(int) = {sq, neg, half};

static int pick(int c) {
  switch (c) {
    case 0: return 5;
    case 1: return 9;
    case 2: return -3;
    case 3: return 17;
    case 4: return 2;
    case 5: return 41;
    case 6: return 8;
    case 7: return -11;
    case 8: return 0;
    case 9: return 6;
    default: return c;
  }
}

int main(void) {
  int acc = fib(11);
  for (int i = -2; i < 40; i++) {
    acc += pick(i % 12);
    acc = fns[(unsigned)i % 3](acc) & 0xffff;
    if (acc > 1000) acc -= i;
    else if (acc < 10) acc = acc * 3 + i;
    acc = acc > 500 ? acc - 7 : acc + 3;
  }
  return acc & 0x7f;
}
