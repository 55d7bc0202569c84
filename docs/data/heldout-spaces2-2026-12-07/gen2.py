#!/usr/bin/env python3
"""Held-out search spaces, second generator (written without seeing the search).

Draws spaces for gauntlet-search-bench --space-file: one JSON object a line.
Four families of real sweeps (SGLang switchboard, vLLM on a pre-Ampere card with an
AWQ model, llama.cpp partial offload, vLLM MoE on Blackwell); each space draws some
of the patterns listed in README.md.  Python 3 standard library only; every draw
comes from random.Random seeded with a string, so the output depends on the
arguments only.

    gen2.py --seed 1 --spaces 200 [--min-cells 200] [--max-cells 2000] > spaces.jsonl
    gen2.py --seed 1 --spaces 200 --space 017-vllm-awq     (one space, redrawn)
    gen2.py --seed 1 --spaces 200 --summary                (one line a space)
"""
import argparse
import itertools
import json
import math
import random
import sys

FAMILIES = ["sglang", "vllm-awq", "llamacpp", "vllm-moe"]

# Pattern tags, and the words README.md uses for them.
PATTERN_NAMES = {
    "many-axes": "6-9 axes",
    "switches": ">= 2 on/off switch axes",
    "inert": "an axis whose values change nothing or almost nothing (twin cells)",
    "triple": "a three-way interaction no pair shows",
    "cliff": "best at the edge of a memory cliff",
    "conditional": "an axis that matters only under another axis's value",
    "alias-line": "a failure line naming a value by another spelling",
    "innocent-line": "a failure line naming a value that is not at fault",
    "nameless-line": "a failure line naming no value",
    "pair-by-value": "a failure that depends on which of two values is present",
    "late-crash": "crashes after a long load",
    "parse-crash": "crashes at argument parsing (cost nearly nothing)",
    "hangs": "many hangs (>= 8% of cells time out)",
    "small-region": "5-15% of cells serve",
    "narrow-peak": "most serve, best is a narrow peak",
    "noisy": "noise >= 5%",
    "flaky": "flaky host faults",
    "no-engine": "engine omitted (lines read through axis words)",
}


def lu(rng, a, b):
    """Log-uniform in [a, b]."""
    return math.exp(rng.uniform(math.log(a), math.log(b)))


class Space:
    """Axes plus a function from a configuration to a cell."""

    def __init__(self, engine):
        self.engine = engine
        self.axes = []          # dicts: name, flag (or None), values, words
        self.tags = set()
        self.describe = []

    def axis(self, name, flag, values, words):
        a = {"name": name, "values": list(values), "words": list(words)}
        if flag:
            a["flag"] = flag
        self.axes.append(a)

    def has(self, name):
        return any(a["name"] == name for a in self.axes)


def pick_values(rng, first, rest, lo, hi):
    """Value 0 plus between lo and hi of the rest, in their written order."""
    k = rng.randint(min(lo, len(rest)), min(hi, len(rest)))
    keep = sorted(rng.sample(range(len(rest)), k))
    return [first] + [rest[i] for i in keep]


def product(axes):
    n = 1
    for a in axes:
        n *= len(a["values"])
    return n


# --------------------------------------------------------------------------------------
# SGLang on Hopper: many switches, a memory cliff, conditional graph and draft axes.
# --------------------------------------------------------------------------------------

def draw_sglang(rng, sp):
    gpu_name, cap = rng.choice([("H100 80GB", 80.0), ("H200 141GB", 141.0)])
    model, weights_gb, moe = rng.choice([
        ("Qwen3-30B-A3B", 61.0, True), ("Llama-3.1-70B-Instruct-FP8", 72.0, False),
        ("Qwen3-32B", 66.0, False), ("gpt-oss-120b", 65.0, True)])
    tp = 1
    while weights_gb / tp > cap * 0.62:
        tp *= 2
    dp_mode = "none"
    if moe and tp >= 2 and rng.random() < 0.5:
        dp_mode = "valid"        # base args carry --dp tp: --enable-dp-attention is usable
    elif rng.random() < 0.6:
        dp_mode = "parse"        # no --dp in the base args: the switch fails at once
    w = weights_gb / tp / cap   # weights as a share of one card
    conc = rng.choice([8, 32, 64, 128])
    sp.describe.append(f"sglang {model} tp{tp} on {gpu_name}, bench at concurrency {conc}")

    cand = []
    cand.append(("attn", "--attention-backend",
                 pick_values(rng, "auto", ["fa3", "flashinfer", "triton", "flex_attention",
                                           "torch_native", "trtllm_mha"], 2, 5),
                 ["attention backend", "attention_backend"], True))
    cand.append(("compile", None, ["off", "on"],
                 ["--enable-torch-compile", "torch compile", "enable_torch_compile", "torch.compile"], True))
    cand.append(("nograph", None, ["off", "on"],
                 ["--disable-cuda-graph", "disable cuda graph", "disable_cuda_graph"], True))
    cand.append(("graph_bs", "--cuda-graph-max-bs",
                 pick_values(rng, "default", ["8", "16", "32", "64", "128", "256", "512"], 3, 5),
                 ["cuda graph max bs", "cuda_graph_max_bs", "Capture cuda graph bs"], True))
    mem_all = ["0.70", "0.78", "0.82", "0.85", "0.88", "0.90", "0.92", "0.94", "0.96"]
    cand.append(("mem", "--mem-fraction-static", pick_values(rng, "default", mem_all, 4, 6),
                 ["mem fraction static", "mem_fraction_static"], True))
    cand.append(("chunk", "--chunked-prefill-size",
                 pick_values(rng, "default", ["2048", "4096", "8192", "16384"], 2, 4),
                 ["chunked prefill size", "chunked_prefill_size"], False))
    cand.append(("sched", "--schedule-policy", pick_values(rng, "fcfs", ["lpm", "random", "dfs-weight"], 1, 3),
                 ["schedule policy", "schedule_policy"], False))
    cand.append(("sampling", "--sampling-backend", ["flashinfer", "pytorch"],
                 ["sampling backend", "sampling_backend"], False))
    cand.append(("kv", "--kv-cache-dtype", pick_values(rng, "auto", ["fp8_e4m3", "fp8_e5m2", "bf16"], 1, 3),
                 ["kv cache dtype", "kv_cache_dtype"], False))
    if dp_mode != "none":
        cand.append(("dp_attn", None, ["off", "on"],
                     ["--enable-dp-attention", "dp attention", "enable_dp_attention"], False))
    cand.append(("spec", "--speculative-algorithm", ["none", "EAGLE3"],
                 ["speculative algorithm", "speculative_algorithm"], False))
    cand.append(("draft", "--speculative-num-draft-tokens",
                 pick_values(rng, "default", ["2", "3", "4", "6", "8", "16"], 2, 4),
                 ["speculative num draft tokens", "speculative_num_draft_tokens"], False))
    return cand, dict(cap=cap, w=w, tp=tp, dp_mode=dp_mode, conc=conc, moe=moe)


def eval_sglang(rng_fixed, P, cfg):
    """Return (log speed, failure or None, extra cell keys)."""
    g = cfg.get
    attn = g("attn", "auto")
    compile_on = g("compile", "off") == "on"
    graphs = g("nograph", "off") == "off"
    spec = g("spec", "none") != "none"
    dp = g("dp_attn", "off") == "on"
    kv = g("kv", "auto")
    extra = {}
    load = P["load"]
    if compile_on and graphs:
        load += P["compile_load"]
    if spec:
        load += 120
    # --- argument parsing
    if dp and P["dp_mode"] == "parse":
        return 0.0, ("crash/config", "AssertionError: Please set a dp-size > 1. You can use 1 < dp-size <= tp-size "), {"load": 25}
    # --- memory: the static pool plus what lives outside it
    f = P["mem_default"] if g("mem", "default") == "default" else float(g("mem"))
    gbs_raw = g("graph_bs", "default")
    gbs = P["gbs_default"] if gbs_raw == "default" else int(gbs_raw)
    outside = P["base_out"]
    if graphs:
        outside += P["graph_cost"] * gbs / 512.0
        if compile_on:
            outside += 0.012
    if spec:
        outside += P["spec_out"]
    if g("chunk", "default") == "16384":
        outside += 0.006
    if dp:
        outside += 0.015
    kv_share = f - P["w"] - (P["draft_w"] if spec else 0.0)
    if kv_share < P["kv_min"]:
        return 0.0, ("crash/oom", "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."), {"load": int(load * 0.5)}
    if f + outside > 0.985:
        if graphs and P["oom_line"] == "graph":
            line = "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.12 GiB. GPU 0 has a total capacity of 79.19 GiB of which 886.00 MiB is free."
        else:
            line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.25 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.41 GiB is free."
        return 0.0, ("crash/oom", line), {"load": int(load)}
    # --- kernels that do not exist here
    if attn == "trtllm_mha":
        return 0.0, ("crash/arch", "ValueError: TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100)."), {"load": int(load * 0.7)}
    if attn == "flex_attention" and compile_on and graphs:
        if P["flex_compile"] == "crash":
            return 0.0, ("crash/exit", "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: out of resource: shared memory, Required: 262144, Hardware limit: 232448"), {"load": int(load)}
        return 0.0, ("timeout/startup", "Capture cuda graph begin. This can take up to several minutes."), {}
    if kv == "fp8_e5m2" and attn in P["e5m2_bad"]:
        return 0.0, ("garbage/repeat", "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"), {"load": int(load)}
    if spec and attn in P["spec_hang_attn"]:
        return 0.0, ("timeout/request", ""), {"load": int(load)}
    if dp and spec and P["dp_spec_hang"]:
        return 0.0, ("timeout/request", "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"), {"load": int(load)}
    # --- speed
    x = P["attn_eff"].get(attn, 0.0)
    if not graphs:
        x += P["nograph_eff"]
    else:
        cap_bs = min(gbs, P["conc"])
        x -= P["gbs_slope"] * max(0.0, math.log2(P["conc"] / cap_bs))
        if compile_on:
            x += P["compile_eff"]
    x += P["mem_slope"] * math.log(max(kv_share * (2.0 if kv.startswith("fp8") else 1.0), 1e-3) / P["kv_ref"])
    if kv.startswith("fp8"):
        x += P["fp8_compute"]
    if spec:
        d_raw = g("draft", "default")
        d = P["draft_default"] if d_raw == "default" else int(d_raw)
        x += P["spec_gain"] - P["draft_curv"] * (math.log2(d / P["draft_best"])) ** 2
    if dp:
        x += P["dp_gain"]
    x += P["inert"].get(("sched", g("sched", "fcfs")), 0.0)
    x += P["inert"].get(("chunk", g("chunk", "default")), 0.0)
    x += P["inert"].get(("sampling", g("sampling", "flashinfer")), 0.0)
    if compile_on and graphs:
        extra["load"] = int(load)
        extra["noise"] = P["noise"] * 1.6
    if dp and P["flaky"]:
        extra.update({"flaky": P["flaky"], "flaky_fail": "crash/nccl",
                      "flaky_line": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled cuda error"})
    return x, None, extra


def params_sglang(rng, info, sp):
    P = dict(info)
    P["load"] = rng.choice([420, 600, 900])
    P["compile_load"] = rng.choice([300, 600, 900])
    P["mem_default"] = rng.choice([0.83, 0.86, 0.87, 0.89])
    P["gbs_default"] = rng.choice([160, 256, 512]) if info["cap"] > 100 else rng.choice([128, 160, 256])
    P["base_out"] = rng.uniform(0.015, 0.03)
    P["graph_cost"] = rng.uniform(0.02, 0.05)
    P["spec_out"] = rng.uniform(0.01, 0.025)
    P["draft_w"] = rng.uniform(0.01, 0.03)
    P["kv_min"] = rng.uniform(0.05, 0.14)
    P["kv_ref"] = 0.2
    P["oom_line"] = rng.choice(["graph", "torch"])
    P["flex_compile"] = rng.choice(["crash", "hang"])
    P["e5m2_bad"] = rng.sample(["auto", "fa3", "flashinfer", "triton"], rng.randint(0, 2))
    P["dp_spec_hang"] = rng.random() < 0.7
    P["spec_hang_attn"] = rng.sample(["auto", "fa3", "flashinfer", "triton"], rng.randint(1, 2)) if rng.random() < 0.4 else []
    P["attn_eff"] = {"auto": 0.0, "fa3": 0.0, "flashinfer": rng.uniform(-0.06, 0.05),
                     "triton": rng.uniform(-0.12, -0.02), "flex_attention": rng.uniform(-0.35, -0.15),
                     "torch_native": rng.uniform(-1.2, -0.6)}
    P["nograph_eff"] = -rng.uniform(0.12, 0.35)
    P["gbs_slope"] = rng.uniform(0.02, 0.08)
    P["compile_eff"] = rng.uniform(0.02, 0.10)
    P["mem_slope"] = rng.uniform(0.10, 0.30)
    P["fp8_compute"] = -rng.uniform(0.0, 0.05)
    P["spec_gain"] = rng.uniform(0.15, 0.45) if info["conc"] <= 32 else rng.uniform(-0.15, 0.1)
    P["draft_best"] = rng.choice([2, 3, 4, 6])
    P["draft_default"] = 4
    P["draft_curv"] = rng.uniform(0.04, 0.15)
    P["dp_gain"] = rng.uniform(0.05, 0.3) if info["dp_mode"] == "valid" else 0.0
    P["flaky"] = rng.choice([0.0, 0.05, 0.15, 0.3]) if info["tp"] > 1 else 0.0
    P["inert"] = {}
    for name, vals in (("sched", ["fcfs", "lpm", "random", "dfs-weight"]),
                       ("chunk", ["default", "2048", "4096", "8192", "16384"]),
                       ("sampling", ["flashinfer", "pytorch"])):
        exact = rng.random() < 0.5
        for v in vals[1:]:
            P["inert"][(name, v)] = 0.0 if exact else rng.uniform(-0.006, 0.006)
    return P


def triple_sglang(rng, sp, P):
    options = [("attn", "flashinfer"), ("compile", "on"), ("spec", "EAGLE3"), ("kv", "fp8_e4m3"),
               ("chunk", "4096"), ("sampling", "pytorch"), ("sched", "lpm")]
    present = [(a, v) for a, v in options if any(x["name"] == a and v in x["values"] for x in sp.axes)]
    if len(present) >= 3 and rng.random() < 0.6:
        P["triple"] = rng.sample(present, 3)
        P["triple_gain"] = rng.uniform(0.08, 0.22)
        sp.tags.add("triple")
        sp.describe.append("triple " + "+".join(f"{a}={v}" for a, v in P["triple"]))
    else:
        P["triple"] = None


# --------------------------------------------------------------------------------------
# vLLM, pre-Ampere card, AWQ checkpoint: a small serving region.
# --------------------------------------------------------------------------------------

def draw_vllm_awq(rng, sp):
    gpu_name, cap, sm = rng.choice([("Tesla T4", 15.0, 75), ("Quadro RTX 6000", 24.0, 75),
                                    ("Tesla V100-SXM2-32GB", 32.0, 70)])
    model, wgb, heads_ok, native = rng.choice([
        ("Qwen2.5-7B-Instruct-AWQ", 5.6, True, 32768), ("Mistral-7B-Instruct-v0.2-AWQ", 4.2, True, 32768),
        ("Llama-3.1-8B-Instruct-AWQ", 5.8, True, 131072), ("Qwen2.5-14B-Instruct-AWQ", 9.9, True, 32768)])
    if wgb > cap * 0.7:
        model, wgb, native = "Qwen2.5-7B-Instruct-AWQ", 5.6, 32768
    sp.describe.append(f"vllm {model} on {gpu_name} (sm{sm}), max_model_len default {native}")
    cand = []
    cand.append(("dtype", "--dtype", pick_values(rng, "auto", ["bfloat16", "float16", "half", "float32"], 3, 4),
                 ["dtype"], True))
    cand.append(("quant", "--quantization", pick_values(rng, "default", ["awq", "awq_marlin"], 1, 2),
                 ["quantization"], False))
    cand.append(("mml", "--max-model-len",
                 pick_values(rng, "default", ["1024", "2048", "4096", "8192", "16384"], 3, 5),
                 ["max model len", "max_model_len", "max seq len"], True))
    cand.append(("gmu", "--gpu-memory-utilization",
                 pick_values(rng, "0.9", ["0.6", "0.7", "0.8", "0.85", "0.95", "0.98"], 3, 5),
                 ["gpu memory utilization", "gpu_memory_utilization"], True))
    cand.append(("eager", None, ["off", "on"], ["--enforce-eager", "enforce eager", "enforce_eager"], False))
    cand.append(("kv", "--kv-cache-dtype", pick_values(rng, "auto", ["fp8", "fp8_e5m2", "fp8_e4m3"], 1, 3),
                 ["kv cache dtype", "kv_cache_dtype"], False))
    cand.append(("seqs", "--max-num-seqs", pick_values(rng, "default", ["8", "16", "32", "64", "128"], 2, 4),
                 ["max num seqs", "max_num_seqs"], False))
    cand.append(("mnbt", "--max-num-batched-tokens", pick_values(rng, "default", ["512", "1024", "2048", "4096", "8192"], 2, 4),
                 ["max num batched tokens", "max_num_batched_tokens"], False))
    cand.append(("nochunk", None, ["off", "on"],
                 ["--no-enable-chunked-prefill", "chunked prefill", "enable_chunked_prefill"], False))
    cand.append(("attn", "--attention-backend", pick_values(rng, "auto", ["TRITON_ATTN", "FLASHINFER", "FLEX_ATTENTION", "FLASH_ATTN"], 2, 4),
                 ["attention backend", "attention_backend"], False))
    cand.append(("block", "--block-size", pick_values(rng, "16", ["8", "32"], 1, 2), ["block size", "block_size"], False))
    cand.append(("prefix", None, ["default", "off"], ["--no-enable-prefix-caching", "prefix caching", "enable_prefix_caching"], False))
    return cand, dict(cap=cap, sm=sm, wgb=wgb, native=native, gpu=gpu_name)


def params_vllm_awq(rng, info, sp):
    P = dict(info)
    P["load"] = rng.choice([150, 240, 360])
    P["bench_len"] = 1024 + 256
    P["kv_bytes_tok"] = rng.choice([0.000055, 0.000131, 0.000188])  # GiB a token, fp16 KV
    P["graph_gb"] = rng.uniform(0.4, 1.2)
    P["act_gb"] = rng.uniform(0.8, 1.6)
    P["other_gb"] = rng.uniform(0.3, 0.9)   # used by the driver and other processes
    P["eager_eff"] = -rng.uniform(0.12, 0.35)
    P["seq_best"] = rng.choice([16, 32, 64])
    P["seq_curv"] = rng.uniform(0.02, 0.08)
    P["attn_eff"] = {"auto": 0.0, "TRITON_ATTN": 0.0, "FLASHINFER": rng.uniform(-0.05, 0.08),
                     "FLEX_ATTENTION": rng.uniform(-0.3, -0.1)}
    P["fp8_eff"] = -rng.uniform(0.02, 0.08)
    P["e4m3_fail"] = rng.random() < 0.7
    P["dtype_line"] = rng.choice(["quant", "quant", "bf16"])
    P["auto_dtype"] = rng.choice(["float16", "bfloat16", "bfloat16"])   # the checkpoint's torch_dtype
    P["inert"] = {("block", "8"): rng.uniform(-0.01, 0.0), ("block", "32"): 0.0,
                  ("prefix", "off"): 0.0}
    P["chunk_eff"] = rng.uniform(-0.03, 0.03)
    P["flaky"] = rng.choice([0.0, 0.0, 0.03, 0.1])
    P["triple"] = None
    return P


def eval_vllm_awq(rng_fixed, P, cfg):
    g = cfg.get
    dtype = g("dtype", "auto")
    quant = g("quant", "default")
    extra = {}
    load = P["load"]
    eager = g("eager", "off") == "on"
    if not eager:
        load += 60
    # --- argument / config checks, in vLLM's order
    mml = P["native"] if g("mml", "default") == "default" else int(g("mml"))
    nochunk = g("nochunk", "off") == "on"
    mnbt_raw = g("mnbt", "default")
    if nochunk:
        mnbt = max(mml, 2048) if mnbt_raw == "default" else int(mnbt_raw)
        if mnbt < mml:
            return 0.0, ("crash/config", f"ValueError: max_num_batched_tokens ({mnbt}) is smaller than max_model_len ({mml}). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."), {"load": 20}
    if quant == "awq_marlin":
        return 0.0, ("crash/config", f"ValueError: The quantization method awq_marlin is not supported for the current GPU. Minimum capability: 80. Current capability: {P['sm']}."), {"load": 25}
    if dtype == "bfloat16" or (dtype == "auto" and P["auto_dtype"] == "bfloat16"):
        if P["dtype_line"] == "quant":
            line = "ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"
        else:
            line = (f"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {P['gpu']} GPU has compute capability "
                    f"{P['sm'] // 10}.{P['sm'] % 10}. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.")
        return 0.0, ("crash/config", line), {"load": 30}
    if dtype == "float32":
        return 0.0, ("crash/config", "ValueError: torch.float32 is not supported for quantization method awq. Supported dtypes: [torch.float16]"), {"load": 30}
    attn = g("attn", "auto")
    kv = g("kv", "auto")
    if attn == "FLASH_ATTN":
        return 0.0, ("crash/arch", "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: ['compute capability not supported']"), {"load": 40}
    if kv == "fp8_e4m3" and P["e4m3_fail"]:
        b = attn if attn != "auto" else "TRITON_ATTN"
        return 0.0, ("crash/config", f"ValueError: Selected backend AttentionBackendEnum.{b} is not valid for this configuration. Reason: ['kv_cache_dtype not supported']"), {"load": 40}
    # --- memory at start
    gmu = float(g("gmu", "0.9"))
    if gmu * P["cap"] > P["cap"] - P["other_gb"]:
        have = P["cap"] - P["other_gb"]
        return 0.0, ("crash/oom", f"ValueError: Free memory on device cuda:0 ({have:.2f}/{P['cap'] - 0.42:.2f} GiB) on startup is less than desired GPU memory utilization ({gmu}, {gmu * (P['cap'] - 0.42):.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."), {"load": 15}
    kv_gb = gmu * P["cap"] - P["wgb"] - P["act_gb"] - (0.0 if eager else P["graph_gb"])
    if kv_gb <= 0.05:
        return 0.0, ("crash/oom", "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."), {"load": int(load * 0.8)}
    per_tok = P["kv_bytes_tok"] * (0.5 if kv.startswith("fp8") else 1.0)
    tokens = int(kv_gb / per_tok) // 16 * 16
    if tokens < mml:
        return 0.0, ("crash/oom", f"ValueError: The model's max seq len ({mml}) is larger than the maximum number of tokens that can be stored in KV cache ({tokens}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."), {"load": int(load * 0.9)}
    if mml < P["bench_len"]:
        return 0.0, ("overload/context", f"This model's maximum context length is {mml} tokens. However, you requested {P['bench_len']} tokens (1024 in the messages, 256 in the completion). Please reduce the length of the messages or completion."), {"load": load}
    # --- speed
    x = 0.0
    if eager:
        x += P["eager_eff"]
    seqs = 256 if g("seqs", "default") == "default" else int(g("seqs"))
    fit = min(seqs, tokens // P["bench_len"])
    x -= P["seq_curv"] * math.log2(max(fit, 1) / P["seq_best"]) ** 2
    x += P["attn_eff"].get(attn, 0.0)
    if kv.startswith("fp8"):
        x += P["fp8_eff"]
    if nochunk:
        x += P["chunk_eff"]
    x += P["inert"].get(("block", g("block", "16")), 0.0)
    x += P["inert"].get(("prefix", g("prefix", "default")), 0.0)
    if P["flaky"]:
        extra.update({"flaky": P["flaky"], "flaky_fail": "crash/cuda",
                      "flaky_line": "RuntimeError: CUDA error: an illegal memory access was encountered"})
    extra["load"] = load
    return x, None, extra


# --------------------------------------------------------------------------------------
# llama.cpp, partial offload of a GGUF model that does not fit one card.
# --------------------------------------------------------------------------------------

def draw_llamacpp(rng, sp):
    gpu_name, cap = rng.choice([("RTX 4090 24GB", 24.0), ("RTX 3090 24GB", 24.0), ("L4 24GB", 24.0), ("RTX 4060 Ti 16GB", 16.0)])
    model, layers, wgb, head = rng.choice([
        ("Qwen2.5-32B-Instruct-Q4_K_M.gguf", 64, 19.9, 128), ("Llama-3.3-70B-Instruct-Q2_K.gguf", 80, 26.4, 128),
        ("gemma-2-27b-it-Q4_K_M.gguf", 46, 16.6, 128), ("phi-2.Q8_0.gguf", 32, 3.0, 80),
        ("Mixtral-8x7B-Instruct-v0.1.Q4_K_M.gguf", 32, 26.4, 128)])
    cores = rng.choice([8, 16, 24])
    sp.describe.append(f"llama.cpp {model} on {gpu_name}, host {cores} cores, --fit off")
    cand = []
    ngl_vals = sorted(set([max(1, int(layers * q)) for q in (0.25, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)] + [layers]))
    ngl_vals = [str(v) for v in ngl_vals]
    cand.append(("ngl", "-ngl", pick_values(rng, "auto", ["0"] + ngl_vals + ["all"], 4, 7),
                 ["n-gpu-layers", "n_gpu_layers", "offload"], True))
    cand.append(("fa", "-fa", pick_values(rng, "auto", ["on", "off"], 2, 2), ["flash-attn", "flash_attn"], True))
    cand.append(("ctk", "-ctk", pick_values(rng, "f16", ["q8_0", "q4_0", "bf16", "q5_1"], 2, 3),
                 ["cache-type-k", "K cache type"], True))
    cand.append(("ctv", "-ctv", pick_values(rng, "f16", ["q8_0", "q4_0", "bf16", "q5_1"], 2, 3),
                 ["cache-type-v", "V cache type"], True))
    cand.append(("ub", "-ub", pick_values(rng, "512", ["128", "256", "1024", "2048"], 2, 3),
                 ["ubatch-size", "n_ubatch"], False))
    cand.append(("b", "-b", pick_values(rng, "2048", ["256", "512", "1024", "4096"], 1, 3),
                 ["batch-size", "n_batch"], False))
    cand.append(("np", "-np", pick_values(rng, "auto", ["1", "2", "4", "8"], 2, 3), ["parallel", "n_parallel", "slots"], False))
    cand.append(("c", "-c", pick_values(rng, "default", ["4096", "8192", "16384", "32768"], 2, 3), ["ctx-size", "n_ctx"], False))
    cand.append(("t", "-t", pick_values(rng, "default", ["4", "8", "12", "16", "24"], 2, 4), ["threads", "n_threads"], False))
    cand.append(("mmq", None, ["unset", "1"], ["GGML_CUDA_FORCE_MMQ", "force mmq"], False))
    return cand, dict(cap=cap, layers=layers, wgb=wgb, head=head, cores=cores, model=model)


def params_llamacpp(rng, info, sp):
    P = dict(info)
    P["load"] = rng.choice([20, 45, 90])
    P["ctx_default"] = rng.choice([4096, 8192])
    P["kv_gb_4k"] = info["wgb"] * rng.uniform(0.03, 0.07)    # f16 K+V at 4096 tokens
    P["compute_gb"] = rng.uniform(0.5, 1.2)
    P["auto_ngl"] = max(1, int(info["layers"] * rng.uniform(0.4, 0.7)))
    P["cpu_t_best"] = rng.choice([c for c in (4, 8, 12, 16, 24) if c <= info["cores"]])
    P["t_default"] = info["cores"] // 2
    P["fa_eff"] = rng.uniform(0.0, 0.08)
    P["ub_eff"] = {"128": -rng.uniform(0.02, 0.08), "256": -rng.uniform(0.0, 0.03), "512": 0.0,
                   "1024": rng.uniform(0.0, 0.03), "2048": rng.uniform(-0.01, 0.04)}
    P["mmq_eff"] = rng.uniform(-0.06, 0.06)
    P["np_default"] = 4
    P["bench_len"] = 1024 + 256
    P["qcache_eff"] = {"f16": 0.0, "bf16": rng.uniform(-0.04, 0.0), "q8_0": -rng.uniform(0.0, 0.03),
                       "q4_0": -rng.uniform(0.02, 0.08), "q5_1": -rng.uniform(0.01, 0.06)}
    P["cpu_noise"] = rng.uniform(0.04, 0.08)
    P["triple"] = None
    return P


def eval_llamacpp(rng_fixed, P, cfg):
    g = cfg.get
    L = P["layers"]
    ngl_raw = g("ngl", "auto")
    ngl = P["auto_ngl"] if ngl_raw == "auto" else (L if ngl_raw == "all" else min(int(ngl_raw), L))
    fa_raw = g("fa", "auto")
    fa = fa_raw != "off"           # auto is on under CUDA
    ctk, ctv = g("ctk", "f16"), g("ctv", "f16")
    b = int(g("b", "2048"))
    ub = min(int(g("ub", "512")), b)   # llama.cpp clamps n_ubatch to n_batch
    np_raw = g("np", "auto")
    npar = P["np_default"] if np_raw == "auto" else int(np_raw)
    ctx = P["ctx_default"] if g("c", "default") == "default" else int(g("c"))
    load = P["load"] + int(P["wgb"] * 3)
    extra = {}
    qk, qv = ctk.startswith("q"), ctv.startswith("q")
    # --- context creation checks
    if qk and P["head"] % 32:
        return 0.0, ("crash/config", f"llama_init_from_model: K cache type {ctk} with block size 32 does not divide n_embd_head_k={P['head']}"), {"load": load}
    if qv and P["head"] % 32:
        return 0.0, ("crash/config", f"llama_init_from_model: V cache type {ctv} with block size 32 does not divide n_embd_head_v={P['head']}"), {"load": load}
    if qv and not fa:
        return 0.0, ("crash/config", "llama_init_from_model: quantized V cache requires flash_attn to be enabled"), {"load": load}
    if qk and not fa and ctk == "q8_0" and P.get("fa_off_assert", True):
        return 0.0, ("crash/assert", "ggml/src/ggml.c:1787: GGML_ASSERT(view_src == NULL || data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src)) failed"), {"load": load}
    # --- memory on the card
    def kv_factor(t):
        return {"f16": 1.0, "bf16": 1.0, "q8_0": 0.53, "q5_1": 0.375, "q4_0": 0.28}[t]
    kv_gb = P["kv_gb_4k"] * ctx / 4096.0 * (kv_factor(ctk) + kv_factor(ctv)) / 2.0 * ngl / L
    compute = P["compute_gb"] * ub / 512.0 * (0.6 if fa else 1.0) * (1 + 0.15 * math.log2(max(npar, 1)))
    need = P["wgb"] * ngl / L + kv_gb + compute + 0.4
    if ngl > 0 and need > P["cap"]:
        if P["wgb"] * ngl / L + 0.4 > P["cap"]:
            line = f"ggml_backend_cuda_buffer_type_alloc_buffer: allocating {P['wgb'] * ngl / L * 1024:.2f} MiB on device 0: cudaMalloc failed: out of memory"
        elif kv_gb > compute:
            line = "llama_kv_cache_unified: failed to allocate buffer for kv cache"
        else:
            line = f"ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size {int(compute * 1024 * 1024 * 1024)}"
        return 0.0, ("crash/oom", line), {"load": int(load * 0.8)}
    # --- the bench's requests against one slot's context
    per_slot = ctx if np_raw == "auto" else ctx // npar
    if per_slot < P["bench_len"]:
        return 0.0, ("overload/context", "the request exceeds the available context size, try increasing it"), {"load": load}
    # --- speed: time per token is GPU layers plus CPU layers
    gpu_t = ngl / L * 1.0
    t_raw = g("t", "default")
    threads = P["t_default"] if t_raw == "default" else int(t_raw)
    cpu_speed = min(threads, P["cpu_t_best"]) / P["cpu_t_best"]
    if threads > P["cpu_t_best"]:
        cpu_speed /= 1 + 0.25 * math.log2(threads / P["cpu_t_best"])
    cpu_t = (L - ngl) / L * 9.0 / max(cpu_speed, 0.05)
    x = -math.log(gpu_t + cpu_t)
    if fa:
        x += P["fa_eff"]
    x += P["ub_eff"].get(str(ub), 0.0)
    x += (P["qcache_eff"][ctk] + P["qcache_eff"][ctv]) / 2
    x += 0.12 * math.log2(min(npar, 8)) / 3.0
    if g("mmq", "unset") == "1" and ngl > 0:
        x += P["mmq_eff"] * ngl / L
    if ngl < L:
        extra["noise"] = P["cpu_noise"]
    extra["load"] = load
    return x, None, extra


# --------------------------------------------------------------------------------------
# vLLM, MoE FP4/FP8 on Blackwell: MoE backends, a conditional env var, hangs.
# --------------------------------------------------------------------------------------

def draw_vllm_moe(rng, sp):
    gpu_name, sm = rng.choice([("RTX PRO 6000 Blackwell", 120), ("B200", 100)])
    model = rng.choice(["Qwen3-30B-A3B-NVFP4", "Qwen3-235B-A22B-FP8", "gpt-oss-120b", "GLM-4.5-Air-FP8"])
    tp = rng.choice([1, 2, 4])
    sp.describe.append(f"vllm {model} tp{tp} on {gpu_name} (sm{sm})")
    cand = []
    cand.append(("moe", "--moe-backend", pick_values(rng, "auto", ["triton", "cutlass", "flashinfer_cutlass", "flashinfer_trtllm",
                                                                   "flashinfer_cutedsl", "marlin", "deep_gemm"], 4, 6),
                 ["moe backend", "MoE backend"], True))
    cand.append(("fi_moe", None, ["unset", "throughput", "latency", "masked_gemm"],
                 ["VLLM_FLASHINFER_MOE_BACKEND"], True))
    cand.append(("attn", "--attention-backend", pick_values(rng, "auto", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"], 2, 4),
                 ["attention backend", "attention_backend"], True))
    cand.append(("kv", "--kv-cache-dtype", pick_values(rng, "auto", ["fp8", "fp8_e4m3", "nvfp4"], 1, 3),
                 ["kv cache dtype", "kv_cache_dtype"], False))
    cand.append(("eager", None, ["off", "on"], ["--enforce-eager", "enforce eager", "enforce_eager"], False))
    cand.append(("seqs", "--max-num-seqs", pick_values(rng, "default", ["32", "64", "128", "512", "1024"], 2, 4),
                 ["max num seqs", "max_num_seqs"], False))
    cand.append(("gmu", "--gpu-memory-utilization", pick_values(rng, "0.9", ["0.85", "0.92", "0.95", "0.97"], 2, 4),
                 ["gpu memory utilization", "gpu_memory_utilization"], False))
    cand.append(("async", None, ["off", "on"], ["--async-scheduling", "async scheduling", "async_scheduling"], False))
    cand.append(("prefix", None, ["default", "off"], ["--no-enable-prefix-caching", "prefix caching"], False))
    return cand, dict(sm=sm, tp=tp, model=model)


def params_vllm_moe(rng, info, sp):
    P = dict(info)
    sm = info["sm"]
    P["load"] = rng.choice([500, 800, 1200])
    P["auto_moe"] = "flashinfer_cutlass" if sm == 120 else "flashinfer_trtllm"
    P["auto_attn"] = rng.choice(["FLASHINFER", "FLASH_ATTN"])
    # what each backend does on this card
    bad = {}
    if sm == 120:
        bad["flashinfer_trtllm"] = ("crash/arch", "RuntimeError: none of the configured backends are usable on sm120")
        bad["deep_gemm"] = ("crash/arch", "RuntimeError: DeepGEMM kernels expected sm90 or sm100")
        bad["cutlass"] = ("crash/arch", "RuntimeError: No compiled cutlass_scaled_mm for CUDA device capability: 120")
        if rng.random() < 0.5:
            bad["flashinfer_cutlass_latency"] = ("crash/arch", "RuntimeError: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal")
    else:
        bad["deep_gemm"] = ("crash/arch", "RuntimeError: CUDA error: no kernel image is available for execution on the device") if rng.random() < 0.5 else None
    P["bad"] = {k: v for k, v in bad.items() if v}
    P["garbage"] = rng.sample(["flashinfer_cutlass", "flashinfer_cutedsl", "triton"], rng.randint(0, 2))
    P["hang_moe"] = rng.sample(["flashinfer_cutedsl", "deep_gemm", "marlin", "triton", "flashinfer_cutlass"], rng.randint(1, 3))
    P["hang_needs_graph"] = rng.random() < 0.6
    P["moe_eff"] = {"auto": 0.0, "triton": -rng.uniform(0.05, 0.25), "cutlass": rng.uniform(-0.1, 0.05),
                    "flashinfer_cutlass": rng.uniform(-0.05, 0.08), "flashinfer_trtllm": rng.uniform(-0.05, 0.12),
                    "flashinfer_cutedsl": rng.uniform(-0.05, 0.15), "marlin": -rng.uniform(0.15, 0.4),
                    "deep_gemm": rng.uniform(-0.05, 0.1)}
    P["fi_eff"] = {"unset": 0.0, "throughput": 0.0, "latency": rng.uniform(-0.08, 0.1), "masked_gemm": rng.uniform(-0.05, 0.12)}
    P["attn_eff"] = {"FLASH_ATTN": 0.0, "FLASHINFER": rng.uniform(-0.04, 0.06), "TRITON_ATTN": -rng.uniform(0.02, 0.12),
                     "FLEX_ATTENTION": -rng.uniform(0.15, 0.4)}
    P["eager_eff"] = -rng.uniform(0.15, 0.4)
    P["async_eff"] = rng.uniform(0.0, 0.06)
    P["seq_best"] = rng.choice([64, 128, 256, 512])
    P["seq_curv"] = rng.uniform(0.01, 0.06)
    P["gmu_slope"] = rng.uniform(0.5, 2.0)
    P["gmu_cap"] = rng.choice([0.92, 0.95, 0.97, 1.0])
    P["seq_mem"] = rng.uniform(0.01, 0.04)
    P["fp8_eff"] = rng.uniform(0.0, 0.1)
    P["nvfp4_bad_attn"] = ["FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION"]
    P["flaky"] = rng.choice([0.0, 0.05, 0.12, 0.25]) if info["tp"] > 1 else 0.0
    P["triple"] = None
    return P


def eval_vllm_moe(rng_fixed, P, cfg):
    g = cfg.get
    moe = g("moe", "auto")
    real_moe = P["auto_moe"] if moe == "auto" else moe
    fi = g("fi_moe", "unset")
    attn = g("attn", "auto")
    real_attn = P["auto_attn"] if attn == "auto" else attn
    kv = g("kv", "auto")
    eager = g("eager", "off") == "on"
    load = P["load"] + (0 if eager else 150)
    extra = {}
    is_fi = real_moe.startswith("flashinfer")
    if fi == "masked_gemm" and real_moe != "flashinfer_cutedsl" and is_fi:
        return 0.0, ("crash/config", f"ValueError: Unsupported FlashInfer MoE backend masked_gemm for {real_moe.upper()}"), {"load": int(load * 0.5)}
    if real_moe in P["bad"]:
        f, line = P["bad"][real_moe]
        return 0.0, (f, line), {"load": int(load * 0.6)}
    if real_moe == "flashinfer_cutlass" and fi == "latency" and "flashinfer_cutlass_latency" in P["bad"]:
        f, line = P["bad"]["flashinfer_cutlass_latency"]
        return 0.0, (f, line), {"load": int(load * 0.6)}
    if kv == "nvfp4" and real_attn in P["nvfp4_bad_attn"]:
        return 0.0, ("crash/config", f"ValueError: Selected backend AttentionBackendEnum.{real_attn} is not valid for this configuration. Reason: ['kv_cache_dtype not supported']"), {"load": int(load * 0.7)}
    # memory
    gmu = float(g("gmu", "0.9"))
    seqs = 1024 if g("seqs", "default") == "default" else int(g("seqs"))
    need = gmu + (0.0 if eager else P["seq_mem"] * seqs / 512.0)
    if need > P["gmu_cap"]:
        return 0.0, ("crash/oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.38 GiB. GPU 0 has a total capacity of 94.97 GiB of which 2.91 GiB is free."), {"load": int(load * 0.95)}
    if real_moe in P["hang_moe"] and (eager is False or not P["hang_needs_graph"]):
        which = real_moe.upper()
        return 0.0, ("timeout/startup", f"INFO [fused_moe.py] Using {which} MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS', '{which}', 'TRITON']"), {}
    if real_moe in P["garbage"] and (kv != "auto" or real_moe == "flashinfer_cutedsl"):
        return 0.0, ("garbage/repeat", "++++++++++++++++++++++++++++++++++++++++++++++++"), {"load": load}
    x = P["moe_eff"].get(real_moe, 0.0)
    if is_fi:
        x += P["fi_eff"].get(fi, 0.0)    # only FlashInfer MoE reads the env var
    x += P["attn_eff"].get(real_attn, 0.0)
    if kv in ("fp8", "fp8_e4m3"):
        x += P["fp8_eff"]
    if kv == "nvfp4":
        x += P["fp8_eff"] * 1.3
    if eager:
        x += P["eager_eff"]
    if g("async", "off") == "on":
        x += P["async_eff"]
    x -= P["seq_curv"] * math.log2(seqs / P["seq_best"]) ** 2
    x += P["gmu_slope"] * (gmu - 0.9)
    if P["flaky"]:
        extra.update({"flaky": P["flaky"], "flaky_fail": "crash/nccl",
                      "flaky_line": "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"})
    extra["load"] = load
    return x, None, extra


def triple_generic(rng, sp, P, options):
    present = [(a, v) for a, v in options if any(x["name"] == a and v in x["values"] for x in sp.axes)]
    by_axis = {}
    for a, v in present:
        by_axis.setdefault(a, []).append(v)
    axes = sorted(by_axis)
    if len(axes) >= 3 and rng.random() < 0.55:
        chosen = rng.sample(axes, 3)
        P["triple"] = [(a, rng.choice(by_axis[a])) for a in chosen]
        P["triple_gain"] = rng.uniform(0.08, 0.22)
        sp.tags.add("triple")
        sp.describe.append("triple " + "+".join(f"{a}={v}" for a, v in P["triple"]))


FAM = {
    "sglang": (draw_sglang, params_sglang, eval_sglang, (6, 9)),
    "vllm-awq": (draw_vllm_awq, params_vllm_awq, eval_vllm_awq, (5, 8)),
    "llamacpp": (draw_llamacpp, params_llamacpp, eval_llamacpp, (5, 8)),
    "vllm-moe": (draw_vllm_moe, params_vllm_moe, eval_vllm_moe, (5, 8)),
}


def choose_axes(rng, cand, lo_n, hi_n, min_cells, max_cells):
    """Required axes plus optional ones, values trimmed until the cells fit."""
    for attempt in range(400):
        req = [c for c in cand if c[4]]
        opt = [c for c in cand if not c[4]]
        n = rng.randint(max(lo_n, len(req)), min(hi_n, len(cand)))
        chosen = set(x[0] for x in req) | set(x[0] for x in rng.sample(opt, max(0, n - len(req))))
        axes = [dict(name=c[0], flag=c[1], values=list(c[2]), words=c[3]) for c in cand if c[0] in chosen]
        # trim the largest axes while too many cells
        while product(axes) > max_cells:
            big = max(axes, key=lambda a: (len(a["values"]), a["name"]))
            if len(big["values"]) <= 2:
                break
            del big["values"][rng.randrange(1, len(big["values"]))]
        if min_cells <= product(axes) <= max_cells:
            return axes
    return None


def draw_space(seed, index, min_cells, max_cells):
    for attempt in range(50):
        space, tags = draw_once(seed, index, attempt, min_cells, max_cells)
        serve = sum(1 for c in space["cells"] if "fail" not in c)
        if serve >= max(3, 0.03 * len(space["cells"])):
            return space, tags
    return space, tags


def draw_once(seed, index, attempt, min_cells, max_cells):
    rng = random.Random(f"gen2:{seed}:{index}:{attempt}")
    fam = FAMILIES[rng.randrange(len(FAMILIES))]
    name = f"{index:03d}-{fam}"
    draw, params, evaluate, (lo_n, hi_n) = FAM[fam]
    engine = {"sglang": "sglang", "vllm-awq": "vllm", "llamacpp": "llama.cpp", "vllm-moe": "vllm"}[fam]
    sp = Space(engine)
    cand, info = draw(rng, sp)
    axes = choose_axes(rng, cand, lo_n, hi_n, min_cells, max_cells)
    if axes is None:
        raise SystemExit(f"gen2: space {name}: no axes fit {min_cells}-{max_cells} cells")
    for a in axes:
        sp.axis(a["name"], a["flag"], a["values"], a["words"])
    P = params(rng, info, sp)
    noise = round(lu(rng, 0.01, 0.08), 4)
    P["noise"] = noise
    if fam == "sglang":
        triple_sglang(rng, sp, P)
    elif fam == "vllm-moe":
        triple_generic(rng, sp, P, [("moe", "flashinfer_cutlass"), ("moe", "flashinfer_cutedsl"), ("moe", "flashinfer_trtllm"),
                                    ("attn", "FLASHINFER"), ("attn", "TRITON_ATTN"), ("kv", "fp8"), ("kv", "fp8_e4m3"),
                                    ("async", "on"), ("fi_moe", "latency"), ("fi_moe", "throughput")])
    elif fam == "llamacpp":
        triple_generic(rng, sp, P, [("ub", "1024"), ("ub", "2048"), ("b", "1024"), ("b", "4096"), ("np", "2"), ("np", "8"),
                                    ("mmq", "1"), ("ctk", "q8_0"), ("ctv", "q8_0")])
    else:
        triple_generic(rng, sp, P, [("attn", "FLASHINFER"), ("kv", "fp8"), ("kv", "fp8_e5m2"), ("seqs", "32"), ("seqs", "64"),
                                    ("block", "32"), ("prefix", "off"), ("nochunk", "on"), ("mnbt", "4096")])
    base_s = {"sglang": lu(rng, 800, 6000), "vllm-awq": lu(rng, 150, 900),
              "llamacpp": lu(rng, 8, 60), "vllm-moe": lu(rng, 1500, 12000)}[fam]
    names = [a["name"] for a in sp.axes]
    cells = []
    for idx in itertools.product(*[range(len(a["values"])) for a in sp.axes]):
        cfg = {n: sp.axes[i]["values"][j] for i, (n, j) in enumerate(zip(names, idx))}
        x, fail, extra = evaluate(None, P, cfg)
        if fail is None and P.get("triple") and all(cfg.get(a) == v for a, v in P["triple"]):
            x += P["triple_gain"]
        c = {"s": round(base_s * math.exp(x), 3)}
        if fail:
            c = {"s": round(base_s * math.exp(x), 3), "fail": fail[0], "line": fail[1]}
            for k in ("load",):
                if k in extra:
                    c[k] = extra[k]
        else:
            for k in ("load", "noise", "flaky", "flaky_fail", "flaky_line"):
                if k in extra:
                    c[k] = round(extra[k], 4) if isinstance(extra[k], float) else extra[k]
        cells.append(c)
    # Without an engine the lines are read through the axes' words only.
    if rng.random() < 0.12:
        engine = None
        sp.tags.add("no-engine")
    load_s = {"sglang": 600, "vllm-awq": 240, "llamacpp": 60, "vllm-moe": 900}[fam]
    space = {"name": name, "describe": "; ".join(sp.describe), "noise": noise,
             "load_s": load_s, "bench_s": rng.choice([120, 240, 300]),
             "timeout_s": {"sglang": 1800, "vllm-awq": 900, "llamacpp": 600, "vllm-moe": 2400}[fam]}
    if engine:
        space["engine"] = engine
    space["axes"] = sp.axes
    space["cells"] = cells
    tag_space(space, sp, P, fam)
    return space, sorted(sp.tags)


def tag_space(space, sp, P, fam):
    """Patterns read off the drawn cells, so the tags say what is there."""
    cells, axes = space["cells"], space["axes"]
    n = len(cells)
    serve = [c for c in cells if "fail" not in c]
    share = len(serve) / n
    t = sp.tags
    if len(axes) >= 6:
        t.add("many-axes")
    if sum(1 for a in axes if a["values"][0] in ("off", "unset", "default") and len(a["values"]) == 2 and "flag" not in a) >= 2:
        t.add("switches")
    if 0.05 <= share <= 0.15:
        t.add("small-region")
    if space["noise"] >= 0.05:
        t.add("noisy")
    if any("flaky" in c for c in cells):
        t.add("flaky")
    fails = [c for c in cells if "fail" in c]
    if sum(1 for c in fails if c["fail"].startswith("timeout")) >= 0.08 * n:
        t.add("hangs")
    if any(c.get("load", 999) <= 30 and c["fail"].startswith("crash") for c in fails):
        t.add("parse-crash")
    if any(c["fail"].startswith("crash") and c.get("load", 0) >= 800 for c in fails):
        t.add("late-crash")
    lines = [c["line"] for c in fails]
    if any("torch.bfloat16" in l or "torch.float32" in l or "AttentionBackendEnum." in l or "Using " in l and "MoE backend" in l
           or "for FLASHINFER" in l for l in lines):
        t.add("alias-line")
    if any("--dtype=half" in l or "cutlass TMA" in l for l in lines):
        t.add("innocent-line")
    if any("CUDA out of memory" in l or "no kernel image" in l or "watchdog" in l or l.startswith("!!!") or l.startswith("+++")
           or "Capture cuda graph begin" in l for l in lines):
        t.add("nameless-line")
    if fam == "llamacpp" and any("quantized V cache requires" in l for l in lines):
        t.add("pair-by-value")
    if fam == "vllm-awq" and any("max_num_batched_tokens (" in l for l in lines):
        t.add("pair-by-value")
    if fam == "vllm-moe" and any("kv_cache_dtype not supported" in l for l in lines):
        t.add("pair-by-value")
    # conditional axes: an axis inert under one value of another
    cond = {"sglang": ("graph_bs", "nograph"), "vllm-moe": ("fi_moe", "moe"), "llamacpp": ("t", "ngl"),
            "vllm-awq": ("mnbt", "nochunk")}[fam]
    if sp.has(cond[0]) and sp.has(cond[1]):
        t.add("conditional")
    if fam == "sglang" and sp.has("draft") and sp.has("spec"):
        t.add("conditional")
    if fam == "llamacpp" and sp.has("mmq") and sp.has("ngl"):
        t.add("conditional")
    # inert: some axis whose non-default values never change a serving cell's figure by > 1%
    if inert_axis(space):
        t.add("inert")
    # cliff: the best serving cell has a neighbour one step further along a memory axis that OOMs
    best_i, runner, margin = best_of(cells)
    if best_i is not None and oom_neighbour(space, best_i):
        t.add("cliff")
    if best_i is not None and share >= 0.4:
        top = cells[best_i]["s"]
        near = sum(1 for c in serve if c["s"] >= top * 0.97)
        if near <= max(2, 0.004 * n):
            t.add("narrow-peak")


def index_to_tuple(axes, i):
    out = []
    for a in reversed(axes):
        k = len(a["values"])
        out.append(i % k)
        i //= k
    return list(reversed(out))


def tuple_to_index(axes, t):
    i = 0
    for a, j in zip(axes, t):
        i = i * len(a["values"]) + j
    return i


def inert_axis(space):
    axes, cells = space["axes"], space["cells"]
    for ai, a in enumerate(axes):
        ok, seen = True, 0
        for i, c in enumerate(cells):
            t = index_to_tuple(axes, i)
            if t[ai] != 0 or "fail" in c:
                continue
            for j in range(1, len(a["values"])):
                t2 = list(t)
                t2[ai] = j
                c2 = cells[tuple_to_index(axes, t2)]
                if "fail" in c2:
                    continue
                seen += 1
                if abs(c2["s"] / c["s"] - 1) > 0.01:
                    ok = False
                    break
            if not ok:
                break
        if ok and seen >= 10:
            return a["name"]
    return None


MEM_AXES = ("mem", "graph_bs", "gmu", "ngl", "c", "ub", "seqs", "draft")


def oom_neighbour(space, i):
    axes, cells = space["axes"], space["cells"]
    t = index_to_tuple(axes, i)
    for ai, a in enumerate(axes):
        if a["name"] not in MEM_AXES:
            continue
        for d in (-1, 1):
            j = t[ai] + d
            if 0 <= j < len(a["values"]):
                t2 = list(t)
                t2[ai] = j
                c2 = cells[tuple_to_index(axes, t2)]
                if c2.get("fail") == "crash/oom":
                    return True
    return False


def best_of(cells):
    """The best serving cell, the best serving cell that is not its twin
    (a figure more than 0.1% away), and the ratio of the two."""
    serve = sorted(((c["s"], -i) for i, c in enumerate(cells) if "fail" not in c), reverse=True)
    if not serve:
        return None, None, 0.0
    top = serve[0][0]
    for s_, mi in serve[1:]:
        if s_ < top * 0.999:
            return -serve[0][1], -mi, top / s_
    return -serve[0][1], None, float("inf")


def summary_line(space, tags):
    cells = space["cells"]
    n = len(cells)
    serve = [c for c in cells if "fail" not in c]
    bi, ri, margin = best_of(cells)
    shape = "x".join(str(len(a["values"])) for a in space["axes"])
    within = sum(1 for c in serve if bi is not None and c["s"] >= cells[bi]["s"] * 0.97)
    twins = sum(1 for c in serve if bi is not None and c["s"] >= cells[bi]["s"] * 0.999) - 1
    best = "none" if bi is None else (f"{cells[bi]['s']:.1f} (cell {bi}, {twins} twins, x{margin:.3f} over the next figure, "
                                      f"{within} within 3%)")
    return f"{space['name']:<16} {n:5d} cells {shape:<20} serve {len(serve) / n * 100:5.1f}%  best {best}  [{','.join(tags)}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spaces", type=int, default=200)
    ap.add_argument("--min-cells", type=int, default=200)
    ap.add_argument("--max-cells", type=int, default=2000)
    ap.add_argument("--space", help="draw only this space (its name, or its index)")
    ap.add_argument("--summary", action="store_true", help="one line a space instead of JSON")
    args = ap.parse_args()
    if args.space is not None:
        try:
            indices = [int(args.space.split("-")[0])]
        except ValueError:
            raise SystemExit(f"gen2: bad space name {args.space!r}")
    else:
        indices = range(1, args.spaces + 1)
    counts = {}
    total = 0
    for i in indices:
        space, tags = draw_space(args.seed, i, args.min_cells, args.max_cells)
        if args.space is not None and "-" in args.space and space["name"] != args.space:
            raise SystemExit(f"gen2: seed {args.seed} draws {space['name']}, not {args.space}")
        total += 1
        for t in tags:
            counts[t] = counts.get(t, 0) + 1
        if args.summary:
            print(summary_line(space, tags))
        else:
            sys.stdout.write(json.dumps(space, separators=(",", ":")) + "\n")
    if args.summary and total > 1:
        print(f"\npatterns over {total} spaces:")
        for t in PATTERN_NAMES:
            print(f"  {t:<14} {counts.get(t, 0):4d}  {counts.get(t, 0) / total * 100:5.1f}%  {PATTERN_NAMES[t]}")


if __name__ == "__main__":
    main()
