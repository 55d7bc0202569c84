/* test_infer.c -- which cells an architecture crash decides (infer.h), on small grids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "run/infer.h"

/* Two axes, 3 x 3: choice[i] = {i / 3, i % 3}. */
static size_t choice[9][2];

static void grid(struct infer_cell c[9]) {
        for (size_t i = 0; i < 9; i++) {
                choice[i][0] = i / 3;
                choice[i][1] = i % 3;
                c[i] = (struct infer_cell){.choice = choice[i]};
        }
}

static void test_neighbour(void **state) {
        (void)state;
        struct infer_cell c[9];
        size_t axis = 9, by[INFER_MAX_BY], n_by = 0;
        grid(c);
        /* (1,0) crashed with arch; (0,0) ran fine and differs in axis 0 alone */
        c[3].known = c[3].arch = true;
        assert_int_equal(infer_decided(c, 9, 2, 4, &axis, by, &n_by), 0); /* no fine neighbour yet */
        c[0].known = c[0].fine = true;
        assert_int_equal(infer_decided(c, 9, 2, 4, &axis, by, &n_by), 1);
        assert_int_equal(axis, 0);
        assert_int_equal(n_by, 1);
        assert_int_equal(by[0], 3);
        assert_int_equal(infer_decided(c, 9, 2, 5, &axis, by, &n_by), 1); /* (1,2) too */
        assert_int_equal(infer_decided(c, 9, 2, 7, &axis, by, &n_by), 0); /* (2,1): another value */
        /* a fine cell two axes apart pins nothing */
        grid(c);
        c[4].known = c[4].arch = true; /* (1,1) */
        c[0].known = c[0].fine = true; /* (0,0) */
        assert_int_equal(infer_decided(c, 9, 2, 5, &axis, by, &n_by), 0);
}

static void test_spread(void **state) {
        (void)state;
        struct infer_cell c[9];
        size_t axis = 9, by[INFER_MAX_BY], n_by = 0;
        grid(c);
        /* axis 1 value 2 crashed beside two values of axis 0, nothing ran fine */
        c[2].known = c[2].arch = true; /* (0,2) */
        assert_int_equal(infer_decided(c, 9, 2, 5, &axis, by, &n_by), 0);
        c[5].known = c[5].arch = true; /* (1,2) */
        assert_int_equal(infer_decided(c, 9, 2, 8, &axis, by, &n_by), 1); /* (2,2) */
        assert_int_equal(axis, 1);
        assert_int_equal(n_by, 2);
        /* other values of axis 1 stay undecided; (2,0) has axis 0 value 2, never crashed */
        assert_int_equal(infer_decided(c, 9, 2, 6, &axis, by, &n_by), 0);
        /* one axis: nothing else has the value, nothing to infer */
        size_t one[2] = {0, 0};
        struct infer_cell d[2] = {{.choice = &one[0], .known = true, .arch = true}, {.choice = &one[1]}};
        assert_int_equal(infer_decided(d, 2, 1, 1, &axis, by, &n_by), 0);
}

/* A value some cell ran fine with is never pinned, however its arch crashes spread: the
 * crashes were the other values' doing (seen on the testbed: moe=tcgen05 and gemm=tcgen05
 * crashed beside threads=4, which had served with moe=gemm=reference). */
static void test_served_value(void **state) {
        (void)state;
        struct infer_cell c[9];
        size_t axis = 9, by[INFER_MAX_BY], n_by = 0;
        grid(c);
        c[2].known = c[2].arch = true; /* (0,2) */
        c[5].known = c[5].arch = true; /* (1,2) */
        assert_int_equal(infer_decided(c, 9, 2, 8, &axis, by, &n_by), 1); /* spread: (2,2) decided */
        c[8].known = c[8].fine = true; /* yet (2,2) ran fine */
        assert_int_equal(infer_decided(c, 9, 2, 8, &axis, by, &n_by), 0);
        /* and the neighbour rule likewise: (1,0) crashed next to a fine (0,0), but (1,1) ran fine */
        grid(c);
        c[3].known = c[3].arch = true;
        c[0].known = c[0].fine = true;
        assert_int_equal(infer_decided(c, 9, 2, 5, &axis, by, &n_by), 1);
        c[4].known = c[4].fine = true;
        assert_int_equal(infer_decided(c, 9, 2, 5, &axis, by, &n_by), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_neighbour),
                cmocka_unit_test(test_spread),
                cmocka_unit_test(test_served_value),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
