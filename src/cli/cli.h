/* cli.h -- the tool layer: commands, messages and exit codes.
 *
 * Only files under src/cli/ print to the user or choose exit codes; the library in src/
 * returns errors as values. Reports and results go to stdout, progress and errors to stderr.
 */
#ifndef GAUNTLET_CLI_H
#define GAUNTLET_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

enum exit_code {
        EXIT_OK = 0,       /* the sweep finished and a cell passed; smoke passed; all clean */
        EXIT_FAILED = 1,   /* no cell passed; a check failed; an output was flagged */
        EXIT_USAGE = 2,    /* bad flag, malformed matrix or file, cannot run at all */
        EXIT_INCONCLUSIVE = 3, /* compare: nothing regressed, a disturbed host leaves a slowdown undecided */
};

/* "gauntlet: " + message + "\n" on stderr. */
void cli_error(const char *fmt, ...) _printf_(1, 2);
/* As cli_error, then "try 'gauntlet CMD --help'". Returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) _printf_(2, 3);
/* Colour on stdout/stderr: only on a terminal and never with NO_COLOR. */
bool cli_color(FILE *f);

/* Parses "json"/"text"/... for --format; returns the index in names or -1. */
int cli_parse_choice(const char *value, const char *const *names);
/* An http:// or https:// URL with a host, and no spaces or control bytes. */
bool cli_valid_url(const char *u);
/* For getopt_long with a leading ':' in optstring: the usage error for what it returned
 * ('?' an unknown option, ':' one without its value). Returns EXIT_USAGE. */
int cli_bad_option(const char *cmd, int o, char **argv);
/* Parses a positive int (1..max); -EINVAL otherwise. */
int cli_parse_int(const char *s, long min, long max, long *ret);
/* "5%" or "5": 0.05; 0 to 1000 (percent). 0 or -EINVAL. */
int cli_parse_percent(const char *s, double *ret);

struct buf;
struct report_view;
/* The systemd unit (or launch script) for cell idx of the view into out; prints its own
 * error and returns an exit code (EXIT_OK on success). name NULL: "gauntlet-ENGINE";
 * port_opt 0: the matrix's fixed port, else the attempt's. */
int cli_emit_build(const struct report_view *v, int idx, bool chosen_by_best, bool systemd, const char *name,
                   long port_opt, struct buf *out);

int cli_run(int argc, char **argv);
int cli_smoke(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_emit(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_doctor(int argc, char **argv);

#endif
