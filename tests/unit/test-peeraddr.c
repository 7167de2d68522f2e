/*
 * tests/unit/test-peeraddr.c — numeric socket addresses for the front
 * door and the sessions behind it (gateway/peeraddr.c): ADDR:PORT parsed
 * for IPv4 and IPv6, bad forms refused, and a peer compared with the one
 * address a session behind the front door accepts.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "gateway/peeraddr.h"
#include "tests/tap.h"

static void
test_parse(void)
{
	static const char *const bad[] = { "127.0.0.1", "127.0.0.1:", ":80",
	    "127.0.0.1:65536", "127.0.0.1:8x", "localhost:80", "[::1]80",
	    "::1:80x", "[::1]:", "1.2.3.4.5:80", NULL };
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	size_t i;

	tap_ok(peeraddr_parse("127.0.0.2:5901", &ss, &len) == 0 &&
	    ss.ss_family == AF_INET && len == sizeof(*s4) &&
	    ntohs(s4->sin_port) == 5901 &&
	    ntohl(s4->sin_addr.s_addr) == 0x7f000002,
	    "127.0.0.2:5901 parses (IPv4, port 5901)");
	tap_ok(peeraddr_parse("[::1]:40001", &ss, &len) == 0 &&
	    ss.ss_family == AF_INET6 && len == sizeof(*s6) &&
	    ntohs(s6->sin6_port) == 40001 &&
	    IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr),
	    "[::1]:40001 parses (IPv6, port 40001)");
	for (i = 0; bad[i] != NULL; i++)
		tap_ok(peeraddr_parse(bad[i], &ss, &len) != 0,
		    "\"%s\" is refused", bad[i]);
	tap_ok(peeraddr_host("10.1.2.3", &ss, &len) == 0 &&
	    ss.ss_family == AF_INET && s4->sin_port == 0,
	    "a host alone (a source to bind): port 0");
	tap_ok(peeraddr_host("10.1.2.3:1", &ss, &len) != 0,
	    "a host with a port is not a host");
}

static void
test_is(void)
{
	struct sockaddr_storage ss;
	socklen_t len;

	(void)peeraddr_parse("127.0.0.2:33000", &ss, &len);
	tap_ok(peeraddr_is((struct sockaddr *)&ss, len, "127.0.0.2"),
	    "a peer from 127.0.0.2 (any port) is the front door 127.0.0.2");
	tap_ok(!peeraddr_is((struct sockaddr *)&ss, len, "127.0.0.1"),
	    "... but not the front door 127.0.0.1");
	tap_ok(!peeraddr_is((struct sockaddr *)&ss, len, "::ffff:127.0.0.2"),
	    "... nor an IPv6 address (no family mixing)");
	tap_ok(!peeraddr_is((struct sockaddr *)&ss, len, "not-an-address"),
	    "... nor a name (never resolved)");
	(void)peeraddr_parse("[2001:db8::7]:1", &ss, &len);
	tap_ok(peeraddr_is((struct sockaddr *)&ss, len, "2001:db8::7") &&
	    !peeraddr_is((struct sockaddr *)&ss, len, "2001:db8::8"),
	    "IPv6: the same address matches, the next one does not");
}

int
main(void)
{
	test_parse();
	test_is();
	return tap_done();
}
