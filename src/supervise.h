/* supervise.h -- launch a server, watch it come up or die, and stop all of it.
 *
 * The server's argv is spawned directly (never through a shell) in a session of its own,
 * with stdout and stderr on a pipe that gauntlet copies to the cell's log file line by
 * line (so it can see the ready line and cap the file). Death is a pidfd event, readiness
 * an HTTP probe scheduled on the loop: nothing here sleeps in a loop.
 */
#ifndef GAUNTLET_SUPERVISE_H
#define GAUNTLET_SUPERVISE_H

#include <regex.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "cgroup.h"
#include "loop.h"
#include "profile.h"
#include "util.h"

/* A log bigger than this is cut: the rest is drained and counted, not written. */
#define SUPERVISE_MAX_LOG ((size_t)512 << 20)
/* Interval between readiness probes: a 64th of the time since the spawn, between these
 * two. Readiness is seen within about 1.6% of the time the server took to get there (a
 * server ready in 1 s is probed every 16 ms by then), and never more than 200 ms late.
 * Sooner after a log line: at once after the engine's ready line, and for an engine with
 * no known ready line SUPERVISE_PROBE_MIN after the last probe (servers often say when
 * they are ready). */
#define SUPERVISE_PROBE_MIN (10 * USEC_PER_MSEC)
#define SUPERVISE_PROBE_INTERVAL (200 * USEC_PER_MSEC)
#define SUPERVISE_PROBE_SHARE 64

struct server_spec {
        char *const *argv;          /* resolved argv; argv[0] is looked up in PATH */
        const char *path;           /* the program to start instead of argv[0]'s PATH lookup,
                                       or NULL */
        char *const *env;           /* "KEY=VALUE" added to gauntlet's own environment */
        const char *workdir;        /* NULL: gauntlet's cwd */
        const char *log_path;       /* created (0600), truncated */
        const char *token;          /* exported as GAUNTLET_ATTEMPT=<token> */
        const char *health_url;     /* full URL of the readiness probe */
        enum ready_kind ready;
        const char *ready_line;     /* ERE or NULL: when seen, probe at once */
        usec_t straggler_grace;     /* server_stop: the SIGTERM grace left to its other
                                       processes once the main one is gone; 0: the whole
                                       grace */
        const struct cgroup_base *cgroups; /* the server is born in a cgroup of its own,
                                       "gauntlet-<token>" under this (token required);
                                       NULL: its processes are found through /proc */
};

struct server {
        pid_t pid;
        int pidfd;
        uint64_t starttime;         /* /proc start time, to recognise the process later */
        usec_t started;             /* monotonic, at spawn */
        usec_t ready_at;            /* 0 until the probe passed */
        usec_t exited_at;           /* 0 while alive */
        bool exited;
        int exit_code;              /* -1 unless it exited by itself with a status */
        int exit_signal;            /* 0 unless a signal ended it */
        bool ready_line_seen;
        /* log */
        int log_pipe;               /* read end, non-blocking; -1 after EOF */
        int log_fd;
        size_t log_bytes;           /* bytes written to the log */
        size_t log_dropped;         /* bytes past SUPERVISE_MAX_LOG or after log_error, not written */
        int log_error;              /* 0, or the negative errno that stopped the log (disk full) */
        struct buf line;            /* partial line, capped */
        /* probe */
        struct loop *loop;
        CURL *probe;
        bool probe_in_flight;
        usec_t next_probe;
        usec_t probe_started;       /* when the last probe started */
        struct buf probe_body;
        char *health_url;
        enum ready_kind ready;
        regex_t ready_re;
        bool has_ready_re;
        char *token;
        usec_t straggler_grace;     /* from the spec */
        struct cgroup *cgroup;      /* its own cgroup, or NULL; removed by server_stop */
};

/* Spawns the server. On failure nothing is left running and *ret is untouched; -ENOENT
 * when argv[0] is not found, other negative errnos as posix_spawn reports them. */
int server_start(struct loop *l, const struct server_spec *spec, struct server **ret);

enum server_event { SERVER_READY, SERVER_DIED, SERVER_DEADLINE, SERVER_SIGNAL };

/* Waits as events until the server is ready, dies, `deadline` passes or a signal arrives. */
enum server_event server_wait_ready(struct server *s, usec_t deadline);

/* Gives the loop a turn of at most `until`: used while checks or benchmarks run, so that
 * death and log lines are seen. Collects the exit status if the server died. */
bool server_alive(struct server *s);

/* Waits as events until the server exits or `until` passes; returns whether it exited. */
bool server_wait_exit(struct server *s, usec_t until);

/* Reads what is left in the log pipe after death (until EOF or `until`). */
void server_drain_log(struct server *s, usec_t until);

/* Stops the server and everything it started: SIGTERM, grace, SIGKILL, confirmed by
 * procs_terminate (with a cgroup: killed, empty, then removed). Collects the main
 * process's status. *ret_killed (optional): how many needed SIGKILL. Returns 0, or -ETIME
 * when something could not be ended by `deadline`. */
int server_stop(struct server *s, usec_t grace, usec_t deadline, size_t *ret_killed);

void server_free(struct server *s);

/* "exited with status 1", "killed by SIGKILL", "still running" (static or into buf). */
const char *server_describe_exit(const struct server *s, char buf[static 64]);

/* A free TCP port on host, chosen by the kernel (a server gets its own port per launch).
 * Cells that run side by side in n_slots processes (n_slots > 1) draw from disjoint sets
 * of ports, one per slot, so two of them are never handed the same port. */
int supervise_free_port(const char *host, size_t slot, size_t n_slots, int *ret);

/* Whether something already listens on host:port: 1 taken, 0 free, negative errno when
 * it cannot tell (an unknown host). A port that cannot be bound only because a dead
 * server's connections still hold it (nothing accepts there) is free: it was not lost to
 * another process. */
int supervise_port_taken(const char *host, int port);

#endif
