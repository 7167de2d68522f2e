/*
 * cli/cmd-token.c — `cdsgate token new ROLE NAME`: a bearer token for
 * the admin API's TCP listener, printed once, and the line for the
 * daemon's tokens file (which holds only the token's SHA-256).
 *
 * Runs as the invoking user; reads nothing but its arguments.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/digest.h"
#include "common/secret.h"

#define USAGE_NEW	"token new custodian|auditor NAME"
#define TOKEN_CHARS	43	/* 43 x 6 bits: 258 bits from getrandom */

/* Print a fresh token and its tokens-file line. */
static int
cmd_new(int argc, char **argv)
{
	char tok[TOKEN_CHARS + 1], hex[DIGEST_HEX_SIZE];
	size_t i;

	if (argc != 3)
		return cli_usage_error(USAGE_NEW, "ROLE and NAME expected");
	if (strcmp(argv[1], "custodian") != 0 &&
	    strcmp(argv[1], "auditor") != 0)
		return cli_usage_error(USAGE_NEW, "%s: the role is custodian "
		    "or auditor", argv[1]);
	for (i = 0; argv[2][i] != '\0'; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789-_.", argv[2][i]) == NULL || i >= 63)
			break;
	if (i == 0 || argv[2][i] != '\0' || argv[2][0] == '.' ||
	    argv[2][0] == '-')
		return cli_usage_error(USAGE_NEW, "NAME: 1-63 of a-z A-Z 0-9 "
		    "- _ .");
	if (secret_text(tok, TOKEN_CHARS) != 0 ||
	    digest_buf_hex(tok, TOKEN_CHARS, hex) != DIGEST_OK) {
		fprintf(stderr, "cdsgate: no random token could be made\n");
		return EXIT_INTERNAL;
	}
	printf("%s\n%s %s %s\n", tok, argv[1], argv[2], hex);
	fprintf(stderr, "cdsgate: line 1 is the token (shown only now: give "
	    "it to %s, e.g. in a 0600 --token-file); line 2 goes into the "
	    "daemon's api_tokens file\n", argv[2]);
	explicit_bzero(tok, sizeof(tok));
	return 0;
}

const struct cmd_entry cmd_token_new_entry = { "token", "new", USAGE_NEW,
    "make a bearer token for the TCP admin API", cmd_new };
