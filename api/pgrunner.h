/*
 * api/pgrunner.h — the PostgreSQL mounter: the one api-side process that
 * may open a connection to the analytics database.  The api (no
 * socket() under its filter) forks it before its own filter when the
 * config names a PostgreSQL backend; it answers MOUNT and UNMOUNT with
 * the mount/postgres.h status and reason.
 */
#ifndef API_PGRUNNER_H
#define API_PGRUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PGRUNNER_ERR_MAX	1024
#define PGRUNNER_SESSION_MAX	64	/* a session id, with its NUL */
#define PGRUNNER_PASSWORD_MAX	64	/* a session role's, with its NUL */

struct pgrunner {
	pid_t	pid;
	int	sock;
};

/* What the mounter is started with (it never takes these from the api
 * afterwards: a compromised api cannot point it elsewhere). */
struct pgrunner_conf {
	const char	*conninfo;	/* libpq conninfo of the admin role */
	const char	*reader_role;	/* the BI tool's login role */
	const char	*released_dir;	/* <state_dir>/released */
};

/* Fork the mounter (as the api's user, before the api's filter). */
int	pgrunner_start(const struct pgrunner_conf *conf, struct pgrunner *pr,
	    char *err, size_t errlen);
/* Mount <released_dir>/<id>/data.csv as version v of dataset id (its
 * schema) named `dataset` (its view); a PGM_* status (mount/postgres.h),
 * or -1 when there is no mounter; err says why either way. */
int	pgrunner_mount(struct pgrunner *pr, const char *dataset, int64_t id,
	    int64_t v, char *err, size_t errlen);
int	pgrunner_unmount(struct pgrunner *pr, const char *dataset, int64_t id,
	    char *err, size_t errlen);
/* The session's reader role (mount/postgres.h pg_session_role_create)
 * on the mounted dataset, valid until `until`; its name and a fresh
 * password (made by the mounter) into role and password.  A PGM_*
 * status, or -1 when there is no mounter. */
int	pgrunner_session_role(struct pgrunner *pr, const char *session,
	    const char *dataset, int64_t id, int64_t until, char *role, size_t rolelen,
	    char *password, size_t pwlen, char *err, size_t errlen);
/* Drop it (PGM_ENOTMOUNTED: there was none). */
int	pgrunner_session_unrole(struct pgrunner *pr, const char *session,
	    char *err, size_t errlen);
void	pgrunner_stop(struct pgrunner *pr);

#endif
