/*
 * gateway/clipboard.c — drop every ClientCutText and log only its size.
 *
 * Why here and not in a protocol extension: LibVNCServer hands cut text
 * to setXCutText / setXCutTextUTF8 after it has read the message (and it
 * already refuses lengths over 1 MB by closing the client), so these two
 * hooks see every form a client can send.  The content is never looked
 * at, copied or logged.  The opposite direction needs no code: nothing
 * here or elsewhere in the worker calls rfbSendServerCutText or asks X
 * for a selection.  Trust: unprivileged; untrusted bytes, never read.
 */
#include "config.h"

#include <jansson.h>

#include "gateway/clipboard.h"
#include "gateway/slog.h"

static unsigned long clipboard_ndropped;

/* One log line per cut text: size and form, plus the peer's address. */
static void
clipboard_drop(const char *form, int len, rfbClientPtr cl)
{
	clipboard_ndropped++;
	slog_event("clipboard_dropped", json_pack("{s:s, s:i, s:s}",
	    "form", form, "size", len < 0 ? 0 : len,
	    "client", cl != NULL && cl->host != NULL ? cl->host : "?"));
}

static void
clipboard_latin1(char *str, int len, rfbClientPtr cl)
{
	(void)str;
	clipboard_drop("latin1", len, cl);
}

#ifdef LIBVNCSERVER_HAVE_LIBZ
static void
clipboard_utf8(char *str, int len, rfbClientPtr cl)
{
	(void)str;
	clipboard_drop("utf8", len, cl);
}
#endif

void
clipboard_install(rfbScreenInfoPtr screen)
{
	screen->setXCutText = clipboard_latin1;
#ifdef LIBVNCSERVER_HAVE_LIBZ
	screen->setXCutTextUTF8 = clipboard_utf8;
#endif
}

unsigned long
clipboard_dropped(void)
{
	return clipboard_ndropped;
}
