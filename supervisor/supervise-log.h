/*
 * supervisor/supervise-log.h — what the supervisor says about its
 * children: the child_exit event (wait status, sandbox) for the
 * session's JSON log (gateway/slog.h), and signal and profile names.
 * Operator diagnostics go through the one logger, common/log.h, which
 * this header brings in for the supervisor's files.
 */
#ifndef GATEWAY_SUPERVISE_LOG_H
#define GATEWAY_SUPERVISE_LOG_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "common/log.h"
#include "sandbox/confine.h"

/* A role confined by no filter of ours (the browser keeps Chromium's). */
#define NO_PROFILE	CONFINE_NO_PROFILE	/* sandbox/confine.h */

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
