/* sample.c -- greedy and nucleus sampling, log-softmax, top-k selection. */
#include "sample.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/rng.h"

void sample_rng_seed(struct sample_rng *r, uint64_t seed) { r->s = seed; }

double sample_rng_uniform(struct sample_rng *r) {
        return rng_uniform(&r->s); /* the one generator (base/rng.h) */
}

/* a ranks before b: NaN first, then larger */
static bool better(float a, float b) {
        if (isnan(a))
                return !isnan(b);
        if (isnan(b))
                return false;
        return a > b;
}

int sample_argmax(const float *logits, int n) {
        int best = 0;
        for (int i = 1; i < n; i++)
                if (better(logits[i], logits[best]))
                        best = i;
        return best;
}

void sample_logprobs(const float *logits, int n, float *out) {
        float mx = -INFINITY;
        for (int i = 0; i < n; i++)
                mx = fmaxf(mx, logits[i]);
        double sum = 0;
        for (int i = 0; i < n; i++)
                sum += exp((double)logits[i] - mx);
        float lse = mx + (float)log(sum);
        bool nan = false;
        for (int i = 0; i < n; i++)
                nan |= isnan(logits[i]);
        for (int i = 0; i < n; i++)
                out[i] = nan ? NAN : logits[i] - lse;
}

void sample_top(const float *values, int n, int k, int *ret_ids) {
        /* partial selection: k is small (<= 20) */
        for (int j = 0; j < k; j++) {
                int best = -1;
                for (int i = 0; i < n; i++) {
                        bool taken = false;
                        for (int q = 0; q < j && !taken; q++)
                                taken = ret_ids[q] == i;
                        if (taken)
                                continue;
                        if (best < 0 || better(values[i], values[best]))
                                best = i;
                }
                ret_ids[j] = best;
        }
}

int sample_pick(const float *logits, int n, const struct sample_params *p, struct sample_rng *rng, float *prob,
                int *idx) {
        if (!(p->temperature > 0.0f))
                return sample_argmax(logits, n);
        float mx = -INFINITY;
        for (int i = 0; i < n; i++) {
                if (isnan(logits[i]))
                        return sample_argmax(logits, n); /* no distribution to sample from */
                mx = fmaxf(mx, logits[i]);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
                prob[i] = expf((logits[i] - mx) / p->temperature);
                sum += prob[i];
                idx[i] = i;
        }
        for (int i = 0; i < n; i++)
                prob[i] = (float)(prob[i] / sum);
        int keep = n;
        if (p->top_p > 0.0f && p->top_p < 1.0f) {
                /* insertion sort by probability, descending (n is a few hundred) */
                for (int i = 1; i < n; i++) {
                        int v = idx[i], j = i;
                        while (j > 0 && (prob[idx[j - 1]] < prob[v] || (prob[idx[j - 1]] == prob[v] && idx[j - 1] > v))) {
                                idx[j] = idx[j - 1];
                                j--;
                        }
                        idx[j] = v;
                }
                double cum = 0;
                for (keep = 0; keep < n;) {
                        cum += prob[idx[keep++]];
                        if (cum >= p->top_p)
                                break;
                }
        }
        double total = 0;
        for (int i = 0; i < keep; i++)
                total += prob[idx[i]];
        double u = sample_rng_uniform(rng) * total, acc = 0;
        for (int i = 0; i < keep; i++) {
                acc += prob[idx[i]];
                if (u < acc)
                        return idx[i];
        }
        return idx[keep - 1];
}
