/* utf8.h -- decoding one UTF-8 sequence, strictly; encoding one code point (the one
 * encoder); a \uXXXX escape's code unit; the start of the character at a byte offset. */
#ifndef GAUNTLET_UTF8_H
#define GAUNTLET_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes the sequence at s, with n bytes available. Returns its length (1..4) and the code
 * point in *ret_cp (when given), or 0 when the bytes are not valid UTF-8: an overlong form, a surrogate,
 * a value above U+10FFFF, a bad continuation byte, or a sequence cut short by n (then
 * *ret_truncated, when given, is true). A NUL byte inside a sequence is a bad continuation,
 * so NUL-terminated strings can pass n = SIZE_MAX safely. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret_cp, bool *ret_truncated);

/* Writes cp as UTF-8 into out (room for 4 bytes, not terminated). Returns the length (1..4),
 * or 0 for a surrogate or a value above U+10FFFF. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* The four hex digits at s (n bytes available there) of a JSON \uXXXX escape: the UTF-16
 * code unit into *ret. 0, or -EINVAL when n is below 4 or one of them is not a hex digit
 * (either case). */
int utf8_hex4(const char *s, size_t n, uint32_t *ret);

/* Where a cut at byte `at` of s[0..len) must go so as not to split a character: `at` moved
 * back over the continuation bytes there (at most 3, the most a valid sequence has). at 0,
 * and at >= len (the end), are left as they are. */
size_t utf8_char_start(const char *s, size_t len, size_t at);

#endif
