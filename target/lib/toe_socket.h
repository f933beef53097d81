/*
 * The TOE's socket calls for Linux programs: BSD-like names over /dev/toe (the driver's
 * interface, target/linux/toe_api.h). A socket is a file descriptor; errors are -1 with errno.
 */
#ifndef VTOE_TOE_SOCKET_H
#define VTOE_TOE_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

#include "toe_api.h"

/* A new TOE socket (opens /dev/toe). */
int toe_socket(void);
/* Connects to ip (dotted quad) and port; blocks until connected or refused. */
int toe_connect(int sock, const char *ip, unsigned int port);
/* Binds a socket to a local port (ip NULL or "0.0.0.0": the TOE's own address). */
int toe_bind(int sock, const char *ip, unsigned int port);
/* Makes a bound socket a listener with a backlog of connections waiting for accept(). */
int toe_listen(int sock, int backlog);
/* The listener's next connection as a new socket (blocks until there is one). */
int toe_accept(int sock);
/* Sends all len bytes (the driver copies them into its send buffer); returns len or -1. */
ssize_t toe_send(int sock, const void *buf, size_t len);
/* Receives up to len bytes: what has arrived (waits for at least one), 0 at the end of the
   peer's stream, or -1. */
ssize_t toe_recv(int sock, void *buf, size_t len);
/* The socket's id, state and byte counts as the driver sees them. */
int toe_info(int sock, struct toe_socket_info *info);
/* Closes after the TOE has read every byte sent. */
int toe_close(int sock);

#endif /* VTOE_TOE_SOCKET_H */
