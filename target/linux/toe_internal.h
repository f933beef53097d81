/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TOE driver's state (paper section 2.2): one control channel (channel 0) whose four rings
 * live in DMA-coherent memory, and the sockets of /dev/toe, found by the TOE's socket id when a
 * completion arrives. Registers and contexts come from the generated contract header only.
 */
#ifndef VTOE_TOE_INTERNAL_H
#define VTOE_TOE_INTERNAL_H

#include <linux/device.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "vtoe/toe.h"
#include "toe_api.h"

#define TOE_DRIVER_NAME "vtoe-toe"
#define TOE_RING_ENTRIES 64u /* contexts per ring: a power of two in [2, 65536] */
#define TOE_SOCKET_IDS 64u /* socket ids 1..63 (0 is never used) */
/* Each socket's kernel send buffer: slots that user data is copied into, one SendQ context each. */
#define TOE_SEND_SLOTS 4u
#define TOE_SEND_SLOT_BYTES 16384u
#define TOE_RX_BUFFER_BYTES 4096u
/* A send context's cookie has this bit and its slot; a command's is its opcode. */
#define TOE_COOKIE_SEND 0x80000000u

struct toe_device;

struct toe_socket {
	struct toe_device *toe;
	u16 id;
	enum toe_socket_state state;
	int last_status; /* TOE_RESULT_* of the last failed completion */
	wait_queue_head_t wait; /* woken by every completion for this socket id */
	void *send_buffer;
	dma_addr_t send_dma;
	void *rx_buffer;
	dma_addr_t rx_dma;
	unsigned long free_slots; /* bit s: send slot s holds no data the TOE has yet to read */
	u32 commands_done; /* CmdDone completions */
	u32 local_ip; /* bind(): the TOE's address to listen on (0: its primary) */
	u16 local_port; /* bind(): the port to listen on */
	struct mutex recv_lock; /* one recv() at a time: it owns rx_head */
	u32 rx_head; /* offset in the receive buffer of the first byte recv() has not taken */
	u32 rx_pending; /* bytes the TOE reported (RxData) that recv() has not taken */
	bool rx_asked; /* a RecvQ context asked to be told of the next byte */
	u64 bytes_sent;
	u64 bytes_queued;
	bool peer_closed;
	bool released; /* the TOE holds nothing of it (TOE_ECQ_SOCKET_RELEASED) */
	bool file_closed; /* its file is gone: freed once the TOE has released it */
};

struct toe_ring {
	void *contexts; /* TOE_RING_ENTRIES contexts of TOE_DESC_BYTES */
	dma_addr_t dma;
	u32 index; /* the host's index: the tail of CmdQ, SendQ, RecvQ; the head of the ECQ */
};

struct toe_device {
	struct device *dev;
	void __iomem *regs; /* the whole register window */
	void __iomem *channel; /* channel 0's page */
	int irq;
	u32 channels;
	spinlock_t lock; /* the rings' host indices and the socket table */
	wait_queue_head_t ring_wait; /* posters waiting for room in a full ring */
	struct toe_ring rings[TOE_RINGS];
	struct toe_socket *sockets[TOE_SOCKET_IDS];
	struct miscdevice misc;
	u64 interrupts;
	u64 events;
	u64 stray_events; /* completions naming no socket of ours */
};

int toe_post(struct toe_device *toe, unsigned int queue, const void *context);
void toe_socket_free(struct toe_socket *sock);
int toe_chardev_register(struct toe_device *toe);
void toe_chardev_unregister(struct toe_device *toe);

#endif /* VTOE_TOE_INTERNAL_H */
