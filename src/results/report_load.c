/* report_load.c -- the report view read from a journal: the latest sweep and its cells,
 * their evidence taken apart once, and the failed cells' log excerpts. */
#include "results/report_load.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_sql.h"
#include "proc/provenance.h"
#include "results/search_view.h"
#include "text/placeholder.h"

static int strv_from_json(const char *text, char ***ret) {
        _cleanup_(json_decrefp) json_t *a = text ? json_loads(text, 0, NULL) : NULL;
        _cleanup_strv_free_ char **v = NULL;
        size_t i;
        json_t *e;
        if (!a || !json_is_array(a))
                return -EUCLEAN;
        json_array_foreach(a, i, e) {
                if (!json_is_string(e))
                        return -EUCLEAN;
                if (strv_push(&v, json_string_value(e)) < 0)
                        return -ENOMEM;
        }
        if (!v && !(v = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(v);
        return 0;
}

static int load_checks(struct journal *j, struct report_cell *c) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j,
                         journal_schema_version(j) >= 5
                                 ? "SELECT name, verdict, cause, evidence, output, reasoning, finish_reason, http_status, "
                                   "latency_us, ttft_us, streamed, detail FROM check_results WHERE attempt_id = ? ORDER BY seq"
                                 : "SELECT name, verdict, cause, evidence, output, reasoning, finish_reason, http_status, "
                                   "latency_us, ttft_us, streamed, NULL FROM check_results WHERE attempt_id = ? ORDER BY seq",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", c->attempt_id)) < 0)
                return r;
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        return 0;
                if (rc != SQLITE_ROW)
                        return journal_fail(j, rc);
                struct report_check *t = realloc(c->checks, (c->n_checks + 1) * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                c->checks = t;
                struct report_check *k = &c->checks[c->n_checks++];
                *k = (struct report_check){
                        .verdict = verdict_from_string(journal_col_str(s, 1)),
                        .http_status = sqlite3_column_int(s, 7),
                        .latency = (usec_t)sqlite3_column_int64(s, 8),
                        .ttft = (usec_t)sqlite3_column_int64(s, 9),
                        .streamed = sqlite3_column_int(s, 10) != 0,
                };
                if ((r = journal_col_strdup(s, 0, &k->name)) < 0 || (r = journal_col_strdup(s, 2, &k->cause)) < 0 ||
                    (r = journal_col_strdup(s, 3, &k->evidence)) < 0 || (r = journal_col_strdup(s, 4, &k->output)) < 0 ||
                    (r = journal_col_strdup(s, 5, &k->reasoning)) < 0 || (r = journal_col_strdup(s, 6, &k->finish_reason)) < 0 ||
                    (r = journal_col_strdup(s, 11, &k->detail)) < 0)
                        return r;
        }
}

/* The eval answers of the cell's attempt, when it answered the view's question set. */
static int load_eval(struct journal *j, const struct report_view *v, struct report_cell *c, const char *set) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if (!v->eval.on || !set)
                return 0;
        if (strcmp(set, v->eval.set) != 0) {
                c->eval.other_set = true;
                return 0;
        }
        if ((r = journal_prepare(j,
                         "SELECT qid, qkey, question, verdict, cause, evidence, output, finish_reason, http_status, "
                         "latency_us, logprobs FROM eval_results WHERE attempt_id = ? ORDER BY seq",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", c->attempt_id)) < 0)
                return r;
        size_t alloc = 0;
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        break;
                if (rc != SQLITE_ROW)
                        return journal_fail(j, rc);
                if (c->eval.n_answers == alloc) {
                        size_t na = alloc ? alloc * 2 : 64;
                        struct report_eval_answer *t = realloc(c->eval.answers, na * sizeof(*t));
                        if (!t)
                                return -ENOMEM;
                        c->eval.answers = t;
                        alloc = na;
                }
                struct report_eval_answer *e = &c->eval.answers[c->eval.n_answers++];
                *e = (struct report_eval_answer){
                        .verdict = verdict_from_string(journal_col_str(s, 3)),
                        .http_status = sqlite3_column_int(s, 8),
                        .latency = (usec_t)sqlite3_column_int64(s, 9),
                };
                if ((r = journal_col_strdup(s, 0, &e->id)) < 0 || (r = journal_col_strdup(s, 1, &e->key)) < 0 ||
                    (r = journal_col_strdup(s, 2, &e->question)) < 0 || (r = journal_col_strdup(s, 4, &e->cause)) < 0 ||
                    (r = journal_col_strdup(s, 5, &e->evidence)) < 0 || (r = journal_col_strdup(s, 6, &e->output)) < 0 ||
                    (r = journal_col_strdup(s, 7, &e->finish_reason)) < 0)
                        return r;
                _cleanup_(json_decrefp) json_t *lp =
                        journal_col_str(s, 10) ? json_loads(journal_col_str(s, 10), 0, NULL) : NULL;
                if (json_is_array(lp) && json_array_size(lp) > 0) {
                        size_t n = json_array_size(lp);
                        if (!(e->logprobs = malloc(n * sizeof(*e->logprobs))))
                                return -ENOMEM;
                        for (size_t k = 0; k < n; k++) {
                                json_t *x = json_array_get(lp, k);
                                e->logprobs[k] = json_is_number(x) ? json_number_value(x) : NAN;
                        }
                        e->n_logprobs = n;
                }
        }
        /* A set is asked whole (the rows are the questions in order); anything else is
         * not an answer to this set. */
        if (c->eval.n_answers != v->eval.questions)
                return 0;
        c->eval.ran = true;
        for (size_t i = 0; i < c->eval.n_answers; i++)
                eval_figures_add(&c->eval.fig, c->eval.answers[i].verdict);
        eval_figures_finish(&c->eval.fig);
        return 0;
}

/* One workload per report (docs/journal.md "One workload per journal"): from schema 6 on,
 * only attempts measured under the latest sweep's workload (or under none: an older
 * journal's, not adopted yet) are read; a cell whose figures are all of another one is
 * left out, as if not run, and counted. */
static const char *workload_clause(struct journal *j) {
        return journal_schema_version(j) >= 6 ? " AND (?2 IS NULL OR workload IS NULL OR workload = ?2)" : "";
}

static int bind_workload(struct journal *j, const struct report_view *v, sqlite3_stmt *s) {
        if (journal_schema_version(j) < 6)
                return 0;
        int rc = v->workload_hash ? sqlite3_bind_text(s, 2, v->workload_hash, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 2);
        return rc == SQLITE_OK ? 0 : journal_fail(j, rc);
}

/* A cell with no attempt of the view's workload: counted when it has one of another. */
static int other_workload(struct journal *j, const struct report_view *v, struct report_cell *c) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if (journal_schema_version(j) < 6 || !v->workload_hash)
                return 0;
        if ((r = journal_prepare(j,
                         "SELECT 1 FROM attempts WHERE cell_id = ? AND state = 'settled' AND verdict != 'skipped' "
                         "AND workload IS NOT NULL AND workload != ? LIMIT 1",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "ss", c->id, v->workload_hash)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        if (rc == SQLITE_ROW) {
                c->other_workload = true;
                ((struct report_view *)v)->workload_left_out++;
        }
        return 0;
}

/* The cell's launches, and the benches of its earlier attempts that passed (a cell measured
 * again: docs/search.md). */
static int load_earlier(struct journal *j, const struct report_view *v, struct report_cell *c) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        _cleanup_free_ char *sql = strdup_printf(
                "%s%s ORDER BY id",
                journal_schema_version(j) >= 3
                        ? "SELECT id, verdict, bench, launch_us + ready_us + checks_us + eval_us + "
                          "bench_us + stop_us FROM attempts WHERE cell_id = ? AND state = 'settled' "
                          "AND verdict != 'skipped'"
                        : "SELECT id, verdict, bench, launch_us + ready_us + checks_us + bench_us + "
                          "stop_us FROM attempts WHERE cell_id = ? AND state = 'settled' AND "
                          "verdict != 'skipped'",
                workload_clause(j));
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "s", c->id)) < 0 ||
            (r = bind_workload(j, v, s)) < 0)
                return r;
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                c->launches++;
                if (sqlite3_column_int64(s, 0) != c->attempt_id)
                        c->earlier_spent += (usec_t)MAX(sqlite3_column_int64(s, 3), 0);
                if (sqlite3_column_int64(s, 0) == c->attempt_id || !streq_ptr(journal_col_str(s, 1), "pass") ||
                    !journal_col_str(s, 2))
                        continue;
                json_t *b = json_loads(journal_col_str(s, 2), 0, NULL);
                if (!json_is_array(b)) {
                        json_decref(b);
                        continue;
                }
                if ((!c->earlier && !(c->earlier = json_array())) || json_array_append_new(c->earlier, b) < 0)
                        return -ENOMEM;
        }
        return rc == SQLITE_DONE ? 0 : journal_fail(j, rc);
}

/* The latest settled, non-skipped attempt of the cell, if any. */
static int load_attempt(struct journal *j, const struct report_view *v, struct report_cell *c) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        bool v3 = journal_schema_version(j) >= 3, v4 = journal_schema_version(j) >= 4;
        _cleanup_free_ char *sql = strdup_printf(
                "%s%s ORDER BY id DESC LIMIT 1",
                v4 ? "SELECT id, sweep_id, verdict, cause, evidence, log_path, started_wall, port, launch_us, "
                     "ready_us, checks_us, eval_us, bench_us, stop_us, ready_after_us, exit_code, exit_signal, "
                     "peak_gpu_mem_mib, bench, eval_set, prediction FROM attempts WHERE cell_id = ? AND "
                     "state = 'settled' AND (verdict != 'skipped' OR cause IN ('inferred', 'pruned'))"
                : v3 ? "SELECT id, sweep_id, verdict, cause, evidence, log_path, started_wall, port, launch_us, "
                       "ready_us, checks_us, eval_us, bench_us, stop_us, ready_after_us, exit_code, exit_signal, "
                       "peak_gpu_mem_mib, bench, eval_set, NULL FROM attempts WHERE cell_id = ? AND state = 'settled' "
                       "AND (verdict != 'skipped' OR cause = 'inferred')"
                     : "SELECT id, sweep_id, verdict, cause, evidence, log_path, started_wall, port, launch_us, "
                       "ready_us, checks_us, NULL, bench_us, stop_us, ready_after_us, exit_code, exit_signal, "
                       "peak_gpu_mem_mib, bench, NULL, NULL FROM attempts WHERE cell_id = ? AND state = 'settled' "
                       "AND (verdict != 'skipped' OR cause = 'inferred')",
                workload_clause(j));
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "s", c->id)) < 0 ||
            (r = bind_workload(j, v, s)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
                return other_workload(j, v, c);
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        c->has_attempt = true;
        c->attempt_id = sqlite3_column_int64(s, 0);
        c->attempt_sweep_id = sqlite3_column_int64(s, 1);
        c->verdict = verdict_from_string(journal_col_str(s, 2));
        c->started_wall = (usec_t)sqlite3_column_int64(s, 6);
        c->port = sqlite3_column_int(s, 7);
        _Static_assert(PHASE_LAUNCH == 0 && PHASE_READY == 1 && PHASE_CHECKS == 2 && PHASE_EVAL == 3 &&
                               PHASE_BENCH == 4 && PHASE_STOP == 5 && _PHASE_MAX == 6,
                       "the columns launch_us ... stop_us in phase order");
        for (int p = 0; p < _PHASE_MAX; p++)
                c->phase[p] = (usec_t)sqlite3_column_int64(s, 8 + p);
        c->ready_after = (usec_t)sqlite3_column_int64(s, 14);
        c->exit_code = sqlite3_column_int(s, 15);
        c->exit_signal = sqlite3_column_int(s, 16);
        c->peak_gpu_mem_mib = (uint64_t)sqlite3_column_int64(s, 17);
        if ((r = journal_col_strdup(s, 3, &c->cause)) < 0 || (r = journal_col_strdup(s, 4, &c->evidence)) < 0 ||
            (r = journal_col_strdup(s, 5, &c->log_path)) < 0 ||
            (r = report_evidence_parse(c->evidence, c->verdict, &c->ev)) < 0)
                return r;
        if (journal_col_str(s, 18)) {
                c->bench = json_loads(journal_col_str(s, 18), 0, NULL);
                if (!c->bench || !json_is_array(c->bench)) {
                        json_decref(c->bench);
                        c->bench = NULL;
                }
        }
        if (journal_col_str(s, 20)) {
                c->prediction = json_loads(journal_col_str(s, 20), 0, NULL);
                if (!json_is_object(c->prediction)) {
                        json_decref(c->prediction);
                        c->prediction = NULL;
                }
        }
        c->eval.journal_verdict = c->verdict;
        if ((r = load_eval(j, v, c, journal_col_str(s, 19))) < 0 ||
            (c->verdict != VERDICT_SKIPPED && (r = load_earlier(j, v, c)) < 0))
                return r;
        return load_checks(j, c);
}

/* The latest sweep's eval settings (sweeps.eval), when it has any. */
/* The JSON object in column `sql` of the latest sweep (from schema version `since` on), in
 * *ret (NULL: none, not an object, or an older journal). */
static int load_sweep_json(struct journal *j, const struct report_view *v, const char *sql, int since, json_t **ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        *ret = NULL;
        if (journal_schema_version(j) < since)
                return 0;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "i", v->sweep_id)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return rc == SQLITE_DONE ? 0 : journal_fail(j, rc);
        const char *text = journal_col_str(s, 0);
        json_t *e = text ? json_loads(text, 0, NULL) : NULL;
        if (!json_is_object(e))
                json_decref(TAKE_PTR(e));
        *ret = e;
        return 0;
}

static int load_eval_settings(struct journal *j, struct report_view *v) {
        json_t *e = NULL;
        v->eval.reference = -1;
        int r = load_sweep_json(j, v, "SELECT eval FROM sweeps WHERE id = ?", 3, &e);
        if (r < 0 || !e)
                return r;
        if (!json_is_string(json_object_get(e, "set"))) {
                json_decref(e);
                return 0;
        }
        struct report_view_eval *ve = &v->eval;
        ve->on = true;
        ve->settings = e;
        eval_options_init(&ve->rules);
        snprintf(ve->set, sizeof(ve->set), "%s", json_string_value(json_object_get(e, "set")));
        ve->questions = (size_t)json_integer_value(json_object_get(e, "questions"));
        json_t *x;
        if (json_is_number(x = json_object_get(e, "min_agreement")))
                ve->rules.min_agreement = json_number_value(x);
        if (json_is_number(x = json_object_get(e, "max_logprob_diff")))
                ve->rules.max_logprob_diff = json_number_value(x);
        const char *src = json_string_value(json_object_get(e, "source"));
        const char *named = json_string_value(json_object_get(e, "reference"));
        if ((src && !(ve->source = strdup(src))) || (named && !(ve->named = strdup(named))))
                return -ENOMEM;
        return 0;
}

/* The latest sweep's search settings (sweeps.search), when its strategy was search. The
 * first cell is named by id and found once the cells are loaded. */
static int load_search_settings(struct journal *j, struct report_view *v, char **ret_first) {
        _cleanup_(json_decrefp) json_t *e = NULL;
        v->search.first = -1;
        v->search.next = -1;
        int r = load_sweep_json(j, v, "SELECT search FROM sweeps WHERE id = ?", 4, &e);
        if (r < 0 || !e)
                return r;
        struct report_view_search *vs = &v->search;
        vs->on = true;
        json_t *b = json_object_get(e, "budget"), *x;
        if (json_is_integer(x = json_object_get(b, "launches")) && json_integer_value(x) > 0)
                vs->budget_launches = (size_t)json_integer_value(x);
        if (json_is_integer(x = json_object_get(b, "time_us")) && json_integer_value(x) > 0)
                vs->budget_time = (usec_t)json_integer_value(x);
        size_t i;
        json_array_foreach(json_object_get(e, "flags"), i, x)
                if ((r = strv_push(&vs->flags, json_is_string(x) ? json_string_value(x) : "")) < 0)
                        return r;
        const char *first = json_string_value(json_object_get(e, "first"));
        if (first && !(*ret_first = strdup(first)))
                return -ENOMEM;
        return 0;
}

/* strategy search: the cell's abandoned attempts (of the view's workload), which count
 * against budget.launches (docs/search.md "Budget"). */
static int count_abandoned(struct journal *j, const struct report_view *v, struct report_cell *c) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *sql = strdup_printf(
                "SELECT count(*) FROM attempts WHERE cell_id = ? AND state = 'abandoned'%s", workload_clause(j));
        int r;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "s", c->id)) < 0 ||
            (r = bind_workload(j, v, s)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return rc == SQLITE_DONE ? 0 : journal_fail(j, rc);
        c->abandoned = (unsigned)sqlite3_column_int64(s, 0);
        return 0;
}

static int load_cells(struct journal *j, struct report_view *v) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        size_t alloc = 0;
        int r;
        if ((r = journal_prepare(j,
                         "SELECT sc.cell_id, sc.position, sc.axes, sc.distance, sc.excluded, c.argv, c.env "
                         "FROM sweep_cells sc JOIN cells c ON c.id = sc.cell_id WHERE sc.sweep_id = ? "
                         "ORDER BY sc.position",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", v->sweep_id)) < 0)
                return r;
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        return 0;
                if (rc != SQLITE_ROW)
                        return journal_fail(j, rc);
                if (v->n_cells == alloc) {
                        size_t na = alloc ? alloc * 2 : 16;
                        struct report_cell *t = realloc(v->cells, na * sizeof(*t));
                        if (!t)
                                return -ENOMEM;
                        v->cells = t;
                        alloc = na;
                }
                struct report_cell *c = &v->cells[v->n_cells++];
                *c = (struct report_cell){
                        .position = (size_t)sqlite3_column_int64(s, 1),
                        .distance = sqlite3_column_int(s, 3),
                        .excluded = sqlite3_column_int(s, 4) != 0,
                        .verdict = VERDICT_INVALID,
                        .exit_code = -1,
                };
                snprintf(c->id, sizeof(c->id), "%s", journal_col_str(s, 0) ? journal_col_str(s, 0) : "");
                if ((r = strv_from_json(journal_col_str(s, 5), &c->argv)) < 0 || (r = strv_from_json(journal_col_str(s, 6), &c->env)) < 0)
                        return r;
                c->axis_values = calloc(v->n_axes + 1, sizeof(char *));
                if (!c->axis_values)
                        return -ENOMEM;
                _cleanup_(json_decrefp) json_t *axes = journal_col_str(s, 2) ? json_loads(journal_col_str(s, 2), 0, NULL) : NULL;
                for (size_t i = 0; i < v->n_axes; i++) {
                        const char *val = json_string_value(json_object_get(axes, v->axes[i]));
                        if (val && !(c->axis_values[i] = strdup(val)))
                                return -ENOMEM;
                }
                if (v->search.on && (r = count_abandoned(j, v, c)) < 0)
                        return r;
                if (c->excluded) {
                        c->verdict = VERDICT_SKIPPED;
                        if (!(c->cause = strdup("excluded")))
                                return -ENOMEM;
                } else if ((r = load_attempt(j, v, c)) < 0)
                        return r;
                const char *host = v->host ? v->host : "127.0.0.1";
                if ((r = placeholder_fill_argv(c->argv, host, c->port ? c->port : v->port, &c->command)) < 0)
                        return r;
        }
}

/* The provenance objects of sweep_id, in the journal's order, into *ret (NULL: none). */
static int load_sweep_provenance(struct journal *j, int64_t sweep_id, json_t **ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        *ret = NULL;
        int r, rc;
        if ((r = journal_prepare(j, "SELECT json FROM provenance WHERE sweep_id = ? ORDER BY rowid", &s)) < 0 ||
            (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                json_t *o = journal_col_str(s, 0) ? json_loads(journal_col_str(s, 0), 0, NULL) : NULL;
                if (json_is_object(o) ? json_array_append_new(a, o) < 0 : (json_decref(o), false))
                        return -ENOMEM;
        }
        if (rc != SQLITE_DONE)
                return journal_fail(j, rc);
        if (json_array_size(a) > 0)
                *ret = TAKE_PTR(a);
        return 0;
}

/* The latest sweep's provenance, and what changed since the latest earlier sweep that has
 * one. A journal without the table (before schema 8) has none. */
static int load_provenance(struct journal *j, struct report_view *v) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r, rc;
        if ((r = journal_prepare(j,
                                 "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'provenance')",
                                 &s)) < 0)
                return r;
        if ((rc = sqlite3_step(s)) != SQLITE_ROW)
                return journal_fail(j, rc);
        if (sqlite3_column_int(s, 0) == 0)
                return 0;
        sqlite3_finalize(TAKE_PTR(s));
        if ((r = load_sweep_provenance(j, v->sweep_id, &v->provenance)) < 0 || !v->provenance)
                return r;
        if ((r = journal_prepare(j, "SELECT max(sweep_id) FROM provenance WHERE sweep_id < ?", &s)) < 0 ||
            (r = journal_bind(j, s, "i", v->sweep_id)) < 0)
                return r;
        if ((rc = sqlite3_step(s)) != SQLITE_ROW)
                return journal_fail(j, rc);
        if (sqlite3_column_type(s, 0) == SQLITE_NULL)
                return 0;
        v->provenance_since = sqlite3_column_int64(s, 0);
        _cleanup_json_ json_t *before = NULL;
        if ((r = load_sweep_provenance(j, v->provenance_since, &before)) < 0 || !before)
                return r;
        return provenance_diff(json_array_get(before, 0), json_array_get(v->provenance, 0), &v->provenance_changes);
}

int report_load_view(struct journal *j, struct report_view **ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_report_view_ struct report_view *v = calloc(1, sizeof(*v));
        int64_t count = 0;
        int r;

        if (!v || !(v->journal_path = strdup(journal_path(j))))
                return -ENOMEM;
        if ((r = journal_prepare(j,
                         "SELECT id, started_wall, how, version, matrix_path, matrix_text, engine, model, objective, "
                         "bind_host, port, workdir, startup_timeout_us, axes, host_json, cwd "
                         "FROM sweeps ORDER BY id DESC LIMIT 1",
                         &s)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        v->sweep_id = sqlite3_column_int64(s, 0);
        v->sweep_started_wall = (usec_t)sqlite3_column_int64(s, 1);
        v->port = sqlite3_column_int(s, 10);
        v->startup_timeout = (usec_t)sqlite3_column_int64(s, 12);
        if ((r = journal_col_strdup(s, 2, &v->sweep_how)) < 0 || (r = journal_col_strdup(s, 3, &v->version)) < 0 ||
            (r = journal_col_strdup(s, 4, &v->matrix_path)) < 0 || (r = journal_col_strdup(s, 5, &v->matrix_text)) < 0 ||
            (r = journal_col_strdup(s, 6, &v->engine)) < 0 || (r = journal_col_strdup(s, 7, &v->model)) < 0 ||
            (r = journal_col_strdup(s, 8, &v->objective)) < 0 || (r = journal_col_strdup(s, 9, &v->host)) < 0 ||
            (r = journal_col_strdup(s, 11, &v->workdir)) < 0 || (r = journal_col_strdup(s, 15, &v->cwd)) < 0)
                return r;
        if ((r = strv_from_json(journal_col_str(s, 13), &v->axes)) < 0)
                return r;
        v->n_axes = strv_length(v->axes);
        v->host_json = journal_col_str(s, 14) ? json_loads(journal_col_str(s, 14), 0, NULL) : NULL;
        if (!v->host_json || !json_is_object(v->host_json)) {
                json_decref(v->host_json);
                if (!(v->host_json = json_object()))
                        return -ENOMEM;
        }
        if ((r = journal_count_sweeps(j, &count)) < 0)
                return r;
        if (journal_schema_version(j) >= 6) {
                _cleanup_free_ char *wtext = NULL;
                if ((r = journal_workload(j, &wtext, &v->workload_hash)) < 0)
                        return r;
        }
        v->earlier_sweeps = count > 0 ? count - 1 : 0;
        _cleanup_free_ char *first = NULL;
        if ((r = load_eval_settings(j, v)) < 0 || (r = load_search_settings(j, v, &first)) < 0 ||
            (r = load_cells(j, v)) < 0 || (r = report_view_apply_eval(v)) < 0 || (r = load_provenance(j, v)) < 0)
                return r;
        for (size_t i = 0; first && i < v->n_cells; i++)
                if (strcmp(v->cells[i].id, first) == 0)
                        v->search.first = (long)i;
        if (v->search.on && (r = search_view_fill(v)) < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

/* ---- the evidence, taken apart once ---- */

int report_evidence_parse(const char *evidence, enum verdict v, struct report_evidence *ret) {
        /* what diagnose_exit and a startup timeout write: "STATUS; first error line: X" */
        static const struct {
                const char *mark;
                enum report_evidence_kind kind;
        } quotes[] = {
                {"; first error line: ", REPORT_EVIDENCE_FIRST_ERROR},
                {"; last log line: ", REPORT_EVIDENCE_LAST_LINE},
        };
        struct report_evidence e = {
                .kind = evidence ? REPORT_EVIDENCE_WHOLE : REPORT_EVIDENCE_NONE,
                .source = v == VERDICT_GARBAGE || v == VERDICT_WRONG ? REPORT_SOURCE_ANSWER : REPORT_SOURCE_LOG,
        };
        if (!evidence) {
                *ret = e;
                return 0;
        }
        const char *s = evidence;
        for (size_t i = 0; i < ELEMENTSOF(quotes); i++) {
                const char *q = strstr(evidence, quotes[i].mark);
                if (q) {
                        s = q + strlen(quotes[i].mark);
                        e.kind = quotes[i].kind;
                        break;
                }
        }
        while (*s == ' ' || *s == '\t')
                s++;
        size_t n = strcspn(s, "\n");
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                n--;
        if (n >= 4 && !(e.line = strndup(s, MIN(n, (size_t)REPORT_EVIDENCE_LINE_MAX))))
                return -ENOMEM;
        *ret = e;
        return 0;
}

/* ---- the log excerpts ---- */

struct log_line {
        size_t no;            /* 1-based */
        size_t len;
        char text[REPORT_LOG_LINE_KEEP + 1];
};

#define EXCERPT_RING MAX(REPORT_LOG_BEFORE, REPORT_LOG_TAIL)
#define EXCERPT_MAX MAX(REPORT_LOG_BEFORE + 1 + REPORT_LOG_AFTER, REPORT_LOG_TAIL)

struct excerpt {
        struct log_line ring[EXCERPT_RING];   /* the latest lines, by no % EXCERPT_RING */
        struct log_line cur;
        struct log_line lines[EXCERPT_MAX];
        size_t n_lines;
        char norm[REPORT_LOG_LINE_KEEP + 1];  /* scratch: the current line as evidence reads */
        int match;                            /* index in lines of the evidence line; -1 */
        size_t after_left;
        size_t total;                         /* lines read */
        bool scan_cut;                        /* stopped at REPORT_LOG_SCAN_MAX */
};

/* The text as diagnosis made its evidence of it: blanks trimmed at the start, control
 * characters as '?'. */
static void normalized(const struct log_line *l, char *out) {
        size_t i = 0, k = 0;
        while (i < l->len && (l->text[i] == ' ' || l->text[i] == '\t'))
                i++;
        for (; i < l->len; i++) {
                unsigned char ch = (unsigned char)l->text[i];
                out[k++] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : (char)ch;
        }
        out[k] = 0;
}

static void excerpt_line_done(struct excerpt *e, const char *needle) {
        struct log_line *l = &e->cur;
        l->no = ++e->total;
        if (l->len > 0 && l->text[l->len - 1] == '\r')
                l->text[--l->len] = 0;
        if (e->match >= 0) {
                if (e->after_left > 0) {
                        e->lines[e->n_lines++] = *l;
                        e->after_left--;
                }
        } else {
                normalized(l, e->norm);
                if (needle && strstr(e->norm, needle)) {
                        size_t before = MIN((size_t)REPORT_LOG_BEFORE, l->no - 1);
                        for (size_t k = l->no - before; k < l->no; k++)
                                e->lines[e->n_lines++] = e->ring[k % EXCERPT_RING];
                        e->match = (int)e->n_lines;
                        e->lines[e->n_lines++] = *l;
                        e->after_left = REPORT_LOG_AFTER;
                } else
                        e->ring[l->no % EXCERPT_RING] = *l;
        }
        l->len = 0;
        l->text[0] = 0;
}

/* Reads the open log fd looking for the line that holds needle (NULL: none), keeping the
 * lines around it, or the last lines. */
static int excerpt_read(int fd, const char *needle, struct excerpt *e) {
        char chunk[65536];
        size_t scanned = 0;
        e->match = -1;
        for (;;) {
                ssize_t k = read(fd, chunk, sizeof(chunk));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                for (ssize_t i = 0; i < k; i++) {
                        if (chunk[i] == '\n') {
                                excerpt_line_done(e, needle);
                                if (e->match >= 0 && e->after_left == 0)
                                        return 0;
                        } else if (e->cur.len < REPORT_LOG_LINE_KEEP) {
                                e->cur.text[e->cur.len++] = chunk[i];
                                e->cur.text[e->cur.len] = 0;
                        }
                }
                scanned += (size_t)k;
                if (scanned >= REPORT_LOG_SCAN_MAX) {
                        e->scan_cut = true;
                        break;
                }
        }
        if (e->cur.len > 0)
                excerpt_line_done(e, needle);
        if (e->match < 0) {
                size_t n = MIN((size_t)REPORT_LOG_TAIL, e->total);
                for (size_t no = e->total - n + 1; no <= e->total; no++)
                        e->lines[e->n_lines++] = e->ring[no % EXCERPT_RING];
        }
        return 0;
}

/* Whether the file at real (a resolved path) lies under the folder root_real. */
static bool path_under(const char *real, const char *root_real) {
        size_t n = strlen(root_real);
        return strncmp(real, root_real, n) == 0 && (real[n] == '/' || (n == 1 && root_real[0] == '/'));
}

/* The excerpt of one log. root_real: the journal's run folder resolved, NULL when it does
 * not exist (then no log is under it). */
static int load_log(const struct report_view *v, const struct report_cell *c, const char *root,
                    const char *root_real, struct report_log *l) {
        if (!c->log_path || !*c->log_path) {
                l->state = REPORT_LOG_NONE;
                return 0;
        }
        _cleanup_free_ char *joined = NULL, *real = NULL;
        const char *path = c->log_path;
        real = realpath(path, NULL);
        /* A relative path is relative to where the sweep ran. */
        if (!real && errno == ENOENT && path[0] != '/' && v->cwd) {
                if (!(joined = strdup_printf("%s/%s", v->cwd, c->log_path)))
                        return -ENOMEM;
                real = realpath(joined, NULL);
                if (real || errno != ENOENT)
                        path = joined;
        }
        int err = real ? 0 : errno;
        if (err == ENOMEM)
                return -ENOMEM;
        if (!(l->path = strdup(err == ENOENT ? c->log_path : path)))
                return -ENOMEM;
        if (!real) {
                l->state = err == ENOENT ? REPORT_LOG_MISSING : REPORT_LOG_UNREADABLE;
                l->error = -err;
                return 0;
        }
        /* A journal is data: a log_path that leads out of the run folder (edited, or a
         * symlink in it) is named and not read. */
        if (!root_real || !path_under(real, root_real)) {
                l->state = REPORT_LOG_OUTSIDE;
                return (l->root = strdup(root)) ? 0 : -ENOMEM;
        }
        _cleanup_close_ int fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        struct stat st;
        int r = 0;
        if (fd < 0 || fstat(fd, &st) < 0)
                r = -errno;
        /* A FIFO or a device could block or never end: only regular files are logs. */
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        _cleanup_free_ struct excerpt *e = r < 0 ? NULL : calloc(1, sizeof(*e));
        if (r >= 0 && !e)
                return -ENOMEM;
        if (r >= 0)
                r = excerpt_read(fd, c->ev.line, e);
        if (r < 0) {
                l->state = REPORT_LOG_UNREADABLE;
                l->error = r;
                return 0;
        }
        l->state = REPORT_LOG_READ;
        l->empty = e->total == 0;
        l->scan_cut = e->scan_cut;
        l->match = e->match;
        if (e->n_lines && !(l->lines = calloc(e->n_lines, sizeof(*l->lines))))
                return -ENOMEM;
        for (size_t i = 0; i < e->n_lines; i++) {
                l->lines[i].no = e->lines[i].no;
                if (!(l->lines[i].text = strdup(e->lines[i].text)))
                        return -ENOMEM;
                l->n_lines++;
        }
        return 0;
}

int report_load_logs(struct report_view *v) {
        _cleanup_free_ char *root = v->journal_path ? journal_log_root(v->journal_path) : strdup("");
        if (!root)
                return -ENOMEM;
        _cleanup_free_ char *root_real = *root ? realpath(root, NULL) : NULL;
        /* a NAME.logs.db journal of before journal_log_root changed: its logs where they were */
        if (!root_real && v->journal_path) {
                char *before = journal_log_root_before(v->journal_path);
                if (before && (root_real = realpath(before, NULL))) {
                        free(root);
                        root = before;
                } else
                        free(before);
        }
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                if (c->excluded || !c->has_attempt || c->verdict == VERDICT_PASS || c->verdict == VERDICT_SKIPPED)
                        continue;
                report_log_release(&c->log);
                c->log.match = -1;
                int r = load_log(v, c, root, root_real, &c->log);
                if (r < 0)
                        return r;
        }
        return 0;
}
