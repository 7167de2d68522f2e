/*
 * tests/fuzz/fuzz-gate.c — libFuzzer target for the gate over hierarchy
 * shapes and criteria: the input's bytes make the choices of a random
 * case (tests/gate/gatecase.h: the table, each QI's hierarchy shape, k,
 * PU threshold, model and population, suppression limit, the game), the
 * case goes through deid_anonymize(), and every property the property
 * test checks must hold: a pass re-counts from the released file to its
 * report and criteria, a failure leaves no file.  A violation traps
 * after printing why and the case.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "deid/risk.h"
#include "tests/gate/gatecase.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fg_dir[64];
static struct gp_case fg_case;

static void
fg_remove(void)
{
	char why[512];

	if (gp_clean_dir(fg_dir, why) == 0)
		rmdir(fg_dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	deid_risk_init();
	snprintf(fg_dir, sizeof(fg_dir), "%s/fuzz-gate.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(fg_dir) == NULL) {
		perror("fuzz-gate: mkdtemp");
		exit(1);
	}
	atexit(fg_remove);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_rng r;
	char why[512];
	int passed;

	gp_rng_init(&r, 0, data, size);
	gp_gen_case(&r, 0, &fg_case);
	if (gp_run_case(NULL, &fg_case, fg_dir, &passed, why) == 0 &&
	    gp_clean_dir(fg_dir, why) == 0)
		return 0;
	fprintf(stderr, "fuzz-gate: %s\n", why);
	gp_describe_case(stderr, &fg_case);
	__builtin_trap();
}
