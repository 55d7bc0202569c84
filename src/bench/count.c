/* count.c -- one rule for counting every cell's output tokens (count.h). */
#include "bench/count.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

const char *count_source_name(enum count_source s) {
        static const char *const names[_COUNT_MAX] = {
                [COUNT_NONE] = "none",         [COUNT_CHUNKS] = "chunks",       [COUNT_USAGE] = "usage",
                [COUNT_TOKENIZE] = "tokenize", [COUNT_TOKENIZER] = "tokenizer", [COUNT_BYTES] = "bytes",
        };
        return s >= 0 && s < _COUNT_MAX ? names[s] : "none";
}

/* a and b no further apart than 5% of the larger or per_request tokens a request */
static bool agree_within(uint64_t a, uint64_t b, uint64_t requests, uint64_t per_request) {
        uint64_t hi = MAX(a, b), lo = MIN(a, b);
        uint64_t slack = requests > UINT64_MAX / per_request ? UINT64_MAX : requests * per_request;
        return hi - lo <= MAX(hi / 20, slack);
}

bool count_agree(uint64_t a, uint64_t b, uint64_t requests) {
        return agree_within(a, b, requests, 1);
}

bool count_usage_agrees(uint64_t usage, uint64_t counted, uint64_t requests) {
        return agree_within(usage, counted, requests, COUNT_USAGE_SLACK);
}

static int64_t own(const struct count_request *r, enum count_source s) {
        switch (s) {
        case COUNT_CHUNKS:
                return r->chunks;
        case COUNT_USAGE:
                return r->usage;
        case COUNT_TOKENIZE:
                return r->tokenize;
        default:
                return -1;
        }
}

/* Whether sources a and b agree over the requests both counted; false when none did. Usage
 * has the slack of what an honest stream leaves out. */
static bool pair_agrees(const struct count_request *r, size_t n, enum count_source a, enum count_source b) {
        uint64_t sa = 0, sb = 0, k = 0;
        for (size_t i = 0; i < n; i++) {
                int64_t x = own(&r[i], a), y = own(&r[i], b);
                if (x < 0 || y < 0)
                        continue;
                sa += (uint64_t)x;
                sb += (uint64_t)y;
                k++;
        }
        return k > 0 && (a == COUNT_USAGE ? count_usage_agrees(sa, sb, k) : count_agree(sa, sb, k));
}

int count_decide(const struct count_request *r, size_t n, struct count_decision *ret) {
        if (n == 0)
                return -EINVAL;
        static const enum count_source own_sources[] = {COUNT_USAGE, COUNT_TOKENIZE, COUNT_CHUNKS};
        struct count_decision d = {.source = COUNT_NONE};
        for (size_t k = 0; k < ELEMENTSOF(own_sources); k++) {
                enum count_source s = own_sources[k];
                for (size_t i = 0; i < n; i++) {
                        int64_t x = own(&r[i], s);
                        if (x < 0)
                                continue;
                        d.sum[s] += (uint64_t)x;
                        d.requests[s]++;
                }
        }
        bool ut = pair_agrees(r, n, COUNT_USAGE, COUNT_TOKENIZE), uc = pair_agrees(r, n, COUNT_USAGE, COUNT_CHUNKS),
             tc = pair_agrees(r, n, COUNT_TOKENIZE, COUNT_CHUNKS);
        if (ut || uc) {
                d.source = COUNT_USAGE;
                d.agreed = true;
        } else if (tc) {
                d.source = COUNT_TOKENIZE;
                d.agreed = true;
        } else {
                /* nothing confirms anything: the fewest tokens per request, so that no count a
                 * server inflates can lift its figure */
                double best = INFINITY;
                for (size_t k = 0; k < ELEMENTSOF(own_sources); k++) {
                        enum count_source s = own_sources[k];
                        if (d.requests[s] == 0 || d.sum[s] == 0)
                                continue;
                        double per = (double)d.sum[s] / (double)d.requests[s];
                        if (per < best) {
                                best = per;
                                d.source = s;
                        }
                }
                if (d.source == COUNT_NONE)
                        d.source = COUNT_CHUNKS;
        }
        /* bytes per token of the text as streamed: by the count of that text (/tokenize, then
         * the chunks) where it agrees with another; usage also counts what the stream does
         * not show (the end-of-generation token, tags a reasoning parser took out) */
        enum count_source text = ut || tc ? COUNT_TOKENIZE : uc || tc ? COUNT_CHUNKS : d.source;
        uint64_t bytes = 0;
        for (size_t i = 0; i < n; i++)
                if (own(&r[i], text) >= 0)
                        bytes += r[i].bytes;
        d.bytes_per_token = d.sum[text] > 0 ? (double)bytes / (double)d.sum[text] : 0;
        /* and a count that agreed is the text's too: the cells counted later by these bytes
         * per token count what they stream, and so does this one (by usage, llama-server's
         * first cell, its reasoning tags in usage, was counted 3% above the cells after it) */
        if (d.agreed)
                d.source = text;
        *ret = d;
        return 0;
}

int64_t count_by_bytes(uint64_t bytes, double bytes_per_token) {
        if (bytes == 0)
                return 0;
        if (!(bytes_per_token > 0))
                return -1;
        double n = round((double)bytes / bytes_per_token);
        return n < 1 ? 1 : n > (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)n;
}

int64_t count_request_tokens(const struct count_request *r, enum count_source s, double bytes_per_token) {
        int64_t x = own(r, s);
        if (x >= 0)
                return x;
        x = count_by_bytes(r->bytes, bytes_per_token);
        return x >= 0 ? x : MAX(r->chunks, 0);
}

int count_rule_adopt(struct count_rule *rule, const json_t *levels, const char *cell_id) {
        if (rule->tokenizer || rule->bytes_per_token > 0)
                return 0;
        size_t i;
        json_t *lv;
        json_array_foreach(levels, i, lv) {
                json_t *c = json_object_get(lv, "count");
                const char *how = json_string_value(json_object_get(c, "rule"));
                double bpt = json_number_value(json_object_get(c, "bytes_per_token"));
                if (!how || !(bpt > 0) || !isfinite(bpt))
                        continue;
                const char *from = NULL;
                if (strcmp(how, "own") == 0 && json_is_true(json_object_get(c, "agreed")))
                        from = cell_id;
                else if (strcmp(how, "bytes") == 0)
                        from = json_string_value(json_object_get(c, "from"));
                if (!from)
                        continue;
                rule->bytes_per_token = bpt;
                snprintf(rule->from, sizeof(rule->from), "%s", from);
                json_t *cal = json_object_get(lv, "prompt_calibration");
                const char *method = json_string_value(json_object_get(cal, "method"));
                /* the prompts as the server sized them, or as they were taken from it */
                if (method && (strcmp(method, "tokenize") == 0 || strcmp(method, "usage") == 0 ||
                               strcmp(method, "sweep") == 0))
                        rule->calibration = json_incref(cal);
                return 1;
        }
        return 0;
}
