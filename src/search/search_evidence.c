/* search_evidence.c -- what a failure's line says of the matrix: the flags it names, the
 * values it quotes or names, its signature (docs/search.md, "How evidence is read"). */
#include "search/search.h"
#include "search/search_int.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text/buf.h"
#include "base/util.h"
#include "gate/diagnose.h"

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

bool search_line_quiet(const char *kind, const char *evidence) {
        if (!evidence)
                return false;
        /* the quote of a log with no error line in it (diagnose_exit, diagnose_deadline): a
         * server that hangs is stuck where its last line says; one that died printed it last */
        const char *last = strstr(evidence, DIAGNOSE_LAST_LINE);
        if (last && !startswith(kind ? kind : "", "timeout"))
                return true;
        return diagnose_line_quiet(last ? last + strlen(DIAGNOSE_LAST_LINE) : evidence);
}

bool search_says_configuration(const char *evidence) {
        static const char *const configuration[] = {"this configuration", "the current configuration",
                                                    "this combination", "in combination with", "these settings",
                                                    "the current settings", NULL};
        /* the GPU's or the install's reasons make it the value's alone */
        static const char *const hardware[] = {"compute capability", "sm_", "sm1", "sm8", "sm9", "hopper", "blackwell",
                                               "ampere", "architecture", "gpu", "device", "not installed",
                                               "install it", "not built", "not compiled", NULL};
        if (!evidence)
                return false;
        bool says = false;
        for (const char *const *p = configuration; *p && !says; p++)
                says = strcasestr(evidence, *p) != NULL;
        for (const char *const *p = hardware; *p && says; p++)
                says = strcasestr(evidence, *p) == NULL;
        return says;
}

/* The word quoted right after a flag's mention that ends at p ("--kv fp8", "--kv=fp8",
 * "--kv 'fp8'", "`--kv fp8`."): its start, and in *ret_len its length (0: none). */
static const char *quoted_after(const char *p, size_t *ret_len) {
        while (*p == ' ' || *p == '=' || *p == ':' || *p == '\'' || *p == '"' || *p == '`')
                p++;
        size_t n = strcspn(p, " \t\n,;)]}'\"`");
        while (n > 0 && strchr(".:!?", p[n - 1]))
                n--; /* the sentence's: "--b y: the kernels ..." */
        *ret_len = n;
        return p;
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
                size_t n;
                p = quoted_after(p, &n);
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

/* Whether a word of advice stands in the few words before q (back to evidence): "use",
 * "try", "set", "pass", "switch to", not denied ("cannot use", "do not set"). */
static bool advice_before(const char *evidence, const char *q) {
        static const char *const verbs[] = {"use", "try", "set", "pass", "switch to", "specify", "choose", "select"};
        static const char *const denials[] = {"not ", "n't ", "cannot ", "never "};
        const char *from = q - MIN((size_t)(q - evidence), (size_t)24);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                size_t n = strlen(verbs[i]);
                for (const char *p = from; p + n <= q; p++) {
                        if (strncasecmp(p, verbs[i], n) != 0 || (p > evidence && isalpha((unsigned char)p[-1])) ||
                            isalpha((unsigned char)p[n]))
                                continue;
                        for (size_t d = 0; d < ELEMENTSOF(denials); d++) {
                                size_t m = strlen(denials[d]);
                                if ((size_t)(p - evidence) >= m && strncasecmp(p - m, denials[d], m) == 0)
                                        return false;
                        }
                        return true;
                }
        }
        return false;
}

/* Whether evidence advises another value of axis a than the cell's, quoted after the axis's
 * flag, whether the matrix holds it or not: "Please use `--attention-backend flashinfer`",
 * "try --kv-cache-dtype auto instead". */
static bool advises_other(const struct search_space *s, size_t a, const char *evidence, size_t cell_value) {
        const char *flag = s->axis_flags ? s->axis_flags[a] : NULL;
        if (!flag)
                return false;
        const char *bare = flag;
        while (*bare == '-')
                bare++;
        const char *cell_name = s->value_names[a][cell_value];
        for (const char *p = evidence; (p = find_flag(evidence, p, flag));) {
                const char *start = p - strlen(bare);
                while (start > evidence && strchr("-`'\" ", start[-1]))
                        start--;
                size_t n;
                const char *v = quoted_after(p, &n);
                if (n == 0 || *v == '-' || (cell_name && strlen(cell_name) == n && strncasecmp(v, cell_name, n) == 0))
                        continue;
                const char *after = v + n;
                while (*after && strchr("`'\" ", *after))
                        after++;
                if (advice_before(evidence, start) || strncasecmp(after, "instead", 7) == 0)
                        return true;
        }
        return false;
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
        for (size_t a = 0; a < s->n_axes; a++) {
                if (search_value_on(s, a, name, n) >= 0)
                        return true;
                const char *const *sp = s->axis_spellings ? s->axis_spellings[a] : NULL;
                for (size_t i = 0; sp && sp[i] && sp[i + 1]; i += 2)
                        if (strlen(sp[i]) == n && strncasecmp(sp[i], name, n) == 0)
                                return true;
        }
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

/* An environment variable's name past its engine's prefix, where two words or more follow
 * it: VLLM_FLASHINFER_MOE_BACKEND is "FLASHINFER_MOE_BACKEND", which a line writes
 * "FlashInfer MoE backend" (vLLM: "Unsupported FlashInfer MoE backend masked_gemm for
 * FLASHINFER_CUTLASS"). NULL for a name not all capitals, digits and '_'. */
static const char *env_words(const char *name) {
        if (!name || !isupper((unsigned char)name[0]))
                return NULL;
        for (const char *p = name; *p; p++)
                if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
                        return NULL;
        const char *rest = strchr(name, '_');
        if (!rest || rest - name < 2)
                return NULL;
        rest++;
        return strchr(rest, '_') && strlen(rest) >= 6 ? rest : NULL;
}

/* The i-th phrase axis a is mentioned by (its flag, the last part of a dotted flag or an
 * environment variable's name past its prefix, a switch's thing, then its words and the
 * words of those that are environment variables' names), without leading dashes; NULL past
 * the last, "" for one it has not. */
static const char *axis_phrase(const struct search_space *s, size_t a, size_t i) {
        static const char *const SWITCH[] = {"enable-", "disable-", "use-", "no-"};
        const char *flag = s->axis_flags ? s->axis_flags[a] : NULL;
        const char *phrase;
        if (i == 0)
                phrase = flag;
        else if (i == 1) {
                /* --speculative-config.num_speculative_tokens: "num_speculative_tokens:6"; a
                 * compound name only (".backend" would take every "backend" in a line) */
                const char *dot = flag ? strrchr(flag, '.') : NULL;
                phrase = dot && strlen(dot + 1) >= 4 && strpbrk(dot + 1, "_-") ? dot + 1 : env_words(flag);
        } else if (i == 2) {
                /* a switch's flag names the thing it switches: --enable-torch-compile is "torch
                 * compile" ("EAGLE speculative algorithm does not support torch compile"),
                 * --disable-cuda-graph "CUDA graph" */
                const char *bare = flag;
                while (bare && *bare == '-')
                        bare++;
                phrase = NULL;
                for (size_t w = 0; bare && w < ELEMENTSOF(SWITCH); w++)
                        if (strncasecmp(bare, SWITCH[w], strlen(SWITCH[w])) == 0 &&
                            strlen(bare + strlen(SWITCH[w])) >= 4)
                                phrase = bare + strlen(SWITCH[w]);
        } else {
                const char *const *words = s->axis_words ? s->axis_words[a] : NULL;
                size_t n = 0;
                while (words && words[n])
                        n++;
                if (i - 3 < n)
                        phrase = words[i - 3];
                else if (i - 3 < 2 * n)
                        phrase = env_words(words[i - 3 - n]);
                else
                        return NULL;
        }
        if (!phrase)
                return "";
        while (*phrase == '-')
                phrase++;
        return phrase;
}

/* Whether [start, end) lies inside a longer mention of another axis than a: "MoE runner
 * backend" inside "speculative MoE runner backend" is the draft's axis only. */
static bool inside_other(const struct search_space *s, size_t a, const char *evidence, const char *start,
                         const char *end) {
        for (size_t b = 0; b < s->n_axes; b++) {
                const char *phrase;
                for (size_t i = 0; b != a && (phrase = axis_phrase(s, b, i)); i++) {
                        size_t len = strlen(phrase);
                        if (len <= (size_t)(end - start))
                                continue;
                        for (const char *e = evidence; (e = find_flag(evidence, e, phrase));)
                                if (e - len <= start && end <= e)
                                        return true;
                }
        }
        return false;
}

/* How far the nearest mention of axis a (its flag, the last part of a dotted flag, or one of
 * its words) is from the word [p, q) of evidence; SIZE_MAX when none. *ret_len (may be NULL):
 * the length of the phrase that near, the longest of those as near (a longer phrase says
 * more: "speculative MoE runner backend" over "MoE runner backend"). */
static size_t axis_distance(const struct search_space *s, size_t a, const char *evidence, const char *p, const char *q,
                            size_t *ret_len) {
        size_t best = SIZE_MAX, best_len = 0;
        const char *phrase;
        for (size_t i = 0; (phrase = axis_phrase(s, a, i)); i++) {
                size_t len = strlen(phrase);
                if (len == 0)
                        continue;
                for (const char *e = evidence; (e = find_flag(evidence, e, phrase));) {
                        const char *start = e - len;
                        if (inside_other(s, a, evidence, start, e))
                                continue;
                        size_t d = e <= p ? (size_t)(p - e) : start >= q ? (size_t)(start - q) : 0;
                        if (d < best || (d == best && len > best_len)) {
                                best = d;
                                best_len = len;
                        }
                }
        }
        if (ret_len)
                *ret_len = best_len;
        return best;
}

size_t search_axis_distance(const struct search_space *s, size_t a, const char *evidence, const char *p, const char *q) {
        return axis_distance(s, a, evidence, p, q, NULL);
}

/* Words beside a value that tell its axis: within this many characters. */
#define AXIS_WORDS_NEAR 40

/* A value's name that counts without its axis's words: letters with digits or '_'. */
static bool distinctive(const char *name) {
        bool alpha = false, other = false;
        size_t n = strlen(name);
        for (size_t i = 0; i < n; i++) {
                alpha |= isalpha((unsigned char)name[i]) != 0;
                other |= isdigit((unsigned char)name[i]) || name[i] == '_';
        }
        return alpha && other && n >= 3;
}

/* Whether the word of evidence around p is two alternatives written a/b ("bf16/bfloat16",
 * "SM100/SM103"): one '/', inside, and no '.' (a path has more, or a file's name). */
static bool alternatives(const char *evidence, const char *p) {
        const char *b = p, *e = p;
        while (b > evidence && word_char(b[-1]))
                b--;
        while (word_char(*e))
                e++;
        const char *slash = memchr(b, '/', (size_t)(e - b));
        return slash && slash > b && slash + 1 < e && !memchr(slash + 1, '/', (size_t)(e - slash - 1)) &&
               !memchr(b, '.', (size_t)(e - b));
}

/* Whether the word right before [p, p + n) or right after it, one space apart, names what a
 * backend value is: "Backend FLASHINFER does not support", "the Triton kernel", "Cutlass
 * MoE"; or the mention is pydantic's value given ("input_value='WIDEEP'"). A plain word
 * so placed is a value's name. */
static bool mention_ends(const char *evidence, const char *p);
static bool noun_beside(const char *evidence, const char *p, size_t n) {
        static const char *const nouns[] = {"backend", "backends", "kernel", "kernels", "moe", "gemm", "runner"};
        static const char given[] = "input_value='";
        const char *after = p + n, *before = p;
        if ((size_t)(p - evidence) >= sizeof(given) - 1 &&
            strncmp(p - (sizeof(given) - 1), given, sizeof(given) - 1) == 0 && *after == '\'')
                return true;
        for (size_t i = 0; i < ELEMENTSOF(nouns); i++) {
                size_t m = strlen(nouns[i]);
                /* the noun may end a sentence ("… guidance backends.") */
                if (after[0] == ' ' && strncasecmp(after + 1, nouns[i], m) == 0 && mention_ends(evidence, after + 1 + m))
                        return true;
                if ((size_t)(before - evidence) >= m + 1 && before[-1] == ' ' &&
                    strncasecmp(before - 1 - m, nouns[i], m) == 0 &&
                    (before - 1 - m == evidence || !word_char(before[-2 - (long)m])))
                        return true;
        }
        return false;
}

/* Whether [p, p + n) stands alone in quotes: 'triton' in "requires one of ['triton',
 * 'fa3']". A plain word so quoted is a name, not prose. */
static bool quoted_word(const char *evidence, const char *p, size_t n) {
        return p > evidence && strchr("'\"`", p[-1]) && p[n] == p[-1];
}

/* A name that says no more than a setting's state: "auto", "none", "on". */
static bool plain_state(const char *name) {
        static const char *const states[] = {"auto", "default", "none", "on", "off", "true", "false",
                                             "yes", "no", "all", "enabled", "disabled"};
        for (size_t i = 0; i < ELEMENTSOF(states); i++)
                if (strcasecmp(name, states[i]) == 0)
                        return true;
        return false;
}

/* What joins the members of a list, the longest first. */
static const char *const JOINERS[] = {", and ", ", or ", ", ", " and ", " or "};

/* The length of the joiner of a list at p, or 0. */
static size_t joiner_at(const char *p) {
        const char *const *joiners = JOINERS;
        for (size_t i = 0; i < ELEMENTSOF(JOINERS); i++)
                if (strncmp(p, joiners[i], strlen(joiners[i])) == 0)
                        return strlen(joiners[i]);
        return 0;
}

/* The length of the joiner of a list that ends at p (its last character p[-1]), or 0. */
static size_t joiner_before(const char *evidence, const char *p) {
        const char *const *joiners = JOINERS;
        for (size_t i = 0; i < ELEMENTSOF(JOINERS); i++) {
                size_t m = strlen(joiners[i]);
                if ((size_t)(p - evidence) >= m && strncmp(p - m, joiners[i], m) == 0)
                        return m;
        }
        return 0;
}

/* Whether the word [q, q + m), a value of axis a, is a mention on its own: a distinctive name,
 * a word beside a backend's kind, or one alone in quotes. */
static bool strong_name(const struct search_space *s, size_t a, const char *evidence, const char *q, size_t m) {
        long v = search_value_on(s, a, q, m);
        return v >= 0 && (distinctive(s->value_names[a][v]) || quoted_word(evidence, q, m) ||
                          (noun_beside(evidence, q, m) && !plain_state(s->value_names[a][v])));
}

/* Whether the plain word [p, p + n) stands in a list ("xgrammar and guidance backends",
 * "triton, trtllm_mha, fa4, or flashinfer backend") whose members are values of axis a, one
 * of them a mention on its own: a list's members are of a kind. */
#define LIST_MEMBERS 8
static bool listed_with(const struct search_space *s, size_t a, const char *evidence, const char *p, size_t n) {
        const char *q = p;
        size_t m = n;
        for (int i = 0; i < LIST_MEMBERS; i++) { /* the members after it */
                size_t j = joiner_at(q + m);
                if (!j)
                        break;
                q += m + j;
                for (m = 0; word_char(q[m]); m++)
                        ;
                m = word_trim(q, m);
                if (m == 0 || search_value_on(s, a, q, m) < 0)
                        break;
                if (strong_name(s, a, evidence, q, m))
                        return true;
        }
        q = p;
        for (int i = 0; i < LIST_MEMBERS; i++) { /* and before it */
                size_t j = joiner_before(evidence, q);
                if (!j)
                        break;
                const char *end = q - j;
                q = end;
                while (q > evidence && word_char(q[-1]))
                        q--;
                m = (size_t)(end - q);
                if (m == 0 || search_value_on(s, a, q, m) < 0)
                        break;
                if (strong_name(s, a, evidence, q, m))
                        return true;
        }
        return false;
}

/* Where a mention of a value may begin: a word of the line, either of two alternatives
 * (bf16/bfloat16), or a part of a dotted name after a '.' that a letter follows
 * (AttentionBackendEnum.FLASHINFER), not in a path or a number. */
static bool mention_start(const char *evidence, const char *p) {
        if (!word_char(*p))
                return false;
        if (p == evidence || !word_char(p[-1]))
                return true;
        if (p[-1] == '/')
                return alternatives(evidence, p);
        if (p[-1] != '.' || !isalpha((unsigned char)*p))
                return false;
        const char *b = p, *e = p;
        while (b > evidence && word_char(b[-1]))
                b--;
        while (word_char(*e))
                e++;
        return !memchr(b, '/', (size_t)(e - b)) && isalpha((unsigned char)*b);
}

/* Whether a mention ends at p: no letter, digit, '_' or '/' goes on (but the '/' between
 * two alternatives), and a '-' or '.' only where the word ends with it ("q8_0." at a
 * sentence's end, not "q8_0.gguf"). */
static bool mention_ends(const char *evidence, const char *p) {
        if (*p == '/')
                return alternatives(evidence, p);
        if (isalnum((unsigned char)*p) || *p == '_')
                return false;
        if (*p == '-' || *p == '.')
                return !isalnum((unsigned char)p[1]) && p[1] != '_' && p[1] != '/';
        return true;
}

/* The length of the text at p that spells name, or 0: case ignored, and where name has '_'
 * or '-' the text may have either, or a space ("TRTLLM MHA" spells trtllm_mha), or nothing
 * between two letters ("DeepGEMM" spells deep_gemm; not "q80" for q8_0). */
static size_t spells(const char *evidence, const char *p, const char *name) {
        size_t i = 0, j = 0;
        for (; name[i]; i++, j++) {
                char x = name[i], y = p[j];
                bool sep = x == '_' || x == '-';
                if (sep && i > 0 && isalpha((unsigned char)name[i - 1]) && isalpha((unsigned char)name[i + 1]) &&
                    isalpha((unsigned char)y) && tolower((unsigned char)y) == tolower((unsigned char)name[i + 1])) {
                        j--; /* joined: the next letter of name is at y */
                        continue;
                }
                if (!y || (sep ? !(y == '_' || y == '-' || y == ' ') : tolower((unsigned char)x) != tolower((unsigned char)y)))
                        return 0;
        }
        return j > 0 && mention_ends(evidence, p + j) ? j : 0;
}

static bool path_char(char ch) {
        return isalnum((unsigned char)ch) || (ch && strchr("._-/:+@", ch));
}

size_t search_argument_paths(const char *arg, const char **ret_start, size_t *ret_len, size_t max) {
        size_t n = 0;
        for (const char *p = arg; p && *p && n < max;) {
                if (!path_char(*p)) {
                        p++;
                        continue;
                }
                const char *e = p;
                while (path_char(*e))
                        e++;
                /* not the punctuation that ends a sentence or a list */
                const char *end = e;
                while (end > p && strchr(".:-", end[-1]))
                        end--;
                bool inside = false;
                for (const char *q = p + 1; q + 1 < end && !inside; q++)
                        inside = *q == '/' && isalnum((unsigned char)q[-1]) && isalnum((unsigned char)q[1]);
                if ((size_t)(end - p) >= SEARCH_PATH_MIN && inside) {
                        ret_start[n] = p;
                        ret_len[n++] = (size_t)(end - p);
                }
                p = e;
        }
        return n;
}

/* The value of axis a that the text at p spells, by its name, the matrix's spelling of it
 * (axis_spellings) or one of the engine's names for it (axis_aliases), the longest, or -1;
 * *ret_len its length, *ret_alias whether it was the engine's name, *ret_as the name or
 * spelling it was. */
static long spelled_on(const struct search_space *s, size_t a, const char *evidence, const char *p, size_t *ret_len,
                       bool *ret_alias, const char **ret_as) {
        long best = -1;
        size_t best_n = 0;
        *ret_alias = false;
        *ret_as = NULL;
        bool best_exact = false;
        for (size_t v = 0; s->value_names && v < s->n_values[a]; v++) {
                size_t n = s->value_names[a][v] ? spells(evidence, p, s->value_names[a][v]) : 0;
                /* two values alike but for case (NixlConnector, NIXLConnector): the one
                 * written as the line writes it */
                bool exact = n > 0 && strncmp(p, s->value_names[a][v], n) == 0;
                if (n > best_n || (n > 0 && n == best_n && exact && !best_exact)) {
                        best_exact = exact;
                        best_n = n;
                        best = (long)v;
                        *ret_as = s->value_names[a][v];
                }
        }
        const char *const *sp = s->axis_spellings ? s->axis_spellings[a] : NULL;
        for (size_t i = 0; sp && sp[i] && sp[i + 1]; i += 2) {
                size_t n = spells(evidence, p, sp[i]);
                long v = n > best_n ? search_value_on(s, a, sp[i + 1], strlen(sp[i + 1])) : -1;
                if (v >= 0) {
                        best_n = n;
                        best = v;
                        *ret_as = sp[i];
                }
        }
        const char *const *al = s->axis_aliases ? s->axis_aliases[a] : NULL;
        for (size_t i = 0; al && al[i] && al[i + 1]; i += 2) {
                size_t n = spells(evidence, p, al[i]);
                /* as long as the value's own name spelled there ("FlashInfer", flashinfer): the
                 * engine's name, so distinctive */
                long v = n > 0 && n >= best_n ? search_value_on(s, a, al[i + 1], strlen(al[i + 1])) : -1;
                if (v >= 0) {
                        best_n = n;
                        best = v;
                        *ret_alias = true;
                        *ret_as = al[i];
                }
        }
        *ret_len = best_n;
        return best;
}

/* Whether a phrase of a setting no axis sets (other_words) stands right beside the
 * mention [p, p + n): ending one character before it, or beginning one after. */
static bool beside_other(const struct search_space *s, const char *evidence, const char *p, size_t n) {
        for (const char *const *w = s->other_words; w && *w; w++) {
                const char *name = *w;
                while (*name == '-')
                        name++;
                size_t len = strlen(name);
                for (const char *e = evidence; (e = find_flag(evidence, e, *w));) {
                        const char *b = e - len;
                        if ((e <= p && p - e <= 1) || (b >= p + n && b - (p + n) <= 1))
                                return true;
                }
        }
        return false;
}

/* Of the axes whose value cands[] (nc of them) the mention [p, p + n) spells, the one whose
 * words stand nearest to it (within AXIS_WORDS_NEAR; none on a tie), or -1; or the one axis
 * when it alone has a value of that name (shared: how many have) and the name or spelling
 * the mention was (as[axis]) is distinctive, or was the engine's own name for it
 * (alias[axis]), and lone allows it. */
static long mention_axis(const struct search_space *s, const char *evidence, const char *p, size_t n,
                         const size_t *cands, size_t nc, size_t shared, const bool *alias, const char *const *as,
                         bool lone) {
        long pick = -1;
        size_t near = SIZE_MAX, near_len = 0, ties = 0;
        for (size_t i = 0; i < nc; i++) {
                size_t len, d = axis_distance(s, cands[i], evidence, p, p + n, &len);
                if (d > AXIS_WORDS_NEAR)
                        continue;
                if (d < near || (d == near && len > near_len)) {
                        near = d;
                        near_len = len;
                        pick = (long)cands[i];
                        ties = 0;
                } else if (d == near && len == near_len)
                        ties++;
        }
        if (ties)
                return -1;
        if (pick < 0 && lone && shared == 1 && nc == 1 &&
            (alias[cands[0]] ||
             (as[cands[0]] && (distinctive(as[cands[0]]) || quoted_word(evidence, p, n) ||
                               (!plain_state(as[cands[0]]) &&
                                (noun_beside(evidence, p, n) || listed_with(s, cands[0], evidence, p, n))))))) {
                /* not where another axis's words stand right beside it: "FP8 MoE backend"
                 * is the MoE backend's, whatever fp8 is on the KV cache's axis; nor the
                 * words of a setting no axis sets ("The quantization method fp8") */
                for (size_t b = 0; b < s->n_axes; b++)
                        if (b != cands[0] && search_axis_distance(s, b, evidence, p, p + n) <= 1)
                                return -1;
                if (beside_other(s, evidence, p, n))
                        return -1;
                pick = (long)cands[0];
        }
        return pick;
}

/* Whether the mention [p, p + n) is a part of the name of the value cell c holds on another
 * axis than a, as a library's name is of its components' ("FlashInfer" of the MoE runner's
 * flashinfer_trtllm, beside the attention backend's flashinfer): a bare mention of it then
 * names neither. */
static bool part_of_held(const struct search_space *s, const size_t *c, size_t a, const char *p, size_t n) {
        for (size_t b = 0; b < s->n_axes; b++) {
                const char *v = b == a ? NULL : s->value_names[b][c[b]];
                size_t m = v ? strlen(v) : 0;
                if (m <= n + 1)
                        continue;
                if ((strncasecmp(v, p, n) == 0 && (v[n] == '_' || v[n] == '-')) ||
                    (strncasecmp(v + m - n, p, n) == 0 && (v[m - n - 1] == '_' || v[m - n - 1] == '-')))
                        return true;
        }
        return false;
}

/* Whether word (n characters) is a spelling of axis a's flag: the flag itself (without a
 * joining '='), or one of the engine's spellings of it (axis_forms). */
static bool spells_flag(const char *f, const char *word, size_t n) {
        size_t m = strlen(f);
        while (m > 1 && f[m - 1] == '=')
                m--;
        return m == n && strncmp(f, word, n) == 0;
}

static bool is_flag_of(const struct search_space *s, size_t a, const char *word, size_t n) {
        const char *flag = s->axis_flags ? s->axis_flags[a] : NULL;
        if (!flag)
                return false;
        if (spells_flag(flag, word, n))
                return true;
        for (const char *const *f = s->axis_forms ? s->axis_forms[a] : NULL; f && *f; f++)
                if (spells_flag(*f, word, n))
                        return true;
        return false;
}

/* The axis whose flag an error about one argument names, or -1: llama.cpp's "error while
 * handling argument \"-sm\": invalid value", "error while handling environment variable
 * \"LLAMA_ARG_FLASH_ATTN\"" and "error: invalid argument: --bogus-flag", argparse's
 * "argument --moe-runner-backend: invalid choice: …" and "unrecognized arguments: --x",
 * click's "Invalid value for '--backend'"; or whose value an error takes for an argument of
 * its own ("error: invalid argument: off"). The argument is the cell's: its value, or the
 * flag itself where the engine does not know it, is what failed. */
static long argument_axis(const struct search_space *s, const size_t *c, const char *evidence) {
        static const char *const before[] = {"argument", "arguments:", "environment variable", "invalid value for"};
        long axis = -1;
        for (size_t i = 0; i < ELEMENTSOF(before); i++) {
                size_t m = strlen(before[i]);
                for (const char *p = evidence; (p = strcasestr(p, before[i])); p += m) {
                        if ((p > evidence && isalpha((unsigned char)p[-1])) || isalpha((unsigned char)p[m]))
                                continue;
                        const char *w = p + m;
                        while (*w == ' ' || *w == ':' || *w == '"' || *w == '\'' || *w == '`' || *w == '(')
                                w++;
                        size_t n = strcspn(w, " \t\n:\"'`,;=)");
                        for (size_t a = 0; n > 0 && a < s->n_axes; a++)
                                /* the flag; or, as an argument (not an environment
                                 * variable's), the cell's value itself, taken for one of its
                                 * own: "--kv-offload off" sets a switch that takes no value,
                                 * and llama.cpp says "error: invalid argument: off" */
                                if (is_flag_of(s, a, w, n) || (i <= 1 && search_value_on(s, a, w, n) == (long)c[a])) {
                                        if (axis >= 0 && axis != (long)a)
                                                return -1; /* two arguments: a pair's */
                                        axis = (long)a;
                                }
                }
        }
        return axis;
}

/* The value of axis a that a constant's name spells after the axis's flag, in capitals
 * with '_' ("LLAMA_SPLIT_MODE_TENSOR" for --split-mode tensor), or -1. */
static long constant_value(const struct search_space *s, size_t a, const char *evidence) {
        const char *flag = s->axis_flags ? s->axis_flags[a] : NULL;
        if (!flag || !s->value_names)
                return -1;
        while (*flag == '-')
                flag++;
        size_t n = strlen(flag);
        while (n > 0 && flag[n - 1] == '=')
                n--;
        if (n < 3)
                return -1;
        for (const char *p = evidence; *p; p++) {
                size_t i = 0;
                for (; i < n; i++) {
                        char x = p[i], y = flag[i] == '-' ? '_' : (char)toupper((unsigned char)flag[i]);
                        if (x != y)
                                break;
                }
                if (i < n || p[n] != '_' || (p > evidence && p[-1] != '_' && word_char(p[-1])))
                        continue;
                const char *v = p + n + 1, *e = v;
                while (isupper((unsigned char)*e) || isdigit((unsigned char)*e) || *e == '_')
                        e++;
                if (e > v && !word_char(*e)) {
                        long x = search_value_on(s, a, v, (size_t)(e - v));
                        if (x >= 0)
                                return x;
                }
        }
        return -1;
}

static enum search_naming names_value(const struct search_space *s, size_t k, const char *evidence, size_t *ret_axis,
                                      size_t *ret_pair);

/* Whether the word at w (case ignored) stands between from and to, a word of its own. */
static bool word_between(const char *evidence, const char *from, const char *to, const char *w) {
        size_t n = strlen(w);
        for (const char *p = from; p + n <= to; p++)
                if (strncasecmp(p, w, n) == 0 && (p == evidence || !isalnum((unsigned char)p[-1])) &&
                    !isalnum((unsigned char)p[n]))
                        return true;
        return false;
}

/* How far back from p (at most max characters) the clause that holds p begins: a sentence's
 * end (". ", "; ", "! ", "? ") stops it. */
static const char *clause_start(const char *evidence, const char *p, size_t max) {
        const char *b = p;
        while (b > evidence && (size_t)(p - b) < max &&
               !(b - evidence >= 2 && strchr(".;!?", b[-2]) && b[-1] == ' '))
                b--;
        return b;
}

/* The bracket ('(', '[' or '{') that holds p, within max characters back, or NULL; and
 * (ret_close, may be NULL) the one that closes it, or the line's end. */
static const char *enclosing(const char *evidence, const char *p, size_t max, const char **ret_close) {
        int depth = 0;
        const char *open = NULL;
        for (const char *o = p; o > evidence && (size_t)(p - o) < max; o--) {
                char ch = o[-1];
                if (ch == '}' || ch == ']' || ch == ')')
                        depth++;
                else if ((ch == '{' || ch == '[' || ch == '(') && depth-- == 0) {
                        open = o - 1;
                        break;
                }
        }
        if (!open || !ret_close)
                return open;
        const char *e = open + 1;
        for (depth = 0; *e; e++) {
                if (*e == '{' || *e == '[' || *e == '(')
                        depth++;
                else if ((*e == '}' || *e == ']' || *e == ')') && depth-- == 0)
                        break;
        }
        *ret_close = e;
        return open;
}

/* Whether the one other value of axis a a line mentions (at p) is said to be what works, in
 * a line that speaks of the axis (its flag or words): "only" or "one of" before it in its
 * clause ("is only supported with flashinfer_cutlass moe runner backend", "only supports
 * topk = 1"), "the only" after it ("… or flashinfer backend are the only supported
 * backends, use --attention-backend …"); or it stands in a set right after the axis's flag
 * ("set with --quantization {modelopt, modelopt_fp8}"). Without the axis's words one value
 * says too little ("only 'fa4' is supported here"). */
#define RESTRICT_NEAR 60
static bool restricted(const struct search_space *s, size_t a, const char *evidence, const char *p) {
        if (!p)
                return false;
        const char *b = clause_start(evidence, p, RESTRICT_NEAR);
        bool about = axis_distance(s, a, evidence, evidence, evidence, NULL) != SIZE_MAX;
        if (about && (word_between(evidence, b, p, "only") || word_between(evidence, b, p, "one of") ||
                      word_between(evidence, b, p, "e.g") || word_between(evidence, b, p, "such as")))
                return true;
        const char *e = p;
        while (*e && (size_t)(e - p) < RESTRICT_NEAR && !(strchr(".;!?", *e) && (e[1] == ' ' || !e[1])))
                e++;
        if (about && word_between(evidence, p, e, "the only"))
                return true;
        /* the set the mention stands in, opened right after the flag or the axis's words */
        const char *open = enclosing(evidence, p, 2 * RESTRICT_NEAR, NULL);
        return open && axis_distance(s, a, evidence, open, open + 1, NULL) <= 1;
}

/* Whether [p, e) is an environment variable's name: capitals, digits and '_', one '_' at
 * least, 4 characters or more, a word of its own. */
static bool env_name(const char *evidence, const char *p, const char *e) {
        if (e - p < 4 || (p > evidence && word_char(p[-1])) || !isupper((unsigned char)*p) || !memchr(p, '_', (size_t)(e - p)))
                return false;
        for (const char *q = p; q < e; q++)
                if (!isupper((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '_')
                        return false;
        return true;
}

/* Whether [p, e) spells an axis's flag (or one of its forms). */
static bool any_axis_flag(const struct search_space *s, const char *p, const char *e) {
        for (size_t a = 0; a < s->n_axes; a++)
                if (is_flag_of(s, a, p, (size_t)(e - p)))
                        return true;
        return false;
}

/* Whether the line is about a setting the matrix does not vary: it gives a flag or an
 * environment variable that is no axis's a value ("requested via
 * --fp8-gemm-backend=flashinfer_trtllm", "for example: --dtype=half", "Found
 * VLLM_USE_FLASHINFER_MOE_FP4=1"), or argparse's "argument --lora-backend:" names one. */
static bool outside_flag(const struct search_space *s, const char *evidence) {
        for (const char *p = evidence; *p; p++) {
                if (!isupper((unsigned char)*p) || (p > evidence && word_char(p[-1])))
                        continue;
                const char *e = p;
                while (word_char(*e))
                        e++;
                if (*e == '=' && e[1] && e[1] != ' ' && env_name(evidence, p, e) && !any_axis_flag(s, p, e))
                        return true;
        }
        for (const char *p = evidence; (p = strstr(p, "--")); p += 2) {
                if (p > evidence && (word_char(p[-1]) || p[-1] == '-'))
                        continue;
                const char *e = p + 2;
                while (isalnum((unsigned char)*e) || *e == '-' || *e == '_' || *e == '.')
                        e++;
                bool valued = *e == '=' && e[1] && e[1] != ' ';
                bool argument = *e == ':' && p - evidence >= 9 && strncmp(p - 9, "argument ", 9) == 0;
                if (e - p >= 4 && (valued || argument) && !any_axis_flag(s, p, e))
                        return true;
        }
        return false;
}

/* Whether the mention at p stands in an echo of settings: an object's repr of three or
 * more "key=value" items ("AttentionSelectorConfig(head_size=192, dtype=torch.bfloat16,
 * kv_cache_dtype=auto, use_mla=True, ...)"), which says what every setting was, not
 * which failed; not pydantic's "[type=value_error, input_value='fp8_e4m3', ...]", whose
 * input_value is the value given. [*ret_b, *ret_e) is the bracket. */
#define ECHO_ITEMS 3
static bool settings_echo(const char *evidence, const char *p, const char **ret_b, const char **ret_e) {
        const char *close, *open = enclosing(evidence, p, SEARCH_EVIDENCE_READ, &close);
        if (!open || *open != '(' || open == evidence || !(isalnum((unsigned char)open[-1]) || open[-1] == '_'))
                return false;
        size_t items = 0;
        for (const char *q = open + 1; q < close; q++) {
                if (!(q == open + 1 || (q - open >= 3 && q[-2] == ',' && q[-1] == ' ')))
                        continue;
                const char *w = q;
                while (w < close && (isalnum((unsigned char)*w) || *w == '_'))
                        w++;
                items += w > q && !isdigit((unsigned char)*q) && w < close && *w == '=';
        }
        *ret_b = open;
        *ret_e = close;
        return items >= ECHO_ITEMS;
}

/* Whether axis a is named (its flag or words) in evidence outside [b, e). */
static bool named_outside(const struct search_space *s, size_t a, const char *evidence, const char *b, const char *e) {
        char rest[SEARCH_EVIDENCE_READ + 1];
        size_t n = strnlen(evidence, SEARCH_EVIDENCE_READ);
        memcpy(rest, evidence, n);
        rest[n] = '\0';
        memset(rest + (b - evidence), ' ', (size_t)(MIN(e, evidence + n) - b));
        return axis_distance(s, a, rest, rest, rest, NULL) != SIZE_MAX;
}

/* Whether the mention at p stands in a list of what works: a bracket that "supported" or
 * "supports" opens within its clause ("Supported dtypes: [torch.float16, torch.bfloat16]"),
 * not "not supported" or "unsupported". */
static bool supported_list(const char *evidence, const char *p) {
        const char *close, *open = enclosing(evidence, p, 2 * RESTRICT_NEAR, &close);
        if (!open)
                return false;
        const char *b = clause_start(evidence, open, 40);
        for (const char *q = b; q < open; q++) {
                bool word = (q == evidence || !isalnum((unsigned char)q[-1]));
                if (!word || (strncasecmp(q, "supported", 9) != 0 && strncasecmp(q, "supports", 8) != 0))
                        continue;
                return !(q - b >= 4 && strncasecmp(q - 4, "not ", 4) == 0);
        }
        return false;
}

/* search_names_value, and search_names_pair where ret_pair is not NULL. */
static enum search_naming names_value_cut(const struct search_space *s, size_t k, const char *evidence,
                                          size_t *ret_axis, size_t *ret_pair) {
        if (!evidence || !s->value_names || k >= s->n_cells || s->n_axes > 16)
                return SEARCH_NAMES_NONE;
        /* the reading looks around each mention: a line is read only so far */
        size_t n = strnlen(evidence, SEARCH_EVIDENCE_READ + 1);
        if (n <= SEARCH_EVIDENCE_READ)
                return names_value(s, k, evidence, ret_axis, ret_pair);
        char cut[SEARCH_EVIDENCE_READ + 1];
        memcpy(cut, evidence, SEARCH_EVIDENCE_READ);
        cut[SEARCH_EVIDENCE_READ] = '\0';
        return names_value(s, k, cut, ret_axis, ret_pair);
}

enum search_naming search_names_value(const struct search_space *s, size_t k, const char *evidence,
                                      size_t *ret_axis) {
        return names_value_cut(s, k, evidence, ret_axis, NULL);
}

bool search_names_pair(const struct search_space *s, size_t k, const char *evidence, size_t ret[2]) {
        size_t axis;
        ret[0] = ret[1] = SIZE_MAX;
        return names_value_cut(s, k, evidence, &axis, ret) == SEARCH_NAMES_NONE && ret[0] != SIZE_MAX;
}

/* Two of the cell's values, each named as search_names_value would name it alone: into
 * ret_pair (lower axis first) when not NULL. */
static void two_named(size_t *ret_pair, long a, long b) {
        if (ret_pair) {
                ret_pair[0] = (size_t)MIN(a, b);
                ret_pair[1] = (size_t)MAX(a, b);
        }
}

static enum search_naming names_value(const struct search_space *s, size_t k, const char *evidence, size_t *ret_axis,
                                      size_t *ret_pair) {
        const size_t *c = s->choice + k * s->n_axes;
        long named = -1;
        /* per axis: a mention of the cell's value; the other values mentioned (the first 64) */
        bool own[16] = {false};
        uint64_t others[16] = {0};
        const char *other_at[16] = {NULL}; /* per axis: the first other value's mention */
        /* a line about a setting outside the matrix: a value's bare name in it is that
         * setting's, not an axis's (its axis's words still tell) */
        bool outside = outside_flag(s, evidence);
        for (const char *p = evidence; *p; p++) {
                if (!mention_start(evidence, p))
                        continue;
                /* the axes of the space with a value spelled here: the cell's among them, and
                 * the others' */
                size_t shared = 0, cands[16], nc = 0, oc[16], noc = 0, n = 0, len[16];
                long ovals[16], spelled[16];
                bool alias[16];
                const char *as[16];
                for (size_t a = 0; a < s->n_axes; a++) {
                        spelled[a] = spelled_on(s, a, evidence, p, &len[a], &alias[a], &as[a]);
                        n = MAX(n, len[a]);
                }
                /* the longest name spelled here is the one meant ("FP8 E4M3" is fp8_e4m3 on
                 * one axis, not fp8 on another) */
                for (size_t a = 0; n > 0 && a < s->n_axes; a++) {
                        long v = spelled[a];
                        if (v < 0 || len[a] < n)
                                continue;
                        shared++;
                        if ((size_t)v == c[a]) {
                                cands[nc++] = a;
                        } else {
                                oc[noc] = a;
                                ovals[noc++] = v;
                        }
                }
                if (!shared)
                        continue;
                /* an echo of every setting names the value only where the line, outside
                 * it, speaks of the axis (its reasons: "kv_cache_dtype not supported") */
                const char *eb, *ee;
                if (settings_echo(evidence, p, &eb, &ee)) {
                        size_t keep = 0;
                        for (size_t i = 0; i < nc; i++)
                                if (named_outside(s, cands[i], evidence, eb, ee))
                                        cands[keep++] = cands[i];
                        nc = keep;
                        keep = 0;
                        for (size_t i = 0; i < noc; i++)
                                if (named_outside(s, oc[i], evidence, eb, ee)) {
                                        oc[keep] = oc[i];
                                        ovals[keep++] = ovals[i];
                                }
                        noc = keep;
                        if (nc + noc == 0)
                                continue;
                }
                for (size_t i = 0; i < nc; i++)
                        own[cands[i]] = true;
                /* the cell's value in a list of what works is not what failed (nor is the
                 * list one that leaves it out) */
                if (nc && supported_list(evidence, p))
                        nc = 0;
                long pick = mention_axis(s, evidence, p, n, cands, nc, shared, alias, as, !outside);
                size_t words_len;
                if (pick >= 0 && axis_distance(s, (size_t)pick, evidence, p, p + n, &words_len) > AXIS_WORDS_NEAR &&
                    part_of_held(s, c, (size_t)pick, p, n))
                        pick = -1;
                if (pick >= 0) {
                        if (named >= 0 && named != pick) {
                                two_named(ret_pair, named, pick);
                                return SEARCH_NAMES_NONE; /* two values: a pair's doing, or unclear */
                        }
                        named = pick;
                }
                /* another value's mention counts by its name or the axis's words, not by
                 * an engine's name for it alone: "FlashInfer FP8 GEMM" is not the
                 * attention backend's flashinfer */
                static const bool no_alias[16] = {false};
                long other = mention_axis(s, evidence, p, n, oc, noc, shared, no_alias, as, !outside);
                for (size_t i = 0; other >= 0 && i < noc; i++)
                        if (oc[i] == (size_t)other && ovals[i] < 64) {
                                others[other] |= UINT64_C(1) << ovals[i];
                                if (!other_at[other])
                                        other_at[other] = p;
                        }
        }
        /* a constant's name that spells the flag and a value (LLAMA_SPLIT_MODE_TENSOR) */
        for (size_t a = 0; a < s->n_axes; a++) {
                long v = constant_value(s, a, evidence);
                if (v < 0)
                        continue;
                if ((size_t)v != c[a]) {
                        if (v < 64)
                                others[a] |= UINT64_C(1) << v;
                        continue;
                }
                if (named >= 0 && named != (long)a) {
                        two_named(ret_pair, named, (long)a);
                        return SEARCH_NAMES_NONE;
                }
                own[a] = true;
                named = (long)a;
        }
        /* an error about one argument of the cell: its value is at fault */
        long arg = argument_axis(s, c, evidence);
        if (arg >= 0 && named < 0)
                named = arg;
        enum search_naming how = SEARCH_NAMES_VALUE;
        if (named < 0) {
                /* a list of what works that leaves the cell's value out; or one other value,
                 * quoted with the axis's flag as what to use instead ("FlashAttention v3
                 * Backend requires SM>=80 and SM<=90. Please use `--attention-backend
                 * flashinfer`.", SGLang, on a cell with fa3), a value of the matrix or, with
                 * words of advice, any */
                how = SEARCH_NAMES_OTHERS;
                for (size_t a = 0; a < s->n_axes; a++) {
                        int listed = __builtin_popcountll(others[a]);
                        /* advice to use the one other value: "GPTQ Method does not support
                         * MoE, please use gptq_marlin" (the cell's gptq spelled in prose
                         * beside it is what the advice replaces) */
                        bool advised = listed == 1 && advice_before(evidence, other_at[a]);
                        if ((own[a] && !advised) || (listed < 1 && !advises_other(s, a, evidence, c[a])))
                                continue;
                        if (listed == 1 && !advised && !restricted(s, a, evidence, other_at[a])) {
                                bool quoted_own = false;
                                long quoted = -1;
                                if (s->axis_flags && s->axis_flags[a])
                                        search_quoted_values(s, a, evidence, c[a], &quoted_own, &quoted);
                                if (quoted_own || quoted < 0)
                                        continue;
                        }
                        if (named >= 0)
                                return SEARCH_NAMES_NONE; /* two axes' lists */
                        named = (long)a;
                }
                if (named < 0)
                        return SEARCH_NAMES_NONE;
        }
        /* a line that names another axis too, or quotes its values, speaks of a pair ("q8_0
         * requires flash_attn", "only trtllm_mha and fa4 support kv cache dtype fp8") */
        for (size_t a = 0; a < s->n_axes; a++)
                if (a != (size_t)named &&
                    (others[a] || search_axis_distance(s, a, evidence, evidence, evidence) != SIZE_MAX))
                        return SEARCH_NAMES_NONE;
        *ret_axis = (size_t)named;
        return how;
}
