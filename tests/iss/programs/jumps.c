/* setjmp/longjmp, recursion, switch tables, function pointers, varargs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static int depth;

static void dive(int n) {
  volatile int local = n * 3;
  if (n <= 0) longjmp(env, local + 100);
  depth++;
  if (n < 1000) dive(n - 1);
}

static int sum(int n, ...) {
  va_list ap;
  va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, int);
  va_end(ap);
  return s;
}

static long long sumll(int n, ...) {
  va_list ap;
  va_start(ap, n);
  long long s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, long long);
  va_end(ap);
  return s;
}

static int classify(int c) {
  switch (c) {
    case 0: return 11;
    case 1: return 7;
    case 2: return 19;
    case 3: return 3;
    case 4: return 99;
    case 5: return -4;
    case 6: return 41;
    case 7: return 8;
    case 8: return 0;
    case 9: return 13;
    case 10: return 17;
    case 11: return 23;
    case 300: return 5;
    default: return c * 2;
  }
}

static int big_switch(int c) {
  switch (c) {
    case 0: return 1;  case 1: return 5;  case 2: return 9;  case 3: return 2;  case 4: return 6;
    case 5: return 8;  case 6: return 4;  case 7: return 3;  case 8: return 7;  case 9: return 0;
    case 10: return 12; case 11: return 15; case 12: return 13; case 13: return 11;
    case 14: return 14; case 15: return 10; case 16: return 19; case 17: return 18;
    case 18: return 16; case 19: return 17; case 20: return 21; case 21: return 25;
    case 22: return 23; case 23: return 22; case 24: return 20; case 25: return 24;
    case 26: return 300; case 27: return 301; case 28: return 302; case 29: return 303;
    case 30: return 304; case 31: return 305; case 32: return 306; case 33: return 307;
    default: return -1;
  }
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int (*ops[])(int, int) = {add, mul};

static int cleanup_seen;
static void at_exit_handler(void) { printf("atexit handler ran (%d)\n", cleanup_seen); }

int main(void) {
  atexit(at_exit_handler);
  for (int n = 0; n < 5; n++) {
    depth = 0;
    int r = setjmp(env);
    if (r == 0) {
      dive(n * 10);
    } else {
      printf("longjmp returned %d after depth %d\n", r, depth);
    }
  }
  int s = 0;
  for (int c = -3; c < 320; c++) s = s * 7 + classify(c) + big_switch(c % 40);
  printf("switch %d\n", s);
  printf("varargs %d %lld\n", sum(5, 1, 2, 3, 4, 5), sumll(3, 1LL << 40, -5LL, 7LL));
  printf("fib %d\n", fib(24));
  int acc = 1;
  for (int i = 1; i < 20; i++) acc = ops[i & 1](acc, i) & 0xffff;
  printf("fptr %d\n", acc);
  cleanup_seen = 1;
  exit(acc & 0x3f);
}
