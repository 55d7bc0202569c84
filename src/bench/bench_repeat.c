/* bench_repeat.c -- the bench's repeats and SLA search: a level run N times as one entry of
 * medians, the highest load that meets the objective. */
#include "bench/bench_int.h"

#include <math.h>
#include <string.h>

#include "base/metrics.h"
#include "text/objective.h"

/* ---- repeats: each level N times, one entry of medians -------------------------------- */

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *x, size_t n) {
        qsort(x, n, sizeof(*x), cmp_double);
        return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Counters add up over the repeats (so the failure gate sees every failure); the errors
 * object adds up per reason; the rest that is a number is the median. */
static bool summed(const char *key) {
        static const enum metric sums[] = {METRIC_REQUESTS, METRIC_COMPLETED,     METRIC_FAILED,
                                           METRIC_ABORTED,  METRIC_RESENT,        METRIC_EVENTS_AFTER_DONE,
                                           METRIC_OUTPUT_TOKENS, METRIC_PROMPT_TOKENS, METRIC_CHUNKS,
                                           METRIC_USAGE_TOKENIZED, METRIC_USAGE_TOKENS, METRIC_USAGE_COUNTED,
                                           METRIC_USAGE_DISAGREE, METRIC_USAGE_OVER_MAX, METRIC_OUTPUTS_JUDGED,
                                           METRIC_OUTPUTS_FLAGGED};
        for (size_t i = 0; i < ELEMENTSOF(sums); i++)
                if (strcmp(key, metric_key(sums[i])) == 0)
                        return true;
        return strcmp(key, metric_stat_key(METRIC_STAT_COUNT)) == 0;
}

/* The median (or sum) of each number of an object over n runs' objects of the same shape.
 * *spread, when not NULL, gets [min, max] of each real under its path. */
static int combine_object(json_t *out, json_t *const *objs, size_t n, const char *prefix, json_t *spread) {
        const char *k;
        json_t *v;
        double *x = calloc(n, sizeof(double));
        if (!x)
                return -ENOMEM;
        int r = 0;
        json_object_foreach(out, k, v) {
                if (json_is_object(v) && strcmp(k, metric_key(METRIC_ERRORS)) != 0 &&
                    strcmp(k, metric_key(METRIC_PROMPT_CALIBRATION)) != 0 && strcmp(k, metric_key(METRIC_WORKLOAD)) != 0 &&
                    strcmp(k, metric_key(METRIC_EVAL_UNDER_LOAD)) != 0 && strcmp(k, "count") != 0) {
                        _cleanup_free_ json_t **sub = calloc(n, sizeof(*sub));
                        _cleanup_free_ char *path = strdup_printf("%s%s.", prefix, k);
                        bool all = true;
                        for (size_t i = 0; sub && i < n; i++)
                                all &= json_is_object(sub[i] = json_object_get(objs[i], k));
                        if (!path || !sub) {
                                r = -ENOMEM;
                                break;
                        }
                        if (all && (r = combine_object(v, sub, n, path, spread)) < 0)
                                break;
                        continue;
                }
                if (!json_is_number(v) || (!*prefix && (strcmp(k, metric_key(METRIC_CONCURRENCY)) == 0 ||
                                                        strcmp(k, metric_key(METRIC_RATE)) == 0)))
                        continue;
                size_t m = 0;
                for (size_t i = 0; i < n; i++) {
                        json_t *e = json_object_get(objs[i], k);
                        if (json_is_number(e))
                                x[m++] = json_number_value(e);
                }
                if (m == 0)
                        continue;
                if (summed(k) && json_is_integer(v)) {
                        double sum = 0;
                        for (size_t i = 0; i < m; i++)
                                sum += x[i];
                        json_integer_set(v, (json_int_t)sum);
                        continue;
                }
                double med = median(x, m);
                if (json_is_integer(v))
                        json_integer_set(v, (json_int_t)llround(med));
                else
                        json_real_set(v, med);
                if (spread && json_is_real(v) && m > 1) {
                        _cleanup_free_ char *path = strdup_printf("%s%s", prefix, k);
                        if (!path || json_object_set_new(spread, path, json_pack("[f, f]", x[0], x[m - 1])) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                }
        }
        free(x);
        return r;
}

/* One entry for n runs of a level: medians (counters summed), with "repeats": n and
 * "spread": {path: [min, max]}; errors add up, warnings and checks under load are all
 * kept (each check with the repeat it came from). */
static json_t *combine_repeats(json_t *const *runs, size_t n) {
        json_t *out = json_deep_copy(runs[0]);
        json_t *spread = json_object();
        if (!out || !spread)
                goto fail;
        if (combine_object(out, runs, n, "", spread) < 0)
                goto fail;
        json_t *errors = json_object_get(out, metric_key(METRIC_ERRORS));
        json_t *warnings = json_object_get(out, metric_key(METRIC_WARNINGS));
        json_t *checks = json_array();
        if (!checks)
                goto fail;
        json_object_set_new(out, metric_key(METRIC_CHECKS_UNDER_LOAD), checks);
        for (size_t i = 0; i < n; i++) {
                const char *k;
                json_t *v, *w;
                size_t j;
                if (i > 0) {
                        json_object_foreach(json_object_get(runs[i], metric_key(METRIC_ERRORS)), k, v) {
                                json_int_t had = json_integer_value(json_object_get(errors, k));
                                json_object_set_new(errors, k, json_integer(had + json_integer_value(v)));
                        }
                        json_array_foreach(json_object_get(runs[i], metric_key(METRIC_WARNINGS)), j, w) {
                                bool seen = false;
                                size_t q;
                                json_t *u;
                                json_array_foreach(warnings, q, u) seen |= json_equal(u, w);
                                if (!seen)
                                        json_array_append(warnings, w);
                        }
                        json_t *flagged = json_object_get(out, metric_key(METRIC_FLAGGED));
                        json_array_foreach(json_object_get(runs[i], metric_key(METRIC_FLAGGED)), j, w)
                                if (json_array_size(flagged) < BENCH_FLAGGED_KEPT)
                                        json_array_append(flagged, w);
                        json_t *eu = json_object_get(runs[i], metric_key(METRIC_EVAL_UNDER_LOAD));
                        if (eu && !json_object_get(out, metric_key(METRIC_EVAL_UNDER_LOAD)))
                                json_object_set(out, metric_key(METRIC_EVAL_UNDER_LOAD), eu);
                        json_t *fe = json_object_get(out, metric_key(METRIC_FIRST_ERROR));
                        json_t *fi = json_object_get(runs[i], metric_key(METRIC_FIRST_ERROR));
                        if (!fe && fi)
                                json_object_set(out, metric_key(METRIC_FIRST_ERROR), fi);
                }
                json_array_foreach(json_object_get(runs[i], metric_key(METRIC_CHECKS_UNDER_LOAD)), j, w) {
                        json_t *c = json_deep_copy(w);
                        if (!c || json_object_set_new(c, "repeat", json_integer((json_int_t)i + 1)) < 0 ||
                            json_array_append_new(checks, c) < 0)
                                goto fail;
                }
        }
        if (json_array_size(checks) == 0)
                json_object_del(out, metric_key(METRIC_CHECKS_UNDER_LOAD));
        if (json_object_set_new(out, metric_key(METRIC_REPEATS), json_integer((json_int_t)n)) < 0 ||
            json_object_set_new(out, metric_key(METRIC_SPREAD), spread) < 0)
                goto fail_out;
        return out;
fail:
        json_decref(spread);
fail_out:
        json_decref(out);
        return NULL;
}

/* A level spec->repeats times (each with its warm-up), appended as one entry. */
int run_repeated(struct bench *b, int concurrency, double rate, json_t *levels) {
        int n = b->spec->repeats > 1 ? b->spec->repeats : 1;
        if (n == 1)
                return run_level(b, concurrency, rate, levels);
        _cleanup_json_ json_t *runs = json_array();
        if (!runs)
                return -ENOMEM;
        for (int i = 0; i < n && !b->stopped; i++) {
                int r = run_level(b, concurrency, rate, runs);
                if (r < 0)
                        return r;
        }
        n = (int)json_array_size(runs); /* fewer when one stopped early */
        _cleanup_free_ json_t **one = calloc((size_t)n, sizeof(*one));
        if (!one)
                return -ENOMEM;
        for (int i = 0; i < n; i++)
                one[i] = json_array_get(runs, (size_t)i);
        json_t *c = combine_repeats(one, (size_t)n);
        if (!c || json_array_append_new(levels, c) < 0)
                return -ENOMEM;
        return 0;
}

/* ---- the SLA search: the highest load that still meets the objective's constraints ---- */

int sla_search(struct bench *b, json_t *levels) {
        const struct bench_spec *spec = b->spec;
        struct objective o;
        objective_parse(spec->objective, &o);
        if (o.n_limits == 0 || o.bad_limits)
                return 0;
        bool by_rate = spec->rate > 0;
        /* what the levels measured: the highest that met the constraints, the lowest above it
         * that did not */
        double lo = 0, hi = by_rate ? (double)spec->search_max : (double)spec->search_max + 1;
        int cap = 0;
        size_t i;
        json_t *e;
        json_array_foreach(levels, i, e) {
                double x = by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                   : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                cap = MAX(cap, (int)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))));
                if (objective_meets(&o, e) && json_integer_value(json_object_get(e, metric_key(METRIC_COMPLETED))) > 0)
                        lo = MAX(lo, x);
        }
        json_array_foreach(levels, i, e) {
                double x = by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                   : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                if (x > lo && !objective_meets(&o, e))
                        hi = MIN(hi, x);
        }
        bool top_known = by_rate ? hi < (double)spec->search_max : hi <= (double)spec->search_max;
        for (int round = 0; round < spec->search_rounds; round++) {
                /* the first round tries the top of the range: a server that meets the SLA
                 * there needs no bisection */
                double mid = !top_known && round == 0 ? (double)spec->search_max
                             : by_rate              ? (lo + hi) / 2
                                                    : floor((lo + hi) / 2);
                if (mid <= lo)
                        break;
                if (by_rate ? hi - lo < 0.01 * hi : mid <= lo)
                        break;
                size_t before = json_array_size(levels);
                int r = run_repeated(b, by_rate ? cap : (int)mid, by_rate ? mid : 0, levels);
                if (r < 0)
                        return r;
                json_t *got = json_array_get(levels, before);
                if (!got || json_object_set_new(got, metric_key(METRIC_SEARCH), json_true()) < 0)
                        return -ENOMEM;
                if (b->stopped)
                        return 0; /* the level is in levels, with its warning */
                if (objective_meets(&o, got) && json_integer_value(json_object_get(got, metric_key(METRIC_COMPLETED))) > 0)
                        lo = mid;
                else
                        hi = mid;
                if (lo >= (double)spec->search_max)
                        break;
        }
        return 0;
}
