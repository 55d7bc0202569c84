/* sse.h -- incremental server-sent-events parser with size limits.
 *
 * Feed it bytes as they arrive, in any split; it calls back once per complete event
 * (a blank line ends an event) with the event's name ("" when none was given) and its data
 * lines joined by '\n'. Comment lines (":...") and unknown fields are ignored; "\r\n", "\r"
 * and "\n" all end a line.
 *
 * Limits: a line longer than max_line or an event whose data exceeds max_event makes
 * sse_feed return -E2BIG and the parser refuses further input: an endless line from a
 * server ends the stream, it never grows memory without bound.
 */
#ifndef GAUNTLET_SSE_H
#define GAUNTLET_SSE_H

#include "text/buf.h"

/* Return 0 to go on, a negative errno to stop: sse_feed passes it back. */
typedef int (*sse_event_cb)(void *userdata, const char *event, const char *data, size_t data_len);

struct sse {
        struct buf line;   /* the line being assembled */
        struct buf data;   /* data lines of the current event */
        struct buf event;  /* event name of the current event */
        bool have_data;
        bool last_cr;      /* the previous chunk ended in '\r' */
        int error;         /* sticky error, 0 while healthy */
        size_t events;     /* events delivered */
        sse_event_cb cb;
        void *userdata;
};

#define SSE_DEFAULT_MAX_LINE ((size_t)1 << 20)
#define SSE_DEFAULT_MAX_EVENT ((size_t)4 << 20)

void sse_init(struct sse *s, size_t max_line, size_t max_event, sse_event_cb cb, void *userdata);
void sse_release(struct sse *s);
/* Returns 0, -E2BIG at a limit, or what the callback returned. */
int sse_feed(struct sse *s, const char *p, size_t n);
/* End of stream: delivers a last event that lacked its blank line, if any. */
int sse_finish(struct sse *s);

#endif
