/*
 * deid/quality.h — information loss of a transformation (ARX's Loss).
 *
 * Loss (Iyengar): per QI the normalized sum of domain shares, combined
 * by geometric mean (ARX's default; the arithmetic mean is reported too).
 * Non-uniform entropy (De Waal & Willenborg): per QI the conditional
 * entropy of the input value given the output value, normalized by the
 * entropy of the input values, averaged over QIs.  Both are losses in
 * 0..1; reports print quality = 1 - loss.  Suppressed records count as
 * generalized to the root on every QI.  The publisher's payout of the
 * game-theoretic model (game.h) is the third objective.
 */
#ifndef DEID_QUALITY_H
#define DEID_QUALITY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/game.h"
#include "deid/groupify.h"

enum deid_quality_model {
	DEID_QUALITY_LOSS = 0,
	DEID_QUALITY_ENTROPY,
	DEID_QUALITY_PAYOUT	/* game.h: the publisher's payout */
};
const char	*deid_quality_name(enum deid_quality_model q);
int		 deid_quality_parse(const char *s, enum deid_quality_model *q);

struct deid_loss {
	double	geometric;	/* the objective for DEID_QUALITY_LOSS */
	double	arithmetic;
	double	entropy;	/* the objective for DEID_QUALITY_ENTROPY */
	double	payout;		/* 1 - payout share: DEID_QUALITY_PAYOUT */
};

/* Per-QI generalization-only losses for every level, the terms of the
 * search's lower bound: loss[j][level], entropy[j][level]. */
struct deid_quality_tables {
	size_t		 nqi;
	double		*loss[DEID_MAX_QI];
	double		*entropy[DEID_MAX_QI];
	double		 entropy_max[DEID_MAX_QI];	/* normalizers */
	uint64_t	*freq[DEID_MAX_QI];		/* leaf frequency */
	struct deid_game_tables *game;			/* IL, payout bound */
};

int	deid_quality_tables_alloc(const struct deid_engine *e,
	    struct deid_quality_tables **out);
void	deid_quality_tables_free(struct deid_quality_tables *t);

/* Bound combiners matching the two objectives. */
double	deid_loss_combine_geometric(const double *terms, size_t nqi);
double	deid_loss_combine_mean(const double *terms, size_t nqi);

/* Loss of the grouped node with the given classes suppressed
 * (suppressed[k] != 0).  Entropy needs a scratch of
 * deid_quality_scratch_size(e) uint64_t and is only computed when want
 * includes it. */
#define DEID_WANT_LOSS		1
#define DEID_WANT_ENTROPY	2
size_t	deid_quality_scratch_size(const struct deid_engine *e);
void	deid_quality_node(const struct deid_engine *e,
	    const struct deid_quality_tables *t, const struct deid_classes *c,
	    const uint8_t *suppressed, int want, uint64_t *scratch,
	    struct deid_loss *out);

/* The per-QI terms the two losses combine (each in 0..1), for the
 * report's quality per attribute; loss or entropy may be NULL.  The
 * entropy needs c grouped from the bottom (c->has_of_bottom). */
void	deid_quality_node_terms(const struct deid_engine *e,
	    const struct deid_quality_tables *t, const struct deid_classes *c,
	    const uint8_t *suppressed, uint64_t *scratch, double *loss,
	    double *entropy);

/* Domain share of a class's value of QI j (leaves under it / |D_j|). */
static inline double
deid_share(const struct deid_engine *e, size_t j, unsigned level,
    uint32_t code)
{
	const struct deid_hierarchy *h = e->qi[j].h;

	return (double)h->leaves[level][code] / (double)h->nleaves;
}

#endif
