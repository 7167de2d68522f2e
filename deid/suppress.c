/*
 * deid/suppress.c — choose the classes to suppress for one transformation.
 * Trusted input; workspaces are allocated once per search thread.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deid/poptable.h"
#include "deid/quality.h"
#include "deid/suppress.h"

struct deid_suppress_ws *
deid_suppress_ws_alloc(size_t cap)
{
	struct deid_suppress_ws *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->cap = cap ? cap : 1;
	w->order = calloc(w->cap, sizeof(*w->order));
	w->ownloss = calloc(w->cap, sizeof(*w->ownloss));
	w->suppressed = calloc(w->cap, sizeof(*w->suppressed));
	w->gstart = calloc(w->cap + 1, sizeof(*w->gstart));
	w->gsize = calloc(w->cap, sizeof(*w->gsize));
	w->gcount = calloc(w->cap, sizeof(*w->gcount));
	w->popsize = calloc(w->cap, sizeof(*w->popsize));
	w->hist = deid_hist_alloc(64);
	if (w->order == NULL || w->ownloss == NULL || w->suppressed == NULL ||
	    w->gstart == NULL || w->gsize == NULL || w->gcount == NULL ||
	    w->popsize == NULL || w->hist == NULL) {
		deid_suppress_ws_free(w);
		return NULL;
	}
	return w;
}

void
deid_suppress_ws_free(struct deid_suppress_ws *w)
{
	if (w == NULL)
		return;
	free(w->order);
	free(w->ownloss);
	free(w->suppressed);
	free(w->gstart);
	free(w->gsize);
	free(w->gcount);
	free(w->popsize);
	deid_hist_free(w->hist);
	free(w);
}

int
deid_pu_fulfilled(const struct deid_hist *h, const struct deid_criteria *crit,
    struct deid_estimate *est)
{
	memset(est, 0, sizeof(*est));
	if (h->n == 0 || h->c1 == 0) {
		est->model = crit->pu_model;
		est->path = DEID_PATH_TRIVIAL;
		return 1;
	}
	if (deid_model_estimate(crit->pu_model, h, crit->population, est)
	    != DEID_OK)
		return 0;
	return est->fraction <= crit->pu_threshold;
}

/* Per-class cost proxy: a class whose values are already coarse loses
 * least by suppression, so it goes first among equal sizes. */
static double
class_ownloss(const struct deid_engine *e, const struct deid_classes *c,
    size_t k)
{
	double l = 0;
	size_t j;

	for (j = 0; j < e->nqi; j++)
		l += deid_share(e, j, c->levels[j], deid_class_code(e, c, k, j));
	return l;
}

struct order_ctx {
	const struct deid_classes	*c;
	const double			*ownloss;
};

/* Within one size: own loss descending, first record ascending. */
static int
order_cmp(const void *a, const void *b, void *arg)
{
	const struct order_ctx *o = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (o->ownloss[x] != o->ownloss[y])
		return o->ownloss[x] > o->ownloss[y] ? -1 : 1;
	return o->c->first[x] < o->c->first[y] ? -1 :
	    o->c->first[x] > o->c->first[y];
}

/* Runs of equal class size in suppression order (size ascending) over
 * the classes not already suppressed: the histogram is all the binary
 * search needs, so no class list is sorted; the few distinct sizes are
 * kept in order by insertion. */
static void
size_groups(const struct deid_classes *c, struct deid_suppress_ws *w)
{
	size_t k, g, lo, hi, mid;

	w->ngroups = 0;
	for (k = 0; k < c->n; k++) {
		uint64_t sz = c->count[k];

		if (w->suppressed[k])
			continue;

		/* the groups seen so far are kept sorted: binary search */
		lo = 0;
		hi = w->ngroups;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (w->gsize[mid] < sz)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < w->ngroups && w->gsize[lo] == sz) {
			w->gcount[lo]++;
			continue;
		}
		memmove(w->gsize + lo + 1, w->gsize + lo,
		    (w->ngroups - lo) * sizeof(*w->gsize));
		memmove(w->gcount + lo + 1, w->gcount + lo,
		    (w->ngroups - lo) * sizeof(*w->gcount));
		w->gsize[lo] = sz;
		w->gcount[lo] = 1;
		w->ngroups++;
	}
	w->gstart[0] = 0;
	for (g = 0; g < w->ngroups; g++)
		w->gstart[g + 1] = w->gstart[g] + w->gcount[g];
}

/* Histogram of the classes left after suppressing the first p. */
static void
hist_after_prefix(struct deid_suppress_ws *w, size_t p)
{
	size_t g;

	deid_hist_clear(w->hist);
	for (g = 0; g < w->ngroups; g++) {
		uint64_t lo = w->gstart[g] > p ? w->gstart[g] : p;

		if (w->gstart[g + 1] > lo)
			deid_hist_add(w->hist, w->gsize[g],
			    w->gstart[g + 1] - lo);
	}
}

/* Does suppressing the first p classes fulfil the PU criterion? */
static int
prefix_ok(const struct deid_criteria *crit, struct deid_suppress_ws *w,
    size_t p, struct deid_node_eval *ev, struct deid_estimate *est)
{
	hist_after_prefix(w, p);
	ev->model_calls++;
	return deid_pu_fulfilled(w->hist, crit, est);
}

/* Classes in the suppression order (those not suppressed already). */
static size_t
candidates(const struct deid_suppress_ws *w)
{
	return w->gstart[w->ngroups];
}

/* Smallest p >= p0 whose prefix fulfils PU (all candidates when only
 * all will do: nothing released fulfils it). */
static size_t
pu_prefix(const struct deid_criteria *crit, struct deid_suppress_ws *w,
    size_t p0, struct deid_node_eval *ev)
{
	struct deid_estimate est;
	size_t n = candidates(w), lo = p0, hi = n, mid;

	if (prefix_ok(crit, w, p0, ev, &ev->est))
		return p0;
	if (crit->linear) {
		for (mid = p0 + 1; mid < n; mid++)
			if (prefix_ok(crit, w, mid, ev, &ev->est))
				return mid;
		prefix_ok(crit, w, n, ev, &ev->est);
		return n;
	}
	/* invariant: lo fails, hi succeeds */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (prefix_ok(crit, w, mid, ev, &est)) {
			hi = mid;
			ev->est = est;
		} else
			lo = mid;
	}
	if (hi == n)
		prefix_ok(crit, w, n, ev, &ev->est);
	return hi;
}

/* Number of leading classes smaller than k (they come first). */
static size_t
k_prefix(const struct deid_suppress_ws *w, unsigned k)
{
	size_t g;

	for (g = 0; g < w->ngroups; g++)
		if (w->gsize[g] >= k)
			return w->gstart[g];
	return candidates(w);
}

/* Mark the first p classes in suppression order: every class smaller
 * than the cut size, then the cheapest ones of the cut size. */
static void
mark_prefix(const struct deid_engine *e, const struct deid_classes *c,
    struct deid_suppress_ws *w, size_t p, struct deid_node_eval *ev)
{
	struct order_ctx o = { c, w->ownloss };
	uint64_t cut;
	size_t g = 0, k, m = 0, take;

	if (p == 0)
		return;
	while (w->gstart[g + 1] < p)
		g++;
	cut = w->gsize[g];
	take = p - w->gstart[g];
	for (k = 0; k < c->n; k++) {
		if (w->suppressed[k])
			continue;
		if (c->count[k] < cut || (c->count[k] == cut &&
		    take == w->gcount[g])) {
			w->suppressed[k] = 1;
			ev->suppressed_records += c->count[k];
		} else if (c->count[k] == cut) {
			w->order[m++] = (uint32_t)k;
			w->ownloss[k] = class_ownloss(e, c, k);
		}
	}
	if (take == w->gcount[g])
		return;
	qsort_r(w->order, m, sizeof(*w->order), order_cmp, &o);
	for (k = 0; k < take; k++) {
		w->suppressed[w->order[k]] = 1;
		ev->suppressed_records += cut;
	}
}

/* Classes written as suppressed whatever is decided: every QI value is
 * DEID_SUPPRESSED at this node.  Usually no QI's level has that value
 * below the top, and one look per QI settles it. */
static size_t
mark_written(const struct deid_engine *e, const struct deid_classes *c,
    struct deid_suppress_ws *w, struct deid_node_eval *ev)
{
	uint32_t star[DEID_MAX_QI];
	size_t j, k, p = 0;

	if (e->nqi == 0)
		return 0;
	for (j = 0; j < e->nqi; j++)
		if ((star[j] = e->qi[j].h->star[c->levels[j]]) == DEID_NO_CODE)
			return 0;
	for (k = 0; k < c->n; k++) {
		for (j = 0; j < e->nqi; j++)
			if (deid_class_code(e, c, k, j) != star[j])
				break;
		if (j == e->nqi) {
			w->suppressed[k] = 1;
			ev->suppressed_records += c->count[k];
			p++;
		}
	}
	return p;
}

/* k-anonymity alone: suppress every class smaller than k. */
static size_t
mark_small(const struct deid_classes *c, unsigned k,
    struct deid_suppress_ws *w, struct deid_node_eval *ev)
{
	size_t i, p = 0;

	for (i = 0; i < c->n; i++)
		if (!w->suppressed[i] && c->count[i] < k) {
			w->suppressed[i] = 1;
			ev->suppressed_records += c->count[i];
			p++;
		}
	return p;
}

/* The game criterion: suppress every class still released that its
 * variant does not release; returns the classes it added. */
static size_t
mark_game(const struct deid_engine *e, const struct deid_classes *c,
    const struct deid_criteria *crit, const struct deid_game_tables *gt,
    struct deid_suppress_ws *w, struct deid_node_eval *ev)
{
	int need_il = deid_game_publisher(crit->game.variant);
	size_t k, p = 0;

	for (k = 0; k < c->n; k++)
		if (!w->suppressed[k] && !deid_game_release(&crit->game,
		    need_il ? deid_game_class_il(e, gt, c, k) : 0,
		    deid_game_size(&crit->game, c->count[k], w->popsize[k]))) {
			w->suppressed[k] = 1;
			ev->suppressed_records += c->count[k];
			p++;
		}
	return p;
}

/* PU of what is left after the game criterion suppressed more classes:
 * risk usually only falls, but the models do not promise it. */
static int
recheck_pu(const struct deid_classes *c, const struct deid_criteria *crit,
    struct deid_suppress_ws *w, struct deid_node_eval *ev)
{
	size_t k;

	deid_hist_clear(w->hist);
	for (k = 0; k < c->n; k++)
		if (!w->suppressed[k] &&
		    deid_hist_add(w->hist, c->count[k], 1) != DEID_OK)
			return 0;	/* no memory: not shown to hold */
	ev->model_calls++;
	return deid_pu_fulfilled(w->hist, crit, &ev->est);
}

void
deid_suppress(const struct deid_engine *e, const struct deid_classes *c,
    const struct deid_criteria *crit, const struct deid_game_tables *gt,
    struct deid_suppress_ws *w, struct deid_node_eval *ev)
{
	size_t p, g;
	double limit;
	int ok = 1;

	memset(ev, 0, sizeof(*ev));
	memset(w->suppressed, 0, c->n);
	ev->est.model = crit->pu_model;
	ev->est.path = DEID_PATH_TRIVIAL;
	p = mark_written(e, c, w, ev);
	if (deid_game_uses_table(&crit->game) && crit->game.pop != NULL)
		deid_poptable_count(crit->game.pop, e, c, w->popsize);
	if (crit->pu) {
		size_t q = 0;

		size_groups(c, w);
		if (crit->k > 1)
			q = k_prefix(w, crit->k);
		q = pu_prefix(crit, w, q, ev);
		mark_prefix(e, c, w, q, ev);
		p += q;
	} else
		p += mark_small(c, crit->k, w, ev);
	if (crit->game.variant != DEID_GAME_OFF) {
		if (gt == NULL)		/* no tables: the criterion can't hold */
			ok = 0;
		else if ((g = mark_game(e, c, crit, gt, w, ev)) > 0) {
			p += g;
			if (crit->pu)
				ok = recheck_pu(c, crit, w, ev);
		}
	}
	ev->suppressed_classes = p;
	limit = crit->suppression_limit * (double)e->ds->nrows;
	ev->criteria_met = ok;
	ev->feasible = ok &&
	    (double)ev->suppressed_records <= limit + 1e-9;
}

int
deid_criteria_floor_ok(const struct deid_criteria *c, const unsigned *levels,
    size_t nqi)
{
	size_t j;

	for (j = 0; j < nqi; j++)
		if (levels[j] < c->min_level[j])
			return 0;
	return 1;
}

int
deid_criteria_has_floor(const struct deid_criteria *c, size_t nqi)
{
	size_t j;

	for (j = 0; j < nqi; j++)
		if (c->min_level[j] > 0)
			return 1;
	return 0;
}
