/*
 * api/tcp.c — the admin API's optional TCP listener: the
 * socket, its TLS certificate and key, and the bearer tokens file.
 *
 * Trust: runs as root in the parent (bind) and in the api child before
 * the privilege drop and the seccomp filter (files); the files come from
 * the operator and are refused unless root-owned and closed to others.
 * check runs per request on untrusted Authorization headers: only
 * SHA-256 hashes are held, compared in constant time.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "api/api.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/log.h"

#define PEM_MAX		(64 * 1024)
#define TOKENS_FILE_MAX	(256 * 1024)

/* "ADDR:PORT" (IPv4, or [IPv6]:PORT) into a sockaddr. */
static int
tcp_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon = strrchr(spec, ':');
	unsigned long port;
	char *end;
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - spec)) == 0 ||
	    n >= sizeof(host))
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port == 0 || port > 65535)
		return -1;
	memcpy(host, spec, n);
	host[n] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*len = sizeof(*s4);
	return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
}

/* Root, before anything else: the listening TCP socket, or -1. */
int
api_tcp_bind(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (tcp_addr(spec, &ss, &len) != 0) {
		log_warnx("api_listen %s: wants a numeric "
		    "\"ADDR:PORT\" (IPv6: \"[ADDR]:PORT\")", spec);
		return -1;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
		log_warn("api_listen %s", spec);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A root-owned file nobody else may read, whole, NUL-terminated. */
static char *
secret_file(const char *path, size_t max, size_t *lenp, char *err,
    size_t errlen)
{
	struct stat st;
	char *p = NULL;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) ||
	    st.st_size <= 0 || (size_t)st.st_size >= max) {
		snprintf(err, errlen, "%s: must be a non-empty regular file "
		    "under %zu bytes, owned by root, mode 0600 or 0400 "
		    "(is uid %u, mode %04o)", path, max, (unsigned)st.st_uid,
		    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if ((p = calloc(1, (size_t)st.st_size + 1)) == NULL ||
	    (n = read(fd, p, (size_t)st.st_size)) != st.st_size) {
		snprintf(err, errlen, "%s: short read", path);
		free(p);
		p = NULL;
	} else if (lenp != NULL)
		*lenp = (size_t)n;
out:
	if (fd >= 0)
		close(fd);
	return p;
}

/* One "ROLE NAME SHA256HEX" line into t; 0 or -1 with why. */
static int
token_line(char *line, struct api_token *t, const char **why)
{
	char *role, *name, *hash, *extra, *save = NULL;
	size_t i;

	role = strtok_r(line, " \t", &save);
	name = strtok_r(NULL, " \t", &save);
	hash = strtok_r(NULL, " \t", &save);
	extra = strtok_r(NULL, " \t", &save);
	if (role == NULL || name == NULL || hash == NULL || extra != NULL)
		return *why = "wants \"ROLE NAME SHA256-HEX\"", -1;
	if (strcmp(role, "custodian") == 0)
		t->role = API_ROLE_CUSTODIAN;
	else if (strcmp(role, "auditor") == 0)
		t->role = API_ROLE_AUDITOR;
	else
		return *why = "ROLE must be custodian or auditor", -1;
	if (!store_id_valid(name) || strlen(name) >= sizeof(t->name))
		return *why = "NAME must be a valid id (letters, digits, "
		    "- _ .)", -1;
	if (strlen(hash) != 2 * DIGEST_LEN)
		return *why = "the hash must be 64 hex digits", -1;
	for (i = 0; i < DIGEST_LEN; i++) {
		unsigned v;

		if (sscanf(hash + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", hash[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", hash[2 * i + 1]))
			return *why = "the hash must be 64 hex digits", -1;
		t->hash[i] = (uint8_t)v;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

/* A NAME or hash already in k: two lines for one token are a mistake. */
static const char *
token_dup(const struct api_tokens *k, const struct api_token *t)
{
	size_t i;

	for (i = 0; i < k->n; i++) {
		if (strcmp(k->t[i].name, t->name) == 0)
			return "duplicate NAME";
		if (memcmp(k->t[i].hash, t->hash, sizeof(t->hash)) == 0)
			return "duplicate hash (one token, two lines)";
	}
	return NULL;
}

/* The next line of b into line (NUL-terminated, no "\r\n"); -1: too
 * long or holds a NUL. */
static int
token_next_line(struct buf *b, char *line, size_t size)
{
	static uint8_t eol[256];
	size_t len;

	eol['\n'] = 1;
	len = buf_span(b, eol, SIZE_MAX);
	if (len >= size)
		return -1;
	(void)buf_get_bytes(b, line, len);
	(void)buf_skip(b, buf_remaining(b) > 0 ? 1 : 0);
	if (len > 0 && line[len - 1] == '\r')
		len--;
	line[len] = '\0';
	return memchr(line, '\0', len) != NULL ? -1 : 0;
}

/* Every line of text into k; "#" comments and blank lines skipped.
 * path only names the file in "path:line: why". */
int
api_tokens_parse(const char *path, const void *text, size_t len,
    struct api_tokens *k, char *err, size_t errlen)
{
	char line[256], *p;
	const char *why = NULL;
	struct buf b;
	unsigned lineno;

	memset(k, 0, sizeof(*k));
	buf_init(&b, text, len);
	for (lineno = 1; !buf_eof(&b); lineno++) {
		if (token_next_line(&b, line, sizeof(line)) != 0) {
			why = "line too long or holds a NUL";
			break;
		}
		p = line + strspn(line, " \t");
		if (p[0] == '\0' || p[0] == '#')
			continue;
		if (k->n >= API_TOKENS_MAX)
			why = "too many tokens";
		else if (token_line(p, &k->t[k->n], &why) == 0)
			why = token_dup(k, &k->t[k->n]);
		if (why != NULL)
			break;
		k->n++;
	}
	explicit_bzero(line, sizeof(line));
	if (why != NULL)
		return snprintf(err, errlen, "%s:%u: %s", path, lineno, why),
		    -1;
	if (k->n == 0)
		return snprintf(err, errlen, "%s: no tokens", path), -1;
	return 0;
}

/* Before the drop and the filter: cert, key and tokens into t. */
int
api_tcp_load(const struct api_serve_args *a, struct api_tcp *t, char *err,
    size_t errlen)
{
	char *text;
	size_t len = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	t->fd = a->tcp_fd;
	if ((text = secret_file(a->tokens, TOKENS_FILE_MAX, &len, err,
	    errlen)) == NULL)
		return -1;
	rc = api_tokens_parse(a->tokens, text, len, &t->tokens, err, errlen);
	free(text);
	if (rc != 0)
		return -1;
	if ((t->key_pem = secret_file(a->tls_key, PEM_MAX, NULL, err,
	    errlen)) == NULL)
		return -1;
	if ((t->cert_pem = api_pem_read(a->tls_cert, err, errlen)) == NULL) {
		api_tcp_free(t);
		return -1;
	}
	t->desc = a->tcp_listen;
	return 0;
}

/* The certificate chain is public: any readable regular file. */
char *
api_pem_read(const char *path, char *err, size_t errlen)
{
	struct wbuf w;
	char chunk[4096], *p;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)),
		    NULL;
	wbuf_init(&w, PEM_MAX);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (wbuf_put(&w, chunk, (size_t)n) != BUF_OK)
			break;
	close(fd);
	if (n != 0 || w.len == 0 || wbuf_put_u8(&w, 0) != BUF_OK) {
		wbuf_free(&w);
		return snprintf(err, errlen, "%s: unreadable, empty or over "
		    "%d bytes", path, PEM_MAX), NULL;
	}
	p = strdup((char *)w.d);
	wbuf_free(&w);
	return p;
}

/* The key wiped before it is freed. */
void
api_tcp_free(struct api_tcp *t)
{
	if (t->key_pem != NULL) {
		explicit_bzero(t->key_pem, strlen(t->key_pem));
		free(t->key_pem);
	}
	free(t->cert_pem);
	t->key_pem = t->cert_pem = NULL;
}

/* The hash of the bearer token against every line, in constant time
 * (no early exit: the time does not say which line nearly matched). */
const struct api_token *
api_token_check(const struct api_tokens *k, const char *auth)
{
	uint8_t h[DIGEST_LEN];
	const struct api_token *found = NULL;
	size_t i;

	if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 ||
	    strlen(auth + 7) == 0 || strlen(auth + 7) > 512 ||
	    digest_buf(auth + 7, strlen(auth + 7), h) != DIGEST_OK)
		return NULL;
	for (i = 0; i < k->n; i++)
		if (CRYPTO_memcmp(h, k->t[i].hash, DIGEST_LEN) == 0)
			found = &k->t[i];
	explicit_bzero(h, sizeof(h));
	return found;
}

/* Root, before the fork: refuse a TCP API without TLS or tokens (or
 * without TLS in libmicrohttpd), then bind it.  0, or -1 after saying
 * why; a->tcp_fd is -1 when there is no api_listen. */
int
api_tcp_prepare(struct api_serve_args *a)
{
	a->tcp_fd = -1;
	if (a->tcp_listen == NULL)
		return 0;
	if (a->tls_cert == NULL || a->tls_key == NULL || a->tokens == NULL) {
		log_warnx("api_listen %s needs api_tls_cert, "
		    "api_tls_key and api_tokens (--tls-cert, --tls-key, "
		    "--tokens): the TCP API is never plaintext nor "
		    "unauthenticated", a->tcp_listen);
		return -1;
	}
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_warnx("this libmicrohttpd has no TLS: api_listen refused");
		return -1;
	}
	return (a->tcp_fd = api_tcp_bind(a->tcp_listen)) < 0 ? -1 : 0;
}
