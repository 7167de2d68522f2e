/*
 * gateway/worker.h — the per-session gateway worker.
 *
 * An unprivileged child of the supervisor (supervisor/session.c).  It is
 * handed everything it needs: the X display and cookie of the session's
 * Xvfb, an already-listening TCP socket, the VNC password and websocket
 * token, the input limits and timeouts.  It runs one event loop (no
 * library threads): RFB via LibVNCServer, frames from Xvfb via MIT-SHM +
 * XDamage, the cursor via XFixes, input through the key allow-list and
 * the rate limiter into XTest.  Untrusted input: everything a VNC client
 * sends.
 */
#ifndef GATEWAY_WORKER_H
#define GATEWAY_WORKER_H

#include <stddef.h>
#include <stdint.h>


struct ratelimit_config {
	double		 key_rate;	/* key presses/s sustained (10) */
	double		 key_burst;	/* (20) */
	double		 button_rate;	/* pointer button presses/s (10) */
	double		 button_burst;	/* (20) */
	double		 motion_rate;	/* pointer motion events/s sent to X (60);
					   excess is coalesced, never lost */
	double		 alarm_seconds;	/* sustained over-limit => alarm (5) */
	int		 alarm_disconnect; /* on alarm, disconnect the client */
};

/* worker_main's status when the recording's disk filled up, and when
 * the tls process went away or broke the protocol (else 0/1): the
 * supervisor names the cause, whichever of the two it reaps first */
#define WORKER_EXIT_DISK_FULL	3
#define WORKER_EXIT_TLS_GONE	4

struct worker_config {
	const char		*session_id;
	const char		*display;	/* ":N" */
	const char		*xauthority;	/* cookie file for that display */
	int			 listen_fd;	/* bound, listening TCP socket */
	const char		*listen_desc;	/* "addr:port" for logs */
	const char		*password;	/* VNC password (8 chars used) */
	const char		*ws_token;	/* NULL: websockets refused */
	const char *const	*ws_origins;	/* allowed Origin values; NULL-terminated;
					   NULL = same host only */
	int			 tls_ipc;	/* socket to the tls process, which
					   holds the TLS key and the
					   credentials; -1 = no TLS */
	unsigned		 tls_users;	/* how many (for the log) */
	int			 allow_plain;	/* unencrypted VNC/ws allowed */
	const char		*accept_from;	/* the only peer served, or NULL */
	unsigned		 width, height;
	struct ratelimit_config	 limits;
	unsigned		 idle_timeout;	/* seconds without input; 0 = off */
	unsigned		 max_duration;	/* seconds; 0 = off */
	int			 allow_observer; /* one extra view-only client */
	int			 record_fd;	/* empty file for the recording
					   (record/record.h); the worker
					   owns it; -1 = refuse to run */
	const char		*recipient;	/* for the recording's header */
	const char		*policy;	/* policy file, or NULL */
	int			 watermark;	/* burn the watermark in */
	const char		*watermark_text; /* template: %r %s %t %% */
	double			 watermark_opacity;
	const char		*watermark_layout; /* "tile" or "corner" */
	const char		*test_violate;	/* test hook: a forbidden call to
					   make after the filter, or NULL */
	int			 profile;	/* its seccomp profile (the
					   session's roles table) */
};

/*
 * Run the session until SIGTERM, idle timeout or max duration.  After
 * its start-up (X connection, MIT-SHM, RFB server) and before its loop
 * it loads its seccomp profile (cfg->profile: WORKER): from there on
 * it cannot open files, create sockets, exec, fork or ptrace.  Returns
 * the process exit status: 0 on a clean end, 1 when set-up failed (X
 * display unreachable, missing extension, ...) — fail closed.
 */
int	worker_main(const struct worker_config *cfg);

#endif
