/* test_report.c -- best cell, JSON contract, Markdown and text escaping, secret masking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "journal/journal.h"
#include "report/report.h"
#include "results/report_load.h"
#include "text/secrets.h"

/* ---- best cell, on views built in memory ---- */

static struct report_check smoke_checks[8][2];

/* A cell: passing when v == VERDICT_PASS; tok_s < 0: no bench; smoke_ms: sum of checks. */
static void mkcell(struct report_cell *c, size_t pos, int distance, enum verdict v, double tok_s, unsigned smoke_ms) {
        *c = (struct report_cell){.position = pos, .distance = distance, .has_attempt = true, .verdict = v};
        snprintf(c->id, sizeof(c->id), "%016zx", pos + 0xa0);
        if (tok_s >= 0)
                c->bench = json_pack("[{s:i, s:i, s:f, s:{s:f}}, {s:i, s:i, s:f, s:{s:f}}]", "concurrency", 1,
                                     "completed", 64, "output_tokens_per_s", tok_s, "ttft_ms", "p50", 1000.0 / tok_s, "concurrency", 8, "completed", 64,
                                     "output_tokens_per_s", tok_s * 5, "ttft_ms", "p50", 8000.0 / tok_s);
        smoke_checks[pos][0] = (struct report_check){.name = "ok", .latency = smoke_ms * USEC_PER_MSEC / 2};
        smoke_checks[pos][1] = (struct report_check){.name = "math", .latency = smoke_ms * USEC_PER_MSEC / 2};
        c->checks = smoke_checks[pos];
        c->n_checks = smoke_ms ? 2 : 0;
}

static void drop_cells(struct report_cell *c, size_t n) {
        for (size_t i = 0; i < n; i++)
                json_decref(c[i].bench);
}

/* The one ordering: the best, passes by figure, passes without one, failures by verdict
 * then cause, skipped, not run; sweep order within. */
static void test_order(void **state) {
        struct report_cell c[8];
        struct report_view v = {.cells = c, .n_cells = 8, .objective = "output_tokens_per_s@1"};
        mkcell(&c[0], 0, 0, VERDICT_CRASH, -1, 0);
        c[0].cause = "oom";
        mkcell(&c[1], 1, 0, VERDICT_PASS, 100, 500);
        mkcell(&c[2], 2, 0, VERDICT_GARBAGE, -1, 0);
        mkcell(&c[3], 3, 0, VERDICT_PASS, 150, 500);
        mkcell(&c[4], 4, 0, VERDICT_CRASH, -1, 0);
        c[4].cause = "arch";
        mkcell(&c[5], 5, 0, VERDICT_SKIPPED, -1, 0);
        c[5].excluded = true;
        mkcell(&c[6], 6, 0, VERDICT_PASS, 120, 500);
        mkcell(&c[7], 7, 0, VERDICT_INVALID, -1, 0);
        c[7].has_attempt = false;
        struct report_ranked *o = NULL;
        assert_int_equal(report_order(&v, &o), 0);
        static const size_t want[] = {3, 6, 1, 2, 4, 0, 5, 7};
        static const enum report_rank rank[] = {REPORT_RANK_BEST,   REPORT_RANK_SCORED, REPORT_RANK_SCORED,
                                                REPORT_RANK_FAILED, REPORT_RANK_FAILED, REPORT_RANK_FAILED,
                                                REPORT_RANK_SKIPPED, REPORT_RANK_NOT_RUN};
        for (size_t i = 0; i < 8; i++) {
                assert_int_equal(o[i].index, want[i]);
                assert_int_equal(o[i].rank, rank[i]);
        }
        free(o);
        drop_cells(c, 8);
        (void)state;
}

static void test_best(void **state) {
        struct report_cell c[5];
        struct report_view v = {.cells = c, .n_cells = 5, .objective = "output_tokens_per_s@1"};
        struct report_score s;

        /* Clear winner by tok/s @1; a failing cell with more tok/s does not count. */
        mkcell(&c[0], 0, 0, VERDICT_PASS, 100, 500);
        mkcell(&c[1], 1, 1, VERDICT_PASS, 150, 900);
        mkcell(&c[2], 2, 0, VERDICT_GARBAGE, 900, 100);
        mkcell(&c[3], 3, 2, VERDICT_PASS, 120, 100);
        mkcell(&c[4], 4, 1, VERDICT_CRASH, -1, 0);
        assert_int_equal(report_best_index(&v, &s), 1);
        assert_true(s.by_bench && s.higher_better);
        assert_true(fabs(s.value - 150) < 1e-9);

        /* Within 1% ties: the smaller distance wins, although slightly slower. */
        drop_cells(c, 5);
        mkcell(&c[0], 0, 2, VERDICT_PASS, 150.0, 500);
        mkcell(&c[1], 1, 1, VERDICT_PASS, 149.0, 500);
        mkcell(&c[2], 2, 0, VERDICT_PASS, 148.6, 500);
        mkcell(&c[3], 3, 0, VERDICT_PASS, 147.0, 500); /* 2% below: out */
        mkcell(&c[4], 4, 0, VERDICT_WRONG, 200, 500);
        assert_int_equal(report_best_index(&v, NULL), 2);

        /* Equal distance too: the earlier cell. */
        drop_cells(c, 5);
        mkcell(&c[0], 0, 1, VERDICT_WRONG, 150.0, 500);
        mkcell(&c[1], 1, 1, VERDICT_PASS, 149.5, 500);
        mkcell(&c[2], 2, 1, VERDICT_PASS, 150.0, 500);
        mkcell(&c[3], 3, 1, VERDICT_PASS, 100.0, 500);
        mkcell(&c[4], 4, 1, VERDICT_PASS, 149.9, 500);
        assert_int_equal(report_best_index(&v, NULL), 1);

        /* Another level and another metric: @8 reads the concurrency-8 entry. */
        drop_cells(c, 5);
        mkcell(&c[0], 0, 0, VERDICT_PASS, 100, 500);
        mkcell(&c[1], 1, 0, VERDICT_PASS, 110, 500);
        mkcell(&c[2], 2, 0, VERDICT_PASS, 90, 500);
        mkcell(&c[3], 3, 0, VERDICT_TIMEOUT, -1, 0);
        mkcell(&c[4], 4, 0, VERDICT_SKIPPED, -1, 0);
        v.objective = "output_tokens_per_s@8";
        assert_int_equal(report_best_index(&v, &s), 1);
        assert_true(fabs(s.value - 550) < 1e-9);
        /* A latency metric is lower-is-better. */
        v.objective = "ttft_ms.p50@1";
        assert_int_equal(report_best_index(&v, &s), 1);
        assert_false(s.higher_better);
        /* The smoke objective ignores the bench: fastest smoke suite. */
        c[2].checks[0].latency = 10 * USEC_PER_MSEC;
        c[2].checks[1].latency = 10 * USEC_PER_MSEC;
        v.objective = "smoke";
        assert_int_equal(report_best_index(&v, &s), 2);
        assert_false(s.by_bench);
        assert_true(fabs(s.value - 0.02) < 1e-9);

        /* No bench anywhere: smoke time decides whatever the objective says. */
        drop_cells(c, 5);
        mkcell(&c[0], 0, 0, VERDICT_PASS, -1, 800);
        mkcell(&c[1], 1, 0, VERDICT_PASS, -1, 300);
        mkcell(&c[2], 2, 1, VERDICT_PASS, -1, 299); /* ties with 1, but farther from defaults */
        mkcell(&c[3], 3, 0, VERDICT_PASS, -1, 600);
        mkcell(&c[4], 4, 0, VERDICT_CRASH, -1, 0);
        v.objective = "output_tokens_per_s@1";
        assert_int_equal(report_best_index(&v, &s), 1);
        assert_false(s.by_bench);
        char *fig = report_cell_figure(&v, &c[1]);
        assert_string_equal(fig, "smoke 300ms");
        free(fig);
        assert_null(report_cell_figure(&v, &c[4])); /* a crash has no figure */
        c[0].checks[0].latency = 1250 * USEC_PER_MSEC;
        fig = report_cell_figure(&v, &c[0]);
        assert_string_equal(fig, "smoke 1.65s");
        assert_string_equal(report_best(&v), c[1].id);
        size_t counts[_VERDICT_MAX] = {0};
        assert_int_equal(report_count_verdicts(&v, counts), 4);
        assert_int_equal(counts[VERDICT_CRASH], 1);
        assert_int_equal(report_cells(&v), 5);
        free(fig);

        /* A search names the cell its model rates best, though another measured higher; a
         * named cell that did not pass, or without a figure, is not named. */
        drop_cells(c, 5);
        mkcell(&c[0], 0, 0, VERDICT_PASS, 100, 500);
        mkcell(&c[1], 1, 0, VERDICT_PASS, 160, 500);
        mkcell(&c[2], 2, 1, VERDICT_PASS, 156, 500);
        mkcell(&c[3], 3, 0, VERDICT_CRASH, -1, 0);
        mkcell(&c[4], 4, 0, VERDICT_PASS, -1, 500);
        v.objective = "output_tokens_per_s@1";
        assert_int_equal(report_best_index(&v, NULL), 1);
        v.search = (struct report_view_search){.on = true, .has_named = true, .named = 2, .named_estimate = 157,
                                               .top = 1, .top_estimate = 150, .next = -1};
        assert_int_equal(report_best_index(&v, &s), 2);
        assert_true(fabs(s.value - 156) < 1e-9);
        char *line = report_search_summary(&v);
        assert_non_null(line);
        assert_non_null(strstr(line, "best by the model: 00000000 (measured 156, estimated 157) over 00000000 (measured 160, "
                                     "estimated 150)"));
        free(line);
        v.search.named = 3;
        assert_int_equal(report_best_index(&v, NULL), 1);
        v.search.named = 4;
        assert_int_equal(report_best_index(&v, NULL), 1);
        v.search.on = false;
        v.search.named = 2;
        assert_int_equal(report_best_index(&v, NULL), 1);
        v.search = (struct report_view_search){0};

        /* No passing cell: no best. */
        for (size_t i = 0; i < 5; i++)
                c[i].verdict = VERDICT_GARBAGE;
        assert_int_equal(report_best_index(&v, &s), -ENOENT);
        assert_null(report_best(&v));
        drop_cells(c, 5);
}

/* ---- a journal built through the API, rendered ---- */

static char *a0[] = {"srv", "--host", "{host}", "--port", "{port}", "--api-key", "sk-live-123", "--moe", "auto", NULL};
static char *a1[] = {"srv", "--port", "{port}", "--moe", "cutlass", NULL};
static char *a2[] = {"srv", "--port", "{port}", "--moe", "bad|one", NULL};
static char *e0[] = {"HF_TOKEN=hf_abc", "NCCL_P2P_DISABLE=1", "OPENAI_API_KEY=sk-x", NULL};
static char *args_a[] = {"--moe", "auto", NULL}, *args_c[] = {"--moe", "cutlass", NULL}, *args_b[] = {"--moe", "bad|one", NULL};
static struct axis_value mv[] = {{.name = "auto", .args = args_a, .is_default = true},
                                 {.name = "cutlass", .args = args_c},
                                 {.name = "bad|one", .args = args_b}};
static struct axis ax[] = {{.name = "moe", .flag = "--moe", .values = mv, .n_values = 3}};
static size_t k0[] = {0}, k1[] = {1}, k2[] = {2};
static struct cell cl[] = {
        {.choice = k0, .id = "1111111111111111", .argv = a0, .env = e0},
        {.choice = k1, .id = "2222222222222222", .argv = a1, .distance = 1},
        {.choice = k2, .id = "3333333333333333", .argv = a2, .distance = 1},
};
static struct matrix mx = {.path = "m.yaml", .text = "engine: testbed\n", .engine = "testbed", .model = "tiny",
                           .host = "127.0.0.1", .startup_timeout = 60 * USEC_PER_SEC, .axes = ax, .n_axes = 1,
                           .objective = "output_tokens_per_s@1"};

#define HOSTILE "<script>alert(1)</script> | `x` ```\n![img](http://e/x.png) \033[31mred\033[0m \xc2\x9b" "2J \xff"

static struct report_view *make_view(char *dir) {
        char path[128];
        struct journal *j = NULL;
        int64_t sweep;
        snprintf(path, 128, "%s/j.db", dir);
        assert_int_equal(journal_open(path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &mx, "{\"gpus\": [{\"name\": \"H200\", \"arch\": \"sm_90\"}]}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &mx, cl, 3), 0);

        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cl[0].id, 17);
        a.port = 41000;
        a.log_path = strdup("runs/1111111111111111.log");
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        a.verdict = VERDICT_PASS;
        a.ready_after = 3 * USEC_PER_SEC;
        a.n_checks = 1;
        a.checks = calloc(1, sizeof(*a.checks));
        a.checks[0] = (struct check_result){.name = strdup("math"), .verdict = VERDICT_PASS, .output = strdup("323"),
                                            .http_status = 200, .latency = 180 * USEC_PER_MSEC};
        a.bench = json_pack("[{s:i, s:i, s:f, s:{s:f, s:f, s:f}}]", "concurrency", 1, "completed", 64,
                            "output_tokens_per_s", 172.3, "ttft_ms",
                            "p50", 80.1, "p90", 95.0, "p99", 120.2);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);

        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cl[1].id, 17);
        a.port = 41001;
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_int_equal(attempt_set_verdict(&a, VERDICT_GARBAGE, "repeat", HOSTILE), 0);
        a.n_checks = 1;
        a.checks = calloc(1, sizeof(*a.checks));
        a.checks[0] = (struct check_result){.name = strdup("ok"), .verdict = VERDICT_GARBAGE, .cause = strdup("repeat"),
                                            .evidence = strdup(HOSTILE), .output = strdup(HOSTILE),
                                            .latency = 90 * USEC_PER_MSEC};
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
        assert_int_equal(journal_end_sweep(j, sweep, "finished"), 0);

        struct report_view *v = NULL;
        assert_int_equal(report_load_view(j, &v), 0);
        journal_close(j);
        return v;
}

static int setup(void **state) {
        char *dir = strdup("/tmp/gauntlet-report-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        *state = dir;
        return 0;
}

static int teardown(void **state) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
        free(*state);
        return system(cmd) == 0 ? 0 : -1;
}

/* A benchmark that measured nothing makes no winner: no completed request, a throughput of
 * 0, or bench entries without the objective's figure. Ranges over repeats that overlap tie. */
static void test_best_needs_a_figure(void **state) {
        struct report_cell c[3];
        struct report_view v = {.cells = c, .n_cells = 3, .objective = "output_tokens_per_s@1"};
        mkcell(&c[0], 0, 0, VERDICT_PASS, 100, 500);
        mkcell(&c[1], 1, 0, VERDICT_PASS, 200, 500);
        mkcell(&c[2], 2, 0, VERDICT_PASS, 300, 500);
        json_object_set_new(json_array_get(c[2].bench, 0), "completed", json_integer(0));
        json_object_set_new(json_array_get(c[1].bench, 0), "output_tokens_per_s", json_real(0));
        assert_int_equal(report_best_index(&v, NULL), 0);
        /* nothing measured anywhere: no best, not a fallback to the smoke time */
        json_object_set_new(json_array_get(c[0].bench, 0), "completed", json_integer(0));
        assert_int_equal(report_best_index(&v, NULL), -ENOENT);
        assert_null(report_best(&v));
        drop_cells(c, 3);

        /* repeats: 100 [90, 110] and 105 [95, 115] overlap, 130 [125, 135] does not */
        mkcell(&c[0], 0, 1, VERDICT_PASS, 130, 500);
        mkcell(&c[1], 1, 0, VERDICT_PASS, 125, 500);
        mkcell(&c[2], 2, 2, VERDICT_PASS, 100, 500);
        json_object_set_new(json_array_get(c[0].bench, 0), "spread",
                            json_pack("{s:[f, f]}", "output_tokens_per_s", 120.0, 140.0));
        json_object_set_new(json_array_get(c[1].bench, 0), "spread",
                            json_pack("{s:[f, f]}", "output_tokens_per_s", 119.0, 131.0));
        json_object_set_new(json_array_get(c[2].bench, 0), "spread",
                            json_pack("{s:[f, f]}", "output_tokens_per_s", 90.0, 110.0));
        /* 125 is 4% below 130 but within its noise: the closer to the defaults is named */
        assert_int_equal(report_best_index(&v, NULL), 1);
        size_t ties[4];
        assert_int_equal(report_best_ties(&v, ties, 4), 1);
        assert_int_equal(ties[0], 0);
        assert_true(report_best_within_noise(&v));
        /* apart: the fastest wins and there is no tie */
        json_object_set_new(json_array_get(c[1].bench, 0), "spread",
                            json_pack("{s:[f, f]}", "output_tokens_per_s", 119.0, 119.5));
        assert_int_equal(report_best_index(&v, NULL), 0);
        assert_int_equal(report_best_ties(&v, ties, 4), 0);
        assert_false(report_best_within_noise(&v));
        drop_cells(c, 3);
}

/* An SLA objective: a level over a limit is not eligible, and the SLA figure per cell. */
static void test_sla(void **state) {
        struct report_cell c[2];
        struct report_view v = {.cells = c, .n_cells = 2, .objective = "output_tokens_per_s@8 where ttft_ms.p50<=1500"};
        mkcell(&c[0], 0, 0, VERDICT_PASS, 100, 500); /* @8: 500 tok/s, ttft p50 80 ms */
        mkcell(&c[1], 1, 0, VERDICT_PASS, 5, 500);   /* @8: 25 tok/s, ttft p50 1600 ms: over */
        assert_int_equal(report_best_index(&v, NULL), 0);
        struct report_sla s;
        assert_int_equal(report_cell_sla(&v, &c[0], &s), 0);
        assert_true(s.met == 8 && s.failed == 0);
        assert_int_equal(report_cell_sla(&v, &c[1], &s), 0);
        assert_true(s.met == 1 && s.failed == 8);
        _cleanup_free_ char *t = report_sla_text(&v, &c[1]);
        assert_string_equal(t, "SLA met up to 1 stream (not at 8)");
        /* the faster cell breaks the SLA: the slower one is best */
        v.objective = "output_tokens_per_s@8 where ttft_ms.p50<=10";
        assert_int_equal(report_best_index(&v, NULL), -ENOENT);
        v.objective = "output_tokens_per_s@8";
        assert_int_equal(report_cell_sla(&v, &c[0], &s), -ENODATA);
        drop_cells(c, 2);
}

static void test_json_contract(void **state) {
        struct report_view *v = make_view(*state);
        json_t *o = NULL;
        assert_int_equal(report_json(v, "0.1.0", &o), 0);
        /* Through text and back, as a consumer reads it. */
        char *text = json_dumps(o, JSON_INDENT(2));
        json_decref(o);
        assert_non_null(text);
        json_error_t err;
        json_t *r = json_loads(text, 0, &err);
        assert_non_null(r);
        assert_null(strstr(text, "sk-live-123"));
        assert_null(strstr(text, "hf_abc"));
        assert_null(strstr(text, "sk-x"));
        free(text);

        assert_string_equal(json_string_value(json_object_get(r, "gauntlet")), "0.1.0");
        assert_string_equal(json_string_value(json_object_get(r, "engine")), "testbed");
        assert_true(json_is_object(json_object_get(r, "host")));
        assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(r, "host"), "gpus"), 0), "arch")),
                            "sm_90");
        assert_string_equal(json_string_value(json_object_get(r, "best")), "1111111111111111");
        json_t *cells = json_object_get(r, "cells");
        assert_int_equal(json_array_size(cells), 3);

        json_t *c = json_array_get(cells, 0);
        assert_string_equal(json_string_value(json_object_get(c, "id")), "1111111111111111");
        assert_string_equal(json_string_value(json_object_get(json_object_get(c, "axes"), "moe")), "auto");
        json_t *cmd = json_object_get(c, "command");
        assert_true(json_is_array(cmd));
        assert_string_equal(json_string_value(json_array_get(cmd, 2)), "127.0.0.1");
        assert_string_equal(json_string_value(json_array_get(cmd, 4)), "41000"); /* the attempt's port */
        assert_string_equal(json_string_value(json_array_get(cmd, 6)), SECRETS_MASK);
        json_t *env = json_object_get(c, "env");
        assert_string_equal(json_string_value(json_object_get(env, "HF_TOKEN")), SECRETS_MASK);
        assert_string_equal(json_string_value(json_object_get(env, "OPENAI_API_KEY")), SECRETS_MASK);
        assert_string_equal(json_string_value(json_object_get(env, "NCCL_P2P_DISABLE")), "1");
        assert_string_equal(json_string_value(json_object_get(c, "verdict")), "pass");
        assert_true(json_is_null(json_object_get(c, "cause")));
        assert_true(json_is_null(json_object_get(c, "evidence")));
        assert_string_equal(json_string_value(json_object_get(c, "log")), "runs/1111111111111111.log");
        assert_true(fabs(json_number_value(json_object_get(c, "ready_s")) - 3.0) < 1e-9);
        json_t *ch = json_array_get(json_object_get(c, "checks"), 0);
        assert_string_equal(json_string_value(json_object_get(ch, "name")), "math");
        assert_string_equal(json_string_value(json_object_get(ch, "verdict")), "pass");
        assert_string_equal(json_string_value(json_object_get(ch, "output")), "323");
        assert_true(fabs(json_number_value(json_object_get(ch, "latency_s")) - 0.18) < 1e-9);
        json_t *b = json_array_get(json_object_get(c, "bench"), 0);
        assert_int_equal(json_integer_value(json_object_get(b, "concurrency")), 1);
        assert_true(fabs(json_number_value(json_object_get(b, "output_tokens_per_s")) - 172.3) < 1e-9);
        assert_true(fabs(json_number_value(json_object_get(json_object_get(b, "ttft_ms"), "p99")) - 120.2) < 1e-9);

        c = json_array_get(cells, 1);
        assert_string_equal(json_string_value(json_object_get(c, "verdict")), "garbage");
        assert_string_equal(json_string_value(json_object_get(c, "cause")), "repeat");
        /* Server text is kept as data; the invalid byte became U+FFFD, the rest is exact. */
        const char *ev = json_string_value(json_object_get(c, "evidence"));
        assert_non_null(ev);
        assert_non_null(strstr(ev, "<script>alert(1)</script>"));
        assert_non_null(strstr(ev, "\xef\xbf\xbd"));
        assert_true(json_is_null(json_object_get(c, "ready_s")));
        assert_true(json_is_null(json_object_get(c, "bench")));

        c = json_array_get(cells, 2);
        assert_true(json_is_null(json_object_get(c, "verdict")));
        assert_string_equal(json_string_value(json_object_get(c, "state")), "not run");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "summary"), "pass")), 1);
        json_decref(r);
        report_view_free(v);
}

static void test_markdown(void **state) {
        struct report_view *v = make_view(*state);
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(report_markdown(v, &b), 0);
        const char *md = buf_str(&b);
        /* The winner is the first row of the table. */
        const char *row = strstr(md, "|---|");
        assert_non_null(row);
        row = strchr(row, '\n') + 1;
        /* values are code spans, as in PR comments: `auto`, not escaped prose */
        assert_true(startswith(row, "| **best** | `auto` |"));
        assert_non_null(strstr(row, "172.3 tok/s @1"));
        /* Every table row has exactly the columns of the header: data cannot add a pipe. */
        for (const char *p = strstr(md, "|   | `moe`"); p && *p == '|';) {
                const char *end = strchr(p, '\n');
                int pipes = 0;
                for (const char *q = p; q < end; q++)
                        if (*q == '|' && (q == p || q[-1] != '\\'))
                                pipes++;
                assert_int_equal(pipes, 6);
                p = end + 1;
        }
        assert_non_null(strstr(md, "bad\\|one"));
        /* No raw HTML, no escape byte, no image link outside a code block. */
        assert_null(strstr(md, "\033"));
        assert_null(strstr(md, "\xc2\x9b"));
        const char *fence = strstr(md, "````\n");
        assert_non_null(fence); /* longer than the ``` inside the evidence */
        const char *close = strstr(fence + 5, "\n````\n");
        assert_non_null(close);
        const char *script = strstr(md, "<script>");
        assert_true(script > fence && script < close);
        assert_null(strstr(close, "<script>"));
        assert_non_null(strstr(fence, "\\x1b[31mred"));
        buf_release(&b);
        report_view_free(v);

        /* Cells: escaping as a table cell. */
        buf_init(&b, 0);
        assert_int_equal(report_escape_markdown(&b, "a|b`c<d>&e\nf*g_[h](i)!", 0), 0);
        assert_string_equal(buf_str(&b), "a\\|b\\`c&lt;d&gt;&amp;e<br>f\\*g\\_\\[h\\](i)\\!");
        buf_release(&b);
}

static void test_code_span(void **state) {
        (void)state;
        static const struct {
                const char *in;
                bool table;
                const char *want;
        } cases[] = {
                {"flashinfer_cutlass", true, "`flashinfer_cutlass`"}, /* not flashinfer\\_cutlass */
                {"a|b", true, "`a\\|b`"},                              /* a table cell stays one cell */
                {"a|b", false, "`a|b`"},
                {"x`y", false, "``x`y``"},                            /* fence longer than any run */
                {"`tick", false, "`` `tick ``"},                      /* padded when it starts with one */
                {"two\nlines\033[2J", false, "`two\\nlines\\x1b[2J`"},  /* text escaping inside */
                {"<script>", true, "`<script>`"},                    /* literal in a code span */
                {"", true, ""},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct buf b;
                buf_init(&b, 0);
                assert_int_equal(report_code_span(&b, cases[i].in, 0, cases[i].table), 0);
                if (strcmp(buf_str(&b), cases[i].want) != 0)
                        print_error("code span of '%s': got '%s', want '%s'\n", cases[i].in, buf_str(&b), cases[i].want);
                assert_string_equal(buf_str(&b), cases[i].want);
                buf_release(&b);
        }
}

static void test_text(void **state) {
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(report_escape_text(&b, "ok\n\t\033[2J\x7f\xc2\x9b\xe2\x80\xae\xff caf\xc3\xa9", 0), 0);
        assert_string_equal(buf_str(&b), "ok\\n\\t\\x1b[2J\\x7f\\u009b\\u202e\\xff caf\xc3\xa9");
        buf_reset(&b);
        assert_int_equal(report_escape_text(&b, "abcdefghij", 10), 0);
        assert_string_equal(buf_str(&b), "abcdefghij");
        buf_reset(&b);
        assert_int_equal(report_escape_text(&b, "abcdefghijk", 10), 0);
        assert_string_equal(buf_str(&b), "abcdefghi…");
        buf_release(&b);

        struct report_view *v = make_view(*state);
        struct report_text_options o = {.width = 100};
        buf_init(&b, 0);
        assert_int_equal(report_text(v, &o, &b), 0);
        const char *t = buf_str(&b);
        assert_null(strstr(t, "\033"));
        assert_null(strstr(t, "\xc2\x9b"));
        assert_non_null(strstr(t, "best: 1111111111111111 moe=auto, 172.3 tok/s @1"));
        assert_non_null(strstr(t, "3 cells: 1 pass, 1 garbage, 1 not run"));
        assert_non_null(strstr(t, "garbage  repeat"));
        /* No line is wider than asked. */
        for (const char *p = t; *p;) {
                const char *end = strchr(p, '\n');
                size_t w = 0;
                for (const char *q = p; q < end; q++)
                        w += ((unsigned char)*q & 0xc0) != 0x80;
                /* The two header lines name paths and are not cut. */
                if (!startswith(p, "journal ") && !startswith(p, "engine "))
                        assert_true(w <= 100);
                p = end + 1;
        }
        buf_release(&b);
        o.color = true;
        buf_init(&b, 0);
        assert_int_equal(report_text(v, &o, &b), 0);
        assert_non_null(strstr(buf_str(&b), "\033[32mpass\033[0m"));
        buf_release(&b);
        report_view_free(v);
}

static void test_secrets(void **state) {
        static const struct {
                const char *name;
                bool secret;
        } names[] = {
                {"HF_TOKEN", true},       {"OPENAI_API_KEY", true},  {"aws_secret_access_key", true},
                {"DB_PASSWORD", true},    {"Authorization", true},   {"NCCL_P2P_DISABLE", false},
                {"CUDA_VISIBLE_DEVICES", false}, {"PATH", false},
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                assert_int_equal(secrets_env_name(names[i].name), names[i].secret);
        assert_true(secrets_flag("--api-key"));
        assert_true(secrets_flag("--hf-token"));
        assert_true(secrets_flag("--token"));
        assert_true(secrets_flag("--ssl-keyfile-password"));
        assert_true(secrets_flag("--admin_api_key"));
        assert_false(secrets_flag("--tokenizer"));
        assert_false(secrets_flag("--max-num-batched-tokens"));
        assert_false(secrets_flag("--kv-cache-dtype"));
        assert_false(secrets_flag("token"));
        assert_false(secrets_flag("--token-delay-ms"));
        assert_false(secrets_flag("--api-key-file"));

        char *argv[] = {"srv", "--api-key", "k1", "--hf-token=k2", "--tokenizer", "/m/tok", "--token", "k3",
                        "-H", "Authorization: Bearer k4", "--max-total-tokens", "4096", "--api-key", NULL};
        char **m = NULL;
        assert_int_equal(secrets_mask_argv(argv, &m), 0);
        char *want[] = {"srv", "--api-key", "***", "--hf-token=***", "--tokenizer", "/m/tok", "--token", "***",
                        "-H", "Authorization: ***", "--max-total-tokens", "4096", "--api-key", NULL};
        assert_true(strv_equal(m, want));
        strv_free(m);
        char *env[] = {"HF_TOKEN=abc", "X=1", "My_Secret_Thing=a=b", "NOEQUALS", NULL};
        assert_int_equal(secrets_mask_env(env, &m), 0);
        char *want_env[] = {"HF_TOKEN=***", "X=1", "My_Secret_Thing=***", "NOEQUALS", NULL};
        assert_true(strv_equal(m, want_env));
        strv_free(m);
        assert_int_equal(secrets_mask_env(NULL, &m), 0);
        assert_null(m);
}

/* The levels at which the client was the bottleneck, one clause each; none: NULL. */
static void test_client_note(void **state) {
        struct report_cell c = {0};
        json_error_t e;
        c.bench = json_loads("[{\"concurrency\": 256, \"client_cpu\": {\"threads\": 2, \"loop_cores_max\": 0.4, "
                             "\"bound\": false}},"
                             " {\"concurrency\": 1024, \"send_delay_ms\": {\"p50\": 0.25}, \"client_cpu\": "
                             "{\"threads\": 8, \"loop_cores_max\": 0.97, \"bound\": true}}]", 0, &e);
        assert_non_null(c.bench);
        char *note = report_client_note(&c);
        assert_non_null(note);
        assert_string_equal(note, "the client was the bottleneck @1024 (busiest of 8 loops at 97% of a core, send "
                                  "delay p50 0.250 ms)");
        free(note);
        json_decref(c.bench);
        c.bench = json_loads("[{\"concurrency\": 8, \"client_cpu\": {\"bound\": false}}]", 0, &e);
        assert_null(report_client_note(&c));
        json_decref(c.bench);
}

/* The levels whose usage disagreed: by request, or only over the level's sum (a count by
 * bytes per token compares requests loosely): that one says so, not that every request did;
 * a level within the slack says nothing. */
static void test_usage_note(void **state) {
        (void)state;
        struct report_cell c = {0};
        json_error_t e;
        c.bench = json_loads("[{\"concurrency\": 1, \"usage_check\": {\"requests\": 8, \"usage_tokens\": 256, "
                             "\"counted_tokens\": 240, \"disagreeing\": 0, \"above_max_tokens\": 0}, "
                             "\"count\": {\"disagree\": []}},"
                             " {\"concurrency\": 4, \"usage_check\": {\"requests\": 8, \"usage_tokens\": 300, "
                             "\"counted_tokens\": 256, \"disagreeing\": 0, \"above_max_tokens\": 0}, "
                             "\"count\": {\"disagree\": [\"usage\"]}},"
                             " {\"concurrency\": 8, \"usage_check\": {\"requests\": 8, \"usage_tokens\": 8000000, "
                             "\"counted_tokens\": 256, \"disagreeing\": 8, \"above_max_tokens\": 8}, "
                             "\"count\": {\"disagree\": [\"usage\"]}}]",
                             0, &e);
        assert_non_null(c.bench);
        char *note = report_usage_note(&c);
        assert_non_null(note);
        assert_string_equal(note, "usage disagrees with gauntlet's count: @4 the server said 300 output tokens on 8 "
                                  "requests (over the level, none alone), gauntlet counted 256; @8 the server said "
                                  "8000000 output tokens on 8 requests (8 disagreeing, 8 above max_tokens), gauntlet "
                                  "counted 256");
        free(note);
        json_decref(c.bench);
        c.bench = json_loads("[{\"concurrency\": 1, \"usage_check\": {\"requests\": 8, \"usage_tokens\": 256, "
                             "\"counted_tokens\": 240, \"disagreeing\": 0}, \"count\": {\"disagree\": []}}]",
                             0, &e);
        assert_null(report_usage_note(&c));
        json_decref(c.bench);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_client_note),
                cmocka_unit_test(test_usage_note),
                cmocka_unit_test(test_best),
                cmocka_unit_test(test_order),
                cmocka_unit_test(test_best_needs_a_figure),
                cmocka_unit_test(test_sla),
                cmocka_unit_test_setup_teardown(test_json_contract, setup, teardown),
                cmocka_unit_test_setup_teardown(test_markdown, setup, teardown),
                cmocka_unit_test_setup_teardown(test_text, setup, teardown),
                cmocka_unit_test(test_secrets),
                cmocka_unit_test(test_code_span),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
