/*
 * toe_sink: the receiving end of vtoe's tcp_rx workload through /dev/toe: listens on PORT,
 * accepts one connection and receives BYTES bytes of it, checking each against the stream
 * pattern the peer's source sends (byte i = (7 i + i / 256) mod 256), then closes both sockets.
 *
 *   toe_sink PORT BYTES [BUFFER]        e.g. toe_sink 5001 262144 16384
 *
 * Prints what it did; exits 1 naming the call that failed, when the stream ends early, or when
 * a byte is not the pattern's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toe_socket.h"

static int fail(const char *what)
{
	fprintf(stderr, "toe_sink: %s: %s\n", what, strerror(errno));
	return 1;
}

static unsigned long parse(const char *text, const char *what)
{
	char *end;
	unsigned long v = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0' || v == 0) {
		fprintf(stderr, "toe_sink: %s %s is not a positive number\n", what, text);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long port, bytes, size = 16384, received = 0, bad = 0, calls = 0;
	unsigned char *buf;
	int listener, sock;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: toe_sink PORT BYTES [BUFFER]\n");
		return 2;
	}
	port = parse(argv[1], "port");
	bytes = parse(argv[2], "byte count");
	if (argc == 4)
		size = parse(argv[3], "buffer size");
	buf = malloc(size);
	if (!buf)
		return fail("malloc");

	listener = toe_socket();
	if (listener < 0)
		return fail("open " TOE_DEVICE_PATH);
	if (toe_bind(listener, NULL, port) < 0)
		return fail("bind");
	if (toe_listen(listener, 1) < 0)
		return fail("listen");
	printf("toe_sink: listening on port %lu\n", port);
	sock = toe_accept(listener);
	if (sock < 0)
		return fail("accept");
	printf("toe_sink: accepted a connection\n");
	while (received < bytes) {
		unsigned long want = bytes - received < size ? bytes - received : size;
		ssize_t n = toe_recv(sock, buf, want);

		if (n < 0)
			return fail("recv");
		if (n == 0) {
			fprintf(stderr, "toe_sink: the stream ended after %lu of %lu bytes\n", received,
				bytes);
			return 1;
		}
		for (ssize_t k = 0; k < n; ++k) {
			unsigned long i = received + (unsigned long)k;

			bad += buf[k] != (unsigned char)(7 * i + i / 256);
		}
		received += (unsigned long)n;
		++calls;
	}
	if (toe_close(sock) < 0 || toe_close(listener) < 0)
		return fail("close");
	printf("toe_sink: received %lu bytes in %lu recv calls, %lu not the pattern's\n", received,
	       calls, bad);
	return bad ? 1 : 0;
}
