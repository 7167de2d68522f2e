/*
 * store/store-int.h — what the store's files share and nobody else
 * sees: the connection, statement helpers and SQLite-to-status mapping.
 */
#ifndef STORE_STORE_INT_H
#define STORE_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct store {
	sqlite3	*db;
};

/* Run SQL without results; maps the SQLite error to a STORE_* status. */
int	store_exec(struct store *s, const char *sql);
/* Prepare one statement (STORE_EIO on failure). */
int	store_prepare(struct store *s, const char *sql, sqlite3_stmt **st);
/* Step a statement that returns no row, finalize it, map the result. */
int	store_step_done(struct store *s, sqlite3_stmt *st);
/* Map a SQLite result code (extended codes on) to a STORE_* status. */
int	store_status_of(int sqlite_rc);
/* The one integer a "SELECT count(*) ..." returns; -1 on error.  Binds
 * ?1 = txt and ?2 = num when txt != NULL, else ?1 = num. */
int64_t	store_count(struct store *s, const char *sql, const char *txt,
	    int64_t num);
/* BEGIN IMMEDIATE, and the matching COMMIT (rc == STORE_OK) or ROLLBACK;
 * store_tx_end returns rc, or STORE_EIO if the COMMIT failed. */
int	store_tx_begin(struct store *s);
int	store_tx_end(struct store *s, int rc);
/* Copy a column into a fixed buffer (NUL-terminated, "" for NULL). */
void	store_col_text(sqlite3_stmt *st, int col, char *dst, size_t len);
/* A malloc'd copy of a text column, or NULL for NULL/out of memory. */
char	*store_col_dup(sqlite3_stmt *st, int col);
/* Index of name in names[n], or dflt. */
int	store_name_index(const char *const *names, size_t n,
	    const char *name, int dflt);
int	store_migrate(struct store *s, char *err, size_t errlen);

#endif
