/* search_sizes.c -- axes of sizes: whole numbers whose larger values never need less memory
 * (docs/search.md, "Sizes"), the words of an axis, and the likeness of an axis's numbers
 * ("Speed"). */
#include "search/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* Axes of a context's length: their 0 is the model's whole context (llama.cpp's `-c 0`, the
 * length it was trained for), larger than any the matrix writes. */
static const char *const SIZE_CONTEXT[] = {"ctx", "context", "ctx-size", "n-ctx", "model-len", "seq-len", NULL};
#define CONTEXT_WHOLE 1e12

/* A value's name as a number for search_ord: "0.85", "4096", "32k"; NAN for a word. A
 * context's 0 is its whole length (search_sizes). */
static double value_number(const char *name, bool context) {
        if (!name || !(isdigit((unsigned char)name[0]) || (name[0] == '.' && isdigit((unsigned char)name[1]))))
                return NAN;
        char *end;
        double v = strtod(name, &end);
        if (*end && strchr("kKmMgG", *end) && !end[1])
                v *= strchr("kK", *end) ? 1e3 : strchr("mM", *end) ? 1e6 : 1e9;
        else if (*end)
                return NAN;
        return context && v == 0 ? CONTEXT_WHOLE : v;
}

/* Value name as a size: a whole number above 0, with an optional k, m or g (thousands,
 * millions, billions): "4096", "32k". -1 when it is none ("auto", "q8_0", "0.85"), and for 0,
 * which a size flag often takes for "the default", "no limit" or "off" rather than the least
 * (search_sizes makes a context's 0 its largest). A space written apart from the simulator ran
 * out of memory at llama.cpp's `-c 0` three times, read as "at its smallest size", and stopped
 * as if nothing could pass. */
static double value_size(const char *name) {
        double v = value_number(name, false);
        /* whole: no share's point, no exponent, no hex */
        return isfinite(v) && v > 0 && !strpbrk(name, ".eEpPxX") ? v : -1;
}

/* Axes whose sizes say nothing of a GPU's memory this way: more GPUs per copy of the model
 * (tensor, pipeline, expert parallel) or more of it offloaded (llama.cpp's `-ncmoe`, MoE
 * layers kept on the CPU) need less on each. */
static const char *const SIZE_NOT_MEMORY[] = {
        "tp", "pp", "dp", "ep", "tensor", "pipeline", "expert", "parallel-size",
        "offload", "offloading", "swap", "cpu", "ncmoe", "nodes", "gpus", "world", NULL,
};

/* Whether name holds one of words, as a word of its own. */
static bool name_about(const char *name, const char *const *words) {
        for (size_t w = 0; name && words[w]; w++) {
                size_t n = strlen(words[w]);
                for (const char *p = name; (p = strcasestr(p, words[w])); p++)
                        if ((p == name || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
                                return true;
        }
        return false;
}

bool search_axis_about(const struct search_space *s, size_t a, const char *const *words) {
        if (name_about(s->axis_names ? s->axis_names[a] : NULL, words) ||
            name_about(s->axis_flags ? s->axis_flags[a] : NULL, words))
                return true;
        /* the flag's other forms: llama.cpp's -c is --ctx-size */
        for (const char *const *f = s->axis_forms ? s->axis_forms[a] : NULL; f && *f; f++)
                if (name_about(*f, words))
                        return true;
        return false;
}

bool search_axis_context(const struct search_space *s, size_t a) {
        return search_axis_about(s, a, SIZE_CONTEXT);
}

int search_sizes(const struct search_space *s, double **ret) {
        for (size_t a = 0; a < s->n_axes; a++) {
                size_t sizes = 0;
                bool other_number = false; /* 0.85, 1.5, "3,1": a share, a ratio, a split */
                ret[a] = NULL;
                bool context = search_axis_context(s, a);
                for (size_t x = 0; s->value_names && x < s->n_values[a]; x++) {
                        const char *v = s->value_names[a][x];
                        sizes += value_size(v) >= 0;
                        other_number |= v && isdigit((unsigned char)v[0]) && value_size(v) < 0 &&
                                        !(context && strcmp(v, "0") == 0);
                }
                if (sizes < 2 || other_number || search_axis_about(s, a, SIZE_NOT_MEMORY))
                        continue;
                if (!(ret[a] = calloc(s->n_values[a], sizeof(double)))) {
                        for (size_t b = 0; b < a; b++) {
                                free(ret[b]);
                                ret[b] = NULL;
                        }
                        return -ENOMEM;
                }
                for (size_t x = 0; x < s->n_values[a]; x++)
                        ret[a][x] = context && strcmp(s->value_names[a][x], "0") == 0 ? CONTEXT_WHOLE
                                                                                     : value_size(s->value_names[a][x]);
        }
        return 0;
}

bool search_sizes_at_least(const struct search_space *s, double *const *sz, size_t k, size_t x) {
        const size_t *ck = s->choice + k * s->n_axes, *cx = s->choice + x * s->n_axes;
        for (size_t a = 0; a < s->n_axes; a++)
                if (ck[a] != cx[a] && (!sz[a] || sz[a][ck[a]] < 0 || sz[a][cx[a]] < 0 || sz[a][ck[a]] < sz[a][cx[a]]))
                        return false;
        return true;
}

bool search_axis_extremes(const struct search_space *s, size_t a, size_t *lo, size_t *hi) {
        size_t n = 0;
        double vlo = 0, vhi = 0;
        for (size_t x = 0; s->value_names && x < s->n_values[a]; x++) {
                const char *v = s->value_names[a][x];
                char *end;
                if (!v || !isdigit((unsigned char)v[0]))
                        continue;
                double d = strtod(v, &end);
                if (*end || !isfinite(d) || d == 0)
                        continue;
                if (n == 0 || d < vlo) {
                        vlo = d;
                        *lo = x;
                }
                if (n == 0 || d > vhi) {
                        vhi = d;
                        *hi = x;
                }
                n++;
        }
        return n >= 2;
}

/* Axes of the slots a context is divided among (llama.cpp's -np): more of them, less each;
 * not those of parallelism across GPUs (SIZE_NOT_MEMORY: --tensor-parallel-size). */
static const char *const SIZE_SLOTS[] = {"np", "parallel", "slots", NULL};

/* A value's size on a context axis (0: the whole context, the largest) or a slots axis;
 * -1 for a word ("auto"). */
static double context_size(const struct search_space *s, size_t a, size_t x, bool context) {
        const char *v = s->value_names ? s->value_names[a][x] : NULL;
        return context && v && strcmp(v, "0") == 0 ? CONTEXT_WHOLE : value_size(v);
}

/* Whether cell k gets no more context per request than cell j on axis a: its length no
 * longer, its slots no fewer; the same value, where either is a word. Axes of neither count
 * for nothing: the bench is the same at every cell. */
static bool context_no_more(const struct search_space *s, const int *role, size_t k, size_t j, size_t a) {
        size_t xk = s->choice[k * s->n_axes + a], xj = s->choice[j * s->n_axes + a];
        if (role[a] == 0 || xk == xj)
                return true;
        double sk = context_size(s, a, xk, role[a] > 0), sj = context_size(s, a, xj, role[a] > 0);
        if (sk < 0 || sj < 0)
                return false;
        return role[a] > 0 ? sk <= sj : sk >= sj;
}

int search_context_over(const struct search_space *s, const struct search_obs *obs, unsigned context_axes,
                        long *ret) {
        int role[16] = {0}; /* 1: a context's length, -1: slots, 0: neither */
        bool any = context_axes != 0;
        for (size_t a = 0; any && a < s->n_axes; a++)
                role[a] = (context_axes >> a) & 1u                                                      ? 1
                          : search_axis_about(s, a, SIZE_SLOTS) && !search_axis_about(s, a, SIZE_NOT_MEMORY) ? -1
                                                                                                           : 0;
        size_t n = 0;
        _cleanup_free_ size_t *refused = any ? malloc(s->n_cells * sizeof(size_t)) : NULL;
        if (any && !refused)
                return -ENOMEM;
        for (size_t j = 0; any && j < s->n_cells; j++)
                if (obs[j].state == SEARCH_INFEASIBLE && !obs[j].pending && streq_ptr(obs[j].kind, "overload/context"))
                        refused[n++] = j;
        for (size_t k = 0; k < s->n_cells; k++) {
                ret[k] = -1;
                for (size_t i = 0; i < n && ret[k] < 0 && obs[k].state == SEARCH_UNKNOWN; i++) {
                        bool past = true;
                        for (size_t a = 0; a < s->n_axes && past; a++)
                                past = context_no_more(s, role, k, refused[i], a);
                        if (past)
                                ret[k] = (long)refused[i];
                }
        }
        return 0;
}

int search_ord(const struct search_space *s, size_t a, double rho, double **ret) {
        *ret = NULL;
        size_t nv = s->n_values[a], numbers = 0;
        if (!s->value_names || rho <= 0)
                return 0;
        _cleanup_free_ double *num = calloc(nv, sizeof(double));
        if (!num)
                return -ENOMEM;
        bool context = search_axis_context(s, a);
        for (size_t x = 0; x < nv; x++)
                numbers += isfinite(num[x] = value_number(s->value_names[a][x], context));
        if (numbers < ORD_MIN_NUMBERS)
                return 0;
        double *t = calloc(nv * nv, sizeof(double));
        if (!t)
                return -ENOMEM;
        for (size_t x = 0; x < nv; x++)
                for (size_t y = 0; y < nv; y++) {
                        if (x == y) {
                                t[x * nv + y] = 1;
                                continue;
                        }
                        if (!isfinite(num[x]) || !isfinite(num[y]) || num[x] == num[y])
                                continue;
                        double lo = MIN(num[x], num[y]), hi = MAX(num[x], num[y]);
                        size_t ranks = 1;
                        for (size_t z = 0; z < nv; z++)
                                ranks += isfinite(num[z]) && num[z] > lo && num[z] < hi;
                        t[x * nv + y] = pow(rho, (double)ranks);
                }
        *ret = t;
        return 0;
}

/* The likenesses by rank the speed model weighs beside none. An engine's speed along an axis
 * of numbers (a memory share, a batch or chunk size) is a curve, a plateau or an optimum, so
 * a number not launched is told by its neighbours; where the figures say the numbers go
 * their own ways, the kernel without likeness outweighs these. Main effects and pairs both:
 * an engine's couplings of two numbers are curves too. On 600 spaces written apart from the
 * simulator the search names the best in 3 points more at a hard 10% of the grid; on the
 * simulator's, whose numbers' effects are drawn apart, it costs 2 (docs/search.md, "Numbers
 * alike by rank"). */
static const double ORD_RHO[ORD_RHOS] = {0.6, 0.9};

int search_ords(const struct search_space *s, struct search_ords *o) {
        *o = (struct search_ords){.n = 0};
        bool any = false;
        for (size_t r = 0; r < ORD_RHOS; r++)
                for (size_t a = 0; a < s->n_axes && a < ELEMENTSOF(o->t[r]); a++) {
                        if (search_ord(s, a, ORD_RHO[r], &o->t[r][a]) < 0) {
                                search_ords_free(o);
                                return -ENOMEM;
                        }
                        any |= o->t[r][a] != NULL;
                }
        o->n = any ? ORD_RHOS : 0;
        return 0;
}

void search_ords_free(struct search_ords *o) {
        for (size_t r = 0; r < ORD_RHOS; r++)
                for (size_t a = 0; a < ELEMENTSOF(o->t[r]); a++) {
                        free(o->t[r][a]);
                        o->t[r][a] = NULL;
                }
        o->n = 0;
}

struct search_agree search_alike(const struct search_space *s, const struct search_ords *o, size_t ord, size_t x,
                                 size_t y) {
        const size_t *a = s->choice + x * s->n_axes, *b = s->choice + y * s->n_axes;
        struct search_agree r = {0, 0};
        for (size_t i = 0; i < s->n_axes; i++) {
                const double *t = ord && i < ELEMENTSOF(o->t[0]) ? o->t[ord - 1][i] : NULL;
                double v = a[i] == b[i] ? 1 : t ? t[a[i] * s->n_values[i] + b[i]] : 0;
                r.m1 += v;
                r.m2 += v * v;
        }
        return r;
}
