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

int report_text(const struct report_view *v, const struct report_text_options *o, struct buf *out) {
        size_t width = o && o->width ? o->width : 120;
        bool color = o && o->color;
        enum { AXIS_MAX = 24, RESULT_MAX = 28 };
        size_t ID_W = report_id_width(v);
        _cleanup_free_ size_t *axis_w = calloc(v->n_axes + 1, sizeof(size_t));
        _cleanup_free_ char *started = report_format_wall(v->sweep_started_wall);
        size_t verdict_w = strlen("VERDICT"), result_w = strlen("RESULT");
        int r;
        if (!axis_w || !started)
                return -ENOMEM;

        /* Header: what was swept, where, when. */
        _cleanup_free_ char *engine = escaped_text(v->engine, 0), *model = escaped_text(v->model ? v->model : "-", 0),
                            *objective = escaped_text(v->objective ? v->objective : OBJECTIVE_DEFAULT, 0),
                            *path = escaped_text(v->journal_path, 0), *mpath = escaped_text(v->matrix_path, 0);
        if (!engine || !model || !objective || !path || !mpath)
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
        if ((r = put_provenance(out, v)) < 0 || (r = buf_puts(out, "\n")) < 0)
                return r;

        /* Column widths from the escaped contents. */
        for (size_t i = 0; i < v->n_axes; i++)
                axis_w[i] = MIN(display_width(v->axes[i]), (size_t)AXIS_MAX);
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                for (size_t k = 0; k < v->n_axes; k++) {
                        _cleanup_free_ char *e = escaped_text(c->axis_values[k] ? c->axis_values[k] : "?", AXIS_MAX);
                        if (!e)
                                return -ENOMEM;
                        axis_w[k] = MAX(axis_w[k], display_width(e));
                }
                verdict_w = MAX(verdict_w, strlen(report_cell_verdict(c)));
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                _cleanup_free_ char *cause = escaped_text(fig ? fig : report_cell_cause(c), RESULT_MAX);
                if (!cause)
                        return -ENOMEM;
                result_w = MAX(result_w, display_width(cause));
        }
        size_t used = ID_W + 2 + verdict_w + 2 + result_w + 2;
        for (size_t k = 0; k < v->n_axes; k++)
                used += axis_w[k] + 2;
        size_t evidence_w = width > used + 20 ? width - used : 20;

        if ((r = put_padded(out, "CELL", ID_W + 2, NULL)) < 0)
                return r;
        for (size_t k = 0; k < v->n_axes; k++) {
                _cleanup_free_ char *e = escaped_text(v->axes[k], AXIS_MAX);
                if (!e)
                        return -ENOMEM;
                if ((r = put_padded(out, e, axis_w[k] + 2, NULL)) < 0)
                        return r;
        }
        if ((r = put_padded(out, "VERDICT", verdict_w + 2, NULL)) < 0 ||
            (r = put_padded(out, "RESULT", result_w + 2, NULL)) < 0 || (r = buf_puts(out, "EVIDENCE\n")) < 0)
                return r;

        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                char id[sizeof(c->id)] = {0};
                memcpy(id, c->id, MIN(strlen(c->id), ID_W));
                if ((r = put_padded(out, id, ID_W + 2, NULL)) < 0)
                        return r;
                for (size_t k = 0; k < v->n_axes; k++) {
                        _cleanup_free_ char *e = escaped_text(c->axis_values[k] ? c->axis_values[k] : "?", AXIS_MAX);
                        if (!e)
                                return -ENOMEM;
                        if ((r = put_padded(out, e, axis_w[k] + 2, NULL)) < 0)
                                return r;
                }
                const char *verdict = report_cell_verdict(c);
                if ((r = put_padded(out, verdict, verdict_w + 2, color ? cell_color(c) : NULL)) < 0)
                        return r;
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                _cleanup_free_ char *eval_line = report_cell_passed(c) ? report_cell_eval_line(v, c) : NULL;
                _cleanup_free_ char *result = escaped_text(fig ? fig : report_cell_cause(c), RESULT_MAX);
                _cleanup_free_ char *evidence = escaped_text(eval_line ? eval_line : c->has_attempt ? c->evidence : NULL,
                                                             evidence_w);
                if (!result || !evidence)
                        return -ENOMEM;
                if ((r = put_padded(out, result, result_w + 2, NULL)) < 0 || (r = buf_puts(out, evidence)) < 0)
                        return r;
                /* No trailing blanks when there is no evidence. */
                while (out->len > 0 && out->data[out->len - 1] == ' ')
                        out->data[--out->len] = 0;
                if ((r = buf_puts(out, "\n")) < 0)
                        return r;
        }

        struct report_score score;
        int best = report_best_index(v, &score);
        if ((r = buf_puts(out, "\n")) < 0)
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
                _cleanup_free_ char *note = report_usage_note(&v->cells[i]);
                _cleanup_free_ char *shown = note ? escaped_text(note, 0) : NULL;
                if (shown)
                        r = buf_printf(out, "%s: %s\n", v->cells[i].id, shown);
                _cleanup_free_ char *server = r >= 0 ? report_server_note(&v->cells[i]) : NULL;
                _cleanup_free_ char *server_shown = server ? escaped_text(server, 0) : NULL;
                if (server_shown)
                        r = buf_printf(out, "%s: %s\n", v->cells[i].id, server_shown);
                _cleanup_free_ char *load = r >= 0 ? report_load_note(v, &v->cells[i]) : NULL;
                _cleanup_free_ char *load_shown = load ? escaped_text(load, 0) : NULL;
                if (load_shown)
                        r = buf_printf(out, "%s: %s\n", v->cells[i].id, load_shown);
                _cleanup_free_ char *client = report_client_note(&v->cells[i]);
                if (client && r >= 0)
                        r = buf_printf(out, "%s: %s\n", v->cells[i].id, client);
                _cleanup_free_ char *probes = r >= 0 ? report_probes_note(&v->cells[i]) : NULL;
                _cleanup_free_ char *probes_shown = probes ? escaped_text(probes, 0) : NULL;
                if (probes_shown && r >= 0)
                        r = buf_printf(out, "%s: %s\n", v->cells[i].id, probes_shown);
        }
        _cleanup_free_ char *tokens = report_count_summary(v);
        _cleanup_free_ char *tokens_shown = tokens ? escaped_text(tokens, 0) : NULL;
        if (r >= 0 && tokens_shown)
                r = buf_printf(out, "tokens: %s\n", tokens_shown);
        _cleanup_free_ char *eval = report_eval_summary(v);
        _cleanup_free_ char *eval_shown = eval ? escaped_text(eval, 0) : NULL;
        if (r >= 0 && eval_shown)
                r = buf_printf(out, "eval: %s\n", eval_shown);
        _cleanup_free_ char *search = report_search_summary(v);
        _cleanup_free_ char *search_shown = search ? escaped_text(search, 0) : NULL;
        if (r >= 0 && search_shown)
                r = buf_printf(out, "search: %s\n", search_shown);
        if (r < 0 || (r = report_put_summary(out, v)) < 0)
                return r;
        return buf_puts(out, "\n");
}
