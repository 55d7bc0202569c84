/* cli_bench.c -- `gauntlet bench`: load-test a running server, one level per concurrency. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/bench.h"
#include "io/tokenizer.h"
#include "text/secrets.h"
#include "text/text.h"
#include "report/report.h"
#include "cli/cli.h"
#include "io/loop.h"
#include "base/metrics.h"
#include "run/phases.h"
#include "base/profile.h"

#define BENCH_MAX_LEVELS 64
#define BENCH_MAX_CONCURRENCY 100000
#define PROMPT_FILE_MAX ((size_t)64 << 20)
/* --output-tokens when a dataset other than random is named and it is not given: a custom
 * line without output_tokens asks for this many (vLLM's --custom-output-len default). */
#define BENCH_CLI_OUTPUT_TOKENS 256

enum {
        OPT_BURSTINESS = 256,
        OPT_DATASET_NAME,
        OPT_DATASET_PATH,
        OPT_NUM_PROMPTS,
        OPT_RANGE_RATIO,
        OPT_PREFIX_LEN,
        OPT_SUFFIX_LEN,
        OPT_NUM_PREFIXES,
        OPT_PREFIX_OUTPUT_LEN,
        OPT_SHAREGPT_OUTPUT_LEN,
        OPT_SHAREGPT_MAX_OUTPUT_LEN,
        OPT_SHAREGPT_MIN_LEN,
        OPT_SHAREGPT_MAX_PROMPT_LEN,
        OPT_SHAREGPT_MAX_TOTAL_LEN,
        OPT_NO_SERVER_METRICS,
        OPT_KV_CACHE_LAYOUT,
        OPT_GOODPUT,
        OPT_MULTI_TURN_TURNS,
        OPT_MULTI_TURN_INPUT_LEN,
        OPT_MULTI_TURN_OUTPUT_LEN,
        OPT_MULTI_TURN_THINK_TIME,
        OPT_TRACE_SPEED,
        OPT_TRACE_BLOCK_SIZE,
        OPT_TRACE_UNIT,
        OPT_TOKENIZER,
        OPT_THREADS,
};

/* The dataset's integer options: flag, range and where each goes. */
struct int_option {
        const char *name;
        long min, max;
        int *dst;
};

static const struct int_option *int_option(struct dataset_options *o, int c) {
        static struct int_option v;
        switch (c) {
        case OPT_NUM_PROMPTS:
                v = (struct int_option){"num-prompts", 1, DATASET_MAX_PROMPTS, &o->num_prompts};
                break;
        case OPT_PREFIX_LEN:
                v = (struct int_option){"prefix-repetition-prefix-len", 0, DATASET_MAX_TOKENS, &o->prefix_len};
                break;
        case OPT_SUFFIX_LEN:
                v = (struct int_option){"prefix-repetition-suffix-len", 0, DATASET_MAX_TOKENS, &o->suffix_len};
                break;
        case OPT_NUM_PREFIXES:
                v = (struct int_option){"prefix-repetition-num-prefixes", 1, DATASET_MAX_PROMPTS, &o->num_prefixes};
                break;
        case OPT_PREFIX_OUTPUT_LEN:
                v = (struct int_option){"prefix-repetition-output-len", 1, DATASET_MAX_TOKENS, &o->prefix_output_len};
                break;
        case OPT_SHAREGPT_OUTPUT_LEN:
                v = (struct int_option){"sharegpt-output-len", 1, DATASET_MAX_TOKENS, &o->sharegpt_output_len};
                break;
        case OPT_SHAREGPT_MAX_OUTPUT_LEN:
                v = (struct int_option){"sharegpt-max-output-len", 1, DATASET_MAX_TOKENS, &o->sharegpt_max_output_len};
                break;
        case OPT_SHAREGPT_MIN_LEN:
                v = (struct int_option){"sharegpt-min-len", 0, DATASET_MAX_TOKENS, &o->sharegpt_min_len};
                break;
        case OPT_SHAREGPT_MAX_PROMPT_LEN:
                v = (struct int_option){"sharegpt-max-prompt-len", 1, DATASET_MAX_TOKENS, &o->sharegpt_max_prompt_len};
                break;
        case OPT_MULTI_TURN_TURNS:
                v = (struct int_option){"multi-turn-turns", 1, DATASET_MAX_TURNS, &o->multi_turn_turns};
                break;
        case OPT_MULTI_TURN_INPUT_LEN:
                v = (struct int_option){"multi-turn-input-len", 1, DATASET_MAX_TOKENS, &o->multi_turn_input_len};
                break;
        case OPT_MULTI_TURN_OUTPUT_LEN:
                v = (struct int_option){"multi-turn-output-len", 1, DATASET_MAX_TOKENS, &o->multi_turn_output_len};
                break;
        case OPT_TRACE_BLOCK_SIZE:
                v = (struct int_option){"trace-block-size", 1, DATASET_MAX_TOKENS, &o->trace_block_size};
                break;
        default:
                v = (struct int_option){"sharegpt-max-total-len", 1, DATASET_MAX_TOKENS, &o->sharegpt_max_total_len};
                break;
        }
        return &v;
}

static void dataset_freep(struct dataset **d) {
        dataset_free(*d);
}

static void help(void) {
        printf("usage: gauntlet bench --url URL --concurrency N[,N...] (--requests N | --duration DUR)\n"
               "                      --output-tokens N [--input-tokens N] [--rate R] [--poisson]\n"
               "                      [--warmup N] [--model NAME] [--endpoint chat|completion]\n"
               "                      [--engine NAME] [--timeout DUR] [--prompt-file FILE]\n"
               "                      [--slo-ttft-ms MS] [--slo-tpot-ms MS] [--goodput SLOS] [--seed N]\n"
               "                      [--samples FILE] [--format text|json] [--no-calibrate]\n"
               "                      [--no-preconnect] [--burstiness B] [--no-server-metrics]\n"
               "                      [--threads N] [--kv-cache-layout unified|split]\n"
               "                      [--dataset-name sharegpt|random|prefix_repetition|custom|\n"
               "                                      multi_turn|trace]\n"
               "                      [--dataset-path FILE] [--num-prompts N] [DATASET OPTIONS]\n\n"
               "Streams requests to a running OpenAI-compatible server and measures TTFT, ITL,\n"
               "TPOT, end-to-end latency and throughput (definitions: docs/metrics.md).\n\n"
               "  --url URL            the server, e.g. http://127.0.0.1:30000\n"
               "  --concurrency LIST   requests in flight, one level per value (default 1);\n"
               "                       with --rate, the cap on requests in flight\n"
               "  --requests N         counted requests per level\n"
               "  --duration DUR       or: send for this long per level (30s, 2m)\n"
               "  --output-tokens N    max_tokens (plus ignore_eos/min_tokens when --engine takes them)\n"
               "  --input-tokens N     synthetic prompt length in the server's tokens, sized against\n"
               "                       it first (default: a short prompt)\n"
               "  --no-calibrate       N words of text instead, not sized and the context not checked\n"
               "  --no-preconnect      do not open each level's connections before it starts\n"
               "  --threads N          event loops (one thread each) the streams are divided among;\n"
               "                       default: 1 below 256 streams, above one per 128 streams, at\n"
               "                       most the CPUs less one (docs/bench.md \"Client threads\")\n"
               "  --rate R             open loop: R requests/s at absolute scheduled times (also\n"
               "                       --request-rate, vLLM's name); 1/R may not pass --timeout\n"
               "  --poisson            open loop with Poisson arrivals (default: constant spacing)\n"
               "  --burstiness B       open loop: gamma-distributed gaps of shape B, mean 1/R\n"
               "                       (1: Poisson, below 1 burstier, above 1 more even)\n"
               "  --warmup N           requests per level sent first and not counted (default 0)\n"
               "  --model NAME         model field of the requests (default: omitted)\n"
               "  --endpoint KIND      chat (default) or completion\n"
               "  --engine NAME        sglang, vllm, trtllm, llama.cpp, testbed, generic\n"
               "  --timeout DUR        per request (default 10m)\n"
               "  --prompt-file FILE   prompts, one per line, used in turn\n"
               "  --slo-ttft-ms MS     goodput: requests with TTFT at most MS ...\n"
               "  --slo-tpot-ms MS     ... and TPOT at most MS\n"
               "  --goodput SLOS       the same in vLLM's form: \"ttft:MS tpot:MS e2el:MS\" (any of them)\n"
               "  --no-server-metrics  do not scrape the server's Prometheus /metrics\n"
               "  --kv-cache-layout L  llama.cpp's KV cache among its slots, for the KV-cache usage\n"
               "                       estimated from GET /slots: unified (llama-server -kvu,\n"
               "                       and llama-server without -np) or split (-np N);\n"
               "                       default: unknown, computed as split\n"
               "  --tokenizer PATH     count tokens (outputs and prompt sizes) with the model's own\n"
               "                       tokenizer: a .gguf, a tokenizer.json or a folder with one\n"
               "                       (default: the server's counts that agree, docs/metrics.md)\n"
               "  --seed N             prompts, the dataset's sample and the arrivals (default fixed)\n"
               "  --samples FILE       write the raw per-request samples there as JSON\n"
               "  --format text|json   (default text)\n\n"
               "Workload (the names and meanings of vllm bench serve; docs/bench.md \"Workloads\"):\n"
               "  --dataset-name NAME  random (default: synthetic prompts), sharegpt (a ShareGPT JSON\n"
               "                       file), prefix_repetition (groups sharing a prefix), custom\n"
               "                       (a JSONL file of {\"prompt\": ..., \"output_tokens\": N}),\n"
               "                       multi_turn (sessions of several turns), trace (a Mooncake\n"
               "                       JSONL trace replayed at its times)\n"
               "  --dataset-path FILE  the sharegpt, custom or trace file; multi_turn: a ShareGPT\n"
               "                       file whose human turns are the turns (default: synthetic)\n"
               "  --num-prompts N      prompts drawn from the dataset (default 1000); also the\n"
               "                       requests per level when neither --requests nor --duration\n"
               "  --random-input-len N, --random-output-len N   other names of --input-tokens and\n"
               "                       --output-tokens\n"
               "  --random-range-ratio R   lengths uniform in [len*(1-R), len*(1+R)], 0 <= R < 1\n"
               "  --prefix-repetition-prefix-len N   shared prefix tokens (default 256)\n"
               "  --prefix-repetition-suffix-len N   each request's own tokens (default 256)\n"
               "  --prefix-repetition-num-prefixes N groups (default 10)\n"
               "  --prefix-repetition-output-len N   output tokens (default 128)\n"
               "  --sharegpt-output-len N   every output N tokens instead of the reply's length\n"
               "  --sharegpt-max-output-len N   replies longer than N asked for N tokens\n"
               "  --sharegpt-min-len N, --sharegpt-max-prompt-len N, --sharegpt-max-total-len N\n"
               "                       conversations outside these lengths are skipped (4, 1024, 2048)\n"
               "  --multi-turn-turns N       turns per session (default 4; a file's: all, at most N)\n"
               "  --multi-turn-input-len N   synthetic: tokens of each user turn (default 128)\n"
               "  --multi-turn-output-len N  max_tokens of each turn (default 128; a file's: each\n"
               "                       reply's length)\n"
               "  --multi-turn-think-time DUR   pause between an answer and the next turn (0)\n"
               "                       multi_turn: --concurrency, --requests and --warmup count\n"
               "                       sessions; each turn sends the conversation so far\n"
               "  --trace-speed S      trace: its times divided by S (default 1; 2: twice as fast)\n"
               "  --trace-block-size N trace: tokens per hash_ids block (default 512)\n"
               "  --trace-unit U       trace: its timestamps' unit, s, ms (default, Mooncake's),\n"
               "                       us or ns; a trace spanning more than a day is refused\n\n"
               "Exit status: 0 requests completed, 1 every request failed or the bench could\n"
               "not run, 2 usage error.\n");
}

static int parse_levels(const char *s, int **ret, size_t *ret_n) {
        _cleanup_free_ char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        int *v = NULL;
        size_t n = 0;
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                long x;
                if (n >= BENCH_MAX_LEVELS || cli_parse_int(tok, 1, BENCH_MAX_CONCURRENCY, &x) < 0) {
                        free(v);
                        return -EINVAL;
                }
                int *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        free(v);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = (int)x;
        }
        if (n == 0)
                return -EINVAL;
        *ret = v;
        *ret_n = n;
        return 0;
}

static int parse_ms(const char *s, usec_t *ret) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end || !(v > 0) || v > 1e9)
                return -EINVAL;
        *ret = (usec_t)llround(v * 1000.0);
        return 0;
}

/* One prompt per non-empty line; the text is data and goes to the server JSON-escaped. */
static int load_prompts(const char *path, char **ret_text, char ***ret) {
        char *text = NULL;
        int r = read_file_capped(path, PROMPT_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        char **v = NULL;
        size_t n = 0;
        for (char *line = text, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (!*line)
                        continue;
                char **nv = realloc(v, (n + 2) * sizeof(*v));
                if (!nv) {
                        free(v);
                        free(text);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = line;
                v[n] = NULL;
        }
        if (n == 0) {
                free(text);
                return -ENODATA;
        }
        *ret_text = text;
        *ret = v;
        return 0;
}

static void fmt_ms(char *b, size_t n, json_t *dist, const char *key) {
        json_t *v = json_object_get(dist, key);
        if (json_is_number(v))
                snprintf(b, n, "%.2f", json_number_value(v));
        else
                snprintf(b, n, "-");
}

static void print_text(json_t *levels) {
        printf("%6s %7s %7s %6s %10s %8s %9s %9s %8s %8s %8s %9s %5s\n", "conc", "reqs", "done", "fail",
               "out tok/s", "req/s", "ttft p50", "ttft p99", "itl p50", "itl p99", "tpot p50", "e2e p50", "cpu");
        size_t i;
        json_t *lv;
        json_array_foreach(levels, i, lv) {
                char t50[32], t99[32], i50[32], i99[32], p50[32], e50[32];
                fmt_ms(t50, sizeof(t50), json_object_get(lv, metric_key(METRIC_TTFT_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(t99, sizeof(t99), json_object_get(lv, metric_key(METRIC_TTFT_MS)), metric_stat_key(METRIC_STAT_P99));
                fmt_ms(i50, sizeof(i50), json_object_get(lv, metric_key(METRIC_ITL_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(i99, sizeof(i99), json_object_get(lv, metric_key(METRIC_ITL_MS)), metric_stat_key(METRIC_STAT_P99));
                fmt_ms(p50, sizeof(p50), json_object_get(lv, metric_key(METRIC_TPOT_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(e50, sizeof(e50), json_object_get(lv, metric_key(METRIC_E2E_MS)), metric_stat_key(METRIC_STAT_P50));
                printf("%6lld %7lld %7lld %6lld %10.1f %8.2f %9s %9s %8s %8s %8s %9s %4.0f%%\n",
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_REQUESTS))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_COMPLETED))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_FAILED))),
                       json_number_value(json_object_get(lv, metric_key(METRIC_OUTPUT_TOKENS_PER_S))),
                       json_number_value(json_object_get(lv, metric_key(METRIC_REQUESTS_PER_S))), t50, t99, i50,
                       i99, p50, e50,
                       100 * json_number_value(json_object_get(json_object_get(lv, metric_key(METRIC_CLIENT_CPU)),
                                                               metric_key(METRIC_CPU_CORES))));
        }
        printf("(latencies in ms; definitions in docs/metrics.md)\n");
        /* where the prompts came from, unless the plain synthetic ones */
        json_t *wl = json_object_get(json_array_get(levels, 0), metric_key(METRIC_WORKLOAD));
        const char *ds = json_string_value(json_object_get(wl, "dataset"));
        json_t *in = json_object_get(wl, "input_tokens"), *out = json_object_get(wl, "output_tokens");
        char inputs[96] = "input not measured";
        if (in)
                snprintf(inputs, sizeof(inputs), "input %lld-%lld tokens (%s)",
                         (long long)json_integer_value(json_object_get(in, "min")),
                         (long long)json_integer_value(json_object_get(in, "max")),
                         json_string_value(json_object_get(in, "as")));
        if (ds && (strcmp(ds, "random") != 0 || json_object_get(wl, "range_ratio")))
                printf("workload: %s, %lld prompts; %s, output %lld-%lld; arrivals %s\n", ds,
                       (long long)json_integer_value(json_object_get(wl, "prompts")), inputs,
                       (long long)json_integer_value(json_object_get(out, "min")),
                       (long long)json_integer_value(json_object_get(out, "max")),
                       json_string_value(json_object_get(wl, "arrivals")));
        json_array_foreach(levels, i, lv) {
                _cleanup_free_ char *server = report_server_line(lv);
                _cleanup_free_ char *shown = server ? text_clean(server, strlen(server), 4096) : NULL;
                if (shown)
                        printf("server: concurrency %lld: %s\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))), shown);
                json_t *se = json_object_get(lv, metric_key(METRIC_SESSIONS));
                if (se)
                        printf("sessions: concurrency %lld: %lld started, %lld completed, %lld ended by a failed turn, "
                               "%lld cut; %lld turns\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(se, "started")),
                               (long long)json_integer_value(json_object_get(se, "completed")),
                               (long long)json_integer_value(json_object_get(se, "ended_by_failure")),
                               (long long)json_integer_value(json_object_get(se, "cut")),
                               (long long)json_integer_value(json_object_get(se, "turns")));
        }
        json_array_foreach(levels, i, lv) {
                json_t *cpu = json_object_get(lv, metric_key(METRIC_CLIENT_CPU));
                if (json_is_true(json_object_get(cpu, metric_key(METRIC_CPU_BOUND))))
                        printf("client-bound: concurrency %lld: the busiest of %lld thread(s) used %.0f%% of a core, "
                               "send delay p50 %.3f ms: the figures include the client's own delay\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(cpu, metric_key(METRIC_CPU_THREADS))),
                               100 * json_number_value(json_object_get(cpu, metric_key(METRIC_CPU_LOOP_CORES_MAX))),
                               json_number_value(json_object_get(json_object_get(lv, metric_key(METRIC_SEND_DELAY_MS)),
                                                                 metric_stat_key(METRIC_STAT_P50))));
        }
        json_array_foreach(levels, i, lv) {
                json_int_t flagged = json_integer_value(json_object_get(lv, metric_key(METRIC_OUTPUTS_FLAGGED)));
                json_t *first = json_array_get(json_object_get(lv, metric_key(METRIC_FLAGGED)), 0);
                printf("outputs: concurrency %lld: %lld judged, %lld flagged",
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_OUTPUTS_JUDGED))),
                       (long long)flagged);
                if (flagged > 0 && first)
                        printf(" (%s); first: %s", json_string_value(json_object_get(first, "cause")),
                               json_string_value(json_object_get(first, "evidence")));
                printf("\n");
        }
        json_array_foreach(levels, i, lv) {
                size_t k;
                json_t *w;
                json_array_foreach(json_object_get(lv, metric_key(METRIC_WARNINGS)), k, w)
                        printf("warning: concurrency %lld: %s\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               json_string_value(w));
        }
}

int cli_bench(int argc, char **argv) {
        static const struct option opts[] = {
                {"url", required_argument, NULL, 'u'},
                {"concurrency", required_argument, NULL, 'c'},
                {"requests", required_argument, NULL, 'n'},
                {"duration", required_argument, NULL, 'd'},
                {"output-tokens", required_argument, NULL, 'o'},
                {"input-tokens", required_argument, NULL, 'i'},
                {"rate", required_argument, NULL, 'r'},
                {"request-rate", required_argument, NULL, 'r'}, /* vllm bench serve's name */
                {"tokenizer", required_argument, NULL, OPT_TOKENIZER},
                {"poisson", no_argument, NULL, 'P'},
                {"warmup", required_argument, NULL, 'w'},
                {"model", required_argument, NULL, 'm'},
                {"endpoint", required_argument, NULL, 'E'},
                {"engine", required_argument, NULL, 'e'},
                {"timeout", required_argument, NULL, 't'},
                {"prompt-file", required_argument, NULL, 'p'},
                {"slo-ttft-ms", required_argument, NULL, 'T'},
                {"slo-tpot-ms", required_argument, NULL, 'O'},
                {"seed", required_argument, NULL, 's'},
                {"samples", required_argument, NULL, 'S'},
                {"format", required_argument, NULL, 'f'},
                {"no-calibrate", no_argument, NULL, 'C'},
                {"no-preconnect", no_argument, NULL, 'N'},
                {"burstiness", required_argument, NULL, OPT_BURSTINESS},
                {"no-server-metrics", no_argument, NULL, OPT_NO_SERVER_METRICS},
                {"kv-cache-layout", required_argument, NULL, OPT_KV_CACHE_LAYOUT},
                {"goodput", required_argument, NULL, OPT_GOODPUT},
                {"threads", required_argument, NULL, OPT_THREADS},
                {"dataset-name", required_argument, NULL, OPT_DATASET_NAME},
                {"dataset-path", required_argument, NULL, OPT_DATASET_PATH},
                {"num-prompts", required_argument, NULL, OPT_NUM_PROMPTS},
                {"random-input-len", required_argument, NULL, 'i'},
                {"random-output-len", required_argument, NULL, 'o'},
                {"random-range-ratio", required_argument, NULL, OPT_RANGE_RATIO},
                {"prefix-repetition-prefix-len", required_argument, NULL, OPT_PREFIX_LEN},
                {"prefix-repetition-suffix-len", required_argument, NULL, OPT_SUFFIX_LEN},
                {"prefix-repetition-num-prefixes", required_argument, NULL, OPT_NUM_PREFIXES},
                {"prefix-repetition-output-len", required_argument, NULL, OPT_PREFIX_OUTPUT_LEN},
                {"sharegpt-output-len", required_argument, NULL, OPT_SHAREGPT_OUTPUT_LEN},
                {"sharegpt-max-output-len", required_argument, NULL, OPT_SHAREGPT_MAX_OUTPUT_LEN},
                {"sharegpt-min-len", required_argument, NULL, OPT_SHAREGPT_MIN_LEN},
                {"sharegpt-max-prompt-len", required_argument, NULL, OPT_SHAREGPT_MAX_PROMPT_LEN},
                {"sharegpt-max-total-len", required_argument, NULL, OPT_SHAREGPT_MAX_TOTAL_LEN},
                {"multi-turn-turns", required_argument, NULL, OPT_MULTI_TURN_TURNS},
                {"multi-turn-input-len", required_argument, NULL, OPT_MULTI_TURN_INPUT_LEN},
                {"multi-turn-output-len", required_argument, NULL, OPT_MULTI_TURN_OUTPUT_LEN},
                {"multi-turn-think-time", required_argument, NULL, OPT_MULTI_TURN_THINK_TIME},
                {"trace-speed", required_argument, NULL, OPT_TRACE_SPEED},
                {"trace-block-size", required_argument, NULL, OPT_TRACE_BLOCK_SIZE},
                {"trace-unit", required_argument, NULL, OPT_TRACE_UNIT},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        static const char *const formats[] = {"text", "json", NULL};
        static const char *const endpoints[] = {"chat", "completion", NULL};
        struct bench_target target = {0};
        struct bench_spec spec = {.chat = true, .calibrate = true};
        dataset_options_init(&spec.dataset);
        bool dataset_named = false; /* a workload flag was given */
        bool trace_unit = false;
        const char *tokenizer_path = NULL;
        const char *rate_text = NULL;
        _cleanup_free_ int *levels_v = NULL;
        const char *prompt_file = NULL, *samples_file = NULL, *engine = NULL, *dataset_path = NULL;
        int format = 0;
        long x;

        opterr = 0;
        optind = 1;
        for (;;) {
                int c = getopt_long(argc, argv, "+:h", opts, NULL);
                if (c < 0)
                        break;
                switch (c) {
                case 'u':
                        target.base_url = optarg;
                        break;
                case 'c':
                        free(levels_v);
                        levels_v = NULL;
                        if (parse_levels(optarg, &levels_v, &spec.n_concurrency) < 0)
                                return cli_usage_error("bench", "invalid --concurrency '%s' (want N[,N...], 1..%d)",
                                                       optarg, BENCH_MAX_CONCURRENCY);
                        break;
                case 'n':
                        if (cli_parse_int(optarg, 1, INT32_MAX, &x) < 0)
                                return cli_usage_error("bench", "invalid --requests '%s'", optarg);
                        spec.requests = (int)x;
                        break;
                case 'd':
                        if (parse_duration(optarg, &spec.duration) < 0 || spec.duration == 0)
                                return cli_usage_error("bench", "invalid --duration '%s' (try 30s, 2m)", optarg);
                        break;
                case 'o':
                        if (cli_parse_int(optarg, 1, 10000000, &x) < 0)
                                return cli_usage_error("bench", "invalid --output-tokens '%s'", optarg);
                        spec.output_tokens = (int)x;
                        break;
                case 'i':
                        if (cli_parse_int(optarg, 0, 10000000, &x) < 0)
                                return cli_usage_error("bench", "invalid --input-tokens '%s'", optarg);
                        spec.input_tokens = (int)x;
                        break;
                case 'r': {
                        char *end;
                        errno = 0;
                        spec.rate = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(spec.rate > 0) || spec.rate > 1e6)
                                return cli_usage_error("bench", "invalid --rate '%s' (requests per second)", optarg);
                        rate_text = optarg;
                        break;
                }
                case 'P':
                        spec.poisson = true;
                        break;
                case OPT_BURSTINESS: {
                        char *end;
                        errno = 0;
                        spec.burstiness = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(spec.burstiness > 0) || spec.burstiness > 1000)
                                return cli_usage_error("bench", "invalid --burstiness '%s' (a gamma shape above 0)",
                                                       optarg);
                        spec.poisson = true;
                        break;
                }
                case OPT_DATASET_NAME:
                        if (dataset_kind_from_name(optarg, &spec.dataset.kind) < 0)
                                return cli_usage_error("bench", "invalid --dataset-name '%s' (sharegpt, random, "
                                                       "prefix_repetition, custom, multi_turn or trace)", optarg);
                        dataset_named = true;
                        break;
                case OPT_DATASET_PATH:
                        dataset_path = optarg;
                        dataset_named = true;
                        break;
                case OPT_RANGE_RATIO: {
                        char *end;
                        errno = 0;
                        spec.dataset.range_ratio = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(spec.dataset.range_ratio >= 0) ||
                            !(spec.dataset.range_ratio < 1))
                                return cli_usage_error("bench", "invalid --random-range-ratio '%s' (0 <= R < 1)",
                                                       optarg);
                        dataset_named = true;
                        break;
                }
                case OPT_NUM_PROMPTS:
                case OPT_PREFIX_LEN:
                case OPT_SUFFIX_LEN:
                case OPT_NUM_PREFIXES:
                case OPT_PREFIX_OUTPUT_LEN:
                case OPT_SHAREGPT_OUTPUT_LEN:
                case OPT_SHAREGPT_MAX_OUTPUT_LEN:
                case OPT_SHAREGPT_MIN_LEN:
                case OPT_SHAREGPT_MAX_PROMPT_LEN:
                case OPT_SHAREGPT_MAX_TOTAL_LEN:
                case OPT_MULTI_TURN_TURNS:
                case OPT_MULTI_TURN_INPUT_LEN:
                case OPT_MULTI_TURN_OUTPUT_LEN:
                case OPT_TRACE_BLOCK_SIZE: {
                        const struct int_option *io = int_option(&spec.dataset, c);
                        if (cli_parse_int(optarg, io->min, io->max, &x) < 0)
                                return cli_usage_error("bench", "invalid --%s '%s' (%ld to %ld)", io->name, optarg,
                                                       io->min, io->max);
                        *io->dst = (int)x;
                        dataset_named = true;
                        break;
                }
                case OPT_MULTI_TURN_THINK_TIME:
                        if (parse_duration(optarg, &spec.dataset.multi_turn_think_time) < 0)
                                return cli_usage_error("bench", "invalid --multi-turn-think-time '%s' (try 500ms, 2s)",
                                                       optarg);
                        dataset_named = true;
                        break;
                case OPT_TRACE_SPEED: {
                        char *end;
                        errno = 0;
                        spec.dataset.trace_speed = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(spec.dataset.trace_speed > 0) ||
                            spec.dataset.trace_speed > 1e6)
                                return cli_usage_error("bench", "invalid --trace-speed '%s' (above 0; 1: the trace's "
                                                       "own times)", optarg);
                        dataset_named = true;
                        break;
                }
                case OPT_TOKENIZER:
                        tokenizer_path = optarg;
                        break;
                case OPT_TRACE_UNIT:
                        if (dataset_trace_unit_from_name(optarg, &spec.dataset.trace_unit_ms) < 0)
                                return cli_usage_error("bench", "invalid --trace-unit '%s' (s, ms, us or ns)", optarg);
                        trace_unit = true;
                        dataset_named = true;
                        break;
                case 'C':
                        spec.calibrate = false;
                        break;
                case 'N':
                        spec.no_preconnect = true;
                        break;
                case OPT_NO_SERVER_METRICS:
                        spec.no_server_metrics = true;
                        break;
                case OPT_KV_CACHE_LAYOUT:
                        if (scrape_kv_layout_from_name(optarg, &target.kv_layout) < 0)
                                return cli_usage_error("bench", "invalid --kv-cache-layout '%s' (unified or split)",
                                                       optarg);
                        break;
                case OPT_GOODPUT: {
                        _cleanup_free_ char *why = NULL;
                        if (bench_goodput_parse(optarg, &target.slo_ttft, &target.slo_tpot, &target.slo_e2el, &why) < 0)
                                return cli_usage_error("bench", "invalid --goodput: %s", why ? why : "out of memory");
                        break;
                }
                case OPT_THREADS:
                        if (cli_parse_int(optarg, 1, BENCH_MAX_THREADS, &x) < 0)
                                return cli_usage_error("bench", "invalid --threads '%s' (1 to %d)", optarg,
                                                       BENCH_MAX_THREADS);
                        spec.threads = (int)x;
                        break;
                case 'w':
                        if (cli_parse_int(optarg, 0, INT32_MAX, &x) < 0)
                                return cli_usage_error("bench", "invalid --warmup '%s'", optarg);
                        spec.warmup = (int)x;
                        break;
                case 'm':
                        target.model = optarg;
                        break;
                case 'E': {
                        int k = cli_parse_choice(optarg, endpoints);
                        if (k < 0)
                                return cli_usage_error("bench", "invalid --endpoint '%s' (chat or completion)",
                                                       optarg);
                        spec.chat = k == 0;
                        break;
                }
                case 'e':
                        engine = optarg;
                        break;
                case 't':
                        if (parse_duration(optarg, &target.request_timeout) < 0 || target.request_timeout == 0)
                                return cli_usage_error("bench", "invalid --timeout '%s' (try 30s, 2m, 500ms)",
                                                       optarg);
                        break;
                case 'p':
                        prompt_file = optarg;
                        break;
                case 'T':
                        if (parse_ms(optarg, &target.slo_ttft) < 0)
                                return cli_usage_error("bench", "invalid --slo-ttft-ms '%s'", optarg);
                        break;
                case 'O':
                        if (parse_ms(optarg, &target.slo_tpot) < 0)
                                return cli_usage_error("bench", "invalid --slo-tpot-ms '%s'", optarg);
                        break;
                case 's': {
                        char *end;
                        errno = 0;
                        spec.seed = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end)
                                return cli_usage_error("bench", "invalid --seed '%s'", optarg);
                        break;
                }
                case 'S':
                        samples_file = optarg;
                        break;
                case 'f':
                        format = cli_parse_choice(optarg, formats);
                        if (format < 0)
                                return cli_usage_error("bench", "invalid --format '%s' (text or json)", optarg);
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                default:
                        return cli_bad_option("bench", c, argv);
                }
        }
        if (optind < argc)
                return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
        if (!target.base_url)
                return cli_usage_error("bench", "--url is required");
        if (!cli_valid_url(target.base_url)) {
                /* a URL refused is shown as smoke shows one: its credentials masked */
                _cleanup_free_ char *shown = secrets_mask_url(target.base_url);
                if (!shown) {
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                return cli_usage_error("bench", "invalid --url '%s' (want http://HOST:PORT)", shown);
        }
        usec_t timeout = target.request_timeout ? target.request_timeout : BENCH_DEFAULT_TIMEOUT;
        /* the open loop's gap (1/rate): longer than a request may take, the level would wait
         * that long between sends and measure next to nothing */
        if (spec.rate > 0 && 1.0 / spec.rate > (double)timeout / USEC_PER_SEC) {
                char t[32];
                return cli_usage_error("bench", "--rate %s is one request every %.3gs, longer than the request timeout (%s)",
                                       rate_text, 1.0 / spec.rate, format_duration(timeout, t));
        }
        enum dataset_kind kind = spec.dataset.kind;
        if (trace_unit && kind != DATASET_TRACE)
                return cli_usage_error("bench", "--trace-unit goes with --dataset-name trace");
        if (dataset_named && prompt_file)
                return cli_usage_error("bench", "give --prompt-file or a dataset, not both");
        /* spec.dataset owns its path: this scope does, for it */
        _cleanup_free_ char *path_copy = dataset_path ? strdup(dataset_path) : NULL;
        if (dataset_path && !path_copy) {
                cli_error("out of memory");
                return EXIT_FAILED;
        }
        spec.dataset.path = path_copy;
        const char *bad = dataset_options_check(&spec.dataset);
        if (bad)
                return cli_usage_error("bench", "--dataset-name %s: %s", dataset_kind_name(kind), bad);
        bool requests_default = dataset_named && spec.requests == 0 && spec.duration == 0;
        if (requests_default)
                spec.requests = spec.dataset.num_prompts > 0 ? spec.dataset.num_prompts : DATASET_DEFAULT_PROMPTS;
        if ((spec.requests > 0) == (spec.duration > 0))
                return cli_usage_error("bench", "give one of --requests and --duration");
        /* the datasets other than random say their own output lengths; custom's lines may not */
        if (spec.output_tokens == 0 && kind != DATASET_RANDOM)
                spec.output_tokens = BENCH_CLI_OUTPUT_TOKENS;
        if (spec.output_tokens == 0)
                return cli_usage_error("bench", "--output-tokens is required");
        if (kind == DATASET_MULTI_TURN && !spec.chat)
                return cli_usage_error("bench", "--dataset-name multi_turn sends conversations: it needs --endpoint chat");
        if (kind == DATASET_TRACE && spec.rate > 0)
                return cli_usage_error("bench", "--dataset-name trace: the trace says when requests go; give no --rate "
                                       "(--trace-speed scales its times)");
        if (spec.poisson && spec.rate == 0)
                return cli_usage_error("bench", "--%s needs --rate", spec.burstiness > 0 ? "burstiness" : "poisson");
        if (engine) {
                target.profile = profile_find(engine);
                if (!target.profile)
                        return cli_usage_error("bench", "unknown --engine '%s'", engine);
        }
        static int one = 1;
        if (!levels_v) {
                spec.concurrency = &one;
                spec.n_concurrency = 1;
        } else {
                spec.concurrency = levels_v;
        }

        _cleanup_free_ char *prompt_text = NULL;
        _cleanup_free_ char **prompts = NULL;
        int r;
        if (prompt_file) {
                r = load_prompts(prompt_file, &prompt_text, &prompts);
                if (r < 0) {
                        cli_error("cannot read prompts from '%s': %s", prompt_file,
                                  r == -ENODATA ? "no prompt in it" : file_strerror(r));
                        return EXIT_USAGE;
                }
                target.prompts = (const char *const *)prompts;
        }
        _cleanup_(dataset_freep) struct dataset *data = NULL;
        if (dataset_has_file(&spec.dataset)) {
                _cleanup_free_ char *err = NULL;
                r = dataset_load(kind, spec.dataset.path, &data, &err);
                if (r < 0) {
                        cli_error("%s", err ? err : strerror(-r));
                        return EXIT_USAGE;
                }
                spec.data = data;
                dataset_trace_apply_unit(data, &spec.dataset);
                _cleanup_free_ char *why = NULL;
                if ((r = dataset_trace_check(data, &spec.dataset, timeout, &why)) < 0) {
                        cli_error("%s: %s", spec.dataset.path, why ? why : strerror(-r));
                        return EXIT_USAGE;
                }
                /* a trace's lines are its requests */
                if (kind == DATASET_TRACE && requests_default)
                        spec.requests = (int)MIN(data->n, spec.dataset.num_prompts > 0 ? (size_t)spec.dataset.num_prompts
                                                                                        : data->n);
        }

        /* Every stream is a socket: take all the descriptors the hard limit allows. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }

        _cleanup_loop_ struct loop *l = NULL;
        r = loop_new(&l);
        if (r < 0) {
                cli_error("cannot create the event loop: %s", strerror(-r));
                return EXIT_FAILED;
        }
        r = loop_catch_signals(l);
        if (r < 0) {
                cli_error("cannot catch signals: %s", strerror(-r));
                return EXIT_FAILED;
        }
        _cleanup_(tokenizer_freep) struct tokenizer *tok = NULL;
        struct count_rule rule = {0};
        if (tokenizer_path) {
                _cleanup_free_ char *why = NULL;
                if ((r = tokenizer_open(tokenizer_path, &tok, &why)) < 0) {
                        cli_error("--tokenizer: %s", why ? why : strerror(-r));
                        return EXIT_USAGE;
                }
                rule.tokenizer = tok;
                rule.tokenizer_what = tokenizer_describe(tok);
                target.count = &rule;
        }
        json_t *levels = NULL, *samples = NULL;
        _cleanup_free_ char *refused = NULL;
        target.ret_error = &refused;
        r = bench_run(l, &target, &spec, &levels, samples_file ? &samples : NULL);
        if (r == -EMSGSIZE) {
                cli_error("%s", refused ? refused : "the bench cannot run against this server");
                return EXIT_FAILED;
        }
        if (r == -EINTR) {
                cli_error("interrupted");
                return EXIT_FAILED;
        }
        if (r < 0) {
                cli_error("bench failed: %s", strerror(-r));
                return EXIT_FAILED;
        }
        int status = EXIT_OK;
        if (samples_file) {
                if (json_dump_file(samples, samples_file, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0) {
                        cli_error("cannot write samples to '%s'", samples_file);
                        status = EXIT_FAILED;
                }
                json_decref(samples);
        }
        json_int_t completed = 0;
        size_t i;
        json_t *lv;
        json_array_foreach(levels, i, lv)
                completed += json_integer_value(json_object_get(lv, metric_key(METRIC_COMPLETED)));
        /* the bench's own outputs through the forced detectors: one flagged is garbage */
        struct phase_result verdict = {0};
        if (phases_gate_outputs(levels, &verdict) < 0) {
                cli_error("out of memory");
                return EXIT_FAILED;
        }
        bool garbage = verdict.step == STEP_DECIDED;
        if (format == 1) {
                json_t *root = json_pack("{s:o, s:s, s:s?, s:s?}", "bench", levels, "verdict",
                                         garbage ? verdict_to_string(verdict.verdict) : "pass", "cause", verdict.cause,
                                         "evidence", verdict.evidence);
                if (!root) {
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
                json_decref(root);
                if (!s) {
                        phase_result_release(&verdict);
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                puts(s);
                free(s);
        } else {
                print_text(levels);
                printf("verdict: %s%s%s\n", garbage ? verdict_to_string(verdict.verdict) : "pass", garbage ? "/" : "",
                       garbage ? verdict.cause : "");
                json_decref(levels);
        }
        if (garbage) {
                cli_error("%s/%s: %s", verdict_to_string(verdict.verdict), verdict.cause, verdict.evidence);
                status = EXIT_FAILED;
        }
        phase_result_release(&verdict);
        if (completed == 0) {
                cli_error("no request completed");
                status = EXIT_FAILED;
        }
        return status;
}
