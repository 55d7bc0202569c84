/* test_supervise.c -- spawning, death, stopping and finding hidden processes, with real
 * children (/bin/sh scripts): workers that ignore SIGTERM, move to new sessions, outlive
 * their parent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "proc/procs.h"
#include "proc/supervise.h"
#include "base/util.h"

struct env {
        struct loop *loop;
        char dir[64];
        char log[128];
        char token[33];
};

static int setup(void **state) {
        struct env *e = calloc(1, sizeof(*e));
        assert_non_null(e);
        assert_int_equal(loop_new(&e->loop), 0);
        strcpy(e->dir, "/tmp/gauntlet-sup-XXXXXX");
        assert_non_null(mkdtemp(e->dir));
        snprintf(e->log, sizeof(e->log), "%s/server.log", e->dir);
        assert_int_equal(procs_new_token(e->token), 0);
        assert_int_equal(procs_become_subreaper(), 0);
        *state = e;
        return 0;
}

static int teardown(void **state) {
        struct env *e = *state;
        /* whatever a failed test left behind */
        struct procs_query q = {.token = e->token};
        procs_terminate(e->loop, &q, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL);
        loop_free(e->loop);
        unlink(e->log);
        rmdir(e->dir);
        free(e);
        return 0;
}

static struct server *start_sh_in(struct env *e, const char *script, const struct cgroup_base *cgroups,
                                  usec_t straggler_grace) {
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        char *env[] = {"FIXTURE_VAR=1", NULL};
        struct server_spec spec = {
                .argv = argv,
                .env = env,
                .log_path = e->log,
                .token = e->token,
                .health_url = "http://127.0.0.1:9/health", /* discard port: never ready */
                .ready = READY_HTTP_200,
                .cgroups = cgroups,
                .straggler_grace = straggler_grace,
        };
        struct server *s = NULL;
        assert_int_equal(server_start(e->loop, &spec, &s), 0);
        return s;
}

static struct server *start_sh(struct env *e, const char *script) {
        return start_sh_in(e, script, NULL, 0);
}

static size_t count_procs(struct env *e) {
        struct procs_query q = {.token = e->token};
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        assert_int_equal(procs_find(&q, &pids, &n), 0);
        return n;
}

static void test_death_is_an_event(void **state) {
        struct env *e = *state;
        struct server *s = start_sh(e, "echo loading; echo 'RuntimeError: boom' >&2; sleep 0.3; exit 3");
        usec_t t0 = now_usec();
        enum server_event ev = server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC);
        assert_int_equal(ev, SERVER_DIED);
        assert_int_equal(s->exit_code, 3);
        assert_int_equal(s->exit_signal, 0);
        /* noticed promptly: well under the 300 ms the script slept plus 100 ms */
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_int_equal(server_stop(s, USEC_PER_SEC, now_usec() + 5 * USEC_PER_SEC, NULL), 0);
        server_free(s);
        _cleanup_free_ char *log = NULL;
        size_t len;
        assert_int_equal(read_file_capped(e->log, 1 << 20, &log, &len), 0);
        assert_non_null(strstr(log, "loading\n"));
        assert_non_null(strstr(log, "RuntimeError: boom\n"));
}

static void test_signal_death(void **state) {
        struct env *e = *state;
        struct server *s = start_sh(e, "kill -9 $$");
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DIED);
        assert_int_equal(s->exit_signal, SIGKILL);
        char buf[64];
        assert_string_equal(exit_describe(s->exit_code, s->exit_signal, buf), "killed by SIGKILL");
        server_stop(s, USEC_PER_SEC, now_usec() + 5 * USEC_PER_SEC, NULL);
        server_free(s);
}

static void test_deadline(void **state) {
        struct env *e = *state;
        struct server *s = start_sh(e, "exec sleep 30");
        usec_t t0 = now_usec();
        assert_int_equal(server_wait_ready(s, t0 + 300 * USEC_PER_MSEC), SERVER_DEADLINE);
        assert_true(now_usec() - t0 >= 300 * USEC_PER_MSEC);
        usec_t t1 = now_usec();
        assert_int_equal(server_stop(s, 5 * USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL), 0);
        /* sleep honours SIGTERM: stopping takes as long as the server needs, not the grace */
        assert_true(now_usec() - t1 < USEC_PER_SEC);
        assert_int_equal(s->exit_signal, SIGTERM);
        server_free(s);
        assert_int_equal(count_procs(e), 0);
}

static void test_stubborn_workers(void **state) {
        struct env *e = *state;
        /* a main process and workers that ignore SIGTERM; one moves to a session of its own
         * and one is orphaned by a subshell that exits */
        struct server *s = start_sh(e, "trap '' TERM; "
                                       "setsid sh -c \"trap '' TERM HUP; exec sleep 300\" & "
                                       "(sh -c \"trap '' TERM; sleep 300\" &) ; "
                                       "sh -c \"trap '' TERM; sleep 300\" & "
                                       "echo started; wait");
        /* let the workers start */
        usec_t until = now_usec() + 5 * USEC_PER_SEC;
        while (count_procs(e) < 6 && now_usec() < until)
                loop_iterate(e->loop, now_usec() + 20 * USEC_PER_MSEC);
        assert_true(count_procs(e) >= 4);
        size_t killed = 0;
        usec_t t0 = now_usec();
        assert_int_equal(server_stop(s, 300 * USEC_PER_MSEC, now_usec() + 10 * USEC_PER_SEC, &killed), 0);
        assert_true(killed >= 3);
        assert_true(now_usec() - t0 < 5 * USEC_PER_SEC);
        assert_true(s->exited);
        server_free(s);
        assert_int_equal(count_procs(e), 0);
}

static void test_outlives_parent(void **state) {
        struct env *e = *state;
        /* the main process exits 0 at once, leaving a worker behind in a new session */
        struct server *s = start_sh(e, "setsid sh -c \"trap '' TERM; exec sleep 300\" & sleep 0.2; exit 0");
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DIED);
        assert_int_equal(s->exit_code, 0);
        assert_true(count_procs(e) >= 1);
        assert_int_equal(server_stop(s, 200 * USEC_PER_MSEC, now_usec() + 10 * USEC_PER_SEC, NULL), 0);
        server_free(s);
        assert_int_equal(count_procs(e), 0);
}

/* Whether pid is running (not a zombie, not gone). */
static bool running(pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (read_file_capped(path, 4096, &text, &len) < 0)
                return false;
        char *rp = strrchr(text, ')');
        return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* The pid a script wrote into the file, waited for up to 5 s. */
static pid_t pid_from(struct env *e, const char *file) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", e->dir, file);
        usec_t until = now_usec() + 5 * USEC_PER_SEC;
        for (;;) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                if (read_file_capped(path, 64, &text, &len) == 0 && len > 0 && text[len - 1] == '\n') {
                        unlink(path);
                        return (pid_t)atoi(text);
                }
                assert_true(now_usec() < until);
                loop_iterate(e->loop, now_usec() + 20 * USEC_PER_MSEC);
        }
}

/* A daemon as daemon(3) makes one, with an empty environment: nobody's descendant, in a
 * session of its own, without the token, ignoring SIGTERM. With a cgroup it is a member,
 * and the stop kills the cgroup, waits for it to be empty and removes it; without one, it
 * is still found while the test (a subreaper, as gauntlet is) lives: it adopted it. */
static void test_daemon(void **state) {
        struct env *e = *state;
        _cleanup_free_ char *script = strdup_printf(
                "(setsid env -i /bin/sh -c \"trap '' TERM HUP; echo \\$\\$ >%s/daemon.tmp; mv %s/daemon.tmp %s/daemon; "
                "exec sleep 300\" </dev/null >/dev/null 2>&1 &); echo started; exec sleep 300",
                e->dir, e->dir, e->dir);
        struct cgroup_base *b = NULL;
        int have = cgroup_base_open(&b, NULL);
        for (int with = 0; with < 2; with++) {
                if (with && have < 0) {
                        print_message("no cgroups here: the cgroup half is not run\n");
                        break;
                }
                struct server *s = start_sh_in(e, script, with ? b : NULL, 0);
                pid_t daemon = pid_from(e, "daemon");
                assert_true(running(daemon));
                /* hidden from the three /proc ways */
                assert_int_equal(count_procs(e), 1);
                _cleanup_free_ char *cg_path = with ? strdup(s->cgroup->path) : NULL;
                struct stat st;
                assert_true(!with || stat(cg_path, &st) == 0);
                size_t killed = 0;
                assert_int_equal(server_stop(s, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, &killed), 0);
                assert_true(killed >= 1);
                assert_false(running(daemon));
                assert_true(!with || (stat(cg_path, &st) < 0 && errno == ENOENT));
                server_free(s);
        }
        cgroup_base_free(b);
}

/* Once the main process is gone, a straggler that ignores SIGTERM cannot act on it and is
 * killed at once; one that catches it gets the straggler grace. */
static void test_stragglers(void **state) {
        struct env *e = *state;
        struct cgroup_base *b = NULL;
        (void)cgroup_base_open(&b, NULL); /* either way */
        static const char *const helper[] = {
                "trap '' TERM; exec sleep 300",                       /* ignores it */
                "trap 'echo got TERM' TERM; while :; do sleep 0.05; done", /* catches it, stays */
        };
        for (size_t i = 0; i < ELEMENTSOF(helper); i++) {
                _cleanup_free_ char *script = strdup_printf("sh -c \"%s\" & echo $! >%s/helper; exec sleep 300",
                                                            helper[i], e->dir);
                struct server *s = start_sh_in(e, script, b, 600 * USEC_PER_MSEC);
                pid_t h = pid_from(e, "helper");
                /* the trap is set when the helper is a shell with a handler or SIG_IGN */
                usec_t until = now_usec() + 5 * USEC_PER_SEC;
                for (;;) {
                        char path[64];
                        snprintf(path, sizeof(path), "/proc/%d/status", (int)h);
                        _cleanup_free_ char *st = NULL;
                        size_t len;
                        assert_int_equal(read_file_capped(path, 1 << 16, &st, &len), 0);
                        const char *field = i == 0 ? "SigIgn:" : "SigCgt:";
                        char *p = strstr(st, field);
                        assert_non_null(p);
                        if ((strtoull(p + strlen(field), NULL, 16) >> (SIGTERM - 1)) & 1)
                                break;
                        assert_true(now_usec() < until);
                        loop_iterate(e->loop, now_usec() + 10 * USEC_PER_MSEC);
                }
                usec_t t0 = now_usec();
                size_t killed = 0;
                assert_int_equal(server_stop(s, 30 * USEC_PER_SEC, now_usec() + 60 * USEC_PER_SEC, &killed), 0);
                usec_t took = now_usec() - t0;
                assert_int_equal(s->exit_signal, SIGTERM);
                assert_true(killed >= 1); /* the helper (and the sleep it runs, perhaps) */
                assert_false(running(h));
                if (i == 0)
                        assert_true(took < 500 * USEC_PER_MSEC); /* not the 600 ms grace */
                else
                        assert_true(took >= 600 * USEC_PER_MSEC && took < 20 * USEC_PER_SEC);
                server_free(s);
        }
        cgroup_base_free(b);
}

static void test_spawn_failure(void **state) {
        struct env *e = *state;
        char *argv[] = {"gauntlet-no-such-engine", "--port", "1", NULL};
        struct server_spec spec = {.argv = argv, .log_path = e->log, .token = e->token, .health_url = "http://x/"};
        struct server *s = NULL;
        assert_int_equal(server_start(e->loop, &spec, &s), -ENOENT);
        assert_null(s);
}

static void test_log_cap_is_per_line(void **state) {
        struct env *e = *state;
        /* a 200 KB line without a newline and then a normal line: nothing breaks */
        struct server *s = start_sh(e, "head -c 200000 /dev/zero | tr '\\0' x; echo; echo done; exit 1");
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DIED);
        server_drain_log(s, now_usec() + USEC_PER_SEC);
        assert_int_equal(s->log_bytes, 200000 + 1 + 5);
        server_stop(s, USEC_PER_SEC, now_usec() + 5 * USEC_PER_SEC, NULL);
        server_free(s);
}

static void test_starttime(void **state) {
        uint64_t a = 0, b = 0;
        assert_int_equal(procs_starttime(getpid(), &a), 0);
        assert_int_equal(procs_starttime(getpid(), &b), 0);
        assert_true(a > 0);
        assert_int_equal(a, b);
        assert_int_equal(procs_starttime(999999999, &a), -ESRCH);
        assert_true(procs_alive(getpid(), b));
        assert_false(procs_alive(getpid(), b + 1)); /* a reused pid */
        assert_false(procs_alive(999999999, b));

        /* a child that exited and is not reaped yet: a zombie, start time and all, not alive */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(0);
        siginfo_t si = {0};
        assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
        assert_int_equal(procs_starttime(pid, &a), 0);
        assert_false(procs_alive(pid, a));
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        assert_false(procs_alive(pid, a));
}

/* The CPU time of processes from /proc/PID/stat: this one's after 0.3 s of spinning agrees
 * with getrusage's (its own and its waited-for children's, the earlier tests' servers) to a
 * few ticks; a process that is gone adds nothing. */
static void test_cpu_ticks(void **state) {
        (void)state;
        struct rusage ru;
        double used;
        do {
                for (volatile int i = 0; i < 100000; i++)
                        ;
                assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
                used = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                       ru.ru_stime.tv_usec / 1e6;
        } while (used < 0.3);
        struct rusage children;
        assert_int_equal(getrusage(RUSAGE_CHILDREN, &children), 0);
        used += (double)children.ru_utime.tv_sec + children.ru_utime.tv_usec / 1e6 +
                (double)children.ru_stime.tv_sec + children.ru_stime.tv_usec / 1e6;
        pid_t pids[] = {getpid(), 999999999};
        uint64_t ticks = 0, alone = 0;
        /* alone first: this process's ticks only grow, so the second reading, with the
         * gone one, is at least the first (the other way round a tick between the two
         * readings failed the test) */
        assert_int_equal(procs_cpu_ticks(pids, 1, &alone), 0);
        assert_int_equal(procs_cpu_ticks(pids, 2, &ticks), 0);
        double hz = (double)sysconf(_SC_CLK_TCK);
        print_message("procs_cpu_ticks: %.2f s, getrusage %.2f s\n", (double)ticks / hz, used);
        assert_true(fabs((double)ticks / hz - used) < 0.05 + 0.05 * used);
        assert_true(ticks >= alone && ticks - alone <= 2); /* the gone one: nothing */
        assert_int_equal(procs_cpu_ticks(pids + 1, 1, &ticks), 0);
        assert_true(ticks == 0);
}

/* Slots of a side-by-side sweep draw disjoint ports: every port slot k of 4 is given maps
 * to k, so no two slots can be handed the same one; alone (1 slot) any port will do. */
static void test_free_port_slots(void **state) {
        (void)state;
        for (size_t slot = 0; slot < 4; slot++)
                for (int i = 0; i < 50; i++) {
                        int port = 0;
                        assert_int_equal(supervise_free_port("127.0.0.1", slot, 4, &port), 0);
                        assert_true(port > 0 && port < 65536);
                        assert_int_equal((size_t)(port / 2) % 4, slot);
                }
        int port = 0;
        assert_int_equal(supervise_free_port("127.0.0.1", 0, 1, &port), 0);
        assert_true(port > 0);
}

/* A port counts as taken while something listens on it, and as free again once that
 * socket is closed. */
static void test_port_taken(void **state) {
        (void)state;
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        assert_true(fd >= 0);
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 4), 0);
        socklen_t len = sizeof(sa);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
        int port = ntohs(sa.sin_port);
        assert_int_equal(supervise_port_taken("127.0.0.1", port), 1);
        close(fd);
        assert_int_equal(supervise_port_taken("127.0.0.1", port), 0);
}

/* A server that accepted a connection without SO_REUSEADDR and then died leaves its side of
 * the connection behind (FIN_WAIT2 while the client holds its end open, as libcurl's
 * connection cache does): the port cannot be bound, but nobody listens there. That is not
 * a port lost to another process (an old llama-server was launched again twice per crash
 * for it). */
static void test_port_held_by_dead_connections(void **state) {
        (void)state;
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(lfd >= 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(lfd, 4), 0);
        socklen_t len = sizeof(sa);
        assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
        int port = ntohs(sa.sin_port);
        int cfd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(cfd >= 0);
        assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        int afd = accept(lfd, NULL, NULL);
        assert_true(afd >= 0);
        /* the server dies: its listener and its accepted socket close, the client's stays */
        close(lfd);
        close(afd);
        /* the bind a server would make fails ... */
        int probe = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        assert_int_equal(setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
        struct sockaddr_in again = sa;
        int b = bind(probe, (struct sockaddr *)&again, sizeof(again));
        int bind_errno = errno;
        close(probe);
        if (b == 0)
                skip(); /* this kernel lets it bind: nothing to tell apart */
        assert_int_equal(bind_errno, EADDRINUSE);
        /* ... yet nothing listens: the port is not someone else's */
        assert_int_equal(supervise_port_taken("127.0.0.1", port), 0);
        close(cfd);
}

/* /proc/net/tcp and tcp6 as the kernel prints them: only LISTEN (0A) sockets on the port,
 * with their address in network order, owner and inode; junk lines are skipped. */
static void test_parse_listeners(void **state) {
        static const char tcp[] =
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
                "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n"
                "   1: 0100007F:1F90 0100007F:CD5C 01 00000000:00000000 00:00000000 00000000  1000        0 4243 1 0\n"
                "   2: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4244 1 0\n"
                "   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4245 1 0\n"
                "   4: garbage\n";
        static const char tcp6[] =
                "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
                "   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   0 0 777 1 0\n";
        struct procs_listener *v = NULL;
        size_t n = 0;
        assert_int_equal(procs_parse_listeners(tcp, AF_INET, 8080, &v, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(v[0].inode, 4242);
        assert_int_equal(v[0].uid, 1000);
        assert_int_equal(v[0].family, AF_INET);
        assert_memory_equal(v[0].addr, ((unsigned char[]){127, 0, 0, 1}), 4);
        assert_int_equal(v[1].inode, 4245);
        assert_memory_equal(v[1].addr, ((unsigned char[]){0, 0, 0, 0}), 4);
        assert_int_equal(procs_parse_listeners(tcp6, AF_INET6, 8080, &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[2].inode, 777);
        struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;
        assert_memory_equal(v[2].addr, &lo, 16);
        free(v);
}

/* A socket this process listens on: found among the listeners of its port, held by this
 * process and by no other, and described by pid and command. */
static void test_socket_holder(void **state) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 1), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
        int port = ntohs(sa.sin_port);
        struct procs_listener *v = NULL;
        size_t n = 0;
        assert_int_equal(procs_listeners(port, &v, &n), 0);
        assert_int_equal(n, 1);
        pid_t self = getpid(), other = getppid(), got = 0;
        assert_int_equal(procs_socket_holder(&self, 1, v[0].inode, &got), 1);
        assert_int_equal(got, self);
        assert_int_equal(procs_socket_holder(&other, 1, v[0].inode, &got), 0);
        got = 0;
        assert_int_equal(procs_socket_holder(NULL, 0, v[0].inode, &got), 1);
        assert_int_equal(got, self);
        char *d = procs_describe(self);
        char want[32];
        snprintf(want, sizeof(want), "pid %d (", (int)self);
        assert_non_null(d);
        assert_true(startswith(d, want));
        assert_non_null(strstr(d, "test_supervise"));
        free(d);
        free(v);
        close(fd);
        /* closed: nothing listens there any more */
        assert_int_equal(procs_listeners(port, &v, &n), 0);
        assert_int_equal(n, 0);
        free(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_death_is_an_event, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signal_death, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stubborn_workers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_outlives_parent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_spawn_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_log_cap_is_per_line, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daemon, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stragglers, setup, teardown),
                cmocka_unit_test(test_starttime),
                cmocka_unit_test(test_cpu_ticks),
                cmocka_unit_test(test_free_port_slots),
                cmocka_unit_test(test_port_taken),
                cmocka_unit_test(test_port_held_by_dead_connections),
                cmocka_unit_test(test_parse_listeners),
                cmocka_unit_test(test_socket_holder),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
