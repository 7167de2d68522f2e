/*
 * record/seal.c — what the audit log says about a finished recording:
 * its SHA-256, size, frame count, duration and whether it is cut short;
 * and the free-space check a session start must pass.
 *
 * Library code (no logging, no exit).  Runs as root in the session
 * supervisor and the parent, after the worker that wrote the file is
 * gone; the file is read as untrusted (record_reader_open bounds it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "record/record.h"

/* Digest and facts of a closed recording, for record_closed. */
int
record_seal(const char *path, struct record_seal *out, char *err,
    size_t errlen)
{
	struct record_reader *r = NULL;
	const struct record_info *in;
	uint8_t d[32];
	struct stat st;
	int rc, i;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno :
		    EINVAL));
		return RECORD_EIO;
	}
	if ((rc = record_file_sha256(path, d)) != RECORD_OK) {
		snprintf(err, errlen, "%s: cannot hash it", path);
		return rc;
	}
	for (i = 0; i < 32; i++)
		snprintf(out->sha256 + 2 * i, 3, "%02x", d[i]);
	out->size = (uint64_t)st.st_size;
	out->truncated = 1;	/* unless the reader finds an END chunk */
	if ((rc = record_reader_open(path, &r, err, errlen)) != RECORD_OK) {
		snprintf(out->reason, sizeof(out->reason), "%s", err);
		return RECORD_OK;	/* still a digest: no header is a cut */
	}
	in = record_reader_info(r);
	out->frames = in->keyframes + in->deltas;
	out->duration_us = in->duration_us;
	out->truncated = !in->complete;
	if (out->truncated)
		snprintf(out->reason, sizeof(out->reason), "%s",
		    in->trunc_reason[0] != '\0' ? in->trunc_reason :
		    "no END chunk");
	record_reader_free(r);
	return RECORD_OK;
}

/* mkdir -p of a record dir: the directories above it 0755 (auditors
 * must pass through them), the record dir itself 0700 (root's, as we
 * run) where we make it; record_share() opens it to the auditors. */
int
record_dir_make(const char *dir)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return errno = ENAMETOOLONG, -1;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, i < n ? 0755 : 0700) != 0 && errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : '\0';
	}
	return 0;
}

/* Fail closed: refuse a start when dir has less than min_mb free. */
int
record_dir_has_room(const char *dir, unsigned long min_mb, char *why,
    size_t whylen)
{
	struct statvfs sv;
	unsigned long long free_mb;

	if (min_mb == 0)
		return 1;
	if (statvfs(dir, &sv) != 0) {
		snprintf(why, whylen, "record dir %s: %s", dir,
		    strerror(errno));
		return 0;
	}
	free_mb = (unsigned long long)sv.f_bavail * sv.f_frsize >> 20;
	if (free_mb >= min_mb)
		return 1;
	snprintf(why, whylen, "record dir %s has %llu MB free, below "
	    "record_min_free_mb (%lu): disk full", dir, free_mb, min_mb);
	return 0;
}

/* Group gid (the auditors') may read path, a file or directory of ours:
 * owner kept, mode set; a symlink is refused (O_NOFOLLOW). */
int
record_share(const char *path, gid_t gid, mode_t mode)
{
	int fd, r, e;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) < 0)
		return -1;
	r = fchown(fd, (uid_t)-1, gid) != 0 || fchmod(fd, mode) != 0 ? -1 : 0;
	e = errno;
	close(fd);
	errno = e;
	return r;
}
