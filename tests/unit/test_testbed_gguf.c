/* test_testbed_gguf.c -- the GGUF reader on hand-built files, corrupt ones included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../testbed/gguf.h"
#include "../../testbed/gguf_writer.h"
#include "base/util.h"

static const float f32_data[6] = {1.5f, -2.0f, 0.25f, 3.0f, -0.125f, 100.0f};

/* A small file: a few keys of each kind and an F32, an F16 and a Q8_0 tensor. */
static void build(struct buf *out) {
        struct gguf_writer w;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "general.architecture", "llama");
        gguf_writer_kv_u32(&w, "llama.block_count", 4);
        gguf_writer_kv_f32(&w, "llama.rope.freq_base", 10000.0f);
        gguf_writer_kv_bool(&w, "tokenizer.ggml.add_bos_token", true);
        const char *toks[] = {"<unk>", "a", "\xe2\x96\x81"};
        gguf_writer_kv_strv(&w, "tokenizer.ggml.tokens", toks, 3);
        int32_t types[] = {2, 1, 1};
        gguf_writer_kv_i32v(&w, "tokenizer.ggml.token_type", types, 3);
        gguf_writer_tensor(&w, "a", 2, (uint64_t[]){3, 2}, GGML_TYPE_F32, f32_data, sizeof(f32_data));
        uint16_t h[4] = {gguf_f32_to_f16(1.0f), gguf_f32_to_f16(-0.5f), gguf_f32_to_f16(65504.0f),
                         gguf_f32_to_f16(0.0f)};
        gguf_writer_tensor(&w, "b", 1, (uint64_t[]){4}, GGML_TYPE_F16, h, sizeof(h));
        uint8_t q[34];
        uint16_t d = gguf_f32_to_f16(0.5f);
        memcpy(q, &d, 2);
        for (int i = 0; i < 32; i++)
                q[2 + i] = (uint8_t)(int8_t)(i - 16);
        gguf_writer_tensor(&w, "c", 1, (uint64_t[]){32}, GGML_TYPE_Q8_0, q, sizeof(q));
        assert_int_equal(gguf_writer_finish(&w, out), 0);
        gguf_writer_release(&w);
}

static void test_roundtrip(void **state) {
        struct buf b;
        struct gguf *g = NULL;
        char *err = NULL;
        build(&b);
        assert_int_equal(gguf_parse(b.data, b.len, &g, &err), 0);
        assert_null(err);
        assert_int_equal(g->meta.version, 3);
        assert_int_equal(g->meta.alignment, 32);
        uint32_t u;
        float f;
        bool bo;
        struct gguf_str s;
        assert_int_equal(gguf_get_u32(&g->meta, "llama.block_count", &u), 0);
        assert_int_equal(u, 4);
        assert_int_equal(gguf_get_f32(&g->meta, "llama.rope.freq_base", &f), 0);
        assert_true(f == 10000.0f);
        assert_int_equal(gguf_get_bool(&g->meta, "tokenizer.ggml.add_bos_token", &bo), 0);
        assert_true(bo);
        assert_int_equal(gguf_get_str(&g->meta, "general.architecture", &s), 0);
        assert_int_equal(s.len, 5);
        assert_memory_equal(s.p, "llama", 5);
        assert_int_equal(gguf_get_u32(&g->meta, "missing", &u), -ENOENT);
        assert_int_equal(gguf_get_u32(&g->meta, "general.architecture", &u), -EINVAL);
        assert_int_equal(gguf_get_str(&g->meta, "llama.block_count", &s), -EINVAL);
        const struct gguf_kv *kv = gguf_find_kv(&g->meta, "tokenizer.ggml.tokens");
        assert_non_null(kv);
        assert_int_equal(kv->v.arr.n, 3);
        struct gguf_strs it = {kv->v.arr.data, kv->v.arr.n};
        struct gguf_str third = {0};
        for (int i = 0; i < 3; i++)
                assert_true(gguf_strs_next(&it, &third));
        assert_false(gguf_strs_next(&it, &third));
        assert_int_equal(third.len, 3);
        assert_memory_equal(third.p, "\xe2\x96\x81", 3);

        const struct gguf_tensor *t = gguf_find_tensor(g, "a");
        assert_non_null(t);
        assert_int_equal(t->ne[0], 3);
        assert_int_equal(t->ne[1], 2);
        assert_int_equal(t->n_elements, 6);
        assert_int_equal(((uintptr_t)t->data - (uintptr_t)g->meta.base) % 32, 0);
        float out[32];
        assert_int_equal(gguf_tensor_to_f32(t, 0, 6, out), 0);
        assert_memory_equal(out, f32_data, sizeof(f32_data));
        assert_int_equal(gguf_tensor_to_f32(t, 4, 2, out), 0);
        assert_true(out[0] == -0.125f && out[1] == 100.0f);
        assert_int_equal(gguf_tensor_to_f32(t, 4, 3, out), -EINVAL);
        t = gguf_find_tensor(g, "b");
        assert_int_equal(gguf_tensor_to_f32(t, 0, 4, out), 0);
        assert_true(out[0] == 1.0f && out[1] == -0.5f && out[2] == 65504.0f && out[3] == 0.0f);
        t = gguf_find_tensor(g, "c");
        assert_int_equal(t->nbytes, 34);
        assert_int_equal(gguf_tensor_to_f32(t, 0, 32, out), 0);
        assert_true(out[0] == -8.0f && out[16] == 0.0f && out[31] == 7.5f);
        assert_null(gguf_find_tensor(g, "nope"));
        gguf_free(g);
        buf_release(&b);
}

static void test_f16(void **state) {
        assert_int_equal(gguf_f32_to_f16(1.0f), 0x3c00);
        assert_int_equal(gguf_f32_to_f16(-2.0f), 0xc000);
        assert_int_equal(gguf_f32_to_f16(65504.0f), 0x7bff);
        assert_int_equal(gguf_f32_to_f16(65520.0f), 0x7c00); /* rounds up to inf */
        assert_int_equal(gguf_f32_to_f16(65519.0f), 0x7bff);
        assert_int_equal(gguf_f32_to_f16(0x1p-24f), 0x0001);
        assert_int_equal(gguf_f32_to_f16(0x1p-25f), 0x0000); /* tie to even: 0 */
        assert_int_equal(gguf_f32_to_f16(0x1.8p-24f), 0x0002); /* tie to even: 2 */
        assert_int_equal(gguf_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie to even */
        assert_int_equal(gguf_f32_to_f16(1.0f + 0x1.8p-11f), 0x3c01); /* 0.75 ulp: up */
        assert_int_equal(gguf_f32_to_f16(1.0f + 0x1.8p-10f), 0x3c02); /* 1.5 ulp: tie to even */
        assert_true(isnan(gguf_f16_to_f32(gguf_f32_to_f16(NAN))));
        assert_true(isinf(gguf_f16_to_f32(0xfc00)) && gguf_f16_to_f32(0xfc00) < 0);
        /* every finite half survives half -> float -> half */
        for (uint32_t h = 0; h < 65536; h++) {
                if ((h & 0x7c00) == 0x7c00)
                        continue;
                assert_int_equal(gguf_f32_to_f16(gguf_f16_to_f32((uint16_t)h)), h);
        }
}

/* Every prefix of a valid file is rejected with a message; none crashes (run under ASan). */
static void test_truncated(void **state) {
        struct buf b;
        struct gguf *full = NULL;
        size_t end = 0;
        build(&b);
        /* the trailing alignment padding may go; everything up to the last tensor byte may not */
        assert_int_equal(gguf_parse(b.data, b.len, &full, NULL), 0);
        for (size_t i = 0; i < full->n_tensors; i++)
                end = MAX(end, (size_t)((const uint8_t *)full->tensors[i].data - full->meta.base) + full->tensors[i].nbytes);
        gguf_free(full);
        assert_true(end <= b.len);
        for (size_t n = 0; n < end; n++) {
                struct gguf *g = NULL;
                char *err = NULL;
                /* a fresh copy of exactly n bytes, so ASan sees any read past the end */
                uint8_t *copy = malloc(n ? n : 1);
                memcpy(copy, b.data, n);
                int r = gguf_parse(copy, n, &g, &err);
                assert_true(r < 0);
                assert_null(g);
                assert_non_null(err);
                free(err);
                free(copy);
        }
        buf_release(&b);
}

/* Random byte corruption: parse or fail, never crash or read out of bounds. */
static void test_bitflips(void **state) {
        struct buf b;
        build(&b);
        uint64_t s = 42;
        for (int iter = 0; iter < 3000; iter++) {
                uint8_t *copy = malloc(b.len);
                memcpy(copy, b.data, b.len);
                for (int k = 0; k < 3; k++) {
                        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                        size_t pos = (size_t)(s >> 33) % b.len;
                        copy[pos] ^= (uint8_t)(1u << ((s >> 20) & 7));
                }
                struct gguf *g = NULL;
                char *err = NULL;
                if (gguf_parse(copy, b.len, &g, &err) == 0) {
                        /* whatever parsed must be readable */
                        for (size_t i = 0; i < g->n_tensors; i++) {
                                const struct gguf_tensor *t = &g->tensors[i];
                                assert_true((const uint8_t *)t->data + t->nbytes <= copy + b.len);
                                if (t->n_elements <= 64) {
                                        float out[64];
                                        gguf_tensor_to_f32(t, 0, t->n_elements, out);
                                }
                        }
                        gguf_free(g);
                } else {
                        assert_non_null(err);
                }
                free(err);
                free(copy);
        }
        buf_release(&b);
}

static void expect_corrupt(const uint8_t *p, size_t n, const char *needle) {
        struct gguf *g = NULL;
        char *err = NULL;
        int r = gguf_parse(p, n, &g, &err);
        if (r != -EBADMSG)
                fail_msg("expected a corrupt file ('%s'), got %d", needle, r);
        assert_non_null(err);
        if (!strstr(err, needle))
                fail_msg("error '%s' lacks '%s'", err, needle);
        free(err);
}

static void test_specific_corruptions(void **state) {
        uint8_t h[64] = {0};
        /* bad magic */
        memcpy(h, "GGUX", 4);
        expect_corrupt(h, sizeof(h), "bad magic");
        /* unsupported version */
        memcpy(h, "GGUF", 4);
        uint32_t ver = 9;
        memcpy(h + 4, &ver, 4);
        expect_corrupt(h, sizeof(h), "version 9");
        /* absurd counts */
        ver = 3;
        memcpy(h + 4, &ver, 4);
        uint64_t big = UINT64_C(1) << 60;
        memcpy(h + 8, &big, 8);
        expect_corrupt(h, sizeof(h), "more than the file can hold");

        /* a string longer than the file */
        struct gguf_writer w;
        struct buf b;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "k", "value");
        assert_int_equal(gguf_writer_finish(&w, &b), 0);
        gguf_writer_release(&w);
        /* the writer puts general.alignment first; "k" follows: patch the value's length */
        uint8_t *p = memmem(b.data, b.len, "value", 5);
        assert_non_null(p);
        uint64_t huge = 1000000;
        memcpy(p - 8, &huge, 8);
        expect_corrupt((uint8_t *)b.data, b.len, "beyond the file");
        buf_release(&b);

        /* a tensor whose data lies past the end, and one with 5 dimensions */
        gguf_writer_init(&w, 32);
        gguf_writer_tensor(&w, "t", 1, (uint64_t[]){64}, GGML_TYPE_F32, f32_data, 24); /* claims 256 bytes, has 32 */
        assert_int_equal(gguf_writer_finish(&w, &b), 0);
        gguf_writer_release(&w);
        expect_corrupt((uint8_t *)b.data, b.len, "beyond the end of the file");
        buf_release(&b);

        gguf_writer_init(&w, 32);
        gguf_writer_tensor(&w, "t", 1, (uint64_t[]){2}, GGML_TYPE_F32, f32_data, 8);
        gguf_writer_tensor(&w, "t", 1, (uint64_t[]){2}, GGML_TYPE_F32, f32_data, 8);
        assert_int_equal(gguf_writer_finish(&w, &b), 0);
        gguf_writer_release(&w);
        expect_corrupt((uint8_t *)b.data, b.len, "appears twice");
        buf_release(&b);

        gguf_writer_init(&w, 32);
        gguf_writer_tensor(&w, "t", 1, (uint64_t[]){2}, (enum ggml_type)77, f32_data, 8);
        assert_int_equal(gguf_writer_finish(&w, &b), 0);
        gguf_writer_release(&w);
        expect_corrupt((uint8_t *)b.data, b.len, "unsupported type 77");
        buf_release(&b);
}

static void test_open_errors(void **state) {
        struct gguf *g = NULL;
        char *err = NULL;
        assert_int_equal(gguf_open("/nonexistent/model.gguf", &g, &err), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/model.gguf"));
        free(err);
        err = NULL;
        char path[] = "/tmp/test-gguf-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, "GGUF\x03\0\0\0 not really a model file at all", 40), 0);
        close(fd);
        assert_true(gguf_open(path, &g, &err) < 0);
        assert_non_null(strstr(err, path));
        free(err);
        unlink(path);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roundtrip),           cmocka_unit_test(test_f16),
                cmocka_unit_test(test_truncated),           cmocka_unit_test(test_bitflips),
                cmocka_unit_test(test_specific_corruptions), cmocka_unit_test(test_open_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
