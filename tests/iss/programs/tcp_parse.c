/* A small TCP segment parser: IPv4 + TCP headers, options, pseudo-header checksum. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct seg {
  uint32_t src, dst, seq, ack;
  uint16_t sport, dport, win, mss;
  uint8_t flags, wscale, sack_ok, hlen;
  int has_ts;
  uint32_t tsval, tsecr;
  int payload;
};

static uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t* p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static uint32_t csum_add(uint32_t sum, const uint8_t* p, size_t n) {
  for (; n > 1; n -= 2, p += 2) sum += rd16(p);
  if (n) sum += (uint32_t)p[0] << 8;
  return sum;
}
static uint16_t csum_fold(uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return (uint16_t)~s;
}

static int parse(const uint8_t* pkt, size_t len, struct seg* s) {
  if (len < 20 || (pkt[0] >> 4) != 4) return -1;
  size_t ihl = (size_t)(pkt[0] & 15) * 4;
  if (ihl < 20 || len < ihl + 20 || pkt[9] != 6) return -2;
  if (csum_fold(csum_add(0, pkt, ihl)) != 0) return -3;
  size_t total = rd16(pkt + 2);
  if (total > len) return -4;
  const uint8_t* t = pkt + ihl;
  size_t tlen = total - ihl;
  memset(s, 0, sizeof *s);
  s->src = rd32(pkt + 12);
  s->dst = rd32(pkt + 16);
  s->sport = rd16(t);
  s->dport = rd16(t + 2);
  s->seq = rd32(t + 4);
  s->ack = rd32(t + 8);
  s->hlen = (uint8_t)((t[12] >> 4) * 4);
  s->flags = t[13];
  s->win = rd16(t + 14);
  if (s->hlen < 20 || s->hlen > tlen) return -5;
  uint32_t sum = csum_add(0, pkt + 12, 8) + 6 + (uint32_t)tlen;
  if (csum_fold(csum_add(sum, t, tlen)) != 0) return -6;
  for (size_t o = 20; o < s->hlen;) {
    uint8_t kind = t[o];
    if (kind == 0) break;
    if (kind == 1) {
      o++;
      continue;
    }
    if (o + 1 >= s->hlen) return -7;
    uint8_t olen = t[o + 1];
    if (olen < 2 || o + olen > s->hlen) return -8;
    switch (kind) {
      case 2: s->mss = rd16(t + o + 2); break;
      case 3: s->wscale = t[o + 2]; break;
      case 4: s->sack_ok = 1; break;
      case 8: s->has_ts = 1; s->tsval = rd32(t + o + 2); s->tsecr = rd32(t + o + 6); break;
    }
    o += olen;
  }
  s->payload = (int)(tlen - s->hlen);
  return 0;
}

static size_t build(uint8_t* p, uint32_t seq, uint8_t flags, int opts, int payload) {
  uint8_t tcpopt[40];
  size_t ol = 0;
  if (opts & 1) tcpopt[ol++] = 2, tcpopt[ol++] = 4, tcpopt[ol++] = 0x05, tcpopt[ol++] = 0xb4;
  if (opts & 2) tcpopt[ol++] = 1, tcpopt[ol++] = 3, tcpopt[ol++] = 3, tcpopt[ol++] = 7;
  if (opts & 4) tcpopt[ol++] = 4, tcpopt[ol++] = 2;
  if (opts & 8) {
    tcpopt[ol++] = 8, tcpopt[ol++] = 10;
    for (int i = 0; i < 8; i++) tcpopt[ol++] = (uint8_t)(seq >> (i * 3));
  }
  while (ol % 4) tcpopt[ol++] = 0;
  size_t thl = 20 + ol, total = 20 + thl + (size_t)payload;
  memset(p, 0, total);
  p[0] = 0x45;
  p[2] = (uint8_t)(total >> 8), p[3] = (uint8_t)total;
  p[8] = 64, p[9] = 6;
  uint8_t addrs[8] = {10, 0, 0, 1, 192, 168, (uint8_t)seq, 2};
  memcpy(p + 12, addrs, 8);
  uint16_t c = csum_fold(csum_add(0, p, 20));
  p[10] = (uint8_t)(c >> 8), p[11] = (uint8_t)c;
  uint8_t* t = p + 20;
  t[0] = 0x30, t[1] = 0x39, t[2] = 0x00, t[3] = 0x50;
  for (int i = 0; i < 4; i++) t[4 + i] = (uint8_t)(seq >> (24 - 8 * i)), t[8 + i] = (uint8_t)(~seq >> (8 * i));
  t[12] = (uint8_t)((thl / 4) << 4), t[13] = flags, t[14] = 0xff, t[15] = 0xf0;
  memcpy(t + 20, tcpopt, ol);
  for (int i = 0; i < payload; i++) t[thl + (size_t)i] = (uint8_t)(i * 13 + seq);
  uint32_t sum = csum_add(0, p + 12, 8) + 6 + (uint32_t)(thl + (size_t)payload);
  c = csum_fold(csum_add(sum, t, thl + (size_t)payload));
  t[16] = (uint8_t)(c >> 8), t[17] = (uint8_t)c;
  return total;
}

int main(void) {
  static uint8_t pkt[2048];
  int ok = 0, bad = 0;
  for (uint32_t i = 0; i < 64; i++) {
    size_t n = build(pkt, i * 2654435761u, (uint8_t)(i * 37), (int)(i & 15), (int)(i * 23 % 1400));
    if (i % 5 == 4) pkt[20 + (i % 40)] ^= 0x10; /* corrupt some */
    struct seg s;
    int r = parse(pkt, n, &s);
    if (r) {
      bad++;
      printf("seg %2u: error %d\n", i, r);
      continue;
    }
    ok++;
    printf("seg %2u: %08x->%08x %u->%u seq=%08x ack=%08x fl=%02x win=%u hl=%u mss=%u ws=%u sack=%u",
           i, s.src, s.dst, s.sport, s.dport, s.seq, s.ack, s.flags, s.win, s.hlen, s.mss,
           s.wscale, s.sack_ok);
    if (s.has_ts) printf(" ts=%08x/%08x", s.tsval, s.tsecr);
    printf(" len=%d\n", s.payload);
  }
  printf("%d ok, %d bad\n", ok, bad);
  return ok;
}
