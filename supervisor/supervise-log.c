/*
 * supervisor/supervise-log.c — the wait-status and sandbox descriptions of
 * the child_exit event; a seccomp kill is said through common/log.h too.
 *
 * Trust: runs in the root supervisor (and the parent); it formats only
 * what the supervisor itself knows — wait statuses, role names, profile
 * numbers — never network input.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "gateway/slog.h"
#include "supervisor/supervise-log.h"
#include "sandbox/sandbox.h"

/* ---- wait statuses ---- */

/* "SIGTERM" for 15. */
const char *
sig_name(int sig, char *buf, size_t len)
{
	const char *a = sigabbrev_np(sig);

	if (a != NULL)
		snprintf(buf, len, "SIG%s", a);
	else
		snprintf(buf, len, "%d", sig);
	return buf;
}

/* The child_exit event's "wait": how it ended, signal by name. */
static json_t *
wait_status_json(int st)
{
	char sig[16];

	if (WIFEXITED(st))
		return json_pack("{s:s, s:i}", "status", "exited", "code",
		    WEXITSTATUS(st));
	if (WIFSIGNALED(st))
		return json_pack("{s:s, s:i, s:s}", "status", "killed",
		    "signal", WTERMSIG(st), "signal_name",
		    sig_name(WTERMSIG(st), sig, sizeof(sig)));
	return json_pack("{s:s}", "status", "unknown");
}

/* "seccomp:worker", or "none" (no filter, or the browser's own). */
const char *
role_sandbox(int profile, char *buf, size_t len)
{
	if (profile == NO_PROFILE ||
	    strcmp(sandbox_mode_name(), "none") == 0)
		return "none";
	snprintf(buf, len, "%s:%s", sandbox_mode_name(),
	    sandbox_profile_name((enum sandbox_profile)profile));
	return buf;
}

/* A child died by its filter: SIGSYS (or, in debug mode, the trap
 * handler's exit status). */
static int
seccomp_killed(int st)
{
	return (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) ||
	    (sandbox_debug() && WIFEXITED(st) &&
	    WEXITSTATUS(st) == SANDBOX_DEBUG_EXIT);
}

/* Log child_exit (fields: role-specific extras, consumed); a seccomp
 * kill is said loudly on stderr too. */
void
log_child_exit(const char *role, int profile, pid_t pid, int st,
    json_t *fields)
{
	char sb[64];

	json_object_set_new(fields, "role", json_string(role));
	json_object_set_new(fields, "pid", json_integer(pid));
	json_object_set_new(fields, "wait", wait_status_json(st));
	json_object_set_new(fields, "sandbox",
	    json_string(role_sandbox(profile, sb, sizeof(sb))));
	if (seccomp_killed(st)) {
		json_object_set_new(fields, "seccomp_violation", json_true());
		log_warnx("%s killed by seccomp (SIGSYS)", role);
	}
	slog_event("child_exit", fields);
}
