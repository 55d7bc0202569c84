/* compare_report.c -- a comparison of two sweeps drawn (compare_report.h). */
#include "report/compare_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "text/text.h"

/* ---- what every format says the same way ---- */

static const struct report_cell *old_cell(const struct compare_result *r, const struct compare_cell *x) {
        return x->old_index >= 0 ? &r->old->cells[x->old_index] : NULL;
}
static const struct report_cell *new_cell(const struct compare_result *r, const struct compare_cell *x) {
        return x->new_index >= 0 ? &r->new->cells[x->new_index] : NULL;
}

/* "pass", "garbage/repeat", "-" for no cell (static or owned by the view: escape it). */
static char *verdict_of(const struct report_cell *c) {
        if (!c)
                return strdup("-");
        const char *cause = report_cell_cause(c);
        return cause && !report_cell_passed(c) ? strdup_printf("%s/%s", report_cell_verdict(c), cause)
                                               : strdup(report_cell_verdict(c));
}

/* The speed's word: what the change came to. */
static const char *speed_word(const struct compare_speed *s) {
        if (!s->known)
                return NULL;
        if (s->regression)
                return "SLOWER";
        if (s->inconclusive)
                return "INCONCLUSIVE";
        if (s->improvement)
                return "faster";
        if (s->significant)
                return "slower within threshold";
        return "within noise";
}

/* "22%", or "?" when unknown, into a buffer of 16. */
static const char *pct(double f, char b[static 16]) {
        if (!isfinite(f))
                return "?";
        snprintf(b, 16, "%.0f%%", 100 * f);
        return b;
}

/* "; the hypervisor took 0% -> 22% of the host's CPU time during the bench" (steal), with
 * other processes' share where either side knows it, or "". */
static char *steal_text(const struct compare_speed *s) {
        if (!s->disturbed)
                return strdup("");
        char a[16], b[16], c[16], d[16];
        bool others = isfinite(s->others_old) || isfinite(s->others_new);
        return strdup_printf("; the hypervisor took %s -> %s%s%s%s%s of the host's CPU time during the bench%s",
                             pct(s->steal_old, a), pct(s->steal_new, b), others ? " and other processes " : "",
                             others ? pct(s->others_old, c) : "", others ? " -> " : "",
                             others ? pct(s->others_new, d) : "",
                             s->inconclusive ? ": run it again on a quiet host" : "");
}

/* A side's count: "bytes at 5.412 a token", "its tokenizer (5.100 bytes a token)", "its own
 * counts (1.082 bytes a token)". */
static char *count_side(const char *rule, double bpt) {
        return strcmp(rule, "tokenizer") == 0 ? strdup_printf("its tokenizer (%.3f bytes a token)", bpt)
               : strcmp(rule, "bytes") == 0   ? strdup_printf("bytes at %.3f a token", bpt)
                                              : strdup_printf("its own counts (%.3f bytes a token)", bpt);
}

/* "; counted apart: ..." where the two sides counted their tokens unlike (compare.h), or "". */
static char *count_text(const struct compare_speed *s) {
        if (!s->counted_apart)
                return strdup("");
        _cleanup_free_ char *a = count_side(s->count_old, s->bpt_old), *b = count_side(s->count_new, s->bpt_new);
        if (!a || !b)
                return NULL;
        if (s->by_bytes)
                return strdup_printf("; counted apart, old by %s, new by %s: the same text counts x%.3f in the new, "
                                     "part of the change may be the count's",
                                     a, b, s->bpt_old / s->bpt_new);
        return strdup_printf("; counted apart, old by %s, new by %s: part of the change may be the count's", a, b);
}

/* "-40.8% [-43.1%, -38.2%] bootstrap 16/16" */
static char *speed_text(const struct compare_speed *s) {
        if (!s->known)
                return strdup("");
        _cleanup_free_ char *st = steal_text(s), *ct = count_text(s);
        if (!st || !ct)
                return NULL;
        if (s->method == COMPARE_METHOD_BOOTSTRAP || s->method == COMPARE_METHOD_REPEATS)
                return strdup_printf("%.4g -> %.4g (%+.1f%% [%+.1f%%, %+.1f%%], %s of %zu/%zu%s%s)", s->old_value,
                                     s->new_value, 100 * s->change, 100 * s->lo, 100 * s->hi,
                                     compare_method_name(s->method), s->n_old, s->n_new, st, ct);
        return strdup_printf("%.4g -> %.4g (%+.1f%%, noise unknown%s%s)", s->old_value, s->new_value,
                             100 * s->change, st, ct);
}

static char *accuracy_text(const struct compare_accuracy *a) {
        if (!a->known)
                return strdup("");
        return strdup_printf("accuracy %zu/%zu -> %zu/%zu (%+.1f points, z %.2f, p %.3g)%s", a->k_old, a->n_old,
                             a->k_new, a->n_new, 100 * a->change, a->z, a->p,
                             a->regression ? " ACCURACY DROP" : "");
}

static const char *best_label(const struct compare_result *r, long i) {
        return i >= 0 ? r->cells[i].label : "none";
}

static char *summary_text(const struct compare_result *r) {
        _cleanup_free_ char *inc =
                r->inconclusive ? strdup_printf("; %zu inconclusive: the hypervisor and other processes took over "
                                                "%.0f%% of the host's CPU time during %s bench",
                                                r->inconclusive, 100 * r->opts.max_steal,
                                                r->inconclusive == 1 ? "its" : "their")
                                : strdup("");
        if (!inc)
                return NULL;
        return strdup_printf("%s: %zu verdict regression%s, %zu slower beyond %.1f%%, %zu accuracy drop%s; %zu fix%s, "
                             "%zu faster; %zu unchanged%s",
                             r->regressed      ? "REGRESSED"
                             : r->inconclusive ? "INCONCLUSIVE"
                                               : "no regression",
                             r->regressions, r->regressions == 1 ? "" : "s", r->slower, 100 * r->opts.max_slowdown,
                             r->accuracy_drops, r->accuracy_drops == 1 ? "" : "s", r->fixes,
                             r->fixes == 1 ? "" : "es", r->faster, r->unchanged, inc);
}

/* ---- text ---- */

static int put_esc(struct buf *out, const char *s) {
        return report_escape_text(out, s ? s : "", 0);
}

int compare_report_text(const struct compare_result *r, struct buf *out) {
        buf_printf(out, "compare: old ");
        put_esc(out, r->old->journal_path);
        buf_printf(out, " sweep %lld -> new ", (long long)r->old->sweep_id);
        put_esc(out, r->new->journal_path);
        buf_printf(out, " sweep %lld; objective ", (long long)r->new->sweep_id);
        put_esc(out, r->metric ? r->metric : "smoke");
        buf_puts(out, "\n");
        for (size_t i = 0; i < r->n_cells; i++) {
                const struct compare_cell *x = &r->cells[i];
                _cleanup_free_ char *va = verdict_of(old_cell(r, x)), *vb = verdict_of(new_cell(r, x));
                _cleanup_free_ char *sp = speed_text(&x->speed), *ac = accuracy_text(&x->accuracy);
                const char *word = speed_word(&x->speed);
                if (!va || !vb || !sp || !ac)
                        return -ENOMEM;
                buf_puts(out, "  ");
                put_esc(out, x->label);
                buf_puts(out, ": ");
                put_esc(out, va);
                buf_puts(out, " -> ");
                put_esc(out, vb);
                buf_printf(out, " [%s]", x->change == COMPARE_REGRESSION ? "REGRESSION" : compare_change_name(x->change));
                if (x->speed.known)
                        buf_printf(out, "; %s %s", sp, word);
                if (x->accuracy.known)
                        buf_printf(out, "; %s", ac);
                buf_puts(out, "\n");
        }
        buf_puts(out, "best: ");
        put_esc(out, best_label(r, r->old_best));
        buf_puts(out, " -> ");
        put_esc(out, best_label(r, r->new_best));
        buf_puts(out, r->best_changed ? " (changed)\n" : " (unchanged)\n");
        for (char **p = r->provenance_changes; p && *p; p++) {
                buf_puts(out, "provenance: ");
                put_esc(out, *p);
                buf_puts(out, "\n");
        }
        _cleanup_free_ char *sum = summary_text(r);
        if (!sum)
                return -ENOMEM;
        return buf_printf(out, "%s\n", sum) < 0 ? -ENOBUFS : 0;
}

/* ---- Markdown ---- */

static int put_md(struct buf *out, const char *s) {
        return report_escape_markdown(out, s ? s : "", 0);
}

int compare_report_markdown(const struct compare_result *r, struct buf *out) {
        _cleanup_free_ char *sum = summary_text(r);
        if (!sum)
                return -ENOMEM;
        buf_puts(out, "## Compare: ");
        put_md(out, sum);
        buf_puts(out, "\n\nOld: ");
        report_code_span(out, r->old->journal_path, 0, false);
        buf_printf(out, " sweep %lld. New: ", (long long)r->old->sweep_id);
        report_code_span(out, r->new->journal_path, 0, false);
        buf_printf(out, " sweep %lld. Objective: ", (long long)r->new->sweep_id);
        report_code_span(out, r->metric ? r->metric : "smoke", 0, false);
        buf_printf(out, "; thresholds: slowdown %.1f%%, accuracy drop %.1f points.\n\n", 100 * r->opts.max_slowdown,
                   100 * r->opts.max_accuracy_drop);
        buf_puts(out, "| cell | old | new | change | objective | accuracy |\n| --- | --- | --- | --- | --- | --- |\n");
        for (size_t i = 0; i < r->n_cells; i++) {
                const struct compare_cell *x = &r->cells[i];
                _cleanup_free_ char *va = verdict_of(old_cell(r, x)), *vb = verdict_of(new_cell(r, x));
                _cleanup_free_ char *sp = speed_text(&x->speed), *ac = accuracy_text(&x->accuracy);
                if (!va || !vb || !sp || !ac)
                        return -ENOMEM;
                buf_puts(out, "| ");
                put_md(out, x->label);
                buf_puts(out, " | ");
                put_md(out, va);
                buf_puts(out, " | ");
                put_md(out, vb);
                buf_printf(out, " | %s%s%s | ", x->regression ? "**" : "", compare_change_name(x->change),
                           x->regression ? "**" : "");
                put_md(out, sp);
                if (x->speed.known)
                        buf_printf(out, " %s", speed_word(&x->speed));
                buf_puts(out, " | ");
                put_md(out, ac);
                buf_puts(out, " |\n");
        }
        buf_puts(out, "\nBest: ");
        put_md(out, best_label(r, r->old_best));
        buf_puts(out, " → ");
        put_md(out, best_label(r, r->new_best));
        buf_puts(out, r->best_changed ? " (changed).\n" : " (unchanged).\n");
        for (char **p = r->provenance_changes; p && *p; p++) {
                buf_puts(out, "\n- Provenance: ");
                put_md(out, *p);
        }
        return buf_puts(out, r->provenance_changes && *r->provenance_changes ? "\n" : "") < 0 ? -ENOBUFS : 0;
}

/* ---- JSON ---- */

static json_t *str_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *speed_json(const struct compare_speed *s) {
        if (!s->known)
                return json_null();
        json_t *o = json_pack("{s:f, s:f, s:f, s:b, s:s, s:b, s:b, s:b}", "old", s->old_value, "new", s->new_value,
                              "change", s->change, "higher_better", s->higher_better, "method",
                              compare_method_name(s->method), "significant", s->significant, "regression",
                              s->regression, "improvement", s->improvement);
        if (o) {
                json_object_set_new(o, "steal_old", isfinite(s->steal_old) ? json_real(s->steal_old) : json_null());
                json_object_set_new(o, "steal_new", isfinite(s->steal_new) ? json_real(s->steal_new) : json_null());
                json_object_set_new(o, "others_old", isfinite(s->others_old) ? json_real(s->others_old) : json_null());
                json_object_set_new(o, "others_new", isfinite(s->others_new) ? json_real(s->others_new) : json_null());
                json_object_set_new(o, "disturbed", json_boolean(s->disturbed));
                json_object_set_new(o, "inconclusive", json_boolean(s->inconclusive));
                json_object_set_new(o, "counted_apart", json_boolean(s->counted_apart));
                if (s->counted_apart)
                        json_object_set_new(o, "count",
                                            json_pack("{s:s, s:s, s:f, s:f}", "old", s->count_old, "new",
                                                      s->count_new, "bytes_per_token_old", s->bpt_old,
                                                      "bytes_per_token_new", s->bpt_new));
        }
        if (o && (s->method == COMPARE_METHOD_BOOTSTRAP || s->method == COMPARE_METHOD_REPEATS)) {
                json_object_set_new(o, "interval", json_pack("[f, f]", s->lo, s->hi));
                json_object_set_new(o, "n_old", json_integer((json_int_t)s->n_old));
                json_object_set_new(o, "n_new", json_integer((json_int_t)s->n_new));
        }
        return o;
}

static json_t *accuracy_json(const struct compare_accuracy *a) {
        if (!a->known)
                return json_null();
        return json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:b, s:b}", "correct_old", (json_int_t)a->k_old,
                         "n_old", (json_int_t)a->n_old, "correct_new", (json_int_t)a->k_new, "n_new",
                         (json_int_t)a->n_new, "change", a->change, "z", a->z, "p", a->p, "old", a->old_acc,
                         "significant", a->significant, "regression", a->regression);
}

static json_t *side_json(const struct report_cell *c) {
        if (!c)
                return json_null();
        return json_pack("{s:s, s:s, s:o}", "id", c->id, "verdict", report_cell_verdict(c), "cause",
                         str_or_null(report_cell_cause(c)));
}

int compare_report_json(const struct compare_result *r, json_t **ret) {
        _cleanup_json_ json_t *cells = json_array(), *prov = r->provenance_changes ? json_array() : json_null();
        if (!cells || !prov)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_cells; i++) {
                const struct compare_cell *x = &r->cells[i];
                json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:b}", "cell", x->label, "change",
                                      compare_change_name(x->change), "old", side_json(old_cell(r, x)), "new",
                                      side_json(new_cell(r, x)), "speed", speed_json(&x->speed), "accuracy",
                                      accuracy_json(&x->accuracy), "regression", x->regression);
                if (!o || json_array_append_new(cells, o) < 0)
                        return -ENOMEM;
        }
        for (char **p = r->provenance_changes; p && *p; p++)
                if (json_array_append_new(prov, json_string(*p)) < 0)
                        return -ENOMEM;
        json_t *o = json_pack(
                "{s:{s:o, s:I}, s:{s:o, s:I}, s:o, s:{s:f, s:f, s:f}, s:O, s:{s:o, s:o, s:b}, s:O, "
                "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:b}",
                "old", "journal", str_or_null(r->old->journal_path), "sweep", (json_int_t)r->old->sweep_id, "new",
                "journal", str_or_null(r->new->journal_path), "sweep", (json_int_t)r->new->sweep_id, "objective",
                str_or_null(r->metric), "thresholds", "max_slowdown", r->opts.max_slowdown, "max_accuracy_drop",
                r->opts.max_accuracy_drop, "max_steal", r->opts.max_steal, "cells", cells, "best", "old",
                r->old_best >= 0 ? json_string(r->cells[r->old_best].label) : json_null(), "new",
                r->new_best >= 0 ? json_string(r->cells[r->new_best].label) : json_null(), "changed", r->best_changed,
                "provenance_changes", prov, "summary", "regressions", (json_int_t)r->regressions, "slower",
                (json_int_t)r->slower, "accuracy_drops", (json_int_t)r->accuracy_drops, "fixes",
                (json_int_t)r->fixes, "faster", (json_int_t)r->faster, "unchanged", (json_int_t)r->unchanged,
                "inconclusive", (json_int_t)r->inconclusive, "regressed", r->regressed);
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

/* ---- HTML ---- */

static int put_html(struct buf *out, const char *s) {
        return text_escape_html(out, s ? s : "", 0);
}

static const char html_css[] =
        "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}"
        ".wrap{max-width:1180px;margin:0 auto;padding:16px}table{border-collapse:collapse;width:100%}"
        "td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;"
        "overflow-wrap:anywhere}.bad{background:#fde2e1;color:#7a0b06}.good{background:#dcf5e3;color:#0b4a1e}"
        ".k{color:#555}";

int compare_report_html(const struct compare_result *r, struct buf *out) {
        _cleanup_free_ char *sum = summary_text(r);
        if (!sum)
                return -ENOMEM;
        buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                      "style-src 'unsafe-inline'\">\n<title>gauntlet compare: ");
        put_html(out, sum);
        buf_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<div class=\"wrap\">\n<h1 class=\"%s\">",
                   html_css, r->regressed ? "bad" : "good");
        put_html(out, sum);
        buf_puts(out, "</h1>\n<p><span class=\"k\">Old</span> ");
        put_html(out, r->old->journal_path);
        buf_printf(out, " sweep %lld · <span class=\"k\">New</span> ", (long long)r->old->sweep_id);
        put_html(out, r->new->journal_path);
        buf_printf(out, " sweep %lld · <span class=\"k\">Objective</span> ", (long long)r->new->sweep_id);
        put_html(out, r->metric ? r->metric : "smoke");
        buf_printf(out, " · <span class=\"k\">Thresholds</span> slowdown %.1f%%, accuracy drop %.1f points</p>\n",
                   100 * r->opts.max_slowdown, 100 * r->opts.max_accuracy_drop);
        buf_puts(out, "<p><span class=\"k\">Best</span> ");
        put_html(out, best_label(r, r->old_best));
        buf_puts(out, " → ");
        put_html(out, best_label(r, r->new_best));
        buf_puts(out, r->best_changed ? " (changed)</p>\n" : " (unchanged)</p>\n");
        buf_puts(out, "<table>\n<tr><th>cell</th><th>old</th><th>new</th><th>change</th><th>objective</th>"
                      "<th>accuracy</th></tr>\n");
        for (size_t i = 0; i < r->n_cells; i++) {
                const struct compare_cell *x = &r->cells[i];
                _cleanup_free_ char *va = verdict_of(old_cell(r, x)), *vb = verdict_of(new_cell(r, x));
                _cleanup_free_ char *sp = speed_text(&x->speed), *ac = accuracy_text(&x->accuracy);
                if (!va || !vb || !sp || !ac)
                        return -ENOMEM;
                bool good = x->change == COMPARE_FIX || x->speed.improvement;
                buf_printf(out, "<tr class=\"%s\"><td>", x->regression ? "bad" : good ? "good" : "");
                put_html(out, x->label);
                buf_puts(out, "</td><td>");
                put_html(out, va);
                buf_puts(out, "</td><td>");
                put_html(out, vb);
                buf_printf(out, "</td><td>%s</td><td>", compare_change_name(x->change));
                put_html(out, sp);
                if (x->speed.known)
                        buf_printf(out, " %s", speed_word(&x->speed));
                buf_puts(out, "</td><td>");
                put_html(out, ac);
                buf_puts(out, "</td></tr>\n");
        }
        buf_puts(out, "</table>\n");
        if (r->provenance_changes && *r->provenance_changes) {
                buf_puts(out, "<h2>Provenance changes</h2>\n<ul>\n");
                for (char **p = r->provenance_changes; *p; p++) {
                        buf_puts(out, "<li>");
                        put_html(out, *p);
                        buf_puts(out, "</li>\n");
                }
                buf_puts(out, "</ul>\n");
        }
        return buf_puts(out, "</div>\n</body>\n</html>\n") < 0 ? -ENOBUFS : 0;
}
