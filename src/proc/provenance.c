/* provenance.c -- what a sweep ran with (provenance.h, docs/provenance.md). */
#include "proc/provenance.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/gguf.h"
#include "proc/host.h"
#include "proc/spawn.h"
#include "text/buf.h"
#include "text/secrets.h"
#include "text/text.h"

extern char **environ;

/* Bytes of a file that is neither a GGUF nor a folder hashed from its start. */
#define PROVENANCE_FILE_HEAD ((size_t)1 << 20)
/* A config.json or an index larger than this is not read (an index is a few hundred KiB). */
#define PROVENANCE_INDEX_MAX ((size_t)64 << 20)

/* Reads the versions of the distributions named after the script, from their metadata:
 * no import, so no torch start-up (well under the timeout). One JSON object on stdout. */
static const char libraries_script[] =
        "import json,sys\n"
        "from importlib import metadata\n"
        "d={}\n"
        "for n in sys.argv[1:]:\n"
        "    try: d[n]=metadata.version(n)\n"
        "    except Exception: d[n]=None\n"
        "print(json.dumps(d))\n";

/* Sets key to v (NULL: out of memory, fails). */
static int put(json_t *o, const char *key, json_t *v) {
        if (!v || json_object_set_new(o, key, v) < 0)
                return -ENOMEM;
        return 0;
}

static json_t *str_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

/* gauntlet's environment with env's entries over it (later entries win), as a server gets
 * it. The strings are borrowed; free the array alone. */
static char **merged_env(char *const *env) {
        size_t n = strv_length(environ), k = strv_length(env), m = 0;
        char **v = calloc(n + k + 1, sizeof(*v));
        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(environ[i], '=');
                size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
                bool over = false;
                for (size_t j = 0; j < k && !over; j++)
                        over = strncmp(env[j], environ[i], len) == 0 && env[j][len] == '=';
                if (!over)
                        v[m++] = environ[i];
        }
        for (size_t j = 0; j < k; j++)
                v[m++] = env[j];
        return v;
}

/* The version argv: template with "{program}" filled in. NULL in *ret with a reason when
 * there is nothing to run. */
static int version_argv(const struct provenance_input *in, char ***ret, const char **ret_reason) {
        const char *const *t = in->version_command ? (const char *const *)in->version_command
                                                   : in->profile ? in->profile->version_command : NULL;
        *ret = NULL;
        *ret_reason = NULL;
        if (!t || !t[0]) {
                *ret_reason = "the engine's profile has no version command (version_command: gives one)";
                return 0;
        }
        int r = profile_version_argv(t, in->program, ret);
        if (r == 0)
                *ret_reason = "no program to ask: the matrix names none";
        return r < 0 ? r : 0;
}

static int libraries_argv(const struct profile *p, char ***ret) {
        *ret = NULL;
        if (!p || !p->libraries)
                return 0;
        _cleanup_strv_free_ char **v = NULL;
        if (strv_push(&v, "python3") < 0 || strv_push(&v, "-c") < 0 || strv_push(&v, libraries_script) < 0)
                return -ENOMEM;
        for (const char *const *d = p->libraries; *d; d++)
                if (strv_push(&v, *d) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(v);
        return 0;
}

/* Why a capture gave nothing, in a few words. */
static char *capture_reason(const struct spawn_capture *c) {
        const char *prog = c->argv && c->argv[0] ? c->argv[0] : "?";
        if (c->error == -ENOENT)
                return strdup_printf("%s: not found", prog);
        if (c->error < 0)
                return strdup_printf("%s: cannot start: %s", prog, strerror(-c->error));
        if (c->timed_out)
                return strdup_printf("%s: no answer within %d s", prog, (int)(PROVENANCE_TIMEOUT / USEC_PER_SEC));
        if (c->exit_code != 0)
                return c->exit_code > 0 ? strdup_printf("%s: exited with status %d", prog, c->exit_code)
                                        : strdup_printf("%s: killed by signal %d", prog, c->signal);
        return strdup_printf("%s: printed no version", prog);
}

static json_t *strv_json(char *const *v) {
        json_t *a = json_array();
        for (size_t i = 0; a && v && v[i]; i++) {
                _cleanup_free_ char *s = text_clean(v[i], strlen(v[i]), HOST_MAX_LINE);
                if (!s || json_array_append_new(a, json_string(s)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static json_t *engine_json(const struct provenance_input *in, char *const *argv, const char *no_argv,
                           const struct spawn_capture *c) {
        _cleanup_free_ char *line = NULL, *why = NULL;
        if (c && host_command_line(c, &line) < 0)
                return NULL;
        if (c && !line && !(why = capture_reason(c)))
                return NULL;
        json_t *o = json_object();
        if (!o || put(o, "name", str_or_null(in->profile ? in->profile->name : NULL)) < 0 ||
            put(o, "version", str_or_null(line)) < 0 || put(o, "command", argv ? strv_json(argv) : json_null()) < 0 ||
            put(o, "reason", str_or_null(line ? NULL : c ? why : no_argv)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* The libraries object from the script's output; *ret_reason when it could not be read. */
static json_t *libraries_json(const struct spawn_capture *c, char **ret_reason) {
        *ret_reason = NULL;
        json_t *o = json_object();
        if (!o || !c)
                return o;
        json_t *got = c->error == 0 && c->exit_code == 0 ? json_loads(buf_str(&c->out[0]), 0, NULL) : NULL;
        if (!json_is_object(got)) {
                json_decref(got);
                *ret_reason = c->error == -ENOENT ? strdup("python3: not found")
                              : c->error == 0 && c->exit_code == 0 ? strdup("python3 printed no versions")
                                                                   : capture_reason(c);
                if (!*ret_reason) {
                        json_decref(o);
                        return NULL;
                }
                return o;
        }
        const char *k;
        json_t *v;
        json_object_foreach(got, k, v) {
                const char *s = json_string_value(v);
                _cleanup_free_ char *key = text_clean(k, strlen(k), HOST_MAX_LINE);
                _cleanup_free_ char *val = s ? text_clean(s, strlen(s), HOST_MAX_LINE) : NULL;
                if (!key || (s && !val) || put(o, key, str_or_null(val)) < 0) {
                        json_decref(got);
                        json_decref(o);
                        return NULL;
                }
        }
        json_decref(got);
        return o;
}

/* ---- the model ------------------------------------------------------------------------- */

static char *iso_time(time_t t) {
        struct tm tm;
        char s[32];
        if (!gmtime_r(&t, &tm) || strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return strdup("?");
        return strdup(s);
}

static uint64_t fnv_u64(uint64_t h, uint64_t x) {
        uint8_t b[8];
        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(x >> (8 * i));
        return fnv1a(h, b, sizeof(b));
}

/* A GGUF: its size, then its bytes up to the end of the key-value section. */
static int hash_gguf(const char *path, uint64_t size, uint64_t *ret, char **ret_hashed) {
        _cleanup_free_ char *err = NULL;
        struct gguf_meta *m = NULL;
        int r = gguf_meta_read(path, 0, &m, &err);
        if (r < 0)
                return r;
        *ret = fnv1a(fnv_u64(FNV_SEED, size), m->base, m->end);
        *ret_hashed = strdup_printf("size and header with metadata (%zu bytes; not the tensors)", m->end);
        gguf_meta_free(m);
        return *ret_hashed ? 0 : -ENOMEM;
}

/* Any other file: its size and its first PROVENANCE_FILE_HEAD bytes. */
static int hash_head(const char *path, uint64_t size, uint64_t *ret, char **ret_hashed) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r = read_fd_upto(fd, PROVENANCE_FILE_HEAD, &data, &len);
        if (r < 0)
                return r;
        *ret = fnv1a(fnv_u64(FNV_SEED, size), data, len);
        *ret_hashed = strdup_printf("size and first %zu bytes", len);
        return *ret_hashed ? 0 : -ENOMEM;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder: config.json and every *.safetensors.index.json, names and bytes, in name order;
 * the size and the newest mtime of its files. */
static int hash_folder(const char *path, uint64_t *ret, uint64_t *ret_size, time_t *ret_mtime, char **ret_hashed) {
        DIR *d = opendir(path);
        if (!d)
                return -errno;
        _cleanup_strv_free_ char **names = NULL;
        uint64_t size = 0;
        time_t newest = 0;
        int r = 0;
        for (struct dirent *e; (e = readdir(d));) {
                struct stat st;
                if (fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                size += (uint64_t)st.st_size;
                if (st.st_mtime > newest)
                        newest = st.st_mtime;
                if ((strcmp(e->d_name, "config.json") == 0 || endswith(e->d_name, ".safetensors.index.json")) &&
                    (r = strv_push(&names, e->d_name)) < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;
        if (!names)
                return -ENOENT;
        qsort(names, strv_length(names), sizeof(*names), name_cmp);
        uint64_t h = FNV_SEED;
        for (size_t i = 0; names[i]; i++) {
                _cleanup_free_ char *file = strdup_printf("%s/%s", path, names[i]), *data = NULL;
                size_t len;
                if (!file)
                        return -ENOMEM;
                if ((r = read_file_capped(file, PROVENANCE_INDEX_MAX, &data, &len)) < 0)
                        return r;
                h = fnv1a(fnv1a(h, names[i], strlen(names[i]) + 1), data, len);
        }
        _cleanup_free_ char *list = NULL;
        for (size_t i = 0; names[i]; i++) {
                char *l = strdup_printf("%s%s%s", list ? list : "", list ? ", " : "", names[i]);
                if (!l)
                        return -ENOMEM;
                free(list);
                list = l;
        }
        *ret = h;
        *ret_size = size;
        *ret_mtime = newest;
        *ret_hashed = strdup_printf("%s (not the weights)", list);
        return *ret_hashed ? 0 : -ENOMEM;
}

json_t *provenance_model(const char *path) {
        json_t *o = json_pack("{s:o, s:n, s:n, s:n, s:n, s:n, s:n}", "path", str_or_null(path), "kind", "size", "mtime",
                              "hash", "hashed", "reason");
        if (!o)
                return NULL;
        struct stat st;
        _cleanup_free_ char *hashed = NULL, *why = NULL, *mtime = NULL, *hash = NULL;
        const char *kind = NULL;
        uint64_t h = 0, size = 0;
        time_t mt = 0;
        int r;
        if (!path)
                why = strdup("the matrix names no model");
        else if (stat(path, &st) < 0)
                why = strdup_printf("%s: %s (a hub name is not read)", path, strerror(errno));
        else if (S_ISDIR(st.st_mode)) {
                kind = "folder";
                if ((r = hash_folder(path, &h, &size, &mt, &hashed)) < 0)
                        why = strdup_printf("%s: %s", path, r == -ENOENT ? "no config.json or *.safetensors.index.json"
                                                                         : file_strerror(r));
        } else if (S_ISREG(st.st_mode)) {
                size = (uint64_t)st.st_size;
                mt = st.st_mtime;
                kind = "gguf";
                if ((r = hash_gguf(path, size, &h, &hashed)) == -EBADMSG || r == -EFBIG) {
                        kind = "file";
                        r = hash_head(path, size, &h, &hashed);
                }
                if (r < 0)
                        why = strdup_printf("%s: %s", path, file_strerror(r));
        } else
                why = strdup_printf("%s: not a file or a folder", path);
        if ((!why && !hashed) || (why && !why[0]))
                goto oom;
        if (kind && put(o, "kind", json_string(kind)) < 0)
                goto oom;
        if (!why) {
                if (!(mtime = iso_time(mt)) || !(hash = strdup_printf("fnv1a64:%016llx", (unsigned long long)h)) ||
                    put(o, "size", json_integer((json_int_t)size)) < 0 || put(o, "mtime", json_string(mtime)) < 0 ||
                    put(o, "hash", json_string(hash)) < 0 || put(o, "hashed", json_string(hashed)) < 0)
                        goto oom;
        } else {
                _cleanup_free_ char *c = text_clean(why, strlen(why), HOST_MAX_LINE);
                if (!c || put(o, "reason", json_string(c)) < 0)
                        goto oom;
        }
        return o;
oom:
        json_decref(o);
        return NULL;
}

/* ---- the GPU, from the fingerprint ---------------------------------------------------- */

static json_t *gpu_json(const char *host_json) {
        json_t *h = host_json ? json_loads(host_json, 0, NULL) : NULL;
        json_t *names = json_array(), *gpus = json_object_get(h, "gpus");
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g) {
                json_t *n = json_object_get(g, "name");
                if (names && json_is_string(n))
                        json_array_append(names, n);
        }
        json_t *driver = json_object_get(h, "driver"), *cuda = json_object_get(h, "cuda");
        json_t *o = names ? json_pack("{s:o, s:O, s:O}", "names", names, "driver",
                                      json_is_string(driver) ? driver : json_null(), "cuda",
                                      json_is_string(cuda) ? cuda : json_null())
                          : NULL;
        json_decref(h);
        return o;
}

/* ---- gathering ------------------------------------------------------------------------ */

/* What is run for one environment: the version, then the libraries (either may be NULL). */
struct prov_env {
        char **env;        /* merged; the strings borrowed */
        char **argv[2];
};

static void prov_env_release(struct prov_env *p) {
        free(p->env);
        strv_free(p->argv[0]);
        strv_free(p->argv[1]);
}

static json_t *one_json(const struct provenance_input *in, const struct prov_env *pe, const char *no_version,
                        char *const *cell_env, const struct spawn_capture *ver, const struct spawn_capture *lib,
                        const json_t *model, const json_t *gpu) {
        _cleanup_free_ char *lib_why = NULL;
        _cleanup_strv_free_ char **masked = NULL;
        if (secrets_mask_env(cell_env, &masked) < 0)
                return NULL;
        json_t *o = json_object();
        if (!o || put(o, "engine", engine_json(in, pe->argv[0], no_version, ver)) < 0 ||
            put(o, "libraries", libraries_json(lib, &lib_why)) < 0 ||
            put(o, "libraries_reason", str_or_null(lib_why)) < 0 || put(o, "model", json_deep_copy(model)) < 0 ||
            put(o, "gpu", json_deep_copy(gpu)) < 0 || put(o, "env", strv_json(masked)) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

int provenance_gather(struct loop *l, const struct provenance_input *in, char *const *const *envs, size_t n,
                      json_t **ret) {
        _cleanup_json_ json_t *model = provenance_model(in->model), *gpu = gpu_json(in->host_json);
        struct prov_env *pe = calloc(n ? n : 1, sizeof(*pe));
        struct spawn_capture *runs = calloc(2 * (n ? n : 1), sizeof(*runs));
        struct spawn_capture **at = calloc(2 * (n ? n : 1), sizeof(*at)); /* each env's two, or NULL */
        const char *no_version = NULL;
        int r = model && gpu && pe && runs && at ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < n; i++) {
                if (!(pe[i].env = merged_env(envs[i])) || (r = version_argv(in, &pe[i].argv[0], &no_version)) < 0 ||
                    (r = libraries_argv(in->profile, &pe[i].argv[1])) < 0)
                        r = r < 0 ? r : -ENOMEM;
        }
        /* every command of every environment at once: the whole costs one timeout at most */
        size_t n_runs = 0;
        for (size_t i = 0; r == 0 && i < n; i++)
                for (int k = 0; k < 2; k++) {
                        if (pe[i].argv[k]) {
                                runs[n_runs] = (struct spawn_capture){
                                        .argv = pe[i].argv[k], .env = pe[i].env, .max_output = HOST_MAX_OUTPUT};
                                at[2 * i + k] = &runs[n_runs++];
                        }
                }
        if (r == 0 && n_runs)
                r = spawn_run_capture(l, runs, n_runs, PROVENANCE_TIMEOUT, SPAWN_CAPTURE_STOP, NULL);
        for (size_t i = 0; r == 0 && i < n; i++)
                if (!(ret[i] = one_json(in, &pe[i], no_version, envs[i], at[2 * i], at[2 * i + 1], model, gpu)))
                        r = -ENOMEM;
        if (r < 0)
                for (size_t i = 0; i < n; i++)
                        json_decref(TAKE_PTR(ret[i]));
        for (size_t i = 0; runs && i < n_runs; i++)
                spawn_capture_release(&runs[i]);
        for (size_t i = 0; pe && i < n; i++)
                prov_env_release(&pe[i]);
        free(at);
        free(runs);
        free(pe);
        return r;
}

/* ---- changes -------------------------------------------------------------------------- */

/* A value as words: a string as it is, a number, a list joined by ", ", null "unknown". */
static char *words(const json_t *v) {
        if (json_is_string(v))
                return strdup(json_string_value(v));
        if (json_is_integer(v))
                return strdup_printf("%lld", (long long)json_integer_value(v));
        if (json_is_array(v)) {
                struct buf b;
                buf_init(&b, 0);
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e) {
                        _cleanup_free_ char *w = words(e);
                        if (!w || buf_printf(&b, "%s%s", i ? ", " : "", w) < 0) {
                                buf_release(&b);
                                return NULL;
                        }
                }
                return b.len ? buf_detach(&b) : (buf_release(&b), strdup("none"));
        }
        return strdup("unknown");
}

/* "LABEL: A -> B" when a and b differ (as words). */
static int change(char ***lines, const char *label, const json_t *a, const json_t *b) {
        _cleanup_free_ char *x = words(a), *y = words(b);
        if (!x || !y)
                return -ENOMEM;
        if (strcmp(x, y) == 0)
                return 0;
        return strv_consume(lines, strdup_printf("%s: %s -> %s", label, x, y));
}

static json_t *at2(const json_t *o, const char *k1, const char *k2) {
        return json_object_get(json_object_get(o, k1), k2);
}

/* Entries of a not in b, as "+X"/"-X" words with sign. */
static int env_changes(struct buf *b, const json_t *a, const json_t *bb, char sign) {
        size_t i, j;
        json_t *e, *f;
        json_array_foreach(a, i, e) {
                bool found = false;
                json_array_foreach(bb, j, f) found = found || json_equal(e, f);
                if (!found && json_is_string(e) && buf_printf(b, " %c%s", sign, json_string_value(e)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int provenance_diff(const json_t *a, const json_t *b, char ***ret) {
        _cleanup_strv_free_ char **lines = NULL;
        int r;
        if (!(lines = calloc(1, sizeof(*lines)))) /* an empty list, not NULL */
                return -ENOMEM;
        if ((r = change(&lines, "engine", at2(a, "engine", "name"), at2(b, "engine", "name"))) < 0 ||
            (r = change(&lines, "engine version", at2(a, "engine", "version"), at2(b, "engine", "version"))) < 0)
                return r;
        /* the program the version was asked of, as PATH found it: two builds that print one
         * version (llama-server's "version: 0 (unknown)") still differ by where they are */
        if ((r = change(&lines, "engine program", json_array_get(at2(a, "engine", "command"), 0),
                        json_array_get(at2(b, "engine", "command"), 0))) < 0)
                return r;
        /* the libraries of either side, a's order then b's new ones */
        const json_t *la = json_object_get(a, "libraries"), *lb = json_object_get(b, "libraries");
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)la, k, v) if ((r = change(&lines, k, v, json_object_get(lb, k))) < 0) return r;
        json_object_foreach((json_t *)lb, k, v) if (!json_object_get(la, k) && (r = change(&lines, k, NULL, v)) < 0) return r;
        if ((r = change(&lines, "model", at2(a, "model", "path"), at2(b, "model", "path"))) < 0 ||
            (r = change(&lines, "model size", at2(a, "model", "size"), at2(b, "model", "size"))) < 0)
                return r;
        _cleanup_free_ char *ha = words(at2(a, "model", "hash")), *hb = words(at2(b, "model", "hash"));
        if (!ha || !hb)
                return -ENOMEM;
        if (strcmp(ha, hb) != 0 && (r = strv_consume(&lines, strdup_printf("model hash changed (%s -> %s)", ha, hb))) < 0)
                return r;
        if ((r = change(&lines, "model mtime", at2(a, "model", "mtime"), at2(b, "model", "mtime"))) < 0 ||
            (r = change(&lines, "GPU", at2(a, "gpu", "names"), at2(b, "gpu", "names"))) < 0 ||
            (r = change(&lines, "driver", at2(a, "gpu", "driver"), at2(b, "gpu", "driver"))) < 0 ||
            (r = change(&lines, "CUDA", at2(a, "gpu", "cuda"), at2(b, "gpu", "cuda"))) < 0)
                return r;
        struct buf e;
        buf_init(&e, 0);
        if ((r = env_changes(&e, json_object_get(a, "env"), json_object_get(b, "env"), '-')) < 0 ||
            (r = env_changes(&e, json_object_get(b, "env"), json_object_get(a, "env"), '+')) < 0 ||
            (e.len && (r = strv_consume(&lines, strdup_printf("environment:%s", buf_str(&e)))) < 0)) {
                buf_release(&e);
                return r;
        }
        buf_release(&e);
        *ret = TAKE_PTR(lines);
        return 0;
}
