/*
 * gateway/input.h — inject already-filtered input into the session's X
 * server through XTest.
 *
 * A VNC client sends keysyms, X wants keycodes plus modifier state.
 * XKeysymToKeycode + XTestFakeKeyEvent alone ignores shift levels and
 * types "hELLO wORLD1" for "Hello World!".  This module presses Shift
 * for keysyms on shift level 1 of their keycode (and lifts a held Shift
 * for level-0 characters), binds a spare keycode for keysyms the keymap
 * lacks, releases a key with the keycode it was pressed with, and can
 * release everything it holds.  Trust: it only sees input that
 * gateway/kiosk.c and gateway/ratelimit.c have let through.
 */
#ifndef GATEWAY_INPUT_H
#define GATEWAY_INPUT_H

#include <stdint.h>

#include <X11/Xlib.h>

struct input;

enum input_status {
	INPUT_OK = 0,
	INPUT_ENOMEM,
	INPUT_EXTENSION,	/* XTest missing */
	INPUT_KEYMAP,		/* keyboard mapping unreadable */
	INPUT_NOKEY		/* keysym cannot be produced */
};

int	 input_open(struct input **ip, Display *dpy);
/* Release everything held, restore borrowed keycodes, free. */
void	 input_close(struct input *in);
const char *input_strerror(int status);

/* One key event; releases of keys this module never pressed are
 * ignored (so a dropped press can never leave a stuck key). */
int	 input_key(struct input *in, uint32_t keysym, int down);
/* 1 if a press of this keysym is currently held in X. */
int	 input_key_down(const struct input *in, uint32_t keysym);
void	 input_motion(struct input *in, int x, int y);
/* button: 1-based X button number. */
void	 input_button(struct input *in, int button, int down);
void	 input_release_all(struct input *in);

#endif
