/*
 * common/grant.h — a session's dataset grant, as the one HTTP header the
 * jail's forwarder adds to every request it passes to an http:// backend
 * and the embedded analytics backend verifies (docs/analytics.md).
 *
 *     Cdsgate-Grant: v1:<session>:<dataset>:<expires>:<hmac>
 *
 * <hmac> is HMAC-SHA256, lower-case hex, under a 32-byte key that only
 * the process starting sessions (root) and the backend hold, over
 * "cdsgate-grant v1:<session>:<dataset>:<expires>".  The forwarder and
 * the browser never hold the key: a value names exactly the session and
 * dataset it was made for, and nobody inside a session can make another.
 *
 * Library code: no logging, no exit; GRANT_* statuses, grant_strerror().
 */
#ifndef COMMON_GRANT_H
#define COMMON_GRANT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GRANT_HEADER		"Cdsgate-Grant"
#define GRANT_KEY_LEN		32
#define GRANT_SESSION_MAX	64	/* with its NUL */
#define GRANT_VALUE_MAX		192	/* with its NUL */
/* What a value may hold (ids are A-Za-z0-9._-, the rest digits, hex, ':') */
#define GRANT_CHARSET	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789._-:"

enum grant_status {
	GRANT_OK = 0,
	GRANT_EMALFORMED,	/* not v1:session:dataset:expires:mac */
	GRANT_EMAC,		/* not made with this key */
	GRANT_EEXPIRED,		/* past its expiry */
	GRANT_EKEY,		/* the key file: missing, unreadable,
				   readable by others, not 64 hex digits */
	GRANT_ECRYPTO		/* OpenSSL refused */
};

struct grant {
	char	 session[GRANT_SESSION_MAX];	/* A-Za-z0-9._- */
	int64_t	 dataset;			/* the store's id, > 0 */
	int64_t	 expires;			/* unix time */
};

/* The key in `path` (64 hex digits on its first line, a regular file no
 * one but its owner may read).  With create, a missing file is made
 * (0600, from getrandom) first.  errno is kept for GRANT_EKEY. */
int	grant_key_load(const char *path, int create,
	    uint8_t key[GRANT_KEY_LEN]);
/* g signed into out ("v1:...", NUL-terminated). */
int	grant_sign(const uint8_t key[GRANT_KEY_LEN], const struct grant *g,
	    char out[GRANT_VALUE_MAX]);
/* The fields of v[0..len), unverified (for logging what was given). */
int	grant_parse(const char *v, size_t len, struct grant *g);
/* The fields of v[0..len) into g if key made it and it has not expired
 * at `now`; g is zeroed otherwise. */
int	grant_verify(const uint8_t key[GRANT_KEY_LEN], const char *v,
	    size_t len, time_t now, struct grant *g);
const char *grant_strerror(int status);

#endif
