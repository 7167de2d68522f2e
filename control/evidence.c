/*
 * control/evidence.c — a node's evidence streamed to the control plane
 * (evidence.h): the node uplink's sender and the control plane's
 * receiver.
 *
 * Why an HMAC under a per-session key and not MUNGE: a MUNGE credential
 * costs a munge and an unmunge process and carries at most 2 KiB, while
 * a session writes its recording in chunks many times a second; an
 * HMAC costs microseconds a frame.  The key is handed out inside the
 * MUNGE-encrypted answer that gives the node its session, so only that
 * node (root on it) can write that session's evidence, and only while
 * the session lasts.
 *
 * The receiver: root (it writes in record_dir, root's), confined like
 * the Slurm helper, dies with the parent.  Trust: a frame is untrusted
 * until its MAC checks; a bad frame closes its connection, nothing of
 * it is written.  It holds an flock on each file it writes until the
 * session is over (parent_record_recover leaves such files alone).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/digest.h"
#include "common/log.h"
#include "control/evidence.h"
#include "control/munge.h"
#include "control/parent.h"
#include "control/slurm.h"

#define HEAD_MAX	256

static const char *const ev_ext[EVIDENCE_FILES] = { ".cdsrec",
    ".network.jsonl", ".pcapng" };
static const char *const ev_name[EVIDENCE_FILES] = { "rec", "net", "cap" };

static const struct ipc_type ev_types[] = {
	{ EV_OPEN, sizeof(struct ev_open), 0, "open" },
	{ EV_CLOSE, sizeof(struct ev_close), 0, "close" },
	{ EV_CLOSED, sizeof(struct ev_close), 0, "closed" },
};
const struct ipc_proto evidence_proto = { ev_types, 3 };

/* A frame: its header's MAC'd text, then its bytes, contiguous. */
static uint8_t frame[HEAD_MAX + EVIDENCE_CHUNK_MAX];

int
evidence_address(const char *listen, char *buf, size_t len)
{
	const char *c = strrchr(listen, ':');
	char *end;
	long port;
	int n;

	if (c == NULL)
		return -1;
	port = strtol(c + 1, &end, 10);
	if (*end != '\0' || port <= 0 || port >= 65535)
		return -1;
	n = snprintf(buf, len, "%.*s:%ld", (int)(c - listen), listen,
	    port + 1);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* "<dir>/<id><ext of file f>" */
static int
ev_path(const char *dir, const char *id, int f, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s", dir, id, ev_ext[f]);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* HMAC-SHA256 (hex) of the frame's first n bytes under key. */
static void
frame_mac(const char *key, size_t n, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	HMAC(EVP_sha256(), key, (int)strlen(key), frame, n, md, &mdlen);
	for (i = 0; i < 32 && i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
}

/* One line (no newline) before end (ms), byte by byte: the frame's
 * bytes follow it.  0 read, 1 EOF before any byte, -1 else. */
static int
line_get(int fd, char *buf, size_t len, long long end)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t n;

	while (got + 1 < len) {
		int left = (int)(end - munge_mono_ms());

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		if ((n = read(fd, buf + got, 1)) <= 0)
			return n == 0 && got == 0 ? 1 : -1;
		if (buf[got] == '\n') {
			buf[got] = '\0';
			return 0;
		}
		got++;
	}
	return -1;
}

/* n bytes into buf before end (ms). */
static int
bytes_get(int fd, uint8_t *buf, size_t n, long long end)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		int left = (int)(end - munge_mono_ms());

		if (left <= 0 || poll(&p, 1, left) <= 0 ||
		    (r = read(fd, buf + got, n - got)) <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int
bytes_put(int fd, const void *buf, size_t n)
{
	size_t off = 0;
	ssize_t w;

	while (off < n) {
		if ((w = send(fd, (const char *)buf + off, n - off,
		    MSG_NOSIGNAL)) <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* ---- the receiver (control plane) ---- */

struct ev_sess {
	char		id[STORE_ID_MAX];	/* "": free */
	char		key[EVIDENCE_KEY_LEN + 1];
	char		addr[INET6_ADDRSTRLEN];	/* its node's */
	int		fd[EVIDENCE_FILES];
	uint64_t	size[EVIDENCE_FILES];
};

struct receiver {
	const struct gw_config	*c;
	int			 sock;
	struct ev_sess		 s[PARENT_MAX_SESSIONS];
};

static struct ev_sess *
sess_find(struct receiver *r, const char *id)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (r->s[i].id[0] != '\0' && strcmp(r->s[i].id, id) == 0)
			return &r->s[i];
	return NULL;
}

static int
on_open(void *ctx, struct ipc_msg *m)
{
	struct receiver *r = ctx;
	struct ev_open o;
	struct ev_sess *s;
	int i;

	struct in6_addr a;

	memcpy(&o, m->data, sizeof(o));
	if (ipc_str_get(o.id, sizeof(o.id), ((struct ev_open *)m->data)->id,
	    sizeof(o.id)) != 0 || !store_id_valid(o.id) || ipc_str_get(o.key,
	    sizeof(o.key), ((struct ev_open *)m->data)->key,
	    sizeof(o.key)) != 0 || strlen(o.key) != EVIDENCE_KEY_LEN ||
	    ipc_str_get(o.addr, sizeof(o.addr), ((struct ev_open *)
	    m->data)->addr, sizeof(o.addr)) != 0 || strlen(o.addr) >=
	    INET6_ADDRSTRLEN || (inet_pton(AF_INET, o.addr, &a) != 1 &&
	    inet_pton(AF_INET6, o.addr, &a) != 1) || sess_find(r, o.id) != NULL)
		return -1;
	for (i = 0; i < PARENT_MAX_SESSIONS && r->s[i].id[0] != '\0'; i++)
		;
	if (i == PARENT_MAX_SESSIONS)
		return -1;	/* the parent holds as many: cannot be */
	s = &r->s[i];
	memset(s, 0, sizeof(*s));
	memcpy(s->id, o.id, sizeof(s->id));
	memcpy(s->key, o.key, sizeof(s->key));
	memcpy(s->addr, o.addr, strlen(o.addr) + 1);
	for (i = 0; i < EVIDENCE_FILES; i++)
		s->fd[i] = -1;
	explicit_bzero(&o, sizeof(o));
	return 0;
}

/* The session is over: its files synced and closed, their size said. */
static int
on_close(void *ctx, struct ipc_msg *m)
{
	struct receiver *r = ctx;
	struct ev_close c;
	struct ev_sess *s;
	int i;

	memcpy(&c, m->data, sizeof(c));
	if (ipc_str_get(c.id, sizeof(c.id), ((struct ev_close *)m->data)->id,
	    sizeof(c.id)) != 0 || ipc_str_get(c.end, sizeof(c.end),
	    ((struct ev_close *)m->data)->end, sizeof(c.end)) != 0)
		return -1;
	c.bytes = 0;
	if ((s = sess_find(r, c.id)) != NULL) {
		for (i = 0; i < EVIDENCE_FILES; i++) {
			c.bytes += s->size[i];
			if (s->fd[i] >= 0 && (fsync(s->fd[i]) != 0 ||
			    close(s->fd[i]) != 0))
				log_warn("evidence: session %s: %s", c.id,
				    ev_ext[i]);
		}
		explicit_bzero(s, sizeof(*s));
	}
	return ipc_send(r->sock, &evidence_proto, EV_CLOSED, &c, sizeof(c),
	    -1) == IPC_OK ? 0 : -1;
}

static const struct ipc_handler from_parent[] = {
	{ EV_OPEN, on_open },
	{ EV_CLOSE, on_close },
};

/* File f of s open for appending: made new (never an existing file),
 * locked while the session lasts. */
static int
sess_file(struct receiver *r, struct ev_sess *s, int f)
{
	char path[STORE_PATH_MAX];

	if (s->fd[f] >= 0)
		return 0;
	if (ev_path(r->c->record_dir, s->id, f, path, sizeof(path)) != 0 ||
	    (s->fd[f] = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		return -1;
	if (flock(s->fd[f], LOCK_EX | LOCK_NB) != 0)
		log_warn("evidence: flock %s", path);
	return 0;
}

/* One frame's header parsed and checked against what we hold: the
 * session, file index and length, or why not. */
static const char *
frame_head(struct receiver *r, const char *line, const char *peer,
    struct ev_sess **sp, int *fp, size_t *np, size_t *hp, char mac[65])
{
	char id[STORE_ID_MAX], name[4];
	unsigned long long off, len;
	int f, h;

	if (sscanf(line, "put %63s %3s %llu %llu %64s", id, name, &off, &len,
	    mac) != 5 || strlen(mac) != 64)
		return "a malformed frame";
	if ((*sp = sess_find(r, id)) == NULL)
		return "no such session here now";
	if (strcmp((*sp)->addr, peer) != 0)
		return "not from that session's node";
	for (f = 0; f < EVIDENCE_FILES && strcmp(name, ev_name[f]) != 0; f++)
		;
	if (f == EVIDENCE_FILES)
		return "no such file";
	if (len == 0 || len > EVIDENCE_CHUNK_MAX)
		return "a frame of 1 to 262144 bytes";
	if (off != (*sp)->size[f])
		return "not at the end of what is held";
	if (off + len > EVIDENCE_FILE_MAX)
		return "the file would pass its bound";
	h = snprintf((char *)frame, HEAD_MAX, "%s %s %llu %llu\n", id, name,
	    off, len);
	if (h < 0 || h >= HEAD_MAX)
		return "a malformed frame";
	*fp = f;
	*np = (size_t)len;
	*hp = (size_t)h;
	return NULL;
}

/* Read, check and append one frame: NULL, or why not; 1 at EOF. */
static const char *
frame_take(struct receiver *r, int fd, const char *peer, long long end,
    int *eof)
{
	char line[HEAD_MAX], mac[65], want[65];
	struct ev_sess *s;
	size_t n, h;
	const char *why;
	int f, rc;

	*eof = 0;
	if ((rc = line_get(fd, line, sizeof(line), end)) != 0) {
		*eof = 1;
		return rc == 1 ? NULL : "no frame in time";
	}
	if ((why = frame_head(r, line, peer, &s, &f, &n, &h, mac)) != NULL)
		return why;
	if (bytes_get(fd, frame + h, n, end) != 0)
		return "the frame's bytes did not come in time";
	frame_mac(s->key, h + n, want);
	if (CRYPTO_memcmp(want, mac, 64) != 0)
		return "a bad MAC";
	if (sess_file(r, s, f) != 0 || pwrite(s->fd[f], frame + h, n,
	    (off_t)s->size[f]) != (ssize_t)n)
		return "cannot write it here";
	s->size[f] += n;
	snprintf(line, sizeof(line), "ok %" PRIu64 "\n", s->size[f]);
	return bytes_put(fd, line, strlen(line)) == 0 ? NULL : "gone";
}

/* The numeric address fd comes from ("" if none). */
static void
conn_peer(int fd, char *buf, size_t len)
{
	struct sockaddr_storage a;
	socklen_t al = sizeof(a);
	const void *in = NULL;

	buf[0] = '\0';
	if (getpeername(fd, (struct sockaddr *)&a, &al) != 0)
		return;
	if (a.ss_family == AF_INET)
		in = &((struct sockaddr_in *)&a)->sin_addr;
	else if (a.ss_family == AF_INET6)
		in = &((struct sockaddr_in6 *)&a)->sin6_addr;
	if (in == NULL || inet_ntop(a.ss_family, in, buf,
	    (socklen_t)len) == NULL)
		buf[0] = '\0';
}

/* Is peer the node of some session we take frames of? */
static int
peer_known(struct receiver *r, const char *peer)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (r->s[i].id[0] != '\0' && strcmp(r->s[i].addr, peer) == 0)
			return 1;
	return 0;
}

/* One node's connection: its frames until EOF, a refusal or time.  A
 * connection from elsewhere is closed unread. */
static void
conn_serve(struct receiver *r, int fd)
{
	long long end = munge_mono_ms() + EVIDENCE_NET_MS;
	char line[HEAD_MAX], peer[INET6_ADDRSTRLEN];
	const char *why = NULL;
	int eof = 0;

	conn_peer(fd, peer, sizeof(peer));
	if (!peer_known(r, peer)) {
		log_warnx("evidence: a connection from %s, no node of a "
		    "running session: closed", peer[0] ? peer : "?");
		return;
	}
	while (!eof && why == NULL)
		why = frame_take(r, fd, peer, end, &eof);
	if (why != NULL) {
		log_warnx("evidence: a frame refused: %s", why);
		snprintf(line, sizeof(line), "no %s\n", why);
		bytes_put(fd, line, strlen(line));
	}
}

static void __attribute__((noreturn))
receiver_main(int sock, void *arg)
{
	static struct receiver r;
	struct ipc_peer peer = { sock, "parent", &evidence_proto, from_parent,
	    sizeof(from_parent) / sizeof(from_parent[0]) };
	char addr[CONFIG_STR_MAX];
	struct pollfd p[2];
	int lfd, fd, rc = IPC_OK;

	slurm_child_confine(sock, "evidence receiver");
	r.c = arg;
	r.sock = sock;
	if (evidence_address(r.c->slurm_listen, addr, sizeof(addr)) != 0)
		_exit(1);
	lfd = slurm_listen_on(addr);
	slurm_child_filter(lfd, "evidence receiver");
	while (rc == IPC_OK) {
		p[0] = (struct pollfd){ sock, POLLIN, 0 };
		p[1] = (struct pollfd){ lfd, POLLIN, 0 };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents != 0)
			rc = ipc_dispatch(&peer, &r, NULL);
		if (rc == IPC_OK && p[1].revents != 0 &&
		    (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			conn_serve(&r, fd);
			close(fd);
		}
	}
	_exit(rc == IPC_EOF ? 0 : 1);
}

int
evidence_receiver_start(const struct gw_config *c, pid_t *pid, int *sock,
    char *err, size_t errlen)
{
	char addr[CONFIG_STR_MAX];
	int fd;

	if (evidence_address(c->slurm_listen, addr, sizeof(addr)) != 0 ||
	    (fd = slurm_listen_on(addr)) < 0)
		return snprintf(err, errlen, "the evidence receiver's %s "
		    "(slurm_listen's port + 1): %s", addr, strerror(errno)),
		    -1;
	close(fd);
	return ipc_helper_start(receiver_main, (void *)c, pid, sock, err,
	    errlen);
}

/* ---- the sender (node uplink) ---- */

/* Frame n bytes of file f at s->sent[f] (in frame after the header),
 * send it on *fd (dialled if -1), take the answer. */
static int
frame_send(const struct gw_config *c, struct ev_stream *s, int *fd, int f,
    size_t n, char *err, size_t errlen)
{
	char addr[CONFIG_STR_MAX], head[HEAD_MAX], mac[65], ans[HEAD_MAX];
	int h = snprintf(head, sizeof(head), "%s %s %" PRIu64 " %zu\n", s->id,
	    ev_name[f], s->sent[f], n);
	unsigned long long have;

	memmove(frame + h, frame + HEAD_MAX, n);
	memcpy(frame, head, (size_t)h);
	frame_mac(s->key, (size_t)h + n, mac);
	if (*fd < 0 && (evidence_address(c->control_address, addr,
	    sizeof(addr)) != 0 || (*fd = munge_dial(addr)) < 0))
		return snprintf(err, errlen, "the control plane's evidence "
		    "receiver (control_address's port + 1): %s",
		    strerror(errno)), -1;
	if (dprintf(*fd, "put %.*s %s\n", h - 1, head, mac) < 0 ||
	    bytes_put(*fd, frame + h, n) != 0 || line_get(*fd, ans,
	    sizeof(ans), munge_mono_ms() + EVIDENCE_NET_MS) != 0)
		return snprintf(err, errlen, "the evidence receiver did not "
		    "answer"), -1;
	if (sscanf(ans, "ok %llu", &have) != 1 || have != s->sent[f] + n)
		return snprintf(err, errlen, "the evidence receiver says: "
		    "%.200s", ans), -1;
	s->sent[f] = have;
	s->bytes += n;
	return 0;
}

/* What of file f grew, sent within *budget bytes (all: no budget). */
static int
file_push(const struct gw_config *c, struct ev_stream *s, int *fd, int f,
    size_t *budget, int all, char *err, size_t errlen)
{
	char path[STORE_PATH_MAX];
	struct stat st;
	size_t n;
	int rfd, r = 0;

	if (ev_path(c->record_dir, s->id, f, path, sizeof(path)) != 0 ||
	    (rfd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;	/* not written (yet) */
	if (fstat(rfd, &st) != 0 || !S_ISREG(st.st_mode))
		st.st_size = 0;
	while (r == 0 && (uint64_t)st.st_size > s->sent[f] &&
	    (all || *budget > 0)) {
		n = (size_t)((uint64_t)st.st_size - s->sent[f]);
		n = n > EVIDENCE_CHUNK_MAX ? EVIDENCE_CHUNK_MAX : n;
		n = !all && n > *budget ? *budget : n;
		if (pread(rfd, frame + HEAD_MAX, n, (off_t)s->sent[f]) !=
		    (ssize_t)n)
			r = (snprintf(err, errlen, "%s: %s", path,
			    strerror(errno)), -1);
		else
			r = frame_send(c, s, fd, f, n, err, errlen);
		*budget -= n < *budget ? n : *budget;
	}
	close(rfd);
	return r;
}

int
evidence_push(const struct gw_config *c, struct ev_stream *s, int all,
    char *err, size_t errlen)
{
	size_t budget = EVIDENCE_PUSH_MAX;
	int fd = -1, f, r = 0;

	if (s->key[0] == '\0')
		return 0;
	for (f = 0; f < EVIDENCE_FILES && r == 0; f++)
		r = file_push(c, s, &fd, f, &budget, all, err, errlen);
	if (fd >= 0)
		close(fd);
	return r;
}

/* ---- the node's own copies, once the control plane's are chained ---- */

int
evidence_file_name(const char *id, int f, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", id, ev_ext[f]);

	return f < 0 || f >= EVIDENCE_FILES || n < 0 || (size_t)n >= len ?
	    -1 : 0;
}

/* File f of id under dfd: 0 absent, 1 present with its digest in hex
 * (empty: ""), -1 with why (not a regular file, a symlink, unreadable). */
static int
copy_digest(int dfd, const char *id, int f, char hex[72], char *why,
    size_t len)
{
	char name[STORE_ID_MAX + 16];
	struct stat st;
	int fd, r;

	hex[0] = '\0';
	if (evidence_file_name(id, f, name, sizeof(name)) != 0)
		return snprintf(why, len, "a bad name"), -1;
	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		return snprintf(why, len, "%s: %s", name, errno == ELOOP ?
		    "a symlink" : strerror(errno)), -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return snprintf(why, len, "%s: not a regular file", name), -1;
	}
	r = st.st_size == 0 ? DIGEST_OK : digest_fd_hex(fd, hex);
	close(fd);
	if (r != DIGEST_OK)
		return snprintf(why, len, "%s: %s", name, digest_strerror(r)),
		    -1;
	return 1;
}

int
evidence_copies_remove(const struct gw_config *c, const char *id,
    char want[EVIDENCE_FILES][72], int *mask, char got[EVIDENCE_FILES][72],
    char *why, size_t len)
{
	char name[STORE_ID_MAX + 16];
	int dfd, f, have[EVIDENCE_FILES], r = 0;

	*mask = 0;
	if (!store_id_valid(id))
		return snprintf(why, len, "a bad session id"), -1;
	if ((dfd = open(c->record_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0)
		return snprintf(why, len, "%s: %s", c->record_dir,
		    strerror(errno)), -1;
	for (f = 0; f < EVIDENCE_FILES && r == 0; f++) {
		have[f] = copy_digest(dfd, id, f, got[f], why, len);
		if (have[f] < 0)
			r = -1;
		else if (have[f] == 1 && strcmp(got[f], strcmp(want[f],
		    "-") == 0 ? "" : want[f]) != 0)
			r = (snprintf(why, len, "%s%s is not the chained "
			    "copy (sha256 %s here, %s there)", id, ev_ext[f],
			    got[f][0] ? got[f] : "of nothing", want[f]), -1);
	}
	for (f = 0; f < EVIDENCE_FILES && r == 0; f++)
		if (have[f] == 1 && evidence_file_name(id, f, name,
		    sizeof(name)) == 0) {
			if (unlinkat(dfd, name, 0) != 0)
				r = (snprintf(why, len, "%s: %s", name,
				    strerror(errno)), -1);
			else
				*mask |= 1 << f;
		}
	close(dfd);
	return r;
}
