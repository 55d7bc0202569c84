/* test_matrix.c -- the matrix loader: parsing, expansion, cell ids, and every malformed file.
 *
 * Malformed cases are data: each YAML file in tests/matrices/bad/ (and each bad-NAME.yaml in
 * tests/matrices/checks/) opens with "# line: N" and "# error: FRAGMENT"; the loader must answer -EINVAL with one line
 * starting "PATH:N: " and containing FRAGMENT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "text/buf.h"
#include "config/cells.h"
#include "config/matrix.h"
#include "config/workload.h"
#include "config/suite.h"
#include "base/util.h"
#include "config/ytree.h"

static const char *srcdir(void) {
        const char *s = getenv("SRCDIR");
        return s && *s ? s : ".";
}

static char *src_path(const char *rel) {
        char *p = strdup_printf("%s/%s", srcdir(), rel);
        assert_non_null(p);
        return p;
}

static struct matrix *load_ok(const char *rel) {
        _cleanup_free_ char *path = src_path(rel);
        struct matrix *m = NULL;
        char *err = NULL;
        int r = cells_load_matrix(path, &m, &err);
        if (r < 0)
                fail_msg("%s: %d %s", rel, r, err ? err : "(no message)");
        assert_non_null(m);
        assert_null(err);
        return m;
}

static struct matrix *load_str(const char *yaml) {
        struct matrix *m = NULL;
        char *err = NULL;
        int r = cells_load_matrix_string(yaml, strlen(yaml), "inline.yaml", &m, &err);
        if (r < 0)
                fail_msg("inline: %d %s", r, err ? err : "(no message)");
        return m;
}

/* Loads text expected to fail; returns the message (caller frees). */
static char *load_err(const char *yaml, size_t len) {
        struct matrix *m = (struct matrix *)0x1; /* must stay untouched on failure */
        char *err = NULL;
        int r = cells_load_matrix_string(yaml, len, "t.yaml", &m, &err);
        assert_int_equal(r, -EINVAL);
        assert_ptr_equal(m, (struct matrix *)0x1);
        assert_non_null(err);
        assert_null(strchr(err, '\n'));
        return err;
}

static void assert_argv(char **argv, const char *const *want) {
        size_t i = 0;
        for (; want[i]; i++) {
                assert_non_null(argv[i]);
                assert_string_equal(argv[i], want[i]);
        }
        assert_null(argv[i]);
}

static void test_design_example(void **state) {
        _cleanup_matrix_ struct matrix *m = load_ok("tests/matrices/good/design.yaml");
        assert_string_equal(m->engine, "sglang");
        assert_string_equal(m->model, "nvidia/Qwen3.5-397B-A17B-NVFP4");
        assert_string_equal(m->host, "127.0.0.1");
        assert_int_equal(m->port, 0);
        assert_int_equal(m->tp, 8); /* from --tp 8 in args */
        assert_int_equal(m->startup_timeout, 20 * 60 * USEC_PER_SEC);
        assert_int_equal(m->request_timeout, 5 * 60 * USEC_PER_SEC);
        assert_int_equal(m->stop_timeout, 30 * USEC_PER_SEC);
        assert_int_equal(m->n_axes, 2);
        assert_string_equal(m->axes[1].name, "gemm");
        assert_string_equal(m->axes[1].flag, "--fp4-gemm-backend");
        assert_true(m->axes[0].values[0].is_default); /* "auto" */
        assert_false(m->axes[0].values[1].is_default);
        assert_int_equal(m->strategy, STRATEGY_GRID);
        assert_null(m->baseline);
        assert_true(m->checks_default);
        assert_true(m->has_bench);
        assert_int_equal(m->bench.n_concurrency, 3);
        assert_int_equal(m->bench.concurrency[2], 32);
        assert_int_equal(m->bench.input_tokens, 1024);
        assert_int_equal(m->bench.output_tokens, 256);
        assert_int_equal(m->bench.requests, 64);
        assert_true(m->bench.chat);
        assert_string_equal(m->objective, "output_tokens_per_s@1");
        assert_int_equal(m->emit, EMIT_SYSTEMD | EMIT_SCRIPT);
        _cleanup_free_ char *path = src_path("tests/matrices/good/design.yaml");
        _cleanup_free_ char *text = NULL;
        assert_int_equal(read_file_capped(path, YTREE_MAX_FILE, &text, NULL), 0);
        assert_string_equal(m->text, text);
        assert_string_equal(m->path, path);

        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        assert_int_equal(n, 16);
        static const char *const argv0[] = {
                "python3", "-m", "sglang.launch_server", "--model-path", "nvidia/Qwen3.5-397B-A17B-NVFP4",
                "--host", "{host}", "--port", "{port}", "--tp", "8", "--quantization", "modelopt_fp4",
                "--reasoning-parser", "qwen3", "--moe-runner-backend", "auto", "--fp4-gemm-backend", "auto", NULL,
        };
        assert_argv(cells[0].argv, argv0);
        static const char *const env0[] = {"NCCL_P2P_DISABLE=1", NULL};
        assert_argv(cells[0].env, env0);
        /* computed independently (Python) from the rule in matrix.h */
        assert_string_equal(cells[0].id, "8046e4080babd200");
        assert_int_equal(cells[0].distance, 0);
        /* first axis slowest */
        _cleanup_free_ char *l1 = cell_label(m, &cells[1]);
        _cleanup_free_ char *l4 = cell_label(m, &cells[4]);
        assert_string_equal(l1, "moe=auto gemm=flashinfer_cutlass");
        assert_string_equal(l4, "moe=flashinfer_cutlass gemm=auto");
        assert_int_equal(cells[5].distance, 2);
        assert_int_equal(cells[1].distance, 1);
        /* only moe=flashinfer_trtllm gemm=auto is excluded: index 3 * 4 + 0 */
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(cells[i].excluded, i == 12);
                assert_int_equal(cells[i].choice[0], i / 4);
                assert_int_equal(cells[i].choice[1], i % 4);
                assert_int_equal(strlen(cells[i].id), 16);
                assert_int_equal(strspn(cells[i].id, "0123456789abcdef"), 16);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(cells[i].id, cells[j].id);
        }
        cells_free(cells, n);
}

static void test_one_at_a_time(void **state) {
        _cleanup_matrix_ struct matrix *m = load_ok("tests/matrices/good/one-at-a-time.yaml");
        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        static const char *const want[] = {
                "moe=cutlass gemm=auto kv=auto", /* the baseline first */
                "moe=auto gemm=auto kv=auto",  "moe=marlin gemm=auto kv=auto", "moe=cutlass gemm=cudnn kv=auto",
                "moe=cutlass gemm=auto kv=fp8", "moe=cutlass gemm=auto kv=bf16",
        };
        assert_int_equal(n, ELEMENTSOF(want));
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *l = cell_label(m, &cells[i]);
                assert_string_equal(l, want[i]);
        }
        /* "--kv=" joins flag and value into one argument */
        static const char *const argv5[] = {"gauntlet-testbed", "--host", "{host}", "--port", "{port}", "--seed", "7",
                                            "--moe", "cutlass", "--gemm", "auto", "--kv=bf16", NULL};
        assert_argv(cells[5].argv, argv5);
        assert_int_equal(cells[0].distance, 1); /* cutlass is not a default */
        assert_int_equal(cells[1].distance, 0);
        assert_int_equal(cells[5].distance, 2);
        cells_free(cells, n);
}

static void expand_ids(const char *yaml, char ids[][17], size_t max, size_t *ret_n) {
        _cleanup_matrix_ struct matrix *m = load_str(yaml);
        assert_non_null(m);
        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        assert_true(n <= max);
        for (size_t i = 0; i < n; i++)
                memcpy(ids[i], cells[i].id, 17);
        *ret_n = n;
        cells_free(cells, n);
}

static void test_ids(void **state) {
        static const char *base = "engine: testbed\nenv: {A: '1', B: '2'}\nport: 8000\n"
                                  "axes: {x: {flag: --x, values: [a, b]}}\n";
        static const char *reordered = "engine: testbed\nport: 9000\nenv:\n  B: '2'\n  A: '1'\n"
                                       "axes:\n  x:\n    values: [a, b]\n    flag: --x\n";
        static const char *other_env = "engine: testbed\nenv: {A: '1', B: '3'}\nport: 8000\n"
                                       "axes: {x: {flag: --x, values: [a, b]}}\n";
        static const char *axis_env = "engine: testbed\nenv: {A: '1', B: '2'}\nport: 8000\n"
                                      "axes: {x: {flag: --x, values: [a, {name: b, args: [--x, b], env: {B: '2'}}]}}\n";
        char a[4][17], b[4][17], c[4][17], d[4][17], e[4][17];
        size_t na, nb, nc, nd, ne;
        expand_ids(base, a, 4, &na);
        expand_ids(base, b, 4, &nb);
        expand_ids(reordered, c, 4, &nc);
        expand_ids(other_env, d, 4, &nd);
        expand_ids(axis_env, e, 4, &ne);
        assert_int_equal(na, 2);
        assert_int_equal(nb, 2);
        assert_int_equal(nc, 2);
        assert_int_equal(nd, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_string_equal(a[i], b[i]);      /* stable across loads */
                assert_string_equal(a[i], c[i]);      /* env order and port do not matter */
                assert_string_not_equal(a[i], d[i]);  /* one env value differs */
                assert_string_equal(a[i], e[i]);      /* same resolved env, however written */
        }
        assert_string_not_equal(a[0], a[1]);
}

static void test_map_values(void **state) {
        _cleanup_matrix_ struct matrix *m = load_ok("tests/matrices/good/map-values.yaml");
        assert_string_equal(m->host, "0.0.0.0");
        assert_string_equal(m->workdir, "/srv/models");
        assert_int_equal(m->request_timeout, 90 * USEC_PER_SEC);
        assert_int_equal(m->stop_timeout, 60 * USEC_PER_SEC);
        const struct axis *moe = &m->axes[0];
        assert_int_equal(moe->n_values, 3);
        assert_string_equal(moe->values[1].name, "fi-latency");
        assert_false(moe->values[1].is_default);
        assert_true(moe->values[2].is_default); /* default: true */
        assert_non_null(moe->values[2].args);
        assert_null(moe->values[2].args[0]);
        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        assert_int_equal(n, 9);
        /* fi-latency x "1.50": args replaced, plain scalars kept as written */
        static const char *const argv5[] = {"vllm", "serve", "org/model", "--host", "{host}", "--port", "{port}",
                                            "--moe-backend", "flashinfer_trtllm", "--fa=1.50", NULL};
        assert_argv(cells[5].argv, argv5);
        /* base env, axis env overriding SHARED in place, then the axis's new key */
        static const char *const env5[] = {"BASE=1", "SHARED=axis", "VLLM_FLASHINFER_MOE_BACKEND=latency", NULL};
        assert_argv(cells[5].env, env5);
        /* env-only x on: no moe args at all */
        static const char *const argv6[] = {"vllm", "serve", "org/model", "--host", "{host}", "--port", "{port}",
                                            "--fa=on", NULL};
        assert_argv(cells[6].argv, argv6);
        static const char *const env6[] = {"BASE=1", "SHARED=base", "VLLM_USE_FLASHINFER_MOE_FP4=1", NULL};
        assert_argv(cells[6].env, env6);
        assert_int_equal(cells[6].distance, 1); /* env-only is a default, "on" is not */
        cells_free(cells, n);
        /* the flags the search reads the engine's lines by: a joined flag without its '=' */
        char flag[64];
        assert_int_equal(axis_reading_flag(&m->axes[0], flag, sizeof(flag)), strlen("--moe-backend"));
        assert_string_equal(flag, "--moe-backend");
        assert_int_equal(axis_reading_flag(&m->axes[1], flag, sizeof(flag)), 4);
        assert_string_equal(flag, "--fa");
        assert_int_equal(axis_reading_flag(&m->axes[1], flag, 4), 0); /* does not fit */
}

/* An axis of maps: the flag its values' arguments begin with, or the one environment key
 * they set; none where they differ. */
static void test_reading_flag(void **state) {
        (void)state;
        _cleanup_matrix_ struct matrix *m = load_str(
                "engine: vllm\nmodel: m\naxes:\n"
                "  kv:\n    values:\n"
                "      - {name: f16, args: []}\n"
                "      - {name: q8, args: [-ctk, q8_0, -ctv, q8_0]}\n"
                "      - {name: q4, args: [-ctk, q4_0, -ctv, q4_0]}\n"
                "  attn:\n    values:\n"
                "      - {name: default}\n"
                "      - {name: fi, env: {VLLM_ATTENTION_BACKEND: FLASHINFER}}\n"
                "      - {name: fa, env: {VLLM_ATTENTION_BACKEND: FLASH_ATTN}}\n"
                "  mm:\n    values:\n"
                "      - {name: mmq, env: {GGML_CUDA_FORCE_MMQ: '1'}}\n"
                "      - {name: cublas, env: {GGML_CUDA_FORCE_CUBLAS: '1'}}\n"
                "  two:\n    values:\n"
                "      - {name: a, args: [--x, '1']}\n"
                "      - {name: b, args: [--y, '1']}\n"
                "  bare:\n    values:\n"
                "      - {name: a, args: [positional]}\n"
                "      - {name: b, args: [positional2]}\n");
        assert_non_null(m);
        char flag[64];
        assert_int_equal(axis_reading_flag(&m->axes[0], flag, sizeof(flag)), 4);
        assert_string_equal(flag, "-ctk");
        assert_int_equal(axis_reading_flag(&m->axes[1], flag, sizeof(flag)), strlen("VLLM_ATTENTION_BACKEND"));
        assert_string_equal(flag, "VLLM_ATTENTION_BACKEND");
        assert_int_equal(axis_reading_flag(&m->axes[2], flag, sizeof(flag)), 0);
        assert_int_equal(axis_reading_flag(&m->axes[3], flag, sizeof(flag)), 0);
        assert_int_equal(axis_reading_flag(&m->axes[4], flag, sizeof(flag)), 0);
}

static void test_resolve_argv(void **state) {
        _cleanup_matrix_ struct matrix *m = load_str(
                "engine: generic\nmodel: org/m\n"
                "command: [srv, --url, 'http://{host}:{port}/v1', --model, '{model}', '{other}', '{port}{port}', '{']\n");
        assert_non_null(m);
        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        assert_int_equal(n, 1);
        static const char *const raw[] = {"srv", "--url", "http://{host}:{port}/v1", "--model", "org/m", "{other}",
                                          "{port}{port}", "{", NULL};
        assert_argv(cells[0].argv, raw);
        _cleanup_strv_free_ char **argv = NULL;
        assert_int_equal(cell_resolve_argv(&cells[0], "10.0.0.2", 31337, &argv), 0);
        static const char *const want[] = {"srv", "--url", "http://10.0.0.2:31337/v1", "--model", "org/m", "{other}",
                                           "3133731337", "{", NULL};
        assert_argv(argv, want);
        _cleanup_free_ char *label = cell_label(m, &cells[0]);
        assert_string_equal(label, "(base)");
        assert_int_equal(m->port, 0);
        cells_free(cells, n);
}

static void test_defaults_and_minimal(void **state) {
        _cleanup_matrix_ struct matrix *m = load_ok("tests/matrices/good/minimal.yaml");
        assert_string_equal(m->engine, "testbed");
        assert_null(m->model);
        assert_int_equal(m->n_axes, 0);
        assert_false(m->has_bench);
        assert_int_equal(m->bench.n_concurrency, 3);
        assert_string_equal(m->objective, "output_tokens_per_s@1");
        assert_true(m->checks_default);
        assert_int_equal(m->emit, EMIT_SYSTEMD | EMIT_SCRIPT);
        assert_true(m->under_load.on); /* probes.under_load: on, 50 of the eval's questions */
        assert_int_equal(m->under_load.eval_samples, MATRIX_UNDER_LOAD_EVAL_SAMPLES);
        _cleanup_matrix_ struct matrix *off = load_str("engine: testbed\nprobes: {under_load: false}\n");
        assert_false(off->under_load.on);
        _cleanup_matrix_ struct matrix *n = load_str("engine: testbed\nprobes:\n  under_load: {eval_samples: 120}\n");
        assert_true(n->under_load.on);
        assert_int_equal(n->under_load.eval_samples, 120);

        _cleanup_matrix_ struct matrix *a = load_ok("tests/matrices/good/anchors.yaml");
        assert_string_equal(a->engine, "llama.cpp"); /* canonical name for "llamacpp" */
        assert_string_equal(a->args[1], "4096");
        assert_false(a->checks_default);
        assert_int_equal(a->n_checks, 1);
        assert_int_equal(a->checks[0].expect.kind, EXPECT_CONTAINS);
        assert_int_equal(a->bench.requests, 0);
        assert_int_equal(a->bench.duration, 30 * USEC_PER_SEC);
        assert_false(a->bench.chat);
        assert_true(a->bench.rate > 2.49 && a->bench.rate < 2.51);
        assert_string_equal(a->objective, "smoke");
        assert_int_equal(a->emit, EMIT_SYSTEMD);
        /* the alias *common expanded as a value's args */
        static const char *const q4[] = {"-c", "4096", "-ngl", "all", NULL};
        assert_argv(a->axes[0].values[2].args, q4);
        static const char *const e[] = {"A=1", NULL};
        assert_argv(a->axes[0].values[1].env, e);
}

/* Runs every file matching pattern through load; each states its expected line and message. */
static size_t check_bad_files(const char *pattern, bool suite) {
        _cleanup_free_ char *pat = src_path(pattern);
        glob_t g;
        assert_int_equal(glob(pat, 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *path = g.gl_pathv[i];
                _cleanup_free_ char *text = NULL;
                assert_int_equal(read_file_capped(path, YTREE_MAX_FILE, &text, NULL), 0);
                unsigned line = 0;
                char *frag = NULL;
                assert_int_equal(sscanf(text, "# line: %u\n", &line), 1);
                char *e = strstr(text, "\n# error: ");
                assert_non_null(e);
                e += strlen("\n# error: ");
                frag = strndup(e, strcspn(e, "\n"));
                assert_non_null(frag);

                char *err = NULL;
                int r;
                if (suite) {
                        struct check_spec *specs = (struct check_spec *)0x1;
                        size_t n = 77;
                        r = suite_load_checks_file(path, &specs, &n, &err);
                        assert_ptr_equal(specs, (struct check_spec *)0x1);
                        assert_int_equal(n, 77);
                } else {
                        struct matrix *m = (struct matrix *)0x1;
                        r = cells_load_matrix(path, &m, &err);
                        assert_ptr_equal(m, (struct matrix *)0x1);
                }
                _cleanup_free_ char *prefix = strdup_printf("%s:%u: ", path, line);
                if (r != -EINVAL || !err || !startswith(err, prefix) || !strstr(err, frag) || strchr(err, '\n'))
                        fail_msg("%s: r=%d\n  got:  %s\n  want: %s...%s", path, r, err ? err : "(null)", prefix, frag);
                free(err);
                free(frag);
        }
        size_t n = g.gl_pathc;
        globfree(&g);
        return n;
}

/* A size suffix is refused only where the engine misreads it (llama.cpp:
 * tests/matrices/bad/llamacpp-size-suffix*.yaml): vLLM reads --max-model-len 32k itself, and
 * a llama.cpp value that is a name, a share or a number without a suffix loads. */
static void test_size_suffix_ok(void **state) {
        (void)state;
        static const char *const ok[] = {
                "engine: vllm\nmodel: m\naxes:\n  len: {flag: --max-model-len, values: [32k, 128K]}\n",
                "engine: sglang\nmodel: m\nargs: [--context-length, 64k]\nenv: {LLAMA_ARG_CTX_SIZE: 8k}\n",
                "engine: llama.cpp\nmodel: m.gguf\nargs: [-c, \"32768\", --alias, 7b, -ot, \"blk.1k=CPU\"]\n"
                "axes:\n  kv: {flag: -ctk, values: [q8_0, f16]}\n  split: {flag: -ts, values: [\"3,1\", \"1,1\"]}\n"
                "  mem: {values: [{name: big, env: {GGML_SIZE: 2k, LLAMA_ARG_N_PARALLEL: \"4\"}}]}\n",
                "engine: llama.cpp\nmodel: m.gguf\naxes:\n  ctx: {values: [{name: 32k, args: [-c, \"32768\"]}]}\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                struct matrix *m = load_str(ok[i]);
                assert_non_null(m);
                matrix_free(m);
        }
}

static void test_bad_matrices(void **state) {
        /* every case is a file; the count guards against a glob that matches nothing */
        assert_true(check_bad_files("tests/matrices/bad/*.yaml", false) >= 60);
}

static void test_bad_suites(void **state) {
        assert_true(check_bad_files("tests/matrices/checks/bad-*.yaml", true) >= 12);
}

static void test_bad_inline(void **state) {
        static const struct {
                const char *text;
                size_t len;
                const char *want; /* the whole message */
        } cases[] = {
#define T(s) s, sizeof(s) - 1
                {T("engine: testbed\nmodel: a\0b\n"), "t.yaml:2: NUL byte in the file (binary data?)"},
                {T("engine: testbed\n\xc0\xaf: 1\n"), "t.yaml:2: invalid UTF-8 (byte 0xc0); save the file as UTF-8"},
                {T("engine: testbed\nmodel: \xed\xa0\x80\n"), "t.yaml:2: invalid UTF-8 (byte 0xed); save the file as UTF-8"},
                {T("engine: testbed\nmodel: \xf4\x90\x80\x80\n"), "t.yaml:2: invalid UTF-8 (byte 0xf4); save the file as UTF-8"},
                {T("engine: testbed\nmodel: \xe2\x82"), "t.yaml:2: invalid UTF-8 (byte 0xe2); save the file as UTF-8"},
                {T("engine: testbed\n\x7f\n"), "t.yaml:2: control character 0x7f in the file (binary data?)"},
                {T(""), "t.yaml:1: the file is empty"},
                {T("\n\n   \n"), "t.yaml:1: the file is empty"},
                {T("---\n"), "t.yaml:1: the file is empty"},
                {T("~\n"), "t.yaml:1: the file is empty"},
                {T("engine: testbed\nenigne: vllm\n"), "t.yaml:2: unknown key 'enigne' in the matrix (did you mean 'engine'?)"},
                {T("engine: testbed\nport: \"8000\"\n"), "t.yaml:2: port must be an integer from 0 to 65535, not '8000'"},
                {T("engine: testbed\naxes:\n  a: {flag: --a, values: [x, [y]]}\n"),
                 "t.yaml:3: a value of axis 'a' must be a name or a map {name, args, env}, not a list"},
                {T("engine: testbed\naxes:\n  a: {values: [{args: [--x]}]}\n"), "t.yaml:3: a value of axis 'a' needs a 'name'"},
                {T("engine: testbed\nbaseline: {a: x}\n"), "t.yaml:2: baseline needs axes"},
                {T("engine: testbed\nbench: {requests: 5, duration: 1m}\n"),
                 "t.yaml:2: bench: give requests or duration, not both"},
                {T("engine: testbed\nbench: {concurrency: [1, 1]}\n"), "t.yaml:2: concurrency 1 appears twice"},
#undef T
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *err = load_err(cases[i].text, cases[i].len);
                assert_string_equal(err, cases[i].want);
        }
        /* an escape written in a quoted string is fine as a value, but shown escaped in messages */
        const char *esc = "engine: \"te\\e[31mst\"\n";
        _cleanup_free_ char *err = load_err(esc, strlen(esc));
        assert_true(startswith(err, "t.yaml:1: unknown engine 'te\\x1b[31mst'"));

        /* a matrix over YTREE_MAX_FILE */
        size_t big = YTREE_MAX_FILE + 10;
        _cleanup_free_ char *huge = malloc(big);
        assert_non_null(huge);
        memset(huge, '#', big);
        _cleanup_free_ char *e2 = load_err(huge, big);
        assert_true(startswith(e2, "t.yaml:1: the file is too big"));

        /* too many axes, values, args: generated */
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "engine: testbed\naxes:\n");
        for (int i = 0; i <= MATRIX_MAX_AXES; i++)
                buf_printf(&b, "  a%d: {flag: --a%d, values: [x]}\n", i, i);
        _cleanup_free_ char *e3 = load_err(b.data, b.len);
        assert_string_equal(e3, "t.yaml:3: too many axes (17, at most 16)");
        buf_reset(&b);
        buf_puts(&b, "engine: testbed\nargs: [");
        for (int i = 0; i <= MATRIX_MAX_ARGS; i++)
                buf_printf(&b, "%s-a", i ? ", " : "");
        buf_puts(&b, "]\n");
        _cleanup_free_ char *e4 = load_err(b.data, b.len);
        assert_string_equal(e4, "t.yaml:2: args has too many items (257, at most 256)");
        buf_reset(&b);
        buf_puts(&b, "engine: testbed\naxes:\n  a:\n    flag: --a\n    values: [");
        for (int i = 0; i <= MATRIX_MAX_VALUES; i++)
                buf_printf(&b, "%sv%d", i ? ", " : "", i);
        buf_puts(&b, "]\n");
        _cleanup_free_ char *e5 = load_err(b.data, b.len);
        assert_string_equal(e5, "t.yaml:5: axis 'a' has too many values (257, at most 256)");
        buf_reset(&b);
        buf_puts(&b, "engine: testbed\naxes: {a: {flag: --a, values: [x, y]}}\nexclude:\n");
        for (int i = 0; i <= MATRIX_MAX_EXCLUDES; i++)
                buf_puts(&b, "  - {a: x}\n");
        _cleanup_free_ char *e7 = load_err(b.data, b.len);
        assert_string_equal(e7, "t.yaml:4: too many exclude rules (1025, at most 1024)");
        /* exactly at the cell cap is fine: 100 x 100 */
        buf_reset(&b);
        buf_puts(&b, "engine: testbed\naxes:\n");
        for (int a = 0; a < 2; a++) {
                buf_printf(&b, "  a%d: {flag: --a%d, values: [", a, a);
                for (int i = 0; i < 100; i++)
                        buf_printf(&b, "%s%d", i ? ", " : "", i);
                buf_puts(&b, "]}\n");
        }
        _cleanup_matrix_ struct matrix *m = load_str(b.data);
        assert_non_null(m);
        struct cell *cells = NULL;
        size_t n = 0;
        assert_int_equal(cells_expand(m, &cells, &n), 0);
        assert_int_equal(n, MATRIX_MAX_CELLS);
        cells_free(cells, n);

        /* a byte order mark and CRLF line ends are fine */
        _cleanup_matrix_ struct matrix *bom = load_str("\xef\xbb\xbf" "engine: testbed\r\nport: 5\r\n");
        assert_non_null(bom);
        assert_int_equal(bom->port, 5);

        /* a file that cannot be read says so, with the errno */
        struct matrix *none = NULL;
        char *e6 = NULL;
        assert_int_equal(cells_load_matrix("/nonexistent/m.yaml", &none, &e6), -ENOENT);
        assert_null(none);
        assert_string_equal(e6, "cannot read '/nonexistent/m.yaml': No such file or directory");
        free(e6);
}

static void test_alias_bomb_fast(void **state) {
        /* ten levels of ten: 10^10 nodes if expanded; refused after ~10^5 */
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "engine: testbed\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 10; i++) {
                buf_printf(&b, "l%d: &l%d [", i, i);
                for (int j = 0; j < 10; j++)
                        buf_printf(&b, "%s*l%d", j ? ", " : "", i - 1);
                buf_puts(&b, "]\n");
        }
        usec_t start = now_usec();
        _cleanup_free_ char *err = load_err(b.data, b.len);
        usec_t took = now_usec() - start;
        assert_string_equal(err, "t.yaml:6: the document is too big: more than 100000 nodes with aliases expanded");
        assert_true(took < 250 * USEC_PER_MSEC);

        /* a self-reference cannot make a cycle: the anchor is not defined inside itself */
        const char *self = "engine: testbed\nargs: &a [x, *a]\n";
        _cleanup_free_ char *e2 = load_err(self, strlen(self));
        assert_string_equal(e2, "t.yaml:2: unknown alias '*a' (no '&a' before it)");
}

static void test_check_suites(void **state) {
        _cleanup_free_ char *path = src_path("tests/matrices/checks/suite-list.yaml");
        struct check_spec *s = NULL;
        size_t n = 0;
        char *err = NULL;
        assert_int_equal(suite_load_checks_file(path, &s, &n, &err), 0);
        assert_null(err);
        assert_int_equal(n, 5);
        assert_string_equal(s[0].name, "ok");
        assert_int_equal(s[0].mode, CHECK_CHAT);
        assert_string_equal(s[0].prompt, "Reply with exactly: OK");
        assert_int_equal(s[0].thinking, THINKING_OFF);
        assert_false(s[0].require_reasoning);
        assert_int_equal(s[0].max_tokens, 16);
        assert_int_equal(s[0].stream, STREAM_BOTH);
        assert_int_equal(s[0].expect.kind, EXPECT_EQUALS);
        assert_string_equal(s[0].expect.value, "OK");

        assert_int_equal(s[1].thinking, THINKING_ON);
        assert_true(s[1].require_reasoning); /* default with thinking on */
        assert_int_equal(s[1].stream, STREAM_NO);
        assert_int_equal(s[1].expect.kind, EXPECT_NUMBER);
        assert_string_equal(s[1].expect.value, "323");

        assert_null(s[2].prompt);
        assert_true(json_is_array(s[2].messages));
        assert_int_equal(json_array_size(s[2].messages), 2);
        assert_string_equal(json_string_value(json_object_get(json_array_get(s[2].messages, 1), "content")),
                            "What is the capital of France?");
        assert_string_equal(json_string_value(json_object_get(json_array_get(s[2].messages, 0), "role")), "system");
        assert_int_equal(s[2].thinking, THINKING_UNSET);
        assert_int_equal(s[2].stream, STREAM_YES);
        assert_int_equal(s[2].expect.kind, EXPECT_REGEX);
        assert_string_equal(s[2].expect.value, "^[Pp]aris\\.?$");

        assert_int_equal(s[3].mode, CHECK_COMPLETION);
        assert_int_equal(s[3].thinking, THINKING_ON);
        assert_false(s[3].require_reasoning); /* reasoning: false overrides */
        assert_int_equal(s[3].expect.kind, EXPECT_CONTAINS);
        assert_int_equal(s[4].mode, CHECK_MODELS);
        assert_int_equal(s[4].stream, STREAM_NO);
        assert_int_equal(s[4].expect.kind, EXPECT_NONE);
        checks_free_suite(s, n);

        _cleanup_free_ char *p2 = src_path("tests/matrices/checks/suite-map.yaml");
        assert_int_equal(suite_load_checks_file(p2, &s, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_string_equal(s[0].prompt, "hi");
        checks_free_suite(s, n);

        assert_int_equal(suite_load_checks_file("/nonexistent/c.yaml", &s, &n, &err), -ENOENT);
        assert_string_equal(err, "cannot read '/nonexistent/c.yaml': No such file or directory");
        free(err);
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

/* bench.dataset: the keys, the file beside the matrix read at load, a bad file named at its
 * own line; poisson and burstiness. */
static void test_bench_dataset(void **state) {
        char dir[] = "/tmp/test_matrix_ds.XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *sg = strdup_printf("%s/sg.json", dir), *mx = strdup_printf("%s/m.yaml", dir);
        write_text(sg, "[{\"conversations\": [{\"from\": \"human\", \"value\": \"hi there\"},\n"
                       "  {\"from\": \"gpt\", \"value\": \"hello\"}]}]\n");
        write_text(mx, "engine: testbed\n"
                       "bench:\n"
                       "  rate: 4\n"
                       "  burstiness: 0.5\n"
                       "  dataset:\n"
                       "    name: sharegpt\n"
                       "    path: sg.json\n"
                       "    num_prompts: 20\n"
                       "    seed: 9\n"
                       "    sharegpt_max_output_len: 300\n"
                       "    sharegpt_max_total_len: 4096\n");
        struct matrix *m = NULL;
        char *err = NULL;
        if (cells_load_matrix(mx, &m, &err) < 0)
                fail_msg("%s", err);
        const struct bench_spec *b = &m->bench;
        assert_int_equal(b->dataset.kind, DATASET_SHAREGPT);
        assert_string_equal(b->dataset.path, "sg.json");
        assert_non_null(b->data);
        assert_int_equal(b->data->n, 1);
        assert_string_equal(b->data->v[0].reply, "hello");
        assert_int_equal(b->dataset.num_prompts, 20);
        assert_int_equal(b->requests, 20); /* the prompts drawn are the requests sent */
        assert_int_equal(b->seed, 9);
        assert_int_equal(b->dataset.sharegpt_max_output_len, 300);
        assert_int_equal(b->dataset.sharegpt_max_total_len, 4096);
        assert_int_equal(b->dataset.sharegpt_max_prompt_len, 1024);
        assert_true(b->poisson);
        assert_true(b->burstiness == 0.5);
        matrix_free(m);

        /* the random dataset's lengths are input_tokens and output_tokens */
        const char *y = "engine: testbed\nbench: {requests: 5, dataset: {random_input_len: 300, random_output_len: 20, "
                        "random_range_ratio: 0.25}}\n";
        assert_int_equal(cells_load_matrix_string(y, strlen(y), "t.yaml", &m, &err), 0);
        assert_int_equal(m->bench.input_tokens, 300);
        assert_int_equal(m->bench.output_tokens, 20);
        assert_true(m->bench.dataset.range_ratio == 0.25);
        assert_int_equal(m->bench.requests, 5);
        assert_null(m->bench.data);
        assert_int_equal(m->bench.threads, 0); /* absent: the bench chooses */
        matrix_free(m);

        /* threads: as given */
        y = "engine: testbed\nbench: {requests: 5, threads: 4}\n";
        assert_int_equal(cells_load_matrix_string(y, strlen(y), "t.yaml", &m, &err), 0);
        assert_int_equal(m->bench.threads, 4);
        matrix_free(m);

        /* a malformed dataset file: its own FILE:LINE */
        write_text(sg, "[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]},\n"
                       "{\"conversations\": [{\"value\": \"a\" \"b\"}]}\n]\n");
        m = (struct matrix *)0x1;
        assert_int_equal(cells_load_matrix(mx, &m, &err), -EINVAL);
        assert_ptr_equal(m, (struct matrix *)0x1);
        _cleanup_free_ char *want = strdup_printf("%s:3: malformed JSON: ", sg);
        if (!startswith(err, want))
                fail_msg("got %s", err);
        free(err);
        unlink(sg);
        unlink(mx);
        rmdir(dir);
}

/* bench.dataset multi_turn and trace: their keys, a trace's lines as the requests, and the
 * settings that cannot go with them. */
static void test_bench_sessions_trace(void **state) {
        struct matrix *m = NULL;
        char *err = NULL;
        const char *y = "engine: testbed\nbench: {dataset: {name: multi_turn, num_prompts: 6, multi_turn_turns: 3, "
                        "multi_turn_input_len: 50, multi_turn_output_len: 20, multi_turn_think_time: 250ms}}\n";
        if (cells_load_matrix_string(y, strlen(y), "t.yaml", &m, &err) < 0)
                fail_msg("%s", err);
        const struct dataset_options *o = &m->bench.dataset;
        assert_int_equal(o->kind, DATASET_MULTI_TURN);
        assert_int_equal(o->multi_turn_turns, 3);
        assert_int_equal(o->multi_turn_input_len, 50);
        assert_int_equal(o->multi_turn_output_len, 20);
        assert_int_equal(o->multi_turn_think_time, 250 * USEC_PER_MSEC);
        assert_int_equal(m->bench.requests, 6); /* sessions */
        assert_null(m->bench.data);
        matrix_free(m);

        char dir[] = "/tmp/test_matrix_tr.XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *tr = strdup_printf("%s/t.jsonl", dir), *mx = strdup_printf("%s/m.yaml", dir);
        write_text(tr, "{\"timestamp\": 0, \"input_length\": 9, \"output_length\": 2, \"hash_ids\": [4]}\n"
                       "{\"timestamp\": 10, \"input_length\": 9, \"output_length\": 2}\n"
                       "{\"timestamp\": 20, \"input_length\": 9, \"output_length\": 2}\n");
        write_text(mx, "engine: testbed\nbench: {dataset: {name: trace, path: t.jsonl, trace_speed: 2.5, "
                       "trace_block_size: 16}}\n");
        if (cells_load_matrix(mx, &m, &err) < 0)
                fail_msg("%s", err);
        assert_int_equal(m->bench.dataset.kind, DATASET_TRACE);
        assert_true(m->bench.dataset.trace_speed == 2.5);
        assert_int_equal(m->bench.dataset.trace_block_size, 16);
        assert_int_equal(m->bench.data->n, 3);
        assert_int_equal(m->bench.requests, 3); /* its lines */
        matrix_free(m);
        write_text(mx, "engine: testbed\nbench:\n  rate: 5\n  dataset: {name: trace, path: t.jsonl}\n");
        assert_int_equal(cells_load_matrix(mx, &m, &err), -EINVAL);
        _cleanup_free_ char *want_rate = strdup_printf("%s:3: bench.dataset trace: the trace says when", mx);
        if (!startswith(err, want_rate))
                fail_msg("got %s", err);
        free(err);
        write_text(mx, "engine: testbed\nbench: {dataset: {name: trace, path: t.jsonl, trace_speed: 2.5, "
                       "trace_block_size: 16}}\n");
        /* out of order: the trace's own FILE:LINE */
        write_text(tr, "{\"timestamp\": 10, \"input_length\": 9, \"output_length\": 2}\n"
                       "{\"timestamp\": 0, \"input_length\": 9, \"output_length\": 2}\n");
        assert_int_equal(cells_load_matrix(mx, &m, &err), -EINVAL);
        _cleanup_free_ char *want = strdup_printf("%s:2: timestamp 0 is before the previous line's 10", tr);
        if (!startswith(err, want))
                fail_msg("got %s", err);
        free(err);
        unlink(tr);
        unlink(mx);
        rmdir(dir);

        static const struct {
                const char *yaml, *want;
        } bad[] = {
                {"engine: testbed\nbench:\n  endpoint: completions\n  dataset: {name: multi_turn}\n",
                 "t.yaml:3: bench.dataset multi_turn sends conversations: it needs the chat endpoint"},
                {"engine: testbed\nbench:\n  dataset: {name: trace}\n", "this dataset needs a file"},
                {"engine: testbed\nbench:\n  dataset: {name: trace, path: x, trace_speed: 0}\n",
                 "t.yaml:3: bench.dataset.trace_speed must be above 0"},
                {"engine: testbed\nbench:\n  dataset: {name: multi_turn, multi_turn_think_time: soon}\n", "t.yaml:3:"},
                {"engine: testbed\nbench:\n  dataset: {name: multi_turn, multi_turn_turns: 0}\n", "t.yaml:3:"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                m = NULL;
                err = NULL;
                assert_int_equal(cells_load_matrix_string(bad[i].yaml, strlen(bad[i].yaml), "t.yaml", &m, &err), -EINVAL);
                if (!err || !strstr(err, bad[i].want))
                        fail_msg("case %zu: got %s, want %s", i, err ? err : "(null)", bad[i].want);
                free(err);
        }
}

static void test_examples(void **state) {
        static const struct {
                const char *file;
                const char *engine;
                size_t cells;
                size_t excluded;
                size_t checks; /* 0: the default suite */
        } ex[] = {
                {"examples/sglang.yaml", "sglang", 40, 2, 0},
                {"examples/vllm.yaml", "vllm", 7, 0, 4},
                {"examples/llamacpp.yaml", "llama.cpp", 27, 0, 0},
                {"examples/generic.yaml", "generic", 4, 0, 2},
                {"examples/sglang-slurm.yaml", "sglang", 16, 1, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(ex); i++) {
                _cleanup_matrix_ struct matrix *m = load_ok(ex[i].file);
                assert_string_equal(m->engine, ex[i].engine);
                assert_int_equal(m->checks_default, ex[i].checks == 0);
                assert_int_equal(m->n_checks, ex[i].checks);
                struct cell *cells = NULL;
                size_t n = 0, excluded = 0;
                assert_int_equal(cells_expand(m, &cells, &n), 0);
                assert_int_equal(n, ex[i].cells);
                for (size_t j = 0; j < n; j++)
                        excluded += cells[j].excluded;
                assert_int_equal(excluded, ex[i].excluded);
                cells_free(cells, n);
        }
        _cleanup_matrix_ struct matrix *v = load_ok("examples/vllm.yaml");
        assert_int_equal(v->tp, 4); /* --tensor-parallel-size in args */
        assert_true(v->checks[2].require_reasoning);
        assert_int_equal(v->bench.duration, 60 * USEC_PER_SEC);
        assert_int_equal(v->bench.requests, 0);
        _cleanup_matrix_ struct matrix *sl = load_ok("examples/sglang-slurm.yaml");
        assert_int_equal(sl->launcher, LAUNCHER_SLURM);
        assert_int_equal(sl->slurm.gpus_per_cell, 8); /* from --tp 8 */
        assert_string_equal(sl->slurm.time, "1:00:00");
                _cleanup_matrix_ struct matrix *l = load_ok("examples/llamacpp.yaml");
        assert_string_equal(l->axes[0].values[1].args[1], "on"); /* not "true" */
}

/* The 64 KiB per-cell limit is named at the line of what makes the cell big: an env value
 * (block or flow), an axis value's env, a long argument; not line 1. */
static void test_cell_bytes_line(void **state) {
        static const struct {
                const char *head, *tail;
                const char *want;
        } cases[] = {
                {"engine: testbed\nmodel: m\nenv:\n  SMALL: \"1\"\n  BIG: \"", "\"\n", "t.yaml:5: "},
                {"engine: testbed\n\nenv: {SMALL: \"1\", BIG: \"", "\"}\n", "t.yaml:3: "},
                {"engine: testbed\naxes:\n  x:\n    values:\n      - {name: a}\n      - name: b\n        env:\n"
                 "          HUGE: \"",
                 "\"\n", "t.yaml:8: "},
                {"engine: testbed\nargs: [--a, \"1\",\n  \"", "\"]\n", "t.yaml:3: "},
        };
        size_t big = MATRIX_MAX_CELL_BYTES + 10;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_buf_ struct buf b;
                buf_init(&b, 0);
                assert_int_equal(buf_puts(&b, cases[i].head), 0);
                for (size_t k = 0; k < big; k++)
                        assert_int_equal(buf_append(&b, "x", 1), 0);
                assert_int_equal(buf_puts(&b, cases[i].tail), 0);
                _cleanup_free_ char *err = load_err(buf_str(&b), b.len);
                if (!startswith(err, cases[i].want) || !strstr(err, "can reach"))
                        fail_msg("case %zu: got '%.120s', want '%s...can reach...'", i, err, cases[i].want);
        }
}

/* The workload: defaults written out change nothing; a changed setting is named first,
 * in key order, with its old and new values; a custom suite is there by its hash. */
static void test_workload(void **state) {
        (void)state;
        static const char base[] = "engine: generic\ncommand: [srv, '{port}']\nbench: {output_tokens: 8}\n";
        struct matrix *a = load_str(base);
        struct matrix *b = load_str("engine: generic\ncommand: [srv, '{port}']\nbench: {output_tokens: 256}\n");
        struct matrix *c = load_str("engine: generic\ncommand: [srv, '{port}']\nbench: {output_tokens: 8, requests: 64}\n");
        struct matrix *d = load_str("engine: generic\ncommand: [srv, '{port}']\nbench: {output_tokens: 8}\n"
                                    "checks: [{name: c, prompt: hi, expect: {contains: x}}]\n");
        struct matrix *e = load_str("engine: generic\ncommand: [srv, '{port}']\nbench: {output_tokens: 8}\n"
                                    "checks: [{name: c, prompt: hi, expect: {contains: y}}]\n");
        struct matrix *f = load_str("engine: generic\ncommand: [other, '{port}']\nbench: {output_tokens: 8}\n"
                                    "probes: {sampling: {runs: 3, min_right: 2}}\n");
        assert_true(a && b && c && d && e && f);
        _cleanup_free_ char *ta = NULL, *tb = NULL, *tc = NULL, *td = NULL, *te = NULL, *tf = NULL;
        char ha[17], hb[17], hc[17], hd[17], he[17], hf[17];
        assert_int_equal(workload_describe(a, NULL, &ta, ha), 0);
        assert_int_equal(workload_describe(b, NULL, &tb, hb), 0);
        assert_int_equal(workload_describe(c, NULL, &tc, hc), 0);
        assert_int_equal(workload_describe(d, NULL, &td, hd), 0);
        assert_int_equal(workload_describe(e, NULL, &te, he), 0);
        assert_int_equal(workload_describe(f, NULL, &tf, hf), 0);
        assert_int_equal(strlen(ha), 16);
        assert_string_equal(ha, hc); /* requests: 64 is the default */
        assert_string_not_equal(ha, hb);
        assert_string_not_equal(hd, he);
        assert_string_not_equal(ha, hd);
        _cleanup_free_ char *dab = NULL, *dac = NULL, *dde = NULL, *dad = NULL, *daf = NULL;
        assert_int_equal(workload_diff(ta, tb, &dab), 0);
        assert_string_equal(dab, "bench.output_tokens 8, the matrix now says 256");
        assert_int_equal(workload_diff(ta, tc, &dac), 0);
        assert_null(dac);
        assert_int_equal(workload_diff(td, te, &dde), 0);
        assert_non_null(dde);
        assert_true(strncmp(dde, "checks \"", 8) == 0);
        assert_int_equal(workload_diff(ta, td, &dad), 0);
        assert_non_null(strstr(dad, "(and "));
        /* the server's command is not part of the workload; the probes are */
        assert_int_equal(workload_diff(ta, tf, &daf), 0);
        assert_string_equal(daf, "probes.sampling.min_right 4, the matrix now says 2 (and 1 more)");
        _cleanup_free_ char *dnone = NULL;
        assert_int_equal(workload_diff(NULL, ta, &dnone), 0);
        assert_non_null(strstr(dnone, "unset, the matrix now says"));
        matrix_free(a), matrix_free(b), matrix_free(c), matrix_free(d), matrix_free(e), matrix_free(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_workload),
                cmocka_unit_test(test_cell_bytes_line),
                cmocka_unit_test(test_design_example), cmocka_unit_test(test_one_at_a_time),
                cmocka_unit_test(test_ids),            cmocka_unit_test(test_map_values),
                cmocka_unit_test(test_reading_flag),
                cmocka_unit_test(test_resolve_argv),   cmocka_unit_test(test_defaults_and_minimal),
                cmocka_unit_test(test_size_suffix_ok), cmocka_unit_test(test_bad_matrices),
                cmocka_unit_test(test_bad_suites),
                cmocka_unit_test(test_bad_inline),     cmocka_unit_test(test_alias_bomb_fast),
                cmocka_unit_test(test_check_suites),   cmocka_unit_test(test_examples),
                cmocka_unit_test(test_bench_dataset),
                cmocka_unit_test(test_bench_sessions_trace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
