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

#include "01-base/util.h"

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

static size_t scalar_size(enum gguf_type t) {
        switch (t) {
        case GGUF_TYPE_UINT8:
        case GGUF_TYPE_INT8:
        case GGUF_TYPE_BOOL:
                return 1;
        case GGUF_TYPE_UINT16:
        case GGUF_TYPE_INT16:
                return 2;
        case GGUF_TYPE_UINT32:
        case GGUF_TYPE_INT32:
        case GGUF_TYPE_FLOAT32:
                return 4;
        case GGUF_TYPE_UINT64:
        case GGUF_TYPE_INT64:
        case GGUF_TYPE_FLOAT64:
                return 8;
        default:
                return 0;
        }
}

const char *gguf_type_name(enum gguf_type t) {
        static const char *const names[] = {"uint8", "int8",   "uint16", "int16", "uint32", "int32", "float32",
                                            "bool",  "string", "array",  "uint64", "int64", "float64"};
        return (unsigned)t < ELEMENTSOF(names) ? names[t] : "unknown";
}

/* Reads one little-endian scalar of type t at p into v. */
static void load_scalar(enum gguf_type t, const uint8_t *p, struct gguf_value *v) {
        v->type = t;
        switch (t) {
        case GGUF_TYPE_UINT8:
        case GGUF_TYPE_BOOL:
                v->u = p[0];
                break;
        case GGUF_TYPE_INT8:
                v->i = (int8_t)p[0];
                break;
        case GGUF_TYPE_UINT16: {
                uint16_t x;
                memcpy(&x, p, 2);
                v->u = x;
                break;
        }
        case GGUF_TYPE_INT16: {
                int16_t x;
                memcpy(&x, p, 2);
                v->i = x;
                break;
        }
        case GGUF_TYPE_UINT32: {
                uint32_t x;
                memcpy(&x, p, 4);
                v->u = x;
                break;
        }
        case GGUF_TYPE_INT32: {
                int32_t x;
                memcpy(&x, p, 4);
                v->i = x;
                break;
        }
        case GGUF_TYPE_FLOAT32: {
                float x;
                memcpy(&x, p, 4);
                v->f = x;
                break;
        }
        case GGUF_TYPE_UINT64:
                memcpy(&v->u, p, 8);
                break;
        case GGUF_TYPE_INT64:
                memcpy(&v->i, p, 8);
                break;
        case GGUF_TYPE_FLOAT64:
                memcpy(&v->f, p, 8);
                break;
        default:
                break;
        }
}

static int read_value(struct cursor *c, uint32_t type, struct gguf_value *v, const char *key) {
        if (type >= GGUF_TYPE_COUNT)
                return fail(c, "key '%s' has unknown value type %u", key, type);
        if (type == GGUF_TYPE_STRING) {
                v->type = GGUF_TYPE_STRING;
                return take_str(c, &v->s, "a string value");
        }
        if (type != GGUF_TYPE_ARRAY) {
                size_t n = scalar_size(type);
                if (left(c) < n)
                        return fail(c, "truncated in the value of key '%s'", key);
                load_scalar(type, c->p, v);
                c->p += n;
                return 0;
        }
        uint32_t et = 0;
        uint64_t n = 0;
        int r = take_u32(c, &et, "an array type");
        if (r < 0)
                return r;
        r = take_u64(c, &n, "an array length");
        if (r < 0)
                return r;
        if (et >= GGUF_TYPE_COUNT || et == GGUF_TYPE_ARRAY)
                return fail(c, "key '%s' is an array of unsupported type %u", key, et);
        v->type = GGUF_TYPE_ARRAY;
        v->arr.type = et;
        v->arr.n = n;
        v->arr.data = c->p;
        v->arr.strs = NULL;
        if (et == GGUF_TYPE_STRING) {
                /* each string needs at least its 8-byte length: bound n before allocating */
                if (n > left(c) / 8)
                        return fail(c, "key '%s' claims %llu strings, more than the file can hold", key,
                                    (unsigned long long)n);
                v->arr.strs = calloc(n ? n : 1, sizeof(struct gguf_str));
                if (!v->arr.strs)
                        return -ENOMEM;
                for (uint64_t i = 0; i < n; i++) {
                        r = take_str(c, &v->arr.strs[i], "an array string");
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        size_t es = scalar_size(et);
        if (n > left(c) / es)
                return fail(c, "key '%s' claims %llu elements of %zu bytes, beyond the file", key,
                            (unsigned long long)n, es);
        c->p += n * es;
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
        for (size_t i = 0; i < g->n_kv; i++) {
                free(g->kv[i].key);
                if (g->kv[i].v.type == GGUF_TYPE_ARRAY)
                        free(g->kv[i].v.arr.strs);
        }
        free(g->kv);
        for (size_t i = 0; i < g->n_tensors; i++)
                free(g->tensors[i].name);
        free(g->tensors);
        if (g->mapped && g->base)
                munmap((void *)g->base, g->size);
        free(g);
}

static char *strndup_str(struct gguf_str s) { return strndup(s.p, s.len); }

static int parse(struct gguf *g, char **ret_error) {
        struct cursor c = {.start = g->base, .p = g->base, .end = g->base + g->size};
        int r;
        char magic[4];
        uint64_t n_tensors = 0, n_kv = 0;

        if (g->size < 4 || memcmp(g->base, GGUF_MAGIC, 4) != 0) {
                r = fail(&c, "not a GGUF file (bad magic)");
                goto out;
        }
        r = take(&c, magic, 4, "the magic");
        if (r >= 0)
                r = take_u32(&c, &g->version, "the version");
        if (r < 0)
                goto out;
        if (g->version != 3 && g->version != 2) {
                r = fail(&c, "unsupported GGUF version %u (this reader knows 2 and 3)", g->version);
                goto out;
        }
        r = take_u64(&c, &n_tensors, "the tensor count");
        if (r >= 0)
                r = take_u64(&c, &n_kv, "the metadata count");
        if (r < 0)
                goto out;
        /* a key-value pair takes at least 8 (key length) + 4 (type) bytes, a tensor info 24 */
        if (n_kv > left(&c) / 12 || n_tensors > left(&c) / 24) {
                r = fail(&c, "header claims %llu tensors and %llu keys, more than the file can hold",
                         (unsigned long long)n_tensors, (unsigned long long)n_kv);
                goto out;
        }
        g->kv = calloc(n_kv ? n_kv : 1, sizeof(*g->kv));
        g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof(*g->tensors));
        if (!g->kv || !g->tensors) {
                r = -ENOMEM;
                goto out;
        }
        g->alignment = GGUF_DEFAULT_ALIGNMENT;
        for (uint64_t i = 0; i < n_kv; i++) {
                struct gguf_kv *kv = &g->kv[i];
                struct gguf_str key;
                uint32_t type = 0;
                r = take_str(&c, &key, "a key");
                if (r < 0)
                        goto out;
                kv->key = strndup_str(key);
                if (!kv->key) {
                        r = -ENOMEM;
                        goto out;
                }
                g->n_kv++;
                if (strlen(kv->key) != key.len) {
                        r = fail(&c, "key %llu contains a NUL byte", (unsigned long long)i);
                        goto out;
                }
                r = take_u32(&c, &type, "a value type");
                if (r < 0)
                        goto out;
                r = read_value(&c, type, &kv->v, kv->key);
                if (r < 0)
                        goto out;
                if (strcmp(kv->key, "general.alignment") == 0) {
                        if (kv->v.type != GGUF_TYPE_UINT32 || kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)) ||
                            kv->v.u > 4096) {
                                r = fail(&c, "general.alignment must be a uint32 power of two <= 4096");
                                goto out;
                        }
                        g->alignment = kv->v.u;
                }
        }
        for (uint64_t i = 0; i < n_tensors; i++) {
                struct gguf_tensor *t = &g->tensors[i];
                struct gguf_str name;
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
                if (off % g->alignment) {
                        r = fail(&c, "tensor '%s' offset %llu is not aligned to %llu", t->name,
                                 (unsigned long long)off, (unsigned long long)g->alignment);
                        goto out;
                }
                t->data = (const void *)(uintptr_t)off; /* relative until the data section is known */
        }
        /* the data section starts at the next multiple of the alignment */
        size_t pos = (size_t)(c.p - c.start);
        size_t data_start = (pos + g->alignment - 1) / g->alignment * g->alignment;
        if (data_start > g->size && g->n_tensors > 0) {
                r = fail(&c, "the data section starts at %zu, beyond the end of the file (%zu)", data_start,
                         g->size);
                goto out;
        }
        for (size_t i = 0; i < g->n_tensors; i++) {
                struct gguf_tensor *t = &g->tensors[i];
                uint64_t off = (uint64_t)(uintptr_t)t->data;
                size_t avail = g->size - data_start;
                if (off > avail || t->nbytes > avail - off) {
                        r = fail(&c, "tensor '%s' (%llu bytes at data offset %llu) lies beyond the end of the file",
                                 t->name, (unsigned long long)t->nbytes, (unsigned long long)off);
                        goto out;
                }
                t->data = g->base + data_start + off;
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
        g->base = data;
        g->size = size;
        int r = parse(g, ret_error);
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
        g->base = m;
        g->size = (size_t)st.st_size;
        g->mapped = true;
        char *err = NULL;
        int r = parse(g, &err);
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

const struct gguf_kv *gguf_find_kv(const struct gguf *g, const char *key) {
        for (size_t i = 0; i < g->n_kv; i++)
                if (strcmp(g->kv[i].key, key) == 0)
                        return &g->kv[i];
        return NULL;
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf *g, const char *name) {
        for (size_t i = 0; i < g->n_tensors; i++)
                if (strcmp(g->tensors[i].name, name) == 0)
                        return &g->tensors[i];
        return NULL;
}

static bool is_unsigned(enum gguf_type t) {
        return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_UINT64;
}
static bool is_signed(enum gguf_type t) {
        return t == GGUF_TYPE_INT8 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_INT64;
}

int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *ret) {
        const struct gguf_kv *kv = gguf_find_kv(g, key);
        if (!kv)
                return -ENOENT;
        if (is_unsigned(kv->v.type) && kv->v.u <= UINT32_MAX) {
                *ret = (uint32_t)kv->v.u;
                return 0;
        }
        if (is_signed(kv->v.type) && kv->v.i >= 0 && kv->v.i <= (int64_t)UINT32_MAX) {
                *ret = (uint32_t)kv->v.i;
                return 0;
        }
        return -EINVAL;
}

int gguf_get_f32(const struct gguf *g, const char *key, float *ret) {
        const struct gguf_kv *kv = gguf_find_kv(g, key);
        if (!kv)
                return -ENOENT;
        if (kv->v.type != GGUF_TYPE_FLOAT32 && kv->v.type != GGUF_TYPE_FLOAT64)
                return -EINVAL;
        *ret = (float)kv->v.f;
        return 0;
}

int gguf_get_bool(const struct gguf *g, const char *key, bool *ret) {
        const struct gguf_kv *kv = gguf_find_kv(g, key);
        if (!kv)
                return -ENOENT;
        if ((kv->v.type == GGUF_TYPE_BOOL || is_unsigned(kv->v.type)) && kv->v.u <= 1) {
                *ret = kv->v.u != 0;
                return 0;
        }
        return -EINVAL;
}

int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *ret) {
        const struct gguf_kv *kv = gguf_find_kv(g, key);
        if (!kv)
                return -ENOENT;
        if (kv->v.type != GGUF_TYPE_STRING)
                return -EINVAL;
        *ret = kv->v.s;
        return 0;
}

int gguf_get_strdup(const struct gguf *g, const char *key, char **ret) {
        struct gguf_str s;
        int r = gguf_get_str(g, key, &s);
        if (r < 0)
                return r;
        char *d = strndup_str(s);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
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
