/*
 * api/gate.c — the de-identification gate of an import: the job spec
 * checked and turned into `cdsgate deid anonymize` arguments, run as a
 * child (the CLI puts the CSV parsing into its seccomp-confined deid
 * worker, docs/processes.md), its exit status read as the verdict.
 * The gate runner does the running; the api only queues the job here and
 * reads the answer from its event loop (api/datasets.c).
 *
 * Exec rather than link: the gate is exactly the custodian's command,
 * byte for byte the same options and report, and the api process keeps
 * no CSV parser of its own.
 *
 * Trust: the job spec is untrusted JSON; every field is type-checked and
 * attribute names that could change the meaning of the CLI's list
 * syntax (",", "=") or carry control bytes are refused.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/gate.h"
#include "api/gaterunner.h"

#define GATE_ARGV_MAX	(2 * 64 * 4 + 32)
#define GATE_ERR_MAX	2048

/* An attribute name usable in the CLI's "a,b" and "a=FILE" syntax. */
static int
attr_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == ',' || s[i] == '=' ||
		    s[i] == 0x7f)
			return 0;
	return 1;
}

static int
sha_ok(const char *s)
{
	return s != NULL && strlen(s) == 64 &&
	    strspn(s, "0123456789abcdef") == 64;
}

/* A non-empty array of attribute names, joined with "," into out. */
static int
attr_list(json_t *a, char *out, size_t len, const char **bad)
{
	json_t *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > 64)
		return -1;
	out[0] = '\0';
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || !attr_ok(json_string_value(v)))
			return *bad = json_is_string(v) ? json_string_value(v) :
			    "(not a string)", -1;
		if (strlen(out) + strlen(json_string_value(v)) + 2 > len)
			return -1;
		if (i > 0)
			strcat(out, ",");
		strcat(out, json_string_value(v));
	}
	return 0;
}

static int	job_values_ok(json_t *job);

/* The job's fields and their JSON types: an unknown field or a wrong
 * type is a 400 before the store hears of the import (not a gate run
 * that fails later). */
static const struct { const char *key; json_type type; } job_fields[] = {
	{ "data", JSON_STRING }, { "hierarchies", JSON_OBJECT },
	{ "qi", JSON_ARRAY }, { "identifying", JSON_ARRAY },
	{ "sensitive", JSON_ARRAY }, { "insensitive", JSON_ARRAY },
	{ "separator", JSON_STRING }, { "warn_suppressed", JSON_REAL },
	{ "population", JSON_ARRAY }, { "pu_threshold", JSON_REAL },
	{ "pu_model", JSON_STRING }, { "k", JSON_INTEGER },
	{ "suppression_limit", JSON_REAL }, { "quality", JSON_STRING },
	{ "residual", JSON_ARRAY }, { "game", JSON_STRING },
	{ "game_cost", JSON_REAL }, { "game_gain", JSON_REAL },
	{ "game_loss", JSON_REAL }, { "game_benefit", JSON_REAL },
	{ "game_risk", JSON_STRING }, { "safe_harbor", JSON_OBJECT },
	{ "attacker", JSON_STRING }, { "max_adversarial_risk", JSON_REAL },
	{ "seed", JSON_INTEGER },
};
#define NJOB_FIELDS	(sizeof(job_fields) / sizeof(job_fields[0]))

static int
job_types(json_t *job, char *msg, size_t len)
{
	json_t *v;
	size_t i;

	for (i = 0; i < NJOB_FIELDS; i++) {
		if ((v = json_object_get(job, job_fields[i].key)) == NULL)
			continue;
		if (job_fields[i].type == JSON_REAL ? !json_is_number(v) :
		    json_typeof(v) != job_fields[i].type)
			return snprintf(msg, len, "field '%s': expected %s",
			    job_fields[i].key,
			    job_fields[i].type == JSON_STRING ? "a string" :
			    job_fields[i].type == JSON_OBJECT ? "an object" :
			    job_fields[i].type == JSON_ARRAY ? "an array" :
			    job_fields[i].type == JSON_INTEGER ? "an integer" :
			    "a number"), -1;
	}
	if (!job_values_ok(job))
		return snprintf(msg, len, "a list of the job has an element of "
		    "the wrong type or form"), -1;
	return 0;
}

int
gate_job_check(json_t *job, char *msg, size_t len)
{
	const char *key, *bad = NULL;
	char list[8192];
	json_t *v;
	size_t i;

	json_object_foreach(job, key, v) {
		for (i = 0; i < NJOB_FIELDS &&
		    strcmp(job_fields[i].key, key) != 0; i++)
			;
		if (i == NJOB_FIELDS)
			return snprintf(msg, len, "unknown field '%s'", key), -1;
	}
	if (!sha_ok(json_string_value(json_object_get(job, "data"))))
		return snprintf(msg, len, "field 'data': the sha256 an upload "
		    "returned"), -1;
	if (attr_list(json_object_get(job, "qi"), list, sizeof(list), &bad))
		return snprintf(msg, len, "field 'qi': 1..64 attribute names "
		    "without ',' '=' or control bytes%s%s", bad ? ": " : "",
		    bad ? bad : ""), -1;
	json_object_foreach(json_object_get(job, "hierarchies"), key, v)
		if (!attr_ok(key) || !sha_ok(json_string_value(v)))
			return snprintf(msg, len, "field 'hierarchies': "
			    "{attribute: upload sha256}"), -1;
	if (json_object_get(job, "hierarchies") != NULL &&
	    !json_is_object(json_object_get(job, "hierarchies")))
		return snprintf(msg, len, "field 'hierarchies': an object"), -1;
	if (json_object_get(job, "attacker") != NULL &&
	    !sha_ok(json_string_value(json_object_get(job, "attacker"))))
		return snprintf(msg, len, "field 'attacker': the sha256 an "
		    "upload returned"), -1;
	if (json_object_get(job, "pu_threshold") == NULL &&
	    json_object_get(job, "k") == NULL &&
	    json_object_get(job, "game") == NULL)
		return snprintf(msg, len, "a job needs 'pu_threshold' (with "
		    "'population'), 'k' or 'game', or several"), -1;
	return job_types(job, msg, len);
}

/* s is one of the NULL-terminated names. */
static int
one_of(const char *s, const char *const *names)
{
	for (; *names != NULL; names++)
		if (strcmp(s, *names) == 0)
			return 1;
	return 0;
}

/* Each safe_harbor QI is a qi and its level 0..255. */
static int
safe_harbor_ok(json_t *job, char *msg, size_t len)
{
	json_t *v, *q;
	const char *key;
	size_t i;

	json_object_foreach(json_object_get(job, "safe_harbor"), key, v) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > 255)
			return snprintf(msg, len, "field 'safe_harbor': the "
			    "level of '%s' is %lld, not 0..255", key,
			    (long long)json_integer_value(v)), -1;
		json_array_foreach(json_object_get(job, "qi"), i, q)
			if (strcmp(json_string_value(q), key) == 0)
				break;
		if (i == json_array_size(json_object_get(job, "qi")))
			return snprintf(msg, len, "field 'safe_harbor': '%s' is "
			    "not one of 'qi'", key), -1;
	}
	return 0;
}

int
gate_job_values(json_t *job, char *msg, size_t len)
{
	static const char *const games[] = { "payout", "no-attack",
	    "sh-friendly", "off", NULL };
	static const char *const risks[] = { "prosecutor", "journalist",
	    NULL };
	const char *game = json_string_value(json_object_get(job, "game"));
	const char *risk = json_string_value(json_object_get(job, "game_risk"));
	json_t *mar = json_object_get(job, "max_adversarial_risk");
	json_t *seed = json_object_get(job, "seed");
	int pop = json_array_size(json_object_get(job, "population")) > 0;
	int att = json_object_get(job, "attacker") != NULL;

	if (game != NULL && !one_of(game, games))
		return snprintf(msg, len, "field 'game': payout, no-attack, "
		    "sh-friendly or off, not '%s'", game), -1;
	if (risk != NULL && !one_of(risk, risks))
		return snprintf(msg, len, "field 'game_risk': prosecutor or "
		    "journalist, not '%s'", risk), -1;
	if (risk != NULL && strcmp(risk, "journalist") == 0 && !pop)
		return snprintf(msg, len, "field 'game_risk': journalist needs "
		    "'population'"), -1;
	if (safe_harbor_ok(job, msg, len) != 0)
		return -1;
	if (game != NULL && strcmp(game, "sh-friendly") == 0 &&
	    json_object_size(json_object_get(job, "safe_harbor")) == 0)
		return snprintf(msg, len, "field 'game': sh-friendly needs "
		    "'safe_harbor' {QI: level}, the levels where the "
		    "hierarchies meet HIPAA Safe Harbor"), -1;
	if (att && !pop)
		return snprintf(msg, len, "field 'attacker': needs "
		    "'population'"), -1;
	if (mar != NULL && !(json_number_value(mar) > 0 &&
	    json_number_value(mar) <= 1))
		return snprintf(msg, len, "field 'max_adversarial_risk': %g is "
		    "not within (0, 1]", json_number_value(mar)), -1;
	if (mar != NULL && !att)
		return snprintf(msg, len, "field 'max_adversarial_risk': needs "
		    "'attacker'"), -1;
	if (seed != NULL && (json_integer_value(seed) < 0 ||
	    json_integer_value(seed) > 9007199254740992LL))
		return snprintf(msg, len, "field 'seed': %lld is not 0..2^53",
		    (long long)json_integer_value(seed)), -1;
	if (seed != NULL && !att)
		return snprintf(msg, len, "field 'seed': needs 'attacker'"), -1;
	return 0;
}

/* Append "--opt", value to argv (value formatted into buf). */
struct argv_b {
	const char	*argv[GATE_ARGV_MAX];
	size_t		 n;
	char		 buf[32768];
	size_t		 used;
	int		 overflow;
};

static void
arg(struct argv_b *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
arg(struct argv_b *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->n + 1 >= GATE_ARGV_MAX) {
		b->overflow = 1;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->used, sizeof(b->buf) - b->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b->buf) - b->used) {
		b->overflow = 1;
		return;
	}
	b->argv[b->n++] = b->buf + b->used;
	b->used += (size_t)n + 1;
}

/* A number field as an option ("--k 5"); type errors refuse the job. */
static int
arg_number(struct argv_b *b, json_t *job, const char *key, const char *opt)
{
	json_t *v = json_object_get(job, key);

	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return -1;
	arg(b, "%s", opt);
	arg(b, "%.17g", json_number_value(v));
	return 0;
}

/* safe_harbor {QI: level} as "--safe-harbor QI=L,QI=L". */
static int
arg_safe_harbor(struct argv_b *b, json_t *job)
{
	json_t *sh = json_object_get(job, "safe_harbor"), *v;
	char list[8192];
	const char *key;
	size_t o = 0;
	int n;

	if (sh == NULL)
		return 0;
	if (!json_is_object(sh) || json_object_size(sh) == 0)
		return -1;
	json_object_foreach(sh, key, v) {
		if (!attr_ok(key) || !json_is_integer(v))
			return -1;
		n = snprintf(list + o, sizeof(list) - o, "%s%s=%lld",
		    o > 0 ? "," : "", key, (long long)json_integer_value(v));
		if (n < 0 || (size_t)n >= sizeof(list) - o)
			return -1;
		o += (size_t)n;
	}
	arg(b, "--safe-harbor");
	arg(b, "%s", list);
	return 0;
}

/* Options whose value is a string or a list. */
static int
arg_strings(struct argv_b *b, json_t *job, const char *spool)
{
	static const char *const lists[][2] = { { "qi", "--qi" },
	    { "identifying", "--identifying" }, { "sensitive", "--sensitive" },
	    { "insensitive", "--insensitive" } };
	static const char *const strs[][2] = { { "separator", "--separator" },
	    { "pu_model", "--pu-model" }, { "quality", "--quality" },
	    { "game", "--game" }, { "game_risk", "--game-risk" } };
	const char *bad, *key;
	char list[8192];
	json_t *v;
	size_t i;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		if ((v = json_object_get(job, lists[i][0])) == NULL)
			continue;
		if (attr_list(v, list, sizeof(list), &bad) != 0)
			return -1;
		arg(b, "%s", lists[i][1]);
		arg(b, "%s", list);
	}
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		if ((v = json_object_get(job, strs[i][0])) == NULL)
			continue;
		if (!json_is_string(v) || !attr_ok(json_string_value(v)))
			return -1;
		arg(b, "%s", strs[i][1]);
		arg(b, "%s", json_string_value(v));
	}
	json_object_foreach(json_object_get(job, "hierarchies"), key, v) {
		arg(b, "--hierarchy");
		arg(b, "%s=%s/%s", key, spool, json_string_value(v));
	}
	if ((v = json_object_get(job, "attacker")) != NULL) {
		arg(b, "--attacker");
		arg(b, "%s/%s", spool, json_string_value(v));
	}
	return arg_safe_harbor(b, job);
}

/* populations and residual bounds: arrays of numbers / objects. */
static int
arg_lists(struct argv_b *b, json_t *job)
{
	json_t *v, *pop, *bound;
	size_t i;

	json_array_foreach(json_object_get(job, "population"), i, v) {
		if (!json_is_number(v))
			return -1;
		arg(b, "--population");
		arg(b, "%.17g", json_number_value(v));
	}
	json_array_foreach(json_object_get(job, "residual"), i, v) {
		pop = json_object_get(v, "population");
		bound = json_object_get(v, "bound");
		if (!json_is_number(pop) || !json_is_number(bound))
			return -1;
		arg(b, "--residual");
		arg(b, "%.17g=%.17g", json_number_value(pop),
		    json_number_value(bound));
	}
	return 0;
}

/* The game-theoretic model's amounts (the variant is a string option). */
static int
arg_game(struct argv_b *b, json_t *job)
{
	static const char *const nums[][2] = { { "game_cost", "--game-cost" },
	    { "game_gain", "--game-gain" }, { "game_loss", "--game-loss" },
	    { "game_benefit", "--game-benefit" } };
	size_t i;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (arg_number(b, job, nums[i][0], nums[i][1]) != 0)
			return -1;
	return 0;
}

/* The argv gate_run would build, built and thrown away: every element
 * of every list is of the type the CLI needs.  1 yes, 0 no. */
static int
job_values_ok(json_t *job)
{
	struct argv_b *b = calloc(1, sizeof(*b));
	int ok;

	if (b == NULL)
		return 0;
	ok = arg_strings(b, job, "") == 0 && arg_lists(b, job) == 0;
	free(b);
	return ok;
}

int
gate_start(const struct api_config *cfg, json_t *job, const char *out_dir,
    char *err, size_t errlen)
{
	struct argv_b *b = calloc(1, sizeof(*b));
	char spool[4096];
	int rc;

	if (b == NULL)
		return snprintf(err, errlen, "out of memory"), -1;
	snprintf(spool, sizeof(spool), "%s/spool", cfg->state_dir);
	arg(b, "%s", cfg->cdsgate);
	arg(b, "deid");
	arg(b, "anonymize");
	arg(b, "--error-json");	/* read back by gate_said_parse() */
	arg(b, "--data");
	arg(b, "%s/%s", spool, json_string_value(json_object_get(job, "data")));
	if (arg_strings(b, job, spool) != 0 || arg_lists(b, job) != 0 ||
	    arg_number(b, job, "pu_threshold", "--pu-threshold") != 0 ||
	    arg_number(b, job, "k", "--k") != 0 ||
	    arg_number(b, job, "suppression_limit", "--suppression-limit") ||
	    arg_number(b, job, "warn_suppressed", "--warn-suppressed") ||
	    arg_number(b, job, "max_adversarial_risk",
	    "--max-adversarial-risk") || arg_number(b, job, "seed", "--seed") ||
	    arg_game(b, job)) {
		free(b);
		return snprintf(err, errlen, "the job has a field of the wrong "
		    "type"), GATE_BAD_JOB;
	}
	arg(b, "--output");
	arg(b, "%s/data.csv", out_dir);
	arg(b, "--report");
	arg(b, "%s/report.json", out_dir);
	if (b->overflow) {
		free(b);
		return snprintf(err, errlen, "the job is too large"),
		    GATE_BAD_JOB;
	}
	b->argv[b->n] = NULL;
	rc = gaterunner_send(cfg->gate, b->argv, err, errlen);
	free(b);
	return rc;
}

/* An import's source names: what the custodian called each upload. */
static int
source_name_ok(json_t *v)
{
	const char *s = json_string_value(v);
	size_t i, n;

	if (s == NULL || (n = strlen(s)) == 0 || n > GATE_SOURCE_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

int
gate_sources_check(json_t *sources, char *msg, size_t len)
{
	const char *key;
	json_t *v;

	if (sources == NULL)
		return 0;
	json_object_foreach(sources, key, v)
		if (strcmp(key, "data") != 0 && strcmp(key, "hierarchies") != 0
		    && strcmp(key, "attacker") != 0)
			return snprintf(msg, len, "field 'sources': unknown "
			    "field '%s'", key), -1;
	if (!json_is_object(sources) || (json_object_get(sources, "data") &&
	    !source_name_ok(json_object_get(sources, "data"))) ||
	    (json_object_get(sources, "attacker") &&
	    !source_name_ok(json_object_get(sources, "attacker"))) ||
	    (json_object_get(sources, "hierarchies") != NULL &&
	    !json_is_object(json_object_get(sources, "hierarchies"))))
		return snprintf(msg, len, "field 'sources': {\"data\": NAME, "
		    "\"hierarchies\": {ATTR: NAME}, \"attacker\": NAME}, names "
		    "of 1..%d bytes without control bytes", GATE_SOURCE_MAX),
		    -1;
	json_object_foreach(json_object_get(sources, "hierarchies"), key, v)
		if (!source_name_ok(v))
			return snprintf(msg, len, "field 'sources': the name "
			    "of hierarchy '%s' is not 1..%d bytes without "
			    "control bytes", key, GATE_SOURCE_MAX), -1;
	return 0;
}

/* One upload of a job: its spool path and the custodian's name for it;
 * a job has at most the data, an attacker and 64 hierarchies. */
#define SAID_FILES	66
struct said_file {
	char	path[4096 + 80];
	char	name[GATE_SOURCE_MAX + 1];
};

/* One upload of the job (sha) with the custodian's name, or fallback. */
static void
said_file(const struct api_config *cfg, struct said_file *f,
    const char *sha, const char *name, const char *fallback, const char *attr)
{
	snprintf(f->path, sizeof(f->path), "%s/spool/%s", cfg->state_dir, sha);
	if (name != NULL)
		snprintf(f->name, sizeof(f->name), "%s", name);
	else
		snprintf(f->name, sizeof(f->name), "%s%.128s", fallback, attr);
}

/* The job's uploads (data first) with their names, into f; the count. */
static size_t
said_files(const struct api_config *cfg, json_t *job, json_t *sources,
    struct said_file *f, size_t max)
{
	json_t *hs = json_object_get(sources, "hierarchies"), *v;
	const char *key;
	size_t n = 0;

	said_file(cfg, &f[n++], json_string_value(json_object_get(job,
	    "data")), json_string_value(json_object_get(sources, "data")),
	    "the uploaded data file", "");
	if ((v = json_object_get(job, "attacker")) != NULL)
		said_file(cfg, &f[n++], json_string_value(v), json_string_value(
		    json_object_get(sources, "attacker")), "the uploaded "
		    "attacker file", "");
	json_object_foreach(json_object_get(job, "hierarchies"), key, v) {
		if (n == max)
			break;
		said_file(cfg, &f[n++], json_string_value(v),
		    json_string_value(json_object_get(hs, key)),
		    "the uploaded hierarchy of ", key);
	}
	return n;
}

/* Bytes of the UTF-8 sequence at s, or 0 when it is not one. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 :
	    s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ?
	    4 : 0, i;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s into out with every spool path of f replaced by its name, control
 * bytes and bytes that are not UTF-8 shown as \xHH (the reply is JSON);
 * stops at a newline, and before what does not fit. */
static void
said_rename(const char *s, const struct said_file *f, size_t nf, char *out,
    size_t len)
{
	size_t o = 0, i, n, u;
	int w;

	for (; *s != '\0' && *s != '\n'; s += n) {
		for (i = 0; i < nf; i++)
			if (strncmp(s, f[i].path, strlen(f[i].path)) == 0)
				break;
		u = utf8_len((const unsigned char *)s);
		if (i < nf)
			n = strlen(f[i].path), w = snprintf(out + o, len - o,
			    "%s", f[i].name);
		else if (u == 0 || (unsigned char)*s < 0x20 || *s == 0x7f)
			n = 1, w = snprintf(out + o, len - o, "\\x%02x",
			    (unsigned char)*s);
		else
			n = u, w = snprintf(out + o, len - o, "%.*s", (int)u, s);
		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
	out[o] = '\0';
}

/* The first line of said that is the gate's {"error": ...}, or NULL. */
static json_t *
said_json(const char *said)
{
	const char *p;
	json_t *j, *e;

	for (p = said; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL) {
		if (*p != '{' || (j = json_loadb(p, strcspn(p, "\n"), 0,
		    NULL)) == NULL)
			continue;
		if (json_is_object(e = json_object_get(j, "error")) &&
		    json_is_string(json_object_get(e, "message")))
			return j;
		json_decref(j);
	}
	return NULL;
}

void
gate_said_parse(const struct api_config *cfg, json_t *job, json_t *sources,
    const char *said, struct gate_said *out)
{
	struct said_file *f = calloc(SAID_FILES, sizeof(*f));
	json_t *j = said_json(said), *e = json_object_get(j, "error");
	char msg[480], where[sizeof(out->file) + 48] = "";
	size_t nf = f != NULL ? said_files(cfg, job, sources, f, SAID_FILES) :
	    0;
	const char *s;

	memset(out, 0, sizeof(*out));
	if (e == NULL) {	/* not ours: its first line, as text */
		s = strncmp(said, "cdsgate: ", 9) == 0 ? said + 9 : said;
		said_rename(s, f, nf, out->text, sizeof(out->text));
		goto out;
	}
	said_rename(json_string_value(json_object_get(e, "file")) ?
	    json_string_value(json_object_get(e, "file")) : "", f, nf,
	    out->file, sizeof(out->file));
	said_rename(json_string_value(json_object_get(e, "message")), f, nf,
	    msg, sizeof(msg));
	out->line = (unsigned long)json_integer_value(json_object_get(e,
	    "line"));
	out->column = (unsigned long)json_integer_value(json_object_get(e,
	    "column"));
	if (out->file[0] != '\0' && out->line == 0)
		snprintf(where, sizeof(where), "%s: ", out->file);
	else if (out->file[0] != '\0' && out->column == 0)
		snprintf(where, sizeof(where), "%s:%lu: ", out->file, out->line);
	else if (out->file[0] != '\0')
		snprintf(where, sizeof(where), "%s:%lu:%lu: ", out->file,
		    out->line, out->column);
	snprintf(out->text, sizeof(out->text), "%s%s", where, msg);
out:
	json_decref(j);
	free(f);
}

/* Every string in v that names a spool path of f, renamed (said_rename). */
static void
rename_strings(json_t *v, const struct said_file *f, size_t nf,
    const char *spool)
{
	char out[2048];
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_string(v) && strstr(json_string_value(v), spool) != NULL) {
		said_rename(json_string_value(v), f, nf, out, sizeof(out));
		json_string_set(v, out);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			rename_strings(x, f, nf, spool);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			rename_strings(x, f, nf, spool);
	}
}

int
gate_report_rename(const struct api_config *cfg, json_t *job,
    json_t *sources, json_t *report)
{
	struct said_file *f = calloc(SAID_FILES, sizeof(*f));
	char spool[4096 + 16];

	if (f == NULL)
		return -1;
	snprintf(spool, sizeof(spool), "%s/spool/", cfg->state_dir);
	rename_strings(report, f, said_files(cfg, job, sources, f,
	    SAID_FILES), spool);
	free(f);
	return 0;
}
