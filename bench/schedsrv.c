/* schedsrv.c -- gauntlet-schedsrv: an SSE server that streams on an exact schedule and
 * reports what it really did, so a client's measured TTFT and ITL can be checked.
 *
 * One thread, epoll, one absolute CLOCK_MONOTONIC timerfd for the earliest due chunk and a
 * binary heap of streams by due time. Chunk i of a stream is due at
 *     t_request + ttft + i * itl
 * (an absolute schedule: lateness never accumulates), and the time of the write() that
 * really sent it is what /stats reports:
 *     ttft_us    first chunk written - request arrived
 *     itl_us     chunk i written - chunk i-1 written
 *     late_us    chunk written - chunk due
 *     rx_lag_us  request read - request arrived
 * A request "arrived" when the kernel took in its last segment: the socket's receive
 * timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME, taken back to CLOCK_MONOTONIC), not when this
 * process got round to reading it. So a process busy writing other streams does not shorten
 * the TTFT it reports: the wait for its read is part of the server's time, as it is in the
 * client's. Where the kernel gives no timestamp the read time stands in (counted in /stats
 * as stamps_read); --stamp read uses the read time always, as before.
 * Requests: POST /v1/chat/completions or /v1/completions, streamed as OpenAI chunks with
 * a role-only first chunk, max_tokens / tokens-per-chunk content chunks (the last with
 * finish_reason "length"), a usage chunk, then [DONE]. GET /stats, POST /reset, GET /health.
 * GET /requests lists what it did per stream (the first MAX_RECORDS since the last reset),
 * named by the request's X-Request-Id, so a client's raw samples can be matched one by one.
 * Faults for tests: --fail-every N answers every Nth request 500; --close-every N cuts every
 * Nth stream after --close-after chunks.
 * For workload tests: --log-requests FILE appends one JSON line per completion request,
 * {"n": N, "rid": ..., "t_us": T, "body": {the request as sent}}, and one per stream end,
 * {"n": N, "done_us": T} (CLOCK_MONOTONIC); --tag-content makes chunk i of request N say
 * " rNtI" instead of " tokI", so every answer is told apart.
 * --processes N forks N-1 more copies that accept on the same socket, for a load no one
 * core could write (measuring a client's capacity); each keeps its own records and
 * histograms in memory they all share, so /stats and /requests, whichever process
 * answers, describe them all (and POST /reset clears them all).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "text/buf.h"
#include "io/loop.h"
#include "base/hist.h"
#include "base/util.h"

#define MAX_REQUEST ((size_t)8 << 20)   /* request head + body; beyond: 413 and close */
#define MAX_PENDING ((size_t)4 << 20)   /* unsent output per connection; beyond: close */
#define MAX_RESPONSE ((size_t)64 << 20) /* GET /requests's answer at most */
#define MAX_RECORDS 16384               /* per-request records kept for GET /requests */
#define MAX_RID 63                      /* X-Request-Id bytes kept */

/* What the server did for one request. */
struct record {
        char rid[MAX_RID + 1];   /* X-Request-Id, "" when none (or not [A-Za-z0-9._:-]) */
        usec_t ttft;             /* first content chunk written - request arrived; 0: none */
        usec_t last;             /* last content chunk written - request arrived */
        usec_t rx_lag;           /* request read - request arrived */
        uint32_t chunks;         /* content chunks written */
        bool done;               /* the stream ended properly (not cut) */
};

/* What one process did since the last reset. */
struct stats {
        struct hist h_ttft, h_itl, h_late, h_rxlag; /* their counts: in the shared memory too */
        uint64_t stamps_kernel, stamps_read; /* requests' arrival: the kernel's time, the read's */
        uint64_t requests, connections, streams_done, chunks_written, short_writes, failed, closed;
        usec_t first_req, last_req;
        struct record records[MAX_RECORDS];
        size_t n_records;
        uint64_t records_dropped;
};

struct conn {
        int fd;
        struct buf in;           /* request bytes not yet handled */
        struct buf out;          /* bytes the socket did not take yet */
        /* the stream in progress */
        bool streaming;
        bool chat;
        uint64_t reqno;
        usec_t t_req;            /* request arrived (see the top) */
        usec_t rx_lag;           /* request read - request arrived */
        usec_t t_last;           /* previous chunk written */
        uint32_t sent;           /* content chunks written */
        uint32_t total;          /* content chunks to write */
        uint32_t close_after;    /* cut the connection after this many chunks; 0: never */
        long prompt_tokens;
        size_t heap_idx;         /* position in the heap while streaming */
        usec_t due;
        char rid[MAX_RID + 1];
        usec_t t_first;          /* first content chunk written */
};

static struct {
        usec_t ttft, itl;
        uint32_t chunks, tokens_per_chunk, events_per_write;
        uint64_t fail_every, close_every;
        int processes;
        uint32_t close_after;
        FILE *log;               /* --log-requests, or NULL */
        bool tag;                /* --tag-content */
        bool stamp_read;         /* --stamp read: a request arrives when it is read */
        int epfd, tfd, lfd;
        struct conn **heap;
        size_t n_heap, heap_alloc;
        struct stats *st;        /* this process's: one of all[] */
        struct stats *all;       /* every process's, in memory they share (MAP_SHARED before the
                                  * forks): /stats and /requests speak for all of them */
} S;

/* Files what c's stream did, at its end or when it is cut. */
static void record_stream(const struct conn *c, bool done) {
        if (S.st->n_records == MAX_RECORDS) {
                S.st->records_dropped++;
                return;
        }
        struct record *r = &S.st->records[S.st->n_records++];
        memcpy(r->rid, c->rid, sizeof(r->rid));
        r->ttft = c->sent ? c->t_first - c->t_req : 0;
        r->last = c->sent ? c->t_last - c->t_req : 0;
        r->rx_lag = c->rx_lag;
        r->chunks = c->sent;
        r->done = done;
}

/* ---- heap of streaming connections by due time ---------------------------------------- */

static void heap_swap(size_t a, size_t b) {
        struct conn *t = S.heap[a];
        S.heap[a] = S.heap[b];
        S.heap[b] = t;
        S.heap[a]->heap_idx = a;
        S.heap[b]->heap_idx = b;
}

static void heap_up(size_t i) {
        while (i > 0 && S.heap[(i - 1) / 2]->due > S.heap[i]->due) {
                heap_swap(i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void heap_down(size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < S.n_heap && S.heap[l]->due < S.heap[m]->due)
                        m = l;
                if (r < S.n_heap && S.heap[r]->due < S.heap[m]->due)
                        m = r;
                if (m == i)
                        return;
                heap_swap(i, m);
                i = m;
        }
}

static int heap_push(struct conn *c) {
        if (S.n_heap == S.heap_alloc) {
                size_t n = S.heap_alloc ? S.heap_alloc * 2 : 1024;
                struct conn **h = realloc(S.heap, n * sizeof(*h));
                if (!h)
                        return -ENOMEM;
                S.heap = h;
                S.heap_alloc = n;
        }
        c->heap_idx = S.n_heap;
        S.heap[S.n_heap++] = c;
        heap_up(c->heap_idx);
        return 0;
}

static void heap_remove(struct conn *c) {
        size_t i = c->heap_idx;
        S.n_heap--;
        if (i != S.n_heap) {
                S.heap[i] = S.heap[S.n_heap];
                S.heap[i]->heap_idx = i;
                heap_down(i);
                heap_up(i);
        }
}

static void arm_timer(void) {
        struct itimerspec its = {0};
        if (S.n_heap) {
                usec_t w = S.heap[0]->due;
                if (w == 0)
                        w = 1;
                its.it_value.tv_sec = (time_t)(w / USEC_PER_SEC);
                its.it_value.tv_nsec = (long)(w % USEC_PER_SEC) * 1000;
        }
        timerfd_settime(S.tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---- connections ---------------------------------------------------------------------- */

static void conn_close(struct conn *c) {
        if (c->streaming) {
                heap_remove(c);
                record_stream(c, false);
        }
        epoll_ctl(S.epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        buf_release(&c->in);
        buf_release(&c->out);
        free(c);
}

static void want_out(struct conn *c, bool on) {
        struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
        epoll_ctl(S.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes now, or queues behind what is pending. Returns -EPIPE when the peer is gone. */
static int conn_send(struct conn *c, const char *p, size_t n) {
        if (c->out.len == 0) {
                ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno != EAGAIN)
                                return -EPIPE;
                        k = 0;
                }
                if ((size_t)k == n)
                        return 0;
                S.st->short_writes++;
                p += k;
                n -= (size_t)k;
                want_out(c, true);
        }
        if (buf_append(&c->out, p, n) < 0)
                return -EPIPE;
        return 0;
}

static int send_chunked(struct conn *c, const struct buf *payload) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (buf_printf(&b, "%zx\r\n", payload->len) < 0 || buf_append(&b, payload->data, payload->len) < 0 ||
            buf_puts(&b, "\r\n") < 0)
                return -ENOMEM;
        return conn_send(c, b.data, b.len);
}

static int send_simple(struct conn *c, int status, const char *reason, const char *type, const char *body) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (buf_printf(&b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n%s", status, reason,
                       type, strlen(body), body) < 0)
                return -ENOMEM;
        return conn_send(c, b.data, b.len);
}

static void dist(struct buf *b, const char *name, const struct hist *h) {
        buf_printf(b,
                   "\"%s\":{\"count\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,"
                   "\"mean\":%.1f,\"min\":%llu,\"max\":%llu}",
                   name, (unsigned long long)h->count, (unsigned long long)hist_percentile(h, 50),
                   (unsigned long long)hist_percentile(h, 90), (unsigned long long)hist_percentile(h, 99),
                   (unsigned long long)hist_percentile(h, 99.9), hist_mean(h),
                   (unsigned long long)(h->count ? h->min : 0), (unsigned long long)h->max);
}

/* Every process's stats as one (the histograms merged into `into`'s own counters). */
static void stats_sum(struct stats *into) {
        for (int i = 0; i < S.processes; i++) {
                const struct stats *x = &S.all[i];
                hist_merge(&into->h_ttft, &x->h_ttft);
                hist_merge(&into->h_itl, &x->h_itl);
                hist_merge(&into->h_late, &x->h_late);
                hist_merge(&into->h_rxlag, &x->h_rxlag);
                into->stamps_kernel += x->stamps_kernel;
                into->stamps_read += x->stamps_read;
                into->requests += x->requests;
                into->connections += x->connections;
                into->streams_done += x->streams_done;
                into->chunks_written += x->chunks_written;
                into->short_writes += x->short_writes;
                into->failed += x->failed;
                into->closed += x->closed;
                if (x->first_req && (!into->first_req || x->first_req < into->first_req))
                        into->first_req = x->first_req;
                into->last_req = MAX(into->last_req, x->last_req);
        }
}

static int send_stats(struct conn *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        _cleanup_free_ struct stats *sum = calloc(1, sizeof(*sum));
        if (!sum || hist_init(&sum->h_ttft) < 0 || hist_init(&sum->h_itl) < 0 || hist_init(&sum->h_late) < 0 ||
            hist_init(&sum->h_rxlag) < 0) {
                if (sum) {
                        hist_release(&sum->h_ttft);
                        hist_release(&sum->h_itl);
                        hist_release(&sum->h_late);
                }
                return send_simple(c, 500, "Internal Server Error", "application/json", "{\"error\":\"memory\"}\n");
        }
        stats_sum(sum);
        struct stats *st = sum;
        double span = st->last_req > st->first_req ? (double)(st->last_req - st->first_req) / 1e6 : 0;
        buf_printf(&b,
                   "{\"requests\":%llu,\"connections\":%llu,\"streams_done\":%llu,\"chunks\":%llu,"
                   "\"failed\":%llu,\"closed\":%llu,\"short_writes\":%llu,\"request_span_s\":%.6f,"
                   "\"request_rate\":%.3f,\"ttft_us_sched\":%llu,\"itl_us_sched\":%llu,"
                   "\"stamps_kernel\":%llu,\"stamps_read\":%llu,",
                   (unsigned long long)st->requests, (unsigned long long)st->connections,
                   (unsigned long long)st->streams_done, (unsigned long long)st->chunks_written,
                   (unsigned long long)st->failed, (unsigned long long)st->closed,
                   (unsigned long long)st->short_writes, span, span > 0 ? (double)(st->requests - 1) / span : 0.0,
                   (unsigned long long)S.ttft, (unsigned long long)S.itl,
                   (unsigned long long)st->stamps_kernel, (unsigned long long)st->stamps_read);
        dist(&b, "ttft_us", &st->h_ttft);
        buf_puts(&b, ",");
        dist(&b, "itl_us", &st->h_itl);
        buf_puts(&b, ",");
        dist(&b, "late_us", &st->h_late);
        buf_puts(&b, ",");
        dist(&b, "rx_lag_us", &st->h_rxlag);
        buf_puts(&b, "}\n");
        hist_release(&st->h_ttft);
        hist_release(&st->h_itl);
        hist_release(&st->h_late);
        hist_release(&st->h_rxlag);
        return send_simple(c, 200, "OK", "application/json", buf_str(&b));
}

/* GET /requests: {"records":[{"id","ttft_us","last_us","rx_lag_us","chunks","done"}...],"dropped":N}, every
 * process's records */
static int send_records(struct conn *c) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, MAX_RESPONSE);
        int r = buf_puts(&b, "{\"records\":[");
        uint64_t dropped = 0;
        bool first = true;
        for (int k = 0; k < S.processes && r >= 0; k++) {
                const struct stats *st = &S.all[k];
                dropped += st->records_dropped;
                for (size_t i = 0; i < st->n_records && r >= 0; i++, first = false) {
                        const struct record *x = &st->records[i];
                        r = buf_printf(&b,
                                       "%s{\"id\":\"%s\",\"ttft_us\":%llu,\"last_us\":%llu,\"rx_lag_us\":%llu,"
                                       "\"chunks\":%u,\"done\":%s}",
                                       first ? "" : ",", x->rid, (unsigned long long)x->ttft,
                                       (unsigned long long)x->last, (unsigned long long)x->rx_lag, x->chunks,
                                       x->done ? "true" : "false");
                }
        }
        if (r >= 0)
                r = buf_printf(&b, "],\"dropped\":%llu}\n", (unsigned long long)dropped);
        if (r < 0)
                return send_simple(c, 500, "Internal Server Error", "application/json", "{\"error\":\"too large\"}\n");
        c->out.max = MAX_RESPONSE; /* this answer may be large; the client reads it at once */
        return send_simple(c, 200, "OK", "application/json", buf_str(&b));
}

/* Every process's stats (the others may be writing theirs: reset between runs). */
static void stats_reset(void) {
        for (int i = 0; i < S.processes; i++) {
                struct stats *st = &S.all[i];
                st->n_records = 0;
                st->records_dropped = 0;
                hist_reset(&st->h_ttft);
                hist_reset(&st->h_itl);
                hist_reset(&st->h_late);
                hist_reset(&st->h_rxlag);
                st->stamps_kernel = st->stamps_read = 0;
                st->requests = st->connections = st->streams_done = st->chunks_written = st->short_writes = 0;
                st->failed = st->closed = 0;
                st->first_req = st->last_req = 0;
        }
}

/* The integer after "key": in a JSON body, or def. Good enough for the bodies gauntlet sends. */
static long json_int_after(const char *body, size_t n, const char *key, long def) {
        const char *p = memmem(body, n, key, strlen(key));
        if (!p)
                return def;
        p += strlen(key);
        while (p < body + n && (*p == ' ' || *p == ':'))
                p++;
        if (p >= body + n || *p < '0' || *p > '9')
                return def;
        return strtol(p, NULL, 10);
}

static void append_event(struct conn *c, struct buf *b, uint32_t i, bool last) {
        if (S.tag)
                buf_printf(b,
                           c->chat ? "data: {\"id\":\"s%llu\",\"object\":\"chat.completion.chunk\",\"model\":\"sched\","
                                     "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" r%llut%u\"},\"finish_reason\":%s}]}\n\n"
                                   : "data: {\"id\":\"s%llu\",\"object\":\"text_completion\",\"model\":\"sched\","
                                     "\"choices\":[{\"index\":0,\"text\":\" r%llut%u\",\"finish_reason\":%s}]}\n\n",
                           (unsigned long long)c->reqno, (unsigned long long)c->reqno, i, last ? "\"length\"" : "null");
        else if (c->chat)
                buf_printf(b,
                           "data: {\"id\":\"s%llu\",\"object\":\"chat.completion.chunk\",\"model\":\"sched\","
                           "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%u\"},\"finish_reason\":%s}]}\n\n",
                           (unsigned long long)c->reqno, i, last ? "\"length\"" : "null");
        else
                buf_printf(b,
                           "data: {\"id\":\"s%llu\",\"object\":\"text_completion\",\"model\":\"sched\","
                           "\"choices\":[{\"index\":0,\"text\":\" tok%u\",\"finish_reason\":%s}]}\n\n",
                           (unsigned long long)c->reqno, i, last ? "\"length\"" : "null");
}

/* Writes the chunks of c that are due (at most events_per_write), recording when. Returns
 * -EPIPE when the connection must go. */
static int stream_step(struct conn *c, usec_t now) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        uint32_t k = 0;
        bool last = false;
        usec_t due = c->due;
        while (k < S.events_per_write && c->sent + k < c->total) {
                last = c->sent + k + 1 == c->total;
                append_event(c, &b, c->sent + k, last);
                k++;
                usec_t next = c->t_req + S.ttft + (usec_t)(c->sent + k) * S.itl;
                if (next > now)
                        break;
        }
        if (last) {
                buf_printf(&b,
                           "data: {\"id\":\"s%llu\",\"choices\":[],\"usage\":{\"prompt_tokens\":%ld,"
                           "\"completion_tokens\":%u,\"total_tokens\":%ld}}\n\ndata: [DONE]\n\n",
                           (unsigned long long)c->reqno, c->prompt_tokens, c->total * S.tokens_per_chunk,
                           c->prompt_tokens + (long)(c->total * S.tokens_per_chunk));
        }
        usec_t t = now_usec();
        if (send_chunked(c, &b) < 0)
                return -EPIPE;
        if (last && conn_send(c, "0\r\n\r\n", 5) < 0)
                return -EPIPE;
        hist_record(&S.st->h_late, t > due ? t - due : 0);
        if (c->sent == 0) {
                hist_record(&S.st->h_ttft, t - c->t_req);
                c->t_first = t;
        } else
                hist_record(&S.st->h_itl, t - c->t_last);
        /* Chunks written together after the first share its write time: ITL 0 between them. */
        for (uint32_t i = 1; i < k; i++)
                hist_record(&S.st->h_itl, 0);
        c->t_last = t;
        c->sent += k;
        S.st->chunks_written += k;
        if (c->close_after && c->sent >= c->close_after && !last) {
                S.st->closed++;
                return -EPIPE;
        }
        heap_remove(c);
        if (last) {
                c->streaming = false;
                S.st->streams_done++;
                record_stream(c, true);
                if (S.log) {
                        fprintf(S.log, "{\"n\":%llu,\"done_us\":%llu}\n", (unsigned long long)c->reqno,
                                (unsigned long long)t);
                        fflush(S.log);
                }
                return 0;
        }
        c->due = c->t_req + S.ttft + (usec_t)c->sent * S.itl;
        return heap_push(c) < 0 ? -EPIPE : 0;
}

/* now: the request was read; arrived: it came (now where the kernel said nothing) */
static int handle_request(struct conn *c, const char *method, const char *path, const char *rid,
                          const char *body, size_t blen, usec_t arrived, usec_t now) {
        if (strcmp(method, "GET") == 0 && strcmp(path, "/stats") == 0)
                return send_stats(c);
        if (strcmp(method, "GET") == 0 && strcmp(path, "/requests") == 0)
                return send_records(c);
        if (strcmp(path, "/reset") == 0) {
                stats_reset();
                return send_simple(c, 200, "OK", "application/json", "{}\n");
        }
        if (strcmp(path, "/health") == 0)
                return send_simple(c, 200, "OK", "application/json", "{\"status\":\"ok\"}\n");
        bool chat = strcmp(path, "/v1/chat/completions") == 0;
        if (strcmp(method, "POST") != 0 || (!chat && strcmp(path, "/v1/completions") != 0))
                return send_simple(c, 404, "Not Found", "application/json", "{\"error\":\"not found\"}\n");

        uint64_t n = ++S.st->requests;
        if (arrived && arrived <= now) {
                S.st->stamps_kernel++;
        } else {
                arrived = now;
                S.st->stamps_read++;
        }
        if (S.log) {
                /* the body as it came: a gauntlet request is one line of JSON */
                bool json = blen > 0 && body[0] == '{' && !memchr(body, '\n', blen);
                fprintf(S.log, "{\"n\":%llu,\"rid\":\"%s\",\"t_us\":%llu,\"body\":%.*s}\n", (unsigned long long)n,
                        rid, (unsigned long long)arrived, json ? (int)blen : 4, json ? body : "null");
                fflush(S.log);
        }
        if (!S.st->first_req)
                S.st->first_req = arrived;
        S.st->last_req = arrived;
        hist_record(&S.st->h_rxlag, now - arrived);
        if (S.fail_every && n % S.fail_every == 0) {
                S.st->failed++;
                return send_simple(c, 500, "Internal Server Error", "application/json",
                                   "{\"error\":{\"message\":\"scripted failure\",\"code\":500}}\n");
        }
        long max_tokens = json_int_after(body, blen, "\"max_tokens\"", (long)S.chunks * S.tokens_per_chunk);
        long total = (max_tokens + (long)S.tokens_per_chunk - 1) / (long)S.tokens_per_chunk;
        if (total < 1)
                total = 1;
        long words = 1;
        for (size_t i = 0; i < blen; i++)
                words += body[i] == ' ';
        *c = (struct conn){.fd = c->fd, .in = c->in, .out = c->out, .streaming = true, .chat = chat, .reqno = n,
                           .t_req = arrived, .rx_lag = now - arrived, .total = (uint32_t)total,
                           .prompt_tokens = words};
        memcpy(c->rid, rid, sizeof(c->rid));
        if (S.close_every && n % S.close_every == 0)
                c->close_after = S.close_after;
        const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n";
        int r = conn_send(c, head, strlen(head));
        if (r < 0)
                return r;
        /* A role-only chunk first, as vLLM and SGLang send: not a token. */
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (chat)
                buf_printf(&b, "data: {\"id\":\"s%llu\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                               "\"content\":\"\"},\"finish_reason\":null}]}\n\n",
                           (unsigned long long)n);
        else
                buf_printf(&b, ": stream %llu\n\n", (unsigned long long)n);
        r = send_chunked(c, &b);
        if (r < 0)
                return r;
        c->due = arrived + S.ttft;
        return heap_push(c) < 0 ? -ENOMEM : 0;
}

/* The X-Request-Id value at p (header line ending before end) into rid; left "" when it is
 * longer than MAX_RID or holds anything but [A-Za-z0-9._:-] (it goes into JSON as is). */
static void take_rid(const char *p, const char *end, char *rid) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        size_t n = strcspn(p, "\r\n");
        if (p + n > end || n > MAX_RID)
                return;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)p[i]) && !strchr("._:-", p[i]))
                        return;
        memcpy(rid, p, n);
        rid[n] = '\0';
}

/* Handles every complete request in c->in (one at a time: no new one while streaming). */
static int conn_process(struct conn *c, usec_t arrived, usec_t now) {
        while (!c->streaming && c->in.len) {
                char *end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
                if (!end)
                        return c->in.len >= MAX_REQUEST ? -E2BIG : 0;
                size_t head_len = (size_t)(end - c->in.data) + 4;
                long clen = 0;
                char rid[MAX_RID + 1] = "";
                for (char *p = c->in.data; p && p < end; p = memchr(p, '\n', (size_t)(end - p))) {
                        if (*p == '\n')
                                p++;
                        if (strncasecmp(p, "content-length:", 15) == 0)
                                clen = strtol(p + 15, NULL, 10);
                        else if (strncasecmp(p, "x-request-id:", 13) == 0)
                                take_rid(p + 13, end, rid);
                }
                if (clen < 0 || (size_t)clen > MAX_REQUEST)
                        return -E2BIG;
                if (c->in.len < head_len + (size_t)clen)
                        return 0;
                char method[8] = "", path[128] = "";
                if (sscanf(c->in.data, "%7s %127s", method, path) != 2)
                        return -EBADMSG;
                char *q = strchr(path, '?');
                if (q)
                        *q = '\0';
                int r = handle_request(c, method, path, rid, c->in.data + head_len, (size_t)clen, arrived, now);
                buf_consume(&c->in, head_len + (size_t)clen);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void on_conn(struct conn *c, uint32_t events) {
        usec_t now = now_usec();
        if (events & EPOLLOUT) {
                ssize_t k = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
                if (k < 0 && errno != EAGAIN) {
                        conn_close(c);
                        return;
                }
                if (k > 0)
                        buf_consume(&c->out, (size_t)k);
                if (c->out.len == 0)
                        want_out(c, false);
        }
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                char tmp[65536];
                union {
                        char buf[CMSG_SPACE(sizeof(struct timespec))];
                        struct cmsghdr align;
                } ctl;
                usec_t arrived = 0;
                for (;;) {
                        struct iovec iov = {.iov_base = tmp, .iov_len = sizeof(tmp)};
                        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                                           .msg_controllen = sizeof(ctl.buf)};
                        ssize_t k = recvmsg(c->fd, &m, 0);
                        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                                conn_close(c);
                                return;
                        }
                        if (k < 0)
                                break;
                        /* the kernel's time of the last segment this read took */
                        usec_t a = S.stamp_read ? 0 : loop_cmsg_rx_time(&m);
                        if (a)
                                arrived = a;
                        if (buf_append(&c->in, tmp, (size_t)k) < 0) {
                                conn_close(c);
                                return;
                        }
                        if ((size_t)k < sizeof(tmp))
                                break;
                }
                if (conn_process(c, arrived, now) < 0)
                        conn_close(c);
        }
}

static void on_accept(void) {
        for (;;) {
                int fd = accept4(S.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                if (!S.stamp_read)
                        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
                struct conn *c = calloc(1, sizeof(*c));
                if (!c) {
                        close(fd);
                        continue;
                }
                c->fd = fd;
                buf_init(&c->in, MAX_REQUEST);
                buf_init(&c->out, MAX_PENDING);
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
                if (epoll_ctl(S.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        close(fd);
                        free(c);
                        continue;
                }
                S.st->connections++;
        }
}

static char tag_listen, tag_timer;

/* Reads requests that wait on idle connections, without blocking. Streaming connections
 * are left for the main loop (they may be in the round being written). */
static void poll_requests(void) {
        struct epoll_event evs[64];
        int n = epoll_wait(S.epfd, evs, (int)ELEMENTSOF(evs), 0);
        for (int i = 0; i < n; i++) {
                if (evs[i].data.ptr == &tag_listen)
                        on_accept();
                else if (evs[i].data.ptr != &tag_timer) {
                        struct conn *c = evs[i].data.ptr;
                        if (!c->streaming)
                                on_conn(c, evs[i].events);
                }
        }
}

static void on_timer(void) {
        uint64_t x;
        if (read(S.tfd, &x, sizeof(x)) < 0 && errno != EAGAIN)
                return;
        usec_t now = now_usec();
        /* Take every due stream out first, so each is served once per round: a stream whose
         * next chunk is due at once again (ITL 0) goes to the back of the line. */
        size_t n = 0;
        _cleanup_free_ struct conn **due = NULL;
        while (S.n_heap && S.heap[0]->due <= now) {
                struct conn **d = realloc(due, (n + 1) * sizeof(*d));
                if (!d)
                        break;
                due = d;
                due[n++] = S.heap[0];
                heap_remove(S.heap[0]);
        }
        for (size_t i = 0; i < n; i++)
                heap_push(due[i]);
        for (size_t i = 0; i < n; i++) {
                if (stream_step(due[i], now_usec()) < 0)
                        conn_close(due[i]);
                /* A long round would leave new requests unread in their sockets and make
                 * the recorded TTFT start late: take them in every 16 writes. */
                if (i % 16 == 15)
                        poll_requests();
        }
}

static int parse_ms(const char *s, usec_t *ret) {
        char *end;
        double v = strtod(s, &end);
        if (*end || v < 0 || v > 3.6e6)
                return -EINVAL;
        *ret = (usec_t)(v * 1000.0 + 0.5);
        return 0;
}

static void usage(FILE *f) {
        fprintf(f, "usage: gauntlet-schedsrv [--port N] [--port-file FILE] [--ttft-ms X] [--itl-ms Y]\n"
                   "         [--chunks N] [--tokens-per-chunk K] [--events-per-write K]\n"
                   "         [--fail-every N] [--close-every N] [--close-after K] [--processes N]\n"
                   "         [--log-requests FILE] [--tag-content] [--stamp arrival|read]\n"
                   "Streams SSE chunks on an exact schedule; GET /stats says what it really did.\n");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                {"port", required_argument, NULL, 'p'}, {"port-file", required_argument, NULL, 'P'},
                {"ttft-ms", required_argument, NULL, 't'}, {"itl-ms", required_argument, NULL, 'i'},
                {"chunks", required_argument, NULL, 'n'}, {"tokens-per-chunk", required_argument, NULL, 'k'},
                {"events-per-write", required_argument, NULL, 'w'}, {"fail-every", required_argument, NULL, 'f'},
                {"close-every", required_argument, NULL, 'c'}, {"close-after", required_argument, NULL, 'a'},
                {"processes", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
                {"log-requests", required_argument, NULL, 'L'}, {"tag-content", no_argument, NULL, 'T'},
                {"stamp", required_argument, NULL, 's'}, {0},
        };
        int port = 0;
        const char *port_file = NULL;
        S.ttft = 50 * USEC_PER_MSEC;
        S.itl = 10 * USEC_PER_MSEC;
        S.chunks = 16;
        S.tokens_per_chunk = 1;
        S.events_per_write = 1;
        S.close_after = 1;
        S.processes = 1;
        int o;
        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                bool ok = true;
                switch (o) {
                case 'p': port = atoi(optarg); break;
                case 'P': port_file = optarg; break;
                case 't': ok = parse_ms(optarg, &S.ttft) == 0; break;
                case 'i': ok = parse_ms(optarg, &S.itl) == 0; break;
                case 'n': S.chunks = (uint32_t)strtoul(optarg, NULL, 10); ok = S.chunks > 0; break;
                case 'k': S.tokens_per_chunk = (uint32_t)strtoul(optarg, NULL, 10); ok = S.tokens_per_chunk > 0; break;
                case 'w': S.events_per_write = (uint32_t)strtoul(optarg, NULL, 10); ok = S.events_per_write > 0; break;
                case 'f': S.fail_every = strtoull(optarg, NULL, 10); break;
                case 'c': S.close_every = strtoull(optarg, NULL, 10); break;
                case 'a': S.close_after = (uint32_t)strtoul(optarg, NULL, 10); break;
                case 'j': S.processes = atoi(optarg); ok = S.processes >= 1 && S.processes <= 256; break;
                case 'L': ok = (S.log = fopen(optarg, "ae")) != NULL; break;
                case 'T': S.tag = true; break;
                case 's':
                        S.stamp_read = strcmp(optarg, "read") == 0;
                        ok = S.stamp_read || strcmp(optarg, "arrival") == 0;
                        break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
                if (!ok) {
                        fprintf(stderr, "gauntlet-schedsrv: bad value '%s'\n", optarg);
                        return 2;
                }
        }
        /* Timer slack would make every chunk up to 50 us late. */
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }
        signal(SIGPIPE, SIG_IGN);
        /* Every process's stats and histogram counters, in memory the forks share. */
        size_t slot = sizeof(struct stats) + 4 * HIST_BUCKETS * sizeof(uint64_t);
        char *shm = mmap(NULL, slot * (size_t)S.processes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shm == MAP_FAILED)
                return 1;
        S.all = (struct stats *)shm;
        for (int i = 0; i < S.processes; i++) {
                struct stats *st = &S.all[i];
                uint64_t *counts = (uint64_t *)(shm + sizeof(struct stats) * (size_t)S.processes) +
                                   (size_t)i * 4 * HIST_BUCKETS;
                st->h_ttft = (struct hist){.counts = counts, .min = UINT64_MAX};
                st->h_itl = (struct hist){.counts = counts + HIST_BUCKETS, .min = UINT64_MAX};
                st->h_late = (struct hist){.counts = counts + 2 * HIST_BUCKETS, .min = UINT64_MAX};
                st->h_rxlag = (struct hist){.counts = counts + 3 * HIST_BUCKETS, .min = UINT64_MAX};
        }
        S.st = &S.all[0];

        S.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(S.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(S.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(S.lfd, 65535) < 0) {
                fprintf(stderr, "gauntlet-schedsrv: cannot listen on port %d: %s\n", port, strerror(errno));
                return 1;
        }
        socklen_t sl = sizeof(sa);
        getsockname(S.lfd, (struct sockaddr *)&sa, &sl);
        port = ntohs(sa.sin_port);
        /* The copies share the listening socket and end with the first process. */
        bool child = false;
        pid_t parent = getpid();
        for (int i = 1; i < S.processes; i++) {
                pid_t pid = fork();
                if (pid < 0) {
                        fprintf(stderr, "gauntlet-schedsrv: fork: %s\n", strerror(errno));
                        return 1;
                }
                if (pid == 0) {
                        prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
                        if (getppid() != parent)
                                _exit(0); /* it died before the line above */
                        child = true;
                        port_file = NULL;
                        S.st = &S.all[i];
                        break;
                }
        }
        S.epfd = epoll_create1(EPOLL_CLOEXEC);
        S.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        /* The listener and the timer are told apart from connections by these tags. */
        struct epoll_event ev = {.events = EPOLLIN | (S.processes > 1 ? EPOLLEXCLUSIVE : 0), .data.ptr = &tag_listen};
        epoll_ctl(S.epfd, EPOLL_CTL_ADD, S.lfd, &ev);
        ev.data.ptr = &tag_timer;
        epoll_ctl(S.epfd, EPOLL_CTL_ADD, S.tfd, &ev);
        if (port_file) {
                _cleanup_free_ char *tmp = strdup_printf("%s.tmp", port_file);
                FILE *f = tmp ? fopen(tmp, "we") : NULL;
                if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, port_file) < 0) {
                        fprintf(stderr, "gauntlet-schedsrv: cannot write '%s'\n", port_file);
                        return 1;
                }
        }
        if (!child) {
                printf("listening on 127.0.0.1:%d\n", port);
                fflush(stdout);
        }

        struct epoll_event evs[512];
        for (;;) {
                int n = epoll_wait(S.epfd, evs, (int)ELEMENTSOF(evs), -1);
                if (n < 0 && errno != EINTR)
                        return 1;
                bool timer = false;
                for (int i = 0; i < n; i++) {
                        if (evs[i].data.ptr == &tag_listen)
                                on_accept();
                        else if (evs[i].data.ptr == &tag_timer)
                                timer = true;
                        else
                                on_conn(evs[i].data.ptr, evs[i].events);
                }
                /* Chunks after requests: a connection closed above is out of the heap already. */
                if (timer || (S.n_heap && S.heap[0]->due <= now_usec()))
                        on_timer();
                arm_timer();
        }
}
