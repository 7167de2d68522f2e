/*
 * policy/config.h — the configuration of `cdsgated serve` (the root
 * parent): one JSON object read through one declarative option table,
 * like policy/spec.h's for a session.
 *
 * Library code: never logs, never exits; returns policy_status codes
 * with a struct policy_error.  Trust: the file comes from the operator
 * but is parsed strictly (unknown keys, wrong types, values out of
 * bounds are errors) and refused when group- or world-writable.
 */
#ifndef POLICY_CONFIG_H
#define POLICY_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "policy/spec.h"

#define CONFIG_FILE_MAX		(64 * 1024)
#define CONFIG_STR_MAX		1024

enum config_type {
	CONFIG_STRING,		/* free text (checker may validate) */
	CONFIG_PATH,		/* a file name */
	CONFIG_UINT,		/* unsigned integer in [min, max] */
	CONFIG_PORTS		/* "LO-HI", both in [min, max], LO <= HI */
};

struct config_option {
	const char	*name;		/* the JSON key */
	enum config_type type;
	double		 min, max;
	const char	*def;		/* NULL: required (or unset if optional) */
	int		 optional;	/* may stay unset */
	size_t		 offset;	/* in struct gw_config */
	const char	*help;
};

extern const struct config_option	config_options[];
extern const size_t			config_noptions;

/* The effective configuration: every string bounded, NUL-terminated,
 * "" when unset. */
struct gw_config {
	char		socket[CONFIG_STR_MAX];
	char		store[CONFIG_STR_MAX];
	char		state_dir[CONFIG_STR_MAX];
	char		mount_dir[CONFIG_STR_MAX];
	char		audit_log[CONFIG_STR_MAX];
	char		audit_key[CONFIG_STR_MAX];
	char		cdsgate[CONFIG_STR_MAX];
	char		custodian_group[CONFIG_STR_MAX];
	char		auditor_group[CONFIG_STR_MAX];
	char		backend_url[CONFIG_STR_MAX];
	char		session_address[CONFIG_STR_MAX];
	char		session_ports[CONFIG_STR_MAX];
	char		tls_cert[CONFIG_STR_MAX];
	char		tls_key[CONFIG_STR_MAX];
	char		front_door_listen[CONFIG_STR_MAX];	/* "": off */
	char		front_door_source[CONFIG_STR_MAX];
	char		session_policy[CONFIG_STR_MAX];	/* a --policy file */
	char		secrets_dir[CONFIG_STR_MAX];	/* root's, 0700 */
	char		grant_key[CONFIG_STR_MAX];	/* root's, 0600 */
	char		mount_backend[CONFIG_STR_MAX];	/* embedded|postgres */
	char		pg_conninfo[CONFIG_STR_MAX];	/* "": no PostgreSQL */
	char		pg_reader_role[CONFIG_STR_MAX];
	char		api_listen[CONFIG_STR_MAX];	/* "": UNIX only */
	char		api_tls_cert[CONFIG_STR_MAX];
	char		api_tls_key[CONFIG_STR_MAX];
	char		api_tokens[CONFIG_STR_MAX];
	unsigned long	session_expires_default;	/* seconds */
	unsigned long	session_expires_max;		/* seconds */
	unsigned long	session_idle_timeout;		/* seconds */
	unsigned long	session_memory_limit_mb;	/* MiB */
	char		record_dir[CONFIG_STR_MAX];	/* the recordings */
	unsigned long	record_min_free_mb;		/* refuse below */
	unsigned long	retention_max_bytes;		/* 0 = no limit */
	unsigned long	retention_max_age_days;		/* 0 = kept */
	char		session_runner[CONFIG_STR_MAX];	/* local|slurm */
	char		slurm_partition[CONFIG_STR_MAX];	/* "": default */
	unsigned long	slurm_memory_mb;		/* 0: the session's */
	char		slurm_job_user[CONFIG_STR_MAX];
	char		slurm_conf[CONFIG_STR_MAX];	/* "": Slurm's */
	char		slurm_listen[CONFIG_STR_MAX];	/* control: ADDR:PORT */
	char		control_address[CONFIG_STR_MAX];	/* node: the same */
	char		node_name[CONFIG_STR_MAX];	/* node: its NodeName */
	char		node_socket[CONFIG_STR_MAX];	/* node: jobs ask here */
	char		munge_socket[CONFIG_STR_MAX];
	char		cdsgated[CONFIG_STR_MAX];	/* as nodes have it */
	/* derived from session_ports */
	unsigned	port_lo, port_hi;
};

/* Defaults for every key, then the file at path over them; checked. */
int	config_load(struct gw_config *c, const char *path,
	    struct policy_error *err);
/* The same from the file's text (n bytes; path names it in errors). */
int	config_parse(struct gw_config *c, const char *text, size_t n,
	    const char *path, struct policy_error *err);
/* The effective configuration as a JSON object, one key a line. */
void	config_print(const struct gw_config *c, FILE *f);

#endif
