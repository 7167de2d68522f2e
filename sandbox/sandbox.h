/*
 * sandbox/sandbox.h — the seccomp layer under confine_apply()
 * (sandbox/confine.h): pick the mode once (sandbox_init), and load a
 * role's filter (sandbox_enter), which only confine_apply calls, as its
 * last step, before any thread exists.
 *
 * The filters are allow-lists (libseccomp, default action: kill the
 * process), but for SUPERVISOR, a deny-list (EPERM) for the root
 * supervisor;
 * sandbox_init(..., debug = 1) makes the default action SIGSYS-trap and
 * report the syscall instead, for developing a profile.
 *
 * Library-style: no logging, no exit; errors come back as -1 with a
 * message in the caller's buffer.
 */
#ifndef SANDBOX_SANDBOX_H
#define SANDBOX_SANDBOX_H

#include <stddef.h>

enum sandbox_mode {
	SANDBOX_MODE_SECCOMP,	/* the default: every role filtered */
	SANDBOX_MODE_NONE	/* --with-sandbox=none: no filters (logged) */
};

/* One list per process role (sandbox/profiles.c). */
enum sandbox_profile {
	SANDBOX_PROFILE_WORKER,	/* session worker: RFB + X11, after start-up */
	SANDBOX_PROFILE_XVFB,	/* loaded before exec of Xvfb */
	SANDBOX_PROFILE_DEID,	/* deid worker: reads fds it was handed, computes */
	SANDBOX_PROFILE_FORWARD, /* the browser's TCP forwarder to the backend */
	SANDBOX_PROFILE_ANALYTICS, /* cdsgate-analytics: HTTP, read-only files */
	SANDBOX_PROFILE_AUDIT,	/* audit key holder: its log and head dir */
	SANDBOX_PROFILE_GATE,	/* api's gate runner: fork+exec the deid CLI */
	SANDBOX_PROFILE_API,	/* cdsgated api: HTTP, SQLite, spool; no exec */
	SANDBOX_PROFILE_TLS,	/* session's TLS key holder: TLS, VeNCrypt, relay */
	SANDBOX_PROFILE_PGMOUNT, /* api's PostgreSQL mounter: libpq, the CSV */
	SANDBOX_PROFILE_JAILINIT, /* pid 1 of the browser jail: waits, reaps */
	SANDBOX_PROFILE_SUPERVISOR, /* the root session supervisor: a deny-list */
	SANDBOX_PROFILE_REPLAY,	/* cdsgate replay: the recording, viewers */
	SANDBOX_PROFILE_FRONTDOOR, /* the front door: TLS, VeNCrypt, relay */
	SANDBOX_PROFILE_SLURM,	/* the Slurm helper, root: a deny-list */
	SANDBOX_PROFILE_UPLINK,	/* a node's uplink, root: a deny-list */
	SANDBOX_PROFILE_COUNT
};

/*
 * Choose the mode for this process and its children (call once, early,
 * in the parent).  `debug` != 0: trap and report instead of killing.
 * Returns 0, or -1 with a message when the mode is not available (e.g.
 * seccomp requested but not compiled in).
 */
int	sandbox_init(enum sandbox_mode mode, int debug, char *err,
	    size_t errlen);

/* The mode this build has: seccomp when compiled in, else none (the
 * file including this header includes config.h first). */
#ifdef HAVE_SECCOMP
#define SANDBOX_MODE_BUILT	SANDBOX_MODE_SECCOMP
#else
#define SANDBOX_MODE_BUILT	SANDBOX_MODE_NONE
#endif

/*
 * Load the profile's filter into the calling thread (there must be only
 * one).  Requires PR_SET_NO_NEW_PRIVS, set before (confine_apply does).  In
 * SANDBOX_MODE_NONE it does nothing and returns 0.  Returns 0, or -1 and
 * a message; the caller must not go on (fail closed).
 */
int	sandbox_enter(enum sandbox_profile profile, char *err, size_t errlen);
/*
 * sandbox_enter with one runtime value: the directory fd the profile's
 * *at() calls are tied to.  A profile with "dirfd rules" (AUDIT:
 * openat, unlinkat, renameat) allows those calls only when their dirfd
 * arguments equal `dirfd` (open it before, O_DIRECTORY).  seccomp sees
 * numbers, not paths: an absolute path ignores the dirfd, so the caller
 * must pass relative names (docs/seccomp.md).  sandbox_enter() of such a
 * profile allows none of them.  Same return as sandbox_enter.
 */
int	sandbox_enter_fd(enum sandbox_profile profile, int dirfd, char *err,
	    size_t errlen);
/*
 * What glibc opens lazily must happen before sandbox_enter: it calls
 * tzset() itself (so localtime_r works afterwards), but e.g.
 * sysconf(_SC_NPROCESSORS_ONLN) reads /sys on every call — ask before.
 * qsort's sysconf(_SC_PHYS_PAGES) (sysinfo) is allowed in DEID.
 */

/* "worker", "xvfb", "deid", "forward", "analytics", "audit",
 * "gate", "api", "pgmount", "tls", "jailinit", "supervisor", "replay", "frontdoor"; and the
 * active mode
 * ("seccomp", "none"). */
const char	*sandbox_profile_name(enum sandbox_profile profile);
const char	*sandbox_mode_name(void);

/* 1 when sandbox_init chose debug mode: a violation then writes
 * "cdsgate sandbox: profile P does not allow syscall N (name)" to stderr
 * and the process exits with SANDBOX_DEBUG_EXIT instead of dying of
 * SIGSYS.  Debug mode is for developing a profile, not for production. */
int		 sandbox_debug(void);
#define SANDBOX_DEBUG_EXIT	159	/* 128 + SIGSYS on Linux */

/*
 * Test hook (sandbox/violate.c): make the forbidden call named by what
 * ("open", "socket", "execve", "ptrace") so a test can prove the filter
 * kills.  Returns only if the call was allowed (-1, errno EINVAL for an
 * unknown name).  Callers decide who may trigger it (the gateway: only
 * with --enable-test-hooks, from the operator's environment).
 */
int		 sandbox_violate(const char *what);

#endif
