/* profile.c -- the engine table. Facts come from ENGINES.md; keep them data. */
#include "base/profile.h"

#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define STRV(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const reasoning_both[] = {"reasoning_content", "reasoning", NULL};
static const char *const defaults_common[] = {"auto", "default", "none", NULL};

/* Shared by every engine: the CUDA runtime, torch, NCCL, FlashInfer, Triton, argparse. */
static const struct signature common_signatures[] = {
        /* arch: a kernel not built for this GPU */
        {"no kernel image is available for execution on the device", "arch", TIER_ROOT, "CUDA runtime"},
        {"with CUDA capability sm_[0-9]+ is not compatible with the current PyTorch installation", "arch",
         TIER_ROOT, "torch"},
        {"Unsupported [Aa]rchitectur", "arch", TIER_ROOT, "TRT-LLM, FlashInfer"},
        {"No supported CUDA architectures found for major versions", "arch", TIER_ROOT, "FlashInfer JIT"},
        {"does not support backend '[A-Za-z0-9_]+' with capability [0-9]+", "arch", TIER_ROOT,
         "FlashInfer mm_fp4"},
        {"No compiled cutlass_scaled_mm for CUDA device capability: [0-9]+", "arch", TIER_ROOT, "vLLM"},
        {"none of the configured backends are usable on sm[0-9]+", "arch", TIER_ROOT, "FlashInfer MoE"},
        {"Failed to initialize cutlass TMA WS grouped gemm", "arch", TIER_ROOT, "FlashInfer CUTLASS MoE"},
        {"cudaErrorIllegalInstruction", "arch", TIER_ROOT, "CUDA"},
        {"is unsupported on SM[0-9]+", "arch", TIER_ROOT, "TRT-LLM"},
        {"out of resource: shared memory, Required: [0-9]+, Hardware limit: [0-9]+", "arch", TIER_ROOT,
         "Triton"},
        /* oom */
        {"CUDA out of memory\\. Tried to allocate", "oom", TIER_ROOT, "PyTorch"},
        {"OutOfMemoryError", "oom", TIER_ROOT, "PyTorch"},
        {"CUDA error: out of memory", "oom", TIER_ROOT, "CUDA"},
        {"Triton Error \\[CUDA\\]: out of memory", "oom", TIER_ROOT, "Triton"},
        {"Not enough memory\\. Please try to increase --mem-fraction-static", "oom", TIER_ROOT, "SGLang"},
        {"No available memory for the cache blocks", "oom", TIER_ROOT, "vLLM"},
        /* the KV cache of one request of max_model_len does not fit what is left: V1 says how
         * much was needed and left and the longest that fits, V0 the tokens that fit (the
         * search reads that length: docs/search.md, "What a line says fits") */
        {"KV cache is needed, which is larger than the available KV cache memory", "oom", TIER_ROOT, "vLLM"},
        {"is larger than the maximum number of tokens that can be stored in KV cache", "oom", TIER_ROOT, "vLLM"},
        {"Executor creation failed due to insufficient GPU memory", "oom", TIER_ROOT, "TRT-LLM"},
        {"cudaMalloc failed: out of memory", "oom", TIER_ROOT, "llama.cpp"},
        {"\\[Errno 12\\] Cannot allocate memory", "oom", TIER_ROOT, "Python: ENOMEM (fork, mmap, pinned memory)"},
        {"failed to allocate buffer for kv cache", "oom", TIER_ROOT, "llama.cpp"},
        /* port */
        {"[Aa]ddress already in use", "port", TIER_ROOT, "uvicorn, zmq"},
        {"Errno 98", "port", TIER_ROOT, "uvicorn"},
        /* model */
        {"are not supported for now", "model", TIER_ROOT, "vLLM"},
        {"Cannot access gated repo", "model", TIER_ROOT, "transformers"},
        {"couldn't connect to 'https://huggingface.co'", "model", TIER_ROOT, "transformers"},
        {"Invalid repository ID or local directory specified", "model", TIER_ROOT, "vLLM"},
        {"does not appear to have a file named ", "model", TIER_ROOT, "transformers"},
        {"Incorrect path_or_model_id", "model", TIER_ROOT, "transformers"},
        {"is not a local folder and is not a valid model identifier", "model", TIER_ROOT, "transformers"},
        {"RepositoryNotFoundError: ", "model", TIER_ROOT, "huggingface_hub: no such repository, or no access"},
        {"GatedRepoError: ", "model", TIER_ROOT, "huggingface_hub"},
        {"LocalEntryNotFoundError: ", "model", TIER_ROOT, "huggingface_hub: offline, not in the cache"},
        {"Can't load (the configuration|tokenizer) (of|for) '", "model", TIER_ROOT, "transformers"},
        /* a checkpoint file cut short (a download stopped, a full disk) or not what its name
         * says: safetensors' header errors (MetadataIncompleteBuffer, HeaderTooLarge, ...), and
         * torch's zip reader on a .bin or .pt */
        {"Error while deserializing header: ", "model", TIER_ROOT, "safetensors"},
        {"PytorchStreamReader failed reading zip archive", "model", TIER_ROOT, "torch"},
        /* driver: no GPU to be had, whatever the flags (torch's and the CUDA runtime's words;
         * llama.cpp's "failed to initialize CUDA: ..." is a warning it goes on from, on the
         * CPU, and is not matched) */
        {"No CUDA GPUs are available", "driver", TIER_ROOT, "torch"},
        {"Found no NVIDIA driver on your system", "driver", TIER_ROOT, "torch"},
        {"(Error [0-9]+|CUDA error|CUDA_ERROR_[A-Z_]+): (CUDA driver version is insufficient|no CUDA-capable device is "
         "detected|forward compatibility was attempted)",
         "driver", TIER_ROOT, "CUDA runtime, as torch and the engines report it"},
        /* cudaErrorDevicesUnavailable: another process holds the GPUs (exclusive-process
         * compute mode, another job), in its newer and older words */
        {"CUDA-capable device\\(s\\) is/are busy or unavailable", "driver", TIER_ROOT, "CUDA runtime"},
        {"all CUDA-capable devices are busy or unavailable", "driver", TIER_ROOT, "CUDA runtime"},
        /* config: the engine refused a flag or a value */
        {"invalid choice: ", "config", TIER_ROOT, "argparse"},
        {"unrecognized arguments: ", "config", TIER_ROOT, "argparse"},
        /* cuda: device faults, usually NaN logits or a bad kernel */
        {"an illegal memory access was encountered", "cuda", TIER_DEVICE, "CUDA"},
        {"misaligned address", "cuda", TIER_DEVICE, "CUDA"},
        {"device-side assert triggered", "cuda", TIER_DEVICE, "torch"},
        {"probability tensor contains either .inf., .nan.", "cuda", TIER_DEVICE, "torch"},
        /* nccl */
        {"NCCL error", "nccl", TIER_DEVICE, "NCCL"},
        {"unhandled cuda error", "nccl", TIER_DEVICE, "NCCL"},
        {"remote process exited", "nccl", TIER_DEVICE, "NCCL"},
        /* hang: a watchdog noticed a stuck collective */
        {"Watchdog caught collective operation timeout", "hang", TIER_SYMPTOM, "torch"},
        {"Scheduler watchdog timeout", "hang", TIER_SYMPTOM, "SGLang"},
        /* assert: the engine stopped on a failed internal check. Every cause above beats it:
         * an OOM or a watchdog often ends in an abort, and the abort is not the reason. */
        {"GGML_ASSERT\\(.*\\) failed", "assert", TIER_ASSERT, "ggml"},
        {"Assertion `.*[`'] failed", "assert", TIER_ASSERT, "C assert(), CUDA device assert"},
        {"Assertion failed: ", "assert", TIER_ASSERT, "TensorRT-LLM TLLM_CHECK, MSVC assert()"},
        /* the what() line after it is the evidence when there is one (diagnose.c) */
        {"terminate called [a-z]", "assert", TIER_ASSERT, "C++ runtime: an uncaught exception"},
        {"Check failed: ", "assert", TIER_ASSERT, "glog, absl, TVM CHECK"},
        {"CHECK failed", "assert", TIER_ASSERT, "CHECK macros"},
        {NULL, NULL, 0, NULL},
};

/* Lines that only say that something failed, printed after the line that says what. */
static const char *const wrapper_lines[] = {
        /* llama.cpp */
        "failed to create[ _]context",
        "exiting due to (model loading|HTTP server) error",
        "failed to load model(, '|$)",
        "common_init_[A-Za-z_]*: ",
        "srv +load_model: .*failed",
        "encountered an error while trying to fit params",
        /* vLLM: the engine core's, and a worker's (TP, EP) before its traceback and after it */
        "Engine core initialization failed",
        "EngineCore failed to start",
        "WorkerProc failed to start",
        "WorkerProc initialization failed due to an exception in a background process",
        "Worker proc [^ ]+ died unexpectedly",
        /* SGLang */
        "Scheduler hit an exception",
        "Received sigquit from a child process",
        /* uvicorn */
        "Application startup failed",
        NULL,
};

/* Lines of a server's log that are not the server's, so never its evidence: gauntlet's
 * own notes ("[gauntlet: log cut ...]", "[gauntlet: Slurm job 12 runs on ...]"), and what a
 * launcher writes between the server's lines (docs/slurm.md): srun's chatter (queued,
 * allocated, how a task ended: "srun: error: node1: task 0: Exited with exit code 1") and
 * slurmstepd's notices of a cancel ("*** STEP 12.0 ON node1 CANCELLED AT ... ***", which the
 * launcher's outcome quotes). slurmstepd's other errors ("execve(): x: No such file or
 * directory") are kept: they are why the server did not start. */
static const char *const foreign_lines[] = {
        "^\\[gauntlet: ",
        "^srun: ",
        "^slurmstepd(-[^ :]*)?: error: \\*\\*\\* ",
        NULL,
};

static const struct signature no_signatures[] = {{NULL, NULL, 0, NULL}};

/* llama.cpp (llama-server): texts seen from the build in ../shared/engines, kept in
 * tests/logs/llamacpp-*.log. Its log lines look like "0.00.007.063 E func: message". */
static const struct signature llamacpp_signatures[] = {
        /* config: a flag combination or value the build refuses */
        {"does not divide n_embd_head_[kv]=", "config", TIER_ROOT, "llama.cpp: quantized KV cache, head size"},
        {"quantized V cache requires flash_attn to be enabled", "config", TIER_ROOT, "llama.cpp"},
        {"error: invalid argument: ", "config", TIER_ROOT, "llama.cpp: an unknown flag"},
        {"error while handling argument \"", "config", TIER_ROOT, "llama.cpp: a bad value or a missing one"},
        {"error while handling environment variable \"", "config", TIER_ROOT, "llama.cpp: a bad LLAMA_ARG_*"},
        /* port */
        {"couldn't bind HTTP server socket", "port", TIER_ROOT, "llama-server"},
        /* oom before model: the model's mmap refused under a memory limit is no fault of the
         * model ("error loading model: mmap failed: Cannot allocate memory") */
        {"mmap failed: Cannot allocate memory", "oom", TIER_ROOT, "llama.cpp: the model's mmap"},
        /* model: missing, not a GGUF, corrupted, unknown architecture */
        {"failed to open GGUF file '", "model", TIER_ROOT, "ggml gguf"},
        {"invalid magic characters: '.*', expected 'GGUF'", "model", TIER_ROOT, "ggml gguf"},
        {"llama_model_load: error loading model: ", "model", TIER_ROOT, "llama.cpp"},
        /* oom: host memory (CUDA's cudaMalloc is a common signature) */
        {"insufficient memory \\(attempted to allocate", "oom", TIER_ROOT, "ggml CPU backend"},
        {"failed to allocate ([A-Za-z0-9_]+ )?buffer of size [0-9]+", "oom", TIER_ROOT, "ggml backends"},
        {NULL, NULL, 0, NULL},
};

static const struct signature testbed_signatures[] = {
        {"failed to allocate [0-9]+ bytes", "oom", TIER_ROOT, "gauntlet-testbed"},
        {NULL, NULL, 0, NULL},
};

/* How engines' messages name an axis (ENGINES.md): "K cache type q8_0 with block size 32
 * does not divide n_embd_head_k=40" names --cache-type-k's value q8_0, not --cache-type-v's. */
static const struct axis_words llamacpp_axis_words[] = {
        {STRV("--cache-type-k", "-ctk", "LLAMA_ARG_CACHE_TYPE_K"), STRV("K cache", "cache_type_k", "type_k"), NULL},
        {STRV("--cache-type-v", "-ctv", "LLAMA_ARG_CACHE_TYPE_V"), STRV("V cache", "cache_type_v", "type_v"), NULL},
        {STRV("--flash-attn", "-fa", "LLAMA_ARG_FLASH_ATTN"), STRV("flash_attn", "flash attention"), NULL},
        /* the other flags a matrix varies, for their spellings (common/arg.cpp): "error
         * while handling argument \"-sm\": invalid value" names --split-mode */
        {STRV("--split-mode", "-sm", "LLAMA_ARG_SPLIT_MODE"), STRV("split_mode", "split mode"), NULL},
        {STRV("--n-gpu-layers", "-ngl", "--gpu-layers", "LLAMA_ARG_N_GPU_LAYERS"), STRV("n_gpu_layers", "gpu layers"),
         NULL},
        {STRV("--tensor-split", "-ts", "LLAMA_ARG_TENSOR_SPLIT"), STRV("tensor_split"), NULL},
        {STRV("--override-tensor", "-ot", "LLAMA_ARG_OVERRIDE_TENSOR"), STRV("tensor_buft_overrides"), NULL},
        {STRV("--main-gpu", "-mg", "LLAMA_ARG_MAIN_GPU"), STRV("main_gpu"), NULL},
        /* spellings alone: their words (n_ctx, n_batch) stand in lines of other causes */
        {STRV("--parallel", "-np", "LLAMA_ARG_N_PARALLEL"), NULL, NULL},
        {STRV("--ctx-size", "-c", "LLAMA_ARG_CTX_SIZE"), NULL, NULL},
        {STRV("--batch-size", "-b", "LLAMA_ARG_BATCH"), NULL, NULL},
        {STRV("--ubatch-size", "-ub", "LLAMA_ARG_UBATCH"), NULL, NULL},
        /* "context type MTP requested but model doesn't contain MTP layers" */
        {STRV("--spec-type", "LLAMA_ARG_SPEC_TYPE"), STRV("speculative type"),
         STRV("MTP", "draft-mtp", "EAGLE3", "draft-eagle3")},
        {NULL, NULL, NULL},
};
static const struct axis_words sglang_axis_words[] = {
        /* "FlashAttention v3 Backend requires SM>=80 and SM<=90." */
        {STRV("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend"),
         STRV("attention backend"),
         STRV("FlashAttention v3", "fa3", "FlashAttention3", "fa3", "FlashAttention v4", "fa4", "FlashAttention4",
              "fa4", "FlashInfer", "flashinfer", "FlashMLA", "flashmla", "TensorRT-LLM MLA", "trtllm_mla",
              "TensorRT-LLM MHA", "trtllm_mha")},
        /* "Runner backend MoeRunnerBackend.MARLIN requires a fused func for a2a backend deepep";
         * "FP8/MXFP8 Cutlass MoE is only supported with ep_size == 1" */
        {STRV("--moe-runner-backend"), STRV("moe runner", "MoeRunnerBackend", "MoE"), NULL},
        /* "Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please
         * use triton or auto backend for speculative moe runner instead." (the longer phrase
         * is the draft's axis, not --moe-runner-backend's) */
        {STRV("--speculative-moe-runner-backend"), STRV("speculative moe runner"), NULL},
        /* "Flashinfer MoE A2A is only supported with flashinfer_cutlass or … moe runner backend" */
        {STRV("--moe-a2a-backend"), STRV("moe a2a", "a2a backend"), NULL},
        /* "Speculative decoding is currently not supported with Flex Attention backend" */
        {STRV("--speculative-algorithm"), STRV("speculative decoding"), NULL},
        /* "trtllm_mha backend only supports topk = 1 for speculative decoding." */
        {STRV("--speculative-eagle-topk"), STRV("topk"), NULL},
        /* FlashInfer's mm_fp4 names its own backends: "mm_fp4 does not support backend
         * 'trtllm' with capability 120" (tests/logs/flashinfer-sm120.log) */
        {STRV("--fp4-gemm-backend"), STRV("fp4 gemm"),
         STRV("backend 'trtllm'", "flashinfer_trtllm", "backend 'cutlass'", "flashinfer_cutlass", "backend 'cudnn'",
              "flashinfer_cudnn")},
        {STRV("--kv-cache-dtype"), STRV("kv cache dtype", "kv_cache_dtype"), NULL},
        /* "tp_size (4) must be divisible by ep_size (8)": ServerArgs' fields; --tp and --ep
         * are argparse's abbreviations of --tp-size and --ep-size */
        {STRV("--tp-size", "--tp", "--tensor-parallel-size"), STRV("tp_size", "tensor parallel size"), NULL},
        {STRV("--ep-size", "--ep", "--expert-parallel-size"), STRV("ep_size", "expert parallel size"), NULL},
        {NULL, NULL, NULL},
};
static const struct axis_words vllm_axis_words[] = {
        /* "Selected backend AttentionBackendEnum.FLASHINFER is not valid for this
         * configuration. Reason: ['kv_cache_dtype not supported']" */
        /* "NotImplementedError: FlashAttention V1 with FP8 KV cache not yet supported": the
         * backend and the cache's dtype, a pair's doing */
        {STRV("--attention-backend", "VLLM_ATTENTION_BACKEND"),
         STRV("attention backend", "VLLM_ATTENTION_BACKEND", "selected backend"),
         STRV("FlashAttention", "FLASH_ATTN", "FlashAttention-2", "FLASH_ATTN", "FlashAttention-3", "FLASH_ATTN",
              "FlashInfer", "FLASHINFER", "FlexAttention", "FLEX_ATTENTION", "XFormers", "XFORMERS", "FlashMLA",
              "FLASHMLA")},
        {STRV("--kv-cache-dtype"), STRV("kv_cache_dtype", "kv cache dtype", "kv cache"), NULL},
        /* "FP8 MoE backend FLASHINFER_TRTLLM does not support …" */
        {STRV("--moe-backend"), STRV("MoE"), NULL},
        /* "fp8_e5m2 kv-cache is not supported with fp8 checkpoints." */
        {STRV("--quantization", "-q"), STRV("quantization method", "checkpoint", "checkpoints"), NULL},
        {STRV("--tensor-parallel-size", "-tp"), STRV("tensor parallel size", "tp_size"), NULL},
        /* "Cannot use FA version 3 on Blackwell platform, defaulting to FA version 4 …" */
        {STRV("--attention-config.flash_attn_version"), STRV("FA version"), NULL},
        /* "Unsupported connector type: NIXLConnector" (the registry's name is NixlConnector) */
        {STRV("--kv-transfer-config.kv_connector"), STRV("connector type"), NULL},
        {NULL, NULL, NULL},
};

static const struct axis_words trtllm_axis_words[] = {
        /* "AutoDeploy does not support beam search (max_beam_width > 1)": the backend by its
         * own name, beside the width (a pair's doing) */
        {STRV("--backend"), NULL, STRV("AutoDeploy", "_autodeploy", "PyTorch", "pytorch")},
        /* "kv_cache_config.free_gpu_memory_fraction must be a float between 0 and 1" */
        {STRV("--kv_cache_free_gpu_memory_fraction"), STRV("free_gpu_memory_fraction"), NULL},
        {NULL, NULL, NULL},
};

static const struct profile profiles[] = {
        {
                .name = "sglang",
                .command = STRV("python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--host",
                                "{host}", "--port", "{port}"),
                .tp_flag = "--tp",
                .health_path = "/health",
                .ready = READY_HTTP_200,
                .ready_line = "The server is fired up and ready to roll",
                .reasoning_fields = reasoning_both,
                .thinking_key = "enable_thinking",
                .needs_gpu = true,
                .takes_seed = true,
                .takes_ignore_eos = true,
                .version_command = STRV("python3", "-c", "import sglang; print(sglang.__version__)"),
                .libraries = STRV("sglang", "torch", "flashinfer-python", "sgl-kernel", "nvidia-cuda-runtime-cu12"),
                .default_values = defaults_common,
                .signatures = no_signatures,
                .axis_words = sglang_axis_words,
        },
        {
                .name = "vllm",
                .command = STRV("vllm", "serve", "{model}", "--host", "{host}", "--port", "{port}"),
                .tp_flag = "--tensor-parallel-size",
                .health_path = "/health",
                .ready = READY_HTTP_200,
                .ready_line = "Application startup complete",
                .reasoning_fields = STRV("reasoning", "reasoning_content"),
                .thinking_key = "enable_thinking",
                .needs_gpu = true,
                .takes_seed = true,
                .takes_ignore_eos = true,
                .tokenize_path = "/tokenize",
                .version_command = STRV("{program}", "--version"),
                .libraries = STRV("vllm", "torch", "flashinfer-python", "nvidia-cuda-runtime-cu12"),
                .default_values = defaults_common,
                .signatures = no_signatures,
                .axis_words = vllm_axis_words,
        },
        {
                .name = "trtllm",
                .command = STRV("trtllm-serve", "{model}", "--host", "{host}", "--port", "{port}"),
                .tp_flag = "--tp_size",
                .health_path = "/health",
                .ready = READY_HTTP_200,
                .ready_line = NULL, /* not established: the probe alone decides */
                .reasoning_fields = reasoning_both,
                .thinking_key = "enable_thinking",
                .needs_gpu = true,
                .takes_seed = true,
                .takes_ignore_eos = true,
                .version_command = STRV("python3", "-c", "import tensorrt_llm; print(tensorrt_llm.__version__)"),
                .libraries = STRV("tensorrt_llm", "torch", "tensorrt", "flashinfer-python", "nvidia-cuda-runtime-cu12"),
                .default_values = defaults_common,
                .signatures = no_signatures,
                .axis_words = trtllm_axis_words,
        },
        {
                .name = "llama.cpp",
                .command = STRV("llama-server", "-m", "{model}", "--host", "{host}", "--port", "{port}"),
                .tp_flag = NULL,
                .health_path = "/health",
                .ready = READY_HTTP_200_STATUS_OK,
                .ready_line = "(server is listening on http://|llama_server: listening on http://)",
                .reasoning_fields = reasoning_both,
                .thinking_key = "enable_thinking",
                .takes_seed = true,
                .takes_ignore_eos = true,
                .tokenize_path = "/tokenize",
                .version_command = STRV("{program}", "--version"),
                .default_values = defaults_common,
                .signatures = llamacpp_signatures,
                .axis_words = llamacpp_axis_words,
                .arg_env_prefix = "LLAMA_ARG_",
                .plain_numbers = true,
        },
        {
                .name = "testbed",
                .command = STRV("gauntlet-testbed", "--host", "{host}", "--port", "{port}"),
                .tp_flag = NULL,
                .health_path = "/health",
                .ready = READY_HTTP_200,
                .ready_line = "gauntlet-testbed: listening on http://",
                .reasoning_fields = reasoning_both,
                .thinking_key = "enable_thinking",
                .beside_gauntlet = true,
                .takes_seed = true,
                .takes_ignore_eos = true,
                .version_command = STRV("{program}", "--version"),
                .default_values = defaults_common,
                .signatures = testbed_signatures,
        },
        {
                .name = "generic",
                .command = NULL, /* the matrix gives the whole command */
                .tp_flag = NULL,
                .health_path = "/health",
                .ready = READY_HTTP_200,
                .ready_line = NULL,
                .reasoning_fields = reasoning_both,
                .thinking_key = "enable_thinking",
                .takes_seed = false,
                .takes_ignore_eos = false,
                .default_values = defaults_common,
                .signatures = no_signatures,
        },
};

const struct profile *profile_find(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
                if (strcmp(profiles[i].name, name) == 0)
                        return &profiles[i];
        /* a friendlier spelling people use */
        if (strcmp(name, "llamacpp") == 0 || strcmp(name, "llama-cpp") == 0)
                return profile_find("llama.cpp");
        return NULL;
}

const struct profile *const *profile_all(void) {
        static const struct profile *all[sizeof(profiles) / sizeof(profiles[0]) + 1];
        for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
                all[i] = &profiles[i];
        return all;
}

const struct signature *profile_common_signatures(void) {
        return common_signatures;
}

const char *const *profile_wrapper_lines(void) {
        return wrapper_lines;
}

const char *const *profile_foreign_lines(void) {
        return foreign_lines;
}

static const struct axis_words *axis_words_of(const struct profile *p, const char *flag) {
        for (const struct axis_words *w = p && flag ? p->axis_words : NULL; w && w->flags; w++)
                for (const char *const *f = w->flags; *f; f++)
                        if (strcmp(*f, flag) == 0)
                                return w;
        return NULL;
}

int profile_other_words(const struct profile *p, const char *const *flags, size_t n, const char ***ret) {
        size_t count = 0;
        const char **out = NULL;
        *ret = NULL;
        for (int pass = 0; pass < 2; pass++) {
                for (const struct axis_words *w = p ? p->axis_words : NULL; w && w->flags; w++) {
                        bool axis = false;
                        for (size_t i = 0; i < n && !axis; i++)
                                axis = flags[i] && axis_words_of(p, flags[i]) == w;
                        if (axis)
                                continue;
                        /* the words alone: a flag's own name ("backend") may be any line's word */
                        for (const char *const *x = w->words; x && *x; x++) {
                                if (pass == 1)
                                        out[count] = *x;
                                count++;
                        }
                }
                if (pass == 0) {
                        if (count == 0)
                                return 0;
                        if (!(out = calloc(count + 1, sizeof(*out))))
                                return -ENOMEM;
                        count = 0;
                }
        }
        *ret = out;
        return 0;
}

const char *const *profile_axis_words(const struct profile *p, const char *flag) {
        const struct axis_words *w = axis_words_of(p, flag);
        return w ? w->words : NULL;
}

const char *const *profile_axis_forms(const struct profile *p, const char *flag) {
        const struct axis_words *w = axis_words_of(p, flag);
        return w ? w->flags : NULL;
}

const char *const *profile_axis_aliases(const struct profile *p, const char *flag) {
        const struct axis_words *w = axis_words_of(p, flag);
        return w ? w->aliases : NULL;
}

bool profile_is_default_value(const struct profile *p, const char *value) {
        const char *const *d = p && p->default_values ? p->default_values : defaults_common;
        for (; *d; d++)
                if (strcmp(*d, value) == 0)
                        return true;
        return false;
}

int profile_version_argv(const char *const *tmpl, const char *program, char ***ret) {
        *ret = NULL;
        if (!tmpl || !tmpl[0])
                return 0;
        _cleanup_strv_free_ char **v = NULL;
        for (; *tmpl; tmpl++) {
                bool prog = strcmp(*tmpl, "{program}") == 0;
                if (prog && !program)
                        return 0;
                if (strv_push(&v, prog ? program : *tmpl) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 1;
}
