/*
 * control/slurm.c — the control plane's Slurm helper (slurm.h).
 *
 * Why Slurm's commands and not libslurm or slurmrestd: the commands'
 * options and --parsable/-o output are Slurm's stable interface across
 * versions (libslurm's ABI changes with every release; slurmrestd needs
 * its own daemon and JWT keys to run and guard); the helper runs only
 * the fixed paths below with argv it builds itself.
 *
 * Root (sbatch --uid and scancel of that user's jobs need it), confined:
 * no new privileges, not dumpable, dies with the parent, under the SLURM
 * deny-list (it execs Slurm's commands and munge, which inherit it).
 * Trust: the parent's messages are bounded and checked; a node's request
 * is MUNGE-checked (root's, in time, not replayed), then its job, node
 * and address are checked against what Slurm says before the parent
 * sees it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/cmdrun.h"
#include "control/munge.h"
#include "control/slurm.h"
#include "common/log.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

#define SBATCH		"/usr/bin/sbatch"
#define SCANCEL		"/usr/bin/scancel"
#define SQUEUE		"/usr/bin/squeue"
#define SCONTROL	"/usr/bin/scontrol"
#define SINFO		"/usr/bin/sinfo"
#define SLURM_CMD_MS	15000

static const struct ipc_type sl_types[] = {
	{ SL_SUBMIT, sizeof(struct sl_submit), 0, "submit" },
	{ SL_SUBMITTED, sizeof(struct sl_submitted), 0, "submitted" },
	{ SL_CANCEL, sizeof(struct sl_cancel), 0, "cancel" },
	{ SL_NODE, sizeof(struct sl_node), 0, "node" },
	{ SL_ANSWER, sizeof(struct sl_answer), 0, "answer" },
	{ SL_NODES, sizeof(struct sl_cancel), 0, "nodes" },
	{ SL_NODES_DONE, sizeof(struct sl_answer), 0, "nodes done" },
	{ SL_POLL, sizeof(struct sl_cancel), 0, "poll" },
	{ SL_POLL_DONE, sizeof(struct sl_answer), 0, "poll done" },
	{ SL_EXTEND, sizeof(struct sl_extend), 0, "extend" },
};
const struct ipc_proto slurm_proto = { sl_types, 10 };

struct helper {
	const struct gw_config	*c;
	int			 sock;
	int			 lfd;
	struct sl_answer	 answer;
	int			 answered;
};

static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno"
    "pqrstuvwxyz0123456789_-.";

static int
word_ok(const char *s, const char *chars, size_t max)
{
	return s[0] != '\0' && strlen(s) < max && strspn(s, chars) ==
	    strlen(s);
}

static int
slurm_cmd(struct cmdrun *r, const struct gw_config *c, char **argv)
{
	return cmdrun(r, argv, munge_cmd_env(c), NULL, 0, SLURM_CMD_MS);
}

/* The job's --wrap line: paths of plain characters only (it is shell). */
static int
submit_wrap(const struct gw_config *c, char *buf, size_t len)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
	    "rstuvwxyz0123456789_-./%";

	if (strspn(c->cdsgated, ok) != strlen(c->cdsgated) ||
	    strspn(c->node_socket, ok) != strlen(c->node_socket))
		return -1;
	snprintf(buf, len, "exec %s node-job --socket %s", c->cdsgated,
	    c->node_socket);
	return 0;
}

/* SUBMIT: sbatch --parsable; answer SUBMITTED with the job id. */
static int
on_submit(void *ctx, struct ipc_msg *m)
{
	static struct cmdrun r;
	struct helper *h = ctx;
	const struct gw_config *c = h->c;
	struct sl_submit s;
	struct sl_submitted d;
	char name[STORE_ID_MAX + 24], time[32], mem[32], part[CONFIG_STR_MAX +
	    16], user[CONFIG_STR_MAX + 16], wrap[2 * CONFIG_STR_MAX + 64];
	char *argv[20];
	int n = 0;

	memcpy(&s, m->data, sizeof(s));
	memset(&d, 0, sizeof(d));
	if (ipc_str_get(d.id, sizeof(d.id), s.id, sizeof(s.id)) != 0 ||
	    !store_id_valid(d.id) || s.minutes == 0 || s.mem_mb == 0)
		return -1;
	snprintf(name, sizeof(name), "--job-name=cdsgate-%s", d.id);
	snprintf(time, sizeof(time), "--time=%u", s.minutes);
	snprintf(mem, sizeof(mem), "--mem=%u", s.mem_mb);
	snprintf(user, sizeof(user), "--uid=%s", c->slurm_job_user);
	argv[n++] = SBATCH;
	argv[n++] = "--parsable";
	argv[n++] = name;
	argv[n++] = time;
	argv[n++] = mem;
	argv[n++] = user;
	argv[n++] = "--nodes=1";
	argv[n++] = "--ntasks=1";
	argv[n++] = "--chdir=/";
	argv[n++] = "--output=/dev/null";
	argv[n++] = "--no-requeue";	/* a failed node ends its sessions */
	if (c->slurm_partition[0] != '\0') {
		snprintf(part, sizeof(part), "--partition=%s",
		    c->slurm_partition);
		argv[n++] = part;
	}
	argv[n++] = "--wrap";
	argv[n++] = wrap;
	argv[n] = NULL;
	if (submit_wrap(c, wrap, sizeof(wrap)) != 0)
		snprintf(d.err, sizeof(d.err), "cdsgated and node_socket must "
		    "be plain paths (letters, digits, _-./%%)");
	else if (slurm_cmd(&r, c, argv) != 0)
		snprintf(d.err, sizeof(d.err), "sbatch: %.200s", r.err[0] ? r.err :
		    "failed");
	else if ((d.job = strtoll(r.out, NULL, 10)) <= 0)
		snprintf(d.err, sizeof(d.err), "sbatch printed no job id");
	d.err[strcspn(d.err, "\n")] = '\0';
	return ipc_send(h->sock, &slurm_proto, SL_SUBMITTED, &d, sizeof(d),
	    -1) == IPC_OK ? 0 : -1;
}

/* CANCEL: scancel the job (gone already is fine). */
static int
on_cancel(void *ctx, struct ipc_msg *m)
{
	static struct cmdrun r;
	struct helper *h = ctx;
	struct sl_cancel k;
	char job[32];
	char *argv[] = { SCANCEL, job, NULL };

	memcpy(&k, m->data, sizeof(k));
	if (k.job <= 0)
		return -1;
	snprintf(job, sizeof(job), "%lld", (long long)k.job);
	if (slurm_cmd(&r, h->c, argv) != 0)
		log_warnx("slurm: scancel %s: %s", job, r.err);
	return 0;
}

/* EXTEND: the job's time limit follows the session's expiry. */
static int
on_extend(void *ctx, struct ipc_msg *m)
{
	static struct cmdrun r;
	struct helper *h = ctx;
	struct sl_extend x;
	char job[40], lim[40];
	char *argv[] = { SCONTROL, "update", job, lim, NULL };

	memcpy(&x, m->data, sizeof(x));
	if (x.job <= 0 || x.minutes == 0)
		return -1;
	snprintf(job, sizeof(job), "JobId=%lld", (long long)x.job);
	snprintf(lim, sizeof(lim), "TimeLimit=%u", x.minutes);
	if (slurm_cmd(&r, h->c, argv) != 0)
		log_warnx("slurm: scontrol update %s %s: %s", job, lim, r.err);
	return 0;
}

/* Run argv, answer type with its output (ok) or its error. */
static int
answer_cmd(struct helper *h, char **argv, uint32_t type)
{
	static struct cmdrun r;
	static struct sl_answer a;

	memset(&a, 0, sizeof(a));
	a.ok = slurm_cmd(&r, h->c, argv) == 0;
	snprintf(a.text, sizeof(a.text), "%.2000s", a.ok ? r.out : r.err);
	return ipc_send(h->sock, &slurm_proto, type, &a, sizeof(a), -1) ==
	    IPC_OK ? 0 : -1;
}

/* NODES: `sinfo` per node: name, state, memory, free memory. */
static int
on_nodes(void *ctx, struct ipc_msg *m)
{
	char *argv[] = { SINFO, "--noheader", "--Node", "--format=%N %T %m %e",
	    NULL };

	(void)m;
	return answer_cmd(ctx, argv, SL_NODES_DONE);
}

/* POLL: slurm_job_user's jobs and their states. */
static int
on_poll(void *ctx, struct ipc_msg *m)
{
	struct helper *h = ctx;
	char user[CONFIG_STR_MAX + 16];
	char *argv[] = { SQUEUE, "--noheader", user, "--format=%i %T", NULL };

	(void)m;
	snprintf(user, sizeof(user), "--user=%s", h->c->slurm_job_user);
	return answer_cmd(h, argv, SL_POLL_DONE);
}

static int
on_answer(void *ctx, struct ipc_msg *m)
{
	struct helper *h = ctx;

	memcpy(&h->answer, m->data, sizeof(h->answer));
	h->answer.text[sizeof(h->answer.text) - 1] = '\0';
	h->answered = 1;
	return 0;
}

static const struct ipc_handler from_parent[] = {
	{ SL_SUBMIT, on_submit },
	{ SL_CANCEL, on_cancel },
	{ SL_ANSWER, on_answer },
	{ SL_NODES, on_nodes },
	{ SL_POLL, on_poll },
	{ SL_EXTEND, on_extend },
};

static int
dispatch(struct helper *h)
{
	struct ipc_peer peer = { h->sock, "parent", &slurm_proto, from_parent,
	    sizeof(from_parent) / sizeof(from_parent[0]) };
	int rc = ipc_dispatch(&peer, h, NULL);

	if (rc != IPC_OK && rc != IPC_EOF)
		log_warnx("slurm: the parent broke the protocol (%s)",
		    ipc_strerror(rc));
	return rc;
}

/* Does Slurm run job on node, now?  0, or -1 with why. */
static int
job_on_node(const struct gw_config *c, int64_t job, const char *node,
    char *why, size_t len)
{
	static struct cmdrun r;
	char j[32], *nl;
	char *argv[] = { SQUEUE, "--noheader", "--jobs", j, "--format=%N %T",
	    NULL };

	snprintf(j, sizeof(j), "%lld", (long long)job);
	if (slurm_cmd(&r, c, argv) != 0)
		return snprintf(why, len, "squeue: %.200s", r.err), -1;
	if ((nl = strchr(r.out, '\n')) != NULL)
		*nl = '\0';
	if (strncmp(r.out, node, strlen(node)) != 0 ||
	    strcmp(r.out + strlen(node), " RUNNING") != 0)
		return snprintf(why, len, "Slurm says job %s is \"%.80s\", not "
		    "running on %s", j, r.out, node), -1;
	return 0;
}

/* The node's NodeAddr as scontrol says. */
static int
node_addr(const struct gw_config *c, const char *node, char *addr,
    size_t len)
{
	static struct cmdrun r;
	char *argv[] = { SCONTROL, "--oneliner", "show", "node", (char *)node,
	    NULL };
	const char *a;

	if (slurm_cmd(&r, c, argv) != 0 ||
	    (a = strstr(r.out, " NodeAddr=")) == NULL)
		return -1;
	a += 10;
	snprintf(addr, len, "%.*s", (int)strcspn(a, " \n"), a);
	return 0;
}

/* "ready JOB NODE ADDR PORT TOKEN": the address is the node's, as
 * Slurm has it and as it connected from. */
static int
check_ready(const struct gw_config *c, struct sl_node *n, const char *peer,
    char *why, size_t len)
{
	char slurm[SLURM_ADDR_MAX];
	unsigned char bin[16];

	if (inet_pton(AF_INET, n->addr, bin) != 1 &&
	    inet_pton(AF_INET6, n->addr, bin) != 1)
		return snprintf(why, len, "not a numeric address"), -1;
	if (n->port == 0 || n->port > 65535 || !word_ok(n->ws_token,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	    sizeof(n->ws_token)))
		return snprintf(why, len, "bad port or token"), -1;
	if (node_addr(c, n->node, slurm, sizeof(slurm)) != 0)
		return snprintf(why, len, "scontrol knows no node %s",
		    n->node), -1;
	if (strcmp(slurm, n->addr) != 0 || strcmp(peer, n->addr) != 0)
		return snprintf(why, len, "ready at %.46s from %.46s, but "
		    "%.63s's NodeAddr is %.46s", n->addr, peer, n->node, slurm),
		    -1;
	return 0;
}

/* "copies"/"removed" about a job that is over: Slurm no longer says
 * where it ran, so the request must come from the node's NodeAddr (a
 * node asks only about its own copies). */
static int
from_node(const struct gw_config *c, const struct sl_node *n,
    const char *peer, char *why, size_t len)
{
	char slurm[SLURM_ADDR_MAX];

	if (node_addr(c, n->node, slurm, sizeof(slurm)) != 0)
		return snprintf(why, len, "scontrol knows no node %s",
		    n->node), -1;
	if (strcmp(slurm, peer) != 0)
		return snprintf(why, len, "a request for %.63s from %.46s, but "
		    "its NodeAddr is %.46s", n->node, peer, slurm), -1;
	return 0;
}

/* Parse and check a node's request into n.  0, or -1 with why. */
static int
node_parse(const struct gw_config *c, const char *req, const char *peer,
    struct sl_node *n, char *why, size_t len)
{
	char verb[8], job[24], a[SLURM_ADDR_MAX], b[PIPC_TOKEN_MAX];
	unsigned port = 0;
	int k;

	memset(n, 0, sizeof(*n));
	k = sscanf(req, "%7s %23s %63s %63s %u %63s", verb, job, n->node, a,
	    &port, b);
	if (k < 3 || strspn(job, "0123456789") != strlen(job) ||
	    !word_ok(n->node, name_chars, sizeof(n->node)) ||
	    (n->job = strtoll(job, NULL, 10)) <= 0)
		return snprintf(why, len, "a malformed request"), -1;
	if (strcmp(verb, "ask") == 0 && k == 3)
		n->what = SLN_ASK;
	else if (strcmp(verb, "ready") == 0 && k == 6) {
		n->what = SLN_READY;
		snprintf(n->addr, sizeof(n->addr), "%s", a);
		snprintf(n->ws_token, sizeof(n->ws_token), "%s", b);
		n->port = port;
		return job_on_node(c, n->job, n->node, why, len) != 0 ? -1 :
		    check_ready(c, n, peer, why, len);
	} else if ((strcmp(verb, "ended") == 0 || strcmp(verb,
	    "removed") == 0) && k == 4 && strspn(a, "0123456789") ==
	    strlen(a) && strlen(a) < 6) {
		/* the job is over: Slurm has nothing to say of it, the
		   parent checks it is that node's */
		n->what = verb[0] == 'e' ? SLN_ENDED : SLN_REMOVED;
		n->status = atoi(a);
		return n->what == SLN_ENDED ? 0 : from_node(c, n, peer, why,
		    len);
	} else if (strcmp(verb, "copies") == 0 && k == 3) {
		n->what = SLN_COPIES;
		return from_node(c, n, peer, why, len);
	} else
		return snprintf(why, len, "a malformed request"), -1;
	return job_on_node(c, n->job, n->node, why, len);
}

/* Hand the checked request to the parent; wait for its answer (the
 * parent's other requests are served meanwhile). */
static int
ask_parent(struct helper *h, const struct sl_node *n)
{
	h->answered = 0;
	if (ipc_send(h->sock, &slurm_proto, SL_NODE, n, sizeof(*n), -1) !=
	    IPC_OK)
		return -1;
	while (!h->answered)
		if (dispatch(h) != IPC_OK)
			return -1;
	return 0;
}

static void
peer_text(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	buf[0] = '\0';
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, buf,
		    (socklen_t)len);
	else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf,
		    (socklen_t)len);
	else
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)len);
}

/* One node connection: read, check, ask the parent, answer. */
static int
node_request(struct helper *h, int fd)
{
	static char req[MUNGE_PAYLOAD_MAX], out[SLURM_TEXT_MAX + 8];
	char peer[SLURM_ADDR_MAX], why[PIPC_REASON_MAX], err[256];
	struct sl_node n;

	peer_text(fd, peer, sizeof(peer));
	if (munge_read_request(h->c, fd, req, sizeof(req), err,
	    sizeof(err)) != 0) {
		log_warnx("slurm: a request from %s refused: %s", peer, err);
		return 0;
	}
	if (node_parse(h->c, req, peer, &n, why, sizeof(why)) != 0) {
		log_warnx("slurm: a request from %s refused: %s", peer, why);
		snprintf(out, sizeof(out), "no %s", why);
	} else if (ask_parent(h, &n) != 0)
		return -1;
	else
		snprintf(out, sizeof(out), "%s %s", h->answer.ok ? "ok" : "no",
		    h->answer.text);
	if (munge_write_answer(h->c, fd, out, err, sizeof(err)) != 0)
		log_warnx("slurm: answering %s: %s", peer, err);
	explicit_bzero(out, sizeof(out));
	explicit_bzero(&h->answer, sizeof(h->answer));
	return 0;
}

int
slurm_listen_on(const char *addr)
{
	struct addrinfo *ai = munge_resolve(addr, 1);
	int fd = -1, one = 1;

	if (ai == NULL)
		return -1;
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		    listen(fd, 16) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	return fd;
}

/* A child of the parent: nothing of the parent's but sock, its signals
 * unblocked (Slurm's commands inherit the mask), confined, dies with
 * the parent; exits when that fails. */
void
slurm_child_confine(int sock, const char *name)
{
	struct confine c;
	char err[256];
	sigset_t none;

	if (sock > 3)
		close_range(3, (unsigned)sock - 1, 0);
	close_range((unsigned)sock + 1, ~0U, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	confine_init(&c, name);
	c.deathsig = SIGKILL;
	c.parent = getppid();
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		log_warnx("%s: %s", name, err);
		_exit(1);
	}
	signal(SIGPIPE, SIG_IGN);
}

/* A Slurm-runner child's deny-list (SLURM: sandbox/profiles.c), once its
 * listener lfd is open and before it reads a byte; exits when there is
 * no listener or the filter cannot be loaded. */
void
slurm_child_filter(int lfd, const char *name)
{
	struct confine c;
	char err[256];

	confine_init(&c, name);
	c.profile = SANDBOX_PROFILE_SLURM;
	if (lfd < 0 || sandbox_init(SANDBOX_MODE_BUILT, 0, err,
	    sizeof(err)) != 0 || confine_apply(&c, err, sizeof(err)) !=
	    CONFINE_OK) {
		log_warnx("%s: %s", name, lfd < 0 ? "cannot listen" : err);
		_exit(1);
	}
	log_info("%s: sandbox %s, profile %s", name, sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_SLURM));
}

static void __attribute__((noreturn))
helper_main(int sock, void *arg)
{
	struct helper h = { arg, sock, -1, { 0 }, 0 };
	struct pollfd p[2];
	int fd, rc = IPC_OK;

	slurm_child_confine(sock, "slurm helper");
	h.lfd = slurm_listen_on(h.c->slurm_listen);
	slurm_child_filter(h.lfd, "slurm helper");
	while (rc == IPC_OK) {
		p[0] = (struct pollfd){ sock, POLLIN, 0 };
		p[1] = (struct pollfd){ h.lfd, POLLIN, 0 };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents != 0)
			rc = dispatch(&h);
		if (rc == IPC_OK && p[1].revents != 0 &&
		    (fd = accept4(h.lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			if (node_request(&h, fd) != 0)
				rc = IPC_EOF;
			close(fd);
		}
	}
	_exit(rc == IPC_EOF ? 0 : 1);
}

int
slurm_helper_start(const struct gw_config *c, pid_t *pid, int *sock,
    char *err, size_t errlen)
{
	int fd = slurm_listen_on(c->slurm_listen);

	/* bound once here to say so before anything starts; the helper
	   binds it again for itself (SO_REUSEADDR) */
	if (fd < 0)
		return snprintf(err, errlen, "slurm_listen %s: %s",
		    c->slurm_listen, strerror(errno)), -1;
	close(fd);
	return ipc_helper_start(helper_main, (void *)c, pid, sock, err,
	    errlen);
}

/* ---- the session a node gets ---- */

int
slurm_spec_text(const struct pipc_start *m, char *buf, size_t len)
{
	int n = snprintf(buf, len, "id %s\nrecipient %s\nexpires %lld\n"
	    "secret %s\nmemory %u\ndataset %lld\npg_role %s\npg_password %s\n",
	    m->id, m->recipient, (long long)m->expires, m->secret,
	    m->memory_limit_mb, (long long)m->dataset,
	    m->pg_role[0] ? m->pg_role : "-",
	    m->pg_password[0] ? m->pg_password : "-");

	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* One "key value" line into dst (bounded); "-" is empty. */
static int
spec_field(const char *text, const char *key, char *dst, size_t len)
{
	const char *p = text;
	size_t k = strlen(key), n;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, k) == 0 && p[k] == ' ') {
			n = strcspn(p + k + 1, "\n");
			if (n == 0 || n >= len)
				return -1;
			memcpy(dst, p + k + 1, n);
			dst[n] = '\0';
			if (strcmp(dst, "-") == 0)
				dst[0] = '\0';
			return 0;
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return -1;
}

/* The fields only: parent_session_start() checks every one again. */
int
slurm_spec_parse(const char *text, struct pipc_start *m)
{
	char num[3][24];

	memset(m, 0, sizeof(*m));
	if (spec_field(text, "id", m->id, sizeof(m->id)) != 0 ||
	    spec_field(text, "recipient", m->recipient,
	    sizeof(m->recipient)) != 0 ||
	    spec_field(text, "expires", num[0], sizeof(num[0])) != 0 ||
	    spec_field(text, "secret", m->secret, sizeof(m->secret)) != 0 ||
	    spec_field(text, "memory", num[1], sizeof(num[1])) != 0 ||
	    spec_field(text, "dataset", num[2], sizeof(num[2])) != 0 ||
	    spec_field(text, "pg_role", m->pg_role, sizeof(m->pg_role)) != 0 ||
	    spec_field(text, "pg_password", m->pg_password,
	    sizeof(m->pg_password)) != 0)
		return -1;
	m->expires = strtoll(num[0], NULL, 10);
	m->memory_limit_mb = (uint32_t)strtoul(num[1], NULL, 10);
	m->dataset = strtoll(num[2], NULL, 10);
	return 0;
}

int
slurm_spec_key(const char *text, char *key, size_t len)
{
	key[0] = '\0';
	return spec_field(text, "evidence_key", key, len);
}
