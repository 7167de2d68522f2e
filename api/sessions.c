/*
 * api/sessions.c — /v1/sessions: provision a researcher's session, and
 * the api's side of the parent protocol (api/parentipc.h).
 *
 * Unprivileged (cdsgate-api); the body is untrusted JSON checked by
 * api/field.c.  The api never forks a session: it records it in the
 * store (audited first), asks the root parent over typed IPC, and
 * answers when the parent does: the request waits suspended while the
 * loop serves others (imports, revokes, health).  The one-time secret
 * comes from the kernel's CSPRNG, is shown once in the 201 reply and
 * otherwise exists only as an scrypt hash in the store and in the
 * parent's 0600 files.  The parent's
 * messages are checked too; a malformed one ends the api.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "api/parentipc.h"
#include "api/pgrunner.h"
#include "common/log.h"
#include "mount/postgres.h"
#include "common/secret.h"
#include "policy/creds.h"

#define START_WAIT_MS	90000	/* the parent's own limit is 60 s */
#define SECRET_PLAIN	8	/* RFB authentication uses 8 bytes */
#define SECRET_TLS	24	/* VeNCrypt Plain: a longer secret */
#define HOURS_REASON	"outside_allowed_hours"

/*
 * The SESSION_STARTs we wait for.  Each holds its suspended request and
 * the one-time secret for the 201 reply; the loop goes on serving others
 * until the parent answers or START_WAIT_MS pass.
 */
struct start_wait {
	struct api_req		*r;
	struct store_session	 ss;	/* no policy: cleared once stored */
	char			 secret[SECRET_TLS + 1];
	struct timespec		 since;	/* CLOCK_MONOTONIC */
	unsigned long		 memory_limit_mb;
	unsigned		 port;
	char			 token[PIPC_TOKEN_MAX];
	char			 reason[PIPC_REASON_MAX];
	struct start_wait	*next;
};
static struct start_wait *starts;

struct pctx {
	struct store		*st;
	int			 fd;
	struct keyholder	*audit;
	struct pgrunner		*pg;
};

static void	start_finish(struct start_wait *, int);

static int	answer_started(void *, struct ipc_msg *);
static int	answer_failed(void *, struct ipc_msg *);
static int	answer_ended(void *, struct ipc_msg *);
static int	answer_record_closed(void *, struct ipc_msg *);
static int	answer_record_expire(void *, struct ipc_msg *);
static int	answer_copy_removed(void *, struct ipc_msg *);
static void	pg_role_drop(struct pgrunner *, struct keyholder *,
	    const char *);

/* What the parent may send us. */
static const struct ipc_handler api_permit[] = {
	{ PIPC_SESSION_STARTED, answer_started },
	{ PIPC_SESSION_FAILED, answer_failed },
	{ PIPC_SESSION_ENDED, answer_ended },
	{ PIPC_RECORD_CLOSED, answer_record_closed },
	{ PIPC_RECORD_EXPIRE, answer_record_expire },
	{ PIPC_COPY_REMOVED, answer_copy_removed },
	{ PIPC_NODES_DONE, api_nodes_done },	/* api/nodes.c */
};

/* Ask the parent to stop one supervisor. */
static int
ask_stop(int fd, const char *id, const char *reason)
{
	struct pipc_stop m;

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", id);
	snprintf(m.reason, sizeof(m.reason), "%s", reason);
	return ipc_send(fd, &pipc_proto, PIPC_SESSION_STOP, &m, sizeof(m),
	    -1) == IPC_OK ? 0 : -1;
}

/* Tell the parent a session's new expiry (the Slurm runner moves its
 * job's time limit; the local runner's backstop is expires_max). */
static void
ask_extend(int fd, const char *id, int64_t expires)
{
	struct pipc_extend m;

	if (fd < 0)
		return;
	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", id);
	m.expires = expires;
	ipc_send(fd, &pipc_proto, PIPC_SESSION_EXTEND, &m, sizeof(m), -1);
}

/* The start awaited for session id, or NULL. */
static struct start_wait *
start_find(const char *id)
{
	struct start_wait *w;

	for (w = starts; w != NULL && strcmp(w->ss.id, id) != 0; w = w->next)
		;
	return w;
}

/* SESSION_STARTED: ours, or a stale one (we gave up): stop that. */
static int
answer_started(void *ctx, struct ipc_msg *m)
{
	struct pctx *c = ctx;
	struct pipc_started s;
	struct start_wait *w;
	char id[STORE_ID_MAX];

	memcpy(&s, m->data, sizeof(s));
	if (ipc_str_get(id, sizeof(id), s.id, sizeof(s.id)) != 0 ||
	    !store_id_valid(id) || s.port == 0 || s.port > 65535)
		return -1;
	if ((w = start_find(id)) == NULL)
		return ask_stop(c->fd, id, "not awaited");
	if (ipc_str_get(w->token, sizeof(w->token), s.ws_token,
	    sizeof(s.ws_token)) != 0)
		return -1;
	w->port = s.port;
	start_finish(w, 1);
	return 0;
}

/* A running session failed (the Slurm runner: its node died): audited
 * session.failed with why, then "failed" in the store with why.  Not
 * running (a stale answer after the api gave up): nothing. */
static void
running_failed(struct pctx *c, const char *id, const char *why)
{
	struct store_session ss;
	char aerr[256];
	json_t *rec;
	int running;

	if (store_session_get(c->st, id, &ss) != STORE_OK)
		return;
	running = ss.state == STORE_SESSION_RUNNING;
	store_session_clear(&ss);
	if (!running)
		return;
	rec = json_pack("{s:s, s:s}", "id", id, "reason", why);
	if (keyholder_append(c->audit, "session.failed", rec, NULL, aerr,
	    sizeof(aerr)) != 0)
		log_warnx("%s", aerr);
	json_decref(rec);
	store_session_end(c->st, id, STORE_SESSION_FAILED, why,
	    (int64_t)time(NULL));
	pg_role_drop(c->pg, c->audit, id);
}

/* SESSION_FAILED: the reason goes to the client and the store. */
static int
answer_failed(void *ctx, struct ipc_msg *m)
{
	struct pipc_failed f;
	struct start_wait *w;
	char id[STORE_ID_MAX], why[PIPC_REASON_MAX];

	memcpy(&f, m->data, sizeof(f));
	if (ipc_str_get(id, sizeof(id), f.id, sizeof(f.id)) != 0)
		return -1;
	if ((w = start_find(id)) == NULL) {
		if (ipc_str_get(why, sizeof(why), f.reason,
		    sizeof(f.reason)) != 0)
			return -1;
		running_failed(ctx, id, why);
		return 0;
	}
	if (ipc_str_get(w->reason, sizeof(w->reason), f.reason,
	    sizeof(f.reason)) != 0)
		return -1;
	start_finish(w, -1);
	return 0;
}

/* A session's PostgreSQL reader role goes with it (if it had one: the
 * mounter says PGM_ENOTMOUNTED otherwise); audited once it is gone. */
static void
pg_role_drop(struct pgrunner *pg, struct keyholder *audit, const char *id)
{
	char err[PGRUNNER_ERR_MAX], aerr[256];
	json_t *rec;
	int rc;

	if (pg == NULL)
		return;
	if ((rc = pgrunner_session_unrole(pg, id, err, sizeof(err))) ==
	    PGM_ENOTMOUNTED)
		return;
	rec = rc == PGM_OK ? json_pack("{s:s}", "id", id) :
	    json_pack("{s:s, s:s}", "id", id, "error", err);
	if (rc != PGM_OK)
		log_warnx("session %s: its PostgreSQL role "
		    "was not dropped: %s", id, err);
	if (keyholder_append(audit, rc == PGM_OK ? "session.pg_role_drop" :
	    "session.pg_role_drop.failed", rec, NULL, aerr, sizeof(aerr)) != 0)
		log_warnx("%s", aerr);
	json_decref(rec);
}

/* SESSION_ENDED: the supervisor exited; record it unless already over. */
static int
answer_ended(void *ctx, struct ipc_msg *m)
{
	struct pctx *c = ctx;
	struct pipc_ended e;
	char id[STORE_ID_MAX], why[64];

	memcpy(&e, m->data, sizeof(e));
	if (ipc_str_get(id, sizeof(id), e.id, sizeof(e.id)) != 0 ||
	    !store_id_valid(id))
		return -1;
	snprintf(why, sizeof(why), "the session ended (status %d)",
	    (int)e.status);
	/* revoked, expired and failed stay so (STORE_ESTATE) */
	store_session_end(c->st, id, STORE_SESSION_ENDED, why,
	    (int64_t)time(NULL));
	pg_role_drop(c->pg, c->audit, id);
	return 0;
}

/* Is s 64 lower-case hex digits? */
static int
sha256_hex_ok(const char *s)
{
	size_t i;

	if (strlen(s) != 64)
		return 0;
	for (i = 0; i < 64; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL)
			return 0;
	return 1;
}

/* A companion file of a RECORD_* message: none ("", "") or a path and
 * its digest. */
static int
companion_fields(const struct pipc_companion *in, struct pipc_companion *out)
{
	if (ipc_str_get(out->file, sizeof(out->file), in->file,
	    sizeof(in->file)) != 0 || ipc_str_get(out->sha256,
	    sizeof(out->sha256), in->sha256, sizeof(in->sha256)) != 0)
		return -1;
	if (out->file[0] == '\0')
		return out->sha256[0] == '\0' ? 0 : -1;
	return out->file[0] == '/' && sha256_hex_ok(out->sha256) ? 0 : -1;
}

/* The strings of a RECORD_* message, checked: a bad one is fatal. */
static int
record_fields(const struct pipc_record *m, struct pipc_record *out)
{
	memcpy(out, m, sizeof(*out));
	if (ipc_str_get(out->id, sizeof(out->id), m->id, sizeof(m->id)) != 0 ||
	    ipc_str_get(out->file, sizeof(out->file), m->file,
	    sizeof(m->file)) != 0 || ipc_str_get(out->sha256,
	    sizeof(out->sha256), m->sha256, sizeof(m->sha256)) != 0 ||
	    ipc_str_get(out->end, sizeof(out->end), m->end,
	    sizeof(m->end)) != 0 || !store_id_valid(out->id) ||
	    out->file[0] != '/' || !sha256_hex_ok(out->sha256) ||
	    companion_fields(&m->net, &out->net) != 0 ||
	    companion_fields(&m->cap, &out->cap) != 0)
		return -1;
	return 0;
}

/* The audit record's data for a RECORD_* message. */
static json_t *
record_json(const struct pipc_record *m)
{
	json_t *d = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:s}",
	    "session", m->id, "file", m->file, "sha256", m->sha256, "size",
	    (json_int_t)m->size, "frames", (json_int_t)m->frames,
	    "duration_us", (json_int_t)m->duration_us, "truncated",
	    m->truncated != 0, "end", m->end);

	if (d != NULL && m->net.file[0] != '\0')
		json_object_set_new(d, "network", json_pack("{s:s, s:s}",
		    "file", m->net.file, "sha256", m->net.sha256));
	if (d != NULL && m->cap.file[0] != '\0')
		json_object_set_new(d, "capture", json_pack("{s:s, s:s}",
		    "file", m->cap.file, "sha256", m->cap.sha256));
	return d;
}

/* The dataset the session was granted, beside its recording's digest:
 * the chain then ties the network log's /data requests to it. */
static void
record_dataset(struct store *st, const char *id, json_t *d)
{
	struct store_session ss;

	memset(&ss, 0, sizeof(ss));
	if (d != NULL && store_session_get(st, id, &ss) == STORE_OK)
		json_object_set_new(d, "dataset", json_integer(
		    (json_int_t)ss.dataset));
	store_session_clear(&ss);
}

/* RECORD_CHAINED: whether file's record_closed is in the chain (the
 * Slurm runner lets a node remove its own copies only then). */
static int
chained_send(int fd, const char *file, int ok)
{
	struct pipc_expired a;

	memset(&a, 0, sizeof(a));
	snprintf(a.file, sizeof(a.file), "%s", file);
	a.ok = ok;
	return ipc_send(fd, &pipc_proto, PIPC_RECORD_CHAINED, &a, sizeof(a),
	    -1) == IPC_OK ? 0 : -1;
}

/*
 * RECORD_CLOSED: the recording's digest enters the audit chain first,
 * then the store's index of recordings (the index never names a digest
 * the chain does not have); answered RECORD_CHAINED.
 */
static int
answer_record_closed(void *ctx, struct ipc_msg *msg)
{
	struct pctx *c = ctx;
	struct pipc_record m;
	struct store_recording sr;
	json_t *d;
	char err[512];
	int64_t now = (int64_t)time(NULL), id;
	int rc;

	if (record_fields((const struct pipc_record *)msg->data, &m) != 0)
		return -1;
	if (store_recording_find(c->st, NULL, m.file, &sr) == STORE_OK &&
	    strcmp(sr.sha256, m.sha256) == 0)	/* recovered, but */
		return chained_send(c->fd, m.file, 1);	/* chained already */
	d = record_json(&m);
	record_dataset(c->st, m.id, d);
	rc = keyholder_append(c->audit, "record_closed", d, NULL, err,
	    sizeof(err));
	json_decref(d);
	if (rc != 0) {
		log_warnx("record_closed for %s not "
		    "audited: %s: no further changes accepted", m.id, err);
		api_set_read_only();	/* fail closed, as api_audit() */
		return chained_send(c->fd, m.file, 0);
	}
	if (store_recording_add(c->st, m.id, m.file, now, &id) != STORE_OK ||
	    store_recording_close(c->st, id, m.sha256, (int64_t)m.size, now)
	    != STORE_OK)
		log_warnx("recording of %s not indexed: "
		    "%s", m.id, store_errmsg(c->st));
	return chained_send(c->fd, m.file, 1);
}

/* COPY_REMOVED: a node removed its own copies of a session's evidence,
 * each the chained control copy's digest: record_node_removed. */
static int
answer_copy_removed(void *ctx, struct ipc_msg *msg)
{
	static const char *const what[] = { "recording", "network",
	    "capture" };
	struct pctx *c = ctx;
	struct pipc_copy_removed m;
	json_t *d;
	char err[512];
	size_t i;

	memcpy(&m, msg->data, sizeof(m));
	if (ipc_str_get(m.id, sizeof(m.id), ((struct pipc_copy_removed *)
	    msg->data)->id, sizeof(m.id)) != 0 || !store_id_valid(m.id) ||
	    ipc_str_get(m.node, sizeof(m.node), ((struct pipc_copy_removed *)
	    msg->data)->node, sizeof(m.node)) != 0)
		return -1;
	d = json_pack("{s:s, s:s}", "session", m.id, "node", m.node);
	for (i = 0; i < 3; i++) {
		if (ipc_str_get(m.sha256[i], sizeof(m.sha256[i]),
		    ((struct pipc_copy_removed *)msg->data)->sha256[i],
		    sizeof(m.sha256[i])) != 0 || (m.sha256[i][0] != '\0' &&
		    !sha256_hex_ok(m.sha256[i]))) {
			json_decref(d);
			return -1;
		}
		if (m.sha256[i][0] != '\0')
			json_object_set_new(d, what[i], json_string(
			    m.sha256[i]));
	}
	if (keyholder_append(c->audit, "record_node_removed", d, NULL, err,
	    sizeof(err)) != 0) {
		log_warnx("record_node_removed for %s not audited: %s: no "
		    "further changes accepted", m.id, err);
		api_set_read_only();
	}
	json_decref(d);
	return 0;
}

/*
 * RECORD_EXPIRE: retention may remove a recording only when the index
 * has it closed with this very digest (so the chain vouches for what is
 * removed) and record_expired was audited.
 */
static int
answer_record_expire(void *ctx, struct ipc_msg *msg)
{
	struct pctx *c = ctx;
	struct pipc_record m;
	struct pipc_expired a;
	struct store_recording sr;
	json_t *d;
	char err[512];

	if (record_fields((const struct pipc_record *)msg->data, &m) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	snprintf(a.file, sizeof(a.file), "%s", m.file);
	if (store_recording_find(c->st, NULL, m.file, &sr) == STORE_OK &&
	    sr.ended != 0 && sr.expired == 0 &&
	    strcmp(sr.sha256, m.sha256) == 0) {
		d = record_json(&m);
		json_object_set_new(d, "reason", json_string(m.end));
		json_object_del(d, "end");
		if (keyholder_append(c->audit, "record_expired", d, NULL, err,
		    sizeof(err)) != 0) {
			log_warnx("record_expired not "
			    "audited: %s: no further changes accepted", err);
			api_set_read_only();	/* and the file is kept */
		} else
			a.ok = store_recording_expire(c->st, sr.id,
			    (int64_t)time(NULL)) == STORE_OK;
		json_decref(d);
	}
	return ipc_send(c->fd, &pipc_proto, PIPC_RECORD_EXPIRED, &a,
	    sizeof(a), -1) == IPC_OK ? 0 : -1;
}

static int
parent_dispatch(struct pctx *c)
{
	const struct ipc_peer peer = { c->fd, "parent", &pipc_proto,
	    api_permit, sizeof(api_permit) / sizeof(api_permit[0]) };
	int r;

	if ((r = ipc_dispatch(&peer, c, NULL)) != IPC_OK) {
		log_warnx("the parent: %s; exiting", ipc_strerror(r));
		return -1;
	}
	return 0;
}

int
api_parent_input(const struct api_config *cfg, struct store *st)
{
	struct pctx c = { st, cfg->parent_fd, cfg->audit, cfg->pg };

	return parent_dispatch(&c);
}

void
api_parent_drain(const struct api_config *cfg, struct store *st)
{
	struct pollfd pfd = { cfg->parent_fd, POLLIN, 0 };

	while (cfg->parent_fd >= 0 && poll(&pfd, 1, 0) == 1 &&
	    (pfd.revents & POLLIN) && api_parent_input(cfg, st) == 0)
		;
}

/* Expired sessions: collect the live ones past their expiry. */
struct expired {
	int64_t	now;
	char	ids[32][STORE_ID_MAX];
	int	n;
};

static int
expired_one(const struct store_session *ss, void *arg)
{
	struct expired *x = arg;

	if ((ss->state == STORE_SESSION_CREATED ||
	    ss->state == STORE_SESSION_RUNNING) && ss->expires <= x->now &&
	    x->n < 32)
		snprintf(x->ids[x->n++], STORE_ID_MAX, "%s", ss->id);
	return 0;
}

/* Starts the parent has not answered within START_WAIT_MS fail. */
static void
starts_timeout(void)
{
	struct start_wait *w, *next;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	for (w = starts; w != NULL; w = next) {
		next = w->next;
		if ((t.tv_sec - w->since.tv_sec) * 1000 > START_WAIT_MS) {
			snprintf(w->reason, sizeof(w->reason), "the parent did "
			    "not answer");
			ask_stop(w->r->cfg->parent_fd, w->ss.id, "too late");
			start_finish(w, -1);
		}
	}
}

/* Live sessions whose recipient is outside its allowed hours now. */
struct outside {
	struct store	*st;
	char		 ids[32][STORE_ID_MAX];
	int		 states[32];
	int		 n;
};

static int
outside_one(const struct store_session *ss, void *arg)
{
	struct outside *o = arg;
	char why[PIPC_REASON_MAX];

	if ((ss->state == STORE_SESSION_CREATED ||
	    ss->state == STORE_SESSION_RUNNING) && o->n < 32 &&
	    api_recipient_in_hours(o->st, ss->recipient, why,
	    sizeof(why)) == 0) {
		o->states[o->n] = ss->state;
		snprintf(o->ids[o->n++], STORE_ID_MAX, "%s", ss->id);
	}
	return 0;
}

/* End each live session outside its recipient's hours, audited first:
 * "ended" (or "revoked" if it never ran), reason outside_allowed_hours,
 * and the parent stops its supervisor as for a revoke. */
static void
hours_tick(const struct api_config *cfg, struct store *st)
{
	struct outside o = { .st = st };
	char err[256];
	int i, rc;

	if (store_session_list(st, outside_one, &o) != STORE_OK)
		return;
	for (i = 0; i < o.n; i++) {
		json_t *rec = json_pack("{s:s, s:s}", "id", o.ids[i],
		    "reason", HOURS_REASON);

		rc = keyholder_append(cfg->audit, "session.end", rec, NULL,
		    err, sizeof(err));
		json_decref(rec);
		if (rc != 0) {
			log_warnx("%s", err);
			return;
		}
		store_session_end(st, o.ids[i], o.states[i] ==
		    STORE_SESSION_RUNNING ? STORE_SESSION_ENDED :
		    STORE_SESSION_REVOKED, HOURS_REASON, (int64_t)time(NULL));
		ask_stop(cfg->parent_fd, o.ids[i], HOURS_REASON);
	}
}

void
api_sessions_tick(const struct api_config *cfg, struct store *st)
{
	static int64_t last;
	struct expired x = { .now = (int64_t)time(NULL) };
	char err[256];
	json_t *ids, *rec;
	int i, n = 0;

	if (x.now == last)
		return;
	last = x.now;
	starts_timeout();
	hours_tick(cfg, st);
	if (store_session_list(st, expired_one, &x) != STORE_OK || x.n == 0)
		return;
	ids = json_array();
	for (i = 0; i < x.n; i++)
		json_array_append_new(ids, json_string(x.ids[i]));
	rec = json_pack("{s:o}", "ids", ids);
	i = keyholder_append(cfg->audit, "session.expire", rec, NULL, err,
	    sizeof(err));
	json_decref(rec);
	if (i != 0) {
		log_warnx("%s", err);
		return;
	}
	if (store_session_expire(st, x.now, &n) != STORE_OK)
		return;
	for (i = 0; i < x.n; i++)
		ask_stop(cfg->parent_fd, x.ids[i], "expired");
}

/* ---- the routes ---- */

static json_t *
session_json(const struct store_session *ss)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:s}", "id",
	    ss->id, "recipient", ss->recipient, "dataset",
	    (json_int_t)ss->dataset, "state",
	    store_session_state_name(ss->state), "created",
	    (json_int_t)ss->created, "expires", (json_int_t)ss->expires,
	    "updated", (json_int_t)ss->updated, "reason", ss->reason);
}

static int
list_one(const struct store_session *ss, void *arg)
{
	return json_array_append_new(arg, session_json(ss));
}

int
sessions_list(struct api_req *r)
{
	json_t *a = json_array();
	int st;

	if ((st = store_session_list(r->store, list_one, a)) != STORE_OK) {
		json_decref(a);
		return api_store_error(r, st, "listing sessions");
	}
	return api_reply(r, 200, json_pack("{s:o}", "sessions", a));
}

int
sessions_show(struct api_req *r)
{
	struct store_session ss;
	json_t *j;
	int st;

	memset(&ss, 0, sizeof(ss));
	if ((st = store_session_get(r->store, r->params[0], &ss)) != STORE_OK)
		return api_store_error(r, st, "session");
	j = session_json(&ss);
	store_session_clear(&ss);
	return api_reply(r, 200, j);
}

/* The session's recording from the index (auditors: replay by id). */
int
sessions_recording(struct api_req *r)
{
	struct store_recording sr;
	int st;

	if ((st = store_recording_find(r->store, r->params[0], NULL, &sr)) !=
	    STORE_OK)
		return st == STORE_ENOTFOUND ? api_error(r, 404, "not_found",
		    "no closed recording of session %s in the index (not "
		    "started, still running, or unknown)", r->params[0]) :
		    api_store_error(r, st, "recording");
	return api_reply(r, 200, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, "
	    "s:I}", "session", sr.session, "path", sr.path, "sha256",
	    sr.sha256, "bytes", (json_int_t)sr.bytes, "started",
	    (json_int_t)sr.started, "ended", (json_int_t)sr.ended, "expired",
	    (json_int_t)sr.expired));
}

/* Send SESSION_START; the answer comes through api_parent_input(). */
static int
start_send(int fd, const struct store_session *ss, const char *secret,
    unsigned long memory_limit_mb, const char *pg_role,
    const char *pg_password)
{
	struct pipc_start m;
	int rc;

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", ss->id);
	snprintf(m.recipient, sizeof(m.recipient), "%s", ss->recipient);
	m.expires = ss->expires;
	snprintf(m.secret, sizeof(m.secret), "%s", secret);
	m.memory_limit_mb = (uint32_t)memory_limit_mb;
	m.dataset = ss->dataset;
	snprintf(m.pg_role, sizeof(m.pg_role), "%s", pg_role);
	snprintf(m.pg_password, sizeof(m.pg_password), "%s", pg_password);
	rc = ipc_send(fd, &pipc_proto, PIPC_SESSION_START, &m, sizeof(m), -1);
	explicit_bzero(&m, sizeof(m));
	return rc == IPC_OK ? 0 : -1;
}

/* The fields of POST /v1/sessions (api/body.c) into *ss and *mem
 * (MiB), with a fresh id and the times from now. */
static int
create_fields(struct api_req *r, struct store_session *ss,
    unsigned long *mem)
{
	struct body_session b;
	int64_t now = (int64_t)time(NULL);
	char rnd[17];

	if (body_session_create(r, &b) != 0)
		return -1;
	if (secret_text(rnd, 16) != 0)
		return api_error(r, 503, "random", "no randomness"), -1;
	snprintf(ss->id, sizeof(ss->id), "s-%s", rnd);
	memcpy(ss->recipient, b.recipient, sizeof(ss->recipient));
	ss->dataset = b.dataset;
	ss->created = now;
	ss->expires = now + (int64_t)b.expires_in;
	*mem = b.memory_limit_mb;
	return 0;
}

/* Unknown recipient or dataset: 404 before anything is audited. */
static int
create_known(struct api_req *r, const struct store_session *ss)
{
	struct store_recipient rc;
	struct store_dataset d = { 0 };
	int st;

	if ((st = store_recipient_get(r->store, ss->recipient, &rc)) !=
	    STORE_OK)
		return api_store_error(r, st, "recipient"), -1;
	st = store_dataset_get(r->store, ss->dataset, &d);
	store_dataset_clear(&d);
	return st == STORE_OK ? 0 : (api_store_error(r, st, "dataset"), -1);
}

/* Why the store refused a session, in words the custodian can act on:
 * which recipient or dataset, in what state, and which limit. */
static void
create_refusal(struct api_req *r, const struct store_session *ss, int st,
    char *why, size_t len)
{
	struct store_recipient rc;
	struct store_dataset d = { 0 };
	long long id = (long long)ss->dataset;

	if (st == STORE_ELIMIT && store_recipient_get(r->store, ss->recipient,
	    &rc) == STORE_OK)
		snprintf(why, len, "recipient %s already has %u live "
		    "session%s: its limit (max_sessions) is reached",
		    ss->recipient, rc.max_sessions, rc.max_sessions == 1 ? "" :
		    "s");
	else if (st == STORE_EDISABLED)
		snprintf(why, len, "recipient %s is disabled", ss->recipient);
	else if (st == STORE_ENOTMOUNTED)
		snprintf(why, len, "dataset %lld passed the gate but is not "
		    "mounted: mount it first (cdsgate dataset mount %lld)", id,
		    id);
	else if (st == STORE_EGATE && store_dataset_get(r->store, ss->dataset,
	    &d) == STORE_OK && d.state == STORE_DATASET_IMPORTING)
		snprintf(why, len, "dataset %lld is still in the "
		    "de-identification gate", id);
	else if (st == STORE_EGATE && d.state == STORE_DATASET_FAILED)
		snprintf(why, len, "dataset %lld failed the de-identification "
		    "gate: %.400s", id, d.reason);
	else if (st == STORE_EGATE && d.state == STORE_DATASET_ERROR)
		snprintf(why, len, "the de-identification gate could not "
		    "decide on dataset %lld: %.400s", id, d.reason);
	else
		snprintf(why, len, "creating the session: %s",
		    store_strerror(st));
	store_dataset_clear(&d);
}

/* The 201 body: the secret shown this once, where to connect, and with
 * TLS the user name to log in with (the recipient id: the credentials
 * line the parent writes). */
static json_t *
created_json(struct api_req *r, const struct store_session *ss,
    const char *secret, const struct start_wait *w)
{
	char vnc[300], novnc[PIPC_TOKEN_MAX + 32];
	const char *a = r->cfg->session_address;

	if (r->cfg->front_door != NULL)	/* every session behind one door */
		snprintf(vnc, sizeof(vnc), "%s", r->cfg->front_door);
	else
		snprintf(vnc, sizeof(vnc), strchr(a, ':') != NULL ?
		    "[%s]:%u" : "%s:%u", a, w->port);
	snprintf(novnc, sizeof(novnc), "/websockify?token=%s", w->token);
	return json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:s, s:s, s:b, s:s?}",
	    "id", ss->id, "recipient", ss->recipient, "dataset",
	    (json_int_t)ss->dataset, "state", "running", "expires",
	    (json_int_t)ss->expires, "secret", secret, "vnc", vnc, "novnc",
	    novnc, "tls", r->cfg->session_tls != 0, "user",
	    r->cfg->session_tls ? ss->recipient : NULL);
}

/* The parent could not start it: it never ran, so the store's word is
 * "revoked" (only a running session "ends"), with why. */
static int
create_failed(struct api_req *r, const struct store_session *ss,
    const char *why)
{
	char reason[PIPC_REASON_MAX + 32];

	snprintf(reason, sizeof(reason), "did not start: %s", why);
	(void)api_audit(r, "session.failed", json_pack("{s:s, s:s}", "id",
	    ss->id, "reason", why));
	store_session_end(r->store, ss->id, STORE_SESSION_REVOKED, reason,
	    (int64_t)time(NULL));
	pg_role_drop(r->cfg->pg, r->cfg->audit, ss->id);
	return api_error(r, 503, "session_failed", "the session did not "
	    "start: %s", why);
}

/* Started, but the recipient's allowed hours ended meanwhile: stop it,
 * audited first, and refuse as a create outside the hours would be. */
static void
start_outside_hours(struct start_wait *w, const char *why)
{
	struct api_req *r = w->r;

	ask_stop(r->cfg->parent_fd, w->ss.id, HOURS_REASON);
	(void)api_audit(r, "session.end", json_pack("{s:s, s:s}", "id",
	    w->ss.id, "reason", HOURS_REASON));
	store_session_end(r->store, w->ss.id, STORE_SESSION_REVOKED,
	    HOURS_REASON, (int64_t)time(NULL));
	api_error(r, 403, HOURS_REASON, "%s", why);
}

/* The parent answered (ok 1) or not (-1): record it, reply, forget the
 * secret. */
static void
start_finish(struct start_wait *w, int ok)
{
	struct api_req *r = w->r;
	struct start_wait **pp;
	char why[PIPC_REASON_MAX];
	int st;

	for (pp = &starts; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	if (ok < 0)
		create_failed(r, &w->ss, w->reason);
	else if (api_recipient_in_hours(r->store, w->ss.recipient, why,
	    sizeof(why)) == 0)	/* the window closed while it started */
		start_outside_hours(w, why);
	else if ((st = store_session_start(r->store, w->ss.id,
	    (int64_t)time(NULL))) != STORE_OK) {
		ask_stop(r->cfg->parent_fd, w->ss.id, "store refused start");
		api_store_error(r, st, "starting the session");
	} else
		api_reply(r, 201, created_json(r, &w->ss, w->secret, w));
	api_resume(r);
	explicit_bzero(w, sizeof(*w));
	free(w);
}

void
sessions_abandon(void)
{
	while (starts != NULL) {
		snprintf(starts->reason, sizeof(starts->reason), "the api is "
		    "stopping");
		start_finish(starts, -1);
	}
}

/* A session on a dataset mounted in PostgreSQL gets a reader role of
 * its own, on that dataset's view only, audited first; valid as long as
 * the supervisor's backstop.  0 (role "" for other backends), or -1
 * when replied (the session is recorded as not started). */
static int
pg_role_make(struct api_req *r, const struct store_session *ss, char *role,
    char *pw, size_t pwlen)
{
	struct store_dataset d = { 0 };
	char err[PGRUNNER_ERR_MAX], why[PGRUNNER_ERR_MAX + 32];
	int rc = 0;

	role[0] = pw[0] = '\0';
	if (store_dataset_get(r->store, ss->dataset, &d) != STORE_OK ||
	    strcmp(d.mount_backend, "postgres") != 0)
		goto out;
	if (api_audit(r, "session.pg_role", json_pack("{s:s, s:I, s:s}", "id",
	    ss->id, "dataset", (json_int_t)ss->dataset, "view",
	    d.name)) != 0) {
		rc = -1;
		goto out;
	}
	if (r->cfg->pg == NULL) {
		create_failed(r, ss, "its dataset is mounted in PostgreSQL, "
		    "which is not configured (pg_conninfo)");
		rc = -1;
	} else if (pgrunner_session_role(r->cfg->pg, ss->id, d.name, d.id,
	    (int64_t)time(NULL) + (int64_t)r->cfg->expires_max + 60, role,
	    PIPC_PG_ROLE_MAX, pw, pwlen, err, sizeof(err)) != PGM_OK) {
		snprintf(why, sizeof(why), "postgres: %s", err);
		create_failed(r, ss, why);
		role[0] = '\0';
		rc = -1;
	}
out:
	store_dataset_clear(&d);
	return rc;
}

/* Record the session (audited first), ask the parent, wait suspended. */
int
sessions_create(struct api_req *r)
{
	struct start_wait *w;
	struct policy_error e;
	char why[PIPC_REASON_MAX], refusal[512];
	char pg_role[PIPC_PG_ROLE_MAX] = "", pg_pw[PIPC_SECRET_MAX] = "";
	json_t *pol;
	int st;

	if (r->cfg->parent_fd < 0)
		return api_error(r, 503, "no_parent", "sessions need the "
		    "parent: run `cdsgated serve`, not `cdsgated api`");
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return api_error(r, 503, "memory", "out of memory");
	if (create_fields(r, &w->ss, &w->memory_limit_mb) != 0 ||
	    create_known(r, &w->ss) != 0)
		goto out;
	if (api_recipient_in_hours(r->store, w->ss.recipient, why,
	    sizeof(why)) == 0) {
		api_error(r, 403, HOURS_REASON, "%s", why);
		goto out;
	}
	if (secret_text(w->secret, r->cfg->session_tls ? SECRET_TLS :
	    SECRET_PLAIN) != 0 || creds_hash(w->secret, strlen(w->secret),
	    w->ss.cred_hash, sizeof(w->ss.cred_hash), &e) != POLICY_OK) {
		api_error(r, 503, "secret", "cannot make a secret");
		goto out;
	}
	/* what the session runs under; the rest is the parent's config */
	pol = json_pack("{s:s, s:b, s:I, s:I}", "address",
	    r->cfg->session_address, "tls", r->cfg->session_tls, "expires_in",
	    (json_int_t)(w->ss.expires - w->ss.created), "memory_limit_mb",
	    (json_int_t)w->memory_limit_mb);
	w->ss.policy = pol != NULL ? json_dumps(pol, JSON_COMPACT |
	    JSON_SORT_KEYS) : NULL;
	json_decref(pol);
	if (w->ss.policy == NULL) {
		api_error(r, 503, "memory", "out of memory");
		goto out;
	}
	if (api_audit(r, "session.create", json_pack("{s:s, s:s, s:I, s:I, "
	    "s:I}", "id", w->ss.id, "recipient", w->ss.recipient, "dataset",
	    (json_int_t)w->ss.dataset, "expires", (json_int_t)w->ss.expires,
	    "memory_limit_mb", (json_int_t)w->memory_limit_mb)) != 0)
		goto out;
	if ((st = store_session_create(r->store, &w->ss, w->ss.created)) !=
	    STORE_OK) {
		create_refusal(r, &w->ss, st, refusal, sizeof(refusal));
		api_audit_refused_why(r, "session.create", refusal);
		api_store_error_msg(r, st, refusal);
		goto out;
	}
	store_session_clear(&w->ss);
	if (pg_role_make(r, &w->ss, pg_role, pg_pw, sizeof(pg_pw)) != 0)
		goto out;
	if (start_send(r->cfg->parent_fd, &w->ss, w->secret,
	    w->memory_limit_mb, pg_role, pg_pw) != 0) {
		create_failed(r, &w->ss, "the parent is gone");
		goto out;
	}
	explicit_bzero(pg_pw, sizeof(pg_pw));
	w->r = r;
	clock_gettime(CLOCK_MONOTONIC, &w->since);
	w->next = starts;
	starts = w;
	api_suspend(r);
	return 0;
out:
	explicit_bzero(pg_pw, sizeof(pg_pw));
	store_session_clear(&w->ss);
	explicit_bzero(w, sizeof(*w));
	free(w);
	return 0;
}

/* 404 for an unknown session before anything is audited: a request
 * about nothing changes nothing, not even the audit log. */
static int
session_known(struct api_req *r)
{
	struct store_session ss;
	int st;

	memset(&ss, 0, sizeof(ss));
	st = store_session_get(r->store, r->params[0], &ss);
	store_session_clear(&ss);
	return st == STORE_OK ? 0 : (api_store_error(r, st, "session"), -1);
}

int
sessions_revoke(struct api_req *r)
{
	struct store_session ss;
	char why[64];
	json_t *j;
	int st;

	if (session_known(r) != 0 || api_audit(r, "session.revoke",
	    json_pack("{s:s}", "id", r->params[0])) != 0)
		return -1;
	snprintf(why, sizeof(why), "revoked by uid %u",
	    (unsigned)r->peer_uid);
	memset(&ss, 0, sizeof(ss));
	if ((st = store_session_end(r->store, r->params[0],
	    STORE_SESSION_REVOKED, why, (int64_t)time(NULL))) != STORE_OK ||
	    (st = store_session_get(r->store, r->params[0], &ss)) !=
	    STORE_OK) {
		api_audit_refused(r, "session.revoke", st);
		return api_store_error(r, st, "revoking the session");
	}
	if (r->cfg->parent_fd >= 0)
		ask_stop(r->cfg->parent_fd, ss.id, "revoked");
	j = session_json(&ss);
	store_session_clear(&ss);
	return api_reply(r, 200, j);
}

int
sessions_extend(struct api_req *r)
{
	struct store_session ss;
	unsigned long exp;
	int64_t now = (int64_t)time(NULL);
	json_t *j;
	int st;

	if (body_session_extend(r, &exp) != 0 || session_known(r) != 0)
		return -1;
	if (api_audit(r, "session.extend", json_pack("{s:s, s:I}", "id",
	    r->params[0], "expires", (json_int_t)(now + (int64_t)exp))) != 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if ((st = store_session_extend(r->store, r->params[0],
	    now + (int64_t)exp, now)) != STORE_OK ||
	    (st = store_session_get(r->store, r->params[0], &ss)) !=
	    STORE_OK) {
		api_audit_refused(r, "session.extend", st);
		return api_store_error(r, st, "extending the session");
	}
	ask_extend(r->cfg->parent_fd, r->params[0], now + (int64_t)exp);
	j = session_json(&ss);
	store_session_clear(&ss);
	return api_reply(r, 200, j);
}
