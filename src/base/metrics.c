/* metrics.c -- the metrics table: every figure of a bench level, defined once. */
#include "base/metrics.h"

#include <string.h>

#include "base/util.h"

#define HIGHER METRIC_HIGHER_BETTER
#define LOWER METRIC_LOWER_BETTER
#define IN(m) (&table[m])

/* The directions are the ones the objective has always given (a key ending in "_ms" or
 * "_s", but not "_per_s", was lower-is-better, anything else higher-is-better), so that
 * every objective ranks the cells as it did; a few of them (failed, events_per_cpu_s) are
 * no sensible thing to rank by either way. */
static const struct metric_info table[_METRIC_MAX] = {
        [METRIC_CONCURRENCY] = {"concurrency", NULL, "concurrency", "requests", HIGHER, false, NULL,
                                "requests in flight (closed loop), or their cap (open loop)"},
        [METRIC_OUTPUT_TOKENS_PER_S] = {"output_tokens_per_s", NULL, "output throughput", "tok/s", HIGHER, true, "tok/s",
                                        "output tokens of completed requests / window"},
        [METRIC_REQUESTS] = {"requests", NULL, "requests", "requests", HIGHER, false, NULL,
                             "counted requests sent (warm-up excluded) = completed + failed"},
        [METRIC_COMPLETED] = {"completed", NULL, "completed", "requests", HIGHER, false, NULL,
                              "HTTP 200, at least one token chunk, and a proper end"},
        [METRIC_FAILED] = {"failed", NULL, "failed", "requests", HIGHER, false, NULL,
                           "every other counted request, never dropped"},
        [METRIC_ABORTED] = {"aborted", NULL, "aborted", "requests", HIGHER, false, NULL,
                            "subset of failed: cut after tokens had started to arrive"},
        [METRIC_RESENT] = {"resent", NULL, "resent", "requests", HIGHER, false, NULL,
                           "sent again on a new connection: the server had closed the kept-alive one first"},
        [METRIC_EVENTS_AFTER_DONE] = {"events_after_done", NULL, "events after [DONE]", "events", HIGHER, false, NULL,
                                      "SSE events of counted requests after their [DONE], ignored"},
        [METRIC_ERRORS] = {"errors", NULL, "errors", "", HIGHER, false, NULL,
                           "failure reason -> count (http_NNN, closed, timeout, ...)"},
        [METRIC_FIRST_ERROR] = {"first_error", NULL, "first failure", "", HIGHER, false, NULL,
                                "the first failed request's reason and the server's own words; absent when none failed"},
        [METRIC_DURATION_S] = {"duration_s", NULL, "window", "s", LOWER, false, NULL,
                               "first counted send to last counted completion"},
        [METRIC_OUTPUT_TOKENS] = {"output_tokens", NULL, "output tokens", "tokens", HIGHER, false, NULL,
                                  "over completed requests, gauntlet's count: per request max(its /tokenize count, its chunks); never usage"},
        [METRIC_PROMPT_TOKENS] = {"prompt_tokens", NULL, "prompt tokens", "tokens", HIGHER, false, NULL,
                                  "over completed requests that reported usage"},
        [METRIC_PROMPT_TOKENS_PER_REQUEST] = {"prompt_tokens_per_request", NULL, "prompt tokens per request", "tokens",
                                              HIGHER, false, NULL,
                                              "mean, min, max of usage.prompt_tokens over completed requests; null without usage"},
        [METRIC_OUTPUT_TOKENS_PER_REQUEST] = {"output_tokens_per_request", NULL, "output tokens per request", "tokens",
                                              HIGHER, false, NULL,
                                              "mean, min, max of the output tokens of completed requests"},
        [METRIC_TOTAL_TOKENS_PER_S] = {"total_tokens_per_s", NULL, "total throughput", "tok/s", HIGHER, true,
                                       "tok/s total", "(output + prompt tokens, from usage) / window"},
        [METRIC_REQUESTS_PER_S] = {"requests_per_s", NULL, "request throughput", "req/s", HIGHER, true, "req/s",
                                   "completed / window"},
        [METRIC_TOKENS_PER_CHUNK] = {"tokens_per_chunk", NULL, "tokens per chunk", "tokens", HIGHER, false, NULL,
                                     "output tokens / chunks over completed requests"},
        [METRIC_TTFT_MS] = {"ttft_ms", NULL, "time to first token", "ms", LOWER, false, NULL,
                            "distribution: sent to the first chunk with content or reasoning"},
        [METRIC_ITL_MS] = {"itl_ms", NULL, "inter-token latency", "ms", LOWER, false, NULL,
                           "distribution: between successive content/reasoning chunks"},
        [METRIC_TPOT_MS] = {"tpot_ms", NULL, "time per output token", "ms", LOWER, false, NULL,
                            "distribution: (e2e - TTFT) / (output tokens - 1)"},
        [METRIC_E2E_MS] = {"e2e_ms", NULL, "end-to-end latency", "ms", LOWER, false, NULL,
                           "distribution: sent to the end of the response"},
        [METRIC_SEND_DELAY_MS] = {"send_delay_ms", NULL, "send delay", "ms", LOWER, false, NULL,
                                  "distribution: sent - scheduled, the client's own lateness"},
        [METRIC_CONNECT_MS] = {"connect_ms", NULL, "connection set-up", "ms", LOWER, false, NULL,
                               "distribution: TCP connect of counted requests that opened a connection; never in TTFT"},
        [METRIC_PRECONNECTED] = {"preconnected", NULL, "connections opened first", "connections", HIGHER, false, NULL,
                                 "connections opened and used once before the level, so its first wave reuses them"},
        [METRIC_CHUNKS] = {"chunks", NULL, "chunks", "chunks", HIGHER, false, NULL,
                           "content chunks over completed requests"},
        [METRIC_SEND_RATE_PER_S] = {"send_rate_per_s", NULL, "send rate", "req/s", HIGHER, false, NULL,
                                    "(requests - 1) / (last send - first send): the rate really achieved"},
        [METRIC_RATE] = {"rate", NULL, "target rate", "req/s", HIGHER, false, NULL,
                         "open loop only: the rate asked for"},
        [METRIC_GOODPUT] = {"goodput", NULL, "goodput", "", HIGHER, true, NULL,
                            "with SLOs only: completed requests within every SLO, per second"},
        [METRIC_GOODPUT_SLO_TTFT_MS] = {"slo_ttft_ms", IN(METRIC_GOODPUT), "TTFT SLO", "ms", LOWER, false, NULL,
                                        "the TTFT SLO given, or null"},
        [METRIC_GOODPUT_SLO_TPOT_MS] = {"slo_tpot_ms", IN(METRIC_GOODPUT), "TPOT SLO", "ms", LOWER, false, NULL,
                                        "the TPOT SLO given, or null"},
        [METRIC_GOODPUT_SLO_E2EL_MS] = {"slo_e2el_ms", IN(METRIC_GOODPUT), "end-to-end latency SLO", "ms", LOWER, false,
                                        NULL, "the end-to-end latency SLO given (vLLM's --goodput e2el:MS), or null"},
        [METRIC_GOODPUT_REQUESTS_PER_S] = {"requests_per_s", IN(METRIC_GOODPUT), "good requests", "req/s", HIGHER,
                                           false, NULL, "completed requests within every SLO / window"},
        [METRIC_GOODPUT_OUTPUT_TOKENS_PER_S] = {"output_tokens_per_s", IN(METRIC_GOODPUT), "good output throughput",
                                                "tok/s", HIGHER, false, NULL, "their output tokens / window"},
        [METRIC_GOODPUT_GOOD] = {"good", IN(METRIC_GOODPUT), "good requests", "requests", HIGHER, false, NULL,
                                 "completed requests within every SLO"},
        [METRIC_CLIENT_CPU] = {"client_cpu", NULL, "client cost", "", HIGHER, false, NULL,
                               "what the bench's threads themselves cost over the level"},
        [METRIC_CPU_USER_S] = {"user_s", IN(METRIC_CLIENT_CPU), "user CPU", "s", LOWER, false, NULL,
                               "user CPU seconds of the bench's threads, together"},
        [METRIC_CPU_SYS_S] = {"sys_s", IN(METRIC_CLIENT_CPU), "system CPU", "s", LOWER, false, NULL,
                              "system CPU seconds of the bench's threads, together"},
        [METRIC_CPU_WALL_S] = {"wall_s", IN(METRIC_CLIENT_CPU), "wall time", "s", LOWER, false, NULL,
                               "wall seconds of the level"},
        [METRIC_CPU_CORES] = {"cores", IN(METRIC_CLIENT_CPU), "cores", "cores", HIGHER, false, NULL,
                              "CPU / wall, every thread together"},
        [METRIC_CPU_EVENTS] = {"events", IN(METRIC_CLIENT_CPU), "SSE events", "events", HIGHER, false, NULL,
                               "SSE events over all requests, warm-up included"},
        [METRIC_CPU_EVENTS_PER_CPU_S] = {"events_per_cpu_s", IN(METRIC_CLIENT_CPU), "events per CPU second",
                                         "events/s", LOWER, false, NULL, "events / CPU seconds"},
        [METRIC_CPU_READS] = {"reads", IN(METRIC_CLIENT_CPU), "reads", "reads", HIGHER, false, NULL,
                              "times a stream's body bytes were picked up, one per stream per wake-up"},
        [METRIC_CPU_EVENTS_PER_READ] = {"events_per_read", IN(METRIC_CLIENT_CPU), "events per read", "events",
                                        HIGHER, false, NULL, "events / reads"},
        [METRIC_CPU_RSS_KB_START] = {"rss_kb_start", IN(METRIC_CLIENT_CPU), "RSS at the start", "KiB", HIGHER, false,
                                     NULL, "resident memory when the level began"},
        [METRIC_CPU_RSS_KB_PEAK] = {"rss_kb_peak", IN(METRIC_CLIENT_CPU), "peak RSS", "KiB", HIGHER, false, NULL,
                                    "the process's peak resident memory"},
        [METRIC_CPU_THREADS] = {"threads", IN(METRIC_CLIENT_CPU), "client threads", "threads", HIGHER, false, NULL,
                                "event loops (one thread each) the level's streams were divided among"},
        [METRIC_CPU_LOOP_CORES_MAX] = {"loop_cores_max", IN(METRIC_CLIENT_CPU), "busiest loop", "cores", HIGHER, false,
                                       NULL, "CPU of the busiest loop's thread / wall"},
        [METRIC_CPU_BOUND] = {"bound", IN(METRIC_CLIENT_CPU), "client-bound", "", HIGHER, false, NULL,
                              "true when the client was the bottleneck: a loop used 90% of a core or more, or the median "
                              "send delay, its connect left out, was over 1 ms"},
        [METRIC_CPU_HOST_STEAL] = {"host_steal", IN(METRIC_CLIENT_CPU), "host CPU stolen", "", LOWER, false, NULL,
                                   "the fraction of the host's CPU time its hypervisor took during the level (the "
                                   "steal of /proc/stat); null where unknown"},
        [METRIC_CPU_HOST_OTHERS] = {"host_others", IN(METRIC_CLIENT_CPU), "host CPU of other processes", "", LOWER,
                                    false, NULL,
                                    "the fraction of the host's CPU time that processes other than gauntlet and the "
                                    "server ran during the level (user, nice and system of /proc/stat, less theirs); "
                                    "null where the server's processes are not this host's"},
        [METRIC_CPU_HOST_IDLE] = {"host_idle", IN(METRIC_CLIENT_CPU), "host CPU idle", "", HIGHER, false, NULL,
                                  "the fraction of the host's CPU time that was idle during the level (idle and "
                                  "iowait of /proc/stat); other processes count as a disturbance only beyond it"},
        [METRIC_USAGE_CHECK] = {"usage_check", NULL, "usage check", "", HIGHER, false, NULL,
                                "the server's usage.completion_tokens against gauntlet's count of the same requests"},
        [METRIC_USAGE_METHOD] = {"method", IN(METRIC_USAGE_CHECK), "counted by", "", HIGHER, false, NULL,
                                 "\"tokenize\" (the server's /tokenize of the streamed text) or \"chunks\" (one per chunk)"},
        [METRIC_USAGE_TOKENIZED] = {"tokenized", IN(METRIC_USAGE_CHECK), "requests tokenized", "requests", HIGHER,
                                    false, NULL, "completed requests counted by /tokenize"},
        [METRIC_USAGE_REQUESTS] = {"requests", IN(METRIC_USAGE_CHECK), "requests with usage", "requests", HIGHER,
                                   false, NULL, "completed requests that reported usage.completion_tokens"},
        [METRIC_USAGE_TOKENS] = {"usage_tokens", IN(METRIC_USAGE_CHECK), "usage says", "tokens", HIGHER, false, NULL,
                                 "their usage.completion_tokens, summed"},
        [METRIC_USAGE_COUNTED] = {"counted_tokens", IN(METRIC_USAGE_CHECK), "gauntlet counted", "tokens", HIGHER,
                                  false, NULL, "gauntlet's count of the same requests"},
        [METRIC_USAGE_DISAGREE] = {"disagreeing", IN(METRIC_USAGE_CHECK), "disagreeing", "requests", LOWER, false,
                                   NULL, "requests whose usage is off by more than 3 tokens and 5%, or above max_tokens"},
        [METRIC_USAGE_OVER_MAX] = {"above_max_tokens", IN(METRIC_USAGE_CHECK), "above max_tokens", "requests", LOWER,
                                   false, NULL, "of those, usage above the max_tokens asked: never believed"},
        [METRIC_VLLM_REQUEST_THROUGHPUT] = {"request_throughput", NULL, "request throughput (vLLM)", "req/s", HIGHER,
                                            false, NULL, "vLLM's name for requests_per_s"},
        [METRIC_VLLM_OUTPUT_THROUGHPUT] = {"output_throughput", NULL, "output throughput (vLLM)", "tok/s", HIGHER, false,
                                           NULL, "vLLM's name for output_tokens_per_s"},
        [METRIC_VLLM_TOTAL_TOKEN_THROUGHPUT] = {"total_token_throughput", NULL, "total throughput (vLLM)", "tok/s",
                                                HIGHER, false, NULL, "vLLM's name for total_tokens_per_s"},
        [METRIC_VLLM_MEAN_TTFT] = {"mean_ttft_ms", NULL, "TTFT mean (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for ttft_ms.mean"},
        [METRIC_VLLM_MEDIAN_TTFT] = {"median_ttft_ms", NULL, "TTFT median (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for ttft_ms.p50"},
        [METRIC_VLLM_STD_TTFT] = {"std_ttft_ms", NULL, "TTFT standard deviation (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name: the population standard deviation of ttft_ms"},
        [METRIC_VLLM_P99_TTFT] = {"p99_ttft_ms", NULL, "TTFT p99 (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for ttft_ms.p99"},
        [METRIC_VLLM_MEAN_TPOT] = {"mean_tpot_ms", NULL, "TPOT mean (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for tpot_ms.mean"},
        [METRIC_VLLM_MEDIAN_TPOT] = {"median_tpot_ms", NULL, "TPOT median (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for tpot_ms.p50"},
        [METRIC_VLLM_STD_TPOT] = {"std_tpot_ms", NULL, "TPOT standard deviation (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name: the population standard deviation of tpot_ms"},
        [METRIC_VLLM_P99_TPOT] = {"p99_tpot_ms", NULL, "TPOT p99 (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for tpot_ms.p99"},
        [METRIC_VLLM_MEAN_ITL] = {"mean_itl_ms", NULL, "ITL mean (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for itl_ms.mean"},
        [METRIC_VLLM_MEDIAN_ITL] = {"median_itl_ms", NULL, "ITL median (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for itl_ms.p50"},
        [METRIC_VLLM_STD_ITL] = {"std_itl_ms", NULL, "ITL standard deviation (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name: the population standard deviation of itl_ms"},
        [METRIC_VLLM_P99_ITL] = {"p99_itl_ms", NULL, "ITL p99 (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for itl_ms.p99"},
        [METRIC_VLLM_MEAN_E2EL] = {"mean_e2el_ms", NULL, "end-to-end latency mean (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for e2e_ms.mean"},
        [METRIC_VLLM_MEDIAN_E2EL] = {"median_e2el_ms", NULL, "end-to-end latency median (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for e2e_ms.p50"},
        [METRIC_VLLM_STD_E2EL] = {"std_e2el_ms", NULL, "end-to-end latency standard deviation (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name: the population standard deviation of e2e_ms"},
        [METRIC_VLLM_P99_E2EL] = {"p99_e2el_ms", NULL, "end-to-end latency p99 (vLLM)", "ms", LOWER, false, NULL,
                                   "vLLM's name for e2e_ms.p99"},
        [METRIC_SERVER_TIMINGS] = {"server_timings", NULL, "server's timings", "", HIGHER, false, NULL,
                                   "the server's own per-request timings (llama.cpp), over completed requests; absent without"},
        [METRIC_ST_REQUESTS] = {"requests", IN(METRIC_SERVER_TIMINGS), "requests with timings", "requests", HIGHER, false,
                                NULL, "completed requests whose stream carried timings"},
        [METRIC_ST_PROMPT_COMPUTED] = {"prompt_computed", IN(METRIC_SERVER_TIMINGS), "prompt tokens computed", "tokens",
                                       HIGHER, false, NULL, "their timings.prompt_n summed: prompt tokens evaluated"},
        [METRIC_ST_PROMPT_CACHED] = {"prompt_cached", IN(METRIC_SERVER_TIMINGS), "prompt tokens cached", "tokens", HIGHER,
                                     false, NULL, "their timings.cache_n summed: prompt tokens reused from the cache"},
        [METRIC_ST_CACHE_HIT_RATE] = {"prefix_cache_hit_rate", IN(METRIC_SERVER_TIMINGS), "prefix cache hit rate", "",
                                      HIGHER, false, NULL, "cached / (cached + computed); null when both are 0"},
        [METRIC_SERVER_METRICS] = {"server_metrics", NULL, "server's metrics", "", HIGHER, false, NULL,
                                   "the server's Prometheus /metrics over the level; absent without (docs/metrics.md)"},
        [METRIC_SM_ENGINE] = {"engine", IN(METRIC_SERVER_METRICS), "series of", "", HIGHER, false, NULL,
                              "vllm, sglang or llamacpp: the prefix of the series read; null: none known"},
        [METRIC_SM_SCRAPES] = {"scrapes", IN(METRIC_SERVER_METRICS), "scrapes", "scrapes", HIGHER, false, NULL,
                               "pages read: before, during (every second) and after the level"},
        [METRIC_SM_FAILED_SCRAPES] = {"failed_scrapes", IN(METRIC_SERVER_METRICS), "failed scrapes", "scrapes", LOWER,
                                      false, NULL, "scrapes without a usable page (no answer, not 200, timed out)"},
        [METRIC_SM_KV_CACHE_USAGE_PEAK] = {"kv_cache_usage_peak", IN(METRIC_SERVER_METRICS), "KV cache usage peak", "",
                                           LOWER, false, NULL, "the largest KV cache usage seen, a ratio 0..1; null: not exported"},
        [METRIC_SM_KV_CACHE_SOURCE] = {"kv_cache_source", IN(METRIC_SERVER_METRICS), "KV cache usage from", "", HIGHER,
                                       false, NULL, "the series it was read from, or \"slots\": estimated from llama.cpp's GET /slots"},
        [METRIC_SM_KV_CACHE_LAYOUT] = {"kv_cache_layout", IN(METRIC_SERVER_METRICS), "KV cache layout", "", HIGHER,
                                       false, NULL,
                                       "the /slots estimate's: \"unified\", \"split\" or \"unknown\" (as split); null: not from /slots"},
        [METRIC_SM_KV_CACHE_CAPPED_PAGES] = {"kv_cache_capped_pages", IN(METRIC_SERVER_METRICS), "KV cache capped pages",
                                             "scrapes", LOWER, false, NULL,
                                             "unified: /slots pages holding more cells than the cache (capped at 1)"},
        [METRIC_SM_RUNNING_PEAK] = {"running_peak", IN(METRIC_SERVER_METRICS), "running requests peak", "requests",
                                    HIGHER, false, NULL, "the most requests the server said it was serving"},
        [METRIC_SM_WAITING_PEAK] = {"waiting_peak", IN(METRIC_SERVER_METRICS), "waiting requests peak", "requests",
                                    LOWER, false, NULL, "the most requests the server said were queued"},
        [METRIC_SM_PREFIX_CACHE_HIT_RATE] = {"prefix_cache_hit_rate", IN(METRIC_SERVER_METRICS), "prefix cache hit rate",
                                             "", HIGHER, false, NULL,
                                             "hits / queries over the level (counters' deltas), else the mean of the server's rate gauge"},
        [METRIC_SM_PREFIX_CACHE_HIT_RATE_FROM] = {"prefix_cache_hit_rate_from", IN(METRIC_SERVER_METRICS), "hit rate from",
                                                  "", HIGHER, false, NULL, "\"counters\" or \"gauge\"; null without a rate"},
        [METRIC_SM_PREFIX_CACHE_QUERIES] = {"prefix_cache_queries", IN(METRIC_SERVER_METRICS), "prefix cache queries",
                                            "tokens", HIGHER, false, NULL, "the counter's growth over the level"},
        [METRIC_SM_PREFIX_CACHE_HITS] = {"prefix_cache_hits", IN(METRIC_SERVER_METRICS), "prefix cache hits", "tokens",
                                         HIGHER, false, NULL, "the counter's growth over the level"},
        [METRIC_SM_PREEMPTIONS] = {"preemptions", IN(METRIC_SERVER_METRICS), "preemptions", "requests", LOWER, false,
                                   NULL, "the counter's growth over the level (SGLang: retractions)"},
        [METRIC_SM_PROMPT_TOKENS] = {"prompt_tokens", IN(METRIC_SERVER_METRICS), "prompt tokens processed", "tokens",
                                     HIGHER, false, NULL, "the server's prompt token counter's growth over the level"},
        [METRIC_SM_TRUNCATED_SCRAPES] = {"truncated_scrapes", IN(METRIC_SERVER_METRICS), "truncated scrapes", "scrapes",
                                         LOWER, false, NULL, "pages cut at 4 MiB, read up to the cut"},
        [METRIC_SM_SKIPPED_LINES] = {"skipped_lines", IN(METRIC_SERVER_METRICS), "skipped lines", "lines", LOWER, false,
                                     NULL, "lines that were not samples, comments or blank: ignored"},
        [METRIC_SM_DUPLICATE_SERIES] = {"duplicate_series", IN(METRIC_SERVER_METRICS), "duplicate series", "samples",
                                        LOWER, false, NULL, "a series read twice in one page: the second ignored"},
        [METRIC_SM_NON_FINITE] = {"non_finite", IN(METRIC_SERVER_METRICS), "non-finite values", "samples", LOWER, false,
                                  NULL, "NaN or infinite values of a figure: ignored"},
        [METRIC_SM_OUT_OF_RANGE] = {"out_of_range", IN(METRIC_SERVER_METRICS), "values out of range", "samples", LOWER,
                                    false, NULL,
                                    "values of a figure outside its range (a ratio outside 0..1, a negative or "
                                    "absurd count): dropped, and said in the report"},
        [METRIC_SM_SLOTS_SCRAPES] = {"slots_scrapes", IN(METRIC_SERVER_METRICS), "slots scrapes", "scrapes", HIGHER,
                                     false, NULL, "GET /slots pages read (llama.cpp only)"},
        [METRIC_SM_FAILED_SLOTS_SCRAPES] = {"failed_slots_scrapes", IN(METRIC_SERVER_METRICS), "failed slots scrapes",
                                            "scrapes", LOWER, false, NULL, "GET /slots without an answer, not 200 or timed out"},
        [METRIC_SM_SKIPPED_SLOTS_PAGES] = {"skipped_slots_pages", IN(METRIC_SERVER_METRICS), "skipped slots pages",
                                           "scrapes", LOWER, false, NULL,
                                           "GET /slots pages that were not an array of whole slots (or cut at 4 MiB): ignored"},
        [METRIC_WARNINGS] = {"warnings", NULL, "warnings", "", HIGHER, false, NULL,
                             "sentences: failures, no usage, usage that disagrees, coordinated omission, a busy client"},
        [METRIC_PROMPT_CALIBRATION] = {"prompt_calibration", NULL, "prompt calibration", "", HIGHER, false, NULL,
                                       "how input_tokens was sized in the server's tokens; absent without calibration"},
        [METRIC_WORKLOAD] = {"workload", NULL, "workload", "", HIGHER, false, NULL,
                             "the dataset the prompts came from, their lengths as sized, and the arrivals"},
        [METRIC_SESSIONS] = {"sessions", NULL, "sessions", "", HIGHER, false, NULL,
                             "multi_turn: sessions started, completed, ended by a failed turn or cut, and their turns"},
        [METRIC_CHECKS_UNDER_LOAD] = {"checks_under_load", NULL, "checks under load", "", HIGHER, false, NULL,
                                      "the suite's questions asked amid the level's load, and their verdicts"},
        [METRIC_OUTPUTS_JUDGED] = {"outputs_judged", NULL, "outputs judged", "requests", HIGHER, false, NULL,
                                   "completed requests whose output went through the forced detectors"},
        [METRIC_OUTPUTS_FLAGGED] = {"outputs_flagged", NULL, "outputs flagged", "requests", LOWER, false, NULL,
                                    "of those, outputs a detector flagged (one makes the cell garbage)"},
        [METRIC_FLAGGED] = {"flagged", NULL, "flagged outputs", "", LOWER, false, NULL,
                            "the first 3 flagged outputs: cause, evidence, the request's index"},
        [METRIC_EVAL_UNDER_LOAD] = {"eval_under_load", NULL, "eval under load", "", HIGHER, false, NULL,
                                    "the highest level only: the eval's questions asked amid it, and their answers"},
        [METRIC_REPEATS] = {"repeats", NULL, "repeats", "runs", HIGHER, false, NULL,
                            "bench.repeats > 1: runs of the level; its figures are their medians, counters their sums"},
        [METRIC_SPREAD] = {"spread", NULL, "spread", "", HIGHER, false, NULL,
                           "with repeats: [min, max] over the runs of each figure, by path (\"ttft_ms.p99\")"},
        [METRIC_SEARCH] = {"search", NULL, "SLA search", "", HIGHER, false, NULL,
                           "true on a level the SLA search ran (objective where:, bench.search)"},
};

static const char *const stat_keys[_METRIC_STAT_MAX] = {
        [METRIC_STAT_P50] = "p50",   [METRIC_STAT_P90] = "p90", [METRIC_STAT_P99] = "p99",
        [METRIC_STAT_P999] = "p999", [METRIC_STAT_MEAN] = "mean", [METRIC_STAT_MIN] = "min",
        [METRIC_STAT_MAX] = "max",   [METRIC_STAT_COUNT] = "count",
};

const struct metric_info *metric_info(enum metric m) {
        return &table[m];
}

const char *metric_key(enum metric m) {
        return table[m].key;
}

const char *metric_stat_key(enum metric_stat s) {
        return stat_keys[s];
}

static const struct metric_info *find(const struct metric_info *parent, const char *key, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].parent == parent && strlen(table[i].key) == n && memcmp(table[i].key, key, n) == 0)
                        return &table[i];
        return NULL;
}

const struct metric_info *metric_resolve(const char *path, size_t n, const struct metric_info **ret_along) {
        const struct metric_info *along = NULL, *whole = NULL;
        /* The first key is looked up in the level, each next one in the object the one
         * before named; a miss (an empty key included) ends the walk. */
        for (size_t i = 0;;) {
                size_t k = 0;
                while (i + k < n && path[i + k] != '.')
                        k++;
                const struct metric_info *m = find(along, path + i, k);
                if (!m) {
                        whole = NULL;
                        break;
                }
                along = whole = m;
                if (i + k >= n)
                        break;
                i += k + 1;
        }
        if (ret_along)
                *ret_along = along;
        return whole;
}
