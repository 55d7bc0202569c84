/* eval.c -- the accuracy eval: built-in question sets, the run, figures and the reference
 * comparison. */
#include "gate/eval.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text/buf.h"
#include "base/rng.h"
#include "base/util.h"

static const char *const builtin_names[_EVAL_BUILTIN_MAX] = {
        [EVAL_PRODUCTS] = "products", [EVAL_SUMS] = "sums", [EVAL_LETTERS] = "letters",
        [EVAL_SORT] = "sort",         [EVAL_COPY] = "copy",
};

const char *eval_builtin_name(enum eval_builtin b) {
        return b < _EVAL_BUILTIN_MAX ? builtin_names[b] : "?";
}

int eval_builtin_from_name(const char *s) {
        for (int i = 0; i < _EVAL_BUILTIN_MAX; i++)
                if (s && strcmp(s, builtin_names[i]) == 0)
                        return i;
        return -1;
}

void eval_options_init(struct eval_options *o) {
        *o = (struct eval_options){
                .seed = EVAL_DEFAULT_SEED,
                .thinking = THINKING_UNSET,
                .logprobs = true,
                .min_agreement = -1,
                .max_logprob_diff = -1,
        };
}

void eval_options_release(struct eval_options *o) {
        free(o->file);
        free(o->path);
        o->file = o->path = NULL;
}

static unsigned builtin_mask(const struct eval_options *o) {
        return o->builtins ? o->builtins : (1u << _EVAL_BUILTIN_MAX) - 1;
}

/* "builtin:products,sums,letters,sort,copy" or "file:PATH" (caller frees; NULL: ENOMEM). */
static char *eval_options_source(const struct eval_options *o) {
        if (o->file)
                return strdup_printf("file:%s", o->file);
        struct buf b;
        buf_init(&b, 0);
        int r = buf_puts(&b, "builtin:");
        unsigned mask = builtin_mask(o);
        bool first = true;
        for (int i = 0; i < _EVAL_BUILTIN_MAX && r >= 0; i++)
                if (mask & (1u << i)) {
                        r = buf_printf(&b, "%s%s", first ? "" : ",", builtin_names[i]);
                        first = false;
                }
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

void eval_set_release(struct eval_set *s) {
        free(s->source);
        checks_free_suite(s->specs, s->n);
        free(s->keys);
        *s = (struct eval_set){0};
}

/* ---- randomness: the one generator (base/rng.h), one stream per (seed, set, question) ---- */

/* A uniform integer in [lo, hi] (the bias of the modulo is below 2^-50 here). */
static int uniform(uint64_t *x, int lo, int hi) {
        return lo + (int)(rng_next(x) % (uint64_t)(hi - lo + 1));
}

/* ---- keys ---- */

static void hex16(uint64_t h, char out[17]) {
        snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* What makes a question the same question: what is asked and what is expected. */
static int question_key(const struct check_spec *s, char out[17]) {
        uint64_t h = FNV_SEED;
        uint8_t mode = (uint8_t)s->mode;
        h = fnv1a(h, &mode, 1);
        if (s->messages) {
                _cleanup_free_ char *m = json_dumps(s->messages, JSON_COMPACT | JSON_SORT_KEYS);
                if (!m)
                        return -ENOMEM;
                h = fnv1a(h, m, strlen(m) + 1);
        } else {
                const char *p = s->prompt ? s->prompt : "";
                h = fnv1a(h, p, strlen(p) + 1);
        }
        uint8_t kind = (uint8_t)s->expect.kind;
        h = fnv1a(h, &kind, 1);
        const char *v = s->expect.value ? s->expect.value : "";
        h = fnv1a(h, v, strlen(v) + 1);
        hex16(h, out);
        return 0;
}

/* Applies the options every question shares, then keys and hashes the set. */
static int set_finish(const struct eval_options *o, struct eval_set *s) {
        s->keys = calloc(s->n ? s->n : 1, sizeof(*s->keys));
        if (!s->keys || !(s->source = eval_options_source(o)))
                return -ENOMEM;
        uint64_t h = FNV_SEED;
        for (size_t i = 0; i < s->n; i++) {
                struct check_spec *c = &s->specs[i];
                c->stream = STREAM_NO;
                c->thinking = o->thinking;
                c->require_reasoning = false; /* the eval judges answers; thinking only allows it */
                c->max_tokens = o->max_tokens;
                int r = question_key(c, s->keys[i]);
                if (r < 0)
                        return r;
                h = fnv1a(h, s->keys[i], 16);
        }
        int32_t extra[2] = {(int32_t)o->thinking, (int32_t)o->max_tokens};
        h = fnv1a(h, extra, sizeof(extra));
        hex16(h, s->hash);
        return 0;
}

/* ---- the built-in sets ---- */

static const char *const words[] = {
        "strawberry", "banana",     "mississippi", "bookkeeper",  "committee",  "parallel",  "assessment",
        "balloon",    "coffee",     "letter",      "success",     "address",    "occurrence", "possession",
        "referee",    "tomorrow",   "engineer",    "pepper",      "umbrella",   "cinnamon",  "giraffe",
        "hippopotamus", "accommodation", "raspberry", "excellence", "programming", "gauntlet", "inference",
        "tensor",     "quantization", "benchmark", "processor",   "attention",  "mixture",   "expert",
        "throughput", "latency",    "concurrency", "journal",     "elephant",   "necessary", "broccoli",
};

static int int_cmp(const void *a, const void *b) {
        int x = *(const int *)a, y = *(const int *)b;
        return (x > y) - (x < y);
}

/* Question j of set b: prompt and expectation. */
static int make_question(enum eval_builtin b, uint64_t seed, size_t j, struct check_spec *c) {
        uint64_t x = seed ^ (UINT64_C(0x5851f42d4c957f2d) * ((uint64_t)b + 1)) ^ (UINT64_C(0x14057b7ef767814f) * (j + 1));
        rng_next(&x);
        char *prompt = NULL, *value = NULL;
        enum expect_kind kind = EXPECT_NUMBER;
        switch (b) {
        case EVAL_PRODUCTS: {
                int a = uniform(&x, 10, 99), k = uniform(&x, 10, 99);
                prompt = strdup_printf("What is %d * %d?", a, k);
                value = strdup_printf("%d", a * k);
                break;
        }
        case EVAL_SUMS: {
                int a = uniform(&x, 100, 9999), k = uniform(&x, 100, 9999);
                prompt = strdup_printf("What is %d + %d?", a, k);
                value = strdup_printf("%d", a + k);
                break;
        }
        case EVAL_LETTERS: {
                const char *w = words[uniform(&x, 0, (int)ELEMENTSOF(words) - 1)];
                size_t len = strlen(w);
                char letter;
                if (uniform(&x, 0, 5) == 0) { /* now and then a letter the word lacks: 0 */
                        letter = 'a';
                        for (int tries = 0; tries < 26 && strchr(w, letter); tries++)
                                letter = (char)('a' + uniform(&x, 0, 25));
                        if (strchr(w, letter))
                                letter = w[0];
                } else
                        letter = w[uniform(&x, 0, (int)len - 1)];
                int count = 0;
                for (size_t i = 0; i < len; i++)
                        count += w[i] == letter;
                prompt = strdup_printf("How many times does the letter \"%c\" appear in the word \"%s\"? "
                                       "Answer with just the number.",
                                       letter, w);
                value = strdup_printf("%d", count);
                break;
        }
        case EVAL_SORT: {
                int v[5];
                for (int i = 0; i < 5; i++) {
                        bool again;
                        do {
                                v[i] = uniform(&x, 1, 99);
                                again = false;
                                for (int k = 0; k < i; k++)
                                        again |= v[k] == v[i];
                        } while (again);
                }
                prompt = strdup_printf("Sort these numbers from smallest to largest: %d, %d, %d, %d, %d. "
                                       "Reply with the sorted numbers only, separated by commas.",
                                       v[0], v[1], v[2], v[3], v[4]);
                qsort(v, 5, sizeof(v[0]), int_cmp);
                /* the five numbers in this order and no other digits: "3, 7, 19" and
                 * "[3 7 19]" are both right */
                value = strdup_printf("^[^0-9]*%d[^0-9]+%d[^0-9]+%d[^0-9]+%d[^0-9]+%d[^0-9]*$", v[0], v[1], v[2], v[3],
                                      v[4]);
                kind = EXPECT_REGEX;
                break;
        }
        case EVAL_COPY: {
                static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
                char s[11];
                for (int i = 0; i < 10; i++)
                        s[i] = alphabet[uniform(&x, 0, (int)sizeof(alphabet) - 2)];
                s[10] = '\0';
                prompt = strdup_printf("Repeat exactly, and nothing else: %s", s);
                value = strdup(s);
                kind = EXPECT_EQUALS;
                break;
        }
        default:
                return -EINVAL;
        }
        c->name = strdup_printf("%s-%zu", builtin_names[b], j);
        c->mode = CHECK_CHAT;
        c->prompt = prompt;
        c->expect = (struct expect){.kind = kind, .value = value};
        if (!c->name || !prompt || !value)
                return -ENOMEM;
        return 0;
}

int eval_set_builtin(const struct eval_options *o, struct eval_set *ret) {
        unsigned mask = builtin_mask(o);
        int sets[_EVAL_BUILTIN_MAX];
        size_t k = 0;
        for (int i = 0; i < _EVAL_BUILTIN_MAX; i++)
                if (mask & (1u << i))
                        sets[k++] = i;
        size_t n = o->samples ? o->samples : EVAL_DEFAULT_SAMPLES;
        if (k == 0 || n > EVAL_MAX_QUESTIONS)
                return -EINVAL;
        struct eval_set s = {.n = n};
        if (!(s.specs = calloc(n, sizeof(*s.specs))))
                return -ENOMEM;
        int r = 0;
        for (size_t j = 0; j < n && r >= 0; j++)
                r = make_question((enum eval_builtin)sets[j % k], o->seed, j / k, &s.specs[j]);
        if (r >= 0)
                r = set_finish(o, &s);
        if (r < 0) {
                eval_set_release(&s);
                return r;
        }
        *ret = s;
        return 0;
}

static int size_cmp(const void *a, const void *b) {
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        return (x > y) - (x < y);
}

int eval_set_from_specs(const struct eval_options *o, struct check_spec *specs, size_t n, struct eval_set *ret) {
        struct eval_set s = {.specs = specs, .n = n};
        int r = 0;
        if (o->samples && o->samples < n) {
                /* A partial Fisher-Yates shuffle with the seed picks the subset; it is asked
                 * in file order. */
                _cleanup_free_ size_t *idx = malloc(n * sizeof(*idx));
                struct check_spec *kept = calloc(o->samples, sizeof(*kept));
                if (!idx || !kept) {
                        free(kept);
                        eval_set_release(&s);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n; i++)
                        idx[i] = i;
                uint64_t x = o->seed;
                for (size_t i = 0; i < o->samples; i++) {
                        size_t j = i + (size_t)(rng_next(&x) % (uint64_t)(n - i));
                        size_t t = idx[i];
                        idx[i] = idx[j];
                        idx[j] = t;
                }
                qsort(idx, o->samples, sizeof(*idx), size_cmp);
                for (size_t i = 0; i < o->samples; i++) {
                        kept[i] = specs[idx[i]];
                        specs[idx[i]] = (struct check_spec){0};
                }
                checks_free_suite(specs, n);
                s.specs = kept;
                s.n = o->samples;
        }
        r = set_finish(o, &s);
        if (r < 0) {
                eval_set_release(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int eval_run(struct loop *l, const struct checks_target *t, const struct eval_set *s, const struct eval_options *o,
             struct check_result **ret) {
        struct checks_target target = *t;
        target.logprobs = o->logprobs;
        int c = o->concurrency > 0 ? o->concurrency : EVAL_DEFAULT_CONCURRENCY;
        return checks_run_concurrent(l, &target, s->specs, s->n, (size_t)c, ret);
}

/* ---- figures ---- */

void eval_wilson(size_t k, size_t n, double z, double *ret_low, double *ret_high) {
        if (n == 0) {
                *ret_low = *ret_high = NAN;
                return;
        }
        double p = (double)k / (double)n, nn = (double)n, z2 = z * z;
        double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
        double half = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
        *ret_low = MAX(0.0, centre - half);
        *ret_high = MIN(1.0, centre + half);
        /* exact at the ends, where rounding would leave 1e-17 */
        if (k == 0)
                *ret_low = 0;
        if (k == n)
                *ret_high = 1;
}

void eval_figures_add(struct eval_figures *f, enum verdict v) {
        if (v < 0 || v >= _VERDICT_MAX)
                return;
        f->by_verdict[v]++;
        if (v == VERDICT_SKIPPED)
                return;
        f->n++;
        f->correct += v == VERDICT_PASS;
}

void eval_figures_finish(struct eval_figures *f) {
        f->accuracy = f->n ? (double)f->correct / (double)f->n : NAN;
        eval_wilson(f->correct, f->n, EVAL_Z95, &f->ci_low, &f->ci_high);
}

void eval_figures_of(const struct check_result *r, size_t n, struct eval_figures *ret) {
        *ret = (struct eval_figures){0};
        for (size_t i = 0; i < n; i++)
                eval_figures_add(ret, r[i].verdict);
        eval_figures_finish(ret);
}

void eval_two_proportion(size_t k1, size_t n1, size_t k2, size_t n2, double *ret_z, double *ret_p) {
        *ret_z = 0;
        *ret_p = 1;
        if (n1 == 0 || n2 == 0)
                return;
        double p1 = (double)k1 / (double)n1, p2 = (double)k2 / (double)n2;
        double pool = (double)(k1 + k2) / (double)(n1 + n2);
        double se = sqrt(pool * (1 - pool) * (1.0 / (double)n1 + 1.0 / (double)n2));
        if (!(se > 0))
                return; /* both all right or both all wrong: no difference */
        *ret_z = (p1 - p2) / se;
        *ret_p = erfc(fabs(*ret_z) / sqrt(2.0));
}

bool eval_significantly_below(size_t k, size_t n, size_t kref, size_t nref) {
        double z, p;
        eval_two_proportion(k, n, kref, nref, &z, &p);
        return z < 0 && p < EVAL_ALPHA;
}

/* ---- against the reference ---- */

void eval_diff(const struct eval_answer *a, const struct eval_answer *ref, size_t n, struct eval_diff *ret) {
        struct eval_diff d = {.first = SIZE_MAX, .agreement = NAN, .lp_mad = NAN};
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
                if (a[i].verdict == VERDICT_SKIPPED || ref[i].verdict == VERDICT_SKIPPED)
                        continue;
                d.common++;
                const char *x = a[i].output ? a[i].output : "", *y = ref[i].output ? ref[i].output : "";
                if (strcmp(x, y) != 0) {
                        if (d.first == SIZE_MAX) {
                                size_t k = 0;
                                while (x[k] && x[k] == y[k])
                                        k++;
                                d.first = i;
                                d.first_offset = k;
                        }
                        continue;
                }
                d.identical++;
                /* The same text is the same tokens only when the counts agree; a token the
                 * server could not score (NaN) leaves the answer out. */
                if (!a[i].logprobs || !ref[i].logprobs || a[i].n_logprobs != ref[i].n_logprobs || !a[i].n_logprobs)
                        continue;
                bool finite = true;
                double s = 0;
                for (size_t k = 0; k < a[i].n_logprobs && finite; k++) {
                        finite = isfinite(a[i].logprobs[k]) && isfinite(ref[i].logprobs[k]);
                        s += fabs(a[i].logprobs[k] - ref[i].logprobs[k]);
                }
                if (!finite)
                        continue;
                d.lp_answers++;
                d.lp_tokens += a[i].n_logprobs;
                sum += s;
        }
        if (d.common)
                d.agreement = (double)d.identical / (double)d.common;
        if (d.lp_tokens)
                d.lp_mad = sum / (double)d.lp_tokens;
        *ret = d;
}

int eval_pick_reference(const struct eval_cell *c, size_t n, int named, bool *ret_fell_back) {
        bool fell_back = false;
        if (named >= 0 && (size_t)named < n) {
                if (c[named].eligible && c[named].n > 0) {
                        if (ret_fell_back)
                                *ret_fell_back = false;
                        return named;
                }
                fell_back = true;
        }
        int best = -1;
        for (size_t i = 0; i < n; i++) {
                if (!c[i].eligible || c[i].n == 0)
                        continue;
                if (best < 0) {
                        best = (int)i;
                        continue;
                }
                /* compare correct/n without rounding: a*d against b*c */
                uint64_t lhs = (uint64_t)c[i].correct * c[best].n, rhs = (uint64_t)c[best].correct * c[i].n;
                if (lhs > rhs || (lhs == rhs && c[i].distance < c[best].distance))
                        best = (int)i;
        }
        if (ret_fell_back)
                *ret_fell_back = fell_back;
        return best;
}

enum eval_gate eval_gate_decide(const struct eval_options *o, const struct eval_figures *cell,
                                const struct eval_figures *ref, const struct eval_diff *d) {
        if (eval_significantly_below(cell->correct, cell->n, ref->correct, ref->n))
                return EVAL_GATE_ACCURACY;
        if (o->min_agreement >= 0 && d->common > 0 && d->agreement < o->min_agreement)
                return EVAL_GATE_AGREEMENT;
        if (o->max_logprob_diff >= 0 && d->lp_tokens > 0 && d->lp_mad > o->max_logprob_diff)
                return EVAL_GATE_LOGPROBS;
        return EVAL_GATE_NONE;
}

const char *eval_gate_cause(enum eval_gate g) {
        switch (g) {
        case EVAL_GATE_ACCURACY:
                return "accuracy";
        case EVAL_GATE_AGREEMENT:
        case EVAL_GATE_LOGPROBS:
                return "divergence";
        case EVAL_GATE_NONE:
                break;
        }
        return NULL;
}

static int put_p(struct buf *b, double p) {
        return p < 0.001 ? buf_puts(b, "p < 0.001") : buf_printf(b, "p = %.3f", p);
}

char *eval_figures_line(const struct eval_figures *f) {
        if (f->n == 0)
                return strdup("no question answered");
        return strdup_printf("%zu/%zu right, accuracy %.3f [%.3f, %.3f]", f->correct, f->n, f->accuracy, f->ci_low,
                             f->ci_high);
}

void eval_under_load_figures(const json_t *eval_load, const enum verdict *alone, size_t n_alone,
                             struct eval_figures *ret_load, struct eval_figures *ret_alone) {
        *ret_load = (struct eval_figures){0};
        *ret_alone = (struct eval_figures){0};
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(eval_load, "answers"), k, c) {
                json_int_t seq = json_integer_value(json_object_get(c, "seq"));
                enum verdict v = verdict_from_string(json_string_value(json_object_get(c, "verdict")));
                const char *cause = json_string_value(json_object_get(c, "cause"));
                bool answered = v != VERDICT_INVALID && v != VERDICT_SKIPPED && v != VERDICT_TIMEOUT &&
                                !(v == VERDICT_GARBAGE && cause && strcmp(cause, "http") == 0);
                if (!answered || seq < 0 || (size_t)seq >= n_alone || alone[seq] == VERDICT_SKIPPED ||
                    alone[seq] == VERDICT_TIMEOUT)
                        continue;
                eval_figures_add(ret_load, v);
                eval_figures_add(ret_alone, alone[seq]);
        }
        eval_figures_finish(ret_load);
        eval_figures_finish(ret_alone);
}

char *eval_under_load_evidence(int concurrency, const struct eval_figures *load, const struct eval_figures *alone,
                               const char *what) {
        struct buf b;
        buf_init(&b, 0);
        double z, p;
        eval_two_proportion(load->correct, load->n, alone->correct, alone->n, &z, &p);
        int r = buf_printf(&b, "accuracy under load at concurrency %d: %.3f [%.3f, %.3f] (%zu/%zu) below %s %.3f "
                               "[%.3f, %.3f] (%zu/%zu): two-proportion z-test z = %.2f, ",
                           concurrency, load->accuracy, load->ci_low, load->ci_high, load->correct, load->n, what,
                           alone->accuracy, alone->ci_low, alone->ci_high, alone->correct, alone->n, z);
        if (r >= 0 && (r = put_p(&b, p)) >= 0)
                r = buf_puts(&b, " (95%)");
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

char *eval_gate_evidence(enum eval_gate g, const struct eval_options *o, const struct eval_figures *cell,
                         const struct eval_figures *ref, const struct eval_diff *d, const char *ref_id,
                         const char *first_id) {
        struct buf b;
        buf_init(&b, 0);
        char id[9];
        int r = 0;
        snprintf(id, sizeof(id), "%.8s", ref_id ? ref_id : "?");
        switch (g) {
        case EVAL_GATE_ACCURACY: {
                double z, p;
                eval_two_proportion(cell->correct, cell->n, ref->correct, ref->n, &z, &p);
                if ((r = buf_printf(&b, "accuracy %.3f [%.3f, %.3f] (%zu/%zu) below the reference %s's %.3f [%.3f, %.3f] "
                                        "(%zu/%zu): two-proportion z-test z = %.2f, ",
                                    cell->accuracy, cell->ci_low, cell->ci_high, cell->correct, cell->n, id,
                                    ref->accuracy, ref->ci_low, ref->ci_high, ref->correct, ref->n, z)) >= 0 &&
                    (r = put_p(&b, p)) >= 0)
                        r = buf_puts(&b, " (95%)");
                break;
        }
        case EVAL_GATE_AGREEMENT:
                r = buf_printf(&b, "%zu/%zu answers identical to the reference %s's (%.3f), below min_agreement %g",
                               d->identical, d->common, id, d->agreement, o->min_agreement);
                if (r >= 0 && first_id)
                        r = buf_printf(&b, "; first divergence: %s", first_id);
                break;
        case EVAL_GATE_LOGPROBS:
                r = buf_printf(&b, "mean |logprob difference| %.4f over %zu tokens of %zu identical answers vs the "
                                   "reference %s, above max_logprob_diff %g",
                               d->lp_mad, d->lp_tokens, d->lp_answers, id, o->max_logprob_diff);
                break;
        case EVAL_GATE_NONE:
                r = -EINVAL;
                break;
        }
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

json_t *eval_settings_json(const struct eval_options *o, const struct eval_set *s, const char *ref_id,
                           const char *ref_by) {
        json_t *j = json_object();
        if (!j)
                return NULL;
        int e = 0;
        e |= json_object_set_new(j, "source", s->source ? json_string(s->source) : json_null());
        e |= json_object_set_new(j, "questions", json_integer((json_int_t)s->n));
        e |= json_object_set_new(j, "set", json_string(s->hash));
        e |= json_object_set_new(j, "samples", o->samples ? json_integer((json_int_t)o->samples) : json_null());
        e |= json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
        e |= json_object_set_new(j, "thinking", o->thinking == THINKING_UNSET ? json_null() : json_boolean(o->thinking));
        e |= json_object_set_new(j, "max_tokens", o->max_tokens ? json_integer(o->max_tokens) : json_null());
        e |= json_object_set_new(j, "concurrency",
                                 json_integer(o->concurrency > 0 ? o->concurrency : EVAL_DEFAULT_CONCURRENCY));
        e |= json_object_set_new(j, "logprobs", json_boolean(o->logprobs));
        e |= json_object_set_new(j, "min_agreement", o->min_agreement >= 0 ? json_real(o->min_agreement) : json_null());
        e |= json_object_set_new(j, "max_logprob_diff",
                                 o->max_logprob_diff >= 0 ? json_real(o->max_logprob_diff) : json_null());
        e |= json_object_set_new(j, "reference", ref_id ? json_string(ref_id) : json_null());
        e |= json_object_set_new(j, "reference_by", ref_by ? json_string(ref_by) : json_null());
        if (e) {
                json_decref(j);
                return NULL;
        }
        return j;
}
