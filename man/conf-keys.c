/*
 * man/conf-keys.c — prints the key list of cdsgated.conf(5) in mdoc
 * from policy/config.c's option table, so the manual is made from the
 * table the daemon reads with and cannot drift from it.  Build-time
 * tool; reads nothing.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "policy/config.h"

/* Text as mdoc text lines of at most ~72 bytes: backslashes escaped,
 * no line starting with a dot or quote. */
static void
text_lines(const char *s)
{
	size_t col = 0, n;

	while (*s != '\0') {
		s += strspn(s, " ");
		if ((n = strcspn(s, " ")) == 0)
			break;
		if (col > 0 && col + 1 + n > 72) {
			putchar('\n');
			col = 0;
		} else if (col > 0) {
			putchar(' ');
			col++;
		}
		if (col == 0 && (*s == '.' || *s == '\''))
			fputs("\\&", stdout);
		for (; n > 0; n--, s++, col++)
			if (*s == '\\')
				fputs("\\e", stdout);
			else
				putchar(*s);
	}
	putchar('\n');
}

static const char *
type_arg(enum config_type t)
{
	switch (t) {
	case CONFIG_PATH:	return "path";
	case CONFIG_UINT:	return "number";
	case CONFIG_PORTS:	return "LO-HI";
	default:		return "string";
	}
}

int
main(void)
{
	const struct config_option *o;
	size_t i;

	for (i = 0; i < config_noptions; i++) {
		o = &config_options[i];
		printf(".It Ic %s Ar %s\n", o->name, type_arg(o->type));
		text_lines(o->help);
		if (o->type == CONFIG_UINT || o->type == CONFIG_PORTS)
			printf(".Pp\nFrom %.15g to %.15g.\n", o->min, o->max);
		if (o->def != NULL)
			printf(".Pp\nDefault:\n.Ql %s .\n", o->def);
		else if (o->optional)
			printf(".Pp\nUnset by default.\n");
		else
			printf(".Pp\nRequired.\n");
	}
	return 0;
}
