/*
 * sandbox/profiles.h — the allow-lists as data (sandbox/profiles.c), read
 * by the filter builder (sandbox/seccomp.c).  Internal to sandbox/.
 *
 * A profile is: plain syscalls allowed with any arguments; syscalls that
 * fail with an errno instead of killing (harmless probes), optionally
 * only for one value of one argument, or of its bits under a mask; and
 * the argument-checked families (socket domains, ioctl requests, fcntl
 * commands, mmap/mprotect without PROT_EXEC, clone only for threads).
 * Everything else kills the process; a deny-list (deny_list below)
 * turns that round.
 */
#ifndef SANDBOX_PROFILES_H
#define SANDBOX_PROFILES_H

#include <stddef.h>

#include "sandbox/sandbox.h"

#define SANDBOX_ANY_ARG	(-1)

/* Allowed only when (args[arg] & mask) == val. */
struct sandbox_argrule {
	int		 nr;
	int		 arg;
	unsigned long	 mask;
	unsigned long	 val;
};

/* Fail with err instead of killing: when arg == ANY, or args[arg] ==
 * val (mask 0), or (args[arg] & mask) == val. */
struct sandbox_errno {
	int		 nr;
	int		 err;
	int		 arg;
	unsigned long	 val;
	unsigned long	 mask;
};

/* Flags of struct sandbox_rules: rules that need this process's own
 * pid or ids, so seccomp.c builds them at sandbox_enter time. */
#define SANDBOX_SIGNAL_SELF	0x01	/* kill/tgkill/tkill: ourselves only */
#define SANDBOX_AFFINITY_SELF	0x02	/* sched_setaffinity: ourselves only */
#define SANDBOX_IDS_SELF	0x04	/* setuid/setgid/seteuid to the ids we
					   already have (a no-op); seteuid(0)
					   fails with EPERM */

struct sandbox_rules {
	const char			*name;
	const int			*allow;		/* any arguments */
	size_t				 nallow;
	const struct sandbox_argrule	*checked;	/* argument-checked */
	size_t				 nchecked;
	const struct sandbox_errno	*deny;		/* errno, not death */
	size_t				 ndeny;
	unsigned			 flags;
	/* allowed only on the dirfd given to sandbox_enter_fd (every
	   argument that is a dirfd: openat's 1st, renameat's 1st+3rd) */
	const int			*dirfd_calls;
	size_t				 ndirfd_calls;
	/* 1: a deny-list (SUPERVISOR, SLURM, UPLINK): everything not in
	   deny is allowed; allow, checked and flags must be empty */
	int				 deny_list;
};

/* The rules of a profile; NULL for an unknown one. */
const struct sandbox_rules	*sandbox_rules(enum sandbox_profile profile);

#endif
