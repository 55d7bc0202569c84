/* sample.h -- choosing the next token: greedy, or temperature + top-p with a seeded RNG;
 * and the log-probabilities reported back to clients.
 *
 * Greedy follows torch.argmax: a NaN logit wins (the first NaN), so all-NaN logits collapse
 * to token 0, as NaN logits do in the engines (docs/testbed.md says what that looks like).
 */
#ifndef TESTBED_SAMPLE_H
#define TESTBED_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

struct sample_params {
        float temperature; /* <= 0: greedy */
        float top_p;       /* (0, 1]; 1 keeps everything */
};

/* splitmix64 state: same seed, same choices. */
struct sample_rng {
        uint64_t s;
};
void sample_rng_seed(struct sample_rng *r, uint64_t seed);
/* Uniform in [0, 1). */
double sample_rng_uniform(struct sample_rng *r);

/* Index of the largest logit; the first NaN if there is one. n >= 1. */
int sample_argmax(const float *logits, int n);
/* Picks a token. scratch holds n floats and n ints (caller provides, reused per token). */
int sample_pick(const float *logits, int n, const struct sample_params *p, struct sample_rng *rng, float *scratch_f,
                int *scratch_i);
/* log_softmax(logits) into out (n floats). NaN logits give NaN everywhere. */
void sample_logprobs(const float *logits, int n, float *out);
/* The k best ids by value, best first (NaN sorts first, like argmax), k <= n. */
void sample_top(const float *values, int n, int k, int *ret_ids);

#endif
