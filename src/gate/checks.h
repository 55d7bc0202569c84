/* checks.h -- questions with known answers, and what came back.
 *
 * A check_spec says what to ask and what the answer must be; checks_run() (checks.c)
 * asks it of a live server and fills a check_result, applying the garbage detectors
 * (detect.h) to every output before the golden match (golden.h).
 */
#ifndef GAUNTLET_CHECKS_H
#define GAUNTLET_CHECKS_H

#include <jansson.h>

#include "gate/golden.h"
#include "io/loop.h"
#include "base/profile.h"
#include "base/util.h"
#include "base/verdict.h"

enum check_mode {
        CHECK_CHAT,        /* POST /v1/chat/completions */
        CHECK_COMPLETION,  /* POST /v1/completions */
        CHECK_MODELS,      /* GET /v1/models answers with at least one model */
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
        /* Sampling instead of greedy decoding (the sampling probe, probes.h): temperature
         * and top_p as given, and seed instead of CHECK_SEED where the profile takes one.
         * false: temperature 0, no top_p. */
        bool sampling;
        double temperature, top_p;
        int64_t seed;
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
        bool truncated;          /* the output or reasoning was cut at CHECK_MAX_OUTPUT */
        int transport_error;     /* the request failed below HTTP (negative errno: refused,
                                    reset, timed out), else 0 */
        double *logprobs;        /* the chosen tokens' log-probabilities, when the target
                                    asked for them and the server sent them; else NULL */
        size_t n_logprobs;
        size_t logprobs_dropped; /* sent beyond the request's max_tokens: counted, not kept */
        int64_t prompt_tokens;   /* usage.prompt_tokens as the server said it; 0: not said */
        char *error_message;     /* an HTTP error status's body: the server's own words in full
                                    (capped at 4 KiB), or NULL; not journaled (the evidence
                                    quotes them) */
        char *detail;            /* what a probe measured, one line ("6,144 prompt tokens (75%
                                    of 8,192) ..."), or NULL; journaled and reported */
};

#define CHECK_MAX_OUTPUT ((size_t)1 << 20)

#define CHECK_DEFAULT_MAX_TOKENS 256
#define CHECK_DEFAULT_MAX_TOKENS_THINKING 2048
#define CHECK_SEED 1234          /* sent to engines whose profile takes a seed */
#define CHECK_EVIDENCE_EXCERPT 80 /* bytes of an answer quoted in evidence */

void check_spec_release(struct check_spec *c);
void check_result_release(struct check_result *r);
/* Sets r's verdict, cause (copied; NULL: none) and evidence (taken; NULL: none), freeing
 * what they were. 0, or -ENOMEM (evidence is freed then, r unchanged). */
int check_result_set(struct check_result *r, enum verdict v, const char *cause, char *evidence);
/* A server's base URL from a target's (a trailing "/" or "/v1" taken off). Caller frees;
 * NULL: ENOMEM. */
char *checks_base_url(const char *url);

/* The built-in smoke suite (DESIGN.md): models, "Reply with exactly: OK", 17*19 with
 * thinking off, and with thinking on. Returns an array of n specs (caller owns). */
int checks_default_suite(struct check_spec **ret, size_t *ret_n);
void checks_free_suite(struct check_spec *specs, size_t n);

/* Where and how checks_run() asks. Strings are borrowed for the duration of the call. */
struct checks_target {
        const char *base_url;            /* "http://127.0.0.1:30000" (a trailing "/" or "/v1" is fine) */
        const char *model;               /* NULL: the first id from /v1/models */
        const struct profile *profile;   /* reasoning fields, thinking key, seed; NULL: generic defaults */
        const char *thinking_key;        /* overrides the profile's; NULL: the profile's or
                                            "enable_thinking" */
        usec_t request_timeout;          /* per request; 0: none */
        usec_t idle_timeout;             /* streamed requests: longest silence; 0: none */
        bool (*should_abort)(void *userdata); /* polled after each loop iteration */
        void *abort_userdata;
        char **ret_model;                /* if non-NULL, gets the model asked (caller frees;
                                            NULL when none was known) */
        bool logprobs;                   /* ask for the chosen tokens' logprobs and keep them
                                            in each result (the eval's differential) */
};

/* Runs every spec (STREAM_BOTH specs run twice: non-streamed, then streamed as
 * "<name>/stream"); fills one result per run. Returns 0 when every check ran (pass or
 * not, stopping early after a request that timed out: a hung server hangs the next
 * request too), -ECANCELED when should_abort stopped it (*ret holds the results so far), -EINTR on
 * a signal (likewise), -ENOMEM. Per run:
 *  - a transport failure (refused, reset, closed mid-stream) or an HTTP error status is
 *    garbage/http with the status or "connection closed mid-stream" as evidence (the
 *    sweep turns it into a crash when the server process died);
 *  - a request over request_timeout (or silent for idle_timeout) is timeout/request;
 *  - every output goes through detect_output() (garbage/<cause>), then golden_match()
 *    (wrong/<check name>, evidence "expected 323, got: ..."), then require_reasoning
 *    (wrong, "no reasoning part");
 *  - a streamed run that passed but whose normalised answer differs from the non-streamed
 *    one is wrong ("streamed answer differs from non-streamed: ...").
 * The models check passes when /v1/models lists at least one model, and gives the model
 * id to the other checks when t->model is NULL. */
int checks_run(struct loop *l, const struct checks_target *t, const struct check_spec *specs, size_t n,
               struct check_result **ret, size_t *ret_n);
/* The same judging, with up to `concurrency` requests in flight at once (at least 1):
 * for a batch of independent questions (the eval). Each spec runs once, non-streamed
 * unless its stream is STREAM_YES (STREAM_BOTH counts as non-streamed: no
 * streamed/non-streamed comparison is made); models specs are not allowed (-EINVAL).
 * *ret gets n results in spec order. After a request timed out no new one is sent (a
 * hung server hangs the rest) and the specs never sent get skipped/"not asked" with
 * evidence saying why; the requests in flight still finish. Returns as checks_run; on
 * -ECANCELED and -EINTR the transfers in flight are cancelled and their results are
 * skipped/"not asked" too. */
int checks_run_concurrent(struct loop *l, const struct checks_target *t, const struct check_spec *specs, size_t n,
                          size_t concurrency, struct check_result **ret);

/* The suite's verdict: the worst result decides (verdict_severity; the first of equals);
 * cause and evidence point into r (NULL on pass). A skipped result (a probe the server
 * cannot take) is shown but neither passes nor fails the suite. An empty suite passes. */
enum verdict checks_summarize(const struct check_result *r, size_t n, const char **ret_cause,
                              const char **ret_evidence);
void checks_free_results(struct check_result *r, size_t n);

/* An answer quoted for evidence: its last CHECK_EVIDENCE_EXCERPT bytes, escaped, in double
 * quotes (caller frees; NULL on ENOMEM). */
char *checks_quote_answer(const char *s, size_t len);

/* Checks under load (the bench mixes them into its requests): the same request and the same
 * judgement as checks_run gives one run of a spec, but started on the loop without waiting.
 * t->model is used as it is (no /v1/models lookup); CHECK_MODELS specs are -EINVAL. done
 * (optional) is called from the loop once the answer is in. */
struct check_probe;
int check_probe_start(struct loop *l, const struct checks_target *t, const struct check_spec *spec, bool stream,
                      void (*done)(void *userdata), void *userdata, struct check_probe **ret);
bool check_probe_finished(const struct check_probe *p);
/* Judges a finished probe: *ret gets its result (the caller releases it). -EBUSY while it
 * runs; -ENOMEM. Once only. */
int check_probe_result(struct check_probe *p, struct check_result *ret);
/* Cancels it if it still runs, and frees it. NULL is fine. */
void check_probe_free(struct check_probe *p);

#endif
