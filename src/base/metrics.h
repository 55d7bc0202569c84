/* metrics.h -- the metrics table: every figure of a bench level, defined once.
 *
 * One entry per key of the level object that bench_level_json builds (docs/metrics.md "Per
 * level"), nested objects' keys included (goodput.*, client_cpu.*): its JSON key, the words
 * and unit people read, its direction (which way is better: the objective ranks by it) and
 * a doc line. Every module that writes or reads a level's JSON names keys through
 * metric_key(METRIC_...), so renaming a metric is one change here and a compile error
 * wherever an old name is still used. The stats of a distribution (p50 ... count) have a
 * small table of their own, metric_stat_key.
 *
 * The table is static and complete: metric_info and metric_key never fail for a value of
 * enum metric.
 */
#ifndef GAUNTLET_METRICS_H
#define GAUNTLET_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/* In the order bench_level_json writes them; a nested metric follows its object. */
enum metric {
        METRIC_CONCURRENCY,
        METRIC_OUTPUT_TOKENS_PER_S,
        METRIC_REQUESTS,
        METRIC_COMPLETED,
        METRIC_FAILED,
        METRIC_ABORTED,
        METRIC_RESENT,
        METRIC_EVENTS_AFTER_DONE,
        METRIC_ERRORS,
        METRIC_DURATION_S,
        METRIC_OUTPUT_TOKENS,
        METRIC_PROMPT_TOKENS,
        METRIC_TOTAL_TOKENS_PER_S,
        METRIC_REQUESTS_PER_S,
        METRIC_TOKENS_PER_CHUNK,
        METRIC_TTFT_MS,
        METRIC_ITL_MS,
        METRIC_TPOT_MS,
        METRIC_E2E_MS,
        METRIC_SEND_DELAY_MS,
        METRIC_CONNECT_MS,
        METRIC_PRECONNECTED,
        METRIC_CHUNKS,
        METRIC_SEND_RATE_PER_S,
        METRIC_FIRST_ERROR,
        METRIC_PROMPT_TOKENS_PER_REQUEST,
        METRIC_OUTPUT_TOKENS_PER_REQUEST,
        METRIC_RATE,
        METRIC_GOODPUT,
        METRIC_GOODPUT_SLO_TTFT_MS,
        METRIC_GOODPUT_SLO_TPOT_MS,
        METRIC_GOODPUT_SLO_E2EL_MS,
        METRIC_GOODPUT_REQUESTS_PER_S,
        METRIC_GOODPUT_OUTPUT_TOKENS_PER_S,
        METRIC_GOODPUT_GOOD,
        METRIC_CLIENT_CPU,
        METRIC_CPU_USER_S,
        METRIC_CPU_SYS_S,
        METRIC_CPU_WALL_S,
        METRIC_CPU_CORES,
        METRIC_CPU_EVENTS,
        METRIC_CPU_EVENTS_PER_CPU_S,
        METRIC_CPU_READS,
        METRIC_CPU_EVENTS_PER_READ,
        METRIC_CPU_RSS_KB_START,
        METRIC_CPU_RSS_KB_PEAK,
        METRIC_CPU_THREADS,
        METRIC_CPU_LOOP_CORES_MAX,
        METRIC_CPU_BOUND,
        METRIC_CPU_HOST_STEAL,
        METRIC_CPU_HOST_OTHERS,
        METRIC_CPU_HOST_IDLE,
        METRIC_USAGE_CHECK,
        METRIC_USAGE_METHOD,
        METRIC_USAGE_TOKENIZED,
        METRIC_USAGE_REQUESTS,
        METRIC_USAGE_TOKENS,
        METRIC_USAGE_COUNTED,
        METRIC_USAGE_DISAGREE,
        METRIC_USAGE_OVER_MAX,
        /* the flat names of vllm bench serve --save-result (completed and failed are above) */
        METRIC_VLLM_REQUEST_THROUGHPUT,
        METRIC_VLLM_OUTPUT_THROUGHPUT,
        METRIC_VLLM_TOTAL_TOKEN_THROUGHPUT,
        METRIC_VLLM_MEAN_TTFT,
        METRIC_VLLM_MEDIAN_TTFT,
        METRIC_VLLM_STD_TTFT,
        METRIC_VLLM_P99_TTFT,
        METRIC_VLLM_MEAN_TPOT,
        METRIC_VLLM_MEDIAN_TPOT,
        METRIC_VLLM_STD_TPOT,
        METRIC_VLLM_P99_TPOT,
        METRIC_VLLM_MEAN_ITL,
        METRIC_VLLM_MEDIAN_ITL,
        METRIC_VLLM_STD_ITL,
        METRIC_VLLM_P99_ITL,
        METRIC_VLLM_MEAN_E2EL,
        METRIC_VLLM_MEDIAN_E2EL,
        METRIC_VLLM_STD_E2EL,
        METRIC_VLLM_P99_E2EL,
        /* the server's own figures: per-request timings (llama.cpp), its /metrics (scrape.h) */
        METRIC_SERVER_TIMINGS,
        METRIC_ST_REQUESTS,
        METRIC_ST_PROMPT_COMPUTED,
        METRIC_ST_PROMPT_CACHED,
        METRIC_ST_CACHE_HIT_RATE,
        METRIC_SERVER_METRICS,
        METRIC_SM_ENGINE,
        METRIC_SM_SCRAPES,
        METRIC_SM_FAILED_SCRAPES,
        METRIC_SM_KV_CACHE_USAGE_PEAK,
        METRIC_SM_KV_CACHE_SOURCE,
        METRIC_SM_KV_CACHE_LAYOUT,
        METRIC_SM_KV_CACHE_CAPPED_PAGES,
        METRIC_SM_RUNNING_PEAK,
        METRIC_SM_WAITING_PEAK,
        METRIC_SM_PREFIX_CACHE_HIT_RATE,
        METRIC_SM_PREFIX_CACHE_HIT_RATE_FROM,
        METRIC_SM_PREFIX_CACHE_QUERIES,
        METRIC_SM_PREFIX_CACHE_HITS,
        METRIC_SM_PREEMPTIONS,
        METRIC_SM_PROMPT_TOKENS,
        METRIC_SM_TRUNCATED_SCRAPES,
        METRIC_SM_SKIPPED_LINES,
        METRIC_SM_DUPLICATE_SERIES,
        METRIC_SM_NON_FINITE,
        METRIC_SM_OUT_OF_RANGE,
        METRIC_SM_SLOTS_SCRAPES,
        METRIC_SM_FAILED_SLOTS_SCRAPES,
        METRIC_SM_SKIPPED_SLOTS_PAGES,
        METRIC_WARNINGS,
        METRIC_PROMPT_CALIBRATION,
        METRIC_WORKLOAD,
        METRIC_SESSIONS,
        METRIC_CHECKS_UNDER_LOAD,
        METRIC_OUTPUTS_JUDGED,
        METRIC_OUTPUTS_FLAGGED,
        METRIC_FLAGGED,
        METRIC_EVAL_UNDER_LOAD,
        METRIC_REPEATS,
        METRIC_SPREAD,
        METRIC_SEARCH,
        _METRIC_MAX,
};

enum metric_direction {
        METRIC_HIGHER_BETTER,
        METRIC_LOWER_BETTER,
};

struct metric_info {
        const char *key;                   /* the JSON key, in the level object or in parent's */
        const struct metric_info *parent;  /* the object it sits in; NULL: the level itself */
        const char *name;                  /* words for people: "time to first token" */
        const char *unit;                  /* "ms", "tok/s"...; "" for an object or a list */
        enum metric_direction direction;   /* of the metric and of every stat below it */
        bool objective;                    /* a matrix may name it as its objective (matrix.c) */
        const char *figure;                /* what a report writes after the number ("tok/s");
                                              NULL: it writes the key before the number */
        const char *doc;                   /* one line; docs/metrics.md says the rest */
};

/* The entry of m. This function can't fail. */
const struct metric_info *metric_info(enum metric m);
/* metric_info(m)->key. This function can't fail. */
const char *metric_key(enum metric m);

/* Resolves a dot-separated path of keys ("output_tokens_per_s", "goodput.requests_per_s",
 * "ttft_ms.p50"; n bytes, not NUL-terminated) through the table. Returns the entry the
 * whole path names, or NULL (a stat below a metric, an error reason below "errors", an
 * unknown name). *ret_along (optional) gets the deepest entry named along the path
 * (ttft_ms for "ttft_ms.p50"), NULL when the first key names none. This function can't
 * fail. */
const struct metric_info *metric_resolve(const char *path, size_t n, const struct metric_info **ret_along);

/* The stats of a distribution object ({"p50", ..., "count"}: docs/metrics.md), in the
 * order they are written. */
enum metric_stat {
        METRIC_STAT_P50,
        METRIC_STAT_P90,
        METRIC_STAT_P99,
        METRIC_STAT_P999,
        METRIC_STAT_MEAN,
        METRIC_STAT_MIN,
        METRIC_STAT_MAX,
        METRIC_STAT_COUNT,
        _METRIC_STAT_MAX,
};
/* "p50" ... "count". This function can't fail. */
const char *metric_stat_key(enum metric_stat s);

#endif
