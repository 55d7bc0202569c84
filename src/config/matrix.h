/* matrix.h -- the matrix schema: the user's matrix file -> a checked struct matrix.
 *
 * The keys are a contract (DESIGN.md, docs/matrix.md). matrix_parse_string() validates the
 * schema, and cells_load_matrix() (cells.h) the cells it makes as well: together everything
 * a sweep needs before anything is launched or written: a malformed file gives one message
 * "FILE:LINE: what is wrong" and no side effects. The YAML under it is
 * ytree.h's, the `checks:` list suite.h's; the cells it expands into are cells.h's.
 *
 * Ownership: a struct matrix owns every string, vector and array it points to, profile
 * excepted (a static table, profile.h); matrix_free releases it all. It is read-only once
 * loaded. Invariants after a load: 0..MATRIX_MAX_AXES axes, each with 1..MATRIX_MAX_VALUES
 * values of unique names; baseline set whenever the strategy is one-at-a-time with axes;
 * the objective is "smoke" or a known metric at a level bench.concurrency holds; and the
 * matrix expands (cells_expand) into at most MATRIX_MAX_CELLS cells of distinct ids.
 */
#ifndef GAUNTLET_MATRIX_H
#define GAUNTLET_MATRIX_H

#include <sys/types.h>

#include "bench/bench.h"
#include "gate/checks.h"
#include "gate/eval.h"
#include "gate/probes.h"
#include "base/profile.h"
#include "base/util.h"
#include "proc/slurm.h"

/* Limits on what a matrix may ask for (docs/matrix.md, docs/limits.md). Going past one is
 * a validation error, never a silent cut. The file's own (size, nodes, anchors) are
 * ytree.h's, the checks' suite.h's. */
#define MATRIX_MAX_AXES 16
#define MATRIX_MAX_VALUES 256               /* per axis */
#define MATRIX_MAX_CELLS 10000              /* after expansion, before exclusion */
#define MATRIX_MAX_LEVELS 64                /* bench concurrency levels */
#define MATRIX_MAX_EXCLUDES 1024            /* exclude rules */
#define MATRIX_MAX_ARGS 256                 /* argv entries of one cell, template included */
#define MATRIX_MAX_ENV 256                  /* env entries of one cell */
#define MATRIX_MAX_CELL_BYTES ((size_t)64 << 10) /* argv + env text of one cell */

struct axis_value {
        char *name;          /* shown in reports; the value itself for plain values */
        char **args;         /* appended to argv: {flag, value} for plain values; never NULL */
        char **env;          /* "KEY=VALUE", one entry per key; may be NULL */
        bool is_default;     /* the engine's default ("auto", ...) or `default: true` */
};

struct axis {
        char *name;
        char *flag;          /* NULL when every value is a map; a flag ending in '=' joins:
                              * "--x=" + "v" gives the one argument "--x=v" */
        struct axis_value *values;
        size_t n_values;
};

/* grid: every cell; one-at-a-time: the baseline, then each axis varied alone; search: the
 * next cell chosen from what has settled (search.h), within `budget:`. */
enum strategy { STRATEGY_GRID, STRATEGY_ONE_AT_A_TIME, STRATEGY_SEARCH };

enum emit_kind { EMIT_SYSTEMD = 1 << 0, EMIT_SCRIPT = 1 << 1 };

/* Where a cell's server runs: spawned here, or as a Slurm job (docs/slurm.md). */
enum launcher_kind { LAUNCHER_LOCAL, LAUNCHER_SLURM };

#define MATRIX_MAX_SLURM_PARALLEL 1024      /* slurm.max_parallel */

/* The `slurm:` map, defaults filled in whether or not the map or `launcher: slurm` was
 * given (`gauntlet run --launcher slurm` uses it too). */
/* One exclusion rule: a cell matching every named axis is skipped. */
struct exclude_rule {
        ssize_t *value;      /* per axis: value index, or -1 for "any" */
};

/* probes.under_load (docs/metrics.md "Checks under load"): the eval's questions asked amid
 * the bench's highest concurrency too. */
#define MATRIX_UNDER_LOAD_EVAL_SAMPLES 50
struct matrix_under_load {
        bool on;                      /* default true; with an eval and a bench only */
        size_t eval_samples;          /* the first N of the eval's questions; default 50 (all
                                         when the eval has fewer) */
};

struct matrix {
        char *path;                   /* as given (the name, for matrix_parse_string) */
        char *text;                   /* the file as read, for the journal and reports */
        char *engine;                 /* the profile's canonical name ("llamacpp" -> "llama.cpp") */
        const struct profile *profile;
        char *model;                  /* may be NULL for generic and testbed */
        char *tokenizer;              /* `tokenizer:` (docs/metrics.md "The sweep's tokenizer"): the
                                         model's tokenizer file or folder; "none": count without one;
                                         NULL: looked for in the model's path and args */
        unsigned line_tokenizer;
        char **command;               /* generic: the full command template; NULL otherwise */
        char **version_command;       /* `version_command:` the argv printing the engine's
                                         version for the provenance; NULL: the profile's */
        char **args;                  /* base args after the template; may be NULL */
        char **env;                   /* base env, "KEY=VALUE"; may be NULL */
        char *host;                   /* default 127.0.0.1 */
        int port;                     /* 0: a free port per launch */
        /* `port_owner:` who may hold the port besides the launched server's processes:
         * launched (both false/NULL), any, or these commands (NULL-terminated) */
        bool port_owner_any;
        char **port_owners;
        int tp;                       /* from `tp:` or the profile's TP flag in args; 0 unknown */
        int gpus_per_cell;            /* GPUs one cell needs: `gpus_per_cell:`, else tp; 0: all
                                         of them (cells run one at a time) */
        char *workdir;                /* where the server runs; NULL: gauntlet's cwd */
        usec_t startup_timeout;       /* default 20m */
        usec_t request_timeout;       /* per check request; default 5m */
        usec_t stop_timeout;          /* SIGTERM grace before SIGKILL; default 30s */
        usec_t straggler_timeout;     /* once the main process is gone, the grace its other
                                         processes get; default 1s, at most stop_timeout */
        usec_t memory_timeout;        /* after a stop, the wait for GPU memory to come back
                                         to where it was before the launch; default 2m */
        struct axis *axes;
        size_t n_axes;
        enum strategy strategy;
        size_t budget_launches;       /* search: `budget.launches`, cells launched in all (this
                                         journal's runs together); 0: none */
        usec_t budget_time;           /* search: `budget.time`, the launched cells' time in all;
                                         0: none */
        unsigned line_budget;         /* of `budget:`; 0 when absent */
        size_t *baseline;             /* value index per axis; NULL when no `baseline:` was given
                                       * (always set for one-at-a-time with axes) */
        struct exclude_rule *excludes;
        size_t n_excludes;
        bool checks_default;          /* `checks: default` or absent */
        struct check_spec *checks;    /* custom suite (when !checks_default) */
        size_t n_checks;
        struct probes_options probes; /* `probes:` (docs/checks.md "Probes"); all on by default */
        unsigned line_probes;         /* of `probes:`; 0 when absent */
        bool has_bench;               /* a `bench:` key was given; bench holds defaults if not */
        struct bench_spec bench;
        struct dataset *bench_data;   /* bench.dataset's file as read (sharegpt, custom), or NULL;
                                         bench.data points here */
        char *objective;              /* default OBJECTIVE_DEFAULT (objective.h) */
        bool has_eval;                /* an `eval:` key was given (docs/eval.md) */
        struct eval_options eval;     /* its options (defaults when !has_eval) */
        struct eval_set eval_set;     /* its questions, loaded and checked with the matrix */
        size_t *reference;            /* `reference:` value index per axis (every axis
                                         named), or NULL: the baseline, else the most
                                         accurate cell, is the eval's reference */
        unsigned line_eval;           /* the `eval:` key's line, for errors found later */
        struct matrix_under_load under_load; /* `probes: {under_load: ...}` */
        unsigned emit;                /* enum emit_kind bits; default both */
        enum launcher_kind launcher;  /* `launcher:`, default local */
        struct slurm_settings slurm;
        /* Lines of the keys that say how a server starts, for errors found at launch
         * (sweep_preflight): `command:` (generic) or `engine:`, `workdir:`, `host:`; 0 when
         * the key is absent (then the message names the file alone). */
        unsigned line_command, line_workdir, line_host;
        unsigned line_launcher;       /* of `launcher:`; 0 when absent */
        /* Lines for the cell checks (cells_load_matrix): the top of the file, `axes:`,
         * `args:` and `reference:`; 0 when absent. */
        unsigned line_top, line_axes, line_args, line_reference;
        unsigned line_longest;  /* the longest argument or env value's (an env value's: its key's) */
};

/* Parses and validates the schema: every key, value and reference between keys, but not
 * the cells the matrix makes (their number and size, distinct ids, the eval's reference a
 * cell that runs): cells.h's cells_load_matrix checks those too, and is what a caller
 * wants. name stands for the file in messages. On failure returns a negative errno and, in
 * *ret_error, one line (caller frees): "FILE:LINE: message" (-EINVAL); *ret_error may stay
 * NULL on -ENOMEM. Nothing else happens on failure. */
int matrix_parse_string(const char *text, size_t len, const char *name, struct matrix **ret,
                        char **ret_error);
void matrix_free(struct matrix *m);

/* The flag an axis's values set, as the search reads what the engine prints of it
 * (docs/search.md, "How evidence is read"): its `flag`; else, for an axis of maps, the
 * argument every value that has arguments begins with, when it is a flag ("-ctk" of
 * `{name: q8_0, args: [-ctk, q8_0, -ctv, q8_0]}`); else the one environment key every value
 * that has an environment sets (VLLM_ATTENTION_BACKEND). Written into buf (size bytes);
 * returns its length, or 0 when there is none or it does not fit. */
size_t axis_reading_flag(const struct axis *ax, char *buf, size_t size);
static inline void matrix_freep(struct matrix **m) { if (*m) matrix_free(*m); }
#define _cleanup_matrix_ _cleanup_(matrix_freep)

#endif
