/* bench.c -- the load generator: streaming requests on the shared loop, closed and open loop.
 *
 * This file holds bench_run (bench.h) and what it checks first; the bench's parts are in
 * bench_request.c, bench_level.c, bench_plan.c, bench_calib.c and bench_repeat.c, sharing
 * struct bench through the private bench_int.h (docs/hacking.md). */
#include "bench/bench_int.h"
#include "io/tokenizer.h"

#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>

#include "base/metrics.h"

static bool spec_valid(const struct bench_target *t, const struct bench_spec *spec) {
        if (!t || !t->base_url || !spec || spec->n_concurrency == 0 || !spec->concurrency)
                return false;
        if (spec->output_tokens < 1 || spec->input_tokens < 0 || spec->warmup < 0 || spec->rate < 0)
                return false;
        if ((spec->requests > 0) == (spec->duration > 0) || spec->requests < 0)
                return false;
        for (size_t i = 0; i < spec->n_concurrency; i++)
                if (spec->concurrency[i] < 1)
                        return false;
        if (spec->threads < 0 || spec->threads > BENCH_MAX_THREADS)
                return false;
        if (dataset_options_check(&spec->dataset) || spec->burstiness < 0)
                return false;
        if (dataset_has_file(&spec->dataset) && !t->prompts && (!spec->data || spec->data->kind != spec->dataset.kind))
                return false;
        if (spec->dataset.kind == DATASET_MULTI_TURN && !t->prompts && !spec->chat)
                return false; /* a conversation is chat messages */
        if (spec->dataset.kind == DATASET_TRACE && !t->prompts && spec->rate > 0)
                return false; /* the trace says when */
        return true;
}

/* The CPUs this process may run on. */
static int usable_cpus(void) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0)
                return CPU_COUNT(&set);
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (int)n : 1;
}

/* What every request of the run shares: the URL, the common headers, the run's id in their
 * X-Request-Id, and loop 0's timer on the caller's loop. */
static int bench_open(struct bench *b) {
        const char *base = b->t->base_url;
        size_t blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        b->url = strdup_printf("%.*s%s", (int)blen, base, b->spec->chat ? "/v1/chat/completions" : "/v1/completions");
        if (!b->url)
                return -ENOMEM;
        /* "Expect:" turns off the 100-continue round trip for large prompts. */
        static const char *const headers[] = {"Content-Type: application/json", "Accept: text/event-stream",
                                              "Expect:"};
        for (size_t i = 0; i < ELEMENTSOF(headers); i++)
                if (slist_add(&b->headers, headers[i]) < 0)
                        return -ENOMEM;
        const struct count_rule *rule = b->t->count;
        b->cnt.rule = rule && rule->tokenizer ? COUNT_TOKENIZER : rule && rule->bytes_per_token > 0 ? COUNT_BYTES
                                                                                                    : COUNT_NONE;
        int r;
        if (b->cnt.rule == COUNT_TOKENIZER && (r = tokenizer_count(rule->tokenizer, FFFD, 3, &b->cnt.fffd_tokens)) < 0)
                return r;
        if ((r = random_hex(b->run_id, (sizeof(b->run_id) - 1) / 2)) < 0)
                return r;
        b->arr.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (b->arr.tfd < 0)
                return -errno;
        r = loop_watch_fd(b->l, b->arr.tfd, EPOLLIN, on_timer, b);
        if (r < 0) {
                close(b->arr.tfd);
                b->arr.tfd = -1;
        }
        return r;
}

/* The checks under load and the workload made, then every level of spec (each repeated),
 * the SLA search, and the samples' warning. */
static int bench_levels(struct bench *b, json_t *levels) {
        const struct bench_spec *spec = b->spec;
        const struct bench_target *t = b->t;
        int r;
        if ((r = probes_init(b)) >= 0)
                r = plan_build(b);
        if (r >= 0 && !spec->no_server_metrics && (r = scrape_new(b->l, t->base_url, &b->th.scrape)) >= 0)
                scrape_set_kv_layout(b->th.scrape, t->kv_layout, t->kv_cells);
        /* the eval's questions go out at the first level of the highest concurrency */
        size_t top = 0;
        for (size_t i = 1; i < spec->n_concurrency; i++)
                if (spec->concurrency[i] > spec->concurrency[top])
                        top = i;
        for (size_t i = 0; i < spec->n_concurrency && r >= 0 && !b->stopped; i++) {
                b->chk.eval_level = i == top && !b->chk.eval_asked;
                r = run_repeated(b, spec->concurrency[i], spec->rate, levels);
        }
        b->chk.eval_level = false;
        if (r >= 0 && !b->stopped && spec->search_max > 0 && spec->objective)
                r = sla_search(b, levels);
        if (r >= 0 && b->samples.full) {
                /* Say so on every level: the samples are a prefix, the metrics are whole. */
                size_t i;
                json_t *lvj;
                json_array_foreach(levels, i, lvj)
                        json_array_append_new(json_object_get(lvj, metric_key(METRIC_WARNINGS)),
                                              json_sprintf("raw samples truncated at %d requests",
                                                           BENCH_MAX_SAMPLES));
        }
        return r;
}

/* Frees everything of the run but its outputs (levels, samples): the other loops, the slots
 * (their transfers removed), the timer, the plan and the sessions. */
static void bench_close(struct bench *b) {
        struct loop *l = b->l;
        loop_rx_stamps(l, false);
        scrape_free(b->th.scrape);
        probes_reset(b);
        free(b->chk.probes);
        for (int i = 1; i < b->th.n_loops; i++)
                loop_release(b->th.loops[i]);
        free(b->th.loops);
        if (b->th.wfd >= 0) {
                loop_unwatch_fd(l, b->th.wfd);
                close(b->th.wfd);
        }
        for (size_t i = 0; i < b->slots.n_pool; i++) {
                if (b->slots.pool[i]->busy)
                        loop_remove_transfer(l, b->slots.pool[i]->easy);
                breq_free(b->slots.pool[i]);
        }
        free(b->slots.pool);
        if (b->arr.tfd >= 0) {
                loop_unwatch_fd(l, b->arr.tfd);
                close(b->arr.tfd);
        }
        curl_slist_free_all(b->headers);
        free(b->url);
        json_decref(b->wl.calibration);
        json_decref(b->wl.workload);
        free(b->wl.plan);
        free(b->wl.psessions);
        sess_pool_free(b);
}

int bench_run(struct loop *l, const struct bench_target *t, const struct bench_spec *spec,
              json_t **ret_levels, json_t **ret_samples) {
        if (!l || !spec_valid(t, spec))
                return -EINVAL;
        struct bench b = {.l = l, .t = t, .spec = spec, .arr.tfd = -1, .th.wfd = -1, .th.cpus = usable_cpus()};
        b.th.sh = &b.th.level;
        b.th.level.n = 1;
        json_t *levels = json_array();
        int r = -ENOMEM;
        /* Timer slack (50 us by default) would make every scheduled send late; it is
         * per thread, so it is restored on the way out. */
        int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        if (levels && (!ret_samples || (b.samples.all = json_array())) && (r = bench_open(&b)) >= 0) {
                /* the streams' sockets say when their data came (loop_rx_span) */
                loop_rx_stamps(l, true);
                r = bench_levels(&b, levels);
        }
        bench_close(&b);
        if (old_slack > 0)
                prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
        if (r < 0) {
                json_decref(levels);
                json_decref(b.samples.all);
                return r;
        }
        *ret_levels = levels;
        if (ret_samples)
                *ret_samples = b.samples.all;
        return 0;
}
