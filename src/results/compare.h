/* compare.h -- two sweeps' views side by side, and every decision on the difference
 * (gauntlet compare, docs/compare.md).
 *
 * Cells are matched by their axis values ("moe=nvfp4 gemm=auto"), not by their ids: an
 * engine upgrade keeps the matrix's axes but may change a cell's argv. For each matched
 * pair: the verdict's change (pass to anything else settled is a regression, the other way
 * a fix), the objective's relative change with a 95% interval (a bootstrap over the
 * per-request samples at the objective's level, else the repeats' ranges), the accuracy's
 * change with the eval's two-proportion z-test; for the two sweeps: the best cell's change
 * and what their provenance says changed. A change whose interval holds 0 is noise, never a
 * regression, whatever its size; a significant change is a regression only beyond the
 * thresholds of struct compare_options. Deterministic: the bootstrap's seed is fixed.
 */
#ifndef GAUNTLET_COMPARE_H
#define GAUNTLET_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/results.h"

struct compare_options {
        double max_slowdown;          /* a fraction: 0.05 lets the objective get 5% worse */
        double max_accuracy_drop;     /* a fraction (0.02: two points of accuracy) */
        unsigned resamples;           /* the bootstrap's; 0: COMPARE_RESAMPLES */
        uint64_t seed;                /* the bootstrap's */
        double max_steal;             /* a fraction of the host's CPU time: a bench level during
                                         which the hypervisor and other processes took more
                                         was disturbed */
};
/* A level's slowdown that steal s could have caused is taken to be at most this many times
 * s: on the 2-core VM the tests run on, 18% steal cost a llama-server bench 30% of its
 * tokens per second (1.7 times), 40% steal up to 50% (docs/compare.md, "A disturbed
 * host"). */
#define COMPARE_STEAL_FACTOR 2.0
#define COMPARE_RESAMPLES 2000
#define COMPARE_MIN_SAMPLES 5         /* fewer requests on a side: no bootstrap */
void compare_options_init(struct compare_options *o);

enum compare_change {
        COMPARE_SAME,                 /* the same verdict (and cause) */
        COMPARE_REGRESSION,           /* passed, now settled and not passing */
        COMPARE_FIX,                  /* settled and not passing, now passes */
        COMPARE_CHANGED,              /* another failure than before */
        COMPARE_MISSING,              /* passed, now not run or skipped: not judged */
        COMPARE_ONLY_OLD,             /* no cell with these axis values in the new sweep */
        COMPARE_ONLY_NEW,
};
const char *compare_change_name(enum compare_change c);

enum compare_method {
        COMPARE_METHOD_NONE,          /* no figure on one side */
        COMPARE_METHOD_BOOTSTRAP,     /* per-request samples at the objective's level */
        COMPARE_METHOD_REPEATS,       /* bench.repeats' [min, max] ranges */
        COMPARE_METHOD_UNKNOWN,       /* figures without samples or repeats: no noise known */
};
const char *compare_method_name(enum compare_method m);

struct compare_speed {
        bool known;                   /* both sides passed with a figure */
        bool higher_better;
        double old_value, new_value;
        double change;                /* new/old - 1 */
        double worse;                 /* the change counted as a loss: > 0 worse, < 0 better */
        enum compare_method method;
        double lo, hi;                /* 95% interval of change (BOOTSTRAP, REPEATS) */
        size_t n_old, n_new;          /* requests (BOOTSTRAP) or repeats (REPEATS) */
        bool significant;             /* the interval excludes 0 (UNKNOWN: always) */
        bool regression;              /* significant and worse by more than max_slowdown */
        bool improvement;             /* significant and better */
        /* The host's steal over each side's level (client_cpu.host_steal, the highest of its
         * repeats; NAN: unknown). disturbed: either is above max_steal. inconclusive: not a
         * regression, yet it could be one for all the disturbed figures tell: the new side
         * significantly slower beyond the threshold, by no more than max_slowdown +
         * COMPARE_STEAL_FACTOR times its steal (the steal may have made it so), or the old
         * side disturbed so that a regression of the new one up to COMPARE_STEAL_FACTOR
         * times the old's steal may hide behind its low figure. */
        double steal_old, steal_new;
        /* Other processes' share of the host's CPU time over each side's level beyond its
         * idle share (client_cpu.host_others less host_idle, cpustat_contention; likewise):
         * a compiler beside the bench on a host with no CPU to spare. What counts
         * against max_steal, and is multiplied by COMPARE_STEAL_FACTOR, is a side's steal
         * and others' share together. */
        double others_old, others_new;
        bool disturbed;
        bool inconclusive;
        /* How each side counted the objective level's output tokens (its bench entry's
         * "count", docs/metrics.md "Output tokens"): its rule ("tokenizer", "bytes", "own";
         * "" where the journal has none) and its bytes per token (NAN: unknown). A side
         * counted by bytes holds an estimate at its sweep's bytes per token, the others the
         * text's tokens. counted_apart: with an estimate on a side, their bytes per token
         * differ by a thousandth or more (the same text counts that much apart); without,
         * two rules, two tokenizers, or own counts of two sources (usage, chunks), whose
         * bytes per token differ so too (two ways that agree on the text are alike). Said
         * beside the change, which it never adjusts: the difference may be the first cells'
         * texts (then the change is partly the count's) or every cell's (then each sweep's
         * own figure is the right one), and the journals cannot tell which
         * (docs/compare.md "Counted apart"). */
        const char *count_old, *count_new; /* static words ("" none); NULL in a cell not compared */
        double bpt_old, bpt_new;
        bool by_bytes;                     /* a side, or both, counted by bytes: an estimate */
        bool counted_apart;
};

struct compare_accuracy {
        bool known;                   /* both answered the eval's questions */
        size_t k_old, n_old, k_new, n_new;
        double old_acc, new_acc, change;   /* change: new - old */
        double z, p;                  /* the two-proportion z-test (eval.h) */
        bool significant;             /* p < EVAL_ALPHA */
        bool regression;              /* significant, lower by more than max_accuracy_drop */
};

struct compare_cell {
        char *label;                  /* "axis=value ..." ("(no axes)" for a matrix without) */
        long old_index, new_index;    /* into the views' cells; -1: none */
        enum compare_change change;
        struct compare_speed speed;
        struct compare_accuracy accuracy;
        bool regression;              /* change, speed or accuracy */
};

struct compare_result {
        const struct report_view *old, *new;  /* borrowed */
        struct compare_options opts;
        char *metric;                 /* the objective, as the new sweep names it */
        struct compare_cell *cells;   /* the new sweep's order, then cells only the old had */
        size_t n_cells;
        long old_best, new_best;      /* indices into cells; -1: no best */
        bool best_changed;
        char **provenance_changes;    /* NULL-terminated (provenance_diff); NULL: one has none */
        size_t regressions, fixes, slower, faster, accuracy_drops, unchanged;
        size_t inconclusive;          /* speed changes that steal leaves undecided */
        bool regressed;               /* something regressed beyond the thresholds */
};

/* Compares old with new. -EINVAL when their objectives differ (nothing to compare the
 * figures by), -ENOMEM. On success the caller frees *ret (compare_result_free). */
int compare_views(const struct report_view *old, const struct report_view *new, const struct compare_options *o,
                  struct compare_result **ret);
void compare_result_free(struct compare_result *r);
static inline void compare_result_freep(struct compare_result **r) { if (*r) compare_result_free(*r); }
#define _cleanup_compare_result_ _cleanup_(compare_result_freep)

/* ---- gauntlet run --against (docs/compare.md "Checking the winner again") ---- */

/* The old sweep's winner (report_best_index), then its close rivals: the other passing
 * cells that tie with it (report_best_ties) or whose figure is worse than its by no more
 * than o->max_slowdown. Indices into old->cells, the winner first, in *ret (caller frees),
 * how many in *ret_n. -ENOENT when no cell of old passed, -ENOMEM. */
int compare_rivals(const struct report_view *old, const struct compare_options *o, size_t **ret, size_t *ret_n);

/* The cell of v with the axis values of cell i of old (v's axes, in any order): its index
 * into v->cells, or -1. */
long compare_match(const struct report_view *old, size_t i, const struct report_view *v);

/* The old winner checked again in the new sweep. */
struct compare_against {
        long old_winner;              /* index into old->cells */
        long winner_now;              /* the same cell in new->cells; -1: not in the matrix */
        enum compare_change change;   /* the old winner's verdict change (winner_now >= 0) */
        bool still_passes;
        long new_best;                /* index into new->cells (report_best_index); -1: none */
        struct compare_speed speed;   /* the old winner: its new figure against its old */
        struct compare_speed rival;   /* new_best against the old winner, both of the new sweep
                                         (known only when they differ) */
        bool still_best;              /* it still passes, and no cell of new is better than it
                                         significantly and by more than o->max_slowdown */
};
/* Decides it. -ENOENT when no cell of old passed, -ENOMEM. */
int compare_against_check(const struct report_view *old, const struct report_view *new, const struct compare_options *o,
                          struct compare_against *ret);
/* What changed, as journaled with the new sweep (sweeps.against) and written by emit: the
 * old journal and sweep, the old and new winner's labels, the old winner's verdicts and
 * speed change, stopped (the rest of the matrix was not run), and what the two sweeps'
 * provenance says changed (provenance_diff). NULL on ENOMEM. */
json_t *compare_against_json(const struct report_view *old, const struct report_view *new,
                             const struct compare_against *a, const char *old_path, bool stopped);

/* The bootstrap alone (also for the tests): the 95% interval of stat(b)/stat(a) - 1 over
 * resamples of a[0..na) and b[0..nb), each side resampled on its own. The statistic: with
 * weights (wa, wb), the sum of weights over the sum of times (a rate: tokens per second);
 * else with quantile in (0, 1), that quantile of the times; else their mean. Also the
 * statistic's own change in *ret_point. -EINVAL below COMPARE_MIN_SAMPLES on a side. */
int compare_bootstrap(const double *wa, const double *ta, size_t na, const double *wb, const double *tb, size_t nb,
                      double quantile, unsigned resamples, uint64_t seed, double *ret_point, double *ret_lo,
                      double *ret_hi);

#endif
