/*
 * control/parent-copies.c — after a Slurm session's end, whether its
 * node may remove its own copies of the session's evidence (the
 * recording, network log and capture in the node's record_dir).
 *
 * Only once the control plane's copy is complete and in the audit
 * chain: the receiver closed it (EV_CLOSED), the parent sealed it and
 * sent its digests to the api (RECORD_CLOSED; when no api was connected,
 * the next one's recovery sends them), and the api said record_closed
 * was appended (RECORD_CHAINED ok).  Then a node's
 * "copies JOB NODE" is answered "remove" with those digests; the node
 * removes a file only if it is byte for byte that copy, and says what it
 * removed ("removed JOB NODE MASK"), which the api audits
 * (record_node_removed).  Anything else is "wait" (still closing) or
 * "keep" and why.
 *
 * Root.  Trust: the node's requests come through the Slurm helper,
 * MUNGE-checked (root's); a request about a job of another node, or one
 * this table no longer holds, is refused.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "control/parent.h"
#include "control/slurm.h"

#define NCOPY	(sizeof(((struct parent *)0)->copies) / \
	sizeof(((struct parent *)0)->copies[0]))

static struct pcopy *
copy_by_id(struct parent *p, const char *id)
{
	size_t i;

	for (i = 0; i < NCOPY; i++)
		if (p->copies[i].state != PCOPY_FREE &&
		    strcmp(p->copies[i].id, id) == 0)
			return &p->copies[i];
	return NULL;
}

/* The session's evidence is being closed (receiving: the receiver was
 * told; else it is gone and the node keeps its copies).  The oldest
 * entry gives way: its node has had all the time it needed to ask. */
void
parent_copy_begin(struct parent *p, const char *id, int64_t job,
    const char *node, int receiving)
{
	struct pcopy *c = &p->copies[p->copy_next];

	p->copy_next = (int)((size_t)(p->copy_next + 1) % NCOPY);
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->node, sizeof(c->node), "%s", node);
	c->job = job;
	c->state = receiving ? PCOPY_CLOSING : PCOPY_KEEP;
	if (!receiving)
		snprintf(c->why, sizeof(c->why), "the control plane's "
		    "evidence receiver is gone");
}

/* m's file and digests: RECORD_CLOSED went to the api. */
static void
copy_sent(struct pcopy *c, const struct pipc_record *m)
{
	snprintf(c->file, sizeof(c->file), "%s", m->file);
	snprintf(c->sha256[0], sizeof(c->sha256[0]), "%s", m->sha256);
	snprintf(c->sha256[1], sizeof(c->sha256[1]), "%s", m->net.sha256);
	snprintf(c->sha256[2], sizeof(c->sha256[2]), "%s", m->cap.sha256);
	c->state = PCOPY_SENT;
}

/* EV_CLOSED, then parent_record_chain's rc: 0, m went to the api; 1,
 * no api is connected (the next one's parent_record_recover sends it);
 * -1, nothing to chain. */
void
parent_copy_sent(struct parent *p, const char *id, int rc,
    const struct pipc_record *m)
{
	struct pcopy *c = copy_by_id(p, id);

	if (c == NULL || c->state != PCOPY_CLOSING)
		return;
	if (rc == 0)
		copy_sent(c, m);
	else if (rc == 1)
		c->state = PCOPY_AWAIT;
	else {
		c->state = PCOPY_KEEP;
		snprintf(c->why, sizeof(c->why), "the control plane holds "
		    "no recording of it, or could not seal it");
	}
}

/* parent_record_recover sent m (end "recovered"): a copy closed while
 * no api was connected, or whose EV_CLOSED is still on its way. */
void
parent_copy_recovered(struct parent *p, const struct pipc_record *m)
{
	struct pcopy *c = copy_by_id(p, m->id);

	if (c != NULL && (c->state == PCOPY_AWAIT ||
	    c->state == PCOPY_CLOSING))
		copy_sent(c, m);
}

/* The copies the receiver has not said closed yet (EV_CLOSED). */
int
parent_copies_closing(const struct parent *p)
{
	size_t i;
	int n = 0;

	for (i = 0; i < NCOPY; i++)
		n += p->copies[i].state == PCOPY_CLOSING;
	return n;
}

/* RECORD_CHAINED: one of ours (a local recording's: nothing to do). */
void
parent_copy_chained(struct parent *p, const char *file, int ok)
{
	size_t i;

	for (i = 0; i < NCOPY; i++) {
		struct pcopy *c = &p->copies[i];

		if (c->state != PCOPY_SENT || strcmp(c->file, file) != 0)
			continue;
		c->state = ok ? PCOPY_CHAINED : PCOPY_KEEP;
		if (!ok)
			snprintf(c->why, sizeof(c->why), "its record_closed "
			    "is not in the audit chain (the api could not "
			    "append it)");
		log_warnx("session %s: its control copy is %s; node %s %s",
		    c->id, ok ? "chained" : "not chained", c->node, ok ?
		    "may remove its own" : "keeps its own");
	}
}

/* The entry of node n's job, or NULL with why in text. */
static struct pcopy *
copy_of(struct parent *p, const struct sl_node *n, char *text, size_t len)
{
	size_t i;

	for (i = 0; i < NCOPY; i++) {
		struct pcopy *c = &p->copies[i];

		if (c->state != PCOPY_FREE && c->job == n->job &&
		    strcmp(c->node, n->node) == 0)
			return c;
	}
	snprintf(text, len, "no ended session of job %lld of node %.63s "
	    "here", (long long)n->job, n->node);
	return NULL;
}

/* "copies JOB NODE": "remove R N C" (the chained digests, "-" for a
 * file the control plane holds none of), "wait", or "keep WHY".  1 for
 * an answer "ok", 0 for "no". */
int
parent_copy_ask(struct parent *p, const struct sl_node *n, char *text,
    size_t len)
{
	struct pcopy *c = copy_of(p, n, text, len);

	if (c == NULL)
		return 0;
	if (c->state == PCOPY_CHAINED)
		snprintf(text, len, "remove %s %s %s", c->sha256[0][0] ?
		    c->sha256[0] : "-", c->sha256[1][0] ? c->sha256[1] : "-",
		    c->sha256[2][0] ? c->sha256[2] : "-");
	else if (c->state == PCOPY_KEEP)
		snprintf(text, len, "keep %s", c->why);
	else
		snprintf(text, len, "wait");
	return 1;
}

/* "removed JOB NODE MASK": what the node removed (bit f: file f), each
 * a file the control plane told it to; the api audits it. */
int
parent_copy_removed(struct parent *p, const struct sl_node *n, char *text,
    size_t len)
{
	struct pcopy *c = copy_of(p, n, text, len);
	struct pipc_copy_removed m;
	int f;

	if (c == NULL)
		return 0;
	if (c->state != PCOPY_CHAINED || n->status <= 0 || n->status > 7) {
		snprintf(text, len, "that session's copies were not to be "
		    "removed");
		return 0;
	}
	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", c->id);
	snprintf(m.node, sizeof(m.node), "%s", c->node);
	for (f = 0; f < 3; f++)
		if (n->status & (1 << f))
			snprintf(m.sha256[f], sizeof(m.sha256[f]), "%s",
			    c->sha256[f]);
	log_warnx("session %s: node %s removed its own copies (mask %d)",
	    c->id, c->node, n->status);
	if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_COPY_REMOVED, &m, sizeof(m),
		    -1);
	memset(c, 0, sizeof(*c));
	text[0] = '\0';
	return 1;
}
