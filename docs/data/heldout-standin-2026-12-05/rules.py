"""rules.py -- per space, the rules of standin.decide as predicates over a cell (axis->value
strings), in the engine's order, each with the features it blames (the truth's culprit) and
whether its line names that culprit unambiguously. check() verifies them against standin."""
import spaces

def F(*kv):
    return frozenset(kv)

RULES = {
 "A": [
  ("trtllm_mha needs kv fp8_e4m3 (requirement, named)", "fail", lambda c: c["attn"] == "trtllm_mha" and c["kv"] != "fp8_e4m3", lambda c: F("attn=trtllm_mha", "kv=" + c["kv"]), "pair"),
  ("moe=triton x fp4=flashinfer_cutlass (pair, named)", "fail", lambda c: c["moe"] == "triton" and c["fp4"] == "flashinfer_cutlass", lambda c: F("moe=triton", "fp4=flashinfer_cutlass"), "pair"),
  ("moe=flashinfer_trtllm arch (library name only)", "fail", lambda c: c["moe"] == "flashinfer_trtllm", lambda c: F("moe=flashinfer_trtllm"), "single-library"),
  ("attn=fa3 arch (named)", "fail", lambda c: c["attn"] == "fa3", lambda c: F("attn=fa3"), "single-named"),
  ("moe=cutlass x kv=auto OOM", "fail", lambda c: c["moe"] == "cutlass" and c["kv"] == "auto", lambda c: F("moe=cutlass", "kv=auto"), "pair"),
  ("fp4=flashinfer_cudnn hang", "hang", lambda c: c["fp4"] == "flashinfer_cudnn", lambda c: F("fp4=flashinfer_cudnn"), "single-hang"),
  ("attn=fa4 x kv=fp8_e4m3 illegal memory (names nothing)", "fail", lambda c: c["attn"] == "fa4" and c["kv"] == "fp8_e4m3", lambda c: F("attn=fa4", "kv=fp8_e4m3"), "pair"),
  ("fp4=flashinfer_trtllm garbage", "garbage", lambda c: c["fp4"] == "flashinfer_trtllm", lambda c: F("fp4=flashinfer_trtllm"), "single-garbage"),
 ],
 "B": [
  ("tp=4 > 2 GPUs (named)", "fail", lambda c: c["tp"] == "4", lambda c: F("tp=4"), "single-named"),
  ("FLASH_ATTN x kv fp8* (pair, enum + axis words)", "fail", lambda c: c["attn"] == "FLASH_ATTN" and c["kv"] != "auto", lambda c: F("attn=FLASH_ATTN", "kv=" + c["kv"]), "pair"),
  ("FLASHINFER x fp8_e5m2 (pair, named)", "fail", lambda c: c["attn"] == "FLASHINFER" and c["kv"] == "fp8_e5m2", lambda c: F("attn=FLASHINFER", "kv=fp8_e5m2"), "pair"),
  ("tp=1 x gmu=0.80 no cache blocks (oom)", "fail", lambda c: c["tp"] == "1" and c["gmu"] == "0.80", lambda c: F("tp=1", "gmu=0.80"), "pair"),
  ("FLEX_ATTENTION smem (arch, names nothing)", "fail", lambda c: c["attn"] == "FLEX_ATTENTION", lambda c: F("attn=FLEX_ATTENTION"), "single-unnamed"),
  ("tp=1 x kv=auto x seqs=512 OOM", "fail", lambda c: c["tp"] == "1" and c["kv"] == "auto" and c["seqs"] == "512", lambda c: F("tp=1", "kv=auto", "seqs=512"), "triple"),
  ("FLASHINFER x seqs=512 illegal memory (names nothing)", "fail", lambda c: c["attn"] == "FLASHINFER" and c["seqs"] == "512", lambda c: F("attn=FLASHINFER", "seqs=512"), "pair"),
  ("TRITON_ATTN x fp8 garbage", "garbage", lambda c: c["attn"] == "TRITON_ATTN" and c["kv"] == "fp8", lambda c: F("attn=TRITON_ATTN", "kv=fp8"), "pair"),
 ],
 "C": [
  ("cgbs > mrr (config pair, both named)", "fail", lambda c: int(c["cgbs"]) > int(c["mrr"]), lambda c: F("cgbs=" + c["cgbs"], "mrr=" + c["mrr"]), "pair"),
  ("tp=4 NCCL hang", "hang", lambda c: c["tp"] == "4", lambda c: F("tp=4"), "single-hang"),
  ("tp=1 x mfs<0.93 not enough memory", "fail", lambda c: c["tp"] == "1" and c["mfs"] != "0.93", lambda c: F("tp=1", "mfs=" + c["mfs"]), "pair"),
  ("mfs=0.93 x cgbs=256 graph OOM", "fail", lambda c: c["mfs"] == "0.93" and c["cgbs"] == "256", lambda c: F("mfs=0.93", "cgbs=256"), "pair"),
 ],
}


RULES["D"] = [
  ("attn=fa3 ImportError in the scheduler (SIGKILL, no signature)", "fail", lambda c: c["attn"] == "fa3", lambda c: F("attn=fa3"), "single-unnamed"),
  ("mfs=0.92 x kv=auto OOM", "fail", lambda c: c["mfs"] == "0.92" and c["kv"] == "auto", lambda c: F("mfs=0.92", "kv=auto"), "pair"),
  ("attn=flashinfer x mrr=64 assert in the scheduler (SIGKILL, names nothing)", "fail", lambda c: c["attn"] == "flashinfer" and c["mrr"] == "64", lambda c: F("attn=flashinfer", "mrr=64"), "pair"),
]
RULES["B2"] = RULES["B"]
RULES["Asg"] = RULES["A"]


def rule_of(space, c):
    for r in RULES[space]:
        if r[2](c):
            return r
    return None


def check():
    for s in RULES:
        for c in spaces.cells(s):
            o = spaces.outcome(s, c)
            r = rule_of(s, c)
            kind = r[1] if r else "serve"
            assert kind == o[0], (s, c, o, r and r[0])
    print("rules agree with standin.decide on every cell")

if __name__ == "__main__":
    check()
