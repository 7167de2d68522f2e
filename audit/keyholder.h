/*
 * audit/keyholder.h — the audit key holder: the one process that can read
 * the audit log's private key.  It owns the log file; everybody else
 * sends it records over a SOCK_SEQPACKET socket (common/ipc.h) and gets
 * back the seq the record was written as, or why it was not.
 *
 *   peer -> key holder   KH_APPEND   {type, JSON data}
 *   key holder -> peer   KH_RESULT   {status, seq, message}
 *
 * A peer that sends anything else, or a malformed record, breaks the
 * protocol: the key holder closes the log (checkpointing it) and exits.
 * On EOF it checkpoints, closes and exits 0.
 *
 * It signs a checkpoint every KEYHOLDER_CHECKPOINT records, right after
 * every record_closed (a recording's digest is signed as soon as it is
 * chained), and when a record has waited KEYHOLDER_CHECKPOINT_S seconds
 * unsigned: what `audit verify --strict` finds unsigned is at most a
 * minute old on a running daemon.
 */
#ifndef AUDIT_KEYHOLDER_H
#define AUDIT_KEYHOLDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "common/privdrop.h"

#define KEYHOLDER_USER		PRIVDROP_AUDIT_USER
#define KEYHOLDER_DATA_MAX	16000	/* bytes of JSON per record */
#define KEYHOLDER_CHECKPOINT	32	/* records between checkpoints */
#define KEYHOLDER_CHECKPOINT_S	60	/* longest a record waits unsigned */

struct keyholder {
	pid_t	pid;
	int	sock;
};

/*
 * Fork the key holder: as root it drops to KEYHOLDER_USER (which must own
 * the key and may write the log), always NO_NEW_PRIVS and no core dumps;
 * it loads the private key and opens the log before it answers.  Returns
 * 0 once it is ready, or -1 with a message (the key or the log unusable:
 * the caller must not start — every change is audited or none happens).
 */
int	keyholder_start(const char *log_path, const char *key_path,
	    struct keyholder *kh, char *err, size_t errlen);
/* Append one record (data not stolen; NULL = {}); *seq (may be NULL)
 * gets its seq.  Returns 0, or -1 with a message. */
int	keyholder_append(struct keyholder *kh, const char *type, json_t *data,
	    uint64_t *seq, char *err, size_t errlen);
/* Close our end; the key holder checkpoints and exits.  Reaps it. */
int	keyholder_stop(struct keyholder *kh);

#endif
