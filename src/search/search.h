/* search.h -- strategy: search: which cell to launch next, and which never to launch.
 *
 * A pure model, no I/O: given the space (axes, values, cells) and what each cell's launch
 * settled as so far, it names the next cell to launch, or says the search is over, and for
 * every cell not launched predicts whether it would run and how fast (docs/search.md).
 *
 * The model has two parts, both learned from the settled cells alone:
 *  - feasibility: a noisy-OR over blockers. A value, a pair of values or a triple of values
 *    of different axes may be a blocker (a kernel built for another GPU, two flags that
 *    cannot go together, the corner where memory-hungry values meet): any cell holding a
 *    blocker does not serve right. A blocker seen in a cell that served is none; a cell
 *    that failed blames its uncleared features, each by how little the others explain the
 *    failure (mean-field, explaining away), class by class of failure (an arch crash is
 *    one value's, a config crash often a pair's...). Evidence that names another axis's
 *    flag ("X requires --kv-cache-dtype fp8") raises the prior of the pairs with that axis.
 *    Running out of memory is learned apart, as an additive cost per value (a logistic
 *    fit), so that the corner where hungry values meet is predicted as a corner.
 *  - speed: a Gaussian process over log(figure) whose kernel counts the axes on which two
 *    cells agree (a constant, the main effects and the pair interactions: effects that are
 *    mostly multiplicative, with some pair interactions, under noise), its predictions
 *    averaged over a fixed grid of hyper-parameters weighed by marginal likelihood.
 * The next cell is the one of highest expected improvement over the best figure, times
 * its chance to serve right. Without a launch budget, the search stops when the cells left
 * have no real chance together (SEARCH_STOP_CHANCE) of beating the best by more than the
 * noise, once every value has served in some cell (or is condemned) and every neighbour of
 * the best (one axis away) that may serve has run.
 *
 * Determinism: the same space and observations give the same decisions, bit for bit
 * (fixed iteration orders, no randomness, ties to the lower cell index), so a search
 * resumed from the journal makes the decisions the interrupted one would have made.
 */
#ifndef GAUNTLET_SEARCH_H
#define GAUNTLET_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

/* What is known of one cell. */
enum search_state {
        SEARCH_UNKNOWN,      /* not launched (or launched and abandoned): a candidate */
        SEARCH_FEASIBLE,     /* launched; served right (pass): value may hold its figure */
        SEARCH_INFEASIBLE,   /* launched; crash, garbage, wrong, timeout, overload, error */
        SEARCH_OUT,          /* never a candidate: excluded, or inferred (infer.h) */
};

struct search_obs {
        enum search_state state;
        bool has_value;      /* FEASIBLE with a figure of the objective */
        double value;        /* the figure, in the objective's units (> 0) */
        const char *kind;    /* INFEASIBLE: "crash/arch", "garbage/repeat"...; for the
                                evidence, and cells failing alike are grouped by it */
        const char *evidence;/* INFEASIBLE: the verdict's evidence, or NULL; read for the
                                flags of other axes it names */
        unsigned measured;   /* FEASIBLE with a figure: how many launches value pools (it is
                                their geometric mean); 0 reads as 1 */
        unsigned launches;   /* launched: how many times (a cell measured again before the
                                search names its best); 0 reads as 1 */
        unsigned abandoned;  /* launches of the cell given up before they settled (a run
                                interrupted, a port taken): no figure, but each counts
                                against the budget, whatever the state */
        double seconds;      /* launched: what its settled launches took, in all (seconds);
                                0: not measured. What a launch costs is learned from these
                                (docs/search.md, "What a launch costs") */
        bool pending;        /* a launch of it is in flight (another worker's) and has not
                                settled: it is not chosen again, and it counts against the
                                budget. UNKNOWN and pending: the model fits it as its predicted
                                outcome (a constant liar, search_model_fit) */
};

struct search_space {
        size_t n_axes;                  /* >= 1 */
        const size_t *n_values;         /* per axis, >= 1 */
        const char *const *axis_names;  /* per axis, for evidence */
        const char *const *const *value_names; /* [axis][value], for evidence */
        /* per axis: the flag its values set ("--kv-cache-dtype"), NULL when none; an
         * evidence line naming it blames the pairs with that axis */
        const char *const *axis_flags;
        /* per axis: the phrases by which the engine's messages name it ("K cache" for
         * --cache-type-k), NULL-terminated, or NULL; may itself be NULL. The flag's own
         * words ("cache type k") count without them. */
        const char *const *const *axis_words;
        /* the phrases by which the engine's messages name settings that are no axis's
         * (profile_other_words), NULL-terminated, or NULL: a value's name right beside one
         * is that setting's ("The quantization method fp8" where fp8 is also a KV cache's) */
        const char *const *other_words;
        /* per axis: the engine's own names for some of its values, in pairs (the name, the
         * value's), NULL-terminated, or NULL; may itself be NULL. Such a name is a mention of
         * the value as its own name is, and counts without the axis's words. */
        const char *const *const *axis_aliases;
        /* per axis: how the matrix writes some of its values after the flag or in the env
         * (pairs: the spelling, the value's name), where that differs from the value's name
         * ({name: fi, env: {VLLM_ATTENTION_BACKEND: FLASHINFER}}), NULL-terminated, or NULL;
         * may itself be NULL. A spelling is a mention of the value as its name is, by the same
         * rules (distinctive, or beside the axis's words). */
        const char *const *const *axis_spellings;
        /* per axis: every spelling of its flag the engine takes (its short flag, its env
         * key), NULL-terminated, or NULL; may itself be NULL. An error with one argument
         * ("error while handling argument \"-sm\"") names the axis by any of them. */
        const char *const *const *axis_forms;
        size_t n_cells;
        const size_t *choice;           /* n_cells * n_axes value indices, row-major */
        const char *const *ids;         /* per cell, for evidence ("8e5b8715..."), may be NULL */
        bool higher_better;             /* the objective's direction */
        size_t first;                   /* the cell to start from: the baseline, else the
                                           engine's defaults (the cell of least distance) */
};

/* The signature of a failure (caller frees, NULL when out of memory): its kind, then its
 * evidence with numbers, hex ids, paths and timestamps taken out ("#", "<path>"), words
 * that are a value of one of s's axes kept as they are ("q8_0", "sm_120"), spaces
 * collapsed. Cells failing with one signature fail for one reason (docs/search.md, "How
 * evidence is read"). */
char *search_signature(const struct search_space *s, const char *kind, const char *evidence);

/* How a line names the value of a cell at fault (search_names_value). */
enum search_naming {
        SEARCH_NAMES_NONE,      /* it names none */
        SEARCH_NAMES_VALUE,     /* it names the cell's value */
        SEARCH_NAMES_OTHERS,    /* it lists other values of the axis, two or more, as what works
                                   ("Only {'trtllm_mha', 'triton', 'fa4'} backends are supported"),
                                   or quotes one with the axis's flag ("Please use
                                   `--attention-backend flashinfer`") */
};

/* The value of cell k's that evidence names: a mention of one of k's values (distinctive:
 * letters with digits or '_', or any other where the words of its axis stand beside it),
 * its axis told by the words nearest to it where two axes have a value of that name; the
 * only one such, in a line that names no other axis. A mention is a word of the line, a part
 * of a dotted name (AttentionBackendEnum.FLASHINFER) or, for a name with '_' or '-', its
 * words apart ("TRTLLM MHA" for trtllm_mha), case ignored. Failing that, a line that lists
 * two or more other values of one axis and not the cell's, or quotes another with the axis's
 * flag ("Please use `--attention-backend flashinfer`"), names the cell's value of that axis
 * by leaving it out. Also: an error about one argument (its flag's axis), a constant's name
 * spelling the flag and a value, a plain word beside a backend's kind ("Backend
 * FLASHINFER"); docs/search.md, "How evidence is read". Only the first
 * SEARCH_EVIDENCE_READ bytes are read (a failure's evidence is cut shorter). Sets *ret_axis
 * and says how, or SEARCH_NAMES_NONE. */
#define SEARCH_EVIDENCE_READ 1024
enum search_naming search_names_value(const struct search_space *s, size_t k, const char *evidence,
                                      size_t *ret_axis);

/* The paths and repository ids a value's argument holds, which a line may quote for the
 * value where it quotes no name of it: the draft model of a JSON --speculative-config
 * ("Total number of key-value heads (2) of the draft model acme/Qwen3-30B-A3B-EAGLE3 must be
 * divisible by tensor parallel size (4)"). Each is a word of the argument (letters, digits,
 * and "._-/:+@") of at least SEARCH_PATH_MIN characters with a '/' between two of them; no
 * more than max, as [ret_start[i], ret_start[i] + ret_len[i]) of arg; returns how many. */
#define SEARCH_PATH_MIN 6
size_t search_argument_paths(const char *arg, const char **ret_start, size_t *ret_len, size_t max);

/* Limits and knobs. A zero budget is no budget. */
struct search_options {
        size_t max_launches;            /* stop once this many cells were launched */
        bool no_prune;                  /* launch every candidate, the model only orders */
        bool timed;                     /* a time budget: time_left seconds of it are left */
        double time_left;               /* a launch predicted to take longer is not started */
};

/* When the chances of the cells left to beat the best (by more than the noise) add up to
 * less than this, and every value has served in some cell or is condemned, the search
 * stops. */
#define SEARCH_STOP_CHANCE 0.03
/* Launches measuring a cell again, in all, whatever the budget (none included): a search
 * launches at most its grid plus this many. Where many cells are as fast as the best (a
 * flat space), measuring them again cannot tell them apart; past this bound they are a tie
 * within the noise, as the report says, instead of 3 launches of each (a flat 4x4 space
 * launched 46 times). */
#define SEARCH_MAX_AGAIN(n_cells) ((size_t)2 + (size_t)(n_cells) / 8)
/* The most times one cell is launched: measured again before the best is named, at most
 * this many measurements of it in all (docs/search.md "Measured again"). */
#define SEARCH_MEASURE_MAX 5u
/* A cell in flight of at least this chance of serving right is fitted as served. */
#define SEARCH_LIAR_FEASIBLE 0.5
/* Below this chance of serving right, a cell is predicted to fail. */
#define SEARCH_FAIL_CHANCE 0.10

/* The model's view of one cell. The model caches some figures as they are asked for:
 * one model is not to be used from two threads at once (two models are fine). */
struct search_prediction {
        double p_feasible;              /* the chance it serves right */
        double mean;                    /* predicted figure (the objective's units); NAN
                                           while no launched cell has a figure */
        double high;                    /* a high (good-side) bound of the figure: the 97.7%
                                           quantile, or the 2.3% one when lower is better */
        double chance;                  /* of serving right and beating the best by more
                                           than the noise */
        double ei;                      /* expected improvement (log units) times p_feasible */
        double seconds;                 /* what its launch is expected to take: the mean
                                           launch that served and the mean that failed,
                                           weighed by p_feasible; 0 while none was measured */
};

struct search_model;

/* An additive speed model's parameters: one figure, and each axis's values but one. A search
 * with fewer launches cannot tell every value's effect from the figures alone. */
size_t search_speed_parameters(const struct search_space *s);

/* Fits the model to the observations (one per cell of s). The model borrows s and obs
 * until search_model_free. -ENOMEM, -EINVAL (no axes, choices out of range).
 * Cells in flight (pending, UNKNOWN) are fitted as their predicted outcome, the "constant
 * liar" of batch Bayesian optimisation: the model is fitted without them, then each is
 * observed as served at its predicted mean when its chance to serve right is at least
 * SEARCH_LIAR_FEASIBLE (as served without a figure while no cell has one), else as failed,
 * and the model is fitted again. So the cell is not chosen twice, and its neighbours,
 * predicted alike, are worth less while it runs (docs/search.md, "Several at once"). */
int search_model_fit(const struct search_space *s, const struct search_obs *obs, struct search_model **ret);
void search_model_free(struct search_model *m);

/* The prediction for cell k (any state). */
void search_model_predict(const struct search_model *m, size_t k, struct search_prediction *ret);

/* How many cells were launched (FEASIBLE + INFEASIBLE), how many launches that took (a
 * cell measured again counts each time: the budget counts these), and the index of the
 * best one by figure (-1: none has a figure). */
size_t search_model_launched(const struct search_model *m);
size_t search_model_launches(const struct search_model *m);
/* How many cells are in flight (search_obs.pending). */
size_t search_model_pending(const struct search_model *m);
long search_model_best(const struct search_model *m);
/* The mean seconds of a launch that served right, and of one that failed (0: none was
 * measured); a class not measured yet reads as the other. */
void search_model_costs(const struct search_model *m, double *ret_pass, double *ret_fail);
/* The launched cell that serves right of the best mean by the model (its figure pooled with
 * what its neighbours say), -1 when none has a figure. */
long search_model_named(const struct search_model *m);

/* A search whose launched cells all failed, in a way no value of the matrix explains,
 * stops once this many were launched (docs/search.md, "When nothing can pass"). */
#define SEARCH_HOPELESS_LAUNCHES 2
#define SEARCH_WHY_MAX 640

/* What to do next. */
struct search_decision {
        long next;                      /* the cell to launch, or -1: stop */
        bool again;                     /* next was launched before and served: it is
                                           measured again, its figure too close to the
                                           best's to name one of them on one measurement */
        const char *stop;               /* when next < 0: why ("budget", "no chance left",
                                           "no candidate left", "nothing can pass"); static */
        char why[SEARCH_WHY_MAX];       /* "nothing can pass": what failed and what to
                                           change, one line ("the bench does not fit the
                                           server's context: ...: shorten bench...."); else "" */
        long would_next;                /* when stopped for the budget: the cell it would
                                           launch next, else -1 */
        bool in_flight;                 /* next < 0 while cells are in flight (pending): the
                                           stop (stop says why) is a stop for now; decide
                                           again once one of them settled, and prune nothing
                                           before none is in flight */
};
int search_model_decide(const struct search_model *m, const struct search_options *o, struct search_decision *ret);

/* Why cell k is not worth a launch, in one line for its evidence (caller frees):
 *  "predicted crash: attn=fa3 crashed (arch) in 3 of 3 cells: 8e5b8715, 0c1d2e3f, ..."
 *  "predicted at most 0.71x the best (model of 23 cells)"
 *  "budget spent; predicted 0.93x the best (model of 72 cells)"
 * NULL when out of memory. budget_spent: the search stopped for its budget. */
char *search_model_why(const struct search_model *m, size_t k, bool budget_spent);

#endif
