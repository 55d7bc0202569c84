/* fuzz_openai.c -- libFuzzer target: OpenAI responses, stream events and model lists
 * (openai.h).
 *
 * Input: byte 0 picks the mode (whole response, stream, model list, bare JSON) and the cap
 * on content and reasoning (small, so truncation happens); the rest is the server's bytes.
 * A stream is cut into events at "\n\n", as the SSE parser would deliver them.
 * Invariants: no crash or leak; the result is 0 or -EBADMSG, and -EBADMSG comes with a
 * printable parse_error; content and reasoning stay within the cap and are valid UTF-8
 * (invalid bytes become U+FFFD, a cut falls on a character boundary), also after the
 * <think> split; logprobs stay within OPENAI_MAX_LOGPROBS.
 */
#include <errno.h>

#include "fuzz.h"
#include "io/openai.h"

static const char *const fields_vllm[] = {"reasoning", NULL};

static void check_output(const struct openai_output *o, size_t max) {
        FUZZ_ASSERT(o->content.len <= max, "content %zu bytes over the cap %zu", o->content.len, max);
        FUZZ_ASSERT(o->reasoning.len <= max, "reasoning %zu bytes over the cap %zu", o->reasoning.len, max);
        FUZZ_ASSERT(fuzz_utf8_valid(buf_str(&o->content), o->content.len), "content is not valid UTF-8");
        FUZZ_ASSERT(fuzz_utf8_valid(buf_str(&o->reasoning), o->reasoning.len), "reasoning is not valid UTF-8");
        FUZZ_ASSERT(o->n_logprobs <= OPENAI_MAX_LOGPROBS, "%zu logprobs", o->n_logprobs);
        if (o->error)
                FUZZ_ASSERT(strlen(o->error) <= OPENAI_MAX_ERROR, "error message of %zu bytes", strlen(o->error));
        if (o->parse_error)
                FUZZ_ASSERT(fuzz_printable(o->parse_error), "parse error not printable: %s", o->parse_error);
}

static void check_result(const struct openai_output *o, int r) {
        FUZZ_ASSERT(r == 0 || r == -EBADMSG, "unexpected result %d", r);
        if (r == -EBADMSG)
                FUZZ_ASSERT(o->parse_error, "-EBADMSG without a parse error");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        uint8_t mode = fuzz_byte(&in);
        size_t max = (mode >> 2) & 1 ? 16 + (mode >> 3) : 0; /* 0: the default cap, 1 MiB */
        const char *p = (const char *)in.p;
        size_t n = in.n;

        switch (mode & 3) {
        case 0:
        case 1: {
                struct openai_output o;
                openai_output_init(&o, (mode >> 7) ? fields_vllm : NULL, max);
                size_t cap = o.content.max;
                if ((mode & 3) == 0) {
                        check_result(&o, openai_parse_response(&o, p, n));
                } else {
                        size_t at = 0;
                        while (at <= n) {
                                const char *end = memmem(p + at, n - at, "\n\n", 2);
                                size_t len = end ? (size_t)(end - (p + at)) : n - at;
                                int r = openai_stream_event(&o, p + at, len);
                                check_result(&o, r);
                                if (!end)
                                        break;
                                at += len + 2;
                        }
                }
                check_output(&o, cap);
                FUZZ_ASSERT(openai_output_finish(&o) == 0, "finish failed");
                check_output(&o, cap);
                openai_output_release(&o);
                break;
        }
        case 2: {
                char *id = NULL, *err = NULL;
                size_t count = 0;
                int r = openai_parse_models(p, n, &id, &count, &err);
                FUZZ_ASSERT(r == 0 || r == -ENOENT || r == -EBADMSG, "unexpected result %d", r);
                if (r == 0)
                        FUZZ_ASSERT(id && *id && count >= 1, "success without a model id");
                else
                        FUZZ_ASSERT(!id, "id set on failure");
                if (r == -EBADMSG)
                        FUZZ_ASSERT(err && fuzz_printable(err), "bad or missing reason");
                free(id);
                free(err);
                break;
        }
        default: {
                json_t *j = NULL;
                char *err = NULL;
                int r = openai_json_loads(p, n, &j, &err);
                FUZZ_ASSERT(r == 0 || r == -EBADMSG, "unexpected result %d", r);
                FUZZ_ASSERT((r == 0) == (j != NULL), "result and value disagree");
                if (r == -EBADMSG)
                        FUZZ_ASSERT(err && fuzz_printable(err), "bad or missing reason");
                json_decref(j);
                free(err);
                break;
        }
        }
        return 0;
}
