/*
 * tests/fuzz/fuzz-report.c — libFuzzer target for what reads a stored
 * anonymization report: the plain-language explanation (deid/explain.h)
 * and the HTML page (deid/html.h), which `dataset show` runs on the
 * report the daemon hands back.  The input is any JSON; whatever its
 * shape, the explanation is an array of strings and the page never
 * carries markup from it: no "<script" and no "<img" can appear, as the
 * page itself writes neither.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deid/explain.h"
#include "deid/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *report = json_loadb((const char *)data, size, 0, NULL);
	json_t *lines, *l;
	char *page = NULL;
	size_t len = 0, i;
	FILE *f;

	if (report == NULL)
		return 0;
	lines = deid_explain(report);
	json_array_foreach(lines, i, l)
		if (!json_is_string(l))
			__builtin_trap();
	json_decref(lines);
	json_decref(deid_explain_summary(report));
	if ((f = open_memstream(&page, &len)) == NULL)
		__builtin_trap();
	deid_html_report(report, "fuzz", f);
	fclose(f);
	if (page != NULL && (strstr(page, "<script") != NULL ||
	    strstr(page, "<img") != NULL))
		__builtin_trap();
	free(page);
	json_decref(report);
	return 0;
}
