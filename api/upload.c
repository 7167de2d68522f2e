/*
 * api/upload.c — PUT /v1/uploads: a raw dataset or hierarchy file
 * streamed into the api's private spool, named by its SHA-256.
 *
 * The body never sits in memory: each chunk goes to a temp file (0600,
 * the api user's) and into the digest; at the end the file is fsync'd
 * and renamed to <spool>/<sha256>.  A cut upload leaves no file (the
 * temp is removed), an oversized one is refused with 413 while it
 * streams.  The spool is never readable by the backend or the browser.
 *
 * Trust: unprivileged; the body is untrusted bytes, only counted,
 * hashed and stored.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "common/digest.h"

struct upload {
	int		 fd;
	char		 tmp[PATH_MAX];
	struct digest	*md;
	uint64_t	 bytes;
	int		 failed;	/* write error: reply 507 at the end */
	int		 too_large;
};

struct upload *
upload_begin(const char *spool, char *err, size_t errlen)
{
	struct upload *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return snprintf(err, errlen, "out of memory"), NULL;
	snprintf(u->tmp, sizeof(u->tmp), "%s/.upload-XXXXXX", spool);
	if ((u->fd = mkostemp(u->tmp, O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "spool %s: %s", spool, strerror(errno));
		free(u);
		return NULL;
	}
	if ((u->md = digest_alloc()) == NULL) {
		snprintf(err, errlen, "out of memory");
		upload_abort(u);
		return NULL;
	}
	return u;
}

void
upload_write(struct upload *u, const char *data, size_t n)
{
	ssize_t w;

	if (u->failed || u->too_large)
		return;
	if (u->bytes + n > API_MAX_UPLOAD) {
		u->too_large = 1;
		return;
	}
	u->bytes += n;
	if (digest_update(u->md, data, n) != DIGEST_OK) {
		u->failed = EIO;	/* never name a file by a wrong digest */
		return;
	}
	while (n > 0) {
		if ((w = write(u->fd, data, n)) < 0) {
			if (errno == EINTR)
				continue;
			u->failed = errno;
			return;
		}
		data += w;
		n -= (size_t)w;
	}
}

void
upload_abort(struct upload *u)
{
	if (u == NULL)
		return;
	if (u->fd >= 0) {
		close(u->fd);
		unlink(u->tmp);
	}
	digest_free(u->md);
	free(u);
}

/* Finish: fsync, rename to <spool>/<sha256>; reply on r.  Frees u. */
int
upload_end(struct upload *u, const char *spool, struct api_req *r)
{
	char hex[DIGEST_HEX_SIZE], dst[PATH_MAX];

	int too_large = u->too_large, failed = u->failed;

	if (too_large || failed || u->bytes == 0) {
		upload_abort(u);
		if (too_large)
			return api_error(r, 413, "too_large", "upload over %llu "
			    "bytes", (unsigned long long)API_MAX_UPLOAD);
		if (failed)
			return api_error(r, 507, "spool", "the spool is full or "
			    "failing: %s", strerror(failed));
		return api_error(r, 400, "empty", "an upload needs a body");
	}
	if (digest_final_hex(u->md, hex) != DIGEST_OK) {
		upload_abort(u);
		return api_error(r, 500, "internal", "sha256 failed");
	}
	snprintf(dst, sizeof(dst), "%s/%s", spool, hex);
	if (fsync(u->fd) != 0 || rename(u->tmp, dst) != 0) {
		int e = errno;

		upload_abort(u);
		return api_error(r, 507, "spool", "storing the upload: %s",
		    strerror(e));
	}
	close(u->fd);
	u->fd = -1;
	if (api_audit(r, "upload", json_pack("{s:s, s:I}", "sha256", hex,
	    "bytes", (json_int_t)u->bytes)) != 0) {
		unlink(dst);	/* not audited: not kept */
		upload_abort(u);
		return -1;
	}
	api_reply(r, 201, json_pack("{s:s, s:I}", "upload", hex, "bytes",
	    (json_int_t)u->bytes));
	upload_abort(u);
	return 0;
}
