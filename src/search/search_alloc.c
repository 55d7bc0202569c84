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

/* The size, in bytes, written just before p ("1.06 GiB", blanks before p skipped): a number,
 * then a unit that ends at p; -1 for none. */
static double size_before(const char *evidence, const char *p) {
        while (p > evidence && p[-1] == ' ')
                p--;
        const char *u = p; /* the unit: the letters before, then the number before them */
        while (u > evidence && isalpha((unsigned char)u[-1]))
                u--;
        if (u == p)
                return -1;
        double bytes = unit_at(u); /* u..p all letters: a unit that matches ends at p */
        if (bytes <= 0)
                return -1;
        const char *q = u;
        while (q > evidence && q[-1] == ' ')
                q--;
        const char *d = q;
        while (d > evidence && (isdigit((unsigned char)d[-1]) || d[-1] == '.'))
                d--;
        if (d == q || !isdigit((unsigned char)*d))
                return -1;
        double v = strtod(d, NULL);
        return isfinite(v * bytes) && v >= 0 ? v * bytes : -1;
}

/* vLLM's KV cache that does not hold one request of max_model_len: "(16.0 GiB KV cache is
 * needed, which is larger than the available KV cache memory (3.93 GiB)". The size needed
 * is the allocation that failed, the memory available what was free for it. */
#define KV_NEEDED " KV cache is needed"
#define KV_AVAILABLE "available KV cache memory ("

double search_alloc_size(const char *evidence) {
        const char *kv = evidence ? strcasestr(evidence, KV_NEEDED) : NULL;
        double needed = kv ? size_before(evidence, kv) : -1;
        if (needed > 0)
                return needed;
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
                        if (isfinite(v * bytes) && v > 0 && bytes > 0)
                                return v * bytes;
                        if (size_word && isfinite(v) && v > 0 && !isalpha((unsigned char)*end) && *end != '_')
                                return v; /* "of size 1342177280": bytes */
                        break;            /* the first number is no size ("16 sequences", "0x7f3a"): none here */
                }
        }
        return -1;
}

/* What was free: vLLM's KV cache memory available, else the size just before "free"
 * (PyTorch: "of which 1.06 GiB is free", "3.44 MiB free"). */
double search_alloc_free(const char *evidence) {
        const char *kv = evidence ? strcasestr(evidence, KV_AVAILABLE) : NULL;
        if (kv) {
                const char *p = kv + strlen(KV_AVAILABLE);
                char *end;
                double v = strtod(p, &end);
                while (*end == ' ')
                        end++;
                double bytes = end > p && isdigit((unsigned char)*p) ? unit_at(end) : 0;
                if (isfinite(v * bytes) && v >= 0 && bytes > 0)
                        return v * bytes;
        }
        for (const char *f = evidence; f && (f = strcasestr(f, "free")); f += 4) {
                if (f == evidence || isalnum((unsigned char)f[4]) || f[4] == '_' || isalnum((unsigned char)f[-1]))
                        continue;
                const char *p = f;
                while (p > evidence && p[-1] == ' ')
                        p--;
                if (p - evidence >= 2 && strncasecmp(p - 2, "is", 2) == 0 &&
                    (p - 2 == evidence || p[-3] == ' '))
                        p -= 2;
                double v = size_before(evidence, p);
                if (v >= 0)
                        return v;
        }
        return -1;
}

/* What a line says fits: the words just before the longest context (in tokens) that the memory
 * left would hold. vLLM V1: "Based on the available memory, the estimated maximum model
 * length is 32192."; V0: "... is larger than the maximum number of tokens that can be stored
 * in KV cache (77584)." */
static const char *const ROOM_WORDS[] = {
        "maximum model length is",
        "maximum number of tokens that can be stored in KV cache",
};

double search_alloc_room(const char *evidence, const char **ret_sentence) {
        for (size_t w = 0; evidence && w < ELEMENTSOF(ROOM_WORDS); w++) {
                const char *at = strcasestr(evidence, ROOM_WORDS[w]), *p = at;
                if (!p)
                        continue;
                p += strlen(ROOM_WORDS[w]);
                while (*p == ' ' || *p == '(')
                        p++;
                if (!isdigit((unsigned char)*p))
                        continue;
                /* a whole number, its thousands perhaps set apart by commas ("10,240") */
                double v = 0;
                for (; isdigit((unsigned char)*p) || (*p == ',' && isdigit((unsigned char)p[1])); p++)
                        if (*p != ',')
                                v = v * 10 + (*p - '0');
                if (*p == '.' && isdigit((unsigned char)p[1]))
                        continue; /* not a whole number of tokens */
                if (isalnum((unsigned char)*p) || *p == '_' || !isfinite(v))
                        continue;
                if (ret_sentence) {
                        /* the sentence that says it: after the last ". " before the words */
                        while (at > evidence && !(at[-1] == ' ' && at - 1 > evidence && at[-2] == '.'))
                                at--;
                        *ret_sentence = at;
                }
                return v;
        }
        return -1;
}

/* Whether two sizes read from lines are one (the same figure, printed alike). */
static bool same_size(double x, double y) {
        return fabs(x - y) <= 1e-6 * MAX(x, y);
}

/* Whether two lines' free memory is one: both unsaid, or both said and alike to a hundredth
 * of the allocation (a line rounds; a change of headroom that small decides nothing). */
static bool same_free(double x, double y, double size) {
        if (x < 0 || y < 0)
                return x < 0 && y < 0;
        return fabs(x - y) <= 0.01 * size;
}

typedef uint32_t axes_t; /* a set of axes (at most 16: fit_sizes) */

struct ran_out {
        size_t cell;
        double size, free;
        size_t family; /* index of its line's signature, numbers taken out, among them */
        axes_t alike;  /* the axes its family shows alike at its size (alike_at) */
};

static axes_t differ(const struct search_space *s, size_t x, size_t y) {
        const size_t *cx = s->choice + x * s->n_axes, *cy = s->choice + y * s->n_axes;
        axes_t d = 0;
        for (size_t a = 0; a < s->n_axes; a++)
                if (cx[a] != cy[a])
                        d |= (axes_t)1 << a;
        return d;
}

/* The axes on which cell y holds a larger size than cell x (sz: search_sizes). */
static axes_t larger(const struct search_space *s, double *const *sz, size_t x, size_t y) {
        const size_t *cx = s->choice + x * s->n_axes, *cy = s->choice + y * s->n_axes;
        axes_t d = 0;
        for (size_t a = 0; a < s->n_axes; a++)
                if (cx[a] != cy[a] && sz[a] && sz[a][cx[a]] >= 0 && sz[a][cy[a]] >= sz[a][cx[a]])
                        d |= (axes_t)1 << a;
        return d;
}

/* Of the axes inv, those shown alike (shown_at) at size or a smaller one: alike for a cell
 * that ran out at size. An allocation that failed whatever an axis's value says nothing of a
 * smaller one, which the room one value leaves may still hold. */
static axes_t alike_at(axes_t inv, const double *shown_at, size_t n_axes, double size) {
        for (size_t a = 0; a < n_axes; a++)
                if (shown_at[a] > size && !same_size(shown_at[a], size))
                        inv &= ~((axes_t)1 << a);
        return inv;
}

/* The axes that the cells of family f (one line, its numbers taken out) show do not change
 * that allocation: two of them failed at one size, with one free memory where the line says
 * it, and differ on them; shown_at[a], the smallest size that showed axis a so. Less those
 * that a change of size follows (two cells of other sizes that differ on such axes alone),
 * those on which two cells of one size that the line says had other free memory differ alone,
 * and those a cell that loaded says can save it (it differs from one that ran out only on
 * such axes shown at that one's size or a smaller one, or by larger sizes). None where the
 * family failed at one size alone: a fixed chunk says nothing of which allocation it was. */
static axes_t family_invariant(const struct search_space *s, const struct ran_out *r, size_t n, size_t f,
                               const size_t *in, size_t n_in, double *const *sz, double *shown_at) {
        axes_t inv = 0, blocked = 0;
        for (size_t a = 0; a < s->n_axes; a++)
                shown_at[a] = INFINITY;
        const struct ran_out *first = NULL;
        bool two = false;
        for (size_t i = 0; i < n && !two; i++)
                if (r[i].family == f) {
                        two = first && !same_size(first->size, r[i].size);
                        first = first ? first : &r[i];
                }
        if (!two)
                return 0;
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        if (r[i].family == f && r[j].family == f && same_size(r[i].size, r[j].size) &&
                            same_free(r[i].free, r[j].free, r[i].size)) {
                                axes_t d = differ(s, r[i].cell, r[j].cell);
                                inv |= d;
                                for (size_t a = 0; a < s->n_axes; a++)
                                        if (d >> a & 1)
                                                shown_at[a] = MIN(shown_at[a], MIN(r[i].size, r[j].size));
                        }
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++) {
                        if (r[i].family != f || r[j].family != f)
                                continue;
                        /* other sizes, or one size and other free memory: one of the axes
                         * they differ on changes the allocation or what was left for it */
                        if (same_size(r[i].size, r[j].size) && same_free(r[i].free, r[j].free, r[i].size))
                                continue;
                        axes_t d = differ(s, r[i].cell, r[j].cell);
                        if (d && (d & ~inv) == 0)
                                blocked |= d;
                }
        inv &= ~blocked;
        /* a cell that loaded, differing from one that ran out only on axes alike at that one's
         * size (or by larger sizes): one of them saved it. Pairs that name fewest such axes
         * first, all of them at once (one axis: that one saved it), then again with what is
         * left, so that the order the cells came in decides nothing */
        for (;;) {
                size_t fewest = SIZE_MAX;
                axes_t drop = 0;
                for (size_t i = 0; i < n; i++) {
                        if (r[i].family != f)
                                continue;
                        axes_t here = alike_at(inv, shown_at, s->n_axes, r[i].size);
                        for (size_t j = 0; j < n_in && here; j++) {
                                axes_t d = differ(s, r[i].cell, in[j]), big = larger(s, sz, r[i].cell, in[j]);
                                if ((d & ~(here | big)) != 0 || !(d & here))
                                        continue;
                                size_t k = (size_t)__builtin_popcount(d & here);
                                if (k < fewest) {
                                        fewest = k;
                                        drop = 0;
                                }
                                if (k == fewest)
                                        drop |= d & here;
                        }
                }
                if (!drop)
                        break;
                inv &= ~drop;
        }
        return inv;
}

int search_alloc_predict(const struct search_space *s, const struct search_obs *obs, const size_t *out,
                         const double *out_size, size_t n_out, const size_t *in, size_t n_in, double *const *sz,
                         long *mem_over, const long *mem_under, bool *by_alloc) {
        size_t A = s->n_axes, n = 0, n_fam = 0;
        if (A > 16)
                return 0;
        _cleanup_free_ struct ran_out *r = calloc(n_out ? n_out : 1, sizeof(*r));
        _cleanup_free_ char **sig = calloc(n_out ? n_out : 1, sizeof(char *));
        _cleanup_free_ axes_t *inv = calloc(n_out ? n_out : 1, sizeof(axes_t));
        _cleanup_free_ double *shown_at = calloc((n_out ? n_out : 1) * A, sizeof(double));
        int ret = 0;
        if (!r || !sig || !inv || !shown_at)
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
                r[n++] = (struct ran_out){out[i], size, search_alloc_free(o->evidence), f, 0};
        }
        if (n < 2)
                goto done;
        bool any = false;
        for (size_t f = 0; f < n_fam; f++)
                any |= (inv[f] = family_invariant(s, r, n, f, in, n_in, sz, shown_at + f * A)) != 0;
        if (!any)
                goto done;
        for (size_t i = 0; i < n; i++)
                r[i].alike = alike_at(inv[r[i].family], shown_at + r[i].family * A, A, r[i].size);
        for (size_t k = 0; k < s->n_cells; k++) {
                if (obs[k].state != SEARCH_UNKNOWN || mem_over[k] >= 0 || mem_under[k] >= 0)
                        continue;
                for (size_t i = 0; i < n && mem_over[k] < 0; i++) {
                        axes_t d = differ(s, r[i].cell, k);
                        if ((d & ~(r[i].alike | larger(s, sz, r[i].cell, k))) == 0) {
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
