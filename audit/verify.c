/*
 * audit/verify.c — checking an audit log end to end: every line parses,
 * seq runs without gaps, each prev is the hash of the line before, each
 * checkpoint is signed by the given key, the head file is signed and
 * matches the log (so a cut tail shows), and files whose digest entered
 * the chain (a record's data {"file", "sha256"}) are unchanged.
 *
 * Trust: everything read here may have been edited by an attacker:
 * bounded lines, parsed by audit/record.c; the first problem is reported
 * with its line number and nothing after it is trusted.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "audit/audit.h"
#include "audit/audit-int.h"
#include "common/digest.h"

/* A file the chain vouches for, checked once the chain is intact. */
struct vfile {
	unsigned long	 line;
	char		*file;
	char		*owner;		/* the recording a companion is of */
	char		 sha256[65];
	int		 expired;	/* a later record_expired removed it */
};

struct verify {
	const struct audit_key	*pub;
	const struct audit_verify_opts *o;
	struct vfile		*files;
	size_t			 nfiles, capfiles;
	char			 key_id[AUDIT_KEYID_LEN + 1];
	struct audit_report	*r;
	char			*err;		/* the caller's, for AUDIT_EIO */
	size_t			 errlen;
	char			 prev[65];	/* hash of the last good line */
	uint64_t		 seq;		/* expected next seq */
	struct audit_head	 head;
	int			 have_head;
	char			 head_line_hash[65];	/* of line head.seq */
};

static int
tamper(struct verify *v, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
tamper(struct verify *v, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	v->r->bad_line = line;
	va_start(ap, fmt);
	vsnprintf(v->r->problem, sizeof(v->r->problem), fmt, ap);
	va_end(ap);
	return AUDIT_ETAMPER;
}

/* Decode a base64 Ed25519 signature; 0 or -1. */
static int
sig_decode(const char *b64, uint8_t sig[AUDIT_SIG_LEN])
{
	uint8_t out[96];
	size_t n = strlen(b64);

	if (n != 88 || EVP_DecodeBlock(out, (const unsigned char *)b64,
	    (int)n) != 66)
		return -1;
	memcpy(sig, out, AUDIT_SIG_LEN);
	return 0;
}

/* Is b64 v's key's signature over msg (signed by key id `key`)? */
static int
sig_valid(const struct verify *v, const char *key, const char *b64,
    const char *msg)
{
	uint8_t sig[AUDIT_SIG_LEN];

	return strcmp(key, v->key_id) == 0 && sig_decode(b64, sig) == 0 &&
	    audit_key_verify(v->pub, (const uint8_t *)msg, strlen(msg), sig);
}

/* A recording cut short (its record_closed says truncated): noted. */
static void
note_truncated(struct verify *v, unsigned long n, json_t *d)
{
	json_t *t = json_object_get(d, "truncated");
	json_int_t us = json_integer_value(json_object_get(d, "duration_us"));
	const char *end = json_string_value(json_object_get(d, "end"));

	if (!json_is_true(t))
		return;
	if (v->r->files_truncated++ == 0)
		snprintf(v->r->truncated_note, sizeof(v->r->truncated_note),
		    "line %lu: %s is cut at %.3f s (session end: %s)", n,
		    json_string_value(json_object_get(d, "file")),
		    (double)us / 1e6, end != NULL ? end : "?");
}

/* Add one file the chain vouches for (owner: its recording, or NULL). */
static int
track_add(struct verify *v, unsigned long n, const char *file,
    const char *sha256, const char *owner)
{
	struct vfile *nf;

	if (v->nfiles == v->capfiles) {
		v->capfiles = v->capfiles ? 2 * v->capfiles : 16;
		if ((nf = realloc(v->files, v->capfiles * sizeof(*nf))) ==
		    NULL)
			return AUDIT_EIO;
		v->files = nf;
	}
	nf = &v->files[v->nfiles];
	memset(nf, 0, sizeof(*nf));
	if ((nf->file = strdup(file)) == NULL ||
	    (owner != NULL && (nf->owner = strdup(owner)) == NULL)) {
		free(nf->file);
		return AUDIT_EIO;
	}
	nf->line = n;
	memcpy(nf->sha256, sha256, 65);
	v->nfiles++;
	return AUDIT_OK;
}

/* A companion ({"file", "sha256"} under key) of recording `file`. */
static int
track_companion(struct verify *v, unsigned long n, json_t *d,
    const char *key, const char *file)
{
	json_t *c = json_object_get(d, key);
	const char *f = json_string_value(json_object_get(c, "file"));
	const char *h = json_string_value(json_object_get(c, "sha256"));

	if (f == NULL || h == NULL || strlen(h) != 64)
		return AUDIT_OK;
	return track_add(v, n, f, h, file);
}

/* Remember a file the chain vouches for, with the network log and
 * capture beside it; record_expired forgets all of them. */
static int
track_file(struct verify *v, unsigned long n, const char *type, json_t *d)
{
	const char *file = json_string_value(json_object_get(d, "file"));
	const char *want = json_string_value(json_object_get(d, "sha256"));
	size_t i;
	int rc;

	if (file == NULL || want == NULL || strlen(want) != 64)
		return AUDIT_OK;
	if (strcmp(type, "record_expired") == 0) {
		for (i = 0; i < v->nfiles; i++)
			if ((strcmp(v->files[i].file, file) == 0 &&
			    strcmp(v->files[i].sha256, want) == 0) ||
			    (v->files[i].owner != NULL &&
			    strcmp(v->files[i].owner, file) == 0))
				v->files[i].expired = 1;
		v->r->files_expired++;
		return AUDIT_OK;
	}
	if ((rc = track_add(v, n, file, want, NULL)) != AUDIT_OK ||
	    (rc = track_companion(v, n, d, "network", file)) != AUDIT_OK)
		return rc;
	return track_companion(v, n, d, "capture", file);
}

/* A record vouching for a file's digest: tracked until the end. */
static int
check_file(struct verify *v, unsigned long n, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	const char *type = json_string_value(json_object_get(o, "type"));
	int rc = AUDIT_OK;

	if (type != NULL && strcmp(type, "record_closed") == 0)
		note_truncated(v, n, json_object_get(o, "data"));
	if (type != NULL && v->o->files != AUDIT_FILES_SKIP)
		rc = track_file(v, n, type, json_object_get(o, "data"));
	json_decref(o);
	return rc;
}

/* Where to look for a file: its path, or its name in o->dir. */
static void
file_where(const struct verify *v, const char *file, char *buf, size_t len)
{
	const char *base = strrchr(file, '/');

	if (v->o->dir != NULL)
		snprintf(buf, len, "%s/%s", v->o->dir, base ? base + 1 : file);
	else
		snprintf(buf, len, "%s", file);
}

/* Is path there but closed to us (not missing: that is tampering)? */
static int
file_unreadable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno != ENOENT && errno != ENOTDIR;
	return access(path, R_OK) != 0;
}

/* Re-hash every file the chain still vouches for, in line order. */
static int
verify_files(struct verify *v)
{
	char got[65], err[256], where[4096];
	struct stat st;
	size_t i;

	for (i = 0; i < v->nfiles; i++) {
		struct vfile *f = &v->files[i];

		if (f->expired)
			continue;
		file_where(v, f->file, where, sizeof(where));
		/* only regular files: a FIFO or device would never end */
		if (stat(where, &st) == 0 && !S_ISREG(st.st_mode))
			return tamper(v, f->line, "%s is not a regular file "
			    "(its digest is in the chain)", where);
		if (audit_sha256_file(where, got, err, sizeof(err)) !=
		    AUDIT_OK) {
			if (v->o->files == AUDIT_FILES_IF_PRESENT)
				continue;
			if (file_unreadable(where))
				return snprintf(v->err, v->errlen, "%s (line %lu "
				    "vouches for it; this user cannot read it)",
				    err, f->line), AUDIT_EIO;
			return tamper(v, f->line, "%s (its digest is in the "
			    "chain and no record_expired removed it)", err);
		}
		v->r->files_checked++;
		if (strcmp(got, f->sha256) != 0)
			return tamper(v, f->line, "%s was replaced or modified: "
			    "sha256 %.16s... where the chain has %.16s...",
			    where, got, f->sha256);
	}
	return AUDIT_OK;
}

/* One line (without newline) at line number n. */
static int
verify_line(struct verify *v, unsigned long n, const char *line)
{
	struct audit_line al;
	char msg[128];

	if (audit_line_parse(line, &al) != 0)
		return tamper(v, n, "not an audit record (%s)", al.problem);
	if (al.seq != v->seq)
		return tamper(v, n, "seq %" PRIu64 " where %" PRIu64 " was "
		    "expected: records were deleted, inserted or reordered",
		    al.seq, v->seq);
	if (strcmp(al.prev, v->prev) != 0)
		return tamper(v, n, "its prev is not the hash of line %lu: "
		    "that line was modified, or records were removed or "
		    "reordered", n - 1);
	if (strcmp(al.type, AUDIT_CHECKPOINT) == 0) {
		audit_checkpoint_message(al.seq, al.prev, msg, sizeof(msg));
		if (!sig_valid(v, al.key, al.sig, msg))
			return tamper(v, n, "checkpoint signature is not valid "
			    "for key %s", v->key_id);
		v->r->checkpoints++;
		v->r->unsigned_tail = 0;
		v->r->unsigned_line = 0;
	} else if (v->r->unsigned_tail++ == 0)
		v->r->unsigned_line = n;
	digest_buf_hex(line, strlen(line), v->prev);
	if (v->have_head && al.seq == v->head.seq)
		memcpy(v->head_line_hash, v->prev, sizeof(v->prev));
	v->seq++;
	v->r->records++;
	return check_file(v, n, line);
}

/* Read the log line by line. */
static int
verify_lines(struct verify *v, FILE *f)
{
	static char line[AUDIT_LINE_MAX + 2];
	unsigned long n = 0;
	size_t len;
	int rc;

	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		len = strlen(line);
		if (len == 0 || line[len - 1] != '\n')
			return tamper(v, n, feof(f) ? "incomplete last line: the"
			    " log was cut in the middle of a record" :
			    "line over %d bytes", AUDIT_LINE_MAX);
		line[len - 1] = '\0';
		if ((rc = verify_line(v, n, line)) != AUDIT_OK)
			return rc;
	}
	return ferror(f) ? AUDIT_EIO : AUDIT_OK;
}

/* The head file against what was read. */
static int
verify_head(struct verify *v, unsigned long lines)
{
	char msg[128];

	if (!v->have_head)
		return v->r->records == 0 ? AUDIT_OK : tamper(v, lines,
		    "the head file is missing: a cut tail cannot be ruled out");
	audit_head_message(v->head.seq, v->head.hash, msg, sizeof(msg));
	if (!sig_valid(v, v->head.key, v->head.sig, msg))
		return tamper(v, lines, "the head file's signature is not valid "
		    "for key %s", v->key_id);
	if (v->r->records == 0 || v->head.seq > v->seq - 1)
		return tamper(v, lines, "the log was truncated: it ends at seq "
		    "%lld but the signed head vouches for seq %" PRIu64,
		    (long long)v->seq - 1, v->head.seq);
	if (strcmp(v->head_line_hash, v->head.hash) != 0)
		return tamper(v, (unsigned long)v->head.seq + 1, "the record "
		    "with seq %" PRIu64 " is not the one the signed head "
		    "vouches for", v->head.seq);
	return AUDIT_OK;
}

int
audit_verify(const char *path, const struct audit_key *pub,
    struct audit_report *r, char *err, size_t errlen)
{
	static const struct audit_verify_opts def = { AUDIT_FILES_CHECK,
	    NULL, 0 };

	return audit_verify_with(path, pub, &def, r, err, errlen);
}

int
audit_verify_with(const char *path, const struct audit_key *pub,
    const struct audit_verify_opts *o, struct audit_report *r, char *err,
    size_t errlen)
{
	struct verify v = { .pub = pub, .r = r, .o = o, .err = err,
	    .errlen = errlen };
	size_t i;
	FILE *f;
	int rc, hr;

	memset(r, 0, sizeof(*r));
	audit_key_id(pub, v.key_id);
	memset(v.prev, '0', 64);
	if ((hr = audit_head_read(path, &v.head)) == -2)
		return snprintf(err, errlen, "%s.head: %s", path,
		    strerror(errno)), AUDIT_EIO;
	if (hr < 0)
		return tamper(&v, 0, "the head file %s.head is broken", path);
	v.have_head = hr == 0;
	if ((f = fopen(path, "re")) == NULL)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)),
		    AUDIT_EIO;
	rc = verify_lines(&v, f);
	fclose(f);
	if (rc == AUDIT_EIO)
		snprintf(err, errlen, "%s: read error", path);
	if (rc == AUDIT_OK)
		rc = verify_head(&v, (unsigned long)r->records);
	if (rc == AUDIT_OK && o->strict && r->unsigned_tail > 0)
		rc = tamper(&v, r->unsigned_line, "%" PRIu64 " record%s after "
		    "the last signed checkpoint: no signature vouches for them "
		    "(appended by whoever can write the log, or not yet "
		    "checkpointed)", r->unsigned_tail, r->unsigned_tail == 1 ?
		    "" : "s");
	if (rc == AUDIT_OK)
		rc = verify_files(&v);
	for (i = 0; i < v.nfiles; i++) {
		free(v.files[i].file);
		free(v.files[i].owner);
	}
	free(v.files);
	return rc;
}

/* The audit API's form of digest_file_hex: the error said with the
 * path, as the verifier reports it. */
int
audit_sha256_file(const char *path, char hex[65], char *err, size_t errlen)
{
	int rc = digest_file_hex(path, hex);

	if (rc == DIGEST_OK)
		return AUDIT_OK;
	snprintf(err, errlen, "%s: %s", path, rc == DIGEST_EIO ?
	    strerror(errno) : digest_strerror(rc));
	return AUDIT_EIO;
}
