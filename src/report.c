/* report.c -- the view of a journal, the best cell, and the text, JSON and Markdown reports. */
#include "report.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "objective.h"
#include "secrets.h"
#include "text.h"

void report_view_free(struct report_view *v) {
        if (!v)
                return;
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                for (size_t k = 0; c->axis_values && k < v->n_axes; k++)
                        free(c->axis_values[k]);
                free(c->axis_values);
                strv_free(c->argv);
                strv_free(c->command);
                strv_free(c->env);
                free(c->cause);
                free(c->evidence);
                free(c->log_path);
                for (size_t k = 0; k < c->n_checks; k++) {
                        struct report_check *ch = &c->checks[k];
                        free(ch->name);
                        free(ch->cause);
                        free(ch->evidence);
                        free(ch->output);
                        free(ch->reasoning);
                        free(ch->finish_reason);
                }
                free(c->checks);
                json_decref(c->bench);
                for (size_t k = 0; k < c->eval.n_answers; k++) {
                        struct report_eval_answer *e = &c->eval.answers[k];
                        free(e->id);
                        free(e->key);
                        free(e->question);
                        free(e->cause);
                        free(e->evidence);
                        free(e->output);
                        free(e->finish_reason);
                        free(e->logprobs);
                }
                free(c->eval.answers);
                json_decref(c->prediction);
        }
        free(v->cells);
        strv_free(v->search.flags);
        free(v->search.order);
        free(v->search.best_so_far);
        free(v->search.next_why);
        json_decref(v->eval.settings);
        free(v->eval.source);
        free(v->eval.named);
        strv_free(v->axes);
        free(v->journal_path);
        free(v->sweep_how);
        free(v->version);
        free(v->matrix_path);
        free(v->matrix_text);
        free(v->engine);
        free(v->model);
        free(v->objective);
        free(v->host);
        free(v->workdir);
        free(v->cwd);
        json_decref(v->host_json);
        secrets_values_release(&v->secrets);
        free(v);
}

/* *s with the values masked, in place. */
static int mask_string(const struct secrets_values *sv, char **s) {
        if (!*s)
                return 0;
        int r;
        char *m = secrets_values_mask(sv, *s, &r);
        if (m) {
                free(*s);
                *s = m;
        }
        return r;
}

static int mask_strv(const struct secrets_values *sv, char **v) {
        int r = 0;
        for (size_t i = 0; v && v[i] && r >= 0; i++)
                r = mask_string(sv, &v[i]);
        return r;
}

int report_view_mask_secrets(struct report_view *v) {
        struct secrets_values sv = {0};
        int r = 0;
        for (size_t i = 0; i < v->secrets.n && r >= 0; i++)
                r = secrets_values_add_text(&sv, v->secrets.v[i]);
        for (size_t i = 0; i < v->n_cells && r >= 0; i++) {
                const struct report_cell *c = &v->cells[i];
                if ((r = secrets_values_add_argv(&sv, c->argv)) >= 0 &&
                    (r = secrets_values_add_argv(&sv, c->command)) >= 0)
                        r = secrets_values_add_env(&sv, c->env);
        }
        if (r >= 0)
                r = mask_string(&sv, &v->matrix_text);
        for (size_t i = 0; i < v->n_cells && r >= 0; i++) {
                struct report_cell *c = &v->cells[i];
                if ((r = mask_string(&sv, &c->evidence)) < 0 || (r = mask_strv(&sv, c->argv)) < 0 ||
                    (r = mask_strv(&sv, c->command)) < 0 || (r = mask_strv(&sv, c->env)) < 0)
                        break;
                for (size_t k = 0; k < c->n_checks && r >= 0; k++) {
                        struct report_check *ch = &c->checks[k];
                        if ((r = mask_string(&sv, &ch->evidence)) >= 0 && (r = mask_string(&sv, &ch->output)) >= 0)
                                r = mask_string(&sv, &ch->reasoning);
                }
                for (size_t k = 0; k < c->eval.n_answers && r >= 0; k++) {
                        struct report_eval_answer *e = &c->eval.answers[k];
                        if ((r = mask_string(&sv, &e->evidence)) >= 0 && (r = mask_string(&sv, &e->output)) >= 0)
                                r = mask_string(&sv, &e->question);
                }
        }
        secrets_values_release(&v->secrets);
        v->secrets = sv; /* what was hidden, for text from outside the view */
        return r;
}

/* ---- the eval's gate ---- */

static struct eval_answer *answers_of(const struct report_eval *e) {
        struct eval_answer *a = calloc(e->n_answers ? e->n_answers : 1, sizeof(*a));
        for (size_t i = 0; a && i < e->n_answers; i++)
                a[i] = (struct eval_answer){.verdict = e->answers[i].verdict,
                                            .output = e->answers[i].output,
                                            .logprobs = e->answers[i].logprobs,
                                            .n_logprobs = e->answers[i].n_logprobs};
        return a;
}

static bool eval_eligible(const struct report_cell *c) {
        return !c->excluded && c->has_attempt && c->verdict == VERDICT_PASS && c->eval.ran;
}

int report_view_apply_eval(struct report_view *v) {
        struct report_view_eval *ve = &v->eval;
        ve->reference = -1;
        ve->gated = 0;
        if (!ve->on || v->n_cells == 0)
                return 0;
        _cleanup_free_ struct eval_cell *ec = calloc(v->n_cells, sizeof(*ec));
        if (!ec)
                return -ENOMEM;
        int named = -1;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                ec[i] = (struct eval_cell){.eligible = eval_eligible(c), .n = c->eval.fig.n,
                                           .correct = c->eval.fig.correct, .distance = c->distance};
                if (ve->named && strcmp(c->id, ve->named) == 0)
                        named = (int)i;
        }
        bool fell_back = false;
        int ref = eval_pick_reference(ec, v->n_cells, named, &fell_back);
        ve->fell_back = ve->named && (fell_back || named < 0);
        ve->reference = ref;
        if (ref < 0)
                return 0;
        const char *by = json_string_value(json_object_get(ve->settings, "reference_by"));
        ve->reference_by = ref == named ? (streq_ptr(by, "reference") ? "reference" : "baseline") : "most accurate";
        struct report_cell *rc = &v->cells[ref];
        rc->eval.is_reference = true;
        _cleanup_free_ struct eval_answer *ra = answers_of(&rc->eval);
        if (!ra)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                if ((int)i == ref || !ec[i].eligible)
                        continue;
                _cleanup_free_ struct eval_answer *a = answers_of(&c->eval);
                if (!a)
                        return -ENOMEM;
                c->eval.compared = true;
                eval_two_proportion(c->eval.fig.correct, c->eval.fig.n, rc->eval.fig.correct, rc->eval.fig.n, &c->eval.z,
                                    &c->eval.p);
                eval_diff(a, ra, MIN(c->eval.n_answers, rc->eval.n_answers), &c->eval.diff);
                c->eval.gate = eval_gate_decide(&ve->rules, &c->eval.fig, &rc->eval.fig, &c->eval.diff);
                if (c->eval.gate == EVAL_GATE_NONE)
                        continue;
                const char *first = c->eval.diff.first != SIZE_MAX ? c->eval.answers[c->eval.diff.first].id : NULL;
                char *ev = eval_gate_evidence(c->eval.gate, &ve->rules, &c->eval.fig, &rc->eval.fig, &c->eval.diff, rc->id,
                                              first);
                char *cause = strdup(eval_gate_cause(c->eval.gate));
                if (!ev || !cause) {
                        free(ev);
                        free(cause);
                        return -ENOMEM;
                }
                free(c->cause);
                free(c->evidence);
                c->verdict = VERDICT_WRONG;
                c->cause = cause;
                c->evidence = ev;
                ve->gated++;
        }
        return 0;
}

const char *report_cell_verdict(const struct report_cell *c) {
        if (c->excluded)
                return "skipped";
        if (!c->has_attempt)
                return "not run";
        return verdict_to_string(c->verdict);
}

const char *report_cell_cause(const struct report_cell *c) {
        if (c->excluded)
                return "excluded";
        return c->has_attempt ? c->cause : NULL;
}

static bool cell_passed(const struct report_cell *c) {
        return !c->excluded && c->has_attempt && c->verdict == VERDICT_PASS;
}

/* ---- objective and best cell ---- */

/* The view's objective as the reports read it: none stands for the default, and a
 * metric no bench entry can hold (empty, or 128 bytes and more) ranks by the smoke suite. */
static void view_objective(const struct report_view *v, struct objective *o) {
        objective_parse(v->objective && *v->objective ? v->objective : OBJECTIVE_DEFAULT, o);
        if (!o->smoke && (o->metric_len == 0 || o->metric_len >= 128))
                *o = (struct objective){.smoke = true, .metric = o->metric};
}

static bool metric_value(json_t *entry, const struct objective *o, double *ret) {
        return objective_entry_value(entry, o->metric, o->metric_len, ret);
}

/* The bench figure of a cell: from the entry at the objective's concurrency, or the best
 * over all levels when the objective names none. *ret_level is that entry's concurrency. */
static bool bench_value_entry(const struct report_cell *c, const struct objective *o, double *ret, long *ret_level,
                              json_t **ret_entry) {
        size_t i;
        json_t *e;
        bool found = false;
        if (o->smoke || !c->bench)
                return false;
        json_array_foreach(c->bench, i, e) {
                long level = (long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                double x;
                if (o->concurrency && level != o->concurrency)
                        continue;
                /* A level where nothing completed measured nothing, and a throughput of 0
                 * is no figure to rank by: neither can make a cell best. */
                if (json_integer_value(json_object_get(e, metric_key(METRIC_COMPLETED))) <= 0)
                        continue;
                if (!metric_value(e, o, &x) || (o->higher_better && x <= 0))
                        continue;
                /* an SLA objective: a level that breaks a constraint is not eligible */
                if (!objective_meets(o, e))
                        continue;
                if (!found || (o->higher_better ? x > *ret : x < *ret)) {
                        *ret = x;
                        *ret_level = level;
                        if (ret_entry)
                                *ret_entry = e;
                        found = true;
                }
        }
        return found;
}

static bool bench_value(const struct report_cell *c, const struct objective *o, double *ret, long *ret_level) {
        return bench_value_entry(c, o, ret, ret_level, NULL);
}

/* The objective's [min, max] over the repeats of a level entry ("spread"). */
static bool entry_spread(json_t *e, const struct objective *o, double *lo, double *hi) {
        char key[128];
        if (o->metric_len >= sizeof(key))
                return false;
        memcpy(key, o->metric, o->metric_len);
        key[o->metric_len] = 0;
        json_t *r = json_object_get(json_object_get(e, metric_key(METRIC_SPREAD)), key);
        if (!json_is_array(r) || json_array_size(r) != 2 || !json_is_number(json_array_get(r, 0)) ||
            !json_is_number(json_array_get(r, 1)))
                return false;
        *lo = json_number_value(json_array_get(r, 0));
        *hi = json_number_value(json_array_get(r, 1));
        return true;
}

static bool smoke_seconds(const struct report_cell *c, double *ret) {
        if (c->n_checks == 0)
                return false;
        usec_t sum = 0;
        for (size_t i = 0; i < c->n_checks; i++)
                sum += c->checks[i].latency;
        *ret = (double)sum / (double)USEC_PER_SEC;
        return true;
}

int report_cell_score(const struct report_view *v, const struct report_cell *c, bool by_bench, struct report_score *ret) {
        struct objective o;
        double x;
        long level = 0;
        if (!cell_passed(c))
                return -ENODATA;
        view_objective(v, &o);
        if (by_bench) {
                json_t *e = NULL;
                if (!bench_value_entry(c, &o, &x, &level, &e))
                        return -ENODATA;
                *ret = (struct report_score){.by_bench = true, .higher_better = o.higher_better, .value = x};
                ret->has_spread = entry_spread(e, &o, &ret->lo, &ret->hi);
                return 0;
        }
        /* A cell that was benchmarked is ranked by its bench or not at all: its smoke time
         * does not stand in for figures that came out empty. */
        if ((!o.smoke && json_array_size(c->bench) > 0) || !smoke_seconds(c, &x))
                return -ENODATA;
        *ret = (struct report_score){.by_bench = false, .higher_better = false, .value = x};
        return 0;
}

/* Whether s ties with the top score top; *ret_noise says when only the ranges make it so. */
static bool score_ties(const struct report_score *top, const struct report_score *s, bool *ret_noise) {
        double margin = 0.01 * fabs(top->value);
        bool close = top->higher_better ? s->value >= top->value - margin : s->value <= top->value + margin;
        bool overlap = top->has_spread && s->has_spread && s->lo <= top->hi && top->lo <= s->hi;
        if (ret_noise)
                *ret_noise = !close && overlap;
        return close || overlap;
}

/* The top score among passing cells (by bench when any cell has a bench figure). */
static bool top_score(const struct report_view *v, struct report_score *ret, bool *ret_by_bench) {
        struct report_score s;
        bool by_bench = false, have = false;
        for (size_t i = 0; i < v->n_cells; i++)
                if (report_cell_score(v, &v->cells[i], true, &s) == 0)
                        by_bench = true;
        for (size_t i = 0; i < v->n_cells; i++) {
                if (report_cell_score(v, &v->cells[i], by_bench, &s) < 0)
                        continue;
                if (!have || (s.higher_better ? s.value > ret->value : s.value < ret->value))
                        *ret = s;
                have = true;
        }
        *ret_by_bench = by_bench;
        return have;
}

bool report_by_bench(const struct report_view *v) {
        struct report_score top;
        bool by_bench = false;
        top_score(v, &top, &by_bench);
        return by_bench;
}

size_t report_best_ties(const struct report_view *v, size_t *ret, size_t max) {
        struct report_score top, s;
        bool by_bench;
        int best = report_best_index(v, NULL);
        if (best < 0 || !top_score(v, &top, &by_bench))
                return 0;
        size_t n = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                if ((int)i == best || report_cell_score(v, &v->cells[i], by_bench, &s) < 0 || !score_ties(&top, &s, NULL))
                        continue;
                if (n < max)
                        ret[n] = i;
                n++;
        }
        return n;
}

bool report_best_within_noise(const struct report_view *v) {
        struct report_score top, s;
        bool by_bench, noise = false, any = false;
        int best = report_best_index(v, NULL);
        if (best < 0 || !top_score(v, &top, &by_bench))
                return false;
        for (size_t i = 0; i < v->n_cells; i++) {
                bool n;
                if ((int)i == best || report_cell_score(v, &v->cells[i], by_bench, &s) < 0 || !score_ties(&top, &s, &n))
                        continue;
                any = true;
                noise |= n || (top.has_spread && s.has_spread);
        }
        return any && noise;
}

int report_cell_sla(const struct report_view *v, const struct report_cell *c, struct report_sla *ret) {
        struct objective o;
        view_objective(v, &o);
        if (o.smoke || o.n_limits == 0 || !json_array_size(c->bench))
                return -ENODATA;
        struct report_sla sla = {0};
        size_t i;
        json_t *e;
        json_array_foreach(c->bench, i, e)
                sla.by_rate |= json_number_value(json_object_get(e, metric_key(METRIC_RATE))) > 0;
        json_array_foreach(c->bench, i, e) {
                double x = sla.by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                       : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                if (objective_meets(&o, e) && json_integer_value(json_object_get(e, metric_key(METRIC_COMPLETED))) > 0)
                        sla.met = MAX(sla.met, x);
        }
        json_array_foreach(c->bench, i, e) {
                double x = sla.by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                       : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                bool met = objective_meets(&o, e) && json_integer_value(json_object_get(e, metric_key(METRIC_COMPLETED))) > 0;
                if (!met && x > sla.met && (sla.failed == 0 || x < sla.failed))
                        sla.failed = x;
        }
        *ret = sla;
        return 0;
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

int report_best_index(const struct report_view *v, struct report_score *ret_score) {
        struct report_score s, top = {0};
        bool by_bench = false, any_pass = false;
        for (size_t i = 0; i < v->n_cells; i++)
                any_pass |= cell_passed(&v->cells[i]);
        if (!any_pass)
                return -ENOENT;
        bool have_top = top_score(v, &top, &by_bench);
        /* Everything within 1% of the top figure ties, and so does a figure whose range over
         * the repeats overlaps the top's: the difference is noise, and a configuration closer
         * to the engine's defaults is the safer one to deploy. */
        int best = -1;
        struct report_score best_score = {.value = NAN};
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                if (!cell_passed(c))
                        continue;
                if (have_top) {
                        if (report_cell_score(v, c, by_bench, &s) < 0)
                                continue;
                        if (!score_ties(&top, &s, NULL))
                                continue;
                } else if (report_cell_score(v, c, false, &s) < 0) {
                        continue; /* benchmarked, and no figure came of it: not a winner */
                }
                if (best < 0 || c->distance < v->cells[best].distance) {
                        best = (int)i;
                        if (have_top)
                                best_score = s;
                }
        }
        if (best < 0)
                return -ENOENT;
        if (ret_score)
                *ret_score = best_score;
        return best;
}

const char *report_best(const struct report_view *v) {
        int i = report_best_index(v, NULL);
        return i >= 0 ? v->cells[i].id : NULL;
}

size_t report_cells(const struct report_view *v) {
        return v->n_cells;
}

size_t report_count_verdicts(const struct report_view *v, size_t counts[static _VERDICT_MAX]) {
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                if (c->excluded)
                        counts[VERDICT_SKIPPED]++;
                else if (c->has_attempt && c->verdict >= 0 && c->verdict < _VERDICT_MAX)
                        counts[c->verdict]++;
        }
        return counts[VERDICT_PASS];
}

char *report_cell_figure(const struct report_view *v, const struct report_cell *c) {
        struct objective o;
        double x;
        long level = 0;
        if (!cell_passed(c))
                return NULL;
        view_objective(v, &o);
        if (bench_value(c, &o, &x, &level)) {
                const char *unit = o.info ? o.info->figure : NULL;
                if (unit)
                        return strdup_printf("%.1f %s @%ld", x, unit, level);
                return strdup_printf("%.*s %.4g @%ld", (int)o.metric_len, o.metric, x, level);
        }
        if (smoke_seconds(c, &x))
                return x < 1 ? strdup_printf("smoke %.3gms", x * 1000) : strdup_printf("smoke %.2fs", x);
        return NULL;
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
        buf_printf(&b, ", %zu pruned, %zu inferred", se->pruned, se->inferred);
        if (se->spent)
                buf_printf(&b, ", %s of launches", format_duration(se->spent, dur));
        if (streq_ptr(se->stop, "no chance left"))
                buf_puts(&b, "; stopped: no cell left has a real chance to beat the best");
        else if (streq_ptr(se->stop, "no candidate left"))
                buf_puts(&b, "; stopped: every cell is settled");
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
static int put_ties(struct buf *out, const struct report_view *v, bool markdown) {
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

/* ---- escaping ---- */


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

/* ---- text ---- */

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

static const char *verdict_color(const struct report_cell *c) {
        if (c->excluded || !c->has_attempt)
                return "\033[2m";
        switch (c->verdict) {
        case VERDICT_PASS:
                return "\033[32m";
        case VERDICT_TIMEOUT:
                return "\033[33m";
        case VERDICT_SKIPPED:
                return "\033[2m";
        default:
                return "\033[31m";
        }
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

static char *format_wall(usec_t wall) {
        time_t t = (time_t)(wall / USEC_PER_SEC);
        struct tm tm;
        char b[64];
        if (!localtime_r(&t, &tm) || strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", &tm) == 0)
                return strdup("?");
        return strdup(b);
}

/* "moe=a gemm=b" with names escaped for the medium. */
static char *cell_axes_label(const struct report_view *v, const struct report_cell *c, bool markdown) {
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

/* "3 pass, 1 garbage, 1 not run" in the vocabulary's order. */
static int put_summary(struct buf *out, const struct report_view *v) {
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

int report_text(const struct report_view *v, const struct report_text_options *o, struct buf *out) {
        size_t width = o && o->width ? o->width : 120;
        bool color = o && o->color;
        enum { AXIS_MAX = 24, RESULT_MAX = 28 };
        size_t ID_W = report_id_width(v);
        _cleanup_free_ size_t *axis_w = calloc(v->n_axes + 1, sizeof(size_t));
        _cleanup_free_ char *started = format_wall(v->sweep_started_wall);
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
            (r = buf_printf(out, "\nengine %s, model %s, objective %s, matrix %s\n\n", engine, model, objective, mpath)) < 0)
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
                if ((r = put_padded(out, verdict, verdict_w + 2, color ? verdict_color(c) : NULL)) < 0)
                        return r;
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                _cleanup_free_ char *eval_line = cell_passed(c) ? report_cell_eval_line(v, c) : NULL;
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
                _cleanup_free_ char *label = cell_axes_label(v, c, false), *fig = report_cell_figure(v, c);
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
                r = put_ties(out, v, false);
        _cleanup_free_ char *eval = report_eval_summary(v);
        _cleanup_free_ char *eval_shown = eval ? escaped_text(eval, 0) : NULL;
        if (r >= 0 && eval_shown)
                r = buf_printf(out, "eval: %s\n", eval_shown);
        _cleanup_free_ char *search = report_search_summary(v);
        _cleanup_free_ char *search_shown = search ? escaped_text(search, 0) : NULL;
        if (r >= 0 && search_shown)
                r = buf_printf(out, "search: %s\n", search_shown);
        if (r < 0 || (r = put_summary(out, v)) < 0)
                return r;
        return buf_puts(out, "\n");
}

/* ---- JSON ---- */

/* A JSON string from any bytes: invalid UTF-8 becomes U+FFFD (jansson only takes UTF-8). */
static json_t *json_string_lossy(const char *s) {
        if (!s)
                return json_null();
        json_t *j = json_string(s);
        if (j)
                return j;
        struct buf b;
        buf_init(&b, 0);
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                uint32_t cp;
                size_t n = utf8_decode(p, SIZE_MAX, &cp, NULL);
                if (n == 0) {
                        buf_puts(&b, "\xef\xbf\xbd");
                        n = 1;
                } else
                        buf_append(&b, p, n);
                p += n;
        }
        if (b.truncated) {
                buf_release(&b);
                return NULL;
        }
        j = json_string(buf_str(&b));
        buf_release(&b);
        return j;
}

static json_t *json_seconds(usec_t u) {
        return json_real((double)u / (double)USEC_PER_SEC);
}

static json_t *json_strv_masked(char *const *v, bool env) {
        _cleanup_strv_free_ char **m = NULL;
        if ((env ? secrets_mask_env(v, &m) : secrets_mask_argv(v, &m)) < 0)
                return NULL;
        json_t *o = env ? json_object() : json_array();
        if (!o)
                return NULL;
        for (size_t i = 0; m && m[i]; i++) {
                int r;
                if (env) {
                        char *eq = strchr(m[i], '=');
                        if (!eq)
                                continue;
                        *eq = 0;
                        r = json_object_set_new(o, m[i], json_string_lossy(eq + 1));
                } else
                        r = json_array_append_new(o, json_string_lossy(m[i]));
                if (r < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}

/* Builds an object from key/value pairs, failing as a whole when a value is NULL. */
static int set_all(json_t *o, const char *const *keys, json_t **vals, size_t n) {
        int r = 0;
        for (size_t i = 0; i < n; i++) {
                if (r < 0 || !vals[i] || json_object_set_new(o, keys[i], vals[i]) < 0) {
                        json_decref(vals[i]);
                        r = -ENOMEM;
                }
        }
        return r;
}

static json_t *check_json(const struct report_check *k) {
        static const char *const keys[] = {"name", "verdict", "cause", "evidence", "output", "reasoning",
                                            "finish_reason", "http_status", "latency_s", "ttft_s", "streamed"};
        json_t *vals[] = {
                json_string_lossy(k->name ? k->name : ""),
                json_string(verdict_to_string(k->verdict)),
                json_string_lossy(k->cause),
                json_string_lossy(k->evidence),
                json_string_lossy(k->output),
                json_string_lossy(k->reasoning),
                json_string_lossy(k->finish_reason),
                k->http_status ? json_integer(k->http_status) : json_null(),
                json_seconds(k->latency),
                k->streamed && k->ttft ? json_seconds(k->ttft) : json_null(),
                json_boolean(k->streamed),
        };
        _Static_assert(ELEMENTSOF(keys) == ELEMENTSOF(vals), "keys and values");
        json_t *o = json_object();
        if (!o || set_all(o, keys, vals, ELEMENTSOF(keys)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* A number, or null where JSON has none (NaN, inf). */
static json_t *json_number_or_null(double x) {
        return isfinite(x) ? json_real(x) : json_null();
}

static json_t *eval_answer_json(const struct report_eval_answer *a) {
        json_t *o = json_object();
        if (!o)
                return NULL;
        int e = 0;
        e |= json_object_set_new(o, "id", json_string_lossy(a->id));
        e |= json_object_set_new(o, "verdict", json_string(verdict_to_string(a->verdict)));
        e |= json_object_set_new(o, "cause", json_string_lossy(a->cause));
        e |= json_object_set_new(o, "evidence", json_string_lossy(a->evidence));
        e |= json_object_set_new(o, "output", json_string_lossy(a->output));
        e |= json_object_set_new(o, "latency_s", json_seconds(a->latency));
        if (e) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* A cell's "eval": its figures, its questions, and the comparison with the reference. */
static json_t *cell_eval_json(const struct report_view *v, const struct report_cell *c) {
        const struct report_eval *e = &c->eval;
        if (!v->eval.on || !e->ran)
                return json_null();
        _cleanup_json_ json_t *o = json_object(), *by = json_object(), *qs = json_array();
        if (!o || !by || !qs)
                return NULL;
        int err = 0;
        for (int k = 0; k < _VERDICT_MAX; k++)
                if (e->fig.by_verdict[k])
                        err |= json_object_set_new(by, verdict_to_string((enum verdict)k),
                                                   json_integer((json_int_t)e->fig.by_verdict[k]));
        for (size_t i = 0; i < e->n_answers; i++)
                err |= json_array_append_new(qs, eval_answer_json(&e->answers[i]));
        err |= json_object_set_new(o, "n", json_integer((json_int_t)e->fig.n));
        err |= json_object_set_new(o, "correct", json_integer((json_int_t)e->fig.correct));
        err |= json_object_set_new(o, "accuracy", json_number_or_null(e->fig.accuracy));
        err |= json_object_set_new(o, "ci95", json_pack("[o, o]", json_number_or_null(e->fig.ci_low),
                                                         json_number_or_null(e->fig.ci_high)));
        err |= json_object_set_new(o, "by_verdict", json_incref(by));
        err |= json_object_set_new(o, "reference", json_boolean(e->is_reference));
        if (e->compared) {
                const struct eval_diff *d = &e->diff;
                json_t *first = json_null();
                if (d->first != SIZE_MAX && d->first < e->n_answers) {
                        const struct report_eval_answer *a = &e->answers[d->first];
                        const struct report_cell *rc = &v->cells[v->eval.reference];
                        const char *ro = d->first < rc->eval.n_answers ? rc->eval.answers[d->first].output : NULL;
                        first = json_pack("{s:o, s:o, s:o, s:o, s:I}", "id", json_string_lossy(a->id), "question",
                                          json_string_lossy(a->question), "output", json_string_lossy(a->output),
                                          "reference_output", json_string_lossy(ro), "offset", (json_int_t)d->first_offset);
                }
                json_t *vs = json_pack("{s:o, s:o, s:b, s:I, s:I, s:o, s:o, s:I, s:o}", "z", json_number_or_null(e->z), "p",
                                       json_number_or_null(e->p), "below",
                                       eval_significantly_below(e->fig.correct, e->fig.n,
                                                                v->cells[v->eval.reference].eval.fig.correct,
                                                                v->cells[v->eval.reference].eval.fig.n),
                                       "compared", (json_int_t)d->common, "identical", (json_int_t)d->identical,
                                       "agreement", json_number_or_null(d->agreement), "logprob_mad",
                                       json_number_or_null(d->lp_mad), "logprob_tokens", (json_int_t)d->lp_tokens,
                                       "first_divergence", first ? first : json_null());
                err |= json_object_set_new(o, "vs_reference", vs);
        } else
                err |= json_object_set_new(o, "vs_reference", json_null());
        err |= json_object_set_new(o, "gate", e->gate ? json_string(eval_gate_cause(e->gate)) : json_null());
        err |= json_object_set_new(o, "journal_verdict",
                                   e->gate ? json_string(verdict_to_string(e->journal_verdict)) : json_null());
        err |= json_object_set_new(o, "answers", json_incref(qs));
        if (err)
                return NULL;
        return json_incref(o);
}

/* The view's "eval": what was asked and which cell is the reference. */
static json_t *view_eval_json(const struct report_view *v) {
        const struct report_view_eval *ve = &v->eval;
        if (!ve->on)
                return json_null();
        json_t *o = json_deep_copy(ve->settings);
        if (!o)
                return NULL;
        int err = 0;
        err |= json_object_set_new(o, "named_reference", json_string_lossy(ve->named));
        err |= json_object_set_new(o, "reference", ve->reference >= 0 ? json_string(v->cells[ve->reference].id) : json_null());
        err |= json_object_set_new(o, "reference_by", ve->reference >= 0 ? json_string(ve->reference_by) : json_null());
        err |= json_object_set_new(o, "fell_back", json_boolean(ve->fell_back));
        err |= json_object_set_new(o, "test", json_string("two-proportion z-test, pooled, two-sided, alpha 0.05"));
        err |= json_object_set_new(o, "interval", json_string("Wilson score, 95%"));
        err |= json_object_set_new(o, "gated", json_integer((json_int_t)ve->gated));
        if (err) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* {"by": "concurrency"|"rate", "met": N or null, "failed_at": N or null}, or null. */
static json_t *sla_json(const struct report_view *v, const struct report_cell *c) {
        struct report_sla s;
        if (report_cell_sla(v, c, &s) < 0)
                return json_null();
        return json_pack("{s:s, s:o, s:o}", "by", s.by_rate ? "rate" : "concurrency", "met",
                         s.met > 0 ? json_real(s.met) : json_null(), "failed_at",
                         s.failed > 0 ? json_real(s.failed) : json_null());
}

static json_t *cell_json(const struct report_view *v, const struct report_cell *c) {
        _cleanup_json_ json_t *axes = json_object(), *checks = json_array(), *phases = json_object();
        if (!axes || !checks || !phases)
                return NULL;
        for (size_t i = 0; i < v->n_axes; i++)
                if (json_object_set_new(axes, v->axes[i], json_string_lossy(c->axis_values[i])) < 0)
                        return NULL;
        for (size_t i = 0; i < c->n_checks; i++)
                if (json_array_append_new(checks, check_json(&c->checks[i])) < 0)
                        return NULL;
        for (int p = 0; c->has_attempt && p < _PHASE_MAX; p++)
                if (json_object_set_new(phases, phase_to_string((enum phase)p), json_seconds(c->phase[p])) < 0)
                        return NULL;
        const char *verdict = c->excluded ? "skipped" : c->has_attempt ? verdict_to_string(c->verdict) : NULL;
        static const char *const keys[] = {"id",     "axes",      "command",  "env",         "verdict",
                                            "cause",  "evidence",  "log",      "ready_s",     "checks",
                                            "bench",  "state",     "distance", "excluded",    "phases_s",
                                            "exit_code", "exit_signal", "port", "peak_gpu_mem_mib", "attempt_sweep",
                                            "sla", "eval", "prediction"};
        json_t *vals[] = {
                json_string(c->id),
                json_incref(axes),
                json_strv_masked(c->command, false),
                json_strv_masked(c->env, true),
                verdict ? json_string(verdict) : json_null(),
                json_string_lossy(report_cell_cause(c)),
                json_string_lossy(c->has_attempt ? c->evidence : NULL),
                json_string_lossy(c->log_path),
                c->ready_after ? json_seconds(c->ready_after) : json_null(),
                json_incref(checks),
                c->bench ? json_deep_copy(c->bench) : json_null(),
                json_string(c->excluded ? "excluded" : c->has_attempt ? "settled" : "not run"),
                json_integer(c->distance),
                json_boolean(c->excluded),
                json_incref(phases),
                c->has_attempt && c->exit_code >= 0 ? json_integer(c->exit_code) : json_null(),
                c->has_attempt && c->exit_signal ? json_integer(c->exit_signal) : json_null(),
                c->port ? json_integer(c->port) : json_null(),
                c->peak_gpu_mem_mib ? json_integer((json_int_t)c->peak_gpu_mem_mib) : json_null(),
                c->has_attempt ? json_integer(c->attempt_sweep_id) : json_null(),
                sla_json(v, c),
                cell_eval_json(v, c),
                c->prediction ? json_deep_copy(c->prediction) : json_null(),
        };
        _Static_assert(ELEMENTSOF(keys) == ELEMENTSOF(vals), "keys and values");
        json_t *o = json_object();
        if (!o || set_all(o, keys, vals, ELEMENTSOF(keys)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static json_t *ties_json(const struct report_view *v) {
        size_t n = report_best_ties(v, NULL, 0);
        _cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(*idx));
        json_t *a = json_array();
        if (!idx || !a) {
                json_decref(a);
                return NULL;
        }
        report_best_ties(v, idx, n);
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(a, json_string(v->cells[idx[i]].id)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/* The search's figures (null for another strategy): counts, budget, why it stopped, what
 * it would launch next, and the best figure after each launch. */
static json_t *view_search_json(const struct report_view *v) {
        const struct report_view_search *se = &v->search;
        if (!se->on)
                return json_null();
        json_t *traj = json_array();
        for (size_t i = 0; traj && i < se->launched; i++) {
                const struct report_cell *c = &v->cells[se->order[i]];
                if (json_array_append_new(traj, json_pack("{s:I,s:s,s:s,s:o}", "launch", (json_int_t)(i + 1), "cell", c->id,
                                                          "verdict", report_cell_verdict(c), "best",
                                                          isnan(se->best_so_far[i]) ? json_null()
                                                                                    : json_real(se->best_so_far[i]))) < 0) {
                        json_decref(traj);
                        traj = NULL;
                }
        }
        json_t *budget = json_object();
        if (budget && se->budget_launches)
                json_object_set_new(budget, "launches", json_integer((json_int_t)se->budget_launches));
        if (budget && se->budget_time)
                json_object_set_new(budget, "time_s", json_real((double)se->budget_time / USEC_PER_SEC));
        bool has_next = se->next >= 0 && (size_t)se->next < v->n_cells;
        return json_pack("{s:I,s:I,s:I,s:o,s:f,s:s?,s:s?,s:s?,s:o}", "launched", (json_int_t)se->launched, "pruned",
                         (json_int_t)se->pruned, "inferred", (json_int_t)se->inferred, "budget",
                         budget ? budget : json_null(), "spent_s", (double)se->spent / USEC_PER_SEC, "stopped", se->stop,
                         "next", has_next ? v->cells[se->next].id : NULL, "next_prediction",
                         has_next ? se->next_why : NULL, "best_so_far", traj ? traj : json_null());
}

int report_json(const struct report_view *v, const char *version, json_t **ret) {
        _cleanup_json_ json_t *cells = json_array(), *summary = json_object(), *axes = json_array();
        size_t count[_VERDICT_MAX] = {0}, not_run = 0;
        if (!cells || !summary || !axes)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_axes; i++)
                if (json_array_append_new(axes, json_string_lossy(v->axes[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < v->n_cells; i++)
                if (json_array_append_new(cells, cell_json(v, &v->cells[i])) < 0)
                        return -ENOMEM;
        report_count_verdicts(v, count);
        not_run = v->n_cells;
        for (int k = 0; k < _VERDICT_MAX; k++) {
                not_run -= count[k];
                if (json_object_set_new(summary, verdict_to_string((enum verdict)k), json_integer((json_int_t)count[k])) < 0)
                        return -ENOMEM;
        }
        if (json_object_set_new(summary, "not run", json_integer((json_int_t)not_run)) < 0)
                return -ENOMEM;

        struct report_score score;
        int best = report_best_index(v, &score);
        _cleanup_free_ char *started = format_wall(v->sweep_started_wall);
        json_t *sweep = json_pack("{s:I, s:s?, s:s?, s:I}", "id", (json_int_t)v->sweep_id, "started", started, "how",
                                  v->sweep_how, "earlier_sweeps", (json_int_t)v->earlier_sweeps);
        static const char *const keys[] = {"gauntlet", "engine",   "host",      "cells", "best",    "model",
                                            "objective", "matrix",  "journal",   "sweep", "axes",    "summary",
                                            "best_value", "best_by", "best_ties", "best_within_noise",
                                            "eval", "search"};
        json_t *vals[] = {
                json_string(version ? version : "unknown"),
                json_string_lossy(v->engine),
                json_deep_copy(v->host_json),
                json_incref(cells),
                best >= 0 ? json_string(v->cells[best].id) : json_null(),
                json_string_lossy(v->model),
                json_string_lossy(v->objective),
                json_string_lossy(v->matrix_path),
                json_string_lossy(v->journal_path),
                sweep,
                json_incref(axes),
                json_incref(summary),
                best >= 0 && !isnan(score.value) ? json_real(score.value) : json_null(),
                best >= 0 && !isnan(score.value) ? json_string(score.by_bench ? "objective" : "smoke") : json_null(),
                ties_json(v),
                json_boolean(report_best_within_noise(v)),
                view_eval_json(v),
                view_search_json(v),
        };
        _Static_assert(ELEMENTSOF(keys) == ELEMENTSOF(vals), "keys and values");
        json_t *o = json_object();
        if (!o || set_all(o, keys, vals, ELEMENTSOF(keys)) < 0) {
                json_decref(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

/* ---- Markdown ---- */

/* A fence longer than any run of backticks in s, so s cannot close it (CommonMark). */
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

struct ranked {
        size_t index;
        int group;        /* 0 best, 1 other passes, 2 the rest */
        double value;
        bool higher_better;
};

static int ranked_cmp(const void *a, const void *b) {
        const struct ranked *x = a, *y = b;
        if (x->group != y->group)
                return x->group - y->group;
        if (x->group == 1 && x->value != y->value)
                return (x->higher_better ? x->value < y->value : x->value > y->value) ? 1 : -1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* Per benchmarked passing cell: the SLA figure, and the prompt and output tokens per request
 * the server counted at each level. */
static int put_bench_notes(struct buf *out, const struct report_view *v, const struct ranked *order) {
        bool any = false;
        int r = 0;
        for (size_t i = 0; i < v->n_cells && r >= 0; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                if (!cell_passed(c) || !json_array_size(c->bench))
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
                r = buf_puts(out, "\n");
        }
        return r;
}

int report_markdown(const struct report_view *v, struct buf *out) {
        struct report_score score, s;
        int best = report_best_index(v, &score);
        bool by_bench = best >= 0 && score.by_bench;
        _cleanup_free_ struct ranked *order = calloc(v->n_cells + 1, sizeof(*order));
        int r;
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                order[i] = (struct ranked){.index = i, .group = 2};
                if ((int)i == best)
                        order[i].group = 0;
                else if (cell_passed(c)) {
                        order[i].group = 1;
                        if (report_cell_score(v, c, by_bench, &s) == 0) {
                                order[i].value = s.value;
                                order[i].higher_better = s.higher_better;
                        }
                }
        }
        qsort(order, v->n_cells, sizeof(*order), ranked_cmp);

        if ((r = buf_puts(out, "### gauntlet: ")) < 0 || (r = report_code_span(out, v->engine, 0, false)) < 0)
                return r;
        if (v->model && ((r = buf_puts(out, " · ")) < 0 || (r = report_code_span(out, v->model, 0, false)) < 0))
                return r;
        if ((r = buf_puts(out, "\n\nObjective: ")) < 0 ||
            (r = report_code_span(out, v->objective ? v->objective : OBJECTIVE_DEFAULT, 0, false)) < 0 ||
            (r = buf_puts(out, ". ")) < 0 || (r = put_summary(out, v)) < 0 || (r = buf_puts(out, ".\n\n")) < 0)
                return r;
        bool eval = v->eval.on;
        _cleanup_free_ char *eval_summary = report_eval_summary(v);
        if (eval_summary && ((r = buf_puts(out, "Eval: ")) < 0 || (r = report_escape_markdown(out, eval_summary, 0)) < 0 ||
                             (r = buf_puts(out, ".\n\n")) < 0))
                return r;
        _cleanup_free_ char *search_summary = report_search_summary(v);
        if (search_summary && ((r = buf_puts(out, "Search: ")) < 0 ||
                               (r = report_escape_markdown(out, search_summary, 0)) < 0 || (r = buf_puts(out, ".\n\n")) < 0))
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
                if ((r = buf_puts(out, order[i].group == 0 ? "| **best** |" : "|   |")) < 0)
                        return r;
                for (size_t k = 0; k < v->n_axes; k++)
                        if ((r = buf_puts(out, " ")) < 0 ||
                            (r = report_code_span(out, c->axis_values[k] ? c->axis_values[k] : "?", 64, true)) < 0 ||
                            (r = buf_puts(out, " |")) < 0)
                                return r;
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                const char *result = fig ? fig : report_cell_cause(c);
                if ((r = buf_printf(out, cell_passed(c) ? " **%s** | " : " %s | ", report_cell_verdict(c))) < 0 ||
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

        if (best >= 0 && (r = put_ties(out, v, true)) < 0)
                return r;
        if ((r = put_bench_notes(out, v, order)) < 0)
                return r;

        bool any = false;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[order[i].index];
                if (!c->has_attempt || c->excluded || c->verdict == VERDICT_PASS)
                        continue;
                if (!any && (r = buf_puts(out, "\n#### Why the others failed\n")) < 0)
                        return r;
                any = true;
                _cleanup_free_ char *label = cell_axes_label(v, c, true);
                if (!label)
                        return -ENOMEM;
                if ((r = buf_printf(out, "\n`%s` %s: **%s**", c->id, label, verdict_to_string(c->verdict))) < 0)
                        return r;
                if (c->cause && ((r = buf_puts(out, " / ")) < 0 || (r = report_code_span(out, c->cause, 0, false)) < 0))
                        return r;
                if ((r = buf_puts(out, "\n\n")) < 0)
                        return r;
                if ((r = put_fenced(out, c->evidence ? c->evidence : "(no evidence recorded)")) < 0)
                        return r;
        }
        return 0;
}
