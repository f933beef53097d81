/* printf of every integer format, flag, width and precision; snprintf; puts/putchar; stderr. */
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdio.h>
#include <string.h>

static const char* fmts[] = {"%d", "%i", "%u", "%x", "%X", "%o", "%5d", "%-5d|", "%05d", "%+d",
                             "% d", "%.3d", "%8.3d", "%#x", "%#o", "%#X", "%-#10x|", "%c"};

int main(int argc, char** argv) {
  static const int vals[] = {0, 1, -1, 42, -42, 255, 65535, INT_MAX, INT_MIN, 123456789};
  for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
    for (size_t v = 0; v < sizeof vals / sizeof *vals; v++) {
      if (fmts[f][1] == 'c' && (vals[v] < 32 || vals[v] > 126)) continue;
      printf(fmts[f], vals[v]);
      putchar(' ');
    }
    putchar('\n');
  }
  printf("%lld %llu %llx %lld\n", LLONG_MIN, ULLONG_MAX, 0x123456789abcdefULL, -1234567890123LL);
  printf("%hhd %hhu %hd %hu %ld %lu\n", (signed char)-5, (unsigned char)250, (short)-300,
         (unsigned short)60000, LONG_MIN, ULONG_MAX);
  printf("%zu %zd %td %jd %" PRId64 " %" PRIx32 "\n", sizeof(long long), (ssize_t)-7,
         (ptrdiff_t)-9, (intmax_t)-11, (int64_t)-13, (uint32_t)0xfeedface);
  printf("[%s] [%10s] [%-10s] [%.3s] [%*d] [%-*d] [%.*s]\n", "str", "right", "left", "truncate",
         6, 7, 6, 7, 2, "precision");
  printf("%%literal%% %c%c%c\n", 'a', 'b', 'c');
  int n1 = 0, n2 = 0;
  printf("count%n this%n\n", &n1, &n2);
  printf("%d %d\n", n1, n2);
  char buf[16];
  int w = snprintf(buf, sizeof buf, "%s-%d-%x", "truncated output", 12345, 0xabcdef);
  printf("%d [%s]\n", w, buf);
  puts("puts line");
  fputs("to stderr\n", stderr);
  fprintf(stderr, "err %d\n", -5);
  for (int i = 0; i < argc; i++) printf("argv[%d]=%s\n", i, i ? argv[i] : "(prog)");
  fflush(stdout);
  return 7;
}
