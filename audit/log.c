/*
 * audit/log.c — appending to the audit log: one fsync'd write per
 * record, the SHA-256 chain, signed checkpoints and the signed head file
 * (format in audit/audit.h).
 *
 * Trust: writes only; the existing log's last line is parsed (bounded)
 * to continue the chain, and a log that does not end cleanly is refused
 * rather than extended.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "audit/audit.h"
#include "audit/audit-int.h"
#include "common/digest.h"

struct audit_log {
	int			 fd;
	int			 dirfd;		/* the log's directory */
	char			 path[PATH_MAX];
	char			 base[PATH_MAX];	/* path's last part */
	uint64_t		 seq;		/* of the next record */
	char			 prev[65];	/* hash of the last line */
	unsigned		 since_checkpoint;
	unsigned		 every;
	struct audit_signer	 signer;
};

uint64_t
audit_log_seq(const struct audit_log *l)
{
	return l->seq;
}

unsigned
audit_log_unsigned(const struct audit_log *l)
{
	return l->since_checkpoint;
}

int
audit_log_dirfd(const struct audit_log *l)
{
	return l->dirfd;
}

/* The head file is replaced through a directory fd held from the start,
 * so a confined key holder needs no path lookups (sandbox AUDIT). */
static int
log_open_dir(struct audit_log *l)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", l->path);
	slash = strrchr(dir, '/');
	snprintf(l->base, sizeof(l->base), "%s", slash != NULL ? slash + 1 :
	    dir);
	if (slash == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return l->dirfd >= 0 ? 0 : -1;
}

/* Read the last line of the file into line (NUL-terminated). */
static int
tail_line(int fd, off_t size, char *line, size_t len, char *err,
    size_t errlen)
{
	off_t from = size > (off_t)len - 1 ? size - (off_t)len + 1 : 0;
	ssize_t n = pread(fd, line, (size_t)(size - from), from);
	char *nl;

	if (n != size - from)
		return snprintf(err, errlen, "reading the log's tail: %s",
		    strerror(errno)), AUDIT_EIO;
	line[n] = '\0';
	if (n == 0 || line[n - 1] != '\n')
		return snprintf(err, errlen, "the log's last line is incomplete"
		    " (a crash or a full disk mid-write?): run `cdsgate audit "
		    "verify` before anything is appended"), AUDIT_ECORRUPT;
	line[n - 1] = '\0';
	nl = strrchr(line, '\n');
	if (nl == NULL && from > 0)
		return snprintf(err, errlen, "the log's last line is over %zu "
		    "bytes", len), AUDIT_ECORRUPT;
	if (nl != NULL)
		memmove(line, nl + 1, strlen(nl + 1) + 1);
	return AUDIT_OK;
}

static int	log_check_head(struct audit_log *, uint64_t, char *, size_t);

/* Continue the chain from the existing log's last line. */
static int
log_resume(struct audit_log *l, char *err, size_t errlen)
{
	static char line[AUDIT_LINE_MAX + 1];
	struct audit_line al;
	struct stat st;
	int rc;

	if (fstat(l->fd, &st) != 0)
		return snprintf(err, errlen, "%s: %s", l->path,
		    strerror(errno)), AUDIT_EIO;
	memset(l->prev, '0', 64);
	l->prev[64] = '\0';
	if (st.st_size == 0)
		return AUDIT_OK;
	if ((rc = tail_line(l->fd, st.st_size, line, sizeof(line), err,
	    errlen)) != AUDIT_OK)
		return rc;
	if (audit_line_parse(line, &al) != 0)
		return snprintf(err, errlen, "%s: the last line is not an audit"
		    " record: %s", l->path, al.problem), AUDIT_ECORRUPT;
	l->since_checkpoint = strcmp(al.type, AUDIT_CHECKPOINT) != 0;
	l->seq = al.seq + 1;
	digest_buf_hex(line, strlen(line), l->prev);
	return log_check_head(l, al.seq, err, errlen);
}

/* Never extend a log that is shorter than its head file says: the new
 * head would hide the cut.  (Full checks: audit_verify.) */
static int
log_check_head(struct audit_log *l, uint64_t last, char *err, size_t errlen)
{
	struct audit_head h;
	int rc = audit_head_read(l->path, &h);

	if (rc == 1)
		return AUDIT_OK;
	if (rc == -2)
		return snprintf(err, errlen, "%s.head: %s", l->path,
		    strerror(errno)), AUDIT_EIO;
	if (rc != 0)
		return snprintf(err, errlen, "%s.head is broken", l->path),
		    AUDIT_ECORRUPT;
	if (h.seq > last || (h.seq == last && strcmp(h.hash, l->prev) != 0))
		return snprintf(err, errlen, "%s ends at seq %llu but its head "
		    "file vouches for seq %llu: the log was cut or changed",
		    l->path, (unsigned long long)last,
		    (unsigned long long)h.seq), AUDIT_ECORRUPT;
	return AUDIT_OK;
}

int
audit_log_open(const char *path, const struct audit_signer *signer,
    unsigned every, struct audit_log **out, char *err, size_t errlen)
{
	struct audit_log *l;
	int rc;

	*out = NULL;
	if (strlen(path) + sizeof(".head.tmp") > PATH_MAX || signer == NULL)
		return snprintf(err, errlen, "bad log path or signer"),
		    AUDIT_EINVAL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->signer = *signer;
	l->every = every;
	l->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (l->fd < 0 || log_open_dir(l) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (l->fd >= 0)
			close(l->fd);
		free(l);
		return AUDIT_EIO;
	}
	if ((rc = log_resume(l, err, errlen)) != AUDIT_OK) {
		close(l->fd);
		close(l->dirfd);
		free(l);
		return rc;
	}
	*out = l;
	return AUDIT_OK;
}

/* Write all of buf, then fsync: a record is on disk or not written. */
static int
write_synced(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return fsync(fd);
}

/* "2026-11-25T09:00:00Z" */
static void
iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Format, write and chain one record (type not checked here). */
static int
log_write(struct audit_log *l, const char *type, json_t *data, char *err,
    size_t errlen)
{
	char now[32], *line;
	json_t *rec;
	size_t n;
	int rc = AUDIT_OK;

	iso_now(now, sizeof(now));
	rec = json_pack("{s:I, s:s, s:s, s:s, s:o}", "seq", (json_int_t)l->seq,
	    "time", now, "type", type, "prev", l->prev, "data",
	    data != NULL ? data : json_object());
	line = rec != NULL ? json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENSURE_ASCII) : NULL;
	json_decref(rec);
	if (line == NULL)
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	n = strlen(line);
	if (n >= AUDIT_LINE_MAX) {
		rc = AUDIT_EINVAL;
		snprintf(err, errlen, "record of %zu bytes is over the limit",
		    n);
	} else {
		line[n] = '\n';
		if (write_synced(l->fd, line, n + 1) != 0) {
			rc = AUDIT_EIO;
			snprintf(err, errlen, "%s: %s", l->path,
			    strerror(errno));
		} else {
			digest_buf_hex(line, n, l->prev);
			l->seq++;
		}
	}
	free(line);
	return rc;
}

int
audit_log_append(struct audit_log *l, const char *type, json_t *data,
    char *err, size_t errlen)
{
	int rc;

	if (!audit_type_valid(type) || strcmp(type, AUDIT_CHECKPOINT) == 0) {
		json_decref(data);
		return snprintf(err, errlen, "bad record type"), AUDIT_EINVAL;
	}
	if ((rc = log_write(l, type, data, err, errlen)) != AUDIT_OK)
		return rc;
	if (++l->since_checkpoint >= l->every && l->every > 0)
		return audit_log_checkpoint(l, err, errlen);
	return AUDIT_OK;
}

/* Sign msg into base64 text. */
static int
sign_b64(struct audit_log *l, const char *msg, char b64[89], char *err,
    size_t errlen)
{
	uint8_t sig[AUDIT_SIG_LEN];

	if (l->signer.sign(l->signer.ctx, (const uint8_t *)msg, strlen(msg),
	    sig) != 0)
		return snprintf(err, errlen, "the audit signer failed"),
		    AUDIT_ESIGN;
	EVP_EncodeBlock((unsigned char *)b64, sig, AUDIT_SIG_LEN);
	return AUDIT_OK;
}

/* Replace <log>.head atomically: {"seq", "hash", "key", "sig"}. */
static int
head_write(struct audit_log *l, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 16], dst[PATH_MAX + 16], msg[128], b64[89], *text;
	json_t *h;
	int fd, rc;

	audit_head_message(l->seq - 1, l->prev, msg, sizeof(msg));
	if ((rc = sign_b64(l, msg, b64, err, errlen)) != AUDIT_OK)
		return rc;
	snprintf(dst, sizeof(dst), "%s.head", l->base);
	snprintf(tmp, sizeof(tmp), "%s.head.tmp", l->base);
	h = json_pack("{s:I, s:s, s:s, s:s}", "seq", (json_int_t)(l->seq - 1),
	    "hash", l->prev, "key", l->signer.key_id, "sig", b64);
	text = h != NULL ? json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(h);
	if (text == NULL)
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	fd = openat(l->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0640);
	rc = fd >= 0 && write_synced(fd, text, strlen(text)) == 0 ? 0 : -1;
	if (fd >= 0 && close(fd) != 0)
		rc = -1;
	if (rc == 0)
		rc = renameat(l->dirfd, tmp, l->dirfd, dst);
	free(text);
	if (rc != 0) {
		snprintf(err, errlen, "%s.head: %s", l->path, strerror(errno));
		unlinkat(l->dirfd, tmp, 0);
		return AUDIT_EIO;
	}
	return AUDIT_OK;
}

int
audit_log_checkpoint(struct audit_log *l, char *err, size_t errlen)
{
	char msg[128], b64[89];
	int rc;

	audit_checkpoint_message(l->seq, l->prev, msg, sizeof(msg));
	if ((rc = sign_b64(l, msg, b64, err, errlen)) != AUDIT_OK)
		return rc;
	if ((rc = log_write(l, AUDIT_CHECKPOINT, json_pack("{s:s, s:s}",
	    "key", l->signer.key_id, "sig", b64), err, errlen)) != AUDIT_OK)
		return rc;
	l->since_checkpoint = 0;
	return head_write(l, err, errlen);
}

int
audit_log_close(struct audit_log *l, char *err, size_t errlen)
{
	int rc = AUDIT_OK;

	if (l == NULL)
		return AUDIT_OK;
	if (l->since_checkpoint > 0)
		rc = audit_log_checkpoint(l, err, errlen);
	close(l->dirfd);
	if (close(l->fd) != 0 && rc == AUDIT_OK) {
		snprintf(err, errlen, "%s: %s", l->path, strerror(errno));
		rc = AUDIT_EIO;
	}
	free(l);
	return rc;
}
