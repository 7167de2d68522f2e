/*
 * common/secret.c — random text for one-time secrets, session ids and
 * websocket tokens (see common/secret.h).
 */
#include "config.h"

#include <string.h>
#include <sys/random.h>

#include "common/secret.h"

static const char alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int
secret_text(char *out, size_t n)
{
	unsigned char b[SECRET_TEXT_MAX];
	size_t i;

	if (n >= sizeof(b) || getrandom(b, n, 0) != (ssize_t)n)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = alphabet[b[i] & 63];
	out[n] = '\0';
	explicit_bzero(b, sizeof(b));
	return 0;
}
