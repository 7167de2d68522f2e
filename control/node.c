/*
 * control/node.c — the Slurm runner's compute-node side.
 *
 * `cdsgated node --config FILE` (root, one per node): the same session
 * table and loop as `cdsgated serve` (parent-session.c: ports, secret
 * files, one supervisor per session), asked not by an api child but by
 * its uplink child, which
 *   - takes a session's job's request on node_socket ("start JOBID"),
 *     only from slurm_job_user (SO_PEERCRED);
 *   - asks the control plane, MUNGE-sealed (control/munge.h), which
 *     session that job is: never the job's own word for it;
 *   - starts it through the parent, reports "ready JOB NODE ADDR PORT
 *     TOKEN" and, when it ends, "ended JOB NODE STATUS";
 *   - stops the session when the job's connection closes (the job was
 *     cancelled or ran out of time) and closes it when the session ends
 *     (the job then exits);
 *   - every EVIDENCE_TICK_MS sends what grew of each session's
 *     recording, network log and capture to the control plane
 *     (control/evidence.h), and all of it before it reports "ended";
 *   - after the end asks "copies JOB NODE" until the control plane says
 *     its copy is chained ("remove" with its digests: the node's own
 *     copies go if they are byte for byte that copy, and it says so,
 *     "removed JOB NODE MASK"), or says to keep them, or HANDOVER_MS
 *     pass.
 * `cdsgated node-job --socket PATH` is that job: unprivileged, it asks
 * and then waits.
 *
 * Trust: the job is untrusted (one bounded line); the control plane's
 * answers are MUNGE-checked (root's) and go through parent_session_start()'s
 * checks like the api's requests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "control/evidence.h"
#include "control/munge.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "control/slurm.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

struct jconn {
	int		fd;		/* the job's connection; -1: free */
	int64_t		job;
	char		id[STORE_ID_MAX];
	int		stopping;	/* STOP sent */
	int		ready;		/* the control plane took "ready" */
	struct ev_stream ev;		/* its evidence, to the control plane */
};

#define HANDOVER_MS	60000	/* an ended session's copies asked about */
#define HANDOVER_EVERY_MS	1000

/* An ended session whose evidence the control plane took: are the
 * node's own copies still needed? */
struct handover {
	char		id[STORE_ID_MAX];	/* "": free */
	int64_t		job;
	long long	next_ms, until_ms;
};

struct uplink {
	const struct gw_config	*c;
	int			 ipc;	/* to the node's parent */
	int			 lfd;	/* node_socket */
	uid_t			 job_uid;
	struct jconn		 j[PARENT_MAX_SESSIONS];
	struct handover		 ho[PARENT_MAX_SESSIONS];
};

/* node_socket with "%n" as name. */
static void
node_socket_path(const char *tmpl, const char *name, char *buf, size_t len)
{
	const char *n = strstr(tmpl, "%n");

	if (n == NULL)
		snprintf(buf, len, "%s", tmpl);
	else
		snprintf(buf, len, "%.*s%s%s", (int)(n - tmpl), tmpl, name,
		    n + 2);
}

static struct jconn *
conn_by_id(struct uplink *u, const char *id)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (u->j[i].fd >= 0 && strcmp(u->j[i].id, id) == 0)
			return &u->j[i];
	return NULL;
}

/* Tell the control plane; its answer's first word must be "ok". */
static int
tell(struct uplink *u, const char *req, char *ans, size_t len)
{
	char err[256];

	if (munge_call(u->c, req, ans, len, err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (strncmp(ans, "ok", 2) != 0) {
		log_warnx("the control plane says: %.200s", ans);
		return -1;
	}
	return 0;
}

static void
conn_close(struct jconn *j, const char *line)
{
	if (line != NULL)
		dprintf(j->fd, "%s\n", line);
	close(j->fd);
	j->fd = -1;
	j->id[0] = '\0';
}

/* "start JOBID" from the job: ask, then start it through the parent. */
static void
conn_start(struct uplink *u, struct jconn *j)
{
	static char ans[SLURM_TEXT_MAX + 8];
	static struct pipc_start m;
	char line[64], req[128];
	long long job;
	ssize_t n;
	struct pollfd p = { j->fd, POLLIN, 0 };

	if (poll(&p, 1, 2000) != 1 || (n = read(j->fd, line,
	    sizeof(line) - 1)) <= 0) {
		conn_close(j, "no request");
		return;
	}
	line[n] = '\0';
	if (sscanf(line, "start %lld", &job) != 1 || job <= 0) {
		conn_close(j, "no: a malformed request");
		return;
	}
	j->job = job;
	snprintf(req, sizeof(req), "ask %lld %.63s", job, u->c->node_name);
	if (tell(u, req, ans, sizeof(ans)) != 0 ||
	    slurm_spec_parse(ans + 3, &m) != 0 ||
	    conn_by_id(u, m.id) != NULL) {
		explicit_bzero(ans, sizeof(ans));
		conn_close(j, "no: the control plane has no session for this "
		    "job here");
		return;
	}
	snprintf(j->id, sizeof(j->id), "%s", m.id);
	snprintf(j->ev.id, sizeof(j->ev.id), "%s", m.id);
	if (slurm_spec_key(ans + 3, j->ev.key, sizeof(j->ev.key)) != 0)
		log_warnx("session %s: no evidence key: its evidence "
		    "stays here", j->id);
	log_warnx("job %lld is session %s", job, j->id);
	ipc_send(u->ipc, &pipc_proto, PIPC_SESSION_START, &m, sizeof(m), -1);
	explicit_bzero(ans, sizeof(ans));
	explicit_bzero(&m, sizeof(m));
}

static void
conn_accept(struct uplink *u)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd, i;

	if ((fd = accept4(u->lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 ||
	    cr.uid != u->job_uid) {
		dprintf(fd, "no: only %s's jobs ask here\n",
		    u->c->slurm_job_user);
		close(fd);
		return;
	}
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (u->j[i].fd < 0) {
			memset(&u->j[i], 0, sizeof(u->j[i]));
			u->j[i].fd = fd;
			conn_start(u, &u->j[i]);
			return;
		}
	dprintf(fd, "no: too many sessions\n");
	close(fd);
}

/* The job's connection closed: its job ended; stop the session. */
static void
conn_gone(struct uplink *u, struct jconn *j)
{
	struct pipc_stop s;

	if (j->stopping)
		return;
	j->stopping = 1;
	memset(&s, 0, sizeof(s));
	snprintf(s.id, sizeof(s.id), "%s", j->id);
	snprintf(s.reason, sizeof(s.reason), "its Slurm job %lld ended",
	    (long long)j->job);
	ipc_send(u->ipc, &pipc_proto, PIPC_SESSION_STOP, &s, sizeof(s), -1);
}

/* STARTED: report "ready" (the control plane checks it with Slurm). */
static int
up_started(void *ctx, struct ipc_msg *m)
{
	struct uplink *u = ctx;
	struct pipc_started s;
	struct jconn *j;
	char req[256], ans[SLURM_TEXT_MAX + 8];

	memcpy(&s, m->data, sizeof(s));
	s.id[sizeof(s.id) - 1] = s.ws_token[sizeof(s.ws_token) - 1] = '\0';
	if ((j = conn_by_id(u, s.id)) == NULL)
		return 0;
	snprintf(req, sizeof(req), "ready %lld %.63s %.63s %u %.63s",
	    (long long)j->job, u->c->node_name, u->c->session_address,
	    s.port, s.ws_token[0] ? s.ws_token : "-");
	explicit_bzero(&s, sizeof(s));
	if (tell(u, req, ans, sizeof(ans)) != 0)
		conn_gone(u, j);	/* not recorded there: not served */
	else {
		j->ready = 1;	/* its evidence is taken from now on */
		log_warnx("session %s ready (job %lld)", j->id,
		    (long long)j->job);
	}
	explicit_bzero(req, sizeof(req));
	return 0;
}

/* What grew of j's evidence to the control plane (all: every byte,
 * the session is over). */
static void
evidence_send(struct uplink *u, struct jconn *j, int all)
{
	char err[256];

	if (j->ready && evidence_push(u->c, &j->ev, all, err,
	    sizeof(err)) != 0)
		log_warnx("session %s: evidence: %s (%llu bytes "
		    "there)", j->id, err, (unsigned long long)j->ev.bytes);
	if (all)
		explicit_bzero(&j->ev, sizeof(j->ev));
}

/* Every EVIDENCE_TICK_MS: what grew of each session's evidence. */
static void
evidence_tick(struct uplink *u, long long *next)
{
	int i;

	if (munge_mono_ms() < *next)
		return;
	*next = munge_mono_ms() + EVIDENCE_TICK_MS;
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (u->j[i].fd >= 0 && u->j[i].id[0] != '\0')
			evidence_send(u, &u->j[i], 0);
}

/* After j's end: its copies here are asked about from the next tick. */
static void
handover_add(struct uplink *u, const struct jconn *j)
{
	struct handover *h = NULL;
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS && h == NULL; i++)
		if (u->ho[i].id[0] == '\0')
			h = &u->ho[i];
	if (h == NULL) {
		log_warnx("session %s: too many ended sessions asked about; "
		    "its copies here are kept", j->id);
		return;
	}
	snprintf(h->id, sizeof(h->id), "%s", j->id);
	h->job = j->job;
	h->next_ms = munge_mono_ms() + EVIDENCE_TICK_MS;
	h->until_ms = munge_mono_ms() + HANDOVER_MS;
}

/* "remove R N C": the copies here go if they are those; the control
 * plane is told what went (it audits it). */
static void
handover_remove(struct uplink *u, struct handover *h, const char *ans)
{
	static const char *const what[EVIDENCE_FILES] = { "recording",
	    "network log", "capture" };
	char want[EVIDENCE_FILES][72], got[EVIDENCE_FILES][72], why[256];
	char req[128], name[STORE_ID_MAX + 16], a[SLURM_TEXT_MAX + 8];
	int mask = 0, f, r;

	if (sscanf(ans, "ok remove %71s %71s %71s", want[0], want[1],
	    want[2]) != 3) {
		log_warnx("session %s: its copies here are kept: the control "
		    "plane's answer is malformed", h->id);
		return;
	}
	r = evidence_copies_remove(u->c, h->id, want, &mask, got, why,
	    sizeof(why));
	for (f = 0; f < EVIDENCE_FILES; f++)
		if ((mask & (1 << f)) && evidence_file_name(h->id, f, name,
		    sizeof(name)) == 0)
			log_warnx("session %s: removed its %s %s/%s here "
			    "(sha256 %s): the control plane's copy is chained",
			    h->id, what[f], u->c->record_dir, name, got[f][0] ?
			    got[f] : "of nothing: empty");
	if (r != 0)
		log_warnx("session %s: its copies here are kept: %s", h->id,
		    why);
	if (mask == 0)
		return;
	snprintf(req, sizeof(req), "removed %lld %.63s %d", (long long)h->job,
	    u->c->node_name, mask);
	tell(u, req, a, sizeof(a));
}

/* One ended session asked about: its copies removed or kept (entry
 * freed), or asked again at the next step. */
static void
handover_ask(struct uplink *u, struct handover *h)
{
	char req[128], ans[SLURM_TEXT_MAX + 8], err[256];
	long long now = munge_mono_ms();

	snprintf(req, sizeof(req), "copies %lld %.63s", (long long)h->job,
	    u->c->node_name);
	if (munge_call(u->c, req, ans, sizeof(ans), err, sizeof(err)) != 0)
		snprintf(ans, sizeof(ans), "wait (%.200s)", err);
	if (strncmp(ans, "ok remove ", 10) == 0)
		handover_remove(u, h, ans);
	else if (strncmp(ans, "ok keep ", 8) == 0 || strncmp(ans, "no ", 3) ==
	    0)
		log_warnx("session %s: its copies here are kept: the control "
		    "plane says %.200s", h->id, ans + 3);
	else if (now < h->until_ms) {
		h->next_ms = now + HANDOVER_EVERY_MS;
		return;
	} else
		log_warnx("session %s: its copies here are kept: the control "
		    "plane did not say its copy was chained within %d s "
		    "(%.200s)", h->id, HANDOVER_MS / 1000, ans);
	memset(h, 0, sizeof(*h));
}

static void
handover_tick(struct uplink *u)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (u->ho[i].id[0] != '\0' &&
		    munge_mono_ms() >= u->ho[i].next_ms)
			handover_ask(u, &u->ho[i]);
}

/* FAILED / ENDED: report "ended", release the job. */
static void
up_over(struct uplink *u, const char *id, int status)
{
	struct jconn *j = conn_by_id(u, id);
	char req[128], ans[SLURM_TEXT_MAX + 8], line[32];

	if (j == NULL)
		return;
	evidence_send(u, j, 1);	/* all of it there before "ended" */
	snprintf(req, sizeof(req), "ended %lld %.63s %d", (long long)j->job,
	    u->c->node_name, status < 0 ? 1 : status);
	if (tell(u, req, ans, sizeof(ans)) == 0 && j->ready)
		handover_add(u, j);
	snprintf(line, sizeof(line), "ended %d", status);
	conn_close(j, line);
}

static int
up_failed(void *ctx, struct ipc_msg *m)
{
	struct pipc_failed f;

	memcpy(&f, m->data, sizeof(f));
	f.id[sizeof(f.id) - 1] = f.reason[sizeof(f.reason) - 1] = '\0';
	log_warnx("session %s did not start: %s", f.id, f.reason);
	up_over(ctx, f.id, 1);
	return 0;
}

static int
up_ended(void *ctx, struct ipc_msg *m)
{
	struct pipc_ended e;

	memcpy(&e, m->data, sizeof(e));
	e.id[sizeof(e.id) - 1] = '\0';
	up_over(ctx, e.id, e.status);
	return 0;
}

/* A recording closed on this node: its copy on the control plane is
 * what goes to the audit chain there; this digest is logged here. */
static int
up_record(void *ctx, struct ipc_msg *m)
{
	struct pipc_record r;

	(void)ctx;
	memcpy(&r, m->data, sizeof(r));
	r.id[sizeof(r.id) - 1] = r.sha256[sizeof(r.sha256) - 1] = '\0';
	log_warnx("session %s: recording closed here (sha256 %s); "
	    "the control plane chains its copy", r.id, r.sha256);
	return 0;
}

/* Retention asks: keep.  The node's copies go only once the control
 * plane's are chained (handover_remove), not by age or size here. */
static int
up_expire(void *ctx, struct ipc_msg *m)
{
	struct uplink *u = ctx;
	struct pipc_expired e;

	memcpy(&e, m->data, sizeof(e));
	e.ok = 0;
	return ipc_send(u->ipc, &pipc_proto, PIPC_RECORD_EXPIRED, &e,
	    sizeof(e), -1) == IPC_OK ? 0 : -1;
}

static const struct ipc_handler from_parent[] = {
	{ PIPC_SESSION_STARTED, up_started },
	{ PIPC_SESSION_FAILED, up_failed },
	{ PIPC_SESSION_ENDED, up_ended },
	{ PIPC_RECORD_CLOSED, up_record },
	{ PIPC_RECORD_EXPIRE, up_expire },
};

/* node_socket: 0666 (SO_PEERCRED decides), in a directory made 0755. */
static int
uplink_bind(const struct gw_config *c)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[CONFIG_STR_MAX];
	int fd;

	node_socket_path(c->node_socket, c->node_name, path, sizeof(path));
	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, 16) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
uplink_pollfds(struct uplink *u, struct pollfd *p)
{
	int n = 0, i;

	p[n++] = (struct pollfd){ u->ipc, POLLIN, 0 };
	p[n++] = (struct pollfd){ u->lfd, POLLIN, 0 };
	/* a job's closed connection is not polled again once its STOP
	   is sent (it would report POLLHUP until the session ends) */
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		p[n++] = (struct pollfd){ u->j[i].stopping ? -1 : u->j[i].fd,
		    POLLIN, 0 };
	return n;
}

static void __attribute__((noreturn))
uplink_main(struct uplink *u, pid_t parent)
{
	struct ipc_peer peer = { u->ipc, "node parent", &pipc_proto,
	    from_parent, sizeof(from_parent) / sizeof(from_parent[0]) };
	struct pollfd p[2 + PARENT_MAX_SESSIONS];
	struct confine c;
	char err[256], sink[64];
	long long tick = 0;
	int n, i;

	confine_init(&c, "node uplink");
	c.deathsig = SIGKILL;
	c.parent = parent;
	/* node_socket is bound (node_spawn_uplink): the UPLINK deny-list
	   before a job or the control plane is read */
	c.profile = SANDBOX_PROFILE_UPLINK;
	if (sandbox_init(SANDBOX_MODE_BUILT, 0, err, sizeof(err)) != 0 ||
	    confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		log_warnx("uplink: %s", err);
		_exit(1);
	}
	log_info("uplink: sandbox %s, profile %s", sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_UPLINK));
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		u->j[i].fd = -1;
	for (;;) {
		n = uplink_pollfds(u, p);
		if (poll(p, (nfds_t)n, EVIDENCE_TICK_MS) < 0 && errno != EINTR)
			_exit(1);
		if (p[0].revents != 0 && ipc_dispatch(&peer, u, NULL) != IPC_OK)
			_exit(0);
		if (p[1].revents != 0)
			conn_accept(u);
		for (i = 0; i < PARENT_MAX_SESSIONS; i++)
			if (p[2 + i].revents != 0 && u->j[i].fd >= 0 &&
			    read(u->j[i].fd, sink, sizeof(sink)) <= 0)
				conn_gone(u, &u->j[i]);
		evidence_tick(u, &tick);
		handover_tick(u);
	}
}

/* Fork the uplink with its end of a socketpair; p->ipc is ours. */
static int
node_spawn_uplink(struct parent *p, const sigset_t *old)
{
	static struct uplink u;
	struct passwd *pw = getpwnam(p->cfg.slurm_job_user);
	pid_t parent = getpid();
	int sv[2];

	if (pw == NULL) {
		log_warnx("slurm_job_user %s: no such user",
		    p->cfg.slurm_job_user);
		return -1;
	}
	u.c = &p->cfg;
	u.job_uid = pw->pw_uid;
	if ((u.lfd = uplink_bind(&p->cfg)) < 0) {
		log_warn("node_socket %s", p->cfg.node_socket);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
	    (p->api_pid = fork()) < 0) {
		log_warn("uplink");
		return -1;
	}
	if (p->api_pid == 0) {
		close(sv[0]);
		close(p->sigfd);
		sigprocmask(SIG_SETMASK, old, NULL);
		u.ipc = sv[1];
		uplink_main(&u, parent);
	}
	close(sv[1]);
	close(u.lfd);
	p->ipc = sv[0];
	return 0;
}

static int
node_usage(void)
{
	fprintf(stderr, "usage: cdsgated node --config FILE\n");
	return SESSION_EXIT_CONFIG;
}

int
node_cmd(int argc, char **argv)
{
	static struct parent p;
	struct policy_error e;
	sigset_t old;
	int r;

	log_init("cdsgated node");
	if (argc != 2 || strcmp(argv[0], "--config") != 0)
		return node_usage();
	if (config_load(&p.cfg, argv[1], &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return SESSION_EXIT_CONFIG;
	}
	if (p.cfg.node_name[0] == '\0' || p.cfg.control_address[0] == '\0' ||
	    parent_slurm_on(&p)) {
		log_warnx("%s: node_name and control_address are required, "
		    "session_runner is \"local\" (the node runs them)", argv[1]);
		return SESSION_EXIT_CONFIG;
	}
	if (geteuid() != 0) {
		log_warnx("must run as root (it starts session supervisors)");
		return SESSION_EXIT_CONFIG;
	}
	if (parent_dirs(&p.cfg) != 0 || parent_record_dir(&p.cfg) != 0)
		return SESSION_EXIT_CONFIG;
	p.ipc = -1;
	p.listen_fd = -1;
	p.door_pid = -1;	/* the control node's front door relays here */
	p.door_fd = -1;		/* no front door here: not fd 0 */
	if ((p.sigfd = parent_signals(&old)) < 0 ||
	    node_spawn_uplink(&p, &old) != 0)
		return SESSION_EXIT_FAILED;
	printf("ready %s\n", p.cfg.node_name);
	fflush(stdout);
	r = parent_loop(&p, p.sigfd);
	parent_sessions_stop_all(&p, PARENT_STOP_MS);
	if (p.api_pid > 0) {
		kill(p.api_pid, SIGKILL);
		waitpid(p.api_pid, NULL, 0);
	}
	return r == 1 ? SESSION_EXIT_OK : SESSION_EXIT_FAILED;
}

/* ---- the job ---- */

int
node_job_cmd(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *job = getenv("SLURM_JOB_ID"), *name =
	    getenv("SLURMD_NODENAME");
	char path[sizeof(a.sun_path) + 1], line[256];
	ssize_t n;
	int fd;

	log_init("cdsgated node-job");
	if (argc != 2 || strcmp(argv[0], "--socket") != 0) {
		fprintf(stderr, "usage: cdsgated node-job --socket PATH "
		    "(in a Slurm job)\n");
		return SESSION_EXIT_CONFIG;
	}
	if (job == NULL || strspn(job, "0123456789") != strlen(job) ||
	    job[0] == '\0') {
		log_warnx("not in a Slurm job (no SLURM_JOB_ID)");
		return SESSION_EXIT_CONFIG;
	}
	node_socket_path(argv[1], name != NULL ? name : "", path,
	    sizeof(path));
	if (strlen(path) >= sizeof(a.sun_path))
		return SESSION_EXIT_CONFIG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		log_warn("%s", path);
		return SESSION_EXIT_FAILED;
	}
	signal(SIGPIPE, SIG_IGN);	/* a refusal may close it first */
	dprintf(fd, "start %s\n", job);
	/* until the agent closes it: the session is over */
	while ((n = read(fd, line, sizeof(line) - 1)) > 0) {
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		log_warnx("%s", line);	/* the agent's refusal, escaped */
	}
	return SESSION_EXIT_OK;
}
