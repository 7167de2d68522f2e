/*
 * api/mount.c — mounting a released dataset into the embedded analytics
 * backend's mount dir (the contract in docs/analytics.md): a temp dir
 * whose name starts with "." gets data.csv and meta.json, is fsync'd,
 * and is renamed into place; the old version, if any, is renamed away
 * first and removed after.  The backend never sees a half-written
 * dataset, and a failure leaves the previous state.
 *
 * Trust: our own released file (written by the gate); its header line
 * is split with the bounded buffer (quotes as in RFC 4180).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/mount.h"
#include "common/buf.h"

/* The header row's fields, as a JSON array of strings. */
static json_t *
header_columns(const char *line, size_t len)
{
	json_t *cols = json_array();
	struct buf b;
	struct wbuf f;
	const char *s;
	uint8_t c, q;
	int quoted = 0;

	buf_init(&b, line, len);
	wbuf_init(&f, 4096);
	while (buf_get_u8(&b, &c) == BUF_OK) {
		if (quoted && c == '"') {
			if (buf_peek_u8(&b, &q) == BUF_OK && q == '"') {
				buf_skip(&b, 1);
				wbuf_put_u8(&f, c);
			} else
				quoted = 0;
		} else if (!quoted && c == '"')
			quoted = 1;
		else if (!quoted && c == ',') {
			wbuf_cstr(&f, &s);
			json_array_append_new(cols, json_string(s));
			wbuf_reset(&f);
		} else if (wbuf_put_u8(&f, c) != BUF_OK)
			break;
	}
	if (wbuf_cstr(&f, &s) == BUF_OK)
		json_array_append_new(cols, json_string(s));
	wbuf_free(&f);
	return cols;
}

/* Copy src to dst (0640), counting lines; fsync'd.  0 or -1. */
static int
copy_file(const char *src, const char *dst, json_t **cols, long *lines)
{
	char buf[65536], head[8192];
	size_t hlen = 0, i;
	ssize_t n;
	int in, out, rc = -1, in_head = 1;

	*lines = 0;
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 ||
	    fchmod(out, 0644) != 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (i = 0; i < (size_t)n; i++) {
			*lines += buf[i] == '\n';
			if (in_head && buf[i] == '\n')
				in_head = 0;
			else if (in_head && buf[i] != '\r' && hlen < sizeof(head))
				head[hlen++] = buf[i];
		}
		if (write(out, buf, (size_t)n) != n)
			goto out;
	}
	if (n == 0 && fsync(out) == 0) {
		*cols = header_columns(head, hlen);
		rc = 0;
	}
out:
	if (out >= 0 && close(out) != 0)
		rc = -1;
	close(in);
	return rc;
}

/* meta.json beside the data. */
static int
write_meta(const char *dir, const struct mount_info *mi, json_t *cols,
    long records)
{
	char path[PATH_MAX + 16], when[32];
	time_t t = time(NULL);
	struct tm tm;
	json_t *m, *rep = NULL;
	int rc;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(path, sizeof(path), "%s/meta.json", dir);
	m = json_pack("{s:s, s:I, s:I, s:O, s:s, s:I, s:s}", "name", mi->name,
	    "version", (json_int_t)mi->version, "records", (json_int_t)records,
	    "columns", cols, "mounted_at", when, "dataset",
	    (json_int_t)mi->dataset, "raw_sha256", mi->raw_sha256);
	if (m != NULL && (rep = mi->report != NULL ? json_loads(mi->report, 0,
	    NULL) : NULL) != NULL && json_is_object(json_object_get(rep,
	    "summary")))	/* the gate's verdict, for the researcher */
		json_object_set(m, "gate", json_object_get(rep, "summary"));
	json_decref(rep);
	rc = m != NULL && json_dump_file(m, path, JSON_INDENT(2) |
	    JSON_SORT_KEYS) == 0 ? 0 : -1;
	json_decref(m);
	if (rc == 0)
		rc = chmod(path, 0644);
	return rc;
}

/* rm -r of a directory we made (two plain files at most). */
static void
remove_dir(const char *dir)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

int
mount_embedded(const char *mount_dir, const struct mount_info *mi,
    char *err, size_t errlen)
{
	char tmp[PATH_MAX], dst[PATH_MAX], old[PATH_MAX], data[PATH_MAX + 16];
	json_t *cols = NULL;
	long lines;
	int have_old;

	/* by the store's id: a dataset of the same name has another dir */
	snprintf(tmp, sizeof(tmp), "%s/.mount-%lld-XXXXXX", mount_dir,
	    (long long)mi->dataset);
	snprintf(dst, sizeof(dst), "%s/%lld", mount_dir, (long long)mi->dataset);
	snprintf(old, sizeof(old), "%s/.old-%lld", mount_dir,
	    (long long)mi->dataset);
	/* World-readable inside: the mount dir itself (0750, group
	   cdsgate-analytics, the operator's) is what keeps others out;
	   the analytics user is not in the writer's group. */
	if (mkdtemp(tmp) == NULL || chmod(tmp, 0755) != 0)
		return snprintf(err, errlen, "%s: %s", mount_dir,
		    strerror(errno)), -1;
	snprintf(data, sizeof(data), "%s/data.csv", tmp);
	if (copy_file(mi->released, data, &cols, &lines) != 0 ||
	    json_array_size(cols) == 0 ||
	    write_meta(tmp, mi, cols, mi->records >= 0 ? mi->records :
	    lines > 0 ? lines - 1 : 0) != 0) {
		snprintf(err, errlen, "writing %s: %s", tmp, strerror(errno));
		json_decref(cols);
		remove_dir(tmp);
		return -1;
	}
	json_decref(cols);
	remove_dir(old);
	have_old = rename(dst, old) == 0;
	if (rename(tmp, dst) != 0) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		if (have_old)
			rename(old, dst);
		remove_dir(tmp);
		return -1;
	}
	if (have_old)
		remove_dir(old);
	return 0;
}

/* The dataset id in <dir>/meta.json, or -1 when it cannot be read. */
static int64_t
meta_dataset(const char *dir)
{
	char path[PATH_MAX + 16];
	json_t *m, *v;
	int64_t id;

	snprintf(path, sizeof(path), "%s/meta.json", dir);
	if ((m = json_load_file(path, 0, NULL)) == NULL)
		return -1;
	v = json_object_get(m, "dataset");
	id = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
	json_decref(m);
	return id;
}

int
unmount_embedded(const char *mount_dir, int64_t dataset, char *err,
    size_t errlen)
{
	char dst[PATH_MAX], gone[PATH_MAX];
	int64_t owner;

	snprintf(dst, sizeof(dst), "%s/%lld", mount_dir, (long long)dataset);
	snprintf(gone, sizeof(gone), "%s/.gone-%lld", mount_dir,
	    (long long)dataset);
	/* Another dataset's files under this name are not ours to remove. */
	if ((owner = meta_dataset(dst)) >= 0 && owner != dataset)
		return snprintf(err, errlen, "%s holds dataset %lld, not %lld: "
		    "left as it is", dst, (long long)owner, (long long)dataset),
		    -1;
	remove_dir(gone);
	/* One rename takes it out of the backend's sight at once. */
	if (rename(dst, gone) != 0 && errno != ENOENT)
		return snprintf(err, errlen, "%s: %s", dst, strerror(errno)),
		    -1;
	remove_dir(gone);
	return 0;
}
