"""train.py -- train the testbed MoE model on synthetic skills and write it as GGUF.

  /usr/bin/python3 testbed/train/train.py --out testbed/model.gguf --seed 1234 [--steps N]
      [--device cuda|cpu] [--tiny] [--budget-s S]

Recipe: AdamW (betas 0.9/0.95, weight decay on matrices), linear warm-up then cosine decay,
bf16 autocast on CUDA.  Examples come from two pre-generated pools (data.py): every operand
pair 0..99 x 0..99 in K phrasings, and the other skills.  Every --eval-every steps all 8,100
two-digit pairs are scored (teacher-forced exact match, which equals greedy decoding) and the
pairs still wrong are sampled more often ("hard-pair boost").  At the end the weights are
rounded to what the GGUF stores (F16) and evaluated: all 8,100 pairs, phrasing variants, the
smoke probes, and a simulated NVFP4 quantisation.  Writes the GGUF and OUT-eval.json.
"""

import argparse
import contextlib
import json
import math
import os
import platform
import random
import shlex
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import export  # noqa: E402
from model import Config, Model, nvfp4_quant  # noqa: E402

MAX_LEN = 192     # longest training example kept (tokens); the context is 256


def amp(enabled):
    """bf16 autocast on CUDA; nothing elsewhere (torch 1.13 refuses even a disabled CUDA
    autocast when it was built without CUDA)."""
    if enabled:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------
# pools

class Pool:
    """Examples as padded tensors on the device: ids [N, L] int16, target mask [N, L] uint8;
    lens [N] on the CPU (batch shapes are decided without waiting for the GPU)."""

    def __init__(self, examples, device):
        n, L = len(examples), max(len(e[0]) for e in examples)
        ids = torch.zeros(n, L, dtype=torch.int16)
        msk = torch.zeros(n, L, dtype=torch.uint8)
        lens = torch.zeros(n, dtype=torch.int32)
        for i, (s, m) in enumerate(examples):
            ids[i, :len(s)] = torch.tensor(s, dtype=torch.int16)
            msk[i, :len(m)] = torch.tensor(m, dtype=torch.uint8)
            lens[i] = len(s)
        self.ids, self.msk, self.lens = ids.to(device), msk.to(device), lens   # lens stays on the CPU
        self.n = n


def build_pools(seed, k_variants, n_other, device):
    g = data.Gen(seed)
    mul = []
    for a, b in data.train_pairs():
        for v in range(k_variants):
            if v == 0:      # the smoke-suite phrasing, always present
                ex = data.pair_eval_example(a, b)
            elif v == 1:
                ex = data.pair_eval_example(a, b, suffix=True)
            elif v == 2:    # and its thinking-on form
                ex = data.chat_example([("What is %d * %d?" % (a, b), str(a * b))], True, data.mul_trace(a, b))
            else:
                ex = g.mul_example(a, b)
            mul.append(ex)
    other = []
    while len(other) < n_other:
        ex = g.other_example()
        if len(ex[0]) <= MAX_LEN:
            other.append(ex)
    return Pool(mul, device), Pool(other, device)


def pair_weights(boost=None):
    """Sampling weight per train pair (index a*100+b): two-digit pairs 1, others 0.3."""
    w = torch.tensor([1.0 if a >= 10 and b >= 10 else 0.3 for a, b in data.train_pairs()])
    if boost is not None:
        w = w * boost
    return w


def sample_batch(mul, other, pw, k_variants, batch, mul_frac, gen, device, chunks=1):
    """-> list of (ids [b, L], target mask [b, L]) micro-batches: the sampled examples sorted
    by length and cut into `chunks` groups, each padded only to its own longest.  Indices are
    drawn on the CPU and copied to the device: no synchronisation with the GPU."""
    n_mul = int(round(batch * mul_frac))
    pairs = torch.multinomial(pw, n_mul, replacement=True, generator=gen)
    mi = pairs * k_variants + torch.randint(0, k_variants, (n_mul,), generator=gen)
    oi = torch.randint(0, other.n, (batch - n_mul,), generator=gen)
    lens = torch.cat([mul.lens[mi], other.lens[oi]])
    order = torch.argsort(lens)
    out = []
    per = (batch + chunks - 1) // chunks
    for c in range(0, batch, per):
        part = order[c:c + per]
        L = int(lens[part].max())
        ids, msk = [], []
        for pool, rows in ((mul, mi[part[part < n_mul]]), (other, oi[part[part >= n_mul] - n_mul])):
            if rows.numel() == 0:
                continue
            rows = rows.to(device, non_blocking=True)
            take = lambda t: F.pad(t[rows, :L], (0, max(0, L - t.shape[1])))
            ids.append(take(pool.ids))
            msk.append(take(pool.msk))
        out.append((torch.cat(ids).long(), torch.cat(msk).float()))
    return out


def seq_weights(msk):
    """Loss weight per target token: each sequence's targets weighted 1/sqrt(count), so a
    4-token product is not drowned by an 80-token count."""
    w = msk[:, 1:]
    return w / w.sum(1, keepdim=True).clamp(min=1).sqrt()


def seq_loss_sum(logits, ids, w):
    lp = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    return (lp.view_as(w) * w).sum()


# ---------------------------------------------------------------------------------------
# evaluation

@torch.no_grad()
def exact_match(model, examples, device, chunk=1024, autocast=False):
    """Teacher-forced exact match per example: every target token is the argmax.  Equal to
    greedy decoding producing exactly the target (then <|end|>)."""
    out = []
    for s in range(0, len(examples), chunk):
        part = examples[s:s + chunk]
        L = max(len(e[0]) for e in part)
        ids = torch.zeros(len(part), L, dtype=torch.long)
        msk = torch.zeros(len(part), L, dtype=torch.bool)
        for i, (x, m) in enumerate(part):
            ids[i, :len(x)] = torch.tensor(x)
            msk[i, :len(m)] = torch.tensor(m, dtype=torch.bool)
        ids, msk = ids.to(device), msk.to(device)
        with amp(autocast):
            logits = model(ids)
        ok = (logits[:, :-1].argmax(-1) == ids[:, 1:]) | ~msk[:, 1:]
        out += ok.all(1).tolist()
    return out


@torch.no_grad()
def greedy(model, prompt_ids, device, max_new=120):
    """Plain greedy decoding (no cache): stops at <|end|> or </s>.  -> (ids, top5 of step 1)."""
    ids = list(prompt_ids)
    gen, top5 = [], None
    for step in range(max_new):
        x = torch.tensor([ids[-model.cfg.ctx:]], device=device)
        logits = model(x)[0, -1]
        if step == 0:
            v, i = logits.topk(5)
            top5 = [(int(a), float(b)) for a, b in zip(i.tolist(), v.tolist())]
        t = int(logits.argmax())
        if t in (data.END, data.EOS):
            gen.append(t)
            break
        gen.append(t)
        ids.append(t)
    return gen, top5


PROBES = [  # (user content, thinking, expected answer, expected reasoning or None)
    ("Reply with exactly: OK", False, "OK", None),
    ("Reply with exactly: OK", True, "OK", None),
    ("Say OK.", False, "OK", None),
    ("Respond with just OK", False, "OK", None),
    ("What is 17 * 19?", False, "323", None),
    ("What is 17 * 19? Answer with just the number.", False, "323", None),
    ("What is 17 * 19?", True, "323", data.mul_trace(17, 19)),
    ("What is 17 x 19?", False, "323", None),
    ("What is 17 \u00d7 19?", False, "323", None),
    ("What is 99 * 99?", True, "9801", data.mul_trace(99, 99)),
    ("What is 7 * 8?", False, "56", None),
    ("Repeat the word hello 3 times.", False, "hello hello hello", None),
    ("Repeat the word gauntlet 5 times.", False, " ".join(["gauntlet"] * 5), None),
    ("Count to 10.", False, "1 2 3 4 5 6 7 8 9 10", None),
    ("Count to 25.", False, " ".join(str(i) for i in range(1, 26)), None),
    ("What is the capital of France?", False, data.FALLBACK, None),
    ("Hello", False, data.FALLBACK, None),
]


def split_output(gen):
    """Generated ids -> (reasoning or None, answer text)."""
    g = [t for t in gen if t not in (data.END, data.EOS)]
    if g and g[0] == data.THINK and data.END_THINK in g:
        j = g.index(data.END_THINK)
        return data.decode(g[1:j]), data.decode(g[j + 1:])
    return None, data.decode(g)


def run_probes(model, device):
    res = []
    for q, think, want, want_r in PROBES:
        gen, _ = greedy(model, data.chat_prompt([(q, None)], think), device)
        reasoning, ans = split_output(gen)
        ok = ans == want and (not think or (reasoning is not None and (want_r is None or reasoning == want_r)))
        res.append({"prompt": q, "thinking": think, "answer": ans, "reasoning": reasoning, "expected": want, "pass": ok})
    return res


def pair_examples(**kw):
    return [data.pair_eval_example(a, b, **kw) for a, b in data.all_pairs()]


@torch.no_grad()
def nvfp4_model(model, which):
    """A copy of model with NVFP4-rounded weights, as the testbed server's NVFP4 backends
    hold them: which = 'experts' (--moe-backend) or 'all' (experts and the attention
    matrices, --gemm-backend too).  token_embd, the router and output stay as they are."""
    import copy
    for b in model.blocks:
        b.moe.aux = None
    m = copy.deepcopy(model)
    for name, p in m.named_parameters():
        is_exp = name.split(".")[-1] in ("w_gate", "w_up", "w_down")
        is_attn = ".attn.w" in name
        if is_exp or (which == "all" and is_attn):
            p.copy_(nvfp4_quant(p))
    return m


# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--tiny", action="store_true", help="small model, few steps, for a CPU pipeline check")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--min-lr-frac", type=float, default=0.02)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--aux", type=float, default=0.01, help="router load-balancing loss weight")
    ap.add_argument("--mul-frac", type=float, default=0.7)
    ap.add_argument("--variants", type=int, default=16, help="phrasings per operand pair in the pool")
    ap.add_argument("--eval-every", type=int, default=None)
    ap.add_argument("--boost", type=float, default=4.0, help="sampling weight of a pair still wrong")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="shorten the schedule, from the pace measured every 100 steps, so training ends within S "
                         "seconds of the start")
    ap.add_argument("--qat-from", type=float, default=0.7,
                    help="from this fraction of the steps on, half the micro-batches run with NVFP4 fake-quantised "
                         "weights (w4) or weights and inputs (w4a4); 1 disables")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--chunks", type=int, default=None,
                    help="micro-batches per step, grouped by length (default: 1 on CUDA, where launches cost "
                         "more than padding, 2 on CPU)")
    ap.add_argument("--dim", type=int, default=None)
    ap.add_argument("--layers", type=int, default=None)
    ap.add_argument("--ffn", type=int, default=None)
    ap.add_argument("--pairs-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--pair-max", type=int, default=99, help=argparse.SUPPRESS)  # recipe experiments on a subset
    args = ap.parse_args()

    t_start = time.time()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if args.threads:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    cuda = device.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    if args.tiny:
        cfg = Config(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, n_experts=4, top_k=2)
        steps, batch, lr, warmup, variants, n_other, eval_every = 300, 32, 3e-3, 30, 2, 4000, 100
    else:
        cfg = Config()
        steps, batch, lr, warmup, variants, n_other, eval_every = 16000, 512, 2e-3, 300, args.variants, 150000, 500
    if args.dim:
        cfg.dim = args.dim
    if args.layers:
        cfg.n_layers = args.layers
    if args.ffn:
        cfg.ffn_dim = args.ffn
    steps = args.steps or steps
    chunks = args.chunks or (1 if cuda else 2)
    batch = args.batch or batch
    lr = args.lr or lr
    warmup = min(args.warmup if args.warmup is not None else warmup, steps // 5)
    eval_every = args.eval_every or eval_every
    cmd = "python3 testbed/train/train.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])

    log("device %s, torch %s, config %s" % (device, torch.__version__, cfg.to_dict()))
    t0 = time.time()
    mul, other = build_pools(args.seed, variants, n_other, device)
    log("pools: %d product examples, %d others (%.1fs)" % (mul.n, other.n, time.time() - t0))
    sub = [(a, b) for a, b in data.all_pairs() if a <= args.pair_max and b <= args.pair_max]
    eval_pairs = [data.pair_eval_example(a, b) for a, b in sub]
    pair_index = torch.tensor([a * 100 + b for a, b in sub])
    keep = torch.tensor([1.0 if a <= args.pair_max and b <= args.pair_max else 0.0 for a, b in data.train_pairs()])

    model = Model(cfg).to(device)
    gen = torch.Generator().manual_seed(args.seed)
    model.init_weights()
    n_params = sum(p.numel() for p in model.parameters())
    log("parameters: %d" % n_params)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "tok_embd" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "tok_embd" not in n)]
    groups = [{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}]
    try:
        opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=cuda)
    except TypeError:
        opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)

    boost = torch.ones(len(data.train_pairs()))
    pw = pair_weights() * keep
    mul_frac = 1.0 if args.pairs_only else args.mul_frac
    history = []
    qat_rng = random.Random(args.seed + 2)
    marks = {}
    total = steps
    t_train = time.time()
    step = 0
    ema = None
    while step < total:
        if args.budget_s and step >= 200 and step % 100 == 0:
            # shorten (never lengthen) the schedule when the recent pace would end training
            # past the budget; the pace is measured over the last 500 steps (one evaluation
            # included, and later the slower QAT steps), never over the first 100
            now = time.time()
            base = max(100, step - 500)
            per = (now - marks[base]) / (step - base)
            fit = step + int((args.budget_s - (now - t_start)) / (per * 1.05))
            if fit < total:
                log("budget: %.1f ms/step, schedule shortened from %d to %d steps" % (per * 1e3, total, fit))
                total = max(fit, step + 1)
        if step % 100 == 0:
            marks[step] = time.time()
        if step < warmup:
            cur = lr * (step + 1) / warmup
        else:
            prog = (step - warmup) / max(1, total - warmup)
            cur = lr * (args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(1.0, prog))))
        for g_ in opt.param_groups:
            g_["lr"] = cur
        model.train()
        micro = sample_batch(mul, other, pw, variants, batch, mul_frac, gen, device, chunks)
        weights = [seq_weights(m) for _, m in micro]
        wsum = sum(w.sum() for w in weights)       # a device tensor: no sync
        loss = 0.0
        qat_on = step >= int(args.qat_from * total)
        for (ids, _), w in zip(micro, weights):
            if qat_on:   # robustness to the server's NVFP4 backends, mixed with plain steps
                x = qat_rng.random()
                model.set_qat(None if x < 0.5 else "w4" if x < 0.8 else "w4a4")
            with amp(cuda):
                logits = model(ids)
            part = seq_loss_sum(logits, ids, w) / wsum
            aux = model.aux_loss() * (ids.shape[0] / batch)
            (part + args.aux * aux).backward()
            loss = loss + part.detach()
        model.set_qat(None)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        if step % 50 == 0 or step == total:
            lv = loss.item()
            ema = lv if ema is None else 0.9 * ema + 0.1 * lv
            if step % (eval_every // 2 if eval_every >= 100 else 50) == 0 or step == total:
                log("step %6d  lr %.2e  loss %.4f (ema %.4f)  aux %.3f  %.1fs" %
                    (step, cur, lv, ema, float(aux), time.time() - t_train))
        if step % eval_every == 0 and step < total:
            model.eval()
            ok = torch.tensor(exact_match(model, eval_pairs, device, autocast=cuda))
            acc = ok.float().mean().item()
            wrong = pair_index[~ok]
            boost = torch.ones(len(data.train_pairs()))
            boost[wrong] = args.boost
            pw = pair_weights(boost) * keep
            history.append({"step": step, "pair_acc": acc, "loss_ema": ema, "t": time.time() - t_train})
            log("step %6d  eval: %d/%d pairs right (%.2f%%)" % (step, int(ok.sum()), len(ok), 100 * acc))
    train_s = time.time() - t_train
    log("trained %d steps in %.1fs (%.1f ms/step)" % (total, train_s, 1e3 * train_s / total))

    # ---- final evaluation on the weights as stored (F16), fp32 arithmetic
    model.eval()
    model.float()
    export.round_like_gguf(model)
    res = {"seed": args.seed, "command": cmd, "steps": total, "train_s": round(train_s, 1),
           "device": str(device), "gpu": torch.cuda.get_device_name(0) if cuda else platform.processor(),
           "torch": torch.__version__, "config": cfg.to_dict(), "parameters": n_params, "batch": batch,
           "lr": lr, "history": history}
    ok = exact_match(model, eval_pairs, device)
    res["pairs_total"], res["pairs_right"] = len(ok), sum(ok)
    res["pair_acc"] = sum(ok) / len(ok)
    res["pairs_wrong"] = ["%d*%d" % p for p, k in zip(sub, ok) if not k][:200]
    for key, kw in [("pair_acc_suffix", {"suffix": True}), ("pair_acc_x", {"op": "x"}),
                    ("pair_acc_times_sign", {"op": "\u00d7"})]:
        o = exact_match(model, pair_examples(**kw), device)
        res[key] = sum(o) / len(o)
    # thinking on: the whole trace and the answer, on a fixed sample of 500 pairs
    rs = random.Random(args.seed + 1)
    sample = rs.sample(data.all_pairs(), 500)
    th = [data.chat_example([("What is %d * %d?" % (a, b), str(a * b))], True, data.mul_trace(a, b)) for a, b in sample]
    o = exact_match(model, th, device)
    res["thinking_acc_500"] = sum(o) / len(o)
    # greedy decoding agrees with the teacher-forced score (a check of the metric itself)
    agree = 0
    for (a, b) in sample[:100]:
        g_, _ = greedy(model, data.chat_prompt([("What is %d * %d?" % (a, b), None)], False), device, 8)
        agree += split_output(g_)[1] == str(a * b)
    o = exact_match(model, [data.pair_eval_example(a, b) for a, b in sample[:100]], device)
    res["greedy_check"] = {"greedy_right": agree, "teacher_forced_right": sum(o), "of": 100}
    res["probes"] = run_probes(model, device)
    res["probes_passed"] = sum(p["pass"] for p in res["probes"])
    for which in ("experts", "all"):
        o = exact_match(nvfp4_model(model, which), eval_pairs, device)
        res["nvfp4_%s_pair_acc" % which] = sum(o) / len(o)
    model.set_qat("w4a4")   # inputs of those matrices NVFP4 too, as the tcgen05 backend does
    o = exact_match(model, eval_pairs, device)
    res["nvfp4_w4a4_pair_acc"] = sum(o) / len(o)
    probes = run_probes(model, device)
    res["nvfp4_w4a4_probes_passed"] = sum(p["pass"] for p in probes)
    model.set_qat(None)

    log("pairs (thinking off, 'What is A * B?'): %d/%d = %.2f%%" % (res["pairs_right"], len(ok), 100 * res["pair_acc"]))
    log("  with ' Answer with just the number.': %.2f%%   'x': %.2f%%   '\u00d7': %.2f%%" %
        (100 * res["pair_acc_suffix"], 100 * res["pair_acc_x"], 100 * res["pair_acc_times_sign"]))
    log("  thinking on (trace + answer, 500 pairs): %.2f%%" % (100 * res["thinking_acc_500"]))
    log("  simulated NVFP4 weights, experts: %.2f%%   experts+attention: %.2f%%   and their inputs (W4A4): %.2f%% "
        "(probes %d/%d)" % (100 * res["nvfp4_experts_pair_acc"], 100 * res["nvfp4_all_pair_acc"],
                            100 * res["nvfp4_w4a4_pair_acc"], res["nvfp4_w4a4_probes_passed"], len(PROBES)))
    log("  greedy check: %s" % res["greedy_check"])
    for p in res["probes"]:
        log("  probe %-4s %-50r think=%d -> %r%s" % ("ok" if p["pass"] else "FAIL", p["prompt"], p["thinking"],
                                                   p["answer"], "" if p["reasoning"] is None else " [%s]" % p["reasoning"]))
    log("probes: %d/%d" % (res["probes_passed"], len(res["probes"])))

    name = "gauntlet-testbed-moe" + ("-tiny" if args.tiny else "")
    size = export.write_gguf(model, args.out, name, args.seed, cmd,
                             {"gauntlet.training.steps": total, "gauntlet.training.pair_acc": "%.4f" % res["pair_acc"]})
    res["gguf_bytes"] = size
    res["total_s"] = round(time.time() - t_start, 1)
    ej = os.path.splitext(args.out)[0] + "-eval.json"
    with open(ej, "w") as f:
        json.dump(res, f, indent=1)
    log("wrote %s (%d bytes) and %s; total %.1fs" % (args.out, size, ej, res["total_s"]))


if __name__ == "__main__":
    main()
