/*
 * tests/unit/test-preauth.c — the pre-authentication table and the
 * per-address login back-off on an injected clock: shares, eviction of
 * the greediest address's oldest, IPv6 counted by /64, back-off doubling
 * and forgetting, one log line per refusal burst.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "gateway/preauth.h"
#include "tests/tap.h"

#define S(x)	((uint64_t)((x) * 1000000.0))

static struct preauth_addr
A(const char *text)
{
	struct preauth_addr a;

	if (preauth_addr_parse(&a, text) != PREAUTH_OK)
		tap_diag("cannot parse %s", text);
	return a;
}

static void
test_addresses(void)
{
	struct preauth_addr a, b;
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	char buf[PREAUTH_ADDR_STR];

	tap_ok(preauth_addr_parse(&a, "192.0.2.7:5900") == PREAUTH_OK,
	    "ip:port parses");
	preauth_addr_str(&a, buf, sizeof(buf));
	tap_ok(strcmp(buf, "192.0.2.7") == 0, "... and prints as %s", buf);
	b = A("[2001:db8:1:2:aaaa::1]:40000");
	a = A("[2001:db8:1:2:bbbb::9]:40001");
	tap_ok(memcmp(&a, &b, sizeof(a)) == 0,
	    "two IPv6 addresses in one /64 are one address");
	preauth_addr_str(&a, buf, sizeof(buf));
	tap_ok(strcmp(buf, "2001:db8:1:2::/64") == 0, "... printed %s", buf);
	b = A("[2001:db8:1:3::1]:1");
	tap_ok(memcmp(&a, &b, sizeof(a)) != 0, "the next /64 is another");
	b = A("[::ffff:192.0.2.7]:1");
	a = A("192.0.2.7:2");
	tap_ok(memcmp(&a, &b, sizeof(a)) == 0,
	    "an IPv4-mapped IPv6 address counts as the IPv4 address");
	tap_ok(preauth_addr_parse(&a, "?") == PREAUTH_EADDR &&
	    a.family == 0, "\"?\" is the unknown address");
	tap_ok(preauth_addr_parse(&a, "[::1") == PREAUTH_EADDR,
	    "an unclosed bracket is refused");
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.2", &s4.sin_addr);
	tap_ok(preauth_addr_of(&a, (struct sockaddr *)&s4, sizeof(s4)) ==
	    PREAUTH_OK && memcmp(&a, &(struct preauth_addr){ 0 }, 1) != 0,
	    "a sockaddr_in converts");
	b = A("127.0.0.2:9");
	tap_ok(memcmp(&a, &b, sizeof(a)) == 0, "... to the same as its text");
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8:1:2::77", &s6.sin6_addr);
	tap_ok(preauth_addr_of(&a, (struct sockaddr *)&s6, sizeof(s6)) ==
	    PREAUTH_OK, "a sockaddr_in6 converts");
	b = A("[2001:db8:1:2::1]:9");
	tap_ok(memcmp(&a, &b, sizeof(a)) == 0, "... to its /64");
	tap_ok(preauth_addr_of(&a, (struct sockaddr *)&s6, 8) == PREAUTH_EADDR,
	    "a short sockaddr is refused");
}

/* One address may hold its share, never more; others still get in. */
static void
test_share(void)
{
	struct preauth *pa;
	struct preauth_addr evil = A("127.0.0.2:1"), good = A("127.0.0.1:1");
	uint32_t id[4], v;
	int i, admitted = 0;

	if (preauth_alloc(&pa) != PREAUTH_OK) {
		tap_ok(0, "preauth_alloc");
		return;
	}
	for (i = 0; i < 50; i++) {
		uint32_t x;

		if (preauth_admit(pa, &evil, S(i * 0.01), &x, &v) ==
		    PREAUTH_ADMIT)
			id[admitted++ % 4] = x;
	}
	tap_ok(admitted == PREAUTH_PER_ADDR,
	    "50 connections from one address: %d admitted (share %d)",
	    admitted, PREAUTH_PER_ADDR);
	tap_ok(preauth_admit(pa, &evil, S(1), &id[2], &v) ==
	    PREAUTH_REFUSE_SHARE && id[2] == 0,
	    "the next is refused for its share, and gets no id");
	tap_ok(preauth_admit(pa, &good, S(1), &id[2], &v) == PREAUTH_ADMIT &&
	    id[2] != 0 && v == 0, "another address gets in, nobody evicted");
	tap_ok(preauth_count(pa, NULL) == 3 && preauth_count(pa, &evil) == 2,
	    "3 counted, 2 of them the first address's");
	preauth_release(pa, id[0]);
	preauth_release(pa, id[0]);
	tap_ok(preauth_count(pa, &evil) == 1,
	    "a release frees one slot (a second release of it is ignored)");
	tap_ok(preauth_admit(pa, &evil, S(2), &id[3], &v) == PREAUTH_ADMIT,
	    "... which the address may use again");
	tap_ok(id[3] != id[0], "with a fresh id");
	preauth_free(pa);
}

/* Many addresses fill the table: the greediest address's oldest goes. */
static void
test_evict(void)
{
	struct preauth *pa;
	struct preauth_addr a;
	char text[32];
	uint32_t id[PREAUTH_MAX_CONNS], x, v;
	int i, ok = 1;

	if (preauth_alloc(&pa) != PREAUTH_OK)
		return;
	/* 10.0.0.1 holds two (the oldest first), the rest one each. */
	for (i = 0; i < PREAUTH_MAX_CONNS; i++) {
		snprintf(text, sizeof(text), "10.0.0.%d:1", i < 2 ? 1 : i);
		a = A(text);
		ok &= preauth_admit(pa, &a, S(10 + i), &id[i], &v) ==
		    PREAUTH_ADMIT && v == 0;
	}
	tap_ok(ok, "%d connections fill the table without evicting",
	    PREAUTH_MAX_CONNS);
	a = A("192.0.2.1:1");
	tap_ok(preauth_admit(pa, &a, S(30), &x, &v) == PREAUTH_ADMIT && x != 0,
	    "a newcomer from a fresh address is admitted to the full table");
	tap_ok(v == id[0], "... and the victim is the oldest connection of the "
	    "address holding two");
	tap_ok(preauth_count(pa, NULL) == PREAUTH_MAX_CONNS,
	    "the table stays at %d", PREAUTH_MAX_CONNS);
	a = A("192.0.2.2:1");
	tap_ok(preauth_admit(pa, &a, S(31), &x, &v) == PREAUTH_ADMIT &&
	    v == id[1], "the next newcomer evicts that address's other one "
	    "(all hold one now: the oldest overall)");
	preauth_free(pa);
}

/* Free failures, then doubling back-off, capped; forgotten; reset by a
 * success; another address unaffected. */
static void
test_backoff(void)
{
	struct preauth *pa;
	struct preauth_addr evil = A("[2001:db8::1]:1"),
	    evil2 = A("[2001:db8::2]:1"), good = A("[2001:db8:0:1::1]:1");
	uint64_t w, t = S(100), prev = 0;
	uint32_t x, v;
	int i, allowed = 0, doubling = 1;

	if (preauth_alloc(&pa) != PREAUTH_OK)
		return;
	for (i = 0; i < PREAUTH_FREE_FAILS; i++) {
		allowed += preauth_login_allowed(pa, &evil, t, &w);
		preauth_login_failed(pa, &evil, t);
	}
	tap_ok(allowed == PREAUTH_FREE_FAILS,
	    "%d failures in a row are free", PREAUTH_FREE_FAILS);
	tap_ok(preauth_login_allowed(pa, &evil, t, &w), "... still no wait");
	preauth_login_failed(pa, &evil, t);
	allowed = preauth_login_allowed(pa, &evil2, t, &w);
	tap_ok(!allowed && w == PREAUTH_BACKOFF_US,
	    "the next failure closes the /64 for %.0f s (waited %.1f s)",
	    PREAUTH_BACKOFF_US / 1e6, w / 1e6);
	tap_ok(preauth_admit(pa, &evil2, t, &x, &v) == PREAUTH_REFUSE_BACKOFF,
	    "... new connections from it are refused meanwhile");
	tap_ok(preauth_login_allowed(pa, &good, t, &w) &&
	    preauth_admit(pa, &good, t, &x, &v) == PREAUTH_ADMIT,
	    "another /64 logs in and connects at once");
	prev = PREAUTH_BACKOFF_US;
	for (i = 0; i < 10; i++) {
		t += prev;		/* wait the back-off out, fail again */
		allowed = preauth_login_allowed(pa, &evil, t, &w);
		preauth_login_failed(pa, &evil, t);
		(void)preauth_login_allowed(pa, &evil, t, &w);
		if (!allowed || w != (2 * prev < PREAUTH_BACKOFF_MAX_US ?
		    2 * prev : PREAUTH_BACKOFF_MAX_US))
			doubling = 0;
		prev = w;
	}
	tap_ok(doubling, "each failure doubles the wait");
	tap_ok(prev == PREAUTH_BACKOFF_MAX_US, "up to %.0f s (%.1f s)",
	    PREAUTH_BACKOFF_MAX_US / 1e6, prev / 1e6);
	t += PREAUTH_FORGET_US;
	tap_ok(preauth_login_allowed(pa, &evil, t, &w),
	    "after %.0f min without a failure",
	    PREAUTH_FORGET_US / 60e6);
	preauth_login_failed(pa, &evil, t);
	tap_ok(preauth_login_allowed(pa, &evil, t, &w),
	    "... failures are forgotten (one more is free again)");
	for (i = 0; i < PREAUTH_FREE_FAILS + 3; i++)
		preauth_login_failed(pa, &good, t);
	preauth_login_ok(pa, &good);
	tap_ok(preauth_login_allowed(pa, &good, t, &w),
	    "a success ends the address's back-off");
	preauth_free(pa);
}

/* One line per burst; the burst's count comes with the next line. */
static void
test_refusal_log(void)
{
	struct preauth *pa;
	struct preauth_addr evil = A("127.0.0.2:1"), other = A("127.0.0.3:1");
	unsigned long sup, total = 0;
	int i, logged = 0;

	if (preauth_alloc(&pa) != PREAUTH_OK)
		return;
	for (i = 0; i < 1000; i++)	/* 1,000 over 100 s, 0.1 s apart */
		if (preauth_refusal(pa, &evil, S(i * 0.1), &sup)) {
			logged++;
			total += sup;
		}
	tap_ok(logged == 2 && total == 599, "1,000 refusals 0.1 s apart over "
	    "100 s: %d lines (the start, and again after %.0f s with the %lu "
	    "between)", logged, PREAUTH_BURST_LOG_US / 1e6, total);
	tap_ok(preauth_refusal(pa, &other, S(50), &sup) && sup == 0,
	    "another address's first refusal is logged on its own");
	logged = preauth_refusal(pa, &evil, S(100 + PREAUTH_BURST_GAP_US / 1e6),
	    &sup);
	tap_ok(logged && sup == 399,
	    "after a quiet gap a new burst is logged, with the 399 not logged "
	    "since (%lu)", sup);
	preauth_free(pa);
}

/* More addresses than the table remembers: bounded, still counting. */
static void
test_many_hosts(void)
{
	struct preauth *pa;
	struct preauth_addr a, first = A("10.1.0.0:1");
	char text[32];
	uint64_t w;
	int i;

	if (preauth_alloc(&pa) != PREAUTH_OK)
		return;
	for (i = 0; i < PREAUTH_FREE_FAILS + 1; i++)
		preauth_login_failed(pa, &first, S(1));
	for (i = 1; i < PREAUTH_HOSTS; i++) {
		snprintf(text, sizeof(text), "10.1.%d.%d:1", i / 256, i % 256);
		a = A(text);
		preauth_login_failed(pa, &a, S(1.5));
	}
	tap_ok(!preauth_login_allowed(pa, &first, S(1.6), &w),
	    "with the table full the backed-off address is still remembered");
	a = A("10.2.0.0:1");
	preauth_login_failed(pa, &a, S(1.7));
	tap_ok(preauth_login_allowed(pa, &first, S(1.8), &w),
	    "one more address takes the least recently seen entry");
	preauth_free(pa);
}

int
main(void)
{
	test_addresses();
	test_share();
	test_evict();
	test_backoff();
	test_refusal_log();
	test_many_hosts();
	return tap_done();
}
