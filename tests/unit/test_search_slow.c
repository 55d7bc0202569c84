/* test_search_slow.c -- the search (search.h) on many drawn spaces (search_sim.h): the
 * slow tier (tests/run slow); test_search.c keeps a quick few. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "search/search.h"
#include "../../tools/search_sim.h"
#include "base/util.h"

static int cmp_double(const void *x, const void *y) {
        double a = *(const double *)x, b = *(const double *)y;
        return a < b ? -1 : a > b;
}

/* (b) drawn spaces of 200 to 800 cells: the search without a budget names a cell within
 * 3% of the true best in at least 85% of them, with a median of at most 15% of the grid.
 * A guard of the level measured (docs/search.md: 94.4% over 160 such spaces), not the goal of
 * 95%, which the search does not reach yet. */
#define DRAWN_SPACES 30
static void test_drawn_spaces(void **state) {
        (void)state;
        /* at most 800 cells: the search's fit grows with cells x launches^2, and a unit
         * test has to stay quick (tools/search-bench.c covers up to 2,000) */
        struct sim_params p = {.min_cells = 200, .max_cells = 800};
        size_t ok = 0;
        double share[DRAWN_SPACES];
        for (size_t i = 0; i < DRAWN_SPACES; i++) {
                struct sim_space *s = NULL;
                uint64_t seed = sim_seed_mix(2024, i);
                assert_int_equal(sim_space_generate(seed, &p, &s), 0);
                struct sim_result r;
                assert_int_equal(sim_run(s, SIM_SEARCH, NULL, seed, &r), 0);
                share[i] = (double)r.launches / (double)sim_space_cells(s);
                ok += r.success;
                if (!r.success)
                        print_message("space %" PRIu64 " (%zu cells): named %ld at %.3fx the best after %zu launches\n",
                                      seed, sim_space_cells(s), r.named, r.named_speed / r.best_speed, r.launches);
                sim_space_free(s);
        }
        qsort(share, DRAWN_SPACES, sizeof(double), cmp_double);
        double median = share[DRAWN_SPACES / 2];
        print_message("%zu of %d spaces within 3%%; median %.1f%% of the grid\n", ok, DRAWN_SPACES, 100 * median);
        assert_true(ok * 100 >= DRAWN_SPACES * 85);
        assert_true(median <= 0.15);
}

/* (c) A space whose memory runs out where a size and a share meet (1,800 cells, `oom
 * bs+mem`): the cells of sizes past one that ran out are never launched, and their chance
 * (only that the engine proves the rule wrong) does not keep the search from stopping.
 * Counted in the stop, it kept going past 880 launches, where it stops at about 200 (229
 * before the sizes rule). */
static void test_sizes_stop(void **state) {
        (void)state;
        struct sim_params p = {.min_cells = 200};
        struct sim_space *s = NULL;
        uint64_t seed = 6565190562182731026u;
        assert_int_equal(sim_space_generate(seed, &p, &s), 0);
        assert_int_equal(sim_space_cells(s), 1800);
        struct sim_result r;
        assert_int_equal(sim_run(s, SIM_SEARCH, NULL, sim_seed_mix(seed, 12), &r), 0);
        print_message("%zu launches (%zu failed), named %ld at %.3fx the best, stop: %s\n", r.launches, r.failed,
                      r.named, r.named_speed / r.best_speed, r.stop ? r.stop : "-");
        assert_non_null(r.stop);
        assert_string_equal(r.stop, "no chance left");
        assert_true(r.launches <= 360);
        assert_true(r.named >= 0);
        sim_space_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_drawn_spaces),
                cmocka_unit_test(test_sizes_stop),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
