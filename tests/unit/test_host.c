/* test_host.c -- version commands as events, the host fingerprint (text_clean: test_text.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "proc/cpustat.h"
#include "proc/host.h"

#define ARGV(...) ((char *const[]){__VA_ARGS__, NULL})

/* The fingerprint with GPUs from gpu_open, as the CLI gets it. */
static int fingerprint(struct loop *l, const struct profile *p, json_t **ret) {
        _cleanup_gpu_ struct gpu *g = NULL;
        int r = gpu_open(&g);
        return r < 0 ? r : host_fingerprint_gpu(l, p, g, ret);
}

/* /proc/stat's "cpu" line: steal is the eighth field; the total is all of the first eight
 * (guest time is inside user's); older kernels' shorter lines, and lines that are not. */
static void test_cpustat(void **state) {
        (void)state;
        struct cpustat a, b;
        assert_int_equal(cpustat_parse("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\n", &a), 0);
        assert_true(a.known);
        assert_true(a.total == 1000 && a.steal == 40);
        assert_int_equal(cpustat_parse("intr 1\ncpu  200 0 100 1500 20 0 0 180 7 0\n", &b), 0);
        assert_true(b.total == 2000 && b.steal == 180);
        /* 140 of the 1000 jiffies between them */
        assert_true(cpustat_steal(&a, &b) > 0.1399 && cpustat_steal(&a, &b) < 0.1401);
        /* no time passed, or counters that went back: unknown */
        assert_true(isnan(cpustat_steal(&b, &a)) && isnan(cpustat_steal(&a, &a)));
        /* others: busy (user + nice + system) went 150 -> 300 jiffies of 1000, at 100 a second:
         * 1.5 s busy of 10 s; ours ran 0.5 s, others 1 s: a tenth */
        assert_true(a.busy == 150 && b.busy == 300);
        assert_true(fabs(cpustat_others(&a, &b, 0.5, 100) - 0.1) < 1e-9);
        /* idle: 800 + 10 -> 1500 + 20 of 1000: 0.71; others beyond it: none; a busy host's */
        assert_true(fabs(cpustat_idle(&a, &b) - 0.71) < 1e-9);
        assert_true(cpustat_contention(0.1, 0.71) == 0 && fabs(cpustat_contention(0.5, 0.1) - 0.4) < 1e-9);
        assert_true(cpustat_contention(0.3, NAN) == 0.3 && isnan(cpustat_contention(NAN, 0.1)));
        /* ours counted more than the host did (a rounding of the two clocks): none, not less */
        assert_true(cpustat_others(&a, &b, 2.0, 100) == 0);
        assert_true(isnan(cpustat_others(&a, &b, NAN, 100)) && isnan(cpustat_others(&b, &a, 0, 100)) &&
                    isnan(cpustat_others(&a, &b, 0, 0)));
        /* a kernel without the steal field */
        assert_int_equal(cpustat_parse("cpu 1 2 3 4\n", &a), 0);
        assert_true(a.total == 10 && a.steal == 0);
        /* not the line */
        assert_int_equal(cpustat_parse("cpu0 1 2 3 4 5 6 7 8\n", &a), -EINVAL);
        assert_false(a.known);
        assert_int_equal(cpustat_parse("cpu 1 2 x\n", &a), -EINVAL);
        assert_int_equal(cpustat_parse("cpu 1 2 3\n", &a), -EINVAL);
        assert_int_equal(cpustat_parse("cpu 18446744073709551615 1 0 0\n", &a), -EINVAL);
        assert_int_equal(cpustat_parse("", &a), -EINVAL);
        assert_true(isnan(cpustat_steal(&a, &b)));
        /* this host: a line there is (Linux), read twice, gives a fraction or unknown */
        cpustat_read(&a);
        cpustat_read(&b);
        assert_true(a.known);
        double s = cpustat_steal(&a, &b);
        assert_true(isnan(s) || (s >= 0 && s <= 1));
}

static void test_commands(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        struct host_command c[] = {
                {.argv = ARGV("echo", "", "  1.2.3  ")},
                {.argv = ARGV("gauntlet-no-such-command-here", "--version")},
                {.argv = ARGV("sh", "-c", "echo 9.9; exit 3")},
                /* llama-server's way: nothing on stdout, the version among stderr lines */
                {.argv = ARGV("sh", "-c", "echo ggml_cuda_init: found 1 device >&2; echo 'version: 4589 (1a2b3c)' >&2")},
                /* much more output than the cap: drained, the first line kept */
                {.argv = ARGV("seq", "200000")},
                {.argv = ARGV("sh", "-c", "printf '\\033[2Jx\\001y\\n'")},
                {.argv = NULL},
        };
        usec_t t0 = now_usec();
        assert_int_equal(host_run_commands(l, c, ELEMENTSOF(c), 5 * USEC_PER_SEC), 0);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_string_equal(c[0].line, "1.2.3");
        assert_int_equal(c[0].exit_status, 0);
        assert_null(c[1].line);
        assert_true(c[1].not_found);
        assert_null(c[2].line);
        assert_int_equal(c[2].exit_status, 3);
        assert_string_equal(c[3].line, "version: 4589 (1a2b3c)");
        assert_string_equal(c[4].line, "1");
        assert_string_equal(c[5].line, "?[2Jx?y");
        assert_null(c[6].line);
        assert_true(c[6].not_found);
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                assert_false(c[i].timed_out);
        host_commands_release(c, ELEMENTSOF(c));
        assert_null(c[0].line);
}

static void test_commands_timeout(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        char pidfile[] = "/tmp/test_host.XXXXXX";
        int fd = mkstemp(pidfile);
        assert_true(fd >= 0);
        close(fd);
        char script[256];
        /* exits 0 at once but leaves a child holding stdout: the output is kept, the child
         * (same process group) killed at the deadline */
        snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; echo 2.0", pidfile);
        struct host_command c[] = {
                {.argv = ARGV("sleep", "30")},
                {.argv = ARGV("sh", "-c", script)},
                {.argv = ARGV("sh", "-c", "sleep 0.1; echo fast")},
                {.argv = ARGV("sh", "-c", "sleep 0.1; echo fast2")},
        };
        usec_t t0 = now_usec();
        assert_int_equal(host_run_commands(l, c, ELEMENTSOF(c), 400 * USEC_PER_MSEC), 0);
        usec_t took = now_usec() - t0;
        /* everything at once: the deadline, not the sum of the commands */
        assert_true(took >= 400 * USEC_PER_MSEC);
        assert_true(took < 1500 * USEC_PER_MSEC);
        assert_true(c[0].timed_out);
        assert_null(c[0].line);
        assert_int_equal(c[0].exit_status, -1);
        assert_false(c[1].timed_out);
        assert_string_equal(c[1].line, "2.0");
        assert_string_equal(c[2].line, "fast");
        assert_string_equal(c[3].line, "fast2");
        host_commands_release(c, ELEMENTSOF(c));

        /* the straggler is gone (a zombie at most: this test is its parent's parent only
         * until init reaps it) */
        _cleanup_free_ char *text = NULL;
        size_t len;
        assert_int_equal(read_file_capped(pidfile, 64, &text, &len), 0);
        pid_t straggler = (pid_t)atoi(text);
        assert_true(straggler > 0);
        bool gone = false;
        for (int i = 0; i < 100 && !gone; i++) {
                char path[64], st[512];
                snprintf(path, sizeof(path), "/proc/%d/stat", (int)straggler);
                FILE *f = fopen(path, "re");
                if (!f) {
                        gone = true;
                        break;
                }
                size_t k = fread(st, 1, sizeof(st) - 1, f);
                fclose(f);
                st[k] = 0;
                char *rp = strrchr(st, ')');
                if (rp && rp[1] == ' ' && rp[2] == 'Z')
                        gone = true;
                else
                        usleep(10000); /* the kernel delivers SIGKILL asynchronously */
        }
        assert_true(gone);
        unlink(pidfile);
}

static char dir[] = "/tmp/test_host.XXXXXX";
static char fake_path[64];

static void test_fingerprint_fake_gpus(void **state) {
        assert_non_null(mkdtemp(dir));
        snprintf(fake_path, sizeof(fake_path), "%s/gpus.json", dir);
        FILE *f = fopen(fake_path, "we");
        fputs("{\"driver\": \"570.124.06\", \"cuda\": \"12.8\", \"gpus\": ["
              "{\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-1\", \"arch\": \"sm_90\", \"memory_total_mib\": 143771,"
              " \"memory_used_mib\": 512},"
              "{\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-2\", \"arch\": \"sm_90\", \"memory_total_mib\": 143771,"
              " \"memory_used_mib\": 4}]}",
              f);
        fclose(f);
        setenv("GAUNTLET_FAKE_GPUS", fake_path, 1);

        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        static const char *const version[] = {"echo", "engine 9.9.9", NULL};
        const struct profile fake = {.name = "fake-engine", .version_command = version};
        json_t *fp = NULL;
        assert_int_equal(fingerprint(l, &fake, &fp), 0);
        json_t *gpus = json_object_get(fp, "gpus");
        assert_int_equal(json_array_size(gpus), 2);
        json_t *g1 = json_array_get(gpus, 1);
        assert_int_equal(json_integer_value(json_object_get(g1, "index")), 1);
        assert_string_equal(json_string_value(json_object_get(g1, "name")), "NVIDIA H200");
        assert_string_equal(json_string_value(json_object_get(g1, "uuid")), "GPU-2");
        assert_string_equal(json_string_value(json_object_get(g1, "arch")), "sm_90");
        assert_int_equal(json_integer_value(json_object_get(g1, "memory_mib")), 143771);
        assert_int_equal(json_integer_value(json_object_get(g1, "memory_used_mib")), 4);
        assert_true(json_is_null(json_object_get(fp, "gpu_reason")));
        assert_string_equal(json_string_value(json_object_get(fp, "driver")), "570.124.06");
        assert_string_equal(json_string_value(json_object_get(fp, "cuda")), "12.8");
        assert_true(startswith(json_string_value(json_object_get(fp, "kernel")), "Linux "));
        assert_true(json_integer_value(json_object_get(json_object_get(fp, "cpu"), "cores")) >= 1);
        assert_true(json_integer_value(json_object_get(fp, "memory_mib")) > 0);
        assert_true(json_is_string(json_object_get(fp, "hostname")));
        json_t *eng = json_object_get(fp, "engines");
        assert_int_equal(json_object_size(eng), 1);
        assert_string_equal(json_string_value(json_object_get(eng, "fake-engine")), "engine 9.9.9");
        /* not a Python engine: no python entry */
        assert_null(json_object_get(fp, "python"));
        json_decref(fp);

        /* A Python engine that is not installed: null, and the python entry appears. */
        static const char *const missing[] = {"gauntlet-no-such-engine", "--version", NULL};
        const struct profile py = {.name = "vllm", .version_command = missing};
        assert_int_equal(fingerprint(l, &py, &fp), 0);
        eng = json_object_get(fp, "engines");
        assert_true(json_is_null(json_object_get(eng, "vllm")));
        json_t *pj = json_object_get(fp, "python");
        assert_non_null(pj);
        if (json_is_object(pj)) {
                assert_true(json_is_string(json_object_get(pj, "version")));
                json_t *torch = json_object_get(pj, "torch");
                assert_true(json_is_null(torch) || json_is_string(torch));
        } else
                assert_true(json_is_null(pj));
        json_decref(fp);
        unlink(fake_path);
        rmdir(dir);
}

static void test_fingerprint_no_gpus(void **state) {
        unsetenv("GAUNTLET_FAKE_GPUS");
        setenv("GAUNTLET_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        json_t *fp = NULL;
        /* all the usual engines; none installed here (PATH is emptied for this) */
        const char *path = getenv("PATH");
        _cleanup_free_ char *saved = path ? strdup(path) : NULL;
        setenv("PATH", "/nonexistent", 1);
        int r = fingerprint(l, NULL, &fp);
        if (saved)
                setenv("PATH", saved, 1);
        assert_int_equal(r, 0);
        assert_int_equal(json_array_size(json_object_get(fp, "gpus")), 0);
        assert_true(json_is_array(json_object_get(fp, "gpus")));
        assert_true(startswith(json_string_value(json_object_get(fp, "gpu_reason")), "NVML: "));
        assert_true(json_is_null(json_object_get(fp, "driver")));
        json_t *eng = json_object_get(fp, "engines");
        assert_int_equal(json_object_size(eng), 4);
        const char *const names[] = {"llama.cpp", "vllm", "sglang", "trtllm"};
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                assert_non_null(json_object_get(eng, names[i]));
                assert_true(json_is_null(json_object_get(eng, names[i])));
        }
        assert_true(json_is_null(json_object_get(fp, "python"))); /* no python3 on that PATH */
        json_decref(fp);
        unsetenv("GAUNTLET_NVML_LIBRARY");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cpustat),
                cmocka_unit_test(test_commands),
                cmocka_unit_test(test_commands_timeout),
                cmocka_unit_test(test_fingerprint_fake_gpus),
                cmocka_unit_test(test_fingerprint_no_gpus),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
