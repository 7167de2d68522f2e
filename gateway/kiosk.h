/*
 * gateway/kiosk.h — which keys and pointer buttons may reach the kiosk
 * browser: an allow-list, never a deny-list.
 *
 * No browser policy stops ctrl+n (a window with an address bar),
 * shift+Esc (task manager) or alt+F4 / ctrl+w (browser exits), so the
 * gateway filters input itself.  Pure logic on X keysym numbers with
 * per-client modifier state; no X connection, no I/O.  Trust: its input
 * comes from an untrusted VNC client.
 *
 * Allowed (everything else is dropped):
 *  - modifier keys Shift and Control (Alt, Meta, Super, Hyper, AltGr are
 *    tracked but never reach X: clients send the resulting keysym anyway);
 *  - without Ctrl/Alt/Super: printable characters (Latin-1, the legacy
 *    character sets, Unicode keysyms), BackSpace, Tab, ISO_Left_Tab,
 *    Return, Escape (not shift+Escape), Delete, Insert, Home, End, the
 *    arrows, Page_Up/Down and the keypad's digits, operators, Enter and
 *    navigation keys;
 *  - with Ctrl: a, c, v, x, z, y (select all, copy, paste, cut, undo,
 *    redo) and ctrl+shift+z / ctrl+shift+v (redo, paste as text); ctrl
 *    (+shift) + Left/Right/Up/Down/Home/End (word and document
 *    movement, selection), ctrl+BackSpace/Delete (delete a word),
 *    ctrl+Insert (copy).  The clipboard is closed at the gateway anyway;
 *    these only work inside the session.
 *  - A letter keysym in upper case counts as shift+letter in a Ctrl
 *    combination (the injector will press Shift for it), so caps lock
 *    cannot turn ctrl+shift+a (tab search) into an allowed ctrl+a.
 *  - Never: function keys F1–F35, Menu, Print, Pause, Caps/Num/Scroll
 *    Lock, every XF86 media/browser key, anything while Alt/Meta/Super
 *    is held.
 *  - Pointer: button 1 (left) and the wheel (4–7).  Middle click opens
 *    links in new tabs, the right-click menu offers "open in new window",
 *    "save as", "print" and back/forward buttons (8/9) navigate.  Not
 *    with Ctrl or Shift held: ctrl+click opens a link in a background
 *    tab, shift+click in a second window (so shift+click cannot extend
 *    a selection); ctrl+wheel zooms.  Chromium reads the modifiers at
 *    the release, so Ctrl or Shift pressed while a button is down is
 *    dropped too (logged), and its release swallowed.
 */
#ifndef GATEWAY_KIOSK_H
#define GATEWAY_KIOSK_H

#include <stddef.h>
#include <stdint.h>

/* Physical modifier keys a client may hold (bits of kiosk.held). */
#define KIOSK_K_SHIFT_L		0x0001u
#define KIOSK_K_SHIFT_R		0x0002u
#define KIOSK_K_CTRL_L		0x0004u
#define KIOSK_K_CTRL_R		0x0008u
#define KIOSK_K_ALT_L		0x0010u
#define KIOSK_K_ALT_R		0x0020u
#define KIOSK_K_META_L		0x0040u
#define KIOSK_K_META_R		0x0080u
#define KIOSK_K_SUPER_L		0x0100u
#define KIOSK_K_SUPER_R		0x0200u
#define KIOSK_K_HYPER_L		0x0400u
#define KIOSK_K_HYPER_R		0x0800u
#define KIOSK_K_ALTGR		0x1000u	/* ISO_Level3_Shift, Mode_switch */

/* Logical modifiers (kiosk_mods()). */
#define KIOSK_MOD_SHIFT		0x01u
#define KIOSK_MOD_CTRL		0x02u
#define KIOSK_MOD_ALT		0x04u	/* Alt or Meta */
#define KIOSK_MOD_SUPER		0x08u	/* Super or Hyper */
#define KIOSK_MOD_ALTGR		0x10u

#define KIOSK_MAX_SWALLOW	16

struct kiosk {
	uint32_t	 held;			/* KIOSK_K_* */
	uint32_t	 swallow[KIOSK_MAX_SWALLOW]; /* dropped presses */
	unsigned	 nswallow;
	unsigned	 swallow_next;		/* ring position when full */
	uint32_t	 buttons;		/* bit b-1: button b down in X */
	uint32_t	 held_back;		/* KIOSK_K_*: presses dropped */
	const char	*why;			/* the last KIOSK_DROP's reason */
};

enum kiosk_verdict {
	KIOSK_PASS = 0,		/* forward to X */
	KIOSK_DROP,		/* drop and log (a press, or a key never allowed) */
	KIOSK_SWALLOW		/* release of a dropped press: drop silently */
};

void	 kiosk_init(struct kiosk *k);
/* Decide one key event and update the modifier state.  *mods_out (may
 * be NULL) receives the logical modifiers in force for this event. */
enum kiosk_verdict kiosk_key(struct kiosk *k, uint32_t keysym, int down,
	    uint32_t *mods_out);
uint32_t kiosk_mods(const struct kiosk *k);
/* Unicode keysyms for Latin-1 characters (0x1000020..0x10000ff) become
 * the Latin-1 keysym; everything else is returned unchanged. */
uint32_t kiosk_canon(uint32_t keysym);
/* 1 if the keysym is a character (not a function or modifier key). */
int	 kiosk_is_char(uint32_t keysym);
/* button: 1-based X button number. */
int	 kiosk_button_allowed(int button);
/* A press of the button with the modifiers the client holds now: no
 * ctrl/shift+left click (new tab or window), no ctrl+wheel (zoom). */
int	 kiosk_button_press_allowed(const struct kiosk *k, int button);
/* A button press reached X (down), or the button was let go. */
void	 kiosk_button(struct kiosk *k, int button, int down);
/* "ctrl+shift" etc. into buf (always NUL-terminated); returns buf. */
const char *kiosk_mods_str(uint32_t mods, char *buf, size_t len);

#endif
