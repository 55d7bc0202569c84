/* test_eval.c -- the eval: the statistics against known values, the built-in questions
 * against their own answers, JSONL files and their errors, the subset, the differential,
 * the reference and the gate, the gate applied to a report view, and the concurrent
 * runner against a threaded scripted server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate/checks.h"
#include "gate/eval.h"
#include "gate/golden.h"
#include "io/loop.h"
#include "report/report.h"
#include "config/suite.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) < (tol))

/* ---- statistics ---- */

static void test_wilson(void **state) {
        double lo, hi;
        /* textbook values (Wilson 1927; Newcombe 1998, table I) */
        eval_wilson(0, 10, EVAL_Z95, &lo, &hi);
        NEAR(lo, 0, 1e-12);
        NEAR(hi, 0.2775, 1e-4);
        eval_wilson(5, 10, EVAL_Z95, &lo, &hi);
        NEAR(lo, 0.2366, 1e-4);
        NEAR(hi, 0.7634, 1e-4);
        eval_wilson(81, 263, EVAL_Z95, &lo, &hi);
        NEAR(lo, 0.2553, 1e-4);
        NEAR(hi, 0.3662, 1e-4);
        eval_wilson(200, 200, EVAL_Z95, &lo, &hi);
        NEAR(lo, 0.98115, 1e-4);
        assert_true(hi == 1);
        eval_wilson(0, 0, EVAL_Z95, &lo, &hi);
        assert_true(isnan(lo) && isnan(hi));

        struct eval_figures f = {0};
        eval_figures_add(&f, VERDICT_PASS);
        eval_figures_add(&f, VERDICT_WRONG);
        eval_figures_add(&f, VERDICT_GARBAGE);
        eval_figures_add(&f, VERDICT_SKIPPED); /* not asked: not counted */
        eval_figures_finish(&f);
        assert_int_equal(f.n, 3);
        assert_int_equal(f.correct, 1);
        NEAR(f.accuracy, 1.0 / 3, 1e-12);
        assert_int_equal(f.by_verdict[VERDICT_GARBAGE], 1);
        assert_int_equal(f.by_verdict[VERDICT_SKIPPED], 1);
}

static void test_two_proportion(void **state) {
        double z, p;
        /* 45/100 against 60/100: pooled 0.525, se 0.07062, z -2.124, p 0.0337 */
        eval_two_proportion(45, 100, 60, 100, &z, &p);
        NEAR(z, -2.1240, 1e-3);
        NEAR(p, 0.0337, 1e-3);
        assert_true(eval_significantly_below(45, 100, 60, 100));
        assert_false(eval_significantly_below(60, 100, 45, 100)); /* above is never below */
        assert_false(eval_significantly_below(55, 100, 60, 100)); /* p 0.48: noise */
        /* one in three wrong against a perfect reference, 200 questions each */
        assert_true(eval_significantly_below(134, 200, 200, 200));
        /* one wrong in 200 is not significant */
        assert_false(eval_significantly_below(199, 200, 200, 200));
        eval_two_proportion(200, 200, 200, 200, &z, &p);
        assert_true(z == 0 && p == 1);
        eval_two_proportion(0, 50, 0, 50, &z, &p);
        assert_true(z == 0 && p == 1);
        eval_two_proportion(0, 0, 5, 10, &z, &p);
        assert_true(z == 0 && p == 1);
}

/* ---- the built-in questions ---- */

/* The right answer, worked out from the prompt by this test on its own. */
static char *solve(const struct check_spec *c) {
        int a, b;
        char letter, word[64];
        if (sscanf(c->prompt, "What is %d * %d?", &a, &b) == 2)
                return strdup_printf("%d", a * b);
        if (sscanf(c->prompt, "What is %d + %d?", &a, &b) == 2)
                return strdup_printf("%d", a + b);
        if (sscanf(c->prompt, "How many times does the letter \"%c\" appear in the word \"%63[a-z]\"", &letter, word) == 2) {
                int n = 0;
                for (char *p = word; *p; p++)
                        n += *p == letter;
                return strdup_printf("%d", n);
        }
        int v[5];
        if (sscanf(c->prompt, "Sort these numbers from smallest to largest: %d, %d, %d, %d, %d.", &v[0], &v[1], &v[2],
                   &v[3], &v[4]) == 5) {
                for (int i = 0; i < 5; i++)
                        for (int k = i + 1; k < 5; k++)
                                if (v[k] < v[i]) {
                                        int t = v[i];
                                        v[i] = v[k];
                                        v[k] = t;
                                }
                return strdup_printf("%d, %d, %d, %d, %d", v[0], v[1], v[2], v[3], v[4]);
        }
        char s[64];
        if (sscanf(c->prompt, "Repeat exactly, and nothing else: %63s", s) == 1)
                return strdup(s);
        return NULL;
}

static bool matches(const struct expect *e, const char *answer) {
        bool m = false;
        assert_int_equal(golden_match(e, answer, &m, NULL), 0);
        return m;
}

static void test_builtin_sets(void **state) {
        struct eval_options o;
        eval_options_init(&o);
        o.samples = 500;
        struct eval_set s, again, other;
        assert_int_equal(eval_set_builtin(&o, &s), 0);
        assert_int_equal(s.n, 500);
        assert_string_equal(s.source, "builtin:products,sums,letters,sort,copy");
        size_t per[_EVAL_BUILTIN_MAX] = {0}, zero_letters = 0;
        for (size_t i = 0; i < s.n; i++) {
                const struct check_spec *c = &s.specs[i];
                int b = -1;
                for (int k = 0; k < _EVAL_BUILTIN_MAX; k++)
                        if (startswith(c->name, eval_builtin_name((enum eval_builtin)k)))
                                b = k;
                assert_true(b >= 0);
                assert_int_equal((int)(i % _EVAL_BUILTIN_MAX), b); /* the sets in turn */
                per[b]++;
                assert_int_equal(c->stream, STREAM_NO);
                _cleanup_free_ char *right = solve(c);
                if (!right)
                        fail_msg("cannot read question %s: %s", c->name, c->prompt);
                assert_true(matches(&c->expect, right));
                zero_letters += b == EVAL_LETTERS && strcmp(right, "0") == 0;
                /* and a wrong answer is wrong */
                if (b == EVAL_SORT) {
                        assert_false(matches(&c->expect, "1, 2, 3, 4, 5, 6"));
                        int v[5];
                        sscanf(c->prompt, "Sort these numbers from smallest to largest: %d, %d, %d, %d, %d.", &v[0],
                               &v[1], &v[2], &v[3], &v[4]);
                        /* the question's own order is not sorted unless it happened to be */
                        _cleanup_free_ char *asked = strdup_printf("%d, %d, %d, %d, %d", v[0], v[1], v[2], v[3], v[4]);
                        assert_true(strcmp(asked, right) == 0 || !matches(&c->expect, asked));
                        _cleanup_free_ char *bracketed = strdup_printf("[%s]", right);
                        assert_true(matches(&c->expect, bracketed));
                } else if (b == EVAL_COPY) {
                        _cleanup_free_ char *off = strdup_printf("%sx", right);
                        assert_false(matches(&c->expect, off));
                } else {
                        _cleanup_free_ char *off = strdup_printf("%ld", atol(right) + 1);
                        assert_false(matches(&c->expect, off));
                }
        }
        for (int k = 0; k < _EVAL_BUILTIN_MAX; k++)
                assert_int_equal(per[k], 100);
        assert_true(zero_letters > 0 && zero_letters < 100);

        /* the same seed gives the same questions; question j of a set does not depend on
         * how many are made; another seed gives others */
        o.samples = 50;
        assert_int_equal(eval_set_builtin(&o, &again), 0);
        for (size_t i = 0; i < again.n; i++) {
                assert_string_equal(again.specs[i].prompt, s.specs[i].prompt);
                assert_string_equal(again.keys[i], s.keys[i]);
        }
        assert_string_not_equal(again.hash, s.hash);
        o.seed = 2;
        assert_int_equal(eval_set_builtin(&o, &other), 0);
        size_t same = 0;
        for (size_t i = 0; i < other.n; i++)
                same += strcmp(other.specs[i].prompt, again.specs[i].prompt) == 0;
        assert_true(same < 10);
        assert_string_not_equal(other.hash, again.hash);
        eval_set_release(&other);
        /* options that change answers change the set */
        o.seed = 1;
        o.max_tokens = 16;
        assert_int_equal(eval_set_builtin(&o, &other), 0);
        assert_string_not_equal(other.hash, again.hash);
        assert_int_equal(other.specs[0].max_tokens, 16);
        eval_set_release(&other);
        o.max_tokens = 0;
        o.builtins = 1u << EVAL_SUMS;
        assert_int_equal(eval_set_builtin(&o, &other), 0);
        assert_string_equal(other.source, "builtin:sums");
        for (size_t i = 0; i < other.n; i++)
                assert_true(startswith(other.specs[i].name, "sums-"));
        eval_set_release(&other);
        eval_set_release(&again);
        eval_set_release(&s);
}

/* ---- JSONL ---- */

static void test_jsonl(void **state) {
        static const char text[] = "\xef\xbb\xbf{\"prompt\": \"What is 2 + 2?\", \"expect\": {\"number\": 4}}\n"
                                   "\n"
                                   "{\"id\": \"cap\", \"prompt\": \"Capital of France?\", \"expect\": {\"contains\": \"Paris\"}}\r\n"
                                   "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", "
                                   "\"content\": \"Say hi\"}], \"expect\": \"hi\"}\n"
                                   "{\"prompt\": \"x\", \"expect\": {\"regex\": \"^[0-9]+$\"}}\n"
                                   "{\"prompt\": \"y\", \"expect\": {\"number\": \"1,000\"}}\n"
                                   "{\"prompt\": \"z\", \"expect\": {\"number\": 2.5}}";
        struct check_spec *q = NULL;
        size_t n = 0;
        char *err = NULL;
        assert_int_equal(suite_parse_jsonl(text, strlen(text), "q.jsonl", &q, &n, &err), 0);
        assert_null(err);
        assert_int_equal(n, 6);
        assert_string_equal(q[0].name, "line-1");
        assert_int_equal(q[0].expect.kind, EXPECT_NUMBER);
        assert_string_equal(q[0].expect.value, "4");
        assert_string_equal(q[1].name, "cap");
        assert_int_equal(q[1].expect.kind, EXPECT_CONTAINS);
        assert_string_equal(q[2].name, "line-4");
        assert_non_null(q[2].messages);
        assert_int_equal(json_array_size(q[2].messages), 2);
        assert_int_equal(q[2].expect.kind, EXPECT_EQUALS);
        assert_int_equal(q[3].expect.kind, EXPECT_REGEX);
        assert_string_equal(q[5].expect.value, "2.5");
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(q[i].mode, CHECK_CHAT);
                assert_int_equal(q[i].stream, STREAM_NO);
        }
        checks_free_suite(q, n);

        static const struct {
                const char *text, *error;
        } bad[] = {
                {"{\"prompt\": \"a\", \"expect\": \"b\"}\n{\"prompt\": \"a\"\n", "q.jsonl:2: not JSON"},
                {"[1, 2]\n", "q.jsonl:1: a question must be a JSON object, not a list"},
                {"{\"prompt\": \"a\", \"expected\": \"b\"}\n", "q.jsonl:1: unknown key 'expected' in a question (did you mean 'expect'?)"},
                {"{\"prompt\": \"a\"}\n", "q.jsonl:1: a question needs an expect"},
                {"{\"expect\": \"a\"}\n", "q.jsonl:1: a question needs a prompt (or messages)"},
                {"{\"prompt\": \"a\", \"messages\": [], \"expect\": \"b\"}\n", "q.jsonl:1: give prompt or messages, not both"},
                {"{\"prompt\": 3, \"expect\": \"b\"}\n", "q.jsonl:1: prompt must be a string, not a number"},
                {"{\"prompt\": \"a\", \"expect\": {\"regex\": \"(\"}}\n", "q.jsonl:1: expect: invalid regular expression '('"},
                {"{\"prompt\": \"a\", \"expect\": {\"regex\": \"a+++++++\"}}\n", "q.jsonl:1: expect: regular expression 'a+++++++' refused"},
                {"{\"prompt\": \"a\", \"expect\": {\"number\": \"many\"}}\n", "q.jsonl:1: expect: number needs a number, not 'many'"},
                {"{\"prompt\": \"a\", \"expect\": {\"equal\": \"b\"}}\n", "q.jsonl:1: unknown key 'equal' in expect (did you mean 'equals'?)"},
                {"{\"prompt\": \"a\", \"expect\": {\"equals\": \"b\", \"contains\": \"c\"}}\n", "q.jsonl:1: expect must be a string or an object with one key"},
                {"{\"prompt\": \"a\", \"expect\": {\"contains\": true}}\n", "q.jsonl:1: expect: contains needs a string, not a boolean"},
                {"{\"messages\": [{\"role\": \"usr\", \"content\": \"a\"}], \"expect\": \"b\"}\n", "q.jsonl:1: unknown role 'usr' (did you mean 'user'?)"},
                {"{\"messages\": [{\"role\": \"user\"}], \"expect\": \"b\"}\n", "q.jsonl:1: message 1 must be"},
                {"{\"id\": \"a\", \"prompt\": \"p\", \"expect\": \"b\"}\n\n{\"id\": \"a\", \"prompt\": \"q\", \"expect\": \"c\"}\n",
                 "q.jsonl:3: question id 'a' appears twice"},
                {"{\"id\": \"\", \"prompt\": \"p\", \"expect\": \"b\"}\n", "q.jsonl:1: id must be a non-empty string"},
                {"{\"prompt\": \"a\", \"prompt\": \"b\", \"expect\": \"c\"}\n", "q.jsonl:1: not JSON: duplicate object key"},
                {"\n  \n", "q.jsonl:2: the file holds no question"},
                {"{\"prompt\": \"\xff\", \"expect\": \"b\"}\n", "q.jsonl:1: not JSON"},
                /* the bytes jansson quotes are the file's: escaped, one printable line */
                {"{\"prompt\": \x1b[2J}\n", "q.jsonl:1: not JSON: invalid token near '\\x1b'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                q = (struct check_spec *)0x1;
                err = NULL;
                int r = suite_parse_jsonl(bad[i].text, strlen(bad[i].text), "q.jsonl", &q, &n, &err);
                if (r != -EINVAL || !err || !strstr(err, bad[i].error))
                        fail_msg("case %zu: r=%d got '%s', want '%s'", i, r, err ? err : "(none)", bad[i].error);
                assert_ptr_equal(q, (struct check_spec *)0x1);
                free(err);
        }
        err = NULL;
        assert_int_equal(suite_load_jsonl("/nonexistent/q.jsonl", &q, &n, &err), -ENOENT);
        assert_string_equal(err, "cannot read '/nonexistent/q.jsonl': No such file or directory");
        free(err);
}

static void test_subset(void **state) {
        struct buf b;
        buf_init(&b, 0);
        for (int i = 0; i < 50; i++)
                buf_printf(&b, "{\"id\": \"q%d\", \"prompt\": \"What is %d * 3?\", \"expect\": {\"number\": %d}}\n", i, i,
                           i * 3);
        struct eval_options o;
        eval_options_init(&o);
        o.samples = 10;
        o.file = strdup("q.jsonl");
        struct eval_set picks[3];
        for (int k = 0; k < 3; k++) {
                struct check_spec *q = NULL;
                size_t n = 0;
                o.seed = k == 2 ? 7 : 1;
                assert_int_equal(suite_parse_jsonl(b.data, b.len, "q.jsonl", &q, &n, NULL), 0);
                assert_int_equal(eval_set_from_specs(&o, q, n, &picks[k]), 0);
                assert_int_equal(picks[k].n, 10);
                assert_string_equal(picks[k].source, "file:q.jsonl");
                int last = -1;
                for (size_t i = 0; i < picks[k].n; i++) { /* in file order, no repeat */
                        int at = atoi(picks[k].specs[i].name + 1);
                        assert_true(at > last);
                        last = at;
                }
        }
        assert_string_equal(picks[0].hash, picks[1].hash);
        assert_string_not_equal(picks[0].hash, picks[2].hash);
        for (int k = 0; k < 3; k++)
                eval_set_release(&picks[k]);
        /* more samples than lines: every line */
        struct check_spec *q = NULL;
        size_t n = 0;
        struct eval_set all;
        o.samples = 500;
        assert_int_equal(suite_parse_jsonl(b.data, b.len, "q.jsonl", &q, &n, NULL), 0);
        assert_int_equal(eval_set_from_specs(&o, q, n, &all), 0);
        assert_int_equal(all.n, 50);
        eval_set_release(&all);
        eval_options_release(&o);
        buf_release(&b);
}

/* ---- the differential, the reference, the gate ---- */

static void test_diff(void **state) {
        double lp_a[] = {-0.5, -0.25}, lp_r[] = {-0.25, -0.25}, lp_nan[] = {NAN, -0.1}, lp3[] = {-1, -1, -1};
        struct eval_answer a[] = {
                {VERDICT_PASS, "323", lp_a, 2},
                {VERDICT_WRONG, "324", NULL, 0},
                {VERDICT_PASS, "17", lp_nan, 2},
                {VERDICT_SKIPPED, NULL, NULL, 0},
                {VERDICT_PASS, "x", lp3, 3},
        };
        struct eval_answer r[] = {
                {VERDICT_PASS, "323", lp_r, 2},
                {VERDICT_PASS, "323", NULL, 0},
                {VERDICT_PASS, "17", lp_r, 2},
                {VERDICT_PASS, "9", NULL, 0},
                {VERDICT_PASS, "x", lp_r, 2},
        };
        struct eval_diff d;
        eval_diff(a, r, ELEMENTSOF(a), &d);
        assert_int_equal(d.common, 4);      /* the one not asked is left out */
        assert_int_equal(d.identical, 3);
        NEAR(d.agreement, 0.75, 1e-12);
        assert_int_equal(d.first, 1);
        assert_int_equal(d.first_offset, 2); /* "32" then '4' against '3' */
        /* only the first answer has comparable logprobs: the NaN one and the one with a
         * different token count are left out */
        assert_int_equal(d.lp_answers, 1);
        assert_int_equal(d.lp_tokens, 2);
        NEAR(d.lp_mad, 0.125, 1e-12);

        struct eval_diff none;
        eval_diff(a, a, 0, &none);
        assert_true(isnan(none.agreement) && isnan(none.lp_mad));
        assert_int_equal(none.first, SIZE_MAX);
}

static void test_reference(void **state) {
        struct eval_cell c[] = {
                {.eligible = true, .n = 200, .correct = 180, .distance = 1},
                {.eligible = true, .n = 200, .correct = 190, .distance = 2},
                {.eligible = false, .n = 0, .correct = 0, .distance = 0},
                {.eligible = true, .n = 100, .correct = 95, .distance = 1}, /* 0.95: ties 190/200 */
        };
        bool fell = true;
        assert_int_equal(eval_pick_reference(c, 4, 0, &fell), 0); /* named and eligible */
        assert_false(fell);
        assert_int_equal(eval_pick_reference(c, 4, 2, &fell), 3); /* named cannot serve */
        assert_true(fell);
        assert_int_equal(eval_pick_reference(c, 4, -1, &fell), 3); /* most accurate, then nearer */
        assert_false(fell);
        c[3].distance = 2;
        assert_int_equal(eval_pick_reference(c, 4, -1, NULL), 1); /* a full tie: the earlier */
        struct eval_cell none[] = {{.eligible = false}, {.eligible = true, .n = 0}};
        assert_int_equal(eval_pick_reference(none, 2, -1, NULL), -1);
}

static void test_gate(void **state) {
        struct eval_options o;
        eval_options_init(&o);
        struct eval_figures ref = {0}, ok = {0}, bad = {0};
        for (int i = 0; i < 200; i++) {
                eval_figures_add(&ref, VERDICT_PASS);
                eval_figures_add(&ok, i == 7 ? VERDICT_WRONG : VERDICT_PASS);
                eval_figures_add(&bad, i % 3 == 0 ? VERDICT_WRONG : VERDICT_PASS);
        }
        eval_figures_finish(&ref);
        eval_figures_finish(&ok);
        eval_figures_finish(&bad);
        struct eval_diff d = {.common = 200, .identical = 150, .agreement = 0.75, .lp_tokens = 600, .lp_mad = 0.2};
        assert_int_equal(eval_gate_decide(&o, &ok, &ref, &d), EVAL_GATE_NONE); /* informational */
        assert_int_equal(eval_gate_decide(&o, &bad, &ref, &d), EVAL_GATE_ACCURACY);
        _cleanup_free_ char *ev = eval_gate_evidence(EVAL_GATE_ACCURACY, &o, &bad, &ref, &d, "3f9c0a1d55", NULL);
        assert_string_equal(ev, "accuracy 0.665 [0.597, 0.727] (133/200) below the reference 3f9c0a1d's 1.000 "
                                "[0.981, 1.000] (200/200): two-proportion z-test z = -8.97, p < 0.001 (95%)");
        o.min_agreement = 0.9;
        assert_int_equal(eval_gate_decide(&o, &ok, &ref, &d), EVAL_GATE_AGREEMENT);
        assert_int_equal(eval_gate_decide(&o, &bad, &ref, &d), EVAL_GATE_ACCURACY); /* accuracy first */
        _cleanup_free_ char *ev2 = eval_gate_evidence(EVAL_GATE_AGREEMENT, &o, &ok, &ref, &d, "3f9c0a1d55", "q17");
        assert_string_equal(ev2, "150/200 answers identical to the reference 3f9c0a1d's (0.750), below min_agreement "
                                 "0.9; first divergence: q17");
        o.min_agreement = 0.5;
        o.max_logprob_diff = 0.1;
        assert_int_equal(eval_gate_decide(&o, &ok, &ref, &d), EVAL_GATE_LOGPROBS);
        assert_string_equal(eval_gate_cause(EVAL_GATE_LOGPROBS), "divergence");
        assert_string_equal(eval_gate_cause(EVAL_GATE_ACCURACY), "accuracy");
        d.lp_tokens = 0; /* no logprobs: that gate cannot fire */
        assert_int_equal(eval_gate_decide(&o, &ok, &ref, &d), EVAL_GATE_NONE);
}

/* ---- the gate on a view ---- */

static void put_answers(struct report_cell *c, size_t n, size_t wrong_every, const char *wrong_text) {
        c->eval.answers = calloc(n, sizeof(*c->eval.answers));
        c->eval.n_answers = n;
        for (size_t i = 0; i < n; i++) {
                struct report_eval_answer *a = &c->eval.answers[i];
                bool wrong = wrong_every && i % wrong_every == 0;
                a->id = strdup_printf("q%zu", i);
                a->question = strdup_printf("What is %zu * 2?", i);
                a->verdict = wrong ? VERDICT_WRONG : VERDICT_PASS;
                a->output = wrong ? strdup(wrong_text) : strdup_printf("%zu", i * 2);
                eval_figures_add(&c->eval.fig, a->verdict);
        }
        eval_figures_finish(&c->eval.fig);
        c->eval.ran = true;
        c->eval.journal_verdict = c->verdict;
}

static struct report_view *gate_view(void) {
        struct report_view *v = calloc(1, sizeof(*v));
        v->journal_path = strdup("j.db");
        v->engine = strdup("testbed");
        v->objective = strdup("smoke");
        v->host_json = json_object();
        v->axes = calloc(2, sizeof(char *));
        v->axes[0] = strdup("moe");
        v->n_axes = 1;
        v->n_cells = 4;
        v->cells = calloc(4, sizeof(*v->cells));
        static const char *const names[] = {"reference", "fast-wrong", "nvfp4", "crashes"};
        for (size_t i = 0; i < 4; i++) {
                struct report_cell *c = &v->cells[i];
                snprintf(c->id, sizeof(c->id), "%016zx", 0xa0 + i);
                c->axis_values = calloc(2, sizeof(char *));
                c->axis_values[0] = strdup(names[i]);
                c->argv = calloc(1, sizeof(char *));
                c->env = calloc(1, sizeof(char *));
                c->command = calloc(1, sizeof(char *));
                c->has_attempt = true;
                c->verdict = i == 3 ? VERDICT_CRASH : VERDICT_PASS;
                c->distance = (int)i;
                c->n_checks = 1;
                c->checks = calloc(1, sizeof(*c->checks));
                c->checks[0].name = strdup("math");
                c->checks[0].verdict = VERDICT_PASS;
                /* the wrong one is by far the fastest: it must still never be best */
                c->checks[0].latency = i == 1 ? 1000 : 100000;
        }
        put_answers(&v->cells[0], 200, 0, NULL);
        put_answers(&v->cells[1], 200, 3, "0");
        put_answers(&v->cells[2], 200, 0, NULL);
        v->eval.on = true;
        v->eval.settings = json_pack("{s:s, s:i, s:s, s:s, s:s}", "source", "builtin:products", "questions", 200, "set",
                                     "0123456789abcdef", "reference", v->cells[0].id, "reference_by", "baseline");
        v->eval.source = strdup("builtin:products");
        v->eval.questions = 200;
        eval_options_init(&v->eval.rules);
        v->eval.named = strdup(v->cells[0].id);
        return v;
}

static void test_view_gate(void **state) {
        _cleanup_report_view_ struct report_view *v = gate_view();
        assert_int_equal(report_view_apply_eval(v), 0);
        assert_int_equal(v->eval.reference, 0);
        assert_string_equal(v->eval.reference_by, "baseline");
        assert_true(v->cells[0].eval.is_reference);
        assert_int_equal(v->cells[0].verdict, VERDICT_PASS);
        assert_int_equal(v->cells[1].verdict, VERDICT_WRONG);
        assert_string_equal(v->cells[1].cause, "accuracy");
        assert_non_null(strstr(v->cells[1].evidence, "(133/200) below the reference 00000000's"));
        assert_int_equal(v->cells[1].eval.journal_verdict, VERDICT_PASS);
        assert_int_equal(v->cells[1].eval.diff.first, 3); /* q0: "0" is also 0 * 2 */
        assert_int_equal(v->cells[2].verdict, VERDICT_PASS); /* answers like the reference */
        assert_int_equal(v->cells[2].eval.diff.identical, 200);
        assert_int_equal(v->cells[3].verdict, VERDICT_CRASH);
        assert_false(v->cells[3].eval.compared);
        assert_int_equal(v->eval.gated, 1);
        /* never best, although it is the fastest */
        int best = report_best_index(v, NULL);
        assert_true(best == 0 || best == 2);
        size_t counts[_VERDICT_MAX] = {0};
        assert_int_equal(report_count_verdicts(v, counts), 2);
        assert_int_equal(counts[VERDICT_WRONG], 1);

        /* every format says so */
        json_t *j = NULL;
        assert_int_equal(report_json(v, "test", &j), 0);
        json_t *c1 = json_array_get(json_object_get(j, "cells"), 1);
        assert_string_equal(json_string_value(json_object_get(c1, "verdict")), "wrong");
        json_t *e = json_object_get(c1, "eval");
        assert_int_equal(json_integer_value(json_object_get(e, "n")), 200);
        assert_int_equal(json_integer_value(json_object_get(e, "correct")), 133);
        NEAR(json_real_value(json_array_get(json_object_get(e, "ci95"), 0)), 0.597, 1e-3);
        assert_string_equal(json_string_value(json_object_get(e, "gate")), "accuracy");
        assert_true(json_is_true(json_object_get(json_object_get(e, "vs_reference"), "below")));
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "eval"), "reference")), v->cells[0].id);
        assert_string_not_equal(json_string_value(json_object_get(j, "best")), v->cells[1].id);
        json_decref(j);
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(report_markdown(v, &b), 0);
        assert_non_null(strstr(b.data, "| accuracy | cell |"));
        assert_non_null(strstr(b.data, "0.665 [0.597, 0.727]"));
        assert_non_null(strstr(b.data, ": **wrong** / `accuracy`"));
        buf_reset(&b);
        struct report_text_options to = {.width = 200};
        assert_int_equal(report_text(v, &to, &b), 0);
        assert_non_null(strstr(b.data, "eval: builtin:products, 200 questions; reference 00000000 (baseline)"));
        assert_non_null(strstr(b.data, "eval 200/200 right, accuracy 1.000 [0.981, 1.000]; 100.0% answers identical"));
        buf_reset(&b);
        assert_int_equal(report_html(v, &b), 0);
        assert_non_null(strstr(b.data, "<section id=\"eval\">"));
        assert_non_null(strstr(b.data, "First answer that differs from the reference"));
        buf_release(&b);
}

/* The eval under load against the reference's answers alone to the same questions: a cell
 * that passed with 30/50 right amid its bench's highest level is wrong/accuracy when the view
 * is loaded, with both figures; every format shows the figures. */
static void test_view_under_load(void **state) {
        _cleanup_report_view_ struct report_view *v = gate_view();
        json_t *answers = json_array();
        for (int i = 0; i < 52; i++) /* 30 right, 20 wrong, 2 with no answer (not counted) */
                json_array_append_new(answers, json_pack("{s:i, s:s, s:s, s:s?}", "seq", i, "name", "q",
                                                         "verdict", i >= 50 ? "garbage" : i < 30 ? "pass" : "wrong",
                                                         "cause", i >= 50 ? "http" : NULL));
        v->cells[2].bench = json_pack("[{s:i}, {s:i, s:i, s:i, s:[], s:{s:i, s:i, s:o}}]", "concurrency", 1,
                                      "concurrency", 16, "outputs_judged", 40, "outputs_flagged", 0, "flagged",
                                      "eval_under_load", "concurrency", 16, "asked", 52, "answers", answers);
        assert_int_equal(report_view_apply_eval(v), 0);
        const struct report_cell *c = &v->cells[2];
        assert_int_equal(c->verdict, VERDICT_WRONG);
        assert_string_equal(c->cause, "accuracy");
        assert_non_null(strstr(c->evidence, "accuracy under load at concurrency 16: 0.600 ["));
        assert_non_null(strstr(c->evidence, "(30/50) below the reference 00000000's alone 1.000 ["));
        assert_non_null(strstr(c->evidence, "two-proportion z-test z = -"));
        assert_true(c->eval.under_load && c->eval.load_compared && c->eval.load_gated);
        assert_int_equal(c->eval.load_alone.correct, 50);
        assert_int_equal(v->eval.gated, 2);
        assert_false(v->cells[0].eval.under_load); /* no bench */
        json_t *j = NULL;
        assert_int_equal(report_json(v, "test", &j), 0);
        json_t *ul = json_object_get(json_object_get(json_array_get(json_object_get(j, "cells"), 2), "eval"), "under_load");
        assert_int_equal(json_integer_value(json_object_get(ul, "concurrency")), 16);
        assert_int_equal(json_integer_value(json_object_get(ul, "n")), 50);
        assert_int_equal(json_integer_value(json_object_get(ul, "correct")), 30);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(ul, "alone"), "correct")), 50);
        assert_true(json_is_true(json_object_get(json_object_get(ul, "vs_reference"), "below")));
        json_decref(j);
        struct buf b;
        buf_init(&b, 0);
        struct report_text_options to = {.width = 400};
        assert_int_equal(report_text(v, &to, &b), 0);
        assert_non_null(strstr(b.data, ": bench outputs: 40 judged, 0 flagged; eval under load @16: 30/50, accuracy 0.600 ["));
        assert_non_null(strstr(b.data, "; alone 50/50, accuracy 1.000 [0.929, 1.000]; the reference alone 50/50"));
        buf_release(&b);
}

static void test_view_html_escapes(void **state) {
        /* answers, questions and ids are server or user text: shown, never markup */
        _cleanup_report_view_ struct report_view *v = gate_view();
        struct report_eval_answer *a = &v->cells[1].eval.answers[3];
        free(a->output);
        free(a->question);
        free(a->id);
        a->output = strdup("<script>alert(1)</script>");
        a->question = strdup("<img src=x onerror=alert(1)>");
        a->id = strdup("q\"><svg onload=alert(1)>");
        a->evidence = strdup("expected 6, got: \"<script>\"");
        assert_int_equal(report_view_apply_eval(v), 0);
        assert_int_equal(v->cells[1].eval.diff.first, 3);
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(report_html(v, &b), 0);
        assert_null(strstr(b.data, "<script>alert"));
        assert_null(strstr(b.data, "<img src=x"));
        assert_null(strstr(b.data, "<svg onload"));
        assert_non_null(strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert_non_null(strstr(b.data, "&lt;img src=x onerror=alert(1)&gt;"));
        assert_non_null(strstr(b.data, "q&quot;&gt;&lt;svg onload=alert(1)&gt;"));
        buf_release(&b);
}

static void test_view_fallback(void **state) {
        /* the named reference crashed: the most accurate cell that passed serves */
        _cleanup_report_view_ struct report_view *v = gate_view();
        free(v->eval.named);
        v->eval.named = strdup(v->cells[3].id);
        assert_int_equal(report_view_apply_eval(v), 0);
        assert_true(v->eval.fell_back);
        assert_int_equal(v->eval.reference, 0); /* 200/200, distance 0 beats nvfp4's distance 2 */
        assert_string_equal(v->eval.reference_by, "most accurate");
        assert_int_equal(v->cells[1].verdict, VERDICT_WRONG);
        _cleanup_free_ char *s = report_eval_summary(v);
        assert_non_null(strstr(s, "(most accurate: the named reference has no eval figures)"));
}

/* ---- the concurrent runner ---- */

struct tsrv {
        int fd, port;
        int stop[2];
        pthread_t thread;
        atomic_int in_flight, max_in_flight, served;
        int delay_ms;
};

struct tconn {
        struct tsrv *s;
        int fd;
};

static bool tsrv_stopping(struct tsrv *s, int ms) {
        struct pollfd p = {.fd = s->stop[0], .events = POLLIN};
        return poll(&p, 1, ms) > 0;
}

static void *tconn_main(void *arg) {
        struct tconn *c = arg;
        char req[16384];
        for (;;) {
                size_t len = 0, need = SIZE_MAX;
                while (len < need) {
                        struct pollfd p[2] = {{.fd = c->fd, .events = POLLIN}, {.fd = c->s->stop[0], .events = POLLIN}};
                        if (poll(p, 2, 5000) <= 0 || (p[1].revents & POLLIN))
                                goto out;
                        ssize_t k = read(c->fd, req + len, sizeof(req) - 1 - len);
                        if (k <= 0)
                                goto out;
                        len += (size_t)k;
                        req[len] = 0;
                        char *end = strstr(req, "\r\n\r\n");
                        if (end && need == SIZE_MAX) {
                                char *cl = strcasestr(req, "Content-Length:");
                                need = (size_t)(end + 4 - req) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
                        }
                }
                int now = atomic_fetch_add(&c->s->in_flight, 1) + 1;
                int seen = atomic_load(&c->s->max_in_flight);
                while (now > seen && !atomic_compare_exchange_weak(&c->s->max_in_flight, &seen, now))
                        ;
                int a = 0, b = 0;
                char *q = strstr(req, "What is ");
                bool hang = strstr(req, "hang") != NULL;
                if (q)
                        sscanf(q, "What is %d * %d?", &a, &b);
                if (hang) {
                        tsrv_stopping(c->s, 10000);
                        atomic_fetch_sub(&c->s->in_flight, 1);
                        goto out;
                }
                tsrv_stopping(c->s, c->s->delay_ms);
                atomic_fetch_sub(&c->s->in_flight, 1);
                atomic_fetch_add(&c->s->served, 1);
                char body[512], head[256];
                int bn = snprintf(body, sizeof(body),
                                  "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"%d\"},"
                                  "\"logprobs\":{\"content\":[{\"token\":\"x\",\"logprob\":-0.5}]},\"finish_reason\":\"stop\"}]}",
                                  a * b);
                int hn = snprintf(head, sizeof(head),
                                  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", bn);
                if (write(c->fd, head, (size_t)hn) != hn || write(c->fd, body, (size_t)bn) != bn)
                        goto out;
        }
out:
        close(c->fd);
        free(c);
        return NULL;
}

static void *tsrv_main(void *arg) {
        struct tsrv *s = arg;
        for (;;) {
                struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN}, {.fd = s->stop[0], .events = POLLIN}};
                if (poll(p, 2, -1) <= 0 || (p[1].revents & POLLIN))
                        return NULL;
                int fd = accept(s->fd, NULL, NULL);
                if (fd < 0)
                        continue;
                struct tconn *c = malloc(sizeof(*c));
                *c = (struct tconn){.s = s, .fd = fd};
                pthread_t t;
                pthread_create(&t, NULL, tconn_main, c);
                pthread_detach(t);
        }
}

static void tsrv_start(struct tsrv *s, int delay_ms) {
        *s = (struct tsrv){.delay_ms = delay_ms};
        assert_int_equal(pipe(s->stop), 0);
        s->fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(s->fd, 64), 0);
        socklen_t l = sizeof(a);
        getsockname(s->fd, (struct sockaddr *)&a, &l);
        s->port = ntohs(a.sin_port);
        pthread_create(&s->thread, NULL, tsrv_main, s);
}

static void tsrv_stop(struct tsrv *s) {
        assert_int_equal(write(s->stop[1], "x", 1), 1);
        pthread_join(s->thread, NULL);
        close(s->fd);
        usleep(100 * 1000); /* the connection threads see the stop */
}

static struct check_spec *questions(size_t n, size_t hang_at) {
        struct check_spec *q = calloc(n, sizeof(*q));
        for (size_t i = 0; i < n; i++) {
                q[i].name = strdup_printf("q%zu", i);
                q[i].mode = CHECK_CHAT;
                q[i].stream = STREAM_NO;
                q[i].prompt = i == hang_at ? strdup("please hang") : strdup_printf("What is %zu * 7?", i + 2);
                q[i].expect = (struct expect){EXPECT_NUMBER, strdup_printf("%zu", (i + 2) * 7 + (i == 5))};
        }
        return q;
}

static void test_concurrent(void **state) {
        struct tsrv s;
        tsrv_start(&s, 60);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
        struct checks_target t = {.base_url = url, .model = "m", .request_timeout = 5 * USEC_PER_SEC, .logprobs = true};
        struct check_spec *q = questions(16, SIZE_MAX);
        struct check_result *r = NULL;
        usec_t t0 = now_usec();
        assert_int_equal(checks_run_concurrent(l, &t, q, 16, 4, &r), 0);
        usec_t took = now_usec() - t0;
        assert_int_equal(atomic_load(&s.max_in_flight), 4);
        assert_int_equal(atomic_load(&s.served), 16);
        /* 16 requests of 60 ms, 4 at a time: at least 4 rounds, far from 16 */
        assert_true(took >= 4 * 60 * USEC_PER_MSEC);
        assert_true(took < 12 * 60 * USEC_PER_MSEC);
        for (size_t i = 0; i < 16; i++) {
                _cleanup_free_ char *want = strdup_printf("%zu", (i + 2) * 7);
                assert_string_equal(r[i].name, q[i].name); /* in spec order */
                assert_string_equal(r[i].output, want);
                assert_int_equal(r[i].verdict, i == 5 ? VERDICT_WRONG : VERDICT_PASS);
                assert_int_equal(r[i].n_logprobs, 1);
                assert_true(r[i].logprobs[0] == -0.5);
        }
        checks_free_results(r, 16);
        checks_free_suite(q, 16);

        /* a question that hangs: it times out, nothing new is sent, the rest is not asked */
        atomic_store(&s.served, 0);
        q = questions(40, 1);
        t.request_timeout = 400 * USEC_PER_MSEC;
        assert_int_equal(checks_run_concurrent(l, &t, q, 40, 2, &r), 0);
        assert_int_equal(r[1].verdict, VERDICT_TIMEOUT);
        size_t asked = 0, skipped = 0;
        for (size_t i = 0; i < 40; i++) {
                if (r[i].verdict == VERDICT_SKIPPED) {
                        skipped++;
                        assert_string_equal(r[i].cause, "not asked");
                        assert_non_null(strstr(r[i].evidence, "an earlier request timed out"));
                } else
                        asked++;
        }
        assert_true(skipped > 0 && asked >= 3);
        assert_int_equal((size_t)atomic_load(&s.served), asked - 1);
        checks_free_results(r, 40);
        checks_free_suite(q, 40);
        tsrv_stop(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_wilson),        cmocka_unit_test(test_two_proportion),
                cmocka_unit_test(test_builtin_sets),  cmocka_unit_test(test_jsonl),
                cmocka_unit_test(test_subset),        cmocka_unit_test(test_diff),
                cmocka_unit_test(test_reference),     cmocka_unit_test(test_gate),
                cmocka_unit_test(test_view_gate),     cmocka_unit_test(test_view_fallback),
                cmocka_unit_test(test_view_under_load),
                cmocka_unit_test(test_view_html_escapes),
                cmocka_unit_test(test_concurrent),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
