/*
 * tests/unit/test-slurm.c — the Slurm runner's library parts: running a
 * command bounded in and out (control/cmdrun.c), the session text a node
 * gets and its reader (control/slurm.c), ADDR:PORT (control/munge.c),
 * and a node's removal of its own copies of a session's evidence once
 * the control plane's are chained (control/evidence.c): only regular
 * files, never through a symlink, each byte for byte the chained copy,
 * all or none; and the control plane's side of it (control/
 * parent-copies.c): "remove" only once the api said the copy is
 * chained, to the node it ran on.  MUNGE itself and Slurm run in
 * tests/regress/087-slurm.sh.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/digest.h"
#include "control/cmdrun.h"
#include "control/evidence.h"
#include "control/munge.h"
#include "control/parent.h"
#include "control/slurm.h"
#include "tests/tap.h"

static struct cmdrun r;

static void
test_cmdrun(void)
{
	char *cat[] = { "/bin/cat", NULL };
	char *fail[] = { "/bin/sh", "-c", "echo oops >&2; exit 3", NULL };
	char *big[] = { "/bin/sh", "-c", "head -c 20000 /dev/zero | tr '\\0' a",
	    NULL };
	char *slow[] = { "/bin/sleep", "5", NULL };
	char *none[] = { "/nonexistent/sbatch", NULL };
	struct timespec a, b;
	long ms;

	tap_ok(cmdrun(&r, cat, NULL, "hello\n", 6, 5000) == 0 &&
	    strcmp(r.out, "hello\n") == 0 && r.outlen == 6,
	    "cmdrun: stdin reaches the command, its stdout comes back");
	cmdrun(&r, fail, NULL, NULL, 0, 5000);
	tap_ok(r.status == 3 && strcmp(r.err, "oops\n") == 0,
	    "cmdrun: exit status %d and stderr \"%.4s\"", r.status, r.err);
	tap_ok(cmdrun(&r, big, NULL, NULL, 0, 5000) == 0 &&
	    r.outlen == CMDRUN_OUT_MAX - 1 && strlen(r.out) == r.outlen,
	    "cmdrun: 20000 bytes of output are cut at %d, terminated, and "
	    "the command still ends well", CMDRUN_OUT_MAX - 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	cmdrun(&r, slow, NULL, NULL, 0, 200);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	tap_ok(r.status == -1 && strstr(r.err, "no answer in 200 ms") != NULL &&
	    ms < 2000, "cmdrun: a command past its time is killed (%ld ms; "
	    "%s)", ms, r.err);
	cmdrun(&r, none, NULL, NULL, 0, 5000);
	tap_ok(r.status == 127 && strstr(r.err, "/nonexistent/sbatch") != NULL,
	    "cmdrun: a command that cannot be run says so (%s)", r.err);
}

static void
test_spec(void)
{
	struct pipc_start m, back;
	char text[SLURM_TEXT_MAX];

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "s-abcdefgh12345678");
	snprintf(m.recipient, sizeof(m.recipient), "alice");
	snprintf(m.secret, sizeof(m.secret), "s3cret-Xy");
	m.expires = 1795800000;
	m.memory_limit_mb = 1024;
	m.dataset = 7;
	tap_ok(slurm_spec_text(&m, text, sizeof(text)) == 0 &&
	    slurm_spec_parse(text, &back) == 0 &&
	    memcmp(&m, &back, sizeof(m)) == 0,
	    "the session's text reads back field for field (no PostgreSQL "
	    "role: empty both ways)");
	snprintf(m.pg_role, sizeof(m.pg_role), "cdsgate_s_abc");
	snprintf(m.pg_password, sizeof(m.pg_password), "pw-1");
	tap_ok(slurm_spec_text(&m, text, sizeof(text)) == 0 &&
	    slurm_spec_parse(text, &back) == 0 &&
	    strcmp(back.pg_role, "cdsgate_s_abc") == 0 &&
	    strcmp(back.pg_password, "pw-1") == 0,
	    "with a PostgreSQL role too");
	tap_ok(slurm_spec_text(&m, text, 40) == -1,
	    "a buffer too small is an error, not a cut text");
	tap_ok(slurm_spec_parse("id s-1\nrecipient a\nexpires 1\nmemory 1\n"
	    "dataset 1\npg_role -\npg_password -\n", &back) == -1,
	    "a text without the secret is refused");
	memset(text, 'x', 200);
	memcpy(text, "id ", 3);
	snprintf(text + 200, sizeof(text) - 200, "\nrecipient a\nexpires 1\n"
	    "secret 12345678\nmemory 1\ndataset 1\npg_role -\npg_password -\n");
	tap_ok(slurm_spec_parse(text, &back) == -1,
	    "an id longer than its field is refused, not cut");
	tap_ok(slurm_spec_parse("recipient a\nid \nsecret x\n", &back) == -1,
	    "an empty value is refused");
}

static void
test_resolve(void)
{
	struct addrinfo *ai;

	tap_ok((ai = munge_resolve("10.0.0.1:7010", 0)) != NULL &&
	    ai->ai_family == AF_INET, "10.0.0.1:7010 resolves (IPv4)");
	if (ai != NULL)
		freeaddrinfo(ai);
	tap_ok((ai = munge_resolve("[::1]:7010", 1)) != NULL &&
	    ai->ai_family == AF_INET6, "[::1]:7010 resolves (IPv6)");
	if (ai != NULL)
		freeaddrinfo(ai);
	tap_ok(munge_resolve("localhost:7010", 0) == NULL &&
	    munge_resolve("10.0.0.1", 0) == NULL &&
	    munge_resolve("10.0.0.1:ssh", 0) == NULL,
	    "names, a missing port, a service name: refused (numeric only)");
}

/* dir/name with text in it ("" makes it empty). */
static void
put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((f = fopen(p, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int
there(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

static void
test_copies(void)
{
	static struct gw_config c;
	char want[EVIDENCE_FILES][72], got[EVIDENCE_FILES][72], why[256];
	char dir[] = "/tmp/cdsgate-copies-XXXXXX", outside[512], p[512];
	int mask = -1, rc;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(c.record_dir, sizeof(c.record_dir), "%s", dir);
	put(dir, "s-a.cdsrec", "recording");
	put(dir, "s-a.network.jsonl", "net");
	digest_buf_hex("recording", 9, want[0]);
	digest_buf_hex("net", 3, want[1]);
	snprintf(want[2], sizeof(want[2]), "-");
	put(dir, "s-b.cdsrec", "recording");
	rc = evidence_copies_remove(&c, "s-a", want, &mask, got, why,
	    sizeof(why));
	tap_ok(rc == 0 && mask == 3 && !there(dir, "s-a.cdsrec") &&
	    !there(dir, "s-a.network.jsonl") && strcmp(got[0], want[0]) == 0 &&
	    there(dir, "s-b.cdsrec"), "copies that are the chained ones go "
	    "(mask %d), with their digests; another session's stay", mask);

	put(dir, "s-c.cdsrec", "recording");
	put(dir, "s-c.network.jsonl", "net, and more than was chained");
	tap_ok(evidence_copies_remove(&c, "s-c", want, &mask, got, why,
	    sizeof(why)) == -1 && mask == 0 && there(dir, "s-c.cdsrec") &&
	    there(dir, "s-c.network.jsonl") && strstr(why,
	    "s-c.network.jsonl is not the chained copy") != NULL,
	    "one file not the chained copy: none goes (%s)", why);

	put(dir, "s-d.cdsrec", "recording");
	put(dir, "s-d.pcapng", "a capture the control plane does not hold");
	tap_ok(evidence_copies_remove(&c, "s-d", want, &mask, got, why,
	    sizeof(why)) == -1 && there(dir, "s-d.cdsrec") && there(dir,
	    "s-d.pcapng"), "a file the control plane holds no copy of: "
	    "kept, and the rest with it (%s)", why);
	put(dir, "s-e.cdsrec", "recording");
	put(dir, "s-e.pcapng", "");
	rc = evidence_copies_remove(&c, "s-e", want, &mask, got, why,
	    sizeof(why));
	tap_ok(rc == 0 && mask == 5 && !there(dir, "s-e.pcapng"),
	    "an empty one where it holds none goes (mask %d)", mask);

	snprintf(outside, sizeof(outside), "%s-outside", dir);
	put("/", outside + 1, "recording");
	snprintf(p, sizeof(p), "%s/s-f.cdsrec", dir);
	tap_ok(symlink(outside, p) == 0 && evidence_copies_remove(&c, "s-f",
	    want, &mask, got, why, sizeof(why)) == -1 && mask == 0 &&
	    there(dir, "s-f.cdsrec") && access(outside, F_OK) == 0 &&
	    strstr(why, "a symlink") != NULL, "a symlink is never followed "
	    "(its target is the chained bytes): kept, and its target (%s)",
	    why);
	tap_ok(evidence_copies_remove(&c, "../x", want, &mask, got, why,
	    sizeof(why)) == -1, "a session id with a slash is refused");
	unlink(p);
	unlink(outside);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	tap_ok(system(p) == 0, "clean up");
}

/* The control plane's answer to node's request what about job. */
static int
ask(struct parent *p, int what, int64_t job, const char *node, int mask,
    char *text, size_t len)
{
	struct sl_node n;

	memset(&n, 0, sizeof(n));
	n.what = what;
	n.job = job;
	n.status = mask;
	snprintf(n.node, sizeof(n.node), "%s", node);
	return what == SLN_COPIES ? parent_copy_ask(p, &n, text, len) :
	    parent_copy_removed(p, &n, text, len);
}

/* What RECORD_CLOSED says of session id: /rec/<id>.cdsrec, a recording
 * and a network log, no capture. */
static void
record_of(struct pipc_record *m, const char *id)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->file, sizeof(m->file), "/rec/%s.cdsrec", id);
	snprintf(m->sha256, sizeof(m->sha256), "%064d", 1);
	snprintf(m->net.sha256, sizeof(m->net.sha256), "%064d", 2);
}

static void
test_handover(void)
{
	static struct parent p;
	struct pipc_record m;
	char t[320];

	p.ipc = -1;
	record_of(&m, "s-a");
	parent_copy_begin(&p, "s-a", 7, "node1", 1);
	tap_ok(ask(&p, SLN_COPIES, 7, "node1", 0, t, sizeof(t)) == 1 &&
	    strcmp(t, "wait") == 0, "closing: wait (%s)", t);
	tap_ok(ask(&p, SLN_COPIES, 7, "node2", 0, t, sizeof(t)) == 0 &&
	    ask(&p, SLN_COPIES, 8, "node1", 0, t, sizeof(t)) == 0,
	    "another node, another job: refused (%s)", t);
	parent_copy_sent(&p, "s-a", 0, &m);
	parent_copy_chained(&p, "/rec/other.cdsrec", 1);
	tap_ok(ask(&p, SLN_COPIES, 7, "node1", 0, t, sizeof(t)) == 1 &&
	    strcmp(t, "wait") == 0, "sealed, sent, another file chained: "
	    "still wait");
	tap_ok(ask(&p, SLN_REMOVED, 7, "node1", 1, t, sizeof(t)) == 0,
	    "\"removed\" before it was to be: refused (%s)", t);
	parent_copy_chained(&p, "/rec/s-a.cdsrec", 1);
	tap_ok(ask(&p, SLN_COPIES, 7, "node1", 0, t, sizeof(t)) == 1 &&
	    strncmp(t, "remove 0000", 11) == 0 && strstr(t, "0002 -") !=
	    NULL, "chained: remove, the recording's and network log's "
	    "digests, no capture (%.30s...)", t);
	tap_ok(ask(&p, SLN_REMOVED, 7, "node1", 3, t, sizeof(t)) == 1 &&
	    ask(&p, SLN_COPIES, 7, "node1", 0, t, sizeof(t)) == 0,
	    "\"removed\" is taken once, then the job is forgotten");

	parent_copy_begin(&p, "s-b", 9, "node1", 1);
	parent_copy_sent(&p, "s-b", 0, &m);
	parent_copy_chained(&p, "/rec/s-a.cdsrec", 0);
	tap_ok(ask(&p, SLN_COPIES, 9, "node1", 0, t, sizeof(t)) == 1 &&
	    strstr(t, "keep its record_closed is not in the audit chain") ==
	    t, "the api could not chain it: keep, and why (%s)", t);
	parent_copy_begin(&p, "s-c", 10, "node1", 1);
	parent_copy_sent(&p, "s-c", -1, NULL);
	parent_copy_begin(&p, "s-d", 11, "node1", 0);
	tap_ok(ask(&p, SLN_COPIES, 10, "node1", 0, t, sizeof(t)) == 1 &&
	    strncmp(t, "keep the control plane holds no recording", 41) == 0 &&
	    ask(&p, SLN_COPIES, 11, "node1", 0, t, sizeof(t)) == 1 &&
	    strncmp(t, "keep the control plane's evidence receiver is gone",
	    50) == 0, "no control copy, no receiver: keep (%s)", t);
}

/* A copy closed while no api was connected waits for the next api's
 * recovery; one whose EV_CLOSED comes after that recovery is chained
 * once, by it. */
static void
test_handover_recovered(void)
{
	static struct parent p;
	struct pipc_record m;
	char t[320];

	p.ipc = -1;
	parent_copy_begin(&p, "s-e", 12, "node1", 1);
	parent_copy_begin(&p, "s-f", 13, "node2", 1);
	tap_ok(parent_copies_closing(&p) == 2, "two copies closing");
	parent_copy_sent(&p, "s-e", 1, NULL);
	tap_ok(parent_copies_closing(&p) == 1 &&
	    ask(&p, SLN_COPIES, 12, "node1", 0, t, sizeof(t)) == 1 &&
	    strcmp(t, "wait") == 0, "closed with no api connected: wait "
	    "(%s)", t);
	record_of(&m, "s-e");
	parent_copy_recovered(&p, &m);
	parent_copy_chained(&p, "/rec/s-e.cdsrec", 1);
	tap_ok(ask(&p, SLN_COPIES, 12, "node1", 0, t, sizeof(t)) == 1 &&
	    strncmp(t, "remove 0000", 11) == 0, "sent by the next api's "
	    "recovery and chained: remove (%.30s...)", t);
	record_of(&m, "s-f");
	parent_copy_recovered(&p, &m);
	parent_copy_sent(&p, "s-f", 0, &m);	/* its EV_CLOSED, late */
	tap_ok(parent_copies_closing(&p) == 0 &&
	    ask(&p, SLN_COPIES, 13, "node2", 0, t, sizeof(t)) == 1 &&
	    strcmp(t, "wait") == 0, "recovered before its EV_CLOSED came: "
	    "sent, not closing (%s)", t);
	parent_copy_chained(&p, "/rec/s-f.cdsrec", 1);
	tap_ok(ask(&p, SLN_COPIES, 13, "node2", 0, t, sizeof(t)) == 1 &&
	    strncmp(t, "remove 0000", 11) == 0, "then chained: remove");
}

int
main(void)
{
	test_cmdrun();
	test_spec();
	test_resolve();
	test_copies();
	test_handover();
	test_handover_recovered();
	return tap_done();
}
