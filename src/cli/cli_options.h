/* cli_options.h -- the command line's side of the option table (config/options.h): the
 * getopt names, the help lines and the errors of a command's table flags. */
#ifndef GAUNTLET_CLI_OPTIONS_H
#define GAUNTLET_CLI_OPTIONS_H

#include <getopt.h>

#include "config/options.h"

/* getopt_long's value for the table's entry i, and back. */
#define CLI_OPTION_BASE 1000
#define CLI_OPTION_INDEX(c) ((size_t)((c) - CLI_OPTION_BASE))

/* The table flags of cmd into opts (room for n, the last left zero for the caller's own);
 * returns how many. */
size_t cli_options_getopt(enum option_command cmd, struct option *opts, size_t n);
/* "  --flag ARG" and d's help, its text at column width, continuation lines indented. */
void cli_option_help(const struct option_def *d, int width);
/* cmd's usage error for a value of d outside its type or bounds: "invalid --FLAG 'V' (HINT)".
 * Returns EXIT_USAGE. */
int cli_option_error(const char *cmd, const struct option_def *d, const char *arg);

#endif
