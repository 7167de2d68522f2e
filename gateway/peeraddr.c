/*
 * gateway/peeraddr.c — numeric socket addresses (see peeraddr.h).
 * Library code: no logging, no exits.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/peeraddr.h"

int
peeraddr_host(const char *addr, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

int
peeraddr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64], *end;
	const char *colon, *a = text;
	unsigned long port;
	size_t n;

	if (*text == '[') {
		if ((colon = strstr(text, "]:")) == NULL)
			return -1;
		a = text + 1;
		n = (size_t)(colon - a);
		colon++;
	} else {
		if ((colon = strrchr(text, ':')) == NULL)
			return -1;
		n = (size_t)(colon - a);
	}
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, a, n);
	host[n] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port > 65535 ||
	    peeraddr_host(host, ss, len) != 0)
		return -1;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	return 0;
}

int
peeraddr_is(const struct sockaddr *sa, socklen_t len, const char *addr)
{
	struct sockaddr_storage want;
	socklen_t wlen;

	if (peeraddr_host(addr, &want, &wlen) != 0 || sa->sa_family !=
	    want.ss_family || len < wlen)
		return 0;
	if (sa->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)sa)->sin_addr,
		    &((struct sockaddr_in *)&want)->sin_addr,
		    sizeof(struct in_addr)) == 0;
	return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
	    &((struct sockaddr_in6 *)&want)->sin6_addr,
	    sizeof(struct in6_addr)) == 0;
}
