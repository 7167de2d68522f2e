/*
 * record/text.c — what was typed, rebuilt from the recorded key presses,
 * for the auditor's `replay --keys` and `--search`.
 *
 * Every keysym that types a character becomes UTF-8: Latin-1 (itself),
 * the Unicode keysyms 0x01000000 + U for every printable U (U+0020 to
 * U+10FFFF without the C0/C1 controls and surrogates), the legacy blocks
 * 0x100-0x20ac (Latin-2/3/4/9, Katakana, Arabic, Cyrillic, Greek,
 * Technical, Special, Publishing, APL, Hebrew, Thai, Korean, currency:
 * record/keysym-table.c, generated from X.Org's keysymdef.h by
 * record/keysym-gen.py) and the keypad's digits and operators.
 * BackSpace deletes one character, Return/KP_Enter a newline, Tab a tab.
 * A key that types nothing (function, cursor, modifier, dead and vendor
 * keys) adds nothing; any other keysym is one the rebuild cannot name,
 * and it enters the text as «keysym 0x...» (one character for BackSpace)
 * so that the auditor sees something was typed there.  Presses while
 * Control, Alt, Meta or Super is held are shortcuts, not text.  Only
 * delivered presses count: a filtered or rate-limited key never reached
 * the session.  For a terminal, record_text_shown() writes zero-width and
 * bidi characters by number.  Keysyms come from an untrusted file: any
 * value is fine.
 *
 * Library code.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"
#include "record/record-int.h"

#define XK_BackSpace	0xff08
#define XK_Tab		0xff09
#define XK_Return	0xff0d
#define XK_KP_Tab	0xff89
#define XK_KP_Enter	0xff8d

struct record_text {
	char		*s;
	uint64_t	*t;		/* time each byte's character was typed */
	unsigned char	*lead;		/* 1 where a character (or marker) starts */
	size_t		 len, cap;
	unsigned	 mods;		/* held shortcut modifiers, one bit each */
};

static const struct {
	uint32_t	 ks;
	const char	*name;
} names[] = {
	{ 0x20, "space" }, { 0xff08, "BackSpace" }, { 0xff09, "Tab" },
	{ 0xff0d, "Return" }, { 0xff1b, "Escape" }, { 0xffff, "Delete" },
	{ 0xff50, "Home" }, { 0xff51, "Left" }, { 0xff52, "Up" },
	{ 0xff53, "Right" }, { 0xff54, "Down" }, { 0xff55, "Page_Up" },
	{ 0xff56, "Page_Down" }, { 0xff57, "End" }, { 0xff63, "Insert" },
	{ 0xff8d, "KP_Enter" }, { 0xffe1, "Shift_L" }, { 0xffe2, "Shift_R" },
	{ 0xffe3, "Control_L" }, { 0xffe4, "Control_R" },
	{ 0xffe5, "Caps_Lock" }, { 0xffe7, "Meta_L" }, { 0xffe8, "Meta_R" },
	{ 0xffe9, "Alt_L" }, { 0xffea, "Alt_R" }, { 0xffeb, "Super_L" },
	{ 0xffec, "Super_R" }, { 0xfe03, "ISO_Level3_Shift" },
};

/* Control_L/R, Meta_L/R, Alt_L/R, Super_L/R: bit index, or -1. */
static int
shortcut_mod(uint32_t ks)
{
	if (ks == 0xffe3 || ks == 0xffe4)
		return (int)(ks - 0xffe3);
	if (ks >= 0xffe7 && ks <= 0xffec)
		return (int)(ks - 0xffe7 + 2);
	return -1;
}

/* A code point that types something: no C0/C1 control, no surrogate. */
static int
printable(uint32_t c)
{
	return c >= 0x20 && !(c >= 0x7f && c <= 0x9f) &&
	    !(c >= 0xd800 && c <= 0xdfff) && c <= 0x10ffff;
}

/* A legacy keysym's character from the generated table, else 0. */
static uint32_t
legacy_ucs(uint32_t ks)
{
	size_t lo = 0, hi = record_keysym_nlegacy, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (record_keysym_legacy[mid].ks == ks)
			return record_keysym_legacy[mid].ucs;
		if (record_keysym_legacy[mid].ks < ks)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Keysym to Unicode codepoint for the printable ones, else 0. */
static uint32_t
keysym_ucs(uint32_t ks)
{
	static const char kp[] = " *+,-./0123456789";

	if ((ks >= 0x20 && ks <= 0x7e) || (ks >= 0xa0 && ks <= 0xff))
		return ks;
	if (ks >= 0x01000000 && ks <= 0x0110ffff)
		return printable(ks & 0x00ffffff) ? ks & 0x00ffffff : 0;
	if (ks >= 0x100 && ks <= 0x20ac)
		return legacy_ucs(ks);
	if (ks == 0xff80)
		return ' ';
	if (ks >= 0xffaa && ks <= 0xffb9)
		return (uint32_t)kp[ks - 0xffaa + 1];
	if (ks == 0xffbd)
		return '=';
	return 0;
}

/* Keys that type no character: function, cursor, keypad, modifier, dead
 * and ISO keys (0xfd00-0xffff), vendor keys (0x1008xxxx), NoSymbol and
 * VoidSymbol.  The timeline shows them; the text has nothing to add. */
static int
types_nothing(uint32_t ks)
{
	return ks == 0 || ks == 0x00ffffff || (ks >= 0xfd00 && ks <= 0xffff) ||
	    (ks >= 0x10080000 && ks <= 0x1008ffff);
}

size_t
record_keysym_utf8(uint32_t keysym, char out[5])
{
	uint32_t c = keysym_ucs(keysym);
	size_t n;

	if (c == 0)
		n = 0;
	else if (c < 0x80) {
		out[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	out[n] = '\0';
	return n;
}

/* Zero-width and bidi controls: shown by number on a timeline, so a
 * forged recording cannot reorder what the auditor's terminal shows. */
static int
invisible(uint32_t c)
{
	return (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	    (c >= 0x2060 && c <= 0x206f) || c == 0xfeff || c == 0xad;
}

void
record_keysym_name(uint32_t keysym, char *out, size_t outlen)
{
	char u[5];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].ks == keysym) {
			snprintf(out, outlen, "%s", names[i].name);
			return;
		}
	if (keysym >= 0xffbe && keysym <= 0xffc9)
		snprintf(out, outlen, "F%u", (unsigned)(keysym - 0xffbe + 1));
	else if (invisible(keysym_ucs(keysym)))
		snprintf(out, outlen, "U+%04X", (unsigned)keysym_ucs(keysym));
	else if (record_keysym_utf8(keysym, u) > 0)
		snprintf(out, outlen, "%s", u);
	else
		snprintf(out, outlen, "0x%x", (unsigned)keysym);
}

struct record_text *
record_text_alloc(void)
{
	struct record_text *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->cap = 256;
	x->s = malloc(x->cap + 1);
	x->t = malloc(x->cap * sizeof(*x->t));
	x->lead = malloc(x->cap);
	if (x->s == NULL || x->t == NULL || x->lead == NULL) {
		record_text_free(x);
		return NULL;
	}
	x->s[0] = '\0';
	return x;
}

void
record_text_free(struct record_text *x)
{
	if (x == NULL)
		return;
	free(x->s);
	free(x->t);
	free(x->lead);
	free(x);
}

/* Grow to hold n more bytes; -1 when out of memory. */
static int
reserve(struct record_text *x, size_t n)
{
	char *s;
	uint64_t *tt;
	unsigned char *l;

	while (x->len + n > x->cap) {
		if ((s = realloc(x->s, x->cap * 2 + 1)) == NULL)
			return -1;
		x->s = s;
		if ((tt = realloc(x->t, x->cap * 2 * sizeof(*tt))) == NULL)
			return -1;
		x->t = tt;
		if ((l = realloc(x->lead, x->cap * 2)) == NULL)
			return -1;
		x->lead = l;
		x->cap *= 2;
	}
	return 0;
}

/* Append one character (n bytes) typed at t; -1 when out of memory. */
static int
append(struct record_text *x, const char *u, size_t n, uint64_t t)
{
	size_t i;

	if (reserve(x, n) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		x->s[x->len] = u[i];
		x->lead[x->len] = i == 0;
		x->t[x->len++] = t;
	}
	x->s[x->len] = '\0';
	return 0;
}

/* BackSpace: drop the last character or marker. */
static int
backspace(struct record_text *x)
{
	if (x->len == 0)
		return 0;
	while (x->len > 0 && !x->lead[x->len - 1])
		x->len--;
	if (x->len > 0)
		x->len--;
	x->s[x->len] = '\0';
	return 1;
}

int
record_text_feed(struct record_text *x, uint64_t t_us, uint32_t keysym,
    int down, int verdict)
{
	char u[5], mark[32];
	size_t n;
	int m = shortcut_mod(keysym);

	if (verdict != RECORD_DELIVERED)
		return 0;
	if (m >= 0) {
		x->mods = down ? x->mods | 1u << m : x->mods & ~(1u << m);
		return 0;
	}
	if (!down || x->mods != 0)
		return 0;
	if (keysym == XK_BackSpace)
		return backspace(x);
	if (keysym == XK_Return || keysym == XK_KP_Enter)
		n = (u[0] = '\n', 1);
	else if (keysym == XK_Tab || keysym == XK_KP_Tab)
		n = (u[0] = '\t', 1);
	else if ((n = record_keysym_utf8(keysym, u)) == 0) {
		if (types_nothing(keysym))
			return 0;
		n = (size_t)snprintf(mark, sizeof(mark),
		    "\xc2\xabkeysym 0x%x\xc2\xbb", (unsigned)keysym);
		return append(x, mark, n, t_us) == 0;
	}
	return append(x, u, n, t_us) == 0;
}

const char *
record_text_str(const struct record_text *x)
{
	return x->s;
}

/* The code point of the UTF-8 character at p (n bytes, as append()
 * wrote it: well-formed), or 0 for a marker or anything longer. */
static uint32_t
unit_ucs(const unsigned char *p, size_t n)
{
	if (n == 2 && (p[0] & 0xe0) == 0xc0)
		return (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
	if (n == 3 && (p[0] & 0xf0) == 0xe0)
		return (uint32_t)(p[0] & 0x0f) << 12 |
		    (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	return 0;
}

char *
record_text_shown(const struct record_text *x)
{
	char *out = malloc(x->len * 5 + 1), mark[16];	/* 2 bytes -> 10 */
	size_t i = 0, n, o = 0, m;
	uint32_t c;

	if (out == NULL)
		return NULL;
	while (i < x->len) {
		for (n = 1; i + n < x->len && !x->lead[i + n]; n++)
			;
		c = unit_ucs((const unsigned char *)x->s + i, n);
		if (c != 0 && invisible(c)) {
			m = (size_t)snprintf(mark, sizeof(mark),
			    "\xc2\xabU+%04X\xc2\xbb", (unsigned)c);
			memcpy(out + o, mark, m);
			o += m;
		} else {
			memcpy(out + o, x->s + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	return out;
}

int
record_text_ends_with(const struct record_text *x, const char *needle,
    uint64_t *t_first)
{
	size_t n = strlen(needle);

	if (n == 0 || n > x->len ||
	    memcmp(x->s + x->len - n, needle, n) != 0)
		return 0;
	if (t_first != NULL)
		*t_first = x->t[x->len - n];
	return 1;
}
