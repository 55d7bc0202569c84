/* text.c -- one way to show text that came from a server or a user: escaped for a
 * terminal or for Markdown (rules in text.h). */
#include "text.h"

#include <stdio.h>
#include <string.h>

#include "utf8.h"
#include "util.h"

/* Code points a terminal or a renderer would act on rather than show: C1 controls (some
 * terminals read U+009B as CSI) and the bidirectional overrides that reorder text. */
bool text_hidden_control(uint32_t cp) {
        return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
               cp == 0x200e || cp == 0x200f || cp == 0xfeff;
}


/* The escaped form of the character at p: into tmp (or a constant), its length in bytes
 * of input in *ret_n and in characters shown in *ret_chars. */
static const char *escape_one(const unsigned char *p, enum text_mode mode, char tmp[static 16], size_t *ret_n,
                              size_t *ret_chars) {
        uint32_t cp = 0;
        size_t n = utf8_decode(p, SIZE_MAX, &cp, NULL);
        const char *piece = tmp;
        *ret_chars = 0;
        if (n == 0) {
                snprintf(tmp, 16, "\\x%02x", *p);
                n = 1;
        } else if (cp == '\n')
                piece = mode == TEXT_MARKDOWN ? "<br>" : "\\n";
        else if (cp == '\t')
                piece = "\\t";
        else if (cp == '\r')
                piece = "\\r";
        else if (cp < 0x20 || cp == 0x7f)
                snprintf(tmp, 16, "\\x%02x", (unsigned)cp);
        else if (text_hidden_control(cp))
                snprintf(tmp, 16, "\\u%04x", (unsigned)cp);
        else if (mode == TEXT_MARKDOWN && cp == '<')
                piece = "&lt;";
        else if (mode == TEXT_MARKDOWN && cp == '>')
                piece = "&gt;";
        else if (mode == TEXT_MARKDOWN && cp == '&')
                piece = "&amp;";
        else if (mode == TEXT_MARKDOWN && cp < 0x80 && strchr("|`\\*_[]~#!", (int)cp))
                snprintf(tmp, 16, "\\%c", (char)cp);
        else {
                memcpy(tmp, p, n);
                tmp[n] = 0;
                *ret_chars = 1;
        }
        if (*ret_chars == 0)
                *ret_chars = piece[0] == '&' || piece[0] == '<' ? 1 : strlen(piece);
        *ret_n = n;
        return piece;
}

int text_escape(struct buf *out, const char *s, size_t max_chars, enum text_mode mode) {
        char tmp[16];
        size_t n, chars, total = 0, limit = SIZE_MAX;
        int r = 0;
        if (!s)
                return 0;
        if (max_chars > 0) {
                for (const unsigned char *p = (const unsigned char *)s; *p; p += n) {
                        escape_one(p, mode, tmp, &n, &chars);
                        total += chars;
                }
                /* Cut one short to leave room for the ellipsis. */
                if (total > max_chars)
                        limit = max_chars - 1;
        }
        total = 0;
        for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0; p += n) {
                const char *piece = escape_one(p, mode, tmp, &n, &chars);
                if (total + chars > limit)
                        return buf_puts(out, "…");
                r = buf_puts(out, piece);
                total += chars;
        }
        return r;
}

