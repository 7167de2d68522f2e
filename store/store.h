/*
 * store/store.h — the custodian's state: recipients, datasets (with the
 * de-identification verdict that gates mounting), sessions, and the
 * index of recordings, in one SQLite file with schema migrations.
 *
 * Library code: never logs, never exits; every call returns a
 * STORE_* status and, where a buffer is passed, a message.  One
 * struct store per thread (SQLite connection).  Writes are single
 * transactions: a process killed at any point leaves either the old or
 * the new state (SQLite WAL + synchronous=FULL), and store_recover()
 * turns work that was in flight into an explicit failure.
 *
 * The gate lives here as well as in the caller: the schema's triggers
 * refuse to mark a dataset mounted unless its verdict passed, and a
 * mount names the raw file digest and job digest the verdict was for.
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION	4

enum store_status {
	STORE_OK = 0,
	STORE_ENOTFOUND,	/* no such id */
	STORE_EEXIST,		/* id already taken */
	STORE_EINVAL,		/* bad argument (empty id, too long, ...) */
	STORE_EGATE,		/* the de-identification gate refuses */
	STORE_ESTATE,		/* not allowed in the object's current state */
	STORE_ELIMIT,		/* a per-recipient limit is reached */
	STORE_ESCHEMA,		/* database from a newer cdsgate, or broken */
	STORE_EIO,		/* SQLite/disk error (full disk, locked, ...) */
	STORE_ENOTMOUNTED,	/* the dataset passed the gate, is not mounted */
	STORE_EDISABLED		/* the recipient is disabled */
};

const char	*store_strerror(int status);

struct store;

/* Open (creating if needed) and migrate to STORE_SCHEMA_VERSION. */
int	store_open(const char *path, struct store **out, char *err,
	    size_t errlen);
void	store_close(struct store *s);		/* NULL: no-op */
int	store_schema_version(struct store *s);
/* Message of the last SQLite error on this connection. */
const char *store_errmsg(struct store *s);

/*
 * After a crash: imports still "importing" become "error" (reason
 * "interrupted"), sessions still "running" become "ended" (reason
 * "daemon restarted").  *imports / *sessions (may be NULL) get counts.
 */
int	store_recover(struct store *s, int64_t now, int *imports,
	    int *sessions);

/* ---- recipients ---- */

#define STORE_ID_MAX	64		/* ids: [A-Za-z0-9._-], 1..63 chars */

struct store_recipient {
	char		id[STORE_ID_MAX];
	char		name[128];
	int64_t		created;
	int		disabled;
	unsigned	max_sessions;	/* concurrent live sessions, >= 1 */
	char		allowed_hours[256];	/* store/hours.h; "" any time */
	char		tz[64];		/* IANA zone of the hours; "UTC" */
};

int	store_id_valid(const char *id);
int	store_recipient_add(struct store *s, const struct store_recipient *r);
int	store_recipient_get(struct store *s, const char *id,
	    struct store_recipient *r);
int	store_recipient_disable(struct store *s, const char *id);
/* New allowed hours and zone (both checked: STORE_EINVAL). */
int	store_recipient_set_hours(struct store *s, const char *id,
	    const char *allowed_hours, const char *tz);
/* Calls fn for each recipient in id order; a non-zero return stops. */
int	store_recipient_list(struct store *s,
	    int (*fn)(const struct store_recipient *, void *), void *arg);

/* ---- datasets ---- */

enum store_dataset_state {
	STORE_DATASET_IMPORTING,	/* the gate is running */
	STORE_DATASET_PASSED,		/* verdict: may be mounted */
	STORE_DATASET_FAILED,		/* verdict: must never be mounted */
	STORE_DATASET_ERROR,		/* the gate could not decide */
	STORE_DATASET_MOUNTED		/* passed and mounted */
};

const char	*store_dataset_state_name(enum store_dataset_state st);

struct store_dataset {
	int64_t		id;
	char		name[128];
	char		raw_sha256[65];	/* lower-case hex */
	char		job_sha256[65];	/* digest of the canonical job spec */
	enum store_dataset_state state;
	int64_t		created, updated;
	int64_t		mount_version;	/* bumped by each mount; 0 = never */
	char		mount_backend[16];	/* "embedded"|"postgres"; "" */
	char		output_path[512];	/* the de-identified file */
	char		reason[1024];	/* why failed/error/refused */
	char		*job_spec;	/* JSON; owned, see _clear */
	char		*report;	/* JSON or NULL; owned */
};

/* Free the owned strings; the struct may then be reused. */
void	store_dataset_clear(struct store_dataset *d);

/* A new import in state "importing"; *id gets its id. */
int	store_dataset_begin(struct store *s, const char *name,
	    const char *raw_sha256, const char *job_sha256,
	    const char *job_spec, int64_t now, int64_t *id);
/* The gate's verdict: importing -> passed|failed|error. */
int	store_dataset_finish(struct store *s, int64_t id,
	    enum store_dataset_state verdict, const char *report,
	    const char *output_path, const char *reason, int64_t now);
/*
 * passed -> mounted, only when raw_sha256 and job_sha256 are the ones the
 * verdict was given for (STORE_EGATE otherwise, and for any dataset that
 * did not pass).  *version gets the new mount version.
 */
int	store_dataset_mount(struct store *s, int64_t id,
	    const char *raw_sha256, const char *job_sha256, int64_t now,
	    int64_t *version);
/* The same, into a named backend ("embedded" or "postgres"; the plain
 * call means "embedded"), remembered until the unmount. */
int	store_dataset_mount_on(struct store *s, int64_t id,
	    const char *raw_sha256, const char *job_sha256,
	    const char *backend, int64_t now, int64_t *version);
/* mounted -> passed (its live sessions are the caller's business). */
int	store_dataset_unmount(struct store *s, int64_t id, int64_t now);
/* Forget a failed import (failed or error; STORE_ESTATE otherwise): the
 * caller removes its files.  A verdict that passed is never removed. */
int	store_dataset_remove(struct store *s, int64_t id);
/* How many datasets name the upload sha256 (raw file or hierarchy):
 * a removal keeps an upload another dataset still names; -1 on error. */
int64_t	store_dataset_uses(struct store *s, const char *sha256);
int	store_dataset_get(struct store *s, int64_t id,
	    struct store_dataset *d);
int	store_dataset_list(struct store *s,
	    int (*fn)(const struct store_dataset *, void *), void *arg);

/* ---- sessions ---- */

enum store_session_state {
	STORE_SESSION_CREATED,	/* provisioned, not yet started */
	STORE_SESSION_RUNNING,
	STORE_SESSION_ENDED,	/* ended by itself: idle, duration, SIGTERM */
	STORE_SESSION_REVOKED,
	STORE_SESSION_EXPIRED,
	STORE_SESSION_FAILED	/* it ran and its host failed under it (the
				   Slurm runner: its node died) */
};

const char	*store_session_state_name(enum store_session_state st);

struct store_session {
	char		id[STORE_ID_MAX];
	char		recipient[STORE_ID_MAX];
	int64_t		dataset;
	enum store_session_state state;
	int64_t		created, expires, updated;
	char		cred_hash[256];	/* a password hash, never the secret */
	char		reason[256];
	char		*policy;	/* JSON; owned, see _clear */
};

void	store_session_clear(struct store_session *ss);

/*
 * Provision a session: the recipient exists and is enabled, the dataset
 * is mounted (STORE_EGATE otherwise), and the recipient's live sessions
 * (created or running, not expired at `now`) stay under max_sessions
 * (STORE_ELIMIT).
 */
int	store_session_create(struct store *s, const struct store_session *ss,
	    int64_t now);
int	store_session_get(struct store *s, const char *id,
	    struct store_session *ss);
/* created -> running; refused once expired (STORE_ESTATE). */
int	store_session_start(struct store *s, const char *id, int64_t now);
/* created|running -> revoked|expired, running -> ended|failed, with a
 * reason.  Every state but created and running is final. */
int	store_session_end(struct store *s, const char *id,
	    enum store_session_state to, const char *reason, int64_t now);
/* New expiry for a live session (must be later than now). */
int	store_session_extend(struct store *s, const char *id,
	    int64_t expires, int64_t now);
/* Live sessions whose expiry passed become "expired"; *n gets the count. */
int	store_session_expire(struct store *s, int64_t now, int *n);
int	store_session_list(struct store *s,
	    int (*fn)(const struct store_session *, void *), void *arg);

/* ---- the index of recordings (issue "Session evidence") ---- */

int	store_recording_add(struct store *s, const char *session,
	    const char *path, int64_t now, int64_t *id);
int	store_recording_close(struct store *s, int64_t id,
	    const char *sha256, int64_t bytes, int64_t now);

#define STORE_PATH_MAX	1024

struct store_recording {
	int64_t	id;
	char	session[STORE_ID_MAX];
	char	path[STORE_PATH_MAX];
	char	sha256[65];		/* "" while open */
	int64_t	bytes;			/* -1 while open */
	int64_t	started, ended;		/* ended 0 while open */
	int64_t	expired;		/* 0 = still on disk */
};

/* The newest recording of a session (by_path NULL), or the newest one
 * at a path (session NULL): STORE_ENOTFOUND when none. */
int	store_recording_find(struct store *s, const char *session,
	    const char *by_path, struct store_recording *out);
/* A closed recording was removed by retention (once). */
int	store_recording_expire(struct store *s, int64_t id, int64_t now);

#endif
