/*
 * tests/unit/test-kiosk.c — the key allow-list: every escape combination
 * the issue lists is dropped, ordinary typing (shifted symbols included)
 * passes, modifier state is tracked per client, and the release of a
 * dropped key is swallowed.
 */
#include "config.h"

#include <string.h>

#include <X11/keysym.h>

#include "gateway/kiosk.h"
#include "tests/tap.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* One combination: modifiers held (keysyms), then the key. */
struct combo {
	const char	*name;
	uint32_t	 mods[3];
	uint32_t	 key;
};

static const struct combo escapes[] = {
	{ "ctrl+n", { XK_Control_L }, XK_n },
	{ "ctrl+t", { XK_Control_L }, XK_t },
	{ "ctrl+w", { XK_Control_L }, XK_w },
	{ "ctrl+shift+n", { XK_Control_L, XK_Shift_L }, XK_N },
	{ "ctrl+shift+w", { XK_Control_L, XK_Shift_L }, XK_W },
	{ "ctrl+shift+i", { XK_Control_L, XK_Shift_L }, XK_I },
	{ "ctrl+shift+j", { XK_Control_L, XK_Shift_L }, XK_J },
	{ "ctrl+shift+c", { XK_Control_L, XK_Shift_L }, XK_C },
	{ "ctrl+shift+n (lower-case keysym)", { XK_Control_R, XK_Shift_R },
	    XK_n },
	{ "alt+F4", { XK_Alt_L }, XK_F4 },
	{ "shift+Escape", { XK_Shift_L }, XK_Escape },
	{ "ctrl+j", { XK_Control_L }, XK_j },
	{ "ctrl+h", { XK_Control_L }, XK_h },
	{ "ctrl+o", { XK_Control_L }, XK_o },
	{ "ctrl+s", { XK_Control_L }, XK_s },
	{ "ctrl+p", { XK_Control_L }, XK_p },
	{ "ctrl+u", { XK_Control_L }, XK_u },
	{ "F11", { 0 }, XK_F11 },
	{ "F12", { 0 }, XK_F12 },
	{ "alt+Left", { XK_Alt_L }, XK_Left },
	{ "alt+Right", { XK_Alt_R }, XK_Right },
	{ "alt+Home", { XK_Alt_L }, XK_Home },
	{ "meta+Left", { XK_Meta_L }, XK_Left },
	{ "ctrl+l (address bar)", { XK_Control_L }, XK_l },
	{ "ctrl+Tab", { XK_Control_L }, XK_Tab },
	{ "ctrl+Page_Down", { XK_Control_L }, XK_Page_Down },
	{ "ctrl+shift+a via caps lock (ctrl+A)", { XK_Control_L }, XK_A },
	{ "ctrl+n as a Unicode keysym", { XK_Control_L }, 0x100006e },
	{ "super+e", { XK_Super_L }, XK_e },
	{ "F1", { 0 }, XK_F1 },
	{ "F5", { 0 }, XK_F5 },
	{ "Menu", { 0 }, XK_Menu },
	{ "Print", { 0 }, XK_Print },
	{ "Caps_Lock", { 0 }, XK_Caps_Lock },
	{ "XF86Back", { 0 }, 0x1008ff26 },
	{ "XF86Close", { 0 }, 0x1008ff56 },
	{ "ctrl+alt+Delete", { XK_Control_L, XK_Alt_L }, XK_Delete },
	{ "ctrl+alt+a", { XK_Control_L, XK_Alt_L }, XK_a },
};

static const struct combo allowed[] = {
	{ "ctrl+a", { XK_Control_L }, XK_a },
	{ "ctrl+c", { XK_Control_L }, XK_c },
	{ "ctrl+v", { XK_Control_L }, XK_v },
	{ "ctrl+x", { XK_Control_L }, XK_x },
	{ "ctrl+z", { XK_Control_R }, XK_z },
	{ "ctrl+y", { XK_Control_L }, XK_y },
	{ "ctrl+shift+z", { XK_Control_L, XK_Shift_L }, XK_Z },
	{ "ctrl+shift+Left", { XK_Control_L, XK_Shift_L }, XK_Left },
	{ "ctrl+BackSpace", { XK_Control_L }, XK_BackSpace },
	{ "shift+Tab", { XK_Shift_L }, XK_Tab },
	{ "ISO_Left_Tab", { XK_Shift_L }, XK_ISO_Left_Tab },
	{ "shift+End", { XK_Shift_L }, XK_End },
	{ "Escape", { 0 }, XK_Escape },
	{ "Return", { 0 }, XK_Return },
	{ "KP_Enter", { 0 }, XK_KP_Enter },
	{ "altgr+at (AltGr is not Alt)", { XK_ISO_Level3_Shift }, XK_at },
	{ "e acute", { 0 }, XK_eacute },
	{ "Unicode euro", { 0 }, 0x10020ac },
};

/* Press the modifiers, the key, then release in reverse order; return
 * the verdict on the key's press and on its release. */
static void
run_combo(const struct combo *c, enum kiosk_verdict *press,
    enum kiosk_verdict *release)
{
	struct kiosk k;
	int i;

	kiosk_init(&k);
	for (i = 0; i < 3 && c->mods[i] != 0; i++)
		(void)kiosk_key(&k, c->mods[i], 1, NULL);
	*press = kiosk_key(&k, c->key, 1, NULL);
	*release = kiosk_key(&k, c->key, 0, NULL);
}

static void
test_escapes(void)
{
	enum kiosk_verdict p, r;
	size_t i;

	for (i = 0; i < NELEM(escapes); i++) {
		run_combo(&escapes[i], &p, &r);
		tap_ok(p == KIOSK_DROP, "escape %s dropped", escapes[i].name);
		tap_ok(r == KIOSK_SWALLOW, "release of %s swallowed",
		    escapes[i].name);
	}
}

static void
test_allowed(void)
{
	enum kiosk_verdict p, r;
	size_t i;

	for (i = 0; i < NELEM(allowed); i++) {
		run_combo(&allowed[i], &p, &r);
		tap_ok(p == KIOSK_PASS && r == KIOSK_PASS, "%s passes",
		    allowed[i].name);
	}
}

/* Type a string the way a VNC client does: Shift around upper-case
 * letters and shifted symbols. */
static int
type_string(struct kiosk *k, const char *s)
{
	const char *shifted = "ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+{}|:\"<>?~";
	int ok = 1, sh;

	for (; *s != '\0'; s++) {
		sh = strchr(shifted, *s) != NULL;
		if (sh)
			ok &= kiosk_key(k, XK_Shift_L, 1, NULL) == KIOSK_PASS;
		ok &= kiosk_key(k, (uint32_t)(unsigned char)*s, 1, NULL) ==
		    KIOSK_PASS;
		ok &= kiosk_key(k, (uint32_t)(unsigned char)*s, 0, NULL) ==
		    KIOSK_PASS;
		if (sh)
			ok &= kiosk_key(k, XK_Shift_L, 0, NULL) == KIOSK_PASS;
	}
	return ok;
}

static void
test_typing(void)
{
	struct kiosk k;
	uint32_t c;
	int ok = 1;

	kiosk_init(&k);
	tap_ok(type_string(&k, "Hello World! a@b.c {x}"),
	    "typing 'Hello World! a@b.c {x}' passes");
	tap_ok(type_string(&k, "~`1234567890-=[]\\;',./<>?:\"|_+"),
	    "every US punctuation key passes");
	for (c = 0x20; c <= 0x7e; c++)
		ok &= kiosk_key(&k, c, 1, NULL) == KIOSK_PASS &&
		    kiosk_key(&k, c, 0, NULL) == KIOSK_PASS;
	tap_ok(ok, "all printable ASCII passes without modifiers");
	tap_ok(kiosk_mods(&k) == 0, "no modifier left held after typing");
}

static void
test_modifier_tracking(void)
{
	struct kiosk k;
	uint32_t mods;

	kiosk_init(&k);
	(void)kiosk_key(&k, XK_Control_L, 1, NULL);
	(void)kiosk_key(&k, XK_Control_R, 1, NULL);
	(void)kiosk_key(&k, XK_Control_L, 0, NULL);
	tap_ok(kiosk_key(&k, XK_n, 1, &mods) == KIOSK_DROP &&
	    (mods & KIOSK_MOD_CTRL),
	    "ctrl+n dropped while only the right Control is still held");
	(void)kiosk_key(&k, XK_n, 0, NULL);
	(void)kiosk_key(&k, XK_Control_R, 0, NULL);
	tap_ok(kiosk_key(&k, XK_n, 1, &mods) == KIOSK_PASS && mods == 0,
	    "n passes once both Controls are released");
	tap_ok(kiosk_key(&k, XK_n, 0, NULL) == KIOSK_PASS, "its release too");

	kiosk_init(&k);
	tap_ok(kiosk_key(&k, XK_Alt_L, 1, NULL) == KIOSK_DROP,
	    "Alt itself never reaches X");
	tap_ok(kiosk_key(&k, XK_Alt_L, 0, NULL) == KIOSK_SWALLOW,
	    "nor its release");
	tap_ok(kiosk_key(&k, XK_Shift_L, 1, NULL) == KIOSK_PASS &&
	    kiosk_key(&k, XK_Control_L, 1, NULL) == KIOSK_PASS,
	    "Shift and Control are forwarded");
	tap_ok(kiosk_mods(&k) == (KIOSK_MOD_SHIFT | KIOSK_MOD_CTRL),
	    "both tracked");
	/* Two clients: state is per struct kiosk. */
	{
		struct kiosk other;

		kiosk_init(&other);
		tap_ok(kiosk_key(&other, XK_n, 1, NULL) == KIOSK_PASS,
		    "another client's state is independent");
	}
}

static void
test_release_swallowing(void)
{
	struct kiosk k;

	kiosk_init(&k);
	(void)kiosk_key(&k, XK_Control_L, 1, NULL);
	tap_ok(kiosk_key(&k, XK_t, 1, NULL) == KIOSK_DROP, "ctrl+t dropped");
	(void)kiosk_key(&k, XK_Control_L, 0, NULL);
	tap_ok(kiosk_key(&k, XK_t, 0, NULL) == KIOSK_SWALLOW,
	    "t released after Control: still swallowed");
	tap_ok(kiosk_key(&k, XK_t, 0, NULL) == KIOSK_PASS,
	    "a second release is not swallowed again");

	kiosk_init(&k);
	(void)kiosk_key(&k, XK_Control_L, 1, NULL);
	(void)kiosk_key(&k, XK_Shift_L, 1, NULL);
	tap_ok(kiosk_key(&k, XK_N, 1, NULL) == KIOSK_DROP, "ctrl+shift+N");
	(void)kiosk_key(&k, XK_Shift_L, 0, NULL);
	tap_ok(kiosk_key(&k, XK_n, 0, NULL) == KIOSK_SWALLOW,
	    "released as lower-case n: swallowed (case folded)");

	kiosk_init(&k);
	(void)kiosk_key(&k, XK_Alt_L, 1, NULL);
	(void)kiosk_key(&k, XK_F4, 1, NULL);
	(void)kiosk_key(&k, XK_Alt_L, 0, NULL);
	tap_ok(kiosk_key(&k, XK_F4, 0, NULL) == KIOSK_SWALLOW,
	    "F4 of alt+F4 released after Alt: swallowed");
	tap_ok(kiosk_key(&k, XK_F4, 1, NULL) == KIOSK_DROP,
	    "F4 alone is still not allowed");
}

static void
test_buttons(void)
{
	tap_ok(kiosk_button_allowed(1), "left button allowed");
	tap_ok(kiosk_button_allowed(4) && kiosk_button_allowed(5),
	    "wheel allowed");
	tap_ok(!kiosk_button_allowed(2), "middle button (new tab) dropped");
	tap_ok(!kiosk_button_allowed(3), "right button (context menu) dropped");
	tap_ok(!kiosk_button_allowed(8) && !kiosk_button_allowed(9),
	    "back/forward buttons dropped");
}

/* Modifiers held by the client change what a button press may do. */
static void
test_button_mods(void)
{
	struct kiosk k;

	kiosk_init(&k);
	tap_ok(kiosk_button_press_allowed(&k, 1) &&
	    kiosk_button_press_allowed(&k, 4), "plain click and wheel allowed");
	tap_ok(!kiosk_button_press_allowed(&k, 2), "middle still dropped");
	(void)kiosk_key(&k, XK_Control_L, 1, NULL);
	tap_ok(!kiosk_button_press_allowed(&k, 1),
	    "ctrl+click (background tab) dropped");
	tap_ok(!kiosk_button_press_allowed(&k, 4) &&
	    !kiosk_button_press_allowed(&k, 5), "ctrl+wheel (zoom) dropped");
	(void)kiosk_key(&k, XK_Control_L, 0, NULL);
	(void)kiosk_key(&k, XK_Shift_R, 1, NULL);
	tap_ok(!kiosk_button_press_allowed(&k, 1),
	    "shift+click (new window) dropped");
	tap_ok(kiosk_button_press_allowed(&k, 6) &&
	    kiosk_button_press_allowed(&k, 4),
	    "shift+wheel (horizontal scroll) allowed");
	(void)kiosk_key(&k, XK_Shift_R, 0, NULL);
	(void)kiosk_key(&k, XK_Alt_L, 1, NULL);
	tap_ok(kiosk_button_press_allowed(&k, 1),
	    "alt+click allowed (Alt never reaches X)");
	(void)kiosk_key(&k, XK_Alt_L, 0, NULL);
	tap_ok(kiosk_button_press_allowed(&k, 1), "released: click allowed");
}

/* Ctrl or Shift pressed while the button is down would reach the click
 * at its release (Chromium reads the modifiers then): held back. */
static void
test_mods_after_press(void)
{
	struct kiosk k;

	kiosk_init(&k);
	kiosk_button(&k, 1, 1);		/* a plain click went down */
	tap_ok(kiosk_key(&k, XK_Control_L, 1, NULL) == KIOSK_DROP &&
	    k.why != NULL && strstr(k.why, "button") != NULL,
	    "ctrl pressed while the button is down: dropped (%s)",
	    k.why ? k.why : "?");
	tap_ok(kiosk_key(&k, XK_Shift_R, 1, NULL) == KIOSK_DROP,
	    "shift pressed while the button is down: dropped");
	kiosk_button(&k, 1, 0);
	tap_ok(!kiosk_button_press_allowed(&k, 1),
	    "the client still holds them: the next click is dropped");
	tap_ok(kiosk_key(&k, XK_Control_L, 0, NULL) == KIOSK_SWALLOW &&
	    kiosk_key(&k, XK_Shift_R, 0, NULL) == KIOSK_SWALLOW,
	    "their releases are swallowed (X never saw the presses)");
	tap_ok(kiosk_button_press_allowed(&k, 1) &&
	    kiosk_key(&k, XK_Control_L, 1, NULL) == KIOSK_PASS,
	    "all up: click allowed, ctrl reaches X again");
	(void)kiosk_key(&k, XK_Control_L, 0, NULL);
	kiosk_button(&k, 4, 1);
	tap_ok(kiosk_key(&k, XK_Control_L, 1, NULL) == KIOSK_DROP,
	    "ctrl during a wheel press: dropped too");
	kiosk_button(&k, 4, 0);
	(void)kiosk_key(&k, XK_Control_L, 0, NULL);
	kiosk_button(&k, 1, 1);
	tap_ok(kiosk_key(&k, XK_a, 1, NULL) == KIOSK_PASS,
	    "plain keys while the button is down still pass");
	kiosk_button(&k, 99, 1);	/* out of range: ignored */
	kiosk_button(&k, 1, 0);
	tap_ok(k.buttons == 0, "button state follows presses and releases");
}

static void
test_helpers(void)
{
	char buf[64];

	tap_ok(kiosk_canon(0x1000041) == XK_A, "Unicode 'A' canonicalised");
	tap_ok(kiosk_canon(0x10020ac) == 0x10020ac, "euro stays Unicode");
	tap_ok(!kiosk_is_char(0x100001b), "Unicode ESC is not a character");
	tap_ok(strcmp(kiosk_mods_str(KIOSK_MOD_CTRL | KIOSK_MOD_SHIFT, buf,
	    sizeof(buf)), "ctrl+shift") == 0, "modifier names");
}

int
main(void)
{
	test_escapes();
	test_button_mods();
	test_mods_after_press();
	test_allowed();
	test_typing();
	test_modifier_tracking();
	test_release_swallowing();
	test_buttons();
	test_helpers();
	return tap_done();
}
