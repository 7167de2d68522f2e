/*
 * tests/unit/test-csv.c — deid/csv.c: RFC 4180 quoting, line endings,
 * separator detection, strict UTF-8, NUL bytes, bounds, blank lines,
 * line:column in every error, the whole-file reader, a random
 * round-trip, and the real benchmark datasets (skipped, with the reason,
 * when ../shared/data is absent).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deid/csv.h"
#include "tests/tap.h"
#include "tests/testdata.h"

/* Records rendered as "line:f1|f2\n", CR and LF inside fields as \r \n. */
struct coll {
	char		 out[8192];
	size_t		 n;
	unsigned long	 records;
	size_t		 minf, maxf;	/* fields per record */
	unsigned long	 stop_after;	/* callback fails after this many */
	size_t		 check_cols;	/* callback rejects other lengths */
};

static void
coll_puts(struct coll *c, const char *s)
{
	for (; *s != '\0' && c->n + 3 < sizeof(c->out); s++) {
		if (*s == '\n' || *s == '\r') {
			c->out[c->n++] = '\\';
			c->out[c->n++] = *s == '\n' ? 'n' : 'r';
		} else
			c->out[c->n++] = *s;
	}
	c->out[c->n] = '\0';
}

static int
collect(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct coll *c = ctx;
	char num[32];
	size_t i;

	if (c->stop_after != 0 && c->records == c->stop_after)
		return deid_error_set(err, DEID_ELIMIT, "cb", line, 0,
		    "stopped");
	if (c->check_cols != 0 && nf != c->check_cols)
		return deid_error_set(err, DEID_EINPUT, "cb", line, 0,
		    "%zu fields, expected %zu", nf, c->check_cols);
	if (c->records == 0 || nf < c->minf)
		c->minf = nf;
	if (nf > c->maxf)
		c->maxf = nf;
	c->records++;
	snprintf(num, sizeof(num), "%lu:", line);
	coll_puts(c, num);
	for (i = 0; i < nf; i++) {
		if (i > 0)
			coll_puts(c, "|");
		coll_puts(c, f[i]);
	}
	if (c->n + 1 < sizeof(c->out))
		c->out[c->n++] = '\n';	/* the record end, unescaped */
	c->out[c->n] = '\0';
	return DEID_OK;
}

static int
parse(const char *d, size_t len, char sep, size_t max_field,
    struct coll *c, char *sep_out, struct deid_error *err)
{
	struct deid_csv_opts o = { sep, max_field };

	memset(c->out, 0, sizeof(c->out));
	c->n = 0;
	c->records = 0;
	c->minf = c->maxf = 0;
	memset(err, 0, sizeof(*err));
	return deid_csv_parse(d, len, "t.csv", &o, collect, c, sep_out, err);
}

/* Parse s (strlen) with separator sep and compare the rendering. */
static void
expect_rec(const char *s, char sep, const char *want, const char *what)
{
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	int r = parse(s, strlen(s), sep, 0, &c, NULL, &e);

	if (!tap_ok(r == DEID_OK && strcmp(c.out, want) == 0, "%s", what))
		tap_diag("status %d (%s:%lu:%lu: %s), got \"%s\" want \"%s\"",
		    r, e.file, e.line, e.column, e.msg, c.out, want);
}

/* Parse len bytes and expect an error at line:col whose message holds
 * sub (col 0 = do not check). */
static void
expect_err(const char *s, size_t len, char sep, size_t max_field,
    int status, unsigned long line, unsigned long col, const char *sub,
    const char *what)
{
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	int r = parse(s, len, sep, max_field, &c, NULL, &e);
	int ok = status == DEID_OK ? r == DEID_OK : r == status &&
	    e.line == line &&
	    (col == 0 || e.column == col) && strstr(e.msg, sub) != NULL &&
	    strcmp(e.file, "t.csv") == 0;

	if (!tap_ok(ok, "%s", what))
		tap_diag("got status %d at %s:%lu:%lu \"%s\"; want %d at "
		    "%lu:%lu \"%s\"", r, e.file, e.line, e.column, e.msg,
		    status, line, col, sub);
}

#define ERR(s, st, l, c, sub, what) \
	expect_err((s), sizeof(s) - 1, 0, 0, (st), (l), (c), (sub), (what))

static void
test_basic(void)
{
	expect_rec("a;b\nc;d\n", 0, "1:a|b\n2:c|d\n", "LF lines");
	expect_rec("a;b\r\nc;d\r\n", 0, "1:a|b\n2:c|d\n", "CRLF lines");
	expect_rec("a;b\r\nc;d\ne;f\r\n", 0, "1:a|b\n2:c|d\n3:e|f\n",
	    "mixed CRLF and LF");
	expect_rec("a;b\nc;d", 0, "1:a|b\n2:c|d\n", "no final newline");
	expect_rec("a;b\r\nc;d", 0, "1:a|b\n2:c|d\n",
	    "CRLF file without final newline");
	expect_rec("a;;b\n;\n", 0, "1:a||b\n2:|\n", "empty fields");
	expect_rec("a;b;\n", 0, "1:a|b|\n", "trailing empty field");
	expect_rec(" a ; b \n", 0, "1: a | b \n", "spaces are data");
	expect_rec("a;b;c\n", 0, "1:a|b|c\n", "header only: one record");
	expect_rec("x", 0, "1:x\n", "one byte, no newline");
}

static void
test_quotes(void)
{
	expect_rec("\"a;b\";c\n", 0, "1:a;b|c\n", "quoted separator");
	expect_rec("\"x\ny\";z\nq;r\n", 0, "1:x\\ny|z\n3:q|r\n",
	    "quoted LF; next record starts on line 3");
	expect_rec("\"x\r\ny\";z\r\nq;r\r\n", 0, "1:x\\r\\ny|z\n3:q|r\n",
	    "quoted CRLF kept as data");
	expect_rec("\"he said \"\"hi\"\"\";2\n", 0, "1:he said \"hi\"|2\n",
	    "doubled quotes");
	expect_rec("\"\"\"\"\n", 0, "1:\"\n", "field of one quote");
	expect_rec("\"\";x\n", 0, "1:|x\n", "empty quoted field");
	expect_rec("a;\"b\"\r\nc;\"d\"", 0, "1:a|b\n2:c|d\n",
	    "quoted last field, CRLF and EOF");
	expect_rec("\"a\rb\"\n", 0, "1:a\\rb\n", "lone CR inside quotes");
	expect_rec("\"a,b\",c\n", ',', "1:a,b|c\n", "quoted comma");
	ERR("a;\"bc\nd\n", DEID_EINPUT, 1, 3, "unterminated quoted field",
	    "unterminated quote at EOF names where it opened");
	ERR("x;1\ny;\"", DEID_EINPUT, 2, 3, "unterminated",
	    "lone quote at EOF on line 2");
	ERR("\"ab\"c;d\n", DEID_EINPUT, 1, 5, "text after closing quote",
	    "text after closing quote");
	ERR("\"ab\" ;d\n", DEID_EINPUT, 1, 5, "text after closing quote",
	    "space after closing quote");
	ERR("ab\"c\n", DEID_EINPUT, 1, 3, "quote inside an unquoted field",
	    "quote inside unquoted field");
	ERR("a;b\nc;d\"\n", DEID_EINPUT, 2, 4, "quote inside",
	    "quote inside unquoted field, line 2");
}

static void
test_separator(void)
{
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	char sep = 0;
	int r;

	r = parse("a,b,c\n1,2,3\n", 12, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ',' && c.maxf == 3,
	    "detect ',' (sep '%c', %zu fields)", sep, c.maxf);
	r = parse("a;b;c\n1;2;3\n", 12, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ';' && c.maxf == 3, "detect ';'");
	r = parse("a;b,c\n", 6, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ';' && c.maxf == 2,
	    "tie with both present: ';'");
	r = parse("a,b;c,d\n", 8, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ',' && c.maxf == 3,
	    "more commas than semicolons: ','");
	r = parse("abc\nxyz\n", 8, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ',' && c.maxf == 1 && c.records == 2,
	    "one column (no separator): ','");
	r = parse("\"a,b,c\";d\n", 10, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ';', "quoted commas do not vote");
	r = parse("a;b\n1,2,3,4\n", 12, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ';', "only the first line votes");
	r = parse("\xef\xbb\xbf" "a,b\n", 7, 0, 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == ',', "detection skips the BOM");
	r = parse("a;b\tc\n", 6, '\t', 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && sep == '\t' && strcmp(c.out, "1:a;b|c\n") ==
	    0, "given separator (tab) wins");
	r = parse("a;b\n", 4, ',', 0, &c, &sep, &e);
	tap_ok(r == DEID_OK && c.maxf == 1, "given ',' keeps ';' as data");
	tap_ok(deid_csv_detect("x;y,z,w", 7) == ',' &&
	    deid_csv_detect("", 0) == ',' && deid_csv_detect(NULL, 0) == ',',
	    "deid_csv_detect");
	r = parse("a\"b\n", 4, '"', 0, &c, &sep, &e);
	tap_ok(r == DEID_EINPUT && strstr(e.msg, "separator") != NULL,
	    "'\"' refused as separator");
	r = parse("a\nb\n", 4, '\n', 0, &c, &sep, &e);
	tap_ok(r == DEID_EINPUT, "LF refused as separator");
}

static void
test_lines(void)
{
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	int r;

	ERR("", DEID_EINPUT, 0, 0, "empty file", "empty file");
	ERR("\xef\xbb\xbf", DEID_EINPUT, 0, 0, "empty file",
	    "BOM only: empty file");
	ERR("\n", DEID_EINPUT, 0, 0, "empty file", "a lone LF: empty file");
	expect_rec("\xef\xbb\xbf" "a;b\n", 0, "1:a|b\n", "BOM is skipped");
	ERR("\xef\xbb\xbf" "a\"b\n", DEID_EINPUT, 1, 2, "quote",
	    "columns count after the BOM");
	expect_rec("a\xef\xbb\xbf;b\n", 0, "1:a\xef\xbb\xbf|b\n",
	    "U+FEFF later is data");
	expect_rec("a;b\nc;d\n\n", 0, "1:a|b\n2:c|d\n",
	    "one blank line at the end is ignored");
	expect_rec("a;b\r\nc;d\r\n\r\n", 0, "1:a|b\n2:c|d\n",
	    "one blank CRLF line at the end is ignored");
	ERR("a\n\nb\n", DEID_EINPUT, 2, 1, "blank line", "blank line inside");
	ERR("a\r\n\r\nb", DEID_EINPUT, 2, 1, "blank line",
	    "blank CRLF line inside");
	ERR("a\nb\n\n\n", DEID_EINPUT, 3, 1, "blank line",
	    "two blank lines at the end: the first is an error");
	expect_rec("a\n\"\"\nb\n", 0, "1:a\n2:\n3:b\n",
	    "\"\" is a record with one empty field, not a blank line");
	expect_rec("a;b\nc\nd;e;f\n", 0, "1:a|b\n2:c\n3:d|e|f\n",
	    "ragged rows are passed on with their lines");
	c.check_cols = 2;
	r = parse("a;b\nc;d\ne\nf;g\n", 14, 0, 0, &c, NULL, &e);
	tap_ok(r == DEID_EINPUT && e.line == 3 && c.records == 2 &&
	    strstr(e.msg, "1 fields, expected 2") != NULL,
	    "callback rejecting a ragged row stops at line 3 (%lu)", e.line);
	c.check_cols = 0;
	ERR("a\rb\n", DEID_EINPUT, 1, 2, "CR not followed by LF",
	    "lone CR is an error");
	ERR("a;b\r", DEID_EINPUT, 1, 4, "CR not followed by LF",
	    "CR at EOF is an error");
	ERR("\"a\"\rb\n", DEID_EINPUT, 1, 4, "CR not followed by LF",
	    "lone CR after a closing quote");
	c.stop_after = 2;
	r = parse("a\nb\nc\nd\n", 8, 0, 0, &c, NULL, &e);
	tap_ok(r == DEID_ELIMIT && c.records == 2 && e.line == 3 &&
	    strcmp(e.msg, "stopped") == 0,
	    "callback status stops the parse and is returned");
}

static void
test_nul(void)
{
	ERR("ab;c\0d\n", DEID_EINPUT, 1, 5, "NUL byte", "NUL in a field");
	ERR("ab\n\"c\0\"\n", DEID_EINPUT, 2, 3, "NUL byte",
	    "NUL in a quoted field, line 2");
	ERR("\0", DEID_EINPUT, 1, 1, "NUL byte", "file of one NUL");
	ERR("a\n\"x\ny\0", DEID_EINPUT, 3, 2, "NUL byte",
	    "NUL after a quoted newline: line 3");
}

static void
test_utf8(void)
{
	expect_rec("\xc3\xa9;\xe2\x82\xac;\xf0\x9d\x84\x9e\n", 0,
	    "1:\xc3\xa9|\xe2\x82\xac|\xf0\x9d\x84\x9e\n",
	    "2-, 3- and 4-byte sequences kept verbatim");
	expect_rec("\xf4\x8f\xbf\xbf;\xed\x9f\xbf;\xee\x80\x80;\xc2\x80\n",
	    0, "1:\xf4\x8f\xbf\xbf|\xed\x9f\xbf|\xee\x80\x80|\xc2\x80\n",
	    "boundaries U+10FFFF, U+D7FF, U+E000, U+0080 accepted");
	expect_rec("\"\xc3\xa9;x\"\n", 0, "1:\xc3\xa9;x\n", "UTF-8 in quotes");
	ERR("a\x80" "b\n", DEID_EINPUT, 1, 2, "continuation",
	    "lone continuation byte");
	ERR("\xc0\xaf\n", DEID_EINPUT, 1, 1, "overlong", "overlong C0 AF");
	ERR("x\xc1\xbf\n", DEID_EINPUT, 1, 2, "overlong", "overlong C1 BF");
	ERR("\xe0\x80\xaf\n", DEID_EINPUT, 1, 2, "overlong",
	    "3-byte overlong E0 80 AF");
	ERR("\xf0\x80\x80\xaf\n", DEID_EINPUT, 1, 2, "overlong",
	    "4-byte overlong F0 80 80 AF");
	ERR("ab\xed\xa0\x80\n", DEID_EINPUT, 1, 4, "surrogate",
	    "surrogate U+D800");
	ERR("\xed\xbf\xbf\n", DEID_EINPUT, 1, 2, "surrogate",
	    "surrogate U+DFFF");
	ERR("\xf4\x90\x80\x80\n", DEID_EINPUT, 1, 2, "above U+10FFFF",
	    "U+110000");
	ERR("\xf5\x80\x80\x80\n", DEID_EINPUT, 1, 1, "never valid",
	    "F5 lead byte");
	ERR("\xff", DEID_EINPUT, 1, 1, "never valid", "FF byte");
	ERR("a\xc3", DEID_EINPUT, 1, 3, "truncated", "truncated at EOF");
	ERR("\xe2\x82;x\n", DEID_EINPUT, 1, 3, "truncated",
	    "truncated by a separator");
	ERR("\xf0\x9d\x84" "a\n", DEID_EINPUT, 1, 4, "truncated",
	    "4-byte sequence missing its last byte");
	ERR("ok\nab\xc0\xaf", DEID_EINPUT, 2, 3, "overlong",
	    "bad byte on line 2");
	ERR("\"x\ny\xe0\x9f\xbf\"", DEID_EINPUT, 2, 3, "overlong",
	    "bad UTF-8 inside a quoted field after a newline");
}

static void
test_bounds(void)
{
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	size_t n = 1024 * 1024, i;
	char *big = malloc(n + 16), want[64];
	int r;

	if (big == NULL)
		exit(99);
	memcpy(big, "h\n", 2);
	memset(big + 2, 'x', n);
	memcpy(big + 2 + n, ";y\n", 3);
	r = parse(big, n + 5, ';', 0, &c, NULL, &e);
	tap_ok(r == DEID_EINPUT && e.line == 2 &&
	    strcmp(e.msg, "field longer than 65536 bytes") == 0,
	    "1 MiB field vs default max: \"%s\" line %lu", e.msg, e.line);
	r = parse(big, n + 5, ';', 2 * n, &c, NULL, &e);
	tap_ok(r == DEID_OK && c.records == 2,
	    "1 MiB field with max_field 2 MiB parses");
	big[2] = '"';
	big[n + 1] = '"';
	r = parse(big, n + 5, ';', n - 2, &c, NULL, &e);
	tap_ok(r == DEID_OK, "quoted 1 MiB field: content n-2 fits n-2");
	r = parse(big, n + 5, ';', n - 3, &c, NULL, &e);
	snprintf(want, sizeof(want), "field longer than %zu bytes", n - 3);
	tap_ok(r == DEID_EINPUT && strcmp(e.msg, want) == 0 && e.line == 2 &&
	    e.column == 1, "quoted field one byte over the max");
	expect_err("0123456789;a", 12, 0, 10, DEID_OK, 0, 0, "",
	    "field of exactly max_field bytes");
	expect_err("01234567890;a", 13, 0, 10, DEID_EINPUT, 1, 1,
	    "field longer than 10 bytes", "field of max_field + 1 bytes");
	expect_err("a;\"0123\"\"5678\"", 14, 0, 10, DEID_OK, 0, 0, "",
	    "escaped quote counts as one byte");
	expect_err("a;\"x\xc3\xa9" "12345678\"", 15, 0, 10, DEID_EINPUT, 1,
	    3, "longer than 10", "multi-byte characters count in bytes");
	for (i = 0; i < DEID_CSV_MAX_COLUMNS; i++)
		big[i] = ';';
	big[DEID_CSV_MAX_COLUMNS - 1] = '\n';
	r = parse(big, DEID_CSV_MAX_COLUMNS, 0, 0, &c, NULL, &e);
	tap_ok(r == DEID_OK && c.maxf == DEID_CSV_MAX_COLUMNS,
	    "exactly %d columns", DEID_CSV_MAX_COLUMNS);
	memcpy(big, "a\n", 2);
	for (i = 2; i < DEID_CSV_MAX_COLUMNS + 2; i++)
		big[i] = ';';
	r = parse(big, DEID_CSV_MAX_COLUMNS + 2, ';', 0, &c, NULL, &e);
	tap_ok(r == DEID_EINPUT && e.line == 2 &&
	    strstr(e.msg, "more than 4096 columns") != NULL,
	    "4097 columns: \"%s\" line %lu", e.msg, e.line);
	free(big);
}

/* Tiny deterministic PRNG (xorshift64*) for the property tests. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

struct rt {
	char		 field[8][16];
	size_t		 nf;
	int		 ok;
};

static int
rt_check(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct rt *t = ctx;
	size_t i;

	t->ok = nf == t->nf;
	for (i = 0; t->ok && i < nf; i++)
		t->ok = strcmp(f[i], t->field[i]) == 0;
	return DEID_OK;
}

/*
 * Encode random records (fields drawn from separators, quotes, CR, LF,
 * a two-byte character and letters) per RFC 4180, parse them back and
 * compare.  Single-field records avoid the blank-line rule by quoting.
 */
static void
test_roundtrip(void)
{
	static const char *const atoms[] = { "a", "b", ";", ",", "\"", "\r",
	    "\n", "\r\n", "\xc3\xa9", " " };
	struct deid_error e;
	struct deid_csv_opts o = { ';', 0 };
	struct rt t;
	char enc[1024];
	size_t i, j, k, n;
	int bad = 0, r;

	for (i = 0; i < 3000 && !bad; i++) {
		memset(&t, 0, sizeof(t));
		t.nf = 1 + rng() % 8;
		n = 0;
		for (j = 0; j < t.nf; j++) {
			for (k = rng() % 5; k > 0; k--)
				strcat(t.field[j], atoms[rng() % 10]);
			if (j > 0)
				enc[n++] = ';';
			enc[n++] = '"';
			for (k = 0; t.field[j][k] != '\0'; k++) {
				if (t.field[j][k] == '"')
					enc[n++] = '"';
				enc[n++] = t.field[j][k];
			}
			enc[n++] = '"';
		}
		if (rng() % 2)
			enc[n++] = '\n';
		r = deid_csv_parse(enc, n, "rt", &o, rt_check, &t, NULL, &e);
		bad = r != DEID_OK || !t.ok;
	}
	tap_ok(!bad, "3000 random quoted records round-trip");
}

/* Random bytes and every prefix of a tricky file: never crash, only OK
 * or EINPUT, and an error always says where (or that it is empty). */
static void
test_garbage(void)
{
	static const char tricky[] = "\xef\xbb\xbf" "a;\"b\"\"c\"\r\n"
	    "\"x\ny\";\xe2\x82\xac\n;\n\"\"\n";
	static const char alphabet[] = "ab;,\"\r\n\0\xc3\xa9\xed\xa0\xf4\x90";
	struct coll c = { .stop_after = 0 };
	struct deid_error e;
	char d[64];
	size_t i, j, n;
	int bad = 0, r;

	for (i = 0; i <= sizeof(tricky) - 1; i++) {
		r = parse(tricky, i, 0, 0, &c, NULL, &e);
		if (r != DEID_OK && (r != DEID_EINPUT || (e.line == 0 &&
		    strcmp(e.msg, "empty file") != 0)))
			bad++;
	}
	tap_ok(!bad, "every prefix of a tricky file: OK or located error");
	for (i = 0, bad = 0; i < 20000; i++) {
		n = rng() % sizeof(d);
		for (j = 0; j < n; j++)
			d[j] = alphabet[rng() % (sizeof(alphabet) - 1)];
		r = parse(d, n, 0, rng() % 2 ? 0 : 4, &c, NULL, &e);
		if (r != DEID_OK && (r != DEID_EINPUT || (e.line == 0 &&
		    strcmp(e.msg, "empty file") != 0)))
			bad++;
	}
	tap_ok(!bad, "20000 random inputs: OK or located error (%d bad)",
	    bad);
}

/* ---- the span reader and the streamed file ---- */

/* What a parse saw: a digest of every record's line, fields and bytes. */
struct dig {
	uint64_t	 h;
	unsigned long	 records;
};

static void
dig_add(struct dig *d, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ULL;
}

static void
dig_field(struct dig *d, const char *p, size_t n)
{
	dig_add(d, &n, sizeof(n));
	dig_add(d, p, n);
}

static int
dig_fields(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct dig *d = ctx;
	size_t i;

	d->records++;
	dig_add(d, &line, sizeof(line));
	for (i = 0; i < nf; i++)
		dig_field(d, f[i], strlen(f[i]));
	return DEID_OK;
}

static int
dig_spans(void *ctx, const struct deid_csv_span *f, size_t nf,
    unsigned long line, struct deid_error *err)
{
	struct dig *d = ctx;
	size_t i;

	d->records++;
	dig_add(d, &line, sizeof(line));
	for (i = 0; i < nf; i++)
		dig_field(d, f[i].p, f[i].len);
	return DEID_OK;
}

/* Parse d[len] three ways — fields in memory, spans in memory, spans
 * streamed from a file — and expect one answer: the same digest, or the
 * same error at the same place. */
static int
three_ways(const char *dir, const char *d, size_t len, const char *what,
    struct deid_error *err)
{
	struct deid_csv_opts o = { ';', 4u << 20 };
	struct deid_error e[3];
	struct dig g[3];
	char path[PATH_MAX];
	int r[3], fd, i, same = 1;
	FILE *f;

	memset(g, 0, sizeof(g));
	memset(e, 0, sizeof(e));
	snprintf(path, sizeof(path), "%s/s.csv", dir);
	if ((f = fopen(path, "w")) == NULL || fwrite(d, 1, len, f) != len ||
	    fclose(f) != 0 || (fd = open(path, O_RDONLY)) < 0) {
		tap_ok(0, "%s: cannot write %s", what, path);
		return -1;
	}
	r[0] = deid_csv_parse(d, len, "t.csv", &o, dig_fields, &g[0], NULL,
	    &e[0]);
	r[1] = deid_csv_scan(d, len, "t.csv", &o, dig_spans, &g[1], NULL,
	    &e[1]);
	r[2] = deid_csv_scan_fd(fd, "t.csv", &o, dig_spans, &g[2], NULL,
	    &e[2]);
	close(fd);
	unlink(path);
	for (i = 1; i < 3; i++)
		same &= r[i] == r[0] && g[i].h == g[0].h &&
		    g[i].records == g[0].records && e[i].line == e[0].line &&
		    e[i].column == e[0].column &&
		    strcmp(e[i].msg, e[0].msg) == 0;
	if (!tap_ok(same, "%s: %lu records, status %d %lu:%lu %s", what,
	    g[0].records, r[0], e[0].line, e[0].column, e[0].msg))
		for (i = 0; i < 3; i++)
			tap_diag("way %d: status %d, %lu records, %lu:%lu %s", i,
			    r[i], g[i].records, e[i].line, e[i].column,
			    e[i].msg);
	*err = e[0];
	return r[0];
}

/* Rows "a;bb" up to n bytes, then "x"s to n: the lines written. */
static unsigned long
plain_rows(char *d, size_t n)
{
	unsigned long lines = 0;
	size_t len = 0;

	for (; len + 5 <= n; len += 5, lines++)
		memcpy(d + len, "a;bb\n", 5);
	memset(d + len, 'x', n - len);
	return lines;
}

/* Random records up to n bytes: plain and quoted cells (separators,
 * quotes, LF and CRLF inside quotes), UTF-8, LF or CRLF line ends. */
static size_t
spans_table(char *d, size_t n)
{
	static const char *cell[] = { "a", "bb", "", "\"x;y\"", "\"q\"\"q\"",
	    "\"l1\nl2\"", "\"c\r\nd\"", "\xc3\xa9t\xc3\xa9", "\"\"",
	    "\xe2\x82\xac" };
	size_t len = 0, c, i, k;

	while (len + 64 < n) {
		for (i = 0, k = 1 + rng() % 5; i < k; i++) {
			c = rng() % (sizeof(cell) / sizeof(cell[0]));
			if (k == 1 && c == 2)
				c = 0;	/* an empty line would be blank */
			len += (size_t)sprintf(d + len, "%s%s", i ? ";" : "",
			    cell[c]);
		}
		len += (size_t)sprintf(d + len, "%s", rng() % 4 ? "\n" :
		    "\r\n");
	}
	return len;
}

static void
test_spans(void)
{
	char dir[] = "/tmp/test-csv.XXXXXX";
	size_t n = 3u << 20, len, at, chunk = DEID_CSV_CHUNK;
	char *d = malloc(n + 64);
	struct deid_error e;
	unsigned long line;
	int r;

	if (d == NULL || mkdtemp(dir) == NULL) {
		tap_ok(0, "test_spans: no memory or directory");
		free(d);
		return;
	}
	len = spans_table(d, n);
	r = three_ways(dir, d, len, "3 MiB of mixed records, streamed in "
	    "chunks", &e);
	tap_ok(r == DEID_OK, "... and they parse");
	three_ways(dir, d, 200, "a short file (one chunk, no line end)", &e);
	/* a quoted field of 1.5 MiB: the chunk buffer grows for it */
	memset(d + 100, 'z', 3u << 19);
	d[99] = '\n';
	d[100] = '"';
	d[100 + (3u << 19)] = '"';
	three_ways(dir, d, len, "a quoted field longer than a chunk", &e);
	/* the first chunk's last LF inside quotes: read again whole */
	plain_rows(d, n);
	at = chunk - 8 - (chunk - 8) % 5;
	d[at] = '"';
	memset(d + at + 1, 'x', chunk - 2 - at);
	memcpy(d + chunk - 1, "\nyy\"\n", 5);
	for (at = chunk + 4; at % 5 != 4; at++)
		d[at] = 'z';
	d[at] = '\n';
	r = three_ways(dir, d, n, "a quoted LF ends the first chunk", &e);
	tap_ok(r == DEID_OK, "... and the record is whole");
	/* a stray quote in the second chunk: the same line and column */
	line = plain_rows(d, n);
	at = 5 * (line / 2 + 2);
	memcpy(d + at, "ab\"c;d\n", 7);
	r = three_ways(dir, d, n, "an error in a later chunk is located", &e);
	tap_ok(r == DEID_EINPUT && e.line == line / 2 + 3 && e.column == 3 &&
	    strstr(e.msg, "quote") != NULL, "... at line %lu, column 3",
	    line / 2 + 3);
	/* a blank line as the last byte of the first chunk, after a row
	 * of x's */
	line = plain_rows(d, chunk - 4);
	plain_rows(d + chunk, n - chunk);
	memcpy(d + chunk - 4, "xx\n\n", 4);
	r = three_ways(dir, d, n, "a blank line at a chunk's end", &e);
	tap_ok(r == DEID_EINPUT && e.line == line + 2 &&
	    strcmp(e.msg, "blank line") == 0, "... is refused at line %lu",
	    line + 2);
	d[chunk - 1] = 'y';
	memcpy(d + n - 3, "xx\n\n", 4);	/* a row, then the blank line */
	r = three_ways(dir, d, n + 1, "one blank line at the very end", &e);
	tap_ok(r == DEID_OK, "... is allowed");
	rmdir(dir);
	free(d);
}

static void
test_file_read(void)
{
	struct deid_error e;
	char dir[] = "/tmp/test-csv.XXXXXX", path[PATH_MAX];
	char *d = NULL;
	size_t len = 1;
	FILE *f;
	int r;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/f.csv", dir);
	if ((f = fopen(path, "w")) != NULL) {
		fputs("a;b\r\n1;2", f);
		fclose(f);
	}
	r = deid_file_read(path, &d, &len, &e);
	tap_ok(r == DEID_OK && len == 8 && d != NULL && memcmp(d,
	    "a;b\r\n1;2", 9) == 0, "file read whole, NUL-terminated");
	free(d);
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	r = deid_file_read(path, &d, &len, &e);
	tap_ok(r == DEID_OK && len == 0 && d != NULL && d[0] == '\0',
	    "empty file reads as \"\"");
	free(d);
	r = deid_file_read(dir, &d, &len, &e);
	tap_ok(r == DEID_EIO && d == NULL && strcmp(e.file, dir) == 0 &&
	    strcmp(e.msg, strerror(EISDIR)) == 0, "directory refused: %s: %s",
	    e.file, e.msg);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (mkfifo(path, 0600) == 0) {
		r = deid_file_read(path, &d, &len, &e);
		tap_ok(r == DEID_EIO && strstr(e.msg, "not a regular file") !=
		    NULL && strcmp(e.file, path) == 0,
		    "FIFO refused without blocking: %s", e.msg);
		unlink(path);
	} else
		tap_ok(0, "mkfifo: %s", strerror(errno));
	r = deid_file_read("/dev/null", &d, &len, &e);
	tap_ok(r == DEID_EIO && strstr(e.msg, "not a regular file") != NULL,
	    "/dev/null refused");
	snprintf(path, sizeof(path), "%s/missing", dir);
	r = deid_file_read(path, &d, &len, &e);
	tap_ok(r == DEID_EIO && strcmp(e.file, path) == 0 &&
	    strcmp(e.msg, strerror(ENOENT)) == 0, "missing file names path "
	    "and strerror: %s: %s", e.file, e.msg);
	snprintf(path, sizeof(path), "%s/f.csv", dir);
	unlink(path);
	rmdir(dir);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
count_only(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct coll *c = ctx;

	if (c->records == 0 || nf < c->minf)
		c->minf = nf;
	if (nf > c->maxf)
		c->maxf = nf;
	c->records++;
	return DEID_OK;
}

/* A real dataset: header + records, every row the same width. */
static void
real_dataset(const char *dir, const char *rel, unsigned long records,
    size_t cols)
{
	struct coll c;
	struct deid_error e;
	char path[PATH_MAX], sep = 0, *d = NULL;
	size_t len;
	double t0, best = 1e9;
	int r, i;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((r = deid_file_read(path, &d, &len, &e)) != DEID_OK) {
		tap_ok(0, "%s: read: %s", rel, e.msg);
		return;
	}
	for (i = 0; i < 3; i++) {
		memset(&c, 0, sizeof(c));
		t0 = now_ms();
		r = deid_csv_parse(d, len, path, NULL, count_only, &c, &sep,
		    &e);
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
	}
	if (!tap_ok(r == DEID_OK && c.records == records + 1 && sep == ';' &&
	    c.minf == cols && c.maxf == cols, "%s: %lu records + header, %zu "
	    "columns, ';'", rel, records, cols))
		tap_diag("status %d (%s:%lu: %s), %lu records, %zu..%zu cols",
		    r, e.file, e.line, e.msg, c.records, c.minf, c.maxf);
	tap_diag("%s: %zu bytes parsed in %.1f ms (best of 3)", rel, len,
	    best);
	free(d);
}

static void
test_real(void)
{
	const char *dir = tests_shared_data();

	if (dir == NULL) {
		/* Visible, never a silent pass: one skipped check per file. */
		printf("ok %d # SKIP real datasets: ../shared/data not found "
		    "(set CDSGATE_SHARED)\n", ++tap_n);
		return;
	}
	real_dataset(dir, "adult/adult.csv", 30162, 9);
	real_dataset(dir, "cup/cup.csv", 63441, 8);
	real_dataset(dir, "fars/fars_subset.csv", 10093, 8);
	real_dataset(dir, "fars/int-recoded/fars_int.csv", 100937, 8);
}

int
main(void)
{
	test_basic();
	test_quotes();
	test_separator();
	test_lines();
	test_nul();
	test_utf8();
	test_bounds();
	test_roundtrip();
	test_garbage();
	test_spans();
	test_file_read();
	test_real();
	return tap_done();
}
