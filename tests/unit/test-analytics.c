/*
 * tests/unit/test-analytics.c — the parts of cdsgate-analytics that decide
 * what a URL may reach (analytics/files.c) and what counts as a mounted
 * dataset (analytics/mounts.c), on a real temporary tree: plain files
 * open; `..`, hidden names, symlinks (last or middle component), FIFOs,
 * directories, absolute, too deep and too long paths are refused; content
 * types; complete vs. incomplete, malformed and symlinked datasets.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/log.h"
#include "tests/tap.h"

static char root[64];

static void
put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if ((f = fopen(p, "w")) == NULL || fputs(text, f) < 0 || fclose(f))
		abort();
}

static void
dir(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (mkdir(p, 0755) != 0)
		abort();
}

static void
link_to(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (symlink(target, p) != 0)
		abort();
}

/* Open rel beneath fd: the fd's result (closed) and errno. */
static int
try_open(int fd, const char *rel, int *err)
{
	off_t size = -1;
	int f = an_open_beneath(fd, rel, &size);

	*err = errno;
	if (f >= 0)
		close(f);
	return f >= 0 ? (int)size : -1;
}

static void
files(int fd)
{
	static const char *refused[] = {
		"../x", "a/../a/f.txt", "./a/f.txt", ".hidden", "a//f.txt",
		"/etc/passwd", "link", "dirlink/f.txt", "fifo", "a", "",
		"d/d/d/d/d/d/d/d/f", "a/f.txt/", "sp ace", "a/%2e%2e",
	};
	char longp[700];
	size_t i;
	int err;

	tap_ok(try_open(fd, "a/f.txt", &err) == 5, "a plain file opens with its size");
	tap_ok(try_open(fd, "missing.js", &err) < 0 && err == ENOENT,
	    "a missing file: ENOENT (404)");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		tap_ok(try_open(fd, refused[i], &err) < 0 && err != ENOENT,
		    "refused: '%s' (%s)", refused[i], strerror(err));
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	tap_ok(try_open(fd, longp, &err) < 0 && err == EACCES,
	    "a 699-byte path is refused");
	tap_ok(strcmp(an_content_type("x/p.wasm"), "application/wasm") == 0,
	    ".wasm is application/wasm");
	tap_ok(strncmp(an_content_type("cdn/p.js"), "text/javascript", 15) == 0,
	    ".js is text/javascript");
	tap_ok(strncmp(an_content_type("a.CSS"), "text/css", 8) == 0,
	    "extensions are case-blind");
	tap_ok(strcmp(an_content_type("a.js/x"), "application/octet-stream") == 0
	    && strcmp(an_content_type("noext"), "application/octet-stream") == 0,
	    "no extension: application/octet-stream");
}

static void
mounts(int fd)
{
	json_t *l = an_mounts_list(fd, 0), *ds;
	char *s;
	int err, f;
	off_t size;

	ds = json_object_get(l, "datasets");
	s = json_dumps(ds, JSON_COMPACT);
	tap_ok(json_array_size(ds) == 2 && strcmp(json_string_value(
	    json_object_get(json_array_get(ds, 0), "id")), "m1") == 0 &&
	    strcmp(json_string_value(json_object_get(json_array_get(ds, 1),
	    "id")), "m2") == 0, "listed: the two complete datasets, sorted (%s)",
	    s != NULL ? s : "null");
	free(s);
	tap_ok(json_integer_value(json_object_get(json_array_get(ds, 0),
	    "bytes")) == 8, "an entry carries its CSV's size");
	json_decref(l);
	f = an_mounts_open_csv(fd, "m1", 0, &size);
	tap_ok(f >= 0 && size == 8, "m1's data.csv opens");
	if (f >= 0)
		close(f);
	f = an_mounts_open_csv(fd, ".tmp-m3", 0, &size);
	err = errno;
	tap_ok(f < 0 && err == EACCES, "a temp dir is refused");
	tap_ok(an_mounts_open_csv(fd, "nometa", 0, &size) < 0 && errno == ENOENT,
	    "a dataset without meta.json is not there");
	tap_ok(an_mounts_open_csv(fd, "badmeta", 0, &size) < 0,
	    "a dataset with a malformed meta.json is not there");
	tap_ok(an_mounts_open_csv(fd, "evil", 0, &size) < 0,
	    "a symlinked dataset is not there");
	tap_ok(an_mounts_open_csv(fd, "csvlink", 0, &size) < 0,
	    "a dataset whose data.csv is a symlink is not there");
}

static void
make_tree(void)
{
	static const char meta[] = "{\"name\":\"n\",\"records\":1,"
	    "\"columns\":[\"a\",\"b\"]}";

	dir("a");
	put("a/f.txt", "hello");
	dir("d"); dir("d/d"); dir("d/d/d"); dir("d/d/d/d"); dir("d/d/d/d/d");
	dir("d/d/d/d/d/d"); dir("d/d/d/d/d/d/d"); dir("d/d/d/d/d/d/d/d");
	put("d/d/d/d/d/d/d/d/f", "deep");	/* 9 components: too deep */
	put(".hidden", "secret");
	link_to("/etc/passwd", "link");
	link_to("a", "dirlink");
	if (mkfifo("fifo", 0600) != 0 && errno != EEXIST)
		abort();
	dir("m");
	dir("m/m2"); put("m/m2/data.csv", "a,b\n1,2\n"); put("m/m2/meta.json", meta);
	dir("m/m1"); put("m/m1/data.csv", "a,b\n1,*\n"); put("m/m1/meta.json", meta);
	dir("m/.tmp-m3"); put("m/.tmp-m3/data.csv", "a\n"); put("m/.tmp-m3/meta.json", meta);
	dir("m/nometa"); put("m/nometa/data.csv", "a\n");
	dir("m/badmeta"); put("m/badmeta/data.csv", "a\n");
	put("m/badmeta/meta.json", "{\"name\":\"x\",\"columns\":[1]}");
	link_to("m1", "m/evil");
	dir("m/csvlink"); put("m/csvlink/meta.json", meta);
	link_to("../m1/data.csv", "m/csvlink/data.csv");
}

/* Remove the tree (the names are ours: no quoting issues). */
static void
cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (chdir("/") != 0 || system(cmd) != 0)
		tap_diag("could not remove %s", root);
}

int
main(void)
{
	int fd, mfd;

	snprintf(root, sizeof(root), "/tmp/test-analytics.XXXXXX");
	if (mkdtemp(root) == NULL || chdir(root) != 0)
		return 99;
	/* mounts.c's lines are the daemon's, not the test's */
	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	make_tree();
	fd = open(root, O_RDONLY | O_DIRECTORY);
	mfd = openat(fd, "m", O_RDONLY | O_DIRECTORY);
	files(fd);
	mounts(mfd);
	close(mfd);
	close(fd);
	cleanup();
	return tap_done();
}
