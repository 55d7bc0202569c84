/* test_testbed_nvfp4.c -- E2M1/E4M3 conversions, NVFP4 quantisation error, the swizzle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../testbed/kern.h"
#include "../../testbed/nvfp4.h"

static void test_e2m1(void **state) {
        static const float vals[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
        for (int c = 0; c < 8; c++) {
                assert_true(nvfp4_e2m1_to_f32((uint8_t)c) == vals[c]);
                assert_true(nvfp4_e2m1_to_f32((uint8_t)(c | 8)) == -vals[c]);
                assert_int_equal(nvfp4_f32_to_e2m1(vals[c]), c);
                if (c)
                        assert_int_equal(nvfp4_f32_to_e2m1(-vals[c]), c | 8);
        }
        /* ties go to the even code */
        assert_int_equal(nvfp4_f32_to_e2m1(0.25f), 0);
        assert_int_equal(nvfp4_f32_to_e2m1(0.75f), 2);
        assert_int_equal(nvfp4_f32_to_e2m1(1.25f), 2);
        assert_int_equal(nvfp4_f32_to_e2m1(1.75f), 4);
        assert_int_equal(nvfp4_f32_to_e2m1(2.5f), 4);
        assert_int_equal(nvfp4_f32_to_e2m1(3.5f), 6);
        assert_int_equal(nvfp4_f32_to_e2m1(5.0f), 6);
        /* nearest otherwise, saturating */
        assert_int_equal(nvfp4_f32_to_e2m1(0.26f), 1);
        assert_int_equal(nvfp4_f32_to_e2m1(5.01f), 7);
        assert_int_equal(nvfp4_f32_to_e2m1(1e9f), 7);
        assert_int_equal(nvfp4_f32_to_e2m1(-1e9f), 15);
        assert_int_equal(nvfp4_f32_to_e2m1(NAN), 0);
}

static void test_e4m3(void **state) {
        assert_true(nvfp4_e4m3_to_f32(0x7e) == 448.0f);
        assert_true(nvfp4_e4m3_to_f32(0x38) == 1.0f);
        assert_true(nvfp4_e4m3_to_f32(0x08) == 0x1p-6f);
        assert_true(nvfp4_e4m3_to_f32(0x01) == 0x1p-9f);
        assert_true(nvfp4_e4m3_to_f32(0xb8) == -1.0f);
        assert_true(isnan(nvfp4_e4m3_to_f32(0x7f)));
        assert_true(isnan(nvfp4_e4m3_to_f32(0xff)));
        /* every finite positive code round-trips, and codes are monotonic */
        for (int c = 0; c <= 0x7e; c++) {
                assert_int_equal(nvfp4_f32_to_e4m3(nvfp4_e4m3_to_f32((uint8_t)c)), c);
                if (c)
                        assert_true(nvfp4_e4m3_to_f32((uint8_t)c) > nvfp4_e4m3_to_f32((uint8_t)(c - 1)));
        }
        assert_int_equal(nvfp4_f32_to_e4m3(1000.0f), 0x7e);
        assert_int_equal(nvfp4_f32_to_e4m3(-3.0f), 0);
        assert_int_equal(nvfp4_f32_to_e4m3(1.0625f), 0x38); /* halfway 1 .. 1.125: even (1.0) */
        assert_int_equal(nvfp4_f32_to_e4m3(1.1875f), 0x3a); /* halfway 1.125 .. 1.25: even (1.25) */
        assert_int_equal(nvfp4_f32_to_e4m3(1.07f), 0x39);
        /* relative rounding error of normal values is at most 1/16 */
        for (float f = 0.02f; f < 440.0f; f *= 1.013f) {
                float q = nvfp4_e4m3_to_f32(nvfp4_f32_to_e4m3(f));
                assert_true(fabsf(q - f) <= f / 16.0f + 1e-7f);
        }
}

static uint64_t rng = 12345;
static float gauss(void) {
        double u1, u2;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        u1 = ((rng >> 11) + 1.0) * 0x1p-53;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        u2 = (rng >> 11) * 0x1p-53;
        return (float)(sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

static void test_quantize_error(void **state) {
        int rows = 40, cols = 96;
        float *w = malloc(sizeof(float) * rows * cols), *row = malloc(sizeof(float) * cols);
        for (int i = 0; i < rows * cols; i++)
                w[i] = 0.05f * gauss() * (i % 7 == 0 ? 4.0f : 1.0f);
        struct nvfp4_mat q;
        assert_int_equal(nvfp4_quantize(w, rows, cols, NVFP4_LAYOUT_LINEAR, &q), 0);
        assert_int_equal(nvfp4_mat_bytes(&q), (size_t)rows * cols / 2 + (size_t)rows * cols / 16);
        double se = 0, sw = 0;
        for (int r = 0; r < rows; r++) {
                nvfp4_dequant_row(&q, r, NVFP4_LAYOUT_LINEAR, row);
                for (int b = 0; b < cols / 16; b++) {
                        float bmax = 0;
                        for (int i = 0; i < 16; i++)
                                bmax = fmaxf(bmax, fabsf(w[r * cols + b * 16 + i]));
                        for (int i = 0; i < 16; i++) {
                                float e = fabsf(row[b * 16 + i] - w[r * cols + b * 16 + i]);
                                /* half the widest E2M1 gap (4..6) of the block scale, which
                                 * itself is within 1/16 of bmax / 6 */
                                assert_true(e <= bmax / 6.0f * (1.0f + 1.0f / 16.0f) + 1e-7f);
                                se += (double)e * e;
                                sw += (double)w[r * cols + b * 16 + i] * w[r * cols + b * 16 + i];
                        }
                }
        }
        /* overall: a few percent of the signal, as 4-bit weights give */
        assert_true(sqrt(se / sw) < 0.12);
        assert_true(sqrt(se / sw) > 0.01); /* and it really is quantised */
        nvfp4_mat_release(&q);
        assert_int_equal(nvfp4_quantize(w, rows, 20, NVFP4_LAYOUT_LINEAR, &q), -EINVAL);
        free(w);
        free(row);
}

static void test_swizzle_layout(void **state) {
        /* known positions of the 128x4 layout */
        assert_int_equal(nvfp4_sf_offset_swizzled(0, 0, 10), 0);
        assert_int_equal(nvfp4_sf_offset_swizzled(0, 1, 10), 1);
        assert_int_equal(nvfp4_sf_offset_swizzled(0, 3, 10), 3);
        assert_int_equal(nvfp4_sf_offset_swizzled(32, 0, 10), 4);
        assert_int_equal(nvfp4_sf_offset_swizzled(64, 0, 10), 8);
        assert_int_equal(nvfp4_sf_offset_swizzled(96, 2, 10), 14);
        assert_int_equal(nvfp4_sf_offset_swizzled(1, 0, 10), 16);
        assert_int_equal(nvfp4_sf_offset_swizzled(31, 0, 10), 31 * 16);
        assert_int_equal(nvfp4_sf_offset_swizzled(0, 4, 10), 512);     /* next column tile */
        assert_int_equal(nvfp4_sf_offset_swizzled(128, 0, 10), 3 * 512); /* 12 padded cols = 3 tiles */
        /* a bijection onto the padded buffer */
        int rows = 300, sf = 10, pr = nvfp4_pad_rows(rows), pc = nvfp4_pad_sf_cols(sf);
        assert_int_equal(pr, 384);
        assert_int_equal(pc, 12);
        unsigned char *seen = calloc((size_t)pr * pc, 1);
        for (int r = 0; r < pr; r++)
                for (int c = 0; c < pc; c++) {
                        size_t o = nvfp4_sf_offset_swizzled(r, c, sf);
                        assert_true(o < (size_t)pr * pc);
                        assert_int_equal(seen[o], 0);
                        seen[o] = 1;
                }
        free(seen);
}

static void test_layouts_agree_and_mismatch(void **state) {
        int rows = 160, cols = 160;
        float *w = malloc(sizeof(float) * rows * cols), *a = malloc(sizeof(float) * cols),
              *b = malloc(sizeof(float) * cols);
        for (int i = 0; i < rows * cols; i++)
                w[i] = 0.05f * gauss();
        struct nvfp4_mat lin, sw;
        assert_int_equal(nvfp4_quantize(w, rows, cols, NVFP4_LAYOUT_LINEAR, &lin), 0);
        assert_int_equal(nvfp4_quantize(w, rows, cols, NVFP4_LAYOUT_SWIZZLED_128X4, &sw), 0);
        assert_int_equal(sw.scales_bytes, 256 * 12);
        assert_memory_equal(lin.packed, sw.packed, (size_t)rows * cols / 2);
        int differing_rows = 0;
        for (int r = 0; r < rows; r++) {
                nvfp4_dequant_row(&lin, r, NVFP4_LAYOUT_LINEAR, a);
                nvfp4_dequant_row(&sw, r, NVFP4_LAYOUT_SWIZZLED_128X4, b);
                assert_memory_equal(a, b, sizeof(float) * cols);
                /* the bug: swizzled scales read as linear */
                nvfp4_dequant_row(&sw, r, NVFP4_LAYOUT_LINEAR, b);
                differing_rows += memcmp(a, b, sizeof(float) * cols) != 0;
        }
        assert_true(differing_rows > rows * 9 / 10);
        nvfp4_mat_release(&lin);
        nvfp4_mat_release(&sw);
        free(w);
        free(a);
        free(b);
}

/* Each backend's matvec against fp32, on one matrix. */
static void test_kernels(void **state) {
        int rows = 132, cols = 160; /* rows not a multiple of 4: tails exercised */
        float *w = malloc(sizeof(float) * rows * cols), x[160], ref[132], y[132];
        for (int i = 0; i < rows * cols; i++)
                w[i] = 0.05f * gauss();
        for (int i = 0; i < cols; i++)
                x[i] = gauss();
        for (int r = 0; r < rows; r++) {
                double s = 0;
                for (int c = 0; c < cols; c++)
                        s += (double)w[r * cols + c] * x[c];
                ref[r] = (float)s;
        }
        struct {
                enum kern_backend b;
                enum kern_arch arch;
                double tol; /* relative L2 error allowed */
                bool garbage;
        } cases[] = {
                {KERN_REFERENCE, KERN_SM90, 1e-5, false},     {KERN_SHUFFLED, KERN_SM90, 1e-5, false},
                {KERN_NVFP4, KERN_SM120, 0.15, false},        {KERN_NVFP4_SWIZZLED, KERN_SM100, 0.15, false},
                {KERN_TCGEN05, KERN_SM100, 0.15, false},      {KERN_FP16ACC, KERN_SM90, 0.15, false},
                {KERN_NVFP4_SWIZZLED, KERN_SM120, 0.3, true}, /* wrong scales: >= 2x the error */
        };
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                float *copy = malloc(sizeof(float) * rows * cols);
                memcpy(copy, w, sizeof(float) * rows * cols);
                struct kern_mat m;
                assert_int_equal(kern_mat_init(&m, &copy, rows, cols, cases[k].b, cases[k].arch), 0);
                kern_matvec(&m, x, y);
                double se = 0, sr = 0;
                for (int r = 0; r < rows; r++) {
                        se += ((double)y[r] - ref[r]) * ((double)y[r] - ref[r]);
                        sr += (double)ref[r] * ref[r];
                }
                double rel = sqrt(se / sr);
                if (cases[k].garbage ? rel < cases[k].tol : rel > cases[k].tol)
                        fail_msg("backend %s on %s: relative error %g", kern_backend_name(cases[k].b),
                                 kern_arch_name(cases[k].arch), rel);
                kern_mat_release(&m);
                free(copy);
        }
        /* tcgen05 has no image for sm_90 / sm_120 */
        struct kern_mat m;
        float *copy = w;
        assert_int_equal(kern_mat_init(&m, &copy, rows, cols, KERN_TCGEN05, KERN_SM120), -ENOEXEC);
        assert_int_equal(kern_mat_init(&m, &copy, rows, cols, KERN_TCGEN05, KERN_SM90), -ENOEXEC);
        free(w);
}

/* fp16 accumulation in the quantised domain: large activations overflow to inf. */
static void test_fp16acc_overflow(void **state) {
        int rows = 4, cols = 160;
        float *w = malloc(sizeof(float) * rows * cols), x[160], y[4];
        for (int i = 0; i < rows * cols; i++)
                w[i] = 0.02f * (float)((i * 7) % 13 - 6) / 6.0f; /* zero mean */
        struct kern_mat m;
        assert_int_equal(kern_mat_init(&m, &w, rows, cols, KERN_FP16ACC, KERN_SM90), 0);
        for (int i = 0; i < cols; i++)
                x[i] = 1.0f;
        kern_matvec(&m, x, y);
        for (int r = 0; r < rows; r++)
                assert_true(isfinite(y[r]));
        for (int i = 0; i < cols; i++)
                x[i] = 400.0f; /* per-weight terms reach 2688 * 400 */
        kern_matvec(&m, x, y);
        int bad = 0;
        for (int r = 0; r < rows; r++)
                bad += !isfinite(y[r]);
        assert_true(bad > 0);
        /* the fp32 kernels do not overflow on the same input */
        struct kern_mat ref;
        float *w2 = malloc(sizeof(float) * rows * cols);
        for (int i = 0; i < rows * cols; i++)
                w2[i] = 0.02f * (float)((i * 7) % 13 - 6) / 6.0f;
        assert_int_equal(kern_mat_init(&ref, &w2, rows, cols, KERN_NVFP4, KERN_SM90), 0);
        kern_matvec(&ref, x, y);
        for (int r = 0; r < rows; r++)
                assert_true(isfinite(y[r]));
        kern_mat_release(&ref);
        free(w2);
        kern_mat_release(&m);
        free(w);
        assert_true(kern_round_f16(65504.0f) == 65504.0f);
        assert_true(isinf(kern_round_f16(65520.0f)));
        assert_true(kern_round_f16(1.0f + 0x1p-12f) == 1.0f);
        assert_true(kern_round_f16(0x1p-24f) == 0x1p-24f);
}

/* Stacked expert scales: harmless for readers of their own layout, and for sm_120's linear
 * reader of swizzled scales, expert e > 0 reads at the unpadded stride: other data. */
static void test_stacked_scales(void **state) {
        int rows = 40, cols = 48, n = 3;
        float x[48], before[3][40], after[40];
        for (int i = 0; i < cols; i++)
                x[i] = gauss();
        enum kern_backend bs[] = {KERN_NVFP4, KERN_NVFP4_SWIZZLED, KERN_NVFP4_SWIZZLED, KERN_REFERENCE};
        enum kern_arch as[] = {KERN_SM120, KERN_SM100, KERN_SM120, KERN_SM90};
        for (int k = 0; k < 4; k++) {
                struct kern_mat m[3];
                for (int e = 0; e < n; e++) {
                        float *w = malloc(sizeof(float) * rows * cols);
                        for (int i = 0; i < rows * cols; i++)
                                w[i] = 0.05f * gauss() * (float)(e + 1);
                        assert_int_equal(kern_mat_init(&m[e], &w, rows, cols, bs[k], as[k]), 0);
                        free(w);
                        kern_matvec(&m[e], x, before[e]);
                }
                uint8_t *stack = NULL;
                assert_int_equal(kern_mats_stack_scales(m, n, &stack), 0);
                if (bs[k] == KERN_REFERENCE)
                        assert_null(stack);
                for (int e = 0; e < n; e++) {
                        kern_matvec(&m[e], x, after);
                        bool same = memcmp(before[e], after, sizeof(after)) == 0;
                        /* only the mismatched reader of a later expert changes */
                        assert_true(same == !(k == 2 && e > 0));
                        kern_mat_release(&m[e]);
                }
                free(stack);
        }
}

static void test_auto_and_names(void **state) {
        assert_int_equal(kern_resolve_auto(KERN_ROLE_MOE, KERN_SM120), KERN_NVFP4_SWIZZLED);
        assert_int_equal(kern_resolve_auto(KERN_ROLE_GEMM, KERN_SM120), KERN_NVFP4);
        assert_int_equal(kern_resolve_auto(KERN_ROLE_MOE, KERN_SM100), KERN_TCGEN05);
        assert_int_equal(kern_resolve_auto(KERN_ROLE_MOE, KERN_SM90), KERN_REFERENCE);
        enum kern_backend b;
        enum kern_arch a;
        for (int i = 0; i < KERN_BACKEND_COUNT; i++) {
                assert_int_equal(kern_backend_from_name(kern_backend_name((enum kern_backend)i), &b), 0);
                assert_int_equal(b, i);
        }
        assert_int_equal(kern_backend_from_name("cutlass", &b), -EINVAL);
        assert_int_equal(kern_arch_from_name("sm_120", &a), 0);
        assert_int_equal(a, KERN_SM120);
        assert_int_equal(kern_arch_from_name("sm100", &a), 0);
        assert_int_equal(a, KERN_SM100);
        assert_int_equal(kern_arch_from_name("sm_89", &a), -EINVAL);
        assert_false(kern_backend_valid_for(KERN_SHUFFLED, KERN_ROLE_GEMM));
        assert_true(kern_backend_valid_for(KERN_SHUFFLED, KERN_ROLE_MOE));
        assert_int_equal(kern_check_arch(KERN_TCGEN05, KERN_SM100), 0);
        assert_int_equal(kern_check_arch(KERN_NVFP4_SWIZZLED, KERN_SM120), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_e2m1),           cmocka_unit_test(test_e4m3),
                cmocka_unit_test(test_quantize_error), cmocka_unit_test(test_swizzle_layout),
                cmocka_unit_test(test_layouts_agree_and_mismatch), cmocka_unit_test(test_kernels),
                cmocka_unit_test(test_fp16acc_overflow), cmocka_unit_test(test_auto_and_names),
                cmocka_unit_test(test_stacked_scales),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
