/*
 * deid/html.c — the report as a self-contained HTML page (deid/html.h).
 * Reads a report's JSON, which may come from the store: every string in
 * it goes through deid_html_escape, every number is printed by format,
 * and a missing part leaves its section out or says so.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deid/error.h"
#include "deid/explain.h"
#include "deid/html.h"

#define LABEL_W		170	/* SVG: the label column */
#define BAR_W		340	/* SVG: a full bar (share 1) */
#define TEXT_W		130	/* SVG: the value column */
#define BOX_W		104	/* SVG: one level of a hierarchy */
#define BOX_H		40
#define COLOR_BEFORE	"#9aa0a8"
#define COLOR_AFTER	"#1f5f99"
#define COLOR_MARK	"#b3261e"

static const char style[] =
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"color:#1b1f24;max-width:60em;margin:1.5em auto;padding:0 1em}"
	"h1{font-size:1.6em;margin:0}h2{font-size:1.2em;margin:1.6em 0 .5em;"
	"border-bottom:1px solid #ccd;padding-bottom:.2em}"
	".sub{color:#555;margin:.2em 0 1em}"
	".verdict{border:3px solid;border-radius:6px;padding:.6em 1em}"
	".verdict h2{border:0;margin:.2em 0}"
	".passed{border-color:#2e7d32;background:#eef7ee}"
	".failed,.nothing{border-color:#b3261e;background:#fcefee}"
	".headline{font-weight:600;font-size:1.05em}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"th,td{border:1px solid #ccd;padding:.25em .6em;text-align:left}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#f0f2f5}.fail{color:#b3261e;font-weight:600}"
	"svg{display:block;margin:.6em 0;max-width:100%;height:auto}"
	"svg text{font:12px system-ui,sans-serif}"
	"footer{margin-top:2em;color:#555;font-size:.9em}"
	"@page{margin:14mm}"
	"@media print{body{max-width:none;margin:0;font-size:10.5pt}"
	"section{break-inside:avoid}h2{break-after:avoid}"
	".passed,.failed,.nothing{background:none}"
	"th{background:none}}";

/* ---- writing -------------------------------------------------------- */

void
deid_html_escape(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		switch (*s) {
		case '&':	fputs("&amp;", f); break;
		case '<':	fputs("&lt;", f); break;
		case '>':	fputs("&gt;", f); break;
		case '"':	fputs("&quot;", f); break;
		case '\'':	fputs("&#39;", f); break;
		default:	fputc(*s, f);
		}
}

/* At most max characters of s (UTF-8 aware), "…" when cut, escaped. */
static void
escape_short(FILE *f, const char *s, size_t max)
{
	char buf[256];
	size_t i = 0, chars = 0;

	while (s[i] != '\0' && i + 4 < sizeof(buf) - 4 && chars < max) {
		i++;
		while ((s[i] & 0xC0) == 0x80 && i + 8 < sizeof(buf))
			i++;
		chars++;
	}
	memcpy(buf, s, i);
	strcpy(buf + i, s[i] != '\0' ? "\xe2\x80\xa6" : "");
	deid_html_escape(f, buf);
}

/* A table cell with a number in explain's words ("" when missing). */
enum fmt { F_COUNT, F_SHARE, F_POP, F_REAL, F_MONEY };

static void
td_num(FILE *f, double x, enum fmt how)
{
	char b[64] = "";

	if (isnan(x))
		snprintf(b, sizeof(b), "—");
	else if (how == F_COUNT)
		deid_fmt_count(x, b, sizeof(b));
	else if (how == F_SHARE)
		deid_fmt_share(x, b, sizeof(b));
	else if (how == F_POP)
		deid_fmt_population(x, b, sizeof(b));
	else if (how == F_MONEY)
		snprintf(b, sizeof(b), "$%.0f", x);
	else
		snprintf(b, sizeof(b), "%.4g", x);
	fprintf(f, "<td class=\"n\">%s</td>", b);
}

/* ---- pictures ------------------------------------------------------- */

/* One row of a bar chart: up to two shares (NaN: no bar) and a mark. */
struct bar_row {
	const char	*label;
	double		 v[2];
	char		 text[2][48];
	double		 mark;		/* a bound, drawn as a line; NaN none */
};

/* The two series' colours, for a chart that has two. */
static void
svg_legend(FILE *f, const char *const *series, size_t nseries)
{
	static const char *const color[] = { COLOR_BEFORE, COLOR_AFTER };
	size_t s;

	for (s = 0; nseries > 1 && s < nseries; s++)
		fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"12\" height=\"12\" "
		    "fill=\"%s\"/><text x=\"%d\" y=\"14\">%s</text>",
		    LABEL_W + (int)s * 110, color[s], LABEL_W + 18 +
		    (int)s * 110, series[s]);
}

/* One row of svg_bars at y: its label, bars and value texts (right of
 * the bar and of the mark), the mark. */
static void
svg_bar_row(FILE *f, const struct bar_row *row, int y, int rh,
    size_t nseries)
{
	static const char *const color[] = { COLOR_BEFORE, COLOR_AFTER };
	long mx = isnan(row->mark) ? -1 : lround(BAR_W * fmin(1,
	    fmax(0, row->mark)));
	size_t s;
	int w;

	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
	    LABEL_W - 8, y + rh / 2 + 2);
	escape_short(f, row->label, 22);
	fputs("</text>", f);
	for (s = 0; s < nseries; s++) {
		if (isnan(row->v[s]))
			continue;
		w = (int)lround(BAR_W * fmin(1, fmax(0, row->v[s])));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" "
		    "fill=\"%s\"/><text x=\"%ld\" y=\"%d\">%s</text>", LABEL_W,
		    y + 4 + (int)s * 16, w > 0 ? w : 1,
		    color[nseries > 1 ? s : 1],
		    LABEL_W + (w > mx ? w : mx + 2) + 6L,
		    y + 15 + (int)s * 16, row->text[s]);
	}
	if (mx >= 0)
		fprintf(f, "<line x1=\"%ld\" x2=\"%ld\" y1=\"%d\" y2=\"%d\" "
		    "stroke=\"%s\" stroke-width=\"2\"/>", LABEL_W + mx,
		    LABEL_W + mx, y + 1, y + rh - 3, COLOR_MARK);
}

/* Horizontal bars, a share of 1 filling BAR_W; labels escaped. */
static void
svg_bars(FILE *f, const char *title, const struct bar_row *rows, size_t n,
    const char *const *series, size_t nseries)
{
	int rh = (int)nseries * 16 + 10, top = nseries > 1 ? 24 : 4;
	int h = top + (int)n * rh + 4;
	size_t i;

	fprintf(f, "<svg role=\"img\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\"><title>%s</title>", LABEL_W + BAR_W +
	    TEXT_W, h, LABEL_W + BAR_W + TEXT_W, h, title);
	svg_legend(f, series, nseries);
	for (i = 0; i < n; i++)
		svg_bar_row(f, &rows[i], top + (int)i * rh, rh, nseries);
	fputs("</svg>\n", f);
}

/* One QI's hierarchy as a row of level boxes, the chosen one filled. */
static void
svg_ladder_row(FILE *f, const json_t *g, int y)
{
	const json_t *lv = json_object_get(g, "levels"), *l;
	json_int_t chosen = json_is_integer(json_object_get(g, "level")) ?
	    json_integer_value(json_object_get(g, "level")) : -1;
	char vs[32];
	size_t i;
	int x;

	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 8,
	    y + BOX_H / 2 + 4);
	escape_short(f, deid_jstr(g, "attribute"), 22);
	fputs("</text>", f);
	json_array_foreach(lv, i, l) {
		x = LABEL_W + (int)i * (BOX_W + 8);
		deid_fmt_count(deid_jnum(l, "values"), vs, sizeof(vs));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		    "rx=\"4\" fill=\"%s\" stroke=\"#556\"/><text x=\"%d\" "
		    "y=\"%d\" fill=\"%s\">", x, y, BOX_W, BOX_H,
		    (json_int_t)i == chosen ? COLOR_AFTER : "#fff", x + 6,
		    y + 16, (json_int_t)i == chosen ? "#fff" : "#1b1f24");
		escape_short(f, deid_jstr(l, "example"), 13);
		fprintf(f, "</text><text x=\"%d\" y=\"%d\" fill=\"%s\">level "
		    "%zu · %s</text>", x + 6, y + 32, (json_int_t)i == chosen ?
		    "#fff" : "#555", i, vs);
	}
}

/* The chosen transformation: every QI's levels, the chosen one filled,
 * labelled with the same leaf at each level. */
static void
svg_ladder(FILE *f, const json_t *gen)
{
	const json_t *g;
	size_t i, maxl = 1;
	int w, h;

	json_array_foreach(gen, i, g)
		if (json_array_size(json_object_get(g, "levels")) > maxl)
			maxl = json_array_size(json_object_get(g, "levels"));
	w = LABEL_W + (int)maxl * (BOX_W + 8);
	h = (int)json_array_size(gen) * (BOX_H + 10) + 4;
	fprintf(f, "<svg role=\"img\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\"><title>the chosen level of every "
	    "quasi-identifier</title>", w, h, w, h);
	json_array_foreach(gen, i, g)
		svg_ladder_row(f, g, 2 + (int)i * (BOX_H + 10));
	fputs("</svg>\n", f);
}

/* ---- sections ------------------------------------------------------- */

/* The verdict box: the explanation, its headline first. */
static void
sec_verdict(FILE *f, const json_t *report)
{
	const char *v = deid_jstr(json_object_get(report, "gate"), "verdict");
	json_t *lines = deid_explain(report), *l;
	size_t i;

	fprintf(f, "<section id=\"verdict\" class=\"verdict %s\"><h2>Verdict: "
	    "", strcmp(v, "passed") == 0 ? "passed" : strcmp(v,
	    "nothing released") == 0 ? "nothing" : "failed");
	deid_html_escape(f, v[0] ? v : "unknown");
	fputs("</h2>\n<p class=\"headline\">", f);
	deid_html_escape(f, json_string_value(json_array_get(lines, 0)));
	fputs("</p>\n<ul>\n", f);
	json_array_foreach(lines, i, l) {
		if (i == 0)
			continue;
		fputs(json_is_string(l) && strncmp(json_string_value(l),
		    "FAILED", 6) == 0 ?
		    "<li class=\"fail\">" : "<li>", f);
		deid_html_escape(f, json_string_value(l));
		fputs("</li>\n", f);
	}
	fputs("</ul></section>\n", f);
	json_decref(lines);
}

/* Class sizes before and after, as bars and as a table. */
static void
sec_classes(FILE *f, const json_t *risk)
{
	static const char *const series[] = { "before", "after" };
	static const char *const label[] = { "classes of 1", "classes of 2–4",
	    "classes of 5–9", "classes of 10 or more" };
	const json_t *side[2] = { json_object_get(risk, "before"),
	    json_object_get(risk, "after") }, *b;
	struct bar_row rows[4];
	size_t i, s;

	for (i = 0; i < 4; i++) {
		rows[i].label = label[i];
		rows[i].mark = NAN;
		for (s = 0; s < 2; s++) {
			b = json_array_get(json_object_get(side[s],
			    "class_sizes"), i);
			rows[i].v[s] = deid_jnum(b, "share");
			deid_fmt_share(rows[i].v[s], rows[i].text[s],
			    sizeof(rows[i].text[s]));
		}
	}
	fputs("<p>Share of the records in classes of each size (a class: "
	    "the records that look alike on every quasi-identifier; after: "
	    "the released records).</p>\n", f);
	svg_bars(f, "share of records by class size, before and after", rows,
	    4, series, 2);
	fputs("<table><tr><th>class size</th><th>classes before</th><th>"
	    "records before</th><th>classes after</th><th>records after</th>"
	    "</tr>\n", f);
	for (i = 0; i < 4; i++) {
		fprintf(f, "<tr><td>%s</td>", label[i] + 11);
		for (s = 0; s < 2; s++) {
			b = json_array_get(json_object_get(side[s],
			    "class_sizes"), i);
			td_num(f, deid_jnum(b, "classes"), F_COUNT);
			td_num(f, deid_jnum(b, "records"), F_COUNT);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The figures of both sides in one table. */
static void
sec_risk_table(FILE *f, const json_t *risk)
{
	static const struct { const char *label, *obj, *key; enum fmt how; }
	    row[] = {
		{ "records", NULL, "records", F_COUNT },
		{ "classes", NULL, "classes", F_COUNT },
		{ "sample uniques", NULL, "sample_uniques", F_COUNT },
		{ "population uniqueness PU/N", NULL, "pu_fraction", F_SHARE },
		{ "prosecutor: records unique in the table", "attack",
		    "prosecutor", F_SHARE },
		{ "prosecutor: highest for one record", "attack",
		    "prosecutor_max", F_SHARE },
		{ "journalist: PU/N by Pitman", "attack", "journalist",
		    F_SHARE },
		{ "marketer: expected share re-identified", "attack",
		    "marketer", F_SHARE },
	};
	const json_t *side[2] = { json_object_get(risk, "before"),
	    json_object_get(risk, "after") };
	size_t i, s;

	fputs("<table><tr><th></th><th>before</th><th>after</th></tr>\n", f);
	for (i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		fprintf(f, "<tr><th>%s</th>", row[i].label);
		for (s = 0; s < 2; s++)
			td_num(f, deid_jnum(row[i].obj ? json_object_get(
			    side[s], row[i].obj) : side[s], row[i].key),
			    row[i].how);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<p>The attacker models assume an attacker who knows "
	    "every quasi-identifier of the person they look for.</p>\n", f);
}

/* PU/SU per population: before, after, the bound; bars of the after. */
static void
sec_residual(FILE *f, const json_t *risk)
{
	const json_t *before = json_object_get(json_object_get(risk,
	    "before"), "residual"), *after = json_object_get(json_object_get(
	    risk, "after"), "residual"), *r;
	struct bar_row rows[16];
	char pop[16][48];
	size_t i, n = 0;

	if (json_array_size(after) == 0)
		return;
	fputs("<section id=\"residual\"><h2>Residual risk PU/SU per "
	    "population</h2>\n<p>PU/SU: the share of the sample uniques "
	    "expected to be unique in the population; the red line is the "
	    "bound.</p>\n<table><tr><th>population N</th><th>bound</th><th>"
	    "before</th><th>after</th><th>model</th><th>check</th></tr>\n", f);
	json_array_foreach(after, i, r) {
		fputs("<tr>", f);
		td_num(f, deid_jnum(r, "population"), F_POP);
		td_num(f, deid_jnum(r, "bound"), F_REAL);
		td_num(f, deid_jnum(json_array_get(before, i), "ratio"),
		    F_REAL);
		td_num(f, deid_jnum(r, "ratio"), F_REAL);
		fputs("<td>", f);
		deid_html_escape(f, deid_jstr(r, "model"));
		fprintf(f, "</td><td%s>%s</td></tr>\n", json_is_true(
		    json_object_get(r, "passed")) ? "" : " class=\"fail\"",
		    json_is_true(json_object_get(r, "passed")) ? "within" :
		    "EXCEEDS");
		if (n < 16) {
			deid_fmt_population(deid_jnum(r, "population"), pop[n],
			    sizeof(pop[n]));
			rows[n].label = pop[n];
			rows[n].v[0] = rows[n].v[1] = deid_jnum(r, "ratio");
			rows[n].mark = deid_jnum(r, "bound");
			snprintf(rows[n].text[0], sizeof(rows[n].text[0]),
			    "%.4g (bound %.4g)", rows[n].v[0], rows[n].mark);
			n++;
		}
	}
	fputs("</table>\n", f);
	svg_bars(f, "PU/SU after, per population, with its bound", rows, n,
	    NULL, 1);
	fputs("</section>\n", f);
}

/* Quality per attribute: its level and losses, bars of the Loss. */
static void
sec_quality(FILE *f, const json_t *report)
{
	const json_t *gen = json_object_get(report, "generalization"), *g;
	const json_t *il = json_object_get(report, "information_loss");
	struct bar_row rows[64];
	size_t i, n = 0;

	fputs("<section id=\"quality\"><h2>Quality per attribute</h2>\n<p>"
	    "Information loss of each quasi-identifier: 0 = kept as is, "
	    "1 = every value generalized to the top; a suppressed record "
	    "counts as generalized to the top.</p>\n<table><tr><th>"
	    "attribute</th><th>level</th><th>Loss</th><th>non-uniform "
	    "entropy</th></tr>\n", f);
	json_array_foreach(gen, i, g) {
		fputs("<tr><td>", f);
		deid_html_escape(f, deid_jstr(g, "attribute"));
		fputs("</td>", f);
		td_num(f, deid_jnum(g, "level"), F_COUNT);
		td_num(f, deid_jnum(g, "loss"), F_REAL);
		td_num(f, deid_jnum(g, "nu_entropy"), F_REAL);
		fputs("</tr>\n", f);
		if (n < 64 && !isnan(deid_jnum(g, "loss"))) {
			rows[n].label = deid_jstr(g, "attribute");
			rows[n].v[0] = rows[n].v[1] = deid_jnum(g, "loss");
			rows[n].mark = NAN;
			snprintf(rows[n].text[0], sizeof(rows[n].text[0]),
			    "%.3f", rows[n].v[0]);
			n++;
		}
	}
	fputs("<tr><th>all (Loss: geometric mean)</th><td></td>", f);
	td_num(f, deid_jnum(il, "loss"), F_REAL);
	td_num(f, deid_jnum(il, "nu_entropy"), F_REAL);
	fputs("</tr></table>\n", f);
	if (n > 0)
		svg_bars(f, "Loss per attribute", rows, n, NULL, 1);
	fputs("</section>\n", f);
}

/* Where the chosen node sits: every QI's levels, and the lattice. */
static void
sec_lattice(FILE *f, const json_t *report)
{
	const json_t *gen = json_object_get(report, "generalization");
	const json_t *lat = json_object_get(report, "lattice");
	char nodes[32], ev[32];

	if (json_array_size(gen) == 0)
		return;
	deid_fmt_count(deid_jnum(lat, "nodes"), nodes, sizeof(nodes));
	deid_fmt_count(deid_jnum(lat, "evaluated"), ev, sizeof(ev));
	fprintf(f, "<section id=\"lattice\"><h2>The chosen transformation"
	    "</h2>\n<p>Each row is a quasi-identifier's hierarchy from its "
	    "values (level 0) to the top, each box one level with what the "
	    "same value reads as there and how many values the level has; "
	    "the filled box is the level chosen. The lattice of all "
	    "combinations has %s nodes; the search checked %s.</p>\n",
	    nodes, ev);
	svg_ladder(f, gen);
	fputs("</section>\n", f);
}

/* The suppression's counts against its limit (from "verified"). */
static void
sec_suppression(FILE *f, const json_t *report)
{
	const json_t *v = json_object_get(report, "verified");
	const json_t *crit = json_object_get(report, "criteria");

	if (!json_is_object(v))
		return;
	fputs("<section id=\"suppression\"><h2>Suppression</h2>\n<table>"
	    "<tr><th>records in the input</th>", f);
	td_num(f, deid_jnum(v, "records"), F_COUNT);
	fputs("</tr><tr><th>released</th>", f);
	td_num(f, deid_jnum(v, "released_records"), F_COUNT);
	fputs("</tr><tr><th>suppressed (* in every quasi-identifier)</th>", f);
	td_num(f, deid_jnum(v, "suppressed_records"), F_COUNT);
	fputs("</tr><tr><th>suppressed share</th>", f);
	td_num(f, deid_jnum(v, "suppressed_share"), F_SHARE);
	fputs("</tr><tr><th>suppression limit</th>", f);
	td_num(f, deid_jnum(crit, "suppression_limit"), F_SHARE);
	fputs("</tr></table></section>\n", f);
}

/* The game's amounts and figures, when it ran. */
static void
sec_game(FILE *f, const json_t *game)
{
	static const struct { const char *label, *key; enum fmt how; } row[] = {
		{ "adversary's cost per attack", "cost", F_MONEY },
		{ "adversary's gain per success", "gain", F_MONEY },
		{ "publisher's loss per success", "loss", F_MONEY },
		{ "publisher's benefit per record", "benefit", F_MONEY },
		{ "sampling fraction in SP (1: prosecutor)",
		    "sampling_fraction", F_REAL },
		{ "publisher's payout", "payout", F_MONEY },
		{ "most any release could earn", "payout_max", F_MONEY },
		{ "payout share", "payout_share", F_SHARE },
		{ "released records worth attacking", "attacked_records",
		    F_COUNT },
		{ "released records with a negative payout",
		    "unprofitable_records", F_COUNT },
		{ "expected loss to attacks", "expected_loss", F_MONEY },
	};
	size_t i;

	if (!json_is_object(game))
		return;
	fputs("<section id=\"game\"><h2>The game-theoretic model (", f);
	deid_html_escape(f, deid_jstr(game, "variant"));
	fputs(")</h2>\n<p>A rational adversary attacks a record when the "
	    "expected gain beats the cost.", f);
	if (strcmp(deid_jstr(game, "risk"), "journalist") == 0)
		fputs(" Success probability: the journalist's, sampling "
		    "fraction / class size.", f);
	else if (strcmp(deid_jstr(game, "risk"), "prosecutor") == 0)
		fputs(" Success probability: the prosecutor's, 1 / class "
		    "size.", f);
	fputs("</p>\n<table>\n", f);
	for (i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		fprintf(f, "<tr><th>%s</th>", row[i].label);
		td_num(f, deid_jnum(game, row[i].key), row[i].how);
		fputs("</tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

/* The Safe Harbor floor next to the levels found in the table. */
static void
sec_safe_harbor(FILE *f, const json_t *report)
{
	const json_t *sh = json_object_get(report, "safe_harbor");
	const json_t *lv = json_object_get(json_object_get(report,
	    "verified"), "levels");
	const char *qi;
	json_t *want;

	if (!json_is_object(sh))
		return;
	fputs("<section id=\"safe-harbor\"><h2>HIPAA Safe Harbor</h2>\n"
	    "<p>No quasi-identifier may be less generalized than the level "
	    "where its hierarchy meets Safe Harbor.</p>\n<table>\n<tr><th>"
	    "quasi-identifier</th><th>Safe Harbor level</th><th>level in the "
	    "table</th></tr>\n", f);
	json_object_foreach((json_t *)sh, qi, want) {
		fputs("<tr><th>", f);
		deid_html_escape(f, qi);
		fputs("</th>", f);
		td_num(f, (double)json_integer_value(want), F_COUNT);
		td_num(f, deid_jnum(lv, qi), F_COUNT);
		fputs("</tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

/* The inputs' warnings (a repeated hierarchy row, ...). */
static void
sec_warnings(FILE *f, const json_t *report)
{
	const json_t *w = json_object_get(report, "warnings"), *x;
	size_t i;

	if (json_array_size(w) == 0)
		return;
	fputs("<section id=\"warnings\"><h2>What the inputs said</h2>\n<ul>",
	    f);
	json_array_foreach(w, i, x) {
		fputs("<li>", f);
		deid_html_escape(f, json_string_value(x));
		fputs("</li>", f);
	}
	fputs("</ul></section>\n", f);
}

/* Doctype, CSP, title and styles: everything before the verdict. */
static void
page_head(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8"
	    "\">\n<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'\">\n<meta name=\""
	    "viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<title>De-identification report", f);
	if (title != NULL) {
		fputs(": ", f);
		deid_html_escape(f, title);
	}
	fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<header><h1>"
	    "De-identification report</h1><p class=\"sub\">", style);
	deid_html_escape(f, title != NULL ? title : "");
	fputs("</p></header>\n", f);
}

/* The lattice and timing figures, and the page's end. */
static void
page_foot(FILE *f, const json_t *report)
{
	const json_t *lat = json_object_get(report, "lattice");

	fprintf(f, "<footer>cdsgate de-identification gate. Lattice: %.0f "
	    "nodes, %.0f checked; search %.0f ms, verification %.0f ms. The "
	    "JSON report carries every figure on this page.</footer>\n"
	    "</body></html>\n", deid_jnum(lat, "nodes"),
	    deid_jnum(lat, "evaluated"),
	    deid_jnum(report, "search_ms"), deid_jnum(report, "verify_ms"));
}

/* Xia 2021: each risk under the attacker file and the worst case, the
 * per-subject reduction's quartiles; bars of both, the bound marked. */
static void
sec_adversary(FILE *f, const json_t *a)
{
	static const char *const series[] = { "all QIs", "attacker" };
	static const char *const risks[] = { "prosecutor", "journalist",
	    "marketer", "overall" };
	const json_t *red = json_object_get(a, "reduction"), *r, *w;
	struct bar_row rows[4];
	size_t i;

	if (!json_is_object(a))
		return;
	fputs("<section id=\"adversarial\"><h2>Adversarial risk (Xia "
	    "2021)</h2>\n<p>The attacker in <code>", f);
	deid_html_escape(f, deid_jstr(a, "attacker"));
	fprintf(f, "</code> knows each group of attributes with its "
	    "probability; %.0f Monte Carlo trials per subject, seed %.0f. "
	    "The reduction is per subject, (worst case − attacker) / worst "
	    "case, over the subjects at risk in the worst case.</p>\n"
	    "<table><tr><th>risk</th><th>every QI known</th><th>this "
	    "attacker</th><th>reduction Q1</th><th>median</th><th>Q3</th>"
	    "</tr>\n", deid_jnum(a, "trials"), deid_jnum(a, "seed"));
	for (i = 0; i < 4; i++) {
		w = json_object_get(json_object_get(a, "worst_case"), risks[i]);
		r = json_object_get(json_object_get(a, "attacker_risks"),
		    risks[i]);
		fprintf(f, "<tr><th>%s</th>", risks[i]);
		td_num(f, deid_jnum(w, "mean"), F_SHARE);
		td_num(f, deid_jnum(r, "mean"), F_SHARE);
		td_num(f, deid_jnum(json_object_get(red, risks[i]), "q1"),
		    F_SHARE);
		td_num(f, deid_jnum(json_object_get(red, risks[i]), "median"),
		    F_SHARE);
		td_num(f, deid_jnum(json_object_get(red, risks[i]), "q3"),
		    F_SHARE);
		fputs("</tr>\n", f);
		rows[i].label = risks[i];
		rows[i].v[0] = deid_jnum(w, "mean");
		rows[i].v[1] = deid_jnum(r, "mean");
		deid_fmt_share(rows[i].v[0], rows[i].text[0],
		    sizeof(rows[i].text[0]));
		deid_fmt_share(rows[i].v[1], rows[i].text[1],
		    sizeof(rows[i].text[1]));
		rows[i].mark = i == 3 ? deid_jnum(a, "bound") : NAN;
	}
	fputs("</table>\n", f);
	svg_bars(f, "Mean risk per subject: every QI known and this attacker",
	    rows, 4, series, 2);
	fputs("</section>\n", f);
}

int
deid_html_report(const json_t *report, const char *title, FILE *f)
{
	const json_t *risk = json_object_get(report, "risk");

	if (!json_is_object(json_object_get(report, "gate")))
		return DEID_EINPUT;
	page_head(f, title);
	sec_verdict(f, report);
	if (json_is_object(risk)) {
		fputs("<section id=\"risk\"><h2>Risk before and after</h2>\n",
		    f);
		sec_classes(f, risk);
		sec_risk_table(f, risk);
		fputs("</section>\n", f);
		sec_residual(f, risk);
	}
	sec_quality(f, report);
	sec_lattice(f, report);
	sec_suppression(f, report);
	sec_game(f, json_object_get(report, "game"));
	sec_safe_harbor(f, report);
	sec_adversary(f, json_object_get(json_object_get(report, "verified"),
	    "adversarial"));
	sec_warnings(f, report);
	page_foot(f, report);
	return fflush(f) == 0 && !ferror(f) ? DEID_OK : DEID_EIO;
}
