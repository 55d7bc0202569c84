/* hist.h -- log-linear latency histogram (HdrHistogram-style), memory independent of samples.
 *
 * Values are non-negative integers, in practice microseconds. Values below HIST_SUB are
 * kept exactly; above, every power-of-two range [2^e, 2^(e+1)) is split into HIST_SUB/2
 * equal sub-buckets, so a bucket is never wider than 1/1024 of its lower edge: a reported
 * percentile is within 0.05% of a value that was recorded (3 significant digits).
 *
 * Range: 0 .. HIST_MAX (2^36 - 1 us, about 19 hours); larger values are clamped to HIST_MAX
 * and counted in `clamped`. Memory: one fixed array of HIST_BUCKETS counters (about 220 KiB),
 * allocated by hist_init, whatever the number of samples.
 *
 * count, min, max and the sum (hence the mean) are exact; percentiles are bucket-precise.
 */
#ifndef GAUNTLET_HIST_H
#define GAUNTLET_HIST_H

#include <stdint.h>

#include "base/util.h"

#define HIST_SUB_BITS 11
#define HIST_SUB ((uint64_t)1 << HIST_SUB_BITS)      /* 2048: values below are exact */
#define HIST_MAX_BITS 36
#define HIST_MAX (((uint64_t)1 << HIST_MAX_BITS) - 1)
#define HIST_BUCKETS ((size_t)(HIST_SUB + (HIST_MAX_BITS - HIST_SUB_BITS) * (HIST_SUB / 2)))

struct hist {
        uint64_t *counts;   /* HIST_BUCKETS counters, owned */
        uint64_t count;     /* samples recorded (clamped ones included) */
        uint64_t clamped;   /* subset of count: values above HIST_MAX, recorded as HIST_MAX */
        uint64_t min, max;  /* exact; min is UINT64_MAX while empty */
        double sum;         /* exact up to double precision, for the mean */
};

/* Allocates the counters; -ENOMEM. */
int hist_init(struct hist *h);
/* Frees the counters; the struct may be hist_init'ed again. Safe on a zeroed struct. */
void hist_release(struct hist *h);
/* Forgets every sample, keeps the storage. */
void hist_reset(struct hist *h);
/* Records one value. This function can't fail. */
void hist_record(struct hist *h, uint64_t v);
/* Adds every sample of from to into, as if each had been recorded there (the bench's loops,
 * one histogram per thread, merged at the end of a level). This function can't fail. */
void hist_merge(struct hist *into, const struct hist *from);

/* The value at percentile p (0..100), nearest-rank: the smallest recorded value such that
 * at least p% of the samples are <= it, reported as the middle of its bucket clamped to
 * [min, max]. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double p);
/* Mean of the samples; 0 when empty. */
double hist_mean(const struct hist *h);
/* Population standard deviation (numpy's std, ddof 0) about the exact mean, each sample
 * taken at its bucket's middle clamped to [min, max]: within a bucket's width (0.05%) of
 * the exact figure. 0 for fewer than two samples. Reads every bucket: for reports, not for
 * the hot path. */
double hist_stddev(const struct hist *h);

/* Bucket index of a value and the [lo, hi] range of values a bucket holds (exposed for tests). */
size_t hist_bucket_of(uint64_t v);
void hist_bucket_range(size_t idx, uint64_t *ret_lo, uint64_t *ret_hi);

#endif
