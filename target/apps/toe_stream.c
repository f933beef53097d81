/*
 * toe_stream: connects through /dev/toe (the TOE driver's sockets) and sends BYTES bytes of the
 * stream pattern every vtoe application sends (byte i = (7 i + i / 256) mod 256, which the
 * peer's sink checks), in send() calls of CHUNK bytes, then closes.
 *
 *   toe_stream IP PORT BYTES [CHUNK]        e.g. toe_stream 10.0.0.2 5001 65536 8000
 *
 * Prints what it did; exits 1 naming the call that failed and why.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "toe_api.h"

static int fail(const char *what)
{
	fprintf(stderr, "toe_stream: %s: %s\n", what, strerror(errno));
	return 1;
}

static unsigned long parse(const char *text, const char *what)
{
	char *end;
	unsigned long v = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0') {
		fprintf(stderr, "toe_stream: %s %s is not a number\n", what, text);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct toe_sockaddr peer = { 0 };
	struct toe_socket_info info;
	struct in_addr ip;
	unsigned long bytes, chunk = 8000, sent = 0;
	unsigned char *buf;
	int fd;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: toe_stream IP PORT BYTES [CHUNK]\n");
		return 2;
	}
	if (!inet_aton(argv[1], &ip)) {
		fprintf(stderr, "toe_stream: %s is not an IPv4 address\n", argv[1]);
		return 2;
	}
	peer.ip = ntohl(ip.s_addr);
	peer.port = (unsigned short)parse(argv[2], "port");
	bytes = parse(argv[3], "byte count");
	if (argc == 5)
		chunk = parse(argv[4], "chunk");
	if (chunk == 0)
		chunk = 1;
	buf = malloc(chunk);
	if (!buf)
		return fail("malloc");

	fd = open(TOE_DEVICE_PATH, O_RDWR);
	if (fd < 0)
		return fail("open " TOE_DEVICE_PATH);
	if (ioctl(fd, TOE_IOC_CONNECT, &peer) < 0)
		return fail("connect");
	printf("toe_stream: connected to %s:%u\n", argv[1], peer.port);
	while (sent < bytes) {
		unsigned long n = bytes - sent < chunk ? bytes - sent : chunk;
		ssize_t w;

		for (unsigned long k = 0; k < n; ++k) {
			unsigned long i = sent + k;

			buf[k] = (unsigned char)(7 * i + i / 256);
		}
		w = write(fd, buf, n);
		if (w < 0)
			return fail("send");
		sent += (unsigned long)w;
	}
	if (ioctl(fd, TOE_IOC_INFO, &info) < 0)
		return fail("info");
	if (close(fd) < 0)
		return fail("close");
	printf("toe_stream: sent %lu bytes (socket %u: %llu queued, %llu reported sent before close)\n",
	       sent, info.sock, (unsigned long long)info.bytes_queued,
	       (unsigned long long)info.bytes_sent);
	return 0;
}
