/* suite.h -- suite files: a YAML list of check specs -> struct check_spec (checks.h).
 *
 * `gauntlet smoke --checks FILE` and the matrix's `checks:` list (matrix.c) use the same
 * parser; the keys are a contract (docs/matrix.md). Whatever loads is usable as is: names
 * are unique, a regex compiles within golden's limits, a `number` is one golden_match reads.
 * The YAML itself, the shared limits and the error line are ytree.h's.
 */
#ifndef GAUNTLET_SUITE_H
#define GAUNTLET_SUITE_H

#include <stddef.h>

#include "gate/checks.h"
#include "gate/eval.h"
#include "config/ytree.h"

#define SUITE_MAX_CHECKS 256               /* specs in one check suite */

/* Loads a suite file: a YAML list of check specs, or a map whose only key `checks:` holds
 * the list. On success the caller owns *ret (checks_free_suite). On failure a negative
 * errno and, in *ret_error, one line (caller frees): "FILE:LINE: message" for anything
 * wrong in the file (-EINVAL), "cannot read 'FILE': reason" when it cannot be read (the
 * read's errno); *ret_error may stay NULL on -ENOMEM. Nothing else happens on failure. */
int suite_load_checks_file(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error);
/* The same from memory; name stands for the file in messages. */
int suite_load_checks_string(const char *text, size_t len, const char *name, struct check_spec **ret,
                             size_t *ret_n, char **ret_error);

/* The list itself, at node n of a tree being read (the matrix's `checks:`): 1 to
 * SUITE_MAX_CHECKS specs with unique names. Errors go to c, as every ytree reader's. */
int suite_parse_checks(struct ytree_ctx *c, const struct ynode *n, struct check_spec **ret, size_t *ret_n);

/* The eval's questions (docs/eval.md): a JSONL file, one JSON object per line,
 * {"prompt": "...", "expect": ...} or {"messages": [{role, content}...], "expect": ...},
 * with an optional "id" (default "line-N"); blank lines are skipped. expect takes the
 * checks' forms: a string (equals), or {"equals"|"contains"|"regex"|"number": value}, a
 * number also as a JSON number. Every question is a chat check, non-streamed. Errors as
 * suite_load_checks_file: "FILE:LINE: message" (-EINVAL), "cannot read 'FILE': reason". */
#define SUITE_MAX_JSONL ((size_t)64 << 20)       /* bytes of an eval file */
#define SUITE_MAX_JSONL_LINE ((size_t)1 << 20)   /* bytes of one of its lines */
int suite_load_jsonl(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error);
int suite_parse_jsonl(const char *text, size_t len, const char *name, struct check_spec **ret, size_t *ret_n,
                      char **ret_error);

#endif
