/* cli_report.c -- `gauntlet report` and `gauntlet emit`: a journal rendered for people and for systemd. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cli/cli.h"
#include "report/emit.h"
#include "journal/journal.h"
#include "report/report.h"
#include "results/report_load.h"
#include "text/secrets.h"

static const char report_help[] =
        "usage: gauntlet report [--format text|markdown|json|html] JOURNAL\n\n"
        "Renders what a journal knows: every cell of the latest sweep with its verdict, cause\n"
        "or figure and evidence, and the best cell. Secrets in argv and env are masked.\n";

static const char emit_help[] =
        "usage: gauntlet emit systemd|script JOURNAL [--cell ID] [--port N] [--name NAME]\n\n"
        "Prints a systemd unit or a POSIX launch script for the best passing cell of the\n"
        "journal's latest sweep, or for the cell named by --cell (a unique prefix of its id).\n"
        "  --port N     the port when the matrix fixed none (default: the attempt's port)\n"
        "  --name NAME  the service's name in the description and install hint\n"
        "The output holds real argv and env values, keys included: treat it as a secret.\n";

/* Opens the journal and loads its view, printing the error (exit code in *ret_exit). */
static int load(const char *path, struct report_view **ret, int *ret_exit) {
        _cleanup_journal_ struct journal *j = NULL;
        int r = journal_open_existing(path, &j);
        if (r < 0) {
                if (r == JOURNAL_ENOTJOURNAL || r == JOURNAL_ENEWER)
                        cli_error("'%s' is %s", path, journal_strerror(r));
                else
                        cli_error("cannot open journal '%s': %s", path, journal_strerror(r));
                *ret_exit = EXIT_USAGE;
                return r;
        }
        r = report_load_view(j, ret);
        if (r == -ENOENT) {
                cli_error("journal '%s' holds no sweep yet", path);
                *ret_exit = EXIT_FAILED;
        } else if (r < 0) {
                const char *detail = journal_last_error(j);
                cli_error("cannot read journal '%s': %s%s%s", path, journal_strerror(r), *detail ? ": " : "", detail);
                *ret_exit = EXIT_USAGE;
        }
        return r;
}

static size_t terminal_width(void) {
        struct winsize ws;
        if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
                return ws.ws_col;
        const char *cols = getenv("COLUMNS");
        long n;
        if (cols && cli_parse_int(cols, 40, 10000, &n) == 0)
                return (size_t)n;
        return 120;
}

static int write_buf(const struct buf *b) {
        if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len) {
                cli_error("cannot write output: %s", strerror(errno));
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

int cli_report(int argc, char **argv) {
        static const char *const formats[] = {"text", "markdown", "json", "html", NULL};
        const char *path = NULL, *format = "text";
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(report_help, stdout);
                        return EXIT_OK;
                } else if (strcmp(a, "--format") == 0) {
                        if (++i >= argc)
                                return cli_usage_error("report", "--format needs a value");
                        format = argv[i];
                } else if (startswith(a, "--format="))
                        format = a + strlen("--format=");
                else if (a[0] == '-' && a[1])
                        return cli_usage_error("report", "unknown option '%s'", a);
                else if (path)
                        return cli_usage_error("report", "one journal only ('%s' and '%s')", path, a);
                else
                        path = a;
        }
        int f = cli_parse_choice(format, formats);
        if (f < 0)
                return cli_usage_error("report", "unknown format '%s' (text, markdown, json, html)", format);
        if (!path)
                return cli_usage_error("report", "which journal? (gauntlet report JOURNAL)");
        _cleanup_report_view_ struct report_view *v = NULL;
        int status = EXIT_OK;
        if (load(path, &v, &status) < 0)
                return status;
        if (f == 3 && report_load_logs(v) < 0) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        /* a key the server echoed into a log or an answer is hidden in every format */
        if (report_view_mask_secrets(v) < 0) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }

        _cleanup_buf_ struct buf out;
        buf_init(&out, 0);
        int r;
        if (f == 0) {
                struct report_text_options o = {.width = terminal_width(), .color = cli_color(stdout)};
                r = report_text(v, &o, &out);
        } else if (f == 1)
                r = report_markdown(v, &out);
        else if (f == 3)
                r = report_html(v, &out);
        else {
                json_t *j = NULL;
                r = report_json(v, GAUNTLET_VERSION, &j);
                if (r >= 0) {
                        char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
                        json_decref(j);
                        if (!t || buf_puts(&out, t) < 0 || buf_puts(&out, "\n") < 0)
                                r = -ENOMEM;
                        free(t);
                }
        }
        if (r < 0) {
                cli_error("cannot render the report: %s", strerror(-r));
                return EXIT_USAGE;
        }
        return write_buf(&out);
}

/* ---- emit ---- */

static bool unit_name_ok(const char *s) {
        if (!*s || strlen(s) > 200)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr(":_.-@", *s)))
                        return false;
        return true;
}

/* The cell whose id starts with prefix; the error is printed here. */
static int find_cell(const struct report_view *v, const char *prefix, int *ret_exit) {
        int found = -1, n = 0;
        size_t len = strlen(prefix);
        for (size_t i = 0; i < v->n_cells; i++) {
                if (len && strncmp(v->cells[i].id, prefix, len) == 0) {
                        if (n++ == 0)
                                found = (int)i;
                }
        }
        if (n == 1)
                return found;
        *ret_exit = EXIT_USAGE;
        if (n == 0)
                cli_error("no cell '%s' in the latest sweep of the journal", prefix);
        else
                cli_error("cell '%s' is ambiguous: %d cells start with it; give more of the id", prefix, n);
        return -1;
}

int cli_emit_build(const struct report_view *v, int idx, bool chosen_by_best, bool systemd, const char *name,
                   long port_opt, struct buf *out) {
        struct emit_cell_options o = {
                .systemd = systemd, .chosen_by_best = chosen_by_best, .name = name, .port = (int)port_opt};
        _cleanup_free_ char *error = NULL;
        int r = emit_cell(v, (size_t)idx, &o, out, &error);
        if (r < 0) {
                cli_error("%s", error ? error : strerror(-r));
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

int cli_emit(int argc, char **argv) {
        const char *kind = NULL, *path = NULL, *cell = NULL, *name = NULL;
        long port_opt = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(emit_help, stdout);
                        return EXIT_OK;
                } else if (strcmp(a, "--cell") == 0 || strcmp(a, "--port") == 0 || strcmp(a, "--name") == 0) {
                        if (i + 1 >= argc)
                                return cli_usage_error("emit", "%s needs a value", a);
                        const char *val = argv[++i];
                        if (strcmp(a, "--cell") == 0)
                                cell = val;
                        else if (strcmp(a, "--name") == 0)
                                name = val;
                        else if (cli_parse_int(val, 1, 65535, &port_opt) < 0)
                                return cli_usage_error("emit", "--port wants 1..65535, not '%s'", val);
                } else if (a[0] == '-' && a[1])
                        return cli_usage_error("emit", "unknown option '%s'", a);
                else if (!kind)
                        kind = a;
                else if (!path)
                        path = a;
                else
                        return cli_usage_error("emit", "unexpected argument '%s'", a);
        }
        if (!kind || !path)
                return cli_usage_error("emit", "usage: gauntlet emit systemd|script JOURNAL [--cell ID]");
        bool systemd = strcmp(kind, "systemd") == 0;
        if (!systemd && strcmp(kind, "script") != 0)
                return cli_usage_error("emit", "unknown kind '%s' (systemd or script)", kind);
        if (name && !unit_name_ok(name))
                return cli_usage_error("emit", "--name '%s' is not a valid unit name (letters, digits, :_.-@)", name);

        _cleanup_report_view_ struct report_view *v = NULL;
        int status = EXIT_OK;
        if (load(path, &v, &status) < 0)
                return status;

        int idx;
        if (cell) {
                if ((idx = find_cell(v, cell, &status)) < 0)
                        return status;
        } else if ((idx = report_best_index(v, NULL)) < 0) {
                cli_error("no cell passed in the latest sweep of '%s'; name one with --cell", path);
                return EXIT_FAILED;
        }
        _cleanup_buf_ struct buf out;
        buf_init(&out, 0);
        status = cli_emit_build(v, idx, !cell, systemd, name, port_opt, &out);
        if (status != EXIT_OK)
                return status;
        return write_buf(&out);
}
