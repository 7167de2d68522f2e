/*
 * deid/game.c — payouts of the game-theoretic model and the per-level
 * tables that make them cheap inside the search (see game.h).
 * Trusted input; no allocation in deid_game_node().
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deid/game.h"

void
deid_game_defaults(struct deid_game *g)
{
	g->variant = DEID_GAME_OFF;
	g->cost = 4;
	g->gain = 300;
	g->loss = 300;
	g->benefit = 1200;
	g->risk = DEID_GAME_PROSECUTOR;
	g->fraction = 1;
	g->table = 0;
	g->pop = NULL;
}

const char *
deid_game_risk_name(enum deid_game_risk r)
{
	return r == DEID_GAME_JOURNALIST ? "journalist" : "prosecutor";
}

int
deid_game_risk_parse(const char *s, enum deid_game_risk *r)
{
	if (strcmp(s, "prosecutor") == 0)
		*r = DEID_GAME_PROSECUTOR;
	else if (strcmp(s, "journalist") == 0)
		*r = DEID_GAME_JOURNALIST;
	else
		return DEID_EINPUT;
	return DEID_OK;
}

int
deid_game_set_fraction(struct deid_game *g, uint64_t records,
    double population, char *msg, size_t len)
{
	g->fraction = 1;
	if (g->risk != DEID_GAME_JOURNALIST || g->table)
		return DEID_OK;
	if (!(population >= 1)) {
		snprintf(msg, len, "the journalist's success probability "
		    "needs the population (--population N)");
		return DEID_EINPUT;
	}
	if ((double)records < population)
		g->fraction = (double)records / population;
	return DEID_OK;
}

const char *
deid_game_variant_name(enum deid_game_variant v)
{
	switch (v) {
	case DEID_GAME_PAYOUT:		return "payout";
	case DEID_GAME_NO_ATTACK:	return "no-attack";
	case DEID_GAME_SH_FRIENDLY:	return "sh-friendly";
	default:			return "off";
	}
}

int
deid_game_variant_parse(const char *s, enum deid_game_variant *v)
{
	if (strcmp(s, "payout") == 0)
		*v = DEID_GAME_PAYOUT;
	else if (strcmp(s, "no-attack") == 0)
		*v = DEID_GAME_NO_ATTACK;
	else if (strcmp(s, "sh-friendly") == 0)
		*v = DEID_GAME_SH_FRIENDLY;
	else if (strcmp(s, "off") == 0)
		*v = DEID_GAME_OFF;
	else
		return DEID_EINPUT;
	return DEID_OK;
}

int
deid_game_check(const struct deid_game *g, char *msg, size_t len)
{
	const struct { const char *name; double v; } p[] = {
		{ "cost", g->cost }, { "gain", g->gain },
		{ "loss", g->loss }, { "benefit", g->benefit },
	};
	size_t i;

	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (!isfinite(p[i].v) || p[i].v < 0) {
			snprintf(msg, len, "game %s must be a finite amount "
			    ">= 0, not %g", p[i].name, p[i].v);
			return DEID_EINPUT;
		}
	if (g->benefit == 0) {
		snprintf(msg, len, "game benefit must be > 0: with nothing to "
		    "gain from publishing, every release is a loss");
		return DEID_EINPUT;
	}
	return DEID_OK;
}

int
deid_game_release(const struct deid_game *g, double il, uint64_t size)
{
	switch (g->variant) {
	case DEID_GAME_PAYOUT:
	case DEID_GAME_SH_FRIENDLY:
		return deid_game_payout(g, il, size) >= 0;
	case DEID_GAME_NO_ATTACK:	/* the adversary must strictly lose */
		return (double)size * g->cost > g->gain * deid_game_fraction(g);
	default:
		return 1;
	}
}

/* IL of every code at every level of QI j, and the level bounds. */
static int
tables_qi(const struct deid_engine *e, uint64_t *const *freq,
    struct deid_game_tables *t, size_t j)
{
	const struct deid_hierarchy *h = e->qi[j].h;
	double lnD = log((double)h->nleaves), R = (double)e->ds->nrows, s;
	size_t l, x;

	t->nlevels[j] = h->nlevels;
	if ((t->il[j] = calloc(h->nlevels, sizeof(*t->il[j]))) == NULL ||
	    (t->bound[j] = calloc(h->nlevels, sizeof(double))) == NULL)
		return DEID_ENOMEM;
	for (l = 0; l < h->nlevels; l++) {
		if ((t->il[j][l] = calloc(h->ndomain[l], sizeof(double)))
		    == NULL)
			return DEID_ENOMEM;
		for (x = 0; x < h->ndomain[l]; x++)
			t->il[j][l][x] = h->nleaves > 1 ?
			    log((double)h->leaves[l][x]) / lnD : 0;
		for (s = 0, x = 0; x < h->nleaves; x++)
			s += (double)freq[j][x] * t->il[j][l][h->map[l][x]];
		t->bound[j][l] = R > 0 ? s / R : 0;
	}
	return DEID_OK;
}

int
deid_game_tables_alloc(const struct deid_engine *e, uint64_t *const *freq,
    struct deid_game_tables **out)
{
	struct deid_game_tables *t;
	size_t j;

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return DEID_ENOMEM;
	t->nqi = e->nqi;
	for (j = 0; j < e->nqi; j++)
		if (tables_qi(e, freq, t, j) != DEID_OK) {
			deid_game_tables_free(t);
			return DEID_ENOMEM;
		}
	*out = t;
	return DEID_OK;
}

void
deid_game_tables_free(struct deid_game_tables *t)
{
	size_t j, l;

	if (t == NULL)
		return;
	for (j = 0; j < t->nqi; j++) {
		for (l = 0; t->il[j] != NULL && l < t->nlevels[j]; l++)
			free(t->il[j][l]);
		free(t->il[j]);
		free(t->bound[j]);
	}
	free(t);
}

double
deid_game_class_il(const struct deid_engine *e,
    const struct deid_game_tables *t, const struct deid_classes *c, size_t k)
{
	double s = 0;
	size_t j;

	if (e->nqi == 0)
		return 0;
	for (j = 0; j < e->nqi; j++)
		s += t->il[j][c->levels[j]][deid_class_code(e, c, k, j)];
	return s / (double)e->nqi;
}

void
deid_game_node(const struct deid_engine *e, const struct deid_game *g,
    const struct deid_game_tables *t, const struct deid_classes *c,
    const uint8_t *suppressed, const uint64_t *popsize,
    struct deid_payout *out)
{
	uint64_t n;
	double p;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->max = (double)e->ds->nrows * g->benefit;
	for (k = 0; k < c->n; k++) {
		if (suppressed != NULL && suppressed[k])
			continue;
		n = deid_game_size(g, c->count[k],
		    popsize != NULL ? popsize[k] : 0);
		p = deid_game_payout(g, deid_game_class_il(e, t, c, k), n);
		if (deid_game_attacks(g, n)) {
			out->attacked += c->count[k];
			/* count * Loss * SP, SP = fraction/n */
			out->expected_loss += g->loss * deid_game_fraction(g) *
			    ((double)c->count[k] / (double)n);
		}
		if (p >= 0)
			out->payout += p * (double)c->count[k];
		else
			out->unprofitable += c->count[k];
	}
}

double
deid_game_loss(const struct deid_payout *p)
{
	if (p->max <= 0)
		return 1;
	return 1 - p->payout / p->max;
}
