/* openai.h -- OpenAI-style request bodies, and what comes back: whole or streamed.
 *
 * Builds /v1/chat/completions and /v1/completions bodies, parses a non-streamed response,
 * accumulates a stream one SSE event at a time, and reads /v1/models. Servers differ in
 * where they put reasoning (`reasoning_content` for SGLang, `reasoning` for newer vLLM,
 * or `<think>...</think>` inside the content when no parser runs), so the reasoning
 * fields are data from the engine profile.
 *
 * Everything a server sends is data: the content and reasoning are capped (at the cap,
 * cut on a UTF-8 character boundary and marked truncated), logprobs are capped in count,
 * and malformed JSON is a parse error with a short excerpt, never a crash. Bare NaN and
 * Infinity tokens (Python's json.dumps writes them) and invalid UTF-8 inside strings are
 * tolerated: the NaN becomes a NaN logprob, the bad bytes become U+FFFD, so the
 * detectors judge them instead of the parser refusing them.
 */
#ifndef GAUNTLET_OPENAI_H
#define GAUNTLET_OPENAI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "text/buf.h"
#include "base/util.h"

#define OPENAI_MAX_LOGPROBS ((size_t)65536)  /* logprobs kept per output at most; more are
                                                dropped (and counted), see max_logprobs */
#define OPENAI_MAX_ERROR ((size_t)4096)      /* bytes of a server's error message kept */

struct openai_params {
        bool chat;                   /* chat/completions (messages) or completions (prompt) */
        const char *model;           /* NULL: left out (the server picks its only model) */
        const char *prompt;          /* the completion prompt, or the single user message */
        const json_t *messages;      /* chat: used instead of prompt when set (not owned) */
        int max_tokens;              /* 0: left out */
        double temperature;          /* 0 for checks */
        bool has_top_p;              /* top_p sent (the sampling probe); else left out */
        double top_p;
        bool stream;                 /* also asks for stream_options.include_usage */
        int thinking;                /* -1 leave to the server, 0 off, 1 on */
        const char *thinking_key;    /* chat_template_kwargs key; NULL: "enable_thinking" */
        bool has_seed;
        int64_t seed;
        bool logprobs;
};

/* The JSON body for p (caller frees). -ENOMEM, or -EINVAL for a chat without prompt or
 * messages. */
int openai_build_request(const struct openai_params *p, char **ret);

/* One output, non-streamed or accumulated from a stream. */
struct openai_output {
        struct buf content;          /* the answer; capped (see openai_output_init) */
        struct buf reasoning;        /* the reasoning part; capped the same way */
        char *finish_reason;         /* owned, or NULL */
        char *error;                 /* owned: an error object/event the server sent, as
                                        "CODE: message" (capped), or NULL */
        int error_code;              /* its code (HTTP-like), 0 when none was given */
        double *logprobs;            /* per token; NaN/Inf kept as such */
        size_t n_logprobs;
        size_t alloc_logprobs;
        size_t max_logprobs;         /* kept at most: the tokens the request asked for
                                        (openai_output_cap_logprobs), else OPENAI_MAX_LOGPROBS.
                                        A server cannot grow the answer's memory beyond
                                        what its max_tokens allows. */
        size_t logprobs_dropped;     /* logprobs sent beyond max_logprobs, not kept */
        int64_t prompt_tokens;       /* usage; -1 when the server did not say */
        int64_t completion_tokens;
        bool done;                   /* stream: `[DONE]` arrived */
        size_t events;               /* stream: data events consumed (incl. [DONE]) */
        size_t events_after_done;    /* stream: events after [DONE], not parsed (a client
                                        stops at [DONE]; subset of events) */
        usec_t first_token;          /* monotonic time of the first content or reasoning
                                        text; 0 if none yet */
        bool think_tags;             /* the reasoning came from <think> tags in the content */
        char *parse_error;           /* owned: "malformed JSON from server: ..." or NULL */
        const char *const *reasoning_fields; /* not owned; NULL-terminated */
};

/* reasoning_fields NULL: {"reasoning_content", "reasoning"}. max caps content and
 * reasoning each (0: 1 MiB). */
void openai_output_init(struct openai_output *o, const char *const *reasoning_fields, size_t max);
void openai_output_release(struct openai_output *o);
/* Keeps at most max_tokens logprobs (the request's max_tokens: one per token it may
 * produce, reasoning included); the rest are counted in logprobs_dropped. max_tokens <= 0
 * leaves OPENAI_MAX_LOGPROBS, which is also the most ever kept. */
void openai_output_cap_logprobs(struct openai_output *o, int max_tokens);

/* A whole (non-streamed) response body. Returns 0 (an {"error": ...} object is data: see
 * o->error), -EBADMSG for a body that is not the expected JSON (o->parse_error says why),
 * -ENOMEM. */
int openai_parse_response(struct openai_output *o, const char *body, size_t len);
/* The data of one SSE event of a stream: a chunk, an error event or "[DONE]". Returns as
 * openai_parse_response. */
int openai_stream_event(struct openai_output *o, const char *data, size_t len);
/* After the last byte: splits <think>...</think> off the content when no reasoning field
 * was present. -ENOMEM only. */
int openai_output_finish(struct openai_output *o);

/* /v1/models: the first model id (caller frees) and how many there are. -ENOENT when the
 * list is empty, -EBADMSG when the body is not a model list (*ret_error, if non-NULL,
 * gets a reason; caller frees). */
int openai_parse_models(const char *body, size_t len, char **ret_id, size_t *ret_count, char **ret_error);

/* The server's own words in an error body or error event: OpenAI's and llama.cpp's
 * {"error": {"message"}}, {"error": "..."}, FastAPI's {"detail": "..."} or {"message": "..."}.
 * A copy (caller frees), or NULL when there are none (or out of memory). */
char *openai_error_message(const char *body, size_t len);

/* The body of a POST /tokenize asking for the count of text alone (no template, no special
 * tokens), as llama.cpp (content, add_special) and vLLM/SGLang (prompt, add_special_tokens)
 * read it; each ignores the other's keys. model may be NULL. NULL on ENOMEM. (The bench's
 * calibration and the long-context probe.) */
json_t *openai_tokenize_request(const char *text, const char *model);
/* The count in a /tokenize answer: "count", else the length of "tokens". -EBADMSG when the
 * answer has neither (or, for the string form, is not JSON). */
int openai_token_count_of(const json_t *o, int64_t *ret);
int openai_parse_token_count(const char *body, size_t len, int64_t *ret);
/* The context a request may use, from a /v1/models list: data[0]'s max_model_len (vLLM),
 * context_length or max_context_length, else meta.n_ctx (llama.cpp). -ENOENT when the
 * list says none, -EBADMSG (string form) when it is not JSON. */
int openai_models_context_of(const json_t *o, int64_t *ret);
int openai_parse_models_context(const char *body, size_t len, int64_t *ret);

/* Parses JSON from a server with the tolerance described above; *ret_error gets a
 * reason with an excerpt on failure (caller frees). Exposed for the bench and tests. */
int openai_json_loads(const char *text, size_t len, json_t **ret, char **ret_error);

#endif
