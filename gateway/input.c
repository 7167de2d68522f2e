/*
 * gateway/input.c — XTest injection with correct shift levels.
 *
 * Runs in the unprivileged worker and only ever sees input that the
 * allow-list (kiosk.c) and the rate limiter (ratelimit.c) passed.  The
 * keymap is read once; keysyms it lacks are bound to a spare keycode
 * (one with no symbols at all) on demand, the way xdotool does, and the
 * spares are reset to empty at the end.  Every keycode pressed is
 * remembered with the keysym that pressed it so the release uses the
 * same keycode and input_release_all() leaves nothing held.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

#include "gateway/input.h"
#include "gateway/kiosk.h"

#define INPUT_MAX_SPARE		64
/* After rebinding a spare keycode, the pause before pressing it: the
 * browser applies a MappingNotify asynchronously, and a press that
 * overtakes it types the keycode's previous character — which the
 * recording's text would not show.  Measured (192 Latin-1 characters
 * as Unicode keysyms at 8/s, 4 spares): no pause 10 wrong, 30 ms 1,
 * 60 ms 0 of 192 (twice), but once 1 of 290 under sanitizers on a loaded
 * machine: it narrows the race.  Characters already bound are not
 * rebound.  Vendor-key keycodes (XF86*) are not spares even cleared:
 * the browser's lagging view of them reloaded the page. */
#define INPUT_REBIND_SETTLE_US	60000
#define INPUT_NKEYCODES		256

struct input {
	Display		*dpy;
	int		 min_kc, max_kc;
	int		 per;		/* keysyms per keycode */
	KeySym		*map;		/* (max_kc - min_kc + 1) * per */
	uint32_t	 down[INPUT_NKEYCODES];	/* keysym held on keycode */
	KeyCode		 shift_kc;
	KeyCode		 spare[INPUT_MAX_SPARE];
	int		 spare_used[INPUT_MAX_SPARE];
	unsigned	 nspare;
	unsigned	 spare_next;
	uint32_t	 buttons;	/* bit (b - 1): button b held */
};

const char *
input_strerror(int status)
{
	switch (status) {
	case INPUT_OK:		return "ok";
	case INPUT_ENOMEM:	return "out of memory";
	case INPUT_EXTENSION:	return "X server lacks the XTEST extension";
	case INPUT_KEYMAP:	return "cannot read the keyboard mapping";
	case INPUT_NOKEY:	return "keysym cannot be produced";
	}
	return "unknown input error";
}

static KeySym *
input_syms(const struct input *in, int kc)
{
	return in->map + (size_t)(kc - in->min_kc) * (size_t)in->per;
}

/* Spare keycodes: no symbol on any level; taken from the top, where
 * the evdev keymap leaves gaps. */
static void
input_find_spares(struct input *in)
{
	int kc, l, empty;
	KeySym *s;

	for (kc = in->max_kc; kc >= in->min_kc &&
	    in->nspare < INPUT_MAX_SPARE; kc--) {
		s = input_syms(in, kc);
		for (empty = 1, l = 0; l < in->per; l++)
			if (s[l] != NoSymbol)
				empty = 0;
		if (empty)
			in->spare[in->nspare++] = (KeyCode)kc;
	}
}

int
input_open(struct input **ip, Display *dpy)
{
	struct input *in;
	KeySym *m;
	int ev, err, maj, min, n;

	*ip = NULL;
	if (!XTestQueryExtension(dpy, &ev, &err, &maj, &min))
		return INPUT_EXTENSION;
	if ((in = calloc(1, sizeof(*in))) == NULL)
		return INPUT_ENOMEM;
	in->dpy = dpy;
	XDisplayKeycodes(dpy, &in->min_kc, &in->max_kc);
	n = in->max_kc - in->min_kc + 1;
	m = XGetKeyboardMapping(dpy, (KeyCode)in->min_kc, n, &in->per);
	if (m == NULL || in->per < 2 || in->max_kc >= INPUT_NKEYCODES) {
		if (m != NULL)
			XFree(m);
		free(in);
		return INPUT_KEYMAP;
	}
	in->map = m;
	in->shift_kc = XKeysymToKeycode(dpy, XK_Shift_L);
	input_find_spares(in);
	/* No server-side repeat: a key held while Ctrl goes down would
	 * otherwise repeat as a combination the allow-list never saw.
	 * Clients repeat keys themselves, through the rate limiter. */
	XAutoRepeatOff(dpy);
	*ip = in;
	return INPUT_OK;
}

/* The keycode and shift level (0/1) that produce ks; level-0 hits win.
 * Letters whose level 1 is empty get their case from XConvertCase, as
 * Xlib does. */
static int
input_lookup(const struct input *in, KeySym ks, int *kc_out, int *level)
{
	KeySym *s, lower, upper;
	int kc, pass;

	for (pass = 0; pass < 2; pass++) {
		for (kc = in->min_kc; kc <= in->max_kc; kc++) {
			s = input_syms(in, kc);
			if (pass == 0 && s[0] == ks)
				goto found;
			if (pass == 0)
				continue;
			if (s[1] == ks)
				goto found;
			if (s[1] == NoSymbol && s[0] != NoSymbol) {
				XConvertCase(s[0], &lower, &upper);
				if (upper == ks && lower != upper)
					goto found;
			}
		}
	}
	return 0;
found:
	*kc_out = kc;
	*level = pass;
	return 1;
}

/* Does Shift change what this keycode types? */
static int
input_shift_matters(const struct input *in, int kc)
{
	KeySym *s = input_syms(in, kc), lower, upper;

	if (s[1] != NoSymbol)
		return s[1] != s[0];
	XConvertCase(s[0], &lower, &upper);
	return lower != upper;
}

/* Bind ks to a spare keycode not currently held (both levels, so the
 * Shift state does not matter). */
static int
input_bind_spare(struct input *in, KeySym ks, int *kc_out)
{
	KeySym syms[16];
	unsigned i, idx;
	int l, kc;

	if (in->per > (int)(sizeof(syms) / sizeof(syms[0])))
		return 0;
	for (i = 0; i < in->nspare; i++) {
		idx = (in->spare_next + i) % in->nspare;
		kc = in->spare[idx];
		if (in->down[kc] == 0)
			goto bind;
	}
	return 0;
bind:
	for (l = 0; l < in->per; l++)
		syms[l] = l < 2 ? ks : NoSymbol;
	XChangeKeyboardMapping(in->dpy, kc, in->per, syms, 1);
	memcpy(input_syms(in, kc), syms, sizeof(KeySym) * (size_t)in->per);
	in->spare_used[idx] = 1;
	in->spare_next = (idx + 1) % in->nspare;
	/* Clients must see the MappingNotify before the key event. */
	XSync(in->dpy, False);
	usleep(INPUT_REBIND_SETTLE_US);
	*kc_out = kc;
	return 1;
}

static int
input_is_shift(uint32_t ks)
{
	return ks == XK_Shift_L || ks == XK_Shift_R;
}

static int
input_shift_held(const struct input *in)
{
	int kc;

	for (kc = in->min_kc; kc <= in->max_kc; kc++)
		if (input_is_shift(in->down[kc]))
			return 1;
	return 0;
}

static void
input_fake(struct input *in, int kc, int down)
{
	XTestFakeKeyEvent(in->dpy, (unsigned)kc, down ? True : False,
	    CurrentTime);
}

/* Press or release every held Shift keycode (to lift Shift for one
 * level-0 character and put it back). */
static void
input_held_shifts(struct input *in, int down)
{
	int kc;

	for (kc = in->min_kc; kc <= in->max_kc; kc++)
		if (input_is_shift(in->down[kc]))
			input_fake(in, kc, down);
}

/* Press kc with Shift in the state the wanted level needs, then put
 * Shift back the way the client holds it. */
static void
input_press_with_level(struct input *in, int kc, int want_shift)
{
	int held = input_shift_held(in);

	if (want_shift && !held && in->shift_kc != 0) {
		input_fake(in, in->shift_kc, 1);
		input_fake(in, kc, 1);
		input_fake(in, in->shift_kc, 0);
	} else if (!want_shift && held) {
		input_held_shifts(in, 0);
		input_fake(in, kc, 1);
		input_held_shifts(in, 1);
	} else
		input_fake(in, kc, 1);
}

static int
input_press(struct input *in, uint32_t ks)
{
	int kc, level, want, held;

	/* A keypad digit sits on the shifted level of its keycode, which
	 * Chromium reads as Shift+navigation while NumLock is off (it
	 * selects; Shift+KP_Insert pastes): such a keysym gets a spare. */
	if (!input_lookup(in, ks, &kc, &level) ||
	    (level == 1 && ks >= XK_KP_Space && ks <= XK_KP_Equal)) {
		if (!input_bind_spare(in, ks, &kc))
			return INPUT_NOKEY;
		level = 0;
	}
	held = input_shift_held(in);
	if (!input_shift_matters(in, kc))
		want = held;			/* arrows, Return, Shift... */
	else if (kiosk_is_char(ks))
		want = level;			/* 'A' vs 'a', '!' vs '1' */
	else
		want = held || level;		/* shift+Tab stays shifted */
	input_press_with_level(in, kc, want);
	in->down[kc] = ks;
	return INPUT_OK;
}

/* The keycode holding ks, or (for a letter released after Shift was)
 * the one holding its other case. */
static int
input_find_down(const struct input *in, uint32_t ks)
{
	KeySym lower, upper;
	int kc;

	for (kc = in->min_kc; kc <= in->max_kc; kc++)
		if (in->down[kc] == ks)
			return kc;
	XConvertCase(ks, &lower, &upper);
	for (kc = in->min_kc; kc <= in->max_kc; kc++)
		if (in->down[kc] != 0 && (in->down[kc] == lower ||
		    in->down[kc] == upper))
			return kc;
	return -1;
}

int
input_key(struct input *in, uint32_t keysym, int down)
{
	uint32_t ks = kiosk_canon(keysym);
	int kc;

	if (ks == 0)
		return INPUT_NOKEY;
	if (down)
		return input_press(in, ks);
	if ((kc = input_find_down(in, ks)) < 0)
		return INPUT_OK;		/* never pressed: ignore */
	input_fake(in, kc, 0);
	in->down[kc] = 0;
	return INPUT_OK;
}

int
input_key_down(const struct input *in, uint32_t keysym)
{
	return input_find_down(in, kiosk_canon(keysym)) >= 0;
}

void
input_motion(struct input *in, int x, int y)
{
	XTestFakeMotionEvent(in->dpy, -1, x, y, CurrentTime);
}

void
input_button(struct input *in, int button, int down)
{
	uint32_t bit;

	if (button < 1 || button > 32)
		return;
	bit = 1u << (button - 1);
	if (!down && !(in->buttons & bit))
		return;
	XTestFakeButtonEvent(in->dpy, (unsigned)button, down ? True : False,
	    CurrentTime);
	if (down)
		in->buttons |= bit;
	else
		in->buttons &= ~bit;
}

/* Non-modifiers first, so no combination is completed on the way out. */
void
input_release_all(struct input *in)
{
	int kc, b, pass;

	for (b = 1; b <= 32; b++)
		input_button(in, b, 0);
	for (pass = 0; pass < 2; pass++) {
		for (kc = in->min_kc; kc <= in->max_kc; kc++) {
			if (in->down[kc] == 0 ||
			    (pass == 0) == IsModifierKey(in->down[kc]))
				continue;
			input_fake(in, kc, 0);
			in->down[kc] = 0;
		}
	}
}

void
input_close(struct input *in)
{
	KeySym syms[16];
	unsigned i;
	int l;

	if (in == NULL)
		return;
	input_release_all(in);
	for (l = 0; l < in->per && l < 16; l++)
		syms[l] = NoSymbol;
	for (i = 0; i < in->nspare; i++)
		if (in->spare_used[i] && in->per <= 16)
			XChangeKeyboardMapping(in->dpy, in->spare[i], in->per,
			    syms, 1);
	XFlush(in->dpy);
	XFree(in->map);
	free(in);
}
