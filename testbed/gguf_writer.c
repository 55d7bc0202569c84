/* gguf_writer.c -- a GGUF v3 file laid out in memory. */
#include "gguf_writer.h"

#include <errno.h>
#include <string.h>

void gguf_writer_init(struct gguf_writer *w, uint32_t alignment) {
        *w = (struct gguf_writer){.alignment = alignment ? alignment : GGUF_DEFAULT_ALIGNMENT};
        buf_init(&w->meta, 0);
        buf_init(&w->infos, 0);
        buf_init(&w->data, 0);
}

void gguf_writer_release(struct gguf_writer *w) {
        buf_release(&w->meta);
        buf_release(&w->infos);
        buf_release(&w->data);
}

static void put(struct gguf_writer *w, struct buf *b, const void *p, size_t n) {
        if (n == 0)
                return;
        int r = buf_append(b, p, n);
        if (r < 0 && !w->error)
                w->error = r;
}
static void put_u32(struct gguf_writer *w, struct buf *b, uint32_t v) { put(w, b, &v, 4); }
static void put_u64(struct gguf_writer *w, struct buf *b, uint64_t v) { put(w, b, &v, 8); }
static void put_str(struct gguf_writer *w, struct buf *b, const char *s) {
        put_u64(w, b, strlen(s));
        put(w, b, s, strlen(s));
}
static void key(struct gguf_writer *w, const char *k, enum gguf_type t) {
        put_str(w, &w->meta, k);
        put_u32(w, &w->meta, t);
        w->n_kv++;
}

void gguf_writer_kv_u32(struct gguf_writer *w, const char *k, uint32_t v) {
        key(w, k, GGUF_TYPE_UINT32);
        put_u32(w, &w->meta, v);
}

void gguf_writer_kv_f32(struct gguf_writer *w, const char *k, float v) {
        key(w, k, GGUF_TYPE_FLOAT32);
        put(w, &w->meta, &v, 4);
}

void gguf_writer_kv_bool(struct gguf_writer *w, const char *k, bool v) {
        uint8_t b = v;
        key(w, k, GGUF_TYPE_BOOL);
        put(w, &w->meta, &b, 1);
}

void gguf_writer_kv_str(struct gguf_writer *w, const char *k, const char *v) {
        key(w, k, GGUF_TYPE_STRING);
        put_str(w, &w->meta, v);
}

void gguf_writer_kv_strv(struct gguf_writer *w, const char *k, const char *const *v, uint64_t n) {
        key(w, k, GGUF_TYPE_ARRAY);
        put_u32(w, &w->meta, GGUF_TYPE_STRING);
        put_u64(w, &w->meta, n);
        for (uint64_t i = 0; i < n; i++)
                put_str(w, &w->meta, v[i]);
}

/* An array of n 4-byte scalars of type t. */
static void kv_array4(struct gguf_writer *w, const char *k, enum gguf_type t, const void *v, uint64_t n) {
        key(w, k, GGUF_TYPE_ARRAY);
        put_u32(w, &w->meta, t);
        put_u64(w, &w->meta, n);
        put(w, &w->meta, v, n * 4);
}

void gguf_writer_kv_i32v(struct gguf_writer *w, const char *k, const int32_t *v, uint64_t n) {
        kv_array4(w, k, GGUF_TYPE_INT32, v, n);
}

void gguf_writer_kv_f32v(struct gguf_writer *w, const char *k, const float *v, uint64_t n) {
        kv_array4(w, k, GGUF_TYPE_FLOAT32, v, n);
}

void gguf_writer_tensor(struct gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                        enum ggml_type type, const void *data, size_t nbytes) {
        static const uint8_t zeros[64];
        put_str(w, &w->infos, name);
        put_u32(w, &w->infos, n_dims);
        for (uint32_t d = 0; d < n_dims; d++)
                put_u64(w, &w->infos, ne[d]);
        put_u32(w, &w->infos, type);
        put_u64(w, &w->infos, w->data.len);
        put(w, &w->data, data, nbytes);
        size_t pad = (w->alignment - w->data.len % w->alignment) % w->alignment;
        while (pad > 0) {
                size_t n = pad < sizeof(zeros) ? pad : sizeof(zeros);
                put(w, &w->data, zeros, n);
                pad -= n;
        }
        w->n_tensors++;
}

int gguf_writer_finish(struct gguf_writer *w, struct buf *ret) {
        static const uint8_t zeros[64];
        struct buf out;
        buf_init(&out, 0);
        put(w, &out, GGUF_MAGIC, 4);
        put_u32(w, &out, 3);
        put_u64(w, &out, w->n_tensors);
        put_u64(w, &out, w->n_kv + 1);
        put_str(w, &out, "general.alignment");
        put_u32(w, &out, GGUF_TYPE_UINT32);
        put_u32(w, &out, w->alignment);
        put(w, &out, w->meta.data, w->meta.len);
        put(w, &out, w->infos.data, w->infos.len);
        size_t pad = (w->alignment - out.len % w->alignment) % w->alignment;
        while (pad > 0) {
                size_t n = pad < sizeof(zeros) ? pad : sizeof(zeros);
                put(w, &out, zeros, n);
                pad -= n;
        }
        put(w, &out, w->data.data, w->data.len);
        if (w->error) {
                buf_release(&out);
                return w->error;
        }
        *ret = out;
        return 0;
}
