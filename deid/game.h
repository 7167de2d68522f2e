/*
 * deid/game.h — the game-theoretic model of re-identification (Wan et al.
 * 2015; Prasser et al. 2017 AMIA).
 *
 * A rational adversary attacks a released record r when the expected
 * gain beats the cost: SP(r) * Gain > Cost, with SP(r) = 1 / |class of r|
 * (prosecutor) or 1 / F (journalist, F the class's size in the
 * population: counted in a population table, deid/poptable.h, or
 * estimated from the sampling fraction records / N as |class|/fraction).
 * The publisher earns Benefit * (1 - IL(r)) for every released record and
 * loses Loss * SP(r) for every attacked one:
 *
 *	Payout(r) = Benefit * (1 - IL(r)) - [attacked] * Loss * SP(r)
 *
 * IL(r) is the entropy-based information loss of Wan 2015: per QI the log
 * of the number of leaves under r's generalized value over the log of the
 * domain size (0 at a leaf, 1 at the root), averaged over the QIs.
 * Suppressed records are not released: payout 0.
 *
 * As a privacy criterion the publisher variant releases only profitable
 * records (Payout(r) >= 0); the No-Attack variant releases only records
 * the adversary strictly loses on (SP * Gain < Cost, i.e. class size
 * > Gain / Cost: k >= 76 for Cost $4, Gain $300); the SH-Friendly
 * variant is the publisher variant on a lattice cut below at the levels
 * where the hierarchies meet HIPAA Safe Harbor (deid_criteria.min_level),
 * so no release is less generalized than Safe Harbor.  As a quality model
 * the search maximizes Payout(D) = sum of the released profitable
 * records' payouts, reported as a share of the most any release could
 * earn (every record published ungeneralized, Benefit each).
 */
#ifndef DEID_GAME_H
#define DEID_GAME_H

#include <stddef.h>
#include <stdint.h>

#include "deid/groupify.h"

enum deid_game_variant {
	DEID_GAME_OFF = 0,	/* not a privacy criterion */
	DEID_GAME_PAYOUT,	/* suppress unprofitable records */
	DEID_GAME_NO_ATTACK,	/* suppress records worth attacking */
	DEID_GAME_SH_FRIENDLY	/* payout, never below the Safe Harbor
				   levels (deid_criteria.min_level) */
};

/* Does the variant release profitable records only (payout, SH-Friendly)? */
static inline int
deid_game_publisher(enum deid_game_variant v)
{
	return v == DEID_GAME_PAYOUT || v == DEID_GAME_SH_FRIENDLY;
}

/* Whose success probability: the prosecutor's SP = 1/|class| (the target
 * is known to be in the table), or the journalist's SP = 1/F, F the
 * class's size in the population, estimated as |class|/fraction with
 * fraction = records / population (so SP = fraction/|class|). */
enum deid_game_risk {
	DEID_GAME_PROSECUTOR = 0,
	DEID_GAME_JOURNALIST
};

struct deid_poptable;

struct deid_game {
	enum deid_game_variant	 variant;
	enum deid_game_risk	 risk;
	/* Journalist with a population table: SP = 1/F, F the class's
	 * records in the table (deid/poptable.h; pop is the search's, a
	 * verifier counts its own); fraction is then 1. */
	int			 table;
	const struct deid_poptable *pop;
	double			 fraction;	/* journalist: records / N, set
						   by deid_game_set_fraction;
						   prosecutor: 1 */
	double			 cost;		/* adversary's cost per attack */
	double			 gain;		/* adversary's gain per success */
	double			 loss;		/* publisher's loss per success */
	double			 benefit;	/* publisher's benefit per record */
};

/* The papers' defaults: Cost $4, Gain $300, Loss $300, Benefit $1,200. */
void		 deid_game_defaults(struct deid_game *g);
const char	*deid_game_variant_name(enum deid_game_variant v);
int		 deid_game_variant_parse(const char *s,
		    enum deid_game_variant *v);
const char	*deid_game_risk_name(enum deid_game_risk r);
int		 deid_game_risk_parse(const char *s, enum deid_game_risk *r);
/* The journalist's sampling fraction from the table's records and the
 * population N (at most 1); the prosecutor's is 1.  DEID_EINPUT with msg
 * set for a journalist without a population >= 1. */
int		 deid_game_set_fraction(struct deid_game *g, uint64_t records,
		    double population, char *msg, size_t len);
/* DEID_OK, or DEID_EINPUT with msg set for a parameter that is negative,
 * not finite, or (benefit) zero. */
int		 deid_game_check(const struct deid_game *g, char *msg,
		    size_t len);

/* SP * |class|: the journalist's sampling fraction, or 1. */
static inline double
deid_game_fraction(const struct deid_game *g)
{
	return g->risk == DEID_GAME_JOURNALIST && !g->table ? g->fraction : 1;
}

/* Does SP come from a population table? */
static inline int
deid_game_uses_table(const struct deid_game *g)
{
	return g->risk == DEID_GAME_JOURNALIST && g->table;
}

/* The size the functions below take for a class of `size` records with
 * `pop` records in the population table: SP = fraction/size, so with a
 * table F = pop, and a class the population lacks fails closed, SP = 1. */
static inline uint64_t
deid_game_size(const struct deid_game *g, uint64_t size, uint64_t pop)
{
	if (!deid_game_uses_table(g))
		return size;
	return pop > 0 ? pop : 1;
}

/* Does the adversary attack a class of `size` records (deid_game_size)?
 * SP*Gain > Cost, SP = fraction/size. */
static inline int
deid_game_attacks(const struct deid_game *g, uint64_t size)
{
	return g->gain * deid_game_fraction(g) > (double)size * g->cost;
}

/* Payout of one released record of a class of `size` records. */
static inline double
deid_game_payout(const struct deid_game *g, double il, uint64_t size)
{
	double p = g->benefit * (1 - il);

	if (deid_game_attacks(g, size))
		p -= g->loss * deid_game_fraction(g) / (double)size;
	return p;
}

/* May the class be released under the variant's criterion? */
int	deid_game_release(const struct deid_game *g, double il, uint64_t size);

/*
 * Per QI, per level, per generalized code: IL_j = ln(leaves)/ln(|D_j|),
 * and the search's lower bound of the loss form of the payout: the
 * records' mean IL_j at that level before any suppression.
 */
struct deid_game_tables {
	size_t		 nqi;
	size_t		 nlevels[DEID_MAX_QI];
	double		**il[DEID_MAX_QI];	/* [level][code] */
	double		*bound[DEID_MAX_QI];	/* [level] */
};

int	deid_game_tables_alloc(const struct deid_engine *e,
	    uint64_t *const *freq, struct deid_game_tables **out);
void	deid_game_tables_free(struct deid_game_tables *t);

/* IL of class k of a grouped node. */
double	deid_game_class_il(const struct deid_engine *e,
	    const struct deid_game_tables *t, const struct deid_classes *c,
	    size_t k);

/* Payout figures of a grouped node with suppression. */
struct deid_payout {
	double		 payout;	/* sum over released profitable records */
	double		 max;		/* records * Benefit */
	uint64_t	 attacked;	/* released records worth attacking */
	uint64_t	 unprofitable;	/* released records with payout < 0 */
	double		 expected_loss;	/* sum Loss * SP over attacked records */
};

/* popsize: per class the population table's records (NULL without a
 * table). */
void	deid_game_node(const struct deid_engine *e, const struct deid_game *g,
	    const struct deid_game_tables *t, const struct deid_classes *c,
	    const uint8_t *suppressed, const uint64_t *popsize,
	    struct deid_payout *out);

/* The loss form the search minimizes: 1 - payout / max, in 0..1. */
double	deid_game_loss(const struct deid_payout *p);

#endif
