/* search_alloc.c -- what an out-of-memory line says of the allocation that failed: its size,
 * and the axes that do not change it (docs/search.md, "The allocation that failed"). */
#include "search/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* How far past "allocat" the size may stand ("allocate CUDA0 buffer of size 1342177280"). */
#define ALLOC_REACH 64

static const struct {
        const char *unit;
        double bytes;
} UNITS[] = {
        {"bytes", 1},         {"byte", 1},          {"KiB", 1024.0},      {"MiB", 1048576.0},
        {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"KB", 1e3},    {"MB", 1e6},
        {"GB", 1e9},          {"TB", 1e12},         {"B", 1},
};

/* The unit word at p, its bytes, or 0; a unit is not the start of a longer word. */
static double unit_at(const char *p) {
        for (size_t i = 0; i < ELEMENTSOF(UNITS); i++) {
                size_t n = strlen(UNITS[i].unit);
                if (strncasecmp(p, UNITS[i].unit, n) == 0 && !isalnum((unsigned char)p[n]) && p[n] != '_')
                        return UNITS[i].bytes;
        }
        return 0;
}

double search_alloc_size(const char *evidence) {
        for (const char *a = evidence; a && (a = strcasestr(a, "allocat")); a += 7) {
                const char *q = a + 7;
                bool size_word = false;
                for (size_t i = 0; i < ALLOC_REACH && q[i] && q[i] != '\n'; i++) {
                        const char *p = q + i;
                        if (strncasecmp(p, "size", 4) == 0 && !isalnum((unsigned char)p[4]))
                                size_word = true;
                        /* a number of its own: not the digits of "CUDA0" or "sm_90" (p[-1] is
                         * at worst the t of "allocat") */
                        if (!isdigit((unsigned char)*p) || isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
                            p[-1] == '.')
                                continue;
                        char *end;
                        double v = strtod(p, &end);
                        const char *u = end;
                        while (*u == ' ')
                                u++;
                        double bytes = unit_at(u);
                        if (isfinite(v) && v > 0 && bytes > 0)
                                return v * bytes;
                        if (size_word && isfinite(v) && v > 0 && !isalpha((unsigned char)*end) && *end != '_')
                                return v; /* "of size 1342177280": bytes */
                        break;            /* the first number is no size ("16 sequences", "0x7f3a"): none here */
                }
        }
        return -1;
}

/* Whether two sizes read from lines are one (the same figure, printed alike). */
static bool same_size(double x, double y) {
        return fabs(x - y) <= 1e-6 * MAX(x, y);
}

struct ran_out {
        size_t cell;
        double size;
        size_t family;   /* index of its line's signature, numbers taken out, among them */
};

/* For family f: axes that two of its cells differing on them failed at one size on (same),
 * less those that a change of size follows (two cells of other sizes differing on it and
 * otherwise on such axes alone), less those a cell that loaded says can save it. */
static void family_invariant(const struct search_space *s, const struct ran_out *r, size_t n, size_t f,
                             const size_t *in, size_t n_in, double *const *sz, bool *inv) {
        size_t A = s->n_axes, sizes = 0;
        double first = -1;
        for (size_t a = 0; a < A; a++)
                inv[a] = false;
        /* one size in all its cells: a fixed chunk (an allocator's block, a line that rounds)
         * says nothing of which allocation it was */
        for (size_t i = 0; i < n; i++)
                if (r[i].family == f && (sizes == 0 || (sizes == 1 && !same_size(first, r[i].size)))) {
                        first = sizes == 0 ? r[i].size : first;
                        sizes++;
                }
        if (sizes < 2)
                return;
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        if (r[i].family != f || r[j].family != f || !same_size(r[i].size, r[j].size))
                                continue;
                        const size_t *ci = s->choice + r[i].cell * A, *cj = s->choice + r[j].cell * A;
                        for (size_t a = 0; a < A; a++)
                                inv[a] |= ci[a] != cj[a];
                }
        bool varies[16] = {0};
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        if (r[i].family != f || r[j].family != f || same_size(r[i].size, r[j].size))
                                continue;
                        const size_t *ci = s->choice + r[i].cell * A, *cj = s->choice + r[j].cell * A;
                        /* differing on shown axes alone, they failed at other sizes: one
                         * of those changes it after all */
                        bool other = false;
                        for (size_t a = 0; a < A; a++)
                                other |= ci[a] != cj[a] && !inv[a];
                        for (size_t a = 0; a < A && !other; a++)
                                varies[a] |= ci[a] != cj[a];
                }
        for (size_t a = 0; a < A; a++)
                inv[a] &= !varies[a];
        /* a cell that loaded, differing from one that ran out only on such axes (or larger
         * sizes): one of them saved it */
        for (bool changed = true; changed;) {
                changed = false;
                for (size_t i = 0; i < n; i++) {
                        if (r[i].family != f)
                                continue;
                        for (size_t j = 0; j < n_in; j++) {
                                const size_t *cx = s->choice + r[i].cell * A, *cy = s->choice + in[j] * A;
                                bool explained = true, any = false;
                                for (size_t a = 0; a < A && explained; a++) {
                                        if (cx[a] == cy[a])
                                                continue;
                                        bool larger = sz[a] && sz[a][cx[a]] >= 0 && sz[a][cy[a]] >= sz[a][cx[a]];
                                        explained = inv[a] || larger;
                                        any |= inv[a];
                                }
                                if (!explained || !any)
                                        continue;
                                for (size_t a = 0; a < A; a++)
                                        if (cx[a] != cy[a] && inv[a]) {
                                                inv[a] = false;
                                                changed = true;
                                        }
                        }
                }
        }
}

int search_alloc_predict(const struct search_space *s, const struct search_obs *obs, const size_t *out,
                         const double *out_size, size_t n_out, const size_t *in, size_t n_in, double *const *sz,
                         long *mem_over, const long *mem_under, bool *by_alloc) {
        size_t A = s->n_axes, n = 0, n_fam = 0;
        if (A > 16)
                return 0;
        _cleanup_free_ struct ran_out *r = calloc(n_out ? n_out : 1, sizeof(*r));
        _cleanup_free_ char **sig = calloc(n_out ? n_out : 1, sizeof(char *));
        _cleanup_free_ bool *inv = calloc((n_out ? n_out : 1) * A, sizeof(bool));
        int ret = 0;
        if (!r || !sig || !inv)
                return -ENOMEM;
        for (size_t i = 0; i < n_out; i++) {
                const struct search_obs *o = &obs[out[i]];
                double size = out_size[i];
                if (size < 0)
                        continue;
                char *g = search_signature(s, o->kind, o->evidence);
                if (!g) {
                        ret = -ENOMEM;
                        goto done;
                }
                size_t f = 0;
                while (f < n_fam && strcmp(sig[f], g) != 0)
                        f++;
                if (f == n_fam)
                        sig[n_fam++] = g;
                else
                        free(g);
                r[n++] = (struct ran_out){out[i], size, f};
        }
        if (n < 2)
                goto done;
        bool any = false;
        for (size_t f = 0; f < n_fam; f++) {
                family_invariant(s, r, n, f, in, n_in, sz, inv + f * A);
                for (size_t a = 0; a < A; a++)
                        any |= inv[f * A + a];
        }
        if (!any)
                goto done;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (obs[k].state != SEARCH_UNKNOWN || mem_over[k] >= 0 || mem_under[k] >= 0)
                        continue;
                const size_t *ck = s->choice + k * A;
                for (size_t i = 0; i < n && mem_over[k] < 0; i++) {
                        const size_t *cx = s->choice + r[i].cell * A;
                        const bool *fi = inv + r[i].family * A;
                        bool follows = true;
                        for (size_t a = 0; a < A && follows; a++)
                                follows = ck[a] == cx[a] || fi[a] ||
                                          (sz[a] && sz[a][cx[a]] >= 0 && sz[a][ck[a]] >= sz[a][cx[a]]);
                        if (follows) {
                                mem_over[k] = (long)r[i].cell;
                                by_alloc[k] = true;
                        }
                }
        }
done:
        for (size_t f = 0; f < n_fam; f++)
                free(sig[f]);
        return ret;
}
