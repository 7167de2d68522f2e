/*
 * policy/config.c — `cdsgated serve`'s configuration file: the option
 * table and the strict JSON reader.
 *
 * Library code (no logging, no exits).  Runs in the root parent before
 * anything is bound or forked; the file comes from the operator and is
 * refused when anyone but root (or us) could have written it.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/privdrop.h"
#include "policy/config.h"

#define OFF(f)	offsetof(struct gw_config, f)
/* Where state lives (the units' ReadWritePaths/StateDirectory agree). */
#define CONFIG_STATE	"/var/lib/cdsgate"

/* Every key of the file: the one place a setting is declared. */
const struct config_option config_options[] = {
	{ "socket", CONFIG_PATH, 0, 0, "/run/cdsgate/api.sock", 0,
	  OFF(socket), "the admin API's UNIX socket" },
	{ "store", CONFIG_PATH, 0, 0, CONFIG_STATE "/api/store.db", 0,
	  OFF(store), "the state store (SQLite; written by cdsgate-api)" },
	{ "state_dir", CONFIG_PATH, 0, 0, CONFIG_STATE "/api", 0,
	  OFF(state_dir), "the api's spool and released files "
	  "(cdsgate-api's)" },
	{ "mount_dir", CONFIG_PATH, 0, 0, NULL, 1, OFF(mount_dir),
	  "where mounted datasets are read by the backend" },
	{ "audit_log", CONFIG_PATH, 0, 0, CONFIG_STATE "/audit/audit.log", 0,
	  OFF(audit_log), "the signed audit log (in a directory of "
	  "cdsgate-audit's)" },
	{ "audit_key", CONFIG_PATH, 0, 0, CONFIG_STATE "/audit/key.pem", 0,
	  OFF(audit_key), "the audit signing key (cdsgate-audit's, 0600)" },
	{ "cdsgate", CONFIG_PATH, 0, 0, CDSGATE_BINDIR "/cdsgate", 0,
	  OFF(cdsgate), "the CLI that runs the import gate" },
	{ "custodian_group", CONFIG_STRING, 0, 0, PRIVDROP_CUSTODIAN_GROUP, 0,
	  OFF(custodian_group), "group whose members may change things" },
	{ "auditor_group", CONFIG_STRING, 0, 0, PRIVDROP_AUDITOR_GROUP, 0,
	  OFF(auditor_group), "group whose members may read everything" },
	{ "backend_url", CONFIG_STRING, 0, 0, NULL, 0, OFF(backend_url),
	  "http(s) URL the sessions' browsers show" },
	{ "session_address", CONFIG_STRING, 0, 0, "127.0.0.1", 0,
	  OFF(session_address), "numeric address sessions listen on" },
	{ "session_ports", CONFIG_PORTS, 1, 65535, "40000-40099", 0,
	  OFF(session_ports), "port range for sessions, \"LO-HI\"" },
	{ "tls_cert", CONFIG_PATH, 0, 0, NULL, 1, OFF(tls_cert),
	  "PEM chain of the sessions' TLS front door (with tls_key)" },
	{ "tls_key", CONFIG_PATH, 0, 0, NULL, 1, OFF(tls_key),
	  "PEM key of the TLS front door (0600)" },
	{ "front_door_listen", CONFIG_STRING, 0, 0, NULL, 1,
	  OFF(front_door_listen), "\"ADDR:PORT\" of the one front door every "
	  "researcher connects to; it relays each login to its session "
	  "(off by default: each session has its own port; needs tls_cert)" },
	{ "front_door_source", CONFIG_STRING, 0, 0, "127.0.0.1", 0,
	  OFF(front_door_source), "numeric address the front door connects to "
	  "sessions from: the only peer a session behind it accepts (Slurm: "
	  "the control node's address as the nodes see it, on the control "
	  "node and on each node; never loopback)" },
	{ "secrets_dir", CONFIG_PATH, 0, 0, "/run/cdsgate/secrets", 0,
	  OFF(secrets_dir), "root's 0700 directory of the sessions' password "
	  "files (never under the api user's state_dir)" },
	{ "grant_key", CONFIG_PATH, 0, 0, "/var/lib/cdsgate/grant.key", 0,
	  OFF(grant_key), "the key the sessions' dataset grants are signed "
	  "with (root's, 0600; made on first use); cdsgate-analytics "
	  "--grant-key verifies them with it" },
	{ "session_policy", CONFIG_PATH, 0, 0, NULL, 1,
	  OFF(session_policy), "session policy file (cdsgated options)" },
	{ "session_expires_default", CONFIG_UINT, 1, 604800, "3600", 0,
	  OFF(session_expires_default), "expires_in when none is given, s" },
	{ "session_expires_max", CONFIG_UINT, 1, 604800, "604800", 0,
	  OFF(session_expires_max), "largest expires_in accepted, s" },
	{ "session_idle_timeout", CONFIG_UINT, 0, 604800, "1800", 0,
	  OFF(session_idle_timeout), "a session ends after this idle, s" },
	{ "session_memory_limit_mb", CONFIG_UINT, 512, 1048576, "2048", 0,
	  OFF(session_memory_limit_mb), "a session ends (memory_limit) when "
	  "its processes hold more private memory, MiB" },
	{ "mount_backend", CONFIG_STRING, 0, 0, "embedded", 0,
	  OFF(mount_backend), "where a mount goes when the request names no "
	  "backend: \"embedded\" (mount_dir) or \"postgres\"" },
	{ "pg_conninfo", CONFIG_STRING, 0, 0, NULL, 1, OFF(pg_conninfo),
	  "libpq conninfo of the custodian's admin role (the PostgreSQL "
	  "backend; prefer peer auth over a password here)" },
	{ "pg_reader_role", CONFIG_STRING, 0, 0, NULL, 1, OFF(pg_reader_role),
	  "the BI tool's login role: SELECT on mounted datasets only" },
	{ "api_listen", CONFIG_STRING, 0, 0, NULL, 1, OFF(api_listen),
	  "\"ADDR:PORT\" of the admin API over TLS with bearer tokens "
	  "(off by default; needs api_tls_cert, api_tls_key, api_tokens)" },
	{ "api_tls_cert", CONFIG_PATH, 0, 0, NULL, 1, OFF(api_tls_cert),
	  "PEM chain of the TCP admin API" },
	{ "api_tls_key", CONFIG_PATH, 0, 0, NULL, 1, OFF(api_tls_key),
	  "PEM key of the TCP admin API (root's, 0600)" },
	{ "api_tokens", CONFIG_PATH, 0, 0, NULL, 1, OFF(api_tokens),
	  "root's 0600 file of \"ROLE NAME SHA256\" lines (cdsgate token new)" },
	{ "record_dir", CONFIG_PATH, 0, 0, CONFIG_STATE "/recordings", 0,
	  OFF(record_dir), "sessions' recordings, <record_dir>/<id>.cdsrec" },
	{ "record_min_free_mb", CONFIG_UINT, 0, 1048576, "64", 0,
	  OFF(record_min_free_mb), "refuse a session start below this much "
	  "free space in record_dir, MB (0 = no check)" },
	{ "retention_max_bytes", CONFIG_UINT, 0, 1e15, "0", 0,
	  OFF(retention_max_bytes), "closed recordings beyond this total "
	  "are expired, oldest first (0 = no limit)" },
	{ "retention_max_age_days", CONFIG_UINT, 0, 36500, "0", 0,
	  OFF(retention_max_age_days), "closed recordings older than this "
	  "are expired (0 = kept)" },
	{ "session_runner", CONFIG_STRING, 0, 0, "local", 0,
	  OFF(session_runner), "where sessions run: \"local\" (supervisors "
	  "forked here) or \"slurm\" (one Slurm job per session, started by "
	  "`cdsgated node` on its compute node)" },
	{ "slurm_partition", CONFIG_STRING, 0, 0, NULL, 1,
	  OFF(slurm_partition), "slurm: the partition sessions' jobs go to "
	  "(unset: Slurm's default)" },
	{ "slurm_memory_mb", CONFIG_UINT, 0, 1048576, "0", 0,
	  OFF(slurm_memory_mb), "slurm: memory each session's job reserves, "
	  "MiB (0 = the session's memory limit)" },
	{ "slurm_job_user", CONFIG_STRING, 0, 0, "nobody", 0,
	  OFF(slurm_job_user), "slurm: the user sessions' jobs run as (on "
	  "nodes: the only user `cdsgated node` takes a job's request from); "
	  "no other jobs should run as it" },
	{ "slurm_conf", CONFIG_PATH, 0, 0, NULL, 1, OFF(slurm_conf),
	  "slurm: SLURM_CONF for Slurm's commands (unset: theirs)" },
	{ "slurm_listen", CONFIG_STRING, 0, 0, NULL, 1, OFF(slurm_listen),
	  "slurm: \"ADDR:PORT\" where the control plane takes the nodes' "
	  "MUNGE-signed requests" },
	{ "control_address", CONFIG_STRING, 0, 0, NULL, 1,
	  OFF(control_address), "node: \"ADDR:PORT\" of the control "
	  "plane's slurm_listen" },
	{ "node_name", CONFIG_STRING, 0, 0, NULL, 1, OFF(node_name),
	  "node: this node's Slurm name (NodeName)" },
	{ "node_socket", CONFIG_PATH, 0, 0, "/run/cdsgate/node.sock", 0,
	  OFF(node_socket), "slurm: the node agent's socket a session's job "
	  "asks on (\"%n\": the node's name, for nodes sharing a host)" },
	{ "munge_socket", CONFIG_PATH, 0, 0, "/run/munge/munge.socket.2", 0,
	  OFF(munge_socket), "slurm: munged's socket (MUNGE signs and "
	  "encrypts what nodes and the control plane say)" },
	{ "cdsgated", CONFIG_PATH, 0, 0, CDSGATE_SBINDIR "/cdsgated", 0,
	  OFF(cdsgated), "slurm: cdsgated as the nodes have it (a session's "
	  "job runs `cdsgated node-job`)" },
};
const size_t config_noptions =
    sizeof(config_options) / sizeof(config_options[0]);

/* "LO-HI" within the option's bounds. */
static int
parse_ports(const struct config_option *o, const char *v, unsigned *lo,
    unsigned *hi, struct policy_error *err)
{
	unsigned long a, b;
	char *end;

	a = strtoul(v, &end, 10);
	if (end == v || *end != '-')
		goto bad;
	v = end + 1;
	b = strtoul(v, &end, 10);
	if (end == v || *end != '\0' || a < o->min || b > o->max || a > b)
		goto bad;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return POLICY_OK;
bad:
	return policy_error_set(err, POLICY_EINPUT, "%s: wants \"LO-HI\" "
	    "with %g <= LO <= HI <= %g", o->name, o->min, o->max);
}

/* Set option o from text (a default or a JSON string). */
static int
config_set_text(struct gw_config *c, const struct config_option *o,
    const char *v, struct policy_error *err)
{
	char *dst = (char *)c + o->offset;

	if (strlen(v) >= CONFIG_STR_MAX || (o->type != CONFIG_STRING &&
	    v[0] == '\0'))
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: empty or longer than %d bytes", o->name,
		    CONFIG_STR_MAX - 1);
	if (o->type == CONFIG_PORTS &&
	    parse_ports(o, v, &c->port_lo, &c->port_hi, err) != POLICY_OK)
		return POLICY_EINPUT;
	memcpy(dst, v, strlen(v) + 1);
	return POLICY_OK;
}

/* Set option o from a JSON value of the right type. */
static int
config_set_json(struct gw_config *c, const struct config_option *o,
    json_t *v, struct policy_error *err)
{
	double d;

	if (o->type != CONFIG_UINT) {
		if (!json_is_string(v))
			return policy_error_set(err, POLICY_EINPUT,
			    "%s: wants a string", o->name);
		return config_set_text(c, o, json_string_value(v), err);
	}
	if (!json_is_integer(v))
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: wants an integer", o->name);
	d = (double)json_integer_value(v);
	if (d < o->min || d > o->max)
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: %.0f is out of range %g..%g", o->name, d, o->min,
		    o->max);
	*(unsigned long *)((char *)c + o->offset) = (unsigned long)d;
	return POLICY_OK;
}

static const struct config_option *
config_find(const char *name)
{
	size_t i;

	for (i = 0; i < config_noptions; i++)
		if (strcmp(config_options[i].name, name) == 0)
			return &config_options[i];
	return NULL;
}

/* The table's defaults into a zeroed *c. */
static int
config_defaults(struct gw_config *c, struct policy_error *err)
{
	const struct config_option *o;
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < config_noptions; i++) {
		o = &config_options[i];
		if (o->def == NULL)
			continue;
		if (o->type == CONFIG_UINT)
			*(unsigned long *)((char *)c + o->offset) =
			    strtoul(o->def, NULL, 10);
		else if (config_set_text(c, o, o->def, err) != POLICY_OK)
			return POLICY_EINPUT;
	}
	return POLICY_OK;
}

/* "ADDR:PORT" with a numeric address, or "" */
static int
config_addr_ok(const char *v)
{
	struct spec_listen l;
	struct policy_error e;

	return v[0] == '\0' || spec_listen_parse(v, &l, &e) == POLICY_OK;
}

/* session_runner and the keys slurm needs. */
static int
config_check_runner(const struct gw_config *c, struct policy_error *err)
{
	if (strcmp(c->session_runner, "local") != 0 &&
	    strcmp(c->session_runner, "slurm") != 0)
		return policy_error_set(err, POLICY_EINPUT, "session_runner: "
		    "\"local\" or \"slurm\", not \"%s\"", c->session_runner);
	if (!config_addr_ok(c->slurm_listen) ||
	    !config_addr_ok(c->control_address))
		return policy_error_set(err, POLICY_EINPUT, "slurm_listen and "
		    "control_address: \"ADDR:PORT\", a numeric address");
	if (strcmp(c->session_runner, "slurm") == 0 &&
	    c->slurm_listen[0] == '\0')
		return policy_error_set(err, POLICY_EINPUT, "session_runner "
		    "\"slurm\" needs slurm_listen (where nodes report)");
	if (strspn(c->slurm_partition, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
	    "KLMNOPQRSTUVWXYZ0123456789_-.") != strlen(c->slurm_partition) ||
	    strspn(c->node_name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
	    "QRSTUVWXYZ0123456789_-.") != strlen(c->node_name) ||
	    strlen(c->node_name) > 63)
		return policy_error_set(err, POLICY_EINPUT, "slurm_partition "
		    "and node_name: letters, digits, \"_-.\" (node_name at "
		    "most 63)");
	return POLICY_OK;
}

/* With Slurm, researchers reach a node's session only through the
 * front door: the control node runs one, and a node's sessions accept
 * only its source address. */
static int
config_check_slurm_door(const struct gw_config *c, struct policy_error *err)
{
	const char *s = c->front_door_source;
	int local = strncmp(s, "127.", 4) == 0 || strcmp(s, "::1") == 0 ||
	    strcmp(s, "0.0.0.0") == 0 || strcmp(s, "::") == 0;

	if (strcmp(c->session_runner, "slurm") == 0 &&
	    (c->front_door_listen[0] == '\0' || local))
		return policy_error_set(err, POLICY_EINPUT, "session_runner "
		    "\"slurm\" needs front_door_listen and front_door_source "
		    "(the control node's address as the nodes see it, not "
		    "loopback): researchers reach a node's session only "
		    "through the front door");
	if (c->control_address[0] != '\0' && local)
		return policy_error_set(err, POLICY_EINPUT, "a node "
		    "(control_address) needs front_door_source: the control "
		    "node's address as this node sees it, the only peer its "
		    "sessions accept (not loopback)");
	if (c->control_address[0] != '\0' && c->tls_cert[0] != '\0')
		return policy_error_set(err, POLICY_EINPUT, "a node "
		    "(control_address) takes no tls_cert: its sessions serve "
		    "only the control node's front door, where TLS ends");
	return POLICY_OK;
}

/* Name the key an address check failed for. */
static int
config_key_error(struct policy_error *err, const char *key)
{
	char msg[sizeof(err->msg)];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	return policy_error_set(err, POLICY_EINPUT, "%s: %s", key, msg);
}

/* Whole-config rules: required keys, pairs, the URL and address. */
static int
config_check(const struct gw_config *c, struct policy_error *err)
{
	struct spec_url u;
	struct spec_listen l;
	char addr[CONFIG_STR_MAX + 8];
	size_t i;

	for (i = 0; i < config_noptions; i++)
		if (!config_options[i].optional &&
		    config_options[i].type != CONFIG_UINT &&
		    ((const char *)c + config_options[i].offset)[0] == '\0')
			return policy_error_set(err, POLICY_EINPUT,
			    "%s is required", config_options[i].name);
	if ((c->tls_cert[0] == '\0') != (c->tls_key[0] == '\0'))
		return policy_error_set(err, POLICY_EINPUT,
		    "tls_cert and tls_key go together");
	if (c->front_door_listen[0] != '\0' && c->tls_cert[0] == '\0')
		return policy_error_set(err, POLICY_EINPUT, "front_door_listen "
		    "needs tls_cert and tls_key: the front door speaks TLS only");
	if (c->front_door_listen[0] != '\0' &&
	    spec_listen_parse(c->front_door_listen, &l, err) != POLICY_OK)
		return config_key_error(err, "front_door_listen");
	snprintf(addr, sizeof(addr), strchr(c->front_door_source, ':') ?
	    "[%s]:0" : "%s:0", c->front_door_source);
	if (spec_listen_parse(addr, &l, err) != POLICY_OK)
		return config_key_error(err, "front_door_source");
	if (c->api_listen[0] != '\0' && (c->api_tls_cert[0] == '\0' ||
	    c->api_tls_key[0] == '\0' || c->api_tokens[0] == '\0'))
		return policy_error_set(err, POLICY_EINPUT, "api_listen needs "
		    "api_tls_cert, api_tls_key and api_tokens: the TCP API is "
		    "never plaintext nor unauthenticated");
	if ((c->pg_conninfo[0] == '\0') != (c->pg_reader_role[0] == '\0'))
		return policy_error_set(err, POLICY_EINPUT,
		    "pg_conninfo and pg_reader_role go together");
	if (strcmp(c->mount_backend, "embedded") != 0 &&
	    strcmp(c->mount_backend, "postgres") != 0)
		return policy_error_set(err, POLICY_EINPUT, "mount_backend: "
		    "\"embedded\" or \"postgres\", not \"%s\"",
		    c->mount_backend);
	if (strcmp(c->mount_backend, "postgres") == 0 &&
	    c->pg_conninfo[0] == '\0')
		return policy_error_set(err, POLICY_EINPUT, "mount_backend "
		    "\"postgres\" needs pg_conninfo and pg_reader_role");
	if (c->session_expires_default > c->session_expires_max)
		return policy_error_set(err, POLICY_EINPUT,
		    "session_expires_default exceeds session_expires_max");
	if (config_check_runner(c, err) != POLICY_OK ||
	    config_check_slurm_door(c, err) != POLICY_OK)
		return POLICY_EINPUT;
	if (spec_url_parse(c->backend_url, &u, err) != POLICY_OK)
		return POLICY_EINPUT;
	snprintf(addr, sizeof(addr), strchr(c->session_address, ':') ?
	    "[%s]:0" : "%s:0", c->session_address);
	if (spec_listen_parse(addr, &l, err) != POLICY_OK)
		return POLICY_EINPUT;
	return POLICY_OK;
}

/* Apply every key of the parsed object; unknown keys are errors. */
static int
config_apply(struct gw_config *c, json_t *root, const char *path,
    struct policy_error *err)
{
	const struct config_option *o;
	const char *k;
	json_t *v;

	if (!json_is_object(root))
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: the configuration is a JSON object", path);
	json_object_foreach(root, k, v) {
		if ((o = config_find(k)) == NULL)
			return policy_error_set(err, POLICY_EINPUT,
			    "%s: unknown key \"%.64s\" (cdsgated serve -T "
			    "lists them)", path, k);
		if (config_set_json(c, o, v, err) != POLICY_OK) {
			char m[sizeof(err->msg)];

			snprintf(m, sizeof(m), "%s", err->msg);
			return policy_error_set(err, POLICY_EINPUT, "%s: %s",
			    path, m);
		}
	}
	return POLICY_OK;
}

int
config_load(struct gw_config *c, const char *path, struct policy_error *err)
{
	size_t n;
	char *text = NULL;
	int r;

	if ((r = spec_read_file(path, "configuration", CONFIG_FILE_MAX, 0,
	    &text, &n, err)) != POLICY_OK)
		return r;
	r = config_parse(c, text, n, path, err);
	free(text);
	return r;
}

int
config_parse(struct gw_config *c, const char *text, size_t n,
    const char *path, struct policy_error *err)
{
	json_error_t je;
	json_t *root;
	int r;

	if ((r = config_defaults(c, err)) != POLICY_OK)
		return r;
	root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return policy_error_set(err, POLICY_EINPUT, "%s:%d:%d: %s",
		    path, je.line, je.column, je.text);
	r = config_apply(c, root, path, err);
	json_decref(root);
	if (r != POLICY_OK)
		return r;
	return config_check(c, err);
}

void
config_print(const struct gw_config *c, FILE *f)
{
	const struct config_option *o;
	const char *s;
	json_t *obj = json_object(), *v;
	size_t i;

	for (i = 0; obj != NULL && i < config_noptions; i++) {
		o = &config_options[i];
		if (o->type == CONFIG_UINT)
			v = json_integer((json_int_t)*(const unsigned long *)
			    ((const char *)c + o->offset));
		else {
			s = (const char *)c + o->offset;
			v = s[0] != '\0' ? json_string(s) : json_null();
		}
		json_object_set_new(obj, o->name, v);
	}
	if (obj != NULL)
		json_dumpf(obj, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(obj);
}
