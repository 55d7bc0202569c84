/* bench_metrics.c -- the pure half of bench: event parsing, schedules, prompts, level metrics. */
#include "bench/bench_metrics.h"
#include "base/metrics.h"
#include "base/rng.h"
#include "base/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- light JSON scan of one SSE chunk ------------------------------------------------- */

/* A recursive walk that builds nothing: it looks at (key, value) pairs and remembers the
 * few the metrics need. Depth is capped so a hostile chunk cannot exhaust the stack. */
#define SCAN_MAX_DEPTH 64

enum scan_ctx { CTX_NONE, CTX_USAGE, CTX_TIMINGS };

struct scan {
        const char *p, *end;
        struct bench_event *ev;
        struct buf *text;       /* NULL: the strings are not wanted */
        struct buf *content;    /* the answer alone (content, text), or NULL */
        int depth;
};

static void skip_ws(struct scan *s) {
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
                s->p++;
}

/* At a '"': returns the raw bytes between the quotes (escapes left as they are). */
static int scan_string(struct scan *s, const char **ret, size_t *ret_len) {
        if (s->p >= s->end || *s->p != '"')
                return -EBADMSG;
        const char *start = ++s->p;
        while (s->p < s->end) {
                char c = *s->p;
                if (c == '\\') {
                        s->p += 2;
                        continue;
                }
                if (c == '"') {
                        *ret = start;
                        *ret_len = (size_t)(s->p - start);
                        s->p++;
                        return 0;
                }
                if ((unsigned char)c < 0x20)
                        return -EBADMSG;
                s->p++;
        }
        return -EBADMSG;
}

/* One code point as UTF-8 (utf8_encode: never a surrogate or past U+10FFFF here), at the
 * cap dropped. */
static void put_cp(struct buf *out, uint32_t cp) {
        char u[4];
        (void)buf_append(out, u, utf8_encode(cp, u));
}

/* The raw bytes of a JSON string (between its quotes, as scan_string gives them), decoded
 * and appended to out. */
static void unescape_into(struct buf *out, const char *p, size_t n) {
        const char *end = p + n;
        while (p < end) {
                const char *bs = memchr(p, '\\', (size_t)(end - p));
                if (!bs) {
                        (void)buf_append(out, p, (size_t)(end - p));
                        return;
                }
                (void)buf_append(out, p, (size_t)(bs - p));
                p = bs + 1;
                if (p >= end)
                        return;
                char c = *p++;
                static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
                const char *k = strchr(from, c);
                if (c && k) {
                        (void)buf_append(out, &to[k - from], 1);
                        continue;
                }
                uint32_t cp, lo;
                if (c != 'u' || utf8_hex4(p, (size_t)(end - p), &cp) < 0) {
                        put_cp(out, 0xFFFD);
                        continue;
                }
                p += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                    utf8_hex4(p + 2, (size_t)(end - p - 2), &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        p += 6;
                } else if (cp >= 0xD800 && cp < 0xE000) {
                        cp = 0xFFFD; /* a lone surrogate */
                }
                put_cp(out, cp);
        }
}

static bool key_is(const char *k, size_t n, const char *lit) {
        size_t m = strlen(lit);
        return n == m && memcmp(k, lit, m) == 0;
}

static int scan_value(struct scan *s, const char *key, size_t klen, enum scan_ctx ctx);

/* After an item of an object or array: 1 at a ',' (another item follows), 0 at `close`
 * (the container ends), -EBADMSG otherwise. */
static int scan_after_item(struct scan *s, char close) {
        skip_ws(s);
        if (s->p >= s->end)
                return -EBADMSG;
        if (*s->p == ',') {
                s->p++;
                return 1;
        }
        if (*s->p != close)
                return -EBADMSG;
        s->p++;
        s->depth--;
        return 0;
}

static int scan_object(struct scan *s, enum scan_ctx ctx) {
        if (++s->depth > SCAN_MAX_DEPTH)
                return -EBADMSG;
        s->p++; /* '{' */
        skip_ws(s);
        if (s->p < s->end && *s->p == '}') {
                s->p++;
                s->depth--;
                return 0;
        }
        for (;;) {
                const char *k;
                size_t kn;
                skip_ws(s);
                int r = scan_string(s, &k, &kn);
                if (r < 0)
                        return r;
                skip_ws(s);
                if (s->p >= s->end || *s->p != ':')
                        return -EBADMSG;
                s->p++;
                skip_ws(s);
                r = scan_value(s, k, kn, ctx);
                if (r < 0)
                        return r;
                if ((r = scan_after_item(s, '}')) <= 0)
                        return r;
        }
}

static int scan_array(struct scan *s) {
        if (++s->depth > SCAN_MAX_DEPTH)
                return -EBADMSG;
        s->p++; /* '[' */
        skip_ws(s);
        if (s->p < s->end && *s->p == ']') {
                s->p++;
                s->depth--;
                return 0;
        }
        for (;;) {
                skip_ws(s);
                int r = scan_value(s, NULL, 0, CTX_NONE);
                if (r < 0)
                        return r;
                if ((r = scan_after_item(s, ']')) <= 0)
                        return r;
        }
}

static int scan_literal(struct scan *s, const char *lit) {
        size_t n = strlen(lit);
        if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
                return -EBADMSG;
        s->p += n;
        return 0;
}

static int scan_value(struct scan *s, const char *key, size_t klen, enum scan_ctx ctx) {
        if (s->p >= s->end)
                return -EBADMSG;
        struct bench_event *ev = s->ev;
        bool top = s->depth == 1;
        char c = *s->p;
        if (key && top && key_is(key, klen, "error") && c != 'n')
                ev->error = true;
        if (c == '{')
                return scan_object(s, key && key_is(key, klen, "usage")           ? (ev->usage = true, CTX_USAGE)
                                      : key && top && key_is(key, klen, "timings") ? (ev->timings = true, CTX_TIMINGS)
                                                                                   : CTX_NONE);
        if (c == '[')
                return scan_array(s);
        if (c == '"') {
                const char *v;
                size_t vn;
                int r = scan_string(s, &v, &vn);
                if (r < 0 || !key)
                        return r;
                if (vn > 0 && (key_is(key, klen, "content") || key_is(key, klen, "reasoning_content") ||
                               key_is(key, klen, "reasoning") || key_is(key, klen, "text"))) {
                        ev->token = true;
                        if (s->text)
                                unescape_into(s->text, v, vn);
                        if (s->content && (key_is(key, klen, "content") || key_is(key, klen, "text")))
                                unescape_into(s->content, v, vn);
                } else if (key_is(key, klen, "finish_reason"))
                        ev->finish = true;
                return 0;
        }
        if (c == 'n')
                return scan_literal(s, "null");
        if (c == 't')
                return scan_literal(s, "true");
        if (c == 'f')
                return scan_literal(s, "false");
        if (c == '-' || (c >= '0' && c <= '9')) {
                const char *start = s->p;
                while (s->p < s->end && (strchr("+-.eE", *s->p) || (*s->p >= '0' && *s->p <= '9')))
                        s->p++;
                if (ctx == CTX_TIMINGS && key) {
                        /* llama.cpp's own per-request figures, in its last chunk */
                        static const char *const names[] = {"prompt_n", "prompt_ms", "predicted_n", "predicted_ms",
                                                            "predicted_per_token_ms", "cache_n"};
                        double *dst[] = {&ev->t_prompt_n, &ev->t_prompt_ms, &ev->t_predicted_n, &ev->t_predicted_ms,
                                         &ev->t_predicted_per_token_ms, &ev->t_cache_n};
                        char num[48];
                        size_t n = (size_t)(s->p - start);
                        for (size_t i = 0; i < ELEMENTSOF(names) && n < sizeof(num); i++)
                                if (key_is(key, klen, names[i])) {
                                        memcpy(num, start, n);
                                        num[n] = '\0';
                                        *dst[i] = strtod(num, NULL);
                                }
                }
                if (ctx == CTX_USAGE && key &&
                    (key_is(key, klen, "prompt_tokens") || key_is(key, klen, "completion_tokens"))) {
                        int64_t v = 0;
                        for (const char *q = start; q < s->p && *q >= '0' && *q <= '9'; q++)
                                v = v < INT64_MAX / 10 ? v * 10 + (*q - '0') : INT64_MAX;
                        if (*start == '-')
                                v = -1;
                        if (key_is(key, klen, "prompt_tokens"))
                                ev->prompt_tokens = v;
                        else
                                ev->completion_tokens = v;
                }
                return 0;
        }
        return -EBADMSG;
}

int bench_event_parse(const char *p, size_t n, struct bench_event *ret) {
        return bench_event_parse_text(p, n, ret, NULL);
}

int bench_event_parse_text(const char *p, size_t n, struct bench_event *ret, struct buf *text) {
        return bench_event_parse_texts(p, n, ret, text, NULL);
}

int bench_event_parse_texts(const char *p, size_t n, struct bench_event *ret, struct buf *text, struct buf *content) {
        struct bench_event ev = {.prompt_tokens = -1, .completion_tokens = -1, .t_prompt_n = -1, .t_prompt_ms = -1,
                                 .t_predicted_n = -1, .t_predicted_ms = -1, .t_predicted_per_token_ms = -1,
                                 .t_cache_n = -1};
        struct scan s = {.p = p, .end = p + n, .ev = &ev, .text = text, .content = content};
        skip_ws(&s);
        if (s.p >= s.end || *s.p != '{')
                return -EBADMSG;
        int r = scan_object(&s, CTX_NONE);
        if (r < 0)
                return r;
        skip_ws(&s);
        if (s.p != s.end)
                return -EBADMSG;
        *ret = ev;
        return 0;
}

/* ---- schedules ------------------------------------------------------------------------ */

/* rng_next (base/rng.h): the one generator, for arrival times and word choice. */

/* U in (0, 1]: 53 random bits, never 0 so log() stays finite. */
static double uniform(uint64_t *rng) {
        return ((double)(rng_next(rng) >> 11) + 1.0) / 9007199254740992.0;
}

/* A standard normal variate (Box-Muller; the second of the pair is not kept). */
static double normal(uint64_t *rng) {
        double u = uniform(rng), v = uniform(rng);
        return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* One gamma(shape, 1) variate from the state *rng (Marsaglia and Tsang). */
static double bench_gamma(uint64_t *rng, double shape) {
        if (shape < 1) /* gamma(a) = gamma(a + 1) * U^(1/a) */
                return bench_gamma(rng, shape + 1) * pow(uniform(rng), 1 / shape);
        double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
        for (;;) {
                double x = normal(rng), v = 1 + c * x;
                if (v <= 0)
                        continue;
                v = v * v * v;
                double u = uniform(rng);
                if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
                        return d * v;
        }
}

void bench_sched_init(struct bench_sched *s, double rate, bool poisson, double burstiness, uint64_t seed) {
        *s = (struct bench_sched){.rate = rate, .poisson = poisson, .shape = burstiness > 0 ? burstiness : 1,
                                  .rng = seed ? seed : 0x6761756e746c6574};
}

usec_t bench_sched_next(struct bench_sched *s) {
        uint64_t i = s->n++;
        if (!s->poisson)
                return (usec_t)llround((double)i * 1e6 / s->rate);
        if (i > 0) {
                if (s->shape == 1)
                        s->t += -log(uniform(&s->rng)) / s->rate;
                else /* gamma(shape, scale 1/(rate*shape)): mean 1/rate */
                        s->t += bench_gamma(&s->rng, s->shape) / (s->rate * s->shape);
        }
        return (usec_t)llround(s->t * 1e6);
}

/* ---- synthetic prompts ---------------------------------------------------------------- */

static const char *const words[] = {
        "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
        "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
        "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
        "been", "if", "more", "when", "will", "would", "who", "so", "no", "time", "water", "house",
        "river", "light", "green", "small", "world", "number", "people", "story", "night", "city",
        "long", "music", "table",
};

int bench_prompt(uint64_t seed, uint64_t index, int tokens, struct buf *out) {
        /* The prefix makes every prompt distinct from its first tokens on, so a server's
         * prefix cache cannot serve one request from another's work. */
        int r = buf_printf(out, "Request %llu.", (unsigned long long)index);
        if (r < 0)
                return r;
        uint64_t st = (seed ? seed : 1) ^ (index * UINT64_C(0x2545f4914f6cdd1d));
        for (int i = 3; i < tokens; i++) {
                const char *w = words[rng_next(&st) % ELEMENTSOF(words)];
                if ((r = buf_puts(out, " ")) < 0 || (r = buf_puts(out, w)) < 0)
                        return r;
        }
        return 0;
}

uint64_t bench_failures_allowed(const struct bench_spec *spec, uint64_t n) {
        if (spec->max_failure_share > 0)
                return (uint64_t)floor(spec->max_failure_share * (double)n + 1e-9);
        return spec->max_failures > 0 ? (uint64_t)spec->max_failures : 0;
}

int bench_prompt_chars(uint64_t seed, uint64_t index, size_t chars, struct buf *out) {
        /* The same prefix as bench_prompt's, of a fixed width: every prompt of a level is
         * then the same number of characters, and of tokens in a character-level or
         * digit-splitting tokenizer (docs/metrics.md "Prompt length"). */
        size_t start = out->len;
        int r = buf_printf(out, "%08llu:", (unsigned long long)(index % 100000000ULL));
        if (r < 0)
                return r;
        uint64_t st = (seed ? seed : 1) ^ (index * UINT64_C(0x2545f4914f6cdd1d));
        while (out->len - start < chars) {
                const char *w = words[rng_next(&st) % ELEMENTSOF(words)];
                size_t room = chars - (out->len - start);
                if ((r = buf_puts(out, " ")) < 0)
                        return r;
                if (room > 1 && (r = buf_append(out, w, MIN(strlen(w), room - 1))) < 0)
                        return r;
        }
        return 0;
}

/* ---- level metrics -------------------------------------------------------------------- */

int bench_level_init(struct bench_level *lv, int concurrency, double rate) {
        *lv = (struct bench_level){.concurrency = concurrency, .rate = rate, .prompt_min = -1, .prompt_max = -1,
                                   .output_min = -1, .output_max = -1, .host_steal = NAN, .own0_s = NAN,
                                   .host_others = NAN, .host_idle = NAN};
        struct hist *hs[] = {&lv->ttft, &lv->itl, &lv->tpot, &lv->e2e, &lv->send_delay, &lv->connect, &lv->own_delay};
        for (size_t i = 0; i < ELEMENTSOF(hs); i++)
                *hs[i] = (struct hist){.min = UINT64_MAX};
        for (size_t i = 0; i < ELEMENTSOF(hs); i++)
                if (hist_init(hs[i]) < 0)
                        goto fail;
        lv->errors = json_object();
        lv->warnings = json_array();
        lv->flagged = json_array();
        if (!lv->errors || !lv->warnings || !lv->flagged)
                goto fail;
        return 0;
fail:
        bench_level_release(lv);
        return -ENOMEM;
}

void bench_level_release(struct bench_level *lv) {
        hist_release(&lv->ttft);
        hist_release(&lv->itl);
        hist_release(&lv->tpot);
        hist_release(&lv->e2e);
        hist_release(&lv->send_delay);
        hist_release(&lv->connect);
        hist_release(&lv->own_delay);
        json_decref(lv->errors);
        json_decref(lv->warnings);
        json_decref(lv->flagged);
        lv->errors = lv->warnings = lv->flagged = NULL;
}

int bench_level_judged(struct bench_level *lv, const char *cause, const char *evidence, uint64_t index) {
        lv->outputs_judged++;
        if (!cause)
                return 0;
        lv->outputs_flagged++;
        if (json_array_size(lv->flagged) >= BENCH_FLAGGED_KEPT)
                return 0;
        json_t *o = json_pack("{s:s, s:s?, s:I}", "cause", cause, "evidence", evidence, "index", (json_int_t)index);
        return o && json_array_append_new(lv->flagged, o) == 0 ? 0 : -ENOMEM;
}

static bool bench_usage_disagrees_by(int64_t usage, uint64_t counted, int max_tokens, double share) {
        if (usage < 0)
                return false;
        if (max_tokens > 0 && usage > max_tokens)
                return true;
        uint64_t u = (uint64_t)usage, diff = u > counted ? u - counted : counted - u;
        return diff > BENCH_USAGE_SLACK && (double)diff > share * (double)counted;
}

int bench_level_add(struct bench_level *lv, const struct bench_record *rec) {
        lv->requests++;
        usec_t delay = rec->sent > rec->scheduled ? rec->sent - rec->scheduled : 0;
        hist_record(&lv->send_delay, delay);
        /* a request that opened a connection was sent once it connected: that wait is the
         * server's (llama-server -np 1 took 1.7 ms to accept each), not the client's */
        usec_t own = delay > rec->connect ? delay - rec->connect : 0;
        hist_record(&lv->own_delay, own);
        if (own > BENCH_LATE_USEC)
                lv->late++;
        if (rec->connect)
                hist_record(&lv->connect, rec->connect);
        if (!lv->first_send || rec->sent < lv->first_send)
                lv->first_send = rec->sent;
        lv->last_send = MAX(lv->last_send, rec->sent);
        lv->last_done = MAX(lv->last_done, rec->done);
        if (!rec->ok) {
                lv->failed++;
                if (rec->aborted)
                        lv->aborted++;
                const char *why = rec->error[0] ? rec->error : "unknown";
                if (!lv->first_error[0]) {
                        snprintf(lv->first_error, sizeof(lv->first_error), "%s%s%s", why, rec->detail ? ": " : "",
                                 rec->detail ? rec->detail : "");
                        lv->first_error_at = rec->done;
                }
                json_t *c = json_object_get(lv->errors, why);
                json_int_t n = c ? json_integer_value(c) : 0;
                return json_object_set_new(lv->errors, why, json_integer(n + 1)) < 0 ? -ENOMEM : 0;
        }
        lv->completed++;
        usec_t ttft = rec->first_token - rec->sent;
        usec_t e2e = rec->done - rec->sent;
        hist_record(&lv->ttft, ttft);
        hist_record(&lv->e2e, e2e);
        /* gauntlet's count, never the server's word (docs/metrics.md "Output tokens") */
        uint64_t out = rec->counted_tokens > 0 ? (uint64_t)rec->counted_tokens : (uint64_t)rec->chunks;
        if (rec->counted_tokens > 0)
                lv->tokenized++;
        lv->output_tokens += out;
        lv->output_bytes += rec->output_bytes;
        lv->chunks += rec->chunks;
        if (rec->output_tokens >= 0) {
                uint64_t u = (uint64_t)rec->output_tokens;
                lv->usage_requests++;
                lv->usage_tokens = lv->usage_tokens > UINT64_MAX - u ? UINT64_MAX : lv->usage_tokens + u;
                lv->usage_counted += out;
                /* by bytes per token a request's count is an estimate, off by what its text's
                 * bytes per token are off the sweep's: a request disagrees past a wider share
                 * (the level's sum is compared at the usual one: count) */
                bool approx = lv->count_method && strcmp(lv->count_method, "bytes") == 0;
                if (approx ? bench_usage_disagrees_by(rec->output_tokens, out, lv->max_tokens, BENCH_USAGE_SHARE_BYTES)
                           : bench_usage_disagrees(rec->output_tokens, out, lv->max_tokens)) {
                        lv->usage_disagree++;
                        if (lv->max_tokens > 0 && rec->output_tokens > lv->max_tokens)
                                lv->usage_over_max++;
                }
        } else {
                lv->no_usage++;
        }
        if (rec->prompt_tokens >= 0) {
                lv->prompt_tokens += (uint64_t)rec->prompt_tokens;
                lv->prompt_min = lv->prompt_count ? MIN(lv->prompt_min, rec->prompt_tokens) : rec->prompt_tokens;
                lv->prompt_max = MAX(lv->prompt_max, rec->prompt_tokens);
                lv->prompt_count++;
        }
        lv->output_min = lv->completed > 1 ? MIN(lv->output_min, (int64_t)out) : (int64_t)out;
        lv->output_max = MAX(lv->output_max, (int64_t)out);
        bool good = (!lv->slo_ttft || ttft <= lv->slo_ttft) && (!lv->slo_e2el || e2e <= lv->slo_e2el);
        if (rec->timings && rec->t_prompt_n >= 0) {
                lv->timed++;
                lv->timed_prompt_n += (uint64_t)rec->t_prompt_n;
                lv->timed_cache_n += rec->t_cache_n > 0 ? (uint64_t)rec->t_cache_n : 0;
        }
        if (out > 1) {
                /* TPOT: decode time per token after the first, (e2e - ttft) / (tokens - 1). */
                usec_t tpot = (rec->done - rec->first_token) / (out - 1);
                hist_record(&lv->tpot, tpot);
                if (lv->slo_tpot && tpot > lv->slo_tpot)
                        good = false;
        }
        if (good) {
                lv->good++;
                lv->good_tokens += out;
        }
        return 0;
}

bool bench_usage_disagrees(int64_t usage, uint64_t counted, int max_tokens) {
        return bench_usage_disagrees_by(usage, counted, max_tokens, BENCH_USAGE_SHARE);
}

int bench_threads(int spec_threads, int concurrency, int cpus) {
        int n = spec_threads;
        if (n <= 0)
                n = concurrency < BENCH_THREADS_FROM ? 1 : MIN(cpus - 1, concurrency / BENCH_STREAMS_PER_THREAD);
        return MAX(1, MIN(MIN(n, concurrency), BENCH_MAX_THREADS));
}

int bench_level_merge(struct bench_level *lv, const struct bench_level *from) {
        struct hist *into[] = {&lv->ttft, &lv->itl, &lv->tpot, &lv->e2e, &lv->send_delay, &lv->connect, &lv->own_delay};
        const struct hist *add[] = {&from->ttft,       &from->itl,     &from->tpot,     &from->e2e,
                                    &from->send_delay, &from->connect, &from->own_delay};
        for (size_t i = 0; i < ELEMENTSOF(into); i++)
                hist_merge(into[i], add[i]);
        lv->requests += from->requests;
        lv->completed += from->completed;
        lv->failed += from->failed;
        lv->aborted += from->aborted;
        lv->late += from->late;
        lv->preconnected += from->preconnected;
        lv->resent += from->resent;
        lv->good += from->good;
        lv->good_tokens += from->good_tokens;
        lv->timed += from->timed;
        lv->timed_prompt_n += from->timed_prompt_n;
        lv->timed_cache_n += from->timed_cache_n;
        lv->output_tokens += from->output_tokens;
        if (from->prompt_count) {
                lv->prompt_min = lv->prompt_count ? MIN(lv->prompt_min, from->prompt_min) : from->prompt_min;
                lv->prompt_max = MAX(lv->prompt_max, from->prompt_max);
        }
        lv->prompt_tokens += from->prompt_tokens;
        lv->prompt_count += from->prompt_count;
        if (from->completed) {
                lv->output_min = lv->completed > from->completed ? MIN(lv->output_min, from->output_min) : from->output_min;
                lv->output_max = MAX(lv->output_max, from->output_max);
        }
        if (from->first_error[0] && (!lv->first_error[0] || from->first_error_at < lv->first_error_at)) {
                memcpy(lv->first_error, from->first_error, sizeof(lv->first_error));
                lv->first_error_at = from->first_error_at;
        }
        lv->chunks += from->chunks;
        lv->tokenized += from->tokenized;
        lv->output_bytes += from->output_bytes;
        lv->usage_requests += from->usage_requests;
        lv->usage_tokens = lv->usage_tokens > UINT64_MAX - from->usage_tokens ? UINT64_MAX
                                                                              : lv->usage_tokens + from->usage_tokens;
        lv->usage_counted += from->usage_counted;
        lv->usage_disagree += from->usage_disagree;
        lv->usage_over_max += from->usage_over_max;
        lv->no_usage += from->no_usage;
        lv->events += from->events;
        lv->after_done += from->after_done;
        lv->reads += from->reads;
        lv->outputs_judged += from->outputs_judged;
        lv->outputs_flagged += from->outputs_flagged;
        size_t fi;
        json_t *fv;
        json_array_foreach(from->flagged, fi, fv) {
                if (json_array_size(lv->flagged) >= BENCH_FLAGGED_KEPT)
                        break;
                if (json_array_append(lv->flagged, fv) < 0)
                        return -ENOMEM;
        }
        if (from->first_send && (!lv->first_send || from->first_send < lv->first_send))
                lv->first_send = from->first_send;
        lv->last_send = MAX(lv->last_send, from->last_send);
        lv->last_done = MAX(lv->last_done, from->last_done);
        lv->cpu_user_s += from->cpu_user_s;
        lv->cpu_sys_s += from->cpu_sys_s;
        lv->loop_cpu_max_s = MAX(lv->loop_cpu_max_s, from->loop_cpu_max_s);
        const char *k;
        json_t *v;
        json_object_foreach(from->errors, k, v) {
                json_int_t had = json_integer_value(json_object_get(lv->errors, k));
                if (json_object_set_new(lv->errors, k, json_integer(had + json_integer_value(v))) < 0)
                        return -ENOMEM;
        }
        size_t i;
        json_array_foreach(from->warnings, i, v)
                if (json_array_append_new(lv->warnings, json_deep_copy(v)) < 0)
                        return -ENOMEM;
        return 0;
}

static double r3(double x) {
        return round(x * 1000.0) / 1000.0;
}

/* {"p50", "p90", "p99", "p999", "mean", "min", "max", "count"} (metric_stat_key) in milliseconds;
 * null when empty. */
static json_t *dist_json(const struct hist *h) {
        if (!h->count)
                return json_null();
        return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}",
                         metric_stat_key(METRIC_STAT_P50), r3((double)hist_percentile(h, 50) / 1e3),
                         metric_stat_key(METRIC_STAT_P90), r3((double)hist_percentile(h, 90) / 1e3),
                         metric_stat_key(METRIC_STAT_P99), r3((double)hist_percentile(h, 99) / 1e3),
                         metric_stat_key(METRIC_STAT_P999), r3((double)hist_percentile(h, 99.9) / 1e3),
                         metric_stat_key(METRIC_STAT_MEAN), r3(hist_mean(h) / 1e3),
                         metric_stat_key(METRIC_STAT_MIN), r3((double)h->min / 1e3),
                         metric_stat_key(METRIC_STAT_MAX), r3((double)h->max / 1e3),
                         metric_stat_key(METRIC_STAT_COUNT), (json_int_t)h->count);
}

static int warn(struct bench_level *lv, const char *fmt, ...) _printf_(2, 3);
static int warn(struct bench_level *lv, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!s)
                return -ENOMEM;
        int r = json_array_append_new(lv->warnings, json_string(s));
        free(s);
        return r < 0 ? -ENOMEM : 0;
}

/* {"mean", "min", "max"} of a per-request count; null when there was none. */
static json_t *count_json(uint64_t sum, uint64_t n, int64_t min, int64_t max) {
        if (!n)
                return json_null();
        return json_pack("{s:f, s:I, s:I}", metric_stat_key(METRIC_STAT_MEAN), r3((double)sum / (double)n),
                         metric_stat_key(METRIC_STAT_MIN), (json_int_t)min, metric_stat_key(METRIC_STAT_MAX),
                         (json_int_t)max);
}

/* Sets on o the flat figures of `vllm bench serve --save-result` (docs/metrics.md "vLLM's
 * names"): request_throughput, output_throughput, total_token_throughput and
 * {mean,median,std,p99}_{ttft,tpot,itl,e2el}_ms, from the level's own counters and
 * histograms. bench_level_json calls it. 0 or -ENOMEM. */
static int bench_level_vllm(const struct bench_level *lv, json_t *o) {
        double window = lv->last_done > lv->first_send ? (double)(lv->last_done - lv->first_send) / 1e6 : 0;
        double per_s = window > 0 ? 1.0 / window : 0;
        const struct hist *h[] = {&lv->ttft, &lv->tpot, &lv->itl, &lv->e2e};
        static const enum metric first[] = {METRIC_VLLM_MEAN_TTFT, METRIC_VLLM_MEAN_TPOT, METRIC_VLLM_MEAN_ITL,
                                            METRIC_VLLM_MEAN_E2EL};
        int r = 0;
        r |= json_object_set_new(o, metric_key(METRIC_VLLM_REQUEST_THROUGHPUT), json_real(r3((double)lv->completed * per_s)));
        r |= json_object_set_new(o, metric_key(METRIC_VLLM_OUTPUT_THROUGHPUT),
                                 json_real(r3((double)lv->output_tokens * per_s)));
        r |= json_object_set_new(o, metric_key(METRIC_VLLM_TOTAL_TOKEN_THROUGHPUT),
                                 json_real(r3((double)(lv->output_tokens + lv->prompt_tokens) * per_s)));
        for (size_t i = 0; i < ELEMENTSOF(h); i++) {
                /* mean, median, std, p99 in the table's order; 0 when empty, as vLLM writes them */
                double v[] = {hist_mean(h[i]), (double)hist_percentile(h[i], 50), hist_stddev(h[i]),
                              (double)hist_percentile(h[i], 99)};
                for (size_t k = 0; k < ELEMENTSOF(v); k++)
                        r |= json_object_set_new(o, metric_key((enum metric)(first[i] + k)),
                                                 json_real(h[i]->count ? r3(v[k] / 1e3) : 0.0));
        }
        return r < 0 ? -ENOMEM : 0;
}

/* The level's own warnings, from its counts and the client's CPU (bench_level_json). */
/* How the level's counted requests were counted, in words (count_method is a count.h source). */
static const char *count_method_words(const char *m) {
        if (!m)
                return "one per streamed chunk";
        if (strcmp(m, "tokenizer") == 0)
                return "the model's tokenizer";
        if (strcmp(m, "bytes") == 0)
                return "the sweep's bytes per token";
        if (strcmp(m, "usage") == 0)
                return "its usage";
        if (strcmp(m, "tokenize") == 0)
                return "its /tokenize of the streamed text";
        return "one per streamed chunk";
}

static void level_warnings(struct bench_level *lv, int threads, double cores, double loop_max, bool late) {
        if (isfinite(lv->host_steal) && lv->host_steal > BENCH_STEAL_WARN)
                warn(lv, "the host's hypervisor took %.0f%% of its CPU time during the level (steal): the figures "
                     "may be low for reasons that are not the server's", lv->host_steal * 100);
        double contention = cpustat_contention(lv->host_others, lv->host_idle);
        if (isfinite(contention) && contention > BENCH_STEAL_WARN)
                warn(lv, "other processes than gauntlet and the server ran %.0f%% of the host's CPU time during the "
                         "level, with %.0f%% idle: the figures may be low for reasons that are not the server's",
                     lv->host_others * 100, isfinite(lv->host_idle) ? lv->host_idle * 100 : 0.0);
        if (lv->failed)
                warn(lv, "%llu of %llu requests failed", (unsigned long long)lv->failed,
                     (unsigned long long)lv->requests);
        if (lv->no_usage)
                warn(lv, "%llu completed requests carried no usage: their count is not cross-checked",
                     (unsigned long long)lv->no_usage);
        if (lv->usage_disagree) {
                _cleanup_free_ char *over = lv->usage_over_max
                                                    ? strdup_printf("; %llu said more than the %d max_tokens asked",
                                                                    (unsigned long long)lv->usage_over_max, lv->max_tokens)
                                                    : strdup("");
                warn(lv, "usage disagrees with gauntlet's count on %llu of %llu requests: the server said %llu "
                     "output tokens, gauntlet counted %llu (%s)%s; the figures use gauntlet's count",
                     (unsigned long long)lv->usage_disagree, (unsigned long long)lv->usage_requests,
                     (unsigned long long)lv->usage_tokens, (unsigned long long)lv->usage_counted,
                     lv->tokenized ? count_method_words(lv->count_method) : "one per streamed chunk",
                     over ? over : "");
        }
        if (late)
                warn(lv, "client fell behind the schedule (coordinated omission): %llu of %llu requests "
                     "sent more than %llu ms late, not counting their connects, p99 %.3f ms",
                     (unsigned long long)lv->late, (unsigned long long)lv->requests,
                     (unsigned long long)(BENCH_LATE_USEC / 1000),
                     (double)hist_percentile(&lv->own_delay, 99) / 1e3);
        if (threads == 1 && cores > BENCH_CPU_WARN)
                warn(lv, "client used %.0f%% of a CPU core: the client may be the bottleneck", cores * 100);
        else if (threads > 1 && loop_max > BENCH_CPU_WARN)
                warn(lv, "the busiest of the client's %d threads used %.0f%% of a CPU core: the client may be the "
                     "bottleneck", threads, loop_max * 100);
        if (lv->completed == 0 && lv->requests > 0)
                warn(lv, "no request completed");
}

json_t *bench_level_json(struct bench_level *lv) {
        /* The window of the level: first counted send to last counted completion. */
        double window = lv->last_done > lv->first_send ? (double)(lv->last_done - lv->first_send) / 1e6 : 0;
        double per_s = window > 0 ? 1.0 / window : 0;
        double cpu = lv->cpu_user_s + lv->cpu_sys_s;
        double cores = lv->wall_s > 0 ? cpu / lv->wall_s : 0;
        int threads = MAX(lv->threads, 1);
        /* one loop: its thread is the whole client (loop_cpu_max_s may be left unset) */
        double loop_max = lv->wall_s > 0 ? (threads > 1 ? lv->loop_cpu_max_s : cpu) / lv->wall_s : 0;
        bool late = lv->late && (double)lv->late > 0.01 * (double)lv->requests;
        bool bound = loop_max >= BENCH_CPU_BOUND || hist_percentile(&lv->own_delay, 50) > BENCH_LATE_USEC;

        level_warnings(lv, threads, cores, loop_max, late);

        double tpc = lv->chunks ? (double)lv->output_tokens / (double)lv->chunks : 0;
        double achieved = lv->requests > 1 && lv->last_send > lv->first_send
                                  ? (double)(lv->requests - 1) * 1e6 / (double)(lv->last_send - lv->first_send)
                                  : 0;
        json_t *o = json_pack(
                "{s:i, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:O, s:f, s:I, s:I, s:f, s:f, s:f,"
                " s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:I, s:f}",
                metric_key(METRIC_CONCURRENCY), lv->concurrency,
                metric_key(METRIC_OUTPUT_TOKENS_PER_S), r3((double)lv->output_tokens * per_s),
                metric_key(METRIC_REQUESTS), (json_int_t)lv->requests,
                metric_key(METRIC_COMPLETED), (json_int_t)lv->completed,
                metric_key(METRIC_FAILED), (json_int_t)lv->failed,
                metric_key(METRIC_ABORTED), (json_int_t)lv->aborted,
                metric_key(METRIC_RESENT), (json_int_t)lv->resent,
                metric_key(METRIC_EVENTS_AFTER_DONE), (json_int_t)lv->after_done,
                metric_key(METRIC_ERRORS), lv->errors,
                metric_key(METRIC_DURATION_S), r3(window),
                metric_key(METRIC_OUTPUT_TOKENS), (json_int_t)lv->output_tokens,
                metric_key(METRIC_PROMPT_TOKENS), (json_int_t)lv->prompt_tokens,
                metric_key(METRIC_TOTAL_TOKENS_PER_S), r3((double)(lv->output_tokens + lv->prompt_tokens) * per_s),
                metric_key(METRIC_REQUESTS_PER_S), r3((double)lv->completed * per_s),
                metric_key(METRIC_TOKENS_PER_CHUNK), r3(tpc),
                metric_key(METRIC_TTFT_MS), dist_json(&lv->ttft),
                metric_key(METRIC_ITL_MS), dist_json(&lv->itl),
                metric_key(METRIC_TPOT_MS), dist_json(&lv->tpot),
                metric_key(METRIC_E2E_MS), dist_json(&lv->e2e),
                metric_key(METRIC_SEND_DELAY_MS), dist_json(&lv->send_delay),
                metric_key(METRIC_CONNECT_MS), dist_json(&lv->connect),
                metric_key(METRIC_PRECONNECTED), lv->preconnected,
                metric_key(METRIC_CHUNKS), (json_int_t)lv->chunks,
                metric_key(METRIC_SEND_RATE_PER_S), r3(achieved));
        if (!o)
                return NULL;
        if (lv->first_error[0])
                json_object_set_new(o, metric_key(METRIC_FIRST_ERROR), json_string(lv->first_error));
        json_object_set_new(o, metric_key(METRIC_PROMPT_TOKENS_PER_REQUEST),
                            count_json(lv->prompt_tokens, lv->prompt_count, lv->prompt_min, lv->prompt_max));
        json_object_set_new(o, metric_key(METRIC_OUTPUT_TOKENS_PER_REQUEST),
                            count_json(lv->output_tokens, lv->completed, lv->output_min, lv->output_max));
        if (lv->rate > 0)
                json_object_set_new(o, metric_key(METRIC_RATE), json_real(lv->rate));
        if (lv->slo_ttft || lv->slo_tpot || lv->slo_e2el)
                json_object_set_new(o, metric_key(METRIC_GOODPUT),
                                    json_pack("{s:o, s:o, s:o, s:f, s:f, s:I}",
                                              metric_key(METRIC_GOODPUT_SLO_TTFT_MS),
                                              lv->slo_ttft ? json_real(r3((double)lv->slo_ttft / 1e3)) : json_null(),
                                              metric_key(METRIC_GOODPUT_SLO_TPOT_MS),
                                              lv->slo_tpot ? json_real(r3((double)lv->slo_tpot / 1e3)) : json_null(),
                                              metric_key(METRIC_GOODPUT_SLO_E2EL_MS),
                                              lv->slo_e2el ? json_real(r3((double)lv->slo_e2el / 1e3)) : json_null(),
                                              metric_key(METRIC_GOODPUT_REQUESTS_PER_S), r3((double)lv->good * per_s),
                                              metric_key(METRIC_GOODPUT_OUTPUT_TOKENS_PER_S),
                                              r3((double)lv->good_tokens * per_s),
                                              metric_key(METRIC_GOODPUT_GOOD), (json_int_t)lv->good));
        json_object_set_new(o, metric_key(METRIC_CLIENT_CPU),
                            json_pack("{s:f, s:f, s:f, s:f, s:I, s:f, s:I, s:f, s:i, s:i}",
                                      metric_key(METRIC_CPU_USER_S), r3(lv->cpu_user_s),
                                      metric_key(METRIC_CPU_SYS_S), r3(lv->cpu_sys_s),
                                      metric_key(METRIC_CPU_WALL_S), r3(lv->wall_s),
                                      metric_key(METRIC_CPU_CORES), r3(cores),
                                      metric_key(METRIC_CPU_EVENTS), (json_int_t)lv->events,
                                      metric_key(METRIC_CPU_EVENTS_PER_CPU_S), cpu > 0 ? r3((double)lv->events / cpu) : 0.0,
                                      metric_key(METRIC_CPU_READS), (json_int_t)lv->reads,
                                      metric_key(METRIC_CPU_EVENTS_PER_READ),
                                      lv->reads ? r3((double)lv->events / (double)lv->reads) : 0.0,
                                      metric_key(METRIC_CPU_RSS_KB_START), (int)lv->rss_kb_start,
                                      metric_key(METRIC_CPU_RSS_KB_PEAK), (int)lv->rss_kb_peak));
        json_t *cpu_o = json_object_get(o, metric_key(METRIC_CLIENT_CPU));
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_THREADS), json_integer(threads));
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_LOOP_CORES_MAX), json_real(r3(loop_max)));
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_BOUND), json_boolean(bound));
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_HOST_STEAL),
                            isfinite(lv->host_steal) ? json_real(r3(lv->host_steal)) : json_null());
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_HOST_OTHERS),
                            isfinite(lv->host_others) ? json_real(r3(lv->host_others)) : json_null());
        json_object_set_new(cpu_o, metric_key(METRIC_CPU_HOST_IDLE),
                            isfinite(lv->host_idle) ? json_real(r3(lv->host_idle)) : json_null());
        json_object_set_new(o, metric_key(METRIC_USAGE_CHECK),
                            json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", metric_key(METRIC_USAGE_METHOD),
                                      lv->tokenized && lv->count_method ? lv->count_method : "chunks",
                                      metric_key(METRIC_USAGE_TOKENIZED),
                                      (json_int_t)lv->tokenized, metric_key(METRIC_USAGE_REQUESTS),
                                      (json_int_t)lv->usage_requests, metric_key(METRIC_USAGE_TOKENS),
                                      (json_int_t)MIN(lv->usage_tokens, (uint64_t)INT64_MAX),
                                      metric_key(METRIC_USAGE_COUNTED), (json_int_t)lv->usage_counted,
                                      metric_key(METRIC_USAGE_DISAGREE), (json_int_t)lv->usage_disagree,
                                      metric_key(METRIC_USAGE_OVER_MAX), (json_int_t)lv->usage_over_max));
        if (bench_level_vllm(lv, o) < 0) {
                json_decref(o);
                return NULL;
        }
        if (lv->timed)
                json_object_set_new(
                        o, metric_key(METRIC_SERVER_TIMINGS),
                        json_pack("{s:I, s:I, s:I, s:o}", metric_key(METRIC_ST_REQUESTS), (json_int_t)lv->timed,
                                  metric_key(METRIC_ST_PROMPT_COMPUTED), (json_int_t)lv->timed_prompt_n,
                                  metric_key(METRIC_ST_PROMPT_CACHED), (json_int_t)lv->timed_cache_n,
                                  metric_key(METRIC_ST_CACHE_HIT_RATE),
                                  lv->timed_prompt_n + lv->timed_cache_n
                                          ? json_real(round(1e4 * (double)lv->timed_cache_n /
                                                            (double)(lv->timed_prompt_n + lv->timed_cache_n)) / 1e4)
                                          : json_null()));
        if (lv->server)
                json_object_set(o, metric_key(METRIC_SERVER_METRICS), lv->server);
        json_object_set(o, metric_key(METRIC_WARNINGS), lv->warnings);
        if (lv->calibration)
                json_object_set(o, metric_key(METRIC_PROMPT_CALIBRATION), lv->calibration);
        if (lv->workload)
                json_object_set(o, metric_key(METRIC_WORKLOAD), lv->workload);
        if (lv->sessions)
                json_object_set(o, metric_key(METRIC_SESSIONS), lv->sessions);
        if (lv->under_load)
                json_object_set(o, metric_key(METRIC_CHECKS_UNDER_LOAD), lv->under_load);
        json_object_set_new(o, metric_key(METRIC_OUTPUTS_JUDGED), json_integer((json_int_t)lv->outputs_judged));
        json_object_set_new(o, metric_key(METRIC_OUTPUTS_FLAGGED), json_integer((json_int_t)lv->outputs_flagged));
        json_object_set(o, metric_key(METRIC_FLAGGED), lv->flagged);
        if (lv->eval_under_load)
                json_object_set(o, metric_key(METRIC_EVAL_UNDER_LOAD), lv->eval_under_load);
        /* set on the level entries bench_run combines or searches, not by a single run */
        if (lv->repeats > 1)
                json_object_set_new(o, metric_key(METRIC_REPEATS), json_integer(lv->repeats));
        if (lv->spread)
                json_object_set(o, metric_key(METRIC_SPREAD), lv->spread);
        if (lv->search)
                json_object_set_new(o, metric_key(METRIC_SEARCH), json_true());
        return o;
}

int bench_goodput_parse(const char *s, usec_t *ttft, usec_t *tpot, usec_t *e2el, char **ret_error) {
        static const char *const keys[] = {"ttft", "tpot", "e2el"};
        usec_t got[3] = {0};
        bool any = false;
        const char *p = s ? s : "";
        for (;;) {
                while (*p == ' ' || *p == '\t' || *p == ',')
                        p++;
                if (!*p)
                        break;
                size_t n = strcspn(p, " \t,");
                const char *colon = memchr(p, ':', n);
                int k = -1;
                for (int i = 0; colon && i < 3; i++)
                        if ((size_t)(colon - p) == strlen(keys[i]) && memcmp(p, keys[i], strlen(keys[i])) == 0)
                                k = i;
                if (k < 0) {
                        *ret_error = strdup_printf("'%.*s' is not KEY:MS with KEY ttft, tpot or e2el", (int)MIN(n, 64),
                                                   p);
                        return -EINVAL;
                }
                char num[32];
                size_t vn = n - (size_t)(colon + 1 - p);
                char *end = NULL;
                double v = -1;
                if (vn > 0 && vn < sizeof(num)) {
                        memcpy(num, colon + 1, vn);
                        num[vn] = '\0';
                        errno = 0;
                        v = strtod(num, &end);
                }
                if (vn == 0 || vn >= sizeof(num) || errno || *end || !(v > 0) || v > 1e9) {
                        *ret_error = strdup_printf("'%.*s': the %s SLO must be a number of milliseconds above 0",
                                                   (int)MIN(n, 64), p, keys[k]);
                        return -EINVAL;
                }
                got[k] = (usec_t)llround(v * 1000.0);
                any = true;
                p += n;
        }
        if (!any) {
                *ret_error = strdup("no SLO given (want ttft:MS, tpot:MS and/or e2el:MS)");
                return -EINVAL;
        }
        usec_t *dst[] = {ttft, tpot, e2el};
        for (int i = 0; i < 3; i++)
                if (got[i])
                        *dst[i] = got[i];
        return 0;
}
