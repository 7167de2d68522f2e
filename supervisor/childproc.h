/*
 * supervisor/childproc.h — the child side of the supervisor's fork() (see
 * childproc.c): what a child does to itself before it drops privileges
 * and runs its role, whatever the role.
 */
#ifndef GATEWAY_CHILDPROC_H
#define GATEWAY_CHILDPROC_H

#include <stddef.h>
#include <sys/types.h>

/* What a child that failed before its exec writes up the error pipe; the
 * supervisor reads exactly one (EOF instead means it started). */
struct child_report {
	int	err;
	char	what[120];
};

/* Report what (and errno err, or 0) on errfd, then _exit(127). */
void	child_fail(int errfd, const char *what, int err)
	    __attribute__((noreturn));
/* Close every fd >= 3 except the n (at most 8) in keep[]. */
void	close_except(const int *keep, size_t n);
/* Every signal back to its default, none blocked: as a fresh program. */
void	child_reset_signals(void);
/* stdin from /dev/null; stdout (and, if quiet, stderr) too. */
int	child_stdio(int quiet);
/* Did the supervisor (pid parent) die before PR_SET_PDEATHSIG was set? */
int	supervisor_gone(int errfd, pid_t parent);

#endif
