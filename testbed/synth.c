/* synth.c -- random-weight GGUF models with the testbed's vocabulary and tensor names. */
#include "synth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "base/rng.h"
#include "base/util.h"

struct synth_cfg synth_default(void) {
        return (struct synth_cfg){.n_embd = 160, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ff = 320,
                                  .n_expert = 8, .n_expert_used = 2, .n_ctx = 256, .scale = 0.08f, .seed = 1};
}

/* n F16 values uniform in [-scale, scale]. */
static int tensor_f16(struct gguf_writer *w, const char *name, uint32_t nd, const uint64_t *ne, float scale,
                      uint64_t *rng) {
        uint64_t n = 1;
        for (uint32_t d = 0; d < nd; d++)
                n *= ne[d];
        uint16_t *h = malloc(n * 2);
        if (!h)
                return -ENOMEM;
        for (uint64_t i = 0; i < n; i++) {
                double u = (double)(rng_next(rng) >> 11) * 0x1p-53;
                h[i] = gguf_f32_to_f16((float)((u * 2 - 1) * scale));
        }
        gguf_writer_tensor(w, name, nd, ne, GGML_TYPE_F16, h, n * 2);
        free(h);
        return 0;
}

static int tensor_ones(struct gguf_writer *w, const char *name, uint64_t n) {
        float *f = malloc(n * 4);
        if (!f)
                return -ENOMEM;
        for (uint64_t i = 0; i < n; i++)
                f[i] = 1.0f;
        gguf_writer_tensor(w, name, 1, &n, GGML_TYPE_F32, f, n * 4);
        free(f);
        return 0;
}

/* The trained model's chat template (testbed/train/chat_template.py CHAT_TEMPLATE, SPEC.md "Chat
 * rendering"), so an engine that renders templates itself (llama.cpp) sends a random model
 * the same prompts as the trained one. */
static const char chat_template[] =
        "{{- bos_token -}}"
        "{%- set ns = namespace(sys='', last_user=-1) -%}"
        "{%- for m in messages -%}"
        "{%- if m['role'] == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}"
        "{%- endfor -%}"
        "{%- for m in messages -%}"
        "{%- if m['role'] == 'system' -%}"
        "{%- set ns.sys = ns.sys + m['content'] + '\\n' -%}"
        "{%- elif m['role'] == 'user' -%}"
        "{{- '<|user|>' + ns.sys + m['content'] + '<|end|>' -}}"
        "{%- set ns.sys = '' -%}"
        "{%- elif m['role'] == 'assistant' -%}"
        "{%- if loop.index0 > ns.last_user and m['reasoning_content'] is defined and m['reasoning_content'] -%}"
        "{{- '<|assistant|><think>' + m['reasoning_content'] + '</think>' + m['content'] + '<|end|>' -}}"
        "{%- else -%}"
        "{{- '<|assistant|><think></think>' + m['content'] + '<|end|>' -}}"
        "{%- endif -%}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}"
        "{{- '<|assistant|>' -}}"
        "{%- if not (enable_thinking is defined and enable_thinking) -%}{{- '<think></think>' -}}{%- endif -%}"
        "{%- endif -%}";

int synth_model(const struct synth_cfg *c, struct buf *ret) {
        struct gguf_writer w;
        char *toks[8 + 256 + 95];
        int32_t types[8 + 256 + 95];
        static const char *const specials[8] = {"<unk>",   "<s>",     "</s>",   "<|user|>",
                                                "<|assistant|>", "<|end|>", "<think>", "</think>"};
        char name[96];
        uint64_t rng = c->seed ? c->seed : 1;
        int n = 0, r = 0;

        for (int i = 0; i < 8; i++, n++) {
                toks[n] = strdup(specials[i]);
                /* <think> </think> user-defined (4), as Qwen3's GGUFs: llama.cpp prints them */
                types[n] = i == 0 ? 2 : i >= 6 ? 4 : 3;
        }
        for (int b = 0; b < 256; b++, n++) {
                toks[n] = strdup_printf("<0x%02X>", b);
                types[n] = 6;
        }
        for (int ch = 0x21; ch <= 0x7e; ch++, n++) {
                toks[n] = strdup_printf("%c", ch);
                types[n] = 1;
        }
        toks[n] = strdup("\xe2\x96\x81");
        types[n++] = 1;
        for (int i = 0; i < n; i++)
                if (!toks[i])
                        r = -ENOMEM;

        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "general.architecture", "llama");
        gguf_writer_kv_str(&w, "general.name", "testbed-synthetic");
        gguf_writer_kv_u32(&w, "llama.context_length", (uint32_t)c->n_ctx);
        gguf_writer_kv_u32(&w, "llama.embedding_length", (uint32_t)c->n_embd);
        gguf_writer_kv_u32(&w, "llama.block_count", (uint32_t)c->n_layer);
        gguf_writer_kv_u32(&w, "llama.feed_forward_length", (uint32_t)c->n_ff);
        gguf_writer_kv_u32(&w, "llama.attention.head_count", (uint32_t)c->n_head);
        gguf_writer_kv_u32(&w, "llama.attention.head_count_kv", (uint32_t)c->n_head_kv);
        gguf_writer_kv_f32(&w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
        gguf_writer_kv_f32(&w, "llama.rope.freq_base", 10000.0f);
        gguf_writer_kv_u32(&w, "llama.rope.dimension_count", (uint32_t)(c->n_embd / c->n_head));
        gguf_writer_kv_u32(&w, "llama.expert_count", (uint32_t)c->n_expert);
        gguf_writer_kv_u32(&w, "llama.expert_used_count", (uint32_t)c->n_expert_used);
        gguf_writer_kv_u32(&w, "llama.vocab_size", (uint32_t)n);
        gguf_writer_kv_str(&w, "tokenizer.ggml.model", "llama");
        gguf_writer_kv_strv(&w, "tokenizer.ggml.tokens", (const char *const *)toks, (uint64_t)n);
        gguf_writer_kv_i32v(&w, "tokenizer.ggml.token_type", types, (uint64_t)n);
        gguf_writer_kv_u32(&w, "tokenizer.ggml.bos_token_id", 1);
        gguf_writer_kv_u32(&w, "tokenizer.ggml.eos_token_id", 2);
        gguf_writer_kv_u32(&w, "tokenizer.ggml.eot_token_id", 5);
        gguf_writer_kv_u32(&w, "tokenizer.ggml.unknown_token_id", 0);
        gguf_writer_kv_bool(&w, "tokenizer.ggml.add_bos_token", true);
        gguf_writer_kv_bool(&w, "tokenizer.ggml.add_space_prefix", false);
        gguf_writer_kv_str(&w, "tokenizer.chat_template", chat_template);

        uint64_t D = (uint64_t)c->n_embd, hd = D / (uint64_t)c->n_head, kvd = hd * (uint64_t)c->n_head_kv;
        uint64_t F = (uint64_t)c->n_ff, E = (uint64_t)c->n_expert, V = (uint64_t)n;
        r = r ? r : tensor_f16(&w, "token_embd.weight", 2, (uint64_t[]){D, V}, 1.0f, &rng);
        r = r ? r : tensor_ones(&w, "output_norm.weight", D);
        r = r ? r : tensor_f16(&w, "output.weight", 2, (uint64_t[]){D, V}, c->scale, &rng);
        for (int il = 0; il < c->n_layer && !r; il++) {
#define NM(s) (snprintf(name, sizeof(name), "blk.%d.%s", il, s), name)
                r = r ? r : tensor_ones(&w, NM("attn_norm.weight"), D);
                r = r ? r : tensor_ones(&w, NM("ffn_norm.weight"), D);
                r = r ? r : tensor_f16(&w, NM("attn_q.weight"), 2, (uint64_t[]){D, D}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("attn_k.weight"), 2, (uint64_t[]){D, kvd}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("attn_v.weight"), 2, (uint64_t[]){D, kvd}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("attn_output.weight"), 2, (uint64_t[]){D, D}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("ffn_gate_inp.weight"), 2, (uint64_t[]){D, E}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("ffn_gate_exps.weight"), 3, (uint64_t[]){D, F, E}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("ffn_up_exps.weight"), 3, (uint64_t[]){D, F, E}, c->scale, &rng);
                r = r ? r : tensor_f16(&w, NM("ffn_down_exps.weight"), 3, (uint64_t[]){F, D, E}, c->scale, &rng);
#undef NM
        }
        if (!r)
                r = gguf_writer_finish(&w, ret);
        gguf_writer_release(&w);
        for (int i = 0; i < n; i++)
                free(toks[i]);
        return r;
}

int synth_model_write(const struct synth_cfg *c, const char *path) {
        struct buf b;
        int r = synth_model(c, &b);
        if (r < 0)
                return r;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                r = -errno;
        else {
                r = write_all(fd, b.data, b.len);
                if (close(fd) < 0 && r >= 0)
                        r = -errno;
        }
        buf_release(&b);
        return r;
}
