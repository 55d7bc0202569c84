/* rng.h -- the one generator: splitmix64 over a caller's uint64_t state (any value, 0
 * included). Every seeded draw of gauntlet goes through it (the bench's schedules, words and
 * datasets, the eval's question order, the probes' filler and secrets, the simulated search
 * spaces, the testbed's weights and sampling), so a seed gives the same figures on every
 * machine. Nothing uses rand(). */
#ifndef GAUNTLET_RNG_H
#define GAUNTLET_RNG_H

#include <stdint.h>

/* The next 64 bits of the stream at *state (advancing it). */
uint64_t rng_next(uint64_t *state);
/* Uniform integer in [0, n) without modulo bias (the top partial stripe rejected); 0 when
 * n is 0 (no draw then). */
uint64_t rng_below(uint64_t *state, uint64_t n);
/* Uniform in [0, 1) with 53 bits (one draw). */
double rng_uniform(uint64_t *state);

#endif
