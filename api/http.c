/*
 * api/http.c — the admin API's HTTP side: libmicrohttpd on an inherited
 * UNIX socket, driven from our own poll loop; who the peer is (from the
 * kernel, SO_PEERCRED/SO_PEERGROUPS); bounded request bodies; JSON
 * replies.
 *
 * Trust: unprivileged; parses untrusted HTTP (libmicrohttpd) and JSON
 * (jansson) from local users, bounded by API_MAX_BODY and
 * API_MAX_CONNECTIONS.  A peer without a cdsgate group is refused before
 * its body is read.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api/api.h"
#include "api/gaterunner.h"
#include "common/buf.h"
#include "common/log.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS	59
#endif
#define MAX_PEER_GROUPS	256

/* Per-request state between libmicrohttpd's calls. */
struct http_req {
	struct api_req	 req;		/* first: api_resume() finds us */
	struct MHD_Connection *conn;
	int		 resumed;	/* the reply came after a suspend */
	struct wbuf	 body;
	struct upload	*up;		/* a streamed upload, or NULL */
	int		 too_large;
	int		 refused;	/* 401/403 decided at the headers */
	int		 tcp;		/* came over the TLS listener */
};

static struct {
	const struct api_config	*cfg;
	struct store		*store;
	unsigned long		 replies[6];	/* by status class */
	int			 read_only;	/* the audit log failed */
	int			 stopping;	/* dispatch nothing more */
} api;

int
api_path(char *buf, size_t len, const char *sub, const char *name)
{
	int n = snprintf(buf, len, "%s/%s%s%s", api.cfg->state_dir, sub,
	    name != NULL ? "/" : "", name != NULL ? name : "");

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
api_read_only(void)
{
	return api.read_only;
}

void
api_set_read_only(void)
{
	api.read_only = 1;
}

int
api_audit(struct api_req *r, const char *type, json_t *data)
{
	char err[512];
	int rc;

	if (r->token_name != NULL)
		json_object_set_new(data, "by_token",
		    json_string(r->token_name));
	else {
		json_object_set_new(data, "by_uid", json_integer(r->peer_uid));
		json_object_set_new(data, "by_pid", json_integer(r->peer_pid));
	}
	rc = keyholder_append(r->audit, type, data, NULL, err, sizeof(err));
	json_decref(data);
	if (rc == 0)
		return 0;
	api.read_only = 1;
	log_warnx("%s: no further changes accepted", err);
	return api_error(r, 503, "audit", "the change could not be audited "
	    "(%s), so it was not made; the API accepts no further changes",
	    err), -1;
}

void
api_audit_refused(struct api_req *r, const char *type, int status)
{
	api_audit_refused_why(r, type, store_strerror(status));
}

void
api_audit_refused_why(struct api_req *r, const char *type, const char *why)
{
	char t[64];

	snprintf(t, sizeof(t), "%s.refused", type);
	(void)api_audit(r, t, json_pack("{s:s}", "reason", why));
}

void
api_count_reply(unsigned status)
{
	if (status / 100 < 6)
		api.replies[status / 100]++;
}

unsigned long
api_replies(unsigned status_class)
{
	return status_class < 6 ? api.replies[status_class] : 0;
}

int
api_reply(struct api_req *r, unsigned status, json_t *body)
{
	free(r->reply);
	r->status = status;
	r->reply = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	r->reply_type = "application/json";
	json_decref(body);
	if (r->reply == NULL) {
		r->status = 500;
		r->reply = strdup("{\"error\":{\"status\":500,\"code\":"
		    "\"internal\",\"message\":\"out of memory\"}}");
	}
	return 0;
}

int
api_reply_text(struct api_req *r, unsigned status, char *text,
    const char *type)
{
	free(r->reply);
	r->status = status;
	r->reply = text;
	r->reply_type = type;
	return 0;
}

int
api_error(struct api_req *r, unsigned status, const char *code,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return api_reply(r, status, json_pack("{s:{s:i, s:s, s:s}}", "error",
	    "status", (int)status, "code", code, "message", msg));
}

int
api_store_error(struct api_req *r, int st, const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s: %s", what, store_strerror(st));
	return api_store_error_msg(r, st, msg);
}

int
api_store_error_msg(struct api_req *r, int st, const char *msg)
{
	static const struct { int st; unsigned http; const char *code; }
	    map[] = {
		{ STORE_ENOTFOUND, 404, "not_found" },
		{ STORE_EEXIST, 409, "exists" },
		{ STORE_EINVAL, 422, "invalid" },
		{ STORE_EGATE, 409, "gate" },
		{ STORE_ESTATE, 409, "state" },
		{ STORE_ELIMIT, 409, "limit" },
		{ STORE_ENOTMOUNTED, 409, "not_mounted" },
		{ STORE_EDISABLED, 409, "disabled" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].st == st)
			return api_error(r, map[i].http, map[i].code, "%s",
			    msg);
	return api_error(r, 503, "store", "%s (%s)", msg,
	    store_errmsg(r->store));
}

/* The handler answers later (an import, a session start): the connection
 * waits without holding up the loop; the request stays allocated. */
void
api_suspend(struct api_req *r)
{
	r->suspended = 1;
}

/* The reply of a suspended request is set: send it on the next run. */
void
api_resume(struct api_req *r)
{
	struct http_req *h = (struct http_req *)r;

	if (!r->suspended)
		return;
	r->suspended = 0;
	h->resumed = 1;
	MHD_resume_connection(h->conn);
}

/* Is gid among the peer's groups (primary or supplementary)? */
static int
peer_in_group(int fd, gid_t primary, gid_t want)
{
	gid_t groups[MAX_PEER_GROUPS];
	socklen_t len = sizeof(groups);
	size_t i;

	if (want == (gid_t)-1)
		return 0;
	if (primary == want)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0)
		return 0;	/* fail closed: unknown groups grant nothing */
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == want)
			return 1;
	return 0;
}

/* The peer's role, from the kernel's view of the connection. */
static int
peer_identify(struct MHD_Connection *c, struct api_req *r)
{
	const union MHD_ConnectionInfo *ci;
	struct ucred uc;
	socklen_t len = sizeof(uc);

	r->role = API_ROLE_NONE;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED,
	    &uc, &len) != 0)
		return -1;
	r->peer_pid = uc.pid;
	r->peer_uid = uc.uid;
	if (uc.uid == 0 || peer_in_group(ci->connect_fd, uc.gid,
	    api.cfg->custodian_gid))
		r->role = API_ROLE_CUSTODIAN;
	else if (peer_in_group(ci->connect_fd, uc.gid, api.cfg->auditor_gid))
		r->role = API_ROLE_AUDITOR;
	return 0;
}

/* Over TCP: the role of the bearer token's line; none is a 401, said
 * in the log with the client's address (the UNIX socket's 403 is not
 * audited either: a refusal changes nothing). */
static int
token_identify(struct MHD_Connection *c, struct api_req *r)
{
	const struct api_token *t;
	const union MHD_ConnectionInfo *ci;
	char addr[INET6_ADDRSTRLEN] = "?";

	r->role = API_ROLE_NONE;
	r->peer_uid = (uid_t)-1;
	r->peer_pid = 0;
	t = api_token_check(&api.cfg->tcp->tokens,
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION));
	if (t != NULL) {
		r->role = t->role;
		r->token_name = t->name;
		return 0;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ci->client_addr)->
		    sin_addr, addr, sizeof(addr));
	else if (ci != NULL && ci->client_addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ci->client_addr)->
		    sin6_addr, addr, sizeof(addr));
	/* the method and the decoded path are the client's: the logger
	   escapes them; the precision keeps the line short */
	log_warnx("refused %.15s %.127s from %s over TCP: no valid bearer "
	    "token", r->method, r->path, addr);
	return -1;
}

int
api_body_load(struct api_req *r, const void *data, size_t len)
{
	json_error_t je;

	if (len == 0)
		return 0;
	r->body = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (r->body == NULL)
		return api_error(r, 400, "bad_json", "request body: line %d "
		    "column %d: %s", je.line, je.column, je.text), -1;
	if (!json_is_object(r->body))
		return api_error(r, 400, "bad_json", "request body: expected "
		    "a JSON object"), -1;
	return 0;
}

/* Parse the collected body: an object, or nothing. */
static int
body_parse(struct MHD_Connection *c, struct http_req *h)
{
	const char *type;

	if (h->body.len == 0)
		return 0;
	type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	if (type == NULL || strncasecmp(type, "application/json", 16) != 0 ||
	    (type[16] != '\0' && type[16] != ';'))
		return api_error(&h->req, 415, "media_type", "a request "
		    "body must be Content-Type: application/json"), -1;
	return api_body_load(&h->req, h->body.d, h->body.len);
}

/* Queue h's reply on the connection. */
static enum MHD_Result
send_reply(struct MHD_Connection *c, struct http_req *h)
{
	struct MHD_Response *resp;
	const char *text = h->req.reply != NULL ? h->req.reply : "";
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", h->req.reply_type !=
	    NULL ? h->req.reply_type : "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (h->tcp && h->req.status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Bearer realm=\"cdsgate\"");
	ret = MHD_queue_response(c, h->req.status, resp);
	MHD_destroy_response(resp);
	api_count_reply(h->req.status);
	return ret;
}

/* A streamed upload: only custodians, only while changes are taken. */
static void
req_stream_begin(struct http_req *h)
{
	char spool[4096], err[512];

	if (h->req.role < API_ROLE_CUSTODIAN) {
		api_error(&h->req, 403, "forbidden", "uploads need the "
		    "custodian role");
		h->refused = 1;
	} else if (api.read_only) {
		api_error(&h->req, 503, "audit", "the audit log is "
		    "unavailable: no changes are accepted");
		h->refused = 1;
	} else if (api_path(spool, sizeof(spool), "spool", NULL) != 0 ||
	    (h->up = upload_begin(spool, err, sizeof(err))) == NULL) {
		api_error(&h->req, 507, "spool", "%s", err);
		h->refused = 1;
	}
}

/* First call for a request: who is it, may they ask at all? */
static struct http_req *
req_begin(struct MHD_Connection *c, const char *url, const char *method,
    int tcp)
{
	struct http_req *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	wbuf_init(&h->body, API_MAX_BODY);
	h->conn = c;
	h->req.store = api.store;
	h->req.audit = api.cfg->audit;
	h->req.cfg = api.cfg;
	h->req.method = method;
	h->req.path = url;
	h->tcp = tcp;
	if (tcp && token_identify(c, &h->req) != 0) {
		api_error(&h->req, 401, "unauthenticated", "this listener "
		    "wants \"Authorization: Bearer <token>\" with a token "
		    "of the tokens file");
		h->refused = 1;
	} else if (tcp)
		;	/* the token's role: checked per route */
	else if (peer_identify(c, &h->req) != 0) {
		api_error(&h->req, 401, "unauthenticated",
		    "the peer's credentials could not be read");
		h->refused = 1;
	} else if (h->req.role == API_ROLE_NONE) {
		api_error(&h->req, 403, "forbidden", "uid %u is neither root "
		    "nor in the custodian or auditor group",
		    (unsigned)h->req.peer_uid);
		h->refused = 1;
	}
	if (!h->refused && api_route_streams(method, url))
		req_stream_begin(h);
	return h;
}

/* Collect one chunk of the body, up to API_MAX_BODY. */
static void
req_chunk(struct http_req *h, const char *data, size_t n)
{
	if (h->refused || h->too_large)
		return;
	if (h->up != NULL) {
		upload_write(h->up, data, n);
		return;
	}
	if (wbuf_put(&h->body, data, n) != BUF_OK) {
		h->too_large = 1;
		api_error(&h->req, 413, "too_large",
		    "request body over %d bytes", API_MAX_BODY);
	}
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data,
    size_t *data_size, void **con_cls)
{
	struct http_req *h = *con_cls;

	(void)version;
	if (h == NULL) {
		if ((*con_cls = h = req_begin(c, url, method, cls != NULL)) ==
		    NULL)
			return MHD_NO;
		return MHD_YES;
	}
	if (h->resumed)
		return send_reply(c, h);
	if (*data_size != 0) {
		req_chunk(h, data, *data_size);
		*data_size = 0;
		return MHD_YES;
	}
	if (h->up != NULL) {
		char spool[4096];

		api_path(spool, sizeof(spool), "spool", NULL);
		upload_end(h->up, spool, &h->req);
		h->up = NULL;	/* freed by upload_end */
	} else if (api.stopping)
		api_error(&h->req, 503, "stopping", "the api is stopping");
	else if (!h->refused && !h->too_large && body_parse(c, h) == 0)
		api_dispatch(&h->req);
	if (h->req.suspended) {
		MHD_suspend_connection(c);
		return MHD_YES;
	}
	return send_reply(c, h);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_req *h = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (h == NULL)
		return;
	upload_abort(h->up);	/* a cut upload leaves no file */
	json_decref(h->req.body);
	free(h->req.reply);
	wbuf_free(&h->body);
	free(h);
	*con_cls = NULL;
}

/* After a crash: imports in flight become errors, in the audit log too. */
static int
api_recover(void)
{
	int imports = 0, sessions = 0, rc;
	char err[512];
	json_t *rec;

	if (store_recover(api.store, (int64_t)time(NULL), &imports,
	    &sessions) != STORE_OK) {
		log_warnx("recovery: %s", store_errmsg(api.store));
		return -1;
	}
	if (imports + sessions == 0)
		return 0;
	log_info("recovered %d interrupted import(s), %d session(s)",
	    imports, sessions);
	rec = json_pack("{s:i, s:i}", "imports", imports, "sessions",
	    sessions);
	rc = keyholder_append(api.cfg->audit, "recover", rec, NULL, err,
	    sizeof(err));
	json_decref(rec);
	if (rc != 0)
		log_warnx("%s", err);
	return rc;
}

/* The spool and the released files: the api user's only. */
static int
state_dirs(const struct api_config *cfg)
{
	static const char *const subs[] = { "spool", "released" };
	char p[4096];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", cfg->state_dir, subs[i]);
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			log_warn("%s", p);
			return -1;
		}
	}
	return 0;
}

/* A signalfd for the signals that end the API. */
static int
signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The TLS listener: libmicrohttpd's own GnuTLS, TLS 1.2 at least. */
static struct MHD_Daemon *
http_start_tls(const struct api_tcp *t)
{
	return MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
	    MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TLS, 0, NULL,
	    NULL, on_request, (void *)t,
	    MHD_OPTION_LISTEN_SOCKET, t->fd,
	    MHD_OPTION_HTTPS_MEM_CERT, t->cert_pem,
	    MHD_OPTION_HTTPS_MEM_KEY, t->key_pem,
	    MHD_OPTION_HTTPS_PRIORITIES,
	    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2",
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_MAX_CONNECTIONS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)API_MAX_PER_IP,
	    MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_END);
}

static struct MHD_Daemon *
http_start(int listen_fd)
{
	return MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
	    MHD_ALLOW_SUSPEND_RESUME, 0, NULL,
	    NULL, on_request, NULL,
	    MHD_OPTION_LISTEN_SOCKET, listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_MAX_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_END);
}

/* poll() on the daemon's epoll fd, the signals, the parent and the gate
 * runner until a signal: nothing here waits for anything else. */
static int
http_loop(struct MHD_Daemon *d, struct MHD_Daemon *dtls, int sigfd)
{
	const union MHD_DaemonInfo *di, *dt = NULL;
	struct pollfd pfd[5];
	MHD_UNSIGNED_LONG_LONG to;
	int ms;

	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
	if (di == NULL || (dtls != NULL && (dt = MHD_get_daemon_info(dtls,
	    MHD_DAEMON_INFO_EPOLL_FD)) == NULL))
		return -1;
	pfd[4].fd = dt != NULL ? dt->epoll_fd : -1;
	pfd[4].events = POLLIN;
	pfd[0].fd = di->epoll_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sigfd;
	pfd[1].events = POLLIN;
	pfd[2].fd = api.cfg->parent_fd;	/* -1: ignored by poll */
	pfd[2].events = POLLIN;
	pfd[3].events = POLLIN;
	for (;;) {
		pfd[3].fd = gaterunner_fd(api.cfg->gate);	/* -1: gone */
		ms = MHD_get_timeout(d, &to) == MHD_YES ?
		    (to > 1000 ? 1000 : (int)to) : 1000;
		if (dtls != NULL && MHD_get_timeout(dtls, &to) == MHD_YES &&
		    to < (MHD_UNSIGNED_LONG_LONG)ms)
			ms = (int)to;
		if (poll(pfd, 5, ms) < 0 && errno != EINTR)
			return -1;
		if (pfd[1].revents & POLLIN) {
			api_parent_drain(api.cfg, api.store);
			return 0;
		}
		/* The parent gone or broken: no sessions, fail closed. */
		if (pfd[2].revents != 0 && api_parent_input(api.cfg, api.store) != 0)
			return -1;
		if (pfd[3].revents != 0)
			datasets_gate_input(api.cfg, api.store);
		if (api.cfg->parent_fd >= 0)
			api_sessions_tick(api.cfg, api.store);
		MHD_run(d);
		if (dtls != NULL)
			MHD_run(dtls);
	}
}

int
api_main(const struct api_config *cfg)
{
	struct MHD_Daemon *d = NULL, *dtls = NULL;
	char err[512];
	int sigfd = -1, rc = 1;

	api.cfg = cfg;
	if (state_dirs(cfg) != 0)
		return 1;
	if (store_open(cfg->store_path, &api.store, err, sizeof(err)) !=
	    STORE_OK) {
		log_warnx("store: %s", err);
		return 1;
	}
	if (api_recover() != 0)
		goto out;
	if ((sigfd = signals_fd()) < 0 || (d = http_start(cfg->listen_fd))
	    == NULL) {
		log_warnx("cannot start the HTTP server "
		    "on %s", cfg->listen_desc);
		goto out;
	}
	if (cfg->tcp != NULL && (dtls = http_start_tls(cfg->tcp)) == NULL) {
		log_warnx("cannot start the HTTPS server "
		    "on %s (certificate or key unusable?)", cfg->tcp->desc);
		goto out;
	}
	if (api_confine() != 0)
		goto out;
	if (cfg->tcp != NULL)
		printf("ready %s https://%s\n", cfg->listen_desc,
		    cfg->tcp->desc);
	else
		printf("ready %s\n", cfg->listen_desc);
	fflush(stdout);
	if (http_loop(d, dtls, sigfd) == 0)
		rc = 0;
out:
	/* MHD may not stop with a suspended request: answer them (the last
	   run sends those replies), and suspend no new one */
	api.stopping = 1;
	datasets_abandon();
	sessions_abandon();
	nodes_abandon();
	if (d != NULL) {
		MHD_run(d);
		MHD_stop_daemon(d);
	}
	if (dtls != NULL) {
		MHD_run(dtls);
		MHD_stop_daemon(dtls);
	}
	if (sigfd >= 0)
		close(sigfd);
	store_close(api.store);
	return rc;
}
