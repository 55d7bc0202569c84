/* workload.c -- a matrix's workload as one canonical description, its hash, and the first
 * difference between two of them. */
#include "config/workload.h"

#include <stdio.h>
#include <string.h>

#include "text/buf.h"

static int put(json_t *o, const char *key, json_t *v) {
        return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

static int put_int(json_t *o, const char *key, long long v) {
        return put(o, key, json_integer(v));
}

static int put_real(json_t *o, const char *key, double v) {
        return put(o, key, json_real(v));
}

static int put_bool(json_t *o, const char *key, bool v) {
        return put(o, key, json_boolean(v));
}

static int put_str(json_t *o, const char *key, const char *v) {
        return put(o, key, v ? json_string(v) : json_null());
}

static int put_hash(json_t *o, const char *key, uint64_t h) {
        char hex[17];
        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)h);
        return put_str(o, key, hex);
}

static uint64_t hash_str(uint64_t h, const char *s) {
        return s ? fnv1a(h, s, strlen(s) + 1) : fnv1a(h, "", 0);
}

static uint64_t hash_int(uint64_t h, int64_t v) {
        return fnv1a(h, &v, sizeof(v));
}

static uint64_t hash_real(uint64_t h, double v) {
        return fnv1a(h, &v, sizeof(v));
}

/* A dataset file's content as read: what the bench sends from it. */
static uint64_t hash_dataset(const struct dataset *d) {
        uint64_t h = hash_int(FNV_SEED, d->kind);
        for (size_t i = 0; i < d->n; i++) {
                const struct dataset_entry *e = &d->v[i];
                h = hash_str(h, e->prompt);
                h = hash_str(h, e->reply);
                h = hash_int(h, e->output_tokens);
                for (size_t k = 0; k < e->n_turns; k++) {
                        h = hash_str(h, e->turns ? e->turns[k] : NULL);
                        h = hash_str(h, e->replies ? e->replies[k] : NULL);
                }
                h = hash_real(h, e->timestamp_ms);
                h = hash_int(h, e->input_length);
                for (size_t k = 0; k < e->n_hash; k++)
                        h = hash_int(h, (int64_t)e->hash_ids[k]);
        }
        return h;
}

/* A custom check suite: every field a check is asked and judged by. */
static int hash_checks(const struct check_spec *c, size_t n, uint64_t *ret) {
        uint64_t h = FNV_SEED;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *msgs = c[i].messages ? json_dumps(c[i].messages, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
                if (c[i].messages && !msgs)
                        return -ENOMEM;
                h = hash_str(h, c[i].name);
                h = hash_int(h, c[i].mode);
                h = hash_str(h, c[i].prompt);
                h = hash_str(h, msgs);
                h = hash_int(h, c[i].thinking);
                h = hash_int(h, c[i].require_reasoning);
                h = hash_int(h, c[i].max_tokens);
                h = hash_int(h, c[i].stream);
                h = hash_int(h, c[i].expect.kind);
                h = hash_str(h, c[i].expect.value);
                h = hash_int(h, c[i].sampling);
                h = hash_real(h, c[i].temperature);
                h = hash_real(h, c[i].top_p);
                h = hash_int(h, c[i].seed);
        }
        *ret = h;
        return 0;
}

static int describe_bench(const struct matrix *m, json_t *o) {
        const struct bench_spec *b = &m->bench;
        const struct dataset_options *d = &b->dataset;
        struct buf levels;
        int r = 0;
        buf_init(&levels, 0);
        for (size_t i = 0; i < b->n_concurrency && r >= 0; i++)
                r = buf_printf(&levels, "%s%d", i ? "," : "", b->concurrency[i]);
        if (r >= 0)
                r = put_str(o, "bench.concurrency", buf_str(&levels));
        buf_release(&levels);
        if (r < 0 || (r = put_bool(o, "bench", m->has_bench)) < 0 ||
            (r = put_int(o, "bench.input_tokens", b->input_tokens)) < 0 ||
            (r = put_int(o, "bench.output_tokens", b->output_tokens)) < 0 ||
            (r = put_int(o, "bench.requests", b->requests)) < 0 ||
            (r = put_real(o, "bench.duration_s", (double)b->duration / 1e6)) < 0 ||
            (r = put_int(o, "bench.warmup", b->warmup)) < 0 || (r = put_real(o, "bench.rate", b->rate)) < 0 ||
            (r = put_bool(o, "bench.chat", b->chat)) < 0 || (r = put_int(o, "bench.max_failures", b->max_failures)) < 0 ||
            (r = put_real(o, "bench.max_failure_share", b->max_failure_share)) < 0 ||
            (r = put_bool(o, "bench.calibrate", b->calibrate)) < 0 || (r = put_int(o, "bench.repeats", b->repeats)) < 0 ||
            (r = put_int(o, "bench.search_max", b->search_max)) < 0 ||
            (r = put_int(o, "bench.search_rounds", b->search_rounds)) < 0 ||
            (r = put_bool(o, "bench.checks_under_load", b->checks_under_load)) < 0 ||
            (r = put_int(o, "bench.seed", (long long)b->seed)) < 0 || (r = put_bool(o, "bench.poisson", b->poisson)) < 0 ||
            (r = put_real(o, "bench.burstiness", b->burstiness)) < 0 ||
            (r = put_str(o, "bench.dataset", dataset_kind_name(d->kind))) < 0 ||
            (r = put_str(o, "bench.dataset.path", d->path)) < 0 ||
            (r = put_int(o, "bench.dataset.num_prompts", d->num_prompts)) < 0 ||
            (r = put_real(o, "bench.dataset.range_ratio", d->range_ratio)) < 0 ||
            (r = put_int(o, "bench.dataset.prefix_len", d->prefix_len)) < 0 ||
            (r = put_int(o, "bench.dataset.suffix_len", d->suffix_len)) < 0 ||
            (r = put_int(o, "bench.dataset.num_prefixes", d->num_prefixes)) < 0 ||
            (r = put_int(o, "bench.dataset.prefix_output_len", d->prefix_output_len)) < 0 ||
            (r = put_int(o, "bench.dataset.sharegpt_output_len", d->sharegpt_output_len)) < 0 ||
            (r = put_int(o, "bench.dataset.sharegpt_max_output_len", d->sharegpt_max_output_len)) < 0 ||
            (r = put_int(o, "bench.dataset.sharegpt_min_len", d->sharegpt_min_len)) < 0 ||
            (r = put_int(o, "bench.dataset.sharegpt_max_prompt_len", d->sharegpt_max_prompt_len)) < 0 ||
            (r = put_int(o, "bench.dataset.sharegpt_max_total_len", d->sharegpt_max_total_len)) < 0 ||
            (r = put_int(o, "bench.dataset.multi_turn_turns", d->multi_turn_turns)) < 0 ||
            (r = put_int(o, "bench.dataset.multi_turn_input_len", d->multi_turn_input_len)) < 0 ||
            (r = put_int(o, "bench.dataset.multi_turn_output_len", d->multi_turn_output_len)) < 0 ||
            (r = put_real(o, "bench.dataset.multi_turn_think_time_s", (double)d->multi_turn_think_time / 1e6)) < 0 ||
            (r = put_real(o, "bench.dataset.trace_speed", d->trace_speed)) < 0 ||
            (r = put_real(o, "bench.dataset.trace_unit_ms", d->trace_unit_ms)) < 0 ||
            (r = put_int(o, "bench.dataset.trace_block_size", d->trace_block_size)) < 0)
                return r;
        if (m->bench_data && (r = put_hash(o, "bench.dataset.content", hash_dataset(m->bench_data))) < 0)
                return r;
        return 0;
}

static int describe_probes(const struct matrix *m, json_t *o) {
        const struct probes_options *p = &m->probes;
        int r;
        for (int k = 0; k < _PROBE_MAX; k++) {
                _cleanup_free_ char *key = strdup_printf("probes.%s", probe_name((enum probe_kind)k));
                if (!key || (r = put_bool(o, key, p->on[k])) < 0)
                        return -ENOMEM;
        }
        if ((r = put_real(o, "probes.long_context.share", p->long_context.share)) < 0 ||
            (r = put_int(o, "probes.long_context.max_tokens", p->long_context.max_tokens)) < 0 ||
            (r = put_real(o, "probes.long_context.timeout_s", (double)p->long_context.timeout / 1e6)) < 0 ||
            (r = put_int(o, "probes.long_context.context", (long long)p->long_context.context)) < 0 ||
            (r = put_int(o, "probes.sampling.runs", p->sampling.runs)) < 0 ||
            (r = put_int(o, "probes.sampling.min_right", p->sampling.min_right)) < 0 ||
            (r = put_real(o, "probes.sampling.temperature", p->sampling.temperature)) < 0 ||
            (r = put_real(o, "probes.sampling.top_p", p->sampling.top_p)) < 0 ||
            (r = put_int(o, "probes.multi_turn.stream", p->multi_turn.stream)) < 0 ||
            (r = put_bool(o, "probes.under_load", m->under_load.on)) < 0 ||
            (r = put_int(o, "probes.under_load.eval_samples", (long long)m->under_load.eval_samples)) < 0)
                return r;
        return 0;
}

static int describe_eval(const struct matrix *m, json_t *o) {
        int r;
        if ((r = put_bool(o, "eval", m->has_eval)) < 0 || !m->has_eval)
                return r;
        const struct eval_options *e = &m->eval;
        if ((r = put_str(o, "eval.source", m->eval_set.source)) < 0 || (r = put_str(o, "eval.set", m->eval_set.hash)) < 0 ||
            (r = put_int(o, "eval.questions", (long long)m->eval_set.n)) < 0 ||
            (r = put_int(o, "eval.concurrency", e->concurrency)) < 0 || (r = put_bool(o, "eval.logprobs", e->logprobs)) < 0 ||
            (r = put_real(o, "eval.min_agreement", e->min_agreement)) < 0 ||
            (r = put_real(o, "eval.max_logprob_diff", e->max_logprob_diff)) < 0)
                return r;
        /* not the reference: it names the yardstick the reports compare with when they load
         * (docs/eval.md), and no figure or answer of a cell depends on it */
        return r;
}

int workload_describe(const struct matrix *m, json_t **ret, char **ret_text, char ret_hash[17]) {
        _cleanup_json_ json_t *o = json_object();
        int r;
        if (!o)
                return -ENOMEM;
        if ((r = put_str(o, "objective", m->objective)) < 0 || (r = put_bool(o, "checks.default", m->checks_default)) < 0)
                return r;
        if (!m->checks_default) {
                uint64_t h;
                if ((r = hash_checks(m->checks, m->n_checks, &h)) < 0 || (r = put_hash(o, "checks", h)) < 0 ||
                    (r = put_int(o, "checks.count", (long long)m->n_checks)) < 0)
                        return r;
        }
        if ((r = describe_bench(m, o)) < 0 || (r = describe_probes(m, o)) < 0 || (r = describe_eval(m, o)) < 0)
                return r;
        /* the tokenizer counts the figures (docs/metrics.md "Output tokens"); absent: found
         * from the model, as it always was */
        if (m->tokenizer && (r = put_str(o, "tokenizer", m->tokenizer)) < 0)
                return r;
        _cleanup_free_ char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
        if (!text)
                return -ENOMEM;
        if (ret_hash)
                snprintf(ret_hash, 17, "%016llx", (unsigned long long)fnv1a(FNV_SEED, text, strlen(text)));
        if (ret_text)
                *ret_text = TAKE_PTR(text);
        if (ret)
                *ret = TAKE_PTR(o);
        return 0;
}

static json_t *load_object(const char *text) {
        json_t *o = text ? json_loads(text, 0, NULL) : NULL;
        if (json_is_object(o))
                return o;
        json_decref(o);
        return json_object();
}

static char *value_text(json_t *v) {
        return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10)) : strdup("unset");
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int workload_diff(const char *old_text, const char *new_text, char **ret) {
        _cleanup_json_ json_t *a = load_object(old_text), *b = load_object(new_text);
        _cleanup_strv_free_ char **keys = NULL;
        const char *k;
        json_t *v;
        if (!a || !b)
                return -ENOMEM;
        /* every key of either, sorted, once */
        json_object_foreach(a, k, v)
                if (strv_push(&keys, k) < 0)
                        return -ENOMEM;
        json_object_foreach(b, k, v)
                if (!json_object_get(a, k) && strv_push(&keys, k) < 0)
                        return -ENOMEM;
        size_t n = strv_length(keys), changed = 0;
        if (n)
                qsort(keys, n, sizeof(*keys), cmp_str);
        const char *first = NULL;
        for (size_t i = 0; i < n; i++) {
                json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);
                if (x && y && json_equal(x, y))
                        continue;
                if (!changed++)
                        first = keys[i];
        }
        *ret = NULL;
        if (!changed)
                return 0;
        _cleanup_free_ char *was = value_text(json_object_get(a, first)), *now = value_text(json_object_get(b, first));
        if (!was || !now)
                return -ENOMEM;
        char more[48] = "";
        if (changed > 1)
                snprintf(more, sizeof(more), " (and %zu more)", changed - 1);
        *ret = strdup_printf("%s %s, the matrix now says %s%s", first, was, now, more);
        return *ret ? 0 : -ENOMEM;
}
