/* sse.c -- incremental server-sent-events parser. */
#include "io/sse.h"

#include <string.h>

void sse_init(struct sse *s, size_t max_line, size_t max_event, sse_event_cb cb, void *userdata) {
        *s = (struct sse){.cb = cb, .userdata = userdata};
        buf_init(&s->line, max_line ? max_line : SSE_DEFAULT_MAX_LINE);
        buf_init(&s->data, max_event ? max_event : SSE_DEFAULT_MAX_EVENT);
        buf_init(&s->event, 256);
}

void sse_release(struct sse *s) {
        buf_release(&s->line);
        buf_release(&s->data);
        buf_release(&s->event);
}

static int dispatch(struct sse *s) {
        int r = 0;
        if (s->have_data) {
                s->events++;
                r = s->cb(s->userdata, buf_str(&s->event), buf_str(&s->data), s->data.len);
        }
        buf_reset(&s->data);
        buf_reset(&s->event);
        s->have_data = false;
        return r;
}

static int process_line(struct sse *s, const char *line, size_t n) {
        if (n == 0)
                return dispatch(s);
        if (line[0] == ':')
                return 0;
        const char *colon = memchr(line, ':', n);
        size_t flen = colon ? (size_t)(colon - line) : n;
        const char *val = colon ? colon + 1 : line + n;
        size_t vlen = colon ? n - flen - 1 : 0;
        if (vlen > 0 && val[0] == ' ') {
                val++;
                vlen--;
        }
        if (flen == 4 && memcmp(line, "data", 4) == 0) {
                if (s->have_data && buf_append(&s->data, "\n", 1) < 0)
                        return -E2BIG;
                if (buf_append(&s->data, val, vlen) < 0)
                        return -E2BIG;
                s->have_data = true;
        } else if (flen == 5 && memcmp(line, "event", 5) == 0) {
                buf_reset(&s->event);
                if (buf_append(&s->event, val, vlen) < 0)
                        return -E2BIG;
        }
        return 0;
}

int sse_feed(struct sse *s, const char *p, size_t n) {
        if (s->error)
                return s->error;
        if (n == 0)
                return 0; /* an empty read must not forget a pending '\r' */
        size_t i = 0;
        if (s->last_cr && n > 0 && p[0] == '\n')
                i = 1; /* the '\n' of a "\r\n" split across chunks */
        s->last_cr = false;
        while (i < n) {
                const char *start = p + i;
                size_t rest = n - i;
                size_t k = 0;
                while (k < rest && start[k] != '\n' && start[k] != '\r')
                        k++;
                if (k == rest) {
                        if (buf_append(&s->line, start, k) < 0)
                                return s->error = -E2BIG;
                        break;
                }
                int r;
                if (s->line.len) {
                        if (buf_append(&s->line, start, k) < 0)
                                return s->error = -E2BIG;
                        r = process_line(s, s->line.data, s->line.len);
                        buf_reset(&s->line);
                } else {
                        /* a line of exactly max_line bytes is allowed, as when it
                                 * arrives in pieces and is assembled in s->line */
                        if (k > s->line.max)
                                return s->error = -E2BIG;
                        r = process_line(s, start, k);
                }
                if (r < 0)
                        return s->error = r;
                i += k + 1;
                if (start[k] == '\r') {
                        if (i < n && p[i] == '\n')
                                i++;
                        else if (i == n)
                                s->last_cr = true;
                }
        }
        return 0;
}

int sse_finish(struct sse *s) {
        if (s->error)
                return s->error;
        if (s->line.len) {
                int r = process_line(s, s->line.data, s->line.len);
                buf_reset(&s->line);
                if (r < 0)
                        return s->error = r;
        }
        return dispatch(s);
}
