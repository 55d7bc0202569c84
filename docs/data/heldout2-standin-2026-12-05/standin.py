#!/usr/bin/env python3
"""standin.py -- a second held-out stand-in inference engine for testing gauntlet's search.

Two personalities, chosen by the first argument (the shims in bin/ pass it):
  standin.py trtllm-serve MODEL --host H --port P [flags]   TensorRT-LLM's trtllm-serve
  standin.py llama-server -m FILE --port P [flags]           llama.cpp's llama-server

The "host" comes from the environment (fixed per space, like a real machine):
  STANDIN_GPU        H100 | B200 | L4 | RTX4090          (default H100)
  STANDIN_GPUS       visible GPUs                        (default 1)
  STANDIN_HOST       ok | port_taken                     (a host fault no flag explains)
  STANDIN_LLAMA_BUILD  old | new   which ready line llama-server prints (default new)
  OMPI_COMM_WORLD_SIZE  set by a stale mpirun: TRT-LLM's world size

What the model is (and so which rules apply) comes from the model's name. Every outcome is
decide(persona, args, env), a pure function that spaces.py imports for the truth. A cell
that serves answers through tests/standin/fieldsrv.py's handler at a per-token delay its
flags set; the outcome can also make it answer '!' at every position (garbage), answer
arithmetic off by ten (wrong), hang on the first completion, or fail only under load.
"""
import argparse
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDSRV_DIR = os.path.normpath(os.path.join(HERE, "../../../tests/standin"))

GPUS = {  # name, total GiB, sm
    "H100": ("NVIDIA H100 80GB HBM3", 79.19, 90),
    "B200": ("NVIDIA B200", 179.06, 100),
    "L4": ("NVIDIA L4", 21.95, 89),
    "RTX4090": ("NVIDIA GeForce RTX 4090", 23.52, 89),
}

# An outcome is a dict: kind in serve | garbage | wrong | wrong-load | overload | hang-start |
# hang-request | fail; d = ms per token when it serves; fail: phase, text, how (exit|abort|segv|mpi);
# slow = extra seconds of start-up.


def O(kind, **kw):
    kw["kind"] = kind
    return kw


# ===================================== TensorRT-LLM =====================================
def trt_mem_oom(component, free, total, hint):
    return ("Executor creation failed due to insufficient GPU memory.\n\n"
            "The following component could not be created: %s\n"
            "Total GPU memory (GiB): %.2f\n"
            "Free GPU memory before component creation attempt (GiB): %.2f\n\n"
            "Previous components' memory usage:\n"
            "  Model: %s\n\n"
            "Please refer to the TensorRT-LLM documentation for information on how to control the memory usage "
            "through TensorRT-LLM configuration options. Possible options include:\n"
            "  Model: reduce model size, quantize the model, or use tensor/pipeline parallelism\n"
            "  Sampler: decrease max_seq_len and/or max_attention_window_size\n"
            "  Initial KV cache (temporary for KV cache size estimation): decrease max_num_tokens\n"
            "  Additional executor resources (temporary for KV cache size estimation): decrease max_num_tokens\n"
            "  KV cache: decrease free_gpu_memory_fraction\n"
            "  Additional executor resources: decrease max_num_tokens, decrease max_batch_size"
            % (component, total, free, hint))


# --- T1: Qwen3-Next-80B-A3B-FP8 (an MoE) on 4x H100, the PyTorch backend's kernel choices ----
def rules_t1(a, gpu, ngpu):
    be, attn, moe, tp, kv = a.backend, a.attn_backend, a.moe_backend, a.tp_size, a.kv_cache_dtype
    if be == "_autodeploy":
        return O("fail", phase="args", how="exit",
                 text="ValueError: AutoDeploy takes no --moe_backend option: configure the MoE fusion in the "
                      "AutoDeploy yaml (transforms.fuse_moe.backend) and drop the flag")
    if kv == "nvfp4":
        return O("fail", phase="pydantic", how="exit",
                 text="Value error, kv_cache_dtype='nvfp4' is unsupported on SM90: NVFP4 KV cache needs SM100 or "
                      "newer")
    if be == "tensorrt":  # builds an engine first (slow), ignores --attn_backend/--moe_backend
        d = 22.0 * {2: 1.0, 4: 0.72}[tp] * {"auto": 1.0, "fp8": 0.95}[kv]
        return O("serve", d=d, slow=3.0)
    if moe == "TRTLLM":
        return O("fail", phase="executor", how="exit",
                 text="NotImplementedError: TRTLLMGenFusedMoE is unsupported on SM90: this MoE backend runs "
                      "trtllm-gen kernels built for SM100 and SM103 only")
    if moe == "WIDEEP" and tp == 2:
        return O("fail", phase="executor", how="exit",
                 text="RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS "
                      "grouped gemm. Error: Error Internal (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/"
                      "cutlass_kernels/moe_gemm/moe_gemm_tma_ws_launcher.inl:418)")
    if moe == "DEEPGEMM" and tp == 4:
        return O("fail", phase="warmup", how="mpi", text="")
    d = 20.0
    d *= {2: 1.0, 4: 0.74}[tp]
    d *= {"TRTLLM": 0.9, "FLASHINFER": 0.95, "VANILLA": 1.3}[attn]
    d *= {"CUTLASS": 1.0, "DEEPGEMM": 1.04, "WIDEEP": 0.97}[moe]
    d *= {"auto": 1.0, "fp8": 0.96}[kv]
    if moe == "DEEPGEMM" and kv == "fp8" and attn == "TRTLLM":  # FP8 end to end: no casts between kernels
        d *= 0.64
    if attn == "VANILLA":
        return O("hang-request", d=d)
    if attn == "FLASHINFER" and kv == "fp8":
        return O("garbage", d=d)
    return O("serve", d=d)


# --- T2: Llama-3.3-70B-Instruct-FP8 on 2x B200, sizes and memory ---------------------------
def t2_act(a):
    return 0.5 + 2.5 * a.max_num_tokens / 8192.0 + 6.0 * a.max_batch_size / 1024.0


def rules_t2(a, gpu, ngpu):
    attn, kv, mbs, mnt, frac, tp = a.attn_backend, a.kv_cache_dtype, a.max_batch_size, a.max_num_tokens, \
        a.kv_cache_free_gpu_memory_fraction, a.tp_size
    name, total, sm = GPUS[gpu]
    if kv == "nvfp4" and attn == "FLASHINFER":
        return O("fail", phase="executor", how="exit",
                 text="ValueError: nvfp4 KV cache blocks cannot be consumed by attention backend FLASHINFER; "
                      "only the fused trtllm-gen kernels read that layout")
    if attn == "FLASHINFER":
        return O("hang-start", phase="jit")
    free = total - 70.0 / tp - 3.0
    rest = (1 - frac) * free
    if t2_act(a) > rest:
        return O("fail", phase="oom", how="exit",
                 text=trt_mem_oom("Additional executor resources", rest, total, "%.2f GiB" % (70.0 / tp)))
    d = 24.0
    d *= {1: 1.0, 2: 0.62}[tp]
    d *= {0.75: 1.0, 0.9: 0.97, 0.95: 0.92}[frac]
    d *= {8192: 1.0, 16384: 0.95}[mnt]
    d *= {64: 1.0, 256: 0.96, 1024: 0.95}[mbs]
    d *= {"auto": 1.0, "fp8": 0.88, "nvfp4": 1.06}[kv]
    if kv == "fp8":
        return O("wrong", d=d)
    if mbs == 64 and mnt == 16384:
        return O("overload", d=d)
    return O("serve", d=d)


# --- N4: any model, a stale mpirun environment: the world size is fixed by the host ---------
def rules_t_world(a, world):
    return O("fail", phase="mpi", how="exit",
             text="ValueError: world_size (%d) does not match tp_size (%d) * pp_size (1) * cp_size (1) = %d; "
                  "trtllm-serve was started inside an MPI job of another size" % (world, a.tp_size, a.tp_size))


def trt_parser():
    p = argparse.ArgumentParser(prog="trtllm-serve")
    p.add_argument("model")
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", default="pytorch", choices=["pytorch", "tensorrt", "_autodeploy"])
    p.add_argument("--tp_size", type=int, default=1)
    p.add_argument("--pp_size", type=int, default=1)
    p.add_argument("--ep_size", type=int, default=None)
    p.add_argument("--max_batch_size", type=int, default=2048)
    p.add_argument("--max_num_tokens", type=int, default=8192)
    p.add_argument("--max_seq_len", type=int, default=None)
    p.add_argument("--kv_cache_free_gpu_memory_fraction", type=float, default=0.9)
    p.add_argument("--attn_backend", default="TRTLLM", choices=["TRTLLM", "FLASHINFER", "VANILLA"])
    p.add_argument("--moe_backend", default="CUTLASS", choices=["CUTLASS", "TRTLLM", "WIDEEP", "DEEPGEMM", "TRITON"])
    p.add_argument("--kv_cache_dtype", default="auto", choices=["auto", "fp8", "nvfp4"])
    p.add_argument("--log_level", default="info")
    return p


# ======================================= llama.cpp ======================================
QUANT = {"q8_0": 1.0625, "q4_0": 0.5625, "q5_1": 0.75, "q4_1": 0.625, "iq4_nl": 0.5625, "q5_0": 0.6875,
         "f16": 2.0, "bf16": 2.0, "f32": 4.0}
GGUF = {  # name part -> (arch, size GiB, layers, kv heads x head dim, n_ctx_train, rules)
    "Qwen3-30B-A3B-Q4_K_M": ("qwen3moe", 17.28, 48, 4 * 128, 40960, "l1"),
    "Mistral-Small-24B-Instruct-2501-Q6_K": ("llama", 19.35, 40, 8 * 128, 32768, "l2"),
    "Llama-3.2-3B-Instruct-Q8_0": ("llama", 3.18, 28, 8 * 128, 4096, None),
}


def gguf_of(path):
    base = os.path.basename(path or "")
    for k, v in GGUF.items():
        if base.startswith(k) and base.endswith(".gguf"):
            return k, v
    return None, None


def l_mem(a, info, per_gpu_share=1.0, ctx=None):
    """(weights GiB, kv GiB, compute GiB) on the fullest GPU."""
    arch, size, layers, kvd, nctx_train, _ = info
    ctx = ctx or a.ctx_size
    kv = layers * kvd * ctx * (QUANT[a.cache_type_k] + QUANT[a.cache_type_v]) / 2 ** 30
    ub = min(a.ubatch_size, a.batch_size)
    comp = 0.25 + 0.0009 * ub + 0.05 * a.parallel
    if a.batch_size >= 8192:
        comp += 0.6
    return size * per_gpu_share, kv * per_gpu_share, comp


# --- L1: Qwen3-30B-A3B Q4_K_M on one L4: flash attention, K/V cache types, ubatch, slots ---
def rules_l1(a, gpu, ngpu, info):
    fa, ctk, ctv, ub, np_ = a.flash_attn, a.cache_type_k, a.cache_type_v, a.ubatch_size, a.parallel
    name, total, sm = GPUS[gpu]
    if ctv != "f16" and fa == "off":
        return O("fail", phase="context", how="exit", text="quantized V cache requires flash_attn to be enabled")
    w, kv, comp = l_mem(a, info)
    if w + kv > total - 0.6:
        return O("fail", phase="kvalloc", how="exit", mib=kv * 1024)
    if w + kv + comp > total - 0.6:
        return O("fail", phase="compute", how="exit", mib=comp * 1024)
    if ctk == "q5_1":
        return O("fail", phase="warmup", how="segv", text="")
    if ctv == "q8_0" and ub == 2048:
        return O("fail", phase="warmup", how="abort",
                 text="/src/ggml/src/ggml-cuda/cpy.cu:609: ggml_cuda_cpy: unsupported type combination (f32 to q8_0)")
    d = 30.0
    d *= {"on": 1.0, "auto": 1.05, "off": 1.12}[fa]
    d *= {256: 1.05, 512: 1.0, 2048: 0.98}[ub]
    d *= {1: 1.0, 4: 1.02}[np_]
    if fa != "off" and ctk != ctv:  # no CUDA FA kernel for mixed K/V types: the FA op runs on the CPU
        d *= 2.6
    else:
        d *= {"f16": 1.0, "q8_0": 0.9, "q4_0": 0.94, "q5_1": 1.0}[ctk]
    if ctk == "q4_0" and ctv == "q4_0":
        return O("garbage", d=d)
    if np_ == 4 and ub == 256:
        return O("wrong-load", d=d)
    return O("serve", d=d)


# --- L2: Mistral-Small-24B Q6_K on 2x RTX 4090: split mode, offload, batch sizes ------------
def rules_l2(a, gpu, ngpu, info):
    sm, ngl, b, ub, ctk, ctv = a.split_mode, a.n_gpu_layers, a.batch_size, a.ubatch_size, a.cache_type_k, a.cache_type_v
    name, total, _ = GPUS[gpu]
    layers = info[2]
    off = min(ngl, layers + 1) / float(layers + 1)
    share = off if sm == "none" else off / 2.0
    w, kv, comp = l_mem(a, info, per_gpu_share=share)
    if sm == "row" and ctv == "q8_0":
        return O("fail", phase="kvalloc-row", how="exit")
    if w + kv > total - 0.6:
        return O("fail", phase="kvalloc", how="exit", mib=kv * 1024)
    if w + kv + comp > total - 0.6:
        return O("fail", phase="compute", how="exit", mib=comp * 1024)
    if sm == "row" and min(ub, b) == 1024:
        return O("fail", phase="warmup", how="cuda", text="")
    d = 28.0
    d *= {"none": 1.0, "layer": 1.1, "row": 1.06}[sm]
    d *= 1.0 if ngl >= layers + 1 else 2.4
    d *= {256: 1.04, 512: 1.0, 1024: 0.95}[min(ub, b)]
    d *= {512: 1.04, 2048: 1.0, 8192: 1.035}[b]
    if ctk != ctv:
        d *= 2.6
    else:
        d *= {"f16": 1.0, "q8_0": 1.1}[ctk]
    if ngl < layers + 1 and sm == "row":
        return O("hang-request", d=d)
    return O("serve", d=d)


def llama_parser():
    p = argparse.ArgumentParser(prog="llama-server", add_help=False)
    p.add_argument("-m", "--model", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("-fa", "--flash-attn", dest="flash_attn", default="auto", choices=["on", "off", "auto"])
    p.add_argument("-ctk", "--cache-type-k", dest="cache_type_k", default="f16", choices=list(QUANT))
    p.add_argument("-ctv", "--cache-type-v", dest="cache_type_v", default="f16", choices=list(QUANT))
    p.add_argument("-ngl", "--gpu-layers", "--n-gpu-layers", dest="n_gpu_layers", default="999")
    p.add_argument("-sm", "--split-mode", dest="split_mode", default="layer", choices=["none", "layer", "row"])
    p.add_argument("-b", "--batch-size", dest="batch_size", type=int, default=2048)
    p.add_argument("-ub", "--ubatch-size", dest="ubatch_size", type=int, default=512)
    p.add_argument("-np", "--parallel", dest="parallel", type=int, default=4)
    p.add_argument("-c", "--ctx-size", dest="ctx_size", type=int, default=4096)
    p.add_argument("-t", "--threads", dest="threads", type=int, default=8)
    p.add_argument("--mlock", action="store_true")
    p.add_argument("-nkvo", "--no-kv-offload", dest="no_kv_offload", action="store_true")
    p.add_argument("--swa-full", action="store_true")
    p.add_argument("--fit", default="on")
    p.add_argument("--jinja", action="store_true")
    p.add_argument("--no-webui", action="store_true")
    return p


def norm_llama(a):
    v = str(a.n_gpu_layers)
    a.n_gpu_layers = 999 if v in ("all", "auto") else int(v)
    return a


# ======================================== decide ========================================
def decide(persona, a, env):
    gpu = env.get("STANDIN_GPU", "H100")
    ngpu = int(env.get("STANDIN_GPUS", "1"))
    host = env.get("STANDIN_HOST", "ok")
    if persona == "trtllm":
        world = env.get("OMPI_COMM_WORLD_SIZE")
        if world and int(world) != a.tp_size * a.pp_size:
            return rules_t_world(a, int(world))
        if a.tp_size > ngpu:
            return O("fail", phase="mpi", how="exit",
                     text="RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: tp_size (%d) exceeds the %d visible "
                          "GPUs" % (a.tp_size, ngpu))
        if a.model == "acme/Qwen3-Next-80B-A3B-FP8":
            return rules_t1(a, gpu, ngpu)
        if a.model == "acme/Llama-3.3-70B-Instruct-FP8":
            return rules_t2(a, gpu, ngpu)
        return O("fail", phase="hf", how="exit",
                 text="OSError: %s is not a local folder and is not a valid model identifier listed on "
                      "'https://huggingface.co/models'" % a.model)
    # llama.cpp
    if host == "port_taken":
        return O("fail", phase="bind", how="exit")
    k, info = gguf_of(a.model)
    if info is None or not a.model.startswith("/models/"):
        return O("fail", phase="nomodel", how="exit")
    if info[5] == "l1":
        return rules_l1(a, gpu, ngpu, info)
    if info[5] == "l2":
        return rules_l2(a, gpu, ngpu, info)
    d = 12.0 * {"on": 1.0, "auto": 1.0, "off": 1.1}[a.flash_attn]
    return O("serve", d=d)


def parse(argv):
    """(persona, args) from the command line as the engine would parse it; unknown flags are kept
    and ignored (both engines here would refuse them; gauntlet passes none)."""
    if argv and argv[0] == "trtllm-serve":
        a, _ = trt_parser().parse_known_args(argv[1:])
        return "trtllm", a
    if argv and argv[0] == "llama-server":
        a, _ = llama_parser().parse_known_args(argv[1:])
        return "llama", norm_llama(a)
    sys.stderr.write("usage: standin.py trtllm-serve|llama-server ...\n")
    sys.exit(2)


# ======================================== logging =======================================
PID = os.getpid()
T0 = time.monotonic()


def out(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


def trt(msg, lvl="I", rank=None):
    t = time.strftime("[%m/%d/%Y-%H:%M:%S]")
    out("%s [TRT-LLM]%s [%s] %s" % (t, " [RANK %d]" % rank if rank is not None else "", lvl, msg))


def ll(lvl, who, msg):
    us = int((time.monotonic() - T0) * 1e6)
    out("%d.%02d.%03d.%03d %s %s" % (us // 60000000, us // 1000000 % 60, us // 1000 % 1000, us % 1000, lvl,
                                     (who + " " if who else "") + msg))


PY = "/usr/local/lib/python3.12/dist-packages"
TRT_MAIN = [
    ("/usr/local/bin/trtllm-serve", 8, "<module>", "sys.exit(main())"),
    (PY + "/click/core.py", 1442, "__call__", "return self.main(*args, **kwargs)"),
    (PY + "/click/core.py", 1363, "main", "rv = self.invoke(ctx)"),
    (PY + "/click/core.py", 794, "invoke", "return callback(*args, **kwargs)"),
    (PY + "/tensorrt_llm/commands/serve.py", 488, "serve", "launch_server(host, port, llm_args)"),
    (PY + "/tensorrt_llm/commands/serve.py", 187, "launch_server", "llm = PyTorchLLM(**llm_args)"),
    (PY + "/tensorrt_llm/llmapi/llm.py", 1083, "__init__", "super().__init__(model, tokenizer, tokenizer_mode,"),
]


def frames(fs, pre=""):
    out(pre + "Traceback (most recent call last):")
    for f, ln, fn, code in fs:
        out(pre + '  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            out(pre + "    " + code)


def trt_die(a, oc):
    ph, text = oc["phase"], oc.get("text", "")
    if ph in ("args", "mpi", "hf"):
        frames(TRT_MAIN[:5] + [(PY + "/tensorrt_llm/llmapi/llm_args.py", 2291, "__init__",
                                "self._validate_backend_options()")])
        out(text)
        sys.exit(1)
    if ph == "pydantic":
        frames(TRT_MAIN + [(PY + "/pydantic/main.py", 253, "__init__",
                            "validated_self = self.__pydantic_validator__.validate_python(data, self_instance=self)")])
        out("pydantic_core._pydantic_core.ValidationError: 1 validation error for TorchLlmArgs")
        out("  %s [type=value_error, input_value={'model': '%s', 'tensor_parallel_size': %d, ...}, input_type=dict]"
            % (text, a.model, a.tp_size))
        out("    For further information visit https://errors.pydantic.dev/2.11/v/value_error")
        sys.exit(1)
    if ph == "mpi_abort":
        pass
    # an executor worker failed: the rank's own report, then the proxy re-raises it in the main process
    first = text.split("\n")[0]
    trt("Failed to initialize executor on rank 0: %s" % first.split(": ", 1)[-1], "E", 0)
    rf = [(PY + "/tensorrt_llm/executor/worker.py", 803, "worker_main", "worker: GenerationExecutorWorker = worker_cls("),
          (PY + "/tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", 459, "create_py_executor",
           "model_engine = PyTorchModelEngine(")]
    if ph == "oom":
        rf.append((PY + "/tensorrt_llm/_torch/pyexecutor/_util.py", 612, "create_py_executor_instance",
                   "raise RuntimeError(_OOM_MSG.format(...))"))
    else:
        rf.append((PY + "/tensorrt_llm/_torch/modules/fused_moe/create_moe.py", 141, "create_moe",
                   "return moe_cls(routing_method=routing_method,"))
    pre = time.strftime("[%m/%d/%Y-%H:%M:%S]") + " [TRT-LLM] [RANK 0] [E] "
    frames(rf, pre)
    if ph == "oom":
        out("RuntimeError: " + text)
    else:
        out(text)
    if text.startswith("RuntimeError: [TensorRT-LLM][ERROR]"):
        for i, s in enumerate(["tensorrt_llm::common::throwRuntimeError(char const*, int, char const*) + 77",
                               "tensorrt_llm::kernels::cutlass_kernels::MoeGemmRunner<__nv_fp8_e4m3, __nv_fp8_e4m3, "
                               "__nv_bfloat16>::dispatchToArch(...) + 1290",
                               "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/libs/libtensorrt_llm.so"
                               "(+0x9c3e1f2) [0x7f1c5a3e1f2]",
                               "/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x7f1d4b2e9ac3]"]):
            out("%-8d0x7f1c%08x %s" % (i + 1, 0x5a3e1f2 + i * 4096, s))
    frames(TRT_MAIN + [(PY + "/tensorrt_llm/executor/proxy.py", 371, "_start_executor_workers",
                        "raise ready_signal")])
    if ph == "oom":
        out("RuntimeError: Executor creation failed due to insufficient GPU memory.")
    else:
        out(first)
    sys.exit(1)


def trt_run(a, oc, env):
    gpu = env.get("STANDIN_GPU", "H100")
    name, total, sm = GPUS[gpu]
    out("[TensorRT-LLM] TensorRT-LLM version: 1.2.0rc5")
    trt({"pytorch": "Using LLM with PyTorch backend", "tensorrt": "Using LLM with TensorRT backend",
         "_autodeploy": "Using LLM with AutoDeploy backend"}[a.backend])
    trt("Set nccl_plugin to None.")
    trt("neither checkpoint_format nor checkpoint_loader were provided, checkpoint_format will be set to HF.")
    time.sleep(0.15)
    if oc["kind"] == "fail" and oc["phase"] in ("args", "pydantic", "mpi", "hf"):
        trt_die(a, oc)
    if a.backend == "tensorrt":
        for f in ("attn_backend", "moe_backend"):
            trt("%s=%r is a PyTorch-backend option; the TensorRT backend ignores it" % (f, getattr(a, f)), "W")
        trt("Building TensorRT engine for %s (tp_size=%d): this can take several minutes" % (a.model, a.tp_size))
        out("[TRT] [I] [MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 1310, GPU 1031 (MiB)")
        time.sleep(oc.get("slow", 0))
        out("[TRT] [I] Total Time of building the engine: 00:00:%02d" % int(oc.get("slow", 0) * 60 % 60))
    out("rank 0 using MpiPoolSession to spawn MPI processes")
    for r in range(a.tp_size):
        trt("ATTENTION RUNTIME FEATURES: AttentionRuntimeFeatures(chunked_prefill=False, cache_reuse=True, "
            "has_speculative_draft_tokens=False, chunk_size=%d)" % a.max_num_tokens, rank=r)
    trt("Use %.2f GB for model weights." % (80.0 / a.tp_size), rank=0)
    out("Loading safetensors weights in parallel: 100%%|##########| %d/%d [00:02<00:00, 17.32it/s]" % (41, 41))
    if oc["kind"] == "fail" and oc["phase"] == "executor":
        trt_die(a, oc)
    if oc["kind"] == "hang-start":
        out("flashinfer.jit: Loading JIT ops: batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_"
            "dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False")
        time.sleep(10 ** 6)
    trt("[MemUsageChange] Allocated %.2f GiB for max tokens in paged KV cache (%d)."
        % (total * a.kv_cache_free_gpu_memory_fraction * 0.3, 412160), rank=0)
    if oc["kind"] == "fail" and oc["phase"] == "oom":
        trt_die(a, oc)
    trt("max_seq_len=131072, max_num_requests=%d, max_num_tokens=%d, max_batch_size=%d"
        % (a.max_batch_size, a.max_num_tokens, a.max_batch_size), rank=0)
    trt("Run autotuner warmup for batch size=1", rank=0)
    if oc["kind"] == "fail" and oc["how"] == "mpi":
        out("--------------------------------------------------------------------------")
        out("MPI_ABORT was invoked on rank %d in communicator MPI_COMM_WORLD" % (a.tp_size - 1))
        out("  Proc: [[51412,1],%d]" % (a.tp_size - 1))
        out("  Errorcode: 1")
        out("")
        out("NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.")
        out("You may or may not see output from other processes, depending on")
        out("exactly when Open MPI kills them.")
        out("--------------------------------------------------------------------------")
        sys.exit(1)
    trt("Memory used after cuda graph capture: %.2f GiB" % (total * 0.93), rank=0)


def ll_fail_ctx(a, msg_lines):
    for who, m in msg_lines:
        ll("E", who, m)
    ll("E", "cmn ", "common_init_: failed to create context with model '%s'" % a.model)
    ll("E", "srv   ", "load_model: failed to create_context with model '%s'" % a.model)
    ll("I", "srv   ", "operator(): operator(): cleaning up before exit...")
    ll("E", "srv ", "llama_server: exiting due to model loading error")
    sys.exit(1)


def abort_trace():
    for off in (0x7b3a5, 0x1c4e2f, 0x2a9d10, 0x2a1c77):
        out("llama-server(+0x%x)[0x55d1c3%06x]" % (off, off))
    out("/lib/x86_64-linux-gnu/libc.so.6(+0x29d90)[0x7f6b1e229d90]")


def llama_run(a, oc, env, state):
    gpu = env.get("STANDIN_GPU", "H100")
    ngpu = int(env.get("STANDIN_GPUS", "1"))
    name, total, sm = GPUS[gpu]
    ll("I", "cmn ", "common_param: common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)")
    out("ggml_cuda_init: found %d CUDA devices (Total VRAM: %d MiB):" % (ngpu, ngpu * total * 1024))
    for i in range(ngpu):
        out("  Device %d: %s, compute capability %d.%d, VMM: yes, VRAM: %d MiB" % (i, name, sm // 10, sm % 10,
                                                                                 total * 1024))
    ll("I", "srv ", "llama_server: n_parallel is set to %d" % a.parallel)
    ll("I", "srv        ", "init: using %d threads for HTTP server" % 8)
    ll("I", "srv        ", "start: binding port with default address family")
    if oc["kind"] == "fail" and oc["phase"] == "bind":
        ll("E", "srv        ", "start: couldn't bind HTTP server socket, hostname: %s, port: %d" % (a.host, a.port))
        ll("I", "srv   ", "operator(): operator(): cleaning up before exit...")
        ll("E", "srv ", "llama_server: exiting due to HTTP server error")
        sys.exit(1)
    state["bind"]()  # /health answers 503 "Loading model" from here on
    ll("I", "srv   ", "load_model: loading model '%s'" % a.model)
    if oc["kind"] == "fail" and oc["phase"] == "nomodel":
        for _ in range(2):
            ll("E", "", "gguf_init_from_file: failed to open GGUF file '%s' (No such file or directory)" % a.model)
            ll("E", "", "llama_model_load: error loading model: llama_model_loader: failed to load model from %s"
               % a.model)
            ll("E", "", "llama_model_load_from_file_impl: failed to load model")
            if _ == 0:
                ll("E", "", "common_fit_params: encountered an error while trying to fit params to free device "
                            "memory: failed to load model")
        ll("E", "cmn ", "common_init_: failed to load model '%s'" % a.model)
        ll("E", "srv   ", "load_model: failed to load model, '%s'" % a.model)
        ll("I", "srv   ", "operator(): operator(): cleaning up before exit...")
        ll("E", "srv ", "llama_server: exiting due to model loading error")
        sys.exit(1)
    k, info = gguf_of(a.model)
    arch, size, layers, kvd, nctx_train, _ = info
    ll("I", "", "llama_model_loader: loaded meta data with 38 key-value pairs and %d tensors from %s (version GGUF V3 "
                "(latest))" % (layers * 11 + 3, a.model))
    ll("I", "", "print_info: arch             = %s" % arch)
    ll("I", "", "print_info: n_ctx_train      = %d" % nctx_train)
    ll("I", "", "print_info: n_layer          = %d" % layers)
    ll("I", "", "load_tensors: loading model tensors, this can take a while... (mmap = true)")
    ng = min(a.n_gpu_layers, layers + 1)
    ll("I", "", "load_tensors: offloading %d repeating layers to GPU" % min(ng, layers))
    ll("I", "", "load_tensors: offloaded %d/%d layers to GPU" % (ng, layers + 1))
    devs = 1 if a.split_mode == "none" else ngpu
    for i in range(devs):
        ll("I", "", "load_tensors:        CUDA%d model buffer size = %9.2f MiB" % (i, size * 1024 * ng / (layers + 1)
                                                                                     / devs))
    time.sleep(0.2)
    n_ctx = a.ctx_size
    ll("I", "", "llama_context: constructing llama_context")
    ll("I", "", "llama_context: n_seq_max     = %d" % a.parallel)
    ll("I", "", "llama_context: n_ctx         = %d" % n_ctx)
    ll("I", "", "llama_context: n_batch       = %d" % a.batch_size)
    ll("I", "", "llama_context: n_ubatch      = %d" % min(a.ubatch_size, a.batch_size))
    ll("I", "", "llama_context: flash_attn    = %s" % {"on": "enabled", "off": "disabled", "auto": "auto"}[a.flash_attn])
    if n_ctx > nctx_train:
        ll("W", "", "llama_context: n_ctx_seq (%d) > n_ctx_train (%d) -- possible training context overflow"
           % (n_ctx, nctx_train))
    if a.flash_attn == "auto" and a.cache_type_v != "f16":
        ll("I", "", "llama_init_from_model: enabling flash_attn since it is required for quantized V cache")
    if oc["kind"] == "fail" and oc["phase"] == "context":
        ll_fail_ctx(a, [("", "llama_init_from_model: " + oc["text"])])
    ll("I", "", "llama_context:  CUDA_Host  output buffer size =     0.58 MiB")
    if oc["kind"] == "fail" and oc["phase"] == "kvalloc-row":
        ll_fail_ctx(a, [("", "llama_kv_cache: the V cache (type q8_0) cannot be placed in a split buffer: "
                             "per-row splitting needs a V cache with 16-bit rows"),
                        ("", "llama_init_from_model: failed to initialize the context: failed to allocate buffer "
                             "for kv cache")])
    if oc["kind"] == "fail" and oc["phase"] == "kvalloc":
        mib = oc["mib"]
        ll_fail_ctx(a, [("", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc "
                             "failed: out of memory" % mib),
                        ("", "alloc_tensor_range: failed to allocate CUDA0 buffer of size %d" % int(mib * 1048576)),
                        ("", "llama_init_from_model: failed to initialize the context: failed to allocate buffer "
                             "for kv cache")])
    kvk = layers * kvd * n_ctx * QUANT[a.cache_type_k] / 2 ** 20
    kvv = layers * kvd * n_ctx * QUANT[a.cache_type_v] / 2 ** 20
    for i in range(devs):
        ll("I", "", "llama_kv_cache:      CUDA%d KV buffer size = %8.2f MiB" % (i, (kvk + kvv) / devs))
    ll("I", "", "llama_kv_cache: size = %7.2f MiB (%6d cells, %3d layers, %d/1 seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB"
       % (kvk + kvv, n_ctx, layers, a.parallel, a.cache_type_k, kvk, a.cache_type_v, kvv))
    ll("I", "", "sched_reserve: reserving ...")
    if oc["kind"] == "fail" and oc["phase"] == "compute":
        mib = oc["mib"]
        ll_fail_ctx(a, [("", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc "
                             "failed: out of memory" % mib),
                        ("", "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size %d" % int(mib * 1048576)),
                        ("", "graph_reserve: failed to allocate compute buffers"),
                        ("", "llama_init_from_model: failed to initialize the context: failed to allocate compute pp "
                             "buffers")])
    if a.flash_attn != "off":
        ll("I", "", "resolve_fused_ops: Flash Attention enabled")
    ll("I", "", "sched_reserve:      CUDA0 compute buffer size = %8.2f MiB" % (200 + min(a.ubatch_size, a.batch_size)))
    ll("I", "", "sched_reserve: graph nodes  = %d" % (layers * 31 + 5))
    ll("I", "", "sched_reserve: graph splits = %d" % (1 if devs == 1 else 3))
    ll("I", "cmn ", "common_init_: warming up the model with an empty run - please wait ... (--no-warmup to disable)")
    time.sleep(0.1)
    if oc["kind"] == "fail" and oc["phase"] == "warmup":
        if oc["how"] == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if oc["how"] == "abort":
            out(oc["text"])
            abort_trace()
            os.abort()
        if oc["how"] == "cuda":
            out("CUDA error: an illegal memory access was encountered")
            out("  current device: 1, in function ggml_backend_cuda_synchronize at /src/ggml/src/ggml-cuda/"
                "ggml-cuda.cu:2870")
            out("  cudaStreamSynchronize(cuda_ctx->stream())")
            out("/src/ggml/src/ggml-cuda/ggml-cuda.cu:106: CUDA error")
            abort_trace()
            os.abort()
    slot_ctx = n_ctx
    if n_ctx > nctx_train:
        ll("W", "srv   ", "load_model: the slot context (%d) exceeds the training context of the model (%d) - "
                          "capping" % (n_ctx, nctx_train))
        slot_ctx = nctx_train
    ll("I", "srv   ", "load_model: initializing, n_slots = %d, n_ctx_slot = %d, kv_unified = 'true'"
       % (a.parallel, slot_ctx))
    for i in range(a.parallel):
        ll("I", "slot  ", "load_model: id  %d | task -1 | new slot, n_ctx = %d" % (i, slot_ctx))
    state["n_ctx"] = slot_ctx
    ll("I", "srv ", "llama_server: model loaded")
    return slot_ctx


# ========================================= serve ========================================
def serve(persona, a, oc, state, srv, env):
    import fieldsrv
    kind = oc["kind"]
    orig = fieldsrv.generate

    def gen(args, body, chat):
        r, err = orig(args, body, chat)
        if err or r is None:
            return r, err
        toks, reasoning, finish, pt = r
        if kind == "garbage":
            mt = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
            return (["!"] * mt, [], "length", pt), None
        off = kind == "wrong" or (kind == "wrong-load" and fieldsrv.in_flight >= 3)
        if off:
            toks = [str(int(t.strip()) - 10) + t[len(t.rstrip()):] if t.strip().isdigit() and len(t.strip()) >= 2
                    else t for t in toks]
        return (toks, reasoning, finish, pt), None
    fieldsrv.generate = gen
    srv.args.token_delay_ms = 0.5 if kind == "garbage" else oc["d"]
    srv.args.context = state.get("n_ctx", 32768)
    state["kind"] = kind
    state["ready"] = True
    if persona == "trtllm":
        out("INFO:     Started server process [%d]" % PID)
        out("INFO:     Waiting for application startup.")
        out("INFO:     Application startup complete.")
        out("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)" % (a.host, a.port))
    else:
        if env.get("STANDIN_LLAMA_BUILD", "new") == "old":
            ll("I", "", "main: chat template, chat_template: {%- for message in messages %}..., example_format: "
                        "'<|im_start|>user\\nHello<|im_end|>\\n<|im_start|>assistant\\n'")
            ll("I", "", "main: server is listening on http://%s:%d - starting the main loop" % (a.host, a.port))
            ll("I", "srv ", "update_slots: all slots are idle")
        else:
            ll("I", "srv ", "llama_server: listening on http://%s:%d" % (a.host, a.port))
    while True:
        time.sleep(3600)


def make_server(persona, a, state):
    sys.path.insert(0, FIELDSRV_DIR)
    import fieldsrv
    import json
    from http.server import ThreadingHTTPServer

    class H(fieldsrv.Handler):
        def do_GET(self):
            if persona == "llama" and not state.get("ready"):
                self.send_json(503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
                return
            if persona == "llama" and self.path == "/props":
                self.send_json(200, {"default_generation_settings": {"n_ctx": state.get("n_ctx", 0)},
                                     "total_slots": a.parallel, "model_path": a.model, "build_info": "b7010-d32676d"})
                return
            if persona == "llama" and self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [{"id": os.path.basename(a.model), "object": "model",
                                     "owned_by": "llamacpp", "meta": {"n_ctx_train": state.get("n_ctx_train", 0)}}]})
                return
            fieldsrv.Handler.do_GET(self)

        def serve(self, body, chat):
            kind = state.get("kind")
            if kind == "hang-request":
                time.sleep(10 ** 6)
            if kind == "overload" and fieldsrv.in_flight >= 3:
                time.sleep(0.05)
                self.send_json(500, {"object": "error", "message": "Executor worker returned error: [TensorRT-LLM]"
                                     "[ERROR] Assertion failed: numTokens <= maxNumTokens (/src/tensorrt_llm/cpp/"
                                     "tensorrt_llm/batch_manager/microBatchScheduler.cpp:173)",
                                     "type": "InternalServerError", "param": None, "code": 500})
                return
            if persona == "llama":
                msgs = fieldsrv.conversation(body, chat)
                pt = sum(len(fieldsrv.words(m["content"])) for m in msgs) + 2 * len(msgs)
                if pt >= self.server.args.context:
                    ll("E", "srv   ", "send_error: task id = 0, error: request (%d tokens) exceeds the available "
                                      "context size (%d tokens), try increasing it" % (pt, self.server.args.context))
                    self.send_json(400, {"error": {"code": 400, "message": "request (%d tokens) exceeds the available "
                                                   "context size (%d tokens), try increasing it"
                                                   % (pt, self.server.args.context),
                                                   "type": "exceed_context_size_error", "n_prompt_tokens": pt,
                                                   "n_ctx": self.server.args.context}})
                    return
            fieldsrv.Handler.serve(self, body, chat)

    def bind():
        try:
            srv = ThreadingHTTPServer((a.host, a.port), H)
        except OSError:
            if persona == "llama":
                ll("E", "srv        ", "start: couldn't bind HTTP server socket, hostname: %s, port: %d" % (a.host, a.port))
                ll("E", "srv ", "llama_server: exiting due to HTTP server error")
            else:
                out("ERROR:    [Errno 98] error while attempting to bind on address ('%s', %d): address already in use"
                    % (a.host, a.port))
            sys.exit(1)
        srv.daemon_threads = True
        srv.args = argparse.Namespace(host=a.host, port=a.port, backend="honest", context=32768, long_threshold=10 ** 9,
                                      token_delay_ms=1.0, tokens_per_chunk=1, chunk_chars=False, tokenize_scale=1.0)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        state["srv"] = srv
    return bind


def main():
    persona, a = parse(sys.argv[1:])
    oc = decide(persona, a, os.environ)
    state = {}
    state["bind"] = make_server(persona, a, state)
    if persona == "trtllm":
        trt_run(a, oc, os.environ)
        if oc["kind"] == "fail":
            trt_die(a, oc)
        state["bind"]()
    else:
        k, info = gguf_of(a.model)
        if info:
            state["n_ctx_train"] = info[4]
        llama_run(a, oc, os.environ, state)
        if oc["kind"] == "fail":
            sys.exit(1)
    serve(persona, a, oc, state, state["srv"], os.environ)


if __name__ == "__main__":
    main()
