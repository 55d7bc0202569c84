/* cli_doctor.c -- `gauntlet doctor`: the host fingerprint for a person, or as JSON. */
#include <getopt.h>
#include <jansson.h>
#include <string.h>

#include "cli/cli.h"
#include "proc/gpu.h"
#include "proc/host.h"
#include "io/loop.h"
#include "base/profile.h"
#include "text/text.h"

static void usage(FILE *f) {
        fprintf(f, "usage: gauntlet doctor [--format text|json] [--engine NAME]\n\n"
                   "What gauntlet sees of this host: GPUs (architecture, memory, the processes\n"
                   "holding memory), driver, CUDA, kernel, OS, CPU, memory, how a server's\n"
                   "processes are contained (a cgroup of its own, or found through /proc), and\n"
                   "the version of each engine it can find (llama.cpp, vllm, sglang, trtllm; or\n"
                   "only NAME).\n\n"
                   "  --format FMT   text (default) or json: the fingerprint journaled with sweeps\n"
                   "  --engine NAME  ask only this engine (sglang, vllm, trtllm, llama.cpp,\n"
                   "                 testbed, generic)\n");
}

/* A JSON string or "not found". */
static const char *text_or(json_t *v, const char *absent) {
        return json_is_string(v) ? json_string_value(v) : absent;
}

static void print_text(json_t *fp, const struct gpu *g) {
        json_t *gpus = json_object_get(fp, "gpus");
        if (json_array_size(gpus) == 0) {
                printf("GPUs:     no GPU found (%s)\n", text_or(json_object_get(fp, "gpu_reason"), "no reason given"));
        } else {
                printf("GPUs:     %zu\n", json_array_size(gpus));
                size_t i;
                json_t *o;
                json_array_foreach(gpus, i, o) {
                        printf("  %-2lld %s  %s  %lld MiB, %lld MiB used  %s\n",
                               (long long)json_integer_value(json_object_get(o, "index")),
                               text_or(json_object_get(o, "name"), "(unnamed)"),
                               text_or(json_object_get(o, "arch"), "sm_?"),
                               (long long)json_integer_value(json_object_get(o, "memory_mib")),
                               (long long)json_integer_value(json_object_get(o, "memory_used_mib")),
                               text_or(json_object_get(o, "uuid"), ""));
                        if (i >= g->n_gpus)
                                continue;
                        const struct gpu_info *gi = &g->gpus[i];
                        for (size_t p = 0; p < gi->n_processes; p++) {
                                const struct gpu_process *pr = &gi->processes[p];
                                _cleanup_free_ char *name = text_clean(pr->name, strlen(pr->name), 16);
                                if (pr->used_mib >= 0)
                                        printf("     held by pid %d (%s): %lld MiB\n", (int)pr->pid,
                                               name && name[0] ? name : "?", (long long)pr->used_mib);
                                else
                                        printf("     held by pid %d (%s)\n", (int)pr->pid, name && name[0] ? name : "?");
                        }
                        if (gi->n_processes_dropped)
                                printf("     ... and %zu more processes\n", gi->n_processes_dropped);
                }
        }
        printf("driver:   %s\n", text_or(json_object_get(fp, "driver"), "unknown"));
        printf("CUDA:     %s\n", text_or(json_object_get(fp, "cuda"), "unknown"));
        printf("kernel:   %s\n", text_or(json_object_get(fp, "kernel"), "unknown"));
        printf("OS:       %s\n", text_or(json_object_get(fp, "os"), "unknown"));
        json_t *cpu = json_object_get(fp, "cpu");
        json_t *cores = json_object_get(cpu, "cores");
        if (json_is_integer(cores))
                printf("CPU:      %s (%lld cores)\n", text_or(json_object_get(cpu, "model"), "unknown model"),
                       (long long)json_integer_value(cores));
        else
                printf("CPU:      %s\n", text_or(json_object_get(cpu, "model"), "unknown"));
        json_t *mem = json_object_get(fp, "memory_mib");
        if (json_is_integer(mem))
                printf("memory:   %lld MiB\n", (long long)json_integer_value(mem));
        else
                printf("memory:   unknown\n");
        printf("hostname: %s\n", text_or(json_object_get(fp, "hostname"), "unknown"));
        json_t *cont = json_object_get(fp, "containment");
        if (streq_ptr(json_string_value(json_object_get(cont, "method")), "cgroup"))
                printf("processes: a cgroup v2 of its own for each server, under %s (ended by %s)\n",
                       text_or(json_object_get(cont, "cgroup"), "?"), text_or(json_object_get(cont, "kill"), "?"));
        else
                printf("processes: found through /proc (descendants, session, GAUNTLET_ATTEMPT token, orphans it "
                       "adopted); "
                       "no cgroups: %s\n",
                       text_or(json_object_get(cont, "reason"), "unknown"));
        printf("engines:\n");
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(fp, "engines"), name, v)
                printf("  %-10s %s\n", name, text_or(v, "not found"));
        json_t *py = json_object_get(fp, "python");
        if (json_is_object(py))
                printf("python:   %s (torch %s, flashinfer %s)\n", text_or(json_object_get(py, "version"), "?"),
                       text_or(json_object_get(py, "torch"), "not found"),
                       text_or(json_object_get(py, "flashinfer"), "not found"));
        else if (py)
                printf("python:   python3 not found\n");
}

int cli_doctor(int argc, char **argv) {
        static const struct option options[] = {
                {"format", required_argument, NULL, 'f'},
                {"engine", required_argument, NULL, 'e'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        static const char *const formats[] = {"text", "json", NULL};
        int format = 0;
        const struct profile *p = NULL;
        int c;
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
                switch (c) {
                case 'f':
                        format = cli_parse_choice(optarg, formats);
                        if (format < 0)
                                return cli_usage_error("doctor", "unknown format '%s' (text or json)", optarg);
                        break;
                case 'e':
                        p = profile_find(optarg);
                        if (!p)
                                return cli_usage_error("doctor", "unknown engine '%s'", optarg);
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_OK;
                default:
                        return cli_bad_option("doctor", c, argv);
                }
        }
        if (optind < argc)
                return cli_usage_error("doctor", "unexpected argument '%s'", argv[optind]);

        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_gpu_ struct gpu *g = NULL;
        int r = loop_new(&l);
        if (r >= 0)
                r = gpu_open(&g);
        if (r < 0) {
                cli_error("cannot start: %s", strerror(-r));
                return EXIT_FAILED;
        }
        json_t *fp = NULL;
        r = host_fingerprint_gpu(l, p, g, &fp);
        if (r < 0) {
                cli_error("cannot take the host fingerprint: %s", strerror(-r));
                return EXIT_FAILED;
        }
        if (format == 1) {
                char *s = json_dumps(fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                if (!s) {
                        json_decref(fp);
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                puts(s);
                free(s);
        } else
                print_text(fp, g);
        json_decref(fp);
        return EXIT_OK;
}
