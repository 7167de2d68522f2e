/*
 * supervisor/evidence.c — the session's evidence files (see evidence.h).
 * Root, in the supervisor, before any child exists; the paths come from
 * the spec (checked by policy/spec.c) and the session id we made.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "supervisor/evidence.h"
#include "supervisor/rundir.h"
#include "supervisor/session.h"		/* and supervise-log.h */
#include "gateway/slog.h"
#include "record/record.h"

void
evidence_init(struct evidence *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->record_fd = ev->lock_fd = ev->netlog_fd = ev->pcap_fd = -1;
}

/* The file stem: the name serve passes (the api's id), else ours. */
static const char *
evidence_stem(const struct session_spec *sp, const char *id)
{
	return sp->record_name != NULL ? sp->record_name : id;
}

/* <record dir>/<stem>.<ext>, O_EXCL, 0600 root, for the forwarder; logged
 * as `event`.  The fd, or -1 (logged: the session does not start). */
static int
companion_open(const struct session_spec *sp, const char *id,
    const char *ext, const char *event, char path[PATH_MAX])
{
	char name[96];		/* record_name is at most 64 */
	int fd = -1;

	snprintf(name, sizeof(name), "%s.%s", evidence_stem(sp, id), ext);
	if (path_join(path, sp->record_dir, name) != 0 || (fd = open(path,
	    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
	    0600)) < 0) {
		log_warn("cannot create %s in %s", name, sp->record_dir);
		slog_event("record_failed", json_pack("{s:s, s:s}", "dir",
		    sp->record_dir, "error", strerror(errno)));
		path[0] = '\0';
		return -1;
	}
	slog_event(event, json_pack("{s:s}", "file", path));
	return fd;
}

/* Fail closed before anything is made when the disk is (nearly) full. */
static int
record_room(const struct session_spec *sp)
{
	char why[PATH_MAX + 100];

	if (record_dir_make(sp->record_dir) != 0 || record_dir_has_room(
	    sp->record_dir, sp->record_min_free_mb, why, sizeof(why)))
		return 0;	/* a dir we cannot make fails just below */
	log_warnx("%s (a session that cannot be recorded does not start)",
	    why);
	slog_event("disk_full", json_pack("{s:s, s:s}", "dir", sp->record_dir,
	    "error", why));
	return SESSION_EXIT_DISK_FULL;
}

/*
 * The recording: the worker inherits the open fd (it can never open a
 * file itself).  Its flock (on the open file, kept by a dup until we
 * exit) tells parents sharing the directory to leave it alone.
 */
static int
record_open(struct evidence *ev, const struct session_spec *sp,
    const char *id)
{
	char name[80];

	snprintf(name, sizeof(name), "%s.cdsrec", evidence_stem(sp, id));
	if (record_dir_make(sp->record_dir) != 0 ||
	    path_join(ev->record_path, sp->record_dir, name) != 0 ||
	    (ev->record_fd = open(ev->record_path, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		log_warn("cannot create the session recording in %s "
		    "(a session that cannot be recorded does not start)",
		    sp->record_dir);
		ev->record_path[0] = '\0';	/* not ours to seal */
		slog_event("record_failed", json_pack("{s:s, s:s}", "dir",
		    sp->record_dir, "error", strerror(errno)));
		return SESSION_EXIT_CONFIG;
	}
	if (flock(ev->record_fd, LOCK_EX | LOCK_NB) != 0 ||
	    (ev->lock_fd = fcntl(ev->record_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		log_warn("cannot lock %s (a session that cannot be recorded "
		    "does not start)", ev->record_path);
		return SESSION_EXIT_CONFIG;
	}
	slog_event("record_open", json_pack("{s:s}", "file", ev->record_path));
	return 0;
}

int
evidence_open(struct evidence *ev, const struct session_spec *sp,
    const char *id)
{
	int r;

	if ((r = record_room(sp)) != 0 || (r = record_open(ev, sp, id)) != 0)
		return r;
	if ((ev->netlog_fd = companion_open(sp, id, "network.jsonl",
	    "netlog_open", ev->netlog_path)) < 0)
		return SESSION_EXIT_CONFIG;
	if (sp->network_capture != NULL &&
	    strcmp(sp->network_capture, "pcapng") == 0 &&
	    (ev->pcap_fd = companion_open(sp, id, "pcapng", "capture_open",
	    ev->pcap_path)) < 0)
		return SESSION_EXIT_CONFIG;
	return 0;
}

void
evidence_worker_has(struct evidence *ev)
{
	if (ev->record_fd >= 0)
		close(ev->record_fd);
	ev->record_fd = -1;
}

void
evidence_forwarder_has(struct evidence *ev)
{
	if (ev->netlog_fd >= 0)
		close(ev->netlog_fd);
	if (ev->pcap_fd >= 0)
		close(ev->pcap_fd);
	ev->netlog_fd = ev->pcap_fd = -1;
}

/* The worker logs record_closed when it closed its recording; when it
 * could not (killed, disk full), we do, from the file: the digest of
 * what is there, and that it is cut short. */
static void
record_seal_log(const struct evidence *ev, const char *stop_reason)
{
	struct record_seal rs;
	char err[256];

	if (ev->record_path[0] == '\0' || record_seal(ev->record_path, &rs,
	    err, sizeof(err)) != RECORD_OK || !rs.truncated)
		return;
	slog_event("record_closed", json_pack("{s:s, s:s, s:I, s:I, s:I, "
	    "s:b, s:s, s:s}", "file", ev->record_path, "sha256", rs.sha256,
	    "size", (json_int_t)rs.size, "frames", (json_int_t)rs.frames,
	    "duration_us", (json_int_t)rs.duration_us, "truncated", 1,
	    "reason", rs.reason, "end", stop_reason != NULL ? stop_reason :
	    ""));
}

void
evidence_close(struct evidence *ev, const char *stop_reason)
{
	if (ev->record_fd >= 0) {	/* no worker ever had it */
		unlink(ev->record_path);
		evidence_worker_has(ev);
		ev->record_path[0] = '\0';
	}
	if (ev->netlog_fd >= 0)		/* no forwarder ever had them */
		unlink(ev->netlog_path);
	if (ev->pcap_fd >= 0)
		unlink(ev->pcap_path);
	evidence_forwarder_has(ev);
	record_seal_log(ev, stop_reason);
}

void
evidence_free(struct evidence *ev)
{
	evidence_worker_has(ev);
	evidence_forwarder_has(ev);
	if (ev->lock_fd >= 0)
		close(ev->lock_fd);
	ev->lock_fd = -1;
}
