/* test_text.c -- text.h: escaping for a terminal, Markdown and a quote; the one set of
 * hidden characters; cleaning to one plain line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "text/text.h"

static char *escape(const char *s, size_t max_chars, enum text_mode mode) {
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(text_escape(&b, s, max_chars, mode), 0);
        char *out = buf_detach(&b);
        assert_non_null(out);
        return out;
}

static char *range(const char *s, size_t len, size_t max, enum text_mode mode, size_t *ret_stop) {
        struct buf b;
        buf_init(&b, 0);
        *ret_stop = text_escape_range(&b, s, 0, len, max, mode);
        char *out = buf_detach(&b);
        assert_non_null(out);
        return out;
}

static void test_escape_modes(void **state) {
        const char *s = "a\\b\n\t\x01\x7f\xff<*>\xc3\xa9";
        _cleanup_free_ char *t = escape(s, 0, TEXT_TERMINAL);
        assert_string_equal(t, "a\\b\\n\\t\\x01\\x7f\\xff<*>\xc3\xa9");
        _cleanup_free_ char *m = escape(s, 0, TEXT_MARKDOWN);
        assert_string_equal(m, "a\\\\b<br>\\t\\x01\\x7f\\xff&lt;\\*&gt;\xc3\xa9");
        _cleanup_free_ char *q = escape(s, 0, TEXT_QUOTED);
        assert_string_equal(q, "a\\\\b\\n\\t\\x01\\x7F\\xFF<*>\xc3\xa9");
        /* the cap counts characters shown, an escape as its length, and ends in "…" */
        _cleanup_free_ char *c = escape("abc\x01xyz", 6, TEXT_TERMINAL);
        assert_string_equal(c, "abc…");
        _cleanup_free_ char *whole = escape("abcdef", 6, TEXT_TERMINAL);
        assert_string_equal(whole, "abcdef");
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(text_escape(&b, NULL, 0, TEXT_TERMINAL), 0);
        assert_int_equal(b.len, 0);
        buf_release(&b);
}

static void test_escape_range(void **state) {
        /* bytes, a NUL among them, no NUL terminator needed */
        size_t stop;
        _cleanup_free_ char *a = range("x\0y\\", 4, SIZE_MAX, TEXT_QUOTED, &stop);
        assert_string_equal(a, "x\\x00y\\\\");
        assert_int_equal(stop, 4);
        /* the output cap takes whole escapes only, and says where it stopped */
        _cleanup_free_ char *b = range("ab\ncd", 5, 3, TEXT_QUOTED, &stop);
        assert_string_equal(b, "ab");
        assert_int_equal(stop, 2);
        /* a character cut by the end of the range is bytes, not a character */
        _cleanup_free_ char *c = range("\xc3\xa9", 1, SIZE_MAX, TEXT_QUOTED, &stop);
        assert_string_equal(c, "\\xC3");
        assert_int_equal(stop, 1);
}

static void test_hidden(void **state) {
        /* one set, in every mode: C1, soft hyphen, zero-width, marks, separators, bidi,
         * noncharacters */
        static const uint32_t hidden[] = {0x80, 0x9b, 0x9f, 0xad, 0x180e, 0x200b, 0x200d, 0x200e, 0x200f, 0x2028,
                                          0x2029, 0x202a, 0x202e, 0x2060, 0x2064, 0x2066, 0x2069, 0xfeff, 0xfffe,
                                          0xffff};
        for (size_t i = 0; i < ELEMENTSOF(hidden); i++)
                assert_true(text_hidden_control(hidden[i]));
        static const uint32_t shown[] = {'a', 0x7e, 0xa0, 0xe9, 0x200a, 0x2010, 0x2027, 0x202f, 0x2065, 0x206a, 0xfffd};
        for (size_t i = 0; i < ELEMENTSOF(shown); i++)
                assert_false(text_hidden_control(shown[i]));
        assert_true(text_zero_width(0x200b));
        assert_false(text_zero_width(0x200e));
        _cleanup_free_ char *t = escape("a\xe2\x80\x8b" "b\xc2\xad" "c\xe2\x80\xae", 0, TEXT_TERMINAL);
        assert_string_equal(t, "a\\u200bb\\u00adc\\u202e");
        _cleanup_free_ char *q = escape("a\xe2\x80\x8b" "b", 0, TEXT_QUOTED);
        assert_string_equal(q, "a\\u200Bb");
}

static char *clean(const char *s, size_t max) {
        return text_clean(s, strlen(s), max);
}

static void test_clean(void **state) {
        _cleanup_free_ char *a = clean("  v1.2\t\r\n", 100);
        assert_string_equal(a, "v1.2");
        _cleanup_free_ char *b = clean("a\x1b[31mb\x7f", 100);
        assert_string_equal(b, "a?[31mb?");
        /* invalid UTF-8 (a lone continuation byte, an overlong '/'), valid é kept */
        _cleanup_free_ char *c = clean("\x80x\xc0\xafy\xc3\xa9", 100);
        assert_string_equal(c, "?x??y\xc3\xa9");
        /* the cap never splits a character */
        _cleanup_free_ char *d = clean("ab\xc3\xa9", 3);
        assert_string_equal(d, "ab");
        _cleanup_free_ char *e = clean("", 3);
        assert_string_equal(e, "");
}

static char *strip(const char *s) {
        char *t = strdup(s);
        assert_non_null(t);
        t[text_strip_ansi(t, strlen(t))] = '\0';
        return t;
}

static void test_strip_ansi(void **state) {
        /* a coloured level, a bold value, an 8-colour reset */
        _cleanup_free_ char *a = strip("\x1b[1;31mERROR\x1b[0m attention backend \x1b[1mfa3\x1b[0m failed");
        assert_string_equal(a, "ERROR attention backend fa3 failed");
        /* 256 colours and true colour, a private mode (ESC [ ? 25 l), a charset (ESC ( B) */
        _cleanup_free_ char *b = strip("\x1b[38;5;196mx\x1b[38;2;1;2;3my\x1b[?25l\x1b(Bz");
        assert_string_equal(b, "xyz");
        /* OSC (a window title, a hyperlink) ended by BEL or by ESC \ */
        _cleanup_free_ char *c = strip("\x1b]0;title\x07" "a\x1b]8;;http://h/\x1b\\link\x1b]8;;\x1b\\b");
        assert_string_equal(c, "alinkb");
        /* lines stay lines: an unterminated OSC stops at the newline, which is kept */
        _cleanup_free_ char *d = strip("a\x1b]0;never ended\nb\x1b[31\nc");
        assert_string_equal(d, "a\nb\nc");
        /* a lone ESC at the end; text without an escape is untouched (UTF-8, a C1 byte kept) */
        _cleanup_free_ char *e = strip("end\x1b");
        assert_string_equal(e, "end");
        _cleanup_free_ char *f = strip("caf\xc3\xa9 [31m \xc2\x9b");
        assert_string_equal(f, "caf\xc3\xa9 [31m \xc2\x9b");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape_modes),
                cmocka_unit_test(test_escape_range),
                cmocka_unit_test(test_hidden),
                cmocka_unit_test(test_clean),
                cmocka_unit_test(test_strip_ansi),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
