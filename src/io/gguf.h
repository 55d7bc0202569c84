/* gguf.h -- a bounded reader of GGUF metadata: the header and the key-value section, never
 * the tensors.
 *
 * gguf_meta_parse reads bytes already in memory (the testbed maps its model and reads the
 * tensor infos that follow, testbed/gguf.c); gguf_meta_read reads a file from its start only
 * as far as the key-value section goes, in growing steps, and refuses a section larger than
 * its cap: a model of 100 GB costs the few MB of its vocabulary, a hostile file at most the
 * cap.
 *
 * Everything is checked before use: the magic, the version (2 or 3), every count against
 * the bytes left (a key-value pair takes at least 12 bytes, a string 8, an array element its
 * size), string lengths (GGUF_MAX_STRING), value types, nested arrays (refused). The only
 * allocations are the key table (n_kv entries, bounded by the bytes) and the key copies: a
 * string array is walked with gguf_strs_next, never copied. Values point INTO the bytes
 * parsed (struct gguf_str has a length and is not NUL-terminated): they stay valid while
 * those bytes do (gguf_meta_read's own copy: until gguf_meta_free).
 *
 * Errors: -EBADMSG with a one-line reason in *ret_error (caller frees): bad magic, an
 * unknown version, a count or length beyond the bytes, an unknown type; -EFBIG when the
 * key-value section runs past gguf_meta_read's cap; -ENOMEM; an open/read errno.
 */
#ifndef GAUNTLET_GGUF_H
#define GAUNTLET_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC "GGUF"
#define GGUF_DEFAULT_ALIGNMENT 32
/* Longest key or string value accepted; longer means corrupt (a chat template is < 64 KiB). */
#define GGUF_MAX_STRING ((uint64_t)1 << 24)
/* gguf_meta_read's default cap on the header and key-value section: the largest real
 * vocabularies (262k tokens and their merges) take under 20 MiB. */
#define GGUF_META_MAX ((size_t)128 << 20)

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

struct gguf_str {
        const char *p; /* into the parsed bytes; not NUL-terminated */
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
                        enum gguf_type type; /* element type; never ARRAY (nested arrays refused) */
                        uint64_t n;
                        const void *data;    /* n packed little-endian scalars, or n strings
                                              * (each a u64 length and its bytes: gguf_strs_next) */
                } arr;
        };
};

struct gguf_kv {
        char *key; /* owned, NUL-terminated copy */
        struct gguf_value v;
};

struct gguf_meta {
        const uint8_t *base; /* the bytes parsed; values point into them */
        uint8_t *owned;      /* gguf_meta_read's copy of the file's start (== base), else NULL */
        size_t size;         /* bytes at base */
        uint32_t version;
        uint64_t n_tensors;  /* as the header says (the tensor infos start at end) */
        uint64_t alignment;  /* general.alignment, else GGUF_DEFAULT_ALIGNMENT */
        size_t end;          /* offset of the first byte after the key-value section */
        size_t n_kv;
        struct gguf_kv *kv;  /* owned */
};

/* Parses the header and the key-value section of data[0..size) into *ret (whose fields are
 * overwritten; release it with gguf_meta_release even on failure). The tensor count is
 * checked against the bytes only when with_tensors (the caller reads them next). */
int gguf_meta_parse(const void *data, size_t size, bool with_tensors, struct gguf_meta *ret, char **ret_error);
/* Reads path's metadata, up to max bytes of it (0: GGUF_META_MAX). *ret_error names the
 * path. -ENOENT when the file does not exist; -EBADMSG for a file too short, not regular, or
 * not GGUF. */
int gguf_meta_read(const char *path, size_t max, struct gguf_meta **ret, char **ret_error);
/* Frees the keys (and the copy gguf_meta_read made); the struct itself stays. */
void gguf_meta_release(struct gguf_meta *m);
void gguf_meta_free(struct gguf_meta *m);
static inline void gguf_meta_freep(struct gguf_meta **m) { gguf_meta_free(*m); }

const struct gguf_kv *gguf_find_kv(const struct gguf_meta *m, const char *key);

/* Typed getters: -ENOENT when the key is missing, -EINVAL when its type does not fit
 * (any integer type is accepted for an integer when the value is in range; float32 and
 * float64 for a float; bool also from an integer 0/1). */
int gguf_get_u32(const struct gguf_meta *m, const char *key, uint32_t *ret);
int gguf_get_f32(const struct gguf_meta *m, const char *key, float *ret);
int gguf_get_bool(const struct gguf_meta *m, const char *key, bool *ret);
int gguf_get_str(const struct gguf_meta *m, const char *key, struct gguf_str *ret);
/* A copy of a string value (caller frees). */
int gguf_get_strdup(const struct gguf_meta *m, const char *key, char **ret);
/* An array value of element type type (-ENOENT missing, -EINVAL another type). */
int gguf_get_array(const struct gguf_meta *m, const char *key, enum gguf_type type, const struct gguf_value **ret);

/* Walks a string array already checked by the parser: start with it = {v->arr.data,
 * v->arr.n}; each call sets *ret to the next string and returns true, false at the end. */
struct gguf_strs {
        const uint8_t *p;
        uint64_t left;
};
bool gguf_strs_next(struct gguf_strs *it, struct gguf_str *ret);

/* Element i of a scalar array of 4-byte elements (int32, uint32, float32), as raw bits. The
 * caller checks i < n. */
uint32_t gguf_array_u32(const struct gguf_value *v, uint64_t i);

#endif
