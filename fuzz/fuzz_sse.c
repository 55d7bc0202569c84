/* fuzz_sse.c -- libFuzzer target: the SSE parser (sse.h), whole input against any split.
 *
 * Input: byte 0 picks max_line, byte 1 max_event (small, so the limits are reached), bytes
 * 2..9 pick split points; the rest is the stream. The stream is parsed once in one call
 * and once cut into chunks (empty chunks included, as a read may return nothing). Both runs
 * must deliver the same events, then agree on the result: a parser whose output depends
 * on how TCP cut the bytes would judge the same server differently on different days.
 * Every event must respect the limits, and a callback error must stop the parser.
 */
#include <errno.h>

#include "fuzz.h"
#include "io/sse.h"
#include "base/util.h"

struct record {
        uint64_t hash;      /* FNV-1a over every event name and data, with separators */
        size_t events;
        size_t max_line, max_event;
        size_t stop_after;  /* the callback fails on this event (1-based), 0 never */
};

static int on_event(void *userdata, const char *event, const char *data, size_t len) {
        struct record *r = userdata;
        FUZZ_ASSERT(len <= r->max_event, "event data of %zu bytes over max_event %zu", len, r->max_event);
        FUZZ_ASSERT(strlen(event) <= 256, "event name of %zu bytes", strlen(event));
        FUZZ_ASSERT(data[len] == '\0', "data not NUL-terminated");
        r->hash = fnv1a(r->hash, event, strlen(event) + 1);
        r->hash = fnv1a(r->hash, data, len);
        r->hash = fnv1a(r->hash, "\xff", 1);
        r->events++;
        if (r->stop_after && r->events == r->stop_after)
                return -ECANCELED;
        return 0;
}

static int parse(const char *p, size_t n, const size_t *cuts, size_t n_cuts, struct record *rec) {
        struct sse s;
        sse_init(&s, rec->max_line, rec->max_event, on_event, rec);
        size_t at = 0;
        int r = 0;
        for (size_t i = 0; i < n_cuts && r == 0; i++) {
                size_t to = MIN(MAX(cuts[i], at), n);
                r = sse_feed(&s, p + at, to - at);
                at = to;
        }
        if (r == 0)
                r = sse_feed(&s, p + at, n - at);
        if (r == 0)
                r = sse_finish(&s);
        else {
                /* sticky: once stopped, more input and the end give the same error */
                FUZZ_ASSERT(sse_feed(&s, "data: x\n\n", 9) == r, "error not sticky");
                FUZZ_ASSERT(sse_finish(&s) == r, "error not sticky at finish");
        }
        FUZZ_ASSERT(s.events == rec->events, "events %zu, callbacks %zu", s.events, rec->events);
        sse_release(&s);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        size_t max_line = 1 + fuzz_byte(&in) % 64;
        size_t max_event = 1 + fuzz_byte(&in) % 128;
        size_t stop_after = fuzz_byte(&in) % 8;
        size_t cuts[8];
        size_t at = 0;
        for (size_t i = 0; i < ELEMENTSOF(cuts); i++) {
                at += fuzz_byte(&in) % 32; /* 0: an empty chunk */
                cuts[i] = at;
        }
        const char *p = (const char *)in.p;

        struct record whole = {FNV_SEED, 0, max_line, max_event, stop_after};
        int r1 = parse(p, in.n, NULL, 0, &whole);
        struct record split = {FNV_SEED, 0, max_line, max_event, stop_after};
        int r2 = parse(p, in.n, cuts, ELEMENTSOF(cuts), &split);

        FUZZ_ASSERT(r1 == 0 || r1 == -E2BIG || r1 == -ECANCELED, "unexpected result %d", r1);
        FUZZ_ASSERT(r1 == r2, "whole gives %d, split gives %d", r1, r2);
        FUZZ_ASSERT(whole.events == split.events, "whole %zu events, split %zu", whole.events, split.events);
        FUZZ_ASSERT(whole.hash == split.hash, "same number of events, different contents");
        if (r1 == -ECANCELED)
                FUZZ_ASSERT(whole.events == stop_after, "went on after the callback failed");
        return 0;
}
