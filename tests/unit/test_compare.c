/* test_compare.c -- the bootstrap compare.c judges a change by (docs/compare.md): equal
 * samples give an interval around 0, samples one and a half times as fast an interval
 * around +50% that excludes 0, a quantile and a mean of times, too few samples refused. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/rng.h"
#include "results/compare.h"

#define N 40

/* n request times around mean ms (+-20%, seeded), each with w tokens */
static void draw(double *w, double *t, size_t n, double mean, uint64_t seed) {
        uint64_t s = seed;
        for (size_t i = 0; i < n; i++) {
                w[i] = 16;
                t[i] = mean * (0.8 + 0.4 * rng_uniform(&s));
        }
}

static void test_unchanged(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 100, 1);
        draw(wb, tb, N, 100, 2);
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p, &lo, &hi), 0);
        assert_true(lo < 0 && hi > 0);
        assert_true(lo <= p && p <= hi);
        assert_true(hi - lo < 0.15);
}

static void test_faster(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 150, 1);
        draw(wb, tb, N, 100, 2);
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p, &lo, &hi), 0);
        /* tokens per ms: 1.5 times the old rate */
        assert_true(fabs(p - 0.5) < 0.08);
        assert_true(lo > 0.3 && hi < 0.7 && lo < p && p < hi);
        /* the same seed, the same interval */
        double p2, lo2, hi2;
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p2, &lo2, &hi2), 0);
        assert_true(lo2 == lo && hi2 == hi);
}

static void test_times(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 100, 1);
        draw(wb, tb, N, 120, 2);
        /* the mean time, and the median: 20% more, both */
        assert_int_equal(compare_bootstrap(NULL, ta, N, NULL, tb, N, NAN, 1000, 3, &p, &lo, &hi), 0);
        assert_true(p > 0.1 && p < 0.3 && lo > 0);
        assert_int_equal(compare_bootstrap(NULL, ta, N, NULL, tb, N, 0.5, 1000, 3, &p, &lo, &hi), 0);
        assert_true(p > 0.05 && p < 0.35 && lo < p && p < hi);
}

static void test_too_few(void **state) {
        (void)state;
        double w[N], t[N], p, lo, hi;
        draw(w, t, N, 100, 1);
        assert_int_equal(compare_bootstrap(w, t, COMPARE_MIN_SAMPLES - 1, w, t, N, NAN, 100, 1, &p, &lo, &hi),
                         -EINVAL);
        assert_int_equal(compare_bootstrap(w, t, N, w, t, COMPARE_MIN_SAMPLES, NAN, 100, 1, &p, &lo, &hi), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unchanged),
                cmocka_unit_test(test_faster),
                cmocka_unit_test(test_times),
                cmocka_unit_test(test_too_few),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
