/*
 * deid/explain.c — the report in plain language (deid/explain.h).
 * Reads a report's JSON: trusted when `deid anonymize` built it, a
 * stored document when `dataset show` fetched it, so every field is
 * looked up defensively and a missing one drops its sentence.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "deid/explain.h"

#define LINE_MAX_LEN	512

/* ---- reading the report ------------------------------------------- */

double
deid_jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *
deid_jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* ---- figures in words ---------------------------------------------- */

void
deid_fmt_count(double x, char *buf, size_t len)
{
	char d[32];
	size_t n, i, o = 0;

	if (!isfinite(x) || x < 0 || x >= 1e18) {
		snprintf(buf, len, "%.6g", x);
		return;
	}
	n = (size_t)snprintf(d, sizeof(d), "%.0f", x);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

void
deid_fmt_population(double x, char *buf, size_t len)
{
	if (isfinite(x) && x >= 1e9)
		snprintf(buf, len, "%.1f billion", x / 1e9);
	else if (isfinite(x) && x >= 1e6)
		snprintf(buf, len, "%.1f million", x / 1e6);
	else
		deid_fmt_count(x, buf, len);
}

void
deid_fmt_share(double share, char *buf, size_t len)
{
	double p = 100 * share;

	if (!isfinite(p))
		snprintf(buf, len, "(unknown)");
	else if (p == 0)
		snprintf(buf, len, "0 %%");
	else if (p >= 1)
		snprintf(buf, len, "%.1f %%", p);
	else
		snprintf(buf, len, "%.2g %%", p);
}

/* ---- the lines ----------------------------------------------------- */

/* Append one formatted line (at most LINE_MAX_LEN bytes) to lines. */
static void __attribute__((format(printf, 2, 3)))
say(json_t *lines, const char *fmt, ...)
{
	char line[LINE_MAX_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(lines, json_string(line));
}

void
deid_explain_qi(const json_t *g, char *buf, size_t len)
{
	const json_t *lv = json_object_get(g, "levels");
	const json_t *at, *leaf;
	const char *name = deid_jstr(g, "attribute");
	size_t top = json_array_size(lv) ? json_array_size(lv) - 1 : 0;
	json_int_t l;

	buf[0] = '\0';
	if (!json_is_integer(json_object_get(g, "level")))
		return;
	l = json_integer_value(json_object_get(g, "level"));
	at = json_array_get(lv, (size_t)l);
	leaf = json_array_get(lv, 0);
	if (l == 0)
		snprintf(buf, len, "%s: kept as is (%.0f distinct values in "
		    "the table)", name, deid_jnum(g, "distinct_values"));
	else if (at == NULL || leaf == NULL)
		snprintf(buf, len, "%s: generalized to level %lld", name,
		    (long long)l);
	else if ((size_t)l == top && deid_jnum(at, "values") == 1)
		snprintf(buf, len, "%s: removed, every value → \"%s\"",
		    name, deid_jstr(at, "example"));
	else
		snprintf(buf, len, "%s: level %lld of %zu, %.0f values → %.0f, "
		    "e.g. \"%s\" → \"%s\"", name, (long long)l, top,
		    deid_jnum(leaf, "values"), deid_jnum(at, "values"),
		    deid_jstr(leaf, "example"), deid_jstr(at, "example"));
}

/* One privacy criterion checked on the released figures. */
struct crit {
	char	 text[LINE_MAX_LEN];	/* "k = 5: ..." */
	char	 meaning[LINE_MAX_LEN];	/* what the figure says; may be "" */
	int	 failed;
	double	 slack;			/* relative room left; lower: tighter */
};

#define MAX_CRIT	24

struct crits {
	struct crit	c[MAX_CRIT];
	size_t		n;
};

static struct crit *
crit_add(struct crits *cs, int failed, double slack)
{
	struct crit *c;

	if (cs->n == MAX_CRIT)
		return NULL;
	c = &cs->c[cs->n++];
	c->meaning[0] = '\0';
	c->failed = failed;
	c->slack = isfinite(slack) ? slack : 0;
	return c;
}

/* k-anonymity on the smallest released class. */
static void
crit_k(struct crits *cs, const json_t *crit, const json_t *v)
{
	double k = deid_jnum(crit, "k"), small = deid_jnum(v, "smallest_class");
	struct crit *c;

	if (!(k > 1) || !(small > 0) || (c = crit_add(cs, small < k,
	    small / k - 1)) == NULL)
		return;
	if (c->failed)
		snprintf(c->text, sizeof(c->text), "k = %.0f: a released "
		    "class has only %.0f records", k, small);
	else
		snprintf(c->text, sizeof(c->text), "k = %.0f: the smallest "
		    "released class has %.0f records", k, small);
}

/* PU <= t at the criterion's population. */
static void
crit_pu(struct crits *cs, const json_t *crit, const json_t *v)
{
	double t = deid_jnum(crit, "pu_threshold");
	double pu = deid_jnum(v, "pu_fraction");
	char ts[32], ps[32], ns[48];
	struct crit *c;

	if (isnan(t))
		return;
	deid_fmt_share(t, ts, sizeof(ts));
	deid_fmt_share(pu, ps, sizeof(ps));
	deid_fmt_population(deid_jnum(crit, "population"), ns, sizeof(ns));
	if ((c = crit_add(cs, !(pu <= t), t > 0 ? 1 - pu / t : 0)) == NULL)
		return;
	if (isnan(pu))
		snprintf(c->text, sizeof(c->text), "PU ≤ %s at N = %s: the "
		    "%s model could not estimate it (%s), which fails closed",
		    ts, ns, deid_jstr(v, "pu_model"), deid_jstr(v, "pu_error"));
	else
		snprintf(c->text, sizeof(c->text), "PU = %s %s the threshold "
		    "%s at N = %s (model %s)", ps, c->failed ? "exceeds" :
		    "is within", ts, ns, deid_jstr(v, "pu_model"));
}

/* Each PU/SU residual check. */
static void
crit_residual(struct crits *cs, const json_t *v)
{
	const json_t *rs;
	char ns[48], share[32];
	struct crit *c;
	double ratio, bound;
	size_t i;

	json_array_foreach(json_object_get(v, "residual"), i, rs) {
		ratio = deid_jnum(rs, "ratio");
		bound = deid_jnum(rs, "bound");
		deid_fmt_population(deid_jnum(rs, "population"), ns,
		    sizeof(ns));
		deid_fmt_share(ratio, share, sizeof(share));
		if ((c = crit_add(cs, !json_is_true(json_object_get(rs,
		    "passed")), bound > 0 ? 1 - ratio / bound : 0)) == NULL)
			return;
		if (isnan(ratio))
			snprintf(c->text, sizeof(c->text), "PU/SU ≤ %.4g at "
			    "N = %s: the %s model could not estimate it (%s), "
			    "which fails closed", bound, ns,
			    deid_jstr(rs, "model"),
			    deid_jstr(rs, "error"));
		else
			snprintf(c->text, sizeof(c->text), "PU/SU = %.4g %s "
			    "the bound %.4g at N = %s (model %s)", ratio,
			    c->failed ? "exceeds" : "is within", bound, ns,
			    deid_jstr(rs, "model"));
		if (deid_jnum(rs, "su") == 0)
			snprintf(c->meaning, sizeof(c->meaning), "no released "
			    "record is unique in the sample");
		else if (!isnan(ratio))
			snprintf(c->meaning, sizeof(c->meaning), "%s of the "
			    "released sample uniques are expected to be unique "
			    "in the population", share);
	}
}

/* The suppression limit (only when one is set or it failed). */
static void
crit_limit(struct crits *cs, const json_t *crit, const json_t *v)
{
	double lim = deid_jnum(crit, "suppression_limit");
	double got = deid_jnum(v, "suppressed_share");
	char ls[32], gs[32];
	struct crit *c;

	if (isnan(lim) || isnan(got) || (lim >= 1 && got <= lim))
		return;
	deid_fmt_share(lim, ls, sizeof(ls));
	deid_fmt_share(got, gs, sizeof(gs));
	if ((c = crit_add(cs, got > lim + 1e-12, lim > 0 ? 1 - got / lim :
	    0)) != NULL)
		snprintf(c->text, sizeof(c->text), "suppression limit %s: "
		    "%s of the records are suppressed", ls, gs);
}

/* The game's criterion with the journalist's SP from a population
 * table: 1 over the class's size there. */
static void
crit_game_table(struct crits *cs, const char *g, double bad, double worth,
    const json_t *pt)
{
	const char *file = json_string_value(json_object_get(pt, "file"));
	double rows = deid_jnum(pt, "rows");
	struct crit *c;

	if (g == NULL || isnan(bad) || (c = crit_add(cs, bad > 0, 1)) == NULL)
		return;
	if (strcmp(g, "no-attack") == 0 && bad == 0)
		snprintf(c->text, sizeof(c->text), "the game's no-attack "
		    "criterion: no released class is worth attacking (each "
		    "has more than Gain/Cost = %.4g records in the population "
		    "table %s of %.0f rows, the journalist's SP = 1 over that "
		    "size)", worth, file ? file : "", rows);
	else
		snprintf(c->text, sizeof(c->text), "the game's %s criterion "
		    "(SP from the population table %s of %.0f rows): %.0f "
		    "released records it would not release", g,
		    file ? file : "", rows, bad);
}

/* The game's criterion: no released record it would not release. */
static void
crit_game(struct crits *cs, const json_t *crit, const json_t *game,
    const json_t *v)
{
	const char *g = json_string_value(json_object_get(crit, "game"));
	double bad = deid_jnum(v, "unreleasable_records");
	double small = deid_jnum(v, "smallest_class");
	double worth = deid_jnum(game, "gain") / deid_jnum(game, "cost");
	double frac = deid_jnum(game, "sampling_fraction");
	const char *src = json_string_value(json_object_get(game,
	    "sp_source"));
	struct crit *c;

	if (src != NULL && strcmp(src, "population table") == 0) {
		crit_game_table(cs, g, bad, worth,
		    json_object_get(game, "population_table"));
		return;
	}
	if (frac >= 0 && frac < 1)	/* journalist: SP = fraction/|class| */
		worth *= frac;

	if (g == NULL || isnan(bad) || (c = crit_add(cs, bad > 0,
	    strcmp(g, "no-attack") == 0 && worth > 0 ? small / worth - 1 :
	    1)) == NULL)
		return;
	if (strcmp(g, "no-attack") == 0 && bad == 0 && isfinite(worth))
		snprintf(c->text, sizeof(c->text), "the game's no-attack "
		    "criterion: no released class is worth attacking (the "
		    "smallest has %.0f records, more than Gain/Cost%s = %.4g)",
		    small, frac >= 0 && frac < 1 ? " × sampling fraction, "
		    "the journalist's SP estimated" : "", worth);
	else
		snprintf(c->text, sizeof(c->text), "the game's %s criterion: "
		    "%.0f released records it would not release", g, bad);
}

/* The Safe Harbor floor: every QI at or above its Safe Harbor level in
 * the levels found in the written table. */
static void
crit_floor(struct crits *cs, const json_t *report, const json_t *v)
{
	const json_t *sh = json_object_get(report, "safe_harbor");
	const json_t *lv = json_object_get(v, "levels");
	const char *qi, *low = NULL;
	json_t *want;
	struct crit *c;
	double got;

	if (!json_is_object(sh))
		return;
	json_object_foreach((json_t *)sh, qi, want) {
		got = deid_jnum(lv, qi);
		if (json_integer_value(want) > 0 &&
		    !(got >= (double)json_integer_value(want)) && low == NULL)
			low = qi;
	}
	if ((c = crit_add(cs, low != NULL, 1)) == NULL)
		return;
	if (low != NULL)
		snprintf(c->text, sizeof(c->text), "HIPAA Safe Harbor: %.64s "
		    "is less generalized than its Safe Harbor level", low);
	else
		snprintf(c->text, sizeof(c->text), "HIPAA Safe Harbor: no "
		    "quasi-identifier is less generalized than its Safe "
		    "Harbor level");
}

/* The adversarial risk's bound (Xia 2021), when one is set. */
static void
crit_adversary(struct crits *cs, const json_t *v)
{
	const json_t *a = json_object_get(v, "adversarial");
	double risk = deid_jnum(a, "risk"), bound = deid_jnum(a, "bound");
	char rs[32], bs[32];
	struct crit *c;

	if (!json_is_object(a) || !(bound > 0) || (c = crit_add(cs,
	    !(risk <= bound), 1 - risk / bound)) == NULL)
		return;
	deid_fmt_share(risk, rs, sizeof(rs));
	deid_fmt_share(bound, bs, sizeof(bs));
	snprintf(c->text, sizeof(c->text), "adversarial risk = %s %s the "
	    "bound %s (attacker %s, seed %.0f)", rs, c->failed ? "exceeds" :
	    "is within", bs, deid_jstr(a, "attacker"), deid_jnum(a, "seed"));
	snprintf(c->meaning, sizeof(c->meaning), "under that attacker's "
	    "knowledge an estimated %s of the released records' subjects "
	    "are re-identified", rs);
}

/* The criteria checked on the verified figures, in a fixed order. */
static void
crits_collect(const json_t *report, struct crits *cs)
{
	const json_t *crit = json_object_get(report, "criteria");
	const json_t *v = json_object_get(report, "verified");

	cs->n = 0;
	if (!json_is_object(v) || deid_jnum(v, "released_records") == 0)
		return;
	crit_k(cs, crit, v);
	crit_pu(cs, crit, v);
	crit_residual(cs, v);
	crit_limit(cs, crit, v);
	crit_game(cs, crit, json_object_get(report, "game"), v);
	crit_floor(cs, report, v);
	crit_adversary(cs, v);
}

/* The first failed criterion, or the tightest one met. */
static const struct crit *
crits_decider(const struct crits *cs)
{
	const struct crit *best = NULL;
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->c[i].failed)
			return &cs->c[i];
	for (i = 0; i < cs->n; i++)
		if (best == NULL || cs->c[i].slack < best->slack)
			best = &cs->c[i];
	return best;
}

/* The first line: the verdict and what decided it. */
static void
explain_headline(json_t *lines, const json_t *report, const struct crits *cs)
{
	const json_t *gate = json_object_get(report, "gate");
	const json_t *v = json_object_get(report, "verified");
	const struct crit *d = crits_decider(cs);
	const char *verdict = deid_jstr(gate, "verdict");
	const char *reason = json_string_value(json_array_get(
	    json_object_get(gate, "reasons"), 0));
	char n[32];

	if (strcmp(verdict, "passed") == 0)
		say(lines, "Passed: the released table meets every criterion%s"
		    "%s.", d ? "; the tightest: " : "", d ? d->text : "");
	else if (strcmp(verdict, "nothing released") == 0) {
		deid_fmt_count(deid_jnum(v, "records"), n, sizeof(n));
		say(lines, "Nothing released: all %s records would be "
		    "suppressed, so the gate fails.", n);
	} else if (d != NULL && d->failed)
		say(lines, "Failed, the table must not be released: %s.",
		    d->text);
	else
		say(lines, "Failed, %s: %s.", json_is_object(v) ?
		    "the table must not be released" : "nothing is written",
		    reason != NULL ? reason :
		    "no transformation meets the criteria");
}

/* Every criterion with its figure, bound and state. */
static void
explain_criteria(json_t *lines, const struct crits *cs)
{
	const struct crit *d = crits_decider(cs);
	size_t i;

	for (i = 0; i < cs->n; i++)
		say(lines, "%s: %s%s%s%s", cs->c[i].failed ? "FAILED" : "met",
		    cs->c[i].text, cs->c[i].meaning[0] ? ": " : "",
		    cs->c[i].meaning, &cs->c[i] == d && !d->failed &&
		    cs->n > 1 ? " (the tightest)" : "");
}

/* A line per quasi-identifier, in its hierarchy's labels. */
static void
explain_generalization(json_t *lines, const json_t *report)
{
	const json_t *g;
	char line[LINE_MAX_LEN];
	size_t i;

	json_array_foreach(json_object_get(report, "generalization"), i, g) {
		deid_explain_qi(g, line, sizeof(line));
		if (line[0] != '\0')
			say(lines, "%s", line);
	}
}

/* Why records were suppressed: the criteria that suppress. */
static void
suppress_why(const json_t *crit, char *buf, size_t len)
{
	const char *g = json_string_value(json_object_get(crit, "game"));
	size_t n = 0;
	char ts[32];

	buf[0] = '\0';
	if (deid_jnum(crit, "k") > 1)
		n += (size_t)snprintf(buf, len, "their classes had fewer than "
		    "k = %.0f records", deid_jnum(crit, "k"));
	if (!isnan(deid_jnum(crit, "pu_threshold")) && n < len) {
		deid_fmt_share(deid_jnum(crit, "pu_threshold"), ts, sizeof(ts));
		n += (size_t)snprintf(buf + n, len - n, "%sthey were in the "
		    "smallest classes, removed until PU ≤ %s", n ? ", or " :
		    "", ts);
	}
	if (g != NULL && n < len)
		snprintf(buf + n, len - n, "%sthe game's %s criterion does not "
		    "release them", n ? ", or " : "", g);
}

/* How many records were suppressed, and by which criteria. */
static void
explain_suppression(json_t *lines, const json_t *report)
{
	const json_t *v = json_object_get(report, "verified");
	double supp = deid_jnum(v, "suppressed_records");
	double rec = deid_jnum(v, "records");
	char ns[32], rs[32], ss[32], why[400];

	if (isnan(supp) || isnan(rec))
		return;
	if (supp == 0) {
		say(lines, "Suppressed: no record.");
		return;
	}
	deid_fmt_count(supp, ns, sizeof(ns));
	deid_fmt_count(rec, rs, sizeof(rs));
	deid_fmt_share(deid_jnum(v, "suppressed_share"), ss, sizeof(ss));
	suppress_why(json_object_get(report, "criteria"), why, sizeof(why));
	say(lines, "Suppressed: %s of %s records (%s), written with * in every "
	    "quasi-identifier%s%s.", ns, rs, ss, why[0] ? ", because " : "",
	    why);
}

/* What the PU figure means, and which model gave it. */
static void
explain_pu(json_t *lines, const json_t *report)
{
	const json_t *after = json_object_get(json_object_get(report, "risk"),
	    "after");
	const json_t *v = json_object_get(report, "verified");
	const char *want = deid_jstr(json_object_get(report, "criteria"),
	    "pu_model"), *used = deid_jstr(v, "pu_model");
	double pu = deid_jnum(v, "pu_fraction");
	double rel = deid_jnum(v, "released_records");
	char ps[32], ns[48], about[32], rs[32], model[96];

	if (!json_is_object(v) || used[0] == '\0' || isnan(pu) ||
	    isnan(deid_jnum(after, "population")))
		return;
	deid_fmt_population(deid_jnum(after, "population"), ns, sizeof(ns));
	if (deid_jnum(v, "sample_uniques") == 0) {
		say(lines, "Population uniqueness: no released record is unique "
		    "in the sample, so none can be unique in the population of "
		    "%s (every model answers 0).", ns);
		return;
	}
	deid_fmt_share(pu, ps, sizeof(ps));
	deid_fmt_count(rel, rs, sizeof(rs));
	deid_fmt_count(pu * rel, about, sizeof(about));
	if (want[0] != '\0' && strcmp(want, used) != 0)
		snprintf(model, sizeof(model), "the %s model, chosen by the "
		    "%s rule", used, want);
	else
		snprintf(model, sizeof(model), "the %s model", used);
	say(lines, "Population uniqueness, by %s (it decides the gate's PU "
	    "figures): an estimated %s of the released records (about %s of "
	    "%s) are unique in a population of %s.", model, ps, about, rs, ns);
}

/* The attack summary, for an attacker who knows every QI. */
static void
explain_attack(json_t *lines, const json_t *report)
{
	const json_t *a = json_object_get(json_object_get(json_object_get(
	    report, "risk"), "after"), "attack");
	char p[32], pm[32], m[32];

	if (!json_is_object(a) || !(deid_jnum(json_object_get(report,
	    "verified"), "released_records") > 0))
		return;
	deid_fmt_share(deid_jnum(a, "prosecutor"), p, sizeof(p));
	deid_fmt_share(deid_jnum(a, "prosecutor_max"), pm, sizeof(pm));
	deid_fmt_share(deid_jnum(a, "marketer"), m, sizeof(m));
	say(lines, "An attacker who knows every quasi-identifier: %s of the "
	    "released records are unique in the table (prosecutor), one "
	    "targeted record is found with probability at most %s, and a "
	    "marketer matching them all re-identifies %s of them on average.",
	    p, pm, m);
}

/* Xia 2021's figures under the attacker file, against the worst case. */
static void
explain_adversary(json_t *lines, const json_t *report)
{
	const json_t *a = json_object_get(json_object_get(report, "verified"),
	    "adversarial");
	const json_t *red = json_object_get(json_object_get(a, "reduction"),
	    "overall");
	const json_t *w = json_object_get(json_object_get(a, "worst_case"),
	    "overall");
	const json_t *ar = json_object_get(a, "attacker_risks");
	char r[32], wr[32], q1[32], md[32], q3[32], p[32], j[32], m[32];

	if (!json_is_object(a))
		return;
	deid_fmt_share(deid_jnum(a, "risk"), r, sizeof(r));
	deid_fmt_share(deid_jnum(w, "mean"), wr, sizeof(wr));
	deid_fmt_share(deid_jnum(red, "q1"), q1, sizeof(q1));
	deid_fmt_share(deid_jnum(red, "median"), md, sizeof(md));
	deid_fmt_share(deid_jnum(red, "q3"), q3, sizeof(q3));
	deid_fmt_share(deid_jnum(json_object_get(ar, "prosecutor"), "mean"),
	    p, sizeof(p));
	deid_fmt_share(deid_jnum(json_object_get(ar, "journalist"), "mean"),
	    j, sizeof(j));
	deid_fmt_share(deid_jnum(json_object_get(ar, "marketer"), "mean"),
	    m, sizeof(m));
	say(lines, "Adversarial risk (Xia 2021) under the attacker in %s "
	    "(seed %.0f, %.0f trials per subject): an estimated %s of the "
	    "subjects are re-identified (prosecutor %s, journalist %s, "
	    "marketer %s), against %s if the attacker knew every "
	    "quasi-identifier; per subject the overall risk falls by %s "
	    "(median; quartiles %s and %s).", deid_jstr(a, "attacker"),
	    deid_jnum(a, "seed"), deid_jnum(a, "trials"), r, p, j, m, wr, md,
	    q1, q3);
}

json_t *
deid_explain(const json_t *report)
{
	json_t *lines = json_array(), *w;
	struct crits cs;
	size_t i;

	crits_collect(report, &cs);
	explain_headline(lines, report, &cs);
	explain_criteria(lines, &cs);
	explain_generalization(lines, report);
	explain_suppression(lines, report);
	explain_pu(lines, report);
	explain_attack(lines, report);
	explain_adversary(lines, report);
	json_array_foreach(json_object_get(json_object_get(report, "gate"),
	    "warnings"), i, w)
		if (json_is_string(w))
			say(lines, "warning: %s", json_string_value(w));
	return lines;
}

json_t *
deid_explain_summary(const json_t *report)
{
	static const char *const keys[] = { "records", "released_records",
	    "suppressed_records", "suppressed_share" };
	const json_t *v = json_object_get(report, "verified"), *g;
	json_t *o = json_object(), *gl = json_array(), *lines;
	char line[LINE_MAX_LEN];
	size_t i;

	lines = json_is_array(json_object_get(report, "explanation")) ?
	    json_incref(json_object_get(report, "explanation")) :
	    deid_explain(report);
	json_object_set_new(o, "verdict", json_string(deid_jstr(json_object_get(
	    report, "gate"), "verdict")));
	json_object_set(o, "headline", json_array_get(lines, 0));
	json_decref(lines);
	json_array_foreach(json_object_get(report, "generalization"), i, g) {
		deid_explain_qi(g, line, sizeof(line));
		if (line[0] != '\0')
			json_array_append_new(gl, json_string(line));
	}
	json_object_set_new(o, "generalization", gl);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(o, keys[i], json_is_number(json_object_get(
		    v, keys[i])) ? json_deep_copy(json_object_get(v, keys[i])) :
		    json_null());
	return o;
}

void
deid_explain_population(const json_t *pop, char *buf, size_t len)
{
	const json_t *d = json_object_get(pop, "dankar");
	double fr = deid_jnum(d, "fraction");
	double f = deid_jnum(pop, "sampling_fraction");
	char ps[32], ns[48], fs[32];

	deid_fmt_population(deid_jnum(pop, "population"), ns, sizeof(ns));
	deid_fmt_share(f, fs, sizeof(fs));
	if (isnan(fr)) {
		snprintf(buf, len, "decides: the dankar rule (the gate's "
		    "default) has no estimate at N = %s (%s), so a PU "
		    "criterion there fails closed", ns, deid_jstr(d, "error"));
		return;
	}
	deid_fmt_share(fr, ps, sizeof(ps));
	snprintf(buf, len, "decides: the dankar rule (the gate's default) "
	    "takes %s at sampling fraction %s%s%s: an estimated %s of the "
	    "records are unique in a population of %s",
	    deid_jstr(d, "model"), fs,
	    deid_jstr(d, "note")[0] ? "; " : "", deid_jstr(d, "note"), ps, ns);
}
