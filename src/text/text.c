/* text.c -- text that came from a server, a host or a user, made safe to show: escaped
 * for a terminal, Markdown or a quote, or cleaned to one plain line (rules in text.h). */
#include "text/text.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "base/util.h"

bool text_zero_width(uint32_t cp) {
        return (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff || cp == 0x180e;
}

bool text_hidden_control(uint32_t cp) {
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || text_zero_width(cp) || (cp >= 0x200e && cp <= 0x200f) ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfffe || cp == 0xffff;
}

/* The escaped form of the character at p (avail bytes there): into tmp (or a constant),
 * its length in bytes of input in *ret_n and in characters shown in *ret_chars. */
static const char *escape_one(const unsigned char *p, size_t avail, enum text_mode mode, char tmp[static 16],
                              size_t *ret_n, size_t *ret_chars) {
        bool upper = mode == TEXT_QUOTED;
        uint32_t cp = 0;
        size_t n = utf8_decode(p, avail, &cp, NULL);
        const char *piece = tmp;
        *ret_chars = 0;
        if (n == 0) {
                snprintf(tmp, 16, upper ? "\\x%02X" : "\\x%02x", *p);
                n = 1;
        } else if (cp == '\n')
                piece = mode == TEXT_MARKDOWN ? "<br>" : "\\n";
        else if (cp == '\t')
                piece = "\\t";
        else if (cp == '\r')
                piece = "\\r";
        else if (cp == '\\' && mode == TEXT_QUOTED)
                piece = "\\\\";
        else if (cp < 0x20 || cp == 0x7f)
                snprintf(tmp, 16, upper ? "\\x%02X" : "\\x%02x", (unsigned)cp);
        else if (text_hidden_control(cp))
                snprintf(tmp, 16, upper ? "\\u%04X" : "\\u%04x", (unsigned)cp);
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
                        escape_one(p, SIZE_MAX, mode, tmp, &n, &chars);
                        total += chars;
                }
                /* Cut one short to leave room for the ellipsis. */
                if (total > max_chars)
                        limit = max_chars - 1;
        }
        total = 0;
        for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0; p += n) {
                const char *piece = escape_one(p, SIZE_MAX, mode, tmp, &n, &chars);
                if (total + chars > limit)
                        return buf_puts(out, "…");
                r = buf_puts(out, piece);
                total += chars;
        }
        return r;
}

size_t text_escape_range(struct buf *out, const char *s, size_t from, size_t to, size_t max, enum text_mode mode) {
        const unsigned char *u = (const unsigned char *)s;
        size_t i = from, start_len = out->len;
        while (i < to) {
                char tmp[16];
                size_t n, chars;
                const char *piece = escape_one(u + i, to - i, mode, tmp, &n, &chars);
                size_t len = strlen(piece);
                if (out->len - start_len + len > max || buf_append(out, piece, len) < 0)
                        break;
                i += n;
        }
        return i;
}

int text_escape_html(struct buf *out, const char *s, size_t max_chars) {
        size_t shown = 0, n;
        char tmp[16];
        int r = 0;
        if (!s)
                return 0;
        for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0; p += n) {
                if (max_chars > 0 && shown >= max_chars)
                        return buf_puts(out, "…");
                uint32_t cp = 0;
                const char *piece = tmp;
                n = utf8_decode(p, SIZE_MAX, &cp, NULL); /* NUL-terminated: safe */
                if (n == 0) {
                        snprintf(tmp, sizeof(tmp), "\\x%02x", *p);
                        n = 1;
                } else if (cp == '&')
                        piece = "&amp;";
                else if (cp == '<')
                        piece = "&lt;";
                else if (cp == '>')
                        piece = "&gt;";
                else if (cp == '"')
                        piece = "&quot;";
                else if (cp == '\'')
                        piece = "&#39;";
                else if (cp == '\r')
                        /* CRLF is one line end; a lone CR (progress bars) starts a line too. */
                        piece = p[1] == '\n' ? "" : "\n";
                else if (cp == '\n' || cp == '\t') {
                        tmp[0] = (char)cp;
                        tmp[1] = 0;
                } else if (cp < 0x20 || cp == 0x7f)
                        snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned)cp);
                else if (text_hidden_control(cp))
                        /* shown, not obeyed: C1 controls and the bidi overrides that reorder text */
                        snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned)cp);
                else {
                        memcpy(tmp, p, n);
                        tmp[n] = 0;
                }
                r = buf_puts(out, piece);
                shown++;
        }
        return r;
}

char *text_clean(const char *s, size_t len, size_t max) {
        const unsigned char *u = (const unsigned char *)s;
        while (len > 0 && (*u == ' ' || *u == '\t' || *u == '\r' || *u == '\n')) {
                u++;
                len--;
        }
        while (len > 0 && (u[len - 1] == ' ' || u[len - 1] == '\t' || u[len - 1] == '\r' || u[len - 1] == '\n'))
                len--;
        char *out = malloc(MIN(len, max) + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                size_t k = utf8_decode(u + i, len - i, NULL, NULL);
                if (k == 0 || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
                        if (o + 1 > max)
                                break;
                        out[o++] = '?';
                        i += k ? k : 1;
                        continue;
                }
                if (o + k > max)
                        break;
                memcpy(out + o, u + i, k);
                o += k;
                i += k;
        }
        out[o] = 0;
        return out;
}

size_t text_strip_ansi(char *s, size_t len) {
        size_t out = 0, i = 0;
        while (i < len) {
                if (s[i] != '\033') {
                        s[out++] = s[i++];
                        continue;
                }
                i++;
                if (i < len && s[i] == '[') { /* CSI: parameters, intermediates, a final byte */
                        for (i++; i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] <= 0x3f; i++)
                                ;
                        if (i < len && (unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e)
                                i++;
                } else if (i < len && s[i] == ']') { /* OSC: up to BEL or ESC \ (or the line's end) */
                        for (i++; i < len && s[i] != '\a' && s[i] != '\n'; i++)
                                if (s[i] == '\033' && i + 1 < len && s[i + 1] == '\\') {
                                        i++;
                                        break;
                                }
                        if (i < len && s[i] != '\n')
                                i++;
                } else { /* ESC, intermediates, a final byte (ESC ( B; ESC 7) */
                        while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] <= 0x2f)
                                i++;
                        if (i < len && (unsigned char)s[i] >= 0x30 && (unsigned char)s[i] <= 0x7e)
                                i++;
                }
        }
        return out;
}
