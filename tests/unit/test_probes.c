/* test_probes.c -- the probes' pure parts: the context each server shape says, the context
 * in a refusal, the filler and its passkey, the target, the sampling judgement; and the
 * matrix's `probes:` key. The requests themselves: tests/integration/probes.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <string.h>

#include "gate/probes.h"
#include "config/matrix.h"

static int64_t ctx_of(const char *path, const char *body) {
        int64_t n = -1;
        int r = probes_parse_context(path, body, strlen(body), &n);
        return r == 0 ? n : r;
}

static void test_context_shapes(void **state) {
        (void)state;
        /* vLLM and the testbed */
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"max_model_len\":8192}]}"), 8192);
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"context_length\":4096}]}"), 4096);
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"max_context_length\":2048}]}"), 2048);
        /* llama.cpp's /v1/models: meta.n_ctx_train is not the slot's context; meta.n_ctx is */
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"meta\":{\"n_ctx_train\":32768,\"n_ctx\":1024}}]}"),
                         1024);
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\"}]}"), -ENOENT);
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"max_model_len\":0}]}"), -ENOENT);
        assert_int_equal(ctx_of("/v1/models", "{\"data\":[{\"id\":\"m\",\"max_model_len\":\"8192\"}]}"), -ENOENT);
        assert_int_equal(ctx_of("/v1/models", "not json"), -ENOENT);
        /* SGLang */
        assert_int_equal(ctx_of("/get_model_info", "{\"model_path\":\"x\",\"max_context_length\":32768}"), 32768);
        assert_int_equal(ctx_of("/get_server_info", "{\"context_length\":131072,\"tp_size\":1}"), 131072);
        assert_int_equal(ctx_of("/get_model_info", "{\"model_path\":\"x\"}"), -ENOENT);
        /* llama.cpp */
        assert_int_equal(ctx_of("/props", "{\"default_generation_settings\":{\"n_ctx\":4096},\"total_slots\":1}"), 4096);
        assert_int_equal(ctx_of("/props", "{\"n_ctx\":512}"), 512);
        assert_int_equal(ctx_of("/slots", "[{\"id\":0,\"n_ctx\":2048},{\"id\":1,\"n_ctx\":2048}]"), 2048);
        assert_int_equal(ctx_of("/slots", "[]"), -ENOENT);
        assert_int_equal(ctx_of("/elsewhere", "{\"n_ctx\":512}"), -ENOENT);
}

static void test_context_errors(void **state) {
        (void)state;
        int64_t n = 0;
        assert_int_equal(probes_parse_context_error("This model's maximum context length is 8192 tokens. However, you "
                                                    "requested 9000 tokens (8936 in the messages, 64 in the completion).",
                                                    &n),
                         0);
        assert_int_equal(n, 8192);
        assert_int_equal(probes_parse_context_error("the request exceeds the available context size (4,096 tokens), try "
                                                    "increasing it", &n),
                         0);
        assert_int_equal(n, 4096);
        assert_int_equal(probes_parse_context_error("The input (9000 tokens) is longer than the model's context length "
                                                    "(2048 tokens).", &n),
                         0);
        assert_int_equal(n, 2048);
        assert_int_equal(probes_parse_context_error("Internal server error", &n), -ENOENT);
        assert_int_equal(probes_parse_context_error(NULL, &n), -ENOENT);
        assert_int_equal(probes_parse_context_error("maximum context length is tokens", &n), -ENOENT);
}

static size_t count(const char *s, const char *needle) {
        size_t n = 0;
        for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static void test_filler(void **state) {
        (void)state;
        const char *fact = "The passkey is 48213.";
        for (int depth = 0; depth <= 100; depth += 25) {
                char *f = probes_filler(4000, 7, fact, depth);
                assert_non_null(f);
                size_t len = strlen(f);
                assert_true(len <= 4000 && len > 3880); /* whole sentences, never past the size */
                /* the fact once, near its depth; no other digit anywhere */
                assert_int_equal(count(f, fact), 1);
                size_t at = (size_t)(strstr(f, fact) - f);
                assert_true(at + 200 >= len * (size_t)depth / 100 && at <= len * (size_t)depth / 100 + 200);
                size_t digits = 0;
                for (const char *p = f; *p; p++)
                        digits += isdigit((unsigned char)*p) != 0;
                assert_int_equal(digits, 5);
                /* varied: no sentence repeated back to back, many distinct sentences */
                size_t sentences = count(f, ". ");
                assert_true(sentences > 40);
                free(f);
        }
        /* the same seed, the same text; another seed, another */
        char *a = probes_filler(2000, 3, fact, 40), *b = probes_filler(2000, 3, fact, 40), *c = probes_filler(2000, 4, fact, 40);
        assert_string_equal(a, b);
        assert_string_not_equal(a, c);
        /* distinct sentences: the first 30 are not all one */
        char *first = strndup(a, (size_t)(strchr(a, '.') - a));
        assert_true(count(a, first) < 5);
        free(first);
        free(a);
        free(b);
        free(c);
        /* tiny: still one sentence and the fact */
        char *t = probes_filler(1, 1, fact, 50);
        assert_non_null(strstr(t, fact));
        free(t);
}

static void test_secrets(void **state) {
        (void)state;
        int seen_depth[101] = {0};
        for (uint64_t seed = 0; seed < 500; seed++) {
                int key, depth, num;
                probes_secrets(seed, &key, &depth, &num);
                assert_true(key >= 10000 && key <= 99999);
                assert_true(depth >= 10 && depth <= 90);
                assert_true(num >= 10 && num <= 99);
                seen_depth[depth] = 1;
                int k2, d2, n2;
                probes_secrets(seed, &k2, &d2, &n2);
                assert_int_equal(k2, key);
                assert_int_equal(d2, depth);
                assert_int_equal(n2, num);
        }
        int distinct = 0;
        for (int i = 0; i <= 100; i++)
                distinct += seen_depth[i];
        assert_true(distinct > 60); /* the depth varies from cell to cell */
}

static void test_target(void **state) {
        (void)state;
        int64_t t = 0;
        assert_int_equal(probes_target_tokens(8192, 0.75, 32768, &t), 0);
        assert_int_equal(t, 6144);
        /* the answer's room: a full share leaves it */
        assert_int_equal(probes_target_tokens(8192, 1.0, 32768, &t), 0);
        assert_int_equal(t, 8192 - PROBES_ANSWER_TOKENS - PROBES_TEMPLATE_ROOM);
        /* the cap */
        assert_int_equal(probes_target_tokens(131072, 0.75, 32768, &t), 0);
        assert_int_equal(t, 32768);
        /* the testbed's 256 */
        assert_int_equal(probes_target_tokens(256, 0.75, 32768, &t), 0);
        assert_int_equal(t, 192);
        /* a full share of the testbed's leaves the answer's room */
        assert_int_equal(probes_target_tokens(256, 1.0, 32768, &t), 0);
        assert_int_equal(t, 256 - PROBES_ANSWER_TOKENS - PROBES_TEMPLATE_ROOM);
        /* too small to matter */
        assert_int_equal(probes_target_tokens(80, 0.75, 32768, &t), -ERANGE);
}

static struct check_result run(enum verdict v, const char *cause, const char *evidence, const char *out) {
        return (struct check_result){.verdict = v, .cause = cause ? strdup(cause) : NULL,
                                     .evidence = evidence ? strdup(evidence) : NULL, .output = out ? strdup(out) : NULL,
                                     .latency = 1000};
}

static void test_judge_sampling(void **state) {
        (void)state;
        struct check_result r[5], j;
        /* 4 of 5 right: passes at min_right 4 */
        for (int i = 0; i < 5; i++)
                r[i] = run(VERDICT_PASS, NULL, NULL, "323");
        check_result_release(&r[2]);
        r[2] = run(VERDICT_WRONG, "math", "expected 323, got: \"324\"", "324");
        assert_int_equal(probes_judge_sampling("sampling/math", r, 5, 4, 0.7, 0.95, &j), 0);
        assert_int_equal(j.verdict, VERDICT_PASS);
        assert_string_equal(j.name, "sampling/math");
        assert_string_equal(j.detail, "right in 4 of 5 at temperature 0.7, top_p 0.95");
        check_result_release(&j);
        /* 3 of 5: wrong/sampling with the count and a wrong answer */
        check_result_release(&r[4]);
        r[4] = run(VERDICT_WRONG, "math", "expected 323, got: \"17\"", "17");
        assert_int_equal(probes_judge_sampling("sampling/math", r, 5, 4, 0.7, 0.95, &j), 0);
        assert_int_equal(j.verdict, VERDICT_WRONG);
        assert_string_equal(j.cause, "sampling");
        assert_string_equal(j.evidence, "right in 3 of 5 at temperature 0.7, top_p 0.95: expected 323, got: \"324\"");
        check_result_release(&j);
        /* garbage in one run decides, naming the run */
        check_result_release(&r[3]);
        r[3] = run(VERDICT_GARBAGE, "repeat", "run of 40 x '!'", "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        assert_int_equal(probes_judge_sampling("sampling/math", r, 5, 1, 0.7, 0.95, &j), 0);
        assert_int_equal(j.verdict, VERDICT_GARBAGE);
        assert_string_equal(j.cause, "repeat");
        assert_string_equal(j.evidence, "sampling run 4 of 5 (temperature 0.7): run of 40 x '!'");
        assert_string_equal(j.output, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        check_result_release(&j);
        /* a timeout outranks garbage */
        check_result_release(&r[0]);
        r[0] = run(VERDICT_TIMEOUT, "request", "no complete answer within 5m", "");
        assert_int_equal(probes_judge_sampling("sampling/math", r, 5, 1, 0.7, 0.95, &j), 0);
        assert_int_equal(j.verdict, VERDICT_TIMEOUT);
        assert_string_equal(j.evidence, "sampling run 1 of 5 (temperature 0.7): no complete answer within 5m");
        check_result_release(&j);
        for (int i = 0; i < 5; i++)
                check_result_release(&r[i]);
}

static void test_skipped_does_not_fail(void **state) {
        (void)state;
        struct check_result r[2] = {
                {.name = "math", .verdict = VERDICT_PASS},
                {.name = "long-context", .verdict = VERDICT_SKIPPED, .cause = "probe", .evidence = "context unknown"},
        };
        const char *cause = "x", *ev = "x";
        assert_int_equal(checks_summarize(r, 2, &cause, &ev), VERDICT_PASS);
        assert_null(cause);
        r[0].verdict = VERDICT_WRONG;
        r[0].cause = "math";
        assert_int_equal(checks_summarize(r, 2, &cause, &ev), VERDICT_WRONG);
        assert_string_equal(cause, "math");
}

static void test_names(void **state) {
        (void)state;
        assert_int_equal(probe_from_name("long_context"), PROBE_LONG_CONTEXT);
        assert_int_equal(probe_from_name("long-context"), PROBE_LONG_CONTEXT);
        assert_int_equal(probe_from_name("multi-turn"), PROBE_MULTI_TURN);
        assert_int_equal(probe_from_name("sampling"), PROBE_SAMPLING);
        assert_int_equal(probe_from_name("sampl"), -EINVAL);
        assert_int_equal(probe_from_name("long_context_x"), -EINVAL);
        for (int k = 0; k < _PROBE_MAX; k++)
                assert_int_equal(probe_from_name(probe_name(k)), k);
}

/* ---- the matrix key ---- */

static struct matrix *parse(const char *probes, char **err) {
        char *text = strdup_printf("engine: testbed\n%s", probes);
        struct matrix *m = NULL;
        *err = NULL;
        int r = matrix_parse_string(text, strlen(text), "m.yaml", &m, err);
        free(text);
        return r == 0 ? m : NULL;
}

static void expect_error(const char *probes, const char *want) {
        char *err = NULL;
        struct matrix *m = parse(probes, &err);
        if (m || !err || !strstr(err, want))
                fail_msg("'%s': got %s, want an error with '%s'", probes, err ? err : "no error", want);
        assert_null(strchr(err, '\n'));
        free(err);
}

static void test_matrix_key(void **state) {
        (void)state;
        char *err = NULL;
        struct matrix *m = parse("", &err);
        assert_non_null(m);
        for (int k = 0; k < _PROBE_MAX; k++)
                assert_true(m->probes.on[k]);
        assert_true(m->probes.long_context.share == PROBES_DEFAULT_SHARE);
        assert_int_equal(m->probes.sampling.runs, 5);
        assert_int_equal(m->probes.sampling.min_right, 4);
        matrix_free(m);

        m = parse("probes: false\n", &err);
        assert_non_null(m);
        assert_false(probes_any(&m->probes));
        matrix_free(m);

        m = parse("probes:\n  long_context: {share: 0.5, max_tokens: 4096, timeout: 30s, context: 8192}\n"
                  "  sampling: {runs: 10, temperature: 1.0, top_p: 0.9}\n  multi_turn: {stream: false}\n",
                  &err);
        if (!m)
                fail_msg("%s", err);
        assert_true(m->probes.long_context.share == 0.5);
        assert_int_equal(m->probes.long_context.max_tokens, 4096);
        assert_true(m->probes.long_context.timeout == 30 * USEC_PER_SEC);
        assert_int_equal(m->probes.long_context.context, 8192);
        assert_int_equal(m->probes.sampling.runs, 10);
        assert_int_equal(m->probes.sampling.min_right, 8); /* 4 of 5, scaled */
        assert_true(m->probes.sampling.temperature == 1.0);
        assert_int_equal(m->probes.multi_turn.stream, STREAM_NO);
        matrix_free(m);

        m = parse("probes: {sampling: false, multi_turn: {stream: both}}\n", &err);
        assert_non_null(m);
        assert_true(m->probes.on[PROBE_LONG_CONTEXT]);
        assert_false(m->probes.on[PROBE_SAMPLING]);
        assert_int_equal(m->probes.multi_turn.stream, STREAM_BOTH);
        matrix_free(m);

        expect_error("probes: maybe\n", "m.yaml:2: probes");
        expect_error("probes: {long_context: {share: 0}}\n", "probes.long_context.share");
        expect_error("probes: {long_context: {share: 1.5}}\n", "probes.long_context.share");
        expect_error("probes: {long_context: {max_tokens: 10}}\n", "probes.long_context.max_tokens");
        expect_error("probes: {long_context: {timeout: 0s}}\n", "probes.long_context.timeout");
        expect_error("probes: {long_context: {depth: 3}}\n", "depth");
        expect_error("probes: {sampling: {runs: 0}}\n", "probes.sampling.runs");
        expect_error("probes: {sampling: {runs: 51}}\n", "probes.sampling.runs");
        expect_error("probes: {sampling: {runs: 3, min_right: 4}}\n", "probes.sampling.min_right");
        expect_error("probes: {sampling: {temperature: 0}}\n", "probes.sampling.temperature");
        expect_error("probes: {sampling: {top_p: 1.5}}\n", "probes.sampling.top_p");
        expect_error("probes: {multi_turn: {stream: sometimes}}\n", "probes.multi_turn.stream");
        expect_error("probes: {long_contxt: false}\n", "long_contxt");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_context_shapes),
                cmocka_unit_test(test_context_errors),
                cmocka_unit_test(test_filler),
                cmocka_unit_test(test_secrets),
                cmocka_unit_test(test_target),
                cmocka_unit_test(test_judge_sampling),
                cmocka_unit_test(test_skipped_does_not_fail),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_matrix_key),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
