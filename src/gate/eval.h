/* eval.h -- the accuracy eval: many questions with known answers, the figures they give,
 * and the comparison with a reference cell that the reports gate on (docs/eval.md).
 *
 * The questions are check specs (checks.h) and are judged exactly as checks are: the
 * garbage detectors first, then the expected answer (golden.h). They come from a JSONL
 * file (suite.h reads it) or from the built-in generators below, which make them from a
 * seed: multi-digit products and sums, counting letters, sorting a short list, copying a
 * string back. Nothing is downloaded.
 *
 * The figures of a cell are its share of right answers with a Wilson score interval at
 * 95%. Against the reference a cell is *significantly below* when a two-proportion z-test
 * (pooled standard error, two-sided) gives p < 0.05 and its accuracy is the lower one. The
 * differential compares the answers themselves: the share that are byte-identical to the
 * reference's, the first that is not, and the mean absolute difference of the chosen
 * tokens' logprobs over the answers that are identical.
 *
 * Everything here is a pure function of its inputs except eval_run(), which asks a server.
 */
#ifndef GAUNTLET_EVAL_H
#define GAUNTLET_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "gate/checks.h"
#include "io/loop.h"
#include "base/verdict.h"

enum eval_builtin {
        EVAL_PRODUCTS,   /* "What is A * B?", A and B in 10..99 */
        EVAL_SUMS,       /* "What is A + B?", A and B in 100..9999 */
        EVAL_LETTERS,    /* how many times a letter appears in a word */
        EVAL_SORT,       /* five numbers in 1..99, smallest first */
        EVAL_COPY,       /* ten random letters and digits, repeated back */
        _EVAL_BUILTIN_MAX,
};

/* "products", "sums", "letters", "sort", "copy". */
const char *eval_builtin_name(enum eval_builtin b);
/* -1 for an unknown name. */
int eval_builtin_from_name(const char *s);

#define EVAL_DEFAULT_SAMPLES 200     /* built-in questions when `samples` is not given */
#define EVAL_DEFAULT_SEED 1
#define EVAL_DEFAULT_CONCURRENCY 8
#define EVAL_MAX_QUESTIONS 100000    /* lines of a file, and `samples` */
#define EVAL_MAX_CONCURRENCY 1024

/* The matrix's `eval:` (docs/matrix.md), or `gauntlet smoke --eval`. Owns its strings. */
struct eval_options {
        char *file;              /* the JSONL file as written; NULL: the built-in sets */
        char *path;              /* file as opened (relative to the matrix's folder) */
        unsigned builtins;       /* 1 << enum eval_builtin when file is NULL; 0: all of them */
        size_t samples;          /* questions asked: a seeded subset of a file (0: every
                                    line); built-in: how many are made (0: the default) */
        uint64_t seed;
        enum thinking thinking;  /* for every question */
        int max_tokens;          /* for every question; 0: the checks' default */
        int concurrency;         /* requests in flight; 0: the default */
        bool logprobs;           /* ask for logprobs (the differential's drift figure) */
        /* Gates on the differential (informational when negative): a cell whose share of
         * answers identical to the reference's is below min_agreement, or whose mean
         * absolute logprob difference is above max_logprob_diff, is wrong/divergence. */
        double min_agreement;
        double max_logprob_diff;
};

/* The defaults above: built-in sets, seed 1, logprobs on, no gate on the differential. */
void eval_options_init(struct eval_options *o);
void eval_options_release(struct eval_options *o);

/* The questions asked, in order. */
struct eval_set {
        char *source;            /* "builtin:SETS" or "file:PATH": where they came from */
        struct check_spec *specs;  /* one per question: name = its id, non-streamed */
        char (*keys)[17];        /* per question: FNV-1a 64 of the prompt (or messages) and
                                    the expectation, as 16 hex digits */
        size_t n;
        char hash[17];           /* of every key in order, thinking and max_tokens: which
                                    set a journal's answers belong to */
};

void eval_set_release(struct eval_set *s);

/* The built-in questions: o->samples of them (EVAL_DEFAULT_SAMPLES when 0), taking the
 * chosen sets in turn; question j of a set depends only on the seed, the set and j. */
int eval_set_builtin(const struct eval_options *o, struct eval_set *ret);
/* A file's questions (suite_load_jsonl): takes specs (also on failure); keeps a subset of
 * o->samples chosen with o->seed, in file order, when the file has more. */
int eval_set_from_specs(const struct eval_options *o, struct check_spec *specs, size_t n, struct eval_set *ret);

/* Asks every question of s, o->concurrency at a time (checks_run_concurrent: *ret gets
 * s->n results, and its return values), with logprobs when o->logprobs. */
int eval_run(struct loop *l, const struct checks_target *t, const struct eval_set *s, const struct eval_options *o,
             struct check_result **ret);

/* ---- figures ---- */

#define EVAL_Z95 1.959963984540054  /* the normal quantile for 95%, two-sided */
#define EVAL_ALPHA 0.05

struct eval_figures {
        size_t n;                /* questions asked (skipped "not asked" ones excluded) */
        size_t correct;          /* of those, verdict pass */
        double accuracy;         /* correct / n; NAN when n is 0 */
        double ci_low, ci_high;  /* Wilson score interval, 95%; NAN when n is 0 */
        size_t by_verdict[_VERDICT_MAX]; /* the answers' verdicts (wrong, garbage, ...) */
};

/* Adds one answer (a skipped one is not counted), then computes the rates. */
void eval_figures_add(struct eval_figures *f, enum verdict v);
void eval_figures_finish(struct eval_figures *f);
/* The same over results. */
void eval_figures_of(const struct check_result *r, size_t n, struct eval_figures *ret);

/* Wilson score interval for k of n at normal quantile z; [NAN, NAN] when n is 0. */
void eval_wilson(size_t k, size_t n, double z, double *ret_low, double *ret_high);
/* Two-proportion z-test with the pooled standard error: z of k1/n1 - k2/n2 and its
 * two-sided p-value. Equal proportions (including both 0 or both 1): z 0, p 1. */
void eval_two_proportion(size_t k1, size_t n1, size_t k2, size_t n2, double *ret_z, double *ret_p);
/* k/n is below kref/nref and the test gives p < EVAL_ALPHA. */
bool eval_significantly_below(size_t k, size_t n, size_t kref, size_t nref);

/* ---- against the reference ---- */

/* One question's answer, as the comparison reads it (borrowed). */
struct eval_answer {
        enum verdict verdict;    /* VERDICT_SKIPPED: not asked */
        const char *output;
        const double *logprobs;  /* NULL when the server sent none */
        size_t n_logprobs;
};

struct eval_diff {
        size_t common;           /* questions both asked */
        size_t identical;        /* of those, answers byte for byte the reference's */
        double agreement;        /* identical / common; NAN when common is 0 */
        size_t first;            /* the first question whose answers differ; SIZE_MAX: none */
        size_t first_offset;     /* the byte where they first differ */
        size_t lp_answers;       /* identical answers with as many finite logprobs on both
                                    sides (the same tokens, so comparable) */
        size_t lp_tokens;        /* their tokens */
        double lp_mad;           /* mean |logprob - the reference's| over those tokens;
                                    NAN when there are none */
};

/* a and ref hold the same n questions, in the same order. */
void eval_diff(const struct eval_answer *a, const struct eval_answer *ref, size_t n, struct eval_diff *ret);

/* One cell as the reference choice sees it. */
struct eval_cell {
        bool eligible;           /* passed the smoke suite and answered this set */
        size_t n, correct;
        int distance;            /* from the engine's defaults */
};

/* The reference: `named` (an index, or -1) when it is eligible; otherwise the most
 * accurate eligible cell, ties going to the smaller distance, then to the earlier cell.
 * -1 when no cell is eligible. *ret_fell_back: a named cell was not eligible. */
int eval_pick_reference(const struct eval_cell *c, size_t n, int named, bool *ret_fell_back);

enum eval_gate {
        EVAL_GATE_NONE,
        EVAL_GATE_ACCURACY,      /* significantly below the reference: wrong/accuracy */
        EVAL_GATE_AGREEMENT,     /* identical answers below min_agreement: wrong/divergence */
        EVAL_GATE_LOGPROBS,      /* logprob drift above max_logprob_diff: wrong/divergence */
};

/* What a cell's figures and differential say against the reference's, under o's
 * thresholds; accuracy first. */
enum eval_gate eval_gate_decide(const struct eval_options *o, const struct eval_figures *cell,
                                const struct eval_figures *ref, const struct eval_diff *d);
/* "accuracy" or "divergence"; NULL for EVAL_GATE_NONE. */
const char *eval_gate_cause(enum eval_gate g);
/* The evidence line for a gate (caller frees; NULL: ENOMEM): the figures on both sides,
 * the test and its outcome, or the threshold crossed. ref_id names the reference;
 * first_id the first differing question (may be NULL). */
char *eval_gate_evidence(enum eval_gate g, const struct eval_options *o, const struct eval_figures *cell,
                         const struct eval_figures *ref, const struct eval_diff *d, const char *ref_id,
                         const char *first_id);
/* What a sweep journals of its eval (sweeps.eval): {"source", "questions", "set",
 * "samples", "seed", "thinking", "max_tokens", "concurrency", "logprobs",
 * "min_agreement", "max_logprob_diff" (null when not set), "reference" (the cell id named
 * by `reference:` or `baseline:`, or null), "reference_by" ("reference", "baseline" or
 * null)}. NULL: ENOMEM. */
json_t *eval_settings_json(const struct eval_options *o, const struct eval_set *s, const char *ref_id,
                           const char *ref_by);

/* Accuracy under load against alone on the same questions: eval_load is a bench level's
 * eval_under_load object (docs/metrics.md "Checks under load": "answers", each with its
 * "seq" in the set and its "verdict" and "cause"), alone[seq] the verdicts of the same
 * questions asked alone (the cell's eval phase, or the reference's), n_alone of them. A
 * question counts on both sides when it was answered under load (not a timeout nor an HTTP
 * error: the failure gate's) and asked alone (not skipped, not timed out). */
void eval_under_load_figures(const json_t *eval_load, const enum verdict *alone, size_t n_alone,
                             struct eval_figures *ret_load, struct eval_figures *ret_alone);

/* The accuracy under load against the same questions' accuracy alone (the cell's own, or
 * the reference's: `alone` names it, "alone" or "the reference 3f9c0a1d's alone"):
 * "accuracy under load at concurrency 32: 0.400 [0.276, 0.538] (20/50) below alone 0.980
 * [0.895, 0.996] (49/50): two-proportion z-test z = -6.12, p = 9.4e-10 (95%)". Caller frees;
 * NULL: ENOMEM. */
char *eval_under_load_evidence(int concurrency, const struct eval_figures *load, const struct eval_figures *alone,
                               const char *what);

/* "198/200 right, accuracy 0.990 [0.964, 0.997]" (caller frees). */
char *eval_figures_line(const struct eval_figures *f);

#endif
