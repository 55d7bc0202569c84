/* scrape.h -- the server's own metrics: its Prometheus /metrics, scraped before, during and
 * after each bench level, and what a level makes of them.
 *
 * Two halves. The pure one parses Prometheus text exposition (scrape_parse) into the few
 * figures gauntlet reads, whatever the engine calls them (the name table is in scrape.c and
 * docs/metrics.md "The server's own metrics"), and folds a level's scrapes into one JSON
 * object (struct scrape_level). The other half (struct scrape) fetches /metrics on the
 * bench's loop: once before a level (waited for), then during it (never waited for: a
 * scrape in flight when the next is due is not doubled) SCRAPE_FIRST after its start and at
 * gaps that double from there up to SCRAPE_INTERVAL, then once after it (waited for). A scrape goes out on a connection of its own, never one of the
 * pooled connections the bench's streams use, and is capped in size and time.
 *
 * Server output is data: a /metrics answer is read up to SCRAPE_MAX_BODY bytes (past it the
 * last partial line is dropped and the scrape counts as truncated), a line longer than
 * SCRAPE_MAX_LINE, a line that is not a sample, or a sample without a number is skipped
 * and counted; nothing of it is kept but numbers and the engine prefix, chosen from a fixed
 * list.
 *
 * llama.cpp exports no KV-cache series on /metrics. For it (the first page's series are
 * "llamacpp:") the scraper also reads GET /slots at the same times, on a connection of its
 * own with the same caps, and estimates the KV-cache usage from it (scrape_slots_parse):
 * the cells the slots' cached prompts hold over the cells of the cache: the slots' contexts
 * summed for a cache split among the slots, one slot's context for a unified cache (the
 * caller says which, scrape_set_kv_layout: /slots does not). A /slots page that is not a
 * JSON array of whole slots is skipped and counted; a first /slots answer that is not 200
 * (llama-server --no-slots answers 501) means no /slots, said once.
 */
#ifndef GAUNTLET_SCRAPE_H
#define GAUNTLET_SCRAPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/loop.h"
#include "base/util.h"

#define SCRAPE_MAX_BODY ((size_t)4 << 20)
#define SCRAPE_MAX_LINE ((size_t)64 << 10)
/* Series of the figures below remembered per scrape to find duplicates; past it a series of
 * theirs is ignored and counted as skipped. */
#define SCRAPE_MAX_SERIES 256
#define SCRAPE_INTERVAL (1 * USEC_PER_SEC)
/* The first scrape during a level comes this long after its start, and the gaps double from
 * there (0.1, 0.3, 0.7, 1.5, 2.5 s, ...): a level shorter than the interval is still seen
 * under load a few times, so a peak is not one sample's luck, and a long one is scraped
 * once a second. */
#define SCRAPE_FIRST (100 * USEC_PER_MSEC)
#define SCRAPE_TIMEOUT (2 * USEC_PER_SEC)

/* What gauntlet reads from a /metrics page. */
enum scrape_figure {
        SCRAPE_KV_USAGE,        /* gauge: KV cache in use, a ratio 0..1; max over series */
        SCRAPE_RUNNING,         /* gauge: requests being served; sum over series */
        SCRAPE_WAITING,         /* gauge: requests queued; sum over series */
        SCRAPE_PREFIX_QUERIES,  /* counter: prompt tokens looked up in the prefix cache */
        SCRAPE_PREFIX_HITS,     /* counter: of those, tokens found there */
        SCRAPE_PREFIX_HIT_RATE, /* gauge: the server's own hit rate, 0..1 (SGLang); max */
        SCRAPE_PREEMPTIONS,     /* counter: requests preempted (SGLang: retracted) */
        SCRAPE_PROMPT_TOKENS,   /* counter: prompt tokens the server processed */
        _SCRAPE_FIGURE_MAX,
};

/* One /metrics page as parsed. */
struct scrape_sample {
        bool has[_SCRAPE_FIGURE_MAX];
        double value[_SCRAPE_FIGURE_MAX];
        const char *engine;     /* "vllm", "sglang", "llamacpp" from the first sample whose name
                                   has that prefix, or NULL; static text */
        const char *kv_series;  /* the name of the series that gave SCRAPE_KV_USAGE (its largest
                                   value), or NULL; static text */
        size_t samples;         /* sample lines read (any name) */
        size_t skipped;         /* lines that are not comments, blank or samples: too long,
                                   a bad name, bad labels, no value, junk after it */
        size_t duplicates;      /* samples of a figure's series already seen in this page: ignored */
        size_t non_finite;      /* samples of a figure that were NaN or infinite: ignored */
        size_t out_of_range;    /* samples of a figure outside its range (a ratio outside
                                   0..1, a negative count, a count past 1e15): dropped */
};

/* One GET /slots page of llama-server as parsed: an array of slot objects, each with
 * "n_ctx" (the cells of its context) and, once it served a task, "n_prompt_tokens" (the
 * tokens its cache holds: the prompt and the tokens generated after it, llama.cpp's
 * slot.prompt.tokens). A slot without n_prompt_tokens holds nothing. */
struct scrape_slots {
        size_t slots;           /* slot objects read */
        double held;            /* their n_prompt_tokens summed: cells held */
        double cells;           /* their n_ctx summed */
        double max_ctx;         /* the largest n_ctx */
};

/* How llama-server's KV cache is laid out among its slots: what the /slots estimate divides
 * by (docs/metrics.md "llama.cpp's KV-cache usage"). */
enum scrape_kv_layout {
        SCRAPE_KV_UNKNOWN,      /* not known: as split (the sum of the slots' n_ctx) */
        SCRAPE_KV_SPLIT,        /* --parallel N without --kv-unified: each slot its own n_ctx */
        SCRAPE_KV_UNIFIED,      /* one cache all slots share; every slot's n_ctx is all of it */
        _SCRAPE_KV_LAYOUT_MAX,
};
/* "unknown", "split", "unified". */
const char *scrape_kv_layout_name(enum scrape_kv_layout l);
/* The layout of that name ("unified" or "split"), or -EINVAL. */
int scrape_kv_layout_from_name(const char *name, enum scrape_kv_layout *ret);
/* The most slot objects a page may have (llama-server's --parallel); past it the page is
 * not taken. */
#define SCRAPE_MAX_SLOTS 4096

/* Parses one /slots page. Returns 0 and fills *ret_slots, or -EBADMSG when the page is not
 * a JSON array of 1..SCRAPE_MAX_SLOTS objects each with a whole "n_ctx" in 1..2^31-1 and
 * a whole "n_prompt_tokens" (when there) in 0..n_ctx, without a key twice in an object or
 * an "id" twice in the page; *ret_slots is untouched then. */
int scrape_slots_parse(const char *text, size_t len, struct scrape_slots *ret_slots);

/* Parses Prometheus text exposition (version 0.0.4; OpenMetrics' `# EOF` and `_total`
 * counters too). Counters are matched with or without their `_total` suffix; histograms'
 * `_sum`/`_count` series are samples like any other (none is a figure today). This
 * function can't fail: whatever text it gets, *ret says what was in it. */
void scrape_parse(const char *text, size_t len, struct scrape_sample *ret);

/* A level's scrapes, folded. Zero it to start. */
struct scrape_level {
        unsigned scrapes;       /* pages parsed */
        unsigned failed;        /* scrapes that got no usable page (no answer, not 200, timed out) */
        unsigned truncated;     /* pages cut at SCRAPE_MAX_BODY (parsed up to the cut) */
        struct scrape_sample first, last;   /* the first and last pages parsed */
        bool peak_has[_SCRAPE_FIGURE_MAX];
        double peak[_SCRAPE_FIGURE_MAX];    /* gauges: the largest over the pages */
        double sum[_SCRAPE_FIGURE_MAX];     /* gauges: their sum, for the mean */
        unsigned n[_SCRAPE_FIGURE_MAX];     /* gauges: pages that had it */
        uint64_t skipped, duplicates, non_finite, out_of_range;
        const char *kv_series;  /* the last page's SCRAPE_KV_USAGE series, or NULL */
        /* llama.cpp's GET /slots (scrape_level_add_slots) */
        unsigned slots_scrapes;         /* pages taken */
        unsigned slots_failed;          /* answers not 200, none, timed out */
        unsigned slots_skipped;         /* pages not taken: not slots (scrape_slots_parse), or cut */
        bool slots_has;
        double slots_peak;              /* the largest usage over the pages (0..1 when unified) */
        /* set by the caller before the first /slots page: */
        enum scrape_kv_layout kv_layout;
        double kv_cells;                /* unified: the cache's cells; 0: each page's largest n_ctx */
        unsigned slots_over;            /* unified: pages whose held cells were more than the
                                           cache's (idle slots' prompts evicted since): capped at 1 */
};
void scrape_level_add(struct scrape_level *a, const struct scrape_sample *s);
/* One /slots page into the level: its usage raises slots_peak. Split or unknown: held /
 * cells (0 when it has no cells); unified: held / the cache's cells (a->kv_cells, else the
 * page's max_ctx), capped at 1 (counted in slots_over). */
void scrape_level_add_slots(struct scrape_level *a, const struct scrape_slots *s);
/* The level's "server_metrics" object (docs/metrics.md): peaks, the counters' deltas from
 * the first page to the last (null when either lacks it, or when it went down: the server
 * restarted), the prefix-cache hit rate from those deltas (else the mean of the server's
 * own rate gauge), and the parse counts. The KV-cache usage peak is the /metrics series'
 * where a page had one (kv_cache_source: its name), else the /slots estimate's ("slots", and
 * kv_cache_layout the layout it assumed; null otherwise). NULL when out of memory. */
json_t *scrape_level_json(const struct scrape_level *a);

/* The fetching half. */
struct scrape;

/* base_url as the bench's ("http://HOST:PORT"); the loop must outlive the scraper. */
int scrape_new(struct loop *l, const char *base_url, struct scrape **ret);
void scrape_free(struct scrape *s);
static inline void scrape_freep(struct scrape **s) { if (*s) scrape_free(*s); }
#define _cleanup_scrape_ _cleanup_(scrape_freep)

/* What the /slots estimate divides by (scrape_level_add_slots): the layout, and for unified
 * the cache's cells (0: each page's largest n_ctx). Default: unknown. Takes effect at the
 * next level. */
void scrape_set_kv_layout(struct scrape *s, enum scrape_kv_layout layout, uint32_t cells);

/* Before a level: scrapes once and waits for it (serving the loop meanwhile), then arms the
 * scrapes during the level. The first scrape of a scraper also decides whether the server
 * has metrics at all: a page that is not 200, or has no sample in it, or no answer, and
 * this scraper does nothing more (scrape_note says why). Returns 0, -ENOMEM, -EINTR when the
 * loop caught a signal. */
int scrape_level_begin(struct scrape *s);
/* After a level: stops the scrapes during it, scrapes once more and waits for it, and sets
 * *ret to the level's object (new reference), or NULL when the server has no metrics.
 * Returns 0, -ENOMEM, -EINTR. */
int scrape_level_end(struct scrape *s, json_t **ret);
/* Why the server has no metrics, the first time it is asked after that was found ("GET
 * /metrics answered HTTP 404"), or, for llama.cpp, why it has no KV-cache figure ("GET
 * /slots answered HTTP 501"); NULL otherwise, and on every later call: one line each, said
 * once. Static or owned by s. */
const char *scrape_note(struct scrape *s);

#endif
