/* gguf.c -- GGUF v3 parsing with every length and offset checked against the file. */
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

/* A read cursor over [p, end). Every take checks the bytes left first. */
struct cursor {
        const uint8_t *start;
        const uint8_t *p;
        const uint8_t *end;
        char *error; /* first error, owned */
};

_printf_(2, 3) static int fail(struct cursor *c, const char *fmt, ...) {
        if (!c->error) {
                va_list ap;
                va_start(ap, fmt);
                if (vasprintf(&c->error, fmt, ap) < 0)
                        c->error = NULL;
                va_end(ap);
        }
        return -EBADMSG;
}

static size_t left(const struct cursor *c) { return (size_t)(c->end - c->p); }

static int take(struct cursor *c, void *out, size_t n, const char *what) {
        if (left(c) < n)
                return fail(c, "truncated at offset %zu reading %s (%zu bytes needed, %zu left)",
                            (size_t)(c->p - c->start), what, n, left(c));
        memcpy(out, c->p, n);
        c->p += n;
        return 0;
}

static int take_u32(struct cursor *c, uint32_t *v, const char *what) { return take(c, v, 4, what); }
static int take_u64(struct cursor *c, uint64_t *v, const char *what) { return take(c, v, 8, what); }

static int take_str(struct cursor *c, struct gguf_str *s, const char *what) {
        uint64_t len = 0;
        int r = take_u64(c, &len, what);
        if (r < 0)
                return r;
        if (len > GGUF_MAX_STRING || len > left(c))
                return fail(c, "%s at offset %zu has length %llu beyond the file (%zu bytes left)", what,
                            (size_t)(c->p - c->start) - 8, (unsigned long long)len, left(c));
        s->p = (const char *)c->p;
        s->len = len;
        c->p += len;
        return 0;
}

/* Bytes of a tensor of type t with n elements along the first dimension ne0 (block types
 * need ne0 to be a multiple of the block). 0 on an unknown type or a bad shape. */
static int tensor_nbytes(enum ggml_type t, uint64_t ne0, uint64_t n, uint64_t *ret) {
        switch (t) {
        case GGML_TYPE_F32:
                if (n > UINT64_MAX / 4)
                        return -EOVERFLOW;
                *ret = n * 4;
                return 0;
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
                if (n > UINT64_MAX / 2)
                        return -EOVERFLOW;
                *ret = n * 2;
                return 0;
        case GGML_TYPE_Q8_0:
                /* blocks of 32: one f16 scale + 32 int8 */
                if (ne0 % 32)
                        return -EINVAL;
                *ret = n / 32 * 34;
                return 0;
        default:
                return -EOPNOTSUPP;
        }
}

void gguf_free(struct gguf *g) {
        if (!g)
                return;
        for (size_t i = 0; i < g->n_tensors; i++)
                free(g->tensors[i].name);
        free(g->tensors);
        if (g->mapped && g->meta.base)
                munmap((void *)g->meta.base, g->meta.size);
        gguf_meta_release(&g->meta);
        free(g);
}

static char *strndup_str(struct gguf_str s) { return strndup(s.p, s.len); }

static int parse(struct gguf *g, const uint8_t *base, size_t size, char **ret_error) {
        struct cursor c = {.start = base, .p = base, .end = base + size};
        uint64_t n_tensors;
        int r;

        /* the header and the keys: gauntlet's reader; the tensor infos follow them */
        r = gguf_meta_parse(base, size, true, &g->meta, ret_error);
        if (r < 0)
                return r;
        c.p = base + g->meta.end;
        n_tensors = g->meta.n_tensors;
        g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof(*g->tensors));
        if (!g->tensors) {
                r = -ENOMEM;
                goto out;
        }
        for (uint64_t i = 0; i < n_tensors; i++) {
                struct gguf_tensor *t = &g->tensors[i];
                struct gguf_str name = {0};
                uint32_t type = 0;
                uint64_t off = 0;
                r = take_str(&c, &name, "a tensor name");
                if (r < 0)
                        goto out;
                t->name = strndup_str(name);
                if (!t->name) {
                        r = -ENOMEM;
                        goto out;
                }
                g->n_tensors++;
                r = take_u32(&c, &t->n_dims, "a tensor rank");
                if (r < 0)
                        goto out;
                if (t->n_dims == 0 || t->n_dims > GGUF_MAX_DIMS) {
                        r = fail(&c, "tensor '%s' has %u dimensions (1..%d allowed)", t->name, t->n_dims,
                                 GGUF_MAX_DIMS);
                        goto out;
                }
                t->n_elements = 1;
                for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
                        t->ne[d] = 1;
                        if (d >= t->n_dims)
                                continue;
                        r = take_u64(&c, &t->ne[d], "a tensor dimension");
                        if (r < 0)
                                goto out;
                        if (t->ne[d] == 0 || t->ne[d] > (UINT64_C(1) << 40) ||
                            t->n_elements > UINT64_MAX / t->ne[d]) {
                                r = fail(&c, "tensor '%s' has an invalid dimension %u (%llu)", t->name, d,
                                         (unsigned long long)t->ne[d]);
                                goto out;
                        }
                        t->n_elements *= t->ne[d];
                }
                r = take_u32(&c, &type, "a tensor type");
                if (r >= 0)
                        r = take_u64(&c, &off, "a tensor offset");
                if (r < 0)
                        goto out;
                t->type = (enum ggml_type)type;
                r = tensor_nbytes(t->type, t->ne[0], t->n_elements, &t->nbytes);
                if (r < 0) {
                        r = fail(&c, "tensor '%s' has %s type %u", t->name,
                                 r == -EOPNOTSUPP ? "unsupported" : "invalid shape for", type);
                        goto out;
                }
                if (off % g->meta.alignment) {
                        r = fail(&c, "tensor '%s' offset %llu is not aligned to %llu", t->name,
                                 (unsigned long long)off, (unsigned long long)g->meta.alignment);
                        goto out;
                }
                t->data = (const void *)(uintptr_t)off; /* relative until the data section is known */
        }
        /* the data section starts at the next multiple of the alignment */
        size_t pos = (size_t)(c.p - c.start);
        size_t data_start = (pos + g->meta.alignment - 1) / g->meta.alignment * g->meta.alignment;
        if (data_start > size && g->n_tensors > 0) {
                r = fail(&c, "the data section starts at %zu, beyond the end of the file (%zu)", data_start,
                         size);
                goto out;
        }
        for (size_t i = 0; i < g->n_tensors; i++) {
                struct gguf_tensor *t = &g->tensors[i];
                uint64_t off = (uint64_t)(uintptr_t)t->data;
                size_t avail = size - data_start;
                if (off > avail || t->nbytes > avail - off) {
                        r = fail(&c, "tensor '%s' (%llu bytes at data offset %llu) lies beyond the end of the file",
                                 t->name, (unsigned long long)t->nbytes, (unsigned long long)off);
                        goto out;
                }
                t->data = base + data_start + off;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(g->tensors[j].name, t->name) == 0) {
                                r = fail(&c, "tensor '%s' appears twice", t->name);
                                goto out;
                        }
        }
        r = 0;
out:
        if (r < 0 && ret_error) {
                if (r == -ENOMEM)
                        *ret_error = strdup("out of memory");
                else
                        *ret_error = c.error ? TAKE_PTR(c.error) : strdup("corrupt file");
        }
        free(c.error);
        return r;
}

int gguf_parse(const void *data, size_t size, struct gguf **ret, char **ret_error) {
        struct gguf *g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        int r = parse(g, data, size, ret_error);
        if (r < 0) {
                gguf_free(g);
                return r;
        }
        *ret = g;
        return 0;
}

int gguf_open(const char *path, struct gguf **ret, char **ret_error) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                int r = -errno;
                if (ret_error)
                        *ret_error = strdup_printf("cannot open '%s': %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode) || st.st_size < 24) {
                if (ret_error)
                        *ret_error = strdup_printf("'%s' is not a GGUF file (too small or not a regular file)", path);
                return -EBADMSG;
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
                int r = -errno;
                if (ret_error)
                        *ret_error = strdup_printf("cannot map '%s': %s", path, strerror(-r));
                return r;
        }
        struct gguf *g = calloc(1, sizeof(*g));
        if (!g) {
                munmap(m, (size_t)st.st_size);
                return -ENOMEM;
        }
        g->mapped = true;
        char *err = NULL;
        int r = parse(g, m, (size_t)st.st_size, &err);
        if (r < 0) {
                if (ret_error)
                        *ret_error = strdup_printf("'%s': %s", path, err ? err : "corrupt file");
                free(err);
                gguf_free(g);
                return r;
        }
        *ret = g;
        return 0;
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf *g, const char *name) {
        for (size_t i = 0; i < g->n_tensors; i++)
                if (strcmp(g->tensors[i].name, name) == 0)
                        return &g->tensors[i];
        return NULL;
}

float gguf_f16_to_f32(uint16_t h) {
        uint32_t sign = (uint32_t)(h >> 15) << 31;
        uint32_t exp = (h >> 10) & 0x1f;
        uint32_t man = h & 0x3ff;
        uint32_t bits;
        if (exp == 0) {
                /* zero or subnormal: man * 2^-24, exact in f32 */
                float f = (float)man * 0x1p-24f;
                return sign ? -f : f;
        }
        if (exp == 31)
                bits = sign | 0x7f800000u | (man << 13);
        else
                bits = sign | ((exp + 112) << 23) | (man << 13);
        float f;
        memcpy(&f, &bits, 4);
        return f;
}

uint16_t gguf_f32_to_f16(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
        uint32_t ax = x & 0x7fffffff;
        if (ax > 0x7f800000u)
                return sign | 0x7e00; /* NaN */
        if (ax >= 0x477ff000u)         /* rounds to >= 65520: inf */
                return sign | 0x7c00;
        if (ax < 0x38800000u) {
                /* result is subnormal (or zero): round |f| / 2^-24 to an integer, ties to even */
                float a;
                memcpy(&a, &ax, 4);
                float m = nearbyintf(a * 0x1p24f);
                return sign | (uint16_t)m;
        }
        uint32_t e = (ax >> 23) - 112;
        uint32_t m = ax & 0x7fffff;
        uint32_t h = (e << 10) | (m >> 13);
        uint32_t rest = m & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
                h++; /* may carry into the exponent, which is what rounding up means */
        return sign | (uint16_t)h;
}

int gguf_tensor_to_f32(const struct gguf_tensor *t, uint64_t first, uint64_t count, float *out) {
        const uint8_t *p = t->data;
        if (first > t->n_elements || count > t->n_elements - first)
                return -EINVAL;
        switch (t->type) {
        case GGML_TYPE_F32:
                memcpy(out, p + 4 * first, count * 4);
                return 0;
        case GGML_TYPE_F16:
                for (uint64_t i = 0; i < count; i++) {
                        uint16_t h;
                        memcpy(&h, p + 2 * (first + i), 2);
                        out[i] = gguf_f16_to_f32(h);
                }
                return 0;
        case GGML_TYPE_BF16:
                for (uint64_t i = 0; i < count; i++) {
                        uint16_t h;
                        memcpy(&h, p + 2 * (first + i), 2);
                        uint32_t bits = (uint32_t)h << 16;
                        memcpy(&out[i], &bits, 4);
                }
                return 0;
        case GGML_TYPE_Q8_0:
                if (first % 32 || count % 32)
                        return -EINVAL;
                for (uint64_t b = 0; b < count / 32; b++) {
                        const uint8_t *blk = p + 34 * (first / 32 + b);
                        uint16_t h;
                        memcpy(&h, blk, 2);
                        float d = gguf_f16_to_f32(h);
                        const int8_t *q = (const int8_t *)(blk + 2);
                        for (int i = 0; i < 32; i++)
                                out[b * 32 + i] = d * (float)q[i];
                }
                return 0;
        default:
                return -EOPNOTSUPP;
        }
}
