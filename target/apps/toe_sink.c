/*
 * toe_sink: the receiving end of vtoe's tcp_rx workload through /dev/toe: listens on PORT,
 * accepts one connection and receives BYTES bytes of it, checking each against the stream
 * pattern the peer's source sends (byte i = (7 i + i / 256) mod 256), then closes both sockets.
 * BYTES 0: receives until the process is stopped, counting without checking (vtoe run's tcp_rx
 * workload: the loop costs the recv() calls, as iperf's does).
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

#include "app_args.h"
#include "toe_socket.h"

const char *app_name = "toe_sink";

int main(int argc, char **argv)
{
	unsigned long port, bytes, size = 16384, received = 0, bad = 0, calls = 0;
	unsigned char *buf;
	int listener, sock;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: toe_sink PORT BYTES [BUFFER]\n");
		return 2;
	}
	port = app_number(argv[1], "port", 1);
	bytes = app_number(argv[2], "byte count", 0);
	if (argc == 4)
		size = app_number(argv[3], "buffer size", 1);
	buf = malloc(size);
	if (!buf)
		return app_fail("malloc");

	listener = toe_socket();
	if (listener < 0)
		return app_fail("open " TOE_DEVICE_PATH);
	if (toe_bind(listener, NULL, port) < 0)
		return app_fail("bind");
	if (toe_listen(listener, 1) < 0)
		return app_fail("listen");
	printf("toe_sink: listening on port %lu\n", port);
	sock = toe_accept(listener);
	if (sock < 0)
		return app_fail("accept");
	printf("toe_sink: accepted a connection\n");
	while (bytes == 0 || received < bytes) {
		unsigned long want = bytes != 0 && bytes - received < size ? bytes - received : size;
		ssize_t n = toe_recv(sock, buf, want);

		if (n < 0)
			return app_fail("recv");
		if (n == 0) {
			fprintf(stderr, "toe_sink: the stream ended after %lu of %lu bytes\n", received,
				bytes);
			return 1;
		}
		for (ssize_t k = 0; bytes != 0 && k < n; ++k) {
			unsigned long i = received + (unsigned long)k;

			bad += buf[k] != (unsigned char)(7 * i + i / 256);
		}
		received += (unsigned long)n;
		++calls;
	}
	if (toe_close(sock) < 0 || toe_close(listener) < 0)
		return app_fail("close");
	printf("toe_sink: received %lu bytes in %lu recv calls, %lu not the pattern's\n", received,
	       calls, bad);
	return bad ? 1 : 0;
}
