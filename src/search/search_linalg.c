/* search_linalg.c -- the dense linear algebra of the search's models (search_int.h): a
 * Cholesky factor and the two triangular solves, on row-major n x n arrays, and the speed
 * model's kernel, its factoring for one choice of hyper-parameters, and the grid of them. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "search/search_int.h"

#include "base/util.h"

/* Cholesky of the n x n matrix in place (lower); -EDOM when not positive definite. */
int search_cholesky(double *a, size_t n) {
        for (size_t j = 0; j < n; j++) {
                double d = a[j * n + j];
                for (size_t k = 0; k < j; k++)
                        d -= a[j * n + k] * a[j * n + k];
                if (d <= 0)
                        return -EDOM;
                d = sqrt(d);
                a[j * n + j] = d;
                for (size_t i = j + 1; i < n; i++) {
                        double v = a[i * n + j];
                        for (size_t k = 0; k < j; k++)
                                v -= a[i * n + k] * a[j * n + k];
                        a[i * n + j] = v / d;
                }
        }
        return 0;
}

/* Solves L x = b in place. */
void search_forward(const double *l, size_t n, double *b) {
        for (size_t i = 0; i < n; i++) {
                double v = b[i];
                for (size_t k = 0; k < i; k++)
                        v -= l[i * n + k] * b[k];
                b[i] = v / l[i * n + i];
        }
}

/* Solves L^T x = b in place. */
void search_backward(const double *l, size_t n, double *b) {
        for (size_t i = n; i-- > 0;) {
                double v = b[i];
                for (size_t k = i + 1; k < n; k++)
                        v -= l[k * n + i] * b[k];
                b[i] = v / l[i * n + i];
        }
}

/* k(x, x') = S0 + s1 * m1 + s2 * (m1^2 - m2) / 2: a constant, one kernel per axis (main
 * effects; an indicator, or on an axis of numbers a likeness by rank) and their products by
 * pairs of axes (pair interactions). With indicators alone m2 = m1, the number of axes x and
 * x' agree on, and the pair term is m (m - 1) / 2. */
#define S0 0.05
double search_kern(double s1, double s2, struct search_agree a) {
        return S0 + s1 * a.m1 + s2 * (a.m1 * a.m1 - a.m2) / 2;
}

int search_gp_fit(const struct search_agree *agree_obs, const double *y, const double *per, size_t n,
                  struct search_gp *g) {
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++) {
                        double v = search_kern(g->s1, g->s2, agree_obs[i * n + j]);
                        if (i == j)
                                v += g->noise * g->noise * per[i] + 1e-9;
                        g->l[i * n + j] = v;
                }
        int r = search_cholesky(g->l, n);
        if (r < 0)
                return r;
        memcpy(g->alpha, y, n * sizeof(double));
        search_forward(g->l, n, g->alpha);
        double fit = 0, logdet = 0;
        for (size_t i = 0; i < n; i++) {
                fit += g->alpha[i] * g->alpha[i];
                logdet += log(g->l[i * n + i]);
        }
        g->lml = -0.5 * fit - logdet;
        search_backward(g->l, n, g->alpha);
        return 0;
}

/* The hyper-parameters tried: the variance of one axis's main effect, of one pair
 * interaction, and the noise's sd (all in log units). Their posterior weights, by marginal
 * likelihood under a flat prior, average the predictions: with few figures, large effects
 * are not ruled out, so the model does not stop early on a guess. */
static const double S1[] = {0.004, 0.02, 0.06, 0.15}, S2[] = {0.004, 0.02, 0.06, 0.12}, NOISE[] = {0.01, 0.025, 0.06};
_Static_assert(ELEMENTSOF(S1) * ELEMENTSOF(S2) * ELEMENTSOF(NOISE) == SEARCH_N_HYPER, "the grid's size");

double search_gp_grid(const struct search_agree *ag, size_t n_ord, const double *y, const double *per, size_t n,
                      double *ls, double *alphas, struct search_gp *g) {
        size_t h = 0;
        double top = -INFINITY;
        for (size_t o = 0; o < n_ord; o++)
                for (size_t a = 0; a < ELEMENTSOF(S1); a++)
                        for (size_t b = 0; b < ELEMENTSOF(S2); b++)
                                for (size_t c = 0; c < ELEMENTSOF(NOISE); c++, h++) {
                                        g[h] = (struct search_gp){.s1 = S1[a], .s2 = S2[b], .noise = NOISE[c],
                                                                  .ord = o, .l = ls + h * n * n,
                                                                  .alpha = alphas + h * n};
                                        if (search_gp_fit(ag + o * n * n, y, per, n, &g[h]) < 0)
                                                g[h].lml = -INFINITY;
                                        top = MAX(top, g[h].lml);
                                }
        return top;
}
