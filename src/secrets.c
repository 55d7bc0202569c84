/* secrets.c -- masking keys and tokens in argv and env (rules in secrets.h). */
#include "secrets.h"

#include <string.h>
#include <strings.h>

#include "buf.h"
#include "util.h"

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

char *secrets_mask_env_entry(const char *entry) {
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

char *secrets_values_mask(const struct secrets_values *s, const char *text, int *ret_r) {
        bool any = false;
        *ret_r = 0;
        for (size_t i = 0; i < s->n && !any; i++)
                any = strstr(text, s->v[i]) != NULL;
        if (!any)
                return NULL;
        struct buf b;
        buf_init(&b, 0);
        for (const char *q = text; *q;) {
                size_t i;
                for (i = 0; i < s->n; i++)
                        if (startswith(q, s->v[i]))
                                break;
                int r;
                if (i < s->n) {
                        r = buf_puts(&b, SECRETS_MASK);
                        q += strlen(s->v[i]);
                } else
                        r = buf_append(&b, q++, 1);
                if (r < 0) {
                        buf_release(&b);
                        *ret_r = r;
                        return NULL;
                }
        }
        return buf_detach(&b);
}
