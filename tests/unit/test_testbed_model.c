/* test_testbed_model.c -- the forward pass per backend, load failures, sampling, generation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../testbed/gen.h"
#include "../../testbed/model.h"
#include "../../testbed/sample.h"
#include "../../testbed/synth.h"

static char path[] = "/tmp/test-testbed-model-XXXXXX";
static const int prompt[] = {1, 3, 300, 301, 302, 358, 303, 5, 4, 6, 7};
#define N_PROMPT ((int)(sizeof(prompt) / sizeof(prompt[0])))

static int setup(void **state) {
        int fd = mkstemp(path);
        if (fd < 0)
                return -1;
        close(fd);
        struct synth_cfg c = synth_default();
        c.n_embd = 64;
        c.n_layer = 2;
        c.n_head = 4;
        c.n_head_kv = 2;
        c.n_ff = 128;
        c.n_expert = 4;
        c.n_expert_used = 2;
        c.n_ctx = 64;
        c.scale = 0.15f;
        return synth_model_write(&c, path) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        unlink(path);
        return 0;
}

static struct model *load(enum kern_backend moe, enum kern_backend gemm, enum kern_arch arch) {
        struct model_opts o = {.moe = moe, .gemm = gemm, .arch = arch};
        struct model *m = NULL;
        char *err = NULL;
        int r = model_load(path, &o, &m, &err);
        if (r < 0)
                fail_msg("load %s/%s: %s", kern_backend_name(moe), kern_backend_name(gemm), err);
        return m;
}

/* Logits after each prompt token: N_PROMPT x n_vocab. */
static float *run(struct model *m) {
        struct model_ctx *c;
        int nv = m->hp.n_vocab;
        float *out = malloc(sizeof(float) * nv * N_PROMPT);
        assert_int_equal(model_ctx_new(m, &c), 0);
        for (int i = 0; i < N_PROMPT; i++)
                assert_int_equal(model_eval(c, prompt[i], out + (size_t)i * nv), 0);
        model_ctx_free(c);
        return out;
}

static double rel_err(const float *a, const float *b, size_t n) {
        double se = 0, s = 0;
        for (size_t i = 0; i < n; i++) {
                se += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
                s += (double)b[i] * b[i];
        }
        return sqrt(se / s);
}

static void test_hparams(void **state) {
        struct model *m = load(KERN_REFERENCE, KERN_REFERENCE, KERN_SM90);
        assert_int_equal(m->hp.n_embd, 64);
        assert_int_equal(m->hp.n_layer, 2);
        assert_int_equal(m->hp.head_dim, 16);
        assert_int_equal(m->hp.n_ff, 128);
        assert_int_equal(m->hp.n_expert, 4);
        assert_int_equal(m->hp.n_vocab, 359);
        assert_string_equal(m->name, "testbed-synthetic");
        model_free(m);
}

static void test_backends_agree(void **state) {
        struct model *ref = load(KERN_REFERENCE, KERN_REFERENCE, KERN_SM90);
        float *lr = run(ref);
        size_t n = (size_t)ref->hp.n_vocab * N_PROMPT;

        /* deterministic: the same again, bit for bit (the KV cache starts clean) */
        float *again = run(ref);
        assert_memory_equal(lr, again, n * sizeof(float));
        free(again);

        struct {
                enum kern_backend moe, gemm;
                enum kern_arch arch;
                double max_err;
        } ok[] = {
                {KERN_SHUFFLED, KERN_REFERENCE, KERN_SM90, 1e-4},
                {KERN_NVFP4, KERN_NVFP4, KERN_SM120, 0.25},
                {KERN_NVFP4_SWIZZLED, KERN_NVFP4_SWIZZLED, KERN_SM100, 0.25},
                {KERN_TCGEN05, KERN_TCGEN05, KERN_SM100, 0.25},
                {KERN_FP16ACC, KERN_REFERENCE, KERN_SM90, 0.25},
        };
        for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
                struct model *m = load(ok[k].moe, ok[k].gemm, ok[k].arch);
                float *l = run(m);
                double e = rel_err(l, lr, n);
                if (!(e <= ok[k].max_err))
                        fail_msg("%s/%s on %s: logits differ from fp32 by %g", kern_backend_name(ok[k].moe),
                                 kern_backend_name(ok[k].gemm), kern_arch_name(ok[k].arch), e);
                free(l);
                model_free(m);
        }
        /* the swizzled path on sm_100 reads what it wrote: the same W4A4 arithmetic as
         * tcgen05 (summed in another order); on sm_120 it reads the swizzled scales as
         * linear ones: the activations' padding, never written, holds stale NaN codes, and
         * every logit is NaN (the collapse to "!") */
        struct model *a = load(KERN_TCGEN05, KERN_TCGEN05, KERN_SM100),
                     *b = load(KERN_NVFP4_SWIZZLED, KERN_NVFP4_SWIZZLED, KERN_SM100);
        float *la = run(a), *lb = run(b);
        assert_true(rel_err(lb, la, n) < 1e-4);
        struct model *bad = load(KERN_NVFP4_SWIZZLED, KERN_NVFP4_SWIZZLED, KERN_SM120);
        float *lbad = run(bad);
        for (size_t i = 0; i < n; i++)
                if (!isnan(lbad[i]))
                        fail_msg("swizzle mismatch: logit %zu is %g, not NaN", i, lbad[i]);
        assert_true(rel_err(lb, lr, n) < 0.25);
        free(la);
        free(lb);
        free(lbad);
        model_free(a);
        model_free(b);
        model_free(bad);
        free(lr);
        model_free(ref);
}

static void test_auto(void **state) {
        struct model *m = load(KERN_AUTO, KERN_AUTO, KERN_SM120);
        assert_int_equal(m->moe, KERN_NVFP4_SWIZZLED);
        assert_int_equal(m->gemm, KERN_NVFP4);
        model_free(m);
        m = load(KERN_AUTO, KERN_AUTO, KERN_SM90);
        assert_int_equal(m->moe, KERN_REFERENCE);
        model_free(m);
}

static void test_arch_refusal(void **state) {
        struct model_opts o = {.moe = KERN_TCGEN05, .gemm = KERN_REFERENCE, .arch = KERN_SM120};
        struct model *m = NULL;
        char *err = NULL;
        assert_int_equal(model_load(path, &o, &m, &err), -ENOEXEC);
        assert_null(m);
        assert_string_equal(err, "CUDA error: no kernel image is available for execution on the device");
        free(err);
        err = NULL;
        o.moe = KERN_AUTO; /* sm_100's auto is tcgen05 too, and fine there */
        o.arch = KERN_SM100;
        assert_int_equal(model_load(path, &o, &m, &err), 0);
        assert_int_equal(m->moe, KERN_TCGEN05);
        model_free(m);
        o.gemm = KERN_SHUFFLED;
        assert_int_equal(model_load(path, &o, &m, &err), -EINVAL);
        free(err);
}

static void test_mem_budget(void **state) {
        struct model *ref = load(KERN_REFERENCE, KERN_REFERENCE, KERN_SM90);
        size_t need = ref->mem_peak;
        model_free(ref);
        /* the fp32 model fits its own size; the shuffled copy does not */
        struct model_opts o = {.moe = KERN_REFERENCE, .gemm = KERN_REFERENCE, .arch = KERN_SM90, .mem_budget = need};
        struct model *m = NULL;
        char *err = NULL;
        assert_int_equal(model_load(path, &o, &m, &err), 0);
        assert_int_equal(m->mem_used, need);
        model_free(m);
        o.moe = KERN_SHUFFLED;
        assert_int_equal(model_load(path, &o, &m, &err), -ENOMEM);
        size_t bytes = 0, budget = 0;
        if (sscanf(err, "failed to allocate %zu bytes for shuffled expert weights: out of memory (budget %zu)", &bytes,
                   &budget) != 2)
                fail_msg("unexpected message '%s'", err);
        assert_int_equal(budget, need);
        assert_int_equal(bytes, (size_t)2 * 4 * 3 * 128 * 64 * 4); /* layers x experts x 3 matrices, fp32 */
        free(err);
        err = NULL;
        /* with room for both copies it loads, and ends at the fp32 size (originals freed) */
        o.mem_budget = need + bytes;
        assert_int_equal(model_load(path, &o, &m, &err), 0);
        assert_int_equal(m->mem_used, need);
        assert_int_equal(m->mem_peak, need + bytes);
        model_free(m);
        /* NVFP4 needs far less */
        o.moe = KERN_NVFP4;
        o.mem_budget = need / 2;
        assert_int_equal(model_load(path, &o, &m, &err), 0);
        assert_true(m->mem_used < need / 2);
        model_free(m);
}

static void test_context_limit(void **state) {
        struct model *m = load(KERN_REFERENCE, KERN_REFERENCE, KERN_SM90);
        struct model_ctx *c;
        assert_int_equal(model_ctx_new(m, &c), 0);
        for (int i = 0; i < m->hp.n_ctx; i++)
                assert_int_equal(model_eval(c, 300, NULL), 0);
        assert_int_equal(model_eval(c, 300, NULL), -E2BIG);
        model_ctx_reset(c);
        assert_int_equal(model_eval(c, 9999, NULL), -EINVAL);
        assert_int_equal(model_eval(c, 300, NULL), 0);
        model_ctx_free(c);
        model_free(m);
}

static void test_sampling(void **state) {
        float l[5] = {1, 3, 2, 3, 0};
        assert_int_equal(sample_argmax(l, 5), 1); /* first of equal maxima */
        l[2] = NAN;
        assert_int_equal(sample_argmax(l, 5), 2); /* NaN wins, as torch.argmax */
        float all_nan[4] = {NAN, NAN, NAN, NAN};
        assert_int_equal(sample_argmax(all_nan, 4), 0);
        float lp[5];
        float l2[5] = {0, 0, 0, 0, 0};
        sample_logprobs(l2, 5, lp);
        assert_true(fabsf(lp[3] - logf(0.2f)) < 1e-6f);
        sample_logprobs(all_nan, 4, lp);
        assert_true(isnan(lp[0]));
        int top[3];
        float l3[5] = {0.1f, 5, -1, 2, 4};
        sample_top(l3, 5, 3, top);
        assert_int_equal(top[0], 1);
        assert_int_equal(top[1], 4);
        assert_int_equal(top[2], 3);
        /* seeded sampling: same seed, same draws; top_p small keeps the best only */
        struct sample_params p = {.temperature = 1.0f, .top_p = 1.0f};
        struct sample_rng r1, r2;
        float sf[5];
        int si[5];
        int seq1[50], seq2[50], hist[5] = {0};
        sample_rng_seed(&r1, 7);
        sample_rng_seed(&r2, 7);
        float l4[5] = {1, 1.5f, 0.5f, 1.2f, 0};
        for (int i = 0; i < 50; i++) {
                seq1[i] = sample_pick(l4, 5, &p, &r1, sf, si);
                seq2[i] = sample_pick(l4, 5, &p, &r2, sf, si);
                hist[seq1[i]]++;
        }
        assert_memory_equal(seq1, seq2, sizeof(seq1));
        int distinct = 0;
        for (int i = 0; i < 5; i++)
                distinct += hist[i] > 0;
        assert_true(distinct >= 3);
        p.top_p = 0.05f;
        for (int i = 0; i < 20; i++)
                assert_int_equal(sample_pick(l4, 5, &p, &r1, sf, si), 1);
        p.temperature = 0;
        assert_int_equal(sample_pick(l4, 5, &p, &r1, sf, si), 1);
}

/* Generates greedily from a completion prompt; returns the text (caller frees). */
static char *generate(struct model *m, struct gen_params *gp, const char **ret_finish, int *ret_steps) {
        struct tok_ids ids;
        struct gen *g;
        struct gen_step st;
        size_t len = 0;
        char *text = calloc(1, 4096);
        tok_ids_init(&ids, 0);
        tok_ids_push(&ids, m->vocab.bos);
        tok_encode(&m->vocab, "abc", 3, false, &ids);
        assert_int_equal(gen_new(m, &ids, gp, &g), 0);
        int steps = 0;
        do {
                assert_int_equal(gen_step(g, &st), 0);
                if (st.content_len)
                        memcpy(text + len, st.content, st.content_len);
                len += st.content_len;
                steps++;
        } while (!st.done);
        *ret_finish = st.finish_reason;
        *ret_steps = steps;
        gen_free(g);
        tok_ids_release(&ids);
        return text;
}

static void test_gen_stop_and_length(void **state) {
        struct model *m = load(KERN_REFERENCE, KERN_REFERENCE, KERN_SM90);
        struct gen_params gp = {.max_tokens = 30, .ignore_eos = true};
        const char *finish;
        int steps;
        char *full = generate(m, &gp, &finish, &steps);
        assert_string_equal(finish, "length");
        assert_int_equal(steps, 30);
        size_t n = strlen(full);
        if (n < 12)
                skip(); /* a synthetic model that prints mostly control tokens: nothing to cut */
        /* a stop string from the middle of that text cuts it right there */
        char stop[4] = {0};
        memcpy(stop, full + n / 2, 3);
        char *first = strstr(full, stop);
        gp.stop[0] = stop;
        char *cut = generate(m, &gp, &finish, &steps);
        assert_string_equal(finish, "stop");
        assert_int_equal(strlen(cut), (size_t)(first - full));
        assert_memory_equal(cut, full, strlen(cut));
        free(cut);
        free(full);
        /* the context bounds the generation */
        gp.stop[0] = NULL;
        gp.max_tokens = 0;
        full = generate(m, &gp, &finish, &steps);
        assert_string_equal(finish, "length");
        assert_int_equal(steps, m->hp.n_ctx - 4);
        free(full);
        model_free(m);
}

/* The forward pass against PyTorch: testbed/train/model.py loaded with the synthetic model
 * (synth_default(), seed 1) through testbed/train/export.py's load_gguf, run on the chat
 * prompt for "What is 17 * 19?" with thinking off. Regenerate with
 *   gauntlet-testbed --write-random-model /tmp/s.gguf and load_gguf + model(ids) in Python. */
static void test_matches_pytorch(void **state) {
        static const int want_ids[] = {1, 3, 318, 335, 328, 347, 358, 336, 346, 358, 280,
                                       286, 358, 273, 358, 280, 288, 294, 5, 4, 6, 7};
        static const int want_argmax[] = {139, 149, 236, 140, 51, 65, 176, 272, 51, 176, 67,
                                          142, 176, 332, 176, 67, 138, 142, 305, 247, 25, 320};
        static const struct {
                int pos, id;
                float logit;
        } want[] = {{21, 0, 0.516392f},  {21, 1, -0.838195f}, {21, 2, -0.465987f},  {21, 5, 0.5027f},
                    {21, 100, 0.959784f}, {21, 300, -0.867367f}, {21, 358, 0.120256f}, {10, 0, -1.204376f},
                    {10, 7, 0.256022f},   {10, 200, -0.563085f}, {10, 320, -0.419641f}};
        char p2[] = "/tmp/test-testbed-torch-XXXXXX";
        int fd = mkstemp(p2);
        assert_true(fd >= 0);
        close(fd);
        struct synth_cfg sc = synth_default();
        assert_int_equal(synth_model_write(&sc, p2), 0);
        struct model_opts o = {.moe = KERN_REFERENCE, .gemm = KERN_REFERENCE, .arch = KERN_SM90};
        struct model *m = NULL;
        char *err = NULL;
        assert_int_equal(model_load(p2, &o, &m, &err), 0);
        unlink(p2);
        struct tok_msg msg = {"user", "What is 17 * 19?"};
        struct tok_ids ids;
        tok_ids_init(&ids, 0);
        assert_int_equal(tok_chat_encode(&m->vocab, &msg, 1, false, &ids), 0);
        assert_int_equal(ids.n, sizeof(want_ids) / sizeof(want_ids[0]));
        assert_memory_equal(ids.v, want_ids, sizeof(want_ids));
        struct model_ctx *c;
        assert_int_equal(model_ctx_new(m, &c), 0);
        float *l = malloc(sizeof(float) * m->hp.n_vocab);
        for (size_t i = 0; i < ids.n; i++) {
                assert_int_equal(model_eval(c, ids.v[i], l), 0);
                assert_int_equal(sample_argmax(l, m->hp.n_vocab), want_argmax[i]);
                for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
                        if (want[k].pos == (int)i && fabsf(l[want[k].id] - want[k].logit) > 1e-4f)
                                fail_msg("position %zu token %d: logit %g, PyTorch %g", i, want[k].id,
                                         l[want[k].id], want[k].logit);
        }
        free(l);
        model_ctx_free(c);
        tok_ids_release(&ids);
        model_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hparams),        cmocka_unit_test(test_backends_agree),
                cmocka_unit_test(test_auto),           cmocka_unit_test(test_arch_refusal),
                cmocka_unit_test(test_mem_budget),     cmocka_unit_test(test_context_limit),
                cmocka_unit_test(test_sampling),       cmocka_unit_test(test_gen_stop_and_length),
                cmocka_unit_test(test_matches_pytorch),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
