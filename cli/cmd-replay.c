/*
 * cli/cmd-replay.c — `cdsgate replay FILE ...`: the auditor's view of a
 * session recording (record/record.h): --info, a frame as PNG, the key
 * timeline and the typed text, a search in it, the event list as JSON
 * lines, an mp4/webm export through ffmpeg, and a read-only VNC player
 * (cli/replay-serve.c).
 *
 * Runs as the invoking auditor; the recording is untrusted input (it may
 * be damaged or forged) and is read only by the replay worker
 * (cli/replay-worker.c), a confined child this file hands the opened
 * recording and asks for one action.  A recording given by path is
 * looked up in the audit log (audit/lookup.c: the record_closed of its
 * path or session): replay warns when its digest is not the one chained,
 * or that it cannot tell.  A damaged tail is reported on stderr and the
 * intact part is used.
 * ffmpeg is run without a shell; the output name is passed as "file:..."
 * so that it can never be read as an option.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "audit/audit.h"
#include "cli/apiclient.h"
#include "cli/cli.h"
#include "cli/replay-serve.h"
#include "cli/replay-worker.h"
#include "common/digest.h"
#include "record/record.h"
#include "sandbox/confine.h"

#define USAGE_REPLAY	"replay FILE|SESSION-ID [--socket PATH] [--info | --frame TIME -o OUT.png | " \
	"--keys | --search TEXT | --events | --export OUT.mp4|OUT.webm " \
	"[--fps N] | --serve 127.0.0.1:PORT [--password-file F] [--at TIME]] " \
	"[--audit-log LOG]"

struct replay_args {
	const char	*file;		/* a path, or a session id */
	const char	*socket;	/* --socket: the API, for an id */
	const char	*action;	/* "--info", "--frame", ... */
	const char	*value;		/* the action's argument */
	const char	*out;		/* -o */
	const char	*pwfile;	/* --password-file */
	const char	*at;		/* --at */
	const char	*audit_log;	/* --audit-log, for a FILE */
	int		 by_id;		/* file was a session id */
	double		 fps;
};

/* "SS[.f]", "MM:SS[.f]" or "HH:MM:SS[.f]" to microseconds; -1 if bad. */
static int
parse_time(const char *s, uint64_t *us)
{
	double part[3], v;
	char buf[64], *p, *f[3];
	size_t n, i;

	if (strlen(s) >= sizeof(buf) || strchr(s, '-') != NULL)
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (n = 0, p = buf; n < 3 && p != NULL; n++) {
		f[n] = p;
		if ((p = strchr(p, ':')) != NULL)
			*p++ = '\0';
	}
	if (p != NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (cli_parse_number(f[i], &part[i]) != 0 || part[i] < 0 ||
		    strchr(f[i], '%') != NULL ||
		    (i + 1 < n && (part[i] != (uint64_t)part[i])) ||
		    (i > 0 && part[i] >= 60))
			return -1;
	v = n == 1 ? part[0] : n == 2 ? part[0] * 60 + part[1] :
	    part[0] * 3600 + part[1] * 60 + part[2];
	if (v > 1e9)
		return -1;
	*us = (uint64_t)(v * 1e6 + 0.5);
	return 0;
}

static int
replay_parse(int argc, char **argv, struct replay_args *a)
{
	static const char *const acts[] = { "--info", "--keys", "--events",
	    "--frame", "--search", "--export", "--serve", NULL };
	int i, k;

	memset(a, 0, sizeof(*a));
	a->fps = 5;
	for (i = 1; i < argc; i++) {
		for (k = 0; acts[k] != NULL; k++)
			if (strcmp(argv[i], acts[k]) == 0)
				break;
		if (acts[k] != NULL) {
			if (a->action != NULL)
				return cli_usage_error(USAGE_REPLAY,
				    "one action at a time");
			a->action = acts[k];
			if (k >= 3 && (a->value = argv[++i]) == NULL)
				return cli_usage_error(USAGE_REPLAY,
				    "%s needs an argument", acts[k]);
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			a->out = argv[++i];
		else if (strcmp(argv[i], "--password-file") == 0 && i + 1 < argc)
			a->pwfile = argv[++i];
		else if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
			a->at = argv[++i];
		else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
			a->socket = argv[++i];
		else if (strcmp(argv[i], "--audit-log") == 0 && i + 1 < argc)
			a->audit_log = argv[++i];
		else if (strcmp(argv[i], "--fps") == 0 && i + 1 < argc) {
			if (cli_parse_number(argv[++i], &a->fps) != 0 ||
			    a->fps < 0.1 || a->fps > 60)
				return cli_usage_error(USAGE_REPLAY,
				    "--fps must be 0.1 to 60");
		} else if (argv[i][0] != '-' && a->file == NULL)
			a->file = argv[i];
		else
			return cli_usage_error(USAGE_REPLAY,
			    "unexpected argument: %s", argv[i]);
	}
	if (a->file == NULL)
		return cli_usage_error(USAGE_REPLAY, "no recording given");
	if (a->action == NULL)
		a->action = "--info";
	if (strcmp(a->action, "--export") == 0)
		a->out = a->value;
	if (strcmp(a->action, "--frame") == 0 && a->out == NULL)
		return cli_usage_error(USAGE_REPLAY, "--frame needs -o OUT.png");
	return 0;
}

static void
warn_truncated(const char *file, const struct record_info *in)
{
	char t[32];

	if (in->truncated)
		fprintf(stderr, "cdsgate: warning: %s: truncated at offset %"
		    PRIu64 " (time %s): %s\n", file, in->trunc_offset,
		    replay_fmt_time(in->trunc_t_us, t, sizeof(t)), in->trunc_reason);
}

static int
do_info(const struct replay_worker *w, const char *file)
{
	const struct record_header *h = &w->h;
	const struct record_info *in = &w->info;
	time_t start = (time_t)(h->start_unix_us / 1000000);
	char t[32], when[32] = "?", hex[DIGEST_HEX_SIZE] = "?";
	uint8_t d[DIGEST_LEN];
	struct tm tm;

	if (gmtime_r(&start, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("file: %s\nsession: %s\nrecipient: %s\npolicy: %s\n"
	    "started: %s\ngeometry: %ux%u\nduration: %s (%.3f s)\n"
	    "size: %" PRIu64 " bytes\n", file, h->session, h->recipient,
	    h->policy, when, h->width, h->height,
	    replay_fmt_time(in->duration_us, t, sizeof(t)),
	    in->duration_us / 1e6, in->size);
	printf("chunks: %zu (keyframes %zu, deltas %zu, keys %zu, pointer %zu, "
	    "clipboard %zu, events %zu)\nkeyframe interval: %u s\nindex: %s\n",
	    in->chunks, in->keyframes, in->deltas, in->keys, in->pointers,
	    in->clips, in->events, h->keyframe_interval_s,
	    in->indexed ? "yes" : "no");
	if (digest_file(file, d) == DIGEST_OK)
		digest_to_hex(d, hex);
	printf("sha256: %s\n", hex);
	if (in->truncated)
		printf("complete: no, truncated at offset %" PRIu64 " (time %s):"
		    " %s\n", in->trunc_offset, replay_fmt_time(in->trunc_t_us,
		    t, sizeof(t)), in->trunc_reason);
	else
		printf("complete: yes\n");
	return 0;
}

/* --frame: the worker's RGB at TIME, written here as a PNG. */
static int
do_frame(struct replay_worker *w, const struct replay_args *a)
{
	struct rw_request q = { .action = RW_FRAME, .fd = -1 };
	uint8_t *rgb;
	int fd, rc;

	if (parse_time(a->value, &q.t_us) != 0)
		return cli_usage_error(USAGE_REPLAY, "bad TIME '%s' (seconds, "
		    "mm:ss or hh:mm:ss)", a->value);
	if (q.t_us > w->info.duration_us)
		return cli_usage_error(NULL, "%s is after the end of the "
		    "recording (%.3f s)", a->value, w->info.duration_us / 1e6);
	if ((rgb = malloc((size_t)w->h.width * w->h.height * 3)) == NULL)
		return EXIT_INTERNAL;
	if ((rc = rw_run(w, &q, rgb, NULL, NULL, NULL)) != 0) {
		free(rgb);
		return rc;
	}
	fd = open(a->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	rc = fd == -1 ? RECORD_EIO : record_png_write(fd, rgb, w->h.width,
	    w->h.height);
	if (fd != -1 && close(fd) == -1)
		rc = RECORD_EIO;
	free(rgb);
	if (rc != RECORD_OK) {
		fprintf(stderr, "cdsgate: %s: %s\n", a->out, strerror(errno));
		return EXIT_INTERNAL;
	}
	return 0;
}

/* ffmpeg reading raw RGB frames on its stdin; returns its pid. */
static pid_t
spawn_ffmpeg(const struct record_header *h, const struct replay_args *a,
    int *wfd)
{
	const char *ext = strrchr(a->out, '.');
	char size[32], fps[32], out[4096];
	const char *mp4[] = { "-c:v", "libx264", "-preset", "veryfast",
	    "-f", "mp4", NULL };
	const char *webm[] = { "-c:v", "libvpx-vp9", "-deadline", "realtime",
	    "-cpu-used", "8", "-b:v", "0", "-crf", "40", "-f", "webm", NULL };
	const char *argv[48] = { "ffmpeg", "-hide_banner", "-loglevel", "error",
	    "-nostdin", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size,
	    "-framerate", fps, "-i", "pipe:0", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
	    "-pix_fmt", "yuv420p" };
	const char **codec = ext != NULL && strcmp(ext, ".webm") == 0 ? webm :
	    ext != NULL && strcmp(ext, ".mp4") == 0 ? mp4 : NULL;
	size_t n = 20, i;
	int p[2];
	pid_t pid;

	if (codec == NULL || strlen(a->out) + 6 > sizeof(out))
		return cli_usage_error(USAGE_REPLAY, "--export needs a .mp4 "
		    "or .webm file name"), -1;
	snprintf(size, sizeof(size), "%ux%u", h->width, h->height);
	snprintf(fps, sizeof(fps), "%g", a->fps);
	snprintf(out, sizeof(out), "file:%s", a->out);
	for (i = 0; codec[i] != NULL; i++)
		argv[n++] = codec[i];
	argv[n++] = out;
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1)
		return perror("cdsgate: ffmpeg"), -1;
	if (pid == 0) {
		if (dup2(p[0], 0) == -1)
			_exit(127);
		execvp("ffmpeg", (char *const *)argv);
		fprintf(stderr, "cdsgate: cannot run ffmpeg: %s\n",
		    strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* --export: ffmpeg runs here; the worker writes the frames into it. */
static int
do_export(struct replay_worker *w, const struct replay_args *a)
{
	struct rw_request q = { .action = RW_EXPORT, .fps = a->fps };
	uint64_t frames = 0;
	int status, rc;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	if ((pid = spawn_ffmpeg(&w->h, a, &q.fd)) == -1)
		return EXIT_BAD_INPUT;
	rc = rw_run(w, &q, NULL, &frames, NULL, NULL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "cdsgate: export to %s failed\n", a->out);
		return EXIT_INTERNAL;
	}
	printf("%s: %" PRIu64 " frames at %g fps (%.3f s)\n", a->out, frames,
	    a->fps, frames / a->fps);
	return 0;
}

/* A string member of o, or "?". */
static const char *
str_or(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v != NULL ? v : "?";
}

/* Could arg be a session id (A-Z a-z 0-9 . _ -, no slash)? */
static int
looks_like_id(const char *arg)
{
	size_t i, n = strlen(arg);

	if (n == 0 || n >= 64 || arg[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((arg[i] >= 'a' && arg[i] <= 'z') ||
		    (arg[i] >= 'A' && arg[i] <= 'Z') ||
		    (arg[i] >= '0' && arg[i] <= '9') ||
		    strchr("._-", arg[i]) != NULL))
			return 0;
	return 1;
}

/* The file's SHA-256 in hex; -1 when it cannot be read. */
static int
file_sha256_hex(const char *path, char hex[65])
{
	uint8_t d[32];
	int i;

	if (record_file_sha256(path, d) != RECORD_OK)
		return -1;
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

/* The index's word on the file: warn when it is not what was chained. */
static void
check_digest(const char *path, const char *want)
{
	char got[65];

	if (want == NULL || file_sha256_hex(path, got) != 0)
		return;
	if (strcmp(got, want) != 0)
		fprintf(stderr, "cdsgate: warning: %s is not the recording "
		    "whose digest is in the audit log (sha256 %.16s... where "
		    "the chain has %.16s...): replaced or modified\n", path,
		    got, want);
}

/*
 * A recording given by path: find the audit log's record_closed for its
 * digest, or for its name.  Into what: the finding; returns 1 when the
 * log vouches for this very file, else 0.
 */
static int
vouched(const char *file, const char *session, const char *log, int given,
    char *what, size_t len)
{
	struct audit_vouch v;
	char real[PATH_MAX], err[512], got[65];

	if (realpath(file, real) == NULL)
		snprintf(real, sizeof(real), "%s", file);
	if (file_sha256_hex(file, got) != 0)
		return snprintf(what, len, "cannot tell whether it is the "
		    "recording the audit log vouches for: cannot hash it"), 0;
	if (log == NULL || audit_vouch_find(log, real, got, session, &v, err,
	    sizeof(err)) != AUDIT_OK)
		return snprintf(what, len, "cannot tell whether it is the "
		    "recording the audit log vouches for: %s%s", log == NULL ?
		    "no audit log configured" : err, given ? "" :
		    " (give --audit-log LOG)"), 0;
	if (!v.found)
		return snprintf(what, len, "cannot tell whether it is the "
		    "recording the audit log vouches for: %s has no "
		    "record_closed with its sha256 %.16s... or its name", log,
		    got), 0;
	if (!v.same)
		return snprintf(what, len, "not the recording the audit log "
		    "vouches for: %s line %lu (record_closed of session %s) "
		    "has sha256 %.16s... where the file has %.16s...: replaced "
		    "or modified", log, v.line, v.session, v.sha256, got), 0;
	snprintf(what, len, "vouched for by %s line %lu (record_closed of "
	    "session %s, sha256 %.16s...%s); whether the log itself is intact: "
	    "cdsgate audit verify", log, v.line, v.session, v.sha256,
	    v.expired ? "; expired by retention since" : "");
	return 1;
}

/* Say what the audit log says of FILE: on --info always, else only a
 * warning when it does not vouch for it. */
static void
check_vouched(const struct replay_args *a, const char *session, int info)
{
	char what[8192];
	int ok = vouched(a->file, session,
	    a->audit_log != NULL ? a->audit_log : cli_default_audit_log(),
	    a->audit_log != NULL, what, sizeof(what));

	if (info)
		printf("audit log: %s\n", what);
	if (!ok)
		fprintf(stderr, "cdsgate: warning: %s: %s\n", a->file, what);
}

/* --info: the session's dataset and end, from the audit log's
 * session.create and record_closed (the recording does not hold them). */
static void
info_session(const char *session, const struct replay_args *a)
{
	const char *log = a->audit_log != NULL ? a->audit_log :
	    cli_default_audit_log();
	json_t *f = NULL;
	char err[1024];

	if (log == NULL || audit_session_facts(log, session, &f, err,
	    sizeof(err)) != AUDIT_OK) {
		printf("dataset: ? (%s)\n", log == NULL ? "no audit log" : err);
		return;
	}
	printf("dataset: %" JSON_INTEGER_FORMAT " (%s)\ncreated: %s\n"
	    "ended: %s (%s)\n", json_integer_value(json_object_get(f,
	    "dataset")), str_or(f, "dataset_name"), str_or(f, "created"),
	    str_or(f, "ended"), str_or(f, "end"));
	json_decref(f);
}

/*
 * A session id (not an existing file) is resolved through the API
 * (GET /v1/sessions/ID/recording, auditor role) to its recording's path.
 */
static int
replay_resolve(struct replay_args *a, char *path, size_t len)
{
	struct apiclient_reply rep = { 0, NULL };
	char url[256], err[512];
	const char *p, *sha;
	int rc = EXIT_BAD_INPUT, called;

	if (access(a->file, F_OK) == 0 || !looks_like_id(a->file)) {
		snprintf(path, len, "%s", a->file);
		return 0;
	}
	if (apiclient_path(url, sizeof(url), "/v1/sessions/", a->file,
	    "/recording") != 0)
		return cli_usage_error(USAGE_REPLAY, "bad session id");
	called = apiclient_call(a->socket, "GET", url, NULL, &rep, err,
	    sizeof(err));
	if (called != 0 || rep.status != 200)
		return apiclient_finish(called, &rep, err, 0, NULL);
	p = json_string_value(json_object_get(rep.json, "path"));
	sha = json_string_value(json_object_get(rep.json, "sha256"));
	if (p == NULL)
		fprintf(stderr, "cdsgate: the API gave no path for %s\n",
		    a->file);
	else if (json_integer_value(json_object_get(rep.json, "expired")))
		fprintf(stderr, "cdsgate: the recording of %s (%s, sha256 %s) "
		    "was removed by retention\n", a->file, p, sha ? sha : "?");
	else if (snprintf(path, len, "%s", p) < (int)len) {
		check_digest(path, sha);
		a->by_id = 1;
		rc = 0;
	}
	apiclient_reply_free(&rep);
	return rc;
}

/* --serve: the CLI binds the listener and reads the password; the
 * worker serves.  Once it does, the CLI only waits: it loads the replay
 * profile too, and a SIGINT or SIGTERM ends it (the worker dies with
 * it, by its death signal). */
struct serve_ctx {
	const char	*addr;
	const char	*pw;	/* generated: shown */
};

static void
serve_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void
serve_started(void *arg)
{
	const struct serve_ctx *sc = arg;
	struct confine c;
	char err[256];

	signal(SIGINT, serve_stop);
	signal(SIGTERM, serve_stop);
	confine_init(&c, "replay");
	if (replay_confine(&c, err, sizeof(err)) != 0) {
		fprintf(stderr, "cdsgate: replay: cannot confine itself: %s\n",
		    err);
		_exit(EXIT_INTERNAL);
	}
	printf("serving on %s%s%s; keys: Space pause, Left/Right 10 s, "
	    "Down/Up 1 min, Home/End\n", sc->addr, sc->pw != NULL ?
	    ", password: " : "", sc->pw != NULL ? sc->pw : "");
	fflush(stdout);
}

static int
do_serve(struct replay_worker *w, const struct replay_args *a, uint64_t at)
{
	struct rw_request q = { .action = RW_SERVE, .t_us = at,
	    .paused = a->at != NULL };
	struct serve_ctx sc = { a->value, NULL };
	char pw[64];
	int gen, rc;

	if ((q.fd = replay_serve_listen(a->value, a->pwfile, pw, sizeof(pw),
	    &gen)) < 0)
		return -q.fd;
	q.text = pw;
	sc.pw = gen ? pw : NULL;
	rc = rw_run(w, &q, NULL, NULL, serve_started, &sc);
	explicit_bzero(pw, sizeof(pw));
#ifdef __SANITIZE_ADDRESS__
	/* LeakSanitizer's exit check stops the world with clone and
	   ptrace, which the replay filter kills: end without it. */
	fflush(NULL);
	_exit(rc);
#endif
	return rc;
}

/* Actions whose only output is the worker's stdout. */
static enum rw_action
print_action(const char *action)
{
	return strcmp(action, "--keys") == 0 ? RW_KEYS :
	    strcmp(action, "--search") == 0 ? RW_SEARCH :
	    strcmp(action, "--events") == 0 ? RW_EVENTS : 0;
}

/* Open the recording here, read it in the worker (cli/replay-worker.c),
 * check it against the audit log here, then run the action. */
static int
cmd_replay(int argc, char **argv)
{
	struct replay_args a;
	struct replay_worker w;
	struct rw_request q = { .fd = -1 };
	char path[4096];
	uint64_t at = 0;
	int rc, fd;

	if (replay_parse(argc, argv, &a) != 0)
		return EXIT_BAD_INPUT;
	if (a.at != NULL && parse_time(a.at, &at) != 0)
		return cli_usage_error(USAGE_REPLAY, "bad --at TIME '%s'", a.at);
	if (strcmp(a.action, "--search") == 0 && a.value[0] == '\0')
		return cli_usage_error(USAGE_REPLAY, "empty search text");
	if ((rc = replay_resolve(&a, path, sizeof(path))) != 0)
		return rc;
	a.file = path;
	/* O_NONBLOCK: a FIFO must not hang us before the S_ISREG check */
	if ((fd = open(a.file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		fprintf(stderr, "cdsgate: %s: %s (%s: %s)\n", a.file,
		    record_strerror(RECORD_EIO), a.file, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	if ((rc = rw_start(&w, fd, a.file)) != 0)
		return rc;
	if (strcmp(a.action, "--info") != 0)
		warn_truncated(a.file, &w.info);
	if (!a.by_id)
		check_vouched(&a, w.h.session, strcmp(a.action, "--info") == 0);
	if ((q.action = print_action(a.action)) != 0) {
		q.text = a.value;
		rc = rw_run(&w, &q, NULL, NULL, NULL, NULL);
	} else if (strcmp(a.action, "--info") == 0) {
		rw_stop(&w);
		if ((rc = do_info(&w, a.file)) == 0)
			info_session(w.h.session, &a);
	} else if (strcmp(a.action, "--frame") == 0)
		rc = do_frame(&w, &a);
	else if (strcmp(a.action, "--serve") == 0)
		rc = do_serve(&w, &a, at);
	else
		rc = do_export(&w, &a);
	if (w.pid > 0)
		rw_stop(&w);
	return rc;
}

const struct cmd_entry cmd_replay_entry = {
	"replay", NULL, USAGE_REPLAY,
	"replay a session recording (frames, keys, search, events, export); "
	"a FILE is checked against the audit log",
	cmd_replay
};
