/*
 * tests/unit/test-text.c — record/text.c's rebuild of typed text, block by
 * block: Latin-1, every Unicode keysym 0x01000000 + U, the legacy blocks
 * (each keysym keysymdef.h gives a code point, parsed here in C, not by
 * the generator that made the table), the keypad, keys that type nothing
 * and keysyms the rebuild cannot name (shown as «keysym 0x...»).  Where
 * libxkbcommon is installed it is a second, independent oracle: for every
 * keysym below 0x10000 and every Unicode keysym, a character it names must
 * be the one the rebuild types.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record/record.h"
#include "tests/tap.h"

#define KEYSYMDEF	"/usr/include/X11/keysymdef.h"

/* Decode one UTF-8 character (the test's own decoder); 0 on error. */
static uint32_t
utf8_decode(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (n == 1 && u[0] < 0x80)
		return u[0];
	if (n == 2 && (u[0] & 0xe0) == 0xc0)
		return (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
	if (n == 3 && (u[0] & 0xf0) == 0xe0)
		return (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 |
		    (u[2] & 0x3f);
	if (n == 4 && (u[0] & 0xf8) == 0xf0)
		return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
		    (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
	return 0;
}

/* The code point the rebuild types for ks, or 0. */
static uint32_t
typed(uint32_t ks)
{
	char u[5];
	size_t n = record_keysym_utf8(ks, u);

	return n == 0 ? 0 : utf8_decode(u, n);
}

/* The text typed by pressing and releasing each keysym of ks[]. */
static const char *
type_all(struct record_text *x, const uint32_t *ks, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		record_text_feed(x, 2 * i, ks[i], 1, RECORD_DELIVERED);
		record_text_feed(x, 2 * i + 1, ks[i], 0, RECORD_DELIVERED);
	}
	return record_text_str(x);
}

/* Is c typed by Unicode keysyms (no control, no surrogate)? */
static int
printable(uint32_t c)
{
	return c >= 0x20 && !(c >= 0x7f && c <= 0x9f) &&
	    !(c >= 0xd800 && c <= 0xdfff);
}

static void
test_unicode(void)
{
	uint32_t u, bad = 0, first_bad = 0;

	for (u = 0; u <= 0x10ffff; u++)
		if (typed(0x01000000 + u) != (printable(u) ? u : 0) &&
		    bad++ == 0)
			first_bad = u;
	tap_ok(bad == 0, "Unicode keysyms 0x01000000 + U: every printable U "
	    "typed as itself, controls and surrogates not (%u wrong, first "
	    "U+%04X)", bad, first_bad);
	for (u = 0x20, bad = 0; u <= 0xff; u++)
		if (typed(0x01000000 + u) != (printable(u) ? u : 0) ||
		    typed(u) != (printable(u) ? u : 0))
			bad++;
	tap_ok(bad == 0, "0x01000020-0x010000ff and Latin-1 0x20-0xff: the "
	    "same characters (%u wrong)", bad);
	tap_ok(typed(0x01110000) == 0 && typed(0x0100d800) == 0,
	    "beyond U+10FFFF and surrogates: no character");
}

/* Each block of keysymdef.h the header names a character in. */
static const struct {
	uint32_t	 hi;		/* keysym >> 8 */
	const char	*name;
} blocks[] = {
	{ 0x01, "Latin-2" }, { 0x02, "Latin-3" }, { 0x03, "Latin-4" },
	{ 0x04, "Katakana" }, { 0x05, "Arabic" }, { 0x06, "Cyrillic" },
	{ 0x07, "Greek" }, { 0x08, "Technical" }, { 0x09, "Special" },
	{ 0x0a, "Publishing" }, { 0x0b, "APL" }, { 0x0c, "Hebrew" },
	{ 0x0d, "Thai" }, { 0x0e, "Korean" }, { 0x13, "Latin-9" },
	{ 0x20, "currency" },
};
#define NBLOCKS	(sizeof(blocks) / sizeof(blocks[0]))

/* Every "#define XK_x 0xNNNN /+ U+XXXX" of keysymdef.h, checked. */
static void
test_keysymdef(void)
{
	char line[512], name[128];
	unsigned ks, ucs, n[NBLOCKS] = { 0 }, bad = 0, checked = 0, uni = 0;
	unsigned seen[0x2100 / 32] = { 0 };
	size_t b;
	FILE *f = fopen(KEYSYMDEF, "r");
	int all = 1;

	if (f == NULL) {
		tap_ok(1, "# SKIP " KEYSYMDEF " not installed (x11proto-dev)");
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "#define XK_%127s 0x%x /* U+%x", name, &ks,
		    &ucs) != 3 && sscanf(line, "#define XK_%127s 0x%x /*(U+%x",
		    name, &ks, &ucs) != 3)
			continue;
		if (ks < 0x2100) {
			if (seen[ks / 32] & 1u << (ks % 32))
				continue;	/* an alias: the first one counts */
			seen[ks / 32] |= 1u << (ks % 32);
		}
		checked++;
		if (typed(ks) != ucs) {
			if (bad++ < 5)
				tap_diag("XK_%s 0x%x: typed U+%04X, keysymdef.h "
				    "says U+%04X", name, ks, typed(ks), ucs);
		}
		if (ks >= 0x01000000)
			uni++;
		for (b = 0; b < NBLOCKS; b++)
			if (ks >> 8 == blocks[b].hi)
				n[b]++;
	}
	fclose(f);
	tap_ok(bad == 0 && checked > 1500, "keysymdef.h: all %u character "
	    "keysyms type the character its comment names (%u wrong; %u of "
	    "them in the 0x100xxxx form: Armenian, Georgian, ...)", checked,
	    bad, uni);
	for (b = 0; b < NBLOCKS; b++)
		all &= n[b] > 0;
	tap_ok(all, "every legacy block is covered");
	for (b = 0; b < NBLOCKS; b++)
		tap_diag("%-10s 0x%02x..: %u keysyms", blocks[b].name,
		    blocks[b].hi, n[b]);
}

/* Spot checks written out by hand (independent of any table). */
static void
test_blocks(void)
{
	static const struct {
		uint32_t	 ks;
		const char	*utf8;
		const char	*what;
	} spots[] = {
		{ 0x1a1, "\xc4\x84", "Latin-2 Aogonek" },
		{ 0x2a1, "\xc4\xa6", "Latin-3 Hstroke" },
		{ 0x3a2, "\xc4\xb8", "Latin-4 kra" },
		{ 0x4b1, "\xe3\x82\xa2", "Katakana kana_A" },
		{ 0x5c7, "\xd8\xa7", "Arabic alef" },
		{ 0x6c1, "\xd0\xb0", "Cyrillic_a" },
		{ 0x6ff, "\xd0\xaa", "Cyrillic_HARDSIGN" },
		{ 0x7e1, "\xce\xb1", "Greek_alpha" },
		{ 0x8a4, "\xe2\x8c\xa0", "Technical topintegral" },
		{ 0x9e0, "\xe2\x97\x86", "Special soliddiamond" },
		{ 0xaa1, "\xe2\x80\x83", "Publishing emspace" },
		{ 0xba3, "<", "APL leftcaret" },
		{ 0xcf9, "\xd7\xa9", "Hebrew shin" },
		{ 0xda1, "\xe0\xb8\x81", "Thai kokai" },
		{ 0xebf, "\xe3\x85\x8f", "Korean Hangul_A" },
		{ 0x13bd, "\xc5\x93", "Latin-9 oe" },
		{ 0x20ac, "\xe2\x82\xac", "EuroSign" },
		{ 0x20a3, "\xe2\x82\xa3", "legacy FFrancSign" },
		{ 0x1000587, "\xd6\x87", "Armenian_ligature_ew (0x100xxxx)" },
		{ 0x10010d0, "\xe1\x83\x90", "Georgian_an (0x100xxxx)" },
	};
	char u[5];
	size_t i;
	int ok;

	for (i = 0; i < sizeof(spots) / sizeof(spots[0]); i++) {
		ok = record_keysym_utf8(spots[i].ks, u) > 0 &&
		    strcmp(u, spots[i].utf8) == 0;
		tap_ok(ok, "0x%04x %s", spots[i].ks, spots[i].what);
	}
}

static void
test_text(void)
{
	static const uint32_t kp[] = { 0xffb1, 0xffaa, 0xffb2, 0xffab, 0xffad,
	    0xffae, 0xffaf, 0xffac, 0xffbd, 0xff80, 0xffb0, 0xffb9, 0xff89,
	    0xff8d };
	static const uint32_t cyr[] = { 0x6d3, 0x6c5, 0x6cc, 0x6c5, 0x6cb,
	    0x6d4, 0x1000020, 0x1000053, 0x1000045, 0x100004c };
	static const uint32_t none[] = { 0xffbe, 0xff51, 0xffe1, 0xfe50,
	    0x1008ff11, 0, 0xffffff, 'x' };
	static const uint32_t odd[] = { 'a', 0x1000007, 0x8b1, 'b', 0xff08,
	    0xff08, 0x110000, 0x100d800 };
	struct record_text *x;
	uint64_t t = 0;

	x = record_text_alloc();
	tap_ok(strcmp(type_all(x, kp, 14), "1*2+-./,= 09\t\n") == 0,
	    "keypad: digits, operators, space, tab, enter");
	record_text_free(x);
	x = record_text_alloc();
	tap_ok(strcmp(type_all(x, cyr, 10), "\xd1\x81\xd0\xb5\xd0\xbb\xd0\xb5"
	    "\xd0\xba\xd1\x82 SEL") == 0, "Cyrillic legacy keysyms then "
	    "Unicode ASCII: '%s'", record_text_str(x));
	tap_ok(record_text_ends_with(x, "\xd0\xba\xd1\x82 SEL", &t) && t == 8,
	    "search finds it across the two forms, from the press of its "
	    "first character");
	record_text_free(x);
	x = record_text_alloc();
	tap_ok(strcmp(type_all(x, none, 8), "x") == 0, "function, cursor, "
	    "modifier, dead and vendor keys, NoSymbol, VoidSymbol: no text");
	record_text_free(x);
	x = record_text_alloc();
	type_all(x, odd, 4);
	tap_ok(strcmp(record_text_str(x), "a\xc2\xabkeysym 0x1000007\xc2\xbb"
	    "\xc2\xabkeysym 0x8b1\xc2\xbb" "b") == 0, "keysyms without a "
	    "character are named in the text: '%s'", record_text_str(x));
	type_all(x, odd + 4, 2);
	tap_ok(strcmp(record_text_str(x), "a\xc2\xabkeysym 0x1000007\xc2\xbb")
	    == 0, "BackSpace deletes a marker whole: '%s'", record_text_str(x));
	type_all(x, odd + 6, 2);
	tap_ok(strstr(record_text_str(x), "keysym 0x110000\xc2\xbb") != NULL &&
	    strstr(record_text_str(x), "keysym 0x100d800\xc2\xbb") != NULL,
	    "out-of-range keysyms are named too");
	{
		static const uint32_t bidi[] = { 'a', 0x100202e, 'b', 0x10000ad,
		    0x1000430 };
		struct record_text *y = record_text_alloc();
		char *shown;

		type_all(y, bidi, 5);
		shown = record_text_shown(y);
		tap_ok(shown != NULL && strcmp(shown, "a\xc2\xabU+202E\xc2\xbb"
		    "b\xc2\xabU+00AD\xc2\xbb\xd0\xb0") == 0 &&
		    strcmp(record_text_str(y), "a\xe2\x80\xae" "b\xc2\xad"
		    "\xd0\xb0") == 0, "shown: bidi and zero-width characters "
		    "by number, the text itself unchanged: '%s'", shown);
		free(shown);
		record_text_free(y);
	}
	record_text_feed(x, 99, 0x6c1, 1, RECORD_FILTERED);
	tap_ok(!record_text_ends_with(x, "\xd0\xb0", NULL),
	    "a filtered press is not text");
	record_text_free(x);
}

/* Where xkbcommon and keysymdef.h disagree, known and kept: 0xabc/0xabe
 * are approximate in keysymdef.h (U+2329/U+232A), xkbcommon types the
 * newer U+27E8/U+27E9; keysymdef.h gives 0xdde no code point, xkbcommon
 * the unassigned U+0E3E (the rebuild names it «keysym 0xdde»). */
static int
xkb_known(uint32_t ks)
{
	return ks == 0xabc || ks == 0xabe || ks == 0xdde;
}

/* libxkbcommon's xkb_keysym_to_utf32 as an independent oracle. */
static void
test_xkbcommon(void)
{
	uint32_t (*to_utf32)(uint32_t);
	void *h = dlopen("libxkbcommon.so.0", RTLD_NOW);
	uint32_t ks, c, mine, missing = 0, differ = 0, extra = 0, n = 0;

	if (h == NULL ||
	    (*(void **)&to_utf32 = dlsym(h, "xkb_keysym_to_utf32")) == NULL) {
		tap_ok(1, "# SKIP libxkbcommon not installed (%s)", dlerror());
		if (h != NULL)
			dlclose(h);
		return;
	}
	for (ks = 0; ks < 0x01110000; ks = ks == 0xffff ? 0x01000000 : ks + 1) {
		c = to_utf32(ks);
		mine = typed(ks);
		if (printable(c) && xkb_known(ks))
			tap_diag("0x%x: xkbcommon U+%04X, rebuild U+%04X "
			    "(known)", ks, c, mine);
		else if (printable(c)) {
			n++;
			if (mine == 0 && missing++ < 5)
				tap_diag("0x%x: xkbcommon U+%04X, rebuild none",
				    ks, c);
			else if (mine != 0 && mine != c && differ++ < 5)
				tap_diag("0x%x: xkbcommon U+%04X, rebuild "
				    "U+%04X", ks, c, mine);
		} else if (mine != 0)
			extra++;
	}
	dlclose(h);
	tap_ok(missing == 0 && differ == 0 && n > 1000000, "xkbcommon: all %u "
	    "keysyms it types a character for type the same one (%u missing, "
	    "%u different; %u typed only by the rebuild: keysymdef.h's "
	    "approximate ones)", n, missing, differ, extra);
}

int
main(void)
{
	test_unicode();
	test_keysymdef();
	test_blocks();
	test_text();
	test_xkbcommon();
	return tap_done();
}
