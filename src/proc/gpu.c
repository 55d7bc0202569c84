/* gpu.c -- NVML through dlopen, simulated GPUs, the memory wait, peak sampling, slots. */
#include "proc/gpu.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef GPU_STANDALONE
#include <jansson.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "io/loop.h"
#endif

/* ---- NVML, declared from NVIDIA's documented C API (nvml.h) ---------------------------
 * Only what gauntlet calls. Every entry point returns nvmlReturn_t (an enum: int). */

typedef int nvml_return_t;
typedef struct nvml_device_st *nvml_device_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

typedef struct {
        unsigned long long total, free, used; /* bytes */
} nvml_memory_t;

typedef struct {
        unsigned int gpu, memory; /* percent */
} nvml_utilization_t;

/* nvmlProcessInfo_v1_t */
typedef struct {
        unsigned int pid;
        unsigned long long used_gpu_memory;
} nvml_process_info_v1_t;

/* nvmlProcessInfo_v2_t, which the _v2 and _v3 process queries fill */
typedef struct {
        unsigned int pid;
        unsigned long long used_gpu_memory;
        unsigned int gpu_instance_id;
        unsigned int compute_instance_id;
} nvml_process_info_v2_t;

struct gpu_nvml {
        void *dl;
        bool initialised;
        nvml_device_t *devices;
        size_t n_devices;
        nvml_return_t (*init_v2)(void);
        nvml_return_t (*shutdown)(void);
        const char *(*error_string)(nvml_return_t);
        nvml_return_t (*device_get_count_v2)(unsigned int *);
        nvml_return_t (*device_get_handle_by_index_v2)(unsigned int, nvml_device_t *);
        nvml_return_t (*device_get_name)(nvml_device_t, char *, unsigned int);
        nvml_return_t (*device_get_uuid)(nvml_device_t, char *, unsigned int);
        nvml_return_t (*device_get_cuda_compute_capability)(nvml_device_t, int *, int *);
        nvml_return_t (*device_get_memory_info)(nvml_device_t, nvml_memory_t *);
        nvml_return_t (*device_get_utilization_rates)(nvml_device_t, nvml_utilization_t *);
        nvml_return_t (*system_get_driver_version)(char *, unsigned int);
        nvml_return_t (*system_get_cuda_driver_version_v2)(int *);
        nvml_return_t (*system_get_cuda_driver_version)(int *);
        nvml_return_t (*processes_v3)(nvml_device_t, unsigned int *, nvml_process_info_v2_t *);
        nvml_return_t (*processes_v2)(nvml_device_t, unsigned int *, nvml_process_info_v2_t *);
        nvml_return_t (*processes_v1)(nvml_device_t, unsigned int *, nvml_process_info_v1_t *);
};

#define MIB (1024ULL * 1024ULL)

const char *gpu_format_arch(int major, int minor, char buf[static 16]) {
        if (major < 0 || minor < 0 || major > 999 || minor > 999)
                buf[0] = 0;
        else
                snprintf(buf, 16, "sm_%d%d", major, minor);
        return buf;
}

/* /proc/PID/comm into name (16 bytes); "" when it cannot be read. */
static void read_comm(pid_t pid, char name[static 16]) {
        char path[64];
        name[0] = 0;
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        ssize_t k = read(fd, name, 15);
        if (k <= 0)
                k = 0;
        name[k] = 0;
        char *nl = strchr(name, '\n');
        if (nl)
                *nl = 0;
}

static void gpu_info_release(struct gpu_info *gi) {
        free(gi->name);
        free(gi->uuid);
        free(gi->processes);
        *gi = (struct gpu_info){0};
}

static int set_reason(struct gpu *g, const char *fmt, ...) _printf_(2, 3);
static int set_reason(struct gpu *g, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!s)
                return -ENOMEM;
        free(g->reason);
        g->reason = s;
        return 0;
}

/* Forgets every GPU (the state becomes "no GPUs"). */
static void gpus_drop(struct gpu *g) {
        for (size_t i = 0; i < g->n_gpus; i++)
                gpu_info_release(&g->gpus[i]);
        free(TAKE_PTR(g->gpus));
        g->n_gpus = 0;
}

/* ---- NVML ------------------------------------------------------------------------- */

static const char *nvml_strerror(const struct gpu_nvml *nv, nvml_return_t rc, char buf[static 32]) {
        if (nv->error_string) {
                const char *s = nv->error_string(rc);
                if (s)
                        return s;
        }
        snprintf(buf, 32, "error %d", rc);
        return buf;
}

static void nvml_free(struct gpu_nvml *nv) {
        if (!nv)
                return;
        if (nv->initialised && nv->shutdown)
                nv->shutdown();
        if (nv->dl)
                dlclose(nv->dl);
        free(nv->devices);
        free(nv);
}

/* One process query (which: 0 = _v3, 1 = _v2, 2 = the original) into gi. Returns 0,
 * -ENOENT when the driver lacks it, -EIO when it fails, -EPROTO when a _v3 answer holds a
 * zero pid: the driver's struct is then not the one declared here (one driver series
 * briefly grew it), and an older query is asked instead. */
static int nvml_processes_with(struct gpu_nvml *nv, int which, nvml_device_t d, struct gpu_info *gi) {
        nvml_return_t (*f2)(nvml_device_t, unsigned int *, nvml_process_info_v2_t *) =
                which == 0 ? nv->processes_v3 : which == 1 ? nv->processes_v2 : NULL;
        if (which < 2 ? !f2 : !nv->processes_v1)
                return -ENOENT;
        /* Processes may start between asking the count and asking the list: retry a little. */
        for (int attempt = 0; attempt < 3; attempt++) {
                unsigned count = 0;
                nvml_return_t rc = f2 ? f2(d, &count, NULL) : nv->processes_v1(d, &count, NULL);
                if (rc == NVML_SUCCESS)
                        count = 0;
                else if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
                        return -EIO;
                unsigned cap = count + 16;
                _cleanup_free_ nvml_process_info_v2_t *v2 = NULL;
                _cleanup_free_ nvml_process_info_v1_t *v1 = NULL;
                if (count > 0) {
                        if (f2)
                                v2 = calloc(cap, sizeof(*v2));
                        else
                                v1 = calloc(cap, sizeof(*v1));
                        if (!v2 && !v1)
                                return -ENOMEM;
                        count = cap;
                        rc = f2 ? f2(d, &count, v2) : nv->processes_v1(d, &count, v1);
                        if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
                                continue;
                        if (rc != NVML_SUCCESS)
                                return -EIO;
                        count = MIN(count, cap);
                }
                if (which == 0)
                        for (unsigned i = 0; i < count; i++)
                                if (v2[i].pid == 0)
                                        return -EPROTO;
                size_t keep = MIN((size_t)count, (size_t)GPU_MAX_PROCESSES);
                struct gpu_process *p = calloc(keep ? keep : 1, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                for (size_t i = 0; i < keep; i++) {
                        unsigned pid = v2 ? v2[i].pid : v1[i].pid;
                        unsigned long long used = v2 ? v2[i].used_gpu_memory : v1[i].used_gpu_memory;
                        p[i].pid = (pid_t)pid;
                        p[i].used_mib = used == NVML_VALUE_NOT_AVAILABLE ? -1 : (int64_t)(used / MIB);
                        read_comm(p[i].pid, p[i].name);
                }
                free(gi->processes);
                gi->processes = p;
                gi->n_processes = keep;
                gi->n_processes_dropped = count - keep;
                return 0;
        }
        return -EIO;
}

/* The compute processes of one device, through the newest query that works. */
static int nvml_processes(struct gpu_nvml *nv, nvml_device_t d, struct gpu_info *gi) {
        for (int which = 0; which < 3; which++) {
                int r = nvml_processes_with(nv, which, d, gi);
                if (r == 0 || r == -ENOMEM)
                        return r;
        }
        return -EIO;
}

static int nvml_refresh(struct gpu *g, bool processes) {
        struct gpu_nvml *nv = g->nvml;
        int r = 0;
        for (size_t i = 0; i < g->n_gpus; i++) {
                struct gpu_info *gi = &g->gpus[i];
                nvml_device_t d = nv->devices[i];
                nvml_memory_t mem;
                if (nv->device_get_memory_info) {
                        if (nv->device_get_memory_info(d, &mem) == NVML_SUCCESS) {
                                gi->memory_total_mib = mem.total / MIB;
                                gi->memory_used_mib = mem.used / MIB;
                        } else
                                r = -EIO;
                }
                nvml_utilization_t u;
                if (nv->device_get_utilization_rates) {
                        nvml_return_t rc = nv->device_get_utilization_rates(d, &u);
                        if (rc == NVML_SUCCESS)
                                gi->utilization = (int)MIN(u.gpu, 100u);
                        else if (rc == NVML_ERROR_NOT_SUPPORTED)
                                gi->utilization = -1;
                        else
                                r = -EIO;
                }
                if (processes) {
                        int k = nvml_processes(nv, d, gi);
                        if (k == -ENOMEM)
                                return k;
                        if (k < 0)
                                r = k;
                }
        }
        return r;
}

#define NVML_SYM(field, name) (*(void **)&nv->field = dlsym(nv->dl, name))

/* Returns 0 when NVML answered with at least one GPU, 1 when it cannot be used (reason
 * set), -ENOMEM. */
static int nvml_open(struct gpu *g) {
        const char *lib = getenv("GAUNTLET_NVML_LIBRARY");
        if (!lib || !*lib)
                lib = "libnvidia-ml.so.1";
        struct gpu_nvml *nv = calloc(1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        char eb[32];
        int r;
        dlerror();
        nv->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!nv->dl) {
                const char *e = dlerror();
                r = set_reason(g, "NVML: %s", e ? e : lib);
                goto unusable;
        }
        NVML_SYM(init_v2, "nvmlInit_v2");
        NVML_SYM(shutdown, "nvmlShutdown");
        NVML_SYM(error_string, "nvmlErrorString");
        NVML_SYM(device_get_count_v2, "nvmlDeviceGetCount_v2");
        NVML_SYM(device_get_handle_by_index_v2, "nvmlDeviceGetHandleByIndex_v2");
        NVML_SYM(device_get_name, "nvmlDeviceGetName");
        NVML_SYM(device_get_uuid, "nvmlDeviceGetUUID");
        NVML_SYM(device_get_cuda_compute_capability, "nvmlDeviceGetCudaComputeCapability");
        NVML_SYM(device_get_memory_info, "nvmlDeviceGetMemoryInfo");
        NVML_SYM(device_get_utilization_rates, "nvmlDeviceGetUtilizationRates");
        NVML_SYM(system_get_driver_version, "nvmlSystemGetDriverVersion");
        NVML_SYM(system_get_cuda_driver_version_v2, "nvmlSystemGetCudaDriverVersion_v2");
        NVML_SYM(system_get_cuda_driver_version, "nvmlSystemGetCudaDriverVersion");
        NVML_SYM(processes_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
        NVML_SYM(processes_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
        NVML_SYM(processes_v1, "nvmlDeviceGetComputeRunningProcesses");
        if (!nv->init_v2 || !nv->shutdown || !nv->device_get_count_v2 || !nv->device_get_handle_by_index_v2) {
                r = set_reason(g, "NVML: %s lacks nvmlInit_v2 or the device queries (driver too old)", lib);
                goto unusable;
        }
        nvml_return_t rc = nv->init_v2();
        if (rc != NVML_SUCCESS) {
                r = set_reason(g, "NVML: nvmlInit failed: %s", nvml_strerror(nv, rc, eb));
                goto unusable;
        }
        nv->initialised = true;
        unsigned count = 0;
        rc = nv->device_get_count_v2(&count);
        if (rc != NVML_SUCCESS) {
                r = set_reason(g, "NVML: cannot count GPUs: %s", nvml_strerror(nv, rc, eb));
                goto unusable;
        }
        if (count == 0) {
                r = set_reason(g, "NVML: the driver reports no GPUs");
                goto unusable;
        }
        count = MIN(count, 1024u);
        nv->devices = calloc(count, sizeof(*nv->devices));
        g->gpus = calloc(count, sizeof(*g->gpus));
        if (!nv->devices || !g->gpus) {
                nvml_free(nv);
                free(TAKE_PTR(g->gpus));
                return -ENOMEM;
        }
        for (unsigned i = 0; i < count; i++) {
                rc = nv->device_get_handle_by_index_v2(i, &nv->devices[i]);
                if (rc != NVML_SUCCESS) {
                        /* A GPU NVML cannot open (fallen off the bus, no permission): say so. */
                        gpus_drop(g);
                        r = set_reason(g, "NVML: cannot open GPU %u: %s", i, nvml_strerror(nv, rc, eb));
                        goto unusable;
                }
                struct gpu_info *gi = &g->gpus[i];
                gi->index = i;
                gi->utilization = -1;
                char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
                char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
                if (!nv->device_get_name || nv->device_get_name(nv->devices[i], name, sizeof(name)) != NVML_SUCCESS)
                        name[0] = 0;
                if (!nv->device_get_uuid || nv->device_get_uuid(nv->devices[i], uuid, sizeof(uuid)) != NVML_SUCCESS)
                        uuid[0] = 0;
                name[sizeof(name) - 1] = uuid[sizeof(uuid) - 1] = 0;
                int major = -1, minor = -1;
                if (!nv->device_get_cuda_compute_capability ||
                    nv->device_get_cuda_compute_capability(nv->devices[i], &major, &minor) != NVML_SUCCESS)
                        major = -1;
                gpu_format_arch(major, minor, gi->arch);
                gi->name = strdup(name);
                gi->uuid = strdup(uuid);
                g->n_gpus = i + 1;
                if (!gi->name || !gi->uuid) {
                        nvml_free(nv);
                        return -ENOMEM;
                }
        }
        nv->n_devices = count;
        char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
        if (nv->system_get_driver_version &&
            nv->system_get_driver_version(drv, sizeof(drv)) == NVML_SUCCESS && drv[0]) {
                drv[sizeof(drv) - 1] = 0;
                g->driver = strdup(drv);
        }
        int cv = 0;
        nvml_return_t (*cuda_fn)(int *) = nv->system_get_cuda_driver_version_v2
                                                  ? nv->system_get_cuda_driver_version_v2
                                                  : nv->system_get_cuda_driver_version;
        if (cuda_fn && cuda_fn(&cv) == NVML_SUCCESS && cv > 0)
                g->cuda = strdup_printf("%d.%d", cv / 1000, (cv % 1000) / 10); /* 12080 -> "12.8" */
        g->nvml = nv;
        g->source = GPU_SOURCE_NVML;
        free(TAKE_PTR(g->reason));
        r = nvml_refresh(g, true);
        return r == -ENOMEM ? r : 0;

unusable:
        nvml_free(nv);
        return r < 0 ? r : 1;
}

/* ---- simulated GPUs (GAUNTLET_FAKE_GPUS) ---------------------------------------------- */

#ifndef GPU_STANDALONE

static int fake_read(const char *path, json_t **ret, char **ret_why) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_file_capped(path, GPU_FAKE_MAX_FILE, &text, &len);
        if (r < 0) {
                *ret_why = strdup_printf("%s", strerror(-r));
                return r;
        }
        json_error_t err;
        json_t *root = json_loadb(text, len, 0, &err);
        if (!root || !json_is_object(root) || !json_is_array(json_object_get(root, "gpus"))) {
                *ret_why = root ? strdup("not an object with a \"gpus\" list")
                                : strdup_printf("line %d: %s", err.line, err.text);
                json_decref(root);
                return -EINVAL;
        }
        *ret = root;
        return 0;
}

static int64_t fake_int(json_t *o, const char *key, int64_t absent) {
        json_t *v = json_object_get(o, key);
        return json_is_integer(v) ? (int64_t)json_integer_value(v) : absent;
}

static const char *fake_str(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Copies the changing values (memory, utilization, processes when asked) from the file's
 * GPU objects into g. */
static int fake_apply(struct gpu *g, json_t *list, bool processes) {
        for (size_t i = 0; i < g->n_gpus; i++) {
                struct gpu_info *gi = &g->gpus[i];
                /* by the GPU's own index: after gpu_select the list is a subset */
                json_t *o = json_array_get(list, gi->index);
                if (!o)
                        return -EINVAL;
                int64_t total = fake_int(o, "memory_total_mib", -1);
                int64_t used = fake_int(o, "memory_used_mib", -1);
                if (!json_is_object(o) || total < 0 || used < 0)
                        return -EINVAL;
                gi->memory_total_mib = (uint64_t)total;
                gi->memory_used_mib = (uint64_t)used;
                int64_t util = fake_int(o, "utilization", -1);
                gi->utilization = util < 0 || util > 100 ? -1 : (int)util;
                if (!processes)
                        continue;
                json_t *pl = json_object_get(o, "processes");
                size_t n = json_is_array(pl) ? json_array_size(pl) : 0;
                size_t keep = MIN(n, (size_t)GPU_MAX_PROCESSES);
                struct gpu_process *p = calloc(keep ? keep : 1, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                for (size_t k = 0; k < keep; k++) {
                        json_t *po = json_array_get(pl, k);
                        int64_t pid = fake_int(po, "pid", -1);
                        if (pid <= 0 || pid > INT32_MAX) {
                                free(p);
                                return -EINVAL;
                        }
                        p[k].pid = (pid_t)pid;
                        p[k].used_mib = fake_int(po, "used_mib", -1);
                        const char *name = fake_str(po, "name");
                        if (name)
                                snprintf(p[k].name, sizeof(p[k].name), "%s", name);
                        else
                                read_comm(p[k].pid, p[k].name);
                }
                free(gi->processes);
                gi->processes = p;
                gi->n_processes = keep;
                gi->n_processes_dropped = n - keep;
        }
        return 0;
}

/* Returns 0 with GPUs, 1 with none (reason set), -ENOMEM. */
static int fake_open(struct gpu *g, const char *path) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_free_ char *why = NULL;
        g->source = GPU_SOURCE_FAKE;
        g->fake_path = strdup(path);
        if (!g->fake_path)
                return -ENOMEM;
        int r = fake_read(path, &root, &why);
        if (r < 0) {
                r = set_reason(g, "GAUNTLET_FAKE_GPUS '%s': %s", path, why ? why : "cannot read");
                return r < 0 ? r : 1;
        }
        const char *s;
        if ((s = fake_str(root, "driver")) && !(g->driver = strdup(s)))
                return -ENOMEM;
        if ((s = fake_str(root, "cuda")) && !(g->cuda = strdup(s)))
                return -ENOMEM;
        json_t *list = json_object_get(root, "gpus");
        size_t n = MIN(json_array_size(list), (size_t)1024);
        if (n == 0) {
                s = fake_str(root, "reason");
                r = set_reason(g, "GAUNTLET_FAKE_GPUS '%s': %s", path, s ? s : "no GPUs");
                return r < 0 ? r : 1;
        }
        g->gpus = calloc(n, sizeof(*g->gpus));
        if (!g->gpus)
                return -ENOMEM;
        g->n_gpus = n;
        for (size_t i = 0; i < n; i++) {
                json_t *o = json_array_get(list, i);
                struct gpu_info *gi = &g->gpus[i];
                gi->index = (unsigned)i;
                gi->utilization = -1;
                gi->name = strdup((s = fake_str(o, "name")) ? s : "");
                gi->uuid = strdup((s = fake_str(o, "uuid")) ? s : "");
                if (!gi->name || !gi->uuid)
                        return -ENOMEM;
                snprintf(gi->arch, sizeof(gi->arch), "%s", (s = fake_str(o, "arch")) ? s : "");
        }
        r = fake_apply(g, list, true);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                gpus_drop(g);
                r = set_reason(g, "GAUNTLET_FAKE_GPUS '%s': %s", path,
                               "a GPU lacks memory_total_mib/memory_used_mib, or a process its pid");
                return r < 0 ? r : 1;
        }
        return 0;
}

static int fake_refresh(struct gpu *g, bool processes) {
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_free_ char *why = NULL;
        int r = fake_read(g->fake_path, &root, &why);
        if (r < 0)
                return r;
        return fake_apply(g, json_object_get(root, "gpus"), processes);
}

#endif /* GPU_STANDALONE */

/* ---- the state ------------------------------------------------------------------------ */

int gpu_open(struct gpu **ret) {
        struct gpu *g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        int r;
#ifndef GPU_STANDALONE
        const char *fake = getenv("GAUNTLET_FAKE_GPUS");
        if (fake && *fake)
                r = fake_open(g, fake);
        else
#endif
                r = nvml_open(g);
        if (r < 0) {
                gpu_close(g);
                return r;
        }
        if (r > 0 || g->n_gpus == 0) {
                /* No GPUs: a plain state that every function accepts. */
                g->source = GPU_SOURCE_NONE;
                gpus_drop(g);
                if (!g->reason && set_reason(g, "no GPUs") < 0) {
                        gpu_close(g);
                        return -ENOMEM;
                }
        }
        *ret = g;
        return 0;
}

void gpu_close(struct gpu *g) {
        if (!g)
                return;
        for (size_t i = 0; i < g->n_gpus; i++)
                gpu_info_release(&g->gpus[i]);
        free(g->gpus);
        nvml_free(g->nvml);
        free(g->reason);
        free(g->driver);
        free(g->cuda);
        free(g->fake_path);
        free(g);
}

static int gpu_refresh(struct gpu *g, bool processes) {
        switch (g->source) {
        case GPU_SOURCE_NVML:
                return nvml_refresh(g, processes);
#ifndef GPU_STANDALONE
        case GPU_SOURCE_FAKE:
                return fake_refresh(g, processes);
#endif
        default:
                return 0;
        }
}

int gpu_select(struct gpu *g, const unsigned *indices, size_t n) {
        for (size_t k = 0; k < n; k++) {
                bool found = false;
                for (size_t i = 0; i < g->n_gpus; i++)
                        found |= g->gpus[i].index == indices[k];
                if (!found)
                        return -ENODEV;
        }
        struct gpu_info *keep = calloc(n ? n : 1, sizeof(*keep));
        if (!keep)
                return -ENOMEM;
        nvml_device_t *devices = NULL;
        if (g->nvml && g->nvml->devices && !(devices = calloc(n ? n : 1, sizeof(*devices)))) {
                free(keep);
                return -ENOMEM;
        }
        for (size_t k = 0; k < n; k++)
                for (size_t i = 0; i < g->n_gpus; i++)
                        if (g->gpus[i].index == indices[k]) {
                                keep[k] = g->gpus[i];
                                g->gpus[i] = (struct gpu_info){0}; /* moved */
                                if (devices)
                                        devices[k] = g->nvml->devices[i];
                        }
        for (size_t i = 0; i < g->n_gpus; i++)
                gpu_info_release(&g->gpus[i]);
        free(g->gpus);
        g->gpus = keep;
        g->n_gpus = n;
        if (devices) {
                free(g->nvml->devices);
                g->nvml->devices = devices;
                g->nvml->n_devices = n;
        }
        return 0;
}

int gpu_query(struct gpu *g) {
        return gpu_refresh(g, true);
}

int gpu_sample(struct gpu *g) {
        return gpu_refresh(g, false);
}

/* ---- slots for parallel cells --------------------------------------------------------- */

void gpu_slots_free(struct gpu_slot *slots, size_t n) {
        if (!slots)
                return;
        for (size_t i = 0; i < n; i++) {
                free(slots[i].gpus);
                free(slots[i].visible);
        }
        free(slots);
}

int gpu_slots_plan(size_t n_gpus, size_t gpus_per_cell, size_t max_slots, const char *const *uuids,
                   struct gpu_slot **ret, size_t *ret_n) {
        if (gpus_per_cell == 0)
                return -EINVAL;
        if (n_gpus == 0) {
                struct gpu_slot *s = calloc(1, sizeof(*s));
                if (!s)
                        return -ENOMEM;
                *ret = s;
                *ret_n = 1;
                return 0;
        }
        if (gpus_per_cell > n_gpus)
                return -ENODEV;
        if (uuids)
                for (size_t i = 0; i < n_gpus; i++)
                        if (!uuids[i] || !uuids[i][0])
                                return -EINVAL;
        size_t n = n_gpus / gpus_per_cell;
        if (max_slots && n > max_slots)
                n = max_slots;
        struct gpu_slot *slots = calloc(n, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                struct gpu_slot *s = &slots[k];
                s->gpus = calloc(gpus_per_cell, sizeof(*s->gpus));
                size_t len = 1;
                for (size_t j = 0; j < gpus_per_cell; j++)
                        len += (uuids ? strlen(uuids[k * gpus_per_cell + j]) : 20) + 1;
                s->visible = malloc(len);
                if (!s->gpus || !s->visible) {
                        gpu_slots_free(slots, k + 1);
                        return -ENOMEM;
                }
                s->n = gpus_per_cell;
                size_t at = 0;
                s->visible[0] = 0;
                for (size_t j = 0; j < gpus_per_cell; j++) {
                        size_t idx = k * gpus_per_cell + j;
                        s->gpus[j] = (unsigned)idx;
                        int w = uuids ? snprintf(s->visible + at, len - at, "%s%s", j ? "," : "", uuids[idx])
                                      : snprintf(s->visible + at, len - at, "%s%zu", j ? "," : "", idx);
                        at += (size_t)w;
                }
        }
        *ret = slots;
        *ret_n = n;
        return 0;
}

#ifndef GPU_STANDALONE

/* ---- waiting for memory to clear ------------------------------------------------------ */

void gpu_holders_release(struct gpu_holders *h) {
        if (!h)
                return;
        free(h->holders);
        free(h->gpus);
        free(h->used_mib);
        free(h->baseline_mib);
        *h = (struct gpu_holders){0};
}

static bool settled(const struct gpu *g, const uint64_t *baseline, size_t n, uint64_t tolerance) {
        for (size_t i = 0; i < n; i++)
                if (g->gpus[i].memory_used_mib > baseline[i] + tolerance)
                        return false;
        return true;
}

static int holders_collect(const struct gpu *g, const uint64_t *baseline, size_t n, uint64_t tolerance,
                           struct gpu_holders *ret) {
        struct gpu_holders h = {0};
        size_t procs = 0;
        for (size_t i = 0; i < n; i++)
                if (g->gpus[i].memory_used_mib > baseline[i] + tolerance) {
                        h.n_gpus++;
                        procs += g->gpus[i].n_processes;
                }
        h.gpus = calloc(h.n_gpus ? h.n_gpus : 1, sizeof(*h.gpus));
        h.used_mib = calloc(h.n_gpus ? h.n_gpus : 1, sizeof(*h.used_mib));
        h.baseline_mib = calloc(h.n_gpus ? h.n_gpus : 1, sizeof(*h.baseline_mib));
        h.holders = calloc(procs ? procs : 1, sizeof(*h.holders));
        if (!h.gpus || !h.used_mib || !h.baseline_mib || !h.holders) {
                gpu_holders_release(&h);
                return -ENOMEM;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct gpu_info *gi = &g->gpus[i];
                if (gi->memory_used_mib <= baseline[i] + tolerance)
                        continue;
                h.gpus[k] = gi->index;
                h.used_mib[k] = gi->memory_used_mib;
                h.baseline_mib[k] = baseline[i];
                k++;
                for (size_t p = 0; p < gi->n_processes; p++)
                        h.holders[h.n_holders++] = (struct gpu_holder){.gpu = gi->index, .process = gi->processes[p]};
        }
        *ret = h;
        return 0;
}

int gpu_wait_memory_settled(struct loop *l, struct gpu *g, const uint64_t *baseline_used_mib, size_t n,
                            uint64_t tolerance_mib, usec_t deadline, struct gpu_holders *ret_holders) {
        if (n > g->n_gpus || (n > 0 && !baseline_used_mib))
                return -EINVAL;
        if (n == 0)
                return 0;
        usec_t next = 0; /* the first sample at once */
        for (;;) {
                usec_t now = now_usec();
                if (now >= next) {
                        if (gpu_sample(g) >= 0 && settled(g, baseline_used_mib, n, tolerance_mib))
                                return 0;
                        next = now + GPU_WAIT_INTERVAL;
                }
                if (now >= deadline)
                        break;
                int r = loop_iterate(l, MIN(next, deadline));
                if (r < 0 && r != -ETIME)
                        return r;
        }
        /* Give up: one full query names what still holds memory. */
        int r = gpu_query(g);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && settled(g, baseline_used_mib, n, tolerance_mib))
                return 0;
        if (ret_holders) {
                r = holders_collect(g, baseline_used_mib, n, tolerance_mib, ret_holders);
                if (r < 0)
                        return r;
        }
        return -ETIME;
}

/* ---- peak sampling -------------------------------------------------------------------- */

int gpu_sampler_tick(struct gpu_sampler *s) {
        int r = gpu_sample(s->gpu);
        if (r < 0) {
                s->failures++;
                return r;
        }
        uint64_t sum = 0;
        for (size_t i = 0; i < s->n; i++) {
                const struct gpu_info *gi = &s->gpu->gpus[i];
                s->peak_used_mib[i] = MAX(s->peak_used_mib[i], gi->memory_used_mib);
                if (gi->utilization > s->max_utilization[i])
                        s->max_utilization[i] = gi->utilization;
                sum += gi->memory_used_mib;
        }
        s->peak_sum_mib = MAX(s->peak_sum_mib, sum);
        s->samples++;
        return 0;
}

static void on_sampler_timer(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct gpu_sampler *s = userdata;
        uint64_t expirations;
        /* Missed expirations collapse into one sample: a late sample is still a sample. */
        if (read(fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
                return;
        (void)gpu_sampler_tick(s);
}

void gpu_sampler_reset(struct gpu_sampler *s) {
        for (size_t i = 0; i < s->n; i++) {
                s->peak_used_mib[i] = 0;
                s->max_utilization[i] = -1;
        }
        s->peak_sum_mib = 0;
        s->samples = s->failures = 0;
        (void)gpu_sampler_tick(s);
}

void gpu_sampler_free(struct gpu_sampler *s) {
        if (!s)
                return;
        if (s->timer_fd >= 0) {
                loop_unwatch_fd(s->loop, s->timer_fd);
                close(s->timer_fd);
        }
        free(s->peak_used_mib);
        free(s->max_utilization);
        free(s);
}

int gpu_sampler_start(struct loop *l, struct gpu *g, usec_t interval, struct gpu_sampler **ret) {
        if (interval == 0)
                return -EINVAL;
        struct gpu_sampler *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (struct gpu_sampler){.loop = l, .gpu = g, .timer_fd = -1, .interval = interval, .n = g->n_gpus};
        s->peak_used_mib = calloc(s->n ? s->n : 1, sizeof(*s->peak_used_mib));
        s->max_utilization = calloc(s->n ? s->n : 1, sizeof(*s->max_utilization));
        if (!s->peak_used_mib || !s->max_utilization) {
                gpu_sampler_free(s);
                return -ENOMEM;
        }
        if (s->n > 0) {
                s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
                if (s->timer_fd < 0) {
                        int r = -errno;
                        gpu_sampler_free(s);
                        return r;
                }
                struct itimerspec its = {
                        .it_interval = {.tv_sec = (time_t)(interval / USEC_PER_SEC),
                                        .tv_nsec = (long)(interval % USEC_PER_SEC) * 1000},
                };
                its.it_value = its.it_interval;
                int r;
                if (timerfd_settime(s->timer_fd, 0, &its, NULL) < 0) {
                        r = -errno;
                        gpu_sampler_free(s);
                        return r;
                }
                r = loop_watch_fd(l, s->timer_fd, EPOLLIN, on_sampler_timer, s);
                if (r < 0) {
                        close(TAKE_FD(s->timer_fd));
                        gpu_sampler_free(s);
                        return r;
                }
        }
        gpu_sampler_reset(s);
        *ret = s;
        return 0;
}

#endif /* GPU_STANDALONE */
