/*
 * toe_stream: connects through /dev/toe (the TOE driver's sockets) and sends BYTES bytes of the
 * stream pattern every vtoe application sends (byte i = (7 i + i / 256) mod 256, which the
 * peer's sink checks), in send() calls of CHUNK bytes, then closes. BYTES 0: sends until the
 * process is stopped (vtoe run's tcp_tx workload, measured in a window of simulated time).
 * The pattern repeats every 64 KiB, so it is written once and each send() starts at its offset:
 * the loop costs the send() calls, as iperf's does, not the making of the data.
 *
 *   toe_stream IP PORT BYTES [CHUNK]        e.g. toe_stream 10.0.0.2 5001 65536 8000
 *
 * Prints what it did; exits 1 naming the call that failed and why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_args.h"
#include "toe_socket.h"

#define PATTERN_PERIOD 65536UL

const char *app_name = "toe_stream";

int main(int argc, char **argv)
{
	struct toe_socket_info info;
	unsigned long port, bytes, chunk = 8000, sent = 0;
	unsigned char *buf;
	int sock;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: toe_stream IP PORT BYTES [CHUNK]\n");
		return 2;
	}
	port = app_number(argv[2], "port", 0);
	bytes = app_number(argv[3], "byte count", 0);
	if (argc == 5)
		chunk = app_number(argv[4], "chunk", 0);
	if (chunk == 0)
		chunk = 1;
	buf = malloc(PATTERN_PERIOD + chunk);
	if (!buf)
		return app_fail("malloc");
	for (unsigned long i = 0; i < PATTERN_PERIOD + chunk; ++i)
		buf[i] = (unsigned char)(7 * i + i / 256);

	sock = toe_socket();
	if (sock < 0)
		return app_fail("open " TOE_DEVICE_PATH);
	if (toe_connect(sock, argv[1], port) < 0)
		return app_fail("connect");
	printf("toe_stream: connected to %s:%lu\n", argv[1], port);
	while (bytes == 0 || sent < bytes) {
		unsigned long n = bytes != 0 && bytes - sent < chunk ? bytes - sent : chunk;

		if (toe_send(sock, buf + sent % PATTERN_PERIOD, n) < 0)
			return app_fail("send");
		sent += n;
	}
	if (toe_info(sock, &info) < 0)
		return app_fail("info");
	if (toe_close(sock) < 0)
		return app_fail("close");
	printf("toe_stream: sent %lu bytes (socket %u: %llu queued, %llu reported sent before close)\n",
	       sent, info.sock, (unsigned long long)info.bytes_queued,
	       (unsigned long long)info.bytes_sent);
	return 0;
}
