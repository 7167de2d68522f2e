/*
 * control/cdsgated.c — entry point of the gateway daemon: looks the
 * command up in cmd_table[] and runs it.
 *
 * Runs as root for run-session (the supervisor, supervisor/session.c);
 * the other commands need no privilege.  Its input, the command line
 * and the files it names, comes from the operator and is checked by
 * policy/spec.c before anything starts.  Exit statuses: 0 ended
 * normally, 1 a failure while running, 2 bad arguments, configuration
 * or environment (supervisor/session.h).
 *
 * Diagnostics go through common/log.h ("cdsgated: ..."); usage text is
 * output for whoever typed the command, printed to stderr as it is.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "common/log.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "gateway/tls.h"
#include "policy/chromium.h"
#include "policy/creds.h"
#include "policy/spec.h"
#include "sandbox/sandbox.h"

struct cmd_entry {
	const char	*name;
	const char	*args;
	const char	*help;
	int		(*exec)(int argc, char **argv);
};

static int	cmd_run_session(int, char **);
static int	cmd_check_session(int, char **);
static int	cmd_options(int, char **);
static int	cmd_browser_policy(int, char **);
static int	cmd_hash_password(int, char **);

static const struct cmd_entry cmd_table[] = {
	{ "run-session",
	  "--backend URL --listen ADDR:PORT --password-file FILE [options]\n"
	  "      [--sandbox-debug]",
	  "run one session in the foreground; prints \"ready ADDR:PORT\";\n"
	  "      --sandbox-debug: a seccomp violation is reported, not killed",
	  cmd_run_session },
	{ "check-session", "[the same options]",
	  "check a session spec and its files; print the effective spec",
	  cmd_check_session },
	{ "options", "", "list every session option with bounds and default",
	  cmd_options },
	{ "browser-policy", "--backend URL",
	  "print the managed Chromium policy a session would get",
	  cmd_browser_policy },
	{ "api", "--socket PATH --store FILE [--custodian-group NAME] "
	  "[--auditor-group NAME]",
	  "run the admin API (HTTP+JSON on a UNIX socket) in the foreground",
	  api_serve_cmd },
	{ "serve", "[-n | -T] --config FILE [--sessiond PATH]",
	  "the root parent: the admin API and one supervisor per session\n"
	  "      (-n checks the configuration, -T prints the effective one;\n"
	  "      --sessiond: sessions through `cdsgated sessiond` on PATH)",
	  parent_serve_cmd },
	{ "sessiond", "--config FILE [--socket PATH] [--peer-user NAME]",
	  "the root session helper for `serve --sessiond PATH` (the split\n"
	  "      systemd units): supervisors for the api user's requests only",
	  sessiond_cmd },
	{ "node", "--config FILE",
	  "the Slurm runner's node agent (root, one per compute node):\n"
	  "      starts the session a job of this node is, as the control plane\n"
	  "      says (MUNGE), and reports where it is ready",
	  node_cmd },
	{ "node-job", "--socket PATH",
	  "a session's Slurm job: asks the node agent on PATH (\"%n\": the\n"
	  "      node's name) to start its session and waits until it ends",
	  node_job_cmd },
	{ "hash-password", "< PASSWORD",
	  "print a $scrypt$ secret for a --credentials-file line",
	  cmd_hash_password },
	{ NULL, NULL, NULL, NULL }
};

static void
usage(FILE *f)
{
	const struct cmd_entry *c;

	fprintf(f, "usage: cdsgated <command> [options]\n\ncommands:\n");
	for (c = cmd_table; c->name != NULL; c++)
		fprintf(f, "  %s %s\n      %s\n", c->name, c->args, c->help);
	fprintf(f, "\n`cdsgated options` lists the session options.\n");
}

/* "--key-rate N" from "key_rate" and its placeholder. */
static void
flag_of(const struct spec_option *o, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "--%s%s%s", o->name, o->arg != NULL ? " " : "",
	    o->arg != NULL ? o->arg : "");
	for (i = 2; buf[i] != '\0' && buf[i] != ' '; i++)
		if (buf[i] == '_')
			buf[i] = '-';
}

static int
cmd_options(int argc, char **argv)
{
	const struct spec_option *o;
	char flag[64];
	size_t i;

	(void)argc;
	(void)argv;
	printf("session options (command line; \"file\" = also a key of the "
	    "--policy JSON object):\n\n");
	for (i = 0; i < spec_noptions; i++) {
		o = &spec_options[i];
		flag_of(o, flag, sizeof(flag));
		printf("  %-30s %s\n", flag, o->help);
		printf("  %-30s", "");
		if (o->type == SPEC_NUMBER || o->type == SPEC_UINT ||
		    o->type == SPEC_GEOMETRY)
			printf(" range %g..%g;", o->min, o->max);
		printf(" default %s%s\n", o->def != NULL ? o->def : "none",
		    (o->scope & SPEC_FILE) ? "; file" : "");
	}
	return 0;
}

/* Parse and check the arguments of a session command into *s. */
static int
session_args(int argc, char **argv, struct session_spec *s)
{
	struct policy_error e;
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0) {
			memset(s, 0, sizeof(*s));
			usage(stdout);
			printf("\n");
			cmd_options(0, NULL);
			return -1;
		}
	if (spec_init(s, &e) != POLICY_OK ||
	    spec_from_args(s, argc, argv, &e) != POLICY_OK ||
	    spec_check(s, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		fprintf(stderr, "usage: cdsgated run-session --backend URL "
		    "--listen ADDR:PORT --password-file FILE [options]\n"
		    "       (`cdsgated options` lists them)\n");
		return SESSION_EXIT_CONFIG;
	}
	return 0;
}

/*
 * Choose the confinement for the children: seccomp when compiled in,
 * else none (said on stderr).  --sandbox-debug (taken out of argv)
 * traps and reports a violation instead of killing.
 */
static int
sandbox_args(int *argc, char **argv)
{
	enum sandbox_mode mode = SANDBOX_MODE_SECCOMP;
	int i, j, debug = 0;
	char err[256];

	for (i = j = 0; i < *argc; i++)
		if (strcmp(argv[i], "--sandbox-debug") == 0)
			debug = 1;
		else
			argv[j++] = argv[i];
	*argc = j;
#ifndef HAVE_SECCOMP
	mode = SANDBOX_MODE_NONE;
	log_warnx("built with --with-sandbox=none: no "
	    "seccomp filter confines the session's processes");
#endif
	if (sandbox_init(mode, debug, err, sizeof(err)) != 0) {
		log_warnx("sandbox: %s", err);
		return SESSION_EXIT_CONFIG;
	}
	if (debug)
		log_warnx("--sandbox-debug: seccomp violations "
		    "are reported and exit %d instead of killing",
		    SANDBOX_DEBUG_EXIT);
	return 0;
}

static int
cmd_run_session(int argc, char **argv)
{
	struct session_spec s;
	int r;

	if ((r = sandbox_args(&argc, argv)) != 0)
		return r;
	if ((r = session_args(argc, argv, &s)) == 0)
		r = session_run(&s, stdout);
	spec_free(&s);
	return r < 0 ? 0 : r;
}

/* Like run-session up to the point where anything would start. */
/* The TLS front door's files: readable, private where they must be,
 * and a key that matches the certificate. */
static int
check_tls_files(const struct session_spec *s)
{
	struct policy_error e;
	struct tls_ctx *t = NULL;
	struct creds *c = NULL;
	char *cert = NULL, *key = NULL, err[256] = "";
	size_t clen = 0, klen = 0;
	int r = -1;

	if (s->tls_cert == NULL)
		return 0;
	if (spec_read_file(s->tls_cert, "TLS certificate", 256 * 1024, 0,
	    &cert, &clen, &e) != POLICY_OK ||
	    spec_read_file(s->tls_key, "TLS key", 64 * 1024, 1, &key, &klen,
	    &e) != POLICY_OK ||
	    creds_load(&c, s->credentials_file, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		goto out;
	}
	if (tls_ctx_alloc(&t, cert, clen, key, klen, err, sizeof(err)) !=
	    TLS_OK) {
		log_warnx("%s, %s: %s", s->tls_cert, s->tls_key, err);
		goto out;
	}
	r = 0;
out:
	tls_ctx_free(t);
	creds_free(c);
	if (key != NULL)
		explicit_bzero(key, klen);
	free(key);
	free(cert);
	return r;
}

static int
cmd_check_session(int argc, char **argv)
{
	struct session_spec s;
	struct policy_error e;
	char *secret = NULL;
	json_t *j;
	int r;

	if ((r = session_args(argc, argv, &s)) != 0) {
		r = r < 0 ? 0 : r;
		goto out;
	}
	if (spec_read_secret(s.password_file, "password", 1,
	    SPEC_PASSWORD_MAX, NULL, &secret, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		r = SESSION_EXIT_CONFIG;
		goto out;
	}
	explicit_bzero(secret, strlen(secret));
	free(secret);
	secret = NULL;
	if (s.ws_token_file != NULL && spec_read_secret(s.ws_token_file,
	    "websocket token", SPEC_TOKEN_MIN, SPEC_TOKEN_MAX,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-._~", &secret, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		r = SESSION_EXIT_CONFIG;
		goto out;
	}
	if (check_tls_files(&s) != 0) {
		r = SESSION_EXIT_CONFIG;
		goto out;
	}
	j = spec_to_json(&s);
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(j);
out:
	if (secret != NULL) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
	spec_free(&s);
	return r;
}

static int
cmd_browser_policy(int argc, char **argv)
{
	struct policy_error e;
	json_t *j;

	if (argc != 2 || strcmp(argv[0], "--backend") != 0) {
		fprintf(stderr, "usage: cdsgated browser-policy --backend "
		    "URL\n");
		return SESSION_EXIT_CONFIG;
	}
	if (chromium_policy_build(argv[1], &j, &e) != POLICY_OK) {
		log_warnx("--backend: %s", e.msg);
		return SESSION_EXIT_CONFIG;
	}
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(j);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *c;

	log_init("cdsgated");
	if (argc < 2) {
		usage(stderr);
		return SESSION_EXIT_CONFIG;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cdsgated %s\nsandbox: %s%s\n", PACKAGE_VERSION,
#ifdef HAVE_SECCOMP
		    "seccomp",
#else
		    "none",
#endif
#ifdef ENABLE_TEST_HOOKS
		    "; test hooks: CDSGATE_TEST_VIOLATE"
#else
		    ""
#endif
		    );
		return 0;
	}
	for (c = cmd_table; c->name != NULL; c++)
		if (strcmp(argv[1], c->name) == 0)
			return c->exec(argc - 2, argv + 2);
	log_warnx("unknown command '%s'", argv[1]);
	usage(stderr);
	return SESSION_EXIT_CONFIG;
}

/* A custodian stores hashes, not passwords: one line on stdin in, one
 * "$scrypt$..." secret out. */
static int
cmd_hash_password(int argc, char **argv)
{
	struct policy_error e;
	char pass[CREDS_PASS_MAX + 2], out[512];
	size_t n;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: cdsgated hash-password < PASSWORD\n");
		return SESSION_EXIT_CONFIG;
	}
	if (fgets(pass, sizeof(pass), stdin) == NULL)
		pass[0] = '\0';
	n = strcspn(pass, "\r\n");
	if (n == 0 || n > CREDS_PASS_MAX) {
		explicit_bzero(pass, sizeof(pass));
		log_warnx("the password must have 1 to %d "
		    "bytes", CREDS_PASS_MAX);
		return SESSION_EXIT_CONFIG;
	}
	if (creds_hash(pass, n, out, sizeof(out), &e) != POLICY_OK) {
		explicit_bzero(pass, sizeof(pass));
		log_warnx("%s", e.msg);
		return SESSION_EXIT_FAILED;
	}
	explicit_bzero(pass, sizeof(pass));
	printf("%s\n", out);
	return 0;
}
