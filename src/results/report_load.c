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

#include "gate/diagnose.h"
#include "proc/provenance.h"
#include "results/search_view.h"
#include "text/placeholder.h"
#include "text/text.h"

/* A copy of s into *ret (NULL stays NULL); false: out of memory. */
static bool strdup_ok(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return !s || *ret;
}

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

static int add_check(const struct journal_check_row *row, void *userdata) {
        struct report_cell *c = userdata;
        struct report_check *t = realloc(c->checks, (c->n_checks + 1) * sizeof(*t));
        if (!t)
                return -ENOMEM;
        c->checks = t;
        struct report_check *k = &c->checks[c->n_checks++];
        *k = (struct report_check){
                .verdict = row->verdict,
                .http_status = row->http_status,
                .latency = row->latency,
                .ttft = row->ttft,
                .streamed = row->streamed,
        };
        if (!strdup_ok(row->name, &k->name) || !strdup_ok(row->cause, &k->cause) ||
            !strdup_ok(row->evidence, &k->evidence) || !strdup_ok(row->output, &k->output) ||
            !strdup_ok(row->reasoning, &k->reasoning) || !strdup_ok(row->finish_reason, &k->finish_reason) ||
            !strdup_ok(row->detail, &k->detail))
                return -ENOMEM;
        return 0;
}

struct answers_load {
        struct report_cell *c;
        size_t alloc;
};

static int add_eval_answer(const struct journal_eval_row *row, void *userdata) {
        struct answers_load *al = userdata;
        struct report_cell *c = al->c;
        if (c->eval.n_answers == al->alloc) {
                size_t na = al->alloc ? al->alloc * 2 : 64;
                struct report_eval_answer *t = realloc(c->eval.answers, na * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                c->eval.answers = t;
                al->alloc = na;
        }
        struct report_eval_answer *e = &c->eval.answers[c->eval.n_answers++];
        *e = (struct report_eval_answer){
                .verdict = row->verdict,
                .http_status = row->http_status,
                .latency = row->latency,
        };
        if (!strdup_ok(row->qid, &e->id) || !strdup_ok(row->qkey, &e->key) || !strdup_ok(row->question, &e->question) ||
            !strdup_ok(row->cause, &e->cause) || !strdup_ok(row->evidence, &e->evidence) ||
            !strdup_ok(row->output, &e->output) || !strdup_ok(row->finish_reason, &e->finish_reason))
                return -ENOMEM;
        _cleanup_(json_decrefp) json_t *lp = row->logprobs ? json_loads(row->logprobs, 0, NULL) : NULL;
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
        return 0;
}

/* The eval answers of the cell's attempt, when it answered the view's question set. */
static int load_eval(struct journal *j, const struct report_view *v, struct report_cell *c, const char *set) {
        int r;
        if (!v->eval.on || !set)
                return 0;
        if (strcmp(set, v->eval.set) != 0) {
                c->eval.other_set = true;
                return 0;
        }
        struct answers_load al = {.c = c};
        if ((r = journal_attempt_eval(j, c->attempt_id, add_eval_answer, &al)) < 0)
                return r;
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

/* The cell's launches, oldest first, as add_launch reads them. */
struct launches {
        struct report_cell *c;
        bool failed;          /* the launch before failed */
};

/* A launch of the cell: counted (and whether it followed a failed one), and the bench of an
 * earlier one that passed kept (a cell measured again: docs/search.md). */
static int add_launch(const struct journal_attempt_row *row, void *userdata) {
        struct launches *l = userdata;
        struct report_cell *c = l->c;
        c->launches++;
        c->retried += l->failed;
        l->failed = row->verdict != VERDICT_PASS;
        if (row->id != c->attempt_id)
                c->earlier_spent += row->spent;
        if (row->id == c->attempt_id || row->verdict != VERDICT_PASS || !row->bench)
                return 0;
        json_t *b = json_loads(row->bench, 0, NULL);
        if (!json_is_array(b)) {
                json_decref(b);
                return 0;
        }
        size_t n = json_array_size(c->earlier);
        usec_t *started = realloc(c->earlier_started, (n + 1) * sizeof(usec_t));
        if (started)
                c->earlier_started = started;
        if (!started || (!c->earlier && !(c->earlier = json_array()))) {
                json_decref(b);
                return -ENOMEM;
        }
        if (json_array_append_new(c->earlier, b) < 0) /* it drops b */
                return -ENOMEM;
        started[n] = row->started_wall;
        return 0;
}

static json_t *json_of(const char *text, bool (*is)(const json_t *)) {
        json_t *x = text ? json_loads(text, 0, NULL) : NULL;
        if (x && !is(x)) {
                json_decref(x);
                return NULL;
        }
        return x;
}
static bool is_array(const json_t *x) { return json_is_array(x); }
static bool is_object(const json_t *x) { return json_is_object(x); }

struct shown {
        struct report_cell *c;
        char *eval_set;
};

/* The attempt a report shows for the cell, into the cell. */
static int take_attempt(const struct journal_attempt_row *row, void *userdata) {
        struct shown *sh = userdata;
        struct report_cell *c = sh->c;
        c->has_attempt = true;
        c->attempt_id = row->id;
        c->attempt_sweep_id = row->sweep_id;
        c->verdict = row->verdict;
        c->started_wall = row->started_wall;
        c->port = row->port;
        memcpy(c->phase, row->phase, sizeof(c->phase));
        c->ready_after = row->ready_after;
        c->exit_code = row->exit_code;
        c->exit_signal = row->exit_signal;
        c->peak_gpu_mem_mib = row->peak_gpu_mem_mib;
        if (!strdup_ok(row->cause, &c->cause) || !strdup_ok(row->evidence, &c->evidence) ||
            !strdup_ok(row->log_path, &c->log_path) || !strdup_ok(row->eval_set, &sh->eval_set))
                return -ENOMEM;
        c->bench = json_of(row->bench, is_array);
        c->prediction = json_of(row->prediction, is_object);
        return report_evidence_parse(c->evidence, c->verdict, &c->ev);
}

/* The latest settled, non-skipped attempt of the cell, if any (one of the view's workload:
 * docs/journal.md "One workload per journal"); a cell whose figures are all of another
 * workload is left out, as if not run, and counted. */
static int load_attempt(struct journal *j, struct report_view *v, struct report_cell *c) {
        _cleanup_free_ char *set = NULL;
        struct shown sh = {.c = c};
        int r = journal_cell_shown_attempt(j, c->id, v->workload_hash, take_attempt, &sh);
        set = sh.eval_set;
        if (r == -ENOENT) {
                if ((r = journal_cell_other_workload(j, c->id, v->workload_hash, &c->other_workload)) < 0)
                        return r;
                v->workload_left_out += c->other_workload;
                return 0;
        }
        if (r < 0)
                return r;
        c->eval.journal_verdict = c->verdict;
        if ((r = load_eval(j, v, c, set)) < 0 ||
            (c->verdict != VERDICT_SKIPPED &&
             (r = journal_cell_launches(j, c->id, v->workload_hash, add_launch, &(struct launches){.c = c})) < 0))
                return r;
        return journal_attempt_checks(j, c->attempt_id, add_check, c);
}

/* The latest sweep's eval settings (sweeps.eval), when it has any. */
static int load_eval_settings(struct report_view *v, const char *text) {
        v->eval.reference = -1;
        json_t *e = json_of(text, is_object);
        if (!e)
                return 0;
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
static int load_search_settings(struct report_view *v, const char *text, char **ret_first) {
        v->search.first = -1;
        v->search.next = -1;
        _cleanup_(json_decrefp) json_t *e = json_of(text, is_object);
        int r;
        if (!e)
                return 0;
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
        size_t n_flags = strv_length(vs->flags);
        json_t *sp = json_object_get(e, "spellings");
        if (n_flags && json_is_array(sp) && !(vs->spellings = calloc(n_flags, sizeof(char **))))
                return -ENOMEM;
        json_array_foreach(sp, i, x) {
                size_t k;
                json_t *pair;
                json_array_foreach(i < n_flags ? x : NULL, k, pair) {
                        const char *spelled = json_string_value(json_array_get(pair, 0)),
                                   *name = json_string_value(json_array_get(pair, 1));
                        if (spelled && name &&
                            ((r = strv_push(&vs->spellings[i], spelled)) < 0 || (r = strv_push(&vs->spellings[i], name)) < 0))
                                return r;
                }
        }
        const char *first = json_string_value(json_object_get(e, "first"));
        if (first && !(*ret_first = strdup(first)))
                return -ENOMEM;
        return 0;
}

struct cells_load {
        struct journal *j;
        struct report_view *v;
        size_t alloc;
};

static int add_cell(const struct journal_sweep_cell_row *row, void *userdata) {
        struct cells_load *cl = userdata;
        struct report_view *v = cl->v;
        int r;
        if (v->n_cells == cl->alloc) {
                size_t na = cl->alloc ? cl->alloc * 2 : 16;
                struct report_cell *t = realloc(v->cells, na * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                v->cells = t;
                cl->alloc = na;
        }
        struct report_cell *c = &v->cells[v->n_cells++];
        *c = (struct report_cell){
                .position = row->position,
                .distance = row->distance,
                .excluded = row->excluded,
                .verdict = VERDICT_INVALID,
                .exit_code = -1,
        };
        snprintf(c->id, sizeof(c->id), "%s", row->cell_id ? row->cell_id : "");
        if ((r = strv_from_json(row->argv, &c->argv)) < 0 || (r = strv_from_json(row->env, &c->env)) < 0)
                return r;
        c->axis_values = calloc(v->n_axes + 1, sizeof(char *));
        if (!c->axis_values)
                return -ENOMEM;
        _cleanup_(json_decrefp) json_t *axes = row->axes ? json_loads(row->axes, 0, NULL) : NULL;
        for (size_t i = 0; i < v->n_axes; i++) {
                const char *val = json_string_value(json_object_get(axes, v->axes[i]));
                if (val && !(c->axis_values[i] = strdup(val)))
                        return -ENOMEM;
        }
        /* the cell's abandoned attempts: shown beside it, and under strategy search they
         * count against budget.launches (docs/search.md "Budget") */
        int64_t abandoned = 0;
        if ((r = journal_cell_abandoned(cl->j, c->id, v->workload_hash, &abandoned, &c->abandon_reason)) < 0)
                return r;
        c->abandoned = (unsigned)abandoned;
        if (c->excluded) {
                c->verdict = VERDICT_SKIPPED;
                if (!(c->cause = strdup("excluded")))
                        return -ENOMEM;
        } else if ((r = load_attempt(cl->j, v, c)) < 0)
                return r;
        const char *host = v->host ? v->host : "127.0.0.1";
        return placeholder_fill_argv(c->argv, host, c->port ? c->port : v->port, &c->command);
}

struct sweep_load {
        struct report_view *v;
        char *eval, *search;
};

static int take_sweep(const struct journal_sweep_row *row, void *userdata) {
        struct sweep_load *sl = userdata;
        struct report_view *v = sl->v;
        int r;
        v->sweep_id = row->id;
        v->sweep_started_wall = row->started_wall;
        v->port = row->port;
        v->startup_timeout = row->startup_timeout;
        if (!strdup_ok(row->how, &v->sweep_how) || !strdup_ok(row->version, &v->version) ||
            !strdup_ok(row->matrix_path, &v->matrix_path) || !strdup_ok(row->matrix_text, &v->matrix_text) ||
            !strdup_ok(row->engine, &v->engine) || !strdup_ok(row->model, &v->model) ||
            !strdup_ok(row->objective, &v->objective) || !strdup_ok(row->bind_host, &v->host) ||
            !strdup_ok(row->workdir, &v->workdir) || !strdup_ok(row->cwd, &v->cwd) ||
            !strdup_ok(row->eval, &sl->eval) || !strdup_ok(row->search, &sl->search))
                return -ENOMEM;
        if ((r = strv_from_json(row->axes, &v->axes)) < 0)
                return r;
        v->n_axes = strv_length(v->axes);
        v->host_json = json_of(row->host_json, is_object);
        if (!v->host_json && !(v->host_json = json_object()))
                return -ENOMEM;
        v->against = json_of(row->against, is_object);
        return 0;
}

/* One JSON object (a provenance record, a bench sample) into the array ctx; a row that is
 * not an object is left out. */
static int add_json_object(const char *json, void *ctx) {
        json_t *o = json ? json_loads(json, 0, NULL) : NULL;
        if (!json_is_object(o)) {
                json_decref(o);
                return 0;
        }
        return json_array_append_new(ctx, o) < 0 ? -ENOMEM : 0;
}

/* The provenance objects of sweep_id, in the journal's order, into *ret (NULL: none). */
static int load_sweep_provenance(struct journal *j, int64_t sweep_id, json_t **ret) {
        *ret = NULL;
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        int r = journal_sweep_provenance(j, sweep_id, add_json_object, a);
        if (r < 0)
                return r;
        if (json_array_size(a) > 0)
                *ret = TAKE_PTR(a);
        return 0;
}

/* The latest sweep's provenance, and what changed since the latest earlier sweep that has
 * one. A journal without the table (before schema 7) has none. */
static int load_provenance(struct journal *j, struct report_view *v) {
        int r = load_sweep_provenance(j, v->sweep_id, &v->provenance);
        if (r < 0 || !v->provenance)
                return r;
        int64_t before_id = 0;
        if ((r = journal_provenance_before(j, v->sweep_id, &before_id)) <= 0)
                return r;
        v->provenance_since = before_id;
        _cleanup_json_ json_t *before = NULL;
        if ((r = load_sweep_provenance(j, before_id, &before)) < 0 || !before)
                return r;
        return provenance_diff(json_array_get(before, 0), json_array_get(v->provenance, 0), &v->provenance_changes);
}

/* A journaled verdict (the verdicts table) onto the cell of the view that shows its attempt. */
static int take_journaled(const struct journal_verdict_row *row, void *userdata) {
        struct report_view *v = userdata;
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                if (c->has_attempt && !c->excluded && c->attempt_id == row->attempt_id)
                        return report_cell_take_verdict(v, c, row->verdict, row->cause, row->evidence);
        }
        return 0;
}

/* The view of sweep_id, or of the latest sweep (0). journaled: the verdicts the run journaled for it win over the
 * decision made here (a cell without one keeps this load's); else the decision is this
 * load's alone (report_settle_verdicts, which journals it), and what no verdict depends on
 * (the provenance, the search's figures) is left out. */
static int load_view(struct journal *j, int64_t sweep_id, bool journaled, struct report_view **ret) {
        _cleanup_report_view_ struct report_view *v = calloc(1, sizeof(*v));
        struct sweep_load sl = {.v = v};
        int64_t count = 0;
        int r;

        if (!v || !(v->journal_path = strdup(journal_path(j))))
                return -ENOMEM;
        r = sweep_id ? journal_sweep(j, sweep_id, take_sweep, &sl) : journal_latest_sweep(j, take_sweep, &sl);
        _cleanup_free_ char *eval = sl.eval, *search = sl.search;
        if (r < 0)
                return r;
        if ((r = journal_count_sweeps(j, &count)) < 0)
                return r;
        _cleanup_free_ char *wtext = NULL;
        if ((r = journal_workload(j, &wtext, &v->workload_hash)) < 0)
                return r;
        v->earlier_sweeps = count > 0 ? count - 1 : 0;
        _cleanup_free_ char *first = NULL;
        struct cells_load cl = {.j = j, .v = v};
        if ((r = load_eval_settings(v, eval)) < 0 || (r = load_search_settings(v, search, &first)) < 0 ||
            (r = journal_sweep_cells(j, v->sweep_id, add_cell, &cl)) < 0 || (r = report_view_apply_eval(v)) < 0)
                return r;
        if (!journaled) {
                *ret = TAKE_PTR(v);
                return 0;
        }
        if ((r = journal_sweep_verdicts(j, v->sweep_id, take_journaled, v)) < 0 || (r = load_provenance(j, v)) < 0)
                return r;
        for (size_t i = 0; first && i < v->n_cells; i++)
                if (strcmp(v->cells[i].id, first) == 0)
                        v->search.first = (long)i;
        if (v->search.on && (r = search_view_fill(v)) < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

int report_load_view(struct journal *j, struct report_view **ret) {
        return load_view(j, 0, true, ret);
}

int report_settle_verdicts(struct journal *j, int64_t sweep_id) {
        _cleanup_report_view_ struct report_view *v = NULL;
        int r = load_view(j, sweep_id, false, &v);
        if (r < 0)
                return r;
        _cleanup_free_ struct journal_verdict_row *rows = calloc(v->n_cells ? v->n_cells : 1, sizeof(*rows));
        size_t n = 0;
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                if (!c->has_attempt || c->excluded)
                        continue;
                rows[n++] = (struct journal_verdict_row){
                        .attempt_id = c->attempt_id, .verdict = c->verdict, .cause = c->cause, .evidence = c->evidence};
        }
        if ((r = journal_set_sweep_verdicts(j, v->sweep_id, rows, n)) < 0)
                return r;
        return (int)MIN(n, (size_t)INT_MAX);
}

int report_load_view_sweep(struct journal *j, int64_t sweep_id, struct report_view **ret) {
        if (sweep_id <= 0)
                return -ENOENT;
        /* the journal as it was when that sweep ended: no later attempt stands in */
        journal_read_until(j, sweep_id);
        int r = load_view(j, sweep_id, true, ret);
        journal_read_until(j, 0);
        return r;
}

int report_load_view_current(struct journal *j, int64_t sweep_id, struct report_view **ret) {
        return sweep_id > 0 ? load_view(j, sweep_id, true, ret) : -ENOENT;
}

int report_load_samples(struct journal *j, struct report_view *v) {
        for (size_t i = 0; i < v->n_cells; i++) {
                struct report_cell *c = &v->cells[i];
                if (!report_cell_passed(c) || c->samples)
                        continue;
                if (!(c->samples = json_array()))
                        return -ENOMEM;
                int r = journal_attempt_samples(j, c->attempt_id, add_json_object, c->samples);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the evidence, taken apart once ---- */

int report_evidence_parse(const char *evidence, enum verdict v, struct report_evidence *ret) {
        /* what diagnose_exit and a startup timeout write: "STATUS; first error line: X" */
        static const struct {
                const char *mark;
                enum report_evidence_kind kind;
        } quotes[] = {
                {DIAGNOSE_FIRST_ERROR, REPORT_EVIDENCE_FIRST_ERROR},
                {DIAGNOSE_LAST_LINE, REPORT_EVIDENCE_LAST_LINE},
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
        /* as diagnosis read it: without the terminal's colours */
        l->len = text_strip_ansi(l->text, l->len);
        l->text[l->len] = 0;
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
