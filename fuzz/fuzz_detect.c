/* fuzz_detect.c -- libFuzzer target: the garbage detectors (detect_output) and the
 * escaping helpers behind every excerpt (detect_excerpt, detect_escape).
 *
 * Input: byte 0 holds flags (reasoning present, finish_reason, HTTP status, an error
 * message, logprobs), byte 1 where the text ends and the reasoning begins, byte 2 the
 * excerpt's size; the rest is what a server answered. The reasoning part is also given as
 * the question (any bytes: the detectors decode it).
 * Invariants: no crash, leak or hang; pass has no cause and no evidence; garbage has a
 * cause from the fixed vocabulary and evidence that is short, valid UTF-8 and free of
 * control bytes (it goes to terminals, reports and the journal); excerpts and escapes are
 * too, whatever the bytes.
 */
#include <errno.h>
#include <math.h>

#include "gate/detect.h"
#include "fuzz.h"

static void check_text(const char *s, size_t max, const char *what) {
        FUZZ_ASSERT(s, "%s: NULL", what);
        FUZZ_ASSERT(strlen(s) <= max, "%s: %zu bytes, more than %zu", what, strlen(s), max);
        FUZZ_ASSERT(fuzz_printable(s), "%s has control bytes: %s", what, s);
        FUZZ_ASSERT(fuzz_utf8_valid(s, strlen(s)), "%s is not valid UTF-8: %s", what, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        uint8_t flags = fuzz_byte(&in);
        size_t cut = (size_t)fuzz_byte(&in) * in.n / 256;
        size_t ex_max = 1 + fuzz_byte(&in);
        const char *text = (const char *)in.p;
        size_t len = in.n;

        static const char *const reasons[] = {NULL, "stop", "length", "content_filter"};
        static const int statuses[] = {0, 200, 500, 503};
        double logprobs[16];
        size_t n_logprobs = 0;
        if (flags & 0x40)
                for (size_t i = 0; i < len && n_logprobs < ELEMENTSOF(logprobs); i += 7) {
                        uint8_t b = in.p[i];
                        logprobs[n_logprobs++] = b == 0xff ? NAN : b == 0xfe ? -INFINITY : -(double)b / 16;
                }
        char *err_msg = NULL;
        if (flags & 0x80) {
                err_msg = strndup(text, len); /* a C string: stops at the first NUL */
                FUZZ_ASSERT(err_msg, "out of memory");
        }
        struct detect_input di = {
                .text = (flags & 1) ? NULL : text,
                .len = (flags & 2) ? cut : len,
                .reasoning = (flags & 2) ? text + cut : NULL,
                .reasoning_len = (flags & 2) ? len - cut : 0,
                .finish_reason = reasons[(flags >> 2) & 3],
                .logprobs = n_logprobs ? logprobs : NULL,
                .n_logprobs = n_logprobs,
                .http_status = statuses[(flags >> 4) & 3],
                .error_message = err_msg,
                .question = (flags & 2) ? text + cut : NULL,
                .question_len = (flags & 2) ? len - cut : 0,
        };
        struct detect_result res = {0};
        int r = detect_output(&di, &res);
        FUZZ_ASSERT(r == 0, "unexpected result %d", r);
        if (res.verdict == VERDICT_PASS) {
                FUZZ_ASSERT(!res.cause && !res.evidence, "pass with a cause or evidence");
        } else {
                static const char *const causes[] = {"repeat", "loop", "low-information", "invalid-text",
                                                     "empty", "nan", "http", NULL};
                FUZZ_ASSERT(res.verdict == VERDICT_GARBAGE, "verdict %d", res.verdict);
                bool known = false;
                for (size_t i = 0; causes[i] && res.cause; i++)
                        known |= strcmp(causes[i], res.cause) == 0;
                FUZZ_ASSERT(known, "cause '%s' not in the vocabulary", res.cause ? res.cause : "(null)");
                check_text(res.evidence, 512, "evidence");
        }
        detect_result_release(&res);
        free(err_msg);

        char *ex = detect_excerpt(text, len, cut, ex_max);
        check_text(ex, ex_max + 6, "excerpt"); /* "..." on both sides */
        free(ex);
        char *esc = detect_escape(text, len);
        check_text(esc, 12 * len + 1, "escape");
        free(esc);
        return 0;
}
