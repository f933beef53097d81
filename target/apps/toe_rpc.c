/*
 * toe_rpc: request and response through /dev/toe, as vtoe's rpc workload: connects to the
 * peer's RPC server, then COUNT times sends REQUEST bytes of the stream pattern and receives
 * the RESPONSE-byte answer (the server's bytes are all 0xa5), one request outstanding. COUNT 0:
 * until the process is stopped (vtoe run's rpc workload).
 *
 *   toe_rpc IP PORT REQUEST RESPONSE COUNT        e.g. toe_rpc 10.0.0.2 5001 100 3000 4
 *
 * Prints what it did; exits 1 naming the call that failed, or when an answer is short or holds
 * another byte than 0xa5.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_args.h"
#include "toe_socket.h"

#define RESPONSE_BYTE 0xa5

const char *app_name = "toe_rpc";

int main(int argc, char **argv)
{
	unsigned long port, request, response, count, sent = 0, received = 0, bad = 0, calls = 0;
	unsigned char *req, *resp;
	int sock;

	if (argc != 6) {
		fprintf(stderr, "usage: toe_rpc IP PORT REQUEST RESPONSE COUNT\n");
		return 2;
	}
	port = app_number(argv[2], "port", 1);
	request = app_number(argv[3], "request size", 1);
	response = app_number(argv[4], "response size", 1);
	count = app_number(argv[5], "count", 0);
	req = malloc(request);
	resp = malloc(response);
	if (!req || !resp)
		return app_fail("malloc");

	sock = toe_socket();
	if (sock < 0)
		return app_fail("open " TOE_DEVICE_PATH);
	if (toe_connect(sock, argv[1], port) < 0)
		return app_fail("connect");
	printf("toe_rpc: connected to %s:%lu\n", argv[1], port);
	for (unsigned long k = 0; count == 0 || k < count; ++k) {
		unsigned long got = 0;

		for (unsigned long j = 0; j < request; ++j) {
			unsigned long i = sent + j;

			req[j] = (unsigned char)(7 * i + i / 256);
		}
		if (toe_send(sock, req, request) < 0)
			return app_fail("send");
		sent += request;
		while (got < response) {
			ssize_t n = toe_recv(sock, resp + got, response - got);

			if (n < 0)
				return app_fail("recv");
			if (n == 0) {
				fprintf(stderr, "toe_rpc: the peer closed after %lu of %lu bytes of answer %lu\n",
					got, response, k + 1);
				return 1;
			}
			++calls;
			got += (unsigned long)n;
		}
		for (unsigned long j = 0; j < response; ++j)
			bad += resp[j] != RESPONSE_BYTE;
		received += got;
	}
	if (toe_close(sock) < 0)
		return app_fail("close");
	printf("toe_rpc: %lu requests, %lu bytes sent, %lu received in %lu recv calls, %lu bad bytes\n",
	       count, sent, received, calls, bad);
	return bad ? 1 : 0;
}
