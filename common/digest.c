/*
 * common/digest.c — SHA-256 over OpenSSL's EVP interface (see digest.h).
 *
 * Trust: hashes untrusted bytes (uploads, recordings, audit lines) but
 * never interprets them; the only state is OpenSSL's context.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/digest.h"

#define DIGEST_READ_CHUNK	65536

struct digest {
	EVP_MD_CTX	*ctx;
	int		 done;	/* final called: no more updates */
};

/* The hex forms: the digest in hex, or "" when there is none. */
static int
hex_if_ok(int rc, const uint8_t md[DIGEST_LEN], char hex[DIGEST_HEX_SIZE])
{
	if (rc == DIGEST_OK)
		digest_to_hex(md, hex);
	else
		hex[0] = '\0';
	return rc;
}

/* A context ready for updates, or NULL when OpenSSL has no memory. */
struct digest *
digest_alloc(void)
{
	struct digest *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if ((d->ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL) != 1) {
		digest_free(d);
		return NULL;
	}
	return d;
}

void
digest_free(struct digest *d)
{
	if (d == NULL)
		return;
	EVP_MD_CTX_free(d->ctx);
	free(d);
}

int
digest_update(struct digest *d, const void *p, size_t n)
{
	if (d->done)
		return DIGEST_EINVAL;
	if (n > 0 && EVP_DigestUpdate(d->ctx, p, n) != 1)
		return DIGEST_ECRYPTO;
	return DIGEST_OK;
}

/* Once: a second final would hash nothing and return garbage. */
int
digest_final(struct digest *d, uint8_t out[DIGEST_LEN])
{
	unsigned int len = 0;

	if (d->done)
		return DIGEST_EINVAL;
	d->done = 1;
	if (EVP_DigestFinal_ex(d->ctx, out, &len) != 1 || len != DIGEST_LEN)
		return DIGEST_ECRYPTO;
	return DIGEST_OK;
}

int
digest_final_hex(struct digest *d, char hex[DIGEST_HEX_SIZE])
{
	uint8_t md[DIGEST_LEN];

	return hex_if_ok(digest_final(d, md), md, hex);
}

void
digest_to_hex(const uint8_t d[DIGEST_LEN], char hex[DIGEST_HEX_SIZE])
{
	static const char x[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < DIGEST_LEN; i++) {
		hex[2 * i] = x[d[i] >> 4];
		hex[2 * i + 1] = x[d[i] & 0x0f];
	}
	hex[2 * DIGEST_LEN] = '\0';
}

int
digest_buf(const void *p, size_t n, uint8_t out[DIGEST_LEN])
{
	struct digest *d = digest_alloc();
	int rc;

	if (d == NULL)
		return DIGEST_ENOMEM;
	if ((rc = digest_update(d, p, n)) == DIGEST_OK)
		rc = digest_final(d, out);
	digest_free(d);
	return rc;
}

int
digest_buf_hex(const void *p, size_t n, char hex[DIGEST_HEX_SIZE])
{
	uint8_t md[DIGEST_LEN];

	return hex_if_ok(digest_buf(p, n, md), md, hex);
}

/* Read to EOF in fixed chunks: a file of any size, constant memory. */
int
digest_fd(int fd, uint8_t out[DIGEST_LEN])
{
	uint8_t *b = malloc(DIGEST_READ_CHUNK);
	struct digest *d = digest_alloc();
	ssize_t n;
	int rc = DIGEST_OK, saved;

	if (b == NULL || d == NULL) {
		rc = DIGEST_ENOMEM;
		goto out;
	}
	while (rc == DIGEST_OK) {
		n = read(fd, b, DIGEST_READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = DIGEST_EIO;
		else if (n == 0)
			break;
		else
			rc = digest_update(d, b, (size_t)n);
	}
	if (rc == DIGEST_OK)
		rc = digest_final(d, out);
out:
	saved = errno;
	free(b);
	digest_free(d);
	errno = saved;
	return rc;
}

int
digest_fd_hex(int fd, char hex[DIGEST_HEX_SIZE])
{
	uint8_t md[DIGEST_LEN];

	return hex_if_ok(digest_fd(fd, md), md, hex);
}

int
digest_file(const char *path, uint8_t out[DIGEST_LEN])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc, saved;

	if (fd < 0)
		return DIGEST_EIO;
	rc = digest_fd(fd, out);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
digest_file_hex(const char *path, char hex[DIGEST_HEX_SIZE])
{
	uint8_t md[DIGEST_LEN];

	return hex_if_ok(digest_file(path, md), md, hex);
}

const char *
digest_strerror(int status)
{
	switch (status) {
	case DIGEST_OK:
		return "ok";
	case DIGEST_ENOMEM:
		return "out of memory";
	case DIGEST_ECRYPTO:
		return "the SHA-256 implementation failed";
	case DIGEST_EIO:
		return "read error";
	case DIGEST_EINVAL:
		return "digest used after it was finished";
	}
	return "unknown digest status";
}
