/*
 * cli/cli.h — the cdsgate command table and shared helpers.
 *
 * Commands register in cmd_table[] (cli/cdsgate.c), tmux-style: one
 * entry per "noun verb" with its usage line; each lives in a cmd-*.c.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stddef.h>
#include <stdio.h>

/* Exit codes: a contract with scripts (docs/deid.md). */
#define EXIT_GATE_PASSED	0
#define EXIT_INTERNAL		1
#define EXIT_BAD_INPUT		2
#define EXIT_GATE_FAILED	3

struct cmd_entry {
	const char	*noun;
	const char	*verb;
	const char	*usage;
	const char	*help;
	int		(*exec)(int argc, char **argv);
};

extern const struct cmd_entry cmd_deid_assess_entry;
extern const struct cmd_entry cmd_deid_anonymize_entry;
extern const struct cmd_entry cmd_deid_verify_entry;
extern const struct cmd_entry cmd_sample_generate_entry;
extern const struct cmd_entry cmd_recipient_add_entry;
extern const struct cmd_entry cmd_recipient_list_entry;
extern const struct cmd_entry cmd_recipient_disable_entry;
extern const struct cmd_entry cmd_recipient_set_entry;
extern const struct cmd_entry cmd_recipient_show_entry;
extern const struct cmd_entry cmd_session_create_entry;
extern const struct cmd_entry cmd_session_list_entry;
extern const struct cmd_entry cmd_session_show_entry;
extern const struct cmd_entry cmd_session_extend_entry;
extern const struct cmd_entry cmd_session_revoke_entry;
extern const struct cmd_entry cmd_session_report_entry;
extern const struct cmd_entry cmd_node_list_entry;
extern const struct cmd_entry cmd_dataset_list_entry;
extern const struct cmd_entry cmd_dataset_show_entry;
extern const struct cmd_entry cmd_dataset_remove_entry;
extern const struct cmd_entry cmd_dataset_import_entry;
extern const struct cmd_entry cmd_dataset_mount_entry;
extern const struct cmd_entry cmd_dataset_unmount_entry;
extern const struct cmd_entry cmd_audit_keygen_entry;
extern const struct cmd_entry cmd_audit_verify_entry;
extern const struct cmd_entry cmd_audit_list_entry;
extern const struct cmd_entry cmd_audit_show_entry;
extern const struct cmd_entry cmd_token_new_entry;
extern const struct cmd_entry cmd_replay_entry;	/* verb NULL: noun only */

/* Print "cdsgate: msg" to stderr; returns EXIT_BAD_INPUT. */
int	cli_usage_error(const char *usage, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* "0.01", "1%", "3.189e8": a finite number; percent divides by 100. */
int	cli_parse_number(const char *s, double *out);
/* The serve config's default audit_log (policy/config.c's table). */
const char *cli_default_audit_log(void);
/* cli/help.c: "usage: cdsgate USAGE" wrapped to 80 columns; every
 * command's usage and help; NOUN's (or NOUN VERB's) only, 0 or 2 when
 * there is no such command; the completion candidates after WORDS. */
void	cli_print_usage(FILE *f, const char *usage);
void	cli_help_all(FILE *f, const struct cmd_entry *const *table);
int	cli_help(const struct cmd_entry *const *table, const char *noun,
	    const char *verb);
int	cli_complete(const struct cmd_entry *const *table, int argc,
	    char **argv);
/* Split a comma-separated list in place; returns the count (<= max). */
size_t	cli_split(char *s, char **out, size_t max);

#endif
