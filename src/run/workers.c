/* workers.c -- a sweep side by side: plan GPU slots, start a worker per slot, wait, combine. */
#include "run/workers.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/wait.h>

#include "text/buf.h"
#include "config/cells.h"
#include "proc/spawn.h"
#include "results/report_load.h"

struct worker {
        struct spawn child;
        bool started;
        bool exited;
        bool cleared;               /* what it left running was ended (a worker that failed) */
        int status;                 /* exit status, 128 + signal when a signal ended it */
};


/* A worker's exit status that says it was interrupted: SIGHUP, SIGINT or SIGTERM passed
 * on, or the output lost (141, cli_run). */
static bool interrupted_status(int status) {
        return status == 129 || status == 130 || status == 141;
}

static void on_worker_exit(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct worker *w = userdata;
        siginfo_t si = {0};
        if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        w->exited = true;
        w->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        loop_unwatch_fd(l, fd);
}

/* The GPU sets the cells of m run on side by side; *ret_n < 2: not side by side. Slurm
 * jobs take their GPUs from Slurm: then slurm.max_parallel slots (no more than there are
 * cells), none restricted here. */
static int plan_slots(const struct matrix *m, const struct gpu *g, struct gpu_slot **ret, size_t *ret_n) {
        *ret = NULL;
        *ret_n = 0;
        if (m->launcher == LAUNCHER_SLURM) {
                size_t n = MIN((size_t)m->slurm.max_parallel, cells_count(m));
                if (n < 2)
                        return 0;
                if (!(*ret = calloc(n, sizeof(**ret))))
                        return -ENOMEM;
                *ret_n = n;
                return 0;
        }
        if (m->gpus_per_cell <= 0 || g->n_gpus < 2 * (size_t)m->gpus_per_cell)
                return 0;
        const char **uuids = calloc(g->n_gpus, sizeof(char *));
        if (!uuids)
                return -ENOMEM;
        bool have_uuids = true;
        for (size_t i = 0; i < g->n_gpus; i++)
                have_uuids &= (uuids[i] = g->gpus[i].uuid) && uuids[i][0];
        int r = gpu_slots_plan(g->n_gpus, (size_t)m->gpus_per_cell, 0, have_uuids ? uuids : NULL, ret, ret_n);
        free(uuids);
        return r;
}

/* Starts worker k of n on slot's GPUs: this process's session (a terminal's Ctrl-C reaches
 * it too) and stdio; the signals this process blocks back at their defaults, since a
 * worker catches its own. Its exit is watched on l. */
static int start_worker(struct loop *l, struct worker *w, size_t k, size_t n, const struct gpu_slot *slot,
                        workers_argv_fn argv_fn, void *userdata) {
        _cleanup_buf_ struct buf list;
        buf_init(&list, 0);
        for (size_t i = 0; i < slot->n; i++)
                buf_printf(&list, "%s%u", i ? "," : "", slot->gpus[i]);
        struct workers_slot ws = {
                .slot = k, .n_slots = n, .parent = getpid(), .gpus = buf_str(&list), .visible = slot->visible};
        _cleanup_strv_free_ char **argv = NULL;
        int r = argv_fn(userdata, &ws, &argv);
        if (r < 0)
                return r;
        struct spawn_options o = {.argv = argv, .signals = SPAWN_SIGNALS_STOP};
        if ((r = spawn_start(&o, &w->child)) < 0)
                return r;
        w->started = true;
        if ((r = loop_watch_fd(l, w->child.pidfd, EPOLLIN, on_worker_exit, w)) < 0) {
                /* cannot watch it: end it now (it has started nothing yet) */
                spawn_abort(&w->child);
                w->exited = true;
                w->status = 1;
        }
        return r;
}

int workers_run(struct loop *l, struct journal *j, const struct matrix *m, const struct gpu *g,
                workers_argv_fn argv_fn, void *userdata, const struct sweep_callbacks *cb,
                struct workers_result *ret, char **ret_error) {
        struct workers_result res = {0};
        struct gpu_slot *slots = NULL;
        size_t n = 0;
        struct worker *w = NULL;
        int r;

#define FAIL(err, ...)                                                                   \
        do {                                                                             \
                r = (err);                                                               \
                if (ret_error)                                                           \
                        *ret_error = strdup_printf(__VA_ARGS__);                         \
                goto finish;                                                             \
        } while (0)

        if ((r = plan_slots(m, g, &slots, &n)) < 0)
                FAIL(r, "cannot start the workers: %s", strerror(-r));
        if (n < 2)
                goto finish;
        /* Every cell would be given the same port: side by side, they would take it from
         * each other (or answer each other's probes). */
        if (m->port) {
                sweep_notice(cb, "the matrix fixes port %d, so its cells run one at a time", m->port);
                goto finish;
        }
        /* What a killed earlier run left is stopped once, here, before any worker starts;
         * failing that ends the run, as it ends sweep_run. */
        if ((r = sweep_clear_leftovers(l, j, m, cb, ret_error)) < 0)
                goto finish;
        if (m->launcher == LAUNCHER_SLURM)
                sweep_notice(cb, "%zu cells side by side, each a Slurm job", n);
        else
                sweep_notice(cb, "%zu cells side by side, %d GPU%s each", n, m->gpus_per_cell,
                             m->gpus_per_cell == 1 ? "" : "s");
        w = calloc(n, sizeof(*w));
        if (!w)
                FAIL(-ENOMEM, "cannot start the workers: %s", strerror(ENOMEM));
        int start_error = 0;
        for (size_t k = 0; k < n && start_error == 0; k++)
                start_error = start_worker(l, &w[k], k, n, &slots[k], argv_fn, userdata);
        /* Wait for every worker started, even when one could not be; a signal is passed on
         * (a second one too: a worker that is stopping its server goes on stopping it).
         * A worker that lost the output (141: the shared stdout is a closed pipe) ends the
         * others too, with SIGTERM, since SIGPIPE is ignored. */
        for (;;) {
                bool all = true;
                for (size_t k = 0; k < n; k++) {
                        all &= !w[k].started || w[k].exited;
                        if (w[k].exited && w[k].status == 141 && !loop_signal(l))
                                loop_interrupt(l, SIGPIPE);
                        /* A worker that failed or was killed (the OOM killer, a kill -9 of
                         * it alone) may have left its attempt running, its server or Slurm
                         * job with it: the other workers of a search, which decide with
                         * that cell in flight, would wait for it forever. What it left is
                         * ended as a killed run's is (the attempt abandoned, the server
                         * stopped, the job cancelled), and the others go on. */
                        if (w[k].exited && !w[k].cleared && w[k].status != 0 && !interrupted_status(w[k].status) &&
                            !loop_signal(l)) {
                                w[k].cleared = true;
                                if (w[k].status > 128)
                                        sweep_notice(cb, "worker %zu was killed by signal %d; stopping what it left running", k,
                                                     w[k].status - 128);
                                (void)sweep_clear_leftovers(l, j, m, NULL, NULL);
                        }
                }
                if (all)
                        break;
                if (loop_iterate(l, USEC_INFINITY) == -EINTR)
                        for (size_t k = 0; k < n; k++)
                                if (w[k].started && !w[k].exited)
                                        pidfd_send_signal(w[k].child.pidfd,
                                                          loop_signal(l) == SIGPIPE ? SIGTERM : loop_signal(l), NULL, 0);
        }
        for (size_t k = 0; k < n; k++) {
                if (!w[k].started)
                        continue;
                spawn_release(&w[k].child);
                if (interrupted_status(w[k].status))
                        res.interrupted = true;
                else if (w[k].status != 0)
                        res.failed++;
        }
        res.signal = loop_signal(l);
        res.slots = n;
        /* Each worker journals the sweep's verdicts as its cells settle, from the view it
         * read then; another may have settled a cell after it. The parent writes them once
         * more when every worker is done: the last word (report_settle_verdicts). */
        int vr = report_settle_verdicts(j, 0);
        if (vr < 0 && !res.interrupted && !res.failed && start_error == 0)
                FAIL(vr, "cannot write the journal '%s': %s", journal_path(j), journal_strerror(vr));
        if (start_error < 0)
                FAIL(start_error, "cannot start the workers: %s", strerror(-start_error));
        if (res.interrupted)
                r = -EINTR;
        else if (res.failed)
                FAIL(-EIO, "a worker failed; run again to resume");
        else
                r = 0;

finish:
#undef FAIL
        free(w);
        gpu_slots_free(slots, n);
        *ret = res;
        return r;
}

int workers_attach(pid_t parent) {
        return spawn_die_with_parent(SIGTERM, parent);
}

int workers_select_gpus(struct gpu *g, const char *list) {
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
