/*
 * supervisor/testhook.h — the seccomp test hook (configure
 * --enable-test-hooks): CDSGATE_TEST_VIOLATE in the operator's
 * environment, "[ROLE:]CALL", makes a confined child commit one
 * forbidden call right after its filter is loaded.  CALL is open,
 * socket, execve or ptrace; ROLE is worker (the default), xvfb (before
 * its exec) or forward.  No client can reach it; it can only make a
 * process die.
 */
#ifndef GATEWAY_TESTHOOK_H
#define GATEWAY_TESTHOOK_H

/* Read CDSGATE_TEST_VIOLATE: 0 = none (or hooks not built), 1 = *role
 * and *call set (static strings), -1 = malformed (said on stderr). */
int	test_hook_get(const char **role, const char **call);

#endif
