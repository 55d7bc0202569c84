/* test_utf8.c -- utf8_encode against utf8_decode, the values neither takes, utf8_hex4,
 * utf8_char_start. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

static void test_encode_lengths_and_bytes(void **state) {
        (void)state;
        char out[4];
        assert_int_equal(utf8_encode(0x41, out), 1);
        assert_memory_equal(out, "A", 1);
        assert_int_equal(utf8_encode(0xE9, out), 2);
        assert_memory_equal(out, "\xC3\xA9", 2);
        assert_int_equal(utf8_encode(0x20AC, out), 3);
        assert_memory_equal(out, "\xE2\x82\xAC", 3);
        assert_int_equal(utf8_encode(0x1F600, out), 4);
        assert_memory_equal(out, "\xF0\x9F\x98\x80", 4);
}

static void test_encode_rejects_what_decode_rejects(void **state) {
        (void)state;
        char out[4];
        assert_int_equal(utf8_encode(0xD800, out), 0);
        assert_int_equal(utf8_encode(0xDFFF, out), 0);
        assert_int_equal(utf8_encode(0x110000, out), 0);
}

/* Every scalar value at the edges of each length, and a sweep between, decodes back. */
static void test_round_trip(void **state) {
        (void)state;
        for (uint32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x1000 ? 1 : 97)) {
                char out[4];
                size_t n = utf8_encode(cp, out);
                if (cp >= 0xD800 && cp <= 0xDFFF) {
                        assert_int_equal(n, 0);
                        continue;
                }
                assert_true(n >= 1 && n <= 4);
                uint32_t back = 0;
                bool truncated = true;
                assert_int_equal(utf8_decode((const unsigned char *)out, n, &back, &truncated), n);
                assert_int_equal(back, cp);
                assert_false(truncated);
        }
        static const uint32_t edges[] = {0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF};
        for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
                char out[4];
                uint32_t back = 0;
                size_t n = utf8_encode(edges[i], out);
                assert_int_equal(utf8_decode((const unsigned char *)out, n, &back, NULL), n);
                assert_int_equal(back, edges[i]);
        }
}

/* A cut never splits a character: back over continuation bytes, at most three. */
static void test_char_start(void **state) {
        const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"; /* a é € 😀 z */
        size_t len = strlen(s);
        assert_int_equal(utf8_char_start(s, len, 0), 0);
        assert_int_equal(utf8_char_start(s, len, 1), 1);
        assert_int_equal(utf8_char_start(s, len, 2), 1);
        assert_int_equal(utf8_char_start(s, len, 3), 3);
        assert_int_equal(utf8_char_start(s, len, 5), 3);
        assert_int_equal(utf8_char_start(s, len, 9), 6);
        assert_int_equal(utf8_char_start(s, len, 10), 10);
        /* the end, and past it, stay where they are */
        assert_int_equal(utf8_char_start(s, len, len), len);
        assert_int_equal(utf8_char_start(s, len, len + 5), len + 5);
        /* a run of stray continuation bytes: at most three back */
        const char *junk = "x\x80\x80\x80\x80\x80";
        assert_int_equal(utf8_char_start(junk, 6, 5), 2);
        assert_int_equal(utf8_char_start(junk, 6, 3), 0);
}

/* A \uXXXX escape's four digits, either case; too short or a non-digit refused. */
static void test_hex4(void **state) {
        (void)state;
        uint32_t v = 7;
        assert_int_equal(utf8_hex4("00e9", 4, &v), 0);
        assert_int_equal(v, 0xE9);
        assert_int_equal(utf8_hex4("D83Dxyz", 7, &v), 0);
        assert_int_equal(v, 0xD83D);
        assert_int_equal(utf8_hex4("fFfF", 4, &v), 0);
        assert_int_equal(v, 0xFFFF);
        v = 7;
        assert_int_equal(utf8_hex4("00e9", 3, &v), -EINVAL);
        assert_int_equal(utf8_hex4("00g9", 4, &v), -EINVAL);
        assert_int_equal(utf8_hex4("-0e9", 4, &v), -EINVAL);
        assert_int_equal(v, 7);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_encode_lengths_and_bytes),
                cmocka_unit_test(test_encode_rejects_what_decode_rejects),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_hex4),
                cmocka_unit_test(test_char_start),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
