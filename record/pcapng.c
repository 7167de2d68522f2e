/*
 * record/pcapng.c — the forwarder's synthetic IPv4/TCP capture (see
 * pcapng.h).  Writes only what its caller hands it, to an fd it was
 * given; runs unprivileged under the FORWARD seccomp profile.  Each block
 * is built in one capped struct wbuf (grown once, then reused) and
 * written with one write().
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "record/pcapng.h"

#define BT_SHB		0x0a0d0d0au
#define BT_IDB		0x00000001u
#define BT_EPB		0x00000006u
#define BOM		0x1a2b3c4du
#define OPT_IF_NAME	2
#define HDR_LEN		40		/* IPv4 + TCP, no options */
#define BLOCK_MAX	(32 + HDR_LEN + PCAPNG_SEG_MAX + 3 + 4)

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_PSH		0x08
#define TCP_ACK		0x10

struct pcapng {
	int		 fd;
	int		 status;
	int		 err;		/* errno of a failed write */
	uint16_t	 ip_id;
	struct wbuf	 w;
};

struct pcapng *
pcapng_alloc(int fd)
{
	struct pcapng *p;

	if (fd < 0 || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->fd = fd;
	wbuf_init(&p->w, BLOCK_MAX);
	return p;
}

void
pcapng_free(struct pcapng *p)
{
	if (p == NULL)
		return;
	wbuf_free(&p->w);
	free(p);
}

int
pcapng_status(const struct pcapng *p)
{
	return p->status;
}

const char *
pcapng_strerror(int status)
{
	switch (status) {
	case PCAPNG_OK:
		return "ok";
	case PCAPNG_EINVAL:
		return "invalid argument";
	case PCAPNG_ENOMEM:
		return "out of memory";
	case PCAPNG_EWRITE:
		return "write failed";
	}
	return "unknown pcapng error";
}

/* pcapng numbers are in the writer's byte order (the BOM says which). */
static void
put32(struct wbuf *w, uint32_t v)
{
	wbuf_put(w, &v, sizeof(v));
}

static void
put16(struct wbuf *w, uint16_t v)
{
	wbuf_put(w, &v, sizeof(v));
}

/* Zero bytes up to the next multiple of 4. */
static void
pad4(struct wbuf *w)
{
	static const uint8_t zero[3];

	wbuf_put(w, zero, (4 - w->len % 4) % 4);
}

/* Patch the block's two length fields, then write it whole. */
static int
block_write(struct pcapng *p)
{
	uint32_t len = (uint32_t)p->w.len + 4;
	size_t off = 0;
	ssize_t n;

	if (p->status != PCAPNG_OK)
		return p->status;
	if (wbuf_put(&p->w, &len, 4) != BUF_OK || p->w.len != len)
		return p->status = PCAPNG_ENOMEM;
	memcpy(p->w.d + 4, &len, 4);
	while (off < p->w.len) {
		n = write(p->fd, p->w.d + off, p->w.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			p->err = n < 0 ? errno : EIO;
			return p->status = PCAPNG_EWRITE;
		}
		off += (size_t)n;
	}
	return PCAPNG_OK;
}

/* Start a block of type t; its length is patched by block_write. */
static void
block_begin(struct pcapng *p, uint32_t t)
{
	wbuf_reset(&p->w);
	put32(&p->w, t);
	put32(&p->w, 0);
}

int
pcapng_begin(struct pcapng *p, const char *ifname)
{
	size_t n = ifname != NULL ? strlen(ifname) : 0;
	int r;

	block_begin(p, BT_SHB);
	put32(&p->w, BOM);
	put16(&p->w, 1);			/* version 1.0 */
	put16(&p->w, 0);
	put32(&p->w, 0xffffffffu);		/* section length unknown */
	put32(&p->w, 0xffffffffu);
	if ((r = block_write(p)) != PCAPNG_OK)
		return r;
	block_begin(p, BT_IDB);
	put16(&p->w, PCAPNG_LINKTYPE_RAW);
	put16(&p->w, 0);
	put32(&p->w, 0);			/* no snap length */
	if (n > 0 && n < 256) {
		put16(&p->w, OPT_IF_NAME);
		put16(&p->w, (uint16_t)n);
		wbuf_put(&p->w, ifname, n);
		pad4(&p->w);
		put32(&p->w, 0);		/* opt_endofopt */
	}
	return block_write(p);
}

void
pcapng_flow_init(struct pcapng_flow *fl, unsigned long id,
    uint32_t backend_ip, uint16_t backend_port)
{
	memset(fl, 0, sizeof(*fl));
	fl->ip[PCAPNG_BROWSER] = PCAPNG_BROWSER_IP;
	fl->ip[PCAPNG_BACKEND] = backend_ip;
	fl->port[PCAPNG_BROWSER] = (uint16_t)(1024 + id % 64000);
	fl->port[PCAPNG_BACKEND] = backend_port;
	/* fixed initial sequence numbers: the capture is a reconstruction */
	fl->seq[PCAPNG_BROWSER] = 1000000u;
	fl->seq[PCAPNG_BACKEND] = 2000000u;
}

static void
be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
be32(uint8_t *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

/* The ones'-complement sum of RFC 1071, continued from sum. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *d, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)d[i] << 8 | d[i + 1];
	if (n & 1)
		sum += (uint32_t)d[n - 1] << 8;
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv4 + TCP headers of one segment from `side`, checksums included. */
static void
segment_headers(struct pcapng *p, const struct pcapng_flow *fl, int side,
    uint8_t flags, const uint8_t *d, size_t n, uint8_t h[HDR_LEN])
{
	uint8_t pseudo[12];
	uint32_t sum;

	memset(h, 0, HDR_LEN);
	h[0] = 0x45;
	be16(h + 2, (uint16_t)(HDR_LEN + n));
	be16(h + 4, p->ip_id++);
	be16(h + 6, 0x4000);			/* DF */
	h[8] = 64;
	h[9] = 6;				/* TCP */
	be32(h + 12, fl->ip[side]);
	be32(h + 16, fl->ip[!side]);
	be16(h + 10, csum_fold(csum_add(0, h, 20)));
	be16(h + 20, fl->port[side]);
	be16(h + 22, fl->port[!side]);
	be32(h + 24, fl->seq[side]);
	be32(h + 28, flags & TCP_ACK ? fl->seq[!side] : 0);
	h[32] = 5 << 4;
	h[33] = flags;
	be16(h + 34, 65535);			/* window */
	memcpy(pseudo, h + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 6;
	be16(pseudo + 10, (uint16_t)(20 + n));
	sum = csum_add(csum_add(csum_add(0, pseudo, 12), h + 20, 20), d, n);
	be16(h + 36, csum_fold(sum));
}

/* One Enhanced Packet Block: headers and n bytes of payload. */
static int
segment(struct pcapng *p, struct pcapng_flow *fl, int side, uint8_t flags,
    const uint8_t *d, size_t n, uint64_t ts)
{
	uint8_t h[HDR_LEN];

	if (p->status != PCAPNG_OK)
		return p->status;
	segment_headers(p, fl, side, flags, d, n, h);
	block_begin(p, BT_EPB);
	put32(&p->w, 0);			/* interface 0 */
	put32(&p->w, (uint32_t)(ts >> 32));
	put32(&p->w, (uint32_t)ts);
	put32(&p->w, (uint32_t)(HDR_LEN + n));	/* captured */
	put32(&p->w, (uint32_t)(HDR_LEN + n));	/* original */
	wbuf_put(&p->w, h, HDR_LEN);
	wbuf_put(&p->w, d, n);
	pad4(&p->w);
	fl->seq[side] += (uint32_t)n + (flags & (TCP_SYN | TCP_FIN) ? 1 : 0);
	return block_write(p);
}

int
pcapng_open(struct pcapng *p, struct pcapng_flow *fl, uint64_t ts_us)
{
	segment(p, fl, PCAPNG_BROWSER, TCP_SYN, NULL, 0, ts_us);
	segment(p, fl, PCAPNG_BACKEND, TCP_SYN | TCP_ACK, NULL, 0, ts_us);
	return segment(p, fl, PCAPNG_BROWSER, TCP_ACK, NULL, 0, ts_us);
}

int
pcapng_data(struct pcapng *p, struct pcapng_flow *fl, enum pcapng_side side,
    const void *d, size_t n, uint64_t ts_us)
{
	const uint8_t *b = d;
	size_t k;

	if ((unsigned)side > PCAPNG_BACKEND || (d == NULL && n > 0))
		return PCAPNG_EINVAL;
	for (; n > 0; b += k, n -= k) {
		k = n < PCAPNG_SEG_MAX ? n : PCAPNG_SEG_MAX;
		if (segment(p, fl, side, TCP_PSH | TCP_ACK, b, k, ts_us) !=
		    PCAPNG_OK)
			break;
	}
	return p->status;
}

int
pcapng_fin(struct pcapng *p, struct pcapng_flow *fl, enum pcapng_side side,
    uint64_t ts_us)
{
	if ((unsigned)side > PCAPNG_BACKEND)
		return PCAPNG_EINVAL;
	if (fl->fin[side])
		return p->status;
	fl->fin[side] = 1;
	segment(p, fl, side, TCP_FIN | TCP_ACK, NULL, 0, ts_us);
	return segment(p, fl, !side, TCP_ACK, NULL, 0, ts_us);
}
