/* options.h -- the one table of the bench's, the dataset's and the eval's settings: each
 * entry's `gauntlet bench` (or `gauntlet smoke`) flag, matrix key, type, bounds, default, help line and place.
 *
 * The CLI's parsers and help (cli_bench.c, cli_smoke.c), the matrix's bench:, bench.dataset: and eval:
 * keys (matrix.c) and the test of the man page and the completion (test_options.c) all read
 * it, so that a bound or a name is written once. Each front end keeps its own message
 * form ("invalid --FLAG 'V' (HINT)" on the command line, "FILE:LINE: KEY must be ..." in a
 * matrix); the table gives the pieces. */
#ifndef GAUNTLET_OPTIONS_H
#define GAUNTLET_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/bench.h"
#include "gate/eval.h"

enum option_type {
        OT_INT,      /* int, min..max */
        OT_U64,      /* uint64_t, min..max */
        OT_SIZE,     /* size_t, min..max */
        OT_DOUBLE,   /* double, min..max (OF_MIN_OPEN, OF_MAX_OPEN) */
        OT_DURATION, /* usec_t: 30s, 2m, 500ms; 0 refused unless OF_ZERO_OK */
        OT_MS,       /* usec_t given as milliseconds, above 0 */
        OT_BOOL,     /* bool; on the command line a flag without a value */
        OT_STRING,   /* const char * on the command line, char * (owned) in a matrix */
        OT_ENUM,     /* a name, through parse */
        OT_CUSTOM,   /* parsed by its front end (a list, a map, a file) */
};

/* The map of a matrix the key is in. */
enum option_scope {
        OS_BENCH,   /* bench: */
        OS_DATASET, /* bench.dataset: */
        OS_EVAL,    /* eval: */
};

/* The struct that off is an offset into. */
enum option_where {
        OW_NONE,    /* OT_CUSTOM: its front end stores it */
        OW_SPEC,    /* struct bench_spec */
        OW_DATASET, /* struct dataset_options (spec.dataset) */
        OW_TARGET,  /* struct bench_target (the command line only) */
        OW_EVAL,    /* struct eval_options */
};

enum {
        OF_MIN_OPEN = 1 << 0,   /* a double above min, not at it */
        OF_MAX_OPEN = 1 << 1,   /* a double below max, not at it */
        OF_ZERO_OK = 1 << 2,    /* a duration of 0 is taken */
        OF_NEGATE = 1 << 3,     /* the matrix's bool is stored negated (server_metrics) */
        OF_CLI_FALSE = 1 << 4,  /* the flag stores false (--no-calibrate) */
        OF_WORKLOAD = 1 << 5,   /* a dataset flag: names a workload on the command line */
        OF_RANGE_HINT = 1 << 6, /* the command line's error gives the range */
        OF_SMOKE = 1 << 7,      /* the flag is gauntlet smoke's, not gauntlet bench's */
};

/* The commands whose flags the table gives. */
enum option_command {
        OC_BENCH, /* gauntlet bench */
        OC_SMOKE, /* gauntlet smoke (its eval's flags) */
};

struct option_def {
        const char *name;      /* the table's own name */
        const char *flag;      /* --FLAG of gauntlet bench (or smoke: OF_SMOKE); NULL: a matrix
                                  key only */
        const char *key;       /* the key in scope's map; NULL: the command line only */
        enum option_scope scope;
        enum option_type type;
        enum option_where where;
        size_t off;
        double min, max;
        unsigned flags;
        int (*parse)(const char *s, void *dst); /* OT_ENUM: 0, or -EINVAL */
        const char *const *names;               /* OT_ENUM: the names a matrix's hint offers */
        const char *arg;       /* the value's name in the help, NULL: none */
        const char *def;       /* the default, as the help says it; NULL: none */
        const char *help;      /* the help text; lines after the first are continuations */
        const char *hint;      /* the command line's error: "invalid --FLAG 'V' (HINT)" */
        const char *what;      /* a matrix's error names it so; NULL: "SCOPE.KEY" */
        const char *bad;       /* a matrix's error: "WHAT BAD, not V" (double), or "BAD 'V'"
                                  (enum); NULL: the generic one */
        const char *bad_tail;  /* OT_ENUM: after the value and the hint */
};

extern const struct option_def options_table[];
extern const size_t options_table_n;

/* Whether d is a flag of cmd. */
bool options_takes(const struct option_def *d, enum option_command cmd);
/* The entry of cmd's command-line flag, or of a key in scope; NULL: none. */
const struct option_def *options_by_flag(enum option_command cmd, const char *flag);
const struct option_def *options_by_key(enum option_scope scope, const char *key);
/* The keys of scope (NULL-terminated, into v of n slots), for y_check_keys. */
void options_keys(enum option_scope scope, const char **v, size_t n);
/* Where d stores into, given its structs (one may be NULL when d does not use it). */
void *options_place(const struct option_def *d, struct bench_spec *spec, struct bench_target *target,
                    struct eval_options *eval);
/* Parses a command-line value s of d into dst; -EINVAL when outside its type or bounds. */
int options_parse_arg(const struct option_def *d, const char *s, void *dst);
/* "SCOPE.KEY", or d->what (caller frees). */
char *options_what(const struct option_def *d);

#endif
