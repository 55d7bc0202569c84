/* cgroup.c -- a server's own cgroup v2: where the hierarchy is, making, killing, removing. */
#include "proc/cgroup.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

/* mountinfo writes space, tab, newline and backslash in paths as \040 \011 \012 \134. */
static void unescape(char *s) {
        char *w = s;
        for (char *p = s; *p;) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 4;
                } else
                        *w++ = *p++;
        }
        *w = '\0';
}

int cgroup_v2_dir(const char *mountinfo, const char *cg, char **ret) {
        _cleanup_free_ char *text = strdup(mountinfo);
        if (!text)
                return -ENOMEM;
        bool any = false;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
                char *sep = strstr(line, " - ");
                if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
                        continue;
                *sep = '\0';
                char *field[5] = {NULL}, *save = NULL;
                char *tok = strtok_r(line, " ", &save);
                for (int k = 0; tok && k < 5; k++, tok = strtok_r(NULL, " ", &save))
                        field[k] = tok;
                if (!field[4])
                        continue;
                any = true;
                char *root = field[3], *mp = field[4];
                unescape(root);
                unescape(mp);
                size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
                if (rl && (strncmp(cg, root, rl) != 0 || (cg[rl] != '/' && cg[rl] != '\0')))
                        continue;
                const char *rest = cg + rl;
                if (strcmp(rest, "/") == 0)
                        rest = "";
                char *dir = strdup_printf("%s%s", mp, rest);
                if (!dir)
                        return -ENOMEM;
                *ret = dir;
                return 0;
        }
        return any ? -EXDEV : -ENOENT;
}

/* cgroup_v2_dir with this process's mountinfo. */
static int v2_dir(const char *cg, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_capped("/proc/self/mountinfo", (size_t)16 << 20, &text, NULL);
        if (r < 0)
                return r;
        return cgroup_v2_dir(text, cg, ret);
}

/* The cgroup v2 path in /proc/PID/cgroup text: its "0::" line. -ENOENT without one. */
static int v2_path_of(const char *text, char **ret) {
        for (const char *line = text; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t n = nl ? (size_t)(nl - line) : strlen(line);
                if (n >= 3 && strncmp(line, "0::", 3) == 0) {
                        char *p = strndup(line + 3, n - 3);
                        if (!p)
                                return -ENOMEM;
                        *ret = p;
                        return 0;
                }
                line = nl ? nl + 1 : NULL;
        }
        return -ENOENT;
}

/* A small attribute file of the cgroup at dirfd, its trailing newline cut. */
static int read_attr(int dirfd, const char *file, char **ret) {
        _cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char *text = NULL;
        size_t len = 0;
        int r = read_fd_capped(fd, 64 << 10, &text, &len);
        if (r < 0)
                return r;
        while (len > 0 && text[len - 1] == '\n')
                text[--len] = '\0';
        *ret = text;
        return 0;
}

static int write_attr(int dirfd, const char *file, const char *value) {
        _cleanup_close_ int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write_all(fd, value, strlen(value));
}

void cgroup_base_free(struct cgroup_base *b) {
        if (!b)
                return;
        if (b->dirfd >= 0)
                close(b->dirfd);
        free(b->path);
        free(b);
}

/* Why the base cannot be used, into *ret_reason; returns r. */
static int refuse(char **ret_reason, int r, char *reason) {
        if (ret_reason)
                *ret_reason = reason;
        else
                free(reason);
        return r;
}

int cgroup_base_open(struct cgroup_base **ret, char **ret_reason) {
        const char *off = getenv(CGROUP_ENV_OFF);
        if (off && *off && strcmp(off, "0") != 0)
                return refuse(ret_reason, -ECANCELED, strdup_printf("%s is set", CGROUP_ENV_OFF));

        _cleanup_free_ char *self = NULL, *own = NULL, *dir = NULL;
        int r = read_file_capped("/proc/self/cgroup", 1 << 20, &self, NULL);
        if (r >= 0)
                r = v2_path_of(self, &own);
        if (r == -ENOENT)
                return refuse(ret_reason, r, strdup_printf("no cgroup v2 hierarchy is mounted"));
        if (r < 0)
                return refuse(ret_reason, r, strdup_printf("cannot read /proc/self/cgroup: %s", strerror(-r)));
        r = v2_dir(own, &dir);
        if (r == -ENOENT)
                return refuse(ret_reason, r, strdup_printf("no cgroup v2 hierarchy is mounted"));
        if (r == -EXDEV)
                return refuse(ret_reason, r, strdup_printf("gauntlet's cgroup '%s' is not under a cgroup2 mount", own));
        if (r < 0)
                return refuse(ret_reason, r, strdup_printf("cannot read /proc/self/mountinfo: %s", strerror(-r)));

        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return refuse(ret_reason, -errno, strdup_printf("cannot open '%s': %s", dir, strerror(errno)));
        /* The root has no cgroup.type and may hold processes beside children that do. */
        _cleanup_free_ char *type = NULL, *subtree = NULL;
        r = read_attr(dfd, "cgroup.type", &type);
        bool root = r == -ENOENT;
        if (r < 0 && !root)
                return refuse(ret_reason, r, strdup_printf("cannot read '%s/cgroup.type': %s", dir, strerror(-r)));
        if (!root && strcmp(type, "domain") != 0)
                return refuse(ret_reason, -EOPNOTSUPP,
                              strdup_printf("gauntlet's cgroup '%s' is of type '%s': its children cannot hold processes",
                                            dir, type));
        if ((r = read_attr(dfd, "cgroup.subtree_control", &subtree)) < 0)
                return refuse(ret_reason, r,
                              strdup_printf("cannot read '%s/cgroup.subtree_control': %s", dir, strerror(-r)));
        if (!root && subtree[0])
                return refuse(ret_reason, -EBUSY,
                              strdup_printf("gauntlet's cgroup '%s' enables controllers (%s) for its children while "
                                            "it holds processes itself",
                                            dir, subtree));
        /* Moving a process between two cgroups needs write access to the cgroup.procs of
         * their common ancestor: gauntlet's own. */
        if (faccessat(dfd, "cgroup.procs", W_OK, AT_EACCESS) < 0)
                return refuse(ret_reason, -errno,
                              strdup_printf("cannot move processes in '%s': %s", dir, strerror(errno)));

        /* The proof: make a child, and see that processes could be moved into it. */
        char hex[17];
        if ((r = random_hex(hex, 8)) < 0)
                return refuse(ret_reason, r, strdup_printf("cannot make a name: %s", strerror(-r)));
        char probe[64];
        snprintf(probe, sizeof(probe), CGROUP_PREFIX "probe-%s", hex);
        if (mkdirat(dfd, probe, 0755) < 0)
                return refuse(ret_reason, -errno, strdup_printf("cannot create a cgroup in '%s': %s", dir, strerror(errno)));
        _cleanup_close_ int pfd = openat(dfd, probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int err = pfd < 0 ? errno : faccessat(pfd, "cgroup.procs", W_OK, AT_EACCESS) < 0 ? errno : 0;
        bool has_kill = pfd >= 0 && faccessat(pfd, "cgroup.kill", F_OK, 0) == 0;
        (void)unlinkat(dfd, probe, AT_REMOVEDIR);
        if (err)
                return refuse(ret_reason, -err,
                              strdup_printf("cannot move processes into a cgroup made in '%s': %s", dir, strerror(err)));

        struct cgroup_base *b = calloc(1, sizeof(*b));
        if (!b)
                return refuse(ret_reason, -ENOMEM, NULL);
        b->path = TAKE_PTR(dir);
        b->dirfd = TAKE_FD(dfd);
        b->has_kill = has_kill;
        *ret = b;
        return 0;
}

char *cgroup_name(const char *token) {
        return strdup_printf(CGROUP_PREFIX "%s", token);
}

/* Opens the cgroup at dirfd/name (dirfd AT_FDCWD: name is a path). */
static int cgroup_at(int dirfd, const char *name, const char *path, struct cgroup **ret) {
        struct cgroup *cg = calloc(1, sizeof(*cg));
        if (!cg)
                return -ENOMEM;
        cg->dirfd = cg->events_fd = -1;
        int r = 0;
        if (!(cg->path = strdup(path)))
                r = -ENOMEM;
        else if ((cg->dirfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
                 (cg->events_fd = openat(cg->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC)) < 0)
                r = -errno;
        if (r < 0) {
                cgroup_free(cg);
                return r;
        }
        cg->has_kill = faccessat(cg->dirfd, "cgroup.kill", F_OK, 0) == 0;
        *ret = cg;
        return 0;
}

int cgroup_create(const struct cgroup_base *b, const char *name, struct cgroup **ret) {
        if (!name[0] || strchr(name, '/'))
                return -EINVAL;
        if (mkdirat(b->dirfd, name, 0755) < 0)
                return -errno;
        _cleanup_free_ char *path = strdup_printf("%s/%s", b->path, name);
        int r = path ? cgroup_at(b->dirfd, name, path, ret) : -ENOMEM;
        if (r < 0)
                (void)unlinkat(b->dirfd, name, AT_REMOVEDIR);
        return r;
}

/* The directory of a process's cgroup when that cgroup is called `name`. */
static int process_cgroup_named(const char *pid, const char *name, char **ret) {
        _cleanup_free_ char *file = strdup_printf("/proc/%s/cgroup", pid);
        _cleanup_free_ char *text = NULL, *cg = NULL;
        if (!file)
                return -ENOMEM;
        int r = read_file_capped(file, 1 << 20, &text, NULL);
        if (r < 0 || (r = v2_path_of(text, &cg)) < 0)
                return r;
        const char *last = strrchr(cg, '/');
        if (!last || strcmp(last + 1, name) != 0)
                return -ENOENT;
        return v2_dir(cg, ret);
}

int cgroup_find(const char *name, struct cgroup **ret) {
        if (!name[0] || strchr(name, '/'))
                return -EINVAL;
        _cleanup_free_ char *self = NULL, *own = NULL, *dir = NULL;
        if (read_file_capped("/proc/self/cgroup", 1 << 20, &self, NULL) == 0 && v2_path_of(self, &own) == 0 &&
            v2_dir(own, &dir) == 0) {
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, name);
                if (!path)
                        return -ENOMEM;
                int r = cgroup_at(AT_FDCWD, path, path, ret);
                if (r != -ENOENT)
                        return r;
        }
        /* Elsewhere: the cgroup of a process in it. Empty, it is not found, and harmless. */
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        int r = -ENOENT;
        struct dirent *de;
        while (r == -ENOENT && (de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                _cleanup_free_ char *path = NULL;
                if (process_cgroup_named(de->d_name, name, &path) == 0)
                        r = cgroup_at(AT_FDCWD, path, path, ret);
        }
        closedir(d);
        return r;
}

/* A server may make cgroups of its own below its cgroup (a container runtime, a nested
 * gauntlet): its processes are those of the whole subtree. Deeper than this is refused. */
#define MAX_DEPTH 32

struct pids {
        pid_t *v;
        size_t n, cap;
};

/* Adds the members listed in dirfd's cgroup.procs, then its children's, to *p. */
static int collect_members(int dirfd, int depth, struct pids *p) {
        if (depth > MAX_DEPTH)
                return -ELOOP;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        int r = read_fd_capped(fd, (size_t)16 << 20, &text, &len);
        if (r < 0)
                return r;
        for (char *q = text, *end; *q; q = end) {
                long v = strtol(q, &end, 10);
                if (end == q)
                        break;
                if (v <= 0)
                        continue;
                if (p->n == p->cap) {
                        size_t nc = p->cap ? p->cap * 2 : 16;
                        pid_t *nv = realloc(p->v, nc * sizeof(pid_t));
                        if (!nv)
                                return -ENOMEM;
                        p->v = nv;
                        p->cap = nc;
                }
                p->v[p->n++] = (pid_t)v;
        }
        int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -errno;
        }
        struct dirent *de;
        while (r == 0 && (de = readdir(d))) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                _cleanup_close_ int child = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (child < 0)
                        continue; /* removed meanwhile */
                r = collect_members(child, depth + 1, p);
                if (r == -ENOENT)
                        r = 0;
        }
        closedir(d);
        return r;
}

int cgroup_members(const struct cgroup *cg, pid_t **ret, size_t *ret_n) {
        struct pids p = {0};
        int r = collect_members(cg->dirfd, 0, &p);
        if (r < 0) {
                free(p.v);
                return r;
        }
        if (!p.v && !(p.v = malloc(sizeof(pid_t))))
                return -ENOMEM;
        *ret = p.v;
        *ret_n = p.n;
        return 0;
}

int cgroup_populated(const struct cgroup *cg) {
        char buf[256];
        ssize_t n;
        do
                n = pread(cg->events_fd, buf, sizeof(buf) - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        const char *p = strstr(buf, "populated ");
        if (!p)
                return -EIO;
        return p[10] == '1' ? 1 : p[10] == '0' ? 0 : -EIO;
}

int cgroup_kill(const struct cgroup *cg) {
        if (!cg->has_kill)
                return -EOPNOTSUPP;
        return write_attr(cg->dirfd, "cgroup.kill", "1");
}

/* Removes the empty cgroups below dirfd, deepest first. */
static int remove_children(int dirfd, int depth) {
        if (depth > MAX_DEPTH)
                return -ELOOP;
        int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -errno;
        }
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d))) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                _cleanup_close_ int child = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (child >= 0 && (r = remove_children(child, depth + 1)) == 0 &&
                    unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        r = -errno;
        }
        closedir(d);
        return r;
}

int cgroup_remove(struct cgroup *cg) {
        if (cg->removed)
                return 0;
        int r = remove_children(cg->dirfd, 0);
        if (r < 0 && r != -ENOENT)
                return r;
        if (rmdir(cg->path) < 0 && errno != ENOENT)
                return -errno;
        cg->removed = true;
        return 0;
}

void cgroup_free(struct cgroup *cg) {
        if (!cg)
                return;
        if (cg->events_fd >= 0)
                close(cg->events_fd);
        if (cg->dirfd >= 0)
                close(cg->dirfd);
        free(cg->path);
        free(cg);
}
