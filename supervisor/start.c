/*
 * supervisor/start.c — starting the session's children in order: Xvfb
 * (waiting for its display), the tls process, the worker, the
 * forwarder, the browser; the worker's and the tls process's config.
 * Root.
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


/* ---- starting the children ---- */

static int
start_xvfb(struct session *s)
{
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) != 0) {
		log_warn("pipe");
		return -1;
	}
	s->xvfb_pipe = p[1];
	r = child_spawn(s, ROLE_XVFB);
	close(p[1]);
	s->xvfb_pipe = -1;
	if (r != 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		r = xvfb_wait_ready(p[0], XVFB_READY_TIMEOUT_MS, s->sigfd,
		    &s->display);
		if (r != XVFB_INTERRUPTED)
			break;
		handle_signals(s);
		if (s->stop_reason != NULL)
			break;
	}
	close(p[0]);
	if (r == XVFB_READY) {
		snprintf(s->display_name, sizeof(s->display_name), ":%d",
		    s->display);
		slog_event("display_ready", json_pack("{s:s}", "display",
		    s->display_name));
		/* The jail gets this inode, never whatever the path
		   holds later (the directory belongs to the worker's
		   user, which every session shares). */
		if ((s->xsock_fd = browser_xsock_open(s->xsockdir,
		    s->display, s->worker_user.uid)) < 0) {
			log_warn("Xvfb's socket %s/X%d", s->xsockdir,
			    s->display);
			return -1;
		}
		return 0;
	}
	if (r != XVFB_INTERRUPTED)
		log_warnx("Xvfb did not become ready (%s)",
		    r == XVFB_TIMEOUT ? "timed out" : "exited");
	return -1;
}

static void
worker_config_fill(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct worker_config *w = &s->wcfg;

	memset(w, 0, sizeof(*w));
	w->session_id = s->sid;
	w->display = s->display_name;
	w->xauthority = s->xauth;
	w->listen_fd = s->listen_fd;
	w->listen_desc = s->listen_desc;
	w->password = s->password;
	w->ws_token = s->ws_token;
	w->ws_origins = (const char *const *)sp->ws_origins;
	w->tls_ipc = s->tls_ipc[1];
	w->tls_users = s->creds != NULL ? (unsigned)creds_count(s->creds) : 0;
	w->allow_plain = spec_allow_plain(sp);
	w->accept_from = sp->accept_from;
	w->width = sp->width;
	w->height = sp->height;
	w->limits.key_rate = sp->key_rate;
	w->limits.key_burst = sp->key_burst;
	w->limits.button_rate = sp->button_rate;
	w->limits.button_burst = sp->button_burst;
	w->limits.motion_rate = sp->motion_rate;
	w->limits.alarm_seconds = sp->alarm_seconds;
	w->limits.alarm_disconnect = sp->alarm_disconnect;
	w->idle_timeout = sp->idle_timeout;
	w->max_duration = sp->max_duration;
	w->allow_observer = sp->observer;
	w->test_violate = s->violate[ROLE_WORKER];
	w->profile = roles[ROLE_WORKER].profile;
	w->record_fd = s->ev.record_fd;
	w->recipient = sp->recipient;
	w->policy = sp->policy;
	w->watermark = sp->watermark;
	w->watermark_text = sp->watermark_text;
	w->watermark_opacity = sp->watermark_opacity;
	w->watermark_layout = sp->watermark_layout;
}

void
tls_ipc_close(struct session *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->tls_ipc[i] >= 0)
			close(s->tls_ipc[i]);
	s->tls_ipc[0] = s->tls_ipc[1] = -1;
}

/*
 * The tls process first, so that the worker is forked from a supervisor
 * that no longer holds the key or the credentials: both are wiped and
 * freed here, before the worker exists (a fork copies our memory).
 */
static int
start_tls(struct session *s)
{
	struct tlsfront_config *t = &s->tcfg;
	int r = 0;

	if (s->tls_cert == NULL)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    s->tls_ipc) != 0) {
		log_warn("tls: socketpair");
		return -1;
	}
	s->wcfg.tls_ipc = s->tls_ipc[1];
	memset(t, 0, sizeof(*t));
	t->ipc_fd = s->tls_ipc[0];
	t->tls_cert = s->tls_cert;
	t->tls_cert_len = s->tls_cert_len;
	t->tls_key = s->tls_key;
	t->tls_key_len = s->tls_key_len;
	t->creds = s->creds;
	t->inner_password = s->password;
	t->allow_plain = spec_allow_plain(s->spec);
	t->test_violate = s->violate[ROLE_TLS];
	t->profile = roles[ROLE_TLS].profile;
	if (child_spawn(s, ROLE_TLS) != 0)
		r = -1;
	explicit_bzero(s->tls_key, s->tls_key_len);
	free(s->tls_key);
	s->tls_key = NULL;
	creds_free(s->creds);
	s->creds = NULL;
	t->tls_key = NULL;
	t->creds = NULL;
	return r;
}

int
start_children(struct session *s)
{
	struct browser_params bp;

	if (start_xvfb(s) != 0) {
		session_stop(s, "xvfb_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	worker_config_fill(s);
	if (start_tls(s) != 0) {
		session_stop(s, "tls_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	if (child_spawn(s, ROLE_WORKER) != 0) {
		session_stop(s, "worker_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	/* The worker has its copy; ours is not needed again. */
	explicit_bzero(s->password, strlen(s->password));
	if (s->ws_token != NULL)
		explicit_bzero(s->ws_token, strlen(s->ws_token));
	tls_ipc_close(s);
	evidence_worker_has(&s->ev);	/* the worker's now */

	s->fcfg.netlog_fd = s->ev.netlog_fd;
	s->fcfg.pcap_fd = s->ev.pcap_fd;
	if (child_spawn(s, ROLE_FORWARD) != 0) {
		session_stop(s, "forward_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	evidence_forwarder_has(&s->ev);
	memset(&bp, 0, sizeof(bp));
	bp.url = s->spec->backend;
	bp.display = s->display_name;
	bp.xauthority = s->bauth;
	bp.home = s->bdir;
	bp.profile = s->profile;
	bp.policy_dir = s->policy_dir;
	bp.jail_dir = s->jail_dir;
	bp.etc_dir = s->etc_dir;
	bp.display_num = s->display;
	bp.xsock_fd = s->xsock_fd;
	bp.width = s->spec->width;
	bp.height = s->spec->height;
	if (browser_cmd_build(&bp, &s->bcmd) != 0 ||
	    child_spawn(s, ROLE_BROWSER) != 0) {
		session_stop(s, "browser_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	return 0;
}
