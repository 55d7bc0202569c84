/* sweep.h -- runs a matrix: every cell launched, checked, benchmarked, stopped, journaled.
 *
 * The cells come in the strategy's order: grid and one-at-a-time as cells_expand lists
 * them; search as the model (search_view.h) chooses from the journal (side by side: each
 * worker with the others' cells in flight), the rest pruned once it stops. Each cell's life is the same whichever chose it.
 *
 * The library side of `gauntlet run`. It prints nothing: the caller hears of progress
 * through the callbacks and prints what it likes.
 */
#ifndef GAUNTLET_SWEEP_H
#define GAUNTLET_SWEEP_H

#include "gate/attempt.h"
#include "proc/cgroup.h"
#include "proc/gpu.h"
#include "journal/journal.h"
#include "io/loop.h"
#include "config/cells.h"
#include "proc/supervise.h"

struct sweep_callbacks {
        /* A cell is about to launch (index is 0-based in the cell order). */
        void (*cell_started)(void *userdata, const struct cell *c, size_t index, size_t total);
        /* The cell entered a phase. */
        void (*cell_phase)(void *userdata, const struct cell *c, enum phase p);
        /* A cell settled now (from_journal false) or earlier (true; a is NULL then, and
         * verdict/cause/evidence describe the earlier result). */
        void (*cell_settled)(void *userdata, const struct cell *c, size_t index, size_t total,
                             const struct attempt *a, bool from_journal);
        /* strategy: search: launch number `launch` (1-based, the journal's launches
         * counted) is about to start; budget 0: none; again: NULL, or how the cell was
         * launched before: "measured again" (it served), "launched again" (it failed in a way
         * nothing of the matrix explains; docs/search.md). Called before cell_started. */
        void (*search_launch)(void *userdata, size_t launch, size_t budget, const char *again);
        /* strategy: search: it stopped ("budget", "no chance left", "no candidate left",
         * or, when nothing can pass, the line that says why and what to change) after
         * `launched` launches; the cells left are pruned next. */
        void (*search_stopped)(void *userdata, const char *why, size_t launched, size_t budget);
        /* run --against: the cells of sweep_options.first have settled; true stops the
         * sweep there (the rest not run), false goes on in the strategy's order. */
        bool (*first_settled)(void *userdata);
        /* Something was cleaned up or noticed that the user should know about. */
        void (*notice)(void *userdata, const char *message);
        void *userdata;
};

struct sweep_options {
        const char *journal_path;
        const char *log_root;         /* folder for this journal's logs */
        bool rerun;                   /* run settled cells again */
        bool no_infer;                /* run the cells an arch crash decided (infer.h) too */
        bool no_prune;                /* search: launch every cell, in the model's order,
                                         budget and stopping rule aside */
        const char *host_json;        /* host fingerprint, "{}" when unknown */
        struct gpu *gpu;              /* NULL or no GPUs: no memory wait, no peak figures */
        /* Side by side on disjoint GPU sets: this run takes the cells whose index i has
         * i % n_slots == slot (others are neither run nor reported) and adds extra_env
         * ("CUDA_VISIBLE_DEVICES=...") to each server's environment, outside the cell id. */
        size_t slot, n_slots;         /* n_slots 0 or 1: every cell */
        char *const *extra_env;
        /* Each server in a cgroup of its own under this (cgroup.h); NULL: its processes are
         * found through /proc (procs.h) */
        const struct cgroup_base *cgroups;
        /* run --against (docs/compare.md "Checking the winner again"): these cells (indices
         * into cells_expand's order) first, in this order, then cb->first_settled's word;
         * NULL: none. The strategy then leaves them out of its own order. */
        const size_t *first;
        size_t n_first;
};

struct sweep_summary {
        size_t cells;
        size_t ran;                   /* launched in this run */
        size_t settled_before;        /* skipped because the journal had them */
        size_t by_verdict[_VERDICT_MAX];
        bool interrupted;
        int signal;                   /* the signal that interrupted it, or 0 */
};

/* Runs the sweep on loop l (which should catch signals). Returns 0 when every cell was
 * settled (whatever the verdicts), -EINTR when a signal interrupted it (the server in
 * flight is stopped and its attempt abandoned), or another negative errno when gauntlet
 * could not go on (journal unwritable, a server that could not be stopped); then
 * *ret_error says what, in one line (caller frees). */
int sweep_run(struct loop *l, const struct matrix *m, struct journal *j, const struct sweep_options *o,
              const struct sweep_callbacks *cb, struct sweep_summary *ret, char **ret_error);

/* What every run of m does first, alone or side by side (workers.h), before any server
 * starts: what a killed earlier run left behind (attempts still 'running' in the journal) is
 * stopped, with m's launcher where it runs and m's stop_timeout as the grace, and told to
 * cb as notices. 0, or a negative errno and *ret_error (optional, caller frees): "cannot
 * stop what an earlier run left behind: ...". */
int sweep_clear_leftovers(struct loop *l, struct journal *j, const struct matrix *m, const struct sweep_callbacks *cb,
                          char **ret_error);

/* Hands a formatted notice to cb->notice, if there is one (the library never prints). */
void sweep_notice(const struct sweep_callbacks *cb, const char *fmt, ...) _printf_(2, 3);

/* Whether the matrix's servers can start at all, before any cell: the program exists and
 * is executable (on PATH when it has no '/'; the profile's own program also beside the
 * running gauntlet, see sweep_program), the workdir is a folder, the host is an address
 * of this machine. 0, or a negative errno and in *ret_error one line "FILE:LINE: ..."
 * naming the matrix key (caller frees). */
int sweep_preflight(const struct matrix *m, char **ret_error);

#endif
