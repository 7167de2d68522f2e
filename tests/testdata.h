/*
 * tests/testdata.h — where the unit tests find ../shared/data, the same
 * way tests/regress/lib.sh does: $CDSGATE_SHARED, else a "shared" folder
 * beside the source tree or up to three levels above it (for distcheck).
 * The data is read in place and never copied into the repository.
 */
#ifndef TESTS_TESTDATA_H
#define TESTS_TESTDATA_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The data folder, or NULL when it is absent (callers print a SKIP). */
static inline const char *
tests_shared_data(void)
{
	static char found[PATH_MAX + 64];
	static const char *const up[] = { "..", "../..", "../../..",
	    "../../../.." };
	char probe[PATH_MAX + 96];
	const char *env = getenv("CDSGATE_SHARED");
	const char *top = getenv("top_srcdir");
	size_t i;

	if (env != NULL && *env != '\0') {
		snprintf(found, sizeof(found), "%s/data", env);
		snprintf(probe, sizeof(probe), "%s/SOURCES.md", found);
		if (access(probe, R_OK) == 0)
			return found;
	}
	if (top == NULL)
		top = ".";
	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		snprintf(found, sizeof(found), "%s/%s/shared/data", top, up[i]);
		snprintf(probe, sizeof(probe), "%s/SOURCES.md", found);
		if (access(probe, R_OK) == 0)
			return found;
	}
	return NULL;
}

#endif
