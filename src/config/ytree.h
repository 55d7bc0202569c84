/* ytree.h -- a small read-only YAML tree with limits, and the "FILE:LINE: message" error.
 *
 * The layer under the YAML loaders (suite.h: check suites; matrix.h: the matrix). It knows
 * YAML and the limits every file shares, never a schema's keys:
 *  1. bytes: size cap (YTREE_MAX_FILE), NUL, control characters and UTF-8 are checked
 *     before libyaml sees the text, so every complaint carries a line number;
 *  2. a tree built from libyaml's events, with the line of every node; aliases are shared
 *     rather than copied, and the node count with aliases expanded is capped
 *     (YTREE_MAX_NODES), so an alias bomb costs nothing;
 *  3. typed reads (y_*), whose type errors are worded for the user.
 *
 * Ownership: a struct ytree owns every node (ytree_release frees them all). Aliases make
 * the tree a DAG, never a cycle; nodes are read-only. Strings a reader hands back through
 * a const char ** point into the tree; through a char ** (or char ***) they are copies the
 * caller owns, and the previous value there is freed.
 *
 * Errors: a struct ytree_ctx collects the first problem only, as one line
 * "NAME:LINE: message" in ctx->error (the loaders hand it to their caller with TAKE_PTR);
 * every function that finds a problem records it and returns -EINVAL, or -ENOMEM when out
 * of memory (ctx->error may then stay NULL). Later problems keep the first message.
 */
#ifndef GAUNTLET_YTREE_H
#define GAUNTLET_YTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "text/buf.h"
#include "base/util.h"

/* Limits every YAML file shares (docs/matrix.md, docs/limits.md). Going past one is an
 * error, never a silent cut. */
#define YTREE_MAX_FILE ((size_t)1 << 20)   /* bytes of YAML (matrix and check suite files) */
#define YTREE_MAX_NODES 100000             /* nodes after expanding aliases: stops alias bombs */
#define YTREE_MAX_ANCHORS 1024             /* distinct &anchors in one file */
#define YTREE_MAX_DEPTH 64                 /* collections inside collections: libyaml's time
                                            * grows with the square of the depth (200 KB of
                                            * '[' took 30 s), a matrix needs about 5 */

/* ---- messages ---- */

struct ytree_ctx {
        const char *name;   /* the file, as the user named it */
        char *error;        /* the first problem: "NAME:LINE: message" */
        char *scratch[8];   /* escaped copies for the message being built (a small ring) */
        unsigned next;
};

void ytree_ctx_release(struct ytree_ctx *c);
/* Records the first problem as "NAME:LINE: message" (line 0 counts as 1); returns -EINVAL,
 * or -ENOMEM when even that fails. */
int ytree_fail(struct ytree_ctx *c, unsigned line, const char *fmt, ...) _printf_(3, 4);
/* User text for a message: control bytes as \xNN, cut at 80 bytes on a character boundary
 * ("..." after). The copy lives until the ctx is released or 8 more calls; "?" when out of
 * memory. */
const char *ytree_esc(struct ytree_ctx *c, const char *s);
/* " (did you mean 'x'?)" for a likely typo of one of cands, else " (known: a, b, c)".
 * Caller frees; NULL only when out of memory. */
char *ytree_hint(const char *s, const char *const *cands, size_t n);
/* "a, b, c" appended to b (for "known: ..." lists). */
void ytree_join_names(struct buf *b, const char *const *names, size_t n);

/* ---- the tree ---- */

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
        enum ykind kind;
        unsigned line;          /* 1-based line where the node starts */
        char *value;            /* scalar text as written, NUL-terminated (never contains NUL) */
        size_t len;
        bool plain;             /* untagged plain scalar: may read as null, bool or number */
        struct ynode **items;   /* sequence items; for maps keys and values interleaved */
        size_t n_items;
        size_t alloc;
        size_t weight;          /* nodes below and including this one, aliases expanded */
};

/* Owns every node; aliases make the tree a DAG, so nodes are freed from this list only. */
struct ytree {
        struct ynode **nodes;
        size_t n_nodes, alloc;
        struct ynode *root;     /* NULL for an empty stream */
};

/* Builds the tree of one YAML document from text (not NUL-terminated; len bytes): the
 * checks of layer 1, a UTF-8 byte order mark skipped, one document only. An empty document
 * (or one that is only null) is an error: "the file is empty". On failure *d holds what was
 * built so far: release it either way. */
int ytree_load(struct ytree_ctx *c, const char *text, size_t len, struct ytree *d);
/* Reads path up to YTREE_MAX_FILE bytes (caller frees *ret). On failure the one-line
 * message goes to *ret_error (when given; caller frees): too big: "NAME:1: the file is too
 * big" and -EINVAL; unreadable: "cannot read 'PATH': reason" and the read's errno. */
int ytree_read_path(const char *path, char **ret, size_t *ret_len, char **ret_error);
void ytree_release(struct ytree *d);

/* ---- typed reads ---- */

/* An absent node (NULL), or a plain scalar "", "~", "null", "Null" or "NULL". */
bool y_null(const struct ynode *n);
/* "a list", "a map", "nothing" or "'text'" (escaped), for type errors. */
const char *y_describe(struct ytree_ctx *c, const struct ynode *n);
/* The value (y_get) or the key node (y_key) of key in map; NULL when absent or map is NULL. */
const struct ynode *y_get(const struct ynode *map, const char *key);
const struct ynode *y_key(const struct ynode *map, const char *key);
/* Every key of map must be in known (NULL-terminated); where names the map in the message,
 * which suggests the closest known key. */
int y_check_keys(struct ytree_ctx *c, const struct ynode *map, const char *const *known, const char *where);
int y_map(struct ytree_ctx *c, const struct ynode *n, const char *what);
int y_seq(struct ytree_ctx *c, const struct ynode *n, const char *what);
/* Any non-null scalar, as written ("8" stays "8", "on" stays "on"). */
int y_scalar(struct ytree_ctx *c, const struct ynode *n, const char *what, const char **ret);
/* The same, copied into *ret. */
int y_string(struct ytree_ctx *c, const struct ynode *n, const char *what, char **ret);
/* A name shown in labels and reports: non-empty, no control characters, and with strict
 * (an axis name: "axis=value" labels) no spaces or '='. */
int y_name(struct ytree_ctx *c, const struct ynode *n, const char *what, bool strict, const char **ret);
/* A plain decimal integer from min to max. */
int y_int(struct ytree_ctx *c, const struct ynode *n, const char *what, long min, long max, int *ret);
/* A plain number from min to 1e9. */
int y_double(struct ytree_ctx *c, const struct ynode *n, const char *what, double min, double *ret);
/* true/True/TRUE/yes/Yes/YES or the same for false/no, unquoted. */
int y_bool(struct ytree_ctx *c, const struct ynode *n, const char *what, bool *ret);
/* A duration above zero (parse_duration, util.h). */
int y_duration(struct ytree_ctx *c, const struct ynode *n, const char *what, usec_t *ret);
/* A list of at most max scalars, as strings (NULL-terminated, copied). */
int y_strv(struct ytree_ctx *c, const struct ynode *n, const char *what, size_t max, char ***ret);
/* A map NAME: value of at most max entries, as "NAME=value" strings (NULL-terminated, copied). */
int y_env(struct ytree_ctx *c, const struct ynode *n, const char *what, size_t max, char ***ret);

#endif
