/*
 * sandbox/confine.c — confine_apply(): the one confinement sequence of
 * every cdsgate process (the order and the fields: sandbox/confine.h).
 *
 * Trust: runs in the process being confined, before its untrusted input;
 * the description comes from static tables and the operator's options.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox/confine.h"

static const char *const step_names[] = {
	[CONFINE_OK] = "ok",
	[CONFINE_ERR_INVALID] = "description",
	[CONFINE_ERR_RLIMIT] = "rlimit",
	[CONFINE_ERR_USER] = "user",
	[CONFINE_ERR_CHDIR] = "chdir",
	[CONFINE_ERR_NO_NEW_PRIVS] = "no-new-privs",
	[CONFINE_ERR_DEATHSIG] = "death signal",
	[CONFINE_ERR_PARENT] = "parent",
	[CONFINE_ERR_DUMPABLE] = "non-dumpable",
	[CONFINE_ERR_FILTER] = "filter",
};

const char *
confine_step_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(step_names) /
	    sizeof(step_names[0]))
		return "unknown";
	return step_names[code];
}

/* "STEP: detail"; returns code.  Not the name: whoever logs or reports
 * the error names the process (the logger in each line, a parent in its
 * report of a child). */
static int
cf_fail(int code, char *err, size_t errlen,
    const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", confine_step_name(code),
		    detail);
	return code;
}

void
confine_init(struct confine *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->profile = CONFINE_NO_PROFILE;
	c->dirfd = -1;
}

int
confine_rlimit(struct confine *c, int resource, rlim_t limit)
{
	if (c->nrlimit >= CONFINE_RLIMITS_MAX)
		return CONFINE_ERR_INVALID;
	c->rlimit[c->nrlimit].resource = resource;
	c->rlimit[c->nrlimit].limit = limit;
	c->nrlimit++;
	return CONFINE_OK;
}

/* Step 1: lower each limit (soft = hard), never above the hard one. */
static int
cf_rlimits(const struct confine *c, char *err, size_t errlen)
{
	struct rlimit cur, rl;
	size_t i;

	for (i = 0; i < c->nrlimit; i++) {
		const struct confine_rlimit *l = &c->rlimit[i];

		if (getrlimit(l->resource, &cur) != 0)
			return cf_fail(CONFINE_ERR_RLIMIT, err, errlen,
			    "resource %d: %s", l->resource, strerror(errno));
		rl.rlim_cur = rl.rlim_max = l->limit < cur.rlim_max ?
		    l->limit : cur.rlim_max;
		if (setrlimit(l->resource, &rl) != 0)
			return cf_fail(CONFINE_ERR_RLIMIT, err, errlen,
			    "resource %d: %s", l->resource, strerror(errno));
	}
	return CONFINE_OK;
}

/* Steps 2 and 3: the user, then the directory as that user. */
static int
cf_user_dir(const struct confine *c, char *err, size_t errlen)
{
	const char *what = "?";

	if (c->user != NULL && privdrop_to(c->user, &what) != 0)
		return cf_fail(CONFINE_ERR_USER, err, errlen, "%s: %s: %s",
		    c->user->name, what, strerror(errno));
	if (c->dir != NULL && chdir(c->dir) != 0)
		return cf_fail(CONFINE_ERR_CHDIR, err, errlen, "%s: %s",
		    c->dir, strerror(errno));
	return CONFINE_OK;
}

/* Steps 4 to 6: the prctls, and the parent still being there. */
static int
cf_prctls(const struct confine *c, char *err, size_t errlen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return cf_fail(CONFINE_ERR_NO_NEW_PRIVS, err, errlen, "%s",
		    strerror(errno));
	if (c->deathsig != 0 &&
	    prctl(PR_SET_PDEATHSIG, c->deathsig, 0, 0, 0) != 0)
		return cf_fail(CONFINE_ERR_DEATHSIG, err, errlen,
		    "signal %d: %s", c->deathsig, strerror(errno));
	if (c->parent > 0 && getppid() != c->parent)
		return cf_fail(CONFINE_ERR_PARENT, err, errlen,
		    "pid %d exited before the death signal was armed",
		    (int)c->parent);
	if (!c->dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return cf_fail(CONFINE_ERR_DUMPABLE, err, errlen, "%s",
		    strerror(errno));
	return CONFINE_OK;
}

/* Step 7: the profile's seccomp filter (with its dirfd, if any). */
static int
cf_filter(const struct confine *c, char *err, size_t errlen)
{
	char serr[256];
	int r;

	if (c->profile == CONFINE_NO_PROFILE)
		return CONFINE_OK;
	if (c->profile < 0 || c->profile >= SANDBOX_PROFILE_COUNT)
		return cf_fail(CONFINE_ERR_FILTER, err, errlen,
		    "unknown profile %d", c->profile);
	r = c->dirfd >= 0 ? sandbox_enter_fd((enum sandbox_profile)
	    c->profile, c->dirfd, serr, sizeof(serr)) :
	    sandbox_enter((enum sandbox_profile)c->profile, serr,
	    sizeof(serr));
	if (r != 0)
		return cf_fail(CONFINE_ERR_FILTER, err, errlen, "%s", serr);
	return CONFINE_OK;
}

int
confine_apply(const struct confine *c, char *err, size_t errlen)
{
	int r;

	if (c->nrlimit > CONFINE_RLIMITS_MAX)
		return cf_fail(CONFINE_ERR_INVALID, err, errlen,
		    "%zu rlimits", c->nrlimit);
	if ((r = cf_rlimits(c, err, errlen)) != CONFINE_OK ||
	    (r = cf_user_dir(c, err, errlen)) != CONFINE_OK ||
	    (r = cf_prctls(c, err, errlen)) != CONFINE_OK)
		return r;
	return cf_filter(c, err, errlen);
}

/* Close every descriptor from lo up to hi (inclusive). */
static void
close_from(unsigned lo, unsigned hi)
{
	unsigned fd;

	if (lo > hi || close_range(lo, hi, 0) == 0)
		return;
	for (fd = lo; fd <= hi && fd < 65536; fd++)
		(void)close((int)fd);
}

int
confine_fds(int *keep, int keep_stdout, char *err, size_t errlen)
{
	int null, s = *keep;

	if (s <= 2 && (s = fcntl(s, F_DUPFD_CLOEXEC, 3)) < 0)
		goto fail;
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    (null != 0 && dup2(null, 0) < 0) ||
	    (!keep_stdout && null != 1 && dup2(null, 1) < 0))
		goto fail;
	close_from(3, (unsigned)s - 1);
	close_from((unsigned)s + 1, ~0U);
	*keep = s;
	return 0;
fail:
	snprintf(err, errlen, "descriptors: %s", strerror(errno));
	return -1;
}
