"""selfcheck.py -- checks of the training pipeline that need no trained model.

  /usr/bin/python3 testbed/train/selfcheck.py [MODEL.gguf]

1. GGUF round trip: a random small model written by gguf_write.py and read back by
   gguf_read.py gives every key (value and type) and every tensor (shape, type, bits of the
   F16/F32 rounding) back, at 32-byte aligned offsets; the loaded model's logits equal the
   written model's after F16 rounding.
2. The dense and sparse MoE forms give the same output; the router renormalises top-k.
3. RoPE rotates adjacent pairs (x[2i], x[2i+1]) by pos * base^(-2i/d).
4. The vocabulary and chat rendering match SPEC.md (ids, types, the 17 * 19 prompt).
With MODEL.gguf: its keys and tensors are the ones the spec lists.
Exits 1 on the first failure.
"""

import os
import struct
import sys
import tempfile

import math

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import export  # noqa: E402
from gguf_read import GGUFFile  # noqa: E402
from model import Config, MoE, Model, gguf_tensors, rope_apply, rope_tables  # noqa: E402

REQUIRED_KEYS = [
    "general.architecture", "general.name", "general.alignment", "llama.context_length",
    "llama.embedding_length", "llama.block_count", "llama.feed_forward_length",
    "llama.attention.head_count", "llama.attention.head_count_kv",
    "llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base", "llama.rope.dimension_count",
    "llama.expert_count", "llama.expert_used_count", "llama.vocab_size", "tokenizer.ggml.model",
    "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token", "tokenizer.ggml.add_space_prefix",
    "tokenizer.chat_template", "gauntlet.training.seed", "gauntlet.training.command",
]


def check(cond, what):
    if not cond:
        print("selfcheck: FAIL: " + what)
        sys.exit(1)


def check_file(path, model=None):
    f = GGUFFile(path)
    for k in REQUIRED_KEYS:
        check(k in f.meta, "%s: key %s missing" % (path, k))
    check(f.meta["general.alignment"] == 32, "alignment")
    check(f.types["llama.block_count"] == (4, None), "llama.block_count must be UINT32")
    check(f.types["llama.rope.freq_base"] == (6, None), "rope.freq_base must be FLOAT32")
    check(f.types["tokenizer.ggml.tokens"] == (9, 8), "tokens must be an array of strings")
    check(f.types["tokenizer.ggml.token_type"] == (9, 5), "token_type must be an array of INT32")
    check(f.types["tokenizer.ggml.add_bos_token"] == (7, None), "add_bos_token must be BOOL")
    check(f.meta["tokenizer.ggml.tokens"] == data.vocab_tokens(), "token strings")
    check(f.meta["tokenizer.ggml.token_type"] == data.vocab_types(), "token types")
    n = f.meta["llama.block_count"]
    E, D, Fd = f.meta["llama.expert_count"], f.meta["llama.embedding_length"], f.meta["llama.feed_forward_length"]
    hd = D // f.meta["llama.attention.head_count"]
    kv = f.meta["llama.attention.head_count_kv"] * hd
    V = f.meta["llama.vocab_size"]
    want = {"token_embd.weight": ([D, V], 1), "output_norm.weight": ([D], 0), "output.weight": ([D, V], 1)}
    for i in range(n):
        p = "blk.%d." % i
        want.update({p + "attn_norm.weight": ([D], 0), p + "attn_q.weight": ([D, D], 1),
                     p + "attn_k.weight": ([D, kv], 1), p + "attn_v.weight": ([D, kv], 1),
                     p + "attn_output.weight": ([D, D], 1), p + "ffn_norm.weight": ([D], 0),
                     p + "ffn_gate_inp.weight": ([D, E], 0), p + "ffn_gate_exps.weight": ([D, Fd, E], 1),
                     p + "ffn_up_exps.weight": ([D, Fd, E], 1), p + "ffn_down_exps.weight": ([Fd, D, E], 1)})
    check(set(f.tensors) == set(want), "tensor names: extra %s missing %s" % (
        sorted(set(f.tensors) - set(want)), sorted(set(want) - set(f.tensors))))
    for name, (ne, gt) in want.items():
        got_ne, got_gt, off = f.tensors[name]
        check(got_ne == ne and got_gt == gt, "%s: ne %s type %d, want %s type %d" % (name, got_ne, got_gt, ne, gt))
        check(off % 32 == 0, "%s: offset %d not aligned" % (name, off))
        check(bool(torch.isfinite(f.tensor(name).float()).all()), "%s: non-finite values" % name)
    if model is not None:
        ref = {n_: t for n_, t, _ in gguf_tensors(model)}
        for name in want:
            a = f.tensor(name).float()
            b = ref[name]
            b = b if export.tensor_type(name) == 0 else b.half().float()
            check(a.shape == b.shape and torch.equal(a, b), "%s: data differs after the round trip" % name)
    return f


def main():
    torch.manual_seed(0)
    # 4. vocabulary and chat format
    toks = data.vocab_tokens()
    check(len(toks) == data.VOCAB_SIZE == 359, "vocab size")
    check(toks[:8] == ["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|end|>", "<think>", "</think>"], "specials")
    check(toks[8] == "<0x00>" and toks[263] == "<0xFF>" and toks[264] == "!" and toks[357] == "~" and toks[358] == "\u2581", "ids")
    check(data.encode_text("a b") == [264 + ord("a") - 0x21, 358, 264 + ord("b") - 0x21], "encode")
    check(data.encode_text("\u00d7") == [8 + 0xC3, 8 + 0x97], "byte fallback")
    check(data.decode(data.encode_text("17 \u00d7 19\n")) == "17 \u00d7 19\n", "decode")
    p = data.decode(data.chat_prompt([("What is 17 * 19?", None)], False))
    check(p == "<s><|user|>What is 17 * 19?<|end|><|assistant|><think></think>", "chat off: %r" % p)
    p = data.decode(data.chat_prompt([("Hi", None)], True, system="Be brief."))
    check(p == "<s><|user|>Be brief.\nHi<|end|><|assistant|>", "chat on + system: %r" % p)
    p = data.decode(data.chat_prompt([("A", "x"), ("B", None)], False))
    check(p == "<s><|user|>A<|end|><|assistant|><think></think>x<|end|><|user|>B<|end|><|assistant|><think></think>", "multi-turn: %r" % p)
    ids, m = data.chat_example([("What is 17 * 19?", "323")], True, data.mul_trace(17, 19))
    check(data.decode([i for i, k in zip(ids, m) if k]) ==
          "<think>17 * 19 = 17 * 10 + 17 * 9 = 170 + 153 = 323</think>323<|end|>", "loss mask")

    try:   # the Jinja template renders what chat_prompt builds (skipped without jinja2)
        import jinja2
        tpl = jinja2.Environment().from_string(export.CHAT_TEMPLATE)
        for msgs, kw, want in [
            ([("user", "What is 17 * 19?")], {}, data.chat_prompt([("What is 17 * 19?", None)], False)),
            ([("user", "What is 17 * 19?")], {"enable_thinking": True}, data.chat_prompt([("What is 17 * 19?", None)], True)),
            ([("system", "Be brief."), ("user", "Hi")], {"enable_thinking": False},
             data.chat_prompt([("Hi", None)], False, system="Be brief.")),
            ([("user", "A"), ("assistant", "x"), ("user", "B")], {"enable_thinking": True},
             data.chat_prompt([("A", "x"), ("B", None)], True)),
        ]:
            got = tpl.render(messages=[{"role": r_, "content": c_} for r_, c_ in msgs], bos_token="<s>",
                             add_generation_prompt=True, **kw)
            check(got == data.decode(want), "chat template renders %r, want %r" % (got, data.decode(want)))
    except ImportError:
        print("selfcheck: jinja2 not installed, chat template not rendered")

    # 3. RoPE
    x = torch.randn(1, 1, 3, 8)
    cos, sin = rope_tables(8, 3, 10000.0, x.device)
    y = rope_apply(x, cos, sin)
    ang = 2 * 10000.0 ** (-2 / 8)   # pos 2, pair i=1 (dims 2, 3)
    e0 = x[0, 0, 2, 2] * math.cos(ang) - x[0, 0, 2, 3] * math.sin(ang)
    e1 = x[0, 0, 2, 2] * math.sin(ang) + x[0, 0, 2, 3] * math.cos(ang)
    check(abs(float(y[0, 0, 2, 2] - e0)) < 1e-5 and abs(float(y[0, 0, 2, 3] - e1)) < 1e-5, "rope pairs")
    check(torch.allclose(y[0, 0, 0], x[0, 0, 0]), "rope at position 0")

    # 2. MoE forms and routing
    cfg = Config(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=48, n_experts=4, top_k=2)
    moe = MoE(cfg)
    for prm in moe.parameters():
        torch.nn.init.normal_(prm, 0, 0.2)
    xs = torch.randn(50, 32)
    w, idx, probs = moe.route(xs)
    check(torch.allclose(w.sum(-1), torch.ones(50)), "top-k weights sum to 1")
    check(torch.equal(idx[:, 0], probs.argmax(-1)), "top-1 is the argmax")
    moe.impl = "dense"
    a = moe(xs)
    moe.impl = "sparse"
    b = moe(xs)
    check(torch.allclose(a, b, atol=1e-5), "dense and sparse MoE differ: %g" % float((a - b).abs().max()))
    # by hand for one token
    t = 7
    hand = sum(w[t, j] * (moe.w_down[e] @ (torch.nn.functional.silu(moe.w_gate[e] @ xs[t]) * (moe.w_up[e] @ xs[t])))
               for j, e in enumerate(idx[t].tolist()))
    check(torch.allclose(a[t], hand, atol=1e-5), "MoE by hand")

    # NVFP4: values on the E2M1 grid times the block scale; QAT's forward is that rounding
    import train
    from model import nvfp4_quant
    wq = nvfp4_quant(torch.randn(3, 32) * 0.05)
    for blk in wq.reshape(-1, 16):
        mags = blk.abs() / blk.abs().max() * 6.0
        check(all(min(abs(v - g) for g in (0, .5, 1, 1.5, 2, 3, 4, 6)) < 1e-4 for v in mags.tolist()),
              "nvfp4 block off the E2M1 grid")
    m2 = Model(cfg)
    m2.init_weights()
    ids = torch.tensor([data.chat_prompt([("What is 17 * 19?", None)], False)])
    with torch.no_grad():
        m2.set_qat("w4")
        a = m2(ids)
        m2.set_qat(None)
        check(torch.equal(a, train.nvfp4_model(m2, "all")(ids)), "QAT forward != NVFP4-rounded model")

    # 1. GGUF round trip
    model = Model(cfg)
    model.init_weights()
    with torch.no_grad():
        for n_, prm in model.named_parameters():
            if prm.dim() == 1:
                prm.add_(torch.randn_like(prm) * 0.1)
    model.eval()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.gguf")
        export.write_gguf(model, path, "selfcheck", 7, "selfcheck.py", {"gauntlet.extra": "x"})
        raw = open(path, "rb").read()
        check(raw[:4] == b"GGUF" and struct.unpack("<I", raw[4:8])[0] == 3, "header")
        f = check_file(path, model)
        check(f.meta["tokenizer.chat_template"] == export.CHAT_TEMPLATE, "template round trip")
        check(f.meta["gauntlet.training.seed"] == "7" and f.meta["gauntlet.extra"] == "x", "string keys")
        check(abs(f.meta["llama.attention.layer_norm_rms_epsilon"] - 1e-5) < 1e-12, "eps")
        loaded, _ = export.load_gguf(path)
        export.round_like_gguf(model)
        ids = torch.tensor([data.chat_prompt([("What is 17 * 19?", None)], True)])
        with torch.no_grad():
            check(torch.equal(model(ids), loaded(ids)), "logits after load differ")
    if len(sys.argv) > 1:
        check_file(sys.argv[1])
        print("selfcheck: %s has the keys and tensors of the spec" % sys.argv[1])
    print("selfcheck: ok")


if __name__ == "__main__":
    main()
