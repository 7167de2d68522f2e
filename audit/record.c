/*
 * audit/record.c — parsing one audit record line and the head file,
 * hashing, and the signed message formats shared by writer and verifier.
 *
 * Trust: parses untrusted bytes (a log an attacker may have edited):
 * bounded line length, jansson for JSON, every field type-checked.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <jansson.h>

#include "audit/audit.h"
#include "audit/audit-int.h"

int
audit_type_valid(const char *t)
{
	size_t n = strlen(t), i;

	if (n == 0 || n > 40)
		return 0;
	for (i = 0; i < n; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' &&
		    t[i] <= '9') || t[i] == '.' || t[i] == '_' || t[i] == '-'))
			return 0;
	return 1;
}

void
audit_checkpoint_message(uint64_t seq, const char *prev, char *buf,
    size_t len)
{
	snprintf(buf, len, "cdsgate-audit-checkpoint v1\n%" PRIu64 "\n%s\n",
	    seq, prev);
}

void
audit_head_message(uint64_t seq, const char *hash, char *buf, size_t len)
{
	snprintf(buf, len, "cdsgate-audit-head v1\n%" PRIu64 "\n%s\n", seq,
	    hash);
}

/* Copy a string member into dst; -1 if missing, not a string or long. */
static int
member_str(json_t *o, const char *key, char *dst, size_t len)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v) || json_string_length(v) >= len)
		return -1;
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int
hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

int
audit_line_parse(const char *line, struct audit_line *al)
{
	json_error_t je;
	json_t *o, *seq, *data;
	int rc = -1;

	memset(al, 0, sizeof(*al));
	if ((o = json_loads(line, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		snprintf(al->problem, sizeof(al->problem), "not JSON: %.120s",
		    je.text);
		return -1;
	}
	seq = json_object_get(o, "seq");
	data = json_object_get(o, "data");
	if (!json_is_integer(seq) || json_integer_value(seq) < 0)
		snprintf(al->problem, sizeof(al->problem), "no valid seq");
	else if (member_str(o, "type", al->type, sizeof(al->type)) != 0 ||
	    !audit_type_valid(al->type))
		snprintf(al->problem, sizeof(al->problem), "no valid type");
	else if (member_str(o, "prev", al->prev, sizeof(al->prev)) != 0 ||
	    !hex64(al->prev))
		snprintf(al->problem, sizeof(al->problem), "no valid prev");
	else if (!json_is_object(data))
		snprintf(al->problem, sizeof(al->problem), "no data object");
	else if (strcmp(al->type, AUDIT_CHECKPOINT) == 0 &&
	    (member_str(data, "key", al->key, sizeof(al->key)) != 0 ||
	    member_str(data, "sig", al->sig, sizeof(al->sig)) != 0))
		snprintf(al->problem, sizeof(al->problem),
		    "checkpoint without key and sig");
	else {
		al->seq = (uint64_t)json_integer_value(seq);
		rc = 0;
	}
	json_decref(o);
	return rc;
}

int
audit_head_read(const char *log_path, struct audit_head *h)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *o, *seq;
	int rc = -1, fd;

	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "%s.head", log_path);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 1 : -2;	/* errno says why */
	o = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
	if (o == NULL)
		return -1;
	seq = json_object_get(o, "seq");
	if (json_is_integer(seq) && json_integer_value(seq) >= 0 &&
	    member_str(o, "hash", h->hash, sizeof(h->hash)) == 0 &&
	    hex64(h->hash) &&
	    member_str(o, "key", h->key, sizeof(h->key)) == 0 &&
	    member_str(o, "sig", h->sig, sizeof(h->sig)) == 0) {
		h->seq = (uint64_t)json_integer_value(seq);
		rc = 0;
	}
	json_decref(o);
	return rc;
}
