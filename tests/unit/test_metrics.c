/* test_metrics.c -- the metrics table: it and the level JSON name the same keys; paths resolve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "bench/bench_metrics.h"
#include "base/metrics.h"
#include "bench/scrape.h"
#include "text/objective.h"

/* A level with every optional part: an open-loop rate, both SLOs, a failure, a calibration
 * and checks under load. */
static json_t *full_level(void) {
        struct bench_level lv;
        assert_int_equal(bench_level_init(&lv, 2, 4.0), 0);
        lv.slo_ttft = 50000;
        lv.slo_tpot = 20000;
        lv.slo_e2el = 100000;
        struct bench_record ok = {.scheduled = 1000, .sent = 1000, .first_token = 40000, .done = 90000,
                                  .chunks = 5, .output_tokens = 5, .prompt_tokens = 10, .ok = true,
                                  .timings = true, .t_prompt_n = 4, .t_cache_n = 6};
        struct bench_record bad = {.scheduled = 2000, .sent = 2000, .done = 50000, .output_tokens = -1,
                                   .prompt_tokens = -1, .error = "http_500"};
        assert_int_equal(bench_level_add(&lv, &ok), 0);
        assert_int_equal(bench_level_add(&lv, &bad), 0);
        bench_level_itl(&lv, 1000);
        json_t *cal = json_pack("{s:s}", "method", "usage"), *load = json_array();
        json_t *spread = json_object(), *work = json_pack("{s:s}", "dataset", "random");
        struct scrape_level sl = {0};
        json_t *server = scrape_level_json(&sl);
        lv.server = server;
        json_t *sessions = json_pack("{s:i}", "started", 1);
        lv.calibration = cal;
        lv.workload = work;
        lv.sessions = sessions;
        lv.under_load = load;
        json_t *eval_load = json_pack("{s:i}", "concurrency", 2);
        lv.eval_under_load = eval_load;
        assert_int_equal(bench_level_judged(&lv, "repeat", "run of 16 x '!'", 0), 0);
        lv.repeats = 3;
        lv.spread = spread;
        lv.search = true;
        json_t *o = bench_level_json(&lv);
        bench_level_release(&lv);
        json_decref(cal);
        json_decref(work);
        json_decref(sessions);
        json_decref(load);
        json_decref(eval_load);
        json_decref(spread);
        json_decref(server);
        assert_non_null(o);
        return o;
}

/* Every key of the level (and of its goodput and client_cpu objects) is the table's, in the
 * table's order; the stats of a distribution are metric_stat_key's, in theirs. */
static void check_object(json_t *o, const struct metric_info *parent, bool seen[static _METRIC_MAX]) {
        const char *k;
        json_t *v;
        int last = -1;
        json_object_foreach(o, k, v) {
                const struct metric_info *m = NULL;
                for (int i = 0; i < _METRIC_MAX && !m; i++)
                        if (metric_info((enum metric)i)->parent == parent && strcmp(metric_key((enum metric)i), k) == 0)
                                m = metric_info((enum metric)i);
                if (!m)
                        fail_msg("'%s' is not in the metrics table", k);
                int index = (int)(m - metric_info(0));
                assert_true(index > last);
                last = index;
                seen[index] = true;
                if (index == METRIC_GOODPUT || index == METRIC_CLIENT_CPU || index == METRIC_USAGE_CHECK ||
                    index == METRIC_SERVER_TIMINGS || index == METRIC_SERVER_METRICS)
                        check_object(v, m, seen);
                if (m->unit && strcmp(m->unit, "ms") == 0 && json_is_object(v)) {
                        const char *sk;
                        json_t *sv;
                        int s = 0;
                        json_object_foreach(v, sk, sv) assert_string_equal(sk, metric_stat_key((enum metric_stat)s++));
                        assert_int_equal(s, _METRIC_STAT_MAX);
                }
        }
}

static void test_table_is_the_level(void **state) {
        json_t *o = full_level();
        bool seen[_METRIC_MAX] = {false};
        check_object(o, NULL, seen);
        for (int i = 0; i < _METRIC_MAX; i++) {
                const struct metric_info *m = metric_info((enum metric)i);
                if (!seen[i])
                        fail_msg("'%s' of the metrics table is not in the level JSON", m->key);
                assert_non_null(m->name);
                assert_non_null(m->unit);
                assert_non_null(m->doc);
        }
        json_decref(o);
}

static void test_resolve(void **state) {
        const struct metric_info *along;
        const char *p = "goodput.requests_per_s";
        assert_ptr_equal(metric_resolve(p, strlen(p), &along), metric_info(METRIC_GOODPUT_REQUESTS_PER_S));
        assert_ptr_equal(along, metric_info(METRIC_GOODPUT_REQUESTS_PER_S));
        p = "ttft_ms.p50";
        assert_null(metric_resolve(p, strlen(p), &along));
        assert_ptr_equal(along, metric_info(METRIC_TTFT_MS));
        p = "output_tokens_per_s.";
        assert_null(metric_resolve(p, strlen(p), &along));
        assert_ptr_equal(along, metric_info(METRIC_OUTPUT_TOKENS_PER_S));
        p = "cores"; /* only inside client_cpu */
        assert_null(metric_resolve(p, strlen(p), &along));
        assert_null(along);
        assert_null(metric_resolve("", 0, &along));
        /* METRIC@N: n bytes of the text, not its NUL */
        p = "requests_per_s@8";
        assert_ptr_equal(metric_resolve(p, strlen("requests_per_s"), NULL), metric_info(METRIC_REQUESTS_PER_S));
}

static void test_objective_direction(void **state) {
        static const struct {
                const char *text;
                bool higher;
        } cases[] = {
                {"output_tokens_per_s@1", true}, {"requests_per_s@8", true},   {"goodput@1", true},
                {"ttft_ms.p50@1", false},        {"e2e_ms.p99", false},        {"duration_s@1", false},
                {"goodput.slo_ttft_ms@1", false}, {"goodput.requests_per_s@1", true},
                {"client_cpu.user_s@1", false},  {"client_cpu.cores@1", true}, {"nothing_like_it@1", true},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct objective o;
                objective_parse(cases[i].text, &o);
                if (o.higher_better != cases[i].higher)
                        fail_msg("'%s': higher_better %d", cases[i].text, o.higher_better);
        }
        struct objective o;
        objective_parse("total_tokens_per_s@8", &o);
        assert_ptr_equal(o.info, metric_info(METRIC_TOTAL_TOKENS_PER_S));
        assert_true(o.info->objective);
        assert_string_equal(o.info->figure, "tok/s total");
        assert_int_equal(o.concurrency, 8);
        objective_parse("smoke", &o);
        assert_null(o.info);
}

/* An SLA objective: its constraints parse, and a level meets them or not. */
static void test_objective_where(void **state) {
        struct objective o;
        objective_parse("output_tokens_per_s@32 where ttft_ms.p99<=500,itl_ms.p99<=50,goodput.requests_per_s>=2", &o);
        assert_false(o.bad_limits);
        assert_int_equal(o.concurrency, 32);
        assert_int_equal(o.metric_len, strlen("output_tokens_per_s"));
        assert_ptr_equal(o.info, metric_info(METRIC_OUTPUT_TOKENS_PER_S));
        assert_int_equal(o.n_limits, 3);
        assert_true(o.limits[0].at_most);
        assert_int_equal(o.limits[0].path_len, strlen("ttft_ms.p99"));
        assert_true(o.limits[0].limit == 500);
        assert_false(o.limits[2].at_most);
        json_t *ok = json_pack("{s:{s:f}, s:{s:f}, s:{s:f}}", "ttft_ms", "p99", 499.0, "itl_ms", "p99", 50.0, "goodput",
                               "requests_per_s", 2.5);
        json_t *slow = json_pack("{s:{s:f}, s:{s:f}, s:{s:f}}", "ttft_ms", "p99", 501.0, "itl_ms", "p99", 10.0, "goodput",
                                 "requests_per_s", 9.0);
        json_t *missing = json_pack("{s:{s:f}}", "ttft_ms", "p99", 1.0);
        assert_true(objective_meets(&o, ok));
        assert_false(objective_meets(&o, slow));
        assert_false(objective_meets(&o, missing)); /* a figure that is not there does not meet it */
        json_decref(ok);
        json_decref(slow);
        json_decref(missing);
        /* no level: the best one that meets it */
        objective_parse("output_tokens_per_s where ttft_ms.p50<=1", &o);
        assert_int_equal(o.concurrency, 0);
        assert_int_equal(o.n_limits, 1);
        assert_int_equal(o.metric_len, strlen("output_tokens_per_s"));
        /* the short form stays as it was */
        objective_parse("output_tokens_per_s@8", &o);
        assert_int_equal(o.concurrency, 8);
        assert_int_equal(o.n_limits, 0);
        /* what does not read */
        static const char *const bad[] = {"x@1 where ttft_ms.p99<500", "x@1 where <=3", "x@1 where a<=", "x@1 where a<=1,",
                                          "x@1 where a<=1e999", "x@1 where a<=1,b<=1,c<=1,d<=1,e<=1,f<=1,g<=1,h<=1,i<=1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                objective_parse(bad[i], &o);
                if (!o.bad_limits)
                        fail_msg("'%s' should not parse", bad[i]);
        }
}

/* The failure gate's threshold: a count, or a share of the level's requests. */
static void test_failures_allowed(void **state) {
        struct bench_spec s = {0};
        assert_int_equal(bench_failures_allowed(&s, 64), 0);
        s.max_failures = 3;
        assert_int_equal(bench_failures_allowed(&s, 64), 3);
        s.max_failure_share = 0.05;
        assert_int_equal(bench_failures_allowed(&s, 64), 3); /* 3.2 -> 3 */
        assert_int_equal(bench_failures_allowed(&s, 100), 5);
        assert_int_equal(bench_failures_allowed(&s, 10), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table_is_the_level),
                cmocka_unit_test(test_resolve),
                cmocka_unit_test(test_objective_direction),
                cmocka_unit_test(test_objective_where),
                cmocka_unit_test(test_failures_allowed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
