/* procs.h -- finding and ending a server's processes, including the ones that hid.
 *
 * Engines start workers; some ignore SIGTERM, some move to a session of their own, some
 * outlive their parent. Where the server has a cgroup of its own (cgroup.h), its processes
 * are that cgroup's members and nothing else is searched: nothing leaves a cgroup by
 * forking. Otherwise they are found three ways at once: the descendants of its main
 * process, the members of its session, and every process whose environment carries the
 * attempt's token (GAUNTLET_ATTEMPT=<token>, which gauntlet puts in the server's
 * environment and every child inherits, unless a child empties its environment). The
 * token also lets the next run find what a SIGKILLed gauntlet left behind without ever
 * touching a reused PID.
 */
#ifndef GAUNTLET_PROCS_H
#define GAUNTLET_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "proc/cgroup.h"
#include "io/loop.h"
#include "base/util.h"

#define PROCS_TOKEN_VAR "GAUNTLET_ATTEMPT"

struct procs_query {
        /* When set: the server's processes are this cgroup's members, and the three ways
         * below are not searched; procs_terminate kills the cgroup and waits for it to be
         * empty (it does not remove it). */
        const struct cgroup *cgroup;
        const char *token;   /* match GAUNTLET_ATTEMPT=<token> in /proc/PID/environ; may be NULL */
        pid_t root;          /* include descendants of this pid (and itself); 0: none */
        pid_t sid;           /* include members of this session; 0: none */
        /* include gauntlet's own children that no owner registered (procs_register_child),
         * and their descendants: orphans of a server's tree that gauntlet, a subreaper,
         * adopted. A daemon that double-forked, left the session and emptied its
         * environment is one, while gauntlet lives. For a process that runs one server at
         * a time (a sweep, or one worker of it). */
        bool adopted;
        /* procs_terminate: the server's main process. Once it is gone (or when it was
         * gone before the stop), whatever is left is a straggler and gets only
         * straggler_grace after SIGTERM, not the whole grace. 0: no main process.
         * Either way, once every process left ignores SIGTERM (SigIgn in
         * /proc/PID/status), none can act on it: SIGKILL comes at once. */
        pid_t main;
        usec_t straggler_grace;
};

/* Lists the live (non-zombie) processes matching q, never gauntlet itself. *ret is a
 * malloc'ed array (caller frees), possibly empty. */
int procs_find(const struct procs_query *q, pid_t **ret, size_t *ret_n);

/* Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat); -ESRCH if gone. */
int procs_starttime(pid_t pid, uint64_t *ret);
/* Whether pid runs and is the process that started at `starttime` (procs_starttime): not
 * gone, not a reused pid, and not a zombie. A process killed while its parent lives on, or
 * orphaned where nothing reaps promptly (a container whose first process is no init), stays
 * a zombie, start time and all, until it is reaped: it holds nothing and does nothing. */
bool procs_alive(pid_t pid, uint64_t starttime);
/* The CPU time the processes pids ran, in clock ticks (sysconf(_SC_CLK_TCK)): user and
 * system, theirs and their waited-for children's (fields 14 to 17 of /proc/PID/stat). A
 * process gone meanwhile adds nothing. */
int procs_cpu_ticks(const pid_t *pids, size_t n, uint64_t *ret);

/* Generates a fresh random token (32 hex digits) into buf. */
int procs_new_token(char buf[static 33]);

/* Ends every process matching q: SIGTERM, wait as events (pidfds on the loop) up to grace,
 * then SIGKILL and wait again, repeating the search until none is left or `deadline`
 * passes. With a cgroup: SIGKILL through cgroup.kill (each member's pidfd where the kernel
 * has none), and "none left" is cgroup.events saying "populated 0", waited for as an event. Zombie children of gauntlet (orphans it adopted as a subreaper) are reaped,
 * except registered children (procs_register_child) whose status someone still wants.
 * *ret_killed (optional) counts processes that needed SIGKILL.
 * Returns 0 when nothing is left, -ETIME when something survived the deadline (unkillable:
 * D state), or another negative errno. */
int procs_terminate(struct loop *l, const struct procs_query *q, usec_t grace, usec_t deadline,
                    size_t *ret_killed);

/* A child whose exit status its owner collects itself: never reaped as an adopted orphan
 * (procs_terminate's reaping). */
int procs_register_child(pid_t pid);
void procs_unregister_child(pid_t pid);
/* Makes gauntlet the reaper of orphans from its children's trees (PR_SET_CHILD_SUBREAPER). */
int procs_become_subreaper(void);

/* ---- who listens on a port --------------------------------------------------------------
 * A server's port answers for whoever listens on it: before gauntlet believes what answers,
 * it finds the listening sockets in /proc/net/tcp and /proc/net/tcp6 and the processes whose
 * descriptors hold them (/proc/PID/fd -> "socket:[INODE]"). */

/* One TCP socket in state LISTEN. */
struct procs_listener {
        uint64_t inode;
        int family;                 /* AF_INET or AF_INET6 */
        unsigned char addr[16];     /* network byte order; the first 4 for AF_INET */
        uint32_t uid;               /* the socket's owner */
};

/* Appends to *v the LISTEN sockets on port found in text, the contents of /proc/net/tcp
 * (family AF_INET) or /proc/net/tcp6 (AF_INET6). Lines that do not parse are skipped.
 * 0 or -ENOMEM (*v and *n then hold what was appended before). */
int procs_parse_listeners(const char *text, int family, int port, struct procs_listener **v, size_t *n);

/* The LISTEN sockets on port in this network namespace, IPv4 and IPv6. *ret is malloc'ed
 * (caller frees), possibly empty. Negative errno when /proc/net/tcp cannot be read. */
int procs_listeners(int port, struct procs_listener **ret, size_t *ret_n);

/* Which process holds the socket `inode`: one of pids[0..n) when pids is not NULL, else any
 * process of the system. 1 and *ret_pid when found; 0 when none of the processes it could
 * look at holds it; -EACCES when it was not found and some descriptor tables could not be
 * read (another user's processes). */
int procs_socket_holder(const pid_t *pids, size_t n, uint64_t inode, pid_t *ret_pid);

/* "pid 123 (comm) 'cmdline'", the command escaped (control characters and bytes that are
 * not UTF-8 as \xNN) and cut; "pid 123" alone when /proc tells nothing. NULL: out of memory. */
char *procs_describe(pid_t pid);

/* Whether process pid is the command `name`: its /proc comm, or the base name of its
 * argv[0] (comm is cut at 15 bytes). false when /proc tells nothing. */
bool procs_command_is(pid_t pid, const char *name);

#endif
