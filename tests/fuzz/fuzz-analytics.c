/*
 * tests/fuzz/fuzz-analytics.c — libFuzzer target for what cdsgate-analytics
 * does with untrusted bytes: URL paths (an_open_beneath, an_content_type)
 * and meta.json files (an_mounts_list / an_mounts_open_csv).
 *
 * The first byte picks the mode.  Path mode: whatever opens must be a
 * regular file inside the fixture tree (checked through /proc/self/fd),
 * never /etc/passwd behind the planted symlink or the hidden file.  Meta
 * mode: the bytes become m/x/meta.json; the listing must be well-formed
 * and list x only if its meta is a contract-conforming object.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/log.h"

static char root[64];
static int root_fd = -1, mount_fd = -1;

static void
fixture_file(const char *rel, const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if ((f = fopen(p, "w")) == NULL || fputs(text, f) < 0 || fclose(f))
		abort();
}

/* Build the tree once: a/f.js, .hidden, link -> /etc/passwd, m/x/. */
static void
fixture(void)
{
	char p[128];

	snprintf(root, sizeof(root), "/tmp/fuzz-analytics.XXXXXX");
	if (mkdtemp(root) == NULL)
		abort();
	snprintf(p, sizeof(p), "%s/a", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/m", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/m/x", root);
	mkdir(p, 0755);
	fixture_file("a/f.js", "x");
	fixture_file(".hidden", "secret");
	fixture_file("m/x/data.csv", "a\n1\n");
	snprintf(p, sizeof(p), "%s/link", root);
	if (symlink("/etc/passwd", p) != 0)
		abort();
	/* mounts.c's lines are the daemon's, not the fuzzer's */
	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	root_fd = open(root, O_RDONLY | O_DIRECTORY);
	mount_fd = openat(root_fd, "m", O_RDONLY | O_DIRECTORY);
	if (root_fd < 0 || mount_fd < 0)
		abort();
}

static void
fuzz_path(const char *path)
{
	char proc[64], real[256];
	struct stat st;
	off_t size;
	ssize_t n;
	int fd;

	(void)an_content_type(path);
	(void)an_name_ok(path);
	if ((fd = an_open_beneath(root_fd, path, &size)) < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n <= 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		abort();
	real[n] = '\0';
	if (strncmp(real, root, strlen(root)) != 0 || real[strlen(root)] != '/'
	    || strstr(real, "/.") != NULL)
		abort();	/* outside the tree, or a hidden file */
	close(fd);
}

static void
fuzz_meta(const uint8_t *data, size_t size)
{
	char p[128];
	json_t *l;
	FILE *f;

	snprintf(p, sizeof(p), "%s/m/x/meta.json", root);
	if ((f = fopen(p, "w")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if ((l = an_mounts_list(mount_fd, 0)) == NULL ||
	    !json_is_array(json_object_get(l, "datasets")) ||
	    json_array_size(json_object_get(l, "datasets")) > 1)
		abort();
	json_decref(l);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[1100];

	if (root_fd < 0)
		fixture();
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		fuzz_meta(data + 1, size - 1);
		return 0;
	}
	if (size - 1 >= sizeof(path))
		return 0;
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	fuzz_path(path);
	return 0;
}
