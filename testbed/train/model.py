"""model.py -- the testbed model in PyTorch: llama blocks with Mixtral-style routed experts.

The forward is written to be reproduced by a plain C implementation (testbed/*.c) and by
llama.cpp reading the GGUF, so every step is the textbook one:
  h = token_embd[ids]
  per block:  x = rmsnorm(h) * attn_norm;  q, k, v = Wq x, Wk x, Wv x
              RoPE "normal" mode on q and k: adjacent pairs (x[2i], x[2i+1]) rotated by
              pos * base^(-2i/head_dim); causal softmax(q k^T / sqrt(head_dim)) v, query head
              h reading kv head h // (n_head / n_head_kv);  h += Wo attn
              x = rmsnorm(h) * ffn_norm;  p = softmax(router x) over all experts; take the
              top-k p, renormalise them to sum 1;  h += sum_k w_k down_k(silu(gate_k x) * up_k x)
  logits = output(rmsnorm(h) * output_norm)
rmsnorm(x) = x / sqrt(mean(x^2) + eps).  No biases anywhere.  Norms and the router run in
fp32 even under autocast.
"""

import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 359
    dim: int = 160
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 2
    ffn_dim: int = 320        # width of one expert
    n_experts: int = 8
    top_k: int = 2
    norm_eps: float = 1e-5
    rope_base: float = 10000.0
    ctx: int = 256

    @property
    def head_dim(self):
        return self.dim // self.n_heads

    def to_dict(self):
        return asdict(self)


_E2M1 = {}


def _e2m1_tables(device):
    """The E2M1 magnitudes and their midpoints, made once per device (a host-to-device copy
    in every call would make the GPU wait for the CPU)."""
    t = _E2M1.get(device)
    if t is None:
        grid = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], device=device)
        t = _E2M1[device] = (grid, (grid[1:] + grid[:-1]) / 2)
    return t


def nvfp4_quant(w, per_row=False):
    """Round w to NVFP4 and back: blocks of 16 consecutive values along the last (input)
    dim, each value an E2M1 number (0, .5, 1, 1.5, 2, 3, 4, 6), one E4M3 scale per block
    relative to a FP32 scale amax / (6 * 448) -- of the whole matrix (the leading dims of a
    3-D expert stack are separate matrices), or of each row when per_row (activations).
    The last dim must be a multiple of 16."""
    shp = w.shape
    wf = w.float()
    if per_row:
        amax = wf.abs().amax(-1, keepdim=True)
    elif wf.dim() == 3:
        amax = wf.abs().amax((1, 2), keepdim=True)
    else:
        amax = wf.abs().max()
    ts = (amax / (6.0 * 448.0)).clamp(min=1e-30)
    if ts.dim():
        ts = ts.unsqueeze(-1)          # broadcast over [..., blocks, 16]
    x = wf.reshape(*shp[:-1], shp[-1] // 16, 16) / ts
    bs = x.abs().amax(-1, keepdim=True) / 6.0
    e = torch.floor(torch.log2(bs.clamp(min=2.0 ** -9))).clamp(min=-6)   # E4M3: 3 mantissa bits,
    step = torch.pow(2.0, e - 3)                                          # min normal 2^-6
    bs8 = (torch.round(bs / step) * step).clamp(max=448.0)
    q = x / torch.where(bs8 > 0, bs8, torch.ones_like(bs8))
    grid, mid = _e2m1_tables(w.device)
    qa = grid[torch.bucketize(q.abs().clamp(max=6.0), mid)]
    return (qa * q.sign() * bs8 * ts).reshape(shp).to(w.dtype)


def fake_quant(t, per_row=False):
    """NVFP4 in the forward, identity in the backward (straight-through)."""
    return t + (nvfp4_quant(t.detach(), per_row) - t.detach())


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def rope_tables(head_dim, n_pos, base, device):
    """cos and sin, each [n_pos, head_dim/2]: angle = pos * base^(-2i/head_dim)."""
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64, device=device) / head_dim)
    ang = torch.arange(n_pos, dtype=torch.float64, device=device)[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def rope_apply(x, cos, sin):
    """x [B, H, T, hd]; rotate the adjacent pairs (x[2i], x[2i+1])."""
    xf = x.float().reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
    x0, x1 = xf[..., 0], xf[..., 1]
    c, s = cos[: x.shape[2]], sin[: x.shape[2]]
    y = torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)
    return y.reshape(x.shape).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.wq = nn.Linear(cfg.dim, cfg.n_heads * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * hd, cfg.dim, bias=False)

        self.qat = None       # None, "w4" or "w4a4": NVFP4 fake quantisation (training)

    def lin(self, layer, x):
        w = layer.weight
        if self.qat:
            w = fake_quant(w)
            if self.qat == "w4a4":
                x = fake_quant(x, per_row=True)
        return F.linear(x, w)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        c, hd = self.cfg, self.cfg.head_dim
        q = self.lin(self.wq, x).view(B, T, c.n_heads, hd).transpose(1, 2)
        k = self.lin(self.wk, x).view(B, T, c.n_kv_heads, hd).transpose(1, 2)
        v = self.lin(self.wv, x).view(B, T, c.n_kv_heads, hd).transpose(1, 2)
        q, k = rope_apply(q, cos, sin), rope_apply(k, cos, sin)
        g = c.n_heads // c.n_kv_heads
        if g > 1:  # query head h reads kv head h // g
            k = k.repeat_interleave(g, dim=1)
            v = v.repeat_interleave(g, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            att = att.masked_fill(mask, float("-inf")).float().softmax(-1).to(q.dtype)
            o = att @ v
        return self.lin(self.wo, o.transpose(1, 2).reshape(B, T, c.n_heads * hd))


class MoE(nn.Module):
    """Routed SwiGLU experts.  Weights are stored the way GGUF lays them out:
    w_gate, w_up [E, ffn, dim] and w_down [E, dim, ffn] (PyTorch Linear [out, in] per expert)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        E, Fd, D = cfg.n_experts, cfg.ffn_dim, cfg.dim
        self.router = nn.Linear(D, E, bias=False)
        self.w_gate = nn.Parameter(torch.empty(E, Fd, D))
        self.w_up = nn.Parameter(torch.empty(E, Fd, D))
        self.w_down = nn.Parameter(torch.empty(E, D, Fd))
        self.impl = "auto"
        self.aux = None        # load-balancing loss of the last forward (training only)
        self.qat = None        # None, "w4" or "w4a4", as Attention.qat

    def route(self, x):
        """x [N, D] -> (top-k weights [N, k] fp32, top-k expert ids [N, k], probs [N, E])."""
        logits = F.linear(x.float(), self.router.weight.float())
        probs = logits.softmax(-1)
        w, idx = probs.topk(self.cfg.top_k, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        return w, idx, probs

    def forward(self, x):
        shp = x.shape
        x = x.reshape(-1, shp[-1])
        w, idx, probs = self.route(x)
        E = self.cfg.n_experts
        if self.training:
            # Switch-style balance loss: E * sum_e (share of routed slots) * (mean prob)
            share = F.one_hot(idx, E).float().sum((0, 1)) / idx.numel()
            self.aux = E * (share * probs.mean(0)).sum()
        impl = self.impl
        if impl == "auto":
            impl = "dense" if x.is_cuda else "sparse"
        w_gate, w_up, w_down = self.w_gate, self.w_up, self.w_down
        if self.qat:
            w_gate, w_up, w_down = fake_quant(w_gate), fake_quant(w_up), fake_quant(w_down)
        aq = (lambda t: fake_quant(t, per_row=True)) if self.qat == "w4a4" else (lambda t: t)
        x_in = aq(x)
        if impl == "dense":
            # every expert on every token, weighted by a gate that is zero off the top-k:
            # two large GEMMs, exact same result as the sparse form.
            gates = torch.zeros(x.shape[0], E, device=x.device, dtype=torch.float32)
            gates.scatter_(1, idx, w)
            gu = torch.einsum("nd,efd->nef", x_in, w_gate.to(x.dtype))
            up = torch.einsum("nd,efd->nef", x_in, w_up.to(x.dtype))
            act = aq(F.silu(gu) * up) * gates.to(x.dtype)[:, :, None]
            out = torch.einsum("nef,edf->nd", act, w_down.to(x.dtype))
        else:
            # only the chosen experts; unbind() so the backward stacks the expert
            # gradients once instead of adding E full-size zero tensors
            out = torch.zeros_like(x)
            wg, wu, wd = w_gate.unbind(0), w_up.unbind(0), w_down.unbind(0)
            for e in range(E):
                tok, slot = (idx == e).nonzero(as_tuple=True)
                if tok.numel() == 0:
                    continue
                xe = x_in[tok]
                h = aq(F.silu(xe @ wg[e].t().to(x.dtype)) * (xe @ wu[e].t().to(x.dtype)))
                ye = (h @ wd[e].t().to(x.dtype)) * w[tok, slot].to(x.dtype)[:, None]
                out = out.index_add(0, tok, ye)
        return out.reshape(shp)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.moe = MoE(cfg)

    def forward(self, h, cos, sin):
        h = h + self.attn(self.attn_norm(h), cos, sin)
        return h + self.moe(self.ffn_norm(h))


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.dim % cfg.n_heads == 0 and cfg.n_heads % cfg.n_kv_heads == 0
        assert cfg.head_dim % 2 == 0
        self.cfg = cfg
        self.tok_embd = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self._rope = None

    def init_weights(self, gen=None):
        std = 0.02
        out_std = std / math.sqrt(2 * self.cfg.n_layers)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                nn.init.ones_(p)
            elif name.endswith("wo.weight") or name.endswith("w_down"):
                nn.init.normal_(p, 0.0, out_std, generator=gen) if gen is not None else nn.init.normal_(p, 0.0, out_std)
            else:
                nn.init.normal_(p, 0.0, std, generator=gen) if gen is not None else nn.init.normal_(p, 0.0, std)

    def rope(self, device):
        if self._rope is None or self._rope[0].device != device:
            self._rope = rope_tables(self.cfg.head_dim, self.cfg.ctx, self.cfg.rope_base, device)
        return self._rope

    def forward(self, ids):
        """ids [B, T] (T <= ctx) -> logits [B, T, vocab] (fp32)."""
        cos, sin = self.rope(ids.device)
        if ids.shape[1] > cos.shape[0]:
            cos, sin = rope_tables(self.cfg.head_dim, ids.shape[1], self.cfg.rope_base, ids.device)
        h = self.tok_embd(ids)
        for b in self.blocks:
            h = b(h, cos, sin)
        return self.output(self.norm(h)).float()

    def aux_loss(self):
        vals = [b.moe.aux for b in self.blocks if b.moe.aux is not None]
        return sum(vals) / len(vals) if vals else 0.0

    def set_qat(self, mode):
        """None, "w4" (NVFP4 weights of attention and experts, the matrices the testbed
        server's NVFP4 backends quantise) or "w4a4" (and their inputs)."""
        for b in self.blocks:
            b.attn.qat = mode
            b.moe.qat = mode

    def set_moe_impl(self, impl):
        for b in self.blocks:
            b.moe.impl = impl


# ---------------------------------------------------------------------------------------
# GGUF tensor names <-> parameters.  GGUF lists dims fastest-first, so a [out, in] matrix
# is written as-is with ne = [in, out]; expert stacks [E, out, in] get ne = [in, out, E].

def gguf_tensors(model):
    """[(gguf name, fp32 tensor in PyTorch layout, is_norm)] in file order."""
    out = [("token_embd.weight", model.tok_embd.weight, False)]
    for i, b in enumerate(model.blocks):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", b.attn_norm.weight, True),
            (p + "attn_q.weight", b.attn.wq.weight, False),
            (p + "attn_k.weight", b.attn.wk.weight, False),
            (p + "attn_v.weight", b.attn.wv.weight, False),
            (p + "attn_output.weight", b.attn.wo.weight, False),
            (p + "ffn_norm.weight", b.ffn_norm.weight, True),
            (p + "ffn_gate_inp.weight", b.moe.router.weight, False),
            (p + "ffn_gate_exps.weight", b.moe.w_gate, False),
            (p + "ffn_up_exps.weight", b.moe.w_up, False),
            (p + "ffn_down_exps.weight", b.moe.w_down, False),
        ]
    out += [("output_norm.weight", model.norm.weight, True), ("output.weight", model.output.weight, False)]
    return [(n, t.detach().float().cpu(), norm) for n, t, norm in out]


def load_gguf_tensors(model, tensors):
    """tensors: {gguf name: fp32 tensor in PyTorch layout}; every parameter must be given."""
    names = {n: t for n, t, _ in gguf_tensors(model)}
    params = dict(
        [("token_embd.weight", model.tok_embd.weight), ("output_norm.weight", model.norm.weight),
         ("output.weight", model.output.weight)])
    for i, b in enumerate(model.blocks):
        p = "blk.%d." % i
        params.update({
            p + "attn_norm.weight": b.attn_norm.weight, p + "attn_q.weight": b.attn.wq.weight,
            p + "attn_k.weight": b.attn.wk.weight, p + "attn_v.weight": b.attn.wv.weight,
            p + "attn_output.weight": b.attn.wo.weight, p + "ffn_norm.weight": b.ffn_norm.weight,
            p + "ffn_gate_inp.weight": b.moe.router.weight, p + "ffn_gate_exps.weight": b.moe.w_gate,
            p + "ffn_up_exps.weight": b.moe.w_up, p + "ffn_down_exps.weight": b.moe.w_down,
        })
    assert set(params) == set(names)
    missing = set(params) - set(tensors)
    if missing:
        raise KeyError("missing tensors: %s" % sorted(missing))
    with torch.no_grad():
        for n, p in params.items():
            t = tensors[n]
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError("%s: shape %s, expected %s" % (n, tuple(t.shape), tuple(p.shape)))
            p.copy_(t)
