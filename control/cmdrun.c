/*
 * control/cmdrun.c — run one command, bounded in and out (cmdrun.h).
 *
 * Library code of the Slurm runner's helpers: no logging.  The command's
 * output is data for the caller to parse strictly; nothing here trusts it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control/cmdrun.h"

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child: the pipes on 0, 1, 2, then exec. */
static void __attribute__((noreturn))
child(int in, int out, int err, char *const *argv, char *const *env,
    pid_t parent)
{
	static char *const none[] = { NULL };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	execve(argv[0], argv, env != NULL ? env : none);
	/* fd 2 is the pipe the caller reads as the command's error
	   output: this is that output, not a log line */
	dprintf(2, "exec %s: %s", argv[0], strerror(errno));
	_exit(127);
}

/* Read what is there into buf (bounded; the rest is drained). */
static int
drain(int fd, char *buf, size_t cap, size_t *len)
{
	char sink[512];
	ssize_t n;

	if (*len + 1 < cap)
		n = read(fd, buf + *len, cap - 1 - *len);
	else
		n = read(fd, sink, sizeof(sink));
	if (n > 0 && *len + 1 < cap)
		*len += (size_t)n;
	buf[*len] = '\0';
	return n > 0 || (n < 0 && errno == EINTR) ? 0 : -1;
}

/* Feed stdin, collect stdout/stderr until both close or ms pass. */
static int
pump(struct cmdrun *r, int in, int out, int err, const char *data,
    size_t len, int ms)
{
	struct pollfd p[3] = { { in, POLLOUT, 0 }, { out, POLLIN, 0 },
	    { err, POLLIN, 0 } };
	long long end = now_ms() + ms;
	size_t off = 0, elen = 0;
	ssize_t n;

	if (len == 0) {
		close(in);
		p[0].fd = -1;
	}
	while (p[1].fd >= 0 || p[2].fd >= 0) {
		int left = (int)(end - now_ms());

		if (left <= 0 || poll(p, 3, left) < 0) {
			if (left > 0 && errno == EINTR)
				continue;
			break;
		}
		if (p[0].fd >= 0 && p[0].revents != 0) {
			n = write(in, data + off, len - off);
			if (n > 0)
				off += (size_t)n;
			if (n <= 0 || off == len) {
				close(in);
				p[0].fd = -1;
			}
		}
		if (p[1].revents != 0 && drain(out, r->out, sizeof(r->out),
		    &r->outlen) != 0)
			p[1].fd = -1;
		if (p[2].revents != 0 && drain(err, r->err, sizeof(r->err),
		    &elen) != 0)
			p[2].fd = -1;
	}
	if (p[0].fd >= 0)
		close(in);
	return p[1].fd >= 0 || p[2].fd >= 0 ? -1 : 0;
}

int
cmdrun(struct cmdrun *r, char *const *argv, char *const *env,
    const char *in, size_t inlen, int ms)
{
	int pi[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st;
	int late;
	pid_t pid, self = getpid();

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (pipe2(pi, O_CLOEXEC) != 0 || pipe2(po, O_CLOEXEC) != 0 ||
	    pipe2(pe, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		snprintf(r->err, sizeof(r->err), "%s: %s", argv[0],
		    strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(pi[0], po[1], pe[1], argv, env, self);
	close(pi[0]);
	close(po[1]);
	close(pe[1]);
	pi[0] = po[1] = pe[1] = -1;
	signal(SIGPIPE, SIG_IGN);
	late = pump(r, pi[1], po[0], pe[0], in, inlen, ms) != 0;
	pi[1] = -1;	/* pump closed it */
	if (late) {
		kill(pid, SIGKILL);
		snprintf(r->err, sizeof(r->err), "%s: no answer in %d ms",
		    argv[0], ms);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!late && WIFEXITED(st))
		r->status = WEXITSTATUS(st);
out:
	for (int i = 0; i < 2; i++) {
		if (pi[i] >= 0)
			close(pi[i]);
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	return r->status;
}
