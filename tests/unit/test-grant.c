/*
 * tests/unit/test-grant.c — common/grant.c: a grant signed with a key
 * verifies with it and names its session and dataset; one changed field,
 * another key, an expiry in the past or any malformed value does not;
 * the key file is made 0600 and refused when others may read it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grant.h"
#include "tests/tap.h"

static int
verify(const uint8_t *key, const char *v, time_t now, struct grant *g)
{
	return grant_verify(key, v, strlen(v), now, g);
}

/* Every one-character change of a good value is refused. */
static void
check_mutations(const uint8_t *key, const char *good)
{
	char v[GRANT_VALUE_MAX];
	struct grant g;
	size_t i, n = strlen(good), accepted = 0;

	for (i = 0; i < n; i++) {
		snprintf(v, sizeof(v), "%s", good);
		v[i] = v[i] == '1' ? '2' : '1';
		if (verify(key, v, 1000, &g) == GRANT_OK)
			accepted++;
		if (g.dataset != 0 || g.session[0] != '\0')
			accepted++;	/* a refused grant names nothing */
	}
	tap_ok(accepted == 0, "every one of %zu one-character changes is "
	    "refused and names nothing (%zu accepted)", n, accepted);
}

static void
check_malformed(const uint8_t *key)
{
	static const char *const bad[] = {
		"", "v1", "v2:s-1:7:2000:", "v1:s-1:7:2000",
		"v1::7:2000:0000000000000000000000000000000000000000000000000000000000000000",
		"v1:s 1:7:2000:0000000000000000000000000000000000000000000000000000000000000000",
		"v1:s-1:07:2000:0000000000000000000000000000000000000000000000000000000000000000",
		"v1:s-1:-7:2000:0000000000000000000000000000000000000000000000000000000000000000",
		"v1:s-1:7:2000:000000000000000000000000000000000000000000000000000000000000000",
		"v1:s-1:7:2000:00000000000000000000000000000000000000000000000000000000000000000",
		"v1:s-1:7:2000:000000000000000000000000000000000000000000000000000000000000000G",
		"v1:s-1:7:2000:0000000000000000000000000000000000000000000000000000000000000000:",
		"v1:s-1:7:2000:0000000000000000000000000000000000000000000000000000000000000000 ",
	};
	struct grant g;
	size_t i, wrong = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (verify(key, bad[i], 1000, &g) != GRANT_EMALFORMED) {
			tap_diag("accepted as well-formed: '%s'", bad[i]);
			wrong++;
		}
	tap_ok(wrong == 0, "%zu malformed values are GRANT_EMALFORMED",
	    sizeof(bad) / sizeof(bad[0]));
}

static void
check_key_file(void)
{
	char dir[] = "/tmp/test-grant-XXXXXX", path[64];
	uint8_t k1[GRANT_KEY_LEN], k2[GRANT_KEY_LEN];
	struct stat st;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/grant.key", dir);
	tap_ok(grant_key_load(path, 0, k1) == GRANT_EKEY,
	    "a missing key without create: GRANT_EKEY");
	tap_ok(grant_key_load(path, 1, k1) == GRANT_OK && stat(path, &st) ==
	    0 && (st.st_mode & 0777) == 0600 && st.st_size == 65,
	    "create: a 0600 file of 64 hex digits and a newline");
	tap_ok(grant_key_load(path, 1, k2) == GRANT_OK &&
	    memcmp(k1, k2, sizeof(k1)) == 0,
	    "loaded again (create: no new key over an existing one)");
	chmod(path, 0640);
	tap_ok(grant_key_load(path, 0, k2) == GRANT_EKEY,
	    "a key its group may read is refused");
	chmod(path, 0600);
	truncate(path, 20);
	tap_ok(grant_key_load(path, 0, k2) == GRANT_EKEY,
	    "a short key file is refused");
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	uint8_t key[GRANT_KEY_LEN], other[GRANT_KEY_LEN];
	struct grant g = { "s-2RfWx.y_z", 17, 2000 }, out;
	char v[GRANT_VALUE_MAX], w[GRANT_VALUE_MAX];

	memset(key, 0x42, sizeof(key));
	memset(other, 0x43, sizeof(other));
	tap_ok(grant_sign(key, &g, v) == GRANT_OK && strncmp(v,
	    "v1:s-2RfWx.y_z:17:2000:", 23) == 0 && strlen(v) == 23 + 64,
	    "signed: %s", v);
	tap_ok(strspn(v, GRANT_CHARSET) == strlen(v),
	    "the value is within GRANT_CHARSET");
	tap_ok(verify(key, v, 1999, &out) == GRANT_OK &&
	    strcmp(out.session, g.session) == 0 && out.dataset == 17 &&
	    out.expires == 2000, "verified: session, dataset 17, expiry");
	tap_ok(verify(key, v, 2000, &out) == GRANT_EEXPIRED &&
	    out.dataset == 0, "at its expiry: GRANT_EEXPIRED, names nothing");
	tap_ok(verify(other, v, 1000, &out) == GRANT_EMAC,
	    "another key: GRANT_EMAC");
	g.dataset = 18;
	grant_sign(key, &g, w);
	memcpy(w + 23, v + 23, 64);	/* dataset 18 with 17's MAC */
	tap_ok(verify(key, w, 1000, &out) == GRANT_EMAC,
	    "another dataset with a valid grant's MAC: GRANT_EMAC");
	tap_ok(grant_parse(w, strlen(w), &out) == GRANT_OK &&
	    out.dataset == 18, "grant_parse reads the fields unverified");
	check_mutations(key, v);
	check_malformed(key);
	g.dataset = 0;
	tap_ok(grant_sign(key, &g, w) == GRANT_EMALFORMED && w[0] == '\0',
	    "dataset 0 is not signed");
	check_key_file();
	return tap_done();
}
