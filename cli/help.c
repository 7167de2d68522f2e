/*
 * cli/help.c — cdsgate's help and completion, from the command table:
 * `cdsgate --help`, `cdsgate NOUN [VERB] --help` (text wrapped to 80
 * columns) and `cdsgate --complete WORD...`, the candidates the bash
 * completion offers (nouns, verbs, then the long options of the
 * command's usage line).  Runs as the invoking user; prints only.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define HELP_WIDTH	80

/* Print text word by word after `col` columns already printed: a space
 * before each word but the first of a continuation line, continuation
 * lines indented by `indent`, no line past HELP_WIDTH unless one word
 * alone is longer. */
static void
wrap(FILE *f, size_t col, size_t indent, const char *text)
{
	const char *p = text;
	size_t n;
	int fresh = 0;

	for (;;) {
		p += strspn(p, " ");
		if ((n = strcspn(p, " ")) == 0)
			break;
		if (!fresh && col + 1 + n > HELP_WIDTH && col > indent) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			fresh = 1;
		}
		if (!fresh) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += n;
		p += n;
		fresh = 0;
	}
	fputc('\n', f);
}

void
cli_print_usage(FILE *f, const char *usage)
{
	fputs("usage: cdsgate", f);
	wrap(f, strlen("usage: cdsgate"), 8, usage);
}

/* One command: its usage line, then what it does. */
static void
help_entry(FILE *f, const struct cmd_entry *c)
{
	fputs("  cdsgate", f);
	wrap(f, strlen("  cdsgate"), 8, c->usage);
	fputs("    ", f);
	wrap(f, 4, 5, c->help);
}

void
cli_help_all(FILE *f, const struct cmd_entry *const *table)
{
	const struct cmd_entry *const *c;

	fputs("usage: cdsgate [--api https://HOST:PORT --token-file F "
	    "[--cacert F]]\n               <command> [options]\n\n"
	    "commands (`cdsgate COMMAND --help` for one):\n", f);
	for (c = table; *c != NULL; c++)
		help_entry(f, *c);
}

int
cli_help(const struct cmd_entry *const *table, const char *noun,
    const char *verb)
{
	const struct cmd_entry *const *c;
	int n = 0, exact = 0;

	for (c = table; *c != NULL; c++)
		if (strcmp((*c)->noun, noun) == 0 && verb != NULL &&
		    (*c)->verb != NULL && strcmp((*c)->verb, verb) == 0)
			exact = 1;
	for (c = table; *c != NULL; c++) {
		if (strcmp((*c)->noun, noun) != 0 || (exact &&
		    strcmp((*c)->verb, verb) != 0))
			continue;
		help_entry(stdout, *c);
		n++;
	}
	if (n > 0)
		return 0;
	fprintf(stderr, "cdsgate: unknown command '%s'\n", noun);
	cli_help_all(stderr, table);
	return EXIT_BAD_INPUT;
}

/* Each distinct "--option" of the usage line, once per line. */
static void
complete_options(const char *usage)
{
	const char *p = usage, *end, *q;
	size_t n;

	while ((p = strstr(p, "--")) != NULL) {
		end = p + 2 + strspn(p + 2,
		    "abcdefghijklmnopqrstuvwxyz0123456789-");
		n = (size_t)(end - p);
		for (q = strstr(usage, "--"); q < p; q = strstr(q + 2, "--"))
			if (strncmp(q, p, n) == 0 && strchr("abcdefghijklmnopq"
			    "rstuvwxyz0123456789-", q[n]) == NULL)
				break;
		if (q == p && n > 2)
			printf("%.*s\n", (int)n, p);
		p = end;
	}
	printf("--help\n");
}

int
cli_complete(const struct cmd_entry *const *table, int argc, char **argv)
{
	const struct cmd_entry *const *c;
	const char *last = NULL;

	for (c = table; *c != NULL; c++) {
		if (argc == 0) {
			if (last == NULL || strcmp(last, (*c)->noun) != 0)
				printf("%s\n", (*c)->noun);
			last = (*c)->noun;
		} else if (strcmp(argv[0], (*c)->noun) != 0)
			continue;
		else if ((*c)->verb == NULL)
			complete_options((*c)->usage);
		else if (argc == 1)
			printf("%s\n", (*c)->verb);
		else if (strcmp(argv[1], (*c)->verb) == 0)
			complete_options((*c)->usage);
	}
	return 0;
}
