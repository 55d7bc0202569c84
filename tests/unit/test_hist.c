/* test_hist.c -- the log-linear histogram against exact percentiles of random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hist.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t xorshift(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* Nearest rank, the definition hist_percentile documents. */
static uint64_t exact(const uint64_t *sorted, size_t n, double p) {
        size_t rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
        if (rank < 1)
                rank = 1;
        return sorted[rank - 1];
}

static void check_against_exact(uint64_t *v, size_t n) {
        struct hist h;
        assert_int_equal(hist_init(&h), 0);
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
                hist_record(&h, v[i]);
                sum += (double)v[i];
        }
        qsort(v, n, sizeof(*v), cmp_u64);
        assert_int_equal(h.count, n);
        assert_int_equal(h.min, v[0]);
        assert_int_equal(h.max, v[n - 1]);
        assert_true(fabs(hist_mean(&h) - sum / (double)n) <= 1e-9 * sum / (double)n);
        const double ps[] = {1, 10, 25, 50, 75, 90, 99, 99.9, 99.99};
        for (size_t i = 0; i < ELEMENTSOF(ps); i++) {
                uint64_t e = exact(v, n, ps[i]);
                uint64_t got = hist_percentile(&h, ps[i]);
                double rel = e ? fabs((double)got - (double)e) / (double)e : (double)got;
                /* The bucket precision: half a bucket, at most 1/2048 of the value. */
                if (rel > 1.0 / 2048 + 1e-12)
                        fail_msg("p%g: exact %llu, histogram %llu (rel %g)", ps[i], (unsigned long long)e,
                                 (unsigned long long)got, rel);
        }
        assert_int_equal(hist_percentile(&h, 100), v[n - 1]);
        assert_int_equal(hist_percentile(&h, 0), v[0]);
        hist_release(&h);
}

static void test_uniform_wide(void **state) {
        size_t n = 200000;
        uint64_t *v = malloc(n * sizeof(*v));
        assert_non_null(v);
        for (size_t i = 0; i < n; i++)
                v[i] = xorshift() % (3600ULL * 1000000); /* up to an hour in microseconds */
        check_against_exact(v, n);
        free(v);
}

static void test_lognormal_latencies(void **state) {
        /* Latency-like: heavy tail over five decades, many values below the exact range. */
        size_t n = 100000;
        uint64_t *v = malloc(n * sizeof(*v));
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) {
                double u1 = ((double)(xorshift() >> 11) + 1) / 9007199254740993.0;
                double u2 = ((double)(xorshift() >> 11) + 1) / 9007199254740993.0;
                double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
                v[i] = (uint64_t)exp(8.0 + 2.5 * z);
        }
        check_against_exact(v, n);
        free(v);
}

static void test_small_values_exact(void **state) {
        struct hist h;
        assert_int_equal(hist_init(&h), 0);
        for (uint64_t i = 1; i <= 1000; i++)
                hist_record(&h, i);
        assert_int_equal(hist_percentile(&h, 50), 500);
        assert_int_equal(hist_percentile(&h, 99), 990);
        assert_int_equal(hist_percentile(&h, 99.9), 999);
        assert_true(fabs(hist_mean(&h) - 500.5) < 1e-9);
        hist_reset(&h);
        assert_int_equal(h.count, 0);
        assert_int_equal(hist_percentile(&h, 50), 0);
        hist_release(&h);
}

static void test_buckets(void **state) {
        assert_int_equal(hist_bucket_of(HIST_MAX), HIST_BUCKETS - 1);
        for (int i = 0; i < 100000; i++) {
                uint64_t v = xorshift() >> (xorshift() % 64);
                if (v > HIST_MAX)
                        v &= HIST_MAX;
                uint64_t lo, hi;
                size_t b = hist_bucket_of(v);
                assert_true(b < HIST_BUCKETS);
                hist_bucket_range(b, &lo, &hi);
                assert_true(lo <= v && v <= hi);
                if (v >= HIST_SUB)
                        assert_true((double)(hi - lo + 1) / (double)lo <= 1.0 / 1024);
        }
        /* Buckets tile the range with no gap. */
        uint64_t prev_hi = 0;
        for (size_t b = 1; b < HIST_BUCKETS; b++) {
                uint64_t lo, hi;
                hist_bucket_range(b, &lo, &hi);
                assert_int_equal(lo, prev_hi + 1);
                prev_hi = hi;
        }
        assert_int_equal(prev_hi, HIST_MAX);
}

static void test_clamp(void **state) {
        struct hist a;
        assert_int_equal(hist_init(&a), 0);
        for (int i = 0; i < 5000; i++)
                hist_record(&a, xorshift() % 10000000);
        assert_int_equal(a.clamped, 0);
        hist_record(&a, UINT64_MAX);
        assert_int_equal(a.count, 5001);
        assert_int_equal(a.clamped, 1);
        assert_int_equal(a.max, HIST_MAX);
        assert_int_equal(hist_percentile(&a, 100), HIST_MAX);
        hist_release(&a);
}

/* Two histograms merged answer as one that recorded every sample. */
static void test_merge(void **state) {
        struct hist one = {0}, a = {0}, b = {0};
        assert_int_equal(hist_init(&one), 0);
        assert_int_equal(hist_init(&a), 0);
        assert_int_equal(hist_init(&b), 0);
        for (int i = 0; i < 20000; i++) {
                uint64_t v = xorshift() % 5000000;
                hist_record(&one, v);
                hist_record(i % 3 ? &a : &b, v);
        }
        hist_record(&one, HIST_MAX + 5);
        hist_record(&b, HIST_MAX + 5);
        hist_merge(&a, &b);
        assert_int_equal(a.count, one.count);
        assert_int_equal(a.clamped, 1);
        assert_int_equal(a.min, one.min);
        assert_int_equal(a.max, one.max);
        for (double p = 0; p <= 100; p += 0.5)
                assert_int_equal(hist_percentile(&a, p), hist_percentile(&one, p));
        assert_true(fabs(hist_mean(&a) - hist_mean(&one)) < 1e-6 * hist_mean(&one));
        /* an empty one changes nothing */
        hist_reset(&b);
        hist_merge(&a, &b);
        assert_int_equal(a.count, one.count);
        hist_release(&one);
        hist_release(&a);
        hist_release(&b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_uniform_wide),
                cmocka_unit_test(test_lognormal_latencies),
                cmocka_unit_test(test_small_values_exact),
                cmocka_unit_test(test_buckets),
                cmocka_unit_test(test_clamp),
                cmocka_unit_test(test_merge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
