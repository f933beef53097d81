// SPDX-License-Identifier: GPL-2.0
/*
 * The TOE driver (paper section 2.2): a platform driver bound through the device tree
 * ("vtoe,toe"). It maps the register window, puts channel 0's four rings (CmdQ, SendQ, RecvQ,
 * ECQ) in DMA-coherent memory, posts contexts and rings the doorbells, and drains the event
 * completion queue in the interrupt's thread, waking the process that waits on the socket id
 * each completion names. /dev/toe (toe_chardev.c) gives user space the socket calls.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/irq.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include "toe_internal.h"

static void __iomem *toe_ring_reg(struct toe_device *toe, unsigned int queue, u32 reg)
{
	return toe->channel + TOE_RING_BASE + queue * TOE_RING_STRIDE + reg;
}

/* Copies one context into the ring and rings the doorbell; -EBUSY while the ring is full. */
static int toe_try_post(struct toe_device *toe, unsigned int queue, const void *context)
{
	struct toe_ring *ring = &toe->rings[queue];
	unsigned long flags;
	u32 next;

	spin_lock_irqsave(&toe->lock, flags);
	next = (ring->index + 1) % TOE_RING_ENTRIES;
	/* The TOE owns the head: full while the tail would reach it. */
	if (next == readl(toe_ring_reg(toe, queue, TOE_RING_HEAD))) {
		spin_unlock_irqrestore(&toe->lock, flags);
		return -EBUSY;
	}
	memcpy(ring->contexts + ring->index * TOE_DESC_BYTES, context, TOE_DESC_BYTES);
	ring->index = next;
	/* writel orders the context's stores before the doorbell. */
	writel(next, toe_ring_reg(toe, queue, TOE_RING_TAIL));
	spin_unlock_irqrestore(&toe->lock, flags);
	return 0;
}

/* Posts a context, waiting (bounded) while its ring is full. */
int toe_post(struct toe_device *toe, unsigned int queue, const void *context)
{
	unsigned long deadline = jiffies + 5 * HZ;
	u64 seen;
	int ret;

	for (;;) {
		ret = toe_try_post(toe, queue, context);
		if (ret != -EBUSY)
			return ret;
		if (time_after(jiffies, deadline)) {
			dev_err(toe->dev, "ring %u stays full: the TOE takes no contexts\n", queue);
			return -EIO;
		}
		/* Completions free room; the timeout covers a ring the TOE drains silently. */
		seen = READ_ONCE(toe->events);
		wait_event_timeout(toe->ring_wait, READ_ONCE(toe->events) != seen, HZ / 100);
	}
}

void toe_socket_free(struct toe_socket *sock)
{
	struct device *dev = sock->toe->dev;

	dma_free_coherent(dev, TOE_SEND_SLOTS * TOE_SEND_SLOT_BYTES, sock->send_buffer,
			  sock->send_dma);
	dma_free_coherent(dev, TOE_RX_BUFFER_BYTES, sock->rx_buffer, sock->rx_dma);
	kfree(sock);
}

static bool toe_socket_idle(const struct toe_socket *sock)
{
	return sock->free_slots == GENMASK(TOE_SEND_SLOTS - 1, 0);
}

/* One completion, under the lock: returns the socket to free when the TOE is done with it. */
static struct toe_socket *toe_complete(struct toe_device *toe, const struct toe_ecq_desc *ev)
{
	struct toe_socket *sock = ev->sock < TOE_SOCKET_IDS ? toe->sockets[ev->sock] : NULL;
	bool send = ev->cookie & TOE_COOKIE_SEND;
	u32 slot = ev->cookie & ~TOE_COOKIE_SEND;

	++toe->events;
	if (!sock) {
		++toe->stray_events;
		dev_warn_ratelimited(toe->dev, "event %u for socket %u, which is not open\n",
				     ev->type, ev->sock);
		return NULL;
	}
	switch (ev->type) {
	case TOE_EVENT_CONNECTED:
	case TOE_EVENT_ACCEPTED:
		sock->state = TOE_SOCKET_CONNECTED;
		break;
	case TOE_EVENT_SEND_DONE:
		sock->bytes_sent += ev->length;
		break;
	case TOE_EVENT_CMD_DONE:
		++sock->commands_done;
		break;
	case TOE_EVENT_RX_DATA:
		/* The TOE writes the buffer as a ring: the bytes follow those already reported. */
		sock->rx_pending += ev->length;
		sock->rx_asked = false;
		break;
	case TOE_EVENT_PEER_CLOSED:
		sock->peer_closed = true;
		break;
	case TOE_EVENT_CLOSED:
		sock->state = TOE_SOCKET_CLOSED;
		if (ev->status != TOE_RESULT_OK)
			sock->last_status = ev->status;
		break;
	case TOE_EVENT_ERROR:
		sock->last_status = ev->status;
		/* A failed send leaves the connection as it was; anything else ends it. */
		if (!send)
			sock->state = TOE_SOCKET_FAILED;
		break;
	default:
		dev_warn_ratelimited(toe->dev, "socket %u: unknown event type %u\n", ev->sock,
				     ev->type);
		break;
	}
	/* SendDone or a send's Error: the TOE has read the slot (or never will). */
	if (send && slot < TOE_SEND_SLOTS)
		sock->free_slots |= BIT(slot);
	if (ev->flags & TOE_ECQ_SOCKET_RELEASED)
		sock->released = true;
	wake_up(&sock->wait);
	if (sock->file_closed && sock->released && toe_socket_idle(sock)) {
		toe->sockets[sock->id] = NULL;
		return sock;
	}
	return NULL;
}

/*
 * The interrupt's thread (the paper's kernel thread woken by the ISR): takes every valid ECQ
 * entry, hands it to its socket, and writes the ECQ head back, which lowers the level. The line
 * stays masked until this returns (IRQF_ONESHOT); entries written meanwhile keep it high.
 */
static irqreturn_t toe_ecq_thread(int irq, void *data)
{
	struct toe_device *toe = data;
	struct toe_ring *ecq = &toe->rings[TOE_QUEUE_ECQ];
	struct toe_ecq_desc *entries = ecq->contexts;
	unsigned int taken = 0;

	++toe->interrupts;
	for (;;) {
		struct toe_ecq_desc *entry = &entries[ecq->index];
		struct toe_socket *done;
		struct toe_ecq_desc ev;

		if (!READ_ONCE(entry->valid))
			break;
		dma_rmb(); /* the entry's fields after its valid byte */
		ev = *entry;
		WRITE_ONCE(entry->valid, 0);
		spin_lock_irq(&toe->lock);
		ecq->index = (ecq->index + 1) % TOE_RING_ENTRIES;
		done = toe_complete(toe, &ev);
		spin_unlock_irq(&toe->lock);
		if (done)
			toe_socket_free(done);
		++taken;
	}
	writel(ecq->index, toe_ring_reg(toe, TOE_QUEUE_ECQ, TOE_RING_HEAD));
	wake_up(&toe->ring_wait);
	return taken ? IRQ_HANDLED : IRQ_NONE;
}

static int toe_setup_rings(struct toe_device *toe)
{
	unsigned int q;

	for (q = 0; q < TOE_RINGS; ++q) {
		struct toe_ring *ring = &toe->rings[q];

		ring->contexts = dmam_alloc_coherent(toe->dev, TOE_RING_ENTRIES * TOE_DESC_BYTES,
						     &ring->dma, GFP_KERNEL);
		if (!ring->contexts)
			return -ENOMEM;
		ring->index = 0;
		/* Writing a ring's address or size resets its head and tail to 0. */
		writel(lower_32_bits(ring->dma), toe_ring_reg(toe, q, TOE_RING_ADDR_LO));
		writel(upper_32_bits(ring->dma), toe_ring_reg(toe, q, TOE_RING_ADDR_HI));
		writel(TOE_RING_ENTRIES, toe_ring_reg(toe, q, TOE_RING_SIZE));
	}
	return 0;
}

static int toe_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct toe_device *toe;
	struct resource *res;
	u32 dt_channels = 0;
	int ret;

	toe = devm_kzalloc(dev, sizeof(*toe), GFP_KERNEL);
	if (!toe)
		return -ENOMEM;
	toe->dev = dev;
	spin_lock_init(&toe->lock);
	init_waitqueue_head(&toe->ring_wait);
	platform_set_drvdata(pdev, toe);

	toe->regs = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(toe->regs))
		return dev_err_probe(dev, PTR_ERR(toe->regs), "cannot map the registers\n");
	toe->channel = toe->regs + TOE_CHANNEL_BASE;
	toe->irq = platform_get_irq(pdev, 0);
	if (toe->irq < 0)
		return toe->irq;
	of_property_read_u32(dev->of_node, "vtoe,channels", &dt_channels);
	toe->channels = readl(toe->regs + TOE_CONTROL_UNIT_BASE + TOE_CHANNEL_COUNT);
	if (toe->channels == 0 || toe->channels > TOE_MAX_CHANNELS)
		return dev_err_probe(dev, -ENODEV, "CHANNEL_COUNT reads %u: no TOE there\n",
				     toe->channels);

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(32));
	if (ret)
		return dev_err_probe(dev, ret, "no 32-bit DMA\n");
	ret = toe_setup_rings(toe);
	if (ret)
		return dev_err_probe(dev, ret, "cannot allocate the rings\n");
	ret = devm_request_threaded_irq(dev, toe->irq, NULL, toe_ecq_thread, IRQF_ONESHOT,
					TOE_DRIVER_NAME, toe);
	if (ret)
		return dev_err_probe(dev, ret, "cannot take IRQ %d\n", toe->irq);
	writel(TOE_CTRL_ENABLE | TOE_CTRL_IRQ_ENABLE, toe->channel + TOE_CTRL);
	if (readl(toe->channel + TOE_STATUS) & TOE_STATUS_ERROR) {
		writel(0, toe->channel + TOE_CTRL);
		return dev_err_probe(dev, -EIO, "channel 0 refused its ring programming\n");
	}
	ret = toe_chardev_register(toe);
	if (ret) {
		writel(0, toe->channel + TOE_CTRL);
		return dev_err_probe(dev, ret, "cannot register /dev/%s\n", toe->misc.name);
	}
	dev_info(dev, "TOE at %pa: %u channels (device tree: %u), IRQ %d (GIC ID %lu), channel 0: 4 rings of %u contexts, /dev/%s\n",
		 &res->start, toe->channels, dt_channels, toe->irq,
		 irqd_to_hwirq(irq_get_irq_data(toe->irq)), TOE_RING_ENTRIES, toe->misc.name);
	return 0;
}

static int toe_remove(struct platform_device *pdev)
{
	struct toe_device *toe = platform_get_drvdata(pdev);
	unsigned int id, held = 0;

	toe_chardev_unregister(toe);
	/* A disabled channel posts nothing more; then the sockets the TOE still held can go. */
	writel(0, toe->channel + TOE_CTRL);
	synchronize_irq(toe->irq);
	for (id = 0; id < TOE_SOCKET_IDS; ++id) {
		if (toe->sockets[id]) {
			toe_socket_free(toe->sockets[id]);
			++held;
		}
		toe->sockets[id] = NULL;
	}
	dev_info(toe->dev, "removed after %llu interrupts, %llu completions (%llu for no socket); %u closed sockets the TOE still held\n",
		 toe->interrupts, toe->events, toe->stray_events, held);
	return 0;
}

static const struct of_device_id toe_of_match[] = {
	{ .compatible = "vtoe,toe" },
	{}
};
/*
 * No MODULE_DEVICE_TABLE: Debian's linux-kbuild is the host's build, whose modpost sizes
 * struct of_device_id for the host (200 bytes, 196 on ARM) and refuses a cross-built table.
 * The table binds the driver all the same; only the alias for automatic loading is missing,
 * and /init loads the module by name.
 */

static struct platform_driver toe_driver = {
	.probe = toe_probe,
	.remove = toe_remove,
	.driver = {
		.name = TOE_DRIVER_NAME,
		.of_match_table = toe_of_match,
	},
};
module_platform_driver(toe_driver);

MODULE_DESCRIPTION("vtoe TCP/IP offload engine: rings, interrupt and /dev/toe sockets");
MODULE_LICENSE("GPL");
