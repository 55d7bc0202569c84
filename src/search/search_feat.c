/* search_feat.c -- the search's features (a value, a pair or a triple of values of
 * different axes): their keys for a cell, and the table of what the model knows of each
 * (search_int.h). */
#include "search/search_int.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t mix64(uint64_t x) {
        x ^= x >> 33;
        x *= UINT64_C(0xff51afd7ed558ccd);
        x ^= x >> 33;
        x *= UINT64_C(0xc4ceb9fe1a85ec53);
        x ^= x >> 33;
        return x;
}

struct feat *search_feat_find(const struct feat_map *fm, uint64_t key) {
        if (!fm->cap)
                return NULL;
        for (size_t i = mix64(key) & (fm->cap - 1);; i = (i + 1) & (fm->cap - 1)) {
                if (fm->slots[i].key == key)
                        return &fm->slots[i];
                if (!fm->slots[i].key)
                        return NULL;
        }
}

static int feat_grow(struct feat_map *fm) {
        size_t cap = fm->cap ? fm->cap * 2 : 1024;
        struct feat *s = calloc(cap, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < fm->cap; i++) {
                if (!fm->slots[i].key)
                        continue;
                size_t k = mix64(fm->slots[i].key) & (cap - 1);
                while (s[k].key)
                        k = (k + 1) & (cap - 1);
                s[k] = fm->slots[i];
        }
        free(fm->slots);
        fm->slots = s;
        fm->cap = cap;
        return 0;
}

int search_feat_get(struct feat_map *fm, uint64_t key, struct feat **ret) {
        struct feat *f = search_feat_find(fm, key);
        if (!f) {
                if ((fm->n + 1) * 2 > fm->cap && feat_grow(fm) < 0)
                        return -ENOMEM;
                size_t i = mix64(key) & (fm->cap - 1);
                while (fm->slots[i].key)
                        i = (i + 1) & (fm->cap - 1);
                f = &fm->slots[i];
                f->key = key;
                fm->n++;
        }
        *ret = f;
        return 0;
}

size_t search_cell_features(const struct search_space *s, size_t k, uint64_t *out) {
        const size_t *c = s->choice + k * s->n_axes;
        size_t n = 0, A = s->n_axes;
        for (size_t a = 0; a < A; a++)
                out[n++] = feat_key(1, (size_t[]){a}, (size_t[]){c[a]});
        for (size_t a = 0; a < A; a++)
                for (size_t b = a + 1; b < A; b++)
                        out[n++] = feat_key(2, (size_t[]){a, b}, (size_t[]){c[a], c[b]});
        if (A <= TRIPLE_MAX_AXES)
                for (size_t a = 0; a < A; a++)
                        for (size_t b = a + 1; b < A; b++)
                                for (size_t d = b + 1; d < A; d++)
                                        out[n++] = feat_key(3, (size_t[]){a, b, d}, (size_t[]){c[a], c[b], c[d]});
        return n;
}

size_t search_features_per_cell(size_t A) {
        size_t n = A + A * (A - 1) / 2;
        if (A <= TRIPLE_MAX_AXES)
                n += A * (A - 1) * (A - 2) / 6;
        return n;
}
