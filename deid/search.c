/*
 * deid/search.c — the bound-ordered lattice search, on up to 8 threads.
 * Trusted input.  Every thread owns its workspaces; the shared state is
 * the next position in the visit order and the best node so far.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deid/search.h"

int
deid_node_ws_alloc(const struct deid_engine *e, struct deid_node_ws *ws)
{
	ws->classes = deid_classes_alloc(e);
	ws->supp = deid_suppress_ws_alloc(e->nbottom);
	ws->scratch = calloc(deid_quality_scratch_size(e), sizeof(uint64_t));
	if (ws->classes == NULL || ws->supp == NULL || ws->scratch == NULL) {
		deid_node_ws_free(ws);
		return DEID_ENOMEM;
	}
	return DEID_OK;
}

void
deid_node_ws_free(struct deid_node_ws *ws)
{
	deid_classes_free(ws->classes);
	deid_suppress_ws_free(ws->supp);
	free(ws->scratch);
	memset(ws, 0, sizeof(*ws));
}

void
deid_node_check(const struct deid_engine *e,
    const struct deid_quality_tables *t, const struct deid_search_opts *opts,
    const unsigned *levels, struct deid_node_ws *ws,
    struct deid_node_eval *ev, struct deid_loss *loss)
{
	deid_groupify(e, levels, ws->classes);
	deid_node_evaluate(e, t, opts, ws, ev, loss);
}

void
deid_node_evaluate(const struct deid_engine *e,
    const struct deid_quality_tables *t, const struct deid_search_opts *opts,
    struct deid_node_ws *ws, struct deid_node_eval *ev,
    struct deid_loss *loss)
{
	struct deid_payout pay;
	int want = opts->quality == DEID_QUALITY_ENTROPY ?
	    DEID_WANT_ENTROPY : DEID_WANT_LOSS;

	deid_suppress(e, ws->classes, &opts->crit, t->game, ws->supp, ev);
	if (opts->quality == DEID_QUALITY_PAYOUT) {
		deid_game_node(e, &opts->crit.game, t->game, ws->classes,
		    ws->supp->suppressed, ws->supp->popsize, &pay);
		loss->geometric = loss->arithmetic = loss->entropy = NAN;
		loss->payout = deid_game_loss(&pay);
		return;
	}
	deid_quality_node(e, t, ws->classes, ws->supp->suppressed, want,
	    ws->scratch, loss);
	loss->payout = NAN;
}

/* The objective the search minimizes. */
static double
search_objective(const struct deid_search_opts *opts,
    const struct deid_loss *loss)
{
	switch (opts->quality) {
	case DEID_QUALITY_ENTROPY:	return loss->entropy;
	case DEID_QUALITY_PAYOUT:	return loss->payout;
	default:			return loss->geometric;
	}
}

/* Shared search state. */
struct search {
	const struct deid_engine	*e;
	const struct deid_search_opts	*opts;
	const struct deid_lattice	*lat;
	const struct deid_quality_tables *tables;
	pthread_mutex_t			 lock;
	uint64_t			 next;		/* position in order */
	int				 stop;
	int				 failed;
	struct deid_search_result	*res;
	struct deid_snapshot		**snap;		/* [nnodes] or NULL */
	size_t				 snap_bytes;
	size_t				 snap_budget;
};

#define SNAPSHOT_BUDGET		((size_t)128 << 20)
#define SNAPSHOT_MAX_NODES	(4u << 20)
#define ROLLUP_MAX_SHARE	2	/* keep nodes with <= 1/2 bottom classes */

/* The checked direct predecessor with the fewest classes, or NULL. */
static const struct deid_snapshot *
search_pred(struct search *s, uint64_t node, const unsigned *levels,
    size_t *qi)
{
	const struct deid_snapshot *best = NULL, *p;
	size_t j;

	if (s->snap == NULL)
		return NULL;
	pthread_mutex_lock(&s->lock);
	for (j = 0; j < s->e->nqi; j++) {
		if (levels[j] == 0)
			continue;
		p = s->snap[node - s->lat->stride[j]];
		if (p != NULL && (best == NULL || p->n < best->n)) {
			best = p;
			*qi = j;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return best;
}

/* Keep this node's classes for its successors, within the budget. */
static void
search_keep(struct search *s, uint64_t node, const struct deid_classes *c)
{
	struct deid_snapshot *sn;

	if (s->snap == NULL || s->snap_bytes >= s->snap_budget ||
	    c->n * ROLLUP_MAX_SHARE > s->e->nbottom)
		return;	/* rolling up from it would barely beat the bottom */
	if ((sn = deid_snapshot_take(c)) == NULL)
		return;	/* only an optimization: go on without it */
	pthread_mutex_lock(&s->lock);
	if (s->snap_bytes + sn->bytes <= s->snap_budget) {
		s->snap[node] = sn;
		s->snap_bytes += sn->bytes;
		sn = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	deid_snapshot_free(sn);
}

/* Group a node: roll up from a checked predecessor when one is kept. */
static int
search_group(struct search *s, uint64_t node, const unsigned *levels,
    struct deid_classes *c)
{
	const struct deid_snapshot *p;
	size_t j = 0;

	if ((p = search_pred(s, node, levels, &j)) != NULL) {
		deid_rollup(s->e, p, j, levels, c);
		return 1;
	}
	deid_groupify(s->e, levels, c);
	return 0;
}

#define TIE_EPS	1e-12

/* Is (obj, node) better than the current best?  Ties: the node that
 * releases a record over one that suppresses them all, then fewer
 * levels, then the lower index. */
static int
better(const struct search *s, double obj, uint64_t node,
    const struct deid_node_eval *ev)
{
	const struct deid_search_result *r = s->res;
	double tol = TIE_EPS * fmax(1.0, fabs(r->objective));
	uint64_t n = s->e->ds->nrows;
	int ra, rb;
	unsigned a, b;

	if (!r->found || obj < r->objective - tol)
		return 1;
	if (obj > r->objective + tol)
		return 0;
	ra = ev->suppressed_records < n;
	rb = r->eval.suppressed_records < n;
	if (ra != rb)
		return ra;
	a = deid_lattice_sum(s->lat, node);
	b = deid_lattice_sum(s->lat, r->node);
	return a < b || (a == b && node < r->node);
}

/* Is the node below the Safe Harbor floor (never a release)? */
static int
search_below_floor(const struct search *s, uint64_t node)
{
	unsigned levels[DEID_MAX_QI];

	deid_lattice_levels(s->lat, node, levels);
	return !deid_criteria_floor_ok(&s->opts->crit, levels, s->e->nqi);
}

/* Take the next node to check, or return 0 when the search is over. */
static int
search_take(struct search *s, uint64_t *node)
{
	int ok = 0;
	double tol;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && s->next < s->lat->nnodes &&
	    search_below_floor(s, s->lat->order[s->next]))
		s->next++;
	if (!s->stop && s->next < s->lat->nnodes) {
		*node = s->lat->order[s->next];
		tol = TIE_EPS * fmax(1.0, fabs(s->res->objective));
		if (!s->opts->exhaustive && s->res->found &&
		    s->lat->bound[*node] > s->res->objective + tol)
			s->stop = 1;	/* no later node can win */
		else {
			s->next++;
			ok = 1;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* Keep the node if it suppresses least of those that would meet the
 * criteria but for the limit (ties: lower index, for any timing). */
static void
search_closest(struct search *s, uint64_t node,
    const struct deid_node_eval *ev)
{
	struct deid_search_result *r = s->res;
	double share;

	if (!ev->criteria_met)
		return;
	share = s->e->ds->nrows == 0 ? 0 :
	    (double)ev->suppressed_records / (double)s->e->ds->nrows;
	if (r->closest_found && (share > r->closest_suppressed ||
	    (share == r->closest_suppressed && node > r->closest_node)))
		return;
	r->closest_found = 1;
	r->closest_suppressed = share;
	r->closest_node = node;
}

/* Record a checked node and keep it if it is the best so far. */
static void
search_offer(struct search *s, uint64_t node, const unsigned *levels,
    const struct deid_node_eval *ev, const struct deid_loss *loss,
    int rolled)
{
	double obj = search_objective(s->opts, loss);
	struct deid_search_result *r = s->res;

	pthread_mutex_lock(&s->lock);
	r->evaluated++;
	r->rollups += rolled;
	r->model_calls += ev->model_calls;
	search_closest(s, node, ev);
	if (ev->feasible && better(s, obj, node, ev)) {
		r->found = 1;
		r->node = node;
		r->objective = obj;
		r->loss = *loss;
		r->eval = *ev;
		memcpy(r->levels, levels, s->e->nqi * sizeof(*levels));
	}
	pthread_mutex_unlock(&s->lock);
}

static void *
search_worker(void *arg)
{
	struct search *s = arg;
	struct deid_node_ws ws;
	struct deid_node_eval ev;
	struct deid_loss loss;
	unsigned levels[DEID_MAX_QI];
	uint64_t node;
	int rolled;

	if (deid_node_ws_alloc(s->e, &ws) != DEID_OK) {
		pthread_mutex_lock(&s->lock);
		s->failed = s->stop = 1;
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	while (search_take(s, &node)) {
		deid_lattice_levels(s->lat, node, levels);
		rolled = search_group(s, node, levels, ws.classes);
		deid_node_evaluate(s->e, s->tables, s->opts, &ws, &ev, &loss);
		search_keep(s, node, ws.classes);
		search_offer(s, node, levels, &ev, &loss, rolled);
	}
	deid_node_ws_free(&ws);
	return NULL;
}

static void
search_snapshots_free(struct search *s)
{
	uint64_t i;

	if (s->snap == NULL)
		return;
	for (i = 0; i < s->lat->nnodes; i++)
		deid_snapshot_free(s->snap[i]);
	free(s->snap);
	s->snap = NULL;
}

static unsigned
search_threads(const struct deid_search_opts *opts)
{
	long n = opts->threads;

	if (n == 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > 8 ? 8 : (unsigned)n;
}

/* Run the workers; the calling thread is one of them. */
static int
search_run(struct search *s, unsigned nthreads)
{
	pthread_t tid[8];
	unsigned i, started = 0;

	for (i = 1; i < nthreads; i++) {
		if (pthread_create(&tid[started], NULL, search_worker, s) != 0)
			break;
		started++;
	}
	search_worker(s);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return s->failed ? DEID_ENOMEM : DEID_OK;
}

int
deid_search(const struct deid_engine *e, const struct deid_search_opts *opts,
    struct deid_search_result *res, struct deid_error *err)
{
	struct deid_quality_tables *t = NULL;
	struct deid_lattice *lat = NULL;
	struct search s;
	int r;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	if ((r = deid_lattice_alloc(e, &lat, err)) != DEID_OK)
		goto out;
	if ((r = deid_quality_tables_alloc(e, &t)) != DEID_OK)
		goto out;
	if (opts->quality == DEID_QUALITY_ENTROPY)
		deid_lattice_order(lat, t->entropy, deid_loss_combine_mean);
	else if (opts->quality == DEID_QUALITY_PAYOUT)
		deid_lattice_order(lat, t->game->bound, deid_loss_combine_mean);
	else
		deid_lattice_order(lat, t->loss, deid_loss_combine_geometric);
	s.e = e;
	s.opts = opts;
	s.lat = lat;
	s.tables = t;
	s.res = res;
	res->nodes = lat->nnodes;
	s.snap_budget = opts->snapshot_budget ? opts->snapshot_budget :
	    SNAPSHOT_BUDGET;
	if (!opts->no_rollup && opts->quality != DEID_QUALITY_ENTROPY &&
	    lat->nnodes <= SNAPSHOT_MAX_NODES)
		s.snap = calloc(lat->nnodes, sizeof(*s.snap));	/* NULL: none */
	pthread_mutex_init(&s.lock, NULL);
	r = search_run(&s, search_threads(opts));
	pthread_mutex_destroy(&s.lock);
	search_snapshots_free(&s);
	if (r != DEID_OK)
		deid_error_set(err, r, NULL, 0, 0, "lattice search: %s",
		    deid_strerror(r));
out:
	deid_lattice_free(lat);
	deid_quality_tables_free(t);
	return r;
}
