/* search_linalg.c -- the dense linear algebra of the search's models (search_int.h): a
 * Cholesky factor and the two triangular solves, on row-major n x n arrays. */
#include <errno.h>
#include <math.h>
#include <stddef.h>

#include "search/search_int.h"

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
