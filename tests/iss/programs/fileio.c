/* stdio on a regular file (open, write, seek, read, stat, unlink) and reading stdin. */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char name[64];
  snprintf(name, sizeof name, "fileio-%s.tmp", argc > 1 ? argv[1] : "x");
  FILE* f = fopen(name, "w+");
  if (!f) {
    perror("fopen");
    return 1;
  }
  for (int i = 0; i < 500; i++) fprintf(f, "line %d %x\n", i, i * i);
  fflush(f);
  struct stat st;
  fstat(fileno(f), &st);
  printf("size %lld regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
  fseek(f, 1000, SEEK_SET);
  char buf[64];
  printf("at 1000: %s", fgets(buf, sizeof buf, f));
  fseek(f, -20, SEEK_END);
  printf("tail: %s", fgets(buf, sizeof buf, f));
  rewind(f);
  long lines = 0, bytes = 0;
  int c;
  while ((c = fgetc(f)) != EOF) bytes++, lines += c == '\n';
  printf("read back %ld lines %ld bytes ftell %ld\n", lines, bytes, ftell(f));
  fclose(f);
  int fd = open(name, O_RDONLY);
  ssize_t n = read(fd, buf, 10);
  printf("raw read %zd [%.10s] lseek %ld\n", n, buf, (long)lseek(fd, 0, SEEK_END));
  close(fd);
  printf("unlink %d access %d\n", unlink(name), access(name, F_OK));
  printf("missing file: %s\n", fopen("/nonexistent/file", "r") ? "opened" : "NULL");

  /* stdin: count words and letters */
  long words = 0, letters = 0, in_word = 0;
  while ((c = getchar()) != EOF) {
    if (isalpha(c)) letters++;
    if (isspace(c)) in_word = 0;
    else if (!in_word) in_word = 1, words++;
  }
  printf("stdin: %ld words %ld letters\n", words, letters);
  char* env = getenv("LC_ALL");
  printf("LC_ALL=%s\n", env ? env : "(unset)");
  return (int)(words & 0xff);
}
