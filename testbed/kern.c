/* kern.c -- matrix-vector kernels, one per backend, and the per-arch `auto` choice. */
#include "kern.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"

/* GCC/clang vector extension: 4 floats, compiled to SSE on x86-64 without intrinsics. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p) {
        v4f v;
        memcpy(&v, p, sizeof(v));
        return v;
}
static inline void store4(float *p, v4f v) { memcpy(p, &v, sizeof(v)); }

static const char *const backend_names[KERN_BACKEND_COUNT] = {
        [KERN_AUTO] = "auto",
        [KERN_REFERENCE] = "reference",
        [KERN_NVFP4] = "nvfp4",
        [KERN_NVFP4_SWIZZLED] = "nvfp4-swizzled",
        [KERN_TCGEN05] = "tcgen05",
        [KERN_SHUFFLED] = "shuffled",
        [KERN_FP16ACC] = "fp16acc",
};

static const char *const arch_names[KERN_ARCH_COUNT] = {
        [KERN_SM90] = "sm_90",
        [KERN_SM100] = "sm_100",
        [KERN_SM120] = "sm_120",
};

const char *kern_backend_name(enum kern_backend b) {
        return (unsigned)b < KERN_BACKEND_COUNT ? backend_names[b] : NULL;
}

const char *kern_arch_name(enum kern_arch a) { return (unsigned)a < KERN_ARCH_COUNT ? arch_names[a] : NULL; }

int kern_backend_from_name(const char *s, enum kern_backend *ret) {
        for (int i = 0; i < KERN_BACKEND_COUNT; i++)
                if (strcmp(s, backend_names[i]) == 0) {
                        *ret = (enum kern_backend)i;
                        return 0;
                }
        return -EINVAL;
}

int kern_arch_from_name(const char *s, enum kern_arch *ret) {
        for (int i = 0; i < KERN_ARCH_COUNT; i++)
                if (strcmp(s, arch_names[i]) == 0) {
                        *ret = (enum kern_arch)i;
                        return 0;
                }
        /* spellings people use: sm90, sm_90a, 9.0 */
        static const struct {
                const char *name;
                enum kern_arch arch;
        } alias[] = {{"sm90", KERN_SM90},   {"sm_90a", KERN_SM90},   {"sm100", KERN_SM100},
                     {"sm_100a", KERN_SM100}, {"sm120", KERN_SM120}, {"sm_120a", KERN_SM120}};
        for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
                if (strcmp(s, alias[i].name) == 0) {
                        *ret = alias[i].arch;
                        return 0;
                }
        return -EINVAL;
}

bool kern_backend_valid_for(enum kern_backend b, enum kern_role role) {
        if ((unsigned)b >= KERN_BACKEND_COUNT)
                return false;
        return b != KERN_SHUFFLED || role == KERN_ROLE_MOE;
}

enum kern_backend kern_resolve_auto(enum kern_role role, enum kern_arch arch) {
        switch (arch) {
        case KERN_SM100:
                /* Blackwell datacenter: the tensor-core (tcgen05) kernels, as SGLang picked
                 * flashinfer_trtllm there */
                return KERN_TCGEN05;
        case KERN_SM120:
                /* Blackwell workstation: SGLang's auto picked the CUTLASS FP4 MoE path whose
                 * scale factors were swizzled at load and read linearly by the sm_120
                 * kernel; the dense GEMM path got the plain NVFP4 kernel */
                return role == KERN_ROLE_MOE ? KERN_NVFP4_SWIZZLED : KERN_NVFP4;
        case KERN_SM90:
        default:
                /* Hopper has no FP4 tensor cores: unquantised weights */
                return KERN_REFERENCE;
        }
}

int kern_check_arch(enum kern_backend b, enum kern_arch arch) {
        if (b == KERN_TCGEN05 && arch != KERN_SM100)
                return -ENOEXEC;
        return 0;
}

static bool is_nvfp4(enum kern_backend b) {
        return b == KERN_NVFP4 || b == KERN_NVFP4_SWIZZLED || b == KERN_TCGEN05 || b == KERN_FP16ACC;
}

static enum nvfp4_layout written_layout(enum kern_backend b) {
        return b == KERN_NVFP4_SWIZZLED || b == KERN_TCGEN05 ? NVFP4_LAYOUT_SWIZZLED_128X4 : NVFP4_LAYOUT_LINEAR;
}

size_t kern_mat_bytes_for(enum kern_backend b, int rows, int cols) {
        if (is_nvfp4(b)) {
                int sf_cols = cols / NVFP4_BLOCK;
                size_t sf = written_layout(b) == NVFP4_LAYOUT_SWIZZLED_128X4
                                    ? (size_t)nvfp4_pad_rows(rows) * (size_t)nvfp4_pad_sf_cols(sf_cols)
                                    : (size_t)rows * (size_t)sf_cols;
                return (size_t)rows * (size_t)cols / 2 + sf;
        }
        if (b == KERN_SHUFFLED)
                return (size_t)((rows + 3) / 4 * 4) * (size_t)cols * sizeof(float);
        return (size_t)rows * (size_t)cols * sizeof(float);
}

size_t kern_mat_bytes(const struct kern_mat *m) { return kern_mat_bytes_for(m->backend, m->rows, m->cols); }

int kern_mat_init(struct kern_mat *m, float **w, int rows, int cols, enum kern_backend b, enum kern_arch arch) {
        struct kern_mat k = {.backend = b, .rows = rows, .cols = cols, .read_as = NVFP4_LAYOUT_LINEAR};
        int r;
        if (rows <= 0 || cols <= 0 || b == KERN_AUTO || (unsigned)b >= KERN_BACKEND_COUNT)
                return -EINVAL;
        r = kern_check_arch(b, arch);
        if (r < 0)
                return r;
        switch (b) {
        case KERN_REFERENCE:
                k.w = *w;
                *w = NULL;
                break;
        case KERN_SHUFFLED: {
                /* the second copy: rows grouped by 4, and within a group the 4 rows'
                 * values for one column side by side, so the kernel broadcasts x[c] once
                 * and updates 4 outputs with one vector multiply-add */
                int groups = (rows + 3) / 4;
                k.w = calloc((size_t)groups * 4 * (size_t)cols, sizeof(float));
                if (!k.w)
                        return -ENOMEM;
                for (int rr = 0; rr < rows; rr++)
                        for (int c = 0; c < cols; c++)
                                k.w[((size_t)(rr / 4) * cols + c) * 4 + rr % 4] = (*w)[(size_t)rr * cols + c];
                break;
        }
        default:
                if (cols % NVFP4_BLOCK || cols > KERN_MAX_COLS)
                        return -EINVAL;
                r = nvfp4_quantize(*w, rows, cols, written_layout(b), &k.q);
                if (r < 0)
                        return r;
                /* the kernel's reading of the scales: right everywhere except the
                 * swizzled path's sm_120 kernel, which expects linear scales */
                k.read_as = written_layout(b);
                if (b == KERN_NVFP4_SWIZZLED && arch == KERN_SM120)
                        k.read_as = NVFP4_LAYOUT_LINEAR;
                k.sf_read = k.q.scales;
                k.sf_read_bytes = k.q.scales_bytes;
                break;
        }
        *m = k;
        return 0;
}

void kern_mat_release(struct kern_mat *m) {
        free(m->w);
        m->w = NULL;
        if (m->sf_borrowed)
                m->q.scales = NULL;
        nvfp4_mat_release(&m->q);
        m->sf_read = NULL;
}

int kern_mats_stack_scales(struct kern_mat *mats, int n, uint8_t **ret) {
        *ret = NULL;
        if (n <= 0 || !is_nvfp4(mats[0].backend))
                return 0;
        size_t slot = mats[0].q.scales_bytes;
        for (int e = 1; e < n; e++)
                if (mats[e].q.scales_bytes != slot || mats[e].rows != mats[0].rows || mats[e].cols != mats[0].cols)
                        return -EINVAL;
        uint8_t *stack = malloc(slot * (size_t)n);
        if (!stack)
                return -ENOMEM;
        size_t total = slot * (size_t)n, stride = (size_t)mats[0].rows * (size_t)(mats[0].cols / NVFP4_BLOCK);
        for (int e = 0; e < n; e++) {
                struct kern_mat *m = &mats[e];
                memcpy(stack + slot * e, m->q.scales, slot);
                if (!m->sf_borrowed)
                        free(m->q.scales);
                m->q.scales = stack + slot * e;
                m->sf_borrowed = true;
                if (m->read_as == NVFP4_LAYOUT_LINEAR) {
                        /* a linear reader finds expert e at e * rows * cols / 16 */
                        m->sf_read = stack + stride * e;
                        m->sf_read_bytes = total - stride * e;
                } else {
                        m->sf_read = m->q.scales;
                        m->sf_read_bytes = slot;
                }
        }
        *ret = stack;
        return 0;
}

float kern_dot(const float *a, const float *b, int n) {
        v4f acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
        int i = 0;
        for (; i + 8 <= n; i += 8) {
                acc0 += load4(a + i) * load4(b + i);
                acc1 += load4(a + i + 4) * load4(b + i + 4);
        }
        v4f acc = acc0 + acc1;
        float s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
        for (; i < n; i++)
                s += a[i] * b[i];
        return s;
}

void kern_axpy(float *y, float a, const float *x, int n) {
        v4f av = {a, a, a, a};
        int i = 0;
        for (; i + 4 <= n; i += 4)
                store4(y + i, load4(y + i) + av * load4(x + i));
        for (; i < n; i++)
                y[i] += a * x[i];
}

/* The exact conversion for what the fast path does not cover (overflow and NaN). */
__attribute__((noinline)) static float round_f16_slow(float f) { return gguf_f16_to_f32(gguf_f32_to_f16(f)); }

static inline float round_f16(float f) {
        uint32_t x, ax;
        memcpy(&x, &f, 4);
        ax = x & 0x7fffffffu;
        if (__builtin_expect(ax >= 0x477ff000u, 0))
                return round_f16_slow(f);
        if (ax < 0x38800000u) {
                /* subnormal halves are multiples of 2^-24: adding 0.5 (whose ulp is 2^-24)
                 * rounds to one, ties to even; the subtraction is exact */
                float a = (fabsf(f) + 0.5f) - 0.5f;
                return copysignf(a, f);
        }
        /* normal range: round the 23-bit mantissa to 10 bits, ties to even */
        x += 0xfffu + ((x >> 13) & 1u);
        x &= ~0x1fffu;
        memcpy(&f, &x, 4);
        return f;
}

float kern_round_f16(float f) { return round_f16(f); }

/* E4M3 code -> float, built once (the kernels' scale decode is one lookup). 0x7f and 0xff
 * are NaN, as the hardware decodes them: quantisation saturates at 448 and never writes
 * them, so only stale memory read as scales (KERN_STALE_SF) brings them in. */
static float e4m3_lut[256];
/* byte -> (low value, high value) of two packed E2M1 codes */
static float pair_lut[256][2];
static void luts_init(void) {
        for (int i = 0; i < 256; i++) {
                e4m3_lut[i] = nvfp4_e4m3_to_f32((uint8_t)i);
                pair_lut[i][0] = nvfp4_e2m1_values[i & 15];
                pair_lut[i][1] = nvfp4_e2m1_values[i >> 4];
        }
}
static pthread_once_t luts_once = PTHREAD_ONCE_INIT;

static void matvec_reference(const struct kern_mat *m, const float *x, float *y) {
        for (int r = 0; r < m->rows; r++)
                y[r] = kern_dot(m->w + (size_t)r * m->cols, x, m->cols);
}

static void matvec_shuffled(const struct kern_mat *m, const float *x, float *y) {
        int groups = (m->rows + 3) / 4;
        for (int g = 0; g < groups; g++) {
                const float *p = m->w + (size_t)g * m->cols * 4;
                v4f a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
                int c = 0;
                for (; c + 2 <= m->cols; c += 2) {
                        v4f x0 = {x[c], x[c], x[c], x[c]};
                        v4f x1 = {x[c + 1], x[c + 1], x[c + 1], x[c + 1]};
                        a0 += load4(p + (size_t)c * 4) * x0;
                        a1 += load4(p + (size_t)c * 4 + 4) * x1;
                }
                for (; c < m->cols; c++) {
                        v4f xc = {x[c], x[c], x[c], x[c]};
                        a0 += load4(p + (size_t)c * 4) * xc;
                }
                v4f a = a0 + a1;
                for (int i = 0; i < 4 && g * 4 + i < m->rows; i++)
                        y[g * 4 + i] = a[i];
        }
}

/* Sum of 16 dequantised-without-scale values times x (E2M1 values are exact in fp32). */
static inline float block_dot(const uint8_t *b8, const float *x) {
        float s0 = 0, s1 = 0;
        for (int i = 0; i < 8; i++) {
                s0 += pair_lut[b8[i]][0] * x[2 * i];
                s1 += pair_lut[b8[i]][1] * x[2 * i + 1];
        }
        return s0 + s1;
}

/* Scale code found at byte offset o of a one-row activation scale buffer written in the
 * 128x4 swizzle: row 0's scales sit at the start of each tile, everything else in a
 * one-row buffer is padding. The buffer is allocated per call the way torch.empty does
 * and the quantisation kernel writes only the real row, so the padding holds stale device
 * memory: KERN_STALE_SF, the E4M3 NaN code a NaN-filled buffer freed earlier leaves
 * behind (vLLM PRs #37564 and #38148: "padding rows' scales contain stale GPU memory ...
 * FP8 NaN (0x7F)"). */
static uint8_t act_sf_at(const uint8_t *sf, int sf_cols, size_t o) {
        size_t col_tiles = (size_t)nvfp4_pad_sf_cols(sf_cols) / 4, tile = o / 512, in = o % 512;
        size_t row = (tile / col_tiles) * 128 + ((in % 16) / 4) * 32 + in / 16;
        size_t col = (tile % col_tiles) * 4 + in % 4;
        return row == 0 && col < (size_t)sf_cols ? sf[col] : KERN_STALE_SF;
}

/* The activation side of a block-scaled FP4 MMA (W4A4): x is quantised to NVFP4 on the fly
 * (tensor scale amax/(6*448), E4M3 per 16, E2M1 values), its scale factors written in the
 * 128x4 swizzle the MMA reads, then read back as the kernel reads them (read_as) and
 * applied: out is the dequantised activation. For one token the swizzled buffer holds one
 * real row in a 128-row tile, so a linear reader finds padding for every block past the
 * fourth: its stale NaN scales make those activations NaN. */
static void act_quantize(const float *x, int cols, enum nvfp4_layout read_as, float *out) {
        uint8_t sf[KERN_MAX_COLS / NVFP4_BLOCK];
        int sf_cols = cols / NVFP4_BLOCK;
        float amax = 0;
        bool nan = false;
        for (int i = 0; i < cols; i++) {
                amax = fmaxf(amax, fabsf(x[i]));
                nan |= isnan(x[i]); /* fmaxf drops a NaN: it is looked for apart */
        }
        if (nan)
                amax = NAN;
        if (!(amax > 0) || !isfinite(amax)) {
                /* zeros stay zeros; NaN and inf propagate as they would through the MMA */
                for (int i = 0; i < cols; i++)
                        out[i] = amax > 0 || isnan(amax) ? x[i] * NAN : 0.0f;
                return;
        }
        float gs = amax / (NVFP4_E2M1_MAX * NVFP4_E4M3_MAX);
        for (int c = 0; c < sf_cols; c++) {
                const float *xb = x + c * NVFP4_BLOCK;
                float bmax = 0;
                for (int i = 0; i < NVFP4_BLOCK; i++)
                        bmax = fmaxf(bmax, fabsf(xb[i]));
                sf[c] = nvfp4_f32_to_e4m3(bmax / NVFP4_E2M1_MAX / gs);
                float eff = e4m3_lut[sf[c]] * gs;
                for (int i = 0; i < NVFP4_BLOCK; i++)
                        out[c * NVFP4_BLOCK + i] = eff > 0 ? nvfp4_e2m1_values[nvfp4_f32_to_e2m1(xb[i] / eff)] : 0.0f;
        }
        for (int c = 0; c < sf_cols; c++) {
                uint8_t code = read_as == NVFP4_LAYOUT_SWIZZLED_128X4 ? sf[c] : act_sf_at(sf, sf_cols, (size_t)c);
                float scale = e4m3_lut[code] * gs;
                for (int i = 0; i < NVFP4_BLOCK; i++)
                        out[c * NVFP4_BLOCK + i] *= scale;
        }
}

static void matvec_nvfp4(const struct kern_mat *m, const float *x, float *y) {
        const struct nvfp4_mat *q = &m->q;
        int sf_cols = q->cols / NVFP4_BLOCK;
        float xq[KERN_MAX_COLS];
        if (m->backend == KERN_NVFP4_SWIZZLED) {
                /* the CUTLASS FP4 path: both operands FP4 */
                act_quantize(x, q->cols, m->read_as, xq);
                x = xq;
        }
        for (int r = 0; r < q->rows; r++) {
                const uint8_t *row = q->packed + (size_t)r * q->cols / 2;
                float acc = 0;
                for (int c = 0; c < sf_cols; c++) {
                        size_t off = m->read_as == NVFP4_LAYOUT_SWIZZLED_128X4 ? nvfp4_sf_offset_swizzled(r, c, sf_cols)
                                                                               : nvfp4_sf_offset_linear(r, c, sf_cols);
                        float s = off < m->sf_read_bytes ? e4m3_lut[m->sf_read[off]] : 0.0f;
                        acc += s * block_dot(row + c * 8, x + c * NVFP4_BLOCK);
                }
                y[r] = acc * q->global_scale;
        }
}

/* tcgen05: the 128x4 scale layout read the way the tensor core's data path does: in a
 * 128-row tile, lane l owns rows l, l+32, l+64, l+96, and their scales for 4 consecutive
 * blocks are the 16 contiguous bytes at tile * 512 + l * 16. One step computes those 4 rows
 * together (a 4-wide vector across rows). */
static void matvec_tcgen05(const struct kern_mat *m, const float *x, float *y) {
        const struct nvfp4_mat *q = &m->q;
        int sf_cols = q->cols / NVFP4_BLOCK;
        float xq[KERN_MAX_COLS];
        act_quantize(x, q->cols, NVFP4_LAYOUT_SWIZZLED_128X4, xq); /* kind::mxf4nvf4: FP4 x FP4 */
        x = xq;
        size_t col_tiles = (size_t)nvfp4_pad_sf_cols(sf_cols) / 4, row_bytes = (size_t)q->cols / 2;
        for (int t = 0; t * 128 < q->rows; t++)
                for (int l = 0; l < 32; l++) {
                        const uint8_t *rp[4];
                        bool any = false;
                        for (int j = 0; j < 4; j++) {
                                int r = t * 128 + l + 32 * j;
                                /* rows past the matrix compute on row 0 and are not stored */
                                rp[j] = q->packed + (size_t)(r < q->rows ? r : 0) * row_bytes;
                                any |= r < q->rows;
                        }
                        if (!any)
                                continue;
                        const uint8_t *sft = q->scales + (size_t)t * col_tiles * 512 + (size_t)l * 16;
                        v4f acc = {0, 0, 0, 0};
                        for (int c = 0; c < sf_cols; c++) {
                                const uint8_t *sf = sft + (size_t)(c / 4) * 512 + (c % 4);
                                v4f sc = {e4m3_lut[sf[0]], e4m3_lut[sf[4]], e4m3_lut[sf[8]], e4m3_lut[sf[12]]};
                                const float *xb = x + c * NVFP4_BLOCK;
                                v4f d = {0, 0, 0, 0};
                                for (int i = 0; i < 8; i++) {
                                        size_t k = (size_t)c * 8 + i;
                                        v4f lo = {pair_lut[rp[0][k]][0], pair_lut[rp[1][k]][0], pair_lut[rp[2][k]][0],
                                                  pair_lut[rp[3][k]][0]};
                                        v4f hi = {pair_lut[rp[0][k]][1], pair_lut[rp[1][k]][1], pair_lut[rp[2][k]][1],
                                                  pair_lut[rp[3][k]][1]};
                                        v4f x0 = {xb[2 * i], xb[2 * i], xb[2 * i], xb[2 * i]};
                                        v4f x1 = {xb[2 * i + 1], xb[2 * i + 1], xb[2 * i + 1], xb[2 * i + 1]};
                                        d += lo * x0 + hi * x1;
                                }
                                acc += sc * d;
                        }
                        for (int j = 0; j < 4; j++) {
                                int r = t * 128 + l + 32 * j;
                                if (r < q->rows)
                                        y[r] = acc[j] * q->global_scale;
                        }
                }
}

/* fp16acc: activations and partial sums in fp16, in the quantised domain (E2M1 value
 * times E4M3 scale, up to 6 * 448 = 2688 per weight); the fp32 tensor scale, which brings
 * the sum back to the weights' real magnitude, is applied only at the end. A large
 * activation pushes a partial sum past 65504: inf, then NaN downstream. */
static void matvec_fp16acc(const struct kern_mat *m, const float *x, float *y) {
        const struct nvfp4_mat *q = &m->q;
        int sf_cols = q->cols / NVFP4_BLOCK;
        float xh[KERN_MAX_COLS]; /* the activations in fp16 */
        for (int i = 0; i < q->cols; i++)
                xh[i] = round_f16(x[i]);
        for (int r = 0; r < q->rows; r++) {
                const uint8_t *row = q->packed + (size_t)r * q->cols / 2;
                /* four fp16 accumulators (split-K, as an MMA's accumulator registers), each
                 * always holding an fp16 value, summed in fp16 at the end */
                float acc[4] = {0, 0, 0, 0};
                for (int c = 0; c < sf_cols; c++) {
                        float s = round_f16(e4m3_lut[q->scales[nvfp4_sf_offset_linear(r, c, sf_cols)]]);
                        const float *xb = xh + c * NVFP4_BLOCK;
                        float *a = acc + (c & 1) * 2;
                        for (int i = 0; i < 8; i++) {
                                uint8_t b = row[c * 8 + i];
                                /* E2M1 x E4M3 is exact in fp16 (2 + 4 significant bits, 2^-10..2688) */
                                float w0 = pair_lut[b][0] * s, w1 = pair_lut[b][1] * s;
                                a[0] = round_f16(a[0] + round_f16(w0 * xb[2 * i]));
                                a[1] = round_f16(a[1] + round_f16(w1 * xb[2 * i + 1]));
                        }
                }
                float sum = round_f16(round_f16(acc[0] + acc[1]) + round_f16(acc[2] + acc[3]));
                y[r] = sum * q->global_scale;
        }
}

void kern_matvec(const struct kern_mat *m, const float *x, float *y) {
        pthread_once(&luts_once, luts_init);
        switch (m->backend) {
        case KERN_REFERENCE:
                matvec_reference(m, x, y);
                break;
        case KERN_SHUFFLED:
                matvec_shuffled(m, x, y);
                break;
        case KERN_NVFP4:
        case KERN_NVFP4_SWIZZLED:
                matvec_nvfp4(m, x, y);
                break;
        case KERN_TCGEN05:
                matvec_tcgen05(m, x, y);
                break;
        case KERN_FP16ACC:
                matvec_fp16acc(m, x, y);
                break;
        default:
                for (int r = 0; r < m->rows; r++)
                        y[r] = NAN;
                break;
        }
}
