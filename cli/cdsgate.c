/*
 * cli/cdsgate.c — entry point of the cdsgate command-line tool for
 * custodians and auditors: looks the command up in cmd_table[] and runs
 * it.  Runs as the invoking user; all input is untrusted.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/config.h"

static const struct cmd_entry *const cmd_table[] = {
	&cmd_deid_assess_entry,
	&cmd_deid_anonymize_entry,
	&cmd_deid_verify_entry,
	&cmd_sample_generate_entry,
	&cmd_recipient_add_entry,
	&cmd_recipient_list_entry,
	&cmd_recipient_disable_entry,
	&cmd_recipient_set_entry,
	&cmd_recipient_show_entry,
	&cmd_dataset_list_entry,
	&cmd_dataset_show_entry,
	&cmd_dataset_import_entry,
	&cmd_dataset_mount_entry,
	&cmd_dataset_unmount_entry,
	&cmd_dataset_remove_entry,
	&cmd_session_create_entry,
	&cmd_session_list_entry,
	&cmd_session_show_entry,
	&cmd_session_extend_entry,
	&cmd_session_revoke_entry,
	&cmd_session_report_entry,
	&cmd_node_list_entry,
	&cmd_audit_keygen_entry,
	&cmd_audit_verify_entry,
	&cmd_audit_list_entry,
	&cmd_audit_show_entry,
	&cmd_replay_entry,
	&cmd_token_new_entry,
	NULL
};

int
cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cdsgate: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (usage != NULL)
		cli_print_usage(stderr, usage);
	return EXIT_BAD_INPUT;
}

const char *
cli_default_audit_log(void)
{
	size_t i;

	for (i = 0; i < config_noptions; i++)
		if (strcmp(config_options[i].name, "audit_log") == 0)
			return config_options[i].def;
	return NULL;
}

int
cli_parse_number(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v))
		return -1;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end != '\0')
		return -1;
	*out = v;
	return 0;
}

size_t
cli_split(char *s, char **out, size_t max)
{
	size_t n = 0;
	char *p;

	while (s != NULL && n < max) {
		p = strchr(s, ',');
		if (p != NULL)
			*p++ = '\0';
		out[n++] = s;
		s = p;
	}
	return n;
}

/* Leading --api URL, --token-file F, --cacert F: the TCP admin API
 * (cli/apiclient.c reads them as CDSGATE_API, _TOKEN_FILE, _CACERT). */
static int
global_opts(int *argc, char ***argv)
{
	static const char *const opt[][2] = { { "--api", "CDSGATE_API" },
	    { "--token-file", "CDSGATE_TOKEN_FILE" },
	    { "--cacert", "CDSGATE_CACERT" } };
	size_t i;

	while (*argc >= 2 && strncmp((*argv)[1], "--", 2) == 0) {
		for (i = 0; i < 3 && strcmp((*argv)[1], opt[i][0]) != 0; i++)
			;
		if (i == 3)
			return 0;
		if (*argc < 3 || setenv(opt[i][1], (*argv)[2], 1) != 0)
			return cli_usage_error(NULL, "%s needs a value",
			    opt[i][0]), -1;
		(*argv)[2] = (*argv)[0];
		*argv += 2;
		*argc -= 2;
	}
	return 0;
}

/* "--help" or "-h" anywhere after the command: its usage, not a run. */
static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *const *c;

	if (argc < 2 || ((strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) && argc == 2)) {
		cli_help_all(argc < 2 ? stderr : stdout, cmd_table);
		return argc < 2 ? EXIT_BAD_INPUT : 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return cli_help(cmd_table, argv[2], argc > 3 ? argv[3] : NULL);
	if (strcmp(argv[1], "--complete") == 0)
		return cli_complete(cmd_table, argc - 2, argv + 2);
	if (global_opts(&argc, &argv) != 0)
		return EXIT_BAD_INPUT;
	if (argc < 2) {
		cli_help_all(stderr, cmd_table);
		return EXIT_BAD_INPUT;
	}
	if (wants_help(argc, argv))
		return cli_help(cmd_table, argv[1], argc > 2 ? argv[2] : NULL);
	if (strcmp(argv[1], "--version") == 0) {
		printf("cdsgate %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (c = cmd_table; *c != NULL; c++) {
		if (strcmp(argv[1], (*c)->noun) != 0)
			continue;
		if ((*c)->verb == NULL)
			return (*c)->exec(argc - 1, argv + 1);
		if (argc >= 3 && strcmp(argv[2], (*c)->verb) == 0)
			return (*c)->exec(argc - 2, argv + 2);
	}
	fprintf(stderr, "cdsgate: unknown command '%s%s%s'\n", argv[1],
	    argc >= 3 ? " " : "", argc >= 3 ? argv[2] : "");
	cli_help_all(stderr, cmd_table);
	return EXIT_BAD_INPUT;
}
