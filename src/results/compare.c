/* compare.c -- two sweeps' views side by side (compare.h, docs/compare.md). */
#include "results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "base/rng.h"
#include "base/util.h"
#include "gate/eval.h"
#include "proc/cpustat.h"
#include "proc/provenance.h"

void compare_options_init(struct compare_options *o) {
        *o = (struct compare_options){
                .max_slowdown = 0.05,
                .max_accuracy_drop = 0.0,
                .resamples = COMPARE_RESAMPLES,
                .seed = 0x6761756e746c6574ULL,
                .max_steal = 0.05,
        };
}

const char *compare_change_name(enum compare_change c) {
        static const char *const names[] = {
                [COMPARE_SAME] = "same",         [COMPARE_REGRESSION] = "regression", [COMPARE_FIX] = "fix",
                [COMPARE_CHANGED] = "changed",   [COMPARE_MISSING] = "missing",       [COMPARE_ONLY_OLD] = "only old",
                [COMPARE_ONLY_NEW] = "only new",
        };
        return (size_t)c < ELEMENTSOF(names) ? names[c] : "?";
}

const char *compare_method_name(enum compare_method m) {
        static const char *const names[] = {
                [COMPARE_METHOD_NONE] = "none",
                [COMPARE_METHOD_BOOTSTRAP] = "bootstrap",
                [COMPARE_METHOD_REPEATS] = "repeats",
                [COMPARE_METHOD_UNKNOWN] = "unknown",
        };
        return (size_t)m < ELEMENTSOF(names) ? names[m] : "?";
}

/* ---- the bootstrap ---- */

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* The quantile q of x[0..n) (sorted in place), linear between order statistics. */
static double quantile_of(double *x, size_t n, double q) {
        qsort(x, n, sizeof(*x), cmp_double);
        double pos = q * (double)(n - 1);
        size_t i = (size_t)pos;
        if (i + 1 >= n)
                return x[n - 1];
        return x[i] + (pos - (double)i) * (x[i + 1] - x[i]);
}

/* The statistic of one side, resampled through idx (NULL: as it is); scratch holds n. */
static double side_stat(const double *w, const double *t, size_t n, const size_t *idx, double quantile,
                        double *scratch) {
        double sw = 0, st = 0;
        for (size_t i = 0; i < n; i++) {
                size_t k = idx ? idx[i] : i;
                if (w)
                        sw += w[k];
                st += t[k];
                scratch[i] = t[k];
        }
        if (w)
                return st > 0 ? sw / st : NAN;
        if (quantile > 0 && quantile < 1)
                return quantile_of(scratch, n, quantile);
        return st / (double)n;
}

int compare_bootstrap(const double *wa, const double *ta, size_t na, const double *wb, const double *tb, size_t nb,
                      double quantile, unsigned resamples, uint64_t seed, double *ret_point, double *ret_lo,
                      double *ret_hi) {
        if (na < COMPARE_MIN_SAMPLES || nb < COMPARE_MIN_SAMPLES)
                return -EINVAL;
        if (resamples == 0)
                resamples = COMPARE_RESAMPLES;
        size_t n = MAX(na, nb);
        _cleanup_free_ size_t *idx = malloc(n * sizeof(*idx));
        _cleanup_free_ double *scratch = malloc(n * sizeof(*scratch));
        _cleanup_free_ double *d = malloc(resamples * sizeof(*d));
        if (!idx || !scratch || !d)
                return -ENOMEM;
        double a0 = side_stat(wa, ta, na, NULL, quantile, scratch);
        double b0 = side_stat(wb, tb, nb, NULL, quantile, scratch);
        uint64_t st = seed;
        size_t kept = 0;
        for (unsigned r = 0; r < resamples; r++) {
                for (size_t i = 0; i < na; i++)
                        idx[i] = rng_below(&st, na);
                double a = side_stat(wa, ta, na, idx, quantile, scratch);
                for (size_t i = 0; i < nb; i++)
                        idx[i] = rng_below(&st, nb);
                double b = side_stat(wb, tb, nb, idx, quantile, scratch);
                if (isfinite(a) && isfinite(b) && a > 0)
                        d[kept++] = b / a - 1;
        }
        if (kept < resamples / 2 || !(a0 > 0) || !isfinite(b0))
                return -EINVAL;
        *ret_point = b0 / a0 - 1;
        *ret_lo = quantile_of(d, kept, 0.025);
        *ret_hi = quantile_of(d, kept, 0.975);
        return 0;
}

/* ---- the objective's change ---- */

/* What a per-request sample says of the objective's metric: its time field, and either a
 * weight (a rate: the metric is per second) or a quantile (NAN: the mean). */
struct sample_stat {
        const char *time;             /* "e2e_ms", "ttft_ms", "tpot_ms" */
        enum { WEIGHT_NONE, WEIGHT_OUTPUT, WEIGHT_TOTAL, WEIGHT_REQUEST } weight;
        double quantile;
};

static void stat_of_metric(const char *metric, size_t len, struct sample_stat *ret) {
        *ret = (struct sample_stat){.time = "e2e_ms", .weight = WEIGHT_OUTPUT, .quantile = NAN};
        static const struct {
                const char *prefix, *time;
        } times[] = {
                {"ttft_ms", "ttft_ms"}, {"tpot_ms", "tpot_ms"}, {"itl_ms", "tpot_ms"}, {"e2e", "e2e_ms"},
        };
        for (size_t i = 0; i < ELEMENTSOF(times); i++) {
                size_t n = strlen(times[i].prefix);
                if (len < n || strncmp(metric, times[i].prefix, n) != 0)
                        continue;
                ret->time = times[i].time;
                ret->weight = WEIGHT_NONE;
                const char *dot = memchr(metric, '.', len);
                if (dot && dot + 2 <= metric + len && dot[1] == 'p')
                        ret->quantile = strtod(dot + 2, NULL) / 100.0;
                else if (dot && len - (size_t)(dot - metric) == 7 && strncmp(dot, ".median", 7) == 0)
                        ret->quantile = 0.5;
                return;
        }
        if (len >= 18 && strncmp(metric, "total_tokens_per_s", 18) == 0)
                ret->weight = WEIGHT_TOTAL;
        else if (len >= 14 && strncmp(metric, "requests_per_s", 14) == 0)
                ret->weight = WEIGHT_REQUEST;
}

/* The cell's completed requests at concurrency level: times and weights (caller frees). */
static size_t samples_at(const struct report_cell *c, long level, const struct sample_stat *s, double **ret_w,
                         double **ret_t) {
        size_t n = 0, i;
        json_t *o;
        *ret_w = *ret_t = NULL;
        size_t total = json_array_size(c->samples);
        if (total == 0 || !(*ret_w = malloc(total * sizeof(double))) || !(*ret_t = malloc(total * sizeof(double))))
                return 0;
        json_array_foreach(c->samples, i, o) {
                json_t *t = json_object_get(o, s->time);
                if (json_integer_value(json_object_get(o, "concurrency")) != level ||
                    !json_is_true(json_object_get(o, "ok")) || json_integer_value(json_object_get(o, "index")) < 0 ||
                    !json_is_number(t) || !(json_number_value(t) > 0))
                        continue;
                double out = (double)json_integer_value(json_object_get(o, "counted_tokens"));
                if (out <= 0)
                        out = (double)json_integer_value(json_object_get(o, "output_tokens"));
                double w = s->weight == WEIGHT_REQUEST ? 1
                           : s->weight == WEIGHT_TOTAL
                                   ? out + (double)json_integer_value(json_object_get(o, "prompt_tokens"))
                                   : out;
                (*ret_w)[n] = w;
                (*ret_t)[n] = json_number_value(t);
                n++;
        }
        return n;
}

/* The interval from the per-request samples, around the objective's own change. */
static bool speed_bootstrap(const struct report_cell *a, const struct report_figure *fa, const struct report_cell *b,
                            const struct report_figure *fb, const struct compare_options *o, struct compare_speed *sp) {
        struct sample_stat st;
        stat_of_metric(fa->metric, fa->metric_len, &st);
        _cleanup_free_ double *wa = NULL, *ta = NULL, *wb = NULL, *tb = NULL;
        size_t na = samples_at(a, fa->level, &st, &wa, &ta), nb = samples_at(b, fb->level, &st, &wb, &tb);
        double point, lo, hi;
        if (compare_bootstrap(st.weight == WEIGHT_NONE ? NULL : wa, ta, na, st.weight == WEIGHT_NONE ? NULL : wb, tb,
                              nb, st.quantile, o->resamples, o->seed, &point, &lo, &hi) < 0)
                return false;
        sp->method = COMPARE_METHOD_BOOTSTRAP;
        sp->n_old = na;
        sp->n_new = nb;
        /* the spread the requests give, placed around the figure's own change */
        sp->lo = sp->change + (lo - point);
        sp->hi = sp->change + (hi - point);
        return true;
}

/* A client_cpu figure of the host over the cell's level (host_steal, host_others,
 * host_idle): the highest of its repeats (lowest: the lowest); NAN when unknown. */
static double level_host(const struct report_cell *c, long level, enum metric m, bool lowest) {
        size_t i;
        json_t *e;
        double s = NAN;
        char path[64];
        snprintf(path, sizeof(path), "%s.%s", metric_key(METRIC_CLIENT_CPU), metric_key(m));
        json_array_foreach(c->bench, i, e) {
                if (json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))) != level)
                        continue;
                json_t *x = json_array_get(json_object_get(json_object_get(e, metric_key(METRIC_SPREAD)), path),
                                           lowest ? 0 : 1);
                if (!json_is_number(x))
                        x = json_object_get(json_object_get(e, metric_key(METRIC_CLIENT_CPU)), metric_key(m));
                if (json_is_number(x) && (isnan(s) || (lowest ? json_number_value(x) < s : json_number_value(x) > s)))
                        s = json_number_value(x);
        }
        return s;
}

static bool same_text(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* The cell's bench entry at level, or NULL. */
static json_t *level_entry(const struct report_cell *c, long level) {
        size_t i;
        json_t *e;
        json_array_foreach(c->bench, i, e)
                if (json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))) == level)
                        return e;
        return NULL;
}

/* A level's rule of counting into *ret_rule ("" without a "count") and its bytes per token:
 * the rule's own figure where it states one, else its bytes over its tokens; NAN unknown. */
static double level_count(const struct report_cell *c, long level, const char **ret_rule, json_t **ret_count) {
        json_t *cnt = json_object_get(level_entry(c, level), "count");
        const char *r = json_string_value(json_object_get(cnt, "rule"));
        /* the journal's words, never kept: a rule gauntlet does not know is none */
        static const char *const rules[] = {"tokenizer", "bytes", "own"};
        *ret_rule = "";
        for (size_t i = 0; r && i < ELEMENTSOF(rules); i++)
                if (strcmp(r, rules[i]) == 0)
                        *ret_rule = rules[i];
        *ret_count = cnt;
        double bpt = json_number_value(json_object_get(cnt, "bytes_per_token"));
        if (bpt > 0 && isfinite(bpt))
                return bpt;
        double bytes = (double)json_integer_value(json_object_get(cnt, "bytes"));
        double tokens = (double)json_integer_value(json_object_get(cnt, "tokens"));
        return bytes > 0 && tokens > 0 ? bytes / tokens : NAN;
}

/* Whether the two sides counted apart (struct compare_speed, "counted_apart"). A level
 * counted by a tokenizer or by the cell's own counts holds its text's tokens; one counted by
 * bytes holds an estimate at its sweep's bytes per token, which that sweep's first cell set
 * from its own text (two sweeps of one matrix on the testbed set 1.041 and 1.082). */
static void speed_count(const struct report_cell *a, const struct report_figure *fa, const struct report_cell *b,
                        const struct report_figure *fb, struct compare_speed *sp) {
        json_t *ca, *cb;
        sp->bpt_old = level_count(a, fa->level, &sp->count_old, &ca);
        sp->bpt_new = level_count(b, fb->level, &sp->count_new, &cb);
        sp->by_bytes = strcmp(sp->count_old, "bytes") == 0 || strcmp(sp->count_new, "bytes") == 0;
        if (!sp->count_old[0] || !sp->count_new[0] || !isfinite(sp->bpt_old) || !isfinite(sp->bpt_new))
                return;
        /* an estimate on a side counts apart from anything; both the text's own tokens, where
         * one tokenizer, or one of the cells' own counts, did not count both (usage holds what
         * the stream does not show, and a sweep's first cell was counted by it until
         * 2026-12-07) */
        const char *key = strcmp(sp->count_old, "tokenizer") == 0 ? "tokenizer" : "source";
        bool unlike = sp->by_bytes || strcmp(sp->count_old, sp->count_new) != 0 ||
                      !same_text(json_string_value(json_object_get(ca, key)), json_string_value(json_object_get(cb, key)));
        /* and only where the bytes a token differ, a thousandth apart being as alike as the
         * figure is stated: two ways that gave one bytes a token (greedy answers, the same
         * text) agree */
        sp->counted_apart = unlike && fabs(sp->bpt_new / sp->bpt_old - 1) >= 0.001;
}

/* What the host took from a side's bench: its steal and other processes' share together;
 * NAN when neither is known. */
static double taken(double steal, double others) {
        return isnan(steal) ? others : isnan(others) ? steal : steal + others;
}

/* Whether the host's steal, or other processes, leave sp undecided (struct compare_speed,
 * "inconclusive"). */
static void speed_steal(const struct report_cell *a, const struct report_figure *fa, const struct report_cell *b,
                        const struct report_figure *fb, const struct compare_options *o, struct compare_speed *sp) {
        sp->steal_old = level_host(a, fa->level, METRIC_CPU_HOST_STEAL, false);
        sp->steal_new = level_host(b, fb->level, METRIC_CPU_HOST_STEAL, false);
        sp->others_old = cpustat_contention(level_host(a, fa->level, METRIC_CPU_HOST_OTHERS, false),
                                            level_host(a, fa->level, METRIC_CPU_HOST_IDLE, true));
        sp->others_new = cpustat_contention(level_host(b, fb->level, METRIC_CPU_HOST_OTHERS, false),
                                            level_host(b, fb->level, METRIC_CPU_HOST_IDLE, true));
        double t_old = taken(sp->steal_old, sp->others_old), t_new = taken(sp->steal_new, sp->others_new);
        bool new_hit = t_new > o->max_steal, old_hit = t_old > o->max_steal;
        sp->disturbed = new_hit || old_hit;
        if (sp->regression && new_hit && sp->worse <= o->max_slowdown + COMPARE_STEAL_FACTOR * t_new)
                sp->regression = false;
        sp->inconclusive = !sp->regression && ((new_hit && sp->significant && sp->worse > o->max_slowdown) ||
                                               (old_hit && sp->worse + COMPARE_STEAL_FACTOR * t_old > o->max_slowdown));
}

static void compare_speed(const struct report_view *old, const struct report_view *new, const struct report_cell *a,
                          const struct report_cell *b, const struct compare_options *o, struct compare_speed *sp) {
        struct report_score sa, sb;
        bool by_bench = report_by_bench(new);
        *sp = (struct compare_speed){.method = COMPARE_METHOD_NONE, .steal_old = NAN, .steal_new = NAN,
                                     .others_old = NAN, .others_new = NAN, .count_old = "", .count_new = "",
                                     .bpt_old = NAN, .bpt_new = NAN};
        if (report_cell_score(old, a, by_bench, &sa) < 0 || report_cell_score(new, b, by_bench, &sb) < 0 ||
            !(sa.value > 0) || !isfinite(sb.value))
                return;
        /* the objective's level on each side: its requests, its count and its host's steal */
        struct report_figure fa, fb;
        bool levels = by_bench && report_cell_figure_value(old, a, &fa) >= 0 &&
                      report_cell_figure_value(new, b, &fb) >= 0 && fa.by_bench && fb.by_bench;
        if (levels)
                speed_count(a, &fa, b, &fb, sp);
        sp->known = true;
        sp->higher_better = sb.higher_better;
        sp->old_value = sa.value;
        sp->new_value = sb.value;
        sp->change = sb.value / sa.value - 1;
        sp->worse = sp->higher_better ? -sp->change : sp->change;
        if (levels && speed_bootstrap(a, &fa, b, &fb, o, sp))
                sp->significant = sp->lo > 0 || sp->hi < 0;
        else if (sa.has_spread && sb.has_spread && sa.lo > 0 && sa.hi > 0) {
                sp->method = COMPARE_METHOD_REPEATS;
                sp->lo = sb.lo / sa.hi - 1;
                sp->hi = sb.hi / sa.lo - 1;
                sp->significant = sb.hi < sa.lo || sa.hi < sb.lo;
        } else {
                /* nothing measured the noise: the figures are taken as they are */
                sp->method = COMPARE_METHOD_UNKNOWN;
                sp->significant = sp->change != 0;
        }
        sp->regression = sp->significant && sp->worse > o->max_slowdown;
        sp->improvement = sp->significant && sp->worse < 0;
        if (levels)
                speed_steal(a, &fa, b, &fb, o, sp);
}

static void compare_accuracy(const struct report_cell *a, const struct report_cell *b, const struct compare_options *o,
                             struct compare_accuracy *ac) {
        *ac = (struct compare_accuracy){0};
        if (!a->eval.ran || !b->eval.ran || a->eval.fig.n == 0 || b->eval.fig.n == 0)
                return;
        ac->known = true;
        ac->k_old = a->eval.fig.correct;
        ac->n_old = a->eval.fig.n;
        ac->k_new = b->eval.fig.correct;
        ac->n_new = b->eval.fig.n;
        ac->old_acc = a->eval.fig.accuracy;
        ac->new_acc = b->eval.fig.accuracy;
        ac->change = ac->new_acc - ac->old_acc;
        eval_two_proportion(ac->k_new, ac->n_new, ac->k_old, ac->n_old, &ac->z, &ac->p);
        ac->significant = ac->p < EVAL_ALPHA;
        ac->regression = ac->significant && -ac->change > o->max_accuracy_drop;
}

/* ---- matching ---- */

static bool settled(const struct report_cell *c) {
        return c->has_attempt && !c->excluded && c->verdict != VERDICT_SKIPPED && c->verdict != VERDICT_INVALID;
}

static enum compare_change verdict_change(const struct report_cell *a, const struct report_cell *b) {
        bool pa = report_cell_passed(a), pb = report_cell_passed(b);
        if (pa && pb)
                return COMPARE_SAME;
        if (pa)
                return settled(b) ? COMPARE_REGRESSION : COMPARE_MISSING;
        if (pb)
                return settled(a) ? COMPARE_FIX : COMPARE_SAME;
        if (strcmp(report_cell_verdict(a), report_cell_verdict(b)) != 0 ||
            !same_text(report_cell_cause(a), report_cell_cause(b)))
                return settled(a) && settled(b) ? COMPARE_CHANGED : COMPARE_SAME;
        return COMPARE_SAME;
}

/* The value of axis name in cell c of v, or NULL. */
static const char *axis_value(const struct report_view *v, const struct report_cell *c, const char *name) {
        for (size_t i = 0; i < v->n_axes; i++)
                if (strcmp(v->axes[i], name) == 0)
                        return c->axis_values[i];
        return NULL;
}

/* Whether a of va and b of vb have the same axes with the same values. */
static bool same_cell(const struct report_view *va, const struct report_cell *a, const struct report_view *vb,
                      const struct report_cell *b) {
        if (va->n_axes != vb->n_axes)
                return false;
        for (size_t i = 0; i < va->n_axes; i++) {
                const char *x = a->axis_values[i], *y = axis_value(vb, b, va->axes[i]);
                if (!x || !y || strcmp(x, y) != 0)
                        return false;
        }
        /* a matrix without axes has one cell a sweep: the same one */
        return va->n_axes > 0 || (va->n_cells == 1 && vb->n_cells == 1);
}

static char *cell_label(const struct report_view *v, const struct report_cell *c) {
        if (v->n_axes == 0)
                return strdup("(no axes)");
        _cleanup_free_ char *s = strdup("");
        for (size_t i = 0; s && i < v->n_axes; i++) {
                char *t = strdup_printf("%s%s%s=%s", s, i ? " " : "", v->axes[i],
                                        c->axis_values[i] ? c->axis_values[i] : "?");
                free(s);
                s = t;
        }
        return TAKE_PTR(s);
}

static int add_pair(struct compare_result *r, long ia, long ib) {
        const struct report_view *va = r->old, *vb = r->new;
        struct compare_cell *x = &r->cells[r->n_cells++];
        *x = (struct compare_cell){.old_index = ia, .new_index = ib};
        x->label = ib >= 0 ? cell_label(vb, &vb->cells[ib]) : cell_label(va, &va->cells[ia]);
        if (!x->label)
                return -ENOMEM;
        if (ia < 0 || ib < 0) {
                x->change = ia < 0 ? COMPARE_ONLY_NEW : COMPARE_ONLY_OLD;
                return 0;
        }
        const struct report_cell *a = &va->cells[ia], *b = &vb->cells[ib];
        x->change = verdict_change(a, b);
        compare_speed(va, vb, a, b, &r->opts, &x->speed);
        compare_accuracy(a, b, &r->opts, &x->accuracy);
        x->regression = x->change == COMPARE_REGRESSION || x->speed.regression || x->accuracy.regression;
        r->regressions += x->change == COMPARE_REGRESSION;
        r->fixes += x->change == COMPARE_FIX;
        r->slower += x->speed.regression;
        r->faster += x->speed.improvement;
        r->inconclusive += x->speed.inconclusive;
        r->accuracy_drops += x->accuracy.regression;
        r->unchanged += x->change == COMPARE_SAME && !x->speed.significant && !x->accuracy.significant;
        r->regressed |= x->regression;
        return 0;
}

static bool same_objective(const struct report_view *a, const struct report_view *b) {
        return same_text(a->objective, b->objective);
}

int compare_views(const struct report_view *old, const struct report_view *new, const struct compare_options *o,
                  struct compare_result **ret) {
        if (!same_objective(old, new))
                return -EINVAL;
        struct compare_result *r = calloc(1, sizeof(*r));
        _cleanup_(compare_result_freep) struct compare_result *hold = r;
        _cleanup_free_ bool *taken = calloc(old->n_cells + 1, sizeof(bool));
        int e;
        if (!r || !taken || !(r->cells = calloc(old->n_cells + new->n_cells + 1, sizeof(*r->cells))))
                return -ENOMEM;
        r->old = old;
        r->new = new;
        r->opts = *o;
        r->old_best = r->new_best = -1;
        if (new->objective && !(r->metric = strdup(new->objective)))
                return -ENOMEM;
        int best_a = report_best_index(old, NULL), best_b = report_best_index(new, NULL);
        for (size_t i = 0; i < new->n_cells; i++) {
                long ia = -1;
                for (size_t k = 0; k < old->n_cells && ia < 0; k++)
                        if (!taken[k] && same_cell(old, &old->cells[k], new, &new->cells[i]))
                                ia = (long)k;
                if (ia >= 0)
                        taken[ia] = true;
                if (ia >= 0 && ia == best_a)
                        r->old_best = (long)r->n_cells;
                if ((int)i == best_b)
                        r->new_best = (long)r->n_cells;
                if ((e = add_pair(r, ia, (long)i)) < 0)
                        return e;
        }
        for (size_t k = 0; k < old->n_cells; k++) {
                if (taken[k])
                        continue;
                if ((int)k == best_a)
                        r->old_best = (long)r->n_cells;
                if ((e = add_pair(r, (long)k, -1)) < 0)
                        return e;
        }
        r->best_changed = r->old_best != r->new_best;
        if (old->provenance && new->provenance &&
            (e = provenance_diff(json_array_get(old->provenance, 0), json_array_get(new->provenance, 0),
                                 &r->provenance_changes)) < 0)
                return e;
        *ret = TAKE_PTR(hold);
        return 0;
}

void compare_result_free(struct compare_result *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n_cells; i++)
                free(r->cells[i].label);
        free(r->cells);
        free(r->metric);
        strv_free(r->provenance_changes);
        free(r);
}

/* ---- gauntlet run --against ---- */

int compare_rivals(const struct report_view *old, const struct compare_options *o, size_t **ret, size_t *ret_n) {
        struct report_score top, sc;
        int best = report_best_index(old, &top);
        if (best < 0)
                return -ENOENT;
        bool by_bench = report_by_bench(old);
        _cleanup_free_ size_t *v = malloc((old->n_cells + 1) * sizeof(*v));
        _cleanup_free_ size_t *ties = malloc((old->n_cells + 1) * sizeof(*ties));
        if (!v || !ties)
                return -ENOMEM;
        size_t n = 0, n_ties = report_best_ties(old, ties, old->n_cells);
        v[n++] = (size_t)best;
        for (size_t i = 0; i < old->n_cells; i++) {
                if ((int)i == best || !report_cell_passed(&old->cells[i]))
                        continue;
                bool close = false;
                for (size_t k = 0; k < n_ties && !close; k++)
                        close = ties[k] == i;
                if (!close && isfinite(top.value) && top.value > 0 &&
                    report_cell_score(old, &old->cells[i], by_bench, &sc) >= 0 && isfinite(sc.value)) {
                        double worse = top.higher_better ? 1 - sc.value / top.value : sc.value / top.value - 1;
                        close = worse <= o->max_slowdown;
                }
                if (close)
                        v[n++] = i;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

long compare_match(const struct report_view *old, size_t i, const struct report_view *v) {
        for (size_t k = 0; k < v->n_cells; k++)
                if (same_cell(old, &old->cells[i], v, &v->cells[k]))
                        return (long)k;
        return -1;
}

int compare_against_check(const struct report_view *old, const struct report_view *new, const struct compare_options *o,
                          struct compare_against *ret) {
        int best = report_best_index(old, NULL);
        if (best < 0)
                return -ENOENT;
        struct compare_against a = {.old_winner = best, .winner_now = compare_match(old, (size_t)best, new),
                                    .change = COMPARE_ONLY_OLD, .new_best = report_best_index(new, NULL)};
        if (a.new_best < 0)
                a.new_best = -1;
        if (a.winner_now >= 0) {
                const struct report_cell *was = &old->cells[best], *now = &new->cells[a.winner_now];
                a.change = verdict_change(was, now);
                a.still_passes = report_cell_passed(now);
                compare_speed(old, new, was, now, o, &a.speed);
        }
        a.still_best = a.still_passes;
        if (a.still_passes && a.new_best >= 0 && a.new_best != a.winner_now) {
                /* the new sweep's best against the old winner, both measured now */
                compare_speed(new, new, &new->cells[a.winner_now], &new->cells[a.new_best], o, &a.rival);
                a.still_best = !(a.rival.significant && -a.rival.worse > o->max_slowdown);
        }
        *ret = a;
        return 0;
}

static json_t *speed_json(const struct compare_speed *sp) {
        if (!sp->known)
                return json_null();
        json_t *e = json_pack("{s:f,s:f,s:f,s:s,s:b}", "old", sp->old_value, "new", sp->new_value, "change",
                              sp->change, "method", compare_method_name(sp->method), "significant", sp->significant);
        if (e && (sp->method == COMPARE_METHOD_BOOTSTRAP || sp->method == COMPARE_METHOD_REPEATS) &&
            json_object_set_new(e, "interval", json_pack("[f,f]", sp->lo, sp->hi)) < 0) {
                json_decref(e);
                return NULL;
        }
        return e;
}

static json_t *label_json(const struct report_view *v, long i) {
        if (i < 0)
                return json_null();
        _cleanup_free_ char *l = cell_label(v, &v->cells[i]);
        return l ? json_string(l) : NULL;
}

static json_t *verdict_json(const struct report_cell *c) {
        const char *cause = report_cell_cause(c);
        _cleanup_free_ char *t = strdup_printf("%s%s%s", report_cell_verdict(c), cause ? "/" : "", cause ? cause : "");
        return t ? json_string(t) : NULL;
}

json_t *compare_against_json(const struct report_view *old, const struct report_view *new,
                             const struct compare_against *a, const char *old_path, bool stopped) {
        _cleanup_strv_free_ char **changes = NULL;
        if (old->provenance && new->provenance &&
            provenance_diff(json_array_get(old->provenance, 0), json_array_get(new->provenance, 0), &changes) < 0)
                return NULL;
        _cleanup_json_ json_t *prov = json_array();
        for (char **l = changes; prov && l && *l; l++)
                if (json_array_append_new(prov, json_string(*l)) < 0)
                        return NULL;
        json_t *e = json_pack("{s:s,s:I,s:o*,s:o*,s:o*,s:o*,s:s,s:b,s:b,s:o*,s:O*}", "journal", old_path, "sweep",
                              (json_int_t)old->sweep_id, "old_winner", label_json(old, a->old_winner), "new_winner",
                              label_json(new, a->new_best), "old_verdict", verdict_json(&old->cells[a->old_winner]),
                              "new_verdict",
                              a->winner_now >= 0 ? verdict_json(&new->cells[a->winner_now]) : json_null(), "change",
                              compare_change_name(a->change), "still_best", a->still_best, "stopped", stopped,
                              "speed", speed_json(&a->speed), "provenance_changes", prov);
        return e;
}
