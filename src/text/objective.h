/* objective.h -- the objective: which figure ranks the cells ("METRIC@N" or "smoke").
 *
 * One parser for the matrix (which refuses what it does not know: matrix.c) and for the
 * reports (which rank by whatever the journal holds: report.c). It splits the text and
 * looks METRIC up in the metrics table (metrics.h); whether that metric may rank cells and
 * which levels were measured is for the caller to judge.
 */
#ifndef GAUNTLET_OBJECTIVE_H
#define GAUNTLET_OBJECTIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/metrics.h"

/* Constraints of an SLA objective ("... where ttft_ms.p99<=500,itl_ms.p99<=50"), at most. */
#define OBJECTIVE_MAX_LIMITS 8

/* One constraint: the level's figure at PATH (dots reach into objects, as METRIC) must be at
 * most (or at least) limit. */
struct objective_limit {
        const char *path;     /* borrowed from the text, path_len bytes */
        size_t path_len;
        bool at_most;         /* "<=" (else ">=") */
        double limit;
};

/* The objective of a matrix without `objective:`. */
#define OBJECTIVE_DEFAULT "output_tokens_per_s@1"

struct objective {
        bool smoke;           /* the text is "smoke": rank by the smoke suite's time; the
                                 fields below are then empty */
        const char *metric;   /* METRIC: borrowed from the text parsed, metric_len bytes, not
                                 NUL-terminated; may be empty. Dots reach into objects of a
                                 bench entry ("ttft_ms.p50") */
        size_t metric_len;
        long concurrency;     /* N of "METRIC@N" when it is a positive integer (strtol's reading,
                                 nothing after it); 0: no '@', or not such a number */
        const struct metric_info *info; /* the table's entry METRIC names as a whole; NULL for
                                 a stat below one ("ttft_ms.p50"), an unknown name, or smoke */
        bool higher_better;   /* the direction of the deepest table entry named along METRIC
                                 (ttft_ms for "ttft_ms.p50": false); true when METRIC's first
                                 key names none */
        /* " where PATH<=X,PATH>=Y": a level is eligible only when it meets every one */
        struct objective_limit limits[OBJECTIVE_MAX_LIMITS];
        size_t n_limits;
        bool bad_limits;      /* a where clause that does not read as the above (or too many) */
};

/* Splits text at its first '@' and at " where ". This function can't fail; *ret borrows
 * from text. */
void objective_parse(const char *text, struct objective *ret);

/* The number at path (len bytes; dots reach into objects) in a bench level entry: false when
 * there is none, or it is not a finite number. */
bool objective_entry_value(json_t *entry, const char *path, size_t len, double *ret);
/* Whether a bench level entry meets every constraint of o (true without any). */
bool objective_meets(const struct objective *o, json_t *entry);

#endif
