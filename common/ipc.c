/*
 * common/ipc.c — typed messages over a SOCK_SEQPACKET socketpair.
 *
 * Runs on both sides of every privilege boundary: a receiver must assume
 * its peer is hostile (taken over by the input it parses).  Every header
 * is read through struct buf, every message is checked against the
 * protocol table and the peer's permit table before a handler sees it,
 * and descriptors that arrive where none belong are closed, never used.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/ipc.h"

/* Room for a few descriptors: more than one is a violation we want to
 * see (and close), not have the kernel drop silently. */
#define IPC_MAX_FDS	4

const struct ipc_type *
ipc_type_find(const struct ipc_proto *proto, uint32_t type)
{
	size_t i;

	for (i = 0; i < proto->ntypes; i++)
		if (proto->types[i].type == type)
			return &proto->types[i];
	return NULL;
}

/* The peer's handler for a type, or NULL: not permitted from it. */
static const struct ipc_handler *
permit_find(const struct ipc_peer *p, uint32_t type)
{
	size_t i;

	for (i = 0; i < p->npermit; i++)
		if (p->permit[i].type == type)
			return &p->permit[i];
	return NULL;
}

static void
put_be32(uint8_t out[4], uint32_t v)
{
	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

int
ipc_send(int sock, const struct ipc_proto *proto, uint32_t type,
    const void *payload, size_t len, int fd)
{
	const struct ipc_type *t = ipc_type_find(proto, type);
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} cbuf;
	uint8_t hdr[IPC_HDR_LEN];
	struct iovec iov[2];
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;

	if (t == NULL)
		return IPC_EUNKNOWN;
	if (len != t->size || len > IPC_MAX_PAYLOAD)
		return IPC_ESIZE;
	if ((fd >= 0) != ((t->flags & IPC_F_FD) != 0))
		return IPC_EFD;
	put_be32(hdr, IPC_VERSION);
	put_be32(hdr + 4, type);
	put_be32(hdr + 8, (uint32_t)len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)(uintptr_t)payload;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = len > 0 ? 2 : 1;
	if (fd >= 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.b;
		mh.msg_controllen = sizeof(cbuf.b);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return IPC_ESYS;
	return (size_t)n == sizeof(hdr) + len ? IPC_OK : IPC_ETRUNC;
}

/* Collect every descriptor in the control data (closed by the caller
 * unless exactly one was expected). */
static size_t
take_fds(struct msghdr *mh, int fds[IPC_MAX_FDS])
{
	struct cmsghdr *c;
	size_t n = 0, k, i;

	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k && n < IPC_MAX_FDS; i++)
			memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
	}
	return n;
}

/* Check one datagram against the protocol and the peer's permit table. */
static int
check_msg(const struct ipc_peer *p, const uint8_t hdr[IPC_HDR_LEN],
    size_t n, int flags, size_t nfds, struct ipc_msg *m)
{
	uint32_t version, type, len;
	struct buf b;

	if (flags & (MSG_TRUNC | MSG_CTRUNC))
		return IPC_ETRUNC;
	if (n < IPC_HDR_LEN)
		return IPC_ESIZE;
	buf_init(&b, hdr, IPC_HDR_LEN);
	if (buf_get_u32(&b, &version) != BUF_OK ||
	    buf_get_u32(&b, &type) != BUF_OK ||
	    buf_get_u32(&b, &len) != BUF_OK)
		return IPC_ESIZE;
	if (version != IPC_VERSION)
		return IPC_EVERSION;
	if ((m->t = ipc_type_find(p->proto, type)) == NULL)
		return IPC_EUNKNOWN;
	if (permit_find(p, type) == NULL)
		return IPC_EPERM;
	if (len != m->t->size || n - IPC_HDR_LEN != len)
		return IPC_ESIZE;
	if (nfds != ((m->t->flags & IPC_F_FD) ? 1u : 0u))
		return IPC_EFD;
	m->len = len;
	return IPC_OK;
}

int
ipc_recv(const struct ipc_peer *p, struct ipc_msg *m)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
	} cbuf;
	uint8_t hdr[IPC_HDR_LEN], extra[1];
	int fds[IPC_MAX_FDS];
	struct iovec iov[3];
	struct msghdr mh;
	size_t nfds, i;
	ssize_t n;
	int r;

	m->t = NULL;
	m->len = 0;
	m->fd = -1;
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = m->data;
	iov[1].iov_len = sizeof(m->data);
	iov[2].iov_base = extra;	/* anything landing here is too long */
	iov[2].iov_len = sizeof(extra);
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 3;
	mh.msg_control = cbuf.b;
	mh.msg_controllen = sizeof(cbuf.b);
	do
		n = recvmsg(p->sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)	/* a peer that died with our data unread: reset */
		return errno == ECONNRESET ? IPC_EOF : IPC_ESYS;
	nfds = take_fds(&mh, fds);
	if (n == 0 && nfds == 0)
		return IPC_EOF;
	r = check_msg(p, hdr, (size_t)n, mh.msg_flags, nfds, m);
	if (r != IPC_OK) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		m->t = NULL;
		return r;
	}
	if (nfds == 1)
		m->fd = fds[0];
	return IPC_OK;
}

int
ipc_dispatch(const struct ipc_peer *p, void *ctx, uint32_t *typep)
{
	static struct ipc_msg m;	/* 32 KiB: not on the stack; the IPC
					   side of a process is one thread */
	const struct ipc_handler *h;
	int r;

	if ((r = ipc_recv(p, &m)) != IPC_OK)
		return r;
	if (typep != NULL)
		*typep = m.t->type;
	h = permit_find(p, m.t->type);	/* checked by ipc_recv */
	return h->fn(ctx, &m) == 0 ? IPC_OK : IPC_EHANDLER;
}

int
ipc_str_get(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n == srclen || n >= dstlen)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

const char *
ipc_strerror(int status)
{
	switch (status) {
	case IPC_OK:		return "no error";
	case IPC_EOF:		return "peer closed the connection";
	case IPC_ESYS:		return "system call failed";
	case IPC_EVERSION:	return "protocol version mismatch";
	case IPC_EUNKNOWN:	return "unknown message type";
	case IPC_EPERM:		return "message type not permitted from "
				    "this peer";
	case IPC_ESIZE:		return "wrong message size";
	case IPC_EFD:		return "descriptor missing or unexpected";
	case IPC_ETRUNC:	return "message truncated";
	case IPC_EHANDLER:	return "message refused by its handler";
	}
	return "unknown IPC status";
}

int
ipc_helper_start(void (*fn)(int, void *), void *arg, pid_t *pid, int *sock,
    char *err, size_t errlen)
{
	int sv[2];

	*pid = -1;
	*sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return snprintf(err, errlen, "socketpair: %s",
		    strerror(errno)), -1;
	fflush(NULL);	/* nothing buffered is written twice */
	if ((*pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return snprintf(err, errlen, "fork: %s", strerror(errno)), -1;
	}
	if (*pid == 0) {
		close(sv[0]);
		fn(sv[1], arg);
		_exit(1);	/* fn must not return */
	}
	close(sv[1]);
	*sock = sv[0];
	return 0;
}

int
ipc_helper_stop(pid_t *pid, int *sock)
{
	int st = 0, waited = 0;
	pid_t r = 0;

	if (*sock >= 0)
		close(*sock);
	*sock = -1;
	if (*pid > 0) {
		while ((r = waitpid(*pid, &st, WNOHANG)) == 0 &&
		    waited < IPC_HELPER_STOP_MS) {
			usleep(10000);
			waited += 10;
		}
		if (r == 0) {
			kill(*pid, SIGKILL);
			while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
				;
		}
	}
	*pid = -1;
	return st;
}
