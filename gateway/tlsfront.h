/*
 * gateway/tlsfront.h — the session's tls process: the only process of a
 * session that holds the TLS private key and the researchers'
 * credentials (relayd's `ca`, OpenSSH's monitor: the secret lives apart
 * from the code that parses untrusted RFB).
 *
 * A child of the supervisor (supervisor/roles.c, role "tls"), running as
 * `cdsgate`, not dumpable.  It builds its OpenSSL context from the PEM
 * bytes the supervisor read, wipes them, warms up what opens files
 * lazily (libgcrypt's DES, scrypt), and loads the seccomp profile TLS
 * before it reads a byte from anyone.  Then it serves the worker over the
 * protocol in gateway/tlsipc.h: the worker hands it each client that
 * must speak TLS; it runs the front door (gateway/vencrypt.c) and asks
 * the worker for a plaintext way into LibVNCServer once the client has
 * logged in.  Trust: unprivileged; parses untrusted TLS, VeNCrypt and
 * HTTP request bytes and the worker's messages (a worker that breaks the
 * protocol is assumed taken over: we exit, the session ends).
 */
#ifndef GATEWAY_TLSFRONT_H
#define GATEWAY_TLSFRONT_H

#include <stddef.h>

#include "policy/creds.h"

struct tlsfront_config {
	int			 ipc_fd;	/* our end of the worker's socket */
	char			*tls_cert;	/* PEM */
	size_t			 tls_cert_len;
	char			*tls_key;	/* PEM; wiped once loaded */
	size_t			 tls_key_len;
	const struct creds	*creds;		/* VeNCrypt users */
	const char		*inner_password; /* the library's VncAuth */
	int			 allow_plain;	/* offer VncAuth too */
	const char		*test_violate;	/* test hook, or NULL */
	int			 profile;	/* its seccomp profile (the
					   session's roles table: TLS) */
};

/* Run until SIGTERM or the worker goes away.  Returns the exit status:
 * 0 on SIGTERM, 1 when set-up failed or the worker broke the protocol
 * or vanished (fail closed: the supervisor ends the session). */
int	tlsfront_main(const struct tlsfront_config *cfg);

#endif
