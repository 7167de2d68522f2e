/*
 * tests/unit/test-game.c — the game-theoretic model's formulas (Wan et
 * al. 2015; Prasser et al. 2017) on hand-computed values: who attacks,
 * payouts,
 * the two release rules at their boundaries, parameter checks, and the
 * entropy-based information loss of a small hierarchy; the journalist
 * with a population table, through the search's count and the
 * verifier's.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deid/game.h"
#include "deid/poptable.h"
#include "deid/search.h"
#include "deid/verify.h"
#include "tests/tap.h"

static void
check_payouts(void)
{
	struct deid_game g;

	deid_game_defaults(&g);
	tap_ok(g.cost == 4 && g.gain == 300 && g.loss == 300 &&
	    g.benefit == 1200, "defaults: cost 4, gain 300, loss 300, "
	    "benefit 1200");
	/* SP*Gain > Cost: 300/size > 4 <=> size < 75 */
	tap_ok(deid_game_attacks(&g, 1) && deid_game_attacks(&g, 74),
	    "classes of 1 and 74 are attacked");
	tap_ok(!deid_game_attacks(&g, 75) && !deid_game_attacks(&g, 76),
	    "a class of 75 (gain = cost) and of 76 are not");
	tap_ok(fabs(deid_game_payout(&g, 0.5, 2) - 450) < 1e-9,
	    "payout: 1200*(1-0.5) - 300/2 = 450");
	tap_ok(fabs(deid_game_payout(&g, 0.5, 100) - 600) < 1e-9,
	    "payout without an attack: 1200*(1-0.5) = 600");
	tap_ok(fabs(deid_game_payout(&g, 1, 1) + 300) < 1e-9,
	    "payout of a unique at the root: -300");
	g.variant = DEID_GAME_PAYOUT;
	tap_ok(!deid_game_release(&g, 0.9, 1) && deid_game_release(&g, 0.75,
	    1), "payout rule: IL 0.9 unique unprofitable (-180), IL 0.75 "
	    "breaks even (0) and is released");
	g.variant = DEID_GAME_NO_ATTACK;
	tap_ok(!deid_game_release(&g, 0, 75) && deid_game_release(&g, 1, 76),
	    "no-attack rule: 75 withheld, 76 released (k > gain/cost)");
	g.variant = DEID_GAME_SH_FRIENDLY;
	tap_ok(!deid_game_release(&g, 0.9, 1) && deid_game_release(&g, 0.75,
	    1) && deid_game_publisher(g.variant) &&
	    !deid_game_publisher(DEID_GAME_NO_ATTACK), "sh-friendly releases "
	    "as the payout variant does (its floor is the search's)");
	g.variant = DEID_GAME_OFF;
	tap_ok(deid_game_release(&g, 1, 1), "off: everything released");
}

/* Journalist: SP = fraction/|class|, fraction = records/N (at most 1). */
static void
check_journalist(void)
{
	struct deid_game g;
	char msg[256];

	deid_game_defaults(&g);
	g.risk = DEID_GAME_JOURNALIST;
	tap_ok(deid_game_set_fraction(&g, 20000, 100000, msg, sizeof(msg)) ==
	    DEID_OK && fabs(g.fraction - 0.2) < 1e-15,
	    "fraction 20,000 / 100,000 = 0.2");
	tap_ok(deid_game_attacks(&g, 14) && !deid_game_attacks(&g, 15),
	    "attacked iff 300 * 0.2 > 4 * |class|: 14 yes, 15 no");
	tap_ok(fabs(deid_game_payout(&g, 0, 10) - (1200 - 300 * 0.2 / 10)) <
	    1e-9, "payout 1200 - 300 * 0.2/10 = 1194");
	g.variant = DEID_GAME_NO_ATTACK;
	tap_ok(!deid_game_release(&g, 0, 15) && deid_game_release(&g, 0, 16),
	    "no-attack: 15 withheld, 16 released");
	tap_ok(deid_game_set_fraction(&g, 500, 100, msg, sizeof(msg)) ==
	    DEID_OK && g.fraction == 1, "a population below the records: 1");
	tap_ok(deid_game_set_fraction(&g, 500, 0, msg, sizeof(msg)) ==
	    DEID_EINPUT && strstr(msg, "population") != NULL,
	    "no population refused: %s", msg);
	g.risk = DEID_GAME_PROSECUTOR;
	g.fraction = 0.2;
	tap_ok(deid_game_attacks(&g, 74) && !deid_game_attacks(&g, 75),
	    "prosecutor ignores the fraction: 74 attacked, 75 not");
}

/* The Safe Harbor floor: a node is allowed iff no QI is below it. */
static void
check_floor(void)
{
	struct deid_criteria c;
	const unsigned at[] = { 1, 0, 1 }, above[] = { 2, 3, 1 },
	    below[] = { 1, 0, 0 };

	memset(&c, 0, sizeof(c));
	tap_ok(!deid_criteria_has_floor(&c, 3) &&
	    deid_criteria_floor_ok(&c, below, 3), "no floor: every node");
	c.min_level[0] = c.min_level[2] = 1;
	tap_ok(deid_criteria_has_floor(&c, 3) &&
	    deid_criteria_floor_ok(&c, at, 3) &&
	    deid_criteria_floor_ok(&c, above, 3) &&
	    !deid_criteria_floor_ok(&c, below, 3),
	    "floor 1,0,1: at and above allowed, one QI below refused");
	tap_ok(!deid_criteria_has_floor(&c, 0) &&
	    deid_criteria_floor_ok(&c, below, 0),
	    "only the first nqi levels count");
}

static void
check_params(void)
{
	struct deid_game g;
	enum deid_game_variant v;
	char msg[256];

	deid_game_defaults(&g);
	tap_ok(deid_game_check(&g, msg, sizeof(msg)) == DEID_OK,
	    "defaults are valid");
	g.cost = -1;
	tap_ok(deid_game_check(&g, msg, sizeof(msg)) == DEID_EINPUT &&
	    strstr(msg, "cost") != NULL, "negative cost refused: %s", msg);
	deid_game_defaults(&g);
	g.gain = NAN;
	tap_ok(deid_game_check(&g, msg, sizeof(msg)) == DEID_EINPUT &&
	    strstr(msg, "gain") != NULL, "NaN gain refused: %s", msg);
	deid_game_defaults(&g);
	g.benefit = 0;
	tap_ok(deid_game_check(&g, msg, sizeof(msg)) == DEID_EINPUT &&
	    strstr(msg, "benefit") != NULL, "zero benefit refused: %s", msg);
	tap_ok(deid_game_variant_parse("no-attack", &v) == DEID_OK &&
	    v == DEID_GAME_NO_ATTACK && deid_game_variant_parse("payout", &v)
	    == DEID_OK && v == DEID_GAME_PAYOUT &&
	    deid_game_variant_parse("sh-friendly", &v) == DEID_OK &&
	    v == DEID_GAME_SH_FRIENDLY &&
	    strcmp(deid_game_variant_name(v), "sh-friendly") == 0,
	    "variants parse");
	tap_ok(deid_game_variant_parse("No-Attack", &v) == DEID_EINPUT &&
	    deid_game_variant_parse("", &v) == DEID_EINPUT,
	    "unknown variants refused");
}

/* 8 leaves -> pairs -> quads -> *: IL = ln(1|2|4|8)/ln 8 = 0, 1/3, 2/3, 1. */
static void
check_il(void)
{
	const char *csv = "id;q\n1;a\n2;a\n3;b\n4;c\n5;d\n6;e\n7;f\n8;g\n9;h\n";
	char hier[512];
	struct deid_hierarchy *h = NULL;
	struct deid_dataset *ds = NULL;
	struct deid_engine *e = NULL;
	struct deid_quality_tables *t = NULL;
	struct deid_error err;
	size_t len = 0, i, q;
	double want[4] = { 0, 1.0 / 3, 2.0 / 3, 1 };
	int ok = 1;

	for (i = 0; i < 8; i++)
		len += (size_t)snprintf(hier + len, sizeof(hier) - len,
		    "%c;p%zu;q%zu;*\n", (int)('a' + i), i / 2, i / 4);
	if (deid_dataset_parse(csv, strlen(csv), "t.csv", NULL, &ds, &err) ||
	    deid_hierarchy_parse(hier, len, "h.csv", NULL, &h, &err) ||
	    deid_dataset_bind(ds, 1, h, &err) ||
	    deid_engine_alloc(ds, &e, &err) ||
	    deid_quality_tables_alloc(e, &t)) {
		tap_ok(0, "IL set-up: %s", err.msg);
		goto out;
	}
	for (q = 0; q < 4; q++)
		for (i = 0; i < h->ndomain[q]; i++)
			ok &= fabs(t->game->il[0][q][i] - want[q]) < 1e-12;
	tap_ok(ok, "IL per level: 0, 1/3, 2/3, 1 (ln leaves / ln |D|)");
	/* 9 records, one leaf twice: the bound is the records' mean IL */
	tap_ok(fabs(t->game->bound[0][1] - 1.0 / 3) < 1e-12 &&
	    fabs(t->game->bound[0][3] - 1) < 1e-12 && t->game->bound[0][0] == 0,
	    "level bounds: mean IL of the records (0, 1/3, ..., 1)");
out:
	deid_quality_tables_free(t);
	deid_engine_free(e);
	deid_dataset_free(ds);
}

/* The journalist with a population table, by hand: hierarchy x1,x2 -> x,
 * y1,y2 -> y, z1 -> z, all -> *; the population (10 rows) x1 x1 x1 x2 x2
 * y1 y1 y1 y1 y2; the sample (4 rows) x1 x1 y2 z1.  Cost 4, Gain 12:
 * attacked iff SP = 1/F > 1/3, i.e. F < 3; No-Attack releases F > 3.
 * Level 0: x1 F = 3 (not attacked, not released: 12/3 = Cost), y2 F = 1
 * and z1 (absent: SP = 1, fail closed) attacked: 2 records, expected
 * loss 300 * (1/1 + 1/1) = 600.  Level 1: x F = 5, y F = 5, z absent:
 * only z attacked, 1 record, expected loss 300 * 1/1 = 300. */
static const char poph[] = "x1;x;*\nx2;x;*\ny1;y;*\ny2;y;*\nz1;z;*\n";

static uint64_t
pop_of(const struct deid_engine *e, const struct deid_classes *c,
    const uint64_t *pop, unsigned l, const char *value)
{
	size_t k;

	for (k = 0; k < c->n; k++)
		if (strcmp(e->qi[0].h->values[l][deid_class_code(e, c, k, 0)],
		    value) == 0)
			return pop[k];
	return UINT64_MAX;
}

/* Group the sample at level l, count the population, the payout. */
static void
pop_node(const struct deid_engine *e, const struct deid_quality_tables *t,
    const struct deid_game *g, struct deid_classes *c, unsigned l,
    uint64_t *ps, struct deid_payout *pay)
{
	deid_groupify(e, &l, c);
	deid_poptable_count(g->pop, e, c, ps);
	deid_game_node(e, g, t->game, c, NULL, ps, pay);
}

static void
check_table_verify(struct deid_game *g, const struct deid_hierarchy *h,
    const struct deid_dataset *pop)
{
	static const char rel[] = "id;a\n1;x\n2;x\n3;y\n4;z\n";
	static const char *const qi[] = { "a" };
	const struct deid_hierarchy *hs[1] = { h };
	struct deid_verify_opts o;
	struct deid_verified v;
	struct deid_error err = { .msg = "" };
	unsigned lv[1] = { 1 };

	memset(&o, 0, sizeof(o));
	o.qi = qi;
	o.nqi = 1;
	o.crit.suppression_limit = 1;
	o.crit.game = *g;
	o.crit.game.pop = NULL;		/* the verifier counts its own */
	o.warn_suppressed = 0.5;
	o.csv.separator = ';';
	o.h = hs;
	o.levels = lv;
	o.population_table = pop;
	if (deid_verify_release(rel, strlen(rel), "r.csv", &o, &v, &err) !=
	    DEID_OK) {
		tap_ok(0, "verify with a population table: %s", err.msg);
		return;
	}
	tap_ok(v.has_population_table && v.population_rows == 10 &&
	    v.attacked == 1 && v.unreleasable == 1 &&
	    v.population_absent == 1 && !v.passed,
	    "verify re-derives level 1 from the file: 1 attacked (z), 1 not "
	    "released, 1 absent (attacked %llu, unreleasable %llu)",
	    (unsigned long long)v.attacked,
	    (unsigned long long)v.unreleasable);
	deid_verified_free(&v);
}

static void
check_table(void)
{
	static const char popcsv[] = "a\nx1\nx1\nx1\nx2\nx2\ny1\ny1\ny1\ny1\n"
	    "y2\n";
	static const char sample[] = "id;a\n1;x1\n2;x1\n3;y2\n4;z1\n";
	static const char bad[] = "a\nx1\nw9\n";
	struct deid_dataset *ds = NULL, *pop = NULL, *badp = NULL;
	struct deid_poptable *pt = NULL, *bp = NULL;
	struct deid_hierarchy *h = NULL;
	struct deid_engine *e = NULL;
	struct deid_quality_tables *t = NULL;
	struct deid_classes *c = NULL;
	struct deid_payout pay;
	struct deid_error err = { .msg = "" };
	struct deid_game g;
	uint64_t ps[8];

	deid_game_defaults(&g);
	g.variant = DEID_GAME_NO_ATTACK;
	g.risk = DEID_GAME_JOURNALIST;
	g.gain = 12;
	if (deid_dataset_parse(sample, strlen(sample), "s.csv", NULL, &ds,
	    &err) || deid_dataset_parse(popcsv, strlen(popcsv), "p.csv", NULL,
	    &pop, &err) || deid_hierarchy_parse(poph, strlen(poph), "h.csv",
	    NULL, &h, &err) || deid_dataset_bind(ds, 1, h, &err) ||
	    deid_engine_alloc(ds, &e, &err) ||
	    deid_quality_tables_alloc(e, &t) ||
	    (c = deid_classes_alloc(e)) == NULL ||
	    deid_poptable_alloc(pop, e, &pt, &err)) {
		tap_ok(0, "population table set-up: %s", err.msg);
		goto out;
	}
	g.table = 1;
	g.pop = pt;
	tap_ok(pt->rows == 10 && deid_game_set_fraction(&g, 4, 0, err.msg,
	    sizeof(err.msg)) == DEID_OK && deid_game_fraction(&g) == 1,
	    "10 population rows; no N needed, fraction 1");
	pop_node(e, t, &g, c, 0, ps, &pay);
	tap_ok(c->n == 3 && pop_of(e, c, ps, 0, "x1") == 3 &&
	    pop_of(e, c, ps, 0, "y2") == 1 && pop_of(e, c, ps, 0, "z1") == 0,
	    "level 0: F(x1) = 3, F(y2) = 1, F(z1) = 0 (absent)");
	tap_ok(pay.attacked == 2 && fabs(pay.expected_loss - 600) < 1e-9,
	    "level 0: y2 and z1 attacked (2 records), expected loss 600 "
	    "(%llu, %g)", (unsigned long long)pay.attacked, pay.expected_loss);
	tap_ok(!deid_game_attacks(&g, deid_game_size(&g, 2, 3)) &&
	    !deid_game_release(&g, 0, deid_game_size(&g, 2, 3)) &&
	    deid_game_release(&g, 0, deid_game_size(&g, 1, 4)) &&
	    !deid_game_release(&g, 0, deid_game_size(&g, 1, 0)),
	    "F = 3 neither attacked nor released (SP*Gain = Cost), F = 4 "
	    "released, absent F: SP = 1, not released");
	pop_node(e, t, &g, c, 1, ps, &pay);
	tap_ok(c->n == 3 && pop_of(e, c, ps, 1, "x") == 5 &&
	    pop_of(e, c, ps, 1, "y") == 5 && pop_of(e, c, ps, 1, "z") == 0,
	    "level 1: F(x) = 5, F(y) = 5, F(z) = 0");
	tap_ok(pay.attacked == 1 && fabs(pay.expected_loss - 300) < 1e-9,
	    "level 1: only z attacked, expected loss 300 (%llu, %g)",
	    (unsigned long long)pay.attacked, pay.expected_loss);
	check_table_verify(&g, h, pop);
	tap_ok(deid_dataset_parse(bad, strlen(bad), "bad.csv", NULL, &badp,
	    &err) == DEID_OK && deid_poptable_alloc(badp, e, &bp, &err) ==
	    DEID_EINPUT && err.line == 3 && err.column == 1 && bp == NULL &&
	    strstr(err.msg, "w9") != NULL,
	    "a population value not in the hierarchy: bad.csv:3:1 (%s)",
	    err.msg);
out:
	deid_poptable_free(pt);
	deid_dataset_free(badp);
	deid_classes_free(c);
	deid_quality_tables_free(t);
	deid_engine_free(e);
	deid_dataset_free(pop);
	deid_dataset_free(ds);
}

int
main(void)
{
	check_payouts();
	check_params();
	check_floor();
	check_journalist();
	check_il();
	check_table();
	return tap_done();
}
