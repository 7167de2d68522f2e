/*
 * supervisor/session.h — the session supervisor: one researcher's session
 * from set-up to the last reaped child.
 *
 * The supervisor is the "parent" of the privilege-separation table
 * (docs/gateway.md): it runs as root and does only what needs root or
 * must outlive the children — parse the spec, bind the port, make the
 * session directory, cookie and browser policy, spawn and reap the
 * children, and clean up.  It parses no network input and talks no X.
 *
 *   role     user             on exit
 *   xvfb     cdsgate          the session ends (no display, no session)
 *   worker   cdsgate          the session ends (it is the session)
 *   forward  cdsgate-browser  the session ends (the browser's only way out)
 *   tls      cdsgate          the session ends (with --tls-cert: the only
 *                             holder of the TLS key and the credentials)
 *   browser  cdsgate-browser  restarted with back-off; too many => end
 *                             (in its jail: pid 1 of its own pid namespace,
 *                             loopback-only network, allow-list root)
 *
 * Children are in their own sessions/process groups, die with the
 * supervisor (PR_SET_PDEATHSIG), and anything they leave behind is
 * reparented to it (PR_SET_CHILD_SUBREAPER), so nothing outlives it.
 */
#ifndef GATEWAY_SESSION_H
#define GATEWAY_SESSION_H

#include <stdio.h>

#include "supervisor/supervise-log.h"	/* log_warn and friends */
#include "policy/spec.h"

/* Exit statuses of `cdsgated run-session`: a contract with scripts. */
#define SESSION_EXIT_OK		0	/* ended: signal, idle, max duration */
#define SESSION_EXIT_FAILED	1	/* a child or the set-up failed */
#define SESSION_EXIT_CONFIG	2	/* bad arguments or environment */
#define SESSION_EXIT_DISK_FULL	3	/* the record dir is (nearly) full */
#define SESSION_EXIT_MEMORY	4	/* over --memory-limit-mb */

/* Session directories live here (each 0711 root, inner dirs 0700 owned
 * by the one user that needs them). */
#define SESSION_RUN_DIR		"/run/cdsgate/sessions"

#define SESSION_TERM_GRACE_MS	3000	/* SIGTERM -> SIGKILL */
#define SESSION_BACKOFF_MIN_MS	250	/* first browser restart delay */
#define SESSION_BACKOFF_MAX_MS	10000
#define SESSION_DURATION_GRACE_S 5	/* after max_duration the worker
					   ends the session; we make sure */

/*
 * Run one session in the foreground until SIGTERM/SIGINT/SIGHUP, the
 * worker's end (idle timeout, max duration), a failure, or too many
 * browser restarts.  Prints "ready ADDR:PORT\n" on ready_out (flushed)
 * once clients can connect.  Everything it started is stopped and
 * reaped, and the session directory removed, before it returns one of
 * the SESSION_EXIT_* statuses.
 */
int	session_run(const struct session_spec *spec, FILE *ready_out);

#endif
