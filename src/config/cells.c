/* cells.c -- a matrix expanded into cells: argv, env and the cell id of each. */
#include "config/cells.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "text/buf.h"
#include "text/placeholder.h"
#include "config/ytree.h"

size_t cells_count(const struct matrix *m) {
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

/* The argv every cell starts with: the matrix's command, else the profile's template. */
static const char *const *cell_template(const struct matrix *m) {
        return m->command ? (const char *const *)m->command : m->profile->command;
}

static int cell_build(const struct matrix *m, const size_t *choice, struct cell *ret) {
        static const char *const keys[] = {"{model}"};
        const char *vals[] = {m->model};
        const char *const *tmpl = cell_template(m);
        size_t n_argv = strv_length((char *const *)tmpl) + strv_length(m->args), n_env = strv_length(m->env);
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

int cells_expand(const struct matrix *m, struct cell **ret, size_t *ret_n) {
        size_t total = cells_count(m);
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


int cells_find(const struct cell *cells, size_t n, size_t n_axes, const size_t *choice) {
        for (size_t i = 0; i < n; i++) {
                bool same = true;
                for (size_t k = 0; k < n_axes && same; k++)
                        same = cells[i].choice[k] == choice[k];
                if (same)
                        return (int)i;
        }
        return -1;
}

/* ---- the cell checks of a matrix ---- */

static int cell_id_cmp(const void *x, const void *y) {
        const struct cell *a = *(const struct cell *const *)x, *b = *(const struct cell *const *)y;
        return strcmp(a->id, b->id);
}

/* Two cells with one id would be one configuration under two names: the journal could not
 * tell them apart. It happens when axis values change nothing (a map value without args). */
static int check_unique_cells(struct ytree_ctx *c, const struct matrix *m) {
        struct cell *cells = NULL;
        size_t n = 0;
        int r = cells_expand(m, &cells, &n);
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
                                r = ytree_fail(c, m->line_axes,
                                         "cells '%s' and '%s' give the same command and environment; make each value change something",
                                         ytree_esc(c, a), ytree_esc(c, b));
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
static int check_cell_size(struct ytree_ctx *c, const struct matrix *m) {
        size_t ml = m->model ? strlen(m->model) : 0;
        const char *const *tmpl = cell_template(m);
        size_t n_argv = strv_length((char *const *)tmpl) + strv_length(m->args), n_env = strv_length(m->env);
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
        unsigned where = m->n_axes ? m->line_axes : m->line_args;
        unsigned line = where ? where : m->line_top;
        if (n_argv > MATRIX_MAX_ARGS)
                return ytree_fail(c, line, "a cell's command line can reach %zu arguments (at most %d)", n_argv,
                            MATRIX_MAX_ARGS);
        if (n_env > MATRIX_MAX_ENV)
                return ytree_fail(c, line, "a cell's environment can reach %zu variables (at most %d)", n_env, MATRIX_MAX_ENV);
        if (bytes > MATRIX_MAX_CELL_BYTES) /* named where the bulk is: the longest value */
                return ytree_fail(c, m->line_longest ? m->line_longest : line,
                                  "a cell's command line and environment can reach %zu bytes (at most %zu)", bytes,
                                  MATRIX_MAX_CELL_BYTES);
        return 0;
}

/* The eval's reference must be a cell that runs. */
static int check_reference(struct ytree_ctx *c, const struct matrix *m) {
        struct cell *cells = NULL;
        size_t n = 0;
        int r = cells_expand(m, &cells, &n);
        if (r < 0)
                return r;
        int at = cells_find(cells, n, m->n_axes, m->reference);
        bool excluded = at >= 0 && cells[at].excluded;
        cells_free(cells, n);
        if (at < 0)
                return ytree_fail(c, m->line_reference, "reference is not a cell of this matrix (strategy one-at-a-time "
                                                        "varies one axis from the baseline at a time)");
        if (excluded)
                return ytree_fail(c, m->line_reference, "reference names a cell that exclude leaves out");
        return 0;
}

static int check_cells(struct ytree_ctx *c, const struct matrix *m) {
        int r;
        /* The count before anything walks the cells (one-at-a-time cannot get this big). */
        if (cells_count(m) > MATRIX_MAX_CELLS)
                return ytree_fail(c, m->line_axes, "the matrix has more than %d cells; split it or use strategy: one-at-a-time",
                                  MATRIX_MAX_CELLS);
        if ((r = check_cell_size(c, m)) < 0)
                return r;
        if (m->n_axes > 0 && (r = check_unique_cells(c, m)) < 0)
                return r;
        if (m->reference && (r = check_reference(c, m)) < 0)
                return r;
        return 0;
}

int cells_load_matrix_string(const char *text, size_t len, const char *name, struct matrix **ret, char **ret_error) {
        struct matrix *m = NULL;
        int r = matrix_parse_string(text, len, name, &m, ret_error);
        if (r < 0)
                return r;
        struct ytree_ctx c = {.name = name};
        r = check_cells(&c, m);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ytree_ctx_release(&c);
                matrix_free(m);
                return r;
        }
        ytree_ctx_release(&c);
        *ret = m;
        return 0;
}

int cells_load_matrix(const char *path, struct matrix **ret, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = ytree_read_path(path, &text, &len, ret_error);
        if (r < 0)
                return r;
        return cells_load_matrix_string(text, len, path, ret, ret_error);
}
