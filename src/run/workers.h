/* workers.h -- a sweep side by side: one worker process per disjoint set of GPUs.
 *
 * When a matrix's cells need fewer GPUs than the host has (gpus_per_cell, with room for two
 * or more disjoint sets), the sweep runs in worker processes, one per set. Each worker is
 * the program again, with a command line its caller builds (workers_argv_fn): it runs the
 * cells of its slot (sweep_options' slot and n_slots), watches only its GPUs
 * (workers_select_gpus) and gives its servers CUDA_VISIBLE_DEVICES. The parent stops what a
 * killed earlier run left behind, once, starts the workers, passes its signals on to them
 * and waits for them as events. A worker must not outlive its parent (workers_attach).
 *
 * Nothing here prints: what the user should hear of goes to the sweep callbacks' notice.
 */
#ifndef GAUNTLET_WORKERS_H
#define GAUNTLET_WORKERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "proc/gpu.h"
#include "journal/journal.h"
#include "io/loop.h"
#include "config/matrix.h"
#include "run/sweep.h"

/* What one worker is given. The strings live as long as the workers_argv_fn call. */
struct workers_slot {
        size_t slot, n_slots;       /* its cells: those whose index i has i % n_slots == slot */
        pid_t parent;               /* the process that starts it */
        const char *gpus;           /* its GPUs as NVML indices, "0,1": for workers_select_gpus;
                                       "" for Slurm jobs (Slurm gives them their GPUs) */
        const char *visible;        /* CUDA_VISIBLE_DEVICES for its servers; NULL for Slurm jobs */
};

/* Builds the argv of worker ws into *ret_argv (a strv the callee allocates and the caller
 * frees); argv[0] is the program run ("/proc/self/exe": this one). 0 or a negative errno. */
typedef int (*workers_argv_fn)(void *userdata, const struct workers_slot *ws, char ***ret_argv);

struct workers_result {
        size_t slots;               /* workers started; 0: none, the sweep is the caller's to
                                     * run in its own process */
        size_t failed;              /* workers that exited with an error (status not 0 or 130) */
        bool interrupted;           /* a worker was stopped by a signal (exited 130) */
        int signal;                 /* the signal this process caught, or 0 */
};

/* Runs the sweep of m in workers when the host has room for two or more of its cells at
 * once, or, with the Slurm launcher, when slurm.max_parallel and the cells allow two or more
 * jobs at once; otherwise starts nothing (ret->slots 0; a matrix that fixes its port never runs
 * side by side, and a notice says so). Workers get SIGINT/SIGTERM/SIGHUP at their defaults,
 * this process's session and stdio. *ret is always filled.
 * Returns 0 (nothing started, or every worker succeeded), -EINTR when a worker was
 * interrupted, -EIO when one failed, or another negative errno when the workers could not
 * be started or what an earlier run left could not be stopped: then *ret_error says what,
 * in one line (caller frees), as for -EIO. */
int workers_run(struct loop *l, struct journal *j, const struct matrix *m, const struct gpu *g,
                workers_argv_fn argv_fn, void *userdata, const struct sweep_callbacks *cb,
                struct workers_result *ret, char **ret_error);

/* A worker's first step: it gets SIGTERM when its parent dies (and then stops its server
 * and ends, as on SIGTERM: a sweep never goes on without the process that reports it).
 * -ESRCH when `parent` is gone already. */
int workers_attach(pid_t parent);

/* Restricts g to the GPUs of a workers_slot's gpus list ("0,1"). -EINVAL for a list that
 * is empty or not one. */
int workers_select_gpus(struct gpu *g, const char *list);

#endif
