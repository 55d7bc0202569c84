/* golden.h -- matching an answer against the expected one.
 *
 * Answers are normalised first: surrounding whitespace trimmed, runs of whitespace folded
 * to one space, light markdown removed (**bold**, *em*, `code`, leading "#"/">"/"-"
 * markers), and a trailing full stop dropped. `number` takes the last number in the
 * answer ("17 x 19 = 323" -> 323, "**323**." -> 323, "3,230" -> 3230).
 *
 * equals and contains compare the normalised answer with the normalised value exactly and
 * case-sensitively ("ok" is not "OK"); regex is POSIX extended, searched (not anchored) in
 * the normalised answer; number compares with a relative tolerance of 1e-6. Details and
 * examples: docs/detectors.md.
 */
#ifndef GAUNTLET_GOLDEN_H
#define GAUNTLET_GOLDEN_H

#include <stdbool.h>

#include "checks.h"

/* Caller frees *ret. -ENOMEM only. */
int golden_normalize(const char *s, char **ret);
/* The last number in s, or -ENOENT when there is none. */
int golden_last_number(const char *s, double *ret);
/* Sets *ret_match. -EINVAL for an invalid regex or a non-numeric `number` value; then
 * *ret_error (if non-NULL) gets a one-line reason (caller frees). */
int golden_match(const struct expect *e, const char *answer, bool *ret_match, char **ret_error);

#endif
