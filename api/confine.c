/*
 * api/confine.c — the api process's own seccomp allow-list (profile API),
 * loaded by api_main once the store is open, the key holder and the gate
 * runner are forked and libmicrohttpd has its epoll fd, before the first
 * request is read.
 *
 * Trust: runs before any untrusted input; the test hook reads only the
 * operator's environment, and only in --enable-test-hooks builds.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "common/log.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

/* Enter API; 0, or -1 after saying why (the caller must not go on). */
int
api_confine(void)
{
	struct confine c;
	char err[256];

	/* jansson seeds its hash tables from /dev/urandom at first use */
	json_object_seed(0);
	confine_init(&c, "api");
	c.profile = SANDBOX_PROFILE_API;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		log_warnx("sandbox: %s", err);
		return -1;
	}
	log_info("sandbox %s, profile %s", sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_API));
#ifdef ENABLE_TEST_HOOKS
	/* CDSGATE_TEST_VIOLATE=api:CALL: prove the filter kills */
	if (getenv("CDSGATE_TEST_VIOLATE") != NULL &&
	    strncmp(getenv("CDSGATE_TEST_VIOLATE"), "api:", 4) == 0)
		sandbox_violate(getenv("CDSGATE_TEST_VIOLATE") + 4);
#endif
	return 0;
}
