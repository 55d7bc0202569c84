/* cli_against.c -- `gauntlet run --against OLD` (cli_against.h, docs/compare.md "Checking
 * the winner again"). The decisions are compare.h's; this file reads, maps and prints. */
#include "cli/cli_against.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "config/cells.h"
#include "report/report.h"
#include "results/report_load.h"
#include "text/buf.h"

/* Matrix, journal and server text is data: printed escaped (report_escape_text). */
static void put(const char *s) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (s && report_escape_text(&b, s, 0) >= 0)
                fputs(buf_str(&b), stdout);
}

/* "axis=value ..." of cell i of v (compare's labels), or "(no axes)". Caller frees. */
static char *view_label(const struct report_view *v, long i) {
        if (i < 0)
                return strdup("none");
        if (v->n_axes == 0)
                return strdup("(no axes)");
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        for (size_t k = 0; k < v->n_axes; k++)
                if (buf_printf(&b, "%s%s=%s", k ? " " : "", v->axes[k],
                               v->cells[i].axis_values[k] ? v->cells[i].axis_values[k] : "?") < 0)
                        return NULL;
        return buf_detach(&b);
}

static char *verdict_text(const struct report_cell *c) {
        const char *cause = report_cell_cause(c);
        return strdup_printf("%s%s%s", report_cell_verdict(c), cause ? "/" : "", cause ? cause : "");
}

/* The same file: by name, or by device and inode when both exist. */
static bool same_file(const char *a, const char *b) {
        struct stat sa, sb;
        return strcmp(a, b) == 0 ||
               (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* Whether v's axes are m's, as a set of names. */
static bool same_axes(const struct report_view *v, const struct matrix *m) {
        if (v->n_axes != m->n_axes)
                return false;
        for (size_t a = 0; a < m->n_axes; a++) {
                bool found = false;
                for (size_t x = 0; x < v->n_axes && !found; x++)
                        found = strcmp(v->axes[x], m->axes[a].name) == 0;
                if (!found)
                        return false;
        }
        return true;
}

static char *axes_text(char **names, const struct matrix *m) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        size_t n = names ? strv_length(names) : m->n_axes;
        for (size_t a = 0; a < n; a++)
                if (buf_printf(&b, "%s%s", a ? ", " : "", names ? names[a] : m->axes[a].name) < 0)
                        return NULL;
        return buf_detach(&b);
}

/* The matrix's cell with the axis values of v's cell i: its index, or -1. */
static long matrix_cell(const struct matrix *m, const struct cell *cells, size_t n, const struct report_view *v, size_t i) {
        for (size_t k = 0; k < n; k++) {
                bool same = true;
                for (size_t a = 0; a < m->n_axes && same; a++) {
                        const char *want = NULL;
                        for (size_t x = 0; x < v->n_axes; x++)
                                if (strcmp(v->axes[x], m->axes[a].name) == 0)
                                        want = v->cells[i].axis_values[x];
                        same = want && strcmp(want, m->axes[a].values[cells[k].choice[a]].name) == 0;
                }
                if (same && !cells[k].excluded)
                        return (long)k;
        }
        return -1;
}

/* Reads the old sweep. Returns -1 to go on, or an exit code. */
static int load_old(struct against *a) {
        _cleanup_journal_ struct journal *j = NULL;
        int r = journal_open_existing(a->path, &j);
        if (r < 0) {
                cli_error("--against: cannot open journal '%s': %s", a->path, journal_strerror(r));
                return EXIT_USAGE;
        }
        r = report_load_view(j, &a->old);
        if (r == -ENOENT) {
                cli_error("--against: journal '%s' holds no sweep", a->path);
                return EXIT_USAGE;
        }
        if (r >= 0)
                r = report_load_samples(j, a->old);
        if (r < 0) {
                cli_error("--against: cannot read journal '%s': %s", a->path, journal_strerror(r));
                return EXIT_USAGE;
        }
        return -1;
}

int against_open(struct against *a, const char *path, const char *jpath, const struct matrix *m) {
        a->path = path;
        if (same_file(path, jpath)) {
                cli_error("--against '%s' is the run's own journal: give the new sweep another with --journal FILE "
                          "(in one journal, the cells it does not launch would show the old figures)",
                          path);
                return EXIT_USAGE;
        }
        int r = load_old(a);
        if (r >= 0)
                return r;
        if (!same_axes(a->old, m)) {
                _cleanup_free_ char *was = axes_text(a->old->axes, m), *is = axes_text(NULL, m);
                cli_error("--against: journal '%s' was run with the axes (%s), the matrix has (%s): another matrix",
                          path, was ? was : "?", is ? is : "?");
                return EXIT_USAGE;
        }
        if (!streq_ptr(a->old->objective, m->objective)) {
                cli_error("--against: journal '%s' ranks by %s, the matrix by %s: nothing to compare the figures by",
                          path, a->old->objective ? a->old->objective : "?", m->objective ? m->objective : "?");
                return EXIT_USAGE;
        }
        _cleanup_free_ size_t *rivals = NULL;
        size_t n = 0, n_cells = 0;
        struct cell *cells = NULL;
        if ((r = compare_rivals(a->old, &a->opts, &rivals, &n)) == -ENOENT) {
                cli_error("--against: journal '%s' has no passing cell: no winner to check again", path);
                return EXIT_USAGE;
        }
        if (r < 0 || (r = cells_expand(m, &cells, &n_cells)) < 0 || !(a->first = calloc(n, sizeof(*a->first)))) {
                cells_free(cells, n_cells);
                cli_error("--against: %s", strerror(r < 0 ? -r : ENOMEM));
                return EXIT_USAGE;
        }
        for (size_t k = 0; k < n; k++) {
                long c = matrix_cell(m, cells, n_cells, a->old, rivals[k]);
                if (c >= 0)
                        a->first[a->n_first++] = (size_t)c;
                else if (k == 0) {
                        _cleanup_free_ char *label = view_label(a->old, (long)rivals[0]);
                        cells_free(cells, n_cells);
                        cli_error("--against: the old winner (%s) of journal '%s' is not a cell of the matrix "
                                  "(excluded, or a value left its axis)", label ? label : "?", path);
                        return EXIT_USAGE;
                }
        }
        cells_free(cells, n_cells);
        return -1;
}

/* The new sweep's view, with its samples, and the check; false when it cannot be read. */
static bool check(struct against *a, struct journal *j, struct report_view **ret_view, struct compare_against *ret) {
        int r = report_load_view(j, ret_view);
        if (r >= 0)
                r = report_load_samples(j, *ret_view);
        if (r >= 0)
                r = compare_against_check(a->old, *ret_view, &a->opts, ret);
        if (r < 0)
                cli_error("--against: cannot read the journal: %s", journal_strerror(r));
        return r >= 0;
}

/* "+12.3% [+8.1%, +16.0%]": the change and its interval, where there is one. */
static void put_change(const struct compare_speed *sp) {
        printf("%+.1f%%", 100 * sp->change);
        if (sp->method == COMPARE_METHOD_BOOTSTRAP || sp->method == COMPARE_METHOD_REPEATS)
                printf(" [%+.1f%%, %+.1f%%]", 100 * sp->lo, 100 * sp->hi);
}

bool against_first_settled(struct against *a, struct journal *j, size_t launched) {
        _cleanup_report_view_ struct report_view *v = NULL;
        struct compare_against c;
        if (!check(a, j, &v, &c))
                return false;
        _cleanup_free_ char *winner = view_label(a->old, c.old_winner);
        printf("against ");
        put(a->path);
        printf(": the winner (");
        put(winner);
        if (c.still_best) {
                printf(") still passes and is still the best within noise: %zu launch%s, the rest not run\n", launched,
                       launched == 1 ? "" : "es");
                fflush(stdout);
                a->stopped = true;
                return true;
        }
        if (!c.still_passes) {
                _cleanup_free_ char *now = c.winner_now >= 0 ? verdict_text(&v->cells[c.winner_now]) : NULL;
                printf(") now %s: running the rest\n", now ? now : "not run");
        } else {
                _cleanup_free_ char *best = view_label(v, c.new_best);
                printf(") is beaten by ");
                put(best);
                printf(" (");
                put_change(&c.rival);
                printf("): running the rest\n");
        }
        fflush(stdout);
        return false;
}

/* The lines of a sweep that went on: the new best, the old winner's change, the provenance's. */
static void print_changes(const struct against *a, const struct report_view *v, const struct compare_against *c,
                          json_t *changes) {
        _cleanup_free_ char *winner = view_label(a->old, c->old_winner), *best = view_label(v, c->new_best);
        printf("against ");
        put(a->path);
        printf(": new best ");
        put(best);
        printf(" (was ");
        put(winner);
        printf(")\n  the old winner: ");
        _cleanup_free_ char *was = verdict_text(&a->old->cells[c->old_winner]);
        _cleanup_free_ char *now = c->winner_now >= 0 ? verdict_text(&v->cells[c->winner_now]) : NULL;
        printf("%s -> %s [%s]", was ? was : "?", now ? now : "not in the matrix", compare_change_name(c->change));
        if (c->speed.known) {
                printf("; objective ");
                put_change(&c->speed);
        }
        fputc('\n', stdout);
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(changes, "provenance_changes"), i, l) {
                printf("  changed: ");
                put(json_string_value(l));
                fputc('\n', stdout);
        }
}

void against_finish(struct against *a, struct journal *j) {
        _cleanup_report_view_ struct report_view *v = NULL;
        struct compare_against c;
        if (!check(a, j, &v, &c))
                return;
        /* the unit is read elsewhere, later: the old journal by its absolute path */
        _cleanup_free_ char *abs = realpath(a->path, NULL);
        _cleanup_json_ json_t *e = compare_against_json(a->old, v, &c, abs ? abs : a->path, a->stopped);
        _cleanup_free_ char *text = e ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        int r = text ? journal_set_sweep_against(j, v->sweep_id, text) : -ENOMEM;
        if (r < 0)
                cli_error("warning: --against: cannot journal what changed: %s", journal_strerror(r));
        if (!a->stopped)
                print_changes(a, v, &c, e);
        fflush(stdout);
}

void against_release(struct against *a) {
        report_view_free(a->old);
        free(a->first);
        *a = (struct against){0};
}
