/* hist.c -- log-linear latency histogram. */
#include "base/hist.h"

#include <math.h>
#include <string.h>

#define HALF (HIST_SUB / 2)

int hist_init(struct hist *h) {
        uint64_t *c = calloc(HIST_BUCKETS, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *h = (struct hist){.counts = c, .min = UINT64_MAX};
        return 0;
}

void hist_release(struct hist *h) {
        free(h->counts);
        *h = (struct hist){.min = UINT64_MAX};
}

void hist_reset(struct hist *h) {
        if (h->counts)
                memset(h->counts, 0, HIST_BUCKETS * sizeof(*h->counts));
        uint64_t *c = h->counts;
        *h = (struct hist){.counts = c, .min = UINT64_MAX};
}

size_t hist_bucket_of(uint64_t v) {
        if (v > HIST_MAX)
                v = HIST_MAX;
        if (v < HIST_SUB)
                return (size_t)v;
        unsigned e = 63 - (unsigned)__builtin_clzll(v);   /* HIST_SUB_BITS .. HIST_MAX_BITS-1 */
        unsigned shift = e - (HIST_SUB_BITS - 1);         /* keeps the top 11 bits */
        uint64_t sub = v >> shift;                        /* HALF .. HIST_SUB-1 */
        return (size_t)(HIST_SUB + (uint64_t)(e - HIST_SUB_BITS) * HALF + (sub - HALF));
}

void hist_bucket_range(size_t idx, uint64_t *ret_lo, uint64_t *ret_hi) {
        if (idx < HIST_SUB) {
                *ret_lo = *ret_hi = idx;
                return;
        }
        uint64_t k = (idx - HIST_SUB) / HALF;    /* range number: e = k + HIST_SUB_BITS */
        uint64_t sub = (idx - HIST_SUB) % HALF + HALF;
        unsigned shift = (unsigned)k + 1;
        *ret_lo = sub << shift;
        *ret_hi = ((sub + 1) << shift) - 1;
}

void hist_record(struct hist *h, uint64_t v) {
        if (v > HIST_MAX) {
                v = HIST_MAX;
                h->clamped++;
        }
        h->counts[hist_bucket_of(v)]++;
        h->count++;
        h->sum += (double)v;
        if (v < h->min)
                h->min = v;
        if (v > h->max)
                h->max = v;
}

void hist_merge(struct hist *into, const struct hist *from) {
        if (!from->count)
                return;
        for (size_t i = 0; i < HIST_BUCKETS; i++)
                into->counts[i] += from->counts[i];
        into->count += from->count;
        into->clamped += from->clamped;
        into->sum += from->sum;
        if (from->min < into->min)
                into->min = from->min;
        if (from->max > into->max)
                into->max = from->max;
}

uint64_t hist_percentile(const struct hist *h, double p) {
        if (!h->count)
                return 0;
        if (p <= 0)
                return h->min;
        if (p >= 100)
                return h->max;
        /* Nearest rank: the ceil(p/100 * n)-th smallest sample (1-based). */
        /* The epsilon keeps 99.9% of 1000 at rank 999, not 1000 through rounding. */
        uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
        if (rank < 1)
                rank = 1;
        if (rank > h->count)
                rank = h->count;
        uint64_t seen = 0;
        for (size_t i = 0; i < HIST_BUCKETS; i++) {
                seen += h->counts[i];
                if (seen >= rank) {
                        uint64_t lo, hi;
                        hist_bucket_range(i, &lo, &hi);
                        uint64_t mid = lo + (hi - lo) / 2;
                        return MAX(h->min, MIN(h->max, mid));
                }
        }
        return h->max;
}

double hist_mean(const struct hist *h) {
        return h->count ? h->sum / (double)h->count : 0.0;
}

double hist_stddev(const struct hist *h) {
        if (h->count < 2)
                return 0.0;
        double mean = hist_mean(h), acc = 0;
        for (size_t i = 0; i < HIST_BUCKETS; i++) {
                if (!h->counts[i])
                        continue;
                uint64_t lo, hi;
                hist_bucket_range(i, &lo, &hi);
                double mid = (double)MAX(h->min, MIN(h->max, lo + (hi - lo) / 2));
                acc += (double)h->counts[i] * (mid - mean) * (mid - mean);
        }
        return sqrt(acc / (double)h->count);
}
