/*
 * supervisor/childproc.c — the child side of the supervisor's fork(), before
 * its exec or its run function: report a failure up the error pipe, close
 * every inherited fd but the ones it keeps, reset signals, point stdio at
 * /dev/null, and notice a supervisor that died before PR_SET_PDEATHSIG
 * was armed.
 *
 * Trust: runs as root between fork() and the privilege drop, on data the
 * supervisor gave it; no input from outside.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/childproc.h"

/* Tell the supervisor what failed, then die.  Never returns. */
void __attribute__((noreturn))
child_fail(int errfd, const char *what, int err)
{
	struct child_report rep;

	memset(&rep, 0, sizeof(rep));
	rep.err = err;
	snprintf(rep.what, sizeof(rep.what), "%s", what);
	if (write(errfd, &rep, sizeof(rep)) < 0) {
		/* nothing more we can say */
	}
	_exit(127);
}

/* Close every fd >= 3 except the ones in keep[]. */
void
close_except(const int *keep, size_t n)
{
	unsigned lo = 3, k;
	size_t i, j;
	int sorted[8];

	for (i = 0; i < n && i < 8; i++)
		sorted[i] = keep[i];
	for (i = 1; i < n; i++)		/* tiny insertion sort */
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (sorted[i] < 3)
			continue;
		k = (unsigned)sorted[i];
		if (k > lo)
			close_range(lo, k - 1, 0);
		lo = k + 1;
	}
	close_range(lo, ~0U, 0);
}

/* Signals as a fresh program expects them: none blocked, all default. */
void
child_reset_signals(void)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* stdin from /dev/null; stdout never ours (it carries "ready"). */
int
child_stdio(int quiet)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
		return -1;
	if (dup2(quiet ? fd : STDERR_FILENO, STDOUT_FILENO) < 0)
		return -1;
	if (quiet && dup2(fd, STDERR_FILENO) < 0)
		return -1;
	if (fd > STDERR_FILENO)
		close(fd);
	return 0;
}

/*
 * Did the supervisor die before PR_SET_PDEATHSIG was armed?  As pid 1 of
 * its own pid namespace the browser sees getppid() == 0; it asks the
 * error pipe instead, whose reader (the supervisor) waits for our exec.
 */
int
supervisor_gone(int errfd, pid_t parent)
{
	struct pollfd p = { errfd, 0, 0 };

	if (getppid() == parent)
		return 0;
	return getppid() != 0 || poll(&p, 1, 0) != 0;
}
