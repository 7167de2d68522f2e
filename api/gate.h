/*
 * api/gate.h — running the de-identification gate of an import.
 */
#ifndef API_GATE_H
#define API_GATE_H

#include <stddef.h>

#include <jansson.h>

struct api_config;

/* gate_run's results: the CLI's exit codes (docs/deid.md) and ours. */
#define GATE_PASSED	0	/* the report says it may be released */
#define GATE_FAILED	3	/* it must not be released */
#define GATE_BAD_INPUT	2	/* the CSV/hierarchies/options are wrong */
#define GATE_BAD_JOB	100	/* the job spec could not become options */

/* Check a job spec's fields (before anything is stored): 0 or -1 and a
 * message naming the field. */
int	gate_job_check(json_t *job, char *msg, size_t len);
/* Check the values of a job gate_job_check passed that the gate would
 * refuse (an unknown game variant or risk, a Safe Harbor level out of
 * range or of no QI, an attacker without a population, an adversarial
 * bound out of (0, 1], a seed out of 0..2^53, an option without the one
 * it needs): 0 or -1 and a message naming the field. */
int	gate_job_values(json_t *job, char *msg, size_t len);

/*
 * Queue `cdsgate deid anonymize` for the job with the gate runner, to
 * write out_dir/data.csv and out_dir/report.json.  Returns 0 when queued
 * (its exit status, a GATE_* or 1 for an internal error, comes back
 * through gaterunner_recv()), GATE_BAD_JOB, or -1 when it cannot run;
 * err says why.
 */
int	gate_start(const struct api_config *cfg, json_t *job,
	    const char *out_dir, char *err, size_t errlen);

/*
 * What the gate said about an input it refused, in the custodian's
 * names: sources ({"data": NAME, "hierarchies": {ATTR: NAME}, "attacker":
 * NAME}, from the import; may be NULL) names the uploads the job runs on.  file is the
 * custodian's name of the file at fault ("" when none), line and column
 * 1-based (0 unknown), text "file:line:column: message" in one line.
 */
#define GATE_SOURCE_MAX	400	/* bytes of a source's name */

struct gate_said {
	char		file[GATE_SOURCE_MAX + 1];
	unsigned long	line, column;
	char		text[960];	/* with a prefix, it fits a reason */
};

/* Check an import's sources ({"data": NAME, "hierarchies": {ATTR:
 * NAME}, "attacker": NAME}: names of 1..GATE_SOURCE_MAX bytes without
 * control bytes): 0 or -1 and a message naming the field. */
int	gate_sources_check(json_t *sources, char *msg, size_t len);
/* Read the gate's stderr (its --error-json line, else its first line of
 * text) into out, every spool path in it replaced by the source's name. */
void	gate_said_parse(const struct api_config *cfg, json_t *job,
	    json_t *sources, const char *said, struct gate_said *out);

/* Every string of the gate's report that names an upload's spool path
 * (the attacker's name, the data file's), in the custodian's names as
 * gate_said_parse gives them: 0 or -1 (out of memory). */
int	gate_report_rename(const struct api_config *cfg, json_t *job,
	    json_t *sources, json_t *report);
#endif
