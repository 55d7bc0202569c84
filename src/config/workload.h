/* workload.h -- what a journal's figures mean: the bench, the checks, the eval, the probes
 * and the objective of a matrix, as one canonical description and its hash.
 *
 * Two sweeps whose descriptions differ measured different things: a journal holds one
 * workload (docs/journal.md "One workload per journal"), and each attempt records the hash
 * of the one it was measured under.
 *
 * The description is a flat JSON object, one member per setting, named by its matrix key
 * ("bench.output_tokens", "probes.sampling.runs", "eval.set"); values are the settings as
 * loaded, defaults filled in, so that writing a default out changes nothing. Files the
 * workload reads (a dataset, a custom check suite, the eval's questions) are there by a
 * hash of their content. The gauntlet version is not part of it. */
#ifndef GAUNTLET_WORKLOAD_H
#define GAUNTLET_WORKLOAD_H

#include <jansson.h>

#include "config/matrix.h"

/* The description of m's workload (a new object: caller decrefs), its compact text with
 * sorted keys (caller frees) and its hash: FNV-1a 64 of that text, 16 hex digits. Any
 * out-parameter may be NULL. -ENOMEM only. */
int workload_describe(const struct matrix *m, json_t **ret, char **ret_text, char ret_hash[17]);

/* The first setting (in key order) that differs between two descriptions, as one phrase:
 * `bench.output_tokens 8, the matrix now says 256` (a setting only one of them has reads
 * "unset"); with "(and N more)" when others differ too. Strings are JSON-quoted, so the
 * phrase is one safe line. *ret is NULL when they agree (caller frees). old_text and
 * new_text are descriptions' texts; one that does not parse as an object counts as empty.
 * -ENOMEM only. */
int workload_diff(const char *old_text, const char *new_text, char **ret);

#endif
