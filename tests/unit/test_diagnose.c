/* test_diagnose.c -- log signatures to causes, data-driven from tests/logs/.
 *
 * Each .log file under tests/logs starts with "# expect: VERDICT CAUSE EVIDENCE-FRAGMENT" (or
 * "# expect: none"), then optionally "# engine: NAME" (the profile the log is read with;
 * sglang when absent) and comment lines starting with "# "; the rest of the file is the log,
 * exactly as the engine printed it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "gate/diagnose.h"
#include "base/profile.h"
#include "base/util.h"

static const char *srcdir(void) {
        const char *s = getenv("SRCDIR");
        return s ? s : ".";
}

/* The log of a tests/logs file: what follows its "# " header lines. */
static const char *log_body(const char *text) {
        while (startswith(text, "# ") && strchr(text, '\n'))
                text = strchr(text, '\n') + 1;
        return text;
}

static void check_file(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        assert_int_equal(read_file_capped(path, 1 << 20, &text, &len), 0);
        char verdict[32] = "", cause[32] = "", fragment[256] = "", engine[32] = "sglang";
        assert_true(startswith(text, "# expect: "));
        int k = sscanf(text, "# expect: %31s %31s %255[^\n]", verdict, cause, fragment);
        assert_true(k >= 1);
        const char *body = strchr(text, '\n') + 1;
        if (startswith(body, "# engine: "))
                assert_int_equal(sscanf(body, "# engine: %31s", engine), 1);
        body = log_body(body);
        const struct profile *p = profile_find(engine);
        if (!p)
                print_error("%s: unknown engine '%s'\n", path, engine);
        assert_non_null(p);
        struct diagnosis d;
        int r = diagnose_text(body, len - (size_t)(body - text), p, &d);
        if (strcmp(verdict, "none") == 0) {
                if (r != 0)
                        print_error("%s: expected no diagnosis, got %s: %s\n", path, d.cause, d.evidence);
                assert_int_equal(r, 0);
                return;
        }
        if (r != 1)
                print_error("%s: expected %s/%s, got nothing\n", path, verdict, cause);
        assert_int_equal(r, 1);
        if (strcmp(d.cause, cause) != 0 || !strstr(d.evidence, fragment) ||
            strcmp(verdict, d.verdict == VERDICT_TIMEOUT ? "timeout" : "crash") != 0)
                print_error("%s: expected %s/%s '%s', got %s '%s'\n", path, verdict, cause, fragment, d.cause,
                            d.evidence);
        assert_string_equal(d.cause, cause);
        assert_non_null(strstr(d.evidence, fragment));
        assert_string_equal(verdict, d.verdict == VERDICT_TIMEOUT ? "timeout" : "crash");
        assert_true(d.line >= 1);
        /* A log written with colours (ESC [ ... m, the only escapes these logs hold) reads
         * as the same log without them: the same cause, line and evidence, no escape left. */
        size_t body_len = len - (size_t)(body - text);
        if (memchr(body, '\033', body_len)) {
                _cleanup_free_ char *plain = malloc(body_len + 1);
                assert_non_null(plain);
                size_t n = 0;
                for (size_t i = 0; i < body_len; i++) {
                        if (body[i] == '\033' && i + 1 < body_len && body[i + 1] == '[') {
                                for (i += 2; i < body_len && !(body[i] >= '@' && body[i] <= '~'); i++)
                                        ;
                                continue;
                        }
                        plain[n++] = body[i];
                }
                struct diagnosis q;
                assert_int_equal(diagnose_text(plain, n, p, &q), 1);
                if (strcmp(q.evidence, d.evidence) != 0)
                        print_error("%s: with colours '%s', without '%s'\n", path, d.evidence, q.evidence);
                assert_string_equal(q.evidence, d.evidence);
                assert_string_equal(q.cause, d.cause);
                assert_int_equal(q.line, d.line);
                diagnosis_release(&q);
        }
        diagnosis_release(&d);
}

static void test_log_corpus(void **state) {
        _cleanup_free_ char *dir = strdup_printf("%s/tests/logs", srcdir());
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *de;
        int n = 0;
        while ((de = readdir(d))) {
                if (!endswith(de->d_name, ".log"))
                        continue;
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, de->d_name);
                check_file(path);
                n++;
        }
        closedir(d);
        assert_true(n >= 10);
}

static void test_exit_without_signature(void **state) {
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char log[] = "loading weights\nstill loading\n\n";
        assert_int_equal(write_all(fd, log, sizeof(log) - 1), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find("vllm"), -1, 9, &d), 0);
        assert_string_equal(d.cause, "signal");
        assert_string_equal(d.evidence, "killed by SIGKILL; last log line: still loading");
        diagnosis_release(&d);
        /* exit status 0 is never trusted alone: it is still a crash */
        assert_int_equal(diagnose_exit(path, profile_find("sglang"), 0, 0, &d), 0);
        assert_int_equal(d.verdict, VERDICT_CRASH);
        assert_string_equal(d.cause, "exit");
        assert_non_null(strstr(d.evidence, "exited with status 0"));
        diagnosis_release(&d);
        unlink(path);
}

/* Several ranks' logs (docs/data/heldout4-standin-2026-12-07/): the line that says why is one
 * rank's, early; the others' collateral and the wrappers come after it. diagnose_exit quotes
 * that line, not a worker's "WorkerProc failed to start." nor NCCL's "remote process exited". */
static void test_rank_logs(void **state) {
        (void)state;
        static const struct {
                const char *file, *engine;
                int code, sig;
                const char *cause, *evidence;
        } cases[] = {
                {"vllm-worker-failed-to-start.log", "vllm", 1, 0, "exit",
                 "exited with status 1; first error line: ValueError: Total number of key-value heads (2) of the draft "
                 "model acme/Qwen3-30B-A3B-EAGLE3 must be divisible by tensor parallel size (4)."},
                {"sglang-peer-after-error.log", "sglang", -1, 9, "signal",
                 "killed by SIGKILL; first error line: RuntimeError: DeepGEMM kernels for M=16384, N=4096, K=7168 are "
                 "not in the cache /root/.cache/deep_gemm and JIT compilation is turned off by "
                 "SGL_ENABLE_JIT_DEEPGEMM=0; run `python3 -m sglang.compile_deep_gemm` with the same arguments first"},
                /* a rank's own signature before the others' NCCL lines: that one */
                {"nccl-after-illegal.log", "sglang", 1, 0, "cuda",
                 "[TP2] RuntimeError: CUDA error: an illegal memory access was encountered"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                /* the log without the file's header, as the engine wrote it */
                _cleanup_free_ char *file = strdup_printf("%s/tests/logs/%s", srcdir(), cases[i].file), *text = NULL;
                size_t len;
                assert_non_null(file);
                assert_int_equal(read_file_capped(file, 1 << 20, &text, &len), 0);
                const char *body = log_body(text);
                char path[] = "/tmp/gauntlet-diag-XXXXXX";
                int fd = mkstemp(path);
                assert_true(fd >= 0);
                assert_int_equal(write_all(fd, body, len - (size_t)(body - text)), 0);
                close(fd);
                struct diagnosis d;
                assert_int_equal(diagnose_exit(path, profile_find(cases[i].engine), cases[i].code, cases[i].sig, &d), 0);
                unlink(path);
                if (strcmp(d.cause, cases[i].cause) != 0 || strcmp(d.evidence, cases[i].evidence) != 0)
                        print_error("%s: got %s '%s'\n", cases[i].file, d.cause, d.evidence);
                assert_string_equal(d.cause, cases[i].cause);
                assert_string_equal(d.evidence, cases[i].evidence);
                diagnosis_release(&d);
        }
        /* NCCL's line with nothing before it that says why: it is the reason */
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char log[] = "[TP0] Load weight begin.\n[TP1] torch.distributed.DistBackendError: NCCL error in: "
                           "NCCLUtils.cpp:77, remote process exited or there was a network error\n";
        assert_int_equal(write_all(fd, log, sizeof(log) - 1), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find("sglang"), 1, 0, &d), 0);
        unlink(path);
        assert_string_equal(d.cause, "nccl");
        diagnosis_release(&d);
}

/* A log longer than head and tail together: its head and its tail are read, the middle
 * is not. */
static void test_long_log(void **state) {
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        char line[1024];
        memset(line, 'a', sizeof(line) - 1);
        line[sizeof(line) - 1] = '\n';
        const char *first = "loading\n", *middle = "Traceback (most recent call last):\nValueError: lost\n";
        assert_int_equal(write_all(fd, first, strlen(first)), 0);
        size_t n = (DIAGNOSE_MAX_HEAD + DIAGNOSE_MAX_TAIL) / sizeof(line);
        for (size_t i = 0; i < n + 16; i++) {
                if (i == n / 2)
                        assert_int_equal(write_all(fd, middle, strlen(middle)), 0);
                assert_int_equal(write_all(fd, line, sizeof(line)), 0);
        }
        assert_int_equal(write_all(fd, "last words\n", 11), 0);
        close(fd);
        _cleanup_free_ char *last = diagnose_last_line(path);
        assert_string_equal(last, "last words");
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find("vllm"), 1, 0, &d), 0);
        /* the error in the middle, in neither part, is not seen */
        assert_null(strstr(d.evidence, "ValueError"));
        assert_non_null(strstr(d.evidence, "last words"));
        diagnosis_release(&d);
        unlink(path);
}

static void test_innermost_beats_wrapper(void **state) {
        /* tier: the root cause wins over a later-but-earlier-tier symptom, and a lower tier
         * found later still beats a device error found first */
        const char *log = "NCCL error: unhandled cuda error\n"
                          "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
        struct diagnosis d;
        assert_int_equal(diagnose_text(log, strlen(log), profile_find("sglang"), &d), 1);
        assert_string_equal(d.cause, "oom");
        assert_int_equal(d.line, 2);
        diagnosis_release(&d);
}

static void test_control_chars_in_evidence(void **state) {
        const char log[] = "\x1b[31mRuntimeError: CUDA error: misaligned address\x1b[0m\r\n";
        struct diagnosis d;
        assert_int_equal(diagnose_text(log, sizeof(log) - 1, NULL, &d), 1);
        assert_null(strchr(d.evidence, '\x1b'));
        assert_string_equal(d.cause, "cuda");
        diagnosis_release(&d);
}

/* One log text through diagnose_text with a profile: the cause, and the evidence in full. */
static void expect_text(const char *engine, const char *log, const char *cause, const char *evidence,
                        size_t line) {
        struct diagnosis d;
        int r = diagnose_text(log, strlen(log), profile_find(engine), &d);
        if (r != 1)
                print_error("expected %s '%s', got nothing\n", cause, evidence);
        assert_int_equal(r, 1);
        if (strcmp(d.cause, cause) != 0 || strcmp(d.evidence, evidence) != 0 || d.line != line)
                print_error("expected %s '%s' line %zu, got %s '%s' line %zu\n", cause, evidence, line, d.cause,
                            d.evidence, d.line);
        assert_string_equal(d.cause, cause);
        assert_string_equal(d.evidence, evidence);
        assert_int_equal(d.line, line);
        diagnosis_release(&d);
}

/* A log text written to a file, through diagnose_exit: the cause and the evidence. */
static void expect_exit(const char *engine, const char *log, int code, int sig, const char *cause,
                        const char *evidence, size_t line) {
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, log, strlen(log)), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find(engine), code, sig, &d), 0);
        unlink(path);
        if (strcmp(d.cause, cause) != 0 || strcmp(d.evidence, evidence) != 0 || d.line != line)
                print_error("expected %s '%s' line %zu, got %s '%s' line %zu\n", cause, evidence, line, d.cause,
                            d.evidence, d.line);
        assert_int_equal(d.verdict, VERDICT_CRASH);
        assert_string_equal(d.cause, cause);
        assert_string_equal(d.evidence, evidence);
        assert_int_equal(d.line, line);
        diagnosis_release(&d);
}

/* A server still running at its startup deadline: a signature names the cause; else
 * timeout/startup with the first error line, else the last line, else an empty log. */
static void expect_deadline(const char *log, enum verdict v, const char *cause, const char *evidence) {
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, log, strlen(log)), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_deadline(path, profile_find("vllm"), 90 * USEC_PER_SEC, &d), 0);
        unlink(path);
        if (strcmp(d.cause, cause) != 0 || strcmp(d.evidence, evidence) != 0)
                print_error("expected %s '%s', got %s '%s'\n", cause, evidence, d.cause, d.evidence);
        assert_int_equal(d.verdict, v);
        assert_string_equal(d.cause, cause);
        assert_string_equal(d.evidence, evidence);
        diagnosis_release(&d);
}

static void test_deadline(void **state) {
        (void)state;
        expect_deadline("INFO loading\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                        "INFO still here\n",
                        VERDICT_CRASH, "oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB");
        expect_deadline("INFO loading\nERROR something odd\nINFO waiting\n", VERDICT_TIMEOUT, "startup",
                        "not ready after 90s; first error line: ERROR something odd");
        expect_deadline("INFO loading\nINFO waiting for workers\n", VERDICT_TIMEOUT, "startup",
                        "not ready after 90s; last log line: INFO waiting for workers");
        expect_deadline("", VERDICT_TIMEOUT, "startup", "not ready after 90s; the log is empty");
        /* no log at all reads as an empty one */
        struct diagnosis d;
        assert_int_equal(diagnose_deadline("/nonexistent/gauntlet.log", profile_find("vllm"), 5 * USEC_PER_SEC, &d), 0);
        assert_string_equal(d.evidence, "not ready after 5s; the log is empty");
        diagnosis_release(&d);
}

static void test_assertion_forms(void **state) {
        /* ggml: the assertion line, not the backtrace under it (gdb repeats its text) */
        expect_text("llama.cpp",
                    "I srv    load_model: loading model 'm.gguf'\n"
                    "ggml/src/ggml.c:1787: GGML_ASSERT(view_src == NULL || data_size == 0) failed\n"
                    "llama-server(+0x7b3a5)[0x55d0c0a7b3a5]\n"
                    "#2  0x000055b8d5b833d8 in ggml_abort (fmt=0x55 \"GGML_ASSERT(%s) failed\") at ggml.c:260\n",
                    "assert", "ggml/src/ggml.c:1787: GGML_ASSERT(view_src == NULL || data_size == 0) failed", 2);
        /* a gdb frame alone repeats the assertion's format string: that is no assertion */
        struct diagnosis d;
        const char *frame = "#2  0x000055b8d5b833d8 in ggml_abort (fmt=0x55 \"GGML_ASSERT(%s) failed\")\n";
        assert_int_equal(diagnose_text(frame, strlen(frame), profile_find("llama.cpp"), &d), 0);
        /* C assert() (glibc's words) */
        expect_text("sglang", "loading\nserver: src/kv.c:88: kv_put: Assertion `n < cap' failed.\n", "assert",
                    "server: src/kv.c:88: kv_put: Assertion `n < cap' failed.", 2);
        /* an uncaught C++ exception: the what() line carries the message */
        expect_text("llama.cpp",
                    "terminate called after throwing an instance of 'std::system_error'\n"
                    "\n"
                    "  what():  Resource temporarily unavailable\n",
                    "assert", "what():  Resource temporarily unavailable", 3);
        /* ... and without one, the terminate line itself */
        expect_text("vllm", "terminate called without an active exception\nAborted\n", "assert",
                    "terminate called without an active exception", 1);
        expect_text("vllm",
                    "terminate called after throwing an instance of 'c10::Error'\n"
                    "[rank0] next line is another process's\n",
                    "assert", "terminate called after throwing an instance of 'c10::Error'", 1);
        /* CHECK macros */
        expect_text("trtllm", "F1129 07:00:00.0 1 kernel.cc:12] Check failed: x == y (1 vs. 2)\n", "assert",
                    "F1129 07:00:00.0 1 kernel.cc:12] Check failed: x == y (1 vs. 2)", 1);
        expect_text("generic", "CHECK failed at moe.cu:77: num_experts % 8 == 0\n", "assert",
                    "CHECK failed at moe.cu:77: num_experts % 8 == 0", 1);
        expect_text("trtllm", "[TensorRT-LLM][ERROR] Assertion failed: mNbExperts > 0 (moe.cpp:41)\n", "assert",
                    "[TensorRT-LLM][ERROR] Assertion failed: mNbExperts > 0 (moe.cpp:41)", 1);
}

/* vLLM's prefix (the process, then the level, the time and the source line) is not the
 * evidence; a line that is all prefix, or one of another shape, is kept whole. */
static void test_vllm_prefix(void **state) {
        (void)state;
        expect_text("vllm",
                    "(EngineCore_DP0 pid=20269) ERROR 12-05 19:34:36 [core.py:708] torch.OutOfMemoryError: CUDA out "
                    "of memory. Tried to allocate 2.00 GiB\n",
                    "oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", 1);
        /* a KV cache that does not hold one request of max_model_len: memory's, in V1's words
         * and V0's, over the front end's line after it */
        expect_text("vllm",
                    "(EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] ValueError: To serve at least one "
                    "request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than "
                    "the available KV cache memory (3.93 GiB). Based on the available memory, the estimated maximum "
                    "model length is 32192. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
                    "initializing the engine.\n"
                    "(APIServer pid=18633) RuntimeError: Engine core initialization failed. See root cause above. "
                    "Failed core proc(s): {'EngineCore_DP0': 1}\n",
                    "oom",
                    "ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV "
                    "cache is needed, which is larger than the available KV cache memory (3.93 GiB). Based on the "
                    "available memory, the estimated maximum model length is 32192. Try increasing "
                    "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                    1);
        expect_text("vllm",
                    "ERROR 05-02 11:02:03 engine.py:400] ValueError: The model's max seq len (131072) is larger than the "
                    "maximum number of tokens that can be stored in KV cache (77584). Try increasing "
                    "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
                    "oom",
                    "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can "
                    "be stored in KV cache (77584). Try increasing `gpu_memory_utilization` or decreasing "
                    "`max_model_len` when initializing the engine.",
                    1);
        expect_text("vllm", "ERROR 12-05 19:34:36 [core.py:708] RuntimeError: No CUDA GPUs are available\n", "driver",
                    "RuntimeError: No CUDA GPUs are available", 1);
        expect_text("vllm", "(VllmWorkerProcess pid=7) ERROR 12-05 19:34:36 worker.py:12] RuntimeError: No CUDA GPUs "
                            "are available\n",
                    "driver", "RuntimeError: No CUDA GPUs are available", 1);
        expect_text("vllm", "ERROR 12-05 19:34:36 a b.py:12] RuntimeError: No CUDA GPUs are available\n", "driver",
                    "ERROR 12-05 19:34:36 a b.py:12] RuntimeError: No CUDA GPUs are available", 1);
        expect_text("vllm", "(APIServer pid=7) RuntimeError: No CUDA GPUs are available\n", "driver",
                    "RuntimeError: No CUDA GPUs are available", 1);
        expect_text("vllm", "(worker) ERROR 12-05 [x] No CUDA GPUs are available\n", "driver",
                    "(worker) ERROR 12-05 [x] No CUDA GPUs are available", 1);
}

static void test_assertion_tiers(void **state) {
        /* a reason anywhere beats the assertion that stopped the engine, even a later line */
        expect_text("llama.cpp",
                    "ggml.c:12: GGML_ASSERT(buf != NULL) failed\n"
                    "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 20.00 MiB on device 0: cudaMalloc "
                    "failed: out of memory\n",
                    "oom", "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 20.00 MiB on device 0: "
                           "cudaMalloc failed: out of memory", 2);
        /* llama.cpp's CUDA build out of memory for its KV cache: the first line, which says the
         * size it failed to allocate (the search reads it: docs/search.md, "The allocation
         * that failed"), over the later ones that say it again */
        expect_text("llama.cpp",
                    "llama_kv_cache: layer   0: dev = CUDA0\n"
                    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 40960.00 MiB on device 0: cudaMalloc "
                    "failed: out of memory\n"
                    "alloc_tensor_range: failed to allocate CUDA0 buffer of size 42949672960\n"
                    "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
                    "common_init_from_params: failed to create context with model\n",
                    "oom", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 40960.00 MiB on device 0: "
                           "cudaMalloc failed: out of memory", 2);
        /* a device error too: torch's device assert is a cuda cause */
        expect_text("sglang",
                    "Assertion `index out of bounds' failed.\nRuntimeError: CUDA error: device-side assert triggered\n",
                    "cuda", "RuntimeError: CUDA error: device-side assert triggered", 2);
        /* a watchdog that ends in an uncaught exception is a hang */
        struct diagnosis d;
        const char *log = "terminate called after throwing an instance of 'c10::DistBackendError'\n"
                          "  what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: "
                          "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4)\n";
        assert_int_equal(diagnose_text(log, strlen(log), profile_find("vllm"), &d), 1);
        assert_string_equal(d.cause, "hang");
        assert_int_equal(d.verdict, VERDICT_TIMEOUT);
        assert_int_equal(d.line, 2);
        diagnosis_release(&d);
        /* a root cause in llama.cpp's own words beats the common assertion */
        expect_text("llama.cpp",
                    "E llama_init_from_model: K cache type q8_0 with block size 32 does not divide n_embd_head_k=40\n"
                    "ggml.c:1787: GGML_ASSERT(view_src == NULL) failed\n",
                    "config", "E llama_init_from_model: K cache type q8_0 with block size 32 does not divide "
                              "n_embd_head_k=40", 1);
        /* the assertion beats the exit status */
        expect_exit("llama.cpp", "loading\nggml.c:1787: GGML_ASSERT(view_src == NULL) failed\n#0  0x1 in f ()\n", -1,
                    6, "assert", "ggml.c:1787: GGML_ASSERT(view_src == NULL) failed", 2);
}

static void test_first_error_line(void **state) {
        /* no signature: the first error line (time stamp trimmed), not the wrapper lines after it
         * nor the last line; the exit status stays the cause */
        const char *llama = "0.00.003.566 I cmn  common_param: common_params_print_info: verbosity = 3\n"
                            "0.00.003.875 W srv  llama_server: no error here, only a warning\n"
                            "0.00.007.063 E llama_model_load: error loading vocabulary: bad token 7\n"
                            "0.00.007.209 E common_fit_params: encountered an error while trying to fit params "
                            "to free device memory: failed to load model\n"
                            "0.00.009.484 E cmn  common_init_: failed to create context with model 'm.gguf'\n"
                            "0.00.009.486 E srv    load_model: failed to create_context with model 'm.gguf'\n"
                            "0.00.009.487 I srv    operator(): operator(): cleaning up before exit...\n"
                            "0.00.010.005 E srv  llama_server: exiting due to model loading error";
        expect_exit("vllm", llama, 1, 0, "exit",
                    "exited with status 1; first error line: E llama_model_load: error loading vocabulary: bad token 7",
                    3);
        /* wrapper lines alone are no error line: the last line is quoted, as before */
        expect_exit("sglang",
                    "E cmn  common_init_: failed to create context with model 'm.gguf'\n"
                    "E srv  llama_server: exiting due to model loading error\n"
                    "bye\n",
                    1, 0, "exit", "exited with status 1; last log line: bye", 0);
        /* backtrace frames never, whatever their functions are called */
        expect_exit("generic",
                    "serving\n"
                    "#3  0x00007f15d38d1c17 in report_error (msg=0x1 \"fatal error\") at err.c:30\n"
                    "libfoo.so(_Z11fatal_errorv+0x1f)[0x7f15d38d1c17]\n"
                    "   0: 0x55d0c0a7b3a5 on_error\n"
                    "error: worker 3 lost its socket\n"
                    "ERROR: a later error\n",
                    -1, 11, "signal", "killed by SIGSEGV; first error line: error: worker 3 lost its socket", 5);
}

static void test_python_traceback(void **state) {
        /* vLLM: every line carries the log prefix, and a wrapper comes first; the evidence is the
         * traceback's last line, the exception, without the prefix */
        const char *vllm = "INFO 11-29 07:00:01 [core.py:58] Initializing a V1 LLM engine\n"
                           "ERROR 11-29 07:01:02 [core.py:700] EngineCore failed to start.\n"
                           "ERROR 11-29 07:01:02 [core.py:700] Traceback (most recent call last):\n"
                           "ERROR 11-29 07:01:02 [core.py:700]   File \"/vllm/core.py\", line 691, in run\n"
                           "ERROR 11-29 07:01:02 [core.py:700]     engine_core = EngineCoreProc(*args)\n"
                           "ERROR 11-29 07:01:02 [core.py:700]                   ^^^^^^^^^^^^^^^^^^^^\n"
                           "ERROR 11-29 07:01:02 [core.py:700] ValueError: head size 40 is not supported by "
                           "FLASH_ATTN\n"
                           "Traceback (most recent call last):\n"
                           "  File \"/vllm/api_server.py\", line 10, in <module>\n"
                           "RuntimeError: Engine core initialization failed. See root cause above.\n";
        expect_exit("vllm", vllm, 1, 0, "exit",
                    "exited with status 1; first error line: ValueError: head size 40 is not supported by FLASH_ATTN",
                    7);
        /* SGLang: the traceback starts on the wrapper's line; a chained exception after it */
        const char *sglang = "[2026-11-29 07:02:10 TP3] Scheduler hit an exception: Traceback (most recent call "
                             "last):\n"
                             "  File \"/sglang/scheduler.py\", line 2500, in run_scheduler_process\n"
                             "    scheduler = Scheduler(server_args)\n"
                             "KeyError: 'model.layers.0.mlp.gate'\n"
                             "\n"
                             "During handling of the above exception, another exception occurred:\n"
                             "\n"
                             "Traceback (most recent call last):\n"
                             "  File \"/sglang/launch_server.py\", line 14, in <module>\n"
                             "RuntimeError: Initialization failed\n"
                             "[2026-11-29 07:02:11] Received sigquit from a child process. It usually means the "
                             "child failed.\n";
        expect_exit("sglang", sglang, -1, 9, "signal",
                    "killed by SIGKILL; first error line: KeyError: 'model.layers.0.mlp.gate'", 4);
        /* the traceback's exception is the first error line even after an INFO line that says "error" */
        expect_exit("sglang",
                    "INFO:     error_on_nan=False, errors are logged\n"
                    "Traceback (most recent call last):\n"
                    "  File \"x.py\", line 1, in <module>\n"
                    "AssertionError\n",
                    1, 0, "exit", "exited with status 1; first error line: AssertionError", 4);
}

/* pydantic's ValidationError (vLLM's and TensorRT-LLM's settings) says what failed on the
 * lines after it: the evidence is the exception with its message. */
static void test_pydantic_message(void **state) {
        const char *vllm = "INFO 12-05 02:50:04 [utils.py:233] non-default args: {'tensor_parallel_size': 3}\n"
                           "Traceback (most recent call last):\n"
                           "  File \"/usr/local/bin/vllm\", line 10, in <module>\n"
                           "    sys.exit(main())\n"
                           "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig\n"
                           "  Value error, Total number of attention heads (64) must be divisible by tensor parallel "
                           "size (3). [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]\n"
                           "    For further information visit https://errors.pydantic.dev/2.11/v/value_error\n";
        expect_exit("vllm", vllm, 1, 0, "exit",
                    "exited with status 1; first error line: pydantic_core._pydantic_core.ValidationError: 1 "
                    "validation error for VllmConfig: Value error, Total number of attention heads (64) must be "
                    "divisible by tensor parallel size (3). [type=value_error, input_value=ArgsKwargs((), {}), "
                    "input_type=ArgsKwargs]",
                    5);
        /* a field's name on its own line first, and every line with the engine's log prefix */
        const char *prefixed = "ERROR 12-05 02:51:00 [core.py:700] Traceback (most recent call last):\n"
                               "ERROR 12-05 02:51:00 [core.py:700]   File \"/x.py\", line 1, in <module>\n"
                               "ERROR 12-05 02:51:00 [core.py:700] pydantic_core._pydantic_core.ValidationError: 1 "
                               "validation error for KvCacheConfig\n"
                               "ERROR 12-05 02:51:00 [core.py:700] dtype\n"
                               "ERROR 12-05 02:51:00 [core.py:700]   Value error, kv_cache_config.dtype must be one "
                               "of \"auto\", \"fp8\" [type=value_error, input_value='fp8_e4m3', input_type=str]\n";
        expect_exit("trtllm", prefixed, 1, 0, "exit",
                    "exited with status 1; first error line: pydantic_core._pydantic_core.ValidationError: 1 "
                    "validation error for KvCacheConfig: Value error, kv_cache_config.dtype must be one of \"auto\", "
                    "\"fp8\" [type=value_error, input_value='fp8_e4m3', input_type=str]",
                    3);
        /* no message after it: the exception alone */
        expect_exit("vllm",
                    "Traceback (most recent call last):\n"
                    "  File \"x.py\", line 1, in <module>\n"
                    "pydantic_core._pydantic_core.ValidationError: 1 validation error for X\n",
                    1, 0, "exit",
                    "exited with status 1; first error line: pydantic_core._pydantic_core.ValidationError: 1 "
                    "validation error for X",
                    3);
}

static void test_common_signatures_for_llamacpp(void **state) {
        /* the engine's own signatures come first, the common ones still apply */
        expect_text("llama.cpp",
                    "E CUDA error: an illegal memory access was encountered\n"
                    "E   current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2600\n"
                    "ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error\n",
                    "cuda", "E CUDA error: an illegal memory access was encountered", 1);
        expect_text("llama.cpp",
                    "0.00.007.063 E llama_init_from_model: K cache type q4_0 with block size 32 does not divide "
                    "n_embd_head_k=40\n",
                    "config", "E llama_init_from_model: K cache type q4_0 with block size 32 does not divide "
                              "n_embd_head_k=40", 1);
}

/* The port a crash/port line quotes: the word's, an address's; none from a clock, a count
 * after "support", a number too large. */
static void test_named_port(void **state) {
        (void)state;
        assert_int_equal(diagnose_named_port("torch.distributed.DistNetworkError: The server socket has failed to listen on "
                                             "any local network address. port: 29501, useIpv6: 0, code: -98, name: "
                                             "EADDRINUSE, message: address already in use"),
                         29501);
        assert_int_equal(diagnose_named_port("couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080"), 8080);
        assert_int_equal(diagnose_named_port("ERROR:    [Errno 98] error while attempting to bind on address "
                                             "('127.0.0.1', 30000): address already in use"),
                         30000);
        assert_int_equal(diagnose_named_port("[2026-12-06 05:26:03] bind 10.0.0.7:31337 failed: Address already in use"),
                         31337);
        assert_int_equal(diagnose_named_port("zmq.error.ZMQError: Address already in use (addr='tcp://[::1]:5557')"), 5557);
        assert_int_equal(diagnose_named_port("listen on localhost:8001: address already in use"), 8001);
        assert_int_equal(diagnose_named_port("[2026-12-06 05:26:03] Address already in use"), 0);
        assert_int_equal(diagnose_named_port("this build does not support 16 heads; Transport: 5; port_args 7"), 0);
        assert_int_equal(diagnose_named_port("port 99999 is out of range"), 0);
        assert_int_equal(diagnose_named_port(NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_log_corpus),
                cmocka_unit_test(test_exit_without_signature), cmocka_unit_test(test_rank_logs),
                cmocka_unit_test(test_long_log),
                cmocka_unit_test(test_innermost_beats_wrapper),
                cmocka_unit_test(test_vllm_prefix),
                cmocka_unit_test(test_control_chars_in_evidence),
                cmocka_unit_test(test_assertion_forms),
                cmocka_unit_test(test_assertion_tiers),
                cmocka_unit_test(test_first_error_line),
                cmocka_unit_test(test_python_traceback),
                cmocka_unit_test(test_pydantic_message),
                cmocka_unit_test(test_common_signatures_for_llamacpp),
                cmocka_unit_test(test_deadline),
                cmocka_unit_test(test_named_port),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
