/* measure-supervisor.c -- how fast the supervisor notices death and readiness, and how
 * long a stop takes. A benchmark, not a test: `make measure` runs it and prints figures
 * that docs/supervisor.md records.
 *
 * The same binary plays the server (child modes): it stamps CLOCK_MONOTONIC, which is
 * system-wide, at the moment that matters (just before exiting, when /health turns 200,
 * when SIGTERM arrives), so the parent can subtract.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "proc/procs.h"
#include "proc/supervise.h"
#include "base/util.h"

static const char *self;

/* --- child modes ----------------------------------------------------------------- */

static void stamp(const char *what) {
        printf("%s %llu\n", what, (unsigned long long)now_usec());
        fflush(stdout);
}

static int child_exit_after(long ms) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        stamp("exit-at");
        _exit(1);
}

static volatile sig_atomic_t got_term;
static void on_term(int sig) {
        got_term = 1;
}

/* A tiny HTTP server: /health is 503 until ready_ms have passed, then 200. With
 * print_line, it also prints a ready line at that moment. On SIGTERM it exits after
 * term_ms. */
static int child_http(int port, long ready_ms, bool print_line, long term_ms) {
        struct sigaction sa = {.sa_handler = on_term};
        sigaction(SIGTERM, &sa, NULL);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0)
                return 1;
        usec_t ready_at = now_usec() + (usec_t)ready_ms * USEC_PER_MSEC;
        bool ready = false;
        for (;;) {
                if (got_term) {
                        stamp("term-at");
                        struct timespec ts = {term_ms / 1000, (term_ms % 1000) * 1000000L};
                        nanosleep(&ts, NULL);
                        _exit(0);
                }
                usec_t now = now_usec();
                if (!ready && now >= ready_at) {
                        ready = true;
                        stamp("ready-at");
                        if (print_line)
                                puts("measure: server is ready");
                        fflush(stdout);
                }
                /* wait for a connection or the ready moment */
                struct timeval tv = {0, 1000};
                fd_set rfds;
                FD_ZERO(&rfds);
                FD_SET(fd, &rfds);
                if (select(fd + 1, &rfds, NULL, NULL, &tv) <= 0)
                        continue;
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                char req[2048];
                (void)!read(c, req, sizeof(req));
                const char *resp = ready ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                                         : "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
                (void)!write(c, resp, strlen(resp));
                close(c);
        }
}

/* --- the measurements ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b) {
        usec_t x = *(const usec_t *)a, y = *(const usec_t *)b;
        return x < y ? -1 : x > y;
}

static void report(const char *what, usec_t *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_u64);
        printf("%-44s n=%zu  p50 %7.2f ms  p90 %7.2f ms  max %7.2f ms\n", what, n, v[n / 2] / 1000.0,
               v[(n * 9) / 10] / 1000.0, v[n - 1] / 1000.0);
}

static usec_t read_stamp(const char *log, const char *what) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (read_file_capped(log, 1 << 20, &text, &len) < 0)
                return 0;
        const char *p = strstr(text, what);
        return p ? strtoull(p + strlen(what) + 1, NULL, 10) : 0;
}

int main(int argc, char **argv) {
        self = "/proc/self/exe";
        if (argc >= 3 && strcmp(argv[1], "--child-exit-after") == 0)
                return child_exit_after(atol(argv[2]));
        if (argc >= 6 && strcmp(argv[1], "--child-http") == 0)
                return child_http(atoi(argv[2]), atol(argv[3]), strcmp(argv[4], "line") == 0, atol(argv[5]));

        char exe[4096];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (k < 0)
                return 2;
        exe[k] = '\0';
        int rounds = argc >= 2 ? atoi(argv[1]) : 20;
        char dir[] = "/tmp/gauntlet-measure-XXXXXX";
        if (!mkdtemp(dir))
                return 2;
        char log[128];
        snprintf(log, sizeof(log), "%s/server.log", dir);
        struct loop *l;
        if (loop_new(&l) < 0 || procs_become_subreaper() < 0)
                return 2;
        usec_t *death = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *ready_probe = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *ready_line = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *ready_logged = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *stop_fast = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *stop_slow = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *stop_fast_cg = calloc((size_t)rounds, sizeof(usec_t));
        usec_t *stop_slow_cg = calloc((size_t)rounds, sizeof(usec_t));
        /* the stops again with each server in a cgroup of its own, where this host allows */
        struct cgroup_base *cgroups = NULL;
        char *no_cgroups = NULL;
        (void)cgroup_base_open(&cgroups, &no_cgroups);

        for (int i = 0; i < rounds; i++) {
                char token[33];
                procs_new_token(token);
                /* 1. death */
                char ms[16];
                snprintf(ms, sizeof(ms), "%d", 100 + (i * 37) % 200);
                char *a1[] = {exe, "--child-exit-after", ms, NULL};
                struct server_spec spec = {.argv = a1, .log_path = log, .token = token,
                                           .health_url = "http://127.0.0.1:9/", .ready = READY_HTTP_200};
                struct server *s;
                if (server_start(l, &spec, &s) < 0)
                        return 2;
                server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC);
                usec_t seen = now_usec();
                server_drain_log(s, now_usec() + USEC_PER_SEC);
                death[i] = seen - read_stamp(log, "exit-at");
                server_stop(s, USEC_PER_SEC, now_usec() + 5 * USEC_PER_SEC, NULL);
                server_free(s);

                /* 2. readiness by probe only, with a ready line, and with a line gauntlet
                 * does not know as the ready line (m 2: the server prints it, the spec has
                 * none); 3. stop (m 3 and 4: m 0 and 1 in a cgroup) */
                for (int m = 0; m < (cgroups ? 5 : 3); m++) {
                        int mode = m == 1 || m == 4; /* a ready line, and 250 ms to exit */
                        procs_new_token(token);
                        int port;
                        supervise_free_port("127.0.0.1", 0, 1, &port);
                        char p[16], rms[16], tms[16];
                        snprintf(p, sizeof(p), "%d", port);
                        /* m 2 later, where the probe interval (a 64th of the time) is 30-47 ms */
                        snprintf(rms, sizeof(rms), "%d", m == 2 ? 2000 + (i * 53) % 1000 : 300 + (i * 53) % 400);
                        snprintf(tms, sizeof(tms), "%d", mode == 0 ? 0 : 250);
                        char *a2[] = {exe, "--child-http", p, rms, mode || m == 2 ? "line" : "noline", tms, NULL};
                        char url[64];
                        snprintf(url, sizeof(url), "http://127.0.0.1:%d/health", port);
                        struct server_spec s2 = {.argv = a2, .log_path = log, .token = token, .health_url = url,
                                                 .ready = READY_HTTP_200,
                                                 .ready_line = mode ? "server is ready" : NULL,
                                                 .cgroups = m >= 3 ? cgroups : NULL};
                        if (server_start(l, &s2, &s) < 0)
                                return 2;
                        if (server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC) != SERVER_READY)
                                return 3;
                        usec_t r_at = s->ready_at;
                        /* the stamp is in the log already: it was printed before 200 was served */
                        loop_iterate(l, now_usec() + 20 * USEC_PER_MSEC);
                        usec_t truth = read_stamp(log, "ready-at");
                        usec_t *ready_row = m == 0 ? ready_probe : m == 1 ? ready_line : m == 2 ? ready_logged : NULL;
                        if (ready_row)
                                ready_row[i] = r_at > truth ? r_at - truth : 0;
                        usec_t t0 = now_usec();
                        server_stop(s, 5 * USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL);
                        usec_t took = now_usec() - t0;
                        usec_t *row = m == 0 ? stop_fast : m == 1 ? stop_slow : m == 3 ? stop_fast_cg : m == 4 ? stop_slow_cg : NULL;
                        if (row)
                                row[i] = took - (mode ? 250 * USEC_PER_MSEC : 0);
                        server_free(s);
                }
        }
        printf("supervisor latencies over %d rounds (this machine):\n", rounds);
        report("death noticed after the process exited", death, (size_t)rounds);
        report("ready seen after /health turned 200 (probe)", ready_probe, (size_t)rounds);
        report("ready seen after /health turned 200 (line)", ready_line, (size_t)rounds);
        report("the same, a line gauntlet does not know (2-3 s)", ready_logged, (size_t)rounds);
        report("stop beyond the server's own exit (0 ms)", stop_fast, (size_t)rounds);
        report("stop beyond the server's own exit (250 ms)", stop_slow, (size_t)rounds);
        if (cgroups) {
                report("the same in a cgroup (0 ms)", stop_fast_cg, (size_t)rounds);
                report("the same in a cgroup (250 ms)", stop_slow_cg, (size_t)rounds);
        } else
                printf("no cgroups here (%s): stops in a cgroup not measured\n", no_cgroups ? no_cgroups : "?");
        cgroup_base_free(cgroups);
        free(no_cgroups);
        unlink(log);
        rmdir(dir);
        loop_free(l);
        return 0;
}
