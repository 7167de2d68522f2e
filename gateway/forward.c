/*
 * gateway/forward.c — the jail's TCP forwarder (see forward.h).
 *
 * Unprivileged (the browser's user), host network namespace.  Copies
 * bytes between the browser's connections and the backend without
 * looking at them; each direction has one fixed buffer, and a side is
 * only read while its buffer has room, so memory is bounded by
 * FORWARD_MAX_CONNS * 2 * FORWARD_BUF whatever either side does.
 * Half-closes are passed on (shutdown(SHUT_WR)) so request/response
 * protocols that close one way still work.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gateway/forward.h"
#include "gateway/slog.h"
#include "sandbox/sandbox.h"

/* One direction: bytes read from `from`, not yet written to `to`. */
struct pipebuf {
	unsigned char	 d[FORWARD_BUF];
	size_t		 off, len;
	int		 eof;		/* `from` sent FIN (or failed) */
	int		 shut;		/* FIN passed on to `to` */
	uint64_t	 total;
};

struct conn {
	int		 used;
	unsigned long	 id;
	int		 cfd;		/* the browser's side (in the jail) */
	int		 bfd;		/* the backend's side */
	int		 connecting;	/* backend connect in progress */
	struct pipebuf	 up;		/* browser -> backend */
	struct pipebuf	 down;		/* backend -> browser */
	long		 start_ms;
};

struct fwd {
	const struct forward_config *cfg;
	int		 sigfd;
	unsigned long	 next_id;
	unsigned	 nconns;
	struct conn	 c[FORWARD_MAX_CONNS];
	int		 stop;
};

/* ~2 MiB of buffers: static, not on the stack. */
static struct fwd fwd_state;

static long
fwd_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

int
forward_backend_socket(const struct forward_config *cfg)
{
	int s;

	s = socket(cfg->backend.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (connect(s, (const struct sockaddr *)&cfg->backend,
	    cfg->backend_len) != 0 && errno != EINPROGRESS) {
		int e = errno;

		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* Log the connection's totals and free its slot. */
static void
conn_close(struct fwd *f, struct conn *c, const char *why)
{
	slog_event("net_close", json_pack("{s:I, s:s, s:I, s:I, s:i, s:s}",
	    "conn", (json_int_t)c->id, "backend", f->cfg->backend_desc,
	    "bytes_up", (json_int_t)c->up.total,
	    "bytes_down", (json_int_t)c->down.total,
	    "duration_ms", (int)(fwd_now_ms() - c->start_ms), "why", why));
	close(c->cfd);
	if (c->bfd >= 0)
		close(c->bfd);
	memset(c, 0, sizeof(*c));
	f->nconns--;
}

static struct conn *
conn_slot(struct fwd *f)
{
	unsigned i;

	if (f->nconns >= f->cfg->max_conns)
		return NULL;
	for (i = 0; i < FORWARD_MAX_CONNS; i++)
		if (!f->c[i].used)
			return &f->c[i];
	return NULL;
}

/* Accept until EAGAIN; each connection gets its backend connection now
 * (or is closed and logged: over the cap, backend unreachable). */
static void
fwd_accept(struct fwd *f)
{
	struct conn *c;
	int cfd, bfd;

	while ((cfd = accept4(f->cfg->listen_fd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) >= 0) {
		if ((c = conn_slot(f)) == NULL) {
			slog_event("net_refused", json_pack("{s:s, s:i}",
			    "why", "connection cap", "max_conns",
			    (int)f->cfg->max_conns));
			close(cfd);
			continue;
		}
		if ((bfd = forward_backend_socket(f->cfg)) < 0) {
			slog_event("net_refused", json_pack("{s:s, s:s}",
			    "why", "backend socket", "error",
			    strerror(errno)));
			close(cfd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->used = c->connecting = 1;
		c->id = ++f->next_id;
		c->cfd = cfd;
		c->bfd = bfd;
		c->start_ms = fwd_now_ms();
		f->nconns++;
		slog_event("net_open", json_pack("{s:I, s:s}", "conn",
		    (json_int_t)c->id, "backend", f->cfg->backend_desc));
	}
}

/* Read from `from` into p while there is room.  -1 on a hard error. */
static int
pipe_fill(struct pipebuf *p, int from)
{
	ssize_t n;

	if (p->eof || p->len == sizeof(p->d))
		return 0;
	if (p->off > 0 && p->len > 0)
		memmove(p->d, p->d + p->off, p->len);
	p->off = 0;
	n = read(from, p->d + p->len, sizeof(p->d) - p->len);
	if (n > 0) {
		p->len += (size_t)n;
		p->total += (uint64_t)n;
	} else if (n == 0) {
		p->eof = 1;
	} else if (errno != EAGAIN && errno != EINTR) {
		return -1;
	}
	return 0;
}

/* Write what p holds to `to`; pass a FIN on once drained. */
static int
pipe_drain(struct pipebuf *p, int to)
{
	ssize_t n;

	if (p->len > 0) {
		n = send(to, p->d + p->off, p->len, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		p->off += (size_t)n;
		p->len -= (size_t)n;
		if (p->len == 0)
			p->off = 0;
	}
	if (p->len == 0 && p->eof && !p->shut) {
		shutdown(to, SHUT_WR);
		p->shut = 1;
	}
	return 0;
}

/* The backend connect finished (or failed). */
static int
conn_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->bfd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
	    err != 0)
		return -1;
	c->connecting = 0;
	return 0;
}

/* Move bytes both ways as far as poll said we can. */
static void
conn_io(struct fwd *f, struct conn *c, short crev, short brev)
{
	if (c->connecting) {
		if (!(brev & (POLLOUT | POLLERR | POLLHUP)))
			return;
		if (conn_connected(c) != 0) {
			conn_close(f, c, "backend unreachable");
			return;
		}
	}
	if (((crev & (POLLIN | POLLHUP | POLLERR)) &&
	    pipe_fill(&c->up, c->cfd) != 0) ||
	    ((brev & (POLLIN | POLLHUP | POLLERR)) &&
	    pipe_fill(&c->down, c->bfd) != 0)) {
		conn_close(f, c, "read error");
		return;
	}
	if (pipe_drain(&c->up, c->bfd) != 0 ||
	    pipe_drain(&c->down, c->cfd) != 0) {
		conn_close(f, c, "write error");
		return;
	}
	if (c->up.shut && c->down.shut)
		conn_close(f, c, "closed");
	else if (((crev & (POLLHUP | POLLERR)) && c->up.eof &&
	    c->down.len == 0) || ((brev & (POLLHUP | POLLERR)) &&
	    c->down.eof && c->up.len == 0))
		conn_close(f, c, "hangup");	/* poll would report it forever */
}

/* What to wait for on each side of c. */
static void
conn_events(const struct conn *c, short *cev, short *bev)
{
	*cev = *bev = 0;
	if (c->connecting) {
		*bev = POLLOUT;
		return;
	}
	if (!c->up.eof && c->up.len < sizeof(c->up.d))
		*cev |= POLLIN;
	if (!c->down.eof && c->down.len < sizeof(c->down.d))
		*bev |= POLLIN;
	if (c->up.len > 0)
		*bev |= POLLOUT;
	if (c->down.len > 0)
		*cev |= POLLOUT;
}

static int
fwd_loop(struct fwd *f)
{
	struct pollfd pfd[2 + 2 * FORWARD_MAX_CONNS];
	struct conn *slot[FORWARD_MAX_CONNS];
	struct signalfd_siginfo si;
	size_t n, i, k;

	while (!f->stop) {
		pfd[0] = (struct pollfd){ f->sigfd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ f->cfg->listen_fd, POLLIN, 0 };
		for (i = 0, k = 0; i < FORWARD_MAX_CONNS; i++) {
			if (!f->c[i].used)
				continue;
			slot[k] = &f->c[i];
			pfd[2 + 2 * k] = (struct pollfd){ f->c[i].cfd, 0, 0 };
			pfd[3 + 2 * k] = (struct pollfd){ f->c[i].bfd, 0, 0 };
			conn_events(&f->c[i], &pfd[2 + 2 * k].events,
			    &pfd[3 + 2 * k].events);
			k++;
		}
		n = 2 + 2 * k;
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (read(f->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			f->stop = 1;
		for (i = 0; i < k; i++)
			if (pfd[2 + 2 * i].revents || pfd[3 + 2 * i].revents)
				conn_io(f, slot[i], pfd[2 + 2 * i].revents,
				    pfd[3 + 2 * i].revents);
		if (pfd[1].revents & POLLIN)
			fwd_accept(f);
	}
	return 0;
}

int
forward_main(const struct forward_config *cfg)
{
	struct fwd *f;
	sigset_t set;
	unsigned i;
	int st = 1;

	slog_set_proc("forward");
	if (cfg->max_conns == 0 || cfg->max_conns > FORWARD_MAX_CONNS)
		return 1;
	f = &fwd_state;
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (f->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		slog_event("setup_failed", json_pack("{s:s, s:s}", "what",
		    "signals", "error", strerror(errno)));
		return 1;
	}
	/* Its seccomp filter is already on (the role table in
	   gateway/session.c loads FORWARD before forward_main). */
	slog_event("forward_start", json_pack("{s:s, s:i}", "backend",
	    cfg->backend_desc, "max_conns", (int)cfg->max_conns));
	if (fwd_loop(f) == 0)
		st = 0;
	for (i = 0; i < FORWARD_MAX_CONNS; i++)
		if (f->c[i].used)
			conn_close(f, &f->c[i], "stopped");
	close(f->sigfd);
	return st;
}
