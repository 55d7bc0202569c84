/* report.c -- what the renderers share: the notes and one-line summaries of a cell and of
 * the view, escaping, the summary line, labels. The decisions they word are results.h's. */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/metrics.h"
#include "text/objective.h"
#include "text/secrets.h"
#include "text/text.h"

char *report_probes_note(const struct report_cell *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        int r = 0;
        size_t n = 0;
        for (size_t i = 0; i < c->n_checks && r >= 0; i++) {
                const struct report_check *k = &c->checks[i];
                const char *name = k->name ? k->name : "";
                bool probe = startswith(name, "long-context") || startswith(name, "sampling/") || startswith(name, "multi-turn");
                if (!probe || endswith(name, "/control"))
                        continue;
                const char *why = k->verdict == VERDICT_PASS ? k->detail : k->evidence ? k->evidence : k->detail;
                r = buf_printf(&b, "%s%s %s", n++ ? ", " : "probes: ", name, verdict_to_string(k->verdict));
                if (r >= 0 && why)
                        r = buf_printf(&b, " (%s)", why);
        }
        if (r < 0 || n == 0)
                return NULL;
        return buf_detach(&b);
}

char *report_abandoned_note(const struct report_cell *c) {
        if (c->abandoned == 0)
                return NULL;
        const char *why = c->abandon_reason ? c->abandon_reason : "no reason recorded";
        return c->abandoned == 1 ? strdup_printf("abandoned launches: 1 (%s)", why)
                                 : strdup_printf("abandoned launches: %u, the latest: %s", c->abandoned, why);
}

char *report_usage_note(const struct report_cell *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        size_t k;
        json_t *e;
        int r = 0;
        json_array_foreach(c->bench, k, e) {
                json_t *u = json_object_get(e, metric_key(METRIC_USAGE_CHECK));
                json_int_t bad = json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_DISAGREE)));
                json_int_t over = json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_OVER_MAX)));
                /* by bytes per token the level's sum is compared, not each request */
                json_t *said = json_object_get(json_object_get(e, "count"), "disagree");
                bool level_wide = false;
                for (size_t j = 0; j < json_array_size(said); j++)
                        level_wide |= json_is_string(json_array_get(said, j)) &&
                                      strcmp(json_string_value(json_array_get(said, j)), "usage") == 0;
                if ((bad <= 0 && !level_wide) || r < 0)
                        continue;
                r = buf_printf(&b, "%s @%lld the server said %lld output tokens on %lld requests (",
                               b.len ? ";" : "usage disagrees with gauntlet's count:",
                               (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_TOKENS))),
                               (long long)json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_REQUESTS))));
                if (r >= 0)
                        r = bad > 0 ? buf_printf(&b, "%lld disagreeing", (long long)bad)
                                    : buf_printf(&b, "over the level, none alone");
                if (r >= 0 && over > 0)
                        r = buf_printf(&b, ", %lld above max_tokens", (long long)over);
                if (r >= 0)
                        r = buf_printf(&b, "), gauntlet counted %lld",
                                       (long long)json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_COUNTED))));
        }
        /* how its tokens were counted, where its own counts disagree with that (count.h) */
        json_t *first = json_array_get(c->bench, 0), *cnt = json_object_get(first, "count");
        json_t *dis = json_object_get(cnt, "disagree");
        const char *rule = json_string_value(json_object_get(cnt, "rule"));
        if (r >= 0 && rule && strcmp(rule, "own") == 0 && json_is_false(json_object_get(cnt, "agreed")))
                r = buf_printf(&b, "%sits own token counts disagree (usage, /tokenize, chunks): counted by the fewest, %s",
                               b.len ? "; " : "", json_string_value(json_object_get(cnt, "source")));
        size_t i;
        json_t *what;
        json_array_foreach(dis, i, what) {
                if (r < 0 || !json_is_string(what) || strcmp(json_string_value(what), "chunks") != 0)
                        continue;
                json_int_t tokens = json_integer_value(json_object_get(cnt, "tokens"));
                json_int_t chunks = json_integer_value(json_object_get(cnt, "chunks"));
                r = buf_printf(&b, "%sits stream carried %.2f tokens per chunk: chunks are not its tokens, the figures "
                               "do not count them", b.len ? "; " : "", chunks > 0 ? (double)tokens / (double)chunks : 0.0);
        }
        return r < 0 || b.len == 0 ? NULL : strdup(buf_str(&b));
}

char *report_count_summary(const struct report_view *v) {
        const struct report_cell *from = NULL;
        json_t *rule_cnt = NULL;
        size_t own = 0, counted = 0, unverified = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                json_t *cnt = json_object_get(json_array_get(c->bench, 0), "count");
                const char *rule = json_string_value(json_object_get(cnt, "rule"));
                if (!rule)
                        continue;
                counted++;
                if (strcmp(rule, "tokenizer") == 0 || strcmp(rule, "bytes") == 0) {
                        if (!rule_cnt)
                                rule_cnt = cnt;
                } else {
                        own++;
                        if (json_is_true(json_object_get(cnt, "agreed")) && (!from || c->started_wall < from->started_wall))
                                from = c;
                        else if (!json_is_true(json_object_get(cnt, "agreed")))
                                unverified++;
                }
        }
        if (counted == 0)
                return NULL;
        const char *rule = json_string_value(json_object_get(rule_cnt, "rule"));
        char *s;
        if (rule && strcmp(rule, "tokenizer") == 0)
                s = strdup_printf("counted by the model's tokenizer, %s",
                                  json_string_value(json_object_get(rule_cnt, "tokenizer")) ?: "?");
        else if (rule)
                s = strdup_printf("counted by bytes per token, %.3f, as the own counts of cell %s agreed (no tokenizer "
                                  "file gauntlet can read)",
                                  json_number_value(json_object_get(rule_cnt, "bytes_per_token")),
                                  json_string_value(json_object_get(rule_cnt, "from")) ?: "?");
        else
                s = strdup_printf("counted by each cell's own counts that agree (usage, /tokenize, chunks)");
        if (s && unverified) {
                char *t = strdup_printf("%s; %zu cell%s counted before the rule was set had own counts that disagree "
                                        "(counted by the fewest)",
                                        s, unverified, unverified == 1 ? "" : "s");
                free(s);
                s = t;
        }
        return s;
}

/* "42.5%"; nothing for no number, and for one outside 0..1 (a journal written before such
 * values were dropped when scraped) a word, never "-700.0%" or "inf%" */
static int put_share(struct buf *b, const char *what, json_t *v) {
        if (!json_is_number(v))
                return 0;
        double x = json_number_value(v);
        if (!(x >= 0 && x <= 1))
                return buf_printf(b, "%s%s out of range (dropped)", b->len ? ", " : "", what);
        return buf_printf(b, "%s%s %.1f%%", b->len ? ", " : "", what, 100 * x);
}

static int put_count(struct buf *b, const char *what, json_t *v) {
        if (!json_is_integer(v))
                return 0;
        return buf_printf(b, "%s%s %lld", b->len ? ", " : "", what, (long long)json_integer_value(v));
}

char *report_server_line(json_t *level) {
        json_t *sm = json_object_get(level, metric_key(METRIC_SERVER_METRICS));
        json_t *st = json_object_get(level, metric_key(METRIC_SERVER_TIMINGS));
        if (!json_is_object(sm) && !json_is_object(st))
                return NULL;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        int r = 0;
        if (json_is_object(sm)) {
                json_t *rate = json_object_get(sm, metric_key(METRIC_SM_PREFIX_CACHE_HIT_RATE));
                const char *from = json_string_value(json_object_get(sm, metric_key(METRIC_SM_PREFIX_CACHE_HIT_RATE_FROM)));
                if ((r = put_share(&b, "KV cache peak", json_object_get(sm, metric_key(METRIC_SM_KV_CACHE_USAGE_PEAK)))) < 0 ||
                    (r = put_count(&b, "running peak", json_object_get(sm, metric_key(METRIC_SM_RUNNING_PEAK)))) < 0 ||
                    (r = put_count(&b, "waiting peak", json_object_get(sm, metric_key(METRIC_SM_WAITING_PEAK)))) < 0 ||
                    (r = put_share(&b, from && strcmp(from, "gauge") == 0 ? "prefix cache hit rate (its gauge)"
                                                                          : "prefix cache hits",
                                   rate)) < 0 ||
                    (r = put_count(&b, "preemptions", json_object_get(sm, metric_key(METRIC_SM_PREEMPTIONS)))) < 0 ||
                    (r = put_count(&b, "prompt tokens processed", json_object_get(sm, metric_key(METRIC_SM_PROMPT_TOKENS)))) < 0)
                        return NULL;
                json_t *oor = json_object_get(sm, metric_key(METRIC_SM_OUT_OF_RANGE));
                if (json_integer_value(oor) > 0 &&
                    (r = buf_printf(&b, "%s%lld value%s out of range dropped (a ratio outside 0..1, a negative count)",
                                    b.len ? ", " : "", (long long)json_integer_value(oor),
                                    json_integer_value(oor) == 1 ? "" : "s")) < 0)
                        return NULL;
                if (b.len == 0 && (r = buf_puts(&b, "/metrics has none of the series gauntlet reads")) < 0)
                        return NULL;
        }
        if (json_is_object(st)) {
                json_t *rate = json_object_get(st, metric_key(METRIC_ST_CACHE_HIT_RATE));
                if (json_is_number(rate) &&
                    (r = buf_printf(&b, "%sprompt cached %.1f%% (%lld of %lld tokens, its timings)", b.len ? ", " : "",
                                    100 * json_number_value(rate),
                                    (long long)json_integer_value(json_object_get(st, metric_key(METRIC_ST_PROMPT_CACHED))),
                                    (long long)(json_integer_value(json_object_get(st, metric_key(METRIC_ST_PROMPT_CACHED))) +
                                                json_integer_value(json_object_get(st, metric_key(METRIC_ST_PROMPT_COMPUTED)))))) < 0)
                        return NULL;
        }
        return b.len ? strdup(buf_str(&b)) : NULL;
}

char *report_server_note(const struct report_cell *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 16384);
        size_t k;
        json_t *e;
        json_array_foreach(c->bench, k, e) {
                _cleanup_free_ char *line = report_server_line(e);
                if (line && buf_printf(&b, "%s@%lld %s", b.len ? "; " : "the server's own figures: ",
                                       (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                                       line) < 0)
                        return NULL;
        }
        return b.len ? strdup(buf_str(&b)) : NULL;
}

static int put_figures(struct buf *b, const char *what, const struct eval_figures *f) {
        return buf_printf(b, "%s%zu/%zu, accuracy %.3f [%.3f, %.3f]", what, f->correct, f->n, f->accuracy, f->ci_low,
                          f->ci_high);
}

char *report_load_note(const struct report_view *v, const struct report_cell *c) {
        if (json_array_size(c->bench) == 0)
                return NULL;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 8192);
        json_int_t judged = 0, flagged = 0;
        size_t k;
        json_t *e;
        json_array_foreach(c->bench, k, e) {
                judged += json_integer_value(json_object_get(e, metric_key(METRIC_OUTPUTS_JUDGED)));
                flagged += json_integer_value(json_object_get(e, metric_key(METRIC_OUTPUTS_FLAGGED)));
        }
        int r = buf_printf(&b, "bench outputs: %lld judged, %lld flagged", (long long)judged, (long long)flagged);
        json_array_foreach(c->bench, k, e) {
                json_t *first = json_array_get(json_object_get(e, metric_key(METRIC_FLAGGED)), 0);
                if (first && r >= 0)
                        r = buf_printf(&b, " (@%lld %s: %s)",
                                       (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                                       json_string_value(json_object_get(first, "cause")),
                                       json_string_value(json_object_get(first, "evidence")));
        }
        const struct report_eval *ev = &c->eval;
        if (v->eval.on && ev->under_load && r >= 0) {
                if ((r = buf_printf(&b, "; eval under load @%d: ", ev->load_concurrency)) >= 0 &&
                    (r = put_figures(&b, "", &ev->load_fig)) >= 0)
                        r = put_figures(&b, "; alone ", &ev->load_alone);
                if (r >= 0 && ev->load_compared && (r = put_figures(&b, "; the reference alone ", &ev->load_ref)) >= 0)
                        r = buf_printf(&b, " (z = %.2f, p = %.3g)", ev->load_z, ev->load_p);
        }
        return r < 0 ? NULL : strdup(buf_str(&b));
}

char *report_client_note(const struct report_cell *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        size_t k;
        json_t *e;
        int r = 0;
        json_array_foreach(c->bench, k, e) {
                json_t *cpu = json_object_get(e, metric_key(METRIC_CLIENT_CPU));
                if (!json_is_true(json_object_get(cpu, metric_key(METRIC_CPU_BOUND))) || r < 0)
                        continue;
                json_int_t threads = json_integer_value(json_object_get(cpu, metric_key(METRIC_CPU_THREADS)));
                r = buf_printf(&b, "%s @%lld (busiest of %lld loop%s at %.0f%% of a core, send delay p50 %.3f ms)",
                               b.len ? ";" : "the client was the bottleneck",
                               (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                               (long long)MAX(threads, 1), threads > 1 ? "s" : "",
                               100 * json_number_value(json_object_get(cpu, metric_key(METRIC_CPU_LOOP_CORES_MAX))),
                               json_number_value(json_object_get(json_object_get(e, metric_key(METRIC_SEND_DELAY_MS)),
                                                                 metric_stat_key(METRIC_STAT_P50))));
        }
        return r < 0 || b.len == 0 ? NULL : strdup(buf_str(&b));
}

char *report_sla_text(const struct report_view *v, const struct report_cell *c) {
        struct report_sla s;
        if (report_cell_sla(v, c, &s) < 0)
                return NULL;
        const char *unit = s.by_rate ? "req/s" : s.met == 1 ? "stream" : "streams";
        if (s.met == 0)
                return s.failed ? strdup_printf("SLA not met (from %g %s)", s.failed, unit) : strdup("SLA not met");
        if (s.failed)
                return strdup_printf("SLA met up to %g %s (not at %g)", s.met, unit, s.failed);
        return strdup_printf("SLA met up to %g %s (all measured)", s.met, unit);
}

char *report_cell_figure(const struct report_view *v, const struct report_cell *c) {
        struct report_figure f;
        if (report_cell_figure_value(v, c, &f) < 0)
                return NULL;
        if (f.by_bench && f.unit)
                return strdup_printf("%.1f %s @%ld", f.value, f.unit, f.level);
        if (f.by_bench)
                return strdup_printf("%.*s %.4g @%ld", (int)f.metric_len, f.metric, f.value, f.level);
        return f.value < 1 ? strdup_printf("smoke %.3gms", f.value * 1000) : strdup_printf("smoke %.2fs", f.value);
}

char *report_cell_eval_line(const struct report_view *v, const struct report_cell *c) {
        const struct report_eval *e = &c->eval;
        if (!v->eval.on || !e->ran)
                return NULL;
        _cleanup_free_ char *fig = eval_figures_line(&e->fig);
        if (!fig)
                return NULL;
        struct buf b;
        buf_init(&b, 0);
        int r = buf_printf(&b, "eval %s", fig);
        if (r >= 0 && e->is_reference)
                r = buf_puts(&b, "; the reference");
        else if (r >= 0 && e->compared && e->diff.common)
                r = buf_printf(&b, "; %.1f%% answers identical to the reference", 100 * e->diff.agreement);
        if (r >= 0 && e->compared && e->diff.lp_tokens)
                r = buf_printf(&b, ", mean |logprob diff| %.3g", e->diff.lp_mad);
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

static const char *against_str(json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "?";
}

int report_against_lines(json_t *a, char ***lines) {
        const char *old_winner = against_str(a, "old_winner");
        int r = strv_consume(lines, strdup_printf("Checked against journal %s (sweep %lld):", against_str(a, "journal"),
                                                  (long long)json_integer_value(json_object_get(a, "sweep"))));
        if (r >= 0 && json_is_true(json_object_get(a, "stopped")))
                r = strv_consume(lines, strdup_printf("  the old winner %s still passes and is still the best within "
                                                      "noise (the rest of the matrix was not run).",
                                                      old_winner));
        else if (r >= 0)
                r = strv_consume(lines, strdup_printf("  winner: %s -> %s.", old_winner, against_str(a, "new_winner")));
        if (r >= 0)
                r = strv_consume(lines, strdup_printf("  the old winner's verdict: %s -> %s (%s).",
                                                      against_str(a, "old_verdict"), against_str(a, "new_verdict"),
                                                      against_str(a, "change")));
        json_t *sp = json_object_get(a, "speed"), *iv = json_object_get(sp, "interval");
        double change = 100 * json_number_value(json_object_get(sp, "change"));
        if (r >= 0 && json_is_object(sp) && json_array_size(iv) == 2)
                r = strv_consume(lines, strdup_printf("  the old winner's objective: %+.1f%% [%+.1f%%, %+.1f%%] (%s).",
                                                      change, 100 * json_number_value(json_array_get(iv, 0)),
                                                      100 * json_number_value(json_array_get(iv, 1)),
                                                      against_str(sp, "method")));
        else if (r >= 0 && json_is_object(sp))
                r = strv_consume(lines, strdup_printf("  the old winner's objective: %+.1f%% (%s).", change,
                                                      against_str(sp, "method")));
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(a, "provenance_changes"), i, l) {
                if (r < 0)
                        break;
                r = strv_consume(lines, strdup_printf("  changed: %s.", json_string_value(l) ? json_string_value(l) : "?"));
        }
        return r;
}

char *report_against_summary(const struct report_view *v) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (!v->against || report_against_lines(v->against, &lines) < 0)
                return NULL;
        for (char **l = lines; *l; l++) {
                const char *t = *l;
                while (*t == ' ')
                        t++;
                if (buf_printf(&b, "%s%s", l == lines ? "" : " ", t) < 0)
                        return NULL;
        }
        return buf_detach(&b);
}

char *report_search_summary(const struct report_view *v) {
        const struct report_view_search *se = &v->search;
        if (!se->on)
                return NULL;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        buf_printf(&b, "%zu of %zu cells launched", se->launched, v->n_cells);
        char dur[32];
        if (se->budget_launches && se->budget_time)
                buf_printf(&b, " (budget %zu launches, %s)", se->budget_launches, format_duration(se->budget_time, dur));
        else if (se->budget_launches)
                buf_printf(&b, " (budget %zu)", se->budget_launches);
        else if (se->budget_time)
                buf_printf(&b, " (budget %s)", format_duration(se->budget_time, dur));
        /* launches beyond the launched cells: measuring a close cell again, a failed cell
         * once more, and abandoned launches (a run interrupted, a port taken), which the
         * budget counts as well */
        size_t extra = se->launches - se->launched - MIN(se->abandoned, se->launches - se->launched);
        size_t retried = MIN(se->retried, extra), again = extra - retried;
        if (se->launches > se->launched) {
                buf_printf(&b, ", %zu launches (", se->launches);
                if (again)
                        buf_printf(&b, "%zu measuring a close cell again%s", again, retried || se->abandoned ? ", " : "");
                if (retried)
                        buf_printf(&b, "%zu launching a failed cell once more%s", retried, se->abandoned ? ", " : "");
                if (se->abandoned)
                        buf_printf(&b, "%zu abandoned", se->abandoned);
                buf_puts(&b, ")");
        }
        buf_printf(&b, ", %zu pruned, %zu inferred", se->pruned, se->inferred);
        if (se->spent)
                buf_printf(&b, ", %s of launches", format_duration(se->spent, dur));
        char served[32];
        if (se->spent)
                buf_printf(&b, " (%s on %zu failed cells, %s on cells that served)",
                           format_duration(se->spent_failed, dur), se->failed, format_duration(se->spent_served, served));
        if (se->has_named && se->top >= 0 && (size_t)se->top < v->n_cells) {
                struct report_score named, top;
                bool by_bench = report_by_bench(v);
                if (report_cell_score(v, &v->cells[se->named], by_bench, &named) == 0 &&
                    report_cell_score(v, &v->cells[se->top], by_bench, &top) == 0)
                        buf_printf(&b, "; best by the model: %.8s (measured %.4g, estimated %.4g) over %.8s (measured "
                                       "%.4g, estimated %.4g)",
                                   v->cells[se->named].id, report_cell_pooled(v, &v->cells[se->named], by_bench, named.value, NULL),
                                   se->named_estimate, v->cells[se->top].id,
                                   report_cell_pooled(v, &v->cells[se->top], by_bench, top.value, NULL), se->top_estimate);
        }
        if (streq_ptr(se->stop, "no chance left"))
                buf_puts(&b, "; stopped: no cell left has a real chance to beat the best");
        else if (streq_ptr(se->stop, "no candidate left"))
                buf_puts(&b, "; stopped: every cell is settled");
        else if (streq_ptr(se->stop, "nothing can pass"))
                buf_printf(&b, "; stopped: %s", se->stop_why ? se->stop_why : "no cell can pass");
        if (se->next >= 0 && (size_t)se->next < v->n_cells) {
                const struct report_cell *c = &v->cells[se->next];
                buf_puts(&b, streq_ptr(se->stop, "budget") ? "; with more budget it would launch " : "; next: ");
                for (size_t i = 0; i < v->n_axes; i++)
                        buf_printf(&b, "%s%s=%s", i ? " " : "", v->axes[i], c->axis_values[i] ? c->axis_values[i] : "?");
                buf_printf(&b, " (%.8s", c->id);
                if (se->next_why)
                        buf_printf(&b, ": %s", se->next_why);
                buf_puts(&b, ")");
        }
        return buf_detach(&b);
}

char *report_eval_summary(const struct report_view *v) {
        const struct report_view_eval *ve = &v->eval;
        if (!ve->on)
                return NULL;
        struct buf b;
        buf_init(&b, 0);
        int r = buf_printf(&b, "%s, %zu question%s", ve->source ? ve->source : "?", ve->questions,
                           ve->questions == 1 ? "" : "s");
        if (r >= 0 && ve->reference >= 0)
                r = buf_printf(&b, "; reference %.8s (%s%s)", v->cells[ve->reference].id, ve->reference_by,
                               ve->fell_back ? ": the named reference has no eval figures" : "");
        else if (r >= 0)
                r = buf_puts(&b, "; no reference: no cell that passed answered the eval");
        if (r >= 0)
                r = buf_puts(&b, "; a cell is wrong/accuracy when a two-proportion z-test puts it below the reference at 95%");
        if (r >= 0 && ve->rules.min_agreement >= 0)
                r = buf_printf(&b, ", wrong/divergence below %g identical answers", ve->rules.min_agreement);
        if (r >= 0 && ve->rules.max_logprob_diff >= 0)
                r = buf_printf(&b, "%s above a mean |logprob diff| of %g",
                               ve->rules.min_agreement >= 0 ? " or" : ", wrong/divergence", ve->rules.max_logprob_diff);
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

/* "within the measured noise of: ID, ID" after the best line, when repeats say so. */
int report_put_ties(struct buf *out, const struct report_view *v, bool markdown) {
        size_t idx[8];
        size_t n = report_best_ties(v, idx, ELEMENTSOF(idx));
        if (n == 0 || !report_best_within_noise(v))
                return 0;
        int r = buf_puts(out, markdown ? "\nThe best is within the measured noise of " : "  within the measured noise of ");
        for (size_t i = 0; i < MIN(n, ELEMENTSOF(idx)) && r >= 0; i++)
                r = buf_printf(out, "%s%s%s%s", i ? ", " : "", markdown ? "`" : "", v->cells[idx[i]].id, markdown ? "`" : "");
        if (r >= 0 && n > ELEMENTSOF(idx))
                r = buf_printf(out, " and %zu more", n - ELEMENTSOF(idx));
        static const char md_tail[] = ": their ranges over the repeats overlap, so the one closest to the engine's "
                                      "defaults is named; the figures do not tell them apart.\n";
        static const char text_tail[] = ": their ranges over the repeats overlap; named: the closest to the defaults\n";
        if (r >= 0)
                r = buf_puts(out, markdown ? md_tail : text_tail);
        return r;
}


char *report_format_wall(usec_t wall) {
        time_t t = (time_t)(wall / USEC_PER_SEC);
        struct tm tm;
        char b[64];
        if (!localtime_r(&t, &tm) || strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", &tm) == 0)
                return strdup("?");
        return strdup(b);
}


char *report_cell_axes_label(const struct report_view *v, const struct report_cell *c, bool markdown) {
        _cleanup_buf_ struct buf raw;
        struct buf b;
        int r = 0;
        buf_init(&raw, 0);
        buf_init(&b, 0);
        for (size_t i = 0; i < v->n_axes && r >= 0; i++)
                r = buf_printf(&raw, "%s%s=%s", i > 0 ? " " : "", v->axes[i],
                               c->axis_values[i] ? c->axis_values[i] : "?");
        if (r >= 0 && v->n_axes == 0)
                r = buf_puts(&raw, "(base)");
        /* Markdown: the whole label is one code span, `moe=flashinfer_cutlass gemm=auto` */
        if (r >= 0)
                r = markdown ? report_code_span(&b, buf_str(&raw), 0, false) : report_escape_text(&b, buf_str(&raw), 0);
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}


int report_put_summary(struct buf *out, const struct report_view *v) {
        size_t count[_VERDICT_MAX] = {0}, counted = 0;
        int r = buf_printf(out, "%zu cell%s:", v->n_cells, v->n_cells == 1 ? "" : "s");
        bool first = true;
        report_count_verdicts(v, count);
        for (int k = 0; k < _VERDICT_MAX && r >= 0; k++) {
                counted += count[k];
                if (!count[k])
                        continue;
                r = buf_printf(out, "%s %zu %s", first ? "" : ",", count[k], verdict_to_string((enum verdict)k));
                first = false;
        }
        if (r >= 0 && counted < v->n_cells)
                r = buf_printf(out, "%s %zu not run", first ? "" : ",", v->n_cells - counted);
        else if (r >= 0 && v->n_cells == 0)
                r = buf_puts(out, " none");
        return r;
}



int report_escape_text(struct buf *out, const char *s, size_t max_chars) {
        return text_escape(out, s, max_chars, TEXT_TERMINAL);
}

int report_escape_markdown(struct buf *out, const char *s, size_t max_chars) {
        return text_escape(out, s, max_chars, TEXT_MARKDOWN);
}

int report_code_span(struct buf *out, const char *s, size_t max_chars, bool in_table) {
        if (!s || !*s)
                return 0;
        struct buf t;
        buf_init(&t, 0);
        int r = text_escape(&t, s, max_chars, TEXT_TERMINAL);
        size_t run = 0, longest = 0;
        for (size_t i = 0; r >= 0 && i < t.len; i++) {
                run = t.data[i] == '`' ? run + 1 : 0;
                longest = MAX(longest, run);
        }
        const char *e = buf_str(&t);
        bool pad = e[0] == '`' || e[0] == ' ' || (t.len && (e[t.len - 1] == '`' || e[t.len - 1] == ' '));
        for (size_t k = 0; r >= 0 && k <= longest; k++)
                r = buf_puts(out, "`");
        if (r >= 0 && pad)
                r = buf_puts(out, " ");
        for (size_t i = 0; r >= 0 && i < t.len; i++)
                r = in_table && e[i] == '|' ? buf_puts(out, "\\|") : buf_append(out, e + i, 1);
        if (r >= 0 && pad)
                r = buf_puts(out, " ");
        for (size_t k = 0; r >= 0 && k <= longest; k++)
                r = buf_puts(out, "`");
        buf_release(&t);
        return r;
}


size_t report_id_width(const struct report_view *v) {
        size_t w = 8;
        for (size_t i = 0; i < v->n_cells; i++)
                for (size_t k = i + 1; k < v->n_cells; k++) {
                        size_t common = 0;
                        while (v->cells[i].id[common] && v->cells[i].id[common] == v->cells[k].id[common])
                                common++;
                        w = MAX(w, MIN(common + 1, sizeof(v->cells[i].id) - 1));
                }
        return w;
}
