/* bench.c -- the load generator: streaming requests on the shared loop, closed and open loop. */
#include "05-bench/bench.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include "04-gate/detect.h"
#include "03-io/http.h"
#include "01-base/metrics.h"
#include "02-text/objective.h"
#include "03-io/openai.h"
#include "03-io/sse.h"
#include "05-bench/scrape.h"
#include "01-base/utf8.h"

/* libcurl's receive buffer per handle. SSE chunks are small; 16 KiB is libcurl's default
 * and keeps one read per burst. It is most of a stream's memory (docs/bench.md). */
#define BENCH_RECV_BUFFER 16384L
/* A request body (prompt included) may not grow past this. */
#define BENCH_MAX_BODY ((size_t)16 << 20)
#define BENCH_DEFAULT_TIMEOUT (10 * 60 * USEC_PER_SEC)
/* What is kept of a failed request's error body or error event, for first_error. */
#define BENCH_ERROR_BODY ((size_t)4096)
/* Bytes of the server's words quoted in first_error. */
#define BENCH_ERROR_EXCERPT 200
/* prefix_repetition: the prompt indices its prefixes are made from (bench_prompt_chars's
 * "NNNNNNNN:" tag), apart from the requests' own (which start at 0). */
#define BENCH_PREFIX_INDEX UINT64_C(90000000)
#define BENCH_PREFIX_SPAN UINT64_C(10000000)
/* trace: the indices its hash_ids blocks are made from, apart from both (the level's
 * number makes each level's blocks its own, as prefix_repetition's prefixes). */
#define BENCH_BLOCK_INDEX UINT64_C(50000000)
#define BENCH_BLOCK_SPAN UINT64_C(40000000)
/* Counting by /tokenize (docs/metrics.md "Output tokens"): the streamed text kept per
 * request (past it, the text is cut and the count is the larger of the cut text's and the
 * chunks), and the requests of a level counted that way (later ones count their chunks). */
#define BENCH_MAX_TEXT ((size_t)1 << 20)
#define BENCH_MAX_TOKENIZED 4096

struct bench;

/* What the loops of one level share when it is spread over several threads (docs/bench.md
 * "Client threads"). Loop 0 is the caller's, on the caller's loop; the others each run on a
 * thread and a loop of their own. Written from any of those threads: atomics only. With
 * one loop, the level uses it alone and no thread is made. */
struct level_shared {
        int n;                        /* loops of this level */
        struct bench **loops;         /* [0] is the caller's bench; borrowed */
        _Atomic usec_t t0;            /* the level's start, common to every loop */
        atomic_bool go;               /* loop 0 has set t0: send */
        atomic_bool abort;            /* a loop failed, or the caller aborted: stop now */
        atomic_int ready;             /* other loops connected and waiting for go */
        atomic_int finished;          /* other loops done with their share */
        _Atomic usec_t stop_at;       /* duration: no counted send scheduled at or after this */
        atomic_uint_fast64_t failed;  /* counted failures of every loop: the failure gate's */
        _Atomic(const char *) stopped; /* why the level stopped early (any loop); NULL: it did not */
};

/* One request of the workload as plan_build made it; request i of the run is entry
 * i % n_plan. */
struct plan_entry {
        const char *text;      /* the prompt as given (dataset or prompt file; borrowed), or NULL:
                                  synthetic text made for each request */
        int tokens;            /* synthetic: its length in tokens (prefix_repetition: the suffix's) */
        size_t chars;          /* ... in characters when calibrated; 0: `tokens` words (bench_prompt) */
        int group;             /* prefix_repetition: whose prefix it starts with; -1: none */
        int output;            /* max_tokens */
        int64_t prompt_tokens; /* a dataset text's length as sized; -1 unknown */
        const struct dataset_entry *trace; /* trace: its line (blocks of hash_ids, then its own
                                              text), or NULL */
};

/* multi_turn: one session of the plan, its turns plan entries first .. first + turns - 1. */
struct plan_session {
        size_t first;
        int turns;
};

/* multi_turn: a session in flight at this level. It holds its place in the cap from its
 * first turn to its end, think times included. */
struct session {
        const struct plan_session *ps;
        int turn;             /* the next turn to send, from 0 */
        json_t *messages;     /* the conversation so far: user turns and the server's answers */
        bool warmup;          /* a warm-up session: none of its requests is counted */
        int32_t id;           /* counted sessions: from 0 in the level; warm-up: -1 */
        usec_t due;           /* thinking: when its next turn goes */
        struct session *next; /* in the thinking queue (due order) or the free list */
};

/* One check under load of the current level. */
struct probe {
        struct bench *b;
        const struct check_spec *spec;
        bool stream;
        struct check_probe *p;   /* NULL until sent */
        bool done;
        bool eval;               /* one of the eval's questions (bench_target.eval_checks) */
        size_t seq;              /* ... its place in the eval set */
};

/* One request slot: reused request after request, so the easy handle, its connection and
 * the parser buffers are set up once per slot, not once per request. */
struct breq {
        struct bench *b;
        CURL *easy;
        struct sse sse;
        struct buf body;
        struct buf errbody;   /* a non-200 body or an error event's data, capped */
        struct buf text;      /* the streamed content and reasoning, when counted by /tokenize */
        struct curl_slist *headers; /* the common headers plus this request's X-Request-Id */
        struct bench_record rec;
        struct session *sess; /* multi_turn: the session this turn belongs to; NULL: none */
        json_t *user_msg;     /* ... its user message, added to the session once answered */
        struct buf answer;    /* ... the streamed content, the assistant's part of the history */
        uint64_t index;       /* position in the level, warm-up included */
        uint64_t seq;         /* the N of its X-Request-Id: gauntlet-RUN-N */
        usec_t now;           /* arrival time of the bytes being parsed */
        usec_t last_chunk;    /* arrival of the previous content chunk, for ITL */
        uint64_t read_turn;   /* the loop's turn (loop_turn) of the last body bytes: reads */
        long port;            /* the connection's local port, as of the last body bytes; 0: unknown */
        long status;          /* HTTP status, 0 until the first body byte */
        bool warmup;          /* not counted */
        bool saw_end;         /* [DONE] or a finish_reason arrived */
        bool saw_done;        /* [DONE] arrived: later events are ignored */
        bool resent;          /* already sent again on a new connection (once at most) */
        bool keep_sent;       /* resent: rec.sent stays the first send's */
        bool busy;
        struct breq *next_free;
};

/* The request slots of a loop: every slot ever made, and those free. */
struct bench_slots {
        struct breq **pool;   /* every slot ever made */
        size_t n_pool;
        struct breq *free_list;
};

/* Open loop: when this loop's next request goes. */
struct bench_arrivals {
        bool open;            /* open loop */
        struct bench_sched sched;
        usec_t next_due;      /* open loop: scheduled time of the next send */
        int tfd;              /* open loop: absolute CLOCK_MONOTONIC timer for next_due */
};

/* Stopping early (docs/metrics.md "Failures decide"); `stopped` itself is struct bench's. */
struct bench_stop {
        _Atomic usec_t last_byte; /* this level: when the last response byte of any request of
                                   * this loop came (relaxed: read by the other loops) */
        uint64_t cancelled;   /* requests (and checks) in flight when it stopped: not counted */
        uint64_t unsent;      /* requests of the level never sent because it stopped */
};

/* The raw per-request samples (bench_run's ret_samples). */
struct bench_samples {
        json_t *all;          /* NULL when not wanted */
        bool full;
        size_t base;          /* samples the run had kept before this level (another loop's) */
};

/* The workload as the planner made it (plan_build), for every level; another loop has a
 * copy of loop 0's (level_setup). */
struct bench_plan {
        struct plan_entry *plan; /* the workload's requests, sent in turn (plan_build) */
        size_t n_plan;
        bool plan_texts;      /* its prompts are the dataset's or a file's texts, not synthetic */
        int prefix_tokens;    /* prefix_repetition: the shared prefix, in tokens (or words) */
        size_t prefix_chars;  /* ... in characters when calibrated; 0: prefix_tokens words */
        uint64_t level_seq;   /* levels started: each has its own prefixes */
        json_t *calibration;  /* what the calibration found, for every level; NULL: none */
        json_t *workload;     /* the dataset and arrivals as run, for every level */
        /* multi_turn (docs/bench.md "Workloads"): sessions instead of requests fill the cap,
         * and spec->requests, spec->warmup and the level's total count sessions */
        struct plan_session *psessions;
        size_t n_psessions;
        /* trace: open loop at the trace's own times */
        bool trace;
        size_t trace_lines;     /* lines of the file replayed */
        /* lengths in characters of synthetic text (trace blocks, multi_turn turns): the
         * straight line through two calibrated points; sized false: tokens as words */
        bool sized;
        int64_t size_t0, size_t1;
        size_t size_c0, size_c1;
};

/* Output counted by the server's /tokenize (docs/metrics.md "Output tokens"). */
struct bench_count {
        bool tokenize;        /* output counted by the server's /tokenize (the calibration used it) */
        struct counted *counted; /* this level's completed requests waiting for their count */
        size_t n_counted;
};

/* The checks under load and the eval's questions (bench_target.checks, eval_checks). */
struct bench_checks {
        struct probe *probes; /* the checks under load, the same at every level, then the
                                 eval's questions (only at the eval level) */
        size_t n_probes;      /* all of them */
        size_t n_suite_probes; /* the checks' */
        size_t probes_sent;   /* at this level */
        bool eval_level;      /* this level asks the eval's questions too */
        bool eval_asked;      /* a level asked them: no later one does */
};

/* multi_turn sessions of this loop at this level, and the trace's next line. */
struct bench_sessions {
        struct session **pool; /* every session made, freed at the end */
        size_t n_pool;
        struct session *free;
        struct session *think_head, *think_tail; /* thinking, in due order */
        uint64_t started;     /* at this level, warm-up included */
        uint64_t counted, completed, failed, cut, turns;
        uint64_t trace_next;  /* trace: the next line's index at this level */
};

/* Several loops (struct level_shared): this bench is loop `shard` of sh->n and sends the
 * level's requests i (warm-up included) with i % sh->n == shard; `issued` and `total` count
 * its own. The bench_run caller's bench is loop 0 and owns the others (`loops`); another
 * loop borrows its plan, url, headers and spec, and has its own loop, timer, slots, level
 * metrics, samples and deferred counts. */
struct bench_shard {
        struct level_shared *sh;
        struct level_shared level; /* loop 0's: what sh points at */
        int shard;
        uint64_t request_seq; /* across levels, warm-up included: the N of X-Request-Id */
        uint64_t seq_base;    /* the X-Request-Id N of the level's request 0 */
        struct bench **loops; /* loop 0: [0] itself, then the other loops made so far */
        int n_loops;
        int wfd;              /* eventfd that wakes this loop for the others; -1: none yet */
        int cpus;             /* CPUs this process may run on (automatic threads) */
        struct loop *own;     /* another loop's own loop (l), freed with it */
        pthread_t thread;
        int result;           /* another loop's outcome of the level */
        struct scrape *scrape; /* loop 0: the server's /metrics (scrape.h); NULL: not scraped */
};

/* One loop of the bench: the run's settings, this loop's share of the level, and the parts'
 * own state. 24 fields of its own (issue #35: no more than 25); a new one goes into a part. */
struct bench {
        struct loop *l;
        const struct bench_target *t;
        const struct bench_spec *spec;
        char *url;
        struct curl_slist *headers; /* common to every request; copied into each slot's list */
        char run_id[9];       /* hex, in every X-Request-Id of this run */
        struct bench_slots slots;
        struct bench_level lv;
        int cap;              /* requests in flight at most */
        int inflight;
        uint64_t issued;      /* requests started at this level, warm-up included */
        uint64_t total;       /* warm-up + counted; UINT64_MAX with a duration until it ends */
        usec_t t0;            /* level start */
        struct bench_arrivals arr;
        uint64_t prompt_index;/* across levels, so prompts never repeat */
        int error;            /* sticky failure from inside a callback (-ENOMEM) */
        const char *stopped;  /* why this level stopped early; then no later level runs.
                               * NULL: it did not. Static text. */
        struct bench_stop stop;
        struct bench_samples samples;
        struct bench_plan wl;        /* the workload planner's */
        struct bench_count cnt;      /* token counting's */
        struct bench_checks chk;     /* the checks under load */
        struct bench_sessions sess;  /* multi_turn's */
        struct bench_shard th;       /* the level runner's: loops, threads, scrape */
};

static bool sessions(const struct bench *b) {
        return b->wl.psessions != NULL;
}

/* Which loop sends the level's request i, and the level's index of a loop's k-th request. */
static uint64_t level_index(const struct bench *b, uint64_t k) {
        return k * (uint64_t)b->th.sh->n + (uint64_t)b->th.shard;
}

static void breq_free(struct breq *q) {
        if (!q)
                return;
        if (q->easy)
                curl_easy_cleanup(q->easy);
        sse_release(&q->sse);
        buf_release(&q->body);
        buf_release(&q->errbody);
        buf_release(&q->text);
        buf_release(&q->answer);
        json_decref(q->user_msg);
        curl_slist_free_all(q->headers);
        free(q);
}

static void set_error(struct breq *q, const char *fmt, ...) _printf_(2, 3);
static void set_error(struct breq *q, const char *fmt, ...) {
        if (q->rec.error[0])
                return; /* the first reason is the real one */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(q->rec.error, sizeof(q->rec.error), fmt, ap);
        va_end(ap);
}

/* One SSE event of a stream. Returning < 0 stops the stream (the request has failed). */
static int on_event(void *userdata, const char *event, const char *data, size_t len) {
        struct breq *q = userdata;
        q->rec.events++;
        q->b->lv.events++;
        /* [DONE] ends the stream: a token after it is not one a client would see */
        if (q->saw_done) {
                if (!q->warmup)
                        q->b->lv.after_done++;
                return 0;
        }
        if (strcmp(event, "error") == 0) {
                set_error(q, "error_event");
                (void)buf_append(&q->errbody, data, MIN(len, BENCH_ERROR_BODY - 1));
                return -EPROTO;
        }
        if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
                q->saw_end = true;
                q->saw_done = true;
                return 0;
        }
        struct bench_event ev;
        if (bench_event_parse_texts(data, len, &ev, !q->warmup ? &q->text : NULL,
                                    q->sess ? &q->answer : NULL) < 0) {
                set_error(q, "bad_event");
                return -EBADMSG;
        }
        if (ev.error) {
                set_error(q, "error_event");
                (void)buf_append(&q->errbody, data, MIN(len, BENCH_ERROR_BODY - 1));
                return -EPROTO;
        }
        if (ev.token) {
                if (q->rec.chunks == 0)
                        q->rec.first_token = q->now;
                else if (!q->warmup)
                        bench_level_itl(&q->b->lv, q->now - q->last_chunk);
                q->last_chunk = q->now;
                q->rec.chunks++;
        }
        if (ev.finish)
                q->saw_end = true;
        if (ev.timings) {
                q->rec.timings = true;
                q->rec.t_prompt_n = ev.t_prompt_n;
                q->rec.t_prompt_ms = ev.t_prompt_ms;
                q->rec.t_predicted_n = ev.t_predicted_n;
                q->rec.t_predicted_ms = ev.t_predicted_ms;
                q->rec.t_predicted_per_token_ms = ev.t_predicted_per_token_ms;
                q->rec.t_cache_n = ev.t_cache_n;
        }
        if (ev.usage) {
                if (ev.completion_tokens >= 0)
                        q->rec.output_tokens = ev.completion_tokens;
                if (ev.prompt_tokens >= 0)
                        q->rec.prompt_tokens = ev.prompt_tokens;
        }
        return 0;
}

/* libcurl calls this on the connection it picked, right before it writes the request: the
 * moment TTFT and end-to-end latency count from. Between the schedule and this lies the
 * client's own delay (building the body, other requests of the same burst), which
 * send_delay reports. */
static int on_prereq(void *userdata, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                     int conn_local_port) {
        struct breq *q = userdata;
        if (!q->keep_sent)
                q->rec.sent = now_usec();
        return CURL_PREREQFUNC_OK;
}

static size_t on_write(char *p, size_t size, size_t n, void *userdata) {
        struct breq *q = userdata;
        size_t len = size * n;
        /* The time the data came, not when this callback got its turn: when the loop saw the
         * socket ready (the callbacks ahead of it are the client's delay, not the server's),
         * or, for a turn that came late, the kernel's arrival times of the oldest and the
         * newest data it read (loop_rx_span): the first HTTP chunk of the read came at the
         * first, the others by the last. libcurl hands over each HTTP chunk of a read on its
         * own: one read per turn. A read in another socket's turn (libcurl moved this
         * transfer on that one's timer) or in a timeout's, which says nothing of when this
         * socket's data came, takes the time now, as does a time older than the send. Never
         * before the previous chunk. */
        struct loop *l = q->b->l;
        uint64_t turn = loop_turn(l);
        bool first_of_read = turn != q->read_turn;
        if (first_of_read) {
                q->read_turn = turn;
                q->b->lv.reads++;
                if (curl_easy_getinfo(q->easy, CURLINFO_LOCAL_PORT, &q->port) != CURLE_OK)
                        q->port = 0;
        }
        usec_t t = 0, first, last;
        if (q->port > 0 && (unsigned long)q->port == loop_turn_port(l)) {
                t = loop_wake_time(l);
                if (loop_rx_span(l, &first, &last))
                        t = first_of_read ? first : last;
        }
        if (t <= q->rec.sent)
                t = now_usec();
        q->now = MAX(t, q->last_chunk);
        atomic_store_explicit(&q->b->stop.last_byte, q->now, memory_order_relaxed);
        if (!q->status)
                curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->status);
        if (q->status != 200) {
                /* the status is the verdict; the start of the body says why */
                if (q->errbody.len < BENCH_ERROR_BODY - 1)
                        (void)buf_append(&q->errbody, p, MIN(len, BENCH_ERROR_BODY - 1 - q->errbody.len));
                return len;
        }
        int r = sse_feed(&q->sse, p, len);
        if (r < 0) {
                if (r == -E2BIG)
                        set_error(q, "sse_limit");
                return 0; /* makes libcurl end the transfer with CURLE_WRITE_ERROR */
        }
        return len;
}

static void classify(struct breq *q, CURLcode result) {
        struct bench_record *rec = &q->rec;
        if (!q->status)
                curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &q->status);
        if (q->status && q->status != 200) {
                rec->error[0] = '\0';
                set_error(q, "http_%ld", q->status);
        } else if (result == CURLE_OK) {
                q->now = now_usec();
                if (sse_finish(&q->sse) < 0 && !rec->error[0])
                        set_error(q, "bad_event");
                if (!rec->error[0] && !q->saw_end)
                        set_error(q, "closed");
                if (!rec->error[0] && rec->chunks == 0)
                        set_error(q, "no_tokens");
        } else {
                switch (result) {
                case CURLE_OPERATION_TIMEDOUT:
                        set_error(q, "timeout");
                        break;
                case CURLE_COULDNT_CONNECT:
                case CURLE_COULDNT_RESOLVE_HOST:
                        set_error(q, "connect");
                        break;
                case CURLE_GOT_NOTHING:
                case CURLE_RECV_ERROR:
                case CURLE_SEND_ERROR:
                case CURLE_PARTIAL_FILE:
                        set_error(q, "closed");
                        break;
                default:
                        set_error(q, "curl_%d", (int)result);
                        break;
                }
        }
        rec->ok = !rec->error[0];
        rec->aborted = !rec->ok && rec->chunks > 0;
}

static double ms(usec_t u) {
        return (double)u / 1e3;
}

static int add_sample(struct bench *b, const struct bench_record *r, uint64_t index, uint64_t seq) {
        if (!b->samples.all)
                return 0;
        if (b->samples.base + json_array_size(b->samples.all) >= BENCH_MAX_SAMPLES) {
                b->samples.full = true;
                return 0;
        }
        int64_t out = MAX(r->counted_tokens, (int64_t)r->chunks); /* gauntlet's count, as the level's */
        json_t *o = json_pack("{s:i, s:I, s:b, s:f, s:f, s:f, s:I, s:I, s:I}",
                              "concurrency", b->lv.concurrency,
                              "index", (json_int_t)(index - (uint64_t)b->spec->warmup),
                              "ok", r->ok,
                              "scheduled_ms", ms(r->scheduled - b->t0),
                              "send_delay_ms", ms(r->sent > r->scheduled ? r->sent - r->scheduled : 0),
                              "e2e_ms", ms(r->done - r->sent),
                              "chunks", (json_int_t)r->chunks,
                              "output_tokens", (json_int_t)r->output_tokens,
                              "prompt_tokens", (json_int_t)r->prompt_tokens);
        if (!o)
                return -ENOMEM;
        if (r->chunks > 0)
                json_object_set_new(o, "ttft_ms", json_real(ms(r->first_token - r->sent)));
        if (r->counted_tokens > 0)
                json_object_set_new(o, "counted_tokens", json_integer(r->counted_tokens));
        if (r->ok && out > 1)
                json_object_set_new(o, "tpot_ms", json_real(ms((r->done - r->first_token) / (usec_t)(out - 1))));
        if (!r->ok)
                json_object_set_new(o, "error", json_string(r->error));
        if (r->connect)
                json_object_set_new(o, "connect_ms", json_real(ms(r->connect)));
        if (r->session >= 0) {
                json_object_set_new(o, "session", json_integer(r->session));
                json_object_set_new(o, "turn", json_integer(r->turn));
        }
        if (r->timings)
                json_object_set_new(o, "server_timings",
                                    json_pack("{s:f, s:f, s:f, s:f, s:f}", "prompt_n", r->t_prompt_n, "prompt_ms",
                                              r->t_prompt_ms, "predicted_n", r->t_predicted_n, "predicted_ms",
                                              r->t_predicted_ms, "predicted_per_token_ms", r->t_predicted_per_token_ms));
        json_object_set_new(o, "request_id",
                            json_sprintf("gauntlet-%s-%llu", b->run_id, (unsigned long long)seq));
        return json_array_append_new(b->samples.all, o) < 0 ? -ENOMEM : 0;
}

static int issue_due(struct bench *b);

/* Whether the level's failures already exceed what the failure gate allows, whatever the
 * requests still to come do (bench_target.stop_when_failed). A share of a level with a
 * duration is not known before its end. */
static bool failures_decided(const struct bench *b) {
        const struct bench_spec *spec = b->spec;
        uint64_t failed = atomic_load_explicit(&b->th.sh->failed, memory_order_relaxed);
        if (!b->t->stop_when_failed || failed == 0)
                return false;
        if (spec->max_failure_share > 0 && spec->duration)
                return false;
        uint64_t planned = spec->duration ? UINT64_MAX : (uint64_t)spec->requests;
        return failed > bench_failures_allowed(spec, planned);
}

/* Whether a request died on a kept-alive connection that the server had already closed:
 * nothing came back, and libcurl made no new connection for it. Such a request never
 * reached the server as far as anyone can tell, so it is sent again once on a new
 * connection instead of counting as the server's failure. */
static bool died_on_reused_connection(struct breq *q, CURLcode result) {
        if (q->resent || q->status || q->rec.chunks || q->rec.first_token)
                return false;
        if (result != CURLE_GOT_NOTHING && result != CURLE_SEND_ERROR && result != CURLE_RECV_ERROR)
                return false;
        long code = 0, connects = -1;
        if (curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 0)
                return false;
        return curl_easy_getinfo(q->easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects == 0;
}

/* The server's words for a failed request: the message of its error body or event, else
 * the start of that body, else libcurl's words for a transfer error. Caller frees. */
static char *failure_detail(struct breq *q, CURLcode result) {
        if (q->errbody.len) {
                _cleanup_free_ char *m = openai_error_message(q->errbody.data, q->errbody.len);
                return m ? detect_excerpt(m, strlen(m), 0, BENCH_ERROR_EXCERPT)
                         : detect_excerpt(q->errbody.data, q->errbody.len, 0, BENCH_ERROR_EXCERPT);
        }
        if (result != CURLE_OK)
                return strdup(curl_easy_strerror(result));
        return NULL;
}

/* A completed request of a bench that counts by /tokenize waits for its count until the
 * level ends (count_deferred): the count's requests never share the server with the load.
 * 1 when deferred, 0 when it is counted now by its chunks, -ENOMEM. */
struct counted {
        struct bench_record rec;
        char *text;
        uint64_t index, seq;
};

/* A completed counted request's output through the forced detectors (detect.h): the bench's
 * prompts are not questions (random words, dataset turns cut to a length) and its outputs
 * run to max_tokens, often past the model's own end (ignore_eos): only the detectors that
 * cannot fire on an honest continuation run, whether or not this request was forced. Its
 * first BENCH_JUDGE_MAX bytes are judged. */
static int judge_output(struct bench *b, struct breq *q) {
        size_t len = q->text.len;
        if (len > BENCH_JUDGE_MAX)
                len = utf8_char_start(q->text.data, len, BENCH_JUDGE_MAX);
        struct detect_input in = {.text = q->text.data ? q->text.data : "", .len = len, .forced = true};
        struct detect_result res = {0};
        int r = detect_output(&in, &res);
        if (r < 0)
                return r;
        r = bench_level_judged(&b->lv, res.verdict == VERDICT_PASS ? NULL : res.cause, res.evidence,
                               q->index - MIN(q->index, (uint64_t)b->spec->warmup));
        detect_result_release(&res);
        return r;
}

static int defer_count(struct bench *b, struct breq *q) {
        if (!b->cnt.tokenize || !q->rec.ok || b->cnt.n_counted >= (size_t)(BENCH_MAX_TOKENIZED / b->th.sh->n) || q->text.len == 0)
                return 0;
        struct counted *v = realloc(b->cnt.counted, (b->cnt.n_counted + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        b->cnt.counted = v;
        char *text = strndup(q->text.data, q->text.len);
        if (!text)
                return -ENOMEM;
        v[b->cnt.n_counted++] = (struct counted){.rec = q->rec, .text = text, .index = q->index, .seq = q->seq};
        v[b->cnt.n_counted - 1].rec.detail = NULL;
        return 1;
}

/* ---- multi_turn sessions: the conversation so far, think times ---------------------- */

static int start_request_for(struct bench *b, usec_t scheduled, struct session *sess);

static void session_free(struct bench *b, struct session *se) {
        json_decref(se->messages);
        se->messages = NULL;
        se->next = b->sess.free;
        b->sess.free = se;
}

/* An answer as the history keeps it: the bytes as streamed, a sequence that is not UTF-8
 * (a server's, or one cut at the cap) as U+FFFD. */
static json_t *answer_string(const struct buf *a) {
        json_t *v = json_stringn(buf_str(a), a->len);
        if (v)
                return v;
        _cleanup_buf_ struct buf clean;
        buf_init(&clean, 0);
        const unsigned char *p = (const unsigned char *)buf_str(a);
        for (size_t i = 0; i < a->len;) {
                size_t k = utf8_decode(p + i, a->len - i, NULL, NULL);
                if (k == 0) {
                        if (buf_puts(&clean, "\xEF\xBF\xBD") < 0)
                                return NULL;
                        i++;
                        continue;
                }
                if (buf_append(&clean, p + i, k) < 0)
                        return NULL;
                i += k;
        }
        return json_stringn(buf_str(&clean), clean.len);
}

/* A turn of q's session has ended. Answered, the session keeps its place in the cap: the
 * turn and the answer as the client received it join its history, and its next turn waits
 * the think time in the queue. A failed turn, or the last one, ends the session (a failed
 * one is counted as the request's failure and the session's: its later turns are not
 * sent). */
static void session_turn_done(struct bench *b, struct breq *q) {
        struct session *se = q->sess;
        json_t *user = q->user_msg;
        q->sess = NULL;
        q->user_msg = NULL;
        bool more = q->rec.ok && se->turn < se->ps->turns;
        if (more) {
                json_t *a = answer_string(&q->answer);
                json_t *m = a ? json_pack("{s:s, s:o}", "role", "assistant", "content", a) : NULL;
                if (!m || !user || json_array_append(se->messages, user) < 0 ||
                    json_array_append_new(se->messages, m) < 0) {
                        if (!b->error)
                                b->error = -ENOMEM;
                        more = false;
                }
        }
        json_decref(user);
        if (!more) {
                if (!se->warmup) {
                        if (q->rec.ok)
                                b->sess.completed++;
                        else
                                b->sess.failed++;
                }
                session_free(b, se);
                b->inflight--;
                return;
        }
        se->due = now_usec() + b->spec->dataset.multi_turn_think_time;
        se->next = NULL;
        if (b->sess.think_tail)
                b->sess.think_tail->next = se;
        else
                b->sess.think_head = se;
        b->sess.think_tail = se;
}

/* The first thinking session's next turn (its think time is over). */
static int session_next_turn(struct bench *b) {
        struct session *se = b->sess.think_head;
        b->sess.think_head = se->next;
        if (!b->sess.think_head)
                b->sess.think_tail = NULL;
        se->next = NULL;
        int r = start_request_for(b, se->due, se);
        if (r < 0) {
                session_free(b, se);
                b->inflight--;
        }
        return r;
}

/* A new session of the plan, in turn, and its first turn. */
static int session_start(struct bench *b, usec_t scheduled) {
        struct session *se = b->sess.free;
        if (se)
                b->sess.free = se->next;
        else {
                struct session **pool = realloc(b->sess.pool, (b->sess.n_pool + 1) * sizeof(*pool));
                if (!pool)
                        return -ENOMEM;
                b->sess.pool = pool;
                if (!(se = calloc(1, sizeof(*se))))
                        return -ENOMEM;
                b->sess.pool[b->sess.n_pool++] = se;
        }
        /* the level's session j (warm-up ones first) is this loop's when j % loops is its
         * shard (level_index) */
        uint64_t j = level_index(b, b->sess.started), warmup = (uint64_t)b->spec->warmup;
        *se = (struct session){.ps = &b->wl.psessions[j % b->wl.n_psessions], .warmup = j < warmup, .id = -1};
        if (!(se->messages = json_array())) {
                session_free(b, se);
                return -ENOMEM;
        }
        if (!se->warmup)
                se->id = (int32_t)MIN(j - warmup, (uint64_t)INT32_MAX);
        b->inflight++;
        int r = start_request_for(b, scheduled, se);
        if (r < 0) {
                b->inflight--;
                session_free(b, se);
                return r;
        }
        b->sess.started++;
        if (!se->warmup)
                b->sess.counted++;
        return 0;
}

/* Frees every session b made (a loop's own; the plan's sessions are loop 0's). */
static void sess_pool_free(struct bench *b) {
        for (size_t i = 0; i < b->sess.n_pool; i++) {
                json_decref(b->sess.pool[i]->messages);
                free(b->sess.pool[i]);
        }
        free(b->sess.pool);
        b->sess.pool = NULL;
        b->sess.n_pool = 0;
        b->sess.free = NULL;
}

/* Ends the level's sessions when it stops early: those thinking, and the one of a request
 * in flight (q, cancelled), are cut. */
static void session_cut(struct bench *b, struct session *se) {
        if (!se->warmup)
                b->sess.cut++;
        session_free(b, se);
}

/* The level's "sessions" (new reference). */
static json_t *sessions_json(const struct bench *b) {
        return json_pack("{s:I, s:I, s:I, s:I, s:I}", "started", (json_int_t)b->sess.counted, "completed",
                         (json_int_t)b->sess.completed, "ended_by_failure", (json_int_t)b->sess.failed, "cut",
                         (json_int_t)b->sess.cut, "turns", (json_int_t)b->sess.turns);
}

/* What a level starts from: no session, the trace from its first line. */
static void workload_level_start(struct bench *b) {
        while (b->sess.think_head) {
                struct session *se = b->sess.think_head;
                b->sess.think_head = se->next;
                session_free(b, se);
        }
        b->sess.think_tail = NULL;
        b->sess.started = b->sess.counted = b->sess.completed = b->sess.failed = b->sess.cut = b->sess.turns = 0;
        b->sess.trace_next = 0;
}

/* Sessions started at this level (multi_turn), else requests: what the level's total counts. */
static uint64_t started(const struct bench *b) {
        return sessions(b) ? b->sess.started : b->issued;
}

/* When the last response byte of any request of the level came, on any loop. */
static usec_t level_last_byte(const struct bench *b) {
        usec_t last = 0;
        for (int i = 0; i < b->th.sh->n; i++)
                last = MAX(last, atomic_load_explicit(&b->th.sh->loops[i]->stop.last_byte, memory_order_relaxed));
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
static void level_stop(struct bench *b, const char *why) {
        b->stopped = why;
        const char *none = NULL;
        if (b->th.sh->n > 1 && atomic_compare_exchange_strong(&b->th.sh->stopped, &none, why))
                for (int i = 0; i < b->th.sh->n; i++)
                        if (i != b->th.shard)
                                loop_wake(b->th.sh->loops[i]);
}

static void on_done(struct loop *l, CURL *easy, CURLcode result, void *userdata) {
        struct breq *q = userdata;
        struct bench *b = q->b;
        if (died_on_reused_connection(q, result)) {
                usec_t first_send = q->rec.sent;
                q->resent = true;
                curl_easy_setopt(q->easy, CURLOPT_FRESH_CONNECT, 1L);
                sse_release(&q->sse);
                sse_init(&q->sse, BENCH_MAX_LINE, BENCH_MAX_EVENT, on_event, q);
                q->saw_end = q->saw_done = false;
                int r = loop_add_transfer(l, easy, on_done, q);
                if (r == 0) {
                        if (!q->warmup)
                                b->lv.resent++;
                        q->rec.sent = first_send; /* on_prereq moves it; the wait counts */
                        q->keep_sent = true;
                        return;
                }
        }
        /* The end is when [DONE] came (the time of the bytes that held it, as a chunk's),
         * whenever libcurl settles the stream: in the same turn or a later one, its own
         * socket's or another's. Without [DONE] (an error, a cut, a server that sends none)
         * it counts, like a chunk, from when the last bytes or the error came, not from
         * when this callback got its turn: when its socket was seen ready, or the kernel's
         * time of the newest data read in a late turn; in another socket's turn, now. */
        usec_t t = 0, first, last;
        if (q->saw_done && q->now > q->rec.sent) {
                t = q->now;
        } else if (q->port > 0 && (unsigned long)q->port == loop_turn_port(l)) {
                t = loop_wake_time(l);
                if (loop_rx_span(l, &first, &last))
                        t = last;
        }
        q->rec.done = t > q->rec.sent ? MAX(t, q->now) : now_usec();
        long connects = 0;
        curl_off_t connect_us = 0;
        if (curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0 &&
            curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us) == CURLE_OK && connect_us > 0)
                q->rec.connect = (usec_t)connect_us;
        classify(q, result);
        /* A request that timed out while no byte of any request came back since it was
         * sent: the server has stopped answering. The requests after it would each wait a
         * whole request_timeout for nothing. (A warm-up one counts then: it is the level's
         * only measurement.) */
        bool hung = !q->rec.ok && strcmp(q->rec.error, "timeout") == 0 && level_last_byte(b) < q->rec.sent;
        bool counted = !q->warmup || (hung && !b->stopped);
        _cleanup_free_ char *detail = NULL;
        if (!q->rec.ok && counted && !b->lv.first_error[0])
                q->rec.detail = detail = failure_detail(q, result);
        if (counted) {
                if (!q->rec.ok)
                        atomic_fetch_add_explicit(&b->th.sh->failed, 1, memory_order_relaxed);
                int r = q->rec.ok && !q->warmup ? judge_output(b, q) : 0;
                if (r >= 0)
                        r = defer_count(b, q);
                if (r == 0 && (r = bench_level_add(&b->lv, &q->rec)) >= 0)
                        r = add_sample(b, &q->rec, q->index, q->seq);
                if (r < 0 && !b->error)
                        b->error = r;
        }
        q->busy = false;
        q->next_free = b->slots.free_list;
        b->slots.free_list = q;
        if (q->sess)
                session_turn_done(b, q);
        else
                b->inflight--;
        if (!b->stopped && hung)
                level_stop(b, "the server stopped answering: a request timed out with no byte of any request since "
                              "it was sent");
        else if (!b->stopped && failures_decided(b))
                level_stop(b, "failures over max_failures decided the verdict");
        if (b->stopped)
                return; /* the rest is cancelled once this wake-up's callbacks are done (run_level) */
        int r = issue_due(b);
        if (r < 0 && !b->error)
                b->error = r;
}

static int slot_get(struct bench *b, struct breq **ret) {
        struct breq *q = b->slots.free_list;
        if (q) {
                b->slots.free_list = q->next_free;
                *ret = q;
                return 0;
        }
        struct breq **pool = realloc(b->slots.pool, (b->slots.n_pool + 1) * sizeof(*pool));
        if (!pool)
                return -ENOMEM;
        b->slots.pool = pool;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->b = b;
        q->easy = curl_easy_init();
        if (!q->easy) {
                free(q);
                return -ENOMEM;
        }
        buf_init(&q->body, BENCH_MAX_BODY);
        buf_init(&q->errbody, BENCH_ERROR_BODY);
        buf_init(&q->text, BENCH_MAX_TEXT);
        buf_init(&q->answer, BENCH_MAX_TEXT);
        sse_init(&q->sse, BENCH_MAX_LINE, BENCH_MAX_EVENT, on_event, q);
        b->slots.pool[b->slots.n_pool++] = q;
        *ret = q;
        return 0;
}

/* Characters of synthetic text for `tokens` tokens: the straight line through the two
 * calibrated points (these words grow by nearly the same tokens per character). */
static size_t chars_for(const struct bench *b, int tokens) {
        double c = b->wl.size_t1 > b->wl.size_t0
                           ? (double)b->wl.size_c0 + (double)(tokens - b->wl.size_t0) * ((double)b->wl.size_c1 - (double)b->wl.size_c0) /
                                                          (double)(b->wl.size_t1 - b->wl.size_t0)
                           : (double)b->wl.size_c0 * (double)tokens / (double)MAX(b->wl.size_t0, 1);
        return MAX((size_t)llround(MAX(c, 0)), (size_t)BENCH_PROMPT_PREFIX);
}

/* Synthetic text of `tokens` tokens for prompt index `index`: sized when calibrated, else
 * that many words. The same index, the same text, and a shorter one its beginning. */
static int synth_text(const struct bench *b, uint64_t index, int tokens, struct buf *out) {
        if (!b->wl.sized)
                return bench_prompt(b->spec->seed, index, tokens, out);
        return bench_prompt_chars(b->spec->seed, index, chars_for(b, tokens), out);
}

/* trace: a line's prompt: the text of each of its hash_ids blocks (trace_block_size tokens,
 * the last one cut at input_length; the same hash id, the same text at this level, so a
 * prefix cache sees what the trace shares), then text of its own for what they do not
 * cover. */
static int trace_text(const struct bench *b, const struct dataset_entry *d, uint64_t pi, struct buf *out) {
        int bs = b->spec->dataset.trace_block_size;
        int64_t left = d->input_length;
        int r = 0;
        for (size_t k = 0; k < d->n_hash && left > 0 && r >= 0; k++) {
                int n = (int)MIN(left, (int64_t)bs);
                uint64_t gi = BENCH_BLOCK_INDEX + (b->wl.level_seq * UINT64_C(1000003) + d->hash_ids[k]) % BENCH_BLOCK_SPAN;
                if (k > 0)
                        r = buf_puts(out, " ");
                if (r >= 0)
                        r = synth_text(b, gi, n, out);
                left -= n;
        }
        if (r >= 0 && left > 0) {
                if (out->len)
                        r = buf_puts(out, " ");
                if (r >= 0)
                        r = synth_text(b, pi, (int)left, out);
        }
        return r;
}

static int build_body(struct bench *b, struct breq *q) {
        const struct bench_spec *spec = b->spec;
        const struct bench_target *t = b->t;
        _cleanup_buf_ struct buf prompt;
        buf_init(&prompt, BENCH_MAX_BODY);
        uint64_t pi = b->prompt_index; /* the level's request i gets its first prompt + i */
        b->prompt_index += (uint64_t)b->th.sh->n;
        /* a session's turn; a trace's line i at the level's request i; else in turn */
        const struct plan_entry *e = q->sess ? &b->wl.plan[q->sess->ps->first + (size_t)q->sess->turn]
                                     : b->wl.trace ? &b->wl.plan[level_index(b, b->issued) % b->wl.n_plan]
                                                : &b->wl.plan[pi % b->wl.n_plan];
        int r = 0;
        if (e->group >= 0 && b->wl.prefix_tokens > 0) {
                /* the group's prefix, the same for every request of the group at this level,
                 * then the request's own text */
                uint64_t gi = BENCH_PREFIX_INDEX + (b->wl.level_seq * (uint64_t)spec->dataset.num_prefixes +
                                                    (uint64_t)e->group) % BENCH_PREFIX_SPAN;
                r = b->wl.prefix_chars ? bench_prompt_chars(spec->seed, gi, b->wl.prefix_chars, &prompt)
                                    : bench_prompt(spec->seed, gi, b->wl.prefix_tokens, &prompt);
                if (r >= 0 && e->tokens > 0)
                        r = buf_puts(&prompt, " ");
        }
        if (r < 0)
                return r;
        if (e->trace)
                r = trace_text(b, e->trace, pi, &prompt);
        else if (e->text)
                r = buf_puts(&prompt, e->text);
        else if (e->group >= 0 && e->tokens == 0)
                r = 0;
        else if (e->chars)
                r = bench_prompt_chars(spec->seed, pi, e->chars, &prompt);
        else
                r = bench_prompt(spec->seed, pi, e->tokens, &prompt);
        if (r < 0)
                return r;
        json_t *o = json_pack("{s:b, s:i, s:{s:b}}", "stream", 1, "max_tokens", e->output,
                              "stream_options", "include_usage", 1);
        if (!o)
                return -ENOMEM;
        if (t->model)
                json_object_set_new(o, "model", json_string(t->model));
        if (spec->chat) {
                /* a session's turn goes with the conversation so far */
                json_t *user = json_pack("{s:s, s:s}", "role", "user", "content", buf_str(&prompt));
                json_t *msgs = q->sess ? json_copy(q->sess->messages) : json_array();
                if (!user || !msgs || json_array_append(msgs, user) < 0 ||
                    json_object_set_new(o, "messages", msgs) < 0) {
                        json_decref(user);
                        json_decref(o);
                        return -ENOMEM;
                }
                json_decref(q->user_msg);
                q->user_msg = NULL;
                if (q->sess)
                        q->user_msg = json_incref(user);
                json_decref(user);
        } else
                json_object_set_new(o, "prompt", json_string(buf_str(&prompt)));
        if (t->profile && t->profile->takes_ignore_eos) {
                /* Exactly the asked output: no early end of sequence. */
                json_object_set_new(o, "ignore_eos", json_true());
                json_object_set_new(o, "min_tokens", json_integer(e->output));
        }
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!s)
                return -ENOMEM;
        buf_reset(&q->body);
        r = buf_puts(&q->body, s);
        free(s);
        return r;
}

/* Appends a copy of s to *l; -ENOMEM leaves *l as it was. */
static int slist_add(struct curl_slist **l, const char *s) {
        struct curl_slist *n = curl_slist_append(*l, s);
        if (!n)
                return -ENOMEM;
        *l = n;
        return 0;
}

/* Each request says who it is, X-Request-Id: gauntlet-RUN-N (RUN differs per bench_run, N
 * counts every request of the run), so a server's log, or a server that records what it
 * did per request, can be matched to the raw samples. */
static int set_headers(struct bench *b, struct breq *q) {
        curl_slist_free_all(q->headers);
        q->headers = NULL;
        for (const struct curl_slist *h = b->headers; h; h = h->next)
                if (slist_add(&q->headers, h->data) < 0)
                        return -ENOMEM;
        char rid[64];
        snprintf(rid, sizeof(rid), "X-Request-Id: gauntlet-%s-%llu", b->run_id, (unsigned long long)q->seq);
        return slist_add(&q->headers, rid);
}

static int start_request_for(struct bench *b, usec_t scheduled, struct session *sess) {
        struct breq *q;
        int r = slot_get(b, &q);
        if (r < 0)
                return r;
        /* a session's turns count by session (its index in the level: counted turns after
         * spec->warmup, as the samples' index expects) */
        q->index = !sess         ? level_index(b, b->issued)
                   : sess->warmup ? 0
                                  : (uint64_t)b->spec->warmup + level_index(b, b->sess.turns);
        q->seq = b->th.seq_base + level_index(b, b->issued);
        q->warmup = sess ? sess->warmup : q->index < (uint64_t)b->spec->warmup;
        q->rec = (struct bench_record){.scheduled = scheduled, .output_tokens = -1, .prompt_tokens = -1,
                                       .session = sess ? sess->id : -1, .turn = sess ? sess->turn + 1 : 0};
        q->sess = sess;
        buf_reset(&q->answer);
        q->status = 0;
        q->saw_end = false;
        q->saw_done = false;
        q->resent = false;
        q->keep_sent = false;
        buf_reset(&q->errbody);
        buf_reset(&q->text);
        curl_easy_setopt(q->easy, CURLOPT_FRESH_CONNECT, 0L);
        q->last_chunk = 0;
        q->read_turn = 0;
        q->port = 0;
        sse_release(&q->sse);
        sse_init(&q->sse, BENCH_MAX_LINE, BENCH_MAX_EVENT, on_event, q);
        r = build_body(b, q);
        if (r < 0)
                goto fail;
        r = set_headers(b, q);
        if (r < 0)
                goto fail;

        CURL *e = q->easy;
        usec_t timeout = b->t->request_timeout ? b->t->request_timeout : BENCH_DEFAULT_TIMEOUT;
        curl_easy_setopt(e, CURLOPT_URL, b->url);
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, q->headers);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, q->body.data);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body.len);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout / USEC_PER_MSEC));
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, BENCH_RECV_BUFFER);
        curl_easy_setopt(e, CURLOPT_NOPROGRESS, 1L);
        curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
        curl_easy_setopt(e, CURLOPT_PREREQDATA, q);

        /* Until libcurl really sends it (on_prereq), a request counts as sent now. */
        q->rec.sent = now_usec();
        r = loop_add_transfer(b->l, e, on_done, q);
        if (r < 0)
                goto fail;
        q->busy = true;
        b->issued++;
        if (sess) {
                sess->turn++;
                if (!sess->warmup)
                        b->sess.turns++;
        } else
                b->inflight++;
        usec_t unset = USEC_INFINITY;
        if (!q->warmup && b->spec->duration && atomic_load_explicit(&b->th.sh->stop_at, memory_order_relaxed) == unset)
                atomic_compare_exchange_strong(&b->th.sh->stop_at, &unset, q->rec.sent + b->spec->duration);
        return 0;
fail:
        q->sess = NULL;
        json_decref(q->user_msg);
        q->user_msg = NULL;
        q->next_free = b->slots.free_list;
        b->slots.free_list = q;
        return r;
}

static int start_request(struct bench *b, usec_t scheduled) {
        return start_request_for(b, scheduled, NULL);
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
static int issue_due(struct bench *b) {
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

static void on_timer(struct loop *l, int fd, uint32_t revents, void *userdata) {
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

static void probes_reset(struct bench *b) {
        for (size_t i = 0; i < b->chk.n_probes; i++) {
                check_probe_free(b->chk.probes[i].p);
                b->chk.probes[i].p = NULL;
                b->chk.probes[i].done = false;
        }
        b->chk.probes_sent = 0;
}

/* One run per spec and stream mode, as checks_run would make them (no models check), then
 * the eval's questions, not streamed. */
static int probes_init(struct bench *b) {
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

static int count_deferred(struct bench *b);
static void counted_clear(struct bench *b);

/* ---- the loops of a level: one per thread (docs/bench.md "Client threads") ------------ */

/* Frees another loop made by loop_make, with its slots and its event loop. Its thread has
 * been joined. */
static void loop_release(struct bench *w) {
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
        atomic_store_explicit(&w->stop.last_byte, 0, memory_order_relaxed);
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

/* Runs one level to its end, on bench_threads' loops. On success the level's JSON is
 * appended to levels. */
static int run_level(struct bench *b, int concurrency, double rate, json_t *levels) {
        const struct bench_spec *spec = b->spec;
        _cleanup_json_ json_t *under_load = NULL, *server = NULL, *eval_load = NULL;
        struct level_shared *sh = &b->th.level;
        uint64_t first_prompt = b->prompt_index;
        int n = bench_threads(spec->threads, concurrency, b->th.cpus), started = 0;
        int r = level_loops(b, n);
        if (r < 0)
                return r;
        for (int i = 0; i < n && r >= 0; i++)
                r = level_setup(b->th.loops[i], b, i, concurrency, rate);
        if (r < 0)
                goto out;
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

        struct rusage ru0, ru1, self;
        getrusage(RUSAGE_THREAD, &ru0);
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
        r = level_join(b, started, r);
        if (r < 0)
                goto out;

        getrusage(RUSAGE_THREAD, &ru1);
        getrusage(RUSAGE_SELF, &self);
        b->lv.cpu_user_s = ru_cpu_s(&ru0, &ru1, &b->lv.cpu_sys_s);
        b->lv.loop_cpu_max_s = b->lv.cpu_user_s + b->lv.cpu_sys_s;
        b->lv.wall_s = (double)(now_usec() - b->t0) / 1e6;
        b->lv.rss_kb_peak = self.ru_maxrss;
        if (b->th.scrape && (r = scrape_level_end(b->th.scrape, &server)) < 0)
                goto out;
        b->lv.server = server;
        const char *no_metrics = scrape_note(b->th.scrape);
        if (no_metrics && json_array_append_new(b->lv.warnings,
                                                json_sprintf("no server metrics: %s", no_metrics)) < 0) {
                r = -ENOMEM;
                goto out;
        }
        b->lv.threads = n;
        if ((r = level_merge(b)) < 0)
                goto out;
        if ((r = count_deferred(b)) < 0)
                goto out;
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
        if (r < 0)
                goto out;
        if (b->chk.n_suite_probes && (r = probes_json(b, &under_load)) < 0)
                goto out;
        b->lv.under_load = under_load;
        if (b->chk.eval_level && b->chk.n_probes > b->chk.n_suite_probes) {
                if ((r = eval_json(b, &eval_load)) < 0)
                        goto out;
                b->chk.eval_asked = true;
                b->chk.eval_level = false;
        }
        b->lv.eval_under_load = eval_load;
        if (sessions(b) && !(b->lv.sessions = sessions_json(b))) {
                r = -ENOMEM;
                goto out;
        }
        json_t *o = bench_level_json(&b->lv);
        json_decref(b->lv.sessions);
        b->lv.sessions = NULL;
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
                r = -ENOMEM;
out:
        counted_clear(b);
        bench_level_release(&b->lv);
        for (int i = 1; i < n; i++) {
                counted_clear(b->th.loops[i]);
                bench_level_release(&b->th.loops[i]->lv);
                json_array_clear(b->th.loops[i]->samples.all);
        }
        return r;
}

/* ---- prompt calibration: input_tokens in the server's own tokens ---------------------- */

/* A calibration request's limit on answers: a token count or a model list is small. */
#define CALIB_MAX_BODY ((size_t)1 << 20)
/* Prompts are searched up to this many characters per asked token. */
#define CALIB_MAX_CHARS_PER_TOKEN 64

struct calib {
        struct bench *b;
        const char *method;   /* "tokenize" or "usage" */
        int64_t template;     /* usage.prompt_tokens of an empty message: what the chat template
                                 (or BOS) adds to every prompt; -1 unknown */
        int64_t context;      /* tokens a request may use, from /v1/models; 0: not said */
        int requests;         /* sent so far */
        bool refused;         /* the server refused a prompt as too long */
        int status;           /* the last error status, and its message */
        char message[160];
};

/* One JSON request to the server; *ret gets the parsed 2xx body. -EBADMSG for an answer that
 * is not JSON or not 2xx (*ret_status says which), a transport error as http_run gives it. */
static int calib_request(struct calib *c, const char *method, const char *path, json_t *body, json_t **ret,
                         int *ret_status) {
        struct bench *b = c->b;
        const char *base = b->t->base_url;
        size_t blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        _cleanup_free_ char *url = strdup_printf("%.*s%s", (int)blen, base, path);
        _cleanup_free_ char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
        if (!url || (body && !text))
                return -ENOMEM;
        struct http_request req = {
                .method = method,
                .url = url,
                .body = text,
                .body_len = text ? strlen(text) : 0,
                .timeout = b->t->request_timeout ? b->t->request_timeout : BENCH_DEFAULT_TIMEOUT,
                .max_body = CALIB_MAX_BODY,
                .should_abort = b->t->should_abort,
                .abort_userdata = b->t->abort_userdata,
        };
        _cleanup_(http_response_release) struct http_response resp;
        c->requests++;
        int r = http_run(b->l, &req, USEC_INFINITY, &resp);
        *ret_status = resp.status;
        if (r < 0)
                return r;
        if (resp.status < 200 || resp.status >= 300 || resp.truncated) {
                _cleanup_free_ char *m = openai_error_message(buf_str(&resp.body), resp.body.len);
                _cleanup_free_ char *ex = m ? detect_excerpt(m, strlen(m), 0, sizeof(c->message) - 8) : NULL;
                c->status = resp.status;
                snprintf(c->message, sizeof(c->message), "%s", ex ? ex : "");
                return -EBADMSG;
        }
        json_error_t je;
        *ret = json_loadb(buf_str(&resp.body), resp.body.len, 0, &je);
        return *ret ? 0 : -EBADMSG;
}

/* The context a request may use, from /v1/models: vLLM's max_model_len, llama.cpp's
 * meta.n_ctx (per slot). 0 when the server does not say. */
static int64_t calib_context(struct calib *c) {
        json_t *o = NULL;
        int status;
        if (calib_request(c, "GET", "/v1/models", NULL, &o, &status) < 0)
                return 0;
        int64_t ctx = 0;
        if (openai_models_context_of(o, &ctx) < 0)
                ctx = 0;
        json_decref(o);
        return ctx;
}

/* usage.prompt_tokens of a one-token answer to text, as the bench would send it. */
static int calib_usage(struct calib *c, const char *text, int64_t *ret) {
        struct bench *b = c->b;
        json_t *body = json_pack("{s:i, s:i, s:b}", "max_tokens", 1, "temperature", 0, "stream", 0);
        if (!body)
                return -ENOMEM;
        if (b->t->model)
                json_object_set_new(body, "model", json_string(b->t->model));
        if (b->spec->chat)
                json_object_set_new(body, "messages", json_pack("[{s:s, s:s}]", "role", "user", "content", text));
        else
                json_object_set_new(body, "prompt", json_string(text));
        json_t *o = NULL;
        int status;
        int r = calib_request(c, "POST", b->spec->chat ? "/v1/chat/completions" : "/v1/completions", body, &o, &status);
        json_decref(body);
        if (r < 0)
                return r;
        json_t *n = json_object_get(json_object_get(o, "usage"), "prompt_tokens");
        r = json_is_integer(n) && json_integer_value(n) >= 0 ? 0 : -ENODATA;
        if (r == 0)
                *ret = json_integer_value(n);
        json_decref(o);
        return r;
}

/* The server's /tokenize count of text alone (no template, no special tokens): 0, -ENODATA
 * when the answer has no count, -ENOENT without a tokenize path, or as calib_request. */
static int calib_tokenize(struct calib *c, const char *text, int64_t *ret) {
        struct bench *b = c->b;
        const char *path = b->t->profile ? b->t->profile->tokenize_path : NULL;
        if (!path)
                return -ENOENT;
        json_t *body = openai_tokenize_request(text, b->t->model);
        if (!body)
                return -ENOMEM;
        json_t *o = NULL;
        int status;
        int r = calib_request(c, "POST", path, body, &o, &status);
        json_decref(body);
        if (r == 0) {
                r = openai_token_count_of(o, ret) < 0 ? -ENODATA : 0;
                json_decref(o);
        }
        return r;
}

/* The server's token count of text alone (no template, no special tokens). */
static int calib_count(struct calib *c, const char *text, int64_t *ret) {
        if (strcmp(c->method, "tokenize") == 0) {
                int r = calib_tokenize(c, text, ret);
                if (r == 0 || r == -ECANCELED || r == -EINTR || r == -ENOMEM)
                        return r;
                c->method = "usage"; /* no tokenizer there after all: learn it from usage */
        }
        if (c->template < 0) {
                int r = calib_usage(c, "", &c->template);
                if (r < 0)
                        return r;
        }
        int64_t n;
        int r = calib_usage(c, text, &n);
        if (r < 0)
                return r;
        *ret = n - c->template;
        return 0;
}

/* The count of the calibration text of `chars` characters. A prompt the server refuses
 * (an HTTP error: longer than its context) counts as over any asked length. */
static int calib_text(struct calib *c, size_t chars, int64_t *ret) {
        _cleanup_buf_ struct buf t;
        buf_init(&t, BENCH_MAX_BODY);
        int r = bench_prompt_chars(c->b->spec->seed, 0, chars, &t);
        if (r < 0)
                return r;
        r = calib_count(c, buf_str(&t), ret);
        if (r == -EBADMSG && c->template >= 0) {
                c->refused = true;
                *ret = INT64_MAX;
                return 0;
        }
        return r;
}

static int refuse(struct bench *b, const char *fmt, ...) _printf_(2, 3);
static int refuse(struct bench *b, const char *fmt, ...) {
        if (b->t->ret_error) {
                va_list ap;
                va_start(ap, fmt);
                char *s = NULL;
                if (vasprintf(&s, fmt, ap) < 0)
                        s = NULL;
                va_end(ap);
                free(*b->t->ret_error);
                *b->t->ret_error = s;
        }
        return -EMSGSIZE;
}

/* Finds the prompt length, in characters, that the server counts as `want` tokens: a
 * bisection on the length of bench_prompt_chars's text, each step one count by the server
 * (its tokenize endpoint, or usage.prompt_tokens less the template's share). Token counts
 * grow with the text, one token at a time or nearly; the length kept is the one whose count
 * is nearest the asked number. */
static int calib_find(struct calib *c, int64_t want, size_t *ret_chars, int64_t *ret_got) {
        struct bench *b = c->b;
        size_t lo = BENCH_PROMPT_PREFIX, hi = (size_t)want * 2;
        int64_t flo, fhi;
        int r = calib_text(c, lo, &flo);
        if (r == -EBADMSG || r == -ENODATA)
                return refuse(b, "cannot size the prompts: the server answered no token count (%s)",
                              strcmp(c->method, "tokenize") == 0 ? "tokenize endpoint" : "usage.prompt_tokens");
        if (r < 0)
                return r;
        fhi = flo;
        if (flo < want) {
                for (;;) {
                        if ((r = calib_text(c, hi, &fhi)) < 0)
                                return r;
                        if (fhi >= want)
                                break;
                        if (hi >= (size_t)want * CALIB_MAX_CHARS_PER_TOKEN || hi * 2 > BENCH_MAX_BODY / 2)
                                return refuse(b, "cannot size the prompts: %zu characters are still %lld tokens, fewer "
                                              "than the %lld asked", hi, (long long)fhi, (long long)want);
                        lo = hi;
                        flo = fhi;
                        hi *= 2;
                }
                while (hi - lo > 1) {
                        size_t mid = lo + (hi - lo) / 2;
                        int64_t f;
                        if ((r = calib_text(c, mid, &f)) < 0)
                                return r;
                        if (f < want) {
                                lo = mid;
                                flo = f;
                        } else {
                                hi = mid;
                                fhi = f;
                        }
                }
        }
        if (flo < want && fhi == INT64_MAX && c->refused)
                return refuse(b, "the server refuses prompts of %lld tokens (%lld is the longest it took): HTTP %d%s%s",
                              (long long)want, (long long)flo, c->status, c->message[0] ? ": " : "", c->message);
        bool take_hi = flo >= want || (fhi != INT64_MAX && llabs(fhi - want) <= llabs(want - flo));
        *ret_chars = take_hi && flo < want ? hi : lo;
        *ret_got = take_hi && flo < want ? fhi : flo;
        return 0;
}

/* The template's share (usage.prompt_tokens of an empty message), asked once; 0 when the
 * server does not say. */
static int calib_template(struct calib *c, int64_t *ret) {
        if (c->template < 0) {
                int r = calib_usage(c, "", &c->template);
                if (r < 0 && r != -EBADMSG && r != -ENODATA)
                        return r;
        }
        *ret = c->template > 0 ? c->template : 0;
        return 0;
}

/* Sizes the synthetic prompts of n lengths (want[i] tokens -> ret_chars[i] characters,
 * measured ret_got[i] tokens) and says so in b->wl.calibration: the first length under the
 * keys it always had, every length under "lengths" when there are several. */
static int calibrate(struct bench *b, struct calib *c, const int64_t *want, size_t n, size_t *ret_chars,
                     int64_t *ret_got) {
        int r;
        for (size_t i = 0; i < n; i++)
                if ((r = calib_find(c, want[i], &ret_chars[i], &ret_got[i])) < 0)
                        return r;
        int64_t tmpl;
        if ((r = calib_template(c, &tmpl)) < 0)
                return r;
        b->wl.calibration = json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:i}", "method", c->method, "input_tokens",
                                   (json_int_t)want[0], "chars", (json_int_t)ret_chars[0], "measured",
                                   (json_int_t)ret_got[0], "template_tokens",
                                   c->template >= 0 ? json_integer(c->template) : json_null(), "context",
                                   c->context > 0 ? json_integer(c->context) : json_null(), "requests", c->requests);
        b->cnt.tokenize = strcmp(c->method, "tokenize") == 0; /* the output is counted the same way */
        if (!b->wl.calibration)
                return -ENOMEM;
        if (n > 1) {
                json_t *a = json_array();
                if (!a || json_object_set_new(b->wl.calibration, "lengths", a) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (json_array_append_new(a, json_pack("{s:I, s:I, s:I}", "input_tokens", (json_int_t)want[i],
                                                               "chars", (json_int_t)ret_chars[i], "measured",
                                                               (json_int_t)ret_got[i])) < 0)
                                return -ENOMEM;
        }
        return 0;
}

/* Checks that the longest request, prompt tokens as measured and output as asked, fits the
 * context the server says a request has. */
static int check_context(struct bench *b, struct calib *c, int64_t prompt, int64_t output) {
        int64_t tmpl = c->template > 0 ? c->template : 0;
        if (c->context > 0 && prompt + tmpl + output > c->context)
                return refuse(b, "the server's context holds %lld tokens per request; a bench request needs %lld "
                              "(%lld prompt + %lld template + %lld output)",
                              (long long)c->context, (long long)(prompt + tmpl + output), (long long)prompt,
                              (long long)tmpl, (long long)output);
        return 0;
}

/* ---- the workload: the requests a run sends, from its dataset ------------------------- */

static int plan_alloc(struct bench *b, size_t n) {
        if (!(b->wl.plan = calloc(n ? n : 1, sizeof(*b->wl.plan))))
                return -ENOMEM;
        b->wl.n_plan = n;
        for (size_t i = 0; i < n; i++)
                b->wl.plan[i] = (struct plan_entry){.group = -1, .prompt_tokens = -1};
        return 0;
}

static int num_prompts(const struct bench_spec *spec) {
        return spec->dataset.num_prompts > 0 ? spec->dataset.num_prompts : DATASET_DEFAULT_PROMPTS;
}

/* random: one length, as always, or with a range ratio num_prompts lengths drawn from the
 * ranges, their prompts sized at both ends of the input range and the rest in between by
 * a straight line (a prompt of these words grows by nearly the same tokens per character). */
static int plan_random(struct bench *b, struct calib *c) {
        const struct bench_spec *spec = b->spec;
        int in = spec->input_tokens, r;
        double ratio = spec->dataset.range_ratio;
        bool sized = spec->calibrate && in > 0;
        if (ratio == 0) {
                if ((r = plan_alloc(b, 1)) < 0)
                        return r;
                b->wl.plan[0].tokens = in > 0 ? in : 16;
                b->wl.plan[0].output = spec->output_tokens;
                if (!sized)
                        return 0;
                int64_t want = in, got;
                if ((r = calibrate(b, c, &want, 1, &b->wl.plan[0].chars, &got)) < 0)
                        return r;
                return check_context(b, c, got, spec->output_tokens);
        }
        int ilo, ihi, olo, ohi;
        dataset_len_range(in > 0 ? in : 16, ratio, 1, &ilo, &ihi);
        dataset_len_range(spec->output_tokens, ratio, 1, &olo, &ohi);
        if ((r = plan_alloc(b, (size_t)num_prompts(spec))) < 0)
                return r;
        uint64_t rng = spec->seed ^ UINT64_C(0x72616e646f6d);
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                b->wl.plan[i].tokens = dataset_draw(&rng, ilo, ihi);
                b->wl.plan[i].output = dataset_draw(&rng, olo, ohi);
        }
        if (!sized)
                return 0;
        int64_t want[2] = {ilo, ihi}, got[2];
        size_t chars[2];
        if ((r = calibrate(b, c, want, ihi > ilo ? 2 : 1, chars, got)) < 0)
                return r;
        if (ihi == ilo) {
                chars[1] = chars[0];
                got[1] = got[0];
        }
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                struct plan_entry *e = &b->wl.plan[i];
                double f = ihi > ilo ? (double)(e->tokens - ilo) / (double)(ihi - ilo) : 0;
                e->chars = (size_t)llround((double)chars[0] + f * ((double)chars[1] - (double)chars[0]));
                e->chars = MAX(e->chars, (size_t)BENCH_PROMPT_PREFIX);
        }
        return check_context(b, c, got[1], ohi);
}

/* prefix_repetition: num_prefixes groups of num_prompts / num_prefixes requests, shuffled;
 * every prompt is the group's prefix of prefix_len tokens then its own suffix_len. */
static int plan_prefix(struct bench *b, struct calib *c) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        _cleanup_free_ int *groups = NULL;
        size_t n;
        int r = dataset_prefix_groups(num_prompts(spec), o->num_prefixes, spec->seed, &groups, &n);
        if (r < 0)
                return r;
        if ((r = plan_alloc(b, n)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                b->wl.plan[i].group = groups[i];
                b->wl.plan[i].tokens = o->suffix_len;
                b->wl.plan[i].output = o->prefix_output_len;
        }
        b->wl.prefix_tokens = o->prefix_len;
        if (!spec->calibrate)
                return 0;
        int64_t want[2];
        size_t k = 0, chars[2] = {0, 0};
        int64_t got[2] = {0, 0};
        if (o->prefix_len > 0)
                want[k++] = o->prefix_len;
        if (o->suffix_len > 0)
                want[k++] = o->suffix_len;
        if ((r = calibrate(b, c, want, k, chars, got)) < 0)
                return r;
        if (o->prefix_len > 0)
                b->wl.prefix_chars = chars[0];
        for (size_t i = 0; i < n && o->suffix_len > 0; i++)
                b->wl.plan[i].chars = chars[k - 1];
        return check_context(b, c, got[0] + (k > 1 ? got[1] : 0), o->prefix_output_len);
}

/* A text's length without the server: about four bytes a token (--no-calibrate). */
static int64_t estimate_tokens(const char *s) {
        return (int64_t)((strlen(s) + 3) / 4);
}

/* A dataset text's length in the server's tokens. 1: the server refused it (longer than
 * its context), 0: measured. */
static int size_text(struct bench *b, struct calib *c, const char *text, int64_t *ret) {
        if (!b->spec->calibrate) {
                *ret = estimate_tokens(text);
                return 0;
        }
        int r = calib_count(c, text, ret);
        if (r == -EBADMSG && c->template >= 0)
                return 1;
        if (r == -EBADMSG || r == -ENODATA)
                return refuse(b, "cannot size the prompts: the server answered no token count (%s)",
                              strcmp(c->method, "tokenize") == 0 ? "tokenize endpoint" : "usage.prompt_tokens");
        return r;
}

/* sharegpt: the conversations in a seeded order, each measured in the server's tokens
 * (prompt and reply), kept when the filters and the server's context allow, until
 * num_prompts are kept (vLLM's sampling). */
static int plan_sharegpt(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        size_t want = (size_t)num_prompts(spec);
        _cleanup_free_ size_t *order = NULL;
        int r = dataset_order(d->n, spec->seed, &order);
        if (r < 0)
                return r;
        if ((r = plan_alloc(b, MIN(want, d->n))) < 0)
                return r;
        int64_t tmpl = 0;
        if (spec->calibrate && (r = calib_template(c, &tmpl)) < 0)
                return r;
        size_t n = 0, filtered = 0, too_long = 0, looked = 0;
        for (size_t k = 0; k < d->n && n < want; k++) {
                const struct dataset_entry *e = &d->v[order[k]];
                int64_t pl, rl;
                looked++;
                if ((r = size_text(b, c, e->prompt, &pl)) < 0)
                        return r;
                int r2 = r == 0 ? size_text(b, c, e->reply, &rl) : 1;
                if (r2 < 0)
                        return r2;
                if (r > 0 || r2 > 0) {
                        too_long++;
                        continue;
                }
                int64_t out = dataset_sharegpt_output(o, rl);
                if (!dataset_sharegpt_keep(o, pl, out)) {
                        filtered++;
                        continue;
                }
                if (c->context > 0 && pl + tmpl + out > c->context) {
                        too_long++;
                        continue;
                }
                b->wl.plan[n++] = (struct plan_entry){.text = e->prompt, .group = -1, .output = (int)MIN(out, INT32_MAX),
                                                   .prompt_tokens = pl};
        }
        b->wl.n_plan = n;
        json_t *skipped = json_pack("{s:I, s:I, s:I}", "no_reply", (json_int_t)d->no_reply, "filtered",
                                    (json_int_t)filtered, "context", (json_int_t)too_long);
        if (!skipped || json_object_set_new(work, "skipped", skipped) < 0 ||
            json_object_set_new(work, "looked_at", json_integer((json_int_t)looked)) < 0)
                return -ENOMEM;
        if (n == 0)
                return refuse(b, "no conversation of '%s' is left to send: %zu looked at, %zu outside the length "
                              "filters, %zu too long for the server", o->path ? o->path : "the dataset", looked,
                              filtered, too_long);
        if (spec->calibrate &&
            !(b->wl.calibration = json_pack("{s:s, s:o, s:o, s:i}", "method", c->method, "template_tokens",
                                         c->template >= 0 ? json_integer(c->template) : json_null(), "context",
                                         c->context > 0 ? json_integer(c->context) : json_null(), "requests",
                                         c->requests)))
                return -ENOMEM;
        return 0;
}

/* custom: the file's prompts in a seeded order, num_prompts of them, each with its
 * output_tokens or spec's; sent as they are, not measured. */
static int plan_custom(struct bench *b) {
        const struct bench_spec *spec = b->spec;
        const struct dataset *d = spec->data;
        _cleanup_free_ size_t *order = NULL;
        int r = dataset_order(d->n, spec->seed, &order);
        if (r < 0 || (r = plan_alloc(b, MIN((size_t)num_prompts(spec), d->n))) < 0)
                return r;
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                const struct dataset_entry *e = &d->v[order[i]];
                b->wl.plan[i].text = e->prompt;
                b->wl.plan[i].output = e->output_tokens > 0 ? e->output_tokens : spec->output_tokens;
        }
        return 0;
}

/* Sizes synthetic text at one or two lengths (tokens): synth_text's straight line. */
static int size_points(struct bench *b, struct calib *c, int64_t t0, int64_t t1, int64_t *ret_got) {
        int64_t want[2] = {t0, t1}, got[2] = {0, 0};
        size_t chars[2] = {0, 0};
        size_t n = t1 > t0 ? 2 : 1;
        int r = calibrate(b, c, want, n, chars, got);
        if (r < 0)
                return r;
        b->wl.sized = true;
        b->wl.size_t0 = t0;
        b->wl.size_c0 = chars[0];
        b->wl.size_t1 = n == 2 ? t1 : t0;
        b->wl.size_c1 = n == 2 ? chars[1] : chars[0];
        if (ret_got)
                *ret_got = got[n - 1];
        return 0;
}

/* multi_turn: sessions of turns. Synthetic: num_prompts sessions of multi_turn_turns user
 * turns of multi_turn_input_len tokens each, all sharing one plan of turns (the text of each
 * is made when sent, so no two are alike). A file: num_prompts of its conversations in a
 * seeded order, their human turns as written, each asking for its reply's length in the
 * server's tokens (or multi_turn_output_len). */
static int plan_multi_turn(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        int r;
        if (!d) {
                int turns = dataset_multi_turn_turns(o), out = dataset_multi_turn_output(o);
                size_t n = (size_t)num_prompts(spec);
                if ((r = plan_alloc(b, (size_t)turns)) < 0)
                        return r;
                if (!(b->wl.psessions = calloc(n, sizeof(*b->wl.psessions))))
                        return -ENOMEM;
                b->wl.n_psessions = n;
                for (size_t i = 0; i < n; i++)
                        b->wl.psessions[i] = (struct plan_session){.first = 0, .turns = turns};
                for (int i = 0; i < turns; i++) {
                        b->wl.plan[i].tokens = o->multi_turn_input_len;
                        b->wl.plan[i].output = out;
                }
                if (!spec->calibrate)
                        return 0;
                int64_t got;
                if ((r = size_points(b, c, o->multi_turn_input_len, o->multi_turn_input_len, &got)) < 0)
                        return r;
                for (int i = 0; i < turns; i++)
                        b->wl.plan[i].chars = chars_for(b, o->multi_turn_input_len);
                /* the last turn carries the whole conversation */
                return check_context(b, c, (int64_t)turns * got + (int64_t)(turns - 1) * out, out);
        }
        _cleanup_free_ size_t *order = NULL;
        if ((r = dataset_order(d->n, spec->seed, &order)) < 0)
                return r;
        size_t n = MIN((size_t)num_prompts(spec), d->n), total = 0;
        size_t cap = o->multi_turn_turns > 0 ? (size_t)o->multi_turn_turns : SIZE_MAX;
        for (size_t k = 0; k < n; k++)
                total += MIN(d->v[order[k]].n_turns, cap);
        if ((r = plan_alloc(b, total)) < 0)
                return r;
        if (!(b->wl.psessions = calloc(n, sizeof(*b->wl.psessions))))
                return -ENOMEM;
        b->wl.n_psessions = n;
        b->wl.plan_texts = true;
        size_t at = 0, too_long = 0;
        for (size_t k = 0; k < n; k++) {
                const struct dataset_entry *e = &d->v[order[k]];
                size_t turns = MIN(e->n_turns, cap);
                b->wl.psessions[k] = (struct plan_session){.first = at, .turns = (int)turns};
                for (size_t t = 0; t < turns; t++) {
                        int64_t out = o->multi_turn_output_len;
                        if (out <= 0) {
                                if ((r = size_text(b, c, e->replies[t], &out)) < 0)
                                        return r;
                                if (r > 0) { /* a reply longer than the server takes */
                                        too_long++;
                                        out = estimate_tokens(e->replies[t]);
                                }
                        }
                        b->wl.plan[at++] = (struct plan_entry){.text = e->turns[t], .group = -1,
                                                            .output = (int)MIN(MAX(out, 1), DATASET_MAX_TOKENS),
                                                            .prompt_tokens = -1};
                }
        }
        if (json_object_set_new(work, "skipped", json_pack("{s:I}", "no_reply", (json_int_t)d->no_reply)) < 0)
                return -ENOMEM;
        if (too_long && json_object_set_new(work, "replies_too_long", json_integer((json_int_t)too_long)) < 0)
                return -ENOMEM;
        if (spec->calibrate &&
            !(b->wl.calibration = json_pack("{s:s, s:o, s:o, s:i}", "method", c->method, "template_tokens",
                                         c->template >= 0 ? json_integer(c->template) : json_null(), "context",
                                         c->context > 0 ? json_integer(c->context) : json_null(), "requests",
                                         c->requests)))
                return -ENOMEM;
        return 0;
}

/* trace: the first num_prompts lines (all by default) in order, line i sent at its
 * timestamp / trace_speed after the level's start; each prompt made of its hash_ids blocks
 * (trace_text), sized in the server's tokens at the block size and at the shortest piece. */
static int plan_trace(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        size_t n = o->num_prompts > 0 ? MIN((size_t)o->num_prompts, d->n) : d->n;
        int r = plan_alloc(b, n);
        if (r < 0)
                return r;
        b->wl.trace = true;
        b->wl.trace_lines = n;
        b->wl.plan_texts = false; /* its prompts are made, not the file's */
        int bs = o->trace_block_size;
        int64_t shortest = bs;
        size_t blocks = 0;
        for (size_t i = 0; i < n; i++) {
                const struct dataset_entry *e = &d->v[i];
                b->wl.plan[i] = (struct plan_entry){.tokens = e->input_length, .group = -1, .output = e->output_tokens,
                                                 .prompt_tokens = -1, .trace = e};
                /* the pieces trace_text makes: whole blocks, a cut one, the rest */
                int64_t covered = MIN((int64_t)e->n_hash * bs, (int64_t)e->input_length);
                int64_t last = e->n_hash ? covered - (int64_t)(MIN(e->n_hash, (size_t)((covered + bs - 1) / bs)) - 1) * bs
                                         : 0;
                if (last > 0)
                        shortest = MIN(shortest, last);
                if (e->input_length > covered)
                        shortest = MIN(shortest, (int64_t)e->input_length - covered);
                blocks += e->n_hash;
        }
        double span = d->v[n - 1].timestamp_ms - d->v[0].timestamp_ms;
        if (json_object_set_new(work, "trace",
                                json_pack("{s:I, s:f, s:i, s:f, s:I}", "lines", (json_int_t)n, "speed", o->trace_speed,
                                          "block_size", bs, "span_s", span / 1e3 / o->trace_speed, "hash_ids",
                                          (json_int_t)blocks)) < 0)
                return -ENOMEM;
        if (!spec->calibrate)
                return 0;
        if ((r = size_points(b, c, MAX(shortest, 1), bs, NULL)) < 0)
                return r;
        /* a line longer than the server's context fails as the server says; the plan says how
         * many there are */
        int64_t tmpl = c->template > 0 ? c->template : 0;
        size_t over = 0;
        for (size_t i = 0; i < n && c->context > 0; i++)
                over += (int64_t)d->v[i].input_length + tmpl + d->v[i].output_tokens > c->context;
        if (over && json_object_set_new(json_object_get(work, "trace"), "over_context", json_integer((json_int_t)over)) < 0)
                return -ENOMEM;
        return 0;
}

/* "workload": the dataset, how many prompts it gave, their lengths as planned, and the
 * arrivals. */
static int plan_describe(struct bench *b, json_t *work) {
        const struct bench_spec *spec = b->spec;
        int64_t imin = INT64_MAX, imax = 0, omin = INT64_MAX, omax = 0;
        double isum = 0, osum = 0;
        size_t ni = 0;
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                const struct plan_entry *e = &b->wl.plan[i];
                int64_t in = e->text ? e->prompt_tokens : (int64_t)e->tokens + (e->group >= 0 ? b->wl.prefix_tokens : 0);
                if (in >= 0) {
                        imin = MIN(imin, in);
                        imax = MAX(imax, in);
                        isum += (double)in;
                        ni++;
                }
                omin = MIN(omin, (int64_t)e->output);
                omax = MAX(omax, (int64_t)e->output);
                osum += e->output;
        }
        const char *arrivals = b->wl.trace ? "trace" : spec->rate <= 0 ? "closed_loop" : !spec->poisson ? "constant"
                               : spec->burstiness > 0 && spec->burstiness != 1 ? "gamma" : "poisson";
        int r = 0;
        size_t prompts = b->wl.psessions ? 0 : b->wl.n_plan; /* multi_turn: every turn of every session */
        for (size_t i = 0; b->wl.psessions && i < b->wl.n_psessions; i++)
                prompts += (size_t)b->wl.psessions[i].turns;
        if (json_object_set_new(work, "prompts", json_integer((json_int_t)prompts)) < 0 ||
            json_object_set_new(work, "arrivals", json_string(arrivals)) < 0 ||
            json_object_set_new(work, "seed", json_integer((json_int_t)spec->seed)) < 0 ||
            json_object_set_new(work, "output_tokens",
                                json_pack("{s:I, s:I, s:f}", "min", (json_int_t)omin, "max", (json_int_t)omax,
                                          "mean", osum / (double)MAX(b->wl.n_plan, 1))) < 0)
                r = -ENOMEM;
        if (r == 0 && b->wl.psessions) {
                int tmin = INT32_MAX, tmax = 0;
                double tsum = 0;
                for (size_t i = 0; i < b->wl.n_psessions; i++) {
                        tmin = MIN(tmin, b->wl.psessions[i].turns);
                        tmax = MAX(tmax, b->wl.psessions[i].turns);
                        tsum += b->wl.psessions[i].turns;
                }
                json_t *mt = json_pack("{s:I, s:{s:i, s:i, s:f}, s:f}", "sessions", (json_int_t)b->wl.n_psessions, "turns",
                                       "min", tmin, "max", tmax, "mean", tsum / (double)MAX(b->wl.n_psessions, 1),
                                       "think_time_ms", ms(spec->dataset.multi_turn_think_time));
                if (!mt || json_object_set_new(work, "multi_turn", mt) < 0)
                        r = -ENOMEM;
        }
        if (r == 0 && !strcmp(arrivals, "gamma") &&
            json_object_set_new(work, "burstiness", json_real(spec->burstiness)) < 0)
                r = -ENOMEM;
        if (r == 0 && ni > 0 &&
            json_object_set_new(work, "input_tokens",
                                json_pack("{s:I, s:I, s:f, s:s}", "min", (json_int_t)imin, "max", (json_int_t)imax,
                                          "mean", isum / (double)ni, "as",
                                          b->wl.plan_texts ? (spec->calibrate ? "measured" : "estimated")
                                          : spec->calibrate && (spec->input_tokens + b->wl.prefix_tokens > 0 || b->wl.sized) ? "asked, sized"
                                                                                                          : "asked, words")) < 0)
                r = -ENOMEM;
        return r;
}

/* The run's requests (b->wl.plan) from the prompt file or spec's dataset, sized against the
 * server where lengths matter (docs/bench.md "Workloads"), and "workload" for the levels. */
static int plan_build(struct bench *b) {
        const struct bench_spec *spec = b->spec;
        const struct bench_target *t = b->t;
        struct calib c = {.b = b, .method = t->profile && t->profile->tokenize_path ? "tokenize" : "usage",
                          .template = -1};
        enum dataset_kind kind = spec->dataset.kind;
        json_t *work = b->wl.workload = json_object();
        if (!work)
                return -ENOMEM;
        int r;
        if (t->prompts) {
                size_t n = 0;
                while (t->prompts[n])
                        n++;
                if ((r = plan_alloc(b, n)) < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        b->wl.plan[i].text = t->prompts[i];
                        b->wl.plan[i].output = spec->output_tokens;
                }
                b->wl.plan_texts = true;
                if (json_object_set_new(work, "dataset", json_string("prompt_file")) < 0)
                        return -ENOMEM;
                return plan_describe(b, work);
        }
        if (json_object_set_new(work, "dataset", json_string(dataset_kind_name(kind))) < 0)
                return -ENOMEM;
        bool file = dataset_has_file(&spec->dataset);
        if (file) {
                if (!spec->data || spec->data->kind != kind)
                        return -EINVAL;
                b->wl.plan_texts = true;
                if ((spec->dataset.path && json_object_set_new(work, "path", json_string(spec->dataset.path)) < 0) ||
                    json_object_set_new(work, "entries", json_integer((json_int_t)spec->data->entries)) < 0)
                        return -ENOMEM;
        }
        bool sized = spec->calibrate && kind != DATASET_CUSTOM && (kind != DATASET_RANDOM || spec->input_tokens > 0);
        if (sized)
                c.context = calib_context(&c);
        switch (kind) {
        case DATASET_SHAREGPT:
                r = plan_sharegpt(b, &c, work);
                break;
        case DATASET_CUSTOM:
                r = plan_custom(b);
                break;
        case DATASET_MULTI_TURN:
                r = plan_multi_turn(b, &c, work);
                break;
        case DATASET_TRACE:
                r = plan_trace(b, &c, work);
                break;
        case DATASET_PREFIX_REPETITION:
                r = plan_prefix(b, &c);
                if (r >= 0 && json_object_set_new(work, "prefix", json_pack("{s:i, s:i, s:i}", "tokens",
                                                                            spec->dataset.prefix_len, "groups",
                                                                            spec->dataset.num_prefixes, "suffix_tokens",
                                                                            spec->dataset.suffix_len)) < 0)
                        r = -ENOMEM;
                break;
        default:
                r = plan_random(b, &c);
                if (r >= 0 && spec->dataset.range_ratio > 0 &&
                    json_object_set_new(work, "range_ratio", json_real(spec->dataset.range_ratio)) < 0)
                        r = -ENOMEM;
                break;
        }
        if (r < 0)
                return r;
        /* A workload sized by the server's /tokenize has its output counted the same way */
        if (c.requests > 0)
                b->cnt.tokenize = strcmp(c.method, "tokenize") == 0;
        return plan_describe(b, work);
}

/* ---- the output counted by the server's tokenizer ------------------------------------- */

static void counted_clear(struct bench *b) {
        for (size_t i = 0; i < b->cnt.n_counted; i++)
                free(b->cnt.counted[i].text);
        free(b->cnt.counted);
        b->cnt.counted = NULL;
        b->cnt.n_counted = 0;
}

/* The level's deferred requests, each counted by the server's /tokenize of its streamed
 * text (as the calibration counts a prompt: no template, no special tokens), then added to
 * the level. A count that fails leaves that request's chunks as its count. */
static int count_deferred(struct bench *b) {
        struct calib c = {.b = b, .method = "tokenize", .template = -1};
        int r = 0;
        for (size_t i = 0; r >= 0 && i < b->cnt.n_counted; i++) {
                struct counted *d = &b->cnt.counted[i];
                int64_t n = 0;
                int rc = b->cnt.tokenize ? calib_tokenize(&c, d->text, &n) : -ENOENT;
                if (rc == -ECANCELED || rc == -EINTR || rc == -ENOMEM) {
                        r = rc;
                        break;
                }
                if (rc < 0)
                        b->cnt.tokenize = false; /* no count there after all: chunks from now on */
                d->rec.counted_tokens = rc == 0 && n > 0 ? n : 0;
                if ((r = bench_level_add(&b->lv, &d->rec)) >= 0)
                        r = add_sample(b, &d->rec, d->index, d->seq);
        }
        counted_clear(b);
        return r;
}

/* ---- repeats: each level N times, one entry of medians -------------------------------- */

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *x, size_t n) {
        qsort(x, n, sizeof(*x), cmp_double);
        return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Counters add up over the repeats (so the failure gate sees every failure); the errors
 * object adds up per reason; the rest that is a number is the median. */
static bool summed(const char *key) {
        static const enum metric sums[] = {METRIC_REQUESTS, METRIC_COMPLETED,     METRIC_FAILED,
                                           METRIC_ABORTED,  METRIC_RESENT,        METRIC_EVENTS_AFTER_DONE,
                                           METRIC_OUTPUT_TOKENS, METRIC_PROMPT_TOKENS, METRIC_CHUNKS,
                                           METRIC_USAGE_TOKENIZED, METRIC_USAGE_TOKENS, METRIC_USAGE_COUNTED,
                                           METRIC_USAGE_DISAGREE, METRIC_USAGE_OVER_MAX, METRIC_OUTPUTS_JUDGED,
                                           METRIC_OUTPUTS_FLAGGED};
        for (size_t i = 0; i < ELEMENTSOF(sums); i++)
                if (strcmp(key, metric_key(sums[i])) == 0)
                        return true;
        return strcmp(key, metric_stat_key(METRIC_STAT_COUNT)) == 0;
}

/* The median (or sum) of each number of an object over n runs' objects of the same shape.
 * *spread, when not NULL, gets [min, max] of each real under its path. */
static int combine_object(json_t *out, json_t *const *objs, size_t n, const char *prefix, json_t *spread) {
        const char *k;
        json_t *v;
        double *x = calloc(n, sizeof(double));
        if (!x)
                return -ENOMEM;
        int r = 0;
        json_object_foreach(out, k, v) {
                if (json_is_object(v) && strcmp(k, metric_key(METRIC_ERRORS)) != 0 &&
                    strcmp(k, metric_key(METRIC_PROMPT_CALIBRATION)) != 0 && strcmp(k, metric_key(METRIC_WORKLOAD)) != 0 &&
                    strcmp(k, metric_key(METRIC_EVAL_UNDER_LOAD)) != 0) {
                        _cleanup_free_ json_t **sub = calloc(n, sizeof(*sub));
                        _cleanup_free_ char *path = strdup_printf("%s%s.", prefix, k);
                        bool all = true;
                        for (size_t i = 0; sub && i < n; i++)
                                all &= json_is_object(sub[i] = json_object_get(objs[i], k));
                        if (!path || !sub) {
                                r = -ENOMEM;
                                break;
                        }
                        if (all && (r = combine_object(v, sub, n, path, spread)) < 0)
                                break;
                        continue;
                }
                if (!json_is_number(v) || (!*prefix && (strcmp(k, metric_key(METRIC_CONCURRENCY)) == 0 ||
                                                        strcmp(k, metric_key(METRIC_RATE)) == 0)))
                        continue;
                size_t m = 0;
                for (size_t i = 0; i < n; i++) {
                        json_t *e = json_object_get(objs[i], k);
                        if (json_is_number(e))
                                x[m++] = json_number_value(e);
                }
                if (m == 0)
                        continue;
                if (summed(k) && json_is_integer(v)) {
                        double sum = 0;
                        for (size_t i = 0; i < m; i++)
                                sum += x[i];
                        json_integer_set(v, (json_int_t)sum);
                        continue;
                }
                double med = median(x, m);
                if (json_is_integer(v))
                        json_integer_set(v, (json_int_t)llround(med));
                else
                        json_real_set(v, med);
                if (spread && json_is_real(v) && m > 1) {
                        _cleanup_free_ char *path = strdup_printf("%s%s", prefix, k);
                        if (!path || json_object_set_new(spread, path, json_pack("[f, f]", x[0], x[m - 1])) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                }
        }
        free(x);
        return r;
}

/* One entry for n runs of a level: medians (counters summed), with "repeats": n and
 * "spread": {path: [min, max]}; errors add up, warnings and checks under load are all
 * kept (each check with the repeat it came from). */
static json_t *combine_repeats(json_t *const *runs, size_t n) {
        json_t *out = json_deep_copy(runs[0]);
        json_t *spread = json_object();
        if (!out || !spread)
                goto fail;
        if (combine_object(out, runs, n, "", spread) < 0)
                goto fail;
        json_t *errors = json_object_get(out, metric_key(METRIC_ERRORS));
        json_t *warnings = json_object_get(out, metric_key(METRIC_WARNINGS));
        json_t *checks = json_array();
        if (!checks)
                goto fail;
        json_object_set_new(out, metric_key(METRIC_CHECKS_UNDER_LOAD), checks);
        for (size_t i = 0; i < n; i++) {
                const char *k;
                json_t *v, *w;
                size_t j;
                if (i > 0) {
                        json_object_foreach(json_object_get(runs[i], metric_key(METRIC_ERRORS)), k, v) {
                                json_int_t had = json_integer_value(json_object_get(errors, k));
                                json_object_set_new(errors, k, json_integer(had + json_integer_value(v)));
                        }
                        json_array_foreach(json_object_get(runs[i], metric_key(METRIC_WARNINGS)), j, w) {
                                bool seen = false;
                                size_t q;
                                json_t *u;
                                json_array_foreach(warnings, q, u) seen |= json_equal(u, w);
                                if (!seen)
                                        json_array_append(warnings, w);
                        }
                        json_t *flagged = json_object_get(out, metric_key(METRIC_FLAGGED));
                        json_array_foreach(json_object_get(runs[i], metric_key(METRIC_FLAGGED)), j, w)
                                if (json_array_size(flagged) < BENCH_FLAGGED_KEPT)
                                        json_array_append(flagged, w);
                        json_t *eu = json_object_get(runs[i], metric_key(METRIC_EVAL_UNDER_LOAD));
                        if (eu && !json_object_get(out, metric_key(METRIC_EVAL_UNDER_LOAD)))
                                json_object_set(out, metric_key(METRIC_EVAL_UNDER_LOAD), eu);
                        json_t *fe = json_object_get(out, metric_key(METRIC_FIRST_ERROR));
                        json_t *fi = json_object_get(runs[i], metric_key(METRIC_FIRST_ERROR));
                        if (!fe && fi)
                                json_object_set(out, metric_key(METRIC_FIRST_ERROR), fi);
                }
                json_array_foreach(json_object_get(runs[i], metric_key(METRIC_CHECKS_UNDER_LOAD)), j, w) {
                        json_t *c = json_deep_copy(w);
                        if (!c || json_object_set_new(c, "repeat", json_integer((json_int_t)i + 1)) < 0 ||
                            json_array_append_new(checks, c) < 0)
                                goto fail;
                }
        }
        if (json_array_size(checks) == 0)
                json_object_del(out, metric_key(METRIC_CHECKS_UNDER_LOAD));
        if (json_object_set_new(out, metric_key(METRIC_REPEATS), json_integer((json_int_t)n)) < 0 ||
            json_object_set_new(out, metric_key(METRIC_SPREAD), spread) < 0)
                goto fail_out;
        return out;
fail:
        json_decref(spread);
fail_out:
        json_decref(out);
        return NULL;
}

/* A level spec->repeats times (each with its warm-up), appended as one entry. */
static int run_repeated(struct bench *b, int concurrency, double rate, json_t *levels) {
        int n = b->spec->repeats > 1 ? b->spec->repeats : 1;
        if (n == 1)
                return run_level(b, concurrency, rate, levels);
        _cleanup_json_ json_t *runs = json_array();
        if (!runs)
                return -ENOMEM;
        for (int i = 0; i < n && !b->stopped; i++) {
                int r = run_level(b, concurrency, rate, runs);
                if (r < 0)
                        return r;
        }
        n = (int)json_array_size(runs); /* fewer when one stopped early */
        _cleanup_free_ json_t **one = calloc((size_t)n, sizeof(*one));
        if (!one)
                return -ENOMEM;
        for (int i = 0; i < n; i++)
                one[i] = json_array_get(runs, (size_t)i);
        json_t *c = combine_repeats(one, (size_t)n);
        if (!c || json_array_append_new(levels, c) < 0)
                return -ENOMEM;
        return 0;
}

/* ---- the SLA search: the highest load that still meets the objective's constraints ---- */

static int sla_search(struct bench *b, json_t *levels) {
        const struct bench_spec *spec = b->spec;
        struct objective o;
        objective_parse(spec->objective, &o);
        if (o.n_limits == 0 || o.bad_limits)
                return 0;
        bool by_rate = spec->rate > 0;
        /* what the levels measured: the highest that met the constraints, the lowest above it
         * that did not */
        double lo = 0, hi = by_rate ? (double)spec->search_max : (double)spec->search_max + 1;
        int cap = 0;
        size_t i;
        json_t *e;
        json_array_foreach(levels, i, e) {
                double x = by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                   : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                cap = MAX(cap, (int)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))));
                if (objective_meets(&o, e) && json_integer_value(json_object_get(e, metric_key(METRIC_COMPLETED))) > 0)
                        lo = MAX(lo, x);
        }
        json_array_foreach(levels, i, e) {
                double x = by_rate ? json_number_value(json_object_get(e, metric_key(METRIC_RATE)))
                                   : (double)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                if (x > lo && !objective_meets(&o, e))
                        hi = MIN(hi, x);
        }
        bool top_known = by_rate ? hi < (double)spec->search_max : hi <= (double)spec->search_max;
        for (int round = 0; round < spec->search_rounds; round++) {
                /* the first round tries the top of the range: a server that meets the SLA
                 * there needs no bisection */
                double mid = !top_known && round == 0 ? (double)spec->search_max
                             : by_rate              ? (lo + hi) / 2
                                                    : floor((lo + hi) / 2);
                if (mid <= lo)
                        break;
                if (by_rate ? hi - lo < 0.01 * hi : mid <= lo)
                        break;
                size_t before = json_array_size(levels);
                int r = run_repeated(b, by_rate ? cap : (int)mid, by_rate ? mid : 0, levels);
                if (r < 0)
                        return r;
                json_t *got = json_array_get(levels, before);
                if (!got || json_object_set_new(got, metric_key(METRIC_SEARCH), json_true()) < 0)
                        return -ENOMEM;
                if (b->stopped)
                        return 0; /* the level is in levels, with its warning */
                if (objective_meets(&o, got) && json_integer_value(json_object_get(got, metric_key(METRIC_COMPLETED))) > 0)
                        lo = mid;
                else
                        hi = mid;
                if (lo >= (double)spec->search_max)
                        break;
        }
        return 0;
}

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
        if (!levels)
                goto out;
        if (ret_samples && !(b.samples.all = json_array()))
                goto out;
        const char *base = t->base_url;
        size_t blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        b.url = strdup_printf("%.*s%s", (int)blen, base, spec->chat ? "/v1/chat/completions" : "/v1/completions");
        if (!b.url)
                goto out;
        /* "Expect:" turns off the 100-continue round trip for large prompts. */
        static const char *const headers[] = {"Content-Type: application/json", "Accept: text/event-stream",
                                              "Expect:"};
        for (size_t i = 0; i < ELEMENTSOF(headers); i++)
                if (slist_add(&b.headers, headers[i]) < 0)
                        goto out;
        if ((r = random_hex(b.run_id, (sizeof(b.run_id) - 1) / 2)) < 0)
                goto out;
        b.arr.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (b.arr.tfd < 0) {
                r = -errno;
                goto out;
        }
        r = loop_watch_fd(l, b.arr.tfd, EPOLLIN, on_timer, &b);
        if (r < 0) {
                close(b.arr.tfd);
                b.arr.tfd = -1;
                goto out;
        }
        /* the streams' sockets say when their data came (loop_rx_span) */
        loop_rx_stamps(l, true);
        if ((r = probes_init(&b)) >= 0)
                r = plan_build(&b);
        if (r >= 0 && !spec->no_server_metrics && (r = scrape_new(l, t->base_url, &b.th.scrape)) >= 0)
                scrape_set_kv_layout(b.th.scrape, t->kv_layout, t->kv_cells);
        /* the eval's questions go out at the first level of the highest concurrency */
        size_t top = 0;
        for (size_t i = 1; i < spec->n_concurrency; i++)
                if (spec->concurrency[i] > spec->concurrency[top])
                        top = i;
        for (size_t i = 0; i < spec->n_concurrency && r >= 0 && !b.stopped; i++) {
                b.chk.eval_level = i == top && !b.chk.eval_asked;
                r = run_repeated(&b, spec->concurrency[i], spec->rate, levels);
        }
        b.chk.eval_level = false;
        if (r >= 0 && !b.stopped && spec->search_max > 0 && spec->objective)
                r = sla_search(&b, levels);
        if (r >= 0 && b.samples.full) {
                /* Say so on every level: the samples are a prefix, the metrics are whole. */
                size_t i;
                json_t *lvj;
                json_array_foreach(levels, i, lvj)
                        json_array_append_new(json_object_get(lvj, metric_key(METRIC_WARNINGS)),
                                              json_sprintf("raw samples truncated at %d requests",
                                                           BENCH_MAX_SAMPLES));
        }
out:
        loop_rx_stamps(l, false);
        scrape_free(b.th.scrape);
        probes_reset(&b);
        free(b.chk.probes);
        for (int i = 1; i < b.th.n_loops; i++)
                loop_release(b.th.loops[i]);
        free(b.th.loops);
        if (b.th.wfd >= 0) {
                loop_unwatch_fd(l, b.th.wfd);
                close(b.th.wfd);
        }
        for (size_t i = 0; i < b.slots.n_pool; i++) {
                if (b.slots.pool[i]->busy)
                        loop_remove_transfer(l, b.slots.pool[i]->easy);
                breq_free(b.slots.pool[i]);
        }
        free(b.slots.pool);
        if (b.arr.tfd >= 0) {
                loop_unwatch_fd(l, b.arr.tfd);
                close(b.arr.tfd);
        }
        curl_slist_free_all(b.headers);
        free(b.url);
        json_decref(b.wl.calibration);
        json_decref(b.wl.workload);
        free(b.wl.plan);
        free(b.wl.psessions);
        sess_pool_free(&b);
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
