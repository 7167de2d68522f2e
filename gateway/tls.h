/*
 * gateway/tls.h — server-side TLS (OpenSSL 3) for the worker's front
 * door, driven by the worker's poll loop: every call is non-blocking and
 * says whether it needs the socket readable or writable next.
 *
 * The context is built once, at start-up, from PEM bytes the supervisor
 * read (the worker opens no files once its loop runs, so a seccomp
 * filter may forbid open(2)).  TLS 1.2 and 1.3 only, certificate
 * authentication only: anonymous (aNULL) suites are never offered, see
 * docs/tls.md.  Trust: unprivileged; the bytes are untrusted network
 * input, parsed by OpenSSL.
 */
#ifndef GATEWAY_TLS_H
#define GATEWAY_TLS_H

#include <stddef.h>

enum tls_status {
	TLS_OK = 0,
	TLS_WANT_READ,		/* call again when the socket is readable */
	TLS_WANT_WRITE,		/* ... writable */
	TLS_EOF,		/* the peer closed the connection */
	TLS_ERROR,		/* protocol or socket error: drop the peer */
	TLS_ECONFIG,		/* bad certificate or key */
	TLS_ENOMEM
};

struct tls_ctx;
struct tls_conn;

/* A server context from PEM bytes: the certificate chain and its key
 * (which must match).  err gets OpenSSL's reason on failure. */
int	 tls_ctx_alloc(struct tls_ctx **cp, const char *cert_pem,
	    size_t cert_len, const char *key_pem, size_t key_len, char *err,
	    size_t errlen);
void	 tls_ctx_free(struct tls_ctx *c);

/* One server-side connection over a connected, non-blocking fd (the fd
 * stays the caller's: tls_conn_free does not close it). */
int	 tls_conn_alloc(struct tls_conn **tp, struct tls_ctx *c, int fd);
void	 tls_conn_free(struct tls_conn *t);

/* Drive the handshake: TLS_OK once done. */
int	 tls_handshake(struct tls_conn *t);
/* Read up to n bytes; *got is set on TLS_OK (never 0 on TLS_OK). */
int	 tls_read(struct tls_conn *t, void *buf, size_t n, size_t *got);
/* Write up to n bytes; *put is set on TLS_OK (partial writes happen).
 * After TLS_WANT_*, retry with the same bytes (they may have moved). */
int	 tls_write(struct tls_conn *t, const void *buf, size_t n, size_t *put);
/* Decrypted bytes OpenSSL holds that poll(2) cannot see. */
int	 tls_pending(const struct tls_conn *t);
/* Send close_notify (best effort, never blocks). */
void	 tls_shutdown(struct tls_conn *t);
/* "TLSv1.3", "TLS_AES_256_GCM_SHA384" once the handshake is done. */
const char *tls_version(const struct tls_conn *t);
const char *tls_cipher(const struct tls_conn *t);
/* Why the last TLS_ERROR happened (OpenSSL's reason, or errno's). */
const char *tls_error(const struct tls_conn *t);
const char *tls_strerror(int status);

#endif
