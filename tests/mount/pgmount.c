/*
 * tests/mount/pgmount.c — a test driver for mount/postgres.h, so shell
 * scenarios (tests/regress/031-postgres-mount.sh) can mount, unmount and
 * inspect datasets in a real PostgreSQL server.  Not installed.
 *
 *   pgmount mount   -c CONNINFO -r READER -i ID -d NAME -v N -f CSV
 *                   [-C a,b] [-t LOCK_TIMEOUT_MS]
 *   pgmount unmount -c CONNINFO -i ID -d NAME
 *   pgmount version -c CONNINFO -i ID -d NAME   -> "version N rows M"
 * (ID: the dataset's id, its schema cdsgate_<ID>; NAME: its view)
 *
 * Exit: 0 done, 1 failed, 2 usage, 3 not mounted / version exists.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount/postgres.h"

#define MAX_COLS	4096

struct args {
	struct pg_target	 t;
	struct pgm_ds		 ds;
	const char		*csv;
	char			*columns;
	int64_t			 version;
};

static int
usage(void)
{
	fprintf(stderr, "usage: pgmount mount|unmount|version -c CONNINFO "
	    "-i ID -d NAME [-r READER -v N -f CSV [-C col,col...] [-t MS]]\n");
	return 2;
}

/* Why: split "a,b,c" in place into at most MAX_COLS names. */
static size_t
split_columns(char *s, const char **cols)
{
	size_t n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok != NULL && n < MAX_COLS;
	    tok = strtok_r(NULL, ",", &save))
		cols[n++] = tok;
	return n;
}

static int
parse(int argc, char **argv, struct args *a)
{
	char *end;
	int o;

	memset(a, 0, sizeof(*a));
	while ((o = getopt(argc, argv, "c:r:i:d:v:f:C:t:")) != -1) {
		switch (o) {
		case 'c': a->t.conninfo = optarg; break;
		case 'r': a->t.reader_role = optarg; break;
		case 'd': a->ds.name = optarg; break;
		case 'i':
			a->ds.id = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0')
				return -1;
			break;
		case 'f': a->csv = optarg; break;
		case 'C': a->columns = optarg; break;
		case 't':
			a->t.lock_timeout_ms = (unsigned)strtoul(optarg, &end,
			    10);
			if (*optarg == '\0' || *end != '\0')
				return -1;
			break;
		case 'v':
			a->version = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0')
				return -1;
			break;
		default: return -1;
		}
	}
	return a->t.conninfo != NULL && a->ds.name != NULL && a->ds.id != 0 ?
	    0 : -1;
}

static int
report(int r, const char *err)
{
	if (r == PGM_OK)
		return 0;
	fprintf(stderr, "pgmount: %s: %s\n", pgm_strerror(r), err);
	return r == PGM_ENOTMOUNTED || r == PGM_EEXIST ? 3 : 1;
}

static int
do_mount(struct args *a, char *err, size_t errlen)
{
	static const char *cols[MAX_COLS];
	size_t n = 0;

	if (a->csv == NULL)
		return usage();
	if (a->columns != NULL)
		n = split_columns(a->columns, cols);
	return report(pg_mount(&a->t, &a->ds, a->version, a->csv,
	    a->columns != NULL ? cols : NULL, n, err, errlen), err);
}

int
main(int argc, char **argv)
{
	struct args a;
	char err[1024] = "";
	int64_t v, rows;
	int r;

	if (argc < 2 || parse(argc - 1, argv + 1, &a) != 0)
		return usage();
	if (strcmp(argv[1], "mount") == 0)
		return do_mount(&a, err, sizeof(err));
	if (strcmp(argv[1], "unmount") == 0)
		return report(pg_unmount(&a.t, &a.ds, err, sizeof(err)),
		    err);
	if (strcmp(argv[1], "version") != 0)
		return usage();
	if ((r = pg_mounted_version(&a.t, &a.ds, &v, &rows, err,
	    sizeof(err))) == PGM_OK)
		printf("version %" PRId64 " rows %" PRId64 "\n", v, rows);
	return report(r, err);
}
