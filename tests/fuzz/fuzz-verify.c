/*
 * tests/fuzz/fuzz-verify.c — libFuzzer target for the gate's verifier
 * (deid/verify.h), which `cdsgate deid verify` runs on any file a
 * custodian or auditor hands it.  The first byte picks k, the PU
 * criterion and the game; the rest is the release (QIs "a" and "b",
 * "a" with a small hierarchy for the quality).  On success the figures
 * must add up: every record suppressed or in a class, a passed verdict
 * with no reason, nothing released exactly when every record is
 * suppressed.  The same bytes streamed from a file (deid_verify_fd)
 * must give the same figures, or the same error.
 */
#include "config.h"

#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "deid/risk.h"
#include "deid/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ha[] = "1;12;*\n2;12;*\n3;34;*\n4;34;*\n";

/* d[n] through a file, as `cdsgate deid verify` reads it: status r and
 * figures v (or error e) of the bytes in memory again, or a trap. */
static void
same_from_file(const uint8_t *d, size_t n, const struct deid_verify_opts *o,
    int r, const struct deid_verified *v, const struct deid_error *e)
{
	static int fd = -1;
	struct deid_verified w;
	struct deid_error f;
	int r2;

	if (fd < 0 && (fd = memfd_create("fuzz", 0)) < 0)
		__builtin_trap();
	if (ftruncate(fd, 0) != 0 || pwrite(fd, d, n, 0) != (ssize_t)n ||
	    lseek(fd, 0, SEEK_SET) != 0)
		__builtin_trap();
	memset(&f, 0, sizeof(f));
	r2 = deid_verify_fd(fd, "fuzz", o, &w, &f);
	if (r2 != r || (r != DEID_OK && (f.line != e->line ||
	    f.column != e->column || strcmp(f.msg, e->msg) != 0)) ||
	    (r == DEID_OK && (w.records != v->records ||
	    w.suppressed != v->suppressed || w.classes != v->classes ||
	    w.sample_uniques != v->sample_uniques ||
	    w.smallest_class != v->smallest_class ||
	    w.passed != v->passed ||
	    memcmp(&w.loss, &v->loss, sizeof(w.loss)) != 0)))
		__builtin_trap();
	deid_verified_free(&w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct deid_hierarchy *h;
	const struct deid_hierarchy *hs[2];
	const char *qi[2] = { "a", "b" };
	struct deid_verify_opts o;
	struct deid_verified v;
	struct deid_error err;
	double pop[1] = { 1e4 };
	uint8_t pick;
	int r;

	if (h == NULL) {
		deid_risk_init();
		if (deid_hierarchy_parse(ha, strlen(ha), "ha", NULL, &h, &err)
		    != DEID_OK)
			__builtin_trap();
	}
	if (size < 1)
		return 0;
	pick = data[0];
	memset(&o, 0, sizeof(o));
	o.qi = qi;
	o.nqi = 2;
	o.crit.k = pick & 7;
	o.crit.suppression_limit = (pick >> 3 & 3) / 3.0;
	o.crit.pu = pick >> 5 & 1;
	o.crit.pu_threshold = 0.05;
	o.crit.population = pop[0];
	o.population = pop;
	o.npopulation = 1;
	deid_game_defaults(&o.crit.game);
	o.crit.game.variant = pick >> 6 & 1 ? DEID_GAME_NO_ATTACK :
	    DEID_GAME_OFF;
	o.warn_suppressed = 0.5;
	hs[0] = h;
	hs[1] = NULL;
	o.h = pick >> 7 ? hs : NULL;
	memset(&err, 0, sizeof(err));
	r = deid_verify_release(data + 1, size - 1, "fuzz", &o, &v, &err);
	same_from_file(data + 1, size - 1, &o, r, &v, &err);
	if (r != DEID_OK) {
		deid_verified_free(&v);
		return 0;
	}
	if (v.suppressed > v.records || v.sample_uniques > v.classes ||
	    (v.classes == 0) != (v.records == v.suppressed) ||
	    (v.classes > 0 && v.smallest_class == 0) ||
	    v.nothing_released != (v.records == v.suppressed) ||
	    (v.passed && v.nreasons > 0) || (!v.passed && v.nreasons == 0))
		__builtin_trap();
	deid_verified_free(&v);
	return 0;
}
