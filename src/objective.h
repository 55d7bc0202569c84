/* objective.h -- the objective: which figure ranks the cells ("METRIC@N" or "smoke").
 *
 * One parser for the matrix (which refuses what it does not know: matrix.c) and for the
 * reports (which rank by whatever the journal holds: report.c). It splits the text and
 * looks METRIC up in the metrics table (metrics.h); whether that metric may rank cells and
 * which levels were measured is for the caller to judge.
 */
#ifndef GAUNTLET_OBJECTIVE_H
#define GAUNTLET_OBJECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

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
};

/* Splits text at its first '@'. This function can't fail; *ret borrows from text. */
void objective_parse(const char *text, struct objective *ret);

#endif
