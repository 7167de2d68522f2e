/*
 * common/digest.h — SHA-256 of a buffer, a stream fed in pieces, or an
 * open file, as raw bytes or lower-case hex.  The one place the project
 * computes the digests it logs, names files by and chains records with.
 *
 * Library code: no logging, no exit; every function returns a
 * DIGEST_* status (digest_strerror() says it in words).  On DIGEST_EIO
 * errno is the read's.  On failure the output holds no digest (hex is
 * the empty string), so a caller that ignores the status cannot log or
 * compare a stale value.
 */
#ifndef COMMON_DIGEST_H
#define COMMON_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define DIGEST_LEN	32	/* SHA-256 */
#define DIGEST_HEX_SIZE	(DIGEST_LEN * 2 + 1)	/* hex digits and a NUL */

enum digest_status {
	DIGEST_OK = 0,
	DIGEST_ENOMEM,		/* no context (OpenSSL could not allocate) */
	DIGEST_ECRYPTO,		/* OpenSSL refused an init/update/final */
	DIGEST_EIO,		/* reading the file failed (errno) */
	DIGEST_EINVAL		/* used after it was finished */
};

/* The incremental form: alloc, update any number of times, final once,
 * free.  digest_free(NULL) is a no-op. */
struct digest;

struct digest	*digest_alloc(void);
int		 digest_update(struct digest *d, const void *p, size_t n);
int		 digest_final(struct digest *d, uint8_t out[DIGEST_LEN]);
int		 digest_final_hex(struct digest *d, char hex[DIGEST_HEX_SIZE]);
void		 digest_free(struct digest *d);

/* One buffer. */
int	digest_buf(const void *p, size_t n, uint8_t out[DIGEST_LEN]);
int	digest_buf_hex(const void *p, size_t n, char hex[DIGEST_HEX_SIZE]);

/* An open fd from its current offset to EOF (EINTR retried). */
int	digest_fd(int fd, uint8_t out[DIGEST_LEN]);
int	digest_fd_hex(int fd, char hex[DIGEST_HEX_SIZE]);

/* A file by path: opened read-only, O_NOFOLLOW not implied, O_NONBLOCK
 * so that a FIFO fails instead of hanging. */
int	digest_file(const char *path, uint8_t out[DIGEST_LEN]);
int	digest_file_hex(const char *path, char hex[DIGEST_HEX_SIZE]);

/* Raw to lower-case hex. */
void	digest_to_hex(const uint8_t d[DIGEST_LEN], char hex[DIGEST_HEX_SIZE]);

const char	*digest_strerror(int status);

#endif
