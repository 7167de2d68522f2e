/*
 * cli/replay-worker.c — the replay worker: a forked child of `cdsgate
 * replay` that reads the untrusted recording (record/reader.c) and does
 * what the CLI asks of it, and the CLI's side of talking to it.
 *
 * Trust: the worker handles hostile input (a damaged or forged
 * recording) and is assumed taken over once it has read it.  Before it
 * reads a byte it keeps only stdout, stderr and its socket, and
 * confines itself (confine_apply: no core, death with the CLI,
 * no-new-privs, non-dumpable, the seccomp REPLAY profile); then it is
 * handed the recording's descriptor and, for --export and --serve,
 * ffmpeg's stdin or the loopback listener.  It can read and write those,
 * serve viewers on the listener, and answer over one SOCK_SEQPACKET
 * socket in the typed protocol below (common/ipc.h).  The CLI opens
 * every file, checks the audit log, writes the PNG and runs ffmpeg; it
 * treats every message as hostile: exact sizes, bounded strings, a
 * header within the reader's limits, pixels no more than one frame,
 * one final message; any violation kills the worker.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/replay-serve.h"
#include "cli/replay-worker.h"
#include "common/ipc.h"
#include "gateway/vncscreen.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

/* ---- the protocol (IPC_VERSION in common/ipc.h covers it) ---------- */

enum rwm_type {
	/* CLI -> worker */
	RWM_OPEN = 1,	/* struct rwm_open + fd: the recording */
	RWM_ACT,	/* struct rwm_act: keys, search, events, frame */
	RWM_ACT_FD,	/* struct rwm_act + fd: export (ffmpeg's stdin),
			   serve (the listener) */
	/* worker -> CLI */
	RWM_INFO,	/* struct rwm_info: the header and the scan */
	RWM_REFUSED,	/* struct rwm_refused: not readable (last message) */
	RWM_PIXELS,	/* struct rwm_pixels: a piece of the frame's RGB */
	RWM_SERVING,	/* struct rwm_serving: viewers may connect */
	RWM_DONE	/* struct rwm_done: the action ended (last message) */
};

#define RW_CHUNK	16384

struct rwm_open {
	char		name[1024];
};

struct rwm_act {
	uint32_t	action;		/* enum rw_action */
	uint32_t	paused;
	uint64_t	t_us;
	double		fps;
	char		text[512];
};

struct rwm_info {
	struct record_header	h;
	struct record_info	in;
};

struct rwm_refused {
	int32_t		status;		/* RECORD_E* */
	char		err[512];
};

struct rwm_pixels {
	uint32_t	len;		/* 1..RW_CHUNK bytes of data used */
	uint8_t		data[RW_CHUNK];
};

struct rwm_serving {
	uint32_t	zero;
};

struct rwm_done {
	int32_t		exit_code;
	uint64_t	count;		/* frame: RGB bytes; export: frames */
};

static const struct ipc_type rw_types[] = {
	{ RWM_OPEN, sizeof(struct rwm_open), IPC_F_FD, "open" },
	{ RWM_ACT, sizeof(struct rwm_act), 0, "act" },
	{ RWM_ACT_FD, sizeof(struct rwm_act), IPC_F_FD, "act-fd" },
	{ RWM_INFO, sizeof(struct rwm_info), 0, "info" },
	{ RWM_REFUSED, sizeof(struct rwm_refused), 0, "refused" },
	{ RWM_PIXELS, sizeof(struct rwm_pixels), 0, "pixels" },
	{ RWM_SERVING, sizeof(struct rwm_serving), 0, "serving" },
	{ RWM_DONE, sizeof(struct rwm_done), 0, "done" },
};
static const struct ipc_proto rw_proto = {
	rw_types, sizeof(rw_types) / sizeof(rw_types[0])
};

/* ---- the worker's actions ------------------------------------------ */

struct rw_worker {
	int			 sock;
	char			 name[1024];
	struct record_reader	*r;	/* after RWM_OPEN */
	int			 done;	/* the action ran */
};

/* A key's or clipboard's verdict in words. */
static const char *
verdict_name(unsigned v)
{
	return v == RECORD_DELIVERED ? "delivered" : v == RECORD_FILTERED ?
	    "filtered" : v == RECORD_RATELIMITED ? "rate-limited" : "unknown";
}

/* The reader's failure, as the CLI always said it. */
static int
w_read_error(struct rw_worker *w, int rc)
{
	fprintf(stderr, "cdsgate: %s: %s %s\n", w->name, record_strerror(rc),
	    record_reader_error(w->r));
	return EXIT_BAD_INPUT;
}

/* Feed every key chunk to the text; print the timeline if asked. */
static int
walk_keys(struct record_reader *r, struct record_text *x, int print,
    const char *needle, size_t *hits)
{
	struct record_item it;
	char t[32], t0[32], name[32];
	uint64_t first;
	size_t i;
	int rc;

	for (i = 0; i < record_reader_nchunks(r); i++) {
		if (record_reader_chunk(r, i)->type != RECORD_CH_KEY)
			continue;
		if ((rc = record_reader_item(r, i, &it)) != RECORD_OK)
			return rc;
		if (print) {
			record_keysym_name(it.keysym, name, sizeof(name));
			printf("%s %-7s %-12s %s\n", replay_fmt_time(it.t_us, t,
			    sizeof(t)), it.down ? "press" : "release", name,
			    it.verdict == RECORD_DELIVERED ? "" :
			    verdict_name(it.verdict));
		}
		if (record_text_feed(x, it.t_us, it.keysym, it.down,
		    it.verdict) && needle != NULL &&
		    record_text_ends_with(x, needle, &first)) {
			printf("%s typed (started %s)\n", replay_fmt_time(it.t_us,
			    t, sizeof(t)), replay_fmt_time(first, t0,
			    sizeof(t0)));
			(*hits)++;
		}
	}
	return RECORD_OK;
}

/* --keys (needle NULL) or --search needle. */
static int
w_keys(struct rw_worker *w, const char *needle)
{
	struct record_text *x = record_text_alloc();
	char *shown = NULL;
	size_t hits = 0;
	int rc;

	if (x == NULL)
		return EXIT_INTERNAL;
	rc = walk_keys(w->r, x, needle == NULL, needle, &hits);
	if (rc == RECORD_OK && needle == NULL) {
		if ((shown = record_text_shown(x)) == NULL)
			rc = RECORD_ENOMEM;
		else
			printf("--- typed text ---\n%s\n", shown);
		free(shown);
	}
	record_text_free(x);
	if (rc != RECORD_OK)
		return w_read_error(w, rc);
	if (needle != NULL && hits == 0) {
		fprintf(stderr, "cdsgate: '%s' was not typed\n", needle);
		return EXIT_INTERNAL;
	}
	return 0;
}

/* One non-frame chunk as a JSON object. */
static json_t *
item_json(const struct record_item *it)
{
	char name[32];
	json_t *o = json_pack("{s:f, s:I}", "t", it->t_us / 1e6, "t_us",
	    (json_int_t)it->t_us), *v = NULL;

	switch (it->type) {
	case RECORD_CH_KEY:
		record_keysym_name(it->keysym, name, sizeof(name));
		json_object_set_new(o, "type", json_string("key"));
		json_object_set_new(o, "keysym", json_integer(it->keysym));
		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "down", json_boolean(it->down));
		break;
	case RECORD_CH_PTR:
		json_object_set_new(o, "type", json_string("pointer"));
		json_object_set_new(o, "x", json_integer(it->x));
		json_object_set_new(o, "y", json_integer(it->y));
		json_object_set_new(o, "buttons", json_integer(it->mask));
		break;
	case RECORD_CH_CLIP:
		json_object_set_new(o, "type", json_string("clipboard"));
		json_object_set_new(o, "direction", json_string(it->dir ==
		    RECORD_CLIP_IN ? "in" : "out"));
		json_object_set_new(o, "bytes", json_integer(it->full_len));
		if ((v = json_stringn(it->data, it->data_len)) != NULL)
			json_object_set_new(o, "text", v);
		break;
	case RECORD_CH_EVNT:
		json_object_set_new(o, "type", json_string("event"));
		v = json_loadb(it->data, it->data_len, 0, NULL);
		json_object_set_new(o, "event", v != NULL ? v :
		    json_stringn(it->data, it->data_len));
		return o;
	}
	json_object_set_new(o, "verdict", json_string(verdict_name(it->verdict)));
	return o;
}

/* --events: every non-frame chunk as a JSON line. */
static int
w_events(struct rw_worker *w)
{
	struct record_item it;
	const struct record_chunk *c;
	json_t *o;
	char *s;
	size_t i;
	int rc;

	for (i = 0; i < record_reader_nchunks(w->r); i++) {
		c = record_reader_chunk(w->r, i);
		if (c->type != RECORD_CH_KEY && c->type != RECORD_CH_PTR &&
		    c->type != RECORD_CH_CLIP && c->type != RECORD_CH_EVNT)
			continue;
		if ((rc = record_reader_item(w->r, i, &it)) != RECORD_OK)
			return w_read_error(w, rc);
		o = item_json(&it);
		s = o != NULL ? json_dumps(o, JSON_COMPACT |
		    JSON_REAL_PRECISION(9)) : NULL;
		json_decref(o);
		if (s == NULL)
			return EXIT_INTERNAL;
		printf("%s\n", s);
		free(s);
	}
	return 0;
}

/* --frame: the RGB at t_us to the CLI, in pieces; *sent its bytes. */
static int
w_frame(struct rw_worker *w, uint64_t t_us, uint64_t *sent)
{
	const struct record_header *h = record_reader_header(w->r);
	size_t len = (size_t)h->width * h->height * 3, off, n;
	static struct rwm_pixels px;
	uint8_t *rgb;
	int rc;

	if ((rc = record_reader_seek(w->r, t_us)) != RECORD_OK)
		return w_read_error(w, rc);
	if ((rgb = malloc(len)) == NULL)
		return EXIT_INTERNAL;
	record_reader_rgb(w->r, rgb);
	for (off = 0; off < len; off += n) {
		n = len - off < RW_CHUNK ? len - off : RW_CHUNK;
		memset(&px, 0, sizeof(px));
		px.len = (uint32_t)n;
		memcpy(px.data, rgb + off, n);
		if (ipc_send(w->sock, &rw_proto, RWM_PIXELS, &px, sizeof(px),
		    -1) != IPC_OK)
			break;
	}
	free(rgb);
	*sent = off;
	return off == len ? 0 : EXIT_INTERNAL;
}

/* --export: frame i shows [i/fps, (i+1)/fps), as raw RGB into fd (the
 * video lasts the session); *frames written. */
static int
w_export(struct rw_worker *w, int fd, double fps, uint64_t *frames)
{
	const struct record_header *h = record_reader_header(w->r);
	uint64_t dur = record_reader_info(w->r)->duration_us, i, n;
	size_t len = (size_t)h->width * h->height * 3;
	uint8_t *rgb = malloc(len);
	int rc = RECORD_OK, wr = 0;

	*frames = 0;
	if (rgb == NULL) {
		close(fd);
		return EXIT_INTERNAL;
	}
	n = (uint64_t)ceil(dur / 1e6 * fps);
	if (n == 0)
		n = 1;
	for (i = 0; i < n && rc == RECORD_OK && wr == 0; i++) {
		rc = record_reader_seek(w->r, (uint64_t)(i * 1e6 / fps));
		if (rc == RECORD_ENOFRAME)	/* before the first frame: black */
			rc = RECORD_OK, memset(rgb, 0, len);
		else if (rc == RECORD_OK)
			record_reader_rgb(w->r, rgb);
		if (rc == RECORD_OK)
			wr = -(record_write_all(fd, rgb, len) != 0);
	}
	close(fd);
	free(rgb);
	*frames = n;
	if (rc != RECORD_OK)
		return w_read_error(w, rc);
	return wr != 0 ? EXIT_INTERNAL : 0;
}

/* replay_serve's ready hook: viewers may connect, tell the CLI. */
static void
w_serving(void *arg)
{
	struct rw_worker *w = arg;
	struct rwm_serving s = { 0 };

	fflush(NULL);
	(void)ipc_send(w->sock, &rw_proto, RWM_SERVING, &s, sizeof(s), -1);
}

/* RWM_OPEN: read the header and scan; the result to the CLI. */
static int
w_open(void *ctx, struct ipc_msg *m)
{
	struct rw_worker *w = ctx;
	static struct rwm_refused f;
	static struct rwm_info in;
	struct rwm_open o;
	int rc;

	memcpy(&o, m->data, sizeof(o));
	if (w->r != NULL || ipc_str_get(w->name, sizeof(w->name), o.name,
	    sizeof(o.name)) != 0) {
		close(m->fd);
		return -1;
	}
	memset(&f, 0, sizeof(f));
	rc = record_reader_fdopen(m->fd, w->name, &w->r, f.err, sizeof(f.err));
	if (rc != RECORD_OK) {
		f.status = rc;
		(void)ipc_send(w->sock, &rw_proto, RWM_REFUSED, &f, sizeof(f),
		    -1);
		_exit(0);
	}
	memset(&in, 0, sizeof(in));
	in.h = *record_reader_header(w->r);
	in.in = *record_reader_info(w->r);
	return ipc_send(w->sock, &rw_proto, RWM_INFO, &in, sizeof(in), -1) ==
	    IPC_OK ? 0 : -1;
}

/* RWM_ACT / RWM_ACT_FD: run the action, then RWM_DONE. */
static int
w_act(void *ctx, struct ipc_msg *m)
{
	struct rw_worker *w = ctx;
	struct rwm_done d = { 0, 0 };
	struct rwm_act a;
	char text[sizeof(a.text)];
	int fd = m->fd, need_fd;

	memcpy(&a, m->data, sizeof(a));
	need_fd = a.action == RW_EXPORT || a.action == RW_SERVE;
	if (w->r == NULL || w->done || need_fd != (fd >= 0) ||
	    ipc_str_get(text, sizeof(text), a.text, sizeof(a.text)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	w->done = 1;
	switch (a.action) {
	case RW_KEYS:	d.exit_code = w_keys(w, NULL); break;
	case RW_SEARCH:	d.exit_code = w_keys(w, text); break;
	case RW_EVENTS:	d.exit_code = w_events(w); break;
	case RW_FRAME:	d.exit_code = w_frame(w, a.t_us, &d.count); break;
	case RW_EXPORT:
		if (!(a.fps >= 0.1 && a.fps <= 60))
			return close(fd), -1;
		d.exit_code = w_export(w, fd, a.fps, &d.count);
		break;
	case RW_SERVE:
		d.exit_code = replay_serve(w->r, fd, text, a.paused != 0,
		    a.t_us, w_serving, w);
		break;
	default:
		return -1;
	}
	explicit_bzero(text, sizeof(text));
	fflush(NULL);
	return ipc_send(w->sock, &rw_proto, RWM_DONE, &d, sizeof(d), -1) ==
	    IPC_OK ? 0 : -1;
}

static const struct ipc_handler rw_from_cli[] = {
	{ RWM_OPEN, w_open },
	{ RWM_ACT, w_act },
	{ RWM_ACT_FD, w_act },
};

int
replay_confine(struct confine *c, char *err, size_t errlen)
{
#ifdef HAVE_SECCOMP
	const enum sandbox_mode mode = SANDBOX_MODE_SECCOMP;
#else
	const enum sandbox_mode mode = SANDBOX_MODE_NONE;
#endif

	c->profile = SANDBOX_PROFILE_REPLAY;
	if (sandbox_init(mode, 0, err, errlen) != 0 ||
	    confine_rlimit(c, RLIMIT_CORE, 0) != CONFINE_OK)
		return -1;
	return confine_apply(c, err, errlen) == CONFINE_OK ? 0 : -1;
}

/* Keep stdout, stderr and the socket; warm up what would need a
 * forbidden call later (jansson's seed, libgcrypt's config); then die
 * with the CLI, and the rest of replay_confine. */
static int
w_confine(int *sock, pid_t parent, char *msg, size_t len)
{
	struct confine c;

	if (confine_fds(sock, 1, msg, len) != 0)
		return -1;
	json_object_seed(0);
	vnc_des_warm_up();
	signal(SIGPIPE, SIG_IGN);	/* ffmpeg may go: a write error */
	confine_init(&c, "replay worker");
	c.deathsig = SIGKILL;
	c.parent = parent;
	return replay_confine(&c, msg, len);
}

/* Test hook (--enable-test-hooks builds): CDSGATE_TEST_VIOLATE=open|
 * socket|execve|ptrace makes the confined worker commit that syscall;
 * =ipc makes it send a message only the CLI may send, and wait for the
 * CLI to kill it. */
static void
w_test_hook(int sock)
{
#ifdef ENABLE_TEST_HOOKS
	const char *v = getenv("CDSGATE_TEST_VIOLATE");
	struct rwm_act a;

	if (v == NULL || *v == '\0')
		return;
	if (strcmp(v, "ipc") == 0) {
		memset(&a, 0, sizeof(a));
		(void)ipc_send(sock, &rw_proto, RWM_ACT, &a, sizeof(a), -1);
		for (;;)
			sleep(1);
	}
	(void)sandbox_violate(v);
	fprintf(stderr, "cdsgate: replay worker: the sandbox let the "
	    "forbidden call through\n");
	_exit(EXIT_INTERNAL);
#else
	(void)sock;
#endif
}

/* The child: confine, then answer the CLI until the action is done. */
static void __attribute__((noreturn))
rw_main(int sock, void *arg)
{
	struct rw_worker w = { .sock = sock };
	struct ipc_peer pp = { sock, "cdsgate replay", &rw_proto, rw_from_cli,
	    sizeof(rw_from_cli) / sizeof(rw_from_cli[0]) };
	char msg[512];
	int r;

	if (w_confine(&w.sock, *(pid_t *)arg, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "cdsgate: replay worker: cannot confine "
		    "itself: %s\n", msg);
		_exit(EXIT_INTERNAL);
	}
	pp.sock = w.sock;
	w_test_hook(w.sock);
	while (!w.done)
		if ((r = ipc_dispatch(&pp, &w, NULL)) != IPC_OK) {
			if (r != IPC_EOF)
				fprintf(stderr, "cdsgate: replay worker: the "
				    "CLI broke the protocol: %s\n",
				    ipc_strerror(r));
			_exit(r == IPC_EOF ? 0 : EXIT_INTERNAL);
		}
	fflush(NULL);
	_exit(0);
}

/* ---- the CLI's side ------------------------------------------------ */

struct rw_cli {
	struct replay_worker	*w;
	uint8_t			*rgb;	/* RW_FRAME: where pixels go */
	size_t			 rgb_len, rgb_got;
	void			(*serving)(void *);
	void			*arg;
	int			 refused;	/* RWM_REFUSED seen */
	int			 final;		/* RWM_INFO/REFUSED, or DONE */
	struct rwm_done		 done;
};

/* A header the reader itself would accept: bounded, terminated. */
static int
header_ok(const struct record_header *h)
{
	return h->width >= 1 && h->width <= RECORD_MAX_WIDTH &&
	    h->height >= 1 && h->height <= RECORD_MAX_HEIGHT &&
	    memchr(h->session, '\0', sizeof(h->session)) != NULL &&
	    memchr(h->recipient, '\0', sizeof(h->recipient)) != NULL &&
	    memchr(h->policy, '\0', sizeof(h->policy)) != NULL;
}

/* RWM_INFO: the header and scan, checked before the CLI uses them. */
static int
p_info(void *ctx, struct ipc_msg *m)
{
	struct rw_cli *p = ctx;
	static struct rwm_info in;

	memcpy(&in, m->data, sizeof(in));
	if (p->final || !header_ok(&in.h) ||
	    memchr(in.in.trunc_reason, '\0', sizeof(in.in.trunc_reason)) ==
	    NULL)
		return -1;
	p->w->h = in.h;
	p->w->info = in.in;
	p->final = 1;
	return 0;
}

/* RWM_REFUSED: not a readable recording; said here as the CLI always
 * said it ("FILE: status (detail)"). */
static int
p_refused(void *ctx, struct ipc_msg *m)
{
	struct rw_cli *p = ctx;
	struct rwm_refused f;
	char err[sizeof(f.err)];

	memcpy(&f, m->data, sizeof(f));
	if (p->final || f.status == RECORD_OK ||
	    ipc_str_get(err, sizeof(err), f.err, sizeof(f.err)) != 0)
		return -1;
	fprintf(stderr, "cdsgate: %s: %s (%s)\n", p->w->name,
	    record_strerror(f.status), err);
	p->refused = p->final = 1;
	return 0;
}

/* RWM_PIXELS: a piece of the frame; never more than one frame. */
static int
p_pixels(void *ctx, struct ipc_msg *m)
{
	struct rw_cli *p = ctx;
	static struct rwm_pixels px;

	memcpy(&px, m->data, sizeof(px));
	if (p->final || p->rgb == NULL || px.len == 0 || px.len > RW_CHUNK ||
	    px.len > p->rgb_len - p->rgb_got)
		return -1;
	memcpy(p->rgb + p->rgb_got, px.data, px.len);
	p->rgb_got += px.len;
	return 0;
}

/* RWM_SERVING: once, and only for --serve. */
static int
p_serving(void *ctx, struct ipc_msg *m)
{
	struct rw_cli *p = ctx;

	(void)m;
	if (p->final || p->serving == NULL)
		return -1;
	p->serving(p->arg);
	p->serving = NULL;	/* once */
	return 0;
}

/* RWM_DONE: a cdsgate exit code; for --frame, after the whole frame. */
static int
p_done(void *ctx, struct ipc_msg *m)
{
	struct rw_cli *p = ctx;

	memcpy(&p->done, m->data, sizeof(p->done));
	if (p->final || p->done.exit_code < 0 || p->done.exit_code > 3 ||
	    (p->rgb != NULL && p->done.exit_code == 0 &&
	    (p->rgb_got != p->rgb_len || p->done.count != p->rgb_len)))
		return -1;
	p->final = 1;
	return 0;
}

static const struct ipc_handler rw_from_worker_start[] = {
	{ RWM_INFO, p_info },
	{ RWM_REFUSED, p_refused },
};
static const struct ipc_handler rw_from_worker_act[] = {
	{ RWM_PIXELS, p_pixels },
	{ RWM_SERVING, p_serving },
	{ RWM_DONE, p_done },
};

/* Why the worker ended without its final message; EXIT_INTERNAL. */
static int
p_died(struct replay_worker *w, int r)
{
	int st, sig;

	if (r != IPC_OK && r != IPC_EOF) {
		(void)kill(w->pid, SIGKILL);
		fprintf(stderr, "cdsgate: replay worker broke the protocol "
		    "(%s): killed\n", ipc_strerror(r));
	}
	st = ipc_helper_stop(&w->pid, &w->sock);
	if (r == IPC_OK || r == IPC_EOF) {
		if (WIFSIGNALED(st)) {
			sig = WTERMSIG(st);
			fprintf(stderr, "cdsgate: replay worker killed by "
			    "signal %d (SIG%s)%s\n", sig, sigabbrev_np(sig) ?
			    sigabbrev_np(sig) : "?", sig == SIGSYS ?
			    ": seccomp violation" : "");
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
			fprintf(stderr, "cdsgate: replay worker ended without "
			    "an answer\n");
	}
	return EXIT_INTERNAL;
}

/* Dispatch until the final message; its outcome, or p_died's. */
static int
p_collect(struct replay_worker *w, struct rw_cli *p,
    const struct ipc_handler *permit, size_t npermit)
{
	struct ipc_peer wp = { w->sock, "replay worker", &rw_proto, permit,
	    npermit };
	int r = IPC_OK;

	while (!p->final && (r = ipc_dispatch(&wp, p, NULL)) == IPC_OK)
		;
	return p->final ? 0 : p_died(w, r);
}

int
rw_start(struct replay_worker *w, int fd, const char *name)
{
	struct rw_cli p = { .w = w };
	struct rwm_open o;
	char err[256];
	pid_t self = getpid();

	memset(&o, 0, sizeof(o));
	w->pid = w->sock = -1;
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(o.name, sizeof(o.name), "%s", name);
	if (ipc_helper_start(rw_main, &self, &w->pid, &w->sock, err,
	    sizeof(err)) != 0) {
		close(fd);
		fprintf(stderr, "cdsgate: replay worker: %s\n", err);
		return EXIT_INTERNAL;
	}
	(void)ipc_send(w->sock, &rw_proto, RWM_OPEN, &o, sizeof(o), fd);
	close(fd);
	if (p_collect(w, &p, rw_from_worker_start, sizeof(rw_from_worker_start)
	    / sizeof(rw_from_worker_start[0])) != 0)
		return EXIT_INTERNAL;
	if (p.refused) {
		rw_stop(w);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

int
rw_run(struct replay_worker *w, const struct rw_request *q, uint8_t *rgb,
    uint64_t *count, void (*serving)(void *), void *arg)
{
	struct rw_cli p = { .w = w, .serving = serving, .arg = arg };
	struct rwm_act a;

	memset(&a, 0, sizeof(a));
	a.action = q->action;
	a.paused = q->paused != 0;
	a.t_us = q->t_us;
	a.fps = q->fps;
	snprintf(a.text, sizeof(a.text), "%s", q->text != NULL ? q->text : "");
	if (q->action == RW_FRAME) {
		p.rgb = rgb;
		p.rgb_len = (size_t)w->h.width * w->h.height * 3;
	}
	fflush(NULL);
	(void)ipc_send(w->sock, &rw_proto, q->fd >= 0 ? RWM_ACT_FD : RWM_ACT,
	    &a, sizeof(a), q->fd);
	if (q->fd >= 0)
		close(q->fd);	/* the worker's now: ffmpeg sees its EOF */
	explicit_bzero(&a, sizeof(a));
	if (p_collect(w, &p, rw_from_worker_act, sizeof(rw_from_worker_act) /
	    sizeof(rw_from_worker_act[0])) != 0)
		return EXIT_INTERNAL;
	if (count != NULL)
		*count = p.done.count;
	rw_stop(w);
	return p.done.exit_code;
}

void
rw_stop(struct replay_worker *w)
{
	(void)ipc_helper_stop(&w->pid, &w->sock);
}

const char *
replay_fmt_time(uint64_t us, char *buf, size_t len)
{
	uint64_t s = us / 1000000;

	snprintf(buf, len, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64,
	    s / 3600, s / 60 % 60, s % 60, us / 1000 % 1000);
	return buf;
}
