/* enospc.c -- LD_PRELOAD shim for the fault tests: a disk that fills up under one folder.
 *
 *   GAUNTLET_ENOSPC_PREFIX=/abs/dir/   files whose path (as /proc/self/fd/N says, so
 *                                      resolved: pass a resolved prefix) starts with this
 *   GAUNTLET_ENOSPC_BUDGET=BYTES       may receive this many bytes in all; after that
 *
 * every write(2)-family call on such a file fails with ENOSPC, the one that crosses the
 * budget writes what fits and returns the short count (as a real full disk does), and
 * fsync, fdatasync, ftruncate and fallocate on such a file fail with ENOSPC too. Files
 * outside the prefix, pipes and sockets are never touched. Without both variables the
 * shim does nothing.
 *
 * Covered: write, writev, pwrite, pwrite64, pwritev, pwritev64, pwritev2, pwritev64v2,
 * fsync, fdatasync, ftruncate, ftruncate64, fallocate, fallocate64, posix_fallocate,
 * posix_fallocate64: what SQLite (write, pwrite64, ftruncate64, fdatasync) and gauntlet's
 * log writer (write) call. Not covered: stdio (glibc calls its internal write directly)
 * and writes through mmap.
 *
 * fd -> path: readlink of /proc/self/fd/N, cached per fd number and trusted only while
 * fstat still gives the same device and inode (an fd number is reused after close).
 * GAUNTLET_ENOSPC_REPORT=FILE (optional) gets one line "enospc: PATH" at the first
 * refusal, so a test can tell that the shim really fired, and "spent: BYTES" at a normal
 * exit (a run with a huge budget measures what a whole sweep writes). Every process that
 * loads the shim (children inherit LD_PRELOAD) adds its own lines.
 *
 * One more fault, for the SIGKILL tests: GAUNTLET_FAULT_KILL_AFTER_SPAWN=NAME makes the
 * program called NAME (its argv[0] without the folder, e.g. "gauntlet") SIGKILL itself as
 * soon as posix_spawn/posix_spawnp has started a child (or, for a server born in a cgroup
 * of its own, clone3 or fork has: the child goes on to exec the server without it), i.e.
 * in the narrowest window there is between a server's start and anything recorded about it. Other programs that
 * load the shim on the way (env, a shell) pass the variable on untouched; NAME removes it
 * from its environment at load, so its children do not inherit it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define CACHE_FDS 1024

struct entry {
        bool valid;
        bool under;       /* the path starts with the prefix */
        dev_t dev;
        ino_t ino;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *prefix;      /* NULL: the shim is off */
static size_t prefix_len;
static uint64_t budget, spent;  /* under lock */
static bool reported;           /* under lock */
static struct entry cache[CACHE_FDS];

static void setup(void) {
        const char *p = getenv("GAUNTLET_ENOSPC_PREFIX");
        const char *b = getenv("GAUNTLET_ENOSPC_BUDGET");
        if (!p || !*p || !b || !*b)
                return;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(b, &end, 10);
        if (errno || !end || *end)
                return;
        budget = v;
        prefix_len = strlen(p);
        prefix = p;
}

/* The real function behind name; aborts when it cannot be found (a broken test setup). */
static void *real(const char *name) {
        void *f = dlsym(RTLD_NEXT, name);
        if (!f)
                abort();
        return f;
}
#define REAL(name)                              \
        static __typeof__(&name) real_##name;   \
        if (!real_##name)                       \
        real_##name = (__typeof__(&name))real(#name)

/* Whether fd is a regular file under the prefix. Called with the lock held. */
static bool under_prefix(int fd) {
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return false;
        struct entry *e = fd < CACHE_FDS ? &cache[fd] : NULL;
        if (e && e->valid && e->dev == st.st_dev && e->ino == st.st_ino)
                return e->under;
        char link[64], path[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof(path));
        bool under = n > 0 && (size_t)n >= prefix_len && memcmp(path, prefix, prefix_len) == 0;
        if (e)
                *e = (struct entry){.valid = n > 0, .under = under, .dev = st.st_dev, .ino = st.st_ino};
        return under;
}

/* The first refusal goes to GAUNTLET_ENOSPC_REPORT, if set. Called with the lock held. */
static void note_refusal(int fd) {
        if (reported)
                return;
        reported = true;
        const char *rep = getenv("GAUNTLET_ENOSPC_REPORT");
        if (!rep || !*rep)
                return;
        char link[64], path[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof(path) - 1);
        path[n > 0 ? n : 0] = '\0';
        int rfd = open(rep, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (rfd < 0)
                return;
        REAL(write);
        char line[4200];
        int k = snprintf(line, sizeof(line), "enospc: %s\n", path);
        if (k > 0)
                (void)real_write(rfd, line, (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
        close(rfd);
}

/* How many of want bytes may be written to fd: want when the file is not ours, else what
 * the budget has left (0: refuse with ENOSPC). The bytes are charged before the write. */
static size_t allow(int fd, size_t want) {
        pthread_once(&once, setup);
        if (!prefix || want == 0)
                return want;
        pthread_mutex_lock(&lock);
        size_t k = want;
        if (under_prefix(fd)) {
                uint64_t left = spent < budget ? budget - spent : 0;
                k = want < left ? want : (size_t)left;
                spent += k;
                if (k == 0)
                        note_refusal(fd);
        }
        pthread_mutex_unlock(&lock);
        return k;
}

/* For calls that write no bytes of their own: refused once the budget is spent. */
static bool refuse(int fd) {
        pthread_once(&once, setup);
        if (!prefix)
                return false;
        pthread_mutex_lock(&lock);
        bool no = spent >= budget && under_prefix(fd);
        if (no)
                note_refusal(fd);
        pthread_mutex_unlock(&lock);
        return no;
}

static size_t iov_total(const struct iovec *iov, int n) {
        size_t t = 0;
        for (int i = 0; i < n; i++)
                t += iov[i].iov_len;
        return t;
}

/* The iovecs cut down to k bytes (k < the total), into out (at most n entries). */
static int iov_cut(const struct iovec *iov, int n, size_t k, struct iovec *out) {
        int m = 0;
        for (int i = 0; i < n && k > 0; i++, m++) {
                out[m] = iov[i];
                if (out[m].iov_len > k)
                        out[m].iov_len = k;
                k -= out[m].iov_len;
        }
        return m;
}

ssize_t write(int fd, const void *buf, size_t n) {
        REAL(write);
        size_t k = allow(fd, n);
        if (n > 0 && k == 0) {
                errno = ENOSPC;
                return -1;
        }
        return real_write(fd, buf, k);
}

#define PWRITE(name, off_type)                                                       \
        ssize_t name(int fd, const void *buf, size_t n, off_type off) {              \
                REAL(name);        \
                size_t k = allow(fd, n);                                             \
                if (n > 0 && k == 0) {                                               \
                        errno = ENOSPC;                                              \
                        return -1;                                                   \
                }                                                                    \
                return real_##name(fd, buf, k, off);                                 \
        }
PWRITE(pwrite, off_t)
PWRITE(pwrite64, off64_t)

/* writev and the pwritev family: the whole vector, or the part that fits. */
#define VWRITE_BODY(call)                                                            \
        size_t n = iov_total(iov, cnt);                                              \
        size_t k = allow(fd, n);                                                     \
        if (n > 0 && k == 0) {                                                       \
                errno = ENOSPC;                                                      \
                return -1;                                                           \
        }                                                                            \
        if (k < n) {                                                                 \
                if (cnt > 1024)                                                      \
                        cnt = 1024;                                                  \
                struct iovec cut[1024];                                              \
                int m = iov_cut(iov, cnt, k, cut);                                   \
                iov = cut;                                                           \
                cnt = m;                                                             \
                return call;                                                         \
        }                                                                            \
        return call;

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
        REAL(writev);
        VWRITE_BODY(real_writev(fd, iov, cnt))
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
        REAL(pwritev);
        VWRITE_BODY(real_pwritev(fd, iov, cnt, off))
}
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off) {
        REAL(pwritev64);
        VWRITE_BODY(real_pwritev64(fd, iov, cnt, off))
}
ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) {
        REAL(pwritev2);
        VWRITE_BODY(real_pwritev2(fd, iov, cnt, off, flags))
}
ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags) {
        REAL(pwritev64v2);
        VWRITE_BODY(real_pwritev64v2(fd, iov, cnt, off, flags))
}

#define REFUSE_OR(call)          \
        if (refuse(fd)) {        \
                errno = ENOSPC;  \
                return -1;       \
        }                        \
        return call

int fsync(int fd) {
        REAL(fsync);
        REFUSE_OR(real_fsync(fd));
}
int fdatasync(int fd) {
        REAL(fdatasync);
        REFUSE_OR(real_fdatasync(fd));
}
int ftruncate(int fd, off_t len) {
        REAL(ftruncate);
        REFUSE_OR(real_ftruncate(fd, len));
}
int ftruncate64(int fd, off64_t len) {
        REAL(ftruncate64);
        REFUSE_OR(real_ftruncate64(fd, len));
}
int fallocate(int fd, int mode, off_t off, off_t len) {
        REAL(fallocate);
        REFUSE_OR(real_fallocate(fd, mode, off, len));
}
int fallocate64(int fd, int mode, off64_t off, off64_t len) {
        REAL(fallocate64);
        REFUSE_OR(real_fallocate64(fd, mode, off, len));
}
/* posix_fallocate returns the error instead of setting errno. */
int posix_fallocate(int fd, off_t off, off_t len) {
        REAL(posix_fallocate);
        return refuse(fd) ? ENOSPC : real_posix_fallocate(fd, off, len);
}
int posix_fallocate64(int fd, off64_t off, off64_t len) {
        REAL(posix_fallocate64);
        return refuse(fd) ? ENOSPC : real_posix_fallocate64(fd, off, len);
}

__attribute__((destructor)) static void report_spent(void) {
        const char *rep = getenv("GAUNTLET_ENOSPC_REPORT");
        if (!prefix || !rep || !*rep)
                return;
        int rfd = open(rep, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (rfd < 0)
                return;
        REAL(write);
        char line[64];
        int k = snprintf(line, sizeof(line), "spent: %llu\n", (unsigned long long)spent);
        if (k > 0)
                (void)real_write(rfd, line, (size_t)k);
        close(rfd);
}

/* ---- kill right after a spawn ---- */

static bool kill_after_spawn;

__attribute__((constructor)) static void read_kill_after_spawn(void) {
        const char *v = getenv("GAUNTLET_FAULT_KILL_AFTER_SPAWN");
        kill_after_spawn = v && strcmp(v, program_invocation_short_name) == 0;
        if (kill_after_spawn)
                unsetenv("GAUNTLET_FAULT_KILL_AFTER_SPAWN");
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[]) {
        REAL(posix_spawn);
        int r = real_posix_spawn(pid, path, fa, attr, argv, envp);
        if (r == 0 && kill_after_spawn)
                raise(SIGKILL);
        return r;
}

/* gauntlet's raw clone3 for a child born in a cgroup (src/proc/spawn.c). syscall(2) takes up to
 * six register arguments; all six are passed on (extra ones are ignored by the kernel). */
long syscall(long number, ...) {
        va_list ap;
        va_start(ap, number);
        long a[6];
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        REAL(syscall);
        long r = real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
        if (number == SYS_clone3 && r > 0 && kill_after_spawn)
                raise(SIGKILL);
        return r;
}

/* ... and its fork where clone3 cannot put a child in a cgroup. */
pid_t fork(void) {
        REAL(fork);
        pid_t r = real_fork();
        if (r > 0 && kill_after_spawn)
                raise(SIGKILL);
        return r;
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[]) {
        REAL(posix_spawnp);
        int r = real_posix_spawnp(pid, file, fa, attr, argv, envp);
        if (r == 0 && kill_after_spawn)
                raise(SIGKILL);
        return r;
}
