/*
 * tests/fuzz/fuzz-http.c — libFuzzer target for the forwarder's HTTP
 * framing (gateway/http.c).  The input is both sides of one connection:
 * byte 0 picks where the requests end, byte 1 the output room per step,
 * byte 2 how the bytes arrive (in pieces); the two sides are stepped in
 * turn as the forwarder does.  Any bytes must frame or fail with a
 * status, never crash, read out of bounds or ask for more than the room.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gateway/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct side {
	const uint8_t	*d;
	size_t		 len, avail, off;
	int		 dead;
};

/* Step one side until it waits; 1 if it moved anything. */
static int
pump(struct http_conn *hc, enum http_side s, struct side *p, size_t room)
{
	struct http_step st;
	int moved = 0;

	while (!p->dead) {
		http_step(hc, s, p->d + p->off, p->avail - p->off,
		    p->avail == p->len, room, 0, &st);
		if (st.action == HTTP_HEAD || st.action == HTTP_PASS) {
			if (st.consume + st.insert_len > room ||
			    st.consume > p->avail - p->off ||
			    (st.action == HTTP_HEAD &&
			    st.insert_at > st.consume))
				abort();	/* a contract broken */
			p->off += st.consume;
			moved |= st.consume > 0 || st.done != NULL;
			if (st.consume == 0 && st.done == NULL)
				break;
		} else {
			p->dead = st.action == HTTP_FAIL ||
			    st.action == HTTP_EOF;
			break;
		}
	}
	return moved;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct side s[2] = { { 0 } };
	struct http_conn *hc;
	size_t split, room, piece;
	int i, moved;

	if (size < 3 || (hc = http_conn_alloc()) == NULL)
		return 0;
	split = 3 + (size - 3) * data[0] / 255;
	room = 1 + (size_t)data[1] * 256;
	if (room > HTTP_HEAD_MAX + HTTP_INSERT_MAX)
		room = HTTP_HEAD_MAX + HTTP_INSERT_MAX;
	piece = 1 + data[2];
	s[HTTP_REQ].d = data + 3;
	s[HTTP_REQ].len = split - 3;
	s[HTTP_RESP].d = data + split;
	s[HTTP_RESP].len = size - split;
	do {
		moved = 0;
		for (i = 0; i < 2; i++) {
			s[i].avail += piece;
			if (s[i].avail > s[i].len)
				s[i].avail = s[i].len;
			moved |= pump(hc, (enum http_side)i, &s[i], room);
		}
	} while (moved || s[0].avail < s[0].len || s[1].avail < s[1].len);
	(void)http_type_is_document((const char *)data, size < 64 ? size : 64);
	http_conn_free(hc);
	return 0;
}
