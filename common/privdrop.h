/*
 * common/privdrop.h — the system users a session's children run as, and
 * the one-way drop to them.
 *
 * The supervisor runs as root (it binds the port, writes the session
 * directory, sets up the browser's mount namespace) and nothing else of
 * the session does: each child drops to its role's user right after
 * fork(), before it touches any untrusted input or execs anything.
 *
 *   cdsgate          the worker (RFB, untrusted network input) and Xvfb;
 *                    also the CLI's deid worker (untrusted CSV) when the
 *                    CLI runs as root (cli/deid-worker.c)
 *   cdsgate-browser  Chromium (renders the research data)
 *
 * The supervisor runs as root only, refusing to start otherwise (fail
 * closed).
 */
#ifndef COMMON_PRIVDROP_H
#define COMMON_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

#define PRIVDROP_WORKER_USER	"cdsgate"
#define PRIVDROP_BROWSER_USER	"cdsgate-browser"
/* The daemon's children (docs/processes.md): the admin API and the audit
 * key holder; and the groups whose members may ask the API for things. */
#define PRIVDROP_API_USER	"cdsgate-api"
#define PRIVDROP_AUDIT_USER	"cdsgate-audit"
#define PRIVDROP_CUSTODIAN_GROUP	"cdsgate-custodian"
#define PRIVDROP_AUDITOR_GROUP	"cdsgate-auditor"

struct privdrop_user {
	char	name[32];
	uid_t	uid;
	gid_t	gid;
};

/*
 * Look up a system user; refuse root, uid/gid 0, and a user that shares
 * its uid or gid with `other` (may be NULL).  Fills msg on failure.
 */
int	privdrop_lookup(const char *name, const struct privdrop_user *other,
	    struct privdrop_user *u, char *msg, size_t msglen);

/* 0 when we are (real and effective) root, else -1 and a message. */
int	privdrop_require_root(char *msg, size_t msglen);

/*
 * In a child: drop all groups, then gid, then uid (real, effective and
 * saved), and prove it cannot be undone: setuid(0)/setgid(0) must fail
 * and getres[ug]id/getgroups must show only the target.  Returns 0, or
 * -1 with errno and *what naming the step that failed; the caller must
 * not go on (it _exits).
 */
int	privdrop_to(const struct privdrop_user *u, const char **what);

#endif
