/*
 * gateway/vnc.c — LibVNCServer behind a door of our own, driven from
 * the worker's poll loop (never rfbRunEventLoop, no library threads:
 * the seccomp filter is loaded before any thread could exist).
 *
 * Why a door: LibVNCServer blocks the whole process while it waits for
 * a peer (the websocket sniff, a half-sent message), has no notion of
 * how many strangers may connect, and does not check the websocket
 * Origin.  So connections are accepted here, looked at with MSG_PEEK
 * without blocking, and only the few that may proceed are handed to
 * rfbNewClient.  After that the library speaks RFB; we hook
 * authentication (role assignment, throttling, logging), the input
 * callbacks and the cut-text callbacks.  Trust: unprivileged; untrusted
 * network input.  The password is wiped when the server closes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfb.h>

#include "common/ipc.h"
#include "gateway/clipboard.h"
#include "gateway/peeraddr.h"
#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/slog.h"
#include "gateway/tlsipc.h"
#include "gateway/vnc.h"
#include "gateway/websocket.h"
#include "gateway/vncscreen.h"

#define VNC_ACCEPT_BATCH	64	/* accepts per wake-up */
#define VNC_RECHECK_US		20000	/* partial websocket request */
#define VNC_LOG_LINE		512

struct vnc_door {
	int		 fd;		/* -1: free */
	uint64_t	 t0;
	int		 more;		/* partial request: re-check on a timer */
	uint64_t	 recheck;
	char		 addr[64];
	struct preauth_addr src;
	uint32_t	 preauth_id;
};

/* A connection handed to the tls process, by slot (gateway/tlsipc.h). */
enum vnc_front_state {
	FRONT_FREE = 0,
	FRONT_TLS,	/* at the tls process, not logged in: pre-auth */
	FRONT_INNER,	/* logged in; ifd waits for the first bytes */
	FRONT_LIBRARY,	/* relayed into the library until TIPC_CLOSED */
	FRONT_EVICTED	/* refused unasked; taken until TIPC_CLOSED */
};

struct vnc_front {
	enum vnc_front_state	 state;
	int			 ifd;		/* FRONT_INNER: the library's end */
	int			 wss;		/* a TLS ClientHello: wss */
	int			 ws_ok;		/* its token and Origin passed */
	int			 encrypted;
	char			 addr[64];
	char			 user[CREDS_USER_MAX + 1];
	struct preauth_addr	 src;
	uint32_t		 preauth_id;	/* still counted as pre-auth */
};

struct vnc {
	rfbScreenInfoPtr	 screen;
	struct vnc_params	 prm;
	struct vnc_ops		 ops;
	char			*passwords[2];	/* authPasswdData list */
	struct vnc_door		 door[VNC_MAX_PREAUTH];
	struct vnc_peer		*peers;
	struct vnc_peer		*interactive;
	struct vnc_peer		*observer;
	const char		*handing_addr;	/* set around rfbNewClient */
	const char		*handing_user;	/* ... VeNCrypt user or NULL */
	int			 handing_tls;
	int			 handing_ws;
	const struct preauth_addr *handing_src;	/* ... its address */
	uint32_t		 handing_pa;	/* ... pre-auth id, 0 once taken */
	struct preauth		*pa;		/* pre-auth table, back-off */
	struct vnc_front	 front[VNC_MAX_FRONT];	/* at the tls process */
	const char		*tls_fatal;	/* the tls process failed us */
	int			 relay_sndbuf;	/* library side of a relay */
	struct tbucket		 auth_bucket;	/* logins, all addresses */
	struct tbucket		 refuse_bucket;	/* client_refused lines */
	unsigned long		 refused_quiet;	/* refusals not logged */
	struct tbucket		 msg_bucket;	/* message_refused lines */
	unsigned long		 msg_quiet;	/* ... not logged */
};

/* The one screen of this process: LibVNCServer's log hooks take no
 * context, so they find the rate limiter here. */
static struct vnc *vnc_current;
static rfbCursorPtr vnc_cursor_dot(const rfbPixelFormat *f);
#define VNC_DOT		5	/* the one cursor shape clients get */
static struct tbucket vnc_log_bucket;
static unsigned long vnc_log_quiet;

static uint64_t
vnc_now(const struct vnc *v)
{
	return v->prm.clock();
}

/* Time since t; 0 if t is later (it may come from a fresher clock read). */
static uint64_t
vnc_since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

const char *
vnc_strerror(int status)
{
	switch (status) {
	case VNC_OK:		return "ok";
	case VNC_ENOMEM:	return "out of memory";
	case VNC_ECONFIG:	return "bad VNC configuration";
	case VNC_ELIB:		return "LibVNCServer set-up failed";
	}
	return "unknown VNC error";
}

/* ---- logging ---------------------------------------------------------- */

/*
 * LibVNCServer reads a ClientCutText's length and, over 1 MiB, closes
 * the client before any hook of ours sees the message: its log line is
 * the only trace.  Recognised by the library's format string (ours to
 * trust, not the peer's bytes) and logged like every other drop: size,
 * never content.
 */
static void
vnc_log_cut_refused(const char *fmt, const char *line)
{
	const char *num;
	unsigned long size;

	if (strstr(fmt, "too big cut text length") == NULL ||
	    (num = strstr(line, "requested: ")) == NULL ||
	    sscanf(num + 11, "%lu", &size) != 1)
		return;
	slog_event("clipboard_dropped", json_pack("{s:s, s:I, s:s}", "form",
	    "oversized", "size", (json_int_t)size, "action",
	    "client disconnected by LibVNCServer (over 1 MiB)"));
}

/* Library messages go to the session log (rate limited: a flood of bad
 * clients must not flood the log); trailing newlines are dropped. */
static void
vnc_log_line(const char *level, const char *fmt, va_list ap)
{
	char line[VNC_LOG_LINE];
	size_t len;
	uint64_t now = vnc_current ? vnc_now(vnc_current) : 0;

	vsnprintf(line, sizeof(line), fmt, ap);
	vnc_log_cut_refused(fmt, line);	/* needs an authenticated peer */
	/* A relay's socketpair is not TCP: expected, not an error. */
	if (vnc_current != NULL && vnc_current->handing_user != NULL &&
	    strstr(line, "TCP_NODELAY") != NULL)
		return;
	if (!tbucket_take(&vnc_log_bucket, now)) {
		vnc_log_quiet++;
		return;
	}
	len = strlen(line);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (len == 0)
		return;
	slog_event("vnc_log", json_pack("{s:s, s:s, s:I}", "level", level,
	    "msg", line, "suppressed", (json_int_t)vnc_log_quiet));
	vnc_log_quiet = 0;
}

static void vnc_log_info(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void vnc_log_err(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
vnc_log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnc_log_line("info", fmt, ap);
	va_end(ap);
}

static void
vnc_log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnc_log_line("error", fmt, ap);
	va_end(ap);
}

/* client_refused, at most a few lines a second; the rest are counted
 * and reported with the next line (10,000 attempts => a few lines). */
static void
vnc_refused(struct vnc *v, const char *addr, const char *reason)
{
	if (!tbucket_take(&v->refuse_bucket, vnc_now(v))) {
		v->refused_quiet++;
		return;
	}
	slog_event("client_refused", json_pack("{s:s, s:s, s:I}",
	    "client", addr, "reason", reason,
	    "suppressed", (json_int_t)v->refused_quiet));
	v->refused_quiet = 0;
}

/* ---- the door: before LibVNCServer sees a connection ------------------ */

static void
vnc_addr(const struct sockaddr_storage *ss, socklen_t len, char *buf,
    size_t size)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)ss, len, host, sizeof(host),
	    serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf, size, ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
	    host, serv);
}

/* Could an authenticated client still get a role? */
static int
vnc_role_free(const struct vnc *v)
{
	return v->interactive == NULL ||
	    (v->prm.allow_observer && v->observer == NULL);
}

/* A refusal that is its address's doing (its share, its failed logins,
 * its stalled handshakes): one line per burst of that address, with the
 * count the burst left unwritten; and within the session's budget. */
static void
vnc_refused_src(struct vnc *v, const char *addr,
    const struct preauth_addr *src, const char *reason)
{
	char a[PREAUTH_ADDR_STR];
	unsigned long quiet;

	if (!preauth_refusal(v->pa, src, vnc_now(v), &quiet))
		return;
	if (!tbucket_take(&v->refuse_bucket, vnc_now(v))) {
		v->refused_quiet += 1 + quiet;
		return;
	}
	preauth_addr_str(src, a, sizeof(a));
	slog_event("client_refused", json_pack("{s:s, s:s, s:s, s:I, s:I}",
	    "client", addr, "address", a, "reason", reason,
	    "suppressed", (json_int_t)v->refused_quiet,
	    "address_suppressed", (json_int_t)quiet));
	v->refused_quiet = 0;
}

static void
vnc_door_close(struct vnc *v, struct vnc_door *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->more = 0;
	preauth_release(v->pa, d->preauth_id);
	d->preauth_id = 0;
}

static void vnc_front_refuse(struct vnc *v, uint32_t slot, const char *why);

/* The pre-auth table is full: close connection id (the oldest of the
 * address holding the most), wherever it waits. */
static void
vnc_evict(struct vnc *v, uint32_t id)
{
	static const char why[] = "evicted: too many unauthenticated "
	    "connections (this address holds the most)";
	struct vnc_peer *p;
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		if (v->door[i].fd >= 0 && v->door[i].preauth_id == id) {
			vnc_refused_src(v, v->door[i].addr, &v->door[i].src, why);
			vnc_door_close(v, &v->door[i]);
			return;
		}
	for (p = v->peers; p != NULL; p = p->next)
		if (p->preauth_id == id) {
			p->preauth_id = 0;
			vnc_refused_src(v, p->addr, &p->src, why);
			rfbCloseClient(p->cl);
			return;
		}
	for (i = 0; i < VNC_MAX_FRONT; i++)
		if (v->front[i].state == FRONT_TLS &&
		    v->front[i].preauth_id == id) {
			v->front[i].preauth_id = 0;
			v->front[i].state = FRONT_EVICTED;
			vnc_refused_src(v, v->front[i].addr, &v->front[i].src,
			    why);
			vnc_front_refuse(v, (uint32_t)i, why);
			return;
		}
}

/* Count a new connection against its address (gateway/preauth.h);
 * returns its pre-auth id, or 0 (refused and logged). */
static uint32_t
vnc_preauth_admit(struct vnc *v, const char *addr,
    const struct preauth_addr *src, uint64_t now)
{
	uint32_t id, victim;

	switch (preauth_admit(v->pa, src, now, &id, &victim)) {
	case PREAUTH_REFUSE_SHARE:
		vnc_refused_src(v, addr, src, "too many unauthenticated "
		    "connections from this address");
		return 0;
	case PREAUTH_REFUSE_BACKOFF:
		vnc_refused_src(v, addr, src, "too many failed logins from "
		    "this address: it must wait");
		return 0;
	case PREAUTH_ADMIT:
		break;
	}
	if (victim != 0)
		vnc_evict(v, victim);
	return id;
}

/* Take one new connection into the door, or refuse it at once. */
static void
vnc_door_admit(struct vnc *v, int fd, const char *addr,
    const struct preauth_addr *src, uint64_t now)
{
	struct vnc_door *d;
	uint32_t id;
	int i;

	/* LibVNCServer uses select(): no descriptor past FD_SETSIZE. */
	if (fd >= FD_SETSIZE || !vnc_role_free(v)) {
		close(fd);
		vnc_refused(v, addr, fd >= FD_SETSIZE ? "descriptor limit" :
		    "session busy");
		return;
	}
	if ((id = vnc_preauth_admit(v, addr, src, now)) == 0) {
		close(fd);
		return;
	}
	for (i = 0; i < VNC_MAX_PREAUTH; i++) {
		d = &v->door[i];
		if (d->fd >= 0)
			continue;
		d->fd = fd;
		d->t0 = now;
		d->more = 0;
		d->src = *src;
		d->preauth_id = id;
		snprintf(d->addr, sizeof(d->addr), "%s", addr);
		return;
	}
	preauth_release(v->pa, id);	/* not reached: door >= table */
	close(fd);
	vnc_refused(v, addr, "session busy");
}

static void
vnc_accept(struct vnc *v, uint64_t now)
{
	struct sockaddr_storage ss;
	struct preauth_addr src;
	socklen_t len;
	char addr[64];
	int fd, i;

	for (i = 0; i < VNC_ACCEPT_BATCH; i++) {
		len = sizeof(ss);
		fd = accept4(v->prm.listen_fd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;	/* EAGAIN, or the peer already left */
		vnc_addr(&ss, len, addr, sizeof(addr));
		if (v->prm.accept_from != NULL && !peeraddr_is(
		    (struct sockaddr *)&ss, len, v->prm.accept_from)) {
			close(fd);	/* behind the front door: it alone */
			vnc_refused(v, addr, "not the front door");
			continue;
		}
		(void)preauth_addr_of(&src, (struct sockaddr *)&ss, len);
		vnc_door_admit(v, fd, addr, &src, now);
	}
}

/* Check a parsed websocket request; returns NULL or why it fails. */
static const char *
vnc_ws_check(const struct vnc *v, const struct ws_request *r)
{
	return ws_request_check(r, v->prm.ws_token, v->prm.ws_origins);
}

/* Hand a connection that passed the door to LibVNCServer. */
static void
vnc_handover(struct vnc *v, struct vnc_door *d)
{
	const int one = 1;
	int fd = d->fd;

	d->fd = -1;
	d->more = 0;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	v->handing_addr = d->addr;
	v->handing_src = &d->src;
	v->handing_pa = d->preauth_id;	/* the peer takes it over */
	d->preauth_id = 0;
	(void)rfbNewClient(v->screen, fd);	/* closes fd on failure */
	preauth_release(v->pa, v->handing_pa);	/* if refused */
	v->handing_addr = NULL;
	v->handing_src = NULL;
	v->handing_pa = 0;
}

/* ---- the TLS front door: handed to the tls process -------------------- */

/*
 * A connection that must speak TLS (or, a ws:// request on a TLS session
 * where plain VNC is allowed, log in with the credentials) goes,
 * descriptor and all, to the tls
 * process (gateway/tlsfront.c, the protocol in gateway/tlsipc.h), which
 * holds the key and the credentials; this process never does.  It asks
 * back when a wss request is complete (we check the token and Origin,
 * before any login) and once the user has logged in (we check that a
 * role is free) and answer with one end of a socketpair whose other end
 * the library serves: plain RFB, also for wss (the tls process does the
 * websocket).  Its send buffer holds a whole raw frame, so the library
 * rarely waits on the relay.
 */
_Static_assert(VNC_MAX_FRONT <= TIPC_SLOTS, "one tls slot per front entry");

/* The tls process broke the protocol or is gone: the worker must end
 * (the supervisor ends the session when the tls process exits). */
static void
vnc_tls_fatal(struct vnc *v, const char *why)
{
	if (v->tls_fatal == NULL)
		v->tls_fatal = why;
}

/* The door hands a connection to the tls process (VeNCrypt or wss). */
static void
vnc_front_take(struct vnc *v, struct vnc_door *d, enum tipc_mode mode)
{
	struct tipc_client m;
	int i;

	for (i = 0; i < VNC_MAX_FRONT && v->front[i].state != FRONT_FREE; i++)
		;
	if (i == VNC_MAX_FRONT || v->tls_fatal != NULL) {
		vnc_refused(v, d->addr, "session busy");
		vnc_door_close(v, d);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.slot = (uint32_t)i;
	m.mode = (uint32_t)mode;
	snprintf(m.addr, sizeof(m.addr), "%s", d->addr);
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_CLIENT, &m, sizeof(m),
	    d->fd) != IPC_OK) {
		vnc_tls_fatal(v, "cannot reach the tls process");
		vnc_refused(v, d->addr, "TLS front door unavailable");
		vnc_door_close(v, d);
		return;
	}
	v->front[i].state = FRONT_TLS;
	v->front[i].wss = mode != TIPC_MODE_RFB;	/* ws or wss */
	snprintf(v->front[i].addr, sizeof(v->front[i].addr), "%s", d->addr);
	v->front[i].src = d->src;
	v->front[i].preauth_id = d->preauth_id;	/* still pre-auth there */
	d->preauth_id = 0;
	vnc_door_close(v, d);	/* the tls process has its own copy */
}

/* Say no to the tls process; it tells the client and closes. */
static void
vnc_front_refuse(struct vnc *v, uint32_t slot, const char *why)
{
	struct tipc_refuse r;

	memset(&r, 0, sizeof(r));
	r.slot = slot;
	snprintf(r.reason, sizeof(r.reason), "%s", why);
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_REFUSE, &r, sizeof(r),
	    -1) != IPC_OK)
		vnc_tls_fatal(v, "cannot reach the tls process");
}

/* The library's side for a logged-in client: a socketpair; the far end
 * goes to the tls process, ours waits for its first bytes. */
static const char *
vnc_front_inner(struct vnc *v, uint32_t slot)
{
	struct tipc_slot m = { slot };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		return "socketpair failed";
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &v->relay_sndbuf,
	    sizeof(v->relay_sndbuf));
	if (sv[1] >= FD_SETSIZE) {
		close(sv[0]);
		close(sv[1]);
		return "descriptor limit";
	}
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_INNER, &m, sizeof(m),
	    sv[0]) != IPC_OK) {
		close(sv[0]);
		close(sv[1]);
		vnc_tls_fatal(v, "cannot reach the tls process");
		return "TLS front door unavailable";
	}
	close(sv[0]);
	v->front[slot].ifd = sv[1];
	v->front[slot].state = FRONT_INNER;
	return NULL;
}

/* A wss request, before any login: its token and Origin.  The slot
 * stays pre-authentication (and evictable) while the user logs in. */
static void
vnc_front_ws_check(struct vnc *v, uint32_t slot, char *req)
{
	struct tipc_slot m = { slot };
	struct ws_request r;
	const char *why;

	switch (ws_request_parse(req, strlen(req), &r)) {
	case WS_REQ_OK:
		why = vnc_ws_check(v, &r);
		break;
	case WS_REQ_BAD:
		why = r.why;
		break;
	default:
		why = "not a websocket request";
	}
	if (why != NULL) {
		vnc_front_refuse(v, slot, why);
		return;
	}
	v->front[slot].ws_ok = 1;
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_WS_OK, &m, sizeof(m),
	    -1) != IPC_OK)
		vnc_tls_fatal(v, "cannot reach the tls process");
}

/* TIPC_WANT: a client logged in, or (wss) sent a whole request.  A wss
 * login without a checked request, or a request twice, or one from a
 * native client, is a violation. */
static int
vnc_answer_want(void *ctx, struct ipc_msg *msg)
{
	struct vnc *v = ctx;
	static struct tipc_want m;	/* 4 KiB: not on the stack */
	struct vnc_front *f;
	const char *why = NULL;

	memcpy(&m, msg->data, sizeof(m));
	if (m.slot < VNC_MAX_FRONT && v->front[m.slot].state == FRONT_EVICTED)
		return 0;	/* crossed our refusal: it closes */
	if (m.slot >= VNC_MAX_FRONT || v->front[m.slot].state != FRONT_TLS ||
	    memchr(m.user, '\0', sizeof(m.user)) == NULL ||
	    memchr(m.request, '\0', sizeof(m.request)) == NULL ||
	    strlen(m.user) > CREDS_USER_MAX)
		return -1;
	f = &v->front[m.slot];
	if (m.request[0] != '\0') {
		if (!f->wss || f->ws_ok || m.user[0] != '\0')
			return -1;
		vnc_front_ws_check(v, m.slot, m.request);
		explicit_bzero(&m, sizeof(m));
		return 0;
	}
	if (f->wss && (!f->ws_ok || m.user[0] == '\0'))
		return -1;
	memcpy(f->user, m.user, strlen(m.user) + 1);
	if (f->user[0] != '\0') {	/* logged in at the front door */
		preauth_release(v->pa, f->preauth_id);
		f->preauth_id = 0;
	}			/* else VncAuth: the library's peer counts */
	f->encrypted = m.encrypted != 0;
	if (!vnc_role_free(v))
		why = "session busy";
	if (why == NULL)
		why = vnc_front_inner(v, m.slot);
	if (why != NULL)
		vnc_front_refuse(v, m.slot, why);
	explicit_bzero(&m, sizeof(m));
	return 0;
}

/* On the timeline (and so in the recording and `session report`): a
 * connection that never logged in; within the refusals' budget, as a
 * stranger causes it by connecting. */
static void
vnc_front_closed(struct vnc *v, const char *addr)
{
	if (!tbucket_take(&v->refuse_bucket, vnc_now(v))) {
		v->refused_quiet++;
		return;
	}
	slog_event("front_closed", json_pack("{s:s, s:s, s:I}", "client", addr,
	    "reason", "closed at the TLS front door before a login (the tls "
	    "process's auth_fail, if any, says why)", "suppressed",
	    (json_int_t)v->refused_quiet));
	v->refused_quiet = 0;
}

/* TIPC_CLOSED: the tls process is done with a connection. */
static int
vnc_answer_closed(void *ctx, struct ipc_msg *msg)
{
	struct vnc *v = ctx;
	struct tipc_slot m;
	struct vnc_front *f;

	memcpy(&m, msg->data, sizeof(m));
	if (m.slot >= VNC_MAX_FRONT || v->front[m.slot].state == FRONT_FREE)
		return -1;
	f = &v->front[m.slot];
	if (f->state == FRONT_TLS)
		vnc_front_closed(v, f->addr);
	if (f->ifd >= 0)
		close(f->ifd);
	preauth_release(v->pa, f->preauth_id);
	memset(f, 0, sizeof(*f));
	f->ifd = -1;
	return 0;
}

/* What the tls process may send us: one handler per type. */
static const struct ipc_handler vnc_tls_permit[] = {
	{ TIPC_WANT, vnc_answer_want },
	{ TIPC_CLOSED, vnc_answer_closed },
};

/* One message from the tls process; anything wrong ends the worker. */
static void
vnc_tls_dispatch(struct vnc *v)
{
	const struct ipc_peer peer = { v->prm.tls_ipc, "tls", &tipc_proto,
	    vnc_tls_permit, sizeof(vnc_tls_permit) / sizeof(vnc_tls_permit[0]) };
	int st = ipc_dispatch(&peer, v, NULL);

	if (st == IPC_EOF)
		vnc_tls_fatal(v, "the tls process closed its socket");
	else if (st == IPC_EHANDLER)
		vnc_tls_fatal(v, "the tls process named a slot in the wrong "
		    "state");
	else if (st != IPC_OK)
		vnc_tls_fatal(v, ipc_strerror(st));
}

/* The tls process wrote its first bytes into the pair (our RFB version
 * or the wss request): LibVNCServer's websocket sniff finds them at
 * once, so rfbNewClient never waits. */
static void
vnc_front_attach(struct vnc *v, struct vnc_front *f)
{
	int fd = f->ifd;

	f->ifd = -1;
	f->state = FRONT_LIBRARY;
	v->handing_addr = f->addr;
	v->handing_user = f->user;
	v->handing_tls = f->encrypted;
	v->handing_ws = f->wss;
	v->handing_src = &f->src;
	v->handing_pa = f->preauth_id;	/* wss, VncAuth: still pre-auth */
	f->preauth_id = 0;
	(void)rfbNewClient(v->screen, fd);	/* closes fd on refusal */
	preauth_release(v->pa, v->handing_pa);	/* if refused */
	v->handing_addr = v->handing_user = NULL;
	v->handing_tls = v->handing_ws = 0;
	v->handing_src = NULL;
	v->handing_pa = 0;
}

/* Size the relays' library-side send buffer: a raw full frame. */
static void
vnc_front_setup(struct vnc *v)
{
	size_t frame = (size_t)v->prm.width * v->prm.height * 4 + 65536;
	int sv[2], got = 0, i;
	socklen_t len = sizeof(got);

	for (i = 0; i < VNC_MAX_FRONT; i++)
		v->front[i].ifd = -1;
	v->relay_sndbuf = frame > INT32_MAX / 2 ? INT32_MAX / 2 : (int)frame;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &v->relay_sndbuf,
		    sizeof(v->relay_sndbuf));
		(void)getsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &got, &len);
		close(sv[0]);
		close(sv[1]);
	}
	slog_event("front_door", json_pack("{s:b, s:b, s:I, s:I, s:I, s:b, "
	    "s:s}", "tls", 1, "allow_plain", v->prm.allow_plain,
	    "users", (json_int_t)v->prm.tls_users,
	    "frame_bytes", (json_int_t)frame, "relay_sndbuf", (json_int_t)got,
	    "relay_fits_frame", (size_t)got >= frame, "key_holder", "tls"));
}

/* A plain-text websocket request at the door: NULL if it was handed on
 * (or more of it is awaited), else why it is refused. */
static const char *
vnc_door_request(struct vnc *v, struct vnc_door *d, const char *buf,
    size_t n, uint64_t now)
{
	struct ws_request r;
	const char *why = NULL;

	switch (ws_request_parse(buf, n, &r)) {
	case WS_REQ_NOTGET:
		why = "unexpected bytes before the server greeting";
		break;
	case WS_REQ_BAD:
		why = r.why;
		break;
	case WS_REQ_PARTIAL:
		if (n == VNC_WS_MAX_REQUEST)
			why = "websocket request too long";
		else if (vnc_since(now, d->t0) > VNC_WS_HEADER_US)
			why = "websocket request too slow";
		else {
			d->more = 1;	/* poll would spin on peeked data */
			d->recheck = now + VNC_RECHECK_US;
			return NULL;
		}
		break;
	case WS_REQ_OK:
		if (!v->prm.allow_plain)
			why = "websocket without TLS refused on this listener "
			    "(use wss)";
		else if ((why = vnc_ws_check(v, &r)) == NULL) {
			if (v->prm.tls_ipc >= 0) /* the same login as wss */
				vnc_front_take(v, d, TIPC_MODE_WS);
			else
				vnc_handover(v, d);
			return NULL;
		}
		break;
	}
	return why;
}

/* Look at what a waiting connection has sent, without consuming it. */
static void
vnc_door_check(struct vnc *v, struct vnc_door *d, uint64_t now)
{
	char buf[VNC_WS_MAX_REQUEST + 1];
	const char *why;
	ssize_t n;

	n = recv(d->fd, buf, VNC_WS_MAX_REQUEST, MSG_PEEK | MSG_DONTWAIT);
	if (v->prm.accept_from != NULL && (n > 0 ||
	    vnc_since(now, d->t0) >= VNC_SNIFF_US)) {
		/* the front door speaks RFB and sends its version at once:
		   once it is here the library's own sniff finds it */
		vnc_handover(v, d);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/* RFB clients wait for the server to speak first. */
		if (vnc_since(now, d->t0) < VNC_SNIFF_US || d->more)
			return;
		if (v->prm.tls_ipc >= 0)
			vnc_front_take(v, d, TIPC_MODE_RFB);
		else
			vnc_handover(v, d);
		return;
	}
	if (n <= 0) {
		vnc_door_close(v, d);	/* gone before saying anything */
		return;
	}
	buf[n] = '\0';
	if (buf[0] == '\x16' && v->prm.tls_ipc >= 0 && v->prm.ws_token != NULL) {
		vnc_front_take(v, d, TIPC_MODE_WSS);
		return;
	}
	if (buf[0] == '\x16' || buf[0] == '\x80')
		why = v->prm.tls_ipc >= 0 ? "websockets disabled" :
		    "TLS not offered here";
	else if ((why = vnc_door_request(v, d, buf, (size_t)n, now)) == NULL)
		return;
	vnc_refused(v, d->addr, why);
	vnc_door_close(v, d);
}

/* ---- LibVNCServer hooks ------------------------------------------------ */

static struct vnc *
vnc_of(rfbClientPtr cl)
{
	return cl->screen->screenData;
}

static void
vnc_unlink(struct vnc *v, struct vnc_peer *p)
{
	struct vnc_peer **pp;

	for (pp = &v->peers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (v->interactive == p)
		v->interactive = NULL;
	if (v->observer == p)
		v->observer = NULL;
}

static void
vnc_client_gone(rfbClientPtr cl)
{
	struct vnc_peer *p = cl->clientData;
	struct vnc *v = vnc_of(cl);
	uint64_t now = vnc_now(v);

	/* LibVNCServer 0.9.14 never frees the websocket context (45 kB a
	 * client); later versions free it after this hook unless NULL. */
	free(cl->wsctx);
	cl->wsctx = NULL;
	if (p == NULL)
		return;
	preauth_release(v->pa, p->preauth_id);
	vnc_unlink(v, p);
	if (p->authed != 0) {
		slog_event("disconnect", json_pack("{s:s, s:s, s:f, s:s}",
		    "client", p->addr, "role",
		    p->role == VNC_ROLE_INTERACTIVE ? "interactive" :
		    "observer", "seconds",
		    (double)vnc_since(now, p->authed) / 1e6, "reason",
		    p->close_reason != NULL ? p->close_reason :
		    "closed by the client, or a protocol error (see vnc_log)"));
		if (v->ops.gone != NULL)
			v->ops.gone(v->ops.arg, p);
	}
	cl->clientData = NULL;
	free(p);
}

/* A connection the door let through: websocket peers must still carry
 * the token (checked again on the library's parse), and a role must be
 * free.  Roles are assigned only after authentication, so a stranger
 * cannot take the interactive slot by connecting first. */
static enum rfbNewClientAction
vnc_new_client(rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	const char *addr = v->handing_addr ? v->handing_addr :
	    (cl->host ? cl->host : "?");
	struct vnc_peer *p;

	cl->clientGoneHook = vnc_client_gone;	/* also for a refusal */
	if (cl->wsctx != NULL && (v->prm.ws_token == NULL ||
	    !ws_path_has_token(cl->wspath, v->prm.ws_token))) {
		vnc_refused(v, addr, "websocket token missing or wrong");
		return RFB_CLIENT_REFUSE;
	}
	if (!vnc_role_free(v)) {
		vnc_refused(v, addr, "session busy");
		return RFB_CLIENT_REFUSE;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		vnc_refused(v, addr, "out of memory");
		return RFB_CLIENT_REFUSE;
	}
	p->cl = cl;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
	p->websocket = cl->wsctx != NULL || v->handing_ws;
	p->tls = v->handing_tls || v->prm.accept_from != NULL;	/* the front
						   door speaks only TLS */
	if (v->handing_user != NULL)
		snprintf(p->user, sizeof(p->user), "%s", v->handing_user);
	if (v->handing_src != NULL)
		p->src = *v->handing_src;
	p->preauth_id = v->handing_pa;
	v->handing_pa = 0;
	p->accepted = vnc_now(v);
	p->stage = (int)cl->state;
	p->stage_t0 = p->accepted;
	kiosk_init(&p->kiosk);
	p->next = v->peers;
	v->peers = p;
	cl->clientData = p;
	cl->clientGoneHook = vnc_client_gone;
	return RFB_CLIENT_ACCEPT;
}

/* Give an authenticated client its role, or refuse it (busy). */
static int
vnc_assign_role(struct vnc *v, rfbClientPtr cl, struct vnc_peer *p)
{
	if (v->interactive == NULL) {
		p->role = VNC_ROLE_INTERACTIVE;
		v->interactive = p;
	} else if (v->prm.allow_observer && v->observer == NULL) {
		p->role = VNC_ROLE_OBSERVER;
		v->observer = p;
		cl->viewOnly = TRUE;
	} else {
		vnc_refused(v, p->addr, "session busy");
		return 0;
	}
	p->authed = vnc_now(v);
	slog_event("connect", json_pack("{s:s, s:s, s:b, s:b, s:s*}", "client",
	    p->addr, "role", p->role == VNC_ROLE_INTERACTIVE ? "interactive" :
	    "observer", "websocket", p->websocket, "tls", p->tls, "user",
	    p->user[0] != '\0' ? p->user : NULL));
	if (v->ops.connected != NULL)
		v->ops.connected(v->ops.arg, p);
	return 1;
}

/* May this VNC password be checked now?  Failed logins back off per
 * address (gateway/preauth.h); the session-wide bucket is the last
 * resort against many addresses, sized so that one backed-off address
 * cannot empty it.  A VeNCrypt user was checked by the front door. */
static int
vnc_may_try(struct vnc *v, struct vnc_peer *p, uint64_t now)
{
	uint64_t wait;

	if (p->user[0] != '\0')
		return 1;
	if (!preauth_login_allowed(v->pa, &p->src, now, &wait)) {
		vnc_refused_src(v, p->addr, &p->src, "too many failed logins "
		    "from this address: it must wait");
		return 0;
	}
	if (!tbucket_take(&v->auth_bucket, now)) {
		slog_event("auth_fail", json_pack("{s:s, s:s}", "client",
		    p->addr, "reason", "throttled (all addresses)"));
		return 0;
	}
	return 1;
}

/* VNC authentication, throttled per address (vnc_may_try). */
static rfbBool
vnc_check_password(rfbClientPtr cl, const char *response, int len)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;
	uint64_t now = vnc_now(v);

	if (p == NULL || p->role != VNC_ROLE_PENDING || !vnc_may_try(v, p, now))
		return FALSE;
	if (!rfbCheckPasswordByList(cl, response, len)) {
		preauth_login_failed(v->pa, &p->src, now);
		slog_event("auth_fail", json_pack("{s:s, s:s}", "client",
		    p->addr, "reason", "wrong password"));
		return FALSE;
	}
	if (p->user[0] == '\0')
		preauth_login_ok(v->pa, &p->src);
	preauth_release(v->pa, p->preauth_id);
	p->preauth_id = 0;
	cl->viewOnly = FALSE;
	return vnc_assign_role(v, cl, p) ? TRUE : FALSE;
}

static void
vnc_kbd(rfbBool down, rfbKeySym keysym, rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || p->role != VNC_ROLE_INTERACTIVE || v->ops.key == NULL)
		return;
	v->ops.key(v->ops.arg, p, (uint32_t)keysym, down ? 1 : 0);
}

static void
vnc_ptr(int mask, int x, int y, rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || p->role != VNC_ROLE_INTERACTIVE)
		return;
	if (x < 0)
		x = 0;
	if (y < 0)
		y = 0;
	if (x >= v->screen->width)
		x = v->screen->width - 1;
	if (y >= v->screen->height)
		y = v->screen->height - 1;
	/* the place of the library's dot for clients without cursor
	   shapes (the real pointer is drawn into the frame) */
	rfbDefaultPtrAddEvent(mask, x, y, cl);
	if (v->ops.pointer != NULL)
		v->ops.pointer(v->ops.arg, p, mask, x, y);
}

/*
 * Every client message LibVNCServer 0.9.14 dispatches either reaches a
 * handler of ours or the library's own code, or is refused; no hook is
 * left NULL where the library calls it unchecked (setDesktopSizeHook is:
 * a NULL there was a SIGSEGV from one message).  The library's own
 * handling: SetPixelFormat, FixColourMapEntries (closes the client),
 * SetEncodings, FramebufferUpdateRequest, SetScale and PalmVNC's (a
 * scaled copy of the served frame), unknown types (closes the client).
 * Ours: keys, pointer, cut text (gateway/clipboard.c) and the refusals
 * below, each logged as message_refused (rate limited) and otherwise
 * ignored.
 */
static void
vnc_msg_refused(rfbClientPtr cl, const char *message, const char *action)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (!tbucket_take(&v->msg_bucket, vnc_now(v))) {
		v->msg_quiet++;
		return;
	}
	slog_event("message_refused", json_pack("{s:s, s:s, s:s, s:I}",
	    "client", p != NULL ? p->addr : (cl->host ? cl->host : "?"),
	    "message", message, "action", action,
	    "suppressed", (json_int_t)v->msg_quiet));
	v->msg_quiet = 0;
}

/* SetDesktopSize (251): the screen's size is the policy's. */
static int
vnc_set_desktop_size(int width, int height, int nscreens,
    struct rfbExtDesktopScreen *screens, rfbClientPtr cl)
{
	(void)width;
	(void)height;
	(void)nscreens;
	(void)screens;
	vnc_msg_refused(cl, "SetDesktopSize", "resize prohibited");
	return rfbExtDesktopSize_ResizeProhibited;
}

/* Xvp (250): no shutdown, reboot or reset of anything. */
static rfbBool
vnc_xvp(rfbClientPtr cl, uint8_t version, uint8_t code)
{
	(void)version;
	(void)code;
	vnc_msg_refused(cl, "Xvp", "refused (xvp_fail sent)");
	return FALSE;
}

/* UltraVNC TextChat (11): a way in for text, like the clipboard. */
static void
vnc_text_chat(rfbClientPtr cl, int length, char *text)
{
	(void)length;
	(void)text;	/* never looked at */
	vnc_msg_refused(cl, "TextChat", "dropped");
}

/* UltraVNC SetSingleWindow (10) and SetServerInput (9). */
static void
vnc_single_window(rfbClientPtr cl, int x, int y)
{
	(void)x;
	(void)y;
	vnc_msg_refused(cl, "SetSingleWindow", "ignored");
}

static void
vnc_server_input(rfbClientPtr cl, int status)
{
	(void)status;
	vnc_msg_refused(cl, "SetServerInput", "ignored");
}

/* UltraVNC FileTransfer (7): never (permitFileTransfer is off too; the
 * library then closes the client). */
static int
vnc_file_transfer(rfbClientPtr cl)
{
	vnc_msg_refused(cl, "FileTransfer", "refused");
	return FALSE;
}

/* Around every update sent: if it carried the cursor shape (the fixed
 * dot; LibVNCServer clears cursorWasChanged only when it sent it), that
 * goes on the record, so every cursor a client was sent is in the
 * session log and the recording. */
static void
vnc_display(rfbClientPtr cl)
{
	struct vnc_peer *p = cl->clientData;

	if (p != NULL)
		p->cursor_due = cl->enableCursorShapeUpdates &&
		    cl->cursorWasChanged;
}

static void
vnc_display_done(rfbClientPtr cl, int result)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || !p->cursor_due || cl->cursorWasChanged || !result)
		return;
	p->cursor_due = 0;
	if (!tbucket_take(&v->msg_bucket, vnc_now(v))) {
		v->msg_quiet++;
		return;
	}
	slog_event("cursor_sent", json_pack("{s:s, s:s, s:i, s:i, s:s, s:I}",
	    "client", p->addr, "shape", "dot", "width", VNC_DOT, "height",
	    VNC_DOT, "encoding", cl->useRichCursorEncoding ? "rich" : "x",
	    "suppressed", (json_int_t)v->msg_quiet));
	v->msg_quiet = 0;
}

/* Every hook the library may call without a NULL check is set; the
 * rest are NULL-checked by the library (getKeyboardLedStateHook:
 * nothing to do). */
static int
vnc_hooks_complete(const rfbScreenInfo *s)
{
	return s->passwordCheck != NULL && s->newClientHook != NULL &&
	    s->kbdAddEvent != NULL && s->kbdReleaseAllKeys != NULL &&
	    s->ptrAddEvent != NULL && s->setXCutText != NULL &&
#ifdef LIBVNCSERVER_HAVE_LIBZ
	    s->setXCutTextUTF8 != NULL &&
#endif
	    s->getCursorPtr != NULL && s->setTranslateFunction != NULL &&
	    s->setDesktopSizeHook != NULL &&
	    s->numberOfExtDesktopScreensHook != NULL &&
	    s->getExtDesktopScreenHook != NULL && s->xvpHook != NULL &&
	    s->setTextChat != NULL && s->setSingleWindow != NULL &&
	    s->setServerInput != NULL &&
	    s->getFileTransferPermission != NULL && s->cursor != NULL;
}

/* ---- set-up and teardown ---------------------------------------------- */

/* Everything the library would otherwise decide by default, beyond
 * vnc_screen_new()'s (port 0 there: we accept, the library never
 * listens). */
static void
vnc_screen_policy(struct vnc *v, rfbScreenInfoPtr s)
{
	s->httpDir = NULL;
	s->neverShared = FALSE;
	s->dontDisconnect = TRUE;
	s->deferUpdateTime = 0;		/* the worker paces frames itself */
	s->handleEventsEagerly = FALSE;	/* one message per peer per wake-up */
	s->getFileTransferPermission = vnc_file_transfer;
	s->setTextChat = vnc_text_chat;
	s->setSingleWindow = vnc_single_window;
	s->setServerInput = vnc_server_input;
	s->xvpHook = vnc_xvp;
	s->setDesktopSizeHook = vnc_set_desktop_size;
	s->displayHook = vnc_display;
	s->displayFinishedHook = vnc_display_done;
	s->maxClientWait = VNC_CLIENT_WAIT_MS;
	s->authPasswdData = v->passwords;
	s->passwordCheck = vnc_check_password;
	s->newClientHook = vnc_new_client;
	s->kbdAddEvent = vnc_kbd;
	s->ptrAddEvent = vnc_ptr;
	clipboard_install(s);
}

int
vnc_open(struct vnc **vp, const struct vnc_params *prm,
    const struct vnc_ops *ops)
{
	rfbCursorPtr cursor;
	int i, st, fl;
	struct vnc *v;

	*vp = NULL;
	if (prm->password == NULL || prm->password[0] == '\0' ||
	    prm->listen_fd < 0 || prm->width == 0 || prm->height == 0 ||
	    prm->framebuffer == NULL || prm->clock == NULL ||
	    (prm->tls_ipc < 0 && !prm->allow_plain))
		return VNC_ECONFIG;
	/* accept(2) in a batch must never block the loop. */
	if ((fl = fcntl(prm->listen_fd, F_GETFL)) < 0 ||
	    fcntl(prm->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return VNC_ECONFIG;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return VNC_ENOMEM;
	v->prm = *prm;
	v->ops = *ops;
	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		v->door[i].fd = -1;
	for (i = 0; i < VNC_MAX_FRONT; i++)
		v->front[i].ifd = -1;
	st = VNC_ENOMEM;
	if ((v->passwords[0] = strdup(prm->password)) == NULL ||
	    preauth_alloc(&v->pa) != PREAUTH_OK)
		goto out;
	tbucket_init(&v->auth_bucket, PREAUTH_LOGIN_RATE, PREAUTH_LOGIN_BURST,
	    prm->clock());
	/* With TLS the session's budget (5 a second, bursts of 20) is
	   split with the tls process, which writes most such lines (every
	   handshake and login): a fifth is ours. */
	if (prm->tls_ipc >= 0)
		tbucket_init(&v->refuse_bucket, 1, 4, prm->clock());
	else
		tbucket_init(&v->refuse_bucket, 5, 20, prm->clock());
	tbucket_init(&vnc_log_bucket, 20, 200, prm->clock());
	tbucket_init(&v->msg_bucket, 5, 20, prm->clock());
	vnc_current = v;
	rfbLog = vnc_log_info;
	rfbErr = vnc_log_err;
	rfbMaxClientWait = VNC_CLIENT_WAIT_MS;
	st = VNC_ELIB;
	v->screen = vnc_screen_new("cdsgate", (int)prm->width,
	    (int)prm->height, prm->red_shift, prm->green_shift,
	    prm->blue_shift, v);
	if (v->screen == NULL)
		goto out;
	vnc_screen_policy(v, v->screen);
	if ((cursor = vnc_cursor_dot(&v->screen->serverFormat)) == NULL) {
		st = VNC_ENOMEM;
		goto out;
	}
	rfbSetCursor(v->screen, cursor);
	if (!vnc_hooks_complete(v->screen))
		goto out;	/* VNC_ELIB */
	v->screen->frameBuffer = prm->framebuffer;
	rfbSetServerVersionIdentity(v->screen, "cdsgate");  /* not the library's */
	rfbInitServer(v->screen);
	vnc_des_warm_up();
	if (prm->tls_ipc >= 0)
		vnc_front_setup(v);
	*vp = v;
	v = NULL;	/* transferred */
	st = VNC_OK;
out:
	vnc_close(v);
	return st;
}

void
vnc_close(struct vnc *v)
{
	struct vnc_peer *p;
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		vnc_door_close(v, &v->door[i]);
	for (p = v->peers; p != NULL; p = p->next)
		p->close_reason = "the session ends";
	for (i = 0; i < VNC_MAX_FRONT; i++)
		if (v->front[i].ifd >= 0)
			close(v->front[i].ifd);
	if (v->screen != NULL) {
		rfbShutdownServer(v->screen, TRUE);
		free(v->screen->versionString);	/* 0.9.14 leaks it */
		v->screen->versionString = NULL;
		rfbScreenCleanup(v->screen);
	}
	if (v->prm.listen_fd >= 0)
		close(v->prm.listen_fd);
	if (v->prm.tls_ipc >= 0)
		close(v->prm.tls_ipc);
	if (v->passwords[0] != NULL) {
		explicit_bzero(v->passwords[0], strlen(v->passwords[0]));
		free(v->passwords[0]);
	}
	if (vnc_current == v)
		vnc_current = NULL;
	preauth_free(v->pa);
	free(v);
}

/* ---- the poll loop's side ----------------------------------------------- */

/* Bytes LibVNCServer reads in one go in a pre-authentication state
 * (plus the smallest masked frame header for a websocket peer). */
static int
vnc_preauth_need(rfbClientPtr cl)
{
	int need;

	switch (cl->state) {
	case RFB_PROTOCOL_VERSION:
		need = sz_rfbProtocolVersionMsg;
		break;
	case RFB_AUTHENTICATION:
		need = CHALLENGESIZE;	/* the VNC authentication response */
		break;
	default:
		need = 1;		/* security type, ClientInit */
		break;
	}
	return cl->wsctx != NULL ? need + 6 : need;
}

/* The library blocks (up to VNC_CLIENT_WAIT_MS) on a half-sent message.
 * Before authentication every message has a fixed size, so a peer whose
 * message is incomplete is kept out of the library's select set and
 * looked at again on a timer (polling it would spin on the same bytes).
 * Returns 1 if some peer became ready. */
static int
vnc_gate_preauth(struct vnc *v, uint64_t now)
{
	struct vnc_peer *p;
	rfbClientPtr cl;
	int avail, partial, ready = 0;

	for (p = v->peers; p != NULL; p = p->next) {
		cl = p->cl;
		if (p->role != VNC_ROLE_PENDING || cl->sock == RFB_INVALID_SOCKET)
			continue;
		if (ioctl(cl->sock, FIONREAD, &avail) != 0)
			avail = 0;	/* let the library find the error */
		partial = avail > 0 && avail < vnc_preauth_need(cl) &&
		    !(cl->wsctx != NULL && webSocketsHasDataInBuffer(cl));
		if (partial) {
			FD_CLR(cl->sock, &v->screen->allFds);
			p->recheck = now + VNC_RECHECK_US;
		} else {
			FD_SET(cl->sock, &v->screen->allFds);
			ready |= p->partial;
		}
		p->partial = partial;
	}
	return ready;
}

/* Every call into the library's reader goes through here. */
static void
vnc_process(struct vnc *v, uint64_t now)
{
	(void)vnc_gate_preauth(v, now);
	rfbProcessEvents(v->screen, 0);
}

size_t
vnc_pollfds(struct vnc *v, struct pollfd *pfd, size_t max)
{
	rfbClientIteratorPtr it;
	rfbClientPtr cl;
	size_t n = 0;
	int i;

	if (n < max)
		pfd[n++] = (struct pollfd){ v->prm.listen_fd, POLLIN, 0 };
	for (i = 0; i < VNC_MAX_PREAUTH && n < max; i++)
		if (v->door[i].fd >= 0 && !v->door[i].more)
			pfd[n++] = (struct pollfd){ v->door[i].fd, POLLIN, 0 };
	if (v->prm.tls_ipc >= 0 && v->tls_fatal == NULL && n < max)
		pfd[n++] = (struct pollfd){ v->prm.tls_ipc, POLLIN, 0 };
	for (i = 0; i < VNC_MAX_FRONT && n < max; i++)
		if (v->front[i].state == FRONT_INNER)
			pfd[n++] = (struct pollfd){ v->front[i].ifd, POLLIN, 0 };
	it = rfbGetClientIterator(v->screen);
	while ((cl = rfbClientIteratorNext(it)) != NULL && n < max) {
		if (cl->sock == RFB_INVALID_SOCKET || (cl->clientData != NULL &&
		    ((struct vnc_peer *)cl->clientData)->partial))
			continue;
		pfd[n++] = (struct pollfd){ cl->sock, POLLIN, 0 };
	}
	rfbReleaseClientIterator(it);
	return n;
}

static int
vnc_front_of(const struct vnc *v, int fd)
{
	int i;

	for (i = 0; i < VNC_MAX_FRONT; i++)
		if (v->front[i].state == FRONT_INNER && v->front[i].ifd == fd)
			return i;
	return -1;
}

static struct vnc_door *
vnc_door_of(struct vnc *v, int fd)
{
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		if (v->door[i].fd == fd)
			return &v->door[i];
	return NULL;
}

void
vnc_handle(struct vnc *v, const struct pollfd *pfd, size_t n, uint64_t now)
{
	struct vnc_door *d;
	int clients = 0, f;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == v->prm.listen_fd)
			vnc_accept(v, now);
		else if ((d = vnc_door_of(v, pfd[i].fd)) != NULL)
			vnc_door_check(v, d, now);
		else if (pfd[i].fd == v->prm.tls_ipc)
			vnc_tls_dispatch(v);
		else if ((f = vnc_front_of(v, pfd[i].fd)) >= 0)
			vnc_front_attach(v, &v->front[f]);
		else
			clients = 1;
	}
	if (clients)
		vnc_process(v, now);
}

/* A pending peer's deadline: its handshake stage's (the library state
 * it waits in: VNC_PASSWORD_US for the VncAuth response a person may
 * type, VNC_STAGE_US for any other message) or the whole handshake's. */
static uint64_t
vnc_stage_deadline(const struct vnc_peer *p)
{
	uint64_t stage = p->stage_t0 + (p->stage == (int)RFB_AUTHENTICATION ?
	    VNC_PASSWORD_US : VNC_STAGE_US);

	return stage < p->accepted + VNC_HANDSHAKE_US ? stage :
	    p->accepted + VNC_HANDSHAKE_US;
}

/* Close peers whose handshake stage (or whole handshake) took too long. */
static int
vnc_expire_handshakes(struct vnc *v, uint64_t now)
{
	struct vnc_peer *p;
	rfbClientPtr cl;
	int closed = 0;

	for (p = v->peers; p != NULL; p = p->next) {
		cl = p->cl;
		if (p->role != VNC_ROLE_PENDING || cl->sock == RFB_INVALID_SOCKET)
			continue;
		if ((int)cl->state != p->stage) {
			p->stage = (int)cl->state;
			p->stage_t0 = now;
		}
		if (now < vnc_stage_deadline(p))
			continue;
		vnc_refused_src(v, p->addr, &p->src, p->stage ==
		    RFB_AUTHENTICATION ? "handshake timeout (password)" :
		    "handshake timeout");
		rfbCloseClient(cl);
		closed = 1;
	}
	return closed;
}

void
vnc_tick(struct vnc *v, uint64_t now)
{
	struct vnc_door *d;
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++) {
		d = &v->door[i];
		if (d->fd < 0)
			continue;
		if ((d->more && now >= d->recheck) ||
		    (!d->more && vnc_since(now, d->t0) >= VNC_SNIFF_US))
			vnc_door_check(v, d, now);
	}
	if (vnc_expire_handshakes(v, now) | vnc_gate_preauth(v, now))
		vnc_process(v, now);
}

uint64_t
vnc_next_deadline(const struct vnc *v)
{
	const struct vnc_peer *p;
	uint64_t t = 0, d;
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++) {
		if (v->door[i].fd < 0)
			continue;
		d = v->door[i].more ? v->door[i].recheck :
		    v->door[i].t0 + VNC_SNIFF_US;
		if (t == 0 || d < t)
			t = d;
	}
	for (p = v->peers; p != NULL; p = p->next) {
		if (p->role != VNC_ROLE_PENDING)
			continue;
		d = p->partial ? p->recheck : vnc_stage_deadline(p);
		if (t == 0 || d < t)
			t = d;
	}
	return t;
}

void
vnc_mark(struct vnc *v, int x, int y, int w, int h)
{
	rfbMarkRectAsModified(v->screen, x, y, x + w, y + h);
}

void
vnc_update(struct vnc *v)
{
	vnc_process(v, vnc_now(v));
}

void
vnc_disconnect(struct vnc *v, struct vnc_peer *p, const char *reason)
{
	rfbClientPtr cl = p->cl;

	if (cl->sock == RFB_INVALID_SOCKET)
		return;
	slog_event("client_refused", json_pack("{s:s, s:s}", "client",
	    p->addr, "reason", reason));
	p->close_reason = reason;
	rfbCloseClient(cl);
	(void)v;
}

int
vnc_viewers(const struct vnc *v)
{
	return (v->interactive != NULL) + (v->observer != NULL);
}

/* ---- cursor --------------------------------------------------------------- */

/*
 * The only cursor shape any client is ever sent: a small fixed dot,
 * chosen here, never the page's.  The real pointer is drawn into the
 * frames (gateway/cursor.h); the dot only gives a viewer immediate
 * feedback where its own mouse is.  Its message (12 + 5 x 5 x 4 + 5
 * bytes at most) is far below the library's 32 KiB update buffer, which
 * a larger cursor overflows, leaving an update half sent.
 */
static const char vnc_dot[VNC_DOT][VNC_DOT + 1] = {
	" ooo ",
	"oxxxo",
	"oxxxo",
	"oxxxo",
	" ooo ",
};

static rfbCursorPtr
vnc_cursor_dot(const rfbPixelFormat *f)
{
	const uint32_t white = 255u << f->redShift | 255u << f->greenShift |
	    255u << f->blueShift;
	rfbCursorPtr c;
	uint32_t px;
	int x, y;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->cleanup = c->cleanupSource = c->cleanupMask = TRUE;
	c->cleanupRichSource = TRUE;
	c->width = c->height = VNC_DOT;
	c->xhot = c->yhot = VNC_DOT / 2;
	c->richSource = calloc(VNC_DOT * VNC_DOT, 4);
	c->alphaSource = calloc(VNC_DOT * VNC_DOT, 1);
	c->mask = calloc(1, VNC_DOT);	/* one byte per row */
	if (c->richSource == NULL || c->alphaSource == NULL || c->mask == NULL) {
		rfbFreeCursor(c);
		return NULL;
	}
	for (y = 0; y < VNC_DOT; y++)
		for (x = 0; x < VNC_DOT; x++) {
			if (vnc_dot[y][x] == ' ')
				continue;
			px = vnc_dot[y][x] == 'o' ? white : 0;
			memcpy(c->richSource + (y * VNC_DOT + x) * 4, &px, 4);
			c->alphaSource[y * VNC_DOT + x] = 255;
			c->mask[y] |= (unsigned char)(0x80 >> x);
		}
	return c;
}

const char *
vnc_fatal(const struct vnc *v)
{
	return v->tls_fatal;
}
