/* test_search.c -- the search (search.h) driven by simulated spaces (search_sim.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/search_int.h"
#include "../../tools/search_sim.h"
#include "base/util.h"

/* ---- the simulator itself ---- */

static void test_sim_generate(void **state) {
        (void)state;
        struct sim_params p = {0};
        size_t below_share = 0;
        for (uint64_t i = 0; i < 200; i++) {
                struct sim_space *a = NULL, *b = NULL;
                uint64_t seed = sim_seed_mix(7, i);
                assert_int_equal(sim_space_generate(seed, &p, &a), 0);
                assert_int_equal(sim_space_generate(seed, &p, &b), 0);
                size_t n = sim_space_cells(a);
                assert_true(n >= 50 && n <= 2000);
                assert_int_equal(n, sim_space_cells(b));
                double share = sim_space_feasible_share(a);
                assert_true(share >= 0.2 && share <= 0.8);
                below_share += share < 0.5;
                /* the same seed, the same space: truth and names */
                _cleanup_free_ char *da = sim_space_describe(a), *db = sim_space_describe(b);
                assert_non_null(da);
                assert_string_equal(da, db);
                for (size_t k = 0; k < n; k++) {
                        assert_true(sim_cell_speed(a, k) == sim_cell_speed(b, k));
                        assert_int_equal(sim_cell_fail(a, k), sim_cell_fail(b, k));
                }
                struct search_space v;
                sim_space_view(a, &v);
                assert_true(v.n_axes >= 3 && v.n_axes <= 7);
                assert_int_equal(v.first, 0);
                assert_true(v.higher_better);
                for (size_t ax = 0; ax < v.n_axes; ax++) {
                        assert_true(v.n_values[ax] >= 2 && v.n_values[ax] <= 8);
                        assert_int_equal(v.choice[ax], 0); /* the defaults cell */
                        assert_string_equal(v.value_names[ax][0], "auto");
                        assert_true(startswith(v.axis_flags[ax], "--"));
                }
                size_t best;
                double best_speed;
                sim_true_best(a, &best, &best_speed);
                assert_int_equal(sim_cell_fail(a, best), SIM_FAIL_NONE);
                for (size_t k = 0; k < n; k++)
                        if (sim_cell_fail(a, k) == SIM_FAIL_NONE)
                                assert_true(sim_cell_speed(a, k) <= best_speed);
                sim_space_free(a);
                sim_space_free(b);
        }
        /* shares spread over the range, not piled at one end */
        assert_true(below_share > 20 && below_share < 180);
}

static void test_sim_launch(void **state) {
        (void)state;
        const size_t nv[] = {3, 3, 2};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, NULL, &s), 0);
        struct sim_term arch = {1, 2};
        struct sim_term req[2] = {{0, 1}, {2, 1}};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_ARCH, &arch, 1), 0);
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_REQUIRES, req, 2), 0);
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_REQUIRES, req, 1), -EINVAL);
        assert_int_equal(sim_space_set_effect(s, 0, 2, log(2.0)), 0);
        sim_space_set_speed(s, 100, 0);
        assert_int_equal(sim_space_finish(s), 0);
        assert_int_equal(sim_space_cells(s), 18);
        uint64_t rng = 1;
        struct search_obs o;
        double sec;
        /* a0=v1 a1=auto a2=auto: v1 of --flag-a0 requires --flag-a2 v1 */
        assert_int_equal(sim_launch(s, 6, &rng, &o, &sec), 0);
        assert_int_equal(o.state, SEARCH_INFEASIBLE);
        assert_string_equal(o.kind, "crash/config");
        assert_string_equal(o.evidence, "ValueError: --flag-a0 v1 requires --flag-a2 v1");
        assert_int_equal(sim_launch(s, 7, &rng, &o, &sec), 0);
        assert_int_equal(o.state, SEARCH_FEASIBLE);
        assert_int_equal(sim_launch(s, 2 * 6 + 2 * 2, &rng, &o, &sec), 0);
        assert_string_equal(o.kind, "crash/arch");
        assert_non_null(strstr(o.evidence, "no kernel image"));
        assert_int_equal(sim_launch(s, 12, &rng, &o, &sec), 0);
        assert_int_equal(o.state, SEARCH_FEASIBLE);
        assert_true(o.has_value && fabs(o.value - 200) < 1e-9);  /* no noise */
        assert_true(sec > 0);
        assert_int_equal(sim_launch(s, 18, &rng, &o, &sec), -EINVAL);
        sim_space_free(s);
}

/* A space whose out-of-memory lines say their sizes (sim_space_set_oom_sizes): axes 0 and 1
 * allocate in that order, and the first to take the sum past the limit fails with its own
 * size; a cell is out of memory by sim_cell_oom; without sizes every cell prints one line.
 * With what was free (sim_space_set_oom_free, sizes 2), the line says what the axes before
 * left: two cells failing at one allocation after other values of axis 0 say other free. */
static void test_sim_oom_sizes(void **state) {
        (void)state;
        const size_t nv[] = {3, 3, 2};
        for (int sizes = 0; sizes < 3; sizes++) {
                struct sim_space *s = NULL;
                assert_int_equal(sim_space_new(3, nv, NULL, &s), 0);
                for (size_t v = 1; v < 3; v++) {
                        assert_int_equal(sim_space_set_memory(s, 0, v, 0.5 * (double)v), 0);
                        assert_int_equal(sim_space_set_memory(s, 1, v, 0.5 * (double)v), 0);
                }
                sim_space_set_memory_limit(s, 1.2);
                sim_space_set_oom_sizes(s, sizes >= 1);
                sim_space_set_oom_free(s, sizes == 2);
                sim_space_set_speed(s, 100, 0);
                assert_int_equal(sim_space_finish(s), 0);
                assert_int_equal(sim_space_oom_sizes(s), sizes >= 1);
                assert_int_equal(sim_space_oom_free(s), sizes == 2);
                uint64_t rng = 1;
                struct search_obs o[4];
                /* a0=v2 a1=v1 (1.0 + 0.5) and a0=v2 a1=v2 (1.0 + 1.0) fail at a1's allocation, each
                 * its size; a0=v1 a1=v2 (0.5 + 1.0) fails there too, at a1=v2's size; a0=v1 a1=v1
                 * fits */
                const size_t cells[4] = {2 * 6 + 1 * 2, 2 * 6 + 2 * 2 + 1, 1 * 6 + 2 * 2, 1 * 6 + 1 * 2};
                for (size_t i = 0; i < 4; i++)
                        assert_int_equal(sim_launch(s, cells[i], &rng, &o[i], NULL), 0);
                for (size_t i = 0; i < 3; i++) {
                        assert_true(sim_cell_oom(s, cells[i]));
                        assert_string_equal(o[i].kind, "crash/oom");
                        assert_true(search_alloc_size(o[i].evidence) > 0);
                }
                assert_false(sim_cell_oom(s, cells[3]));
                assert_int_equal(o[3].state, SEARCH_FEASIBLE);
                print_message("sizes %d: %s | %s | %s\n", sizes, o[0].evidence, o[1].evidence, o[2].evidence);
                for (size_t i = 0; i < 3; i++)
                        assert_int_equal(search_alloc_free(o[i].evidence) >= 0, sizes == 2);
                if (sizes) {
                        assert_true(search_alloc_size(o[0].evidence) < search_alloc_size(o[1].evidence));
                        assert_true(search_alloc_size(o[1].evidence) == search_alloc_size(o[2].evidence));
                }
                if (sizes == 1)
                        assert_string_equal(o[1].evidence, o[2].evidence);
                if (sizes == 2) {
                        /* 1.2 - 1.0 and 1.2 - 0.5 left, 6 GiB to the share */
                        assert_true(fabs(search_alloc_free(o[1].evidence) - 0.2 * 6 * 1073741824.0) < 0.01 * 1073741824.0);
                        assert_true(fabs(search_alloc_free(o[2].evidence) - 0.7 * 6 * 1073741824.0) < 0.01 * 1073741824.0);
                }
                if (sizes == 0) {
                        assert_string_equal(o[0].evidence, o[1].evidence);
                }
                sim_space_free(s);
        }
}

/* sim_space_lines says what the failure lines say, as the search reads them
 * (search_names_value): a line naming a value beside its flag is named, one in a space of
 * no such line is not, and a pair's line quotes both values. */
static void test_sim_lines(void **state) {
        (void)state;
        struct sim_params p = {.min_cells = 50, .max_cells = 600};
        size_t seen[_SIM_LINES_MAX] = {0}, bare_named = 0;
        for (uint64_t i = 0; i < 60; i++) {
                struct sim_space *s = NULL;
                assert_int_equal(sim_space_generate(sim_seed_mix(11, i), &p, &s), 0);
                enum sim_lines l = sim_space_lines(s);
                assert_true(l >= SIM_LINES_NONE && l < _SIM_LINES_MAX);
                seen[l]++;
                struct search_space v;
                sim_space_view(s, &v);
                size_t named = 0, pair = 0, one = 0, failing = 0;
                uint64_t rng = i;
                for (size_t k = 0; k < sim_space_cells(s); k++) {
                        struct search_obs o;
                        double sec;
                        assert_int_equal(sim_launch(s, k, &rng, &o, &sec), 0);
                        enum sim_fail f = sim_cell_fail(s, k);
                        one += f == SIM_FAIL_HANG || f == SIM_FAIL_ARCH || f == SIM_FAIL_BATCH;
                        failing += f != SIM_FAIL_NONE;
                        if (o.state != SEARCH_INFEASIBLE || !o.evidence)
                                continue;
                        size_t ax;
                        named += search_names_value(&v, k, o.evidence, &ax);
                        pair += strstr(o.evidence, " requires ") || strstr(o.evidence, " cannot be used with ");
                }
                if (l == SIM_LINES_FLAG)
                        assert_true(named > 0);
                if (l <= SIM_LINES_PAIR)
                        assert_int_equal(named, 0);
                if (l == SIM_LINES_NONE)
                        assert_int_equal(pair, 0);
                if (l == SIM_LINES_PAIR)
                        assert_true(pair > 0);
                bare_named += l == SIM_LINES_NAME && named > 0;
                if (l >= SIM_LINES_NAME)
                        assert_true(one > 0);
                /* the grid fails once in every failing cell: those of one value's doing
                 * (drawn with one term) counted apart */
                struct sim_result g;
                assert_int_equal(sim_run(s, SIM_GRID, NULL, 1, &g), 0);
                assert_int_equal(g.failed, failing);
                assert_int_equal(g.failed_one, one);
                sim_space_free(s);
        }
        for (enum sim_lines l = 0; l < _SIM_LINES_MAX; l++) {
                assert_non_null(sim_lines_to_string(l));
                assert_true(seen[l] > 0);
        }
        assert_null(sim_lines_to_string(_SIM_LINES_MAX));
        /* a space not finished has no cells to fail: it names nothing */
        struct sim_space *u = NULL;
        assert_int_equal(sim_space_new(2, (const size_t[]){2, 2}, NULL, &u), 0);
        struct sim_term arch = {0, 1};
        assert_int_equal(sim_space_add_rule(u, SIM_FAIL_ARCH, &arch, 1), 0);
        assert_int_equal(sim_space_lines(u), SIM_LINES_NONE);
        sim_space_free(u);
        /* a bare name is named where it is one axis's and distinctive */
        assert_true(bare_named > 0);
}

static void test_sim_strategies(void **state) {
        (void)state;
        struct sim_space *s = NULL;
        struct sim_params p = {.min_cells = 200};
        assert_int_equal(sim_space_generate(42, &p, &s), 0);
        size_t n = sim_space_cells(s);
        struct search_space v;
        sim_space_view(s, &v);
        struct sim_result g, o, r;
        assert_int_equal(sim_run(s, SIM_GRID, NULL, 1, &g), 0);
        assert_int_equal(g.launches, n);
        assert_true(g.named >= 0 && sim_cell_fail(s, (size_t)g.named) == SIM_FAIL_NONE);
        /* the grid names the best measured: within the noise of the true best */
        assert_true(g.named_speed >= 0.9 * g.best_speed);
        assert_int_equal(sim_run(s, SIM_ONE_AT_A_TIME, NULL, 1, &o), 0);
        size_t want = 1;
        for (size_t a = 0; a < v.n_axes; a++)
                want += v.n_values[a] - 1;
        assert_int_equal(o.launches, want);
        struct sim_run_params rp = {.budget = 17};
        assert_int_equal(sim_run(s, SIM_RANDOM, &rp, 1, &r), 0);
        assert_int_equal(r.launches, 17);
        struct sim_result r2;
        assert_int_equal(sim_run(s, SIM_RANDOM, &rp, 1, &r2), 0);
        assert_int_equal(r.named, r2.named);
        assert_true(r.seconds == r2.seconds);
        sim_space_free(s);
}

/* ---- the search ---- */

/* A search run by hand: fit, decide, launch, from the observations in obs. */
struct walk {
        const struct sim_space *s;
        struct search_space view;
        struct search_obs *obs;
        uint64_t rng;
        size_t launches;
        long trail[4096];
};

static void walk_init(struct walk *w, const struct sim_space *s, uint64_t seed) {
        memset(w, 0, sizeof(*w));
        w->s = s;
        sim_space_view(s, &w->view);
        w->obs = calloc(sim_space_cells(s), sizeof(*w->obs));
        assert_non_null(w->obs);
        w->rng = seed;
}

/* Up to `steps` launches; returns the decision that ended it (next -1) or the last one. */
static struct search_decision walk_run(struct walk *w, size_t steps, size_t max_launches) {
        struct search_options o = {.max_launches = max_launches};
        struct search_decision d = {.next = -1};
        for (size_t i = 0; i < steps; i++) {
                struct search_model *m = NULL;
                assert_int_equal(search_model_fit(&w->view, w->obs, &m), 0);
                assert_int_equal(search_model_decide(m, &o, &d), 0);
                /* (e) the best it would name is always a cell it launched and saw serve */
                long best = search_model_best(m);
                if (best >= 0) {
                        assert_true((size_t)best < sim_space_cells(w->s));
                        assert_int_equal(w->obs[best].state, SEARCH_FEASIBLE);
                        assert_true(w->obs[best].has_value);
                }
                assert_int_equal(search_model_launches(m), w->launches);
                search_model_free(m);
                if (d.next < 0)
                        return d;
                assert_true((size_t)d.next < sim_space_cells(w->s));
                /* never twice, unless to measure again a cell that served, at most
                 * SEARCH_MEASURE_MAX times in all */
                if (d.again) {
                        assert_int_equal(w->obs[d.next].state, SEARCH_FEASIBLE);
                        assert_true(w->obs[d.next].has_value);
                        assert_true(MAX(w->obs[d.next].measured, 1u) < SEARCH_MEASURE_MAX);
                } else
                        assert_int_equal(w->obs[d.next].state, SEARCH_UNKNOWN);
                assert_int_equal(sim_launch(w->s, (size_t)d.next, &w->rng, &w->obs[d.next], NULL), 0);
                assert_true(w->launches < ELEMENTSOF(w->trail));
                w->trail[w->launches++] = d.next;
        }
        return d;
}

static long walk_best(const struct walk *w) {
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&w->view, w->obs, &m), 0);
        long best = search_model_best(m);
        search_model_free(m);
        return best;
}

/* (a) the same observations, the same decision; a resumed search continues as the
 * uninterrupted one would. */
static void test_determinism(void **state) {
        (void)state;
        struct sim_space *s = NULL;
        struct sim_params p = {.min_cells = 300, .max_cells = 900};
        assert_int_equal(sim_space_generate(1234, &p, &s), 0);
        size_t n = sim_space_cells(s);

        struct walk a;
        walk_init(&a, s, 99);
        walk_run(&a, 24, 0);
        assert_true(a.launches >= 10);

        /* twice the same fit: the same decision and the same predictions, bit for bit */
        struct search_model *m1 = NULL, *m2 = NULL;
        assert_int_equal(search_model_fit(&a.view, a.obs, &m1), 0);
        assert_int_equal(search_model_fit(&a.view, a.obs, &m2), 0);
        struct search_options o = {0};
        struct search_decision d1, d2;
        assert_int_equal(search_model_decide(m1, &o, &d1), 0);
        assert_int_equal(search_model_decide(m2, &o, &d2), 0);
        assert_int_equal(d1.next, d2.next);
        for (size_t k = 0; k < n; k++) {
                struct search_prediction p1, p2;
                search_model_predict(m1, k, &p1);
                search_model_predict(m2, k, &p2);
                assert_memory_equal(&p1, &p2, sizeof(p1));
        }
        search_model_free(m1);
        search_model_free(m2);

        /* interrupted after 7 launches, resumed from copies (as from the journal: other
         * memory, strings copied) */
        struct walk b;
        walk_init(&b, s, 99);
        walk_run(&b, 7, 0);
        assert_int_equal(b.launches, 7);
        struct search_obs *copy = calloc(n, sizeof(*copy));
        char **strings = calloc(2 * n, sizeof(char *));
        assert_non_null(copy);
        assert_non_null(strings);
        for (size_t k = 0; k < n; k++) {
                copy[k] = b.obs[k];
                if (b.obs[k].kind)
                        copy[k].kind = strings[2 * k] = strdup(b.obs[k].kind);
                if (b.obs[k].evidence)
                        copy[k].evidence = strings[2 * k + 1] = strdup(b.obs[k].evidence);
        }
        free(b.obs);
        b.obs = copy;
        walk_run(&b, 24 - 7, 0);
        assert_int_equal(b.launches, a.launches);
        assert_memory_equal(a.trail, b.trail, a.launches * sizeof(long));
        for (size_t k = 0; k < 2 * n; k++)
                free(strings[k]);
        free(strings);
        free(a.obs);
        free(b.obs);
        sim_space_free(s);
}

static int cmp_double(const void *x, const void *y) {
        double a = *(const double *)x, b = *(const double *)y;
        return a < b ? -1 : a > b;
}

/* (b), quick: a few drawn spaces of 200 to 400 cells, the search without a budget names a
 * cell within 3% of the true best in all but one, with a median of at most 20% of the
 * grid (a smaller space needs a larger share). The 30 spaces of up to 800 cells, at 15%,
 * are in test_search_slow.c (tier slow). */
#define QUICK_SPACES 6
static void test_drawn_spaces_quick(void **state) {
        (void)state;
        struct sim_params p = {.min_cells = 200, .max_cells = 400};
        size_t ok = 0;
        double share[QUICK_SPACES];
        for (size_t i = 0; i < QUICK_SPACES; i++) {
                struct sim_space *s = NULL;
                uint64_t seed = sim_seed_mix(2025, i);
                assert_int_equal(sim_space_generate(seed, &p, &s), 0);
                struct sim_result r;
                assert_int_equal(sim_run(s, SIM_SEARCH, NULL, seed, &r), 0);
                share[i] = (double)r.launches / (double)sim_space_cells(s);
                ok += r.success;
                sim_space_free(s);
        }
        qsort(share, QUICK_SPACES, sizeof(double), cmp_double);
        print_message("%zu of %d spaces within 3%%; median %.1f%% of the grid\n", ok, QUICK_SPACES,
                      100 * share[QUICK_SPACES / 2]);
        assert_true(ok + 1 >= QUICK_SPACES);
        assert_true(share[QUICK_SPACES / 2] <= 0.20);
}

/* The hand-built spaces' axes. */
static const char *const attn_values[] = {"auto", "flashinfer", "fa3", "triton"};
static const char *const moe_values[] = {"auto", "triton", "cutlass", "flashinfer_cutlass"};
static const char *const kv_values[] = {"auto", "fp8_e4m3", "bf16"};
static const char *const bs_values[] = {"auto", "32", "64", "128", "256"};
static const char *const gemm_values[] = {"auto", "cutlass", "triton"};
static const struct sim_axis hand_axes[] = {
        {"attn", "--attention-backend", attn_values},
        {"moe", "--moe-runner-backend", moe_values},
        {"kv", "--kv-cache-dtype", kv_values},
        {"bs", "--cuda-graph-max-bs", bs_values},
        {"gemm", "--fp8-gemm-backend", gemm_values},
};

/* (c) a value that crashed with arch in 3 cells is predicted to crash elsewhere. */
static void test_arch_predicted(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, hand_axes, &s), 0);
        struct sim_term fa3 = {0, 2};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_ARCH, &fa3, 1), 0);
        assert_int_equal(sim_space_set_effect(s, 0, 1, 0.1), 0);
        assert_int_equal(sim_space_set_effect(s, 1, 2, 0.2), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s);
        struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        /* cell index: attn * 12 + moe * 3 + kv */
        const size_t served[][3] = {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {0, 1, 0}, {0, 2, 1},
                                    {1, 3, 2}, {3, 1, 1}, {0, 3, 2}, {1, 1, 1}};
        const size_t crashed[][3] = {{2, 0, 0}, {2, 1, 1}, {2, 3, 2}};
        uint64_t rng = 5;
        for (size_t i = 0; i < ELEMENTSOF(served); i++) {
                size_t k = served[i][0] * 12 + served[i][1] * 3 + served[i][2];
                assert_int_equal(sim_launch(s, k, &rng, &obs[k], NULL), 0);
                assert_int_equal(obs[k].state, SEARCH_FEASIBLE);
        }
        for (size_t i = 0; i < ELEMENTSOF(crashed); i++) {
                size_t k = crashed[i][0] * 12 + crashed[i][1] * 3 + crashed[i][2];
                assert_int_equal(sim_launch(s, k, &rng, &obs[k], NULL), 0);
                assert_string_equal(obs[k].kind, "crash/arch");
        }
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        size_t untried = 2 * 12 + 2 * 3 + 0;   /* attn=fa3 moe=cutlass kv=auto */
        size_t other = 1 * 12 + 2 * 3 + 0;     /* attn=flashinfer moe=cutlass kv=auto */
        struct search_prediction pu, po;
        search_model_predict(m, untried, &pu);
        search_model_predict(m, other, &po);
        print_message("p_feasible: fa3 %.3f, flashinfer %.3f\n", pu.p_feasible, po.p_feasible);
        assert_true(pu.p_feasible < SEARCH_FAIL_CHANCE);
        assert_true(po.p_feasible > 0.5);
        _cleanup_free_ char *why = search_model_why(m, untried, false);
        assert_non_null(why);
        print_message("why: %s\n", why);
        assert_true(startswith(why, "predicted crash"));
        assert_non_null(strstr(why, "fa3"));
        /* and the search never launches it */
        struct search_options o = {0};
        struct search_decision d;
        assert_int_equal(search_model_decide(m, &o, &d), 0);
        assert_true(d.next < 0 || (size_t)d.next / 12 != 2);
        search_model_free(m);
        free(obs);
        sim_space_free(s);
}

/* (c2) "--a x requires --b y": the evidence says which value the other axis needs. Cells
 * with x and another b are predicted to crash, and the cell with x and y is not: x is not
 * condemned for its partner's doing. "--a x cannot be used with --b y" blames the pair. */
static void test_requirement_read(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, hand_axes, &s), 0);
        struct sim_term req[2] = {{0, 2}, {2, 2}};   /* attn=fa3 requires kv=bf16 */
        struct sim_term bad[2] = {{1, 3}, {2, 1}};   /* moe=flashinfer_cutlass with kv=fp8_e4m3 */
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_REQUIRES, req, 2), 0);
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_CONFIG, bad, 2), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s);
        struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        /* cell index: attn * 12 + moe * 3 + kv */
        const size_t launched[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 2, 2}, {2, 0, 0}, {0, 3, 1}};
        uint64_t rng = 9;
        for (size_t i = 0; i < ELEMENTSOF(launched); i++) {
                size_t k = launched[i][0] * 12 + launched[i][1] * 3 + launched[i][2];
                assert_int_equal(sim_launch(s, k, &rng, &obs[k], NULL), 0);
        }
        assert_int_equal(obs[2 * 12].state, SEARCH_INFEASIBLE);
        assert_non_null(strstr(obs[2 * 12].evidence, "requires --kv-cache-dtype bf16"));
        assert_int_equal(obs[3 * 3 + 1].state, SEARCH_INFEASIBLE);
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        struct search_prediction needs, broken, other;
        search_model_predict(m, 2 * 12 + 1 * 3 + 2, &needs);  /* fa3 with bf16 */
        search_model_predict(m, 2 * 12 + 1 * 3 + 1, &broken); /* fa3 with fp8_e4m3 */
        print_message("fa3 with bf16 %.3f, with fp8 %.3f\n", needs.p_feasible, broken.p_feasible);
        assert_true(broken.p_feasible < SEARCH_FAIL_CHANCE);
        assert_true(needs.p_feasible > 0.5);
        _cleanup_free_ char *why = search_model_why(m, 2 * 12 + 1 * 3 + 1, false);
        assert_non_null(why);
        print_message("why: %s\n", why);
        assert_true(startswith(why, "predicted crash: attn=fa3 requires kv=bf16"));
        /* the quoted pair: moe=flashinfer_cutlass is fine with another kv, and fp8_e4m3 with
         * another moe */
        search_model_predict(m, 1 * 12 + 3 * 3 + 2, &other);
        struct search_prediction pair, fp8;
        search_model_predict(m, 1 * 12 + 3 * 3 + 1, &pair);
        search_model_predict(m, 3 * 12 + 0 * 3 + 1, &fp8);
        print_message("flashinfer_cutlass with bf16 %.3f; the pair %.3f; fp8 alone %.3f\n", other.p_feasible,
                      pair.p_feasible, fp8.p_feasible);
        assert_true(pair.p_feasible < 0.3);
        assert_true(other.p_feasible > 0.6);
        assert_true(fp8.p_feasible > 0.6);
        search_model_free(m);
        free(obs);
        sim_space_free(s);
}

/* (c3) The named best pools a cell's figure with its neighbours': a cell that measured
 * highest by luck, against what every cell sharing its values says, is not named. */
static void test_named_by_model(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, hand_axes, &s), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s);
        struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        /* speed = 100 x 1.3 if attn=triton x 1.2 if moe=cutlass x 1.15 if moe=flashinfer_cutlass,
         * every cell measured right but one: attn=triton moe=flashinfer_cutlass kv=fp8 is
         * 149.5 and measured 160 (7% of noise), above the true best's 156 */
        for (size_t k = 0; k < n; k++) {
                size_t attn = k / 12, moe = k / 3 % 4;
                obs[k].state = SEARCH_FEASIBLE;
                obs[k].has_value = true;
                obs[k].value = 100 * (attn == 3 ? 1.3 : 1) * (moe == 2 ? 1.2 : moe == 3 ? 1.15 : 1);
        }
        size_t lucky = 3 * 12 + 3 * 3 + 1, truth = 3 * 12 + 2 * 3 + 0;
        obs[lucky].value = 160;
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        assert_int_equal(search_model_best(m), (long)lucky);
        struct search_prediction pl, pt;
        search_model_predict(m, lucky, &pl);
        search_model_predict(m, truth, &pt);
        print_message("estimates: lucky %.1f, a true best %.1f\n", pl.mean, pt.mean);
        assert_true(pl.mean < 158);
        /* any of the three true best cells (kv changes nothing), not the lucky one */
        long named = search_model_named(m);
        assert_true(named >= 0 && (size_t)named / 3 == truth / 3);
        search_model_free(m);
        free(obs);
        sim_space_free(s);
}

/* (c4) Two cells that served, a percent apart and nothing around them to tell them apart:
 * before naming one, the search measures them again (the named one first, then the one
 * measured fewer times), at most 5 times each, and then stops (here after 4 more of each:
 * the search's bound on measuring again, SEARCH_MAX_AGAIN, is 2 + 48 / 8); --no-prune
 * measures nothing again. */
static void test_measured_again(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, hand_axes, &s), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s), a = 0, b = n - 1;
        struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        for (size_t k = 0; k < n; k++)
                obs[k] = (struct search_obs){.state = SEARCH_INFEASIBLE, .kind = "crash/config", .evidence = "bad flags"};
        obs[a] = (struct search_obs){.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
        obs[b] = (struct search_obs){.state = SEARCH_FEASIBLE, .has_value = true, .value = 101};
        struct search_options no_prune = {.no_prune = true};
        size_t again[2] = {0, 0}, launches = n;
        for (;;) {
                struct search_model *m = NULL;
                struct search_decision d, np;
                assert_int_equal(search_model_fit(&v, obs, &m), 0);
                assert_int_equal(search_model_launches(m), launches);
                assert_int_equal(search_model_launched(m), n);
                assert_int_equal(search_model_decide(m, NULL, &d), 0);
                assert_int_equal(search_model_decide(m, &no_prune, &np), 0);
                assert_true(np.next < 0);
                long named = search_model_named(m);
                search_model_free(m);
                if (d.next < 0) {
                        assert_string_equal(d.stop, "no candidate left");
                        break;
                }
                assert_true(d.again);
                assert_true((size_t)d.next == a || (size_t)d.next == b);
                size_t i = (size_t)d.next == a ? 0 : 1;
                /* the first time, the named one (one measurement each) */
                if (again[0] + again[1] == 0)
                        assert_int_equal(d.next, named);
                /* the one measured fewer times, or the named one on a tie */
                if (again[i] > again[1 - i])
                        fail_msg("measured again the cell measured more times");
                again[i]++;
                launches++;
                assert_true(again[i] <= 4); /* 5 measurements at most */
                /* the same figure again: the geometric mean does not move */
                obs[d.next].measured = (unsigned)again[i] + 1;
                obs[d.next].launches = (unsigned)again[i] + 1;
        }
        print_message("measured again: %zu and %zu times\n", again[0], again[1]);
        assert_true(again[0] + again[1] >= 2 && again[0] + again[1] <= SEARCH_MAX_AGAIN(n));
        free(obs);
        sim_space_free(s);
}

/* A flat 4x4 space (every cell as fast, a few percent of noise) with no budget: the search
 * launches the grid and a bounded number of re-measures (it once launched 46 times where
 * the grid is 16), whatever the seed. */
static void test_flat_bounded(void **state) {
        (void)state;
        const size_t nv[] = {4, 4};
        size_t most = 0;
        for (uint64_t seed = 1; seed <= 12; seed++) {
                struct sim_space *s = NULL;
                assert_int_equal(sim_space_new(2, nv, hand_axes, &s), 0);
                sim_space_set_speed(s, 1000, 0.03);
                assert_int_equal(sim_space_finish(s), 0);
                struct sim_result res;
                struct sim_run_params p = {.budget = 0};
                assert_int_equal(sim_run(s, SIM_SEARCH, &p, seed, &res), 0);
                most = MAX(most, res.launches);
                assert_true(res.named >= 0);
                assert_true(res.launches <= 16 + SEARCH_MAX_AGAIN(16));
                sim_space_free(s);
        }
        print_message("flat 4x4, no budget: at most %zu launches over 12 seeds (bound %zu)\n", most,
                      (size_t)16 + SEARCH_MAX_AGAIN(16));
}

/* Abandoned launches count against budget.launches: a cell given up three times spends a
 * budget of 3 before anything settled. */
static void test_abandoned_count(void **state) {
        (void)state;
        const size_t nv[] = {4, 4};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(2, nv, hand_axes, &s), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s);
        struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        obs[0].abandoned = 3;
        struct search_model *m = NULL;
        struct search_decision d;
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        assert_int_equal(search_model_launches(m), 3);
        assert_int_equal(search_model_launched(m), 0);
        struct search_options o = {.max_launches = 3};
        assert_int_equal(search_model_decide(m, &o, &d), 0);
        assert_true(d.next < 0);
        assert_string_equal(d.stop, "budget");
        o.max_launches = 4;
        assert_int_equal(search_model_decide(m, &o, &d), 0);
        assert_true(d.next >= 0);
        search_model_free(m);
        free(obs);
        sim_space_free(s);
}

/* (d) garbage at the defaults and at every cell one axis away from them: the search still
 * reaches a serving cell. */
static void test_garbage_defaults(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3, 5, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(5, nv, hand_axes, &s), 0);
        struct sim_term attn_auto = {0, 0}, moe_auto = {1, 0};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_GARBAGE, &attn_auto, 1), 0);
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_GARBAGE, &moe_auto, 1), 0);
        assert_int_equal(sim_space_set_effect(s, 3, 4, 0.2), 0);
        assert_int_equal(sim_space_set_effect(s, 2, 1, 0.1), 0);
        assert_int_equal(sim_space_set_effect(s, 0, 3, -0.2), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        /* every neighbour of the defaults fails */
        for (size_t a = 0; a < v.n_axes; a++) {
                size_t stride = 1;
                for (size_t b = a + 1; b < v.n_axes; b++)
                        stride *= v.n_values[b];
                for (size_t val = 0; val < v.n_values[a]; val++)
                        assert_int_equal(sim_cell_fail(s, val * stride), SIM_FAIL_GARBAGE);
        }
        struct walk w;
        walk_init(&w, s, 3);
        struct search_decision d = walk_run(&w, sim_space_cells(s), 0);
        assert_true(d.next < 0);
        assert_int_equal(w.trail[0], 0);   /* started at the defaults */
        assert_int_equal(w.obs[0].state, SEARCH_INFEASIBLE);
        long best = walk_best(&w);
        print_message("%zu launches, named %ld (%s)\n", w.launches, best, d.stop ? d.stop : "-");
        assert_true(best >= 0);
        assert_int_equal(sim_cell_fail(s, (size_t)best), SIM_FAIL_NONE);
        free(w.obs);
        sim_space_free(s);
}

/* (g) A value whose failures all shared partners gets a cell with other partners, and its
 * other values are ones that never failed: beside a second suspect, a failure says nothing
 * of either. The space of the real llama-server's wrong answers (docs/search.md, "Next
 * cell"): two RoPE settings and two chat templates answer wrong whatever else is set. */
static const char *const rope_values[] = {"default", "lin1.1", "base50k"};
static const char *const tmpl_values[] = {"model", "chatml", "llama2"};
static const char *const ub_values[] = {"32", "512"};
static const char *const fa_values[] = {"on", "off"};
static const struct sim_axis wrong_axes[] = {
        {"rope", "--rope-freq-base", rope_values},
        {"tmpl", "--chat-template", tmpl_values},
        {"ub", "-ub", ub_values},
        {"fa", "-fa", fa_values},
};

static size_t wrong_cell(size_t rope, size_t tmpl, size_t ub, size_t fa) {
        return ((rope * 3 + tmpl) * 2 + ub) * 2 + fa;
}

/* One launch of the space: served at figure (tok/s), or answered wrong (kind, evidence). */
static struct search_obs wrong_launch(double figure, const char *kind, const char *evidence) {
        bool ok = figure > 0;
        return (struct search_obs){.state = ok ? SEARCH_FEASIBLE : SEARCH_INFEASIBLE, .has_value = ok,
                                   .value = figure, .kind = ok ? NULL : kind, .evidence = ok ? NULL : evidence,
                                   .launches = 1, .seconds = ok ? 0.3 : 0.15};
}

static void test_partner_not_suspect(void **state) {
        (void)state;
        const size_t nv[] = {3, 3, 2, 2};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(4, nv, wrong_axes, &s), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        v.first = 0;
        struct search_obs *obs = calloc(v.n_cells, sizeof(*obs));
        assert_non_null(obs);
        /* the real run's first 13 launches (tests/engines/llamacpp/search-wrong.yaml) */
        static const struct {
                size_t rope, tmpl, ub, fa;
                double figure;          /* served: tok/s; else 0 */
                const char *kind, *evidence;
        } run[] = {
                {0, 0, 0, 0, 838.3, NULL, NULL},
                {1, 1, 1, 1, 0, "wrong/ok", "expected \"OK\", got: \"I can \""},
                {0, 2, 0, 0, 0, "wrong/ok", "expected \"OK\", got: \" 42 52 * 42 = 40\""},
                {2, 0, 0, 0, 0, "wrong/math-thinking", "expected 323, got: \"31\""},
                {0, 1, 0, 0, 0, "wrong/ok", "expected \"OK\", got: \"I can \""},
                {0, 0, 0, 1, 851.0, NULL, NULL},
                {0, 0, 1, 0, 902.4, NULL, NULL},
                {1, 0, 0, 0, 0, "wrong/math", "expected 323, got: \"143\""},
                {0, 2, 0, 1, 0, "wrong/ok", "expected \"OK\", got: \" 42 52 * 42 = 40\""},
                {2, 0, 0, 1, 0, "wrong/math-thinking", "expected 323, got: \"31\""},
                {1, 0, 0, 1, 0, "wrong/math", "expected 323, got: \"143\""},
                {0, 0, 1, 1, 880.7, NULL, NULL},
                {0, 1, 0, 1, 0, "wrong/ok", "expected \"OK\", got: \"I can \""},
        };
        for (size_t i = 0; i < ELEMENTSOF(run); i++) {
                struct search_obs *o = &obs[wrong_cell(run[i].rope, run[i].tmpl, run[i].ub, run[i].fa)];
                *o = wrong_launch(run[i].figure, run[i].kind, run[i].evidence);
        }
        /* base50k and llama2 have each answered wrong twice, each beside partners that
         * served: a cell holding both says nothing of either */
        struct search_model *m = NULL;
        struct search_decision d;
        for (int step = 0; step < 8; step++) {
                assert_int_equal(search_model_fit(&v, obs, &m), 0);
                assert_int_equal(search_model_decide(m, NULL, &d), 0);
                search_model_free(m);
                if (d.next < 0 || d.again)
                        break;
                const size_t *c = v.choice + (size_t)d.next * 4;
                print_message("next: rope=%s tmpl=%s ub=%s fa=%s\n", rope_values[c[0]], tmpl_values[c[1]],
                              ub_values[c[2]], fa_values[c[3]]);
                assert_false(c[0] > 0 && c[1] > 0);
                /* as the real engine answers */
                obs[d.next] = wrong_launch(c[0] == 0 && c[1] == 0 ? 870 : 0, c[1] ? "wrong/ok" : "wrong/math",
                                           "expected 323, got: \"17\"");
        }
        free(obs);
        sim_space_free(s);
}

/* (e) the search never names a cell it did not launch (walk_run asserts it at every step),
 * on drawn spaces with and without a budget. */
static void test_names_launched(void **state) {
        (void)state;
        struct sim_params p = {.max_cells = 600};
        for (uint64_t i = 0; i < 8; i++) {
                struct sim_space *s = NULL;
                uint64_t seed = sim_seed_mix(77, i);
                assert_int_equal(sim_space_generate(seed, &p, &s), 0);
                size_t budget = i % 2 ? sim_space_cells(s) / 10 : 0;
                struct walk w;
                walk_init(&w, s, seed);
                struct search_decision d = walk_run(&w, sim_space_cells(s) + 1, budget);
                assert_true(d.next < 0);
                if (budget)
                        assert_true(w.launches <= budget);
                long best = walk_best(&w);
                if (best >= 0)
                        assert_int_equal(w.obs[best].state, SEARCH_FEASIBLE);
                else
                        for (size_t k = 0; k < sim_space_cells(s); k++)
                                assert_true(w.obs[k].state != SEARCH_FEASIBLE);
                free(w.obs);
                sim_space_free(s);
        }
}

/* (f) the "done when": 720 cells with garbage defaults, an arch crash, a config
 * crash naming the other flag, an OOM corner, a break under batching, and a best that
 * needs two non-default values together; 72 launches name a cell within 5% of the true
 * fastest correct one. */
static void test_done_when(void **state) {
        const size_t nv[] = {4, 4, 3, 5, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(5, nv, hand_axes, &s), 0);
        *state = s;   /* freed by space_teardown, also when an assertion fails */
        sim_space_set_speed(s, 80, 0.02);
        /* main effects (log): fa3 is the fastest attention but has no kernel for this GPU;
         * moe=triton is fast alone and breaks under batching */
        const double eff[][5] = {
                {0, 0.10, 0.20, -0.05, 0},          /* attn */
                {0, 0.15, -0.05, 0.10, 0},          /* moe */
                {0, 0.12, -0.02, 0, 0},             /* kv */
                {0, 0.10, 0.14, 0.20, 0.25},        /* bs: hungrier is faster */
                {0, -0.03, 0.02, 0, 0},             /* gemm */
        };
        for (size_t a = 0; a < 5; a++)
                for (size_t v = 0; v < nv[a]; v++)
                        assert_int_equal(sim_space_set_effect(s, a, v, eff[a][v]), 0);
        /* both cutlass: each a little worse alone, the best together */
        assert_int_equal(sim_space_add_pair(s, (struct sim_term){1, 2}, (struct sim_term){4, 1}, 0.35), 0);
        assert_int_equal(sim_space_add_pair(s, (struct sim_term){0, 3}, (struct sim_term){3, 4}, -0.10), 0);
        assert_int_equal(sim_space_add_pair(s, (struct sim_term){0, 1}, (struct sim_term){2, 1}, 0.04), 0);
        /* the defaults answer garbage ("auto" attention with "auto" MoE) */
        struct sim_term garbage[2] = {{0, 0}, {1, 0}};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_GARBAGE, garbage, 2), 0);
        struct sim_term fa3 = {0, 2};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_ARCH, &fa3, 1), 0);
        /* kv=fp8_e4m3 requires attn=flashinfer */
        struct sim_term req[2] = {{2, 1}, {0, 1}};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_REQUIRES, req, 2), 0);
        struct sim_term batch = {1, 1};
        assert_int_equal(sim_space_add_rule(s, SIM_FAIL_BATCH, &batch, 1), 0);
        /* OOM where large graphs meet the hungrier GEMMs */
        for (size_t v = 0; v < 5; v++)
                assert_int_equal(sim_space_set_memory(s, 3, v, 0.25 * (double)v), 0);
        assert_int_equal(sim_space_set_memory(s, 4, 1, 0.5), 0);
        assert_int_equal(sim_space_set_memory(s, 4, 2, 0.3), 0);
        sim_space_set_memory_limit(s, 1.2);
        assert_int_equal(sim_space_finish(s), 0);
        assert_int_equal(sim_space_cells(s), 720);

        /* the space is what the test claims: garbage defaults; the best needs both cutlass
         * at bs=64, the edge of OOM (bs=32 is within 5%); without both, the best is more
         * than 5% slower */
        assert_int_equal(sim_cell_fail(s, 0), SIM_FAIL_GARBAGE);
        size_t best;
        double best_speed;
        sim_true_best(s, &best, &best_speed);
        struct search_space v;
        sim_space_view(s, &v);
        const size_t *bc = &v.choice[best * 5];
        assert_int_equal(bc[0], 1);
        assert_int_equal(bc[1], 2);
        assert_int_equal(bc[2], 1);
        assert_int_equal(bc[3], 2);
        assert_int_equal(bc[4], 1);
        double second = 0;
        for (size_t k = 0; k < 720; k++) {
                const size_t *c = &v.choice[k * 5];
                if (sim_cell_fail(s, k) == SIM_FAIL_NONE && !(c[1] == 2 && c[4] == 1))
                        second = MAX(second, sim_cell_speed(s, k));
        }
        assert_true(second < 0.95 * best_speed);
        assert_int_equal(sim_cell_fail(s, best + 3), SIM_FAIL_OOM);   /* bs=128 next door */
        char *desc = sim_space_describe(s);
        print_message("%s\n", desc ? desc : "");
        free(desc);

        struct sim_run_params rp = {.budget = 72};
        struct sim_result r;
        assert_int_equal(sim_run(s, SIM_SEARCH, &rp, 11, &r), 0);
        print_message("search: %zu launches, named %ld at %.3fx the best (%s)\n", r.launches, r.named,
                      r.named_speed / r.best_speed, r.stop ? r.stop : "-");
        assert_true(r.launches <= 72);
        assert_true(r.named >= 0);
        assert_int_equal(sim_cell_fail(s, (size_t)r.named), SIM_FAIL_NONE);
        assert_true(r.named_speed >= 0.95 * best_speed);
}

static int space_teardown(void **state) {
        sim_space_free(*state);
        *state = NULL;
        return 0;
}

/* Out of memory where the hungry values of two axes meet (cost a + b >= 3 of 2 + 2), a third
 * axis beside it: the memory model predicts the corner from the cells that ran out and
 * those that loaded, and says so; a lean cell of the same values is predicted to serve.
 * The failures are of kind and evidence as given; memory: whether they read as memory's. */
static void memory_corner(const char *kind, const char *evidence, bool memory) {
        static const size_t nv[3] = {3, 3, 2};
        static const char *const an[3] = {"mem", "chunk", "sched"};
        /* named as no sizes: this is the memory model's reading (test_memory_sizes: sizes) */
        static const char *const v3[3] = {"lo", "mid", "hi"}, *const v2[2] = {"x", "y"};
        static const char *const *const vn[3] = {v3, v3, v2};
        size_t choice[18 * 3];
        const char *ids[18];
        char idbuf[18][17];
        struct search_obs obs[18] = {0};
        for (size_t k = 0; k < 18; k++) {
                choice[k * 3] = k / 6;
                choice[k * 3 + 1] = (k / 2) % 3;
                choice[k * 3 + 2] = k % 2;
                snprintf(idbuf[k], sizeof(idbuf[k]), "%016zx", k);
                ids[k] = idbuf[k];
        }
        struct search_space sp = {.n_axes = 3, .n_values = nv, .axis_names = an, .value_names = vn, .n_cells = 18,
                                  .choice = choice, .ids = ids, .higher_better = true, .first = 0};
        /* launched with sched=x: the lean ones serve, the corner runs out of memory */
        static const size_t served[][2] = {{0, 0}, {1, 1}, {2, 0}, {0, 2}, {1, 0}};
        static const size_t oom[][2] = {{2, 2}, {1, 2}, {2, 1}};
        for (size_t i = 0; i < ELEMENTSOF(served); i++)
                obs[served[i][0] * 6 + served[i][1] * 2] =
                        (struct search_obs){.state = SEARCH_FEASIBLE, .has_value = true, .value = 100 + 10.0 * (double)i};
        for (size_t i = 0; i < ELEMENTSOF(oom); i++)
                obs[oom[i][0] * 6 + oom[i][1] * 2] =
                        (struct search_obs){.state = SEARCH_INFEASIBLE, .kind = kind, .evidence = evidence};
        /* and one with sched=y: sched is not to blame */
        obs[2 * 6 + 1 * 2 + 1] = (struct search_obs){.state = SEARCH_INFEASIBLE, .kind = kind, .evidence = evidence};
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&sp, obs, &m), 0);
        struct search_prediction corner, lean;
        search_model_predict(m, 2 * 6 + 2 * 2 + 1, &corner); /* mem=2 chunk=2 sched=y */
        search_model_predict(m, 0 * 6 + 1 * 2 + 1, &lean);   /* mem=0 chunk=1 sched=y */
        print_message("%s, %s: p_feasible: corner %.3f, lean %.3f\n", kind, evidence, corner.p_feasible, lean.p_feasible);
        char *why = search_model_why(m, 2 * 6 + 2 * 2 + 1, false);
        assert_non_null(why);
        print_message("why: %s\n", why);
        if (memory) {
                assert_true(corner.p_feasible < SEARCH_FAIL_CHANCE);
                assert_true(lean.p_feasible > 0.5);
                assert_non_null(strstr(why, "predicted crash (oom)"));
                assert_non_null(strstr(why, "mem=hi"));
                assert_non_null(strstr(why, "chunk=hi"));
        } else {
                assert_null(strstr(why, "(oom)"));
        }
        free(why);
        search_model_free(m);
}

static void test_memory_corner(void **state) {
        (void)state;
        memory_corner("crash/oom", "CUDA out of memory. Tried to allocate", true);
}

/* A death by SIGKILL with nothing in the log is the OOM killer's, as far as the search can
 * tell; one after an error line (SGLang kills its own tree after a child's exception) or by
 * another signal (a segfault) is not memory's (ENGINES.md: "oom only with other evidence"). */
static void test_memory_signal(void **state) {
        (void)state;
        memory_corner("crash/signal", "killed by SIGKILL; last log line: Loading safetensors checkpoint shards", true);
        memory_corner("crash/signal",
                      "killed by SIGKILL; first error line: ImportError: cannot import name 'flash_attn_with_kvcache' "
                      "from 'sgl_kernel.flash_attn'",
                      false);
        memory_corner("crash/signal", "killed by SIGSEGV; last log line: Capturing batches (bs=64)", false);
}

/* A space of 4 axes, the first of n / 8 values (n <= 32) and the others of 2, row-major (the
 * last axis fastest), its cells' ids "c0000012". */
struct x222 {
        size_t choice[32 * 4];
        const char *ids[32];
        char idbuf[32][9];
        struct search_space sp;
};

static void x222_init(struct x222 *g, size_t n, const size_t *nv, const char *const *an, const char *const *af,
                      const char *const *const *vn) {
        assert_true(n <= 32 && n == nv[0] * 8);
        for (size_t k = 0; k < n; k++) {
                g->choice[k * 4] = k / 8;
                g->choice[k * 4 + 1] = (k / 4) % 2;
                g->choice[k * 4 + 2] = (k / 2) % 2;
                g->choice[k * 4 + 3] = k % 2;
                snprintf(g->idbuf[k], sizeof(g->idbuf[k]), "c%07zu", k);
                g->ids[k] = g->idbuf[k];
        }
        g->sp = (struct search_space){.n_axes = 4, .n_values = nv, .axis_names = an, .axis_flags = af,
                                      .value_names = vn, .n_cells = n, .choice = g->choice, .ids = g->ids,
                                      .higher_better = true, .first = 0};
}

/* Cell k's chance to serve is under SEARCH_FAIL_CHANCE (what: the cell, for the output); its
 * why, which the caller frees. */
static char *predicted_to_fail(const struct search_model *m, size_t k, const char *what) {
        struct search_prediction p;
        search_model_predict(m, k, &p);
        print_message("%s: p_feasible %.3f\n", what, p.p_feasible);
        assert_true(p.p_feasible < SEARCH_FAIL_CHANCE);
        char *why = search_model_why(m, k, false);
        assert_non_null(why);
        print_message("why: %s\n", why);
        return why;
}

/* Fitted to obs, cell k is not predicted by the allocation that failed (what: the case). */
static void not_by_alloc(const struct search_space *sp, const struct search_obs *obs, size_t k, const char *what) {
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(sp, obs, &m), 0);
        _cleanup_free_ char *why = search_model_why(m, k, false);
        assert_non_null(why);
        print_message("%s: %s\n", what, why);
        assert_null(strstr(why, "allocation that failed"));
        search_model_free(m);
}

/* Decides from obs until the search stops, each cell it picks settling as outcome() says (one
 * that served before keeps its figure): it never picks one of never[]. */
static void never_chosen(const struct search_space *sp, const struct search_obs *obs, const size_t *never,
                         size_t n_never, struct search_obs (*outcome)(const struct search_space *sp, size_t k)) {
        _cleanup_free_ struct search_obs *all = calloc(sp->n_cells, sizeof(*all));
        assert_non_null(all);
        memcpy(all, obs, sp->n_cells * sizeof(*all));
        struct search_options o = {0};
        for (size_t i = 0; i < sp->n_cells; i++) {
                struct search_model *mm = NULL;
                struct search_decision d;
                assert_int_equal(search_model_fit(sp, all, &mm), 0);
                assert_int_equal(search_model_decide(mm, &o, &d), 0);
                search_model_free(mm);
                if (d.next < 0)
                        break;
                for (size_t j = 0; j < n_never; j++)
                        assert_int_not_equal(d.next, never[j]);
                if (all[d.next].state != SEARCH_FEASIBLE)
                        all[d.next] = outcome(sp, (size_t)d.next);
                all[d.next].launches++;
                all[d.next].measured++;
        }
}

/* A launch that served (never_chosen). */
static struct search_obs serves(const struct search_space *sp, size_t k) {
        (void)sp;
        (void)k;
        return (struct search_obs){.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
}

/* As llama-server under test_memory_alloc's limit: a context of 1048576 tokens or more runs
 * out allocating its KV cache, whose size -c and the cache type set; the rest serve. */
static struct search_obs kv_cache(const struct search_space *sp, size_t k) {
        static const char *const lines[2][2] = {
                {"E ggml_aligned_malloc: insufficient memory (attempted to allocate 1280.00 MB)",
                 "E ggml_aligned_malloc: insufficient memory (attempted to allocate 2560.00 MB)"},
                {"E ggml_aligned_malloc: insufficient memory (attempted to allocate 5120.00 MB)",
                 "E ggml_aligned_malloc: insufficient memory (attempted to allocate 10240.00 MB)"}};
        size_t c = sp->choice[k * 4], kv = sp->choice[k * 4 + 1];
        if (c < 2)
                return serves(sp, k);
        return (struct search_obs){.state = SEARCH_INFEASIBLE, .kind = "crash/oom", .evidence = lines[c - 2][kv]};
}

/* Sizes: on an axis of whole numbers (ctx), a cell that holds the values of one that ran out
 * of memory but for a larger size runs out too: predicted so, with the cell that did, and
 * never chosen; not across a categorical axis (kv), a share (frac: 0.80, 0.90) or an axis of
 * parallelism (tp: more GPUs, less memory on each); not once two cells that differ on the
 * axis alone say the contrary; and a cell of smaller sizes than one that loaded fits. */
static void test_memory_sizes(void **state) {
        (void)state;
        static const size_t nv[4] = {3, 2, 2, 2};
        static const char *const an[4] = {"ctx", "kv", "frac", "tp"};
        static const char *const af[4] = {"-c", "--kv-cache-dtype", "--mem-fraction-static", "--tp"};
        static const char *const ctx[3] = {"256", "4096", "64k"}, *const kv[2] = {"f16", "f32"},
                                 *const frac[2] = {"0.80", "0.90"}, *const tp[2] = {"1", "2"};
        static const char *const *const vn[4] = {ctx, kv, frac, tp};
        enum { N = 24 };
        struct x222 g;
        x222_init(&g, N, nv, an, af, vn);
        const struct search_space *sp = &g.sp;
#define CELL(c, k, f, t) ((size_t)(c) * 8 + (size_t)(k) * 4 + (size_t)(f) * 2 + (size_t)(t))
        const struct search_obs served = {.state = SEARCH_FEASIBLE, .has_value = true, .value = 100},
                                ran_out = {.state = SEARCH_INFEASIBLE, .kind = "crash/oom",
                                           .evidence = "ggml_aligned_malloc: insufficient memory (attempted to allocate 80.00 MB)"};
        struct search_obs obs[N] = {0};
        obs[CELL(0, 0, 0, 0)] = served;
        obs[CELL(0, 1, 1, 1)] = served;
        obs[CELL(1, 1, 1, 0)] = served;
        obs[CELL(1, 0, 0, 0)] = ran_out;
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(sp, obs, &m), 0);
        struct search_prediction p;
        /* a larger context beside the same values: sure to run out, the cell quoted */
        _cleanup_free_ char *why = predicted_to_fail(m, CELL(2, 0, 0, 0), "ctx=64k beside the cell that ran out");
        assert_non_null(strstr(why, "predicted crash (oom): cell c0000008 ran out of memory with these values but ctx=4096 (here 64k)"));
        /* no other axis is one of sizes: a larger share, more GPUs, another cache type */
        const size_t others[] = {CELL(2, 0, 1, 0), CELL(2, 0, 0, 1), CELL(2, 1, 0, 0), CELL(1, 0, 1, 0)};
        for (size_t i = 0; i < ELEMENTSOF(others); i++) {
                _cleanup_free_ char *w = search_model_why(m, others[i], false);
                print_message("cell %zu: %s\n", others[i], w);
                assert_null(strstr(w, "with these values but"));
        }
        /* smaller sizes than a cell that loaded: no memory to run out of */
        search_model_predict(m, CELL(0, 1, 1, 0), &p);
        print_message("ctx=256 under a cell that loaded: p_feasible %.3f\n", p.p_feasible);
        assert_true(p.p_feasible > 0.5);
        /* never chosen, however long the search goes on */
        never_chosen(sp, obs, (const size_t[]){CELL(2, 0, 0, 0)}, 1, serves);
        search_model_free(m);
        /* a larger context that loaded beside one that ran out, all else alike: ctx is no
         * axis of sizes after all (an engine whose memory is not monotone in it) */
        obs[CELL(2, 0, 1, 1)] = served;
        obs[CELL(1, 0, 1, 1)] = ran_out;
        assert_int_equal(search_model_fit(sp, obs, &m), 0);
        _cleanup_free_ char *after = search_model_why(m, CELL(2, 0, 0, 0), false);
        print_message("after the contrary: %s\n", after);
        assert_null(strstr(after, "with these values but"));
        search_model_free(m);
#undef CELL
}

/* Cell (c, k, u, f) of an x222 space, and a llama-server line of running out at mb MB (a
 * string literal), for the tests of the allocation that failed. */
#define CELL(c, k, u, f) ((size_t)(c) * 8 + (size_t)(k) * 4 + (size_t)(u) * 2 + (size_t)(f))
#define RAN_OUT(mb)                                                                                                    \
        ((struct search_obs){.state = SEARCH_INFEASIBLE,                                                               \
                             .kind = "crash/oom",                                                                      \
                             .evidence = "E ggml_aligned_malloc: insufficient memory (attempted to allocate " mb " MB)"})

/* The allocation that failed (search_alloc_predict): the space of the real llama-server's
 * test (search-sizes-llamacpp.sh), -c 4 sizes x kv f16/f32 x -ub 32/512 x -fa on/off, where
 * a large context runs out allocating its KV cache whatever -ub and -fa are. Two cells of one
 * size that differ on ub and attn show neither changes that allocation: a cell differing from
 * them on those alone runs out too, its why says so, and it is never chosen; not a cell of
 * the other cache type (a pair of other sizes says kv changes it), not while every line gave
 * one size (a fixed chunk), not once a cell that loaded differs from one that ran out on
 * such an axis alone, nor once two cells of other sizes differ on those axes alone. */
static void test_memory_alloc(void **state) {
        (void)state;
        static const size_t nv[4] = {4, 2, 2, 2};
        static const char *const an[4] = {"ctx", "kv", "ub", "attn"};
        static const char *const af[4] = {"-c", NULL, "-ub", "-fa"};
        static const char *const ctx[4] = {"256", "16384", "1048576", "4194304"}, *const kv[2] = {"f16", "f32"},
                                 *const ub[2] = {"32", "512"}, *const attn[2] = {"on", "off"};
        static const char *const *const vn[4] = {ctx, kv, ub, attn};
        enum { N = 32 };
        struct x222 g;
        x222_init(&g, N, nv, an, af, vn);
        const struct search_space *sp = &g.sp;
        const struct search_obs served = {.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
        struct search_obs obs[N] = {0};
        obs[CELL(0, 0, 0, 0)] = served;
        obs[CELL(0, 1, 1, 1)] = served;
        obs[CELL(1, 1, 0, 1)] = served;
        obs[CELL(3, 1, 1, 1)] = RAN_OUT("10240.00");
        obs[CELL(2, 1, 0, 0)] = RAN_OUT("2560.00");
        obs[CELL(2, 1, 1, 1)] = RAN_OUT("2560.00");
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(sp, obs, &m), 0);
        /* ctx=1048576 kv=f32 ub=32 attn=off: the first one's values but attn */
        _cleanup_free_ char *why = predicted_to_fail(m, CELL(2, 1, 0, 1), "ctx=1048576 kv=f32 ub=32 attn=off");
        assert_non_null(strstr(why, "predicted crash (oom): cell c0000020 ran out of memory with these values but attn=on "
                                    "(here off); the allocation that failed (\"E ggml_aligned_malloc: insufficient "
                                    "memory (attempted to allocate 2560.00 MB)\") failed at one size in cells that differ on attn"));
        assert_null(strstr(why, "larger size"));
        /* a larger context and another -ub: both rules at once */
        _cleanup_free_ char *both = search_model_why(m, CELL(3, 1, 0, 1), false);
        print_message("why: %s\n", both);
        assert_non_null(strstr(both, "ran out of memory with these values but"));
        /* the other cache type: the pair of other sizes (ctx, ub and attn apart; ub and attn
         * shown alike) says ctx changes the allocation, not kv: nothing has shown kv alike */
        _cleanup_free_ char *other = search_model_why(m, CELL(2, 0, 0, 0), false);
        print_message("kv=f16: %s\n", other);
        assert_null(strstr(other, "with these values but"));
        /* never chosen, however long the search goes on */
        never_chosen(sp, obs, (const size_t[]){CELL(2, 1, 0, 1), CELL(2, 1, 1, 0)}, 2, kv_cache);
        search_model_free(m);
        /* every line of one size: a fixed chunk, which says nothing of the allocation */
        struct search_obs one[N];
        memcpy(one, obs, sizeof(one));
        one[CELL(3, 1, 1, 1)] = RAN_OUT("2560.00");
        not_by_alloc(sp, one, CELL(2, 1, 0, 1), "one size");
        /* two cells of other sizes that differ on ub and attn alone: one of them changes it */
        struct search_obs sizes[N];
        memcpy(sizes, obs, sizeof(sizes));
        sizes[CELL(2, 0, 0, 0)] = RAN_OUT("1280.00");
        sizes[CELL(2, 0, 1, 1)] = RAN_OUT("640.00");
        not_by_alloc(sp, sizes, CELL(2, 1, 0, 1), "other sizes on ub and attn");
        /* a cell that loaded with attn=off beside one that ran out with attn=on: attn saved it */
        obs[CELL(2, 1, 0, 1)] = served;
        not_by_alloc(sp, obs, CELL(2, 1, 1, 0), "after a cell that loaded");
}

/* What a line says fits (by_room): vLLM's line for a KV cache that does not hold one request
 * of max_model_len gives the longest that would (tests/lines/vllm.txt: 131072 asked, 32192
 * fit at --gpu-memory-utilization 0.9). A cell with the same values but a context past that
 * length runs out too, 32768 as well as 65536 (the rule of sizes alone waits for them);
 * one within it fits, as far as that line goes; a cell that differs on an axis that is not a
 * size (the share, the attention backend) is not the line's to tell. */
#define VLLM_ROOM(tokens)                                                                                              \
        ((struct search_obs){.state = SEARCH_INFEASIBLE,                                                               \
                             .kind = "crash/oom",                                                                      \
                             .evidence = "ValueError: To serve at least one request with the model's max seq len "     \
                                         "(131072), (16.0 GiB KV cache is needed, which is larger than the available " \
                                         "KV cache memory (3.93 GiB). Based on the available memory, the estimated "   \
                                         "maximum model length is " tokens ". Try increasing "                         \
                                         "`gpu_memory_utilization` or decreasing `max_model_len` when initializing "   \
                                         "the engine."})

/* vLLM as test_memory_room's line says: at 0.90 and FLASH_ATTN with 128 sequences a context of
 * 32192 fits; twice that at 0.95, a little less with 256 sequences; the attention backend
 * changes nothing. */
static struct search_obs vllm_room(const struct search_space *sp, size_t k) {
        static const double ctx[4] = {8192, 32768, 65536, 131072};
        const size_t *c = sp->choice + k * sp->n_axes;
        double room = (c[1] ? 64384 : 32192) - (c[3] ? 1024 : 0);
        if (ctx[c[0]] <= room)
                return (struct search_obs){.state = SEARCH_FEASIBLE, .has_value = true, .value = 100 + (double)c[2]};
        return c[1] ? VLLM_ROOM("64384") : VLLM_ROOM("32192");
}

static void test_memory_room(void **state) {
        (void)state;
        static const size_t nv[4] = {4, 2, 2, 2};
        static const char *const an[4] = {"ctx", "util", "attn", "seqs"};
        static const char *const af[4] = {"--max-model-len", "--gpu-memory-utilization", "--attention-backend",
                                          "--max-num-seqs"};
        static const char *const ctx[4] = {"8192", "32768", "65536", "131072"}, *const util[2] = {"0.90", "0.95"},
                                 *const attn[2] = {"FLASH_ATTN", "FLASHINFER"}, *const seqs[2] = {"128", "256"};
        static const char *const *const vn[4] = {ctx, util, attn, seqs};
        enum { N = 32 };
        struct x222 g;
        x222_init(&g, N, nv, an, af, vn);
        const struct search_obs served = {.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
        struct search_obs obs[N] = {0};
        obs[CELL(0, 1, 1, 1)] = served;
        obs[CELL(3, 0, 0, 0)] = VLLM_ROOM("32192");
        struct search_model *m = NULL;
        assert_int_equal(search_model_fit(&g.sp, obs, &m), 0);
        _cleanup_free_ char *why = predicted_to_fail(m, CELL(2, 0, 0, 0), "ctx=65536 util=0.90 FLASH_ATTN seqs=128");
        assert_non_null(strstr(why, "predicted crash (oom): cell c0000024 ran out of memory with these values but "
                                    "ctx=131072 (here 65536); its line says the memory left holds a context of 32192 "
                                    "at most (\"…Based on the available memory, the estimated maximum model length is "
                                    "32192. Try increasing"));
        assert_null(strstr(why, "larger size"));
        /* 32768 is past 32192 too; with more sequences, a larger size besides */
        _cleanup_free_ char *just = predicted_to_fail(m, CELL(1, 0, 0, 0), "ctx=32768 util=0.90 FLASH_ATTN seqs=128");
        assert_non_null(strstr(just, "holds a context of 32192 at most"));
        _cleanup_free_ char *more = predicted_to_fail(m, CELL(1, 0, 0, 1), "ctx=32768 util=0.90 FLASH_ATTN seqs=256");
        assert_non_null(strstr(more, "holds a context of 32192 at most"));
        assert_non_null(strstr(more, ", and a larger size needs no less memory"));
        /* within the room: sure to fit (fewer sequences too would be); not with more */
        assert_true(search_oom_chance(m, CELL(0, 0, 0, 0)) == 0);
        assert_true(search_oom_chance(m, CELL(0, 0, 0, 1)) > 0);
        /* another share or backend: not the line's to tell */
        for (size_t k = 0; k < N; k++) {
                _cleanup_free_ char *w = search_model_why(m, k, false);
                const size_t *c = g.sp.choice + k * 4;
                if (c[1] != 0 || c[2] != 0)
                        assert_null(strstr(w ? w : "", "holds a context"));
        }
        search_model_free(m);
        /* the V0 line says it in other words */
        struct search_obs v0[N];
        memcpy(v0, obs, sizeof(v0));
        v0[CELL(3, 0, 0, 0)].evidence = "ValueError: The model's max seq len (131072) is larger than the maximum number "
                                        "of tokens that can be stored in KV cache (32192). Try increasing "
                                        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                                        "engine.";
        assert_int_equal(search_model_fit(&g.sp, v0, &m), 0);
        _cleanup_free_ char *old = predicted_to_fail(m, CELL(1, 0, 0, 0), "V0: ctx=32768 util=0.90 FLASH_ATTN seqs=128");
        assert_non_null(strstr(old, "holds a context of 32192 at most"));
        search_model_free(m);
        /* a line that says no length: the rule of sizes alone, which says nothing of 32768 */
        struct search_obs none[N];
        memcpy(none, obs, sizeof(none));
        none[CELL(3, 0, 0, 0)].evidence = "No available memory for the cache blocks. Try increasing "
                                          "`gpu_memory_utilization` when initializing the engine.";
        assert_int_equal(search_model_fit(&g.sp, none, &m), 0);
        _cleanup_free_ char *plain = search_model_why(m, CELL(1, 0, 0, 0), false);
        print_message("no length: %s\n", plain ? plain : "(none)");
        assert_null(strstr(plain ? plain : "", "ran out of memory with these values"));
        assert_true(search_oom_chance(m, CELL(0, 0, 0, 0)) > 0);
        search_model_free(m);
        /* two axes of a context's length: which one the line means is not plain, nothing said */
        static const char *const af2[4] = {"--max-model-len", "--gpu-memory-utilization", "--attention-backend",
                                           "--max-seq-len-to-capture"};
        struct x222 two;
        x222_init(&two, N, nv, an, af2, vn);
        assert_int_equal(search_model_fit(&two.sp, obs, &m), 0);
        _cleanup_free_ char *both = search_model_why(m, CELL(1, 0, 0, 0), false);
        print_message("two context axes: %s\n", both ? both : "(none)");
        assert_null(strstr(both ? both : "", "holds a context"));
        search_model_free(m);
        /* never launched past the room a line gave, however long the search goes on */
        never_chosen(&g.sp, obs, (const size_t[]){CELL(2, 0, 0, 0), CELL(1, 0, 0, 0), CELL(1, 0, 0, 1)}, 3, vllm_room);
}

/* The allocation that failed, and what was left for it. Shown alike at one size, an axis is
 * alike at that size and larger ones only: on the real llama-server (CPU, the testbed's model, 800 MB of
 * address space, -fa on; docs/data/search-alloc-2026-12-07/llama-server-headroom.txt) the
 * compute buffer of -ub 8192 at -c 131072 (2128.19 MB) fails in either cache type, more than
 * any headroom, while at -c 32768 (587.69 MB) the f32 cache fails and the f16 one leaves room
 * and serves. And where the line says what was free (PyTorch), two cells of one size with
 * other free memory show nothing alike: a larger memory share left less for a CUDA graph. */
static void test_memory_headroom(void **state) {
        (void)state;
        {
                static const size_t nv[4] = {2, 2, 2, 2};
                static const char *const an[4] = {"ctx", "kv", "ub", "mmap"};
                static const char *const af[4] = {"-c", NULL, "-ub", NULL};
                static const char *const ctx[2] = {"32768", "131072"}, *const kv[2] = {"f16", "f32"},
                                         *const ub[2] = {"2048", "8192"}, *const mm[2] = {"mmap", "no-mmap"};
                static const char *const *const vn[4] = {ctx, kv, ub, mm};
                enum { N = 16 };
                struct x222 g;
                x222_init(&g, N, nv, an, af, vn);
                const struct search_obs served = {.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
                struct search_obs obs[N] = {0};
                obs[CELL(0, 0, 0, 0)] = served;
                obs[CELL(0, 1, 0, 0)] = served;
                obs[CELL(1, 0, 1, 0)] = RAN_OUT("2128.19");
                obs[CELL(1, 1, 1, 1)] = RAN_OUT("2128.19");
                obs[CELL(0, 1, 1, 0)] = RAN_OUT("587.69");
                struct search_model *m = NULL;
                assert_int_equal(search_model_fit(&g.sp, obs, &m), 0);
                /* at 2128.19 MB the cache type and the mapping are shown alike */
                _cleanup_free_ char *why = predicted_to_fail(m, CELL(1, 0, 1, 1), "ctx=131072 kv=f16 ub=8192 no-mmap");
                assert_non_null(strstr(why, "failed at one size in cells that differ on"));
                search_model_free(m);
                /* at 587.69 MB nothing is: the f16 cache beside it serves on the real server */
                not_by_alloc(&g.sp, obs, CELL(0, 0, 1, 0), "ctx=32768 kv=f16 ub=8192 mmap");
                not_by_alloc(&g.sp, obs, CELL(0, 0, 1, 1), "ctx=32768 kv=f16 ub=8192 no-mmap");
                /* and once that cell served, beside the f32 one that ran out at 587.69 MB on
                 * both axes: it says nothing of 2128.19 MB, whose cells stay predicted */
                obs[CELL(0, 0, 1, 1)] = served;
                assert_int_equal(search_model_fit(&g.sp, obs, &m), 0);
                _cleanup_free_ char *after = predicted_to_fail(m, CELL(1, 0, 1, 1), "the same, after ctx=32768 kv=f16 served");
                assert_non_null(strstr(after, "failed at one size in cells that differ on"));
                search_model_free(m);
        }
        {
                static const size_t nv[4] = {4, 2, 2, 2};
                static const char *const an[4] = {"mem", "attn", "cgbs", "kv"};
                static const char *const af[4] = {"--mem-fraction-static", "--attention-backend", "--cuda-graph-max-bs",
                                                  "--kv-cache-dtype"};
                static const char *const mem[4] = {"0.80", "0.85", "0.88", "0.90"}, *const attn[2] = {"fa3", "flashinfer"},
                                         *const cgbs[2] = {"80", "160"}, *const kv[2] = {"auto", "fp8_e4m3"};
                static const char *const *const vn[4] = {mem, attn, cgbs, kv};
                enum { N = 32 };
                struct x222 g;
                x222_init(&g, N, nv, an, af, vn);
#define TORCH_OOM(gib, free)                                                                                           \
        ((struct search_obs){.state = SEARCH_INFEASIBLE,                                                               \
                             .kind = "crash/oom",                                                                      \
                             .evidence = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " gib          \
                                         " GiB. GPU 0 has a total capacity of 79.11 GiB of which " free " GiB is free."})
                const struct search_obs served = {.state = SEARCH_FEASIBLE, .has_value = true, .value = 100};
                struct search_obs obs[N] = {0};
                obs[CELL(0, 0, 0, 0)] = served;
                obs[CELL(3, 0, 1, 0)] = TORCH_OOM("1.50", "0.40");
                obs[CELL(2, 0, 1, 0)] = TORCH_OOM("1.50", "1.10");
                obs[CELL(3, 1, 1, 0)] = TORCH_OOM("1.50", "0.40");
                obs[CELL(3, 1, 1, 1)] = TORCH_OOM("1.50", "0.40");
                obs[CELL(3, 0, 0, 0)] = TORCH_OOM("0.75", "0.40");
                struct search_model *m = NULL;
                assert_int_equal(search_model_fit(&g.sp, obs, &m), 0);
                /* one size, one free memory: attn and kv shown alike */
                _cleanup_free_ char *why = predicted_to_fail(m, CELL(3, 0, 1, 1), "mem=0.90 fa3 cgbs=160 fp8");
                assert_non_null(strstr(why, "failed at one size in cells that differ on"));
                search_model_free(m);
                /* one size, other free memory: the share changed the headroom */
                for (size_t v = 0; v < 2; v++)
                        not_by_alloc(&g.sp, obs, CELL(v, 0, 1, 0), "a smaller share beside cgbs=160");
                /* the same cells, their lines saying nothing of what was free: the share
                 * would be taken for alike (the rule's reach where a line says less) */
                struct search_obs bare[N];
                memcpy(bare, obs, sizeof(bare));
                const size_t out[] = {CELL(3, 0, 1, 0), CELL(2, 0, 1, 0), CELL(3, 1, 1, 0), CELL(3, 1, 1, 1)};
                for (size_t i = 0; i < ELEMENTSOF(out); i++)
                        bare[out[i]].evidence = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB.";
                bare[CELL(3, 0, 0, 0)].evidence = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 0.75 GiB.";
                /* (the cell that loaded at mem=0.80 beside cgbs=80 says the share saves the
                 * smaller allocation of 0.75 GiB, not the one of 1.50 GiB) */
                assert_int_equal(search_model_fit(&g.sp, bare, &m), 0);
                _cleanup_free_ char *bare_why = predicted_to_fail(m, CELL(0, 0, 1, 0), "mem=0.80, lines without free");
                assert_non_null(strstr(bare_why, "differ on"));
                search_model_free(m);
#undef TORCH_OOM
        }
}
#undef RAN_OUT
#undef CELL

/* Cells in flight (search_obs.pending) are fitted as their predicted outcome: each new
 * decision picks a cell not in flight, the launches in flight count against the budget,
 * and a stop while some are in flight is only for now. */
static void test_liar(void **state) {
        (void)state;
        const size_t nv[] = {4, 4, 3};
        struct sim_space *s = NULL;
        assert_int_equal(sim_space_new(3, nv, hand_axes, &s), 0);
        assert_int_equal(sim_space_set_effect(s, 0, 1, 0.1), 0);
        assert_int_equal(sim_space_set_effect(s, 1, 2, 0.2), 0);
        assert_int_equal(sim_space_set_effect(s, 2, 1, 0.15), 0);
        assert_int_equal(sim_space_finish(s), 0);
        struct search_space v;
        sim_space_view(s, &v);
        size_t n = sim_space_cells(s);
        _cleanup_free_ struct search_obs *obs = calloc(n, sizeof(*obs));
        assert_non_null(obs);
        uint64_t rng = 7;
        const size_t served[] = {0, 12, 3, 1};
        for (size_t i = 0; i < ELEMENTSOF(served); i++)
                assert_int_equal(sim_launch(s, served[i], &rng, &obs[served[i]], NULL), 0);
        /* eight decisions in a row, each with the cells chosen before in flight */
        long picked[8];
        for (size_t i = 0; i < ELEMENTSOF(picked); i++) {
                struct search_model *m = NULL;
                struct search_decision d;
                assert_int_equal(search_model_fit(&v, obs, &m), 0);
                assert_int_equal(search_model_pending(m), i);
                assert_int_equal(search_model_launches(m), ELEMENTSOF(served) + i);
                assert_int_equal(search_model_decide(m, NULL, &d), 0);
                search_model_free(m);
                assert_true(d.next >= 0);
                assert_false(obs[d.next].pending);
                for (size_t j = 0; j < i; j++)
                        assert_true(d.next != picked[j]);
                picked[i] = d.next;
                if (obs[d.next].state == SEARCH_UNKNOWN)
                        obs[d.next].pending = true;
                else
                        break; /* measured again: not a new cell */
        }
        /* the budget counts the cells in flight: spent, the stop is for now */
        struct search_model *m = NULL;
        struct search_decision d;
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        struct search_options o = {.max_launches = search_model_launches(m)};
        assert_int_equal(search_model_decide(m, &o, &d), 0);
        assert_int_equal(d.next, -1);
        assert_string_equal(d.stop, "budget");
        assert_true(d.in_flight);
        search_model_free(m);
        /* none in flight: the same stop is final */
        for (size_t k = 0; k < n; k++)
                obs[k].pending = false;
        o.max_launches = ELEMENTSOF(served);
        assert_int_equal(search_model_fit(&v, obs, &m), 0);
        assert_int_equal(search_model_pending(m), 0);
        assert_int_equal(search_model_decide(m, &o, &d), 0);
        assert_int_equal(d.next, -1);
        assert_false(d.in_flight);
        search_model_free(m);
        sim_space_free(s);
}

/* ---- spaces read from a file (sim_space_load) ---- */

/* The space a memory stream of JSON (its cells' array still open) holds, loaded. */
static struct sim_space *space_closed(FILE *f, char **out) {
        fputs("]}", f);
        assert_int_equal(fclose(f), 0);
        struct sim_space *sp = NULL;
        char err[256];
        int rc = sim_space_load(*out, &sp, err, sizeof(err));
        free(*out);
        if (rc < 0)
                print_message("%s\n", err);
        assert_int_equal(rc, 0);
        return sp;
}

/* Read from one line of JSON: attention backend x KV cache x memory fraction x CUDA graph batch, 240
 * cells; triton cannot read an fp8_e4m3 cache (a line naming both values, no flag), memory
 * fraction 0.93 runs out at the two largest batches, and a quarter of FlashInfer's cells meet
 * NCCL's watchdog on 30% of their launches. */
static struct sim_space *pair_space(void) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        assert_non_null(f);
        fputs("{\"name\": \"pair\", \"noise\": 0.02, \"axes\": ["
              "{\"name\": \"attn\", \"flag\": \"--attention-backend\", \"words\": [\"attention backend\"], "
              "\"values\": [\"auto\", \"fa3\", \"triton\", \"flashinfer\"]}, "
              "{\"name\": \"kv\", \"flag\": \"--kv-cache-dtype\", \"values\": [\"auto\", \"fp8_e4m3\", \"bf16\"]}, "
              "{\"name\": \"mem\", \"flag\": \"--mem-fraction-static\", \"values\": [\"0.80\", \"0.85\", \"0.90\", "
              "\"0.93\"]}, "
              "{\"name\": \"bs\", \"flag\": \"--cuda-graph-max-bs\", \"values\": [\"auto\", \"64\", \"128\", \"256\", "
              "\"512\"]}], \"cells\": [",
              f);
        for (size_t k = 0; k < 240; k++) {
                size_t a = k / 60, c = k / 20 % 3, m = k / 5 % 4, b = k % 5;
                double speed = 100 * (a == 1 ? 1.3 : a == 2 ? 0.9 : a == 3 ? 1.1 : 1) * (c == 1 ? 1.15 : c == 2 ? 0.95 : 1) *
                               (1 + 0.05 * (double)m) * (1 + 0.03 * (double)b);
                fprintf(f, "%s{\"s\": %.3f", k ? ", " : "", speed);
                if (a == 2 && c == 1)
                        fputs(", \"fail\": \"crash/config\", \"line\": \"ValueError: triton attention backend does not "
                              "support fp8_e4m3 KV cache\"",
                              f);
                else if (m == 3 && b >= 3)
                        fputs(", \"fail\": \"crash/oom\", \"line\": \"torch.OutOfMemoryError: CUDA out of memory. Tried "
                              "to allocate 1.50 GiB\"",
                              f);
                else if (a == 3 && k % 4 == 0)
                        fputs(", \"flaky\": 0.3, \"flaky_fail\": \"crash/nccl\", \"flaky_line\": \"Watchdog caught "
                              "collective operation timeout\"",
                              f);
                fputc('}', f);
        }
        return space_closed(f, &out);
}

/* The loaded space's truth, its launches' verdicts and costs; and malformed lines refused
 * with a reason. */
static void test_sim_load(void **state) {
        (void)state;
        struct sim_space *s = pair_space();
        char err[256];
        assert_string_equal(sim_space_name(s), "pair");
        assert_int_equal(sim_space_cells(s), 240);
        size_t best;
        double best_speed;
        sim_true_best(s, &best, &best_speed);
        /* fa3, fp8_e4m3, 0.90 (0.93 runs out at 256 and 512), 512 */
        assert_int_equal(best, 1 * 60 + 1 * 20 + 2 * 5 + 4);
        assert_float_equal(best_speed, 100 * 1.3 * 1.15 * 1.10 * 1.12, 0.01);
        assert_int_equal(sim_cell_fail(s, 2 * 60 + 1 * 20), SIM_FAIL_CONFIG);
        assert_int_equal(sim_cell_fail(s, 3 * 5 + 4), SIM_FAIL_OOM);
        assert_int_equal(sim_cell_fail(s, 3 * 60), SIM_FAIL_NONE); /* flaky, but it serves */
        assert_int_equal(sim_space_lines(s), SIM_LINES_NONE);      /* the line names a pair, no one value */
        uint64_t rng = 5;
        struct search_obs o = {0};
        double sec;
        assert_int_equal(sim_launch(s, 2 * 60 + 1 * 20 + 7, &rng, &o, &sec), 0);
        assert_int_equal(o.state, SEARCH_INFEASIBLE);
        assert_string_equal(o.kind, "crash/config");
        assert_non_null(strstr(o.evidence, "triton attention backend"));
        assert_true(sec >= 0.1 * 0.9 * 600 && sec <= 0.4 * 1.1 * 600);
        /* the flaky cell: some launches meet the host's fault, the rest serve */
        size_t faults = 0;
        for (int i = 0; i < 200; i++) {
                struct search_obs x = {0};
                assert_int_equal(sim_launch(s, 3 * 60, &rng, &x, NULL), 0);
                if (x.state == SEARCH_INFEASIBLE) {
                        assert_string_equal(x.kind, "crash/nccl");
                        faults++;
                }
        }
        assert_true(faults > 30 && faults < 90);
        sim_space_free(s);

        static const struct {
                const char *json, *why;
        } bad[] = {
                {"{\"name\": \"x\", \"axes\": [", "not JSON"},
                {"[1, 2]", "must be a JSON object"},
                {"{\"axes\": [], \"cells\": []}", "\"name\""},
                {"{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"auto\", \"b\"]}], \"cells\": [{\"s\": 1}]}",
                 "must hold 2 cells"},
                {"{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"auto\"]}], \"cells\": [{\"s\": -1}]}",
                 "cell 0: \"s\""},
                {"{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"auto\"]}], \"cells\": [{\"s\": 1, "
                 "\"fail\": \"broken\"}]}",
                 "cell 0: \"fail\" must be a verdict"},
                {"{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"auto\"]}], \"cells\": [{\"s\": 1, "
                 "\"flaky\": 1.5, \"flaky_fail\": \"crash/nccl\"}]}",
                 "\"flaky\" must be a chance"},
                {"{\"name\": \"x\", \"noise\": 0, \"axes\": [{\"name\": \"a\", \"values\": [\"auto\"]}], \"cells\": "
                 "[{\"s\": 1}]}",
                 "\"noise\" must be"},
                {"{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"auto\"]}], \"cells\": [{\"s\": 1, "
                 "\"fail\": \"crash/arch\", \"line\": \"no kernel image\"}]}",
                 "no cell serves right"},
        };
        /* a request refused for its length gets gauntlet's verdict, whatever the file says */
        static const char refused[] =
                "{\"name\": \"x\", \"axes\": [{\"name\": \"np\", \"flag\": \"-np\", \"values\": [\"1\", \"64\"]}], "
                "\"cells\": [{\"s\": 1}, {\"s\": 2, \"fail\": \"garbage/http\", \"line\": \"under load (8 concurrent): "
                "HTTP 400 request (4167 tokens) exceeds the available context size (1024 tokens)\"}]}";
        assert_int_equal(sim_space_load(refused, &s, err, sizeof(err)), 0);
        assert_int_equal(sim_launch(s, 1, &rng, &o, NULL), 0);
        assert_string_equal(o.kind, "overload/context");
        sim_space_free(s);
        /* an axis without a flag is read by a switch's flag or an environment variable's name
         * among its words, as gauntlet's sweep reads it; else by one of the loader's making */
        static const char unflagged[] =
                "{\"name\": \"x\", \"axes\": [{\"name\": \"eager\", \"words\": [\"enforce eager\", "
                "\"--enforce-eager\"], \"values\": [\"off\", \"on\"]}, {\"name\": \"fi\", \"words\": "
                "[\"VLLM_FLASHINFER_MOE_BACKEND\"], \"values\": [\"unset\", \"latency\"]}, {\"name\": \"plain\", "
                "\"words\": [\"plain words\", \"-x\"], \"values\": [\"a\", \"b\"]}], \"cells\": [{\"s\": 1}, {\"s\": 2}, "
                "{\"s\": 3}, {\"s\": 4}, {\"s\": 5}, {\"s\": 6}, {\"s\": 7}, {\"s\": 8}]}";
        assert_int_equal(sim_space_load(unflagged, &s, err, sizeof(err)), 0);
        struct search_space view;
        sim_space_view(s, &view);
        assert_string_equal(view.axis_flags[0], "--enforce-eager");
        assert_string_equal(view.axis_flags[1], "VLLM_FLASHINFER_MOE_BACKEND");
        assert_string_equal(view.axis_flags[2], "--flag-a2");
        sim_space_free(s);
        /* a server killed by the kernel is quoted as gauntlet's diagnosis quotes it: the
         * signal, then the log's first error line, else its last line */
        static const char killed[] =
                "{\"name\": \"x\", \"axes\": [{\"name\": \"a\", \"values\": [\"0\", \"1\", \"2\", \"3\"]}], "
                "\"cells\": [{\"s\": 1}, {\"s\": 1, \"fail\": \"crash/signal\", \"line\": \"INFO Loading weights "
                "took 26.27 seconds\"}, {\"s\": 1, \"fail\": \"crash/signal\", \"line\": \"RuntimeError: CUDA error: "
                "misaligned address\"}, {\"s\": 1, \"fail\": \"crash/signal\", \"line\": \"\"}]}";
        static const char *const quoted[] = {
                "killed by SIGKILL; last log line: INFO Loading weights took 26.27 seconds",
                "killed by SIGKILL; first error line: RuntimeError: CUDA error: misaligned address",
                "killed by SIGKILL"};
        assert_int_equal(sim_space_load(killed, &s, err, sizeof(err)), 0);
        for (size_t k = 1; k <= 3; k++) {
                assert_int_equal(sim_launch(s, k, &rng, &o, NULL), 0);
                assert_string_equal(o.kind, "crash/signal");
                assert_string_equal(o.evidence, quoted[k - 1]);
        }
        sim_space_free(s);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct sim_space *t = NULL;
                assert_true(sim_space_load(bad[i].json, &t, err, sizeof(err)) < 0);
                assert_null(t);
                print_message("%s\n", err);
                assert_non_null(strstr(err, bad[i].why));
        }
}

/* A pair its line names (no flag: "triton attention backend does not support fp8_e4m3 KV
 * cache") is launched once: after it the pair is condemned by its line, as a named value is.
 * Before, the search without a budget launched the pair three times beside other partners,
 * each a cheap crash at load worth a launch per second. */
static void count_pair(void *userdata, const struct sim_step *st) {
        size_t *n = userdata;
        n[0] += st->cell / 60 == 2 && st->cell / 20 % 3 == 1;
        n[1]++;
}

static void test_sim_named_pair(void **state) {
        (void)state;
        struct sim_space *s = pair_space();
        for (uint64_t seed = 1; seed <= 4; seed++) {
                size_t n[2] = {0, 0};
                struct sim_run_params p = {.on_step = count_pair, .userdata = n};
                struct sim_result r;
                assert_int_equal(sim_run(s, SIM_SEARCH, &p, seed, &r), 0);
                print_message("seed %" PRIu64 ": %zu launches, the pair in %zu, named %.3fx the best\n", seed, n[1],
                              n[0], r.named_speed / r.best_speed);
                assert_true(n[0] <= 1);
                assert_true(r.success);
        }
        sim_space_free(s);
}

/* A space where only two values together serve: vLLM's triton MoE beside an unquantized
 * KV cache (beside an FP8 cache it answers garbage); every other MoE backend hangs or
 * crashes with a line that names nothing. Read one value at a time, the garbage condemns
 * triton and the hangs the unquantized cache; a search so reading spent its budget and
 * named nothing (docs/search.md, "Only a pair serves"). */
static struct sim_space *only_pair_space(void) {
        static const char *const moe_lines[] = {
                "\"fail\": \"timeout/startup\", \"line\": \"INFO waiting for the engine core to start\"", NULL,
                "\"fail\": \"crash/arch\", \"line\": \"RuntimeError: none of the configured backends are usable\"",
                "\"fail\": \"crash/arch\", \"line\": \"RuntimeError: Failed to initialize TMA WS grouped gemm\"",
                "\"fail\": \"timeout/startup\", \"line\": \"INFO waiting for the engine core to start\""};
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        assert_non_null(f);
        fputs("{\"name\": \"only-pair\", \"noise\": 0.02, \"axes\": ["
              "{\"name\": \"moe\", \"flag\": \"--moe-backend\", \"values\": [\"auto\", \"triton\", \"cutlass\", "
              "\"flashinfer_trtllm\", \"flashinfer_cutedsl\"]}, "
              "{\"name\": \"kv\", \"flag\": \"--kv-cache-dtype\", \"values\": [\"auto\", \"fp8\", \"fp8_e4m3\"]}, "
              "{\"name\": \"attn\", \"flag\": \"--attention-backend\", \"values\": [\"auto\", \"FLASH_ATTN\", "
              "\"TRITON_ATTN\", \"FLEX_ATTENTION\"]}, "
              "{\"name\": \"gmu\", \"flag\": \"--gpu-memory-utilization\", \"values\": [\"0.9\", \"0.92\", \"0.95\"]}, "
              "{\"name\": \"async\", \"words\": [\"--async-scheduling\"], \"values\": [\"off\", \"on\"]}], \"cells\": [",
              f);
        for (size_t k = 0; k < 360; k++) {
                size_t moe = k / 72, kv = k / 24 % 3, attn = k / 6 % 4, gmu = k / 2 % 3, async = k % 2;
                double speed = 100 * (attn == 1 ? 1.2 : attn == 3 ? 0.8 : 1) * (1 + 0.04 * (double)gmu) *
                               (async ? 1.05 : 1) * (kv ? 1.1 : 1);
                fprintf(f, "%s{\"s\": %.3f", k ? ", " : "", speed);
                if (moe_lines[moe])
                        fprintf(f, ", %s", moe_lines[moe]);
                else if (kv != 0)
                        fputs(", \"fail\": \"garbage/repeat\", \"line\": \"++++++++++++++++++++++++++++++++\"", f);
                fputc('}', f);
        }
        return space_closed(f, &out);
}

/* Nothing served after a launch per value: the search covers the pairs never launched
 * together and finds the one that serves, within a tenth of the grid. */
static void test_only_pair_serves(void **state) {
        (void)state;
        struct sim_space *s = only_pair_space();
        size_t best;
        double best_speed;
        sim_true_best(s, &best, &best_speed);
        assert_int_equal(best, 1 * 72 + 0 * 24 + 1 * 6 + 2 * 2 + 1); /* triton, auto, FLASH_ATTN, 0.95, on */
        for (uint64_t seed = 1; seed <= 4; seed++) {
                struct sim_run_params p = {.budget = 36};
                struct sim_result r;
                assert_int_equal(sim_run(s, SIM_SEARCH, &p, seed, &r), 0);
                print_message("seed %" PRIu64 ": %zu launches, %zu failed, named %ld at %.3fx the best\n", seed,
                              r.launches, r.failed, r.named, r.named >= 0 ? r.named_speed / r.best_speed : 0.0);
                assert_true(r.launches <= 36);
                assert_true(r.named >= 0);
                assert_int_equal(sim_cell_fail(s, (size_t)r.named), SIM_FAIL_NONE);
                assert_true(r.success);
        }
        sim_space_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sim_load),
                cmocka_unit_test(test_sim_named_pair),
                cmocka_unit_test(test_only_pair_serves),
                cmocka_unit_test(test_memory_corner),
                cmocka_unit_test(test_memory_signal),
                cmocka_unit_test(test_memory_sizes),
                cmocka_unit_test(test_memory_alloc),
                cmocka_unit_test(test_memory_headroom),
                cmocka_unit_test(test_memory_room),
                cmocka_unit_test(test_sim_generate),
                cmocka_unit_test(test_sim_launch),
                cmocka_unit_test(test_sim_oom_sizes),
                cmocka_unit_test(test_sim_lines),
                cmocka_unit_test(test_sim_strategies),
                cmocka_unit_test(test_determinism),
                cmocka_unit_test(test_drawn_spaces_quick),
                cmocka_unit_test(test_arch_predicted),
                cmocka_unit_test(test_requirement_read),
                cmocka_unit_test(test_named_by_model),
                cmocka_unit_test(test_measured_again), cmocka_unit_test(test_flat_bounded),
                cmocka_unit_test(test_abandoned_count),
                cmocka_unit_test(test_garbage_defaults),
                cmocka_unit_test(test_names_launched),
                cmocka_unit_test(test_partner_not_suspect),
                cmocka_unit_test(test_liar),
                cmocka_unit_test_teardown(test_done_when, space_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
