/*
 * tests/unit/test-creds.c — the credentials file: strict parsing with
 * file:line errors, plain and scrypt secrets, the check (right, wrong,
 * unknown, over-long), and that the cost of a check does not depend on
 * whether the user exists.
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "policy/creds.h"
#include "tests/tap.h"

static int
parses(const char *text, char *why, size_t len)
{
	struct policy_error e;
	struct creds *c;
	int r;

	r = creds_parse(&c, text, strlen(text), "f", &e);
	if (why != NULL)
		snprintf(why, len, "%s", r == POLICY_OK ? "" : e.msg);
	creds_free(c);
	return r == POLICY_OK;
}

static void
test_parse(void)
{
	static const char *const bad[] = {
		"nocolon\n", ":pw\n", "a b:pw\n", "alice:\n",
		"alice:x\nalice:y\n", "# only a comment\n\n",
		"u:$scrypt$ln=9,r=8,p=1$0011223344556677$"
		    "00112233445566778899aabbccddeeff\n",	/* ln too small */
		"u:$scrypt$ln=14,r=8,p=1$0011$00112233445566778899aabbccddeeff\n",
		"u:$scrypt$ln=14,r=8,p=1$0011223344556677$0011\n",
		"u:$scrypt$ln=14,r=8,p=1$00112233445566zz$"
		    "00112233445566778899aabbccddeeff\n",
		"u:$scrypt$ln=14,r=8,p=1$0011223344556677$"
		    "00112233445566778899aabbccddeeff$extra\n",
	};
	char why[512];
	size_t i;

	tap_ok(parses("# users\nalice:secret\r\n\nbob:two words\n", NULL, 0),
	    "comments, blank lines, CRLF and spaces in secrets parse");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(!parses(bad[i], why, sizeof(why)) &&
		    strncmp(why, "f:", 2) == 0, "refused with file:line: %s",
		    why);
	tap_ok(!parses("a:b\nc:d\n\nbad line\n", why, sizeof(why)) &&
	    strncmp(why, "f:4:", 4) == 0, "the line number is right (%s)", why);
}

static void
test_check(void)
{
	struct policy_error e;
	struct creds *c = NULL;
	char hash[512], text[700], big[CREDS_PASS_MAX + 10];

	tap_ok(creds_hash("alice-pw", 8, hash, sizeof(hash), &e) == POLICY_OK &&
	    strncmp(hash, "$scrypt$ln=14,r=8,p=1$", 22) == 0,
	    "creds_hash makes a $scrypt$ secret");
	snprintf(text, sizeof(text), "alice:%s\nbob:bob-pw\n", hash);
	if (!tap_ok(creds_parse(&c, text, strlen(text), "f", &e) == POLICY_OK &&
	    creds_count(c) == 2, "a hashed and a plain user parse"))
		return;
	tap_ok(creds_check(c, "alice", 5, "alice-pw", 8), "alice, right");
	tap_ok(!creds_check(c, "alice", 5, "alice-pX", 8), "alice, wrong");
	tap_ok(!creds_check(c, "alice", 5, "alice-pw", 7), "alice, prefix");
	tap_ok(creds_check(c, "bob", 3, "bob-pw", 6), "bob (plain), right");
	tap_ok(!creds_check(c, "bob", 3, "bob-pw!", 7), "bob, longer");
	tap_ok(!creds_check(c, "bo", 2, "bob-pw", 6), "user name prefix");
	tap_ok(!creds_check(c, "eve", 3, "alice-pw", 8), "unknown user");
	tap_ok(!creds_check(c, "", 0, "", 0), "empty user and password");
	memset(big, 'a', sizeof(big));
	tap_ok(!creds_check(c, "alice", 5, big, sizeof(big)),
	    "an over-long password is refused, not cut");
	tap_ok(!creds_check(NULL, "alice", 5, "alice-pw", 8), "no creds: no");
	creds_free(c);
}

static double
secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A plain-text user, a hashed one and an unknown one all cost about one
 * default scrypt (tolerance wide: the machine is shared). */
static void
test_timing(void)
{
	struct policy_error e;
	struct creds *c = NULL;
	char hash[512], text[700];
	double t[3], t0;
	static const char *const users[] = { "alice", "bob", "eve" };
	int i, k;

	(void)creds_hash("x", 1, hash, sizeof(hash), &e);
	snprintf(text, sizeof(text), "alice:%s\nbob:plain\n", hash);
	if (creds_parse(&c, text, strlen(text), "f", &e) != POLICY_OK)
		return;
	for (i = 0; i < 3; i++) {
		t0 = secs();
		for (k = 0; k < 3; k++)
			(void)creds_check(c, users[i], strlen(users[i]), "y", 1);
		t[i] = (secs() - t0) / 3;
	}
	tap_diag("check: hashed %.1f ms, plain %.1f ms, unknown %.1f ms",
	    t[0] * 1e3, t[1] * 1e3, t[2] * 1e3);
	tap_ok(t[1] > 0.4 * t[0] && t[2] > 0.4 * t[0] && t[1] < 2.5 * t[0] &&
	    t[2] < 2.5 * t[0], "every kind of user costs about one scrypt");
	creds_free(c);
}

int
main(void)
{
	test_parse();
	test_check();
	test_timing();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
