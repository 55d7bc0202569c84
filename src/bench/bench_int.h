/* bench_int.h -- PRIVATE: the bench's internals, shared by its own .c files only.
 *
 * Included by bench.c, bench_request.c, bench_level.c, bench_plan.c, bench_calib.c and
 * bench_repeat.c, and by nothing else: the bench's interface is bench.h (and bench_metrics.h,
 * scrape.h). Here are struct bench, the parts' own structs it holds, and the functions one
 * part calls in another (docs/hacking.md says which file holds what). */
#ifndef GAUNTLET_BENCH_INT_H
#define GAUNTLET_BENCH_INT_H

#include "bench/bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/sse.h"
#include "bench/dataset.h"
#include "bench/scrape.h"

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
/* Completed requests of a level whose count waits for its end (a cell's own counts, COUNT_NONE):
 * past it, a request is counted by its chunks as it completes. */
#define BENCH_MAX_DEFERRED (1 << 18)
#define FFFD "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

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
        _Atomic usec_t last_token; /* this level: when the last token (or finish) of any
                                    * request of this loop came (relaxed: read by the other
                                    * loops); pings and empty chunks do not count */
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

/* How output tokens are counted (count.h, docs/metrics.md "Output tokens"). */
struct bench_count {
        enum count_source rule; /* the sweep's (bench_target.count): COUNT_TOKENIZER or COUNT_BYTES,
                                 * each request counted as it completes; COUNT_NONE: this cell's
                                 * own counts, decided at each level's end (count_deferred) */
        bool tokenize;        /* the server's /tokenize is one of its own counts (calibration found it) */
        struct counted *counted; /* COUNT_NONE: this level's completed requests waiting for their count */
        size_t n_counted, n_texts; /* ... and those of them whose text is kept for /tokenize */
        int64_t fffd_tokens;  /* COUNT_TOKENIZER: what the tokenizer counts U+FFFD as (once) */
        bool decided;         /* COUNT_NONE: the level's decision, once made */
        struct count_decision decision;
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

static inline bool sessions(const struct bench *b) {
        return b->wl.psessions != NULL;
}

/* Which loop sends the level's request i, and the level's index of a loop's k-th request. */
static inline uint64_t level_index(const struct bench *b, uint64_t k) {
        return k * (uint64_t)b->th.sh->n + (uint64_t)b->th.shard;
}

static inline double ms(usec_t u) {
        return (double)u / 1e3;
}

/* A completed request of a bench that counts by /tokenize waits for its count until the
 * level ends (count_deferred): the count's requests never share the server with the load.
 * 1 when deferred, 0 when it is counted now by its chunks, -ENOMEM. */
struct counted {
        struct bench_record rec;
        char *text;           /* NULL: not kept (no /tokenize, or past BENCH_MAX_TOKENIZED) */
        uint64_t index, seq;
};

/* Sessions started at this level (multi_turn), else requests: what the level's total counts. */
static inline uint64_t started(const struct bench *b) {
        return sessions(b) ? b->sess.started : b->issued;
}

/* A calibration under way (bench_calib.c): how it counts, what it has learned of the server. */
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
        bool checked;         /* the server's /tokenize was checked against its usage, which said: */
        int64_t said_tokenize, said_usage;
};
/* The text of that check: the first counted at CALIB_CHECK_TOKENS tokens or more. */
#define CALIB_CHECK_TOKENS 16

/* bench_request.c (each function's comment is at its definition) */
void breq_free(struct breq *q);
int add_sample(struct bench *b, const struct bench_record *r, uint64_t index, uint64_t seq);
int slist_add(struct curl_slist **l, const char *s);
int start_request_for(struct bench *b, usec_t scheduled, struct session *sess);
int start_request(struct bench *b, usec_t scheduled);

/* bench_plan.c (each function's comment is at its definition) */
void session_turn_done(struct bench *b, struct breq *q);
int session_next_turn(struct bench *b);
int session_start(struct bench *b, usec_t scheduled);
void sess_pool_free(struct bench *b);
void session_cut(struct bench *b, struct session *se);
json_t *sessions_json(const struct bench *b);
void workload_level_start(struct bench *b);
int trace_text(const struct bench *b, const struct dataset_entry *d, uint64_t pi, struct buf *out);
int plan_build(struct bench *b);

/* bench_level.c (each function's comment is at its definition) */
usec_t level_last_token(const struct bench *b);
void level_stop(struct bench *b, const char *why);
int issue_due(struct bench *b);
void on_timer(struct loop *l, int fd, uint32_t revents, void *userdata);
void probes_reset(struct bench *b);
int probes_init(struct bench *b);
void loop_release(struct bench *w);
int run_level(struct bench *b, int concurrency, double rate, json_t *levels);

/* bench_calib.c (each function's comment is at its definition) */
int count_output(struct bench *b, struct breq *q);
int count_level_json(const struct bench *b, json_t *o);
int64_t calib_context(struct calib *c);
int calib_count(struct calib *c, const char *text, int64_t *ret);
int refuse(struct bench *b, const char *fmt, ...) _printf_(2, 3);
int calib_template(struct calib *c, int64_t *ret);
int calib_describe(struct bench *b, const struct calib *c);
int calibrate(struct bench *b, struct calib *c, const int64_t *want, size_t n, size_t *ret_chars,
              int64_t *ret_got);
int check_context(struct bench *b, struct calib *c, int64_t prompt, int64_t output);
void counted_clear(struct bench *b);
int count_deferred(struct bench *b);

/* bench_repeat.c (each function's comment is at its definition) */
int run_repeated(struct bench *b, int concurrency, double rate, json_t *levels);
int sla_search(struct bench *b, json_t *levels);

#endif
