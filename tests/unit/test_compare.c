/* test_compare.c -- the bootstrap compare.c judges a change by (docs/compare.md): equal
 * samples give an interval around 0, samples one and a half times as fast an interval
 * around +50% that excludes 0, a quantile and a mean of times, too few samples refused;
 * run --against's decisions: the old winner's close rivals, and whether it still stands. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "base/util.h"
#include "results/compare.h"

#define N 40

/* n request times around mean ms (+-20%, seeded), each with w tokens */
static void draw(double *w, double *t, size_t n, double mean, uint64_t seed) {
        uint64_t s = seed;
        for (size_t i = 0; i < n; i++) {
                w[i] = 16;
                t[i] = mean * (0.8 + 0.4 * rng_uniform(&s));
        }
}

static void test_unchanged(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 100, 1);
        draw(wb, tb, N, 100, 2);
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p, &lo, &hi), 0);
        assert_true(lo < 0 && hi > 0);
        assert_true(lo <= p && p <= hi);
        assert_true(hi - lo < 0.15);
}

static void test_faster(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 150, 1);
        draw(wb, tb, N, 100, 2);
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p, &lo, &hi), 0);
        /* tokens per ms: 1.5 times the old rate */
        assert_true(fabs(p - 0.5) < 0.08);
        assert_true(lo > 0.3 && hi < 0.7 && lo < p && p < hi);
        /* the same seed, the same interval */
        double p2, lo2, hi2;
        assert_int_equal(compare_bootstrap(wa, ta, N, wb, tb, N, NAN, 2000, 7, &p2, &lo2, &hi2), 0);
        assert_true(lo2 == lo && hi2 == hi);
}

static void test_times(void **state) {
        (void)state;
        double wa[N], ta[N], wb[N], tb[N], p, lo, hi;
        draw(wa, ta, N, 100, 1);
        draw(wb, tb, N, 120, 2);
        /* the mean time, and the median: 20% more, both */
        assert_int_equal(compare_bootstrap(NULL, ta, N, NULL, tb, N, NAN, 1000, 3, &p, &lo, &hi), 0);
        assert_true(p > 0.1 && p < 0.3 && lo > 0);
        assert_int_equal(compare_bootstrap(NULL, ta, N, NULL, tb, N, 0.5, 1000, 3, &p, &lo, &hi), 0);
        assert_true(p > 0.05 && p < 0.35 && lo < p && p < hi);
}

static void test_too_few(void **state) {
        (void)state;
        double w[N], t[N], p, lo, hi;
        draw(w, t, N, 100, 1);
        assert_int_equal(compare_bootstrap(w, t, COMPARE_MIN_SAMPLES - 1, w, t, N, NAN, 100, 1, &p, &lo, &hi),
                         -EINVAL);
        assert_int_equal(compare_bootstrap(w, t, N, w, t, COMPARE_MIN_SAMPLES, NAN, 100, 1, &p, &lo, &hi), 0);
}

/* A view of n passing cells of one axis "moe" (values "v0", "v1"...), each with one bench
 * level of throughput tok[i] at concurrency 1 (0: the cell is garbage). */
static struct report_view *view_of(const double *tok, size_t n) {
        struct report_view *v = calloc(1, sizeof(*v));
        assert_non_null(v);
        v->objective = strdup("output_tokens_per_s@1");
        v->axes = calloc(2, sizeof(char *));
        v->axes[0] = strdup("moe");
        v->n_axes = 1;
        v->cells = calloc(n, sizeof(*v->cells));
        v->n_cells = n;
        v->eval.reference = -1;
        v->search.first = v->search.next = -1;
        for (size_t i = 0; i < n; i++) {
                struct report_cell *c = &v->cells[i];
                snprintf(c->id, sizeof(c->id), "%016zx", i + 1);
                c->axis_values = calloc(1, sizeof(char *));
                c->axis_values[0] = strdup_printf("v%zu", i);
                c->has_attempt = true;
                c->distance = (int)i;
                c->verdict = tok[i] > 0 ? VERDICT_PASS : VERDICT_GARBAGE;
                if (tok[i] > 0)
                        c->bench = json_pack("[{s:i, s:i, s:f}]", "concurrency", 1, "completed", 10,
                                             "output_tokens_per_s", tok[i]);
        }
        return v;
}

static void test_rivals(void **state) {
        (void)state;
        const double tok[] = {100, 200, 195, 170, 0};
        struct report_view *v = view_of(tok, ELEMENTSOF(tok));
        struct compare_options o;
        compare_options_init(&o);
        size_t *r = NULL, n = 0;
        /* 5%: the winner, then 195; not 170 (15% worse), never the garbage one */
        assert_int_equal(compare_rivals(v, &o, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(r[0], 1);
        assert_int_equal(r[1], 2);
        free(r);
        o.max_slowdown = 0.2;
        assert_int_equal(compare_rivals(v, &o, &r, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(r[2], 3);
        free(r);
        report_view_free(v);
        const double none[] = {0, 0};
        v = view_of(none, 2);
        assert_int_equal(compare_rivals(v, &o, &r, &n), -ENOENT);
        report_view_free(v);
}

/* The old winner (200) checked again against new figures of the same cells. */
static void check(const double *now, size_t n, struct compare_against *ret) {
        const double was[] = {100, 200, 195};
        struct report_view *old = view_of(was, ELEMENTSOF(was)), *new = view_of(now, n);
        struct compare_options o;
        compare_options_init(&o);
        assert_int_equal(compare_against_check(old, new, &o, ret), 0);
        assert_int_equal(ret->old_winner, 1);
        report_view_free(old);
        report_view_free(new);
}

static void test_against(void **state) {
        (void)state;
        struct compare_against a;
        /* the same figures: it stands */
        check((const double[]){100, 200, 195}, 3, &a);
        assert_true(a.still_passes && a.still_best);
        assert_int_equal(a.winner_now, 1);
        assert_int_equal(a.new_best, 1);
        assert_int_equal(a.change, COMPARE_SAME);
        /* a rival ahead by 2%: named the best, but not beyond the 5% margin */
        check((const double[]){0, 200, 204}, 3, &a);
        assert_int_equal(a.new_best, 2);
        assert_true(a.still_best);
        /* a rival ahead by 30%: beaten */
        check((const double[]){0, 200, 260}, 3, &a);
        assert_true(a.still_passes);
        assert_false(a.still_best);
        assert_true(a.rival.significant && a.rival.change > 0.29);
        /* the winner broken: a regression, and the rival the new best */
        check((const double[]){100, 0, 195}, 3, &a);
        assert_false(a.still_passes || a.still_best);
        assert_int_equal(a.change, COMPARE_REGRESSION);
        assert_int_equal(a.new_best, 2);
        /* the winner's axis value gone from the new sweep: not found */
        check((const double[]){100}, 1, &a);
        assert_int_equal(a.winner_now, -1);
        assert_false(a.still_best);
}

/* One cell at old_tok tokens/s, then at new_tok, each bench's client_cpu as given (NULL:
 * none recorded) and the new one's spread, compared with the default options but
 * max_steal; figures without samples, so any change is significant (the noise unknown). */
static struct compare_speed host_case(double old_tok, json_t *old_cpu, double new_tok, json_t *new_cpu,
                                      json_t *new_spread, double max_steal) {
        struct report_view *a = view_of(&old_tok, 1), *b = view_of(&new_tok, 1);
        if (old_cpu)
                json_object_set_new(json_array_get(a->cells[0].bench, 0), "client_cpu", old_cpu);
        if (new_cpu)
                json_object_set_new(json_array_get(b->cells[0].bench, 0), "client_cpu", new_cpu);
        if (new_spread)
                json_object_set_new(json_array_get(b->cells[0].bench, 0), "spread", new_spread);
        struct compare_options o;
        compare_options_init(&o);
        o.max_steal = max_steal;
        struct compare_result *r = NULL;
        assert_int_equal(compare_views(a, b, &o, &r), 0);
        assert_int_equal(r->n_cells, 1);
        struct compare_speed sp = r->cells[0].speed;
        assert_int_equal(r->inconclusive, sp.inconclusive);
        assert_int_equal(r->slower, sp.regression);
        assert_int_equal(r->regressed, sp.regression);
        compare_result_free(r);
        report_view_free(a);
        report_view_free(b);
        return sp;
}

/* One cell at old tokens/s and steal so, then at new tokens/s and steal sn (NAN: none
 * recorded). */
static struct compare_speed steal_case(double old_tok, double so, double new_tok, double sn, double max_steal) {
        return host_case(old_tok, isfinite(so) ? json_pack("{s:f}", "host_steal", so) : NULL, new_tok,
                         isfinite(sn) ? json_pack("{s:f}", "host_steal", sn) : NULL, NULL, max_steal);
}

static void test_steal(void **state) {
        (void)state;
        struct compare_speed sp;
        /* nothing recorded: as before, 30% slower is a regression */
        sp = steal_case(100, NAN, 70, NAN, 0.05);
        assert_true(sp.regression && !sp.disturbed && !sp.inconclusive && isnan(sp.steal_old));
        /* 20% stolen during the new bench: 30% slower may be the host's (5% + 2 x 20%) */
        sp = steal_case(100, 0, 70, 0.2, 0.05);
        assert_true(!sp.regression && sp.disturbed && sp.inconclusive);
        assert_true(sp.steal_old == 0 && sp.steal_new == 0.2);
        /* the same under a max_steal of 50%: not disturbed, a regression */
        sp = steal_case(100, 0, 70, 0.2, 0.5);
        assert_true(sp.regression && !sp.disturbed && !sp.inconclusive);
        /* 2% stolen: below max_steal, a regression */
        sp = steal_case(100, 0.01, 70, 0.02, 0.05);
        assert_true(sp.regression && !sp.disturbed);
        /* 80% slower with 10% stolen: more than 5% + 2 x 10% can explain */
        sp = steal_case(100, 0, 20, 0.1, 0.05);
        assert_true(sp.regression && sp.disturbed && !sp.inconclusive);
        /* 20% stolen, but faster or within the threshold: nothing to decide */
        sp = steal_case(100, 0, 110, 0.2, 0.05);
        assert_true(!sp.regression && sp.disturbed && !sp.inconclusive && sp.improvement);
        sp = steal_case(100, 0, 97, 0.2, 0.05);
        assert_true(!sp.regression && !sp.inconclusive);
        /* the old bench disturbed: the new figure equal or better may hide a regression */
        sp = steal_case(100, 0.2, 100, 0, 0.05);
        assert_true(!sp.regression && sp.inconclusive && sp.steal_old == 0.2);
        sp = steal_case(100, 0.2, 200, 0, 0.05);
        assert_true(!sp.inconclusive && sp.improvement);
}

/* One cell at 100 tokens/s, then at new_tok, the new bench's client_cpu and spread as given,
 * at the default max_steal. */
static struct compare_speed others_case(double new_tok, json_t *cpu, json_t *spread) {
        return host_case(100, NULL, new_tok, cpu, spread, 0.05);
}

/* Other processes count beyond the host's idle share, added to the steal. */
static void test_others(void **state) {
        (void)state;
        struct compare_speed sp;
        /* 20% of others' on a host never idle: 30% slower may be theirs */
        sp = others_case(70, json_pack("{s:f, s:f, s:f}", "host_steal", 0.0, "host_others", 0.2, "host_idle", 0.0), NULL);
        assert_true(!sp.regression && sp.disturbed && sp.inconclusive && sp.others_new == 0.2);
        /* the same others' while half the host sat idle: they ran beside it; a regression */
        sp = others_case(70, json_pack("{s:f, s:f, s:f}", "host_steal", 0.0, "host_others", 0.2, "host_idle", 0.5), NULL);
        assert_true(sp.regression && !sp.disturbed && sp.others_new == 0);
        /* 10% of each: they add up to 20%, and 5% + 2 x 20% covers 30% */
        sp = others_case(70, json_pack("{s:f, s:f, s:f}", "host_steal", 0.1, "host_others", 0.1, "host_idle", 0.0), NULL);
        assert_true(!sp.regression && sp.inconclusive);
        /* 3% of each: disturbed (6%), but 5% + 2 x 6% does not cover 30% */
        sp = others_case(70, json_pack("{s:f, s:f, s:f}", "host_steal", 0.03, "host_others", 0.03, "host_idle", 0.0),
                       NULL);
        assert_true(sp.regression && sp.disturbed && !sp.inconclusive);
        /* repeats: the most others' less the least idle (0.3 - 0.05) */
        sp = others_case(70, json_pack("{s:f, s:f, s:f}", "host_steal", 0.0, "host_others", 0.2, "host_idle", 0.2),
                       json_pack("{s:[f, f], s:[f, f]}", "client_cpu.host_others", 0.1, 0.3, "client_cpu.host_idle",
                                 0.05, 0.4));
        assert_true(fabs(sp.others_new - 0.25) < 1e-9 && sp.inconclusive);
        /* no others' figure (a server elsewhere): the steal alone */
        sp = others_case(70, json_pack("{s:f}", "host_steal", 0.0), NULL);
        assert_true(sp.regression && !sp.disturbed && isnan(sp.others_new));
}

/* One cell at old_tok, then new_tok, under the objective metric@1, each level counted as
 * given (NULL: no "count", a journal before it); with samples, 20 requests a side of
 * old_out and new_out tokens in 1 s each (times +-20%, seeded). */
static struct compare_speed count_case(const char *metric, double old_tok, json_t *old_count, double new_tok,
                                       json_t *new_count, double old_out, double new_out) {
        struct report_view *v[2] = {view_of(&old_tok, 1), view_of(&new_tok, 1)};
        json_t *cnt[2] = {old_count, new_count};
        double tok[2] = {old_tok, new_tok}, out[2] = {old_out, new_out};
        for (int k = 0; k < 2; k++) {
                free(v[k]->objective);
                v[k]->objective = strdup_printf("%s@1", metric);
                json_t *e = json_array_get(v[k]->cells[0].bench, 0);
                json_object_set_new(e, metric, json_real(tok[k]));
                if (cnt[k])
                        json_object_set_new(e, "count", cnt[k]);
                if (out[k] <= 0)
                        continue;
                v[k]->cells[0].samples = json_array();
                uint64_t seed = 11 + (uint64_t)k;
                for (int i = 0; i < 20; i++)
                        json_array_append_new(v[k]->cells[0].samples,
                                              json_pack("{s:i, s:i, s:b, s:f, s:I}", "concurrency", 1, "index", i, "ok",
                                                        1, "e2e_ms", 1000 * (0.8 + 0.4 * rng_uniform(&seed)),
                                                        "counted_tokens", (json_int_t)out[k]));
        }
        struct compare_options o;
        compare_options_init(&o);
        struct compare_result *r = NULL;
        assert_int_equal(compare_views(v[0], v[1], &o, &r), 0);
        struct compare_speed sp = r->cells[0].speed;
        assert_int_equal(r->slower, sp.regression);
        compare_result_free(r);
        report_view_free(v[0]);
        report_view_free(v[1]);
        return sp;
}

static json_t *bytes_count(double bpt) {
        return json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "bytes", "source", "bytes", "bytes_per_token", bpt,
                         "bytes", 10000, "tokens", (int)(10000 / bpt));
}

/* Two sweeps that counted the same text unlike (docs/compare.md "Counted apart"): said,
 * the change as measured. */
static void test_counted_apart(void **state) {
        (void)state;
        const char *ots = "output_tokens_per_s";
        struct compare_speed sp;
        /* by bytes at 5.0, then at 5.5: apart; the figures' 9% still a regression, said */
        sp = count_case(ots, 110, bytes_count(5.0), 100, bytes_count(5.5), 0, 0);
        assert_true(sp.counted_apart && sp.regression && fabs(sp.change - (100.0 / 110 - 1)) < 1e-12);
        assert_true(sp.bpt_old == 5.0 && sp.bpt_new == 5.5);
        assert_string_equal(sp.count_old, "bytes");
        assert_string_equal(sp.count_new, "bytes");
        /* per-request samples: the interval is the measured one's */
        struct compare_speed alike = count_case(ots, 110, bytes_count(5.0), 100, bytes_count(5.0), 110, 100);
        sp = count_case(ots, 110, bytes_count(5.0), 100, bytes_count(5.5), 110, 100);
        assert_int_equal(sp.method, COMPARE_METHOD_BOOTSTRAP);
        assert_true(sp.counted_apart && !alike.counted_apart);
        assert_true(sp.lo == alike.lo && sp.hi == alike.hi && sp.regression == alike.regression);
        /* one tokenizer on both sides: alike, whatever the text's bytes a token */
        json_t *tk = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "GGUF llama (x.gguf)",
                               "bytes_per_token", 4.0, "bytes", 4000, "tokens", 1000);
        json_t *tk2 = json_deep_copy(tk);
        json_object_set_new(tk2, "bytes_per_token", json_real(4.4));
        sp = count_case(ots, 110, tk, 100, tk2, 0, 0);
        assert_true(!sp.counted_apart && sp.regression);
        /* a tokenizer, then bytes at another figure: apart */
        tk = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "GGUF llama (x.gguf)",
                       "bytes_per_token", 5.0, "bytes", 5000, "tokens", 1000);
        sp = count_case(ots, 100, tk, 110, bytes_count(5.5), 0, 0);
        assert_true(sp.counted_apart && sp.improvement);
        /* both the text's own tokens (the first cells' own counts) at other bytes a token:
         * alike, the texts differ */
        json_t *own = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "chunks", "bytes_per_token", 1.08,
                                "bytes", 554, "tokens", 512);
        json_t *own2 = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "chunks", "bytes_per_token",
                                 1.04, "bytes", 533, "tokens", 512);
        sp = count_case(ots, 110, own, 100, own2, 0, 0);
        assert_true(!sp.counted_apart && sp.regression);
        /* own counts by usage (a first cell before 2026-12-07), then by chunks: apart */
        own = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "usage", "bytes_per_token", 1.0, "bytes",
                        512, "tokens", 512);
        own2 = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "chunks", "bytes_per_token", 1.032,
                         "bytes", 512, "tokens", 496);
        sp = count_case(ots, 110, own, 100, own2, 0, 0);
        assert_true(sp.counted_apart);
        /* a tokenizer, then own counts: apart by their rules */
        tk = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "GGUF llama (x.gguf)",
                       "bytes_per_token", 1.0, "bytes", 512, "tokens", 512);
        own = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "chunks", "bytes_per_token", 1.1, "bytes",
                        563, "tokens", 512);
        sp = count_case(ots, 110, tk, 100, own, 0, 0);
        assert_true(sp.counted_apart && sp.regression);
        /* two tokenizers: apart */
        tk = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "a.gguf", "bytes_per_token", 4.0,
                       "bytes", 4000, "tokens", 1000);
        tk2 = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "b/tokenizer.json",
                        "bytes_per_token", 4.2, "bytes", 4200, "tokens", 1000);
        sp = count_case(ots, 110, tk, 100, tk2, 0, 0);
        assert_true(sp.counted_apart);
        /* a tokenizer, then own counts, at one bytes a token (the real llama-server, greedy,
         * the testbed's model: 992 tokens of 992 bytes both ways): alike */
        tk = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "tokenizer", "tokenizer", "x.gguf", "bytes_per_token", 1.0,
                       "bytes", 992, "tokens", 992);
        own = json_pack("{s:s, s:s, s:f, s:i, s:i}", "rule", "own", "source", "tokenize", "bytes_per_token", 1.0,
                        "bytes", 992, "tokens", 992);
        sp = count_case(ots, 110, tk, 100, own, 0, 0);
        assert_true(!sp.counted_apart);
        /* bytes a thousandth apart: alike (the figure is stated to three places) */
        sp = count_case(ots, 110, bytes_count(5.0), 100, bytes_count(5.004), 0, 0);
        assert_true(!sp.counted_apart);
        /* bytes per token from a level's bytes and tokens where it states none */
        sp = count_case(ots, 110, json_pack("{s:s, s:i, s:i}", "rule", "bytes", "bytes", 500, "tokens", 100), 100,
                        bytes_count(5.5), 0, 0);
        assert_true(sp.counted_apart && sp.bpt_old == 5.0);
        /* a journal without a count on one side, or a rule it does not know: nothing said */
        sp = count_case(ots, 110, NULL, 100, bytes_count(5.5), 0, 0);
        assert_true(!sp.counted_apart && sp.count_old[0] == '\0');
        sp = count_case(ots, 110, json_pack("{s:s, s:f}", "rule", "mystery", "bytes_per_token", 5.0), 100,
                        bytes_count(5.5), 0, 0);
        assert_true(!sp.counted_apart && sp.count_old[0] == '\0');
        /* any objective */
        sp = count_case("total_tokens_per_s", 110, bytes_count(5.0), 100, bytes_count(5.5), 0, 0);
        assert_true(sp.counted_apart && sp.regression);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_steal),
                cmocka_unit_test(test_others),
                cmocka_unit_test(test_counted_apart),
                cmocka_unit_test(test_unchanged),
                cmocka_unit_test(test_faster),
                cmocka_unit_test(test_times),
                cmocka_unit_test(test_too_few),
                cmocka_unit_test(test_rivals),
                cmocka_unit_test(test_against),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
