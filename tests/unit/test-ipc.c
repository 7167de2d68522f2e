/*
 * tests/unit/test-ipc.c — the typed IPC layer (common/ipc.c) over a real
 * SOCK_SEQPACKET socketpair: good messages and descriptor passing arrive
 * intact, and each violation class (version, unknown type, unpermitted
 * type, wrong size, truncation, missing/unexpected/extra descriptors) is
 * refused with its own code, with every stray descriptor closed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/ipc.h"
#include "tests/tap.h"

enum { T_PING = 1, T_FILE = 2, T_ADMIN = 3 };

struct ping {
	uint32_t	seq;
	char		word[16];
};
struct file {
	uint32_t	kind;
};
struct admin {
	uint64_t	secret;
};

static const struct ipc_type types[] = {
	{ T_PING, sizeof(struct ping), 0, "ping" },
	{ T_FILE, sizeof(struct file), IPC_F_FD, "file" },
	{ T_ADMIN, sizeof(struct admin), 0, "admin" },
};
static const struct ipc_proto proto = { types, 3 };

static int handled_type, handler_result;

static int
on_ping(void *ctx, struct ipc_msg *m)
{
	(void)m;
	*(int *)ctx += 1;
	handled_type = T_PING;
	return handler_result;
}

static int
on_file(void *ctx, struct ipc_msg *m)
{
	(void)ctx;
	handled_type = T_FILE;
	close(m->fd);
	return 0;
}

/* The peer may send ping and file, never admin. */
static const struct ipc_handler permit[] = {
	{ T_PING, on_ping },
	{ T_FILE, on_file },
};

static int sv[2];
static struct ipc_peer peer;

/* Open descriptors of this process (to prove none leak). */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the DIR's own descriptor */
}

/* A hand-made datagram: any header, any payload, any descriptors. */
static void
raw_send(uint32_t version, uint32_t type, uint32_t len, const void *pl,
    size_t pllen, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int) * 4)];
	} cbuf;
	uint8_t hdr[12];
	struct iovec iov[2];
	struct msghdr mh;
	struct cmsghdr *c;
	uint32_t v[3] = { version, type, len };
	size_t i;

	for (i = 0; i < 3; i++) {
		hdr[i * 4] = (uint8_t)(v[i] >> 24);
		hdr[i * 4 + 1] = (uint8_t)(v[i] >> 16);
		hdr[i * 4 + 2] = (uint8_t)(v[i] >> 8);
		hdr[i * 4 + 3] = (uint8_t)v[i];
	}
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)(uintptr_t)pl;
	iov[1].iov_len = pllen;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = pllen ? 2 : 1;
	if (nfds > 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	if (sendmsg(sv[0], &mh, 0) < 0)
		tap_diag("raw sendmsg: %s", strerror(errno));
}

static void
test_good(void)
{
	static struct ipc_msg m;
	struct ping p = { 42, "hello" }, got;
	int calls = 0, pfd[2], flags;
	char buf[8] = "";
	uint32_t type = 0;

	tap_ok(ipc_send(sv[0], &proto, T_PING, &p, sizeof(p), -1) == IPC_OK,
	    "send ping");
	tap_ok(ipc_recv(&peer, &m) == IPC_OK && m.t->type == T_PING &&
	    m.len == sizeof(p) && m.fd == -1, "receive ping: type, size, "
	    "no fd");
	memcpy(&got, m.data, sizeof(got));
	tap_ok(got.seq == 42 && strcmp(got.word, "hello") == 0,
	    "payload intact");

	if (pipe(pfd) != 0)
		return;
	tap_ok(ipc_send(sv[0], &proto, T_FILE, &(struct file){ 7 },
	    sizeof(struct file), pfd[1]) == IPC_OK, "send a descriptor");
	tap_ok(ipc_recv(&peer, &m) == IPC_OK && m.t->type == T_FILE &&
	    m.fd >= 0 && m.fd != pfd[1], "the descriptor arrives as a new "
	    "fd");
	flags = fcntl(m.fd, F_GETFD);
	tap_ok(flags >= 0 && (flags & FD_CLOEXEC), "received fd is "
	    "close-on-exec");
	tap_ok(write(m.fd, "via", 3) == 3 && read(pfd[0], buf, 3) == 3 &&
	    memcmp(buf, "via", 3) == 0, "writing the passed fd reaches the "
	    "pipe");
	close(m.fd);
	close(pfd[0]);
	close(pfd[1]);

	handler_result = 0;
	ipc_send(sv[0], &proto, T_PING, &p, sizeof(p), -1);
	tap_ok(ipc_dispatch(&peer, &calls, &type) == IPC_OK && calls == 1 &&
	    type == T_PING && handled_type == T_PING, "dispatch calls the "
	    "ping handler once with its ctx");
	handler_result = -1;
	ipc_send(sv[0], &proto, T_PING, &p, sizeof(p), -1);
	tap_ok(ipc_dispatch(&peer, &calls, NULL) == IPC_EHANDLER,
	    "a handler's refusal is IPC_EHANDLER");
	handler_result = 0;
}

/* Send a bad datagram; the receiver must refuse it with `want` and hold
 * no more descriptors than before. */
static void
expect(int want, const char *what)
{
	static struct ipc_msg m;
	int before = count_fds(), r;

	r = ipc_recv(&peer, &m);
	tap_ok(r == want && m.fd == -1 && m.t == NULL && count_fds() ==
	    before, "%s: %s", what, ipc_strerror(want));
	if (r != want)
		tap_diag("got %d (%s)", r, ipc_strerror(r));
}

static void
test_violations(void)
{
	static uint8_t big[IPC_MAX_PAYLOAD + 64];
	struct ping p = { 1, "x" };
	struct file f = { 1 };
	int pfd[2], two[2];

	raw_send(IPC_VERSION + 1, T_PING, sizeof(p), &p, sizeof(p), NULL, 0);
	expect(IPC_EVERSION, "wrong version");
	raw_send(IPC_VERSION, 99, sizeof(p), &p, sizeof(p), NULL, 0);
	expect(IPC_EUNKNOWN, "unknown type");
	raw_send(IPC_VERSION, T_ADMIN, sizeof(struct admin), big,
	    sizeof(struct admin), NULL, 0);
	expect(IPC_EPERM, "known type this peer may not send");
	raw_send(IPC_VERSION, T_PING, sizeof(p) - 1, &p, sizeof(p) - 1,
	    NULL, 0);
	expect(IPC_ESIZE, "short payload, header agrees");
	raw_send(IPC_VERSION, T_PING, sizeof(p), &p, sizeof(p) - 1, NULL, 0);
	expect(IPC_ESIZE, "header len disagrees with the datagram");
	raw_send(IPC_VERSION, T_PING, sizeof(p) + 4, big, sizeof(p) + 4,
	    NULL, 0);
	expect(IPC_ESIZE, "long payload");
	raw_send(IPC_VERSION, T_PING, sizeof(big), big, sizeof(big), NULL, 0);
	expect(IPC_ETRUNC, "datagram larger than any message");
	tap_ok(send(sv[0], "abc", 3, 0) == 3, "send a 3-byte datagram");
	expect(IPC_ESIZE, "datagram shorter than a header");

	if (pipe(pfd) != 0 || pipe(two) != 0)
		return;
	raw_send(IPC_VERSION, T_PING, sizeof(p), &p, sizeof(p), pfd, 1);
	expect(IPC_EFD, "descriptor on a type that carries none (closed)");
	raw_send(IPC_VERSION, T_FILE, sizeof(f), &f, sizeof(f), NULL, 0);
	expect(IPC_EFD, "fd-carrying type without a descriptor");
	raw_send(IPC_VERSION, T_FILE, sizeof(f), &f, sizeof(f), two, 2);
	expect(IPC_EFD, "two descriptors where one belongs (both closed)");
	raw_send(IPC_VERSION, T_ADMIN, sizeof(struct admin), big,
	    sizeof(struct admin), pfd, 1);
	expect(IPC_EPERM, "unpermitted type with a descriptor (closed)");
	close(pfd[0]);
	close(pfd[1]);
	close(two[0]);
	close(two[1]);
}

static void
test_sender_checks(void)
{
	struct ping p = { 0 };

	tap_ok(ipc_send(sv[0], &proto, 99, &p, sizeof(p), -1) ==
	    IPC_EUNKNOWN, "send refuses an unknown type");
	tap_ok(ipc_send(sv[0], &proto, T_PING, &p, sizeof(p) - 1, -1) ==
	    IPC_ESIZE, "send refuses a wrong size");
	tap_ok(ipc_send(sv[0], &proto, T_PING, &p, sizeof(p), 0) == IPC_EFD,
	    "send refuses a descriptor on a type without one");
	tap_ok(ipc_send(sv[0], &proto, T_FILE, &p, sizeof(struct file), -1)
	    == IPC_EFD, "send refuses a missing descriptor");
}

static void
test_strings(void)
{
	char src[8] = "abc", full[4] = { 'a', 'b', 'c', 'd' }, dst[8];

	tap_ok(ipc_str_get(dst, sizeof(dst), src, sizeof(src)) == 0 &&
	    strcmp(dst, "abc") == 0, "bounded string copied");
	tap_ok(ipc_str_get(dst, sizeof(dst), full, sizeof(full)) == -1,
	    "unterminated string refused");
	tap_ok(ipc_str_get(dst, 3, src, sizeof(src)) == -1,
	    "string longer than the destination refused");
}

int
main(void)
{
	static struct ipc_msg m;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		tap_skip_all("no SOCK_SEQPACKET socketpair");
	peer = (struct ipc_peer){ sv[1], "test peer", &proto, permit, 2 };
	test_good();
	test_violations();
	test_sender_checks();
	test_strings();
	close(sv[0]);
	tap_ok(ipc_recv(&peer, &m) == IPC_EOF, "peer closed: IPC_EOF");
	close(sv[1]);
	return tap_done();
}
