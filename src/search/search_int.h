/* search_int.h -- PRIVATE: what search.c and its helpers (search_evidence.c, search_sizes.c,
 * search_linalg.c, search_stop.c, search_feat.c, search_why.c) share: the model, reading a
 * failure's line and a value's name against the matrix; included by nothing else (the
 * interface is search.h). */
#ifndef GAUNTLET_SEARCH_INT_H
#define GAUNTLET_SEARCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search/search.h"

/* ---- features (search_feat.c): a value, a pair or a triple of values of different axes --
 * keyed, with what the model knows of each, in an open-addressed table. */

/* search.c's failure classes (its CLASSES), each feature's blocker chance one per class */
#define SEARCH_N_CLASSES 10
/* Triples only up to this many axes (their count grows with the cube of it). */
#define TRIPLE_MAX_AXES 8

/* key: order in bits 62-63; axes a, b, c in 4 bits each from bit 48; values 8 bits each
 * from bit 0 (matrix.h caps axes at 16 and values at 256). */
static inline uint64_t feat_key(int order, const size_t *ax, const size_t *val) {
        uint64_t k = (uint64_t)order << 62;
        for (int i = 0; i < order; i++)
                k |= (uint64_t)(ax[i] & 15) << (48 + 4 * i) | (uint64_t)(val[i] & 255) << (8 * i);
        return k;
}
static inline int key_order(uint64_t k) { return (int)(k >> 62); }
static inline size_t key_axis(uint64_t k, int i) { return (size_t)(k >> (48 + 4 * i)) & 15; }
static inline size_t key_value(uint64_t k, int i) { return (size_t)(k >> (8 * i)) & 255; }

struct feat {
        uint64_t key;         /* 0: empty slot */
        bool cleared;         /* seen in a cell that served right: no blocker */
        unsigned char named;  /* a failure's evidence named: NAMED_AXIS the flag of one of
                                 its axes, NAMED_PAIR both flags, each with this value */
        /* a value (order 1) a failure's evidence names: the cell + 1 whose line named it,
         * and the class of that failure; a value all the cells failing with one signature
         * share, and no other (or a pair, order 2, the two they share where
         * SIGNATURE_CONDEMNS cells or more crashed so): one of them + 1, their count, their
         * class */
        size_t named_by, sig_by, sig_cells;
        unsigned char named_class, sig_class, named_how; /* named_how: enum search_naming */
        bool named_partly;    /* the line that named it says the failure is the configuration's
                                 (search_says_configuration), or is no error by its level
                                 (search_line_quiet): a suspect, not condemned */
        /* a pair (order 2) a failure's line named (named NAMED_PAIR): that cell + 1 */
        size_t pair_by;
        /* a value whose namesake on another axis a line named: that cell + 1, its class */
        size_t kin_by;
        unsigned char kin_class;
        unsigned n_launched;  /* launched cells holding it */
        unsigned n_failed;    /* of them, failed */
        double b[SEARCH_N_CLASSES]; /* chance it is a blocker of each class */
        double logit_next;    /* scratch for the update */
};

struct feat_map {
        struct feat *slots;
        size_t cap;           /* a power of two */
        size_t n;
};

/* The entry of key, or NULL. */
struct feat *search_feat_find(const struct feat_map *fm, uint64_t key);
/* The entry of key, added (zeroed but for the key) when it is not there; -ENOMEM. */
int search_feat_get(struct feat_map *fm, uint64_t key, struct feat **ret);
/* The feature keys of cell k: its values, pairs and (few axes) triples, in a fixed order,
 * into out (search_features_per_cell of them); their count. */
size_t search_cell_features(const struct search_space *s, size_t k, uint64_t *out);
size_t search_features_per_cell(size_t n_axes);

/* The entry of value x of axis a, NULL when no launched cell held it. */
static inline struct feat *value_feat(const struct feat_map *fm, size_t a, size_t x) {
        return search_feat_find(fm, feat_key(1, (size_t[]){a}, (size_t[]){x}));
}

/* Whether evidence names flag: its name without leading dashes, '-', '_' and ' ' alike,
 * case ignored, not inside a longer word. Names shorter than 3 characters never match. The
 * same for an axis's words ("K cache"). */
bool search_names_flag(const char *evidence, const char *flag);
/* Whether evidence says its failure is the configuration's, the rest of the cell's settings
 * with the value it names ("eagle3 speculative_config is not supported in this
 * configuration", "... disabled for this configuration"), and gives no reason of the GPU's or
 * the install's ("Reason: ['compute capability not supported']", "is not installed"). */
bool search_says_configuration(const char *evidence);
/* Whether a failure's line (of kind) is no error by its own level (a WARNING, an INFO,
 * llama.cpp's "W "), or is the last line of a log with no error in it of a server that died
 * (diagnose_exit's "last log line"; a server that hangs is stuck where its last line says):
 * what it printed last before it was killed, often an echo of its configuration ("WARNING:
 * --kv-cache-dtype fp8_e5m2 is experimental"). A value it names is a suspect, not
 * condemned. */
bool search_line_quiet(const char *kind, const char *evidence);
/* The value of axis a that evidence quotes right after a mention of a's flag ("--kv fp8",
 * "--kv=fp8", "--kv 'fp8'"), as its index: *ret_own when one mention quotes the value the
 * cell has (cell_value); *ret_other another value some mention quotes, or -1. */
void search_quoted_values(const struct search_space *s, size_t a, const char *evidence, size_t cell_value,
                          bool *ret_own, long *ret_other);
/* The value of axis a named name (n characters, case ignored), or -1. */
long search_value_on(const struct search_space *s, size_t a, const char *name, size_t n);
/* How far the nearest mention of axis a (its flag, or one of its words) is from the word
 * [p, q) of evidence, in characters; SIZE_MAX when none. */
size_t search_axis_distance(const struct search_space *s, size_t a, const char *evidence, const char *p,
                            const char *q);

/* Whether axis a's name, flag or one of the flag's other forms (axis_forms: llama.cpp's -c
 * is --ctx-size) holds one of words (a word of its own: "ctx" in "--ctx-size", not in
 * "--ctxx"; "np" is "-np" or "np"). */
bool search_axis_about(const struct search_space *s, size_t a, const char *const *words);

/* Axes of sizes (search_sizes.c; docs/search.md, "Sizes"): an axis two or more of whose
 * values are whole numbers (with an optional k, m or g), none another number (0.85, "3,1"),
 * and whose words are not of parallelism or offloading. ret[a] (s->n_axes of them): NULL on
 * an axis that is not one, else its values' sizes, -1 for a word ("auto"); the caller frees
 * each. -ENOMEM (nothing left allocated). */
int search_sizes(const struct search_space *s, double **ret);
/* Whether cell k holds cell x's values but for sizes at least as large (sz: search_sizes). */
bool search_sizes_at_least(const struct search_space *s, double *const *sz, size_t k, size_t x);
/* The allocation that failed (search_alloc.c; docs/search.md, "The allocation that failed"):
 * the size an out-of-memory line says it tried to allocate, in bytes ("attempted to allocate
 * 1280.00 MB", "Tried to allocate 2.00 GiB", "buffer of size 1342177280"), or -1. */
double search_alloc_size(const char *evidence);
/* The memory the line says was free when it failed, in bytes ("of which 1.06 GiB is free",
 * "3.44 MiB free"), or -1. */
double search_alloc_free(const char *evidence);
/* The longest context, in tokens, that an out-of-memory line says the memory left would hold
 * (vLLM: "the estimated maximum model length is 32192", "the maximum number of tokens that can
 * be stored in KV cache (77584)"), or -1 (docs/search.md, "What a line says fits"); where
 * ret_sentence, the start of the sentence that says it, within evidence. */
double search_alloc_room(const char *evidence, const char **ret_sentence);
/* Cells that ran out of memory at one size of one line (its numbers taken out), with one
 * free memory where the line says it, differing on an axis, show that axis does not change
 * that allocation; where their line has failed at two sizes or more, and no cell that loaded
 * says otherwise, a cell that differs from one that ran out only on such axes (or larger
 * sizes: sz, search_sizes) runs out too: mem_over[k] is that cell, and by_alloc[k] true. An
 * axis counts so for a cell that ran out at the size that showed it or a larger one only: a
 * smaller allocation may fit in the room another value leaves. out: the cells that ran out,
 * out_size their lines' sizes (search_alloc_size, -1 for none); in: those that loaded. Cells
 * with mem_over or mem_under set are left. -ENOMEM. */
int search_alloc_predict(const struct search_space *s, const struct search_obs *obs, const size_t *out,
                         const double *out_size, size_t n_out, const size_t *in, size_t n_in, double *const *sz,
                         long *mem_over, const long *mem_under, bool *by_alloc);
/* The values of axis a that are its smallest and its largest number ("0.6" and "0.97" of a
 * memory share; a 0, which a flag often takes for "the default" or "no limit", and words
 * left out), into *lo and *hi; false where fewer than two of its values are such numbers. */
bool search_axis_extremes(const struct search_space *s, size_t a, size_t *lo, size_t *hi);
/* Whether axis a sets a context's length (its name, flag or the flag's other forms: ctx,
 * context, ctx-size, n-ctx, model-len, seq-len): llama.cpp's -c, vLLM's --max-model-len. */
bool search_axis_context(const struct search_space *s, size_t a);
/* Into ret (one per cell): for a cell not launched, a launched cell that refused the bench
 * for its length (overload/context) and gave each request at least as much context (its
 * context's length no shorter, its slots, llama.cpp's -np, no more; the other axes aside:
 * the bench is the same everywhere), else -1; -1 everywhere without an axis of a context's
 * length (context_axes: bit a for axis a, search_axis_context's). Such a cell is refused
 * too. -ENOMEM. */
int search_context_over(const struct search_space *s, const struct search_obs *obs, unsigned context_axes,
                        long *ret);
/* An axis of numbers: at least this many of its values are numbers. */
#define ORD_MIN_NUMBERS 4
/* The likenesses of neighbouring numbers the speed model tries beside none (search_ords). */
#define ORD_RHOS 2
/* Into *ret, for an axis of numbers (ORD_MIN_NUMBERS; "0.85", "4096", "32k"; a context's 0
 * its largest), n_values^2 likenesses: 1 on the diagonal, rho^r between two numbers r ranks
 * apart (1 for neighbours), 0 between a number and a word ("auto"); NULL for another axis or
 * rho <= 0. -ENOMEM. */
int search_ord(const struct search_space *s, size_t a, double rho, double **ret);
/* A space's likenesses: t[o][a] axis a's under likeness o (search_ord), NULL for an axis
 * that is not of numbers; n, ORD_RHOS where some axis is of numbers, else 0. */
struct search_ords {
        double *t[ORD_RHOS][16];
        size_t n;
};
/* Fills *o for s (at most 16 axes); -ENOMEM, *o freed. */
int search_ords(const struct search_space *s, struct search_ords *o);
void search_ords_free(struct search_ords *o);

/* Whether the failed cells of obs hold both ends of axis a's numbers (search_axis_extremes),
 * or it has none: where every failure ran out of memory, what spans an axis of numbers
 * (search_stop.c). */
bool search_failed_ends(const struct search_space *s, const struct search_obs *obs, size_t a);

/* Whether every value of every axis failed, each beside more than one partner (the failed
 * cells holding it agree on no other axis), every failure alike (one kind; a bad answer,
 * garbage or wrong, is one) and none named by its line: what no value explains
 * (search_stop.c). */
bool search_every_value_failed(const struct search_space *s, const struct search_obs *obs);

/* What to change for a failure of the host its line says in known words (a full disk, a
 * library that cannot be loaded, a path the server may not write, a model the Hub will not
 * give without a login), or NULL: the stop's line says it beside the class's or in place of
 * the generic "fix what that line names". */
const char *search_host_hint(const char *evidence);
/* What to change for class c's failure whose line is evidence: the host's words where c takes
 * them (host_words), else c->change. */
struct search_hopeless;
const char *search_hopeless_change(const struct search_hopeless *c, const char *evidence);

/* Whether evidence names two of cell k's values, each as search_names_value would name it
 * alone ("FlashInfer backend does not support fp8_e5m2 KV cache"): their axes into ret,
 * lower first. */
bool search_names_pair(const struct search_space *s, size_t k, const char *evidence, size_t ret[2]);

/* search_stop.c: a failure no value of the matrix explains (docs/search.md, "When nothing can
 * pass"), by its kind: what it is about, the words by which an axis would set that (an axis
 * that does makes it a value's failure again), and what to change. */
struct search_hopeless {
        const char *kind;       /* the failure's kind, exactly; "error": gauntlet's own */
        const char *about;
        const char *const *axis_words;
        const char *change;
        bool retried;           /* gauntlet launched the cell again itself (on another port):
                                   its launches, not its cells, count towards the stop */
        bool host_words;        /* a host's failure its line words (search_host_hint) says what
                                   to change in place of change: not for a port refused (even
                                   for its permissions) nor a bench too long */
        /* kinds (a prefix each, NULL-terminated) of a failure that got past what the class is
         * about: a launched cell that failed so shows the class is a value's doing after all
         * (a GPU that ran out of memory was had; a server that answered garbage loaded its
         * model and bound its port) */
        const char *const *past;
};
/* The class of failed cell k's failure (obs: every cell's) when it is one no value explains,
 * or NULL: its kind is one of them, its line names no value of the cell, and no axis that sets
 * what it is about may still change it (*ret_axis, when not NULL: the first that may, else
 * -1; it may while another value of it has not failed with the very same line, one that
 * quotes a figure). gauntlet's own error counts only when the server could not be started. */
const struct search_hopeless *search_hopeless_class(const struct search_space *s, const struct search_obs *obs, size_t k,
                                                    long *ret_axis);

/* search_linalg.c: the Cholesky factor of the n x n matrix a in place (lower; -EDOM when it
 * is not positive definite), and the solves of L x = b and L^T x = b in place. */
int search_cholesky(double *a, size_t n);
void search_forward(const double *l, size_t n, double *b);
void search_backward(const double *l, size_t n, double *b);

/* The speed model under one choice of hyper-parameters (search.c's grid of them). */
struct search_gp {
        double s1, s2, noise;
        size_t ord;           /* 0, or 1 + which likeness by rank of the numbers of an axis
                                 (search_ord) */
        double *l;            /* n x n Cholesky factor of K + noise^2 I */
        double *alpha;        /* (K + noise^2 I)^-1 (y - mean) */
        double lml;           /* log marginal likelihood */
        double w;             /* posterior weight */
};
/* How alike two cells are: m1 the sum over the axes of their values' likeness (1 where
 * they agree; on an axis of numbers, under search_gp.ord, less than 1 by the ranks between
 * the two), m2 the sum of its squares. */
struct search_agree {
        double m1, m2;
};
/* The kernel between two cells so alike: a constant, s1 per axis (main effects), s2 per
 * pair of axes (pair interactions; the sum over pairs of the product of their likeness). */
double search_kern(double s1, double s2, struct search_agree a);
/* How alike cells x and y of s are: by their values alone (ord 0), or with likeness ord - 1
 * of o for the numbers that differ. */
struct search_agree search_alike(const struct search_space *s, const struct search_ords *o, size_t ord, size_t x,
                                 size_t y);
/* Factors K + noise^2 I (agree_obs: n x n, how alike two figures' cells are; per: each
 * figure's share of the noise's variance) and solves for y, setting g's l, alpha and lml;
 * -EDOM when not positive definite. */
int search_gp_fit(const struct search_agree *agree_obs, const double *y, const double *per, size_t n,
                  struct search_gp *g);
/* The grid of hyper-parameters (search_linalg.c): this many points for each kernel. */
#define SEARCH_N_HYPER 48
/* Fits every point of the grid for each of n_ord kernels (ag: n_ord n x n matrices, how alike
 * the figures' cells are under each), into g (n_ord SEARCH_N_HYPER of them, their factors and
 * solutions in ls and alphas, n x n and n each); a point whose matrix is not positive
 * definite gets an lml of -INFINITY. Returns the highest lml. */
double search_gp_grid(const struct search_agree *ag, size_t n_ord, const double *y, const double *per, size_t n,
                      double *ls, double *alphas, struct search_gp *g);

/* ---- the model (search.c), shared with what it says (search_why.c) -------------------- */

/* How a feature was named by a failure's line (struct feat.named). */
enum { NAMED_NONE, NAMED_AXIS, NAMED_PAIR };
/* The most pairs condemned by the lines that named them (line_condemned): past these, a
 * pair is left to its chance alone. */
#define SEARCH_NAMED_PAIRS_MAX 64
/* How much of a failure's line a pruned cell's reason quotes, in bytes. */
#define SEARCH_QUOTE_MAX 200

struct search_model {
        const struct search_space *s;
        const struct search_obs *obs;
        struct search_obs *liars;     /* the observations with the cells in flight as their
                                         predicted outcome (obs points to it), or NULL */
        size_t n_pending;             /* cells in flight */
        size_t n_launched;
        size_t n_launches;            /* the launches: a cell measured again counts each time,
                                         and so does one abandoned */
        size_t n_again;               /* the launches measuring a launched cell again */
        double t_pass, t_fail;        /* mean seconds of a launch that served, that failed
                                         (search_model_costs) */
        long best;                    /* launched, feasible, best measured figure */
        bool served;                  /* a launched cell served right */
        struct feat_map fm;
        bool seen[SEARCH_N_CLASSES];  /* classes some launched cell failed with */
        unsigned context_axes;        /* bit a: axis a is of a context's length (CLASS_CONTEXT) */
        /* Memory (docs/search.md): when a cell ran out of memory, an additive model of what
         * each value costs, fitted to the cells that ran out and those that loaded:
         * P(out of memory) = logistic(mem_b + sum of its values' mem_w). It stands in for
         * the blockers of the memory classes. */
        bool mem_on;
        double mem_b, *mem_w;         /* mem_w[voff[a] + value] */
        size_t *voff, n_mem, n_oom;   /* value offsets per axis; cells fitted, of them OOM */
        /* Sizes (docs/search.md, "Sizes"): on an axis whose values are whole numbers (a
         * context, a batch, a count of sequences), a larger one never needs less memory. A
         * cell that holds a launched cell's values but for larger sizes runs out of memory
         * where that one did (mem_over: that cell), and fits where a cell holding its values
         * but for larger sizes loaded (mem_under). -1: none. */
        long *mem_over, *mem_under;
        bool *mem_by_alloc;           /* per cell: mem_over by the allocation that failed
                                         (search_alloc_predict), not by sizes alone */
        bool *mem_by_room;            /* per cell: mem_over (or mem_under) by the context its
                                         cell's line says fits (search_alloc_room) */
        long *ctx_over;               /* per cell: a launched cell refused the bench for its
                                         length with as much context per request or more
                                         (search_context_over), or -1 */
        double *mem_size;             /* per value (voff): its size on an axis of sizes, or -1 */
        double unexplained;           /* chance of a failure no feature explains */
        /* Requirements failures' evidence stated: "--a x requires --b y" (docs/search.md). */
        struct require {
                size_t a, x, b, y;
                size_t cell;          /* the failed cell whose evidence said it */
        } *req;
        size_t n_req;
        /* the speed model: y = sign * log(figure) */
        double sign;
        size_t n_y;
        double y_best;                /* best posterior mean among launched cells with figures */
        double noise;                 /* fitted noise (log units), the weights' average */
        double margin;                /* a cell must beat the best by this to count */
        double y_mean;                /* the figures' mean (log units) */
        size_t *idx;                  /* the cells with figures, n_y of them */
        double *per;                  /* 1 / how many launches each figure pools: its share
                                         of the noise's variance */
        struct search_gp *gp;         /* the grid points of some weight, n_gp of them */
        size_t n_gp;
        double *ls, *alphas;          /* their factors and solutions */
        double *scratch;              /* 2 n_y doubles for gp_cell and gp_apart */
        struct search_ords ords;      /* the numbers' likenesses by rank (search_ords) */
        struct search_agree *rows;    /* 2 (1 + ords.n) n_y: how alike a cell is to the figures'
                                         cells, under each likeness (alike_rows) */
        double *pf, *mu, *sd;         /* per cell: feasibility, latent mean, sd (log; sd
                                         computed when asked for, NAN until then) */
        double *ei, *chance;          /* per cell: expected improvement and the chance to beat
                                         the best, before feasibility */
        bool *condemned;              /* per cell: it holds a value a failure's line named,
                                         or sizes past a cell that ran out of memory
                                         (line_condemned), set once per fit */
        /* the pairs a line named and that likely failed the cell (line_condemned) */
        uint64_t named_pairs[SEARCH_NAMED_PAIRS_MAX];
        size_t n_named_pairs;
};

/* The largest blocker chance of feature f over the classes learned by blockers, and the
 * class (ret_class may be NULL). */
double search_blame(const struct search_model *m, const struct feat *f, size_t *ret_class);
/* The memory model's chance that cell k runs out of memory (0 while none did). */
double search_oom_chance(const struct search_model *m, size_t k);
/* A requirement a failure's line stated that cell k breaks, or NULL; *ret_count (may be
 * NULL): how many failed cells stated requirements it breaks. */
const struct require *search_broken_requirement(const struct search_model *m, size_t k, size_t *ret_count);
/* Whether cell k of s holds feature key. */
bool search_cell_has(const struct search_space *s, size_t k, uint64_t key);
/* Cell k's sd under the speed model's mixture (log units), computed once. */
double search_cell_sd(const struct search_model *m, size_t k);

/* ---- what the search says (search_why.c) ---------------------------------------------- */

struct buf;
/* Quotes a failure's line into b: at most SEARCH_QUOTE_MAX bytes (not inside a UTF-8
 * character, "…" after a cut), control characters as '?', '"' as '\''. */
void search_put_quote(struct buf *b, const char *e);
/* "crashed (arch)" into past for the kind "crash/arch", and the word of the prediction
 * ("crash") into *ret_noun. */
void search_kind_words(const char *kind, struct buf *past, const char **ret_noun);

#endif
