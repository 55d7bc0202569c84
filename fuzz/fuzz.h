/* fuzz.h -- small helpers shared by the libFuzzer targets (fuzz/fuzz_*.c).
 *
 * FUZZ_ASSERT aborts with a message, so a broken invariant is a finding like a crash.
 * fuzz_take() cuts an input into parts: the targets read a few control bytes first
 * (limits, modes, split points) and hand the rest to the code under test.
 */
#ifndef GAUNTLET_FUZZ_H
#define GAUNTLET_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/profile.h"
#include "base/util.h"

#define FUZZ_ASSERT(cond, ...)                                                   \
        do {                                                                     \
                if (!(cond)) {                                                   \
                        fprintf(stderr, "fuzz invariant broken at %s:%d: %s: ", \
                                __FILE__, __LINE__, #cond);                      \
                        fprintf(stderr, __VA_ARGS__);                            \
                        fputc('\n', stderr);                                     \
                        abort();                                                 \
                }                                                                \
        } while (0)

struct fuzz_input {
        const uint8_t *p;
        size_t n;
};

/* The next byte, 0 when the input is used up. */
static inline uint8_t fuzz_byte(struct fuzz_input *in) {
        if (in->n == 0)
                return 0;
        in->n--;
        return *in->p++;
}

/* The engine profile the next byte picks, of all of them. */
static inline const struct profile *fuzz_profile(struct fuzz_input *in) {
        const struct profile *const *all = profile_all();
        size_t n = 0;
        while (all[n])
                n++;
        return all[fuzz_byte(in) % n];
}

/* Valid UTF-8 (NUL bytes allowed: JSON's \u0000 gives them), as RFC 3629 defines it. */
static inline bool fuzz_utf8_valid(const char *s, size_t n) {
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;
        while (i < n) {
                unsigned char c = u[i];
                size_t len;
                unsigned char lo = 0x80, hi = 0xbf;
                if (c < 0x80) {
                        i++;
                        continue;
                } else if (c >= 0xc2 && c <= 0xdf)
                        len = 2;
                else if (c >= 0xe0 && c <= 0xef) {
                        len = 3;
                        if (c == 0xe0)
                                lo = 0xa0;
                        if (c == 0xed)
                                hi = 0x9f;
                } else if (c >= 0xf0 && c <= 0xf4) {
                        len = 4;
                        if (c == 0xf0)
                                lo = 0x90;
                        if (c == 0xf4)
                                hi = 0x8f;
                } else
                        return false;
                if (n - i < len || u[i + 1] < lo || u[i + 1] > hi)
                        return false;
                for (size_t k = 2; k < len; k++)
                        if (u[i + k] < 0x80 || u[i + k] > 0xbf)
                                return false;
                i += len;
        }
        return true;
}

/* No byte below 0x20 and no DEL: text that can go to a terminal or a one-line message. */
static inline bool fuzz_printable(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

#endif
