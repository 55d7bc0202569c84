/* cells.c -- a matrix expanded into cells: argv, env and the cell id of each. */
#include "cells.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "placeholder.h"

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

const char *const *cell_template(const struct matrix *m) {
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
