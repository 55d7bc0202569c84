/* buf.h -- growable byte buffers with a hard cap.
 *
 * Every buffer that a server or a user can grow is a struct buf with a cap. Appending
 * past the cap stores nothing more and returns -ENOBUFS; the caller decides what the cap
 * means (a check output is truncated and marked, an SSE line ends the stream as garbage).
 * data is always NUL-terminated (data may be NULL while len is 0).
 */
#ifndef GAUNTLET_BUF_H
#define GAUNTLET_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/util.h"

struct buf {
        char *data;
        size_t len;
        size_t alloc;
        size_t max;      /* hard cap on len; 0 means the default cap below */
        bool truncated;  /* an append was refused or cut at the cap */
};

#define BUF_DEFAULT_MAX ((size_t)64 << 20)

void buf_init(struct buf *b, size_t max);
/* Frees the storage; the buffer can be used again after buf_init. */
void buf_release(struct buf *b);
static inline void buf_releasep(struct buf *b) { buf_release(b); }
#define _cleanup_buf_ _cleanup_(buf_releasep)
/* Empties without freeing. */
void buf_reset(struct buf *b);
/* Appends n bytes. At the cap, appends what fits, sets truncated, returns -ENOBUFS. */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) _printf_(2, 3);
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) _printf_(2, 0);
/* Removes the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Hands over the storage (never NULL unless out of memory); the buffer is empty after. */
char *buf_detach(struct buf *b);
/* The contents as a C string, "" when empty. */
static inline const char *buf_str(const struct buf *b) { return b->data ? b->data : ""; }

#endif
