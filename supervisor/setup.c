/*
 * supervisor/setup.c — the session's set-up before any child: checks of
 * the spec, its TLS files and grant, the signals, the session id, the
 * listening socket, the run directory, the jail's network, the evidence
 * files, the log's first lines, the test hook.  Root; reads only the
 * operator's spec and files.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <openssl/rand.h>

#include "supervisor/browser.h"
#include "supervisor/childproc.h"
#include "supervisor/evidence.h"
#include "common/grant.h"
#include "gateway/forward.h"
#include "supervisor/membound.h"
#include "supervisor/notify.h"
#include "common/privdrop.h"
#include "supervisor/rundir.h"
#include "supervisor/session.h"		/* and supervise-log.h */
#include "supervisor/session-int.h"
#include "supervisor/testhook.h"
#include "gateway/slog.h"
#include "gateway/tlsfront.h"
#include "gateway/worker.h"
#include "supervisor/xvfb.h"
#include "sandbox/confine.h"
#include "policy/chromium.h"
#include "sandbox/namespace.h"
#include "sandbox/sandbox.h"
#include "policy/creds.h"
#include "record/record.h"


/* ---- set-up ---- */

/* The TLS front door's certificate, key and credentials, read now (as
 * root) because the worker opens no files once it runs. */
static int
setup_check_tls(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct policy_error e;

	if (sp->tls_cert == NULL)
		return 0;
	if (spec_read_file(sp->tls_cert, "TLS certificate", 256 * 1024, 0,
	    &s->tls_cert, &s->tls_cert_len, &e) != POLICY_OK ||
	    spec_read_file(sp->tls_key, "TLS key", 64 * 1024, 1,
	    &s->tls_key, &s->tls_key_len, &e) != POLICY_OK ||
	    creds_load(&s->creds, sp->credentials_file, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return -1;
	}
	return 0;
}

/* The dataset grant the forwarder adds to every request: read whole,
 * its form checked (the backend checks its MAC). */
static int
setup_check_grant(struct session *s)
{
	struct policy_error e;
	char *v = NULL;
	int r = -1;

	if (s->spec->grant_file == NULL)
		return 0;
	if (spec_read_secret(s->spec->grant_file, "grant", 1,
	    GRANT_VALUE_MAX - 1, GRANT_CHARSET, &v, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return -1;
	}
	if (grant_parse(v, strlen(v), &s->grant) != GRANT_OK)
		log_warnx("%s: %s", s->spec->grant_file,
		    grant_strerror(GRANT_EMALFORMED));
	else if (asprintf(&s->grant_line, GRANT_HEADER ": %s\r\n", v) < 0)
		s->grant_line = NULL;
	else
		r = 0;
	free(v);
	return r;
}

/* Users, binaries, secrets: what "bad configuration" means. */
static int
setup_check(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct policy_error e;
	char msg[512];

	if (privdrop_require_root(msg, sizeof(msg)) != 0 ||
	    privdrop_lookup(PRIVDROP_WORKER_USER, NULL, &s->worker_user, msg,
	    sizeof(msg)) != 0 ||
	    privdrop_lookup(PRIVDROP_BROWSER_USER, &s->worker_user,
	    &s->browser_user, msg, sizeof(msg)) != 0) {
		log_warnx("%s", msg);
		return -1;
	}
	if (access(XVFB_PATH, X_OK) != 0 || access(BROWSER_PATH, X_OK) != 0) {
		log_warn("%s", access(XVFB_PATH, X_OK) != 0 ? XVFB_PATH :
		    BROWSER_PATH);
		return -1;
	}
	if (spec_read_secret(sp->password_file, "password", 1,
	    SPEC_PASSWORD_MAX, NULL, &s->password, &e) != POLICY_OK ||
	    (sp->ws_token_file != NULL && spec_read_secret(sp->ws_token_file,
	    "websocket token", SPEC_TOKEN_MIN, SPEC_TOKEN_MAX,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-._~", &s->ws_token, &e) != POLICY_OK)) {
		log_warnx("%s", e.msg);
		return -1;
	}
	return setup_check_grant(s) != 0 ? -1 : setup_check_tls(s);
}

/* Signals through a signalfd; children are reparented to us. */
static int
setup_signals(struct session *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		log_warn("signalfd");
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed stdout must not kill us */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		log_warn("PR_SET_CHILD_SUBREAPER");
		return -1;
	}
	return 0;
}

static int
setup_id(struct session *s)
{
	unsigned char b[SESSION_ID_BYTES];
	size_t i;

	if (RAND_bytes(b, sizeof(b)) != 1) {
		log_warnx("RAND_bytes failed");
		return -1;
	}
	for (i = 0; i < sizeof(b); i++)
		snprintf(s->id + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* Bind and listen ourselves; the worker gets the fd and no privilege. */
static int
setup_listen(struct session *s)
{
	struct spec_listen l;
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	char host[INET6_ADDRSTRLEN];
	int one = 1;

	if (spec_listen_parse(s->spec->listen, &l, NULL) != POLICY_OK)
		return -1;	/* spec_check already said why */
	memset(&ss, 0, sizeof(ss));
	if (l.family == AF_INET) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)l.port);
		inet_pton(AF_INET, l.addr, &in4->sin_addr);
		len = sizeof(*in4);
	} else {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)l.port);
		inet_pton(AF_INET6, l.addr, &in6->sin6_addr);
		len = sizeof(*in6);
	}
	/* Non-blocking: the worker's event loop accepts until EAGAIN, and
	   a client that resets between poll() and accept() must not
	   block it. */
	s->listen_fd = socket(l.family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0 ||
	    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 ||
	    (l.family == AF_INET6 && setsockopt(s->listen_fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
	    bind(s->listen_fd, (struct sockaddr *)&ss, len) != 0 ||
	    listen(s->listen_fd, LISTEN_BACKLOG) != 0 ||
	    getsockname(s->listen_fd, (struct sockaddr *)&ss, &len) != 0) {
		log_warn("listen on %s", s->spec->listen);
		return -1;
	}
	if (l.family == AF_INET) {
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(s->listen_desc, sizeof(s->listen_desc), "%s:%u", host,
		    (unsigned)ntohs(in4->sin_port));
	} else {
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(s->listen_desc, sizeof(s->listen_desc), "[%s]:%u",
		    host, (unsigned)ntohs(in6->sin6_port));
	}
	return 0;
}

/*
 * <run>/<id>    0711 root             traversable, not listable
 *   supervisor.lock 0600 root         flock'd by the live supervisor
 *   x/          0700 cdsgate          Xauthority (Xvfb, worker)
 *   browser/    0700 cdsgate-browser  Xauthority, profile/, HOME
 *   policy/     0755 root             cdsgate.json, shown to Chromium
 */
static int
setup_dir(struct session *s)
{
	const struct privdrop_user *w = &s->worker_user, *b = &s->browser_user;
	char lock[PATH_MAX];

	if (run_dir_prepare() != 0 ||
	    path_join(s->dir, SESSION_RUN_DIR, s->id) != 0 ||
	    path_join(s->xdir, s->dir, "x") != 0 ||
	    path_join(s->xauth, s->xdir, "Xauthority") != 0 ||
	    path_join(s->xsockdir, s->xdir, "X11-unix") != 0 ||
	    path_join(s->bdir, s->dir, "browser") != 0 ||
	    path_join(s->bauth, s->bdir, "Xauthority") != 0 ||
	    path_join(s->profile, s->bdir, "profile") != 0 ||
	    path_join(s->policy_dir, s->dir, "policy") != 0 ||
	    path_join(s->jail_dir, s->dir, "jail") != 0 ||
	    path_join(s->etc_dir, s->dir, "etc") != 0)
		return -1;
	if (mkdir_owned(s->dir, 0711, 0, 0) != 0)
		return -1;
	s->dir_made = 1;
	if (path_join(lock, s->dir, SESSION_LOCK_FILE) != 0)
		return -1;
	s->dir_lock = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (s->dir_lock < 0 || flock(s->dir_lock, LOCK_EX | LOCK_NB) != 0) {
		log_warn("%s", lock);
		return -1;
	}
	dprintf(s->dir_lock, "%ld\n", (long)getpid());
	if (mkdir_owned(s->xdir, 0700, w->uid, w->gid) != 0 ||
	    /* like the host's /tmp/.X11-unix, or Xvfb tries to fix it */
	    mkdir_owned(s->xsockdir, 01777, 0, 0) != 0 ||
	    mkdir_owned(s->bdir, 0700, b->uid, b->gid) != 0 ||
	    mkdir_owned(s->profile, 0700, b->uid, b->gid) != 0 ||
	    mkdir_owned(s->policy_dir, 0755, 0, 0) != 0 ||
	    mkdir_owned(s->etc_dir, 0755, 0, 0) != 0)
		return -1;
	return 0;
}

/* The jail's network namespace, its listener and the forwarder's
 * config: the browser reaches the backend and nothing else. */
static int
setup_jail_net(struct session *s)
{
	char err[512];
	int stuck;

	if (browser_net_setup(s->spec->backend, s->etc_dir, &s->bnet, &stuck,
	    err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		if (stuck)
			fatal_namespace("network");
		return -1;
	}
	memset(&s->fcfg, 0, sizeof(s->fcfg));
	s->fcfg.listen_fd = s->bnet.listen_fd;
	s->fcfg.backend = s->bnet.addr;
	s->fcfg.backend_len = s->bnet.addrlen;
	s->fcfg.backend_desc = s->bnet.desc;
	s->fcfg.max_conns = FORWARD_MAX_CONNS;
	/* https: TLS stays end to end, the forwarder cannot frame it */
	s->fcfg.http = strncasecmp(s->spec->backend, "http://", 7) == 0;
	s->fcfg.netlog_fd = s->fcfg.pcap_fd = -1;
	/* https: the grant cannot be added (logged in session_start) */
	s->fcfg.grant_line = s->fcfg.http ? s->grant_line : NULL;
	slog_event("browser_net", json_pack("{s:s, s:i}", "backend",
	    s->bnet.desc, "max_conns", FORWARD_MAX_CONNS));
	return 0;
}

/* The browser policy and the two cookie files. */
static int
setup_files(struct session *s)
{
	unsigned char cookie[XVFB_COOKIE_LEN];
	struct policy_error e;
	int r = -1;

	if (chromium_policy_write(s->policy_dir, s->spec->backend, &e) !=
	    POLICY_OK) {
		log_warnx("browser policy: %s", e.msg);
		return -1;
	}
	if (browser_host_prepare() != 0) {
		log_warn("%s (needed as the policy mount point)",
		    CHROMIUM_POLICY_DIR);
		return -1;
	}
	if (setup_jail_net(s) != 0)
		return -1;
	if (xvfb_cookie_new(cookie) != 0) {
		log_warnx("RAND_bytes failed");
		return -1;
	}
	if (xvfb_write_xauth(s->xauth, cookie, s->worker_user.uid,
	    s->worker_user.gid) != 0)
		log_warn("%s", s->xauth);
	else if (xvfb_write_xauth(s->bauth, cookie, s->browser_user.uid,
	    s->browser_user.gid) != 0)
		log_warn("%s", s->bauth);
	else
		r = 0;
	explicit_bzero(cookie, sizeof(cookie));
	return r;
}

/* What session_start says of the grant: whose, which dataset, and
 * whether the forwarder can add it (not to an https:// backend). */
static json_t *
log_grant(const struct session *s)
{
	if (s->grant_line == NULL)
		return json_null();
	return json_pack("{s:s, s:I, s:I, s:b}", "session", s->grant.session,
	    "dataset", (json_int_t)s->grant.dataset, "expires",
	    (json_int_t)s->grant.expires, "added",
	    strncasecmp(s->spec->backend, "http://", 7) == 0);
}

static void
log_session_start(struct session *s)
{
	const struct session_spec *sp = s->spec;
	char geo[32];
	json_t *o;

	snprintf(geo, sizeof(geo), "%ux%u", sp->width, sp->height);
	o = json_pack(
	    "{s:s?, s:s, s:s, s:s, s:b, s:b, s:i, s:i, s:i, s:s?, s:s, s:b, s:b,"
	    " s:b, s:o, s:o}",
	    "recipient", sp->recipient, "backend", sp->backend,
	    "geometry", geo, "listen", s->listen_desc,
	    "observer", sp->observer, "websocket", s->ws_token != NULL,
	    "idle_timeout", (int)sp->idle_timeout,
	    "max_duration", (int)sp->max_duration, "memory_limit_mb",
	    (int)sp->memory_limit_mb, "policy_file",
	    sp->policy, "sandbox", sandbox_mode_name(), "sandbox_debug",
	    sandbox_debug(), "tls", sp->tls_cert != NULL, "allow_plain_vnc",
	    spec_allow_plain(sp), "watermark", !sp->watermark ? json_false() :
	    json_pack("{s:s, s:f, s:s}", "text", sp->watermark_text,
	    "opacity", sp->watermark_opacity, "layout",
	    sp->watermark_layout), "grant", log_grant(s));
	/* the run directory's and cgroup's name, when the session has
	 * serve's id: the one place both ids meet */
	json_object_set_new(o, "run_id", json_string(s->id));
	slog_event("session_start", o);
}

/* The test hook (supervisor/testhook.h): which role dies by which call. */
static int
setup_test_hook(struct session *s)
{
	const char *name, *call;
	int r, got = test_hook_get(&name, &call);

	if (got <= 0)
		return got;
	for (r = 0; r < ROLE_COUNT && strcmp(roles[r].name, name) != 0; r++)
		;
	if (r == ROLE_COUNT) {
		log_warnx("test hook: no %s role in this build", name);
		return -1;
	}
	s->violate[r] = call;
	log_warnx("test hook: the %s will call %s() after its filter",
	    roles[r].name, call);
	slog_event("test_hook", json_pack("{s:s, s:s}", "role", roles[r].name,
	    "violate", call));
	return 0;
}

/* Everything before the first child.  Returns an exit status or -1. */
int
session_setup(struct session *s)
{
	const struct session_spec *sp = s->spec;
	int r;

	if (setup_check(s) != 0)
		return SESSION_EXIT_CONFIG;
	if (setup_signals(s) != 0 || setup_id(s) != 0)
		return SESSION_EXIT_FAILED;
	s->sid = sp->record_name != NULL ? sp->record_name : s->id;
	if (slog_open(sp->log, s->sid, "supervisor") != 0) {
		log_warn("session log %s", sp->log);
		return SESSION_EXIT_CONFIG;
	}
	if (setup_test_hook(s) != 0)
		return SESSION_EXIT_CONFIG;
	if (setup_listen(s) != 0)
		return SESSION_EXIT_FAILED;
	log_session_start(s);
	if ((r = evidence_open(&s->ev, sp, s->id)) != 0)
		return r;
	if (setup_dir(s) != 0 || setup_files(s) != 0)
		return SESSION_EXIT_FAILED;
	return -1;
}
