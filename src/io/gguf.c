/* gguf.c -- GGUF metadata, every length checked against the bytes before it is used. */
#include "io/gguf.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

/* A read cursor over [start, end). A take that finds too few bytes fails with -ENODATA
 * (gguf_meta_read then reads more and parses again) after noting the reason. */
struct cursor {
        const uint8_t *start, *p, *end;
        char *error; /* first reason, owned */
};

_printf_(3, 4) static int fail(struct cursor *c, int r, const char *fmt, ...) {
        if (!c->error) {
                va_list ap;
                va_start(ap, fmt);
                c->error = strdup_vprintf(fmt, ap);
                va_end(ap);
        }
        return r;
}

static size_t left(const struct cursor *c) { return (size_t)(c->end - c->p); }
static size_t offset(const struct cursor *c) { return (size_t)(c->p - c->start); }

static int need(struct cursor *c, uint64_t n, const char *what) {
        if (left(c) < n)
                return fail(c, -ENODATA, "truncated at offset %zu: %s needs %llu bytes, beyond the file (%zu left)",
                            offset(c), what, (unsigned long long)n, left(c));
        return 0;
}

static int take_u32(struct cursor *c, uint32_t *v, const char *what) {
        int r = need(c, 4, what);
        if (r < 0)
                return r;
        memcpy(v, c->p, 4);
        c->p += 4;
        return 0;
}

static int take_u64(struct cursor *c, uint64_t *v, const char *what) {
        int r = need(c, 8, what);
        if (r < 0)
                return r;
        memcpy(v, c->p, 8);
        c->p += 8;
        return 0;
}

static int take_str(struct cursor *c, struct gguf_str *s, const char *what) {
        uint64_t len = 0;
        int r = take_u64(c, &len, what);
        if (r < 0)
                return r;
        if (len > GGUF_MAX_STRING)
                return fail(c, -EBADMSG, "%s at offset %zu has length %llu (at most %llu)", what, offset(c) - 8,
                            (unsigned long long)len, (unsigned long long)GGUF_MAX_STRING);
        r = need(c, len, what);
        if (r < 0)
                return r;
        s->p = (const char *)c->p;
        s->len = len;
        c->p += len;
        return 0;
}

static size_t scalar_size(enum gguf_type t) {
        static const uint8_t sizes[GGUF_TYPE_COUNT] = {
                [GGUF_TYPE_UINT8] = 1,   [GGUF_TYPE_INT8] = 1,    [GGUF_TYPE_BOOL] = 1,   [GGUF_TYPE_UINT16] = 2,
                [GGUF_TYPE_INT16] = 2,   [GGUF_TYPE_UINT32] = 4,  [GGUF_TYPE_INT32] = 4,  [GGUF_TYPE_FLOAT32] = 4,
                [GGUF_TYPE_UINT64] = 8,  [GGUF_TYPE_INT64] = 8,   [GGUF_TYPE_FLOAT64] = 8,
        };
        return (unsigned)t < GGUF_TYPE_COUNT ? sizes[t] : 0;
}

/* One little-endian scalar of type t at p. */
static void load_scalar(enum gguf_type t, const uint8_t *p, struct gguf_value *v) {
        uint64_t raw = 0;
        memcpy(&raw, p, scalar_size(t)); /* little-endian host: the low bytes */
        v->type = t;
        switch (t) {
        case GGUF_TYPE_INT8:
                v->i = (int8_t)raw;
                break;
        case GGUF_TYPE_INT16:
                v->i = (int16_t)raw;
                break;
        case GGUF_TYPE_INT32:
                v->i = (int32_t)raw;
                break;
        case GGUF_TYPE_INT64:
                v->i = (int64_t)raw;
                break;
        case GGUF_TYPE_FLOAT32: {
                float f;
                uint32_t bits = (uint32_t)raw;
                memcpy(&f, &bits, 4);
                v->f = f;
                break;
        }
        case GGUF_TYPE_FLOAT64:
                memcpy(&v->f, &raw, 8);
                break;
        default:
                v->u = raw;
                break;
        }
}

static int read_value(struct cursor *c, uint32_t type, struct gguf_value *v, const char *key) {
        if (type >= GGUF_TYPE_COUNT)
                return fail(c, -EBADMSG, "key '%s' has unknown value type %u", key, type);
        if (type == GGUF_TYPE_STRING) {
                v->type = GGUF_TYPE_STRING;
                return take_str(c, &v->s, "a string value");
        }
        if (type != GGUF_TYPE_ARRAY) {
                int r = need(c, scalar_size(type), "a value");
                if (r < 0)
                        return r;
                load_scalar(type, c->p, v);
                c->p += scalar_size(type);
                return 0;
        }
        uint32_t et = 0;
        uint64_t n = 0;
        int r = take_u32(c, &et, "an array type");
        if (r >= 0)
                r = take_u64(c, &n, "an array length");
        if (r < 0)
                return r;
        if (et >= GGUF_TYPE_COUNT || et == GGUF_TYPE_ARRAY)
                return fail(c, -EBADMSG, "key '%s' is an array of unsupported type %u", key, et);
        v->type = GGUF_TYPE_ARRAY;
        v->arr.type = et;
        v->arr.n = n;
        v->arr.data = c->p;
        if (et != GGUF_TYPE_STRING) {
                size_t es = scalar_size(et);
                if (n > UINT64_MAX / es)
                        return fail(c, -EBADMSG, "key '%s' claims %llu elements", key, (unsigned long long)n);
                r = need(c, n * es, "an array");
                if (r < 0)
                        return r;
                c->p += n * es;
                return 0;
        }
        /* each string takes at least its 8-byte length: a count beyond that needs more bytes */
        if (n > UINT64_MAX / 8)
                return fail(c, -EBADMSG, "key '%s' claims %llu strings", key, (unsigned long long)n);
        r = need(c, n * 8, "a string array");
        if (r < 0)
                return r;
        for (uint64_t i = 0; i < n; i++) {
                struct gguf_str s;
                r = take_str(c, &s, "an array string");
                if (r < 0)
                        return r;
        }
        return 0;
}

void gguf_meta_release(struct gguf_meta *m) {
        if (!m)
                return;
        for (size_t i = 0; i < m->n_kv; i++)
                free(m->kv[i].key);
        free(m->kv);
        free(m->owned);
        *m = (struct gguf_meta){0};
}

void gguf_meta_free(struct gguf_meta *m) {
        gguf_meta_release(m);
        free(m);
}

/* The parse proper; -ENODATA when the bytes end before the section does. */
static int parse(struct cursor *c, bool with_tensors, struct gguf_meta *m) {
        uint64_t n_kv = 0;
        uint32_t magic;
        int r = take_u32(c, &magic, "the magic");
        if (r < 0)
                return r;
        if (memcmp(&magic, GGUF_MAGIC, 4) != 0)
                return fail(c, -EBADMSG, "not a GGUF file (bad magic)");
        if ((r = take_u32(c, &m->version, "the version")) < 0)
                return r;
        if (m->version != 3 && m->version != 2)
                return fail(c, -EBADMSG, "unsupported GGUF version %u (this reader knows 2 and 3)", m->version);
        if ((r = take_u64(c, &m->n_tensors, "the tensor count")) < 0 ||
            (r = take_u64(c, &n_kv, "the metadata count")) < 0)
                return r;
        /* a key-value pair takes at least 8 (key length) + 4 (type) bytes, a tensor info 24 */
        if (n_kv > UINT64_MAX / 12 || m->n_tensors > UINT64_MAX / 24)
                return fail(c, -EBADMSG, "header claims %llu tensors and %llu keys, more than the file can hold",
                            (unsigned long long)m->n_tensors,
                            (unsigned long long)n_kv);
        if (n_kv * 12 > left(c) || (with_tensors && m->n_tensors * 24 > left(c) - n_kv * 12))
                return fail(c, -ENODATA, "header claims %llu tensors and %llu keys, more than the file can hold",
                            (unsigned long long)m->n_tensors, (unsigned long long)n_kv);
        m->kv = calloc(n_kv ? n_kv : 1, sizeof(*m->kv));
        if (!m->kv)
                return -ENOMEM;
        m->alignment = GGUF_DEFAULT_ALIGNMENT;
        for (uint64_t i = 0; i < n_kv; i++) {
                struct gguf_kv *kv = &m->kv[i];
                struct gguf_str key;
                uint32_t type = 0;
                if ((r = take_str(c, &key, "a key")) < 0)
                        return r;
                if (memchr(key.p, 0, key.len))
                        return fail(c, -EBADMSG, "key %llu contains a NUL byte", (unsigned long long)i);
                kv->key = strndup(key.p, key.len);
                if (!kv->key)
                        return -ENOMEM;
                m->n_kv++;
                if ((r = take_u32(c, &type, "a value type")) < 0 || (r = read_value(c, type, &kv->v, kv->key)) < 0)
                        return r;
                if (strcmp(kv->key, "general.alignment") == 0) {
                        if (kv->v.type != GGUF_TYPE_UINT32 || kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)) ||
                            kv->v.u > 4096)
                                return fail(c, -EBADMSG, "general.alignment must be a uint32 power of two <= 4096");
                        m->alignment = kv->v.u;
                }
        }
        m->end = offset(c);
        return 0;
}

int gguf_meta_parse(const void *data, size_t size, bool with_tensors, struct gguf_meta *ret, char **ret_error) {
        struct cursor c = {.start = data, .p = data, .end = (const uint8_t *)data + size};
        *ret = (struct gguf_meta){.base = data, .size = size};
        int r = parse(&c, with_tensors, ret);
        if (r == -ENODATA)
                r = -EBADMSG;
        if (r < 0 && ret_error)
                *ret_error = r == -ENOMEM ? strdup("out of memory") : TAKE_PTR(c.error);
        free(c.error);
        return r;
}

int gguf_meta_read(const char *path, size_t max, struct gguf_meta **ret, char **ret_error) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        _cleanup_free_ uint8_t *data = NULL;
        struct stat st;
        size_t have = 0, want = (size_t)1 << 20;
        int r;

        if (max == 0)
                max = GGUF_META_MAX;
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                if (ret_error)
                        *ret_error = strdup_printf("cannot open '%s': %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode) || st.st_size < 24) {
                if (ret_error)
                        *ret_error = strdup_printf("'%s' is not a GGUF file (%s)", path,
                                                   S_ISREG(st.st_mode) ? "too short" : "not a regular file");
                return -EBADMSG;
        }
        struct gguf_meta *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        for (;;) {
                /* read up to want bytes (the file's size and max bound it), then parse again */
                want = MIN(want, MIN(max, (size_t)st.st_size));
                uint8_t *p = realloc(data, want);
                if (!p) {
                        r = -ENOMEM;
                        break;
                }
                data = p;
                while (have < want) {
                        ssize_t n = pread(fd, data + have, want - have, (off_t)have);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0)
                                break;
                        have += (size_t)n;
                }
                struct cursor c = {.start = data, .p = data, .end = data + have};
                gguf_meta_release(m);
                *m = (struct gguf_meta){.base = data, .size = have};
                r = parse(&c, false, m);
                if (r == -ENODATA && have == want && want < MIN(max, (size_t)st.st_size)) {
                        free(c.error);
                        want = want > SIZE_MAX / 4 ? SIZE_MAX : want * 4;
                        continue;
                }
                if (r == -ENODATA && have == max && have < (size_t)st.st_size) {
                        free(TAKE_PTR(c.error));
                        r = fail(&c, -EFBIG, "the metadata runs past %zu KiB (the most read)", max >> 10);
                } else if (r == -ENODATA)
                        r = -EBADMSG;
                if (r < 0 && ret_error)
                        *ret_error = r == -ENOMEM ? strdup("out of memory")
                                                  : strdup_printf("'%s': %s", path, c.error ? c.error : "corrupt file");
                free(c.error);
                break;
        }
        if (r < 0) {
                gguf_meta_free(m);
                return r;
        }
        m->owned = TAKE_PTR(data);
        *ret = m;
        return 0;
}

const struct gguf_kv *gguf_find_kv(const struct gguf_meta *m, const char *key) {
        for (size_t i = 0; i < m->n_kv; i++)
                if (strcmp(m->kv[i].key, key) == 0)
                        return &m->kv[i];
        return NULL;
}

static bool is_unsigned(enum gguf_type t) {
        return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_UINT64;
}
static bool is_signed(enum gguf_type t) {
        return t == GGUF_TYPE_INT8 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_INT64;
}

int gguf_get_u32(const struct gguf_meta *m, const char *key, uint32_t *ret) {
        const struct gguf_kv *kv = gguf_find_kv(m, key);
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

int gguf_get_f32(const struct gguf_meta *m, const char *key, float *ret) {
        const struct gguf_kv *kv = gguf_find_kv(m, key);
        if (!kv)
                return -ENOENT;
        if (kv->v.type != GGUF_TYPE_FLOAT32 && kv->v.type != GGUF_TYPE_FLOAT64)
                return -EINVAL;
        *ret = (float)kv->v.f;
        return 0;
}

int gguf_get_bool(const struct gguf_meta *m, const char *key, bool *ret) {
        const struct gguf_kv *kv = gguf_find_kv(m, key);
        if (!kv)
                return -ENOENT;
        if ((kv->v.type == GGUF_TYPE_BOOL || is_unsigned(kv->v.type)) && kv->v.u <= 1) {
                *ret = kv->v.u != 0;
                return 0;
        }
        return -EINVAL;
}

int gguf_get_str(const struct gguf_meta *m, const char *key, struct gguf_str *ret) {
        const struct gguf_kv *kv = gguf_find_kv(m, key);
        if (!kv)
                return -ENOENT;
        if (kv->v.type != GGUF_TYPE_STRING)
                return -EINVAL;
        *ret = kv->v.s;
        return 0;
}

int gguf_get_strdup(const struct gguf_meta *m, const char *key, char **ret) {
        struct gguf_str s;
        int r = gguf_get_str(m, key, &s);
        if (r < 0)
                return r;
        char *d = strndup(s.p, s.len);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

int gguf_get_array(const struct gguf_meta *m, const char *key, enum gguf_type type, const struct gguf_value **ret) {
        const struct gguf_kv *kv = gguf_find_kv(m, key);
        if (!kv)
                return -ENOENT;
        if (kv->v.type != GGUF_TYPE_ARRAY || kv->v.arr.type != type)
                return -EINVAL;
        *ret = &kv->v;
        return 0;
}

bool gguf_strs_next(struct gguf_strs *it, struct gguf_str *ret) {
        if (it->left == 0)
                return false;
        uint64_t len;
        memcpy(&len, it->p, 8);
        ret->p = (const char *)it->p + 8;
        ret->len = len;
        it->p += 8 + len;
        it->left--;
        return true;
}

uint32_t gguf_array_u32(const struct gguf_value *v, uint64_t i) {
        uint32_t x;
        memcpy(&x, (const uint8_t *)v->arr.data + 4 * i, 4);
        return x;
}
