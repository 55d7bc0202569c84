/* gguf.h -- a bounds-checked reader for GGUF v3 files: the metadata through gauntlet's own
 * reader (src/io/gguf.h, whose getters take &g->meta), then the tensors.
 *
 * The whole file is mapped read-only; a struct gguf owns the mapping and every
 * index built over it. Strings and tensor data handed out point INTO the mapping: they
 * stay valid until gguf_free() and are not NUL-terminated (struct gguf_str has a length).
 *
 * Everything read from the file is checked before use: counts against the bytes left,
 * string and array lengths, tensor dimensions and their product (no overflow), tensor
 * offsets against the data section and the alignment. A corrupt or truncated file gives
 * -EBADMSG (or -EOVERFLOW, -ENOMEM) and a one-line reason, never a read out of bounds.
 */
#ifndef TESTBED_GGUF_H
#define TESTBED_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/gguf.h"

#define GGUF_MAX_DIMS 4

/* ggml tensor types this reader knows the size of (others are rejected as corrupt). */
enum ggml_type {
        GGML_TYPE_F32 = 0,
        GGML_TYPE_F16 = 1,
        GGML_TYPE_Q8_0 = 8,
        GGML_TYPE_BF16 = 30,
};

struct gguf_tensor {
        char *name;     /* owned, NUL-terminated copy */
        uint32_t n_dims;
        uint64_t ne[GGUF_MAX_DIMS]; /* fastest-varying first; unused dims are 1 */
        enum ggml_type type;
        uint64_t n_elements;
        uint64_t nbytes;
        const void *data; /* into the mapping, aligned to the file's alignment */
};

struct gguf {
        struct gguf_meta meta; /* the header and the keys (src/io/gguf.h): meta.base and
                                * meta.size are the file's bytes, meta.alignment the data's */
        bool mapped;           /* meta.base is an mmap (else borrowed from the caller) */
        size_t n_tensors;
        struct gguf_tensor *tensors;
};

/* Maps and parses path. On failure returns a negative errno and, if ret_error is not NULL,
 * a one-line reason in *ret_error (caller frees). */
int gguf_open(const char *path, struct gguf **ret, char **ret_error);
/* Parses bytes already in memory; the caller keeps them alive until gguf_free(). */
int gguf_parse(const void *data, size_t size, struct gguf **ret, char **ret_error);
void gguf_free(struct gguf *g);
static inline void gguf_freep(struct gguf **g) { gguf_free(*g); }

const struct gguf_tensor *gguf_find_tensor(const struct gguf *g, const char *name);

/* Converts elements [first, first + count) of a tensor to f32 into out (count floats).
 * Knows F32, F16, BF16 and Q8_0 (for Q8_0, first and count must be multiples of 32).
 * -EINVAL for a range outside the tensor, -EOPNOTSUPP for another type. */
int gguf_tensor_to_f32(const struct gguf_tensor *t, uint64_t first, uint64_t count, float *out);

/* IEEE half to single, exact (subnormals, inf and NaN included). Can't fail. */
float gguf_f16_to_f32(uint16_t h);
/* Single to half, round to nearest even, overflow to inf. Can't fail. */
uint16_t gguf_f32_to_f16(float f);

#endif
