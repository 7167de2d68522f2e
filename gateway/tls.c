/*
 * gateway/tls.c — OpenSSL 3 server side of the front door: a context
 * from in-memory PEM, and non-blocking connections whose every call
 * reports what it waits for, so the worker's single poll loop drives any
 * number of handshakes without blocking.
 * Trust: unprivileged; the peer's bytes are untrusted (OpenSSL parses
 * them).  The key is wiped from OpenSSL's input buffer by the caller.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "gateway/tls.h"

/* TLS 1.2 suites: forward secret, AEAD, certificate-authenticated only.
 * (TLS 1.3 suites are all of that by construction.) */
#define TLS_CIPHERS_12	"ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL:!PSK:!SRP"

struct tls_ctx {
	SSL_CTX		*ctx;
};

struct tls_conn {
	SSL		*ssl;
	char		 why[160];
};

const char *
tls_strerror(int status)
{
	switch (status) {
	case TLS_OK:		return "ok";
	case TLS_WANT_READ:	return "wants to read";
	case TLS_WANT_WRITE:	return "wants to write";
	case TLS_EOF:		return "connection closed";
	case TLS_ERROR:		return "TLS error";
	case TLS_ECONFIG:	return "bad TLS certificate or key";
	case TLS_ENOMEM:	return "out of memory";
	}
	return "unknown TLS error";
}

/* OpenSSL's queued reason as text (and the queue emptied). */
static void
tls_reason(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (e == 0)
		snprintf(buf, len, "%s", errno ? strerror(errno) : "unknown");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
}

/* Certificate chain and key from memory; the key must match. */
static int
tls_ctx_load(SSL_CTX *ctx, const char *cert, size_t clen, const char *key,
    size_t klen)
{
	BIO *b = NULL;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int ok = 0;

	if ((b = BIO_new_mem_buf(cert, (int)clen)) == NULL ||
	    (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) == NULL ||
	    SSL_CTX_use_certificate(ctx, x) != 1)
		goto out;
	/* The rest of the file: intermediate certificates. */
	for (X509 *ca; (ca = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL;)
		if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
			X509_free(ca);
			goto out;
		}
	ERR_clear_error();	/* the loop ends on "no start line" */
	BIO_free(b);
	if ((b = BIO_new_mem_buf(key, (int)klen)) == NULL ||
	    (k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL)) == NULL ||
	    SSL_CTX_use_PrivateKey(ctx, k) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1)
		goto out;
	ok = 1;
out:
	EVP_PKEY_free(k);
	X509_free(x);
	BIO_free(b);
	return ok;
}

int
tls_ctx_alloc(struct tls_ctx **cp, const char *cert_pem, size_t cert_len,
    const char *key_pem, size_t key_len, char *err, size_t errlen)
{
	struct tls_ctx *c;
	SSL_CTX *ctx;
	int st = TLS_ECONFIG;

	*cp = NULL;
	if (cert_len > (size_t)INT32_MAX || key_len > (size_t)INT32_MAX)
		return TLS_ECONFIG;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return TLS_ENOMEM;
	if ((ctx = c->ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		st = TLS_ENOMEM;
		goto fail;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, TLS_CIPHERS_12) != 1)
		goto fail;
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION |
	    SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	/* No TLS 1.3 tickets either: we never resume, and a ticket record
	 * arriving together with the first RFB bytes can leave TigerVNC
	 * (GnuTLS) waiting on the socket with our data in its buffer. */
	if (SSL_CTX_set_num_tickets(ctx, 0) != 1)
		goto fail;
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);	/* no client certs */
	if (!tls_ctx_load(ctx, cert_pem, cert_len, key_pem, key_len))
		goto fail;
	*cp = c;
	return TLS_OK;
fail:
	if (err != NULL)
		tls_reason(err, errlen);
	tls_ctx_free(c);
	return st;
}

void
tls_ctx_free(struct tls_ctx *c)
{
	if (c == NULL)
		return;
	SSL_CTX_free(c->ctx);
	free(c);
}

int
tls_conn_alloc(struct tls_conn **tp, struct tls_ctx *c, int fd)
{
	struct tls_conn *t;

	*tp = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return TLS_ENOMEM;
	if ((t->ssl = SSL_new(c->ctx)) == NULL || SSL_set_fd(t->ssl, fd) != 1) {
		tls_conn_free(t);
		ERR_clear_error();
		return TLS_ENOMEM;
	}
	SSL_set_accept_state(t->ssl);
	*tp = t;
	return TLS_OK;
}

void
tls_conn_free(struct tls_conn *t)
{
	if (t == NULL)
		return;
	SSL_free(t->ssl);
	free(t);
}

/* Map an OpenSSL result to our status; keep the reason for the log. */
static int
tls_result(struct tls_conn *t, int r)
{
	int e = SSL_get_error(t->ssl, r);

	switch (e) {
	case SSL_ERROR_WANT_READ:
		return TLS_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLS_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		return TLS_EOF;
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_error() == 0 && errno == 0) {
			snprintf(t->why, sizeof(t->why), "unexpected EOF");
			return TLS_EOF;
		}
		/* FALLTHROUGH */
	default:
		tls_reason(t->why, sizeof(t->why));
		return TLS_ERROR;
	}
}

int
tls_handshake(struct tls_conn *t)
{
	int r;

	ERR_clear_error();
	errno = 0;
	if ((r = SSL_do_handshake(t->ssl)) == 1)
		return TLS_OK;
	return tls_result(t, r);
}

int
tls_read(struct tls_conn *t, void *buf, size_t n, size_t *got)
{
	int r;

	*got = 0;
	ERR_clear_error();
	errno = 0;
	if ((r = SSL_read_ex(t->ssl, buf, n, got)) == 1)
		return TLS_OK;
	return tls_result(t, r);
}

int
tls_write(struct tls_conn *t, const void *buf, size_t n, size_t *put)
{
	int r;

	*put = 0;
	ERR_clear_error();
	errno = 0;
	if ((r = SSL_write_ex(t->ssl, buf, n, put)) == 1)
		return TLS_OK;
	return tls_result(t, r);
}

int
tls_pending(const struct tls_conn *t)
{
	return SSL_pending(t->ssl) > 0;
}

void
tls_shutdown(struct tls_conn *t)
{
	if (t != NULL && SSL_is_init_finished(t->ssl))
		(void)SSL_shutdown(t->ssl);
	ERR_clear_error();
}

const char *
tls_version(const struct tls_conn *t)
{
	return SSL_get_version(t->ssl);
}

const char *
tls_cipher(const struct tls_conn *t)
{
	const char *c = SSL_get_cipher_name(t->ssl);

	return c != NULL ? c : "none";
}

const char *
tls_error(const struct tls_conn *t)
{
	return t->why[0] != '\0' ? t->why : "unknown";
}
