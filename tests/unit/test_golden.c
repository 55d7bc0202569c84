/* test_golden.c -- normalisation and the four golden matches: equals, contains, regex, number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate/golden.h"
#include "base/util.h"

static void norm_is(const char *in, const char *want) {
        _cleanup_free_ char *out = NULL;
        assert_int_equal(golden_normalize(in, &out), 0);
        if (strcmp(out, want) != 0)
                fail_msg("normalize('%s') = '%s', want '%s'", in, out, want);
}

static void test_normalize(void **state) {
        norm_is("OK", "OK");
        norm_is("OK.", "OK");
        norm_is("**OK**", "OK");
        norm_is("**OK**.", "OK");
        norm_is("**OK.**", "OK");
        norm_is("  OK \n", "OK");
        norm_is("`OK`", "OK");
        norm_is("*OK*", "OK");
        norm_is("_OK_", "OK");
        norm_is("```\nOK\n```", "OK");
        norm_is("```text\nOK\n```\n", "OK");
        norm_is("# OK", "OK");
        norm_is("> OK", "OK");
        norm_is("- OK", "OK");
        norm_is("hello\n\n  world\t!", "hello world !");
        norm_is("a\xc2\xa0" "b", "a b");
        /* Arithmetic and identifiers keep their symbols. */
        norm_is("2*3 = 6", "2*3 = 6");
        norm_is("2 * 3", "2 * 3");
        norm_is("snake_case_name", "snake_case_name");
        norm_is("-5", "-5");
        norm_is("#1", "#1");
        /* An ellipsis is not a full stop; only one full stop goes. */
        norm_is("Wait...", "Wait...");
        /* found by fuzz_golden: the space before a dropped stop went with it, trimmed */
        norm_is("323 .", "323");
        norm_is("a. .", "a.");
        norm_is("", "");
        norm_is(NULL, "");
}

static void number_is(const char *in, double want) {
        double got = NAN;
        int r = golden_last_number(in, &got);
        if (r != 0 || fabs(got - want) > 1e-9)
                fail_msg("last_number('%s') = %g (r=%d), want %g", in, got, r, want);
}

static void test_last_number(void **state) {
        number_is("323", 323);
        number_is("323.", 323);
        number_is("**323**", 323);
        number_is("17 × 19 = 323", 323);
        number_is("17 * 19 = 323\n", 323);
        number_is("$323", 323);
        number_is("3,230", 3230);
        number_is("The total is 1,234,567.", 1234567);
        number_is("-5", -5);
        number_is("x = -5", -5);
        number_is("17-5 = 12, so 12-17 = -5", -5);
        number_is("3.5", 3.5);
        number_is("about 3.5 GB", 3.5);
        number_is("2, 4, 6, 8", 8);
        number_is("1,2,3", 3);
        number_is("\xe2\x88\x92" "7", -7);  /* U+2212 minus */
        number_is("1.5e-3", 0.0015);
        number_is("3 eggs", 3);
        number_is("50%", 50);
        /* Digits glued to names are not numbers. */
        number_is("323 on the H200", 323);
        number_is("323 on sm_120", 323);
        double d;
        assert_int_equal(golden_last_number("no number here", &d), -ENOENT);
        assert_int_equal(golden_last_number("", &d), -ENOENT);
        assert_int_equal(golden_last_number(NULL, &d), -ENOENT);
}

static bool match(enum expect_kind k, const char *value, const char *answer) {
        struct expect e = {.kind = k, .value = (char *)value};
        bool m = false;
        _cleanup_free_ char *err = NULL;
        int r = golden_match(&e, answer, &m, &err);
        if (r != 0)
                fail_msg("golden_match('%s', '%s') = %d (%s)", value, answer, r, err ? err : "");
        return m;
}

static void test_equals(void **state) {
        assert_true(match(EXPECT_EQUALS, "OK", "OK"));
        assert_true(match(EXPECT_EQUALS, "OK", "OK."));
        assert_true(match(EXPECT_EQUALS, "OK", "**OK**"));
        assert_true(match(EXPECT_EQUALS, "OK", "  OK\n"));
        /* Case-sensitive: "ok" did not follow "Reply with exactly: OK". */
        assert_false(match(EXPECT_EQUALS, "OK", "ok"));
        assert_false(match(EXPECT_EQUALS, "OK", "OK!"));
        assert_false(match(EXPECT_EQUALS, "OK", "OK OK"));
        assert_false(match(EXPECT_EQUALS, "OK", "Sure, OK"));
}

static void test_contains(void **state) {
        assert_true(match(EXPECT_CONTAINS, "Paris", "The capital of France is **Paris**."));
        assert_false(match(EXPECT_CONTAINS, "Paris", "The capital of France is Lyon."));
        assert_false(match(EXPECT_CONTAINS, "paris", "Paris"));
}

static void test_regex(void **state) {
        assert_true(match(EXPECT_REGEX, "^OK$", "**OK**."));
        assert_true(match(EXPECT_REGEX, "3(23|24)", "it is 323"));
        assert_false(match(EXPECT_REGEX, "^[0-9]+$", "323 apples"));
        struct expect e = {.kind = EXPECT_REGEX, .value = "(unclosed"};
        bool m = true;
        char *err = NULL;
        assert_int_equal(golden_match(&e, "x", &m, &err), -EINVAL);
        assert_non_null(err);
        assert_non_null(strstr(err, "(unclosed"));
        free(err);
        assert_true(m);  /* untouched on failure */
        /* The error is optional. */
        assert_int_equal(golden_match(&e, "x", &m, NULL), -EINVAL);
}

/* found by fuzz_golden: glibc's regcomp copies repeated atoms, so stacked quantifiers
 * and nested bounds took minutes or gigabytes; golden_regex_check refuses them first. */
static void test_regex_limits(void **state) {
        static const char *const ok[] = {"^[Pp]aris\\.?$", "[0-9]{1,3}(,[0-9]{3})*", "(a+)+", "x{2}y{0,}",
                                         "a{", "[]{}+*]+", "(x{1,30}){1,30}", "\\++", "x{,3}", "x{,}y", NULL};
        /* "{,n}" is "{0,n}" to glibc: fuzz_golden found "#{,32323}" taking 2 GB */
        static const char *const bad[] = {"a++++++++++++++++++++++++", "a*?", "a{1,2}{3}", "x{1,32767}",
                                          "(x{1,255}){1,255}", "((a{10}){10}){11}", "#{,32323}", "(x{,40}){,40}",
                                          "a{,}+", NULL};
        for (size_t i = 0; ok[i]; i++)
                if (golden_regex_check(ok[i], NULL) != 0)
                        fail_msg("'%s' refused", ok[i]);
        for (size_t i = 0; bad[i]; i++) {
                _cleanup_free_ char *why = NULL;
                if (golden_regex_check(bad[i], &why) != -EINVAL || !why)
                        fail_msg("'%s' accepted", bad[i]);
        }
        struct expect e = {EXPECT_REGEX, (char *)"a+++++++++++++++++++++++++++++++++++"};
        bool match;
        _cleanup_free_ char *why = NULL;
        assert_int_equal(golden_match(&e, "aaa", &match, &why), -EINVAL);
        assert_non_null(why);
}

static void test_number(void **state) {
        assert_true(match(EXPECT_NUMBER, "323", "323"));
        assert_true(match(EXPECT_NUMBER, "323", "17 × 19 = **323**."));
        assert_true(match(EXPECT_NUMBER, "323", "The answer is 323.\n"));
        assert_true(match(EXPECT_NUMBER, "3230", "3,230"));
        assert_true(match(EXPECT_NUMBER, "3,230", "3230"));
        assert_true(match(EXPECT_NUMBER, "-5", "x = -5"));
        assert_true(match(EXPECT_NUMBER, "3.5", "3.50"));
        assert_true(match(EXPECT_NUMBER, "0.333333", "0.3333333"));
        assert_true(match(EXPECT_NUMBER, "323", "323.0"));
        assert_false(match(EXPECT_NUMBER, "323", "324"));
        assert_false(match(EXPECT_NUMBER, "323", "323 or maybe 324"));
        assert_false(match(EXPECT_NUMBER, "323", "three hundred twenty-three"));
        assert_false(match(EXPECT_NUMBER, "3.5", "3.51"));
        struct expect e = {.kind = EXPECT_NUMBER, .value = "abc"};
        bool m = true;
        char *err = NULL;
        assert_int_equal(golden_match(&e, "323", &m, &err), -EINVAL);
        assert_non_null(err);
        free(err);
        e.value = "32 3";
        assert_int_equal(golden_match(&e, "323", &m, NULL), -EINVAL);
}

static void test_none(void **state) {
        assert_true(match(EXPECT_NONE, NULL, "anything"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_normalize),  cmocka_unit_test(test_last_number),
                cmocka_unit_test(test_equals),     cmocka_unit_test(test_contains),
                cmocka_unit_test(test_regex),      cmocka_unit_test(test_number),
                cmocka_unit_test(test_regex_limits),
                cmocka_unit_test(test_none),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
