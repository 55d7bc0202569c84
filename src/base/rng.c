/* rng.c -- the one generator: splitmix64 (rng.h). */
#include "base/rng.h"

uint64_t rng_next(uint64_t *state) {
        uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

uint64_t rng_below(uint64_t *state, uint64_t n) {
        if (n == 0)
                return 0;
        uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t x;
        do
                x = rng_next(state);
        while (x >= limit);
        return x % n;
}

double rng_uniform(uint64_t *state) {
        return (double)(rng_next(state) >> 11) * 0x1.0p-53;
}
