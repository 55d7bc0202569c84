/* utf8.c -- decoding one UTF-8 sequence, strictly; encoding one code point; a \uXXXX
 * escape's code unit; the start of the character at a byte offset. */
#include "base/utf8.h"

#include <errno.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret_cp, bool *ret_truncated) {
        bool truncated_unused;
        uint32_t cp_unused;
        if (!ret_truncated)
                ret_truncated = &truncated_unused;
        if (!ret_cp)
                ret_cp = &cp_unused;
        *ret_truncated = false;
        if (n == 0)
                return 0;
        unsigned char b = s[0];
        if (b < 0x80) {
                *ret_cp = b;
                return 1;
        }
        size_t need;
        uint32_t cp;
        unsigned char lo = 0x80, hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) {
                need = 2;
                cp = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
                need = 3;
                cp = b & 0x0F;
                if (b == 0xE0)
                        lo = 0xA0;
                else if (b == 0xED)
                        hi = 0x9F;  /* no surrogates */
        } else if (b >= 0xF0 && b <= 0xF4) {
                need = 4;
                cp = b & 0x07;
                if (b == 0xF0)
                        lo = 0x90;
                else if (b == 0xF4)
                        hi = 0x8F;
        } else
                return 0;
        for (size_t k = 1; k < need; k++) {
                if (k >= n) {
                        *ret_truncated = true;
                        return 0;
                }
                unsigned char c = s[k];
                if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF))
                        return 0;
                cp = (cp << 6) | (c & 0x3F);
        }
        *ret_cp = cp;
        return need;
}

size_t utf8_encode(uint32_t cp, char out[4]) {
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xC0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return 0;
        if (cp < 0x10000) {
                out[0] = (char)(0xE0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[2] = (char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

int utf8_hex4(const char *s, size_t n, uint32_t *ret) {
        uint32_t v = 0;
        if (n < 4)
                return -EINVAL;
        for (int i = 0; i < 4; i++) {
                char c = s[i];
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (d < 0)
                        return -EINVAL;
                v = v << 4 | (uint32_t)d;
        }
        *ret = v;
        return 0;
}

size_t utf8_char_start(const char *s, size_t len, size_t at) {
        for (int k = 0; k < 3 && at > 0 && at < len && ((unsigned char)s[at] & 0xc0) == 0x80; k++)
                at--;
        return at;
}
