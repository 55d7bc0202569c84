"""rules.py -- per space, the rules of standin.decide as predicates over a cell (axis -> value
string), in the engine's order: (name, outcome kind, predicate, culprit features, how its line
names the culprit). check() verifies them against standin.decide on every cell."""
import spaces


def F(*kv):
    return frozenset(kv)


def t2_oom(c):
    tp, frac = int(c["tp"]), float(c["frac"])
    act = 0.5 + 2.5 * int(c["mnt"]) / 8192.0 + 6.0 * int(c["mbs"]) / 1024.0
    return act > (1 - frac) * (179.06 - 70.0 / tp - 3.0)


def l1_mem(c):
    q = {"f16": 2.0, "q8_0": 1.0625, "q4_0": 0.5625, "q5_1": 0.75}
    kv = 48 * 512 * 65536 * (q[c["ctk"]] + q[c["ctv"]]) / 2 ** 30
    comp = 0.25 + 0.0009 * int(c["ub"]) + 0.05 * int(c["np"])
    return 17.28 + kv + comp > 21.95 - 0.6


def l2_mem(c):
    q = {"f16": 2.0, "q8_0": 1.0625}
    share = min(int(c["ngl"]), 41) / 41.0 / (1 if c["sm"] == "none" else 2)
    kv = 40 * 1024 * 16384 * (q[c["ctk"]] + q[c["ctv"]]) / 2 ** 30 * share
    comp = 0.25 + 0.0009 * min(int(c["ub"]), int(c["b"])) + 0.05 * 4 + (0.6 if c["b"] == "8192" else 0)
    return 19.35 * share + kv + comp > 23.52 - 0.6


RULES = {
 "T1": [
  ("backend=_autodeploy (line names the flag --moe_backend and 'AutoDeploy')", "fail",
   lambda c: c["backend"] == "_autodeploy", lambda c: F("backend=_autodeploy"), "single-flag"),
  ("kv=nvfp4 unsupported on SM90 (named, pydantic wrapper)", "fail",
   lambda c: c["kv"] == "nvfp4", lambda c: F("kv=nvfp4"), "single-named"),
  ("pytorch x moe=TRTLLM unsupported on SM90 (TRTLLM also an attn value)", "fail",
   lambda c: c["backend"] == "pytorch" and c["moe"] == "TRTLLM", lambda c: F("backend=pytorch", "moe=TRTLLM"), "single-trap"),
  ("pytorch x moe=WIDEEP x tp=2: 'cutlass' grouped gemm (CUTLASS an innocent moe value)", "fail",
   lambda c: c["backend"] == "pytorch" and c["moe"] == "WIDEEP" and c["tp"] == "2", lambda c: F("backend=pytorch", "moe=WIDEEP", "tp=2"), "pair-library"),
  ("pytorch x moe=DEEPGEMM x tp=4 MPI_ABORT (names nothing)", "fail",
   lambda c: c["backend"] == "pytorch" and c["moe"] == "DEEPGEMM" and c["tp"] == "4", lambda c: F("backend=pytorch", "moe=DEEPGEMM", "tp=4"), "pair-unnamed"),
  ("pytorch x attn=VANILLA hangs on the first request", "hang-request",
   lambda c: c["backend"] == "pytorch" and c["attn"] == "VANILLA", lambda c: F("backend=pytorch", "attn=VANILLA"), "single-hang"),
  ("pytorch x attn=FLASHINFER x kv=fp8 garbage", "garbage",
   lambda c: c["backend"] == "pytorch" and c["attn"] == "FLASHINFER" and c["kv"] == "fp8", lambda c: F("backend=pytorch", "attn=FLASHINFER", "kv=fp8"), "pair"),
 ],
 "T2": [
  ("kv=nvfp4 x attn=FLASHINFER (both named, kv first)", "fail",
   lambda c: c["kv"] == "nvfp4" and c["attn"] == "FLASHINFER", lambda c: F("kv=nvfp4", "attn=FLASHINFER"), "pair-named"),
  ("attn=FLASHINFER JIT hang at start-up", "hang-start",
   lambda c: c["attn"] == "FLASHINFER", lambda c: F("attn=FLASHINFER"), "single-hang"),
  ("executor OOM: activations(mnt, mbs) > (1-frac) * free(tp)", "fail",
   t2_oom, lambda c: F("mbs=" + c["mbs"], "mnt=" + c["mnt"], "frac=" + c["frac"], "tp=" + c["tp"]), "sizes"),
  ("kv=fp8 answers arithmetic off by ten (wrong)", "wrong",
   lambda c: c["kv"] == "fp8", lambda c: F("kv=fp8"), "single-wrong"),
  ("mbs=64 x mnt=16384 fails under load (HTTP 500)", "overload",
   lambda c: c["mbs"] == "64" and c["mnt"] == "16384", lambda c: F("mbs=64", "mnt=16384"), "pair-load"),
 ],
 "L1": [
  ("fa=off x quantized ctv ('quantized V cache requires flash_attn')", "fail",
   lambda c: c["fa"] == "off" and c["ctv"] != "f16", lambda c: F("fa=off", "ctv=" + c["ctv"]), "pair-flag"),
  ("cudaMalloc OOM (KV by ctk+ctv, compute by ub, np)", "fail",
   l1_mem, lambda c: F("ctk=" + c["ctk"], "ctv=" + c["ctv"], "ub=" + c["ub"], "np=" + c["np"]), "sizes"),
  ("ctk=q5_1 SIGSEGV at warm-up (names nothing)", "fail",
   lambda c: c["ctk"] == "q5_1", lambda c: F("ctk=q5_1"), "single-unnamed"),
  ("ctv=q8_0 x ub=2048 abort 'f32 to q8_0' (q8_0 also a ctk value)", "fail",
   lambda c: c["ctv"] == "q8_0" and c["ub"] == "2048", lambda c: F("ctv=q8_0", "ub=2048"), "pair-ambiguous"),
  ("ctk=q4_0 x ctv=q4_0 garbage", "garbage",
   lambda c: c["ctk"] == "q4_0" and c["ctv"] == "q4_0", lambda c: F("ctk=q4_0", "ctv=q4_0"), "pair"),
  ("np=4 x ub=256 wrong under load", "wrong-load",
   lambda c: c["np"] == "4" and c["ub"] == "256", lambda c: F("np=4", "ub=256"), "pair-load"),
 ],
 "L2": [
  ("sm=row x ctv=q8_0 'V cache (type q8_0)' split buffer (partner unnamed)", "fail",
   lambda c: c["sm"] == "row" and c["ctv"] == "q8_0", lambda c: F("sm=row", "ctv=q8_0"), "pair-ambiguous"),
  ("cudaMalloc OOM (sm, ngl, ctk, ctv, ub, b)", "fail",
   l2_mem, lambda c: F(*["%s=%s" % kv for kv in c.items()]), "sizes"),
  ("sm=row x ub=1024 CUDA illegal memory access (names nothing)", "fail",
   lambda c: c["sm"] == "row" and min(int(c["ub"]), int(c["b"])) == 1024, lambda c: F("sm=row", "ub=1024"), "pair-unnamed"),
  ("sm=row x ngl=24 hangs on the first request", "hang-request",
   lambda c: c["sm"] == "row" and c["ngl"] == "24", lambda c: F("sm=row", "ngl=24"), "pair-hang"),
 ],
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
