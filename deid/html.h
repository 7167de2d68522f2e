/*
 * deid/html.h — the anonymization report as one self-contained HTML
 * page a custodian can read, print or archive: the verdict in plain
 * language (deid/explain.h) first, then the risk before and after, PU/SU
 * per population, the attacker models, the quality per attribute, the
 * chosen transformation in its lattice, the suppression and, when it
 * ran, the game.  Pictures are inline SVG drawn here; the page has no
 * script, no external asset and a Content-Security-Policy that forbids
 * loading any.
 *
 * It reads only the report's JSON (deid/report.h), so every figure on
 * the page is one the JSON carries; every string from the data (column
 * names, hierarchy labels, file names) is HTML-escaped.
 */
#ifndef DEID_HTML_H
#define DEID_HTML_H

#include <stdio.h>

#include <jansson.h>

/* Write the page for report to f; title (a file or dataset name, may
 * be NULL) heads it.  DEID_OK, DEID_EINPUT when report is not an
 * anonymization report (no "gate"), DEID_EIO when f fails. */
int	deid_html_report(const json_t *report, const char *title, FILE *f);

/* s with & < > " ' as character references. */
void	deid_html_escape(FILE *f, const char *s);

#endif
