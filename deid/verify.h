/*
 * deid/verify.h — the gate's second opinion: every figure the verdict
 * rests on, re-derived from the bytes of a released table alone.
 *
 * It shares no class-building code with the search (deid/groupify.c,
 * deid/suppress.c): classes are built here from the written strings of
 * the quasi-identifiers, and a record counts as suppressed only when
 * the release marks it so (every quasi-identifier written as "*",
 * DEID_SUPPRESSED).  The
 * risk models, the residual check and the game's per-record formulas
 * are the configured ones (deid/risk.h, deid/summary.h, deid/game.h):
 * the same model must give the same answer on the same classes.
 */
#ifndef DEID_VERIFY_H
#define DEID_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/adversary.h"
#include "deid/csv.h"
#include "deid/error.h"
#include "deid/hierarchy.h"
#include "deid/suppress.h"
#include "deid/summary.h"

#define DEID_VERIFY_MAX_REASONS	16

struct deid_verify_opts {
	const char *const	*qi;		/* columns of the release */
	size_t			 nqi;		/* 1..DEID_MAX_QI */
	struct deid_criteria	 crit;		/* k, PU, limit, game */
	const double		*population;	/* [0]: PU's; all: residual */
	size_t			 npopulation;
	const double		*residual_population, *residual_bound;
	size_t			 nresidual;	/* 0: each population at 25% */
	double			 warn_suppressed;	/* share to call out */
	struct deid_csv_opts	 csv;
	/* Optional, for the quality and the game's payout: each QI's
	 * hierarchy (NULL: none) and the level its values must be at
	 * (NULL: the lowest level whose values hold every released one). */
	const struct deid_hierarchy *const *h;
	const unsigned		*levels;
	/* Optional: the adversarial risk under this attacker (NULL: not
	 * computed), population[0] as N, seeded; with a bound > 0 the mean
	 * overall risk over the subjects must not exceed it. */
	const struct deid_attacker *attacker;
	/* Optional: the journalist's population table (parsed, not bound;
	 * NULL: none).  With the game's journalist SP = 1 / (the class's
	 * rows in it), its values generalized to the verified levels
	 * through o->h (required then). */
	const struct deid_dataset *population_table;
	uint64_t		 adversary_seed;
	unsigned		 adversary_workers;	/* 0: 2 */
	/* Optional, with levels: the classes the release is expected to
	 * hold (0: not known), which sizes the class table at once (room
	 * for 2^21 at most).  A size only: a release holding more grows
	 * the table, no figure depends on it. */
	size_t			 classes_hint;
	double			 max_adversarial_risk;	/* 0: no bound */
};

struct deid_verified {
	uint64_t		 records;	/* rows of the release */
	uint64_t		 suppressed;	/* rows marked suppressed */
	uint64_t		 classes;	/* among the rest */
	uint64_t		 sample_uniques;
	uint64_t		 smallest_class;	/* 0: nothing released */
	double			 suppressed_share;
	int			 has_pu;
	struct deid_estimate	 pu;		/* population[0], exactly 0
						   without sample uniques */
	size_t			 nresidual;
	struct deid_residual	*residual;	/* [nresidual] */
	int			 has_game;
	uint64_t		 attacked;	/* released, SP*Gain > Cost */
	uint64_t		 unreleasable;	/* released, the game's
						   criterion would not */
	int			 has_population_table; /* SP from it */
	uint64_t		 population_rows;
	uint64_t		 population_absent; /* released records
						   of classes it lacks */
	int			 has_quality;	/* hierarchies for every QI */
	unsigned		 levels[DEID_MAX_QI];
	double			 loss, loss_arithmetic;	/* information loss */
	int			 has_adversary;	/* o->attacker given */
	struct deid_adversary	 adversary;
	double			 max_adversarial_risk;	/* 0: no bound */
	/* The verdict on these figures alone. */
	int			 passed;
	int			 nothing_released;
	int			 over_warn;	/* share > warn_suppressed */
	size_t			 nreasons;
	char			 reasons[DEID_VERIFY_MAX_REASONS][256];
};

/*
 * Re-derive the figures of the released CSV in data[len] (name is for
 * messages) and decide.  DEID_OK: v is filled and v->passed says
 * whether every criterion holds; free it with deid_verified_free.
 * DEID_EINPUT: the bytes are not a release of these columns (bad CSV, a
 * missing column, a value not in its hierarchy's level), err says where.
 */
int	deid_verify_release(const void *data, size_t len, const char *name,
	    const struct deid_verify_opts *o, struct deid_verified *v,
	    struct deid_error *err);
/* The same for the regular file behind fd, read from its current
 * offset in chunks (deid_csv_scan_fd): never held in memory whole. */
int	deid_verify_fd(int fd, const char *name,
	    const struct deid_verify_opts *o, struct deid_verified *v,
	    struct deid_error *err);
void	deid_verified_free(struct deid_verified *v);

#endif
