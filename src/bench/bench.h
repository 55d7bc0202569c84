/* bench.h -- the load generator: streaming requests on the shared loop, and their metrics.
 *
 * Every metric is defined once, in docs/metrics.md; the comments below point there and say
 * what each counter holds. All times are usec_t on CLOCK_MONOTONIC.
 *
 * Modes (per concurrency level of struct bench_spec):
 *  - closed loop (spec->rate == 0): exactly `concurrency` requests in flight; a finished
 *    request is replaced at once.
 *  - open loop (spec->rate > 0): requests are sent at absolute scheduled times (constant
 *    spacing, or Poisson or gamma arrivals as spec says), never by relative sleeps; `concurrency` caps
 *    the requests in flight. A request that could not go out on time (cap reached, client
 *    busy) is sent as soon as it can, and its lateness is recorded as its send delay: the
 *    schedule never slides (no coordinated omission), and lateness is reported.
 * The first spec->warmup requests of each level are sent but not counted. spec->requests
 * counted requests follow, or, with spec->duration, requests are sent until that long after
 * the first counted one went out; requests in flight then finish and are counted.
 *
 * A request is "completed" when the server answered 200, streamed at least one content or
 * reasoning token, and ended the stream properly ([DONE] or a finish_reason); everything
 * else is "failed" with a reason (counted, never dropped). See docs/metrics.md.
 *
 * What to measure (struct bench_spec) and the metrics of a level: bench_metrics.h.
 */
#ifndef GAUNTLET_BENCH_H
#define GAUNTLET_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/bench_metrics.h"
#include "bench/count.h"
#include "bench/scrape.h"
#include "text/buf.h"
#include "gate/checks.h"
#include "base/hist.h"
#include "io/loop.h"
#include "base/profile.h"
#include "base/util.h"

/* Raw per-request samples kept by bench_run (all levels together). Beyond this the
 * samples are not kept (the metrics still count every request) and a warning says so. */
#define BENCH_MAX_SAMPLES 100000
/* SSE limits per stream: a longer line or event fails the request ("sse_limit"). */
#define BENCH_MAX_LINE ((size_t)1 << 20)
#define BENCH_MAX_EVENT ((size_t)1 << 20)
/* The bench's own outputs go through the forced detectors (detect.h) as each completes:
 * the first BENCH_JUDGE_MAX bytes of each counted request's streamed text (content and
 * reasoning) are judged, the rest is not kept for it. */
#define BENCH_JUDGE_MAX ((size_t)64 << 10)

/* Where and how bench_run sends its requests. */
struct bench_target {
        const char *base_url;           /* "http://127.0.0.1:PORT", no trailing path */
        const char *model;              /* model id for requests; NULL: field omitted */
        const struct profile *profile;  /* takes_ignore_eos, ...; NULL: generic */
        usec_t request_timeout;         /* whole request; 0: 10 minutes */
        bool (*should_abort)(void *userdata); /* polled after each loop iteration; NULL: never */
        /* Once a level's failures exceed what spec's failure gate allows (max_failures, or a
         * share of a level of known size), the verdict is decided: its requests in flight are
         * cancelled, the rest not sent, and no later level runs (the sweep). Whatever this
         * says, a level also stops so when the server has stopped answering: a request timed
         * out with no token of any request since it was sent (pings and empty chunks are not
         * tokens). With this set, a warm-up request that timed out counts as a failure, so
         * the gate sees the first timeout. Either way its JSON warnings say so, and
         * bench_run returns the levels run so far. */
        bool stop_when_failed;
        void *abort_userdata;
        /* The CPU time the server's processes have run, in clock ticks, called with
         * abort_userdata at each level's start and end: with it, a level says what share of
         * the host's CPU other processes took (client_cpu.host_others). NULL, or a negative
         * return (a server elsewhere): unknown. */
        int (*server_cpu_ticks)(void *userdata, uint64_t *ret);
        /* Optional; zero values mean the defaults. */
        const char *const *prompts;     /* NULL-terminated; used in turn. NULL: spec's dataset */
        usec_t slo_ttft;                /* goodput SLOs; 0: none */
        usec_t slo_tpot;
        usec_t slo_e2el;                /* vLLM's --goodput e2el:MS; 0: none */
        char **ret_error;               /* optional: on -EMSGSIZE, why (one line; caller frees) */
        /* Checks under load (docs/metrics.md): at every level, once its warm-up is out, each
         * run of these specs (both streamed and not for STREAM_BOTH; CHECK_MODELS skipped) is
         * sent once, in place of a load request (closed loop) or next to the schedule
         * (open loop), within the level's cap; the level ends when they are answered too.
         * They are not counted in the metrics; their verdicts go in checks_under_load. */
        const struct check_spec *checks;
        size_t n_checks;
        const struct checks_target *checks_target; /* model, profile, timeouts of those */
        /* The eval under load (docs/metrics.md "Checks under load"): the first n_eval_checks
         * questions of the eval set, in order, asked at the level of the highest concurrency
         * (the first of them, the first run of its repeats; never an SLA search level) once
         * its warm-up is out, after the checks, each as a check under load, not streamed as
         * the eval asks them; their answers go in that level's eval_under_load. Needs
         * checks_target. */
        const struct check_spec *eval_checks;
        size_t n_eval_checks;
        /* llama.cpp's KV cache among its slots, for the /slots estimate (scrape.h): unknown
         * (zero, computed as split), split, or unified with the cache's cells (0: from
         * /slots, the largest slot n_ctx). */
        enum scrape_kv_layout kv_layout;
        uint32_t kv_cells;
        /* How output tokens (and prompt sizes) are counted (count.h): the sweep's rule, the
         * same for every cell. NULL: this bench's own counts, as for a cell that sets it. */
        const struct count_rule *count;
};

/* Runs every level of spec. On success returns 0 and sets *ret_levels to a JSON array, one
 * object per level in spec->concurrency order (shape in docs/metrics.md and DESIGN.md), and,
 * when ret_samples is not NULL, *ret_samples to an array with one object per counted
 * request. Returns -EINVAL for a bad spec or target, -ECANCELED when should_abort said so,
 * -EINTR when the loop caught a signal (loop_catch_signals), -ENOMEM; every transfer it
 * started is removed before it returns, and the outputs are untouched on failure. */
int bench_run(struct loop *l, const struct bench_target *t, const struct bench_spec *spec,
              json_t **ret_levels, json_t **ret_samples);

#endif
