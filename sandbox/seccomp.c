/*
 * sandbox/seccomp.c — turn a profile (sandbox/profiles.c) into a
 * libseccomp filter and load it.
 *
 * Trust: runs in a freshly forked child, after its rlimits, privilege
 * drop and PR_SET_NO_NEW_PRIVS, before the role's own code; no input
 * but the static tables.  Library-style (sandbox/sandbox.h): errors come
 * back as -1 and a message, never a log line or an exit.
 *
 * Default action: kill the whole process (SCMP_ACT_KILL_PROCESS).  In
 * debug mode the default is SIGSYS-trap instead; the handler writes the
 * syscall's number and name to stderr with write(2) only and _exits.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "sandbox/profiles.h"
#include "sandbox/sandbox.h"

#define SANDBOX_MAX_NR		512	/* names kept for the debug report */

static enum sandbox_mode	 sb_mode = SANDBOX_MODE_NONE;
static int			 sb_debug;
static int			 sb_inited;

static void
sb_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *
sandbox_profile_name(enum sandbox_profile profile)
{
	const struct sandbox_rules *r = sandbox_rules(profile);

	return r != NULL ? r->name : "unknown";
}

const char *
sandbox_mode_name(void)
{
	return sb_mode == SANDBOX_MODE_SECCOMP ? "seccomp" : "none";
}

int
sandbox_debug(void)
{
	return sb_debug;
}

int
sandbox_init(enum sandbox_mode mode, int debug, char *err, size_t errlen)
{
	if (mode != SANDBOX_MODE_SECCOMP && mode != SANDBOX_MODE_NONE) {
		sb_err(err, errlen, "unknown sandbox mode %d", (int)mode);
		return -1;
	}
#ifndef HAVE_SECCOMP
	if (mode == SANDBOX_MODE_SECCOMP) {
		sb_err(err, errlen, "seccomp filters were not compiled in "
		    "(configure --with-sandbox=none); rebuild with "
		    "--with-sandbox=seccomp");
		return -1;
	}
#endif
	sb_mode = mode;
	sb_debug = debug != 0;
	sb_inited = 1;
	return 0;
}

#ifdef HAVE_SECCOMP

/* Names for the debug report, resolved before the filter exists (the
 * handler may not allocate).  NULL entries print as the number only. */
static char	*sb_names[SANDBOX_MAX_NR];
static const char *sb_active = "?";

/* Decimal digits of v into buf (async-signal-safe). */
static size_t
sb_utoa(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0 && n < sizeof(tmp));
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static void
sb_cat(char *buf, size_t *len, size_t max, const char *s)
{
	size_t n = strlen(s);

	if (*len + n > max)
		n = max - *len;
	memcpy(buf + *len, s, n);
	*len += n;
}

/* SIGSYS in debug mode: say which syscall the profile lacks, then die. */
static void
sb_sigsys(int sig, siginfo_t *si, void *ctx)
{
	char msg[160], num[24];
	size_t len = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)ctx;
	sb_cat(msg, &len, sizeof(msg), "cdsgate sandbox: profile ");
	sb_cat(msg, &len, sizeof(msg), sb_active);
	sb_cat(msg, &len, sizeof(msg), " does not allow syscall ");
	num[sb_utoa(num, (unsigned long)(nr < 0 ? 0 : nr))] = '\0';
	sb_cat(msg, &len, sizeof(msg), num);
	if (nr >= 0 && nr < SANDBOX_MAX_NR && sb_names[nr] != NULL) {
		sb_cat(msg, &len, sizeof(msg), " (");
		sb_cat(msg, &len, sizeof(msg), sb_names[nr]);
		sb_cat(msg, &len, sizeof(msg), ")");
	}
	sb_cat(msg, &len, sizeof(msg), "\n");
	if (write(STDERR_FILENO, msg, len) < 0) {
		/* nothing left to tell */
	}
	_exit(SANDBOX_DEBUG_EXIT);
}

/* Debug mode: the SIGSYS handler and the syscall names it prints. */
static int
sb_debug_prepare(const char *profile, char *err, size_t errlen)
{
	struct sigaction sa;
	sigset_t set;
	int nr;

	sb_active = profile;
	for (nr = 0; nr < SANDBOX_MAX_NR; nr++)
		if (sb_names[nr] == NULL)
			sb_names[nr] = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, nr);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sb_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	if (sigaction(SIGSYS, &sa, NULL) != 0 ||
	    sigprocmask(SIG_UNBLOCK, &set, NULL) != 0) {
		sb_err(err, errlen, "SIGSYS handler: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* One rule; libseccomp's negative errno becomes the message. */
static int
sb_add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned ncmp,
    const struct scmp_arg_cmp *cmp, char *err, size_t errlen)
{
	int r = seccomp_rule_add_array(ctx, action, nr, ncmp, cmp);
	char *name;

	if (r == 0)
		return 0;
	name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	sb_err(err, errlen, "seccomp rule for %s (%d): %s",
	    name != NULL ? name : "?", nr, strerror(-r));
	free(name);
	return -1;
}

/* The plain, argument-checked and errno rules of one profile. */
static int
sb_add_rules(scmp_filter_ctx ctx, const struct sandbox_rules *p, char *err,
    size_t errlen)
{
	struct scmp_arg_cmp c;
	size_t i;

	for (i = 0; i < p->nallow; i++)
		if (sb_add(ctx, SCMP_ACT_ALLOW, p->allow[i], 0, NULL, err,
		    errlen) != 0)
			return -1;
	for (i = 0; i < p->nchecked; i++) {
		const struct sandbox_argrule *a = &p->checked[i];

		c = (struct scmp_arg_cmp){ (unsigned)a->arg,
		    SCMP_CMP_MASKED_EQ, a->mask, a->val };
		if (sb_add(ctx, SCMP_ACT_ALLOW, a->nr, 1, &c, err,
		    errlen) != 0)
			return -1;
	}
	for (i = 0; i < p->ndeny; i++) {
		const struct sandbox_errno *d = &p->deny[i];

		c = d->mask == 0 ? (struct scmp_arg_cmp){ (unsigned)d->arg,
		    SCMP_CMP_EQ, d->val, 0 } : (struct scmp_arg_cmp){
		    (unsigned)d->arg, SCMP_CMP_MASKED_EQ, d->mask, d->val };
		if (sb_add(ctx, SCMP_ACT_ERRNO((uint32_t)d->err), d->nr,
		    d->arg == SANDBOX_ANY_ARG ? 0 : 1, &c, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* Rules about ourselves: the pid, tid and ids are known only now. */
static int
sb_add_self(scmp_filter_ctx ctx, unsigned flags, char *err, size_t errlen)
{
	const scmp_datum_t pid = (scmp_datum_t)getpid(), all = 0xffffffffUL,
	    tid = (scmp_datum_t)syscall(__NR_gettid),
	    uid = (scmp_datum_t)getuid(), gid = (scmp_datum_t)getgid();
	struct scmp_arg_cmp c[3];

	c[0] = SCMP_A0(SCMP_CMP_EQ, pid);
	if ((flags & SANDBOX_SIGNAL_SELF) &&
	    (sb_add(ctx, SCMP_ACT_ALLOW, __NR_tgkill, 1, c, err, errlen) ||
	    sb_add(ctx, SCMP_ACT_ALLOW, __NR_kill, 1, c, err, errlen)))
		return -1;
	if ((flags & SANDBOX_AFFINITY_SELF) && sb_add(ctx, SCMP_ACT_ALLOW,
	    __NR_sched_setaffinity, 1, c, err, errlen))
		return -1;
	c[0] = SCMP_A0(SCMP_CMP_EQ, tid);
	if ((flags & SANDBOX_SIGNAL_SELF) &&
	    sb_add(ctx, SCMP_ACT_ALLOW, __NR_tkill, 1, c, err, errlen))
		return -1;
	if (!(flags & SANDBOX_IDS_SELF))
		return 0;
	c[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, all, uid);
	if (sb_add(ctx, SCMP_ACT_ALLOW, __NR_setuid, 1, c, err, errlen))
		return -1;
	c[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, all, gid);
	if (sb_add(ctx, SCMP_ACT_ALLOW, __NR_setgid, 1, c, err, errlen))
		return -1;
	/* seteuid(uid) = setresuid(-1, uid, -1) */
	c[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, all, all);
	c[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, all, uid);
	c[2] = SCMP_A2(SCMP_CMP_MASKED_EQ, all, all);
	if (uid != 0 && sb_add(ctx, SCMP_ACT_ALLOW, __NR_setresuid, 3, c, err,
	    errlen))
		return -1;
	c[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, all, 0);
	return sb_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_setresuid, 3, c, err,
	    errlen);
}

/* The dirfd rules: each call only with its dirfd argument(s) == dirfd
 * (renameat*: old and new dir).  Without a dirfd (-1) none is added. */
static int
sb_add_dirfd(scmp_filter_ctx ctx, const struct sandbox_rules *p, int dirfd,
    char *err, size_t errlen)
{
	const scmp_datum_t all = 0xffffffffUL, fd = (scmp_datum_t)dirfd;
	struct scmp_arg_cmp c[2];
	size_t i;
	int nr;

	c[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, all, fd);
	c[1] = SCMP_A2(SCMP_CMP_MASKED_EQ, all, fd);
	for (i = 0; dirfd >= 0 && i < p->ndirfd_calls; i++) {
		nr = p->dirfd_calls[i];
		if (sb_add(ctx, SCMP_ACT_ALLOW, nr, nr == __NR_renameat ||
		    nr == __NR_renameat2 ? 2 : 1, c, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* Build the filter for p and load it into this thread. */
static int
sb_load(const struct sandbox_rules *p, int dirfd, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int r = -1, e;

	/* A deny-list allows by default, in debug mode too. */
	ctx = seccomp_init(p->deny_list ? SCMP_ACT_ALLOW : sb_debug ?
	    SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL) {
		sb_err(err, errlen, "seccomp_init failed");
		return -1;
	}
	if ((e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) != 0) {
		sb_err(err, errlen, "seccomp bad-arch action: %s",
		    strerror(-e));
		goto out;
	}
	if (sb_add_rules(ctx, p, err, errlen) != 0)
		goto out;
	if (sb_add_self(ctx, p->flags, err, errlen) != 0 ||
	    sb_add_dirfd(ctx, p, dirfd, err, errlen) != 0)
		goto out;
	if ((e = seccomp_load(ctx)) != 0) {
		sb_err(err, errlen, "seccomp_load (%s): %s", p->name,
		    strerror(-e));
		goto out;
	}
	r = 0;
out:
	seccomp_release(ctx);
	return r;
}

/* sandbox_enter and sandbox_enter_fd (dirfd -1: no dirfd rules). */
static int
sb_enter(enum sandbox_profile profile, int dirfd, char *err, size_t errlen)
{
	const struct sandbox_rules *p = sandbox_rules(profile);

	if (p == NULL) {
		sb_err(err, errlen, "unknown sandbox profile %d", (int)profile);
		return -1;
	}
	if (!sb_inited) {
		sb_err(err, errlen, "sandbox_enter(%s) before sandbox_init",
		    p->name);
		return -1;
	}
	if (sb_mode == SANDBOX_MODE_NONE)
		return 0;
	/* confine_apply sets it one step before (the filter may only be
	   loaded unprivileged with it). */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		sb_err(err, errlen, "no-new-privs is not set (confine_apply "
		    "sets it before the filter)");
		return -1;
	}
	if (sb_debug && sb_debug_prepare(p->name, err, errlen) != 0)
		return -1;
	/* glibc reads /etc/localtime at the first localtime(): now, while
	   it still may. */
	tzset();
	return sb_load(p, dirfd, err, errlen);
}

int
sandbox_enter(enum sandbox_profile profile, char *err, size_t errlen)
{
	return sb_enter(profile, -1, err, errlen);
}

int
sandbox_enter_fd(enum sandbox_profile profile, int dirfd, char *err,
    size_t errlen)
{
	if (dirfd < 0) {
		sb_err(err, errlen, "sandbox_enter_fd: no directory fd");
		return -1;
	}
	return sb_enter(profile, dirfd, err, errlen);
}

#else /* !HAVE_SECCOMP */

int
sandbox_enter(enum sandbox_profile profile, char *err, size_t errlen)
{
	if (sandbox_rules(profile) == NULL) {
		sb_err(err, errlen, "unknown sandbox profile %d", (int)profile);
		return -1;
	}
	if (!sb_inited) {
		sb_err(err, errlen, "sandbox_enter before sandbox_init");
		return -1;
	}
	return 0;	/* sandbox_init refused SECCOMP: mode is NONE */
}

int
sandbox_enter_fd(enum sandbox_profile profile, int dirfd, char *err,
    size_t errlen)
{
	(void)dirfd;
	return sandbox_enter(profile, err, errlen);
}

#endif /* HAVE_SECCOMP */
