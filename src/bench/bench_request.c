/* bench_request.c -- the bench's requests and streams: a slot per request, its body and
 * headers, the SSE events, how it ended (classify), its record and sample. */
#include "bench/bench_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate/detect.h"
#include "io/openai.h"
#include "base/utf8.h"

void breq_free(struct breq *q) {
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

/* The server answered q: an event that carries a token, or a finish ([DONE] or a
 * finish_reason), came. Only such events say a server is answering (docs/metrics.md
 * "Failures decide"): an SSE comment (": ping"), an empty delta, a role-only or usage-only
 * chunk keeps neither a request nor its level alive. */
static void answered(struct breq *q) {
        atomic_store_explicit(&q->b->stop.last_token, q->now, memory_order_relaxed);
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
                answered(q);
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
        if (ev.token || ev.finish)
                answered(q);
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
         * own. It may read again in the same turn while more comes, or read data that came
         * after those times (loop_rx_fresh): such a chunk came later than any time the turn
         * holds, and takes the time now. A read in another socket's turn (libcurl moved this
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
        if (q->port > 0 && (unsigned long)q->port == loop_turn_port(l) && (first_of_read || loop_rx_fresh(l))) {
                t = loop_wake_time(l);
                if (loop_rx_span(l, &first, &last))
                        t = first_of_read ? first : last;
        }
        if (t <= q->rec.sent)
                t = now_usec();
        q->now = MAX(t, q->last_chunk);
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

int add_sample(struct bench *b, const struct bench_record *r, uint64_t index, uint64_t seq) {
        if (!b->samples.all)
                return 0;
        if (b->samples.base + json_array_size(b->samples.all) >= BENCH_MAX_SAMPLES) {
                b->samples.full = true;
                return 0;
        }
        int64_t out = r->counted_tokens > 0 ? r->counted_tokens : (int64_t)r->chunks; /* as the level's */
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
        } else if (q->port > 0 && (unsigned long)q->port == loop_turn_port(l) && loop_rx_fresh(l)) {
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
        /* A request that timed out while no token of any request came back since it was
         * sent (answered): the server has stopped answering, whatever else it sends. The
         * requests after it would each wait a whole request_timeout for nothing. (A warm-up
         * one counts then: it is the level's only measurement.) Under the failure gate
         * (stop_when_failed), any warm-up request that timed out counts too, so that the
         * gate sees the first timeout: a server that answers too slowly to end a request
         * (a token every few seconds) costs one request_timeout, not one per warm-up
         * request and then one more. */
        bool timed_out = !q->rec.ok && strcmp(q->rec.error, "timeout") == 0;
        bool hung = timed_out && level_last_token(b) < q->rec.sent;
        bool counted = !q->warmup || ((hung || (timed_out && b->t->stop_when_failed)) && !b->stopped);
        _cleanup_free_ char *detail = NULL;
        if (!q->rec.ok && counted && !b->lv.first_error[0])
                q->rec.detail = detail = failure_detail(q, result);
        if (counted) {
                if (!q->rec.ok)
                        atomic_fetch_add_explicit(&b->th.sh->failed, 1, memory_order_relaxed);
                int r = q->rec.ok && !q->warmup ? judge_output(b, q) : 0;
                if (r >= 0)
                        r = count_output(b, q);
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
                level_stop(b, "the server stopped answering: a request timed out with no token of any request since "
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
int slist_add(struct curl_slist **l, const char *s) {
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

int start_request_for(struct bench *b, usec_t scheduled, struct session *sess) {
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

int start_request(struct bench *b, usec_t scheduled) {
        return start_request_for(b, scheduled, NULL);
}
