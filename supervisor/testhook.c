/*
 * supervisor/testhook.c — parses CDSGATE_TEST_VIOLATE (testhook.h).
 *
 * Trust: root supervisor; reads only the operator's environment.  Built
 * to a no-op unless configure --enable-test-hooks.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "supervisor/testhook.h"

/* Which role commits which forbidden call; "worker" when no ROLE: is
 * given.  Anything else is refused, so a typo cannot go unnoticed. */
int
test_hook_get(const char **role, const char **call)
{
#ifdef ENABLE_TEST_HOOKS
	static const char *const calls[] = { "open", "socket", "execve",
	    "ptrace", NULL };
	static const char *const hookable[] = { "worker", "xvfb",
	    "forward", "tls" };
	const char *v = getenv("CDSGATE_TEST_VIOLATE"), *c, *colon;
	size_t i, n;

	if (v == NULL || *v == '\0')
		return 0;
	*role = hookable[0];
	c = v;
	if ((colon = strchr(v, ':')) != NULL) {
		n = (size_t)(colon - v);
		for (i = 0; i < sizeof(hookable) / sizeof(hookable[0]); i++)
			if (strlen(hookable[i]) == n &&
			    strncmp(v, hookable[i], n) == 0)
				break;
		if (i == sizeof(hookable) / sizeof(hookable[0]))
			goto bad;
		*role = hookable[i];
		c = colon + 1;
	}
	for (i = 0; calls[i] != NULL; i++)
		if (strcmp(c, calls[i]) == 0)
			break;
	if (calls[i] == NULL)
		goto bad;
	*call = calls[i];
	return 1;
bad:
	log_warnx("CDSGATE_TEST_VIOLATE=%s: want [worker:|xvfb:|forward:|tls:]"
	    "open|socket|execve|ptrace", v);
	return -1;
#else
	(void)role;
	(void)call;
	return 0;
#endif
}
