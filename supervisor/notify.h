/*
 * supervisor/notify.h — systemd's service notification protocol
 * (sd_notify(3)) for Type=notify: READY=1 once the session takes
 * clients, STOPPING=1 when it begins to stop.
 *
 * Written here instead of linking libsystemd: the protocol is one
 * datagram on the AF_UNIX socket named by $NOTIFY_SOCKET (a stable,
 * documented interface), and the supervisor should not carry a large
 * library (and its allocations and dlopen()s) for twenty lines.
 * Trust: root supervisor; the variable comes from the service manager.
 */
#ifndef GATEWAY_NOTIFY_H
#define GATEWAY_NOTIFY_H

/*
 * Read $NOTIFY_SOCKET once and remove it from the environment, so no
 * child can ever inherit it.  Returns 1 if notifications will be sent,
 * 0 if not run by a service manager, -1 if the variable is unusable
 * (not an absolute path nor an abstract "@name", or too long).
 */
int	notify_init(void);

/* Send one state string ("READY=1\nSTATUS=..."); 0 if sent or nothing
 * to send to, -1 with errno set if the datagram could not be sent. */
int	notify_send(const char *state);

/* READY=1 with a STATUS line naming where clients connect. */
int	notify_ready(const char *listen);

#endif
