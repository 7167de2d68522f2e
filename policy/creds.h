/*
 * policy/creds.h — a session's per-recipient credentials (user name and
 * password) for the VeNCrypt front door (gateway/vencrypt.c).
 *
 * A credentials file has one "user:secret" per line ('#' comments and
 * blank lines ignored).  The secret is either a scrypt hash in the
 * format below (what the custodian tooling stores) or, for tests and
 * hand-made sessions, the password itself:
 *
 *   alice:$scrypt$ln=14,r=8,p=1$<salt, hex>$<key, hex>
 *   bob:correct horse battery staple
 *
 * key = scrypt(password, salt, N = 2^ln, r, p, len(key)).  Verification
 * takes the same time whether the user exists or not, and compares in
 * constant time.  Library code: no logging, no exits.
 * Trust: the file comes from the operator (parsed strictly); user name
 * and password come from the network.
 */
#ifndef POLICY_CREDS_H
#define POLICY_CREDS_H

#include <stddef.h>

#include "policy/spec.h"

#define CREDS_USER_MAX		64	/* bytes of a user name */
#define CREDS_PASS_MAX		256	/* bytes of a password */
#define CREDS_FILE_MAX		(64 * 1024)
#define CREDS_LN_MIN		10	/* scrypt cost bounds (N = 2^ln) */
#define CREDS_LN_MAX		16	/* 2^16 * r=8 * 128 = 64 MiB */
#define CREDS_MAXMEM		((size_t)130 << 20)

struct creds;

/* Parse credentials text; `path` only names the file in errors. */
int	 creds_parse(struct creds **cp, const char *data, size_t len,
	    const char *path, struct policy_error *err);
/* Read (refused if group/world readable) and parse a credentials file. */
int	 creds_load(struct creds **cp, const char *path,
	    struct policy_error *err);
void	 creds_free(struct creds *c);	/* wipes */
size_t	 creds_count(const struct creds *c);

/* 1 if user/password match an entry, else 0.  Never exits early. */
int	 creds_check(const struct creds *c, const char *user, size_t ulen,
	    const char *pass, size_t plen);

/* Format a "$scrypt$..." secret for pass with a fresh random salt and
 * the default cost (ln=14, r=8, p=1). */
int	 creds_hash(const char *pass, size_t plen, char *out, size_t outlen,
	    struct policy_error *err);

#endif
