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

#include "text/buf.h"
#include "proc/cgroup.h"
#include "io/loop.h"
#include "base/profile.h"
#include "base/util.h"
#include "base/verdict.h"

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

struct server;
struct server_spec;

/* What a launcher's scheduler decided about a server (a Slurm job's time limit, its node
 * failing): the attempt's verdict, instead of a diagnosis of the log. */
struct server_outcome {
        enum verdict verdict;
        const char *cause;          /* static */
        char *evidence;             /* the caller frees */
};

/* A launcher runs the server somewhere other than here (docs/slurm.md). gauntlet then
 * spawns the launcher's client (srun) in the server's place: with the server's environment,
 * session, log pipe and token, so that the client's exit stands for the server's end and
 * its output is the server's log. The hooks say what only the launcher knows. A server
 * without a launcher (the usual case) is spawned here and is placed from the start. */
struct server_launcher_ops {
        /* The argv to spawn for spec (the server's own argv goes inside it, its program
         * first), and a state for this one server (freed with free_state). */
        int (*prepare)(const void *config, const struct server_spec *spec, char ***ret_argv, void **ret_state);
        /* Where the server runs. 1: placed; *ret_host is the address gauntlet talks to
         * (callee allocates). 0: not yet; ask again at *ret_next. -ETIME: it waited longer
         * than the launcher allows (server_outcome says why); -EINTR: a signal came. Either
         * way *ret_note may be a line for the log (callee allocates). */
        int (*place)(void *state, struct loop *l, usec_t *ret_next, char **ret_host, char **ret_note);
        /* Before the client is ended: ends the server where it runs (SIGTERM, up to grace for
         * the client to exit, then for good) and waits until nothing of it is left there.
         * 0, or -ETIME when it could not be confirmed by deadline. */
        int (*stop)(void *state, struct server *s, usec_t grace, usec_t deadline);
        /* After the client exited by itself, or placing gave up: 1 and *ret when the
         * launcher decided the outcome; 0 when the server ended on its own, with *exit_code
         * and *exit_signal set to the server's own status where the launcher knows it. */
        int (*outcome)(void *state, struct loop *l, int *exit_code, int *exit_signal, struct server_outcome *ret);
        void (*free_state)(void *state);
        /* What a killed earlier run left: ends the server of the attempt whose token is
         * given, where it runs. Returns how many were found (>= 0) or a negative errno. */
        int (*cleanup)(const void *config, struct loop *l, const char *token, usec_t grace, usec_t deadline);
        /* Variables of gauntlet's own environment the client must not get; NULL-ended. */
        const char *const *drop_env;
};

/* Given in a server_spec, it must outlive the server (server_free). */
struct server_launcher {
        const struct server_launcher_ops *ops;
        const void *config;         /* the launcher's settings, outliving every server */
};

/* Who may hold the server's port besides the server's own processes (the matrix's
 * `port_owner:`): nobody (the default: any = false, commands = NULL), any process, or the
 * processes of these commands (procs_command_is: a proxy such as docker-proxy). */
struct server_port_owner {
        bool any;
        char *const *commands;
};

/* One address of the server's host, as resolved once at the start. */
struct server_addr {
        int family;                 /* AF_INET or AF_INET6 */
        unsigned char addr[16];     /* network byte order; the first 4 for AF_INET */
};

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
        /* With a launcher only: health_url is ignored until the server is placed; then it
         * is http://HOST:port + health_path, HOST the place's (server_base_url). */
        const struct server_launcher *launcher;
        int port;
        const char *health_path;
        const char *name;           /* what the launcher names the job after (the cell id) */
        /* A server spawned here (no launcher) and port > 0: the host its clients reach it
         * at, resolved once (getaddrinfo) by server_start. The address gauntlet then talks
         * to is the first of them that a listening socket of the server's reaches (or one
         * port_owner allows), found before each readiness probe until there is one;
         * health_url is then replaced by http://ADDRESS:port + health_path and
         * server_base_url gives http://ADDRESS:port. NULL: health_url as given. */
        const char *host;
        const struct server_port_owner *port_owner; /* NULL: the server's processes only */
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
        /* launcher */
        const struct server_launcher *launcher; /* NULL: spawned here */
        void *launcher_state;
        bool placed;                /* it runs somewhere gauntlet can reach; always with no launcher */
        usec_t next_place;
        int port;
        char *health_path;
        char *base_url;             /* with a launcher, once placed: http://HOST:PORT */
        uint64_t *own_listeners;    /* listening sockets on port seen to be the server's, or
                                       held by a process port_owner allows */
        size_t n_own_listeners;
        struct server_addr *addrs;  /* spec->host resolved, in getaddrinfo's order; NULL:
                                       no address of its own (a launcher, no host) */
        size_t n_addrs;
        ssize_t addr;               /* the index in addrs gauntlet talks to; -1 until found */
        bool owner_any;             /* spec->port_owner, copied */
        char **owner_commands;
        usec_t foreign_since;       /* since when another process holds every address (0: it
                                       does not) */
        char *port_note;            /* a process other than the server's holds the port, as
                                       port_owner allows: said so; NULL otherwise */
};

/* Spawns the server. On failure nothing is left running and *ret is untouched; -ENOENT
 * when argv[0] is not found, other negative errnos as posix_spawn reports them. */
int server_start(struct loop *l, const struct server_spec *spec, struct server **ret);

/* SERVER_PORT_TAKEN: with spec->host, for SUPERVISE_FOREIGN_GRACE every address of the
 * host was reached by a listener of another process (not one port_owner allows) and by none
 * of the server's: it cannot listen there (server_verify_port names the holder). */
enum server_event { SERVER_READY, SERVER_DIED, SERVER_DEADLINE, SERVER_SIGNAL, SERVER_PORT_TAKEN };

/* How long another process may hold every address of the server's before the wait for
 * readiness stops (SERVER_PORT_TAKEN), rather than at the startup timeout: a listener that
 * goes away meanwhile (one shutting down) is no reason to stop. */
#define SUPERVISE_FOREIGN_GRACE (2 * USEC_PER_SEC)

/* With a launcher: waits until the server was placed (SERVER_READY; s->started is then the
 * time it was, so the startup timeout counts from there), the client died, the launcher
 * gave up (SERVER_DEADLINE: server_launcher_outcome says why) or a signal came. At once
 * SERVER_READY for a server spawned here. */
enum server_event server_wait_placed(struct server *s);

/* Waits as events until the server is ready, dies, `deadline` passes or a signal arrives
 * (first until it is placed, see server_wait_placed). */
enum server_event server_wait_ready(struct server *s, usec_t deadline);

/* With a launcher, once placed: "http://HOST:PORT", where the server is reached; spawned
 * here with spec->host, once the readiness probe found its address: "http://ADDRESS:PORT"
 * ("http://[::1]:PORT"), numeric, so no request resolves the name again. NULL otherwise:
 * the caller's own address stands. */
const char *server_base_url(const struct server *s);

/* After the server died or placing gave up: 1 and *ret when the launcher decided the
 * outcome (caller frees ret->evidence); 0 otherwise (always for a server spawned here, and
 * for one still running where it was placed),
 * with s->exit_code/exit_signal the server's own where the launcher knows better than
 * its client's status. Negative errno when out of memory. */
int server_launcher_outcome(struct server *s, struct server_outcome *ret);

/* Whether what listens on the server's port is the server (docs/supervisor.md "The server
 * answering"): every listening socket that a connection to the server's address (s->addr)
 * reaches must be held by one of the server's processes (its cgroup's members, else its
 * tree, session and token, as server_stop finds them) or by one port_owner allows. The
 * sockets a connection reaches: those bound to exactly that address (an IPv4 address also
 * as ::ffff:a.b.c.d), else the wildcards (0.0.0.0, and :: also for IPv4: /proc does not say
 * IPV6_V6ONLY, so it counts). A listener on another address, one the client never uses, is
 * nobody's business. Before the address is found (a server that died or never became
 * ready) every address of the host is looked at. A socket once seen to be the server's is not looked up again, so a call
 * costs a read of /proc/net/tcp{,6} unless the listener changed. Returns 0 when it is the
 * server's (s->port_note says when port_owner let another process hold it), or when nothing
 * listens, or for a server with no address of its own (a launcher's: the launcher's job and
 * node are the bound); 1 when another process listens there, with *ret_evidence naming it
 * (caller frees); negative errno when it cannot tell. */
int server_verify_port(struct server *s, char **ret_evidence);

/* What port_owner let through (a proxy holds the port), said once for the report; NULL when
 * only the server's processes listen. Owned by s. */
const char *server_port_note(const struct server *s);

/* Writes a note of gauntlet's ("[gauntlet: ...]") as a line of its own into the log. */
void server_log_note(struct server *s, const char *text);

/* Gives the loop a turn of at most `until`: used while checks or benchmarks run, so that
 * death and log lines are seen. Collects the exit status if the server died. */
bool server_alive(struct server *s);

/* The CPU time the server's processes (as server_stop would find them) have run, in clock
 * ticks (procs_cpu_ticks). -EREMOTE when a launcher runs it elsewhere: its CPU is not this
 * host's to read. */
int server_cpu_ticks(struct server *s, uint64_t *ret);

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
