/* gpu.h -- what the GPUs are doing: NVML through dlopen, a simulated source for tests,
 * the wait for memory to clear between cells, peak sampling, and parallel-cell slots.
 *
 * No NVML is normal, not an error: gpu_open() then gives a state with no GPUs and a
 * reason ("libnvidia-ml.so.1: cannot open shared object file ..."), and everything else
 * works on that state (a wait on no GPUs is settled at once). gauntlet has no build
 * dependency on the driver: the few NVML types and entry points it uses are declared in
 * gpu.c from NVIDIA's documented C API and looked up with dlsym.
 *
 * Sources, in order:
 *  - GAUNTLET_FAKE_GPUS=FILE: a simulated host for tests (docs/gpu.md). FILE is JSON
 *    {"driver", "cuda", "gpus": [{"name", "uuid", "arch", "memory_total_mib",
 *    "memory_used_mib", "utilization", "processes": [{"pid", "used_mib", "name"}]}]},
 *    re-read on every query and sample, so a test can change memory over time (write it
 *    with rename() so a reader never sees half a file). The number of GPUs is fixed at
 *    gpu_open(); a later read with fewer entries is an error (-EINVAL), the state kept.
 *  - GAUNTLET_NVML_LIBRARY=PATH: dlopen this file instead of "libnvidia-ml.so.1".
 *  - NVML ("libnvidia-ml.so.1").
 *
 * Threads: a struct gpu is used from one thread (the loop's).
 *
 * Built standalone (-DGPU_STANDALONE, with util.c only: no jansson, no libcurl) for
 * hosts that lack gauntlet's build dependencies (tests/gpu/run-on-h200.sh): then there
 * is no simulated source, no memory wait and no sampler, only NVML and the slot plan.
 */
#ifndef GAUNTLET_GPU_H
#define GAUNTLET_GPU_H

#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"

struct loop;

/* Interval between memory samples while waiting for memory to clear. */
#define GPU_WAIT_INTERVAL (100 * USEC_PER_MSEC)
/* Processes listed per GPU at most; more are counted in n_processes_dropped. */
#define GPU_MAX_PROCESSES 256
/* Bytes of a simulated-GPU file at most. */
#define GPU_FAKE_MAX_FILE ((size_t)1 << 20)

struct gpu_process {
        pid_t pid;
        int64_t used_mib;        /* -1 when the driver does not say (no permission, WDDM) */
        char name[16];           /* /proc/PID/comm (the kernel caps it at 15 bytes), or the
                                  * fake file's "name" cut there; "" when unknown (the pid
                                  * lives in another PID namespace, or is gone) */
};

struct gpu_info {
        unsigned index;          /* NVML's index: PCI bus order */
        char *name;              /* "NVIDIA H200"; never NULL ("" when unknown) */
        char *uuid;              /* "GPU-8f0c..."; never NULL ("" when unknown) */
        char arch[16];           /* compute capability as "sm_90"; "" when unknown */
        uint64_t memory_total_mib;
        uint64_t memory_used_mib;  /* as of the last gpu_query/gpu_sample */
        int utilization;         /* percent busy over the driver's last period; -1 unknown */
        struct gpu_process *processes; /* as of the last gpu_query (not gpu_sample) */
        size_t n_processes;
        size_t n_processes_dropped;
};

enum gpu_source { GPU_SOURCE_NONE, GPU_SOURCE_NVML, GPU_SOURCE_FAKE };

struct gpu_nvml;

struct gpu {
        enum gpu_source source;
        char *reason;            /* why there are no GPUs ("NVML: ..." text); NULL when some */
        char *driver;            /* "570.124.06"; NULL when unknown */
        char *cuda;              /* CUDA driver version "12.8"; NULL when unknown */
        struct gpu_info *gpus;   /* n_gpus entries, index order */
        size_t n_gpus;
        /* private */
        struct gpu_nvml *nvml;
        char *fake_path;
};

/* Opens the first source that answers (see above) and queries it once. Returns 0 with a
 * state of no GPUs and a reason when none does (no NVML, NVML error, no devices, a
 * malformed fake file); fails only with -ENOMEM. Free with gpu_close. */
int gpu_open(struct gpu **ret);
void gpu_close(struct gpu *g);
static inline void gpu_closep(struct gpu **g) { if (*g) gpu_close(*g); }
#define _cleanup_gpu_ _cleanup_(gpu_closep)

/* Keeps only the GPUs whose NVML indices are listed, in that order (a worker that runs
 * cells on one slot watches its own GPUs). -ENODEV for an index that is not there. */
int gpu_select(struct gpu *g, const unsigned *indices, size_t n);

/* Refreshes memory, utilization and the processes holding memory on every GPU. On
 * failure (an NVML error, an unreadable fake file) the previous values are kept and a
 * negative errno comes back (-EIO for NVML errors). */
int gpu_query(struct gpu *g);
/* Refreshes memory used and utilization only: cheap enough for every few milliseconds.
 * Failure as gpu_query. */
int gpu_sample(struct gpu *g);

/* "sm_90" from 9, 0 into buf (16 bytes); "" for a negative major. */
const char *gpu_format_arch(int major, int minor, char buf[static 16]);

/* Slots for cells run side by side on disjoint GPU sets.
 *
 * gpu_slots_plan() splits n_gpus GPUs into floor(n_gpus / gpus_per_cell) slots of
 * gpus_per_cell consecutive GPUs each (consecutive NVML indices: on NVLink/NVSwitch hosts
 * those are the usual tensor-parallel groups), at most max_slots of them (0: no cap).
 * GPUs left over stay idle. Slot k's visible string is its GPUs' UUIDs joined by commas
 * when uuids is given (one per GPU, in index order; each non-empty), else their indices
 * ("2,3"): UUIDs are the safer value for CUDA_VISIBLE_DEVICES, because CUDA numbers GPUs
 * fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and NVML numbers them in bus order.
 *
 * n_gpus == 0 (a host without GPUs, a testbed sweep): one slot that restricts nothing
 * (n == 0, visible NULL: leave CUDA_VISIBLE_DEVICES alone).
 * -EINVAL for gpus_per_cell == 0; -ENODEV when gpus_per_cell > n_gpus > 0 (no slot fits:
 * the caller runs cells one at a time with every GPU visible, and the engine says why it
 * cannot); -ENOMEM. The result is a pure function of the arguments. */
struct gpu_slot {
        unsigned *gpus;          /* NVML indices, ascending; n entries */
        size_t n;
        char *visible;           /* CUDA_VISIBLE_DEVICES value; NULL when n == 0 */
};
int gpu_slots_plan(size_t n_gpus, size_t gpus_per_cell, size_t max_slots, const char *const *uuids,
                   struct gpu_slot **ret, size_t *ret_n);
void gpu_slots_free(struct gpu_slot *slots, size_t n);

#ifndef GPU_STANDALONE

/* A process found holding memory on a GPU that had not come back to its baseline. */
struct gpu_holder {
        unsigned gpu;            /* NVML index */
        struct gpu_process process;
};

/* What was still held when a wait for memory gave up. */
struct gpu_holders {
        struct gpu_holder *holders;   /* every process on the unsettled GPUs; may be none
                                       * (memory held by a process NVML cannot see: another
                                       * container, or the driver itself) */
        size_t n_holders;
        unsigned *gpus;               /* the unsettled GPUs' indices */
        uint64_t *used_mib;           /* their used memory at the end, per entry of gpus */
        uint64_t *baseline_mib;       /* and their baselines */
        size_t n_gpus;
};
void gpu_holders_release(struct gpu_holders *h);

/* Waits, as timer events on the loop (other watches and transfers keep running), until
 * each GPU i < n uses at most baseline_used_mib[i] + tolerance_mib, sampling every
 * GPU_WAIT_INTERVAL. Returns 0 when settled (ret_holders untouched), -ETIME when the
 * deadline passed first: then the processes holding memory are queried and, when
 * ret_holders is given, stored there (caller releases). -EINTR when a signal caught by
 * the loop arrived; -EINVAL when n > g->n_gpus; other negative errnos from the loop.
 * A sample that fails (NVML hiccup) is retried at the next interval. */
int gpu_wait_memory_settled(struct loop *l, struct gpu *g, const uint64_t *baseline_used_mib, size_t n,
                            uint64_t tolerance_mib, usec_t deadline, struct gpu_holders *ret_holders);

/* Peak sampling during a cell: a timerfd on the loop calls gpu_sample() every interval
 * while anyone iterates the loop, and keeps per GPU the peak memory used and the highest
 * utilization since the last reset. Invariants: peak_used_mib[i] >= every sample of GPU i
 * since reset; peak_sum_mib is the largest sum over all GPUs within one sample. */
struct gpu_sampler {
        struct loop *loop;
        struct gpu *gpu;
        int timer_fd;
        usec_t interval;
        uint64_t *peak_used_mib;      /* per GPU */
        int *max_utilization;         /* per GPU; -1 until a sample had one */
        uint64_t peak_sum_mib;
        size_t n;                     /* = gpu->n_gpus */
        uint64_t samples;             /* successful samples since reset */
        uint64_t failures;            /* failed samples since reset (values kept) */
};
/* Starts sampling g every interval (> 0) on l, with one sample at once. With no GPUs the
 * sampler exists but never arms its timer. Free with gpu_sampler_free (before g). */
int gpu_sampler_start(struct loop *l, struct gpu *g, usec_t interval, struct gpu_sampler **ret);
/* Forgets the peaks and takes a sample now: call when a cell starts. */
void gpu_sampler_reset(struct gpu_sampler *s);
/* Takes a sample now (the timer does this by itself). */
int gpu_sampler_tick(struct gpu_sampler *s);
void gpu_sampler_free(struct gpu_sampler *s);
static inline void gpu_sampler_freep(struct gpu_sampler **s) { if (*s) gpu_sampler_free(*s); }
#define _cleanup_gpu_sampler_ _cleanup_(gpu_sampler_freep)

#endif /* GPU_STANDALONE */

#endif
