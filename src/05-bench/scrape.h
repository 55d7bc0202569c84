/* scrape.h -- the server's own metrics: its Prometheus /metrics, scraped before, during and
 * after each bench level, and what a level makes of them.
 *
 * Two halves. The pure one parses Prometheus text exposition (scrape_parse) into the few
 * figures gauntlet reads, whatever the engine calls them (the name table is in scrape.c and
 * docs/metrics.md "The server's own metrics"), and folds a level's scrapes into one JSON
 * object (struct scrape_level). The other half (struct scrape) fetches /metrics on the
 * bench's loop: once before a level (waited for), then every SCRAPE_INTERVAL during it
 * (never waited for: a scrape in flight when the next is due is not doubled), then once
 * after it (waited for). A scrape goes out on a connection of its own, never one of the
 * pooled connections the bench's streams use, and is capped in size and time.
 *
 * Server output is data: a /metrics answer is read up to SCRAPE_MAX_BODY bytes (past it the
 * last partial line is dropped and the scrape counts as truncated), a line longer than
 * SCRAPE_MAX_LINE, a line that is not a sample, or a sample without a number is skipped
 * and counted; nothing of it is kept but numbers and the engine prefix, chosen from a fixed
 * list.
 */
#ifndef GAUNTLET_SCRAPE_H
#define GAUNTLET_SCRAPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "03-io/loop.h"
#include "01-base/util.h"

#define SCRAPE_MAX_BODY ((size_t)4 << 20)
#define SCRAPE_MAX_LINE ((size_t)64 << 10)
/* Series of the figures below remembered per scrape to find duplicates; past it a series of
 * theirs is ignored and counted as skipped. */
#define SCRAPE_MAX_SERIES 256
#define SCRAPE_INTERVAL (1 * USEC_PER_SEC)
/* The first scrape during a level comes this long after its start, so that a level shorter
 * than the interval is seen under load at least once. */
#define SCRAPE_FIRST (200 * USEC_PER_MSEC)
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
        size_t samples;         /* sample lines read (any name) */
        size_t skipped;         /* lines that are not comments, blank or samples: too long,
                                   a bad name, bad labels, no value, junk after it */
        size_t duplicates;      /* samples of a figure's series already seen in this page: ignored */
        size_t non_finite;      /* samples of a figure that were NaN or infinite: ignored */
};

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
        uint64_t skipped, duplicates, non_finite;
};
void scrape_level_add(struct scrape_level *a, const struct scrape_sample *s);
/* The level's "server_metrics" object (docs/metrics.md): peaks, the counters' deltas from
 * the first page to the last (null when either lacks it, or when it went down: the server
 * restarted), the prefix-cache hit rate from those deltas (else the mean of the server's
 * own rate gauge), and the parse counts. NULL when out of memory. */
json_t *scrape_level_json(const struct scrape_level *a);

/* The fetching half. */
struct scrape;

/* base_url as the bench's ("http://HOST:PORT"); the loop must outlive the scraper. */
int scrape_new(struct loop *l, const char *base_url, struct scrape **ret);
void scrape_free(struct scrape *s);
static inline void scrape_freep(struct scrape **s) { if (*s) scrape_free(*s); }
#define _cleanup_scrape_ _cleanup_(scrape_freep)

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
 * /metrics answered HTTP 404"); NULL otherwise, and on every later call: one line, said
 * once. Static or owned by s. */
const char *scrape_note(struct scrape *s);

#endif
