/*
 * policy/paths.c — can the daemon's processes use the places its config
 * names?  (policy/paths.h: which user uses which path, and how it is
 * judged.)  Trusted input: the operator's config, already parsed.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/privdrop.h"
#include "policy/paths.h"

#define PATHS_MAX_GROUPS	64

enum { P_R = 4, P_W = 2, P_X = 1 };

/* Who a check is for: uid, primary and supplementary groups. */
struct paths_user {
	const char	*name;
	uid_t		 uid;
	gid_t		 groups[PATHS_MAX_GROUPS];
	int		 ngroups;
};

struct paths_ctx {
	struct paths_problem	*out;
	size_t			 max, n;
};

static int
user_load(const char *name, struct paths_user *u)
{
	struct passwd *pw = getpwnam(name);

	if (pw == NULL)
		return -1;
	u->name = name;
	u->uid = pw->pw_uid;
	u->ngroups = PATHS_MAX_GROUPS;
	if (getgrouplist(name, pw->pw_gid, u->groups, &u->ngroups) < 0)
		u->ngroups = 0;		/* too many: the primary alone */
	if (u->ngroups == 0) {
		u->groups[0] = pw->pw_gid;
		u->ngroups = 1;
	}
	return 0;
}

/* The rwx bits st grants u, as the kernel picks them (owner, else group,
 * else other; no capability overrides). */
static int
bits_for(const struct paths_user *u, const struct stat *st)
{
	int i;

	if (st->st_uid == u->uid)
		return (st->st_mode >> 6) & 7;
	for (i = 0; i < u->ngroups; i++)
		if (u->groups[i] == st->st_gid)
			return (st->st_mode >> 3) & 7;
	return st->st_mode & 7;
}

/* Record "msg (owner ..., mode ...)" for key, as long as out has room. */
static void
problem(struct paths_ctx *c, const char *key, const char *msg,
    const struct stat *st)
{
	struct paths_problem *p;

	if (c->n++ >= c->max)
		return;
	p = &c->out[c->n - 1];
	snprintf(p->key, sizeof(p->key), "%s", key);
	if (st == NULL)
		snprintf(p->msg, sizeof(p->msg), "%s", msg);
	else
		snprintf(p->msg, sizeof(p->msg), "%.240s (owner uid %u, group "
		    "%u, mode %04o)", msg, (unsigned)st->st_uid,
		    (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
}

/* "read", "create files in"...: what u could not do, in words. */
static const char *
verb_of(int want, int is_dir)
{
	if (is_dir && (want & P_W))
		return "create files in";
	if (want == P_X)
		return "enter";
	if ((want & (P_R | P_W)) == (P_R | P_W))
		return "read and write";
	return (want & P_W) ? "write" : "read";
}

/* Every directory above path (not path itself) is searchable by u. */
static int
ancestors_ok(struct paths_ctx *c, const char *key, const char *path,
    const struct paths_user *u)
{
	char dir[CONFIG_STR_MAX];
	struct stat st;
	size_t i;

	for (i = 1; path[i] != '\0'; i++) {
		if (path[i] != '/')
			continue;
		memcpy(dir, path, i);
		dir[i] = '\0';
		if (stat(dir, &st) != 0)
			return 0;	/* judged by the caller */
		if (!(bits_for(u, &st) & P_X)) {
			char msg[PATHS_MSG_MAX];

			snprintf(msg, sizeof(msg), "%.200s: %s cannot enter it",
			    dir, u->name);
			problem(c, key, msg, &st);
			return -1;
		}
	}
	return 0;
}

/* path grants u all of `want`; a missing path is a problem unless
 * `made` (then its nearest existing ancestor must take a new entry). */
static void
need(struct paths_ctx *c, const char *key, const char *path,
    const struct paths_user *u, int want, int made)
{
	char dir[CONFIG_STR_MAX], msg[PATHS_MSG_MAX];
	struct stat st;
	char *slash;

	if (path[0] != '/') {
		snprintf(msg, sizeof(msg), "%.200s: not an absolute path", path);
		return problem(c, key, msg, NULL);
	}
	if (ancestors_ok(c, key, path, u) != 0)
		return;
	if (stat(path, &st) != 0) {
		if (errno == EACCES)	/* we may not look; its user may */
			return;
		snprintf(msg, sizeof(msg), "%.200s: %s", path, strerror(errno));
		if (errno != ENOENT || !made)
			return problem(c, key, msg, NULL);
		snprintf(dir, sizeof(dir), "%s", path);
		while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
			*slash = '\0';
			if (stat(dir, &st) == 0)
				return need(c, key, dir, u, P_W | P_X, 0);
		}
		return need(c, key, "/", u, P_W | P_X, 0);
	}
	if ((bits_for(u, &st) & want) == want)
		return;
	snprintf(msg, sizeof(msg), "%.200s: %s cannot %s it", path, u->name,
	    verb_of(want, S_ISDIR(st.st_mode)));
	problem(c, key, msg, &st);
}

/* The directory a file lives in (the file may not exist yet). */
static void
need_file(struct paths_ctx *c, const char *key, const char *file,
    const struct paths_user *u, int want)
{
	char dir[CONFIG_STR_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	if ((slash = strrchr(dir, '/')) == NULL)
		return need(c, key, file, u, want, 0);	/* says: not absolute */
	*slash = '\0';
	need(c, key, dir[0] != '\0' ? dir : "/", u, P_W | P_X, 0);
	if (want != 0 && stat(file, &st) == 0)
		need(c, key, file, u, want, 0);
}

int
paths_check(const struct gw_config *cfg, int split,
    struct paths_problem *out, size_t max)
{
	struct paths_ctx c = { out, max, 0 };
	struct paths_user api, audit, root;

	if (user_load(PRIVDROP_API_USER, &api) != 0 ||
	    user_load(PRIVDROP_AUDIT_USER, &audit) != 0 ||
	    user_load("root", &root) != 0) {
		problem(&c, "", "system user " PRIVDROP_API_USER " or "
		    PRIVDROP_AUDIT_USER " is missing (sysusers.d cdsgate.conf, "
		    "or ./dev build)", NULL);
		return -1;
	}
	need_file(&c, "store", cfg->store, &api, P_R | P_W);
	need(&c, "state_dir", cfg->state_dir, &api, P_W | P_X, 0);
	if (cfg->mount_dir[0] != '\0')
		need(&c, "mount_dir", cfg->mount_dir, &api, P_W | P_X, 0);
	need_file(&c, "audit_log", cfg->audit_log, &audit, P_R | P_W);
	need(&c, "audit_key", cfg->audit_key, &audit, P_R, 0);
	need(&c, "record_dir", cfg->record_dir, &root, P_W | P_X, 1);
	if (!split)
		need(&c, "secrets_dir", cfg->secrets_dir, &root, P_W | P_X, 1);
	need_file(&c, "socket", cfg->socket, &root, 0);
	if (strcmp(cfg->session_runner, "slurm") == 0) {
		need(&c, "munge_socket", cfg->munge_socket, &root, P_W, 0);
		if (cfg->slurm_conf[0] != '\0')
			need(&c, "slurm_conf", cfg->slurm_conf, &root, P_R, 0);
	}
	return (int)c.n;
}
