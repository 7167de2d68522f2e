/*
 * gateway/preauth.h — who may hold a session's door open, counted by
 * source address.
 *
 * A stranger who can reach the port must not be able to lock the
 * researcher out without a password.  So the connections that have not
 * authenticated yet are a small table shared by all addresses, of which
 * one address may hold only a few: a newcomer from an address at its
 * share is refused; when the table is full, the oldest connection of the
 * address holding the most slots makes room (never a newcomer from a
 * quieter address refused).  Failed logins back off per address: a few
 * are free, then each further one closes that address's door for twice
 * as long as the last (the researcher's address is not affected).  An
 * address is one IPv4 address, or an IPv6 /64 (what one host is given);
 * IPv4-mapped IPv6 addresses count as IPv4.  Refusals are reported once
 * per burst per address, the rest counted.
 *
 * Pure bookkeeping on a caller-supplied monotonic clock (microseconds),
 * so the unit test drives it with an injected clock.  Used by the
 * worker's door (gateway/vnc.c: connections and VNC passwords) and by
 * the tls process (gateway/tlsfront.c: VeNCrypt logins).
 * Trust: none needed; it only counts.
 */
#ifndef GATEWAY_PREAUTH_H
#define GATEWAY_PREAUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PREAUTH_MAX_CONNS	8	/* unauthenticated, all addresses */
#define PREAUTH_PER_ADDR	2	/* ... from one address */
#define PREAUTH_FREE_FAILS	3	/* failed logins before the back-off */
#define PREAUTH_BACKOFF_US	2000000ULL	/* first back-off, doubling */
#define PREAUTH_BACKOFF_MAX_US	60000000ULL	/* ... up to a minute */
#define PREAUTH_FORGET_US	600000000ULL	/* failures forgotten after
						   10 min without one */
#define PREAUTH_BURST_GAP_US	10000000ULL	/* refusals this far apart are
						   separate bursts */
#define PREAUTH_BURST_LOG_US	60000000ULL	/* a burst that goes on is
						   reported again this often */
#define PREAUTH_HOSTS		64	/* addresses remembered */
/* Logins of all addresses together (a token bucket each in the worker
 * and the tls process): the last resort behind the per-address back-off,
 * which holds one address to PREAUTH_FREE_FAILS, then below 1/s. */
#define PREAUTH_LOGIN_RATE	1.0	/* per second */
#define PREAUTH_LOGIN_BURST	10.0
#define PREAUTH_ADDR_STR	48	/* "ffff:...:ffff::/64" */

enum preauth_status {
	PREAUTH_OK = 0,
	PREAUTH_ENOMEM,
	PREAUTH_EADDR		/* not an IPv4/IPv6 address */
};

/* An address as counted: family, then 4 bytes (IPv4) or 8 (the /64). */
struct preauth_addr {
	uint8_t		 family;	/* AF_INET, AF_INET6; 0: unknown */
	uint8_t		 b[8];
};

enum preauth_verdict {
	PREAUTH_ADMIT = 0,	/* take it (*victim may have to go first) */
	PREAUTH_REFUSE_SHARE,	/* the address holds its share */
	PREAUTH_REFUSE_BACKOFF	/* the address failed too many logins */
};

struct preauth;

int	 preauth_alloc(struct preauth **pap);
void	 preauth_free(struct preauth *pa);
const char *preauth_strerror(int status);

/* The counted address of a peer, from accept(2)'s or from our own
 * "ip:port" / "[ip6]:port" text.  Anything else is PREAUTH_EADDR and
 * leaves *a the "unknown" address (all unknown peers share one share). */
int	 preauth_addr_of(struct preauth_addr *a, const struct sockaddr *sa,
	    socklen_t len);
int	 preauth_addr_parse(struct preauth_addr *a, const char *text);
/* "192.0.2.7" or "2001:db8:1:2::/64", for the log. */
void	 preauth_addr_str(const struct preauth_addr *a, char *buf,
	    size_t size);

/*
 * A new unauthenticated connection from a.  PREAUTH_ADMIT sets *id
 * (never 0) and, if the table was full, *victim to the id of the
 * connection that must be closed to make room (0 if none; it is no
 * longer counted).  Otherwise nothing is counted and *id is 0.
 */
enum preauth_verdict preauth_admit(struct preauth *pa,
	    const struct preauth_addr *a, uint64_t now, uint32_t *id,
	    uint32_t *victim);
/* The connection authenticated or went away; unknown ids are ignored
 * (so a connection already evicted may be released again). */
void	 preauth_release(struct preauth *pa, uint32_t id);
/* Unauthenticated connections counted now (from a; NULL: all). */
unsigned preauth_count(const struct preauth *pa,
	    const struct preauth_addr *a);

/* May a try a password now?  If not, *wait_us says for how long not. */
int	 preauth_login_allowed(struct preauth *pa,
	    const struct preauth_addr *a, uint64_t now, uint64_t *wait_us);
void	 preauth_login_failed(struct preauth *pa,
	    const struct preauth_addr *a, uint64_t now);
void	 preauth_login_ok(struct preauth *pa, const struct preauth_addr *a);

/*
 * One refusal of a: returns 1 if it is the first of a burst (or a burst
 * has gone on for PREAUTH_BURST_LOG_US since it was last logged) and
 * should be logged, with *suppressed the refusals of a not logged since
 * its last logged one; 0 if it is only counted.
 */
int	 preauth_refusal(struct preauth *pa, const struct preauth_addr *a,
	    uint64_t now, unsigned long *suppressed);

#endif
