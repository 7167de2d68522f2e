/*
 * api/serve.c — `cdsgated api`: set up and run the admin API in the
 * foreground.
 *
 * Runs as root or as the api user.  As root it binds the socket, then
 * drops to the `cdsgate-api` user (privdrop) with NO_NEW_PRIVS before it
 * opens the store or reads a byte from a client.  Trust: the operator's
 * arguments only; clients are api/http.c's business.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api.h"
#include "api/gaterunner.h"
#include "api/pgrunner.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

/* Every api-side process (key holder, api) runs under its own filter;
 * a --with-sandbox=none build has none (its configure said so). */
#ifdef HAVE_SECCOMP
#define SERVE_SANDBOX_MODE	SANDBOX_MODE_SECCOMP
#else
#define SERVE_SANDBOX_MODE	SANDBOX_MODE_NONE
#endif

#define API_USER	PRIVDROP_API_USER

/* The synopsis, to f (stdout for --help, stderr for a usage error):
 * output for whoever typed the command, not a log line (common/log.h).
 * Returns 2 (a usage error). */
static int
serve_usage(FILE *f)
{
	fprintf(f, "usage: cdsgated api --socket PATH --store FILE "
	    "--audit-log FILE --audit-key FILE\n"
	    "       --state-dir DIR [--mount-dir DIR] [--cdsgate PATH]\n"
	    "       [--custodian-group NAME] [--auditor-group NAME]\n"
	    "       [--mount-backend embedded|postgres]\n"
	    "       [--pg-conninfo CONNINFO --pg-reader-role ROLE]\n"
	    "       [--listen ADDR:PORT --tls-cert PEM --tls-key PEM "
	    "--tokens FILE]\n");
	return 2;
}

/* The TCP listener's options (api/tcp.c), or NULL. */
static const char **
serve_tcp_option(const char *opt, struct api_serve_args *a)
{
	if (strcmp(opt, "--listen") == 0)
		return &a->tcp_listen;
	if (strcmp(opt, "--tls-cert") == 0)
		return &a->tls_cert;
	if (strcmp(opt, "--tls-key") == 0)
		return &a->tls_key;
	if (strcmp(opt, "--tokens") == 0)
		return &a->tokens;
	return NULL;
}

static int
serve_parse(int argc, char **argv, struct api_serve_args *a)
{
	int i;

	a->custodian_group = PRIVDROP_CUSTODIAN_GROUP;
	a->auditor_group = PRIVDROP_AUDITOR_GROUP;
	a->cdsgate = CDSGATE_BINDIR "/cdsgate";
	for (i = 0; i < argc; i++) {
		const char **dst = NULL;

		if (strcmp(argv[i], "--socket") == 0)
			dst = &a->socket_path;
		else if (strcmp(argv[i], "--store") == 0)
			dst = &a->store_path;
		else if (strcmp(argv[i], "--custodian-group") == 0)
			dst = &a->custodian_group;
		else if (strcmp(argv[i], "--auditor-group") == 0)
			dst = &a->auditor_group;
		else if (strcmp(argv[i], "--audit-log") == 0)
			dst = &a->audit_log;
		else if (strcmp(argv[i], "--audit-key") == 0)
			dst = &a->audit_key;
		else if (strcmp(argv[i], "--state-dir") == 0)
			dst = &a->state_dir;
		else if (strcmp(argv[i], "--mount-dir") == 0)
			dst = &a->mount_dir;
		else if (strcmp(argv[i], "--cdsgate") == 0)
			dst = &a->cdsgate;
		else if (strcmp(argv[i], "--mount-backend") == 0)
			dst = &a->mount_backend;
		else if (strcmp(argv[i], "--pg-conninfo") == 0)
			dst = &a->pg_conninfo;
		else if (strcmp(argv[i], "--pg-reader-role") == 0)
			dst = &a->pg_reader_role;
		else
			dst = serve_tcp_option(argv[i], a);
		if (dst == NULL || i + 1 >= argc) {
			log_warnx("%s: %s", argv[i],
			    dst == NULL ? "unknown option" : "needs a value");
			return -1;
		}
		*dst = argv[++i];
	}
	if (a->socket_path == NULL || a->store_path == NULL ||
	    a->audit_log == NULL || a->audit_key == NULL ||
	    a->state_dir == NULL) {
		log_warnx("--socket, --store, --state-dir, "
		    "--audit-log and --audit-key are required (every change is "
		    "audited)");
		return -1;
	}
	if ((a->pg_conninfo == NULL) != (a->pg_reader_role == NULL)) {
		log_warnx("--pg-conninfo and --pg-reader-role go together");
		return -1;
	}
	return 0;
}

/* A group's gid, or (gid_t)-1 (nobody) when it does not exist. */
static gid_t
group_gid(const char *name)
{
	struct group *g = getgrnam(name);

	return g != NULL ? g->gr_gid : (gid_t)-1;
}

/* Bind the UNIX socket; a stale one (nobody listening) is replaced. */
int
api_bind(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("socket path too long");
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		log_warnx("%s: another API is listening", path);
		close(fd);
		return -1;
	}
	unlink(path);
	/* Anyone may connect: each request is authorised by the peer's
	   credentials (api/http.c), which a socket mode cannot express
	   for two groups. */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, 64) != 0) {
		log_warn("%s", path);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Split mode (`serve --sessiond PATH`): the root session helper is a
 * socket away.  Connected after the drop, so the helper's SO_PEERCRED
 * check sees the api user, the one it lets ask.
 */
static int
serve_sessiond(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("%s: path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		log_warn("the session helper at %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* As root: become the api user for good; not dumpable; when the
 * parent is its only way to sessions, die with it (and it must still be
 * there).  Its filter comes later (api_confine), once all is open. */
static int
serve_drop(const struct api_serve_args *a)
{
	struct privdrop_user u;
	struct confine c;
	char msg[256];

	confine_init(&c, "api");
	if (getuid() == 0) {
		if (privdrop_lookup(API_USER, NULL, &u, msg, sizeof(msg)) !=
		    0) {
			log_warnx("%s", msg);
			return -1;
		}
		c.user = &u;
	}
	if (a->parent_fd >= 0 || a->sessiond_path != NULL) {
		c.deathsig = SIGTERM;
		c.parent = a->parent_pid;
	}
	if (confine_apply(&c, msg, sizeof(msg)) != CONFINE_OK) {
		log_warnx("%s", msg);
		return -1;
	}
	return 0;
}

/*
 * After the bind, as root: the key holder first (without an audit log
 * nothing starts), then the drop, then the loop.  Shared by `cdsgated
 * api` and the api child of `cdsgated serve` (a->parent_fd >= 0).
 */
int
api_serve_bound(const struct api_serve_args *a)
{
	struct api_config cfg = { 0 };
	struct api_tcp tcp;
	struct keyholder kh;
	struct gaterunner gate;
	struct pgrunner pg = { -1, -1 };
	struct pgrunner_conf pgc;
	char err[512], released[4096];
	int rc;

	log_init("cdsgated api");	/* also the api child of `serve` */
	cfg.custodian_gid = group_gid(a->custodian_group);
	cfg.auditor_gid = group_gid(a->auditor_group);
	cfg.store_path = a->store_path;
	cfg.state_dir = a->state_dir;
	cfg.mount_dir = a->mount_dir;
	cfg.cdsgate = a->cdsgate;
	cfg.listen_desc = a->socket_path;
	cfg.listen_fd = a->listen_fd;
	cfg.parent_fd = a->parent_fd;
	cfg.expires_default = a->expires_default;
	cfg.expires_max = a->expires_max;
	cfg.memory_limit_max = a->memory_limit_max;
	cfg.session_address = a->session_address != NULL ?
	    a->session_address : "127.0.0.1";
	cfg.session_tls = a->session_tls;
	cfg.front_door = a->front_door;
	/* root-only files: read them before the drop and the filter */
	if (a->tcp_fd >= 0) {
		if (api_tcp_load(a, &tcp, err, sizeof(err)) != 0) {
			log_warnx("%s", err);
			return 1;
		}
		cfg.tcp = &tcp;
	}
	if (sandbox_init(SERVE_SANDBOX_MODE, 0, err, sizeof(err)) != 0 ||
	    keyholder_start(a->audit_log, a->audit_key, &kh, err,
	    sizeof(err)) != 0) {
		log_warnx("%s", err);
		return 1;
	}
	cfg.audit = &kh;
	/* The parent is our only way to sessions (split: it is what the
	   helper's socket sees go away): serve_drop makes us die with it. */
	if (serve_drop(a) != 0) {
		keyholder_stop(&kh);
		return 1;
	}
	umask(077);	/* the store and its WAL: the api user's only */
	if (gaterunner_start(a->cdsgate, &gate, err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		keyholder_stop(&kh);
		return 1;
	}
	cfg.gate = &gate;
	cfg.mount_backend = a->mount_backend != NULL ? a->mount_backend :
	    "embedded";
	snprintf(released, sizeof(released), "%s/released", a->state_dir);
	pgc = (struct pgrunner_conf){ a->pg_conninfo, a->pg_reader_role,
	    released };
	if (a->pg_conninfo != NULL) {
		if (pgrunner_start(&pgc, &pg, err, sizeof(err)) != 0) {
			log_warnx("%s", err);
			gaterunner_stop(&gate);
			keyholder_stop(&kh);
			return 1;
		}
		cfg.pg = &pg;
		/* only the mounter needs the credentials; the api parses
		   untrusted requests and forgets them (its copy) */
		explicit_bzero((char *)a->pg_conninfo, strlen(a->pg_conninfo));
	}
	if (a->sessiond_path != NULL &&
	    (cfg.parent_fd = serve_sessiond(a->sessiond_path)) < 0) {
		pgrunner_stop(&pg);
		gaterunner_stop(&gate);
		keyholder_stop(&kh);
		return 1;
	}
	rc = api_main(&cfg);
	if (cfg.tcp != NULL)
		api_tcp_free(&tcp);
	pgrunner_stop(&pg);
	gaterunner_stop(&gate);
	if (keyholder_stop(&kh) != 0) {
		log_warnx("the audit key holder did not "
		    "close the log cleanly");
		rc = 1;
	}
#ifdef __SANITIZE_ADDRESS__
	/* LeakSanitizer's exit check stops the world with clone and
	   ptrace, which the API filter kills: end without it. */
	fflush(NULL);
	_exit(rc);
#endif
	return rc;
}

int
api_serve_cmd(int argc, char **argv)
{
	struct api_serve_args a = { 0 };
	int rc;

	log_init("cdsgated api");
	if (argc >= 1 && strcmp(argv[argc - 1], "--list-routes") == 0) {
		api_routes_print(stdout);
		return 0;
	}
	if (argc >= 1 && (strcmp(argv[argc - 1], "--help") == 0 ||
	    strcmp(argv[argc - 1], "-h") == 0))
		return serve_usage(stdout), 0;
	if (serve_parse(argc, argv, &a) != 0)
		return serve_usage(stderr);
	a.parent_fd = -1;
	a.expires_default = 3600;
	a.expires_max = 7 * 86400;
	a.memory_limit_max = 2048;	/* as session_memory_limit_mb's */
	if (api_tcp_prepare(&a) != 0)
		return 1;
	if ((a.listen_fd = api_bind(a.socket_path)) < 0) {
		if (a.tcp_fd >= 0)
			close(a.tcp_fd);
		return 1;
	}
	rc = api_serve_bound(&a);
	close(a.listen_fd);
	if (a.tcp_fd >= 0)
		close(a.tcp_fd);
	if (rc != 0)
		unlink(a.socket_path);
	return rc;
}
