/*
 * deid/report.h — the JSON documents the CLI prints and stores: the
 * assessment of a table as it is, and the anonymization report whose
 * "gate" decides whether a dataset may ever be mounted.  Field names are
 * a contract with scripts (docs/deid.md): add, don't rename.
 */
#ifndef DEID_REPORT_H
#define DEID_REPORT_H

#include <jansson.h>

#include "deid/poptable.h"
#include "deid/quality.h"
#include "deid/search.h"
#include "deid/summary.h"
#include "deid/verify.h"

/* {"fraction", "uniques", ...} of one estimate; failures give
 * {"fraction": null, "error": "..."}. */
json_t	*deid_report_estimate(const struct deid_estimate *est);

/* One "populations" entry of `deid assess`: all four models at N. */
json_t	*deid_report_population(const struct deid_hist *h, double N);

struct deid_risk_side {
	double			 population;	/* of pu; 0: none given */
	uint64_t		 records;
	uint64_t		 classes;
	uint64_t		 sample_uniques;
	int			 has_pu;
	struct deid_estimate	 pu;
	size_t			 nresidual;
	struct deid_residual	*residual;
	struct deid_attack_risk	 attack;
	uint64_t		 bin_classes[DEID_SIZE_BINS];	/* summary.h */
	uint64_t		 bin_records[DEID_SIZE_BINS];
};

#define DEID_MAX_REASONS	16

/* What deid_anonymize (deid/anonymize.h) found and decided; it owns
 * the table it loaded (for the names of the columns). */
struct deid_anon_report {
	struct deid_dataset		*ds;
	struct deid_engine		*e;
	struct deid_search_opts		 opts;
	struct deid_search_result	 res;
	struct deid_loss		 loss;	/* both objectives, final node */
	double				 qi_loss[DEID_MAX_QI];	/* per QI, */
	double				 qi_entropy[DEID_MAX_QI]; /* engine order */
	struct deid_payout		 payout;	/* game.h, final node */
	struct deid_risk_side		 before, after;
	uint64_t			 suppressed_records;	/* as written */
	const char			*qi_names[DEID_MAX_QI + 1];	/* engine
							   order, NULL-ended */
	int				 has_verified;	/* a table was written */
	struct deid_verified		 verified;	/* from its bytes */
	int				 gate_passed;
	int				 released;	/* out_fd holds it */
	size_t				 nreasons;
	char				 reasons[DEID_MAX_REASONS][256];
	char				 callout[256];	/* "": none */
	struct deid_warning		*warnings;	/* the hierarchies' */
	size_t				 nwarnings;
	double				 elapsed_ms;	/* whole command */
	double				 search_ms;	/* lattice search alone */
	double				 verify_ms;	/* re-reading the release */
	double				 cpu_ms;	/* CPU, every thread */
	double				 verify_cpu_ms;	/* CPU of verify_ms */
	const char			*output;	/* path or NULL */
	struct deid_attacker		*attacker;	/* parsed, or NULL */
	/* The journalist's population table, or NULL; pop_absent: the
	 * released records whose class it lacks (SP = 1 for them). */
	struct deid_dataset		*popds;
	struct deid_poptable		*pop;
	uint64_t			 pop_absent;
};

json_t	*deid_report_anonymize(const struct deid_anon_report *r);
/* The "verified" object: the figures re-derived from a release; qi
 * names its QIs in the order of v->levels (NULL-ended). */
json_t	*deid_report_verified(const struct deid_verified *v,
	    const char *const *qi);
/* The "adversarial" object (deid/adversary-report.c): Xia 2021's risks
 * under the attacker and the worst case, and the gate's bound (0:
 * none). */
json_t	*deid_report_adversary(const struct deid_adversary *a, double bound);
/* ["file:line:column: msg", ...] of n warnings. */
json_t	*deid_report_warnings(const struct deid_warning *w, size_t n);
/* "passed", "failed" or "nothing released". */
const char	*deid_verdict(const struct deid_anon_report *r);


/* JSON number, or null when x is not finite. */
json_t	*deid_json_real(double x);

#endif
