/* golden.c -- matching an answer against the expected one: normalisation, equals, contains,
 * regex and number.
 *
 * Matching is case-sensitive on purpose: "Reply with exactly: OK" answered "ok" did not
 * follow the instruction. Normalisation only removes what chat formatting adds around an
 * answer (markdown emphasis, code fences, list and heading markers, a full stop).
 */
#include "gate/golden.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "text/buf.h"
#include "base/util.h"

static bool is_alnum_byte(char c) {
        /* Any byte of a multibyte character counts as a letter: markers next to "é" or "中"
         * are emphasis, not arithmetic. */
        return isalnum((unsigned char)c) || ((unsigned char)c & 0x80);
}

/* Removes leading markdown markers from one line: "# ", "> ", "- ", "* ", "+ ". */
static const char *skip_line_markers(const char *p, const char *end) {
        for (;;) {
                const char *q = p;
                while (q < end && (*q == ' ' || *q == '\t'))
                        q++;
                if (q < end && *q == '#') {
                        while (q < end && *q == '#')
                                q++;
                        if (q < end && *q != ' ' && *q != '\t')
                                return p;  /* "#hashtag", "#1" */
                } else if (q < end && *q == '>') {
                        q++;
                } else if (q + 1 < end && (*q == '-' || *q == '*' || *q == '+') && (q[1] == ' ' || q[1] == '\t')) {
                        q++;
                } else
                        return p;
                p = q;
        }
}

/* Inline markdown: "**" and "__" go; a single '*' or '_' goes when it opens or closes a
 * word (not inside "2*3" or "snake_case"); backticks go. */
static int strip_inline(struct buf *b, const char *p, const char *end) {
        const char *line = p;
        for (; p < end; p++) {
                char c = *p;
                if (c == '`')
                        continue;
                if ((c == '*' || c == '_') && p + 1 < end && p[1] == c) {
                        p++;
                        continue;
                }
                if (c == '*' || c == '_') {
                        bool left = p > line && is_alnum_byte(p[-1]);
                        bool right = p + 1 < end && is_alnum_byte(p[1]);
                        if (left != right)
                                continue;
                }
                if (buf_append(b, &c, 1) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int golden_normalize(const char *s, char **ret) {
        _cleanup_buf_ struct buf lines;
        buf_init(&lines, 0);
        if (!s)
                s = "";
        /* Line by line: drop code fences, strip markers and inline markdown. */
        for (const char *p = s; *p;) {
                const char *nl = strchr(p, '\n');
                const char *end = nl ? nl : p + strlen(p);
                const char *q = p;
                while (q < end && (*q == ' ' || *q == '\t'))
                        q++;
                if (!(end - q >= 3 && strncmp(q, "```", 3) == 0)) {
                        const char *body = skip_line_markers(p, end);
                        if (strip_inline(&lines, body, end) < 0 || buf_puts(&lines, "\n") < 0)
                                return -ENOMEM;
                }
                p = nl ? nl + 1 : end;
        }
        /* Whitespace folded to one space (NBSP too), trimmed. */
        _cleanup_buf_ struct buf out;
        buf_init(&out, 0);
        const char *t = buf_str(&lines);
        bool space = false;
        for (size_t i = 0; t[i]; i++) {
                unsigned char c = (unsigned char)t[i];
                bool ws = isspace(c);
                if (c == 0xC2 && (unsigned char)t[i + 1] == 0xA0) {
                        ws = true;
                        i++;
                }
                if (ws) {
                        space = out.len > 0;
                        continue;
                }
                if (space && buf_puts(&out, " ") < 0)
                        return -ENOMEM;
                space = false;
                if (buf_append(&out, &t[i], 1) < 0)
                        return -ENOMEM;
        }
        /* A trailing full stop is punctuation, not answer; "..." stays. */
        if (out.len >= 1 && out.data[out.len - 1] == '.' && !(out.len >= 2 && out.data[out.len - 2] == '.')) {
                out.len--;
                /* "323 ." leaves "323 ": the space before the stop goes too */
                if (out.len >= 1 && out.data[out.len - 1] == ' ')
                        out.len--;
                out.data[out.len] = '\0';
        }
        char *r = buf_detach(&out);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

/* Parses a number at s[i] (sign, digits with ',' thousands groups, decimals, exponent);
 * returns its end, or i when there is none. */
static size_t parse_number_at(const char *s, size_t i, struct buf *num) {
        size_t j = i;
        buf_reset(num);
        if (s[j] == '-' || s[j] == '+') {
                if (s[j] == '-')
                        buf_puts(num, "-");
                j++;
        } else if ((unsigned char)s[j] == 0xE2 && (unsigned char)s[j + 1] == 0x88 && (unsigned char)s[j + 2] == 0x92) {
                buf_puts(num, "-");  /* U+2212 MINUS SIGN */
                j += 3;
        }
        if (!isdigit((unsigned char)s[j]))
                return i;
        size_t group = 0;
        bool grouped = false;
        while (isdigit((unsigned char)s[j])) {
                buf_append(num, &s[j], 1);
                j++;
                group++;
                /* "3,230": a comma followed by exactly three digits continues the number;
                 * "1,2,3" and "2, 4" are lists. */
                if (s[j] == ',' && isdigit((unsigned char)s[j + 1]) && isdigit((unsigned char)s[j + 2]) &&
                    isdigit((unsigned char)s[j + 3]) && !isdigit((unsigned char)s[j + 4]) &&
                    (grouped ? group == 3 : group <= 3)) {
                        grouped = true;
                        group = 0;
                        j++;
                }
        }
        if (s[j] == '.' && isdigit((unsigned char)s[j + 1])) {
                buf_puts(num, ".");
                j++;
                while (isdigit((unsigned char)s[j])) {
                        buf_append(num, &s[j], 1);
                        j++;
                }
        }
        if (s[j] == 'e' || s[j] == 'E') {
                /* "1.5e-3", but not "3 eggs" or "2em". */
                size_t k = j + 1;
                if (s[k] == '-' || s[k] == '+')
                        k++;
                size_t d = k + strspn(s + k, "0123456789");
                if (d > k && !isalpha((unsigned char)s[d])) {
                        buf_append(num, &s[j], d - j);
                        j = d;
                }
        }
        return j;
}

int golden_last_number(const char *s, double *ret) {
        if (!s)
                return -ENOENT;
        _cleanup_buf_ struct buf num, last;
        buf_init(&num, 4096);
        buf_init(&last, 4096);
        bool found = false;
        for (size_t i = 0; s[i];) {
                bool start = isdigit((unsigned char)s[i]) ||
                             ((s[i] == '-' || s[i] == '+') && isdigit((unsigned char)s[i + 1])) ||
                             ((unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x88 &&
                              (unsigned char)s[i + 2] == 0x92 && isdigit((unsigned char)s[i + 3]));
                /* A sign right after a digit or letter is an operator: "17-5" ends in 5. */
                if (start && !isdigit((unsigned char)s[i]) && i > 0 && is_alnum_byte(s[i - 1]))
                        start = false;
                /* Digits glued to letters are names, not numbers: "sm_120", "H200", "x86". */
                if (start && i > 0 && isdigit((unsigned char)s[i]) && (isalpha((unsigned char)s[i - 1]) || s[i - 1] == '_'))
                        start = false;
                if (!start) {
                        if (isdigit((unsigned char)s[i]))
                                while (isdigit((unsigned char)s[i]))
                                        i++;
                        else
                                i++;
                        continue;
                }
                size_t j = parse_number_at(s, i, &num);
                if (j == i) {
                        i++;
                        continue;
                }
                if (num.truncated)
                        return -ERANGE;
                buf_reset(&last);
                if (buf_puts(&last, buf_str(&num)) < 0)
                        return -ENOMEM;
                found = true;
                i = j;
        }
        if (!found)
                return -ENOENT;
        char *end;
        double v = strtod(buf_str(&last), &end);
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* The expected value of a `number` check: the whole value must be one number. */
static int parse_expected_number(const char *s, double *ret) {
        _cleanup_buf_ struct buf num;
        buf_init(&num, 4096);
        size_t i = strspn(s, " \t\n");
        size_t j = parse_number_at(s, i, &num);
        if (j == i || s[j + strspn(s + j, " \t\n")] != '\0')
                return -EINVAL;
        char *end;
        double v = strtod(buf_str(&num), &end);
        if (*end || !isfinite(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

static int set_error(char **ret_error, char *msg) {
        if (!msg)
                return -ENOMEM;
        if (ret_error)
                *ret_error = msg;
        else
                free(msg);
        return -EINVAL;
}

int golden_regex_check(const char *re, char **ret_error) {
        size_t n = strlen(re);
        if (n > GOLDEN_MAX_REGEX)
                return set_error(ret_error, strdup_printf("regex of %zu bytes, more than %zu", n, GOLDEN_MAX_REGEX));
        /* weight: how many copies regcomp makes of an atom; per open group, the heaviest
         * atom inside it so far */
        size_t stack[64] = {1};
        size_t depth = 0, last = 0; /* weight of the atom a quantifier would apply to; 0 none */
        bool quantified = false;    /* the previous token was a quantifier */
        for (size_t i = 0; i < n; i++) {
                char c = re[i];
                size_t w = 0;
                size_t bound = 1;
                char *end = NULL;
                if (c == '{') {
                        unsigned long lo = 0, hi = 0;
                        if (isdigit((unsigned char)re[i + 1])) {
                                lo = hi = strtoul(re + i + 1, &end, 10);
                                if (*end == ',')
                                        hi = isdigit((unsigned char)end[1]) ? strtoul(end + 1, &end, 10) : (end++, lo);
                        } else if (re[i + 1] == ',') {
                                /* glibc reads "{,n}" as "{0,n}" and "{,}" as "*" */
                                end = (char *)re + i + 2;
                                if (isdigit((unsigned char)*end))
                                        hi = strtoul(end, &end, 10);
                        }
                        if (!end || *end != '}')
                                end = NULL; /* not a bound: a literal '{' to regcomp, or its error */
                        else
                                bound = MIN(MAX(MAX(lo, hi), (unsigned long)1), (unsigned long)GOLDEN_MAX_REPEAT_WEIGHT + 1);
                }
                if (c == '*' || c == '+' || c == '?' || end) {
                        if (quantified)
                                return set_error(ret_error, strdup("regex has a quantifier right after another"));
                        if (end)
                                i = (size_t)(end - re);
                        quantified = true;
                        w = (last ? last : 1) * bound;
                        if (w > GOLDEN_MAX_REPEAT_WEIGHT)
                                return set_error(ret_error, strdup_printf("regex repeats too much (more than %d copies)",
                                                                          (int)GOLDEN_MAX_REPEAT_WEIGHT));
                        stack[depth] = MAX(stack[depth], w);
                        continue;
                }
                quantified = false;
                if (c == '\\' && i + 1 < n) {
                        i++;
                        w = 1;
                } else if (c == '[') {
                        /* a bracket expression is one atom: "[]a]" and "[^]a]" start with ']' */
                        size_t j = i + 1;
                        if (j < n && re[j] == '^')
                                j++;
                        if (j < n && re[j] == ']')
                                j++;
                        while (j < n && re[j] != ']')
                                j++;
                        i = j;
                        w = 1;
                } else if (c == '(') {
                        if (depth + 1 >= ELEMENTSOF(stack))
                                return set_error(ret_error, strdup("regex nests groups too deeply"));
                        stack[++depth] = 1;
                        last = 0;
                        continue;
                } else if (c == ')' && depth > 0) {
                        w = stack[depth--];
                } else if (c == '|' || c == '^' || c == '$') {
                        last = 0;
                        continue;
                } else
                        w = 1;
                last = w;
                stack[depth] = MAX(stack[depth], w);
        }
        return 0;
}

int golden_match(const struct expect *e, const char *answer, bool *ret_match, char **ret_error) {
        if (e->kind == EXPECT_NONE) {
                *ret_match = true;
                return 0;
        }
        if (!e->value)
                return set_error(ret_error, strdup("expected value is missing"));
        if (e->kind == EXPECT_NUMBER) {
                double want, got;
                if (parse_expected_number(e->value, &want) < 0)
                        return set_error(ret_error, strdup_printf("'%s' is not a number", e->value));
                int r = golden_last_number(answer, &got);
                if (r == -ENOENT || r == -EINVAL || r == -ERANGE) {
                        *ret_match = false;
                        return 0;
                }
                if (r < 0)
                        return r;
                /* Exact for integers in double range; a relative 1e-6 for decimals, so
                 * "0.333333" matches 1/3 written as 0.3333333. */
                double tol = 1e-6 * MAX(1.0, MAX(fabs(want), fabs(got)));
                *ret_match = fabs(want - got) <= tol;
                return 0;
        }
        _cleanup_free_ char *norm = NULL;
        int r = golden_normalize(answer, &norm);
        if (r < 0)
                return r;
        if (e->kind == EXPECT_REGEX) {
                r = golden_regex_check(e->value, ret_error);
                if (r < 0)
                        return r;
                regex_t re;
                int rc = regcomp(&re, e->value, REG_EXTENDED | REG_NOSUB);
                if (rc != 0) {
                        char msg[256];
                        regerror(rc, &re, msg, sizeof msg);
                        return set_error(ret_error, strdup_printf("invalid regex '%s': %s", e->value, msg));
                }
                rc = regexec(&re, norm, 0, NULL, 0);
                regfree(&re);
                *ret_match = rc == 0;
                return 0;
        }
        _cleanup_free_ char *want = NULL;
        r = golden_normalize(e->value, &want);
        if (r < 0)
                return r;
        if (e->kind == EXPECT_EQUALS)
                *ret_match = strcmp(norm, want) == 0;
        else if (e->kind == EXPECT_CONTAINS)
                *ret_match = strstr(norm, want) != NULL;
        else
                return set_error(ret_error, strdup("unknown expectation kind"));
        return 0;
}
