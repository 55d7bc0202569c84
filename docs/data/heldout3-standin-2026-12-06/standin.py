#!/usr/bin/env python3
"""standin.py -- a third held-out stand-in engine for gauntlet's search (its author did not read
how the search reasons). Two personas, picked by the command line:

  vllm serve MODEL --host H --port P [vLLM flags]                 (bin/vllm)
  python3 -m sglang.launch_server --model-path M --host H --port P [SGLang flags]   (pylib/sglang)

The host comes from the environment:
  STANDIN3_GPU    H100 (the only card these spaces use)
  STANDIN3_GPUS   visible GPUs (default 1)
  STANDIN3_HOST   ok | busy   (busy: the GPUs are held by another job in exclusive-process mode)
  STANDIN3_STATE  a folder where the per-cell launch counter is kept (run.sh: runs/state/NAME);
                  without it every launch counts as the first

The rules come from the model's name. decide(persona, args, env) is the deterministic outcome,
a pure function of the flags; sporadic(persona, args, env, n) is what the n-th launch of the same
command line adds (an NCCL watchdog, a torch.distributed store port taken), decided by a hash of the
cell's flags and n, so every run of a space sees the same sporadic failures in the same launches.
Every launch is appended to STANDIN3_STATE/launches.log (cell key, n, what happened).

A cell that serves answers through tests/standin/fieldsrv.py at a per-token delay set by its
flags. Late outcomes, after the checks have passed:
  late-crash    the engine dies when 3 or more requests are in flight (the bench's concurrency 4)
  late-garbage  after LATE_N requests with ignore_eos (the bench's), every answer is '!'
"""
import argparse
import hashlib
import json
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDSRV_DIR = os.path.normpath(os.path.join(HERE, "../../../tests/standin"))
VLLM_VERSION = "0.11.2"
SGLANG_VERSION = "0.5.6.post1"
LATE_N = 5
PID = os.getpid()
SITE = "/opt/venv/lib/python3.12/site-packages"


def O(kind, **kw):
    kw["kind"] = kind
    return kw


# ====================================== V1: vLLM ======================================
# acme/Qwen3-14B (dense, bf16 weights 27.5 GiB) on one H100 80GB.
def rules_v1(a, ngpu):
    attn, kv, seqs, mbt, gmu = a.attention_backend, a.kv_cache_dtype, a.max_num_seqs, \
        a.max_num_batched_tokens, a.gpu_memory_utilization
    if attn == "FLASH_ATTN" and kv == "fp8_e5m2":
        return O("fail", phase="attn", how="vllm",
                 text="ValueError: FlashAttention-3 on SM90 reads an FP8 KV cache only as torch.float8_e4m3fn, "
                      "got torch.float8_e5m2")
    if seqs == 512 and gmu == 0.95:
        return O("fail", phase="graph", how="vllm",
                 text="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.12 GiB. GPU 0 has a total "
                      "capacity of 79.19 GiB of which 611.44 MiB is free. Including non-PyTorch memory, this "
                      "process has 78.58 GiB memory in use. Of the allocated memory 74.90 GiB is allocated by "
                      "PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated.")
    if attn == "FLEX_ATTENTION" and mbt == 8192:
        return O("fail", phase="compile", how="vllm", slow=3.5,
                 text="torch._inductor.exc.InductorError: LoweringException: AssertionError: num_stages must be "
                      "at least 1 for the tiled kernel (autotuning found no config that fits)")
    d = 20.0
    d *= {"FLASH_ATTN": 1.0, "FLASHINFER": 0.96, "TRITON_ATTN": 1.12, "FLEX_ATTENTION": 1.3}[attn]
    d *= {"auto": 1.0, "fp8": 0.94, "fp8_e5m2": 0.975}[kv]
    d *= {64: 1.05, 256: 1.0, 512: 0.97}[seqs]
    d *= {2048: 1.04, 8192: 1.0}[mbt]
    d *= {0.85: 1.05, 0.95: 1.0}[gmu]
    slow = 3.5 if attn == "FLEX_ATTENTION" else 0.0
    if attn == "FLASHINFER" and kv == "fp8" and seqs == 512:
        d *= 0.93  # the fastest cells of all: they die in the bench
        return O("late-crash", d=d, slow=slow)
    if attn == "TRITON_ATTN" and kv == "fp8":
        return O("late-garbage", d=d, slow=slow)
    return O("serve", d=d, slow=slow)


# ====================================== S1: SGLang ======================================
# acme/Qwen3-30B-A3B-FP8 (an MoE) on 4x H100.
def rules_s1(a, ngpu):
    tp, attn, moe, kv = a.tp_size, a.attention_backend, a.moe_runner_backend, a.kv_cache_dtype
    if attn == "trtllm_mha":
        return O("fail", phase="args", how="main",
                 text="ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a "
                      "different attention backend.")
    if moe == "triton_kernel":
        return O("fail", phase="load", how="sched",
                 text="ModuleNotFoundError: No module named 'triton_kernels'")
    slow = 3.5 if moe == "deep_gemm" else 0.0
    d = 22.0
    d *= {2: 1.0, 4: 0.8}[tp]
    d *= {"fa3": 1.0, "flashinfer": 0.97, "triton": 1.08}[attn]
    d *= {"triton": 1.0, "deep_gemm": 1.07, "flashinfer_cutlass": 0.98, "cutlass": 1.03}[moe]
    d *= {"auto": 1.0, "fp8_e4m3": 0.96, "fp8_e5m2": 1.01}[kv]
    if attn == "triton" and moe == "cutlass":
        d *= 0.80  # neither is good alone; together the MoE and attention kernels share one graph
    if attn == "flashinfer" and kv == "fp8_e5m2":
        return O("garbage", d=d, slow=slow)
    if moe == "deep_gemm" and tp == 2:
        return O("late-crash", d=d, slow=slow)
    if moe == "flashinfer_cutlass" and kv == "fp8_e4m3" and tp == 4:
        return O("late-garbage", d=d, slow=slow)
    return O("serve", d=d, slow=slow)


# ====================================== M1: SGLang, MLA ======================================
# acme/DeepSeek-V2-Lite-Chat (MLA attention) on one H100.
M1_FILES = {"flashinfer": "flashinfer_mla_backend.py", "flashmla": "flashmla_backend.py",
            "fa3": "flashattention_backend.py", "triton": "triton_backend.py"}


def rules_m1(a, ngpu):
    attn, kv, cgbs, mfs, chunk = a.attention_backend, a.kv_cache_dtype, a.cuda_graph_max_bs, \
        a.mem_fraction_static, a.chunked_prefill_size
    if attn == "trtllm_mla":
        return O("fail", phase="args", how="main",
                 text="ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100). Please use a "
                      "different backend.")
    if attn == "cutlass_mla":
        return O("fail", phase="attn", how="sched",
                 text="RuntimeError: CUTLASS MLA kernels are not available: sgl_kernel was built without SM100 "
                      "support (device is sm_90)")
    slow = 3.0 if attn == "flashinfer" else 0.0
    if cgbs == 160 and mfs == 0.88:
        return O("fail", phase="graph", how="sched", slow=slow,
                 text="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total "
                      "capacity of 79.19 GiB of which 1.37 GiB is free. Including non-PyTorch memory, this process "
                      "has 77.81 GiB memory in use. Of the allocated memory 75.02 GiB is allocated by PyTorch, and "
                      "0.96 GiB is reserved by PyTorch but unallocated.")
    d = 21.0
    d *= {"flashinfer": 1.0, "flashmla": 0.93, "fa3": 0.97, "triton": 1.15}[attn]
    d *= {"auto": 1.0, "fp8_e4m3": 0.93}[kv]
    d *= {16: 1.06, 64: 1.0, 160: 0.96}[cgbs]
    d *= {0.80: 1.04, 0.88: 1.0}[mfs]
    d *= {4096: 1.04, 8192: 1.0}[chunk]
    if attn == "fa3" and kv == "fp8_e4m3":
        return O("garbage", d=d, slow=slow)
    if attn == "flashmla" and kv == "fp8_e4m3" and cgbs == 160:
        d *= 0.95  # the fastest cells of all: they die in the bench
        return O("late-crash", d=d, slow=slow)
    return O("serve", d=d, slow=slow)


# ====================================== N1, N2 ======================================
def rules_n1(a, ngpu):  # the checkpoint on disk is truncated: every cell dies loading weights
    return O("fail", phase="load", how="vllm",
             text="safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer")


MODELS = {
    "acme/Qwen3-14B": ("vllm", rules_v1),
    "acme/Qwen3-30B-A3B-FP8": ("sglang", rules_s1),
    "acme/Qwen3-8B-truncated": ("vllm", rules_n1),
    "acme/DeepSeek-V2-Lite-Chat": ("sglang", rules_m1),
    "acme/Qwen3-8B": ("sglang", None),
}


def decide(persona, a, env):
    host = env.get("STANDIN3_HOST", "ok")
    ngpu = int(env.get("STANDIN3_GPUS", "1"))
    if host == "busy":
        return O("fail", phase="init", how="sched",
                 text="RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
                      "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                      "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                      "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    tp = getattr(a, "tp_size", 1)
    if tp > ngpu:
        return O("fail", phase="args", how="main",
                 text="ValueError: tp_size (%d) exceeds the number of visible GPUs (%d)" % (tp, ngpu))
    m = MODELS.get(a.model)
    if m is None or m[1] is None:
        return O("serve", d=15.0, slow=0.0)
    return m[1](a, ngpu)


def cell_key(argv):
    """The cell's flags without host and port, as one string."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x in ("--port", "--host"):
            skip = True
            continue
        out.append(x)
    return " ".join(out)


def h(key):
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16)


def sporadic(persona, a, env, key, n):
    """What the n-th launch (1-based) of this command line meets beyond decide(), or None."""
    oc = decide(persona, a, env)
    if oc["kind"] == "fail":
        return None
    x = h(key)
    if a.model == "acme/DeepSeek-V2-Lite-Chat":
        best = (a.attention_backend == "flashmla" and a.kv_cache_dtype == "fp8_e4m3" and a.cuda_graph_max_bs == 64
                and a.mem_fraction_static == 0.88 and a.chunked_prefill_size == 8192)
        if n == 1 and (x % 5 == 2 or best):
            return O("fail", phase="bind", how="uvicorn")
        return None
    if a.model != "acme/Qwen3-30B-A3B-FP8":
        return None
    if a.tp_size == 4:
        # the PCIe switch between GPUs 2-3 drops an all-reduce now and then: NCCL's watchdog fires
        if n == 1 and (x % 3 == 0 or (a.attention_backend == "triton" and a.moe_runner_backend == "cutlass")):
            return O("fail", phase="watchdog", how="sched")
        if n >= 2 and (x + n) % 9 == 0:
            return O("fail", phase="watchdog", how="sched")
    if a.tp_size == 2 and n == 1 and x % 4 == 1:
        # torch.distributed's rendezvous port still held by the previous launch's store
        return O("fail", phase="store", how="sched",
                 text="torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                      "network address. port: %d, useIpv6: 0, code: -98, name: EADDRINUSE, message: address "
                      "already in use" % (29500 + x % 400))
    return None


def bump(env, key):
    st = env.get("STANDIN3_STATE")
    if not st:
        return 1
    os.makedirs(os.path.join(st, "cells"), exist_ok=True)
    p = os.path.join(st, "cells", "%016x" % h(key) + hashlib.sha1(key.encode()).hexdigest()[8:16])
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b".")
    os.close(fd)
    return os.path.getsize(p)


def record(env, key, n, what):
    st = env.get("STANDIN3_STATE")
    if not st:
        return
    with open(os.path.join(st, "launches.log"), "a") as f:
        f.write(json.dumps({"t": round(time.time(), 3), "key": key, "n": n, "what": what}) + "\n")


# ====================================== parsers ======================================
def vllm_parser():
    p = argparse.ArgumentParser(prog="vllm serve")
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--tensor-parallel-size", "-tp", dest="tp_size", type=int, default=1)
    p.add_argument("--attention-backend", default=None,
                   choices=["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TREE_ATTN"])
    p.add_argument("--kv-cache-dtype", default="auto",
                   choices=["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "nvfp4"])
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--max-num-seqs", type=int, default=256)
    p.add_argument("--max-num-batched-tokens", type=int, default=2048)
    p.add_argument("--max-model-len", type=int, default=None)
    return p


def sglang_parser():
    p = argparse.ArgumentParser(prog="launch_server.py")
    p.add_argument("--model-path", "--model", dest="model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--tp-size", "--tp", dest="tp_size", type=int, default=1)
    p.add_argument("--attention-backend", default="fa3",
                   choices=["triton", "torch_native", "flex_attention", "fa3", "fa4", "flashinfer", "trtllm_mha",
                            "cutlass_mla", "flashmla", "trtllm_mla"])
    p.add_argument("--moe-runner-backend", default="auto",
                   choices=["auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm",
                            "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl", "cutlass", "marlin"])
    p.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "nvfp4"])
    p.add_argument("--mem-fraction-static", type=float, default=0.85)
    p.add_argument("--cuda-graph-max-bs", type=int, default=256)
    p.add_argument("--chunked-prefill-size", type=int, default=8192)
    p.add_argument("--trust-remote-code", action="store_true")
    return p


def parse(argv):
    if argv and argv[0] in ("--version", "-v", "version"):
        print(VLLM_VERSION)
        sys.exit(0)
    if argv and argv[0] == "serve":
        return "vllm", vllm_parser().parse_args(argv[1:])
    return "sglang", sglang_parser().parse_args(argv)


# ====================================== logging ======================================
def out(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


def vl(msg, who="APIServer", lvl="INFO", src="api_server.py:1839", pid=None):
    out("(%s pid=%d) %s %s [%s] %s" % (who, pid or PID, lvl, time.strftime("%m-%d %H:%M:%S"), src, msg))


EC = "EngineCore_DP0"
ECPID = PID + 211
TORCH_DT = {"auto": "torch.bfloat16", "bfloat16": "torch.bfloat16", "fp8": "torch.float8_e4m3fn",
            "fp8_e4m3": "torch.float8_e4m3fn", "fp8_e5m2": "torch.float8_e5m2"}


def ec(msg, lvl="INFO", src="core.py:93"):
    vl(msg, who=EC, lvl=lvl, src=src, pid=ECPID)


def vllm_traceback(frames, text, src="core.py:708"):
    e = lambda m: ec(m, lvl="ERROR", src=src)
    e("EngineCore failed to start.")
    e("Traceback (most recent call last):")
    for f, ln, fn, code in frames:
        e('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn))
        if code:
            e("    " + code)
    for line in text.split("\n"):
        e(line)
    out("(%s pid=%d) Process %s:" % (EC, ECPID, EC))
    vl("Traceback (most recent call last):", lvl="ERROR", src="api_server.py:1966")
    out("(APIServer pid=%d) RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}" % PID)
    sys.exit(1)


CORE = [("vllm/v1/engine/core.py", 699, "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)"),
        ("vllm/v1/engine/core.py", 498, "__init__", "super().__init__(vllm_config, executor_class, log_stats,"),
        ("vllm/v1/engine/core.py", 92, "__init__", "self._initialize_kv_caches(vllm_config)")]


def vllm_run(a, oc):
    backend = a.attention_backend or "FLASH_ATTN"
    out("INFO %s [__init__.py:216] Automatically detected platform cuda." % time.strftime("%m-%d %H:%M:%S"))
    vl("vLLM API server version %s" % VLLM_VERSION)
    nd = {"model_tag": a.model, "host": a.host, "port": a.port, "model": a.model}
    for k, dflt in (("attention_backend", None), ("kv_cache_dtype", "auto"), ("gpu_memory_utilization", 0.9),
                    ("max_num_seqs", 256), ("max_num_batched_tokens", 2048)):
        if getattr(a, k) != dflt:
            nd[k] = getattr(a, k)
    vl("non-default args: %r" % nd, src="utils.py:243")
    time.sleep(0.15)
    vl("Resolved architecture: Qwen3ForCausalLM", src="model.py:547")
    vl("Using max model len 40960", src="model.py:1510")
    if a.kv_cache_dtype.startswith("fp8"):
        vl("Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts the performance. "
           "Meanwhile, it may cause accuracy drop without a proper scaling factor.", lvl="WARNING", src="cache.py:200")
    vl("Chunked prefill is enabled with max_num_batched_tokens=%d." % a.max_num_batched_tokens, src="scheduler.py:205")
    ec("Waiting for init message from front-end.", src="core.py:644")
    ec("Initializing a V1 LLM engine (v%s) with config: model='%s', speculative_config=None, tokenizer='%s', "
       "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, "
       "max_seq_len=40960, download_dir=None, load_format=auto, tensor_parallel_size=%d, pipeline_parallel_size=1, "
       "disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=%s, "
       "device_config=cuda, seed=0, served_model_name=%s, enable_prefix_caching=True, "
       "chunked_prefill_enabled=True, compilation_config={\"level\":3,\"cudagraph_mode\":[2,1],"
       "\"max_capture_size\":%d}" % (VLLM_VERSION, a.model, a.model, a.tp_size, a.kv_cache_dtype, a.model,
                                    min(a.max_num_seqs * 2, 1024)))
    ec("world_size=1 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:46211 backend=nccl",
       src="parallel_state.py:1208")
    ec("Starting to load model %s..." % a.model, src="gpu_model_runner.py:2653")
    if backend == "FLASHINFER":
        ec("FLASHINFER backend uses trtllm-gen decode kernels on this device; this path is experimental, set "
           "VLLM_USE_TRTLLM_ATTENTION=0 to turn it off", lvl="WARNING", src="flashinfer.py:231")
    if oc["kind"] == "fail" and oc["phase"] == "attn":
        vllm_traceback(CORE[:2] + [
            ("vllm/v1/worker/gpu_model_runner.py", 3918, "initialize_attn_backend",
             "attn_backend_cls = get_attn_backend(self.kv_cache_spec, self.cache_config.cache_dtype)"),
            ("vllm/v1/attention/backends/flash_attn.py", 118, "validate_kv_cache_dtype",
             "raise ValueError(f\"{_FA_NAME} on SM90 reads an FP8 KV cache only as {supported}, got {dtype}\")")],
            oc["text"])
    ec("Using %s backend." % {"FLASH_ATTN": "Flash Attention", "FLASHINFER": "FlashInfer",
                              "TRITON_ATTN": "Triton Attention", "FLEX_ATTENTION": "FlexAttention"}[backend],
       src="cuda.py:366")
    if backend == "FLASH_ATTN":
        ec("Using FlashAttention version 3", src="fa_utils.py:57")
    out("Loading safetensors checkpoint shards: 100% Completed | 8/8 [00:03<00:00,  2.31it/s]")
    if oc["kind"] == "fail" and oc["phase"] == "load":
        vllm_traceback(CORE[:2] + [
            ("vllm/model_executor/model_loader/weight_utils.py", 504, "safetensors_weights_iterator",
             "with safe_open(st_file, framework=\"pt\") as f:")], oc["text"])
    ec("Model loading took 27.5708 GiB and 4.118 seconds", src="gpu_model_runner.py:2686")
    ec("Using cache directory: /root/.cache/vllm/torch_compile_cache/5c1e0a2f7d/rank_0_0/backbone for vLLM's "
       "torch.compile", src="backends.py:548")
    if oc.get("slow"):
        ec("Compiling FlexAttention block-sparse kernels with torch.compile (max-autotune); this takes a while on "
           "the first launch", src="flex_attention.py:188")
        time.sleep(oc["slow"])
    if oc["kind"] == "fail" and oc["phase"] == "compile":
        vllm_traceback(CORE + [
            ("vllm/v1/worker/gpu_worker.py", 263, "determine_available_memory", "self.model_runner.profile_run()"),
            ("vllm/v1/worker/gpu_model_runner.py", 3402, "_dummy_run",
             "if self.kv_cache_dtype.startswith(\"fp8\") and self.attn_backend.get_name() == \"FLASHINFER\":"),
            ("vllm/v1/worker/gpu_model_runner.py", 3411, "_dummy_run",
             "outputs = self.model(input_ids=input_ids, positions=positions, intermediate_tensors=None)"),
            ("vllm/v1/attention/backends/flex_attention.py", 612, "forward",
             "out = flex_attention_compiled(query, key_cache, value_cache, block_mask=block_mask, "
             "kernel_options=kernel_options)"),
            ("torch/_inductor/compile_fx.py", 924, "fx_codegen_and_compile",
             "raise InductorError(e, currentframe()).with_traceback(")], oc["text"])
    ec("torch.compile takes %.2f s in total" % (11.3 + (oc.get("slow") or 0) * 9), src="monitor.py:34")
    ec("Available KV cache memory: %.2f GiB" % (a.gpu_memory_utilization * 79.19 - 27.57 - 3.1), src="gpu_worker.py:298")
    ec("GPU KV cache size: %s tokens" % format(int((a.gpu_memory_utilization * 79.19 - 30.67) * 6553 *
                                                    (2 if a.kv_cache_dtype.startswith("fp8") else 1)), ","),
       src="kv_cache_utils.py:1087")
    if oc["kind"] == "fail" and oc["phase"] == "graph":
        out("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  71%|#######   | 47/67 [00:04<00:01, 11.4it/s]")
        vllm_traceback(CORE + [
            ("vllm/v1/worker/gpu_worker.py", 381, "compile_or_warm_up_model", "self.model_runner.capture_model()"),
            ("vllm/v1/worker/gpu_model_runner.py", 3532, "capture_model",
             "self._capture_cudagraphs(compilation_cases, cudagraph_runtime_mode=cudagraph_runtime_mode)"),
            ("torch/cuda/graphs.py", 186, "__exit__", "self.cuda_graph.capture_end()")], oc["text"])
    out("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 67/67 [00:05<00:00, 12.9it/s]")
    ec("Graph capturing finished in 6 secs, took 0.58 GiB", src="gpu_model_runner.py:3560")
    ec("init engine (profile, create kv cache, warmup model) took %.2f seconds" % (18.4 + (oc.get("slow") or 0) * 9),
       src="core.py:210")
    vl("Supported_tasks: ['generate']", src="api_server.py:1634")


# --- SGLang ---
def sg(msg, tp=None, lvl=None):
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    out("[%s%s] %s%s" % (t, " TP%d" % tp if tp is not None else "", (lvl + " ") if lvl else "", msg))


SG_MAIN = [("<frozen runpy>", 198, "_run_module_as_main", None), ("<frozen runpy>", 88, "_run_code", None),
           ("sglang/launch_server.py", 24, "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
           ("sglang/srt/server_args.py", 4410, "prepare_server_args", "return ServerArgs.from_cli_args(raw_args)"),
           ("sglang/srt/server_args.py", 3951, "from_cli_args",
            "return cls(**{attr: getattr(args, attr) for attr in attrs})"),
           ("<string>", 318, "__init__", None),
           ("sglang/srt/server_args.py", 622, "__post_init__", "self._handle_attention_backend_compatibility()"),
           ("sglang/srt/server_args.py", 1402, "_handle_attention_backend_compatibility",
            "raise ValueError(")]
SG_SCHED = [("sglang/srt/managers/scheduler.py", 2904, "run_scheduler_process",
             "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)"),
            ("sglang/srt/managers/scheduler.py", 312, "__init__", "self.tp_worker = TpModelWorker("),
            ("sglang/srt/model_executor/model_runner.py", 322, "__init__", "self.initialize(min_per_gpu_memory)")]
SG_PHASE = {
    "init": [("sglang/srt/model_executor/model_runner.py", 603, "init_torch_distributed",
              "torch.get_device_module(self.device).set_device(self.gpu_id)"),
             ("torch/cuda/__init__.py", 579, "set_device", "torch._C._cuda_setDevice(device)")],
    "store": [("sglang/srt/model_executor/model_runner.py", 640, "init_torch_distributed",
               "init_distributed_environment("),
              ("torch/distributed/rendezvous.py", 189, "_create_c10d_store", "return TCPStore(")],
    "attn": [("sglang/srt/model_executor/model_runner.py", 1702, "init_attention_backend",
              "self.attn_backend = self._get_attention_backend()"),
             ("sglang/srt/layers/attention/cutlass_mla_backend.py", 44, "<module>",
              "from sgl_kernel import cutlass_mla_decode, cutlass_mla_get_workspace_size")],
    "load": [("sglang/srt/model_executor/model_runner.py", 771, "load_model",
              "self.model = get_model(model_config=self.model_config, load_config=self.load_config,"),
             ("sglang/srt/layers/moe/moe_runner/triton_kernels.py", 17, "<module>",
              "from triton_kernels.matmul_ogs import FlexCtx, PrecisionConfig, matmul_ogs")],
}


def py_frames(fs, prefix=""):
    out(prefix + "Traceback (most recent call last):")
    for f, ln, fn, code in fs:
        out(prefix + '  File "%s", line %d, in %s' % (f if f.startswith("<") else SITE + "/" + f, ln, fn))
        if code:
            out(prefix + "    " + code)


def sched_die(phase, text, extra=None):
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stdout.write("[%s TP0] Scheduler hit an exception: " % t)
    py_frames(SG_SCHED + (extra or SG_PHASE.get(phase, [])))
    if phase == "graph":
        first, _, rest = text.partition("\n")
        out("Exception: Capture cuda graph failed: %s" % first)
        if rest:
            out(rest)
        out("Possible solutions:")
        out("1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)")
        out("2. set --cuda-graph-max-bs to a smaller value (e.g., 16)")
        out("3. disable torch compile by not using --enable-torch-compile")
        out("4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)")
        out("Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ")
    else:
        out(text)
    out("")
    sg("Received sigquit from a child process. It usually means the child failed.")
    time.sleep(0.1)
    os.kill(os.getpid(), signal.SIGKILL)


def watchdog_die(a):
    ms = time.strftime("%m%d %H:%M:%S") + ".%06d" % (PID % 1000000)
    r = 3
    work = ("WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=8388608, NumelOut=8388608, Timeout(ms)=600000) ran "
            "for 600089 milliseconds before timing out.")
    out("[rank%d]:[E%s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: %s"
        % (r, ms, r, work))
    out("[rank%d]:[E%s ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank %d]  failure detected by "
        "watchdog at work sequence id: 11 PG status: last enqueued work: 11, last completed work: 10" % (r, ms, r))
    out("[rank%d]:[E%s ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog "
        "thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: %s"
        % (r, ms, r, r, work))
    out("terminate called after throwing an instance of 'c10::DistBackendError'")
    out("  what():  [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with "
        "exception: [Rank %d] Watchdog caught collective operation timeout: %s" % (r, r, work))
    out("Exception raised from ncclCommWatchdog at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1837 "
        "(most recent call first):")
    out("frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f3b1c96b5e8 in "
        "%s/torch/lib/libc10.so)" % SITE)
    out("frame #1: <unknown function> + 0xcbe3d4 (0x7f3abc4be3d4 in %s/torch/lib/libtorch_cuda.so)" % SITE)
    out("")
    sg("Received sigquit from a child process. It usually means the child failed.")
    time.sleep(0.1)
    os.kill(os.getpid(), signal.SIGKILL)


def sglang_echo(a):
    d = [("model_path", a.model), ("tokenizer_path", a.model), ("tokenizer_mode", "auto"),
         ("load_format", "auto"), ("trust_remote_code", a.trust_remote_code), ("dtype", "auto"),
         ("kv_cache_dtype", a.kv_cache_dtype), ("quantization", None), ("context_length", None),
         ("device", "cuda"), ("served_model_name", a.model), ("is_embedding", False), ("host", a.host),
         ("port", a.port), ("mem_fraction_static", a.mem_fraction_static), ("max_running_requests", None),
         ("chunked_prefill_size", a.chunked_prefill_size), ("tp_size", a.tp_size), ("pp_size", 1), ("random_seed", 1053461),
         ("attention_backend", a.attention_backend), ("sampling_backend", "flashinfer"),
         ("moe_runner_backend", a.moe_runner_backend), ("fp8_gemm_runner_backend", "auto"),
         ("disable_cuda_graph", False), ("cuda_graph_max_bs", a.cuda_graph_max_bs), ("enable_torch_compile", False)]
    return "server_args=ServerArgs(" + ", ".join("%s=%r" % kv for kv in d) + ", ...)"


def sglang_run(a, oc, sp):
    sg(sglang_echo(a))
    time.sleep(0.1)
    if oc["kind"] == "fail" and oc["how"] == "main":
        py_frames(SG_MAIN)
        out(oc["text"])
        sys.exit(1)
    if a.moe_runner_backend == "cutlass":
        sg("cutlass MoE runner backend is experimental on SM90; shapes it does not cover fall back to the triton "
           "runner", lvl="WARNING")
    time.sleep(0.2)
    tps = list(range(a.tp_size))
    for r in tps:
        sg("Init torch distributed begin.", r)
    if oc["kind"] == "fail" and oc["phase"] == "init":
        sched_die("init", oc["text"])
    if sp and sp["phase"] == "store":
        sched_die("store", sp["text"])
    if a.tp_size > 1:
        sg("NCCL version 2.27.3+cuda12.9", 0)
        sg("sglang is using nccl==2.27.3", 0)
    for r in tps:
        sg("Init torch distributed ends. mem usage=0.62 GB", r)
    sg("Load weight begin. avail mem=78.12 GB", 0)
    if oc["kind"] == "fail" and oc["phase"] == "load":
        sched_die("load", oc["text"])
    out("Loading safetensors checkpoint shards: 100% Completed | 16/16 [00:06<00:00,  2.44it/s]")
    mla = a.model == "acme/DeepSeek-V2-Lite-Chat"
    sg("Load weight end. type=%s, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB."
       % ("DeepseekV2ForCausalLM" if mla else "Qwen3MoeForCausalLM", 78.12 - 30.5 / a.tp_size, 30.5 / a.tp_size), 0)
    if oc["kind"] == "fail" and oc["phase"] == "attn":
        sched_die("attn", oc["text"])
    if mla and a.attention_backend == "flashinfer":
        out("flashinfer.jit: Loading JIT ops: batch_mla_attention_dtype_q_bf16_dtype_kv_%s_dtype_o_bf16_dtype_idx_i32_"
            "head_dim_ckv_512_head_dim_kpe_64_profiler_False" % ("e4m3" if a.kv_cache_dtype == "fp8_e4m3" else "bf16"))
        time.sleep(oc.get("slow") or 0)
        out("flashinfer.jit: Finished loading JIT ops: batch_mla_attention_dtype_q_bf16 (%d s)" % 212)
    sg("Using KV cache dtype: %s" % TORCH_DT.get(a.kv_cache_dtype, a.kv_cache_dtype), 0)
    sg("KV Cache is allocated. #tokens: 1203840, K size: 21.04 GB, V size: 21.04 GB", 0)
    sg("Memory pool end. avail mem=%.2f GB" % 7.84, 0)
    if oc.get("slow") and a.moe_runner_backend == "deep_gemm":
        sg("Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have "
           "not run `sglang.compile_deep_gemm`. It is recommended to run `sglang.compile_deep_gemm` with same args "
           "as `sglang.launch_server` for pre-compilation to reduce the overhead if you have not run it before.", 0)
        time.sleep(oc["slow"])
        sg("DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> M=16384, N=4096, K=7168. done (%d kernels)" % 412, 0)
    sg("Capture cuda graph begin. This can take up to several minutes. avail mem=7.84 GB", 0)
    if oc["kind"] == "fail" and oc["phase"] == "graph":
        out("Capturing batches (bs=%d avail_mem=2.61 GB):   6%%|5         | 2/35 [00:00<00:09,  3.52it/s]"
            % a.cuda_graph_max_bs)
        f = M1_FILES.get(a.attention_backend, a.attention_backend + "_backend.py")
        sched_die("graph", oc["text"], extra=[
            ("sglang/srt/model_executor/model_runner.py", 2011, "init_device_graphs",
             "self.graph_runner = graph_runners[self.device](self)"),
            ("sglang/srt/model_executor/cuda_graph_runner.py", 402, "capture",
             "graph, output_buffers = self.capture_one_batch_size(bs, forward)"),
            ("sglang/srt/layers/attention/" + f, 377, "init_forward_metadata_capture_cuda_graph",
             "self.cuda_graph_kv_indices = torch.zeros((max_bs * self.max_context_len,), dtype=torch.int32, "
             "device=\"cuda\")")])
    if sp and sp["phase"] == "watchdog":
        out("Capturing batches (bs=160 avail_mem=7.51 GB):  31%|###       | 11/36 [00:02<00:05,  4.81it/s]")
        time.sleep(0.3)
        watchdog_die(a)
    out("Capturing batches (bs=1 avail_mem=6.98 GB): 100%|##########| 36/36 [00:06<00:00,  5.71it/s]")
    sg("Capture cuda graph end. Time elapsed: 6.51 s. mem usage=0.86 GB. avail mem=6.98 GB.", 0)
    sg("max_total_num_tokens=1203840, chunked_prefill_size=8192, max_prefill_tokens=16384, "
       "max_running_requests=4096, context_len=40960, available_gpu_mem=6.98 GB", 0)


# ====================================== serving ======================================
def serve(persona, a, oc, env, key, n):
    sys.path.insert(0, FIELDSRV_DIR)
    import fieldsrv
    from http.server import ThreadingHTTPServer
    kind = oc["kind"]
    state = {"bench": 0, "dead": False}
    lock = threading.Lock()
    orig = fieldsrv.generate

    def gen(args, body, chat):
        r, err = orig(args, body, chat)
        if err or r is None:
            return r, err
        toks, reasoning, finish, pt = r
        bad = kind == "garbage" or (kind == "late-garbage" and body.get("_late"))
        if bad:
            mt = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
            return (["!"] * mt, [], "length", pt), None
        return r, None
    fieldsrv.generate = gen

    class H(fieldsrv.Handler):
        def do_GET(self):
            if state["dead"] and self.path == "/health":
                self.send_json(503, {"object": "error", "message": "engine is dead", "code": 503})
                return
            if self.path == "/version":
                self.send_json(200, {"version": VLLM_VERSION if persona == "vllm" else SGLANG_VERSION})
                return
            fieldsrv.Handler.do_GET(self)

        def serve(self, body, chat):
            if body.get("ignore_eos"):
                with lock:
                    state["bench"] += 1
                    if state["bench"] > LATE_N and kind == "late-garbage":
                        body["_late"] = True
                        if state["bench"] == LATE_N + 1:
                            record(env, key, n, "event: late-garbage from bench request %d" % state["bench"])
            if kind == "late-crash" and fieldsrv.in_flight >= 3:
                with lock:
                    first = not state["dead"]
                    state["dead"] = True
                if first:
                    record(env, key, n, "event: late-crash at %d in flight" % fieldsrv.in_flight)
                    late_crash(persona)
                if persona == "vllm":
                    self.send_json(500, {"object": "error", "message": "EngineCore encountered an issue. See stack "
                                         "trace (above) for the root cause.", "type": "InternalServerError",
                                         "param": None, "code": 500})
                return
            fieldsrv.Handler.serve(self, body, chat)

    if env.get("_STANDIN3_BIND_LOST"):
        out("INFO:     Started server process [%d]" % PID)
        out("INFO:     Waiting for application startup.")
        out("INFO:     Application startup complete.")
        out("ERROR:    [Errno 98] error while attempting to bind on address ('%s', %d): address already in use"
            % (a.host, a.port))
        out("INFO:     Waiting for application shutdown.")
        out("INFO:     Application shutdown complete.")
        sys.exit(1)
    try:
        srv = ThreadingHTTPServer((a.host, a.port), H)
    except OSError as e:
        out("ERROR:    [Errno %d] error while attempting to bind on address ('%s', %d): %s"
            % (e.errno, a.host, a.port, (e.strerror or "").lower()))
        sys.exit(1)
    srv.daemon_threads = True
    srv.args = argparse.Namespace(host=a.host, port=a.port, backend="honest", context=40960, long_threshold=10 ** 9,
                                  token_delay_ms=0.5 if kind == "garbage" else oc["d"], tokens_per_chunk=1,
                                  chunk_chars=False, tokenize_scale=1.0)
    if persona == "vllm":
        vl("Starting vLLM API server 0 on http://%s:%d" % (a.host, a.port), src="launcher.py:34")
        vl("Available routes are:", src="launcher.py:42")
    out("INFO:     Started server process [%d]" % PID)
    out("INFO:     Waiting for application startup.")
    out("INFO:     Application startup complete.")
    if persona == "sglang":
        out("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)" % (a.host, a.port))
        out("[%s] The server is fired up and ready to roll!" % time.strftime("%Y-%m-%d %H:%M:%S"))
    srv.serve_forever()


def late_crash(persona):
    if persona == "vllm":
        e = lambda m: ec(m, lvl="ERROR", src="core.py:770")
        e("EngineCore encountered a fatal error.")
        e("Traceback (most recent call last):")
        for f, ln, fn, code in [("vllm/v1/engine/core.py", 761, "run_engine_core", "engine_core.run_busy_loop()"),
                                ("vllm/v1/engine/core.py", 788, "run_busy_loop", "self._process_engine_step()"),
                                ("vllm/v1/worker/gpu_model_runner.py", 2411, "execute_model",
                                 "valid_sampled_token_ids = sampled_token_ids.tolist()")]:
            e('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn))
            e("    " + code)
        e("RuntimeError: CUDA error: an illegal memory access was encountered")
        e("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
          "might be incorrect.")
        vl("AsyncLLM output_handler failed.", lvl="ERROR", src="async_llm.py:480")
        vl("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) "
           "for the root cause.", lvl="ERROR", src="async_llm.py:480")

        def die():
            time.sleep(0.4)
            out("INFO:     Shutting down")
            vl("Engine is gracefully shutting down.", src="launcher.py:80")
            os._exit(1)
        threading.Thread(target=die, daemon=True).start()
    else:
        t = time.strftime("%Y-%m-%d %H:%M:%S")
        sys.stdout.write("[%s TP0] Scheduler hit an exception: " % t)
        py_frames([("sglang/srt/managers/scheduler.py", 2921, "run_scheduler_process", "scheduler.event_loop_overlap()"),
                   ("sglang/srt/managers/scheduler.py", 1011, "event_loop_overlap",
                    "batch_result = self.run_batch(batch)"),
                   ("sglang/srt/layers/moe/moe_runner/deep_gemm.py", 288, "run",
                    "deep_gemm.m_grouped_fp8_gemm_nt_masked(hidden_states, w13, out, masked_m, expected_m)")])
        out("RuntimeError: CUDA error: an illegal memory access was encountered")
        out("")
        sg("Received sigquit from a child process. It usually means the child failed.")

        def die():
            time.sleep(0.1)
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=die, daemon=True).start()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    persona, a = parse(argv)
    env = os.environ
    key = cell_key(argv)
    n = bump(env, key)
    oc = decide(persona, a, env)
    sp = sporadic(persona, a, env, key, n)
    record(env, key, n, ("sporadic " + sp["phase"]) if sp else oc["kind"])
    if persona == "vllm":
        vllm_run(a, oc)
        if oc["kind"] == "fail":
            out(oc["text"])
            sys.exit(1)
    else:
        sglang_run(a, oc, sp)
        if oc["kind"] == "fail":
            sched_die(oc["phase"], oc["text"])
    if sp and sp["phase"] == "bind":
        env = dict(env)
        env["_STANDIN3_BIND_LOST"] = "1"
    serve(persona, a, oc, env, key, n)


if __name__ == "__main__":
    main()
