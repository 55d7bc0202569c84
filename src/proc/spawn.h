/* spawn.h -- starting a child process: the one place that calls posix_spawn.
 *
 * Every child gauntlet starts (servers, version commands, Slurm's commands, the workers of
 * a side-by-side sweep) goes through spawn_start, and its options say the whole policy: where it runs
 * (session, process group), which signals it gets back, where its standard streams go,
 * its environment and working directory. The child is exec'ed at once (posix_spawn:
 * nothing runs between fork and exec), never through a shell, and comes back with a pidfd,
 * so its exit is an event on the loop.
 *
 * A zeroed struct spawn_options is the plainest child: the caller's session and group,
 * SIGINT/SIGTERM/SIGHUP back to their defaults, the caller's stdin/stdout/stderr and
 * environment. A new policy is one more field whose zero value means "as before".
 *
 * A child that must be born in a cgroup (into_cgroup: a server's own, cgroup.h) cannot come
 * from posix_spawn, which has no such attribute in this C library: it comes from clone3
 * with CLONE_INTO_CGROUP (Linux 5.7), so it is in the cgroup before its first instruction,
 * or, where clone3 refuses that, from fork, the child moving itself into the cgroup
 * (writing its cgroup.procs) before anything else. Either way the child then does by hand
 * what the options ask of posix_spawn (system calls only, no allocation), execs at once,
 * and a failed exec comes back to the caller as its errno, through a close-on-exec pipe.
 */
#ifndef GAUNTLET_SPAWN_H
#define GAUNTLET_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "text/buf.h"
#include "base/util.h"

struct loop;

/* Where the child runs. */
enum spawn_group {
        SPAWN_GROUP_INHERIT,        /* the caller's process group and session: a terminal's
                                     * Ctrl-C reaches it as well as the caller */
        SPAWN_GROUP_NEW,            /* a process group of its own (pgid = pid) in the caller's
                                     * session: kill(-pid) ends the child and what it started */
        SPAWN_GROUP_NEW_SESSION,    /* a session of its own (sid = pgid = pid), no controlling
                                     * terminal (setsid) */
};

/* Which signal dispositions go back to SIG_DFL in the child (a signal the caller ignores
 * would stay ignored across exec). The child's signal mask is always emptied: gauntlet
 * blocks SIGINT/SIGTERM/SIGHUP to read them from a signalfd, and a child that inherited the
 * mask could not be stopped by them. */
enum spawn_signals {
        SPAWN_SIGNALS_STOP,         /* SIGINT, SIGTERM, SIGHUP */
        SPAWN_SIGNALS_ALL,          /* every signal */
};

/* Where one of the child's standard streams goes. */
enum spawn_stdio {
        SPAWN_STDIO_INHERIT,        /* the caller's descriptor */
        SPAWN_STDIO_NULL,           /* /dev/null */
        SPAWN_STDIO_PIPE,           /* a new pipe; the caller's end is in struct spawn's fd[] */
        SPAWN_STDIO_STDOUT,         /* stderr only: wherever stdout goes (2>&1; one pipe for both) */
};

struct spawn_options {
        const char *path;           /* the program; NULL: argv[0]. A name without '/' is looked
                                     * up in PATH, a path is run as it is */
        char *const *argv;          /* NULL-terminated, argv[0] set */
        char *const *env;           /* the child's whole environment ("KEY=VALUE"); NULL:
                                     * gauntlet's own (environ) */
        const char *workdir;        /* NULL: the caller's working directory */
        enum spawn_group group;
        enum spawn_signals signals;
        bool default_sigpipe;       /* SIGPIPE back to SIG_DFL too (SPAWN_SIGNALS_ALL has it) */
        enum spawn_stdio stdio[3];  /* stdin, stdout, stderr */
        bool into_cgroup;           /* born in the cgroup whose directory cgroup_fd is open on */
        int cgroup_fd;
        bool cgroup_by_write;       /* into_cgroup by fork and the child's own write to
                                     * cgroup.procs even where clone3 could do it (tests) */
};

/* A started child. The descriptors are the caller's (close-on-exec), to close with
 * spawn_release or to take over (TAKE_FD). */
struct spawn {
        pid_t pid;
        int pidfd;                  /* always open: the child's exit is an event (waitid P_PIDFD) */
        int fd[3];                  /* the caller's end of each SPAWN_STDIO_PIPE stream: the
                                     * write end for stdin, the read end for stdout/stderr,
                                     * non-blocking (the child's end blocks); -1 otherwise */
        bool own_group;             /* SPAWN_GROUP_NEW or _NEW_SESSION: its pgid is its pid */
};

/* Starts the child. Returns 0 and fills *ret; on failure *ret is untouched, no descriptor
 * is left open and nothing is left running: -ENOENT when the program is not found, other
 * negative errnos as posix_spawn reports them (into_cgroup: as the kernel refused the
 * cgroup, -EACCES, -EBUSY...), and when no pidfd can be had for the child (pidfd_open) its
 * errno, after the child was killed (its whole group when it has one of its own) and
 * reaped. */
int spawn_start(const struct spawn_options *o, struct spawn *ret);

/* Closes what the caller still holds of s (pidfd, pipe ends). Neither kills nor reaps. */
void spawn_release(struct spawn *s);

/* For a child that cannot be watched after all: SIGKILL (to its whole group when it has
 * one of its own), waits for it, then spawn_release. */
void spawn_abort(struct spawn *s);

/* The child's half of a parent-death policy, which posix_spawn cannot set up: a child that
 * must not outlive its parent calls this first, after exec. It gets `sig` when the parent
 * dies. Returns 0, -ESRCH when `parent` is already gone (this process was re-parented
 * before the call), or the errno of prctl. */
int spawn_die_with_parent(int sig, pid_t parent);

/* ---- a command run to its end for its output ---------------------------------------- */

/* One command for spawn_run_capture. The child: argv[0] looked up in PATH, gauntlet's
 * environment (or env), a process group of its own (a deadline kills all it started), every signal
 * at its default, stdin from /dev/null, stdout and stderr on pipes. */
struct spawn_capture {
        char *const *argv;          /* in: NULL-terminated */
        char *const *env;           /* in: the child's whole environment; NULL: gauntlet's */
        size_t max_output;          /* in: bytes kept of each stream (0: BUF_DEFAULT_MAX); the
                                     * rest is read and dropped, so a chatty child never
                                     * blocks on its pipe */
        struct buf out[2];          /* out: stdout, stderr (buf_str: always a string, possibly
                                     * cut mid-character at the cap); spawn_capture_release */
        int error;                  /* out: 0 when it was started, else spawn_start's negative
                                     * errno (-ENOENT: not installed; -EINVAL: no argv) */
        int exit_code;              /* out: 0..255 when it exited by itself; -1 when it was
                                     * not started or a signal ended it */
        int signal;                 /* out: the signal that ended it (SIGKILL when the
                                     * deadline did: timed_out); 0 when it exited */
        bool timed_out;             /* out: still running at the deadline (its group killed) */
};

/* What spawn_run_capture does when a signal caught by the loop (loop_catch_signals)
 * arrives while the commands run. */
enum spawn_capture_on_signal {
        SPAWN_CAPTURE_STOP,         /* kill them all and return -EINTR */
        SPAWN_CAPTURE_FINISH,       /* let them run to their end or the deadline (a scancel
                                     * must still go out); *ret_interrupted says it came */
};

/* Starts runs[0..n) at once and waits, as events on l (their exits are pidfds, their output
 * pipes, the deadline the loop's `until`), until every one has exited and closed its
 * output, or `timeout` passes. Then what is left is killed: SIGKILL to the process group of
 * each (also of one that exited but left something holding its pipes); every child started
 * is reaped before the return, and while it runs it is registered (procs_register_child)
 * so that an orphan reaper does not take its status. One that cannot be started says so in
 * its `error`; the others run. Returns 0 (each run says how it went), -ENOMEM, -EINTR
 * (SPAWN_CAPTURE_STOP and a signal came: every child killed), or another negative errno
 * of the loop (every child killed). *ret_interrupted (optional): a caught signal came.
 * Release each run's buffers with spawn_capture_release whatever the result. */
int spawn_run_capture(struct loop *l, struct spawn_capture *runs, size_t n, usec_t timeout,
                      enum spawn_capture_on_signal on_signal, bool *ret_interrupted);
void spawn_capture_release(struct spawn_capture *c);

/* Where a program named without '/' is found: the first regular, executable file of that
 * name on this process's PATH (not a server's environment; no PATH or an empty one:
 * /usr/local/bin:/usr/bin:/bin), as posix_spawnp searches it. 0 and *ret (caller frees);
 * -ENOENT when there is none, -EACCES when one is there but not executable, -ENOMEM. */
int spawn_find_on_path(const char *name, char **ret);

#endif
