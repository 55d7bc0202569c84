"""export.py -- the model <-> GGUF mapping: metadata, chat template, tensor types.

Matrices are F16 except the router (ffn_gate_inp, F32, as llama.cpp's converter keeps it:
the top-k choice is sensitive to small changes in router logits); norms are F32.
"""

import torch

import data
from chat_template import CHAT_TEMPLATE  # tokenizer.chat_template
from gguf_read import GGUFFile
from gguf_write import GGUFWriter, GGML_F16, GGML_F32, T_FLOAT32, T_INT32, T_STRING
from model import Config, Model, gguf_tensors, load_gguf_tensors

KEEP_F32 = ("_norm.weight", "ffn_gate_inp.weight")


def tensor_type(name):
    return GGML_F32 if name.endswith(KEEP_F32) else GGML_F16


def round_like_gguf(model):
    """Round every parameter the way the GGUF stores it (F16 matrices), in place, so an
    evaluation of the model sees exactly the numbers the C server will load."""
    ref = {n: t for n, t, _ in gguf_tensors(model)}
    rounded = {n: (t if tensor_type(n) == GGML_F32 else t.half().float()) for n, t in ref.items()}
    load_gguf_tensors(model, rounded)


def write_gguf(model, path, name, seed, command, extra=None):
    c = model.cfg
    w = GGUFWriter(alignment=32)
    w.add_str("general.architecture", "llama")
    w.add_str("general.name", name)
    w.add_u32("llama.context_length", c.ctx)
    w.add_u32("llama.embedding_length", c.dim)
    w.add_u32("llama.block_count", c.n_layers)
    w.add_u32("llama.feed_forward_length", c.ffn_dim)
    w.add_u32("llama.attention.head_count", c.n_heads)
    w.add_u32("llama.attention.head_count_kv", c.n_kv_heads)
    w.add_f32("llama.attention.layer_norm_rms_epsilon", c.norm_eps)
    w.add_f32("llama.rope.freq_base", c.rope_base)
    w.add_u32("llama.rope.dimension_count", c.head_dim)
    w.add_u32("llama.expert_count", c.n_experts)
    w.add_u32("llama.expert_used_count", c.top_k)
    w.add_u32("llama.vocab_size", c.vocab_size)
    w.add_str("tokenizer.ggml.model", "llama")
    w.add_array("tokenizer.ggml.tokens", T_STRING, data.vocab_tokens())
    w.add_array("tokenizer.ggml.scores", T_FLOAT32, [0.0] * c.vocab_size)
    w.add_array("tokenizer.ggml.token_type", T_INT32, data.vocab_types())
    w.add_u32("tokenizer.ggml.bos_token_id", data.BOS)
    w.add_u32("tokenizer.ggml.eos_token_id", data.EOS)
    w.add_u32("tokenizer.ggml.eot_token_id", data.END)
    w.add_u32("tokenizer.ggml.unknown_token_id", data.UNK)
    w.add_u32("tokenizer.ggml.padding_token_id", data.EOS)
    w.add_bool("tokenizer.ggml.add_bos_token", True)
    w.add_bool("tokenizer.ggml.add_eos_token", False)
    w.add_bool("tokenizer.ggml.add_space_prefix", False)
    w.add_str("tokenizer.chat_template", CHAT_TEMPLATE)
    w.add_str("gauntlet.training.seed", str(seed))
    w.add_str("gauntlet.training.command", command)
    for k, v in (extra or {}).items():
        w.add_str(k, str(v))
    for n, t, _ in gguf_tensors(model):
        w.add_tensor(n, t, tensor_type(n))
    return w.write(path)


def config_from_meta(meta):
    g = lambda k: meta["llama." + k]
    dim, nh = g("embedding_length"), g("attention.head_count")
    if g("rope.dimension_count") != dim // nh:
        raise ValueError("rope.dimension_count %d != head_dim %d" % (g("rope.dimension_count"), dim // nh))
    return Config(vocab_size=len(meta["tokenizer.ggml.tokens"]), dim=dim, n_layers=g("block_count"),
                  n_heads=nh, n_kv_heads=g("attention.head_count_kv"), ffn_dim=g("feed_forward_length"),
                  n_experts=g("expert_count"), top_k=g("expert_used_count"),
                  norm_eps=g("attention.layer_norm_rms_epsilon"), rope_base=g("rope.freq_base"),
                  ctx=g("context_length"))


def load_gguf(path):
    """-> (Model in fp32 with the file's weights, GGUFFile)."""
    f = GGUFFile(path)
    if f.meta.get("general.architecture") != "llama":
        raise ValueError("%s: not a llama GGUF" % path)
    cfg = config_from_meta(f.meta)
    if f.meta["tokenizer.ggml.tokens"] != data.vocab_tokens():
        raise ValueError("%s: vocabulary differs from data.py's" % path)
    m = Model(cfg)
    load_gguf_tensors(m, {n: f.tensor(n).float() for n in f.tensors})
    m.eval()
    return m, f
