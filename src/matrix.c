/* matrix.c -- the matrix loader: YAML text -> checked struct matrix -> cells.
 *
 * Three layers, each only talking to the next:
 *  1. bytes: size cap, NUL, control characters and UTF-8 are checked before libyaml sees
 *     the text, so every complaint carries a line number;
 *  2. a small read-only YAML tree built from libyaml events (ynode), with the line of every
 *     node, aliases shared rather than copied, and the expanded node count capped
 *     (MATRIX_MAX_NODES) so an alias bomb costs nothing;
 *  3. the schema: known keys, types, cross references, limits. The first problem found
 *     becomes the one "FILE:LINE: message" line handed back.
 */
#include "matrix.h"

#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "buf.h"
#include "golden.h"
#include "objective.h"
#include "placeholder.h"
#include "utf8.h"

/* ------------------------------------------------------------------------------------ */
/* messages */

struct ctx {
        const char *name;   /* the file, as the user named it */
        char *error;        /* the first problem: "NAME:LINE: message" */
        char *scratch[8];   /* escaped copies for the message being built (a small ring) */
        unsigned next;
};

static void ctx_release(struct ctx *c) {
        for (size_t i = 0; i < ELEMENTSOF(c->scratch); i++)
                free(c->scratch[i]);
        free(c->error);
}

/* User text for a message: control bytes as \xNN, cut at 80 bytes on a character
 * boundary. The copy lives until the ctx is released (or 8 more calls). */
static const char *esc(struct ctx *c, const char *s) {
        enum { CUT = 80 };
        size_t n = strlen(s), take = n;
        if (take > CUT) {
                take = CUT;
                while (take > 0 && ((unsigned char)s[take] & 0xc0) == 0x80)
                        take--;
        }
        char *out = malloc(take * 4 + 4);
        if (!out)
                return "?";
        char *o = out;
        for (size_t i = 0; i < take; i++) {
                unsigned char ch = (unsigned char)s[i];
                if (ch < 0x20 || ch == 0x7f)
                        o += sprintf(o, "\\x%02x", ch);
                else
                        *o++ = (char)ch;
        }
        if (take < n)
                o = stpcpy(o, "...");
        *o = '\0';
        unsigned slot = c->next++ % ELEMENTSOF(c->scratch);
        free(c->scratch[slot]);
        c->scratch[slot] = out;
        return out;
}

/* Records the first problem; returns -EINVAL (or -ENOMEM when even that fails). */
_printf_(3, 4) static int fail(struct ctx *c, unsigned line, const char *fmt, ...) {
        if (c->error)
                return -EINVAL;
        va_list ap;
        char *msg = NULL;
        va_start(ap, fmt);
        int k = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        c->error = strdup_printf("%s:%u: %s", c->name, line ? line : 1, msg);
        free(msg);
        return c->error ? -EINVAL : -ENOMEM;
}

/* Optimal string alignment distance (a swap of two neighbours counts one). Strings past
 * 64 bytes are "far": nobody mistypes a key that long. */
static size_t edit_distance(const char *a, const char *b) {
        enum { L = 64 };
        size_t n = strlen(a), m = strlen(b);
        if (n > L || m > L)
                return SIZE_MAX;
        size_t rows[3][L + 1]; /* rows i-2, i-1 and i, turning */
        for (size_t j = 0; j <= m; j++)
                rows[0][j] = rows[1][j] = j;
        for (size_t i = 1; i <= n; i++) {
                size_t *pp = rows[(i + 1) % 3], *p = rows[(i + 2) % 3], *d = rows[i % 3];
                d[0] = i;
                for (size_t j = 1; j <= m; j++) {
                        size_t cost = a[i - 1] != b[j - 1];
                        size_t v = MIN(p[j] + 1, d[j - 1] + 1);
                        v = MIN(v, p[j - 1] + cost);
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                                v = MIN(v, pp[j - 2] + 1);
                        d[j] = v;
                }
        }
        return rows[n % 3][m];
}

/* The candidate closest to s, if close enough to be a likely typo; else NULL. */
static const char *closest(const char *s, const char *const *cands, size_t n) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
                size_t d = edit_distance(s, cands[i]);
                if (d < best_d) {
                        best_d = d;
                        best = cands[i];
                }
        }
        if (!best)
                return NULL;
        size_t limit = MAX((size_t)1, (strlen(best) + 1) / 3);
        return best_d <= limit ? best : NULL;
}

static size_t strv_count(const char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* ", a, b, c" into b (for "known: ..." lists). */
static void join_names(struct buf *b, const char *const *names, size_t n) {
        for (size_t i = 0; i < n; i++)
                buf_printf(b, "%s%s", i ? ", " : "", names[i]);
}

/* " (did you mean 'x'?)" or " (known: a, b, c)" for a name not among cands. */
static char *hint(const char *s, const char *const *cands, size_t n) {
        const char *best = closest(s, cands, n);
        if (best)
                return strdup_printf(" (did you mean '%s'?)", best);
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        buf_puts(&b, " (known: ");
        join_names(&b, cands, n);
        buf_puts(&b, ")");
        return buf_detach(&b);
}

/* ------------------------------------------------------------------------------------ */
/* bytes */

static unsigned line_at(const char *t, size_t off) {
        unsigned line = 1;
        for (size_t i = 0; i < off; i++)
                line += t[i] == '\n';
        return line;
}

/* Text files only: no NUL, no control characters but tab/CR/LF, valid UTF-8 (no overlong
 * forms, surrogates or code points past U+10FFFF). */
static int check_bytes(struct ctx *c, const char *t, size_t len) {
        unsigned line = 1;
        size_t i = 0;
        while (i < len) {
                unsigned char ch = (unsigned char)t[i];
                if (ch == '\n') {
                        line++;
                        i++;
                        continue;
                }
                if (ch == 0)
                        return fail(c, line, "NUL byte in the file (binary data?)");
                if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f)
                        return fail(c, line, "control character 0x%02x in the file (binary data?)", ch);
                if (ch < 0x80) {
                        i++;
                        continue;
                }
                size_t n = utf8_decode((const unsigned char *)t + i, len - i, NULL, NULL);
                if (n == 0)
                        return fail(c, line, "invalid UTF-8 (byte 0x%02x); save the file as UTF-8", ch);
                i += n;
        }
        return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the YAML tree */

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
struct ydoc {
        struct ynode **nodes;
        size_t n_nodes, alloc;
        struct ynode *root;     /* NULL for an empty stream */
};

static void ydoc_release(struct ydoc *d) {
        for (size_t i = 0; i < d->n_nodes; i++) {
                free(d->nodes[i]->value);
                free(d->nodes[i]->items);
                free(d->nodes[i]);
        }
        free(d->nodes);
        *d = (struct ydoc){0};
}

/* Room for need elements: returns the (maybe moved) array, or NULL with p untouched. */
static void *grow(void *p, size_t *alloc, size_t need, size_t size) {
        if (need <= *alloc)
                return p;
        size_t n = MAX(MAX(*alloc * 2, need), (size_t)8);
        void *q = reallocarray(p, n, size);
        if (q)
                *alloc = n;
        return q;
}

/* GROW(array, alloc, need): 0 or -ENOMEM, array updated in place. */
#define GROW(a, alloc, need)                                                     \
        ({                                                                       \
                void *_g = grow((a), &(alloc), (need), sizeof(*(a)));            \
                _g ? ((a) = _g, 0) : -ENOMEM;                                    \
        })

struct anchor {
        char *name;
        struct ynode *node;
};

struct ybuild {
        struct ctx *c;
        struct ydoc *d;
        struct ynode **stack;      /* open collections */
        char **stack_anchor;       /* their anchors, registered when they close */
        size_t depth, stack_alloc, anchor_stack_alloc;
        struct anchor *anchors;
        size_t n_anchors, anchors_alloc;
        size_t expanded;           /* nodes so far with aliases expanded */
};

static void ybuild_release(struct ybuild *b) {
        for (size_t i = 0; i < b->depth; i++)
                free(b->stack_anchor[i]);
        free(b->stack);
        free(b->stack_anchor);
        for (size_t i = 0; i < b->n_anchors; i++)
                free(b->anchors[i].name);
        free(b->anchors);
}

static int ybuild_count(struct ybuild *b, size_t n, unsigned line) {
        b->expanded += n;
        if (b->expanded > MATRIX_MAX_NODES)
                return fail(b->c, line, "the document is too big: more than %d nodes with aliases expanded",
                            MATRIX_MAX_NODES);
        return 0;
}

static struct ynode *ybuild_node(struct ybuild *b, enum ykind kind, unsigned line) {
        if (GROW(b->d->nodes, b->d->alloc, b->d->n_nodes + 1) < 0)
                return NULL;
        struct ynode *n = calloc(1, sizeof(*n));
        if (!n)
                return NULL;
        n->kind = kind;
        n->line = line;
        n->weight = 1;
        b->d->nodes[b->d->n_nodes++] = n;
        return n;
}

static int ybuild_attach(struct ybuild *b, struct ynode *n) {
        if (b->depth == 0) {
                b->d->root = n;
                return 0;
        }
        struct ynode *p = b->stack[b->depth - 1];
        if (GROW(p->items, p->alloc, p->n_items + 1) < 0)
                return -ENOMEM;
        p->items[p->n_items++] = n;
        p->weight += n->weight;
        return 0;
}

static int ybuild_anchor(struct ybuild *b, const char *name, struct ynode *n) {
        if (!name)
                return 0;
        if (b->n_anchors >= MATRIX_MAX_ANCHORS)
                return fail(b->c, n->line, "too many anchors (more than %d)", MATRIX_MAX_ANCHORS);
        if (GROW(b->anchors, b->anchors_alloc, b->n_anchors + 1) < 0)
                return -ENOMEM;
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        b->anchors[b->n_anchors++] = (struct anchor){copy, n};
        return 0;
}

static int ybuild_alias(struct ybuild *b, const char *name, unsigned line) {
        /* The latest definition wins (YAML allows redefining an anchor). A collection's
         * anchor is registered when it closes, so an alias inside its own anchor is
         * unknown here: no cycles. */
        for (size_t i = b->n_anchors; i-- > 0;)
                if (strcmp(b->anchors[i].name, name) == 0) {
                        int r = ybuild_count(b, b->anchors[i].node->weight, line);
                        if (r < 0)
                                return r;
                        return ybuild_attach(b, b->anchors[i].node);
                }
        return fail(b->c, line, "unknown alias '*%s' (no '&%s' before it)", esc(b->c, name), esc(b->c, name));
}

static bool tag_is(const char *tag, const char *what) {
        return tag && strcmp(tag, what) == 0;
}

static int ybuild_scalar(struct ybuild *b, const yaml_event_t *ev, unsigned line) {
        int r = ybuild_count(b, 1, line);
        if (r < 0)
                return r;
        if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length))
                return fail(b->c, line, "NUL character in a string");
        struct ynode *n = ybuild_node(b, Y_SCALAR, line);
        if (!n)
                return -ENOMEM;
        n->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (!n->value)
                return -ENOMEM;
        n->len = ev->data.scalar.length;
        const char *tag = (const char *)ev->data.scalar.tag;
        /* Quoted or !!str scalars are strings; an explicit !!int/!!bool/!!null/!!float
         * keeps reading as written. */
        n->plain = (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.plain_implicit) ||
                   tag_is(tag, YAML_INT_TAG) || tag_is(tag, YAML_BOOL_TAG) || tag_is(tag, YAML_NULL_TAG) ||
                   tag_is(tag, YAML_FLOAT_TAG);
        r = ybuild_anchor(b, (const char *)ev->data.scalar.anchor, n);
        if (r < 0)
                return r;
        return ybuild_attach(b, n);
}

static int ybuild_open(struct ybuild *b, enum ykind kind, const char *anchor, unsigned line) {
        int r = ybuild_count(b, 1, line);
        if (r < 0)
                return r;
        struct ynode *n = ybuild_node(b, kind, line);
        if (!n)
                return -ENOMEM;
        if (GROW(b->stack, b->stack_alloc, b->depth + 1) < 0 ||
            GROW(b->stack_anchor, b->anchor_stack_alloc, b->depth + 1) < 0)
                return -ENOMEM;
        char *a = NULL;
        if (anchor && !(a = strdup(anchor)))
                return -ENOMEM;
        b->stack[b->depth] = n;
        b->stack_anchor[b->depth] = a;
        b->depth++;
        return 0;
}

static int key_cmp(const void *x, const void *y) {
        const struct ynode *a = *(const struct ynode *const *)x, *b = *(const struct ynode *const *)y;
        int r = memcmp(a->value, b->value, MIN(a->len, b->len));
        if (r)
                return r;
        return (a->len > b->len) - (a->len < b->len);
}

/* Keys must be strings and unique. Sorting keeps this O(n log n) for huge maps. */
static int ymap_check_keys(struct ctx *c, const struct ynode *map) {
        size_t n = map->n_items / 2;
        for (size_t i = 0; i < n; i++)
                if (map->items[2 * i]->kind != Y_SCALAR)
                        return fail(c, map->items[2 * i]->line, "a key must be a plain name, not a %s",
                                    map->items[2 * i]->kind == Y_SEQ ? "list" : "map");
        if (n < 2)
                return 0;
        _cleanup_free_ struct ynode **keys = calloc(n, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                keys[i] = map->items[2 * i];
        qsort(keys, n, sizeof(*keys), key_cmp);
        for (size_t i = 1; i < n; i++)
                if (key_cmp(&keys[i - 1], &keys[i]) == 0) {
                        unsigned a = keys[i - 1]->line, b = keys[i]->line;
                        return fail(c, MAX(a, b), "duplicate key '%s' (also on line %u)",
                                    esc(c, keys[i]->value), MIN(a, b));
                }
        return 0;
}

static int ybuild_close(struct ybuild *b) {
        struct ynode *n = b->stack[b->depth - 1];
        _cleanup_free_ char *anchor = b->stack_anchor[b->depth - 1];
        b->depth--;
        if (n->kind == Y_MAP) {
                int r = ymap_check_keys(b->c, n);
                if (r < 0)
                        return r;
        }
        int r = ybuild_anchor(b, anchor, n);
        if (r < 0)
                return r;
        return ybuild_attach(b, n);
}

static bool line_has_tab(const char *t, size_t len, size_t line0) {
        size_t i = 0;
        for (size_t l = 0; l < line0 && i < len; i++)
                l += t[i] == '\n';
        for (; i < len && t[i] != '\n'; i++)
                if (t[i] == '\t')
                        return true;
        return false;
}

static int yaml_fail(struct ctx *c, const yaml_parser_t *p, const char *t, size_t len) {
        const char *problem = p->problem ? p->problem : "cannot parse";
        unsigned line;
        bool tab = false;
        if (p->error == YAML_READER_ERROR)
                line = line_at(t, MIN(p->problem_offset, len));
        else {
                line = (unsigned)p->problem_mark.line + 1;
                /* tabs cannot indent YAML, and libyaml's words do not say so */
                tab = line_has_tab(t, len, p->problem_mark.line);
        }
        return fail(c, line, "YAML syntax error: %s%s%s%s%s", problem, p->context ? " (" : "",
                    p->context ? p->context : "", p->context ? ")" : "",
                    tab ? "; YAML indents with spaces, not tabs" : "");
}

static int ydoc_load(struct ctx *c, const char *text, size_t len, struct ydoc *d) {
        yaml_parser_t p;
        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
        struct ybuild b = {.c = c, .d = d};
        unsigned docs = 0;
        int r = 0;
        for (bool done = false; !done && r >= 0;) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&p, &ev)) {
                        r = yaml_fail(c, &p, text, len);
                        break;
                }
                unsigned line = (unsigned)ev.start_mark.line + 1;
                switch (ev.type) {
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_DOCUMENT_START_EVENT:
                        if (++docs > 1)
                                r = fail(c, line, "a second YAML document ('---'): one matrix per file");
                        break;
                case YAML_ALIAS_EVENT:
                        r = ybuild_alias(&b, (const char *)ev.data.alias.anchor, line);
                        break;
                case YAML_SCALAR_EVENT:
                        r = ybuild_scalar(&b, &ev, line);
                        break;
                case YAML_SEQUENCE_START_EVENT:
                        r = ybuild_open(&b, Y_SEQ, (const char *)ev.data.sequence_start.anchor, line);
                        break;
                case YAML_MAPPING_START_EVENT:
                        r = ybuild_open(&b, Y_MAP, (const char *)ev.data.mapping_start.anchor, line);
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        r = ybuild_close(&b);
                        break;
                default:
                        break;
                }
                yaml_event_delete(&ev);
        }
        yaml_parser_delete(&p);
        ybuild_release(&b);
        return r;
}

/* ------------------------------------------------------------------------------------ */
/* typed reads of tree nodes */

static bool y_null(const struct ynode *n) {
        if (!n)
                return true;
        if (n->kind != Y_SCALAR || !n->plain)
                return false;
        return n->len == 0 || streq_ptr(n->value, "~") || streq_ptr(n->value, "null") ||
               streq_ptr(n->value, "Null") || streq_ptr(n->value, "NULL");
}

/* "a list", "a map", "nothing", "'text'" for type errors. */
static const char *y_describe(struct ctx *c, const struct ynode *n) {
        if (n->kind == Y_SEQ)
                return "a list";
        if (n->kind == Y_MAP)
                return "a map";
        if (y_null(n))
                return "nothing";
        _cleanup_free_ char *q = strdup_printf("'%s'", n->value);
        return q ? esc(c, q) : "?";
}

static const struct ynode *y_get(const struct ynode *map, const char *key) {
        for (size_t i = 0; map && i + 1 < map->n_items; i += 2)
                if (strcmp(map->items[i]->value, key) == 0)
                        return map->items[i + 1];
        return NULL;
}

static const struct ynode *y_key(const struct ynode *map, const char *key) {
        for (size_t i = 0; map && i + 1 < map->n_items; i += 2)
                if (strcmp(map->items[i]->value, key) == 0)
                        return map->items[i];
        return NULL;
}

/* Every key of map must be in known; where says which map, for the message. */
static int y_check_keys(struct ctx *c, const struct ynode *map, const char *const *known, const char *where) {
        size_t n = strv_count(known);
        for (size_t i = 0; i + 1 < map->n_items; i += 2) {
                const struct ynode *k = map->items[i];
                bool ok = false;
                for (size_t j = 0; j < n && !ok; j++)
                        ok = strcmp(k->value, known[j]) == 0;
                if (ok)
                        continue;
                _cleanup_free_ char *h = hint(k->value, known, n);
                return fail(c, k->line, "unknown key '%s' in %s%s", esc(c, k->value), where, h ? h : "");
        }
        return 0;
}

static int y_map(struct ctx *c, const struct ynode *n, const char *what) {
        if (n->kind != Y_MAP)
                return fail(c, n->line, "%s must be a map, not %s", what, y_describe(c, n));
        return 0;
}

static int y_seq(struct ctx *c, const struct ynode *n, const char *what) {
        if (n->kind != Y_SEQ)
                return fail(c, n->line, "%s must be a list, not %s", what, y_describe(c, n));
        return 0;
}

/* Any non-null scalar, as written ("8" stays "8", "on" stays "on"). */
static int y_scalar(struct ctx *c, const struct ynode *n, const char *what, const char **ret) {
        if (n->kind != Y_SCALAR || y_null(n))
                return fail(c, n->line, "%s must be a string, not %s", what, y_describe(c, n));
        *ret = n->value;
        return 0;
}

static int y_string(struct ctx *c, const struct ynode *n, const char *what, char **ret) {
        const char *s;
        int r = y_scalar(c, n, what, &s);
        if (r < 0)
                return r;
        char *d = strdup(s);
        if (!d)
                return -ENOMEM;
        free(*ret);
        *ret = d;
        return 0;
}

/* A name shown in labels and reports: non-empty, printable, and without '=' or
 * whitespace when used as an axis name ("axis=value" labels). */
static int y_name(struct ctx *c, const struct ynode *n, const char *what, bool strict, const char **ret) {
        const char *s;
        int r = y_scalar(c, n, what, &s);
        if (r < 0)
                return r;
        if (!*s)
                return fail(c, n->line, "%s must not be empty", what);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if (*p < 0x20 || *p == 0x7f || (strict && (*p == '=' || *p == ' ')))
                        return fail(c, n->line, "%s '%s' may not contain %s", what, esc(c, s),
                                    strict ? "spaces, '=' or control characters" : "control characters");
        *ret = s;
        return 0;
}

static int y_int(struct ctx *c, const struct ynode *n, const char *what, long min, long max, int *ret) {
        if (n->kind == Y_SCALAR && n->plain && n->len > 0) {
                char *end;
                errno = 0;
                long v = strtol(n->value, &end, 10);
                if (errno == 0 && *end == '\0' && v >= min && v <= max) {
                        *ret = (int)v;
                        return 0;
                }
        }
        return fail(c, n->line, "%s must be an integer from %ld to %ld, not %s", what, min, max, y_describe(c, n));
}

static int y_double(struct ctx *c, const struct ynode *n, const char *what, double min, double *ret) {
        if (n->kind == Y_SCALAR && n->plain && n->len > 0) {
                char *end;
                errno = 0;
                double v = strtod(n->value, &end);
                if (errno == 0 && *end == '\0' && v >= min && v <= 1e9) {
                        *ret = v;
                        return 0;
                }
        }
        return fail(c, n->line, "%s must be a number of at least %g, not %s", what, min, y_describe(c, n));
}

static int y_bool(struct ctx *c, const struct ynode *n, const char *what, bool *ret) {
        static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES"};
        static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO"};
        if (n->kind == Y_SCALAR && n->plain)
                for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                        if (strcmp(n->value, yes[i]) == 0) {
                                *ret = true;
                                return 0;
                        }
                        if (strcmp(n->value, no[i]) == 0) {
                                *ret = false;
                                return 0;
                        }
                }
        return fail(c, n->line, "%s must be true or false, not %s", what, y_describe(c, n));
}

static int y_duration(struct ctx *c, const struct ynode *n, const char *what, usec_t *ret) {
        usec_t u;
        if (n->kind == Y_SCALAR && !y_null(n) && parse_duration(n->value, &u) == 0 && u > 0) {
                *ret = u;
                return 0;
        }
        return fail(c, n->line, "%s must be a duration above zero like 90s, 20m or 1h, not %s", what,
                    y_describe(c, n));
}

/* A list of scalars as strings. A plain string gets a hint: args are a list. */
static int y_strv(struct ctx *c, const struct ynode *n, const char *what, char ***ret) {
        if (n->kind != Y_SEQ)
                return fail(c, n->line, "%s must be a list like [--flag, value], not %s", what, y_describe(c, n));
        if (n->n_items > MATRIX_MAX_ARGS)
                return fail(c, n->line, "%s has too many items (%zu, at most %d)", what, n->n_items, MATRIX_MAX_ARGS);
        _cleanup_strv_free_ char **v = calloc(n->n_items + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                const char *s;
                int r = y_scalar(c, n->items[i], what, &s);
                if (r < 0)
                        return r;
                if (!(v[i] = strdup(s)))
                        return -ENOMEM;
        }
        strv_free(*ret);
        *ret = TAKE_PTR(v);
        return 0;
}

/* A map NAME: value into "NAME=value" entries (map keys are already unique). */
static int y_env(struct ctx *c, const struct ynode *n, const char *what, char ***ret) {
        int r = y_map(c, n, what);
        if (r < 0)
                return r;
        size_t count = n->n_items / 2;
        if (count > MATRIX_MAX_ENV)
                return fail(c, n->line, "%s has too many variables (%zu, at most %d)", what, count, MATRIX_MAX_ENV);
        _cleanup_strv_free_ char **v = calloc(count + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                const struct ynode *k = n->items[2 * i];
                if (k->len == 0 || strpbrk(k->value, "= \t\r\n"))
                        return fail(c, k->line, "%s: '%s' is not a valid variable name", what, esc(c, k->value));
                const char *val;
                r = y_scalar(c, n->items[2 * i + 1], "an environment value", &val);
                if (r < 0)
                        return r;
                if (!(v[i] = strdup_printf("%s=%s", k->value, val)))
                        return -ENOMEM;
        }
        strv_free(*ret);
        *ret = TAKE_PTR(v);
        return 0;
}

/* Reads the file under the shared limits and builds the tree; empty documents are an
 * error. Errors of reading (not of content) come back as "cannot read 'FILE': ...". */
static int load_text(struct ctx *c, const char *text, size_t len, struct ydoc *d) {
        if (len > MATRIX_MAX_FILE)
                return fail(c, 1, "the file is too big (%zu bytes, at most %zu)", len, MATRIX_MAX_FILE);
        int r = check_bytes(c, text, len);
        if (r < 0)
                return r;
        /* A UTF-8 byte order mark (Windows editors write one): libyaml, told the encoding,
         * would take it for content. */
        if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
                text += 3;
                len -= 3;
        }
        r = ydoc_load(c, text, len, d);
        if (r < 0)
                return r;
        if (!d->root || y_null(d->root))
                return fail(c, 1, "the file is empty");
        return 0;
}

static int read_text(struct ctx *c, const char *path, char **ret, size_t *ret_len) {
        /* One byte past the cap tells "exactly at the cap" from "over it". */
        int r = read_file_capped(path, MATRIX_MAX_FILE + 1, ret, ret_len);
        if (r == -EFBIG)
                return fail(c, 1, "the file is too big (more than %zu bytes)", MATRIX_MAX_FILE);
        if (r < 0) {
                c->error = strdup_printf("cannot read '%s': %s", path, strerror(-r));
                return r;
        }
        return 0;
}

/* ------------------------------------------------------------------------------------ */
/* check specs */

static const char *const check_keys[] = {"name",     "prompt",     "messages", "mode",   "thinking",
                                         "reasoning", "max_tokens", "stream",   "expect", NULL};
static const char *const expect_keys[] = {"equals", "contains", "regex", "number", NULL};
static const char *const roles[] = {"system", "user", "assistant", "developer", "tool", NULL};

static int parse_messages(struct ctx *c, const struct ynode *n, json_t **ret) {
        int r = y_seq(c, n, "messages");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return fail(c, n->line, "messages must not be empty");
        json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                static const char *const keys[] = {"role", "content", NULL};
                const struct ynode *m = n->items[i];
                const char *role = NULL, *content = NULL;
                if ((r = y_map(c, m, "a message")) < 0 || (r = y_check_keys(c, m, keys, "a message")) < 0)
                        goto fail;
                const struct ynode *rn = y_get(m, "role"), *cn = y_get(m, "content");
                if (!rn || !cn) {
                        r = fail(c, m->line, "a message needs both 'role' and 'content'");
                        goto fail;
                }
                if ((r = y_scalar(c, rn, "role", &role)) < 0 || (r = y_scalar(c, cn, "content", &content)) < 0)
                        goto fail;
                bool known = false;
                for (const char *const *k = roles; *k && !known; k++)
                        known = strcmp(*k, role) == 0;
                if (!known) {
                        _cleanup_free_ char *h = hint(role, roles, strv_count(roles));
                        r = fail(c, rn->line, "unknown role '%s'%s", esc(c, role), h ? h : "");
                        goto fail;
                }
                if (json_array_append_new(a, json_pack("{s:s, s:s}", "role", role, "content", content)) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        *ret = a;
        return 0;
fail:
        json_decref(a);
        return r;
}

static int parse_expect(struct ctx *c, const struct ynode *n, struct expect *ret) {
        static const enum expect_kind kinds[] = {EXPECT_EQUALS, EXPECT_CONTAINS, EXPECT_REGEX, EXPECT_NUMBER};
        enum expect_kind kind = EXPECT_EQUALS;
        const struct ynode *v = n;
        if (n->kind == Y_MAP) {
                if (n->n_items != 2)
                        return fail(c, n->line, "expect must be a string or a map with one key (equals, contains, regex or number)");
                int r = y_check_keys(c, n, expect_keys, "expect");
                if (r < 0)
                        return r;
                for (size_t i = 0; expect_keys[i]; i++)
                        if (strcmp(n->items[0]->value, expect_keys[i]) == 0)
                                kind = kinds[i];
                v = n->items[1];
        }
        const char *s;
        int r = y_scalar(c, v, "expect", &s);
        if (r < 0)
                return r;
        if (kind == EXPECT_REGEX) {
                _cleanup_free_ char *why = NULL;
                if (golden_regex_check(s, &why) < 0)
                        return fail(c, v->line, "expect: regular expression '%s' refused: %s", esc(c, s),
                                    why ? why : "too complex");
                regex_t re;
                int e = regcomp(&re, s, REG_EXTENDED | REG_NOSUB);
                if (e != 0) {
                        char msg[128]; /* regerror's own text, cut to fit */
                        regerror(e, &re, msg, sizeof(msg));
                        return fail(c, v->line, "expect: invalid regular expression '%s': %s", esc(c, s), msg);
                }
                regfree(&re);
        } else if (kind == EXPECT_NUMBER) {
                /* golden_match's own reading of the value, so what loads also matches at
                 * run time (strtod took ".23", "0x1p3" and "inf", which golden refuses) */
                struct expect probe = {EXPECT_NUMBER, (char *)s};
                bool match;
                int e = golden_match(&probe, "0", &match, NULL);
                if (e == -ENOMEM)
                        return e;
                if (e < 0)
                        return fail(c, v->line, "expect: number needs a number, not '%s'", esc(c, s));
        }
        char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        ret->kind = kind;
        ret->value = copy;
        return 0;
}

static int parse_check(struct ctx *c, const struct ynode *n, struct check_spec *spec) {
        int r = y_map(c, n, "a check");
        if (r < 0)
                return r;
        if ((r = y_check_keys(c, n, check_keys, "a check")) < 0)
                return r;
        const struct ynode *v;
        const char *name;
        if (!(v = y_get(n, "name")))
                return fail(c, n->line, "a check needs a 'name'");
        if ((r = y_name(c, v, "a check name", false, &name)) < 0)
                return r;
        if (!(spec->name = strdup(name)))
                return -ENOMEM;

        spec->mode = CHECK_CHAT;
        if ((v = y_get(n, "mode"))) {
                static const char *const modes[] = {"chat", "completion", "models", NULL};
                const char *s;
                if ((r = y_scalar(c, v, "mode", &s)) < 0)
                        return r;
                if (streq_ptr(s, "chat"))
                        spec->mode = CHECK_CHAT;
                else if (streq_ptr(s, "completion") || streq_ptr(s, "completions"))
                        spec->mode = CHECK_COMPLETION;
                else if (streq_ptr(s, "models"))
                        spec->mode = CHECK_MODELS;
                else {
                        _cleanup_free_ char *h = hint(s, modes, 3);
                        return fail(c, v->line, "unknown mode '%s'%s", esc(c, s), h ? h : "");
                }
        }

        const struct ynode *pn = y_get(n, "prompt"), *mn = y_get(n, "messages");
        if (spec->mode == CHECK_MODELS) {
                if (pn || mn || y_get(n, "expect"))
                        return fail(c, n->line, "check '%s': mode models takes no prompt, messages or expect",
                                    esc(c, name));
        } else if (pn && mn)
                return fail(c, mn->line, "check '%s': give prompt or messages, not both", esc(c, name));
        else if (!pn && !mn)
                return fail(c, n->line, "check '%s' needs a prompt (or messages)", esc(c, name));
        else if (mn && spec->mode != CHECK_CHAT)
                return fail(c, mn->line, "check '%s': messages need mode chat", esc(c, name));
        if (pn && (r = y_string(c, pn, "prompt", &spec->prompt)) < 0)
                return r;
        if (mn && (r = parse_messages(c, mn, &spec->messages)) < 0)
                return r;

        spec->thinking = THINKING_UNSET;
        if ((v = y_get(n, "thinking"))) {
                bool b;
                if ((r = y_bool(c, v, "thinking", &b)) < 0)
                        return r;
                spec->thinking = b ? THINKING_ON : THINKING_OFF;
        }
        spec->require_reasoning = spec->thinking == THINKING_ON;
        if ((v = y_get(n, "reasoning"))) {
                if ((r = y_bool(c, v, "reasoning", &spec->require_reasoning)) < 0)
                        return r;
                if (spec->require_reasoning && spec->thinking == THINKING_OFF)
                        return fail(c, v->line, "check '%s': reasoning: true needs thinking on", esc(c, name));
        }
        if ((v = y_get(n, "max_tokens")) && (r = y_int(c, v, "max_tokens", 1, 1000000, &spec->max_tokens)) < 0)
                return r;

        spec->stream = spec->mode == CHECK_MODELS ? STREAM_NO : STREAM_BOTH;
        if ((v = y_get(n, "stream"))) {
                bool b;
                if (v->kind == Y_SCALAR && streq_ptr(v->value, "both"))
                        spec->stream = STREAM_BOTH;
                else if (v->kind == Y_SCALAR && v->plain && y_bool(c, v, "stream", &b) == 0)
                        spec->stream = b ? STREAM_YES : STREAM_NO;
                else {
                        free(c->error); /* y_bool's message is the wrong one here */
                        c->error = NULL;
                        return fail(c, v->line, "stream must be true, false or both, not %s", y_describe(c, v));
                }
        }
        if ((v = y_get(n, "expect")) && (r = parse_expect(c, v, &spec->expect)) < 0)
                return r;
        return 0;
}

static int parse_check_list(struct ctx *c, const struct ynode *n, struct check_spec **ret, size_t *ret_n) {
        int r = y_seq(c, n, "checks");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return fail(c, n->line, "the check list is empty");
        if (n->n_items > MATRIX_MAX_CHECKS)
                return fail(c, n->line, "too many checks (%zu, at most %d)", n->n_items, MATRIX_MAX_CHECKS);
        struct check_spec *specs = calloc(n->n_items, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                r = parse_check(c, n->items[i], &specs[i]);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (strcmp(specs[j].name, specs[i].name) == 0)
                                r = fail(c, n->items[i]->line, "check name '%s' appears twice", esc(c, specs[i].name));
                if (r < 0) {
                        checks_free_suite(specs, n->n_items);
                        return r;
                }
        }
        *ret = specs;
        *ret_n = n->n_items;
        return 0;
}

int checks_load_string(const char *text, size_t len, const char *name, struct check_spec **ret, size_t *ret_n,
                       char **ret_error) {
        struct ctx c = {.name = name};
        struct ydoc d = {0};
        int r = load_text(&c, text, len, &d);
        const struct ynode *list = d.root;
        if (r >= 0 && list->kind == Y_MAP) {
                static const char *const keys[] = {"checks", NULL};
                r = y_check_keys(&c, list, keys, "a check suite");
                if (r >= 0 && !(list = y_get(d.root, "checks")))
                        r = fail(&c, d.root->line, "a check suite needs 'checks:' with a list");
        }
        if (r >= 0)
                r = parse_check_list(&c, list, ret, ret_n);
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(c.error);
        ydoc_release(&d);
        ctx_release(&c);
        return r;
}

int checks_load_file(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error) {
        struct ctx c = {.name = path};
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_text(&c, path, &text, &len);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ctx_release(&c);
                return r;
        }
        ctx_release(&c);
        return checks_load_string(text, len, path, ret, ret_n, ret_error);
}

/* ------------------------------------------------------------------------------------ */
/* the matrix */

static const char *const *cell_template(const struct matrix *m);

static const char *const top_keys[] = {
        "engine", "model",    "command",  "args",   "env",     "host",      "port",
        "tp",     "workdir",  "startup_timeout", "request_timeout", "stop_timeout", "memory_timeout", "gpus_per_cell", "axes",
        "strategy", "baseline", "exclude", "checks", "bench",   "objective", "emit",
        NULL,
};
static const char *const metrics[] = {"output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput",
                                      NULL};

static void axis_value_release(struct axis_value *v) {
        free(v->name);
        strv_free(v->args);
        strv_free(v->env);
}

static bool strv_has_text(const char *const *v, const char *needle) {
        for (size_t i = 0; v && v[i]; i++)
                if (strstr(v[i], needle))
                        return true;
        return false;
}

static int parse_engine(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct profile *const *all = profile_all();
        const char *names[16];
        size_t n = 0;
        for (; all[n] && n < ELEMENTSOF(names); n++)
                names[n] = all[n]->name;
        const struct ynode *v = y_get(root, "engine");
        if (!v) {
                _cleanup_buf_ struct buf b;
                buf_init(&b, 4096);
                join_names(&b, names, n);
                return fail(c, root->line, "missing 'engine' (one of: %s)", buf_str(&b));
        }
        const char *s;
        int r = y_scalar(c, v, "engine", &s);
        if (r < 0)
                return r;
        if (!(m->profile = profile_find(s))) {
                _cleanup_free_ char *h = hint(s, names, n);
                return fail(c, v->line, "unknown engine '%s'%s", esc(c, s), h ? h : "");
        }
        return (m->engine = strdup(m->profile->name)) ? 0 : -ENOMEM;
}

static int parse_command(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "command"), *mv = y_get(root, "model");
        int r;
        bool generic = strcmp(m->engine, "generic") == 0;
        if (v && !generic)
                return fail(c, y_key(root, "command")->line,
                            "command is only for engine: generic (engine '%s' has its own)", m->engine);
        if (generic && !v)
                return fail(c, root->line, "engine generic needs 'command:' (a list with {port} in it)");
        if (v) {
                if ((r = y_strv(c, v, "command", &m->command)) < 0)
                        return r;
                if (!m->command[0])
                        return fail(c, v->line, "command must not be empty");
                if (!strv_has_text((const char *const *)m->command, "{port}"))
                        return fail(c, v->line, "command must contain {port} (gauntlet picks the port)");
        }
        if (mv && (r = y_string(c, mv, "model", &m->model)) < 0)
                return r;
        if (!m->model) {
                if (m->command && strv_has_text((const char *const *)m->command, "{model}"))
                        return fail(c, v->line, "command uses {model} but no 'model:' is given");
                if (!m->command && strv_has_text(m->profile->command, "{model}"))
                        return fail(c, y_get(root, "engine")->line, "engine '%s' needs 'model:'", m->engine);
        }
        return 0;
}

/* The TP size written in args: "--tp 8", "--tp=8", or the same with --tp-size. */
static int args_tp(const struct matrix *m) {
        const char *flags[] = {m->profile->tp_flag, "--tp-size"};
        for (size_t i = 0; m->args && m->args[i]; i++)
                for (size_t f = 0; f < ELEMENTSOF(flags); f++) {
                        if (!flags[f])
                                continue;
                        const char *val = NULL;
                        size_t fl = strlen(flags[f]);
                        if (strcmp(m->args[i], flags[f]) == 0)
                                val = m->args[i + 1];
                        else if (strncmp(m->args[i], flags[f], fl) == 0 && m->args[i][fl] == '=')
                                val = m->args[i] + fl + 1;
                        if (!val)
                                continue;
                        char *end;
                        long t = strtol(val, &end, 10);
                        if (*val && *end == '\0' && t > 0 && t <= 1024)
                                return (int)t;
                }
        return 0;
}

static int parse_base(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v;
        int r;
        if ((v = y_get(root, "args")) && (r = y_strv(c, v, "args", &m->args)) < 0)
                return r;
        if ((v = y_get(root, "env")) && (r = y_env(c, v, "env", &m->env)) < 0)
                return r;
        if (!(m->host = strdup("127.0.0.1")))
                return -ENOMEM;
        if ((v = y_get(root, "host"))) {
                if ((r = y_string(c, v, "host", &m->host)) < 0)
                        return r;
                if (!*m->host || strpbrk(m->host, " \t/"))
                        return fail(c, v->line, "host '%s' is not a host name or address", esc(c, m->host));
        }
        if ((v = y_get(root, "port")) && (r = y_int(c, v, "port", 0, 65535, &m->port)) < 0)
                return r;
        if ((v = y_get(root, "workdir")) && (r = y_string(c, v, "workdir", &m->workdir)) < 0)
                return r;
        int from_args = args_tp(m);
        m->tp = from_args;
        if ((v = y_get(root, "tp"))) {
                if ((r = y_int(c, v, "tp", 1, 1024, &m->tp)) < 0)
                        return r;
                if (from_args && from_args != m->tp)
                        return fail(c, v->line, "tp: %d disagrees with the %d in args", m->tp, from_args);
        }
        m->startup_timeout = 20 * 60 * USEC_PER_SEC;
        m->request_timeout = 5 * 60 * USEC_PER_SEC;
        m->stop_timeout = 30 * USEC_PER_SEC;
        if ((v = y_get(root, "startup_timeout")) &&
            (r = y_duration(c, v, "startup_timeout", &m->startup_timeout)) < 0)
                return r;
        if ((v = y_get(root, "request_timeout")) &&
            (r = y_duration(c, v, "request_timeout", &m->request_timeout)) < 0)
                return r;
        if ((v = y_get(root, "stop_timeout")) && (r = y_duration(c, v, "stop_timeout", &m->stop_timeout)) < 0)
                return r;
        m->gpus_per_cell = m->tp;
        if ((v = y_get(root, "gpus_per_cell")) && (r = y_int(c, v, "gpus_per_cell", 0, 1024, &m->gpus_per_cell)) < 0)
                return r;
        m->memory_timeout = 2 * 60 * USEC_PER_SEC;
        if ((v = y_get(root, "memory_timeout")) &&
            (r = y_duration(c, v, "memory_timeout", &m->memory_timeout)) < 0)
                return r;
        return 0;
}

static int parse_value(struct ctx *c, const struct matrix *m, const struct axis *a, const struct ynode *n,
                       struct axis_value *val) {
        int r;
        const char *name;
        if (n->kind == Y_SCALAR) {
                if ((r = y_name(c, n, "a value", false, &name)) < 0)
                        return r;
                if (!a->flag)
                        return fail(c, n->line,
                                    "axis '%s' has no flag, so value '%s' must be a map {name, args, env}",
                                    esc(c, a->name), esc(c, name));
                if (!(val->name = strdup(name)))
                        return -ENOMEM;
                if (endswith(a->flag, "="))
                        r = strv_consume(&val->args, strdup_printf("%s%s", a->flag, name));
                else if ((r = strv_push(&val->args, a->flag)) >= 0)
                        r = strv_push(&val->args, name);
                if (r < 0)
                        return r;
                val->is_default = profile_is_default_value(m->profile, name);
                return 0;
        }
        if (n->kind != Y_MAP)
                return fail(c, n->line, "a value of axis '%s' must be a name or a map {name, args, env}, not a list",
                            esc(c, a->name));
        static const char *const keys[] = {"name", "args", "env", "default", NULL};
        if ((r = y_check_keys(c, n, keys, "an axis value")) < 0)
                return r;
        const struct ynode *v = y_get(n, "name");
        if (!v)
                return fail(c, n->line, "a value of axis '%s' needs a 'name'", esc(c, a->name));
        if ((r = y_name(c, v, "a value name", false, &name)) < 0)
                return r;
        if (!(val->name = strdup(name)))
                return -ENOMEM;
        if ((v = y_get(n, "args")) && (r = y_strv(c, v, "args", &val->args)) < 0)
                return r;
        if (!val->args && !(val->args = calloc(1, sizeof(char *))))
                return -ENOMEM;
        if ((v = y_get(n, "env")) && (r = y_env(c, v, "env", &val->env)) < 0)
                return r;
        val->is_default = profile_is_default_value(m->profile, name);
        if ((v = y_get(n, "default")) && (r = y_bool(c, v, "default", &val->is_default)) < 0)
                return r;
        return 0;
}

static int parse_axes(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *axes = y_get(root, "axes");
        if (!axes)
                return 0;
        const struct ynode *key = y_key(root, "axes");
        int r;
        if (y_null(axes) || (axes->kind == Y_MAP && axes->n_items == 0))
                return fail(c, key->line, "axes is empty (leave it out for a single configuration)");
        if ((r = y_map(c, axes, "axes")) < 0)
                return r;
        size_t n = axes->n_items / 2;
        if (n > MATRIX_MAX_AXES)
                return fail(c, axes->line, "too many axes (%zu, at most %d)", n, MATRIX_MAX_AXES);
        if (!(m->axes = calloc(n, sizeof(*m->axes))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct ynode *k = axes->items[2 * i], *body = axes->items[2 * i + 1];
                struct axis *a = &m->axes[i];
                m->n_axes = i + 1;
                const char *name;
                if ((r = y_name(c, k, "an axis name", true, &name)) < 0)
                        return r;
                if (!(a->name = strdup(name)))
                        return -ENOMEM;
                _cleanup_free_ char *what = strdup_printf("axis '%s'", esc(c, name));
                if (!what)
                        return -ENOMEM;
                if ((r = y_map(c, body, what)) < 0)
                        return r;
                static const char *const keys[] = {"flag", "values", NULL};
                if ((r = y_check_keys(c, body, keys, what)) < 0)
                        return r;
                const struct ynode *v;
                if ((v = y_get(body, "flag"))) {
                        if ((r = y_string(c, v, "flag", &a->flag)) < 0)
                                return r;
                        if (!*a->flag)
                                return fail(c, v->line, "flag must not be empty");
                }
                if (!(v = y_get(body, "values")))
                        return fail(c, body->line, "%s needs 'values:'", what);
                if (y_null(v) || (v->kind == Y_SEQ && v->n_items == 0))
                        return fail(c, v->line, "%s has no values", what);
                if ((r = y_seq(c, v, "values")) < 0)
                        return r;
                if (v->n_items > MATRIX_MAX_VALUES)
                        return fail(c, v->line, "%s has too many values (%zu, at most %d)", what, v->n_items,
                                    MATRIX_MAX_VALUES);
                if (!(a->values = calloc(v->n_items, sizeof(*a->values))))
                        return -ENOMEM;
                for (size_t j = 0; j < v->n_items; j++) {
                        a->n_values = j + 1;
                        if ((r = parse_value(c, m, a, v->items[j], &a->values[j])) < 0)
                                return r;
                        for (size_t p = 0; p < j; p++)
                                if (strcmp(a->values[p].name, a->values[j].name) == 0)
                                        return fail(c, v->items[j]->line, "%s has value '%s' twice", what,
                                                    esc(c, a->values[j].name));
                }
        }
        return 0;
}

static int find_axis(const struct matrix *m, const char *name) {
        for (size_t i = 0; i < m->n_axes; i++)
                if (strcmp(m->axes[i].name, name) == 0)
                        return (int)i;
        return -1;
}

/* A {axis: value} map into one value index per axis (-1 where the map names none). */
static int parse_choice(struct ctx *c, const struct matrix *m, const struct ynode *n, const char *what,
                        ssize_t *ret) {
        int r = y_map(c, n, what);
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return fail(c, n->line, "%s must name at least one axis", what);
        _cleanup_free_ const char **names = calloc(MAX(m->n_axes, (size_t)1), sizeof(*names));
        _cleanup_free_ const char **vnames = calloc(MATRIX_MAX_VALUES, sizeof(*vnames));
        if (!names || !vnames)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_axes; i++) {
                names[i] = m->axes[i].name;
                ret[i] = -1;
        }
        for (size_t i = 0; i + 1 < n->n_items; i += 2) {
                const struct ynode *k = n->items[i], *v = n->items[i + 1];
                int ai = find_axis(m, k->value);
                if (ai < 0) {
                        _cleanup_free_ char *h = m->n_axes ? hint(k->value, names, m->n_axes) : NULL;
                        return fail(c, k->line, "%s names axis '%s', which is not in axes%s", what,
                                    esc(c, k->value), h ? h : "");
                }
                const struct axis *a = &m->axes[ai];
                const char *s;
                if ((r = y_scalar(c, v, "a value name", &s)) < 0)
                        return r;
                ssize_t vi = -1;
                for (size_t j = 0; j < a->n_values; j++) {
                        vnames[j] = a->values[j].name;
                        if (strcmp(a->values[j].name, s) == 0)
                                vi = (ssize_t)j;
                }
                if (vi < 0) {
                        _cleanup_free_ char *h = hint(s, vnames, a->n_values);
                        return fail(c, v->line, "axis '%s' has no value '%s'%s", esc(c, a->name), esc(c, s),
                                    h ? h : "");
                }
                ret[ai] = vi;
        }
        return 0;
}

static int parse_strategy(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "strategy");
        int r;
        m->strategy = STRATEGY_GRID;
        if (v) {
                static const char *const names[] = {"grid", "one-at-a-time", NULL};
                const char *s;
                if ((r = y_scalar(c, v, "strategy", &s)) < 0)
                        return r;
                if (strcmp(s, "grid") == 0)
                        m->strategy = STRATEGY_GRID;
                else if (strcmp(s, "one-at-a-time") == 0)
                        m->strategy = STRATEGY_ONE_AT_A_TIME;
                else {
                        _cleanup_free_ char *h = hint(s, names, 2);
                        return fail(c, v->line, "unknown strategy '%s'%s", esc(c, s), h ? h : "");
                }
        }
        const struct ynode *b = y_get(root, "baseline");
        if (b) {
                if (m->n_axes == 0)
                        return fail(c, b->line, "baseline needs axes");
                _cleanup_free_ ssize_t *choice = calloc(m->n_axes, sizeof(*choice));
                if (!choice)
                        return -ENOMEM;
                if ((r = parse_choice(c, m, b, "baseline", choice)) < 0)
                        return r;
                for (size_t i = 0; i < m->n_axes; i++)
                        if (choice[i] < 0)
                                return fail(c, b->line, "baseline must name every axis; '%s' is missing",
                                            esc(c, m->axes[i].name));
                if (!(m->baseline = calloc(m->n_axes, sizeof(*m->baseline))))
                        return -ENOMEM;
                for (size_t i = 0; i < m->n_axes; i++)
                        m->baseline[i] = (size_t)choice[i];
        } else if (m->strategy == STRATEGY_ONE_AT_A_TIME && m->n_axes > 0)
                return fail(c, v->line, "strategy one-at-a-time needs a baseline naming a value of every axis");

        const struct ynode *ex = y_get(root, "exclude");
        if (ex && !y_null(ex)) {
                if ((r = y_seq(c, ex, "exclude")) < 0)
                        return r;
                if (ex->n_items && m->n_axes == 0)
                        return fail(c, ex->line, "exclude needs axes");
                if (ex->n_items > MATRIX_MAX_EXCLUDES)
                        return fail(c, ex->line, "too many exclude rules (%zu, at most %d)", ex->n_items,
                                    MATRIX_MAX_EXCLUDES);
                if (!(m->excludes = calloc(MAX(ex->n_items, (size_t)1), sizeof(*m->excludes))))
                        return -ENOMEM;
                for (size_t i = 0; i < ex->n_items; i++) {
                        if (!(m->excludes[i].value = calloc(m->n_axes, sizeof(ssize_t))))
                                return -ENOMEM;
                        m->n_excludes = i + 1;
                        if ((r = parse_choice(c, m, ex->items[i], "an exclude rule", m->excludes[i].value)) < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_bench(struct ctx *c, const struct ynode *root, struct matrix *m) {
        static const int default_levels[] = {1, 8, 32};
        struct bench_spec *b = &m->bench;
        *b = (struct bench_spec){.input_tokens = 1024, .output_tokens = 256, .requests = 64, .warmup = 2, .chat = true};
        const struct ynode *n = y_get(root, "bench"), *v;
        int r;
        m->has_bench = n && !y_null(n);
        if (m->has_bench) {
                static const char *const keys[] = {"concurrency", "input_tokens", "output_tokens", "requests", "warmup",
                                                   "rate",        "duration",     "endpoint",      NULL};
                if ((r = y_map(c, n, "bench")) < 0 || (r = y_check_keys(c, n, keys, "bench")) < 0)
                        return r;
                if ((v = y_get(n, "concurrency"))) {
                        if (v->kind == Y_SEQ && v->n_items == 0)
                                return fail(c, v->line, "bench.concurrency is empty; give levels like [1, 8, 32]");
                        if (v->kind != Y_SEQ)
                                return fail(c, v->line, "bench.concurrency must be a list of positive integers like [1, 8, 32], not %s",
                                            y_describe(c, v));
                        if (v->n_items > MATRIX_MAX_LEVELS)
                                return fail(c, v->line, "bench.concurrency has too many levels (%zu, at most %d)",
                                            v->n_items, MATRIX_MAX_LEVELS);
                        if (!(b->concurrency = calloc(v->n_items, sizeof(int))))
                                return -ENOMEM;
                        for (size_t i = 0; i < v->n_items; i++) {
                                if ((r = y_int(c, v->items[i], "a concurrency level", 1, 100000, &b->concurrency[i])) < 0)
                                        return r;
                                for (size_t j = 0; j < i; j++)
                                        if (b->concurrency[j] == b->concurrency[i])
                                                return fail(c, v->items[i]->line, "concurrency %d appears twice",
                                                            b->concurrency[i]);
                                b->n_concurrency = i + 1;
                        }
                }
                if ((v = y_get(n, "input_tokens")) && (r = y_int(c, v, "input_tokens", 0, 10000000, &b->input_tokens)) < 0)
                        return r;
                if ((v = y_get(n, "output_tokens")) &&
                    (r = y_int(c, v, "output_tokens", 1, 10000000, &b->output_tokens)) < 0)
                        return r;
                if ((v = y_get(n, "warmup")) && (r = y_int(c, v, "warmup", 0, 100000, &b->warmup)) < 0)
                        return r;
                if ((v = y_get(n, "rate")) && (r = y_double(c, v, "rate", 0, &b->rate)) < 0)
                        return r;
                const struct ynode *req = y_get(n, "requests"), *dur = y_get(n, "duration");
                if (req && dur)
                        return fail(c, dur->line, "bench: give requests or duration, not both");
                if (req && (r = y_int(c, req, "requests", 1, 10000000, &b->requests)) < 0)
                        return r;
                if (dur) {
                        if ((r = y_duration(c, dur, "duration", &b->duration)) < 0)
                                return r;
                        b->requests = 0;
                }
                if ((v = y_get(n, "endpoint"))) {
                        static const char *const eps[] = {"chat", "completions", NULL};
                        const char *s;
                        if ((r = y_scalar(c, v, "endpoint", &s)) < 0)
                                return r;
                        if (strcmp(s, "chat") == 0)
                                b->chat = true;
                        else if (strcmp(s, "completions") == 0 || strcmp(s, "completion") == 0)
                                b->chat = false;
                        else {
                                _cleanup_free_ char *h = hint(s, eps, 2);
                                return fail(c, v->line, "unknown endpoint '%s'%s", esc(c, s), h ? h : "");
                        }
                }
        }
        if (!b->concurrency) {
                if (!(b->concurrency = malloc(sizeof(default_levels))))
                        return -ENOMEM;
                memcpy(b->concurrency, default_levels, sizeof(default_levels));
                b->n_concurrency = ELEMENTSOF(default_levels);
        }

        if (!(m->objective = strdup(OBJECTIVE_DEFAULT)))
                return -ENOMEM;
        if ((v = y_get(root, "objective"))) {
                if ((r = y_string(c, v, "objective", &m->objective)) < 0)
                        return r;
                struct objective o;
                objective_parse(m->objective, &o);
                if (!o.smoke) {
                        _cleanup_free_ char *metric = strndup(o.metric, o.metric_len);
                        if (!metric)
                                return -ENOMEM;
                        bool known = false;
                        for (size_t i = 0; metrics[i] && !known; i++)
                                known = strcmp(metrics[i], metric) == 0;
                        if (!known) {
                                _cleanup_free_ char *h = hint(metric, metrics, strv_count(metrics));
                                return fail(c, v->line, "objective: unknown metric '%s'%s", esc(c, metric), h ? h : "");
                        }
                        long level = o.concurrency;
                        if (level < 1 || level > 100000)
                                return fail(c, v->line,
                                            "objective must be METRIC@CONCURRENCY (e.g. output_tokens_per_s@1) or smoke, not '%s'",
                                            esc(c, m->objective));
                        bool found = false;
                        for (size_t i = 0; i < b->n_concurrency && !found; i++)
                                found = b->concurrency[i] == level;
                        if (!found)
                                return fail(c, v->line, "objective is measured at concurrency %ld, which bench.concurrency%s does not include",
                                            level, m->has_bench ? "" : " (default [1, 8, 32])");
                }
        }

        m->emit = EMIT_SYSTEMD | EMIT_SCRIPT;
        if ((v = y_get(root, "emit"))) {
                static const char *const kinds[] = {"systemd", "script", NULL};
                if (y_null(v)) {
                        m->emit = 0;
                        return 0;
                }
                size_t count = v->kind == Y_SEQ ? v->n_items : 1;
                m->emit = 0;
                for (size_t i = 0; i < count; i++) {
                        const struct ynode *e = v->kind == Y_SEQ ? v->items[i] : v;
                        const char *s;
                        if ((r = y_scalar(c, e, "emit", &s)) < 0)
                                return r;
                        if (strcmp(s, "systemd") == 0)
                                m->emit |= EMIT_SYSTEMD;
                        else if (strcmp(s, "script") == 0)
                                m->emit |= EMIT_SCRIPT;
                        else {
                                _cleanup_free_ char *h = hint(s, kinds, 2);
                                return fail(c, e->line, "emit: unknown output '%s'%s", esc(c, s), h ? h : "");
                        }
                }
        }
        return 0;
}

static int parse_checks(struct ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "checks");
        m->checks_default = true;
        if (!v || y_null(v))
                return 0;
        if (v->kind == Y_SCALAR) {
                if (strcmp(v->value, "default") == 0)
                        return 0;
                return fail(c, v->line, "checks must be 'default' or a list of checks, not %s", y_describe(c, v));
        }
        m->checks_default = false;
        return parse_check_list(c, v, &m->checks, &m->n_checks);
}

static size_t cell_count(const struct matrix *m) {
        if (m->strategy == STRATEGY_ONE_AT_A_TIME) {
                size_t n = 1;
                for (size_t i = 0; i < m->n_axes; i++)
                        n += m->axes[i].n_values - 1;
                return n;
        }
        size_t n = 1;
        for (size_t i = 0; i < m->n_axes; i++) {
                n *= m->axes[i].n_values;
                if (n > MATRIX_MAX_CELLS)
                        return MATRIX_MAX_CELLS + 1; /* values are capped, so no overflow first */
        }
        return n;
}

static int cell_id_cmp(const void *x, const void *y) {
        const struct cell *a = *(const struct cell *const *)x, *b = *(const struct cell *const *)y;
        return strcmp(a->id, b->id);
}

/* Two cells with one id would be one configuration under two names: the journal could not
 * tell them apart. It happens when axis values change nothing (a map value without args). */
static int check_unique_cells(struct ctx *c, const struct ynode *root, const struct matrix *m) {
        struct cell *cells = NULL;
        size_t n = 0;
        int r = matrix_expand(m, &cells, &n);
        if (r < 0)
                return r;
        struct cell **sorted = calloc(n, sizeof(*sorted));
        if (!sorted) {
                cells_free(cells, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                sorted[i] = &cells[i];
        qsort(sorted, n, sizeof(*sorted), cell_id_cmp);
        for (size_t i = 1; i < n && r >= 0; i++)
                if (strcmp(sorted[i - 1]->id, sorted[i]->id) == 0) {
                        _cleanup_free_ char *a = cell_label(m, sorted[i - 1]);
                        _cleanup_free_ char *b = cell_label(m, sorted[i]);
                        if (!a || !b)
                                r = -ENOMEM;
                        else
                                r = fail(c, y_key(root, "axes")->line,
                                         "cells '%s' and '%s' give the same command and environment; make each value change something",
                                         esc(c, a), esc(c, b));
                }
        free(sorted);
        cells_free(cells, n);
        return r;
}

static size_t count_occurrences(const char *s, const char *needle) {
        size_t n = 0, l = strlen(needle);
        for (const char *p = strstr(s, needle); p; p = strstr(p + l, needle))
                n++;
        return n;
}

static size_t text_bytes(char *const *v, size_t model_len) {
        size_t b = 0;
        for (size_t i = 0; v && v[i]; i++)
                b += strlen(v[i]) + 1 + count_occurrences(v[i], "{model}") * model_len;
        return b;
}

/* The largest cell any combination can make stays within MATRIX_MAX_ARGS, MATRIX_MAX_ENV
 * and MATRIX_MAX_CELL_BYTES: expansion then costs at most cells times that. */
static int check_cell_size(struct ctx *c, const struct ynode *root, const struct matrix *m) {
        size_t ml = m->model ? strlen(m->model) : 0;
        const char *const *tmpl = cell_template(m);
        size_t n_argv = strv_count(tmpl) + strv_length(m->args), n_env = strv_length(m->env);
        size_t bytes = text_bytes((char *const *)tmpl, ml) + text_bytes(m->args, ml) + text_bytes(m->env, 0);
        for (size_t a = 0; a < m->n_axes; a++) {
                size_t most_args = 0, most_env = 0, most_bytes = 0;
                for (size_t j = 0; j < m->axes[a].n_values; j++) {
                        const struct axis_value *v = &m->axes[a].values[j];
                        most_args = MAX(most_args, strv_length(v->args));
                        most_env = MAX(most_env, strv_length(v->env));
                        most_bytes = MAX(most_bytes, text_bytes(v->args, ml) + text_bytes(v->env, 0));
                }
                n_argv += most_args;
                n_env += most_env;
                bytes += most_bytes;
        }
        const struct ynode *where = y_key(root, m->n_axes ? "axes" : "args");
        unsigned line = where ? where->line : root->line;
        if (n_argv > MATRIX_MAX_ARGS)
                return fail(c, line, "a cell's command line can reach %zu arguments (at most %d)", n_argv,
                            MATRIX_MAX_ARGS);
        if (n_env > MATRIX_MAX_ENV)
                return fail(c, line, "a cell's environment can reach %zu variables (at most %d)", n_env, MATRIX_MAX_ENV);
        if (bytes > MATRIX_MAX_CELL_BYTES)
                return fail(c, line, "a cell's command line and environment can reach %zu bytes (at most %zu)", bytes,
                            MATRIX_MAX_CELL_BYTES);
        return 0;
}

static int matrix_parse(struct ctx *c, const struct ynode *root, struct matrix *m) {
        int r;
        if (root->kind != Y_MAP)
                return fail(c, root->line, "a matrix must be a map of keys (engine, model, axes, ...), not %s",
                            y_describe(c, root));
        if ((r = y_check_keys(c, root, top_keys, "the matrix")) < 0 || (r = parse_engine(c, root, m)) < 0 ||
            (r = parse_command(c, root, m)) < 0 || (r = parse_base(c, root, m)) < 0 ||
            (r = parse_axes(c, root, m)) < 0)
                return r;
        if ((r = parse_strategy(c, root, m)) < 0)
                return r;
        /* The size before anything walks the cells (one-at-a-time cannot get this big). */
        if (cell_count(m) > MATRIX_MAX_CELLS)
                return fail(c, y_key(root, "axes")->line,
                            "the matrix has more than %d cells; split it or use strategy: one-at-a-time",
                            MATRIX_MAX_CELLS);
        if ((r = check_cell_size(c, root, m)) < 0 || (r = parse_checks(c, root, m)) < 0 ||
            (r = parse_bench(c, root, m)) < 0)
                return r;
        if (m->n_axes > 0 && (r = check_unique_cells(c, root, m)) < 0)
                return r;
        return 0;
}

int matrix_load_string(const char *text, size_t len, const char *name, struct matrix **ret, char **ret_error) {
        struct ctx c = {.name = name};
        struct ydoc d = {0};
        struct matrix *m = calloc(1, sizeof(*m));
        int r = m ? 0 : -ENOMEM;
        if (r >= 0 && (!(m->path = strdup(name)) || !(m->text = strndup(text, len))))
                r = -ENOMEM;
        if (r >= 0)
                r = load_text(&c, text, len, &d);
        if (r >= 0)
                r = matrix_parse(&c, d.root, m);
        ydoc_release(&d);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ctx_release(&c);
                if (m)
                        matrix_free(m);
                return r;
        }
        ctx_release(&c);
        *ret = m;
        return 0;
}

int matrix_load(const char *path, struct matrix **ret, char **ret_error) {
        struct ctx c = {.name = path};
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_text(&c, path, &text, &len);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ctx_release(&c);
                return r;
        }
        ctx_release(&c);
        return matrix_load_string(text, len, path, ret, ret_error);
}

void matrix_free(struct matrix *m) {
        if (!m)
                return;
        free(m->path);
        free(m->text);
        free(m->engine);
        free(m->model);
        strv_free(m->command);
        strv_free(m->args);
        strv_free(m->env);
        free(m->host);
        free(m->workdir);
        for (size_t i = 0; i < m->n_axes; i++) {
                for (size_t j = 0; j < m->axes[i].n_values; j++)
                        axis_value_release(&m->axes[i].values[j]);
                free(m->axes[i].values);
                free(m->axes[i].name);
                free(m->axes[i].flag);
        }
        free(m->axes);
        free(m->baseline);
        for (size_t i = 0; i < m->n_excludes; i++)
                free(m->excludes[i].value);
        free(m->excludes);
        checks_free_suite(m->checks, m->n_checks);
        free(m->bench.concurrency);
        free(m->objective);
        free(m);
}

/* ------------------------------------------------------------------------------------ */
/* cells */

/* Sets KEY=VALUE in env[0..*n): replaces the entry with the same key in place (first
 * position, last value), else appends. env has room for every entry (cell_build). */
static int env_put(char **env, size_t *n, const char *entry) {
        size_t k = strcspn(entry, "=");
        char *d = strdup(entry);
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < *n; i++)
                if (strncmp(env[i], entry, k) == 0 && env[i][k] == '=') {
                        free(env[i]);
                        env[i] = d;
                        return 0;
                }
        env[(*n)++] = d;
        return 0;
}

/* Orders "KEY=VALUE" entries by KEY, bytewise; a key sorts before its extensions. */
static int env_key_cmp(const void *x, const void *y) {
        const char *a = *(const char *const *)x, *b = *(const char *const *)y;
        size_t la = strcspn(a, "="), lb = strcspn(b, "=");
        int r = memcmp(a, b, MIN(la, lb));
        if (r)
                return r;
        return (la > lb) - (la < lb);
}

static int cell_hash(struct cell *cell) {
        uint64_t h = FNV_SEED;
        for (char **a = cell->argv; *a; a++)
                h = fnv1a(h, *a, strlen(*a) + 1);
        h = fnv1a(h, "\xff", 1); /* never inside UTF-8 text: argv and env cannot run together */
        size_t n = strv_length(cell->env);
        if (n > 0) {
                _cleanup_free_ char **sorted = calloc(n, sizeof(*sorted));
                if (!sorted)
                        return -ENOMEM;
                memcpy(sorted, cell->env, n * sizeof(*sorted));
                qsort(sorted, n, sizeof(*sorted), env_key_cmp);
                for (size_t i = 0; i < n; i++)
                        h = fnv1a(h, sorted[i], strlen(sorted[i]) + 1);
        }
        snprintf(cell->id, sizeof(cell->id), "%016" PRIx64, h);
        return 0;
}

static void cell_release(struct cell *c) {
        free(c->choice);
        strv_free(c->argv);
        strv_free(c->env);
}

static const char *const *cell_template(const struct matrix *m) {
        return m->command ? (const char *const *)m->command : m->profile->command;
}

static int cell_build(const struct matrix *m, const size_t *choice, struct cell *ret) {
        static const char *const keys[] = {"{model}"};
        const char *vals[] = {m->model};
        const char *const *tmpl = cell_template(m);
        size_t n_argv = strv_count(tmpl) + strv_length(m->args), n_env = strv_length(m->env);
        for (size_t a = 0; a < m->n_axes; a++) {
                n_argv += strv_length(m->axes[a].values[choice[a]].args);
                n_env += strv_length(m->axes[a].values[choice[a]].env);
        }
        struct cell cell = {
                .choice = calloc(MAX(m->n_axes, (size_t)1), sizeof(size_t)),
                .argv = calloc(n_argv + 1, sizeof(char *)),
                .env = calloc(n_env + 1, sizeof(char *)),
        };
        int r = cell.choice && cell.argv && cell.env ? 0 : -ENOMEM;
        size_t k = 0, e = 0;
        for (size_t i = 0; r >= 0 && tmpl && tmpl[i]; i++)
                if (!(cell.argv[k++] = placeholder_fill(tmpl[i], keys, vals, 1)))
                        r = -ENOMEM;
        for (size_t i = 0; r >= 0 && m->args && m->args[i]; i++)
                if (!(cell.argv[k++] = placeholder_fill(m->args[i], keys, vals, 1)))
                        r = -ENOMEM;
        for (size_t i = 0; r >= 0 && m->env && m->env[i]; i++)
                r = env_put(cell.env, &e, m->env[i]);
        for (size_t a = 0; r >= 0 && a < m->n_axes; a++) {
                const struct axis_value *v = &m->axes[a].values[choice[a]];
                cell.choice[a] = choice[a];
                for (size_t i = 0; r >= 0 && v->args && v->args[i]; i++)
                        if (!(cell.argv[k++] = placeholder_fill(v->args[i], keys, vals, 1)))
                                r = -ENOMEM;
                for (size_t i = 0; r >= 0 && v->env && v->env[i]; i++)
                        r = env_put(cell.env, &e, v->env[i]);
                cell.distance += !v->is_default;
        }
        if (r >= 0)
                r = cell_hash(&cell);
        if (r < 0) {
                cell_release(&cell);
                return r;
        }
        for (size_t x = 0; x < m->n_excludes && !cell.excluded; x++) {
                bool match = true;
                for (size_t a = 0; a < m->n_axes && match; a++)
                        match = m->excludes[x].value[a] < 0 || (size_t)m->excludes[x].value[a] == choice[a];
                cell.excluded = match;
        }
        *ret = cell;
        return 0;
}

int matrix_expand(const struct matrix *m, struct cell **ret, size_t *ret_n) {
        size_t total = cell_count(m);
        if (total > MATRIX_MAX_CELLS)
                return -E2BIG;
        struct cell *cells = calloc(total, sizeof(*cells));
        _cleanup_free_ size_t *choice = calloc(MAX(m->n_axes, (size_t)1), sizeof(size_t));
        if (!cells || !choice) {
                free(cells);
                return -ENOMEM;
        }
        size_t n = 0;
        int r = 0;
        if (m->strategy == STRATEGY_ONE_AT_A_TIME && m->n_axes > 0) {
                /* Each cell starts again from the baseline: no store to undo. (An earlier
                 * set-then-restore form of this loop was miscompiled by gcc 12 at -O2.) */
                for (size_t a = 0, v = SIZE_MAX; r >= 0 && a < m->n_axes;) {
                        memcpy(choice, m->baseline, m->n_axes * sizeof(size_t));
                        if (v != SIZE_MAX)
                                choice[a] = v;
                        r = cell_build(m, choice, &cells[n]);
                        if (r < 0)
                                break;
                        n++;
                        /* next: the following non-baseline value of axis a, or of a later axis */
                        do {
                                v = v == SIZE_MAX ? 0 : v + 1;
                                if (v >= m->axes[a].n_values) {
                                        v = 0;
                                        a++;
                                }
                        } while (a < m->n_axes && v == m->baseline[a]);
                }
        } else {
                /* an odometer: the last axis turns fastest */
                for (;;) {
                        r = cell_build(m, choice, &cells[n]);
                        if (r < 0)
                                break;
                        n++;
                        size_t a = m->n_axes;
                        while (a > 0) {
                                a--;
                                if (++choice[a] < m->axes[a].n_values)
                                        break;
                                choice[a] = 0;
                                if (a == 0) {
                                        a = SIZE_MAX;
                                        break;
                                }
                        }
                        if (a == SIZE_MAX || m->n_axes == 0)
                                break;
                }
        }
        if (r < 0) {
                cells_free(cells, n);
                return r;
        }
        *ret = cells;
        *ret_n = n;
        return 0;
}

void cells_free(struct cell *cells, size_t n) {
        for (size_t i = 0; cells && i < n; i++)
                cell_release(&cells[i]);
        free(cells);
}

int cell_resolve_argv(const struct cell *c, const char *host, int port, char ***ret) {
        return placeholder_fill_argv(c->argv, host, port, ret);
}

char *cell_label(const struct matrix *m, const struct cell *c) {
        if (m->n_axes == 0)
                return strdup("(base)");
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        for (size_t a = 0; a < m->n_axes; a++)
                if (buf_printf(&b, "%s%s=%s", a ? " " : "", m->axes[a].name, m->axes[a].values[c->choice[a]].name) < 0)
                        return NULL;
        return buf_detach(&b);
}
