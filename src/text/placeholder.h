/* placeholder.h -- filling {model}, {host} and {port} into argument templates.
 *
 * The one substitution rule, for the cells (cells.h: {model} at expansion, {host} and
 * {port} at launch) and for the reports (the command a cell ran): a key is replaced
 * wherever it starts, also inside a longer argument ("http://{host}:{port}"); other text,
 * other braces included, is copied as written. Keys are matched in the order given.
 */
#ifndef GAUNTLET_PLACEHOLDER_H
#define GAUNTLET_PLACEHOLDER_H

#include <stddef.h>

/* s with each keys[i] (which starts with '{') replaced by vals[i]; a NULL vals[i] leaves
 * that key as written. Caller frees; NULL only when out of memory. */
char *placeholder_fill(const char *s, const char *const *keys, const char *const *vals, size_t n);

/* A copy of argv (NULL: an empty vector) with every {host} and {port} filled in; a NULL
 * host leaves {host} as written. *ret is NULL-terminated and the caller's (strv_free).
 * -ENOMEM only. */
int placeholder_fill_argv(char *const *argv, const char *host, int port, char ***ret);

#endif
