/* bench_metrics.h -- the pure half of bench: what to measure (struct bench_spec), the
 * light parse of a stream's events, open-loop schedules, synthetic prompts, and a level's
 * metrics from its finished requests. Nothing here talks to a server or waits: bench.h's
 * load generator (bench_run) feeds it, and its tests drive it directly.
 *
 * Every metric is defined once, in docs/metrics.md; the comments below point there and say
 * what each counter holds. All times are usec_t on CLOCK_MONOTONIC.
 */
#ifndef GAUNTLET_BENCH_METRICS_H
#define GAUNTLET_BENCH_METRICS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "proc/cpustat.h"
#include "text/buf.h"
#include "bench/count.h"
#include "bench/dataset.h"
#include "base/hist.h"
#include "base/util.h"

/* A request sent this much later than scheduled counts as late (coordinated omission). */
#define BENCH_LATE_USEC ((usec_t)1000)
/* Bytes of the first failure's description kept per level (metrics "first_error"). */
#define BENCH_FIRST_ERROR 256
/* Client CPU above this fraction of one core gets the "client may be the bottleneck" warning. */
#define BENCH_CPU_WARN 0.7
/* The client was the bottleneck of a level (client_cpu.bound) when a loop's thread used this
 * much of a core over it (no time left over), or when the median request went out more
 * than BENCH_LATE_USEC after it was due (the client fell behind, not only in bursts). */
#define BENCH_CPU_BOUND 0.9
/* A level during which the hypervisor took more than this fraction of the host's CPU time
 * warns (its figures may be low; docs/metrics.md "host_steal"). */
#define BENCH_STEAL_WARN 0.05
/* Threads of the bench (docs/bench.md "Client threads"): at most this many loops; with
 * spec->threads 0, one loop below BENCH_THREADS_FROM streams, above, one per
 * BENCH_STREAMS_PER_THREAD streams, at most the CPUs less one. */
#define BENCH_MAX_THREADS 256
/* A bench request's whole time when the target gives none (bench.h's request_timeout). */
#define BENCH_DEFAULT_TIMEOUT (10 * 60 * USEC_PER_SEC)
#define BENCH_THREADS_FROM 256
#define BENCH_STREAMS_PER_THREAD 128

/* What to measure, per matrix (`bench:` in docs/matrix.md) or per `gauntlet bench`. */
struct bench_spec {
        int *concurrency;     /* levels, in order; owned by whoever owns the spec (matrix_free
                                 frees a matrix's) */
        size_t n_concurrency;
        int input_tokens;     /* 0: a short prompt */
        int output_tokens;
        int requests;         /* per level; 0 when duration is set (default 64) */
        usec_t duration;      /* per level; 0 when requests is set */
        int warmup;           /* requests per level not counted */
        double rate;          /* requests/s for open loop; 0 = closed loop */
        bool chat;            /* chat endpoint (default) or completions */
        /* The failure gate (docs/metrics.md "Failures"): a level may have at most
         * max_failures failed requests, or, when max_failure_share >= 0, that share of its
         * requests. Default 0: any failure fails the cell. */
        int max_failures;
        double max_failure_share; /* > 0: a share (0.05 for 5%) instead of a count */
        bool calibrate;       /* input_tokens in the server's own tokens (default): see
                                 bench_run */
        int repeats;          /* runs of each level, warm-up included; figures are medians
                                 (0 or 1: once) */
        /* The SLA search (objective `where:`): after the levels, a binary search for the
         * highest concurrency (closed loop) or rate (open loop) that meets the constraints,
         * up to search_max, in at most search_rounds levels; 0: no search. */
        int search_max;
        int search_rounds;
        bool no_preconnect;     /* levels do not open their connections first (see bench_run) */
        bool checks_under_load; /* the sweep mixes its check suite into every level (default) */
        bool no_server_metrics; /* do not scrape the server's /metrics (scrape.h; default: scrape) */
        const char *objective;  /* the objective's text (objective.h), borrowed: its constraints
                                   steer the search; NULL: no search */
        /* The workload (docs/bench.md "Workloads"), the same for `gauntlet bench` and the
         * matrix's bench: where the prompts and their lengths come from, and how requests
         * arrive in an open loop. */
        struct dataset_options dataset; /* kind random (the default): synthetic prompts of
                                           input_tokens, answers of output_tokens */
        const struct dataset *data;     /* sharegpt and custom: the file as read, borrowed */
        uint64_t seed;                  /* prompts, the dataset's draws and the arrivals; 0: a
                                           fixed default */
        bool poisson;                   /* open loop: random arrivals instead of constant spacing */
        double burstiness;              /* their gaps: gamma of this shape, mean 1/rate; 0 or 1:
                                           Poisson (exponential gaps) */
        int threads;                    /* event loops (threads) a level is spread over, 1 to
                                           BENCH_MAX_THREADS; 0: bench_threads' choice */
};

/* The loops a level of `concurrency` streams runs on: spec_threads (0: automatic, from the
 * CPUs this process may use, `cpus`), never more than the streams. */
int bench_threads(int spec_threads, int concurrency, int cpus);

/* The most failed requests a level of n requests may have under spec's gate. */
uint64_t bench_failures_allowed(const struct bench_spec *spec, uint64_t n);

/* Light parse of one SSE data payload (an OpenAI-style JSON chunk), without building a
 * tree: only what the metrics need. */
struct bench_event {
        bool token;             /* a non-empty content / reasoning_content / reasoning / text string */
        bool finish;            /* a finish_reason that is a string (not null) */
        bool usage;             /* a "usage" object was present */
        int64_t prompt_tokens;  /* from usage, -1 when absent */
        int64_t completion_tokens;
        bool error;             /* a top-level "error" member that is not null */
        bool timings;           /* a top-level "timings" object (llama.cpp), with, -1 when absent: */
        double t_prompt_n, t_prompt_ms, t_predicted_n, t_predicted_ms, t_predicted_per_token_ms;
        double t_cache_n;       /* timings.cache_n: prompt tokens reused from the cache */
};
/* Returns 0, or -EBADMSG for text that is not one well-formed JSON object. */
int bench_event_parse(const char *p, size_t n, struct bench_event *ret);
/* The same, and when text is not NULL, the content, reasoning and text strings of the chunk
 * decoded (JSON escapes undone; a lone surrogate or a bad escape as U+FFFD) and appended to
 * it, in their order; what passes text's cap is dropped. */
int bench_event_parse_text(const char *p, size_t n, struct bench_event *ret, struct buf *text);
/* The same, and the answer alone (content and text strings, not reasoning) appended to
 * content when it is not NULL: what a multi-turn session sends back as the assistant's. */
int bench_event_parse_texts(const char *p, size_t n, struct bench_event *ret, struct buf *text, struct buf *content);

/* Whether a server's usage.completion_tokens disagrees with gauntlet's count of the same
 * output (docs/metrics.md "Output tokens"): above max_tokens (when > 0) always; otherwise
 * off by more than BENCH_USAGE_SLACK tokens and BENCH_USAGE_SHARE of the count. */
#define BENCH_USAGE_SLACK COUNT_USAGE_SLACK
#define BENCH_USAGE_SHARE 0.05
/* ... and, for a count by bytes per token (an estimate per request), this share */
#define BENCH_USAGE_SHARE_BYTES 0.25
bool bench_usage_disagrees(int64_t usage, uint64_t counted, int max_tokens);

/* Open-loop schedule: offsets from the level start of successive sends. Constant spacing
 * computes offset i as i/rate (no accumulated rounding); Poisson draws exponential gaps
 * with mean 1/rate from a seeded generator (same seed, same schedule); with a burstiness
 * other than 1 the gaps are gamma-distributed with that shape and the same mean 1/rate
 * (vLLM's --burstiness): below 1 burstier than Poisson, above 1 more even. */
struct bench_sched {
        double rate;        /* requests per second, > 0 */
        bool poisson;
        double shape;       /* gamma shape of the gaps; 1: exponential */
        uint64_t rng;
        uint64_t n;         /* offsets handed out so far */
        double t;           /* Poisson: current offset in seconds */
};
/* burstiness <= 0 means 1. */
void bench_sched_init(struct bench_sched *s, double rate, bool poisson, double burstiness, uint64_t seed);
usec_t bench_sched_next(struct bench_sched *s);

/* Synthetic prompt of about `tokens` tokens: a unique prefix for request `index` (so that
 * no two requests share a cached prefix) then common English words, one token each in
 * the usual tokenizers. Appends to out; -ENOBUFS at its cap. */
int bench_prompt(uint64_t seed, uint64_t index, int tokens, struct buf *out);

/* A prompt of exactly max(chars, the prefix) characters: the fixed-width prefix
 * "NNNNNNNN:" (the index modulo 10^8: unique within any bench) then the same words as bench_prompt, the last
 * one cut where the length is reached. The calibrated prompts (bench_run). */
int bench_prompt_chars(uint64_t seed, uint64_t index, size_t chars, struct buf *out);
#define BENCH_PROMPT_PREFIX 9 /* strlen("NNNNNNNN:") */

/* One finished request as measured; absolute monotonic times, 0 when it never happened. */
struct bench_record {
        usec_t scheduled;       /* when it was due to be sent */
        usec_t sent;            /* when it was handed to libcurl */
        usec_t first_token;     /* first content or reasoning chunk (not a role-only chunk) */
        usec_t done;            /* the transfer ended */
        uint32_t chunks;        /* content/reasoning chunks received */
        uint32_t events;        /* SSE events received, of any kind */
        usec_t connect;         /* TCP connect time when the request opened a connection, else 0 */
        bool timings;           /* the server's own per-request timings (llama.cpp "timings") */
        double t_prompt_n, t_prompt_ms, t_predicted_n, t_predicted_ms, t_predicted_per_token_ms;
        double t_cache_n;       /* -1 when the timings did not say */
        int64_t output_tokens;  /* usage.completion_tokens, the server's word; -1 when it sent none */
        int64_t counted_tokens; /* the sweep's count of the output (count.h: the model's tokenizer,
                                 * bytes per token, or the cell's own counts that agree), 0 when
                                 * not counted so: the count is then the chunks. The figures use
                                 * it, never usage alone */
        uint64_t output_bytes;  /* the streamed content and reasoning, in bytes (as kept: up to
                                 * BENCH_MAX_TEXT) */
        int64_t prompt_tokens;  /* usage.prompt_tokens; -1 when absent */
        int32_t session;        /* multi_turn: the session's index in the level (counted ones
                                 * from 0), -1 for a request of no session */
        int32_t turn;           /* ... the turn, from 1 */
        bool ok;                /* completed, see above */
        bool aborted;           /* failed after tokens had started to arrive (cut mid-stream) */
        char error[32];         /* failure reason when !ok: "http_500", "closed", "timeout", ... */
        const char *detail;     /* when !ok, the server's words for it (an error body or event),
                                 * or NULL; borrowed for bench_level_add only */
};

/* The accumulated metrics of one level. */
struct bench_level {
        int concurrency;
        double rate;               /* open-loop target rate, 0 for closed loop */
        struct hist ttft, itl, tpot, e2e, send_delay, connect;
        struct hist own_delay;     /* send_delay less the connect time within it: the client's
                                    * own lag, what late and client_cpu.bound are judged by */
        uint64_t requests;         /* counted requests sent = completed + failed */
        uint64_t completed;
        uint64_t failed;           /* every request that did not complete, for any reason */
        uint64_t aborted;          /* subset of failed: cut after tokens had started */
        uint64_t late;             /* requests whose own_delay was more than BENCH_LATE_USEC */
        int preconnected;          /* connections opened before the level */
        uint64_t resent;           /* counted requests sent again, once, on a new connection:
                                    * the server had closed the kept-alive one they went out
                                    * on before answering a byte (llama-server closes it after
                                    * every stream); not failures, their clock starts at the
                                    * first send */
        uint64_t good;             /* completed requests meeting every SLO set */
        uint64_t good_tokens;      /* their output tokens */
        uint64_t output_tokens;    /* over completed requests, gauntlet's count: counted_tokens of
                                    * each, or its chunks when it was not counted (docs/metrics.md
                                    * "Output tokens") */
        uint64_t output_bytes;     /* their output_bytes */
        const char *count_method;  /* how counted_tokens were counted (count.h source names; static);
                                    * NULL: by chunks */
        uint64_t prompt_tokens;    /* over completed requests that reported it */
        uint64_t prompt_count;     /* how many did */
        int64_t prompt_min, prompt_max;  /* over them; -1 when none */
        int64_t output_min, output_max;  /* output tokens over completed requests; -1 when none */
        char first_error[BENCH_FIRST_ERROR];  /* the first failed counted request: reason, then
                                               * the server's words ("http_400: request (586
                                               * tokens) exceeds ..."); "" when none failed */
        usec_t first_error_at;     /* when that request ended (bench_level_merge keeps the earliest) */
        uint64_t chunks;           /* content chunks over completed requests */
        uint64_t tokenized;        /* completed requests with counted_tokens (subset of completed) */
        int max_tokens;            /* the max_tokens each request asked for; 0: unknown */
        uint64_t usage_requests;   /* completed requests that reported usage.completion_tokens */
        uint64_t usage_tokens;     /* what their usage said, summed (saturating) */
        uint64_t usage_counted;    /* gauntlet's count of the same requests */
        uint64_t usage_disagree;   /* of usage_requests: bench_usage_disagrees */
        uint64_t usage_over_max;   /* of usage_disagree: usage above max_tokens */
        uint64_t no_usage;         /* completed requests without a usage chunk */
        uint64_t events;           /* SSE events over all requests, warm-up included */
        uint64_t after_done;       /* events of counted requests after their [DONE]: ignored
                                    * (a client stops reading there); subset of events */
        uint64_t reads;            /* times a stream's body bytes were picked up: one per
                                    * stream per wake-up of the loop (libcurl may recv more
                                    * than once in it), warm-up included: events / reads says
                                    * how much each read carried */
        usec_t first_send;         /* first counted request sent (actual) */
        usec_t last_send;          /* last counted request sent (actual) */
        usec_t last_done;          /* last counted request finished */
        usec_t slo_ttft, slo_tpot; /* copied from the target */
        usec_t slo_e2el;           /* the same; 0: none */
        uint64_t timed;            /* completed requests whose stream carried the server's timings */
        uint64_t timed_prompt_n;   /* their timings.prompt_n: prompt tokens the server computed */
        uint64_t timed_cache_n;    /* their timings.cache_n: prompt tokens it took from its cache */
        json_t *server;            /* the server's /metrics over the level (scrape.h), or NULL; borrowed */
        json_t *errors;            /* reason -> count, owned */
        json_t *calibration;       /* the bench's prompt calibration, or NULL; borrowed */
        json_t *workload;          /* the dataset and arrivals as run (bench_run), or NULL; borrowed */
        json_t *sessions;          /* multi_turn: the level's sessions (bench_run), or NULL; borrowed */
        json_t *under_load;        /* the checks under load (array), or NULL; borrowed */
        /* The bench's own outputs through the forced detectors (detect.h, detect_input.forced;
         * docs/metrics.md "The bench's own outputs"): */
        uint64_t outputs_judged;   /* completed counted requests whose text was judged */
        uint64_t outputs_flagged;  /* of those, the ones a detector flagged */
        json_t *flagged;           /* the first BENCH_FLAGGED_KEPT of them: {"cause", "evidence",
                                      "index"}; owned */
        json_t *eval_under_load;   /* the eval's questions asked amid this level (the highest),
                                      or NULL; borrowed */
        int repeats;               /* > 1: "repeats" (bench_run's combined entries set it) */
        json_t *spread;            /* "spread", or NULL; borrowed */
        bool search;               /* "search": a level of the SLA search */
        json_t *warnings;          /* strings, owned */
        /* client costs over the level, set by bench_run before bench_level_json */
        double cpu_user_s, cpu_sys_s, wall_s;   /* CPU: every loop's thread together */
        long rss_kb_start, rss_kb_peak;
        int threads;               /* loops (threads) the level ran on; 0 counts as 1 */
        double loop_cpu_max_s;     /* CPU of the busiest loop's thread (user + system) */
        struct cpustat host0;      /* the host's CPU counters at the level's start */
        double host_steal;         /* the fraction of them stolen over the level; NAN: unknown */
        double own0_s;             /* gauntlet's and the server's CPU seconds at the start; NAN:
                                      the server's are unknown */
        double host_others;        /* the fraction other processes ran over the level; NAN:
                                      unknown */
        double host_idle;          /* the fraction the host's CPUs sat idle; NAN: unknown */
};

/* Flagged outputs a level keeps as evidence (the counts cover them all). */
#define BENCH_FLAGGED_KEPT 3

int bench_level_init(struct bench_level *lv, int concurrency, double rate);
/* Counts one judged output; cause not NULL: flagged, kept (with evidence and the request's
 * index in the level) while fewer than BENCH_FLAGGED_KEPT are. 0 or -ENOMEM. */
int bench_level_judged(struct bench_level *lv, const char *cause, const char *evidence, uint64_t index);
void bench_level_release(struct bench_level *lv);
/* Counts one finished request (ITL samples are added with bench_level_itl as they come). */
int bench_level_add(struct bench_level *lv, const struct bench_record *rec);
static inline void bench_level_itl(struct bench_level *lv, usec_t gap) { hist_record(&lv->itl, gap); }
/* Adds what another loop of the same level measured (its own bench_level) to lv: counters
 * summed, histograms merged, errors added up; the CPU summed, the busiest loop kept. The
 * level's own fields (concurrency, rate, SLOs, wall time, RSS, borrowed objects) stay lv's.
 * -ENOMEM leaves lv counted in part. */
int bench_level_merge(struct bench_level *lv, const struct bench_level *from);
/* The level's JSON object (new reference), warnings derived from the counters included. */
json_t *bench_level_json(struct bench_level *lv);

/* vLLM's --goodput form, "ttft:MS tpot:MS e2el:MS" (any of them, in any order, separated by
 * blanks or commas; MS > 0). Sets the SLOs it names (microseconds), leaves the others.
 * -EINVAL with *ret_error (caller frees) saying why, in one line. */
int bench_goodput_parse(const char *s, usec_t *ttft, usec_t *tpot, usec_t *e2el, char **ret_error);

#endif
