/* gpu_probe.c -- src/proc/gpu.c on a real GPU: what NVML says, and the memory wait timed.
 *
 *   gpu_probe info
 *   gpu_probe wait GIB LINGER_S HOLD_MEMORY [ARGS...]
 *
 * `info` prints every GPU (index, name, arch, memory, utilization, processes), the driver
 * and the CUDA version. `wait` takes the baseline, starts HOLD_MEMORY --port 0 --gib GIB
 * --linger LINGER_S ARGS..., waits until GPU 0 shows the memory, samples the peak for 2 s,
 * sends SIGTERM, then (1) waits with a 1 s deadline, which must fail with the holder named
 * while the program lingers, and (2) waits with a 60 s deadline, which must settle about
 * LINGER_S after the SIGTERM. Lines "key: value" on stdout; exit 0 when all of it held.
 *
 * Linked with libgauntlet it uses the loop-driven gpu_wait_memory_settled() and
 * gpu_sampler; built standalone (-DGPU_STANDALONE with src/proc/gpu.c and src/base/util.c only, for
 * hosts without gauntlet's build dependencies) it polls gpu_sample() itself: a test tool
 * may sleep, the library may not.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "proc/gpu.h"
#ifndef GPU_STANDALONE
#include "io/loop.h"
#endif

extern char **environ;

static void print_gpus(const struct gpu *g) {
        printf("gpus: %zu\n", g->n_gpus);
        if (!g->n_gpus)
                printf("reason: %s\n", g->reason ? g->reason : "?");
        printf("driver: %s\ncuda: %s\n", g->driver ? g->driver : "unknown", g->cuda ? g->cuda : "unknown");
        for (size_t i = 0; i < g->n_gpus; i++) {
                const struct gpu_info *gi = &g->gpus[i];
                printf("gpu %u: %s %s %llu MiB total, %llu MiB used, %d%% busy, %s\n", gi->index, gi->name, gi->arch,
                       (unsigned long long)gi->memory_total_mib, (unsigned long long)gi->memory_used_mib,
                       gi->utilization, gi->uuid);
                for (size_t p = 0; p < gi->n_processes; p++)
                        printf("gpu %u process: pid %d (%s) %lld MiB\n", gi->index, (int)gi->processes[p].pid,
                               gi->processes[p].name, (long long)gi->processes[p].used_mib);
        }
}

static double secs(usec_t u) {
        return (double)u / 1e6;
}

static void pause_for(usec_t u) {
        struct timespec ts = {(time_t)(u / USEC_PER_SEC), (long)(u % USEC_PER_SEC) * 1000};
        nanosleep(&ts, NULL);
}

/* Memory of GPU 0 above want, polled (the setup step: not what is being measured). */
static int wait_used_above(struct gpu *g, uint64_t want, usec_t deadline) {
        while (now_usec() < deadline) {
                if (gpu_sample(g) >= 0 && g->gpus[0].memory_used_mib >= want)
                        return 0;
                pause_for(20 * USEC_PER_MSEC);
        }
        return -ETIME;
}

#ifdef GPU_STANDALONE
/* The same contract as gpu_wait_memory_settled on GPU 0, without the loop. */
static int settle(struct gpu *g, uint64_t baseline, uint64_t tol, usec_t deadline) {
        for (;;) {
                if (gpu_sample(g) >= 0 && g->gpus[0].memory_used_mib <= baseline + tol)
                        return 0;
                if (now_usec() >= deadline)
                        break;
                pause_for(GPU_WAIT_INTERVAL);
        }
        gpu_query(g);
        for (size_t p = 0; p < g->gpus[0].n_processes; p++)
                printf("holder: gpu 0 pid %d (%s) %lld MiB\n", (int)g->gpus[0].processes[p].pid,
                       g->gpus[0].processes[p].name, (long long)g->gpus[0].processes[p].used_mib);
        return -ETIME;
}
#else
static struct loop *loop;
static int settle(struct gpu *g, uint64_t baseline, uint64_t tol, usec_t deadline) {
        struct gpu_holders h = {0};
        int r = gpu_wait_memory_settled(loop, g, &baseline, 1, tol, deadline, &h);
        for (size_t i = 0; i < h.n_holders; i++)
                printf("holder: gpu %u pid %d (%s) %lld MiB\n", h.holders[i].gpu, (int)h.holders[i].process.pid,
                       h.holders[i].process.name, (long long)h.holders[i].process.used_mib);
        for (size_t i = 0; i < h.n_gpus; i++)
                printf("unsettled: gpu %u used %llu MiB, baseline %llu MiB\n", h.gpus[i],
                       (unsigned long long)h.used_mib[i], (unsigned long long)h.baseline_mib[i]);
        gpu_holders_release(&h);
        return r;
}
#endif

static int cmd_wait(struct gpu *g, int argc, char **argv) {
        double gib = atof(argv[0]), linger = atof(argv[1]);
        const uint64_t tol = 256;
        if (g->n_gpus == 0 || gib <= 0) {
                printf("error: no GPU, or GIB <= 0\n");
                return 1;
        }
        gpu_query(g);
        uint64_t baseline = g->gpus[0].memory_used_mib;
        printf("baseline_mib: %llu\n", (unsigned long long)baseline);

        char gs[32], ls[32];
        snprintf(gs, sizeof(gs), "%g", gib);
        snprintf(ls, sizeof(ls), "%g", linger);
        char **av = calloc((size_t)argc + 16, sizeof(char *));
        int n = 0;
        av[n++] = argv[2];
        av[n++] = "--port";
        av[n++] = "0";
        av[n++] = "--gib";
        av[n++] = gs;
        av[n++] = "--linger";
        av[n++] = ls;
        for (int i = 3; i < argc; i++)
                av[n++] = argv[i];
        av[n] = NULL;
        pid_t pid;
        usec_t t0 = now_usec();
        int r = posix_spawnp(&pid, av[0], NULL, NULL, av, environ);
        free(av);
        if (r) {
                printf("error: cannot start %s: %s\n", argv[2], strerror(r));
                return 1;
        }
        uint64_t want = baseline + (uint64_t)(gib * 1024 * 0.95);
        if (wait_used_above(g, want, t0 + 120 * USEC_PER_SEC) < 0) {
                printf("error: GPU 0 never showed %llu MiB used\n", (unsigned long long)want);
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return 1;
        }
        printf("allocated_after_s: %.3f\n", secs(now_usec() - t0));
        int ok = 1;
#ifndef GPU_STANDALONE
        struct gpu_sampler *s = NULL;
        gpu_sampler_start(loop, g, 50 * USEC_PER_MSEC, &s);
        usec_t until = now_usec() + 2 * USEC_PER_SEC;
        while (loop_iterate(loop, until) != -ETIME)
                ;
        printf("sampler_samples: %llu\nsampler_peak_mib: %llu\nsampler_max_util: %d\n",
               (unsigned long long)s->samples, (unsigned long long)s->peak_used_mib[0], s->max_utilization[0]);
        ok &= s->peak_used_mib[0] >= want;
        gpu_sampler_free(s);
#else
        uint64_t peak = 0;
        for (int i = 0; i < 40; i++) {
                if (gpu_sample(g) >= 0 && g->gpus[0].memory_used_mib > peak)
                        peak = g->gpus[0].memory_used_mib;
                pause_for(50 * USEC_PER_MSEC);
        }
        printf("polled_peak_mib: %llu\n", (unsigned long long)peak);
        ok &= peak >= want;
#endif
        gpu_query(g);
        print_gpus(g);

        usec_t t_term = now_usec();
        kill(pid, SIGTERM);
        r = settle(g, baseline, tol, t_term + USEC_PER_SEC);
        printf("short_wait: %s after %.3f s\n", r == 0 ? "settled" : "deadline", secs(now_usec() - t_term));
        if (linger >= 2)
                ok &= r == -ETIME;
        r = settle(g, baseline, tol, t_term + 60 * USEC_PER_SEC);
        usec_t took = now_usec() - t_term;
        printf("long_wait: %s after %.3f s (linger %.1f s)\n", r == 0 ? "settled" : "deadline", secs(took), linger);
        ok &= r == 0 && secs(took) >= linger;
        printf("settle_after_linger_s: %.3f\n", secs(took) - linger);
        int status;
        waitpid(pid, &status, 0);
        printf("hold_memory_exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        printf("result: %s\n", ok ? "ok" : "FAILED");
        return ok ? 0 : 1;
}

int main(int argc, char **argv) {
        if (argc < 2 || (strcmp(argv[1], "info") != 0 && strcmp(argv[1], "wait") != 0) ||
            (strcmp(argv[1], "wait") == 0 && argc < 5)) {
                fprintf(stderr, "usage: gpu_probe info | gpu_probe wait GIB LINGER_S HOLD_MEMORY [ARGS...]\n");
                return 2;
        }
        struct gpu *g = NULL;
        usec_t t0 = now_usec();
        if (gpu_open(&g) < 0)
                return 1;
        printf("gpu_open_s: %.3f\n", secs(now_usec() - t0));
        t0 = now_usec();
        for (int i = 0; i < 100; i++)
                gpu_sample(g);
        printf("gpu_sample_us: %.1f\n", (double)(now_usec() - t0) / 100);
        t0 = now_usec();
        gpu_query(g);
        printf("gpu_query_us: %llu\n", (unsigned long long)(now_usec() - t0));
        int r = 0;
        if (strcmp(argv[1], "info") == 0)
                print_gpus(g);
        else {
#ifndef GPU_STANDALONE
                if (loop_new(&loop) < 0)
                        return 1;
#endif
                r = cmd_wait(g, argc - 2, argv + 2);
#ifndef GPU_STANDALONE
                loop_free(loop);
#endif
        }
        gpu_close(g);
        return r;
}
