/* search-bench.c -- search strategies on simulated tuning spaces (tools/search_sim.h).
 * A measurement, not a test: tests/unit/test_search.c asserts the search's figures.
 *
 *   gauntlet-search-bench [--spaces N] [--seed S] [--min-cells N] [--max-cells N]
 *                         [--budget-share F] [--budget-only] [--jobs N] [--verbose]
 *   gauntlet-search-bench --space SEED [--budget-share F] [--trace-budget]
 *   gauntlet-search-bench --space-file FILE [--space NAME] [--spaces N] [--seed S] ...
 *
 * Draws N spaces (space i from seed mix(S, i)) and runs on each: grid, one-at-a-time,
 * random with as many launches as the search used, random with F of the grid, the search
 * without a budget, and the search with a budget of F of the cells (F = 0.1 unless given;
 * --budget-share 0 leaves out the two rows with a share). Prints per strategy the
 * success rate (named a serving cell within 3% of the true best), the launches and the
 * launches as a share of the grid (median, p95) and the simulated hours (median), for all
 * spaces and for the spaces of 200 cells or more; then the search's success on the spaces
 * that show each pattern and on those that do not, and how far from the best each
 * strategy's failures named. Then the grid and the search on K = 1, 4 and 8 slots side by
 * side (sim_run_params.slots: the search decides with the cells in flight pending): success,
 * launches, launches and wall hours to the named best's first launch, wall hours, failed
 * launches. After the patterns, the spaces whose best needs a synergy no value points at
 * (sim_space_needle): each strategy's success there and elsewhere, and with a share, a
 * bound for any search that finds such a pair only by launching it. Then the failed launches
 * of the grid and the search rows by what the spaces' failure lines name (sim_space_lines),
 * and with a share, the budgeted rows' success by the budget against the number of an
 * additive speed model's parameters (1 + each axis's values less one).
 * --verbose lists the spaces where the search failed, with their patterns and failed launches.
 * --budget-only runs the budgeted rows alone (grid, random and search with F of the grid).
 * --one-slot leaves out the rows with K = 4 and 8 in flight.
 * --space runs one space (by the seed such a list prints; give the list's --min-cells) and
 * prints the search's trajectory, or with --trace-budget (or --budget-only) the budgeted
 * search's.
 * --space-file reads the spaces from FILE, one JSON object a line (tools/search_sim_load.c
 * says the format: spaces written apart from this simulator), instead of drawing them: the
 * first N lines with --spaces, every line without; --seed then seeds the launches' noise
 * alone, and --space names one of them to trace.
 * --jobs: spaces run side by side on N threads (default 2). stdout is the same for the same
 * flags, --jobs included or not; progress and the run time go to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_sim.h"
#include "base/util.h"

enum row {
        ROW_GRID,
        ROW_OAT,
        ROW_RANDOM_SAME,
        ROW_RANDOM_SHARE,
        ROW_SEARCH,
        ROW_SEARCH_BUDGET,
        ROW_GRID_K4,            /* side by side: the grid and the search on K slots */
        ROW_SEARCH_K4,
        ROW_GRID_K8,
        ROW_SEARCH_K8,
        N_ROWS,
};
#define N_SERIAL_ROWS ROW_GRID_K4

struct outcome {
        bool ran;
        bool success;
        size_t launches;
        double share;           /* launches / cells */
        double hours;           /* simulated */
        long named;
        double named_speed, best_speed;
        size_t near_launched;   /* launched serving cells within 3% of the best */
        size_t to_named;        /* launches up to the named cell's first */
        double to_named_hours;
        size_t failed;          /* launches that failed */
        size_t failed_one;      /* of them, by one value's doing (sim_result.failed_one) */
        size_t failed_oom;      /* of them, out of memory */
        double failed_hours;
        double wall_hours;      /* simulated wall time, the slots side by side */
        double to_named_wall;   /* wall time to the end of the named cell's first launch */
        const char *stop;
};

struct space_result {
        int rc;                 /* 0, or the error that stopped this space */
        uint64_t seed;
        char *name;             /* a space read from a file: its name */
        char error[256];        /* one that could not be read: why */
        size_t cells;
        unsigned patterns;
        bool needle;            /* sim_space_needle */
        enum sim_lines lines;   /* sim_space_lines */
        size_t oom_cells;       /* cells that run out of memory */
        int oom_sizes;          /* and their lines say the size (1: sim_space_oom_sizes), and
                                   what was free (2: sim_space_oom_free) */
        size_t combos;
        size_t params;          /* the speed model's main effects: 1 + the sum of (values - 1) */
        char *describe;
        struct outcome o[N_ROWS];
};

struct opts {
        size_t spaces;
        uint64_t seed;
        size_t min_cells, max_cells;
        double budget_share;
        size_t jobs;
        bool verbose;
        bool one;
        uint64_t one_seed;
        const char *one_name;   /* --space as given */
        bool one_numeric;       /* ... and it is a number (one_seed) */
        const char *space_file; /* --space-file */
        bool spaces_given;
        char **lines;           /* the file's spaces, one a line */
        size_t n_lines;
};

static const char *prog = "gauntlet-search-bench";

static void usage(FILE *f) {
        fprintf(f,
                "usage: %s [--spaces N] [--seed S] [--min-cells N] [--max-cells N] [--budget-share F] [--budget-only]\n"
                "       [--one-slot] [--jobs N] [--verbose]\n"
                "       %s --space SEED [--budget-share F] [--trace-budget] [--min-cells N] [--max-cells N]\n"
                "       %s --space-file FILE [--space NAME] [--spaces N] [--seed S] [--budget-share F] [--budget-only]\n"
                "       [--one-slot] [--jobs N] [--verbose]\n",
                prog, prog, prog);
}

/* --space: the trajectory printed is the budgeted search's (--trace-budget), not the
 * search's without a budget. --budget-only: the search without a budget, the random search
 * with its launches and the rows side by side are left out (a budget measured in a fifth
 * of the time). */
static bool trace_budget, budget_only;
/* --one-slot: the rows with K = 4 and 8 in flight are left out (without a budget, half the
 * time). */
static bool one_slot;

static int parse_u64(const char *s, uint64_t *ret) {
        char *end;
        errno = 0;
        if (!s || !*s || *s == '-')
                return -EINVAL;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_args(int argc, char **argv, struct opts *o) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                uint64_t u;
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        return 1;
                } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
                        o->verbose = true;
                        continue;
                } else if (strcmp(a, "--trace-budget") == 0) {
                        trace_budget = true;
                        continue;
                } else if (strcmp(a, "--budget-only") == 0) {
                        budget_only = true;
                        continue;
                } else if (strcmp(a, "--one-slot") == 0) {
                        one_slot = true;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "%s: '%s' needs a value\n", prog, a);
                        return -EINVAL;
                }
                i++;
                if (strcmp(a, "--space-file") == 0) {
                        o->space_file = v;
                        continue;
                }
                if (strcmp(a, "--space") == 0) {
                        /* a seed, or with --space-file a space's name (main checks which) */
                        o->one = true;
                        o->one_name = v;
                        o->one_numeric = parse_u64(v, &o->one_seed) == 0;
                        continue;
                }
                if (strcmp(a, "--budget-share") == 0) {
                        char *end;
                        errno = 0;
                        o->budget_share = strtod(v, &end);
                        if (errno || *end || !(o->budget_share >= 0 && o->budget_share <= 1)) {
                                fprintf(stderr, "%s: invalid share '%s' (0 to 1)\n", prog, v);
                                return -EINVAL;
                        }
                        continue;
                }
                if (parse_u64(v, &u) < 0) {
                        fprintf(stderr, "%s: invalid number '%s' for %s\n", prog, v, a);
                        return -EINVAL;
                }
                if (strcmp(a, "--spaces") == 0 && u >= 1 && u <= 1000000) {
                        o->spaces = (size_t)u;
                        o->spaces_given = true;
                }
                else if (strcmp(a, "--jobs") == 0 && u >= 1 && u <= 256)
                        o->jobs = (size_t)u;
                else if (strcmp(a, "--seed") == 0)
                        o->seed = u;
                else if (strcmp(a, "--min-cells") == 0 && u <= SIM_CELLS_MAX)
                        o->min_cells = (size_t)u;
                else if (strcmp(a, "--max-cells") == 0 && u <= SIM_CELLS_MAX)
                        o->max_cells = (size_t)u;
                else {
                        fprintf(stderr, "%s: unknown option or value out of range: '%s %s'\n", prog, a, v);
                        return -EINVAL;
                }
        }
        return 0;
}

static size_t budget_of(double share, size_t cells) {
        size_t b = (size_t)llround(share * (double)cells);
        return b ? b : 1;
}

static int run_one(const struct sim_space *s, enum sim_strategy st, size_t budget, uint64_t seed, struct outcome *o,
                   const struct sim_run_params *extra) {
        struct sim_run_params p = {.budget = budget, .slots = extra ? extra->slots : 0};
        if (extra) {
                p.on_step = extra->on_step;
                p.userdata = extra->userdata;
        }
        struct sim_result r;
        int rc = sim_run(s, st, &p, seed, &r);
        if (rc < 0)
                return rc;
        *o = (struct outcome){
                .ran = true,
                .success = r.success,
                .launches = r.launches,
                .share = (double)r.launches / (double)sim_space_cells(s),
                .hours = r.seconds / 3600,
                .named = r.named,
                .named_speed = r.named_speed,
                .best_speed = r.best_speed,
                .near_launched = r.near_launched,
                .to_named = r.launches_to_named,
                .to_named_hours = r.seconds_to_named / 3600,
                .failed = r.failed,
                .failed_one = r.failed_one,
                .failed_oom = r.failed_oom,
                .failed_hours = r.failed_seconds / 3600,
                .wall_hours = r.wall / 3600,
                .to_named_wall = r.wall_to_named / 3600,
                .stop = r.stop,
        };
        return 0;
}

/* All the strategies on one space. */
static int run_space(const struct sim_space *s, double share, struct space_result *sr,
                     const struct sim_run_params *trajectory) {
        uint64_t seed = sr->seed;
        size_t n = sim_space_cells(s);
        int rc;
        if ((rc = run_one(s, SIM_GRID, 0, sim_seed_mix(seed, 10), &sr->o[ROW_GRID], NULL)) < 0 ||
            (rc = run_one(s, SIM_ONE_AT_A_TIME, 0, sim_seed_mix(seed, 11), &sr->o[ROW_OAT], NULL)) < 0 ||
            (!budget_only &&
             ((rc = run_one(s, SIM_SEARCH, 0, sim_seed_mix(seed, 12), &sr->o[ROW_SEARCH],
                          trace_budget ? NULL : trajectory)) < 0 ||
            (rc = run_one(s, SIM_RANDOM, sr->o[ROW_SEARCH].launches, sim_seed_mix(seed, 13), &sr->o[ROW_RANDOM_SAME],
                          NULL)) < 0)))
                return rc;
        if (share > 0) {
                size_t b = budget_of(share, n);
                if ((rc = run_one(s, SIM_RANDOM, b, sim_seed_mix(seed, 14), &sr->o[ROW_RANDOM_SHARE], NULL)) < 0 ||
                    (rc = run_one(s, SIM_SEARCH, b, sim_seed_mix(seed, 15), &sr->o[ROW_SEARCH_BUDGET],
                                  trace_budget ? trajectory : NULL)) < 0)
                        return rc;
        }
        /* side by side: the search's noise is the one-at-a-time search's (seed 12) */
        static const struct {
                enum row row;
                enum sim_strategy st;
                size_t slots;
        } side[] = {{ROW_GRID_K4, SIM_GRID, 4}, {ROW_SEARCH_K4, SIM_SEARCH, 4},
                    {ROW_GRID_K8, SIM_GRID, 8}, {ROW_SEARCH_K8, SIM_SEARCH, 8}};
        for (size_t i = 0; i < ELEMENTSOF(side) && !budget_only && !one_slot; i++) {
                struct sim_run_params k = {.slots = side[i].slots};
                if ((rc = run_one(s, side[i].st, 0, sim_seed_mix(seed, side[i].st == SIM_GRID ? 10 : 12),
                                  &sr->o[side[i].row], &k)) < 0)
                        return rc;
        }
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* Nearest rank on sorted v. */
static double percentile(const double *v, size_t n, double p) {
        if (n == 0)
                return NAN;
        size_t rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
        return v[rank < 1 ? 0 : rank - 1];
}

static void row_label(enum row r, double share, char *buf, size_t size) {
        switch (r) {
        case ROW_GRID:
                snprintf(buf, size, "grid");
                break;
        case ROW_OAT:
                snprintf(buf, size, "one-at-a-time");
                break;
        case ROW_RANDOM_SAME:
                snprintf(buf, size, "random (search's launches)");
                break;
        case ROW_RANDOM_SHARE:
                snprintf(buf, size, "random (%g%% of grid)", 100 * share);
                break;
        case ROW_SEARCH:
                snprintf(buf, size, "search");
                break;
        case ROW_SEARCH_BUDGET:
                snprintf(buf, size, "search (budget %g%%)", 100 * share);
                break;
        case ROW_GRID_K4:
        case ROW_GRID_K8:
                snprintf(buf, size, "grid, K = %d", r == ROW_GRID_K4 ? 4 : 8);
                break;
        case ROW_SEARCH_K4:
        case ROW_SEARCH_K8:
                snprintf(buf, size, "search, K = %d", r == ROW_SEARCH_K4 ? 4 : 8);
                break;
        case N_ROWS:
                buf[0] = '\0';
                break;
        }
}

#define TABLE_COLS 7
static void print_table(const struct space_result *sr, size_t n, size_t min_cells, double share, const char *title) {
        double *col[TABLE_COLS] = {0};
        bool ok_alloc = true;
        for (size_t c = 0; c < TABLE_COLS; c++)
                ok_alloc &= (col[c] = calloc(n ? n : 1, sizeof(double))) != NULL;
        if (!ok_alloc) {
                for (size_t c = 0; c < TABLE_COLS; c++)
                        free(col[c]);
                return;
        }
        double *launches = col[0], *shares = col[1], *hours = col[2], *to_named = col[3], *to_hours = col[4],
               *failed = col[5], *failed_hours = col[6];
        size_t in = 0;
        for (size_t i = 0; i < n; i++)
                in += sr[i].cells >= min_cells;
        printf("%s (%zu spaces; medians but p95)\n", title, in);
        printf("  %-28s %8s %8s %6s %8s %6s %7s %8s %8s %7s %7s\n", "strategy", "success", "launches", "p95",
               "of grid", "p95", "hours", "to best", "hours", "failed", "hours");
        for (enum row r = 0; r < N_SERIAL_ROWS; r++) {
                size_t m = 0, ok = 0;
                for (size_t i = 0; i < n; i++) {
                        const struct outcome *o = &sr[i].o[r];
                        if (sr[i].cells < min_cells || !o->ran)
                                continue;
                        launches[m] = (double)o->launches;
                        shares[m] = o->share;
                        hours[m] = o->hours;
                        to_named[m] = (double)o->to_named;
                        to_hours[m] = o->to_named_hours;
                        failed[m] = (double)o->failed;
                        failed_hours[m] = o->failed_hours;
                        ok += o->success;
                        m++;
                }
                if (m == 0)
                        continue;
                for (size_t c = 0; c < TABLE_COLS; c++)
                        qsort(col[c], m, sizeof(double), cmp_double);
                char label[64];
                row_label(r, share, label, sizeof(label));
                printf("  %-28s %7.1f%% %8.0f %6.0f %7.1f%% %5.1f%% %7.1f %8.0f %8.1f %7.0f %7.2f\n", label,
                       100.0 * (double)ok / (double)m, percentile(launches, m, 50), percentile(launches, m, 95),
                       100 * percentile(shares, m, 50), 100 * percentile(shares, m, 95), percentile(hours, m, 50),
                       percentile(to_named, m, 50), percentile(to_hours, m, 50), percentile(failed, m, 50),
                       percentile(failed_hours, m, 50));
        }
        printf("\n");
        for (size_t c = 0; c < TABLE_COLS; c++)
                free(col[c]);
}

/* The grid and the search on K slots side by side (K = 1: the one-at-a-time rows): wall
 * time is the simulated hours until the last launch ends, the slots side by side. */
static void print_slots(const struct space_result *sr, size_t n) {
        static const enum row rows[] = {ROW_GRID, ROW_SEARCH, ROW_GRID_K4, ROW_SEARCH_K4, ROW_GRID_K8, ROW_SEARCH_K8};
        double *col[5] = {0};
        bool ok_alloc = true;
        for (size_t c = 0; c < ELEMENTSOF(col); c++)
                ok_alloc &= (col[c] = calloc(n ? n : 1, sizeof(double))) != NULL;
        printf("side by side on K slots (%zu spaces; medians; wall: simulated hours, the slots side by side)\n", n);
        printf("  %-28s %8s %8s %8s %12s %9s %7s\n", "strategy", "success", "launches", "to best", "wall to best",
               "wall", "failed");
        for (size_t i = 0; ok_alloc && i < ELEMENTSOF(rows); i++) {
                size_t m = 0, ok = 0;
                for (size_t j = 0; j < n; j++) {
                        const struct outcome *o = &sr[j].o[rows[i]];
                        if (!o->ran)
                                continue;
                        col[0][m] = (double)o->launches;
                        col[1][m] = (double)o->to_named;
                        col[2][m] = rows[i] <= ROW_SEARCH_BUDGET ? o->to_named_hours : o->to_named_wall;
                        col[3][m] = rows[i] <= ROW_SEARCH_BUDGET ? o->hours : o->wall_hours;
                        col[4][m] = (double)o->failed;
                        ok += o->success;
                        m++;
                }
                if (m == 0)
                        continue;
                for (size_t c = 0; c < ELEMENTSOF(col); c++)
                        qsort(col[c], m, sizeof(double), cmp_double);
                char label[64];
                row_label(rows[i], 0, label, sizeof(label));
                if (rows[i] <= ROW_SEARCH_BUDGET)
                        strcat(label, ", K = 1");
                printf("  %-28s %7.1f%% %8.0f %8.0f %12.1f %9.1f %7.0f\n", label, 100.0 * (double)ok / (double)m,
                       percentile(col[0], m, 50), percentile(col[1], m, 50), percentile(col[2], m, 50),
                       percentile(col[3], m, 50), percentile(col[4], m, 50));
        }
        printf("\n");
        for (size_t c = 0; c < ELEMENTSOF(col); c++)
                free(col[c]);
}

/* The search's success on the spaces that show each pattern, and on those that do not. */
static void print_patterns(const struct space_result *sr, size_t n, double share) {
        printf("search success by pattern\n");
        printf("  %-10s %7s %9s %9s", "pattern", "spaces", "search", "without");
        if (share > 0)
                printf(" %9s %9s", "budget", "without");
        printf("\n");
        for (unsigned p = 0; p < _SIM_PATTERN_MAX; p++) {
                size_t m = 0, ok = 0, okb = 0, ok_out = 0, okb_out = 0;
                for (size_t i = 0; i < n; i++) {
                        bool has = sr[i].patterns & (1u << p);
                        m += has;
                        (has ? &ok : &ok_out)[0] += sr[i].o[ROW_SEARCH].success;
                        (has ? &okb : &okb_out)[0] += sr[i].o[ROW_SEARCH_BUDGET].success;
                }
                if (m == 0)
                        continue;
                double without = m < n ? 100.0 * (double)ok_out / (double)(n - m) : NAN;
                if (budget_only)
                        printf("  %-10s %7zu %9s %9s", sim_pattern_to_string(p), m, "-", "-");
                else
                        printf("  %-10s %7zu %8.1f%% %8.1f%%", sim_pattern_to_string(p), m,
                               100.0 * (double)ok / (double)m, without);
                if (share > 0)
                        printf(" %8.1f%% %8.1f%%", 100.0 * (double)okb / (double)m,
                               m < n ? 100.0 * (double)okb_out / (double)(n - m) : NAN);
                printf("\n");
        }
        printf("\n");
}

/* The spaces of min_cells or more whose best needs a synergy no value points at
 * (sim_space_needle), and a bound for any search that finds such a pair only by launching
 * it: with b launches it holds at most b of the pair's possible places, so its chance is
 * at most b / places there, and 1 elsewhere. Without such a space, the count alone; a
 * group of no space shows "-". */
static void print_needles(const struct space_result *sr, size_t n, size_t min_cells, double share) {
        size_t m = 0, needles = 0;
        double bound = 0;
        for (size_t i = 0; i < n; i++) {
                if (sr[i].cells < min_cells)
                        continue;
                m++;
                if (!sr[i].needle) {
                        bound += 1;
                        continue;
                }
                needles++;
                if (share > 0)
                        bound += MIN(1.0, (double)budget_of(share, sr[i].cells) / (double)sr[i].combos);
        }
        if (m == 0)
                return;
        printf("spaces of >= %zu cells whose best needs a pair no value points at: %zu of %zu\n", min_cells, needles,
               m);
        if (needles == 0) {
                printf("\n");
                return;
        }
        printf("  %-28s %9s %9s\n", "strategy", "those", "the rest");
        for (enum row r = 0; r < N_SERIAL_ROWS; r++) {
                size_t ran = 0, in = 0, ok_in = 0, ok_out = 0;
                for (size_t i = 0; i < n; i++) {
                        const struct outcome *o = &sr[i].o[r];
                        if (sr[i].cells < min_cells || !o->ran)
                                continue;
                        ran++;
                        in += sr[i].needle;
                        (sr[i].needle ? &ok_in : &ok_out)[0] += o->success;
                }
                if (ran == 0)
                        continue;
                char label[64];
                row_label(r, share, label, sizeof(label));
                printf("  %-28s", label);
                /* a group with no space: "-" */
                if (in)
                        printf(" %8.1f%%", 100.0 * (double)ok_in / (double)in);
                else
                        printf(" %9s", "-");
                if (ran > in)
                        printf(" %8.1f%%\n", 100.0 * (double)ok_out / (double)(ran - in));
                else
                        printf(" %9s\n", "-");
        }
        if (share > 0)
                printf("  with %.0f%% of the grid, any search that finds such a pair only by launching it names the "
                       "best in at most %.1f%% of these spaces\n",
                       100 * share, 100.0 * bound / (double)m);
        printf("\n");
}

/* The failed launches of the grid and the search rows on the spaces of min_cells or more,
 * by what the spaces' failure lines say of the values at fault (sim_space_lines): success,
 * the failed launches (median, mean), those by one value's doing (a hang, a kernel for
 * another GPU, a break under batching: what a line may name; mean) and the hours of the
 * failed launches (median). */
static void print_lines(const struct space_result *sr, size_t n, size_t min_cells, double share) {
        static const enum row rows[] = {ROW_GRID, ROW_SEARCH, ROW_SEARCH_BUDGET};
        size_t in = 0;
        for (size_t j = 0; j < n; j++)
                in += sr[j].cells >= min_cells;
        if (in == 0)
                return;
        _cleanup_free_ double *failed = calloc(n ? n : 1, sizeof(double)), *hours = calloc(n ? n : 1, sizeof(double));
        if (!failed || !hours)
                return;
        printf("failed launches by what the failure lines name (spaces of >= %zu cells; one value: by one value's "
               "doing)\n",
               min_cells);
        printf("  %-28s %-15s %6s %8s %7s %7s %9s %7s\n", "strategy", "the lines", "spaces", "success", "failed",
               "mean", "one value", "hours");
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                for (enum sim_lines l = 0; l < _SIM_LINES_MAX; l++) {
                        size_t m = 0, ok = 0;
                        double sum = 0, one = 0;
                        for (size_t j = 0; j < n; j++) {
                                const struct outcome *o = &sr[j].o[rows[i]];
                                if (sr[j].cells < min_cells || !o->ran || sr[j].lines != l)
                                        continue;
                                failed[m] = (double)o->failed;
                                hours[m] = o->failed_hours;
                                sum += (double)o->failed;
                                one += (double)o->failed_one;
                                ok += o->success;
                                m++;
                        }
                        if (m == 0)
                                continue;
                        qsort(failed, m, sizeof(double), cmp_double);
                        qsort(hours, m, sizeof(double), cmp_double);
                        char label[64];
                        row_label(rows[i], share, label, sizeof(label));
                        printf("  %-28s %-15s %6zu %7.1f%% %7.0f %7.1f %9.2f %7.2f\n", label, sim_lines_to_string(l),
                               m, 100.0 * (double)ok / (double)m, percentile(failed, m, 50), sum / (double)m,
                               one / (double)m, percentile(hours, m, 50));
                }
        printf("\n");
}

/* The launches that ran out of memory, in the spaces where some cell does, by whether the
 * lines say the size of the allocation that failed (sim_space_set_oom_sizes) and what was
 * free (sim_space_set_oom_free): spaces, success, such launches per space (median, mean). */
static void print_oom(const struct space_result *sr, size_t n, size_t min_cells, double share) {
        static const enum row rows[] = {ROW_SEARCH, ROW_SEARCH_BUDGET};
        _cleanup_free_ double *oom = calloc(n ? n : 1, sizeof(double));
        if (!oom)
                return;
        printf("launches out of memory by what the lines say (spaces of >= %zu cells where some cell runs out)\n",
               min_cells);
        printf("  %-28s %-15s %6s %8s %7s %7s\n", "strategy", "the lines", "spaces", "success", "oom", "mean");
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                for (int says = 2; says >= 0; says--) {
                        size_t m = 0, ok = 0;
                        double sum = 0;
                        for (size_t j = 0; j < n; j++) {
                                const struct outcome *o = &sr[j].o[rows[i]];
                                if (sr[j].cells < min_cells || !o->ran || sr[j].oom_cells == 0 ||
                                    sr[j].oom_sizes != says)
                                        continue;
                                oom[m++] = (double)o->failed_oom;
                                sum += (double)o->failed_oom;
                                ok += o->success;
                        }
                        if (m == 0)
                                continue;
                        qsort(oom, m, sizeof(double), cmp_double);
                        char label[64];
                        row_label(rows[i], share, label, sizeof(label));
                        printf("  %-28s %-15s %6zu %7.1f%% %7.0f %7.1f\n", label, says == 2 ? "sizes and free" : says ? "their sizes" : "one size", m,
                               100.0 * (double)ok / (double)m, percentile(oom, m, 50), sum / (double)m);
                }
        printf("\n");
}

/* The budgeted rows' success by how the budget compares with the speed model's parameters
 * (space_result.params): a budget under one and a half times them leaves next to no launch
 * beyond learning each value once, and there only the prior tells values apart. */
static void print_budget_fit(const struct space_result *sr, size_t n, size_t min_cells, double share) {
        static const double edges[] = {0, 1, 1.5, 2, INFINITY};
        static const char *const names[] = {"under 1", "1 to 1.5", "1.5 to 2", "2 or more"};
        static const enum row rows[] = {ROW_RANDOM_SHARE, ROW_SEARCH_BUDGET};
        if (share <= 0)
                return;
        printf("budgeted success by the budget against the speed model's parameters (1 + each axis's values less "
               "one; spaces of >= %zu cells)\n",
               min_cells);
        printf("  %-28s", "strategy");
        for (size_t e = 0; e + 1 < ELEMENTSOF(edges); e++)
                printf(" %16s", names[e]);
        printf("\n");
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char label[64];
                row_label(rows[i], share, label, sizeof(label));
                printf("  %-28s", label);
                for (size_t e = 0; e + 1 < ELEMENTSOF(edges); e++) {
                        size_t m = 0, ok = 0;
                        for (size_t j = 0; j < n; j++) {
                                const struct outcome *o = &sr[j].o[rows[i]];
                                double ratio = (double)budget_of(share, sr[j].cells) / (double)MAX(sr[j].params, 1u);
                                if (sr[j].cells < min_cells || !o->ran || ratio < edges[e] || ratio >= edges[e + 1])
                                        continue;
                                m++;
                                ok += o->success;
                        }
                        /* a group with no space: "-" */
                        if (m)
                                printf(" %6.1f%% of %4zu", 100.0 * (double)ok / (double)m, m);
                        else
                                printf(" %16s", "-");
                }
                printf("\n");
        }
        printf("\n");
}

/* How far from the best the failures of a strategy named. */
static void print_misses(const struct space_result *sr, size_t n, enum row r, double share) {
        static const double edges[] = {0.97, 0.95, 0.90, 0.80, 0.0};
        size_t count[ELEMENTSOF(edges) + 1] = {0}, ran = 0;
        for (size_t i = 0; i < n; i++) {
                const struct outcome *o = &sr[i].o[r];
                ran += o->ran;
                if (!o->ran || o->success)
                        continue;
                if (o->named < 0) {
                        count[ELEMENTSOF(edges)]++;
                        continue;
                }
                double ratio = o->named_speed / o->best_speed;
                for (size_t e = 1; e < ELEMENTSOF(edges); e++)
                        if (ratio >= edges[e]) {
                                count[e - 1]++;
                                break;
                        }
        }
        if (ran == 0)
                return;
        char label[64];
        row_label(r, share, label, sizeof(label));
        printf("  %-28s", label);
        for (size_t e = 1; e < ELEMENTSOF(edges); e++)
                printf("  %.2f-%.2f: %3zu", edges[e], edges[e - 1], count[e - 1]);
        printf("  none: %zu\n", count[ELEMENTSOF(edges)]);
}

static void print_failure(const struct space_result *sr, enum row r, double share) {
        const struct outcome *o = &sr->o[r];
        char label[64];
        row_label(r, share, label, sizeof(label));
        if (sr->name)
                printf("  space %-19s %5zu cells  %-20s ", sr->name, sr->cells, label);
        else
                printf("  seed %-20" PRIu64 " %5zu cells  %-20s ", sr->seed, sr->cells, label);
        if (o->named < 0)
                printf("named none after %zu launches", o->launches);
        else
                printf("named %.3fx the best after %zu launches", o->named_speed / o->best_speed, o->launches);
        printf(" (%s; %zu launched within 3%%; %zu failed)\n    %s\n", o->stop ? o->stop : "-", o->near_launched,
               o->failed, sr->describe ? sr->describe : "");
}

struct traj {
        const struct sim_space *s;
};

static void on_step(void *userdata, const struct sim_step *st) {
        const struct traj *t = userdata;
        _cleanup_free_ char *label = sim_cell_label(t->s, st->cell);
        const char *state = st->obs->state == SEARCH_FEASIBLE ? "pass" : st->obs->kind ? st->obs->kind : "fail";
        printf("  %4zu  cell %5zu  %-16s", st->n, st->cell, state);
        if (st->obs->has_value)
                printf(" %9.2f  %.3fx", st->obs->value, sim_cell_speed(t->s, st->cell) / sim_cell_speed(t->s, 0));
        else
                printf(" %9s  %6s", "-", "");
        if (st->best >= 0)
                printf("  best %5ld %9.2f", st->best, st->best_value);
        else
                printf("  best     - %9s", "-");
        printf("  %s\n", label ? label : "");
}

/* Space i of the file (--space-file): read into *ret, its name in r. */
static int load_line(const struct opts *o, size_t i, struct space_result *r, struct sim_space **ret) {
        int rc = sim_space_load(o->lines[i], ret, r->error, sizeof(r->error));
        if (rc < 0)
                return rc;
        if (!(r->name = strdup(sim_space_name(*ret)))) {
                sim_space_free(*ret);
                return -ENOMEM;
        }
        return 0;
}

/* --space: the space of that seed, or with --space-file of that name. */
static int one_space(const struct opts *o, const struct sim_params *params, struct space_result *sr,
                     struct sim_space **ret) {
        if (!o->lines) {
                int rc = sim_space_generate(o->one_seed, params, ret);
                if (rc < 0)
                        fprintf(stderr, "%s: cannot draw space %" PRIu64 ": %s\n", prog, o->one_seed, strerror(-rc));
                return rc;
        }
        for (size_t i = 0; i < o->n_lines; i++) {
                int rc = load_line(o, i, sr, ret);
                if (rc < 0) {
                        fprintf(stderr, "%s: %s, line %zu: %s\n", prog, o->space_file, i + 1,
                                *sr->error ? sr->error : strerror(-rc));
                        return rc;
                }
                if (strcmp(sr->name, o->one_name) == 0) {
                        sr->seed = sim_seed_mix(o->seed, i); /* its launches' noise, as in the list's run */
                        return 0;
                }
                free(sr->name);
                sr->name = NULL;
                sim_space_free(*ret);
        }
        fprintf(stderr, "%s: %s holds no space named '%s'\n", prog, o->space_file, o->one_name);
        return -ENOENT;
}

static int bench_one(const struct opts *o, const struct sim_params *params) {
        struct sim_space *s = NULL;
        struct space_result sr = {.seed = o->one_seed};
        int rc = one_space(o, params, &sr, &s);
        if (rc < 0)
                return 1;
        sr.cells = sim_space_cells(s);
        sr.describe = sim_space_describe(s);
        size_t best;
        double best_speed;
        sim_true_best(s, &best, &best_speed);
        _cleanup_free_ char *best_label = sim_cell_label(s, best);
        printf("space %s: %s\n", o->one_name, sr.describe ? sr.describe : "");
        printf("true best: cell %zu, %.2f (%.3fx the defaults): %s\n\n", best, best_speed,
               best_speed / sim_cell_speed(s, 0), best_label ? best_label : "");
        size_t near = 0;
        for (size_t k = 0; k < sim_space_cells(s); k++)
                near += sim_cell_fail(s, k) == SIM_FAIL_NONE && sim_cell_speed(s, k) >= 0.97 * best_speed;
        printf("cells that serve right within 3%% of the best: %zu\n", near);
        printf("search trajectory (speed relative to the defaults' true speed)\n");
        struct traj t = {s};
        struct sim_run_params tp = {.on_step = on_step, .userdata = &t};
        rc = run_space(s, o->budget_share, &sr, &tp);
        if (rc < 0) {
                fprintf(stderr, "%s: space %s: %s\n", prog, o->one_name, strerror(-rc));
                free(sr.describe);
                free(sr.name);
                sim_space_free(s);
                return 1;
        }
        printf("\n");
        for (enum row r = 0; r < N_ROWS; r++) {
                const struct outcome *oc = &sr.o[r];
                if (!oc->ran)
                        continue;
                char label[64];
                row_label(r, o->budget_share, label, sizeof(label));
                printf("  %-28s %-7s %5zu launches %6.1f h  named %5ld at %.3fx the best%s%s\n", label,
                       oc->success ? "success" : "FAIL", oc->launches, oc->hours, oc->named,
                       oc->named >= 0 ? oc->named_speed / oc->best_speed : 0.0, oc->stop ? "  stop: " : "",
                       oc->stop ? oc->stop : "");
        }
        free(sr.describe);
        free(sr.name);
        sim_space_free(s);
        return 0;
}

/* The spaces side by side: each thread takes the next index; results land by index, so
 * the output does not depend on the threads. */
struct pool {
        const struct opts *o;
        const struct sim_params *params;
        struct space_result *sr;
        atomic_size_t next, done;
        usec_t start;
        pthread_mutex_t progress;
};

/* The speed model's parameters of space s (search_speed_parameters). */
static size_t params_of(const struct sim_space *s) {
        struct search_space v;
        sim_space_view(s, &v);
        return search_speed_parameters(&v);
}

static void *worker(void *userdata) {
        struct pool *p = userdata;
        for (;;) {
                size_t i = atomic_fetch_add(&p->next, 1);
                if (i >= p->o->spaces)
                        return NULL;
                struct space_result *r = &p->sr[i];
                struct sim_space *s = NULL;
                r->seed = sim_seed_mix(p->o->seed, i);
                r->rc = p->o->lines ? load_line(p->o, i, r, &s) : sim_space_generate(r->seed, p->params, &s);
                if (r->rc < 0)
                        continue;
                r->cells = sim_space_cells(s);
                r->patterns = sim_space_patterns(s);
                r->needle = sim_space_needle(s, &r->combos);
                r->lines = sim_space_lines(s);
                r->oom_sizes = sim_space_oom_free(s) ? 2 : sim_space_oom_sizes(s);
                for (size_t k = 0; k < sim_space_cells(s); k++)
                        r->oom_cells += sim_cell_oom(s, k);
                r->params = params_of(s);
                r->describe = sim_space_describe(s);
                r->rc = run_space(s, p->o->budget_share, r, NULL);
                sim_space_free(s);
                size_t done = atomic_fetch_add(&p->done, 1) + 1;
                if (done % 20 == 0) {
                        pthread_mutex_lock(&p->progress);
                        fprintf(stderr, "%s: %zu of %zu spaces, %.1f s\n", prog, done, p->o->spaces,
                                (double)(now_usec() - p->start) / 1e6);
                        pthread_mutex_unlock(&p->progress);
                }
        }
}

/* --space-file: its non-empty lines, each one space. */
static int read_lines(struct opts *o) {
        FILE *f = fopen(o->space_file, "re");
        if (!f) {
                int e = errno;
                fprintf(stderr, "%s: cannot open %s: %s\n", prog, o->space_file, strerror(e));
                return -e;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        int rc = 0;
        while ((len = getline(&line, &cap, f)) >= 0) {
                while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                        line[--len] = '\0';
                if (len == 0)
                        continue;
                char **nl = realloc(o->lines, (o->n_lines + 1) * sizeof(char *));
                if (!nl || !(nl[o->n_lines] = strdup(line))) {
                        if (nl)
                                o->lines = nl;
                        rc = -ENOMEM;
                        break;
                }
                o->lines = nl;
                o->n_lines++;
        }
        if (rc == 0 && ferror(f))
                rc = -EIO;
        free(line);
        fclose(f);
        if (rc < 0)
                fprintf(stderr, "%s: cannot read %s: %s\n", prog, o->space_file, strerror(-rc));
        else if (o->n_lines == 0) {
                fprintf(stderr, "%s: %s holds no space\n", prog, o->space_file);
                rc = -ENODATA;
        }
        return rc;
}

static void free_lines(struct opts *o) {
        for (size_t i = 0; i < o->n_lines; i++)
                free(o->lines[i]);
        free(o->lines);
}

int main(int argc, char **argv) {
        struct opts o = {.spaces = 200, .seed = 1, .min_cells = 50, .max_cells = 2000, .budget_share = 0.1, .jobs = 2};
        int pr = parse_args(argc, argv, &o);
        if (pr < 0) {
                fprintf(stderr, "try '%s --help'\n", prog);
                return 2;
        }
        if (pr > 0) {
                usage(stdout);
                return 0;
        }
        struct sim_params params = {.min_cells = o.min_cells, .max_cells = o.max_cells};
        if (o.min_cells == 0 || o.min_cells > o.max_cells) {
                fprintf(stderr, "%s: invalid cell range %zu-%zu\ntry '%s --help'\n", prog, o.min_cells, o.max_cells, prog);
                return 2;
        }
        if ((budget_only || trace_budget) && !(o.budget_share > 0)) {
                fprintf(stderr, "%s: %s needs a --budget-share above 0\ntry '%s --help'\n", prog,
                        budget_only ? "--budget-only" : "--trace-budget", prog);
                return 2;
        }
        trace_budget |= budget_only; /* --space: the one search that runs */
        if (o.one && !o.space_file && !o.one_numeric) {
                fprintf(stderr, "%s: invalid number '%s' for --space (a name needs --space-file)\ntry '%s --help'\n",
                        prog, o.one_name, prog);
                return 2;
        }
        if (o.space_file) {
                if (read_lines(&o) < 0)
                        return 1;
                o.spaces = o.spaces_given ? MIN(o.spaces, o.n_lines) : o.n_lines;
        }
        if (o.one) {
                int one = bench_one(&o, &params);
                free_lines(&o);
                return one;
        }

        usec_t start = now_usec();
        struct space_result *sr = calloc(o.spaces, sizeof(*sr));
        if (!sr) {
                fprintf(stderr, "%s: out of memory\n", prog);
                return 1;
        }
        int status = 0;
        struct pool pl = {.o = &o, .params = &params, .sr = sr, .start = start};
        atomic_init(&pl.next, 0);
        atomic_init(&pl.done, 0);
        pthread_mutex_init(&pl.progress, NULL);
        size_t n_threads = MIN(o.jobs, o.spaces), started = 0;
        pthread_t *threads = calloc(n_threads, sizeof(pthread_t));
        if (!threads) {
                fprintf(stderr, "%s: out of memory\n", prog);
                status = 1;
                goto out;
        }
        for (; started < n_threads; started++) {
                int rc = pthread_create(&threads[started], NULL, worker, &pl);
                if (rc != 0) {
                        if (started > 0)
                                break;   /* fewer threads, the same results */
                        fprintf(stderr, "%s: cannot start a thread: %s\n", prog, strerror(rc));
                        free(threads);
                        status = 1;
                        goto out;
                }
        }
        for (size_t t = 0; t < started; t++)
                pthread_join(threads[t], NULL);
        free(threads);
        pthread_mutex_destroy(&pl.progress);
        for (size_t i = 0; i < o.spaces; i++)
                if (sr[i].rc < 0 && o.space_file) {
                        fprintf(stderr, "%s: %s, line %zu: %s\n", prog, o.space_file, i + 1,
                                *sr[i].error ? sr[i].error : strerror(-sr[i].rc));
                        status = 1;
                        goto out;
                } else if (sr[i].rc < 0) {
                        fprintf(stderr, "%s: space %" PRIu64 ": %s\n", prog, sr[i].seed, strerror(-sr[i].rc));
                        status = 1;
                        goto out;
                }

        if (o.space_file)
                printf("%zu spaces from %s, the launches' noise from seed %" PRIu64
                       "; success: named a serving cell within 3%% of the true best\n\n",
                       o.spaces, o.space_file, o.seed);
        else
                printf("%zu spaces from seed %" PRIu64 ", %zu-%zu cells; success: named a serving cell within 3%% of "
                       "the true best\n\n",
                       o.spaces, o.seed, o.min_cells, o.max_cells);
        print_table(sr, o.spaces, 0, o.budget_share, "all spaces");
        print_table(sr, o.spaces, 200, o.budget_share, "spaces of >= 200 cells");
        if (!budget_only)
                print_slots(sr, o.spaces);
        print_patterns(sr, o.spaces, o.budget_share);
        print_needles(sr, o.spaces, 200, o.budget_share);
        print_lines(sr, o.spaces, 200, o.budget_share);
        print_oom(sr, o.spaces, 200, o.budget_share);
        print_budget_fit(sr, o.spaces, 200, o.budget_share);
        printf("failures by the share of the best named\n");
        for (enum row r = 0; r < N_ROWS; r++)
                print_misses(sr, o.spaces, r, o.budget_share);
        printf("\n");
        if (o.verbose) {
                printf("search failures\n");
                for (size_t i = 0; i < o.spaces; i++)
                        for (enum row r = ROW_SEARCH; r <= ROW_SEARCH_BUDGET; r++)
                                if (sr[i].o[r].ran && !sr[i].o[r].success)
                                        print_failure(&sr[i], r, o.budget_share);
        }
        fprintf(stderr, "%s: %zu spaces in %.1f s\n", prog, o.spaces, (double)(now_usec() - start) / 1e6);
out:
        for (size_t i = 0; i < o.spaces; i++) {
                free(sr[i].describe);
                free(sr[i].name);
        }
        free(sr);
        free_lines(&o);
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "%s: cannot write the output\n", prog);
                return 1;
        }
        return status;
}
