/* search_int.h -- PRIVATE: what search.c and search_evidence.c share, reading a failure's
 * line against the matrix; included by nothing else (the interface is search.h). */
#ifndef GAUNTLET_SEARCH_INT_H
#define GAUNTLET_SEARCH_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "search/search.h"

/* Whether evidence names flag: its name without leading dashes, '-', '_' and ' ' alike,
 * case ignored, not inside a longer word. Names shorter than 3 characters never match. The
 * same for an axis's words ("K cache"). */
bool search_names_flag(const char *evidence, const char *flag);
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

#endif
