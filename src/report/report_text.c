/* report_text.c -- the text report: a table for a terminal, read from the view only. */
#include "report/report.h"

#include <string.h>

#include "text/objective.h"

/* Characters a terminal shows for an escaped string (one per code point). */
static size_t display_width(const char *s) {
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

static char *escaped_text(const char *s, size_t max_chars) {
        struct buf b;
        buf_init(&b, 0);
        if (report_escape_text(&b, s ? s : "", max_chars) < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

/* A cell not run (or left out) dim, else its verdict's colour (verdict_color). */
static const char *cell_color(const struct report_cell *c) {
        if (c->excluded || !c->has_attempt)
                return "\033[2m";
        return verdict_color(c->verdict);
}

static int put_padded(struct buf *out, const char *s, size_t width, const char *color) {
        int r = 0;
        size_t w = display_width(s);
        if (color && (r = buf_puts(out, color)) < 0)
                return r;
        if ((r = buf_puts(out, s)) < 0)
                return r;
        if (color && (r = buf_puts(out, "\033[0m")) < 0)
                return r;
        for (; w < width && r >= 0; w++)
                r = buf_puts(out, " ");
        return r;
}

/* The provenance block: one line of what the sweep ran with, one of what changed. */
static int put_provenance(struct buf *out, const struct report_view *v) {
        _cleanup_free_ char *sum = report_provenance_summary(v), *chg = report_provenance_changes(v);
        _cleanup_free_ char *s = sum ? escaped_text(sum, 0) : NULL, *c = chg ? escaped_text(chg, 0) : NULL;
        int r = 0;
        if (s && (r = buf_printf(out, "provenance: %s\n", s)) < 0)
                return r;
        if (c && (r = buf_printf(out, "provenance changed %s\n", c)) < 0)
                return r;
        return 0;
}

/* Header: what was swept, where, when. */
static int text_header(const struct report_view *v, struct buf *out) {
        _cleanup_free_ char *started = report_format_wall(v->sweep_started_wall);
        _cleanup_free_ char *engine = escaped_text(v->engine, 0), *model = escaped_text(v->model ? v->model : "-", 0),
                            *objective = escaped_text(v->objective ? v->objective : OBJECTIVE_DEFAULT, 0),
                            *path = escaped_text(v->journal_path, 0), *mpath = escaped_text(v->matrix_path, 0);
        int r;
        if (!started || !engine || !model || !objective || !path || !mpath)
                return -ENOMEM;
        if ((r = buf_printf(out, "journal %s: sweep %lld started %s (%s)", path, (long long)v->sweep_id, started,
                            v->sweep_how ? v->sweep_how : "did not finish")) < 0 ||
            (r = v->earlier_sweeps ? buf_printf(out, ", %lld earlier sweep%s", (long long)v->earlier_sweeps,
                                                v->earlier_sweeps == 1 ? "" : "s")
                                   : 0) < 0 ||
            (r = buf_printf(out, "\nengine %s, model %s, objective %s, matrix %s\n", engine, model, objective, mpath)) < 0)
                return r;
        if (v->workload_left_out &&
            (r = buf_printf(out,
                            "%zu cell%s measured under another bench, checks, eval, probes or objective left out "
                            "(gauntlet run --rerun-changed measures %s again)\n",
                            v->workload_left_out, v->workload_left_out == 1 ? "" : "s",
                            v->workload_left_out == 1 ? "it" : "them")) < 0)
                return r;
        if ((r = put_provenance(out, v)) < 0)
                return r;
        return buf_puts(out, "\n");
}

enum { AXIS_MAX = 24, RESULT_MAX = 28 };

/* The table's column widths, from the escaped contents. */
struct text_widths {
        size_t id, verdict, result, evidence;
        size_t *axis;
};

static int text_widths(const struct report_view *v, size_t width, struct text_widths *w) {
        w->id = report_id_width(v);
        w->verdict = strlen("VERDICT");
        w->result = strlen("RESULT");
        if (!(w->axis = calloc(v->n_axes + 1, sizeof(size_t))))
                return -ENOMEM;
        for (size_t i = 0; i < v->n_axes; i++)
                w->axis[i] = MIN(display_width(v->axes[i]), (size_t)AXIS_MAX);
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                for (size_t k = 0; k < v->n_axes; k++) {
                        _cleanup_free_ char *e = escaped_text(c->axis_values[k] ? c->axis_values[k] : "?", AXIS_MAX);
                        if (!e)
                                return -ENOMEM;
                        w->axis[k] = MAX(w->axis[k], display_width(e));
                }
                w->verdict = MAX(w->verdict, strlen(report_cell_verdict(c)));
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                _cleanup_free_ char *cause = escaped_text(fig ? fig : report_cell_cause(c), RESULT_MAX);
                if (!cause)
                        return -ENOMEM;
                w->result = MAX(w->result, display_width(cause));
        }
        size_t used = w->id + 2 + w->verdict + 2 + w->result + 2;
        for (size_t k = 0; k < v->n_axes; k++)
                used += w->axis[k] + 2;
        w->evidence = width > used + 20 ? width - used : 20;
        return 0;
}

/* One cell's row: id, axis values, verdict, result, evidence (no trailing blanks). */
static int text_row(const struct report_view *v, const struct report_cell *c, const struct text_widths *w, bool color,
                    struct buf *out) {
        char id[sizeof(c->id)] = {0};
        memcpy(id, c->id, MIN(strlen(c->id), w->id));
        int r = put_padded(out, id, w->id + 2, NULL);
        if (r < 0)
                return r;
        for (size_t k = 0; k < v->n_axes; k++) {
                _cleanup_free_ char *e = escaped_text(c->axis_values[k] ? c->axis_values[k] : "?", AXIS_MAX);
                if (!e)
                        return -ENOMEM;
                if ((r = put_padded(out, e, w->axis[k] + 2, NULL)) < 0)
                        return r;
        }
        const char *verdict = report_cell_verdict(c);
        if ((r = put_padded(out, verdict, w->verdict + 2, color ? cell_color(c) : NULL)) < 0)
                return r;
        _cleanup_free_ char *fig = report_cell_figure(v, c);
        _cleanup_free_ char *eval_line = report_cell_passed(c) ? report_cell_eval_line(v, c) : NULL;
        _cleanup_free_ char *result = escaped_text(fig ? fig : report_cell_cause(c), RESULT_MAX);
        const char *where = c->has_attempt ? attempt_where(c->verdict, c->phase) : NULL;
        _cleanup_free_ char *said = where ? strdup_printf("%s: %s", where, c->evidence ? c->evidence : "") : NULL;
        const char *shown = eval_line ? eval_line : said ? said : c->has_attempt ? c->evidence : NULL;
        _cleanup_free_ char *evidence = escaped_text(shown, w->evidence);
        if (!result || !evidence)
                return -ENOMEM;
        if ((r = put_padded(out, result, w->result + 2, NULL)) < 0 || (r = buf_puts(out, evidence)) < 0)
                return r;
        while (out->len > 0 && out->data[out->len - 1] == ' ')
                out->data[--out->len] = 0;
        return buf_puts(out, "\n");
}

static int text_table(const struct report_view *v, size_t width, bool color, struct buf *out) {
        struct text_widths w = {0};
        int r = text_widths(v, width, &w);
        _cleanup_free_ size_t *axis_w = w.axis;
        if (r < 0)
                return r;
        if ((r = put_padded(out, "CELL", w.id + 2, NULL)) < 0)
                return r;
        for (size_t k = 0; k < v->n_axes; k++) {
                _cleanup_free_ char *e = escaped_text(v->axes[k], AXIS_MAX);
                if (!e)
                        return -ENOMEM;
                if ((r = put_padded(out, e, axis_w[k] + 2, NULL)) < 0)
                        return r;
        }
        if ((r = put_padded(out, "VERDICT", w.verdict + 2, NULL)) < 0 ||
            (r = put_padded(out, "RESULT", w.result + 2, NULL)) < 0 || (r = buf_puts(out, "EVIDENCE\n")) < 0)
                return r;
        for (size_t i = 0; i < v->n_cells && r >= 0; i++)
                r = text_row(v, &v->cells[i], &w, color, out);
        return r;
}

/* "KEY: TEXT" with TEXT escaped, when there is one. */
static int put_note(struct buf *out, const char *key, char *text) {
        _cleanup_free_ char *owned = text;
        _cleanup_free_ char *shown = owned ? escaped_text(owned, 0) : NULL;
        return shown ? buf_printf(out, "%s: %s\n", key, shown) : 0;
}

/* The best cell, its ties, each cell's notes, and the sweep's tokens, eval and search lines. */
static int text_footer(const struct report_view *v, struct buf *out) {
        struct report_score score;
        int best = report_best_index(v, &score);
        int r = buf_puts(out, "\n");
        if (r < 0)
                return r;
        if (best >= 0) {
                const struct report_cell *c = &v->cells[best];
                _cleanup_free_ char *label = report_cell_axes_label(v, c, false), *fig = report_cell_figure(v, c);
                if (!label)
                        return -ENOMEM;
                _cleanup_free_ char *sla = report_sla_text(v, c);
                r = buf_printf(out, "best: %s %s%s%s%s%s\n", c->id, label, fig ? ", " : "", fig ? fig : "",
                               sla ? ", " : "", sla ? sla : "");
        } else
                r = buf_puts(out, report_count_verdicts(v, (size_t[_VERDICT_MAX]){0})
                                          ? "best: none (no passing cell has a figure under the objective)\n"
                                          : "best: none (no cell passed)\n");
        if (r >= 0 && best >= 0)
                r = report_put_ties(out, v, false);
        for (size_t i = 0; i < v->n_cells && r >= 0; i++) {
                const struct report_cell *c = &v->cells[i];
                if ((r = put_note(out, c->id, report_usage_note(c))) < 0 ||
                    (r = put_note(out, c->id, report_server_note(c))) < 0 ||
                    (r = put_note(out, c->id, report_load_note(v, c))) < 0)
                        break;
                _cleanup_free_ char *client = report_client_note(c);
                if (client && (r = buf_printf(out, "%s: %s\n", c->id, client)) < 0)
                        break;
                if ((r = put_note(out, c->id, report_probes_note(c))) < 0)
                        break;
                r = put_note(out, c->id, report_abandoned_note(c));
        }
        if (r < 0 || (r = put_note(out, "tokens", report_count_summary(v))) < 0 ||
            (r = put_note(out, "eval", report_eval_summary(v))) < 0 ||
            (r = put_note(out, "search", report_search_summary(v))) < 0 ||
            (r = put_note(out, "against", report_against_summary(v))) < 0 || (r = report_put_summary(out, v)) < 0)
                return r;
        return buf_puts(out, "\n");
}

int report_text(const struct report_view *v, const struct report_text_options *o, struct buf *out) {
        size_t width = o && o->width ? o->width : 120;
        bool color = o && o->color;
        int r = text_header(v, out);
        if (r >= 0)
                r = text_table(v, width, color, out);
        if (r >= 0)
                r = text_footer(v, out);
        return r;
}
