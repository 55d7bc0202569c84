/* nvfp4.h -- NVFP4 weights: E2M1 values, one E4M3 scale per 16 values, one FP32 tensor scale.
 *
 * The format is NVIDIA's NVFP4 as model checkpoints carry it (ModelOpt): a weight
 * w[r][k] is stored as
 *
 *     w ~= e2m1(q[r][k]) * e4m3(s[r][k / 16]) * global_scale
 *
 * with global_scale = amax(|w|) / (6 * 448), so that the largest block scale fits the
 * E4M3 maximum (448) and the largest value the E2M1 maximum (6).
 *
 * Scale factors can sit in memory in two layouts:
 *  - linear: s[r][c] at r * sf_cols + c (sf_cols = cols / 16);
 *  - the 128x4 swizzle that Blackwell tensor cores read (CUTLASS/cuBLAS "128x4" block-scale
 *    layout): rows padded to 128 and scale columns padded to 4, tiles of 128 rows x 4
 *    columns stored one after another (column tiles fastest), and inside a tile
 *    s[r][c] at (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4).
 * A loader that writes one layout and a kernel that reads the other is the vLLM NVFP4
 * scale-layout bug: every block gets some other block's scale, or a padding zero.
 */
#ifndef TESTBED_NVFP4_H
#define TESTBED_NVFP4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVFP4_BLOCK 16
#define NVFP4_E2M1_MAX 6.0f
#define NVFP4_E4M3_MAX 448.0f

enum nvfp4_layout {
        NVFP4_LAYOUT_LINEAR,
        NVFP4_LAYOUT_SWIZZLED_128X4,
};

/* A quantised rows x cols matrix (cols a multiple of 16). Owns packed and scales. */
struct nvfp4_mat {
        int rows, cols;
        uint8_t *packed;      /* rows * cols / 2 bytes; value k of a row in the low nibble when k is even */
        uint8_t *scales;      /* E4M3 codes, scales_bytes long, in `layout` */
        size_t scales_bytes;
        enum nvfp4_layout layout;
        float global_scale;
};

/* The 16 E2M1 values by code (bit 3 = sign): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives. */
extern const float nvfp4_e2m1_values[16];

static inline float nvfp4_e2m1_to_f32(uint8_t code) { return nvfp4_e2m1_values[code & 15]; }
/* Nearest E2M1 code, ties to the even code, saturating at +-6. NaN gives 0. */
uint8_t nvfp4_f32_to_e2m1(float f);
/* E4M3 (the "fn" variant: no infinities, 0x7f/0xff are NaN, max 448). */
float nvfp4_e4m3_to_f32(uint8_t code);
/* Nearest E4M3 code for f >= 0, ties to even, saturating at 448. Negative or NaN gives 0. */
uint8_t nvfp4_f32_to_e4m3(float f);

/* Padded scale-matrix shape for the swizzled layout. */
static inline int nvfp4_pad_rows(int rows) { return (rows + 127) / 128 * 128; }
static inline int nvfp4_pad_sf_cols(int sf_cols) { return (sf_cols + 3) / 4 * 4; }
/* Byte offset of scale (r, c) in each layout; sf_cols is the unpadded scale-column count. */
static inline size_t nvfp4_sf_offset_linear(int r, int c, int sf_cols) { return (size_t)r * sf_cols + c; }
size_t nvfp4_sf_offset_swizzled(int r, int c, int sf_cols);

/* Quantises w (rows x cols, row-major) into ret. -EINVAL if cols % 16 != 0, -ENOMEM. */
int nvfp4_quantize(const float *w, int rows, int cols, enum nvfp4_layout layout, struct nvfp4_mat *ret);
void nvfp4_mat_release(struct nvfp4_mat *m);
/* Bytes the matrix occupies (packed values + scales). */
size_t nvfp4_mat_bytes(const struct nvfp4_mat *m);
/* The scale code for block (r, c) read as `read_as` (which may differ from m->layout:
 * that is the bug being modelled). Reads past the buffer give 0. */
uint8_t nvfp4_scale_read(const struct nvfp4_mat *m, int r, int c, enum nvfp4_layout read_as);
/* Dequantises row r into out (cols floats), reading scales as read_as. */
void nvfp4_dequant_row(const struct nvfp4_mat *m, int r, enum nvfp4_layout read_as, float *out);

#endif
