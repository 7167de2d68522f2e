/*
 * sandbox/profiles.c — one allow-list per process role, as data.
 *
 * Trust: none needed; this is a table read by sandbox/seccomp.c.  Every
 * list is grouped by category with a comment saying why the role needs
 * it (the model is OpenSSH's sandbox-seccomp-filter.c and chrony's
 * sys_linux.c).  What is not listed kills the process, but for the
 * deny-lists of the root helpers, SUPERVISOR, SLURM and UPLINK, at the
 * end (see there).  The lists were
 * derived with `strace -f` against real sessions (docs/seccomp.md says
 * how to redo that) and checked with `cdsgated run-session
 * --sandbox-debug`, which reports the first syscall a list lacks.
 *
 * Only x86_64 is checked; syscalls that other architectures lack (open,
 * poll, ...) are guarded with #ifdef __NR_x so the tree builds there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>

#include "sandbox/profiles.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* Argument-checked families (struct sandbox_argrule). */
#define SOCKET_DOMAIN(d)	{ __NR_socket, 0, ~0UL, (d) }
#define IOCTL_REQ(r)		{ __NR_ioctl, 1, 0xffffffffUL, (r) }
#define FCNTL_CMD(c)		{ __NR_fcntl, 1, ~0UL, (c) }
#define PRCTL_OPT(o)		{ __NR_prctl, 0, ~0UL, (o) }
#define NO_EXEC(nr)		{ (nr), 2, PROT_EXEC, 0 }
#define THREAD_FLAGS		(CLONE_VM | CLONE_THREAD | CLONE_SIGHAND)
/* newfstatat(fd, "", st, AT_EMPTY_PATH) is how glibc spells fstat(). */
#define FSTAT_BY_FD		{ __NR_newfstatat, 3, ~0UL, AT_EMPTY_PATH }

/* Sleeping on fds: poll/select where the architecture has them. */
#ifdef __NR_poll
#define NR_POLL_	__NR_poll,
#else
#define NR_POLL_
#endif
#ifdef __NR_select
#define NR_SELECT_	__NR_select,
#else
#define NR_SELECT_
#endif
#define WAIT_FOR_FDS	NR_POLL_ NR_SELECT_ __NR_ppoll, __NR_pselect6

#ifdef __NR_time
#define NR_TIME_	__NR_time,
#else
#define NR_TIME_
#endif
/* A single-threaded server's loop (worker, analytics): sleeping on fds;
 * memory (mmap/mprotect: see the checked lists); time; signals (the
 * signalfd, SIGPIPE handling, restarts, the sanitizers' alternate
 * signal stack). */
#define SERVER_LOOP \
	WAIT_FOR_FDS, \
	__NR_brk, __NR_munmap, __NR_mremap, __NR_madvise, \
	__NR_clock_gettime, __NR_gettimeofday, __NR_nanosleep, \
	__NR_clock_nanosleep, NR_TIME_ \
	__NR_rt_sigprocmask, __NR_rt_sigaction, __NR_rt_sigreturn, \
	__NR_restart_syscall, __NR_sigaltstack

/* An RFB server on fds it has: reads and writes, and new clients on a
 * listening socket it was given (worker, replay). */
#define RFB_SERVING \
	__NR_read, __NR_write, __NR_readv, __NR_writev, \
	__NR_recvfrom, __NR_recvmsg, __NR_sendto, __NR_sendmsg, \
	__NR_close, __NR_fstat, __NR_lseek, \
	__NR_accept, __NR_accept4, __NR_shutdown, \
	__NR_getsockname, __NR_getpeername, \
	__NR_setsockopt, __NR_getsockopt

/* The fcntl commands every role may use on fds it already has. */
#define FCNTL_BASIC \
	FCNTL_CMD(F_GETFL), FCNTL_CMD(F_SETFL), FCNTL_CMD(F_GETFD), \
	FCNTL_CMD(F_SETFD), FCNTL_CMD(F_DUPFD_CLOEXEC)

/* Harmless probes: fail, do not kill.  isatty() on a pipe or file asks
   TCGETS; glibc tries clone3 first and falls back to clone on ENOSYS
   (clone3's flags sit in memory, out of the filter's reach). */
#define DENY_PROBES \
	{ __NR_ioctl, ENOTTY, 1, TCGETS, 0 }, \
	{ __NR_clone3, ENOSYS, SANDBOX_ANY_ARG, 0, 0 }

/* ---- WORKER: the session worker after start-up ---------------------
 * It holds its X connection (AF_UNIX), the MIT-SHM segment, the
 * listening TCP socket and the session log; it accepts RFB clients,
 * reads and writes them and X, and sleeps in poll().  No open, no
 * socket() (socketpair(AF_UNIX) only, for the TLS relay), no exec, no
 * fork, no ptrace, no shm attach. */
static const int worker_allow[] = {
	/* I/O on fds it has (RFB clients, X, the session log, signalfd);
	   new RFB clients on the inherited listening socket */
	RFB_SERVING,
	SERVER_LOOP,
	/* identity queries libraries make; uname: libX11 at a new client */
	__NR_getpid, __NR_gettid, __NR_getuid, __NR_geteuid,
	__NR_getgid, __NR_getegid, __NR_uname,
	/* a lock libraries may take */
	__NR_futex,
	/* randomness for RFB challenges and websocket keys */
	__NR_getrandom,
	/* the session recording's fd (record/writer.c): durable writes */
	__NR_fdatasync, __NR_fsync,
	/* MIT-SHM: detach at exit (attach happened before the filter) */
	__NR_shmdt,
	/* the end */
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule worker_checked[] = {
	FSTAT_BY_FD,
	/* the TLS front door relays each client into LibVNCServer through
	   a socketpair: AF_UNIX only, no other socket can be made */
	{ __NR_socketpair, 0, ~0UL, AF_UNIX },
	IOCTL_REQ(FIONREAD),		/* libX11: bytes queued on the X socket */
	IOCTL_REQ(FIONBIO),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno worker_deny[] = {
	DENY_PROBES,
};

/* ---- XVFB: loaded in the child right before execve(/usr/bin/Xvfb) ----
 * The filter outlives the exec, so this is what Xvfb needs to start (the
 * dynamic loader maps its libraries executable; it reads fonts, keymaps
 * and the cookie; it runs xkbcomp through /bin/sh, which writes a .xkm
 * file to /tmp) and to serve X clients over AF_UNIX with MIT-SHM.  From
 * `strace -f` of a session's Xvfb, /bin/sh and xkbcomp.  Absent (kill):
 * ptrace, process_vm_*, mount, namespaces, chroot, kexec, bpf, modules,
 * keyrings, perf, reboot, swap, io_uring, userfaultfd, AF_INET sockets
 * (refused with EACCES), setuid to another id. */
static const int xvfb_allow[] = {
	/* exec of Xvfb itself; xkbcomp through /bin/sh (fork = clone) */
	__NR_execve, __NR_clone, __NR_wait4,
#ifdef __NR_vfork
	__NR_vfork,
#endif
	/* files: libraries, fonts, keymaps, the cookie; the .xkm file */
	__NR_openat, __NR_close, __NR_read, __NR_write, __NR_writev,
	__NR_pread64, __NR_lseek, __NR_fstat, __NR_newfstatat,
	__NR_statfs, __NR_fstatfs,
#ifdef __NR_access
	__NR_access,
#endif
#ifdef __NR_readlink
	__NR_readlink,
#endif
#ifdef __NR_unlink
	__NR_unlink,
#endif
	__NR_faccessat, __NR_readlinkat, __NR_unlinkat, __NR_getdents64,
	__NR_getcwd, __NR_chdir, __NR_umask,
#ifdef __NR_dup2
	__NR_dup2,
#endif
	__NR_dup3, __NR_pipe2,
	/* X clients over AF_UNIX (socket() is checked below) */
	__NR_bind, __NR_listen, __NR_accept, __NR_accept4,
	__NR_recvmsg, __NR_recvfrom, __NR_sendmsg, __NR_sendto,
	__NR_shutdown, __NR_getsockopt, __NR_setsockopt, __NR_getsockname,
	__NR_getpeername,
	/* MIT-SHM segments its clients share with it (memfd: SHM fds) */
	__NR_shmget, __NR_shmat, __NR_shmdt, __NR_shmctl,
	__NR_memfd_create, __NR_ftruncate,
	/* the event loop; its smart scheduler's timer */
	__NR_epoll_create1, __NR_epoll_ctl, __NR_epoll_wait,
	__NR_epoll_pwait, WAIT_FOR_FDS, __NR_setitimer,
	/* memory, including the loader's executable mappings */
	__NR_brk, __NR_mmap, __NR_munmap, __NR_mremap, __NR_mprotect,
	__NR_madvise, __NR_mincore,
	/* threads and process start-up; Mesa probes the CPUs */
	__NR_futex, __NR_set_robust_list, __NR_set_tid_address, __NR_rseq,
#ifdef __NR_arch_prctl
	__NR_arch_prctl,
#endif
	__NR_prlimit64, __NR_sched_getaffinity,
	__NR_sched_yield, __NR_uname,
	/* time */
	__NR_clock_gettime, __NR_gettimeofday, __NR_nanosleep,
	__NR_clock_nanosleep,
	/* signals */
	__NR_rt_sigaction, __NR_rt_sigprocmask, __NR_rt_sigreturn,
	__NR_restart_syscall, __NR_sigaltstack,
	/* identity (changing it: see SANDBOX_IDS_SELF) */
	__NR_getpid, __NR_getppid, __NR_gettid, __NR_getuid, __NR_geteuid,
	__NR_getgid, __NR_getegid, __NR_getpgrp, __NR_getresuid,
	__NR_getresgid, __NR_getgroups,
	__NR_getrandom,
	/* the end */
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule xvfb_checked[] = {
	SOCKET_DOMAIN(AF_UNIX),
	IOCTL_REQ(FIONREAD),
	IOCTL_REQ(FIONBIO),
	IOCTL_REQ(TIOCGWINSZ),
	FCNTL_BASIC,
	FCNTL_CMD(F_DUPFD),		/* /bin/sh's redirections */
	/* prctl: only questions (libcap asks what it may do), thread names */
	PRCTL_OPT(PR_CAPBSET_READ), PRCTL_OPT(PR_GET_SECUREBITS),
	PRCTL_OPT(PR_GET_NO_NEW_PRIVS), PRCTL_OPT(PR_GET_DUMPABLE),
	PRCTL_OPT(PR_SET_NAME), PRCTL_OPT(PR_GET_NAME),
	PRCTL_OPT(PR_CAP_AMBIENT),	/* it has no capability to raise */
};

static const struct sandbox_errno xvfb_deny[] = {
	DENY_PROBES,
	/* told -nolisten tcp; should it try anyway, it is refused */
	{ __NR_socket, EACCES, 0, AF_INET, 0 },
	{ __NR_socket, EACCES, 0, AF_INET6, 0 },
	{ __NR_socket, EACCES, 0, AF_NETLINK, 0 },
	/* it tries to give its socket directory to root */
	{ __NR_fchown, EPERM, SANDBOX_ANY_ARG, 0, 0 },
#ifdef __NR_chown
	{ __NR_chown, EPERM, SANDBOX_ANY_ARG, 0, 0 },
#endif
};

/* ---- DEID: the de-identification worker -----------------------------
 * Reads the CSV and hierarchies from fds it was handed, computes with
 * a few threads, writes results to fds it was handed.  The strictest
 * list: no open, no socket, no exec, no new processes. */
static const int deid_allow[] = {
	/* I/O on the fds it was handed */
	__NR_read, __NR_write, __NR_readv, __NR_writev,
	__NR_pread64, __NR_pwrite64, __NR_lseek, __NR_fstat, __NR_close,
	WAIT_FOR_FDS,
	/* typed IPC with the parent (common/ipc.c): descriptors arrive and
	   results leave on its socketpair; it can create no other socket */
	__NR_recvmsg, __NR_sendmsg,
	/* memory (mmap/mprotect: see the checked list) */
	__NR_brk, __NR_munmap, __NR_mremap, __NR_madvise,
	/* threads (clone itself is checked) */
	__NR_futex, __NR_set_robust_list, __NR_rseq, __NR_sched_yield,
	__NR_sched_getaffinity, __NR_gettid, __NR_getpid,
	/* signals: glibc installs its thread-cancel handler at the first
	   pthread_create and blocks signals around clone; the sanitizers
	   give each thread an alternate signal stack */
	__NR_rt_sigaction, __NR_rt_sigprocmask, __NR_rt_sigreturn,
	__NR_sigaltstack,
	/* time, for progress and deadlines; CPU time for the report */
	__NR_clock_gettime, __NR_gettimeofday, __NR_clock_nanosleep,
	__NR_nanosleep, __NR_getrusage, __NR_times,
	/* glibc's qsort asks for the machine's memory before it sorts a
	   large array (sysconf(_SC_PHYS_PAGES)) */
	__NR_sysinfo,
	/* randomness for sampling */
	__NR_getrandom,
	/* the end of a thread and of the process */
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule deid_checked[] = {
	FSTAT_BY_FD,
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
	/* threads only: a clone without these flags is a new process */
	{ __NR_clone, 0, THREAD_FLAGS, THREAD_FLAGS },
};

static const struct sandbox_errno deid_deny[] = {
	DENY_PROBES,
};

/* ---- FORWARD: the browser's only way out (gateway/forward.c) -------
 * Holds a socket listening inside the jail's network namespace; for each
 * connection it accepts it makes one TCP socket to the backend and
 * copies bytes both ways.  socket() only for TCP/IP (the backend's
 * family); connect's address is in memory, out of the filter's reach:
 * that it goes only to the backend is forward.c's job and the jail's. */
static const int forward_allow[] = {
	/* copying: the browser's side and the backend's */
	__NR_read, __NR_write, __NR_recvfrom, __NR_sendto, __NR_close,
	__NR_shutdown, __NR_fstat,
	/* connections: accept from the jail, connect to the backend */
	__NR_accept, __NR_accept4, __NR_connect, __NR_getsockopt,
	/* the loop and its signalfd */
	WAIT_FOR_FDS, __NR_signalfd4, __NR_rt_sigprocmask,
	__NR_rt_sigaction, __NR_rt_sigreturn, __NR_restart_syscall,
	__NR_sigaltstack,
	/* memory (mmap/mprotect: see the checked list) */
	__NR_brk, __NR_munmap, __NR_mremap, __NR_madvise,
	/* time, identity queries, the end */
	__NR_clock_gettime, __NR_gettimeofday, __NR_getpid, __NR_gettid,
	__NR_uname, __NR_futex,
	/* jansson seeds its hash tables (the session log's events) */
	__NR_getrandom,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule forward_checked[] = {
	FSTAT_BY_FD,
	SOCKET_DOMAIN(AF_INET), SOCKET_DOMAIN(AF_INET6),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno forward_deny[] = {
	DENY_PROBES,
};

/* ---- ANALYTICS: cdsgate-analytics after confinement -----------------
 * Serves HTTP on its inherited listening socket from a select() loop and
 * reads the front end and the mounted datasets through directory fds it
 * holds (chrooted, read-only binds).  openat only without write access
 * or O_CREAT; no socket(), no exec, no new processes or threads. */
static const int analytics_allow[] = {
	/* HTTP clients on the inherited listening socket */
	__NR_accept, __NR_accept4, __NR_shutdown, __NR_getsockname,
	__NR_getpeername, __NR_setsockopt, __NR_getsockopt,
	__NR_recvfrom, __NR_recvmsg, __NR_sendto, __NR_sendmsg,
	/* files and replies: read them, send them (sendfile), list the
	   mount dir */
	__NR_read, __NR_write, __NR_readv, __NR_writev, __NR_pread64,
	__NR_sendfile, __NR_lseek, __NR_fstat, __NR_close, __NR_getdents64,
	SERVER_LOOP,	/* libmicrohttpd's timeouts, Date header */
	__NR_getpid, __NR_gettid, __NR_getuid, __NR_futex, __NR_getrandom,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule analytics_checked[] = {
	FSTAT_BY_FD,
	/* read-only opens beneath the held directory fds */
	{ __NR_openat, 2, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY },
	IOCTL_REQ(FIONBIO),
	IOCTL_REQ(FIONREAD),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno analytics_deny[] = {
	DENY_PROBES,
};

/* ---- AUDIT: the audit key holder after the key is loaded ------------
 * Holds the signing key, the log fd (O_APPEND) and the log's directory
 * fd; answers typed messages on its socketpair with the api.  Appends
 * and fsyncs; after each checkpoint it replaces <log>.head through the
 * directory fd: openat/renameat/unlinkat only with that fd
 * (sandbox_enter_fd).  No socket, no exec, no fork, no other open. */
static const int audit_allow[] = {
	/* typed IPC with the api (common/ipc.c) */
	__NR_recvmsg, __NR_sendmsg, WAIT_FOR_FDS,
	/* the log and the head file: append, sync, close */
	__NR_write, __NR_writev, __NR_read, __NR_pread64, __NR_lseek,
	__NR_fsync, __NR_fdatasync, __NR_fstat, __NR_close,
	/* memory (mmap/mprotect: see the checked list) */
	__NR_brk, __NR_munmap, __NR_mremap, __NR_madvise,
	/* record timestamps; jansson's and OpenSSL's randomness */
	__NR_clock_gettime, __NR_gettimeofday, __NR_getrandom,
	/* signals, identity queries, locks libraries take, the end */
	__NR_rt_sigprocmask, __NR_rt_sigaction, __NR_rt_sigreturn,
	__NR_restart_syscall, __NR_getpid, __NR_gettid, __NR_futex,
	/* the sanitizers' alternate signal stack */
	__NR_sigaltstack,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule audit_checked[] = {
	FSTAT_BY_FD,
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno audit_deny[] = {
	DENY_PROBES,
};

/* Only on the directory fd given to sandbox_enter_fd. */
static const int audit_dirfd[] = {
	__NR_openat, __NR_unlinkat, __NR_renameat, __NR_renameat2,
};

/* access/rename/unlink where the architecture still has them (glibc
 * uses them on x86_64; newer ones only have the *at forms). */
#ifdef __NR_access
#define NR_ACCESS_	__NR_access,
#else
#define NR_ACCESS_
#endif
#ifdef __NR_rename
#define NR_RENAME_	__NR_rename,
#else
#define NR_RENAME_
#endif
#ifdef __NR_unlink
#define NR_UNLINK_	__NR_unlink,
#else
#define NR_UNLINK_
#endif
#define OLD_PATH_CALLS	NR_ACCESS_ NR_RENAME_ NR_UNLINK_

/* ---- GATE: the api's gate runner, and across execve the deid CLI ----
 * The runner forks and execs `cdsgate deid anonymize` per import and
 * reads its stderr from a pipe.  The filter outlives the exec, so the
 * list also covers the CLI (the loader maps it executable; it opens the
 * spool's CSV and hierarchies, writes and renames the output beneath the
 * release dir) and its deid worker (threads; it stacks the DEID filter
 * with seccomp(2)).  From `strace -f` of 033's imports.  Trade-off: this
 * is a broad list (execve, clone, openat, PROT_EXEC); it is kept out of
 * the api (no execve there) and the runner accepts only `cdsgate deid
 * anonymize` argv.  Absent (kill): socket() (socketpair AF_UNIX only),
 * connect/bind, ptrace, mount, namespaces, chroot, bpf, setuid. */
static const int gate_allow[] = {
	/* the gate itself: fork, exec, wait; the CLI forks its worker */
	__NR_execve, __NR_clone, __NR_wait4, __NR_kill,
	/* files: the loader, the spool, the output; the runner's pipe */
	__NR_openat, __NR_close, __NR_read, __NR_write, __NR_pread64,
	__NR_pwrite64, __NR_lseek, __NR_fstat, __NR_newfstatat,
	OLD_PATH_CALLS
#ifdef __NR_dup2
	__NR_dup2,
#endif
	__NR_faccessat, __NR_renameat, __NR_unlinkat, __NR_fsync,
	__NR_fdatasync, __NR_ftruncate, __NR_dup3, __NR_pipe2,
	__NR_close_range, __NR_getcwd, __NR_readlinkat,
	/* the sanitizers' runtime makes raw old-style calls (openat is
	   allowed anyway, so these add nothing an attacker lacks) */
#ifdef __NR_readlink
	__NR_readlink,
#endif
#ifdef __NR_open
	__NR_open,
#endif
#ifdef __NR_stat
	__NR_stat, __NR_lstat,
#endif
	/* IPC between the CLI and its worker (socketpair: checked) */
	__NR_recvmsg, __NR_sendmsg, WAIT_FOR_FDS,
	/* memory, with the loader's executable mappings */
	__NR_brk, __NR_mmap, __NR_mprotect, __NR_munmap, __NR_mremap,
	__NR_madvise,
	/* process start-up, threads, limits, the worker's own filter */
	__NR_futex, __NR_set_robust_list, __NR_set_tid_address, __NR_rseq,
#ifdef __NR_arch_prctl
	__NR_arch_prctl,
#endif
	__NR_prlimit64, __NR_sched_getaffinity, __NR_sched_yield,
	__NR_seccomp, __NR_sysinfo, __NR_getrusage, __NR_times,
	__NR_getrandom,
	/* identity queries, time, signals, the end */
	__NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid, __NR_getpid,
	__NR_getppid, __NR_gettid, __NR_clock_gettime, __NR_gettimeofday,
	__NR_clock_nanosleep, __NR_nanosleep, __NR_rt_sigprocmask,
	__NR_rt_sigaction, __NR_rt_sigreturn, __NR_restart_syscall,
	__NR_sigaltstack, __NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule gate_checked[] = {
	{ __NR_socketpair, 0, ~0UL, AF_UNIX },
	FCNTL_BASIC,
	/* prctl: die with the parent, no new privileges, not dumpable */
	PRCTL_OPT(PR_SET_PDEATHSIG), PRCTL_OPT(PR_SET_NO_NEW_PRIVS),
	PRCTL_OPT(PR_GET_NO_NEW_PRIVS), PRCTL_OPT(PR_SET_DUMPABLE),
	PRCTL_OPT(PR_GET_DUMPABLE),
};

static const struct sandbox_errno gate_deny[] = {
	DENY_PROBES,
};

/* ---- API: cdsgated api after start-up ------------------------------
 * Serves HTTP on its inherited UNIX socket from libmicrohttpd's epoll fd
 * (made before the filter); keeps its SQLite store (db, -wal, -shm:
 * pread/pwrite, fsync, POSIX locks, MAP_SHARED -shm); writes the spool,
 * the release and mount dirs; asks the key holder and the gate runner
 * over their socketpairs.  No socket(), no exec, no fork, no ptrace:
 * the exec lives in the gate runner (GATE). */
static const int api_allow[] = {
	/* HTTP clients on the inherited listening socket */
	__NR_accept, __NR_accept4, __NR_shutdown, __NR_getsockname,
	__NR_getpeername, __NR_setsockopt, __NR_getsockopt,
	__NR_recvfrom, __NR_sendto, __NR_recvmsg, __NR_sendmsg,
	__NR_epoll_wait, __NR_epoll_pwait, __NR_epoll_ctl,
	/* the store, the spool, the release and mount dirs */
	__NR_openat, __NR_close, __NR_read, __NR_write, __NR_readv,
	__NR_writev, __NR_pread64, __NR_pwrite64, __NR_lseek, __NR_fstat,
	__NR_newfstatat, __NR_fsync, __NR_fdatasync, __NR_ftruncate,
	__NR_getdents64, __NR_fchmod, __NR_fchmodat, __NR_faccessat,
	__NR_renameat, __NR_unlinkat, __NR_mkdirat, __NR_getcwd,
	__NR_readlinkat, __NR_statfs, __NR_fstatfs,
	OLD_PATH_CALLS
#ifdef __NR_mkdir
	__NR_mkdir,
#endif
#ifdef __NR_rmdir
	__NR_rmdir,
#endif
#ifdef __NR_chmod
	__NR_chmod,
#endif
#ifdef __NR_readlink
	__NR_readlink,
#endif
	/* reaping the key holder and the gate runner at the end */
	__NR_wait4,
	SERVER_LOOP,
	__NR_getpid, __NR_gettid, __NR_getuid, __NR_geteuid, __NR_futex,
	__NR_getrandom, __NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule api_checked[] = {
	IOCTL_REQ(FIONBIO),
	IOCTL_REQ(FIONREAD),
	FCNTL_BASIC,
	/* SQLite's POSIX locks on the db and its -shm */
	FCNTL_CMD(F_GETLK), FCNTL_CMD(F_SETLK), FCNTL_CMD(F_SETLKW),
	FCNTL_CMD(F_OFD_GETLK), FCNTL_CMD(F_OFD_SETLK),
	FCNTL_CMD(F_OFD_SETLKW),
	/* the -shm is mapped MAP_SHARED; nothing is ever executable */
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno api_deny[] = {
	DENY_PROBES,
};

/* ---- TLS: the session's TLS key holder (gateway/tlsfront.c) ---------
 * Loaded after the key is parsed (and wiped), libgcrypt's DES and one
 * scrypt warmed up, before it reads a byte.  It is handed every client
 * socket and relay end over its SOCK_SEQPACKET socket to the worker
 * (recvmsg with SCM_RIGHTS), runs TLS and VeNCrypt on them, and copies
 * bytes.  It makes no socket of any kind (not even socketpair: the
 * worker makes the relay's pair), accepts nothing, opens nothing. */
static const int tls_allow[] = {
	/* clients, relays and the worker's socket: fds it was handed */
	__NR_read, __NR_write, __NR_recvfrom, __NR_sendto,
	__NR_recvmsg, __NR_sendmsg, __NR_close,
	/* the loop and its signalfd; memory (mmap/mprotect checked) */
	SERVER_LOOP,
	/* identity queries (OpenSSL's fork check), locks, the end */
	__NR_getpid, __NR_gettid, __NR_futex,
	/* OpenSSL's DRBG reseeds; jansson; scrypt salts are not made here */
	__NR_getrandom,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule tls_checked[] = {
	FSTAT_BY_FD,
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno tls_deny[] = {
	DENY_PROBES,
};

/* ---- FRONTDOOR: the one front door (gateway/frontdoor.c) ------------
 * Loaded after the key is parsed (and wiped), the privileges dropped,
 * libgcrypt's DES and one scrypt warmed up, before it reads a byte.  It
 * accepts researchers on its inherited listening socket, runs TLS and
 * VeNCrypt on them, makes one TCP socket per login to the session's
 * worker (bound to the source address the workers accept, then
 * connect: the address is in memory, out of the filter's reach; which
 * one is the parent's table's) and copies bytes.  No open, no exec, no
 * fork, no socket of any other family. */
static const int frontdoor_allow[] = {
	/* clients and workers: accept, connect, copy */
	__NR_accept, __NR_accept4, __NR_bind, __NR_connect,
	__NR_getsockopt, __NR_setsockopt, __NR_shutdown,
	__NR_read, __NR_write, __NR_recvfrom, __NR_sendto,
	/* the parent's messages */
	__NR_recvmsg, __NR_close,
	/* the loop and its signalfd; memory (mmap/mprotect checked) */
	SERVER_LOOP,
	/* identity queries (OpenSSL's fork check), locks, the end */
	__NR_getpid, __NR_gettid, __NR_futex,
	/* OpenSSL's DRBG reseeds; jansson */
	__NR_getrandom,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule frontdoor_checked[] = {
	FSTAT_BY_FD,
	SOCKET_DOMAIN(AF_INET), SOCKET_DOMAIN(AF_INET6),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno frontdoor_deny[] = {
	DENY_PROBES,
};

/* ---- PGMOUNT: the api's PostgreSQL mounter (api/pgrunner.c) --------
 * Answers MOUNT/UNMOUNT on its socketpair with the api: libpq connects
 * to the analytics database (AF_UNIX or TCP, maybe TLS), reads
 * ~/.pgpass and the passwd entry, and the CSV is read from the release
 * dir.  No exec, no fork, no bind/listen/accept, no writes to files
 * but its fds (it opens read-only: O_WRONLY/O_RDWR/O_CREAT are not
 * checked by the filter, so the user's file modes are what stop them).
 * From `strace -f` of pgmount and test 039. */
static const int pgmount_allow[] = {
	/* the api's requests; the server connection */
	__NR_connect, __NR_getsockopt, __NR_setsockopt, __NR_getsockname,
	__NR_getpeername, __NR_sendto, __NR_recvfrom, __NR_sendmsg,
	__NR_recvmsg, __NR_shutdown,
	/* the CSV, ~/.pgpass, /etc/passwd, TLS configuration */
	__NR_openat, __NR_close, __NR_read, __NR_write, __NR_pread64,
	__NR_lseek, __NR_fstat, __NR_newfstatat, __NR_faccessat,
	__NR_readlinkat, __NR_getdents64,
	OLD_PATH_CALLS
	SERVER_LOOP,
	__NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid, __NR_getpid,
	__NR_gettid, __NR_futex, __NR_getrandom, __NR_uname,
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule pgmount_checked[] = {
	/* the server's socket: local or TCP/IP, nothing else */
	SOCKET_DOMAIN(AF_UNIX), SOCKET_DOMAIN(AF_INET), SOCKET_DOMAIN(AF_INET6),
	IOCTL_REQ(FIONBIO), IOCTL_REQ(FIONREAD),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno pgmount_deny[] = {
	DENY_PROBES,
};

/*
 * JAILINIT: pid 1 of the browser's pid namespace, once it has forked the
 * process that execs Chromium (sandbox/namespace.c, ns_init_fork).  It
 * only waits for signals, forwards the stop signals and reaps.  kill is
 * not argument-checked: in its own pid namespace it sees only the jail's
 * processes (the browser's, same user).
 */
static const int jailinit_allow[] = {
	__NR_rt_sigtimedwait, __NR_rt_sigprocmask, __NR_rt_sigreturn,
	__NR_restart_syscall, __NR_kill, __NR_wait4, __NR_waitid,
	__NR_close, __NR_exit, __NR_exit_group,
	__NR_sigaltstack,	/* the sanitizers' runtime, at its exit */
};

static const struct sandbox_errno jailinit_deny[] = {
	DENY_PROBES,
};

/*
 * SUPERVISOR: the session supervisor, root, once its namespaces,
 * cgroup and directories are made.  Not an allow-list: the supervisor
 * forks the session's children, and the browser's child still makes its
 * jail (mounts, pivot_root, setns) after every restart, so it keeps the
 * system calls those need; each child then loads its own allow-list.
 * This list is what a root helper never needs: debugging other
 * processes, kernel modules and programs, the kernel's keyring, the
 * system clock, swap, reboot, file handles that bypass the path walk.
 * The answer is EPERM, not death: the filter is inherited by every
 * child (Chromium's crash handler may try ptrace), and a refusal is
 * enough.  Built with AddressSanitizer, LeakSanitizer's exit check
 * needs ptrace: that build leaves ptrace out.
 */
#define DENY_EPERM(nr)	{ (nr), EPERM, SANDBOX_ANY_ARG, 0, 0 }

#ifndef __SANITIZE_ADDRESS__
#define DENY_PTRACE	DENY_EPERM(__NR_ptrace),
#else
#define DENY_PTRACE
#endif
#ifdef __NR_kexec_file_load
#define DENY_KEXEC_FILE	DENY_EPERM(__NR_kexec_file_load),
#else
#define DENY_KEXEC_FILE
#endif
#ifdef __NR_iopl
#define DENY_PORTS	DENY_EPERM(__NR_iopl), DENY_EPERM(__NR_ioperm),
#else
#define DENY_PORTS
#endif

/* What no root helper of ours needs (SUPERVISOR, SLURM, UPLINK). */
#define DENY_ROOT							\
	DENY_PTRACE							\
	DENY_EPERM(__NR_process_vm_readv),				\
	DENY_EPERM(__NR_process_vm_writev),				\
	DENY_EPERM(__NR_bpf), DENY_EPERM(__NR_perf_event_open),		\
	DENY_EPERM(__NR_userfaultfd),					\
	/* kernel modules and kernels */				\
	DENY_EPERM(__NR_init_module), DENY_EPERM(__NR_finit_module),	\
	DENY_EPERM(__NR_delete_module), DENY_EPERM(__NR_kexec_load),	\
	DENY_KEXEC_FILE							\
	DENY_EPERM(__NR_reboot),					\
	/* swap, accounting, quotas, the kernel log */			\
	DENY_EPERM(__NR_swapon), DENY_EPERM(__NR_swapoff),		\
	DENY_EPERM(__NR_acct), DENY_EPERM(__NR_quotactl),		\
	DENY_EPERM(__NR_syslog),					\
	/* the kernel's keyring */					\
	DENY_EPERM(__NR_keyctl), DENY_EPERM(__NR_add_key),		\
	DENY_EPERM(__NR_request_key),					\
	/* handles that skip the path walk */				\
	DENY_EPERM(__NR_open_by_handle_at),				\
	DENY_EPERM(__NR_name_to_handle_at),				\
	/* the system clock */						\
	DENY_EPERM(__NR_settimeofday), DENY_EPERM(__NR_clock_settime),	\
	DENY_EPERM(__NR_clock_adjtime), DENY_EPERM(__NR_adjtimex),	\
	/* hardware ports */						\
	DENY_PORTS

static const struct sandbox_errno supervisor_deny[] = {
	DENY_ROOT
};

/*
 * SLURM and UPLINK: the Slurm runner's two root helpers, the control
 * plane's Slurm helper (control/slurm.c: Slurm's commands and munge,
 * the nodes' sealed lines on slurm_listen) and a compute node's uplink
 * (control/node.c: the jobs' connections on node_socket, munge, the
 * control plane).  Each runs programs it does not own (sbatch, squeue,
 * scontrol, munge, unmunge ...), which inherit the filter across
 * execve, so an allow-list would be theirs as much as ours: a
 * deny-list, loaded once the helper's sockets are open and before it
 * reads a byte from the network or a job.  SUPERVISOR's list, and
 * what the supervisor keeps for the browser's jail but these never
 * make: mounts (the old and the new mount API), pivot_root, chroot,
 * new namespaces (unshare, clone with a CLONE_NEW* flag) and joining
 * others (setns).  clone3's flags sit in memory, out of the filter's
 * reach: it gets ENOSYS, and glibc falls back to clone, which is
 * checked.  Two names, one table: the logs and /proc say which helper
 * it is.
 */
#define DENY_CLONE_NS(f)	{ __NR_clone, EPERM, 0, (f), (f) }

static const struct sandbox_errno helper_deny[] = {
	DENY_ROOT
	/* mounts */
	DENY_EPERM(__NR_mount), DENY_EPERM(__NR_umount2),
	DENY_EPERM(__NR_pivot_root), DENY_EPERM(__NR_chroot),
#ifdef __NR_fsopen
	DENY_EPERM(__NR_open_tree), DENY_EPERM(__NR_move_mount),
	DENY_EPERM(__NR_fsopen), DENY_EPERM(__NR_fsconfig),
	DENY_EPERM(__NR_fsmount), DENY_EPERM(__NR_fspick),
#endif
#ifdef __NR_mount_setattr
	DENY_EPERM(__NR_mount_setattr),
#endif
	/* namespaces */
	DENY_EPERM(__NR_unshare), DENY_EPERM(__NR_setns),
	DENY_CLONE_NS(CLONE_NEWNS), DENY_CLONE_NS(CLONE_NEWUTS),
	DENY_CLONE_NS(CLONE_NEWIPC), DENY_CLONE_NS(CLONE_NEWUSER),
	DENY_CLONE_NS(CLONE_NEWPID), DENY_CLONE_NS(CLONE_NEWNET),
	DENY_CLONE_NS(CLONE_NEWCGROUP),
	{ __NR_clone3, ENOSYS, SANDBOX_ANY_ARG, 0, 0 },
};

#define RULES(nm, pfx, fl) { nm, pfx##_allow, N(pfx##_allow), \
	pfx##_checked, N(pfx##_checked), pfx##_deny, N(pfx##_deny), fl }

/* ---- REPLAY: the replay worker (cli/replay-worker.c) ---------------
 * The recording is untrusted: the worker loads this before it reads a
 * byte, then is handed the recording's descriptor (and ffmpeg's stdin
 * or, with --serve, the loopback listener the CLI bound).  It reads the
 * recording by pread, writes stdout, stderr and ffmpeg's pipe, answers
 * the CLI over its socket and serves VNC viewers on the listener.  No
 * open, no socket(), no exec, no fork, no signals to others.  With
 * --serve the CLI loads it too once the worker serves: it then only
 * waits for the worker's last message and reaps it (wait4; the worker
 * has no children to wait for). */
static const int replay_allow[] = {
	/* the recording (pread), stdout/stderr; viewers on the listening
	   socket bound before the filter */
	__NR_pread64,
	RFB_SERVING,
	SERVER_LOOP,
	/* identity queries libraries make; a lock they may take */
	__NR_getpid, __NR_gettid, __NR_getuid, __NR_geteuid,
	__NR_getgid, __NR_getegid, __NR_futex,
	/* randomness for RFB challenges */
	__NR_getrandom,
	/* the CLI reaps the worker; LibVNCServer's screen, made once the
	   header is read, asks the host name */
	__NR_wait4, __NR_uname,
	/* the end */
	__NR_exit, __NR_exit_group,
};

static const struct sandbox_argrule replay_checked[] = {
	FSTAT_BY_FD,
	/* LibVNCServer asks RLIMIT_NOFILE at each new viewer: a query
	   (no new limit) only */
	{ __NR_prlimit64, 2, ~0UL, 0 },
	IOCTL_REQ(FIONBIO),
	FCNTL_BASIC,
	NO_EXEC(__NR_mmap), NO_EXEC(__NR_mprotect),
};

static const struct sandbox_errno replay_deny[] = {
	DENY_PROBES,
};

static const struct sandbox_rules profiles[SANDBOX_PROFILE_COUNT] = {
	[SANDBOX_PROFILE_WORKER] = RULES("worker", worker, SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_XVFB] = RULES("xvfb", xvfb, SANDBOX_SIGNAL_SELF |
	    SANDBOX_AFFINITY_SELF | SANDBOX_IDS_SELF),
	[SANDBOX_PROFILE_DEID] = RULES("deid", deid, SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_FORWARD] = RULES("forward", forward,
	    SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_ANALYTICS] = RULES("analytics", analytics,
	    SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_AUDIT] = { "audit", audit_allow, N(audit_allow),
	    audit_checked, N(audit_checked), audit_deny, N(audit_deny),
	    SANDBOX_SIGNAL_SELF, audit_dirfd, N(audit_dirfd) },
	[SANDBOX_PROFILE_GATE] = RULES("gate", gate, SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_API] = RULES("api", api, SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_TLS] = RULES("tls", tls, SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_FRONTDOOR] = RULES("frontdoor", frontdoor,
	    SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_PGMOUNT] = RULES("pgmount", pgmount,
	    SANDBOX_SIGNAL_SELF),
	[SANDBOX_PROFILE_JAILINIT] = { "jailinit", jailinit_allow,
	    N(jailinit_allow), NULL, 0, jailinit_deny, N(jailinit_deny), 0 },
	[SANDBOX_PROFILE_SUPERVISOR] = { "supervisor", NULL, 0, NULL, 0,
	    supervisor_deny, N(supervisor_deny), 0, NULL, 0, 1 },
	[SANDBOX_PROFILE_SLURM] = { "slurm", NULL, 0, NULL, 0,
	    helper_deny, N(helper_deny), 0, NULL, 0, 1 },
	[SANDBOX_PROFILE_UPLINK] = { "uplink", NULL, 0, NULL, 0,
	    helper_deny, N(helper_deny), 0, NULL, 0, 1 },
	[SANDBOX_PROFILE_REPLAY] = RULES("replay", replay,
	    SANDBOX_SIGNAL_SELF),
};

const struct sandbox_rules *
sandbox_rules(enum sandbox_profile profile)
{
	if ((unsigned)profile >= SANDBOX_PROFILE_COUNT)
		return NULL;
	return &profiles[profile];
}
