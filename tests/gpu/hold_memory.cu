/* hold_memory.cu -- a stand-in GPU server: holds N GiB of device memory while it serves.
 *
 *   hold_memory --port PORT [--host 127.0.0.1] [--gib N] [--linger S] [--busy S]
 *
 * Allocates N GiB (default 4) on the first visible device, writes it (so the pages are
 * really backed), then serves HTTP on PORT with plain sockets: GET /health answers 200
 * once the memory is held, GET /v1/models lists one model, POST /v1/chat/completions
 * answers "OK" (plain JSON, or SSE when the body asks to stream), anything else 404. So
 * it can be the server of a `generic` matrix (tests/gpu/hold.yaml). --busy S runs a
 * kernel over the memory for S seconds after allocating (utilization to sample).
 * On SIGTERM or SIGINT it stops serving, keeps the memory for S more seconds (--linger,
 * default 0: what a slow-exiting engine does), then frees it and exits 0.
 *
 * HOLD_MEMORY_NO_GPU=1 skips the GPU (to try the HTTP side on any machine).
 *
 * Built with nvcc (CUDA runtime API). Without nvcc it also builds as C
 * (`cc -x c hold_memory.cu -ldl`): the allocation then goes through the CUDA driver API
 * from libcuda.so.1, loaded with dlopen, so only the driver is needed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = sig; }

#ifdef __CUDACC__
#include <cuda_runtime.h>

__global__ void fill(unsigned *p, size_t n, unsigned v) {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
                p[i] = v ^ (unsigned)i;
}

static void *dev_mem;
static size_t dev_bytes;

static int hold(size_t bytes, char *name, size_t len) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
                snprintf(name, len, "%s sm_%d%d", prop.name, prop.major, prop.minor);
        cudaError_t e = cudaMalloc(&dev_mem, bytes);
        if (e != cudaSuccess) {
                fprintf(stderr, "hold_memory: cudaMalloc(%zu): %s\n", bytes, cudaGetErrorString(e));
                return -1;
        }
        dev_bytes = bytes;
        fill<<<1024, 256>>>((unsigned *)dev_mem, bytes / sizeof(unsigned), 0x5a5a5a5au);
        e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
                fprintf(stderr, "hold_memory: fill: %s\n", cudaGetErrorString(e));
                return -1;
        }
        return 0;
}

static void busy(double seconds) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        unsigned v = 1;
        do {
                fill<<<1024, 256>>>((unsigned *)dev_mem, dev_bytes / sizeof(unsigned), v++);
                cudaDeviceSynchronize();
                clock_gettime(CLOCK_MONOTONIC, &b);
        } while (!stop && (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static void release(void) {
        cudaFree(dev_mem);
}

#else /* plain C: the driver API through dlopen */
#include <dlfcn.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

static CUresult (*cu_init)(unsigned);
static CUresult (*cu_device_get)(CUdevice *, int);
static CUresult (*cu_device_get_name)(char *, int, CUdevice);
static CUresult (*cu_ctx_create)(CUcontext *, unsigned, CUdevice);
static CUresult (*cu_mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*cu_memset_d32)(CUdeviceptr, unsigned, size_t);
static CUresult (*cu_ctx_synchronize)(void);
static CUresult (*cu_mem_free)(CUdeviceptr);
static CUdeviceptr dev_mem;
static size_t dev_bytes;

#define SYM(var, name) (*(void **)&var = dlsym(dl, name))

static int hold(size_t bytes, char *name, size_t len) {
        void *dl = dlopen("libcuda.so.1", RTLD_NOW);
        if (!dl) {
                fprintf(stderr, "hold_memory: %s\n", dlerror());
                return -1;
        }
        SYM(cu_init, "cuInit");
        SYM(cu_device_get, "cuDeviceGet");
        SYM(cu_device_get_name, "cuDeviceGetName");
        SYM(cu_ctx_create, "cuCtxCreate_v2");
        SYM(cu_mem_alloc, "cuMemAlloc_v2");
        SYM(cu_memset_d32, "cuMemsetD32_v2");
        SYM(cu_ctx_synchronize, "cuCtxSynchronize");
        SYM(cu_mem_free, "cuMemFree_v2");
        if (!cu_init || !cu_device_get || !cu_ctx_create || !cu_mem_alloc || !cu_memset_d32 ||
            !cu_ctx_synchronize || !cu_mem_free) {
                fprintf(stderr, "hold_memory: libcuda.so.1 lacks a driver API entry point\n");
                return -1;
        }
        CUdevice dev;
        CUcontext ctx;
        CUresult r;
        if ((r = cu_init(0)) || (r = cu_device_get(&dev, 0)) || (r = cu_ctx_create(&ctx, 0, dev))) {
                fprintf(stderr, "hold_memory: cannot open the device: CUresult %d\n", r);
                return -1;
        }
        if (cu_device_get_name)
                cu_device_get_name(name, (int)len, dev);
        if ((r = cu_mem_alloc(&dev_mem, bytes))) {
                fprintf(stderr, "hold_memory: cuMemAlloc(%zu): CUresult %d (out of memory is 2)\n", bytes, r);
                return -1;
        }
        dev_bytes = bytes;
        if ((r = cu_memset_d32(dev_mem, 0x5a5a5a5au, bytes / 4)) || (r = cu_ctx_synchronize())) {
                fprintf(stderr, "hold_memory: memset: CUresult %d\n", r);
                return -1;
        }
        return 0;
}

static void busy(double seconds) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        unsigned v = 1;
        do {
                cu_memset_d32(dev_mem, v++, dev_bytes / 4);
                cu_ctx_synchronize();
                clock_gettime(CLOCK_MONOTONIC, &b);
        } while (!stop && (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static void release(void) {
        cu_mem_free(dev_mem);
}
#endif

static void reply(int fd, int status, const char *type, const char *body) {
        char head[256];
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                         status, status == 200 ? "OK" : "Not Found", type, strlen(body));
        if (write(fd, head, (size_t)n) < 0 || write(fd, body, strlen(body)) < 0)
                return;
}

static const char chat_json[] =
        "{\"id\":\"hold\",\"object\":\"chat.completion\",\"model\":\"hold_memory\",\"choices\":[{\"index\":0,"
        "\"message\":{\"role\":\"assistant\",\"content\":\"OK\"},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":1,\"total_tokens\":9}}";
static const char chat_sse[] =
        "data: {\"id\":\"hold\",\"object\":\"chat.completion.chunk\",\"model\":\"hold_memory\",\"choices\":[{\"index\":0,"
        "\"delta\":{\"role\":\"assistant\",\"content\":\"OK\"},\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"hold\",\"object\":\"chat.completion.chunk\",\"model\":\"hold_memory\",\"choices\":[{\"index\":0,"
        "\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":1,"
        "\"total_tokens\":9}}\n\ndata: [DONE]\n\n";

/* One request per connection: headers, then Content-Length bytes of body (capped). */
static void serve_one(int fd) {
        static char req[65536];
        size_t len = 0;
        char *end = NULL;
        while (len < sizeof(req) - 1) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, 5000) <= 0)
                        return;
                ssize_t k = read(fd, req + len, sizeof(req) - 1 - len);
                if (k <= 0)
                        return;
                len += (size_t)k;
                req[len] = 0;
                if (!end)
                        end = strstr(req, "\r\n\r\n");
                if (end) {
                        const char *cl = strcasestr(req, "content-length:");
                        size_t want = cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
                        if ((size_t)(end + 4 - req) + want <= len)
                                break;
                }
        }
        if (strncmp(req, "GET /health ", 12) == 0)
                reply(fd, 200, "application/json", "{\"status\":\"ok\"}");
        else if (strncmp(req, "GET /v1/models ", 15) == 0)
                reply(fd, 200, "application/json",
                      "{\"object\":\"list\",\"data\":[{\"id\":\"hold_memory\",\"object\":\"model\"}]}");
        else if (strncmp(req, "POST /v1/chat/completions ", 26) == 0) {
                const char *body = end ? end + 4 : "";
                if (strstr(body, "\"stream\":true") || strstr(body, "\"stream\": true"))
                        reply(fd, 200, "text/event-stream", chat_sse);
                else
                        reply(fd, 200, "application/json", chat_json);
        } else
                reply(fd, 404, "application/json", "{\"error\":\"not found\"}");
}

int main(int argc, char **argv) {
        const char *host = "127.0.0.1";
        int port = -1;
        double gib = 4, linger = 0, busy_s = 0;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (strcmp(argv[i], "--port") == 0)
                        port = atoi(argv[i + 1]);
                else if (strcmp(argv[i], "--host") == 0)
                        host = argv[i + 1];
                else if (strcmp(argv[i], "--gib") == 0)
                        gib = atof(argv[i + 1]);
                else if (strcmp(argv[i], "--linger") == 0)
                        linger = atof(argv[i + 1]);
                else if (strcmp(argv[i], "--busy") == 0)
                        busy_s = atof(argv[i + 1]);
                else {
                        fprintf(stderr, "hold_memory: unknown option '%s'\n", argv[i]);
                        return 2;
                }
        }
        if (port < 0 || gib <= 0) {
                fprintf(stderr, "usage: hold_memory --port PORT [--host H] [--gib N] [--linger S] [--busy S]\n");
                return 2;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns EINTR */
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        char name[256] = "device 0";
        size_t bytes = (size_t)(gib * 1024 * 1024 * 1024);
        /* HOLD_MEMORY_NO_GPU=1: serve without a GPU (to try the HTTP side anywhere) */
        const char *nogpu = getenv("HOLD_MEMORY_NO_GPU");
        bool gpu = !(nogpu && *nogpu == '1');
        if (gpu && hold(bytes, name, sizeof(name)) < 0)
                return 1;
        printf("hold_memory: holding %.1f GiB on %s\n", gib, name);
        fflush(stdout);
        if (gpu && busy_s > 0)
                busy(busy_s);

        int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)port);
        if (inet_pton(AF_INET, host, &a.sin_addr) != 1 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 ||
            listen(ls, 64) < 0) {
                fprintf(stderr, "hold_memory: cannot listen on %s:%d: %s\n", host, port, strerror(errno));
                return 1;
        }
        socklen_t alen = sizeof(a);
        getsockname(ls, (struct sockaddr *)&a, &alen);
        printf("hold_memory: listening on http://%s:%d\n", host, ntohs(a.sin_port));
        fflush(stdout);
        while (!stop) {
                struct pollfd p = {.fd = ls, .events = POLLIN};
                if (poll(&p, 1, -1) <= 0)
                        continue; /* EINTR: a signal; the loop condition decides */
                int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                serve_one(c);
                close(c);
        }
        close(ls);
        printf("hold_memory: signal %d: lingering %.1f s with the memory held\n", (int)stop, linger);
        fflush(stdout);
        if (linger > 0) {
                struct timespec ts = {(time_t)linger, (long)((linger - (double)(time_t)linger) * 1e9)};
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        if (gpu)
                release();
        printf("hold_memory: released, exiting\n");
        return 0;
}
