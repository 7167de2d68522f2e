/*
 * gateway/forward.c — the jail's TCP forwarder (see forward.h).
 *
 * Unprivileged (the browser's user), host network namespace.  Copies
 * bytes between the browser's connections and the backend; each
 * direction has one fixed buffer, and a side is only read while its
 * buffer has room.  For an http:// backend each direction has a second
 * fixed buffer: bytes are read into `upin`/`downin`, and gateway/http.c
 * says how many of them may move on to `up`/`down` (a head only whole,
 * with Cache-Control: no-store and, unless its type is one Chromium never
 * renders, the CSP line added after a response's status line; a
 * service-worker script request closes the connection).
 * Memory is bounded by FORWARD_MAX_CONNS * 4 * FORWARD_BUF (+ one small
 * struct http_conn each) whatever either side does.  Half-closes are
 * passed on (shutdown(SHUT_WR)) so request/response protocols that close
 * one way still work.
 */
#include "config.h"

#include <arpa/inet.h>
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
#include "gateway/http.h"
#include "gateway/slog.h"
#include "record/pcapng.h"
#include "sandbox/sandbox.h"

/* One direction: bytes read from `from`, not yet written to `to`. */
struct pipebuf {
	unsigned char	 d[FORWARD_BUF];
	size_t		 off, len;
	int		 eof;		/* `from` sent FIN (or failed) */
	int		 shut;		/* FIN passed on to `to` */
	uint64_t	 total;
};

_Static_assert(FORWARD_BUF >= HTTP_HEAD_MAX + HTTP_INSERT_MAX &&
    FORWARD_BUF >= HTTP_HEAD_MAX + HTTP_REQ_INSERT_MAX,
    "a whole HTTP head and the line added to it must fit in one buffer");

struct conn {
	int		 used;
	unsigned long	 id;
	int		 cfd;		/* the browser's side (in the jail) */
	int		 bfd;		/* the backend's side */
	int		 connecting;	/* backend connect in progress */
	struct pipebuf	 up;		/* browser -> backend */
	struct pipebuf	 down;		/* backend -> browser */
	struct http_conn *http;		/* NULL: opaque relay */
	struct pipebuf	 upin, downin;	/* HTTP: read, not yet framed */
	struct pcapng_flow flow;	/* its synthetic TCP in the capture */
	long		 start_ms;
	/* the capture: where in the up stream each added grant's MAC is,
	   to be written as 'x's (oldest first) */
	uint64_t	 up_sent;
	uint64_t	 mac_at[FORWARD_MACS];
	unsigned	 nmac;
};

struct fwd {
	const struct forward_config *cfg;
	int		 sigfd;
	unsigned long	 next_id;
	unsigned	 nconns;
	struct conn	 c[FORWARD_MAX_CONNS];
	struct pcapng	*pcap;		/* NULL: no capture */
	int		 stop;
	int		 failed;	/* stopped: evidence not writable */
};

/* The grant's MAC: the last 64 characters of its line, before CRLF. */
#define GRANT_MAC_LEN	64

/* ~4 MiB of buffers: static, not on the stack. */
static struct fwd fwd_state;

static long
fwd_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The backend's IPv4 address for the capture (a stand-in for IPv6). */
static uint32_t
fwd_backend_ipv4(const struct forward_config *cfg)
{
	const struct sockaddr_in *in = (const void *)&cfg->backend;

	if (cfg->backend.ss_family != AF_INET)
		return PCAPNG_V6_BACKEND_IP;
	return ntohl(in->sin_addr.s_addr);
}

static uint16_t
fwd_backend_port(const struct forward_config *cfg)
{
	const struct sockaddr_in *in = (const void *)&cfg->backend;
	const struct sockaddr_in6 *in6 = (const void *)&cfg->backend;

	return ntohs(cfg->backend.ss_family == AF_INET ? in->sin_port :
	    in6->sin6_port);
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

/* Wall-clock µs for the capture's timestamps. */
static uint64_t
fwd_wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* A capture that can no longer be written stops the forwarder, as the
 * network log does (fail closed). */
static void
capture_check(struct fwd *f)
{
	if (f->pcap == NULL || pcapng_status(f->pcap) == PCAPNG_OK ||
	    f->stop)
		return;
	slog_event("capture_failed", json_pack("{s:s}", "error",
	    pcapng_strerror(pcapng_status(f->pcap))));
	f->stop = f->failed = 1;
}

/* The buffer a side's socket is read into: the framed input for HTTP,
 * else straight the one written to the other side. */
static struct pipebuf *
conn_rx(struct conn *c, int browser_side)
{
	if (c->http == NULL)
		return browser_side ? &c->up : &c->down;
	return browser_side ? &c->upin : &c->downin;
}

/* One line of the network log.  A line that cannot be written stops the
 * forwarder: no forwarding without the log (fail closed). */
static void
netlog_write(struct fwd *f, json_t *fields)
{
	char ts[80], *line = NULL;
	json_t *o;
	size_t len;
	ssize_t n = -1;

	if (f->cfg->netlog_fd < 0 || fields == NULL) {
		json_decref(fields);
		return;
	}
	slog_ts(ts, sizeof(ts));
	o = json_pack("{s:s}", "ts", ts);
	json_object_update(o, fields);
	json_decref(fields);
	if ((line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII)) != NULL) {
		len = strlen(line);
		line[len] = '\n';	/* replaces the NUL; one write() */
		do
			n = write(f->cfg->netlog_fd, line, len + 1);
		while (n < 0 && errno == EINTR);
	}
	if (line == NULL || n != (ssize_t)(len + 1)) {
		slog_event("netlog_failed", json_pack("{s:s}", "error",
		    line == NULL ? "json" : strerror(errno)));
		f->stop = f->failed = 1;
	}
	free(line);
	json_decref(o);
}

/* An exchange's line: why is NULL when its response ended, else what
 * ended the connection first. */
static void
netlog_exchange(struct fwd *f, const struct conn *c,
    const struct http_exchange *x, const char *why)
{
	json_t *o;

	o = json_pack("{s:s, s:I, s:s, s:s, s:o, s:I, s:I, s:o, s:o, s:b}",
	    "event", "http", "conn", (json_int_t)c->id, "method", x->method,
	    "target", x->target, "status", x->status > 0 ?
	    json_integer(x->status) : json_null(),
	    "req_bytes", (json_int_t)x->req_bytes,
	    "resp_bytes", (json_int_t)x->resp_bytes,
	    "ttfb_ms", x->t_first_ms >= 0 ?
	    json_integer(x->t_first_ms - x->t_req_ms) : json_null(),
	    "total_ms", why == NULL ?
	    json_integer(x->t_end_ms - x->t_req_ms) : json_null(),
	    "csp_added", x->csp_added);
	if (o != NULL && x->grant_dropped > 0)
		json_object_set_new(o, "grant_dropped",
		    json_integer((json_int_t)x->grant_dropped));
	if (o != NULL && x->target_truncated)
		json_object_set_new(o, "target_truncated", json_true());
	if (o != NULL && why != NULL)
		json_object_set_new(o, "incomplete", json_string(why));
	netlog_write(f, o);
}

/* Log the connection's totals (and its unfinished exchanges) and free
 * its slot. */
static void
conn_close(struct fwd *f, struct conn *c, const char *why)
{
	const struct http_exchange *x;
	int dur = (int)(fwd_now_ms() - c->start_ms);
	json_int_t up = (json_int_t)conn_rx(c, 1)->total;
	json_int_t down = (json_int_t)conn_rx(c, 0)->total;
	unsigned i;

	slog_event("net_close", json_pack("{s:I, s:s, s:I, s:I, s:i, s:s}",
	    "conn", (json_int_t)c->id, "backend", f->cfg->backend_desc,
	    "bytes_up", up, "bytes_down", down, "duration_ms", dur,
	    "why", why));
	for (i = 0; c->http != NULL && (x = http_pending(c->http, i)) != NULL;
	    i++)
		netlog_exchange(f, c, x, why);
	if (f->pcap != NULL) {
		pcapng_fin(f->pcap, &c->flow, PCAPNG_BROWSER, fwd_wall_us());
		pcapng_fin(f->pcap, &c->flow, PCAPNG_BACKEND, fwd_wall_us());
		capture_check(f);
	}
	netlog_write(f, json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:i, s:s}",
	    "event", "conn", "conn", (json_int_t)c->id, "backend",
	    f->cfg->backend_desc, "relay", c->http == NULL ? "opaque" :
	    http_opaque(c->http) ? "http, then opaque (101)" : "http",
	    "bytes_up", up, "bytes_down", down, "duration_ms", dur,
	    "why", why));
	http_conn_free(c->http);
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
	struct http_conn *hc = NULL;
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
		if (f->cfg->http && ((hc = http_conn_alloc()) == NULL ||
		    (f->cfg->grant_line != NULL &&
		    http_conn_request_line(hc, f->cfg->grant_line) != 0))) {
			http_conn_free(hc);
			hc = NULL;
			slog_event("net_refused", json_pack("{s:s}", "why",
			    "out of memory"));
			close(cfd);
			continue;
		}
		if ((bfd = forward_backend_socket(f->cfg)) < 0) {
			slog_event("net_refused", json_pack("{s:s, s:s}",
			    "why", "backend socket", "error",
			    strerror(errno)));
			http_conn_free(hc);
			hc = NULL;
			close(cfd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->http = hc;
		hc = NULL;	/* transferred */
		c->used = c->connecting = 1;
		c->id = ++f->next_id;
		c->cfd = cfd;
		c->bfd = bfd;
		c->start_ms = fwd_now_ms();
		f->nconns++;
		if (f->pcap != NULL) {
			pcapng_flow_init(&c->flow, c->id,
			    fwd_backend_ipv4(f->cfg), fwd_backend_port(f->cfg));
			pcapng_open(f->pcap, &c->flow, fwd_wall_us());
			capture_check(f);
		}
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

/* Write what p holds to `to`; pass a FIN on once drained.  Bytes sent,
 * or -1 on a hard error. */
static ssize_t
pipe_drain(struct pipebuf *p, int to)
{
	ssize_t n = 0;

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
	return n;
}

/* The bytes d[0..n) sent up from stream offset c->up_sent, for the
 * capture: a copy with every added grant's MAC written as 'x's (the
 * capture is evidence; a live grant is not). */
static const unsigned char *
capture_masked(struct conn *c, const unsigned char *d, size_t n)
{
	static unsigned char copy[FORWARD_BUF];
	uint64_t end = c->up_sent + n, a, b, i;
	unsigned k;

	if (c->nmac == 0 || c->mac_at[0] >= end)
		return d;
	memcpy(copy, d, n);
	for (k = 0; k < c->nmac && c->mac_at[k] < end; k++) {
		a = c->mac_at[k] > c->up_sent ? c->mac_at[k] : c->up_sent;
		b = c->mac_at[k] + GRANT_MAC_LEN < end ?
		    c->mac_at[k] + GRANT_MAC_LEN : end;
		for (i = a; i < b; i++)
			copy[i - c->up_sent] = 'x';
	}
	for (k = 0; k < c->nmac && c->mac_at[k] + GRANT_MAC_LEN <= end; k++)
		;
	memmove(c->mac_at, c->mac_at + k, (c->nmac - k) * sizeof(uint64_t));
	c->nmac -= k;
	return copy;
}

/* Send what one direction holds (up: to the backend); the capture gets
 * exactly the bytes sent (an added grant's MAC masked), and the FIN when
 * one is passed on. */
static ssize_t
conn_drain(struct fwd *f, struct conn *c, int up)
{
	struct pipebuf *p = up ? &c->up : &c->down;
	enum pcapng_side side = up ? PCAPNG_BROWSER : PCAPNG_BACKEND;
	size_t off = p->off;
	int shut = p->shut;
	ssize_t n = pipe_drain(p, up ? c->bfd : c->cfd);

	if (f->pcap == NULL)
		return n;
	if (n > 0)
		pcapng_data(f->pcap, &c->flow, side, up ? capture_masked(c,
		    p->d + off, (size_t)n) : p->d + off, (size_t)n,
		    fwd_wall_us());
	if (up && n > 0)
		c->up_sent += (uint64_t)n;
	if (!shut && p->shut)
		pcapng_fin(f->pcap, &c->flow, side, fwd_wall_us());
	capture_check(f);
	return n;
}

/* Copy a step's bytes from in to the end of out (compacted): a head
 * with its insert and without its dropped lines.  Returns the bytes
 * added to out.  With a capture, an added grant's place is noted. */
static size_t
step_copy(struct fwd *f, struct conn *c, struct pipebuf *in,
    struct pipebuf *out, const struct http_step *st)
{
	size_t n;

	if (f->pcap != NULL && out == &c->up && st->insert != NULL &&
	    st->insert == f->cfg->grant_line && c->nmac < FORWARD_MACS)
		c->mac_at[c->nmac++] = c->up_sent + out->len + st->insert_at +
		    st->insert_len - 2 - GRANT_MAC_LEN;
	n = http_step_output(st, in->d + in->off, out->d + out->len);

	out->len += n;
	in->off += st->consume;
	if ((in->len -= st->consume) == 0)
		in->off = 0;
	return n;
}

/* Move one side's read bytes on as far as its framing and the output's
 * room allow, logging finished exchanges.  Bytes moved, or -1 on a
 * framing error (st->detail says what). */
static long
http_pump(struct fwd *f, struct conn *c, enum http_side side,
    struct http_step *st)
{
	struct pipebuf *in = side == HTTP_REQ ? &c->upin : &c->downin;
	struct pipebuf *out = side == HTTP_REQ ? &c->up : &c->down;
	long moved = 0;

	for (;;) {
		if (out->off > 0 && out->len > 0)
			memmove(out->d, out->d + out->off, out->len);
		out->off = 0;
		/* a grant whose place could not be noted is not sent */
		if (side == HTTP_REQ && c->nmac == FORWARD_MACS)
			return moved;
		http_step(c->http, side, in->d + in->off, in->len, in->eof,
		    sizeof(out->d) - out->len, fwd_now_ms(), st);
		if (st->done != NULL)
			netlog_exchange(f, c, st->done, NULL);
		switch (st->action) {
		case HTTP_HEAD:
		case HTTP_PASS:
			moved += (long)step_copy(f, c, in, out, st);
			break;
		case HTTP_EOF:
			out->eof = 1;
			return moved;
		case HTTP_WAIT:
			return moved;
		case HTTP_FAIL:
			return -1;
		}
	}
}

/* Frame, then send, until neither moves a byte: a response that ends
 * may let a waiting request go, room made by a send lets a head out. */
static int
conn_relay(struct fwd *f, struct conn *c, const char **why)
{
	static struct http_step st;	/* its detail outlives the call */
	long req = 0, resp = 0;
	ssize_t a, b;

	do {
		if (c->http != NULL &&
		    ((req = http_pump(f, c, HTTP_REQ, &st)) < 0 ||
		    (resp = http_pump(f, c, HTTP_RESP, &st)) < 0)) {
			*why = st.detail;
			return -1;
		}
		if ((a = conn_drain(f, c, 1)) < 0 ||
		    (b = conn_drain(f, c, 0)) < 0) {
			*why = "write error";
			return -1;
		}
	} while (c->http != NULL && (req > 0 || resp > 0 || a > 0 || b > 0));
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
	const char *why;

	if (c->connecting) {
		if (!(brev & (POLLOUT | POLLERR | POLLHUP)))
			return;
		if (conn_connected(c) != 0) {
			conn_close(f, c, "backend unreachable");
			return;
		}
	}
	if (((crev & (POLLIN | POLLHUP | POLLERR)) &&
	    pipe_fill(conn_rx(c, 1), c->cfd) != 0) ||
	    ((brev & (POLLIN | POLLHUP | POLLERR)) &&
	    pipe_fill(conn_rx(c, 0), c->bfd) != 0)) {
		conn_close(f, c, "read error");
		return;
	}
	if (conn_relay(f, c, &why) != 0) {
		conn_close(f, c, why);
		return;
	}
	if (c->up.shut && c->down.shut)
		conn_close(f, c, "closed");
	else if (((crev & (POLLHUP | POLLERR)) && conn_rx(c, 1)->eof &&
	    c->down.len == 0) || ((brev & (POLLHUP | POLLERR)) &&
	    conn_rx(c, 0)->eof && c->up.len == 0))
		conn_close(f, c, "hangup");	/* poll would report it forever */
}

/* What to wait for on each side of c. */
static void
conn_events(struct conn *c, short *cev, short *bev)
{
	const struct pipebuf *up = conn_rx(c, 1), *down = conn_rx(c, 0);

	*cev = *bev = 0;
	if (c->connecting) {
		*bev = POLLOUT;
		return;
	}
	if (!up->eof && up->len < sizeof(up->d))
		*cev |= POLLIN;
	if (!down->eof && down->len < sizeof(down->d))
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

/* The capture's header, when the supervisor gave us a file for it. */
static int
fwd_capture_begin(struct fwd *f)
{
	if (f->cfg->pcap_fd < 0)
		return 0;
	if ((f->pcap = pcapng_alloc(f->cfg->pcap_fd)) == NULL ||
	    pcapng_begin(f->pcap, "cdsgate-forward") != PCAPNG_OK) {
		slog_event("capture_failed", json_pack("{s:s}", "error",
		    f->pcap == NULL ? "out of memory" : strerror(errno)));
		return -1;
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
	   supervisor/session.c loads FORWARD before forward_main). */
	slog_event("forward_start", json_pack("{s:s, s:i, s:s, s:b, s:b}",
	    "backend", cfg->backend_desc, "max_conns", (int)cfg->max_conns,
	    "relay", cfg->http ? "http" : "opaque", "network_log",
	    cfg->netlog_fd >= 0, "capture", cfg->pcap_fd >= 0));
	if (fwd_capture_begin(f) == 0 && fwd_loop(f) == 0 && !f->failed)
		st = 0;
	for (i = 0; i < FORWARD_MAX_CONNS; i++)
		if (f->c[i].used)
			conn_close(f, &f->c[i], "stopped");
	pcapng_free(f->pcap);
	close(f->sigfd);
	return st;
}
