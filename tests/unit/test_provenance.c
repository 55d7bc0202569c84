/* test_provenance.c -- the model's hash (a GGUF's header and metadata, a folder's config and
 * index), the version commands in a cell's environment, and the changes between two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/util.h"
#include "proc/provenance.h"
#include "text/buf.h"

#include "../../testbed/gguf_writer.h"

static char dir[64];

static int setup(void **state) {
        (void)state;
        strcpy(dir, "/tmp/gauntlet-provenance-XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        (void)state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static char *path_of(const char *name) {
        char *p = strdup_printf("%s/%s", dir, name);
        assert_non_null(p);
        return p;
}

static void write_bytes(const char *path, const void *p, size_t n) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(p, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
}

/* A GGUF with one metadata string and one f32 tensor of 8 values all `fill`. */
static void write_gguf(const char *path, const char *name, float fill) {
        struct gguf_writer w;
        struct buf out;
        float data[8];
        for (size_t i = 0; i < ELEMENTSOF(data); i++)
                data[i] = fill;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "general.architecture", "llama");
        gguf_writer_kv_str(&w, "general.name", name);
        gguf_writer_tensor(&w, "t", 1, (const uint64_t[]){8}, GGML_TYPE_F32, data, sizeof(data));
        assert_int_equal(gguf_writer_finish(&w, &out), 0);
        gguf_writer_release(&w);
        write_bytes(path, out.data, out.len);
        buf_release(&out);
}

static const char *hash_of(json_t *m) {
        const char *h = json_string_value(json_object_get(m, "hash"));
        assert_non_null(h);
        return h;
}

static void test_gguf_hash(void **state) {
        (void)state;
        _cleanup_free_ char *a = path_of("a.gguf"), *b = path_of("b.gguf"), *c = path_of("c.gguf");
        write_gguf(a, "one", 1.0f);
        write_gguf(b, "one", 2.0f); /* the tensors differ, the header and metadata do not */
        write_gguf(c, "two", 1.0f); /* the metadata differs */
        _cleanup_json_ json_t *ma = provenance_model(a), *mb = provenance_model(b), *mc = provenance_model(c);
        assert_string_equal(json_string_value(json_object_get(ma, "kind")), "gguf");
        assert_true(json_is_null(json_object_get(ma, "reason")));
        assert_true(json_integer_value(json_object_get(ma, "size")) > 0);
        assert_non_null(json_string_value(json_object_get(ma, "mtime")));
        assert_true(startswith(hash_of(ma), "fnv1a64:"));
        /* documented (docs/provenance.md): the tensor data is not hashed, only the size */
        assert_string_equal(hash_of(ma), hash_of(mb));
        assert_string_not_equal(hash_of(ma), hash_of(mc));
        /* the same file read again: the same hash */
        _cleanup_json_ json_t *again = provenance_model(a);
        assert_string_equal(hash_of(ma), hash_of(again));
}

static void test_folder_hash(void **state) {
        (void)state;
        _cleanup_free_ char *m = path_of("hf"), *cfg = path_of("hf/config.json"),
                            *idx = path_of("hf/model.safetensors.index.json"), *w = path_of("hf/model-1.safetensors");
        assert_int_equal(mkdir(m, 0755), 0);
        _cleanup_json_ json_t *empty = provenance_model(m);
        assert_true(json_is_null(json_object_get(empty, "hash")));
        assert_non_null(strstr(json_string_value(json_object_get(empty, "reason")), "no config.json"));
        write_bytes(cfg, "{\"a\":1}", 7);
        write_bytes(idx, "{\"weight_map\":{}}", 17);
        write_bytes(w, "AAAA", 4);
        _cleanup_json_ json_t *one = provenance_model(m);
        assert_string_equal(json_string_value(json_object_get(one, "kind")), "folder");
        assert_int_equal(json_integer_value(json_object_get(one, "size")), 7 + 17 + 4);
        write_bytes(w, "BBBB", 4); /* the weights: not hashed */
        _cleanup_json_ json_t *two = provenance_model(m);
        assert_string_equal(hash_of(one), hash_of(two));
        write_bytes(cfg, "{\"a\":2}", 7); /* the config: hashed */
        _cleanup_json_ json_t *three = provenance_model(m);
        assert_string_not_equal(hash_of(one), hash_of(three));
}

static void test_model_unknown(void **state) {
        (void)state;
        _cleanup_json_ json_t *hub = provenance_model("Qwen/Qwen3-8B-no-such-folder"), *none = provenance_model(NULL);
        assert_true(json_is_null(json_object_get(hub, "hash")));
        assert_non_null(strstr(json_string_value(json_object_get(hub, "reason")), "a hub name is not read"));
        assert_string_equal(json_string_value(json_object_get(none, "reason")), "the matrix names no model");
        /* a file that is not a GGUF: its size and first bytes */
        _cleanup_free_ char *f = path_of("plain.bin");
        write_bytes(f, "not a gguf at all", 17);
        _cleanup_json_ json_t *plain = provenance_model(f);
        assert_string_equal(json_string_value(json_object_get(plain, "kind")), "file");
        assert_true(startswith(hash_of(plain), "fnv1a64:"));
}

static void test_gather(void **state) {
        (void)state;
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *model = path_of("g.gguf");
        write_gguf(model, "g", 1.0f);
        /* the version command sees the cell's environment; {program} is the server's program */
        char *const cmd[] = {"sh", "-c", "echo \"v-$GAUNTLET_PROV_TEST\"", NULL};
        char *const env1[] = {"GAUNTLET_PROV_TEST=one", NULL}, *const env2[] = {"GAUNTLET_PROV_TEST=two", "API_KEY=x", NULL};
        char *const *envs[] = {env1, env2};
        const char *host = "{\"gpus\":[{\"name\":\"NVIDIA H200\"}],\"driver\":\"570.1\",\"cuda\":\"12.8\"}";
        struct provenance_input in = {.profile = profile_find("generic"), .version_command = cmd, .model = model,
                                      .host_json = host};
        json_t *got[2] = {0};
        usec_t t0 = now_usec();
        assert_int_equal(provenance_gather(l, &in, envs, 2, got), 0);
        assert_true(now_usec() - t0 < PROVENANCE_TIMEOUT);
        assert_string_equal(json_string_value(json_object_get(json_object_get(got[0], "engine"), "version")), "v-one");
        assert_string_equal(json_string_value(json_object_get(json_object_get(got[1], "engine"), "version")), "v-two");
        assert_string_equal(json_string_value(json_object_get(json_object_get(got[0], "gpu"), "driver")), "570.1");
        assert_string_equal(json_string_value(json_array_get(json_object_get(got[1], "env"), 1)), "API_KEY=***"); /* masked */
        assert_string_equal(hash_of(json_object_get(got[0], "model")), hash_of(json_object_get(got[1], "model")));

        /* no command, a missing program, one that hangs: unknown with a reason, never a failure */
        char *const hang[] = {"sleep", "30", NULL}, *const missing[] = {"gauntlet-no-such-program", NULL};
        struct provenance_input cases[] = {
                {.profile = profile_find("generic")},
                {.profile = profile_find("generic"), .version_command = missing},
                {.profile = profile_find("generic"), .version_command = hang},
                {.profile = profile_find("llama.cpp")}, /* {program}, and none given */
        };
        const char *why[] = {"no version command", "not found", "no answer within 2 s", "no program to ask"};
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_t *o = NULL;
                t0 = now_usec();
                assert_int_equal(provenance_gather(l, &cases[i], envs, 1, &o), 0);
                assert_true(now_usec() - t0 < PROVENANCE_TIMEOUT + USEC_PER_SEC);
                json_t *e = json_object_get(o, "engine");
                assert_true(json_is_null(json_object_get(e, "version")));
                assert_non_null(strstr(json_string_value(json_object_get(e, "reason")), why[i]));
                json_decref(o);
        }
        json_decref(got[0]);
        json_decref(got[1]);
}

static json_t *prov(const char *version, const char *hash, const char *driver, const char *torch) {
        json_t *o = json_pack("{s:{s:s, s:s?}, s:{s:s?}, s:{s:s, s:I, s:s, s:s?}, s:{s:[s], s:s?, s:s}, s:[s]}",
                              "engine", "name", "llama.cpp", "version", version, "libraries", "torch", torch, "model",
                              "path", "/m.gguf", "size", (json_int_t)100, "mtime", "2026-01-01T00:00:00Z", "hash", hash,
                              "gpu", "names", "NVIDIA H200", "driver", driver, "cuda", "12.8", "env", "A=1");
        assert_non_null(o);
        return o;
}

static void test_diff(void **state) {
        (void)state;
        _cleanup_json_ json_t *a = prov("version: 6123 (b6123)", "fnv1a64:1", "550.1", "2.7.0"),
                              *same = prov("version: 6123 (b6123)", "fnv1a64:1", "550.1", "2.7.0"),
                              *b = prov("version: 6200 (b6200)", "fnv1a64:2", "560.2", NULL);
        _cleanup_strv_free_ char **none = NULL, **d = NULL;
        assert_int_equal(provenance_diff(a, same, &none), 0);
        assert_non_null(none);
        assert_null(none[0]);
        assert_int_equal(provenance_diff(a, b, &d), 0);
        assert_int_equal(strv_length(d), 4);
        assert_string_equal(d[0], "engine version: version: 6123 (b6123) -> version: 6200 (b6200)");
        assert_string_equal(d[1], "torch: 2.7.0 -> unknown");
        assert_string_equal(d[2], "model hash changed (fnv1a64:1 -> fnv1a64:2)");
        assert_string_equal(d[3], "driver: 550.1 -> 560.2");

        /* the environment: what went, what came */
        json_object_set_new(b, "env", json_pack("[s, s]", "A=2", "B=1"));
        json_object_set_new(json_object_get(b, "model"), "mtime", json_string("2026-02-01T00:00:00Z"));
        _cleanup_strv_free_ char **e = NULL;
        assert_int_equal(provenance_diff(a, b, &e), 0);
        assert_string_equal(e[3], "model mtime: 2026-01-01T00:00:00Z -> 2026-02-01T00:00:00Z");
        assert_string_equal(e[5], "environment: -A=1 +A=2 +B=1");
        /* an older record without a field: a change from unknown */
        _cleanup_json_ json_t *bare = json_object();
        _cleanup_strv_free_ char **f = NULL;
        assert_int_equal(provenance_diff(bare, a, &f), 0);
        assert_string_equal(f[0], "engine: unknown -> llama.cpp");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gguf_hash),  cmocka_unit_test(test_folder_hash), cmocka_unit_test(test_model_unknown),
                cmocka_unit_test(test_gather),     cmocka_unit_test(test_diff),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
