/*
 * record/pcapng.h — a pcapng capture of what the jail's forwarder sends,
 * as synthetic IPv4/TCP segments (docs/recording-format.md, "Network
 * capture"), so tshark/Wireshark decode the HTTP as if it had been
 * captured on the wire.
 *
 * The forwarder never sees packets, only the bytes of each connection;
 * this writer makes a TCP conversation of them: a three-way handshake
 * when the browser's connection is accepted, one PSH|ACK segment per
 * send (split at 65495 bytes), real sequence and acknowledgement numbers,
 * FIN|ACK when a side's half-close is passed on.  Link type RAW (IPv4
 * header first), microsecond timestamps.  The browser's end is a
 * synthetic address (192.0.2.2, TEST-NET-1), the backend's end its real
 * IPv4 address and port (192.0.2.1 for an IPv6 backend).
 *
 * Runs in the seccomp'd forwarder on an fd the supervisor opened: one
 * write() per block, no open, no allocation after pcapng_alloc.  Library
 * code: no logging; a write failure is sticky (every later call returns
 * it) so the caller can stop forwarding it can no longer capture.
 */
#ifndef RECORD_PCAPNG_H
#define RECORD_PCAPNG_H

#include <stddef.h>
#include <stdint.h>

#define PCAPNG_LINKTYPE_RAW	101
#define PCAPNG_SEG_MAX		65495	/* IPv4 total length - 40 */
#define PCAPNG_BROWSER_IP	0xc0000202u	/* 192.0.2.2 */
#define PCAPNG_V6_BACKEND_IP	0xc0000201u	/* 192.0.2.1 */

enum pcapng_status {
	PCAPNG_OK = 0,
	PCAPNG_EINVAL,
	PCAPNG_ENOMEM,
	PCAPNG_EWRITE		/* errno says why */
};

enum pcapng_side { PCAPNG_BROWSER = 0, PCAPNG_BACKEND = 1 };

/* One synthetic TCP conversation; plain data the caller keeps. */
struct pcapng_flow {
	uint32_t	 ip[2];		/* [side], host byte order */
	uint16_t	 port[2];
	uint32_t	 seq[2];	/* the next byte's sequence number */
	int		 fin[2];	/* that side's FIN was written */
};

struct pcapng;

/* A writer on fd (owned by the caller); NULL if out of memory. */
struct pcapng *pcapng_alloc(int fd);
void	 pcapng_free(struct pcapng *p);		/* NULL: no-op */
/* The section header and the one interface (named ifname). */
int	 pcapng_begin(struct pcapng *p, const char *ifname);

/* A flow for connection `id` to backend_ip:backend_port (host order). */
void	 pcapng_flow_init(struct pcapng_flow *fl, unsigned long id,
	    uint32_t backend_ip, uint16_t backend_port);
/* SYN, SYN|ACK, ACK. */
int	 pcapng_open(struct pcapng *p, struct pcapng_flow *fl, uint64_t ts_us);
/* n bytes `side` sent, as segments of at most PCAPNG_SEG_MAX. */
int	 pcapng_data(struct pcapng *p, struct pcapng_flow *fl,
	    enum pcapng_side side, const void *d, size_t n, uint64_t ts_us);
/* FIN|ACK from side and the other's ACK (once per side). */
int	 pcapng_fin(struct pcapng *p, struct pcapng_flow *fl,
	    enum pcapng_side side, uint64_t ts_us);

int	 pcapng_status(const struct pcapng *p);
const char *pcapng_strerror(int status);

#endif
