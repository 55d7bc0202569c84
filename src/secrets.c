/* secrets.c -- masking keys and tokens in argv and env (rules in secrets.h). */
#include "secrets.h"

#include <string.h>
#include <strings.h>

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
