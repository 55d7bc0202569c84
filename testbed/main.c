/* main.c -- gauntlet-testbed: flags, model loading, the serving loop, and how it dies. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern.h"
#include "model.h"
#include "server.h"
#include "synth.h"
#include "base/util.h"

#define VERSION "0.1.0"
#define PROG "gauntlet-testbed"

static void usage(FILE *f) {
        fprintf(f,
                "usage: " PROG " [--port P] [--host H] [--model FILE] [--moe-backend B] [--gemm-backend B]\n"
                "                        [--device-arch sm_90|sm_100|sm_120] [--mem-budget SIZE] [--threads N]\n"
                "                        [--slow-load SEC] [--hang-at-load] [--die-after-requests N]\n"
                "                        [--stall-mid-stream] [--malformed-sse] [--http-500] [--close-mid-stream]\n"
                "                        [--batch-fault] [--max-queue N] [--wrong-answers N]\n"
                "                        [--fault-context N] [--fault-sampling] [--fault-turn N] [--fault-batch N]\n"
                "                        [--token-delay MS]\n"
                "\n"
                "A small real MoE inference server with an OpenAI-compatible API (docs/testbed.md).\n"
                "  --moe-backend, --gemm-backend  auto reference nvfp4 nvfp4-swizzled tcgen05 fp16acc\n"
                "                                 (shuffled: --moe-backend only)\n"
                "  --mem-budget SIZE              emulated device memory for weights, e.g. 24M (0: unlimited)\n"
                "  --threads N                    generations running at once (default 4)\n"
                "  --wrong-answers N              one prompt in N (by a hash of its text) gets the first digit\n"
                "                                 of its answer changed (a scripted fault, docs/testbed.md)\n"
                "Faults only some requests see (docs/testbed.md); all other requests are answered as without them:\n"
                "  --fault-context N              a token chosen with N or more tokens of context (prompt plus\n"
                "                                 tokens generated) is '+': '++++' to max_tokens\n"
                "  --fault-sampling               requests with temperature > 0 collapse into mixed-script salad\n"
                "                                 (the same for a seed); greedy ones are untouched\n"
                "  --fault-turn N                 chats with N or more user messages (N >= 2): the FP8 KV cache\n"
                "                                 of the earlier turns has the wrong scale; NaN, so '!!!!'\n"
                "  --fault-batch N                while N or more generations run at once (--threads >= N), the\n"
                "                                 second digit of every number sent is one lower (323 -> 313)\n"
                "  --token-delay MS               an honest pause after every generated token (or 5ms, 1s)\n"
                "  --write-random-model FILE      write a random-weight model in the same format, and exit\n"
                "  --random-seed N, --random-scale X   its seed (default 1) and weight range (default 0.08;\n"
                "                                 0: every weight zero, so every logit ties)\n"
                "The model defaults to $GAUNTLET_TESTBED_MODEL, else testbed/model.gguf of the source tree.\n");
}

/* argparse's wording, so the harness's config signature ("invalid choice: ") applies. */
static int invalid_choice(const char *flag, const char *value, bool moe) {
        fprintf(stderr, PROG ": error: argument %s: invalid choice: '%s' (choose from", flag, value);
        for (int b = 0; b < KERN_BACKEND_COUNT; b++)
                if (kern_backend_valid_for((enum kern_backend)b, moe ? KERN_ROLE_MOE : KERN_ROLE_GEMM))
                        fprintf(stderr, "%s'%s'", b ? ", " : " ", kern_backend_name((enum kern_backend)b));
        fprintf(stderr, ")\n");
        return 2;
}

/* "24M", "1G", "512K", "1048576": binary units. */
static int parse_size(const char *s, size_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || s[0] == '-')
                return -EINVAL;
        unsigned shift = 0;
        if (*end) {
                switch (*end) {
                case 'k':
                case 'K':
                        shift = 10;
                        break;
                case 'm':
                case 'M':
                        shift = 20;
                        break;
                case 'g':
                case 'G':
                        shift = 30;
                        break;
                default:
                        return -EINVAL;
                }
                end++;
                if (*end == 'i')
                        end++;
                if (*end == 'B' || *end == 'b')
                        end++;
                if (*end)
                        return -EINVAL;
        }
        if (v > (SIZE_MAX >> shift))
                return -ERANGE;
        *ret = (size_t)v << shift;
        return 0;
}

static int parse_int(const char *s, long lo, long hi, long *ret) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < lo || v > hi)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* testbed/model.gguf next to the build: the binary lives in BUILD/bin/. */
static char *default_model_path(void) {
        const char *env = getenv("GAUNTLET_TESTBED_MODEL");
        if (env && *env)
                return strdup(env);
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return strdup("testbed/model.gguf");
        exe[n] = 0;
        char *dir = dirname(exe);
        return strdup_printf("%s/../../testbed/model.gguf", dir);
}

static void die_after_requests(unsigned n) {
        fprintf(stderr, PROG ": injected fault: aborting after %u completed requests (--die-after-requests)\n", n);
        abort();
}

/* Waits for SIGTERM/SIGINT (blocked in every thread), for at most timeout (NULL: forever).
 * Returns the signal, or 0 when the time ran out. */
static int wait_signal(const sigset_t *set, const struct timespec *timeout) {
        for (;;) {
                int sig = timeout ? sigtimedwait(set, NULL, timeout) : sigwaitinfo(set, NULL);
                if (sig > 0)
                        return sig;
                if (errno == EAGAIN)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}

int main(int argc, char **argv) {
        enum {
                OPT_PORT = 256,
                OPT_HOST,
                OPT_MODEL,
                OPT_MOE,
                OPT_GEMM,
                OPT_ARCH,
                OPT_BUDGET,
                OPT_THREADS,
                OPT_SLOW,
                OPT_HANG,
                OPT_DIE,
                OPT_STALL,
                OPT_MALFORMED,
                OPT_500,
                OPT_CLOSE,
                OPT_BATCH_FAULT,
                OPT_MAX_QUEUE,
                OPT_VERSION,
                OPT_HELP,
                OPT_WRITE_RANDOM,
                OPT_RANDOM_SEED,
                OPT_RANDOM_SCALE,
                OPT_WRONG,
                OPT_FAULT_CONTEXT,
                OPT_FAULT_SAMPLING,
                OPT_FAULT_TURN,
                OPT_FAULT_BATCH,
                OPT_TOKEN_DELAY,
        };
        static const struct option longopts[] = {
                {"port", required_argument, NULL, OPT_PORT},
                {"host", required_argument, NULL, OPT_HOST},
                {"model", required_argument, NULL, OPT_MODEL},
                {"moe-backend", required_argument, NULL, OPT_MOE},
                {"gemm-backend", required_argument, NULL, OPT_GEMM},
                {"device-arch", required_argument, NULL, OPT_ARCH},
                {"mem-budget", required_argument, NULL, OPT_BUDGET},
                {"threads", required_argument, NULL, OPT_THREADS},
                {"slow-load", required_argument, NULL, OPT_SLOW},
                {"hang-at-load", no_argument, NULL, OPT_HANG},
                {"die-after-requests", required_argument, NULL, OPT_DIE},
                {"stall-mid-stream", no_argument, NULL, OPT_STALL},
                {"malformed-sse", no_argument, NULL, OPT_MALFORMED},
                {"http-500", no_argument, NULL, OPT_500},
                {"close-mid-stream", no_argument, NULL, OPT_CLOSE},
                {"wrong-answers", required_argument, NULL, OPT_WRONG},
                {"batch-fault", no_argument, NULL, OPT_BATCH_FAULT},
                {"max-queue", required_argument, NULL, OPT_MAX_QUEUE},
                {"fault-context", required_argument, NULL, OPT_FAULT_CONTEXT},
                {"fault-sampling", no_argument, NULL, OPT_FAULT_SAMPLING},
                {"fault-turn", required_argument, NULL, OPT_FAULT_TURN},
                {"fault-batch", required_argument, NULL, OPT_FAULT_BATCH},
                {"token-delay", required_argument, NULL, OPT_TOKEN_DELAY},
                {"version", no_argument, NULL, OPT_VERSION},
                {"help", no_argument, NULL, OPT_HELP},
                {"write-random-model", required_argument, NULL, OPT_WRITE_RANDOM},
                {"random-seed", required_argument, NULL, OPT_RANDOM_SEED},
                {"random-scale", required_argument, NULL, OPT_RANDOM_SCALE},
                {NULL, 0, NULL, 0},
        };
        struct server_opts so = {.host = "127.0.0.1", .port = 8080, .max_active = 4, .on_die = die_after_requests};
        struct model_opts mo = {.moe = KERN_AUTO, .gemm = KERN_AUTO, .arch = KERN_SM90};
        _cleanup_free_ char *model_path = NULL;
        const char *random_path = NULL;
        struct synth_cfg synth = synth_default();
        usec_t slow_load = 0;
        bool hang = false;
        long v;
        int c;

        setvbuf(stderr, NULL, _IOLBF, 0);
        while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
                switch (c) {
                case OPT_PORT:
                        if (parse_int(optarg, 0, 65535, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --port: invalid int value: '%s'\n", optarg);
                                return 2;
                        }
                        so.port = (int)v;
                        break;
                case OPT_HOST:
                        so.host = optarg;
                        break;
                case OPT_MODEL:
                        free(model_path);
                        model_path = strdup(optarg);
                        break;
                case OPT_MOE:
                        if (kern_backend_from_name(optarg, &mo.moe) < 0)
                                return invalid_choice("--moe-backend", optarg, true);
                        break;
                case OPT_GEMM:
                        if (kern_backend_from_name(optarg, &mo.gemm) < 0 ||
                            !kern_backend_valid_for(mo.gemm, KERN_ROLE_GEMM))
                                return invalid_choice("--gemm-backend", optarg, false);
                        break;
                case OPT_ARCH:
                        if (kern_arch_from_name(optarg, &mo.arch) < 0) {
                                fprintf(stderr,
                                        PROG ": error: argument --device-arch: invalid choice: '%s' (choose from "
                                             "'sm_90', 'sm_100', 'sm_120')\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case OPT_BUDGET:
                        if (parse_size(optarg, &mo.mem_budget) < 0) {
                                fprintf(stderr, PROG ": error: argument --mem-budget: invalid size: '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_THREADS:
                        if (parse_int(optarg, 1, 1024, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --threads: invalid int value: '%s'\n", optarg);
                                return 2;
                        }
                        so.max_active = (int)v;
                        break;
                case OPT_SLOW:
                        if (parse_duration(optarg, &slow_load) < 0) {
                                fprintf(stderr, PROG ": error: argument --slow-load: invalid duration: '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_HANG:
                        hang = true;
                        break;
                case OPT_DIE:
                        if (parse_int(optarg, 1, INT_MAX, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --die-after-requests: invalid int value: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        so.die_after = (unsigned)v;
                        break;
                case OPT_STALL:
                        so.stall_mid_stream = true;
                        break;
                case OPT_MALFORMED:
                        so.malformed_sse = true;
                        break;
                case OPT_500:
                        so.http_500 = true;
                        break;
                case OPT_CLOSE:
                        so.close_mid_stream = true;
                        break;
                case OPT_WRONG:
                        if (parse_int(optarg, 1, INT_MAX, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --wrong-answers: invalid int value: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        so.wrong_answers = (unsigned)v;
                        break;
                case OPT_BATCH_FAULT:
                        so.batch_fault = true;
                        break;
                case OPT_MAX_QUEUE:
                        if (parse_int(optarg, 1, 1000000, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --max-queue: invalid int value: '%s'\n", optarg);
                                return 2;
                        }
                        so.max_queue = (int)v;
                        break;
                case OPT_FAULT_CONTEXT:
                        if (parse_int(optarg, 1, 1 << 20, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --fault-context: invalid int value: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        so.fault_context = (int)v;
                        break;
                case OPT_FAULT_SAMPLING:
                        so.fault_sampling = true;
                        break;
                case OPT_FAULT_TURN:
                        if (parse_int(optarg, 2, 1 << 20, &v) < 0) {
                                fprintf(stderr,
                                        PROG ": error: argument --fault-turn: invalid int value: '%s' (at least 2)\n",
                                        optarg);
                                return 2;
                        }
                        so.fault_turn = (int)v;
                        break;
                case OPT_FAULT_BATCH:
                        if (parse_int(optarg, 1, 1024, &v) < 0) {
                                fprintf(stderr, PROG ": error: argument --fault-batch: invalid int value: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        so.fault_batch = (int)v;
                        break;
                case OPT_TOKEN_DELAY:
                        /* milliseconds, or a duration with its unit */
                        if (parse_int(optarg, 0, 60000, &v) == 0)
                                so.token_delay = (usec_t)v * USEC_PER_MSEC;
                        else if (parse_duration(optarg, &so.token_delay) < 0 || so.token_delay > 60 * USEC_PER_SEC) {
                                fprintf(stderr, PROG ": error: argument --token-delay: invalid duration: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case OPT_VERSION:
                        printf(PROG " " VERSION "\n");
                        return fclose(stdout) == 0 ? 0 : 1;
                case OPT_HELP:
                        usage(stdout);
                        return fclose(stdout) == 0 ? 0 : 1;
                case OPT_WRITE_RANDOM:
                        random_path = optarg;
                        break;
                case OPT_RANDOM_SEED: {
                        char *end;
                        errno = 0;
                        unsigned long long seed = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || optarg[0] == '-') {
                                fprintf(stderr, PROG ": error: argument --random-seed: not a number: '%s'\n", optarg);
                                return 2;
                        }
                        synth.seed = seed;
                        break;
                }
                case OPT_RANDOM_SCALE: {
                        char *end;
                        errno = 0;
                        double scale = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(scale >= 0 && scale <= 100)) {
                                fprintf(stderr, PROG ": error: argument --random-scale: not a number in 0..100: '%s'\n",
                                        optarg);
                                return 2;
                        }
                        synth.scale = (float)scale;
                        break;
                }
                default:
                        fprintf(stderr, PROG ": try '" PROG " --help'\n");
                        return 2;
                }
        }
        if (random_path) {
                /* a testing aid: the spec's architecture with random weights */
                int r = synth_model_write(&synth, random_path);
                if (r < 0) {
                        fprintf(stderr, PROG ": cannot write '%s': %s\n", random_path, strerror(-r));
                        return 1;
                }
                return 0;
        }
        if (optind < argc) {
                fprintf(stderr, PROG ": error: unrecognized arguments: %s\n", argv[optind]);
                return 2;
        }
        if (so.fault_batch > so.max_active) {
                fprintf(stderr, PROG ": error: argument --fault-batch: %d generations never run at once with --threads %d\n",
                        so.fault_batch, so.max_active);
                return 2;
        }
        if (mo.moe != KERN_AUTO && !kern_backend_valid_for(mo.moe, KERN_ROLE_MOE))
                return invalid_choice("--moe-backend", kern_backend_name(mo.moe), true);
        if (!model_path)
                model_path = default_model_path();
        if (!model_path) {
                fprintf(stderr, PROG ": out of memory\n");
                return 1;
        }

        /* signals are taken synchronously by this thread; every server thread inherits the mask */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        signal(SIGPIPE, SIG_IGN);

        struct server *srv = NULL;
        char *err = NULL;
        /* an IPv6 address goes in brackets in a URL */
        const char *lb = strchr(so.host, ':') ? "[" : "", *rb = *lb ? "]" : "";
        int r = server_start(&so, &srv, &err);
        if (r < 0) {
                fprintf(stderr, PROG ": %s\n", err ? err : strerror(-r));
                free(err);
                return 1;
        }
        fprintf(stderr,
                PROG ": loading %s (device %s, moe backend %s, gemm backend %s); http://%s%s%s:%d/health answers "
                     "503 until ready\n",
                model_path, kern_arch_name(mo.arch), kern_backend_name(mo.moe), kern_backend_name(mo.gemm), lb, so.host,
                rb, server_port(srv));
        if (hang) {
                fprintf(stderr, PROG ": injected fault: hanging at load (--hang-at-load)\n");
                wait_signal(&set, NULL);
                server_stop(srv);
                return 1;
        }
        if (slow_load) {
                fprintf(stderr, PROG ": injected fault: loading slowly (--slow-load)\n");
                struct timespec ts = {.tv_sec = (time_t)(slow_load / USEC_PER_SEC),
                                      .tv_nsec = (long)(slow_load % USEC_PER_SEC) * 1000};
                if (wait_signal(&set, &ts) > 0) {
                        server_stop(srv);
                        return 1;
                }
        }
        usec_t t0 = now_usec();
        struct model *m = NULL;
        r = model_load(model_path, &mo, &m, &err);
        if (r == -ENOEXEC) {
                /* as torch reports a kernel launch for an architecture the binary lacks */
                fprintf(stderr,
                        PROG ": backend tcgen05 has kernels for sm_100a only; this device is %s\n"
                             "RuntimeError: %s\n"
                             "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                             "stacktrace below might be incorrect.\n"
                             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n",
                        kern_arch_name(mo.arch), err ? err : "CUDA error: no kernel image is available");
                free(err);
                server_stop(srv);
                return 1;
        }
        if (r == -ENOMEM) {
                /* the way an OOM ends a GPU server: the allocation failure, then the process is gone */
                fprintf(stderr, PROG ": %s\n", err ? err : "out of memory");
                fflush(stderr);
                raise(SIGKILL);
        }
        if (r < 0) {
                fprintf(stderr, PROG ": cannot load model: %s\n", err ? err : strerror(-r));
                free(err);
                server_stop(srv);
                return 1;
        }
        fprintf(stderr,
                PROG ": Using %s MoE backend and %s GEMM backend on %s\n" PROG
                     ": model '%s': %d blocks, %d experts (top %d), vocabulary %d, context %d; weights %.1f MiB "
                     "(peak %.1f MiB, budget %s), loaded in %llu ms\n",
                kern_backend_name(m->moe), kern_backend_name(m->gemm), kern_arch_name(m->arch), m->name, m->hp.n_layer,
                m->hp.n_expert, m->hp.n_expert_used, m->hp.n_vocab, m->hp.n_ctx, (double)m->mem_used / 1048576.0,
                (double)m->mem_peak / 1048576.0, mo.mem_budget ? "set" : "unlimited",
                (unsigned long long)((now_usec() - t0) / USEC_PER_MSEC));
        server_set_model(srv, m);
        fprintf(stderr, PROG ": listening on http://%s%s%s:%d\n", lb, so.host, rb, server_port(srv));

        int sig = wait_signal(&set, NULL);
        fprintf(stderr, PROG ": %s received, shutting down\n", sig > 0 ? strsignal(sig) : "signal");
        server_stop(srv);
        model_free(m);
        return 0;
}
