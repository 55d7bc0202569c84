#!/usr/bin/env python3
"""spaces.py -- the third held-out stand-in's spaces. Writes NAME.yaml here (and NAME-b10.yaml, a
launch budget of about 10% of the cells, for the main spaces) and prints a space's truth from
standin.decide. Usage: spaces.py write | truth [NAME...] | all NAME"""
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin  # noqa: E402

H = os.path.dirname(os.path.abspath(__file__))
COMMON = """tokenizer: none
startup_timeout: 15s
request_timeout: 6s
stop_timeout: 3s
probes: false
checks: default
objective: output_tokens_per_s@1
emit: []
bench: {concurrency: [1, 4], input_tokens: 24, output_tokens: 16, requests: 8, warmup: 1, checks_under_load: false}
"""

SPACES = {
    # vLLM, a dense 14B on one H100: red herrings, near-spellings of the FP8 KV dtypes, late failures (144 cells)
    "V1": dict(engine="vllm", model="acme/Qwen3-14B", env={"STANDIN3_GPUS": "1"},
               axes=[("attn", "--attention-backend", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8", "fp8_e5m2"]),
                     ("seqs", "--max-num-seqs", ["64", "256", "512"]),
                     ("mbt", "--max-num-batched-tokens", ["2048", "8192"]),
                     ("gmu", "--gpu-memory-utilization", ["0.85", "0.95"])]),
    # SGLang, an FP8 MoE on 4x H100: sporadic NCCL/rendezvous failures, a best made of two mediocre values (120 cells)
    "S1": dict(engine="sglang", model="acme/Qwen3-30B-A3B-FP8", env={"STANDIN3_GPUS": "4", "PYTHONPATH": H + "/pylib"},
               axes=[("tp", "--tp", ["2", "4"]),
                     ("attn", "--attention-backend", ["fa3", "flashinfer", "triton", "trtllm_mha"]),
                     ("moe", "--moe-runner-backend", ["triton", "triton_kernel", "deep_gemm", "flashinfer_cutlass",
                                                      "cutlass"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3", "fp8_e5m2"])]),
    # SGLang, an MLA model on one H100: flashinfer / flashmla / *_mla near-spellings, a lost server port (144 cells)
    "M1": dict(engine="sglang", model="acme/DeepSeek-V2-Lite-Chat", env={"STANDIN3_GPUS": "1", "PYTHONPATH": H + "/pylib"},
               axes=[("attn", "--attention-backend", ["flashinfer", "flashmla", "fa3", "triton", "cutlass_mla",
                                                      "trtllm_mla"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3"]),
                     ("cgbs", "--cuda-graph-max-bs", ["16", "64", "160"]),
                     ("mfs", "--mem-fraction-static", ["0.80", "0.88"]),
                     ("chunk", "--chunked-prefill-size", ["4096", "8192"])]),
    # nothing can pass: a truncated checkpoint (vLLM, 54 cells)
    "N1": dict(engine="vllm", model="acme/Qwen3-8B-truncated", env={"STANDIN3_GPUS": "1"},
               axes=[("attn", "--attention-backend", ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8", "fp8_e5m2"]),
                     ("seqs", "--max-num-seqs", ["64", "256", "512"]),
                     ("gmu", "--gpu-memory-utilization", ["0.85", "0.95"])]),
    # nothing can pass: the GPUs are held by another job in exclusive-process mode (SGLang, 36 cells)
    "N2": dict(engine="sglang", model="acme/Qwen3-8B",
               env={"STANDIN3_GPUS": "2", "STANDIN3_HOST": "busy", "PYTHONPATH": H + "/pylib"},
               axes=[("tp", "--tp", ["1", "2"]),
                     ("attn", "--attention-backend", ["fa3", "flashinfer", "triton"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3", "fp8_e5m2"]),
                     ("mfs", "--mem-fraction-static", ["0.80", "0.88"])]),
}
MAIN = ["V1", "S1", "M1"]
BUDGET = {"V1": 14, "S1": 12, "M1": 14}


def yaml_for(name, budget=None):
    sp = SPACES[name]
    lines = ["engine: %s" % sp["engine"], "model: %s" % sp["model"]]
    lines.append("env: {%s}" % ", ".join('%s: "%s"' % kv for kv in sp["env"].items()))
    lines.append(COMMON.rstrip())
    lines.append("axes:")
    for n, flag, vals in sp["axes"]:
        lines.append("  %s:\n    flag: %s\n    values: [%s]" % (n, flag, ", ".join('"%s"' % v for v in vals)))
    lines.append("strategy: search")
    if budget:
        lines.append("budget: {launches: %d}" % budget)
    return "\n".join(lines) + "\n"


def axn(name):
    return [a[0] for a in SPACES[name]["axes"]]


def cells(name):
    names = axn(name)
    for combo in itertools.product(*[a[2] for a in SPACES[name]["axes"]]):
        yield dict(zip(names, combo))


def argv_of(name, cell):
    sp = SPACES[name]
    if sp["engine"] == "vllm":
        argv = ["serve", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    else:
        argv = ["--model-path", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    for n, flag, vals in sp["axes"]:
        argv += [flag, cell[n]]
    return argv


def parsed(name, cell):
    return standin.parse(argv_of(name, cell))


def outcome(name, cell):
    persona, a = parsed(name, cell)
    return standin.decide(persona, a, SPACES[name]["env"])


def cell_of_args(name, a):
    """The cell (axis -> value string) a parsed command line is, or None."""
    sp = SPACES[name]
    attr = {"--attention-backend": "attention_backend", "--kv-cache-dtype": "kv_cache_dtype",
            "--max-num-seqs": "max_num_seqs", "--max-num-batched-tokens": "max_num_batched_tokens",
            "--gpu-memory-utilization": "gpu_memory_utilization", "--tp": "tp_size",
            "--moe-runner-backend": "moe_runner_backend", "--mem-fraction-static": "mem_fraction_static",
            "--cuda-graph-max-bs": "cuda_graph_max_bs", "--chunked-prefill-size": "chunked_prefill_size"}
    c = {}
    for n, flag, vals in sp["axes"]:
        v = getattr(a, attr[flag])
        m = [x for x in vals if x == str(v) or (isinstance(v, float) and float(x) == v)]
        if not m:
            return None
        c[n] = m[0]
    return c


def truth(name):
    rows = [(c, outcome(name, c)) for c in cells(name)]
    served = sorted([(c, o["d"]) for c, o in rows if o["kind"] == "serve"], key=lambda x: x[1])
    return rows, served


def label(o):
    if o["kind"] != "fail":
        return o["kind"] + (" (slow start)" if o.get("slow") else "")
    return "fail/%s: %s%s" % (o["phase"], o["text"].splitlines()[0][:80], " (slow start)" if o.get("slow") else "")


def fmt(c):
    return " ".join("%s=%s" % kv for kv in c.items())


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "truth"
    if cmd == "write":
        for name in SPACES:
            open("%s/%s.yaml" % (H, name), "w").write(yaml_for(name))
            if name in BUDGET:
                open("%s/%s-b10.yaml" % (H, name), "w").write(yaml_for(name, BUDGET[name]))
        print("wrote", " ".join(sorted(os.path.basename(p) for p in os.listdir(H) if p.endswith(".yaml"))))
    else:
        from collections import Counter
        for name in sys.argv[2:] or MAIN:
            rows, served = truth(name)
            k = Counter(label(o) for c, o in rows)
            print("== space %s: %d cells" % (name, len(rows)))
            for kk, v in sorted(k.items(), key=lambda x: -x[1]):
                print("  %4d  %s" % (v, kk))
            print("  served (fastest first):")
            for c, d in served[:6]:
                print("   %.3f ms/tok  %.1f tok/s  %s" % (d, 1000 / d, fmt(c)))
            if len(served) > 1:
                print("  best ahead of runner-up by %.1f%%" % ((served[1][1] / served[0][1] - 1) * 100))
            fast = sorted([(o["d"], c, o["kind"]) for c, o in rows if "d" in o and o["kind"] != "serve"],
                          key=lambda x: x[0])
            if served and fast and fast[0][0] < served[0][1]:
                print("  faster than the best but failing: %s" % "; ".join("%s %.1f tok/s %s" % (fmt(c), 1000 / d, kd)
                                                                           for d, c, kd in fast if d < served[0][1]))
            if cmd == "all":
                for c, o in rows:
                    print("   %-70s %s%s" % (fmt(c), label(o), " %.2f ms/tok" % o["d"] if "d" in o else ""))
