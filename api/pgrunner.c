/*
 * api/pgrunner.c — the PostgreSQL mounter process and its client side.
 *
 * Trust: the mounter takes typed, size-checked MOUNT/UNMOUNT (and a
 * session's ROLE/UNROLE) messages
 * (common/ipc.h) from the api that forked it; the api may be compromised,
 * so every string must be terminated inside its bounds, the dataset name
 * valid (pgm_dataset_valid); the CSV it reads is always
 * <released_dir>/<id>/data.csv, the dir fixed at fork.  The conninfo and reader role are fixed at fork
 * too.  It runs as the api's user with NO_NEW_PRIVS under its own filter
 * (SANDBOX_PROFILE_PGMOUNT: sockets for the server only, no exec, no
 * fork) and holds only its socketpair; what it can do in the database
 * is what the admin role may.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "api/pgrunner.h"
#include "common/ipc.h"
#include "common/log.h"
#include "common/secret.h"
#include "mount/postgres.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

enum { PR_MOUNT = 1, PR_UNMOUNT = 2, PR_DONE = 3, PR_ROLE = 4,
    PR_UNROLE = 5, PR_ROLE_DONE = 6 };

struct pr_req {
	char		dataset[PGM_DATASET_MAX + 1];	/* its name */
	int64_t		version;	/* MOUNT only */
	int64_t		id;		/* its schema; MOUNT:
					   <released_dir>/<id>/data.csv */
};

struct pr_done {
	int32_t		status;		/* PGM_* */
	char		err[PGRUNNER_ERR_MAX];
};

/* A session's reader role: made for one mounted dataset, dropped. */
struct pr_role {
	char		session[PGRUNNER_SESSION_MAX];
	char		dataset[PGM_DATASET_MAX + 1];	/* ROLE only */
	int64_t		id;				/* ROLE only */
	int64_t		until;				/* ROLE only */
};

struct pr_role_done {
	int32_t		status;		/* PGM_* */
	char		err[PGRUNNER_ERR_MAX];
	char		role[PGRUNNER_SESSION_MAX + 8];
	char		password[PGRUNNER_PASSWORD_MAX];
};

static const struct ipc_type pr_types[] = {
	{ PR_MOUNT, sizeof(struct pr_req), 0, "mount" },
	{ PR_UNMOUNT, sizeof(struct pr_req), 0, "unmount" },
	{ PR_DONE, sizeof(struct pr_done), 0, "done" },
	{ PR_ROLE, sizeof(struct pr_role), 0, "session role" },
	{ PR_UNROLE, sizeof(struct pr_role), 0, "drop session role" },
	{ PR_ROLE_DONE, sizeof(struct pr_role_done), 0, "role done" },
};
static const struct ipc_proto pr_proto = { pr_types, 6 };

/* ---- the mounter ---- */

/* The api's pid, set before the fork: the mounter dies with it. */
static pid_t	pr_api;

struct pr_state {
	const struct pgrunner_conf	*conf;
	int				 sock;
};

/* The request's fields, checked; -1 ends the mounter. */
static int
pr_fields(const struct ipc_msg *m, char *ds)
{
	const struct pr_req *q = (const struct pr_req *)m->data;

	if (ipc_str_get(ds, PGM_DATASET_MAX + 1, q->dataset,
	    sizeof(q->dataset)) != 0 || !pgm_dataset_valid(ds))
		return -1;
	if (q->id < 1 || (m->t->type == PR_MOUNT && q->version < 1))
		return -1;
	return 0;
}

/* MOUNT or UNMOUNT: do it, answer DONE. */
static int
pr_on_req(void *ctx, struct ipc_msg *m)
{
	static struct pr_done d;
	struct pr_state *st = ctx;
	struct pg_target t = { st->conf->conninfo, st->conf->reader_role, 0 };
	const struct pr_req *q = (const struct pr_req *)m->data;
	char name[PGM_DATASET_MAX + 1], path[PATH_MAX];
	struct pgm_ds ds = { q->id, name };

	if (pr_fields(m, name) != 0)
		return -1;
	memset(&d, 0, sizeof(d));
	if (m->t->type == PR_UNMOUNT)
		d.status = pg_unmount(&t, &ds, d.err, sizeof(d.err));
	else if (snprintf(path, sizeof(path), "%s/%lld/data.csv",
	    st->conf->released_dir, (long long)q->id) >= (int)sizeof(path))
		d.status = PGM_EINPUT;
	else
		d.status = pg_mount(&t, &ds, q->version, path, NULL, 0, d.err,
		    sizeof(d.err));
	return ipc_send(st->sock, &pr_proto, PR_DONE, &d, sizeof(d), -1) ==
	    IPC_OK ? 0 : -1;
}

/* ROLE: a new role with a fresh password (the answer carries both);
 * UNROLE: drop it.  The session id is checked by the library. */
static int
pr_on_role(void *ctx, struct ipc_msg *m)
{
	static struct pr_role_done d;
	struct pr_state *st = ctx;
	struct pg_target t = { st->conf->conninfo, st->conf->reader_role, 0 };
	const struct pr_role *q = (const struct pr_role *)m->data;
	char session[PGRUNNER_SESSION_MAX], name[PGM_DATASET_MAX + 1];
	struct pgm_ds ds = { q->id, name };
	int rc;

	if (ipc_str_get(session, sizeof(session), q->session,
	    sizeof(q->session)) != 0 || (m->t->type == PR_ROLE &&
	    (ipc_str_get(name, sizeof(name), q->dataset, sizeof(q->dataset))
	    != 0 || !pgm_ds_valid(&ds) || q->until < 1)))
		return -1;
	memset(&d, 0, sizeof(d));
	if (m->t->type == PR_UNROLE)
		d.status = pg_session_role_drop(&t, session, d.err,
		    sizeof(d.err));
	else if (secret_text(d.password, 32) != 0)
		d.status = PGM_ENOMEM;
	else
		d.status = pg_session_role_create(&t, session, &ds, q->until,
		    d.password, d.role, sizeof(d.role), d.err, sizeof(d.err));
	if (d.status != PGM_OK)
		explicit_bzero(d.password, sizeof(d.password));
	rc = ipc_send(st->sock, &pr_proto, PR_ROLE_DONE, &d, sizeof(d), -1);
	explicit_bzero(&d, sizeof(d));
	return rc == IPC_OK ? 0 : -1;
}

static const struct ipc_handler pr_from_api[] = {
	{ PR_MOUNT, pr_on_req },
	{ PR_UNMOUNT, pr_on_req },
	{ PR_ROLE, pr_on_role },
	{ PR_UNROLE, pr_on_role },
};

/* What libpq would otherwise load lazily under the filter (which
 * forbids executable mappings): the passwd lookup (NSS modules) and
 * OpenSSL's initialisation (TLS to the server). */
static void
pr_warm_up(void)
{
	struct passwd pw, *res;
	char buf[4096];

	getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res);
	OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
}

static void __attribute__((noreturn))
pr_main(int sock, const struct pgrunner_conf *conf)
{
	struct ipc_peer peer = { sock, "api", &pr_proto, pr_from_api, 4 };
	struct pr_state st = { conf, sock };
	struct confine c;
	char err[256];
	int rc;

	log_init("cdsgated api: postgres mounter");
	/* libpq writes to a closed server connection: an error, not death */
	signal(SIGPIPE, SIG_IGN);
	pr_warm_up();
	confine_init(&c, "postgres mounter");
	c.deathsig = SIGKILL;
	c.parent = pr_api;	/* the api, which must still be there */
	c.profile = SANDBOX_PROFILE_PGMOUNT;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		fatalx("sandbox: %s", err);
	log_info("reader role %s, sandbox %s, profile %s", conf->reader_role,
	    sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_PGMOUNT));
	while ((rc = ipc_dispatch(&peer, &st, NULL)) == IPC_OK)
		;
	if (rc != IPC_EOF)
		fatalx("the api broke the protocol (%s)", ipc_strerror(rc));
	_exit(0);
}

/* ---- the api's side ---- */

/* The helper's side of ipc_helper_start(). */
static void
pr_child(int sock, void *arg)
{
	char err[128];

	/* none of the api's descriptors (its listening sockets, the key
	   holder's socket) outlive the api in this child */
	if (confine_fds(&sock, 0, err, sizeof(err)) != 0)
		fatalx("%s", err);
	pr_main(sock, arg);
}

int
pgrunner_start(const struct pgrunner_conf *conf, struct pgrunner *pr,
    char *err, size_t errlen)
{
	char why[256];

	pr_api = getpid();
	if (ipc_helper_start(pr_child, (void *)conf, &pr->pid, &pr->sock,
	    why, sizeof(why)) != 0)
		return snprintf(err, errlen, "postgres mounter: %s", why), -1;
	return 0;
}

static int
pr_on_done(void *ctx, struct ipc_msg *m)
{
	memcpy(ctx, m->data, sizeof(struct pr_done));
	return 0;
}

static int
pr_on_role_done(void *ctx, struct ipc_msg *m)
{
	memcpy(ctx, m->data, sizeof(struct pr_role_done));
	return 0;
}

static const struct ipc_handler pr_from_runner[] = {
	{ PR_DONE, pr_on_done },
};

static const struct ipc_handler pr_roles_from_runner[] = {
	{ PR_ROLE_DONE, pr_on_role_done },
};

/* Send one request, wait for its DONE. */
static int
pr_call(struct pgrunner *pr, uint32_t type, const struct pr_req *q,
    char *err, size_t errlen)
{
	struct ipc_peer peer = { pr->sock, "postgres mounter", &pr_proto,
	    pr_from_runner, 1 };
	static struct pr_done d;

	if (pr->sock < 0)
		return snprintf(err, errlen, "no PostgreSQL backend is "
		    "configured (pg_conninfo)"), -1;
	memset(&d, 0, sizeof(d));
	if (ipc_send(pr->sock, &pr_proto, type, q, sizeof(*q), -1) !=
	    IPC_OK || ipc_dispatch(&peer, &d, NULL) != IPC_OK)
		return snprintf(err, errlen, "the postgres mounter is gone or "
		    "broke the protocol"), -1;
	d.err[sizeof(d.err) - 1] = '\0';
	snprintf(err, errlen, "%s", d.err);
	return d.status;
}

int
pgrunner_mount(struct pgrunner *pr, const char *dataset, int64_t id,
    int64_t v, char *err, size_t errlen)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	if (strlen(dataset) >= sizeof(q.dataset))
		return snprintf(err, errlen, "name too long"), PGM_EINPUT;
	memcpy(q.dataset, dataset, strlen(dataset));
	q.id = id;
	q.version = v;
	return pr_call(pr, PR_MOUNT, &q, err, errlen);
}

int
pgrunner_unmount(struct pgrunner *pr, const char *dataset, int64_t id,
    char *err, size_t errlen)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	if (strlen(dataset) >= sizeof(q.dataset))
		return snprintf(err, errlen, "name too long"), PGM_EINPUT;
	memcpy(q.dataset, dataset, strlen(dataset));
	q.id = id;
	return pr_call(pr, PR_UNMOUNT, &q, err, errlen);
}

/* Send one role request, wait for its ROLE_DONE into d. */
static int
pr_role_call(struct pgrunner *pr, uint32_t type, const struct pr_role *q,
    struct pr_role_done *d, char *err, size_t errlen)
{
	struct ipc_peer peer = { pr->sock, "postgres mounter", &pr_proto,
	    pr_roles_from_runner, 1 };

	memset(d, 0, sizeof(*d));
	if (pr->sock < 0)
		return snprintf(err, errlen, "no PostgreSQL backend is "
		    "configured (pg_conninfo)"), -1;
	if (ipc_send(pr->sock, &pr_proto, type, q, sizeof(*q), -1) !=
	    IPC_OK || ipc_dispatch(&peer, d, NULL) != IPC_OK)
		return snprintf(err, errlen, "the postgres mounter is gone or "
		    "broke the protocol"), -1;
	d->err[sizeof(d->err) - 1] = '\0';
	d->role[sizeof(d->role) - 1] = '\0';
	d->password[sizeof(d->password) - 1] = '\0';
	snprintf(err, errlen, "%s", d->err);
	return d->status;
}

int
pgrunner_session_role(struct pgrunner *pr, const char *session,
    const char *dataset, int64_t id, int64_t until, char *role, size_t rolelen,
    char *password, size_t pwlen, char *err, size_t errlen)
{
	static struct pr_role_done d;
	struct pr_role q;
	int rc;

	memset(&q, 0, sizeof(q));
	if (strlen(session) >= sizeof(q.session) ||
	    strlen(dataset) >= sizeof(q.dataset))
		return snprintf(err, errlen, "name too long"), PGM_EINPUT;
	memcpy(q.session, session, strlen(session));
	memcpy(q.dataset, dataset, strlen(dataset));
	q.id = id;
	q.until = until;
	rc = pr_role_call(pr, PR_ROLE, &q, &d, err, errlen);
	if (rc == PGM_OK && (strlen(d.role) >= rolelen ||
	    strlen(d.password) >= pwlen))
		rc = PGM_EINPUT;
	if (rc == PGM_OK) {
		snprintf(role, rolelen, "%s", d.role);
		snprintf(password, pwlen, "%s", d.password);
	}
	explicit_bzero(&d, sizeof(d));
	return rc;
}

int
pgrunner_session_unrole(struct pgrunner *pr, const char *session,
    char *err, size_t errlen)
{
	struct pr_role_done d;
	struct pr_role q;

	memset(&q, 0, sizeof(q));
	if (strlen(session) >= sizeof(q.session))
		return snprintf(err, errlen, "name too long"), PGM_EINPUT;
	memcpy(q.session, session, strlen(session));
	return pr_role_call(pr, PR_UNROLE, &q, &d, err, errlen);
}

void
pgrunner_stop(struct pgrunner *pr)
{
	ipc_helper_stop(&pr->pid, &pr->sock);
}
