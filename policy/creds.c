/*
 * policy/creds.c — parse a credentials file and check a user name and
 * password against it in time that does not depend on which part was
 * wrong.  Library code (no logging, no exits); runs in the supervisor
 * (parse) and the worker (check, on untrusted network input).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "common/buf.h"
#include "policy/creds.h"

#define CREDS_SALT_MIN		8
#define CREDS_SALT_MAX		64
#define CREDS_KEY_MIN		16
#define CREDS_KEY_MAX		64
#define CREDS_MAX_USERS		1024
#define CREDS_DEF_LN		14
#define CREDS_DEF_R		8
#define CREDS_DEF_P		1

struct creds_entry {
	char		 user[CREDS_USER_MAX + 1];
	int		 hashed;
	unsigned	 ln, r, p;
	uint8_t		 salt[CREDS_SALT_MAX];
	size_t		 saltlen;
	/* hashed: the scrypt key; plain: SHA-256 of the password */
	uint8_t		 key[CREDS_KEY_MAX];
	size_t		 keylen;
};

struct creds {
	struct creds_entry	*e;
	size_t			 n;
	struct creds_entry	 dummy;	/* checked when the user is unknown */
};

static const char creds_user_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@+-";

size_t
creds_count(const struct creds *c)
{
	return c != NULL ? c->n : 0;
}

void
creds_free(struct creds *c)
{
	if (c == NULL)
		return;
	if (c->e != NULL) {
		explicit_bzero(c->e, c->n * sizeof(*c->e));
		free(c->e);
	}
	explicit_bzero(c, sizeof(*c));
	free(c);
}

/* scrypt with our bounds; 0 on success. */
static int
creds_scrypt(const char *pass, size_t plen, const struct creds_entry *e,
    uint8_t *out, size_t outlen)
{
	return EVP_PBE_scrypt(pass, plen, e->salt, e->saltlen,
	    (uint64_t)1 << e->ln, e->r, e->p, CREDS_MAXMEM, out, outlen) == 1 ?
	    0 : -1;
}

static int
creds_hex(const char *s, size_t n, uint8_t *out, size_t max, size_t *outlen)
{
	static const char hx[] = "0123456789abcdef";
	const char *a, *b;
	size_t i;

	if (n % 2 != 0 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if ((a = strchr(hx, s[2 * i] | 0x20)) == NULL || s[2 * i] == 0 ||
		    (b = strchr(hx, s[2 * i + 1] | 0x20)) == NULL ||
		    s[2 * i + 1] == 0)
			return -1;
		out[i] = (uint8_t)((a - hx) << 4 | (b - hx));
	}
	*outlen = n / 2;
	return 0;
}

/* "$scrypt$ln=L,r=R,p=P$SALT$KEY" (the secret is NUL-terminated). */
static int
creds_parse_hash(struct creds_entry *e, const char *sec)
{
	char salt[2 * CREDS_SALT_MAX + 3], key[2 * CREDS_KEY_MAX + 3];	/* %130[ + NUL */
	unsigned ln, r, p;
	int end = 0;

	if (sscanf(sec, "$scrypt$ln=%2u,r=%2u,p=%2u$%130[0-9a-fA-F]$"
	    "%130[0-9a-fA-F]%n", &ln, &r, &p, salt, key, &end) != 5 ||
	    sec[end] != '\0')
		return -1;
	if (ln < CREDS_LN_MIN || ln > CREDS_LN_MAX || r < 1 || r > 8 ||
	    p < 1 || p > 4)
		return -1;
	if (creds_hex(salt, strlen(salt), e->salt, CREDS_SALT_MAX,
	    &e->saltlen) != 0 || e->saltlen < CREDS_SALT_MIN ||
	    creds_hex(key, strlen(key), e->key, CREDS_KEY_MAX,
	    &e->keylen) != 0 || e->keylen < CREDS_KEY_MIN)
		return -1;
	e->hashed = 1;
	e->ln = ln;
	e->r = r;
	e->p = p;
	return 0;
}

/* One "user:secret" line into e; returns why it is bad, or NULL. */
static const char *
creds_parse_line(struct creds_entry *e, const char *line, size_t len)
{
	char sec[CREDS_PASS_MAX + 1];
	const char *colon = memchr(line, ':', len);
	size_t ulen, slen, i;

	memset(e, 0, sizeof(*e));
	if (colon == NULL)
		return "expected user:secret";
	ulen = (size_t)(colon - line);
	slen = len - ulen - 1;
	if (ulen == 0 || ulen > CREDS_USER_MAX)
		return "the user name must have 1 to 64 bytes";
	for (i = 0; i < ulen; i++)
		if (line[i] == '\0' || strchr(creds_user_chars, line[i]) == NULL)
			return "the user name may only contain A-Z a-z 0-9 . _ "
			    "@ + -";
	if (slen == 0 || slen > CREDS_PASS_MAX || memchr(colon + 1, '\0',
	    slen) != NULL)
		return "the secret must have 1 to 256 bytes (no NUL)";
	memcpy(e->user, line, ulen);
	memcpy(sec, colon + 1, slen);
	sec[slen] = '\0';
	if (strncmp(sec, "$scrypt$", 8) == 0) {
		i = (size_t)creds_parse_hash(e, sec);
		explicit_bzero(sec, sizeof(sec));
		return i == 0 ? NULL : "bad $scrypt$ secret (want "
		    "$scrypt$ln=10..16,r=1..8,p=1..4$SALT$KEY, hex, salt 8-64 "
		    "bytes, key 16-64 bytes)";
	}
	SHA256((const unsigned char *)sec, slen, e->key);
	e->keylen = SHA256_DIGEST_LENGTH;
	explicit_bzero(sec, sizeof(sec));
	return NULL;
}

static int
creds_dup_user(const struct creds *c, const char *user)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->e[i].user, user) == 0)
			return 1;
	return 0;
}

/* Parse every line; *lineno is where it failed. */
static const char *
creds_parse_lines(struct creds *c, struct buf *b, size_t cap, size_t *lineno)
{
	static uint8_t eol[256];
	const char *why;
	char line[CREDS_USER_MAX + CREDS_PASS_MAX + 4];
	size_t len;

	eol['\n'] = 1;
	for (*lineno = 1; !buf_eof(b); (*lineno)++) {
		len = buf_span(b, eol, SIZE_MAX);
		if (len >= sizeof(line))
			return "line too long";
		(void)buf_get_bytes(b, line, len);
		(void)buf_skip(b, buf_remaining(b) > 0 ? 1 : 0);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len == 0 || line[0] == '#')
			continue;
		if (c->n == cap)
			return "too many users";
		why = creds_parse_line(&c->e[c->n], line, len);
		explicit_bzero(line, sizeof(line));
		if (why != NULL)
			return why;
		if (creds_dup_user(c, c->e[c->n].user))
			return "duplicate user";
		c->n++;
	}
	return c->n == 0 ? "no credentials" : NULL;
}

/* A dummy entry of the default cost: an unknown user costs one scrypt. */
static void
creds_dummy(struct creds_entry *d)
{
	memset(d, 0, sizeof(*d));
	d->hashed = 1;
	d->ln = CREDS_DEF_LN;
	d->r = CREDS_DEF_R;
	d->p = CREDS_DEF_P;
	d->saltlen = 16;
	d->keylen = 32;
	(void)RAND_bytes(d->salt, (int)d->saltlen);
	(void)RAND_bytes(d->key, (int)d->keylen);
}

int
creds_parse(struct creds **cp, const char *data, size_t len,
    const char *path, struct policy_error *err)
{
	struct creds *c;
	struct buf b;
	const char *why;
	size_t lineno = 0, lines, i;

	*cp = NULL;
	for (i = 0, lines = 1; i < len && lines < CREDS_MAX_USERS + 1; i++)
		lines += data[i] == '\n';
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->e = calloc(lines, sizeof(*c->e))) == NULL) {
		free(c);
		return policy_error_set(err, POLICY_ENOMEM, "out of memory");
	}
	buf_init(&b, data, len);
	if ((why = creds_parse_lines(c, &b, lines < CREDS_MAX_USERS ? lines :
	    CREDS_MAX_USERS, &lineno)) != NULL) {
		creds_free(c);
		return policy_error_set(err, POLICY_EINPUT, "%s:%zu: %s",
		    path, lineno, why);
	}
	creds_dummy(&c->dummy);
	*cp = c;
	return POLICY_OK;
}

int
creds_load(struct creds **cp, const char *path, struct policy_error *err)
{
	char *data;
	size_t len;
	int r;

	*cp = NULL;
	if ((r = spec_read_file(path, "credentials file", CREDS_FILE_MAX, 1,
	    &data, &len, err)) != POLICY_OK)
		return r;
	r = creds_parse(cp, data, len, path, err);
	explicit_bzero(data, len);
	free(data);
	return r;
}

/* Constant-time equality of a NUL-padded user field and a given name. */
static int
creds_user_eq(const struct creds_entry *e, const char *user, size_t ulen)
{
	char u[CREDS_USER_MAX + 1];

	memset(u, 0, sizeof(u));
	memcpy(u, user, ulen);
	return CRYPTO_memcmp(u, e->user, sizeof(u)) == 0;
}

int
creds_check(const struct creds *c, const char *user, size_t ulen,
    const char *pass, size_t plen)
{
	const struct creds_entry *e = NULL;
	uint8_t got[CREDS_KEY_MAX];
	int ok, found = 0;
	size_t i;

	if (c == NULL)
		return 0;
	if (ulen > CREDS_USER_MAX || plen > CREDS_PASS_MAX)
		ulen = 0;	/* cannot match; still do the work */
	for (i = 0; i < c->n; i++)	/* no early exit */
		if (creds_user_eq(&c->e[i], user, ulen) && ulen > 0) {
			e = &c->e[i];
			found = 1;
		}
	if (e == NULL)
		e = &c->dummy;
	if (e->hashed)
		ok = creds_scrypt(pass, plen, e, got, e->keylen) == 0;
	else {
		/* as slow as an unknown user, or timing tells who exists */
		(void)creds_scrypt(pass, plen, &c->dummy, got, c->dummy.keylen);
		ok = SHA256((const unsigned char *)pass, plen, got) != NULL;
	}
	ok = ok && CRYPTO_memcmp(got, e->key, e->keylen) == 0;
	explicit_bzero(got, sizeof(got));
	return ok && found;
}

int
creds_hash(const char *pass, size_t plen, char *out, size_t outlen,
    struct policy_error *err)
{
	struct creds_entry e;
	char hs[2 * CREDS_SALT_MAX + 1], hk[2 * CREDS_KEY_MAX + 1];
	size_t i;
	int n;

	creds_dummy(&e);
	if (creds_scrypt(pass, plen, &e, e.key, e.keylen) != 0)
		return policy_error_set(err, POLICY_ENOMEM, "scrypt failed");
	for (i = 0; i < e.saltlen; i++)
		snprintf(hs + 2 * i, 3, "%02x", e.salt[i]);
	for (i = 0; i < e.keylen; i++)
		snprintf(hk + 2 * i, 3, "%02x", e.key[i]);
	n = snprintf(out, outlen, "$scrypt$ln=%u,r=%u,p=%u$%s$%s", e.ln, e.r,
	    e.p, hs, hk);
	explicit_bzero(&e, sizeof(e));
	explicit_bzero(hk, sizeof(hk));
	if (n < 0 || (size_t)n >= outlen)
		return policy_error_set(err, POLICY_EINPUT, "buffer too small");
	return POLICY_OK;
}
