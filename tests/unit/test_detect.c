/* test_detect.c -- the garbage detectors: the corpus as data, then edge cases by hand.
 *
 * tests/corpus/{garbage,clean}/NAME.txt is one output each; NAME.meta may say
 * `finish_reason=length`, `expect_cause=loop` and `question=` (what was asked; a collected
 * file's question is the messages of its `request=` line). Every garbage file must be flagged (with
 * the cause when given) and every clean file must pass; a failure names the file.
 * tests/corpus/holdout/ is scored the same way, and so are tests/corpus/engine/ and
 * holdout/engine/ (real engine outputs, with NAME.reasoning for a reasoning part and
 * `completion_tokens=` from the server's usage). A file marked `known_miss=1` is garbage the
 * detectors do not catch yet (docs/detectors.md): it must still pass, so that catching it
 * one day shows up here. DETECT_VERBOSE=1 prints every verdict.
 * tests/corpus/forced/ holds honest answers forced past their end (the bench's ignore_eos):
 * judged with detect_input.forced, none may be flagged; the garbage files whose meta says
 * `expect_forced=garbage` must be flagged with forced too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate/detect.h"
#include "base/util.h"
#include "../corpus-meta.h"

static const char *srcdir(void) {
        const char *s = getenv("SRCDIR");
        return s && *s ? s : ".";
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The value of "key=" at the start of a line of meta, into buf (empty when absent). */
static void meta_get(const char *meta, const char *key, char *buf, size_t size) {
        size_t kl = strlen(key);
        buf[0] = '\0';
        for (const char *p = meta; p && *p;) {
                if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
                        size_t n = strcspn(p + kl + 1, "\n");
                        if (n >= size)
                                n = size - 1;
                        memcpy(buf, p + kl + 1, n);
                        buf[n] = '\0';
                        return;
                }
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
}


/* Runs every NAME.txt under dir (with NAME.reasoning as the reasoning part when there is
 * one); returns the number of files judged wrongly. forced: judged with the forced subset,
 * and for garbage only the files marked expect_forced=garbage (the others are not counted). */
static int run_dir_forced(const char *sub, bool want_garbage, bool forced, size_t *ret_total,
                          size_t *ret_known_miss) {
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
        size_t judged = 0;
        for (size_t i = 0; i < n; i++) {
                int stem = (int)(strlen(names[i]) - 4);
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, names[i]);
                _cleanup_free_ char *meta_path = strdup_printf("%s/%.*s.meta", dir, stem, names[i]);
                _cleanup_free_ char *why_path = strdup_printf("%s/%.*s.reasoning", dir, stem, names[i]);
                _cleanup_free_ char *text = NULL, *meta = NULL, *why = NULL;
                size_t len = 0, why_len = 0;
                assert_int_equal(read_file_capped(path, 16 << 20, &text, &len), 0);
                char finish[32], cause[32], miss[8], tokens[24], expect_forced[16];
                if (read_file_capped(meta_path, 1 << 16, &meta, NULL) < 0)
                        meta = NULL;
                meta_get(meta, "expect_forced", expect_forced, sizeof expect_forced);
                if (forced && want_garbage && strcmp(expect_forced, "garbage") != 0)
                        continue;
                judged++;
                if (forced)
                        cause[0] = '\0';
                meta_get(meta, "finish_reason", finish, sizeof finish);
                if (!forced)
                        meta_get(meta, "expect_cause", cause, sizeof cause);
                meta_get(meta, "known_miss", miss, sizeof miss);
                meta_get(meta, "completion_tokens", tokens, sizeof tokens);
                bool known_miss = strcmp(miss, "1") == 0;
                if (read_file_capped(why_path, 16 << 20, &why, &why_len) < 0)
                        why = NULL;
                _cleanup_free_ char *question = meta_question(meta);
                struct detect_input in = {.text = text, .len = len, .reasoning = why, .reasoning_len = why_len,
                                          .completion_tokens = strtoll(tokens, NULL, 10),
                                          .finish_reason = *finish ? finish : NULL, .question = question,
                                          .question_len = question ? strlen(question) : 0, .forced = forced};
                struct detect_result r;
                assert_int_equal(detect_output(&in, &r), 0);
                bool flagged = r.verdict == VERDICT_GARBAGE;
                bool want = want_garbage && !known_miss;
                bool ok = flagged == want && (!*cause || (r.cause && strcmp(cause, r.cause) == 0));
                if (known_miss && ret_known_miss)
                        (*ret_known_miss)++;
                if (!ok) {
                        wrong++;
                        print_error("%s/%s%s: got %s %s (%s), want %s %s\n", sub, names[i], forced ? " (forced)" : "",
                                    flagged ? "garbage" : "pass",
                                    r.cause ? r.cause : "", r.evidence ? r.evidence : "",
                                    want ? "garbage" : "pass", cause);
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
        *ret_total = judged;
        return wrong;
}

static int run_dir(const char *sub, bool want_garbage, size_t *ret_total, size_t *ret_known_miss) {
        return run_dir_forced(sub, want_garbage, false, ret_total, ret_known_miss);
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

/* Outputs of a real engine, collected by tools/collect-corpus.py (docs/detectors.md): the
 * collected garbage the detectors miss today is marked known_miss=1 by
 * `corpus-figures --mark-misses`, so a miss here is a regression. */
static void test_corpus_engine(void **state) {
        size_t ng, nc, miss = 0;
        int wg = run_dir("engine/garbage", true, &ng, &miss);
        int wc = run_dir("engine/clean", false, &nc, NULL);
        print_message("engine: garbage %zu of %zu flagged (%zu known misses), clean %zu of %zu passed\n",
                      ng - (size_t)wg - miss, ng, miss, nc - (size_t)wc, nc);
        assert_true(ng >= 400);
        assert_true(nc >= 20);
        assert_int_equal(wg, 0);
        assert_int_equal(wc, 0);
}

static void test_corpus_holdout(void **state) {
        size_t ng, nc, eg, ec, miss = 0, emiss = 0;
        int wg = run_dir("holdout/garbage", true, &ng, &miss);
        int wc = run_dir("holdout/clean", false, &nc, NULL);
        int weg = run_dir("holdout/engine/garbage", true, &eg, &emiss);
        int wec = run_dir("holdout/engine/clean", false, &ec, NULL);
        print_message("holdout: garbage %zu of %zu flagged (%zu known misses), clean %zu of %zu passed\n",
                      ng - (size_t)wg - miss, ng, miss, nc - (size_t)wc, nc);
        print_message("holdout engine: garbage %zu of %zu flagged (%zu known misses), clean %zu of %zu passed\n",
                      eg - (size_t)weg - emiss, eg, emiss, ec - (size_t)wec, ec);
        /* The held-back part never shrinks (docs/detectors.md). */
        assert_true(ng >= 26 && nc >= 76 && eg >= 446 && ec >= 15);
        assert_int_equal(wg, 0);
        assert_int_equal(wc, 0);
        assert_int_equal(weg, 0);
        assert_int_equal(wec, 0);
}

/* The forced subset on the corpus: the honest forced continuations of tests/corpus/forced/
 * all pass, and the field garbage marked expect_forced=garbage (runs of one punctuation
 * character, U+FFFD, salad, garbled CJK) is still caught. */
static void test_corpus_forced(void **state) {
        size_t nc, ng, nh;
        int wc = run_dir_forced("forced", false, true, &nc, NULL);
        int wg = run_dir_forced("garbage", true, true, &ng, NULL);
        int wh = run_dir_forced("holdout/garbage", true, true, &nh, NULL);
        print_message("forced: honest continuations %zu of %zu passed; field garbage %zu of %zu flagged, held back "
                      "%zu of %zu\n", nc - (size_t)wc, nc, ng - (size_t)wg, ng, nh - (size_t)wh, nh);
        assert_true(nc >= 25 && ng >= 14 && nh >= 7);
        assert_int_equal(wc, 0);
        assert_int_equal(wg, 0);
        assert_int_equal(wh, 0);
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

/* An output that is one unit over and over and was cut at the token limit: a handful is
 * enough. Stopped by the model, the same output is an answer ("say it five times"). */
static void test_whole_output_cut(void **state) {
        check("v\xc3\xbdstup v\xc3\xbdstup v\xc3\xbdstup v\xc3\xbdstup", "length", "repeat");
        check("v\xc3\xbdstup v\xc3\xbdstup v\xc3\xbdstup v\xc3\xbdstup", "stop", NULL);
        check("ha ha ha", "length", NULL);
        check("44444444", "length", "repeat");
        check("4444", "length", NULL);
        check("1 2 3 4 5 6 7 8 9 10 11 12", "length", NULL);
        /* Asked for twelve, a model says it twelve times and stops. */
        check("test test test test test test test test test test test test", "stop", NULL);
        check("test test test test test test test test test test test test test test test test", "stop", "repeat");
}

/* Short loops (issue 24 item 10): a short unit repeated to the end, glued ("achtacht...")
 * or cut from the word before it ("inhabitants ants ants..."), fires at six repeats even
 * when the model stopped; five pass. */
static void test_short_loops(void **state) {
        check("achtachtachtachtachtachtachtacht", NULL, "loop");
        check("undundundundundund", "stop", "loop");
        check("undundundundund", "stop", NULL);
        check("Undundundundundund", "stop", "loop");
        check("Das Ergebnis ist dreiundzwanzigzigzigzigzigzigzig", "stop", "loop");
        check("The total is 42 2 2 2 2 2 2", "stop", "repeat");
        check("The total is 42 2 2 2 2", "stop", NULL);
        check("17 x 23 = 391, 1, 1, 1, 1, 1, 1, 1", "stop", "repeat");
        check("The capital is London ndon ndon ndon ndon ndon ndon", "stop", "repeat");
        check("Paris has about two million inhabitants ants ants ants ants ants ants ants", "stop", "repeat");
        check("La respuesta es veintitr\xc3\xa9s, tr\xc3\xa9s, tr\xc3\xa9s, tr\xc3\xa9s, tr\xc3\xa9s, tr\xc3\xa9s",
              "stop", "repeat");
        /* 二十三 x 6, 니다 x 6, है x 6: syllabic scripts need two code points. */
        check("\xe7\xad\x94\xe6\xa1\x88\xe6\x98\xaf\xe4\xb8\x89\xe7\x99\xbe"
              "\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89"
              "\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89\xe4\xba\x8c\xe5\x8d\x81\xe4\xb8\x89",
              "stop", "loop");
        check("\xec\xa0\x95\xeb\x8b\xb5\xec\x9d\x80 323\xec\x9e\x85"
              "\xeb\x8b\x88\xeb\x8b\xa4\xeb\x8b\x88\xeb\x8b\xa4\xeb\x8b\x88\xeb\x8b\xa4"
              "\xeb\x8b\x88\xeb\x8b\xa4\xeb\x8b\x88\xeb\x8b\xa4\xeb\x8b\x88\xeb\x8b\xa4",
              "stop", "loop");
        check("\xe0\xa4\x89\xe0\xa4\xa4\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa4\xb0 "
              "\xe0\xa4\xb9\xe0\xa5\x88\xe0\xa4\xb9\xe0\xa5\x88\xe0\xa4\xb9\xe0\xa5\x88"
              "\xe0\xa4\xb9\xe0\xa5\x88\xe0\xa4\xb9\xe0\xa5\x88\xe0\xa4\xb9\xe0\xa5\x88",
              "stop", "loop");
        _cleanup_free_ char *ev = NULL;
        assert_string_equal(judge("Paris has two million inhabitants ants ants ants ants ants ants", NULL, &ev),
                            "repeat");
        assert_non_null(strstr(ev, "short unit 'ants '"));
        assert_non_null(strstr(ev, "inhabitants"));
}

/* What looks like a short loop and is an answer. */
static void test_short_loop_guards(void **state) {
        /* Counting, and a word said N times (also after a preamble): not cut from a word. */
        check("1 2 3 4 5 6 7 8 9 10 11 12", "stop", NULL);
        check("10 9 8 7 6 5 4 3 2 1 0", "stop", NULL);
        check("Ones: 1 1 1 1 1 1 1 1 1", "stop", NULL);
        check("hello hello hello hello hello hello hello hello", "stop", NULL);
        check("Sure! hello hello hello hello hello hello hello hello", "stop", NULL);
        check("It was a long, long, long, long, long, long, long way", "stop", NULL);
        /* Laughter and songs. */
        check("hahahahahahahahahahaha", "stop", NULL);
        check("Bwahahahahahahahahaha", "stop", NULL);
        check("Mwahaha ha ha ha ha ha ha ha", "stop", NULL);
        check("huehuehuehuehuehuehuehue", "stop", NULL);
        check("Jajajajajajajajaja", "stop", NULL);
        check("Tra-la-la-la-la-la-la-la-la", "stop", NULL);
        check("\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2"
              "\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2",
              "stop", NULL);
        check("\xe0\xa4\xb9\xe0\xa4\xbe\xe0\xa4\xb9\xe0\xa4\xbe\xe0\xa4\xb9\xe0\xa4\xbe\xe0\xa4\xb9\xe0\xa4\xbe"
              "\xe0\xa4\xb9\xe0\xa4\xbe\xe0\xa4\xb9\xe0\xa4\xbe\xe0\xa4\xb9\xe0\xa4\xbe",
              "stop", NULL);
        check("wkwkwkwkwkwkwkwkwkwk", "stop", NULL);
        /* Ellipses, ASCII art, code, tables. */
        check("Hmm... hmm... hmm... hmm... hmm... hmm... hmm...", "stop", NULL);
        check("XOXOXOXOXOXOXOXOXOXO", "stop", NULL);
        check("Welcome!\noOoOoOoOoOoOoOoOoOoO", "stop", NULL);
        check("=-=-=-=-=-=-=-=-=-=-", "stop", NULL);
        check("QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB", "stop", NULL);
        check("abababababababab", "stop", NULL);
        check("abcabcabcabcabcabcabcabc", "stop", NULL);
        check("acgtacgtacgtacgtacgtacgtacgt", "stop", NULL);
        check("CACACACACACACACACACACACA", "stop", NULL);
        check("| 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |", "stop", NULL);
        check("if (x) {\n  if (y) {\n    z();\n  }\n}\n}}}}}}", "stop", NULL);
        /* Digits: repeating decimals, binary, grouped thousands, zero vectors. */
        check("1/7 = 0.142857142857142857142857142857142857142857", "stop", NULL);
        check("11010101010101010101", "stop", NULL);
        check("10^24 = 1 000 000 000 000 000 000 000 000", "stop", NULL);
        check("10, 0, 0, 0, 0, 0, 0, 0, 0, 0", "stop", NULL);
        /* Onomatopoeia a handful of times. */
        check("blahblahblahblahblah", "stop", NULL);
}

/* The same, with the question the checks pass: a whole answer of one short word said six
 * times or more is garbage unless the question names the word or the count. */
static void check_q(const char *text, const char *question, const char *want) {
        struct detect_input in = {.text = text, .len = strlen(text), .finish_reason = "stop",
                                  .question = question, .question_len = question ? strlen(question) : 0};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        if (!streq_ptr(r.cause, want))
                fail_msg("'%s' (question '%s'): got %s, want %s", text, question ? question : "-",
                         r.cause ? r.cause : "pass", want ? want : "pass");
        detect_result_release(&r);
}

static void test_short_loop_unasked(void **state) {
        /* Word fragments and words the question does not ask for. */
        check_q("ndon ndon ndon ndon ndon ndon ndon ndon", "What is the capital of the UK?", "repeat");
        check_q("tion tion tion tion tion tion tion tion tion tion", "What is the opposite of addition?", "repeat");
        check_q("tion, tion, tion, tion, tion, tion", "What is 17 * 19?", "repeat");
        check_q(" sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r sat\xc4\xb1r",
                "Reply with exactly: OK", "repeat");
        check_q("hello hello hello hello hello hello", "What is the capital of the UK?", "repeat");
        check_q("NDON NDON NDON NDON NDON NDON", "What is the capital of the UK?", "repeat");
        /* 物件 x 6 spaced: a syllabic word of two code points. */
        check_q("\xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 "
                "\xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6",
                "What is 17 * 19?", "repeat");
        /* Two letters are a word too (the engine corpus has Vietnamese "mà" x 9 and Persian
         * "نه" x 6); so an emphatic "no" x 8 that the question does not ask for is flagged. */
        check_q("\xe5\x8d\x97 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0 m\xc3\xa0",
                "What is 17 * 19?", "repeat");
        check_q("\xd9\x86\xd9\x87 \xd9\x86\xd9\x87 \xd9\x86\xd9\x87 \xd9\x86\xd9\x87 \xd9\x86\xd9\x87 \xd9\x86\xd9\x87",
                "What is 17 * 19?", "repeat");
        check_q("no no no no no no no no", "Do you like Mondays?", "repeat");
        /* Five repeats pass; sixteen are caught without the question (the whole-output limit). */
        check_q("ndon ndon ndon ndon ndon", "What is the capital of the UK?", NULL);
        /* A stray token before the run: 90 % of the answer is enough (the engine corpus has
         * "ル মালায় মালায় ..."). */
        check_q("\xe3\x83\xab ndon ndon ndon ndon ndon ndon ndon ndon ndon", "Reply with exactly: OK", "repeat");
        check_q("Sure! ndon ndon ndon ndon ndon ndon ndon ndon ndon ndon", "What is the capital of the UK?", "repeat");
        /* The question's word only as a part of a longer word does not name it. */
        check_q("ndon ndon ndon ndon ndon ndon", "Where is London?", "repeat");
        struct detect_input in = {.text = "tion tion tion tion tion tion tion", .len = 34, .question = "Hi",
                                  .question_len = 2};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_non_null(r.evidence);
        assert_non_null(strstr(r.evidence, "short unit 'tion ' (the whole answer; the question names neither"));
        assert_non_null(strstr(r.evidence, "repeated 7 times"));
        detect_result_release(&r);
}

/* What the question asked for, and the shapes the rule leaves alone. */
static void test_short_loop_unasked_guards(void **state) {
        /* Without the question: "say it N times" as far as the text can tell. */
        check_q("ndon ndon ndon ndon ndon ndon ndon ndon", NULL, NULL);
        /* The word named, in any case, quoted, in a syllabic script unspaced. */
        check_q("hello hello hello hello hello hello hello hello", "Say hello 8 times", NULL);
        check_q("HELLO HELLO HELLO HELLO HELLO HELLO", "Repeat the word 'Hello' six times.", NULL);
        check_q("Hello Hello Hello Hello Hello Hello Hello", "say \"hello\" a few times", NULL);
        check_q("test test test test test test test test test test test test", "Repeat the word test 12 times.", NULL);
        check_q("\xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 "
                "\xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6 \xe7\x89\xa9\xe4\xbb\xb6",
                "\xe8\xaf\xb7\xe8\xaf\xb4\xe7\x89\xa9\xe4\xbb\xb6\xe5\x85\xad\xe6\xac\xa1", NULL);
        /* The count named: digits or an English number word, or a dozen. */
        check_q("Hello Hello Hello Hello Hello Hello", "Greet me six times", NULL);
        check_q("hola hola hola hola hola hola hola hola hola hola", "Say hello in Spanish 10 times", NULL);
        check_q("meow meow meow meow meow meow meow meow meow meow meow meow", "Meow a dozen times", NULL);
        check_q("woof woof woof woof woof woof woof", "What does a dog say? Say it 7 times.", NULL);
        /* A count inside a longer number or a decimal is not one. */
        check_q("woof woof woof woof woof woof woof", "What is 3.7 plus 170?", "repeat");
        /* Laughter, one letter, digits, DNA, alphabet runs, counting, other characters. */
        check_q("no no no no no no", "Say no six times", NULL);
        check_q("ok ok ok ok ok ok ok", "Reply with exactly: OK", NULL);
        check_q("ha ha ha ha ha ha ha ha", "Tell me a joke.", NULL);
        check_q("lol lol lol lol lol lol", "Tell me a joke.", NULL);
        check_q("a a a a a a a a", "What is 17 * 19?", NULL);
        check_q("7 7 7 7 7 7 7 7", "Write the number seven eight times.", NULL);
        check_q("2 2 2 2 2 2 2", "What is 17 * 19?", NULL);
        check_q("acgt acgt acgt acgt acgt acgt", "Write a DNA repeat.", NULL);
        check_q("abc abc abc abc abc abc", "What comes next?", NULL);
        check_q("1 2 3 4 5 6 7 8 9 10", "Count to ten.", NULL);
        check_q("hmm... hmm... hmm... hmm... hmm... hmm...", "What do you think?", NULL);
        check_q("| x | x | x | x | x | x | x |", "Draw a row.", NULL);
        /* Not the whole answer (under 90 % of it), or anything after the last copy. */
        check_q("The rain came, and the leaves fell down, down, down, down, down, down", "Write a line about autumn.",
                NULL);
        check_q("Well, ndon ndon ndon ndon ndon ndon ndon", "What is the capital of the UK?", NULL);
        check_q("ndon ndon ndon ndon ndon ndon ndon.", "What is the capital of the UK?", NULL);
}

static void test_special_token_names(void **state) {
        check("<unk><unk><unk>", NULL, "repeat");
        check("<|im_end|><|im_end|>", NULL, "repeat");
        check("The answer is 323.<|im_end|><|im_end|><|im_end|>", NULL, "repeat");
        check("[control_47][control_47][control_47][control_47]", "length", "repeat");
        /* HTML and ChatML written on purpose pass. */
        check("Use <br> for a line break: one<br>two<br><br>three", NULL, NULL);
        check("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>", NULL, NULL);
        check("int a[4][4][4]; a[0][0][0] = 1;", NULL, NULL);
        _cleanup_free_ char *ev = NULL;
        assert_string_equal(judge("323<unk><unk><unk><unk><unk><unk><unk>", NULL, &ev), "repeat");
        assert_non_null(strstr(ev, "special-token name '<unk>'"));
}

static void test_reasoning_end_in_answer(void **state) {
        check("OK.</think>OK OK.</think>OK OK.</think>OK", NULL, "loop");
        check("2112</think>2112762</think>12226</think>826666206", "length", "loop");
        check("The parser moves everything up to </think> into reasoning_content; the text after </think> "
              "is the answer, and a second </think> is kept.", NULL, NULL);
        check("<think>17 * 19 = 323</think>323", NULL, NULL);
}

/* Tokens that print as nothing: the usage count says what the text does not show. */
static void test_hidden_tokens(void **state) {
        struct detect_input in = {.text = " los", .len = 4, .finish_reason = "length", .completion_tokens = 64};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        assert_string_equal(r.cause, "low-information");
        assert_non_null(strstr(r.evidence, "64 tokens"));
        detect_result_release(&r);
        /* The model stopped by itself (a hidden reasoning part counts as tokens too). */
        in.finish_reason = "stop";
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        detect_result_release(&r);
        /* No usage from the server, or a byte a token: nothing to say. */
        in = (struct detect_input){.text = " los", .len = 4, .finish_reason = "length"};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        detect_result_release(&r);
        const char *why = "17 * 19 = 17 * 20 - 17 = 340 - 17 = 323, so the answer is 323 and I am sure.";
        in = (struct detect_input){.text = "323", .len = 3, .reasoning = why, .reasoning_len = strlen(why),
                                   .finish_reason = "length", .completion_tokens = 40};
        assert_int_equal(detect_output(&in, &r), 0);
        assert_int_equal(r.verdict, VERDICT_PASS);
        detect_result_release(&r);
}

static void test_multilingual_prose_passes(void **state) {
        check("The word for cat is \xd0\xba\xd0\xbe\xd1\x88\xd0\xba\xd0\xb0 in Russian, "
              "\xce\xb3\xce\xac\xcf\x84\xce\xb1 in Greek, \xe7\x8c\xab in Japanese and "
              "\xea\xb3\xa0\xec\x96\x91\xec\x9d\xb4 in Korean.", NULL, NULL);
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

/* Judges text forced past its end (the bench's ignore_eos): returns the cause or NULL. */
static const char *judge_forced(const char *text, int64_t completion_tokens) {
        struct detect_input in = {.text = text, .len = strlen(text), .finish_reason = "length",
                                  .completion_tokens = completion_tokens, .forced = true};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        const char *cause = r.cause;
        detect_result_release(&r);
        return cause;
}

static char *repeat_str(const char *head, const char *unit, size_t n) {
        size_t hl = strlen(head), ul = strlen(unit);
        char *s = malloc(hl + ul * n + 1);
        assert_non_null(s);
        memcpy(s, head, hl);
        for (size_t i = 0; i < n; i++)
                memcpy(s + hl + i * ul, unit, ul);
        s[hl + ul * n] = '\0';
        return s;
}

/* Item 2 of issue 31: the forced subset keeps catching runs of one character, U+FFFD soup
 * and salad, and lets honest forced continuations (an answer, then the same sentence, the
 * count, the table row or the code line over and over) pass; the same honest outputs without
 * the flag are flagged, so the flag is what lets them through. */
static void test_forced_subset(void **state) {
        _cleanup_free_ char *bangs = repeat_str("", "!", 64);
        _cleanup_free_ char *plus = repeat_str("", "+", 128);
        _cleanup_free_ char *hashes = repeat_str("", "#", 96);
        _cleanup_free_ char *answer_bangs = repeat_str("The answer is 323", "!", 40);
        _cleanup_free_ char *fffd = repeat_str("The ", "\xef\xbf\xbd\xef\xbf\xbd answer ", 12);
        assert_string_equal(judge_forced(bangs, 64), "repeat");
        assert_string_equal(judge_forced(plus, 128), "repeat");
        assert_string_equal(judge_forced(hashes, 12), "repeat");
        assert_string_equal(judge_forced(answer_bangs, 40), "repeat");
        assert_string_equal(judge_forced("!!!!", 4), "repeat");
        assert_string_equal(judge_forced("++++", 4), "repeat");
        assert_string_equal(judge_forced(fffd, 60), "invalid-text");
        assert_string_equal(judge_forced("MethodInfoyageegebensatunya am\xc3\xa4t\xc3\xb6\xc3\xb6ri ilmektedirToplam "
                                         "\xd0\xb2\xd0\xbe\xd0\xbf\xd1\x80\xd0\xbe\xd1\x81_FRAMEBUFFER sebelumnya", 32),
                            "low-information");
        assert_string_equal(judge_forced("OK\x01\x02\x03\x04\x05\x06\x07\x08", 10), "invalid-text");
        struct detect_input nan_in = {.text = "OK", .len = 2, .forced = true, .logprobs = (const double[]){NAN},
                                      .n_logprobs = 1};
        struct detect_result r;
        assert_int_equal(detect_output(&nan_in, &r), 0);
        assert_string_equal(r.cause, "nan");
        detect_result_release(&r);
        struct detect_input http_in = {.text = "", .http_status = 500, .forced = true};
        assert_int_equal(detect_output(&http_in, &r), 0);
        assert_string_equal(r.cause, "http");
        detect_result_release(&r);

        _cleanup_free_ char *sentence = repeat_str("The capital of France is Paris.", "\n\nThe capital of France is Paris.", 24);
        _cleanup_free_ char *count = repeat_str("1 2 3 4 5 6 7 8 9 10", "\n1 2 3 4 5 6 7 8 9 10", 30);
        _cleanup_free_ char *row = repeat_str("| Day | Start |\n| --- | --- |\n| Monday | 09:00 |", "\n| Friday | 09:00 |", 30);
        _cleanup_free_ char *code = repeat_str("def reset(regs):\n    regs[0] = 0\n", "    regs[1] = 0\n", 40);
        _cleanup_free_ char *pad = repeat_str("OK", "\n", 300);
        _cleanup_free_ char *turn = repeat_str("323.", "</think>323.", 20);
        const char *honest[] = {sentence, count, row, code, pad, turn};
        for (size_t i = 0; i < ELEMENTSOF(honest); i++) {
                const char *got = judge_forced(honest[i], 256);
                if (got)
                        fail_msg("honest forced continuation %zu flagged %s", i, got);
        }
        /* Hidden tokens and a blank answer are no sign when the model may not stop. */
        assert_null(judge_forced("Sure.", 256));
        assert_null(judge_forced("", 256));
        /* Without the flag the same outputs are garbage: the flag is what lets them pass. */
        assert_non_null(judge(sentence, "length", NULL));
        assert_non_null(judge(count, "length", NULL));
        assert_non_null(judge(row, "length", NULL));
        assert_non_null(judge(code, "length", NULL));
        assert_non_null(judge(turn, "length", NULL));
}

/* Table fragments (llama.cpp #23693): a couple of cells in ragged rows, no header rule. A
 * table with a header rule, rows of one width or more than three different cells passes. */
static void test_table_fragments(void **state) {
        check("C# | C# |\nC32 | C# | C# |\nC# | C32 |\nC# | C# | C# | C32\nC32 | C# |\nC# | C# |", NULL, "loop");
        check("C# | C# |\nC32 | C# | C# |\nC# | C32 |", NULL, NULL);  /* 3 rows: too few */
        check("| Team | A | B |\n| --- | --- | --- |\n| x | C# | C# |\n| y | C# | C# |\n| z | C# | C# |\n"
              "| w | C# |", NULL, NULL);
        check("| X | O | X | O |\n| O | X | O | X |\n| X | X | O | O |\n| O | O | X | X |", NULL, NULL);
        check("yes | no\nyes | no | maybe\nyes\n| yes | no | yes | no |\nno | yes", NULL, NULL);  /* 11 cells */
        check("yes | no\nyes | no | maybe\nyes\n| yes | no | yes | no |\nno | no | yes", NULL, "loop");  /* 12 */
        check("a | b\na | b | c\na\n| a | b | a | b |\nb | a | c\nd | a", NULL, NULL);  /* 4 different cells */
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

/* Forced continuations (detect_input.forced, the bench's outputs): only runs of one
 * character, invalid text and NaN fire; a model that loops honestly past its end does not. */
static const char *judge_forced_text(const char *text) {
        struct detect_input in = {.text = text, .len = strlen(text), .forced = true, .finish_reason = "length"};
        struct detect_result r;
        assert_int_equal(detect_output(&in, &r), 0);
        const char *cause = r.cause;
        detect_result_release(&r);
        return cause;
}

static void test_forced(void **state) {
        (void)state;
        /* the seed's garbage and the field's: a run of one punctuation mark */
        assert_string_equal(judge_forced_text("The answer is!!!!!!!!!!!!!!!!!!!!"), "repeat");
        assert_string_equal(judge_forced_text("++++++++++++++++"), "repeat");
        assert_string_equal(judge_forced_text("a S componentes_obs Worce!!!!!!!!!!!!!!!!"), "repeat");
        /* 15 in the middle of text are below the limit that applies anywhere (16) */
        assert_null(judge_forced_text("wow!!!!!!!!!!!!!!! said the man, and he went on along the road to the town."));
        /* text heavy with replacement or control characters, or bytes that are not UTF-8 */
        assert_string_equal(judge_forced_text("a \xEF\xBF\xBD\xEF\xBF\xBD b \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD c "
                                         "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD d e"), "invalid-text");
        assert_string_equal(judge_forced_text("\xff\xfe\x10\x11 \xff\xfe\x01\x02 ok"), "invalid-text");
        /* a stray one, as the testbed's model forced past its end emits (seen: "0\x10 9 n had
         * had", "0 *e = 00\xEF\xBF\xBD 0 n te ce 10 w ce OK"): not garbage */
        assert_null(judge_forced_text("0\x10 9 n had had had had had had h"));
        assert_null(judge_forced_text("0 *e = 00\xEF\xBF\xBD 0 n te ce 10 w ce OK"));
        assert_null(judge_forced_text("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                                 "\xEF\xBF\xBD and then a long stretch of ordinary words follows here"));
        /* NaN in the text as an engine prints it */
        struct detect_input nan_in = {.text = "ok", .len = 2, .forced = true,
                                      .logprobs = (const double[]){-0.5, NAN}, .n_logprobs = 2};
        struct detect_result nan_r;
        assert_int_equal(detect_output(&nan_in, &nan_r), 0);
        assert_string_equal(nan_r.cause, "nan");
        detect_result_release(&nan_r);
        /* an honest continuation that loops past its natural end: the full detectors call it
         * a loop, the forced ones do not */
        char honest[2048] = "";
        for (int i = 0; i < 12; i++)
                strcat(honest, "The cat sat on the mat and looked at the door. ");
        assert_non_null(judge(honest, "length", NULL));
        assert_null(judge_forced_text(honest));
        /* a stutter on one letter (the testbed's reference backend, forced through a
         * completion), a Markdown rule, a table, digits of a long number: never flagged */
        assert_null(judge_forced_text("OOOOOOOOOOOOOOOK.    OK OOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOOK."));
        assert_string_equal(judge_forced_text("(((((((((((((((((((((((((("), "repeat");
        assert_null(judge_forced_text("| a | b |\n|---|---|\n| 1 | 2 |\n------------------------------------------\n"));
        assert_null(judge_forced_text("2^100 = 1267650600228229401496703205376, and 10^40 = 10000000000000000000000000000000000000000"));
        /* the same text with the full detectors: still caught */
        assert_string_equal(judge("++++++++++++++++", "length", NULL), "repeat");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_corpus_garbage),
                cmocka_unit_test(test_forced),
                cmocka_unit_test(test_corpus_clean),
                cmocka_unit_test(test_corpus_engine),
                cmocka_unit_test(test_corpus_holdout),
                cmocka_unit_test(test_corpus_forced),
                cmocka_unit_test(test_forced_subset),
                cmocka_unit_test(test_table_fragments),
                cmocka_unit_test(test_short_repeats_pass),
                cmocka_unit_test(test_whole_output_cut),
                cmocka_unit_test(test_short_loops),
                cmocka_unit_test(test_short_loop_guards),
                cmocka_unit_test(test_short_loop_unasked),
                cmocka_unit_test(test_short_loop_unasked_guards),
                cmocka_unit_test(test_special_token_names),
                cmocka_unit_test(test_reasoning_end_in_answer),
                cmocka_unit_test(test_hidden_tokens),
                cmocka_unit_test(test_multilingual_prose_passes),
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
