/* search_evidence.c -- what a failure's line says of the matrix: the flags it names, the
 * values it quotes or names, its signature (docs/search.md, "How evidence is read"). */
#include "search/search.h"
#include "search/search_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text/buf.h"
#include "base/util.h"

/* Where evidence names flag at or after from: its name without leading dashes, '-', '_'
 * and ' ' alike, case ignored, not inside a longer word; the end of the name, or NULL.
 * Names shorter than 3 characters never match. The same for an axis's words ("K cache"). */
static const char *find_flag(const char *evidence, const char *from, const char *flag) {
        if (!evidence || !flag)
                return NULL;
        while (*flag == '-')
                flag++;
        size_t n = strlen(flag);
        if (n < 3)
                return NULL;
        for (const char *p = from; *p; p++) {
                if (p > evidence && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
                        continue;
                size_t i = 0;
                for (; i < n && p[i]; i++) {
                        char x = (char)tolower((unsigned char)p[i]), y = (char)tolower((unsigned char)flag[i]);
                        if (x == '_' || x == ' ')
                                x = '-';
                        if (y == '_' || y == ' ')
                                y = '-';
                        if (x != y)
                                break;
                }
                if (i == n && !isalnum((unsigned char)p[n]) && p[n] != '_')
                        return p + n;
        }
        return NULL;
}

bool search_names_flag(const char *evidence, const char *flag) {
        return find_flag(evidence, evidence, flag) != NULL;
}

/* The value of axis a that evidence quotes right after a mention of a's flag ("--kv fp8",
 * "--kv=fp8", "--kv 'fp8'"), as its index: own when one mention quotes the value the cell
 * has; *ret_other another value some mention quotes, or -1. */
void search_quoted_values(const struct search_space *s, size_t a, const char *evidence, size_t cell_value,
                          bool *ret_own, long *ret_other) {
        *ret_own = false;
        *ret_other = -1;
        const char *p = evidence;
        while ((p = find_flag(evidence, p, s->axis_flags[a]))) {
                while (*p == ' ' || *p == '=' || *p == ':' || *p == '\'' || *p == '"' || *p == '`')
                        p++;
                size_t n = strcspn(p, " \t\n,;)]}'\"`");
                while (n > 0 && p[n - 1] == '.')
                        n--;
                for (size_t v = 0; n > 0 && s->value_names && v < s->n_values[a]; v++) {
                        const char *name = s->value_names[a][v];
                        if (!name || strlen(name) != n || strncasecmp(p, name, n) != 0)
                                continue;
                        if (v == cell_value)
                                *ret_own = true;
                        else if (*ret_other < 0)
                                *ret_other = (long)v;
                }
        }
}

/* ---- what evidence says: its signature, the value it names ---------------------------- */

/* A character of a word of evidence: "q8_0", "n_embd_head_k", "/models/x.gguf", "0x7f3a". */
static bool word_char(char ch) {
        return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '-' || ch == '/';
}

/* The axis and value of s named name (n characters, case ignored) on axis a, or -1. */
long search_value_on(const struct search_space *s, size_t a, const char *name, size_t n) {
        for (size_t v = 0; s->value_names && v < s->n_values[a]; v++) {
                const char *x = s->value_names[a][v];
                if (x && strlen(x) == n && strncasecmp(x, name, n) == 0)
                        return (long)v;
        }
        return -1;
}

static bool is_value(const struct search_space *s, const char *name, size_t n) {
        for (size_t a = 0; a < s->n_axes; a++)
                if (search_value_on(s, a, name, n) >= 0)
                        return true;
        return false;
}

/* A word's length without the dots and dashes that end a sentence or a range. */
static size_t word_trim(const char *w, size_t n) {
        while (n > 0 && (w[n - 1] == '.' || w[n - 1] == '-'))
                n--;
        return n;
}

#define SIGNATURE_MAX 512

char *search_signature(const struct search_space *s, const char *kind, const char *evidence) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, SIGNATURE_MAX);
        buf_printf(&b, "%s:", kind ? kind : "failed");
        bool space = true;
        for (const char *p = evidence ? evidence : ""; *p && !b.truncated;) {
                if (isspace((unsigned char)*p)) {
                        space = true;
                        p++;
                        continue;
                }
                if (space)
                        buf_append(&b, " ", 1);
                space = false;
                if (!word_char(*p)) {
                        buf_append(&b, p++, 1);
                        continue;
                }
                size_t n = 0;
                while (word_char(p[n]))
                        n++;
                size_t t = word_trim(p, n);
                bool digit = false, hex = t >= 6;
                for (size_t i = 0; i < t; i++) {
                        digit |= isdigit((unsigned char)p[i]) != 0;
                        hex &= isxdigit((unsigned char)p[i]) != 0;
                }
                if (t > 0 && is_value(s, p, t))
                        buf_append(&b, p, t);                    /* a value of an axis: kept */
                else if (t > 0 && memchr(p, '/', t) && t > 1)
                        buf_puts(&b, "<path>");
                else if (digit && (hex || (t > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))))
                        buf_append(&b, "#", 1);                     /* a hex id, an address */
                else
                        for (size_t i = 0; i < t;) {           /* numbers, timestamps, pids */
                                if (isdigit((unsigned char)p[i])) {
                                        buf_append(&b, "#", 1);
                                        while (i < t && isdigit((unsigned char)p[i]))
                                                i++;
                                } else
                                        buf_append(&b, p + i++, 1);
                        }
                p += t > 0 ? t : n;
        }
        return buf_detach(&b);
}

/* How far the nearest mention of axis a (its flag, or one of its words) is from the word
 * [p, q) of evidence; SIZE_MAX when none. */
size_t search_axis_distance(const struct search_space *s, size_t a, const char *evidence, const char *p, const char *q) {
        size_t best = SIZE_MAX;
        const char *const none[] = {NULL};
        const char *const *words = s->axis_words && s->axis_words[a] ? s->axis_words[a] : none;
        for (size_t w = 0; w == 0 || words[w - 1]; w++) {
                const char *phrase = w == 0 ? (s->axis_flags ? s->axis_flags[a] : NULL) : words[w - 1];
                if (!phrase)
                        continue;
                size_t len = strlen(phrase);
                while (len > 0 && *phrase == '-') {
                        phrase++;
                        len--;
                }
                for (const char *e = evidence; (e = find_flag(evidence, e, phrase));) {
                        const char *start = e - len;
                        size_t d = e <= p ? (size_t)(p - e) : start >= q ? (size_t)(start - q) : 0;
                        best = MIN(best, d);
                }
        }
        return best;
}

/* Words beside a value that tell its axis: within this many characters. */
#define AXIS_WORDS_NEAR 40

static bool distinctive(const char *name, size_t n) {
        bool alpha = false, other = false;
        for (size_t i = 0; i < n; i++) {
                alpha |= isalpha((unsigned char)name[i]) != 0;
                other |= isdigit((unsigned char)name[i]) || name[i] == '_';
        }
        return alpha && other && n >= 3;
}

bool search_names_value(const struct search_space *s, size_t k, const char *evidence, size_t *ret_axis) {
        if (!evidence || !s->value_names || k >= s->n_cells || s->n_axes > 16)
                return false;
        const size_t *c = s->choice + k * s->n_axes;
        long named = -1;
        for (const char *p = evidence; *p;) {
                if (!word_char(*p) || (p > evidence && word_char(p[-1]))) {
                        p++;
                        continue;
                }
                size_t n = 0;
                while (word_char(p[n]))
                        n++;
                size_t t = word_trim(p, n);
                /* the axes of the space with a value of this name, and the cell's among them */
                size_t shared = 0, cands[16], nc = 0;
                for (size_t a = 0; t > 0 && a < s->n_axes; a++) {
                        long v = search_value_on(s, a, p, t);
                        shared += v >= 0;
                        if (v >= 0 && (size_t)v == c[a])
                                cands[nc++] = a;
                }
                long pick = -1;
                size_t near = SIZE_MAX, ties = 0;
                for (size_t i = 0; i < nc; i++) {
                        size_t d = search_axis_distance(s, cands[i], evidence, p, p + t);
                        if (d > AXIS_WORDS_NEAR)
                                continue;
                        if (d < near) {
                                near = d;
                                pick = (long)cands[i];
                                ties = 0;
                        } else if (d == near)
                                ties++;
                }
                if (ties)
                        pick = -1;
                /* a distinctive value of one axis needs no words beside it */
                if (pick < 0 && shared == 1 && nc == 1 && distinctive(p, t))
                        pick = (long)cands[0];
                if (pick >= 0) {
                        if (named >= 0 && named != pick)
                                return false; /* two values: a pair's doing, or unclear */
                        named = pick;
                }
                p += n;
        }
        if (named < 0)
                return false;
        /* a line that names another axis too speaks of a pair ("q8_0 requires flash_attn") */
        for (size_t a = 0; a < s->n_axes; a++)
                if (a != (size_t)named && search_axis_distance(s, a, evidence, evidence, evidence) != SIZE_MAX)
                        return false;
        *ret_axis = (size_t)named;
        return true;
}
