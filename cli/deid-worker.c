/*
 * cli/deid-worker.c — the deid worker: a forked child of `cdsgate deid
 * assess|anonymize` that parses the untrusted CSV and hierarchies and
 * runs the engine, confined, and the parent's side of talking to it.
 *
 * Trust: the worker handles hostile input and is assumed taken over once
 * it has read it.  Before that it drops everything (dw_confine: fds,
 * rlimits, the cdsgate user when run as root, PR_SET_NO_NEW_PRIVS, the
 * seccomp DEID profile); afterwards it can only read and write the
 * descriptors it was handed and talk to the parent over one
 * SOCK_SEQPACKET socket in the typed protocol below (common/ipc.h).  The
 * parent treats every message as hostile: exact sizes, bounded strings,
 * capped totals, one final message; any violation kills the worker.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/deid-worker.h"
#include "common/ipc.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

/* ---- the protocol (IPC_VERSION in common/ipc.h covers it) ---------- */

enum dw_type {
	/* parent -> worker */
	DW_INPUT = 1,	/* struct dw_input + fd: a file to read, or the output */
	DW_NO_INPUT,	/* struct dw_no_input: a QI without a hierarchy fd */
	DW_RUN,		/* struct dw_run: every input sent; start the job */
	/* worker -> parent */
	DW_TEXT,	/* struct dw_text: a chunk of the report, its HTML
			   page or stdout */
	DW_FAILED,	/* struct dw_failed: the job failed (last message) */
	DW_DONE		/* struct dw_done: the job succeeded (last message) */
};

enum { DW_IN_DATA = 1, DW_IN_HIER, DW_IN_OUTPUT, DW_IN_ATTACKER,
    DW_IN_POPTABLE };
enum { DW_STREAM_REPORT = 1, DW_STREAM_OUT, DW_STREAM_HTML };

#define DW_CHUNK	16384

/* A struct deid_error on the wire (same bounded arrays). */
struct dw_error {
	int32_t		status;
	uint32_t	reading;
	uint64_t	line, column;
	char		file[sizeof(((struct deid_error *)0)->file)];
	char		msg[sizeof(((struct deid_error *)0)->msg)];
};

struct dw_input {
	uint32_t	kind;		/* DW_IN_* */
	uint32_t	index;		/* DW_IN_HIER: the QI */
	char		name[DEID_NAME_MAX];
};

struct dw_no_input {
	uint32_t	index;		/* the QI */
	char		name[DEID_NAME_MAX];
	struct dw_error	err;		/* status 0: no file, use the flat one */
};

struct dw_run {
	uint32_t	ninputs;	/* DW_INPUT + DW_NO_INPUT messages sent */
};

struct dw_text {
	uint32_t	stream;		/* DW_STREAM_* */
	uint32_t	len;		/* 1..DW_CHUNK bytes of data used */
	char		data[DW_CHUNK];
};

struct dw_failed {
	struct dw_error	err;
};

struct dw_done {
	int32_t		exit_code;	/* EXIT_GATE_PASSED or _FAILED */
	uint32_t	wrote_output;
	uint64_t	report_len;	/* totals of the DW_TEXT chunks sent */
	uint64_t	out_len;
	uint64_t	html_len;
};

static const struct ipc_type dw_types[] = {
	{ DW_INPUT, sizeof(struct dw_input), IPC_F_FD, "input" },
	{ DW_NO_INPUT, sizeof(struct dw_no_input), 0, "no-input" },
	{ DW_RUN, sizeof(struct dw_run), 0, "run" },
	{ DW_TEXT, sizeof(struct dw_text), 0, "text" },
	{ DW_FAILED, sizeof(struct dw_failed), 0, "failed" },
	{ DW_DONE, sizeof(struct dw_done), 0, "done" },
};
static const struct ipc_proto dw_proto = {
	dw_types, sizeof(dw_types) / sizeof(dw_types[0])
};

/* ---- results ------------------------------------------------------- */

void
dres_init(struct deid_result *res)
{
	memset(res, 0, sizeof(*res));
	wbuf_init(&res->report, DEID_RESULT_TEXT_MAX);
	wbuf_init(&res->out, DEID_RESULT_TEXT_MAX);
	wbuf_init(&res->html, DEID_RESULT_TEXT_MAX);
}

void
dres_free(struct deid_result *res)
{
	wbuf_free(&res->report);
	wbuf_free(&res->out);
	wbuf_free(&res->html);
}

void
dres_fail(struct deid_result *res, int status, int reading)
{
	res->status = status;
	res->reading = reading;
}

int
dres_take(struct wbuf *w, char *s, size_t n)
{
	int r = s == NULL ? DEID_ENOMEM :
	    wbuf_put(w, s, n) == BUF_OK ? DEID_OK : DEID_ELIMIT;

	free(s);
	return r;
}

/* An infrastructure failure: the worker, not the data. */
static void __attribute__((format(printf, 2, 3)))
dres_failf(struct deid_result *res, const char *fmt, ...)
{
	va_list ap;

	memset(&res->err, 0, sizeof(res->err));
	va_start(ap, fmt);
	vsnprintf(res->err.msg, sizeof(res->err.msg), fmt, ap);
	va_end(ap);
	dres_fail(res, DEID_EINTERNAL, 0);
}

static void
err_to_wire(const struct deid_error *e, int status, int reading,
    struct dw_error *w)
{
	memset(w, 0, sizeof(*w));
	w->status = status;
	w->reading = reading != 0;
	w->line = e->line;
	w->column = e->column;
	memcpy(w->file, e->file, sizeof(w->file));
	memcpy(w->msg, e->msg, sizeof(w->msg));
	w->file[sizeof(w->file) - 1] = w->msg[sizeof(w->msg) - 1] = '\0';
}

/* A peer's error: bounded strings, a real status.  allow_ok: status 0 is
 * allowed (DW_NO_INPUT's "no file"). */
static int
err_from_wire(const struct dw_error *w, int allow_ok, struct deid_error *e,
    int *status)
{
	if (w->status < (allow_ok ? DEID_OK : DEID_EINPUT) ||
	    w->status > DEID_EINTERNAL || w->reading > 1 ||
	    ipc_str_get(e->file, sizeof(e->file), w->file, sizeof(w->file)) ||
	    ipc_str_get(e->msg, sizeof(e->msg), w->msg, sizeof(w->msg)))
		return -1;
	e->line = (unsigned long)w->line;
	e->column = (unsigned long)w->column;
	*status = w->status;
	return 0;
}

/* ---- the worker ---------------------------------------------------- */

struct dw_worker {
	struct deid_args	*a;
	struct deid_inputs	 in;
	uint8_t			 seen[4 + MAX_LIST];	/* data, output, QIs,
						   attacker, population
						   table */
	uint32_t		 received;
	int			 run;
};

/* Which input a message names (0 data, 1 output, 2 + i QI i, 2 +
 * MAX_LIST the attacker, 3 + MAX_LIST the population table), or -1:
 * unknown, already sent, or after DW_RUN. */
static int
w_slot(struct dw_worker *w, uint32_t kind, uint32_t index)
{
	int k;

	if (kind == DW_IN_DATA)
		k = 0;
	else if (kind == DW_IN_OUTPUT)
		k = 1;
	else if (kind == DW_IN_HIER && index < w->a->nqi)
		k = 2 + (int)index;
	else if (kind == DW_IN_ATTACKER && w->a->attacker != NULL)
		k = 2 + MAX_LIST;
	else if (kind == DW_IN_POPTABLE && w->a->poptable != NULL)
		k = 3 + MAX_LIST;
	else
		return -1;
	if (w->run || w->seen[k])
		return -1;
	w->seen[k] = 1;
	w->received++;
	return k;
}

/* DW_INPUT: take the descriptor for the data, a hierarchy or the output. */
static int
w_input(void *ctx, struct ipc_msg *m)
{
	struct dw_worker *w = ctx;
	struct deid_input *slot;
	struct dw_input in;
	int k;

	memcpy(&in, m->data, sizeof(in));
	if ((k = w_slot(w, in.kind, in.index)) == 1) {
		w->in.out_fd = m->fd;
		return 0;
	}
	slot = k == 0 ? &w->in.data : k == 2 + MAX_LIST ? &w->in.attacker :
	    k == 3 + MAX_LIST ? &w->in.poptable :
	    k > 1 ? &w->in.hier[k - 2] : NULL;
	if (slot == NULL || ipc_str_get(slot->name, sizeof(slot->name),
	    in.name, sizeof(in.name)) != 0) {
		close(m->fd);
		return -1;
	}
	slot->fd = m->fd;
	return 0;
}

/* DW_NO_INPUT: a QI whose hierarchy is absent (flat) or failed to open. */
static int
w_no_input(void *ctx, struct ipc_msg *m)
{
	struct dw_worker *w = ctx;
	struct deid_input *slot;
	struct dw_no_input ni;
	int k;

	memcpy(&ni, m->data, sizeof(ni));
	if ((k = w_slot(w, DW_IN_HIER, ni.index)) < 2)
		return -1;
	slot = &w->in.hier[k - 2];
	if (ipc_str_get(slot->name, sizeof(slot->name), ni.name,
	    sizeof(ni.name)) != 0 ||
	    err_from_wire(&ni.err, 1, &slot->err, &slot->status) != 0)
		return -1;
	return 0;
}

/* DW_RUN: every input is here (the data and one message per QI). */
static int
w_run(void *ctx, struct ipc_msg *m)
{
	struct dw_worker *w = ctx;
	struct dw_run run;
	size_t i;

	memcpy(&run, m->data, sizeof(run));
	if (w->run || run.ninputs != w->received || !w->seen[0])
		return -1;
	for (i = 0; i < w->a->nqi; i++)
		if (!w->seen[2 + i])
			return -1;
	if (w->a->attacker != NULL && !w->seen[2 + MAX_LIST])
		return -1;
	if (w->a->poptable != NULL && !w->seen[3 + MAX_LIST])
		return -1;
	w->run = 1;
	return 0;
}

static const struct ipc_handler dw_from_parent[] = {
	{ DW_INPUT, w_input },
	{ DW_NO_INPUT, w_no_input },
	{ DW_RUN, w_run },
};

#if defined(__SANITIZE_ADDRESS__)
#define DW_SANITIZED	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_SANITIZED	1
#endif
#endif

/* Resource limits: no core (raw records), few fds, generous memory; no
 * file growth at all unless the job writes the released table. */
static void
dw_rlimits(const struct deid_args *a, int writes, struct confine *c)
{
	confine_rlimit(c, RLIMIT_CORE, 0);
	confine_rlimit(c, RLIMIT_NOFILE, 9 + a->nqi);
#ifndef DW_SANITIZED	/* ASan reserves terabytes of address space */
	confine_rlimit(c, RLIMIT_AS, (rlim_t)4 << 30);
	confine_rlimit(c, RLIMIT_DATA, (rlim_t)4 << 30);
#endif
	confine_rlimit(c, RLIMIT_FSIZE, writes ? RLIM_INFINITY : 0);
}

/* Everything that would need a forbidden syscall later happens now:
 * jansson seeds its hash from /dev/urandom, glibc counts CPUs from /sys.
 * glibc malloc reads /proc/sys/vm/overcommit_memory the first time it
 * shrinks a thread's arena: one arena for all threads means it never
 * has one to shrink. */
static void
dw_warm_up(struct deid_args *a)
{
	long n;

	(void)mallopt(M_ARENA_MAX, 1);
	json_object_seed(0);
	if (a->sopts.threads == 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		a->sopts.threads = n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
	}
}

/* The descriptors, the warm-up, then confine_apply: rlimits, the
 * cdsgate user when run as root, no-new-privs, death with the CLI (which
 * must still be there), non-dumpable, the DEID filter. */
static int
dw_confine(struct deid_args *a, int *sock, pid_t parent, int writes,
    char *msg, size_t len)
{
	struct privdrop_user u;
	struct confine c;

	if (confine_fds(sock, 0, msg, len) != 0)
		return -1;
	confine_init(&c, "deid worker");
	dw_rlimits(a, writes, &c);
	if (getuid() == 0 || geteuid() == 0) {
		if (privdrop_lookup(PRIVDROP_WORKER_USER, NULL, &u, msg,
		    len) != 0)
			return -1;
		c.user = &u;	/* else stay who we are: unprivileged */
	}
	c.deathsig = SIGKILL;
	c.parent = parent;
	c.profile = SANDBOX_PROFILE_DEID;
	dw_warm_up(a);
	return confine_apply(&c, msg, len) == CONFINE_OK ? 0 : -1;
}

/* Tell the parent why the worker gives up; then it exits. */
static void __attribute__((noreturn))
w_fail(int sock, const char *what, const char *msg)
{
	struct deid_error e = { .msg = "" };
	struct dw_failed f;

	snprintf(e.msg, sizeof(e.msg), "deid worker: %s: %s", what, msg);
	err_to_wire(&e, DEID_EINTERNAL, 0, &f.err);
	(void)ipc_send(sock, &dw_proto, DW_FAILED, &f, sizeof(f), -1);
	_exit(EXIT_INTERNAL);
}

/* Test hook (--enable-test-hooks builds): CDSGATE_TEST_VIOLATE=open|
 * socket|execve|ptrace makes the confined worker commit that syscall;
 * =ipc makes it send a message only the parent may send, and wait for
 * the parent to kill it. */
static void
w_test_hook(int sock)
{
#ifdef ENABLE_TEST_HOOKS
	const char *v = getenv("CDSGATE_TEST_VIOLATE");
	struct dw_run run = { 0 };

	if (v == NULL || *v == '\0')
		return;
	if (strcmp(v, "ipc") == 0) {
		(void)ipc_send(sock, &dw_proto, DW_RUN, &run, sizeof(run), -1);
		for (;;)
			sleep(1);
	}
	(void)sandbox_violate(v);
	w_fail(sock, "test hook", "the sandbox let the forbidden call "
	    "through");
#else
	(void)sock;
#endif
}

/* Send one stream as DW_TEXT chunks. */
static int
w_send_text(int sock, uint32_t stream, const struct wbuf *b)
{
	static struct dw_text t;
	size_t off, n;

	for (off = 0; off < b->len; off += n) {
		n = b->len - off < DW_CHUNK ? b->len - off : DW_CHUNK;
		memset(&t, 0, sizeof(t));
		t.stream = stream;
		t.len = (uint32_t)n;
		memcpy(t.data, b->d + off, n);
		if (ipc_send(sock, &dw_proto, DW_TEXT, &t, sizeof(t), -1) !=
		    IPC_OK)
			return -1;
	}
	return 0;
}

/* The job's outcome to the parent: DW_FAILED, or the texts and DW_DONE. */
static int
w_send_result(int sock, const struct deid_result *res)
{
	struct dw_failed f;
	struct dw_done d;

	if (res->status != DEID_OK) {
		err_to_wire(&res->err, res->status, res->reading, &f.err);
		return ipc_send(sock, &dw_proto, DW_FAILED, &f, sizeof(f), -1);
	}
	if (w_send_text(sock, DW_STREAM_REPORT, &res->report) != 0 ||
	    w_send_text(sock, DW_STREAM_OUT, &res->out) != 0 ||
	    w_send_text(sock, DW_STREAM_HTML, &res->html) != 0)
		return -1;
	memset(&d, 0, sizeof(d));
	d.exit_code = res->exit_code;
	d.wrote_output = res->wrote_output != 0;
	d.report_len = res->report.len;
	d.out_len = res->out.len;
	d.html_len = res->html.len;
	return ipc_send(sock, &dw_proto, DW_DONE, &d, sizeof(d), -1);
}

/* The child: confine, take the inputs, run the job, report, exit. */
static void __attribute__((noreturn))
dw_worker_main(struct deid_args *a, int sock, pid_t parent, int writes,
    deid_job_fn job)
{
	struct ipc_peer pp = { sock, "parent", &dw_proto, dw_from_parent,
	    sizeof(dw_from_parent) / sizeof(dw_from_parent[0]) };
	struct deid_result res;
	struct dw_worker w;
	char msg[512];
	size_t i;
	int r;

	log_init("cdsgate deid worker");
	if (dw_confine(a, &sock, parent, writes, msg, sizeof(msg)) != 0)
		w_fail(sock, "cannot confine itself", msg);
	pp.sock = sock;
	w_test_hook(sock);
	memset(&w, 0, sizeof(w));
	w.a = a;
	w.in.data.fd = w.in.out_fd = w.in.attacker.fd = w.in.poptable.fd = -1;
	for (i = 0; i < MAX_LIST; i++)
		w.in.hier[i].fd = -1;
	while (!w.run)
		if ((r = ipc_dispatch(&pp, &w, NULL)) != IPC_OK)
			fatalx("the parent broke the protocol: %s",
			    ipc_strerror(r));
	dres_init(&res);
	job(a, &w.in, &res);
	_exit(w_send_result(sock, &res) == IPC_OK ? 0 : EXIT_INTERNAL);
}

/* ---- the parent ---------------------------------------------------- */

struct dw_parent {
	struct deid_result	*res;
	int			 out_sent;	/* an output fd was handed over */
	int			 final;		/* DW_FAILED or DW_DONE seen */
};

/* DW_TEXT: append a chunk to the report, its page or the text to
 * print. */
static int
p_text(void *ctx, struct ipc_msg *m)
{
	struct dw_parent *p = ctx;
	static struct dw_text t;
	struct wbuf *b;

	memcpy(&t, m->data, sizeof(t));
	if (p->final || t.len == 0 || t.len > DW_CHUNK)
		return -1;
	if (t.stream == DW_STREAM_REPORT)
		b = &p->res->report;
	else if (t.stream == DW_STREAM_OUT)
		b = &p->res->out;
	else if (t.stream == DW_STREAM_HTML)
		b = &p->res->html;
	else
		return -1;
	return wbuf_put(b, t.data, t.len) == BUF_OK ? 0 : -1;
}

/* DW_FAILED: the job's error, to be printed as if it happened here. */
static int
p_failed(void *ctx, struct ipc_msg *m)
{
	struct dw_parent *p = ctx;
	struct dw_failed f;
	int status;

	memcpy(&f, m->data, sizeof(f));
	if (p->final ||
	    err_from_wire(&f.err, 0, &p->res->err, &status) != 0)
		return -1;
	dres_fail(p->res, status, (int)f.err.reading);
	p->final = 1;
	return 0;
}

/* DW_DONE: success; the totals must match what arrived. */
static int
p_done(void *ctx, struct ipc_msg *m)
{
	struct dw_parent *p = ctx;
	struct dw_done d;

	memcpy(&d, m->data, sizeof(d));
	if (p->final || d.report_len != p->res->report.len ||
	    d.out_len != p->res->out.len || d.html_len != p->res->html.len ||
	    d.wrote_output > 1 ||
	    (d.wrote_output && !p->out_sent) ||
	    (d.exit_code != EXIT_GATE_PASSED &&
	    d.exit_code != EXIT_GATE_FAILED))
		return -1;
	p->res->status = DEID_OK;
	p->res->exit_code = d.exit_code;
	p->res->wrote_output = (int)d.wrote_output;
	p->final = 1;
	return 0;
}

static const struct ipc_handler dw_from_worker[] = {
	{ DW_TEXT, p_text },
	{ DW_FAILED, p_failed },
	{ DW_DONE, p_done },
};

/* Hand one opened file over (or, for a QI, why there is none). */
static int
p_send_input(int sock, uint32_t kind, uint32_t index,
    const struct deid_input *in)
{
	struct dw_no_input ni;
	struct dw_input di;

	if (in->fd >= 0) {
		memset(&di, 0, sizeof(di));
		di.kind = kind;
		di.index = index;
		snprintf(di.name, sizeof(di.name), "%s", in->name);
		return ipc_send(sock, &dw_proto, DW_INPUT, &di, sizeof(di),
		    in->fd);
	}
	memset(&ni, 0, sizeof(ni));
	ni.index = index;
	snprintf(ni.name, sizeof(ni.name), "%s", in->name);
	err_to_wire(&in->err, in->status, 0, &ni.err);
	return ipc_send(sock, &dw_proto, DW_NO_INPUT, &ni, sizeof(ni), -1);
}

/* Everything the job needs, then DW_RUN.  A failure here means the
 * worker is gone; the reason is collected afterwards. */
static void
p_send_inputs(int sock, const struct deid_args *a,
    const struct deid_inputs *in, const char *out_name)
{
	struct deid_input out = { .fd = in->out_fd };
	struct dw_run run = { 0 };
	size_t i;

	if (p_send_input(sock, DW_IN_DATA, 0, &in->data) != IPC_OK)
		return;
	run.ninputs++;
	for (i = 0; i < a->nqi; i++, run.ninputs++)
		if (p_send_input(sock, DW_IN_HIER, (uint32_t)i, &in->hier[i])
		    != IPC_OK)
			return;
	if (in->attacker.fd >= 0) {
		if (p_send_input(sock, DW_IN_ATTACKER, 0, &in->attacker) !=
		    IPC_OK)
			return;
		run.ninputs++;
	}
	if (in->poptable.fd >= 0) {
		if (p_send_input(sock, DW_IN_POPTABLE, 0, &in->poptable) !=
		    IPC_OK)
			return;
		run.ninputs++;
	}
	if (in->out_fd >= 0) {
		snprintf(out.name, sizeof(out.name), "%s", out_name);
		if (p_send_input(sock, DW_IN_OUTPUT, 0, &out) != IPC_OK)
			return;
		run.ninputs++;
	}
	(void)ipc_send(sock, &dw_proto, DW_RUN, &run, sizeof(run), -1);
}

/* Why the worker ended, when that is not the job's own outcome. */
static void
p_wait_status(struct deid_result *res, int st, int final)
{
	int sig;

	if (WIFSIGNALED(st)) {
		sig = WTERMSIG(st);
		dres_failf(res, "deid worker killed by signal %d (SIG%s%s)",
		    sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
		    sig == SIGSYS ? ": seccomp violation?" :
		    sig == SIGKILL ? ": out of memory, or killed" : "");
	} else if (sandbox_debug() && WEXITSTATUS(st) == SANDBOX_DEBUG_EXIT)
		dres_failf(res, "deid worker stopped by the sandbox (debug "
		    "mode): the syscall is reported above");
	else if (final && res->status != DEID_OK)
		return;		/* DW_FAILED: its error stands */
	else if (WEXITSTATUS(st) != 0)
		dres_failf(res, "deid worker exited with status %d",
		    WEXITSTATUS(st));
	else if (!final)
		dres_failf(res, "deid worker exited without a result");
}

/* Collect the result; a protocol violation kills the worker. */
static void
p_collect(int sock, pid_t pid, int out_sent, struct deid_result *res)
{
	struct ipc_peer wp = { sock, "deid worker", &dw_proto, dw_from_worker,
	    sizeof(dw_from_worker) / sizeof(dw_from_worker[0]) };
	struct dw_parent p = { res, out_sent, 0 };
	int r = IPC_OK, st = 0;

	while (!p.final && (r = ipc_dispatch(&wp, &p, NULL)) == IPC_OK)
		;
	if (r != IPC_OK && r != IPC_EOF)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r != IPC_OK && r != IPC_EOF) {
		dres_failf(res, "deid worker broke the protocol (%s): killed",
		    ipc_strerror(r));
		return;
	}
	p_wait_status(res, st, p.final);
}

void
dw_run(struct deid_args *a, struct deid_inputs *in, deid_job_fn job,
    struct deid_result *res)
{
	char msg[256];
	pid_t pid, parent = getpid();
	int sv[2];

	if (a->in_process) {
		job(a, in, res);
		dargs_close(in);
		return;
	}
#ifdef HAVE_SECCOMP
	if (sandbox_init(SANDBOX_MODE_SECCOMP, a->sandbox_debug, msg,
	    sizeof(msg)) != 0) {
#else
	if (sandbox_init(SANDBOX_MODE_NONE, 0, msg, sizeof(msg)) != 0) {
#endif
		dres_failf(res, "deid worker: %s", msg);
		dargs_close(in);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		dres_failf(res, "deid worker: socketpair: %s", strerror(errno));
		dargs_close(in);
		return;
	}
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(sv[0]);
		dw_worker_main(a, sv[1], parent, in->out_fd >= 0, job);
	}
	close(sv[1]);
	if (pid < 0)
		dres_failf(res, "deid worker: fork: %s", strerror(errno));
	else
		p_send_inputs(sv[0], a, in, a->output);
	dargs_close(in);
	if (pid > 0)
		p_collect(sv[0], pid, in->out_fd >= 0, res);
	close(sv[0]);
}

int
dw_run_print(struct deid_args *a, deid_job_fn job)
{
	struct deid_error err = { .msg = "" };
	struct deid_inputs in;
	struct deid_result res;
	int r, rc;

	deid_risk_init();
	if ((r = dargs_open(a, 0, &in, &err)) != DEID_OK)
		return dargs_error(r, &err, 1);
	dres_init(&res);
	dw_run(a, &in, job, &res);
	if (res.status != DEID_OK)
		rc = dargs_error(res.status, &res.err, res.reading);
	else {
		if (res.out.len > 0)
			dargs_put_safe(stdout, (const char *)res.out.d,
			    res.out.len, 1);
		rc = res.exit_code;
	}
	dres_free(&res);
	return rc;
}
