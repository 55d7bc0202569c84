/* kern.h -- the matrix-vector kernels behind --moe-backend and --gemm-backend.
 *
 * A struct kern_mat is one weight matrix (rows x cols, y = W x) prepared at load for one
 * backend on one emulated device architecture. Each backend is a real implementation; the
 * ones that fail do so for the reason their real counterparts did (docs/testbed.md):
 *
 *   reference       fp32 weights, fp32 accumulation.
 *   nvfp4           NVFP4 weights (nvfp4.h), linear scales, dequantised in the kernel
 *                   (weight-only, fp32 activations).
 *   nvfp4-swizzled  W4A4: NVFP4 weights and activations quantised to NVFP4 per call, all
 *                   scale factors written in the 128x4 swizzle; the sm_100 kernel reads the
 *                   swizzle, the sm_120 kernel reads linear scales: garbage on sm_120.
 *   tcgen05         W4A4 with swizzled scales, 4 rows per step; built for sm_100 only.
 *   shuffled        fp32 in a 4-row interleaved copy (one SIMD lane per row); MoE only.
 *   fp16acc         NVFP4 accumulated in fp16 before the fp32 tensor scale is applied:
 *                   large activations overflow to inf and NaN.
 *
 * Matrices are immutable after kern_mat_init and may be used by many threads at once.
 */
#ifndef TESTBED_KERN_H
#define TESTBED_KERN_H

#include <stdbool.h>
#include <stddef.h>

#include "nvfp4.h"

enum kern_backend {
        KERN_AUTO,
        KERN_REFERENCE,
        KERN_NVFP4,
        KERN_NVFP4_SWIZZLED,
        KERN_TCGEN05,
        KERN_SHUFFLED,
        KERN_FP16ACC,
        KERN_BACKEND_COUNT,
};

enum kern_arch {
        KERN_SM90,
        KERN_SM100,
        KERN_SM120,
        KERN_ARCH_COUNT,
};

/* Which layer family a backend is asked for: experts (--moe-backend) or the dense
 * attention projections (--gemm-backend). */
enum kern_role {
        KERN_ROLE_MOE,
        KERN_ROLE_GEMM,
};

/* What the never-written padding of a per-call activation scale buffer holds: stale device
 * memory, here the E4M3 NaN code (0x7f). Only a kernel that reads the layout wrong sees it. */
#define KERN_STALE_SF 0x7f

/* Widest input the FP4-activation kernels take (their per-call buffers are on the stack). */
#define KERN_MAX_COLS 4096

struct kern_mat {
        enum kern_backend backend;
        int rows, cols;
        float *w;              /* reference: rows x cols; shuffled: [rows/4][cols][4] (rows padded) */
        struct nvfp4_mat q;    /* nvfp4 family */
        enum nvfp4_layout read_as; /* the layout this arch's kernel reads scales in */
        const uint8_t *sf_read;    /* where the kernel reads scales from (q.scales unless stacked) */
        size_t sf_read_bytes;      /* readable bytes from sf_read; reads past them give 0 */
        bool sf_borrowed;          /* q.scales points into a stack owned elsewhere */
};

/* Names as the flags spell them ("nvfp4-swizzled"); NULL for an out-of-range value. */
const char *kern_backend_name(enum kern_backend b);
const char *kern_arch_name(enum kern_arch a);
/* -EINVAL for an unknown name. */
int kern_backend_from_name(const char *s, enum kern_backend *ret);
int kern_arch_from_name(const char *s, enum kern_arch *ret);
/* Whether a backend exists for a role ("shuffled" is an MoE weight layout only). */
bool kern_backend_valid_for(enum kern_backend b, enum kern_role role);
/* What `auto` resolves to, per arch and role, as SGLang's auto chose (sm_120 MoE: the
 * swizzled NVFP4 path, which is the broken one there). */
enum kern_backend kern_resolve_auto(enum kern_role role, enum kern_arch arch);
/* 0 when the backend has a kernel image for the arch; -ENOEXEC when it was built for
 * another architecture (tcgen05 is sm_100 only). */
int kern_check_arch(enum kern_backend b, enum kern_arch arch);

/* Bytes the prepared matrix will hold for backend b (for memory budgets). */
size_t kern_mat_bytes_for(enum kern_backend b, int rows, int cols);
size_t kern_mat_bytes(const struct kern_mat *m);

/* Prepares w (rows x cols, row-major f32) for backend b on arch. For KERN_REFERENCE the
 * matrix takes ownership of w (*w set to NULL); other backends copy and leave *w alone.
 * b must be resolved (not KERN_AUTO). Returns 0, -EINVAL, -ENOEXEC (no image for arch),
 * -ENOMEM. */
int kern_mat_init(struct kern_mat *m, float **w, int rows, int cols, enum kern_backend b, enum kern_arch arch);
void kern_mat_release(struct kern_mat *m);

/* Moves the scales of n NVFP4 expert matrices of one shape into one stacked buffer, expert
 * after expert, as a grouped GEMM over stacked experts holds them. Each expert's slot has
 * its own layout (padded when swizzled); a kernel reading linear scales indexes the stack
 * with the unpadded stride rows * cols / 16, so in a swizzled stack expert e > 0 reads
 * another expert's scales and padding. The stack (*ret, caller frees after the matrices)
 * owns the bytes. Other backends: nothing to do, *ret = NULL. */
int kern_mats_stack_scales(struct kern_mat *mats, int n, uint8_t **ret);

/* y = W x. x has cols floats, y rows floats (must not alias). */
void kern_matvec(const struct kern_mat *m, const float *x, float *y);

/* fp32 dot product of n floats (used by attention too). */
float kern_dot(const float *a, const float *b, int n);
/* y += a * x over n floats. */
void kern_axpy(float *y, float a, const float *x, int n);

/* Rounds f to the nearest fp16 value (inf beyond 65504), returned as a float. */
float kern_round_f16(float f);

#endif
