/*
 * gateway/clipboard.h — the clipboard is closed in both directions.
 *
 * Client to session: every ClientCutText (Latin-1, and the UTF-8 form of
 * the extended-clipboard extension) is dropped and logged with its size,
 * never its content.  Session to client: the worker never calls
 * rfbSendServerCutText and never reads an X selection, so nothing
 * copied inside the browser can leave.  Trust: the cut text comes from
 * an untrusted client.
 */
#ifndef GATEWAY_CLIPBOARD_H
#define GATEWAY_CLIPBOARD_H

#include <rfb/rfb.h>

/* Install the drop-and-log hooks on a screen (setXCutText and, where
 * the library has it, setXCutTextUTF8). */
void	clipboard_install(rfbScreenInfoPtr screen);
/* Number of cut texts dropped so far (for the tests and the summary). */
unsigned long clipboard_dropped(void);

#endif
