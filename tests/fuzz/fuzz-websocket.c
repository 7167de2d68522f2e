/*
 * tests/fuzz/fuzz-websocket.c — libFuzzer target for the front door's
 * websocket layer (gateway/websocket.c): any bytes as client frames, fed
 * in two pieces as a socket might deliver them, and as an HTTP upgrade
 * request to parse and answer; every call must return a status, never
 * crash or overrun.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/websocket.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ws_decoder d;
	struct wbuf out, reply;
	struct ws_request r;
	char resp[WS_RESPONSE_MAX];
	size_t cut = size > 0 ? data[0] % (size + 1) : 0, used = 0;

	memset(&d, 0, sizeof(d));
	wbuf_init(&out, 4096);
	wbuf_init(&reply, 512);
	if (ws_decode(&d, data, cut, &out, &reply, &used) == WS_OK)
		(void)ws_decode(&d, data + used, size - used, &out, &reply,
		    &used);
	wbuf_free(&out);
	wbuf_free(&reply);
	switch (ws_request_parse(data, size, &r)) {
	case WS_REQ_OK:
		if (r.len > size)
			abort();
		(void)ws_response(&r, resp, sizeof(resp));
		(void)ws_path_has_token(r.path, "tok");
		break;
	case WS_REQ_BAD:
		if (r.why == NULL)
			abort();
		break;
	default:
		break;
	}
	return 0;
}
