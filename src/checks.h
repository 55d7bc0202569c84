/* checks.h -- questions with known answers, and what came back.
 *
 * A check_spec says what to ask and what the answer must be; checks_run() (checks.c)
 * asks it of a live server and fills a check_result, applying the garbage detectors
 * (detect.h) to every output before the golden match (golden.h).
 */
#ifndef GAUNTLET_CHECKS_H
#define GAUNTLET_CHECKS_H

#include <jansson.h>

#include "util.h"
#include "verdict.h"

enum check_mode {
        CHECK_CHAT,        /* POST /v1/chat/completions */
        CHECK_COMPLETION,  /* POST /v1/completions */
        CHECK_MODELS,      /* GET /v1/models answers with at least one model */
};

enum expect_kind {
        EXPECT_NONE,      /* only the detectors judge */
        EXPECT_EQUALS,    /* the normalised answer equals value */
        EXPECT_CONTAINS,  /* the normalised answer contains value */
        EXPECT_REGEX,     /* POSIX extended regex, searched in the normalised answer */
        EXPECT_NUMBER,    /* the last number in the answer equals value numerically */
};

struct expect {
        enum expect_kind kind;
        char *value;
};

enum thinking { THINKING_UNSET = -1, THINKING_OFF = 0, THINKING_ON = 1 };
enum stream_mode { STREAM_BOTH = -1, STREAM_NO = 0, STREAM_YES = 1 };

struct check_spec {
        char *name;
        enum check_mode mode;
        char *prompt;            /* user message (chat) or prompt (completion) */
        json_t *messages;        /* chat only, owned; overrides prompt when set */
        enum thinking thinking;
        bool require_reasoning;  /* a reasoning part must be present (thinking on) */
        int max_tokens;          /* 0: the default (256, or 2048 with thinking on) */
        enum stream_mode stream;
        struct expect expect;
};

struct check_result {
        char *name;              /* spec name, with "/stream" appended for the streamed run */
        enum verdict verdict;
        char *cause;             /* detector cause, check name for wrong, ... ; NULL on pass */
        char *evidence;          /* short excerpt for tables; NULL on pass */
        char *output;            /* full answer text (capped; see CHECK_MAX_OUTPUT) */
        char *reasoning;         /* full reasoning text, or NULL */
        char *finish_reason;
        int http_status;
        usec_t latency;          /* request sent to last byte */
        usec_t ttft;             /* to the first content or reasoning token; 0 if not streamed */
        bool streamed;
};

#define CHECK_MAX_OUTPUT ((size_t)1 << 20)

void check_spec_release(struct check_spec *c);
void check_result_release(struct check_result *r);

/* The built-in smoke suite (DESIGN.md): models, "Reply with exactly: OK", 17*19 with
 * thinking off, and with thinking on. Returns an array of n specs (caller owns). */
int checks_default_suite(struct check_spec **ret, size_t *ret_n);
void checks_free_suite(struct check_spec *specs, size_t n);

#endif
