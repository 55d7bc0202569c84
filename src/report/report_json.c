/* report_json.c -- the JSON report (DESIGN.md's contract), read from the view only. */
#include "report/report.h"

#include <math.h>
#include <string.h>

#include "text/secrets.h"
#include "base/utf8.h"

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
                                            "finish_reason", "http_status", "latency_s", "ttft_s", "streamed",
                                            "detail"};
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
                json_string_lossy(k->detail),
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
        if (e->under_load) {
                json_t *ul = json_pack("{s:i, s:I, s:I, s:o, s:o, s:{s:I, s:I, s:o}}", "concurrency", e->load_concurrency,
                                       "n", (json_int_t)e->load_fig.n, "correct", (json_int_t)e->load_fig.correct,
                                       "accuracy", json_number_or_null(e->load_fig.accuracy), "ci95",
                                       json_pack("[o, o]", json_number_or_null(e->load_fig.ci_low),
                                                 json_number_or_null(e->load_fig.ci_high)),
                                       "alone", "n", (json_int_t)e->load_alone.n, "correct",
                                       (json_int_t)e->load_alone.correct, "accuracy",
                                       json_number_or_null(e->load_alone.accuracy));
                if (ul && e->load_compared)
                        err |= json_object_set_new(ul, "vs_reference",
                                                   json_pack("{s:I, s:I, s:o, s:o, s:o, s:b}", "n", (json_int_t)e->load_ref.n,
                                                             "correct", (json_int_t)e->load_ref.correct, "accuracy",
                                                             json_number_or_null(e->load_ref.accuracy), "z",
                                                             json_number_or_null(e->load_z), "p",
                                                             json_number_or_null(e->load_p), "below", e->load_gated));
                err |= !ul || json_object_set_new(o, "under_load", ul);
        } else
                err |= json_object_set_new(o, "under_load", json_null());
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
                                            "sla", "eval", "prediction", "launches", "pooled", "abandoned",
                                            "abandon_reason"};
        struct report_score sc;
        unsigned n_pooled = 0;
        double pooled = json_array_size(c->earlier) && report_cell_score(v, c, report_by_bench(v), &sc) == 0
                                ? report_cell_pooled(v, c, report_by_bench(v), sc.value, &n_pooled)
                                : NAN;
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
                c->launches ? json_integer(c->launches) : json_null(),
                n_pooled > 1 ? json_pack("{s:f,s:i}", "figure", pooled, "measured", (int)n_pooled) : json_null(),
                c->abandoned ? json_integer(c->abandoned) : json_null(),
                c->abandon_reason ? json_string_lossy(c->abandon_reason) : json_null(),
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
        json_t *named = se->has_named ? json_pack("{s:s,s:f}", "cell", v->cells[se->named].id, "estimate",
                                                  se->named_estimate)
                                      : json_null();
        json_t *top = se->has_named && se->top >= 0 ? json_pack("{s:s,s:f}", "cell", v->cells[se->top].id, "estimate",
                                                                se->top_estimate)
                                                    : json_null();
        return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:f,s:f,s:f,s:s?,s:s?,s:s?,s:s?,s:o,s:o,s:o}", "launched",
                         (json_int_t)se->launched, "launches", (json_int_t)se->launches, "abandoned",
                         (json_int_t)se->abandoned, "retried", (json_int_t)se->retried, "pruned",
                         (json_int_t)se->pruned, "inferred", (json_int_t)se->inferred, "budget",
                         budget ? budget : json_null(), "spent_s", (double)se->spent / USEC_PER_SEC, "spent_failed_s",
                         (double)se->spent_failed / USEC_PER_SEC, "spent_served_s", (double)se->spent_served / USEC_PER_SEC, "stopped", se->stop,
                         "stop_why", se->stop_why,
                         "next", has_next ? v->cells[se->next].id : NULL, "next_prediction",
                         has_next ? se->next_why : NULL, "best_so_far", traj ? traj : json_null(), "named",
                         named ? named : json_null(), "top_measured", top ? top : json_null());
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
        _cleanup_free_ char *started = report_format_wall(v->sweep_started_wall);
        json_t *sweep = json_pack("{s:I, s:s?, s:s?, s:I, s:s?, s:I}", "id", (json_int_t)v->sweep_id, "started", started,
                                  "how", v->sweep_how, "earlier_sweeps", (json_int_t)v->earlier_sweeps, "workload",
                                  v->workload_hash, "workload_left_out", (json_int_t)v->workload_left_out);
        static const char *const keys[] = {"gauntlet", "engine",   "host",      "cells", "best",    "model",
                                            "objective", "matrix",  "journal",   "sweep", "axes",    "summary",
                                            "best_value", "best_by", "best_ties", "best_within_noise",
                                            "eval", "search", "tokens_counted_by", "provenance", "against"};
        _cleanup_free_ char *tokens = report_count_summary(v);
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
                tokens ? json_string_lossy(tokens) : json_null(),
                report_provenance_json(v),
                v->against ? json_deep_copy(v->against) : json_null(),
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

