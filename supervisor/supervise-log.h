/*
 * supervisor/supervise-log.h — the supervisor's diagnostics: operator
 * messages on stderr ("cdsgated: ..."), and the child_exit event with
 * its wait status and sandbox.  The session's events go to the JSON log
 * (gateway/slog.h).
 */
#ifndef GATEWAY_SUPERVISE_LOG_H
#define GATEWAY_SUPERVISE_LOG_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "sandbox/confine.h"

/* A role confined by no filter of ours (the browser keeps Chromium's). */
#define NO_PROFILE	CONFINE_NO_PROFILE	/* sandbox/confine.h */

/* log_warn appends strerror(errno); log_info speaks only when verbose. */
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_set_verbose(int verbose);

/* "SIGTERM" for 15 (or the number), in buf. */
const char *sig_name(int sig, char *buf, size_t len);
/* "seccomp:worker" for an enum sandbox_profile, or "none" (NO_PROFILE,
 * or no filter at all), in buf. */
const char *role_sandbox(int profile, char *buf, size_t len);
/* Log child_exit for role (fields: extras, consumed); a seccomp kill is
 * said loudly on stderr too. */
void	log_child_exit(const char *role, int profile, pid_t pid, int st,
	    json_t *fields);

#endif
