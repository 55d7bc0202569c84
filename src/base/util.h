/* util.h -- small things every module uses: time, scope cleanup, string vectors.
 *
 * Conventions (see docs/hacking.md):
 *  - functions return int: 0 or a positive count on success, a negative errno on failure;
 *  - output parameters are named ret_* and are left untouched on failure;
 *  - one time type, usec_t, microseconds on CLOCK_MONOTONIC unless a name says "wall".
 */
#ifndef GAUNTLET_UTIL_H
#define GAUNTLET_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* The version of gauntlet: printed by --version, recorded with every sweep. */
#define GAUNTLET_VERSION "0.1.0"

typedef uint64_t usec_t;

#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_INFINITY ((usec_t)UINT64_MAX)

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Monotonic time now, in microseconds. This function can't fail. */
usec_t now_usec(void);
/* Wall-clock time now, in microseconds since the epoch. */
usec_t now_wall_usec(void);
/* Milliseconds to wait until deadline (0 if passed, clamped to INT32_MAX; -1 for infinity). */
int usec_to_timeout_ms(usec_t deadline, usec_t now);

/* Takes ownership: returns *p and sets *p to NULL (systemd's TAKE_PTR). */
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tf = (fd); (fd) = -1; _tf; })

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
/* A json_t * released with json_decref at the end of its scope; NULL is fine. Names
 * jansson's own json_decrefp, so it only works where <jansson.h> is included (this header
 * does not pull jansson in for the modules that have no use for it). */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* NULL-terminated vectors of owned strings. */
void strv_free(char **v);
static inline void strv_freep(char ***v) { strv_free(*v); }
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char *const *v);
/* Appends a copy of s; returns 0 or -ENOMEM. */
int strv_push(char ***v, const char *s);
/* Appends s without copying (takes ownership, also on failure). */
int strv_consume(char ***v, char *s);
char **strv_copy(char *const *v);
bool strv_equal(char *const *a, char *const *b);

/* Duplicating helpers that return NULL only on ENOMEM. */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
char *strdup_vprintf(const char *fmt, va_list ap) _printf_(1, 0);
/* How a process ended, in words, into buf: "exited with status 1" when exit_signal is 0,
 * else "killed by SIGKILL" ("killed by signal 77" for a signal without a name). */
const char *exit_describe(int exit_code, int exit_signal, char buf[static 64]);
bool startswith(const char *s, const char *prefix);
/* An environment variable name that systemd's Environment= and sh's export both take:
 * [A-Za-z_][A-Za-z0-9_]*. systemd drops any other from a unit; env(1) reads one starting
 * with '-' as an option. */
bool env_name_valid(const char *name);
bool endswith(const char *s, const char *suffix);
bool streq_ptr(const char *a, const char *b);

/* Parses a duration: "90s", "20m", "1h", "250ms", "1h30m", or a bare number of seconds.
 * Returns 0, or -EINVAL on anything else (negative, empty, unknown unit, overflow). */
int parse_duration(const char *s, usec_t *ret);
/* Formats a duration for people: "250ms", "90s", "20m", "1h05m". buf must hold 32 bytes. */
const char *format_duration(usec_t u, char buf[static 32]);

/* 64-bit FNV-1a over bytes, chained from seed (use FNV_SEED to start). */
#define FNV_SEED UINT64_C(0xcbf29ce484222325)
uint64_t fnv1a(uint64_t seed, const void *p, size_t n);

/* Reads a whole file (or what is left of fd) up to max bytes (-EFBIG beyond: a file of
 * exactly max bytes is fine); NUL-terminates. */
int read_file_capped(const char *path, size_t max, char **ret, size_t *ret_len);
/* read_file_capped's refusal of a path that is not a regular file (a FIFO, which would
 * block the open and the reads, a device, a folder): checked by fstat on a non-blocking
 * open, before any read. */
#define ENOTREG ENOTBLK
/* strerror(-r), with words for -ENOTREG. Never NULL. */
const char *file_strerror(int r);
int read_fd_capped(int fd, size_t max, char **ret, size_t *ret_len);
/* Reads from fd until the end or max bytes, whichever is first (what follows is left
 * unread); NUL-terminates. */
int read_fd_upto(int fd, size_t max, char **ret, size_t *ret_len);
/* Writes all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t n);
/* Writes a whole file the way nobody else's file receives it: a temporary file beside
 * path (".NAME.XXXXXX", mode 0600 from its first byte), all of data, fsync, then renamed
 * onto path. What was at path (a file of another mode, a symlink) is replaced, never
 * written through; on failure it is left as it was and the temporary file removed. */
int write_file_replace(const char *path, const void *data, size_t n);
/* mkdir -p; 0 if it exists already. */
int mkdir_p(const char *path, unsigned mode);
/* Fresh randomness (getrandom) as 2 * n_bytes lowercase hex digits and a NUL: buf holds
 * 2 * n_bytes + 1 bytes. 0, or a negative errno with buf's content unspecified. */
int random_hex(char *buf, size_t n_bytes);

#endif
