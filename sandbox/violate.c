/*
 * sandbox/violate.c — the test hook: commit one forbidden syscall on
 * purpose so a test can watch the filter kill the process.
 *
 * Trust: the caller decides who may ask (sandbox/sandbox.h); the calls
 * themselves touch nothing (a path that does not exist, a socket that is
 * never used, ptrace of nobody).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/* Make the call; return only if the filter let it through. */
int
sandbox_violate(const char *what)
{
	char *const argv[] = { "/bin/true", NULL };
	char *const envp[] = { NULL };
	int fd;

	if (what == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (strcmp(what, "open") == 0) {
		if ((fd = open("/nonexistent-cdsgate-violation", O_RDONLY)) >= 0)
			close(fd);
	} else if (strcmp(what, "socket") == 0) {
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
			close(fd);
	} else if (strcmp(what, "execve") == 0)
		execve(argv[0], argv, envp);
	else if (strcmp(what, "ptrace") == 0)
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	else {
		errno = EINVAL;
		return -1;
	}
	return -1;
}
