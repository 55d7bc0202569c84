/* scrape.c -- the server's own metrics: Prometheus /metrics around and during a bench level. */
#include "bench/scrape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/metrics.h"
#include "io/http.h"

/* Which series is which figure. Counters are matched with and without "_total". Where each
 * name comes from: docs/metrics.md "The server's own metrics". */
static const struct {
        const char *name;
        enum scrape_figure figure;
} names[] = {
        /* vLLM (V1 engine; the gpu_ names are the older V0 ones) */
        {"vllm:kv_cache_usage_perc", SCRAPE_KV_USAGE},
        {"vllm:gpu_cache_usage_perc", SCRAPE_KV_USAGE},
        {"vllm:num_requests_running", SCRAPE_RUNNING},
        {"vllm:num_requests_waiting", SCRAPE_WAITING},
        {"vllm:prefix_cache_queries", SCRAPE_PREFIX_QUERIES},
        {"vllm:gpu_prefix_cache_queries", SCRAPE_PREFIX_QUERIES},
        {"vllm:prefix_cache_hits", SCRAPE_PREFIX_HITS},
        {"vllm:gpu_prefix_cache_hits", SCRAPE_PREFIX_HITS},
        {"vllm:gpu_prefix_cache_hit_rate", SCRAPE_PREFIX_HIT_RATE},
        {"vllm:num_preemptions", SCRAPE_PREEMPTIONS},
        {"vllm:prompt_tokens", SCRAPE_PROMPT_TOKENS},
        /* SGLang (--enable-metrics) */
        {"sglang:token_usage", SCRAPE_KV_USAGE},
        {"sglang:num_running_reqs", SCRAPE_RUNNING},
        {"sglang:num_queue_reqs", SCRAPE_WAITING},
        {"sglang:cache_hit_rate", SCRAPE_PREFIX_HIT_RATE},
        {"sglang:num_retracted_requests", SCRAPE_PREEMPTIONS},
        {"sglang:prompt_tokens", SCRAPE_PROMPT_TOKENS},
        /* llama.cpp (llama-server --metrics); kv_cache_usage_ratio only in older builds */
        {"llamacpp:kv_cache_usage_ratio", SCRAPE_KV_USAGE},
        {"llamacpp:requests_processing", SCRAPE_RUNNING},
        {"llamacpp:requests_deferred", SCRAPE_WAITING},
        {"llamacpp:prompt_tokens", SCRAPE_PROMPT_TOKENS},
};

static const char *const engines[] = {"vllm", "sglang", "llamacpp"};

/* Whether v can be a sample of figure f: the ratios 0..1, the counts whole-ish numbers from
 * 0 to 1e15. A KV gauge of -7 or 1e308 is a broken exporter, never "-700.0%" or "inf%". */
static bool in_range(enum scrape_figure f, double v) {
        if (f == SCRAPE_KV_USAGE || f == SCRAPE_PREFIX_HIT_RATE)
                return v >= 0 && v <= 1;
        return v >= 0 && v <= 1e15;
}

static bool is_counter(enum scrape_figure f) {
        return f == SCRAPE_PREFIX_QUERIES || f == SCRAPE_PREFIX_HITS || f == SCRAPE_PREEMPTIONS ||
               f == SCRAPE_PROMPT_TOKENS;
}

/* max over series for ratios, a sum for counts */
static bool takes_max(enum scrape_figure f) {
        return f == SCRAPE_KV_USAGE || f == SCRAPE_PREFIX_HIT_RATE;
}

/* The entry of names[] that the series is, or -1. */
static int series_of(const char *name, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                size_t k = strlen(names[i].name);
                if (n < k || memcmp(name, names[i].name, k) != 0)
                        continue;
                if (n == k || (is_counter(names[i].figure) && n == k + 6 && memcmp(name + k, "_total", 6) == 0))
                        return (int)i;
        }
        return -1;
}

static bool name_start(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool name_char(char c) {
        return name_start(c) || (c >= '0' && c <= '9');
}

static bool blank(char c) {
        return c == ' ' || c == '\t';
}

/* The labels "{a="x",b="y"}" from p (at '{') within end: returns the byte after '}', or
 * NULL when they are malformed. Values may hold \\, \" and \n escapes, nothing else. */
static const char *skip_labels(const char *p, const char *end) {
        p++;
        for (;;) {
                while (p < end && blank(*p))
                        p++;
                if (p < end && *p == '}')
                        return p + 1;
                if (p >= end || !(name_start(*p) && *p != ':'))
                        return NULL;
                while (p < end && name_char(*p) && *p != ':')
                        p++;
                while (p < end && blank(*p))
                        p++;
                if (p >= end || *p++ != '=')
                        return NULL;
                while (p < end && blank(*p))
                        p++;
                if (p >= end || *p++ != '"')
                        return NULL;
                for (;;) {
                        if (p >= end)
                                return NULL;
                        if (*p == '"')
                                break;
                        if (*p == '\\') {
                                if (p + 1 >= end || (p[1] != '\\' && p[1] != '"' && p[1] != 'n'))
                                        return NULL;
                                p += 2;
                                continue;
                        }
                        p++;
                }
                p++;
                while (p < end && blank(*p))
                        p++;
                if (p < end && *p == ',') {
                        p++;
                        continue;
                }
                if (p < end && *p == '}')
                        return p + 1;
                return NULL;
        }
}

/* A number token [p, end): Go's ParseFloat forms as strtod reads them ("NaN", "+Inf",
 * "1.5e+06"). */
static bool parse_number(const char *p, size_t n, double *ret) {
        char tmp[64];
        if (n == 0 || n >= sizeof(tmp))
                return false;
        memcpy(tmp, p, n);
        tmp[n] = '\0';
        char *e;
        errno = 0;
        double v = strtod(tmp, &e);
        /* an overflow is no number; "+Inf" itself sets no ERANGE, an underflow is near 0 */
        if (e != tmp + n || (errno == ERANGE && isinf(v)))
                return false;
        *ret = v;
        return true;
}

static bool parse_timestamp(const char *p, size_t n) {
        size_t i = p[0] == '-' ? 1 : 0;
        if (n <= i || n > 20)
                return false;
        for (; i < n; i++)
                if (p[i] < '0' || p[i] > '9')
                        return false;
        return true;
}

static uint64_t fnv(uint64_t h, const char *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char)p[i];
                h *= UINT64_C(1099511628211);
        }
        return h;
}

struct parse_state {
        struct scrape_sample *s;
        uint64_t seen[SCRAPE_MAX_SERIES];
        size_t n_seen;
};

static void parse_line(struct parse_state *st, const char *p, const char *end) {
        struct scrape_sample *s = st->s;
        while (p < end && blank(*p))
                p++;
        if (p == end || *p == '#')
                return;
        const char *name = p;
        if (!name_start(*p)) {
                s->skipped++;
                return;
        }
        while (p < end && name_char(*p))
                p++;
        size_t name_len = (size_t)(p - name);
        const char *labels = p, *labels_end = p;
        if (p < end && *p == '{') {
                labels_end = skip_labels(p, end);
                if (!labels_end) {
                        s->skipped++;
                        return;
                }
                p = labels_end;
        }
        if (p >= end || !blank(*p)) {
                s->skipped++;
                return;
        }
        while (p < end && blank(*p))
                p++;
        const char *val = p;
        while (p < end && !blank(*p))
                p++;
        double v;
        if (!parse_number(val, (size_t)(p - val), &v)) {
                s->skipped++;
                return;
        }
        while (p < end && blank(*p))
                p++;
        if (p < end) {
                const char *ts = p;
                while (p < end && !blank(*p))
                        p++;
                size_t tn = (size_t)(p - ts);
                while (p < end && blank(*p))
                        p++;
                if (!parse_timestamp(ts, tn) || p < end) {
                        s->skipped++;
                        return;
                }
        }
        s->samples++;
        if (!s->engine)
                for (size_t i = 0; i < ELEMENTSOF(engines); i++) {
                        size_t k = strlen(engines[i]);
                        if (name_len > k && memcmp(name, engines[i], k) == 0 && name[k] == ':')
                                s->engine = engines[i];
                }
        int series = series_of(name, name_len);
        if (series < 0)
                return;
        int f = (int)names[series].figure;
        uint64_t h = fnv(fnv(UINT64_C(14695981039346656037), name, name_len), labels, (size_t)(labels_end - labels));
        for (size_t i = 0; i < st->n_seen; i++)
                if (st->seen[i] == h) {
                        s->duplicates++;
                        return;
                }
        if (st->n_seen >= SCRAPE_MAX_SERIES) {
                s->skipped++;
                return;
        }
        st->seen[st->n_seen++] = h;
        if (!isfinite(v)) {
                s->non_finite++;
                return;
        }
        if (!in_range((enum scrape_figure)f, v)) {
                s->out_of_range++;
                return;
        }
        if (f == SCRAPE_KV_USAGE && (!s->has[f] || v > s->value[f]))
                s->kv_series = names[series].name;
        if (!s->has[f])
                s->value[f] = v;
        else if (takes_max((enum scrape_figure)f))
                s->value[f] = MAX(s->value[f], v);
        else
                s->value[f] += v;
        s->has[f] = true;
}

void scrape_parse(const char *text, size_t len, struct scrape_sample *ret) {
        struct parse_state *st = calloc(1, sizeof(*st));
        struct parse_state fallback;
        *ret = (struct scrape_sample){0};
        if (!st) {
                /* the state is 2 KiB: on the stack it is fine too */
                memset(&fallback, 0, sizeof(fallback));
                st = &fallback;
        }
        st->s = ret;
        const char *p = text ? text : "", *end = p + (text ? len : 0);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end;
                const char *stop = le;
                if (stop > p && stop[-1] == '\r')
                        stop--;
                if ((size_t)(stop - p) > SCRAPE_MAX_LINE)
                        ret->skipped++;
                else
                        parse_line(st, p, stop);
                p = nl ? nl + 1 : end;
        }
        if (st != &fallback)
                free(st);
}

/* ---- llama.cpp's /slots ------------------------------------------------------------------ */

/* A whole number in [lo, hi] at key k of o; absent: *ret untouched and true when optional. */
static bool slot_int(json_t *o, const char *k, json_int_t lo, json_int_t hi, bool optional, json_int_t *ret) {
        json_t *v = json_object_get(o, k);
        if (!v)
                return optional;
        if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
                return false;
        *ret = json_integer_value(v);
        return true;
}

int scrape_slots_parse(const char *text, size_t len, struct scrape_slots *ret_slots) {
        if (!text || len == 0)
                return -EBADMSG;
        /* a key twice in an object is no slot; NUL in a string is refused by default */
        json_t *a = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
        if (!a)
                return -EBADMSG;
        int r = -EBADMSG;
        size_t n = json_is_array(a) ? json_array_size(a) : 0;
        if (n == 0 || n > SCRAPE_MAX_SLOTS)
                goto out;
        struct scrape_slots res = {0};
        for (size_t i = 0; i < n; i++) {
                json_t *o = json_array_get(a, i);
                json_int_t n_ctx = 0, held = 0, id = -1;
                if (!json_is_object(o) || !slot_int(o, "n_ctx", 1, INT32_MAX, false, &n_ctx) ||
                    !slot_int(o, "n_prompt_tokens", 0, n_ctx, true, &held) ||
                    !slot_int(o, "id", 0, INT32_MAX, true, &id))
                        goto out;
                /* an id twice: the page is not one server's slots */
                for (size_t j = 0; id >= 0 && j < i; j++) {
                        json_t *other = json_object_get(json_array_get(a, j), "id");
                        if (other && json_integer_value(other) == id)
                                goto out;
                }
                res.slots++;
                res.held += (double)held;
                res.cells += (double)n_ctx;
                res.max_ctx = MAX(res.max_ctx, (double)n_ctx);
        }
        *ret_slots = res;
        r = 0;
out:
        json_decref(a);
        return r;
}

/* ---- a level's pages ------------------------------------------------------------------- */

void scrape_level_add(struct scrape_level *a, const struct scrape_sample *s) {
        if (a->scrapes == 0)
                a->first = *s;
        a->last = *s;
        a->scrapes++;
        if (s->kv_series)
                a->kv_series = s->kv_series;
        a->skipped += s->skipped;
        a->duplicates += s->duplicates;
        a->non_finite += s->non_finite;
        a->out_of_range += s->out_of_range;
        for (int f = 0; f < _SCRAPE_FIGURE_MAX; f++) {
                if (!s->has[f] || is_counter((enum scrape_figure)f))
                        continue;
                a->peak[f] = a->peak_has[f] ? MAX(a->peak[f], s->value[f]) : s->value[f];
                a->peak_has[f] = true;
                a->sum[f] += s->value[f];
                a->n[f]++;
        }
}

static const char *const kv_layout_names[_SCRAPE_KV_LAYOUT_MAX] = {
        [SCRAPE_KV_UNKNOWN] = "unknown",
        [SCRAPE_KV_SPLIT] = "split",
        [SCRAPE_KV_UNIFIED] = "unified",
};

const char *scrape_kv_layout_name(enum scrape_kv_layout l) {
        return l >= 0 && l < _SCRAPE_KV_LAYOUT_MAX ? kv_layout_names[l] : "unknown";
}

int scrape_kv_layout_from_name(const char *name, enum scrape_kv_layout *ret) {
        if (name && strcmp(name, "unified") == 0)
                *ret = SCRAPE_KV_UNIFIED;
        else if (name && strcmp(name, "split") == 0)
                *ret = SCRAPE_KV_SPLIT;
        else
                return -EINVAL;
        return 0;
}

void scrape_level_add_slots(struct scrape_level *a, const struct scrape_slots *s) {
        double u;
        if (a->kv_layout == SCRAPE_KV_UNIFIED) {
                /* every slot's n_ctx is the whole cache: held over it once, not once a slot */
                double cells = a->kv_cells > 0 ? a->kv_cells : s->max_ctx;
                u = cells > 0 ? s->held / cells : 0;
                if (u > 1) {
                        a->slots_over++;
                        u = 1;
                }
        } else {
                u = s->cells > 0 ? s->held / s->cells : 0;
        }
        a->slots_peak = a->slots_has ? MAX(a->slots_peak, u) : u;
        a->slots_has = true;
        a->slots_scrapes++;
}

/* Four decimals; a value too large to have any (a server's nonsense, 1e305) as it is, where
 * x * 10000 would overflow to Inf. */
static double r4(double x) {
        if (!(fabs(x) < 1e15))
                return x;
        return round(x * 10000.0) / 10000.0;
}

/* A ratio as a JSON real, or null when it is not finite (a mean whose sum overflowed):
 * jansson makes no real of NaN or Inf, and a NULL would fail the whole object. */
static json_t *real_or_null(double x) {
        x = r4(x);
        return isfinite(x) ? json_real(x) : json_null();
}

/* The counter's growth over the level, or -1 when it cannot be told. */
static double delta(const struct scrape_level *a, enum scrape_figure f) {
        if (a->scrapes < 2 || !a->first.has[f] || !a->last.has[f] || a->last.value[f] < a->first.value[f])
                return -1;
        return a->last.value[f] - a->first.value[f];
}

static json_t *count_or_null(double v) {
        return v >= 0 ? json_integer((json_int_t)llround(MIN(v, 9e15))) : json_null();
}

json_t *scrape_level_json(const struct scrape_level *a) {
        double q = delta(a, SCRAPE_PREFIX_QUERIES), h = delta(a, SCRAPE_PREFIX_HITS);
        json_t *rate = json_null(), *from = json_null();
        if (q > 0 && h >= 0) {
                rate = real_or_null(MIN(h / q, 1.0));
                from = json_string("counters");
        } else if (a->n[SCRAPE_PREFIX_HIT_RATE] > 0) {
                rate = real_or_null(a->sum[SCRAPE_PREFIX_HIT_RATE] / a->n[SCRAPE_PREFIX_HIT_RATE]);
                from = json_is_null(rate) ? json_null() : json_string("gauge");
        }
        const char *engine = a->last.engine ? a->last.engine : a->first.engine;
        /* the server's own series first; the /slots estimate where it has none */
        json_t *kv = json_null(), *kv_from = json_null(), *layout = json_null();
        if (a->peak_has[SCRAPE_KV_USAGE]) {
                kv = real_or_null(a->peak[SCRAPE_KV_USAGE]);
                kv_from = a->kv_series ? json_string(a->kv_series) : json_null();
        } else if (a->slots_has) {
                kv = real_or_null(a->slots_peak);
                kv_from = json_string("slots");
                layout = json_string(scrape_kv_layout_name(a->kv_layout));
        }
        return json_pack("{s:o, s:I, s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, "
                         "s:I, s:I, s:I, s:I}",
                         metric_key(METRIC_SM_ENGINE), engine ? json_string(engine) : json_null(),
                         metric_key(METRIC_SM_SCRAPES), (json_int_t)a->scrapes,
                         metric_key(METRIC_SM_FAILED_SCRAPES), (json_int_t)a->failed,
                         metric_key(METRIC_SM_KV_CACHE_USAGE_PEAK), kv,
                         metric_key(METRIC_SM_KV_CACHE_SOURCE), kv_from,
                         metric_key(METRIC_SM_KV_CACHE_LAYOUT), layout,
                         metric_key(METRIC_SM_KV_CACHE_CAPPED_PAGES), (json_int_t)a->slots_over,
                         metric_key(METRIC_SM_RUNNING_PEAK),
                         a->peak_has[SCRAPE_RUNNING] ? count_or_null(a->peak[SCRAPE_RUNNING]) : json_null(),
                         metric_key(METRIC_SM_WAITING_PEAK),
                         a->peak_has[SCRAPE_WAITING] ? count_or_null(a->peak[SCRAPE_WAITING]) : json_null(),
                         metric_key(METRIC_SM_PREFIX_CACHE_HIT_RATE), rate,
                         metric_key(METRIC_SM_PREFIX_CACHE_HIT_RATE_FROM), from,
                         metric_key(METRIC_SM_PREFIX_CACHE_QUERIES), count_or_null(q),
                         metric_key(METRIC_SM_PREFIX_CACHE_HITS), count_or_null(h),
                         metric_key(METRIC_SM_PREEMPTIONS), count_or_null(delta(a, SCRAPE_PREEMPTIONS)),
                         metric_key(METRIC_SM_PROMPT_TOKENS), count_or_null(delta(a, SCRAPE_PROMPT_TOKENS)),
                         metric_key(METRIC_SM_TRUNCATED_SCRAPES), (json_int_t)a->truncated,
                         metric_key(METRIC_SM_SKIPPED_LINES), (json_int_t)a->skipped,
                         metric_key(METRIC_SM_DUPLICATE_SERIES), (json_int_t)a->duplicates,
                         metric_key(METRIC_SM_NON_FINITE), (json_int_t)a->non_finite,
                         metric_key(METRIC_SM_OUT_OF_RANGE), (json_int_t)a->out_of_range,
                         metric_key(METRIC_SM_SLOTS_SCRAPES), (json_int_t)a->slots_scrapes,
                         metric_key(METRIC_SM_FAILED_SLOTS_SCRAPES), (json_int_t)a->slots_failed,
                         metric_key(METRIC_SM_SKIPPED_SLOTS_PAGES), (json_int_t)a->slots_skipped);
}

/* ---- fetching ---------------------------------------------------------------------------- */

/* llama.cpp's /slots, for a server whose /metrics is llama.cpp's */
enum slots_state {
        SLOTS_UNKNOWN,  /* not asked: the engine is not known to be llama.cpp yet */
        SLOTS_ASK,      /* llama.cpp: ask; its first answer decides */
        SLOTS_ON,       /* it answered 200 once: read it with every scrape */
        SLOTS_NONE,     /* its first answer was not 200, or none: never asked again */
};

struct scrape {
        struct loop *l;
        char *url;
        char *slots_url;
        int tfd;                    /* the scrapes during a level: one-shot, re-armed */
        usec_t gap;                 /* until the next of them */
        struct http_transfer *inflight; /* one during the level at most */
        struct http_transfer *slots_inflight; /* the same for /slots */
        struct scrape_level lv;
        bool decided;               /* the first scrape has answered */
        bool none;                  /* the server has no metrics: nothing more is done */
        bool noted;                 /* scrape_note said so */
        enum slots_state slots;
        bool slots_noted;
        char why[160];
        char slots_why[160];
        enum scrape_kv_layout kv_layout; /* scrape_set_kv_layout: each level's from it */
        double kv_cells;
};

static struct http_request request(struct scrape *s, const char *url) {
        return (struct http_request){
                .method = "GET",
                .url = url,
                .timeout = SCRAPE_TIMEOUT,
                .max_body = SCRAPE_MAX_BODY,
                .own_connection = true,
        };
}

/* Takes one answer into the level. On the scraper's first, decides whether there are
 * metrics at all. */
static void take(struct scrape *s, int r, const struct http_response *resp) {
        bool first = !s->decided;
        s->decided = true;
        if (r < 0 || resp->error || resp->status != 200) {
                if (first) {
                        s->none = true;
                        if (resp->status > 0)
                                snprintf(s->why, sizeof(s->why), "GET /metrics answered HTTP %d", resp->status);
                        else
                                snprintf(s->why, sizeof(s->why), "GET /metrics got no answer (%s)",
                                         http_strerror(r < 0 ? r : resp->error));
                }
                s->lv.failed++;
                return;
        }
        size_t len = resp->body.len;
        if (resp->truncated) {
                /* the last line may be cut: drop it */
                while (len > 0 && resp->body.data[len - 1] != '\n')
                        len--;
                s->lv.truncated++;
        }
        struct scrape_sample smp;
        scrape_parse(resp->body.data, len, &smp);
        if (first && smp.samples == 0) {
                s->none = true;
                snprintf(s->why, sizeof(s->why), "GET /metrics answered no Prometheus sample (%zu lines skipped)",
                         smp.skipped);
                return;
        }
        scrape_level_add(&s->lv, &smp);
        if (s->slots == SLOTS_UNKNOWN && smp.engine && strcmp(smp.engine, "llamacpp") == 0)
                s->slots = SLOTS_ASK;
}

/* Takes one /slots answer into the level; the first decides whether there is one. */
static void take_slots(struct scrape *s, int r, const struct http_response *resp) {
        bool first = s->slots == SLOTS_ASK;
        if (r < 0 || resp->error || resp->status != 200) {
                if (first) {
                        s->slots = SLOTS_NONE;
                        /* bench.c puts "no server metrics: " before it */
                        if (resp->status > 0)
                                snprintf(s->slots_why, sizeof(s->slots_why),
                                         "KV-cache usage (llama.cpp's GET /slots answered HTTP %d)", resp->status);
                        else
                                snprintf(s->slots_why, sizeof(s->slots_why),
                                         "KV-cache usage (llama.cpp's GET /slots got no answer: %s)",
                                         http_strerror(r < 0 ? r : resp->error));
                }
                s->lv.slots_failed++;
                return;
        }
        s->slots = SLOTS_ON;
        struct scrape_slots sl;
        /* a page cut at the cap is no JSON: not taken */
        if (resp->truncated || scrape_slots_parse(resp->body.data, resp->body.len, &sl) < 0) {
                s->lv.slots_skipped++;
                return;
        }
        scrape_level_add_slots(&s->lv, &sl);
}

static bool slots_wanted(const struct scrape *s) {
        return s->slots == SLOTS_ASK || s->slots == SLOTS_ON;
}

static void on_scraped(struct http_transfer *t, void *userdata) {
        struct scrape *s = userdata;
        take(s, 0, http_transfer_response(t));
        s->inflight = NULL;
        http_transfer_free(t);
}

static void on_slots_scraped(struct http_transfer *t, void *userdata) {
        struct scrape *s = userdata;
        take_slots(s, 0, http_transfer_response(t));
        s->slots_inflight = NULL;
        http_transfer_free(t);
}

/* The next scrape during the level after `after`, or none (0). */
static void arm(struct scrape *s, usec_t after) {
        struct itimerspec its = {0};
        its.it_value.tv_sec = (time_t)(after / USEC_PER_SEC);
        its.it_value.tv_nsec = (long)(after % USEC_PER_SEC) * 1000;
        timerfd_settime(s->tfd, 0, &its, NULL);
}

static void on_tick(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct scrape *s = userdata;
        uint64_t n;
        if (read(fd, &n, sizeof(n)) < 0 || s->none)
                return;
        s->gap = s->gap * 2 < SCRAPE_INTERVAL ? s->gap * 2 : SCRAPE_INTERVAL;
        arm(s, s->gap);
        /* one in flight still: this tick is skipped for it, not stacked */
        if (!s->inflight) {
                struct http_request req = request(s, s->url);
                if (http_start(s->l, &req, on_scraped, s, &s->inflight) < 0) {
                        s->inflight = NULL;
                        s->lv.failed++;
                }
        }
        if (slots_wanted(s) && !s->slots_inflight) {
                struct http_request req = request(s, s->slots_url);
                if (http_start(s->l, &req, on_slots_scraped, s, &s->slots_inflight) < 0) {
                        s->slots_inflight = NULL;
                        s->lv.slots_failed++;
                }
        }
}

int scrape_new(struct loop *l, const char *base_url, struct scrape **ret) {
        if (!l || !base_url)
                return -EINVAL;
        struct scrape *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->l = l;
        s->tfd = -1;
        size_t blen = strlen(base_url);
        while (blen > 0 && base_url[blen - 1] == '/')
                blen--;
        s->url = strdup_printf("%.*s/metrics", (int)blen, base_url);
        s->slots_url = strdup_printf("%.*s/slots", (int)blen, base_url);
        if (!s->url || !s->slots_url) {
                free(s->url);
                free(s->slots_url);
                free(s);
                return -ENOMEM;
        }
        s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        int r = s->tfd < 0 ? -errno : loop_watch_fd(l, s->tfd, EPOLLIN, on_tick, s);
        if (r < 0) {
                scrape_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void scrape_free(struct scrape *s) {
        if (!s)
                return;
        http_transfer_free(s->inflight);
        http_transfer_free(s->slots_inflight);
        if (s->tfd >= 0) {
                loop_unwatch_fd(s->l, s->tfd);
                close(s->tfd);
        }
        free(s->url);
        free(s->slots_url);
        free(s);
}


/* One GET of url, waited for, handed to fn. */
static int fetch_now(struct scrape *s, const char *url,
                     void (*fn)(struct scrape *s, int r, const struct http_response *resp)) {
        struct http_request req = request(s, url);
        struct http_response resp;
        int r = http_run(s->l, &req, USEC_INFINITY, &resp);
        if (r == -EINTR || r == -ENOMEM) {
                http_response_release(&resp);
                return r;
        }
        fn(s, r, &resp);
        http_response_release(&resp);
        return 0;
}

/* One scrape, waited for: /metrics, then /slots where it is wanted (one after the other, so
 * the two never share a moment on the server's queue). */
static int scrape_now(struct scrape *s) {
        int r = fetch_now(s, s->url, take);
        if (r < 0 || s->none || !slots_wanted(s))
                return r;
        return fetch_now(s, s->slots_url, take_slots);
}

void scrape_set_kv_layout(struct scrape *s, enum scrape_kv_layout layout, uint32_t cells) {
        s->kv_layout = layout >= 0 && layout < _SCRAPE_KV_LAYOUT_MAX ? layout : SCRAPE_KV_UNKNOWN;
        s->kv_cells = s->kv_layout == SCRAPE_KV_UNIFIED ? cells : 0;
}

int scrape_level_begin(struct scrape *s) {
        s->lv = (struct scrape_level){.kv_layout = s->kv_layout, .kv_cells = s->kv_cells};
        if (s->none)
                return 0;
        int r = scrape_now(s);
        if (r < 0 || s->none)
                return r;
        s->gap = SCRAPE_FIRST;
        arm(s, s->gap);
        return 0;
}

int scrape_level_end(struct scrape *s, json_t **ret) {
        arm(s, 0);
        http_transfer_free(s->inflight);
        s->inflight = NULL;
        http_transfer_free(s->slots_inflight);
        s->slots_inflight = NULL;
        if (s->none) {
                *ret = NULL;
                return 0;
        }
        int r = scrape_now(s);
        if (r < 0)
                return r;
        json_t *o = scrape_level_json(&s->lv);
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

const char *scrape_note(struct scrape *s) {
        if (!s)
                return NULL;
        if (s->none && !s->noted) {
                s->noted = true;
                return s->why;
        }
        if (s->slots == SLOTS_NONE && !s->slots_noted) {
                s->slots_noted = true;
                return s->slots_why;
        }
        return NULL;
}
