// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/toe: the socket API of paper section 2.2 as a character device (toe_api.h). Opening it
 * creates a socket; connect(), bind(), listen() and accept() are ioctls posting Connect, Listen
 * and Accept commands (an accepted connection is a new file); write() is send(): the
 * payload is copied from the user buffer into the socket's kernel send buffer by programmed I/O
 * (copy_from_user), and a SendQ context points the TOE's DMA at it; read() is recv(): it copies
 * what the TOE wrote into the socket's kernel receive buffer and gives the space back by a RecvQ
 * context (asking to be told of the next byte when it has to wait); close() waits for the TOE
 * to have read every byte, then posts Close. A caller that must wait sleeps on its socket's
 * queue, which the ECQ thread wakes by socket id.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "toe_internal.h"

/*
 * Bounds on waiting for the TOE, in the kernel's time (the simulated time on vtoe): a TOE that
 * never answers gives an error instead of a hang.
 */
#define TOE_CONNECT_TIMEOUT (10 * HZ)
#define TOE_SEND_TIMEOUT (10 * HZ)
#define TOE_CLOSE_TIMEOUT (10 * HZ)
/* recv() on a connection that stays silent this long fails with ETIMEDOUT. */
#define TOE_RECV_TIMEOUT (30 * HZ)
/* accept() waiting this long for a connection fails with ETIMEDOUT. */
#define TOE_ACCEPT_TIMEOUT (30 * HZ)

/* The errno of a TOE status (TOE_RESULT_*). */
static int toe_errno(int status)
{
	switch (status) {
	case TOE_RESULT_REFUSED:
		return -ECONNREFUSED;
	case TOE_RESULT_RESET:
		return -ECONNRESET;
	case TOE_RESULT_TIMED_OUT:
		return -ETIMEDOUT;
	case TOE_RESULT_TABLE_FULL:
		return -ENOBUFS;
	case TOE_RESULT_PORT_IN_USE:
		return -EADDRINUSE;
	case TOE_RESULT_BAD_SOCKET:
		return -EBADF;
	case TOE_RESULT_BAD_DESCRIPTOR:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* A new socket with an id of its own and its kernel buffers. */
static struct toe_socket *toe_socket_new(struct toe_device *toe)
{
	struct device *dev = toe->dev;
	struct toe_socket *sock;
	unsigned int id;

	sock = kzalloc(sizeof(*sock), GFP_KERNEL);
	if (!sock)
		return ERR_PTR(-ENOMEM);
	sock->toe = toe;
	sock->state = TOE_SOCKET_OPEN;
	sock->free_slots = GENMASK(TOE_SEND_SLOTS - 1, 0);
	init_waitqueue_head(&sock->wait);
	mutex_init(&sock->recv_lock);
	sock->send_buffer = dma_alloc_coherent(dev, TOE_SEND_SLOTS * TOE_SEND_SLOT_BYTES,
					       &sock->send_dma, GFP_KERNEL);
	sock->rx_buffer = dma_alloc_coherent(dev, TOE_RX_BUFFER_BYTES, &sock->rx_dma,
					     GFP_KERNEL);
	if (!sock->send_buffer || !sock->rx_buffer)
		goto no_memory;

	spin_lock_irq(&toe->lock);
	for (id = 1; id < TOE_SOCKET_IDS && toe->sockets[id]; ++id)
		;
	if (id < TOE_SOCKET_IDS) {
		sock->id = id;
		toe->sockets[id] = sock;
	}
	spin_unlock_irq(&toe->lock);
	if (id == TOE_SOCKET_IDS) {
		toe_socket_free(sock);
		return ERR_PTR(-EMFILE);
	}
	return sock;

no_memory:
	if (sock->send_buffer)
		dma_free_coherent(dev, TOE_SEND_SLOTS * TOE_SEND_SLOT_BYTES, sock->send_buffer,
				  sock->send_dma);
	if (sock->rx_buffer)
		dma_free_coherent(dev, TOE_RX_BUFFER_BYTES, sock->rx_buffer, sock->rx_dma);
	kfree(sock);
	return ERR_PTR(-ENOMEM);
}

static int toe_open(struct inode *inode, struct file *file)
{
	struct toe_device *toe = container_of(file->private_data, struct toe_device, misc);
	struct toe_socket *sock = toe_socket_new(toe);

	if (IS_ERR(sock))
		return PTR_ERR(sock);
	file->private_data = sock;
	return 0;
}

/* Posts a command for the socket; peer: Connect's address; arg: Listen's backlog, Accept's
   listening socket. */
static int toe_command(struct toe_socket *sock, u8 opcode, const struct toe_sockaddr *peer,
		       u16 arg)
{
	struct toe_cmd_desc cmd = {
		.opcode = opcode,
		.sock = sock->id,
		.port = sock->local_port,
		.arg = arg,
		.rx_size = TOE_RX_BUFFER_BYTES,
		.rx_addr = sock->rx_dma,
		.cookie = opcode,
		.local_ip = sock->local_ip,
	};

	if (peer) {
		cmd.ip = peer->ip;
		cmd.port = peer->port;
	}
	return toe_post(sock->toe, TOE_QUEUE_CMD, &cmd);
}

static enum toe_socket_state toe_state(struct toe_socket *sock)
{
	return READ_ONCE(sock->state);
}

static long toe_connect(struct toe_socket *sock, const struct toe_sockaddr __user *uaddr)
{
	struct toe_device *toe = sock->toe;
	struct toe_sockaddr peer;
	long left;
	int ret;

	if (copy_from_user(&peer, uaddr, sizeof(peer)))
		return -EFAULT;
	if (peer.port == 0)
		return -EINVAL;
	spin_lock_irq(&toe->lock);
	ret = sock->state == TOE_SOCKET_OPEN ? 0 : -EISCONN;
	if (!ret)
		sock->state = TOE_SOCKET_CONNECTING;
	spin_unlock_irq(&toe->lock);
	if (ret)
		return ret;
	ret = toe_command(sock, TOE_CMD_CONNECT, &peer, 0);
	if (ret)
		return ret;
	left = wait_event_interruptible_timeout(sock->wait,
						toe_state(sock) != TOE_SOCKET_CONNECTING,
						TOE_CONNECT_TIMEOUT);
	if (left < 0)
		return left;
	if (left == 0) {
		dev_warn(toe->dev, "socket %u: no answer to Connect to %pI4h:%u\n", sock->id,
			 &peer.ip, peer.port);
		return -ETIMEDOUT;
	}
	return toe_state(sock) == TOE_SOCKET_CONNECTED ? 0 : toe_errno(sock->last_status);
}

static long toe_bind(struct toe_socket *sock, const struct toe_sockaddr __user *uaddr)
{
	struct toe_sockaddr local;
	int ret = 0;

	if (copy_from_user(&local, uaddr, sizeof(local)))
		return -EFAULT;
	if (local.port == 0)
		return -EINVAL;
	spin_lock_irq(&sock->toe->lock);
	if (sock->state != TOE_SOCKET_OPEN || sock->local_port) {
		ret = -EINVAL;
	} else {
		sock->local_ip = local.ip;
		sock->local_port = local.port;
	}
	spin_unlock_irq(&sock->toe->lock);
	return ret;
}

static long toe_listen(struct toe_socket *sock, unsigned long backlog)
{
	struct toe_device *toe = sock->toe;
	u32 done_before;
	long left;
	int ret;

	if (!sock->local_port || toe_state(sock) != TOE_SOCKET_OPEN)
		return sock->local_port ? -EINVAL : -EDESTADDRREQ;
	done_before = READ_ONCE(sock->commands_done);
	ret = toe_command(sock, TOE_CMD_LISTEN, NULL, clamp_val(backlog, 1, U16_MAX));
	if (ret)
		return ret;
	left = wait_event_interruptible_timeout(sock->wait,
						READ_ONCE(sock->commands_done) != done_before ||
						toe_state(sock) != TOE_SOCKET_OPEN,
						TOE_CONNECT_TIMEOUT);
	if (left <= 0)
		return left ? left : -ETIMEDOUT;
	spin_lock_irq(&toe->lock);
	if (sock->state == TOE_SOCKET_OPEN)
		sock->state = TOE_SOCKET_LISTENING;
	ret = sock->state == TOE_SOCKET_LISTENING ? 0 : toe_errno(sock->last_status);
	spin_unlock_irq(&toe->lock);
	return ret;
}

static const struct file_operations toe_fops;
static void toe_socket_close(struct toe_socket *sock);

/* accept(): a new socket the TOE binds to the listener's next connection, as a new file. */
static long toe_accept(struct toe_socket *listener)
{
	struct toe_socket *sock;
	long left;
	int ret;

	if (toe_state(listener) != TOE_SOCKET_LISTENING)
		return -EINVAL;
	sock = toe_socket_new(listener->toe);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	sock->state = TOE_SOCKET_CONNECTING;
	ret = toe_command(sock, TOE_CMD_ACCEPT, NULL, listener->id);
	if (ret) {
		sock->state = TOE_SOCKET_OPEN; /* the TOE never saw it */
		toe_socket_close(sock);
		return ret;
	}
	left = wait_event_interruptible_timeout(sock->wait,
						toe_state(sock) != TOE_SOCKET_CONNECTING,
						TOE_ACCEPT_TIMEOUT);
	if (left > 0 && toe_state(sock) != TOE_SOCKET_CONNECTED)
		left = toe_errno(sock->last_status);
	else if (left == 0)
		left = -ETIMEDOUT;
	if (left < 0) {
		/* The TOE may still hold the Accept: the socket goes when the TOE releases it, or
		   when the driver is removed. */
		toe_socket_close(sock);
		return left;
	}
	ret = anon_inode_getfd("[toe]", &toe_fops, sock, O_RDWR | O_CLOEXEC);
	if (ret < 0)
		toe_socket_close(sock);
	return ret;
}

static long toe_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct toe_socket *sock = file->private_data;
	struct toe_socket_info info = {};

	switch (cmd) {
	case TOE_IOC_CONNECT:
		return toe_connect(sock, (const struct toe_sockaddr __user *)arg);
	case TOE_IOC_BIND:
		return toe_bind(sock, (const struct toe_sockaddr __user *)arg);
	case TOE_IOC_LISTEN:
		return toe_listen(sock, arg);
	case TOE_IOC_ACCEPT:
		return toe_accept(sock);
	case TOE_IOC_INFO:
		spin_lock_irq(&sock->toe->lock);
		info.sock = sock->id;
		info.state = sock->state;
		info.last_status = sock->last_status;
		info.bytes_sent = sock->bytes_sent;
		info.bytes_queued = sock->bytes_queued;
		spin_unlock_irq(&sock->toe->lock);
		return copy_to_user((void __user *)arg, &info, sizeof(info)) ? -EFAULT : 0;
	default:
		return -ENOTTY;
	}
}

/* Takes a free send slot, waiting (bounded) for the TOE to finish reading one. */
static int toe_take_slot(struct toe_socket *sock)
{
	struct toe_device *toe = sock->toe;
	long left;
	int slot;

	left = wait_event_interruptible_timeout(sock->wait,
						READ_ONCE(sock->free_slots) ||
						toe_state(sock) != TOE_SOCKET_CONNECTED,
						TOE_SEND_TIMEOUT);
	if (left < 0)
		return left;
	spin_lock_irq(&toe->lock);
	if (sock->state != TOE_SOCKET_CONNECTED) {
		slot = sock->last_status ? toe_errno(sock->last_status) : -EPIPE;
	} else if (!sock->free_slots) {
		slot = -ETIMEDOUT;
	} else {
		slot = __ffs(sock->free_slots);
		sock->free_slots &= ~BIT(slot);
	}
	spin_unlock_irq(&toe->lock);
	if (slot == -ETIMEDOUT)
		dev_warn(toe->dev, "socket %u: the TOE read no send buffer in time\n", sock->id);
	return slot;
}

static void toe_return_slot(struct toe_socket *sock, unsigned int slot)
{
	spin_lock_irq(&sock->toe->lock);
	sock->free_slots |= BIT(slot);
	spin_unlock_irq(&sock->toe->lock);
}

/* send(): returns the bytes handed to the TOE, or an error if none were. */
static ssize_t toe_write(struct file *file, const char __user *buf, size_t count, loff_t *pos)
{
	struct toe_socket *sock = file->private_data;
	size_t done = 0;
	int ret = 0;

	if (toe_state(sock) != TOE_SOCKET_CONNECTED)
		return -ENOTCONN;
	while (done < count) {
		size_t chunk = min_t(size_t, count - done, TOE_SEND_SLOT_BYTES);
		struct toe_send_desc desc = {};
		void *kbuf;
		int slot;

		slot = toe_take_slot(sock);
		if (slot < 0) {
			ret = slot;
			break;
		}
		kbuf = sock->send_buffer + slot * TOE_SEND_SLOT_BYTES;
		/* The paper's programmed-I/O copy from the user buffer to the kernel buffer. */
		if (copy_from_user(kbuf, buf + done, chunk)) {
			toe_return_slot(sock, slot);
			ret = -EFAULT;
			break;
		}
		desc.sock = sock->id;
		desc.length = chunk;
		desc.addr = sock->send_dma + slot * TOE_SEND_SLOT_BYTES;
		desc.cookie = TOE_COOKIE_SEND | slot;
		ret = toe_post(sock->toe, TOE_QUEUE_SEND, &desc);
		if (ret) {
			toe_return_slot(sock, slot);
			break;
		}
		spin_lock_irq(&sock->toe->lock);
		sock->bytes_queued += chunk;
		spin_unlock_irq(&sock->toe->lock);
		done += chunk;
	}
	return done ? done : ret;
}

/* A RecvQ context: gives back `released` bytes of the receive buffer; flags may ask for news. */
static int toe_recv_context(struct toe_socket *sock, u32 released, u16 flags)
{
	struct toe_recv_desc desc = {
		.sock = sock->id,
		.flags = flags,
		.release = released,
	};

	return toe_post(sock->toe, TOE_QUEUE_RECV, &desc);
}

static bool toe_recv_ready(struct toe_socket *sock)
{
	enum toe_socket_state state = toe_state(sock);

	return READ_ONCE(sock->rx_pending) || READ_ONCE(sock->peer_closed) ||
	       (state != TOE_SOCKET_CONNECTED && state != TOE_SOCKET_CLOSING);
}

/* Waits (bounded) for received bytes; 0 with none means the stream ended. */
static int toe_recv_wait(struct toe_socket *sock, u32 *pending)
{
	struct toe_device *toe = sock->toe;
	bool ask;
	long left;
	int ret;

	spin_lock_irq(&toe->lock);
	*pending = sock->rx_pending;
	if (*pending || sock->peer_closed) {
		spin_unlock_irq(&toe->lock);
		return 0;
	}
	if (sock->state != TOE_SOCKET_CONNECTED && sock->state != TOE_SOCKET_CLOSING) {
		ret = sock->state == TOE_SOCKET_FAILED ? toe_errno(sock->last_status) : -ENOTCONN;
		spin_unlock_irq(&toe->lock);
		return ret;
	}
	/* The TOE reports data when its buffer fills, unless asked to tell of the next byte. */
	ask = !sock->rx_asked;
	sock->rx_asked = true;
	spin_unlock_irq(&toe->lock);
	if (ask) {
		ret = toe_recv_context(sock, 0, TOE_RECV_NOTIFY_NOW);
		if (ret)
			return ret;
	}
	left = wait_event_interruptible_timeout(sock->wait, toe_recv_ready(sock), TOE_RECV_TIMEOUT);
	if (left < 0)
		return left;
	if (left == 0) {
		dev_warn(toe->dev, "socket %u: nothing received in %u s\n", sock->id,
			 TOE_RECV_TIMEOUT / HZ);
		return -ETIMEDOUT;
	}
	spin_lock_irq(&toe->lock);
	*pending = sock->rx_pending;
	ret = 0;
	if (!*pending && !sock->peer_closed && sock->state == TOE_SOCKET_FAILED)
		ret = toe_errno(sock->last_status);
	spin_unlock_irq(&toe->lock);
	return ret;
}

/* recv(): copies what the TOE put in the kernel's receive buffer, then gives the space back. */
static ssize_t toe_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
{
	struct toe_socket *sock = file->private_data;
	struct toe_device *toe = sock->toe;
	size_t done = 0;
	u32 pending, head;
	int ret;

	if (count == 0)
		return 0;
	if (mutex_lock_interruptible(&sock->recv_lock))
		return -ERESTARTSYS;
	ret = toe_recv_wait(sock, &pending);
	if (ret || !pending)
		goto out;
	head = sock->rx_head;
	while (done < count && done < pending) {
		size_t n = min3(count - done, (size_t)(pending - done),
				(size_t)(TOE_RX_BUFFER_BYTES - head));

		if (copy_to_user(buf + done, sock->rx_buffer + head, n))
			break;
		done += n;
		head = (head + n) % TOE_RX_BUFFER_BYTES;
	}
	if (!done) {
		ret = -EFAULT;
		goto out;
	}
	spin_lock_irq(&toe->lock);
	sock->rx_head = head;
	sock->rx_pending -= done;
	spin_unlock_irq(&toe->lock);
	if (toe_recv_context(sock, done, 0))
		dev_err(toe->dev, "socket %u: could not give %zu bytes of buffer back\n", sock->id,
			done);
out:
	mutex_unlock(&sock->recv_lock);
	return done ? done : ret;
}

/*
 * close(): a connection's sends are read by the TOE first, then Close (the FIN follows the
 * data); a listener's Close ends it. The socket id and buffers go when the TOE has released
 * the socket (at once for one it never knew).
 */
static void toe_socket_close(struct toe_socket *sock)
{
	struct toe_device *toe = sock->toe;
	enum toe_socket_state state = toe_state(sock);
	bool free_now;

	if (state == TOE_SOCKET_CONNECTED || state == TOE_SOCKET_LISTENING) {
		u32 done_before = READ_ONCE(sock->commands_done);

		if (!wait_event_timeout(sock->wait, READ_ONCE(sock->free_slots) ==
					GENMASK(TOE_SEND_SLOTS - 1, 0), TOE_CLOSE_TIMEOUT))
			dev_warn(toe->dev, "socket %u: closing with sends unfinished\n", sock->id);
		spin_lock_irq(&toe->lock);
		if (sock->state == state)
			sock->state = TOE_SOCKET_CLOSING;
		spin_unlock_irq(&toe->lock);
		if (toe_command(sock, TOE_CMD_CLOSE, NULL, 0) ||
		    !wait_event_timeout(sock->wait, READ_ONCE(sock->commands_done) != done_before ||
					toe_state(sock) != TOE_SOCKET_CLOSING, TOE_CLOSE_TIMEOUT))
			dev_warn(toe->dev, "socket %u: Close not acknowledged\n", sock->id);
	}
	spin_lock_irq(&toe->lock);
	sock->file_closed = true;
	free_now = (sock->state == TOE_SOCKET_OPEN || sock->released) &&
		   sock->free_slots == GENMASK(TOE_SEND_SLOTS - 1, 0);
	if (free_now)
		toe->sockets[sock->id] = NULL;
	spin_unlock_irq(&toe->lock);
	if (free_now)
		toe_socket_free(sock);
}

static int toe_release(struct inode *inode, struct file *file)
{
	toe_socket_close(file->private_data);
	return 0;
}

static const struct file_operations toe_fops = {
	.owner = THIS_MODULE,
	.open = toe_open,
	.release = toe_release,
	.read = toe_read,
	.write = toe_write,
	.unlocked_ioctl = toe_ioctl,
	.llseek = no_llseek,
};

int toe_chardev_register(struct toe_device *toe)
{
	toe->misc.minor = MISC_DYNAMIC_MINOR;
	toe->misc.name = "toe";
	toe->misc.fops = &toe_fops;
	toe->misc.parent = toe->dev;
	return misc_register(&toe->misc);
}

void toe_chardev_unregister(struct toe_device *toe)
{
	misc_deregister(&toe->misc);
}
