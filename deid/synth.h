/*
 * deid/synth.h — the synthetic demo dataset cdsgate ships by generating it.
 *
 * Real health data cannot be shipped, so the demo is made on the spot: a
 * seeded, deterministic hospital-admissions table with realistic skew and
 * correlations (age/sex/diagnosis/length of stay, ZIP area/race, season/
 * diagnosis) plus one ARX-format hierarchy per quasi-identifier whose
 * leaves enumerate the full domain of that column.  Library code: no
 * logging, no exit; status codes from deid/error.h.
 */
#ifndef DEID_SYNTH_H
#define DEID_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "deid/error.h"

#define DEID_SYNTH_DEFAULT_RECORDS	20000
#define DEID_SYNTH_MAX_RECORDS		100000000	/* 1e8 */
#define DEID_SYNTH_DATASET		"patients.csv"
/* The hierarchy of QI "x" is written as DEID_SYNTH_HIERARCHY_PREFIX "x.csv". */
#define DEID_SYNTH_HIERARCHY_PREFIX	"hierarchy_"

/*
 * Column names by attribute type (ARX's four types), each list
 * NULL-terminated; deid_synth_columns is every column in file order.
 */
extern const char *const deid_synth_columns[];
extern const char *const deid_synth_identifying[];	/* dropped */
extern const char *const deid_synth_qis[];		/* generalized */
extern const char *const deid_synth_sensitive[];	/* kept */
extern const char *const deid_synth_insensitive[];	/* kept */

/*
 * Write dir/patients.csv (',' separated, header, LF, RFC 4180 quoting)
 * with nrecords rows and dir/hierarchy_<qi>.csv (';' separated, ARX
 * format) for every QI.  Each file is replaced atomically (temporary file
 * in dir, fsync, rename; mode 0600), the dataset last, so a dataset that
 * exists always has its hierarchies beside it.  The same seed gives
 * byte-identical files on every platform (integer arithmetic only).
 * DEID_EINPUT for a bad argument, DEID_ELIMIT above
 * DEID_SYNTH_MAX_RECORDS or for an over-long path, DEID_EIO for I/O.
 */
/*
 * Beside them, in dir/DEID_SYNTH_SAFE_HARBOR_DIR/, the same QIs'
 * hierarchies whose level 1 is HIPAA Safe Harbor (age: ages from 90 on
 * as "90+"; ZIP: 3 digits, the small areas as 000; admission date: year;
 * sex and race as above, at level 0): a release at or above
 * age=1,zip=1,admission_date=1 is never less generalized than Safe Harbor.
 */
#define DEID_SYNTH_SAFE_HARBOR_DIR	"safe-harbor"

int	deid_synth_patients(const char *dir, size_t nrecords, uint64_t seed,
	    struct deid_error *err);

#endif
