/*
 * control/munge.h — what the Slurm runner's nodes and control plane say
 * to each other, signed and encrypted by MUNGE (munged's shared key:
 * every Slurm site runs it), through the `munge` and `unmunge` commands.
 *
 * The wire: one TCP connection per request; the node writes one
 * credential and a newline, the control plane answers with one
 * credential and a newline and closes.  A credential's payload is text.
 * Only credentials made by root (uid 0) are taken, and answers are
 * restricted to root's decoding (munge --restrict-uid=0): the agents and
 * the control plane's helper run as root.  munged refuses a credential
 * replayed or older than its time to live (300 s).
 */
#ifndef GATEWAY_MUNGE_H
#define GATEWAY_MUNGE_H

#include <netdb.h>
#include <stddef.h>

#include "policy/config.h"

#define MUNGE_PAYLOAD_MAX	2048
#define MUNGE_CRED_MAX		4096
#define MUNGE_CMD_MS		5000
#define MUNGE_READ_MS		2000	/* a node's request line */
#define MUNGE_DIAL_MS		5000	/* connect, and each send */
#define MUNGE_NET_MS		30000	/* the control plane's answer (it
					   may run Slurm's commands first) */

/* Sign and encrypt payload (NUL-terminated) into cred, for root's
 * decoding only.  0, or -1 with err. */
int	munge_seal(const struct gw_config *c, const char *payload,
	    char *cred, size_t len, char *err, size_t errlen);
/* Check cred (munged: valid, not replayed, in time) and that root made
 * it; its payload into out.  0, or -1 with err. */
int	munge_open(const struct gw_config *c, const char *cred, char *out,
	    size_t len, char *err, size_t errlen);
/* The environment for Slurm's and MUNGE's commands (SLURM_CONF). */
char  **munge_cmd_env(const struct gw_config *c);

/* "ADDR:PORT" (numeric; "[v6]:PORT") for a TCP socket, or NULL. */
struct addrinfo *munge_resolve(const char *addr, int passive);

/* A TCP connection to "ADDR:PORT" (numeric), or -1 with errno. */
int	munge_dial(const char *addr);
/* CLOCK_MONOTONIC in ms, for deadlines. */
long long munge_mono_ms(void);

/* The node's side: send request to control_address, put the answer's
 * payload in out.  0, or -1 with err. */
int	munge_call(const struct gw_config *c, const char *request, char *out,
	    size_t len, char *err, size_t errlen);
/* The control plane's side of one accepted connection: read the
 * request's credential (bounded, timed) and open it into out. */
int	munge_read_request(const struct gw_config *c, int fd, char *out,
	    size_t len, char *err, size_t errlen);
/* ... and seal and write the answer. */
int	munge_write_answer(const struct gw_config *c, int fd,
	    const char *answer, char *err, size_t errlen);

#endif
