#!/usr/bin/env python3
"""spaces.py -- the second held-out stand-in's spaces: writes each NAME.yaml here and computes
its truth from standin.decide (the function the stand-in runs). Usage: spaces.py write | truth NAME..."""
import itertools, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin

H = os.path.dirname(os.path.abspath(__file__))
COMMON = """tokenizer: none
startup_timeout: 8s
request_timeout: 6s
stop_timeout: 3s
probes: false
checks: default
objective: output_tokens_per_s@1
emit: []
"""
B1 = "bench: {concurrency: [1], input_tokens: 24, output_tokens: 16, requests: 4, warmup: 1, checks_under_load: false}"
B4L = "bench: {concurrency: [1, 4], input_tokens: 24, output_tokens: 16, requests: 8, warmup: 1, checks_under_load: true}"
B4 = "bench: {concurrency: [1, 4], input_tokens: 24, output_tokens: 16, requests: 8, warmup: 1, checks_under_load: false}"

SPACES = {
 # TensorRT-LLM, an FP8 MoE on 4x H100: backends and kernels (216 cells)
 "T1": dict(engine="trtllm", model="acme/Qwen3-Next-80B-A3B-FP8", env={"STANDIN_GPU": "H100", "STANDIN_GPUS": "4"},
            bench=B1, axes=[("backend", "--backend", ["pytorch", "tensorrt", "_autodeploy"]),
                            ("attn", "--attn_backend", ["TRTLLM", "FLASHINFER", "VANILLA"]),
                            ("moe", "--moe_backend", ["CUTLASS", "TRTLLM", "DEEPGEMM", "WIDEEP"]),
                            ("tp", "--tp_size", ["2", "4"]),
                            ("kv", "--kv_cache_dtype", ["auto", "fp8", "nvfp4"])]),
 # TensorRT-LLM, a dense FP8 70B on 2x B200: sizes and memory (216 cells)
 "T2": dict(engine="trtllm", model="acme/Llama-3.3-70B-Instruct-FP8", env={"STANDIN_GPU": "B200", "STANDIN_GPUS": "2"},
            bench=B4, axes=[("attn", "--attn_backend", ["TRTLLM", "FLASHINFER"]),
                            ("kv", "--kv_cache_dtype", ["auto", "fp8", "nvfp4"]),
                            ("mbs", "--max_batch_size", ["64", "256", "1024"]),
                            ("mnt", "--max_num_tokens", ["8192", "16384"]),
                            ("frac", "--kv_cache_free_gpu_memory_fraction", ["0.75", "0.9", "0.95"]),
                            ("tp", "--tp_size", ["1", "2"])]),
 # llama.cpp, Qwen3-30B-A3B Q4_K_M on one L4: flash attention and the K/V cache types (216 cells)
 "L1": dict(engine="llama.cpp", model="/models/Qwen3-30B-A3B-Q4_K_M.gguf", args=["-c", "65536", "-ngl", "99", "--fit", "off"],
            env={"STANDIN_GPU": "L4", "STANDIN_GPUS": "1", "STANDIN_LLAMA_BUILD": "old"},
            bench=B4L, axes=[("fa", "-fa", ["on", "off", "auto"]),
                             ("ctk", "-ctk", ["f16", "q8_0", "q4_0", "q5_1"]),
                             ("ctv", "-ctv", ["f16", "q8_0", "q4_0"]),
                             ("ub", "-ub", ["256", "512", "2048"]),
                             ("np", "-np", ["1", "4"])]),
 # llama.cpp, Mistral-Small-24B Q6_K on 2x RTX 4090: split mode, offload, batch sizes (216 cells)
 "L2": dict(engine="llama.cpp", model="/models/Mistral-Small-24B-Instruct-2501-Q6_K.gguf", args=["-c", "16384", "--fit", "off"],
            env={"STANDIN_GPU": "RTX4090", "STANDIN_GPUS": "2"},
            bench=B1, axes=[("sm", "-sm", ["none", "layer", "row"]),
                            ("ngl", "-ngl", ["24", "99"]),
                            ("b", "-b", ["512", "2048", "8192"]),
                            ("ub", "-ub", ["256", "512", "1024"]),
                            ("ctk", "-ctk", ["f16", "q8_0"]),
                            ("ctv", "-ctv", ["f16", "q8_0"])]),
 # nothing can pass
 "N1": dict(engine="llama.cpp", model="/models/Qwen3-32B-Q4_K_M.gguf", args=["-c", "16384"], env={"STANDIN_GPU": "H100"},
            bench=B1, axes=[("fa", "-fa", ["on", "off", "auto"]), ("ctk", "-ctk", ["f16", "q8_0", "q4_0"]),
                            ("ctv", "-ctv", ["f16", "q8_0", "q4_0"]), ("ub", "-ub", ["256", "512", "1024"])]),
 "N2": dict(engine="llama.cpp", model="/models/Qwen3-30B-A3B-Q4_K_M.gguf", args=["-c", "8192"],
            env={"STANDIN_GPU": "L4", "STANDIN_HOST": "port_taken"},
            bench=B1, axes=[("fa", "-fa", ["on", "off", "auto"]), ("ctk", "-ctk", ["f16", "q8_0", "q4_0"]),
                            ("ctv", "-ctv", ["f16", "q8_0"]), ("ub", "-ub", ["256", "512", "1024"])]),
 "N3": dict(engine="llama.cpp", model="/models/Llama-3.2-3B-Instruct-Q8_0.gguf", env={"STANDIN_GPU": "H100"},
            bench="bench: {concurrency: [1], input_tokens: 6000, output_tokens: 16, requests: 2, warmup: 0, checks_under_load: false}",
            axes=[("c", "-c", ["8192", "16384", "32768"]), ("fa", "-fa", ["on", "auto"]),
                  ("ctk", "-ctk", ["f16", "q8_0"]), ("np", "-np", ["1", "2", "4"])]),
 "N4": dict(engine="trtllm", model="acme/Llama-3.3-70B-Instruct-FP8",
            env={"STANDIN_GPU": "B200", "STANDIN_GPUS": "8", "OMPI_COMM_WORLD_SIZE": "8"},
            bench=B1, axes=[("tp", "--tp_size", ["1", "2", "4"]), ("attn", "--attn_backend", ["TRTLLM", "FLASHINFER"]),
                            ("kv", "--kv_cache_dtype", ["auto", "fp8"]), ("mbs", "--max_batch_size", ["64", "256", "1024"])]),
}
MAIN = ["T1", "T2", "L1", "L2"]


def yaml_for(name, budget=None):
    sp = SPACES[name]
    lines = ["engine: %s" % sp["engine"], "model: %s" % sp["model"]]
    if sp.get("args"):
        lines.append("args: [%s]" % ", ".join('"%s"' % x for x in sp["args"]))
    lines.append("env: {%s}" % ", ".join('%s: "%s"' % kv for kv in sp["env"].items()))
    lines.append(COMMON.rstrip())
    lines.append(sp["bench"])
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


def argv_of(name, cell):
    sp = SPACES[name]
    if sp["engine"] == "trtllm":
        argv = ["trtllm-serve", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    else:
        argv = ["llama-server", "-m", sp["model"], "--host", "127.0.0.1", "--port", "1"]
    argv += sp.get("args", [])
    for n, flag, vals in sp["axes"]:
        argv += [flag, cell[n]]
    return argv


def outcome(name, cell):
    persona, a = standin.parse(argv_of(name, cell))
    env = dict(SPACES[name]["env"])
    return standin.decide(persona, a, env)


def truth(name):
    rows = [(c, outcome(name, c)) for c in cells(name)]
    served = sorted([(c, o["d"]) for c, o in rows if o["kind"] == "serve"], key=lambda x: x[1])
    return rows, served


def label(o):
    if o["kind"] != "fail":
        return o["kind"] + (" (slow start)" if o.get("slow") else "")
    t = o.get("text") or {"bind": "couldn't bind", "nomodel": "failed to load model", "kvalloc": "kv cudaMalloc OOM",
                          "compute": "compute cudaMalloc OOM", "kvalloc-row": "V cache q8_0 split buffer"}.get(o["phase"], "")
    t = t or {"segv": "SIGSEGV, no message", "mpi": "MPI_ABORT", "cuda": "CUDA illegal memory access"}.get(o["how"], "")
    return "fail/%s: %s" % (o["phase"], t.splitlines()[0][:70])


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "truth"
    if cmd == "write":
        for name in SPACES:
            n = len(list(cells(name)))
            open("%s/%s.yaml" % (H, name), "w").write(yaml_for(name))
            if name in MAIN:
                for pct in (10, 20):
                    open("%s/%s-b%d.yaml" % (H, name, pct), "w").write(yaml_for(name, max(1, round(n * pct / 100))))
    else:
        from collections import Counter
        for name in sys.argv[2:] or MAIN:
            rows, served = truth(name)
            k = Counter(label(o) for c, o in rows)
            print("== space %s: %d cells" % (name, len(rows)))
            for kk, v in sorted(k.items(), key=lambda x: -x[1]):
                print("  %4d  %s" % (v, kk))
            print("  served (fastest first):")
            for c, d in served[:5]:
                print("   %.3f ms/tok  %.1f tok/s  %s" % (d, 1000 / d, " ".join("%s=%s" % kv for kv in c.items())))
            if len(served) > 1:
                print("  best ahead of runner-up by %.1f%%" % ((served[1][1] / served[0][1] - 1) * 100))
            if cmd == "all":
                for c, o in rows:
                    print("   %-60s %s%s" % (" ".join("%s=%s" % kv for kv in c.items()), label(o),
                                              " %.2f ms/tok" % o["d"] if "d" in o else ""))
