/* test_detect.c -- the garbage detectors: the corpus as data, then edge cases by hand.
 *
 * tests/corpus/{garbage,clean}/NAME.txt is one output each; NAME.meta may say
 * `finish_reason=length` and `expect_cause=loop`. Every garbage file must be flagged (with
 * the cause when given) and every clean file must pass; a failure names the file.
 * tests/corpus/holdout/ is scored the same way. A file marked `known_miss=1` is garbage the
 * detectors do not catch yet (docs/detectors.md): it must still pass, so that catching it
 * one day shows up here. DETECT_VERBOSE=1 prints every verdict.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "detect.h"
#include "util.h"

static const char *srcdir(void) {
        const char *s = getenv("SRCDIR");
        return s && *s ? s : ".";
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every NAME.txt under dir; returns the number of files judged wrongly. */
static int run_dir(const char *sub, bool want_garbage, size_t *ret_total, size_t *ret_known_miss) {
        _cleanup_free_ char *dir = strdup_printf("%s/tests/corpus/%s", srcdir(), sub);
        assert_non_null(dir);
        DIR *d = opendir(dir);
        if (!d) {
                print_error("cannot open %s\n", dir);
                fail();
        }
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *e;
        while ((e = readdir(d)))
                if (endswith(e->d_name, ".txt"))
                        assert_int_equal(strv_push(&names, e->d_name), 0);
        closedir(d);
        size_t n = strv_length(names);
        if (n)
                qsort(names, n, sizeof(char *), cmp_str);
        bool verbose = getenv("DETECT_VERBOSE") != NULL;
        int wrong = 0;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, names[i]);
                _cleanup_free_ char *meta_path = strdup_printf("%s/%.*s.meta", dir, (int)(strlen(names[i]) - 4), names[i]);
                _cleanup_free_ char *text = NULL, *meta = NULL;
                size_t len = 0;
                assert_int_equal(read_file_capped(path, 16 << 20, &text, &len), 0);
                char finish[32] = "", cause[32] = "";
                bool known_miss = false;
                if (read_file_capped(meta_path, 4096, &meta, NULL) == 0) {
                        const char *p = strstr(meta, "finish_reason=");
                        if (p)
                                sscanf(p + strlen("finish_reason="), "%31[a-z_]", finish);
                        p = strstr(meta, "expect_cause=");
                        if (p)
                                sscanf(p + strlen("expect_cause="), "%31[a-z_-]", cause);
                        known_miss = strstr(meta, "known_miss=1") != NULL;
                }
                struct detect_input in = {.text = text, .len = len, .finish_reason = *finish ? finish : NULL};
                struct detect_result r;
                assert_int_equal(detect_output(&in, &r), 0);
                bool flagged = r.verdict == VERDICT_GARBAGE;
                bool want = want_garbage && !known_miss;
                bool ok = flagged == want && (!*cause || (r.cause && strcmp(cause, r.cause) == 0));
                if (known_miss && ret_known_miss)
                        (*ret_known_miss)++;
                if (!ok) {
                        wrong++;
                        print_error("%s/%s: got %s %s (%s), want %s %s\n", sub, names[i], flagged ? "garbage" : "pass",
                                    r.cause ? r.cause : "", r.evidence ? r.evidence : "",
                                    want_garbage ? "garbage" : "pass", cause);
                } else if (verbose)
                        print_message("%s/%s: %s %s %s\n", sub, names[i], flagged ? "garbage" : "pass",
                                      r.cause ? r.cause : "", r.evidence ? r.evidence : "");
                if (flagged) {
                        /* Evidence is short and printable. */
                        assert_non_null(r.evidence);
                        for (const char *c = r.evidence; *c; c++)
                                assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
                }
                detect_result_release(&r);
        }
        *ret_total = n;
        return wrong;
}

static void test_corpus_garbage(void **state) {
        size_t n;
        int wrong = run_dir("garbage", true, &n, NULL);
        print_message("garbage: %zu of %zu flagged\n", n - (size_t)wrong, n);
        assert_true(n >= 40);
        assert_int_equal(wrong, 0);
}

static void test_corpus_clean(void **state) {
        size_t n;
        int wrong = run_dir("clean", false, &n, NULL);
        print_message("clean: %zu of %zu passed\n", n - (size_t)wrong, n);
        assert_true(n >= 60);
        assert_int_equal(wrong, 0);
}

static void test_corpus_holdout(void **state) {
        size_t ng, nc, miss = 0;
        int wg = run_dir("holdout/garbage", true, &ng, &miss);
        int wc = run_dir("holdout/clean", false, &nc, NULL);
        print_message("holdout: garbage %zu of %zu flagged (%zu known misses), clean %zu of %zu passed\n",
                      ng - (size_t)wg - miss, ng, miss, nc - (size_t)wc, nc);
        assert_int_equal(wg, 0);
        assert_int_equal(wc, 0);
}

/* Judges a C string; returns the cause, or NULL on pass. Evidence into *ret_ev if asked. */
static const char *judge(const char *text, const char *finish, char **ret_ev) {
        struct detect_input in = {.text = text, .len = text ? strlen(text) : 0, .finish_reason = finish};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        const char *cause = r.cause;
        if (ret_ev)
                *ret_ev = r.evidence ? strdup(r.evidence) : NULL;
        detect_result_release(&r);
        return cause;
}

/* cmocka's string compare does not take NULL: "pass" stands for no cause. */
static void check(const char *text, const char *finish, const char *want) {
        const char *got = judge(text, finish, NULL);
        if (!streq_ptr(got, want))
                fail_msg("'%s' (finish %s): got %s, want %s", text, finish ? finish : "-", got ? got : "pass",
                         want ? want : "pass");
}

static void test_short_repeats_pass(void **state) {
        check("hello hello hello", NULL, NULL);
        check("ha ha ha ha ha ha ha", NULL, NULL);
        check("!!!", NULL, NULL);
        check("Wow!!!", NULL, NULL);
        check("---", NULL, NULL);
        check("323323", NULL, NULL);
        /* Eight repeats of a word pass; sixteen covering the output do not. */
        check("yes yes yes yes yes yes yes yes", NULL, NULL);
        check("yes yes yes yes yes yes yes yes yes yes yes yes yes yes yes yes", NULL, "repeat");
        /* finish_reason "length" lowers the bar: the model never stopped. */
        check("OK OK OK OK OK OK OK OK", NULL, NULL);
        check("OK OK OK OK OK OK OK OK", "length", "repeat");
        check("+++", "length", NULL);
        check("++++", "length", "repeat");
}

static void test_empty(void **state) {
        check(NULL, NULL, "empty");
        check("", "stop", "empty");
        check(" \n\t ", "length", "empty");
        check("\u200b", "length", "empty");
        /* Reasoning present, answer empty, finish "stop": still empty. */
        const char *why = "The user asks for 17 * 19. That is 323.";
        struct detect_input in = {.text = "", .len = 0, .reasoning = why, .reasoning_len = strlen(why),
                                  .finish_reason = "stop"};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_GARBAGE);
        assert_string_equal(r.cause, "empty");
        assert_non_null(strstr(r.evidence, "reasoning"));
        detect_result_release(&r);
}

static void test_reasoning_judged(void **state) {
        _cleanup_free_ char *why = malloc(301);
        assert_non_null(why);
        memset(why, '!', 300);
        why[300] = '\0';
        struct detect_input in = {.text = "323", .len = 3, .reasoning = why, .reasoning_len = 300};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_GARBAGE);
        assert_string_equal(r.cause, "repeat");
        assert_true(startswith(r.evidence, "reasoning: "));
        detect_result_release(&r);
        /* A clean reasoning part and a clean answer pass. */
        const char *ok = "17 * 19 = 17 * 20 - 17 = 340 - 17 = 323. So the answer is 323.";
        in.reasoning = ok;
        in.reasoning_len = strlen(ok);
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        assert_null(r.cause);
        assert_null(r.evidence);
        detect_result_release(&r);
}

static void test_nan_and_http(void **state) {
        double lp[] = {-0.1, -2.5, NAN, -0.3};
        struct detect_input in = {.text = "323", .len = 3, .logprobs = lp, .n_logprobs = 4};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "nan");
        assert_non_null(strstr(r.evidence, "token 2"));
        detect_result_release(&r);

        lp[2] = -INFINITY;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "nan");
        detect_result_release(&r);

        lp[2] = -1.0;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        detect_result_release(&r);

        in = (struct detect_input){.text = "", .http_status = 500,
                                   .error_message = "The model produced output that does not match the expected format"};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "http");
        assert_non_null(strstr(r.evidence, "HTTP 500"));
        detect_result_release(&r);

        /* An error event inside a 200 stream. */
        in = (struct detect_input){.text = "32", .len = 2, .http_status = 200, .error_message = "upstream failed"};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "http");
        detect_result_release(&r);

        in = (struct detect_input){.text = "", .http_status = 500,
                                   .error_message = "probability tensor contains either `inf`, `nan` or element < 0"};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "nan");
        detect_result_release(&r);

        in = (struct detect_input){.text = "", .http_status = 200, .error_message = "Received NaN in logits"};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "nan");
        detect_result_release(&r);

        /* NaN as an answer is an answer. */
        check("NaN", NULL, NULL);
        in = (struct detect_input){.text = "OK", .len = 2, .http_status = 404};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        detect_result_release(&r);
}

static void test_invalid_text(void **state) {
        check("OK\x01", NULL, "invalid-text");
        /* A character cut by the end of the output is forgiven, one cut in the middle is not. */
        check("caf\xc3", NULL, NULL);
        check("caf\xc3 ok", NULL, "invalid-text");
        check("\xed\xa0\x80", NULL, "invalid-text");  /* surrogate */
        check("\xf4\x90\x80\x80", NULL, "invalid-text");  /* > U+10FFFF */
        /* One U+FFFD at the end of an output cut at the limit is forgiven, not otherwise. */
        check("The answer \xef\xbf\xbd", "length", NULL);
        check("The answer \xef\xbf\xbd", "stop", "invalid-text");
        /* One zero-width joiner inside an emoji is fine, three in a row are not. */
        check("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9", NULL, NULL);
        check("a\xe2\x80\x8b\xe2\x80\x8b\xe2\x80\x8b" "b", NULL, "invalid-text");
        /* Portuguese capitals are not mojibake. */
        check("S\xc3\x83O PAULO", NULL, NULL);
        check("S\xc3\x83\xc2\xa3o Paulo", NULL, "invalid-text");
}

static void test_excerpt(void **state) {
        _cleanup_free_ char *a = detect_excerpt("a\nb\tc\x01\xff" "d\\", 9, 0, 120);
        assert_string_equal(a, "a\\nb\\tc\\x01\\xFFd\\\\");
        /* Cut around the spot, marked with "...", never more than max bytes of text. */
        char big[1000];
        memset(big, 'x', sizeof big);
        memcpy(big + 500, "HERE", 4);
        _cleanup_free_ char *b = detect_excerpt(big, sizeof big, 500, 120);
        assert_true(startswith(b, "..."));
        assert_true(endswith(b, "..."));
        assert_non_null(strstr(b, "HERE"));
        assert_true(strlen(b) <= 120 + 6);
        /* Multibyte characters are never split. */
        _cleanup_free_ char *c = detect_excerpt("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 9, 4, 3);
        assert_string_equal(c, "...\xe6\x96\x87...");
        /* Invisible and reordering characters are shown, not obeyed. */
        _cleanup_free_ char *d = detect_excerpt("a\xe2\x80\xae" "b", 5, 0, 120);
        assert_string_equal(d, "a\\u202Eb");
        _cleanup_free_ char *e = detect_excerpt("", 0, 0, 120);
        assert_string_equal(e, "");
        _cleanup_free_ char *f = detect_escape("x\ny", 3);
        assert_string_equal(f, "x\\ny");
}

static void test_evidence_points_at_problem(void **state) {
        _cleanup_free_ char *ev = NULL;
        char text[600];
        snprintf(text, sizeof text, "%s", "A perfectly reasonable start about matrices and GPUs. ");
        size_t n = strlen(text);
        for (int i = 0; i < 60; i++, n += 4)
                memcpy(text + n, "\n\n</", 4);
        text[n] = '\0';
        assert_string_equal(judge(text, NULL, &ev), "loop");
        assert_non_null(strstr(ev, "\\n\\n</"));
        assert_non_null(strstr(ev, "repeated 60 times"));
        /* The excerpt is escaped and short. */
        assert_null(strchr(ev, '\n'));
        assert_true(strlen(ev) < 220);
}

static void test_long_input(void **state) {
        /* A 3 MiB clean-looking text ending in a degenerate run: judged by its ends. */
        size_t n = (size_t)3 << 20;
        _cleanup_free_ char *t = malloc(n + 1);
        assert_non_null(t);
        static const char *const words[] = {"the", "server", "answered", "17", "times", "19", "with",
                                             "a", "number", "and", "then", "stopped", "quickly", "GPU",
                                             "kernel", "backend", "checks", "passed", "model", "tokens"};
        uint64_t x = 42;
        size_t i = 0;
        while (i < n) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                const char *w = words[(x >> 33) % ELEMENTSOF(words)];
                size_t wl = strlen(w);
                for (size_t k = 0; k < wl && i < n; k++)
                        t[i++] = w[k];
                if (i < n)
                        t[i++] = ((x >> 20) % 9 == 0) ? '\n' : ' ';
        }
        memset(t + n - 500, '!', 500);
        t[n] = '\0';
        _cleanup_free_ char *ev = NULL;
        usec_t start = now_usec();
        assert_string_equal(judge(t, NULL, &ev), "repeat");
        usec_t took = now_usec() - start;
        print_message("3 MiB judged in %.0f ms\n", (double)took / 1000.0);
        assert_true(took < 20 * USEC_PER_SEC);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_corpus_garbage),
                cmocka_unit_test(test_corpus_clean),
                cmocka_unit_test(test_corpus_holdout),
                cmocka_unit_test(test_short_repeats_pass),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_reasoning_judged),
                cmocka_unit_test(test_nan_and_http),
                cmocka_unit_test(test_invalid_text),
                cmocka_unit_test(test_excerpt),
                cmocka_unit_test(test_evidence_points_at_problem),
                cmocka_unit_test(test_long_input),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
