#!/usr/bin/env python3
"""gen.py -- draw synthetic tuning spaces of LLM inference servers.

A second generator of spaces, written apart from the search and its simulator. Each space
is what someone tuning an engine (SGLang, vLLM, TensorRT-LLM, llama.cpp) on a given GPU and
model would declare: a few axes of real flags and values, and for each cell of the matrix
the figure it would measure and, where it fails, how it fails and what it prints.

Standard library only. The same arguments always print the same bytes: every draw comes
from random.Random seeded with an integer, and no set of strings is ever iterated.

    python3 gen.py --seed S --spaces N [--min-cells 200] [--max-cells 2000] > spaces.jsonl
    python3 gen.py --space SUBSEED [--min-cells ...]          one space, redrawn by name
    python3 gen.py --seed S --spaces N --summary              one line per space instead
"""

import argparse
import itertools
import json
import math
import random
import sys

# --------------------------------------------------------------------------- hardware

# name, compute capability, memory GiB, interconnect, GPU counts seen, weight
GPUS = [
    ("H100 80GB HBM3", "sm_90", 80, "nvlink", (1, 2, 4, 8), 3.0),
    ("H200", "sm_90", 141, "nvlink", (1, 2, 4, 8), 3.0),
    ("B200", "sm_100", 180, "nvlink", (1, 2, 4, 8), 3.0),
    ("GB200", "sm_100", 186, "nvlink", (1, 2, 4), 1.0),
    ("B300", "sm_103", 270, "nvlink", (1, 2, 4, 8), 1.0),
    ("RTX PRO 6000 Blackwell Server Edition", "sm_120", 96, "pcie", (1, 2, 4, 8), 4.0),
    ("RTX 5090", "sm_120", 32, "pcie", (1, 2), 1.5),
    ("DGX Spark GB10", "sm_121", 120, "none", (1,), 1.0),
    ("L40S", "sm_89", 48, "pcie", (1, 2, 4), 1.0),
    ("A100 80GB", "sm_80", 80, "nvlink", (1, 2, 4, 8), 1.0),
]

# kernels are built per family: sm_103 runs sm_100 kernels, sm_121 runs sm_120 kernels
FAMILY = {"sm_80": 80, "sm_89": 89, "sm_90": 90, "sm_100": 100, "sm_103": 100,
          "sm_120": 120, "sm_121": 120}

# name, attention kind (mha | mla), quantization, weights GiB, has MTP layers
HF_MODELS = [
    ("meta-llama/Llama-3.1-8B-Instruct", "dense", "mha", "bf16", 15, False),
    ("Qwen/Qwen3-32B", "dense", "mha", "bf16", 61, False),
    ("Qwen/Qwen3-32B-FP8", "dense", "mha", "fp8", 33, False),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "dense", "mha", "fp8", 68, False),
    ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "dense", "mha", "nvfp4", 40, False),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "moe", "mha", "fp8", 31, False),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "moe", "mha", "fp8", 221, False),
    ("nvidia/Qwen3.5-397B-A17B-NVFP4", "moe", "mha", "nvfp4", 215, True),
    ("Qwen/Qwen3.5-397B-A17B-FP8", "moe", "mha", "fp8", 385, True),
    ("openai/gpt-oss-120b", "moe", "mha", "mxfp4", 61, False),
    ("openai/gpt-oss-20b", "moe", "mha", "mxfp4", 13, False),
    ("zai-org/GLM-4.7-Flash", "moe", "mla", "bf16", 58, True),
    ("deepseek-ai/DeepSeek-V3.1", "moe", "mla", "fp8", 640, True),
    ("nvidia/Kimi-K2.5-NVFP4", "moe", "mla", "nvfp4", 560, False),
    ("nvidia/MiniMax-M2.7-NVFP4", "moe", "mha", "nvfp4", 122, True),
    ("nvidia/Gemma-4-26B-A4B-NVFP4", "moe", "mha", "nvfp4", 16, False),
]

# name, dense | moe, weights GiB, layers
GGUF_MODELS = [
    ("Qwen3.6-35B-A3B-Q4_K_M.gguf", "moe", 20, 40),
    ("Llama-3.3-70B-Instruct-Q4_K_M.gguf", "dense", 40, 80),
    ("gpt-oss-20b-mxfp4.gguf", "moe", 12, 24),
    ("gpt-oss-120b-mxfp4.gguf", "moe", 60, 36),
    ("Qwen3-8B-Q8_0.gguf", "dense", 8, 36),
    ("Qwen3-32B-Q5_K_M.gguf", "dense", 22, 64),
    ("GLM-4.5-Air-Q4_K_M.gguf", "moe", 68, 47),
    ("gemma-3-27b-it-Q6_K.gguf", "dense", 21, 62),
]

ENGINES = [("sglang", 0.34), ("vllm", 0.30), ("trtllm", 0.14), ("llama.cpp", 0.22)]

# --------------------------------------------------------------------------- catalog


def V(name, sp=0.0, ok=None, load=None, tags=(), need=(), eq=None, arch=(), noise=1.0, w=1.0):
    """One value of an axis: prior log speed effect, GPU families with a kernel (None: all),
    extra load seconds (lo, hi), tags, what the model must be, numeric equivalent,
    arch failure lines that name it, noise factor, weight when drawing values."""
    return {"name": name, "sp": sp, "ok": ok, "load": load, "tags": tags, "need": need,
            "eq": eq, "arch": arch, "noise": noise, "w": w}


def AX(key, flag, role, kind, words, values, need=(), weight=1.0, auto=None, log=True):
    """An axis template: kind is cat (categorical), num (numeric: ordered by eq) or bool."""
    return {"key": key, "flag": flag, "role": role, "kind": kind, "words": words,
            "values": values, "need": need, "weight": weight, "auto": auto, "log": log}


BLACKWELL = (100, 120)
SM100 = (100,)
HOPPER_UP = (90, 100)
FP8_ARCH = (89, 90, 100, 120)

SGLANG = [
    AX("attn", "--attention-backend", "kernel", "cat", ["attention backend", "attention_backend"], [
        V("auto"),
        V("fa3", 0.05, ok=(80, 90), arch=("AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`.",
                                           "ValueError: The 'fa3' backend is not supported on Blackwell GPUs")),
        V("flashinfer", 0.0, load=(20, 150), tags=("flashinfer",)),
        V("triton", -0.08, tags=("triton",)),
        V("fa4", 0.06, ok=SM100, load=(60, 300), tags=("jit",), need=("mha",),
          arch=("RuntimeError: FA4 attention (flash_attn.cute) is only supported on SM100",)),
        V("trtllm_mha", 0.07, ok=SM100, need=("mha",), tags=("trtllm",),
          arch=("ValueError: TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100)",
                "RuntimeError: TllmGenFmhaRunner: Unsupported architecture")),
        V("torch_native", -0.6, w=0.4),
        V("flex_attention", -0.35, load=(60, 200), need=("mha",), w=0.5),
        V("flashmla", 0.06, ok=HOPPER_UP, need=("mla",), arch=("RuntimeError: FlashMLA is only supported on SM90 and SM100",)),
        V("cutlass_mla", 0.05, ok=SM100, need=("mla",), tags=("cutlass",),
          arch=("RuntimeError: cutlass_mla_decode: Unsupported architecture",)),
        V("trtllm_mla", 0.08, ok=SM100, need=("mla",), tags=("trtllm",),
          arch=("ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100)",)),
    ], weight=3.0, auto={"mha": {80: "flashinfer", 89: "flashinfer", 90: "fa3", 100: "trtllm_mha", 120: "flashinfer"},
                        "mla": {80: "triton", 89: "triton", 90: "fa3", 100: "trtllm_mla", 120: "triton"}}),
    AX("moe", "--moe-runner-backend", "kernel", "cat", ["moe runner backend", "moe_runner_backend", "MoE runner"], [
        V("auto"),
        V("triton", -0.05, tags=("triton",)),
        V("triton_kernel", -0.02, tags=("triton",), need=("q:mxfp4|bf16|fp8",)),
        V("deep_gemm", 0.06, ok=HOPPER_UP, load=(200, 900), tags=("jit", "fp8"), need=("q:fp8",),
          arch=("RuntimeError: DeepGEMM: unsupported architecture, expected sm90 or sm100",)),
        V("flashinfer_trtllm", 0.09, ok=SM100, tags=("flashinfer", "trtllm", "fp4"), need=("q:fp8|nvfp4|mxfp4",),
          arch=("RuntimeError: trtllm-gen fused MoE: Unsupported architecture",
                "RuntimeError: none of the configured backends are usable on sm{cap}")),
        V("flashinfer_cutlass", 0.05, ok=(90, 100, 120), tags=("flashinfer", "cutlass", "fp4"), need=("q:fp8|nvfp4|bf16",),
          arch=("RuntimeError: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal",)),
        V("flashinfer_mxfp4", 0.07, ok=SM100, tags=("flashinfer",), need=("q:mxfp4",),
          arch=("RuntimeError: No supported CUDA architectures found for major versions [10].",)),
        V("flashinfer_cutedsl", 0.06, ok=SM100, load=(60, 300), tags=("flashinfer", "jit", "fp4"), need=("q:nvfp4",),
          arch=("RuntimeError: No supported CUDA architectures found for major versions [10].",)),
        V("cutlass", 0.03, ok=HOPPER_UP, tags=("cutlass",), need=("q:fp8|nvfp4",),
          arch=("RuntimeError: cutlass_moe_mm: Unsupported architecture sm{cap}",)),
        V("marlin", -0.15, tags=("marlin",), need=("q:fp8|nvfp4|mxfp4",)),
    ], need=("moe",), weight=2.5, auto={"fp8": {80: "triton", 89: "triton", 90: "deep_gemm", 100: "flashinfer_trtllm", 120: "triton"},
                                       "nvfp4": {80: "marlin", 89: "marlin", 90: "marlin", 100: "flashinfer_trtllm", 120: "flashinfer_cutlass"},
                                       "mxfp4": {80: "marlin", 89: "triton_kernel", 90: "triton_kernel", 100: "flashinfer_mxfp4", 120: "triton_kernel"},
                                       "bf16": {80: "triton", 89: "triton", 90: "triton", 100: "flashinfer_cutlass", 120: "triton"}}),
    AX("fp4", "--fp4-gemm-backend", "kernel", "cat", ["fp4 gemm backend", "mm_fp4"], [
        V("auto"),
        V("flashinfer_cutlass", 0.03, ok=BLACKWELL, tags=("flashinfer", "cutlass", "fp4"),
          arch=("ValueError: mm_fp4 does not support backend 'cutlass' with capability {capn}",)),
        V("flashinfer_cudnn", 0.04, ok=SM100, tags=("flashinfer", "fp4"),
          arch=("ValueError: mm_fp4 does not support backend 'cudnn' with capability {capn}",)),
        V("flashinfer_cutedsl", 0.05, ok=SM100, load=(60, 240), tags=("flashinfer", "jit", "fp4"),
          arch=("ValueError: mm_fp4 does not support backend 'cute-dsl' with capability {capn}",)),
        V("flashinfer_trtllm", 0.06, ok=SM100, tags=("flashinfer", "trtllm", "fp4"),
          arch=("ValueError: mm_fp4 does not support backend 'trtllm' with capability {capn}",)),
        V("marlin", -0.2, tags=("marlin",)),
    ], need=("q:nvfp4",), weight=1.5, auto={"*": {80: "marlin", 89: "marlin", 90: "marlin", 100: "flashinfer_cutlass", 120: "flashinfer_cutlass"}}),
    AX("fp8", "--fp8-gemm-backend", "kernel", "cat", ["fp8 gemm backend", "fp8_gemm_backend"], [
        V("auto"),
        V("deep_gemm", 0.05, ok=HOPPER_UP, load=(200, 800), tags=("jit", "fp8"),
          arch=("RuntimeError: DeepGEMM: unsupported architecture, expected sm90 or sm100",)),
        V("flashinfer_trtllm", 0.05, ok=SM100, tags=("flashinfer", "trtllm", "fp8"),
          arch=("RuntimeError: Unsupported SM version for FP8 block scaling GEMM",)),
        V("flashinfer_cutlass", 0.03, ok=(100, 120), tags=("flashinfer", "cutlass", "fp8"),
          arch=("RuntimeError: flashinfer fp8 gemm: Unsupported architecture sm{cap}",)),
        V("cutlass", 0.02, ok=(89, 90, 100), tags=("cutlass", "fp8"),
          arch=("RuntimeError: No compiled cutlass_scaled_mm for CUDA device capability: {capn}",)),
        V("triton", -0.06, tags=("triton",)),
    ], need=("q:fp8",), weight=1.5, auto={"*": {80: "triton", 89: "cutlass", 90: "deep_gemm", 100: "flashinfer_trtllm", 120: "triton"}}),
    AX("kv", "--kv-cache-dtype", "dtype", "cat", ["kv cache dtype", "kv_cache_dtype", "KV cache"], [
        V("auto"),
        V("fp8_e4m3", 0.04, ok=FP8_ARCH, tags=("fp8",)),
        V("fp8_e5m2", 0.03, tags=("fp8",)),
        V("bf16", 0.0),
        V("nvfp4", 0.05, ok=SM100, tags=("fp4",), arch=("ValueError: nvfp4 KV cache requires SM100 (Blackwell)",)),
    ], weight=2.0, auto={"*": {80: "bf16", 89: "bf16", 90: "bf16", 100: "bf16", 120: "bf16"}}),
    AX("mem", "--mem-fraction-static", "mem", "num", ["mem-fraction-static", "mem_fraction_static"], [
        V("auto", eq=0.86), V("0.6", eq=0.6), V("0.7", eq=0.7), V("0.75", eq=0.75), V("0.8", eq=0.8),
        V("0.85", eq=0.85), V("0.88", eq=0.88), V("0.9", eq=0.9), V("0.92", eq=0.92), V("0.95", eq=0.95),
    ], weight=2.0, log=False),
    AX("mrr", "--max-running-requests", "batch", "num", ["max-running-requests", "max_running_requests"], [
        V("auto", eq=1024), V("16", eq=16), V("32", eq=32), V("64", eq=64), V("128", eq=128), V("256", eq=256),
        V("512", eq=512), V("2048", eq=2048), V("4096", eq=4096),
    ], weight=1.5),
    AX("chunk", "--chunked-prefill-size", "chunk", "num", ["chunked-prefill-size", "chunked_prefill_size"], [
        V("auto", eq=8192), V("1024", eq=1024), V("2048", eq=2048), V("4096", eq=4096), V("16384", eq=16384),
        V("32768", eq=32768), V("65536", eq=65536),
    ], weight=1.2),
    AX("cgbs", "--cuda-graph-max-bs", "cgbs", "num", ["cuda-graph-max-bs", "cuda graph", "Capture cuda graph"], [
        V("auto", eq=256), V("16", eq=16), V("32", eq=32), V("64", eq=64), V("128", eq=128), V("512", eq=512),
        V("768", eq=768), V("1024", eq=1024),
    ], weight=1.5),
    AX("tp", "--tp", "tp", "num", ["tp_size", "tensor parallel"], [
        V("1", eq=1), V("2", eq=2), V("4", eq=4), V("8", eq=8),
    ], need=("multi",), weight=1.5),
    AX("page", "--page-size", "page", "num", ["page_size", "page size"], [
        V("1", eq=1), V("16", eq=16), V("32", eq=32), V("64", eq=64), V("128", eq=128),
    ], weight=0.6),
    AX("sched", "--schedule-policy", "sched", "cat", ["schedule policy", "schedule_policy"], [
        V("fcfs"), V("lpm"), V("dfs-weight"), V("lof"), V("random", noise=1.6),
    ], weight=0.6),
    AX("spec", "--speculative-algorithm", "spec", "cat", ["speculative algorithm", "speculative_algorithm", "draft model"], [
        V("none"), V("EAGLE", load=(60, 240), noise=1.8), V("EAGLE3", load=(60, 240), noise=1.8),
        V("NEXTN", load=(30, 120), need=("mtp",), noise=1.6), V("NGRAM", load=(5, 30), noise=2.2),
    ], weight=1.0),
    AX("compile", "--enable-torch-compile", "compile", "bool", ["torch compile", "torch._dynamo", "inductor"], [
        V("off"), V("on", load=(300, 1200)),
    ], weight=0.8),
    AX("nocg", "--disable-cuda-graph", "eager", "bool", ["cuda graph"], [V("off"), V("on")], weight=0.6),
    AX("dpattn", "--enable-dp-attention", "toggle", "bool", ["dp attention", "dp_size"], [V("off"), V("on", load=(20, 90))],
       need=("moe", "multi"), weight=1.0),
    AX("car", "--disable-custom-all-reduce", "car", "bool", ["custom all-reduce", "custom_all_reduce"], [V("off"), V("on")],
       need=("multi",), weight=0.8),
    AX("sampling", "--sampling-backend", "kernel", "cat", ["sampling backend", "sampling_backend"], [
        V("flashinfer", tags=("flashinfer",)), V("pytorch", -0.02),
    ], weight=0.4),
    AX("mixed", "--enable-mixed-chunk", "toggle", "bool", ["mixed chunk"], [V("off"), V("on")], weight=0.4),
]

VLLM = [
    AX("attn", "--attention-backend", "kernel", "cat", ["attention backend", "AttentionBackendEnum"], [
        V("auto"),
        V("FLASH_ATTN", 0.04, ok=(80, 89, 90, 100, 120), need=("mha",)),
        V("FLASHINFER", 0.02, load=(30, 150), tags=("flashinfer",)),
        V("TRITON_ATTN", -0.07, tags=("triton",), need=("mha",)),
        V("FLEX_ATTENTION", -0.4, load=(60, 200), need=("mha",), w=0.5),
        V("FLASHMLA", 0.06, ok=HOPPER_UP, need=("mla",),
          arch=("ValueError: Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. Reason: ['compute capability not supported']",)),
        V("CUTLASS_MLA", 0.06, ok=SM100, need=("mla",), tags=("cutlass",),
          arch=("ValueError: Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: ['compute capability not supported']",)),
        V("FLASH_ATTN_MLA", 0.05, ok=(90,), need=("mla",),
          arch=("ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN_MLA is not valid for this configuration. Reason: ['compute capability not supported']",)),
        V("FLASHINFER_MLA", 0.07, ok=SM100, need=("mla",), tags=("flashinfer",),
          arch=("ValueError: Selected backend AttentionBackendEnum.FLASHINFER_MLA is not valid for this configuration. Reason: ['compute capability not supported']",)),
        V("TRITON_MLA", -0.1, need=("mla",), tags=("triton",)),
    ], weight=3.0, auto={"mha": {80: "FLASH_ATTN", 89: "FLASH_ATTN", 90: "FLASH_ATTN", 100: "FLASHINFER", 120: "FLASH_ATTN"},
                        "mla": {80: "TRITON_MLA", 89: "TRITON_MLA", 90: "FLASHMLA", 100: "CUTLASS_MLA", 120: "TRITON_MLA"}}),
    AX("moe", "--moe-backend", "kernel", "cat", ["MoE backend", "moe_backend"], [
        V("auto"),
        V("triton", -0.05, tags=("triton",)),
        V("deep_gemm", 0.06, ok=HOPPER_UP, load=(200, 900), tags=("jit", "fp8"), need=("q:fp8",),
          arch=("RuntimeError: DeepGEMM backend requires SM90 or SM100, expected sm90 or sm100",)),
        V("cutlass", 0.03, ok=HOPPER_UP, tags=("cutlass",), need=("q:fp8|nvfp4",),
          arch=("RuntimeError: No compiled cutlass_scaled_mm for CUDA device capability: {capn}",)),
        V("flashinfer_trtllm", 0.09, ok=SM100, tags=("flashinfer", "trtllm", "fp4"), need=("q:fp8|nvfp4|mxfp4",),
          arch=("RuntimeError: none of the configured backends are usable on sm{cap}",)),
        V("flashinfer_cutlass", 0.05, ok=(90, 100, 120), tags=("flashinfer", "cutlass", "fp4"), need=("q:fp8|nvfp4|bf16",),
          arch=("RuntimeError: FlashInfer CUTLASS MoE does not support current device sm_{cap}",)),
        V("flashinfer_cutedsl", 0.06, ok=SM100, load=(60, 300), tags=("flashinfer", "jit", "fp4"), need=("q:nvfp4",),
          arch=("RuntimeError: No supported CUDA architectures found for major versions [10].",)),
        V("marlin", -0.15, tags=("marlin",), need=("q:fp8|nvfp4|mxfp4",)),
    ], need=("moe",), weight=2.5, auto={"fp8": {80: "triton", 89: "triton", 90: "deep_gemm", 100: "flashinfer_trtllm", 120: "triton"},
                                       "nvfp4": {80: "marlin", 89: "marlin", 90: "marlin", 100: "flashinfer_trtllm", 120: "flashinfer_cutlass"},
                                       "mxfp4": {80: "marlin", 89: "marlin", 90: "triton", 100: "flashinfer_trtllm", 120: "marlin"},
                                       "bf16": {80: "triton", 89: "triton", 90: "triton", 100: "flashinfer_cutlass", 120: "triton"}}),
    AX("fimoe", "VLLM_FLASHINFER_MOE_BACKEND", "env", "cat", ["VLLM_FLASHINFER_MOE_BACKEND", "FlashInfer MoE"], [
        V("throughput"), V("latency"), V("masked_gemm"),
    ], need=("moe",), weight=0.6),
    AX("kv", "--kv-cache-dtype", "dtype", "cat", ["kv_cache_dtype", "KV cache dtype"], [
        V("auto"), V("fp8", 0.04, ok=FP8_ARCH, tags=("fp8",)), V("fp8_e4m3", 0.04, ok=FP8_ARCH, tags=("fp8",)),
        V("fp8_e5m2", 0.03, tags=("fp8",)), V("bfloat16", 0.0),
        V("nvfp4", 0.05, ok=SM100, tags=("fp4",), arch=("ValueError: Selected backend is not valid for this configuration. Reason: ['kv_cache_dtype not supported']",)),
    ], weight=2.0, auto={"*": {80: "bfloat16", 89: "bfloat16", 90: "bfloat16", 100: "bfloat16", 120: "bfloat16"}}),
    AX("gmu", "--gpu-memory-utilization", "mem", "num", ["gpu_memory_utilization", "GPU memory utilization"], [
        V("0.9", eq=0.9), V("0.6", eq=0.6), V("0.7", eq=0.7), V("0.8", eq=0.8), V("0.85", eq=0.85), V("0.92", eq=0.92),
        V("0.95", eq=0.95), V("0.97", eq=0.97),
    ], weight=2.0, log=False),
    AX("seqs", "--max-num-seqs", "batch", "num", ["max_num_seqs"], [
        V("256", eq=256), V("16", eq=16), V("32", eq=32), V("64", eq=64), V("128", eq=128), V("512", eq=512),
        V("1024", eq=1024), V("2048", eq=2048),
    ], weight=1.5),
    AX("mbt", "--max-num-batched-tokens", "chunk", "num", ["max_num_batched_tokens"], [
        V("8192", eq=8192), V("1024", eq=1024), V("2048", eq=2048), V("4096", eq=4096), V("16384", eq=16384),
        V("32768", eq=32768), V("65536", eq=65536),
    ], weight=1.2),
    AX("cgcap", "--max-cudagraph-capture-size", "cgbs", "num", ["cudagraph capture size", "max_cudagraph_capture_size"], [
        V("512", eq=512), V("32", eq=32), V("64", eq=64), V("128", eq=128), V("256", eq=256), V("1024", eq=1024),
    ], weight=1.0),
    AX("tp", "--tensor-parallel-size", "tp", "num", ["tensor_parallel_size", "tensor parallel"], [
        V("1", eq=1), V("2", eq=2), V("4", eq=4), V("8", eq=8),
    ], need=("multi",), weight=1.5),
    AX("olevel", "-O", "olevel", "cat", ["compilation level", "optimization level"], [
        V("2"), V("0", -0.3), V("1", -0.05), V("3", 0.02, load=(120, 600)),
    ], weight=0.8),
    AX("eager", "--enforce-eager", "eager", "bool", ["enforce_eager", "CUDA graphs"], [V("off"), V("on")], weight=0.6),
    AX("spec", "--speculative-config", "spec", "cat", ["speculative_config", "speculative decoding", "draft model"], [
        V("none"), V("eagle", load=(60, 240), noise=1.8), V("eagle3", load=(60, 240), noise=1.8),
        V("mtp", load=(30, 120), need=("mtp",), noise=1.6), V("ngram", load=(5, 30), noise=2.2),
    ], weight=1.0),
    AX("async", "--async-scheduling", "toggle", "bool", ["async scheduling", "async_scheduling"], [V("off"), V("on", 0.04)], weight=0.7),
    AX("ep", "--enable-expert-parallel", "toggle", "bool", ["expert parallel", "enable_expert_parallel"], [V("off"), V("on")],
       need=("moe", "multi"), weight=1.0),
    AX("car", "--disable-custom-all-reduce", "car", "bool", ["custom all-reduce", "custom_all_reduce"], [V("off"), V("on")],
       need=("multi",), weight=0.8),
    AX("block", "--block-size", "page", "num", ["block_size", "block size"], [
        V("16", eq=16), V("32", eq=32), V("64", eq=64), V("128", eq=128),
    ], weight=0.6),
]

TRTLLM = [
    AX("backend", "--backend", "backend", "cat", ["backend"], [
        V("pytorch"), V("tensorrt", 0.03, load=(1200, 2800)), V("_autodeploy", -0.06, load=(200, 600)),
    ], weight=1.0),
    AX("mbs", "--max_batch_size", "batch", "num", ["max_batch_size"], [
        V("2048", eq=2048), V("32", eq=32), V("64", eq=64), V("128", eq=128), V("256", eq=256), V("512", eq=512),
        V("1024", eq=1024),
    ], weight=1.5),
    AX("mnt", "--max_num_tokens", "chunk", "num", ["max_num_tokens"], [
        V("8192", eq=8192), V("2048", eq=2048), V("4096", eq=4096), V("16384", eq=16384), V("32768", eq=32768),
    ], weight=1.2),
    AX("kvfrac", "--kv_cache_free_gpu_memory_fraction", "mem", "num", ["free_gpu_memory_fraction", "kv_cache_free_gpu_memory_fraction"], [
        V("0.9", eq=0.9), V("0.5", eq=0.5), V("0.6", eq=0.6), V("0.7", eq=0.7), V("0.8", eq=0.8), V("0.85", eq=0.85),
        V("0.95", eq=0.95),
    ], weight=2.0, log=False),
    AX("tp", "--tp_size", "tp", "num", ["tp_size", "tensor parallel"], [
        V("1", eq=1), V("2", eq=2), V("4", eq=4), V("8", eq=8),
    ], need=("multi",), weight=1.5),
    AX("ep", "--ep_size", "ep", "num", ["ep_size", "moe_expert_parallel_size"], [
        V("1", eq=1), V("2", eq=2), V("4", eq=4), V("8", eq=8),
    ], need=("moe", "multi"), weight=0.8),
    AX("attn", "--extra_llm_api_options attn_backend", "kernel", "cat", ["attn_backend", "attention backend"], [
        V("TRTLLM", 0.0, tags=("trtllm",)), V("FLASHINFER", -0.06, load=(30, 120), tags=("flashinfer",)),
        V("VANILLA", -0.45, w=0.5),
    ], weight=1.5),
    AX("moe", "--extra_llm_api_options moe_config.backend", "kernel", "cat", ["moe_config.backend", "MoE backend"], [
        V("CUTLASS", 0.0, tags=("cutlass",)),
        V("TRTLLM", 0.08, ok=SM100, tags=("trtllm", "fp4"), need=("q:fp8|nvfp4|mxfp4",),
          arch=("ValueError: TRTLLM MoE backend is unsupported on SM{capn}",)),
        V("DEEPGEMM", 0.05, ok=HOPPER_UP, tags=("fp8", "jit"), need=("q:fp8",), load=(100, 500),
          arch=("RuntimeError: [TensorRT-LLM][ERROR] Unsupported SM version for FP8 block scaling GEMM",)),
        V("CUTEDSL", 0.06, ok=SM100, tags=("fp4", "jit"), need=("q:nvfp4",), load=(60, 300),
          arch=("RuntimeError: CuteDSL MoE is unsupported on SM{capn}",)),
        V("TRITON", -0.04, tags=("triton",), need=("q:mxfp4|bf16",)),
        V("WIDEEP", 0.02, need=("multi",), tags=("cutlass",)),
    ], need=("moe",), weight=2.0),
    AX("kv", "--extra_llm_api_options kv_cache_config.dtype", "dtype", "cat", ["kv_cache_config.dtype", "KV cache dtype"], [
        V("auto"), V("fp8", 0.04, ok=FP8_ARCH, tags=("fp8",)),
        V("nvfp4", 0.05, ok=SM100, tags=("fp4",), arch=("[TensorRT-LLM][ERROR] Assertion failed: NVFP4 KV cache is unsupported on SM{capn}",)),
    ], weight=1.5, auto={"*": {80: "bf16", 89: "bf16", 90: "bf16", 100: "bf16", 120: "bf16"}}),
    AX("cg", "--extra_llm_api_options cuda_graph_config.max_batch_size", "cgbs", "num", ["cuda_graph_config", "CUDA graph"], [
        V("128", eq=128), V("16", eq=16), V("32", eq=32), V("64", eq=64), V("256", eq=256), V("512", eq=512),
        V("1024", eq=1024),
    ], weight=1.2),
    AX("adp", "--extra_llm_api_options enable_attention_dp", "toggle", "bool", ["enable_attention_dp", "attention DP"], [
        V("false"), V("true"),
    ], need=("multi",), weight=1.0),
    AX("overlap", "--extra_llm_api_options disable_overlap_scheduler", "toggle", "bool", ["overlap scheduler"], [
        V("false"), V("true", -0.08),
    ], weight=0.5),
    AX("chunked", "--extra_llm_api_options enable_chunked_prefill", "toggle", "bool", ["enable_chunked_prefill", "chunked prefill"], [
        V("false"), V("true"),
    ], weight=0.6),
    AX("spec", "--extra_llm_api_options speculative_config.decoding_type", "spec", "cat", ["speculative_config", "decoding_type"], [
        V("none"), V("MTP", load=(30, 150), need=("mtp",), noise=1.6), V("Eagle3", load=(60, 240), noise=1.8),
        V("NGram", load=(5, 30), noise=2.2),
    ], weight=0.9),
]

LLAMA = [
    AX("fa", "-fa", "fa", "cat", ["flash_attn", "flash attention"], [V("auto"), V("on", 0.0), V("off", -0.1)], weight=2.0,
       auto={"*": {80: "on", 89: "on", 90: "on", 100: "on", 120: "on"}}),
    AX("ngl", "-ngl", "ngl", "num", ["n_gpu_layers", "offloading"], [
        V("auto", eq=-1), V("99", eq=99), V("64", eq=64), V("48", eq=48), V("32", eq=32), V("24", eq=24),
        V("16", eq=16), V("8", eq=8), V("0", eq=0),
    ], weight=1.5),
    AX("ctk", "-ctk", "dtype", "cat", ["cache-type-k", "K cache type"], [
        V("f16"), V("q8_0", -0.02, tags=("quant",)), V("q4_0", -0.04, tags=("quant",)), V("bf16", -0.01),
        V("q4_1", -0.05, tags=("quant",)), V("iq4_nl", -0.06, tags=("quant",)), V("q5_0", -0.05, tags=("quant",)),
        V("q5_1", -0.05, tags=("quant",)),
    ], weight=1.5),
    AX("ctv", "-ctv", "dtype", "cat", ["cache-type-v", "V cache"], [
        V("f16"), V("q8_0", -0.02, tags=("quant",)), V("q4_0", -0.04, tags=("quant",)), V("bf16", -0.01),
        V("q4_1", -0.05, tags=("quant",)), V("iq4_nl", -0.06, tags=("quant",)), V("q5_0", -0.05, tags=("quant",)),
        V("q5_1", -0.05, tags=("quant",)),
    ], weight=1.3),
    AX("b", "-b", "chunk", "num", ["n_batch", "batch size"], [
        V("2048", eq=2048), V("256", eq=256), V("512", eq=512), V("1024", eq=1024), V("4096", eq=4096), V("8192", eq=8192),
    ], weight=1.0),
    AX("ub", "-ub", "chunk", "num", ["n_ubatch", "ubatch"], [
        V("512", eq=512), V("64", eq=64), V("128", eq=128), V("256", eq=256), V("1024", eq=1024), V("2048", eq=2048),
        V("4096", eq=4096),
    ], weight=1.2),
    AX("np", "-np", "batch", "num", ["n_parallel", "slots"], [
        V("auto", eq=4), V("1", eq=1), V("2", eq=2), V("8", eq=8), V("16", eq=16), V("32", eq=32), V("64", eq=64),
    ], weight=1.5),
    AX("ctx", "-c", "ctx", "num", ["n_ctx", "context size"], [
        V("0", eq=131072), V("4096", eq=4096), V("8192", eq=8192), V("16384", eq=16384), V("32768", eq=32768),
        V("65536", eq=65536),
    ], weight=1.0),
    AX("fit", "--fit", "fit", "cat", ["fit", "--fit"], [V("on"), V("off")], weight=0.8),
    AX("mmq", "GGML_CUDA_FORCE_MMQ", "env", "cat", ["MMQ", "GGML_CUDA_FORCE_MMQ"], [V("0"), V("1")], weight=0.8),
    AX("cublas", "GGML_CUDA_FORCE_CUBLAS", "env", "cat", ["cuBLAS", "GGML_CUDA_FORCE_CUBLAS"], [V("0"), V("1", -0.03)], weight=0.5),
    AX("t", "-t", "threads", "num", ["n_threads", "threads"], [
        V("auto", eq=16), V("2", eq=2), V("4", eq=4), V("8", eq=8), V("32", eq=32),
    ], weight=0.6),
    AX("sm", "-sm", "kernel", "cat", ["split_mode", "split mode"], [V("layer"), V("row", -0.05), V("none", -0.3)],
       need=("multi",), weight=1.0),
    AX("mmap", "--no-mmap", "mmap", "bool", ["mmap"], [V("off"), V("on")], weight=0.4),
]

CATALOG = {"sglang": SGLANG, "vllm": VLLM, "trtllm": TRTLLM, "llama.cpp": LLAMA}

# --------------------------------------------------------------------------- evidence text

GENERIC_ARCH = {
    "sglang": ["torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device",
               "RuntimeError: CUDA error: no kernel image is available for execution on the device",
               "RuntimeError: CUDA error: cudaErrorIllegalInstruction: an illegal instruction was encountered",
               "RuntimeError: Unsupported architecture"],
    "vllm": ["torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device",
             "RuntimeError: CUDA error: no kernel image is available for execution on the device",
             "RuntimeError: CUDA error: cudaErrorIllegalInstruction: an illegal instruction was encountered"],
    "trtllm": ["[TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture (/src/cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/fmhaRunner.cpp:41)",
               "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in cudaFuncSetAttribute: no kernel image is available for execution on the device"],
    "llama.cpp": ["CUDA error: no kernel image is available for execution on the device",
                  "CUDA error: no kernel image is available for execution on the device (ggml-cuda.cu: mul_mat_q)"],
}

OOM_ACT = {
    "sglang": ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {a:.2f} GiB. GPU 0 has a total capacity of {cap:.2f} GiB of which {f:.2f} GiB is free.",
               "RuntimeError: CUDA error: out of memory",
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {m:.2f} MiB."],
    "vllm": ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {a:.2f} GiB. GPU 0 has a total capacity of {cap:.2f} GiB of which {m:.2f} MiB is free. Including non-PyTorch memory, this process has {u:.2f} GiB memory in use.",
             "ValueError: Free memory on device cuda:0 ({u:.1f}/{cap:.1f} GiB) on startup is less than desired GPU memory utilization ({gmu}, {want:.1f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
             "RuntimeError: Triton Error [CUDA]: out of memory"],
    "trtllm": ["RuntimeError: Executor creation failed due to insufficient GPU memory. The available memory is {f:.2f} GiB but at least {a:.2f} GiB is required.",
               "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/src/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)"],
    "llama.cpp": ["ggml_backend_cuda_buffer_type_alloc_buffer: allocating {m:.2f} MiB on device 0: cudaMalloc failed: out of memory",
                  "E graph_reserve: failed to allocate compute buffers"],
}

OOM_KV = {
    "sglang": ["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {a:.2f} GiB. GPU 0 has a total capacity of {cap:.2f} GiB of which {f:.2f} GiB is free."],
    "vllm": ["ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
             "ValueError: To serve at least one request with the models's max seq len (131072), ({a:.2f} GiB KV cache is needed, which is larger than the available KV cache memory ({f:.2f} GiB). Based on the available memory, the estimated maximum model length is {L}. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."],
    "trtllm": ["RuntimeError: Executor creation failed due to insufficient GPU memory. The available memory is {f:.2f} GiB but at least {a:.2f} GiB is required."],
    "llama.cpp": ["E llama_kv_cache: failed to allocate buffer for kv cache",
                  "ggml_backend_cuda_buffer_type_alloc_buffer: allocating {m:.2f} MiB on device 0: cudaMalloc failed: out of memory"],
}

KILL_LINES = {
    "sglang": ["", "", "Loading safetensors checkpoint shards:  {shp}% Completed | {shi}/{shn} [00:{s:02d}<00:{t:02d},  1.12it/s]",
               "[2026-12-04 10:{s:02d}:{t:02d} TP0] Load weight begin. avail mem={f:.2f} GB"],
    "vllm": ["", "", "Loading safetensors checkpoint shards:  {shp}% Completed | {shi}/{shn} [00:{s:02d}<00:{t:02d},  1.12it/s]",
             "(EngineCore_DP0 pid={pid}) INFO Loading weights took {s}.{t:02d} seconds"],
    "trtllm": ["", "", "[TensorRT-LLM][INFO] Loading weights concurrently..."],
    "llama.cpp": ["", "", "load_tensors: offloading {i} repeating layers to GPU"],
}

CUDA_LINES = {
    "sglang": ["RuntimeError: CUDA error: an illegal memory access was encountered",
               "torch.AcceleratorError: CUDA error: misaligned address",
               "RuntimeError: CUDA error: device-side assert triggered",
               "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"],
    "vllm": ["torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
             "RuntimeError: CUDA error: misaligned address",
             "RuntimeError: CUDA error: device-side assert triggered"],
    "trtllm": ["[TensorRT-LLM][ERROR] CUDA runtime error in cudaStreamSynchronize(stream): an illegal memory access was encountered",
               "RuntimeError: CUDA error: an illegal memory access was encountered"],
    "llama.cpp": ["CUDA error: an illegal memory access was encountered", "CUDA error: misaligned address"],
}

ASSERT_LINES = {
    "sglang": ["AssertionError: num_tokens {n} exceeds the captured cuda graph batch size",
               "AssertionError"],
    "vllm": ["AssertionError: num_tokens ({n}) must be <= max_num_batched_tokens", "AssertionError"],
    "trtllm": ["[TensorRT-LLM][ERROR] Assertion failed: tokensPerBlock must be a power of 2 (/src/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp:{n})",
               "[TensorRT-LLM][ERROR] Assertion failed: mMaxNumTokens >= mMaxBatchSize (/src/cpp/tensorrt_llm/runtime/gptDecoder.cpp:{n})"],
    "llama.cpp": ["/src/ggml/src/ggml-cuda/fattn.cu:{n}: GGML_ASSERT(Q->ne[3] == 1) failed",
                  "/src/ggml/src/ggml-cuda/ggml-cuda.cu:{n}: GGML_ASSERT(ggml_nbytes(src0) <= INT_MAX) failed",
                  "/src/ggml/src/ggml.c:{n}: GGML_ASSERT(view_src == NULL || data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src)) failed"],
}

EXIT_LINES = {
    "sglang": ["", "torch._inductor.exc.InductorError: LoweringException: AssertionError: ",
               "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton compilation failed"],
    "vllm": ["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
             "torch._inductor.exc.InductorError: RuntimeError: Triton compilation failed",
             "torch._dynamo.exc.Unsupported: Dynamic shape operator"],
    "trtllm": ["", "RuntimeError: Executor worker returned error"],
    "llama.cpp": ["", "terminate called after throwing an instance of 'std::runtime_error'"],
}

NCCL_LINES = [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3",
    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "torch.distributed.DistBackendError: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={n}, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600{t:03d} milliseconds before timing out.",
]

DRIVER_LINES = [
    "RuntimeError: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver.",
    "cuda.bindings.driver.CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain.",
    "RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
]

MODEL_LINES = [
    "OSError: You are trying to access a gated repo. Make sure to have access to it at https://huggingface.co/{draft}. 401 Client Error. (Request ID: Root=1-6750) Cannot access gated repo for url https://huggingface.co/{draft}/resolve/main/config.json.",
    "OSError: {draft} does not appear to have a file named config.json.",
    "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files.",
]

GARBAGE = {
    "repeat": ["!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "++++++++++++++++++++++++++++++++", "33333333333333333333333333333333",
               "the the the the the the the the the the the the"],
    "loop": ["\n\n</\n\n</\n\n</\n\n</\n\n</", "OK OK OK OK OK OK OK OK OK OK OK OK OK OK", "I think I think I think I think I think"],
    "low-information": ["MethodInfoyageegebensatunya amatööri Convenience Мос componentes", "a S componentes_obs Worce!!!!!!!!"],
    "invalid-text": ["\ufffd\ufffd\ufffd 42.\nC# | C# |\nC32\ufffd\ufffd", "\u7684\u7684 \u3131\u3134 \uc774\ub2e4 \u4e3a\u4e86\u4e3a\u4e86\ufffd\ufffd"],
    "empty": [""],
    "nan": ["\"logprob\": NaN, \"logprob\": NaN, \"logprob\": NaN", "NaN detected!"],
    "http": ["HTTP 500: The model produced output that does not match the expected format",
             "HTTP 500: {\"object\":\"error\",\"message\":\"EngineCore encountered an issue\"}"],
}

WRONG = {
    "math": ["17 * 19 = 313", "The answer is 333.", "17 \u00d7 19 = 343", "**313**", "324"],
    "ok": ["Okay! How can I help you today?", "Sure! Here you go.", "Understood."],
}

LOAD_BREAK = [
    ("garbage/repeat", "under load ({c} concurrent): {k} of {c} replies '!!!!!!!!!!!!!!!!'; alone: 'OK'"),
    ("garbage/empty", "under load ({c} concurrent): {k} of {c} completions empty; alone: '323'"),
    ("garbage/invalid-text", "under load ({c} concurrent): {k} of {c} replies '\ufffd\ufffd\ufffd\u7684\ufffd'; alone: 'OK'"),
    ("wrong/math", "under load ({c} concurrent): {k} of {c} answers wrong (e.g. '313'); alone: '323'"),
    ("garbage/http", "under load ({c} concurrent): {k} of {c} requests HTTP 500; alone: 'OK'"),
]

FLAKY = [
    ("crash/nccl", ["torch.distributed.DistBackendError: [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={n}, OpType=ALLREDUCE, NumelIn=2097152, NumelOut=2097152, Timeout(ms)=600000) ran for 600{t:03d} milliseconds before timing out.",
                    "RuntimeError: NCCL error: remote process exited or there was a network error"]),
    ("crash/port", ["OSError: [Errno 98] Address already in use",
                    "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', {port}): address already in use",
                    "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:{port}')"]),
    ("crash/cuda", ["RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"]),
    ("crash/signal", [""]),
]

STAGE = {"crash/config": 0, "crash/model": 1, "crash/driver": 2, "oom-weights": 3, "crash/arch": 4,
         "crash/oom": 5, "crash/signal": 5, "crash/cuda": 6, "crash/assert": 6, "crash/nccl": 6,
         "crash/exit": 6, "timeout/startup": 7, "timeout/request": 8, "garbage": 9, "wrong": 10,
         "load": 11}


def stage_of(verdict):
    if verdict in STAGE:
        return STAGE[verdict]
    return STAGE[verdict.split("/")[0]]


# --------------------------------------------------------------------------- drawing helpers


def wchoice(rng, items, weights):
    """Weighted choice; items and weights are lists in a fixed order."""
    total = sum(weights)
    x = rng.random() * total
    for it, wt in zip(items, weights):
        x -= wt
        if x < 0:
            return it
    return items[-1]


def wsample(rng, items, weights, k):
    items, weights = list(items), list(weights)
    out = []
    while items and len(out) < k:
        i = wchoice(rng, list(range(len(items))), weights)
        out.append(items.pop(i))
        weights.pop(i)
    return out


def splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def subseed(seed, index):
    """The seed of space `index` of a run with seed `seed`: 9 digits, printed as its name."""
    return 100000000 + splitmix((seed & 0xFFFFFFFF) * 1000003 + index) % 900000000


def need_ok(need, ctx):
    for n in need:
        if n == "moe" and ctx["arch_kind"] != "moe":
            return False
        if n == "mla" and ctx["attn_kind"] != "mla":
            return False
        if n == "mha" and ctx["attn_kind"] != "mha":
            return False
        if n == "mtp" and not ctx["mtp"]:
            return False
        if n == "multi" and ctx["count"] < 2:
            return False
        if n.startswith("q:") and ctx["quant"] not in n[2:].split("|"):
            return False
    return True


def fam_ok(val, fam):
    return val["ok"] is None or fam in val["ok"]


# --------------------------------------------------------------------------- context


def draw_context(rng):
    engine = wchoice(rng, [e for e, _ in ENGINES], [w for _, w in ENGINES])
    for _ in range(200):
        gpu = wchoice(rng, GPUS, [g[5] for g in GPUS])
        name, sm, mem, link, counts, _ = gpu
        if engine == "trtllm" and sm in ("sm_121",):
            continue
        if engine == "llama.cpp":
            m = rng.choice(GGUF_MODELS)
            count = wchoice(rng, [c for c in counts if c <= 2], [3.0 if c == 1 else 1.0 for c in counts if c <= 2])
            if m[2] > 1.6 * mem * count:
                continue
            return {"engine": engine, "gpu": name, "sm": sm, "fam": FAMILY[sm], "mem": mem, "link": link,
                    "count": count, "model": m[0], "arch_kind": m[1], "attn_kind": "mha", "quant": "gguf",
                    "gib": m[2], "layers": m[3], "mtp": False}
        m = rng.choice(HF_MODELS)
        mname, arch_kind, attn_kind, quant, gib, mtp = m
        if quant == "nvfp4" and FAMILY[sm] < 100 and rng.random() < 0.7:
            continue        # people rarely serve NVFP4 checkpoints on GPUs without FP4 units
        fits = [c for c in counts if gib <= 0.72 * mem * c]
        if not fits:
            continue
        count = fits[0] if rng.random() < 0.6 else rng.choice(fits)
        return {"engine": engine, "gpu": name, "sm": sm, "fam": FAMILY[sm], "mem": mem, "link": link,
                "count": count, "model": mname, "arch_kind": arch_kind, "attn_kind": attn_kind,
                "quant": quant, "gib": gib, "layers": 0, "mtp": mtp}
    return None


# --------------------------------------------------------------------------- axes


def draw_axes(rng, ctx, min_cells, max_cells):
    """Choose 3-7 axes and their values so that the cell count is within bounds."""
    cands = [t for t in CATALOG[ctx["engine"]] if need_ok(t["need"], ctx)]
    pools = {}
    for t in cands:
        pool = [v for v in t["values"] if need_ok(v["need"], ctx)]
        if t["role"] in ("tp", "ep"):
            pool = [v for v in pool if v["eq"] <= ctx["count"]]
        pools[t["key"]] = pool
    cands = [t for t in cands if len(pools[t["key"]]) >= 2]
    if len(cands) < 3:
        return None
    k = wchoice(rng, [3, 4, 5, 6, 7], [0.17, 0.3, 0.26, 0.17, 0.1])
    k = min(k, len(cands))
    def weight(t):
        if t["role"] == "tp" and ctx["gib"] > 0.9 * ctx["mem"]:
            return 0.3 * t["weight"]       # rarely sweep sizes that cannot hold the weights
        return t["weight"]
    chosen = wsample(rng, cands, [weight(t) for t in cands], k)
    # keep the engine's order of axes (the order people write them in)
    order = [t["key"] for t in CATALOG[ctx["engine"]]]
    chosen.sort(key=lambda t: order.index(t["key"]))
    maxn = [min(8, len(pools[t["key"]])) for t in chosen]
    counts = [rng.randint(2, m) if m > 2 else 2 for m in maxn]
    for _ in range(400):
        p = math.prod(counts)
        if min_cells <= p <= max_cells:
            break
        if p < min_cells:
            grow = [i for i in range(len(counts)) if counts[i] < maxn[i]]
            if not grow:
                return None
            counts[rng.choice(grow)] += 1
        else:
            shrink = [i for i in range(len(counts)) if counts[i] > 2]
            if not shrink:
                return None
            counts[rng.choice(shrink)] -= 1
    else:
        return None
    if not min_cells <= math.prod(counts) <= max_cells:
        return None
    axes = []
    for t, n in zip(chosen, counts):
        pool = pools[t["key"]]
        default, rest = pool[0], pool[1:]
        picked = wsample(rng, rest, [v["w"] for v in rest], n - 1)
        if t["kind"] == "num":
            picked.sort(key=lambda v: v["eq"])
        else:
            picked.sort(key=lambda v: rest.index(v))
        axes.append({"t": t, "vals": [default] + picked, "pool": pool})
    return axes


# --------------------------------------------------------------------------- speed model


def position(ax, v):
    """Where a numeric value sits between the smallest and largest of its pool, 0..1."""
    t = ax["t"]
    eqs = [u["eq"] for u in ax["pool"] if u["eq"] is not None and u["eq"] > 0]

    def tr(x):
        return math.log2(x) if t["log"] else x
    lo, hi = tr(min(eqs)), tr(max(eqs))
    e = v["eq"]
    if e is None or e <= 0:
        return 0.0 if e == 0 else 1.0
    return 0.0 if hi == lo else (tr(e) - lo) / (hi - lo)


def draw_curve(rng, role):
    """A numeric axis's effect on log speed as a function of position x in 0..1."""
    shapes = {
        "mem": (["plateau", "monotone", "flat"], [0.6, 0.25, 0.15]),
        "batch": (["plateau", "optimum", "monotone", "flat"], [0.4, 0.4, 0.1, 0.1]),
        "chunk": (["optimum", "flat", "plateau"], [0.4, 0.4, 0.2]),
        "cgbs": (["step", "plateau", "flat"], [0.6, 0.3, 0.1]),
        "ctx": (["flat", "monotone"], [0.7, 0.3]),
        "page": (["flat", "optimum"], [0.7, 0.3]),
        "threads": (["flat"], [1.0]),
        "ep": (["monotone", "optimum", "flat"], [0.4, 0.3, 0.3]),
    }
    names, weights = shapes.get(role, (["flat"], [1.0]))
    shape = wchoice(rng, names, weights)
    big = {"mem": 0.25, "batch": 0.6, "chunk": 0.12, "cgbs": 0.35, "ctx": 0.05, "page": 0.05, "ep": 0.2}.get(role, 0.05)
    a = rng.uniform(0.2, 1.0) * big
    if shape == "plateau":
        tau = rng.uniform(0.08, 0.45)
        sag = rng.uniform(0, 0.3) * a if rng.random() < 0.35 else 0.0
        norm = 1 - math.exp(-1 / tau)
        return shape, lambda x: a * (1 - math.exp(-x / tau)) / norm - a - sag * max(0.0, x - 0.75) * 4
    if shape == "optimum":
        x0 = rng.uniform(0.25, 0.9)
        span = max(x0, 1 - x0)
        return shape, lambda x: -a * ((x - x0) / span) ** 2
    if shape == "monotone":
        sign = 1 if rng.random() < 0.8 or role in ("mem",) else -1
        return shape, lambda x: sign * a * (x - 1)
    if shape == "step":
        x0 = rng.uniform(0.2, 0.7)
        return shape, lambda x: 0.0 if x >= x0 else -a * (0.6 + 0.4 * (x0 - x) / x0)
    return "flat", lambda x: 0.0


def resolve_auto(ax, ctx):
    """The pool value that the axis's `auto` default picks on this GPU and model, or None."""
    t = ax["t"]
    if not t["auto"] or ax["pool"][0]["name"] not in ("auto",):
        return None
    table = t["auto"].get(ctx["attn_kind"]) or t["auto"].get(ctx["quant"]) or t["auto"].get("*")
    if not table:
        return None
    want = table.get(ctx["fam"])
    for v in ax["pool"]:
        if v["name"] == want and fam_ok(v, ctx["fam"]):
            return v
    for v in ax["pool"][1:]:
        if fam_ok(v, ctx["fam"]):
            return v
    return None


# --------------------------------------------------------------------------- the space


class Space:
    def __init__(self, rng, sub, ctx, axes):
        self.rng = rng
        self.sub = sub
        self.ctx = ctx
        self.axes = axes
        self.names = [a["t"]["key"] for a in axes]
        self.grid = list(itertools.product(*[range(len(a["vals"])) for a in axes]))
        self.grid_index = {idx: c for c, idx in enumerate(self.grid)}
        self.n = len(self.grid)
        self.fail = [None] * self.n        # (stage, verdict, line) per cell
        self.labels = []                    # what was drawn, for a reader
        self.pid = 0

    # ---- lookups
    def axis(self, key):
        for i, a in enumerate(self.axes):
            if a["t"]["key"] == key:
                return i
        return None

    def axes_of(self, *roles):
        return [i for i, a in enumerate(self.axes) if a["t"]["role"] in roles]

    def val(self, a, j):
        return self.axes[a]["vals"][j]

    def vname(self, a, j):
        return self.axes[a]["vals"][j]["name"]

    def flag(self, a):
        return self.axes[a]["t"]["flag"]

    def word(self, a):
        return self.axes[a]["t"]["words"][0]

    def share(self, fail=None):
        fail = self.fail if fail is None else fail
        return sum(1 for f in fail if f is None) / self.n

    def cell_rng(self, pid, c):
        return random.Random(self.sub * 1000003 + pid * 7919 + c)

    # ---- applying failures
    def apply(self, pred, verdict, line, label, floor=None, stage=None, fail=None):
        """Mark every cell where pred(idx) holds as failing with verdict, unless it already
        fails at an earlier stage. With floor, refuse (return False) when the share of cells
        that serve would fall below it."""
        self.pid += 1
        pid = self.pid
        st = stage_of(verdict) if stage is None else stage
        new = list(self.fail)
        hit = 0
        for c, idx in enumerate(self.grid):
            if not pred(idx):
                continue
            if new[c] is not None and new[c][0] <= st:
                continue
            r = self.cell_rng(pid, c)
            text = line(idx, r) if callable(line) else line
            new[c] = (st, verdict, text)
            hit += 1
        if hit == 0:
            return False
        if floor is not None and self.share(new) < floor:
            return False
        self.fail = new
        if label:
            self.labels.append(label)
        return True


def fmt(template, r, vals=None, **kw):
    d = {"a": r.uniform(0.25, 8.0), "m": r.uniform(64, 9000), "f": r.uniform(0.05, 1.9),
         "cap": r.choice([79.19, 139.81, 178.35, 94.97, 31.36, 44.52]), "u": r.uniform(60, 90),
         "want": r.uniform(60, 130), "gmu": kw.pop("gmu", "0.95"), "L": r.randint(8000, 120000),
         "shn": 0, "shi": 0, "shp": 0, "p": r.randint(10, 95), "i": r.randint(1, 40), "n": r.randint(100, 4000), "s": r.randint(1, 59),
         "t": r.randint(0, 59), "pid": r.randint(1000, 99999), "r": r.randint(0, 7),
         "port": r.choice([30000, 8000, 8080, 5557, 29500]), "draft": kw.pop("draft", "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B"),
         "c": kw.pop("c", 32), "k": r.randint(3, 30)}
    d.update(kw)
    d["shn"] = r.randint(4, 82)
    d["shi"] = r.randint(1, d["shn"] - 1)
    d["shp"] = 100 * d["shi"] // d["shn"]
    try:
        return template.format(**d)
    except (KeyError, IndexError, ValueError):
        return template


# --------------------------------------------------------------------------- building


def build(rng, sub, ctx, axes, min_cells, max_cells):
    sp = Space(rng, sub, ctx, axes)
    eng, fam = ctx["engine"], ctx["fam"]
    cap = "%d" % fam if fam not in (100, 120) else {"sm_103": "103", "sm_121": "121"}.get(ctx["sm"], "%d" % fam)

    # ---- speed: main effects
    spread = rng.uniform(0.02, 0.07)
    eff = []          # per axis, per drawn value: log effect
    autos = []        # per axis: the pool value auto resolves to, or None
    curves = []
    for a, ax in enumerate(axes):
        t = ax["t"]
        imp = wchoice(rng, [0.4, 1.0, 1.6], [0.25, 0.55, 0.2])
        auto = resolve_auto(ax, ctx)
        autos.append(auto)
        if t["kind"] == "num" and t["role"] not in ("tp", "ngl"):
            shape, f = draw_curve(rng, t["role"])
            curves.append(shape)
            e = [f(position(ax, v)) + rng.gauss(0, 0.012) for v in ax["vals"]]
        elif t["role"] == "tp":
            link_cost = {"nvlink": rng.uniform(0.0, 0.08), "pcie": rng.uniform(0.08, 0.25), "none": 0.3}[ctx["link"]]
            gain = rng.uniform(0.15, 0.5)
            curves.append("tp")
            e = [gain * math.log2(v["eq"]) - link_cost * math.log2(v["eq"]) ** 2 + rng.gauss(0, 0.015) for v in ax["vals"]]
        elif t["role"] == "ngl":
            layers = ctx["layers"]
            fit_layers = min(layers, int(layers * min(1.0, 0.9 * ctx["mem"] * ctx["count"] / ctx["gib"])))
            k = rng.uniform(1.6, 2.6)
            curves.append("offload")
            e = []
            for v in ax["vals"]:
                got = fit_layers if v["eq"] < 0 else min(v["eq"], layers)
                frac = got / layers
                e.append(-k * (1 - frac) ** 0.6 + rng.gauss(0, 0.015))
            ax["offload"] = [(fit_layers if v["eq"] < 0 else min(v["eq"], layers)) / layers for v in ax["vals"]]
            ax["fits"] = fit_layers
            ax["eff_fit"] = -k * (1 - fit_layers / layers) ** 0.6 - rng.uniform(0.02, 0.1)
        else:
            curves.append("cat")
            pool_eff = {}
            for v in ax["pool"]:
                pool_eff[v["name"]] = imp * (v["sp"] + rng.gauss(0, spread))
            if auto is not None:
                pool_eff["auto"] = pool_eff[auto["name"]] + rng.gauss(0, 0.006)
            if t["role"] == "eager":
                drop = -rng.uniform(0.12, 0.5)
                pool_eff["on"] = drop
            if t["role"] == "compile":
                pool_eff["on"] = rng.uniform(-0.02, 0.09)
            if t["role"] == "car":
                pool_eff["on"] = -rng.uniform(0.0, 0.08) if ctx["link"] == "nvlink" else rng.uniform(-0.03, 0.03)
            if t["role"] == "toggle" and t["key"] in ("dpattn", "adp", "ep"):
                pool_eff[ax["vals"][1]["name"]] = rng.uniform(-0.1, 0.3)
            if t["role"] == "spec":
                for v in ax["pool"][1:]:
                    pool_eff[v["name"]] = rng.uniform(-0.25, 0.45) + (0.05 if v["name"] in ("EAGLE3", "eagle3", "MTP", "mtp", "NEXTN") else 0)
            if t["role"] == "fa":
                pool_eff["off"] = -rng.uniform(0.03, 0.18)
            if t["key"] == "mmq":
                pool_eff["1"] = rng.uniform(-0.08, 0.08)
            e = [pool_eff[v["name"]] for v in ax["vals"]]
        eff.append(e)
    # a kernel that is unexpectedly good on this model and GPU
    cat_axes = [i for i, ax in enumerate(axes) if ax["t"]["kind"] == "cat" and ax["t"]["role"] in ("kernel", "dtype") and len(ax["vals"]) > 2]
    if cat_axes and rng.random() < 0.3:
        a = rng.choice(cat_axes)
        j = rng.randrange(1, len(axes[a]["vals"]))
        eff[a][j] += rng.uniform(0.1, 0.25)
        sp.labels.append("standout %s=%s" % (sp.names[a], sp.vname(a, j)))

    # ---- speed: interactions
    inter = []        # (pred, delta)
    couplings = []    # (a, b, c): c * (xa - .5) * (xb - .5) * 4
    n_inter = wchoice(rng, [0, 1, 2, 3], [0.2, 0.35, 0.3, 0.15])
    kinds = []
    for _ in range(n_inter):
        kinds.append(wchoice(rng, ["pair+", "pair-", "kernel-dtype", "coupling", "triple"], [0.3, 0.15, 0.25, 0.15, 0.15]))
    num_axes = [i for i, ax in enumerate(axes) if ax["t"]["kind"] == "num"]
    kernels = sp.axes_of("kernel")
    dtypes = sp.axes_of("dtype")
    seen_pairs = set()
    for kind in kinds:
        if kind == "kernel-dtype" and kernels and dtypes:
            a, b = rng.choice(kernels), rng.choice(dtypes)
            if a == b:
                continue
            ja = rng.randrange(len(axes[a]["vals"]))
            if (a, b) in seen_pairs or (b, a) in seen_pairs:
                continue
            seen_pairs.add((a, b))
            quant = [j for j in range(1, len(axes[b]["vals"])) if set(axes[b]["vals"][j]["tags"]) & {"fp8", "fp4", "quant"}]
            jb = rng.choice(quant) if quant else rng.randrange(1, len(axes[b]["vals"]))
            d = rng.uniform(0.08, 0.3)
            inter.append((lambda idx, a=a, b=b, ja=ja, jb=jb: idx[a] == ja and idx[b] == jb, d))
            if rng.random() < 0.5:
                eff[a][ja] -= rng.uniform(0.02, 0.08)
            sp.labels.append("fast pair %s=%s+%s=%s (+%d%%)" % (sp.names[a], sp.vname(a, ja), sp.names[b], sp.vname(b, jb), round(100 * (math.exp(d) - 1))))
        elif kind in ("pair+", "pair-") and len(axes) >= 2:
            a, b = rng.sample(range(len(axes)), 2)
            if (a, b) in seen_pairs or (b, a) in seen_pairs:
                continue
            seen_pairs.add((a, b))
            ja, jb = rng.randrange(len(axes[a]["vals"])), rng.randrange(len(axes[b]["vals"]))
            d = rng.uniform(0.06, 0.25) * (1 if kind == "pair+" else -1)
            inter.append((lambda idx, a=a, b=b, ja=ja, jb=jb: idx[a] == ja and idx[b] == jb, d))
            if kind == "pair+" and rng.random() < 0.5:
                eff[a][ja] -= rng.uniform(0.02, 0.07)
                eff[b][jb] -= rng.uniform(0.02, 0.07)
            sp.labels.append("%s %s=%s+%s=%s (%+d%%)" % ("pair" if d > 0 else "slow pair", sp.names[a], sp.vname(a, ja), sp.names[b], sp.vname(b, jb), round(100 * (math.exp(d) - 1))))
        elif kind == "coupling" and len(num_axes) >= 2:
            a, b = rng.sample(num_axes, 2)
            if (a, b) in seen_pairs or (b, a) in seen_pairs:
                continue
            seen_pairs.add((a, b))
            c = rng.uniform(0.05, 0.25) * (1 if rng.random() < 0.75 else -1)
            couplings.append((a, b, c))
            sp.labels.append("coupling %s*%s" % (sp.names[a], sp.names[b]))
        elif kind == "triple" and len(axes) >= 3:
            a, b, c = rng.sample(range(len(axes)), 3)
            ja, jb, jc = (rng.randrange(len(axes[x]["vals"])) for x in (a, b, c))
            d = rng.uniform(0.1, 0.3)
            inter.append((lambda idx, a=a, b=b, c=c, ja=ja, jb=jb, jc=jc: idx[a] == ja and idx[b] == jb and idx[c] == jc, d))
            sp.labels.append("triple %s=%s+%s=%s+%s=%s" % (sp.names[a], sp.vname(a, ja), sp.names[b], sp.vname(b, jb), sp.names[c], sp.vname(c, jc)))
    # engine facts that are interactions
    spec_a = sp.axis("spec")
    batch_a = sp.axes_of("batch")
    spec_damp = (spec_a, batch_a[0]) if spec_a is not None and batch_a else None
    fimoe = sp.axis("fimoe")
    moe_a = sp.axis("moe")
    fimoe_live = rng.random() < 0.5
    ctk, ctv = sp.axis("ctk"), sp.axis("ctv")
    mixed_penalty = rng.uniform(0.9, 1.6)
    fa_all_quants = rng.random() < 0.25          # a build with GGML_CUDA_FA_ALL_QUANTS
    threads = sp.axis("t")
    ngl = sp.axis("ngl")
    eager_a = [i for i in sp.axes_of("eager")]
    positions = [[position(ax, v) if ax["t"]["kind"] == "num" else 0.0 for v in ax["vals"]] for ax in axes]

    base = math.exp(rng.uniform(math.log(40), math.log(2500)))

    def logspeed(idx):
        s = math.log(base) + sum(eff[a][j] for a, j in enumerate(idx))
        for pred, d in inter:
            if pred(idx):
                s += d
        for a, b, c in couplings:
            s += c * (positions[a][idx[a]] - 0.5) * (positions[b][idx[b]] - 0.5) * 4
        if spec_damp is not None and idx[spec_damp[0]] != 0:
            x = positions[spec_damp[1]][idx[spec_damp[1]]]
            s -= 0.35 * x          # drafting pays at small batches and costs at large ones
        if fimoe is not None:
            live = fimoe_live if moe_a is None else axes[moe_a]["vals"][idx[moe_a]]["name"].startswith("flashinfer")
            if not live:
                s -= eff[fimoe][idx[fimoe]]
        if ctk is not None and ctv is not None:
            k, v = axes[ctk]["vals"][idx[ctk]], axes[ctv]["vals"][idx[ctv]]
            if k["name"] != v["name"] and (("quant" in k["tags"]) or ("quant" in v["tags"])) and not fa_all_quants:
                s -= mixed_penalty          # no fused FA kernel for that K/V pair: falls back to the CPU
        if threads is not None and ngl is not None:
            off = axes[ngl]["offload"][idx[ngl]]
            if off < 1.0:
                tx = positions[threads][idx[threads]]
                s += (1 - off) * 0.6 * (tx - 0.8)
        if eager_a:
            for e in eager_a:
                if idx[e] != 0:
                    for g in sp.axes_of("cgbs"):
                        s -= eff[g][idx[g]]     # no CUDA graphs: their size no longer matters
        return s

    if ctk is not None and ctv is not None:
        sp.labels.append("mixed K/V cache types %s" % ("fine (FA_ALL_QUANTS build)" if fa_all_quants else "fall back to CPU"))

    # ---- cost
    weights_per_gpu = ctx["gib"] / ctx["count"]
    if eng == "llama.cpp":
        load_s = 5 + ctx["gib"] * rng.uniform(0.4, 2.0)
        bench_s = rng.uniform(60, 300)
        timeouts = [300, 600, 900, 1200]
    else:
        load_s = rng.uniform(40, 140) + weights_per_gpu * rng.uniform(1.0, 3.5) + (60 if eng == "trtllm" else 0)
        bench_s = rng.uniform(90, 420)
        timeouts = [900, 1200, 1800, 2400, 3600]
    ok_t = [x for x in timeouts if x >= 2.5 * load_s] or [timeouts[-1]]
    timeout_s = ok_t[0] if rng.random() < 0.6 else rng.choice(ok_t)
    extra = []
    for ax in axes:
        extra.append([rng.uniform(*v["load"]) if v["load"] else 0.0 for v in ax["vals"]])
    capture = rng.uniform(30, 240)
    cg_axes = sp.axes_of("cgbs")
    tp_a = sp.axis("tp")
    mmap_a = sp.axis("mmap")

    def load_of(idx):
        L = load_s
        if tp_a is not None:
            tp = axes[tp_a]["vals"][idx[tp_a]]["eq"]
            L = load_s * (0.45 + 0.55 * ctx["count"] / tp) ** 0.5
        L += sum(extra[a][j] for a, j in enumerate(idx))
        eager = any(idx[e] != 0 for e in eager_a)
        if not eager:
            for g in cg_axes:
                L += capture * positions[g][idx[g]]
        else:
            L *= 0.8
        ol = sp.axis("olevel")
        if ol is not None and axes[ol]["vals"][idx[ol]]["name"] == "0":
            L *= 0.7
        if mmap_a is not None and idx[mmap_a] != 0:
            L *= 1.3
        return L

    # ---- noise
    noise = wchoice(rng, [rng.uniform(0.008, 0.03), rng.uniform(0.03, 0.05), rng.uniform(0.05, 0.1)], [0.6, 0.3, 0.1])

    def noise_of(idx):
        f = 1.0
        for a, j in enumerate(idx):
            f = max(f, axes[a]["vals"][j]["noise"])
        if ngl is not None and axes[ngl]["offload"][idx[ngl]] < 1.0:
            f = max(f, 1.8)
        return min(0.1, noise * f)

    # ---- failures
    few = rng.random() < 0.06
    floor = 0.15
    target = rng.uniform(0.01, 0.12) if few else wchoice(rng, [rng.uniform(0.15, 0.4), rng.uniform(0.4, 0.7), rng.uniform(0.7, 0.85)], [0.25, 0.45, 0.3])
    herring = rng.random() < 0.3
    fit_a = sp.axis("fit")
    fit_base_on = rng.random() < 0.7

    plain = ("auto", "none", "off", "on", "0", "1", "false", "true", "f16", "bf16", "bfloat16", "layer", "fcfs")

    def other_axis(exclude, idx, r):
        """An axis not at fault whose value in this cell has a name worth echoing."""
        others = [i for i in range(len(axes)) if i not in exclude and axes[i]["t"]["role"] in ("kernel", "dtype", "spec")
                  and axes[i]["vals"][idx[i]]["name"] not in plain]
        return r.choice(others) if others else None

    def herring_line(line_t, exclude):
        """A line whose only named value belongs to an axis that is not at fault."""
        def f(idx, r):
            o = other_axis(exclude, idx, r)
            base_line = line_t(idx, r) if callable(line_t) else line_t
            if o is None:
                return base_line
            v = axes[o]["vals"][idx[o]]["name"]
            w = axes[o]["t"]["words"][0]
            if base_line == "":
                # a silent death: the last line in the log is a warning that echoes the config
                if eng == "llama.cpp":
                    return "W %s = %s is experimental and may be slower" % (w, v)
                return "WARNING: %s %s is experimental; make sure your model supports it" % (sp.flag(o), v)
            # an asynchronous CUDA error surfaces in whichever kernel runs next
            return "%s [in %s %s]" % (base_line, v, w)
        return f

    # 1. kernels not built for this GPU
    arch_named = rng.random() < 0.65
    flips = []
    if rng.random() < 0.1:
        cands = [(a, j) for a in range(len(axes)) for j in range(1, len(axes[a]["vals"]))
                 if axes[a]["t"]["role"] == "kernel" and fam_ok(axes[a]["vals"][j], fam) and axes[a]["vals"][j]["ok"] is not None]
        if cands:
            flips.append(("drop", rng.choice(cands)))
    if rng.random() < 0.1:
        cands = [(a, j) for a in range(len(axes)) for j in range(1, len(axes[a]["vals"])) if not fam_ok(axes[a]["vals"][j], fam)]
        if cands:
            flips.append(("add", rng.choice(cands)))
    arch_vals = []
    for a in range(len(axes)):
        for j in range(len(axes[a]["vals"])):
            v = axes[a]["vals"][j]
            bad = not fam_ok(v, fam)
            if ("add", (a, j)) in flips:
                bad = False
            if ("drop", (a, j)) in flips:
                bad = True
            if bad:
                arch_vals.append((a, j, ("drop", (a, j)) in flips))
    for a, j, dropped in arch_vals:
        v = axes[a]["vals"][j]
        named = arch_named and v["arch"] and not dropped
        pick = rng.randrange(100)
        if named:
            t_line = v["arch"][pick % len(v["arch"])]
        else:
            t_line = GENERIC_ARCH[eng][pick % len(GENERIC_ARCH[eng])]
        t_line = t_line.replace("{cap}", cap).replace("{capn}", cap)
        ln = t_line
        if herring and not named and rng.random() < 0.6:
            ln = herring_line(t_line, [a])
        sp.apply(lambda idx, a=a, j=j: idx[a] == j, "crash/arch", ln, None)
    if arch_vals:
        sp.labels.append("arch %d value%s (%s%s)" % (len(arch_vals), "s" if len(arch_vals) > 1 else "",
                                                   "named" if arch_named else "unnamed", ", build differs" if flips else ""))

    # 2. weights that do not fit at small tensor parallel sizes
    if tp_a is not None:
        for j, v in enumerate(axes[tp_a]["vals"]):
            if ctx["gib"] / (ctx["mem"] * v["eq"]) > 0.9:
                t_line = rng.choice(OOM_KV[eng] if eng != "vllm" else OOM_ACT[eng][:1])
                sp.apply(lambda idx, j=j: idx[tp_a] == j, "crash/oom", lambda idx, r, t=t_line: fmt(t, r), "weights OOM at tp=%s" % v["name"], stage=STAGE["oom-weights"])

    # llama.cpp: offloading more layers than fit. With --fit on (the default) the server
    # trims what does not fit and serves slower; with --fit off it fails to allocate.
    if ngl is not None:
        fits = axes[ngl]["fits"]
        over = [j for j, v in enumerate(axes[ngl]["vals"]) if v["eq"] >= 0 and min(v["eq"], ctx["layers"]) > fits]
        if over:
            sp.ngl_over = over
            t_line = OOM_ACT[eng][0]
            if fit_a is not None:
                sp.apply(lambda idx: idx[ngl] in over and idx[fit_a] != 0, "crash/oom", lambda idx, r: fmt(t_line, r),
                         "-ngl over capacity: --fit on trims, off crashes", stage=STAGE["oom-weights"])
            elif not fit_base_on:
                sp.apply(lambda idx: idx[ngl] in over, "crash/oom", lambda idx, r: fmt(t_line, r),
                         "-ngl over capacity crashes (--fit off)", stage=STAGE["oom-weights"])
            else:
                sp.labels.append("-ngl over capacity trimmed by --fit")

    # loads that run past the start-up timeout (a long JIT or compile on top of a slow load);
    # people set the timeout so that most cells fit under it
    loads = [load_of(idx) for idx in sp.grid]
    while sum(1 for L in loads if L >= timeout_s) > 0.15 * sp.n and timeout_s < timeouts[-1]:
        timeout_s = min(x for x in timeouts if x > timeout_s)
    if sp.apply(lambda idx: loads[sp.grid_index[idx]] >= timeout_s, "timeout/startup", "", None):
        sp.labels.append("%d loads past the %ds timeout" % (sum(1 for L in loads if L >= timeout_s), timeout_s))

    if sp.share() < floor:
        return None          # the GPU alone rules out too much: draw again


    # 3. drawn failure patterns

    def pick_value(prefer=None, roles=("kernel", "dtype", "fa", "env"), nondefault=0.9):
        axs = [i for i in range(len(axes)) if axes[i]["t"]["role"] in roles]
        if not axs:
            return None
        a = rng.choice(axs)
        js = list(range(len(axes[a]["vals"])))
        if rng.random() < nondefault and len(js) > 1:
            js = js[1:]
        wts = [3.0 if prefer and set(axes[a]["vals"][j]["tags"]) & set(prefer) else 1.0 for j in js]
        return a, wchoice(rng, js, wts)

    def partner(b):
        n = len(axes[b]["vals"])
        return rng.randrange(1, n) if rng.random() < 0.75 else rng.randrange(n)

    def with_auto(a, js):
        """A fault in the kernel that auto picks is a fault of auto too, most of the time."""
        auto = autos[a]
        if auto is None or 0 in js:
            return js
        names = [axes[a]["vals"][j]["name"] for j in js]
        if auto["name"] in names and rng.random() < 0.5:
            return js + [0]
        return js

    def high(a, frac):
        n = len(axes[a]["vals"])
        order = sorted(range(n), key=lambda j: positions[a][j])
        k = max(1, int(round(n * frac)))
        return set(order[-k:])

    def p_garbage(fl, broad=False):
        pv = pick_value(prefer=("fp4", "fp8", "flashinfer", "trtllm", "cutlass", "quant"))
        if pv is None:
            return False
        a, j = pv
        js = with_auto(a, [j])
        if broad:
            keep = rng.randrange(len(axes[a]["vals"]))
            js = [k for k in range(len(axes[a]["vals"])) if k != keep]
        cause = wchoice(rng, ["repeat", "loop", "low-information", "invalid-text", "empty", "nan", "http"], [0.4, 0.12, 0.12, 0.12, 0.08, 0.1, 0.06 if eng in ("llama.cpp", "vllm") else 0.0])
        texts = GARBAGE[cause]
        if broad:
            pred = lambda idx: idx[a] in js
            lab = "few serve: garbage/%s from every %s but %s" % (cause, sp.names[a], sp.vname(a, keep))
        elif rng.random() < 0.5 and len(axes) > 1:
            b = rng.choice([x for x in range(len(axes)) if x != a])
            jb = partner(b)
            pred = lambda idx: idx[a] in js and idx[b] == jb
            lab = "garbage/%s %s=%s+%s=%s" % (cause, sp.names[a], sp.vname(a, j), sp.names[b], sp.vname(b, jb))
        else:
            pred = lambda idx: idx[a] in js
            lab = "garbage/%s %s=%s%s" % (cause, sp.names[a], sp.vname(a, j), " (auto too)" if 0 in js and j != 0 else "")
        t = rng.choice(texts if cause != "nan" or eng == "sglang" else texts[:1])
        return sp.apply(pred, "garbage/" + cause, lambda idx, r: t, lab, floor=fl)

    def p_wrong(fl):
        pv = pick_value(prefer=("fp8", "fp4", "quant", "trtllm"))
        if pv is None or len(axes) < 2:
            return False
        a, j = pv
        js = with_auto(a, [j])
        b = rng.choice([x for x in range(len(axes)) if x != a])
        jbs = [partner(b)]
        check = "math" if rng.random() < 0.8 else "ok"
        t = rng.choice(WRONG[check])
        return sp.apply(lambda idx: idx[a] in js and idx[b] in jbs, "wrong/" + check, t,
                        "wrong/%s %s=%s+%s=%s" % (check, sp.names[a], sp.vname(a, j), sp.names[b], sp.vname(b, jbs[0])), floor=fl)

    def p_loadbreak(fl):
        pv = pick_value(prefer=("fp4", "flashinfer", "trtllm"), roles=("kernel", "dtype", "spec", "car", "toggle"))
        if pv is None:
            return False
        a, j = pv
        verdict, t = rng.choice(LOAD_BREAK)
        batch = [b for b in sp.axes_of("batch", "cgbs", "chunk") if b != a]
        conc = rng.choice([16, 32, 64, 128, 256])
        if batch:
            b = rng.choice(batch)
            hs = high(b, rng.uniform(0.3, 0.6))
            pred = lambda idx: idx[a] == j and idx[b] in hs
            lab = "load-only %s %s=%s at high %s" % (verdict, sp.names[a], sp.vname(a, j), sp.names[b])
        else:
            pred = lambda idx: idx[a] == j
            lab = "load-only %s %s=%s" % (verdict, sp.names[a], sp.vname(a, j))
        return sp.apply(pred, verdict, lambda idx, r: fmt(t, r, c=conc, k=r.randint(max(1, conc // 8), conc - 1)), lab, floor=fl, stage=STAGE["load"])

    def flag_form(a, j):
        """How a message writes a value in flag form: '--attention-backend fa3', '--enable-torch-compile'."""
        t, v = axes[a]["t"], sp.vname(a, j)
        if t["kind"] == "bool":
            if eng == "trtllm":
                return "%s=%s" % (t["words"][0], v)
            return t["flag"] if j != 0 else "no %s" % t["flag"]
        return "%s %s" % (t["flag"], v)

    def word_form(a, j):
        """How a message writes a value in words: 'fa3 attention backend', 'torch compile'."""
        t, v = axes[a]["t"], sp.vname(a, j)
        if t["kind"] == "bool":
            return t["words"][0] if j != 0 else "disabled %s" % t["words"][0]
        return "%s %s" % (v, t["words"][0])

    def p_config(fl):
        if eng == "llama.cpp":
            return False        # llama.cpp accepts nearly any mix; its real conflicts are listed below
        choice_roles = ("kernel", "dtype", "spec", "toggle", "compile", "car", "backend")
        As = [i for i in range(len(axes)) if axes[i]["t"]["role"] in choice_roles]
        if not As or len(axes) < 2:
            return False
        a = rng.choice(As)
        Bs = [i for i in range(len(axes)) if i != a and (axes[i]["t"]["role"] in choice_roles + ("page", "tp", "ep"))]
        if not Bs:
            return False
        b = rng.choice(Bs)
        ja = rng.randrange(1, len(axes[a]["vals"]))
        style = wchoice(rng, ["both", "one", "requires", "none"], [0.35, 0.3, 0.25, 0.1 if eng == "trtllm" else 0.03])
        va = sp.vname(a, ja)
        if style == "requires":
            nb = len(axes[b]["vals"])
            keep = sorted(rng.sample(range(nb), max(1, nb // 3)))
            bad = [j for j in range(nb) if j not in keep]
            if axes[b]["t"]["kind"] == "bool" or len(keep) == 1:
                t = rng.choice(["ValueError: %s requires %s" % (flag_form(a, ja), flag_form(b, keep[-1])),
                                "AssertionError: %s requires %s" % (word_form(a, ja), word_form(b, keep[-1]))])
            else:
                allowed = ", ".join("'%s'" % sp.vname(b, j) for j in keep)
                t = rng.choice(["ValueError: %s requires %s in [%s]" % (flag_form(a, ja), sp.flag(b), allowed),
                                "AssertionError: %s only supports %s in [%s]" % (word_form(a, ja), sp.word(b), allowed)])
            lab = "conflict %s=%s requires %s" % (sp.names[a], va, sp.names[b])
        else:
            jb = partner(b)
            bad = [jb]
            vb = sp.vname(b, jb)
            if style == "both":
                if eng == "vllm" and sp.names[a] == "attn" and axes[b]["t"]["kind"] != "bool":
                    t = "ValueError: Selected backend AttentionBackendEnum.%s is not valid for this configuration. Reason: ['%s not supported']" % (va, sp.word(b))
                else:
                    t = rng.choice(["ValueError: %s cannot be used with %s" % (flag_form(a, ja), flag_form(b, jb)),
                                    "NotImplementedError: %s does not support %s" % (word_form(a, ja), word_form(b, jb))])
            elif style == "one":
                t = rng.choice(["ValueError: %s is not supported in this configuration" % word_form(a, ja),
                                "NotImplementedError: %s is not supported yet" % word_form(b, jb)])
            else:
                t = "pydantic_core._pydantic_core.ValidationError: 1 validation error for TorchLlmArgs"
            lab = "conflict %s=%s x %s=%s (%s)" % (sp.names[a], va, sp.names[b], vb, style)
        return sp.apply(lambda idx: idx[a] == ja and idx[b] in bad, "crash/config", t, lab, floor=fl)

    def p_invalid(fl):
        pv = pick_value(roles=("kernel", "dtype", "spec", "sched"), nondefault=1.0)
        if pv is None:
            return False
        a, j = pv
        if eng == "llama.cpp" and sp.vname(a, j) not in ("iq4_nl", "q5_0", "q5_1", "bf16", "q4_1"):
            return False        # only the newer cache types are missing from older builds
        if eng == "llama.cpp":
            t = "error: invalid argument: %s %s" % (sp.flag(a), sp.vname(a, j))
        elif eng == "trtllm":
            t = "pydantic_core._pydantic_core.ValidationError: 1 validation error for TorchLlmArgs"
        else:
            prog = "launch_server.py" if eng == "sglang" else "vllm serve"
            choices = ", ".join("'%s'" % v["name"] for v in axes[a]["pool"] if v["name"] != sp.vname(a, j))
            t = "%s: error: argument %s: invalid choice: '%s' (choose from %s)" % (prog, sp.flag(a), sp.vname(a, j), choices)
        return sp.apply(lambda idx: idx[a] == j, "crash/config", t, "unknown to this build %s=%s" % (sp.names[a], sp.vname(a, j)), floor=fl)

    def oom(kind, fl, q=None, protect=True):
        hung = []
        for a, ax in enumerate(axes):
            role = ax["t"]["role"]
            w = rng.uniform(0.5, 1.5)
            if kind == "act":
                if role == "mem":
                    hung.append((a, w, [positions[a][j] ** 2 for j in range(len(ax["vals"]))]))
                elif role in ("chunk", "cgbs"):
                    hung.append((a, w, [positions[a][j] for j in range(len(ax["vals"]))]))
                elif role == "batch":
                    hung.append((a, 0.5 * w, [positions[a][j] for j in range(len(ax["vals"]))]))
                elif role == "tp":
                    hung.append((a, w, [1 - positions[a][j] for j in range(len(ax["vals"]))]))
                elif role in ("compile", "spec", "eager"):
                    sign = -0.6 if role == "eager" else (0.3 if role == "compile" else 0.5)
                    hung.append((a, w, [0.0 if j == 0 else sign for j in range(len(ax["vals"]))]))
                elif role == "ngl":
                    hung.append((a, w, ax["offload"]))
            else:
                if role == "mem":
                    hung.append((a, w, [(1 - positions[a][j]) ** 2 for j in range(len(ax["vals"]))]))
                elif role in ("tp",):
                    hung.append((a, w, [1 - positions[a][j] for j in range(len(ax["vals"]))]))
                elif role in ("ctx",):
                    hung.append((a, w, [positions[a][j] for j in range(len(ax["vals"]))]))
                elif role == "batch" and eng == "trtllm":
                    hung.append((a, w, [positions[a][j] for j in range(len(ax["vals"]))]))
                elif role == "dtype":
                    width = []
                    for v in ax["vals"]:
                        tg = v["tags"]
                        width.append(0.25 if "fp4" in tg else 0.5 if ("fp8" in tg or "quant" in tg) else 1.0)
                    hung.append((a, 0.6 * w, width))
                elif role == "spec":
                    hung.append((a, 0.5 * w, [0.0 if j == 0 else 0.4 for j in range(len(ax["vals"]))]))
        if not hung or not any(max(h) - min(h) > 0 for _, _, h in hung):
            return False
        score = [sum(w * h[idx[a]] for a, w, h in hung) for idx in sp.grid]
        q = rng.uniform(0.05, 0.35) if q is None else q
        thr = sorted(score)[min(sp.n - 1, int(sp.n * (1 - q)))]
        if protect and score[0] > thr and rng.random() < 0.85:
            thr = score[0]          # engine defaults are chosen to fit, most of the time
        mode = wchoice(rng, ["torch", "sigkill", "mixed"], [0.6, 0.2, 0.2])
        bank = OOM_ACT[eng] if kind == "act" else OOM_KV[eng]
        gmu_a = sp.axis("gmu")
        tmpl = rng.choice(bank)

        def line(idx, r):
            g = axes[gmu_a]["vals"][idx[gmu_a]]["name"] if gmu_a is not None else "0.9"
            return fmt(tmpl, r, gmu=g)

        def kill_line(idx, r):
            return fmt(rng_choice(KILL_LINES[eng], r), r)
        hungry = [a for a, _, _ in hung]
        if herring and rng.random() < 0.4:
            line = herring_line(line, hungry)
        if herring and rng.random() < 0.5:
            kill_line = herring_line(kill_line, hungry)

        cells = set(c for c in range(sp.n) if score[c] > thr)
        if not cells:
            return False
        hit = {sp.grid[c] for c in cells}
        if fit_a is not None or (eng == "llama.cpp" and fit_base_on):
            # --fit shrinks what does not fit: those cells serve, slower
            pen = rng.uniform(0.1, 0.5)
            sp.fit_slow = getattr(sp, "fit_slow", []) + [(hit, pen)]
            if fit_a is None:
                sp.labels.append("oom-%s hidden by --fit (slower)" % kind)
                return False
            hit = {idx for idx in hit if idx[fit_a] != 0}
        # silent kills and torch OOMs are different verdicts
        lab = "oom-%s q=%d%% (%s) on %s" % (kind, round(100 * q), mode, "+".join(sp.names[a] for a, _, _ in hung))
        ok1 = True
        if mode == "sigkill":
            ok1 = sp.apply(lambda idx: idx in hit, "crash/signal", kill_line, lab, floor=fl)
        elif mode == "torch":
            ok1 = sp.apply(lambda idx: idx in hit, "crash/oom", line, lab, floor=fl)
        else:
            kill = {idx for c, idx in enumerate(sp.grid) if idx in hit and sp.cell_rng(7777, c).random() < 0.3}
            ok1 = sp.apply(lambda idx: idx in hit and idx not in kill, "crash/oom", line, lab, floor=fl)
            if ok1 and kill:
                sp.apply(lambda idx: idx in kill, "crash/signal", kill_line, None, floor=fl)
        return ok1

    def p_oom_act(fl):
        return oom("act", fl)

    def p_oom_kv(fl):
        return oom("kv", fl)

    def p_hang(fl):
        pv = pick_value(prefer=("jit", "flashinfer"), roles=("kernel", "spec", "car", "toggle", "compile", "backend", "dtype"))
        if pv is None:
            return False
        a, j = pv
        if rng.random() < 0.5 and len(axes) > 1:
            b = rng.choice([x for x in range(len(axes)) if x != a])
            jb = partner(b)
            return sp.apply(lambda idx: idx[a] == j and idx[b] == jb, "timeout/startup", "",
                            "hang %s=%s+%s=%s" % (sp.names[a], sp.vname(a, j), sp.names[b], sp.vname(b, jb)), floor=fl)
        return sp.apply(lambda idx: idx[a] == j, "timeout/startup", "", "hang %s=%s" % (sp.names[a], sp.vname(a, j)), floor=fl)

    def p_request_timeout(fl):
        pv = pick_value(roles=("spec", "sched", "kernel", "toggle"))
        if pv is None:
            return False
        a, j = pv
        return sp.apply(lambda idx: idx[a] == j, "timeout/request", "", "request hang %s=%s" % (sp.names[a], sp.vname(a, j)), floor=fl)

    def p_cuda(fl):
        pv = pick_value(prefer=("flashinfer", "cutlass", "triton", "fp4"))
        if pv is None:
            return False
        a, j = pv
        js = with_auto(a, [j])
        t = rng.choice(CUDA_LINES[eng])
        ln = herring_line(t, [a]) if herring and rng.random() < 0.7 else t
        cg = [g for g in sp.axes_of("cgbs", "batch") if g != a]
        eager = eager_a[0] if eager_a else None
        if cg and rng.random() < 0.6:
            g = rng.choice(cg)
            hs = high(g, rng.uniform(0.25, 0.6))
            pred = lambda idx: idx[a] in js and idx[g] in hs and (eager is None or idx[eager] == 0)
            lab = "crash/cuda %s=%s at high %s%s" % (sp.names[a], sp.vname(a, j), sp.names[g], " (not in eager)" if eager is not None else "")
        else:
            pred = lambda idx: idx[a] in js and (eager is None or idx[eager] == 0)
            lab = "crash/cuda %s=%s" % (sp.names[a], sp.vname(a, j))
        return sp.apply(pred, "crash/cuda", ln, lab, floor=fl)

    def p_combo_arch(fl):
        pv = pick_value(prefer=("triton", "cutlass", "jit"))
        num = [g for g in sp.axes_of("chunk", "batch", "cgbs", "page")]
        if pv is None or not num:
            return False
        a, j = pv
        g = rng.choice([x for x in num if x != a] or num)
        if g == a:
            return False
        hs = high(g, rng.uniform(0.2, 0.5))
        limit = {80: 166912, 89: 101376, 90: 232448, 100: 232448, 120: 101376}[fam]
        t = "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: %d, Hardware limit: %d. Reducing block sizes or `num_stages` may help." % (limit + rng.choice([16384, 32768, 65536]), limit)
        return sp.apply(lambda idx: idx[a] == j and idx[g] in hs, "crash/arch", t,
                        "arch combo %s=%s at high %s (shared memory)" % (sp.names[a], sp.vname(a, j), sp.names[g]), floor=fl)

    def p_compile(fl):
        c = sp.axis("compile")
        if c is None:
            ol = sp.axis("olevel")
            if ol is None:
                return False
            c = ol
        on = [j for j in range(len(axes[c]["vals"])) if axes[c]["vals"][j]["name"] in ("on", "3", "2")]
        pv = pick_value(roles=("kernel", "dtype", "spec"))
        if pv is None or pv[0] == c:
            return False
        a, j = pv
        t = rng.choice([x for x in EXIT_LINES[eng] if x] + [""])
        return sp.apply(lambda idx: idx[c] in on and idx[a] == j, "crash/exit", t,
                        "compile fails %s=%s with %s" % (sp.names[a], sp.vname(a, j), sp.names[c]), floor=fl)

    def p_exit(fl):
        pv = pick_value()
        if pv is None or len(axes) < 2:
            return False
        a, j = pv
        b = rng.choice([x for x in range(len(axes)) if x != a])
        jb = partner(b)
        t = rng.choice(EXIT_LINES[eng])
        ln = herring_line(t, [a, b]) if herring and rng.random() < 0.5 else t
        return sp.apply(lambda idx: idx[a] == j and idx[b] == jb, "crash/exit", ln,
                        "crash/exit %s=%s+%s=%s" % (sp.names[a], sp.vname(a, j), sp.names[b], sp.vname(b, jb)), floor=fl)

    def p_assert(fl):
        if len(axes) < 2:
            return False
        a, b = rng.sample(range(len(axes)), 2)
        ja = rng.randrange(1, len(axes[a]["vals"]))
        jb = partner(b)
        t = fmt(rng.choice(ASSERT_LINES[eng]), random.Random(rng.randrange(1 << 30)))     # one source line per fault
        return sp.apply(lambda idx: idx[a] == ja and idx[b] == jb, "crash/assert", t,
                        "crash/assert %s=%s+%s=%s" % (sp.names[a], sp.vname(a, ja), sp.names[b], sp.vname(b, jb)), floor=fl)

    def p_model(fl):
        s = sp.axis("spec")
        if s is None:
            b = sp.axis("backend")
            if b is None:
                return False
            j = rng.randrange(1, len(axes[b]["vals"]))
            t = "ValueError: Model architectures ['%s'] are not supported for now." % rng.choice(["Qwen3_5MoeForConditionalGeneration", "Gemma4ForCausalLM", "MiniMaxM2ForCausalLM"])
            return sp.apply(lambda idx: idx[b] == j, "crash/model", t, "model unsupported by %s=%s" % (sp.names[b], sp.vname(b, j)), floor=fl)
        j = rng.randrange(1, len(axes[s]["vals"]))
        if sp.vname(s, j).lower().startswith("ngram"):
            return False
        draft = rng.choice(["yuhuili/EAGLE3-LLaMA3.3-Instruct-70B", "lmsys/sglang-EAGLE3-Qwen3-235B-A22B", "nvidia/Qwen3.5-397B-Eagle3"])
        t = rng.choice(MODEL_LINES)
        return sp.apply(lambda idx: idx[s] == j, "crash/model", lambda idx, r: fmt(t, r, draft=draft),
                        "draft model unreachable for %s=%s" % (sp.names[s], sp.vname(s, j)), floor=fl)

    def p_driver(fl):
        cands = [(a, j) for a in range(len(axes)) for j in range(1, len(axes[a]["vals"])) if "jit" in axes[a]["vals"][j]["tags"]]
        if not cands:
            return False
        a, j = rng.choice(cands)
        t = rng.choice(DRIVER_LINES)
        return sp.apply(lambda idx: idx[a] == j, "crash/driver", t, "driver too old for %s=%s" % (sp.names[a], sp.vname(a, j)), floor=fl)

    def p_nccl(fl):
        if tp_a is None and ctx["count"] < 2:
            return False
        car = sp.axis("car")
        if car is not None and ctx["link"] != "nvlink":
            # custom all-reduce without P2P: the default (custom all-reduce on) is the broken one
            verdict = wchoice(rng, ["garbage/repeat", "timeout/startup", "crash/nccl"], [0.4, 0.3, 0.3])
            t = {"garbage/repeat": "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "timeout/startup": "", "crash/nccl": rng.choice(NCCL_LINES)}[verdict]
            multi = (lambda idx: axes[tp_a]["vals"][idx[tp_a]]["eq"] > 1) if tp_a is not None else (lambda idx: True)
            return sp.apply(lambda idx: idx[car] == 0 and multi(idx), verdict, lambda idx, r: fmt(t, r),
                            "custom all-reduce broken on %s (%s)" % (ctx["link"], verdict), floor=fl)
        pv = pick_value(roles=("kernel", "toggle", "car"))
        if pv is None:
            return False
        a, j = pv
        t = rng.choice(NCCL_LINES)
        if tp_a is not None:
            top = max(range(len(axes[tp_a]["vals"])), key=lambda k: axes[tp_a]["vals"][k]["eq"])
            pred = lambda idx: idx[a] == j and idx[tp_a] == top
        else:
            pred = lambda idx: idx[a] == j
        return sp.apply(pred, "crash/nccl", lambda idx, r: fmt(t, r), "crash/nccl %s=%s" % (sp.names[a], sp.vname(a, j)), floor=fl)

    # known engine conflicts, used when their axes are drawn
    def known_conflicts():
        out = []
        A = sp.axis
        if eng == "llama.cpp" and A("ctv") is not None and A("fa") is not None:
            fa, ctv_ = A("fa"), A("ctv")
            off = [j for j in range(len(axes[fa]["vals"])) if sp.vname(fa, j) == "off"]
            quant = [j for j in range(len(axes[ctv_]["vals"])) if "quant" in axes[ctv_]["vals"][j]["tags"]]
            if off and quant:
                out.append((lambda idx, fa=fa, ctv_=ctv_, off=off, quant=quant: idx[fa] in off and idx[ctv_] in quant, "E llama_init_from_model: quantized V cache requires flash_attn to be enabled",
                            "conflict -ctv quantized needs -fa"))
        if eng == "vllm" and A("attn") is not None and A("kv") is not None and fam != 90:
            at, kv = A("attn"), A("kv")
            fa = [j for j in range(len(axes[at]["vals"])) if sp.vname(at, j) == "FLASH_ATTN"]
            f8 = [j for j in range(len(axes[kv]["vals"])) if set(axes[kv]["vals"][j]["tags"]) & {"fp8", "fp4"}]
            if fa and f8:
                out.append((lambda idx, at=at, kv=kv, fa=fa, f8=f8: idx[at] in fa and idx[kv] in f8,
                            "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: ['kv_cache_dtype not supported']",
                            "conflict FLASH_ATTN x fp8 kv"))
        if eng == "vllm" and A("seqs") is not None and A("mbt") is not None:
            s_, m_ = A("seqs"), A("mbt")
            pred = lambda idx, s_=s_, m_=m_: axes[s_]["vals"][idx[s_]]["eq"] > axes[m_]["vals"][idx[m_]]["eq"]
            if any(pred(idx) for idx in sp.grid):
                out.append((pred, lambda idx, r, s_=s_, m_=m_: "ValueError: max_num_batched_tokens (%s) must be greater than or equal to max_num_seqs (%s)." % (axes[m_]["vals"][idx[m_]]["name"], axes[s_]["vals"][idx[s_]]["name"]),
                            "conflict max_num_seqs > max_num_batched_tokens"))
        if eng == "vllm" and A("async") is not None and A("spec") is not None:
            as_, s_ = A("async"), A("spec")
            ng = [j for j in range(len(axes[s_]["vals"])) if sp.vname(s_, j) == "ngram"]
            if ng:
                out.append((lambda idx, as_=as_, s_=s_, ng=ng: idx[as_] == 1 and idx[s_] in ng, "ValueError: Currently, async scheduling is only supported with EAGLE/MTP kind of speculative decoding",
                            "conflict async x ngram"))
        if eng == "sglang" and A("attn") is not None and A("kv") is not None:
            at, kv = A("attn"), A("kv")
            f3 = [j for j in range(len(axes[at]["vals"])) if sp.vname(at, j) == "fa3" or (j == 0 and autos[at] is not None and autos[at]["name"] == "fa3")]
            e5 = [j for j in range(len(axes[kv]["vals"])) if sp.vname(kv, j) == "fp8_e5m2"]
            if f3 and e5:
                out.append((lambda idx, at=at, kv=kv, f3=f3, e5=e5: idx[at] in f3 and idx[kv] in e5, "ValueError: FlashAttention3 backend only supports fp8_e4m3 KV cache, got fp8_e5m2",
                            "conflict fa3 x fp8_e5m2"))
        if eng == "sglang" and A("attn") is not None and A("page") is not None:
            at, pg = A("attn"), A("page")
            need = {"trtllm_mha": ("16", "32", "64"), "trtllm_mla": ("32", "64"), "flashmla": ("64",), "cutlass_mla": ("128",)}
            for j in range(len(axes[at]["vals"])):
                nm = sp.vname(at, j)
                if nm in need:
                    bad = [k for k in range(len(axes[pg]["vals"])) if sp.vname(pg, k) not in need[nm]]
                    if bad:
                        out.append((lambda idx, j=j, bad=bad, at=at, pg=pg: idx[at] == j and idx[pg] in bad,
                                    "ValueError: %s backend requires --page-size in [%s]" % (nm, ", ".join(need[nm])),
                                    "conflict %s requires page size" % nm))
        if A("dpattn") is not None and tp_a is not None:
            d = A("dpattn")
            one = [j for j in range(len(axes[tp_a]["vals"])) if sp.vname(tp_a, j) == "1"]
            if one:
                out.append((lambda idx, d=d, one=one: idx[d] == 1 and idx[tp_a] in one, "AssertionError: --enable-dp-attention requires --dp-size > 1",
                            "conflict dp-attention x tp=1"))
        if eng == "trtllm" and A("ep") is not None and tp_a is not None:
            e = A("ep")
            pred = lambda idx, e=e: axes[e]["vals"][idx[e]]["eq"] > axes[tp_a]["vals"][idx[tp_a]]["eq"]
            if any(pred(idx) for idx in sp.grid):
                out.append((pred, lambda idx, r, e=e: "ValueError: moe_ep_size (%s) must divide tp_size (%s)" % (axes[e]["vals"][idx[e]]["name"], axes[tp_a]["vals"][idx[tp_a]]["name"]),
                            "conflict ep_size > tp_size"))
        if eng == "trtllm" and A("adp") is not None and tp_a is not None:
            d = A("adp")
            one = [j for j in range(len(axes[tp_a]["vals"])) if sp.vname(tp_a, j) == "1"]
            if one:
                out.append((lambda idx, d=d, one=one: idx[d] == 1 and idx[tp_a] in one, "pydantic_core._pydantic_core.ValidationError: 1 validation error for TorchLlmArgs",
                            "conflict attention DP x tp=1"))
        if eng == "vllm" and A("fimoe") is not None and A("ep") is not None:
            f, e = A("fimoe"), A("ep")
            mg = [j for j in range(len(axes[f]["vals"])) if sp.vname(f, j) == "masked_gemm"]
            if mg:
                out.append((lambda idx, f=f, e=e, mg=mg: idx[f] in mg and idx[e] == 0, "ValueError: VLLM_FLASHINFER_MOE_BACKEND=masked_gemm requires expert parallelism",
                            "conflict masked_gemm needs EP"))
        return out

    # a space where very few cells serve has one dominant reason
    if few:
        floor = 1.0 / sp.n
        dom = wchoice(rng, ["memory", "kernels", "broken"], [0.45, 0.35, 0.2])
        ok_few = False
        if dom == "memory":
            ok_few = oom("act" if rng.random() < 0.6 else "kv", floor, q=rng.uniform(0.75, 0.95), protect=False)
        if dom == "kernels" or not ok_few:
            kern = [a for a in range(len(axes)) if axes[a]["t"]["role"] in ("kernel", "dtype") and len(axes[a]["vals"]) >= 3]
            if kern:
                a = max(kern, key=lambda i: len(axes[i]["vals"]))
                keep = set(rng.sample(range(len(axes[a]["vals"])), rng.choice([1, 1, 2])))
                t = rng.choice(GENERIC_ARCH[eng])
                ok_few = sp.apply(lambda idx: idx[a] not in keep, "crash/arch", t,
                                  "few serve: build lacks %s kernels for %s but %s" % (sp.names[a], ctx["sm"], "/".join(sp.vname(a, j) for j in sorted(keep))), floor=floor)
        if not ok_few:
            ok_few = p_garbage(floor, broad=True)
        if not ok_few:
            return None
    if few:
        floor = 1.0 / sp.n

    for pred, t, lab in known_conflicts():
        if rng.random() < 0.75:
            sp.apply(pred, "crash/config", t, lab, floor=floor)

    # llama.cpp splits -c among the -np slots: a slot smaller than the bench's requests
    # answers HTTP 400 under load, while the checks (short prompts) pass
    np_a, ctx_a = sp.axis("np"), sp.axis("ctx")
    if np_a is not None and ctx_a is not None and rng.random() < 0.8:
        need = rng.choice([1280, 2304, 4352])
        def small(idx):
            return axes[ctx_a]["vals"][idx[ctx_a]]["eq"] / axes[np_a]["vals"][idx[np_a]]["eq"] < need
        def line(idx, r):
            slot = int(axes[ctx_a]["vals"][idx[ctx_a]]["eq"] / axes[np_a]["vals"][idx[np_a]]["eq"])
            return "under load (%d concurrent): HTTP 400 request (%d tokens) exceeds the available context size (%d tokens)" % (
                max(8, int(axes[np_a]["vals"][idx[np_a]]["eq"])), need - r.randint(0, 200), slot)
        sp.apply(small, "garbage/http", line, "per-slot context -c/-np too small for the bench", floor=floor, stage=STAGE["load"])

    menu = [(p_config, 0.3), (p_garbage, 0.3), (p_oom_act, 0.35), (p_oom_kv, 0.2), (p_wrong, 0.2),
            (p_loadbreak, 0.15), (p_hang, 0.15), (p_cuda, 0.15), (p_combo_arch, 0.08), (p_compile, 0.25),
            (p_invalid, 0.07), (p_request_timeout, 0.06), (p_model, 0.05), (p_driver, 0.04),
            (p_exit, 0.06), (p_assert, 0.1 if eng in ("llama.cpp", "trtllm") else 0.04), (p_nccl, 0.15)]
    limit = {p_oom_act: 1, p_oom_kv: 1, p_invalid: 1, p_model: 1, p_driver: 1, p_nccl: 1}
    used = {}

    def use(f):
        if used.get(f, 0) >= limit.get(f, 2):
            return False
        used[f] = used.get(f, 0) + 1
        return f(floor)

    drawn = [f for f, p in menu if rng.random() < p]
    rng.shuffle(drawn)
    for f in drawn:
        use(f)
    # more faults until the share of cells that serve is down to the space's target
    extra_menu = [p_config, p_garbage, p_oom_act, p_oom_kv, p_wrong, p_hang, p_cuda, p_loadbreak, p_invalid, p_assert, p_exit]
    extra_w = [2, 2, 2, 1, 1.2, 0.8, 1, 1, 0.4, 0.5 if eng in ("llama.cpp", "trtllm") else 0.2, 0.3]
    tries = 0
    while sp.share() > target and tries < 30:
        tries += 1
        use(wchoice(rng, extra_menu, extra_w))

    # the defaults cell failing: auto picks a kernel that is broken here
    default_fails = rng.random() < 0.1
    if default_fails and sp.fail[0] is None:
        cats = [a for a in range(len(axes)) if axes[a]["t"]["role"] in ("kernel", "dtype", "car")]
        if cats:
            a = rng.choice(cats)
            picked = autos[a]["name"] if autos[a] is not None else sp.vname(a, 0)
            verdict = wchoice(rng, ["wrong/math", "garbage/repeat", "garbage/low-information", "crash/cuda"], [0.35, 0.35, 0.1, 0.2])
            if verdict == "wrong/math":
                t = rng.choice(WRONG["math"])
            elif verdict.startswith("garbage"):
                t = rng.choice(GARBAGE[verdict.split("/")[1]])
            else:
                t = rng.choice(CUDA_LINES[eng])
            if rng.random() < 0.5 and len(axes) > 1:
                b = rng.choice([x for x in range(len(axes)) if x != a])
                pred = lambda idx: idx[a] == 0 and idx[b] == 0
                lab = "default fails: %s=%s(%s)+%s=%s %s" % (sp.names[a], sp.vname(a, 0), picked, sp.names[b], sp.vname(b, 0), verdict)
            else:
                pred = lambda idx: idx[a] == 0
                lab = "default fails: %s=%s(%s) %s" % (sp.names[a], sp.vname(a, 0), picked, verdict)
            sp.apply(pred, verdict, t, lab, floor=floor)
        elif sp.axes_of("mem"):
            m = sp.axes_of("mem")[0]
            sp.apply(lambda idx: idx[m] == 0, "crash/oom", lambda idx, r: fmt(OOM_ACT[eng][0], r),
                     "default fails: %s=%s OOM" % (sp.names[m], sp.vname(m, 0)), floor=floor)

    # ---- assemble the cells
    over = getattr(sp, "ngl_over", None)
    eff_fit = axes[ngl]["eff_fit"] if ngl is not None else 0.0
    fit_slow = getattr(sp, "fit_slow", [])
    cells = []
    spd = []
    for c, idx in enumerate(sp.grid):
        ls = logspeed(idx)
        if over is not None and idx[ngl] in over:
            ls += eff_fit - eff[ngl][idx[ngl]]     # what is left on the GPU is what fits
        for hit, pen in fit_slow:
            if idx in hit and (fit_a is None or idx[fit_a] == 0):
                ls -= pen
        s = math.exp(ls)
        L = loads[c]
        f = sp.fail[c]
        cell = {"s": round(s, 2) if s < 100 else round(s, 1)}
        if f is not None:
            cell["fail"] = f[1]
            cell["line"] = f[2]
        if abs(L - load_s) > 0.05 * load_s:
            cell["load"] = round(L)
        nz = noise_of(idx)
        if abs(nz - noise) > 0.1 * noise:
            cell["noise"] = round(nz, 4)
        cells.append(cell)
        spd.append(s)
    serving = [c for c in range(sp.n) if "fail" not in cells[c]]
    if not serving:
        return None

    # flaky host faults on serving cells
    if rng.random() < 0.2:
        multi_torch = ctx["count"] > 1 and eng != "llama.cpp"
        kind, lines = wchoice(rng, FLAKY, [0.45 if multi_torch else 0.0, 0.3, 0.15, 0.1])
        if kind == "crash/port" and eng == "llama.cpp":
            lines = ["srv    start: couldn't bind HTTP server socket, hostname: 0.0.0.0, port: {port}"]
        if kind == "crash/nccl":
            if tp_a is not None:
                top = max(range(len(axes[tp_a]["vals"])), key=lambda k: axes[tp_a]["vals"][k]["eq"])
                pool = [c for c in serving if sp.grid[c][tp_a] == top]
            else:
                pool = [c for c in serving if rng.random() < 0.35]
        else:
            rate = rng.uniform(0.03, 0.15)
            pool = [c for c in serving if rng.random() < rate]
        p = rng.uniform(0.05, 0.4)
        if kind == "crash/nccl" and len(pool) > 0.45 * sp.n:
            pool = pool[: int(0.45 * sp.n)]
        for c in pool:
            r = sp.cell_rng(9999, c)
            cells[c]["flaky"] = round(min(0.4, max(0.05, p * r.uniform(0.6, 1.4))), 3)
            cells[c]["flaky_fail"] = kind
            cells[c]["flaky_line"] = fmt(r.choice(lines), r)
        if pool:
            sp.labels.append("flaky %s on %d cells (~%.2f)" % (kind, len(pool), p))

    if any(c.get("line", "").endswith("]") and " [in " in c.get("line", "") or c.get("line", "").startswith(("WARNING: ", "W "))
           for c in cells):
        sp.labels.append("red-herring lines")
    best = max(serving, key=lambda c: spd[c])
    sp.best = best
    sp.cells = cells
    out_axes = []
    for ax in axes:
        out_axes.append({"name": ax["t"]["key"], "flag": ax["t"]["flag"], "values": [v["name"] for v in ax["vals"]],
                         "words": ax["t"]["words"]})
    head = "%s on %s%s, %s" % (eng, "%dx " % ctx["count"] if ctx["count"] > 1 else "", ctx["gpu"], ctx["model"])
    if few:
        sp.labels.append("few serve")
    sp.obj = {"name": str(sub), "engine": eng,
              "describe": head + ": " + "; ".join(["curves " + ",".join("%s:%s" % (sp.names[a], curves[a]) for a in range(len(axes)) if curves[a] != "cat")] + sp.labels),
              "noise": round(noise, 4), "load_s": round(load_s), "bench_s": round(bench_s), "timeout_s": timeout_s,
              "axes": out_axes, "cells": cells}
    return sp


def rng_choice(seq, r):
    return seq[r.randrange(len(seq))]


def draw_space(sub, min_cells, max_cells):
    rng = random.Random(sub)
    for _ in range(200):
        ctx = draw_context(rng)
        if ctx is None:
            continue
        axes = draw_axes(rng, ctx, min_cells, max_cells)
        if axes is None:
            continue
        sp = build(rng, sub, ctx, axes, min_cells, max_cells)
        if sp is not None:
            return sp
    raise SystemExit("gen.py: cannot draw space %d with %d-%d cells" % (sub, min_cells, max_cells))


# --------------------------------------------------------------------------- output


def summary_line(sp):
    o = sp.obj
    cells = o["cells"]
    n = len(cells)
    serve = sum(1 for c in cells if "fail" not in c)
    b = sp.best
    idx = sp.grid[b]
    label = ",".join("%s=%s" % (ax["name"], ax["values"][j]) for ax, j in zip(o["axes"], idx))
    shape = "x".join(str(len(ax["values"])) for ax in o["axes"])
    d0 = cells[0].get("fail", "serves")
    s0 = cells[0]["s"]
    return "%s\tcells=%d\tshape=%s\tserve=%.0f%%\tbest=%s %.1f (x%.2f default)\tdefault=%s\t%s" % (
        o["name"], n, shape, 100.0 * serve / n, label, cells[b]["s"], cells[b]["s"] / s0, d0, o["describe"])


def main(argv):
    ap = argparse.ArgumentParser(prog="gen.py", description="draw synthetic tuning spaces of LLM inference servers")
    ap.add_argument("--seed", type=int, help="seed of the run")
    ap.add_argument("--spaces", type=int, help="how many spaces to draw")
    ap.add_argument("--space", type=int, help="redraw one space by its name (sub-seed)")
    ap.add_argument("--min-cells", type=int, default=200)
    ap.add_argument("--max-cells", type=int, default=2000)
    ap.add_argument("--summary", action="store_true", help="one line per space instead of JSON")
    args = ap.parse_args(argv)
    if args.min_cells < 8 or args.max_cells < args.min_cells:
        ap.error("need 8 <= --min-cells <= --max-cells")
    if args.space is not None:
        subs = [args.space]
    elif args.seed is not None and args.spaces is not None:
        subs = [subseed(args.seed, i) for i in range(args.spaces)]
    else:
        ap.error("give --seed and --spaces, or --space")
    out = sys.stdout
    try:
        for sub in subs:
            sp = draw_space(sub, args.min_cells, args.max_cells)
            if args.summary:
                out.write(summary_line(sp) + "\n")
            else:
                out.write(json.dumps(sp.obj, separators=(",", ":"), ensure_ascii=False) + "\n")
        out.flush()
    except BrokenPipeError:
        # the reader stopped early (| head): not an error
        devnull = open("/dev/null", "w")
        sys.stdout = devnull
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
