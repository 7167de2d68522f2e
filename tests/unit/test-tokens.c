/*
 * tests/unit/test-tokens.c — the TCP admin API's tokens file parser and
 * bearer check (api/tcp.c): good files parse, every kind of bad line is
 * refused with "path:line: why", and only the exact token matches.
 */
#include "config.h"

#include <string.h>

#include "api/api.h"
#include "common/digest.h"
#include "tests/tap.h"

static struct api_tokens k;
static char err[512];

/* Parse text; 0 or -1 (err set). */
static int
parse(const char *text)
{
	err[0] = '\0';
	return api_tokens_parse("t", text, strlen(text), &k, err, sizeof(err));
}

/* text refused with "t:LINE: ..." containing why. */
static void
refused(const char *text, unsigned line, const char *why)
{
	char want[32];

	if (line == 0)		/* the whole file */
		snprintf(want, sizeof(want), "t: ");
	else
		snprintf(want, sizeof(want), "t:%u: ", line);
	tap_ok(parse(text) != 0 && strncmp(err, want, strlen(want)) == 0 &&
	    strstr(err, why) != NULL, "refused at line %u: %s (%s)", line, why,
	    err);
}

int
main(void)
{
	char a[DIGEST_HEX_SIZE], b[DIGEST_HEX_SIZE], good[512], bad[1024];
	const struct api_token *t;

	digest_buf_hex("alice-token", 11, a);
	digest_buf_hex("bob-token", 9, b);
	snprintf(good, sizeof(good), "# tokens\n\ncustodian alice %s\r\n"
	    "  auditor\tbob %s\n", a, b);
	tap_ok(parse(good) == 0 && k.n == 2, "a good file parses (%s)", err);
	t = api_token_check(&k, "Bearer alice-token");
	tap_ok(t != NULL && t->role == API_ROLE_CUSTODIAN &&
	    strcmp(t->name, "alice") == 0, "alice's token: custodian alice");
	t = api_token_check(&k, "Bearer bob-token");
	tap_ok(t != NULL && t->role == API_ROLE_AUDITOR, "bob's: auditor");
	tap_ok(api_token_check(&k, "Bearer alice-tokenx") == NULL &&
	    api_token_check(&k, "Bearer alice-toke") == NULL &&
	    api_token_check(&k, "bearer alice-token") == NULL &&
	    api_token_check(&k, "Basic alice-token") == NULL &&
	    api_token_check(&k, "Bearer ") == NULL &&
	    api_token_check(&k, NULL) == NULL, "anything else matches nothing");
	snprintf(bad, sizeof(bad), "Bearer %s", a);
	tap_ok(api_token_check(&k, bad) == NULL, "the hash is not a token");

	refused("", 0, "no tokens");
	refused("# only a comment\n", 0, "no tokens");
	snprintf(bad, sizeof(bad), "custodian alice %s\nadmin eve %s\n", a, b);
	refused(bad, 2, "ROLE must be");
	snprintf(bad, sizeof(bad), "auditor .bob %s\n", b);
	refused(bad, 1, "NAME must be");
	refused("auditor bob 0123\n", 1, "64 hex");
	snprintf(bad, sizeof(bad), "auditor bob %.63sg\n", b);
	refused(bad, 1, "64 hex");
	snprintf(bad, sizeof(bad), "auditor bob\n");
	refused(bad, 1, "wants");
	snprintf(bad, sizeof(bad), "auditor bob %s x\n", b);
	refused(bad, 1, "wants");
	snprintf(bad, sizeof(bad), "custodian alice %s\nauditor alice %s\n",
	    a, b);
	refused(bad, 2, "duplicate NAME");
	snprintf(bad, sizeof(bad), "custodian alice %s\nauditor bob %s\n",
	    a, a);
	refused(bad, 2, "duplicate hash");
	memset(bad, 'x', 400);
	bad[400] = '\0';
	refused(bad, 1, "too long");
	tap_ok(api_tokens_parse("t", "auditor b\0b x\n", 14, &k, err,
	    sizeof(err)) != 0 && strstr(err, "t:1: ") != NULL,
	    "a NUL in a line is refused (%s)", err);
	return tap_done();
}
