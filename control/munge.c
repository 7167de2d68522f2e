/*
 * control/munge.c — MUNGE-sealed requests between the nodes and the
 * control plane (munge.h), through munge(1) and unmunge(1).
 *
 * Library code: no logging.  Trust: a credential comes from the network;
 * unmunge checks it (key, time to live, replay) and we take only root's,
 * then its payload is handed on as untrusted text for strict parsing.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "control/cmdrun.h"
#include "control/munge.h"

#define MUNGE_BIN	"/usr/bin/munge"
#define UNMUNGE_BIN	"/usr/bin/unmunge"

char **
munge_cmd_env(const struct gw_config *c)
{
	static char conf[CONFIG_STR_MAX + 16], path[] = "PATH=/usr/bin:/bin";
	static char *env[3];

	env[0] = path;
	env[1] = NULL;
	if (c->slurm_conf[0] != '\0') {
		snprintf(conf, sizeof(conf), "SLURM_CONF=%s", c->slurm_conf);
		env[1] = conf;
	}
	env[2] = NULL;
	return env;
}

int
munge_seal(const struct gw_config *c, const char *payload, char *cred,
    size_t len, char *err, size_t errlen)
{
	static struct cmdrun r;
	char sock[CONFIG_STR_MAX + 16];
	char *argv[] = { MUNGE_BIN, sock, "--restrict-uid=0", NULL };

	snprintf(sock, sizeof(sock), "--socket=%s", c->munge_socket);
	if (cmdrun(&r, argv, munge_cmd_env(c), payload, strlen(payload),
	    MUNGE_CMD_MS) != 0)
		return snprintf(err, errlen, "munge: %s", r.err[0] != '\0' ?
		    r.err : "failed"), -1;
	r.out[strcspn(r.out, "\n")] = '\0';
	if (strncmp(r.out, "MUNGE:", 6) != 0 || strlen(r.out) + 1 > len)
		return snprintf(err, errlen, "munge: no credential"), -1;
	snprintf(cred, len, "%s", r.out);
	explicit_bzero(&r, sizeof(r));
	return 0;
}

/* unmunge -N's metadata: "UID:" must say 0; the payload follows the
 * blank line. */
static int
unmunge_parse(const struct cmdrun *r, char *out, size_t len, char *err,
    size_t errlen)
{
	const char *uid, *body;

	uid = strncmp(r->out, "UID:", 4) == 0 ? r->out :
	    strstr(r->out, "\nUID:");
	if (uid != NULL && *uid == '\n')
		uid++;
	if (uid != NULL)
		uid += 4 + strspn(uid + 4, " \t");
	if (uid == NULL || strncmp(uid, "0\n", 2) != 0)
		return snprintf(err, errlen, "the credential is not root's"),
		    -1;
	if ((body = strstr(r->out, "\n\n")) == NULL)
		return snprintf(err, errlen, "unmunge: no payload"), -1;
	body += 2;
	if (r->outlen - (size_t)(body - r->out) + 1 > len ||
	    memchr(body, '\0', r->outlen - (size_t)(body - r->out)) != NULL)
		return snprintf(err, errlen, "the payload is too long or "
		    "binary"), -1;
	memcpy(out, body, r->outlen - (size_t)(body - r->out));
	out[r->outlen - (size_t)(body - r->out)] = '\0';
	return 0;
}

int
munge_open(const struct gw_config *c, const char *cred, char *out,
    size_t len, char *err, size_t errlen)
{
	static struct cmdrun r;
	char sock[CONFIG_STR_MAX + 16];
	char *argv[] = { UNMUNGE_BIN, sock, "--numeric", NULL };
	int rc;

	snprintf(sock, sizeof(sock), "--socket=%s", c->munge_socket);
	if (strncmp(cred, "MUNGE:", 6) != 0)
		return snprintf(err, errlen, "not a MUNGE credential"), -1;
	if (cmdrun(&r, argv, munge_cmd_env(c), cred, strlen(cred),
	    MUNGE_CMD_MS) != 0) {
		snprintf(err, errlen, "unmunge refused the credential "
		    "(status %d): %.200s", r.status, r.err);
		explicit_bzero(&r, sizeof(r));
		return -1;
	}
	rc = unmunge_parse(&r, out, len, err, errlen);
	explicit_bzero(&r, sizeof(r));
	return rc;
}

long long
munge_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read one line (without its newline) into buf before end (ms). */
static int
read_line(int fd, char *buf, size_t len, long long end)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t n;

	for (;;) {
		int left = (int)(end - munge_mono_ms());

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if (strchr(buf, '\n') != NULL) {
			buf[strcspn(buf, "\n")] = '\0';
			return 0;
		}
		if (got + 1 >= len)
			return -1;
	}
}

static int
write_line(int fd, const char *s)
{
	size_t n = strlen(s), off = 0;
	ssize_t w;

	while (off < n) {
		if ((w = send(fd, s + off, n - off, MSG_NOSIGNAL)) <= 0)
			return -1;
		off += (size_t)w;
	}
	return send(fd, "\n", 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

struct addrinfo *
munge_resolve(const char *addr, int passive)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST |
	    AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
	    .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char host[CONFIG_STR_MAX], *port;

	snprintf(host, sizeof(host), "%s", addr[0] == '[' ? addr + 1 : addr);
	if ((port = strrchr(host, ':')) == NULL)
		return NULL;
	*port++ = '\0';
	if (port - host >= 2 && port[-2] == ']')
		port[-2] = '\0';
	return getaddrinfo(host, port, &hints, &ai) == 0 ? ai : NULL;
}

int
munge_dial(const char *addr)
{
	struct addrinfo *ai = munge_resolve(addr, 0);
	struct timeval tv = { MUNGE_DIAL_MS / 1000, 0 };
	int fd = -1;

	if (ai == NULL)
		return -1;
	/* connect and every send bounded: a control plane that is away
	   holds its caller (the node's uplink) that long, no longer */
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0
	    && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0
	    || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

int
munge_call(const struct gw_config *c, const char *request, char *out,
    size_t len, char *err, size_t errlen)
{
	static char cred[MUNGE_CRED_MAX];
	int fd, r = -1;

	if (munge_seal(c, request, cred, sizeof(cred), err, errlen) != 0)
		return -1;
	if ((fd = munge_dial(c->control_address)) < 0)
		return snprintf(err, errlen, "control_address %s: %s",
		    c->control_address, strerror(errno)), -1;
	if (write_line(fd, cred) != 0 || read_line(fd, cred, sizeof(cred),
	    munge_mono_ms() + MUNGE_NET_MS) != 0)
		snprintf(err, errlen, "control_address %s: no answer",
		    c->control_address);
	else
		r = munge_open(c, cred, out, len, err, errlen);
	close(fd);
	return r;
}

int
munge_read_request(const struct gw_config *c, int fd, char *out,
    size_t len, char *err, size_t errlen)
{
	static char cred[MUNGE_CRED_MAX];

	if (read_line(fd, cred, sizeof(cred), munge_mono_ms() +
	    MUNGE_READ_MS) != 0)
		return snprintf(err, errlen, "no credential line in %d ms",
		    MUNGE_READ_MS), -1;
	return munge_open(c, cred, out, len, err, errlen);
}

int
munge_write_answer(const struct gw_config *c, int fd, const char *answer,
    char *err, size_t errlen)
{
	static char cred[MUNGE_CRED_MAX];

	if (munge_seal(c, answer, cred, sizeof(cred), err, errlen) != 0)
		return -1;
	return write_line(fd, cred) == 0 ? 0 : (snprintf(err, errlen,
	    "the node went away"), -1);
}
