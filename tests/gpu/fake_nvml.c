/* fake_nvml.c -- a stand-in libnvidia-ml.so.1 for hosts without a GPU.
 *
 * tests/integration/doctor.sh builds it as a shared object and points
 * GAUNTLET_NVML_LIBRARY at it, so that gauntlet's real NVML path (dlopen, dlsym, the
 * queries, the process-list fallbacks) runs on a machine without NVIDIA's driver. The
 * signatures follow NVIDIA's documented C API; it reports two H200s, and this process
 * (whoever loaded it) holding 1024 MiB on GPU 0.
 *
 * FAKE_NVML_BAD_V3=1 makes nvmlDeviceGetComputeRunningProcesses_v3 answer with a zero
 * pid, as a driver whose struct differs would: gauntlet must then ask _v2.
 * FAKE_NVML_INIT_FAIL=1 makes nvmlInit_v2 fail with NVML_ERROR_DRIVER_NOT_LOADED (9).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
        unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
        unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
        unsigned int pid;
        unsigned long long usedGpuMemory;
        unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define EXPORT __attribute__((visibility("default")))
#define MIB (1024ULL * 1024ULL)

static struct nvmlDevice_st {
        int index;
} devices[2] = {{0}, {1}};

EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT nvmlReturn_t nvmlShutdown(void);
EXPORT const char *nvmlErrorString(nvmlReturn_t r);
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len);
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len);
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor);
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u);
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *s, unsigned int len);
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p);

nvmlReturn_t nvmlInit_v2(void) {
        const char *f = getenv("FAKE_NVML_INIT_FAIL");
        return f && *f == '1' ? 9 : 0;
}
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) { return r == 9 ? "Driver Not Loaded" : "Unknown Error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
        *n = 2;
        return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
        if (i >= 2)
                return 2; /* NVML_ERROR_INVALID_ARGUMENT */
        *d = &devices[i];
        return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len) {
        snprintf(s, len, "NVIDIA H200");
        return 0;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len) {
        snprintf(s, len, "GPU-fake-%d", d->index);
        return 0;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
        *major = 9;
        *minor = 0;
        return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
        m->total = 143771ULL * MIB;
        m->used = (d->index == 0 ? 1024ULL + 4 : 4) * MIB;
        m->free = m->total - m->used;
        return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
        u->gpu = d->index == 0 ? 42 : 0;
        u->memory = 0;
        return 0;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *s, unsigned int len) {
        snprintf(s, len, "570.124.06");
        return 0;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
        *v = 12080;
        return 0;
}

static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p, int bad) {
        unsigned want = d->index == 0 ? 1 : 0;
        if (*n < want) {
                *n = want;
                return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
        }
        *n = want;
        if (want) {
                p[0].pid = bad ? 0 : (unsigned)getpid();
                p[0].usedGpuMemory = 1024ULL * MIB;
                p[0].gpuInstanceId = p[0].computeInstanceId = ~0u;
        }
        return 0;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p) {
        const char *b = getenv("FAKE_NVML_BAD_V3");
        return processes(d, n, p, b && *b == '1');
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p) {
        return processes(d, n, p, 0);
}
