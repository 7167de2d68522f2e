/*
 * common/grant.c — the session's dataset grant (see grant.h): signed by
 * the process that starts a session, verified by the analytics backend.
 *
 * Trust: grant_parse and grant_verify read a header value the backend
 * received (bounded, through common/buf.h cursors); the MAC is compared
 * in constant time.  The key never leaves the caller's buffer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/buf.h"
#include "common/grant.h"

#define GRANT_MAC_HEX	(2 * 32)
#define GRANT_CONTEXT	"cdsgate-grant v1:"

static const char hexd[] = "0123456789abcdef";

const char *
grant_strerror(int s)
{
	static const char *const msg[] = {
		[GRANT_OK] = "ok",
		[GRANT_EMALFORMED] = "malformed grant",
		[GRANT_EMAC] = "grant not made with this key",
		[GRANT_EEXPIRED] = "grant expired",
		[GRANT_EKEY] = "unusable grant key file",
		[GRANT_ECRYPTO] = "HMAC failed",
	};

	return s >= 0 && (size_t)s < sizeof(msg) / sizeof(msg[0]) ?
	    msg[s] : "unknown grant status";
}

static int
hexval(int c)
{
	const char *p = c != '\0' ? strchr(hexd, c) : NULL;

	return p != NULL ? (int)(p - hexd) : -1;
}

/* 64 hex digits into key; 0 or -1. */
static int
key_from_hex(const char *h, size_t n, uint8_t key[GRANT_KEY_LEN])
{
	size_t i;
	int hi, lo;

	if (n != 2 * GRANT_KEY_LEN)
		return -1;
	for (i = 0; i < GRANT_KEY_LEN; i++) {
		if ((hi = hexval(h[2 * i])) < 0 ||
		    (lo = hexval(h[2 * i + 1])) < 0)
			return -1;
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* A new key file: 0600, written whole or not at all (O_EXCL: a file
 * another process made meanwhile is read instead). */
static int
key_create(const char *path)
{
	uint8_t k[GRANT_KEY_LEN];
	char line[2 * GRANT_KEY_LEN + 1];
	size_t i;
	int fd, r = -1;

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
		return -1;
	for (i = 0; i < sizeof(k); i++) {
		line[2 * i] = hexd[k[i] >> 4];
		line[2 * i + 1] = hexd[k[i] & 15];
	}
	line[2 * GRANT_KEY_LEN] = '\n';
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0) {
		r = errno == EEXIST ? 0 : -1;
		goto out;
	}
	if (write(fd, line, sizeof(line)) == (ssize_t)sizeof(line) &&
	    fsync(fd) == 0)
		r = 0;
	if (close(fd) != 0 || r != 0) {
		unlink(path);
		r = -1;
	}
out:
	explicit_bzero(k, sizeof(k));
	explicit_bzero(line, sizeof(line));
	return r;
}

int
grant_key_load(const char *path, int create, uint8_t key[GRANT_KEY_LEN])
{
	char line[2 * GRANT_KEY_LEN + 2];
	struct stat st;
	ssize_t n;
	int fd, r = GRANT_EKEY;

	if (create && access(path, F_OK) != 0 && errno == ENOENT &&
	    key_create(path) != 0)
		return GRANT_EKEY;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return GRANT_EKEY;
	if (fstat(fd, &st) != 0)
		goto out;
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
		errno = EPERM;	/* others could read it, or not a file */
		goto out;
	}
	n = read(fd, line, sizeof(line));
	if (n >= 2 * GRANT_KEY_LEN && (n == 2 * GRANT_KEY_LEN ||
	    line[2 * GRANT_KEY_LEN] == '\n') &&
	    key_from_hex(line, 2 * GRANT_KEY_LEN, key) == 0)
		r = GRANT_OK;
	else
		errno = EINVAL;
out:
	explicit_bzero(line, sizeof(line));
	close(fd);
	return r;
}

/* HMAC-SHA256 of the grant's fields, as hex. */
static int
grant_mac(const uint8_t key[GRANT_KEY_LEN], const struct grant *g,
    char hex[GRANT_MAC_HEX + 1])
{
	char msg[GRANT_VALUE_MAX + 32];
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0, i;
	int n;

	n = snprintf(msg, sizeof(msg), GRANT_CONTEXT "%s:%" PRId64 ":%" PRId64,
	    g->session, g->dataset, g->expires);
	if (n < 0 || (size_t)n >= sizeof(msg) || HMAC(EVP_sha256(), key,
	    GRANT_KEY_LEN, (const unsigned char *)msg, (size_t)n, mac,
	    &maclen) == NULL || maclen != 32)
		return GRANT_ECRYPTO;
	for (i = 0; i < 32; i++) {
		hex[2 * i] = hexd[mac[i] >> 4];
		hex[2 * i + 1] = hexd[mac[i] & 15];
	}
	hex[GRANT_MAC_HEX] = '\0';
	return GRANT_OK;
}

/* A session id as the store makes them: 1-63 of A-Za-z0-9._- */
static int
session_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= GRANT_SESSION_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789._-", s[i]) == NULL || s[i] == '\0')
			return 0;
	return 1;
}

int
grant_sign(const uint8_t key[GRANT_KEY_LEN], const struct grant *g,
    char out[GRANT_VALUE_MAX])
{
	char hex[GRANT_MAC_HEX + 1];
	int r, n;

	out[0] = '\0';
	if (!session_ok(g->session, strlen(g->session)) || g->dataset <= 0 ||
	    g->expires <= 0)
		return GRANT_EMALFORMED;
	if ((r = grant_mac(key, g, hex)) != GRANT_OK)
		return r;
	n = snprintf(out, GRANT_VALUE_MAX, "v1:%s:%" PRId64 ":%" PRId64 ":%s",
	    g->session, g->dataset, g->expires, hex);
	if (n < 0 || n >= GRANT_VALUE_MAX) {
		out[0] = '\0';
		return GRANT_EMALFORMED;
	}
	return GRANT_OK;
}

/* The next ':'-separated field of b: its start and length.  1 when a
 * ':' followed it (consumed), 0 at the end, -1 on error. */
static int
field_next(struct buf *b, const uint8_t *colon, const char **f, size_t *n)
{
	uint8_t c;

	*f = (const char *)buf_ptr(b);
	*n = buf_span(b, colon, buf_remaining(b));
	if (buf_skip(b, *n) != BUF_OK)
		return -1;
	if (buf_eof(b))
		return 0;
	return buf_get_u8(b, &c) == BUF_OK ? 1 : -1;
}

/* A positive decimal without sign or leading zero, below 2^62. */
static int
decimal(const char *s, size_t n, int64_t *v)
{
	size_t i;

	*v = 0;
	if (n == 0 || n > 18 || s[0] == '0')
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* The five fields; mac gets the hex digits given. */
static int
grant_split(const char *v, size_t len, struct grant *g,
    char mac[GRANT_MAC_HEX + 1])
{
	static uint8_t colon[256];
	const char *f[5];
	size_t n[5], i;
	struct buf b;

	colon[':'] = 1;
	memset(g, 0, sizeof(*g));
	if (len == 0 || len >= GRANT_VALUE_MAX)
		return GRANT_EMALFORMED;
	buf_init(&b, v, len);
	for (i = 0; i < 5; i++)	/* four followed by ':', the last by the end */
		if (field_next(&b, colon, &f[i], &n[i]) != (i < 4))
			return GRANT_EMALFORMED;
	if (n[0] != 2 || memcmp(f[0], "v1", 2) != 0 ||
	    !session_ok(f[1], n[1]) || decimal(f[2], n[2], &g->dataset) != 0 ||
	    decimal(f[3], n[3], &g->expires) != 0 || n[4] != GRANT_MAC_HEX) {
		memset(g, 0, sizeof(*g));
		return GRANT_EMALFORMED;
	}
	for (i = 0; i < GRANT_MAC_HEX; i++)
		if (hexval(f[4][i]) < 0) {
			memset(g, 0, sizeof(*g));
			return GRANT_EMALFORMED;
		}
	memcpy(g->session, f[1], n[1]);
	g->session[n[1]] = '\0';
	memcpy(mac, f[4], GRANT_MAC_HEX);
	mac[GRANT_MAC_HEX] = '\0';
	return GRANT_OK;
}

int
grant_parse(const char *v, size_t len, struct grant *g)
{
	char mac[GRANT_MAC_HEX + 1];

	return grant_split(v, len, g, mac);
}

int
grant_verify(const uint8_t key[GRANT_KEY_LEN], const char *v, size_t len,
    time_t now, struct grant *g)
{
	char given[GRANT_MAC_HEX + 1], want[GRANT_MAC_HEX + 1];
	int r;

	if ((r = grant_split(v, len, g, given)) != GRANT_OK)
		return r;
	if ((r = grant_mac(key, g, want)) != GRANT_OK)
		goto fail;
	if (CRYPTO_memcmp(given, want, GRANT_MAC_HEX) != 0) {
		r = GRANT_EMAC;
		goto fail;
	}
	if (g->expires <= (int64_t)now) {
		r = GRANT_EEXPIRED;
		goto fail;
	}
	return GRANT_OK;
fail:
	memset(g, 0, sizeof(*g));
	return r;
}
