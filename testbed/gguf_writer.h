/* gguf_writer.h -- builds GGUF v3 files in memory (tests and tools; the real model comes
 * from testbed/train/).
 *
 * Usage: gguf_writer_init, then any number of gguf_writer_kv_* and gguf_writer_tensor
 * calls (tensor data is copied), then gguf_writer_finish which lays out header, metadata,
 * tensor infos and the aligned data section into ret (caller owns ret->data).
 */
#ifndef TESTBED_GGUF_WRITER_H
#define TESTBED_GGUF_WRITER_H

#include <stdint.h>

#include "text/buf.h"
#include "gguf.h"

struct gguf_writer {
        struct buf meta;     /* the key-value section */
        struct buf infos;    /* the tensor-info section, offsets relative to the data section */
        struct buf data;     /* tensor bytes, each padded to the alignment */
        uint64_t n_kv, n_tensors;
        uint32_t alignment;
        int error;           /* first failure, reported by finish */
};

void gguf_writer_init(struct gguf_writer *w, uint32_t alignment);
void gguf_writer_release(struct gguf_writer *w);
void gguf_writer_kv_u32(struct gguf_writer *w, const char *key, uint32_t v);
void gguf_writer_kv_f32(struct gguf_writer *w, const char *key, float v);
void gguf_writer_kv_bool(struct gguf_writer *w, const char *key, bool v);
void gguf_writer_kv_str(struct gguf_writer *w, const char *key, const char *v);
void gguf_writer_kv_strv(struct gguf_writer *w, const char *key, const char *const *v, uint64_t n);
void gguf_writer_kv_i32v(struct gguf_writer *w, const char *key, const int32_t *v, uint64_t n);
void gguf_writer_kv_f32v(struct gguf_writer *w, const char *key, const float *v, uint64_t n);
/* ne fastest-first, n_dims entries; data is nbytes of the given type. */
void gguf_writer_tensor(struct gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                        enum ggml_type type, const void *data, size_t nbytes);
/* 0 and the whole file in ret, or the first error. */
int gguf_writer_finish(struct gguf_writer *w, struct buf *ret);

#endif
