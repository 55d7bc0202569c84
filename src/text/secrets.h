/* secrets.h -- masking keys and tokens in everything gauntlet shows to a person.
 *
 * The journal keeps real values (a cell must be relaunchable); every report and printout
 * passes argv and env through here first. Masking errs on the side of hiding: a value
 * hidden for no reason costs a look at the journal, a leaked token costs a rotation.
 *
 * What is a secret:
 *  - an environment variable whose NAME contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or
 *    AUTHORIZATION (case-insensitive): its value;
 *  - the argument after a flag, or the value of a --flag=value, whose words (split on '-'
 *    and '_') include key, token, secret, password, passwd, apikey or authorization
 *    (--api-key, --hf-token, --token, --ssl-keyfile-password; not --tokenizer, not
 *    --max-num-batched-tokens);
 *  - an argument or header "Authorization: ..." (its credentials).
 */
#ifndef GAUNTLET_SECRETS_H
#define GAUNTLET_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#define SECRETS_MASK "***"

/* Whether an environment variable (or header) name marks its value as a secret. */
bool secrets_env_name(const char *name);
/* Whether a command-line flag ("--api-key", "-token") takes a secret value. */
bool secrets_flag(const char *flag);

/* Copies of env / argv with secrets masked. *ret is NULL for a NULL input. */
int secrets_mask_env(char *const *env, char ***ret);
int secrets_mask_argv(char *const *argv, char ***ret);

/* The secret values of some argv and env lists (those the rules above mask), to hide
 * wherever a log, a matrix file or an answer repeats them. Values shorter than
 * SECRETS_VALUE_MIN are not kept ("1" or "8" would blank out every number: a flag like
 * --token-delay-ms 2 counts as secret by its words); at most SECRETS_MAX_VALUES are, longest
 * first, so a value that contains another is masked whole. */
#define SECRETS_VALUE_MIN 6
#define SECRETS_MAX_VALUES 64
struct secrets_values {
        char **v;   /* owned, longest first */
        size_t n;
};
void secrets_values_release(struct secrets_values *s);
/* Adds the values secrets_mask_argv / secrets_mask_env hide in the list. 0 or -ENOMEM. */
int secrets_values_add_argv(struct secrets_values *s, char *const *argv);
int secrets_values_add_env(struct secrets_values *s, char *const *env);
/* Adds one value as it is (the rules above already said it is secret). */
int secrets_values_add_text(struct secrets_values *s, const char *value);
/* text with every value replaced by SECRETS_MASK, owned by the caller; NULL with *ret_r 0
 * when text holds none, NULL with *ret_r -ENOMEM when out of memory.
 * For raw text: mask first, then cut and escape. Text already cut or escaped (evidence is
 * journaled so: an answer's excerpt, a log line cut to length) is masked too: a value is
 * looked for as it is and in its escaped forms (a backslash as \\, a quote as \"), and a
 * part of SECRETS_CUT_MIN bytes or more that a cut left (a prefix that begins a word and
 * ends the text or meets a "..." or "…", a suffix right after one that ends a word) is
 * masked as the whole would be. A word is made of letters, digits and "-_./+~@%": a secret
 * whose start is ordinary text never masks the end of a model name or a path. */
#define SECRETS_CUT_MIN 4
char *secrets_values_mask(const struct secrets_values *s, const char *text, int *ret_r);

/* url with the credentials of its authority masked: scheme://user:***@host/...; a lone
 * user@ (often a token) as ***@. Caller frees; NULL: ENOMEM. */
char *secrets_mask_url(const char *url);

#endif
