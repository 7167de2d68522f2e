/*
 * control/parent-record.c — the root parent's side of the session
 * recordings: the digest of each finished recording goes to the api
 * (which chains it into the audit log as record_closed), the free-space
 * check before a start, and retention (oldest closed recordings removed
 * by size and age, each only after the api audited record_expired).
 *
 * Root.  Trust: the recordings were written by an unprivileged worker
 * and are read as untrusted (record/seal.c); the api's answers are
 * typed IPC, checked here (a file we did not ask about is fatal).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/digest.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "record/record.h"

#define RETENTION_EVERY_MS	10000	/* a scan at most this often */
#define RETENTION_SCAN_MAX	4096	/* files looked at per scan */
#define RECORD_ID_MAX		STORE_ID_MAX	/* the stem of <id>.cdsrec */

/* "<record_dir>/<id>.cdsrec": where the supervisor of id records. */
static int
record_path(const struct parent *p, const char *id, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.cdsrec", p->cfg.record_dir, id);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The auditors' group (auditor_group), or (gid_t)-1 when it is missing:
 * then recordings stay root's alone (auditors need root to read them). */
static gid_t
auditor_gid(const struct gw_config *c)
{
	struct group *g = getgrnam(c->auditor_group);

	return g != NULL && g->gr_gid != 0 ? g->gr_gid : (gid_t)-1;
}

/* path readable by group gid with mode, unless it is so already (the
 * daemon's unit holds no CAP_CHOWN/CAP_FOWNER: the session helper, or
 * the operator, made it so).  A failure only costs auditors their
 * access: said, not fatal. */
static void
share(const char *path, gid_t gid, mode_t mode, const char *what)
{
	struct stat st;

	if (lstat(path, &st) != 0 || (st.st_gid == gid &&
	    (st.st_mode & 07777) == mode))
		return;
	if (record_share(path, gid, mode) != 0)
		log_warn("%s %s: cannot make it mode %04o, group %u "
		    "(auditors then need root to read it)", what, path,
		    (unsigned)mode, (unsigned)gid);
}

/* The audit log's directory (when it is the key holder's) setgid to the
 * auditors' group, so the log and each new head file are theirs to
 * read (0640); the signing key in it stays 0600. */
static void
audit_dir_share(const struct gw_config *c, gid_t gid)
{
	char dir[CONFIG_STR_MAX], *slash, head[CONFIG_STR_MAX + 8];
	struct passwd *pw = getpwnam(PRIVDROP_AUDIT_USER);
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", c->audit_log);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return;
	*slash = '\0';
	if (pw == NULL || lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != pw->pw_uid)
		return;		/* not a directory of the key holder's */
	snprintf(head, sizeof(head), "%s.head", c->audit_log);
	share(dir, gid, 02750, "audit_log's directory");
	share(c->audit_log, gid, 0640, "audit_log");
	share(head, gid, 0640, "audit_log's head file");
}

/* record_dir exists before any session: 0750 root, group auditor_group
 * (0700 without that group); the audit log readable by that group too. */
int
parent_record_dir(const struct gw_config *c)
{
	gid_t gid = auditor_gid(c);

	if (record_dir_make(c->record_dir) != 0) {
		log_warn("record_dir %s", c->record_dir);
		return -1;
	}
	if (gid == (gid_t)-1) {
		log_warnx("no group %s: recordings and the audit log "
		    "are readable by root only", c->auditor_group);
		return 0;
	}
	share(c->record_dir, gid, 0750, "record_dir");
	audit_dir_share(c, gid);
	return 0;
}

/* Before a start: is there room to record it?  why gets the reason. */
int
parent_record_room(const struct parent *p, char *why, size_t len)
{
	return record_dir_has_room(p->cfg.record_dir,
	    p->cfg.record_min_free_mb, why, len);
}

/* How a session ended, for record_closed's "end". */
static const char *
end_word(const struct psession *ps, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == SESSION_EXIT_DISK_FULL)
		return "disk_full";
	if (WIFEXITED(status) && WEXITSTATUS(status) == SESSION_EXIT_MEMORY)
		return "memory_limit";
	if (ps->stopping)
		return "revoked";
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return "ended";
	return "failed";
}

/* rec with its ".cdsrec" replaced by ext, into f; -1 if it won't fit. */
static int
companion_path(const char *rec, const char *ext, char *f, size_t len)
{
	size_t n = strlen(rec);

	if (n < 7 || n - 7 + strlen(ext) >= len)
		return -1;
	memcpy(f, rec, n - 7);
	memcpy(f + n - 7, ext, strlen(ext) + 1);
	return 0;
}

/* The digest of the file beside rec, if there is one. */
static void
companion(const char *rec, const char *ext, struct pipc_companion *c)
{
	char f[STORE_PATH_MAX];

	if (companion_path(rec, ext, f, sizeof(f)) == 0 &&
	    digest_file_hex(f, c->sha256) == DIGEST_OK)
		snprintf(c->file, sizeof(c->file), "%s", f);
	else
		c->sha256[0] = '\0';
}

/* The network log and capture go with their recording (record_expired
 * named their digests). */
static void
companions_remove(const char *rec)
{
	static const char *const ext[] = { ".network.jsonl", ".pcapng" };
	char f[STORE_PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (companion_path(rec, ext[i], f, sizeof(f)) == 0 &&
		    unlink(f) != 0 && errno != ENOENT)
			log_warn("retention: %s", f);
}

/* Seal path and fill a RECORD_CLOSED / RECORD_EXPIRE message. */
static int
record_msg(const char *id, const char *path, const char *end,
    struct pipc_record *m)
{
	struct record_seal rs;
	char err[256];

	memset(m, 0, sizeof(*m));
	if (record_seal(path, &rs, err, sizeof(err)) != RECORD_OK)
		return -1;
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->file, sizeof(m->file), "%s", path);
	snprintf(m->sha256, sizeof(m->sha256), "%s", rs.sha256);
	m->size = rs.size;
	m->frames = rs.frames;
	m->duration_us = rs.duration_us;
	m->truncated = rs.truncated;
	snprintf(m->end, sizeof(m->end), "%s", end);
	companion(path, ".network.jsonl", &m->net);
	companion(path, ".pcapng", &m->cap);
	return 0;
}

/* Is e a regular file "<session id>.cdsrec"?  0 with its id and stat;
 * other names (the api would refuse them as ids) are left alone. */
static int
record_entry(DIR *d, const struct dirent *e, char id[RECORD_ID_MAX],
    struct stat *st)
{
	size_t l = strlen(e->d_name);

	if (l <= 7 || l - 7 >= RECORD_ID_MAX ||
	    strcmp(e->d_name + l - 7, ".cdsrec") != 0)
		return -1;
	memcpy(id, e->d_name, l - 7);
	id[l - 7] = '\0';
	if (!store_id_valid(id) || fstatat(dirfd(d), e->d_name, st,
	    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st->st_mode))
		return -1;
	return 0;
}

/* A chained file: 0440, group auditor_group (0400 without that group). */
static void
record_file_share(const struct parent *p, const char *f)
{
	gid_t gid = auditor_gid(&p->cfg);

	if (f[0] != '\0' && (gid == (gid_t)-1 ? chmod(f, 0400) :
	    record_share(f, gid, 0440)) != 0)
		log_warn("chmod %s", f);
}

/* RECORD_CLOSED to the api; once it is sent the file and its companions
 * become 0440 group auditor_group (auditors read them without root), the
 * mark that their digests went to the chain (parent_record_recover). */
static int
record_send_closed(struct parent *p, const struct pipc_record *m)
{
	if (p->ipc < 0 || ipc_send(p->ipc, &pipc_proto, PIPC_RECORD_CLOSED,
	    m, sizeof(*m), -1) != IPC_OK)
		return -1;
	record_file_share(p, m->file);
	record_file_share(p, m->net.file);
	record_file_share(p, m->cap.file);
	return 0;
}

/* Session id's recording in record_dir is finished: its digest goes to
 * the api, with end (parent.h says what the result means). */
int
parent_record_chain(struct parent *p, const char *id, const char *end,
    struct pipc_record *sent)
{
	struct pipc_record m;
	char path[STORE_PATH_MAX];

	if (record_path(p, id, path, sizeof(path)) != 0 ||
	    access(path, F_OK) != 0)
		return -1;	/* never made, or removed: nothing ran */
	if (record_msg(id, path, end, &m) != 0) {
		log_warnx("session %s: cannot read its recording %s", id,
		    path);
		return -1;
	}
	if (record_send_closed(p, &m) != 0)
		return 1;	/* still 0600: parent_record_recover's */
	p->retention_due = 1;
	if (sent != NULL)
		*sent = m;
	return 0;
}

/* A supervisor was reaped: its recording's digest goes to the api. */
void
parent_record_closed(struct parent *p, const struct psession *ps,
    int status)
{
	parent_record_chain(p, ps->id, end_word(ps, status), NULL);
}

static int	record_busy(const struct parent *, const char *);

/* Is some process still writing it?  The supervisor holds an flock on
 * every recording it opens until its worker is gone (session.c), so a
 * session of another daemon or a standalone run-session sharing the
 * directory is never chained half-written or expired. */
static int
record_in_use(const char *path)
{
	int fd, busy;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 1;	/* cannot tell: leave it alone */
	busy = flock(fd, LOCK_SH | LOCK_NB) != 0;
	close(fd);
	return busy;
}

/*
 * Recordings whose digest never reached the api (it was gone when their
 * sessions ended): still mode 0600.  Sent once at start-up, end
 * "recovered"; the api skips any its index already has with that digest.
 */
void
parent_record_recover(struct parent *p)
{
	DIR *d = opendir(p->cfg.record_dir);
	struct dirent *e;
	struct pipc_record m;
	struct stat st;
	char id[RECORD_ID_MAX], path[STORE_PATH_MAX];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (record_entry(d, e, id, &st) != 0 ||
		    (st.st_mode & 0777) != 0600 || record_busy(p, id) ||
		    record_path(p, id, path, sizeof(path)) != 0 ||
		    record_in_use(path) ||
		    record_msg(id, path, "recovered", &m) != 0)
			continue;
		log_info("%s was never chained: sending its digest", path);
		if (record_send_closed(p, &m) == 0)
			parent_copy_recovered(p, &m);
	}
	closedir(d);
}

/* ---- retention ---- */

struct rfile {
	char	name[80];	/* <id>.cdsrec */
	time_t	mtime;
	off_t	size;
};

static int
rfile_older(const void *a, const void *b)
{
	const struct rfile *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Is this recording off limits: running, or refused by the api? */
static int
record_busy(const struct parent *p, const char *id)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid > 0 && strcmp(p->s[i].id, id) == 0)
			return 1;
	for (i = 0; i < p->nkept; i++)
		if (strcmp(p->kept[i], id) == 0)
			return 1;
	return 0;
}

/* The closed recordings in record_dir (not running, not refused). */
static size_t
record_list(const struct parent *p, struct rfile *f, size_t max,
    uint64_t *total)
{
	DIR *d = opendir(p->cfg.record_dir);
	struct dirent *e;
	struct stat st;
	char id[RECORD_ID_MAX], path[STORE_PATH_MAX];
	size_t n = 0;

	*total = 0;
	if (d == NULL)
		return 0;
	while (n < max && (e = readdir(d)) != NULL) {
		if (record_entry(d, e, id, &st) != 0)
			continue;
		*total += (uint64_t)st.st_size;
		if (record_busy(p, id) ||
		    record_path(p, id, path, sizeof(path)) != 0 ||
		    record_in_use(path))
			continue;
		snprintf(f[n].name, sizeof(f[n].name), "%s.cdsrec", id);
		f[n].mtime = st.st_mtime;
		f[n++].size = st.st_size;
	}
	closedir(d);
	qsort(f, n, sizeof(*f), rfile_older);
	return n;
}

/* Ask the api to audit the expiry of one recording (one at a time). */
static void
expire_ask(struct parent *p, const struct rfile *f, const char *why)
{
	struct pipc_record m;
	char path[STORE_PATH_MAX], id[80];

	snprintf(id, sizeof(id), "%.*s", (int)(strlen(f->name) - 7), f->name);
	if (record_path(p, id, path, sizeof(path)) != 0 ||
	    record_msg(id, path, why, &m) != 0 ||
	    ipc_send(p->ipc, &pipc_proto, PIPC_RECORD_EXPIRE, &m, sizeof(m),
	    -1) != IPC_OK)
		return;
	snprintf(p->expiring, sizeof(p->expiring), "%s", path);
	snprintf(p->expiring_id, sizeof(p->expiring_id), "%s", id);
}

/* The oldest closed recording over the age or size limit, if any. */
void
parent_retention(struct parent *p)
{
	static struct rfile f[RETENTION_SCAN_MAX];
	int64_t now = parent_now_ms();
	uint64_t total, maxb = p->cfg.retention_max_bytes;
	time_t t = time(NULL);
	long age = (long)p->cfg.retention_max_age_days * 86400;
	size_t n, i;

	if ((maxb == 0 && age == 0) || p->expiring[0] != '\0' || p->ipc < 0 ||
	    (!p->retention_due && now < p->retention_next_ms))
		return;
	p->retention_due = 0;
	p->retention_next_ms = now + RETENTION_EVERY_MS;
	n = record_list(p, f, RETENTION_SCAN_MAX, &total);
	for (i = 0; i < n; i++) {
		if (age > 0 && t - f[i].mtime > age) {
			expire_ask(p, &f[i], "age");
			return;
		}
		if (maxb > 0 && total > maxb) {
			expire_ask(p, &f[i], "size");
			return;
		}
	}
}

/* RECORD_EXPIRED: the api audited it (remove it) or refused (keep it). */
int
parent_record_expired(struct parent *p, const struct pipc_expired *m)
{
	char file[STORE_PATH_MAX];

	if (ipc_str_get(file, sizeof(file), m->file, sizeof(m->file)) != 0 ||
	    p->expiring[0] == '\0' || strcmp(file, p->expiring) != 0)
		return -1;	/* not what we asked: a protocol violation */
	if (m->ok == 1 && !record_busy(p, p->expiring_id)) {
		if (unlink(file) != 0)
			log_warn("retention: %s", file);
		else
			log_info("retention: removed %s", file);
		companions_remove(file);
		p->retention_due = 1;
	} else if (p->nkept < PARENT_KEPT_MAX) {
		log_warnx("retention: the api keeps %s (its digest is "
		    "not in the audit chain, or the file changed)", file);
		snprintf(p->kept[p->nkept++], sizeof(p->kept[0]), "%s",
		    p->expiring_id);
		p->retention_due = 1;	/* the next one, now */
	}
	p->expiring[0] = '\0';
	p->expiring_id[0] = '\0';
	return 0;
}
