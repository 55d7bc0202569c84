/* ytree.c -- a small read-only YAML tree with limits, built from libyaml's events. */
#include "config/ytree.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "text/text.h"
#include "base/utf8.h"

/* ------------------------------------------------------------------------------------ */
/* messages */

void ytree_ctx_release(struct ytree_ctx *c) {
        for (size_t i = 0; i < ELEMENTSOF(c->scratch); i++)
                free(c->scratch[i]);
        free(c->error);
}

/* User text for a message: control bytes as \xNN, cut at 80 bytes on a character
 * boundary. The copy lives until the ctx is released (or 8 more calls). */
const char *ytree_esc(struct ytree_ctx *c, const char *s) {
        enum { CUT = 80 };
        size_t n = strlen(s), take = n > CUT ? utf8_char_start(s, n, CUT) : n;
        _cleanup_free_ char *cut = strndup(s, take);
        struct buf b;
        buf_init(&b, 0);
        if (!cut || text_escape(&b, cut, 0, TEXT_TERMINAL) < 0 || (take < n && buf_puts(&b, "...") < 0)) {
                buf_release(&b);
                return "?";
        }
        char *out = buf_detach(&b);
        unsigned slot = c->next++ % ELEMENTSOF(c->scratch);
        free(c->scratch[slot]);
        c->scratch[slot] = out;
        return out;
}

/* Records the first problem; returns -EINVAL (or -ENOMEM when even that fails). */
int ytree_fail(struct ytree_ctx *c, unsigned line, const char *fmt, ...) {
        if (c->error)
                return -EINVAL;
        va_list ap;
        va_start(ap, fmt);
        char *msg = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!msg)
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

/* ", a, b, c" into b (for "known: ..." lists). */
void ytree_join_names(struct buf *b, const char *const *names, size_t n) {
        for (size_t i = 0; i < n; i++)
                buf_printf(b, "%s%s", i ? ", " : "", names[i]);
}

/* " (did you mean 'x'?)" or " (known: a, b, c)" for a name not among cands. */
char *ytree_hint(const char *s, const char *const *cands, size_t n) {
        const char *best = closest(s, cands, n);
        if (best)
                return strdup_printf(" (did you mean '%s'?)", best);
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        buf_puts(&b, " (known: ");
        ytree_join_names(&b, cands, n);
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
static int check_bytes(struct ytree_ctx *c, const char *t, size_t len) {
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
                        return ytree_fail(c, line, "NUL byte in the file (binary data?)");
                if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f)
                        return ytree_fail(c, line, "control character 0x%02x in the file (binary data?)", ch);
                if (ch < 0x80) {
                        i++;
                        continue;
                }
                size_t n = utf8_decode((const unsigned char *)t + i, len - i, NULL, NULL);
                if (n == 0)
                        return ytree_fail(c, line, "invalid UTF-8 (byte 0x%02x); save the file as UTF-8", ch);
                i += n;
        }
        return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the YAML tree */

void ytree_release(struct ytree *d) {
        for (size_t i = 0; i < d->n_nodes; i++) {
                free(d->nodes[i]->value);
                free(d->nodes[i]->items);
                free(d->nodes[i]);
        }
        free(d->nodes);
        *d = (struct ytree){0};
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
        struct ytree_ctx *c;
        struct ytree *d;
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
        if (b->expanded > YTREE_MAX_NODES)
                return ytree_fail(b->c, line, "the document is too big: more than %d nodes with aliases expanded",
                            YTREE_MAX_NODES);
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
        if (b->n_anchors >= YTREE_MAX_ANCHORS)
                return ytree_fail(b->c, n->line, "too many anchors (more than %d)", YTREE_MAX_ANCHORS);
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
        return ytree_fail(b->c, line, "unknown alias '*%s' (no '&%s' before it)", ytree_esc(b->c, name), ytree_esc(b->c, name));
}

static bool tag_is(const char *tag, const char *what) {
        return tag && strcmp(tag, what) == 0;
}

static int ybuild_scalar(struct ybuild *b, const yaml_event_t *ev, unsigned line) {
        int r = ybuild_count(b, 1, line);
        if (r < 0)
                return r;
        if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length))
                return ytree_fail(b->c, line, "NUL character in a string");
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
        if (b->depth >= YTREE_MAX_DEPTH)
                return ytree_fail(b->c, line, "nested too deep: more than %d lists or maps inside each other",
                                  YTREE_MAX_DEPTH);
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
static int ymap_check_keys(struct ytree_ctx *c, const struct ynode *map) {
        size_t n = map->n_items / 2;
        for (size_t i = 0; i < n; i++)
                if (map->items[2 * i]->kind != Y_SCALAR)
                        return ytree_fail(c, map->items[2 * i]->line, "a key must be a plain name, not a %s",
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
                        return ytree_fail(c, MAX(a, b), "duplicate key '%s' (also on line %u)",
                                    ytree_esc(c, keys[i]->value), MIN(a, b));
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

static int yaml_fail(struct ytree_ctx *c, const yaml_parser_t *p, const char *t, size_t len) {
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
        return ytree_fail(c, line, "YAML syntax error: %s%s%s%s%s", problem, p->context ? " (" : "",
                    p->context ? p->context : "", p->context ? ")" : "",
                    tab ? "; YAML indents with spaces, not tabs" : "");
}

static int build_tree(struct ytree_ctx *c, const char *text, size_t len, struct ytree *d) {
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
                                r = ytree_fail(c, line, "a second YAML document ('---'): one matrix per file");
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

bool y_null(const struct ynode *n) {
        if (!n)
                return true;
        if (n->kind != Y_SCALAR || !n->plain)
                return false;
        return n->len == 0 || streq_ptr(n->value, "~") || streq_ptr(n->value, "null") ||
               streq_ptr(n->value, "Null") || streq_ptr(n->value, "NULL");
}

/* "a list", "a map", "nothing", "'text'" for type errors. */
const char *y_describe(struct ytree_ctx *c, const struct ynode *n) {
        if (n->kind == Y_SEQ)
                return "a list";
        if (n->kind == Y_MAP)
                return "a map";
        if (y_null(n))
                return "nothing";
        _cleanup_free_ char *q = strdup_printf("'%s'", n->value);
        return q ? ytree_esc(c, q) : "?";
}

const struct ynode *y_get(const struct ynode *map, const char *key) {
        for (size_t i = 0; map && i + 1 < map->n_items; i += 2)
                if (strcmp(map->items[i]->value, key) == 0)
                        return map->items[i + 1];
        return NULL;
}

const struct ynode *y_key(const struct ynode *map, const char *key) {
        for (size_t i = 0; map && i + 1 < map->n_items; i += 2)
                if (strcmp(map->items[i]->value, key) == 0)
                        return map->items[i];
        return NULL;
}

/* Every key of map must be in known; where says which map, for the message. */
int y_check_keys(struct ytree_ctx *c, const struct ynode *map, const char *const *known, const char *where) {
        size_t n = strv_length((char *const *)known);
        for (size_t i = 0; i + 1 < map->n_items; i += 2) {
                const struct ynode *k = map->items[i];
                bool ok = false;
                for (size_t j = 0; j < n && !ok; j++)
                        ok = strcmp(k->value, known[j]) == 0;
                if (ok)
                        continue;
                _cleanup_free_ char *h = ytree_hint(k->value, known, n);
                return ytree_fail(c, k->line, "unknown key '%s' in %s%s", ytree_esc(c, k->value), where, h ? h : "");
        }
        return 0;
}

int y_map(struct ytree_ctx *c, const struct ynode *n, const char *what) {
        if (n->kind != Y_MAP)
                return ytree_fail(c, n->line, "%s must be a map, not %s", what, y_describe(c, n));
        return 0;
}

int y_seq(struct ytree_ctx *c, const struct ynode *n, const char *what) {
        if (n->kind != Y_SEQ)
                return ytree_fail(c, n->line, "%s must be a list, not %s", what, y_describe(c, n));
        return 0;
}

/* Any non-null scalar, as written ("8" stays "8", "on" stays "on"). */
int y_scalar(struct ytree_ctx *c, const struct ynode *n, const char *what, const char **ret) {
        if (n->kind != Y_SCALAR || y_null(n))
                return ytree_fail(c, n->line, "%s must be a string, not %s", what, y_describe(c, n));
        *ret = n->value;
        return 0;
}

int y_string(struct ytree_ctx *c, const struct ynode *n, const char *what, char **ret) {
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
int y_name(struct ytree_ctx *c, const struct ynode *n, const char *what, bool strict, const char **ret) {
        const char *s;
        int r = y_scalar(c, n, what, &s);
        if (r < 0)
                return r;
        if (!*s)
                return ytree_fail(c, n->line, "%s must not be empty", what);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if (*p < 0x20 || *p == 0x7f || (strict && (*p == '=' || *p == ' ')))
                        return ytree_fail(c, n->line, "%s '%s' may not contain %s", what, ytree_esc(c, s),
                                    strict ? "spaces, '=' or control characters" : "control characters");
        *ret = s;
        return 0;
}

int y_int(struct ytree_ctx *c, const struct ynode *n, const char *what, long min, long max, int *ret) {
        if (n->kind == Y_SCALAR && n->plain && n->len > 0) {
                char *end;
                errno = 0;
                long v = strtol(n->value, &end, 10);
                if (errno == 0 && *end == '\0' && v >= min && v <= max) {
                        *ret = (int)v;
                        return 0;
                }
        }
        return ytree_fail(c, n->line, "%s must be an integer from %ld to %ld, not %s", what, min, max, y_describe(c, n));
}

int y_double(struct ytree_ctx *c, const struct ynode *n, const char *what, double min, double *ret) {
        if (n->kind == Y_SCALAR && n->plain && n->len > 0) {
                char *end;
                errno = 0;
                double v = strtod(n->value, &end);
                if (errno == 0 && *end == '\0' && v >= min && v <= 1e9) {
                        *ret = v;
                        return 0;
                }
        }
        return ytree_fail(c, n->line, "%s must be a number of at least %g, not %s", what, min, y_describe(c, n));
}

int y_bool(struct ytree_ctx *c, const struct ynode *n, const char *what, bool *ret) {
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
        return ytree_fail(c, n->line, "%s must be true or false, not %s", what, y_describe(c, n));
}

int y_duration(struct ytree_ctx *c, const struct ynode *n, const char *what, usec_t *ret) {
        usec_t u;
        if (n->kind == Y_SCALAR && !y_null(n) && parse_duration(n->value, &u) == 0 && u > 0) {
                *ret = u;
                return 0;
        }
        return ytree_fail(c, n->line, "%s must be a duration above zero like 90s, 20m or 1h, not %s", what,
                    y_describe(c, n));
}

/* A list of scalars as strings. A plain string gets a hint: args are a list. */
int y_strv(struct ytree_ctx *c, const struct ynode *n, const char *what, size_t max, char ***ret) {
        if (n->kind != Y_SEQ)
                return ytree_fail(c, n->line, "%s must be a list like [--flag, value], not %s", what, y_describe(c, n));
        if (n->n_items > max)
                return ytree_fail(c, n->line, "%s has too many items (%zu, at most %zu)", what, n->n_items, max);
        _cleanup_strv_free_ char **v = calloc(n->n_items + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                const char *s = NULL; /* set when y_scalar succeeds; gcc 12 cannot tell */
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
int y_env(struct ytree_ctx *c, const struct ynode *n, const char *what, size_t max, char ***ret) {
        int r = y_map(c, n, what);
        if (r < 0)
                return r;
        size_t count = n->n_items / 2;
        if (count > max)
                return ytree_fail(c, n->line, "%s has too many variables (%zu, at most %zu)", what, count, max);
        _cleanup_strv_free_ char **v = calloc(count + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                const struct ynode *k = n->items[2 * i];
                /* What systemd's Environment= and sh's export take alike: a name either drops
                 * (systemd skips it) or misreads (env(1) takes "-X=1" for an option) would
                 * make the emitted unit or script run another server than the one tested. */
                if (!env_name_valid(k->value))
                        return ytree_fail(c, k->line,
                                          "%s: '%s' is not a valid variable name (ASCII letters, digits and _, not "
                                          "starting with a digit)",
                                          what, ytree_esc(c, k->value));
                const char *val = NULL; /* likewise */
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
int ytree_load(struct ytree_ctx *c, const char *text, size_t len, struct ytree *d) {
        if (len > YTREE_MAX_FILE)
                return ytree_fail(c, 1, "the file is too big (%zu bytes, at most %zu)", len, YTREE_MAX_FILE);
        int r = check_bytes(c, text, len);
        if (r < 0)
                return r;
        /* A UTF-8 byte order mark (Windows editors write one): libyaml, told the encoding,
         * would take it for content. */
        if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
                text += 3;
                len -= 3;
        }
        r = build_tree(c, text, len, d);
        if (r < 0)
                return r;
        if (!d->root || y_null(d->root))
                return ytree_fail(c, 1, "the file is empty");
        return 0;
}

/* Reads path up to YTREE_MAX_FILE bytes (caller frees *ret). Too big: "NAME:1: the file is
 * too big" and -EINVAL; unreadable: "cannot read 'PATH': reason" and the read's errno. */
static int ytree_read_file(struct ytree_ctx *c, const char *path, char **ret, size_t *ret_len) {
        /* A FIFO or a device would block the open or the read for ever: files only. */
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
                c->error = strdup_printf("cannot read '%s': not a regular file", path);
                return -EINVAL;
        }
        /* One byte past the cap tells "exactly at the cap" from "over it". */
        int r = read_file_capped(path, YTREE_MAX_FILE + 1, ret, ret_len);
        if (r == -EFBIG)
                return ytree_fail(c, 1, "the file is too big (more than %zu bytes)", YTREE_MAX_FILE);
        if (r < 0) {
                c->error = strdup_printf("cannot read '%s': %s", path, file_strerror(r));
                return r == -ENOTREG ? -EINVAL : r;
        }
        return 0;
}


int ytree_read_path(const char *path, char **ret, size_t *ret_len, char **ret_error) {
        struct ytree_ctx c = {.name = path};
        int r = ytree_read_file(&c, path, ret, ret_len);
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(c.error);
        ytree_ctx_release(&c);
        return r;
}
