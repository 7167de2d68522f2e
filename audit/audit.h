/*
 * audit/audit.h — the tamper-evident audit log: JSON lines chained by
 * SHA-256, with checkpoints signed with Ed25519 (OpenSSL), and a signed
 * head file beside the log so that cutting its tail is evident too.
 *
 * A record is one line (compact JSON, sorted keys):
 *
 *   {"data":{...},"prev":"<hex>","seq":N,"time":"2026-11-25T09:00:00Z",
 *    "type":"dataset.import"}
 *
 * where prev is the SHA-256 of the previous line's bytes (without its
 * newline; 64 zeros for the first).  Every `checkpoint_every` records and
 * on close a checkpoint record is appended whose data is
 * {"key": <key id>, "sig": <base64 Ed25519 over the checkpoint message>};
 * the message is "cdsgate-audit-checkpoint v1\n<seq>\n<prev>\n", so one
 * signature vouches for everything before it.  After each checkpoint the
 * head file (<log>.head, replaced atomically) holds the last seq, the
 * hash of that line, and a signature over
 * "cdsgate-audit-head v1\n<seq>\n<hash>\n".
 *
 * Signing goes through a struct audit_signer: in the daemon that is a
 * request to the key-holder process (the only one with the private key);
 * in tests and tools it is a key in memory.
 *
 * Library code: no logging, no exit; AUDIT_* status codes and a message.
 */
#ifndef AUDIT_AUDIT_H
#define AUDIT_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define AUDIT_SIG_LEN		64	/* Ed25519 */
#define AUDIT_PUB_LEN		32
#define AUDIT_KEYID_LEN		16	/* hex chars of SHA-256(public key) */
#define AUDIT_LINE_MAX		(64 * 1024)

enum audit_status {
	AUDIT_OK = 0,
	AUDIT_EIO,		/* read/write/fsync failed (disk full, ...) */
	AUDIT_EINVAL,		/* bad argument */
	AUDIT_EKEY,		/* key file unreadable, wrong type or mode */
	AUDIT_ESIGN,		/* the signer failed */
	AUDIT_ECORRUPT,		/* the existing log is broken: refuse to append */
	AUDIT_ETAMPER		/* verify found a modification (see report) */
};

const char	*audit_strerror(int status);

/* Who signs checkpoints. */
struct audit_signer {
	int	(*sign)(void *ctx, const uint8_t *msg, size_t len,
		    uint8_t sig[AUDIT_SIG_LEN]);
	void	*ctx;
	char	 key_id[AUDIT_KEYID_LEN + 1];
};

/* ---- keys (audit/key.c) ---- */

struct audit_key;	/* an Ed25519 key pair or public key (OpenSSL) */

/* Generate a key pair; write the private key (PEM, 0600, refused if it
 * exists) and the public key (PEM, 0644). */
int	audit_key_generate(const char *priv_path, const char *pub_path,
	    char *err, size_t errlen);
/* Load a private key (refused when group/world-readable) or public key. */
int	audit_key_load_private(const char *path, struct audit_key **out,
	    char *err, size_t errlen);
int	audit_key_load_public(const char *path, struct audit_key **out,
	    char *err, size_t errlen);
void	audit_key_free(struct audit_key *k);		/* NULL: no-op */
/* A signer over an in-memory private key (borrowed, must outlive it). */
void	audit_key_signer(struct audit_key *k, struct audit_signer *s);
void	audit_key_id(const struct audit_key *k, char id[AUDIT_KEYID_LEN + 1]);
int	audit_key_verify(const struct audit_key *k, const uint8_t *msg,
	    size_t len, const uint8_t sig[AUDIT_SIG_LEN]);	/* 1 = valid */

/* ---- writing (audit/log.c) ---- */

struct audit_log;

/*
 * Open (create) the log for appending.  An existing log's tail is read
 * to continue the chain: its last line must parse and its seq/prev must
 * be consistent, or AUDIT_ECORRUPT (never append to a broken chain).
 */
int	audit_log_open(const char *path, const struct audit_signer *signer,
	    unsigned checkpoint_every, struct audit_log **out, char *err,
	    size_t errlen);
/* Append one record (data is stolen; NULL = {}), written and fsync'd. */
int	audit_log_append(struct audit_log *l, const char *type, json_t *data,
	    char *err, size_t errlen);
/* Append a signed checkpoint and replace the head file. */
int	audit_log_checkpoint(struct audit_log *l, char *err, size_t errlen);
/* Checkpoint (if anything was written since the last one) and close. */
int	audit_log_close(struct audit_log *l, char *err, size_t errlen);
uint64_t audit_log_seq(const struct audit_log *l);	/* next seq */
/* Records written since the last checkpoint (0: all signed). */
unsigned audit_log_unsigned(const struct audit_log *l);
/* The log's directory fd: the head file is replaced beneath it only. */
int	audit_log_dirfd(const struct audit_log *l);

/* SHA-256 of the log file (for a recording's digest, say), hex. */
int	audit_sha256_file(const char *path, char hex[65], char *err,
	    size_t errlen);

/* ---- verifying (audit/verify.c) ---- */

struct audit_report {
	uint64_t	records;	/* lines read and parsed */
	uint64_t	checkpoints;	/* valid signed checkpoints */
	uint64_t	unsigned_tail;	/* records after the last checkpoint */
	unsigned long	unsigned_line;	/* the first of them (0: none) */
	unsigned long	bad_line;	/* 1-based line of the first problem */
	char		problem[512];	/* "" when intact */
	/* files the chain vouches for (a closed recording: data "file",
	 * "sha256"), re-hashed after the chain and head were found intact */
	uint64_t	files_checked;	/* re-hashed and equal */
	uint64_t	files_expired;	/* record_expired: removed on purpose */
	uint64_t	files_truncated; /* recordings cut short ("truncated") */
	char		truncated_note[512];	/* the first such, with line */
};

enum audit_files {
	AUDIT_FILES_CHECK,	/* re-hash each; missing or changed: tamper */
	AUDIT_FILES_IF_PRESENT,	/* only those that can be read */
	AUDIT_FILES_SKIP	/* the chain only */
};

struct audit_verify_opts {
	enum audit_files	 files;
	const char		*dir;	/* NULL: the paths in the log; else
					   each file's name in this dir */
	int			 strict;	/* records after the last signed
						   checkpoint are a problem */
};

/*
 * Verify the whole log and its head file against the public key: every
 * line parses, seq runs 0, 1, 2, ..., each prev is the hash of the line
 * before, every checkpoint's signature is valid, and the head file
 * matches (so a cut tail shows).  Returns AUDIT_OK (intact),
 * AUDIT_ETAMPER with r->bad_line and r->problem naming the first
 * problem, or another status when the files can't be read.
 */
int	audit_verify(const char *path, const struct audit_key *pub,
	    struct audit_report *r, char *err, size_t errlen);
/* The same with a choice of how recordings are checked (the default
 * above: AUDIT_FILES_CHECK at the logged paths).  Records expired by
 * retention (record_expired with the same file and digest) are not.
 * o->strict: records after the last signed checkpoint (only the hash
 * chain vouches for them: anyone who can write the log could have
 * appended them) make it AUDIT_ETAMPER, naming the first of them. */
int	audit_verify_with(const char *path, const struct audit_key *pub,
	    const struct audit_verify_opts *o, struct audit_report *r,
	    char *err, size_t errlen);

/* ---- one recording's record (audit/lookup.c) ---- */

struct audit_vouch {
	int		 found;		/* a record_closed vouches for it */
	int		 same;		/* for this very digest */
	unsigned long	 line;		/* that record's line */
	char		 sha256[65];	/* the digest it vouches for */
	char		 session[128];
	char		 file[1024];	/* the path the record names */
	int		 expired;	/* a later record_expired removed it */
};

/*
 * Find the record_closed that vouches for a recording (path, its SHA-256
 * in hex, the session id in its header or NULL): the last one with that
 * digest (v->same), else the last one whose "file" is path or has its
 * file name, or whose "session" is session.  Returns AUDIT_OK (v->found
 * says whether one did) or AUDIT_EIO when the log cannot be read.  The
 * chain is not checked here (audit_verify).
 */
int	audit_vouch_find(const char *log, const char *path,
	    const char *sha256, const char *session, struct audit_vouch *v,
	    char *err, size_t errlen);

/* ---- reading and filtering (audit/query.c) ---- */

/* Call fn(record, line, arg) on each line of the log in order: record is
 * the parsed object, or NULL when the line is not a JSON object (the
 * caller says so: `audit verify` judges it).  fn returns nonzero to stop.
 * AUDIT_OK, or AUDIT_EIO with the path and errno text in err. */
int	audit_each(const char *log, int (*fn)(json_t *, unsigned long, void *),
	    void *arg, char *err, size_t errlen);

/* Is t a record type the daemon writes, "<type>.refused", or a family
 * ("dataset", "recipient", "record", "session": all of its types)? */
int	audit_type_known(const char *t);
/* The families and types, comma-separated, for an error message. */
void	audit_types_list(char *buf, size_t len);
/* ISO-8601 "2026-11-27", "2026-11-27T09:30[:00]" with "Z", "+01:00" or
 * nothing (UTC) to Unix seconds; a date alone is its first second, or
 * its last when end_of_day.  0, or -1 when it is not such a time. */
int	audit_time_parse(const char *s, int end_of_day, int64_t *out);

/* Which records `cdsgate audit list` shows (NULL: any). */
struct audit_query {
	const char	*type;		/* a type or a family */
	const char	*recipient;
	const char	*dataset;	/* its id, as text */
	const char	*session;
	const char	*since, *until;	/* ISO-8601, inclusive */
};
struct audit_filter;
/* AUDIT_EINVAL with err naming the bad value (an unknown type lists the
 * known ones). */
int	audit_filter_alloc(const struct audit_query *q,
	    struct audit_filter **out, char *err, size_t errlen);
void	audit_filter_free(struct audit_filter *f);	/* NULL: no-op */
/* Does this record match?  Feed every record in order: a session's
 * records match its recipient and dataset through its session.create. */
int	audit_filter_match(struct audit_filter *f, json_t *record);

/* ---- one session, for auditors (audit/report.c) ---- */

/*
 * What session id was, as a JSON object: session, recipient, dataset,
 * dataset_name, created, expires, started, ended (ISO-8601 UTC), end (how
 * it ended: record_closed's word, or session.failed's reason),
 * api_events (revoke, expire, extend, failed, end: time, reason, by),
 * recording {file, sha256, sha256_matches, size, duration_s, truncated,
 * audit_line, network_log {file, sha256, sha256_matches}}, connections
 * [{time, t, event, login ("ok", "refused", "-"), client, role, tls,
 * websocket, user, reason}], typed (the text the keys typed), keys
 * {delivered, filtered, rate_limited}, requests [{time, method, url,
 * status}] and problems (files that could not be read or are not the
 * chained ones).  Files are looked up at their logged paths, or by name
 * in dir.  AUDIT_OK; AUDIT_EINVAL when the log has no session.create of
 * id; AUDIT_EIO when the log cannot be read (err names it).
 */
int	audit_session_report(const char *log, const char *id, const char *dir,
	    json_t **out, char *err, size_t errlen);
/* The audit log's part of that alone (no file is read but the log):
 * session, recipient, dataset, dataset_name, created, expires, ended,
 * end, api_events, recording (as logged). */
int	audit_session_facts(const char *log, const char *id, json_t **out,
	    char *err, size_t errlen);

#endif
