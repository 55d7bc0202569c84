#!/usr/bin/env python3
"""standin.py -- the fourth held-out stand-in engine for gauntlet's search (its author read neither
gauntlet's source nor how its search reasons). Three personas, picked by how it is started:

  vllm serve MODEL --host H --port P [vLLM flags]                        (bin/vllm)
  python3 -m sglang.launch_server --model-path M --host H --port P ...   (pylib/sglang)
  trtllm-serve MODEL --host H --port P [TensorRT-LLM flags]              (bin/trtllm-serve)

What is new against the first three stand-ins: every launch of a tensor- or expert-parallel cell
prints as several ranks do, interleaved, with the engines' own prefixes (vLLM's `(Worker_TP1 pid=N)`
and `(EngineCore_DP0 pid=N)`, torch's `[rank1]:`, SGLang's `[YYYY-MM-DD HH:MM:SS TP1 EP1]`,
TensorRT-LLM's `[TRT-LLM] [RANK 1] [E]` and Open MPI's abort block); the line that names the
culprit comes from one rank, early, and the other ranks then print collateral. Logs carry tqdm bars
redrawn with carriage returns, ANSI colours (vLLM), one line of about 300 KB (SGLang's quantization
config), bytes that are not UTF-8 (two ranks' bars cut into each other), Python's two-line
`warnings.warn` format, and TensorRT-LLM's errors on stderr while its progress goes to stdout.
Axes are set through environment variables (VLLM_ATTENTION_BACKEND, SGL_ENABLE_JIT_DEEPGEMM,
TRTLLM_ENABLE_PDL), switches (--enforce-eager, --enable-expert-parallel, --disable-cuda-graph,
--enable-torch-compile), a JSON --speculative-config and a path (--extra_llm_api_options).

The host and the state come from the environment:
  STANDIN4_GPUS   visible GPUs (default 1)
  STANDIN4_STATE  a folder for the per-cell launch counter and launches.log (run.sh: runs/state/NAME)

decide(persona, a, env) is the outcome, a pure function of the cell (features(), the cell's axis
values as the spaces name them). There is no sporadic failure this round: every launch of a cell
meets the same outcome; what varies launch to launch is only its wording (pids, temp paths,
timestamps, request ids, free-memory figures). Every start and every late event is appended to
STANDIN4_STATE/launches.log with the cell's features, which analyze.py reads.
"""
import argparse
import hashlib
import json
import os
import random
import re
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDSRV_DIR = os.path.normpath(os.path.join(HERE, "../../../tests/standin"))
VLLM_VERSION = "0.11.2"
SGLANG_VERSION = "0.5.6.post1"
TRTLLM_VERSION = "1.1.0rc5"
SITE = "/opt/venv/lib/python3.12/site-packages"
PID = os.getpid()
RNG = random.Random()  # the wording that varies launch to launch (pids, paths, figures); never the outcome


def O(kind, **kw):
    kw["kind"] = kind
    return kw


# ====================================== output ======================================
OUT = sys.stdout.buffer
ERR = sys.stderr.buffer


def w(s, stream=None, end="\n"):
    b = s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s
    f = stream or OUT
    f.write(b + (end.encode() if end else b""))
    f.flush()


def nap(s):
    time.sleep(s)


def tqdm(label, total, stop_at=None, stream=None, unit="it/s", rate=3.1, steps=5):
    """A tqdm bar redrawn with carriage returns on one line; stop_at: the bar stops there (no newline)."""
    f = stream or OUT
    last = total if stop_at is None else stop_at
    pts = sorted(set([0] + [max(0, min(last, round(last * i / steps))) for i in range(1, steps + 1)]))
    for i, k in enumerate(pts):
        pct = int(100 * k / total)
        bar = ("\u2588" * (pct // 10)).ljust(10)
        s = "%s: %3d%%|%s| %d/%d [00:%02d<00:%02d, %.2f%s]" % (label, pct, bar, k, total, k // 3,
                                                               (total - k) // 3, rate, unit)
        f.write(("\r" if i else "").encode() + s.encode())
        f.flush()
        nap(0.01)
    if stop_at is None:
        f.write(b"\n")
        f.flush()


# ====================================== parsers ======================================
def vllm_parser():
    p = argparse.ArgumentParser(prog="vllm serve")
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--tensor-parallel-size", "-tp", dest="tp", type=int, default=1)
    p.add_argument("--enable-expert-parallel", action="store_true")
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--kv-cache-dtype", default="auto",
                   choices=["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "nvfp4"])
    p.add_argument("--speculative-config", default=None)
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--max-num-seqs", type=int, default=256)
    p.add_argument("--max-model-len", type=int, default=None)
    return p


def sglang_parser():
    p = argparse.ArgumentParser(prog="launch_server.py")
    p.add_argument("--model-path", "--model", dest="model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--tp-size", "--tp", dest="tp", type=int, default=1)
    p.add_argument("--ep-size", "--ep", dest="ep", type=int, default=1)
    p.add_argument("--attention-backend", default="fa3",
                   choices=["triton", "torch_native", "flex_attention", "fa3", "fa4", "flashinfer", "trtllm_mha",
                            "cutlass_mla", "flashmla", "trtllm_mla"])
    p.add_argument("--moe-runner-backend", dest="moe", default="auto",
                   choices=["auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm",
                            "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl", "cutlass", "marlin"])
    p.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "nvfp4"])
    p.add_argument("--mem-fraction-static", type=float, default=0.85)
    p.add_argument("--disable-cuda-graph", action="store_true")
    p.add_argument("--enable-torch-compile", action="store_true")
    p.add_argument("--trust-remote-code", action="store_true")
    return p


def trtllm_parser():
    p = argparse.ArgumentParser(prog="trtllm-serve")
    p.add_argument("model")
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", default="pytorch", choices=["pytorch", "tensorrt", "_autodeploy"])
    p.add_argument("--tp_size", type=int, default=1)
    p.add_argument("--ep_size", type=int, default=None)
    p.add_argument("--max_batch_size", type=int, default=2048)
    p.add_argument("--max_num_tokens", type=int, default=8192)
    p.add_argument("--kv_cache_free_gpu_memory_fraction", type=float, default=0.9)
    p.add_argument("--extra_llm_api_options", default=None)
    return p


def parse(argv, persona=None):
    if argv and argv[0] in ("--version", "-v", "version"):
        print(TRTLLM_VERSION if persona == "trtllm" else VLLM_VERSION)
        sys.exit(0)
    if persona == "trtllm":
        return "trtllm", trtllm_parser().parse_args(argv)
    if argv and argv[0] == "serve":
        return "vllm", vllm_parser().parse_args(argv[1:])
    return "sglang", sglang_parser().parse_args(argv)


def f2(x):
    return "%.2f" % x


def features(persona, a, env):
    """The cell as the spaces name its values (axis -> value name), read from the flags and env."""
    if persona == "vllm":
        spec = "none"
        if a.speculative_config:
            spec = json.loads(a.speculative_config).get("method", "?")
        return {"tp": str(a.tp), "ep": "on" if a.enable_expert_parallel else "off",
                "attn": env.get("VLLM_ATTENTION_BACKEND") or "auto", "kv": a.kv_cache_dtype, "spec": spec,
                "eager": "eager" if a.enforce_eager else "graphs"}
    if persona == "sglang":
        g = "compile" if a.enable_torch_compile else ("nograph" if a.disable_cuda_graph else "default")
        return {"tp": str(a.tp), "ep": str(a.ep), "moe": a.moe, "graph": g,
                "jit": "off" if env.get("SGL_ENABLE_JIT_DEEPGEMM") == "0" else "default",
                "mfs": f2(a.mem_fraction_static), "attn": a.attention_backend, "kv": a.kv_cache_dtype}
    opts = "none"
    if a.extra_llm_api_options:
        opts = os.path.basename(a.extra_llm_api_options).rsplit(".", 1)[0]
    return {"tp": str(a.tp_size), "mbs": str(a.max_batch_size), "mnt": str(a.max_num_tokens),
            "fmf": f2(a.kv_cache_free_gpu_memory_fraction), "opts": opts,
            "pdl": "1" if env.get("TRTLLM_ENABLE_PDL") == "1" else "default"}


# ====================================== the rules ======================================
# P: vLLM, acme/Qwen3-30B-A3B (MoE, bf16) on 4x H100, multiproc executor (one worker process per TP rank)
def rules_p(c):
    tp, ep, attn, kv, spec, eager = c["tp"], c["ep"], c["attn"], c["kv"], c["spec"], c["eager"]
    if spec == "eagle3" and tp == "4":
        return O("fail", phase="draft", rank=3)
    if attn == "TRITON_ATTN" and kv == "fp8":
        return O("fail", phase="backend", rank=1)
    if spec == "eagle3" and tp == "2" and kv == "auto":
        return O("fail", phase="kvmem", rank=None)
    if ep == "on" and tp == "4" and spec == "ngram" and eager == "graphs":
        return O("hang", phase="graph", rank=2)
    d = 20.0
    d *= {"2": 1.0, "4": 0.84}[tp]
    d *= {"off": 1.0, "on": 0.95}[ep]
    d *= {"auto": 1.0, "FLASHINFER": 0.96, "TRITON_ATTN": 1.08}[attn]
    d *= {"auto": 1.0, "fp8": 0.96}[kv]
    d *= {"none": 1.0, "ngram": 0.9, "eagle3": 0.82}[spec]
    d *= {"graphs": 1.0, "eager": 1.3}[eager]
    if attn == "TRITON_ATTN" and spec == "eagle3":
        d *= 0.86  # the one interaction: EAGLE's tree verification runs in the Triton kernel
    slow = 1.5 if spec == "eagle3" else 0.0  # the drafter's weights load after the target's
    if attn == "FLASHINFER" and spec == "ngram":
        return O("garbage", d=d, slow=slow)
    if ep == "on" and tp == "2" and kv == "fp8":
        return O("wrong", d=d, slow=slow)
    if attn == "FLASHINFER" and ep == "on" and tp == "4" and eager == "graphs":
        return O("late-crash", d=d * 0.93, slow=slow, rank=2)
    return O("serve", d=d, slow=slow)


# Q: SGLang, acme/DeepSeek-V3-0324-FP8 (MoE, block FP8) on 8x H100
def rules_q(c):
    tp, ep, moe, graph, jit, mfs = c["tp"], c["ep"], c["moe"], c["graph"], c["jit"], c["mfs"]
    if ep == "8" and tp == "4":
        return O("fail", phase="args", rank=None)
    if moe == "deep_gemm" and jit == "off":
        return O("fail", phase="deepgemm", rank=5 if tp == "8" else 2)
    if graph == "compile" and moe == "cutlass":
        return O("fail", phase="compile", rank=None, slow=2.0)
    if graph == "default" and mfs == "0.88" and tp == "4":
        return O("fail", phase="graph", rank=2)
    d = 24.0
    d *= {"4": 1.0, "8": 0.8}[tp]
    d *= {"1": 1.0, "4": 0.95, "8": 0.92}[ep]
    d *= {"triton": 1.0, "deep_gemm": 0.93, "cutlass": 0.97}[moe]
    d *= {"default": 1.0, "nograph": 1.4, "compile": 0.93}[graph]
    d *= {"default": 1.0, "off": 1.02}[jit]
    d *= {"0.80": 1.05, "0.88": 1.0}[mfs]
    if moe == "deep_gemm" and ep == "8":
        d *= 0.94  # the interaction: DeepEP's low-latency dispatch feeds DeepGEMM's masked grouped GEMM directly
    if graph == "compile" and ep == "8":
        d *= 1.12  # and torch.compile's graphs break at DeepEP's all-to-all
    slow = 2.0 if graph == "compile" else 0.0
    if moe == "cutlass" and ep == "8":
        return O("garbage", d=d, slow=slow)
    if moe == "deep_gemm" and ep == "4":
        return O("wrong", d=d, slow=slow)
    if moe == "triton" and ep == "8" and mfs == "0.88" and graph != "nograph":
        return O("late-crash", d=d * 0.85, slow=slow, rank=6)
    return O("serve", d=d, slow=slow)


# R: TensorRT-LLM (PyTorch backend), acme/Llama-3.3-70B-Instruct-FP8 on 4x H100, MPI ranks
def rules_r(c):
    tp, mbs, mnt, fmf, opts, pdl = c["tp"], c["mbs"], c["mnt"], c["fmf"], c["opts"], c["pdl"]
    if opts == "cuda_graph" and mbs == "256":
        return O("fail", phase="validate", rank=None)
    if fmf == "0.95" and mnt == "8192":
        return O("fail", phase="oom", rank=1)
    if opts == "overlap_off" and pdl == "1" and tp == "4":
        return O("hang", phase="warmup", rank=3)
    d = 26.0
    d *= {"2": 1.0, "4": 0.78}[tp]
    d *= {"64": 1.0, "256": 0.98}[mbs]
    d *= {"4096": 1.05, "8192": 1.0}[mnt]
    d *= {"0.85": 1.0, "0.95": 0.99}[fmf]
    d *= {"none": 1.0, "cuda_graph": 0.86, "attention_dp": 1.03, "overlap_off": 1.06}[opts]
    d *= {"default": 1.0, "1": 0.95}[pdl]
    if opts == "overlap_off" and tp == "2":
        d *= 0.9  # the one interaction: with TP 2 the overlap scheduler's extra sync costs more than it hides
    if opts == "attention_dp" and pdl == "1":
        return O("garbage", d=d, slow=0.0)
    if opts == "attention_dp" and tp == "2" and mnt == "4096":
        return O("wrong", d=d, slow=0.0)
    if opts == "cuda_graph" and tp == "4" and pdl == "1":
        return O("late-crash", d=d * 0.92, slow=0.0, rank=3)
    return O("serve", d=d, slow=0.0)


# Nothing can pass
def rules_n1(c):  # vLLM: the model is gated and no token is set
    return O("fail", phase="gated", rank=None)


def rules_n2(c):  # SGLang: the CUDA runtime library is missing (a driver-only container)
    return O("fail", phase="libcudart", rank=None)


def rules_n3(c):  # TensorRT-LLM: the disk is full; the first JIT/autotune cache write fails
    return O("fail", phase="nospace", rank=None)


MODELS = {
    "acme/Qwen3-30B-A3B": ("vllm", rules_p),
    "acme/DeepSeek-V3-0324-FP8": ("sglang", rules_q),
    "acme/Llama-3.3-70B-Instruct-FP8": ("trtllm", rules_r),
    "acme/Llama-4-Scout-17B-16E-Instruct": ("vllm", rules_n1),
    "acme/Qwen3-8B": ("sglang", rules_n2),
    "acme/Llama-3.1-8B-Instruct": ("trtllm", rules_n3),
}


def decide(persona, a, env):
    c = features(persona, a, env)
    m = MODELS.get(a.model)
    if m is None:
        return O("serve", d=15.0, slow=0.0)
    return m[1](c)


# ====================================== state ======================================
def cell_key(argv, env):
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x in ("--port", "--host"):
            skip = True
            continue
        out.append(x)
    ev = ["%s=%s" % (k, env[k]) for k in ("VLLM_ATTENTION_BACKEND", "SGL_ENABLE_JIT_DEEPGEMM", "TRTLLM_ENABLE_PDL")
          if k in env]
    return " ".join(out + ev)


def bump(env, key):
    st = env.get("STANDIN4_STATE")
    if not st:
        return 1
    os.makedirs(os.path.join(st, "cells"), exist_ok=True)
    p = os.path.join(st, "cells", hashlib.sha1(key.encode()).hexdigest()[:20])
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b".")
    os.close(fd)
    return os.path.getsize(p)


def record(env, key, n, what, feat):
    st = env.get("STANDIN4_STATE")
    if not st:
        return
    with open(os.path.join(st, "launches.log"), "a") as f:
        f.write(json.dumps({"t": round(time.time(), 3), "key": key, "n": n, "what": what, "cell": feat}) + "\n")


# ====================================== vLLM ======================================
C = {"INFO": "\x1b[32mINFO\x1b[0m", "WARNING": "\x1b[33mWARNING\x1b[0m", "ERROR": "\x1b[31mERROR\x1b[0m",
     "DEBUG": "\x1b[36mDEBUG\x1b[0m"}


class V:
    """vLLM's processes: the API server, the engine core, one worker per TP rank (pids differ per launch)."""

    def __init__(self, tp):
        self.api = PID
        self.core = PID + RNG.randint(40, 90)
        self.wk = [self.core + RNG.randint(20, 40) + 7 * r for r in range(tp)]
        self.tp = tp

    def log(self, who, msg, lvl="INFO", src="api_server.py:1839", stream=None):
        pid = {"api": self.api, "core": self.core}.get(who)
        name = {"api": "APIServer", "core": "EngineCore_DP0"}.get(who)
        if pid is None:
            r = int(who[2:])
            pid, name = self.wk[r], "Worker_TP%d" % r
        w("(%s pid=%d) %s %s [%s] %s" % (name, pid, C[lvl], time.strftime("%m-%d %H:%M:%S"), src, msg), stream)

    def raw(self, who, msg, stream=None):
        pid = {"api": self.api, "core": self.core}.get(who)
        name = {"api": "APIServer", "core": "EngineCore_DP0"}.get(who)
        if pid is None:
            r = int(who[2:])
            pid, name = self.wk[r], "Worker_TP%d" % r
        w("(%s pid=%d) %s" % (name, pid, msg), stream)

    def tb(self, who, frames, text, src, head=None):
        e = lambda m: self.log(who, m, "ERROR", src)
        if head:
            e(head)
        e("Traceback (most recent call last):")
        for f, ln, fn, code in frames:
            e('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn))
            if code:
                e("    " + code)
        for line in text.split("\n"):
            e(line)


VW = [("vllm/v1/executor/multiproc_executor.py", 721, "worker_main", "worker = WorkerProc(*args, **kwargs)"),
      ("vllm/v1/executor/multiproc_executor.py", 560, "__init__", "self.worker.load_model()")]
VCORE = [("vllm/v1/engine/core.py", 699, "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)"),
         ("vllm/v1/engine/core.py", 498, "__init__", "super().__init__(vllm_config, executor_class, log_stats,")]


def vllm_engine_dies(v, tp_failed, reason_core):
    """The engine core and API server wrappers after a worker died at start-up, then the teardown collateral."""
    if tp_failed is not None:
        for r in range(v.tp):
            if r != tp_failed:
                v.log("tp%d" % r, "Parent process exited, terminating worker", "INFO", "multiproc_executor.py:689")
        for r in range(v.tp):
            if r != tp_failed:
                w("[rank%d]:[W%s.%06d ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not "
                  "called before program exit, which can leak resources. For more info, please see "
                  "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())"
                  % (r, time.strftime("%m%d %H:%M:%S"), RNG.randint(0, 999999)))
        v.tb("core", VCORE + [("vllm/v1/engine/core.py", 83, "__init__",
                                "self.model_executor = executor_class(vllm_config)"),
                               ("vllm/v1/executor/multiproc_executor.py", 106, "_init_executor",
                                "self.workers = WorkerProc.wait_for_ready(unready_workers)"),
                               ("vllm/v1/executor/multiproc_executor.py", 509, "wait_for_ready", "raise e from None")],
             "Exception: WorkerProc initialization failed due to an exception in a background process. See stack "
             "trace for root cause.", "core.py:708", head="EngineCore failed to start.")
    else:
        v.tb("core", VCORE + [("vllm/v1/engine/core.py", 92, "__init__",
                                "self._initialize_kv_caches(vllm_config)")] + reason_core[0], reason_core[1],
             "core.py:708", head="EngineCore failed to start.")
        for r in range(v.tp):
            v.log("tp%d" % r, "SIGTERM received, shutting down worker.", "INFO", "multiproc_executor.py:702")
    v.raw("core", "Process EngineCore_DP0:")
    w("(APIServer pid=%d) Traceback (most recent call last):" % v.api, ERR)
    for f, ln, fn, code in [("vllm/entrypoints/openai/api_server.py", 1969, "run_server",
                             "async with build_async_engine_client(args) as engine_client:"),
                            ("vllm/v1/engine/core_client.py", 459, "__init__", "with launch_core_engines(")]:
        w('(APIServer pid=%d)   File "%s/%s", line %d, in %s' % (v.api, SITE, f, ln, fn), ERR)
        w("(APIServer pid=%d)     %s" % (v.api, code), ERR)
    w("(APIServer pid=%d) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
      "proc(s): {}" % v.api, ERR)
    n = v.tp if tp_failed is not None else 1
    w("/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear to "
      "be %d leaked shared_memory objects to clean up at shutdown" % n, ERR)
    w("  warnings.warn('resource_tracker: There appear to be %d '", ERR)
    sys.exit(1)


def vllm_run(a, oc, c, env):
    tp = a.tp
    v = V(tp)
    w("%s/torch/cuda/__init__.py:63: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py "
      "instead. If you did not install pynvml directly, please report this to the maintainers of the package that "
      "installed pynvml for you." % SITE, ERR)
    w("  import pynvml  # type: ignore[import]", ERR)
    w("%s %s [__init__.py:216] Automatically detected platform cuda." % (C["INFO"], time.strftime("%m-%d %H:%M:%S")))
    v.log("api", "vLLM API server version %s" % VLLM_VERSION)
    nd = {"model_tag": a.model, "host": a.host, "port": a.port, "model": a.model}
    if tp != 1:
        nd["tensor_parallel_size"] = tp
    for k, dflt in (("enable_expert_parallel", False), ("enforce_eager", False), ("kv_cache_dtype", "auto")):
        if getattr(a, k) != dflt:
            nd[k] = getattr(a, k)
    if a.speculative_config:
        nd["speculative_config"] = json.loads(a.speculative_config)
    v.log("api", "non-default args: %r" % nd, src="utils.py:243")
    nap(0.1)
    if oc["kind"] == "fail" and oc["phase"] == "gated":
        return vllm_gated(v, a)
    v.log("api", "Resolved architecture: Qwen3MoeForCausalLM", src="model.py:547")
    v.log("api", "Using max model len 40960", src="model.py:1510")
    if a.kv_cache_dtype.startswith("fp8"):
        v.log("api", "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts the "
                     "performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.",
              "WARNING", "cache.py:200")
    if a.enforce_eager:
        v.log("api", "Enforce eager set, overriding optimization level to -O0", "WARNING", "vllm.py:591")
    spec = json.loads(a.speculative_config) if a.speculative_config else None
    v.log("core", "Initializing a V1 LLM engine (v%s) with config: model='%s', speculative_config=%s, "
                  "tokenizer='%s', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
                  "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=40960, download_dir=None, "
                  "load_format=auto, tensor_parallel_size=%d, pipeline_parallel_size=1, data_parallel_size=1, "
                  "disable_custom_all_reduce=False, quantization=None, enforce_eager=%s, kv_cache_dtype=%s, "
                  "device_config=cuda, seed=0, served_model_name=%s, enable_prefix_caching=True, "
                  "chunked_prefill_enabled=True, compilation_config={\"level\":%d,\"cudagraph_mode\":%s,"
                  "\"max_capture_size\":512,\"compile_sizes\":[],\"cudagraph_capture_sizes\":[512,504,496,"
                  "...,16,8,4,2,1]}"
          % (VLLM_VERSION, a.model, ("SpeculativeConfig(method='%s', model=%r, num_spec_tokens=%d)"
                                     % (spec["method"], spec.get("model"), spec.get("num_speculative_tokens", 0)))
             if spec else None, a.model, tp, a.enforce_eager, a.kv_cache_dtype, a.model,
             0 if a.enforce_eager else 3, "NONE" if a.enforce_eager else "[2,1]"), src="core.py:93")
    v.log("core", "Reducing Torch parallelism from 16 threads to 1 to avoid unnecessary CPU contention. Set "
                  "OMP_NUM_THREADS in the external environment to tune this value as needed.", "WARNING",
          "multiproc_worker_utils.py:273")
    shm = "psm_%08x" % RNG.getrandbits(32)
    v.log("core", "vLLM message queue communication handle: Handle(local_reader_ranks=%r, buffer_handle=(%d, "
                  "16777216, 10, '%s'), local_subscribe_addr='ipc:///tmp/%08x-%04x-4%03x-8%03x-%012x', "
                  "remote_subscribe_addr=None, remote_addr_ipv6=False)"
          % (list(range(tp)), tp, shm, RNG.getrandbits(32), RNG.getrandbits(16), RNG.getrandbits(12),
             RNG.getrandbits(12), RNG.getrandbits(48)), src="shm_broadcast.py:289")
    nap(0.1)
    order = list(range(tp))
    RNG.shuffle(order)
    for r in order:
        v.log("tp%d" % r, "rank %d in world size %d is assigned as DP rank 0, PP rank 0, TP rank %d, EP rank %d"
              % (r, tp, r, r if a.enable_expert_parallel else 0), src="parallel_state.py:1208")
    v.log("tp0", "vLLM is using nccl==2.27.3", src="pynccl.py:70")
    names = {"auto": "FLASH_ATTN", "FLASHINFER": "FLASHINFER", "TRITON_ATTN": "TRITON_ATTN"}
    be = names.get(c["attn"], c["attn"])
    if oc["kind"] == "fail" and oc["phase"] == "backend":
        # every rank validates the backend; rank 1 gets there first and its message names the value
        fr = VW + [("vllm/v1/worker/gpu_worker.py", 214, "load_model", "self.model_runner.load_model()"),
                   ("vllm/attention/selector.py", 176, "get_attn_backend",
                    "raise ValueError(f\"Selected backend {selected_backend} is not valid for this configuration. \"")]
        v.tb("tp1", fr, "ValueError: Selected backend AttentionBackendEnum.\x1b[1m%s\x1b[0m is not valid for this "
                        "configuration. Reason: ['kv_cache_dtype not supported']" % be,
             "multiproc_executor.py:743", head="WorkerProc failed to start.")
        return vllm_engine_dies(v, 1, None)
    for r in order:
        v.log("tp%d" % r, "Using %s backend." % {"FLASH_ATTN": "Flash Attention", "FLASHINFER": "FlashInfer",
                                                   "TRITON_ATTN": "Triton Attention"}[be], src="cuda.py:366")
    for r in order:
        v.log("tp%d" % r, "Starting to load model %s..." % a.model, src="gpu_model_runner.py:2653")
    if oc["kind"] == "fail" and oc["phase"] == "draft":
        # rank 3 validates the EAGLE3 drafter's heads against TP first; the others are still loading weights
        v.tb("tp3", VW + [("vllm/v1/worker/gpu_model_runner.py", 2671, "load_model",
                            "self.drafter.load_model(self.model)"),
                           ("vllm/v1/spec_decode/eagle.py", 811, "load_model",
                            "self.model = get_model(vllm_config=self.vllm_config, model_config=draft_model_config)"),
                           ("vllm/config/model.py", 1191, "verify_with_parallel_config",
                            "raise ValueError(")],
             "ValueError: Total number of key-value heads (2) of the draft model %s must be divisible by tensor "
             "parallel size (4)." % spec.get("model"), "multiproc_executor.py:743", head="WorkerProc failed to start.")
        w("Loading safetensors checkpoint shards:  19% Completed | 3/16 [00:01<00:05,  2.40it/s]")
        for r in (0, 1, 2):
            w("[rank%d]:[E%s.%06d ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with [../third_party/gloo/"
              "gloo/transport/tcp/pair.cc:144] no error" % (r, time.strftime("%m%d %H:%M:%S"), RNG.randint(0, 999999)))
        v.log("core", "Worker proc VllmWorker-3 died unexpectedly, shutting down executor.", "ERROR",
              "multiproc_executor.py:154")
        if c["attn"] == "FLASHINFER":
            for r in (0, 1, 2):
                v.log("tp%d" % r, "FlashInfer workspace buffer /dev/shm/flashinfer_ws_%d_%05d was not released"
                      % (r, RNG.randint(10000, 99999)), "WARNING", "flashinfer.py:412")
        return vllm_engine_dies(v, 3, None)
    tqdm("Loading safetensors checkpoint shards", 16, unit="it/s")
    for r in order:
        v.log("tp%d" % r, "Loading weights took %.2f seconds" % RNG.uniform(4.8, 5.6), src="default_loader.py:267")
    gib = 57.0 / tp
    for r in order:
        v.log("tp%d" % r, "Model loading took %.4f GiB and %.6f seconds" % (gib, RNG.uniform(6, 7)),
              src="gpu_model_runner.py:2686")
    if spec and spec["method"] == "eagle3":
        v.log("tp0", "Loading drafter model %s" % spec.get("model"), src="eagle.py:802")
        nap(oc.get("slow") or 0)
    if not a.enforce_eager:
        v.log("tp0", "Using cache directory: /root/.cache/vllm/torch_compile_cache/%010x/rank_0_0/backbone for "
                     "vLLM's torch.compile" % RNG.getrandbits(40), src="backends.py:548")
        v.log("tp0", "Dynamo bytecode transform time: %.2f s" % RNG.uniform(6, 8), src="monitor.py:34")
    avail = 0.9 * 79.19 - gib - 2.9 + RNG.uniform(-0.06, 0.06)
    if oc["kind"] == "fail" and oc["phase"] == "kvmem":
        have = RNG.uniform(3.3, 3.5)
        fr = [("vllm/v1/engine/core.py", 190, "_initialize_kv_caches",
               "kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs, available_gpu_memory)"),
              ("vllm/v1/core/kv_cache_utils.py", 1243, "get_kv_cache_configs",
               "check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker, available_memory_one_worker)"),
              ("vllm/v1/core/kv_cache_utils.py", 701, "check_enough_kv_cache_memory", "raise ValueError(")]
        v.log("core", "Available KV cache memory: %.2f GiB" % have, src="gpu_worker.py:298")
        return vllm_engine_dies(v, None, (fr, "ValueError: To serve at least one request with the models's max seq "
                                              "len (40960), (3.75 GiB KV cache is needed, which is larger than the "
                                              "available KV cache memory (%.2f GiB). Based on the available memory, "
                                              "the estimated maximum model length is %d. Try increasing "
                                              "`gpu_memory_utilization` or decreasing `max_model_len` when "
                                              "initializing the engine." % (have, int(40960 * have / 3.75) // 16 * 16)))
    v.log("core", "Available KV cache memory: %.2f GiB" % avail, src="gpu_worker.py:298")
    toks = int(avail * 10923 * (2 if a.kv_cache_dtype == "fp8" else 1))
    v.log("core", "GPU KV cache size: %s tokens" % format(toks, ","), src="kv_cache_utils.py:1087")
    v.log("core", "Maximum concurrency for 40,960 tokens per request: %.2fx" % (toks / 40960), src="kv_cache_utils.py:1091")
    if not a.enforce_eager:
        if oc["kind"] == "hang":
            # rank 2 waits forever in an all-to-all of the EP dispatch during capture; the bar stops
            tqdm("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)", 67, stop_at=29)
            w("")
            v.log("tp2", "shm_broadcast: No available shared memory broadcast block found in 60 second. This "
                         "typically happens when some processes are hanging or doing some time-consuming work "
                         "(e.g. compilation)", "INFO", "shm_broadcast.py:466")
            while True:
                nap(1)
        tqdm("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)", 67)
        tqdm("Capturing CUDA graphs (decode, FULL)", 35)
        v.log("tp0", "Graph capturing finished in %d secs, took %.2f GiB" % (RNG.randint(5, 8), RNG.uniform(0.5, 0.7)),
              src="gpu_model_runner.py:3560")
    v.log("core", "init engine (profile, create kv cache, warmup model) took %.2f seconds" % RNG.uniform(28, 34),
          src="core.py:210")
    v.log("api", "Supported_tasks: ['generate']", src="api_server.py:1634")
    v.log("api", "Starting vLLM API server 0 on http://%s:%d" % (a.host, a.port), src="launcher.py:34")
    return v


def vllm_gated(v, a):
    rid = "Root=1-%08x-%024x;%08x-%04x-%04x-%04x-%012x" % (RNG.getrandbits(32), RNG.getrandbits(96), RNG.getrandbits(32),
                                                          RNG.getrandbits(16), RNG.getrandbits(16), RNG.getrandbits(16),
                                                          RNG.getrandbits(48))
    url = "https://huggingface.co/%s/resolve/main/config.json" % a.model
    e = lambda s: w("(APIServer pid=%d) %s" % (v.api, s), ERR)
    e("Traceback (most recent call last):")
    for f, ln, fn, code in [("huggingface_hub/utils/_http.py", 409, "hf_raise_for_status", "response.raise_for_status()"),
                            ("requests/models.py", 1026, "raise_for_status",
                             "raise HTTPError(http_error_msg, response=self)")]:
        e('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn))
        e("    " + code)
    e("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: %s" % url)
    e("")
    e("The above exception was the direct cause of the following exception:")
    e("")
    e("Traceback (most recent call last):")
    e('  File "%s/transformers/utils/hub.py", line 479, in cached_files' % SITE)
    e("    hf_hub_download(")
    e("huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: %s)" % rid)
    e("")
    e("Cannot access gated repo for url %s." % url)
    e("Access to model %s is restricted. You must have access to it and be authenticated to access it. Please log in."
      % a.model)
    e("")
    e("The above exception was the direct cause of the following exception:")
    e("")
    e("Traceback (most recent call last):")
    for f, ln, fn, code in [("vllm/entrypoints/cli/main.py", 73, "main", "args.dispatch_function(args)"),
                            ("vllm/engine/arg_utils.py", 1129, "create_model_config", "return ModelConfig("),
                            ("vllm/transformers_utils/config.py", 523, "get_config",
                             "config_dict, _ = PretrainedConfig.get_config_dict(")]:
        e('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn))
        e("    " + code)
    e("OSError: You are trying to access a gated repo.")
    e("Make sure to have access to it at https://huggingface.co/%s." % a.model)
    e("401 Client Error. (Request ID: %s)" % rid)
    e("")
    e("Cannot access gated repo for url %s." % url)
    e("Access to model %s is restricted. You must have access to it and be authenticated to access it. Please log in."
      % a.model)
    sys.exit(1)


# ====================================== SGLang ======================================
def sg(msg, tp=None, ep=None, lvl=None, stream=None):
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    tag = ""
    if tp is not None:
        tag = " TP%d" % tp + (" EP%d" % ep if ep is not None else "")
    w("[%s%s] %s%s" % (t, tag, (lvl + " ") if lvl else "", msg), stream)


SG_SCHED = [("sglang/srt/managers/scheduler.py", 2904, "run_scheduler_process",
             "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)"),
            ("sglang/srt/managers/scheduler.py", 312, "__init__", "self.tp_worker = TpModelWorker("),
            ("sglang/srt/model_executor/model_runner.py", 322, "__init__", "self.initialize(min_per_gpu_memory)")]


def py_tb(frames, prefix="", stream=None):
    w(prefix + "Traceback (most recent call last):", stream)
    for f, ln, fn, code in frames:
        w(prefix + '  File "%s", line %d, in %s' % (f if f.startswith("<") else SITE + "/" + f, ln, fn), stream)
        if code:
            w(prefix + "    " + code, stream)


def sched_exc(rank, ep, frames, text):
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    tag = " TP%d" % rank + (" EP%d" % ep if ep is not None else "")
    OUT.write(("[%s%s] Scheduler hit an exception: " % (t, tag)).encode())
    py_tb(SG_SCHED + frames)
    for line in text.split("\n"):
        w(line)
    w("")


def nccl_collateral(r, ep):
    sched_exc(r, ep, [("sglang/srt/model_executor/model_runner.py", 733, "load_model",
                       "self.model = get_model(model_config=self.model_config, load_config=self.load_config,"),
                      ("sglang/srt/distributed/parallel_state.py", 1203, "barrier",
                       "torch.distributed.barrier(group=self.cpu_group)")],
              "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
              "remote process exited or there was a network error, NCCL version 2.27.3\n"
              "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
              "Last error:\nsocketProgress: Connection closed by remote peer localhost<%d>" % RNG.randint(33000, 60000))


def sglang_die():
    sg("Received sigquit from a child process. It usually means the child failed.")
    nap(0.1)
    os.kill(os.getpid(), signal.SIGKILL)


def quant_config_line():
    """About 300 KB: the checkpoint's quantization config with its list of modules left in bf16."""
    ig = []
    for layer in range(61):
        ig.append("model.layers.%d.self_attn.kv_a_proj_with_mqa" % layer)
        ig.append("model.layers.%d.mlp.gate" % layer)
        for e in range(0, 256, 3):
            ig.append("model.layers.%d.mlp.experts.%d.gate_up_proj.weight_scale_inv" % (layer, e))
    return ("Using quantization config: {'quant_method': 'fp8', 'fmt': 'e4m3', 'activation_scheme': 'dynamic', "
            "'weight_block_size': [128, 128], 'modules_to_not_convert': %r}" % ig)


def sglang_run(a, oc, c, env):
    tp = a.tp
    eps = a.ep if a.ep > 1 else None
    ranks = list(range(tp))
    epr = lambda r: (r % a.ep) if eps else None
    d = [("model_path", a.model), ("tokenizer_path", a.model), ("trust_remote_code", a.trust_remote_code),
         ("kv_cache_dtype", a.kv_cache_dtype), ("quantization", "fp8" if "FP8" in a.model else None),
         ("host", a.host), ("port", a.port), ("mem_fraction_static", a.mem_fraction_static), ("tp_size", tp),
         ("ep_size", a.ep), ("attention_backend", a.attention_backend), ("moe_runner_backend", a.moe),
         ("moe_a2a_backend", "deepep" if a.ep > 1 else "none"), ("disable_cuda_graph", a.disable_cuda_graph),
         ("cuda_graph_max_bs", 256), ("enable_torch_compile", a.enable_torch_compile),
         ("torch_compile_max_bs", 32), ("random_seed", RNG.randint(10 ** 8, 10 ** 9))]
    sg("server_args=ServerArgs(" + ", ".join("%s=%r" % kv for kv in d) + ", ...)")
    nap(0.05)
    if oc["kind"] == "fail" and oc["phase"] == "args":
        py_tb([("<frozen runpy>", 198, "_run_module_as_main", None), ("<frozen runpy>", 88, "_run_code", None),
               ("sglang/launch_server.py", 24, "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
               ("sglang/srt/server_args.py", 622, "__post_init__", "self._handle_moe_kernel_config()"),
               ("sglang/srt/server_args.py", 1577, "_handle_moe_kernel_config",
                "assert self.tp_size % self.ep_size == 0, (")])
        w("AssertionError: tp_size (%d) must be divisible by ep_size (%d); expert parallelism splits the tensor-"
          "parallel group" % (tp, a.ep))
        sys.exit(1)
    if oc["kind"] == "fail" and oc["phase"] == "libcudart":
        for r in ranks:
            sg("Init torch distributed begin.", r)
        for r in ranks:
            sched_exc(r, None, [("sglang/srt/model_executor/model_runner.py", 57, "<module>",
                                 "from sglang.srt.layers.attention.flashinfer_backend import FlashInferAttnBackend"),
                                ("sglang/srt/layers/quantization/fp8_kernel.py", 31, "<module>",
                                 "from sgl_kernel import sgl_per_token_group_quant_fp8"),
                                ("sgl_kernel/__init__.py", 5, "<module>",
                                 "common_ops = _load_architecture_specific_ops()"),
                                ("sgl_kernel/load_utils.py", 188, "_load_architecture_specific_ops",
                                 "raise ImportError(error_msg)")],
                      "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory")
        return sglang_die()
    for r in ranks:
        sg("Init torch distributed begin.", r, epr(r))
    nap(0.05)
    if tp > 1:
        sg("sglang is using nccl==2.27.3", 0, epr(0))
    for r in ranks:
        sg("Init torch distributed ends. mem usage=%.2f GB" % RNG.uniform(1.0, 1.3), r, epr(r))
    for r in ranks:
        sg("Load weight begin. avail mem=%.2f GB" % RNG.uniform(77.9, 78.2), r, epr(r))
    w("[%s TP0] %s" % (time.strftime("%Y-%m-%d %H:%M:%S"), quant_config_line()))
    if oc["kind"] == "fail" and oc["phase"] == "deepgemm":
        k = oc["rank"]
        sched_exc(k, epr(k), [("sglang/srt/model_executor/model_runner.py", 771, "load_model",
                                "self.model = get_model(model_config=self.model_config, load_config=self.load_config,"),
                               ("sglang/srt/layers/moe/moe_runner/deep_gemm.py", 112, "__init__",
                                "_ensure_jit_or_precompiled(self.config)"),
                               ("sglang/srt/layers/deep_gemm_wrapper/compile_utils.py", 77,
                                "_ensure_jit_or_precompiled", "raise RuntimeError(")],
                  "RuntimeError: DeepGEMM kernels for M=%d, N=4096, K=7168 are not in the cache /root/.cache/deep_gemm "
                  "and JIT compilation is turned off by SGL_ENABLE_JIT_DEEPGEMM=0; run `python3 -m "
                  "sglang.compile_deep_gemm` with the same arguments first" % (65536 // tp))
        tqdm("Loading safetensors checkpoint shards", 163, stop_at=41)
        w("")
        for r in ranks:
            if r != k:
                nccl_collateral(r, epr(r))
        w("[rank0]:[W%s.%06d ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called "
          "before program exit, which can leak resources. For more info, please see "
          "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())"
          % (time.strftime("%m%d %H:%M:%S"), RNG.randint(0, 999999)))
        return sglang_die()
    tqdm("Loading safetensors checkpoint shards", 163, unit="it/s")
    for r in ranks:
        sg("Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB."
           % (78.1 - 642 / tp + RNG.uniform(-0.05, 0.05), 642 / tp), r, epr(r))
    for r in ranks:
        sg("KV Cache is allocated. #tokens: %d, KV size: %.2f GB" % (int(a.mem_fraction_static * 310000),
                                                                    a.mem_fraction_static * 8.1), r, epr(r))
    if a.enable_torch_compile:
        sg("Compiling the decode graphs with torch.compile for bs [1, 2, 4, 8, 16, 32] ...", 0, epr(0))
        nap(oc.get("slow") or 0)
        if oc["kind"] == "fail" and oc["phase"] == "compile":
            for r in ranks:
                sched_exc(r, epr(r), [("sglang/srt/model_executor/cuda_graph_runner.py", 402, "capture",
                                       "graph, output_buffers = self.capture_one_batch_size(bs, forward)"),
                                      ("torch/_dynamo/eval_frame.py", 655, "_fn", "return fn(*args, **kwargs)")],
                          "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: "
                          "call_function sgl_kernel.cutlass_fp8_blockwise_scaled_grouped_mm(*(FakeTensor(..., "
                          "device='cuda:%d', size=(256, 4096), dtype=torch.float8_e4m3fn), FakeTensor(..., "
                          "device='cuda:%d', size=(256, 7168, 4096), dtype=torch.float8_e4m3fn)), **{}): got "
                          "RuntimeError('expected problem_sizes to be a contiguous int32 tensor')" % (r, r))
            return sglang_die()
    if not a.disable_cuda_graph:
        for r in ranks:
            sg("Capture cuda graph begin. This can take up to several minutes. avail mem=%.2f GB"
               % RNG.uniform(6.5, 9.5), r, epr(r))
        # two ranks draw their bars on one terminal line; one write cuts the other's block character in half
        OUT.write(b"Capturing batches (bs=256 avail_mem=7.12 GB):  14%|\xe2\x96\x88\xe2\x96")
        OUT.write(b"\rCapturing batches (bs=248 avail_mem=7.09 GB):  17%|\xe2\x96\x88\xe2\x96\x88 | 6/36 [00:01<00:06]")
        OUT.flush()
        if oc["kind"] == "fail" and oc["phase"] == "graph":
            k = oc["rank"]
            w("")
            free = RNG.uniform(0.8, 1.3)
            sched_exc(k, epr(k), [("sglang/srt/model_executor/model_runner.py", 2011, "init_device_graphs",
                                   "self.graph_runner = graph_runners[self.device](self)"),
                                  ("sglang/srt/model_executor/cuda_graph_runner.py", 402, "capture",
                                   "graph, output_buffers = self.capture_one_batch_size(bs, forward)")],
                      "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d "
                      "has a total capacity of 79.19 GiB of which %.2f GiB is free. Including non-PyTorch memory, "
                      "this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by "
                      "PyTorch, and %.2f MiB is reserved by PyTorch but unallocated."
                      % (RNG.uniform(1.6, 1.9), k, free, 79.19 - free, RNG.uniform(74.5, 75.5),
                         RNG.uniform(300, 900)))
            for r in ranks:
                if r != k:
                    w("[rank%d]:[E%s.%06d ProcessGroupNCCL.cpp:1895] [PG ID 2 PG GUID 3 Rank %d] Process group "
                      "watchdog thread terminated with exception: NCCL error: remote process exited or there was a "
                      "network error, NCCL version 2.27.3" % (r, time.strftime("%m%d %H:%M:%S"),
                                                              RNG.randint(0, 999999), r))
            w("terminate called after throwing an instance of 'c10::DistBackendError'")
            w("  what():  [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: NCCL "
              "error: remote process exited or there was a network error, NCCL version 2.27.3")
            return sglang_die()
        tqdm("\rCapturing batches (bs=1 avail_mem=6.41 GB)", 36)
        for r in ranks:
            sg("Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB."
               % (RNG.uniform(9, 14), RNG.uniform(0.8, 1.2), RNG.uniform(5.5, 6.5)), r, epr(r))
    sg("max_total_num_tokens=%d, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=%d, "
       "context_len=163840, available_gpu_mem=%.2f GB" % (int(a.mem_fraction_static * 310000), 1024,
                                                         RNG.uniform(5.5, 6.5)), 0, epr(0))


# ====================================== TensorRT-LLM ======================================
def tl(msg, lvl="I", rank=None, stream=None):
    t = time.strftime("%m/%d/%Y-%H:%M:%S")
    w("[%s] [TRT-LLM] %s[%s] %s" % (t, "[RANK %d] " % rank if rank is not None else "", lvl, msg),
      stream or (ERR if lvl in ("E", "W") else OUT))


def mpi_abort(rank, nranks):
    jobid = RNG.randint(10000, 65000)
    for s in ["--------------------------------------------------------------------------",
              "MPI_ABORT was invoked on rank %d in communicator MPI_COMM_WORLD" % rank,
              "  Proc: [[%d,1],%d]" % (jobid, rank), "  Errorcode: 1", "",
              "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
              "You may or may not see output from other processes, depending on",
              "exactly when Open MPI kills them.",
              "--------------------------------------------------------------------------"]:
        w(s, ERR)
    for r in range(nranks):
        if r != rank:
            w("[%s:%05d] *** Process received signal ***" % ("gpu-node-07", PID + 11 + r), ERR)
            w("[%s:%05d] Signal: Terminated (15)" % ("gpu-node-07", PID + 11 + r), ERR)


TL_EXEC = [("tensorrt_llm/executor/worker.py", 822, "worker_main",
            "worker: GenerationExecutorWorker = worker_cls("),
           ("tensorrt_llm/executor/worker.py", 152, "__init__", "self.engine = _create_py_executor("),
           ("tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", 441, "create_py_executor",
            "kv_cache_creator.build_managers(resources)")]


def trtllm_fail_tail(nranks):
    w("Traceback (most recent call last):", ERR)
    for f, ln, fn, code in [("tensorrt_llm/commands/serve.py", 402, "serve", "launch_server(host, port, llm_args)"),
                            ("tensorrt_llm/llmapi/llm.py", 975, "_build_model",
                             "self._executor = self._executor_cls.create("),
                            ("tensorrt_llm/executor/proxy.py", 332, "_start_executor_workers", "raise RuntimeError(")]:
        w('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn), ERR)
        w("    " + code, ERR)
    w("RuntimeError: Executor worker returned error", ERR)
    if nranks > 1:
        mpi_abort(0, nranks)
        w("prterun has exited due to process rank 0 with PID 0 on node gpu-node-07 exiting improperly. There are "
          "three reasons this could occur:", ERR)
    sys.exit(1)


def trtllm_run(a, oc, c, env):
    tp = a.tp_size
    w("[TensorRT-LLM] TensorRT-LLM version: %s" % TRTLLM_VERSION)
    tl("Using LLM with PyTorch backend")
    opts = {}
    if a.extra_llm_api_options:
        p = a.extra_llm_api_options
        p = p if os.path.isabs(p) else os.path.join(os.getcwd(), p)
        if not os.path.exists(p):
            w("Error: Invalid value for '--extra_llm_api_options': File '%s' does not exist." % a.extra_llm_api_options,
              ERR)
            sys.exit(2)
        tl("Loading extra LLM API options from %s" % a.extra_llm_api_options)
    if c["pdl"] == "1":
        tl("TRTLLM_ENABLE_PDL=1: programmatic dependent launch is on for all kernels that support it", "W")
    if oc["kind"] == "fail" and oc["phase"] == "validate":
        w("Traceback (most recent call last):", ERR)
        for f, ln, fn, code in [("tensorrt_llm/commands/serve.py", 381, "serve",
                                 "llm_args = get_llm_args(**llm_args_kwargs)"),
                                ("tensorrt_llm/llmapi/llm_args.py", 2688, "update_llm_args_with_extra_dict",
                                 "return TorchLlmArgs(**merged)"),
                                ("pydantic/main.py", 253, "__init__",
                                 "validated_self = self.__pydantic_validator__.validate_python(data, self_instance=self)")]:
            w('  File "%s/%s", line %d, in %s' % (SITE, f, ln, fn), ERR)
            w("    " + code, ERR)
        w("pydantic_core._pydantic_core.ValidationError: 1 validation error for TorchLlmArgs", ERR)
        w("  Value error, cuda_graph_config.max_batch_size (128) is smaller than max_batch_size (256) while "
          "cuda_graph_config.enable_padding is False: requests beyond batch 128 would have no graph "
          "[type=value_error, input_value={'model': '%s', 'tp_size': %d, ...}, input_type=dict]" % (a.model, tp), ERR)
        w("    For further information visit https://errors.pydantic.dev/2.11/v/value_error", ERR)
        sys.exit(1)
    tl("neither checkpoint_format nor checkpoint_loader were provided, checkpoint_format will be set to HF.")
    if tp > 1:
        tl("start MpiSession with %d workers" % tp)
    for r in range(tp):
        w("[TensorRT-LLM][INFO] Initializing MPI with thread mode 3")
    for r in range(tp):
        tl("ATTENTION RUNTIME FEATURES: AttentionRuntimeFeatures(chunked_prefill=False, cache_reuse=True, "
           "has_speculative_draft_tokens=False, chunk_size=%d)" % a.max_num_tokens, rank=r)
    if oc["kind"] == "fail" and oc["phase"] == "nospace":
        tmp = "/tmp/tmp%s" % "".join(RNG.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(8))
        for r in range(tp):
            tl("Failed to initialize executor on rank %d: [Errno 28] No space left on device: "
               "'/root/.cache/flashinfer/90/generated/fused_moe_90/%s/sm90_gemm_%d.cu'"
               % (r, os.path.basename(tmp), r), "E", rank=r)
            py_tb(TL_EXEC[:2] + [("flashinfer/jit/core.py", 311, "build_and_load",
                                  "write_if_different(self.source_path, self.source)"),
                                 ("flashinfer/jit/utils.py", 28, "write_if_different", "with open(path, \"w\") as f:")],
                  stream=ERR)
            w("OSError: [Errno 28] No space left on device: '/root/.cache/flashinfer/90/generated/fused_moe_90/%s/"
              "sm90_gemm_%d.cu'" % (os.path.basename(tmp), r), ERR)
        return trtllm_fail_tail(tp)
    tqdm("Loading safetensors weights in parallel", 30, unit="it/s", stream=OUT)
    for r in range(tp):
        tl("Memory used after loading model weights (inside torch) in memory usage profiling: %.2f GiB"
           % (70.0 / tp + RNG.uniform(-0.02, 0.02)), rank=r)
    if oc["kind"] == "fail" and oc["phase"] == "oom":
        k = oc["rank"]
        free = RNG.uniform(0.9, 1.4)
        tl("Failed to initialize executor on rank %d: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a "
           "total capacity of 79.19 GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has "
           "%.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is "
           "reserved by PyTorch but unallocated." % (k, RNG.uniform(2.1, 2.5), k, free, 79.19 - free,
                                                     RNG.uniform(75, 76), RNG.uniform(100, 600)), "E", rank=k)
        py_tb(TL_EXEC, stream=ERR)
        w("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.25 GiB. GPU %d has a total capacity of "
          "79.19 GiB of which %.2f GiB is free." % (k, free), ERR)
        for r in range(tp):
            if r != k:
                tl("Failed to initialize executor on rank %d: [TensorRT-LLM][ERROR] Assertion failed: Failed, NCCL "
                   "error /src/tensorrt_llm/cpp/tensorrt_llm/runtime/ncclCommunicator.cpp:90 'remote process exited "
                   "or there was a network error'" % r, "E", rank=r)
                w("1       0x7f%010x tensorrt_llm::common::throwRuntimeError(char const*, int, char const*) + 76"
                  % RNG.getrandbits(40), ERR)
        return trtllm_fail_tail(tp)
    tl("max_seq_len=131072, max_num_requests=%d, max_num_tokens=%d, max_batch_size=%d"
       % (a.max_batch_size, a.max_num_tokens, a.max_batch_size), rank=0)
    for r in range(tp):
        tl("[kv cache manager] Allocated %.2f GiB for max tokens in paged KV cache (%d)."
           % (a.kv_cache_free_gpu_memory_fraction * 9.1 * tp / 2, int(a.kv_cache_free_gpu_memory_fraction * 196608)),
           rank=r)
    if c["opts"] == "cuda_graph":
        tl("Creating CUDA graph instances for 9 batch sizes (max 128, padding off).", rank=0)
        tqdm("Capturing CUDA graphs", 9, stream=OUT)
    if oc["kind"] == "hang":
        tl("[Autotuner] Autotuning process starts ...", rank=0)
        for r in range(tp):
            if r != oc["rank"]:
                tl("[Autotuner] Autotuning process ends", rank=r)
        while True:
            nap(1)
    tl("[Autotuner] Autotuning process ends", rank=0)
    tl("get signal from executor worker")
    return True


# ====================================== late crashes ======================================
def late_crash(persona, oc, c):
    k = oc.get("rank") or 0
    if persona == "vllm":
        v = V(int(c["tp"]))
        v.tb("tp%d" % k, [("vllm/v1/executor/multiproc_executor.py", 803, "worker_busy_loop",
                           "output = func(*args, **kwargs)"),
                          ("vllm/v1/worker/gpu_model_runner.py", 2411, "execute_model",
                           "valid_sampled_token_ids = sampled_token_ids.tolist()")],
             "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
             "asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             "multiproc_executor.py:808", head="WorkerProc hit an exception.")
        for r in range(v.tp):
            if r != k:
                w("[rank%d]:[E%s.%06d ProcessGroupNCCL.cpp:2057] [PG ID 2 PG GUID 3 Rank %d] Process group watchdog "
                  "thread terminated with exception: NCCL error: remote process exited or there was a network error"
                  % (r, time.strftime("%m%d %H:%M:%S"), RNG.randint(0, 999999), r))
        v.log("core", "Worker proc VllmWorker-%d died unexpectedly, shutting down executor." % k, "ERROR",
              "multiproc_executor.py:154")
        v.log("api", "AsyncLLM output_handler failed.", "ERROR", "async_llm.py:480")
        v.log("api", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                     "(above) for the root cause.", "ERROR", "async_llm.py:480")

        def die():
            nap(0.4)
            w("INFO:     Shutting down")
            os._exit(1)
        threading.Thread(target=die, daemon=True).start()
    elif persona == "sglang":
        ep = int(c["ep"])
        sched_exc(k, (k % ep) if ep > 1 else None,
                  [("sglang/srt/managers/scheduler.py", 1011, "event_loop_overlap", "batch_result = self.run_batch(batch)"),
                   ("sglang/srt/layers/moe/token_dispatcher/deepep.py", 431, "combine",
                    "combined_x, _, event, hook = buffer.low_latency_combine(")],
                  "RuntimeError: CUDA error: an illegal memory access was encountered")
        for r in range(int(c["tp"])):
            if r != k:
                w("[rank%d]:[E%s.%06d ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation "
                  "timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=917504, NumelOut=917504, Timeout(ms)=600000) "
                  "ran for 600082 milliseconds before timing out." % (r, time.strftime("%m%d %H:%M:%S"),
                                                                      RNG.randint(0, 999999), r, RNG.randint(900, 999)))

        def die():
            nap(0.05)
            sglang_die()
        threading.Thread(target=die, daemon=True).start()
    else:
        tl("Encountered an error in forward function: CUDA error: an illegal memory access was encountered", "E", rank=k)
        w("[TensorRT-LLM][ERROR] Encountered an error in forward function: CUDA error: an illegal memory access was "
          "encountered (/src/tensorrt_llm/cpp/tensorrt_llm/runtime/torchUtils.h:88)", ERR)
        mpi_abort(k, int(c["tp"]))

        def die():
            nap(0.2)
            os._exit(1)
        threading.Thread(target=die, daemon=True).start()


# ====================================== serving ======================================
def serve(persona, a, oc, c, env, key, n):
    sys.path.insert(0, FIELDSRV_DIR)
    import fieldsrv
    from http.server import ThreadingHTTPServer
    kind = oc["kind"]
    state = {"dead": False}
    lock = threading.Lock()
    orig = fieldsrv.generate

    def gen(args, body, chat):
        r, err = orig(args, body, chat)
        if err or r is None:
            return r, err
        toks, reasoning, finish, pt = r
        if kind == "garbage":
            mt = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
            return (["!"] * mt, [], "length", pt), None
        if kind == "wrong" and not body.get("ignore_eos"):
            text = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 10), "".join(toks))
            return (fieldsrv.words(text) or [text], reasoning, finish, pt), None
        return r, None
    fieldsrv.generate = gen

    class H(fieldsrv.Handler):
        def do_GET(self):
            if state["dead"] and self.path == "/health":
                self.send_json(503, {"object": "error", "message": "engine is dead", "code": 503})
                return
            if self.path == "/version":
                self.send_json(200, {"version": {"vllm": VLLM_VERSION, "sglang": SGLANG_VERSION}.get(persona,
                                                                                                    TRTLLM_VERSION)})
                return
            fieldsrv.Handler.do_GET(self)

        def serve(self, body, chat):
            if kind == "late-crash" and fieldsrv.in_flight >= 3:
                with lock:
                    first = not state["dead"]
                    state["dead"] = True
                if first:
                    record(env, key, n, "event: late-crash at %d in flight" % fieldsrv.in_flight, c)
                    late_crash(persona, oc, c)
                if persona != "sglang":
                    self.send_json(500, {"object": "error", "message": "EngineCore encountered an issue. See stack "
                                         "trace (above) for the root cause.", "type": "InternalServerError",
                                         "param": None, "code": 500})
                return
            fieldsrv.Handler.serve(self, body, chat)

    try:
        srv = ThreadingHTTPServer((a.host, a.port), H)
    except OSError as e:
        w("ERROR:    [Errno %d] error while attempting to bind on address ('%s', %d): %s"
          % (e.errno, a.host, a.port, (e.strerror or "").lower()))
        sys.exit(1)
    srv.daemon_threads = True
    srv.args = argparse.Namespace(host=a.host, port=a.port, backend="honest", context=40960, long_threshold=10 ** 9,
                                  token_delay_ms=0.5 if kind == "garbage" else oc["d"], tokens_per_chunk=1,
                                  chunk_chars=False, tokenize_scale=1.0)
    w("INFO:     Started server process [%d]" % PID)
    w("INFO:     Waiting for application startup.")
    w("INFO:     Application startup complete.")
    if persona != "vllm":
        w("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)" % (a.host, a.port))
    if persona == "sglang":
        w("[%s] The server is fired up and ready to roll!" % time.strftime("%Y-%m-%d %H:%M:%S"))
    srv.serve_forever()


def main(argv=None, persona=None):
    argv = sys.argv[1:] if argv is None else argv
    persona, a = parse(argv, persona)
    env = os.environ
    key = cell_key(argv, env)
    n = bump(env, key)
    c = features(persona, a, env)
    oc = decide(persona, a, env)
    record(env, key, n, oc["kind"] + ("/" + oc["phase"] if "phase" in oc else ""), c)
    if persona == "vllm":
        vllm_run(a, oc, c, env)
    elif persona == "sglang":
        sglang_run(a, oc, c, env)
    else:
        trtllm_run(a, oc, c, env)
    if oc["kind"] == "fail":
        w("internal: outcome %r was not printed" % oc, ERR)
        sys.exit(3)
    serve(persona, a, oc, c, env, key, n)


if __name__ == "__main__":
    main()
