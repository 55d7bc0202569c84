/* test_rng.c -- the one generator (splitmix64's published stream), its unbiased integers and
 * its [0, 1) doubles; the verdict colours drawn from verdict_severity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "base/verdict.h"

/* The reference stream of splitmix64 from state 0: every seeded figure rests on it. */
static void test_stream(void **state) {
        (void)state;
        uint64_t s = 0;
        assert_true(rng_next(&s) == UINT64_C(0xe220a8397b1dcdaf));
        assert_true(rng_next(&s) == UINT64_C(0x6e789e6aa1b965f4));
        assert_true(rng_next(&s) == UINT64_C(0x06c45d188009454f));
        assert_true(s == 3 * UINT64_C(0x9e3779b97f4a7c15));
}

static void test_below(void **state) {
        (void)state;
        uint64_t s = 42, before;
        size_t seen[7] = {0};
        for (int i = 0; i < 7000; i++) {
                uint64_t x = rng_below(&s, 7);
                assert_true(x < 7);
                seen[x]++;
        }
        for (size_t k = 0; k < 7; k++)
                assert_true(seen[k] > 800 && seen[k] < 1200);
        before = s;
        assert_true(rng_below(&s, 0) == 0);
        assert_true(s == before); /* no draw */
        assert_true(rng_below(&s, 1) == 0);
        /* below n, one draw is the draw modulo n (no rejection this far from the top) */
        uint64_t a = 5, b = 5;
        assert_true(rng_below(&a, 10) == rng_next(&b) % 10);
}

static void test_uniform(void **state) {
        (void)state;
        uint64_t s = 1, t = 1;
        for (int i = 0; i < 1000; i++) {
                double u = rng_uniform(&s);
                assert_true(u >= 0.0 && u < 1.0);
                assert_true(u == (double)(rng_next(&t) >> 11) * 0x1.0p-53);
        }
}

/* A worse verdict never looks milder; pass green, wrong yellow, garbage red everywhere. */
static void test_verdict_color(void **state) {
        (void)state;
        static const char *const order[] = {"\033[32m", "\033[2m", "\033[33m", "\033[31m"};
        assert_string_equal(verdict_color(VERDICT_PASS), "\033[32m");
        assert_string_equal(verdict_color(VERDICT_SKIPPED), "\033[2m");
        assert_string_equal(verdict_color(VERDICT_WRONG), "\033[33m");
        assert_string_equal(verdict_color(VERDICT_OVERLOAD), "\033[33m");
        assert_string_equal(verdict_color(VERDICT_GARBAGE), "\033[31m");
        assert_string_equal(verdict_color(VERDICT_TIMEOUT), "\033[31m");
        assert_string_equal(verdict_color(VERDICT_CRASH), "\033[31m");
        assert_string_equal(verdict_color(VERDICT_ERROR), "\033[31m");
        assert_string_equal(verdict_color(VERDICT_INVALID), "\033[31m");
        for (int a = 0; a < _VERDICT_MAX; a++)
                for (int b = 0; b < _VERDICT_MAX; b++) {
                        if (verdict_severity((enum verdict)a) > verdict_severity((enum verdict)b))
                                continue;
                        size_t ia = 0, ib = 0;
                        while (strcmp(order[ia], verdict_color((enum verdict)a)) != 0)
                                ia++;
                        while (strcmp(order[ib], verdict_color((enum verdict)b)) != 0)
                                ib++;
                        assert_true(ia <= ib);
                }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stream),
                cmocka_unit_test(test_below),
                cmocka_unit_test(test_uniform),
                cmocka_unit_test(test_verdict_color),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
