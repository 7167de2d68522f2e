/*
 * audit/keyholder.c — the audit key holder process and its client side
 * (protocol in audit/keyholder.h).
 *
 * Trust: the key holder holds the only copy of the signing key in
 * memory; it reads typed, size-checked messages (common/ipc.h) from the
 * one peer that forked it and parses their JSON with jansson, bounded by
 * KEYHOLDER_DATA_MAX.  It never opens anything after start-up except the
 * log's head file (replaced on each checkpoint), and its seccomp profile
 * (AUDIT) allows that only beneath the log's directory fd.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/keyholder.h"
#include "common/ipc.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

enum { KH_APPEND = 1, KH_RESULT = 2 };

struct kh_append {
	char		type[48];
	uint32_t	len;
	char		data[KEYHOLDER_DATA_MAX];
};

struct kh_result {
	int32_t		status;		/* AUDIT_OK or an AUDIT_* code */
	uint64_t	seq;		/* of the record (or the next one) */
	char		msg[256];
};

static const struct ipc_type kh_types[] = {
	{ KH_APPEND, sizeof(struct kh_append), 0, "append" },
	{ KH_RESULT, sizeof(struct kh_result), 0, "result" },
};
static const struct ipc_proto kh_proto = {
	kh_types, sizeof(kh_types) / sizeof(kh_types[0])
};

/* ---- the key holder ---- */

struct kh_state {
	struct audit_log	*log;
	int			 sock;
	unsigned		 every_s;	/* KEYHOLDER_CHECKPOINT_S */
	struct timespec		 unsigned_since; /* oldest unsigned record */
};

static void
kh_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static int
kh_reply(int sock, int status, uint64_t seq, const char *msg)
{
	struct kh_result r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	r.seq = seq;
	snprintf(r.msg, sizeof(r.msg), "%s", msg);
	return ipc_send(sock, &kh_proto, KH_RESULT, &r, sizeof(r), -1);
}

/* KH_APPEND: parse, append, answer.  A malformed record is fatal. */
static int
kh_on_append(void *ctx, struct ipc_msg *m)
{
	struct kh_state *st = ctx;
	struct kh_append *a = (struct kh_append *)m->data;
	char type[48], err[256] = "";
	json_t *data;
	uint64_t seq;
	int rc;

	if (ipc_str_get(type, sizeof(type), a->type, sizeof(a->type)) != 0 ||
	    a->len > sizeof(a->data))
		return -1;
	data = json_loadb(a->data, a->len, JSON_REJECT_DUPLICATES, NULL);
	if (data == NULL || !json_is_object(data)) {
		json_decref(data);
		return -1;
	}
	seq = audit_log_seq(st->log);
	if (audit_log_unsigned(st->log) == 0)
		kh_now(&st->unsigned_since);
	rc = audit_log_append(st->log, type, data, err, sizeof(err));
	/* a recording's digest is signed as soon as it is chained */
	if (rc == AUDIT_OK && strcmp(type, "record_closed") == 0 &&
	    audit_log_unsigned(st->log) > 0)
		rc = audit_log_checkpoint(st->log, err, sizeof(err));
	return kh_reply(st->sock, rc, seq, err) == IPC_OK ? 0 : -1;
}

/* Milliseconds until the oldest unsigned record is due its checkpoint
 * (0: now), or -1 when every record is signed. */
static int
kh_due_ms(const struct kh_state *st)
{
	struct timespec now;
	long long ms;

	if (audit_log_unsigned(st->log) == 0)
		return -1;
	kh_now(&now);
	ms = (long long)st->every_s * 1000 -
	    ((long long)(now.tv_sec - st->unsigned_since.tv_sec) * 1000 +
	    (now.tv_nsec - st->unsigned_since.tv_nsec) / 1000000);
	return ms < 0 ? 0 : (int)ms;
}

/* Wait for the peer's next message, signing a checkpoint whenever the
 * oldest unsigned record comes due.  0 when a message is there. */
static int
kh_wait(struct kh_state *st)
{
	struct pollfd p = { st->sock, POLLIN, 0 };
	char err[256] = "";
	int n;

	while ((n = poll(&p, 1, kh_due_ms(st))) == 0 ||
	    (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		if (audit_log_checkpoint(st->log, err, sizeof(err)) !=
		    AUDIT_OK) {
			log_warnx("the periodic checkpoint failed: %s", err);
			kh_now(&st->unsigned_since);	/* again later */
		}
	}
	return n < 0 ? -1 : 0;
}

static const struct ipc_handler kh_from_peer[] = {
	{ KH_APPEND, kh_on_append },
};

/* confine_apply, its error named for the api that logs it. */
static int
kh_apply(const struct confine *c, char *err, size_t errlen)
{
	char why[200];	/* fits after the name in the api's err */

	if (confine_apply(c, why, sizeof(why)) == CONFINE_OK)
		return 0;
	snprintf(err, errlen, "audit key holder: %s", why);
	return -1;
}

/* Become the key holder's user; no core dumps of the key, not
 * dumpable (confine_apply), before the key is read. */
static int
kh_confine(char *err, size_t errlen)
{
	struct privdrop_user u;
	struct confine c;

	confine_init(&c, "audit key holder");
	confine_rlimit(&c, RLIMIT_CORE, 0);
	if (getuid() == 0) {
		if (privdrop_lookup(KEYHOLDER_USER, NULL, &u, err, errlen) != 0)
			return -1;
		c.user = &u;
	}
	return kh_apply(&c, err, errlen);
}

/* Test hook (--enable-test-hooks): CDSGATE_TEST_VIOLATE=audit:CALL makes
 * the confined key holder commit CALL so a test sees it die. */
static void
kh_test_violate(void)
{
#ifdef ENABLE_TEST_HOOKS
	const char *v = getenv("CDSGATE_TEST_VIOLATE");

	if (v != NULL && strncmp(v, "audit:", 6) == 0)
		sandbox_violate(v + 6);
#endif
}

/* KEYHOLDER_CHECKPOINT_S, or (--enable-test-hooks) a shorter one from
 * CDSGATE_TEST_CHECKPOINT_S so a test need not wait a minute. */
static unsigned
kh_every_s(void)
{
#ifdef ENABLE_TEST_HOOKS
	const char *v = getenv("CDSGATE_TEST_CHECKPOINT_S");
	long n = v != NULL ? strtol(v, NULL, 10) : 0;

	if (n >= 1 && n < KEYHOLDER_CHECKPOINT_S)
		return (unsigned)n;
#endif
	return KEYHOLDER_CHECKPOINT_S;
}

/* The AUDIT allow-list, once the key and the log are open. */
static int
kh_sandbox(struct audit_log *log, char *err, size_t errlen)
{
	/* jansson seeds its hash tables from /dev/urandom at first use */
	struct confine c;

	json_object_seed(0);
	confine_init(&c, "audit key holder");
	c.profile = SANDBOX_PROFILE_AUDIT;
	c.dirfd = audit_log_dirfd(log);
	if (c.dirfd < 0) {
		snprintf(err, errlen, "audit key holder: filter: no log "
		    "directory fd");
		return -1;
	}
	if (kh_apply(&c, err, errlen) != 0)
		return -1;
	log_info("sandbox %s, profile %s", sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_AUDIT));
	kh_test_violate();
	return 0;
}

static void __attribute__((noreturn))
kh_main(int sock, const char *log_path, const char *key_path)
{
	struct ipc_peer peer = { sock, "audit client", &kh_proto, kh_from_peer,
	    sizeof(kh_from_peer) / sizeof(kh_from_peer[0]) };
	struct kh_state st = { NULL, sock, kh_every_s(), { 0, 0 } };
	struct audit_signer signer;
	struct audit_key *key = NULL;
	char err[256] = "";
	int rc;

	log_init("cdsgate audit key holder");
	if (kh_confine(err, sizeof(err)) != 0 ||
	    audit_key_load_private(key_path, &key, err, sizeof(err)) !=
	    AUDIT_OK) {
		kh_reply(sock, AUDIT_EKEY, 0, err);
		_exit(1);
	}
	audit_key_signer(key, &signer);
	if ((rc = audit_log_open(log_path, &signer, KEYHOLDER_CHECKPOINT,
	    &st.log, err, sizeof(err))) != AUDIT_OK) {
		kh_reply(sock, rc, 0, err);
		_exit(1);
	}
	if (kh_sandbox(st.log, err, sizeof(err)) != 0) {
		kh_reply(sock, AUDIT_EIO, 0, err);
		_exit(1);
	}
	kh_now(&st.unsigned_since);	/* a resumed log's unsigned tail */
	kh_reply(sock, AUDIT_OK, audit_log_seq(st.log), "ready");
	while ((rc = kh_wait(&st)) == 0 &&
	    (rc = ipc_dispatch(&peer, &st, NULL)) == IPC_OK)
		;
	if (rc == -1)
		rc = IPC_ESYS;
	if (rc != IPC_EOF)
		log_warnx("the peer broke the protocol (%s): closing the "
		    "log", ipc_strerror(rc));
	rc = audit_log_close(st.log, err, sizeof(err));
	audit_key_free(key);
	_exit(rc == AUDIT_OK ? 0 : 1);
}

/* ---- the client side ---- */

static int
kh_on_result(void *ctx, struct ipc_msg *m)
{
	memcpy(ctx, m->data, sizeof(struct kh_result));
	return 0;
}

static const struct ipc_handler kh_from_holder[] = {
	{ KH_RESULT, kh_on_result },
};

/* Wait for one KH_RESULT into r. */
static int
kh_result(struct keyholder *kh, struct kh_result *r, char *err,
    size_t errlen)
{
	struct ipc_peer peer = { kh->sock, "audit key holder", &kh_proto,
	    kh_from_holder, 1 };
	int rc;

	if ((rc = ipc_dispatch(&peer, r, NULL)) != IPC_OK)
		return snprintf(err, errlen, "the audit key holder is gone or "
		    "broke the protocol: %s", ipc_strerror(rc)), -1;
	r->msg[sizeof(r->msg) - 1] = '\0';
	if (r->status != AUDIT_OK)
		return snprintf(err, errlen, "audit log: %s", r->msg), -1;
	return 0;
}

/* A key holder that died at start-up: say of what (SIGSYS = its filter). */
static void
kh_reap(struct keyholder *kh, char *err, size_t errlen)
{
	size_t n = strlen(err);
	int st = 0;

	close(kh->sock);
	kh->sock = -1;
	while (waitpid(kh->pid, &st, 0) < 0 && errno == EINTR)
		;
	kh->pid = -1;
	if (WIFSIGNALED(st) && n < errlen)
		snprintf(err + n, errlen - n, " (the key holder was killed by "
		    "signal %d%s)", WTERMSIG(st), WTERMSIG(st) == SIGSYS ?
		    ", SIGSYS: its seccomp filter" : "");
}

int
keyholder_start(const char *log_path, const char *key_path,
    struct keyholder *kh, char *err, size_t errlen)
{
	struct kh_result r;
	int sv[2];

	kh->pid = -1;
	kh->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return snprintf(err, errlen, "socketpair: %s", strerror(errno)),
		    -1;
	fflush(NULL);
	if ((kh->pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return snprintf(err, errlen, "fork: %s", strerror(errno)), -1;
	}
	if (kh->pid == 0) {
		close(sv[0]);
		/* It ends on EOF, after a checkpoint: a ^C to the group or
		   the peer's death must not cut the log mid-way. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		/* It outlives the api by a checkpoint: without the api's
		   listening sockets, so a restarted api finds its own free. */
		if (confine_fds(&sv[1], 0, err, errlen) != 0) {
			kh_reply(sv[1], AUDIT_EIO, 0, err);
			_exit(1);
		}
		kh_main(sv[1], log_path, key_path);
	}
	close(sv[1]);
	kh->sock = sv[0];
	if (kh_result(kh, &r, err, errlen) != 0) {
		kh_reap(kh, err, errlen);
		return -1;
	}
	return 0;
}

int
keyholder_append(struct keyholder *kh, const char *type, json_t *data,
    uint64_t *seq, char *err, size_t errlen)
{
	struct kh_append a;
	struct kh_result r;
	char *text;
	size_t n;

	memset(&a, 0, sizeof(a));
	if (strlen(type) >= sizeof(a.type))
		return snprintf(err, errlen, "audit record type too long"), -1;
	memcpy(a.type, type, strlen(type));
	text = data != NULL ? json_dumps(data, JSON_COMPACT) : strdup("{}");
	if (text == NULL || (n = strlen(text)) > sizeof(a.data)) {
		free(text);
		return snprintf(err, errlen, "audit record too large"), -1;
	}
	memcpy(a.data, text, n);
	a.len = (uint32_t)n;
	free(text);
	if (ipc_send(kh->sock, &kh_proto, KH_APPEND, &a, sizeof(a), -1) !=
	    IPC_OK)
		return snprintf(err, errlen, "the audit key holder is gone: %s",
		    strerror(errno)), -1;
	if (kh_result(kh, &r, err, errlen) != 0)
		return -1;
	if (seq != NULL)
		*seq = r.seq;
	return 0;
}

int
keyholder_stop(struct keyholder *kh)
{
	int st = 0;

	if (kh->sock >= 0)
		close(kh->sock);
	kh->sock = -1;
	if (kh->pid > 0) {
		while (waitpid(kh->pid, &st, 0) < 0 && errno == EINTR)
			;
		kh->pid = -1;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
