/* count.h -- how a sweep counts output tokens: one rule for every cell (docs/metrics.md
 * "Output tokens").
 *
 * All cells of a sweep serve one model, so the tokenizer is not a property of a cell: a
 * figure counted by a cell's own stream chunks or its own /tokenize could be inflated by how
 * that cell streams or by what it says. The sweep counts every cell's outputs by one rule:
 *
 *  - the model's own tokenizer, read by gauntlet from the model's files (tokenizer.h):
 *    COUNT_TOKENIZER, the same function for every cell;
 *  - else bytes per token: the text's bytes divided by the sweep's bytes per token, taken
 *    once from the first cell whose own counts agree (COUNT_BYTES). No chunking changes
 *    the bytes of a text;
 *  - the first such cell (the rule not known yet) is counted by its own counts that agree
 *    with each other (usage, /tokenize of the streamed text, chunks: two of them within
 *    the tolerance), and sets the rule; when none agree, the smallest of them counts,
 *    and the cell's count is said to be unverified: inflating one count never helps.
 *
 * The cell's own counts stay as cross-checks: a cell whose usage or chunks disagree with
 * the sweep's count is said so in its level ("count" in docs/metrics.md).
 */
#ifndef GAUNTLET_COUNT_H
#define GAUNTLET_COUNT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum count_source {
        COUNT_NONE,
        COUNT_CHUNKS,    /* the stream's content and reasoning chunks */
        COUNT_USAGE,     /* the server's usage.completion_tokens */
        COUNT_TOKENIZE,  /* the server's /tokenize of the streamed text */
        COUNT_TOKENIZER, /* the model's tokenizer, read by gauntlet */
        COUNT_BYTES,     /* the text's bytes over the sweep's bytes per token */
        _COUNT_MAX,
};

const char *count_source_name(enum count_source s);

struct tokenizer; /* tokenizer.h */

/* The sweep's rule, given to each cell's bench (bench_target.count). */
struct count_rule {
        const struct tokenizer *tokenizer; /* the model's, read by gauntlet; NULL: none */
        const char *tokenizer_what;        /* its path and kind, for the report */
        double bytes_per_token;            /* no tokenizer: > 0 once a cell's own counts agreed */
        char from[17];                     /* the id of that cell */
        json_t *calibration;               /* ... and its prompt calibration (a reference the
                                              rule's owner drops), so that every later cell
                                              sends the same prompts; NULL: none */
};

/* One completed request as its own counts saw it; -1: that count is not known. */
struct count_request {
        uint64_t bytes;   /* content and reasoning bytes streamed */
        int64_t chunks;
        int64_t usage;
        int64_t tokenize;
};

/* Two counts of the same requests agree when they differ by no more than 5% of the larger
 * or one token a request, whichever is more. */
bool count_agree(uint64_t a, uint64_t b, uint64_t requests);
/* What an honest server's usage may hold per request that its stream does not show: the
 * end-of-generation token and the two tags a reasoning parser takes out (docs/metrics.md,
 * "What each engine's usage counts"). */
#define COUNT_USAGE_SLACK 3
/* Whether a server's usage and another count of the same requests agree: no more apart than
 * 5% of the larger or COUNT_USAGE_SLACK tokens a request, whichever is more (a request
 * alone is judged so too: bench_usage_disagrees). */
bool count_usage_agrees(uint64_t usage, uint64_t counted, uint64_t requests);

/* What a cell's own counts say when the sweep has no rule yet. */
struct count_decision {
        enum count_source source; /* the count the cell's figures use */
        bool agreed;              /* source agrees with another of its counts */
        double bytes_per_token;   /* of the streamed text: its bytes over the count of that text
                                     (/tokenize, then chunks, where it agrees with another; else
                                     source's); 0 when none was counted */
        /* per source: the tokens it counted and the requests it counted them in */
        uint64_t sum[_COUNT_MAX];
        uint64_t requests[_COUNT_MAX];
};

/* Decides from n requests' own counts: where usage agrees with /tokenize or chunks, or
 * /tokenize with chunks, the count of the streamed text that agreed (/tokenize, else chunks:
 * what bytes_per_token is of); with no pair agreeing, the source whose tokens per request
 * are fewest (agreed false). -EINVAL for n 0. */
int count_decide(const struct count_request *r, size_t n, struct count_decision *ret);

/* A request's count under source s: its own count of that kind when it has one, else its
 * bytes over bytes_per_token (at least 1 when it has bytes). */
int64_t count_request_tokens(const struct count_request *r, enum count_source s, double bytes_per_token);

/* A text's count by bytes per token: at least 1 for a non-empty text. */
int64_t count_by_bytes(uint64_t bytes, double bytes_per_token);

/* Without a tokenizer or bytes per token yet, takes the rule one cell's bench levels carry:
 * the bytes per token of a level counted by its own counts that agreed (that cell sets it),
 * or the rule a level was counted by (bytes: its "from"), and that level's prompt
 * calibration (a new reference in rule->calibration). 1 when adopted, 0 when not. */
int count_rule_adopt(struct count_rule *rule, const json_t *levels, const char *cell_id);

#endif
