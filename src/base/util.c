/* util.c -- time, string vectors, durations and small file helpers. */
#include "base/util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

usec_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

usec_t now_wall_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

int usec_to_timeout_ms(usec_t deadline, usec_t now) {
        if (deadline == USEC_INFINITY)
                return -1;
        if (deadline <= now)
                return 0;
        usec_t ms = (deadline - now + 999) / 1000;
        return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

void strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

size_t strv_length(char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

int strv_consume(char ***v, char *s) {
        if (!s)
                return -ENOMEM;
        size_t n = strv_length(*v);
        char **nv = realloc(*v, (n + 2) * sizeof(char *));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        nv[n] = s;
        nv[n + 1] = NULL;
        *v = nv;
        return 0;
}

int strv_push(char ***v, const char *s) {
        return strv_consume(v, strdup(s));
}

char **strv_copy(char *const *v) {
        size_t n = strv_length(v);
        char **c = calloc(n + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(v[i]);
                if (!c[i]) {
                        strv_free(c);
                        return NULL;
                }
        }
        return c;
}

bool strv_equal(char *const *a, char *const *b) {
        size_t n = strv_length(a);
        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

char *strdup_vprintf(const char *fmt, va_list ap) {
        char *s = NULL;
        return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

const char *exit_describe(int exit_code, int exit_signal, char buf[static 64]) {
        const char *name = exit_signal ? sigabbrev_np(exit_signal) : NULL;
        if (name)
                snprintf(buf, 64, "killed by SIG%s", name);
        else if (exit_signal)
                snprintf(buf, 64, "killed by signal %d", exit_signal);
        else
                snprintf(buf, 64, "exited with status %d", exit_code);
        return buf;
}

char *strdup_printf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = strdup_vprintf(fmt, ap);
        va_end(ap);
        return s;
}

bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

int parse_duration(const char *s, usec_t *ret) {
        if (!s || !*s)
                return -EINVAL;
        usec_t total = 0;
        const char *p = s;
        bool any = false;
        while (*p) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                uint64_t n = 0;
                while (*p >= '0' && *p <= '9') {
                        if (n > UINT64_MAX / 10 - 10)
                                return -EINVAL;
                        n = n * 10 + (uint64_t)(*p - '0');
                        p++;
                }
                usec_t unit;
                if (startswith(p, "ms")) {
                        unit = USEC_PER_MSEC;
                        p += 2;
                } else if (*p == 's') {
                        unit = USEC_PER_SEC;
                        p++;
                } else if (*p == 'm') {
                        unit = 60 * USEC_PER_SEC;
                        p++;
                } else if (*p == 'h') {
                        unit = 3600 * USEC_PER_SEC;
                        p++;
                } else if (*p == '\0' && !any) {
                        unit = USEC_PER_SEC; /* a bare number is seconds */
                } else {
                        return -EINVAL;
                }
                /* at most 100 days: anything longer is a typo */
                if (n > (100ULL * 86400 * USEC_PER_SEC) / unit)
                        return -EINVAL;
                total += n * unit;
                if (total > 100ULL * 86400 * USEC_PER_SEC)
                        return -EINVAL;
                any = true;
        }
        *ret = total;
        return 0;
}

const char *format_duration(usec_t u, char buf[static 32]) {
        if (u == USEC_INFINITY)
                snprintf(buf, 32, "infinity");
        else if (u < USEC_PER_SEC)
                snprintf(buf, 32, "%llums", (unsigned long long)(u / USEC_PER_MSEC));
        else if (u < 60 * USEC_PER_SEC && u % USEC_PER_SEC)
                snprintf(buf, 32, "%.1fs", (double)u / USEC_PER_SEC);
        else if (u < 60 * USEC_PER_SEC || u % (60 * USEC_PER_SEC))
                snprintf(buf, 32, "%llus", (unsigned long long)(u / USEC_PER_SEC));
        else if (u < 3600 * USEC_PER_SEC || u % (3600 * USEC_PER_SEC))
                snprintf(buf, 32, "%llum", (unsigned long long)(u / (60 * USEC_PER_SEC)));
        else
                snprintf(buf, 32, "%lluh", (unsigned long long)(u / (3600 * USEC_PER_SEC)));
        return buf;
}

uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
        const unsigned char *b = p;
        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

int read_fd_upto(int fd, size_t max, char **ret, size_t *ret_len) {
        size_t cap = MIN(max, (size_t)4096), len = 0;
        _cleanup_free_ char *data = malloc(cap + 1);
        if (!data)
                return -ENOMEM;
        while (len < max) {
                if (len == cap) {
                        size_t ncap = MIN(cap * 2, max);
                        char *nd = realloc(data, ncap + 1);
                        if (!nd)
                                return -ENOMEM;
                        data = nd;
                        cap = ncap;
                }
                ssize_t k = read(fd, data + len, cap - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        data[len] = '\0';
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(data);
        return 0;
}

int read_fd_capped(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r = read_fd_upto(fd, max, &data, &len);
        if (r < 0)
                return r;
        while (len == max) {
                /* full: one more byte says whether there was more */
                char probe;
                ssize_t k = read(fd, &probe, 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k > 0)
                        return -EFBIG;
                break;
        }
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(data);
        return 0;
}

int read_file_capped(const char *path, size_t max, char **ret, size_t *ret_len) {
        /* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and is refused
         * by fstat; a regular file ignores the flag */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOTREG;
        /* a file larger than the cap is refused by its size, before a byte is read (/proc
         * files say 0 and are read up to the cap) */
        if (st.st_size > 0 && (uint64_t)st.st_size > (uint64_t)max)
                return -EFBIG;
        return read_fd_capped(fd, max, ret, ret_len);
}

const char *file_strerror(int r) {
        return r == -ENOTREG ? "not a regular file (a FIFO, a device or a folder cannot be read as input)" : strerror(-r);
}

int write_all(int fd, const void *buf, size_t n) {
        const char *p = buf;
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

int write_file_replace(const char *path, const void *data, size_t n) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        if (!*base)
                return -EISDIR;
        char *tmp = strdup_printf("%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0, path, base);
        if (!tmp)
                return -ENOMEM;
        int fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
        if (fd < 0) {
                int r = -errno;
                free(tmp);
                return r;
        }
        int r = write_all(fd, data, n);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        free(tmp);
        return r;
}

int mkdir_p(const char *path, unsigned mode) {
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(copy, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int random_hex(char *buf, size_t n_bytes) {
        for (size_t i = 0; i < n_bytes;) {
                uint8_t raw[16];
                size_t want = MIN(sizeof(raw), n_bytes - i);
                ssize_t k = getrandom(raw, want, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (size_t j = 0; j < (size_t)k; j++, i++)
                        snprintf(buf + 2 * i, 3, "%02x", raw[j]);
        }
        buf[2 * n_bytes] = '\0';
        return 0;
}

bool env_name_valid(const char *name) {
        if (!name || !((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_'))
                return false;
        for (const char *p = name + 1; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        return true;
}
