/* search_sim.h -- simulated tuning spaces: launches in-process, to benchmark and test search.
 *
 * A space is axes x values (the cells, row-major, first axis slowest, cell 0 the engine's
 * defaults: value 0 of every axis is "auto"). Each cell has a true speed,
 *   log(speed) = base + sum of the main effects of its values + the pair interactions it holds,
 * and either serves right or fails by the first rule it breaks, in the order a launch meets
 * them: a hang at start-up, a kernel not built for the GPU (arch), two flags that cannot go
 * together (config, or "a=x requires b=y"), out of memory where memory-hungry values meet
 * (the sum of their costs past a limit), garbage whatever else is set, a break only under
 * batching (launches and answers right alone, fails at the bench). A launch measures
 * true speed x exp(N(0, noise)) and takes simulated seconds (a load, the checks, the bench;
 * a hang costs the start-up timeout).
 *
 * Spaces are either drawn (sim_space_generate: deterministic from a 64-bit seed, the
 * patterns it draws are listed there) or built by hand (sim_space_new, the setters, then
 * sim_space_finish). Nothing here prints, and nothing uses rand(): every draw is the one
 * generator's (base/rng.h) over a caller's uint64_t state.
 */
#ifndef GAUNTLET_SEARCH_SIM_H
#define GAUNTLET_SEARCH_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search/search.h"

#define SIM_AXES_MAX 16
#define SIM_VALUES_MAX 64
#define SIM_CELLS_MAX ((size_t)1 << 20)
#define SIM_TERMS_MAX 3

/* A seed mixed from two numbers (a space's seed from a run's seed and an index). */
uint64_t sim_seed_mix(uint64_t a, uint64_t b);

/* How a drawn space's engine words a failure that is one value's doing (a hang, a kernel
 * for another GPU, a break under batching), a third of the spaces each: it names nothing;
 * the value by its bare name (ambiguous where two axes have a value of that name: "triton",
 * "cutlass"); or the value beside its flag. Pairs name both flags and values everywhere. A
 * hand-built space (sim_space_new) names nothing. */
enum sim_speech {
        SIM_SPEAKS_NOTHING,
        SIM_SPEAKS_NAME,
        SIM_SPEAKS_VALUE,
        _SIM_SPEECH_MAX,
};

/* How a cell fails; the rules' order is the order a launch meets them. */
enum sim_fail {
        SIM_FAIL_NONE = -1,
        SIM_FAIL_HANG,      /* every term holds: timeout/startup */
        SIM_FAIL_ARCH,      /* every term holds: crash/arch */
        SIM_FAIL_CONFIG,    /* every term holds (2): crash/config, the evidence names both flags */
        SIM_FAIL_REQUIRES,  /* term 0 holds and term 1's axis has another value: crash/config */
        SIM_FAIL_OOM,       /* the memory costs' sum is past the limit: crash/oom (no terms) */
        SIM_FAIL_GARBAGE,   /* every term holds: garbage/repeat */
        SIM_FAIL_BATCH,     /* every term holds: wrong/ok, under load only */
        _SIM_FAIL_MAX,
};

struct sim_term {
        size_t axis, value;
};

/* Names of an axis for sim_space_new; any NULL field gets the plain default ("a0",
 * "--flag-a0", values "auto", "v1", "v2", ...). Copied. */
struct sim_axis {
        const char *name;
        const char *flag;
        const char *const *values;  /* n_values names, or NULL */
};

struct sim_space;

/* What sim_space_generate draws; a zero field takes the default shown. */
struct sim_params {
        size_t min_cells, max_cells;    /* 50, 2000 */
        size_t min_axes, max_axes;      /* 3, 7 (at most 10: the names' pool) */
        size_t min_values, max_values;  /* 2, 8 */
        double min_feasible, max_feasible; /* share of cells that serve right: 0.2, 0.8 */
};

/* Draws a space from seed: a number of axes, their sizes until the cell count is in range,
 * then effects, pair interactions and failure patterns until the feasible share is in
 * range (at least one cell always serves right). Same seed and params, same space. Caller frees.
 *  - speed: base 20-200; per axis a scale 0.15-0.35 (a quarter of the axes: under 0.03),
 *    each non-default value N(0, scale); 1-4 pair interactions N(0, 0.1-0.25); in 40% of
 *    spaces a synergy of two non-default values (+0.3-0.5, each slightly worse alone);
 *    noise 1%-4%; a load of 300-1200 s, a bench of 120-360 s, a start-up timeout of 1800 s.
 *  - patterns, each by its own chance: OOM at the corner of 2-3 memory-hungry axes
 *    (50%; cost value/(n-1) each, hungrier is faster), 1-2 arch values (50%), 1-2
 *    incompatible pairs (40%), one "x requires y" (30%), a garbage value (35%), a value
 *    broken under batching (30%), a value that hangs (25%), garbage at "auto" of 1-3 axes,
 *    so at the defaults cell (50%). Failing values are never the default, but for the last.
 * -EINVAL (a range empty or out of bounds), -ERANGE (no draw in range after many tries),
 * -ENOMEM. */
int sim_space_generate(uint64_t seed, const struct sim_params *p, struct sim_space **ret);

/* A space built by hand: axes and names; every effect 0, base speed 100, noise 2%, no
 * failure. Then the setters, then sim_space_finish before any other use. -EINVAL (no axis,
 * more than SIM_AXES_MAX, a count 0 or above SIM_VALUES_MAX), -E2BIG (more than
 * SIM_CELLS_MAX cells), -ENOMEM. */
int sim_space_new(size_t n_axes, const size_t *n_values, const struct sim_axis *axes, struct sim_space **ret);
/* Base speed (the figure of a cell with no effect) and measurement noise (sd of log). */
void sim_space_set_speed(struct sim_space *s, double base, double noise);
/* The main effect of a value, in log units. -EINVAL out of range. */
int sim_space_set_effect(struct sim_space *s, size_t axis, size_t value, double effect);
/* A pair interaction (log units) of two values of different axes. -EINVAL, -ENOMEM. */
int sim_space_add_pair(struct sim_space *s, struct sim_term x, struct sim_term y, double effect);
/* A failure rule of 1 to SIM_TERMS_MAX terms of different axes (SIM_FAIL_CONFIG and
 * SIM_FAIL_REQUIRES: exactly 2; SIM_FAIL_OOM: use the memory setters). -EINVAL, -ENOMEM. */
int sim_space_add_rule(struct sim_space *s, enum sim_fail f, const struct sim_term *terms, size_t n_terms);
/* The memory cost of a value, and the limit past which a cell's sum fails with OOM
 * (0: no limit). -EINVAL. */
int sim_space_set_memory(struct sim_space *s, size_t axis, size_t value, double cost);
void sim_space_set_memory_limit(struct sim_space *s, double limit);
/* Whether the space's out-of-memory line says the size of the allocation that failed, as
 * llama.cpp and PyTorch do ("Tried to allocate 2.50 GiB"): the axes of memory are allocated
 * in their order, each value's cost at once, and the first that takes the sum past the limit
 * fails, its size in the line (each axis its own scale, so that two allocations seldom print
 * one size). Without: one line for every cell, "Tried to allocate 2.00 GiB", as an allocator's
 * fixed chunk prints. A drawn space says it in half the spaces, a hand-built one not. */
void sim_space_set_oom_sizes(struct sim_space *s, bool on);
/* With sizes, whether the line also says what was free when the allocation failed: the memory
 * limit less the allocations of the axes before it, in PyTorch's words ("of which 0.40 GiB is
 * free"); without, llama.cpp's ("attempted to allocate 1280.00 MB"). Before sim_space_finish. */
void sim_space_set_oom_free(struct sim_space *s, bool on);
/* Whether a launch of cell k runs out of memory (its line: sim_space_set_oom_sizes). */
bool sim_cell_oom(const struct sim_space *s, size_t k);
/* Whether some cell of the space runs out of memory, and its lines say their sizes. */
bool sim_space_oom_sizes(const struct sim_space *s);
/* Whether they say what was free too (sim_space_set_oom_free). */
bool sim_space_oom_free(const struct sim_space *s);
/* Makes the cells and their truth. -ENOENT when no cell serves right (the space stays
 * unfinished), -ENOMEM. */
int sim_space_finish(struct sim_space *s);

void sim_space_free(struct sim_space *s);

/* A space read from one line of JSON, a space written apart from this simulator
 * (tools/search_sim_load.c says the format; docs/search.md, "Spaces written apart"): its
 * axes and every cell's truth (its figure, or the verdict and line it fails by, and a
 * chance that a launch meets a passing host fault instead). A launch costs by the verdict's
 * class as a drawn space's do. Finished on return. -EINVAL with a one-line reason in err
 * (malformed, a count that does not match), -ENOENT when no cell serves right, -E2BIG,
 * -ENOMEM. */
int sim_space_load(const char *json, struct sim_space **ret, char *err, size_t err_size);
/* A loaded space's name; NULL for a drawn or hand-built one. */
const char *sim_space_name(const struct sim_space *s);

/* The search's view of a finished space: borrows s's arrays until sim_space_free. first is
 * the defaults cell (0), higher_better. */
void sim_space_view(const struct sim_space *s, struct search_space *ret);

/* The truth of a finished space. */
size_t sim_space_cells(const struct sim_space *s);
double sim_space_feasible_share(const struct sim_space *s);
/* The true speed of cell k (also of a failing cell: what it would measure if it served). */
double sim_cell_speed(const struct sim_space *s, size_t k);
/* How cell k fails (SIM_FAIL_NONE: it serves right). */
enum sim_fail sim_cell_fail(const struct sim_space *s, size_t k);
/* The patterns a space shows, one bit each (1u << pattern): a failure kind of enum
 * sim_fail when some cell fails by it, SIM_PATTERN_DEFAULTS when the defaults cell fails,
 * SIM_PATTERN_SYNERGY when a pair interaction is +0.3 or more. */
enum {
        SIM_PATTERN_DEFAULTS = _SIM_FAIL_MAX,
        SIM_PATTERN_SYNERGY,
        _SIM_PATTERN_MAX,
};
unsigned sim_space_patterns(const struct sim_space *s);
/* "arch", "oom", ..., "defaults", "synergy"; NULL out of range. */
const char *sim_pattern_to_string(unsigned pattern);
/* The best cell that serves right, and its true speed. This function can't fail on a
 * finished space. */
void sim_true_best(const struct sim_space *s, size_t *ret_cell, double *ret_speed);
/* Whether every cell that serves right within 3% of the best holds one pair of non-default
 * values worth +0.3 or more together (as the drawn synergy of two values mediocre alone
 * is): then nothing but a launch of that pair points at it. *ret_combos (when not NULL):
 * the pairs of non-default values of its two axes, the places such a pair is drawn among;
 * 0 when not, or when the space is not finished. */
bool sim_space_needle(const struct sim_space *s, size_t *ret_combos);
/* What the space's failure lines say of the values at fault, the most any line says:
 * SIM_LINES_FLAG the line of a failure of one value's doing (a hang, a kernel for another
 * GPU, a break under batching) names the value beside its flag; SIM_LINES_NAME by its bare
 * name; else SIM_LINES_PAIR a pair's line (config, requires) quotes both flags and values;
 * else SIM_LINES_NONE (garbage, running out of memory, or a failure of one value's doing in
 * a space that names nothing). Only rules some cell fails by count; an unfinished space
 * says SIM_LINES_NONE. */
enum sim_lines {
        SIM_LINES_NONE,
        SIM_LINES_PAIR,
        SIM_LINES_NAME,
        SIM_LINES_FLAG,
        _SIM_LINES_MAX,
};
enum sim_lines sim_space_lines(const struct sim_space *s);
/* "name nothing", "name a pair", "name a value", "value and flag"; NULL out of range. */
const char *sim_lines_to_string(enum sim_lines l);
/* The patterns of the space in one line ("arch moe=deep_gemm; oom bs+chunk > 1.32; ..."),
 * for a report. Caller frees; NULL when out of memory. */
char *sim_space_describe(const struct sim_space *s);
/* "attn=fa3 moe=auto ..." for cell k. Caller frees; NULL when out of memory. */
char *sim_cell_label(const struct sim_space *s, size_t k);

/* Launches cell k: fills *ret_obs (state FEASIBLE with a measured value, or INFEASIBLE
 * with kind and evidence borrowed from s) and *ret_seconds (the simulated time it took),
 * drawing the noise from *rng. When *ret_obs already holds a figure (the cell served
 * before), the launch measures it again: the new value is the geometric mean of all its
 * figures, with measured and launches counted. -EINVAL when k is out of range. */
int sim_launch(const struct sim_space *s, size_t k, uint64_t *rng, struct search_obs *ret_obs, double *ret_seconds);

enum sim_strategy {
        SIM_GRID,           /* every cell, in order */
        SIM_ONE_AT_A_TIME,  /* the defaults cell, then each axis varied alone from it */
        SIM_RANDOM,         /* budget cells uniformly without replacement (0: every cell) */
        SIM_SEARCH,         /* search.h's model, max_launches = budget (0: none) */
        _SIM_STRATEGY_MAX,
};

/* One launch of a run, for a trajectory. */
struct sim_step {
        size_t n;                   /* launches so far, this one included */
        size_t cell;
        const struct search_obs *obs;
        double seconds;             /* this launch's */
        long best;                  /* the best measured serving cell so far, or -1 */
        double best_value;          /* its measured figure (0 when best is -1) */
};

struct sim_run_params {
        size_t budget;              /* see enum sim_strategy */
        size_t slots;               /* GRID and SEARCH: launches side by side (0, 1: one at
                                       a time). Whenever a slot frees, GRID takes the next
                                       cell in order and SEARCH decides with the cells in
                                       flight pending (search_obs.pending: their predicted
                                       outcome); a launch's outcome is seen when it ends */
        void (*on_step)(void *userdata, const struct sim_step *step);  /* or NULL */
        void *userdata;
};

struct sim_result {
        size_t launches;            /* cells launched */
        long named;                 /* the cell named best: the launched serving cell of
                                       the best measured figure (SEARCH: search_model_named, the model's best);
                                       -1 when none served */
        double named_speed;         /* its true speed; 0 when named is -1 */
        size_t best_cell;           /* the true best serving cell */
        double best_speed;          /* its true speed */
        bool success;               /* named serves right and named_speed >= 0.97 x best */
        size_t near_launched;       /* launched cells that serve right within 3% of the
                                       best: a failure with some is the noise's doing */
        double seconds;             /* simulated time of all the launches */
        size_t launches_to_named;   /* the launches up to the named cell's first, it included
                                       (0 when none is named) */
        double seconds_to_named;    /* their simulated time */
        size_t failed;              /* launches that failed */
        size_t failed_oom;          /* of them, out of memory */
        size_t failed_one;          /* of them, by one value's doing: a hang, a kernel for
                                       another GPU, a break under batching (a line that
                                       sim_speech may word with the value) */
        double failed_seconds;      /* their simulated time */
        const char *stop;           /* SEARCH: why it stopped (static), else NULL */
        double wall;                /* simulated wall time: the last launch's end, the
                                       slots side by side (seconds when one at a time) */
        double wall_to_named;       /* the end of the named cell's first launch */
};

/* Runs a strategy on a finished space; the noise of the launches comes from seed. Same
 * inputs, same result. -EINVAL, -ENOMEM, -EPROTO (the search chose a cell out of range or
 * one already launched), or the search model's error. */
int sim_run(const struct sim_space *s, enum sim_strategy st, const struct sim_run_params *p, uint64_t seed,
            struct sim_result *ret);

#endif
