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

enum expect_kind {
        EXPECT_NONE,      /* only the detectors judge */
        EXPECT_EQUALS,    /* the normalised answer equals value */
        EXPECT_CONTAINS,  /* the normalised answer contains value */
        EXPECT_REGEX,     /* POSIX extended regex, searched in the normalised answer */
        EXPECT_NUMBER,    /* the last number in the answer equals value numerically */
};

/* What a check's answer must be (a check_spec's `expect:`, checks.h). value is owned by
 * whoever owns the expect (check_spec_release frees it). */
struct expect {
        enum expect_kind kind;
        char *value;
};

/* Caller frees *ret. -ENOMEM only. */
int golden_normalize(const char *s, char **ret);
/* The last number in s, or -ENOENT when there is none. */
int golden_last_number(const char *s, double *ret);
/* Limits on a user's regex before glibc compiles it: regcomp() expands repetitions into
 * copies, so stacked quantifiers ("a+++++") grow exponentially and nested bounds
 * ("(x{1,255}){1,255}") multiply; either can take minutes and gigabytes. */
#define GOLDEN_MAX_REGEX ((size_t)1024) /* bytes of pattern */
#define GOLDEN_MAX_REPEAT_WEIGHT 1000  /* product of the upper bounds of nested {m,n} */

/* 0 when re is within the limits above, else -EINVAL and *ret_error (if non-NULL) gets a
 * reason (caller frees). Says nothing of whether it compiles. */
int golden_regex_check(const char *re, char **ret_error);

/* Sets *ret_match. -EINVAL for an invalid regex or a non-numeric `number` value; then
 * *ret_error (if non-NULL) gets a one-line reason (caller frees). */
int golden_match(const struct expect *e, const char *answer, bool *ret_match, char **ret_error);

#endif
