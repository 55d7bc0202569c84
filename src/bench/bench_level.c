/* bench_level.c -- the bench's level runner: sending on schedule, checks under load,
 * pre-connect, the loops and threads of a level, their merge, the scrape, stopping early. */
#include "bench/bench_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "gate/detect.h"
#include "io/http.h"
#include "base/metrics.h"

/* When the last token (or finish) of any request of the level came, on any loop. */
usec_t level_last_token(const struct bench *b) {
        usec_t last = 0;
        for (int i = 0; i < b->th.sh->n; i++)
                last = MAX(last, atomic_load_explicit(&b->th.sh->loops[i]->stop.last_token, memory_order_relaxed));
        return last;
}

/* Wakes loop b out of its wait (a flag of the level changed). */
static void loop_wake(struct bench *b) {
        uint64_t one = 1;
        if (b->th.wfd >= 0 && write(b->th.wfd, &one, sizeof(one)) < 0) {
                /* EAGAIN: the counter is full, the loop has a wake-up waiting already */
        }
}

static void on_wake(struct loop *l, int fd, uint32_t revents, void *userdata) {
        uint64_t n;
        if (read(fd, &n, sizeof(n)) < 0) {
                /* EAGAIN: another read took it; the flags are read after every wake-up anyway */
        }
}

/* Stops the level early, on every loop (`why` is static text). */
void level_stop(struct bench *b, const char *why) {
        b->stopped = why;
        const char *none = NULL;
        if (b->th.sh->n > 1 && atomic_compare_exchange_strong(&b->th.sh->stopped, &none, why))
                for (int i = 0; i < b->th.sh->n; i++)
                        if (i != b->th.shard)
                                loop_wake(b->th.sh->loops[i]);
}

static int arm_timer(struct bench *b, usec_t when) {
        struct itimerspec its = {
                .it_value = {.tv_sec = (time_t)(when / USEC_PER_SEC),
                             .tv_nsec = (long)(when % USEC_PER_SEC) * 1000},
        };
        if (timerfd_settime(b->arr.tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                return -errno;
        return 0;
}

/* Whether the level has sends left; ends a duration level once its time is up. */
static bool more_to_send(struct bench *b, usec_t due) {
        if (started(b) >= b->total)
                return false;
        usec_t stop_at = atomic_load_explicit(&b->th.sh->stop_at, memory_order_relaxed);
        if (stop_at != USEC_INFINITY && due >= stop_at) {
                b->total = started(b);
                return false;
        }
        return true;
}

static void on_probe_done(void *userdata) {
        struct probe *pr = userdata;
        struct bench *b = pr->b;
        pr->done = true;
        b->inflight--;
        int r = issue_due(b);
        if (r < 0 && !b->error)
                b->error = r;
}

/* Starts the next check under load when the level's warm-up is out and the cap allows.
 * Returns 1 when it started one, 0 when none was due. */
static size_t probes_due(const struct bench *b) {
        return b->chk.eval_level ? b->chk.n_probes : b->chk.n_suite_probes;
}

static int issue_probe(struct bench *b) {
        if (b->chk.probes_sent >= probes_due(b) || level_index(b, started(b)) < (uint64_t)b->spec->warmup ||
            b->inflight >= b->cap)
                return 0;
        struct probe *pr = &b->chk.probes[b->chk.probes_sent];
        int r = check_probe_start(b->l, b->t->checks_target, pr->spec, pr->stream, on_probe_done, pr, &pr->p);
        if (r < 0)
                return r;
        b->chk.probes_sent++;
        if (check_probe_finished(pr->p)) { /* judged without a request */
                pr->done = true;
                return 1;
        }
        b->inflight++;
        return 1;
}

/* The schedule's offset of this loop's next request: the level's schedule has one offset per
 * request i, and this loop takes those of its own requests. */
static usec_t sched_next(struct bench *b) {
        usec_t mine = 0;
        for (int i = 0; i < b->th.sh->n; i++) {
                usec_t t = bench_sched_next(&b->arr.sched);
                if (i == b->th.shard)
                        mine = t;
        }
        return mine;
}

/* The offset from the level start of this loop's next send, open loop: the trace's line of
 * the level's request it is (level_index), or the arrival schedule's. */
static usec_t next_offset(struct bench *b) {
        if (b->wl.trace)
                return dataset_trace_offset(b->spec->data, b->wl.trace_lines, level_index(b, b->sess.trace_next++),
                                            b->spec->dataset.trace_speed);
        return sched_next(b);
}

/* Sends everything that is due and allowed by the cap; arms the timer for what is not due.
 * Checks under load go first. */
int issue_due(struct bench *b) {
        for (;;) {
                if (b->stopped)
                        return 0;
                int rp = issue_probe(b);
                if (rp < 0)
                        return rp;
                if (rp > 0)
                        continue;
                usec_t now = now_usec();
                /* multi_turn: a session whose think time is over sends its next turn */
                if (b->sess.think_head && b->sess.think_head->due <= now) {
                        int r = session_next_turn(b);
                        if (r < 0)
                                return r;
                        continue;
                }
                usec_t think = b->sess.think_head ? b->sess.think_head->due : USEC_INFINITY;
                usec_t due = b->arr.open ? b->arr.next_due : now;
                if (!more_to_send(b, due) || b->inflight >= b->cap)
                        return think != USEC_INFINITY ? arm_timer(b, think) : 0;
                if (due > now)
                        return arm_timer(b, MIN(due, think));
                int r = sessions(b) ? session_start(b, due) : start_request(b, due);
                if (r < 0)
                        return r;
                if (b->arr.open)
                        b->arr.next_due = b->t0 + next_offset(b);
        }
}

void on_timer(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct bench *b = userdata;
        uint64_t expirations;
        if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN && !b->error)
                b->error = -errno;
        int r = issue_due(b);
        if (r < 0 && !b->error)
                b->error = r;
}

static long rss_kb(void) {
        _cleanup_free_ char *s = NULL;
        if (read_file_capped("/proc/self/statm", 4096, &s, NULL) < 0)
                return -1;
        unsigned long size, resident;
        if (sscanf(s, "%lu %lu", &size, &resident) != 2)
                return -1;
        return (long)(resident * (unsigned long)sysconf(_SC_PAGESIZE) / 1024);
}

static double tv_s(struct timeval tv) {
        return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

void probes_reset(struct bench *b) {
        for (size_t i = 0; i < b->chk.n_probes; i++) {
                check_probe_free(b->chk.probes[i].p);
                b->chk.probes[i].p = NULL;
                b->chk.probes[i].done = false;
        }
        b->chk.probes_sent = 0;
}

/* One run per spec and stream mode, as checks_run would make them (no models check), then
 * the eval's questions, not streamed. */
int probes_init(struct bench *b) {
        const struct bench_target *t = b->t;
        if (!t->checks_target)
                return 0;
        size_t n = 0;
        for (size_t i = 0; t->checks && i < t->n_checks; i++)
                if (t->checks[i].mode != CHECK_MODELS)
                        n += t->checks[i].stream == STREAM_BOTH ? 2 : 1;
        size_t n_eval = t->eval_checks ? t->n_eval_checks : 0;
        if (!n && !n_eval)
                return 0;
        if (!(b->chk.probes = calloc(n + n_eval, sizeof(*b->chk.probes))))
                return -ENOMEM;
        for (size_t i = 0; t->checks && i < t->n_checks; i++) {
                const struct check_spec *c = &t->checks[i];
                if (c->mode == CHECK_MODELS)
                        continue;
                for (int pass = 0; pass < (c->stream == STREAM_BOTH ? 2 : 1); pass++)
                        b->chk.probes[b->chk.n_probes++] = (struct probe){
                                .b = b, .spec = c, .stream = c->stream == STREAM_BOTH ? pass == 1 : c->stream == STREAM_YES};
        }
        b->chk.n_suite_probes = b->chk.n_probes;
        for (size_t i = 0; i < n_eval; i++)
                b->chk.probes[b->chk.n_probes++] = (struct probe){.b = b, .spec = &t->eval_checks[i], .eval = true, .seq = i};
        return 0;
}

/* A judged check under load as the level's JSON holds it: {["seq",] "name", "verdict",
 * "cause", "evidence", "latency_ms", "output" (an excerpt)}. 0, or a negative errno. */
static int probe_answer_json(struct probe *pr, bool with_seq, json_t **ret) {
        struct check_result res = {0};
        int r = check_probe_result(pr->p, &res);
        if (r < 0)
                return r;
        _cleanup_free_ char *out = detect_excerpt(res.output ? res.output : "", res.output ? strlen(res.output) : 0, 0,
                                                  CHECK_EVIDENCE_EXCERPT);
        json_t *o = json_pack("{s:s, s:s, s:s?, s:s?, s:f, s:s?}", "name", res.name ? res.name : "", "verdict",
                              verdict_to_string(res.verdict), "cause", res.cause, "evidence", res.evidence,
                              "latency_ms", (double)res.latency / 1e3, "output", out);
        check_result_release(&res);
        if (o && with_seq && json_object_set_new(o, "seq", json_integer((json_int_t)pr->seq)) < 0) {
                json_decref(o);
                o = NULL;
        }
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

/* The level's checks under load: name, verdict, cause, evidence, latency, the answer's
 * start. */
static int probes_json(struct bench *b, json_t **ret) {
        json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < b->chk.n_suite_probes; i++) {
                if (!b->chk.probes[i].done)
                        continue; /* cancelled with the level (stop_level) */
                json_t *o = NULL;
                int r = probe_answer_json(&b->chk.probes[i], false, &o);
                if (r < 0 || json_array_append_new(a, o) < 0) {
                        json_decref(a);
                        return r < 0 ? r : -ENOMEM;
                }
        }
        *ret = a;
        return 0;
}

/* The eval's questions asked amid this level: {"concurrency", "asked", "answers": [{"seq",
 * "name", "verdict", "cause", "evidence", "latency_ms", "output"}]}, one answer per question
 * answered (a level stopped early cancels the rest). */
static int eval_json(struct bench *b, json_t **ret) {
        json_t *a = json_array();
        json_t *o = json_pack("{s:i, s:I, s:o}", "concurrency", b->lv.concurrency, "asked",
                              (json_int_t)(b->chk.n_probes - b->chk.n_suite_probes), "answers", a);
        if (!o)
                return -ENOMEM;
        for (size_t i = b->chk.n_suite_probes; i < b->chk.n_probes; i++) {
                if (!b->chk.probes[i].done)
                        continue;
                json_t *e = NULL;
                int r = probe_answer_json(&b->chk.probes[i], true, &e);
                if (r < 0 || json_array_append_new(a, e) < 0) {
                        json_decref(o);
                        return r < 0 ? r : -ENOMEM;
                }
        }
        *ret = o;
        return 0;
}

/* Whether the level must stop now: the caller's should_abort (asked on loop 0 only, the
 * caller's thread), or another loop's failure. */
static bool level_aborted(struct bench *b) {
        if (atomic_load(&b->th.sh->abort))
                return true;
        return b->th.shard == 0 && b->t->should_abort && b->t->should_abort(b->t->abort_userdata);
}

/* ---- pre-connect: the level's connections exist before its first request ------------- */

struct preconnect {
        int pending;
        int ok;
};

static void preconnect_done(struct http_transfer *t, void *userdata) {
        struct preconnect *p = userdata;
        struct http_response *resp = http_transfer_response(t);
        p->pending--;
        if (resp->error == 0 && resp->status > 0)
                p->ok++;
}

/* Opens n connections to the server, each used once (GET /v1/models) so that the server has
 * accepted it, and leaves them in the loop's pool for the level: the first wave of a level
 * that starts n streams at once then pays no connection set-up inside its TTFT (a server
 * that closes connections after each answer makes this moot; connect_ms then shows it).
 * Returns how many were opened. */
static int preconnect(struct bench *b, int n) {
        const char *base = b->t->base_url;
        size_t blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        _cleanup_free_ char *url = strdup_printf("%.*s/v1/models", (int)blen, base);
        struct http_transfer **ts = calloc((size_t)n, sizeof(*ts));
        if (!url || !ts) {
                free(ts);
                return -ENOMEM;
        }
        struct preconnect p = {0};
        struct http_request req = {
                .method = "GET",
                .url = url,
                .timeout = b->t->request_timeout ? b->t->request_timeout : BENCH_DEFAULT_TIMEOUT,
                .max_body = (size_t)1 << 20,
        };
        int r = 0;
        for (int i = 0; i < n && r >= 0; i++) {
                r = http_start(b->l, &req, preconnect_done, &p, &ts[i]);
                if (r >= 0)
                        p.pending++;
        }
        while (r >= 0 && p.pending > 0) {
                r = loop_iterate(b->l, USEC_INFINITY);
                if (r == -ETIME)
                        r = 0;
                if (r >= 0 && level_aborted(b))
                        r = -ECANCELED;
        }
        for (int i = 0; i < n; i++)
                http_transfer_free(ts[i]);
        free(ts);
        return r < 0 ? r : p.ok;
}

/* Ends a level that stopped early: its requests and checks in flight are cancelled (not
 * counted: neither completed nor failed), the rest is not sent. */
static void stop_level(struct bench *b) {
        for (size_t i = 0; i < b->slots.n_pool; i++) {
                struct breq *q = b->slots.pool[i];
                if (!q->busy)
                        continue;
                loop_remove_transfer(b->l, q->easy);
                q->busy = false;
                q->next_free = b->slots.free_list;
                b->slots.free_list = q;
                b->stop.cancelled++;
                if (q->sess)
                        session_cut(b, q->sess);
                q->sess = NULL;
        }
        while (b->sess.think_head) {
                struct session *se = b->sess.think_head;
                b->sess.think_head = se->next;
                session_cut(b, se);
        }
        b->sess.think_tail = NULL;
        for (size_t i = 0; i < b->chk.n_probes; i++)
                if (b->chk.probes[i].p && !b->chk.probes[i].done) {
                        check_probe_free(b->chk.probes[i].p);
                        b->chk.probes[i].p = NULL;
                        b->stop.cancelled++;
                }
        b->stop.unsent = b->total != UINT64_MAX && b->total > started(b) ? b->total - started(b) : 0;
        b->inflight = 0;
}

/* ---- the loops of a level: one per thread (docs/bench.md "Client threads") ------------ */

/* Frees another loop made by loop_make, with its slots and its event loop. Its thread has
 * been joined. */
void loop_release(struct bench *w) {
        if (!w)
                return;
        for (size_t i = 0; i < w->slots.n_pool; i++) {
                if (w->slots.pool[i]->busy)
                        loop_remove_transfer(w->l, w->slots.pool[i]->easy);
                breq_free(w->slots.pool[i]);
        }
        free(w->slots.pool);
        if (w->arr.tfd >= 0) {
                if (w->l)
                        loop_unwatch_fd(w->l, w->arr.tfd);
                close(w->arr.tfd);
        }
        if (w->th.wfd >= 0) {
                if (w->l)
                        loop_unwatch_fd(w->l, w->th.wfd);
                close(w->th.wfd);
        }
        counted_clear(w);
        json_decref(w->samples.all);
        bench_level_release(&w->lv);
        sess_pool_free(w);
        if (w->th.own)
                loop_free(w->th.own);
        free(w);
}

/* Another loop for loop 0's levels: its own event loop, timer and wake-up, and loop 0's
 * run-wide settings, borrowed. */
static int loop_make(struct bench *b, struct bench **ret) {
        struct bench *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (struct bench){.t = b->t, .spec = b->spec, .url = b->url, .headers = b->headers, .arr.tfd = -1, .th.wfd = -1};
        memcpy(w->run_id, b->run_id, sizeof(w->run_id));
        int r = loop_new(&w->th.own);
        if (r < 0)
                goto fail;
        w->l = w->th.own;
        loop_rx_stamps(w->l, true);
        w->arr.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (w->arr.tfd < 0 || (w->th.wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
                r = -errno;
                goto fail;
        }
        if ((r = loop_watch_fd(w->l, w->arr.tfd, EPOLLIN, on_timer, w)) < 0 ||
            (r = loop_watch_fd(w->l, w->th.wfd, EPOLLIN, on_wake, w)) < 0)
                goto fail;
        *ret = w;
        return 0;
fail:
        loop_release(w);
        return r;
}

/* Makes the level's n loops (those not made by an earlier level) and resets what they share. */
static int level_loops(struct bench *b, int n) {
        if (b->th.n_loops < n) {
                struct bench **v = realloc(b->th.loops, (size_t)n * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                b->th.loops = v;
                if (b->th.n_loops == 0)
                        b->th.loops[b->th.n_loops++] = b;
                while (b->th.n_loops < n) {
                        int r = loop_make(b, &b->th.loops[b->th.n_loops]);
                        if (r < 0)
                                return r;
                        b->th.n_loops++;
                }
        }
        if (n > 1 && b->th.wfd < 0) {
                int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (fd < 0)
                        return -errno;
                int r = loop_watch_fd(b->l, fd, EPOLLIN, on_wake, b);
                if (r < 0) {
                        close(fd);
                        return r;
                }
                b->th.wfd = fd;
        }
        struct level_shared *sh = &b->th.level;
        sh->n = n;
        sh->loops = b->th.loops;
        atomic_store(&sh->t0, 0);
        atomic_store(&sh->go, false);
        atomic_store(&sh->abort, false);
        atomic_store(&sh->ready, 0);
        atomic_store(&sh->finished, 0);
        atomic_store(&sh->stop_at, USEC_INFINITY);
        atomic_store(&sh->failed, 0);
        atomic_store(&sh->stopped, NULL);
        return 0;
}

/* Sets loop w up for its share of a level of `concurrency` streams; b is loop 0. */
static int level_setup(struct bench *w, struct bench *b, int shard, int concurrency, double rate) {
        const struct bench_spec *spec = b->spec;
        int n = b->th.level.n;
        int r = bench_level_init(&w->lv, concurrency, rate);
        w->lv.count_method = w->cnt.rule != COUNT_NONE ? count_source_name(w->cnt.rule) : NULL;
        w->cnt.decided = false;
        if (r < 0)
                return r;
        w->th.sh = &b->th.level;
        w->th.shard = shard;
        w->lv.slo_ttft = b->t->slo_ttft;
        w->lv.slo_tpot = b->t->slo_tpot;
        w->lv.slo_e2el = b->t->slo_e2el;
        w->lv.max_tokens = spec->output_tokens;
        w->cap = concurrency / n + (shard < concurrency % n);
        w->inflight = 0;
        w->issued = 0;
        uint64_t total = spec->duration ? UINT64_MAX : (uint64_t)spec->warmup + (uint64_t)spec->requests;
        w->total = total == UINT64_MAX ? UINT64_MAX
                   : total > (uint64_t)shard ? (total - (uint64_t)shard + (uint64_t)n - 1) / (uint64_t)n
                                             : 0;
        w->arr.open = rate > 0 || b->wl.trace;
        atomic_store_explicit(&w->stop.last_token, 0, memory_order_relaxed);
        w->stop.cancelled = w->stop.unsent = 0;
        bench_sched_init(&w->arr.sched, rate > 0 ? rate : 1, spec->poisson, spec->burstiness, spec->seed);
        w->th.seq_base = b->th.request_seq;
        workload_level_start(w);
        if (w == b)
                return 0;
        /* another loop: the run-wide state it reads, as loop 0 has it now */
        w->prompt_index = b->prompt_index + (uint64_t)shard;
        w->wl = b->wl; /* the plan, borrowed (its calibration and workload are loop 0's to free) */
        w->cnt.tokenize = b->cnt.tokenize;
        w->cnt.rule = b->cnt.rule;
        w->cnt.fffd_tokens = b->cnt.fffd_tokens;
        w->stopped = NULL;
        w->error = 0;
        w->th.result = 0;
        w->samples.full = false;
        w->samples.base = b->samples.all ? json_array_size(b->samples.all) : 0;
        if (b->samples.all && !w->samples.all && !(w->samples.all = json_array()))
                return -ENOMEM;
        return 0;
}

/* One turn of loop 0 while it waits for the other loops. */
static int level_turn(struct bench *b) {
        int r = loop_iterate(b->l, USEC_INFINITY);
        if (r == -ETIME)
                r = 0;
        if (r >= 0 && level_aborted(b))
                r = -ECANCELED;
        return r;
}

/* Runs loop b's share of the level (from b->t0) until it is sent and answered, the level
 * stopped early (on any loop), or it must stop. */
static int level_drive(struct bench *b) {
        int r = issue_due(b);
        while (r >= 0 && !b->error) {
                if (!b->stopped && b->th.sh->n > 1)
                        b->stopped = atomic_load(&b->th.sh->stopped);
                if (b->stopped) {
                        stop_level(b);
                        break;
                }
                if (b->inflight == 0 && !more_to_send(b, b->arr.open ? b->arr.next_due : now_usec()) &&
                    b->chk.probes_sent >= probes_due(b))
                        break;
                r = loop_iterate(b->l, USEC_INFINITY);
                if (r == -ETIME)
                        r = 0;
                if (r >= 0 && level_aborted(b))
                        r = -ECANCELED;
        }
        if (r >= 0 && b->error)
                r = b->error;
        return r;
}

static double ru_cpu_s(const struct rusage *a, const struct rusage *b, double *ret_sys) {
        *ret_sys = tv_s(b->ru_stime) - tv_s(a->ru_stime);
        return tv_s(b->ru_utime) - tv_s(a->ru_utime);
}

/* The CPU seconds gauntlet (every thread) and the server's processes have run; NAN when the
 * server's are unknown (bench_target.server_cpu_ticks). */
static double own_cpu_s(const struct bench *b) {
        const struct bench_target *t = b->t;
        uint64_t ticks;
        long hz = sysconf(_SC_CLK_TCK);
        struct rusage self;
        if (!t->server_cpu_ticks || hz <= 0 || t->server_cpu_ticks(t->abort_userdata, &ticks) < 0 ||
            getrusage(RUSAGE_SELF, &self) < 0)
                return NAN;
        return (double)ticks / (double)hz + tv_s(self.ru_utime) + tv_s(self.ru_stime);
}

/* Another loop's thread: connects its share, waits for loop 0's start, sends its share. */
static void *loop_thread(void *userdata) {
        struct bench *w = userdata;
        struct level_shared *sh = w->th.sh;
        int r = 0;
        if (!w->spec->no_preconnect && w->cap > 0 && (r = preconnect(w, w->cap)) >= 0) {
                w->lv.preconnected = r;
                r = 0;
        }
        atomic_fetch_add(&sh->ready, 1);
        loop_wake(sh->loops[0]);
        while (r >= 0 && !atomic_load(&sh->go) && !atomic_load(&sh->abort)) {
                r = loop_iterate(w->l, USEC_INFINITY);
                if (r == -ETIME)
                        r = 0;
        }
        if (r >= 0 && atomic_load(&sh->abort))
                r = -ECANCELED;
        if (r >= 0) {
                struct rusage ru0, ru1;
                getrusage(RUSAGE_THREAD, &ru0);
                w->t0 = atomic_load(&sh->t0);
                w->arr.next_due = w->t0 + (w->arr.open ? next_offset(w) : 0);
                r = level_drive(w);
                getrusage(RUSAGE_THREAD, &ru1);
                w->lv.cpu_user_s = ru_cpu_s(&ru0, &ru1, &w->lv.cpu_sys_s);
                w->lv.loop_cpu_max_s = w->lv.cpu_user_s + w->lv.cpu_sys_s;
        }
        w->th.result = r;
        if (r < 0 && r != -ECANCELED) {
                atomic_store(&sh->abort, true);
                for (int i = 0; i < sh->n; i++)
                        if (sh->loops[i] != w)
                                loop_wake(sh->loops[i]);
        }
        atomic_fetch_add(&sh->finished, 1);
        loop_wake(sh->loops[0]);
        return NULL;
}

/* Loop 0 waits for the `started` other loops to finish their shares, its own loop turning
 * meanwhile (the caller's other watches, its abort); r < 0 stops them first. Returns r, or
 * the first other loop's own failure. */
static int level_join(struct bench *b, int started, int r) {
        struct level_shared *sh = &b->th.level;
        while (r >= 0 && atomic_load(&sh->finished) < started)
                r = level_turn(b);
        if (r < 0) {
                atomic_store(&sh->abort, true);
                for (int i = 1; i <= started; i++)
                        loop_wake(sh->loops[i]);
        }
        for (int i = 1; i <= started; i++) {
                struct bench *w = sh->loops[i];
                pthread_join(w->th.thread, NULL);
                if (w->th.result < 0 && (r >= 0 || (r == -ECANCELED && w->th.result != -ECANCELED)))
                        r = w->th.result;
        }
        return r;
}

/* The level's requests, from 0, as far as its loops sent them: one past the last level
 * index any loop used (with a duration, or sessions of unequal turns, the loops send
 * unequal shares; the next level's prompts and request ids start past every one used). */
static uint64_t level_sent(const struct bench *b) {
        uint64_t end = 0;
        for (int i = 0; i < b->th.level.n; i++) {
                const struct bench *w = b->th.level.loops[i];
                if (w->issued)
                        end = MAX(end, level_index(w, w->issued - 1) + 1);
        }
        return end;
}

/* Adds the other loops' shares of the level to loop 0's: metrics, samples, deferred counts,
 * sessions, and the requests each sent (for the next level's prompts and request ids). */
static int level_merge(struct bench *b) {
        struct level_shared *sh = &b->th.level;
        uint64_t first_prompt = b->prompt_index - b->issued * (uint64_t)sh->n, sent = level_sent(b);
        int r = 0;
        for (int i = 1; i < sh->n && r >= 0; i++) {
                struct bench *w = sh->loops[i];
                if ((r = bench_level_merge(&b->lv, &w->lv)) < 0)
                        break;
                b->stop.cancelled += w->stop.cancelled;
                b->stop.unsent += w->stop.unsent;
                b->sess.counted += w->sess.counted;
                b->sess.completed += w->sess.completed;
                b->sess.failed += w->sess.failed;
                b->sess.cut += w->sess.cut;
                b->sess.turns += w->sess.turns;
                b->samples.full |= w->samples.full;
                size_t k;
                json_t *v;
                json_array_foreach(w->samples.all, k, v) {
                        if (json_array_size(b->samples.all) >= BENCH_MAX_SAMPLES) {
                                b->samples.full = true;
                                break;
                        }
                        if (json_array_append(b->samples.all, v) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                }
                json_array_clear(w->samples.all);
                if (w->cnt.n_counted) {
                        struct counted *c = realloc(b->cnt.counted, (b->cnt.n_counted + w->cnt.n_counted) * sizeof(*c));
                        if (!c) {
                                r = -ENOMEM;
                                break;
                        }
                        b->cnt.counted = c;
                        memcpy(c + b->cnt.n_counted, w->cnt.counted, w->cnt.n_counted * sizeof(*c));
                        b->cnt.n_counted += w->cnt.n_counted;
                        free(w->cnt.counted); /* the texts are loop 0's now */
                        w->cnt.counted = NULL;
                        w->cnt.n_counted = 0;
                }
        }
        if (!b->stopped)
                b->stopped = atomic_load(&sh->stopped);
        b->th.request_seq = b->th.seq_base + sent;
        b->prompt_index = first_prompt + sent;
        return r;
}

/* Sends a level of n loops: sets each loop up, starts the other loops' threads, connects,
 * scrapes the server's /metrics first, sends from t0 and waits for every loop's share.
 * *ru0 gets loop 0's thread CPU at the start. */
static int level_send(struct bench *b, int n, int concurrency, double rate, struct rusage *ru0) {
        const struct bench_spec *spec = b->spec;
        struct level_shared *sh = &b->th.level;
        int r = 0, started = 0;
        for (int i = 0; i < n && r >= 0; i++)
                r = level_setup(b->th.loops[i], b, i, concurrency, rate);
        if (r < 0)
                return r;
        probes_reset(b);

        /* the other loops connect their shares meanwhile; the level starts when all have */
        for (int i = 1; i < n && r >= 0; i++)
                if ((r = -pthread_create(&b->th.loops[i]->th.thread, NULL, loop_thread, b->th.loops[i])) == 0)
                        started++;
        if (r >= 0 && !spec->no_preconnect && (r = preconnect(b, b->cap)) >= 0) {
                b->lv.preconnected = r;
                r = 0;
        }
        while (r >= 0 && atomic_load(&sh->ready) < n - 1)
                r = level_turn(b);
        /* the server's /metrics, on loop 0 only: once every loop is ready, until all are done */
        if (r >= 0 && b->th.scrape)
                r = scrape_level_begin(b->th.scrape);

        /* the search for the server's processes before the client's CPU is counted */
        b->lv.own0_s = own_cpu_s(b);
        getrusage(RUSAGE_THREAD, ru0);
        cpustat_read(&b->lv.host0);
        if (r >= 0) {
                b->lv.rss_kb_start = rss_kb();
                b->t0 = now_usec();
                atomic_store(&sh->t0, b->t0);
                atomic_store(&sh->go, true);
                for (int i = 1; i < n; i++)
                        loop_wake(b->th.loops[i]);
                b->arr.next_due = b->t0 + (b->arr.open ? next_offset(b) : 0);
                r = level_drive(b);
        }
        return level_join(b, started, r);
}

/* After a level of n loops is sent: its client figures, the server's (*server, kept until the
 * level's JSON is made), the other loops' shares merged in, the deferred counts, the
 * workload's warnings. */
static int level_collect(struct bench *b, int n, const struct rusage *ru0, uint64_t first_prompt,
                         json_t **server) {
        struct rusage ru1, self;
        int r;
        struct cpustat host1;
        usec_t end = now_usec();
        getrusage(RUSAGE_THREAD, &ru1);
        getrusage(RUSAGE_SELF, &self);
        /* ours before the host's counters, as at the start: the search for the server's
         * processes runs inside the window both measure */
        double own1_s = own_cpu_s(b);
        cpustat_read(&host1);
        b->lv.host_steal = cpustat_steal(&b->lv.host0, &host1);
        b->lv.host_others = cpustat_others(&b->lv.host0, &host1, own1_s - b->lv.own0_s, sysconf(_SC_CLK_TCK));
        b->lv.host_idle = cpustat_idle(&b->lv.host0, &host1);
        b->lv.cpu_user_s = ru_cpu_s(ru0, &ru1, &b->lv.cpu_sys_s);
        b->lv.loop_cpu_max_s = b->lv.cpu_user_s + b->lv.cpu_sys_s;
        b->lv.wall_s = (double)(end - b->t0) / 1e6;
        b->lv.rss_kb_peak = self.ru_maxrss;
        if (b->th.scrape && (r = scrape_level_end(b->th.scrape, server)) < 0)
                return r;
        b->lv.server = *server;
        const char *no_metrics = scrape_note(b->th.scrape);
        if (no_metrics && json_array_append_new(b->lv.warnings,
                                                json_sprintf("no server metrics: %s", no_metrics)) < 0)
                return -ENOMEM;
        b->lv.threads = n;
        if ((r = level_merge(b)) < 0)
                return r;
        if ((r = count_deferred(b)) < 0)
                return r;
        b->lv.calibration = b->wl.calibration;
        b->lv.workload = b->wl.workload;
        if (b->wl.plan_texts && b->prompt_index > b->wl.n_plan &&
            json_array_append_new(b->lv.warnings,
                                  json_sprintf("the workload's %zu prompts were sent more than once (%s): a "
                                               "repeat may be answered from the prefix cache", b->wl.n_plan,
                                               first_prompt >= b->wl.n_plan ? "this whole level repeats them"
                                                                         : "this level ran out of them")) < 0)
                r = -ENOMEM;
        b->wl.level_seq++;
        return r;
}

/* The level's JSON, appended to levels: its metrics, the checks and the eval's questions
 * under load (*under_load, *eval_load: kept until the caller is done with the level), its
 * sessions, and why it stopped early. */
static int level_report(struct bench *b, json_t *levels, json_t **under_load, json_t **eval_load) {
        int r;
        if (b->chk.n_suite_probes && (r = probes_json(b, under_load)) < 0)
                return r;
        b->lv.under_load = *under_load;
        if (b->chk.eval_level && b->chk.n_probes > b->chk.n_suite_probes) {
                if ((r = eval_json(b, eval_load)) < 0)
                        return r;
                b->chk.eval_asked = true;
                b->chk.eval_level = false;
        }
        b->lv.eval_under_load = *eval_load;
        if (sessions(b) && !(b->lv.sessions = sessions_json(b)))
                return -ENOMEM;
        json_t *o = bench_level_json(&b->lv);
        json_decref(b->lv.sessions);
        b->lv.sessions = NULL;
        if (o && count_level_json(b, o) < 0) {
                json_decref(o);
                o = NULL;
        }
        if (o && b->stopped &&
            json_array_append_new(json_object_get(o, metric_key(METRIC_WARNINGS)),
                                  json_sprintf("stopped early: %s; %llu in flight cancelled, %llu not sent, no "
                                               "later level run",
                                               b->stopped, (unsigned long long)b->stop.cancelled,
                                               (unsigned long long)b->stop.unsent)) < 0) {
                json_decref(o);
                o = NULL;
        }
        if (!o || json_array_append_new(levels, o) < 0)
                return -ENOMEM;
        return 0;
}

/* Runs one level to its end, on bench_threads' loops. On success the level's JSON is
 * appended to levels. */
int run_level(struct bench *b, int concurrency, double rate, json_t *levels) {
        _cleanup_json_ json_t *under_load = NULL, *server = NULL, *eval_load = NULL;
        uint64_t first_prompt = b->prompt_index;
        int n = bench_threads(b->spec->threads, concurrency, b->th.cpus);
        int r = level_loops(b, n);
        if (r < 0)
                return r;
        struct rusage ru0;
        if ((r = level_send(b, n, concurrency, rate, &ru0)) >= 0 &&
            (r = level_collect(b, n, &ru0, first_prompt, &server)) >= 0)
                r = level_report(b, levels, &under_load, &eval_load);
        counted_clear(b);
        bench_level_release(&b->lv);
        for (int i = 1; i < n; i++) {
                counted_clear(b->th.loops[i]);
                bench_level_release(&b->th.loops[i]->lv);
                json_array_clear(b->th.loops[i]->samples.all);
        }
        return r;
}
