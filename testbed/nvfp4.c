/* nvfp4.c -- E2M1/E4M3 conversions, NVFP4 quantisation and the two scale layouts. */
#include "nvfp4.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const float nvfp4_e2m1_values[16] = {
        0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
        -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f,
};

uint8_t nvfp4_f32_to_e2m1(float f) {
        if (isnan(f))
                return 0;
        uint8_t sign = signbit(f) ? 8 : 0;
        float a = fabsf(f);
        /* midpoints between neighbours; at a tie the even code wins */
        static const float mid[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
        uint8_t code = 0;
        while (code < 7 && (a > mid[code] || (a == mid[code] && (code & 1))))
                code++;
        return sign | code;
}

float nvfp4_e4m3_to_f32(uint8_t code) {
        int sign = code & 0x80;
        int exp = (code >> 3) & 0xf;
        int man = code & 7;
        float v;
        if (exp == 15 && man == 7)
                return NAN;
        if (exp == 0)
                v = ldexpf((float)man, -9); /* subnormal: man/8 * 2^-6 */
        else
                v = ldexpf(1.0f + (float)man / 8.0f, exp - 7);
        return sign ? -v : v;
}

uint8_t nvfp4_f32_to_e4m3(float f) {
        if (!(f > 0.0f))
                return 0;
        if (f >= NVFP4_E4M3_MAX)
                return 0x7e;
        /* codes 0..0x7e are monotonic in value: binary search the last code <= f */
        int lo = 0, hi = 0x7e;
        while (lo < hi) {
                int m = (lo + hi + 1) / 2;
                if (nvfp4_e4m3_to_f32((uint8_t)m) <= f)
                        lo = m;
                else
                        hi = m - 1;
        }
        if (lo == 0x7e)
                return 0x7e;
        float below = nvfp4_e4m3_to_f32((uint8_t)lo), above = nvfp4_e4m3_to_f32((uint8_t)(lo + 1));
        float db = f - below, da = above - f;
        if (da < db || (da == db && ((lo + 1) & 1) == 0))
                return (uint8_t)(lo + 1);
        return (uint8_t)lo;
}

size_t nvfp4_sf_offset_swizzled(int r, int c, int sf_cols) {
        size_t col_tiles = (size_t)nvfp4_pad_sf_cols(sf_cols) / 4;
        size_t tile = (size_t)(r / 128) * col_tiles + (size_t)(c / 4);
        return tile * 512 + (size_t)(r % 32) * 16 + (size_t)((r % 128) / 32) * 4 + (size_t)(c % 4);
}

static size_t sf_bytes(int rows, int sf_cols, enum nvfp4_layout layout) {
        if (layout == NVFP4_LAYOUT_SWIZZLED_128X4)
                return (size_t)nvfp4_pad_rows(rows) * (size_t)nvfp4_pad_sf_cols(sf_cols);
        return (size_t)rows * (size_t)sf_cols;
}

int nvfp4_quantize(const float *w, int rows, int cols, enum nvfp4_layout layout, struct nvfp4_mat *ret) {
        if (rows <= 0 || cols <= 0 || cols % NVFP4_BLOCK)
                return -EINVAL;
        int sf_cols = cols / NVFP4_BLOCK;
        size_t n = (size_t)rows * (size_t)cols;
        struct nvfp4_mat m = {
                .rows = rows,
                .cols = cols,
                .layout = layout,
                .scales_bytes = sf_bytes(rows, sf_cols, layout),
        };
        m.packed = calloc(n / 2, 1);
        /* padding scales stay 0: a kernel that reads them gets zero weights, like the GPU would */
        m.scales = calloc(m.scales_bytes, 1);
        if (!m.packed || !m.scales) {
                free(m.packed);
                free(m.scales);
                return -ENOMEM;
        }
        float amax = 0.0f;
        for (size_t i = 0; i < n; i++)
                amax = fmaxf(amax, fabsf(w[i]));
        m.global_scale = amax > 0.0f ? amax / (NVFP4_E2M1_MAX * NVFP4_E4M3_MAX) : 1.0f;
        for (int r = 0; r < rows; r++)
                for (int c = 0; c < sf_cols; c++) {
                        const float *blk = w + (size_t)r * cols + (size_t)c * NVFP4_BLOCK;
                        float bmax = 0.0f;
                        for (int i = 0; i < NVFP4_BLOCK; i++)
                                bmax = fmaxf(bmax, fabsf(blk[i]));
                        uint8_t sc = nvfp4_f32_to_e4m3(bmax / NVFP4_E2M1_MAX / m.global_scale);
                        float eff = nvfp4_e4m3_to_f32(sc) * m.global_scale;
                        size_t off = layout == NVFP4_LAYOUT_SWIZZLED_128X4 ? nvfp4_sf_offset_swizzled(r, c, sf_cols)
                                                                           : nvfp4_sf_offset_linear(r, c, sf_cols);
                        m.scales[off] = sc;
                        for (int i = 0; i < NVFP4_BLOCK; i++) {
                                uint8_t q = eff > 0.0f ? nvfp4_f32_to_e2m1(blk[i] / eff) : 0;
                                size_t k = (size_t)r * cols + (size_t)c * NVFP4_BLOCK + i;
                                m.packed[k / 2] |= (uint8_t)(k & 1 ? q << 4 : q);
                        }
                }
        *ret = m;
        return 0;
}

void nvfp4_mat_release(struct nvfp4_mat *m) {
        free(m->packed);
        free(m->scales);
        m->packed = m->scales = NULL;
}

size_t nvfp4_mat_bytes(const struct nvfp4_mat *m) {
        return (size_t)m->rows * (size_t)m->cols / 2 + m->scales_bytes;
}

uint8_t nvfp4_scale_read(const struct nvfp4_mat *m, int r, int c, enum nvfp4_layout read_as) {
        int sf_cols = m->cols / NVFP4_BLOCK;
        size_t off = read_as == NVFP4_LAYOUT_SWIZZLED_128X4 ? nvfp4_sf_offset_swizzled(r, c, sf_cols)
                                                            : nvfp4_sf_offset_linear(r, c, sf_cols);
        return off < m->scales_bytes ? m->scales[off] : 0;
}

void nvfp4_dequant_row(const struct nvfp4_mat *m, int r, enum nvfp4_layout read_as, float *out) {
        int sf_cols = m->cols / NVFP4_BLOCK;
        const uint8_t *row = m->packed + (size_t)r * m->cols / 2;
        for (int c = 0; c < sf_cols; c++) {
                float s = nvfp4_e4m3_to_f32(nvfp4_scale_read(m, r, c, read_as)) * m->global_scale;
                for (int i = 0; i < NVFP4_BLOCK; i += 2) {
                        uint8_t b = row[(c * NVFP4_BLOCK + i) / 2];
                        out[c * NVFP4_BLOCK + i] = nvfp4_e2m1_values[b & 15] * s;
                        out[c * NVFP4_BLOCK + i + 1] = nvfp4_e2m1_values[b >> 4] * s;
                }
        }
}
