/*
 * audit/audit-int.h — what the audit log's writer and verifier share:
 * the record parser, hashing, and the exact signed messages.
 */
#ifndef AUDIT_AUDIT_INT_H
#define AUDIT_AUDIT_INT_H

#include <stddef.h>
#include <stdint.h>

#define AUDIT_CHECKPOINT	"checkpoint"

/* The fields of one record line, checked for shape. */
struct audit_line {
	uint64_t	 seq;
	char		 type[48];
	char		 prev[65];
	char		 key[32];	/* checkpoints */
	char		 sig[96];	/* checkpoints, base64 */
	char		 problem[200];	/* why parse failed */
};

/* Parse one line (no newline): 0, or -1 with al->problem set. */
int	audit_line_parse(const char *line, struct audit_line *al);
/* [a-z0-9._-], 1..40 characters. */
int	audit_type_valid(const char *type);
/* The exact messages checkpoints and the head file sign. */
void	audit_checkpoint_message(uint64_t seq, const char *prev, char *buf,
	    size_t len);
void	audit_head_message(uint64_t seq, const char *hash, char *buf,
	    size_t len);

/* The head file <log>.head: 0 and filled, 1 if absent, -1 if broken,
 * -2 if it cannot be opened (errno says why: EACCES...). */
struct audit_head {
	uint64_t	 seq;
	char		 hash[65];
	char		 key[32];
	char		 sig[96];
};
int	audit_head_read(const char *log_path, struct audit_head *h);

#endif
