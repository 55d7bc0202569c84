/* test_results.c -- the decisions of the results layer on a view built by hand: the score,
 * the best cell and its ties, the SLA, the figure, and the eval's gate. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "results/results.h"

/* A view of n passing cells, objective obj, each with one bench level of throughput tok[i]
 * at concurrency 1 and distance dist[i]. */
static struct report_view *view_of(const char *obj, const double *tok, const int *dist, size_t n) {
        struct report_view *v = calloc(1, sizeof(*v));
        assert_non_null(v);
        v->objective = strdup(obj);
        v->cells = calloc(n, sizeof(*v->cells));
        v->n_cells = n;
        v->eval.reference = -1;
        v->search.first = v->search.next = -1;
        for (size_t i = 0; i < n; i++) {
                struct report_cell *c = &v->cells[i];
                snprintf(c->id, sizeof(c->id), "%016zx", i + 1);
                c->has_attempt = true;
                c->verdict = VERDICT_PASS;
                c->distance = dist[i];
                c->bench = json_pack("[{s:i, s:i, s:f, s:{s:f}}]", "concurrency", 1, "completed", 10,
                                     "output_tokens_per_s", tok[i], "ttft_ms", "p50", 100.0 * (double)(i + 1));
        }
        return v;
}

static void test_best_and_ties(void **state) {
        (void)state;
        /* 200 and 199 tie (within 1%): the one closer to the defaults wins; 150 is below */
        const double tok[] = {150, 199, 200};
        const int dist[] = {0, 1, 2};
        struct report_view *v = view_of("output_tokens_per_s@1", tok, dist, 3);
        struct report_score s;
        assert_true(report_by_bench(v));
        assert_int_equal(report_cell_score(v, &v->cells[2], true, &s), 0);
        assert_true(s.higher_better);
        assert_true(s.value == 200);
        assert_int_equal(report_best_index(v, &s), 1);
        assert_true(s.value == 199);
        assert_string_equal(report_best(v), v->cells[1].id);
        size_t ties[4];
        assert_int_equal(report_best_ties(v, ties, 4), 1);
        assert_int_equal(ties[0], 2);
        assert_false(report_best_within_noise(v));
        /* the one ordering: best, then the scored by figure, failures after */
        v->cells[0].verdict = VERDICT_GARBAGE;
        struct report_ranked *order = NULL;
        assert_int_equal(report_order(v, &order), 0);
        assert_int_equal(order[0].index, 1);
        assert_int_equal(order[0].rank, REPORT_RANK_BEST);
        assert_int_equal(order[1].index, 2);
        assert_int_equal(order[1].rank, REPORT_RANK_SCORED);
        assert_int_equal(order[2].index, 0);
        assert_int_equal(order[2].rank, REPORT_RANK_FAILED);
        free(order);
        size_t counts[_VERDICT_MAX] = {0};
        assert_int_equal(report_count_verdicts(v, counts), 2);
        assert_int_equal(counts[VERDICT_GARBAGE], 1);
        /* a failed cell has no score and no figure */
        struct report_figure fig;
        assert_int_equal(report_cell_score(v, &v->cells[0], true, &s), -ENODATA);
        assert_int_equal(report_cell_figure_value(v, &v->cells[0], &fig), -ENODATA);
        assert_int_equal(report_cell_figure_value(v, &v->cells[2], &fig), 0);
        assert_true(fig.by_bench);
        assert_true(fig.value == 200);
        assert_int_equal(fig.level, 1);
        report_view_free(v);

        /* a lower-is-better objective: the smallest time wins */
        v = view_of("ttft_ms.p50@1", tok, dist, 3);
        assert_int_equal(report_best_index(v, &s), 0);
        assert_false(s.higher_better);
        report_view_free(v);
}

static void test_sla(void **state) {
        (void)state;
        const double tok[] = {100};
        const int dist[] = {0};
        struct report_view *v = view_of("output_tokens_per_s where ttft_ms.p50<=250", tok, dist, 1);
        struct report_cell *c = &v->cells[0];
        json_decref(c->bench);
        c->bench = json_pack("[{s:i, s:i, s:f, s:{s:f}}, {s:i, s:i, s:f, s:{s:f}}, {s:i, s:i, s:f, s:{s:f}}]",
                             "concurrency", 1, "completed", 10, "output_tokens_per_s", 50.0, "ttft_ms", "p50", 100.0,
                             "concurrency", 4, "completed", 10, "output_tokens_per_s", 150.0, "ttft_ms", "p50", 200.0,
                             "concurrency", 8, "completed", 10, "output_tokens_per_s", 250.0, "ttft_ms", "p50", 400.0);
        struct report_sla sla;
        assert_int_equal(report_cell_sla(v, c, &sla), 0);
        assert_false(sla.by_rate);
        assert_true(sla.met == 4);
        assert_true(sla.failed == 8);
        /* the level that broke the constraint does not count towards the score */
        struct report_score s;
        assert_int_equal(report_cell_score(v, c, true, &s), 0);
        assert_true(s.value == 150);
        report_view_free(v);
        /* no constraint: no SLA */
        v = view_of("output_tokens_per_s", tok, dist, 1);
        assert_int_equal(report_cell_sla(v, &v->cells[0], &sla), -ENODATA);
        report_view_free(v);
}

/* Gives cell c an eval of n answers, the first right ones right. */
static void give_eval(struct report_cell *c, size_t n, size_t right) {
        c->eval.ran = true;
        c->eval.n_answers = n;
        c->eval.answers = calloc(n, sizeof(*c->eval.answers));
        for (size_t i = 0; i < n; i++) {
                c->eval.answers[i].verdict = i < right ? VERDICT_PASS : VERDICT_WRONG;
                c->eval.answers[i].id = strdup_printf("q-%zu", i);
                c->eval.answers[i].output = strdup(i < right ? "323" : "324");
                eval_figures_add(&c->eval.fig, c->eval.answers[i].verdict);
        }
        eval_figures_finish(&c->eval.fig);
        c->eval.journal_verdict = c->verdict;
}

static void test_eval_gate(void **state) {
        (void)state;
        const double tok[] = {100, 300, 100};
        const int dist[] = {0, 1, 2};
        struct report_view *v = view_of("output_tokens_per_s@1", tok, dist, 3);
        v->eval.on = true;
        eval_options_init(&v->eval.rules);
        v->eval.questions = 200;
        give_eval(&v->cells[0], 200, 200);
        give_eval(&v->cells[1], 200, 128);  /* the fastest, and significantly less accurate */
        give_eval(&v->cells[2], 200, 199);  /* within the noise of the reference */
        assert_int_equal(report_view_apply_eval(v), 0);
        /* no reference named: the most accurate cell is the reference, never gated */
        assert_int_equal(v->eval.reference, 0);
        assert_string_equal(v->eval.reference_by, "most accurate");
        assert_true(v->cells[0].eval.is_reference);
        assert_int_equal(v->eval.gated, 1);
        assert_int_equal(v->cells[1].verdict, VERDICT_WRONG);
        assert_string_equal(v->cells[1].cause, "accuracy");
        assert_non_null(strstr(v->cells[1].evidence, "(128/200)"));
        assert_int_equal(v->cells[1].eval.journal_verdict, VERDICT_PASS);
        assert_int_equal(v->cells[1].eval.gate, EVAL_GATE_ACCURACY);
        assert_int_equal(v->cells[2].verdict, VERDICT_PASS);
        assert_true(v->cells[2].eval.compared);
        /* the gated cell is out of the ranking: the best is the reference */
        assert_int_equal(report_best_index(v, NULL), 0);
        assert_string_equal(report_cell_verdict(&v->cells[1]), "wrong");
        report_view_free(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_best_and_ties),
                cmocka_unit_test(test_sla),
                cmocka_unit_test(test_eval_gate),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
