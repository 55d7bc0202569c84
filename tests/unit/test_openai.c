/* test_openai.c -- request bodies, whole responses, streams split anywhere, model lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/openai.h"
#include "io/sse.h"

static json_t *load(const char *s) {
        json_error_t e;
        json_t *j = json_loads(s, 0, &e);
        assert_non_null(j);
        return j;
}

static void test_build_chat(void **state) {
        struct openai_params p = {
                .chat = true,
                .model = "qwen",
                .prompt = "What is 17 * 19?",
                .max_tokens = 64,
                .stream = true,
                .thinking = 0,
                .has_seed = true,
                .seed = 1234,
        };
        _cleanup_free_ char *body = NULL;
        assert_int_equal(openai_build_request(&p, &body), 0);
        json_t *j = load(body);
        assert_string_equal(json_string_value(json_object_get(j, "model")), "qwen");
        json_t *m = json_array_get(json_object_get(j, "messages"), 0);
        assert_string_equal(json_string_value(json_object_get(m, "role")), "user");
        assert_string_equal(json_string_value(json_object_get(m, "content")), "What is 17 * 19?");
        assert_int_equal(json_integer_value(json_object_get(j, "max_tokens")), 64);
        assert_true(json_number_value(json_object_get(j, "temperature")) == 0.0);
        assert_true(json_is_number(json_object_get(j, "temperature")));
        assert_int_equal(json_integer_value(json_object_get(j, "seed")), 1234);
        assert_true(json_is_true(json_object_get(j, "stream")));
        assert_true(json_is_true(json_object_get(json_object_get(j, "stream_options"), "include_usage")));
        json_t *kw = json_object_get(j, "chat_template_kwargs");
        assert_true(json_is_false(json_object_get(kw, "enable_thinking")));
        assert_null(json_object_get(j, "logprobs"));
        assert_null(json_object_get(j, "prompt"));
        json_decref(j);
}

static void test_build_variants(void **state) {
        /* DeepSeek-style key, thinking on, no model, no seed, not streamed */
        json_t *msgs = load("[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\"hi\"}]");
        struct openai_params p = {.chat = true, .messages = msgs, .thinking = 1, .thinking_key = "thinking"};
        _cleanup_free_ char *body = NULL;
        assert_int_equal(openai_build_request(&p, &body), 0);
        json_t *j = load(body);
        assert_null(json_object_get(j, "model"));
        assert_null(json_object_get(j, "seed"));
        assert_null(json_object_get(j, "max_tokens"));
        assert_null(json_object_get(j, "stream_options"));
        assert_true(json_is_false(json_object_get(j, "stream")));
        assert_true(json_equal(json_object_get(j, "messages"), msgs));
        json_t *kw = json_object_get(j, "chat_template_kwargs");
        assert_true(json_is_true(json_object_get(kw, "thinking")));
        assert_null(json_object_get(kw, "enable_thinking"));
        json_decref(j);
        json_decref(msgs);

        /* thinking left to the server: no kwargs at all */
        struct openai_params q = {.chat = true, .prompt = "x", .thinking = -1, .logprobs = true};
        _cleanup_free_ char *b2 = NULL;
        assert_int_equal(openai_build_request(&q, &b2), 0);
        j = load(b2);
        assert_null(json_object_get(j, "chat_template_kwargs"));
        assert_true(json_is_true(json_object_get(j, "logprobs")));
        json_decref(j);

        /* completions: a prompt, logprobs as a count, never template kwargs */
        struct openai_params c = {.chat = false, .prompt = "1 2 3", .thinking = 1, .logprobs = true, .max_tokens = 5};
        _cleanup_free_ char *b3 = NULL;
        assert_int_equal(openai_build_request(&c, &b3), 0);
        j = load(b3);
        assert_string_equal(json_string_value(json_object_get(j, "prompt")), "1 2 3");
        assert_null(json_object_get(j, "messages"));
        assert_null(json_object_get(j, "chat_template_kwargs"));
        assert_int_equal(json_integer_value(json_object_get(j, "logprobs")), 1);
        json_decref(j);

        struct openai_params bad = {.chat = true, .thinking = -1};
        char *b4 = NULL;
        assert_int_equal(openai_build_request(&bad, &b4), -EINVAL);
        assert_null(b4);
}

static void test_parse_whole(void **state) {
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        const char *body = "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                           "\"content\":\"323\",\"reasoning_content\":\"17*19 = 17*20 - 17\"},"
                           "\"finish_reason\":\"stop\",\"logprobs\":{\"content\":[{\"token\":\"3\",\"logprob\":-0.01},"
                           "{\"token\":\"23\",\"logprob\":-0.5}]}}],"
                           "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":9}}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_string_equal(buf_str(&o.content), "323");
        assert_string_equal(buf_str(&o.reasoning), "17*19 = 17*20 - 17");
        assert_string_equal(o.finish_reason, "stop");
        assert_int_equal(o.prompt_tokens, 12);
        assert_int_equal(o.completion_tokens, 9);
        assert_int_equal(o.n_logprobs, 2);
        assert_true(o.logprobs[1] == -0.5);
        assert_null(o.error);
        openai_output_release(&o);

        /* vLLM's field, read with a vLLM-like order; null content is no content */
        static const char *const vllm[] = {"reasoning", "reasoning_content", NULL};
        openai_output_init(&o, vllm, 0);
        body = "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"thinking hard\"},\"finish_reason\":\"length\"}]}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_int_equal(o.content.len, 0);
        assert_string_equal(buf_str(&o.reasoning), "thinking hard");
        assert_string_equal(o.finish_reason, "length");
        assert_int_equal(o.prompt_tokens, -1);
        openai_output_release(&o);

        /* completions */
        openai_output_init(&o, NULL, 0);
        body = "{\"choices\":[{\"text\":\" 4 5 6\",\"finish_reason\":\"stop\",\"logprobs\":{\"token_logprobs\":[-1.0,-2.0,null]}}]}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_string_equal(buf_str(&o.content), " 4 5 6");
        assert_int_equal(o.n_logprobs, 2);
        openai_output_release(&o);
}

static void test_parse_nan(void **state) {
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        /* Python's json.dumps writes bare NaN/-Infinity; some servers send strings */
        const char *body = "{\"choices\":[{\"message\":{\"content\":\"!!!! NaN\"},\"logprobs\":{\"content\":["
                           "{\"token\":\"!\",\"logprob\":NaN},{\"token\":\"!\",\"logprob\":-Infinity},"
                           "{\"token\":\"!\",\"logprob\":\"nan\"},{\"token\":\"!\",\"logprob\":\"-inf\"},"
                           "{\"token\":\"!\",\"logprob\":-0.25}]}}]}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_string_equal(buf_str(&o.content), "!!!! NaN"); /* NaN inside a string untouched */
        assert_int_equal(o.n_logprobs, 5);
        assert_true(isnan(o.logprobs[0]));
        assert_true(isinf(o.logprobs[1]) && o.logprobs[1] < 0);
        assert_true(isnan(o.logprobs[2]));
        assert_true(isinf(o.logprobs[3]));
        assert_true(o.logprobs[4] == -0.25);
        openai_output_release(&o);
}

static void test_parse_errors(void **state) {
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        const char *body = "{\"error\":{\"code\":500,\"message\":\"The model produced output that does not match the expected format\",\"type\":\"server_error\"}}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_int_equal(o.error_code, 500);
        assert_non_null(strstr(o.error, "does not match"));
        openai_output_release(&o);

        openai_output_init(&o, NULL, 0);
        body = "{\"object\":\"error\",\"message\":\"model not found\",\"code\":404}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_int_equal(o.error_code, 404);
        assert_string_equal(o.error, "model not found");
        openai_output_release(&o);

        static const char *const bad[] = {
                "{\"choices\":[{\"message\":{\"content\":\"32",  /* cut */
                "<html>502 Bad Gateway</html>",
                "",
                "[1,2,3]",
                "{\"choices\":[]}",
                "{\"foo\":1}",
                "\x01\x02\xff\xfe",
                NULL,
        };
        for (size_t i = 0; bad[i]; i++) {
                openai_output_init(&o, NULL, 0);
                assert_int_equal(openai_parse_response(&o, bad[i], strlen(bad[i])), -EBADMSG);
                assert_non_null(o.parse_error);
                /* the excerpt is printable: no raw control bytes reach a terminal */
                for (const char *p = o.parse_error; *p; p++)
                        assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
                openai_output_release(&o);
        }
        openai_output_init(&o, NULL, 0);
        assert_int_equal(openai_parse_response(&o, bad[1], strlen(bad[1])), -EBADMSG);
        assert_non_null(strstr(o.parse_error, "malformed JSON"));
        assert_non_null(strstr(o.parse_error, "502 Bad Gateway"));
        openai_output_release(&o);
}

static void test_parse_bad_text(void **state) {
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        /* raw invalid UTF-8 and a lone surrogate: kept as U+FFFD for the detectors */
        const char body[] = "{\"choices\":[{\"message\":{\"content\":\"a\xff" "b\\udc80c\\ud83d\\ude00\"}}]}";
        assert_int_equal(openai_parse_response(&o, body, strlen(body)), 0);
        assert_string_equal(buf_str(&o.content), "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xf0\x9f\x98\x80");
        openai_output_release(&o);

        /* a NUL escaped in JSON survives with its length */
        openai_output_init(&o, NULL, 0);
        const char *nul = "{\"choices\":[{\"message\":{\"content\":\"a\\u0000b\"}}]}";
        assert_int_equal(openai_parse_response(&o, nul, strlen(nul)), 0);
        assert_int_equal(o.content.len, 3);
        assert_int_equal(o.content.data[1], '\0');
        openai_output_release(&o);
}

static void test_cap(void **state) {
        /* 3000 two-byte characters under a 1001-byte cap: cut on a character boundary */
        struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "{\"choices\":[{\"message\":{\"content\":\"");
        for (int i = 0; i < 3000; i++)
                buf_puts(&b, "\xc3\xa9");
        buf_puts(&b, "\"}}]}");
        struct openai_output o;
        openai_output_init(&o, NULL, 1001);
        assert_int_equal(openai_parse_response(&o, b.data, b.len), 0);
        assert_int_equal(o.content.len, 1000);
        assert_true(o.content.truncated);
        json_t *js = json_string(o.content.data); /* NULL unless valid UTF-8 */
        assert_non_null(js);
        json_decref(js);
        openai_output_release(&o);
        buf_release(&b);

        /* a stream past the cap stays at the cap */
        openai_output_init(&o, NULL, 64);
        for (int i = 0; i < 100; i++) {
                const char *ev = "{\"choices\":[{\"delta\":{\"content\":\"0123456789\"}}]}";
                assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        }
        assert_int_equal(o.content.len, 64);
        assert_true(o.content.truncated);
        openai_output_release(&o);
}

static const char stream_body[] =
        ": keep-alive comment\r\n\r\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"17*19\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\" is 323\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"3\"}}]}\r\n\r\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"2\\u00e9\"},\"logprobs\":{\"content\":[{\"logprob\":-0.1}]}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"3\"},\"finish_reason\":\"stop\"}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5}}\n\n"
        "data: [DONE]\n\n";

static int on_event(void *userdata, const char *event, const char *data, size_t len) {
        return openai_stream_event(userdata, data, len);
}

static void check_stream_result(struct openai_output *o) {
        assert_string_equal(buf_str(&o->content), "32\xc3\xa9" "3");
        assert_string_equal(buf_str(&o->reasoning), "17*19 is 323");
        assert_string_equal(o->finish_reason, "stop");
        assert_true(o->done);
        assert_int_equal(o->prompt_tokens, 7);
        assert_int_equal(o->completion_tokens, 5);
        assert_int_equal(o->n_logprobs, 1);
        assert_true(o->first_token != 0);
        assert_null(o->error);
        assert_null(o->parse_error);
}

static void test_stream_splits(void **state) {
        size_t n = strlen(stream_body);
        /* every split point of two chunks */
        for (size_t cut = 0; cut <= n; cut++) {
                struct openai_output o;
                openai_output_init(&o, NULL, 0);
                struct sse s;
                sse_init(&s, 0, 0, on_event, &o);
                assert_int_equal(sse_feed(&s, stream_body, cut), 0);
                assert_int_equal(sse_feed(&s, stream_body + cut, n - cut), 0);
                assert_int_equal(sse_finish(&s), 0);
                check_stream_result(&o);
                sse_release(&s);
                openai_output_release(&o);
        }
        /* one byte at a time */
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        struct sse s;
        sse_init(&s, 0, 0, on_event, &o);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(sse_feed(&s, stream_body + i, 1), 0);
        assert_int_equal(sse_finish(&s), 0);
        check_stream_result(&o);
        sse_release(&s);
        openai_output_release(&o);
}

static void test_stream_variants(void **state) {
        /* vLLM: delta.reasoning; role-only chunks do not start the TTFT clock */
        static const char *const fields[] = {"reasoning", "reasoning_content", NULL};
        struct openai_output o;
        openai_output_init(&o, fields, 0);
        const char *ev = "{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        assert_int_equal(o.first_token, 0);
        ev = "{\"choices\":[{\"delta\":{\"reasoning\":\"hmm\"}}]}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        assert_true(o.first_token != 0);
        assert_string_equal(buf_str(&o.reasoning), "hmm");
        openai_output_release(&o);

        /* llama.cpp: an error event inside a 200 stream */
        openai_output_init(&o, NULL, 0);
        ev = "{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        ev = "{\"error\":{\"code\":500,\"message\":\"The model produced output that does not match the expected format\",\"type\":\"server_error\"}}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        assert_int_equal(o.error_code, 500);
        assert_non_null(strstr(o.error, "expected format"));
        assert_string_equal(buf_str(&o.content), "Hel");
        assert_false(o.done);
        openai_output_release(&o);

        /* malformed chunk: a parse error, not a crash */
        openai_output_init(&o, NULL, 0);
        ev = "{\"choices\":[{\"delta\":{\"content\":\"x\"}}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), -EBADMSG);
        assert_non_null(strstr(o.parse_error, "malformed JSON"));
        openai_output_release(&o);

        /* completions stream: choices[0].text */
        openai_output_init(&o, NULL, 0);
        ev = "{\"choices\":[{\"text\":\"4 5\",\"finish_reason\":null}]}";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        ev = " [DONE] ";
        assert_int_equal(openai_stream_event(&o, ev, strlen(ev)), 0);
        assert_true(o.done);
        assert_null(o.finish_reason);
        assert_string_equal(buf_str(&o.content), "4 5");
        openai_output_release(&o);
}

static void finish_with(const char *content, const char *reasoning, const char *want_content,
                        const char *want_reasoning, bool tags) {
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        buf_puts(&o.content, content);
        if (reasoning)
                buf_puts(&o.reasoning, reasoning);
        assert_int_equal(openai_output_finish(&o), 0);
        assert_string_equal(buf_str(&o.content), want_content);
        assert_string_equal(buf_str(&o.reasoning), want_reasoning);
        assert_int_equal(o.think_tags, tags);
        openai_output_release(&o);
}

static void test_think_tags(void **state) {
        finish_with("<think>\n17*19 = 323\n</think>\n\n323", NULL, "323", "\n17*19 = 323\n", true);
        finish_with("  <think>a</think>b", NULL, "b", "a", true);
        finish_with("17*19...</think>\n\n**323**", NULL, "**323**", "17*19...", true);
        finish_with("<think>still going", NULL, "", "still going", true);
        /* a reasoning field wins: the content is left alone */
        finish_with("<think>x</think>323", "real reasoning", "<think>x</think>323", "real reasoning", false);
        finish_with("323", NULL, "323", "", false);
        finish_with("", NULL, "", "", false);
}

static void test_models(void **state) {
        char *id = NULL, *err = NULL;
        size_t n = 0;
        const char *body = "{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen3-8B\",\"object\":\"model\"},{\"id\":\"other\"}]}";
        assert_int_equal(openai_parse_models(body, strlen(body), &id, &n, &err), 0);
        assert_string_equal(id, "Qwen/Qwen3-8B");
        assert_int_equal(n, 2);
        free(id);
        id = NULL;
        body = "{\"object\":\"list\",\"data\":[]}";
        assert_int_equal(openai_parse_models(body, strlen(body), &id, &n, &err), -ENOENT);
        assert_null(id);
        body = "{\"models\":[{\"model\":\"m.gguf\",\"name\":\"m\"}]}";
        assert_int_equal(openai_parse_models(body, strlen(body), &id, &n, &err), 0);
        assert_string_equal(id, "m.gguf");
        free(id);
        id = NULL;
        body = "not json";
        assert_int_equal(openai_parse_models(body, strlen(body), &id, &n, &err), -EBADMSG);
        assert_non_null(err);
        free(err);
        err = NULL;
        body = "{\"data\":\"nope\"}";
        assert_int_equal(openai_parse_models(body, strlen(body), &id, &n, &err), -EBADMSG);
        assert_non_null(strstr(err, "not a model list"));
        free(err);
}

/* [DONE] ends the stream: content after it is what no client sees, and is counted. */
static void test_events_after_done(void **state) {
        (void)state;
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        const char *evs[] = {"{\"choices\":[{\"delta\":{\"content\":\"3\"}}]}", "[DONE]",
                             "{\"choices\":[{\"delta\":{\"content\":\"23\"},\"finish_reason\":\"stop\"}]}", " "};
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(openai_stream_event(&o, evs[i], strlen(evs[i])), 0);
        assert_true(o.done);
        assert_string_equal(buf_str(&o.content), "3");
        assert_null(o.finish_reason);
        assert_int_equal(o.events, 4);
        assert_int_equal(o.events_after_done, 2);
        openai_output_release(&o);
}

/* A server sending far more logprobs than tokens asked for: kept up to the request's
 * max_tokens per answer, the rest counted; memory stays at what the cap allows. */
static void test_logprobs_capped(void **state) {
        /* streamed chat: 50 chunks of 100 logprobs each, 8 tokens asked for */
        struct openai_output o;
        openai_output_init(&o, NULL, 0);
        openai_output_cap_logprobs(&o, 8);
        struct buf ev;
        buf_init(&ev, 0);
        for (int k = 0; k < 50; k++) {
                buf_reset(&ev);
                buf_puts(&ev, "{\"choices\":[{\"delta\":{\"content\":\"a\"},\"logprobs\":{\"content\":[");
                for (int i = 0; i < 100; i++)
                        buf_printf(&ev, "%s{\"token\":\"a\",\"logprob\":-%d.5}", i ? "," : "", k);
                buf_puts(&ev, "]}}]}");
                assert_int_equal(openai_stream_event(&o, ev.data, ev.len), 0);
        }
        assert_int_equal(o.n_logprobs, 8);
        assert_int_equal(o.logprobs_dropped, 50 * 100 - 8);
        assert_true(o.logprobs[7] == -0.5); /* the first ones are kept */
        assert_true(o.alloc_logprobs <= 64);
        openai_output_release(&o);

        /* whole completions answer: 200,000 token_logprobs for 16 tokens asked */
        openai_output_init(&o, NULL, 0);
        openai_output_cap_logprobs(&o, 16);
        buf_reset(&ev);
        buf_puts(&ev, "{\"choices\":[{\"text\":\"x\",\"finish_reason\":\"length\",\"logprobs\":{\"token_logprobs\":[");
        for (int i = 0; i < 200000; i++)
                buf_puts(&ev, i ? ",-1" : "-1");
        buf_puts(&ev, "]}}]}");
        assert_int_equal(openai_parse_response(&o, ev.data, ev.len), 0);
        assert_int_equal(o.n_logprobs, 16);
        assert_int_equal(o.logprobs_dropped, 200000 - 16);
        assert_true(o.alloc_logprobs <= 64);
        openai_output_release(&o);

        /* no max_tokens: the fixed ceiling, as before */
        openai_output_init(&o, NULL, 0);
        openai_output_cap_logprobs(&o, 0);
        assert_int_equal(o.max_logprobs, OPENAI_MAX_LOGPROBS);
        assert_int_equal(openai_parse_response(&o, ev.data, ev.len), 0);
        assert_int_equal(o.n_logprobs, OPENAI_MAX_LOGPROBS);
        assert_int_equal(o.logprobs_dropped, 200000 - OPENAI_MAX_LOGPROBS);
        openai_output_release(&o);
        buf_release(&ev);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_build_chat),
                cmocka_unit_test(test_build_variants),
                cmocka_unit_test(test_parse_whole),
                cmocka_unit_test(test_parse_nan),
                cmocka_unit_test(test_parse_errors),
                cmocka_unit_test(test_parse_bad_text),
                cmocka_unit_test(test_cap),
                cmocka_unit_test(test_stream_splits),
                cmocka_unit_test(test_stream_variants),
                cmocka_unit_test(test_think_tags),
                cmocka_unit_test(test_models),
                cmocka_unit_test(test_events_after_done),
                cmocka_unit_test(test_logprobs_capped),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
