/* server.h -- the OpenAI-compatible HTTP front of the testbed (libmicrohttpd).
 *
 * One thread per connection; requests share the model read-only and each generation owns
 * its KV cache. At most max_active generations run at once, the others wait their turn.
 *
 * Endpoints: GET /health (503 while loading, 200 when ready), GET /v1/models,
 * POST /v1/completions and /v1/chat/completions (SSE when "stream": true), GET /metrics
 * (vLLM's series names), POST /tokenize (llama.cpp's and vLLM's shapes), GET /props
 * (llama.cpp's n_ctx).
 * Errors are OpenAI-style {"error": {"message", "type", "code"}}; request bodies are capped
 * at SERVER_MAX_BODY (413 beyond), invalid JSON gets 400.
 *
 * Fault flags (for testing the harness) change what generation requests get; they are
 * described in docs/testbed.md.
 */
#ifndef TESTBED_SERVER_H
#define TESTBED_SERVER_H

#include <stdbool.h>

#include "model.h"
#include "base/util.h"

#define SERVER_MAX_BODY ((size_t)1 << 20)
/* Chunks a faulty stream sends before it stalls or is cut. */
#define SERVER_FAULT_CHUNKS 3

struct server_opts {
        const char *host;        /* numeric address or name to bind */
        int port;                /* 0: any free port (server_port() tells which) */
        int max_active;          /* generations at once, >= 1 */
        unsigned die_after;      /* 0: never; else call on_die after this many generations */
        bool stall_mid_stream;   /* streams stop after SERVER_FAULT_CHUNKS chunks and hang */
        bool malformed_sse;      /* stream events after the first carry truncated JSON */
        bool http_500;           /* generation requests answer 500 */
        bool close_mid_stream;   /* streams are cut after SERVER_FAULT_CHUNKS chunks */
        unsigned wrong_answers;  /* 0: never; else the prompts whose text hashes to 0 mod N get
                                    the first digit of their answer changed */
        bool batch_fault;        /* a token chosen while another generation runs is chosen from
                                    logits read one row off (a batched kernel's stride bug) */
        int max_queue;           /* > 0: a request that would wait behind this many others
                                    answers 503 (a full queue) */
        int fault_context;       /* > 0: tokens chosen with this many tokens of context or more
                                    are "+" (--fault-context) */
        bool fault_sampling;     /* sampled (temperature > 0) requests collapse into salad */
        int fault_turn;          /* > 0: chats with this many user turns or more get the FP8 KV
                                    cache with the wrong scale for earlier turns */
        int fault_batch;         /* > 0: digits sent while this many generations run at once
                                    are wrong (the second digit of a number, one lower) */
        usec_t token_delay;      /* an honest pause after each generated token */
        /* Called (from a connection thread) when die_after generations completed; the
         * program decides how to die. Must not return. */
        void (*on_die)(unsigned n);
};

struct server;

/* Binds and starts serving (/health answers 503 until server_set_model). On failure a
 * negative errno and *ret_error ("cannot bind 127.0.0.1:8080: Address already in use"). */
int server_start(const struct server_opts *o, struct server **ret, char **ret_error);
/* The port actually bound. */
int server_port(const struct server *s);
/* Makes the server ready with m (borrowed until server_stop). */
void server_set_model(struct server *s, const struct model *m);
/* Stops accepting, wakes stalled requests, waits for connection threads, frees s. */
void server_stop(struct server *s);

#endif
