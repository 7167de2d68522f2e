/*
 * gateway/preauth.c — the pre-authentication table and the per-address
 * login back-off (see preauth.h).  Two small arrays searched linearly
 * (PREAUTH_MAX_CONNS connections, PREAUTH_HOSTS addresses): no
 * allocation after preauth_alloc, nothing that grows with the number of
 * attackers.  Trust: none needed; it only counts.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/preauth.h"

struct pa_conn {
	uint32_t		 id;		/* 0: free */
	struct preauth_addr	 a;
	uint64_t		 t0;
};

struct pa_host {
	int			 used;
	struct preauth_addr	 a;
	uint64_t		 seen;		/* last touched, for reuse */
	unsigned		 fails;		/* failed logins in a row */
	uint64_t		 last_fail;
	uint64_t		 until;		/* back-off ends */
	int			 refused;	/* a refusal burst was seen */
	uint64_t		 last_refusal;
	uint64_t		 logged;	/* us a refusal was last logged */
	unsigned long		 quiet;		/* refusals not logged */
};

struct preauth {
	struct pa_conn		 conn[PREAUTH_MAX_CONNS];
	struct pa_host		 host[PREAUTH_HOSTS];
	uint32_t		 next_id;
};

const char *
preauth_strerror(int status)
{
	switch (status) {
	case PREAUTH_OK:	return "ok";
	case PREAUTH_ENOMEM:	return "out of memory";
	case PREAUTH_EADDR:	return "not an IPv4 or IPv6 address";
	}
	return "unknown pre-authentication error";
}

int
preauth_alloc(struct preauth **pap)
{
	if ((*pap = calloc(1, sizeof(**pap))) == NULL)
		return PREAUTH_ENOMEM;
	(*pap)->next_id = 1;
	return PREAUTH_OK;
}

void
preauth_free(struct preauth *pa)
{
	free(pa);
}

/* ---- addresses ------------------------------------------------------- */

static int
pa_eq(const struct preauth_addr *x, const struct preauth_addr *y)
{
	return x->family == y->family && memcmp(x->b, y->b, sizeof(x->b)) == 0;
}

/* An IPv6 address: its /64, or the IPv4 address it maps. */
static void
pa_set6(struct preauth_addr *a, const struct in6_addr *in6)
{
	memset(a, 0, sizeof(*a));
	if (IN6_IS_ADDR_V4MAPPED(in6)) {
		a->family = AF_INET;
		memcpy(a->b, in6->s6_addr + 12, 4);
		return;
	}
	a->family = AF_INET6;
	memcpy(a->b, in6->s6_addr, 8);
}

int
preauth_addr_of(struct preauth_addr *a, const struct sockaddr *sa,
    socklen_t len)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		a->family = AF_INET;
		memcpy(a->b, &((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr, 4);
		return PREAUTH_OK;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		pa_set6(a, &((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_addr);
		return PREAUTH_OK;
	}
	return PREAUTH_EADDR;
}

int
preauth_addr_parse(struct preauth_addr *a, const char *text)
{
	char host[INET6_ADDRSTRLEN];
	const char *end;
	struct in_addr in4;
	struct in6_addr in6;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (text[0] == '[') {
		if ((end = strchr(text, ']')) == NULL)
			return PREAUTH_EADDR;
		text++;
	} else if ((end = strrchr(text, ':')) == NULL)
		end = text + strlen(text);
	n = (size_t)(end - text);
	if (n == 0 || n >= sizeof(host))
		return PREAUTH_EADDR;
	memcpy(host, text, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, &in4) == 1) {
		a->family = AF_INET;
		memcpy(a->b, &in4, 4);
		return PREAUTH_OK;
	}
	if (inet_pton(AF_INET6, host, &in6) == 1) {
		pa_set6(a, &in6);
		return PREAUTH_OK;
	}
	return PREAUTH_EADDR;
}

void
preauth_addr_str(const struct preauth_addr *a, char *buf, size_t size)
{
	char s[INET6_ADDRSTRLEN];
	struct in6_addr in6;

	if (a->family == AF_INET &&
	    inet_ntop(AF_INET, a->b, s, sizeof(s)) != NULL) {
		snprintf(buf, size, "%s", s);
		return;
	}
	memset(&in6, 0, sizeof(in6));
	memcpy(in6.s6_addr, a->b, 8);
	if (a->family == AF_INET6 &&
	    inet_ntop(AF_INET6, &in6, s, sizeof(s)) != NULL) {
		snprintf(buf, size, "%s/64", s);
		return;
	}
	snprintf(buf, size, "unknown");
}

/* ---- per-address memory ---------------------------------------------- */

static struct pa_host *
pa_host_find(struct preauth *pa, const struct preauth_addr *a)
{
	size_t i;

	for (i = 0; i < PREAUTH_HOSTS; i++)
		if (pa->host[i].used && pa_eq(&pa->host[i].a, a))
			return &pa->host[i];
	return NULL;
}

/* a's entry, made if need be in a free one or the least recently
 * touched (the table is bounded: addresses beyond it are forgotten). */
static struct pa_host *
pa_host_get(struct preauth *pa, const struct preauth_addr *a, uint64_t now)
{
	struct pa_host *h = pa_host_find(pa, a), *old = &pa->host[0];
	size_t i;

	if (h == NULL) {
		for (i = 0; i < PREAUTH_HOSTS && pa->host[i].used; i++)
			if (pa->host[i].seen < old->seen)
				old = &pa->host[i];
		h = i < PREAUTH_HOSTS ? &pa->host[i] : old;
		memset(h, 0, sizeof(*h));
		h->used = 1;
		h->a = *a;
	}
	h->seen = now;
	return h;
}

/* Failures end after PREAUTH_FORGET_US without one. */
static void
pa_host_age(struct pa_host *h, uint64_t now)
{
	if (h->fails > 0 && now >= h->last_fail + PREAUTH_FORGET_US) {
		h->fails = 0;
		h->until = 0;
	}
}

/* ---- connections ------------------------------------------------------ */

unsigned
preauth_count(const struct preauth *pa, const struct preauth_addr *a)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < PREAUTH_MAX_CONNS; i++)
		n += pa->conn[i].id != 0 &&
		    (a == NULL || pa_eq(&pa->conn[i].a, a));
	return n;
}

/* The full table's victim: the oldest connection of the address that
 * holds the most (of equals, the one whose oldest is oldest). */
static struct pa_conn *
pa_victim(struct preauth *pa)
{
	struct pa_conn *best = NULL, *c, *o;
	unsigned n, bestn = 0;
	size_t i, j;

	for (i = 0; i < PREAUTH_MAX_CONNS; i++) {
		c = &pa->conn[i];
		n = preauth_count(pa, &c->a);
		o = c;
		for (j = 0; j < PREAUTH_MAX_CONNS; j++)
			if (pa->conn[j].id != 0 && pa_eq(&pa->conn[j].a, &c->a) &&
			    pa->conn[j].t0 < o->t0)
				o = &pa->conn[j];
		if (best == NULL || n > bestn ||
		    (n == bestn && o->t0 < best->t0)) {
			best = o;
			bestn = n;
		}
	}
	return best;
}

static uint32_t
pa_new_id(struct preauth *pa)
{
	uint32_t id = pa->next_id++;

	if (pa->next_id == 0)
		pa->next_id = 1;
	return id;
}

enum preauth_verdict
preauth_admit(struct preauth *pa, const struct preauth_addr *a, uint64_t now,
    uint32_t *id, uint32_t *victim)
{
	struct pa_conn *c = NULL;
	uint64_t wait;
	size_t i;

	*id = *victim = 0;
	if (!preauth_login_allowed(pa, a, now, &wait))
		return PREAUTH_REFUSE_BACKOFF;
	if (preauth_count(pa, a) >= PREAUTH_PER_ADDR)
		return PREAUTH_REFUSE_SHARE;
	for (i = 0; i < PREAUTH_MAX_CONNS && c == NULL; i++)
		if (pa->conn[i].id == 0)
			c = &pa->conn[i];
	if (c == NULL) {
		c = pa_victim(pa);
		*victim = c->id;
	}
	c->id = *id = pa_new_id(pa);
	c->a = *a;
	c->t0 = now;
	return PREAUTH_ADMIT;
}

void
preauth_release(struct preauth *pa, uint32_t id)
{
	size_t i;

	for (i = 0; id != 0 && i < PREAUTH_MAX_CONNS; i++)
		if (pa->conn[i].id == id)
			memset(&pa->conn[i], 0, sizeof(pa->conn[i]));
}

/* ---- logins ------------------------------------------------------------ */

int
preauth_login_allowed(struct preauth *pa, const struct preauth_addr *a,
    uint64_t now, uint64_t *wait_us)
{
	struct pa_host *h = pa_host_find(pa, a);

	*wait_us = 0;
	if (h == NULL)
		return 1;
	pa_host_age(h, now);
	if (now >= h->until)
		return 1;
	*wait_us = h->until - now;
	return 0;
}

void
preauth_login_failed(struct preauth *pa, const struct preauth_addr *a,
    uint64_t now)
{
	struct pa_host *h = pa_host_get(pa, a, now);
	uint64_t d = PREAUTH_BACKOFF_US;
	unsigned k;

	pa_host_age(h, now);
	h->fails++;
	h->last_fail = now;
	if (h->fails <= PREAUTH_FREE_FAILS)
		return;
	for (k = h->fails - PREAUTH_FREE_FAILS - 1;
	    k > 0 && d < PREAUTH_BACKOFF_MAX_US; k--)
		d *= 2;
	h->until = now + (d < PREAUTH_BACKOFF_MAX_US ? d :
	    PREAUTH_BACKOFF_MAX_US);
}

void
preauth_login_ok(struct preauth *pa, const struct preauth_addr *a)
{
	struct pa_host *h = pa_host_find(pa, a);

	if (h != NULL) {
		h->fails = 0;
		h->until = 0;
	}
}

int
preauth_refusal(struct preauth *pa, const struct preauth_addr *a,
    uint64_t now, unsigned long *suppressed)
{
	struct pa_host *h = pa_host_get(pa, a, now);
	int first = !h->refused ||
	    now >= h->last_refusal + PREAUTH_BURST_GAP_US ||
	    now >= h->logged + PREAUTH_BURST_LOG_US;

	*suppressed = 0;
	h->refused = 1;
	h->last_refusal = now;
	if (!first) {
		h->quiet++;
		return 0;
	}
	*suppressed = h->quiet;
	h->quiet = 0;
	h->logged = now;
	return 1;
}
