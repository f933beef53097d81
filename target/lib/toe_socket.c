#include "toe_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

int toe_socket(void)
{
	return open(TOE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

int toe_connect(int sock, const char *ip, unsigned int port)
{
	struct toe_sockaddr peer = { 0 };
	struct in_addr addr;

	if (!inet_aton(ip, &addr) || port == 0 || port > 65535) {
		errno = EINVAL;
		return -1;
	}
	peer.ip = ntohl(addr.s_addr);
	peer.port = (unsigned short)port;
	return ioctl(sock, TOE_IOC_CONNECT, &peer);
}

int toe_bind(int sock, const char *ip, unsigned int port)
{
	struct toe_sockaddr local = { 0 };
	struct in_addr addr = { 0 };

	if ((ip && !inet_aton(ip, &addr)) || port == 0 || port > 65535) {
		errno = EINVAL;
		return -1;
	}
	local.ip = ntohl(addr.s_addr);
	local.port = (unsigned short)port;
	return ioctl(sock, TOE_IOC_BIND, &local);
}

int toe_listen(int sock, int backlog)
{
	return ioctl(sock, TOE_IOC_LISTEN, (unsigned long)backlog);
}

int toe_accept(int sock)
{
	int fd;

	do
		fd = ioctl(sock, TOE_IOC_ACCEPT);
	while (fd < 0 && errno == EINTR);
	return fd;
}

ssize_t toe_send(int sock, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(sock, p + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t toe_recv(int sock, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(sock, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

int toe_info(int sock, struct toe_socket_info *info)
{
	return ioctl(sock, TOE_IOC_INFO, info);
}

int toe_close(int sock)
{
	return close(sock);
}
