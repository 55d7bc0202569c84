/* results.c -- the decisions on a sweep's view: masking, the eval's gate, scores, the
 * best cell, its ties, the SLA, the one ordering. */
#include "results/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "text/objective.h"
#include "text/secrets.h"

void report_evidence_release(struct report_evidence *e) {
        free(e->line);
        *e = (struct report_evidence){0};
}

void report_log_release(struct report_log *l) {
        for (size_t i = 0; i < l->n_lines; i++)
                free(l->lines[i].text);
        free(l->lines);
        free(l->path);
        free(l->root);
        *l = (struct report_log){0};
}

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
                free(c->abandon_reason);
                free(c->log_path);
                report_evidence_release(&c->ev);
                report_log_release(&c->log);
                for (size_t k = 0; k < c->n_checks; k++) {
                        struct report_check *ch = &c->checks[k];
                        free(ch->name);
                        free(ch->cause);
                        free(ch->evidence);
                        free(ch->output);
                        free(ch->reasoning);
                        free(ch->finish_reason);
                        free(ch->detail);
                }
                free(c->checks);
                json_decref(c->bench);
                json_decref(c->earlier);
                free(c->earlier_started);
                json_decref(c->samples);
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
        for (size_t a = 0; v->search.spellings && a < strv_length(v->search.flags); a++)
                strv_free(v->search.spellings[a]);
        free(v->search.spellings);
        strv_free(v->search.flags);
        free(v->search.order);
        free(v->search.best_so_far);
        free(v->search.next_why);
        free(v->search.stop_why);
        json_decref(v->eval.settings);
        free(v->eval.source);
        free(v->eval.named);
        strv_free(v->axes);
        free(v->journal_path);
        free(v->sweep_how);
        free(v->version);
        free(v->workload_hash);
        free(v->matrix_path);
        free(v->matrix_text);
        free(v->engine);
        free(v->model);
        free(v->objective);
        free(v->host);
        free(v->workdir);
        free(v->cwd);
        json_decref(v->host_json);
        json_decref(v->against);
        json_decref(v->provenance);
        strv_free(v->provenance_changes);
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
                if ((r = mask_string(&sv, &c->evidence)) < 0 || (r = mask_string(&sv, &c->ev.line)) < 0 ||
                    (r = mask_strv(&sv, c->argv)) < 0 || (r = mask_strv(&sv, c->command)) < 0 ||
                    (r = mask_strv(&sv, c->env)) < 0)
                        break;
                for (size_t k = 0; k < c->log.n_lines && r >= 0; k++)
                        r = mask_string(&sv, &c->log.lines[k].text);
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

/* The verdicts of a cell's eval answers alone (caller frees; NULL: ENOMEM). */
static enum verdict *verdicts_of(const struct report_eval *e) {
        enum verdict *a = calloc(e->n_answers ? e->n_answers : 1, sizeof(*a));
        for (size_t i = 0; a && i < e->n_answers; i++)
                a[i] = e->answers[i].verdict;
        return a;
}

/* The eval's gate turns a passing cell wrong: cause copied, evidence taken (NULL: -ENOMEM). */
static int gate_cell(struct report_cell *c, const char *cause, char *evidence) {
        char *cs = evidence ? strdup(cause) : NULL;
        if (!cs) {
                free(evidence);
                return -ENOMEM;
        }
        free(c->cause);
        free(c->evidence);
        c->verdict = VERDICT_WRONG;
        c->cause = cs;
        c->evidence = evidence;
        return 0;
}

/* The eval under load: each cell's against its own answers alone (the sweep gated on that
 * already), then, for a cell that passed, against the reference's alone on the same
 * questions: significantly below is wrong/accuracy. */
static int apply_under_load(struct report_view *v, struct report_cell *rc) {
        _cleanup_free_ enum verdict *ref = rc ? verdicts_of(&rc->eval) : NULL;
        if (rc && !ref)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                size_t k;
                json_t *level, *e = NULL;
                json_array_foreach(c->bench, k, level) if (!e) e = json_object_get(level, metric_key(METRIC_EVAL_UNDER_LOAD));
                if (!json_is_object(e) || !c->eval.ran)
                        continue;
                _cleanup_free_ enum verdict *own = verdicts_of(&c->eval);
                if (!own)
                        return -ENOMEM;
                c->eval.under_load = true;
                c->eval.load_concurrency = (int)json_integer_value(json_object_get(e, "concurrency"));
                eval_under_load_figures(e, own, c->eval.n_answers, &c->eval.load_fig, &c->eval.load_alone);
                if (!rc || rc == c || !eval_eligible(c))
                        continue;
                struct eval_figures load;
                eval_under_load_figures(e, ref, rc->eval.n_answers, &load, &c->eval.load_ref);
                c->eval.load_compared = true;
                eval_two_proportion(load.correct, load.n, c->eval.load_ref.correct, c->eval.load_ref.n, &c->eval.load_z,
                                    &c->eval.load_p);
                if (!eval_significantly_below(load.correct, load.n, c->eval.load_ref.correct, c->eval.load_ref.n))
                        continue;
                char what[64];
                snprintf(what, sizeof(what), "the reference %.8s's alone", rc->id);
                if (gate_cell(c, "accuracy",
                              eval_under_load_evidence(c->eval.load_concurrency, &load, &c->eval.load_ref, what)) < 0)
                        return -ENOMEM;
                c->eval.load_gated = true;
                v->eval.gated++;
        }
        return 0;
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
                return apply_under_load(v, NULL);
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
                if (gate_cell(c, eval_gate_cause(c->eval.gate),
                              eval_gate_evidence(c->eval.gate, &ve->rules, &c->eval.fig, &rc->eval.fig, &c->eval.diff,
                                                 rc->id, first)) < 0)
                        return -ENOMEM;
                ve->gated++;
        }
        return apply_under_load(v, rc);
}

/* The gate a journaled verdict stands for, by its cause (the words eval_gate_cause gives). */
static enum eval_gate gate_of_cause(const char *cause) {
        if (streq_ptr(cause, eval_gate_cause(EVAL_GATE_ACCURACY)))
                return EVAL_GATE_ACCURACY;
        if (streq_ptr(cause, eval_gate_cause(EVAL_GATE_AGREEMENT)))
                return EVAL_GATE_AGREEMENT;
        return EVAL_GATE_NONE;
}

int report_cell_take_verdict(struct report_view *v, struct report_cell *c, enum verdict verdict, const char *cause,
                             const char *evidence) {
        if (!c->has_attempt || c->excluded)
                return 0;
        if (c->verdict == verdict && streq_ptr(c->cause, cause) && streq_ptr(c->evidence, evidence))
                return 0;
        char *cs = cause ? strdup(cause) : NULL, *ev = evidence ? strdup(evidence) : NULL;
        if ((cause && !cs) || (evidence && !ev)) {
                free(cs);
                free(ev);
                return -ENOMEM;
        }
        free(c->cause);
        free(c->evidence);
        c->verdict = verdict;
        c->cause = cs;
        c->evidence = ev;
        /* The gate's marks follow the journaled verdict: none when it kept the launched
         * verdict, the cause's gate when it turned the cell wrong and this load did not. */
        bool was = c->eval.gate != EVAL_GATE_NONE || c->eval.load_gated;
        if (verdict == c->eval.journal_verdict) {
                c->eval.gate = EVAL_GATE_NONE;
                c->eval.load_gated = false;
        } else if (!was && verdict == VERDICT_WRONG && c->eval.journal_verdict == VERDICT_PASS)
                c->eval.gate = gate_of_cause(cause);
        bool is = c->eval.gate != EVAL_GATE_NONE || c->eval.load_gated;
        v->eval.gated = v->eval.gated + is - was;
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

bool report_cell_passed(const struct report_cell *c) {
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
        if (!report_cell_passed(c))
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

double report_cell_pooled(const struct report_view *v, const struct report_cell *c, bool by_bench, double value,
                          unsigned *ret_n) {
        double sum = log(value);
        unsigned n = 1;
        for (size_t i = 0; i < json_array_size(c->earlier); i++) {
                struct report_cell t = *c;
                struct report_score s;
                t.bench = json_array_get(c->earlier, i);
                if (report_cell_score(v, &t, by_bench, &s) == 0 && isfinite(s.value) && s.value > 0) {
                        sum += log(s.value);
                        n++;
                }
        }
        if (ret_n)
                *ret_n = n;
        return exp(sum / n);
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
int report_best_index(const struct report_view *v, struct report_score *ret_score) {
        struct report_score s, top = {0};
        bool by_bench = false, any_pass = false;
        /* A search names the cell its model rates best (report.h, docs/search.md). */
        if (v->search.on && v->search.has_named && v->search.named < v->n_cells &&
            report_cell_passed(&v->cells[v->search.named]) &&
            report_cell_score(v, &v->cells[v->search.named], report_by_bench(v), &s) == 0) {
                if (ret_score)
                        *ret_score = s;
                return (int)v->search.named;
        }
        for (size_t i = 0; i < v->n_cells; i++)
                any_pass |= report_cell_passed(&v->cells[i]);
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
                if (!report_cell_passed(c))
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

/* ---- the one ordering ---- */

struct order_key {
        struct report_ranked r;
        double value;
        bool higher_better;
        enum verdict verdict;
        const char *cause;
};

static int order_cmp(const void *a, const void *b) {
        const struct order_key *x = a, *y = b;
        if (x->r.rank != y->r.rank)
                return (int)x->r.rank - (int)y->r.rank;
        if (x->r.rank == REPORT_RANK_SCORED && x->value != y->value)
                return (x->higher_better ? x->value < y->value : x->value > y->value) ? 1 : -1;
        if (x->r.rank == REPORT_RANK_FAILED) {
                if (x->verdict != y->verdict)
                        return (int)x->verdict - (int)y->verdict;
                int k = strcmp(x->cause ? x->cause : "", y->cause ? y->cause : "");
                if (k)
                        return k;
        }
        return x->r.index < y->r.index ? -1 : x->r.index > y->r.index;
}

int report_order(const struct report_view *v, struct report_ranked **ret) {
        struct report_score best_score, s;
        int best = report_best_index(v, &best_score);
        /* the figures the best was chosen by: the bench's, unless no passing cell has one */
        bool by_bench = best >= 0 && best_score.by_bench && !isnan(best_score.value);
        _cleanup_free_ struct order_key *keys = calloc(v->n_cells + 1, sizeof(*keys));
        struct report_ranked *order = calloc(v->n_cells + 1, sizeof(*order));
        if (!keys || !order) {
                free(order);
                return -ENOMEM;
        }
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                struct order_key *k = &keys[i];
                *k = (struct order_key){.r.index = i, .verdict = c->verdict, .cause = c->cause};
                if ((int)i == best)
                        k->r.rank = REPORT_RANK_BEST;
                else if (report_cell_passed(c)) {
                        k->r.rank = REPORT_RANK_PASSED;
                        if (report_cell_score(v, c, by_bench, &s) == 0) {
                                k->r.rank = REPORT_RANK_SCORED;
                                k->value = s.value;
                                k->higher_better = s.higher_better;
                        }
                } else if (c->excluded)
                        k->r.rank = REPORT_RANK_SKIPPED;
                else if (!c->has_attempt)
                        k->r.rank = REPORT_RANK_NOT_RUN;
                else
                        k->r.rank = c->verdict == VERDICT_SKIPPED ? REPORT_RANK_SKIPPED : REPORT_RANK_FAILED;
        }
        qsort(keys, v->n_cells, sizeof(*keys), order_cmp);
        for (size_t i = 0; i < v->n_cells; i++)
                order[i] = keys[i].r;
        *ret = order;
        return 0;
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

int report_cell_figure_value(const struct report_view *v, const struct report_cell *c, struct report_figure *ret) {
        struct objective o;
        double x;
        long level = 0;
        if (!report_cell_passed(c))
                return -ENODATA;
        view_objective(v, &o);
        if (bench_value(c, &o, &x, &level)) {
                *ret = (struct report_figure){.by_bench = true, .value = x, .level = level,
                                              .unit = o.info ? o.info->figure : NULL,
                                              .metric = o.metric, .metric_len = o.metric_len};
                return 0;
        }
        if (!smoke_seconds(c, &x))
                return -ENODATA;
        *ret = (struct report_figure){.value = x};
        return 0;
}
