/*
 * control/parent-slurm.c — the root parent's Slurm runner
 * (session_runner "slurm"): one job per session, submitted and cancelled
 * through the Slurm helper (control/slurm.c), and the nodes' requests
 * the helper has checked: which session a job is, and where it is ready.
 *
 * Root.  Trust: the helper's messages are typed and bounded; it has
 * checked each node's MUNGE credential and that Slurm runs the job on
 * that node, and the parent checks that the job is one of its own, at
 * the step it is at (asked once, ready once, by the node that asked).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/secret.h"
#include "control/evidence.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "control/slurm.h"

_Static_assert(sizeof(((struct pjob *)0)->ev_key) > EVIDENCE_KEY_LEN,
    "a pjob holds an evidence key");

int
parent_slurm_on(const struct parent *p)
{
	return strcmp(p->cfg.session_runner, "slurm") == 0;
}

int
parent_slurm_fd(const struct parent *p)
{
	return p->slurm_pid > 0 ? p->slurm_fd : -1;
}

/* The Slurm helper and the evidence receiver; with --sessiond (the
 * split units) they are the session helper's, not serve's. */
int
parent_slurm_begin(struct parent *p)
{
	char err[256];

	p->slurm_fd = -1;
	if (!parent_slurm_on(p) || p->sessiond != NULL)
		return 0;
	if (slurm_helper_start(&p->cfg, &p->slurm_pid, &p->slurm_fd, err,
	    sizeof(err)) != 0) {
		log_warnx("%s", err);
		p->slurm_pid = 0;
		return -1;
	}
	if (evidence_receiver_start(&p->cfg, &p->ev_pid, &p->ev_fd, err,
	    sizeof(err)) != 0) {
		log_warnx("%s", err);
		p->ev_pid = 0;
		return -1;
	}
	log_warnx("session_runner slurm: nodes report on %s, their "
	    "evidence to port + 1", p->cfg.slurm_listen);
	return 0;
}

int
parent_slurm_ev_fd(const struct parent *p)
{
	return p->ev_pid > 0 ? p->ev_fd : -1;
}

/* What record_closed says of how it ended.  With no api connected (it
 * went away: parent_slurm_end_all) "recovered", whichever api chains it:
 * the next one's recovery, or, when EV_CLOSED comes after it connected,
 * on_ev_closed. */
static const char *
job_end_word(const struct parent *p, const struct pjob *j, int status,
    int failed)
{
	if (p->ipc < 0)
		return "recovered";
	if (failed)
		return "failed";
	if (j->s.stopping && !j->ending)
		return "revoked";
	return status == 0 ? "ended" : "failed";
}

/* The session is over: the receiver closes its control copy and says
 * so (EV_CLOSED), then it is chained; its node asks after its own
 * copies (parent-copies.c). */
static void
evidence_close(struct parent *p, const struct pjob *j, const char *end)
{
	struct ev_close c;
	int r;

	if (!j->s.started || p->ev_pid <= 0)
		return;
	memset(&c, 0, sizeof(c));
	snprintf(c.id, sizeof(c.id), "%s", j->s.id);
	snprintf(c.end, sizeof(c.end), "%s", end);
	if ((r = ipc_send(p->ev_fd, &evidence_proto, EV_CLOSE, &c, sizeof(c),
	    -1)) != IPC_OK)
		log_warnx("session %s: the evidence receiver is gone; "
		    "its recording is chained at the next start", j->s.id);
	parent_copy_begin(p, j->s.id, j->job, j->node, r == IPC_OK);
}

static int
on_ev_closed(void *ctx, struct ipc_msg *m)
{
	struct parent *p = ctx;
	struct ev_close c;
	struct pipc_record sent;

	memcpy(&c, m->data, sizeof(c));
	if (ipc_str_get(c.id, sizeof(c.id), ((struct ev_close *)m->data)->id,
	    sizeof(c.id)) != 0 || ipc_str_get(c.end, sizeof(c.end),
	    ((struct ev_close *)m->data)->end, sizeof(c.end)) != 0 ||
	    !store_id_valid(c.id))
		return -1;
	log_warnx("session %s: %llu bytes of evidence came from its "
	    "node", c.id, (unsigned long long)c.bytes);
	parent_copy_sent(p, c.id, parent_record_chain(p, c.id, c.end, &sent),
	    &sent);
	return 0;
}

/* The receiver said something; -1 when it is gone or broke the
 * protocol (the parent stops everything: fail closed). */
int
parent_slurm_ev_dispatch(struct parent *p)
{
	static const struct ipc_handler from_receiver[] = {
		{ EV_CLOSED, on_ev_closed },
	};
	struct ipc_peer peer = { p->ev_fd, "evidence receiver",
	    &evidence_proto, from_receiver, 1 };
	int rc = ipc_dispatch(&peer, p, NULL);

	if (rc != IPC_OK)
		log_warnx("the evidence receiver: %s; stopping every "
		    "session", ipc_strerror(rc));
	return rc == IPC_OK ? 0 : -1;
}

static struct pjob *
job_by_id(struct parent *p, const char *id)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->jobs[i].s.id[0] != '\0' &&
		    strcmp(p->jobs[i].s.id, id) == 0)
			return &p->jobs[i];
	return NULL;
}

static struct pjob *
job_by_job(struct parent *p, int64_t job)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->jobs[i].s.id[0] != '\0' && p->jobs[i].job == job)
			return &p->jobs[i];
	return NULL;
}

const struct psession *
parent_slurm_session(const struct parent *p, const char *id)
{
	return job_by_id((struct parent *)p, id) != NULL ?
	    &job_by_id((struct parent *)p, id)->s : NULL;
}

static void
send_cancel(struct parent *p, int64_t job)
{
	struct sl_cancel k = { job };

	if (job > 0 && p->slurm_fd >= 0)
		ipc_send(p->slurm_fd, &slurm_proto, SL_CANCEL, &k, sizeof(k),
		    -1);
}

/* The session is over: FAILED before ready or when its node died
 * (failed set), else ENDED; slot freed. */
static void
job_over(struct parent *p, struct pjob *j, int status, int failed,
    const char *why)
{
	struct pipc_failed f;
	struct pipc_ended e;

	memset(&f, 0, sizeof(f));
	memset(&e, 0, sizeof(e));
	snprintf(f.id, sizeof(f.id), "%s", j->s.id);
	snprintf(e.id, sizeof(e.id), "%s", j->s.id);
	e.status = status;
	snprintf(f.reason, sizeof(f.reason), "%s", why);
	log_warnx("session %s (job %lld%s%s): %s%s", j->s.id,
	    (long long)j->job, j->node[0] ? " on " : "", j->node,
	    failed ? "failed: " : "", why);
	parent_door_remove(p, j->s.id);
	evidence_close(p, j, job_end_word(p, j, status, failed));
	if (p->ipc >= 0 && (failed || !j->s.started))
		ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_FAILED, &f,
		    sizeof(f), -1);
	else if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_ENDED, &e,
		    sizeof(e), -1);
	explicit_bzero(j, sizeof(*j));
}

static void
job_done(struct parent *p, struct pjob *j, int status, const char *why)
{
	job_over(p, j, status, 0, why);
}

/* SESSION_START under slurm: keep the request and the front door's
 * entry (the node's session gets its internal password, never the
 * researcher's secret), submit its job. */
const char *
parent_slurm_start(struct parent *p, const struct pipc_start *m,
    const char *secret)
{
	const struct gw_config *c = &p->cfg;
	static struct door_add door;
	struct sl_submit s;
	struct pjob *j = NULL;
	int64_t left = m->expires - (int64_t)time(NULL);
	int i;

	if (job_by_id(p, m->id) != NULL)
		return "a session with this id is running";
	for (i = 0; i < PARENT_MAX_SESSIONS && j == NULL; i++)
		if (p->jobs[i].s.id[0] == '\0')
			j = &p->jobs[i];
	if (j == NULL)
		return "too many sessions";
	if (parent_door_entry(&door, m->id, m->recipient, secret) != 0)
		return "cannot make the session's front door entry";
	memset(&s, 0, sizeof(s));
	snprintf(s.id, sizeof(s.id), "%s", m->id);
	/* the session's expiry is the job's time limit too: a second wall */
	s.minutes = left > 60 ? (uint32_t)((left + 59) / 60) : 1;
	s.mem_mb = (uint32_t)(c->slurm_memory_mb != 0 ? c->slurm_memory_mb :
	    m->memory_limit_mb != 0 ? m->memory_limit_mb :
	    c->session_memory_limit_mb);
	if (ipc_send(p->slurm_fd, &slurm_proto, SL_SUBMIT, &s, sizeof(s),
	    -1) != IPC_OK) {
		explicit_bzero(&door, sizeof(door));
		return "the Slurm helper is gone";
	}
	memset(j, 0, sizeof(*j));
	j->s.ready_fd = -1;
	snprintf(j->s.id, sizeof(j->s.id), "%s", m->id);
	j->s.deadline_ms = parent_now_ms() + PARENT_READY_MS;
	j->submitted = (int64_t)time(NULL);
	j->start = *m;
	j->door = door;
	snprintf(j->start.secret, sizeof(j->start.secret), "%s",
	    door.inner_password);
	explicit_bzero(&door, sizeof(door));
	return NULL;
}

/* A new expiry: the job's time limit (from its submission, so at
 * least the session's) follows. */
void
parent_slurm_extend(struct parent *p, const char *id, int64_t expires)
{
	struct pjob *j = job_by_id(p, id);
	struct sl_extend x;
	int64_t left;

	if (j == NULL || j->job <= 0 || j->s.stopping)
		return;
	left = expires - j->submitted;
	x.job = j->job;
	x.minutes = left > 60 ? (uint32_t)((left + 59) / 60) : 1;
	ipc_send(p->slurm_fd, &slurm_proto, SL_EXTEND, &x, sizeof(x), -1);
	log_warnx("session %s: job %lld's time limit %u min", id,
	    (long long)j->job, x.minutes);
}

/* Revoke, expiry, allowed hours: cancel the job; its node says ended. */
int
parent_slurm_stop(struct parent *p, const char *id)
{
	struct pjob *j = job_by_id(p, id);

	if (j == NULL)
		return 0;
	if (!j->s.stopping) {
		parent_door_remove(p, id);	/* its relayed connections end */
		j->s.stopping = 1;
		j->s.deadline_ms = parent_now_ms() + PARENT_STOP_MS;
		send_cancel(p, j->job);	/* 0: when sbatch answers */
	}
	return 1;
}

/* Not ready in time: cancel; cancelled and no node's word: ended. */
void
parent_slurm_timers(struct parent *p)
{
	int64_t now = parent_now_ms();
	int i;

	if (p->slurm_pid > 0 && !p->slurm_polling && now >= p->slurm_poll_ms) {
		struct sl_cancel none = { 0 };

		p->slurm_poll_ms = now + SLURM_POLL_MS;
		p->slurm_polling = ipc_send(p->slurm_fd, &slurm_proto, SL_POLL,
		    &none, sizeof(none), -1) == IPC_OK;
	}
	for (i = 0; i < PARENT_MAX_SESSIONS; i++) {
		struct pjob *j = &p->jobs[i];

		if (j->s.id[0] == '\0' || j->s.deadline_ms == 0 ||
		    now < j->s.deadline_ms)
			continue;
		if (!j->s.stopping) {
			/* pending, or its node never reported: give up */
			send_cancel(p, j->job);
			job_done(p, j, 1, "no node started it in time (its "
			    "job was cancelled; squeue said why it waited)");
		} else
			job_done(p, j, 128 + SIGTERM, j->s.started ? "its job "
			    "was cancelled and its node did not report the "
			    "end" : "its job was cancelled before a node "
			    "started it");
	}
}

/* Cancel j's job as a revoke does (one being revoked stays so): a
 * started session then waits for its node's end report, sent after all
 * of its evidence; one not started has none and ends now. */
static void
job_end_now(struct parent *p, struct pjob *j, const char *why)
{
	if (!j->s.stopping) {
		j->ending = 1;
		parent_door_remove(p, j->s.id);
		j->s.stopping = 1;
		send_cancel(p, j->job);
	}
	if (!j->s.started)
		job_done(p, j, 128 + SIGTERM, why);
}

int
parent_slurm_live(const struct parent *p)
{
	int i, n = 0;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		n += p->jobs[i].s.id[0] != '\0';
	return n;
}

/* Until every node has reported its end (ended) or end (ms) passes:
 * the Slurm helper's and the receiver's messages taken as in the loop.
 * 0, or -1 when one of them is gone (the loop then stops everything). */
static int
end_reports_wait(struct parent *p, int64_t end)
{
	struct pollfd f[2];
	int64_t left;

	while (parent_slurm_live(p) > 0 && (left = end - parent_now_ms()) > 0) {
		f[0] = (struct pollfd){ p->slurm_fd, POLLIN, 0 };
		f[1] = (struct pollfd){ parent_slurm_ev_fd(p), POLLIN, 0 };
		if (poll(f, 2, left > 250 ? 250 : (int)left) < 0 &&
		    errno != EINTR)
			return -1;
		if ((f[0].revents != 0 && parent_slurm_dispatch(p) != 0) ||
		    (f[1].revents != 0 && parent_slurm_ev_dispatch(p) != 0))
			return -1;
	}
	return 0;
}

/* Every job cancelled; each started session ends when its node reports
 * (its evidence is then all here) or after PARENT_STOP_MS; their control
 * copies closed and chained (EV_CLOSED, 2 s each).  The helpers stay
 * (the session helper's next daemon places jobs with them). */
void
parent_slurm_end_all(struct parent *p, const char *why)
{
	struct pollfd e;
	int i;

	if (p->slurm_pid <= 0)
		return;
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->jobs[i].s.id[0] != '\0')
			job_end_now(p, &p->jobs[i], why);
	end_reports_wait(p, parent_now_ms() + PARENT_STOP_MS);
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->jobs[i].s.id[0] != '\0')
			job_done(p, &p->jobs[i], 128 + SIGTERM, "its job was "
			    "cancelled and its node did not report the end");
	e = (struct pollfd){ parent_slurm_ev_fd(p), POLLIN, 0 };
	while (parent_copies_closing(p) > 0 && e.fd >= 0 &&
	    poll(&e, 1, 2000) == 1 && parent_slurm_ev_dispatch(p) == 0)
		;
}

/* Shutdown: every job ended as above (the helper runs the cancels
 * before it sees our end close), both helpers reaped. */
void
parent_slurm_stop_all(struct parent *p)
{
	parent_slurm_end_all(p, "its job was cancelled: the daemon stops");
	ipc_helper_stop(&p->slurm_pid, &p->slurm_fd);
	p->slurm_pid = 0;
	ipc_helper_stop(&p->ev_pid, &p->ev_fd);
	p->ev_pid = 0;
}

/* SUBMITTED: the job id, or the session failed. */
static int
on_submitted(void *ctx, struct ipc_msg *m)
{
	struct parent *p = ctx;
	struct sl_submitted d;
	char id[STORE_ID_MAX];
	struct pjob *j;

	memcpy(&d, m->data, sizeof(d));
	d.err[sizeof(d.err) - 1] = '\0';
	if (ipc_str_get(id, sizeof(id), d.id, sizeof(d.id)) != 0)
		return -1;
	if ((j = job_by_id(p, id)) == NULL) {
		send_cancel(p, d.job);	/* it ended before sbatch answered */
		return 0;
	}
	if (d.job <= 0) {
		job_done(p, j, 1, d.err);
		return 0;
	}
	j->job = d.job;
	log_warnx("session %s: job %lld submitted", id,
	    (long long)d.job);
	if (j->s.stopping)
		send_cancel(p, d.job);
	return 0;
}

static void
answer(struct parent *p, int ok, const char *text)
{
	static struct sl_answer a;

	memset(&a, 0, sizeof(a));
	a.ok = ok;
	snprintf(a.text, sizeof(a.text), "%s", text);
	ipc_send(p->slurm_fd, &slurm_proto, SL_ANSWER, &a, sizeof(a), -1);
	explicit_bzero(&a, sizeof(a));
}

/* A new evidence key for j, as the answer's "evidence_key" line; the
 * receiver gets it with the node's address once the node is ready. */
static int
evidence_key(struct parent *p, struct pjob *j, char *text, size_t len)
{
	size_t n = strlen(text);
	int r;

	if (p->ev_pid <= 0 || secret_text(j->ev_key, EVIDENCE_KEY_LEN) != 0)
		return -1;
	r = snprintf(text + n, len - n, "evidence_key %s\n", j->ev_key);
	return r < 0 || (size_t)r >= len - n ? -1 : 0;
}

/* READY: the receiver takes j's frames, from the node's address only. */
static int
evidence_open(struct parent *p, struct pjob *j, const char *addr)
{
	struct ev_open o;
	int r;

	memset(&o, 0, sizeof(o));
	snprintf(o.id, sizeof(o.id), "%s", j->s.id);
	memcpy(o.key, j->ev_key, EVIDENCE_KEY_LEN);	/* NUL: memset */
	snprintf(o.addr, sizeof(o.addr), "%s", addr);
	r = ipc_send(p->ev_fd, &evidence_proto, EV_OPEN, &o, sizeof(o), -1);
	explicit_bzero(&o, sizeof(o));
	explicit_bzero(j->ev_key, sizeof(j->ev_key));
	return r == IPC_OK ? 0 : -1;
}

/* ASK: the session's spec, once, to the node Slurm runs its job on. */
static void
node_ask(struct parent *p, struct pjob *j, const struct sl_node *n)
{
	static char text[SLURM_TEXT_MAX];

	if (j->handed || j->s.stopping) {
		answer(p, 0, j->handed ? "that job's session was handed out "
		    "already" : "that session is being stopped");
		return;
	}
	if (slurm_spec_text(&j->start, text, sizeof(text)) != 0 ||
	    evidence_key(p, j, text, sizeof(text)) != 0) {
		answer(p, 0, "the session does not fit the answer, or its "
		    "evidence cannot be received");
		explicit_bzero(text, sizeof(text));
		return;
	}
	snprintf(j->node, sizeof(j->node), "%s", n->node);
	j->handed = 1;
	explicit_bzero(&j->start, sizeof(j->start));
	answer(p, 1, text);
	explicit_bzero(text, sizeof(text));
	log_warnx("session %s: job %lld runs on %s", j->s.id,
	    (long long)j->job, j->node);
}

/* The node's ADDR:PORT as the session's upstream. */
static int
upstream_set(struct psession *s, const struct sl_node *n)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&s->upstream;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&s->upstream;

	memset(&s->upstream, 0, sizeof(s->upstream));
	if (inet_pton(AF_INET, n->addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)n->port);
		s->upstream_len = sizeof(*a4);
	} else if (inet_pton(AF_INET6, n->addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)n->port);
		s->upstream_len = sizeof(*a6);
	} else
		return -1;
	s->port = n->port;
	return 0;
}

/* READY: record the upstream, tell the api. */
static void
node_ready(struct parent *p, struct pjob *j, const struct sl_node *n)
{
	struct pipc_started st;

	if (!j->handed || j->s.started || strcmp(j->node, n->node) != 0 ||
	    upstream_set(&j->s, n) != 0) {
		answer(p, 0, "not a session of that node's waiting for ready");
		return;
	}
	if (evidence_open(p, j, n->addr) != 0) {
		answer(p, 0, "the control plane cannot take its evidence");
		return;
	}
	j->s.started = 1;
	if (!j->s.stopping)
		j->s.deadline_ms = 0;
	ipc_str_get(j->s.ws_token, sizeof(j->s.ws_token), n->ws_token,
	    sizeof(n->ws_token));
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", j->s.id);
	st.port = n->port;
	snprintf(st.ws_token, sizeof(st.ws_token), "%s", j->s.ws_token);
	log_warnx("session %s: ready at %s:%u on %s (job %lld)",
	    j->s.id, n->addr, n->port, n->node, (long long)j->job);
	if (!j->s.stopping)	/* before the api hands it out */
		parent_door_send(p, &j->door, &j->s);
	if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_STARTED, &st,
		    sizeof(st), -1);
	explicit_bzero(&st, sizeof(st));
	answer(p, 1, "");
}

/* NODE: a checked request of a node about one of our jobs. */
static int
on_node(void *ctx, struct ipc_msg *m)
{
	struct parent *p = ctx;
	struct sl_node n;
	struct pjob *j;
	char why[80], text[320];
	int ok;

	memcpy(&n, m->data, sizeof(n));
	if (ipc_str_get(n.node, sizeof(n.node), ((struct sl_node *)m->data)
	    ->node, sizeof(n.node)) != 0 || ipc_str_get(n.addr, sizeof(n.addr),
	    ((struct sl_node *)m->data)->addr, sizeof(n.addr)) != 0 ||
	    ipc_str_get(n.ws_token, sizeof(n.ws_token), ((struct sl_node *)
	    m->data)->ws_token, sizeof(n.ws_token)) != 0)
		return -1;
	if (n.what == SLN_COPIES || n.what == SLN_REMOVED) {
		ok = n.what == SLN_COPIES ? parent_copy_ask(p, &n, text,
		    sizeof(text)) : parent_copy_removed(p, &n, text,
		    sizeof(text));
		answer(p, ok, text);
		return 0;
	}
	if ((j = job_by_job(p, n.job)) == NULL || n.job <= 0) {
		answer(p, 0, "not a job of this control plane's");
		return 0;
	}
	if (n.what == SLN_ASK)
		node_ask(p, j, &n);
	else if (n.what == SLN_READY)
		node_ready(p, j, &n);
	else if (n.what == SLN_ENDED && j->handed &&
	    strcmp(j->node, n.node) == 0) {
		snprintf(why, sizeof(why), "ended (status %d)", n.status);
		job_done(p, j, n.status, j->s.started ? why :
		    "its node's supervisor exited before it was ready (the "
		    "node agent's log says why)");
		answer(p, 1, "");
	} else
		answer(p, 0, "not that node's session");
	return 0;
}

static void
nodes_answer(struct parent *p, int ok, const char *text)
{
	static struct pipc_nodes_done d;

	memset(&d, 0, sizeof(d));
	d.ok = ok;
	snprintf(d.text, sizeof(d.text), "%s", text);
	if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_NODES_DONE, &d, sizeof(d),
		    -1);
}

/* NODES from the api: sinfo through the helper (on_nodes_done). */
void
parent_slurm_nodes(struct parent *p)
{
	struct sl_cancel none = { 0 };

	if (p->slurm_pid <= 0)
		nodes_answer(p, 0, "session_runner is \"local\": sessions "
		    "run on this host, there are no nodes");
	else if (ipc_send(p->slurm_fd, &slurm_proto, SL_NODES, &none,
	    sizeof(none), -1) != IPC_OK)
		nodes_answer(p, -1, "the Slurm helper is gone");
}

static int
sessions_on(const struct parent *p, const char *node)
{
	int i, n = 0;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		n += p->jobs[i].s.id[0] != '\0' && p->jobs[i].handed &&
		    strcmp(p->jobs[i].node, node) == 0;
	return n;
}

/* sinfo's "NAME STATE MEMORY FREE" lines, each with its sessions. */
static int
on_nodes_done(void *ctx, struct ipc_msg *m)
{
	static char out[PIPC_NODES_TEXT_MAX];
	struct parent *p = ctx;
	struct sl_answer *a = (struct sl_answer *)m->data;
	char *line, *save = NULL, name[64];
	size_t len = 0;
	int n;

	a->text[sizeof(a->text) - 1] = '\0';
	if (!a->ok) {
		snprintf(out, sizeof(out), "sinfo: %.2000s", a->text);
		nodes_answer(p, -1, out);
		return 0;
	}
	out[0] = '\0';
	for (line = strtok_r(a->text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s", name) != 1)
			continue;
		n = snprintf(out + len, sizeof(out) - len, "%.200s %d\n", line,
		    sessions_on(p, name));
		if (n < 0 || (size_t)n >= sizeof(out) - len)
			break;
		len += (size_t)n;
	}
	nodes_answer(p, 1, out);
	return 0;
}

/* Slurm's state of job in squeue's "JOB STATE" lines, or "gone". */
static void
job_state(const char *text, int64_t job, char *state, size_t len)
{
	char key[32];
	const char *p;
	size_t k;

	k = (size_t)snprintf(key, sizeof(key), "%lld ", (long long)job);
	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, key, k) == 0) {
			snprintf(state, len, "%.*s", (int)strcspn(p + k, "\n"),
			    p + k);
			return;
		}
	snprintf(state, len, "gone");
}

/* POLL_DONE: a job of ours that Slurm no longer runs (its node failed,
 * or someone ended it outside cdsgate) ends its session.  A failed
 * squeue (slurmctld away) decides nothing. */
static int
on_poll_done(void *ctx, struct ipc_msg *m)
{
	struct parent *p = ctx;
	struct sl_answer *a = (struct sl_answer *)m->data;
	char state[32], why[PIPC_REASON_MAX];
	int i;

	p->slurm_polling = 0;
	a->text[sizeof(a->text) - 1] = '\0';
	if (!a->ok)
		return 0;
	for (i = 0; i < PARENT_MAX_SESSIONS; i++) {
		struct pjob *j = &p->jobs[i];

		if (j->s.id[0] == '\0' || j->job <= 0 || j->s.stopping)
			continue;
		job_state(a->text, j->job, state, sizeof(state));
		if (strcmp(state, "RUNNING") == 0 ||
		    strcmp(state, "CONFIGURING") == 0 ||
		    (!j->handed && strcmp(state, "PENDING") == 0))
			continue;
		snprintf(why, sizeof(why), "Slurm no longer runs its "
		    "job (%s): its node failed or the job was ended outside "
		    "cdsgate", state);
		job_over(p, j, SESSION_EXIT_FAILED, 1, why);
	}
	return 0;
}

static const struct ipc_handler from_helper[] = {
	{ SL_SUBMITTED, on_submitted },
	{ SL_NODE, on_node },
	{ SL_NODES_DONE, on_nodes_done },
	{ SL_POLL_DONE, on_poll_done },
};

/* The helper said something; -1 when it is gone or broke the protocol
 * (the parent then stops everything: fail closed). */
int
parent_slurm_dispatch(struct parent *p)
{
	struct ipc_peer peer = { p->slurm_fd, "slurm helper", &slurm_proto,
	    from_helper, sizeof(from_helper) / sizeof(from_helper[0]) };
	int rc = ipc_dispatch(&peer, p, NULL);

	if (rc != IPC_OK)
		log_warnx("the Slurm helper: %s; stopping every "
		    "session", ipc_strerror(rc));
	return rc == IPC_OK ? 0 : -1;
}
