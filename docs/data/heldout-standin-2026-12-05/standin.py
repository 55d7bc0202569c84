#!/usr/bin/env python3
"""standin.py -- a held-out stand-in inference engine for testing gauntlet's search.

Two personalities, chosen by the command line as a real engine's:
  python3 standin.py --model-path M --port P [SGLang flags]   (sglang.launch_server-like)
  vllm serve M --port P [vLLM flags]                            (the `vllm` shim in bin/)

What the "host" is comes from the environment (fixed per space, like a real machine):
  STANDIN_DEVICE  sm_120 | sm_90 | sm_89        (default sm_90)
  STANDIN_GPUS    visible GPUs                  (default 1)
  STANDIN_HOST    ok | no_gpu | old_driver      (a host-level fault no flag explains)

What the model is (and so which rules apply) comes from the model name. Every outcome is a
pure function of (model, device, gpus, host, flags): decide() below, which spaces.py imports for the truth.
A cell that serves runs tests/standin/fieldsrv.py's handler in-process (after printing the
engine's own start-up lines and, for vLLM, its ready line after the bind), with a
--token-delay-ms computed from the flags; a cell whose output is garbage answers token 0
("!") at every position.
"""
import argparse
import os
import random
import signal
import sys
import time

FIELDSRV_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/standin"))

DEVICES = {
    "sm_120": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 94.97, (12, 0)),
    "sm_90": ("NVIDIA H100 80GB HBM3", 79.19, (9, 0)),
    "sm_89": ("NVIDIA L40S", 44.39, (8, 9)),
}

# ---------------------------------------------------------------------------------------
# Outcomes: ("serve", delay_ms), ("garbage", delay_ms), ("fail", phase, kind, text),
# ("hang", phase). `kind` picks the wrapper the engine prints around `text` (its last line).

OOM_TMPL = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {alloc}. GPU 0 has a total "
            "capacity of {total:.2f} GiB of which {free} is free. Including non-PyTorch memory, this process "
            "has {used:.2f} GiB memory in use. Of the allocated memory {alloc_pt:.2f} GiB is allocated by "
            "PyTorch, and 1.97 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory "
            "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
            "See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

ILLEGAL = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
           "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
           "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")


def oom(alloc, total, free):
    used = total - 0.9
    return OOM_TMPL.format(alloc=alloc, total=total, free=free, used=used, alloc_pt=used - 3.5)


def host_fault(host, persona):
    if host == "no_gpu":
        return ("fail", "init", "torch", "RuntimeError: No CUDA GPUs are available")
    if host == "old_driver":
        return ("fail", "init", "torch",
                "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
                "before calling NumCudaDevices() that might have already set an error? Error 35: CUDA driver "
                "version is insufficient for CUDA runtime version")
    return None


# --- space A: SGLang, an NVFP4 MoE on an RTX PRO 6000 (sm_120) --------------------------
def rules_a(a, dev, gpus):
    attn, moe, fp4, kv = a.attention_backend, a.moe_runner_backend, a.fp4_gemm_backend, a.kv_cache_dtype
    # 1. ServerArgs.__post_init__ (main process)
    if attn == "trtllm_mha" and kv != "fp8_e4m3":
        return ("fail", "args", "main",
                "AssertionError: trtllm_mha backend on sm120 only supports kv_cache_dtype fp8_e4m3, got %s" % kv)
    if moe == "triton" and fp4 == "flashinfer_cutlass":
        return ("fail", "args", "main",
                "ValueError: --moe-runner-backend triton is not compatible with --fp4-gemm-backend "
                "flashinfer_cutlass: the Triton MoE kernels read unswizzled NVFP4 block scales")
    # 2. model load: the MoE runner's kernels are JIT-built by FlashInfer
    if moe == "flashinfer_trtllm":
        return ("fail", "load", "sched",
                "RuntimeError: FlashInfer could not load its trtllm-gen module: No supported CUDA "
                "architectures found for major versions [12].")
    # 3. attention backend init
    if attn == "fa3":
        return ("fail", "attn", "sched",
                "RuntimeError: sgl_kernel was built without fa3 for this device (compiled for sm_80, sm_90a; "
                "device is sm_120): no kernel image is available for execution on the device")
    # 4. memory: weights 80 GiB; a cutlass MoE workspace (8) and a bf16 KV cache (6) cannot both fit
    mem = 80 + {"cutlass": 8, "flashinfer_cutlass": 3}.get(moe, 0) + (6 if kv == "auto" else 0) \
        + {"flashinfer": 2, "fa4": 1}.get(attn, 0)
    if mem > 92:
        return ("fail", "kv", "sched", oom("2.00 GiB", 94.97, "1.31 GiB"))
    # 5. CUDA graph capture
    if fp4 == "flashinfer_cudnn":
        return ("hang", "graph")
    if attn == "fa4" and kv == "fp8_e4m3":
        return ("fail", "graph", "capture", ILLEGAL)
    # 6. serving
    d = 20.0
    d *= {"triton": 1.25, "fa4": 0.92, "flashinfer": 1.0, "trtllm_mha": 0.95}[attn]
    d *= {"auto": 1.0, "triton": 1.1, "flashinfer_cutlass": 0.9, "cutlass": 0.93}[moe]
    d *= {"auto": 1.0, "flashinfer_cutlass": 0.92, "flashinfer_trtllm": 0.8}[fp4]
    d *= {"auto": 1.0, "fp8_e4m3": 0.95}[kv]
    if attn == "trtllm_mha" and moe == "cutlass":
        d *= 0.85
    if fp4 == "flashinfer_trtllm":
        return ("garbage", d)
    return ("serve", d)


# --- space B: vLLM, a dense FP8 model on L40S (sm_89) x 2 ---------------------------------
def rules_b(a, dev, gpus):
    attn, kv, tp, gmu, mns = a.attention_backend, a.kv_cache_dtype, a.tensor_parallel_size, \
        a.gpu_memory_utilization, a.max_num_seqs
    # 1. executor start
    if tp > gpus:
        return ("fail", "executor", "vllm",
                "AssertionError: please set tensor_parallel_size (%d) to less than max local gpu count (%d)"
                % (tp, gpus))
    # 2. attention backend selection
    if attn == "FLASH_ATTN" and kv in ("fp8", "fp8_e5m2"):
        return ("fail", "attn", "vllm",
                "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this "
                "configuration. Reason: ['kv_cache_dtype not supported']")
    if attn == "FLASHINFER" and kv == "fp8_e5m2":
        return ("fail", "attn", "vllm",
                "ValueError: FlashInfer backend does not support fp8_e5m2 KV cache on this device; "
                "supported kv cache dtypes: ['auto', 'fp8', 'fp8_e4m3']")
    # 3. memory profiling: 32 GiB of weights over tp GPUs of 44.39 GiB
    kv_gib = gmu * 44.39 - 32.0 / tp - 4.5
    if kv_gib <= 0:
        return ("fail", "kvcache", "vllm",
                "ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine.")
    # 4. profile run: FlexAttention's Triton kernel does not fit sm_89's shared memory
    if attn == "FLEX_ATTENTION":
        return ("fail", "profile", "vllm",
                "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 135168, "
                "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.")
    # 5. CUDA graph capture: graphs for 512 sequences with a bf16 cache do not fit one GPU
    if tp == 1 and kv == "auto" and mns == 512:
        return ("fail", "graph", "vllm", oom("1.25 GiB", 44.39, "812.00 MiB"))
    if attn == "FLASHINFER" and mns == 512:
        return ("fail", "graph", "vllm", ILLEGAL)
    d = 24.0
    d *= {"FLASH_ATTN": 1.0, "FLASHINFER": 0.93, "TRITON_ATTN": 1.12, "FLEX_ATTENTION": 1.3}[attn]
    d *= {"auto": 1.0, "fp8": 0.9, "fp8_e5m2": 0.92}[kv]
    d *= {1: 1.0, 2: 0.7, 4: 0.55}[tp]
    d *= {0.80: 1.0, 0.92: 0.93}[gmu]
    d *= {128: 1.0, 512: 0.97}[mns]
    if attn == "FLASHINFER" and kv == "fp8":
        d *= 0.9
    if attn == "TRITON_ATTN" and kv == "fp8":
        return ("garbage", d)
    return ("serve", d)


# --- space C: SGLang, a 70B FP8 model on H100 x 4, memory and sizes -----------------------
def rules_c(a, dev, gpus):
    tp, mfs, mrr, cgbs = a.tp_size, a.mem_fraction_static, a.max_running_requests, a.cuda_graph_max_bs
    # 1. ServerArgs
    if cgbs > mrr:
        return ("fail", "args", "main",
                "ValueError: cuda_graph_max_bs (%d) must not exceed max_running_requests (%d); set "
                "--cuda-graph-max-bs to at most %d or raise --max-running-requests." % (cgbs, mrr, mrr))
    # 2. torch.distributed / NCCL init: GPUs 2-3 sit behind a PCIe switch whose P2P hangs
    if tp == 4:
        return ("hang", "nccl")
    # 3. weights, then the KV pool
    total = 79.19
    pool = mfs * 80.0 - 70.0 / tp - 1.0
    if pool < 1.0:
        return ("fail", "kv", "sched", "RuntimeError: Not enough memory. Please try to increase "
                "--mem-fraction-static.")
    # 4. CUDA graphs and request pools from what mem_fraction_static leaves
    rest = 80.0 * (1 - mfs) - 3.0
    need = 0.3 + cgbs / 256.0 * 4.2 + mrr / 512.0 * 1.0
    if need > rest:
        return ("fail", "graph", "capture", oom("1.00 GiB", total, "%.2f MiB" % (max(rest, 0.2) * 700)))
    d = 30.0
    d *= {1: 1.0, 2: 0.62, 4: 0.45}[tp]
    d *= {0.70: 1.04, 0.80: 1.0, 0.88: 0.98, 0.93: 0.97}[mfs]
    d *= {32: 1.0, 128: 1.0, 512: 1.02}[mrr]
    d *= {8: 1.15, 64: 1.0, 256: 0.97}[cgbs]
    if mfs == 0.88 and cgbs == 256:
        d *= 0.92
    return ("serve", d)


# --- space D: SGLang, a scheduler that dies on errors no signature knows (SIGKILL of the tree)
def rules_d(a, dev, gpus):
    attn, mrr, kv, mfs = a.attention_backend, a.max_running_requests, a.kv_cache_dtype, a.mem_fraction_static
    if attn == "fa3":
        return ("fail", "attn", "sched",
                "ImportError: cannot import name 'flash_attn_with_kvcache' from 'sgl_kernel.flash_attn' "
                "(/usr/local/lib/python3.12/dist-packages/sgl_kernel/flash_attn.py)")
    if mfs == 0.92 and kv == "auto":
        return ("fail", "kv", "sched", oom("3.00 GiB", 79.19, "1.12 GiB"))
    if attn == "flashinfer" and mrr == 64:
        return ("fail", "graph", "sched",
                "AssertionError: decode plan needs at least 80 request slots, got 64")
    d = 20.0
    d *= {"triton": 1.2, "flashinfer": 0.85}[attn]
    d *= {64: 1.0, 128: 0.97, 256: 0.93, 512: 0.86}[mrr]
    d *= {"auto": 1.0, "fp8_e4m3": 0.94}[kv]
    d *= {0.80: 1.02, 0.88: 1.0, 0.92: 0.97}[mfs]
    if attn == "flashinfer" and kv == "fp8_e4m3":
        d *= 0.95
    return ("serve", d)


MODELS = {
    "acme/Qwen3-14B-FP8": ("sglang", rules_d),
    # model name -> (persona, rules)
    "acme/Qwen3-30B-A3B-NVFP4": ("sglang", rules_a),
    "acme/Qwen3-32B-FP8": ("vllm", rules_b),
    "acme/Llama-3.1-70B-Instruct-FP8": ("sglang", rules_c),
    "acme/Qwen3-8B": (None, None),  # exists, any persona: used by the nothing-can-pass spaces
}


def model_missing(persona, model):
    if persona == "vllm":
        rid = "Root=1-693328b2-4a3f1c7d2e5b6a0f19c8d7e6"
        return ("fail", "config", "vllm-api",
                "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: %s)\n\n"
                "Repository Not Found for url: https://huggingface.co/api/models/%s/tree/main?recursive=True&expand=False.\n"
                "Please make sure you specified the correct `repo_id` and `repo_type`.\n"
                "If you are trying to access a private or gated repo, make sure you are authenticated. "
                "For more details, see https://huggingface.co/docs/huggingface_hub/authentication\n"
                "Invalid username or password." % (rid, model))
    return ("fail", "config", "main",
            "OSError: Can't load the configuration of '%s'. If you were trying to load it from "
            "'https://huggingface.co/models', make sure you don't have a local directory with the same name. "
            "Otherwise, make sure '%s' is the correct path to a directory containing a config.json file"
            % (model, model))


def decide(persona, a, env):
    dev = env.get("STANDIN_DEVICE", "sm_90")
    gpus = int(env.get("STANDIN_GPUS", "1"))
    hf = host_fault(env.get("STANDIN_HOST", "ok"), persona)
    if hf:
        return hf
    m = MODELS.get(a.model)
    if m is None:
        return model_missing(persona, a.model)
    if m[1] is None:
        return ("serve", 15.0)
    return m[1](a, dev, gpus)


# ---------------------------------------------------------------------------------------
def sglang_parser():
    p = argparse.ArgumentParser(prog="launch_server.py")
    p.add_argument("--model-path", "--model", dest="model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--tp-size", "--tp", dest="tp_size", type=int, default=1)
    p.add_argument("--attention-backend", default="flashinfer",
                   choices=["triton", "torch_native", "flex_attention", "fa3", "fa4", "flashinfer", "trtllm_mha",
                            "cutlass_mla", "flashmla", "trtllm_mla"])
    p.add_argument("--moe-runner-backend", default="auto",
                   choices=["auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm",
                            "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl", "cutlass", "marlin"])
    p.add_argument("--fp4-gemm-backend", default="auto",
                   choices=["auto", "flashinfer_cudnn", "flashinfer_cutedsl", "flashinfer_cutlass",
                            "flashinfer_trtllm", "marlin"])
    p.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "nvfp4"])
    p.add_argument("--mem-fraction-static", type=float, default=0.88)
    p.add_argument("--max-running-requests", type=int, default=128)
    p.add_argument("--cuda-graph-max-bs", type=int, default=64)
    p.add_argument("--quantization", default=None)
    p.add_argument("--trust-remote-code", action="store_true")
    return p


def vllm_parser():
    p = argparse.ArgumentParser(prog="vllm serve")
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    p.add_argument("--attention-backend", default=None,
                   choices=["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TREE_ATTN"])
    p.add_argument("--kv-cache-dtype", default="auto",
                   choices=["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "nvfp4"])
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--max-num-seqs", type=int, default=256)
    p.add_argument("--max-model-len", type=int, default=None)
    return p


def parse(argv):
    """(persona, args) from the command line, as the engine would parse it."""
    if argv and argv[0] in ("--version", "-v"):
        print("0.11.2")
        sys.exit(0)
    if argv and argv[0] == "serve":
        return "vllm", vllm_parser().parse_args(argv[1:])
    return "sglang", sglang_parser().parse_args(argv)


# --- logging as the engines do --------------------------------------------------------------
PID = os.getpid()


def out(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


def sg(msg, tp=None):
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    out("[%s%s] %s" % (t, " TP%d" % tp if tp is not None else "", msg))


def vl(msg, who="APIServer", lvl="INFO", src="api_server.py:1896"):
    t = time.strftime("%m-%d %H:%M:%S")
    out("(%s pid=%d) %s %s [%s] %s" % (who, PID, lvl, t, src, msg))


SG_ARGS_FRAMES = [
    ('<frozen runpy>', 198, '_run_module_as_main', None),
    ('<frozen runpy>', 88, '_run_code', None),
    ('/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py', 24, '<module>',
     'server_args = prepare_server_args(sys.argv[1:])'),
    ('/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py', 4410, 'prepare_server_args',
     'return ServerArgs.from_cli_args(raw_args)'),
    ('/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py', 3951, 'from_cli_args',
     'return cls(**{attr: getattr(args, attr) for attr in attrs})'),
    ('<string>', 312, '__init__', None),
    ('/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py', 612, '__post_init__',
     'self._handle_backend_compatibility()'),
    ('/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py', 1387, '_handle_backend_compatibility',
     None),
]

SG_SCHED_FRAMES = {
    "load": [
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py', 771, 'load_model',
         'self.model = get_model(model_config=self.model_config, load_config=self.load_config,'),
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/moe/fused_moe_triton/layer.py', 243,
         '__init__', 'self.quant_method.create_moe_runner(self, self.moe_runner_config)'),
        ('/usr/local/lib/python3.12/dist-packages/flashinfer/jit/core.py', 311, 'build_and_load',
         'raise RuntimeError(...)'),
    ],
    "attn": [
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py', 1702,
         'init_attention_backend', 'self.attn_backend = self._get_attention_backend()'),
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/flashattention_backend.py', 301,
         '__init__', 'torch.ops.sgl_kernel.fwd.default'),
    ],
    "kv": [
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py', 1450,
         'init_memory_pool', 'self.token_to_kv_pool = MHATokenToKVPool('),
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/memory_pool.py', 512, '_create_buffers',
         'torch.zeros((self.size + self.page_size, self.head_num, self.head_dim), dtype=self.store_dtype,'),
    ],
    "graph": [
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py', 402, 'capture',
         'graph, output_buffers = self.capture_one_batch_size(bs, forward)'),
        ('/usr/local/lib/python3.12/dist-packages/torch/cuda/graphs.py', 186, '__exit__',
         'self.cuda_graph.capture_end()'),
    ],
    "init": [
        ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py', 603, 'init_torch_distributed',
         'torch.get_device_module(self.device).set_device(self.gpu_id)'),
        ('/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py', 372, '_lazy_init',
         'torch._C._cuda_init()'),
    ],
    "config": [
        ('/usr/local/lib/python3.12/dist-packages/transformers/configuration_utils.py', 721, '_get_config_dict',
         'raise EnvironmentError('),
    ],
}


def frames(fs, prefix=""):
    out(prefix + "Traceback (most recent call last):")
    for f, ln, fn, code in fs:
        out(prefix + '  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            out(prefix + "    " + code)


def sglang_echo(a):
    keys = ["model_path", "tokenizer_path", "host", "port", "tp_size", "mem_fraction_static",
            "max_running_requests", "attention_backend", "moe_runner_backend", "fp4_gemm_backend",
            "kv_cache_dtype", "cuda_graph_max_bs"]
    d = dict(model_path=a.model, tokenizer_path=a.model, host=a.host, port=a.port, tp_size=a.tp_size,
             mem_fraction_static=a.mem_fraction_static, max_running_requests=a.max_running_requests,
             attention_backend=a.attention_backend, moe_runner_backend=a.moe_runner_backend,
             fp4_gemm_backend=a.fp4_gemm_backend, kv_cache_dtype=a.kv_cache_dtype,
             cuda_graph_max_bs=a.cuda_graph_max_bs)
    return "server_args=ServerArgs(" + ", ".join("%s=%r" % (k, d[k]) for k in keys) + ", random_seed=1, ...)"


def sglang_run(a, outcome, env):
    dev = env.get("STANDIN_DEVICE", "sm_90")
    name, total, _ = DEVICES.get(dev, DEVICES["sm_90"])
    sg(sglang_echo(a))
    if outcome[0] == "fail" and outcome[2] == "main":
        time.sleep(0.2)
        frames(SG_ARGS_FRAMES)
        out("    " + ("assert ok, msg" if outcome[3].startswith("AssertionError") else "raise %s(msg)" % outcome[3].split(":")[0].split(".")[-1]))
        out(outcome[3])
        sys.exit(1)
    time.sleep(0.3)
    tps = list(range(a.tp_size))
    for r in tps:
        sg("Init torch distributed begin.", r)
    phase = outcome[1] if outcome[0] in ("fail", "hang") else None
    if phase == "nccl":
        sg("NCCL INFO Bootstrap : Using eth0:10.0.0.12<0>", 0)
        sg("NCCL INFO NET/IB : No device found.", 0)
        time.sleep(10 ** 6)
    if phase in ("init", "config"):
        dump_sched(outcome)
    sg("Init torch distributed ends. mem usage=0.31 GB", 0)
    sg("Load weight begin. avail mem=%.2f GB" % (total - 0.7), 0)
    if phase == "load":
        dump_sched(outcome)
    out("Loading safetensors checkpoint shards: 100% Completed | 9/9 [00:04<00:00,  1.98it/s]")
    sg("Load weight end. type=%s, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB." %
       ("Qwen3MoeForCausalLM" if "A3B" in a.model else "LlamaForCausalLM", total * 0.18, total * 0.79), 0)
    if phase == "attn":
        dump_sched(outcome)
    if phase == "kv":
        dump_sched(outcome)
    sg("KV Cache is allocated. #tokens: 412032, K size: 4.71 GB, V size: 4.71 GB", 0)
    sg("Memory pool end. avail mem=%.2f GB" % (total * 0.07), 0)
    sg("Capture cuda graph begin. This can take up to several minutes. avail mem=%.2f GB" % (total * 0.07), 0)
    if outcome[0] == "hang":
        out("Capturing batches (bs=1 avail_mem=5.21 GB):   0%|          | 0/12 [00:00<?, ?it/s]")
        time.sleep(10 ** 6)
    if phase == "graph":
        out("Capturing batches (bs=%d avail_mem=1.02 GB):  17%%|#7        | 2/12 [00:01<00:07,  1.30it/s]"
            % a.cuda_graph_max_bs)
        dump_sched(outcome, capture=True)
    sg("Capture cuda graph end. Time elapsed: 6.42 s. mem usage=1.93 GB. avail mem=3.22 GB.", 0)
    sg("max_total_num_tokens=412032, chunked_prefill_size=8192, max_prefill_tokens=16384, "
       "max_running_requests=%d, context_len=40960, available_gpu_mem=3.22 GB" % a.max_running_requests, 0)


def dump_sched(outcome, capture=False):
    fs = [('/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py', 2904,
           'run_scheduler_process', 'scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, '
           'pp_rank, dp_rank)'),
          ('/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py', 312, '__init__',
           'self.tp_worker = TpModelWorker('),
          ('/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py', 322, '__init__',
           'self.initialize(min_per_gpu_memory)')]
    fs += SG_SCHED_FRAMES.get(outcome[1], [])
    text = outcome[3]
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stdout.write("[%s TP0] Scheduler hit an exception: " % t)
    frames(fs)
    if capture:
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


def vllm_run(a, outcome, env):
    dev = env.get("STANDIN_DEVICE", "sm_90")
    name, total, cap = DEVICES.get(dev, DEVICES["sm_90"])
    out("INFO %s [__init__.py:216] Automatically detected platform cuda." % time.strftime("%m-%d %H:%M:%S"))
    vl("vLLM API server version 0.11.2")
    nd = {"model": a.model, "host": a.host, "port": a.port}
    for k in ("attention_backend", "kv_cache_dtype", "tensor_parallel_size", "gpu_memory_utilization",
              "max_num_seqs"):
        nd[k] = getattr(a, k)
    vl("non-default args: %r" % nd, src="utils.py:233")
    time.sleep(0.2)
    if outcome[0] == "fail" and outcome[1] == "config":
        frames([('/usr/local/bin/vllm', 8, '<module>', 'sys.exit(main())'),
                ('/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/cli/main.py', 54, 'main',
                 'args.dispatch_function(args)'),
                ('/usr/local/lib/python3.12/dist-packages/vllm/transformers_utils/config.py', 612, 'file_or_path_exists',
                 'return file_exists(str(model), config_name, revision=revision)'),
                ('/usr/local/lib/python3.12/dist-packages/huggingface_hub/utils/_http.py', 482, 'hf_raise_for_status',
                 'raise _format(RepositoryNotFoundError, message, response) from e')], prefix="(APIServer pid=%d) " % PID)
        for line in outcome[3].split("\n"):
            out("(APIServer pid=%d) %s" % (PID, line))
        sys.exit(1)
    vl("Resolved architecture: Qwen3ForCausalLM", src="model.py:547")
    vl("Using max model len 40960", src="model.py:1510")
    vl("Chunked prefill is enabled with max_num_batched_tokens=2048.", src="scheduler.py:205")
    ec = "EngineCore_DP0"
    vl("Waiting for init message from front-end.", who=ec, src="core.py:644")
    vl("Initializing a V1 LLM engine (v0.11.2) with config: model='%s', speculative_config=None, "
       "tokenizer='%s', dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=%d, "
       "kv_cache_dtype=%s, quantization=fp8, enforce_eager=False, seed=0" %
       (a.model, a.model, a.tensor_parallel_size, a.kv_cache_dtype), who=ec, src="core.py:77")
    phase = outcome[1] if outcome[0] in ("fail", "hang") else None

    def die():
        src = "core.py:708"
        e = lambda m: vl(m, who=ec, lvl="ERROR", src=src)
        e("EngineCore failed to start.")
        e("Traceback (most recent call last):")
        for f, ln, fn, code in [
                ('/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py', 699, 'run_engine_core',
                 'engine_core = EngineCoreProc(*args, **kwargs)'),
                ('/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py', 498, '__init__',
                 'super().__init__(vllm_config, executor_class, log_stats,'),
                ('/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py', 83, '__init__',
                 'self.model_executor = executor_class(vllm_config)')]:
            e('  File "%s", line %d, in %s' % (f, ln, fn))
            e("    " + code)
        for line in outcome[3].split("\n"):
            e(line)
        out("(%s pid=%d) Process %s:" % (ec, PID, ec))
        vl("Traceback (most recent call last):", lvl="ERROR", src="api_server.py:1966")
        out("(APIServer pid=%d) RuntimeError: Engine core initialization failed. See root cause above. "
            "Failed core proc(s): {}" % PID)
        sys.exit(1)

    if phase == "executor":
        die()
    if phase == "init":
        die()
    vl("Starting to load model %s..." % a.model, who=ec, src="gpu_model_runner.py:2653")
    if phase == "attn":
        die()
    be = a.attention_backend or "FLASH_ATTN"
    vl("Using %s backend." % {"FLASH_ATTN": "Flash Attention", "FLASHINFER": "FlashInfer",
                              "TRITON_ATTN": "Triton Attention", "FLEX_ATTENTION": "FlexAttention"}.get(be, be),
       who=ec, src="cuda.py:366")
    out("Loading safetensors checkpoint shards: 100% Completed | 7/7 [00:03<00:00,  2.01it/s]")
    vl("Model loading took %.4f GiB and 4.132 seconds" % (32.0 / a.tensor_parallel_size), who=ec,
       src="gpu_model_runner.py:2686")
    if phase in ("kvcache", "profile"):
        die()
    vl("Available KV cache memory: 3.71 GiB", who=ec, src="gpu_worker.py:298")
    vl("GPU KV cache size: 48,560 tokens", who=ec, src="kv_cache_utils.py:1087")
    if phase == "graph":
        out("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  41%|####      | 28/67 [00:02<00:03, 11.2it/s]")
        die()
    vl("Graph capturing finished in 7 secs, took 0.52 GiB", who=ec, src="gpu_model_runner.py:3532")
    vl("init engine (profile, create kv cache, warmup model) took 21.37 seconds", who=ec, src="core.py:210")


def serve(persona, a, outcome):
    sys.path.insert(0, FIELDSRV_DIR)
    import fieldsrv
    from http.server import ThreadingHTTPServer
    delay = outcome[1]
    if outcome[0] == "garbage":
        orig = fieldsrv.generate

        def garbage(args, body, chat):
            r, err = orig(args, body, chat)
            if err:
                return r, err
            toks, reasoning, finish, pt = r
            mt = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
            return (["!"] * mt, [], "length", pt), None
        fieldsrv.generate = garbage
    if outcome[0] == "garbage":
        delay = 0.5  # NaN logits: token 0 at every position, as fast as the GPU goes
    ns = argparse.Namespace(host=a.host, port=a.port, backend="honest", context=8192, long_threshold=2000,
                            token_delay_ms=delay, tokens_per_chunk=1, chunk_chars=False, tokenize_scale=1.0)
    try:
        srv = ThreadingHTTPServer((a.host, a.port), fieldsrv.Handler)
    except OSError as e:
        out("ERROR:    [Errno %d] error while attempting to bind on address ('%s', %d): %s"
            % (e.errno, a.host, a.port, e.strerror.lower()))
        sys.exit(1)
    srv.daemon_threads = True
    srv.args = ns
    if persona == "vllm":
        vl("Starting vLLM API server 0 on http://%s:%d" % (a.host, a.port), src="launcher.py:34")
        out("INFO:     Started server process [%d]" % PID)
        out("INFO:     Waiting for application startup.")
        out("INFO:     Application startup complete.")
    else:
        out("INFO:     Started server process [%d]" % PID)
        out("INFO:     Waiting for application startup.")
        out("INFO:     Application startup complete.")
        out("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)" % (a.host, a.port))
        sg("The server is fired up and ready to roll!")
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


def main():
    persona, a = parse(sys.argv[1:])
    outcome = decide(persona, a, os.environ)
    if persona == "vllm":
        vllm_run(a, outcome, os.environ)
        if outcome[0] == "hang":
            time.sleep(10 ** 6)
        if outcome[0] == "fail":  # a phase the log above did not reach
            out(outcome[3])
            sys.exit(1)
    else:
        sglang_run(a, outcome, os.environ)
        if outcome[0] == "fail":
            dump_sched(outcome)
    serve(persona, a, outcome)


if __name__ == "__main__":
    main()
