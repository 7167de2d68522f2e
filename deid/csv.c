/*
 * deid/csv.c — streaming CSV reader (RFC 4180) for datasets and ARX
 * hierarchies, and the whole-file reader that feeds it.
 *
 * Trust level: parses untrusted bytes (runs in the deid worker).  All
 * input is read through struct buf getters, never by pointer arithmetic;
 * every field is bounded (max_field), every record is bounded
 * (DEID_CSV_MAX_COLUMNS), and each record's fields live in one arena
 * (struct wbuf) allocated once per parse and reused for every record —
 * or, for a span reader (deid_csv_scan), only its quoted fields do and
 * the others stay where they are in the input (a line with no quote,
 * CR, NUL or UTF-8 in it is cut at its separators in one go).  A file
 * can be streamed
 * (deid_csv_scan_fd): chunks end after a line end, and a record that
 * runs past one (a quoted line end) is parsed again with the next.
 * Never logs: errors go to the caller's struct deid_error as
 * file:line:column, where column is the 1-based byte offset in the line.
 *
 * Decisions a reader should know:
 * - A lone CR (not followed by LF) outside quotes is an error, not a
 *   line end.  Classic-Mac files are extinct, and accepting a bare CR
 *   would let a stray byte split a record silently.  Inside quotes CR is
 *   data, like LF.
 * - A blank line is one empty *unquoted* field.  One blank line at the
 *   very end of the input is ignored; anywhere else it is an error.  A
 *   line holding just "" is a record with one empty field.
 * - The separator is given or detected from the first record: the more
 *   frequent of ';' and ',' outside quotes; on a tie ';' if present,
 *   else ',' (a one-column file).
 * - Row lengths are not checked here; callers get the line of each
 *   record and decide.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "deid/csv.h"

enum csv_end { CSV_END_SEP, CSV_END_EOL, CSV_END_EOF };

/* Internal status: the record runs past the end of a chunk that is not
 * the input's last; it is read again with the next chunk. */
#define CSV_MORE	(-1)

struct csv {
	struct buf	 in;
	const char	*name;
	uint8_t		 sep;
	size_t		 max_field;
	unsigned long	 line;		/* physical line of the next byte */
	size_t		 line_start;	/* input offset where that line began */
	size_t		 fstart;	/* arena offset of the current field */
	unsigned long	 fline, fcol;	/* where the current field began */
	int		 first_quoted;	/* field 0 of the record was quoted */
	int		 spans;		/* unquoted fields stay in the input */
	int		 inplace;	/* the current field does (all, after
					 * csv_fast_record) */
	int		 more;		/* the input goes on past this chunk */
	int		 avx2;		/* lines cut with buf_cut_line_avx2 */
	size_t		 fin, fend;	/* its input offsets (inplace) */
	unsigned long	 nrecords;
	struct wbuf	 arena;		/* this record's fields, NUL-separated */
	size_t		 nfields;
	size_t		 off[DEID_CSV_MAX_COLUMNS];	/* arena offsets */
	const char	*fields[DEID_CSV_MAX_COLUMNS];
	struct deid_csv_span span[DEID_CSV_MAX_COLUMNS];
	uint8_t		 stop_plain[256];	/* bytes ending a plain run */
	uint8_t		 stop_quoted[256];
	struct deid_error *err;
};

/* 1-based byte column of the next unread byte. */
static unsigned long
csv_col(const struct csv *p)
{
	return (unsigned long)(p->in.off - p->line_start) + 1;
}

/* Input error at the byte at input offset off (on the current line). */
static int
csv_fail_at(struct csv *p, size_t off, const char *what)
{
	return deid_error_set(p->err, DEID_EINPUT, p->name, p->line,
	    (unsigned long)(off - p->line_start) + 1, "%s", what);
}

/* Input error at the next unread byte (so callers peek, then fail). */
static int
csv_fail(struct csv *p, const char *what)
{
	return csv_fail_at(p, p->in.off, what);
}

/* Account for a consumed LF. */
static void
csv_newline(struct csv *p)
{
	p->line++;
	p->line_start = p->in.off;
}

/* The one place a field grows: enforce max_field before copying. */
static int
csv_room(struct csv *p, size_t n)
{
	size_t have = p->inplace ? p->in.off - p->fin :
	    p->arena.len - p->fstart;

	if (n > p->max_field - have)
		return deid_error_set(p->err, DEID_EINPUT, p->name, p->fline,
		    p->fcol, "field longer than %zu bytes", p->max_field);
	return DEID_OK;
}

/* Arena writes cannot pass its max (sized from the input) unless we
 * have a bug, or fail short of memory. */
static int
csv_wstatus(struct csv *p, int r)
{
	if (r == BUF_OK)
		return DEID_OK;
	if (r == BUF_ENOMEM)
		return deid_error_set(p->err, DEID_ENOMEM, p->name, p->line,
		    0, "out of memory");
	return deid_error_set(p->err, DEID_EINTERNAL, p->name, p->line, 0,
	    "CSV record arena overflow");
}

/* The next n input bytes into the field: copied, or passed over when
 * the field stays in the input. */
static int
csv_take(struct csv *p, size_t n)
{
	int r;

	if ((r = csv_room(p, n)) != DEID_OK)
		return r;
	if (p->inplace)
		return csv_wstatus(p, buf_skip(&p->in, n));
	return csv_wstatus(p, wbuf_put_buf(&p->arena, &p->in, n));
}

/* Append one byte we produced ourselves (an unescaped quote). */
static int
csv_put(struct csv *p, uint8_t c)
{
	int r;

	if ((r = csv_room(p, 1)) != DEID_OK)
		return r;
	return csv_wstatus(p, wbuf_put_u8(&p->arena, c));
}

/* Why a lead byte can never start a valid sequence (NULL if it can). */
static const char *
utf8_bad_lead(uint8_t c)
{
	if (c < 0xc0)
		return "invalid UTF-8: unexpected continuation byte";
	if (c < 0xc2)
		return "invalid UTF-8: overlong encoding";
	if (c > 0xf4)
		return "invalid UTF-8: byte never valid in UTF-8";
	return NULL;
}

/*
 * Strict UTF-8 (RFC 3629): validate and take one multi-byte sequence
 * whose lead byte is next.  The second byte's range rules out overlongs
 * (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).  Looks
 * ahead on a copy of the cursor; errors point at the first byte that
 * makes the sequence invalid.
 */
static int
csv_utf8(struct csv *p)
{
	struct buf t = p->in;
	uint8_t c, lead = 0, lo = 0x80, hi = 0xbf;
	const char *why;
	size_t i, n;

	(void)buf_get_u8(&t, &lead);
	if ((why = utf8_bad_lead(lead)) != NULL)
		return csv_fail(p, why);
	n = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
	why = "invalid UTF-8: overlong encoding";
	if (lead == 0xe0)
		lo = 0xa0;
	else if (lead == 0xf0)
		lo = 0x90;
	else if (lead == 0xed) {
		hi = 0x9f;
		why = "invalid UTF-8: surrogate code point";
	} else if (lead == 0xf4) {
		hi = 0x8f;
		why = "invalid UTF-8: code point above U+10FFFF";
	}
	for (i = 1; i < n; i++) {
		if (buf_peek_u8(&t, &c) != BUF_OK || c < 0x80 || c > 0xbf)
			return csv_fail_at(p, t.off,
			    "invalid UTF-8: truncated sequence");
		if (i == 1 && (c < lo || c > hi))
			return csv_fail_at(p, t.off, why);
		(void)buf_skip(&t, 1);
	}
	return csv_take(p, n);
}

/* A CR is next, outside quotes: only CRLF is a line end. */
static int
csv_crlf(struct csv *p, enum csv_end *end)
{
	struct buf t = p->in;
	uint8_t c;

	(void)buf_skip(&t, 1);
	if (buf_peek_u8(&t, &c) != BUF_OK || c != '\n')
		return csv_fail(p, "CR not followed by LF");
	(void)buf_skip(&p->in, 2);
	csv_newline(p);
	*end = CSV_END_EOL;
	return DEID_OK;
}

/* Consume the byte that ends a field (sep, CRLF, LF) or note EOF. */
static int
csv_field_end(struct csv *p, enum csv_end *end, const char *other)
{
	uint8_t c;

	if (buf_peek_u8(&p->in, &c) != BUF_OK) {
		*end = CSV_END_EOF;
		return DEID_OK;
	}
	if (c != p->sep && c != '\n' && c != '\r')
		return csv_fail(p, other);
	if (c == '\r')
		return csv_crlf(p, end);
	(void)buf_skip(&p->in, 1);
	if (c == '\n')
		csv_newline(p);
	*end = c == '\n' ? CSV_END_EOL : CSV_END_SEP;
	return DEID_OK;
}

/* An unquoted field: copy plain runs, stop at the first special byte. */
static int
csv_plain(struct csv *p, enum csv_end *end)
{
	uint8_t c;
	int r;

	for (;;) {
		r = csv_take(p, buf_span(&p->in, p->stop_plain, SIZE_MAX));
		if (r != DEID_OK)
			return r;
		p->fend = p->in.off;
		if (buf_peek_u8(&p->in, &c) != BUF_OK || c == p->sep ||
		    c == '\n' || c == '\r')
			return csv_field_end(p, end, "unexpected byte");
		if (c == '"')
			return csv_fail(p, "quote inside an unquoted field");
		if (c == '\0')
			return csv_fail(p, "NUL byte");
		if ((r = csv_utf8(p)) != DEID_OK)
			return r;
	}
}

/* A quoted field: separators, CR and LF are data; "" is one quote. */
static int
csv_quoted(struct csv *p, enum csv_end *end)
{
	unsigned long qline = p->line, qcol = csv_col(p);
	uint8_t c;
	int r;

	(void)buf_skip(&p->in, 1);	/* the opening quote */
	for (;;) {
		r = csv_take(p, buf_span(&p->in, p->stop_quoted, SIZE_MAX));
		if (r != DEID_OK)
			return r;
		if (buf_peek_u8(&p->in, &c) != BUF_OK && p->more)
			return CSV_MORE;
		if (buf_peek_u8(&p->in, &c) != BUF_OK)
			return deid_error_set(p->err, DEID_EINPUT, p->name,
			    qline, qcol, "unterminated quoted field");
		if (c == '\0')
			return csv_fail(p, "NUL byte");
		if (c >= 0x80) {
			if ((r = csv_utf8(p)) != DEID_OK)
				return r;
			continue;
		}
		(void)buf_skip(&p->in, 1);
		if (c == '\n') {
			csv_newline(p);
			r = csv_put(p, '\n');
		} else if (buf_peek_u8(&p->in, &c) == BUF_OK && c == '"') {
			(void)buf_skip(&p->in, 1);
			r = csv_put(p, '"');
		} else
			return csv_field_end(p, end,
			    "text after closing quote");
		if (r != DEID_OK)
			return r;
	}
}

/* One field of the record: its span in the input (p->spans and not
 * quoted), or its bytes copied into the arena and NUL-terminated. */
static int
csv_field(struct csv *p, enum csv_end *end)
{
	struct deid_csv_span *s = &p->span[p->nfields];
	uint8_t c;
	int r, quoted = buf_peek_u8(&p->in, &c) == BUF_OK && c == '"';

	p->off[p->nfields] = p->fstart = p->arena.len;
	p->fline = p->line;
	p->fcol = csv_col(p);
	p->inplace = p->spans && !quoted;
	p->fin = p->fend = p->in.off;
	s->p = (const char *)buf_ptr(&p->in);	/* the input's, or NULL */
	p->first_quoted |= quoted && p->nfields == 0;
	if ((r = quoted ? csv_quoted(p, end) : csv_plain(p, end)) != DEID_OK)
		return r;
	if (p->inplace) {
		s->len = p->fend - p->fin;
		return DEID_OK;
	}
	s->p = NULL;	/* the arena's, once the record is complete */
	s->len = p->arena.len - p->fstart;
	return csv_wstatus(p, wbuf_put_u8(&p->arena, 0));
}

/* The common field of a span reader, at little cost: plain bytes up to
 * a separator or an LF.  0 for anything else (a quote, UTF-8, CR, the
 * end of the input, a field too long), left to csv_field as it is. */
static int
csv_fast_field(struct csv *p, enum csv_end *end)
{
	size_t n = buf_span(&p->in, p->stop_plain, p->max_field);
	struct buf t = p->in;
	uint8_t c;

	if (buf_skip(&t, n) != BUF_OK || buf_peek_u8(&t, &c) != BUF_OK ||
	    (c != p->sep && c != '\n'))
		return 0;
	p->span[p->nfields].p = (const char *)buf_ptr(&p->in);
	p->span[p->nfields].len = n;
	(void)buf_skip(&p->in, n + 1);
	if (c == '\n')
		csv_newline(p);
	*end = c == '\n' ? CSV_END_EOL : CSV_END_SEP;
	return 1;
}

/* Is every field of a line cut at off[0..ncut] (off[ncut]: its LF) at
 * most max bytes long?  Only a line longer than max can hold one that
 * is not. */
static int
csv_cuts_fit(const size_t *off, size_t ncut, size_t max)
{
	size_t i, s = 0;

	if (off[ncut] <= max)
		return 1;
	for (i = 0; i <= ncut; s = off[i++] + 1)
		if (off[i] - s > max)
			return 0;
	return 1;
}

#ifdef BUF_AVX2
static __attribute__((target("avx2"), noinline)) size_t
csv_cut_avx2(const struct csv *p, size_t *off, size_t *ncut)
{
	return buf_cut_line_avx2(&p->in, p->sep, '"', '\r', off,
	    DEID_CSV_MAX_COLUMNS - 1, ncut);
}
#endif

/* The line at the cursor cut at its separators (buf_cut_line), with
 * AVX2 where the CPU has it. */
static size_t
csv_cut_line(struct csv *p, size_t *ncut)
{
#ifdef BUF_AVX2
	if (p->avx2)
		return csv_cut_avx2(p, p->off, ncut);
#endif
	return buf_cut_line(&p->in, p->sep, '"', '\r', p->off,
	    DEID_CSV_MAX_COLUMNS - 1, ncut);
}

/* The common record of a span reader, at little cost: a line ending in
 * LF with no quote, CR, NUL or UTF-8 in it, cut at the separators in
 * one pass.  0 for anything else (nothing consumed), left to the
 * byte-wise reader (a field too long: it says why). */
static int
csv_fast_record(struct csv *p)
{
	size_t ncut, i, e, s = 0, len = csv_cut_line(p, &ncut);
	const char *d = (const char *)buf_ptr(&p->in);

	if (len == SIZE_MAX)
		return 0;
	p->off[ncut] = len;
	if (!csv_cuts_fit(p->off, ncut, p->max_field))
		return 0;
	for (i = 0; i <= ncut; i++, s = e + 1) {
		e = p->off[i];
		p->span[i] = (struct deid_csv_span){ d + s, e - s };
	}
	p->nfields = ncut + 1;
	p->inplace = 1;
	(void)buf_skip(&p->in, len + 1);
	csv_newline(p);
	return 1;
}

/* Read one record; *blank if it was an empty line. */
static int
csv_record(struct csv *p, int *blank)
{
	enum csv_end end = CSV_END_SEP;
	int r;

	wbuf_reset(&p->arena);
	p->first_quoted = 0;
	if (p->spans && csv_fast_record(p)) {
		*blank = p->nfields == 1 && p->span[0].len == 0;
		return DEID_OK;
	}
	for (p->nfields = 0; end == CSV_END_SEP; p->nfields++) {
		if (p->nfields == DEID_CSV_MAX_COLUMNS)
			return deid_error_set(p->err, DEID_EINPUT, p->name,
			    p->line, csv_col(p), "more than %d columns",
			    DEID_CSV_MAX_COLUMNS);
		if (p->spans && csv_fast_field(p, &end))
			continue;
		if ((r = csv_field(p, &end)) != DEID_OK)
			return r;
	}
	p->inplace = 0;
	*blank = p->nfields == 1 && p->span[0].len == 0 && !p->first_quoted;
	return DEID_OK;
}

/* Fields point into the arena only once the record is complete (the
 * arena may move while it grows). */
static void
csv_fields(struct csv *p)
{
	size_t i;

	for (i = 0; i < p->nfields && !p->inplace; i++)
		if (!p->spans)
			p->fields[i] = (const char *)p->arena.d + p->off[i];
		else if (p->span[i].p == NULL)
			p->span[i].p = (const char *)p->arena.d + p->off[i];
}

/* The record to whichever callback the caller gave. */
struct csv_cb {
	deid_csv_record_cb	 fields;
	deid_csv_span_cb	 spans;
	void			*ctx;
};

/* Drive records to the callback until the input (or the chunk: then
 * CSV_MORE, the cursor at the unfinished record) ends. */
static int
csv_run(struct csv *p, const struct csv_cb *cb)
{
	struct buf start;
	size_t line_start;
	unsigned long line;
	int blank, r;

	while (!buf_eof(&p->in)) {
		start = p->in;
		line = p->line;
		line_start = p->line_start;
		r = csv_record(p, &blank);
		if (r == CSV_MORE || (r == DEID_OK && blank && p->more &&
		    buf_eof(&p->in))) {
			p->in = start;
			p->line = line;
			p->line_start = line_start;
			return CSV_MORE;
		}
		if (r != DEID_OK)
			return r;
		if (blank && buf_eof(&p->in))
			break;
		if (blank)
			return deid_error_set(p->err, DEID_EINPUT, p->name,
			    line, 1, "blank line");
		csv_fields(p);
		r = p->spans ? cb->spans(cb->ctx, p->span, p->nfields, line,
		    p->err) : cb->fields(cb->ctx, p->fields, p->nfields, line,
		    p->err);
		if (r != DEID_OK)
			return r;
		p->nrecords++;
	}
	return DEID_OK;
}

/* Skip a UTF-8 byte order mark; it is not part of the first field. */
static void
csv_skip_bom(struct buf *b)
{
	uint8_t bom[3];
	struct buf t = *b;

	if (buf_get_bytes(&t, bom, 3) == BUF_OK && bom[0] == 0xef &&
	    bom[1] == 0xbb && bom[2] == 0xbf)
		*b = t;
}

/* The evidence for separator detection: count outside quotes on the
 * first record only, so quoted commas in a header do not vote. */
void
deid_csv_sep_counts(const void *data, size_t len, size_t *semicolons,
    size_t *commas)
{
	struct buf b;
	uint8_t c;
	int inq = 0;

	*semicolons = *commas = 0;
	buf_init(&b, data, data == NULL ? 0 : len);
	csv_skip_bom(&b);
	while (buf_get_u8(&b, &c) == BUF_OK) {
		if (c == '"')
			inq = !inq;
		else if (inq)
			continue;
		else if (c == '\n' || c == '\r')
			break;
		else if (c == ';')
			(*semicolons)++;
		else if (c == ',')
			(*commas)++;
	}
}

char
deid_csv_detect(const void *data, size_t len)
{
	size_t s, c;

	deid_csv_sep_counts(data, len, &s, &c);
	if (s > c || (s == c && s > 0))
		return ';';
	return ',';
}

/* Refuse separators that would make the grammar ambiguous. */
static int
csv_sep_ok(char sep)
{
	uint8_t c = (uint8_t)sep;

	return c != '"' && c != '\r' && c != '\n' && c != '\0' && c < 0x80;
}

/* The input is now data[len], from the start of a record (a file's
 * next chunk); the arena is bounded by it: field bytes never exceed the
 * input, one NUL per column more. */
static int
csv_chunk(struct csv *p, const void *data, size_t len)
{
	if (len > SIZE_MAX - DEID_CSV_MAX_COLUMNS - 1)
		return deid_error_set(p->err, DEID_ELIMIT, p->name, 0, 0,
		    "input too large");
	buf_init(&p->in, data, len);
	p->arena.max = len + DEID_CSV_MAX_COLUMNS + 1;
	return DEID_OK;
}

/* Set up the cursor on the first chunk, separator, stop tables. */
static int
csv_init(struct csv *p, const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, struct deid_error *err)
{
	char sep = opts != NULL ? opts->separator : 0;
	int c, r;

	p->err = err;
	p->name = name;
	p->line = 1;
	if ((r = csv_chunk(p, data, len)) != DEID_OK)
		return r;
	csv_skip_bom(&p->in);
	p->line_start = p->in.off;
	if (sep == 0)
		sep = deid_csv_detect(data, len);
	if (!csv_sep_ok(sep))
		return deid_error_set(err, DEID_EINPUT, name, 0, 0,
		    "invalid separator 0x%02x", (unsigned)(uint8_t)sep);
	p->sep = (uint8_t)sep;
	p->max_field = opts != NULL && opts->max_field != 0 ?
	    opts->max_field : DEID_CSV_MAX_FIELD_DEFAULT;
	for (c = 0; c < 256; c++) {
		p->stop_quoted[c] = c == '"' || c == '\n' || c == '\0' ||
		    c >= 0x80;
		p->stop_plain[c] = p->stop_quoted[c] || c == '\r' ||
		    c == p->sep;
	}
	return DEID_OK;
}

/* A parser for the callback given (spans or NUL-terminated fields). */
static int
csv_alloc(const struct csv_cb *cb, const char *name, struct csv **pp,
    struct deid_error *err)
{
	if ((*pp = calloc(1, sizeof(**pp))) == NULL)
		return deid_error_set(err, DEID_ENOMEM, name, 0, 0,
		    "out of memory");
	wbuf_init(&(*pp)->arena, 0);
	(*pp)->spans = cb->spans != NULL;
#ifdef BUF_AVX2
	(*pp)->avx2 = __builtin_cpu_supports("avx2");
#endif
	return DEID_OK;
}

/* The end of a parse: no record is an error; the arena is wiped
 * (records may be personal data). */
static int
csv_done(struct csv *p, int r, const char *name, struct deid_error *err)
{
	if (r == DEID_OK && p->nrecords == 0)
		r = deid_error_set(err, DEID_EINPUT, name, 0, 0, "empty file");
	wbuf_free(&p->arena);
	free(p);
	return r;
}

/* Parse len bytes in memory. */
static int
csv_memory(const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, const struct csv_cb *cb,
    char *sep_out, struct deid_error *err)
{
	struct csv *p = NULL;
	int r;

	if (data == NULL && len != 0)
		return deid_error_set(err, DEID_EINTERNAL, name, 0, 0,
		    "NULL input");
	if ((r = csv_alloc(cb, name, &p, err)) != DEID_OK)
		return r;
	if ((r = csv_init(p, data, len, name, opts, err)) == DEID_OK) {
		if (sep_out != NULL)
			*sep_out = (char)p->sep;
		r = csv_run(p, cb);
	}
	return csv_done(p, r, name, err);
}

int
deid_csv_parse(const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, deid_csv_record_cb cb, void *ctx,
    char *sep_out, struct deid_error *err)
{
	struct csv_cb c = { .fields = cb, .ctx = ctx };

	return csv_memory(data, len, name, opts, &c, sep_out, err);
}

int
deid_csv_scan(const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, deid_csv_span_cb cb, void *ctx,
    char *sep_out, struct deid_error *err)
{
	struct csv_cb c = { .spans = cb, .ctx = ctx };

	return csv_memory(data, len, name, opts, &c, sep_out, err);
}

/* read(2) until n bytes or EOF, retrying on EINTR. */
static ssize_t
read_full(int fd, char *d, size_t n)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = read(fd, d + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Refuse anything but a regular file, so a path to a device or pipe
 * cannot hang or flood the reader. */
static int
check_regular(int fd, const char *name, struct stat *st,
    struct deid_error *err)
{
	const char *why = NULL;

	if (fstat(fd, st) != 0)
		why = strerror(errno);
	else if (S_ISDIR(st->st_mode))
		why = strerror(EISDIR);
	else if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	if (why != NULL)
		return deid_error_set(err, DEID_EIO, name, 0, 0, "%s", why);
	return DEID_OK;
}

/* A file read in chunks: the bytes not parsed yet, d[have] of cap. */
struct csv_file {
	int	 fd;
	char	*d;
	size_t	 have, cap;
	int	 eof;
};

/* Read until the buffer is full or the file ends; a full buffer with
 * no complete record in it first doubles. */
static int
csv_fill(struct csv_file *f, const char *name, struct deid_error *err)
{
	ssize_t got;
	char *d;

	if (f->have == f->cap) {
		if (f->cap > SIZE_MAX / 2 ||
		    (d = realloc(f->d, f->cap ? 2 * f->cap : DEID_CSV_CHUNK)) ==
		    NULL)
			return deid_error_set(err, DEID_ENOMEM, name, 0, 0,
			    "out of memory");
		f->d = d;
		f->cap = f->cap ? 2 * f->cap : DEID_CSV_CHUNK;
	}
	if ((got = read_full(f->fd, f->d + f->have, f->cap - f->have)) < 0)
		return deid_error_set(err, DEID_EIO, name, 0, 0, "%s",
		    strerror(errno));
	f->eof = (size_t)got < f->cap - f->have;
	f->have += (size_t)got;
	return DEID_OK;
}

/* The bytes up to the last line end (all at the end of the file): a
 * chunk ends where a record may, and one that does not (a quoted line
 * end) is read again with the next. */
static size_t
csv_cut(const struct csv_file *f)
{
	const char *nl;

	if (f->eof || f->have == 0)
		return f->have;
	nl = memrchr(f->d, '\n', f->have);
	return nl == NULL ? 0 : (size_t)(nl - f->d) + 1;
}

/* Parse every chunk of f with p; the file's unparsed rest moves to the
 * front of the buffer for the next read. */
static int
csv_file_run(struct csv *p, struct csv_file *f, const char *name,
    const struct deid_csv_opts *opts, const struct csv_cb *cb,
    char *sep_out, struct deid_error *err)
{
	size_t cut, done;
	int r;

	for (;;) {
		if ((r = csv_fill(f, name, err)) != DEID_OK)
			return r;
		if ((cut = csv_cut(f)) == 0 && !f->eof)
			continue;
		if (p->name == NULL && (r = csv_init(p, f->d, cut, name, opts,
		    err)) == DEID_OK && sep_out != NULL)
			*sep_out = (char)p->sep;
		else if (p->name != NULL)
			r = csv_chunk(p, f->d, cut);
		if (r != DEID_OK)
			return r;
		p->more = !f->eof;
		r = csv_run(p, cb);
		if ((r != DEID_OK && r != CSV_MORE) || f->eof)
			return r;
		done = p->in.off;
		memmove(f->d, f->d + done, f->have - done);
		f->have -= done;
		p->line_start -= done;
	}
}

int
deid_csv_scan_fd(int fd, const char *name, const struct deid_csv_opts *opts,
    deid_csv_span_cb cb, void *ctx, char *sep_out, struct deid_error *err)
{
	struct csv_cb c = { .spans = cb, .ctx = ctx };
	struct csv_file f = { .fd = fd };
	struct csv *p = NULL;
	struct stat st;
	int r;

	if ((r = check_regular(fd, name, &st, err)) != DEID_OK ||
	    (r = csv_alloc(&c, name, &p, err)) != DEID_OK)
		return r;
	r = csv_file_run(p, &f, name, opts, &c, sep_out, err);
	if (f.d != NULL) {
		explicit_bzero(f.d, f.cap);
		free(f.d);
	}
	return csv_done(p, r, name, err);
}

/* Open without blocking on FIFOs; only regular files are accepted. */
int
deid_file_open(const char *path, int *fdp, struct deid_error *err)
{
	struct stat st;
	int fd, r;

	*fdp = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return deid_error_set(err, DEID_EIO, path, 0, 0, "%s",
		    strerror(errno));
	if ((r = check_regular(fd, path, &st, err)) != DEID_OK) {
		close(fd);
		return r;
	}
	*fdp = fd;
	return DEID_OK;
}

/* Whole file in one buffer: the parsers work on memory, and a snapshot
 * of st_size bytes cannot change under them.  No open(): a sandboxed
 * reader gets its descriptors handed over. */
int
deid_fd_read(int fd, const char *name, char **datap, size_t *lenp,
    struct deid_error *err)
{
	struct stat st;
	char *d = NULL;
	ssize_t got;
	int r;

	*datap = NULL;
	*lenp = 0;
	if ((r = check_regular(fd, name, &st, err)) != DEID_OK)
		return r;
	if ((uintmax_t)st.st_size >= SIZE_MAX)
		return deid_error_set(err, DEID_ELIMIT, name, 0, 0,
		    "file too large");
	if ((d = malloc((size_t)st.st_size + 1)) == NULL)
		return deid_error_set(err, DEID_ENOMEM, name, 0, 0,
		    "out of memory");
	if ((got = read_full(fd, d, (size_t)st.st_size)) < 0) {
		r = deid_error_set(err, DEID_EIO, name, 0, 0, "%s",
		    strerror(errno));
		free(d);
		return r;
	}
	d[got] = '\0';
	*datap = d;
	*lenp = (size_t)got;
	return DEID_OK;
}

int
deid_file_read(const char *path, char **datap, size_t *lenp,
    struct deid_error *err)
{
	int fd, r;

	*datap = NULL;
	*lenp = 0;
	if ((r = deid_file_open(path, &fd, err)) != DEID_OK)
		return r;
	r = deid_fd_read(fd, path, datap, lenp, err);
	close(fd);
	return r;
}
