/*
 * gateway/slog.h — the session log: one JSON object per line.
 *
 * Every process of a session (supervisor and worker) appends to the same
 * file, opened O_APPEND; each event is one write(2) of one line, so lines
 * never interleave.  Untrusted content (typed keys, cut text) is never
 * logged — only its size, counts and keysym numbers.  The evidence issue
 * builds full recording on this.
 *
 * Every line: {"ts": RFC 3339 UTC with microseconds, "session": id,
 *              "proc": "supervisor"|"worker"|"forward"|"tls"|"frontdoor", "event": name,
 *              ...fields}.
 * Events — supervisor: session_start, display_ready, ready, child_start,
 * child_exit, browser_restart, browser_net, session_stop (reason); worker:
 * connect, disconnect (reason), auth_fail, client_refused, front_closed
 * (a connection the TLS front door closed before a login), key_filtered,
 * button_filtered, rate_limited, rate_alarm, clipboard_dropped (size),
 * protocol_error, idle_timeout, max_duration, setup_failed, vnc_log
 * (LibVNCServer's own messages, rate limited), and the TLS front door's
 * front_door, tls_handshake, auth_ok (docs/tls.md), record_closed
 * (sha256, size) and record_failed (docs/gateway.md, "The recording");
 * tls (the TLS key holder): tls_start, tls_stop, tls_handshake, auth_ok,
 * auth_fail, client_refused, relay_end of the connections it was handed;
 * supervisor also record_open and record_failed; forwarder:
 * forward_start, net_open, net_close, net_refused; frontdoor (the one
 * front door of `serve`, its "session" the connection's once known):
 * door_start, door_stop, door_add, door_remove, door_relay,
 * upstream_failed, and tls's tls_handshake, auth_ok, auth_fail,
 * client_refused, relay_end.
 */
#ifndef GATEWAY_SLOG_H
#define GATEWAY_SLOG_H

#include <jansson.h>

/* Open (create, mode 0600, O_APPEND|O_CLOEXEC) the log; path NULL =
 * stderr.  Returns 0 or -1 with errno set. */
int	slog_open(const char *path, const char *session, const char *proc);
/* Re-tag after fork (the worker keeps the fd, changes proc). */
void	slog_set_proc(const char *proc);
int	slog_fd(void);
/* The events' "ts": RFC 3339 UTC with microseconds (also the network
 * log's, gateway/forward.c). */
void	slog_ts(char *buf, size_t len);
/* Log one event; fields (may be NULL) is consumed (json_decref'd).
 * Returns 0, or -1 if the line could not be written completely. */
int	slog_event(const char *event, json_t *fields);
void	slog_close(void);
/* Also hand every event of this process (the whole line as a JSON
 * object, not to be kept) to fn: the worker puts them in the session
 * recording.  Events logged from inside fn are not tapped again. */
typedef void (*slog_tap_fn)(void *arg, const char *event, json_t *line);
void	slog_set_tap(slog_tap_fn fn, void *arg);

#endif
