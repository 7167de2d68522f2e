/*
 * tests/testcert.h — a throw-away TLS context for tests and fuzz targets
 * of the front door: a self-signed P-256 certificate made in memory.
 */
#ifndef TESTS_TESTCERT_H
#define TESTS_TESTCERT_H

#include <stddef.h>

#include "gateway/tls.h"

/* A server context with a fresh self-signed certificate: 0, or -1 with
 * the reason in err. */
int	testcert_tls(struct tls_ctx **tls, char *err, size_t errlen);

#endif
