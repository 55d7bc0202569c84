/* search_view.c -- a report view read as the search's space and observations. */
#include "results/search_view.h"

#include <math.h>
#include <string.h>

#include "base/profile.h"
#include "text/buf.h"

void search_fit_free(struct search_fit *f) {
        if (!f)
                return;
        search_model_free(f->model);
        for (size_t k = 0; f->kinds && k < f->space.n_cells; k++)
                free(f->kinds[k]);
        free(f->kinds);
        for (size_t a = 0; f->value_names && a < f->space.n_axes; a++)
                free(f->value_names[a]);
        free(f->value_names);
        free(f->obs);
        free(f->n_values);
        free(f->choice);
        free(f->axis_names);
        free(f->flags);
        free(f->words);
        free(f->aliases);
        free(f->other_words);
        free(f->spellings);
        free(f->forms);
        free(f->ids);
        free(f);
}

/* What cell c's settled launches took: every phase of each. */
static usec_t cell_spent(const struct report_cell *c) {
        usec_t t = c->earlier_spent;
        for (int p = 0; p < _PHASE_MAX; p++)
                t += c->phase[p];
        return t;
}

/* The value index of name on axis a, added when new (in order of first appearance, which
 * for a grid's row-major order is the matrix's own order). */
static int value_index(struct search_fit *f, size_t a, const char *name, size_t n_cells, size_t *ret) {
        for (size_t i = 0; i < f->n_values[a]; i++)
                if (strcmp(f->value_names[a][i], name) == 0) {
                        *ret = i;
                        return 0;
                }
        if (f->n_values[a] >= 256 || f->n_values[a] >= n_cells)
                return -EINVAL;
        f->value_names[a][f->n_values[a]] = name;
        *ret = f->n_values[a]++;
        return 0;
}

int search_fit_view(const struct report_view *v, struct search_fit **ret) {
        return search_fit_view_pending(v, NULL, ret);
}

int search_fit_view_pending(const struct report_view *v, const bool *pending, struct search_fit **ret) {
        size_t A = v->n_axes, N = v->n_cells;
        if (A == 0 || N == 0 || A > 16)
                return -EINVAL;
        struct search_fit *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->space.n_axes = A;
        f->space.n_cells = N;
        f->obs = calloc(N, sizeof(*f->obs));
        f->n_values = calloc(A, sizeof(size_t));
        f->choice = calloc(N * A, sizeof(size_t));
        f->axis_names = calloc(A, sizeof(char *));
        f->flags = calloc(A, sizeof(char *));
        f->words = calloc(A, sizeof(*f->words));
        f->aliases = calloc(A, sizeof(*f->aliases));
        f->spellings = calloc(A, sizeof(*f->spellings));
        f->forms = calloc(A, sizeof(*f->forms));
        f->ids = calloc(N, sizeof(char *));
        f->kinds = calloc(N, sizeof(char *));
        f->value_names = calloc(A, sizeof(char **));
        int r = 0;
        if (!f->obs || !f->n_values || !f->choice || !f->axis_names || !f->flags || !f->words || !f->aliases ||
            !f->spellings || !f->forms ||
            !f->ids || !f->kinds || !f->value_names)
                r = -ENOMEM;
        const struct profile *engine = profile_find(v->engine);
        for (size_t a = 0; r == 0 && a < A; a++) {
                f->axis_names[a] = v->axes[a];
                f->flags[a] = v->search.flags && a < strv_length(v->search.flags) && v->search.flags[a][0]
                                      ? v->search.flags[a]
                                      : NULL;
                /* how the engine's messages name the axis (profile.h), beside the flag's words */
                f->words[a] = profile_axis_words(engine, f->flags[a]);
                f->aliases[a] = profile_axis_aliases(engine, f->flags[a]);
                f->forms[a] = profile_axis_forms(engine, f->flags[a]);
                f->spellings[a] = v->search.spellings && a < strv_length(v->search.flags)
                                          ? (const char *const *)v->search.spellings[a]
                                          : NULL;
                if (!(f->value_names[a] = calloc(MIN(N, (size_t)256), sizeof(char *))))
                        r = -ENOMEM;
        }
        if (r == 0)
                r = profile_other_words(engine, (const char *const *)f->flags, A, &f->other_words);
        bool by_bench = report_by_bench(v), higher_set = false;
        f->space.higher_better = true;
        for (size_t k = 0; r == 0 && k < N; k++) {
                const struct report_cell *c = &v->cells[k];
                f->ids[k] = c->id;
                for (size_t a = 0; r == 0 && a < A; a++)
                        r = value_index(f, a, c->axis_values && c->axis_values[a] ? c->axis_values[a] : "?", N,
                                        &f->choice[k * A + a]);
                struct search_obs *o = &f->obs[k];
                o->launches = c->launches;
                o->abandoned = c->abandoned;
                o->seconds = (double)cell_spent(c) / USEC_PER_SEC;
                o->pending = pending && pending[k];
                if (c->excluded || (c->verdict == VERDICT_SKIPPED && !streq_ptr(c->cause, "pruned"))) {
                        o->state = SEARCH_OUT;
                } else if (!c->has_attempt || c->verdict == VERDICT_SKIPPED) {
                        o->state = SEARCH_UNKNOWN;
                } else if (c->verdict == VERDICT_PASS) {
                        struct report_score s;
                        o->state = SEARCH_FEASIBLE;
                        if (report_cell_score(v, c, by_bench, &s) == 0 && isfinite(s.value) && s.value > 0) {
                                o->has_value = true;
                                o->value = report_cell_pooled(v, c, by_bench, s.value, &o->measured);
                                if (!higher_set)
                                        f->space.higher_better = s.higher_better;
                                higher_set = true;
                        }
                } else {
                        o->state = SEARCH_INFEASIBLE;
                        f->kinds[k] = c->cause ? strdup_printf("%s/%s", verdict_to_string(c->verdict), c->cause)
                                               : strdup(verdict_to_string(c->verdict));
                        if (!f->kinds[k])
                                r = -ENOMEM;
                        o->kind = f->kinds[k];
                        o->evidence = c->evidence;
                }
        }
        if (r < 0) {
                search_fit_free(f);
                return r;
        }
        f->space.n_values = f->n_values;
        f->space.axis_names = f->axis_names;
        f->space.value_names = (const char *const *const *)f->value_names;
        f->space.axis_flags = f->flags;
        f->space.axis_words = f->words;
        f->space.axis_aliases = f->aliases;
        f->space.other_words = f->other_words;
        f->space.axis_spellings = f->spellings;
        f->space.axis_forms = f->forms;
        f->space.choice = f->choice;
        f->space.ids = f->ids;
        /* the cell it starts from: the journaled one, else the least distance, earliest */
        long first = v->search.first;
        for (size_t k = 0; first < 0 && k < N; k++)
                if (f->obs[k].state != SEARCH_OUT)
                        first = (long)k;
        for (size_t k = 0; first >= 0 && v->search.first < 0 && k < N; k++)
                if (f->obs[k].state != SEARCH_OUT && v->cells[k].distance < v->cells[first].distance)
                        first = (long)k;
        f->space.first = first < 0 ? 0 : (size_t)first;
        if ((r = search_model_fit(&f->space, f->obs, &f->model)) < 0) {
                search_fit_free(f);
                return r;
        }
        *ret = f;
        return 0;
}

/* The launched cells' time in all: every phase of each of their launches. */
static usec_t spent(const struct report_view *v) {
        usec_t t = 0;
        for (size_t k = 0; k < v->n_cells; k++)
                if (v->cells[k].has_attempt && v->cells[k].verdict != VERDICT_SKIPPED)
                        t += cell_spent(&v->cells[k]);
        return t;
}

int search_fit_decide(const struct search_fit *f, const struct report_view *v, bool no_prune,
                      struct search_decision *ret) {
        struct search_options o = {.max_launches = no_prune ? 0 : v->search.budget_launches, .no_prune = no_prune};
        if (v->search.budget_time) {
                o.timed = true;
                o.time_left = ((double)v->search.budget_time - (double)spent(v)) / USEC_PER_SEC;
        }
        return search_model_decide(f->model, &o, ret);
}

static int by_start(const void *x, const void *y, void *userdata) {
        const struct report_view *v = userdata;
        const struct report_cell *a = &v->cells[*(const size_t *)x], *b = &v->cells[*(const size_t *)y];
        if (a->started_wall != b->started_wall)
                return a->started_wall < b->started_wall ? -1 : 1;
        return a->attempt_id < b->attempt_id ? -1 : a->attempt_id > b->attempt_id;
}

int search_view_fill(struct report_view *v) {
        struct report_view_search *s = &v->search;
        s->next = -1;
        s->stop = NULL;
        s->has_named = false;
        s->top = -1;
        s->top_estimate = NAN;
        s->launched = s->launches = s->abandoned = s->retried = s->pruned = s->inferred = 0;
        for (size_t k = 0; k < v->n_cells; k++) {
                const struct report_cell *c = &v->cells[k];
                s->launches += c->abandoned;
                s->abandoned += c->abandoned;
                if (c->excluded || !c->has_attempt)
                        continue;
                if (c->verdict != VERDICT_SKIPPED) {
                        s->launched++;
                        s->launches += MAX(c->launches, 1u);
                        s->retried += c->retried;
                }
                else if (streq_ptr(c->cause, "pruned"))
                        s->pruned++;
                else if (streq_ptr(c->cause, "inferred"))
                        s->inferred++;
        }
        s->spent = spent(v);
        s->spent_failed = s->spent_served = 0;
        s->failed = 0;
        for (size_t k = 0; k < v->n_cells; k++) {
                const struct report_cell *c = &v->cells[k];
                if (c->excluded || !c->has_attempt || c->verdict == VERDICT_SKIPPED)
                        continue;
                *(c->verdict == VERDICT_PASS ? &s->spent_served : &s->spent_failed) += cell_spent(c);
                s->failed += c->verdict != VERDICT_PASS;
        }
        free(s->order);
        free(s->best_so_far);
        s->order = calloc(s->launched + 1, sizeof(size_t));
        s->best_so_far = calloc(s->launched + 1, sizeof(double));
        if (!s->order || !s->best_so_far)
                return -ENOMEM;
        size_t n = 0;
        for (size_t k = 0; k < v->n_cells; k++)
                if (!v->cells[k].excluded && v->cells[k].has_attempt && v->cells[k].verdict != VERDICT_SKIPPED)
                        s->order[n++] = k;
        qsort_r(s->order, n, sizeof(size_t), by_start, v);
        bool by_bench = report_by_bench(v);
        double best = NAN;
        for (size_t i = 0; i < n; i++) {
                struct report_score sc;
                if (report_cell_score(v, &v->cells[s->order[i]], by_bench, &sc) == 0 &&
                    (isnan(best) || (sc.higher_better ? sc.value > best : sc.value < best)))
                        best = sc.value;
                s->best_so_far[i] = best;
        }
        _cleanup_search_fit_ struct search_fit *f = NULL;
        int r = search_fit_view(v, &f);
        if (r == -EINVAL)
                return 0; /* no axes: nothing to search */
        if (r < 0)
                return r;
        struct search_decision d;
        if ((r = search_fit_decide(f, v, false, &d)) < 0)
                return r;
        s->stop = d.stop;
        free(TAKE_PTR(s->stop_why));
        if (d.why[0] && !(s->stop_why = strdup(d.why)))
                return -ENOMEM;
        s->next = d.next >= 0 ? d.next : d.would_next;
        long named = search_model_named(f->model), top = search_model_best(f->model);
        if (named >= 0) {
                struct search_prediction p;
                search_model_predict(f->model, (size_t)named, &p);
                s->has_named = true;
                s->named = (size_t)named;
                s->named_estimate = p.mean;
                if (top >= 0 && top != named) {
                        search_model_predict(f->model, (size_t)top, &p);
                        s->top = top;
                        s->top_estimate = p.mean;
                }
        }
        free(TAKE_PTR(s->next_why));
        if (s->next >= 0) {
                struct search_prediction p;
                search_model_predict(f->model, (size_t)s->next, &p);
                _cleanup_buf_ struct buf b;
                buf_init(&b, 1024);
                if (isnan(p.mean))
                        buf_printf(&b, "%.0f%% chance to serve right", 100 * p.p_feasible);
                else
                        buf_printf(&b, "predicted %.4g (up to %.4g), %.0f%% chance to serve right, %.0f%% to beat the best",
                                   p.mean, p.high, 100 * p.p_feasible, 100 * p.chance);
                if (!(s->next_why = buf_detach(&b)))
                        return -ENOMEM;
        }
        return 0;
}
