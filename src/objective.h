/* objective.h -- the objective: which figure ranks the cells ("METRIC@N" or "smoke").
 *
 * One parser for the matrix (which refuses what it does not know: matrix.c) and for the
 * reports (which rank by whatever the journal holds: report.c). It only splits the text;
 * which metrics exist and which levels were measured is for the caller to judge.
 */
#ifndef GAUNTLET_OBJECTIVE_H
#define GAUNTLET_OBJECTIVE_H

#include <stdbool.h>
#include <stddef.h>

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
        bool higher_better;   /* false when a dot-separated part of METRIC ends in "_ms" or
                                 "_s" (but not "_per_s"): a time; true otherwise */
};

/* Splits text at its first '@'. This function can't fail; *ret borrows from text. */
void objective_parse(const char *text, struct objective *ret);

#endif
