/*
 * gateway/vncscreen.h — the LibVNCServer screen both of cdsgate's RFB
 * servers start from: the session worker's (gateway/vnc.c) and the
 * auditor's replay viewer (cli/replay-serve.c).
 */
#ifndef GATEWAY_VNCSCREEN_H
#define GATEWAY_VNCSCREEN_H

#include <rfb/rfb.h>

/*
 * A screen of width x height, 32-bit little-endian true colour with the
 * given channel shifts (the framebuffer's own layout: X's or the
 * recording's), screenData = data, and the library's network defaults
 * switched off: no listener (port 0: the caller sets one, or accepts
 * itself), no IPv6 port, no HTTP server, no auto port, no file transfer;
 * every client shared; SIGPIPE ignored.  The caller adds the framebuffer,
 * passwords and event hooks, then rfbInitServer().  NULL: out of memory.
 */
rfbScreenInfoPtr vnc_screen_new(const char *desktop, int width, int height,
    int red_shift, int green_shift, int blue_shift, void *data);

/* The library's DES (VncAuth) is libgcrypt, which initialises itself at
 * first use: it reads /proc/sys/crypto/fips_enabled and /etc/gcrypt/
 * and may open a syslog socket.  Call this before any seccomp filter so
 * that happens now, not at the first login. */
void	vnc_des_warm_up(void);

#endif
