/*
 * gateway/kiosk.c — the key and pointer-button allow-list that keeps a
 * researcher inside the kiosk browser (see kiosk.h for the list and the
 * reasons).  Pure logic on keysym numbers; runs in the unprivileged
 * worker on input from an untrusted VNC client.  Adding a key means
 * adding it to one of the tables below, nothing else.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <X11/keysym.h>

#include "gateway/kiosk.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Modifier keys and the bit each sets in kiosk.held. */
static const struct {
	uint32_t	 keysym;
	uint32_t	 bit;
} kiosk_modkeys[] = {
	{ XK_Shift_L,		KIOSK_K_SHIFT_L },
	{ XK_Shift_R,		KIOSK_K_SHIFT_R },
	{ XK_Control_L,		KIOSK_K_CTRL_L },
	{ XK_Control_R,		KIOSK_K_CTRL_R },
	{ XK_Alt_L,		KIOSK_K_ALT_L },
	{ XK_Alt_R,		KIOSK_K_ALT_R },
	{ XK_Meta_L,		KIOSK_K_META_L },
	{ XK_Meta_R,		KIOSK_K_META_R },
	{ XK_Super_L,		KIOSK_K_SUPER_L },
	{ XK_Super_R,		KIOSK_K_SUPER_R },
	{ XK_Hyper_L,		KIOSK_K_HYPER_L },
	{ XK_Hyper_R,		KIOSK_K_HYPER_R },
	{ XK_ISO_Level3_Shift,	KIOSK_K_ALTGR },
	{ XK_Mode_switch,	KIOSK_K_ALTGR },
};

/* Only these modifier keys are forwarded to X. */
#define KIOSK_K_FORWARDED \
	(KIOSK_K_SHIFT_L | KIOSK_K_SHIFT_R | KIOSK_K_CTRL_L | KIOSK_K_CTRL_R)

/* Editing and navigation keys allowed without Ctrl/Alt/Super. */
static const uint32_t kiosk_edit_keys[] = {
	XK_BackSpace, XK_Tab, XK_ISO_Left_Tab, XK_Return, XK_Escape,
	XK_Delete, XK_Insert, XK_Home, XK_End, XK_Left, XK_Up, XK_Right,
	XK_Down, XK_Page_Up, XK_Page_Down,
	XK_KP_Space, XK_KP_Tab, XK_KP_Enter, XK_KP_Home, XK_KP_Left,
	XK_KP_Up, XK_KP_Right, XK_KP_Down, XK_KP_Page_Up, XK_KP_Page_Down,
	XK_KP_End, XK_KP_Begin, XK_KP_Insert, XK_KP_Delete, XK_KP_Equal,
	XK_KP_Multiply, XK_KP_Add, XK_KP_Separator, XK_KP_Subtract,
	XK_KP_Decimal, XK_KP_Divide,
	XK_KP_0, XK_KP_1, XK_KP_2, XK_KP_3, XK_KP_4, XK_KP_5, XK_KP_6,
	XK_KP_7, XK_KP_8, XK_KP_9,
};

/* Ctrl combinations (without Shift) allowed for editing inside a page. */
static const uint32_t kiosk_ctrl_keys[] = {
	XK_a, XK_c, XK_v, XK_x, XK_z, XK_y,
	XK_Left, XK_Right, XK_Up, XK_Down, XK_Home, XK_End,
	XK_BackSpace, XK_Delete, XK_Insert,
};

/* Ctrl+Shift combinations allowed (redo, paste as text, selection). */
static const uint32_t kiosk_ctrl_shift_keys[] = {
	XK_z, XK_v,
	XK_Left, XK_Right, XK_Up, XK_Down, XK_Home, XK_End,
};

/* Buttons allowed (1-based): left and the four wheel directions. */
static const int kiosk_buttons[] = { 1, 4, 5, 6, 7 };

void
kiosk_init(struct kiosk *k)
{
	memset(k, 0, sizeof(*k));
}

uint32_t
kiosk_canon(uint32_t ks)
{
	if ((ks >= 0x1000020 && ks <= 0x100007e) ||
	    (ks >= 0x10000a0 && ks <= 0x10000ff))
		return ks - 0x1000000;
	return ks;
}

/* Character keysyms: Latin-1, the legacy national sets (0x100-0x13be),
 * the currency block, and Unicode keysyms without C0/C1 controls and
 * surrogates. */
int
kiosk_is_char(uint32_t ks)
{
	ks = kiosk_canon(ks);
	if (ks >= 0x20 && ks <= 0x7e)
		return 1;
	if (ks >= 0xa0 && ks <= 0xff)
		return 1;
	if (ks >= 0x100 && ks <= 0x13be)
		return 1;
	if (ks >= 0x20a0 && ks <= 0x20ac)
		return 1;
	if (ks >= 0x1000100 && ks <= 0x110ffff &&
	    !(ks >= 0x100d800 && ks <= 0x100dfff))
		return 1;
	return 0;
}

static int
kiosk_in(const uint32_t *set, size_t n, uint32_t ks)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == ks)
			return 1;
	return 0;
}

static uint32_t
kiosk_modbit(uint32_t ks)
{
	size_t i;

	for (i = 0; i < NELEM(kiosk_modkeys); i++)
		if (kiosk_modkeys[i].keysym == ks)
			return kiosk_modkeys[i].bit;
	return 0;
}

uint32_t
kiosk_mods(const struct kiosk *k)
{
	uint32_t m = 0;

	if (k->held & (KIOSK_K_SHIFT_L | KIOSK_K_SHIFT_R))
		m |= KIOSK_MOD_SHIFT;
	if (k->held & (KIOSK_K_CTRL_L | KIOSK_K_CTRL_R))
		m |= KIOSK_MOD_CTRL;
	if (k->held & (KIOSK_K_ALT_L | KIOSK_K_ALT_R | KIOSK_K_META_L |
	    KIOSK_K_META_R))
		m |= KIOSK_MOD_ALT;
	if (k->held & (KIOSK_K_SUPER_L | KIOSK_K_SUPER_R | KIOSK_K_HYPER_L |
	    KIOSK_K_HYPER_R))
		m |= KIOSK_MOD_SUPER;
	if (k->held & KIOSK_K_ALTGR)
		m |= KIOSK_MOD_ALTGR;
	return m;
}

/* Letters compare in lower case; an upper-case letter implies Shift
 * because the injector presses Shift to produce it. */
static uint32_t
kiosk_fold(uint32_t ks, int *upper)
{
	*upper = 0;
	if (ks >= XK_A && ks <= XK_Z) {
		*upper = 1;
		return ks - XK_A + XK_a;
	}
	return ks;
}

/* Decide a press with the given logical modifiers. */
static int
kiosk_press_allowed(uint32_t ks, uint32_t mods)
{
	uint32_t folded;
	int upper;

	if (mods & (KIOSK_MOD_ALT | KIOSK_MOD_SUPER))
		return 0;
	if (mods & KIOSK_MOD_CTRL) {
		folded = kiosk_fold(ks, &upper);
		if ((mods & KIOSK_MOD_SHIFT) || upper)
			return kiosk_in(kiosk_ctrl_shift_keys,
			    NELEM(kiosk_ctrl_shift_keys), folded);
		return kiosk_in(kiosk_ctrl_keys, NELEM(kiosk_ctrl_keys),
		    folded);
	}
	if (ks == XK_Escape && (mods & KIOSK_MOD_SHIFT))
		return 0;		/* shift+Esc: task manager */
	return kiosk_is_char(ks) ||
	    kiosk_in(kiosk_edit_keys, NELEM(kiosk_edit_keys), ks);
}

/* Letters are remembered in lower case so that a release arriving with
 * the other case (shift let go first) still matches. */
static uint32_t
kiosk_swallow_key(uint32_t ks)
{
	int upper;

	return kiosk_fold(kiosk_canon(ks), &upper);
}

static void
kiosk_swallow_add(struct kiosk *k, uint32_t ks)
{
	ks = kiosk_swallow_key(ks);
	if (kiosk_in(k->swallow, k->nswallow, ks))
		return;
	if (k->nswallow < KIOSK_MAX_SWALLOW) {
		k->swallow[k->nswallow++] = ks;
		return;
	}
	/* Full (a client holding 16 dropped keys): forget the oldest; its
	 * release then reaches the injector, which ignores releases of
	 * keys it never pressed. */
	k->swallow[k->swallow_next] = ks;
	k->swallow_next = (k->swallow_next + 1) % KIOSK_MAX_SWALLOW;
}

static int
kiosk_swallow_take(struct kiosk *k, uint32_t ks)
{
	unsigned i;

	ks = kiosk_swallow_key(ks);
	for (i = 0; i < k->nswallow; i++) {
		if (k->swallow[i] != ks)
			continue;
		k->swallow[i] = k->swallow[--k->nswallow];
		k->swallow_next = 0;
		return 1;
	}
	return 0;
}

/* Modifier keys: update the state; only Shift and Control reach X, and
 * not while a button is down (the click would take them at its
 * release: ctrl+click, shift+click).  A press held back stays so until
 * its release, which is swallowed. */
static enum kiosk_verdict
kiosk_modifier(struct kiosk *k, uint32_t bit, int down)
{
	if (down)
		k->held |= bit;
	else
		k->held &= ~bit;
	if (!down && (k->held_back & bit)) {
		k->held_back &= ~bit;
		return KIOSK_SWALLOW;
	}
	if (!(bit & KIOSK_K_FORWARDED)) {
		k->why = "modifier never forwarded";
		return down ? KIOSK_DROP : KIOSK_SWALLOW;
	}
	if (down && k->buttons != 0) {
		k->held_back |= bit;
		k->why = "modifier while a button is down";
		return KIOSK_DROP;
	}
	return KIOSK_PASS;
}

enum kiosk_verdict
kiosk_key(struct kiosk *k, uint32_t keysym, int down, uint32_t *mods_out)
{
	uint32_t ks = kiosk_canon(keysym), bit, mods;

	mods = kiosk_mods(k);
	if (mods_out != NULL)
		*mods_out = mods;
	if ((bit = kiosk_modbit(ks)) != 0)
		return kiosk_modifier(k, bit, down);
	if (!down)
		return kiosk_swallow_take(k, ks) ? KIOSK_SWALLOW : KIOSK_PASS;
	if (kiosk_press_allowed(ks, mods)) {
		/* A press allowed now supersedes an earlier dropped one. */
		(void)kiosk_swallow_take(k, ks);
		return KIOSK_PASS;
	}
	kiosk_swallow_add(k, ks);
	k->why = "not allowed with these modifiers";
	return KIOSK_DROP;
}

int
kiosk_button_allowed(int button)
{
	size_t i;

	for (i = 0; i < NELEM(kiosk_buttons); i++)
		if (kiosk_buttons[i] == button)
			return 1;
	return 0;
}

/* Ctrl or Shift with a left click opens the link under it in a new tab
 * or a second top-level window (measured: tests/regress/028); Ctrl with
 * the wheel zooms, like the ctrl+plus it stands for.  Shift+wheel
 * (horizontal scrolling) stays. */
int
kiosk_button_press_allowed(const struct kiosk *k, int button)
{
	uint32_t mods = kiosk_mods(k);

	if (!kiosk_button_allowed(button))
		return 0;
	if (button == 1 && (mods & (KIOSK_MOD_CTRL | KIOSK_MOD_SHIFT)))
		return 0;
	if (button >= 4 && (mods & KIOSK_MOD_CTRL))
		return 0;
	return 1;
}

void
kiosk_button(struct kiosk *k, int button, int down)
{
	uint32_t bit;

	if (button < 1 || button > 32)
		return;
	bit = 1u << (button - 1);
	if (down)
		k->buttons |= bit;
	else
		k->buttons &= ~bit;
}

const char *
kiosk_mods_str(uint32_t mods, char *buf, size_t len)
{
	static const struct {
		uint32_t	 bit;
		const char	*name;
	} names[] = {
		{ KIOSK_MOD_CTRL, "ctrl" }, { KIOSK_MOD_ALT, "alt" },
		{ KIOSK_MOD_SUPER, "super" }, { KIOSK_MOD_ALTGR, "altgr" },
		{ KIOSK_MOD_SHIFT, "shift" },
	};
	size_t i, off = 0;
	int n;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < NELEM(names); i++) {
		if (!(mods & names[i].bit))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "+" : "",
		    names[i].name);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	return buf;
}
