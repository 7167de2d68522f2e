/*
 * tests/unit/test-mount.c — mount/postgres.c's checks that need no
 * server: dataset names, status strings, and that bad arguments, bad
 * CSV and an unreachable server fail with the right code and a reason
 * before anything is sent.  The server side is 031-postgres-mount.sh.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount/pg-int.h"
#include "mount/postgres.h"
#include "tests/tap.h"

static char dir[] = "/tmp/cdsgate-test-mount.XXXXXX";

/* Write text to dir/name and return the path (static buffer). */
static const char *
file(const char *name, const char *text)
{
	static char path[4][256];
	static int i;
	char *p = path[i++ % 4];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	if ((f = fopen(p, "w")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0)
		tap_skip_all("cannot write test files");
	return p;
}

static void
test_names(void)
{
	char s41[42];

	memset(s41, 'a', 41);
	s41[41] = '\0';
	tap_ok(pgm_dataset_valid("patients_2024"), "a-z0-9_ is valid");
	tap_ok(!pgm_dataset_valid(""), "empty is invalid");
	tap_ok(!pgm_dataset_valid(NULL), "NULL is invalid");
	tap_ok(!pgm_dataset_valid("Patients"), "upper case is invalid");
	tap_ok(!pgm_dataset_valid("a-b") && !pgm_dataset_valid("a b") &&
	    !pgm_dataset_valid("a\"b") && !pgm_dataset_valid("a;b"),
	    "'-', space, quote and ';' are invalid");
	tap_ok(!pgm_dataset_valid(s41), "41 characters is invalid");
	s41[40] = '\0';
	tap_ok(pgm_dataset_valid(s41), "40 characters is valid");
	tap_ok(strcmp(pgm_strerror(PGM_EEXIST), "version already mounted")
	    == 0 && strcmp(pgm_strerror(99), "unknown status") == 0 &&
	    strcmp(pgm_strerror(-1), "unknown status") == 0,
	    "pgm_strerror names codes and survives bad ones");
}

/* pg_mount's status and whether err mentions want. */
static int
mount_fails(const struct pg_target *t, const char *ds, long v,
    const char *csv, const char *const *cols, size_t n, int code,
    const char *want)
{
	struct pgm_ds d = { 1, ds };
	char err[512] = "";
	int r = pg_mount(t, &d, v, csv, cols, n, err, sizeof(err));

	tap_diag("%s: %s", pgm_strerror(r), err);
	return r == code && strstr(err, want) != NULL;
}

static void
test_mount_input(void)
{
	struct pg_target t = { "host=/nonexistent port=1 dbname=x", "bi",
	    0 };
	struct pg_target noreader = { "host=/nonexistent", NULL, 0 };
	const char *good = file("good.csv", "a,b\n1,2\n");
	const char *cols[] = { "a", "b" };
	char longname[80];
	const char *lcols[] = { longname };

	memset(longname, 'x', 64);
	longname[64] = '\0';
	tap_ok(mount_fails(&t, "Bad", 1, good, NULL, 0, PGM_EINPUT,
	    "a-z0-9_"), "bad dataset name: EINPUT, before connecting");
	tap_ok(mount_fails(&t, "ok", 0, good, NULL, 0, PGM_EINPUT,
	    "version"), "version 0: EINPUT");
	tap_ok(mount_fails(&noreader, "ok", 1, good, NULL, 0, PGM_EINPUT,
	    "reader role"), "no reader role: EINPUT");
	tap_ok(mount_fails(&t, "ok", 1, "/nonexistent/x.csv", NULL, 0,
	    PGM_EIO, "x.csv"), "missing CSV: EIO naming the file");
	tap_ok(mount_fails(&t, "ok", 1, file("empty.csv", ""), NULL, 0,
	    PGM_EINPUT, "empty"), "empty CSV: EINPUT");
	tap_ok(mount_fails(&t, "ok", 1, file("bad.csv", "a,\"b\n1,2\n"),
	    NULL, 0, PGM_EINPUT, "bad.csv:"),
	    "unterminated quote in the header: EINPUT with file:line");
	tap_ok(mount_fails(&t, "ok", 1, good, lcols, 1, PGM_EINPUT,
	    "longer than 63"), "a 64-byte column name: EINPUT");
	tap_ok(mount_fails(&t, "ok", 1, good, cols, 0, PGM_EINPUT,
	    "no columns"), "zero columns: EINPUT");
	tap_ok(mount_fails(&t, "ok", 1, good, cols, 2, PGM_ECONNECT,
	    "connect"), "valid input, no server: ECONNECT with the reason");
}

static void
test_header(void)
{
	struct pgm_csv csv;
	char err[256] = "";
	int r;

	r = pgm_csv_open(&csv, file("h.csv",
	    "\xef\xbb\xbf\"a,1\";b;\"c\"\"\"\r\n1;2;3\r\n"), NULL, 0, err,
	    sizeof(err));
	tap_ok(r == PGM_OK && csv.ncols == 3 && csv.sep == ';' &&
	    strcmp(csv.cols[0], "a,1") == 0 && strcmp(csv.cols[1], "b") == 0 &&
	    strcmp(csv.cols[2], "c\"") == 0,
	    "header names come quoted, ';'-separated, after a BOM (%s)", err);
	pgm_csv_close(&csv);
	pgm_csv_close(&csv);
	tap_ok(csv.data == NULL && csv.owned == NULL, "close twice is safe");
}

static void
test_err_bounds(void)
{
	char err[8];

	memset(err, 'z', sizeof(err));
	tap_ok(pg_unmount(NULL, &(struct pgm_ds){ 1, "Bad" }, err,
	    sizeof(err)) == PGM_EINPUT &&
	    err[7] == '\0', "err is cut to errlen and terminated");
	tap_ok(pg_unmount(NULL, &(struct pgm_ds){ 1, "ok" }, NULL, 0) ==
	    PGM_EINPUT, "NULL target, NULL err: EINPUT, no crash");
	tap_ok(pg_unmount(NULL, &(struct pgm_ds){ 0, "ok" }, NULL, 0) ==
	    PGM_EINPUT && !pgm_ds_valid(&(struct pgm_ds){ 0, "ok" }) &&
	    pgm_ds_valid(&(struct pgm_ds){ 7, "ok" }),
	    "a dataset id below 1 is invalid");
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		tap_skip_all("mkdtemp failed");
	test_names();
	test_mount_input();
	test_header();
	test_err_bounds();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
