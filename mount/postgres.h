/*
 * mount/postgres.h — the PostgreSQL analytics backend: mount a released
 * (de-identified) dataset read-only for an external BI tool.
 *
 * Library code: never logs, never exits.  Every call returns a PGM_*
 * status and, when it fails, writes a one-line reason into the caller's
 * err buffer.  Trust level: runs with the custodian's admin role on the
 * database; reads a CSV that the de-identification gate already passed,
 * but parses it as untrusted bytes all the same (deid/csv.h).
 *
 * What a mount is, in SQL (docs/postgres-backend.md has the details):
 * schema cdsgate_<id> (the store's dataset id), one table <name>_v<version>
 * per version (all columns TEXT), a view <name> over the newest version, and
 * USAGE + SELECT granted to the reader role only — all in one
 * transaction, so a failure anywhere leaves the previous state.
 */
#ifndef MOUNT_POSTGRES_H
#define MOUNT_POSTGRES_H

#include <stddef.h>
#include <stdint.h>

enum pgm_status {
	PGM_OK = 0,
	PGM_EINPUT,		/* bad dataset name, version, columns or CSV */
	PGM_ECONNECT,		/* could not connect to the server */
	PGM_ESQL,		/* the server refused a statement */
	PGM_EROLE,		/* reader role missing or too powerful */
	PGM_EEXIST,		/* that version is already mounted */
	PGM_ENOTMOUNTED,	/* the dataset is not mounted */
	PGM_ENOMEM,
	PGM_EIO			/* reading the CSV failed */
};

#define PGM_DATASET_MAX	40	/* [a-z0-9_]{1,40}: fits NAMEDATALEN */

struct pg_target {
	const char	*conninfo;	/* libpq conninfo of the admin role */
	const char	*reader_role;	/* the BI tool's login role */
	unsigned	 lock_timeout_ms; /* wait for BI queries; 0 = 30 s */
};

/* A dataset: the store's id names its schema (cdsgate_<id>), so two
 * datasets of one name never share one; its name (a label) names the
 * view and the version tables. */
struct pgm_ds {
	int64_t		 id;	/* >= 1 */
	const char	*name;	/* [a-z0-9_]{1,40} */
};

const char	*pgm_strerror(int status);

/* Nonzero if ds has an id >= 1 and a valid name. */
int	pgm_ds_valid(const struct pgm_ds *ds);

/* Nonzero if name is a valid dataset name ([a-z0-9_], 1..40 bytes). */
int	pgm_dataset_valid(const char *name);

/*
 * Mount csv_path (with a header row) as version `version` (>= 1) of
 * dataset and point the dataset's view at it.  columns/ncols name the
 * table's columns and must equal the CSV header; columns == NULL takes
 * them from the header.  Mounting a version that exists is PGM_EEXIST.
 * Older versions stay (for the custodian) but the reader loses them.
 * A dataset mounted for another reader role is PGM_EROLE: unmount it.
 */
int	pg_mount(const struct pg_target *t, const struct pgm_ds *ds,
	    int64_t version, const char *csv_path, const char *const *columns,
	    size_t ncols, char *err, size_t errlen);

/* Drop the dataset's schema, every version and the view, atomically. */
int	pg_unmount(const struct pg_target *t, const struct pgm_ds *ds, char *err,
	    size_t errlen);

/* The version the dataset's view serves now (PGM_ENOTMOUNTED if none),
 * and optionally its row count (rows may be NULL). */
int	pg_mounted_version(const struct pg_target *t, const struct pgm_ds *ds,
	    int64_t *version, int64_t *rows, char *err, size_t errlen);

/*
 * A login role of one session, "cdsgate_<session>": CONNECT on the
 * database, USAGE on the dataset's schema and SELECT on its view, and
 * nothing else (no other dataset, no table of a version); read-only by
 * default; its password (at least 16 bytes) valid until valid_until
 * (unix time); at most 4 connections.  The role's name into role.  An
 * existing role is PGM_EEXIST; an unmounted dataset PGM_ENOTMOUNTED.
 * The admin role needs CREATEROLE.
 */
int	pg_session_role_create(const struct pg_target *t, const char *session,
	    const struct pgm_ds *ds, int64_t valid_until, const char *password,
	    char *role, size_t rolelen, char *err, size_t errlen);
/* The session's role and every privilege it holds, gone (DROP OWNED BY,
 * DROP ROLE); PGM_ENOTMOUNTED when there is no such role. */
int	pg_session_role_drop(const struct pg_target *t, const char *session,
	    char *err, size_t errlen);

#endif
