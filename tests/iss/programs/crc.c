/* CRC-32 (table and bitwise) and the Internet checksum (RFC 1071). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t table[256];

static void make_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
}

static uint32_t crc32_table(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  while (n--) c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static uint32_t crc32_bits(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  while (n--) {
    c ^= *p++;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
  }
  return ~c;
}

static uint16_t inet_checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (; n > 1; n -= 2, p += 2) sum += (uint32_t)(p[0] << 8 | p[1]);
  if (n) sum += (uint32_t)p[0] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

int main(void) {
  static uint8_t buf[65536];
  make_table();
  const char* check = "123456789";
  printf("check %08x %08x\n", crc32_table((const uint8_t*)check, 9), crc32_bits((const uint8_t*)check, 9));
  uint32_t x = 1;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1664525u + 1013904223u;
    buf[i] = (uint8_t)(x >> 24);
  }
  for (size_t n = 1; n <= sizeof buf; n *= 4)
    printf("n=%zu crc %08x/%08x csum %04x\n", n, crc32_table(buf, n), crc32_bits(buf + 1, n - 1),
           inet_checksum(buf + (n & 1), n - (n & 1)));
  uint32_t all = 0;
  for (int r = 0; r < 20; r++) all ^= crc32_table(buf + r, sizeof buf - r);
  printf("all %08x\n", all);
  return (int)(all & 0xff);
}
