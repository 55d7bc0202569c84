/* cli_options.c -- the command line's side of the option table. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_options.h"

size_t cli_options_getopt(enum option_command cmd, struct option *opts, size_t n) {
        size_t k = 0;
        for (size_t i = 0; i < options_table_n && k + 1 < n; i++)
                if (options_takes(&options_table[i], cmd))
                        opts[k++] = (struct option){options_table[i].flag,
                                                    options_table[i].type == OT_BOOL ? no_argument : required_argument,
                                                    NULL, CLI_OPTION_BASE + (int)i};
        return k;
}

void cli_option_help(const struct option_def *d, int width) {
        char left[64];
        snprintf(left, sizeof(left), "  --%s%s%s", d->flag, d->arg ? " " : "", d->arg ? d->arg : "");
        printf("%-*s", width, left);
        if ((int)strlen(left) >= width)
                printf("\n%*s", width, "");
        for (const char *p = d->help; *p; p++) {
                putchar(*p);
                if (*p == '\n')
                        printf("%*s", width, "");
        }
        if (d->def)
                printf(" (default %s)", d->def);
        putchar('\n');
}

int cli_option_error(const char *cmd, const struct option_def *d, const char *arg) {
        if (d->flags & OF_RANGE_HINT)
                return cli_usage_error(cmd, "invalid --%s '%s' (%ld to %ld)", d->flag, arg, (long)d->min,
                                       (long)d->max);
        return cli_usage_error(cmd, "invalid --%s '%s'%s%s%s", d->flag, arg, d->hint ? " (" : "", d->hint ? d->hint : "",
                               d->hint ? ")" : "");
}
