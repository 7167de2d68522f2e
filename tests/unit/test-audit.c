/*
 * tests/unit/test-audit.c — the audit log: a written log verifies; each
 * kind of tampering (a flipped byte, a deleted line, two lines swapped,
 * a cut tail, a replaced file whose digest is in the chain, a forged
 * checkpoint, a wrong key) is caught and the right line is named; the
 * writer refuses to extend a broken or cut log.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/digest.h"
#include "tests/tap.h"

static char dir[256], logp[300], priv[300], pub[300], datafile[300];
static struct audit_key *key, *pubkey;

/* A fresh log of n records (checkpoint every 4), closed cleanly. */
static void
make_log(int n)
{
	struct audit_signer s;
	struct audit_log *l;
	char err[256], h[310];
	int i;

	unlink(logp);
	snprintf(h, sizeof(h), "%s.head", logp);
	unlink(h);
	audit_key_signer(key, &s);
	if (audit_log_open(logp, &s, 4, &l, err, sizeof(err)) != AUDIT_OK) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	for (i = 0; i < n; i++)
		audit_log_append(l, i == 5 ? "recording.close" : "dataset.import",
		    i == 5 ? json_pack("{s:s, s:s}", "file", datafile, "sha256",
		    "x") : json_pack("{s:i}", "n", i), err, sizeof(err));
	audit_log_close(l, err, sizeof(err));
}

/* Read the log into lines[]; returns the count. */
static int
read_lines(char lines[][1024], int max)
{
	FILE *f = fopen(logp, "r");
	int n = 0;

	while (n < max && fgets(lines[n], 1024, f) != NULL)
		n++;
	fclose(f);
	return n;
}

static void
write_lines(char lines[][1024], int n)
{
	FILE *f = fopen(logp, "w");
	int i;

	for (i = 0; i < n; i++)
		fputs(lines[i], f);
	fclose(f);
}

/* Verify; returns the status, *line the line named. */
static int
verify(unsigned long *line, char *problem, size_t len)
{
	struct audit_report r;
	char err[256];
	int rc = audit_verify(logp, pubkey, &r, err, sizeof(err));

	*line = r.bad_line;
	snprintf(problem, len, "%s", rc == AUDIT_ETAMPER ? r.problem : err);
	return rc;
}

static void
expect_tamper(const char *what, unsigned long want_line, const char *needle)
{
	unsigned long line;
	char problem[512];
	int rc = verify(&line, problem, sizeof(problem));

	tap_ok(rc == AUDIT_ETAMPER && line == want_line &&
	    strstr(problem, needle) != NULL, "%s: caught at line %lu (%s)",
	    what, line, problem);
}

int
main(void)
{
	char lines[64][1024], err[256], problem[512], cmd[400];
	struct audit_report r;
	struct audit_signer s;
	struct audit_log *l;
	unsigned long line;
	int n;

	snprintf(dir, sizeof(dir), "%s/cdsgate-audit-XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	mkdtemp(dir);
	snprintf(logp, sizeof(logp), "%s/audit.log", dir);
	snprintf(priv, sizeof(priv), "%s/key.pem", dir);
	snprintf(pub, sizeof(pub), "%s/key.pub", dir);
	snprintf(datafile, sizeof(datafile), "%s/recording", dir);

	tap_ok(audit_key_generate(priv, pub, err, sizeof(err)) == AUDIT_OK,
	    "generate an Ed25519 key pair");
	tap_ok(audit_key_generate(priv, pub, err, sizeof(err)) != AUDIT_OK,
	    "never over an existing key (%s)", err);
	chmod(priv, 0644);
	tap_ok(audit_key_load_private(priv, &key, err, sizeof(err)) ==
	    AUDIT_EKEY, "a private key readable by others is refused (%s)", err);
	chmod(priv, 0600);
	tap_ok(audit_key_load_private(priv, &key, err, sizeof(err)) == AUDIT_OK &&
	    audit_key_load_public(pub, &pubkey, err, sizeof(err)) == AUDIT_OK,
	    "load both halves");

	/* A recording whose digest goes into the chain. */
	FILE *f = fopen(datafile, "w");
	fputs("frames", f);
	fclose(f);
	char digest[65];
	audit_sha256_file(datafile, digest, err, sizeof(err));
	make_log(0);
	audit_key_signer(key, &s);
	audit_log_open(logp, &s, 4, &l, err, sizeof(err));
	for (n = 0; n < 10; n++)
		audit_log_append(l, n == 5 ? "recording.close" :
		    "dataset.import", n == 5 ? json_pack("{s:s, s:s}", "file",
		    datafile, "sha256", digest) : json_pack("{s:i}", "n", n),
		    err, sizeof(err));
	tap_ok(audit_log_seq(l) == 12, "10 records + 2 checkpoints (seq %llu)",
	    (unsigned long long)audit_log_seq(l));
	audit_log_close(l, err, sizeof(err));
	tap_ok(audit_verify(logp, pubkey, &r, err, sizeof(err)) == AUDIT_OK &&
	    r.records == 13 && r.checkpoints == 3 && r.unsigned_tail == 0,
	    "a clean log verifies: %llu records, %llu checkpoints",
	    (unsigned long long)r.records, (unsigned long long)r.checkpoints);

	/* Reopen and go on: the chain continues. */
	audit_log_open(logp, &s, 4, &l, err, sizeof(err));
	audit_log_append(l, "session.start", NULL, err, sizeof(err));
	audit_log_close(l, err, sizeof(err));
	tap_ok(audit_verify(logp, pubkey, &r, err, sizeof(err)) == AUDIT_OK &&
	    r.records == 15, "reopened and extended, it still verifies (%llu)",
	    (unsigned long long)r.records);
	n = read_lines(lines, 64);

	/* Tampering, one kind at a time on a copy of the good lines. */
	char good[64][1024];
	memcpy(good, lines, sizeof(lines));
	lines[2][30] ^= 0x01;
	write_lines(lines, n);
	expect_tamper("a flipped byte in line 3", 3, "");
	memcpy(lines, good, sizeof(lines));
	snprintf(lines[2], sizeof(lines[2]), "%s", good[2]);
	char *p = strstr(lines[2], "\"n\":2");
	if (p != NULL)
		p[4] = '7';
	write_lines(lines, n);
	expect_tamper("a changed value in line 3 (still valid JSON)", 4,
	    "not the hash of line 3");
	memcpy(lines, good, sizeof(lines));
	memmove(lines[3], lines[4], sizeof(lines[0]) * (size_t)(n - 4));
	write_lines(lines, n - 1);
	expect_tamper("a deleted line 4", 4, "deleted, inserted or reordered");
	memcpy(lines, good, sizeof(lines));
	memcpy(lines[3], good[4], sizeof(lines[0]));
	memcpy(lines[4], good[3], sizeof(lines[0]));
	write_lines(lines, n);
	expect_tamper("lines 4 and 5 swapped", 4, "reordered");
	write_lines(good, n - 3);
	expect_tamper("the last 3 lines cut", (unsigned long)n - 3, "truncated");
	write_lines(good, n);
	truncate(logp, 100);
	expect_tamper("a cut in the middle of line 1", 1, "incomplete");
	write_lines(good, n);
	f = fopen(datafile, "w");
	fputs("other frames", f);
	fclose(f);
	expect_tamper("a replaced recording", 7, "replaced or modified");
	f = fopen(datafile, "w");
	fputs("frames", f);
	fclose(f);
	tap_ok(verify(&line, problem, sizeof(problem)) == AUDIT_OK,
	    "with everything restored it verifies again");

	/* A missing recording is tampering, unless retention expired it. */
	{
		struct audit_verify_opts skip = { AUDIT_FILES_SKIP, NULL, 0 };
		struct audit_verify_opts in_dir = { AUDIT_FILES_CHECK, "/", 0 };
		char headp[310], head[4096];
		size_t hn;
		FILE *hf;

		snprintf(headp, sizeof(headp), "%s.head", logp);
		hf = fopen(headp, "r");
		hn = fread(head, 1, sizeof(head), hf);
		fclose(hf);
		unlink(datafile);
		expect_tamper("a removed recording", 7, "no record_expired");
		tap_ok(audit_verify_with(logp, pubkey, &skip, &r, err,
		    sizeof(err)) == AUDIT_OK && r.files_checked == 0,
		    "--no-recordings: the chain alone verifies");
		tap_ok(audit_verify_with(logp, pubkey, &in_dir, &r, err,
		    sizeof(err)) == AUDIT_ETAMPER && r.bad_line == 7,
		    "--recordings DIR: looked up there by name (%s)",
		    r.problem);
		audit_log_open(logp, &s, 4, &l, err, sizeof(err));
		audit_log_append(l, "record_expired", json_pack("{s:s, s:s}",
		    "file", datafile, "sha256", digest), err, sizeof(err));
		audit_log_close(l, err, sizeof(err));
		tap_ok(audit_verify(logp, pubkey, &r, err, sizeof(err)) ==
		    AUDIT_OK && r.files_expired == 1 && r.files_checked == 0,
		    "after record_expired the removed recording verifies");
		snprintf(problem, sizeof(problem), "%s/fifo", dir);
		mkfifo(problem, 0600);
		audit_log_open(logp, &s, 4, &l, err, sizeof(err));
		audit_log_append(l, "record_closed", json_pack("{s:s, s:s}",
		    "file", problem, "sha256", digest), err, sizeof(err));
		audit_log_close(l, err, sizeof(err));
		tap_ok(audit_verify(logp, pubkey, &r, err, sizeof(err)) ==
		    AUDIT_ETAMPER && strstr(r.problem, "not a regular file"),
		    "a FIFO named in the chain is refused, not read (%s)",
		    r.problem);
		unlink(problem);
		write_lines(good, n);
		hf = fopen(headp, "w");
		fwrite(head, 1, hn, hf);
		fclose(hf);
		f = fopen(datafile, "w");
		fputs("frames", f);
		fclose(f);
		tap_ok(audit_verify(logp, pubkey, &r, err, sizeof(err)) ==
		    AUDIT_OK && r.files_checked == 1, "restored: re-hashed 1");
	}

	/* A record appended by hand, chained but not signed. */
	{
		struct audit_verify_opts strict = { AUDIT_FILES_CHECK, NULL,
		    1 };
		char hash[65];

		digest_buf_hex(good[n - 1], strlen(good[n - 1]) - 1, hash);
		memcpy(lines, good, sizeof(lines));
		snprintf(lines[n], sizeof(lines[n]), "{\"data\":{\"n\":99},"
		    "\"prev\":\"%s\",\"seq\":%d,\"time\":"
		    "\"2026-11-25T09:00:00Z\",\"type\":\"dataset.import\"}\n",
		    hash, n);
		write_lines(lines, n + 1);
		line = audit_verify(logp, pubkey, &r, err, sizeof(err));
		tap_ok(line == AUDIT_OK && r.unsigned_tail == 1 &&
		    r.unsigned_line == (unsigned long)n + 1,
		    "an appended unsigned record: intact by default, counted "
		    "(1 after the last checkpoint, line %lu)", r.unsigned_line);
		tap_ok(audit_verify_with(logp, pubkey, &strict, &r, err,
		    sizeof(err)) == AUDIT_ETAMPER &&
		    r.bad_line == (unsigned long)n + 1 &&
		    strstr(r.problem, "after the last signed checkpoint"),
		    "strict: it fails, naming its line (%s)", r.problem);
		write_lines(good, n);
		tap_ok(audit_verify_with(logp, pubkey, &strict, &r, err,
		    sizeof(err)) == AUDIT_OK, "strict: the log as signed passes");
		snprintf(problem, sizeof(problem), "%s/count.log", dir);
		audit_log_open(problem, &s, 4, &l, err, sizeof(err));
		audit_log_append(l, "session.start", NULL, err, sizeof(err));
		tap_ok(audit_log_unsigned(l) == 1, "the writer counts 1 "
		    "unsigned record");
		audit_log_checkpoint(l, err, sizeof(err));
		tap_ok(audit_log_unsigned(l) == 0, "and none after a checkpoint");
		audit_log_close(l, err, sizeof(err));
	}

	/* The record that vouches for one recording (replay FILE). */
	{
		static const char other_sha[] = "0123456789abcdef0123456789abcdef"
		    "0123456789abcdef0123456789abcdef";
		struct audit_vouch v;
		char vlog[310];

		snprintf(vlog, sizeof(vlog), "%s/vouch.log", dir);
		audit_log_open(vlog, &s, 4, &l, err, sizeof(err));
		audit_log_append(l, "record_closed", json_pack("{s:s, s:s, "
		    "s:s}", "file", "/rec/s-1.cdsrec", "sha256", digest,
		    "session", "s-1"), err, sizeof(err));
		audit_log_append(l, "record_closed", json_pack("{s:s, s:s, "
		    "s:s}", "file", "/rec/s-2.cdsrec", "sha256", digest,
		    "session", "s-2"), err, sizeof(err));
		audit_log_append(l, "record_expired", json_pack("{s:s, s:s, "
		    "s:s}", "file", "/rec/s-2.cdsrec", "sha256", digest,
		    "session", "s-2"), err, sizeof(err));
		audit_log_close(l, err, sizeof(err));
		tap_ok(audit_vouch_find(vlog, "/rec/s-1.cdsrec", other_sha,
		    NULL, &v, err, sizeof(err)) == AUDIT_OK && v.found &&
		    !v.same && v.line == 1 && strcmp(v.sha256, digest) == 0 &&
		    strcmp(v.session, "s-1") == 0 && !v.expired,
		    "vouch: another digest at its path: line 1, not the same");
		tap_ok(audit_vouch_find(vlog, "/copy/s-1.cdsrec", other_sha,
		    NULL, &v, err, sizeof(err)) == AUDIT_OK && v.found &&
		    !v.same && v.line == 1, "vouch: a copy by its file name");
		tap_ok(audit_vouch_find(vlog, "/copy/x.cdsrec", other_sha, "s-1",
		    &v, err, sizeof(err)) == AUDIT_OK && v.found && v.line == 1,
		    "vouch: by the session id in its header");
		tap_ok(audit_vouch_find(vlog, "/copy/x.cdsrec", digest, NULL, &v,
		    err, sizeof(err)) == AUDIT_OK && v.found && v.same &&
		    v.line == 2 && v.expired, "vouch: by its digest, the last "
		    "record with it (line 2), expired since");
		tap_ok(audit_vouch_find(vlog, "/copy/x.cdsrec", other_sha, "s-9",
		    &v, err, sizeof(err)) == AUDIT_OK && !v.found,
		    "vouch: no record for an unknown one");
		tap_ok(audit_vouch_find(dir, "/rec/s-1.cdsrec", digest, NULL, &v,
		    err, sizeof(err)) == AUDIT_EIO, "vouch: an unreadable log "
		    "(a directory) is an error (%s)", err);
	}

	/* The writer refuses to extend a cut or broken log. */
	write_lines(good, n - 3);
	tap_ok(audit_log_open(logp, &s, 4, &l, err, sizeof(err)) ==
	    AUDIT_ECORRUPT && strstr(err, "cut"), "a cut log is not extended "
	    "(%s)", err);
	f = fopen(logp, "a");
	fputs("{\"seq\":", f);
	fclose(f);
	tap_ok(audit_log_open(logp, &s, 4, &l, err, sizeof(err)) ==
	    AUDIT_ECORRUPT && strstr(err, "incomplete"),
	    "a log ending mid-record is not extended (%s)", err);

	write_lines(good, n);

	/* A forger with another key. */
	snprintf(cmd, sizeof(cmd), "%s/other.pem", dir);
	char opub[300];
	snprintf(opub, sizeof(opub), "%s/other.pub", dir);
	audit_key_generate(cmd, opub, err, sizeof(err));
	struct audit_key *other;
	audit_key_load_public(opub, &other, err, sizeof(err));
	tap_ok(audit_verify(logp, other, &r, err, sizeof(err)) ==
	    AUDIT_ETAMPER && r.bad_line == 5 && strstr(r.problem, "signature"),
	    "verified against another key: the first checkpoint fails (%s)",
	    r.problem);
	audit_key_free(other);
	make_log(3);
	audit_key_free(key);
	key = NULL;
	audit_key_load_private(cmd, &key, err, sizeof(err));
	audit_key_signer(key, &s);
	audit_log_open(logp, &s, 4, &l, err, sizeof(err));
	audit_log_append(l, "dataset.import", NULL, err, sizeof(err));
	audit_log_close(l, err, sizeof(err));
	expect_tamper("records appended with a forger's key", 6, "signature");

	audit_key_free(key);
	audit_key_free(pubkey);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
