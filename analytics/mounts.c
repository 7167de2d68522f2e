/*
 * analytics/mounts.c — the mount-dir contract, reading side.
 *
 * The custodian daemon writes <mount-dir>/<name>/{data.csv,meta.json}
 * into a temp dir whose name starts with `.` and renames it into place
 * when complete; it may remove a dataset at any time.  We rescan on
 * every request (a few dozen entries), list only complete datasets (both
 * files regular, meta.json a well-formed object), and never follow a
 * symlink (analytics/files.c).
 *
 * Trust: the mount dir is the custodian's, but meta.json is still parsed
 * as untrusted (bounded size, typed fields); a bad one hides its dataset
 * and is logged.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/buf.h"
#include "common/log.h"

/* Read the whole (small) file into w; -1 when missing or too large. */
static int
read_small(int fd, off_t size, struct wbuf *w)
{
	char chunk[4096];
	ssize_t n;

	if (size > AN_MAX_META)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (wbuf_put(w, chunk, (size_t)n) != BUF_OK)
			return -1;
	return n < 0 ? -1 : 0;
}

/* Are meta's fields the contract's types?  (Extra keys are kept.) */
static int
meta_ok(const json_t *m)
{
	const json_t *cols = json_object_get(m, "columns"), *c;
	size_t i;

	if (!json_is_object(m) || !json_is_string(json_object_get(m, "name"))
	    || !json_is_array(cols) || json_array_size(cols) == 0)
		return 0;
	if (json_object_get(m, "records") != NULL &&
	    !json_is_integer(json_object_get(m, "records")))
		return 0;
	json_array_foreach(cols, i, c)
		if (!json_is_string(c))
			return 0;
	return 1;
}

/* meta.json of dataset `id`, checked; NULL if absent or malformed. */
static json_t *
meta_load(int mount_fd, const char *id)
{
	char rel[AN_MAX_NAME + 16];
	struct wbuf w;
	json_t *m = NULL;
	off_t size;
	int fd;

	snprintf(rel, sizeof(rel), "%s/meta.json", id);
	if ((fd = an_open_beneath(mount_fd, rel, &size)) < 0)
		return NULL;
	wbuf_init(&w, AN_MAX_META);
	if (read_small(fd, size, &w) == 0)
		m = json_loadb((const char *)w.d, w.len,
		    JSON_REJECT_DUPLICATES, NULL);
	close(fd);
	wbuf_free(&w);
	if (m != NULL && !meta_ok(m)) {
		log_warnx("dataset %s: meta.json does not follow the contract; "
		    "not listed", id);
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* Is meta the store's dataset `only` (0: any)?  A meta.json without
 * an integer "dataset" is no store dataset: never granted. */
static int
meta_is(const json_t *m, int64_t only)
{
	const json_t *d = json_object_get(m, "dataset");

	return only == 0 || (json_is_integer(d) &&
	    (int64_t)json_integer_value(d) == only);
}

/* Is `id` a complete dataset (a valid meta.json beside a data.csv), and
 * the store's dataset `only` (0: any)? */
static json_t *
dataset_entry(int mount_fd, const char *id, int64_t only)
{
	char rel[AN_MAX_NAME + 16];
	json_t *m;
	off_t size;
	int fd;

	if (!an_name_ok(id) || strlen(id) > AN_MAX_NAME)
		return NULL;
	snprintf(rel, sizeof(rel), "%s/data.csv", id);
	if ((fd = an_open_beneath(mount_fd, rel, &size)) < 0)
		return NULL;
	close(fd);
	if ((m = meta_load(mount_fd, id)) == NULL)
		return NULL;
	if (!meta_is(m, only)) {
		json_decref(m);
		return NULL;
	}
	json_object_set_new(m, "id", json_string(id));
	json_object_set_new(m, "bytes", json_integer((json_int_t)size));
	return m;
}

/* Sort the list by id so the picker is stable. */
static int
by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
an_mounts_list(int mount_fd, int64_t only)
{
	char *ids[AN_MAX_DATASETS];
	size_t n = 0, i;
	struct dirent *de;
	json_t *list = json_array(), *e;
	DIR *d;
	int fd;

	if ((fd = openat(mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
	    < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		json_decref(list);
		return NULL;
	}
	while (n < AN_MAX_DATASETS && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && (ids[n] = strdup(de->d_name))
		    != NULL)
			n++;
	closedir(d);
	qsort(ids, n, sizeof(ids[0]), by_id);
	for (i = 0; i < n; i++) {
		if ((e = dataset_entry(mount_fd, ids[i], only)) != NULL)
			json_array_append_new(list, e);
		free(ids[i]);
	}
	return json_pack("{s:o}", "datasets", list);
}

int
an_mounts_open_csv(int mount_fd, const char *id, int64_t only, off_t *size)
{
	char rel[AN_MAX_NAME + 16];
	json_t *m;

	if (!an_name_ok(id) || strlen(id) > AN_MAX_NAME) {
		errno = EACCES;
		return -1;
	}
	if ((m = meta_load(mount_fd, id)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (!meta_is(m, only)) {
		json_decref(m);
		errno = EPERM;
		return -1;
	}
	json_decref(m);
	snprintf(rel, sizeof(rel), "%s/data.csv", id);
	return an_open_beneath(mount_fd, rel, size);
}
