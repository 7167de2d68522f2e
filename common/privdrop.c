/*
 * common/privdrop.c — looking up the session users and dropping to them.
 *
 * Runs in the supervisor (root) and in its children between fork() and
 * exec()/worker_main().  No untrusted input: only the passwd/group
 * databases.  Checks are paranoid on purpose: a half-dropped child that
 * can regain root is worse than no session.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/privdrop.h"

int
privdrop_require_root(char *msg, size_t msglen)
{
	if (getuid() == 0 && geteuid() == 0)
		return 0;
	snprintf(msg, msglen,
	    "must run as root: the supervisor binds the port, sets up the "
	    "browser's mount namespace and starts each child as its own "
	    "user (%s, %s); it never runs a session with fewer guarantees",
	    PRIVDROP_WORKER_USER, PRIVDROP_BROWSER_USER);
	return -1;
}

int
privdrop_lookup(const char *name, const struct privdrop_user *other,
    struct privdrop_user *u, char *msg, size_t msglen)
{
	struct passwd *pw;

	memset(u, 0, sizeof(*u));
	errno = 0;
	if ((pw = getpwnam(name)) == NULL) {
		snprintf(msg, msglen,
		    "system user '%s' does not exist (create it: useradd "
		    "--system --user-group --no-create-home --shell "
		    "/usr/sbin/nologin %s; ./dev does this)", name, name);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		snprintf(msg, msglen, "user '%s' has uid %u gid %u; it must "
		    "not be root or in group 0", name, (unsigned)pw->pw_uid,
		    (unsigned)pw->pw_gid);
		return -1;
	}
	if (other != NULL && (pw->pw_uid == other->uid ||
	    pw->pw_gid == other->gid)) {
		snprintf(msg, msglen, "users '%s' and '%s' share a uid or gid; "
		    "each role needs its own", name, other->name);
		return -1;
	}
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return 0;
}

#define FAIL(step)	do { *what = (step); return -1; } while (0)

int
privdrop_to(const struct privdrop_user *u, const char **what)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[1];

	/* Supplementary groups first: they can only be dropped as root. */
	if (setgroups(0, NULL) != 0)
		FAIL("setgroups");
	if (setresgid(u->gid, u->gid, u->gid) != 0)
		FAIL("setresgid");
	if (setresuid(u->uid, u->uid, u->uid) != 0)
		FAIL("setresuid");

	/* Prove it: every id is the target and none can be regained. */
	if (getresgid(&rg, &eg, &sg) != 0 || rg != u->gid || eg != u->gid ||
	    sg != u->gid)
		FAIL("getresgid check");
	if (getresuid(&ru, &eu, &su) != 0 || ru != u->uid || eu != u->uid ||
	    su != u->uid)
		FAIL("getresuid check");
	if (getgroups(1, groups) != 0)
		FAIL("getgroups check");
	if (setuid(0) != -1 || seteuid(0) != -1)
		FAIL("setuid(0) succeeded");
	if (setgid(0) != -1 || setegid(0) != -1)
		FAIL("setgid(0) succeeded");
	errno = 0;
	return 0;
}
