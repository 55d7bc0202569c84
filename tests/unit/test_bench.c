/* test_bench.c -- the pure parts of bench: chunk parsing, schedules, prompts, level metrics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

static struct bench_event parse_ok(const char *s) {
        struct bench_event ev;
        int r = bench_event_parse(s, strlen(s), &ev);
        if (r < 0)
                fail_msg("cannot parse: %s", s);
        return ev;
}

static void test_event_parse(void **state) {
        struct bench_event ev;
        /* role-only chunk: not a token */
        ev = parse_ok("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
                      "\"finish_reason\":null}]}");
        assert_false(ev.token);
        assert_false(ev.finish);
        assert_false(ev.usage);
        ev = parse_ok("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"usage\":null}");
        assert_false(ev.token);
        assert_false(ev.usage);
        /* content, reasoning (both spellings), completions text */
        assert_true(parse_ok("{\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}").token);
        assert_true(parse_ok("{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}").token);
        assert_true(parse_ok("{\"choices\":[{\"delta\":{\"reasoning\":\"\\n\"}}]}").token);
        assert_true(parse_ok("{\"choices\":[{\"text\":\"x\",\"finish_reason\":null}]}").token);
        /* logprobs carry "content" as an array: not a token by itself */
        assert_false(parse_ok("{\"choices\":[{\"delta\":{},\"logprobs\":{\"content\":[{\"token\":\"a\"}]}}]}").token);
        /* finish and usage */
        ev = parse_ok("{\"choices\":[{\"delta\":{\"content\":\"end\"},\"finish_reason\":\"length\"}]}");
        assert_true(ev.token);
        assert_true(ev.finish);
        ev = parse_ok("{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":256,"
                      "\"total_tokens\":268,\"prompt_tokens_details\":{\"cached_tokens\":0}}}");
        assert_true(ev.usage);
        assert_int_equal(ev.prompt_tokens, 12);
        assert_int_equal(ev.completion_tokens, 256);
        assert_false(ev.token);
        /* a "completion_tokens" outside usage is not usage */
        ev = parse_ok("{\"meta\":{\"completion_tokens\":5}}");
        assert_false(ev.usage);
        assert_int_equal(ev.completion_tokens, -1);
        /* errors: top level only, null is no error */
        assert_true(parse_ok("{\"error\":{\"code\":500,\"message\":\"parse\"}}").error);
        assert_false(parse_ok("{\"error\":null,\"choices\":[]}").error);
        assert_false(parse_ok("{\"choices\":[{\"error\":\"x\"}]}").error);
        /* malformed */
        assert_int_equal(bench_event_parse("{\"a\":", 5, &ev), -EBADMSG);
        assert_int_equal(bench_event_parse("hello", 5, &ev), -EBADMSG);
        assert_int_equal(bench_event_parse("{\"a\":1} x", 9, &ev), -EBADMSG);
        assert_int_equal(bench_event_parse("{\"a\":\"\x01\"}", 8, &ev), -EBADMSG);
        /* a nesting bomb is refused, not recursed into */
        char deep[400];
        size_t k = 0;
        deep[k++] = '{';
        deep[k++] = '"';
        deep[k++] = 'a';
        deep[k++] = '"';
        deep[k++] = ':';
        for (int i = 0; i < 150; i++)
                deep[k++] = '[';
        for (int i = 0; i < 150; i++)
                deep[k++] = ']';
        deep[k++] = '}';
        assert_int_equal(bench_event_parse(deep, k, &ev), -EBADMSG);
}

static void test_sched_constant(void **state) {
        struct bench_sched s;
        bench_sched_init(&s, 2000, false, 1, 0);
        for (uint64_t i = 0; i < 100000; i++) {
                usec_t t = bench_sched_next(&s);
                /* exact spacing of 500 us, no drift after many sends */
                assert_int_equal(t, i * 500);
        }
        bench_sched_init(&s, 3, false, 1, 0);
        assert_int_equal(bench_sched_next(&s), 0);
        assert_int_equal(bench_sched_next(&s), 333333);
        assert_int_equal(bench_sched_next(&s), 666667);
        assert_int_equal(bench_sched_next(&s), 1000000);
}

static void test_sched_poisson(void **state) {
        struct bench_sched s;
        double rate = 100;
        bench_sched_init(&s, rate, true, 1, 42);
        size_t n = 200000;
        usec_t prev = bench_sched_next(&s);
        assert_int_equal(prev, 0);
        double sum = 0, sum2 = 0;
        for (size_t i = 1; i < n; i++) {
                usec_t t = bench_sched_next(&s);
                assert_true(t >= prev);
                double gap = (double)(t - prev) / 1e6;
                sum += gap;
                sum2 += gap * gap;
                prev = t;
        }
        double mean = sum / (double)(n - 1);
        double sd = sqrt(sum2 / (double)(n - 1) - mean * mean);
        /* exponential gaps: mean 1/rate, standard deviation equal to the mean */
        assert_true(fabs(mean - 1 / rate) < 0.01 / rate);
        assert_true(fabs(sd / mean - 1) < 0.02);
        /* the same seed gives the same schedule; another seed another one */
        struct bench_sched a, b, c;
        bench_sched_init(&a, rate, true, 1, 7);
        bench_sched_init(&b, rate, true, 1, 7);
        bench_sched_init(&c, rate, true, 1, 8);
        bool differs = false;
        for (int i = 0; i < 100; i++) {
                usec_t x = bench_sched_next(&a);
                assert_int_equal(x, bench_sched_next(&b));
                differs |= x != bench_sched_next(&c);
        }
        assert_true(differs);
}

static size_t count_words(const char *s) {
        size_t n = 0;
        bool in = false;
        for (; *s; s++) {
                if (*s == ' ')
                        in = false;
                else if (!in) {
                        in = true;
                        n++;
                }
        }
        return n;
}

static void test_prompt(void **state) {
        _cleanup_buf_ struct buf a, b;
        buf_init(&a, 0);
        buf_init(&b, 0);
        assert_int_equal(bench_prompt(1, 0, 1024, &a), 0);
        assert_int_equal(bench_prompt(1, 1, 1024, &b), 0);
        /* "Request N." counts as about three tokens, then one word per token */
        assert_int_equal(count_words(buf_str(&a)), 1024 - 3 + 2);
        assert_true(startswith(buf_str(&a), "Request 0."));
        assert_true(startswith(buf_str(&b), "Request 1."));
        assert_string_not_equal(buf_str(&a) + 10, buf_str(&b) + 10);
        /* deterministic */
        _cleanup_buf_ struct buf c;
        buf_init(&c, 0);
        assert_int_equal(bench_prompt(1, 0, 1024, &c), 0);
        assert_string_equal(buf_str(&a), buf_str(&c));
        /* capped */
        _cleanup_buf_ struct buf d;
        buf_init(&d, 64);
        assert_int_equal(bench_prompt(1, 0, 1024, &d), -ENOBUFS);
}

/* Calibrated prompts: exactly the length asked, a fixed-width unique prefix, deterministic. */
static void test_prompt_chars(void **state) {
        for (size_t n = 0; n < 300; n += 7) {
                _cleanup_buf_ struct buf a, b;
                buf_init(&a, 0);
                buf_init(&b, 0);
                assert_int_equal(bench_prompt_chars(3, 12, n, &a), 0);
                assert_int_equal(bench_prompt_chars(3, 99999999, n, &b), 0);
                assert_int_equal(a.len, MAX(n, (size_t)BENCH_PROMPT_PREFIX));
                assert_int_equal(b.len, a.len);
                assert_true(startswith(buf_str(&a), "00000012:"));
                assert_true(startswith(buf_str(&b), "99999999:"));
        }
        _cleanup_buf_ struct buf c, d;
        buf_init(&c, 0);
        buf_init(&d, 0);
        assert_int_equal(bench_prompt_chars(3, 5, 500, &c), 0);
        assert_int_equal(bench_prompt_chars(3, 5, 500, &d), 0);
        assert_string_equal(buf_str(&c), buf_str(&d));
        /* a longer prompt of the same request starts as the shorter one: the count grows with it */
        _cleanup_buf_ struct buf e;
        buf_init(&e, 0);
        assert_int_equal(bench_prompt_chars(3, 5, 400, &e), 0);
        assert_memory_equal(buf_str(&c), buf_str(&e), 400);
}

/* A completed request whose usage says `tokens` and which gauntlet counted as many (by
 * /tokenize: several tokens per chunk) in `chunks` chunks; tokens -1: no usage, and counted
 * by its chunks. */
static struct bench_record rec_ok(usec_t sent, usec_t ttft, usec_t e2e, int64_t tokens, uint32_t chunks) {
        return (struct bench_record){.scheduled = sent, .sent = sent, .first_token = sent + ttft,
                                     .done = sent + e2e, .output_tokens = tokens, .prompt_tokens = 100,
                                     .counted_tokens = tokens > 0 ? tokens : 0, .chunks = chunks, .ok = true};
}

static double num(json_t *o, const char *k) {
        json_t *v = json_object_get(o, k);
        assert_true(json_is_number(v));
        return json_number_value(v);
}

static void test_level_metrics(void **state) {
        struct bench_level lv;
        assert_int_equal(bench_level_init(&lv, 4, 0), 0);
        lv.slo_ttft = 50 * USEC_PER_MSEC;
        usec_t t0 = 1000 * USEC_PER_SEC;
        /* 4 requests over exactly 2 s: ttft 10/20/30/100 ms, 101 tokens in 1 s after the first */
        struct bench_record r[4] = {
                rec_ok(t0, 10000, 1010000, 101, 51),
                rec_ok(t0 + 500000, 20000, 1020000, 101, 51),
                rec_ok(t0 + 700000, 30000, 1030000, 101, 51),
                rec_ok(t0 + 900000, 100000, 1100000, 101, 51),
        };
        for (int i = 0; i < 4; i++)
                assert_int_equal(bench_level_add(&lv, &r[i]), 0);
        /* one failure cut mid-stream, one HTTP error: counted, never dropped */
        struct bench_record f1 = {.scheduled = t0 + 100, .sent = t0 + 100, .first_token = t0 + 5000,
                                  .done = t0 + 9000, .chunks = 3, .output_tokens = -1, .aborted = true};
        strcpy(f1.error, "closed");
        struct bench_record f2 = {.scheduled = t0 + 200, .sent = t0 + 1200, .done = t0 + 2000, .output_tokens = -1};
        strcpy(f2.error, "http_500");
        assert_int_equal(bench_level_add(&lv, &f1), 0);
        assert_int_equal(bench_level_add(&lv, &f2), 0);
        for (int i = 0; i < 50; i++)
                bench_level_itl(&lv, 20000);
        lv.events = 1000;
        lv.reads = 400;
        lv.cpu_user_s = 0.3;
        lv.cpu_sys_s = 0.1;
        lv.wall_s = 2.0;

        json_t *o = bench_level_json(&lv);
        assert_non_null(o);
        assert_int_equal(num(o, "concurrency"), 4);
        assert_int_equal(num(o, "requests"), 6);
        assert_int_equal(num(o, "completed"), 4);
        assert_int_equal(num(o, "failed"), 2);
        assert_int_equal(num(o, "aborted"), 1);
        json_t *errors = json_object_get(o, "errors");
        assert_int_equal(json_integer_value(json_object_get(errors, "closed")), 1);
        assert_int_equal(json_integer_value(json_object_get(errors, "http_500")), 1);
        /* window: first send t0 to last done t0 + 2.0 s */
        assert_true(fabs(num(o, "duration_s") - 2.0) < 1e-9);
        assert_true(fabs(num(o, "output_tokens_per_s") - 404 / 2.0) < 1e-3);
        assert_true(fabs(num(o, "total_tokens_per_s") - 804 / 2.0) < 1e-3);
        assert_true(fabs(num(o, "requests_per_s") - 2.0) < 1e-9);
        assert_true(fabs(num(o, "tokens_per_chunk") - 101.0 / 51) < 1e-3);
        json_t *ttft = json_object_get(o, "ttft_ms");
        assert_true(fabs(num(ttft, "p50") - 20) < 0.02);
        assert_true(fabs(num(ttft, "max") - 100) < 1e-9);
        assert_true(fabs(num(ttft, "mean") - 40) < 1e-9);
        /* TPOT = (e2e - ttft) / (tokens - 1) = 1000 ms / 100 */
        json_t *tpot = json_object_get(o, "tpot_ms");
        assert_true(fabs(num(tpot, "p50") - 10) < 0.01);
        assert_true(fabs(num(json_object_get(o, "itl_ms"), "p99") - 20) < 0.02);
        /* the 1 ms late send shows in send_delay */
        assert_true(fabs(num(json_object_get(o, "send_delay_ms"), "max") - 1) < 1e-9);
        /* goodput: three of the four meet TTFT <= 50 ms */
        json_t *g = json_object_get(o, "goodput");
        assert_non_null(g);
        assert_int_equal(json_integer_value(json_object_get(g, "good")), 3);
        assert_true(fabs(num(g, "requests_per_s") - 1.5) < 1e-9);
        json_t *cpu = json_object_get(o, "client_cpu");
        assert_true(fabs(num(cpu, "cores") - 0.2) < 1e-9);
        assert_true(fabs(num(cpu, "events_per_cpu_s") - 2500) < 1e-6);
        assert_int_equal(num(cpu, "reads"), 400);
        assert_true(fabs(num(cpu, "events_per_read") - 2.5) < 1e-9);
        /* warnings: the failures are named; the late sends are 1 of 6 = more than 1% */
        json_t *w = json_object_get(o, "warnings");
        assert_true(json_array_size(w) >= 1);
        assert_non_null(strstr(json_string_value(json_array_get(w, 0)), "2 of 6 requests failed"));
        json_decref(o);
        bench_level_release(&lv);
}

static void test_level_no_usage_and_cpu_warning(void **state) {
        struct bench_level lv;
        assert_int_equal(bench_level_init(&lv, 1, 10), 0);
        struct bench_record r = rec_ok(5000000, 1000, 11000, -1, 11);
        r.prompt_tokens = -1;
        assert_int_equal(bench_level_add(&lv, &r), 0);
        lv.cpu_user_s = 0.9;
        lv.wall_s = 1.0;
        json_t *o = bench_level_json(&lv);
        /* without usage, output tokens are the chunks */
        assert_int_equal(json_integer_value(json_object_get(o, "output_tokens")), 11);
        assert_int_equal(json_integer_value(json_object_get(o, "prompt_tokens")), 0);
        assert_true(fabs(num(o, "rate") - 10) < 1e-9);
        assert_null(json_object_get(o, "goodput"));
        json_t *w = json_object_get(o, "warnings");
        bool usage = false, cpu = false;
        size_t i;
        json_t *x;
        json_array_foreach(w, i, x) {
                usage |= strstr(json_string_value(x), "no usage") != NULL;
                cpu |= strstr(json_string_value(x), "bottleneck") != NULL;
        }
        assert_true(usage);
        assert_true(cpu);
        json_decref(o);
        bench_level_release(&lv);
}

/* A request that opened a connection is sent once connected: a server slow to accept
 * (llama-server -np 1 at concurrency 1: 1.7 ms a connect, the client at 6% of a core) makes
 * the send delay, not the client; a client that lags as long on its own is the bottleneck. */
static void test_connect_is_not_the_clients(void **state) {
        (void)state;
        for (int slow_client = 0; slow_client < 2; slow_client++) {
                struct bench_level lv;
                assert_int_equal(bench_level_init(&lv, 1, 0), 0);
                usec_t t = 1000 * USEC_PER_SEC;
                for (int i = 0; i < 16; i++, t += 50 * USEC_PER_MSEC) {
                        struct bench_record r = rec_ok(t + 1760, 15000, 49000, 32, 32);
                        r.scheduled = t;
                        r.connect = slow_client ? 0 : 1700;
                        assert_int_equal(bench_level_add(&lv, &r), 0);
                }
                lv.cpu_user_s = 0.05;
                lv.wall_s = 0.8;
                json_t *o = bench_level_json(&lv);
                assert_true(fabs(num(json_object_get(o, "send_delay_ms"), "p50") - 1.76) < 0.02);
                assert_true(json_is_boolean(json_object_get(json_object_get(o, "client_cpu"), "bound")));
                assert_int_equal(json_is_true(json_object_get(json_object_get(o, "client_cpu"), "bound")), slow_client);
                json_decref(o);
                bench_level_release(&lv);
        }
}

/* Requests split over two loops' levels and merged give the JSON of one level that counted
 * them all: the same counts, distributions, errors and window, the same goodput (an e2el SLO
 * too), server timings and vLLM names. */
static void test_level_merge(void **state) {
        struct bench_level one, a, b;
        assert_int_equal(bench_level_init(&one, 8, 0), 0);
        assert_int_equal(bench_level_init(&a, 8, 0), 0);
        assert_int_equal(bench_level_init(&b, 8, 0), 0);
        one.slo_e2el = a.slo_e2el = b.slo_e2el = 92 * USEC_PER_MSEC;
        usec_t t0 = 1000 * USEC_PER_SEC;
        for (int i = 0; i < 40; i++) {
                struct bench_record r = rec_ok(t0 + (usec_t)i * 1000, 5000 + (usec_t)i * 37, 90000 + (usec_t)i * 101,
                                               i % 5 ? 20 : -1, 20);
                if (i % 3 == 0) { /* llama.cpp's timings: prompt tokens computed and cached */
                        r.timings = true;
                        r.t_prompt_n = 10 + i;
                        r.t_cache_n = i % 2 ? 90 - i : -1;
                }
                if (i % 7 == 3) {
                        r.ok = false;
                        snprintf(r.error, sizeof(r.error), "%s", i % 2 ? "http_500" : "closed");
                }
                assert_int_equal(bench_level_add(&one, &r), 0);
                assert_int_equal(bench_level_add(i % 2 ? &b : &a, &r), 0);
                bench_level_itl(&one, (usec_t)i * 3);
                bench_level_itl(i % 2 ? &b : &a, (usec_t)i * 3);
        }
        one.events = 900;
        a.events = 400;
        b.events = 500;
        one.wall_s = a.wall_s = 1.0;
        one.cpu_user_s = 0.5;
        a.cpu_user_s = 0.2;
        b.cpu_user_s = 0.3;
        a.loop_cpu_max_s = 0.2;
        b.loop_cpu_max_s = 0.3;
        a.threads = 2;
        assert_int_equal(bench_level_merge(&a, &b), 0);
        json_t *x = bench_level_json(&one), *y = bench_level_json(&a);
        static const char *const same[] = {"requests", "completed", "failed", "output_tokens", "prompt_tokens",
                                           "duration_s", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "send_delay_ms",
                                           "errors", "first_error", "output_tokens_per_request", "usage_check",
                                           "output_tokens_per_s", "send_rate_per_s", "goodput", "server_timings",
                                           "request_throughput", "mean_ttft_ms", "p99_e2el_ms", "std_itl_ms"};
        for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
                if (!json_equal(json_object_get(x, same[i]), json_object_get(y, same[i])))
                        fail_msg("%s differs", same[i]);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(y, "server_timings"), "requests")), 12);
        assert_true(json_integer_value(json_object_get(json_object_get(y, "goodput"), "good")) > 0);
        assert_true(json_integer_value(json_object_get(json_object_get(y, "goodput"), "good")) < 34);
        json_t *cx = json_object_get(x, "client_cpu"), *cy = json_object_get(y, "client_cpu");
        assert_true(fabs(num(cx, "user_s") - num(cy, "user_s")) < 1e-9);
        assert_int_equal(json_integer_value(json_object_get(cy, "events")), 900);
        assert_int_equal(json_integer_value(json_object_get(cx, "threads")), 1);
        assert_int_equal(json_integer_value(json_object_get(cy, "threads")), 2);
        /* one loop: its thread is the client; two: the busiest of them */
        assert_true(fabs(num(cx, "loop_cores_max") - 0.5) < 1e-9);
        assert_true(fabs(num(cy, "loop_cores_max") - 0.3) < 1e-9);
        assert_false(json_is_true(json_object_get(cy, "bound")));
        json_decref(x);
        json_decref(y);
        /* a loop at 95% of a core: the client was the bottleneck */
        a.loop_cpu_max_s = 0.95;
        y = bench_level_json(&a);
        assert_true(json_is_true(json_object_get(json_object_get(y, "client_cpu"), "bound")));
        json_decref(y);
        bench_level_release(&one);
        bench_level_release(&a);
        bench_level_release(&b);
}

/* The loops of a level: as asked, never more than the streams; automatic: one below 256
 * streams, then one per 128, at most the CPUs less one. */
static void test_threads(void **state) {
        assert_int_equal(bench_threads(4, 100, 16), 4);
        assert_int_equal(bench_threads(4, 2, 16), 2);
        assert_int_equal(bench_threads(0, 255, 16), 1);
        assert_int_equal(bench_threads(0, 256, 16), 2);
        assert_int_equal(bench_threads(0, 1024, 16), 8);
        assert_int_equal(bench_threads(0, 2048, 16), 15);
        assert_int_equal(bench_threads(0, 2048, 2), 1);
        assert_int_equal(bench_threads(0, 2048, 1), 1);
        assert_int_equal(bench_threads(1000, 2048, 2), BENCH_MAX_THREADS);
}

/* The text of a chunk's content and reasoning strings, escapes undone, in their order. */
static void test_event_text(void **state) {
        _cleanup_buf_ struct buf t;
        buf_init(&t, 64);
        struct bench_event ev;
        const char *s = "{\"choices\":[{\"delta\":{\"reasoning_content\":\"a\\\"b\\n\",\"content\":\"\\u00e9\\ud83d\\ude00\\ud800x\"},"
                        "\"finish_reason\":null}],\"model\":\"not-text\"}";
        assert_int_equal(bench_event_parse_text(s, strlen(s), &ev, &t), 0);
        assert_true(ev.token);
        assert_string_equal(buf_str(&t), "a\"b\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
        /* without a buffer: the same event, nothing kept */
        assert_int_equal(bench_event_parse_text(s, strlen(s), &ev, NULL), 0);
        assert_true(ev.token);
        /* at the buffer's cap the rest is dropped, the event still parses */
        _cleanup_buf_ struct buf small;
        buf_init(&small, 4);
        const char *long_chunk = "{\"choices\":[{\"text\":\"abcdefghij\"}]}";
        assert_int_equal(bench_event_parse_text(long_chunk, strlen(long_chunk), &ev, &small), 0);
        assert_true(small.len <= 4);
}

/* usage is the server's word: checked against gauntlet's count, never used for the figures. */
static void test_usage_is_checked(void **state) {
        struct bench_level lv;
        assert_int_equal(bench_level_init(&lv, 1, 0), 0);
        lv.max_tokens = 8;
        usec_t t0 = 1000 * USEC_PER_SEC;
        /* the liar: 8 chunks, usage 1000000 for max_tokens 8, over 1 s */
        struct bench_record liar = rec_ok(t0, 1000, USEC_PER_SEC, 1000000, 8);
        liar.counted_tokens = 0;
        assert_int_equal(bench_level_add(&lv, &liar), 0);
        /* within the slack (an end-of-sequence, <think> tags): agrees */
        struct bench_record near = rec_ok(t0, 1000, USEC_PER_SEC, 8, 6);
        near.counted_tokens = 0;
        assert_int_equal(bench_level_add(&lv, &near), 0);
        json_t *o = bench_level_json(&lv);
        assert_int_equal(json_integer_value(json_object_get(o, "output_tokens")), 14);
        assert_true(fabs(num(o, "output_tokens_per_s") - 14) < 1e-3);
        assert_true(fabs(num(o, "tokens_per_chunk") - 1) < 1e-9);
        json_t *u = json_object_get(o, "usage_check");
        assert_string_equal(json_string_value(json_object_get(u, "method")), "chunks");
        assert_int_equal(json_integer_value(json_object_get(u, "requests")), 2);
        assert_int_equal(json_integer_value(json_object_get(u, "usage_tokens")), 1000008);
        assert_int_equal(json_integer_value(json_object_get(u, "counted_tokens")), 14);
        assert_int_equal(json_integer_value(json_object_get(u, "disagreeing")), 1);
        assert_int_equal(json_integer_value(json_object_get(u, "above_max_tokens")), 1);
        json_t *w = json_object_get(o, "warnings"), *x;
        size_t i;
        bool said = false;
        json_array_foreach(w, i, x) said |= strstr(json_string_value(x), "usage disagrees with gauntlet's count on 1 of 2 "
                                                                        "requests: the server said 1000008 output tokens, "
                                                                        "gauntlet counted 14 (one per streamed chunk); 1 "
                                                                        "said more than the 8 max_tokens asked") != NULL;
        assert_true(said);
        json_decref(o);
        bench_level_release(&lv);

        /* a 2x lie under max_tokens disagrees too; usage below the count as well */
        assert_false(bench_usage_disagrees(100, 100, 256));
        assert_false(bench_usage_disagrees(103, 100, 256));
        assert_false(bench_usage_disagrees(105, 100, 256)); /* 5 > 3 but not > 5% */
        assert_true(bench_usage_disagrees(106, 100, 256));
        assert_true(bench_usage_disagrees(200, 100, 256));
        assert_true(bench_usage_disagrees(50, 100, 256));
        assert_true(bench_usage_disagrees(9, 8, 8)); /* above max_tokens: never believed */
        assert_false(bench_usage_disagrees(-1, 8, 8)); /* no usage: nothing to check */
        assert_false(bench_usage_disagrees(8, 8, 0));  /* max_tokens unknown */

        /* counted by /tokenize (the bench says which count it used): several tokens per
         * chunk, and usage agrees */
        assert_int_equal(bench_level_init(&lv, 1, 0), 0);
        lv.max_tokens = 32;
        lv.count_method = "tokenize";
        struct bench_record tk = rec_ok(t0, 1000, USEC_PER_SEC, 32, 8);
        assert_int_equal(bench_level_add(&lv, &tk), 0);
        o = bench_level_json(&lv);
        u = json_object_get(o, "usage_check");
        assert_string_equal(json_string_value(json_object_get(u, "method")), "tokenize");
        assert_int_equal(json_integer_value(json_object_get(u, "tokenized")), 1);
        assert_int_equal(json_integer_value(json_object_get(u, "disagreeing")), 0);
        assert_true(fabs(num(o, "tokens_per_chunk") - 4) < 1e-9);
        json_decref(o);
        bench_level_release(&lv);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_event_parse),
                cmocka_unit_test(test_sched_constant),
                cmocka_unit_test(test_sched_poisson),
                cmocka_unit_test(test_prompt),
                cmocka_unit_test(test_prompt_chars),
                cmocka_unit_test(test_level_metrics),
                cmocka_unit_test(test_level_no_usage_and_cpu_warning),
                cmocka_unit_test(test_connect_is_not_the_clients),
                cmocka_unit_test(test_event_text),
                cmocka_unit_test(test_usage_is_checked),
                cmocka_unit_test(test_level_merge),
                cmocka_unit_test(test_threads),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
