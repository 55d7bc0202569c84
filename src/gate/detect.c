/* detect.c -- garbage detectors: runs, loops, low information, invalid text, soup, empty, NaN, HTTP.
 *
 * Every detector is tuned to stay quiet on correct answers, which are often short and
 * sometimes repetitive on purpose (counting, tables, code, refrains). The thresholds and
 * the reasons for them are in docs/detectors.md; tests/corpus/ is the data they were tuned
 * on. The text detectors run in this order, the first finding decides:
 *   invalid text (bytes) -> runs and loops (code points) -> only special-token names ->
 *   loops of sentences -> table fragments -> soup -> low information -> short loops;
 * then, on the answer only, the reasoning end tag; then, cut at the token limit, tokens
 * that print as nothing (usage against the text's size). A forced continuation (the
 * bench's ignore_eos) gets the subset that an honest one cannot trip: invalid text, runs
 * of one character, soup (judge_part).
 */
#include "gate/detect.h"
#include "base/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "text/buf.h"
#include "text/text.h"
#include "base/util.h"

/* Texts longer than this are judged on their first and last DETECT_WINDOW bytes only:
 * garbage fills an output or ends it, and the cost stays linear in a bounded size. */
#define DETECT_WHOLE_MAX ((size_t)2 << 20)
#define DETECT_WINDOW ((size_t)1 << 20)
/* Evidence: at most this many bytes of escaped text from the output. */
#define DETECT_EXCERPT_MAX 120
/* Loops: periods tried at the code-point level, and at the sentence level. */
#define LOOP_MAX_PERIOD 32
#define SEGMENT_MAX_PERIOD 16
/* Soup: words per window and the step between windows. */
#define SOUP_WINDOW 48
#define SOUP_STEP 24

struct finding {
        const char *cause;  /* static, NULL when nothing was found */
        size_t at;          /* byte offset in the judged text where the problem starts */
        char *what;         /* owned: a short description, e.g. "run of 64 x '!'" */
};

static void finding_release(struct finding *f) {
        free(f->what);
        *f = (struct finding){0};
}

/* ---- character classes ---------------------------------------------------------------- */

static bool is_space(uint32_t c) {
        return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xA0 || c == 0x1680 ||
               (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
               c == 0x205F || c == 0x3000;
}

static bool is_digit(uint32_t c) {
        return c >= '0' && c <= '9';
}

/* Characters that draw: rules, boxes, underlines, bars, dot leaders. Long runs of them are
 * normal in tables, ASCII art and banners, so they get much higher thresholds. */
static bool is_drawing(uint32_t c) {
        if (c < 0x80)
                return c && strchr("-=_*#~.:|+/\\^`'", (int)c);
        return c == 0x00B7 || c == 0x2026 || c == 0x2022 || c == 0x2014 || c == 0x2013 ||
               c == 0x2015 || c == 0x2500 || (c >= 0x2190 && c <= 0x21FF) ||
               (c >= 0x2500 && c <= 0x25FF) /* box drawing, blocks, geometric shapes */ ||
               (c >= 0x2B00 && c <= 0x2BFF) /* squares and arrows (game grids) */ ||
               (c >= 0x2800 && c <= 0x28FF) /* braille patterns, used for plots */;
}

static bool is_bracket(uint32_t c) {
        return c && c < 0x80 && strchr("()[]{}<>", (int)c);
}

enum family {
        FAM_NONE,
        FAM_LATIN,
        FAM_CYRILLIC,
        FAM_GREEK,
        FAM_ARABIC,
        FAM_HEBREW,
        FAM_INDIC,
        FAM_THAI,
        FAM_HAN,
        FAM_KANA,
        FAM_HANGUL,
        FAM_OTHER,
        _FAM_MAX,
};

/* The script family of a letter, FAM_NONE for anything that is not a letter. Combining
 * marks are FAM_NONE here but still part of a word (is_word_char). */
static enum family family_of(uint32_t c) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
                return FAM_LATIN;
        if (c < 0xC0)
                return c == 0xAA || c == 0xBA ? FAM_LATIN : FAM_NONE;
        if (c <= 0x24F)
                return c == 0xD7 || c == 0xF7 ? FAM_NONE : FAM_LATIN;
        if (c <= 0x2AF)
                return FAM_LATIN;
        if (c >= 0x370 && c <= 0x3FF)
                return c >= 0x3B1 || (c >= 0x386 && c <= 0x3A9) || c >= 0x3CA ? FAM_GREEK : FAM_NONE;
        if (c >= 0x400 && c <= 0x52F)
                return c >= 0x483 && c <= 0x489 ? FAM_NONE : FAM_CYRILLIC;
        if (c >= 0x531 && c <= 0x58F)
                return FAM_OTHER;  /* Armenian */
        if (c >= 0x5D0 && c <= 0x5F2)
                return FAM_HEBREW;
        if ((c >= 0x620 && c <= 0x64A) || (c >= 0x66E && c <= 0x6D3) || (c >= 0x6FA && c <= 0x6FF) ||
            (c >= 0x750 && c <= 0x77F) || (c >= 0x8A0 && c <= 0x8C9) || (c >= 0xFB50 && c <= 0xFDFF) ||
            (c >= 0xFE70 && c <= 0xFEFC))
                return FAM_ARABIC;
        if (c >= 0x900 && c <= 0xDFF) {
                if ((c >= 0x966 && c <= 0x96F) || c == 0x964 || c == 0x965)
                        return FAM_NONE;  /* Devanagari digits and danda */
                return FAM_INDIC;
        }
        if (c >= 0xE00 && c <= 0xEFF)
                return (c >= 0xE50 && c <= 0xE59) ? FAM_NONE : FAM_THAI;
        if ((c >= 0x10A0 && c <= 0x10FF) || (c >= 0x1200 && c <= 0x139F) || (c >= 0xF00 && c <= 0xFFF) ||
            (c >= 0x1000 && c <= 0x109F) || (c >= 0x1780 && c <= 0x18AF) || (c >= 0x13A0 && c <= 0x13FF))
                return FAM_OTHER;
        if ((c >= 0x1100 && c <= 0x11FF) || (c >= 0x3131 && c <= 0x318E) || (c >= 0xAC00 && c <= 0xD7A3))
                return FAM_HANGUL;
        if (c >= 0x1E00 && c <= 0x1EFF)
                return FAM_LATIN;
        if (c >= 0x1F00 && c <= 0x1FFF)
                return FAM_GREEK;
        if ((c >= 0x3041 && c <= 0x3096) || (c >= 0x30A1 && c <= 0x30FA) || c == 0x30FC ||
            (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9D))
                return FAM_KANA;
        if ((c >= 0x2E80 && c <= 0x2FDF) || c == 0x3005 || (c >= 0x3400 && c <= 0x4DBF) ||
            (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3134F))
                return FAM_HAN;
        if ((c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A))
                return FAM_LATIN;  /* fullwidth Latin */
        return FAM_NONE;
}

static bool is_combining(uint32_t c) {
        return (c >= 0x300 && c <= 0x36F) || (c >= 0x64B && c <= 0x65F) || c == 0x670 ||
               (c >= 0x591 && c <= 0x5C7) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF) ||
               (c >= 0xFE20 && c <= 0xFE2F) || c == 0x3099 || c == 0x309A;
}

/* Han characters that real text rarely uses: extension blocks, compatibility ideographs and
 * radicals. A tokenizer's rarest CJK tokens come from here. */
static bool is_rare_han(uint32_t c) {
        return (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x3134F) ||
               (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2E80 && c <= 0x2FDF);
}

static bool is_cjk_punct(uint32_t c) {
        return (c >= 0x3001 && c <= 0x3003) || (c >= 0x3008 && c <= 0x3011) || c == 0x30FB ||
               (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF1F);
}

/* ---- escaping and excerpts ---------------------------------------------------------- */

char *detect_excerpt(const char *s, size_t len, size_t at, size_t max) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (!s)
                len = 0;
        if (at > len)
                at = len;
        /* A little context before the spot, most of the room after it. */
        size_t before = max / 5;
        size_t from = utf8_char_start(s, len, at > before ? at - before : 0);
        if (from > 0 && buf_puts(&b, "...") < 0)
                return NULL;
        size_t stop = text_escape_range(&b, s, from, len, max, TEXT_QUOTED);
        if (stop < len && buf_puts(&b, "...") < 0)
                return NULL;
        return buf_detach(&b);
}

char *detect_escape(const char *s, size_t len) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        text_escape_range(&b, s ? s : "", 0, s ? len : 0, SIZE_MAX, TEXT_QUOTED);
        return buf_detach(&b);
}

/* A unit of code points, escaped and quoted, for descriptions: '\n\n</'. */
static char *unit_string(const uint32_t *cps, size_t p) {
        char tmp[4 * LOOP_MAX_PERIOD + 1];
        size_t n = 0;
        for (size_t i = 0; i < p && i < LOOP_MAX_PERIOD; i++)
                n += utf8_encode(cps[i], tmp + n);
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (buf_puts(&b, "'") < 0)
                return NULL;
        text_escape_range(&b, tmp, 0, n, 48, TEXT_QUOTED);
        if (buf_puts(&b, "'") < 0)
                return NULL;
        return buf_detach(&b);
}

/* ---- invalid text ------------------------------------------------------------------- */

/* Bytes 0x80-0x9F of Windows-1252, as the code points they decode to: the second half of
 * UTF-8 read as CP1252 ("â€™" for a right quote). */
static bool is_cp1252_high(uint32_t c) {
        static const uint16_t set[] = {0x20AC, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                       0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x017D, 0x2018,
                                       0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC,
                                       0x2122, 0x0161, 0x203A, 0x0153, 0x017E, 0x0178};
        if (c >= 0x80 && c <= 0xBF)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(set); i++)
                if (set[i] == c)
                        return true;
        return false;
}

static int check_invalid(const char *s, size_t n, bool length_cut, struct finding *f) {
        const unsigned char *u = (const unsigned char *)s;
        size_t zw_run = 0, zw_start = 0, cyr_moji = 0, cyr_moji_at = 0;
        uint32_t prev = 0;
        size_t prev_at = 0;
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                bool trunc;
                size_t k = utf8_decode(u + i, n - i, &cp, &trunc);
                if (k == 0) {
                        if (trunc)
                                break;  /* a character cut by the end of the output */
                        f->cause = "invalid-text";
                        f->at = i;
                        f->what = strdup_printf("invalid UTF-8 byte 0x%02X at byte %zu", u[i], i);
                        return f->what ? 1 : -ENOMEM;
                }
                if ((cp < 0x20 && !(cp >= '\t' && cp <= '\r')) || cp == 0x7F ||
                    (cp >= 0x80 && cp <= 0x9F && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF) {
                        f->cause = "invalid-text";
                        f->at = i;
                        f->what = cp == 0 ? strdup_printf("NUL at byte %zu", i)
                                          : strdup_printf("control character U+%04X at byte %zu", (unsigned)cp, i);
                        return f->what ? 1 : -ENOMEM;
                }
                if (text_zero_width(cp)) {
                        if (zw_run++ == 0)
                                zw_start = i;
                        if (zw_run == 3) {
                                f->cause = "invalid-text";
                                f->at = zw_start;
                                f->what = strdup_printf("run of zero-width characters at byte %zu", zw_start);
                                return f->what ? 1 : -ENOMEM;
                        }
                } else
                        zw_run = 0;
                if (cp == 0xFFFD) {
                        /* Forgiven only as the very last character of an output cut at the
                         * token limit: a detokenizer may flush half a character there. */
                        size_t j = i + k;
                        while (j < n && (u[j] == ' ' || u[j] == '\n' || u[j] == '\t' || u[j] == '\r'))
                                j++;
                        if (!(length_cut && j == n)) {
                                f->cause = "invalid-text";
                                f->at = i;
                                f->what = strdup_printf("U+FFFD replacement character at byte %zu", i);
                                return f->what ? 1 : -ENOMEM;
                        }
                }
                /* Mojibake: UTF-8 decoded as Latin-1/CP1252. "Ã©", "Â°", "â€™" never occur
                 * in real text; "Ð¿Ñ€" (Cyrillic read as Latin-1) needs two pairs. */
                if (((prev == 0xC3 || prev == 0xC2) && is_cp1252_high(cp)) || (prev == 0xE2 && cp == 0x20AC)) {
                        f->cause = "invalid-text";
                        f->at = prev_at;
                        f->what = strdup_printf("mojibake (UTF-8 read as Latin-1) at byte %zu", prev_at);
                        return f->what ? 1 : -ENOMEM;
                }
                if ((prev == 0xD0 || prev == 0xD1) && is_cp1252_high(cp)) {
                        if (cyr_moji++ == 0)
                                cyr_moji_at = prev_at;
                        if (cyr_moji == 2) {
                                f->cause = "invalid-text";
                                f->at = cyr_moji_at;
                                f->what = strdup_printf("mojibake (UTF-8 read as Latin-1) at byte %zu", cyr_moji_at);
                                return f->what ? 1 : -ENOMEM;
                        }
                }
                prev = cp;
                prev_at = i;
                i += k;
        }
        return 0;
}

/* ---- decoded text --------------------------------------------------------------------- */

/* A text decoded to code points, with the byte offset of each (plus one past the end). */
struct dtext {
        const char *s;
        size_t len;
        uint32_t *cp;
        size_t *off;   /* n + 1 entries */
        size_t n;
        size_t first, last;  /* [first, last) is the text without surrounding whitespace */
        size_t base;         /* byte offset of s in the whole output, for findings */
};

static void dtext_release(struct dtext *t) {
        free(t->cp);
        free(t->off);
        *t = (struct dtext){0};
}

/* Decodes s (already checked, invalid bytes are skipped anyway). */
static int dtext_init(struct dtext *t, const char *s, size_t len, size_t base) {
        *t = (struct dtext){.s = s, .len = len, .base = base};
        t->cp = malloc((len + 1) * sizeof(uint32_t));
        t->off = malloc((len + 1) * sizeof(size_t));
        if (!t->cp || !t->off) {
                dtext_release(t);
                return -ENOMEM;
        }
        const unsigned char *u = (const unsigned char *)s;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                bool trunc;
                size_t k = utf8_decode(u + i, len - i, &cp, &trunc);
                if (k == 0) {
                        if (trunc)
                                break;
                        i++;
                        continue;
                }
                t->cp[t->n] = cp;
                t->off[t->n] = i;
                t->n++;
                i += k;
        }
        t->off[t->n] = len;
        t->first = 0;
        while (t->first < t->n && (is_space(t->cp[t->first]) || text_zero_width(t->cp[t->first])))
                t->first++;
        t->last = t->n;
        while (t->last > t->first && (is_space(t->cp[t->last - 1]) || text_zero_width(t->cp[t->last - 1])))
                t->last--;
        return 0;
}

/* ---- runs and loops ------------------------------------------------------------------- */

/* U_SPECIAL: a unit that is one special-token name, "<unk>", "</s>", "<|im_end|>",
 * "[control_47]" (see unit_is_special); only ever a unit, never a code point's class. */
enum uclass { U_WS, U_DRAW, U_BRACKET, U_PUNCT, U_DIGIT, U_ALNUM, U_SPECIAL, _U_MAX };

/* Repeats needed to fire, by class, for a run of one code point (p = 1) and for a longer
 * unit (p >= 2):
 *   any:      anywhere in the output;
 *   cov:      when the stretch covers half the output or runs to its end;
 *   len:      the same, when the server said finish_reason "length" (it never stopped);
 *   whole:    when the stretch is (nearly) the whole output;
 *   lenwhole: finish_reason "length", and the stretch is the whole output, or half of it
 *             and runs to its end: the model was saying one thing over and over when it was
 *             cut, so a handful is enough ("výstup výstup výstup výstup", "ラン集集集集集集集").
 * 0 means never. Tuned on tests/corpus (docs/detectors.md says why each). */
struct limits {
        unsigned any, cov, len, whole, lenwhole;
};

static const struct limits run_limits[_U_MAX] = {
        [U_WS] = {200, 0, 0, 0, 0},
        [U_DRAW] = {200, 64, 32, 24, 24},
        [U_BRACKET] = {24, 16, 8, 4, 4},
        [U_PUNCT] = {16, 8, 4, 4, 4},
        [U_DIGIT] = {128, 40, 16, 32, 8},
        [U_ALNUM] = {32, 16, 8, 12, 4},
};

/* Whole-output repetition of a word ends at 16, not 12: "repeat the word test 12 times"
 * is a request models are trained on (docs/testbed-model.md). */
static const struct limits unit_limits[_U_MAX] = {
        [U_WS] = {64, 0, 0, 0, 0},
        [U_DRAW] = {64, 32, 16, 16, 16},
        [U_BRACKET] = {16, 8, 4, 8, 4},
        [U_PUNCT] = {16, 8, 4, 8, 4},
        [U_DIGIT] = {32, 16, 8, 12, 6},
        [U_ALNUM] = {32, 16, 8, 16, 4},
        [U_SPECIAL] = {12, 6, 4, 3, 3},
};

/* '#' draws (headings, comment banners) but a whole output of it is the "########" of a
 * broken kernel: drawing limits, except when it is (nearly) the whole output or the tail of
 * one that never stopped. */
static const struct limits hash_run_limits = {200, 64, 16, 8, 8};

/* "<|...|>" names are only ever special tokens (ChatML, Llama 3, reserved ones): three in a
 * row are never an answer. */
static const struct limits pipe_limits = {3, 3, 2, 2, 2};

static enum uclass classify_cp(uint32_t c) {
        if (is_space(c))
                return U_WS;
        if (is_digit(c))
                return U_DIGIT;
        if (family_of(c) != FAM_NONE || is_combining(c))
                return U_ALNUM;
        if (is_drawing(c))
                return U_DRAW;
        if (is_bracket(c))
                return U_BRACKET;
        return U_PUNCT;
}

static enum uclass classify_unit(const uint32_t *u, size_t p) {
        /* '+' draws box corners, but a run of it is the "++++++++" of a broken kernel. The
         * long-vowel mark 'ー' is a letter in a word (ラーメン), and a rule when it runs. */
        if (p == 1)
                return u[0] == '+' ? U_PUNCT : u[0] == 0x30FC ? U_DRAW : classify_cp(u[0]);
        bool letter = false, digit = false, other = false, nonspace = false;
        for (size_t i = 0; i < p; i++) {
                enum uclass c = classify_cp(u[i]);
                if (c == U_ALNUM)
                        letter = true;
                else if (c == U_DIGIT)
                        digit = true;
                else if (c == U_BRACKET || c == U_PUNCT)
                        other = true;
                if (c != U_WS)
                        nonspace = true;
        }
        if (letter)
                return U_ALNUM;
        if (digit)
                return U_DIGIT;
        if (!nonspace)
                return U_WS;
        return other ? U_PUNCT : U_DRAW;
}

/* True when some rotation of the unit is one special-token name, with whitespace after it
 * or not: "<" or "[", then letters, digits and "|_/-.:", then ">" or "]" ("<unk>", "</s>",
 * "<|im_end|>", "<unused12>", "[control_47] "; "[x]" is too short). *ret_pipe: the "<|...|>"
 * form. HTML tags have that shape too, hence the limits: "<br><br>" passes, a run of them
 * covering the output does not. */
static bool unit_is_special(const uint32_t *u, size_t p, bool *ret_pipe) {
        if (p < 3)
                return false;
        for (size_t j = 0; j < p; j++) {
                uint32_t open = u[j], close = open == '<' ? '>' : open == '[' ? ']' : 0;
                if (!close)
                        continue;
                size_t k = 1;
                bool letter = false;
                for (; k < p; k++) {
                        uint32_t c = u[(j + k) % p];
                        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                                letter = true;
                        else if (!(is_digit(c) || (c && c < 0x80 && strchr("|_/-.:", (int)c))))
                                break;
                }
                /* "[x]" is a ticked box; "<s>" is Llama's BOS. */
                if (k < (open == '[' ? 3 : 2) || k >= p || u[(j + k) % p] != close || !letter)
                        continue;
                size_t end = k;
                for (k = end + 1; k < p && is_space(u[(j + k) % p]); k++)
                        ;
                if (k < p)
                        continue;
                *ret_pipe = open == '<' && u[(j + 1) % p] == '|' && u[(j + end - 1) % p] == '|';
                return true;
        }
        return false;
}

/* True when the unit is one word of letters or digits with whitespace around it (" the",
 * "0 "): a repeated token. Counted cyclically, so " the" and "the " are both one word.
 * Punctuation with whitespace ("\n\n</") is a loop. */
static bool unit_is_token(const uint32_t *u, size_t p) {
        size_t words = 0, spaces = 0;
        bool alnum = false;
        for (size_t i = 0; i < p; i++) {
                if (is_space(u[i]))
                        spaces++;
                else if (is_space(u[(i + p - 1) % p]))
                        words++;
                enum uclass c = classify_cp(u[i]);
                if (c == U_ALNUM || c == U_DIGIT)
                        alnum = true;
        }
        return alnum && spaces > 0 && words == 1;
}

/* The smallest period of u, so that "!!" is judged as a run of '!', not a loop of "!!". */
static bool unit_is_primitive(const uint32_t *u, size_t p) {
        for (size_t d = 1; d < p; d++) {
                if (p % d)
                        continue;
                size_t i;
                for (i = 0; i + d < p; i++)
                        if (u[i] != u[i + d])
                                break;
                if (i + d >= p)
                        return false;
        }
        return true;
}

static unsigned limit_for(const struct limits *l, bool length_cut, double coverage, bool tail) {
        unsigned need = l->any;
        if (l->whole && coverage >= 0.9)
                need = MIN(need, l->whole);
        if (l->lenwhole && length_cut && coverage >= 0.5 && (tail || coverage >= 0.9))
                need = MIN(need, l->lenwhole);
        if (coverage >= 0.5 || tail) {
                unsigned c = length_cut ? l->len : l->cov;
                if (c)
                        need = MIN(need, c);
        }
        return need;
}

struct loop_hit {
        size_t start, p, cover, repeats;  /* in code points */
        enum uclass cls;
};

/* max_period 1 judges runs of one character only (the forced subset, which also leaves
 * whitespace runs alone: see detect.h). */
static int check_loops(const struct dtext *t, bool length_cut, size_t max_period, bool forced, struct finding *f) {
        size_t total = t->last - t->first;
        if (total < 2)
                return 0;
        struct loop_hit best = {0};
        for (size_t p = 1; p <= max_period && p < total; p++) {
                size_t streak = 0;
                for (size_t i = t->first; i + p <= t->last; i++) {
                        bool eq = i + p < t->last && t->cp[i] == t->cp[i + p];
                        if (eq) {
                                streak++;
                                continue;
                        }
                        if (streak + p >= 2 * p) {
                                size_t start = i - streak, cover = streak + p;
                                /* Rounded: "OK OK OK" is three repeats of "OK ". */
                                size_t repeats = (2 * cover + p) / (2 * p);
                                const uint32_t *unit = t->cp + start;
                                /* Two repeats count only for "<|...|>" names (pipe_limits). */
                                if ((repeats >= 3 || (repeats == 2 && p > 4 && unit[1] == '|')) &&
                                    cover > best.cover && unit_is_primitive(unit, p)) {
                                        enum uclass cls = classify_unit(unit, p);
                                        bool pipe = false;
                                        if (p > 1 && unit_is_special(unit, p, &pipe))
                                                cls = U_SPECIAL;
                                        const struct limits *l = p == 1 ? (unit[0] == '#' ? &hash_run_limits
                                                                                          : &run_limits[cls])
                                                                 : pipe ? &pipe_limits
                                                                        : &unit_limits[cls];
                                        double coverage = (double)cover / (double)total;
                                        bool tail = start + cover >= t->last;
                                        unsigned need = limit_for(l, length_cut, coverage, tail);
                                        /* Forced, the end is where the bench cut, maybe in the
                                         * middle of a banner, a rule or a long number after a
                                         * short start: only the collapse characters ('!', '+',
                                         * '?', emoji) keep the lower limits of coverage; the
                                         * others fire anywhere at their highest limit, or
                                         * when the run is all of the output. */
                                        if (forced && cls != U_PUNCT) {
                                                need = l->any;
                                                if (l->whole && cover == total)
                                                        need = MIN(need, l->whole);
                                        }
                                        /* Nor letters and digits: forced past its end a
                                         * model may stutter on one (the testbed's reference
                                         * backend wrote 57 'O's before its 'K'), and a
                                         * number may run on. A whole output of one
                                         * letter of another script ('的的的…') is still
                                         * a kernel's; of one ASCII letter it is as
                                         * likely a stand-in's filler. */
                                        if (forced && (cls == U_DIGIT ||
                                                       (cls == U_ALNUM && (cover != total || unit[0] < 0x80))))
                                                need = 0;
                                        /* Digits that continue a number ("10000...", "0.3333...")
                                         * are a googol or a repeating decimal: only the
                                         * anywhere limit applies. */
                                        if (cls == U_DIGIT && start > t->first &&
                                            (is_digit(t->cp[start - 1]) || t->cp[start - 1] == '.' ||
                                             t->cp[start - 1] == ','))
                                                need = l->any;
                                        /* A model forced past its end may pad with
                                         * newlines or spaces: that is not a fault. */
                                        if (forced && cls == U_WS)
                                                need = 0;
                                        if (need && repeats >= need)
                                                best = (struct loop_hit){start, p, cover, repeats, cls};
                                }
                        }
                        streak = 0;
                }
        }
        if (!best.cover)
                return 0;
        /* A stretch that starts mid-word ("Na na na": 'a n') is shown from the next word
         * start ('na '), pointing at its first whole occurrence; a special-token name from
         * its opening bracket. */
        if (best.cls == U_SPECIAL) {
                for (size_t k = 0; k < best.p; k++)
                        if (t->cp[best.start + k] == '<' || t->cp[best.start + k] == '[') {
                                best.start += k;
                                best.cover -= k;
                                break;
                        }
        } else if (best.p > 1 && !is_space(t->cp[best.start]))
                for (size_t k = 0; k < best.p && best.cover - k >= best.p; k++) {
                        size_t i = best.start + k;
                        if (!is_space(t->cp[i]) && i > t->first && is_space(t->cp[i - 1])) {
                                best.start = i;
                                best.cover -= k;
                                break;
                        }
                }
        _cleanup_free_ char *u = unit_string(t->cp + best.start, best.p);
        if (!u)
                return -ENOMEM;
        bool token = best.p == 1 || best.cls == U_SPECIAL || unit_is_token(t->cp + best.start, best.p);
        f->cause = token ? "repeat" : "loop";
        f->at = t->base + t->off[best.start];
        if (best.cls == U_SPECIAL)
                f->what = strdup_printf("special-token name %s repeated %zu times at byte %zu", u, best.repeats, f->at);
        else if (best.p == 1)
                f->what = strdup_printf("run of %zu x %s at byte %zu", best.repeats, u, f->at);
        else
                f->what = strdup_printf("%s repeated %zu times at byte %zu", u, best.repeats, f->at);
        return f->what ? 1 : -ENOMEM;
}

/* An answer made of nothing but special-token names, two or more, one of them of the
 * "<|...|>" form that only special tokens have ("<|reserved_special_token_54|></s>",
 * "<|endoftext|><|im_start|>"): the server printed the model's control tokens, and the
 * model said nothing else. ("<div></div>" is an answer; it has no "<|...|>".) */
static int check_only_special(const struct dtext *t, struct finding *f) {
        size_t i = t->first, names = 0, pipes = 0;
        while (i < t->last) {
                if (is_space(t->cp[i])) {
                        i++;
                        continue;
                }
                uint32_t open = t->cp[i], close = open == '<' ? '>' : open == '[' ? ']' : 0;
                if (!close)
                        return 0;
                size_t j = i + 1;
                while (j < t->last && j - i <= LOOP_MAX_PERIOD && t->cp[j] != close && !is_space(t->cp[j]))
                        j++;
                if (j >= t->last || t->cp[j] != close)
                        return 0;
                bool pipe = false;
                if (!unit_is_special(t->cp + i, j - i + 1, &pipe))
                        return 0;
                names++;
                pipes += pipe;
                i = j + 1;
        }
        if (names < 2 || pipes == 0)
                return 0;
        f->cause = "invalid-text";
        f->at = t->base + t->off[t->first];
        f->what = strdup_printf("only special-token names (%zu), no text", names);
        return f->what ? 1 : -ENOMEM;
}

/* Loops of whole sentences or lines, longer than LOOP_MAX_PERIOD code points or spaced
 * unevenly. Segments end at a newline or after . ! ? and a space; blank ones are skipped. */
struct segment {
        size_t start, end;  /* code points, trimmed */
        uint64_t hash;
        bool drawing, digits;
};

static int check_segment_loops(const struct dtext *t, bool length_cut, struct finding *f) {
        size_t cap = 64, n = 0;
        _cleanup_free_ struct segment *seg = malloc(cap * sizeof(*seg));
        if (!seg)
                return -ENOMEM;
        size_t i = t->first;
        while (i < t->last) {
                while (i < t->last && is_space(t->cp[i]))
                        i++;
                if (i >= t->last)
                        break;
                size_t s = i, e = i;
                for (; i < t->last; i++) {
                        uint32_t c = t->cp[i];
                        if (c == '\n')
                                break;
                        if ((c == '.' || c == '!' || c == '?' || c == 0x3002 || c == 0xFF01 || c == 0xFF1F) &&
                            (i + 1 >= t->last || is_space(t->cp[i + 1]) || c >= 0x3000)) {
                                i++;
                                break;
                        }
                }
                e = i;
                while (e > s && is_space(t->cp[e - 1]))
                        e--;
                if (n == cap) {
                        cap *= 2;
                        struct segment *ns = realloc(seg, cap * sizeof(*seg));
                        if (!ns)
                                return -ENOMEM;
                        seg = ns;
                }
                struct segment *g = &seg[n++];
                *g = (struct segment){.start = s, .end = e, .hash = FNV_SEED, .drawing = true, .digits = true};
                for (size_t k = s; k < e; k++) {
                        /* Whitespace inside a segment is folded so spacing does not break a loop. */
                        uint32_t c = is_space(t->cp[k]) ? ' ' : t->cp[k];
                        if (c == ' ' && k > s && is_space(t->cp[k - 1]))
                                continue;
                        g->hash = fnv1a(g->hash, &c, sizeof c);
                        enum uclass cls = classify_cp(c);
                        if (cls != U_WS && cls != U_DRAW)
                                g->drawing = false;
                        if (cls == U_ALNUM)
                                g->digits = false;
                }
        }
        if (n < 4)
                return 0;
        size_t total = t->last - t->first;
        size_t best_start = 0, best_q = 0, best_rep = 0, best_cover = 0;
        for (size_t q = 1; q <= SEGMENT_MAX_PERIOD && q < n; q++) {
                size_t streak = 0;
                for (size_t k = 0; k + q <= n; k++) {
                        bool eq = k + q < n && seg[k].hash == seg[k + q].hash;
                        if (eq) {
                                streak++;
                                continue;
                        }
                        size_t start = k - streak, cover = streak + q, rep = cover / q;
                        streak = 0;
                        if (rep < 3)
                                continue;
                        bool drawing = true, digits = true;
                        size_t unit_cps = 0;
                        for (size_t j = start; j < start + q; j++) {
                                drawing = drawing && seg[j].drawing;
                                digits = digits && seg[j].digits;
                                unit_cps += seg[j].end - seg[j].start;
                        }
                        if (drawing)
                                continue;  /* the sides of a box, rules between rows */
                        /* Short units are the code-point detector's business, with its limits. */
                        struct limits l = unit_cps > LOOP_MAX_PERIOD ? (struct limits){20, 10, 6, 10, 0}
                                                                     : unit_limits[U_ALNUM];
                        if (digits)
                                l = unit_limits[U_DIGIT];
                        size_t cover_cps = seg[start + cover - 1].end - seg[start].start;
                        double coverage = (double)cover_cps / (double)total;
                        bool tail = start + cover >= n;
                        unsigned need = limit_for(&l, length_cut, coverage, tail);
                        if (need && rep >= need && cover_cps > best_cover) {
                                best_start = start;
                                best_q = q;
                                best_rep = rep;
                                best_cover = cover_cps;
                        }
                }
        }
        if (!best_q)
                return 0;
        f->cause = "loop";
        f->at = t->base + t->off[seg[best_start].start];
        f->what = strdup_printf("%zu %s repeated %zu times at byte %zu", best_q,
                                best_q == 1 ? "line" : "lines", best_rep, f->at);
        return f->what ? 1 : -ENOMEM;
}

/* ---- table fragments ------------------------------------------------------------------ */

/* A table that is not one: a broken model puts pipes between a couple of tokens over and
 * over, in rows of varying length, with no header rule (llama.cpp #23693: " 42.\nC# | C#
 * |\nC32 | C# | C# |\nC# | C32 |..."). A real table has a header rule (`| --- |`), or rows
 * of one length (a board, a truth table, a schedule of identical rows), or more than a few
 * different cells (its header alone has that). Fires when the rows hold most of the output's
 * visible characters, with at least TABLE_MIN_ROWS rows and TABLE_MIN_CELLS non-empty cells,
 * at most TABLE_MAX_DISTINCT different cells (whitespace folded) and TABLE_MIN_WIDTHS
 * different numbers of cells per row. */
#define TABLE_MIN_ROWS 4
#define TABLE_MIN_CELLS 12
#define TABLE_MAX_DISTINCT 3
#define TABLE_MIN_WIDTHS 3

/* A header rule's cell: dashes (or '='), colons and spaces, at least three dashes. */
static bool cell_is_rule(const uint32_t *c, size_t n) {
        size_t dashes = 0;
        for (size_t i = 0; i < n; i++) {
                if (c[i] == '-' || c[i] == '=' || c[i] == 0x2014 || c[i] == 0x2500)
                        dashes++;
                else if (c[i] != ':' && !is_space(c[i]))
                        return false;
        }
        return dashes >= 3;
}

static int check_table_fragments(const struct dtext *t, struct finding *f) {
        uint64_t distinct[TABLE_MAX_DISTINCT];
        size_t n_distinct = 0, rows = 0, cells = 0, row_cps = 0, all_cps = 0, first_row = 0;
        uint32_t widths = 0;  /* bit k: a row of k non-empty cells (31: 31 or more) */
        for (size_t i = t->first; i < t->last;) {
                size_t s = i, e = i, pipes = 0, visible = 0;
                for (; e < t->last && t->cp[e] != '\n'; e++) {
                        pipes += t->cp[e] == '|';
                        visible += !is_space(t->cp[e]);
                }
                all_cps += visible;
                i = e + 1;
                if (!pipes)
                        continue;
                size_t width = 0;
                for (size_t c = s; c <= e;) {
                        size_t d = c;
                        while (d < e && t->cp[d] != '|')
                                d++;
                        size_t a = c, b = d;
                        while (a < b && is_space(t->cp[a]))
                                a++;
                        while (b > a && is_space(t->cp[b - 1]))
                                b--;
                        c = d + 1;
                        if (a == b)
                                continue;
                        if (cell_is_rule(t->cp + a, b - a))
                                return 0;  /* a header rule: a real table */
                        uint64_t h = FNV_SEED;
                        for (size_t k = a; k < b; k++) {
                                uint32_t ch = is_space(t->cp[k]) ? ' ' : t->cp[k];
                                if (ch == ' ' && is_space(t->cp[k - 1]))
                                        continue;
                                h = fnv1a(h, &ch, sizeof ch);
                        }
                        size_t j = 0;
                        while (j < n_distinct && distinct[j] != h)
                                j++;
                        if (j == n_distinct) {
                                if (n_distinct == TABLE_MAX_DISTINCT)
                                        return 0;  /* too many different cells */
                                distinct[n_distinct++] = h;
                        }
                        width++;
                }
                if (!width)
                        continue;
                if (rows++ == 0)
                        first_row = s;
                cells += width;
                row_cps += visible;
                widths |= UINT32_C(1) << MIN(width, 31);
        }
        unsigned n_widths = (unsigned)__builtin_popcount(widths);
        if (rows < TABLE_MIN_ROWS || cells < TABLE_MIN_CELLS || n_widths < TABLE_MIN_WIDTHS ||
            row_cps * 3 < all_cps * 2)
                return 0;
        f->cause = "loop";
        f->at = t->base + t->off[first_row];
        f->what = strdup_printf("table fragments: %zu cells in %zu rows of %u different widths, only %zu "
                                "different cells, no header rule, at byte %zu",
                                cells, rows, n_widths, n_distinct, f->at);
        return f->what ? 1 : -ENOMEM;
}

/* ---- soup ----------------------------------------------------------------------------- */

/* Function words of languages written with spaces: prose has many (a third of its words),
 * a soup of rare tokens has almost none. Lowercase; matched whole. */
static const char *const stopwords[] = {
        /* en */ "the", "a", "an", "of", "to", "in", "is", "are", "was", "were", "be", "and", "or",
        "for", "on", "with", "as", "at", "by", "it", "this", "that", "from", "not", "no", "yes",
        "you", "i", "we", "he", "she", "they", "his", "her", "its", "our", "your", "my", "me",
        "can", "will", "would", "should", "could", "do", "does", "did", "has", "have", "had",
        "but", "if", "so", "than", "then", "there", "here", "what", "which", "who", "when",
        "where", "why", "how", "all", "any", "some", "one", "more", "also", "just", "into",
        "let", "s", "t", "m", "re", "ll", "ve", "d",
        /* de */ "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "zu", "den", "mit",
        "von", "sie", "es", "ich", "auf", "für", "im", "dem", "des", "sich", "auch", "als",
        "wie", "an", "bei", "oder", "wird", "sind", "noch", "nach", "wir", "du", "er",
        /* fr */ "le", "la", "les", "et", "est", "un", "une", "du", "de", "en", "que", "qui",
        "pas", "pour", "dans", "sur", "au", "avec", "ce", "il", "elle", "je", "vous", "nous",
        "ne", "se", "plus", "l", "c", "j", "qu",
        /* es, pt, it */ "el", "los", "las", "y", "es", "una", "por", "para", "con", "lo", "del",
        "al", "como", "su", "más", "pero", "o", "os", "as", "e", "é", "um", "uma", "do", "da",
        "em", "com", "não", "il", "di", "che", "è", "per", "non", "sono",
        /* nl, id, tr, pl */ "het", "een", "van", "dat", "op", "te", "dan", "yang", "di", "ini",
        "itu", "dengan", "untuk", "tidak", "ada", "ve", "bir", "bu", "için", "w", "nie", "na",
        "się", "jest", "że", "z",
        /* ru, uk */ "и", "в", "не", "на", "что", "с", "это", "как", "по", "я", "он", "она", "к",
        "у", "из", "за", "то", "же", "от", "так", "но", "а", "мы", "вы", "ты", "для", "або", "та",
        /* el */ "και", "το", "η", "ο", "να", "της", "του", "σε", "με", "τα", "οι",
        /* ar, he, hi */ "في", "من", "على", "إلى", "أن", "هذا", "و", "عن", "مع", "هو", "של", "את",
        "הוא", "זה", "על", "לא", "है", "के", "की", "में", "और", "का", "को", "से", "यह", "एक",
        "नहीं", "हैं", "पर",
};

/* The commonest characters of Chinese (simplified and traditional), Japanese kana and
 * Korean syllables, sorted: together a third or more of any real CJK text, next to nothing
 * in a soup of rare tokens. */
static const uint32_t cjk_common_table[] = {
        0x3042, 0x3044, 0x3046, 0x304A, 0x304B, 0x304C, 0x304F, 0x3051, 0x3053, 0x3057,
        0x3059, 0x305B, 0x305D, 0x305F, 0x3063, 0x3064, 0x3066, 0x3067, 0x3068, 0x306A,
        0x306B, 0x306D, 0x306E, 0x306F, 0x3078, 0x307B, 0x307E, 0x307F, 0x3081, 0x3082,
        0x3084, 0x3086, 0x3088, 0x3089, 0x308A, 0x308B, 0x308C, 0x308F, 0x3092, 0x3093,
        0x4E00, 0x4E07, 0x4E09, 0x4E0A, 0x4E0B, 0x4E0D, 0x4E0E, 0x4E16, 0x4E1A, 0x4E1C,
        0x4E24, 0x4E2A, 0x4E2D, 0x4E3A, 0x4E3B, 0x4E48, 0x4E49, 0x4E4B, 0x4E5D, 0x4E5F,
        0x4E66, 0x4E86, 0x4E8B, 0x4E8C, 0x4E8E, 0x4E94, 0x4E9B, 0x4EA4, 0x4EA7, 0x4EAC,
        0x4EB2, 0x4EBA, 0x4EC0, 0x4ECA, 0x4ECE, 0x4ED6, 0x4EE3, 0x4EE5, 0x4EEC, 0x4EF6,
        0x4EFB, 0x4F1A, 0x4F20, 0x4F46, 0x4F4D, 0x4F4F, 0x4F53, 0x4F55, 0x4F5C, 0x4F60,
        0x4F7F, 0x4F86, 0x4FBF, 0x4FE1, 0x500B, 0x5011, 0x505A, 0x513F, 0x5143, 0x5148,
        0x5149, 0x5165, 0x5168, 0x516B, 0x516C, 0x516D, 0x5171, 0x5173, 0x5176, 0x5185,
        0x518D, 0x519B, 0x51E0, 0x51FA, 0x5206, 0x5229, 0x522B, 0x5230, 0x5236, 0x524D,
        0x529B, 0x529F, 0x52A0, 0x52A1, 0x52A8, 0x52D5, 0x5316, 0x5317, 0x5341, 0x534E,
        0x5357, 0x5374, 0x539F, 0x53BB, 0x53C8, 0x53CA, 0x53CD, 0x53D1, 0x53D7, 0x53D8,
        0x53E3, 0x53EA, 0x53EB, 0x53EF, 0x53F0, 0x53F8, 0x5403, 0x5404, 0x5408, 0x540C,
        0x540D, 0x540E, 0x5411, 0x542C, 0x5458, 0x547D, 0x548C, 0x554F, 0x56DB, 0x56DE,
        0x56E0, 0x56FD, 0x570B, 0x5728, 0x5730, 0x573A, 0x58F0, 0x5904, 0x5916, 0x591A,
        0x5927, 0x5929, 0x592A, 0x592B, 0x5934, 0x5973, 0x5979, 0x597D, 0x5982, 0x5B50,
        0x5B57, 0x5B66, 0x5B78, 0x5B83, 0x5B89, 0x5B9A, 0x5B9E, 0x5BB6, 0x5BE6, 0x5BF9,
        0x5C06, 0x5C0D, 0x5C0F, 0x5C11, 0x5C31, 0x5C55, 0x5C71, 0x5DE5, 0x5DF1, 0x5DF2,
        0x5E02, 0x5E08, 0x5E26, 0x5E38, 0x5E72, 0x5E73, 0x5E74, 0x5E76, 0x5E94, 0x5EA6,
        0x5EFA, 0x5F00, 0x5F20, 0x5F53, 0x5F80, 0x5F88, 0x5F8C, 0x5F97, 0x5F9E, 0x5FC3,
        0x5FEB, 0x600E, 0x601D, 0x6027, 0x603B, 0x60C5, 0x60F3, 0x610F, 0x611F, 0x6210,
        0x6211, 0x6216, 0x6218, 0x6240, 0x624B, 0x624D, 0x6253, 0x628A, 0x62A5, 0x6307,
        0x63A5, 0x63D0, 0x653E, 0x653F, 0x6559, 0x6570, 0x6587, 0x65B0, 0x65B9, 0x65BC,
        0x65E0, 0x65E5, 0x65F6, 0x660E, 0x662F, 0x6642, 0x66F4, 0x6700, 0x6703, 0x6708,
        0x6709, 0x670D, 0x671B, 0x671F, 0x672C, 0x672F, 0x673A, 0x6743, 0x6761, 0x6765,
        0x6797, 0x679C, 0x6837, 0x6A5F, 0x6B21, 0x6B63, 0x6B64, 0x6B7B, 0x6BCF, 0x6BD4,
        0x6BDB, 0x6C11, 0x6C14, 0x6C34, 0x6CA1, 0x6CD5, 0x6D3B, 0x6D41, 0x6D77, 0x6E05,
        0x70B9, 0x70BA, 0x7121, 0x7136, 0x7231, 0x7269, 0x7279, 0x738B, 0x73B0, 0x73FE,
        0x7406, 0x751F, 0x7528, 0x7531, 0x7535, 0x754C, 0x7559, 0x7576, 0x767C, 0x767D,
        0x767E, 0x7684, 0x76EE, 0x76F4, 0x76F8, 0x770B, 0x771F, 0x773C, 0x7740, 0x77E5,
        0x793E, 0x795E, 0x79CD, 0x79D1, 0x7A2E, 0x7ACB, 0x7B11, 0x7B2C, 0x7B49, 0x7B97,
        0x7BA1, 0x7CFB, 0x7D93, 0x7EA2, 0x7ECF, 0x7ED3, 0x7ED9, 0x7EDF, 0x7F8E, 0x8001,
        0x8005, 0x800C, 0x8054, 0x80FD, 0x81EA, 0x81F3, 0x8207, 0x8272, 0x82B1, 0x884C,
        0x8868, 0x88AB, 0x88E1, 0x897F, 0x8981, 0x89C1, 0x89C9, 0x89E3, 0x8A00, 0x8A9E,
        0x8AAA, 0x8BA1, 0x8BA4, 0x8BA9, 0x8BB0, 0x8BB8, 0x8BBA, 0x8BDD, 0x8BE5, 0x8BF4,
        0x8BF7, 0x8C61, 0x8D44, 0x8D70, 0x8D77, 0x8DDF, 0x8DEF, 0x8EAB, 0x8F66, 0x8FB9,
        0x8FC7, 0x8FD1, 0x8FD8, 0x8FD9, 0x8FDB, 0x8FDC, 0x8FDE, 0x9019, 0x901A, 0x904E,
        0x9053, 0x9084, 0x90A3, 0x90E8, 0x90FD, 0x91CC, 0x91CD, 0x91D1, 0x9577, 0x957F,
        0x958B, 0x9593, 0x95DC, 0x95E8, 0x95EE, 0x95F4, 0x961F, 0x9662, 0x96BE, 0x9752,
        0x975E, 0x9762, 0x9886, 0x9898, 0x98CE, 0x9A6C, 0x9AD4, 0x9AD8, 0x9EBC, 0x9EDE,
        0xAC00, 0xAC83, 0xAC8C, 0xACE0, 0xACFC, 0xADF8, 0xAE30, 0xB098, 0xB294, 0xB2C8,
        0xB2E4, 0xB300, 0xB3C4, 0xB4E4, 0xB77C, 0xB85C, 0xB97C, 0xB9AC, 0xBA74, 0xC0AC,
        0xC11C, 0xC218, 0xC2B5, 0xC5B4, 0xC5D0, 0xC694, 0xC6B0, 0xC740, 0xC744, 0xC758,
        0xC774, 0xC788, 0xC9C0, 0xD558, 0xD55C, 0xD574,
};

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static bool cjk_is_common(uint32_t c) {
        return bsearch(&c, cjk_common_table, ELEMENTSOF(cjk_common_table), sizeof(uint32_t), cmp_u32) != NULL;
}

static uint32_t lower_cp(uint32_t c) {
        if (c >= 'A' && c <= 'Z')
                return c + 32;
        if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9) || (c >= 0x410 && c <= 0x42F))
                return c + 32;
        if (c >= 0x400 && c <= 0x40F)
                return c + 80;
        return c;
}

static bool is_stopword(const uint32_t *w, size_t n) {
        char tmp[64];
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k + 4 >= sizeof tmp)
                        return false;
                k += utf8_encode(lower_cp(w[i]), tmp + k);
        }
        tmp[k] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(stopwords); i++)
                if (strcmp(tmp, stopwords[i]) == 0)
                        return true;
        return false;
}

/* Scripts judged character by character: Chinese and Japanese have no spaces, and Korean
 * glues its particles to the word. */
static bool fam_cjk(enum family f) {
        return f == FAM_HAN || f == FAM_KANA || f == FAM_HANGUL;
}

/* Pairs of scripts that sit side by side in real text: Latin terms in CJK or Korean text,
 * kanji with kana, Greek variables in formulas. */
static bool fam_pair_normal(enum family a, enum family b) {
        if (a == b)
                return true;
        if (a > b) {
                enum family t = a;
                a = b;
                b = t;
        }
        if (a == FAM_LATIN && (b == FAM_HAN || b == FAM_KANA || b == FAM_HANGUL || b == FAM_GREEK))
                return true;
        return a == FAM_HAN && b == FAM_KANA;
}

struct word {
        size_t start, end;     /* code points */
        unsigned fam_mask;     /* families of its letters */
        enum family fam;       /* of its first letter */
        unsigned letters;
        bool spaced;           /* a word of a script written with spaces (not CJK) */
        bool stop;             /* ... and a function word */
        unsigned cjk, cjk_common;          /* Han, kana and Hangul characters; common ones */
        unsigned hangul, hangul_common;
        unsigned han, han_common, rare_han, cjk_punct_before;
        unsigned code_punct_before;  /* ( ) { } [ ] ; = < > " ` since the previous word */
        bool mixed;            /* letters of scripts that never share a word */
        bool glued;            /* CamelCase glued to a long lowercase tail: "MethodInfoyageegeben" */
        bool bare_switch;      /* script changed from the previous word across plain spaces */
        enum family last_fam;  /* of its last letter */
        unsigned inner_switches;  /* script changes inside it, any pair (kana counts as Han) */
        bool switch_before;    /* ... and from the previous word's last letter, across plain spaces */
};

static bool is_word_char(uint32_t c) {
        return family_of(c) != FAM_NONE || is_combining(c);
}

static bool is_structural_sep(uint32_t c) {
        return c == '\n' || is_digit(c) || is_cjk_punct(c) ||
               (c < 0x80 && c && strchr(",;:()[]{}\"|=/-*<>", (int)c)) || c == 0x2013 || c == 0x2014 ||
               c == 0x2022 || c == 0xAB || c == 0xBB || c == 0x300C || c == 0x300D;
}

static int soup_words(const struct dtext *t, struct word **ret, size_t *ret_n) {
        size_t cap = 64, n = 0;
        _cleanup_free_ struct word *w = malloc(cap * sizeof(*w));
        if (!w)
                return -ENOMEM;
        size_t i = t->first, prev_end = t->first;
        while (i < t->last) {
                if (!is_word_char(t->cp[i])) {
                        i++;
                        continue;
                }
                size_t s = i;
                while (i < t->last && is_word_char(t->cp[i]))
                        i++;
                if (n == cap) {
                        cap *= 2;
                        struct word *nw = realloc(w, cap * sizeof(*w));
                        if (!nw)
                                return -ENOMEM;
                        w = nw;
                }
                struct word *x = &w[n];
                *x = (struct word){.start = s, .end = i};
                bool structured = false, plain = true;
                for (size_t k = prev_end; k < s; k++) {
                        uint32_t c = t->cp[k];
                        if (is_structural_sep(c))
                                structured = true;
                        if (!is_space(c))
                                plain = false;
                        if (is_cjk_punct(c))
                                x->cjk_punct_before++;
                        if (c < 0x80 && c && strchr("(){}[];=<>\"`", (int)c))
                                x->code_punct_before++;
                }
                size_t lower_run = 0, hump = 0, max_tail = 0;
                for (size_t k = s; k < i; k++) {
                        uint32_t c = t->cp[k];
                        enum family f = family_of(c);
                        if (f == FAM_NONE)
                                continue;
                        enum family fm = f == FAM_KANA ? FAM_HAN : f;
                        if (x->last_fam && fm != x->last_fam)
                                x->inner_switches++;
                        x->last_fam = fm;
                        if (!x->fam)
                                x->fam = f;
                        x->fam_mask |= 1u << f;
                        x->letters++;
                        if (f == FAM_HAN) {
                                x->han++;
                                if (is_rare_han(c))
                                        x->rare_han++;
                        }
                        if (fam_cjk(f)) {
                                bool common = cjk_is_common(c);
                                x->cjk++;
                                x->cjk_common += common;
                                if (f == FAM_HAN)
                                        x->han_common += common;
                                if (f == FAM_HANGUL) {
                                        x->hangul++;
                                        x->hangul_common += common;
                                }
                        }
                        /* CamelCase: a capital after lowercase starts a hump. */
                        bool upper = (c >= 'A' && c <= 'Z');
                        bool lower = (c >= 'a' && c <= 'z') || (c >= 0xDF && c <= 0xFF && c != 0xF7);
                        if (upper && k > s && lower_run >= 2) {
                                hump++;
                                lower_run = 0;
                        } else if (lower) {
                                lower_run++;
                                if (hump && lower_run > max_tail)
                                        max_tail = lower_run;
                        } else
                                lower_run = 0;
                }
                if (!fam_cjk(x->fam)) {
                        x->spaced = true;
                        x->stop = is_stopword(t->cp + s, i - s);
                }
                for (int a = 1; a < _FAM_MAX; a++)
                        for (int b = a + 1; b < _FAM_MAX; b++)
                                if ((x->fam_mask & (1u << a)) && (x->fam_mask & (1u << b)) &&
                                    !fam_pair_normal((enum family)a, (enum family)b))
                                        x->mixed = true;
                /* Identifiers have humps every few letters ("setAuthenticationToken": at most
                 * 13 lowercase after a hump); token soup glues a long foreign tail on. */
                x->glued = x->letters >= 16 && hump >= 1 && max_tail >= 14;
                if (n > 0 && plain && !structured && !fam_pair_normal(w[n - 1].fam, x->fam))
                        x->bare_switch = true;
                if (n > 0 && plain && !structured && w[n - 1].last_fam && x->fam &&
                    w[n - 1].last_fam != (x->fam == FAM_KANA ? FAM_HAN : x->fam))
                        x->switch_before = true;
                prev_end = i;
                n++;
        }
        *ret = TAKE_PTR(w);
        *ret_n = n;
        return 0;
}

static int check_soup(const struct dtext *t, struct finding *f) {
        _cleanup_free_ struct word *w = NULL;
        size_t n = 0;
        int r = soup_words(t, &w, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        for (size_t from = 0; from < n; from += SOUP_STEP) {
                size_t to = MIN(n, from + SOUP_WINDOW);
                unsigned letters = 0, cjk = 0, cjk_common = 0, han = 0, rare = 0;
                unsigned common_han = 0, hangul = 0, hangul_common = 0;
                unsigned mixed = 0, glued = 0, bare = 0, cjk_punct = 0, code_punct = 0, switches = 0;
                unsigned returns = 0, seen = 0;
                unsigned words = (unsigned)(to - from);
                unsigned mask = 0, fam_letters[_FAM_MAX] = {0}, fam_spaced[_FAM_MAX] = {0}, fam_stop[_FAM_MAX] = {0};
                size_t first_odd = SIZE_MAX;
                for (size_t k = from; k < to; k++) {
                        const struct word *x = &w[k];
                        letters += x->letters;
                        cjk += x->cjk;
                        cjk_common += x->cjk_common;
                        hangul += x->hangul;
                        hangul_common += x->hangul_common;
                        common_han += x->han_common;
                        han += x->han;
                        rare += x->rare_han;
                        if (k > from) {
                                cjk_punct += x->cjk_punct_before;
                                code_punct += x->code_punct_before;
                        }
                        mask |= x->fam_mask;
                        enum family xf = x->fam == FAM_KANA ? FAM_HAN : x->fam;
                        fam_letters[xf] += x->letters;
                        fam_spaced[xf] += x->spaced;
                        fam_stop[xf] += x->stop;
                        if (x->mixed || x->glued) {
                                mixed += x->mixed;
                                glued += x->glued;
                                if (first_odd == SIZE_MAX)
                                        first_odd = k;
                        }
                        if (k > from && x->bare_switch)
                                bare++;
                        switches += x->inner_switches + (k > from && x->switch_before);
                        /* A script coming back after another one: soup keeps returning to
                         * its scripts; "Hello Привет こんにちは 안녕하세요" visits each once. */
                        if (k > from && xf != (w[k - 1].fam == FAM_KANA ? FAM_HAN : w[k - 1].fam) &&
                            (seen & (1u << xf)))
                                returns++;
                        seen |= 1u << xf;
                }
                if (mask & (1u << FAM_KANA))
                        mask = (mask & ~(1u << FAM_KANA)) | (1u << FAM_HAN);
                unsigned families = (unsigned)__builtin_popcount(mask);
                if (letters < 8)
                        goto next;
                /* Prose has structure: function words, or common characters. Each needs a
                 * sample to count: two common characters in a soup ("的人") prove nothing.
                 * And the structure must be that of the script most of the letters are in:
                 * a soup of a tokenizer's commonest tokens has the function words of ten
                 * languages and a few common Han characters, spread over ten scripts. A
                 * sentence and its translation, or prose with foreign names, keeps a
                 * script that holds half the letters, or has three scripts at most. */
                enum family dom = FAM_NONE;
                for (int k = 1; k < _FAM_MAX; k++)
                        if (fam_letters[k] > fam_letters[dom])
                                dom = (enum family)k;
                bool one_language = families <= 3 || fam_letters[dom] * 2 >= letters;
                bool structured = fam_cjk(dom) ? cjk >= 8 && cjk_common * 100 >= cjk * 12
                                               : fam_spaced[dom] >= 4 && fam_stop[dom] * 100 >= fam_spaced[dom] * 12;
                /* Words that glue unrelated scripts together are evidence no structure
                 * outweighs when they are many, in a window of three scripts or more. */
                bool glued_many = mixed >= 3 && mixed * 10 >= words && families >= 3;
                if (one_language && structured && !glued_many)
                        goto next;
                const char *why = NULL;
                if (mixed >= 2 || (mixed >= 1 && families >= 3))
                        why = "words mixing scripts";
                else if (glued >= 1 && code_punct == 0)
                        why = "glued fragments";  /* code has camelCase and punctuation */
                else if (families >= 3 && bare >= 4 && bare * 10 >= words * 3 && returns >= 2)
                        why = "scripts switching word by word";
                else if (!one_language && switches >= 3 && switches * 4 >= words && returns >= 2)
                        why = "no script dominant, switching word by word";
                else if (rare >= 3 && rare * 5 >= han)
                        why = "rare CJK characters";
                else if (han >= 24 && han * 5 >= letters * 4 && common_han * 20 < han && cjk_punct == 0)
                        why = "CJK without common characters";
                else if (hangul >= 16 && hangul * 5 >= letters * 4 && hangul_common * 20 < hangul)
                        why = "Hangul without common syllables";
                if (!why)
                        goto next;
                size_t at_word = first_odd != SIZE_MAX ? first_odd : from;
                f->cause = "low-information";
                f->at = t->base + t->off[w[at_word].start];
                f->what = strdup_printf("soup (%s, %u script%s) at byte %zu", why, families,
                                        families == 1 ? "" : "s", f->at);
                return f->what ? 1 : -ENOMEM;
        next:
                if (to == n)
                        break;
        }
        return 0;
}

/* ---- low information ------------------------------------------------------------------ */

/* Below this many bytes an output is too short to judge by its information content. */
#define LOWINFO_MIN_BYTES 256
/* deflate output / input, and bits per whitespace-separated token. */
#define LOWINFO_MAX_RATIO 0.20
#define LOWINFO_MAX_ENTROPY 2.0
#define LOWINFO_MIN_TOKENS 32

static int token_entropy(const struct dtext *t, double *ret_bits, size_t *ret_tokens) {
        /* Tokens hashed into an open-addressing table sized for the worst case. */
        size_t ntok = 0;
        for (size_t i = t->first; i < t->last; i++)
                if (!is_space(t->cp[i]) && (i == t->first || is_space(t->cp[i - 1])))
                        ntok++;
        if (ntok == 0) {
                *ret_bits = 0;
                *ret_tokens = 0;
                return 0;
        }
        size_t cap = 16;
        while (cap < ntok * 2)
                cap *= 2;
        _cleanup_free_ uint64_t *keys = calloc(cap, sizeof(uint64_t));
        _cleanup_free_ size_t *counts = calloc(cap, sizeof(size_t));
        if (!keys || !counts)
                return -ENOMEM;
        size_t i = t->first;
        while (i < t->last) {
                while (i < t->last && is_space(t->cp[i]))
                        i++;
                if (i >= t->last)
                        break;
                uint64_t h = FNV_SEED;
                while (i < t->last && !is_space(t->cp[i])) {
                        h = fnv1a(h, &t->cp[i], sizeof(uint32_t));
                        i++;
                }
                if (h == 0)
                        h = 1;
                size_t slot = (size_t)(h & (cap - 1));
                while (keys[slot] && keys[slot] != h)
                        slot = (slot + 1) & (cap - 1);
                keys[slot] = h;
                counts[slot]++;
        }
        double bits = 0;
        for (size_t k = 0; k < cap; k++)
                if (counts[k]) {
                        double pr = (double)counts[k] / (double)ntok;
                        bits -= pr * log2(pr);
                }
        *ret_bits = bits;
        *ret_tokens = ntok;
        return 0;
}

static int deflate_ratio(const char *s, size_t n, double *ret) {
        uLongf out_len = compressBound((uLong)n);
        _cleanup_free_ Bytef *out = malloc(out_len);
        if (!out)
                return -ENOMEM;
        if (compress2(out, &out_len, (const Bytef *)s, (uLong)n, 6) != Z_OK)
                return -EIO;
        *ret = (double)out_len / (double)n;
        return 0;
}

static int check_low_information(const struct dtext *t, struct finding *f) {
        size_t from = t->off[t->first], to = t->off[t->last];
        if (to - from < LOWINFO_MIN_BYTES)
                return 0;
        double ratio, bits;
        size_t ntok;
        int r = deflate_ratio(t->s + from, to - from, &ratio);
        if (r < 0)
                return r;
        if (ratio >= LOWINFO_MAX_RATIO)
                return 0;
        r = token_entropy(t, &bits, &ntok);
        if (r < 0)
                return r;
        /* Few tokens (minified JSON, a base64 blob) say nothing about entropy. */
        if (ntok < LOWINFO_MIN_TOKENS || bits >= LOWINFO_MAX_ENTROPY)
                return 0;
        f->cause = "low-information";
        f->at = t->base + from;
        f->what = strdup_printf("low information (compresses to %.0f%%, %.1f bits per token over %zu tokens)",
                                ratio * 100, bits, ntok);
        return f->what ? 1 : -ENOMEM;
}

/* ---- short loops ---------------------------------------------------------------------- */

/* Short loops: a unit of a few letters, or one short word or digit, repeated to the end of
 * the output, the way a broken kernel repeats its last token ("achtachtacht...",
 * "inhabitants ants ants ants...", "The total is 42 2 2 2 2..."). check_loops lets these
 * pass below 16 repeats when the model stopped by itself, because a whole answer of one
 * word said N times is a right answer to "say it N times". Two shapes are never such an
 * answer and fire at SHORT_MIN_REPEATS:
 *   glued:    a unit of 3+ letters (2+ in a syllabic script: Han, kana, Hangul, Indic,
 *             Thai) with no space, lowercase (or caseless), as the whole output or its
 *             tail: "undundund", "tritritri", "二十三二十三", "니다니다", "हैहैहै";
 *   word-cut: one short word or one digit 1-9 with spaces or commas, whose first copy
 *             is the end of the word before it: "inhabit|ants ants ants", "4|2 2 2 2",
 *             "veintitrés, trés, trés".
 * Guards, for the answers that look alike: laughter and song syllables ("hahaha",
 * "Bwahahaha", "huehuehue", "tra-la-la", "ฮ่าฮ่า"), units with any other character
 * (code, tables, ellipses, ASCII art), mixed or upper case ("XOXO", "oOoO", base64),
 * DNA letters ("acgtacgt"), alphabet runs ("abcabc"), digits glued to digits (repeating
 * decimals, binary) and zeros (vectors and matrices: "10, 0, 0, 0").
 * A third shape needs the question:
 *   unasked:  the whole answer (90 % of it) is one short word (2 to 6 letters, no digits)
 *             said SHORT_MIN_REPEATS times or more with spaces or commas, and the
 *             question names neither the word nor the number of times: "ndon ndon ndon
 *             ...", "tion tion tion ...". "Say hello 12 times" names hello; "greet me six
 *             times" names six. Without a question this shape passes (it is "say it N
 *             times" as far as the text can tell). The guards above apply too.
 * Tuned on tests/corpus (docs/detectors.md has the figures). */
#define SHORT_MAX_PERIOD 8
#define SHORT_MAX_LETTERS 6
#define SHORT_MIN_REPEATS 6

/* Laughter and song syllables, lowercase; a unit matches when its letters are one of these
 * in some rotation ("ah" is "ha"). */
static const char *const laughs[] = {
        "ha", "he", "hi", "ho", "hu", "ja", "je", "ji", "jo", "ka", "ke", "ki", "ku", "xa", "xe", "la", "na",
        "lo", "wk", "rs", "hue", "heh", "hah", "hih", "hoh", "kek", "lol", "muah", "mwah", "bwah",
        "\xd1\x85\xd0\xb0" /* ха */, "\xd1\x85\xd0\xb5" /* хе */, "\xd1\x85\xd0\xb8" /* хи */,
        "\xd0\xbb\xd0\xb0" /* ла */, "\xe0\xb8\xae\xe0\xb9\x88\xe0\xb8\xb2" /* ฮ่า */,
        "\xe0\xb8\xae\xe0\xb8\xb2" /* ฮา */, "\xe0\xa4\xb9\xe0\xa4\xbe" /* हा */,
        "\xe0\xa4\xb9\xe0\xa5\x87" /* हे */, "\xe0\xa6\xb9\xe0\xa6\xbe" /* হা */,
};

static bool is_laugh(const uint32_t *w, size_t n) {
        for (size_t r = 0; r < n; r++) {
                char tmp[4 * SHORT_MAX_PERIOD + 1];
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        k += utf8_encode(lower_cp(w[(r + i) % n]), tmp + k);
                tmp[k] = '\0';
                for (size_t i = 0; i < ELEMENTSOF(laughs); i++)
                        if (strcmp(tmp, laughs[i]) == 0)
                                return true;
        }
        return false;
}

static bool is_short_sep(uint32_t c) {
        return is_space(c) || c == ',' || c == 0x3001 || c == 0xFF0C;
}

static bool fam_syllabic(enum family f) {
        return fam_cjk(f) || f == FAM_INDIC || f == FAM_THAI;
}

/* English number words for counts a question may name ("say it six times"). */
static const char *const count_words[] = {
        "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
        "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
};

static bool letter_like(uint32_t c) {
        return family_of(c) != FAM_NONE || is_combining(c);
}

/* Whether the question names the word w[0..k) (case-insensitive; as a whole word, except in
 * a syllabic script, whose words are not spaced) or the count n (digits, or an English number
 * word: "12", "twelve", "a dozen"). */
static int question_names(const char *q, size_t qlen, const uint32_t *w, size_t k, bool syllabic, size_t n,
                          bool *ret) {
        _cleanup_free_ uint32_t *cp = malloc((qlen + 1) * sizeof(uint32_t));
        if (!cp)
                return -ENOMEM;
        const unsigned char *u = (const unsigned char *)q;
        size_t m = 0;
        for (size_t i = 0; i < qlen;) {
                bool trunc;
                size_t l = utf8_decode(u + i, qlen - i, &cp[m], &trunc);
                if (l == 0) {
                        cp[m] = 0xFFFD;
                        l = 1;
                }
                cp[m] = lower_cp(cp[m]);
                m++;
                i += l;
        }
        *ret = true;
        for (size_t i = 0; i + k <= m; i++) {
                size_t j = 0;
                while (j < k && cp[i + j] == lower_cp(w[j]))
                        j++;
                if (j == k && (syllabic || ((i == 0 || !letter_like(cp[i - 1])) &&
                                            (i + k == m || !letter_like(cp[i + k])))))
                        return 0;
        }
        /* The count: a number on its own, or a number word. */
        for (size_t i = 0; i < m;) {
                size_t j = i;
                if (is_digit(cp[i])) {
                        size_t v = 0;
                        while (j < m && is_digit(cp[j])) {
                                v = v < 1000000 ? v * 10 + (cp[j] - '0') : v;
                                j++;
                        }
                        bool alone = (i == 0 || !(letter_like(cp[i - 1]) || cp[i - 1] == '.' || cp[i - 1] == ',')) &&
                                     (j == m || !(letter_like(cp[j]) || ((cp[j] == '.' || cp[j] == ',') &&
                                                                         j + 1 < m && is_digit(cp[j + 1]))));
                        if (alone && v == n)
                                return 0;
                } else if (letter_like(cp[i])) {
                        char word[16];
                        size_t l = 0;
                        while (j < m && letter_like(cp[j])) {
                                if (l + 1 < sizeof word)
                                        word[l] = cp[j] < 0x80 ? (char)cp[j] : '?';
                                l++;
                                j++;
                        }
                        word[l < sizeof word ? l : sizeof word - 1] = '\0';
                        if (n == 12 && strcmp(word, "dozen") == 0)
                                return 0;
                        if (n >= 6 && n - 6 < ELEMENTSOF(count_words) && strcmp(word, count_words[n - 6]) == 0)
                                return 0;
                } else
                        j++;
                i = j > i ? j : i + 1;
        }
        *ret = false;
        return 0;
}

static int check_short_loops(const struct dtext *t, const char *question, size_t question_len, struct finding *f) {
        size_t total = t->last - t->first;
        for (size_t p = 2; p <= SHORT_MAX_PERIOD && 2 * p <= total; p++) {
                /* The stretch of period p that ends the output. */
                size_t start = t->last - p;
                while (start > t->first && t->cp[start - 1] == t->cp[start - 1 + p])
                        start--;
                size_t cover = t->last - start, repeats = (2 * cover + p) / (2 * p);
                const uint32_t *u = t->cp + start;
                if (repeats < SHORT_MIN_REPEATS || !unit_is_primitive(u, p))
                        continue;
                size_t letters = 0, marks = 0, digits = 0, seps = 0, words = 0, upper = 0, other = 0;
                bool syllabic = false, dna = true;
                uint32_t digit = 0;
                uint32_t w[SHORT_MAX_PERIOD];
                size_t nw = 0;
                for (size_t i = 0; i < p; i++) {
                        uint32_t c = u[i];
                        enum family fam = family_of(c);
                        if (is_short_sep(c)) {
                                seps++;
                                continue;
                        }
                        if (is_short_sep(u[(i + p - 1) % p]))
                                words++;
                        if (is_digit(c)) {
                                digits++;
                                digit = c;
                        } else if (fam != FAM_NONE || is_combining(c)) {
                                if (is_combining(c))
                                        marks++;
                                else
                                        letters++;
                                syllabic = syllabic || fam_syllabic(fam);
                                upper += lower_cp(c) != c;
                                dna = dna && c < 0x80 && strchr("acgtuACGTU", (int)c);
                                w[nw++] = c;
                        } else
                                other++;
                }
                if (other || (letters && digits) || letters > SHORT_MAX_LETTERS)
                        continue;
                /* "abc", "bca", "xyz": consecutive letters, in some rotation. */
                size_t steps = 0;
                for (size_t i = 0; i < nw; i++)
                        steps += w[(i + 1) % nw] == w[i] + 1u;
                bool alphabet = nw >= 3 && steps + 1 >= nw;
                bool glued_start = start > t->first && (is_word_char(u[0]) || is_digit(u[0])) &&
                                   (is_word_char(t->cp[start - 1]) || is_digit(t->cp[start - 1]));
                const char *shape = NULL;
                if (!seps && !digits && (syllabic ? letters + marks >= 2 : letters >= 3) && !upper && !dna &&
                    !alphabet && !is_laugh(w, nw))
                        shape = "glued";
                else if (seps && words == 1 && glued_start &&
                         (digits ? digits == 1 && digit != '0' : !is_laugh(w, nw)))
                        shape = "cut from the word before it";
                else if (question && seps && words == 1 && cover * 10 >= total * 9 && !digits &&
                         letters + marks >= 2 && !dna && !alphabet && !is_laugh(w, nw)) {
                        /* The whole answer (90 % of it: a stray token may precede the run). The
                         * word is the unit's one run of non-separators, in whatever rotation. */
                        uint32_t word[SHORT_MAX_PERIOD];
                        size_t k = 0, i0 = 0;
                        while (i0 < p && !(is_short_sep(u[(i0 + p - 1) % p]) && !is_short_sep(u[i0])))
                                i0++;
                        while (k < p && !is_short_sep(u[(i0 + k) % p])) {
                                word[k] = u[(i0 + k) % p];
                                k++;
                        }
                        bool named;
                        int r = question_names(question, question_len, word, k, syllabic, repeats, &named);
                        if (r < 0)
                                return r;
                        if (!named)
                                shape = "the whole answer; the question names neither it nor the count";
                }
                if (!shape)
                        continue;
                _cleanup_free_ char *us = unit_string(u, p);
                if (!us)
                        return -ENOMEM;
                f->cause = seps ? "repeat" : "loop";
                f->at = t->base + t->off[start];
                f->what = strdup_printf("short unit %s (%s) repeated %zu times to the end at byte %zu", us, shape,
                                        repeats, f->at);
                return f->what ? 1 : -ENOMEM;
        }
        return 0;
}

/* ---- the text detectors together ------------------------------------------------------ */

/* Forced continuations: replacement and control characters (and bytes that are not UTF-8)
 * are garbage only when they are a fifth or more of the text's visible characters, at
 * least 8 of them. A model forced past its end does emit a stray one: a byte-fallback token
 * that starts a character the next does not finish (the bundled testbed model did in 3 of
 * 72 forced outputs); text made of them is the replacement-character-heavy output of a
 * broken kernel. */
#define FORCED_INVALID_MIN 8
#define FORCED_INVALID_SHARE 5   /* 1/5 */

static int check_forced_invalid(const char *s, size_t n, size_t base, struct finding *f) {
        const unsigned char *u = (const unsigned char *)s;
        size_t bad = 0, visible = 0, first = 0;
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                bool trunc;
                size_t k = utf8_decode(u + i, n - i, &cp, &trunc);
                if (k == 0 && trunc)
                        break; /* a character cut by the end */
                bool is_bad = k == 0 || cp == 0xFFFD || (cp < 0x20 && !(cp >= '\t' && cp <= '\r')) || cp == 0x7F ||
                              (cp >= 0x80 && cp <= 0x9F && cp != 0x85);
                if (is_bad && bad++ == 0)
                        first = i;
                if (is_bad || !is_space(cp))
                        visible++;
                i += k ? k : 1;
        }
        if (bad < FORCED_INVALID_MIN || bad * FORCED_INVALID_SHARE < visible)
                return 0;
        f->cause = "invalid-text";
        f->at = base + first;
        f->what = strdup_printf("%zu replacement, control or invalid characters of %zu, first at byte %zu", bad, visible,
                                f->at);
        return f->what ? 1 : -ENOMEM;
}

/* Judges s[base..base+len) of an output (s points at the part). forced: only the forced
 * subset (detect.h): invalid text, runs of one character judged as if the model had
 * stopped (the token limit was the bench's, not a sign), soup. */
static int judge_part(const char *s, size_t len, size_t base, bool length_cut, bool forced, const char *question,
                      size_t question_len, struct finding *f) {
        int r = forced ? check_forced_invalid(s, len, base, f) : check_invalid(s, len, length_cut, f);
        if (r != 0)
                return r;
        _cleanup_(dtext_release) struct dtext t = {0};
        r = dtext_init(&t, s, len, base);
        if (r < 0)
                return r;
        if (forced) {
                r = check_loops(&t, false, 1, true, f);
                if (r == 0)
                        r = check_soup(&t, f);
                return r;
        }
        r = check_loops(&t, length_cut, LOOP_MAX_PERIOD, false, f);
        if (r == 0)
                r = check_only_special(&t, f);
        if (r == 0)
                r = check_segment_loops(&t, length_cut, f);
        if (r == 0)
                r = check_table_fragments(&t, f);
        if (r == 0)
                r = check_soup(&t, f);
        if (r == 0)
                r = check_low_information(&t, f);
        if (r == 0)
                r = check_short_loops(&t, question, question_len, f);
        return r;
}

/* Judges a text; long ones by their first and last DETECT_WINDOW bytes. question (NULL:
 * not known, or not the answer) is what was asked. */
static int judge_text(const char *s, size_t len, bool length_cut, bool forced, const char *question,
                      size_t question_len, struct finding *f) {
        if (len <= DETECT_WHOLE_MAX)
                return judge_part(s, len, 0, length_cut, forced, question, question_len, f);
        int r = forced ? check_forced_invalid(s, len, 0, f) : check_invalid(s, len, length_cut, f);
        if (r != 0)
                return r;
        size_t head = utf8_char_start(s, len, DETECT_WINDOW);
        r = judge_part(s, head, 0, false, forced, NULL, 0, f);
        if (r != 0)
                return r;
        size_t tail = utf8_char_start(s, len, len - DETECT_WINDOW);
        return judge_part(s + tail, len - tail, tail, length_cut, forced, NULL, 0, f);
}

/* The end of a reasoning block, glued to a new answer, twice or more in the answer (the
 * server already took the first one away): the model ran past the end of its turn and
 * keeps starting over ("OK.</think>OK OK.</think>OK", "2112</think>2112762</think>12226").
 * Text about the tag has it spaced or quoted ("everything up to </think> goes into
 * reasoning_content", `text.split("</think>")`). */
#define REASONING_END "</think>"
#define REASONING_END_REPEATS 2

static int check_reasoning_tags(const char *s, size_t len, struct finding *f) {
        size_t tl = strlen(REASONING_END), n = 0, first = 0;
        for (const char *p = s; p && (size_t)(p - s) + tl <= len; p++) {
                p = memmem(p, len - (size_t)(p - s), REASONING_END, tl);
                if (!p)
                        break;
                size_t after = (size_t)(p - s) + tl;
                unsigned char c = after < len ? (unsigned char)s[after] : 0;
                if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c >= 0x80) {
                        if (n++ == 0)
                                first = (size_t)(p - s);
                }
        }
        if (n < REASONING_END_REPEATS)
                return 0;
        f->cause = "loop";
        f->at = first;
        f->what = strdup_printf("the reasoning end tag '%s' %zu times in the answer, each starting it over, "
                                "first at byte %zu", REASONING_END, n, first);
        return f->what ? 1 : -ENOMEM;
}

/* Tokens that print as nothing: a server hides special tokens (<unk>, <pad>, control
 * tokens) by default, so a model that floods them shows a few bytes, or none, for all the
 * tokens it was paid for. Real text is at least a byte per token (a byte-fallback token is
 * one byte), so fewer than half a byte per token cut at the limit is hidden tokens. */
#define HIDDEN_MIN_TOKENS 16

static int check_hidden_tokens(const struct detect_input *in, size_t len, struct finding *f) {
        size_t shown = len + (in->reasoning ? in->reasoning_len : 0);
        if (in->completion_tokens < HIDDEN_MIN_TOKENS || (uint64_t)shown * 2 >= (uint64_t)in->completion_tokens)
                return 0;
        f->cause = "low-information";
        f->at = 0;
        f->what = strdup_printf("%lld tokens generated, %zu bytes of text: tokens that print as nothing "
                                "(special tokens the server hides)",
                                (long long)in->completion_tokens, shown);
        return f->what ? 1 : -ENOMEM;
}

static bool blank(const char *s, size_t len) {
        const unsigned char *u = (const unsigned char *)s;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                bool trunc;
                size_t k = utf8_decode(u + i, len - i, &cp, &trunc);
                if (k == 0 || !(is_space(cp) || text_zero_width(cp)))
                        return false;
                i += k;
        }
        return true;
}

static bool has_word(const char *s, const char *w) {
        size_t wl = strlen(w);
        for (const char *p = s; (p = strstr(p, w)); p++) {
                bool left = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
                char nx = p[wl];
                bool right = !((nx >= 'a' && nx <= 'z') || (nx >= 'A' && nx <= 'Z'));
                if (left && right)
                        return true;
        }
        return false;
}

static const char NAN_SENTENCE[] = "probability tensor contains either";

/* An engine's own words for NaN logits: the offset where they start, or -1. */
static ssize_t find_nan_message(const char *s, size_t len, bool error) {
        if (!s)
                return -1;
        const char *p = memmem(s, len, NAN_SENTENCE, strlen(NAN_SENTENCE));
        if (p)
                return p - s;
        if (!error)
                return -1;
        /* In an error message a bare NaN is the engine speaking; in an answer it may be the
         * right answer ("0.0/0.0 is NaN"), so answers need the engine's full sentence. */
        _cleanup_free_ char *z = strndup(s, len);
        if (!z)
                return -1;
        return has_word(z, "NaN") || has_word(z, "nan") || has_word(z, "NAN") ? 0 : -1;
}

static int set_result(struct detect_result *ret, const char *prefix, const char *s, size_t len,
                      struct finding *f) {
        _cleanup_free_ char *ex = s ? detect_excerpt(s, len, f->at, DETECT_EXCERPT_MAX) : NULL;
        if (s && !ex)
                return -ENOMEM;
        char *ev = ex ? strdup_printf("%s%s: %s", prefix, f->what, ex) : strdup_printf("%s%s", prefix, f->what);
        if (!ev)
                return -ENOMEM;
        *ret = (struct detect_result){.verdict = VERDICT_GARBAGE, .cause = f->cause, .evidence = ev};
        return 0;
}


int detect_output(const struct detect_input *in, struct detect_result *ret) {
        _cleanup_(finding_release) struct finding f = {0};
        const char *text = in->text ? in->text : "";
        size_t len = in->text ? in->len : 0;
        bool length_cut = streq_ptr(in->finish_reason, "length");

        if (in->error_message && find_nan_message(in->error_message, strlen(in->error_message), true) >= 0) {
                f.cause = "nan";
                f.what = strdup("the server reported NaN");
                if (!f.what)
                        return -ENOMEM;
                return set_result(ret, "", in->error_message, strlen(in->error_message), &f);
        }
        for (size_t i = 0; i < in->n_logprobs; i++)
                if (!isfinite(in->logprobs[i])) {
                        f.cause = "nan";
                        f.what = strdup_printf("logprob of token %zu is %s", i,
                                               isnan(in->logprobs[i]) ? "NaN" : "infinite");
                        if (!f.what)
                                return -ENOMEM;
                        return set_result(ret, "", NULL, 0, &f);
                }
        if (in->http_status >= 500 || in->error_message) {
                f.cause = "http";
                if (in->http_status >= 500)
                        f.what = strdup_printf("HTTP %d", in->http_status);
                else
                        f.what = strdup("error event from the server");
                if (!f.what)
                        return -ENOMEM;
                const char *m = in->error_message ? in->error_message : text;
                size_t ml = in->error_message ? strlen(in->error_message) : len;
                return set_result(ret, "", ml ? m : NULL, ml, &f);
        }
        ssize_t at = find_nan_message(text, len, false);
        bool in_reasoning = false;
        if (at < 0 && in->reasoning) {
                at = find_nan_message(in->reasoning, in->reasoning_len, false);
                in_reasoning = at >= 0;
        }
        if (at >= 0) {
                f.cause = "nan";
                f.at = (size_t)at;
                f.what = strdup("the engine's NaN message in the output");
                if (!f.what)
                        return -ENOMEM;
                return in_reasoning ? set_result(ret, "reasoning: ", in->reasoning, in->reasoning_len, &f)
                                    : set_result(ret, "", text, len, &f);
        }

        int r = judge_text(text, len, length_cut, in->forced, in->question, in->question ? in->question_len : 0, &f);
        /* Forced past its end, a model starts its turn over: the tag is no sign there. */
        if (r == 0 && !in->forced)
                r = check_reasoning_tags(text, len, &f);
        if (r < 0)
                return r;
        if (r > 0)
                return set_result(ret, "", text, len, &f);
        if (in->reasoning) {
                /* The reasoning part was cut too when the answer never started. */
                r = judge_text(in->reasoning, in->reasoning_len, length_cut && blank(text, len), in->forced, NULL, 0,
                               &f);
                if (r < 0)
                        return r;
                if (r > 0)
                        return set_result(ret, "reasoning: ", in->reasoning, in->reasoning_len, &f);
        }
        /* Forced past its end, a model may spend its tokens on end-of-turn and other special
         * tokens the server hides, or say nothing visible at all: neither is a fault there. */
        if (in->forced) {
                *ret = (struct detect_result){.verdict = VERDICT_PASS};
                return 0;
        }
        if (length_cut && !blank(text, len)) {
                r = check_hidden_tokens(in, len, &f);
                if (r < 0)
                        return r;
                if (r > 0)
                        return set_result(ret, "", text, len, &f);
        }
        if (blank(text, len)) {
                f.cause = "empty";
                if (in->reasoning && !blank(in->reasoning, in->reasoning_len))
                        f.what = strdup_printf("empty answer after %zu bytes of reasoning (finish_reason %s)",
                                               in->reasoning_len, in->finish_reason ? in->finish_reason : "unknown");
                else
                        f.what = strdup_printf("empty answer (%zu bytes of whitespace, finish_reason %s)", len,
                                               in->finish_reason ? in->finish_reason : "unknown");
                if (!f.what)
                        return -ENOMEM;
                return set_result(ret, "", NULL, 0, &f);
        }
        *ret = (struct detect_result){.verdict = VERDICT_PASS};
        return 0;
}

void detect_result_release(struct detect_result *r) {
        if (!r)
                return;
        free(r->evidence);
        *r = (struct detect_result){.verdict = VERDICT_PASS};
}
