/* cli_run.c -- `gauntlet run MATRIX`: the sweep, printed as it settles. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <string.h>

#include "buf.h"
#include "cli.h"
#include "gpu.h"
#include "host.h"
#include "journal.h"
#include "cells.h"
#include "matrix.h"
#include "procs.h"
#include "report.h"
#include "report_load.h"
#include "sweep.h"

static void usage(FILE *f) {
        fputs("usage: gauntlet run MATRIX [--journal FILE] [--rerun]\n\n"
              "Launches every cell of the matrix under supervision, checks its answers,\n"
              "benchmarks the cells that answer right and records everything in the journal.\n"
              "Running it again on the same journal skips settled cells and retries the one a\n"
              "killed run left in flight.\n\n"
              "  --journal FILE   the journal (default: runs/<matrix name>.db)\n"
              "  --rerun          run settled cells again\n"
              "  --help           this text\n\n"
              "exit status: 0 a cell passed, 1 none passed, 2 usage or matrix error,\n"
              "130 interrupted\n",
              f);
}

struct printer {
        const struct matrix *m;
        struct journal *j;
        bool progress;      /* a progress line on stderr (a terminal) */
        bool color;
        size_t width;       /* of the label column */
        size_t index, total;
        const struct cell *current;
        usec_t started;
};

static void clear_progress(struct printer *p) {
        if (p->progress)
                fputs("\r\033[K", stderr);
}

static void on_started(void *userdata, const struct cell *c, size_t index, size_t total) {
        struct printer *p = userdata;
        p->current = c;
        p->index = index;
        p->total = total;
        p->started = now_usec();
}

static void on_phase(void *userdata, const struct cell *c, enum phase ph) {
        struct printer *p = userdata;
        if (!p->progress)
                return;
        _cleanup_free_ char *label = cell_label(p->m, c);
        fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s…", p->index + 1, p->total, label ? label : c->id,
                phase_to_string(ph));
        fflush(stderr);
}

static const char *verdict_color(enum verdict v) {
        switch (v) {
        case VERDICT_PASS:
                return "\033[32m";
        case VERDICT_SKIPPED:
                return "\033[2m";
        case VERDICT_WRONG:
        case VERDICT_TIMEOUT:
                return "\033[33m";
        default:
                return "\033[31m";
        }
}

/* Server text is data: control characters never reach the terminal. */
static void print_sanitized(FILE *f, const char *s, size_t max) {
        size_t n = 0;
        for (; s && *s && n < max; s++, n++) {
                unsigned char ch = (unsigned char)*s;
                if (ch < 0x20 || ch == 0x7f)
                        fputc(ch == '\n' ? ' ' : '?', f);
                else
                        fputc(ch, f);
        }
        if (s && *s)
                fputs("…", f);
}

static void print_line(struct printer *p, const struct cell *c, size_t index, size_t total, enum verdict v,
                       const char *cause, const char *evidence, usec_t took, bool from_journal) {
        clear_progress(p);
        _cleanup_free_ char *label = cell_label(p->m, c);
        char vc[64];
        if (cause)
                snprintf(vc, sizeof(vc), "%s/%s", verdict_to_string(v), cause);
        else
                snprintf(vc, sizeof(vc), "%s", verdict_to_string(v));
        int digits = snprintf(NULL, 0, "%zu", total);
        printf("[%*zu/%zu] %-*s  ", digits, index + 1, total, (int)p->width, label ? label : c->id);
        if (p->color)
                printf("%s%-20s\033[0m", verdict_color(v), vc);
        else
                printf("%-20s", vc);
        if (from_journal)
                printf(" %7s", "(journal)");
        else
                printf(" %6.1fs", (double)took / USEC_PER_SEC);
        if (evidence) {
                fputs("  ", stdout);
                print_sanitized(stdout, evidence, 160);
        }
        fputc('\n', stdout);
        fflush(stdout);
}

static void on_settled(void *userdata, const struct cell *c, size_t index, size_t total, const struct attempt *a,
                       bool from_journal) {
        struct printer *p = userdata;
        if (a) {
                print_line(p, c, index, total, a->verdict, a->cause, a->evidence,
                           a->verdict == VERDICT_SKIPPED ? 0 : now_usec() - p->started, false);
                return;
        }
        enum verdict v = VERDICT_INVALID;
        _cleanup_free_ char *cause = NULL, *evidence = NULL;
        if (journal_cell_result(p->j, c->id, &v, &cause, &evidence) < 0)
                v = VERDICT_INVALID;
        print_line(p, c, index, total, v, cause, evidence, 0, true);
}

static void on_notice(void *userdata, const char *message) {
        struct printer *p = userdata;
        clear_progress(p);
        fprintf(stderr, "gauntlet: %s\n", message);
}

static int write_file(const char *path, const struct buf *b) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, buf_str(b), b->len);
        if (r < 0)
                return r;
        return close(TAKE_FD(fd)) < 0 ? -errno : 0;
}

/* What a finished sweep leaves beside its logs: the report as HTML, Markdown and JSON, and for
 * the best cell the unit and launch script the matrix's `emit:` asks for. Mode 0600: the
 * unit and script carry the real environment. */
static void write_outputs(const struct matrix *m, const struct report_view *view, const char *dir) {
        int r = mkdir_p(dir, 0755);
        if (r < 0) {
                cli_error("cannot create '%s': %s", dir, strerror(-r));
                return;
        }
        _cleanup_buf_ struct buf md;
        buf_init(&md, 0);
        _cleanup_free_ char *md_path = strdup_printf("%s/report.md", dir);
        if (md_path && report_markdown(view, &md) >= 0 && (r = write_file(md_path, &md)) < 0)
                cli_error("cannot write '%s': %s", md_path, strerror(-r));
        json_t *j = NULL;
        _cleanup_free_ char *json_path = strdup_printf("%s/report.json", dir);
        if (json_path && report_json(view, GAUNTLET_VERSION, &j) >= 0) {
                if (json_dump_file(j, json_path, JSON_INDENT(2)) < 0)
                        cli_error("cannot write '%s'", json_path);
                json_decref(j);
        }
        _cleanup_buf_ struct buf html;
        buf_init(&html, 0);
        _cleanup_free_ char *html_path = strdup_printf("%s/report.html", dir);
        if (html_path && report_html(view, &html) >= 0 && (r = write_file(html_path, &html)) < 0)
                cli_error("cannot write '%s': %s", html_path, strerror(-r));
        printf("reports: %s, %s, %s\n", html_path ? html_path : "?", md_path ? md_path : "?",
               json_path ? json_path : "?");
        int best = report_best_index(view, NULL);
        if (best < 0)
                return;
        static const struct {
                unsigned bit;
                bool systemd;
                const char *prefix, *suffix;
        } kinds[] = {{EMIT_SYSTEMD, true, "gauntlet-", ".service"}, {EMIT_SCRIPT, false, "launch-", ".sh"}};
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                if (!(m->emit & kinds[i].bit))
                        continue;
                _cleanup_buf_ struct buf out;
                buf_init(&out, 0);
                if (cli_emit_build(view, best, true, kinds[i].systemd, NULL, 0, &out) != EXIT_OK)
                        continue;
                _cleanup_free_ char *name = strdup_printf("%s%s%s", kinds[i].prefix, view->engine, kinds[i].suffix);
                _cleanup_free_ char *path = name ? strdup_printf("%s/%s", dir, name) : NULL;
                if (!path)
                        continue;
                if ((r = write_file(path, &out)) < 0)
                        cli_error("cannot write '%s': %s", path, strerror(-r));
                else
                        printf("%s: %s\n", kinds[i].systemd ? "systemd unit" : "launch script", path);
        }
}

/* runs/<matrix stem>.db */
static char *default_journal(const char *matrix_path) {
        _cleanup_free_ char *copy = strdup(matrix_path);
        if (!copy)
                return NULL;
        char *base = basename(copy);
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
                *dot = '\0';
        return strdup_printf("runs/%s.db", base);
}

/* The journal's logs live beside it: runs/demo.db -> runs/demo/ */
static char *log_root_for(const char *journal) {
        char *r = strdup(journal);
        if (!r)
                return NULL;
        char *slash = strrchr(r, '/');
        char *dot = strrchr(r, '.');
        if (dot && (!slash || dot > slash + 1))
                *dot = '\0';
        else {
                free(r);
                r = strdup_printf("%s.logs", journal);
        }
        return r;
}

struct worker {
        bool active;          /* this process is one worker of a multi-slot sweep */
        size_t slot, n_slots;
        int parent;           /* the gauntlet that started it */
        const char *gpus;     /* "0,1": the NVML indices it watches */
        const char *visible;  /* CUDA_VISIBLE_DEVICES for its servers */
};

static int select_gpus(struct gpu *g, const char *list) {
        unsigned idx[1024];
        size_t n = 0;
        for (const char *p = list; p && *p && n < ELEMENTSOF(idx);) {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || v > 1023)
                        return -EINVAL;
                idx[n++] = (unsigned)v;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                        return -EINVAL;
        }
        return n ? gpu_select(g, idx, n) : -EINVAL;
}

struct worker_proc {
        pid_t pid;
        int pidfd;
        bool exited;
        int status;
};

static void on_worker_exit(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct worker_proc *wp = userdata;
        siginfo_t si = {0};
        if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        wp->exited = true;
        wp->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        loop_unwatch_fd(l, fd);
}

struct slots_outcome {
        size_t slots;         /* workers run; 0: none (run the sweep in this process) */
        size_t failed;        /* workers that exited with an error */
        bool interrupted;     /* a worker was stopped by a signal */
        int signal;
};

/* With gpus_per_cell set and room for two or more disjoint GPU sets, starts one worker
 * (this program, `run --worker K/N/PARENT_PID`) per set and waits for them, forwarding signals. */
static int run_slots(struct loop *l, struct journal *j, const struct matrix *m, const struct gpu *g,
                     const char *matrix_path, const char *jpath, bool rerun, struct slots_outcome *ret) {
        *ret = (struct slots_outcome){0};
        if (m->gpus_per_cell <= 0 || g->n_gpus < 2 * (size_t)m->gpus_per_cell)
                return 0;
        const char **uuids = calloc(g->n_gpus, sizeof(char *));
        if (!uuids)
                return -ENOMEM;
        bool have_uuids = true;
        for (size_t i = 0; i < g->n_gpus; i++)
                have_uuids &= (uuids[i] = g->gpus[i].uuid) && uuids[i][0];
        struct gpu_slot *slots = NULL;
        size_t n = 0;
        int r = gpu_slots_plan(g->n_gpus, (size_t)m->gpus_per_cell, 0, have_uuids ? uuids : NULL, &slots, &n);
        free(uuids);
        if (r < 0)
                return r;
        if (n < 2) {
                gpu_slots_free(slots, n);
                return 0;
        }
        /* Every cell would be given the same port: side by side, they would take it from
         * each other (or answer each other's probes). */
        if (m->port) {
                fprintf(stderr, "gauntlet: the matrix fixes port %d, so its cells run one at a time\n", m->port);
                gpu_slots_free(slots, n);
                return 0;
        }
        /* What a killed earlier run left is stopped once, here, before any worker starts. */
        r = sweep_cleanup_orphans(l, j, m->stop_timeout);
        if (r > 0)
                fprintf(stderr, "gauntlet: stopped %d process%s left behind by an earlier run that was killed\n", r,
                        r == 1 ? "" : "es");
        fprintf(stderr, "gauntlet: %zu cells side by side, %d GPU%s each\n", n, m->gpus_per_cell,
                m->gpus_per_cell == 1 ? "" : "s");
        struct worker_proc *wp = calloc(n, sizeof(*wp));
        if (!wp) {
                gpu_slots_free(slots, n);
                return -ENOMEM;
        }
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t empty, defaults;
        sigemptyset(&empty);
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGTERM);
        sigaddset(&defaults, SIGHUP);
        posix_spawnattr_setsigmask(&attr, &empty); /* we block these; workers catch their own */
        posix_spawnattr_setsigdefault(&attr, &defaults);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        size_t started = 0;
        r = 0;
        for (size_t k = 0; k < n && r >= 0; k++) {
                _cleanup_buf_ struct buf list;
                buf_init(&list, 0);
                for (size_t i = 0; i < slots[k].n; i++)
                        buf_printf(&list, "%s%u", i ? "," : "", slots[k].gpus[i]);
                _cleanup_free_ char *which = strdup_printf("%zu/%zu/%d", k, n, (int)getpid());
                char *wargv[] = {"/proc/self/exe", "run", (char *)matrix_path, "--journal", (char *)jpath,
                                 "--worker", which, "--worker-gpus", (char *)buf_str(&list),
                                 "--worker-visible", slots[k].visible, rerun ? "--rerun" : NULL, NULL};
                if (!which) {
                        r = -ENOMEM;
                        break;
                }
                extern char **environ;
                r = -posix_spawn(&wp[k].pid, "/proc/self/exe", NULL, &attr, wargv, environ);
                if (r < 0)
                        break;
                started++;
                wp[k].pidfd = pidfd_open(wp[k].pid, 0);
                if (wp[k].pidfd < 0 || (r = loop_watch_fd(l, wp[k].pidfd, EPOLLIN, on_worker_exit, &wp[k])) < 0) {
                        /* cannot watch it: end it now (it has started nothing yet) */
                        r = r < 0 ? r : -errno;
                        kill(wp[k].pid, SIGKILL);
                        waitpid(wp[k].pid, NULL, 0);
                        if (wp[k].pidfd >= 0)
                                close(wp[k].pidfd);
                        wp[k].pidfd = -1;
                        wp[k].exited = true;
                        wp[k].status = 1;
                }
        }
        posix_spawnattr_destroy(&attr);
        /* Wait for every worker; a signal is passed on (a second one too: a worker that is
         * stopping its server goes on stopping it). */
        for (;;) {
                bool all = true;
                for (size_t k = 0; k < started; k++)
                        all &= wp[k].exited || wp[k].pidfd < 0;
                if (all)
                        break;
                if (loop_iterate(l, USEC_INFINITY) == -EINTR)
                        for (size_t k = 0; k < started; k++)
                                if (!wp[k].exited && wp[k].pidfd >= 0)
                                        pidfd_send_signal(wp[k].pidfd, loop_signal(l), NULL, 0);
        }
        for (size_t k = 0; k < started; k++) {
                if (wp[k].pidfd >= 0)
                        close(wp[k].pidfd);
                if (wp[k].status == 130)
                        ret->interrupted = true;
                else if (wp[k].status != 0)
                        ret->failed++;
        }
        ret->signal = loop_signal(l);
        ret->slots = n;
        free(wp);
        gpu_slots_free(slots, n);
        return r;
}

int cli_run(int argc, char **argv) {
        /* --worker* are internal: how a sweep on several GPU slots starts its workers. */
        static const struct option opts[] = {
                {"journal", required_argument, NULL, 'j'},
                {"rerun", no_argument, NULL, 'r'},
                {"help", no_argument, NULL, 'h'},
                {"worker", required_argument, NULL, 'W'},
                {"worker-gpus", required_argument, NULL, 'G'},
                {"worker-visible", required_argument, NULL, 'V'},
                {0},
        };
        const char *journal_path = NULL;
        bool rerun = false;
        struct worker w = {0};
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":j:rh", opts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        journal_path = optarg;
                        break;
                case 'r':
                        rerun = true;
                        break;
                case 'W':
                        if (sscanf(optarg, "%zu/%zu/%d", &w.slot, &w.n_slots, &w.parent) != 3 || w.n_slots < 2 ||
                            w.slot >= w.n_slots || w.parent <= 0)
                                return cli_usage_error("run", "invalid --worker '%s'", optarg);
                        w.active = true;
                        break;
                case 'G':
                        w.gpus = optarg;
                        break;
                case 'V':
                        w.visible = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_OK;
                default:
                        return cli_bad_option("run", c, argv);
                }
        }
        if (optind != argc - 1)
                return cli_usage_error("run", optind >= argc ? "no matrix file given" : "more than one matrix file given");
        /* A worker whose parent is killed stops its server and ends (as on SIGTERM): a
         * sweep never goes on without the process that reports it. */
        if (w.active && (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != w.parent))
                return 130;
        const char *matrix_path = argv[optind];

        _cleanup_matrix_ struct matrix *m = NULL;
        _cleanup_free_ char *error = NULL;
        int r = matrix_load(matrix_path, &m, &error);
        if (r < 0) {
                cli_error("%s", error ? error : strerror(-r));
                return EXIT_USAGE;
        }
        _cleanup_free_ char *jpath = journal_path ? strdup(journal_path) : default_journal(matrix_path);
        _cleanup_free_ char *log_root = jpath ? log_root_for(jpath) : NULL;
        if (!jpath || !log_root) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        {
                _cleanup_free_ char *dir = strdup(jpath);
                if (!dir || (r = mkdir_p(dirname(dir), 0755)) < 0) {
                        cli_error("cannot create the folder of '%s': %s", jpath, strerror(r < 0 ? -r : ENOMEM));
                        return EXIT_USAGE;
                }
        }

        _cleanup_loop_ struct loop *loop = NULL;
        if ((r = loop_new(&loop)) < 0 || (r = loop_catch_signals(loop)) < 0) {
                cli_error("cannot set up the event loop: %s", strerror(-r));
                return EXIT_USAGE;
        }
        /* Workers that escape into sessions of their own become our children when their
         * parent dies, so they can be found and ended. */
        if ((r = procs_become_subreaper()) < 0)
                cli_error("warning: cannot become a child subreaper: %s", strerror(-r));

        struct journal *j = NULL;
        r = journal_open(jpath, &j);
        if (r < 0) {
                cli_error("cannot open the journal '%s': %s", jpath, strerror(-r));
                return EXIT_USAGE;
        }

        struct printer p = {
                .m = m, .j = j, .progress = !w.active && cli_color(stderr), .color = cli_color(stdout), .width = 10};
        {
                struct cell *cells = NULL;
                size_t n = 0;
                if (cells_expand(m, &cells, &n) == 0) {
                        for (size_t i = 0; i < n; i++) {
                                _cleanup_free_ char *label = cell_label(m, &cells[i]);
                                if (label)
                                        p.width = MAX(p.width, strlen(label));
                        }
                        cells_free(cells, n);
                }
                p.width = MIN(p.width, (size_t)60);
        }
        struct sweep_callbacks cb = {
                .cell_started = on_started,
                .cell_phase = on_phase,
                .cell_settled = on_settled,
                .notice = on_notice,
                .userdata = &p,
        };
        /* The host fingerprint goes into the journal with the sweep: reports say which GPU
         * and architecture decided the verdicts. No GPU is normal. */
        _cleanup_gpu_ struct gpu *gpu = NULL;
        if ((r = gpu_open(&gpu)) < 0) {
                cli_error("cannot look for GPUs: %s", strerror(-r));
                return EXIT_USAGE;
        }
        if (w.active && (r = select_gpus(gpu, w.gpus)) < 0) {
                cli_error("invalid --worker-gpus '%s': %s", w.gpus ? w.gpus : "", strerror(-r));
                return EXIT_USAGE;
        }
        json_t *host = NULL;
        _cleanup_free_ char *host_json = NULL;
        if (host_fingerprint_gpu(loop, m->profile, gpu, &host) >= 0) {
                host_json = json_dumps(host, JSON_COMPACT);
                json_decref(host);
        }
        if (w.active)
                ; /* the parent said it */
        else if (gpu->n_gpus == 0)
                fprintf(stderr, "gauntlet: no GPU found (%s)\n", gpu->reason ? gpu->reason : "no NVML");
        else
                for (size_t i = 0; i < gpu->n_gpus; i++)
                        fprintf(stderr, "gauntlet: GPU %u: %s (%s), %llu MiB\n", gpu->gpus[i].index, gpu->gpus[i].name,
                                gpu->gpus[i].arch[0] ? gpu->gpus[i].arch : "arch unknown",
                                (unsigned long long)gpu->gpus[i].memory_total_mib);
        _cleanup_free_ char *visible_env = w.visible ? strdup_printf("CUDA_VISIBLE_DEVICES=%s", w.visible) : NULL;
        char *extra_env[] = {visible_env, NULL};
        struct sweep_options o = {.journal_path = jpath,
                                  .log_root = log_root,
                                  .rerun = rerun,
                                  .host_json = host_json ? host_json : "{}",
                                  .gpu = gpu,
                                  .slot = w.slot,
                                  .n_slots = w.active ? w.n_slots : 0,
                                  .extra_env = visible_env ? extra_env : NULL};
        struct sweep_summary sum = {0};
        _cleanup_free_ char *sweep_error = NULL;
        /* Cells that need fewer GPUs than the host has run side by side, one worker per
         * disjoint GPU set; this process then only waits for them and reports. */
        struct slots_outcome so = {0};
        if (!w.active && (r = run_slots(loop, j, m, gpu, matrix_path, jpath, rerun, &so)) < 0) {
                cli_error("cannot start the workers: %s", strerror(-r));
                journal_close(j);
                return EXIT_USAGE;
        }
        if (so.slots < 2)
                r = sweep_run(loop, m, j, &o, &cb, &sum, &sweep_error);
        else {
                r = so.interrupted ? -EINTR : so.failed ? -EIO : 0;
                sum.signal = so.signal;
        }
        clear_progress(&p);
        int status;
        if (w.active) {
                if (r < 0 && r != -EINTR)
                        cli_error("%s", sweep_error ? sweep_error : strerror(-r));
                journal_close(j);
                return r == -EINTR ? 130 : r < 0 ? EXIT_USAGE : EXIT_OK;
        }
        if (r == -EIO && so.slots >= 2) {
                cli_error("a worker failed; run again to resume");
                status = EXIT_USAGE;
        } else if (r == -EINTR) {
                cli_error("interrupted by SIG%s: the server was stopped; run again to resume",
                          sum.signal ? sigabbrev_np(sum.signal) : "INT");
                status = 130;
        } else if (r < 0) {
                cli_error("%s", sweep_error ? sweep_error : strerror(-r));
                status = EXIT_USAGE;
        } else {
                status = EXIT_FAILED;
        }
        /* The final word comes from the journal: cells settled in earlier runs count. */
        struct report_view *view = NULL;
        if (r == 0 && (r = report_load_view(j, &view)) < 0) {
                cli_error("cannot read the journal '%s': %s", jpath, journal_strerror(r));
                status = EXIT_USAGE;
        }
        if (r == 0) {
                size_t counts[_VERDICT_MAX] = {0};
                size_t pass = report_count_verdicts(view, counts);
                printf("\n%zu cells:", report_cells(view));
                bool first = true;
                for (int v = 0; v < _VERDICT_MAX; v++) {
                        if (!counts[v])
                                continue;
                        printf("%s %zu %s", first ? "" : ",", counts[v], verdict_to_string((enum verdict)v));
                        first = false;
                }
                const char *best = report_best(view);
                if (best)
                        printf("; best: %s", best);
                printf("\njournal: %s\n", jpath);
                write_outputs(m, view, log_root);
                status = pass > 0 ? EXIT_OK : EXIT_FAILED;
                report_view_free(view);
        }
        journal_close(j);
        return status;
}
