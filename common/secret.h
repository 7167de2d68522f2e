/*
 * common/secret.h — random secrets and tokens from the kernel's CSPRNG
 * (getrandom), as text over a 64-character alphabet (A-Z a-z 0-9 - _),
 * so that each byte maps without bias.  Library code: no logging.
 */
#ifndef COMMON_SECRET_H
#define COMMON_SECRET_H

#include <stddef.h>

#define SECRET_TEXT_MAX	128

/* n (< SECRET_TEXT_MAX) random characters and a NUL into out (n + 1
 * bytes).  Returns 0, or -1 when the CSPRNG fails. */
int	secret_text(char *out, size_t n);

#endif
