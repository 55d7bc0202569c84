/* host.c -- the host fingerprint, and version commands run as events on the loop. */
#include "proc/host.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include "text/buf.h"
#include "proc/cgroup.h"
#include "proc/spawn.h"
#include "text/text.h"

int host_command_line(const struct spawn_capture *c, char **ret) {
        *ret = NULL;
        if (c->exit_code != 0)
                return 0;
        for (int k = 0; k < 2; k++) {
                const char *s = buf_str(&c->out[k]);
                while (*s) {
                        const char *e = strchr(s, '\n');
                        size_t len = e ? (size_t)(e - s) : strlen(s);
                        _cleanup_free_ char *line = text_clean(s, len, HOST_MAX_LINE);
                        if (!line)
                                return -ENOMEM;
                        if (line[0] && (k == 0 || strcasestr(line, "version"))) {
                                *ret = TAKE_PTR(line);
                                return 0;
                        }
                        s += len + (e ? 1 : 0);
                }
        }
        return 0;
}

int host_run_commands(struct loop *l, struct host_command *cmds, size_t n, usec_t timeout) {
        if (n == 0)
                return 0;
        struct spawn_capture *runs = calloc(n, sizeof(*runs));
        if (!runs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                runs[i] = (struct spawn_capture){.argv = cmds[i].argv, .max_output = HOST_MAX_OUTPUT};
                cmds[i].line = NULL;
        }
        int r = spawn_run_capture(l, runs, n, timeout, SPAWN_CAPTURE_STOP, NULL);
        for (size_t i = 0; i < n; i++) {
                const struct spawn_capture *c = &runs[i];
                int e = c->error;
                /* not installed (or not runnable): null; other spawn failures (descriptors
                 * exhausted) give null as well */
                cmds[i].not_found = !cmds[i].argv || !cmds[i].argv[0] || e == -ENOENT || e == -EACCES ||
                                    e == -ENOEXEC || e == -ENOTDIR;
                cmds[i].exit_status = c->exit_code;
                cmds[i].timed_out = c->timed_out;
                if (r == 0 && host_command_line(c, &cmds[i].line) < 0)
                        r = -ENOMEM;
                spawn_capture_release(&runs[i]);
        }
        free(runs);
        if (r < 0)
                host_commands_release(cmds, n);
        return r;
}

void host_commands_release(struct host_command *cmds, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(TAKE_PTR(cmds[i].line));
}

/* ---- the fingerprint ------------------------------------------------------------------ */

/* Whether an engine's profile is a Python program (torch and flashinfer matter to it). */
static bool host_engine_is_python(const char *engine) {
        static const char *const python[] = {"sglang", "vllm", "trtllm"};
        for (size_t i = 0; engine && i < ELEMENTSOF(python); i++)
                if (strcmp(engine, python[i]) == 0)
                        return true;
        return false;
}

/* A cleaned string, or null; steals nothing. NULL only on ENOMEM. */
static json_t *json_text(const char *s, size_t len) {
        if (!s)
                return json_null();
        _cleanup_free_ char *c = text_clean(s, len, HOST_MAX_LINE);
        if (!c)
                return NULL;
        return json_string(c);
}

static json_t *json_str_or_null(const char *s) {
        return s ? json_text(s, strlen(s)) : json_null();
}

/* Sets key to v, which may be NULL (out of memory): then fails. */
static int set_new(json_t *o, const char *key, json_t *v) {
        if (!v || json_object_set_new(o, key, v) < 0)
                return -ENOMEM;
        return 0;
}

/* The value of "KEY" in a KEY=VALUE file (os-release), quotes removed; NULL if absent. */
static char *os_release_value(const char *key) {
        static const char *const files[] = {"/etc/os-release", "/usr/lib/os-release"};
        for (size_t f = 0; f < ELEMENTSOF(files); f++) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                if (read_file_capped(files[f], 64 << 10, &text, &len) < 0)
                        continue;
                size_t klen = strlen(key);
                for (char *line = text; line && *line;) {
                        char *e = strchr(line, '\n');
                        if (e)
                                *e = 0;
                        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
                                char *v = line + klen + 1;
                                size_t vlen = strlen(v);
                                if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
                                        v++;
                                        vlen -= 2;
                                }
                                return text_clean(v, vlen, HOST_MAX_LINE);
                        }
                        line = e ? e + 1 : NULL;
                }
        }
        return NULL;
}

/* CPU model from /proc/cpuinfo ("model name" on x86, "Model" on some ARM boards). */
static char *cpu_model(void) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (read_file_capped("/proc/cpuinfo", 8 << 20, &text, &len) < 0)
                return NULL;
        static const char *const keys[] = {"model name", "Model", "cpu model"};
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                size_t klen = strlen(keys[k]);
                for (char *line = text; line && *line;) {
                        char *e = strchr(line, '\n');
                        size_t llen = e ? (size_t)(e - line) : strlen(line);
                        if (llen > klen && strncmp(line, keys[k], klen) == 0 &&
                            (line[klen] == '\t' || line[klen] == ' ' || line[klen] == ':')) {
                                char *colon = memchr(line, ':', llen);
                                if (colon)
                                        return text_clean(colon + 1, llen - (size_t)(colon + 1 - line),
                                                               HOST_MAX_LINE);
                        }
                        line = e ? e + 1 : NULL;
                }
        }
        return NULL;
}

/* The GPU part alone: the "gpus" array of the fingerprint. New reference, NULL on ENOMEM. */
static json_t *host_gpus_json(const struct gpu *g) {
        json_t *list = json_array();
        if (!list)
                return NULL;
        for (size_t i = 0; i < g->n_gpus; i++) {
                const struct gpu_info *gi = &g->gpus[i];
                json_t *o = json_object();
                if (!o || json_array_append_new(list, o) < 0 ||
                    set_new(o, "index", json_integer(gi->index)) < 0 ||
                    set_new(o, "name", json_str_or_null(gi->name[0] ? gi->name : NULL)) < 0 ||
                    set_new(o, "uuid", json_str_or_null(gi->uuid[0] ? gi->uuid : NULL)) < 0 ||
                    set_new(o, "arch", json_str_or_null(gi->arch[0] ? gi->arch : NULL)) < 0 ||
                    set_new(o, "memory_mib", json_integer((json_int_t)gi->memory_total_mib)) < 0 ||
                    set_new(o, "memory_used_mib", json_integer((json_int_t)gi->memory_used_mib)) < 0) {
                        json_decref(list);
                        return NULL;
                }
        }
        return list;
}

/* Asked when a Python engine is (storage for the whole run: argv outlives the calls). */
static char *const python_version[] = {"python3", "--version", NULL};
static char *const torch_version[] = {"python3", "-c", "import torch; print(torch.__version__)", NULL};
static char *const flashinfer_version[] = {"python3", "-c", "import flashinfer; print(flashinfer.__version__)",
                                           NULL};

/* The python entry: {"version", "torch", "flashinfer"}, or null without python3. */
static json_t *python_json(const struct host_command *c) {
        if (!c[0].line)
                return json_null();
        const char *v = c[0].line; /* "Python 3.11.2" -> "3.11.2" */
        if (startswith(v, "Python "))
                v += strlen("Python ");
        json_t *o = json_object();
        if (!o || set_new(o, "version", json_str_or_null(v)) < 0 ||
            set_new(o, "torch", json_str_or_null(c[1].line)) < 0 ||
            set_new(o, "flashinfer", json_str_or_null(c[2].line)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* How a server's processes are contained here: {"method": "cgroup", "cgroup": DIR, "kill":
 * "cgroup.kill"|"signals"} or {"method": "procs", "reason": WHY} (cgroup.h). */
static json_t *containment_json(void) {
        struct cgroup_base *b = NULL;
        char *why = NULL;
        json_t *o;
        if (cgroup_base_open(&b, &why) == 0) {
                o = json_pack("{s:s, s:s, s:s}", "method", "cgroup", "cgroup", b->path, "kill",
                              b->has_kill ? "cgroup.kill" : "signals");
                cgroup_base_free(b);
        } else
                o = json_pack("{s:s, s:s?}", "method", "procs", "reason", why);
        free(why);
        return o;
}

/* Everything but the GPUs and the commands. */
static int host_facts(json_t *o) {
        struct utsname u;
        _cleanup_free_ char *kernel = NULL, *os = NULL, *model = NULL;
        if (uname(&u) == 0 && !(kernel = strdup_printf("%s %s %s", u.sysname, u.release, u.machine)))
                return -ENOMEM;
        os = os_release_value("PRETTY_NAME");
        model = cpu_model();
        struct sysinfo si;
        bool have_mem = sysinfo(&si) == 0;
        char hostname[256] = ""; /* the kernel caps it at 64 */
        if (gethostname(hostname, sizeof(hostname) - 1) < 0)
                hostname[0] = 0;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (set_new(o, "kernel", json_str_or_null(kernel)) < 0 || set_new(o, "os", json_str_or_null(os)) < 0 ||
            set_new(o, "cpu", json_object()) < 0)
                return -ENOMEM;
        json_t *cpu = json_object_get(o, "cpu");
        if (set_new(cpu, "model", json_str_or_null(model)) < 0 ||
            set_new(cpu, "cores", cores > 0 ? json_integer(cores) : json_null()) < 0 ||
            set_new(o, "memory_mib",
                    have_mem ? json_integer((json_int_t)((uint64_t)si.totalram * si.mem_unit / (1024 * 1024)))
                             : json_null()) < 0 ||
            set_new(o, "hostname", json_str_or_null(hostname[0] ? hostname : NULL)) < 0 ||
            set_new(o, "containment", containment_json()) < 0)
                return -ENOMEM;
        return 0;
}

int host_fingerprint_gpu(struct loop *l, const struct profile *p, struct gpu *g, json_t **ret) {
        static const char *const usual[] = {"llama.cpp", "vllm", "sglang", "trtllm"};
        const struct profile *engines[ELEMENTSOF(usual)];
        size_t n_engines = 0;
        if (p)
                engines[n_engines++] = p;
        else
                for (size_t i = 0; i < ELEMENTSOF(usual); i++)
                        if ((engines[n_engines] = profile_find(usual[i])))
                                n_engines++;
        bool python = false;
        for (size_t i = 0; i < n_engines; i++)
                python = python || host_engine_is_python(engines[i]->name);

        /* Every command at once: engines, then python3, torch, flashinfer. */
        struct host_command cmds[ELEMENTSOF(usual) + 3] = {0};
        char **argvs[ELEMENTSOF(usual)] = {0};
        size_t n = 0;
        for (size_t i = 0; i < n_engines; i++) {
                int k = profile_version_argv(engines[i]->version_command,
                                             engines[i]->command ? engines[i]->command[0] : NULL, &argvs[i]);
                if (k < 0) {
                        for (size_t j = 0; j < i; j++)
                                strv_free(argvs[j]);
                        return k;
                }
                cmds[n++].argv = argvs[i]; /* NULL: nothing to run */
        }
        size_t py = n;
        if (python) {
                cmds[n++].argv = python_version;
                cmds[n++].argv = torch_version;
                cmds[n++].argv = flashinfer_version;
        }
        int r = host_run_commands(l, cmds, n, HOST_COMMAND_TIMEOUT);
        if (r < 0)
                return r;

        (void)gpu_query(g); /* a failed refresh keeps the last values: still a fingerprint */
        json_t *o = json_object();
        r = -ENOMEM;
        if (!o || set_new(o, "gpus", host_gpus_json(g)) < 0 ||
            set_new(o, "gpu_reason", json_str_or_null(g->n_gpus ? NULL : g->reason)) < 0 ||
            set_new(o, "driver", json_str_or_null(g->driver)) < 0 ||
            set_new(o, "cuda", json_str_or_null(g->cuda)) < 0 || host_facts(o) < 0 ||
            set_new(o, "engines", json_object()) < 0)
                goto out;
        json_t *eng = json_object_get(o, "engines");
        for (size_t i = 0; i < n_engines; i++)
                if (set_new(eng, engines[i]->name, json_str_or_null(cmds[i].line)) < 0)
                        goto out;
        if (python && set_new(o, "python", python_json(&cmds[py])) < 0)
                goto out;
        *ret = TAKE_PTR(o);
        r = 0;
out:
        json_decref(o);
        host_commands_release(cmds, n);
        for (size_t i = 0; i < n_engines; i++)
                strv_free(argvs[i]);
        return r;
}
