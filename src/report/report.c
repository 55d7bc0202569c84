/* report.c -- the view of a journal: masking, the eval gate, scores, the best cell, the SLA,
 * ties, and what the renderers share (escaping, the summary line, labels). */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/metrics.h"
#include "text/objective.h"
#include "text/secrets.h"
#include "text/text.h"

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
                if (bad <= 0 && level_wide)
                        bad = json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_REQUESTS)));
                if (bad <= 0 || r < 0)
                        continue;
                r = buf_printf(&b, "%s @%lld the server said %lld output tokens on %lld requests (%lld disagreeing",
                               b.len ? ";" : "usage disagrees with gauntlet's count:",
                               (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_TOKENS))),
                               (long long)json_integer_value(json_object_get(u, metric_key(METRIC_USAGE_REQUESTS))),
                               (long long)bad);
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

char *report_cell_figure(const struct report_view *v, const struct report_cell *c) {
        struct objective o;
        double x;
        long level = 0;
        if (!report_cell_passed(c))
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
        if (se->launches > se->launched)
                buf_printf(&b, ", %zu launches (%zu measuring a close cell again)", se->launches,
                           se->launches - se->launched);
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
