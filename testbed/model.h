/* model.h -- the llama-architecture MoE model: loading from GGUF and the forward pass.
 *
 * A struct model is immutable once loaded and shared by every request thread. Each request
 * owns a struct model_ctx: the KV cache for up to n_ctx positions and the scratch vectors
 * of one token's forward pass. Nothing in here allocates per token.
 *
 * Forward pass (llama.cpp's llama + Mixtral MoE): token embedding; per block RMSNorm,
 * Q/K/V projections, RoPE in "normal" mode on adjacent pairs, grouped-query causal
 * attention, output projection, residual; RMSNorm, router softmax over all experts, top-k,
 * the k weights renormalised, SwiGLU experts down(silu(gate x) * up x), residual; final
 * RMSNorm and the output head.
 *
 * Memory budget (--mem-budget, the emulated device memory): every weight allocation is
 * reserved against it first. Over budget, loading fails with -ENOMEM and a message
 * "failed to allocate N bytes for WHAT: out of memory (budget B)".
 */
#ifndef TESTBED_MODEL_H
#define TESTBED_MODEL_H

#include <stddef.h>

#include "gguf.h"
#include "kern.h"
#include "tok.h"

struct model_hparams {
        int n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_expert, n_expert_used, n_ctx, n_rot;
        float eps, rope_base;
};

struct model_layer {
        float *attn_norm, *ffn_norm;  /* n_embd */
        struct kern_mat wq, wk, wv, wo; /* --gemm-backend */
        float *router;                /* n_expert x n_embd, fp32 always */
        struct kern_mat *gate, *up, *down; /* n_expert each, --moe-backend */
        uint8_t *sf_stack[3];         /* NVFP4: gate, up, down scales of all experts, stacked */
};

struct model_opts {
        enum kern_backend moe, gemm; /* may be KERN_AUTO */
        enum kern_arch arch;
        size_t mem_budget;           /* bytes; 0 = unlimited */
};

struct model {
        struct model_hparams hp;
        struct tok_vocab vocab;
        char *name;                  /* general.name, or "testbed" */
        enum kern_backend moe, gemm; /* resolved */
        enum kern_arch arch;
        size_t mem_budget;
        size_t mem_used, mem_peak;   /* bytes of weights reserved now / at most */
        float *tok_embd;             /* n_vocab x n_embd */
        float *out_norm;             /* n_embd */
        struct kern_mat output;      /* n_vocab x n_embd, fp32 reference always */
        struct model_layer *layers;
        float *rope_freq;            /* n_rot / 2 */
};

/* Loads path. On failure a negative errno and a one-line reason in *ret_error (caller
 * frees): -ENOEXEC when a backend has no kernel for the arch ("no kernel image..."),
 * -ENOMEM over the memory budget, -EBADMSG for a malformed model, -EINVAL for a backend
 * that does not exist for its role. */
int model_load(const char *path, const struct model_opts *o, struct model **ret, char **ret_error);
void model_free(struct model *m);

struct model_ctx {
        const struct model *m;
        int pos;                      /* tokens in the cache */
        int kv_fault_before;          /* --fault-turn: positions below it are stored through an
                                         FP8 E4M3 cache with the wrong scale (model_eval) */
        float *kcache, *vcache;       /* [n_layer][n_ctx][n_head_kv * head_dim] */
        float *x, *xb, *q, *k, *v, *att, *ao, *gate, *up, *ffo, *router, *rope_cs;
};

int model_ctx_new(const struct model *m, struct model_ctx **ret);
void model_ctx_free(struct model_ctx *c);
/* Forgets the cache: the next token is position 0. */
void model_ctx_reset(struct model_ctx *c);
/* Runs one token at position c->pos and advances it. logits (n_vocab floats) may be NULL
 * for prompt tokens whose prediction is not needed. -E2BIG when the context is full,
 * -EINVAL for a token id out of range. */
int model_eval(struct model_ctx *c, int token, float *logits);

#endif
