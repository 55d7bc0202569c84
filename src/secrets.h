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

#define SECRETS_MASK "***"

/* Whether an environment variable (or header) name marks its value as a secret. */
bool secrets_env_name(const char *name);
/* Whether a command-line flag ("--api-key", "-token") takes a secret value. */
bool secrets_flag(const char *flag);

/* "KEY=VALUE" with VALUE masked when KEY is a secret name. Caller frees; NULL: ENOMEM. */
char *secrets_mask_env_entry(const char *entry);
/* Copies of env / argv with secrets masked. *ret is NULL for a NULL input. */
int secrets_mask_env(char *const *env, char ***ret);
int secrets_mask_argv(char *const *argv, char ***ret);

#endif
