#!/usr/bin/env python3
"""rules.py -- each space's deterministic rules as predicates over a cell (axis -> value string), in
the engine's order: (name, outcome kind, predicate, culprit features, how the line treats the culprit,
the matrix values the log quotes around it that are NOT the cause). check() verifies them against
standin.decide on every cell. The sporadic failures are not rules: standin.sporadic, per launch."""
import spaces


def F(*kv):
    return frozenset(kv)


RULES = {
 "V1": [
  ("FLASH_ATTN x kv=fp8_e5m2: 'FlashAttention-3 ... only as torch.float8_e4m3fn, got torch.float8_e5m2'", "fail",
   lambda c: c["attn"] == "FLASH_ATTN" and c["kv"] == "fp8_e5m2", lambda c: F("attn=FLASH_ATTN", "kv=fp8_e5m2"),
   "pair, both spelled otherwise; the line spells the innocent kv=fp8 (torch.float8_e4m3fn)"),
  ("seqs=512 x gmu=0.95: CUDA-graph capture OOM (names nothing; fp8 / FLASHINFER WARNINGs before it)", "fail",
   lambda c: c["seqs"] == "512" and c["gmu"] == "0.95", lambda c: F("seqs=512", "gmu=0.95"),
   "pair-unnamed, red-herring WARNINGs"),
  ("FLEX_ATTENTION x mbt=8192: inductor error; traceback code lines say \"fp8\" and \"FLASHINFER\"", "fail",
   lambda c: c["attn"] == "FLEX_ATTENTION" and c["mbt"] == "8192", lambda c: F("attn=FLEX_ATTENTION", "mbt=8192"),
   "pair-unnamed, red herring in source context; slow start"),
  ("FLASHINFER x kv=fp8 x seqs=512: serves the checks, engine dies at concurrency 4 (illegal memory access)",
   "late-crash", lambda c: c["attn"] == "FLASHINFER" and c["kv"] == "fp8" and c["seqs"] == "512",
   lambda c: F("attn=FLASHINFER", "kv=fp8", "seqs=512"), "late; faster than the true best"),
  ("TRITON_ATTN x kv=fp8: serves the checks, answers '!' after the 5th bench request", "late-garbage",
   lambda c: c["attn"] == "TRITON_ATTN" and c["kv"] == "fp8", lambda c: F("attn=TRITON_ATTN", "kv=fp8"), "late"),
 ],
 "S1": [
  ("attn=trtllm_mha: 'TRTLLM MHA backend is only supported on Blackwell GPUs (SM100)'", "fail",
   lambda c: c["attn"] == "trtllm_mha", lambda c: F("attn=trtllm_mha"), "single, spelled otherwise"),
  ("moe=triton_kernel: \"No module named 'triton_kernels'\" (attn=triton, moe=triton innocent)", "fail",
   lambda c: c["moe"] == "triton_kernel", lambda c: F("moe=triton_kernel"), "single, near-spelling of triton"),
  ("attn=flashinfer x kv=fp8_e5m2: garbage, no line", "garbage",
   lambda c: c["attn"] == "flashinfer" and c["kv"] == "fp8_e5m2", lambda c: F("attn=flashinfer", "kv=fp8_e5m2"),
   "pair-silent"),
  ("moe=deep_gemm x tp=2: serves the checks, scheduler dies at concurrency 4 (slow JIT start)", "late-crash",
   lambda c: c["moe"] == "deep_gemm" and c["tp"] == "2", lambda c: F("moe=deep_gemm", "tp=2"), "late"),
  ("moe=flashinfer_cutlass x kv=fp8_e4m3 x tp=4: answers '!' after the 5th bench request", "late-garbage",
   lambda c: c["moe"] == "flashinfer_cutlass" and c["kv"] == "fp8_e4m3" and c["tp"] == "4",
   lambda c: F("moe=flashinfer_cutlass", "kv=fp8_e4m3", "tp=4"), "late"),
 ],
 "M1": [
  ("attn=trtllm_mla: 'TRTLLM MLA backend is only supported on Blackwell GPUs (SM100)'", "fail",
   lambda c: c["attn"] == "trtllm_mla", lambda c: F("attn=trtllm_mla"), "single, spelled otherwise"),
  ("attn=cutlass_mla: 'CUTLASS MLA kernels are not available' (scheduler)", "fail",
   lambda c: c["attn"] == "cutlass_mla", lambda c: F("attn=cutlass_mla"), "single, spelled otherwise"),
  ("cgbs=160 x mfs=0.88: graph-capture OOM; 'Possible solutions' quote 0.8 and 16; frame in <attn>_backend.py", "fail",
   lambda c: c["cgbs"] == "160" and c["mfs"] == "0.88", lambda c: F("cgbs=160", "mfs=0.88"),
   "pair-unnamed, the hint names cgbs=16 and 0.8 (near mfs=0.80), the frame names the cell's own attn"),
  ("attn=fa3 x kv=fp8_e4m3: garbage, no line", "garbage",
   lambda c: c["attn"] == "fa3" and c["kv"] == "fp8_e4m3", lambda c: F("attn=fa3", "kv=fp8_e4m3"), "pair-silent"),
  ("flashmla x fp8_e4m3 x cgbs=160: serves the checks, scheduler dies at concurrency 4", "late-crash",
   lambda c: c["attn"] == "flashmla" and c["kv"] == "fp8_e4m3" and c["cgbs"] == "160",
   lambda c: F("attn=flashmla", "kv=fp8_e4m3", "cgbs=160"), "late; faster than the true best"),
 ],
 "N1": [("truncated checkpoint: SafetensorError MetadataIncompleteBuffer", "fail", lambda c: True, lambda c: F(),
         "model fault")],
 "N2": [("GPUs busy (exclusive-process mode, another job)", "fail", lambda c: True, lambda c: F(), "host fault")],
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
