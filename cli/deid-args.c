/*
 * cli/deid-args.c — options and input loading shared by the `deid`
 * commands: parses the command line, reads the untrusted CSV and
 * hierarchies, types the columns and builds the engine.  Bad input
 * becomes a message naming file, line and problem, and exit code 2.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "common/log.h"
#include "deid/anonymize.h"
#include "deid/dataset.h"
#include "deid/output.h"
#include "deid/report.h"
#include "deid/risk.h"
#include "deid/search.h"
#include "deid/summary.h"

enum {
	OPT_DATA = 256, OPT_QI, OPT_IDENT, OPT_SENS, OPT_HDIR, OPT_HIER,
	OPT_SEP, OPT_POP, OPT_JSON, OPT_OUTPUT, OPT_REPORT, OPT_PUT,
	OPT_PUMODEL, OPT_K, OPT_SUPP, OPT_QUALITY, OPT_RESID, OPT_THREADS,
	OPT_IN_PROCESS, OPT_SANDBOX_DEBUG, OPT_GAME, OPT_GCOST, OPT_GGAIN,
	OPT_GLOSS, OPT_GBENEFIT, OPT_INSENS, OPT_WARNSUPP, OPT_REPORT_HTML,
	OPT_ERRJSON, OPT_SAFE_HARBOR, OPT_GRISK, OPT_ATTACKER, OPT_MAXADV,
	OPT_POPTABLE,
	OPT_SEED
};

/* --error-json: dargs_error() writes one JSON object, for a program that
 * runs the command and names the files its own way (the api's gate). */
static int error_json;

static const struct option deid_longopts[] = {
	{ "data", required_argument, NULL, OPT_DATA },
	{ "qi", required_argument, NULL, OPT_QI },
	{ "identifying", required_argument, NULL, OPT_IDENT },
	{ "sensitive", required_argument, NULL, OPT_SENS },
	{ "insensitive", required_argument, NULL, OPT_INSENS },
	{ "hierarchies", required_argument, NULL, OPT_HDIR },
	{ "hierarchy", required_argument, NULL, OPT_HIER },
	{ "separator", required_argument, NULL, OPT_SEP },
	{ "population", required_argument, NULL, OPT_POP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "report-html", required_argument, NULL, OPT_REPORT_HTML },
	{ "pu-threshold", required_argument, NULL, OPT_PUT },
	{ "pu-model", required_argument, NULL, OPT_PUMODEL },
	{ "k", required_argument, NULL, OPT_K },
	{ "suppression-limit", required_argument, NULL, OPT_SUPP },
	{ "warn-suppressed", required_argument, NULL, OPT_WARNSUPP },
	{ "quality", required_argument, NULL, OPT_QUALITY },
	{ "residual", required_argument, NULL, OPT_RESID },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "game", required_argument, NULL, OPT_GAME },
	{ "game-cost", required_argument, NULL, OPT_GCOST },
	{ "game-gain", required_argument, NULL, OPT_GGAIN },
	{ "game-loss", required_argument, NULL, OPT_GLOSS },
	{ "game-benefit", required_argument, NULL, OPT_GBENEFIT },
	{ "error-json", no_argument, NULL, OPT_ERRJSON },
	{ "safe-harbor", required_argument, NULL, OPT_SAFE_HARBOR },
	{ "game-risk", required_argument, NULL, OPT_GRISK },
	{ "attacker", required_argument, NULL, OPT_ATTACKER },
	{ "population-table", required_argument, NULL, OPT_POPTABLE },
	{ "max-adversarial-risk", required_argument, NULL, OPT_MAXADV },
	{ "seed", required_argument, NULL, OPT_SEED },
	/* hidden, for debugging: parse in the CLI process itself, or make a
	   seccomp violation report the syscall instead of killing */
	{ "in-process", no_argument, NULL, OPT_IN_PROCESS },
	{ "sandbox-debug", no_argument, NULL, OPT_SANDBOX_DEBUG },
	{ NULL, 0, NULL, 0 }
};

/* --hierarchy ATTR=FILE */
static int
args_hierarchy(struct deid_args *a, char *arg)
{
	char *eq = strrchr(arg, '=');

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return cli_usage_error(a->usage, "--hierarchy wants ATTR=FILE, "
		    "got '%s'", arg);
	if (a->nhier == MAX_LIST)
		return cli_usage_error(a->usage, "too many --hierarchy options");
	*eq = '\0';
	a->hattr[a->nhier] = arg;
	a->hfile[a->nhier++] = eq + 1;
	return 0;
}

/* --residual N=BOUND */
static int
args_residual(struct deid_args *a, char *arg)
{
	char *eq = strchr(arg, '=');

	if (eq == NULL || a->nresid == MAX_LIST)
		return cli_usage_error(a->usage, "--residual wants N=BOUND, got "
		    "'%s'", arg);
	*eq = '\0';
	if (cli_parse_number(arg, &a->resid_n[a->nresid]) != 0 ||
	    a->resid_n[a->nresid] < 1 ||
	    cli_parse_number(eq + 1, &a->resid_b[a->nresid]) != 0 ||
	    a->resid_b[a->nresid] < 0 || a->resid_b[a->nresid] > 1)
		return cli_usage_error(a->usage, "--residual: bad population "
		    "or bound in '%s=%s'", arg, eq + 1);
	a->nresid++;
	return 0;
}

/* --safe-harbor QI=LEVEL[,QI=LEVEL...] (mapped to QIs in dargs_criteria) */
static int
args_safe_harbor(struct deid_args *a, char *arg)
{
	char *item, *save = NULL, *eq, *end;
	unsigned long l;

	for (item = strtok_r(arg, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		if (eq == NULL || eq == item || a->nsh == MAX_LIST)
			return cli_usage_error(a->usage, "--safe-harbor wants "
			    "QI=LEVEL[,QI=LEVEL...], got '%s'", item);
		*eq = '\0';
		errno = 0;
		l = strtoul(eq + 1, &end, 10);
		if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno ||
		    l > 255)
			return cli_usage_error(a->usage, "--safe-harbor: level "
			    "of %s must be a whole number 0..255, got '%s'",
			    item, eq + 1);
		a->sh_attr[a->nsh] = item;
		a->sh_level[a->nsh++] = (unsigned)l;
	}
	return 0;
}

/* Each --safe-harbor QI to its floor in the criteria. */
static int
args_floor(struct deid_args *a)
{
	size_t i, j;

	for (i = 0; i < a->nsh; i++) {
		for (j = 0; j < a->nqi; j++)
			if (strcmp(a->sh_attr[i], a->qi[j]) == 0)
				break;
		if (j == a->nqi)
			return cli_usage_error(a->usage, "--safe-harbor: %s is "
			    "not one of the --qi columns", a->sh_attr[i]);
		a->sopts.crit.min_level[j] = a->sh_level[i];
	}
	return 0;
}

/* Options with a numeric argument. */
static int
args_number(struct deid_args *a, int opt, const char *arg)
{
	double v;

	if (cli_parse_number(arg, &v) != 0)
		return cli_usage_error(a->usage, "not a number: '%s'", arg);
	switch (opt) {
	case OPT_POP:
		if (v < 1 || a->npop == MAX_LIST)
			return cli_usage_error(a->usage, "bad --population");
		a->pop[a->npop++] = v;
		break;
	case OPT_PUT:
		if (v < 0 || v > 1)
			return cli_usage_error(a->usage, "--pu-threshold must be "
			    "within 0..1 (or 0%%..100%%)");
		a->sopts.crit.pu_threshold = v;
		a->pu_set = 1;
		break;
	case OPT_K:
		if (v < 1 || v > 1e9 || v != floor(v))
			return cli_usage_error(a->usage, "--k must be a whole "
			    "number >= 1");
		a->sopts.crit.k = (unsigned)v;
		break;
	case OPT_SUPP:
		if (v < 0 || v > 1)
			return cli_usage_error(a->usage, "--suppression-limit "
			    "must be within 0..1 (or 0%%..100%%)");
		a->sopts.crit.suppression_limit = v;
		break;
	case OPT_WARNSUPP:
		if (v < 0 || v > 1)
			return cli_usage_error(a->usage, "--warn-suppressed "
			    "must be within 0..1 (or 0%%..100%%)");
		a->warn_suppressed = v;
		break;
	case OPT_THREADS:
		if (v < 1 || v > 8 || v != floor(v))
			return cli_usage_error(a->usage, "--threads: 1..8");
		a->sopts.threads = (unsigned)v;
		break;
	case OPT_MAXADV:
		if (!(v > 0 && v <= 1))
			return cli_usage_error(a->usage, "--max-adversarial-risk "
			    "must be within (0, 1] (or 0%%..100%%)");
		a->max_adversarial_risk = v;
		break;
	case OPT_SEED:
		if (v < 0 || v > 9007199254740992.0 || v != floor(v))
			return cli_usage_error(a->usage, "--seed: a whole "
			    "number 0..2^53");
		a->seed = (uint64_t)v;
		break;
	case OPT_GCOST:		a->sopts.crit.game.cost = v; break;
	case OPT_GGAIN:		a->sopts.crit.game.gain = v; break;
	case OPT_GLOSS:		a->sopts.crit.game.loss = v; break;
	case OPT_GBENEFIT:	a->sopts.crit.game.benefit = v; break;
	}
	return 0;
}

/* Options naming things (lists, files, models). */
static int
args_named(struct deid_args *a, int opt, char *arg)
{
	switch (opt) {
	case OPT_DATA:	a->data = arg; break;
	case OPT_QI:	a->nqi = cli_split(arg, a->qi, MAX_LIST); break;
	case OPT_IDENT:	a->nident = cli_split(arg, a->ident, MAX_LIST); break;
	case OPT_SENS:	a->nsens = cli_split(arg, a->sens, MAX_LIST); break;
	case OPT_INSENS: a->ninsens = cli_split(arg, a->insens, MAX_LIST);
		break;
	case OPT_HDIR:	a->hdir = arg; break;
	case OPT_HIER:	return args_hierarchy(a, arg);
	case OPT_RESID:	return args_residual(a, arg);
	case OPT_SAFE_HARBOR:	return args_safe_harbor(a, arg);
	case OPT_JSON:	a->json = 1; break;
	case OPT_ERRJSON: error_json = 1; break;
	case OPT_OUTPUT: a->output = arg; break;
	case OPT_REPORT: a->report = arg; break;
	case OPT_REPORT_HTML: a->report_html = arg; break;
	case OPT_ATTACKER: a->attacker = arg; break;
	case OPT_POPTABLE: a->poptable = arg; break;
	case OPT_IN_PROCESS: a->in_process = 1; break;
	case OPT_SANDBOX_DEBUG: a->sandbox_debug = 1; break;
	case OPT_SEP:
		if (strlen(arg) != 1 || arg[0] == '"' || arg[0] == '\n' ||
		    arg[0] == '\r')
			return cli_usage_error(a->usage, "--separator wants one "
			    "character");
		a->csv.separator = arg[0];
		break;
	case OPT_PUMODEL:
		if (deid_model_parse(arg, &a->sopts.crit.pu_model) != DEID_OK)
			return cli_usage_error(a->usage, "--pu-model: dankar, "
			    "pitman, zayatz or snb");
		break;
	case OPT_QUALITY:
		if (deid_quality_parse(arg, &a->sopts.quality) != DEID_OK)
			return cli_usage_error(a->usage, "--quality: loss, "
			    "entropy or payout");
		break;
	case OPT_GAME:
		if (deid_game_variant_parse(arg, &a->sopts.crit.game.variant)
		    != DEID_OK)
			return cli_usage_error(a->usage, "--game: payout, "
			    "no-attack, sh-friendly or off");
		break;
	case OPT_GRISK:
		if (deid_game_risk_parse(arg, &a->sopts.crit.game.risk)
		    != DEID_OK)
			return cli_usage_error(a->usage, "--game-risk: "
			    "prosecutor or journalist");
		break;
	default:
		return cli_usage_error(a->usage, "unknown option");
	}
	return 0;
}

int
dargs_parse(struct deid_args *a, int argc, char **argv)
{
	int opt, r;

	a->sopts.crit.suppression_limit = 1;
	a->warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
	a->sopts.crit.pu_model = DEID_MODEL_DANKAR;
	deid_game_defaults(&a->sopts.crit.game);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", deid_longopts, NULL)) != -1) {
		if (opt == '?')
			return cli_usage_error(a->usage, "unknown or incomplete "
			    "option '%s'", argv[optind - 1]);
		if (opt == OPT_POP || opt == OPT_PUT || opt == OPT_K ||
		    opt == OPT_SUPP || opt == OPT_WARNSUPP ||
		    opt == OPT_THREADS || opt == OPT_GCOST ||
		    opt == OPT_GGAIN || opt == OPT_GLOSS ||
		    opt == OPT_GBENEFIT || opt == OPT_MAXADV || opt == OPT_SEED)
			r = args_number(a, opt, optarg);
		else
			r = args_named(a, opt, optarg);
		if (r != 0)
			return r;
	}
	if (optind < argc)
		return cli_usage_error(a->usage, "unexpected argument '%s'",
		    argv[optind]);
	if (a->data == NULL || a->nqi == 0)
		return cli_usage_error(a->usage, "--data and --qi are required");
	if (a->attacker != NULL && a->npop == 0)
		return cli_usage_error(a->usage, "--attacker needs "
		    "--population N");
	if (a->max_adversarial_risk > 0 && a->attacker == NULL)
		return cli_usage_error(a->usage, "--max-adversarial-risk needs "
		    "--attacker FILE");
	return 0;
}

int
dargs_criteria(struct deid_args *a)
{
	struct deid_criteria *c = &a->sopts.crit;
	char msg[256];
	int r;

	if (a->pu_set) {
		if (a->npop == 0)
			return cli_usage_error(a->usage, "--pu-threshold needs "
			    "--population N");
		c->pu = 1;
		c->population = a->pop[0];
	}
	if (!c->pu && c->k < 2 && c->game.variant == DEID_GAME_OFF)
		return cli_usage_error(a->usage, "no privacy criterion: give "
		    "--pu-threshold T --population N, --k K (K >= 2) and/or "
		    "--game payout|no-attack|sh-friendly");
	if (deid_game_check(&c->game, msg, sizeof(msg)) != DEID_OK)
		return cli_usage_error(a->usage, "%s", msg);
	if ((r = args_floor(a)) != 0)
		return r;
	if (a->poptable != NULL && (c->game.variant == DEID_GAME_OFF ||
	    c->game.risk != DEID_GAME_JOURNALIST))
		return cli_usage_error(a->usage, "--population-table is the "
		    "game's journalist's: give --game VARIANT --game-risk "
		    "journalist");
	if (c->game.risk == DEID_GAME_JOURNALIST && a->npop == 0 &&
	    a->poptable == NULL)
		return cli_usage_error(a->usage, "--game-risk journalist needs "
		    "--population-table FILE or --population N (its success "
		    "probability is 1 over the class's size in the population, "
		    "or the sampling fraction over the class size)");
	if (c->game.variant == DEID_GAME_SH_FRIENDLY &&
	    !deid_criteria_has_floor(c, a->nqi))
		return cli_usage_error(a->usage, "--game sh-friendly needs "
		    "--safe-harbor QI=LEVEL,... (the levels where the "
		    "hierarchies meet HIPAA Safe Harbor)");
	return 0;
}

/* Untrusted bytes to a terminal: escaped by the logger's one escaping
 * step (common/log.h), so a terminal never obeys them. */
void
dargs_put_safe(FILE *f, const char *s, size_t n, int keep_lines)
{
	char c[LOG_ESC_MAX];
	size_t i, used;

	for (i = 0; i < n; i += used) {
		used = log_esc_char((const unsigned char *)s + i, n - i,
		    keep_lines ? LOG_ESC_LINES : 0, c);
		fputs(c, f);
	}
}

/* The error as one line of JSON on stderr: {"error": {"status", "file",
 * "line", "column", "message"}} (0 and "" where unknown); 0, or -1 when
 * it is not UTF-8 (the caller prints it as text). */
static int
error_put_json(int r, const struct deid_error *err)
{
	json_t *j = json_pack("{s:{s:s, s:s, s:I, s:I, s:s}}", "error",
	    "status", deid_strerror(r), "file", err->file, "line",
	    (json_int_t)err->line, "column", (json_int_t)err->column,
	    "message", err->msg[0] != '\0' ? err->msg : deid_strerror(r));

	if (j == NULL)
		return -1;
	json_dumpf(j, stderr, JSON_COMPACT | JSON_ENSURE_ASCII);
	putc('\n', stderr);
	json_decref(j);
	return 0;
}

/* Print a library error as "cdsgate: file:line: msg"; map to exit code. */
int
dargs_error(int r, const struct deid_error *err, int reading)
{
	char msg[1400];

	if (err->msg[0] != '\0')
		deid_error_format(err, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "%s", deid_strerror(r));
	if (!error_json || error_put_json(r, err) != 0) {
		fputs("cdsgate: ", stderr);
		dargs_put_safe(stderr, msg, strlen(msg), 0);
		putc('\n', stderr);
	}
	if (r == DEID_EINPUT || r == DEID_ELIMIT || (reading && r == DEID_EIO))
		return EXIT_BAD_INPUT;
	return EXIT_INTERNAL;
}

/* Find DIR/<anything>hierarchy_<attr>.csv; exactly one must match. */
static int
find_hierarchy(const char *dir, const char *attr, char **path,
    struct deid_error *err)
{
	char want[600];
	struct dirent *de;
	size_t wl, nl;
	DIR *d;
	int n = 0;

	*path = NULL;
	snprintf(want, sizeof(want), "hierarchy_%s.csv", attr);
	wl = strlen(want);
	if ((d = opendir(dir)) == NULL)
		return deid_error_set(err, DEID_EINPUT, dir, 0, 0,
		    "cannot open hierarchy directory");
	while ((de = readdir(d)) != NULL) {
		nl = strlen(de->d_name);
		if (nl < wl || strcmp(de->d_name + nl - wl, want) != 0)
			continue;
		if (n++ == 0 && asprintf(path, "%s/%s", dir, de->d_name) < 0)
			*path = NULL;
	}
	closedir(d);
	if (n == 1 && *path != NULL)
		return DEID_OK;
	free(*path);
	*path = NULL;
	return deid_error_set(err, DEID_EINPUT, dir, 0, 0, n == 0 ?
	    "no hierarchy for quasi-identifier \"%s\" (want *%s)" :
	    "several files match *hierarchy_%s.csv", n == 0 ? attr : attr,
	    n == 0 ? want : "");
}

/* Which hierarchy file, if any, belongs to QI attr. */
static int
hierarchy_path(const struct deid_args *a, const char *attr, char **path,
    struct deid_error *err)
{
	size_t i;

	*path = NULL;
	for (i = 0; i < a->nhier; i++)
		if (strcmp(a->hattr[i], attr) == 0)
			return (*path = strdup(a->hfile[i])) ? DEID_OK :
			    DEID_ENOMEM;
	if (a->hdir != NULL)
		return find_hierarchy(a->hdir, attr, path, err);
	return DEID_OK;
}

/* Open one file for the worker; a failure is kept in in, not returned. */
static void
input_open(struct deid_input *in, const char *path)
{
	snprintf(in->name, sizeof(in->name), "%s", path);
	if (strlen(path) >= sizeof(in->name))
		in->status = deid_error_set(&in->err, DEID_EINPUT, NULL, 0, 0,
		    "path too long: %.64s...", path);
	else
		in->status = deid_file_open(path, &in->fd, &in->err);
}

/* Find and open QI i's hierarchy; the outcome is kept in in->hier[i]. */
static void
open_hierarchy(const struct deid_args *a, size_t i, int need,
    struct deid_inputs *in)
{
	struct deid_input *h = &in->hier[i];
	char *path;

	if ((h->status = hierarchy_path(a, a->qi[i], &path, &h->err)) !=
	    DEID_OK)
		return;
	if (path == NULL && need)
		h->status = deid_error_set(&h->err, DEID_EINPUT, NULL, 0, 0,
		    "no hierarchy for quasi-identifier \"%s\" (use "
		    "--hierarchies DIR or --hierarchy %s=FILE)",
		    a->qi[i], a->qi[i]);
	else if (path != NULL)
		input_open(h, path);
	free(path);
}

int
dargs_open(const struct deid_args *a, int need_hier, struct deid_inputs *in,
    struct deid_error *err)
{
	size_t i;

	memset(in, 0, sizeof(*in));
	in->data.fd = in->out_fd = in->attacker.fd = in->poptable.fd = -1;
	for (i = 0; i < MAX_LIST; i++)
		in->hier[i].fd = -1;
	input_open(&in->data, a->data);
	if (in->data.status != DEID_OK) {
		*err = in->data.err;
		return in->data.status;
	}
	for (i = 0; i < a->nqi; i++)
		open_hierarchy(a, i, need_hier, in);
	if (a->attacker != NULL)
		input_open(&in->attacker, a->attacker);
	if (in->attacker.status != DEID_OK) {
		*err = in->attacker.err;
		dargs_close(in);
		return in->attacker.status;
	}
	if (a->poptable != NULL)
		input_open(&in->poptable, a->poptable);
	if (in->poptable.status != DEID_OK) {
		*err = in->poptable.err;
		dargs_close(in);
		return in->poptable.status;
	}
	return DEID_OK;
}

void
dargs_close(struct deid_inputs *in)
{
	size_t i;

	if (in->data.fd >= 0)
		close(in->data.fd);
	in->data.fd = -1;
	for (i = 0; i < MAX_LIST; i++) {
		if (in->hier[i].fd >= 0)
			close(in->hier[i].fd);
		in->hier[i].fd = -1;
	}
	if (in->attacker.fd >= 0)
		close(in->attacker.fd);
	in->attacker.fd = -1;
	if (in->poptable.fd >= 0)
		close(in->poptable.fd);
	in->poptable.fd = -1;
}

/* Read one input the parent opened (or report why it could not). */
static int
input_read(struct deid_input *in, char **data, size_t *len,
    struct deid_error *err)
{
	int r;

	if (in->status != DEID_OK) {
		*err = in->err;
		return in->status;
	}
	r = deid_fd_read(in->fd, in->name, data, len, err);
	close(in->fd);
	in->fd = -1;
	return r;
}

/* One input as bytes for the job; a failure to read is kept in f, to be
 * reported where the library parses it. */
static void
job_file(struct deid_input *in, struct deid_job_file *f, char **buf)
{
	size_t len = 0;

	*buf = NULL;
	memset(f, 0, sizeof(*f));
	f->name = in->name;
	if (in->status == DEID_OK && in->fd < 0)
		return;		/* no file: the flat hierarchy */
	f->status = input_read(in, buf, &len, &f->err);
	f->data = *buf;
	f->len = len;
}

void
dargs_job(const struct deid_args *a, struct deid_inputs *in,
    struct deid_job *job, char **bufs)
{
	size_t i;

	memset(job, 0, sizeof(*job));
	job->csv = a->csv;
	job->qi = (const char *const *)a->qi;
	job->nqi = a->nqi;
	job->identifying = (const char *const *)a->ident;
	job->nidentifying = a->nident;
	job->sensitive = (const char *const *)a->sens;
	job->nsensitive = a->nsens;
	job->insensitive = (const char *const *)a->insens;
	job->ninsensitive = a->ninsens;
	job->sopts = a->sopts;
	job->population = a->pop;
	job->npopulation = a->npop;
	job->residual_population = a->resid_n;
	job->residual_bound = a->resid_b;
	job->nresidual = a->nresid;
	job->warn_suppressed = a->warn_suppressed;
	job->out_fd = in->out_fd;
	job->out_name = a->output;
	job->adversary_seed = a->seed;
	job->max_adversarial_risk = a->max_adversarial_risk;
	job_file(&in->data, &job->data, &bufs[0]);
	for (i = 0; i < a->nqi; i++)
		job_file(&in->hier[i], &job->hier[i], &bufs[1 + i]);
	job_file(&in->poptable, &job->population_table,
	    &bufs[DARGS_NBUFS - 2]);
	job_file(&in->attacker, &job->attacker, &bufs[DARGS_NBUFS - 1]);
}

void
dargs_job_free(char **bufs)
{
	size_t i;

	for (i = 0; i < DARGS_NBUFS; i++) {
		free(bufs[i]);
		bufs[i] = NULL;
	}
}

/* Load the data, type its columns, bind hierarchies, build the engine. */
int
dargs_load(const struct deid_args *a, struct deid_inputs *in,
    struct deid_dataset **dsp, struct deid_engine **ep,
    struct deid_error *err)
{
	char *bufs[DARGS_NBUFS] = { 0 };
	struct deid_job job;
	int r;

	dargs_job(a, in, &job, bufs);
	r = deid_job_load(&job, 0, dsp, ep, err);
	dargs_job_free(bufs);
	return r;
}
