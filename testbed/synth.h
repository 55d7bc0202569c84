/* synth.h -- a random-weight model in the testbed's exact format (vocabulary, tensor names,
 * metadata), for tests that need a model file but not a trained one.
 *
 * The vocabulary is testbed/SPEC.md's: <unk> <s> </s> <|user|> <|assistant|> <|end|>
 * <think> </think>, the 256 byte tokens, '!'..'~', and '▁'. Weights are uniform in
 * [-scale, scale] from a seeded generator, matrices F16 as in the real file.
 */
#ifndef TESTBED_SYNTH_H
#define TESTBED_SYNTH_H

#include <stdint.h>

#include "text/buf.h"

struct synth_cfg {
        int n_embd, n_layer, n_head, n_head_kv, n_ff, n_expert, n_expert_used, n_ctx;
        float scale;   /* weight range; norms are 1 */
        uint64_t seed;
};

/* The spec's architecture (160/4 blocks/4 heads/2 KV/320/8 experts top 2/256). */
struct synth_cfg synth_default(void);
/* Appends nothing on failure; ret gets the whole file (caller releases). */
int synth_model(const struct synth_cfg *c, struct buf *ret);
/* Writes synth_model's file to path. */
int synth_model_write(const struct synth_cfg *c, const char *path);

#endif
