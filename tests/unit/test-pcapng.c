/*
 * tests/unit/test-pcapng.c — the forwarder's synthetic capture
 * (record/pcapng.c): block structure read back independently, IPv4 and
 * TCP checksums, sequence/acknowledgement numbers across a conversation,
 * segmentation at 65495 bytes, and a sticky write failure (/dev/full).
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/pcapng.h"
#include "tests/tap.h"

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint32_t
be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint16_t
csum(const uint8_t *d, size_t n, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)d[i] << 8 | d[i + 1];
	if (n & 1)
		sum += (uint32_t)d[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One captured segment, as a reader sees it. */
struct seg {
	uint32_t src, dst, seq, ack;
	uint16_t sport, dport;
	uint8_t	 flags;
	size_t	 len;
	int	 ip_ok, tcp_ok;
};

/* Walk the blocks of f: 0 if they are well formed; segments into s[]. */
static int
parse(const uint8_t *f, size_t n, struct seg *s, int max, int *nseg,
    uint16_t *linktype)
{
	size_t off = 0, len;
	uint8_t pseudo[12];

	*nseg = 0;
	while (off + 12 <= n) {
		uint32_t t = rd32(f + off);

		len = rd32(f + off + 4);
		if (len < 12 || len % 4 || off + len > n ||
		    rd32(f + off + len - 4) != len)
			return -1;
		if (t == 0x0a0d0d0a && rd32(f + off + 8) != 0x1a2b3c4d)
			return -1;
		if (t == 1)
			*linktype = (uint16_t)rd32(f + off + 8);
		if (t == 6 && *nseg < max) {
			const uint8_t *ip = f + off + 28;
			size_t cap = rd32(f + off + 20);
			struct seg *g = &s[(*nseg)++];

			if (cap < 40 || 28 + cap > len || be(ip + 2, 2) != cap)
				return -1;
			g->src = be(ip + 12, 4);
			g->dst = be(ip + 16, 4);
			g->sport = (uint16_t)be(ip + 20, 2);
			g->dport = (uint16_t)be(ip + 22, 2);
			g->seq = be(ip + 24, 4);
			g->ack = be(ip + 28, 4);
			g->flags = ip[33];
			g->len = cap - 40;
			g->ip_ok = csum(ip, 20, 0) == 0;
			memcpy(pseudo, ip + 12, 8);
			pseudo[8] = 0;
			pseudo[9] = 6;
			pseudo[10] = (uint8_t)((cap - 20) >> 8);
			pseudo[11] = (uint8_t)(cap - 20);
			g->tcp_ok = csum(ip + 20, cap - 20, 0xffff &
			    ~csum(pseudo, 12, 0)) == 0;
		}
		off += len;
	}
	return off == n ? 0 : -1;
}

static uint8_t *
slurp(FILE *fp, size_t *n)
{
	uint8_t *d;
	long sz;

	fseek(fp, 0, SEEK_END);
	sz = ftell(fp);
	rewind(fp);
	d = malloc((size_t)sz + 1);
	*n = fread(d, 1, (size_t)sz, fp);
	return d;
}

static void
test_conversation(void)
{
	static uint8_t big[70000];
	static struct seg s[64];
	struct pcapng_flow fl;
	struct pcapng *p;
	FILE *fp = tmpfile();
	uint16_t lt = 0;
	size_t n;
	uint8_t *f;
	int ns, i, ok;

	memset(big, 'b', sizeof(big));
	p = pcapng_alloc(fileno(fp));
	tap_ok(p != NULL && pcapng_begin(p, "cdsgate-forward") == PCAPNG_OK,
	    "section header and interface written");
	pcapng_flow_init(&fl, 7, 0x7f000001u, 8080);
	pcapng_open(p, &fl, 1000);
	pcapng_data(p, &fl, PCAPNG_BROWSER, "GET / HTTP/1.1\r\n\r\n", 18, 2000);
	pcapng_data(p, &fl, PCAPNG_BACKEND, big, sizeof(big), 3000);
	pcapng_fin(p, &fl, PCAPNG_BROWSER, 4000);
	pcapng_fin(p, &fl, PCAPNG_BACKEND, 4000);
	tap_ok(pcapng_fin(p, &fl, PCAPNG_BACKEND, 4000) == PCAPNG_OK,
	    "a second FIN from a side is a no-op");
	f = slurp(fp, &n);
	tap_ok(parse(f, n, s, 64, &ns, &lt) == 0 && lt == PCAPNG_LINKTYPE_RAW,
	    "the file reads back as well-formed pcapng blocks, link type RAW "
	    "(%zu bytes)", n);
	tap_ok(ns == 3 + 1 + 2 + 4, "10 segments: handshake, request, the "
	    "70000-byte response in 2, two FIN+ACK pairs (%d)", ns);
	for (i = 0, ok = 1; i < ns; i++)
		ok &= s[i].ip_ok && s[i].tcp_ok;
	tap_ok(ok, "every IPv4 and TCP checksum verifies");
	tap_ok(s[0].flags == 0x02 && s[1].flags == 0x12 && s[2].flags == 0x10 &&
	    s[1].ack == s[0].seq + 1 && s[2].ack == s[1].seq + 1,
	    "SYN, SYN|ACK, ACK with matching numbers");
	tap_ok(s[0].src == PCAPNG_BROWSER_IP && s[0].dst == 0x7f000001u &&
	    s[0].dport == 8080 && s[0].sport == 1024 + 7,
	    "browser 192.0.2.2:1031 to the backend 127.0.0.1:8080");
	tap_ok(s[3].len == 18 && s[3].seq == s[0].seq + 1 &&
	    s[3].ack == s[1].seq + 1, "the request: 18 bytes at the first "
	    "sequence number after the SYN");
	tap_ok(s[4].len == PCAPNG_SEG_MAX && s[5].len == 70000 -
	    PCAPNG_SEG_MAX && s[5].seq == s[4].seq + PCAPNG_SEG_MAX &&
	    s[4].ack == s[3].seq + 18, "the response split at %d bytes, "
	    "sequence continuous, acknowledging the request", PCAPNG_SEG_MAX);
	tap_ok(s[6].flags == 0x11 && s[6].seq == s[3].seq + 18 &&
	    s[7].ack == s[6].seq + 1 && s[8].flags == 0x11 &&
	    s[8].seq == s[5].seq + s[5].len, "FIN|ACK from each side at its "
	    "stream's end, acknowledged");
	free(f);
	pcapng_free(p);
	fclose(fp);
}

static void
test_failure(void)
{
	struct pcapng_flow fl;
	struct pcapng *p;
	int fd = open("/dev/full", O_WRONLY), r;

	if (fd < 0) {
		tap_ok(1, "# SKIP /dev/full missing");
		return;
	}
	p = pcapng_alloc(fd);
	r = pcapng_begin(p, NULL);
	tap_ok(r == PCAPNG_EWRITE, "a full disk: EWRITE (%s)",
	    pcapng_strerror(r));
	pcapng_flow_init(&fl, 1, 1, 1);
	tap_ok(pcapng_data(p, &fl, PCAPNG_BROWSER, "x", 1, 0) ==
	    PCAPNG_EWRITE && pcapng_status(p) == PCAPNG_EWRITE,
	    "the failure is sticky");
	tap_ok(pcapng_data(p, &fl, 5, "x", 1, 0) == PCAPNG_EINVAL &&
	    pcapng_alloc(-1) == NULL, "bad arguments are refused");
	pcapng_free(p);
	pcapng_free(NULL);
	close(fd);
}

int
main(void)
{
	test_conversation();
	test_failure();
	return tap_done();
}
