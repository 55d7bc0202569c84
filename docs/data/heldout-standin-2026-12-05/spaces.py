#!/usr/bin/env python3
"""spaces.py -- the held-out spaces: writes each SPACE.yaml and computes its truth from
standin.decide (the same function the stand-in runs). Usage: spaces.py [write|truth NAME]"""
import argparse, itertools, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin

H = os.path.dirname(os.path.abspath(__file__))
BENCH = "bench: {concurrency: [1], input_tokens: 24, output_tokens: 16, requests: 4, warmup: 1, checks_under_load: false}"
COMMON = """startup_timeout: 8s
request_timeout: 15s
stop_timeout: 3s
probes: false
checks: default
""" + BENCH + """
objective: output_tokens_per_s@1
emit: []
"""

SPACES = {
 "A": dict(persona="sglang", model="acme/Qwen3-30B-A3B-NVFP4", env={"STANDIN_DEVICE": "sm_120", "STANDIN_GPUS": "1"},
           axes=[("attn", "--attention-backend", ["triton", "fa3", "fa4", "flashinfer", "trtllm_mha"]),
                 ("moe", "--moe-runner-backend", ["auto", "triton", "flashinfer_cutlass", "flashinfer_trtllm", "cutlass"]),
                 ("fp4", "--fp4-gemm-backend", ["auto", "flashinfer_cutlass", "flashinfer_cudnn", "flashinfer_trtllm"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3"])]),
 "B": dict(persona="vllm", model="acme/Qwen3-32B-FP8", env={"STANDIN_DEVICE": "sm_89", "STANDIN_GPUS": "2"},
           axes=[("attn", "--attention-backend", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8", "fp8_e5m2"]),
                 ("tp", "--tensor-parallel-size", ["1", "2", "4"]),
                 ("gmu", "--gpu-memory-utilization", ["0.80", "0.92"]),
                 ("seqs", "--max-num-seqs", ["128", "512"])]),
 "C": dict(persona="sglang", model="acme/Llama-3.1-70B-Instruct-FP8", env={"STANDIN_DEVICE": "sm_90", "STANDIN_GPUS": "4"},
           axes=[("tp", "--tp-size", ["1", "2", "4"]),
                 ("mfs", "--mem-fraction-static", ["0.70", "0.80", "0.88", "0.93"]),
                 ("mrr", "--max-running-requests", ["32", "128", "512"]),
                 ("cgbs", "--cuda-graph-max-bs", ["8", "64", "256"])]),
 # A through the SGLang profile (python3 -m sglang.launch_server, a stand-in package on PYTHONPATH)
 "Asg": dict(persona="sglang-profile", model="acme/Qwen3-30B-A3B-NVFP4", env={"STANDIN_DEVICE": "sm_120", "STANDIN_GPUS": "1", "PYTHONPATH": H + "/pylib"},
           axes=[("attn", "--attention-backend", ["triton", "fa3", "fa4", "flashinfer", "trtllm_mha"]),
                 ("moe", "--moe-runner-backend", ["auto", "triton", "flashinfer_cutlass", "flashinfer_trtllm", "cutlass"]),
                 ("fp4", "--fp4-gemm-backend", ["auto", "flashinfer_cutlass", "flashinfer_cudnn", "flashinfer_trtllm"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3"])]),
 "D": dict(persona="sglang", model="acme/Qwen3-14B-FP8", env={"STANDIN_DEVICE": "sm_90", "STANDIN_GPUS": "1"},
           axes=[("attn", "--attention-backend", ["triton", "flashinfer", "fa3"]),
                 ("mrr", "--max-running-requests", ["64", "128", "256", "512"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3"]),
                 ("mfs", "--mem-fraction-static", ["0.80", "0.88", "0.92"])]),
 # B with its values in another order (the same engine, model and rules)
 "B2": dict(persona="vllm", model="acme/Qwen3-32B-FP8", env={"STANDIN_DEVICE": "sm_89", "STANDIN_GPUS": "2"},
           axes=[("attn", "--attention-backend", ["TRITON_ATTN", "FLEX_ATTENTION", "FLASH_ATTN", "FLASHINFER"]),
                 ("kv", "--kv-cache-dtype", ["fp8_e5m2", "auto", "fp8"]),
                 ("tp", "--tensor-parallel-size", ["2", "4", "1"]),
                 ("gmu", "--gpu-memory-utilization", ["0.80", "0.92"]),
                 ("seqs", "--max-num-seqs", ["512", "128"])]),
 # nothing can pass
 "N1": dict(persona="sglang", model="acme/Qwen3-8B", env={"STANDIN_DEVICE": "sm_90", "STANDIN_HOST": "no_gpu"},
           axes=[("attn", "--attention-backend", ["triton", "flashinfer", "fa3"]),
                 ("moe", "--moe-runner-backend", ["auto", "triton", "cutlass"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3", "bf16"]),
                 ("cgbs", "--cuda-graph-max-bs", ["8", "32", "64"])]),
 "N2": dict(persona="vllm", model="acme/Qwen3-8B", env={"STANDIN_DEVICE": "sm_90", "STANDIN_HOST": "old_driver"},
           axes=[("attn", "--attention-backend", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8", "fp8_e5m2"]),
                 ("gmu", "--gpu-memory-utilization", ["0.80", "0.85", "0.92"]),
                 ("seqs", "--max-num-seqs", ["64", "128", "256"])]),
 "M1": dict(persona="vllm", model="acme/Qwen3-9B-Instruct", env={"STANDIN_DEVICE": "sm_90"},
           axes=[("attn", "--attention-backend", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8", "fp8_e5m2"]),
                 ("gmu", "--gpu-memory-utilization", ["0.80", "0.85", "0.92"]),
                 ("seqs", "--max-num-seqs", ["64", "128", "256"])]),
 "M2": dict(persona="sglang", model="/models/Qwen3-8B-FP8", env={"STANDIN_DEVICE": "sm_90"},
           axes=[("attn", "--attention-backend", ["triton", "flashinfer", "fa3"]),
                 ("moe", "--moe-runner-backend", ["auto", "triton", "cutlass"]),
                 ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3", "bf16"]),
                 ("cgbs", "--cuda-graph-max-bs", ["8", "32", "64"])]),
}


def yaml_for(name, budget=None):
    sp = SPACES[name]
    lines = []
    if sp["persona"] == "vllm":
        lines += ["engine: vllm", "model: %s" % sp["model"]]
    elif sp["persona"] == "sglang-profile":
        lines += ["engine: sglang", "model: %s" % sp["model"]]
    else:
        lines += ["engine: generic", "model: %s" % sp["model"],
                  'command: [python3, %s/standin.py, --model-path, "{model}", --host, "{host}", --port, "{port}"]' % H]
    lines.append("env: {%s}" % ", ".join('%s: "%s"' % kv for kv in sp["env"].items()))
    lines.append(COMMON.rstrip())
    lines.append("axes:")
    for n, flag, vals in sp["axes"]:
        lines.append("  %s:\n    flag: %s\n    values: [%s]" % (n, flag, ", ".join('"%s"' % v for v in vals)))
    lines.append("strategy: search")
    if budget:
        lines.append("budget: {launches: %d}" % budget)
    return "\n".join(lines) + "\n"


def cells(name):
    sp = SPACES[name]
    names = [a[0] for a in sp["axes"]]
    for combo in itertools.product(*[a[2] for a in sp["axes"]]):
        yield dict(zip(names, combo))


def outcome(name, cell):
    sp = SPACES[name]
    argv = []
    if sp["persona"] == "vllm":
        argv = ["serve", sp["model"], "--port", "1"]
    else:
        argv = ["--model-path", sp["model"], "--port", "1"]
    for n, flag, vals in sp["axes"]:
        argv += [flag, cell[n]]
    persona, a = standin.parse(argv)
    persona = "vllm" if sp["persona"] == "vllm" else "sglang"
    return standin.decide(persona, a, sp["env"])


def truth(name):
    rows = []
    for c in cells(name):
        o = outcome(name, c)
        rows.append((c, o))
    served = [(c, o[1]) for c, o in rows if o[0] == "serve"]
    served.sort(key=lambda x: x[1])
    return rows, served


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "truth"
    if cmd == "write":
        for name, sp in SPACES.items():
            n = len(list(cells(name)))
            open("%s/%s.yaml" % (H, name), "w").write(yaml_for(name))
            if name in ("A", "B", "C", "B2", "Asg", "D"):
                for pct in (10, 20):
                    b = max(1, round(n * pct / 100))
                    open("%s/%s-b%d.yaml" % (H, name, pct), "w").write(yaml_for(name, b))
    else:
        for name in sys.argv[2:] or "ABC":
            rows, served = truth(name)
            from collections import Counter
            k = Counter(o[0] if o[0] != "fail" else "fail:" + o[3].split(":")[0].split(".")[-1] + ":" + o[3][:50] for c, o in rows)
            print("== space %s: %d cells" % (name, len(rows)))
            for kk, v in sorted(k.items(), key=lambda x: -x[1]):
                print("  %4d  %s" % (v, kk))
            print("  served (fastest first):")
            for c, d in served[:6]:
                print("   %.3f ms/tok  %.1f tok/s  %s" % (d, 1000 / d, " ".join("%s=%s" % kv for kv in c.items())))
            if len(served) > 1:
                print("  best ahead of runner-up by %.1f%%" % ((served[1][1] / served[0][1] - 1) * 100))
