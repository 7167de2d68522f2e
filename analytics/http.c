/*
 * analytics/http.c — cdsgate-analytics's HTTP side: libmicrohttpd in
 * "external polling" mode (it starts no thread, so the seccomp filter is
 * in place before any request), driven by our select() loop together
 * with a signalfd; per-request state with a bounded body; the replies,
 * each with the same security headers.
 *
 * Trust: unprivileged and confined (analytics/confine.c); parses
 * untrusted HTTP from the kiosk browser.  Headers are bounded by
 * libmicrohttpd's per-connection memory limit, bodies by the route's
 * limit (analytics/routes.c), connections by AN_MAX_CONNECTIONS.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <microhttpd.h>

#include "analytics/analytics.h"
#include "common/buf.h"
#include "common/log.h"

/* perspective compiles its engine from WebAssembly ('wasm-unsafe-eval')
 * and runs it in a worker it builds from a blob: URL; nothing else may
 * come from anywhere but this server. */
#define AN_CSP	"default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; " \
	"worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; " \
	"img-src 'self' data: blob:; font-src 'self' data:; " \
	"connect-src 'self'; object-src 'none'; base-uri 'none'; " \
	"form-action 'none'; frame-ancestors 'none'; " \
	/* The kiosk's last ways to a second tab (window.open on a click, \
	   target=_blank) and to downloads: no allow-popups, no \
	   allow-downloads (docs/kiosk-escape.md). */ \
	"sandbox allow-scripts allow-same-origin allow-forms"

/* One request between libmicrohttpd's calls. */
struct an_conn {
	struct an_req	 req;
	struct wbuf	 body;
	int		 routed;	/* a route takes this method and path */
	int		 too_large;
};

static const struct an_dirs *an_dirs;

/* Replace the reply (a handler may set one, then fail later). */
static void
set_reply(struct an_req *r, unsigned status, struct MHD_Response *resp)
{
	if (r->resp != NULL)
		MHD_destroy_response(r->resp);
	r->status = resp != NULL ? status : 500;
	r->resp = resp;
}

int
an_reply_json(struct an_req *r, unsigned status, json_t *body)
{
	char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	struct MHD_Response *resp = NULL;

	json_decref(body);
	if (text != NULL)
		resp = MHD_create_response_from_buffer(strlen(text), text,
		    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL)
		free(text);
	else
		MHD_add_response_header(resp, "Content-Type",
		    "application/json");
	set_reply(r, status, resp);
	return 0;
}

int
an_reply_fd(struct an_req *r, int fd, off_t size, const char *type)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_fd((uint64_t)size, fd);
	if (resp == NULL)
		close(fd);
	else
		MHD_add_response_header(resp, "Content-Type", type);
	set_reply(r, 200, resp);
	return 0;
}

int
an_reply_error(struct an_req *r, unsigned status, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return an_reply_json(r, status, json_pack("{s:{s:i,s:s}}", "error",
	    "status", (int)status, "message", msg));
}

/* The headers every reply carries: no framing, no sniffing, no
 * referrer, no caching of research data, no origin but ours. */
static void
security_headers(struct MHD_Response *resp, const char *allow)
{
	MHD_add_response_header(resp, "Content-Security-Policy", AN_CSP);
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Cross-Origin-Opener-Policy",
	    "same-origin");
	MHD_add_response_header(resp, "Cross-Origin-Resource-Policy",
	    "same-origin");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (allow != NULL)
		MHD_add_response_header(resp, "Allow", allow);
}

/* Queue the reply (a 500 if the handler could not make one). */
static enum MHD_Result
send_reply(struct MHD_Connection *c, struct an_conn *h)
{
	enum MHD_Result ret;

	if (h->req.resp == NULL)
		an_reply_error(&h->req, 500, "no reply");
	if (h->req.resp == NULL)
		return MHD_NO;
	security_headers(h->req.resp, h->req.allow);
	ret = MHD_queue_response(c, h->req.status, h->req.resp);
	MHD_destroy_response(h->req.resp);
	h->req.resp = NULL;
	return ret;
}

/* First call for a request: state, with the route's body limit. */
static struct an_conn *
conn_begin(const char *url, const char *method)
{
	struct an_conn *h;
	size_t max;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->routed = an_route_lookup(method, url, &max);
	wbuf_init(&h->body, max);
	h->req.dirs = an_dirs;
	h->req.method = method;
	h->req.path = url;
	return h;
}

/* Count the request's grant headers and keep the (last) value. */
static enum MHD_Result
grant_header(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct an_req *r = cls;

	(void)kind;
	if (key != NULL && strcasecmp(key, GRANT_HEADER) == 0) {
		r->grant = value != NULL ? value : "";
		r->ngrant++;
	}
	return MHD_YES;
}

/* libmicrohttpd's request callback: begin, collect the body (bounded),
 * then dispatch and queue the reply. */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data,
    size_t *data_size, void **con_cls)
{
	struct an_conn *h = *con_cls;

	if (h == NULL) {
		if ((h = *con_cls = conn_begin(url, method)) == NULL)
			return MHD_NO;
		MHD_get_connection_values(c, MHD_HEADER_KIND, grant_header,
		    &h->req);
		return MHD_YES;
	}
	if (*data_size != 0) {
		if (!h->too_large && wbuf_put(&h->body, data, *data_size)
		    != BUF_OK)
			h->too_large = 1;
		*data_size = 0;
		return MHD_YES;
	}
	if (h->too_large && h->routed)
		an_reply_error(&h->req, 413, "request body over %zu bytes",
		    h->body.max);
	else {
		if (h->body.len > 0) {
			h->req.body = (const char *)h->body.d;
			h->req.body_len = h->body.len;
		}
		an_dispatch(&h->req);
	}
	return send_reply(c, h);
}

/* The request is over (replied, or the client went away): free it. */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct an_conn *h = *con_cls;

	if (h == NULL)
		return;
	if (h->req.resp != NULL)
		MHD_destroy_response(h->req.resp);
	wbuf_free(&h->body);
	free(h);
	*con_cls = NULL;
}

int
an_term_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* select() on libmicrohttpd's sockets and the signalfd until a signal. */
static int
serve_loop(struct MHD_Daemon *d, int sigfd)
{
	fd_set rs, ws, es;
	MHD_socket maxfd;
	MHD_UNSIGNED_LONG_LONG ms;
	struct timeval tv;

	for (;;) {
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_ZERO(&es);
		maxfd = sigfd;
		FD_SET(sigfd, &rs);
		if (MHD_get_fdset(d, &rs, &ws, &es, &maxfd) != MHD_YES)
			return -1;
		if (MHD_get_timeout(d, &ms) != MHD_YES || ms > 60000)
			ms = 60000;
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		if (select(maxfd + 1, &rs, &ws, &es, &tv) < 0 && errno != EINTR)
			return -1;
		if (FD_ISSET(sigfd, &rs))
			return 0;
		MHD_run_from_select(d, &rs, &ws, &es);
	}
}

int
an_serve(int listen_fd, int sigfd, const struct an_dirs *dirs)
{
	struct MHD_Daemon *d;
	int rc;

	an_dirs = dirs;
	d = MHD_start_daemon(MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request,
	    NULL, MHD_OPTION_LISTEN_SOCKET, listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)AN_MAX_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_END);
	if (d == NULL) {
		log_warnx("cannot start the HTTP server");
		close(sigfd);
		return 1;
	}
	rc = serve_loop(d, sigfd) == 0 ? 0 : 1;
	MHD_stop_daemon(d);
	close(sigfd);
	log_info("stopped");
	return rc;
}
