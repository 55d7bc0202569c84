/* server.c -- HTTP routing, OpenAI request parsing, JSON and SSE responses, metrics. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "text/buf.h"
#include "gen.h"
#include "base/util.h"

/* Histogram bucket bounds, seconds (Prometheus "le"): time to first token, and between
 * tokens (a CPU model makes a token in a fraction of a millisecond). */
static const double ttft_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define N_TTFT (sizeof(ttft_bounds) / sizeof(ttft_bounds[0]))
static const double itl_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                    0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
#define N_ITL (sizeof(itl_bounds) / sizeof(itl_bounds[0]))

struct hist {
        uint64_t buckets[N_ITL]; /* per bucket here, cumulative at exposition */
        uint64_t count;
        double sum;
};

struct metrics {
        /* all under server.lock */
        uint64_t requests[2][4];       /* [chat?][outcome: 0 ok, 1 client error, 2 server error, 3 aborted] */
        uint64_t prompt_tokens;        /* prompt tokens of every generation that started */
        uint64_t generation_tokens;    /* tokens generated, counted as they are produced */
        struct hist ttft, itl;
        int running;                   /* generations holding a slot */
        int waiting;                   /* generations waiting for a slot */
        uint64_t kv_tokens;            /* KV cache positions the running generations hold */
};

struct server {
        struct server_opts o;
        struct MHD_Daemon *d;
        int port;
        _Atomic(const struct model *) model; /* NULL while loading */
        pthread_mutex_t lock;
        pthread_cond_t cond;        /* slot freed or shutting down */
        bool stopping;
        int active;
        struct metrics mx;
        atomic_uint completed;      /* generation responses fully sent */
        atomic_ullong next_id;
};

/* Per-request state, from the first call of the access handler to request completion. */
struct req {
        struct buf body;
        bool generation;  /* a completion/chat request (counted for --die-after-requests) */
        bool chat;
};

/* ---- small helpers ---------------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body,
                               size_t len) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, "Content-Type", ctype);
        enum MHD_Result ret = MHD_queue_response(c, status, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result respond_json(struct MHD_Connection *c, unsigned status, json_t *o) {
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!s)
                return respond(c, 500, "application/json", "{}", 2);
        enum MHD_Result ret = respond(c, status, "application/json", s, strlen(s));
        free(s);
        return ret;
}

static const char *error_type(unsigned status) {
        switch (status) {
        case 400:
        case 413:
                return "invalid_request_error";
        case 404:
                return "not_found_error";
        case 405:
                return "method_not_allowed";
        case 503:
                return "unavailable_error";
        default:
                return "internal_server_error";
        }
}

static json_t *error_json(unsigned status, const char *msg) {
        return json_pack("{s:{s:s, s:s, s:i}}", "error", "message", msg, "type", error_type(status), "code",
                         (int)status);
}

_printf_(3, 4) static enum MHD_Result respond_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...) {
        va_list ap;
        char *msg = NULL;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        enum MHD_Result r = respond_json(c, status, error_json(status, msg ? msg : "error"));
        free(msg);
        return r;
}

/* A JSON number; JSON has no NaN or infinity, so those go as the strings "NaN", "Infinity"
 * and "-Infinity" (what Python's json module writes, quoted so that the JSON stays valid). */
static json_t *json_num(double x) {
        if (isnan(x))
                return json_string("NaN");
        if (isinf(x))
                return json_string(x > 0 ? "Infinity" : "-Infinity");
        return json_real(x);
}

static void count_request(struct server *s, bool chat, unsigned status) {
        int outcome = status < 400 ? 0 : status < 500 ? 1 : 2;
        pthread_mutex_lock(&s->lock);
        s->mx.requests[chat][outcome]++;
        pthread_mutex_unlock(&s->lock);
}

/* ---- generation slots -------------------------------------------------------------------- */

/* Waits for a free slot. -ECANCELED when the server is stopping, -EAGAIN when the queue is
 * full (--max-queue). */
static int slot_acquire(struct server *s) {
        pthread_mutex_lock(&s->lock);
        if (s->o.max_queue > 0 && s->active >= s->o.max_active && s->mx.waiting >= s->o.max_queue) {
                pthread_mutex_unlock(&s->lock);
                return -EAGAIN;
        }
        s->mx.waiting++;
        while (!s->stopping && s->active >= s->o.max_active)
                pthread_cond_wait(&s->cond, &s->lock);
        s->mx.waiting--;
        if (s->stopping) {
                pthread_mutex_unlock(&s->lock);
                return -ECANCELED;
        }
        s->active++;
        s->mx.running = s->active;
        pthread_mutex_unlock(&s->lock);
        return 0;
}

/* --batch-fault: whether the next token of g is chosen with another generation running;
 * --fault-batch: whether it is sent while fault_batch or more run at once. */
static void batch_fault_arm(struct server *s, struct gen *g, bool *ret_batch_now) {
        if (!s->o.batch_fault && !s->o.fault_batch)
                return;
        pthread_mutex_lock(&s->lock);
        g->row_off = s->o.batch_fault && s->active > 1;
        *ret_batch_now = s->o.fault_batch > 0 && s->active >= s->o.fault_batch;
        pthread_mutex_unlock(&s->lock);
}

static void slot_release(struct server *s) {
        pthread_mutex_lock(&s->lock);
        s->active--;
        s->mx.running = s->active;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
}

/* Blocks until the server stops (the stall faults). */
static void wait_for_stop(struct server *s) {
        pthread_mutex_lock(&s->lock);
        while (!s->stopping)
                pthread_cond_wait(&s->cond, &s->lock);
        pthread_mutex_unlock(&s->lock);
}

static bool stopping(struct server *s) {
        pthread_mutex_lock(&s->lock);
        bool r = s->stopping;
        pthread_mutex_unlock(&s->lock);
        return r;
}

static void hist_add(struct hist *h, const double *bounds, size_t n, double t) {
        h->count++;
        h->sum += t;
        for (size_t i = 0; i < n; i++)
                if (t <= bounds[i]) {
                        h->buckets[i]++;
                        break;
                }
}

static void record_step(struct server *s, struct gen *g, const struct gen_step *st) {
        pthread_mutex_lock(&s->lock);
        if (st->token >= 0) {
                s->mx.generation_tokens++;
                if (g->n_generated == 1)
                        hist_add(&s->mx.ttft, ttft_bounds, N_TTFT, (double)(g->t_first - g->t_start) / 1e6);
                else
                        hist_add(&s->mx.itl, itl_bounds, N_ITL, (double)g->itl / 1e6);
        }
        /* the cache positions this generation holds now */
        s->mx.kv_tokens += (uint64_t)(g->ctx->pos - g->kv_counted);
        g->kv_counted = g->ctx->pos;
        pthread_mutex_unlock(&s->lock);
        if (s->o.token_delay && st->token >= 0) {
                /* --token-delay: an honest slower server, every token pays it */
                struct timespec ts = {.tv_sec = (time_t)(s->o.token_delay / USEC_PER_SEC),
                                      .tv_nsec = (long)(s->o.token_delay % USEC_PER_SEC) * 1000};
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
}

/* Ends a generation: its cache positions leave the KV usage. */
static void gen_release(struct server *s, struct gen *g) {
        if (!g)
                return;
        pthread_mutex_lock(&s->lock);
        s->mx.kv_tokens -= MIN((uint64_t)g->kv_counted, s->mx.kv_tokens);
        pthread_mutex_unlock(&s->lock);
        gen_free(g);
}

/* ---- request parsing ------------------------------------------------------------------- */

struct request {
        bool chat, stream, include_usage, logprobs;
        bool wrong;             /* --wrong-answers picked this prompt; wrong_done once changed */
        bool wrong_done;
        bool batch_now;         /* --fault-batch: this step was taken with the batch at N or more */
        int digit_run;          /* digits in a row at the end of the text sent so far */
        int top_logprobs;
        struct gen_params gp;
        struct tok_ids prompt;
        char *stops[GEN_MAX_STOP];
};

static void request_release(struct request *q) {
        tok_ids_release(&q->prompt);
        for (int i = 0; i < GEN_MAX_STOP; i++)
                free(q->stops[i]);
}

/* Text of a message's content: a string, or an array of {"type":"text","text":...} parts. */
static int content_text(json_t *content, struct buf *out) {
        if (!content || json_is_null(content))
                return 0;
        if (json_is_string(content))
                return buf_append(out, json_string_value(content), json_string_length(content));
        if (!json_is_array(content))
                return -EINVAL;
        size_t i;
        json_t *part;
        json_array_foreach(content, i, part) {
                json_t *t = json_object_get(part, "text");
                if (!json_is_string(t))
                        return -EINVAL;
                int r = buf_append(out, json_string_value(t), json_string_length(t));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Fills q from the JSON body; on a client error returns -EINVAL with *msg set. */
/* --wrong-answers: whether this prompt is one of the N-th picked by the FNV-1a 64 hash of
 * its text (the last user message of a chat). Deterministic per prompt, so a streamed and
 * a non-streamed request get the same answer, and the smoke suite's 17 * 19 (hash 2 mod 3)
 * is not picked with N = 3. */
static void fault_pick(const struct server *s, struct request *q, const char *text, size_t len) {
        if (s->o.wrong_answers)
                q->wrong = fnv1a(FNV_SEED, text, len) % s->o.wrong_answers == 0;
}

/* The first digit of a picked prompt's answer becomes the next one (9 becomes 0). Only
 * the text the client sees changes: the model goes on from the token it chose.
 * --fault-batch: while the batch is at N or more, the second digit of every number becomes
 * the one below it (323 becomes 313, 0 becomes 9), the same way. */
static void fault_digit(struct request *q, char *p, size_t n) {
        for (size_t i = 0; q->wrong && !q->wrong_done && i < n; i++)
                if (p[i] >= '0' && p[i] <= '9') {
                        p[i] = (char)('0' + (p[i] - '0' + 1) % 10);
                        q->wrong_done = true;
                }
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9') {
                        q->digit_run = 0;
                        continue;
                }
                if (++q->digit_run == 2 && q->batch_now)
                        p[i] = (char)('0' + (p[i] - '0' + 9) % 10);
        }
}

/* Whether fault_digit may change text of this request now. */
static bool fault_digit_wanted(const struct request *q) {
        return (q->wrong && !q->wrong_done) || q->batch_now;
}

/* Renders o's "messages" (and chat_template_kwargs) as a chat prompt into prompt; counts
 * the user messages and keeps the last one's text. -EINVAL with *msg on a client error. */
static int render_messages(const struct model *m, json_t *o, struct tok_ids *prompt, int *ret_users,
                           struct buf *ret_last_user, char **msg) {
        json_t *msgs = json_object_get(o, "messages");
        int r;
        if (!json_is_array(msgs) || json_array_size(msgs) == 0)
                return (*msg = strdup("'messages' must be a non-empty array"), -EINVAL);
        bool thinking = false;
        json_t *kw = json_object_get(o, "chat_template_kwargs");
        if (json_is_object(kw)) {
                json_t *t = json_object_get(kw, "enable_thinking");
                if (!t)
                        t = json_object_get(kw, "thinking");
                if (t && !json_is_boolean(t))
                        return (*msg = strdup("'chat_template_kwargs.enable_thinking' must be a boolean"), -EINVAL);
                thinking = json_is_true(t);
        }
        size_t n = json_array_size(msgs);
        struct tok_msg *tm = calloc(n, sizeof(*tm));
        struct buf *texts = calloc(n, sizeof(*texts));
        r = tm && texts ? 0 : -ENOMEM;
        for (size_t i = 0; i < n && r == 0; i++) {
                json_t *mo = json_array_get(msgs, i);
                json_t *role = json_object_get(mo, "role");
                buf_init(&texts[i], SERVER_MAX_BODY);
                if (!json_is_string(role)) {
                        *msg = strdup_printf("message %zu has no 'role'", i);
                        r = -EINVAL;
                        break;
                }
                const char *rs = json_string_value(role);
                if (strcmp(rs, "system") && strcmp(rs, "developer") && strcmp(rs, "user") && strcmp(rs, "assistant")) {
                        *msg = strdup_printf("message %zu has unsupported role '%s'", i, rs);
                        r = -EINVAL;
                        break;
                }
                if (content_text(json_object_get(mo, "content"), &texts[i]) < 0) {
                        *msg = strdup_printf("message %zu has invalid 'content'", i);
                        r = -EINVAL;
                        break;
                }
                tm[i].role = rs;
                tm[i].content = buf_str(&texts[i]);
                if (strcmp(rs, "user") == 0) {
                        (*ret_users)++;
                        buf_reset(ret_last_user);
                        r = buf_append(ret_last_user, texts[i].data, texts[i].len);
                }
        }
        if (r == 0)
                r = tok_chat_encode(&m->vocab, tm, n, thinking, prompt);
        for (size_t i = 0; texts && i < n; i++)
                buf_release(&texts[i]);
        free(texts);
        free(tm);
        if (r == -EINVAL && !*msg)
                *msg = strdup("the conversation cannot be rendered");
        return r;
}

static int parse_request(struct server *s, const struct model *m, json_t *o, bool chat, struct request *q,
                         char **msg) {
        json_t *v;
        int r;
        *q = (struct request){.chat = chat};
        q->gp.chat = chat;
        q->gp.sample.temperature = 1.0f;
        q->gp.sample.top_p = 1.0f;
        tok_ids_init(&q->prompt, 0);
#define BAD(...) (*msg = strdup_printf(__VA_ARGS__), -EINVAL)
        v = json_object_get(o, "stream");
        if (v && !json_is_null(v)) {
                if (!json_is_boolean(v))
                        return BAD("'stream' must be a boolean");
                q->stream = json_is_true(v);
        }
        v = json_object_get(o, "stream_options");
        if (json_is_object(v))
                q->include_usage = json_is_true(json_object_get(v, "include_usage"));
        v = json_object_get(o, "max_completion_tokens");
        if (!v || json_is_null(v))
                v = json_object_get(o, "max_tokens");
        if (v && !json_is_null(v)) {
                if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000)
                        return BAD("'max_tokens' must be a positive integer");
                q->gp.max_tokens = (int)json_integer_value(v);
        }
        v = json_object_get(o, "min_tokens");
        if (v && !json_is_null(v)) {
                if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000)
                        return BAD("'min_tokens' must be a non-negative integer");
                q->gp.min_tokens = (int)json_integer_value(v);
        }
        v = json_object_get(o, "ignore_eos");
        if (v && !json_is_null(v)) {
                if (!json_is_boolean(v))
                        return BAD("'ignore_eos' must be a boolean");
                q->gp.ignore_eos = json_is_true(v);
        }
        v = json_object_get(o, "temperature");
        if (v && !json_is_null(v)) {
                if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 100)
                        return BAD("'temperature' must be a number between 0 and 100");
                q->gp.sample.temperature = (float)json_number_value(v);
        }
        v = json_object_get(o, "top_p");
        if (v && !json_is_null(v)) {
                if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1)
                        return BAD("'top_p' must be in (0, 1]");
                q->gp.sample.top_p = (float)json_number_value(v);
        }
        v = json_object_get(o, "seed");
        if (v && !json_is_null(v)) {
                if (!json_is_integer(v))
                        return BAD("'seed' must be an integer");
                q->gp.seed = (uint64_t)json_integer_value(v);
        } else
                q->gp.seed = now_wall_usec() ^ atomic_fetch_add(&s->next_id, 1);
        v = json_object_get(o, "n");
        if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) != 1))
                return BAD("only 'n': 1 is supported");
        v = json_object_get(o, "stop");
        if (json_is_string(v)) {
                q->stops[0] = strdup(json_string_value(v));
                if (!q->stops[0])
                        return -ENOMEM;
        } else if (json_is_array(v)) {
                if (json_array_size(v) > GEN_MAX_STOP)
                        return BAD("'stop' takes at most %d strings", GEN_MAX_STOP);
                for (size_t i = 0; i < json_array_size(v); i++) {
                        json_t *e = json_array_get(v, i);
                        if (!json_is_string(e))
                                return BAD("'stop' must be a string or an array of strings");
                        q->stops[i] = strdup(json_string_value(e));
                        if (!q->stops[i])
                                return -ENOMEM;
                }
        } else if (v && !json_is_null(v))
                return BAD("'stop' must be a string or an array of strings");
        for (int i = 0, j = 0; i < GEN_MAX_STOP; i++)
                if (q->stops[i] && q->stops[i][0])
                        q->gp.stop[j++] = q->stops[i];
        /* logprobs: chat takes a boolean and top_logprobs, completions an integer */
        v = json_object_get(o, "logprobs");
        if (chat) {
                if (v && !json_is_null(v)) {
                        if (!json_is_boolean(v))
                                return BAD("'logprobs' must be a boolean");
                        q->logprobs = json_is_true(v);
                }
                v = json_object_get(o, "top_logprobs");
                if (v && !json_is_null(v)) {
                        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                            json_integer_value(v) > GEN_MAX_TOP_LOGPROBS)
                                return BAD("'top_logprobs' must be an integer from 0 to %d", GEN_MAX_TOP_LOGPROBS);
                        q->top_logprobs = (int)json_integer_value(v);
                }
        } else if (v && !json_is_null(v)) {
                if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > GEN_MAX_TOP_LOGPROBS)
                        return BAD("'logprobs' must be an integer from 0 to %d", GEN_MAX_TOP_LOGPROBS);
                q->logprobs = true;
                q->top_logprobs = (int)json_integer_value(v);
        }
        q->gp.top_logprobs = q->top_logprobs;
        q->gp.fault_context = s->o.fault_context;
        q->gp.fault_token = tok_find_text(&m->vocab, "+");
        q->gp.fault_sampling = s->o.fault_sampling;

        if (chat) {
                _cleanup_buf_ struct buf last_user;
                int users = 0;
                buf_init(&last_user, SERVER_MAX_BODY);
                r = render_messages(m, o, &q->prompt, &users, &last_user, msg);
                if (r < 0)
                        return r;
                if (users > 0)
                        fault_pick(s, q, buf_str(&last_user), last_user.len);
                if (s->o.fault_turn > 0 && users >= s->o.fault_turn) {
                        /* --fault-turn: every position before the last user turn's <|user|> */
                        for (size_t i = q->prompt.n; i-- > 0;)
                                if (q->prompt.v[i] == m->vocab.user) {
                                        q->gp.kv_fault_before = (int)i;
                                        break;
                                }
                }
        } else {
                json_t *p = json_object_get(o, "prompt");
                if (json_is_array(p) && json_array_size(p) == 1)
                        p = json_array_get(p, 0);
                if (!json_is_string(p))
                        return BAD("'prompt' must be a string");
                fault_pick(s, q, json_string_value(p), json_string_length(p));
                /* completion prompts: <s> + the raw text, control tokens written in it parsed */
                if ((r = tok_ids_push(&q->prompt, m->vocab.bos)) < 0 ||
                    (r = tok_encode(&m->vocab, json_string_value(p), json_string_length(p), true, &q->prompt)) < 0)
                        return r;
        }
        if (q->prompt.n >= (size_t)m->hp.n_ctx)
                return BAD("This model's maximum context length is %d tokens. However, your prompt has %zu tokens.",
                           m->hp.n_ctx, q->prompt.n);
#undef BAD
        return 0;
}

/* ---- response building ------------------------------------------------------------------ */

static json_t *bytes_json(const char *p, size_t n) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                json_array_append_new(a, json_integer((uint8_t)p[i]));
        return a;
}

/* The token text shown in logprobs: valid UTF-8 always (a lone byte token shows by name). */
static json_t *piece_json(const struct tok_vocab *v, int id, json_t **ret_bytes) {
        const char *p;
        size_t n;
        tok_piece(v, id, &p, &n);
        if (ret_bytes)
                *ret_bytes = bytes_json(p, n);
        json_t *s = json_stringn(p, n);
        return s ? s : json_string(v->text[id]);
}

/* One chat logprobs "content" entry for a step. */
static json_t *chat_logprob_entry(const struct tok_vocab *v, const struct gen_step *st) {
        json_t *bytes, *tok = piece_json(v, st->token, &bytes);
        json_t *top = json_array();
        for (int i = 0; i < st->n_top; i++) {
                json_t *tb, *tt = piece_json(v, st->top_ids[i], &tb);
                json_array_append_new(top, json_pack("{s:o, s:o, s:o}", "token", tt, "logprob",
                                                     json_num(st->top_lps[i]), "bytes", tb));
        }
        return json_pack("{s:o, s:o, s:o, s:o}", "token", tok, "logprob", json_num(st->logprob), "bytes", bytes,
                         "top_logprobs", top);
}

/* Completion logprobs accumulate into {tokens, token_logprobs, top_logprobs, text_offset}. */
static void completion_logprob_add(json_t *lp, const struct tok_vocab *v, const struct gen_step *st,
                                   size_t text_offset) {
        json_array_append_new(json_object_get(lp, "tokens"), piece_json(v, st->token, NULL));
        json_array_append_new(json_object_get(lp, "token_logprobs"), json_num(st->logprob));
        json_t *top = json_object();
        for (int i = 0; i < st->n_top; i++) {
                json_t *k = piece_json(v, st->top_ids[i], NULL);
                json_object_set_new(top, json_string_value(k), json_num(st->top_lps[i]));
                json_decref(k);
        }
        json_array_append_new(json_object_get(lp, "top_logprobs"), top);
        json_array_append_new(json_object_get(lp, "text_offset"), json_integer((json_int_t)text_offset));
}

static json_t *completion_logprobs_new(void) {
        return json_pack("{s:[], s:[], s:[], s:[]}", "tokens", "token_logprobs", "top_logprobs", "text_offset");
}

static json_t *usage_json(const struct gen *g) {
        return json_pack("{s:i, s:i, s:i}", "prompt_tokens", (int)g->prompt.n, "completion_tokens", g->n_generated,
                         "total_tokens", (int)g->prompt.n + g->n_generated);
}

/* ---- non-streaming --------------------------------------------------------------------- */

static enum MHD_Result run_blocking(struct server *s, struct MHD_Connection *c, const struct model *m,
                                    struct request *q, struct gen *g, unsigned *ret_status) {
        const struct tok_vocab *v = &m->vocab;
        _cleanup_buf_ struct buf content, reasoning;
        json_t *logprobs = NULL;
        struct gen_step st;
        const char *finish = "length";
        int r;
        buf_init(&content, 0);
        buf_init(&reasoning, 0);
        if (q->logprobs)
                logprobs = q->chat ? json_pack("{s:[]}", "content") : completion_logprobs_new();
        for (;;) {
                if (stopping(s)) {
                        json_decref(logprobs);
                        *ret_status = 0;
                        return MHD_NO;
                }
                size_t offset = content.len;
                batch_fault_arm(s, g, &q->batch_now);
                r = gen_step(g, &st);
                if (r < 0) {
                        json_decref(logprobs);
                        *ret_status = 500;
                        return respond_error(c, 500, "generation failed: %s", strerror(-r));
                }
                record_step(s, g, &st);
                buf_append(&content, st.content, st.content_len);
                if (content.len >= offset + st.content_len)
                        fault_digit(q, content.data + offset, st.content_len);
                buf_append(&reasoning, st.reasoning, st.reasoning_len);
                if (logprobs && st.token >= 0) {
                        if (q->chat)
                                json_array_append_new(json_object_get(logprobs, "content"), chat_logprob_entry(v, &st));
                        else
                                completion_logprob_add(logprobs, v, &st, offset);
                }
                if (st.done) {
                        finish = st.finish_reason;
                        break;
                }
        }
        unsigned long long id = atomic_fetch_add(&s->next_id, 1);
        json_t *o;
        if (q->chat) {
                json_t *msg = json_pack("{s:s, s:s%, s:o}", "role", "assistant", "content", buf_str(&content),
                                        content.len, "reasoning_content",
                                        reasoning.len ? json_stringn(buf_str(&reasoning), reasoning.len) : json_null());
                o = json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:o, s:s}], s:o}", "id",
                              "chatcmpl-testbed", "object", "chat.completion", "created",
                              (json_int_t)(now_wall_usec() / USEC_PER_SEC), "model", m->name, "choices", "index", 0,
                              "message", msg, "logprobs", logprobs ? logprobs : json_null(), "finish_reason", finish,
                              "usage", usage_json(g));
        } else {
                o = json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:s%, s:o, s:s}], s:o}", "id", "cmpl-testbed", "object",
                              "text_completion", "created", (json_int_t)(now_wall_usec() / USEC_PER_SEC), "model",
                              m->name, "choices", "index", 0, "text", buf_str(&content), content.len, "logprobs",
                              logprobs ? logprobs : json_null(), "finish_reason", finish, "usage", usage_json(g));
        }
        if (o) {
                char idbuf[64];
                snprintf(idbuf, sizeof(idbuf), "%s-%llu", q->chat ? "chatcmpl" : "cmpl", id);
                json_object_set_new(o, "id", json_string(idbuf));
        }
        *ret_status = o ? 200 : 500;
        return respond_json(c, o ? 200 : 500, o ? o : error_json(500, "cannot build the response"));
}

/* ---- streaming ------------------------------------------------------------------------- */

struct stream {
        struct server *s;
        const struct model *m;
        struct request q;
        struct gen *g;
        struct buf out;         /* SSE bytes produced, not yet handed to MHD */
        int chunks;             /* token events produced */
        bool sent_role, sent_final, finished_all;
        char id[64];
        json_int_t created;
};

/* Appends one "data: JSON\n\n" event; with the malformed-SSE fault, events after the first
 * are cut in the middle of their JSON. */
static int sse_event(struct stream *st, json_t *o) {
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        if (st->s->o.malformed_sse && st->chunks > 0)
                n = n / 2;
        int r = buf_puts(&st->out, "data: ");
        if (r >= 0)
                r = buf_append(&st->out, s, n);
        if (r >= 0)
                r = buf_puts(&st->out, "\n\n");
        free(s);
        return r;
}

static json_t *chunk_new(struct stream *st) {
        return json_pack("{s:s, s:s, s:I, s:s}", "id", st->id, "object",
                         st->q.chat ? "chat.completion.chunk" : "text_completion", "created", st->created, "model",
                         st->m->name);
}

/* Produces SSE bytes for the next token (and the closing events when done). */
static int stream_produce(struct stream *st) {
        const struct tok_vocab *v = &st->m->vocab;
        struct gen_step gs;
        json_t *o, *choice;
        int r;
        if (st->q.chat && !st->sent_role) {
                st->sent_role = true;
                o = chunk_new(st);
                json_object_set_new(o, "choices",
                                    json_pack("[{s:i, s:{s:s, s:s}, s:n, s:n}]", "index", 0, "delta", "role",
                                              "assistant", "content", "", "logprobs", "finish_reason"));
                return sse_event(st, o);
        }
        batch_fault_arm(st->s, st->g, &st->q.batch_now);
        r = gen_step(st->g, &gs);
        if (r < 0)
                return r;
        record_step(st->s, st->g, &gs);
        _cleanup_free_ char *faulty = NULL;
        if ((fault_digit_wanted(&st->q) || st->s->o.fault_batch) && gs.content_len) {
                if (!(faulty = malloc(gs.content_len)))
                        return -ENOMEM;
                memcpy(faulty, gs.content, gs.content_len);
                fault_digit(&st->q, faulty, gs.content_len);
                gs.content = faulty;
        }
        if (gs.token >= 0 || gs.content_len || gs.reasoning_len) {
                o = chunk_new(st);
                json_t *lp = json_null();
                if (st->q.logprobs && gs.token >= 0) {
                        if (st->q.chat)
                                lp = json_pack("{s:[o]}", "content", chat_logprob_entry(v, &gs));
                        else {
                                json_decref(lp);
                                lp = completion_logprobs_new();
                                completion_logprob_add(lp, v, &gs, 0);
                        }
                }
                if (st->q.chat) {
                        json_t *delta = json_object();
                        if (gs.reasoning_len)
                                json_object_set_new(delta, "reasoning_content",
                                                    json_stringn(gs.reasoning, gs.reasoning_len));
                        if (gs.content_len || !gs.reasoning_len)
                                json_object_set_new(delta, "content", json_stringn(gs.content ? gs.content : "",
                                                                                   gs.content_len));
                        choice = json_pack("{s:i, s:o, s:o, s:n}", "index", 0, "delta", delta, "logprobs", lp,
                                           "finish_reason");
                } else {
                        choice = json_pack("{s:i, s:s%, s:o, s:n}", "index", 0, "text", gs.content ? gs.content : "",
                                           gs.content_len, "logprobs", lp, "finish_reason");
                }
                json_object_set_new(o, "choices", json_pack("[o]", choice));
                r = sse_event(st, o);
                st->chunks++;
                if (r < 0)
                        return r;
        }
        if (gs.done) {
                o = chunk_new(st);
                if (st->q.chat)
                        choice = json_pack("{s:i, s:{}, s:n, s:s}", "index", 0, "delta", "logprobs", "finish_reason",
                                           gs.finish_reason);
                else
                        choice = json_pack("{s:i, s:s, s:n, s:s}", "index", 0, "text", "", "logprobs", "finish_reason",
                                           gs.finish_reason);
                json_object_set_new(o, "choices", json_pack("[o]", choice));
                if ((r = sse_event(st, o)) < 0)
                        return r;
                if (st->q.include_usage) {
                        o = chunk_new(st);
                        json_object_set_new(o, "choices", json_array());
                        json_object_set_new(o, "usage", usage_json(st->g));
                        if ((r = sse_event(st, o)) < 0)
                                return r;
                }
                if ((r = buf_puts(&st->out, "data: [DONE]\n\n")) < 0)
                        return r;
                st->finished_all = true;
        }
        return 0;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *out, size_t max) {
        struct stream *st = cls;
        struct server *s = st->s;
        while (st->out.len == 0) {
                if (st->finished_all)
                        return MHD_CONTENT_READER_END_OF_STREAM;
                if (stopping(s))
                        return MHD_CONTENT_READER_END_WITH_ERROR;
                if (st->chunks >= SERVER_FAULT_CHUNKS) {
                        if (s->o.close_mid_stream)
                                return MHD_CONTENT_READER_END_WITH_ERROR; /* connection cut, no [DONE] */
                        if (s->o.stall_mid_stream) {
                                wait_for_stop(s);
                                return MHD_CONTENT_READER_END_WITH_ERROR;
                        }
                }
                if (stream_produce(st) < 0) {
                        /* a failure after the headers went out: an error event, then the end */
                        buf_puts(&st->out, "data: {\"error\":{\"message\":\"generation failed\","
                                           "\"type\":\"internal_server_error\",\"code\":500}}\n\n");
                        st->finished_all = true;
                }
        }
        size_t n = MIN(max, st->out.len);
        memcpy(out, st->out.data, n);
        buf_consume(&st->out, n);
        return (ssize_t)n;
}

static void stream_free(void *cls) {
        struct stream *st = cls;
        gen_release(st->s, st->g);
        request_release(&st->q);
        buf_release(&st->out);
        slot_release(st->s);
        free(st);
}

/* ---- routing --------------------------------------------------------------------------- */

static enum MHD_Result handle_generation(struct server *s, struct MHD_Connection *c, struct req *rq,
                                         const struct model *m) {
        json_error_t jerr;
        struct request q;
        char *msg = NULL;
        struct gen *g = NULL;
        unsigned status = 0;
        enum MHD_Result ret;
        int r;

        if (s->o.http_500) {
                count_request(s, rq->chat, 500);
                return respond_error(c, 500, "injected fault: internal server error (--http-500)");
        }
        json_t *o = json_loadb(buf_str(&rq->body), rq->body.len, 0, &jerr);
        if (!json_is_object(o)) {
                json_decref(o);
                count_request(s, rq->chat, 400);
                return respond_error(c, 400, "invalid JSON body: %s", o ? "not an object" : jerr.text);
        }
        r = parse_request(s, m, o, rq->chat, &q, &msg);
        json_decref(o);
        if (r < 0) {
                request_release(&q);
                count_request(s, rq->chat, r == -EINVAL ? 400 : 500);
                ret = respond_error(c, r == -EINVAL ? 400 : 500, "%s", msg ? msg : strerror(-r));
                free(msg);
                return ret;
        }
        if (s->o.close_mid_stream && !q.stream) {
                request_release(&q);
                return MHD_NO; /* no response at all: the connection is closed */
        }
        if (s->o.stall_mid_stream && !q.stream) {
                request_release(&q);
                wait_for_stop(s);
                return MHD_NO;
        }
        if ((r = slot_acquire(s)) < 0) {
                request_release(&q);
                if (r == -EAGAIN) {
                        count_request(s, rq->chat, 503);
                        return respond_error(c, 503, "injected fault: the queue is full (--max-queue %d)",
                                             s->o.max_queue);
                }
                return MHD_NO;
        }
        r = gen_new(m, &q.prompt, &q.gp, &g);
        if (r < 0) {
                slot_release(s);
                request_release(&q);
                count_request(s, rq->chat, 500);
                return respond_error(c, 500, "cannot start generation: %s", strerror(-r));
        }
        pthread_mutex_lock(&s->lock);
        s->mx.prompt_tokens += q.prompt.n;
        pthread_mutex_unlock(&s->lock);

        if (!q.stream) {
                ret = run_blocking(s, c, m, &q, g, &status);
                gen_release(s, g);
                slot_release(s);
                request_release(&q);
                if (status)
                        count_request(s, rq->chat, status);
                return ret;
        }
        struct stream *st = calloc(1, sizeof(*st));
        if (!st) {
                gen_release(s, g);
                slot_release(s);
                request_release(&q);
                return MHD_NO;
        }
        st->s = s;
        st->m = m;
        st->q = q; /* takes over the request's allocations */
        st->g = g;
        st->created = (json_int_t)(now_wall_usec() / USEC_PER_SEC);
        snprintf(st->id, sizeof(st->id), "%s-%llu", q.chat ? "chatcmpl" : "cmpl",
                 (unsigned long long)atomic_fetch_add(&s->next_id, 1));
        buf_init(&st->out, 0);
        struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, st,
                                                                      stream_free);
        if (!resp) {
                stream_free(st);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", "text/event-stream");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        ret = MHD_queue_response(c, 200, resp);
        MHD_destroy_response(resp);
        count_request(s, rq->chat, 200);
        return ret;
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static int put_label(struct buf *b, const char *v) {
        int r = 0;
        for (; *v && r >= 0; v++)
                r = *v == '\\' ? buf_puts(b, "\\\\") : *v == '"' ? buf_puts(b, "\\\"")
                    : *v == '\n' ? buf_puts(b, "\\n") : buf_append(b, v, 1);
        return r;
}

static void put_hist(struct buf *b, const char *name, const char *help, const char *lbl, const struct hist *h,
                     const double *bounds, size_t n) {
        buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
        uint64_t cum = 0;
        for (size_t i = 0; i < n; i++) {
                cum += h->buckets[i];
                buf_printf(b, "%s_bucket{%s,le=\"%g\"} %llu\n", name, lbl, bounds[i], (unsigned long long)cum);
        }
        buf_printf(b, "%s_bucket{%s,le=\"+Inf\"} %llu\n%s_sum{%s} %.6f\n%s_count{%s} %llu\n", name, lbl,
                   (unsigned long long)h->count, name, lbl, h->sum, name, lbl, (unsigned long long)h->count);
}

/* vLLM's series (docs/testbed.md "Metrics"), so a scraper that knows vLLM reads the testbed:
 * the KV cache in use is the running generations' cache positions over the capacity,
 * max_active contexts of n_ctx; there is no prefix cache, so its counters stay 0, and no
 * preemption. testbed:requests_total counts answers by endpoint and outcome. */
static enum MHD_Result handle_metrics(struct server *s, struct MHD_Connection *c, const struct model *m) {
        _cleanup_buf_ struct buf b, lb;
        struct metrics mx;
        buf_init(&b, 0);
        buf_init(&lb, 4096);
        buf_puts(&lb, "model_name=\"");
        put_label(&lb, m ? m->name : "");
        buf_puts(&lb, "\"");
        const char *lbl = buf_str(&lb);
        pthread_mutex_lock(&s->lock);
        mx = s->mx;
        pthread_mutex_unlock(&s->lock);
        double capacity = m ? (double)s->o.max_active * m->hp.n_ctx : 0;
        static const char *const outcomes[] = {"ok", "client_error", "server_error", "aborted"};
        buf_puts(&b, "# HELP testbed:requests_total Generation requests answered, by endpoint and outcome.\n"
                     "# TYPE testbed:requests_total counter\n");
        for (int chat = 0; chat < 2; chat++)
                for (int k = 0; k < 4; k++)
                        buf_printf(&b, "testbed:requests_total{endpoint=\"%s\",outcome=\"%s\"} %llu\n",
                                   chat ? "chat" : "completions", outcomes[k],
                                   (unsigned long long)mx.requests[chat][k]);
        buf_printf(&b,
                   "# HELP vllm:num_requests_running Generations holding a slot.\n"
                   "# TYPE vllm:num_requests_running gauge\n"
                   "vllm:num_requests_running{%s} %d\n"
                   "# HELP vllm:num_requests_waiting Generations waiting for a slot.\n"
                   "# TYPE vllm:num_requests_waiting gauge\n"
                   "vllm:num_requests_waiting{%s} %d\n"
                   "# HELP vllm:kv_cache_usage_perc KV cache positions in use over the capacity (1 = full).\n"
                   "# TYPE vllm:kv_cache_usage_perc gauge\n"
                   "vllm:kv_cache_usage_perc{%s} %.6f\n"
                   "# HELP vllm:prompt_tokens_total Prompt tokens of the generations started.\n"
                   "# TYPE vllm:prompt_tokens_total counter\n"
                   "vllm:prompt_tokens_total{%s} %llu\n"
                   "# HELP vllm:generation_tokens_total Tokens generated.\n"
                   "# TYPE vllm:generation_tokens_total counter\n"
                   "vllm:generation_tokens_total{%s} %llu\n"
                   "# HELP vllm:prefix_cache_queries_total Prompt tokens looked up in the prefix cache (none: no prefix cache).\n"
                   "# TYPE vllm:prefix_cache_queries_total counter\n"
                   "vllm:prefix_cache_queries_total{%s} 0\n"
                   "# HELP vllm:prefix_cache_hits_total Of those, tokens found (none: no prefix cache).\n"
                   "# TYPE vllm:prefix_cache_hits_total counter\n"
                   "vllm:prefix_cache_hits_total{%s} 0\n"
                   "# HELP vllm:num_preemptions_total Generations preempted (never: each holds its whole context).\n"
                   "# TYPE vllm:num_preemptions_total counter\n"
                   "vllm:num_preemptions_total{%s} 0\n",
                   lbl, mx.running, lbl, mx.waiting, lbl, capacity > 0 ? (double)mx.kv_tokens / capacity : 0.0, lbl,
                   (unsigned long long)mx.prompt_tokens, lbl, (unsigned long long)mx.generation_tokens, lbl, lbl, lbl);
        put_hist(&b, "vllm:time_to_first_token_seconds", "From request parsed to first token chosen.", lbl, &mx.ttft,
                 ttft_bounds, N_TTFT);
        put_hist(&b, "vllm:inter_token_latency_seconds", "Between consecutive tokens of a generation.", lbl, &mx.itl,
                 itl_bounds, N_ITL);
        if (b.truncated)
                return respond_error(c, 500, "metrics page too large");
        return respond(c, 200, "text/plain; version=0.0.4", buf_str(&b), b.len);
}

/* POST /tokenize: llama.cpp's {"content", "add_special"} and vLLM's {"prompt",
 * "add_special_tokens"} or {"messages"} (the chat prompt, as /v1/chat/completions renders
 * it). Text is encoded as chat content is (control-token strings stay text), so a
 * message's count here is what it costs in the chat prompt. add_special puts <s> first;
 * its default is llama.cpp's (no) for "content", vLLM's (yes) for "prompt". Answers
 * {"tokens", "count", "max_model_len"}. */
static enum MHD_Result handle_tokenize(struct MHD_Connection *c, struct req *rq, const struct model *m) {
        json_error_t jerr;
        _cleanup_free_ char *msg = NULL;
        struct tok_ids ids;
        int r;
        if (rq->body.truncated)
                return respond_error(c, 413, "request body larger than %zu bytes", SERVER_MAX_BODY);
        json_t *o = json_loadb(buf_str(&rq->body), rq->body.len, 0, &jerr);
        if (!json_is_object(o)) {
                json_decref(o);
                return respond_error(c, 400, "invalid JSON body: %s", o ? "not an object" : jerr.text);
        }
        tok_ids_init(&ids, 0);
        json_t *content = json_object_get(o, "content"), *prompt = json_object_get(o, "prompt");
        json_t *special = json_object_get(o, "add_special");
        if (!special)
                special = json_object_get(o, "add_special_tokens");
        if (special && !json_is_boolean(special)) {
                r = -EINVAL;
                msg = strdup("'add_special' must be a boolean");
        } else if (json_is_string(content) || json_is_string(prompt)) {
                json_t *t = json_is_string(content) ? content : prompt;
                bool bos = special ? json_is_true(special) : !json_is_string(content);
                r = bos ? tok_ids_push(&ids, m->vocab.bos) : 0;
                if (r == 0)
                        r = tok_encode(&m->vocab, json_string_value(t), json_string_length(t), false, &ids);
        } else if (json_object_get(o, "messages")) {
                _cleanup_buf_ struct buf last;
                int users = 0;
                buf_init(&last, SERVER_MAX_BODY);
                r = render_messages(m, o, &ids, &users, &last, &msg);
        } else {
                r = -EINVAL;
                msg = strdup("'content' (or 'prompt', or 'messages') is required");
        }
        json_decref(o);
        json_t *toks = r == 0 ? json_array() : NULL;
        for (size_t i = 0; toks && i < ids.n; i++)
                if (json_array_append_new(toks, json_integer(ids.v[i])) < 0) {
                        json_decref(toks);
                        toks = NULL;
                }
        size_t n = ids.n;
        tok_ids_release(&ids);
        if (r == -EINVAL)
                return respond_error(c, 400, "%s", msg ? msg : "bad request");
        if (r < 0 || !toks) {
                json_decref(toks);
                return respond_error(c, 500, "cannot tokenize: %s", strerror(r < 0 ? -r : ENOMEM));
        }
        return respond_json(c, 200,
                            json_pack("{s:o, s:I, s:i}", "tokens", toks, "count", (json_int_t)n, "max_model_len",
                                      m->hp.n_ctx));
}

/* GET /props: what llama.cpp's says of the context and the slots. */
static enum MHD_Result handle_props(struct server *s, struct MHD_Connection *c, const struct model *m) {
        return respond_json(c, 200,
                            json_pack("{s:{s:i, s:s}, s:i, s:s, s:s}", "default_generation_settings", "n_ctx",
                                      m->hp.n_ctx, "model", m->name, "total_slots", s->o.max_active, "model_alias",
                                      m->name, "build_info", "gauntlet-testbed"));
}

static enum MHD_Result handle_models(struct MHD_Connection *c, const struct model *m) {
        json_t *o = json_pack("{s:s, s:[{s:s, s:s, s:I, s:s, s:i}]}", "object", "list", "data", "id", m->name, "object",
                              "model", "created", (json_int_t)(now_wall_usec() / USEC_PER_SEC), "owned_by",
                              "gauntlet-testbed", "max_model_len", m->hp.n_ctx);
        return respond_json(c, 200, o);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
        struct server *s = cls;
        struct req *rq = *con_cls;
        if (!rq) {
                rq = calloc(1, sizeof(*rq));
                if (!rq)
                        return MHD_NO;
                buf_init(&rq->body, SERVER_MAX_BODY);
                rq->chat = strcmp(url, "/v1/chat/completions") == 0;
                rq->generation = rq->chat || strcmp(url, "/v1/completions") == 0;
                *con_cls = rq;
                return MHD_YES;
        }
        if (*upload_data_size) {
                /* past the cap the rest is read and dropped; the answer is 413 */
                buf_append(&rq->body, upload_data, *upload_data_size);
                *upload_data_size = 0;
                return MHD_YES;
        }
        const struct model *m = atomic_load(&s->model);
        bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
        if (strcmp(url, "/health") == 0) {
                if (!m)
                        return respond_json(c, 503, error_json(503, "Loading model"));
                return respond(c, 200, "application/json", "{\"status\":\"ok\"}", 15);
        }
        if (strcmp(url, "/metrics") == 0)
                return handle_metrics(s, c, m);
        bool tokenize = strcmp(url, "/tokenize") == 0, props = strcmp(url, "/props") == 0;
        if (strcmp(url, "/v1/models") != 0 && !rq->generation && !tokenize && !props)
                return respond_error(c, 404, "no route for %s %s", method, url);
        if (!m)
                return respond_json(c, 503, error_json(503, "Loading model"));
        if (strcmp(url, "/v1/models") == 0 || props) {
                if (!get)
                        return respond_error(c, 405, "%s needs GET", url);
                return props ? handle_props(s, c, m) : handle_models(c, m);
        }
        if (tokenize) {
                if (!post)
                        return respond_error(c, 405, "%s needs POST", url);
                return handle_tokenize(c, rq, m);
        }
        if (!post)
                return respond_error(c, 405, "%s needs POST", url);
        if (rq->body.truncated) {
                count_request(s, rq->chat, 413);
                return respond_error(c, 413, "request body larger than %zu bytes", SERVER_MAX_BODY);
        }
        return handle_generation(s, c, rq, m);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
        struct server *s = cls;
        struct req *rq = *con_cls;
        if (!rq)
                return;
        bool gen = rq->generation, chat = rq->chat;
        buf_release(&rq->body);
        free(rq);
        *con_cls = NULL;
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && gen) {
                pthread_mutex_lock(&s->lock);
                s->mx.requests[chat][3]++;
                pthread_mutex_unlock(&s->lock);
        }
        if (gen && s->o.die_after && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
                unsigned n = atomic_fetch_add(&s->completed, 1) + 1;
                if (n >= s->o.die_after && s->o.on_die)
                        s->o.on_die(n);
        }
}

/* ---- lifecycle ------------------------------------------------------------------------- */

static int bind_listen(const char *host, int port, int *ret_fd, int *ret_port, bool *ret_v6, char **ret_error) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
                        *ai = NULL;
        char portstr[16];
        snprintf(portstr, sizeof(portstr), "%d", port);
        int e = getaddrinfo(host, portstr, &hints, &ai);
        if (e) {
                *ret_error = strdup_printf("cannot resolve '%s': %s", host, gai_strerror(e));
                return -EADDRNOTAVAIL;
        }
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
                r = -errno;
                *ret_error = strdup_printf("cannot bind %s:%d: %s", host, port, strerror(errno));
                if (fd >= 0)
                        close(fd);
                freeaddrinfo(ai);
                return r;
        }
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        *ret_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        *ret_v6 = ai->ai_family == AF_INET6;
        freeaddrinfo(ai);
        *ret_fd = fd;
        return 0;
}

int server_start(const struct server_opts *o, struct server **ret, char **ret_error) {
        int fd = -1, r;
        bool v6 = false;
        struct server *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->o = *o;
        if (s->o.max_active < 1)
                s->o.max_active = 1;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
        r = bind_listen(o->host, o->port, &fd, &s->port, &v6, ret_error);
        if (r < 0) {
                free(s);
                return r;
        }
        unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC;
        if (v6)
                flags |= MHD_USE_IPv6;
        s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_CONNECTION_TIMEOUT,
                                (unsigned)0, MHD_OPTION_END);
        if (!s->d) {
                close(fd);
                *ret_error = strdup("cannot start the HTTP daemon");
                free(s);
                return -EIO;
        }
        *ret = s;
        return 0;
}

int server_port(const struct server *s) { return s->port; }

void server_set_model(struct server *s, const struct model *m) { atomic_store(&s->model, m); }

void server_stop(struct server *s) {
        if (!s)
                return;
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        MHD_stop_daemon(s->d);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        free(s);
}
