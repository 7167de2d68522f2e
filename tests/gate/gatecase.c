/*
 * tests/gate/gatecase.c — random gate cases, their files, the gate run
 * on them (the library or the CLI), and the judgement of each outcome
 * by tests/gate/gatecheck.c (gatecase.h).
 * Test code: trusts its own generator, nothing the gate returns.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deid/anonymize.h"
#include "deid/risk.h"
#include "tests/gate/gatecase.h"

const char *const gp_models[4] = { "dankar", "pitman", "zayatz", "snb" };

/* ---- random numbers: the fuzzer's bytes first, then splitmix64 ---- */

/* Bytes first (p may be NULL), then splitmix64 from seed. */
void
gp_rng_init(struct gp_rng *r, uint64_t seed, const uint8_t *p, size_t n)
{
	r->s = seed;
	r->p = p;
	r->n = n;
}

/* 64 bits: up to 8 of the given bytes while they last, else splitmix. */
uint64_t
gp_next(struct gp_rng *r)
{
	uint64_t z = 0;
	int i;

	if (r->n > 0) {
		for (i = 0; i < 8 && r->n > 0; i++, r->n--)
			z = z << 8 | *r->p++;
		return z;
	}
	z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0..n-1; one byte of the fuzzer's input per small choice. */
unsigned
gp_rnd(struct gp_rng *r, unsigned n)
{
	if (n == 0)
		return 0;
	if (r->n > 0 && n <= 256) {
		r->n--;
		return *r->p++ % n;
	}
	return (unsigned)(gp_next(r) % n);
}

/* Uniform in [0, 1). */
static double
gp_unif(struct gp_rng *r)
{
	return (double)(gp_next(r) >> 11 & ((1ULL << 53) - 1)) /
	    9007199254740992.0;
}

/* ---- the generator ---- */

/* Leaf strings: plain, or now and then needing CSV quoting. */
static void
gen_leaf(struct gp_rng *s, int odd, size_t j, size_t i, char *out)
{
	static const char *const odd_tail[] = { " a,b", " \"q\"", ";x", " y" };

	snprintf(out, GP_VAL, "q%uv%u%s", (unsigned)j % 10, (unsigned)i % 100,
	    odd && gp_rnd(s, 3) == 0 ? odd_tail[gp_rnd(s, 4)] : "");
}

/* Level l's value of every leaf: the same parent for leaves that share
 * their level l-1 value; a value kept as it is (an uneven branch), a
 * group, or at the top now and then one root for all. */
static void
gen_level(struct gp_rng *s, struct gp_hier *h, size_t j, size_t l)
{
	size_t i, p, groups = 1 + gp_rnd(s, (unsigned)h->nleaves);
	int one_root = l + 1 == h->nlevels && gp_rnd(s, 2) == 0;
	const char *root = gp_rnd(s, 4) ? "*" : "ANY";

	for (i = 0; i < h->nleaves; i++) {
		for (p = 0; p < i; p++)
			if (strcmp(h->val[p][l - 1], h->val[i][l - 1]) == 0)
				break;
		if (p < i)
			memcpy(h->val[i][l], h->val[p][l], GP_VAL);
		else if (one_root)
			snprintf(h->val[i][l], GP_VAL, "%s", root);
		else if (gp_rnd(s, 5) == 0)
			memcpy(h->val[i][l], h->val[i][l - 1], GP_VAL);
		else
			snprintf(h->val[i][l], GP_VAL, "q%zul%zug%u", j % 10, l % 10,
			    gp_rnd(s, (unsigned)groups));
	}
}

/* One QI's hierarchy: 1..12 leaves, 1..5 levels, each level from the last. */
static void
gen_hier(struct gp_rng *s, struct gp_hier *h, size_t j)
{
	size_t i, l;
	int odd = gp_rnd(s, 12) == 0;

	h->nleaves = 1 + gp_rnd(s, GP_MAXLEAF);
	h->nlevels = 1 + gp_rnd(s, GP_MAXLEV);
	for (i = 0; i < h->nleaves; i++)
		gen_leaf(s, odd, j, i, h->val[i][0]);
	for (l = 1; l < h->nlevels; l++)
		gen_level(s, h, j, l);
}

/* Columns: the QIs, maybe an identifying, a sensitive and an
 * insensitive one, in a random order. */
static void
gen_columns(struct gp_rng *s, struct gp_case *c)
{
	static const char *const extra[] = { "pid", "diag", "site" };
	struct gp_col t;
	size_t i, j;

	c->nqi = 1 + gp_rnd(s, GP_MAXQI);
	for (c->ncols = 0; c->ncols < c->nqi; c->ncols++) {
		c->col[c->ncols].kind = GP_COL_QI;
		c->col[c->ncols].qi = (int)c->ncols;
		snprintf(c->col[c->ncols].name, 16, "q%u", (unsigned)c->ncols % 10);
	}
	for (i = 0; i < 3; i++)
		if (gp_rnd(s, 2)) {
			c->col[c->ncols].kind = GP_COL_ID + (int)i;
			c->col[c->ncols].qi = -1;
			snprintf(c->col[c->ncols++].name, 16, "%s", extra[i]);
		}
	for (i = c->ncols - 1; i > 0; i--) {
		j = gp_rnd(s, (unsigned)i + 1);
		t = c->col[i], c->col[i] = c->col[j], c->col[j] = t;
	}
}

/* Rows: skewed leaf choices so classes of many sizes occur. */
static void
gen_rows(struct gp_rng *s, struct gp_case *c)
{
	size_t r, j, n;

	c->nrows = 1 + gp_rnd(s, gp_rnd(s, 4) ? 40 : GP_MAXROWS);
	for (r = 0; r < c->nrows; r++) {
		for (j = 0; j < c->nqi; j++) {
			n = c->h[j].nleaves;
			c->leaf[r][j] = gp_rnd(s, 2) ? gp_rnd(s, (unsigned)n) :
			    gp_rnd(s, 1 + gp_rnd(s, (unsigned)n));
		}
		for (j = 0; j < c->ncols; j++)
			snprintf(c->other[r][j], GP_VAL, "%s%u",
			    c->col[j].name, gp_rnd(s, 1000));
	}
}

/* k, PU (threshold, population n..1e6 n, model), the suppression limit,
 * now and then the game; at least one criterion. */
static void
gen_criteria(struct gp_rng *s, struct gp_case *c)
{
	static const double ts[] = { 0, 0.001, 0.01, 0.05, 0.1, 0.3, 1 };
	static const double lims[] = { 0, 0.02, 0.05, 0.1, 0.25, 0.5, 1 };
	unsigned r = gp_rnd(s, 10);

	c->k = r < 3 ? 0 : 2 + gp_rnd(s, 6);
	if (gp_rnd(s, 20) == 0)
		c->k = (unsigned)c->nrows + gp_rnd(s, 3);
	if ((c->pu = gp_rnd(s, 10) < 4)) {
		c->t = ts[gp_rnd(s, 7)];
		c->N = gp_rnd(s, 8) == 0 ? (double)c->nrows :
		    ceil((double)c->nrows * exp(gp_unif(s) * log(1e6)));
		c->model = (int)gp_rnd(s, 4);
	}
	c->limit = gp_rnd(s, 8) < 7 ? lims[gp_rnd(s, 7)] : gp_unif(s);
	if (gp_rnd(s, 12) == 0) {
		c->game = 1 + (int)gp_rnd(s, 2);
		c->cost = 1 + gp_rnd(s, 10);
		c->gain = gp_rnd(s, 400);
		c->benefit = 1 + gp_rnd(s, 1500);
	}
	if (c->k < 2)
		c->k = 0;
	if (c->k == 0 && !c->pu && c->game == 0)
		c->k = 2;
	c->threads = 1 + gp_rnd(s, 2);
}

/* The whole case; the order of the draws keeps old seeds' cases. */
void
gp_gen_case(struct gp_rng *s, uint64_t seed, struct gp_case *c)
{
	size_t j;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->sep = gp_rnd(s, 2) ? ',' : ';';
	gen_columns(s, c);
	for (j = 0; j < c->nqi; j++)
		gen_hier(s, &c->h[j], j);
	gen_rows(s, c);
	gen_criteria(s, c);
	c->dup_q = gp_rnd(s, 15) == 0 ? (int)gp_rnd(s, (unsigned)c->nqi) : -1;
	if (c->dup_q >= 0)
		c->dup_row = gp_rnd(s, (unsigned)c->h[c->dup_q].nleaves);
	if (gp_rnd(s, 8) == 0)	/* now and then a Safe Harbor floor */
		for (j = 0; j < c->nqi; j++)
			c->floor[j] = gp_rnd(s, (unsigned)c->h[j].nlevels);
}

/* ---- writing the case's files ---- */

/* An RFC 4180 field, quoted when it holds sep, a quote or a newline. */
void
gp_put_field(FILE *f, const char *v, char sep)
{
	const char *p;

	if (strchr(v, sep) == NULL && strpbrk(v, "\"\r\n") == NULL) {
		fputs(v, f);
		return;
	}
	putc('"', f);
	for (p = v; *p; p++) {
		if (*p == '"')
			putc('"', f);
		putc(*p, f);
	}
	putc('"', f);
}

/* The input value of column i in row r. */
const char *
gp_input_cell(const struct gp_case *c, size_t r, size_t i)
{
	const struct gp_col *col = &c->col[i];

	if (col->kind == GP_COL_QI)
		return c->h[col->qi].val[c->leaf[r][col->qi]][0];
	return c->other[r][i];
}

/* Hierarchy row i: the leaf and its value at every level. */
static void
put_row(FILE *f, const struct gp_hier *h, size_t i, char sep)
{
	size_t l;

	for (l = 0; l < h->nlevels; l++) {
		gp_put_field(f, h->val[i][l], sep);
		putc(l + 1 < h->nlevels ? sep : '\n', f);
	}
}

/* The table, and each hierarchy (one with its row dup_row repeated
 * verbatim as the last line). */
static int
write_files(const struct gp_case *c, const char *dir)
{
	char path[512];
	size_t r, i, j;
	FILE *f;

	snprintf(path, sizeof(path), "%s/data.csv", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	for (r = 0; r <= c->nrows; r++)
		for (i = 0; i < c->ncols; i++) {
			gp_put_field(f, r ? gp_input_cell(c, r - 1, i) :
			    c->col[i].name, c->sep);
			putc(i + 1 < c->ncols ? c->sep : '\n', f);
		}
	if (fclose(f) != 0)
		return -1;
	for (j = 0; j < c->nqi; j++) {
		snprintf(path, sizeof(path), "%s/hierarchy_q%zu.csv", dir, j);
		if ((f = fopen(path, "w")) == NULL)
			return -1;
		for (i = 0; i < c->h[j].nleaves; i++)
			put_row(f, &c->h[j], i, c->sep);
		if (c->dup_q == (int)j)
			put_row(f, &c->h[j], c->dup_row, c->sep);
		if (fclose(f) != 0)
			return -1;
	}
	return 0;
}

/* ---- running the gate ---- */

struct gp_result {
	int	 exit;		/* as the CLI's: 0 passed, 3 failed */
	json_t	*report;
	char	 msg[512];
};

const char *const gp_files[GP_NFILES] = {
	"data.csv", "out.csv", "r.json", "stdout.txt", "hierarchy_q0.csv",
	"hierarchy_q1.csv", "hierarchy_q2.csv", "hierarchy_q3.csv", "tampered.csv",
};

/* A double for the command line, exactly. */
static void
fmt_real(char *out, double v)
{
	snprintf(out, 32, "%.17g", v);
}

/* `cdsgate deid anonymize` with the case's criteria, in this process's
 * child, parsing in-process (no seccomp'd worker). */
static void
run_cli(const char *cdsgate, const struct gp_case *c, const char *dir,
    struct gp_result *res)
{
	char a[64][600], *argv[65], sep[2] = { c->sep, 0 }, path[600];
	size_t n = 0, i, j;
	int st, fd;
	pid_t pid;
	FILE *f;

#define ARG(...)	(snprintf(a[n], sizeof(a[n]), __VA_ARGS__), \
			    argv[n] = a[n], n++)
	ARG("%s", cdsgate); ARG("deid"); ARG("anonymize"); ARG("--in-process");
	ARG("--data"); ARG("%s/data.csv", dir);
	ARG("--hierarchies"); ARG("%s", dir);
	ARG("--output"); ARG("%s/out.csv", dir);
	ARG("--report"); ARG("%s/r.json", dir);
	ARG("--separator"); ARG("%s", sep);
	ARG("--threads"); ARG("%u", c->threads);
	ARG("--suppression-limit"); fmt_real(a[n], c->limit); argv[n] = a[n];
	n++;
	ARG("--qi"); a[n][0] = '\0';
	for (j = 0; j < c->nqi; j++)
		snprintf(a[n] + strlen(a[n]), 8, "%sq%u", j ? "," : "", (unsigned)j % 10);
	argv[n] = a[n];
	n++;
	for (i = 0; i < c->ncols; i++)
		if (c->col[i].kind == GP_COL_ID) {
			ARG("--identifying"); ARG("%s", c->col[i].name);
		} else if (c->col[i].kind == GP_COL_SENS) {
			ARG("--sensitive"); ARG("%s", c->col[i].name);
		} else if (c->col[i].kind == GP_COL_INS) {
			ARG("--insensitive"); ARG("%s", c->col[i].name);
		}
	if (c->k > 1) {
		ARG("--k"); ARG("%u", c->k);
	}
	if (c->pu) {
		ARG("--pu-threshold"); fmt_real(a[n], c->t); argv[n] = a[n];
		n++;
		ARG("--population"); fmt_real(a[n], c->N); argv[n] = a[n];
		n++;
		ARG("--pu-model"); ARG("%s", gp_models[c->model]);
	}
	if (c->game) {
		ARG("--game"); ARG("%s", c->game == 1 ? "no-attack" : "payout");
		ARG("--game-cost"); ARG("%g", c->cost);
		ARG("--game-gain"); ARG("%g", c->gain);
		ARG("--game-benefit"); ARG("%g", c->benefit);
	}
	ARG("--safe-harbor"); a[n][0] = '\0';	/* q0=0 is no floor */
	for (j = 0; j < c->nqi; j++)
		snprintf(a[n] + strlen(a[n]), 12, "%sq%u=%u", j ? "," : "",
		    (unsigned)j % 10, c->floor[j] % 100);
	argv[n] = a[n];
	n++;
#undef ARG
	argv[n] = NULL;
	snprintf(path, sizeof(path), "%s/stdout.txt", dir);
	if ((pid = fork()) == 0) {
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
			_exit(125);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(cdsgate, argv);
		_exit(126);
	}
	res->exit = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	    WEXITSTATUS(st) : 128;
	if ((f = fopen(path, "r")) != NULL) {
		res->msg[fread(res->msg, 1, sizeof(res->msg) - 1, f)] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/r.json", dir);
	res->report = json_load_file(path, 0, NULL);
}

/* A case file as the job's bytes. */
int
gp_slurp(const char *dir, const char *name, struct deid_job_file *f,
    char **buf)
{
	char path[600];
	long len;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	if (len < 0 || (*buf = malloc((size_t)len + 1)) == NULL ||
	    fread(*buf, 1, (size_t)len, fp) != (size_t)len) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	f->name = name;
	f->data = *buf;
	f->len = (size_t)len;
	return 0;
}

/* The job's lists and criteria from the case. */
void
gp_lib_job(const struct gp_case *c, struct deid_job *job, const char **names,
    const double *pop)
{
	const char **lists[4];
	size_t *counts[4], i, k;

	memset(job, 0, sizeof(*job));
	lists[GP_COL_QI] = names, counts[GP_COL_QI] = &job->nqi;
	lists[GP_COL_ID] = names + GP_MAXCOL, counts[GP_COL_ID] = &job->nidentifying;
	lists[GP_COL_SENS] = names + 2 * GP_MAXCOL,
	    counts[GP_COL_SENS] = &job->nsensitive;
	lists[GP_COL_INS] = names + 3 * GP_MAXCOL,
	    counts[GP_COL_INS] = &job->ninsensitive;
	for (i = 0; i < c->ncols; i++) {
		k = (size_t)c->col[i].kind;
		if (k == GP_COL_QI)
			lists[k][c->col[i].qi] = c->col[i].name;
		else
			lists[k][*counts[k]] = c->col[i].name;
		(*counts[k])++;
	}
	job->qi = lists[GP_COL_QI];
	job->identifying = lists[GP_COL_ID];
	job->sensitive = lists[GP_COL_SENS];
	job->insensitive = lists[GP_COL_INS];
	job->csv.separator = c->sep;
	job->sopts.threads = c->threads;
	job->sopts.crit.k = c->k;
	job->sopts.crit.suppression_limit = c->limit;
	deid_model_parse(gp_models[c->model], &job->sopts.crit.pu_model);
	if ((job->sopts.crit.pu = c->pu)) {
		job->sopts.crit.pu_threshold = c->t;
		job->sopts.crit.population = c->N;
		job->population = pop;
		job->npopulation = 1;
	}
	deid_game_defaults(&job->sopts.crit.game);
	if (c->game) {
		deid_game_variant_parse(c->game == 1 ? "no-attack" : "payout",
		    &job->sopts.crit.game.variant);
		job->sopts.crit.game.cost = c->cost;
		job->sopts.crit.game.gain = c->gain;
		job->sopts.crit.game.benefit = c->benefit;
	}
	for (i = 0; i < c->nqi; i++)
		job->sopts.crit.min_level[i] = c->floor[i];
	job->warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
}

/* deid_anonymize() on the case's files, the released table into
 * dir/out.csv; as its contract asks of the caller (and the CLI does),
 * the file is removed unless the call says it is released, so the
 * gate's verdict and rep->released must agree (else exit 1). */
static void
run_lib(const struct gp_case *c, const char *dir, struct gp_result *res)
{
	const char *names[4 * GP_MAXCOL];
	char *bufs[1 + GP_MAXQI] = { NULL }, path[600];
	struct deid_error err = { .msg = "" };
	struct deid_anon_report rep;
	struct deid_job job;
	size_t j;
	int r, fd;

	memset(&rep, 0, sizeof(rep));
	gp_lib_job(c, &job, names, &c->N);
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	res->exit = 125;
	if (gp_slurp(dir, "data.csv", &job.data, &bufs[0]) != 0 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0) {
		snprintf(res->msg, sizeof(res->msg), "cannot set up the job");
		goto out;
	}
	for (j = 0; j < c->nqi; j++)
		if (gp_slurp(dir, gp_files[GP_HIER0 + j], &job.hier[j],
		    &bufs[1 + j]) != 0) {
			snprintf(res->msg, sizeof(res->msg), "cannot read %s",
			    gp_files[GP_HIER0 + j]);
			close(fd);
			goto out;
		}
	job.out_fd = fd;
	job.out_name = "out.csv";
	r = deid_anonymize(&job, &rep, &err);
	if (r != DEID_OK) {
		res->exit = r == DEID_EINPUT ? 2 : 1;
		deid_error_format(&err, res->msg, sizeof(res->msg));
	} else {
		res->exit = rep.gate_passed ? 0 : 3;
		res->report = deid_report_anonymize(&rep);
		if (rep.gate_passed != rep.released) {
			res->exit = 1;
			snprintf(res->msg, sizeof(res->msg), "gate %d but "
			    "released %d", rep.gate_passed, rep.released);
		}
	}
	if (!rep.released)
		unlink(path);	/* the caller discards what is not released */
	close(fd);
out:
	deid_anon_report_free(&rep);
	for (j = 0; j <= GP_MAXQI; j++)
		free(bufs[j]);
}

/* Run one case in dir, leave its files there; judge it. */
int
gp_run_case(const char *cli, const struct gp_case *c, const char *dir,
    int *passed, char *why)
{
	struct gp_result res = { .exit = -1 };
	char path[600];
	int r = -1;

	if (write_files(c, dir) != 0) {
		snprintf(why, 512, "cannot write the case: %s", strerror(errno));
		goto out;
	}
	if (cli != NULL)
		run_cli(cli, c, dir, &res);
	else
		run_lib(c, dir, &res);
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	*passed = res.exit == 0;
	if ((res.exit == 0 || res.exit == 3) &&
	    gp_check_warning(c, res.report, why) != 0)
		goto out;
	if (res.exit == 0) {
		if ((r = gp_check_passed(c, dir, res.report, why)) == 0)
			r = gp_check_tampered(c, dir, why);
	} else if (res.exit != 3)
		snprintf(why, 512, "exit %d: %.400s", res.exit, res.msg);
	else if (access(path, F_OK) == 0)
		snprintf(why, 512, "gate failed (exit 3), yet %.400s exists", path);
	else
		r = gp_check_failed(c, why);
out:
	json_decref(res.report);
	return r;
}

/* ---- describing and cleaning up ---- */

/* Distinct values at one level of h. */
size_t
gp_distinct_at(const struct gp_hier *h, size_t l)
{
	size_t i, p, n = 0;

	for (i = 0; i < h->nleaves; i++) {
		for (p = 0; p < i && strcmp(h->val[p][l], h->val[i][l]); p++)
			;
		n += p == i;
	}
	return n;
}

/* The case in a few TAP comment lines, to reproduce it by its seed. */
void
gp_describe_case(FILE *f, const struct gp_case *c)
{
	size_t j;

	fprintf(f, "#   case seed %" PRIu64 ": %zu records, sep '%c', k %u, "
	    "limit %.17g, PU %s t %g N %.17g (%s), game %d (cost %g gain %g)\n",
	    c->seed, c->nrows, c->sep, c->k, c->limit, c->pu ? "on" : "off",
	    c->t, c->N, gp_models[c->model], c->game, c->cost, c->gain);
	for (j = 0; j < c->nqi; j++)
		fprintf(f, "#   q%zu: %zu leaves, %zu levels, %zu top values\n", j,
		    c->h[j].nleaves, c->h[j].nlevels,
		    gp_distinct_at(&c->h[j], c->h[j].nlevels - 1));
}

/* Remove the case's files; anything else left in dir is a stray
 * (a temporary file the gate forgot). */
int
gp_clean_dir(const char *dir, char *why)
{
	char path[600];
	size_t i;

	for (i = 0; i < GP_NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, gp_files[i]);
		unlink(path);
	}
	if (rmdir(dir) == 0 && mkdir(dir, 0700) == 0)
		return 0;
	snprintf(why, 512, "%s: %s (a stray file left behind?)", dir,
	    strerror(errno));
	return -1;
}

