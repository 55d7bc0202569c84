/* gguf.h -- a bounds-checked reader for GGUF v3 files (metadata and tensors).
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

#define GGUF_MAGIC "GGUF"
#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32
/* Longest key or string we accept; longer means corrupt (the chat template is < 64 KiB). */
#define GGUF_MAX_STRING ((uint64_t)1 << 24)

enum gguf_type {
        GGUF_TYPE_UINT8 = 0,
        GGUF_TYPE_INT8 = 1,
        GGUF_TYPE_UINT16 = 2,
        GGUF_TYPE_INT16 = 3,
        GGUF_TYPE_UINT32 = 4,
        GGUF_TYPE_INT32 = 5,
        GGUF_TYPE_FLOAT32 = 6,
        GGUF_TYPE_BOOL = 7,
        GGUF_TYPE_STRING = 8,
        GGUF_TYPE_ARRAY = 9,
        GGUF_TYPE_UINT64 = 10,
        GGUF_TYPE_INT64 = 11,
        GGUF_TYPE_FLOAT64 = 12,
        GGUF_TYPE_COUNT,
};

/* ggml tensor types this reader knows the size of (others are rejected as corrupt). */
enum ggml_type {
        GGML_TYPE_F32 = 0,
        GGML_TYPE_F16 = 1,
        GGML_TYPE_Q8_0 = 8,
        GGML_TYPE_BF16 = 30,
};

struct gguf_str {
        const char *p;  /* into the mapping; not NUL-terminated */
        uint64_t len;
};

struct gguf_value {
        enum gguf_type type;
        union {
                uint64_t u;      /* unsigned integers, bool */
                int64_t i;       /* signed integers */
                double f;        /* float32, float64 */
                struct gguf_str s;
                struct {
                        enum gguf_type type; /* element type; never ARRAY (nested arrays rejected) */
                        uint64_t n;
                        const void *data;    /* scalars: n packed little-endian elements */
                        struct gguf_str *strs; /* strings: n entries (owned by struct gguf) */
                } arr;
        };
};

struct gguf_kv {
        char *key;      /* owned, NUL-terminated copy */
        struct gguf_value v;
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
        const uint8_t *base; /* the file's bytes */
        size_t size;
        bool mapped;         /* base is an mmap (else borrowed from the caller) */
        uint32_t version;
        uint64_t alignment;
        size_t n_kv;
        struct gguf_kv *kv;
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

const struct gguf_kv *gguf_find_kv(const struct gguf *g, const char *key);
const struct gguf_tensor *gguf_find_tensor(const struct gguf *g, const char *name);

/* Typed getters: -ENOENT when the key is missing, -EINVAL when its type does not fit
 * (any integer type is accepted for an integer when the value is in range; float32 and
 * float64 for a float; bool also from an integer 0/1). */
int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *ret);
int gguf_get_f32(const struct gguf *g, const char *key, float *ret);
int gguf_get_bool(const struct gguf *g, const char *key, bool *ret);
int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *ret);
/* A copy of a string value (caller frees). */
int gguf_get_strdup(const struct gguf *g, const char *key, char **ret);

/* Converts elements [first, first + count) of a tensor to f32 into out (count floats).
 * Knows F32, F16, BF16 and Q8_0 (for Q8_0, first and count must be multiples of 32).
 * -EINVAL for a range outside the tensor, -EOPNOTSUPP for another type. */
int gguf_tensor_to_f32(const struct gguf_tensor *t, uint64_t first, uint64_t count, float *out);

/* IEEE half to single, exact (subnormals, inf and NaN included). Can't fail. */
float gguf_f16_to_f32(uint16_t h);
/* Single to half, round to nearest even, overflow to inf. Can't fail. */
uint16_t gguf_f32_to_f16(float f);

const char *gguf_type_name(enum gguf_type t);

#endif
