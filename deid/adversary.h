/*
 * deid/adversary.h — adversarial risk under realistic attacker knowledge
 * (Xia et al. 2021, JAMIA): who may know which quasi-identifiers, with
 * what probability, and what that makes of each subject's prosecutor,
 * journalist, marketer and overall (Bayesian-network) risk, by Monte
 * Carlo per subject, against the worst case (every QI known).
 *
 * The attacker file is a small line format (docs/deid.md, "Adversarial
 * risk"):
 *
 *   # comment
 *   trials 1000          Monte Carlo trials per subject (1..1000000)
 *   coverage 0.3         P(the attacker's sources cover a subject at all),
 *                        drawn once per subject; default 1
 *   coverage 0.9 zip 946* 947*   ... for subjects whose released value of
 *                        zip is one of these (a trailing * matches any
 *                        rest); the first such line that matches wins
 *   p_m 0.5              presence in the dataset disclosed
 *   p_fm 0.5             attacker learns the subject is in it | disclosed
 *   p_c 0.5              attacker can confirm a record is the subject
 *   p_cu 0.5             ... confirm population uniqueness | unique
 *   group 0.7 age sex zip   a group the attacker obtains together,
 *                            with its probability (per subject)
 *
 * Library code: explicit status codes, errors name file:line:column.
 */
#ifndef DEID_ADVERSARY_H
#define DEID_ADVERSARY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/csv.h"
#include "deid/error.h"

#define DEID_ADV_MAX_GROUPS	8	/* 2^8 knowledge patterns */
#define DEID_ADV_MAX_ATTRS	64	/* attributes in one group */
#define DEID_ADV_MAX_QI		64	/* QIs of the table (DEID_MAX_QI) */
#define DEID_ADV_MAX_RULES	16	/* coverage lines with a condition */

enum deid_adv_risk {
	DEID_ADV_PROSECUTOR = 0,
	DEID_ADV_JOURNALIST,
	DEID_ADV_MARKETER,
	DEID_ADV_OVERALL,
	DEID_ADV_NRISKS
};
const char	*deid_adv_risk_name(enum deid_adv_risk r);

struct deid_attacker_group {
	double		 p;			/* P(the attacker obtains it) */
	size_t		 nattr;
	char		*attr[DEID_ADV_MAX_ATTRS];
	unsigned long	 line;			/* where it was declared */
};

/* coverage P ATTR VALUE...: the subjects it applies to. */
struct deid_attacker_rule {
	double		 p;
	char		*attr;
	size_t		 nvalue;
	char		*value[DEID_ADV_MAX_ATTRS];	/* "946*": a prefix */
	unsigned long	 line;
};

struct deid_attacker {
	char			 name[512];	/* the file, for messages */
	unsigned		 trials;
	double			 coverage;
	double			 p_m, p_fm, p_c, p_cu;
	size_t			 ngroups;
	struct deid_attacker_group group[DEID_ADV_MAX_GROUPS];
	size_t			 nrules;
	struct deid_attacker_rule rule[DEID_ADV_MAX_RULES];
};

/* Parse an attacker file (bytes data[len], name for messages).  Every
 * key once at most; trials default 1000, p_* default 0.5; at least one
 * group; an attribute in one group at most. */
int	deid_attacker_parse(const void *data, size_t len, const char *name,
	    struct deid_attacker **out, struct deid_error *err);
void	deid_attacker_free(struct deid_attacker *a);
/* Every group and coverage attribute is one of qi[nqi]: DEID_OK
 * (mask[g], if not NULL, gets group g's QIs as bits, rule_qi[k] rule
 * k's QI), else DEID_EINPUT at its line. */
int	deid_attacker_qi(const struct deid_attacker *a, const char *const *qi,
	    size_t nqi, uint64_t *mask, size_t *rule_qi,
	    struct deid_error *err);

/* Q1, median, Q3 (linear interpolation between order statistics). */
struct deid_quartiles {
	double	q1, median, q3;
};

struct deid_adversary {
	char			 attacker[512];	/* its file */
	double			 coverage, p_m, p_fm, p_c, p_cu;
	uint64_t		 records;	/* rows of the table */
	uint64_t		 subjects;	/* rows not suppressed */
	uint64_t		 seed;
	unsigned		 trials;
	double			 population;
	/* Means over subjects, under the attacker and the worst case. */
	double			 mean[DEID_ADV_NRISKS];
	double			 worst_mean[DEID_ADV_NRISKS];
	struct deid_quartiles	 risk[DEID_ADV_NRISKS];
	struct deid_quartiles	 worst[DEID_ADV_NRISKS];
	/* Per-subject reduction (worst - attacker) / worst, over the
	 * subjects whose worst-case risk is > 0 (counted). */
	struct deid_quartiles	 reduction[DEID_ADV_NRISKS];
	uint64_t		 reduction_subjects[DEID_ADV_NRISKS];
	/* Knowledge patterns whose Pitman estimate failed: their sample
	 * uniques are taken as population unique (fail closed). */
	unsigned		 pitman_failed;
	unsigned		 patterns;	/* evaluated */
};

struct deid_adversary_opts {
	const char *const	*qi;		/* the release's QIs */
	size_t			 nqi;
	double			 population;	/* N >= records */
	uint64_t		 seed;
	unsigned		 workers;	/* threads; 0 = 2 */
	struct deid_csv_opts	 csv;
};

/*
 * Every figure of the attacker's risk on the table in data[len] (a CSV
 * with a header; a row with "*" in every QI is suppressed: it is no
 * subject and matches every subject on every attribute).  Each group
 * attribute must be one of o->qi.  The figures depend on the seed only,
 * not on the number of workers.  DEID_EINPUT names file:line:column.
 */
int	deid_adversary_release(const void *data, size_t len, const char *name,
	    const struct deid_attacker *a, const struct deid_adversary_opts *o,
	    struct deid_adversary *res, struct deid_error *err);

#endif
