/* report_md.c -- the Markdown report, for a PR comment, read from the view only. */
#include "report/report.h"

#include <string.h>

#include "base/metrics.h"
#include "text/objective.h"

static size_t fence_len(const char *s) {
        size_t longest = 0, run = 0;
        for (; s && *s; s++) {
                run = *s == '`' ? run + 1 : 0;
                longest = MAX(longest, run);
        }
        return MAX((size_t)3, longest + 1);
}

static int put_fenced(struct buf *out, const char *text) {
        _cleanup_buf_ struct buf esc;
        buf_init(&esc, 0);
        /* Control characters escaped, newlines kept: a code block shows text, never HTML. */
        int r = 0;
        for (const char *p = text; *p && r >= 0;) {
                size_t n = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, n);
                if (!line)
                        return -ENOMEM;
                r = report_escape_text(&esc, line, 0);
                p += n;
                if (*p && r >= 0) {
                        r = buf_puts(&esc, "\n");
                        p++;
                }
        }
        if (r < 0)
                return r;
        size_t f = fence_len(buf_str(&esc));
        for (size_t i = 0; i < f && r >= 0; i++)
                r = buf_puts(out, "`");
        if (r >= 0)
                r = buf_printf(out, "\n%s\n", buf_str(&esc));
        for (size_t i = 0; i < f && r >= 0; i++)
                r = buf_puts(out, "`");
        return r < 0 ? r : buf_puts(out, "\n");
}

/* A section of one note per cell that has one, in the table's order: "- `id`: `note`". */
static int put_note_section(struct buf *out, const struct report_view *v, const struct report_ranked *order,
                            const char *title, char *(*note_of)(const struct report_cell *c)) {
        bool any = false;
        int r = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                _cleanup_free_ char *note = note_of(c);
                if (!note)
                        continue;
                if (!any && (r = buf_printf(out, "\n#### %s\n\n", title)) < 0)
                        return r;
                any = true;
                if ((r = buf_printf(out, "- `%s`: ", c->id)) < 0 || (r = report_code_span(out, note, 0, false)) < 0 ||
                    (r = buf_puts(out, "\n")) < 0)
                        return r;
        }
        return r;
}

/* The probes of a cell that ran (report_probes_note). */
static char *probes_note(const struct report_cell *c) {
        return c->has_attempt && !c->excluded ? report_probes_note(c) : NULL;
}

/* Per benchmarked passing cell: the SLA figure, and the prompt and output tokens per request
 * the server counted at each level. */
static int put_bench_notes(struct buf *out, const struct report_view *v, const struct report_ranked *order) {
        bool any = false;
        int r = 0;
        for (size_t i = 0; i < v->n_cells && r >= 0; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                if (!report_cell_passed(c) || !json_array_size(c->bench))
                        continue;
                if (!any && (r = buf_puts(out, "\n#### Benchmarked cells\n\n")) < 0)
                        return r;
                any = true;
                _cleanup_free_ char *sla = report_sla_text(v, c);
                if ((r = buf_printf(out, "- `%s`%s%s:", c->id, sla ? " " : "", sla ? sla : "")) < 0)
                        return r;
                size_t k;
                json_t *e;
                json_array_foreach(c->bench, k, e) {
                        json_t *pt = json_object_get(e, metric_key(METRIC_PROMPT_TOKENS_PER_REQUEST));
                        json_t *ot = json_object_get(e, metric_key(METRIC_OUTPUT_TOKENS_PER_REQUEST));
                        json_t *cal = json_object_get(e, metric_key(METRIC_PROMPT_CALIBRATION));
                        r = buf_printf(out, " @%lld%s prompt %.0f (%lld-%lld) tokens",
                                       (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                                       json_is_true(json_object_get(e, metric_key(METRIC_SEARCH))) ? " (search)" : "",
                                       json_number_value(json_object_get(pt, "mean")),
                                       (long long)json_integer_value(json_object_get(pt, "min")),
                                       (long long)json_integer_value(json_object_get(pt, "max")));
                        if (r >= 0 && json_is_integer(json_object_get(cal, "template_tokens")))
                                r = buf_printf(out, " (%lld of them the template)",
                                               (long long)json_integer_value(json_object_get(cal, "template_tokens")));
                        if (r >= 0)
                                r = buf_printf(out, ", output %.0f;", json_number_value(json_object_get(ot, "mean")));
                        if (r < 0)
                                return r;
                }
                _cleanup_free_ char *note = report_usage_note(c);
                if (note && ((r = buf_puts(out, " ")) < 0 || (r = report_escape_markdown(out, note, 0)) < 0 ||
                             (r = buf_puts(out, ".")) < 0))
                        return r;
                _cleanup_free_ char *server = report_server_note(c);
                if (server && ((r = buf_puts(out, " ")) < 0 || (r = report_escape_markdown(out, server, 0)) < 0 ||
                               (r = buf_puts(out, ".")) < 0))
                        return r;
                _cleanup_free_ char *load = report_load_note(v, c);
                if (load && ((r = buf_puts(out, " ")) < 0 || (r = report_escape_markdown(out, load, 0)) < 0 ||
                             (r = buf_puts(out, ".")) < 0))
                        return r;
                r = buf_puts(out, "\n");
        }
        return r;
}

/* The provenance block: what the sweep ran with, and what changed since the last one. */
static int put_provenance(struct buf *out, const struct report_view *v) {
        _cleanup_free_ char *sum = report_provenance_summary(v), *chg = report_provenance_changes(v);
        int r = 0;
        if (sum && ((r = buf_puts(out, "Provenance: ")) < 0 || (r = report_escape_markdown(out, sum, 0)) < 0 ||
                    (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        if (chg && ((r = buf_puts(out, "Provenance changed ")) < 0 || (r = report_escape_markdown(out, chg, 0)) < 0 ||
                    (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        return 0;
}

int report_markdown(const struct report_view *v, struct buf *out) {
        int best = report_best_index(v, NULL);
        _cleanup_free_ struct report_ranked *order = NULL;
        int r = report_order(v, &order);
        if (r < 0)
                return r;

        if ((r = buf_puts(out, "### gauntlet: ")) < 0 || (r = report_code_span(out, v->engine, 0, false)) < 0)
                return r;
        if (v->model && ((r = buf_puts(out, " · ")) < 0 || (r = report_code_span(out, v->model, 0, false)) < 0))
                return r;
        if ((r = buf_puts(out, "\n\nObjective: ")) < 0 ||
            (r = report_code_span(out, v->objective ? v->objective : OBJECTIVE_DEFAULT, 0, false)) < 0 ||
            (r = buf_puts(out, ". ")) < 0 || (r = report_put_summary(out, v)) < 0 || (r = buf_puts(out, ".\n\n")) < 0)
                return r;
        bool eval = v->eval.on;
        _cleanup_free_ char *eval_summary = report_eval_summary(v);
        if (eval_summary && ((r = buf_puts(out, "Eval: ")) < 0 || (r = report_escape_markdown(out, eval_summary, 0)) < 0 ||
                             (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        _cleanup_free_ char *tokens = report_count_summary(v);
        if (tokens && ((r = buf_puts(out, "Tokens: ")) < 0 || (r = report_escape_markdown(out, tokens, 0)) < 0 ||
                       (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        if ((r = put_provenance(out, v)) < 0)
                return r;
        _cleanup_free_ char *search_summary = report_search_summary(v);
        if (search_summary && ((r = buf_puts(out, "Search: ")) < 0 ||
                               (r = report_escape_markdown(out, search_summary, 0)) < 0 || (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        _cleanup_free_ char *against = report_against_summary(v);
        if (against && ((r = buf_puts(out, "Against: ")) < 0 || (r = report_escape_markdown(out, against, 0)) < 0 ||
                        (r = buf_puts(out, "\n\n")) < 0))
                return r;
        if ((r = buf_puts(out, "|   |")) < 0)
                return r;
        for (size_t k = 0; k < v->n_axes; k++)
                if ((r = buf_puts(out, " ")) < 0 || (r = report_code_span(out, v->axes[k], 0, true)) < 0 ||
                    (r = buf_puts(out, " |")) < 0)
                        return r;
        if ((r = buf_puts(out, eval ? " verdict | cause or figure | accuracy | cell |\n|---|"
                                    : " verdict | cause or figure | cell |\n|---|")) < 0)
                return r;
        for (size_t k = 0; k < v->n_axes; k++)
                if ((r = buf_puts(out, "---|")) < 0)
                        return r;
        if ((r = buf_puts(out, eval ? "---|---|---|---|\n" : "---|---|---|\n")) < 0)
                return r;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                if ((r = buf_puts(out, order[i].rank == REPORT_RANK_BEST ? "| **best** |" : "|   |")) < 0)
                        return r;
                for (size_t k = 0; k < v->n_axes; k++)
                        if ((r = buf_puts(out, " ")) < 0 ||
                            (r = report_code_span(out, c->axis_values[k] ? c->axis_values[k] : "?", 64, true)) < 0 ||
                            (r = buf_puts(out, " |")) < 0)
                                return r;
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                const char *result = fig ? fig : report_cell_cause(c);
                if ((r = buf_printf(out, report_cell_passed(c) ? " **%s** | " : " %s | ", report_cell_verdict(c))) < 0 ||
                    (r = fig ? report_escape_markdown(out, fig, 64) : report_code_span(out, result, 64, true)) < 0)
                        return r;
                if (eval) {
                        const struct report_eval *e = &c->eval;
                        if (e->ran && e->fig.n)
                                r = buf_printf(out, " | %.3f [%.3f, %.3f]%s", e->fig.accuracy, e->fig.ci_low, e->fig.ci_high,
                                               e->is_reference ? " (reference)" : "");
                        else
                                r = buf_puts(out, " | –");
                        if (r < 0)
                                return r;
                }
                if ((r = buf_printf(out, " | `%s` |\n", c->id)) < 0)
                        return r;
        }

        if (best >= 0 && (r = report_put_ties(out, v, true)) < 0)
                return r;
        if ((r = put_bench_notes(out, v, order)) < 0)
                return r;
        if ((r = put_note_section(out, v, order, "Probes", probes_note)) < 0 ||
            (r = put_note_section(out, v, order, "Abandoned launches", report_abandoned_note)) < 0)
                return r;

        bool any = false;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                if (!c->has_attempt || c->excluded || c->verdict == VERDICT_PASS)
                        continue;
                if (!any && (r = buf_puts(out, "\n#### Why the others failed\n")) < 0)
                        return r;
                any = true;
                _cleanup_free_ char *label = report_cell_axes_label(v, c, true);
                if (!label)
                        return -ENOMEM;
                if ((r = buf_printf(out, "\n`%s` %s: **%s**", c->id, label, verdict_to_string(c->verdict))) < 0)
                        return r;
                if (c->cause && ((r = buf_puts(out, " / ")) < 0 || (r = report_code_span(out, c->cause, 0, false)) < 0))
                        return r;
                const char *where = attempt_where(c->verdict, c->phase);
                if (where && (r = buf_printf(out, " (%s)", where)) < 0)
                        return r;
                if ((r = buf_puts(out, "\n\n")) < 0)
                        return r;
                if ((r = put_fenced(out, c->evidence ? c->evidence : "(no evidence recorded)")) < 0)
                        return r;
        }
        return 0;
}

