/*
 * deid/output.c — atomic file writes and the de-identified CSV writer.
 * Trusted data; filesystem errors come back as DEID_EIO naming the path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deid/dataset.h"
#include "deid/output.h"

int
deid_atomic_open(struct deid_atomic *a, const char *path,
    struct deid_error *err)
{
	int fd;

	memset(a, 0, sizeof(*a));
	if ((a->path = strdup(path)) == NULL ||
	    asprintf(&a->tmp, "%s.tmp.XXXXXX", path) < 0) {
		a->tmp = NULL;
		deid_atomic_abort(a);
		return DEID_ENOMEM;
	}
	if ((fd = mkstemp(a->tmp)) < 0) {
		int e = errno;

		free(a->tmp);
		a->tmp = NULL;
		deid_atomic_abort(a);
		return deid_error_set(err, DEID_EIO, path, 0, 0,
		    "cannot create a temporary file next to it: %s",
		    strerror(e));
	}
	if ((a->f = fdopen(fd, "w")) == NULL) {
		close(fd);
		deid_atomic_abort(a);
		return DEID_ENOMEM;
	}
	return DEID_OK;
}

void
deid_atomic_abort(struct deid_atomic *a)
{
	if (a->f != NULL)
		fclose(a->f);
	if (a->tmp != NULL)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

/* fsync the directory holding path so the rename itself is durable. */
static void
sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (copy == NULL)
		return;
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

int
deid_atomic_commit(struct deid_atomic *a, struct deid_error *err)
{
	int e = 0;

	if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0)
		e = errno ? errno : EIO;
	if (fclose(a->f) != 0 && e == 0)
		e = errno;
	a->f = NULL;
	if (e == 0 && rename(a->tmp, a->path) != 0)
		e = errno;
	if (e != 0) {
		deid_error_set(err, DEID_EIO, a->path, 0, 0, "write failed: %s",
		    strerror(e));
		deid_atomic_abort(a);
		return DEID_EIO;
	}
	sync_dir(a->path);
	free(a->tmp);
	a->tmp = NULL;	/* renamed: nothing to remove */
	deid_atomic_abort(a);
	return DEID_OK;
}

int
deid_write_file(const char *path, const char *s, struct deid_error *err)
{
	struct deid_atomic a;
	int r;

	if ((r = deid_atomic_open(&a, path, err)) != DEID_OK)
		return r;
	fputs(s, a.f);
	return deid_atomic_commit(&a, err);
}

int
deid_csv_put_field(FILE *f, const char *s, char sep)
{
	const char *p;

	if (strchr(s, sep) == NULL && strpbrk(s, "\"\r\n") == NULL)
		return fputs(s, f) < 0 ? -1 : 0;
	putc('"', f);
	for (p = s; *p != '\0'; p++) {
		if (*p == '"')
			putc('"', f);
		putc(*p, f);
	}
	return putc('"', f) == EOF ? -1 : 0;
}

/* Output text of column i for row r. */
static const char *
cell(const struct deid_engine *e, const struct deid_classes *c,
    const uint8_t *suppressed, const int *qi_of_col, size_t i, size_t r)
{
	const struct deid_column *col = &e->ds->cols[i];
	int j = qi_of_col[i];
	uint32_t k;
	unsigned l;

	if (j < 0)
		return col->dict[col->codes[r]];
	k = c->of_bottom[e->row_bottom[r]];
	if (suppressed[k])
		return DEID_SUPPRESSED;
	l = c->levels[j];
	return col->h->values[l][col->h->map[l][col->leaf[r]]];
}

/* Header and rows, skipping identifying columns. */
static void
output_rows(FILE *f, const struct deid_engine *e, const struct deid_classes *c,
    const uint8_t *suppressed, const int *qi_of_col)
{
	const struct deid_dataset *ds = e->ds;
	char sep = ds->separator ? ds->separator : ',';
	size_t i, r;
	int any;

	for (r = 0; r <= ds->nrows; r++) {
		any = 0;
		for (i = 0; i < ds->ncols; i++) {
			if (ds->cols[i].type == DEID_ATTR_IDENTIFYING)
				continue;
			if (any++)
				putc(sep, f);
			deid_csv_put_field(f, r == 0 ? ds->cols[i].name :
			    cell(e, c, suppressed, qi_of_col, i, r - 1), sep);
		}
		putc('\n', f);
	}
}

/* Which QI, if any, each column is (-1: not a QI); malloc'd. */
static int *
qi_columns(const struct deid_engine *e)
{
	int *qi_of_col;
	size_t i;

	if ((qi_of_col = malloc(e->ds->ncols * sizeof(int))) == NULL)
		return NULL;
	for (i = 0; i < e->ds->ncols; i++)
		qi_of_col[i] = -1;
	for (i = 0; i < e->nqi; i++)
		qi_of_col[e->qi[i].col] = (int)i;
	return qi_of_col;
}

int
deid_output_write_fp(FILE *f, const char *name, const struct deid_engine *e,
    const struct deid_classes *c, const uint8_t *suppressed,
    struct deid_error *err)
{
	int *qi_of_col;

	if ((qi_of_col = qi_columns(e)) == NULL)
		return DEID_ENOMEM;
	output_rows(f, e, c, suppressed, qi_of_col);
	free(qi_of_col);
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return deid_error_set(err, DEID_EIO, name, 0, 0,
		    "write failed: %s", strerror(errno ? errno : EIO));
	return DEID_OK;
}

int
deid_output_write(const char *path, const struct deid_engine *e,
    const struct deid_classes *c, const uint8_t *suppressed,
    struct deid_error *err)
{
	struct deid_atomic a;
	int r;

	if ((r = deid_atomic_open(&a, path, err)) != DEID_OK)
		return r;
	if ((r = deid_output_write_fp(a.f, path, e, c, suppressed, err)) !=
	    DEID_OK) {
		deid_atomic_abort(&a);
		return r;
	}
	return deid_atomic_commit(&a, err);
}
