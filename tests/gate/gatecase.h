/*
 * tests/gate/gatecase.h — random gate cases (gatecase.c) and their
 * independent checker (gatecheck.c), shared by the property test
 * (tests/unit/test-gate-property.c) and the libFuzzer target
 * (tests/fuzz/fuzz-gate.c).
 *
 * A case is a small table with random hierarchy shapes (single-level,
 * uneven depths, a top level of one value or of several, roots "*" or
 * not) and random criteria (k, PU threshold, model and population,
 * suppression limit, now and then the game).  gp_run_case writes its
 * files, runs the gate on them and judges the outcome: whenever the gate
 * passes, the released CSV, read back with this code's own reader and
 * counted into its own classes, meets every criterion and agrees with
 * the report (to 1e-9), and deid_verify_release counts and judges a
 * copy changed once as the checker does; whenever it fails, no output
 * file exists (and under k alone, no node could have released anything
 * for less).  Nothing here shares code with deid/ but the calls under
 * test.
 */
#ifndef TESTS_GATE_GATECASE_H
#define TESTS_GATE_GATECASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GP_MAXQI	4
#define GP_MAXLEAF	12
#define GP_MAXLEV	5
#define GP_MAXROWS	80
#define GP_VAL		32
#define GP_MAXCOL	(GP_MAXQI + 3)
#define GP_TOL		1e-9

enum { GP_COL_QI, GP_COL_ID, GP_COL_SENS, GP_COL_INS };
extern const char *const gp_models[4];

/* One hierarchy as the generator wrote it: val[leaf][level]. */
struct gp_hier {
	size_t	 nleaves, nlevels;
	char	 val[GP_MAXLEAF][GP_MAXLEV][GP_VAL];
};

struct gp_col {
	int	 kind;		/* GP_COL_* */
	int	 qi;		/* QI index, kind QI */
	char	 name[16];
};

struct gp_case {
	uint64_t	 seed;
	char		 sep;
	size_t		 nqi, ncols, nrows;
	struct gp_col	 col[GP_MAXCOL];
	struct gp_hier	 h[GP_MAXQI];
	unsigned	 leaf[GP_MAXROWS][GP_MAXQI];
	char		 other[GP_MAXROWS][GP_MAXCOL][GP_VAL];
	unsigned	 k;		/* 0 = off */
	int		 pu;
	double		 t, N;
	int		 model;		/* index into gp_models */
	double		 limit;
	int		 game;		/* 0 off, 1 no-attack, 2 payout */
	unsigned	 threads;
	int		 dup_q;		/* QI whose hierarchy repeats a row, -1 */
	unsigned	 dup_row;	/* the leaf repeated as its last line */
	double		 cost, gain, benefit;
	unsigned	 floor[GP_MAXQI];	/* Safe Harbor levels; 0 none */
};

/* Choices come from the bytes given (a fuzzer's input) while they
 * last, then from splitmix64 seeded with seed. */
struct gp_rng {
	uint64_t	 s;
	const uint8_t	*p;
	size_t		 n;
};

#define GP_NFILES	9	/* the files a case may leave in its dir */
#define GP_HIER0	4	/* gp_files[GP_HIER0 + j]: QI j's hierarchy */
extern const char *const gp_files[GP_NFILES];

void	gp_rng_init(struct gp_rng *r, uint64_t seed, const uint8_t *p,
	    size_t n);
uint64_t gp_next(struct gp_rng *r);
/* A case from r; seed is the label printed for it. */
void	gp_gen_case(struct gp_rng *r, uint64_t seed, struct gp_case *c);
/* Write c's files into dir, run the gate (the library, or the CLI at
 * path cli when not NULL), judge: 0 if every property holds, else -1
 * with why (512 bytes).  *passed: the gate passed. */
int	gp_run_case(const char *cli, const struct gp_case *c, const char *dir,
	    int *passed, char *why);
/* Remove the case's files and check nothing else was left in dir. */
int	gp_clean_dir(const char *dir, char *why);
size_t	gp_distinct_at(const struct gp_hier *h, size_t level);
/* The case's shape and criteria, as TAP comments. */
void	gp_describe_case(FILE *f, const struct gp_case *c);

/* Between gatecase.c and gatecheck.c only. */
struct deid_job;
struct deid_job_file;
struct json_t;
unsigned gp_rnd(struct gp_rng *r, unsigned n);
const char *gp_input_cell(const struct gp_case *c, size_t r, size_t i);
void	gp_put_field(FILE *f, const char *v, char sep);
int	gp_slurp(const char *dir, const char *name, struct deid_job_file *f,
	    char **buf);
void	gp_lib_job(const struct gp_case *c, struct deid_job *job,
	    const char **names, const double *pop);
/* The judgements: 0, or -1 with why.  rep is the report's JSON. */
int	gp_check_passed(const struct gp_case *c, const char *dir,
	    struct json_t *rep, char *why);
int	gp_check_tampered(const struct gp_case *c, const char *dir, char *why);
int	gp_check_failed(const struct gp_case *c, char *why);
int	gp_check_warning(const struct gp_case *c, struct json_t *rep,
	    char *why);

#endif
