/*
 * deid/explain.h — the anonymization report (deid/report.h) in plain
 * language: the verdict and the criterion that decided it with its
 * figure and bound, what each quasi-identifier became in its
 * hierarchy's own labels, what was suppressed and why, and what the
 * population-uniqueness figure means.
 *
 * Everything here reads the report's JSON, never the search's structs:
 * `deid anonymize` explains the report it is about to write and
 * `dataset show` the one the daemon stored, with the same words, and a
 * figure the text gives is always one the JSON carries.
 */
#ifndef DEID_EXPLAIN_H
#define DEID_EXPLAIN_H

#include <stddef.h>

#include <jansson.h>

/*
 * The lines of the explanation, as a JSON array of strings: first the
 * headline ("Passed: ...", "Failed: ...", "Nothing released: ..."),
 * then one line per criterion, per quasi-identifier, the suppression,
 * the PU model's meaning, the attack summary and the call-outs.  A
 * report missing a part (an older one, or no transformation found)
 * gives fewer lines, never a made-up figure.
 */
json_t	*deid_explain(const json_t *report);

/* What a researcher is shown beside the data: {"verdict", "headline",
 * "generalization": [line per QI], "records", "released_records",
 * "suppressed_records", "suppressed_share"}. */
json_t	*deid_explain_summary(const json_t *report);

/* One "generalization" entry of the report as a line ("age: level 2 of
 * 4, 120 values become 12, e.g. \"37\" becomes \"30-39\""); "" when it
 * has no level. */
void	deid_explain_qi(const json_t *g, char *buf, size_t len);

/* Which of the four models of a `deid assess` population entry the
 * gate's default rule takes, and what its figure means, as a line. */
void	deid_explain_population(const json_t *pop, char *buf, size_t len);

/* Reading a report defensively: o[k] as a number (NaN when missing or
 * not a number), as a string ("" when missing or not a string). */
double		 deid_jnum(const json_t *o, const char *k);
const char	*deid_jstr(const json_t *o, const char *k);

/* Figures as the explanation writes them: 30,162; 4.0 million; 0.7 %. */
void	deid_fmt_count(double x, char *buf, size_t len);
void	deid_fmt_population(double x, char *buf, size_t len);
void	deid_fmt_share(double share, char *buf, size_t len);

#endif
