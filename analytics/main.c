/*
 * analytics/main.c — `cdsgate-analytics --listen ADDR:PORT --mount-dir
 * DIR --static-dir DIR`: bind, confine (analytics/confine.c), say
 * `ready ADDR:PORT`, serve until SIGTERM (exit 0).
 *
 * Trust: runs as root (or the operator) only up to an_confine(); parses
 * only its own command line.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/log.h"
#include "sandbox/sandbox.h"

static const char usage[] =
    "usage: cdsgate-analytics --listen ADDR:PORT --mount-dir DIR "
    "--static-dir DIR\n"
    "           (--grant-key FILE | --unscoped) [--sandbox-debug]\n";

/* Split "ADDR:PORT" or "[V6]:PORT" into host and port strings. */
static int
split_addr(const char *s, char *host, size_t hostlen, const char **port)
{
	const char *colon = strrchr(s, ':');
	size_t n;

	if (colon == NULL || colon == s || colon[1] == '\0')
		return -1;
	n = (size_t)(colon - s);
	if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n >= hostlen)
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

/* A listening TCP socket on a numeric address; the bound port (port 0:
 * the kernel's choice) in *desc. */
static int
listen_on(const char *spec, char *desc, size_t desclen)
{
	struct addrinfo hints = { 0 }, *ai = NULL;
	char host[128], h[NI_MAXHOST], p[NI_MAXSERV];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const char *port;
	int fd = -1, one = 1;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if (split_addr(spec, host, sizeof(host), &port) != 0 ||
	    getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
	    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		log_warn("listen");
		if (fd >= 0)
			close(fd);
		fd = -1;
	} else
		snprintf(desc, desclen, strchr(h, ':') ? "[%s]:%s" : "%s:%s",
		    h, p);
	freeaddrinfo(ai);
	return fd;
}

#ifdef ENABLE_TEST_HOOKS
/* The test hook: CDSGATE_TEST_VIOLATE=open|socket|execve|ptrace makes
 * the confined process commit that syscall, so 030 sees the filter kill
 * it.  Only the operator's environment can set it. */
static void
test_violate(void)
{
	const char *v = getenv("CDSGATE_TEST_VIOLATE");

	if (v != NULL && *v != '\0') {
		sandbox_violate(v);
		log_warnx("CDSGATE_TEST_VIOLATE=%s: the filter let it through", v);
		exit(3);
	}
}
#else
static void test_violate(void) { }
#endif

/* The grant key, read while we may (root), and one HMAC made so that
 * OpenSSL has loaded what it needs before the filter.  0 or -1. */
static int
grant_key_ready(const char *path, struct an_dirs *dirs)
{
	struct grant g = { "warm-up", 1, 1 };
	char v[GRANT_VALUE_MAX];

	if (grant_key_load(path, 0, dirs->grant_key) != GRANT_OK) {
		log_warn("%s: %s", path, grant_strerror(GRANT_EKEY));
		return -1;
	}
	if (grant_sign(dirs->grant_key, &g, v) != GRANT_OK) {
		log_warnx("%s", grant_strerror(GRANT_ECRYPTO));
		return -1;
	}
	dirs->scoped = 1;
	return 0;
}

/* The command line into c and *listen_spec: -1 to go on, else the
 * exit status (0 for --help, 2 for a usage error). */
static int
parse_args(int argc, char **argv, struct an_confine *c,
    const char **listen_spec, const char **grant_key, int *unscoped)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "mount-dir", required_argument, NULL, 'm' },
		{ "static-dir", required_argument, NULL, 's' },
		{ "sandbox-debug", no_argument, NULL, 'd' },
		{ "grant-key", required_argument, NULL, 'g' },
		{ "unscoped", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'l': *listen_spec = optarg; break;
		case 'm': c->mount_dir = optarg; break;
		case 's': c->static_dir = optarg; break;
		case 'd': c->sandbox_debug = 1; break;
		case 'g': *grant_key = optarg; break;
		case 'u': *unscoped = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	/* one or the other: serving every dataset is never a default */
	if (optind != argc || *listen_spec == NULL || c->mount_dir == NULL ||
	    c->static_dir == NULL || (*grant_key == NULL) == !*unscoped) {
		fputs(usage, stderr);
		return 2;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct an_confine c = { NULL, NULL, 0 };
	const char *listen_spec = NULL, *grant_key = NULL;
	struct an_dirs dirs;
	char desc[160], err[512];
	int fd, sigfd, rc, unscoped = 0;

	log_init("cdsgate-analytics");
	if ((rc = parse_args(argc, argv, &c, &listen_spec, &grant_key,
	    &unscoped)) >= 0)
		return rc;
	memset(&dirs, 0, sizeof(dirs));
	if (grant_key != NULL && grant_key_ready(grant_key, &dirs) != 0)
		return 1;
	if ((fd = listen_on(listen_spec, desc, sizeof(desc))) < 0) {
		log_warnx("cannot listen on %s (want a numeric ADDR:PORT)",
		    listen_spec);
		return 1;
	}
	if ((sigfd = an_term_signals()) < 0) {
		log_warn("signalfd");
		return 1;
	}
	json_object_seed(0);	/* from the system's randomness, while we may */
	if (an_confine(&c, &dirs, err, sizeof(err)) != 0) {
		log_warnx("confinement: %s", err);
		return 1;
	}
	test_violate();
	log_info(dirs.scoped ? "scoped: each request sees only the dataset "
	    "its " GRANT_HEADER " names" : "unscoped: every dataset to every "
	    "client (--unscoped)");
	printf("ready %s\n", desc);
	fflush(stdout);
	rc = an_serve(fd, sigfd, &dirs);
	/* _exit, not exit: nothing is left to flush but stdio, and atexit
	   work such as LeakSanitizer's check (a ptrace'ing thread) is what
	   the filter forbids; it would turn a clean stop into SIGSYS. */
	fflush(NULL);
	_exit(rc);
}
