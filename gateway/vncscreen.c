/*
 * gateway/vncscreen.c — one LibVNCServer screen set-up for the session
 * worker and the replay viewer (see vncscreen.h), so neither can forget
 * to switch off one of the library's defaults (its HTTP server, file
 * transfer, an IPv6 listener).
 *
 * Trust: set-up only, before any client connects; no input is parsed.
 */
#include "config.h"

#include <stdint.h>

#include "gateway/vncscreen.h"

/* The pixel format, then everything the library would otherwise decide
 * by default about the network. */
rfbScreenInfoPtr
vnc_screen_new(const char *desktop, int width, int height, int red_shift,
    int green_shift, int blue_shift, void *data)
{
	char arg0[] = "cdsgate", *argv[] = { arg0, NULL };
	int argc = 1;
	rfbScreenInfoPtr s;

	if ((s = rfbGetScreen(&argc, argv, width, height, 8, 3, 4)) == NULL)
		return NULL;
	s->serverFormat.bitsPerPixel = 32;
	s->serverFormat.depth = 24;
	s->serverFormat.bigEndian = FALSE;
	s->serverFormat.trueColour = TRUE;
	s->serverFormat.redMax = 255;
	s->serverFormat.greenMax = 255;
	s->serverFormat.blueMax = 255;
	s->serverFormat.redShift = (uint8_t)red_shift;
	s->serverFormat.greenShift = (uint8_t)green_shift;
	s->serverFormat.blueShift = (uint8_t)blue_shift;
	s->screenData = data;
	s->desktopName = desktop;
	s->port = 0;
	s->ipv6port = 0;
	s->httpPort = 0;
	s->http6Port = 0;
	s->autoPort = FALSE;
	s->alwaysShared = TRUE;		/* a client cannot kick another out */
	s->ignoreSIGPIPE = TRUE;
	s->permitFileTransfer = FALSE;
	return s;
}

void
vnc_des_warm_up(void)
{
	unsigned char b[CHALLENGESIZE] = { 0 };
	char pw[] = "warm-up";

	rfbEncryptBytes(b, pw);
}
