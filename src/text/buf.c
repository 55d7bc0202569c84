/* buf.c -- growable byte buffers with a hard cap. */
#include "text/buf.h"

#include <stdio.h>
#include <string.h>

void buf_init(struct buf *b, size_t max) {
        *b = (struct buf){.max = max ? max : BUF_DEFAULT_MAX};
}

void buf_release(struct buf *b) {
        free(b->data);
        size_t max = b->max;
        *b = (struct buf){.max = max};
}

void buf_reset(struct buf *b) {
        b->len = 0;
        b->truncated = false;
        if (b->data)
                b->data[0] = '\0';
}

static int buf_reserve(struct buf *b, size_t need) {
        if (need + 1 <= b->alloc)
                return 0;
        size_t n = b->alloc ? b->alloc : 256;
        while (n < need + 1)
                n *= 2;
        char *d = realloc(b->data, n);
        if (!d)
                return -ENOMEM;
        b->data = d;
        b->alloc = n;
        return 0;
}

int buf_append(struct buf *b, const void *p, size_t n) {
        if (b->max == 0)
                b->max = BUF_DEFAULT_MAX;
        int result = 0;
        if (n > b->max - b->len) {
                n = b->max - b->len;
                b->truncated = true;
                result = -ENOBUFS;
        }
        int r = buf_reserve(b, b->len + n);
        if (r < 0)
                return r;
        if (n)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return result;
}

int buf_puts(struct buf *b, const char *s) {
        return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap) {
        va_list aq;
        va_copy(aq, ap);
        int k = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (k < 0)
                return -EINVAL;
        _cleanup_free_ char *tmp = malloc((size_t)k + 1);
        if (!tmp)
                return -ENOMEM;
        vsnprintf(tmp, (size_t)k + 1, fmt, ap);
        return buf_append(b, tmp, (size_t)k);
}

int buf_printf(struct buf *b, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = buf_vprintf(b, fmt, ap);
        va_end(ap);
        return r;
}

void buf_consume(struct buf *b, size_t n) {
        if (n >= b->len) {
                buf_reset(b);
                return;
        }
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
        b->data[b->len] = '\0';
}

char *buf_detach(struct buf *b) {
        char *d = b->data ? b->data : strdup("");
        size_t max = b->max;
        *b = (struct buf){.max = max};
        return d;
}
