/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/toe: the TOE's BSD-like socket calls, shared by the kernel module and user programs.
 *
 * One open file is one TOE socket (socket()); close() closes it. A connected socket takes its
 * data by write() (send(): copied from the user buffer into the kernel's send buffer by
 * programmed I/O, then handed to the TOE by a SendQ context) and gives what arrived by read()
 * (recv(): copied from the kernel's receive buffer, which the TOE fills by DMA; 0 at the end of
 * the peer's stream). The other calls are ioctls; accept() returns the accepted connection as a
 * new file descriptor. The layout leaves room for poll().
 */
#ifndef VTOE_TOE_API_H
#define VTOE_TOE_API_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TOE_DEVICE_PATH "/dev/toe"

/* An IPv4 address and port, both in host byte order. */
struct toe_sockaddr {
	__u32 ip;
	__u16 port;
	__u16 reserved;
};

/* The TOE's socket id and state of a socket, and what its transmit path has done. */
struct toe_socket_info {
	__u32 sock;
	__u32 state; /* enum toe_socket_state */
	__s32 last_status; /* the TOE's last non-zero completion status (TOE_RESULT_*) */
	__u32 reserved;
	__u64 bytes_sent; /* bytes the TOE reported sent (SendDone) */
	__u64 bytes_queued; /* bytes copied into the kernel's send buffer */
};

enum toe_socket_state {
	TOE_SOCKET_OPEN = 1,
	TOE_SOCKET_CONNECTING = 2,
	TOE_SOCKET_CONNECTED = 3,
	TOE_SOCKET_CLOSING = 4,
	TOE_SOCKET_CLOSED = 5,
	TOE_SOCKET_FAILED = 6,
	TOE_SOCKET_LISTENING = 7,
};

#define TOE_IOC_MAGIC 'T'
/* connect(): blocks until the TOE reports Connected, or fails with the TOE's status as errno. */
#define TOE_IOC_CONNECT _IOW(TOE_IOC_MAGIC, 1, struct toe_sockaddr)
#define TOE_IOC_INFO _IOR(TOE_IOC_MAGIC, 2, struct toe_socket_info)
/* bind(): the local port (and address: 0 = the TOE's own) a listener takes. */
#define TOE_IOC_BIND _IOW(TOE_IOC_MAGIC, 3, struct toe_sockaddr)
/* listen(): the argument is the backlog. */
#define TOE_IOC_LISTEN _IO(TOE_IOC_MAGIC, 4)
/* accept(): blocks until a connection is bound to a new socket; returns its file descriptor. */
#define TOE_IOC_ACCEPT _IO(TOE_IOC_MAGIC, 5)

#endif /* VTOE_TOE_API_H */
