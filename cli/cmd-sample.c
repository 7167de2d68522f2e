/*
 * cli/cmd-sample.c — `cdsgate sample generate`: write the synthetic
 * demo dataset (patients.csv and its hierarchies) into a directory.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "deid/synth.h"

static int
cmd_sample_generate(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "records", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	const char *usage = cmd_sample_generate_entry.usage, *dir = NULL;
	struct deid_error err = { .msg = "" };
	double n = 20000, seed = 1;
	char msg[1400];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (opt == 'o')
			dir = optarg;
		else if (opt == 'n' && cli_parse_number(optarg, &n) == 0 &&
		    n >= 1 && n <= 1e8)
			continue;
		else if (opt == 's' && cli_parse_number(optarg, &seed) == 0 &&
		    seed >= 0)
			continue;
		else
			return cli_usage_error(usage, "bad option or value");
	}
	if (dir == NULL)
		return cli_usage_error(usage, "--out DIR is required");
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "cdsgate: %s: %s\n", dir, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	if (deid_synth_patients(dir, (size_t)n, (uint64_t)seed, &err)
	    != DEID_OK) {
		deid_error_format(&err, msg, sizeof(msg));
		fprintf(stderr, "cdsgate: %s\n", msg);
		return EXIT_INTERNAL;
	}
	printf("wrote %s/patients.csv (%zu records) and its hierarchies; "
	    "Safe Harbor hierarchies in %s/" DEID_SYNTH_SAFE_HARBOR_DIR "\n",
	    dir, (size_t)n, dir);
	return 0;
}

const struct cmd_entry cmd_sample_generate_entry = {
	"sample", "generate",
	"sample generate --out DIR [--records N] [--seed S]",
	"write the synthetic demo dataset, its hierarchies and Safe Harbor "
	"hierarchies (DIR/safe-harbor/)",
	cmd_sample_generate
};
