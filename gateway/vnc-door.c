/*
 * gateway/vnc-door.c — the door in front of LibVNCServer (vnc.c): accept
 * each connection, count it against its address (gateway/preauth.h),
 * look at its first bytes with MSG_PEEK without blocking, check a
 * websocket request's token and Origin, and hand the few that may
 * proceed to rfbNewClient or, where TLS is offered, to the tls process
 * (vnc-front.c).  Trust: unprivileged; untrusted network input.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfb.h>

#include "common/ipc.h"
#include "gateway/peeraddr.h"
#include "gateway/preauth.h"
#include "gateway/slog.h"
#include "gateway/tlsipc.h"
#include "gateway/vnc-int.h"
#include "gateway/websocket.h"

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
int
vnc_role_free(const struct vnc *v)
{
	return v->interactive == NULL ||
	    (v->prm.allow_observer && v->observer == NULL);
}

/* A refusal that is its address's doing (its share, its failed logins,
 * its stalled handshakes): one line per burst of that address, with the
 * count the burst left unwritten; and within the session's budget. */
void
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

void
vnc_door_close(struct vnc *v, struct vnc_door *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->more = 0;
	preauth_release(v->pa, d->preauth_id);
	d->preauth_id = 0;
}

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

void
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
const char *
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
void
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
