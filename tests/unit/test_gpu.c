/* test_gpu.c -- simulated GPUs, no-NVML hosts, the memory wait, peak sampling, slot plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "proc/gpu.h"
#include "io/loop.h"

static char dir[] = "/tmp/test_gpu.XXXXXX";
static char fake_path[64];

/* Writes the simulated host: GPU i uses used[i] MiB at util[i] percent; GPU 0 has one
 * process (this test, name from /proc) holding proc_mib. rename() makes it atomic. */
static void write_fake(size_t n, const uint64_t *used, const int *util, int proc_mib) {
        char tmp[80];
        snprintf(tmp, sizeof(tmp), "%s.tmp", fake_path);
        FILE *f = fopen(tmp, "we");
        assert_non_null(f);
        fprintf(f, "{\"driver\": \"570.124.06\", \"cuda\": \"12.8\", \"gpus\": [");
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s{\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-%04zu\", \"arch\": \"sm_90\", "
                           "\"memory_total_mib\": 143771, \"memory_used_mib\": %llu, \"utilization\": %d, "
                           "\"processes\": [",
                        i ? ", " : "", i, (unsigned long long)used[i], util[i]);
                if (i == 0 && proc_mib >= 0)
                        fprintf(f, "{\"pid\": %d, \"used_mib\": %d}, {\"pid\": 1, \"used_mib\": 7, \"name\": "
                                   "\"a-very-long-process-name\"}",
                                (int)getpid(), proc_mib);
                fprintf(f, "]}");
        }
        fprintf(f, "]}\n");
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, fake_path), 0);
}

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        snprintf(fake_path, sizeof(fake_path), "%s/gpus.json", dir);
        setenv("GAUNTLET_FAKE_GPUS", fake_path, 1);
        return 0;
}

static int teardown(void **state) {
        unlink(fake_path);
        rmdir(dir);
        return 0;
}

static void test_fake_open_and_requery(void **state) {
        uint64_t used[2] = {1000, 2000};
        int util[2] = {5, 0};
        write_fake(2, used, util, 900);
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(gpu_open(&g), 0);
        assert_int_equal(g->source, GPU_SOURCE_FAKE);
        assert_null(g->reason);
        assert_string_equal(g->driver, "570.124.06");
        assert_string_equal(g->cuda, "12.8");
        assert_int_equal(g->n_gpus, 2);
        assert_string_equal(g->gpus[1].name, "NVIDIA H200");
        assert_string_equal(g->gpus[1].uuid, "GPU-0001");
        assert_string_equal(g->gpus[0].arch, "sm_90");
        assert_int_equal(g->gpus[1].index, 1);
        assert_int_equal(g->gpus[0].memory_total_mib, 143771);
        assert_int_equal(g->gpus[1].memory_used_mib, 2000);
        assert_int_equal(g->gpus[0].utilization, 5);
        assert_int_equal(g->gpus[0].n_processes, 2);
        assert_int_equal(g->gpus[0].processes[0].pid, getpid());
        assert_int_equal(g->gpus[0].processes[0].used_mib, 900);
        /* no name in the file: /proc/PID/comm, which the kernel cuts at 15 bytes */
        assert_string_equal(g->gpus[0].processes[0].name, "test_gpu");
        assert_string_equal(g->gpus[0].processes[1].name, "a-very-long-pro");
        assert_int_equal(g->gpus[1].n_processes, 0);

        /* Every query reads the file again; a sample leaves the process list alone. */
        used[1] = 3000;
        util[1] = 77;
        write_fake(2, used, util, -1);
        assert_int_equal(gpu_sample(g), 0);
        assert_int_equal(g->gpus[1].memory_used_mib, 3000);
        assert_int_equal(g->gpus[1].utilization, 77);
        assert_int_equal(g->gpus[0].n_processes, 2);
        assert_int_equal(gpu_query(g), 0);
        assert_int_equal(g->gpus[0].n_processes, 0);

        /* A broken file later: an error, and the last values stay. */
        FILE *f = fopen(fake_path, "we");
        fputs("{\"gpus\": [", f);
        fclose(f);
        assert_int_equal(gpu_sample(g), -EINVAL);
        assert_int_equal(g->gpus[1].memory_used_mib, 3000);
        /* fewer GPUs than at open: an error too */
        write_fake(1, used, util, -1);
        assert_int_equal(gpu_query(g), -EINVAL);
}

static void test_no_gpus(void **state) {
        /* No NVML where it is looked for: not an error, a state with a reason. */
        unsetenv("GAUNTLET_FAKE_GPUS");
        setenv("GAUNTLET_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(gpu_open(&g), 0);
        assert_int_equal(g->source, GPU_SOURCE_NONE);
        assert_int_equal(g->n_gpus, 0);
        assert_non_null(g->reason);
        assert_true(startswith(g->reason, "NVML: "));
        assert_non_null(strstr(g->reason, "/nonexistent/libnvidia-ml.so.1"));
        assert_int_equal(gpu_query(g), 0);
        assert_int_equal(gpu_sample(g), 0);
        unsetenv("GAUNTLET_NVML_LIBRARY");

        /* A malformed simulated host says where it is wrong. */
        setenv("GAUNTLET_FAKE_GPUS", fake_path, 1);
        FILE *f = fopen(fake_path, "we");
        fputs("{\n\"gpus\": [}\n", f);
        fclose(f);
        _cleanup_gpu_ struct gpu *g2 = NULL;
        assert_int_equal(gpu_open(&g2), 0);
        assert_int_equal(g2->n_gpus, 0);
        assert_int_equal(g2->source, GPU_SOURCE_NONE);
        assert_non_null(strstr(g2->reason, "GAUNTLET_FAKE_GPUS"));
        assert_non_null(strstr(g2->reason, "line 2"));

        /* An empty list with a reason simulates a driver that says why. */
        f = fopen(fake_path, "we");
        fputs("{\"gpus\": [], \"reason\": \"NVML: Driver Not Loaded\"}", f);
        fclose(f);
        _cleanup_gpu_ struct gpu *g3 = NULL;
        assert_int_equal(gpu_open(&g3), 0);
        assert_int_equal(g3->n_gpus, 0);
        assert_non_null(strstr(g3->reason, "NVML: Driver Not Loaded"));

        /* A GPU without memory figures is malformed too. */
        f = fopen(fake_path, "we");
        fputs("{\"gpus\": [{\"name\": \"x\"}]}", f);
        fclose(f);
        _cleanup_gpu_ struct gpu *g4 = NULL;
        assert_int_equal(gpu_open(&g4), 0);
        assert_int_equal(g4->n_gpus, 0);
        assert_non_null(strstr(g4->reason, "memory_total_mib"));
}

/* A one-shot timer on the loop that rewrites the simulated host when it fires. */
struct rewrite {
        int fd;
        size_t n;
        uint64_t used[2];
        int util[2];
        int fired;
        usec_t fired_at;
};

static void on_rewrite(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct rewrite *rw = userdata;
        uint64_t x;
        assert_int_equal(read(fd, &x, sizeof(x)), (ssize_t)sizeof(x));
        write_fake(rw->n, rw->used, rw->util, -1);
        rw->fired++;
        rw->fired_at = now_usec();
        loop_unwatch_fd(l, fd);
}

static void arm_rewrite(struct loop *l, struct rewrite *rw, usec_t after) {
        rw->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        assert_true(rw->fd >= 0);
        struct itimerspec its = {.it_value = {.tv_sec = (time_t)(after / USEC_PER_SEC),
                                              .tv_nsec = (long)(after % USEC_PER_SEC) * 1000}};
        assert_int_equal(timerfd_settime(rw->fd, 0, &its, NULL), 0);
        assert_int_equal(loop_watch_fd(l, rw->fd, EPOLLIN, on_rewrite, rw), 0);
}

static void test_wait_settles(void **state) {
        uint64_t used[2] = {5000, 3000};
        int util[2] = {90, 0};
        write_fake(2, used, util, 4000);
        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(loop_new(&l), 0);
        assert_int_equal(gpu_open(&g), 0);
        const uint64_t baseline[2] = {1000, 3000};

        /* Memory drops 300 ms from now, to within the tolerance of the baseline. */
        struct rewrite rw = {.n = 2, .used = {1050, 3000}, .util = {0, 0}};
        arm_rewrite(l, &rw, 300 * USEC_PER_MSEC);
        usec_t t0 = now_usec();
        struct gpu_holders h = {0};
        assert_int_equal(gpu_wait_memory_settled(l, g, baseline, 2, 64, t0 + 5 * USEC_PER_SEC, &h), 0);
        usec_t took = now_usec() - t0;
        assert_int_equal(rw.fired, 1);
        assert_int_equal(h.n_gpus, 0); /* untouched */
        /* Seen at the next sample after the drop: within one interval (plus slack). */
        assert_true(took >= 300 * USEC_PER_MSEC);
        assert_true(now_usec() - rw.fired_at <= GPU_WAIT_INTERVAL + 50 * USEC_PER_MSEC);
        print_message("settled %llu ms after start, %llu ms after the drop\n",
                      (unsigned long long)(took / 1000), (unsigned long long)((now_usec() - rw.fired_at) / 1000));
        close(rw.fd);

        /* Already settled: at once. n == 0: at once. n too big: refused. */
        t0 = now_usec();
        assert_int_equal(gpu_wait_memory_settled(l, g, baseline, 2, 64, t0 + 5 * USEC_PER_SEC, NULL), 0);
        assert_true(now_usec() - t0 < 50 * USEC_PER_MSEC);
        assert_int_equal(gpu_wait_memory_settled(l, g, NULL, 0, 0, t0, NULL), 0);
        uint64_t three[3] = {0, 0, 0};
        assert_int_equal(gpu_wait_memory_settled(l, g, three, 3, 0, t0, NULL), -EINVAL);
}

static void test_wait_deadline_names_holders(void **state) {
        uint64_t used[2] = {5000, 3000};
        int util[2] = {0, 0};
        write_fake(2, used, util, 4000);
        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(loop_new(&l), 0);
        assert_int_equal(gpu_open(&g), 0);
        const uint64_t baseline[2] = {1000, 3000};
        usec_t t0 = now_usec();
        struct gpu_holders h = {0};
        assert_int_equal(gpu_wait_memory_settled(l, g, baseline, 2, 64, t0 + 300 * USEC_PER_MSEC, &h), -ETIME);
        usec_t took = now_usec() - t0;
        assert_true(took >= 300 * USEC_PER_MSEC);
        assert_true(took < 600 * USEC_PER_MSEC);
        /* Only GPU 0 is unsettled; both its processes are named. */
        assert_int_equal(h.n_gpus, 1);
        assert_int_equal(h.gpus[0], 0);
        assert_int_equal(h.used_mib[0], 5000);
        assert_int_equal(h.baseline_mib[0], 1000);
        assert_int_equal(h.n_holders, 2);
        assert_int_equal(h.holders[0].gpu, 0);
        assert_int_equal(h.holders[0].process.pid, getpid());
        assert_int_equal(h.holders[0].process.used_mib, 4000);
        assert_string_equal(h.holders[0].process.name, "test_gpu");
        gpu_holders_release(&h);
        assert_null(h.holders);
}

static void test_sampler_peaks(void **state) {
        uint64_t used[2] = {1000, 500};
        int util[2] = {0, 0};
        write_fake(2, used, util, -1);
        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(loop_new(&l), 0);
        assert_int_equal(gpu_open(&g), 0);
        _cleanup_gpu_sampler_ struct gpu_sampler *s = NULL;
        assert_int_equal(gpu_sampler_start(l, g, 10 * USEC_PER_MSEC, &s), 0);
        assert_int_equal(s->samples, 1); /* one at once */
        assert_int_equal(s->peak_used_mib[0], 1000);

        /* A burst: 9000 MiB at 80% from 50 ms, back to 2000 MiB from 150 ms. */
        struct rewrite up = {.n = 2, .used = {9000, 700}, .util = {80, 10}};
        struct rewrite down = {.n = 2, .used = {2000, 600}, .util = {20, 0}};
        arm_rewrite(l, &up, 50 * USEC_PER_MSEC);
        arm_rewrite(l, &down, 150 * USEC_PER_MSEC);
        usec_t end = now_usec() + 250 * USEC_PER_MSEC;
        while (loop_iterate(l, end) != -ETIME)
                ;
        assert_int_equal(up.fired + down.fired, 2);
        assert_true(s->samples >= 10);
        assert_int_equal(s->peak_used_mib[0], 9000);
        assert_int_equal(s->peak_used_mib[1], 700);
        assert_int_equal(s->max_utilization[0], 80);
        assert_int_equal(s->max_utilization[1], 10);
        assert_int_equal(s->peak_sum_mib, 9700);
        assert_int_equal(s->failures, 0);
        print_message("%llu samples in 250 ms at a 10 ms interval\n", (unsigned long long)s->samples);

        /* Reset: the peaks start again from what is used now. */
        gpu_sampler_reset(s);
        assert_int_equal(s->samples, 1);
        assert_int_equal(s->peak_used_mib[0], 2000);
        assert_int_equal(s->max_utilization[0], 20);
        assert_int_equal(s->peak_sum_mib, 2600);
        close(up.fd);
        close(down.fd);
}

static void test_sampler_without_gpus(void **state) {
        unsetenv("GAUNTLET_FAKE_GPUS");
        setenv("GAUNTLET_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_gpu_ struct gpu *g = NULL;
        assert_int_equal(loop_new(&l), 0);
        assert_int_equal(gpu_open(&g), 0);
        _cleanup_gpu_sampler_ struct gpu_sampler *s = NULL;
        assert_int_equal(gpu_sampler_start(l, g, 10 * USEC_PER_MSEC, &s), 0);
        assert_int_equal(s->n, 0);
        assert_int_equal(s->timer_fd, -1);
        /* nothing armed: the loop has nothing to do */
        assert_int_equal(loop_iterate(l, now_usec() + 30 * USEC_PER_MSEC), -ETIME);
        assert_int_equal(gpu_wait_memory_settled(l, g, NULL, 0, 0, now_usec(), NULL), 0);
        unsetenv("GAUNTLET_NVML_LIBRARY");
        setenv("GAUNTLET_FAKE_GPUS", fake_path, 1);
}

/* Every plan: slots disjoint, consecutive, complete up to what divides, strings right. */
static void test_slots_plan(void **state) {
        const size_t hosts[] = {1, 2, 4, 8, 3};
        const size_t per[] = {1, 2, 4, 8};
        for (size_t h = 0; h < ELEMENTSOF(hosts); h++)
                for (size_t p = 0; p < ELEMENTSOF(per); p++) {
                        size_t n_gpus = hosts[h], g = per[p];
                        struct gpu_slot *slots = NULL;
                        size_t n = 0;
                        int r = gpu_slots_plan(n_gpus, g, 0, NULL, &slots, &n);
                        if (g > n_gpus) {
                                assert_int_equal(r, -ENODEV);
                                assert_null(slots);
                                continue;
                        }
                        assert_int_equal(r, 0);
                        assert_int_equal(n, n_gpus / g);
                        bool used[8] = {false};
                        for (size_t k = 0; k < n; k++) {
                                assert_int_equal(slots[k].n, g);
                                char want[64] = "";
                                for (size_t j = 0; j < g; j++) {
                                        unsigned idx = slots[k].gpus[j];
                                        assert_int_equal(idx, k * g + j);
                                        assert_false(used[idx]);
                                        used[idx] = true;
                                        char part[8];
                                        snprintf(part, sizeof(part), "%s%u", j ? "," : "", idx);
                                        strcat(want, part);
                                }
                                assert_string_equal(slots[k].visible, want);
                        }
                        size_t busy = 0;
                        for (size_t i = 0; i < 8; i++)
                                busy += used[i];
                        assert_int_equal(busy, n * g);
                        gpu_slots_free(slots, n);
                }

        /* 3 GPUs, 2 per cell: one slot, GPU 2 idle. 8 GPUs, 2 per cell: "6,7" last. */
        struct gpu_slot *s = NULL;
        size_t n = 0;
        assert_int_equal(gpu_slots_plan(3, 2, 0, NULL, &s, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(s[0].visible, "0,1");
        gpu_slots_free(s, n);
        assert_int_equal(gpu_slots_plan(8, 2, 0, NULL, &s, &n), 0);
        assert_int_equal(n, 4);
        assert_string_equal(s[3].visible, "6,7");
        gpu_slots_free(s, n);
        /* a cap on slots */
        assert_int_equal(gpu_slots_plan(8, 1, 3, NULL, &s, &n), 0);
        assert_int_equal(n, 3);
        assert_string_equal(s[2].visible, "2");
        gpu_slots_free(s, n);
        /* UUIDs instead of indices */
        const char *const uuids[] = {"GPU-a", "GPU-b", "GPU-c", "GPU-d"};
        assert_int_equal(gpu_slots_plan(4, 2, 0, uuids, &s, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(s[0].visible, "GPU-a,GPU-b");
        assert_string_equal(s[1].visible, "GPU-c,GPU-d");
        gpu_slots_free(s, n);
        const char *const bad[] = {"GPU-a", ""};
        assert_int_equal(gpu_slots_plan(2, 1, 0, bad, &s, &n), -EINVAL);
        /* no GPUs: one slot that restricts nothing; zero per cell: refused */
        assert_int_equal(gpu_slots_plan(0, 1, 0, NULL, &s, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(s[0].n, 0);
        assert_null(s[0].visible);
        gpu_slots_free(s, n);
        assert_int_equal(gpu_slots_plan(0, 8, 0, NULL, &s, &n), 0);
        gpu_slots_free(s, n);
        assert_int_equal(gpu_slots_plan(4, 0, 0, NULL, &s, &n), -EINVAL);
}

static void test_format_arch(void **state) {
        char b[16];
        assert_string_equal(gpu_format_arch(9, 0, b), "sm_90");
        assert_string_equal(gpu_format_arch(12, 0, b), "sm_120");
        assert_string_equal(gpu_format_arch(10, 3, b), "sm_103");
        assert_string_equal(gpu_format_arch(-1, 0, b), "");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fake_open_and_requery),
                cmocka_unit_test(test_no_gpus),
                cmocka_unit_test(test_wait_settles),
                cmocka_unit_test(test_wait_deadline_names_holders),
                cmocka_unit_test(test_sampler_peaks),
                cmocka_unit_test(test_sampler_without_gpus),
                cmocka_unit_test(test_slots_plan),
                cmocka_unit_test(test_format_arch),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
