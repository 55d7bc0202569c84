#!/usr/bin/env python3
"""spaces.py -- the fourth held-out stand-in's spaces. Writes NAME.yaml here (and NAME-b10.yaml, a
launch budget of about 10% of the cells, for the main spaces) and prints a space's truth from
standin.decide. Usage: spaces.py write | truth [NAME...] | all NAME"""
import itertools
import json
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


def M(name, args=None, env=None):
    v = {"name": name}
    if args is not None:
        v["args"] = args
    if env is not None:
        v["env"] = env
    return v


NGRAM = json.dumps({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}, separators=(",", ":"))
EAGLE3 = json.dumps({"method": "eagle3", "model": "acme/Qwen3-30B-A3B-EAGLE3", "num_speculative_tokens": 3},
                    separators=(",", ":"))

SPACES = {
    # vLLM, an MoE on 4x H100, TP 2/4, EP switch, attention through the environment, a JSON speculative config (144)
    "P": dict(engine="vllm", model="acme/Qwen3-30B-A3B", env={"STANDIN4_GPUS": "4"},
              axes=[("tp", "--tensor-parallel-size", ["2", "4"]),
                    ("ep", None, [M("off", []), M("on", ["--enable-expert-parallel"])]),
                    ("attn", None, [M("auto", []), M("FLASHINFER", env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"}),
                                    M("TRITON_ATTN", env={"VLLM_ATTENTION_BACKEND": "TRITON_ATTN"})]),
                    ("kv", "--kv-cache-dtype", ["auto", "fp8"]),
                    ("spec", None, [M("none", []), M("ngram", ["--speculative-config", NGRAM]),
                                    M("eagle3", ["--speculative-config", EAGLE3])]),
                    ("eager", None, [M("graphs", []), M("eager", ["--enforce-eager"])])]),
    # SGLang, DeepSeek-V3 FP8 on 8x H100, TP 4/8 x EP 1/4/8, graph switches, a DeepGEMM env switch (216)
    "Q": dict(engine="sglang", model="acme/DeepSeek-V3-0324-FP8",
              env={"STANDIN4_GPUS": "8", "PYTHONPATH": H + "/pylib"},
              axes=[("tp", "--tp", ["4", "8"]),
                    ("ep", None, [M("1", []), M("4", ["--ep-size", "4"]), M("8", ["--ep-size", "8"])]),
                    ("moe", "--moe-runner-backend", ["triton", "deep_gemm", "cutlass"]),
                    ("graph", None, [M("default", []), M("nograph", ["--disable-cuda-graph"]),
                                     M("compile", ["--enable-torch-compile"])]),
                    ("jit", None, [M("default", []), M("off", env={"SGL_ENABLE_JIT_DEEPGEMM": "0"})]),
                    ("mfs", "--mem-fraction-static", ["0.80", "0.88"])]),
    # TensorRT-LLM, Llama-3.3-70B FP8 on 4x H100, MPI ranks, an options file by path, a PDL env switch (128)
    "R": dict(engine="trtllm", model="acme/Llama-3.3-70B-Instruct-FP8",
              env={"STANDIN4_GPUS": "4", "PYTHONPATH": H + "/pylib"},
              axes=[("tp", "--tp_size", ["2", "4"]),
                    ("mbs", "--max_batch_size", ["64", "256"]),
                    ("mnt", "--max_num_tokens", ["4096", "8192"]),
                    ("fmf", "--kv_cache_free_gpu_memory_fraction", ["0.85", "0.95"]),
                    ("opts", None, [M("none", []),
                                    M("cuda_graph", ["--extra_llm_api_options", "extra/cuda_graph.yaml"]),
                                    M("attention_dp", ["--extra_llm_api_options", "extra/attention_dp.yaml"]),
                                    M("overlap_off", ["--extra_llm_api_options", "extra/overlap_off.yaml"])]),
                    ("pdl", None, [M("default", []), M("1", env={"TRTLLM_ENABLE_PDL": "1"})])]),
    # nothing can pass: a gated model, no token (vLLM, 48 cells)
    "N1": dict(engine="vllm", model="acme/Llama-4-Scout-17B-16E-Instruct", env={"STANDIN4_GPUS": "4"},
               axes=[("tp", "--tensor-parallel-size", ["2", "4"]),
                     ("attn", None, [M("auto", []), M("FLASHINFER", env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"}),
                                     M("TRITON_ATTN", env={"VLLM_ATTENTION_BACKEND": "TRITON_ATTN"})]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8"]),
                     ("ep", None, [M("off", []), M("on", ["--enable-expert-parallel"])]),
                     ("eager", None, [M("graphs", []), M("eager", ["--enforce-eager"])])]),
    # nothing can pass: libcudart.so.12 missing (SGLang, 48 cells)
    "N2": dict(engine="sglang", model="acme/Qwen3-8B", env={"STANDIN4_GPUS": "2", "PYTHONPATH": H + "/pylib"},
               axes=[("tp", "--tp", ["1", "2"]),
                     ("attn", "--attention-backend", ["fa3", "flashinfer", "triton"]),
                     ("kv", "--kv-cache-dtype", ["auto", "fp8_e4m3"]),
                     ("mfs", "--mem-fraction-static", ["0.80", "0.88"]),
                     ("graph", None, [M("default", []), M("nograph", ["--disable-cuda-graph"])])]),
    # nothing can pass: the disk is full where FlashInfer's JIT writes its sources (TensorRT-LLM, 32 cells)
    "N3": dict(engine="trtllm", model="acme/Llama-3.1-8B-Instruct",
               env={"STANDIN4_GPUS": "4", "PYTHONPATH": H + "/pylib"},
               axes=[("tp", "--tp_size", ["2", "4"]),
                     ("mbs", "--max_batch_size", ["64", "256"]),
                     ("fmf", "--kv_cache_free_gpu_memory_fraction", ["0.85", "0.95"]),
                     ("opts", None, [M("none", []),
                                     M("attention_dp", ["--extra_llm_api_options", "extra/attention_dp.yaml"])]),
                     ("pdl", None, [M("default", []), M("1", env={"TRTLLM_ENABLE_PDL": "1"})])]),
}
MAIN = ["P", "Q", "R"]
BUDGET = {"P": 14, "Q": 22, "R": 13}


def q(s):
    return "'" + s.replace("'", "''") + "'"


def yaml_for(name, budget=None):
    sp = SPACES[name]
    lines = ["engine: %s" % sp["engine"], "model: %s" % sp["model"]]
    lines.append("env: {%s}" % ", ".join('%s: "%s"' % kv for kv in sp["env"].items()))
    lines.append(COMMON.rstrip())
    lines.append("axes:")
    for n, flag, vals in sp["axes"]:
        lines.append("  %s:" % n)
        if flag:
            lines.append("    flag: %s" % flag)
        lines.append("    values:")
        for v in vals:
            if isinstance(v, str):
                lines.append("      - %s" % q(v))
                continue
            parts = ["name: %s" % q(v["name"])]
            if "args" in v:
                parts.append("args: [%s]" % ", ".join(q(x) for x in v["args"]))
            if "env" in v:
                parts.append("env: {%s}" % ", ".join("%s: %s" % (k, q(x)) for k, x in v["env"].items()))
            lines.append("      - {%s}" % ", ".join(parts))
    lines.append("strategy: search")
    if budget:
        lines.append("budget: {launches: %d}" % budget)
    return "\n".join(lines) + "\n"


def axn(name):
    return [a[0] for a in SPACES[name]["axes"]]


def vname(v):
    return v if isinstance(v, str) else v["name"]


def cells(name):
    names = axn(name)
    for combo in itertools.product(*[[vname(v) for v in a[2]] for a in SPACES[name]["axes"]]):
        yield dict(zip(names, combo))


def argv_env_of(name, cell):
    """The command line and environment gauntlet builds for the cell (matrix.md: template, args, axis values)."""
    sp = SPACES[name]
    if sp["engine"] == "vllm":
        argv = ["serve", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    elif sp["engine"] == "sglang":
        argv = ["--model-path", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    else:
        argv = [sp["model"], "--host", "127.0.0.1", "--port", "1"]
    env = dict(sp["env"])
    for n, flag, vals in sp["axes"]:
        v = next(x for x in vals if vname(x) == cell[n])
        if isinstance(v, str):
            argv += [flag, v]
        else:
            argv += v.get("args", [])
            env.update(v.get("env", {}))
    return argv, env


def parsed(name, cell):
    argv, env = argv_env_of(name, cell)
    return standin.parse(argv, "trtllm" if SPACES[name]["engine"] == "trtllm" else None) + (env,)


def outcome(name, cell):
    persona, a, env = parsed(name, cell)
    f = standin.features(persona, a, env)
    assert all(f[k] == cell[k] for k in cell), (cell, f)
    return standin.decide(persona, a, env)


def truth(name):
    rows = [(c, outcome(name, c)) for c in cells(name)]
    served = sorted([(c, o["d"]) for c, o in rows if o["kind"] == "serve"], key=lambda x: x[1])
    return rows, served


def label(o):
    if o["kind"] in ("fail", "hang"):
        return "%s/%s%s" % (o["kind"], o["phase"], " (slow start)" if o.get("slow") else "")
    return o["kind"] + (" (slow start)" if o.get("slow") else "")


def fmt(c):
    return " ".join("%s=%s" % kv for kv in c.items())


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "truth"
    if cmd == "write":
        for name in SPACES:
            open("%s/%s.yaml" % (H, name), "w").write(yaml_for(name))
            if name in BUDGET:
                open("%s/%s-b10.yaml" % (H, name), "w").write(yaml_for(name, BUDGET[name]))
        print("wrote", " ".join(sorted(p for p in os.listdir(H) if p.endswith(".yaml"))))
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
