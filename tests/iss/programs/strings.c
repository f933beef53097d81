/* memcpy/memmove/memset/strcmp/strlen/strchr and friends at every alignment and length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char src[512], dst[512];

static unsigned sum(const unsigned char* p, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

int main(void) {
  unsigned h = 0;
  for (int i = 0; i < 512; i++) src[i] = (unsigned char)(i * 7 + 3);
  for (int so = 0; so < 8; so++)
    for (int d = 0; d < 8; d++)
      for (int n = 0; n < 140; n += (n < 20 ? 1 : 13)) {
        memset(dst, 0xaa, sizeof dst);
        memcpy(dst + d, src + so, n);
        h = h * 31 + sum(dst, 200);
        memset(dst + so, n, d * 9 + n);
        h = h * 31 + sum(dst, 300);
        memmove(dst + d, dst + so, n);
        h = h * 31 + sum(dst, 300);
        h = h * 31 + (unsigned)memcmp(dst + d, dst + so, n) ;
      }
  printf("mem %08x\n", h);

  char a[128], b[128];
  h = 0;
  for (int off = 0; off < 8; off++)
    for (int len = 0; len < 70; len++) {
      memset(a, 0, sizeof a);
      memset(b, 0, sizeof b);
      for (int i = 0; i < len; i++) a[off + i] = b[i] = (char)('a' + (i * 5) % 26);
      h = h * 31 + (unsigned)strlen(a + off);
      int c = strcmp(a + off, b);
      h = h * 31 + (unsigned)(c < 0 ? -1 : c > 0);
      if (len) b[len - 1]++;
      c = strcmp(a + off, b);
      h = h * 31 + (unsigned)(c < 0 ? -1 : c > 0);
      c = strncmp(a + off, b, len / 2);
      h = h * 31 + (unsigned)(c < 0 ? -1 : c > 0);
      char* p = strchr(a + off, 'k');
      h = h * 31 + (unsigned)(p ? p - (a + off) : -1);
      p = strrchr(a + off, 'f');
      h = h * 31 + (unsigned)(p ? p - (a + off) : -1);
      p = memchr(a + off, 'p', len);
      h = h * 31 + (unsigned)(p ? p - (a + off) : -1);
    }
  printf("str %08x\n", h);

  char buf[256];
  strcpy(buf, "The quick brown fox");
  strcat(buf, " jumps over the lazy dog");
  printf("%s|%zu|%s|%s\n", buf, strlen(buf), strstr(buf, "lazy"), strpbrk(buf, "xyz"));
  char* tok = strtok(buf, " ");
  int words = 0;
  while (tok) {
    words++;
    printf("[%s]", tok);
    tok = strtok(NULL, " ");
  }
  printf(" %d words\n", words);
  char* dup = strdup("duplicate me");
  printf("%s %d %ld %lu\n", dup, atoi("-1234"), strtol("0x7fff", NULL, 16), strtoul("4294967295", NULL, 10));
  free(dup);
  return words;
}
