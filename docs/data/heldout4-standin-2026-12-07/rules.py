#!/usr/bin/env python3
"""rules.py -- each space's rules as predicates over a cell (axis -> value name), in the engine's order:
(name, outcome kind, predicate, culprit features, the culprit line (a regex the evidence should match
when it quotes the line that says the cause; None where the engine prints none), notes). check()
verifies them against standin.decide on every cell."""
import spaces


def F(*kv):
    return frozenset(kv)


RULES = {
 "P": [
  ("spec=eagle3 x tp=4: Worker_TP3 'key-value heads (2) of the draft model ...-EAGLE3 must be divisible by tensor "
   "parallel size (4)'; then Gloo/NCCL collateral from TP0-2, EngineCore/APIServer wrappers, resource_tracker warning",
   "fail", lambda c: c["spec"] == "eagle3" and c["tp"] == "4", lambda c: F("spec=eagle3", "tp=4"),
   r"key-value heads \(2\) of the draft model", "multi-rank; the line spells tp=2's number as a head count"),
  ("attn=TRITON_ATTN x kv=fp8: Worker_TP1 'Selected backend AttentionBackendEnum.<ESC>[1mTRITON_ATTN<ESC>[0m is not "
   "valid ... kv_cache_dtype not supported' (the value set through VLLM_ATTENTION_BACKEND, coloured)",
   "fail", lambda c: c["attn"] == "TRITON_ATTN" and c["kv"] == "fp8", lambda c: F("attn=TRITON_ATTN", "kv=fp8"),
   r"is not valid for this configuration", "env-valued culprit, ANSI around it"),
  ("spec=eagle3 x tp=2 x kv=auto: EngineCore 'ValueError: To serve at least one request ... KV cache is needed, "
   "which is larger than the available KV cache memory (3.3x-3.5x GiB)' (figure varies per launch)",
   "fail", lambda c: c["spec"] == "eagle3" and c["tp"] == "2" and c["kv"] == "auto",
   lambda c: F("spec=eagle3", "tp=2", "kv=auto"), r"larger than the available KV cache memory", "oom, names nothing"),
  ("ep=on x tp=4 x spec=ngram x eager=graphs: hang in CUDA-graph capture (bar stops at 29/67, rank 2 shm_broadcast)",
   "hang", lambda c: c["ep"] == "on" and c["tp"] == "4" and c["spec"] == "ngram" and c["eager"] == "graphs",
   lambda c: F("ep=on", "tp=4", "spec=ngram", "eager=graphs"), None, "start-up hang"),
  ("attn=FLASHINFER x spec=ngram: garbage '!!!!', no line", "garbage",
   lambda c: c["attn"] == "FLASHINFER" and c["spec"] == "ngram", lambda c: F("attn=FLASHINFER", "spec=ngram"),
   None, "silent"),
  ("ep=on x tp=2 x kv=fp8: wrong answers (every number +10), no line", "wrong",
   lambda c: c["ep"] == "on" and c["tp"] == "2" and c["kv"] == "fp8", lambda c: F("ep=on", "tp=2", "kv=fp8"),
   None, "silent"),
  ("attn=FLASHINFER x ep=on x tp=4 x eager=graphs: serves the checks; Worker_TP2 illegal memory access at 3 in "
   "flight, NCCL collateral from the other ranks", "late-crash",
   lambda c: c["attn"] == "FLASHINFER" and c["ep"] == "on" and c["tp"] == "4" and c["eager"] == "graphs",
   lambda c: F("attn=FLASHINFER", "ep=on", "tp=4", "eager=graphs"), r"illegal memory access", "late"),
 ],
 "Q": [
  ("ep=8 x tp=4: 'AssertionError: tp_size (4) must be divisible by ep_size (8)' (main process, before any rank)",
   "fail", lambda c: c["ep"] == "8" and c["tp"] == "4", lambda c: F("ep=8", "tp=4"), r"must be divisible by ep_size",
   "single process, names both as numbers"),
  ("moe=deep_gemm x jit=off: one rank (TP5 / TP2) 'DeepGEMM kernels ... not in the cache ... JIT compilation is "
   "turned off by SGL_ENABLE_JIT_DEEPGEMM=0'; the other ranks' Scheduler exceptions quote NCCL errors",
   "fail", lambda c: c["moe"] == "deep_gemm" and c["jit"] == "off", lambda c: F("moe=deep_gemm", "jit=off"),
   r"JIT compilation is turned off", "multi-rank, env-valued culprit"),
  ("graph=compile x moe=cutlass: every rank 'torch._dynamo.exc.TorchRuntimeError: ... "
   "sgl_kernel.cutlass_fp8_blockwise_scaled_grouped_mm ...' after 2 s of compile", "fail",
   lambda c: c["graph"] == "compile" and c["moe"] == "cutlass", lambda c: F("graph=compile", "moe=cutlass"),
   r"cutlass_fp8_blockwise_scaled_grouped_mm", "switch culprit; slow"),
  ("graph=default x mfs=0.88 x tp=4: TP2 'Capture cuda graph failed: CUDA out of memory ...' (figures vary), "
   "after two ranks' bars cut into each other (bytes not UTF-8); NCCL watchdog collateral last", "fail",
   lambda c: c["graph"] == "default" and c["mfs"] == "0.88" and c["tp"] == "4",
   lambda c: F("graph=default", "mfs=0.88", "tp=4"), r"Capture cuda graph failed", "oom, a value that is no flag"),
  ("moe=cutlass x ep=8: garbage, no line", "garbage", lambda c: c["moe"] == "cutlass" and c["ep"] == "8",
   lambda c: F("moe=cutlass", "ep=8"), None, "silent"),
  ("moe=deep_gemm x ep=4: wrong answers, no line", "wrong", lambda c: c["moe"] == "deep_gemm" and c["ep"] == "4",
   lambda c: F("moe=deep_gemm", "ep=4"), None, "silent"),
  ("moe=triton x ep=8 x mfs=0.88 x graph!=nograph: serves the checks; TP6 illegal memory access in DeepEP combine "
   "at 3 in flight, NCCL watchdog collateral", "late-crash",
   lambda c: c["moe"] == "triton" and c["ep"] == "8" and c["mfs"] == "0.88" and c["graph"] != "nograph",
   lambda c: F("moe=triton", "ep=8", "mfs=0.88"), r"illegal memory access", "late; faster than the true best"),
 ],
 "R": [
  ("opts=cuda_graph x mbs=256: pydantic 'cuda_graph_config.max_batch_size (128) is smaller than max_batch_size "
   "(256)' on stderr, before MPI starts", "fail", lambda c: c["opts"] == "cuda_graph" and c["mbs"] == "256",
   lambda c: F("opts=cuda_graph", "mbs=256"), r"is smaller than max_batch_size", "a path value, quotes 128"),
  ("fmf=0.95 x mnt=8192: RANK 1 'Failed to initialize executor on rank 1: CUDA out of memory ...' (figures vary), "
   "then RANK 0/2/3 NCCL errors, 'Executor worker returned error', the MPI_ABORT block (rank 0)", "fail",
   lambda c: c["fmf"] == "0.95" and c["mnt"] == "8192", lambda c: F("fmf=0.95", "mnt=8192"),
   r"rank 1: CUDA out of memory|OutOfMemoryError", "oom, multi-rank"),
  ("opts=overlap_off x pdl=1 x tp=4: hang in the autotuner (rank 3 never ends)", "hang",
   lambda c: c["opts"] == "overlap_off" and c["pdl"] == "1" and c["tp"] == "4",
   lambda c: F("opts=overlap_off", "pdl=1", "tp=4"), None, "start-up hang, env-valued"),
  ("opts=attention_dp x pdl=1: garbage, no line", "garbage", lambda c: c["opts"] == "attention_dp" and c["pdl"] == "1",
   lambda c: F("opts=attention_dp", "pdl=1"), None, "silent"),
  ("opts=attention_dp x tp=2 x mnt=4096: wrong answers, no line", "wrong",
   lambda c: c["opts"] == "attention_dp" and c["tp"] == "2" and c["mnt"] == "4096",
   lambda c: F("opts=attention_dp", "tp=2", "mnt=4096"), None, "silent"),
  ("opts=cuda_graph x tp=4 x pdl=1: serves the checks; RANK 3 illegal memory access at 3 in flight, MPI_ABORT",
   "late-crash", lambda c: c["opts"] == "cuda_graph" and c["tp"] == "4" and c["pdl"] == "1",
   lambda c: F("opts=cuda_graph", "tp=4", "pdl=1"), r"illegal memory access", "late; faster than the true best"),
 ],
 "N1": [("gated model, no token: GatedRepoError 401 / 'Cannot access gated repo'", "fail", lambda c: True,
         lambda c: F(), r"gated repo|GatedRepoError|401", "host/model fault")],
 "N2": [("libcudart.so.12 missing: ImportError in every TP rank's scheduler", "fail", lambda c: True, lambda c: F(),
         r"libcudart\.so\.12", "host fault")],
 "N3": [("disk full: OSError [Errno 28] No space left on device writing FlashInfer's JIT sources", "fail",
         lambda c: True, lambda c: F(), r"No space left on device|Errno 28", "host fault")],
}


def rule_of(space, c):
    for r in RULES[space]:
        if r[2](c):
            return r
    return None


def check():
    for s in RULES:
        n = 0
        for c in spaces.cells(s):
            o = spaces.outcome(s, c)
            r = rule_of(s, c)
            kind = r[1] if r else "serve"
            assert kind == o["kind"], (s, c, o, r and r[0])
            n += 1
        print("%s: rules agree with standin.decide on all %d cells" % (s, n))


if __name__ == "__main__":
    check()
