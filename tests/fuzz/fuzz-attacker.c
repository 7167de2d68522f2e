/*
 * tests/fuzz/fuzz-attacker.c — libFuzzer target for attacker files
 * (deid/adversary.h): parse any bytes; on success every probability is
 * in [0, 1], no attribute is in two groups, and a run on a small fixed
 * table gives risks in [0, 1] with the attacker never above the worst
 * case on the prosecutor and marketer risks.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "deid/adversary.h"
#include "deid/risk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char table[] =
    "a,b,c\n1,x,p\n1,y,p\n2,x,q\n3,z,q\n3,z,q\n*,*,*\n4,w,r\n";
static const char *const qi[] = { "a", "b", "c" };

/* No attribute in two groups; every probability a probability. */
static void
check_attacker(const struct deid_attacker *a)
{
	size_t g, h, i, j;

	if (a->ngroups == 0 || a->ngroups > DEID_ADV_MAX_GROUPS ||
	    !(a->coverage >= 0 && a->coverage <= 1) || a->trials == 0)
		__builtin_trap();
	for (g = 0; g < a->nrules; g++)
		if (!(a->rule[g].p >= 0 && a->rule[g].p <= 1) ||
		    a->rule[g].nvalue == 0)
			__builtin_trap();
	for (g = 0; g < a->ngroups; g++) {
		if (!(a->group[g].p >= 0 && a->group[g].p <= 1))
			__builtin_trap();
		for (i = 0; i < a->group[g].nattr; i++)
			for (h = g; h < a->ngroups; h++)
				for (j = h == g ? i + 1 : 0;
				    j < a->group[h].nattr; j++)
					if (strcmp(a->group[g].attr[i],
					    a->group[h].attr[j]) == 0)
						__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_adversary_opts o = { qi, 3, 100, 1, 2, { ',', 0 } };
	struct deid_attacker *a = NULL;
	struct deid_adversary r;
	struct deid_error err;
	int k;

	deid_risk_init();
	if (deid_attacker_parse(data, size, "fuzz", &a, &err) != DEID_OK)
		return 0;
	check_attacker(a);
	if (a->trials <= 200 && deid_adversary_release(table,
	    sizeof(table) - 1, "t.csv", a, &o, &r, &err) == DEID_OK) {
		for (k = 0; k < DEID_ADV_NRISKS; k++)
			if (!(r.mean[k] >= 0 && r.mean[k] <= 1) ||
			    !(r.worst_mean[k] >= 0 && r.worst_mean[k] <= 1))
				__builtin_trap();
		if (r.mean[DEID_ADV_PROSECUTOR] >
		    r.worst_mean[DEID_ADV_PROSECUTOR] ||
		    r.mean[DEID_ADV_MARKETER] >
		    r.worst_mean[DEID_ADV_MARKETER] + 1e-12 ||
		    r.records != 7 || r.subjects != 6)
			__builtin_trap();
	}
	deid_attacker_free(a);
	return 0;
}
