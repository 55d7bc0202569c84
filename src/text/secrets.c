/* secrets.c -- masking keys and tokens in argv and env (rules in secrets.h). */
#include "text/secrets.h"

#include <ctype.h>

#include <string.h>
#include <strings.h>

#include "text/buf.h"
#include "base/util.h"

static const char *const env_words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTHORIZATION"};
static const char *const flag_words[] = {"key", "token", "secret", "password", "passwd", "apikey", "authorization"};

static bool contains_ci(const char *s, size_t n, const char *word) {
        size_t w = strlen(word);
        for (size_t i = 0; i + w <= n; i++)
                if (strncasecmp(s + i, word, w) == 0)
                        return true;
        return false;
}

static bool env_name_n(const char *name, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(env_words); i++)
                if (contains_ci(name, n, env_words[i]))
                        return true;
        return false;
}

bool secrets_env_name(const char *name) {
        return name && env_name_n(name, strlen(name));
}

/* A flag is secret when its last word is one (--api-key, --hf-token, --token): secret
 * flags are named for what they hold, so --tokenizer, --max-total-tokens and
 * --token-delay-ms stay visible: they are paths and numbers a reader needs. */
static bool flag_n(const char *flag, size_t n) {
        size_t i = 0;
        while (i < n && flag[i] == '-')
                i++;
        if (i == 0 || i == n)
                return false;
        size_t start = n;
        while (start > i && flag[start - 1] != '-' && flag[start - 1] != '_')
                start--;
        for (size_t k = 0; k < ELEMENTSOF(flag_words); k++)
                if (n - start == strlen(flag_words[k]) && strncasecmp(flag + start, flag_words[k], n - start) == 0)
                        return true;
        return false;
}

bool secrets_flag(const char *flag) {
        return flag && flag_n(flag, strlen(flag));
}

/* "KEY=VALUE" with VALUE masked when KEY is a secret name. Caller frees; NULL: ENOMEM. */
static char *secrets_mask_env_entry(const char *entry) {
        const char *eq = strchr(entry, '=');
        if (!eq || !env_name_n(entry, (size_t)(eq - entry)))
                return strdup(entry);
        return strdup_printf("%.*s=%s", (int)(eq - entry), entry, SECRETS_MASK);
}

int secrets_mask_env(char *const *env, char ***ret) {
        _cleanup_strv_free_ char **out = NULL;
        if (!env) {
                *ret = NULL;
                return 0;
        }
        for (size_t i = 0; env[i]; i++) {
                char *e = secrets_mask_env_entry(env[i]);
                if (!e || strv_consume(&out, e) < 0)
                        return -ENOMEM;
        }
        if (!out && !(out = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

/* "Authorization: Bearer x" (a header passed as an argument) keeps only its name. */
static bool is_auth_header(const char *arg, size_t *ret_name_len) {
        const char *colon = strchr(arg, ':');
        if (!colon)
                return false;
        size_t n = (size_t)(colon - arg);
        if (memchr(arg, ' ', n) || !contains_ci(arg, n, "authorization"))
                return false;
        *ret_name_len = n;
        return true;
}

int secrets_mask_argv(char *const *argv, char ***ret) {
        _cleanup_strv_free_ char **out = NULL;
        bool next_secret = false;
        if (!argv) {
                *ret = NULL;
                return 0;
        }
        for (size_t i = 0; argv[i]; i++) {
                const char *a = argv[i];
                const char *eq = a[0] == '-' ? strchr(a, '=') : NULL;
                size_t name_len = 0;
                char *m;
                if (next_secret)
                        m = strdup(SECRETS_MASK);
                else if (eq && flag_n(a, (size_t)(eq - a)))
                        m = strdup_printf("%.*s=%s", (int)(eq - a), a, SECRETS_MASK);
                else if (is_auth_header(a, &name_len))
                        m = strdup_printf("%.*s: %s", (int)name_len, a, SECRETS_MASK);
                else
                        m = strdup(a);
                if (!m || strv_consume(&out, m) < 0)
                        return -ENOMEM;
                /* A flag's value follows it unless the flag carried it with '='. */
                next_secret = !next_secret && !eq && a[0] == '-' && secrets_flag(a);
        }
        if (!out && !(out = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

/* ---- the values of secrets, to hide wherever they are repeated ---- */

void secrets_values_release(struct secrets_values *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (struct secrets_values){0};
}

static int values_add(struct secrets_values *s, const char *val) {
        size_t n = strlen(val);
        if (n < SECRETS_VALUE_MIN || s->n >= SECRETS_MAX_VALUES)
                return 0;
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i], val) == 0)
                        return 0;
        if (!s->v && !(s->v = calloc(SECRETS_MAX_VALUES + 1, sizeof(char *))))
                return -ENOMEM;
        char *copy = strdup(val);
        if (!copy)
                return -ENOMEM;
        size_t at = s->n;
        while (at > 0 && strlen(s->v[at - 1]) < n) {
                s->v[at] = s->v[at - 1];
                at--;
        }
        s->v[at] = copy;
        s->n++;
        return 0;
}

/* What masking hid in each entry: the part of it that became SECRETS_MASK. */
static int values_add_masked(struct secrets_values *s, char *const *list, char *const *masked) {
        for (size_t k = 0; masked && masked[k] && list[k]; k++) {
                size_t keep = strlen(masked[k]) - MIN(strlen(masked[k]), strlen(SECRETS_MASK));
                if (strcmp(masked[k], list[k]) == 0 || strlen(list[k]) < keep)
                        continue;
                int r = values_add(s, list[k] + keep);
                if (r < 0)
                        return r;
        }
        return 0;
}

int secrets_values_add_text(struct secrets_values *s, const char *value) {
        return values_add(s, value);
}

int secrets_values_add_argv(struct secrets_values *s, char *const *argv) {
        _cleanup_strv_free_ char **masked = NULL;
        int r = secrets_mask_argv(argv, &masked);
        return r < 0 ? r : values_add_masked(s, argv, masked);
}

int secrets_values_add_env(struct secrets_values *s, char *const *env) {
        _cleanup_strv_free_ char **masked = NULL;
        int r = secrets_mask_env(env, &masked);
        return r < 0 ? r : values_add_masked(s, env, masked);
}

/* The forms a value takes in text gauntlet wrote: as it is; escaped as evidence quotes an
 * answer (detect_excerpt: \\ \n \t \r, other controls \xNN); escaped as JSON (\\ \" \n \t
 * \r, other controls \u00nn). Masking looks for each, so a value with a backslash or a
 * quote is hidden in an excerpt or a JSON text too. forms[0] is the value; the others are
 * NULL when they would equal it. */
enum { FORMS = 3 };
static int value_forms(const char *v, char *forms[static FORMS]) {
        forms[0] = (char *)v;
        forms[1] = forms[2] = NULL;
        if (!v[strcspn(v, "\\\"\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17"
                          "\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f")])
                return 0;
        for (int f = 1; f < FORMS; f++) {
                bool json = f == 2;
                struct buf b;
                buf_init(&b, 0);
                int r = 0;
                for (const unsigned char *p = (const unsigned char *)v; *p && r >= 0; p++) {
                        if (*p == '\\')
                                r = buf_puts(&b, "\\\\");
                        else if (*p == '"' && json)
                                r = buf_puts(&b, "\\\"");
                        else if (*p == '\n')
                                r = buf_puts(&b, "\\n");
                        else if (*p == '\t')
                                r = buf_puts(&b, "\\t");
                        else if (*p == '\r')
                                r = buf_puts(&b, "\\r");
                        else if (*p < 0x20 || *p == 0x7f)
                                r = buf_printf(&b, json ? "\\u%04x" : "\\x%02X", *p);
                        else
                                r = buf_append(&b, p, 1);
                }
                if (r < 0 || b.truncated) {
                        buf_release(&b);
                        free(forms[1]);
                        return -ENOMEM;
                }
                forms[f] = buf_detach(&b);
                if (strcmp(forms[f], v) == 0 || (f == 2 && forms[1] && strcmp(forms[1], forms[2]) == 0)) {
                        free(forms[f]);
                        forms[f] = NULL;
                }
        }
        return 0;
}

static bool is_cut_mark(const char *q) {
        return startswith(q, "...") || startswith(q, "…");
}

/* A character that belongs to a word of a model name, a path or a token: a part of a secret
 * is only looked for where such a word begins (or ends), never inside one. */
static bool word_char(char c) {
        return isalnum((unsigned char)c) || strchr("-_./+~@%", c) || (unsigned char)c >= 0x80;
}

/* How many bytes of text at q, which begins at text, hide a form of a value: the whole
 * form, anywhere; or, where a cut left part of it, a prefix of SECRETS_CUT_MIN bytes or more
 * that begins a word (at the text's start, or after a blank, a quote, '=', ':' ...) and ends
 * the text or meets a cut mark ("..." or "…"), or a suffix as long that follows one and
 * ends a word. A secret whose start is ordinary text ("Instruct...") thus leaves a model
 * name ("meta-llama/Llama-3.1-8B-Instruct") and a path whole. 0: none here. */
static size_t masked_len(const char *text, const char *q, const char *form) {
        size_t n = strlen(form), m = 0;
        while (m < n && q[m] == form[m])
                m++;
        if (m == n)
                return n;
        bool word_start = q == text || !word_char(q[-1]);
        if (m >= SECRETS_CUT_MIN && word_start && (q[m] == 0 || is_cut_mark(q + m)))
                return m;
        bool after_cut = (q - text >= 3 && startswith(q - 3, "...")) ||
                         (q - text >= (ptrdiff_t)strlen("…") && startswith(q - strlen("…"), "…"));
        for (size_t k = 1; after_cut && k + SECRETS_CUT_MIN <= n; k++)
                if (startswith(q, form + k) && !word_char(q[n - k]))
                        return n - k;
        return 0;
}

char *secrets_values_mask(const struct secrets_values *s, const char *text, int *ret_r) {
        *ret_r = 0;
        if (s->n == 0)
                return NULL;
        char **forms = calloc(s->n * FORMS, sizeof(char *));
        struct buf b;
        bool any = false;
        int r = forms ? 0 : -ENOMEM;
        for (size_t i = 0; i < s->n && r >= 0; i++)
                r = value_forms(s->v[i], forms + i * FORMS);
        const char *done = text; /* text before it is in b (once any) */
        for (const char *q = text; *q && r >= 0;) {
                size_t len = 0;
                /* longest values first (secrets.h): a value that contains another is masked whole */
                for (size_t i = 0; i < s->n * FORMS && !len; i++)
                        if (forms[i])
                                len = masked_len(text, q, forms[i]);
                if (!len) {
                        q++;
                        continue;
                }
                if (!any)
                        buf_init(&b, 0);
                any = true;
                if ((r = buf_append(&b, done, (size_t)(q - done))) >= 0)
                        r = buf_puts(&b, SECRETS_MASK);
                q += len;
                done = q;
        }
        if (any && r >= 0)
                r = buf_puts(&b, done);
        for (size_t i = 0; forms && i < s->n; i++) {
                free(forms[i * FORMS + 1]);
                free(forms[i * FORMS + 2]);
        }
        free(forms);
        if (any && (r < 0 || b.truncated)) {
                buf_release(&b);
                *ret_r = -ENOMEM;
                return NULL;
        }
        *ret_r = r < 0 ? r : 0;
        return any ? buf_detach(&b) : NULL;
}

/* ---- credentials in a URL ---- */

char *secrets_mask_url(const char *url) {
        const char *sep = strstr(url, "://");
        const char *auth = sep ? sep + 3 : url;
        size_t host_end = strcspn(auth, "/?#");
        const char *at = NULL;
        for (const char *p = auth; p < auth + host_end; p++)
                if (*p == '@')
                        at = p; /* the last one: a password may hold an '@' */
        if (!at)
                return strdup(url);
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        /* user:password@ keeps the user; a lone user@ is often a token: all of it goes */
        const char *from = colon ? colon + 1 : auth;
        return strdup_printf("%.*s%s%s", (int)(from - url), url, SECRETS_MASK, at);
}
