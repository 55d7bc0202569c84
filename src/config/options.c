/* options.c -- the one table of the bench's, the dataset's and the eval's settings. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bench/dataset.h"
#include "bench/scrape.h"
#include "config/options.h"

static int parse_dataset_kind(const char *s, void *dst) {
        return dataset_kind_from_name(s, dst);
}

static int parse_trace_unit(const char *s, void *dst) {
        return dataset_trace_unit_from_name(s, dst);
}

static int parse_kv_layout(const char *s, void *dst) {
        return scrape_kv_layout_from_name(s, dst);
}

/* chat, or completion (the command line's name) / completions (a matrix's): the same */
static int parse_endpoint(const char *s, void *dst) {
        bool *chat = dst;
        if (strcmp(s, "chat") == 0)
                *chat = true;
        else if (strcmp(s, "completion") == 0 || strcmp(s, "completions") == 0)
                *chat = false;
        else
                return -EINVAL;
        return 0;
}

static const char *const dataset_names[] = {"sharegpt", "random", "prefix_repetition", "custom", "multi_turn", "trace",
                                            NULL};
static const char *const endpoint_names[] = {"chat", "completions", NULL};

#define SPEC(f) OW_SPEC, offsetof(struct bench_spec, f)
#define DS(f) OW_DATASET, offsetof(struct dataset_options, f)
#define TARGET(f) OW_TARGET, offsetof(struct bench_target, f)
#define EVAL(f) OW_EVAL, offsetof(struct eval_options, f)
#define CUSTOM OW_NONE, 0

/* In the order of the help. Bounds are the same on the command line and in a matrix. An
 * entry gives the fields it uses; the rest are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct option_def options_table[] = {
        {"url", "url", NULL, OS_BENCH, OT_STRING, TARGET(base_url), .arg = "URL",
         .help = "the server, e.g. http://127.0.0.1:30000"},
        {"concurrency", "concurrency", "concurrency", OS_BENCH, OT_CUSTOM, CUSTOM, 1, 100000, .arg = "LIST",
         .def = "1; a matrix: [1, 8, 32]",
         .help = "requests in flight, one level per value;\nwith --rate, the cap on requests in flight"},
        {"requests", "requests", "requests", OS_BENCH, OT_INT, SPEC(requests), 1, 10000000, .arg = "N",
         .help = "counted requests per level", .what = "requests"},
        {"duration", "duration", "duration", OS_BENCH, OT_DURATION, SPEC(duration), .arg = "DUR",
         .help = "or: send for this long per level (30s, 2m)", .hint = "try 30s, 2m", .what = "duration"},
        {"output_tokens", "output-tokens", "output_tokens", OS_BENCH, OT_INT, SPEC(output_tokens), 1, 10000000,
         .arg = "N", .help = "max_tokens (plus ignore_eos/min_tokens when --engine takes them)",
         .what = "output_tokens"},
        {"input_tokens", "input-tokens", "input_tokens", OS_BENCH, OT_INT, SPEC(input_tokens), 0, 10000000,
         .arg = "N", .def = "a short prompt",
         .help = "synthetic prompt length in the server's tokens, sized against\nit first",
         .what = "input_tokens"},
        {"calibrate", "no-calibrate", "calibrate", OS_BENCH, OT_BOOL, SPEC(calibrate), .flags = OF_CLI_FALSE,
         .help = "N words of text instead, not sized and the context not checked"},
        {"preconnect", "no-preconnect", NULL, OS_BENCH, OT_BOOL, SPEC(no_preconnect),
         .help = "do not open each level's connections before it starts"},
        {"threads", "threads", "threads", OS_BENCH, OT_INT, SPEC(threads), 1, BENCH_MAX_THREADS,
         .flags = OF_RANGE_HINT, .arg = "N",
         .help = "event loops (one thread each) the streams are divided among;\ndefault: 1 below 256 streams, above "
                 "one per 128 streams, at\nmost the CPUs less one (docs/bench.md \"Client threads\")"},
        {"rate", "rate", "rate", OS_BENCH, OT_DOUBLE, SPEC(rate), 0, 1e6, .flags = OF_MIN_OPEN, .arg = "R",
         .help = "open loop: R requests/s at absolute scheduled times;\n1/R may not pass --timeout",
         .hint = "requests per second", .what = "rate", .bad = "is requests per second, above 0 and at most 1e6"},
        {"request_rate", "request-rate", "request_rate", OS_BENCH, OT_DOUBLE, SPEC(rate), 0, 1e6,
         .flags = OF_MIN_OPEN, .arg = "R", .help = "--rate by vllm bench serve's name", .hint = "requests per second",
         .what = "rate", .bad = "is requests per second, above 0 and at most 1e6"},
        {"poisson", "poisson", "poisson", OS_BENCH, OT_BOOL, SPEC(poisson),
         .help = "open loop with Poisson arrivals (default: constant spacing)"},
        {"burstiness", "burstiness", "burstiness", OS_BENCH, OT_DOUBLE, SPEC(burstiness), 0, 1000,
         .flags = OF_MIN_OPEN, .arg = "B",
         .help = "open loop: gamma-distributed gaps of shape B, mean 1/R\n(1: Poisson, below 1 burstier, above 1 more "
                 "even)",
         .hint = "a gamma shape above 0", .bad = "is a gamma shape above 0 (1: Poisson)"},
        {"warmup", "warmup", "warmup", OS_BENCH, OT_INT, SPEC(warmup), 0, 100000, .arg = "N",
         .def = "0; a matrix: 2", .help = "requests per level sent first and not counted", .what = "warmup"},
        {"model", "model", NULL, OS_BENCH, OT_STRING, TARGET(model), .arg = "NAME", .def = "omitted",
         .help = "model field of the requests"},
        {"endpoint", "endpoint", "endpoint", OS_BENCH, OT_ENUM, SPEC(chat), .parse = parse_endpoint,
         .names = endpoint_names, .arg = "KIND", .def = "chat", .help = "chat or completion",
         .hint = "chat or completion", .what = "endpoint", .bad = "unknown endpoint"},
        {"engine", "engine", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "NAME",
         .help = "sglang, vllm, trtllm, llama.cpp, testbed, generic"},
        {"timeout", "timeout", NULL, OS_BENCH, OT_DURATION, TARGET(request_timeout), .arg = "DUR", .def = "10m",
         .help = "per request", .hint = "try 30s, 2m, 500ms"},
        {"prompt_file", "prompt-file", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "FILE",
         .help = "prompts, one per line, used in turn"},
        {"slo_ttft", "slo-ttft-ms", NULL, OS_BENCH, OT_MS, TARGET(slo_ttft), 0, 1e9, .arg = "MS",
         .help = "goodput: requests with TTFT at most MS ..."},
        {"slo_tpot", "slo-tpot-ms", NULL, OS_BENCH, OT_MS, TARGET(slo_tpot), 0, 1e9, .arg = "MS",
         .help = "... and TPOT at most MS"},
        {"goodput", "goodput", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "SLOS",
         .help = "the same in vLLM's form: \"ttft:MS tpot:MS e2el:MS\" (any of them)"},
        {"server_metrics", "no-server-metrics", "server_metrics", OS_BENCH, OT_BOOL, SPEC(no_server_metrics),
         .flags = OF_NEGATE, .help = "do not scrape the server's Prometheus /metrics"},
        {"kv_cache_layout", "kv-cache-layout", NULL, OS_BENCH, OT_ENUM, TARGET(kv_layout), .parse = parse_kv_layout,
         .arg = "L", .def = "unknown, computed as split",
         .help = "llama.cpp's KV cache among its slots, for the KV-cache usage\nestimated from GET /slots: unified "
                 "(llama-server -kvu,\nand llama-server without -np) or split (-np N)",
         .hint = "unified or split"},
        {"tokenizer", "tokenizer", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "PATH",
         .def = "the server's counts that agree, docs/metrics.md",
         .help = "count tokens (outputs and prompt sizes) with the model's own\ntokenizer: a .gguf, a tokenizer.json "
                 "or a folder with one"},
        {"seed", "seed", "seed", OS_DATASET, OT_U64, SPEC(seed), 0, 2147483647, .arg = "N", .def = "fixed",
         .help = "prompts, the dataset's sample and the arrivals"},
        {"samples", "samples", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "FILE",
         .help = "write the raw per-request samples there as JSON"},
        {"format", "format", NULL, OS_BENCH, OT_CUSTOM, CUSTOM, .arg = "text|json", .def = "text",
         .help = "how the result is printed"},
        /* a matrix's own (a sweep's cells) */
        {"max_failures", NULL, "max_failures", OS_BENCH, OT_CUSTOM, CUSTOM},
        {"repeats", NULL, "repeats", OS_BENCH, OT_INT, SPEC(repeats), 1, 100},
        {"search", NULL, "search", OS_BENCH, OT_CUSTOM, CUSTOM},
        {"checks_under_load", NULL, "checks_under_load", OS_BENCH, OT_BOOL, SPEC(checks_under_load)},
        {"dataset", NULL, "dataset", OS_BENCH, OT_CUSTOM, CUSTOM},
        /* the workload: vllm bench serve's names (docs/bench.md "Workloads") */
        {"dataset_name", "dataset-name", "name", OS_DATASET, OT_ENUM, DS(kind), .flags = OF_WORKLOAD,
         .parse = parse_dataset_kind, .names = dataset_names, .arg = "NAME", .def = "random",
         .help = "random (synthetic prompts), sharegpt (a ShareGPT JSON\nfile), prefix_repetition (groups sharing a "
                 "prefix), custom\n(a JSONL file of {\"prompt\": ..., \"output_tokens\": N}),\nmulti_turn (sessions of "
                 "several turns), trace (a Mooncake\nJSONL trace replayed at its times)",
         .hint = "sharegpt, random, prefix_repetition, custom, multi_turn or trace", .bad = "unknown dataset",
         .bad_tail = " (sharegpt, random, prefix_repetition, custom, multi_turn, trace)"},
        {"dataset_path", "dataset-path", "path", OS_DATASET, OT_CUSTOM, CUSTOM, .flags = OF_WORKLOAD, .arg = "FILE",
         .def = "synthetic",
         .help = "the sharegpt, custom or trace file; multi_turn: a ShareGPT\nfile whose human turns are the turns"},
        {"num_prompts", "num-prompts", "num_prompts", OS_DATASET, OT_INT, DS(num_prompts), 1, DATASET_MAX_PROMPTS,
         .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "1000",
         .help = "prompts drawn from the dataset; also the\nrequests per level when neither --requests nor --duration"},
        {"random_input_len", "random-input-len", "random_input_len", OS_DATASET, OT_INT, SPEC(input_tokens), 0,
         DATASET_MAX_TOKENS, .arg = "N", .help = "--input-tokens by vLLM's name"},
        {"random_output_len", "random-output-len", "random_output_len", OS_DATASET, OT_INT, SPEC(output_tokens), 1,
         DATASET_MAX_TOKENS, .arg = "N", .help = "--output-tokens by vLLM's name"},
        {"random_range_ratio", "random-range-ratio", "random_range_ratio", OS_DATASET, OT_DOUBLE, DS(range_ratio), 0,
         1, .flags = OF_WORKLOAD | OF_MAX_OPEN, .arg = "R", .help = "lengths uniform in [len*(1-R), len*(1+R)]",
         .hint = "0 <= R < 1", .bad = "must be less than 1"},
        {"prefix_len", "prefix-repetition-prefix-len", "prefix_repetition_prefix_len", OS_DATASET, OT_INT,
         DS(prefix_len), 0, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "256",
         .help = "shared prefix tokens"},
        {"suffix_len", "prefix-repetition-suffix-len", "prefix_repetition_suffix_len", OS_DATASET, OT_INT,
         DS(suffix_len), 0, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "256",
         .help = "each request's own tokens"},
        {"num_prefixes", "prefix-repetition-num-prefixes", "prefix_repetition_num_prefixes", OS_DATASET, OT_INT,
         DS(num_prefixes), 1, DATASET_MAX_PROMPTS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "10",
         .help = "groups"},
        {"prefix_output_len", "prefix-repetition-output-len", "prefix_repetition_output_len", OS_DATASET, OT_INT,
         DS(prefix_output_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .def = "128", .help = "output tokens"},
        {"sharegpt_output_len", "sharegpt-output-len", "sharegpt_output_len", OS_DATASET, OT_INT,
         DS(sharegpt_output_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .help = "every output N tokens instead of the reply's length"},
        {"sharegpt_max_output_len", "sharegpt-max-output-len", "sharegpt_max_output_len", OS_DATASET, OT_INT,
         DS(sharegpt_max_output_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .help = "replies longer than N asked for N tokens"},
        {"sharegpt_min_len", "sharegpt-min-len", "sharegpt_min_len", OS_DATASET, OT_INT, DS(sharegpt_min_len), 0,
         DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "4",
         .help = "conversations shorter are skipped"},
        {"sharegpt_max_prompt_len", "sharegpt-max-prompt-len", "sharegpt_max_prompt_len", OS_DATASET, OT_INT,
         DS(sharegpt_max_prompt_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .def = "1024", .help = "conversations with a longer prompt are skipped"},
        {"sharegpt_max_total_len", "sharegpt-max-total-len", "sharegpt_max_total_len", OS_DATASET, OT_INT,
         DS(sharegpt_max_total_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .def = "2048", .help = "conversations longer in all are skipped"},
        {"multi_turn_turns", "multi-turn-turns", "multi_turn_turns", OS_DATASET, OT_INT, DS(multi_turn_turns), 1,
         DATASET_MAX_TURNS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "4; a file's: all, at most N",
         .help = "turns per session"},
        {"multi_turn_input_len", "multi-turn-input-len", "multi_turn_input_len", OS_DATASET, OT_INT,
         DS(multi_turn_input_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .def = "128", .help = "synthetic: tokens of each user turn"},
        {"multi_turn_output_len", "multi-turn-output-len", "multi_turn_output_len", OS_DATASET, OT_INT,
         DS(multi_turn_output_len), 1, DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N",
         .def = "128; a file's: each reply's length", .help = "max_tokens of each turn"},
        {"multi_turn_think_time", "multi-turn-think-time", "multi_turn_think_time", OS_DATASET, OT_DURATION,
         DS(multi_turn_think_time), .flags = OF_WORKLOAD | OF_ZERO_OK, .arg = "DUR", .def = "0",
         .help = "pause between an answer and the next turn;\nmulti_turn: --concurrency, --requests and --warmup "
                 "count\nsessions; each turn sends the conversation so far",
         .hint = "try 500ms, 2s"},
        {"trace_speed", "trace-speed", "trace_speed", OS_DATASET, OT_DOUBLE, DS(trace_speed), 0, 1e6,
         .flags = OF_WORKLOAD | OF_MIN_OPEN, .arg = "S", .def = "1",
         .help = "trace: its times divided by S (2: twice as fast)", .hint = "above 0; 1: the trace's own times",
         .bad = "must be above 0 (1: the trace's own times, 2: twice as fast)"},
        {"trace_block_size", "trace-block-size", "trace_block_size", OS_DATASET, OT_INT, DS(trace_block_size), 1,
         DATASET_MAX_TOKENS, .flags = OF_WORKLOAD | OF_RANGE_HINT, .arg = "N", .def = "512",
         .help = "trace: tokens per hash_ids block"},
        {"trace_unit", "trace-unit", "trace_unit", OS_DATASET, OT_ENUM, DS(trace_unit_ms), .flags = OF_WORKLOAD,
         .parse = parse_trace_unit, .arg = "U", .def = "ms, Mooncake's",
         .help = "trace: its timestamps' unit, s, ms, us or ns;\na trace spanning more than a day is refused",
         .hint = "s, ms, us or ns", .bad = "bench.dataset.trace_unit is s, ms, us or ns, not"},
        /* the eval (docs/eval.md) */
        {"eval_file", "eval", "file", OS_EVAL, OT_CUSTOM, CUSTOM, .flags = OF_SMOKE, .arg = "FILE",
         .help = "after a passing suite, the accuracy eval: a JSONL file of\n{\"prompt\", \"expect\"} lines, or "
                 "builtin (products, sums,\nletters, sort, copy; builtin:products,sums for some)"},
        {"eval_builtin", NULL, "builtin", OS_EVAL, OT_CUSTOM, CUSTOM},
        {"eval_samples", "samples", "samples", OS_EVAL, OT_SIZE, EVAL(samples), 1, EVAL_MAX_QUESTIONS,
         .flags = OF_SMOKE | OF_RANGE_HINT, .arg = "N", .def = "200",
         .help = "eval questions: a seeded subset of the file, or how many\nbuilt-in ones to make"},
        {"eval_seed", "seed", "seed", OS_EVAL, OT_U64, EVAL(seed), 0, 2147483647, .flags = OF_SMOKE, .arg = "N",
         .def = "1", .help = "for the subset and the built-in questions"},
        {"eval_concurrency", "concurrency", "concurrency", OS_EVAL, OT_INT, EVAL(concurrency), 1,
         EVAL_MAX_CONCURRENCY, .flags = OF_SMOKE | OF_RANGE_HINT, .arg = "N", .def = "8",
         .help = "eval requests in flight"},
        {"eval_max_tokens", "max-tokens", "max_tokens", OS_EVAL, OT_INT, EVAL(max_tokens), 1, 1000000,
         .flags = OF_SMOKE, .arg = "N", .def = "256", .help = "per eval question"},
        {"eval_thinking", "thinking", "thinking", OS_EVAL, OT_CUSTOM, CUSTOM, .flags = OF_SMOKE, .arg = "on|off",
         .help = "switch thinking for the eval questions (default: the server's)", .hint = "on or off"},
        {"eval_logprobs", "no-logprobs", "logprobs", OS_EVAL, OT_BOOL, EVAL(logprobs), .flags = OF_SMOKE | OF_CLI_FALSE,
         .help = "do not ask for logprobs with the eval questions"},
        {"eval_min_agreement", NULL, "min_agreement", OS_EVAL, OT_DOUBLE, EVAL(min_agreement), 0, 1,
         .bad = "is a share from 0 to 1"},
        {"eval_max_logprob_diff", NULL, "max_logprob_diff", OS_EVAL, OT_DOUBLE, EVAL(max_logprob_diff), 0, 1e9},
};
#pragma GCC diagnostic pop

const size_t options_table_n = ELEMENTSOF(options_table);

bool options_takes(const struct option_def *d, enum option_command cmd) {
        return d->flag && !!(d->flags & OF_SMOKE) == (cmd == OC_SMOKE);
}

const struct option_def *options_by_flag(enum option_command cmd, const char *flag) {
        for (size_t i = 0; i < options_table_n; i++)
                if (options_takes(&options_table[i], cmd) && strcmp(options_table[i].flag, flag) == 0)
                        return &options_table[i];
        return NULL;
}

const struct option_def *options_by_key(enum option_scope scope, const char *key) {
        for (size_t i = 0; i < options_table_n; i++)
                if (options_table[i].scope == scope && options_table[i].key && strcmp(options_table[i].key, key) == 0)
                        return &options_table[i];
        return NULL;
}

void options_keys(enum option_scope scope, const char **v, size_t n) {
        size_t k = 0;
        for (size_t i = 0; i < options_table_n && k + 1 < n; i++)
                if (options_table[i].scope == scope && options_table[i].key)
                        v[k++] = options_table[i].key;
        v[k] = NULL;
}

void *options_place(const struct option_def *d, struct bench_spec *spec, struct bench_target *target,
                    struct eval_options *eval) {
        char *base = NULL;
        switch (d->where) {
        case OW_SPEC:
                base = (char *)spec;
                break;
        case OW_DATASET:
                base = spec ? (char *)&spec->dataset : NULL;
                break;
        case OW_TARGET:
                base = (char *)target;
                break;
        case OW_EVAL:
                base = (char *)eval;
                break;
        case OW_NONE:
                break;
        }
        return base ? base + d->off : NULL;
}

static int parse_long(const char *s, const struct option_def *d, long *ret) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || errno || *end || v < (long)d->min || v > (long)d->max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_double(const char *s, const struct option_def *d, double *ret) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (!*s || errno || end == s || *end || isnan(v))
                return -EINVAL;
        if (v < d->min || v > d->max || ((d->flags & OF_MIN_OPEN) && v == d->min) ||
            ((d->flags & OF_MAX_OPEN) && v == d->max))
                return -EINVAL;
        *ret = v;
        return 0;
}

int options_parse_arg(const struct option_def *d, const char *s, void *dst) {
        long l;
        double x;
        usec_t u;
        switch (d->type) {
        case OT_INT:
                if (parse_long(s, d, &l) < 0)
                        return -EINVAL;
                *(int *)dst = (int)l;
                return 0;
        case OT_U64:
                if (parse_long(s, d, &l) < 0)
                        return -EINVAL;
                *(uint64_t *)dst = (uint64_t)l;
                return 0;
        case OT_SIZE:
                if (parse_long(s, d, &l) < 0)
                        return -EINVAL;
                *(size_t *)dst = (size_t)l;
                return 0;
        case OT_DOUBLE:
                if (parse_double(s, d, &x) < 0)
                        return -EINVAL;
                *(double *)dst = x;
                return 0;
        case OT_MS:
                if (parse_double(s, d, &x) < 0 || !(x > 0))
                        return -EINVAL;
                *(usec_t *)dst = (usec_t)llround(x * 1000.0);
                return 0;
        case OT_DURATION:
                if (parse_duration(s, &u) < 0 || (u == 0 && !(d->flags & OF_ZERO_OK)))
                        return -EINVAL;
                *(usec_t *)dst = u;
                return 0;
        case OT_BOOL:
                *(bool *)dst = !(d->flags & OF_CLI_FALSE);
                return 0;
        case OT_STRING:
                *(const char **)dst = s;
                return 0;
        case OT_ENUM:
                return d->parse(s, dst) < 0 ? -EINVAL : 0;
        case OT_CUSTOM:
                break;
        }
        return -EINVAL;
}

char *options_what(const struct option_def *d) {
        static const char *const scopes[] = {"bench", "bench.dataset", "eval"};
        if (d->what)
                return strdup(d->what);
        return strdup_printf("%s.%s", scopes[d->scope], d->key);
}
