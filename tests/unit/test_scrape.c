/* test_scrape.c -- the Prometheus parser (hostile pages included), llama.cpp's /slots parser
 * (hostile pages too), a level's folding of its pages, vLLM's flat names and --goodput form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_metrics.h"
#include "bench/scrape.h"
#include "base/hist.h"
#include "base/metrics.h"
#include "report/report.h"

static struct scrape_sample parse(const char *text) {
        struct scrape_sample s;
        scrape_parse(text, strlen(text), &s);
        return s;
}

static void test_vllm_page(void **state) {
        struct scrape_sample s = parse(
                "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
                "# TYPE vllm:kv_cache_usage_perc gauge\n"
                "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
                "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.5\n"
                "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
                "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0\n"
                "vllm:num_requests_waiting{model_name=\"m\"} 1\n"
                "vllm:prefix_cache_queries_total{model_name=\"m\"} 1000\n"
                "vllm:prefix_cache_hits_total{model_name=\"m\"} 750\n"
                "vllm:num_preemptions_total{model_name=\"m\"} 2 1700000000000\n"
                "vllm:prompt_tokens_total{model_name=\"m\"} 1.5e+03\n"
                "vllm:time_to_first_token_seconds_sum{model_name=\"m\"} 12.5\n"
                "vllm:time_to_first_token_seconds_count{model_name=\"m\"} 10\n"
                "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 10\n"
                "vllm:prefix_cache_queries_created{model_name=\"m\"} 1.7e9\n");
        assert_string_equal(s.engine, "vllm");
        assert_int_equal(s.samples, 13);
        assert_int_equal(s.skipped, 0);
        assert_true(s.has[SCRAPE_KV_USAGE]);
        assert_true(s.value[SCRAPE_KV_USAGE] == 0.5); /* max over engines */
        assert_true(s.value[SCRAPE_RUNNING] == 5);    /* sum */
        assert_true(s.value[SCRAPE_WAITING] == 1);
        assert_true(s.value[SCRAPE_PREFIX_QUERIES] == 1000);
        assert_true(s.value[SCRAPE_PREFIX_HITS] == 750);
        assert_true(s.value[SCRAPE_PREEMPTIONS] == 2);
        assert_true(s.value[SCRAPE_PROMPT_TOKENS] == 1500);
        assert_false(s.has[SCRAPE_PREFIX_HIT_RATE]);
}

static void test_sglang_and_llamacpp(void **state) {
        struct scrape_sample s = parse("sglang:token_usage{model_name=\"x\"} 0.28\n"
                                       "sglang:num_running_reqs{model_name=\"x\"} 7\n"
                                       "sglang:num_queue_reqs{model_name=\"x\"} 4\n"
                                       "sglang:cache_hit_rate{model_name=\"x\"} 0.9\n"
                                       "sglang:num_retracted_requests_total{model_name=\"x\"} 3\n");
        assert_string_equal(s.engine, "sglang");
        assert_true(s.value[SCRAPE_KV_USAGE] == 0.28 && s.value[SCRAPE_RUNNING] == 7 && s.value[SCRAPE_WAITING] == 4);
        assert_true(s.value[SCRAPE_PREFIX_HIT_RATE] == 0.9 && s.value[SCRAPE_PREEMPTIONS] == 3);
        /* llama-server --metrics, as this snapshot writes it: no KV figure */
        s = parse("# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
                  "# TYPE llamacpp:prompt_tokens_total counter\n"
                  "llamacpp:prompt_tokens_total 4096\n"
                  "llamacpp:requests_processing 2\n"
                  "llamacpp:requests_deferred 0\n");
        assert_string_equal(s.engine, "llamacpp");
        assert_false(s.has[SCRAPE_KV_USAGE]);
        assert_true(s.value[SCRAPE_RUNNING] == 2 && s.has[SCRAPE_WAITING] && s.value[SCRAPE_PROMPT_TOKENS] == 4096);
}

/* A gauge is not matched with _total; a name that only starts like one is no figure. */
static void test_names_exact(void **state) {
        struct scrape_sample s = parse("vllm:num_requests_running_total 9\n"
                                       "vllm:num_requests_runningX 9\n"
                                       "xvllm:num_requests_running 9\n"
                                       "vllm:num_preemptions 4\n");
        assert_false(s.has[SCRAPE_RUNNING]);
        assert_true(s.has[SCRAPE_PREEMPTIONS] && s.value[SCRAPE_PREEMPTIONS] == 4);
        assert_int_equal(s.samples, 4);
}

static void test_hostile(void **state) {
        /* escapes in labels (a brace, a quote, a newline escape inside), comments, CRLF */
        struct scrape_sample s = parse("vllm:num_requests_waiting{a=\"}\\\" \\\\ \\n{\",b=\"x\",} 2\r\n"
                                       "   # indented comment\n"
                                       "\n"
                                       "# EOF\n");
        assert_int_equal(s.skipped, 0);
        assert_true(s.value[SCRAPE_WAITING] == 2);
        /* malformed: counted, never fatal */
        s = parse("vllm:num_requests_running\n"              /* no value */
                  "vllm:num_requests_running{a=\"x\"}\n"     /* no value */
                  "vllm:num_requests_running{a=\"x} 3\n"     /* unterminated */
                  "vllm:num_requests_running{a=\"\\q\"} 3\n" /* bad escape */
                  "vllm:num_requests_running{a=x} 3\n"       /* unquoted */
                  "vllm:num_requests_running 3 abc\n"        /* junk timestamp */
                  "vllm:num_requests_running 3 1 2\n"        /* two timestamps */
                  "vllm:num_requests_running 0x\n"           /* not a number */
                  "9vllm 3\n"                                /* bad name */
                  "{} 3\n"
                  "vllm:num_requests_running 1e999999\n"     /* overflows */
                  "vllm:num_requests_running{a=\"1\"} 5\n"); /* the one good line */
        assert_int_equal(s.skipped, 11);
        assert_int_equal(s.samples, 1);
        assert_true(s.value[SCRAPE_RUNNING] == 5);
        /* NaN and infinities are numbers to the format, never figures */
        s = parse("vllm:kv_cache_usage_perc{e=\"0\"} NaN\n"
                  "vllm:kv_cache_usage_perc{e=\"1\"} +Inf\n"
                  "vllm:kv_cache_usage_perc{e=\"2\"} -Inf\n"
                  "vllm:kv_cache_usage_perc{e=\"3\"} 0.125\n");
        assert_int_equal(s.non_finite, 3);
        assert_int_equal(s.skipped, 0);
        assert_true(s.value[SCRAPE_KV_USAGE] == 0.125);
        /* out of range: a KV ratio of -7 or 1e308, a negative count: dropped and counted */
        s = parse("vllm:kv_cache_usage_perc{e=\"0\"} -7\n"
                  "vllm:kv_cache_usage_perc{e=\"1\"} 1e308\n"
                  "vllm:kv_cache_usage_perc{e=\"2\"} 0.25\n"
                  "vllm:num_requests_waiting -3\n");
        assert_int_equal(s.out_of_range, 3);
        assert_true(s.value[SCRAPE_KV_USAGE] == 0.25);
        assert_false(s.has[SCRAPE_WAITING]);
        s = parse("vllm:kv_cache_usage_perc -7\n");
        assert_false(s.has[SCRAPE_KV_USAGE]);
        {
                struct scrape_level lv = {0};
                scrape_level_add(&lv, &s);
                scrape_level_add(&lv, &s);
                json_t *j = scrape_level_json(&lv);
                assert_non_null(j);
                assert_true(json_is_null(json_object_get(j, "kv_cache_usage_peak")));
                assert_int_equal(json_integer_value(json_object_get(j, "out_of_range")), 2);
                /* the report's line: a note, never "-700.0%" */
                json_t *level = json_pack("{s:O}", "server_metrics", j);
                char *line = report_server_line(level);
                assert_non_null(line);
                assert_null(strstr(line, "%"));
                assert_non_null(strstr(line, "2 values out of range dropped"));
                free(line);
                /* a journal's older figure out of range: a word, never a percentage */
                json_object_set_new(j, "kv_cache_usage_peak", json_real(-7));
                line = report_server_line(level);
                assert_non_null(strstr(line, "KV cache peak out of range (dropped)"));
                assert_null(strstr(line, "-700"));
                free(line);
                json_decref(level);
                json_decref(j);
        }
        /* a series twice: the second ignored */
        s = parse("vllm:num_requests_running{a=\"1\"} 5\nvllm:num_requests_running{a=\"1\"} 50\n"
                  "vllm:num_requests_running{a=\"2\"} 1\n");
        assert_int_equal(s.duplicates, 1);
        assert_true(s.value[SCRAPE_RUNNING] == 6);
        /* NUL bytes and binary: skipped lines, nothing else */
        static const char bin[] = "vllm:num_requests_running 1\n\x00\x01\xff garbage\nvllm:\x00 2\n";
        scrape_parse(bin, sizeof(bin) - 1, &s);
        assert_int_equal(s.samples, 1);
        assert_int_equal(s.skipped, 2);
        /* nothing at all */
        scrape_parse(NULL, 0, &s);
        assert_int_equal(s.samples, 0);
        assert_null(s.engine);
}

static void test_huge_lines(void **state) {
        size_t n = SCRAPE_MAX_LINE + 100;
        char *p = malloc(n + 64);
        assert_non_null(p);
        /* one label value longer than a line may be, then a good line */
        size_t k = (size_t)sprintf(p, "vllm:num_requests_running{a=\"");
        memset(p + k, 'x', n - k);
        k = n;
        k += (size_t)sprintf(p + k, "\"} 7\nvllm:num_requests_waiting 3\n");
        struct scrape_sample s;
        scrape_parse(p, k, &s);
        assert_int_equal(s.skipped, 1);
        assert_false(s.has[SCRAPE_RUNNING]);
        assert_true(s.value[SCRAPE_WAITING] == 3);
        /* many series: past the cap they are counted, not kept */
        size_t cap = (SCRAPE_MAX_SERIES + 10) * 48;
        char *q = malloc(cap);
        assert_non_null(q);
        size_t len = 0;
        for (int i = 0; i < SCRAPE_MAX_SERIES + 10; i++)
                len += (size_t)snprintf(q + len, cap - len, "vllm:num_requests_running{i=\"%d\"} 1\n", i);
        scrape_parse(q, len, &s);
        assert_true(s.value[SCRAPE_RUNNING] == SCRAPE_MAX_SERIES);
        assert_int_equal(s.skipped, 10);
        free(p);
        free(q);
}

/* Peaks over the pages, counters' deltas from the first page to the last. */
static void test_level(void **state) {
        struct scrape_level a = {0};
        struct scrape_sample s = parse("vllm:kv_cache_usage_perc 0.1\nvllm:num_requests_running 0\n"
                                       "vllm:num_requests_waiting 0\nvllm:prefix_cache_queries_total 100\n"
                                       "vllm:prefix_cache_hits_total 10\nvllm:num_preemptions_total 1\n");
        scrape_level_add(&a, &s);
        s = parse("vllm:kv_cache_usage_perc 0.75\nvllm:num_requests_running 8\nvllm:num_requests_waiting 3\n"
                  "vllm:prefix_cache_queries_total 500\nvllm:prefix_cache_hits_total 310\n"
                  "vllm:num_preemptions_total 4\nbad line here\n");
        scrape_level_add(&a, &s);
        s = parse("vllm:kv_cache_usage_perc 0.2\nvllm:num_requests_running 0\nvllm:num_requests_waiting 0\n"
                  "vllm:prefix_cache_queries_total 1100\nvllm:prefix_cache_hits_total 760\n"
                  "vllm:num_preemptions_total 5\n");
        scrape_level_add(&a, &s);
        json_t *o = scrape_level_json(&a);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "engine")), "vllm");
        assert_int_equal(json_integer_value(json_object_get(o, "scrapes")), 3);
        assert_true(json_real_value(json_object_get(o, "kv_cache_usage_peak")) == 0.75);
        assert_int_equal(json_integer_value(json_object_get(o, "running_peak")), 8);
        assert_int_equal(json_integer_value(json_object_get(o, "waiting_peak")), 3);
        assert_int_equal(json_integer_value(json_object_get(o, "prefix_cache_queries")), 1000);
        assert_int_equal(json_integer_value(json_object_get(o, "prefix_cache_hits")), 750);
        assert_true(json_real_value(json_object_get(o, "prefix_cache_hit_rate")) == 0.75);
        assert_string_equal(json_string_value(json_object_get(o, "prefix_cache_hit_rate_from")), "counters");
        assert_int_equal(json_integer_value(json_object_get(o, "preemptions")), 4);
        assert_true(json_is_null(json_object_get(o, "prompt_tokens")));
        assert_int_equal(json_integer_value(json_object_get(o, "skipped_lines")), 1);
        json_decref(o);

        /* a counter that went down (the server restarted): no delta, no rate; the gauge's
         * mean when the server has only that */
        struct scrape_level b = {0};
        s = parse("vllm:num_preemptions_total 9\nsglang:cache_hit_rate 0.5\n");
        scrape_level_add(&b, &s);
        s = parse("vllm:num_preemptions_total 2\nsglang:cache_hit_rate 0.7\n");
        scrape_level_add(&b, &s);
        o = scrape_level_json(&b);
        assert_true(json_is_null(json_object_get(o, "preemptions")));
        assert_true(fabs(json_real_value(json_object_get(o, "prefix_cache_hit_rate")) - 0.6) < 1e-9);
        assert_string_equal(json_string_value(json_object_get(o, "prefix_cache_hit_rate_from")), "gauge");
        assert_true(json_is_null(json_object_get(o, "kv_cache_usage_peak")));
        json_decref(o);

        /* one page: no delta can be told */
        struct scrape_level c = {0};
        s = parse("vllm:num_preemptions_total 9\n");
        scrape_level_add(&c, &s);
        o = scrape_level_json(&c);
        assert_true(json_is_null(json_object_get(o, "preemptions")));
        json_decref(o);
}

/* Huge finite figures (found by fuzz_scrape): a KV-cache usage of 1e305 overflowed when
 * rounded to four decimals and a hit-rate gauge of 1e308 on two pages summed to Inf; jansson
 * makes no real of Inf, so the level had no object and the bench stopped with "out of
 * memory". The object is made; since figures outside their range are dropped (a ratio
 * outside 0..1, a count past 1e15 or below 0), every one of these is, and counted. */
static void test_level_huge(void **state) {
        (void)state;
        struct scrape_level a = {0};
        struct scrape_sample s = parse("vllm:kv_cache_usage_perc 1e305\nsglang:cache_hit_rate 1e308\n"
                                       "vllm:num_requests_running 1e308\nvllm:num_requests_waiting -1e308\n");
        scrape_level_add(&a, &s);
        s = parse("vllm:kv_cache_usage_perc -1e305\nsglang:cache_hit_rate 1e308\nvllm:num_requests_running 1e308\n");
        scrape_level_add(&a, &s);
        json_t *o = scrape_level_json(&a);
        assert_non_null(o);
        assert_true(json_is_null(json_object_get(o, "kv_cache_usage_peak")));
        assert_true(json_is_null(json_object_get(o, "prefix_cache_hit_rate")));
        assert_true(json_is_null(json_object_get(o, "prefix_cache_hit_rate_from")));
        assert_true(json_is_null(json_object_get(o, "running_peak")));
        assert_true(json_is_null(json_object_get(o, "waiting_peak")));
        assert_int_equal(json_integer_value(json_object_get(o, "out_of_range")), 7);
        json_decref(o);

        /* a rate gauge in range is the gauge's, rounded */
        struct scrape_level b = {0};
        s = parse("sglang:cache_hit_rate 0.123456\n");
        scrape_level_add(&b, &s);
        o = scrape_level_json(&b);
        assert_non_null(o);
        assert_true(json_real_value(json_object_get(o, "prefix_cache_hit_rate")) == 0.1235);
        assert_string_equal(json_string_value(json_object_get(o, "prefix_cache_hit_rate_from")), "gauge");
        json_decref(o);
}

static int slots(const char *text, struct scrape_slots *ret) {
        return scrape_slots_parse(text, strlen(text), ret);
}

/* llama-server's GET /slots as this snapshot writes it (server_slot::to_json with
 * only_metrics): a slot that served a task, one generating now, one never used. */
static void test_slots_page(void **state) {
        struct scrape_slots sl = {0};
        assert_int_equal(
                slots("[{\"id\":0,\"n_ctx\":256,\"speculative\":false,\"is_processing\":false,\"id_task\":12,"
                      "\"n_prompt_tokens\":232,\"n_prompt_tokens_processed\":40,\"n_prompt_tokens_cache\":192,"
                      "\"params\":{\"n_predict\":8,\"seed\":4294967295,\"temperature\":0.0,\"stop\":[],"
                      "\"samplers\":[\"top_k\"],\"lora\":[]},"
                      "\"next_token\":[{\"has_next_token\":false,\"has_new_line\":false,\"n_remain\":-1,"
                      "\"n_decoded\":8}]},"
                      " {\"id\":1,\"n_ctx\":256,\"speculative\":false,\"is_processing\":true,\"id_task\":13,"
                      "\"n_prompt_tokens\":100,\"next_token\":[{\"n_decoded\":3}]},"
                      " {\"id\":2,\"n_ctx\":256,\"speculative\":false,\"is_processing\":false},"
                      " {\"id\":3,\"n_ctx\":256,\"speculative\":false,\"is_processing\":false}]",
                      &sl),
                0);
        assert_int_equal(sl.slots, 4);
        /* n_prompt_tokens already counts the generated tokens: n_decoded is not added */
        assert_true(sl.held == 332);
        assert_true(sl.cells == 1024);
        assert_true(sl.max_ctx == 256);
        /* every slot full; slots without an id */
        assert_int_equal(slots("[{\"n_ctx\":8,\"n_prompt_tokens\":8},{\"n_ctx\":8,\"n_prompt_tokens\":8}]", &sl), 0);
        assert_true(sl.slots == 2 && sl.held == 16 && sl.cells == 16);
}

/* Whatever the page, one of two answers: its figures or -EBADMSG, with *ret untouched. */
static void test_slots_hostile(void **state) {
        static const char *const bad[] = {
                "",
                "null",
                "{}",
                "[]",                                                   /* no slot */
                "[1]",
                "[{}]",                                                 /* no n_ctx */
                "[{\"n_ctx\":0}]",                                      /* no cells */
                "[{\"n_ctx\":-256}]",
                "[{\"n_ctx\":256.0}]",                                  /* not whole */
                "[{\"n_ctx\":\"256\"}]",
                "[{\"n_ctx\":1e300}]",
                "[{\"n_ctx\":99999999999999999999999}]",                /* past what jansson holds */
                "[{\"n_ctx\":4294967296}]",                             /* past an int32 */
                "[{\"n_ctx\":256,\"n_prompt_tokens\":257}]",            /* more than its cells */
                "[{\"n_ctx\":256,\"n_prompt_tokens\":-1}]",
                "[{\"n_ctx\":256,\"n_prompt_tokens\":null}]",
                "[{\"n_ctx\":256,\"n_prompt_tokens\":true}]",
                "[{\"n_ctx\":256,\"n_ctx\":512}]",                      /* a key twice */
                "[{\"id\":0,\"n_ctx\":256},{\"id\":0,\"n_ctx\":256}]",  /* an id twice */
                "[{\"id\":-1,\"n_ctx\":256}]",
                "[{\"id\":\"0\",\"n_ctx\":256}]",
                "[{\"n_ctx\":256}] junk",
                "[{\"n_ctx\":256}",                                     /* cut */
                "[{\"n_ctx\":256,\"x\":\"a\\u0000b\"}]",                /* NUL in a string */
                "[{\"n_ctx\":256,\"x\":\"\xff\xfe\"}]",                 /* not UTF-8 */
                "<html><body>404</body></html>",
                "{\"error\":{\"code\":501,\"message\":\"This server does not support slots endpoint.\"}}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
                struct scrape_slots sl = {.slots = 7, .held = 7, .cells = 7};
                if (slots(bad[i], &sl) != -EBADMSG)
                        fail_msg("taken: %s", bad[i]);
                assert_true(sl.slots == 7 && sl.held == 7 && sl.cells == 7);
        }
        struct scrape_slots sl = {0};
        assert_int_equal(scrape_slots_parse(NULL, 0, &sl), -EBADMSG);
        /* NUL bytes in the body, binary */
        static const char bin[] = "[{\"n_ctx\":256}]\x00\x01";
        assert_int_equal(scrape_slots_parse(bin, sizeof(bin) - 1, &sl), -EBADMSG);

        /* nesting far past what a parser's stack should take */
        size_t deep = 200000;
        char *p = malloc(2 * deep + 1);
        assert_non_null(p);
        memset(p, '[', deep);
        memset(p + deep, ']', deep);
        assert_int_equal(scrape_slots_parse(p, 2 * deep, &sl), -EBADMSG);
        free(p);

        /* more slots than a server has: the page is not taken; at the cap it is */
        size_t cap = (SCRAPE_MAX_SLOTS + 1) * 64 + 8;
        char *q = malloc(cap);
        assert_non_null(q);
        size_t len = 0;
        q[len++] = '[';
        for (int i = 0; i < SCRAPE_MAX_SLOTS + 1; i++)
                len += (size_t)snprintf(q + len, cap - len, "%s{\"id\":%d,\"n_ctx\":4,\"n_prompt_tokens\":1}",
                                        i ? "," : "", i);
        q[len++] = ']';
        assert_int_equal(scrape_slots_parse(q, len, &sl), -EBADMSG);
        char *last = q + len;
        while (!(last[0] == ',' && last[1] == '{'))
                last--;
        *last = ']';
        assert_int_equal(scrape_slots_parse(q, (size_t)(last - q) + 1, &sl), 0);
        assert_true(sl.slots == SCRAPE_MAX_SLOTS && sl.held == SCRAPE_MAX_SLOTS && sl.cells == 4.0 * SCRAPE_MAX_SLOTS);
        free(q);
}

/* llama.cpp: no KV series on /metrics, the /slots estimate in its place and said so; a
 * server with its own series keeps it, named. */
static void test_level_slots(void **state) {
        struct scrape_level a = {0};
        struct scrape_sample s = parse("llamacpp:requests_processing 0\nllamacpp:prompt_tokens_total 10\n");
        scrape_level_add(&a, &s);
        struct scrape_slots sl = {.slots = 4, .held = 0, .cells = 1024};
        scrape_level_add_slots(&a, &sl);
        sl = (struct scrape_slots){.slots = 4, .held = 928, .cells = 1024};
        scrape_level_add_slots(&a, &sl);
        sl = (struct scrape_slots){.slots = 4, .held = 500, .cells = 1024};
        scrape_level_add_slots(&a, &sl);
        a.slots_skipped = 2;
        a.slots_failed = 1;
        s = parse("llamacpp:requests_processing 4\nllamacpp:prompt_tokens_total 900\n");
        scrape_level_add(&a, &s);
        json_t *o = scrape_level_json(&a);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "engine")), "llamacpp");
        assert_true(fabs(json_real_value(json_object_get(o, "kv_cache_usage_peak")) - 928.0 / 1024) < 1e-4);
        assert_string_equal(json_string_value(json_object_get(o, "kv_cache_source")), "slots");
        assert_int_equal(json_integer_value(json_object_get(o, "slots_scrapes")), 3);
        assert_int_equal(json_integer_value(json_object_get(o, "failed_slots_scrapes")), 1);
        assert_int_equal(json_integer_value(json_object_get(o, "skipped_slots_pages")), 2);
        assert_int_equal(json_integer_value(json_object_get(o, "running_peak")), 4);
        assert_int_equal(json_integer_value(json_object_get(o, "prompt_tokens")), 890);
        /* not told: as split, and said so */
        assert_string_equal(json_string_value(json_object_get(o, "kv_cache_layout")), "unknown");
        assert_int_equal(json_integer_value(json_object_get(o, "kv_cache_capped_pages")), 0);
        json_decref(o);

        /* the server's own series wins, whatever /slots says; its name is the source */
        struct scrape_level b = {0};
        s = parse("vllm:gpu_cache_usage_perc{e=\"0\"} 0.3\nvllm:kv_cache_usage_perc{e=\"0\"} 0.4\n");
        scrape_level_add(&b, &s);
        assert_string_equal(s.kv_series, "vllm:kv_cache_usage_perc");
        sl = (struct scrape_slots){.slots = 1, .held = 10, .cells = 10};
        scrape_level_add_slots(&b, &sl);
        o = scrape_level_json(&b);
        assert_true(json_real_value(json_object_get(o, "kv_cache_usage_peak")) == 0.4);
        assert_string_equal(json_string_value(json_object_get(o, "kv_cache_source")), "vllm:kv_cache_usage_perc");
        assert_true(json_is_null(json_object_get(o, "kv_cache_layout")));
        json_decref(o);

        /* neither: null, and no source */
        struct scrape_level c = {0};
        s = parse("llamacpp:requests_processing 1\n");
        scrape_level_add(&c, &s);
        o = scrape_level_json(&c);
        assert_true(json_is_null(json_object_get(o, "kv_cache_usage_peak")));
        assert_true(json_is_null(json_object_get(o, "kv_cache_source")));
        assert_int_equal(json_integer_value(json_object_get(o, "slots_scrapes")), 0);
        json_decref(o);
}

/* The /slots estimate by layout: split (and unknown) divide by the slots' n_ctx summed;
 * unified by the one cache's cells, given or a slot's n_ctx, capped at 1 and counted. */
static void test_level_slots_layout(void **state) {
        /* 4 slots of a 1024-cell unified cache, each holding 230: /slots says n_ctx 1024 each */
        struct scrape_slots full = {.slots = 4, .held = 920, .cells = 4096, .max_ctx = 1024};
        struct scrape_slots over = {.slots = 4, .held = 1500, .cells = 4096, .max_ctx = 1024};
        static const struct {
                enum scrape_kv_layout layout;
                double kv_cells;
                const char *name;
                double peak;      /* over the pages full, then over */
                int capped;
                double peak_full; /* the page full alone */
        } cases[] = {
                {SCRAPE_KV_UNKNOWN, 0, "unknown", 1500.0 / 4096, 0, 920.0 / 4096},
                {SCRAPE_KV_SPLIT, 0, "split", 1500.0 / 4096, 0, 920.0 / 4096},
                {SCRAPE_KV_UNIFIED, 1024, "unified", 1.0, 1, 920.0 / 1024},
                {SCRAPE_KV_UNIFIED, 0, "unified", 1.0, 1, 920.0 / 1024}, /* cells from the page */
                {SCRAPE_KV_UNIFIED, 2048, "unified", 1500.0 / 2048, 0, 920.0 / 2048},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct scrape_level a = {.kv_layout = cases[i].layout, .kv_cells = cases[i].kv_cells};
                struct scrape_sample s = parse("llamacpp:requests_processing 4\n");
                scrape_level_add(&a, &s);
                scrape_level_add_slots(&a, &full);
                json_t *o = scrape_level_json(&a);
                assert_true(fabs(json_real_value(json_object_get(o, "kv_cache_usage_peak")) - cases[i].peak_full) < 1e-4);
                assert_int_equal(json_integer_value(json_object_get(o, "kv_cache_capped_pages")), 0);
                json_decref(o);
                scrape_level_add_slots(&a, &over);
                scrape_level_add_slots(&a, &full);
                o = scrape_level_json(&a);
                if (fabs(json_real_value(json_object_get(o, "kv_cache_usage_peak")) - cases[i].peak) >= 1e-4)
                        fail_msg("case %zu: peak %g", i, json_real_value(json_object_get(o, "kv_cache_usage_peak")));
                assert_true(json_real_value(json_object_get(o, "kv_cache_usage_peak")) <= 1.0);
                assert_string_equal(json_string_value(json_object_get(o, "kv_cache_source")), "slots");
                assert_string_equal(json_string_value(json_object_get(o, "kv_cache_layout")), cases[i].name);
                assert_int_equal(json_integer_value(json_object_get(o, "kv_cache_capped_pages")), cases[i].capped);
                json_decref(o);
        }
        /* a page with no cells at all (not one parse_slots takes, but the fold is total) */
        struct scrape_level z = {.kv_layout = SCRAPE_KV_UNIFIED};
        struct scrape_slots none = {0};
        scrape_level_add_slots(&z, &none);
        assert_true(z.slots_peak == 0 && z.slots_over == 0);

        /* the names, both ways; nothing else is a layout */
        enum scrape_kv_layout l = SCRAPE_KV_UNKNOWN;
        assert_int_equal(scrape_kv_layout_from_name("unified", &l), 0);
        assert_int_equal(l, SCRAPE_KV_UNIFIED);
        assert_int_equal(scrape_kv_layout_from_name("split", &l), 0);
        assert_int_equal(l, SCRAPE_KV_SPLIT);
        static const char *const bad[] = {"", "Unified", "unified ", "unknown", "both"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(scrape_kv_layout_from_name(bad[i], &l), -EINVAL);
        assert_int_equal(scrape_kv_layout_from_name(NULL, &l), -EINVAL);
        assert_int_equal(l, SCRAPE_KV_SPLIT);
        assert_string_equal(scrape_kv_layout_name(SCRAPE_KV_UNKNOWN), "unknown");
        assert_string_equal(scrape_kv_layout_name(SCRAPE_KV_SPLIT), "split");
        assert_string_equal(scrape_kv_layout_name(SCRAPE_KV_UNIFIED), "unified");
}

/* Every key of the object is the metrics table's, under server_metrics. */
static void test_level_keys(void **state) {
        struct scrape_level a = {0};
        json_t *o = scrape_level_json(&a);
        const char *k;
        json_t *v;
        size_t n = 0;
        json_object_foreach(o, k, v) {
                const struct metric_info *m = NULL;
                for (int i = 0; i < _METRIC_MAX && !m; i++)
                        if (metric_info((enum metric)i)->parent == metric_info(METRIC_SERVER_METRICS) &&
                            strcmp(metric_key((enum metric)i), k) == 0)
                                m = metric_info((enum metric)i);
                if (!m)
                        fail_msg("'%s' is not in the metrics table", k);
                n++;
        }
        assert_int_equal(n, 23);
        json_decref(o);
}

static void test_vllm_names(void **state) {
        struct bench_level lv;
        assert_int_equal(bench_level_init(&lv, 1, 0), 0);
        for (int i = 0; i < 4; i++) {
                /* TTFT 10, 20, 30, 40 ms; 11 tokens over 100 ms after the first */
                struct bench_record r = {.scheduled = 0, .sent = 1000, .first_token = 1000 + 10000 * (usec_t)(i + 1),
                                         .done = 1000 + 10000 * (usec_t)(i + 1) + 100000, .chunks = 11,
                                         .output_tokens = 11, .prompt_tokens = 5, .ok = true};
                assert_int_equal(bench_level_add(&lv, &r), 0);
        }
        struct bench_record bad = {.sent = 1000, .done = 2000, .output_tokens = -1, .prompt_tokens = -1,
                                   .error = "http_500"};
        assert_int_equal(bench_level_add(&lv, &bad), 0);
        json_t *o = bench_level_json(&lv);
        assert_non_null(o);
        static const char *const keys[] = {
                "completed", "failed", "request_throughput", "output_throughput", "total_token_throughput",
                "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
                "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p99_itl_ms",
                "mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p99_e2el_ms"};
        for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
                if (!json_is_number(json_object_get(o, keys[i])))
                        fail_msg("'%s' is missing or not a number", keys[i]);
        assert_int_equal(json_integer_value(json_object_get(o, "completed")), 4);
        assert_int_equal(json_integer_value(json_object_get(o, "failed")), 1);
        assert_true(fabs(json_real_value(json_object_get(o, "mean_ttft_ms")) - 25.0) < 1e-9);
        assert_true(fabs(json_real_value(json_object_get(o, "median_ttft_ms")) - 20.0) < 0.02);
        /* population std of 10, 20, 30, 40: sqrt(125) */
        assert_true(fabs(json_real_value(json_object_get(o, "std_ttft_ms")) - sqrt(125.0)) < 0.02);
        assert_true(fabs(json_real_value(json_object_get(o, "p99_ttft_ms")) - 40.0) < 0.04);
        assert_true(fabs(json_real_value(json_object_get(o, "mean_tpot_ms")) - 10.0) < 1e-9);
        assert_true(json_real_value(json_object_get(o, "std_tpot_ms")) == 0);
        assert_true(json_real_value(json_object_get(o, "mean_itl_ms")) == 0); /* no ITL recorded: 0, as vLLM */
        assert_true(fabs(json_real_value(json_object_get(o, "request_throughput")) -
                         json_real_value(json_object_get(o, "requests_per_s"))) < 1e-9);
        assert_true(fabs(json_real_value(json_object_get(o, "output_throughput")) -
                         json_real_value(json_object_get(o, "output_tokens_per_s"))) < 1e-9);
        assert_true(fabs(json_real_value(json_object_get(o, "total_token_throughput")) -
                         json_real_value(json_object_get(o, "total_tokens_per_s"))) < 1e-9);
        json_decref(o);
        bench_level_release(&lv);
}

static void test_stddev(void **state) {
        struct hist h;
        assert_int_equal(hist_init(&h), 0);
        assert_true(hist_stddev(&h) == 0);
        hist_record(&h, 5);
        assert_true(hist_stddev(&h) == 0);
        hist_record(&h, 5);
        assert_true(hist_stddev(&h) == 0);
        hist_reset(&h);
        /* large values: within the bucket width */
        double sum = 0, sq = 0;
        for (uint64_t v = 1000000; v < 3000000; v += 7919) {
                hist_record(&h, v);
                sum += (double)v;
        }
        double mean = sum / (double)h.count;
        for (uint64_t v = 1000000; v < 3000000; v += 7919)
                sq += ((double)v - mean) * ((double)v - mean);
        double exact = sqrt(sq / (double)h.count);
        assert_true(fabs(hist_stddev(&h) - exact) / exact < 0.001);
        hist_release(&h);
}

static void test_goodput_form(void **state) {
        usec_t ttft = 0, tpot = 0, e2el = 0;
        char *err = NULL;
        assert_int_equal(bench_goodput_parse("ttft:500 tpot:50", &ttft, &tpot, &e2el, &err), 0);
        assert_true(ttft == 500000 && tpot == 50000 && e2el == 0);
        assert_int_equal(bench_goodput_parse("e2el:2500.5,ttft:100", &ttft, &tpot, &e2el, &err), 0);
        assert_true(ttft == 100000 && tpot == 50000 && e2el == 2500500);
        static const char *const bad[] = {"", "   ", "ttft", "ttft:", "ttft:-1", "ttft:0", "ttft:abc",
                                          "itl:5", "TTFT:5", "ttft:5ms", "ttft:1e99"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
                ttft = 7;
                err = NULL;
                assert_int_equal(bench_goodput_parse(bad[i], &ttft, &tpot, &e2el, &err), -EINVAL);
                assert_non_null(err);
                assert_null(strchr(err, '\n'));
                assert_true(ttft == 7); /* untouched on failure */
                free(err);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vllm_page),   cmocka_unit_test(test_sglang_and_llamacpp),
                cmocka_unit_test(test_names_exact), cmocka_unit_test(test_hostile),
                cmocka_unit_test(test_huge_lines),  cmocka_unit_test(test_level),
                cmocka_unit_test(test_level_keys),  cmocka_unit_test(test_vllm_names),
                cmocka_unit_test(test_stddev),      cmocka_unit_test(test_goodput_form),
                cmocka_unit_test(test_slots_page),  cmocka_unit_test(test_slots_hostile),
                cmocka_unit_test(test_level_slots),  cmocka_unit_test(test_level_slots_layout),  cmocka_unit_test(test_level_huge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
