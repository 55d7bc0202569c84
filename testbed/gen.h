/* gen.h -- one generation: prompt evaluation, token choice, stop rules, and the split of
 * the output into reasoning and answer text.
 *
 * A struct gen owns its model context (KV cache) and its text buffers. gen_step() runs the
 * model for one new token (the first call evaluates the prompt too) and reports what the
 * client should see now: new answer text, new reasoning text, the token and its
 * log-probabilities. Text is released only as whole UTF-8 characters and never past a
 * possible start of a stop string.
 *
 * Chat output: <think> as the first token opens the reasoning, </think> closes it, <|end|>
 * or </s> ends the turn; elsewhere <think> and </think> are text (user-defined tokens, which
 * llama.cpp prints too). Completion output: all text is the answer; </s> and <|end|> end it.
 * With ignore_eos the end tokens are masked, as llama.cpp's ignore_eos does, so that every
 * token generated is text the client sees and counts.
 */
#ifndef TESTBED_GEN_H
#define TESTBED_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "text/buf.h"
#include "model.h"
#include "sample.h"
#include "tok.h"

#define GEN_MAX_STOP 4
#define GEN_MAX_TOP_LOGPROBS 20

struct gen_params {
        bool chat;            /* split reasoning; else completion mode */
        int max_tokens;       /* <= 0: until the context is full */
        int min_tokens;       /* end-of-turn tokens are masked until this many were generated */
        bool ignore_eos;      /* keep generating through </s> and <|end|> */
        struct sample_params sample;
        uint64_t seed;
        char *stop[GEN_MAX_STOP + 1]; /* borrowed, NULL-terminated */
        int top_logprobs;     /* alternatives per token, 0..GEN_MAX_TOP_LOGPROBS */
        /* fault flags (docs/testbed.md "Faults only some requests see") */
        int fault_context;    /* > 0: a token chosen with this many tokens or more in the
                                 context (prompt + generated) is fault_token (--fault-context) */
        int fault_token;      /* the id fault_context emits ("+") */
        bool fault_sampling;  /* temperature > 0 draws collapse into mixed-script salad
                                 (--fault-sampling); greedy requests are untouched */
        int kv_fault_before;  /* > 0: K and V of positions below it go through the FP8 cache
                                 with the wrong scale (--fault-turn) */
};

/* What one step produced. Pointers are into the gen and valid until the next step. */
struct gen_step {
        const char *content;
        size_t content_len;
        const char *reasoning;
        size_t reasoning_len;
        int token;            /* -1 when no token was generated (a stop found in held text) */
        float logprob;        /* of token under the model's distribution (NaN possible) */
        int n_top;
        int top_ids[GEN_MAX_TOP_LOGPROBS];
        float top_lps[GEN_MAX_TOP_LOGPROBS];
        bool done;
        const char *finish_reason; /* "stop" or "length" when done */
};

struct gen {
        const struct model *m;
        struct model_ctx *ctx;
        struct gen_params p;
        struct tok_ids prompt;
        struct sample_rng rng;
        float *logits, *lps, *scratch_f;
        int *scratch_i;
        int n_generated;
        bool started, finished, in_reasoning;
        bool row_off;         /* set by the server before a step: this token is chosen from
                                 the logits shifted by one vocabulary row (--batch-fault) */
        struct tok_decoder dec_content, dec_reasoning;
        struct buf content;   /* all answer text so far (capped by the context) */
        size_t content_sent;  /* bytes of content already handed out */
        struct buf reasoning;
        size_t reasoning_sent;
        usec_t t_start, t_first; /* gen_new, first token (0 until then) */
        usec_t t_last;        /* the latest token */
        usec_t itl;           /* from the token before to the latest one (0 for the first) */
        int salad_left;       /* --fault-sampling: continuation bytes still owed to a character */
        int kv_counted;       /* cache positions the server counted in its KV usage */
};

/* Takes a copy of prompt. -E2BIG when the prompt fills the context, -ENOMEM. */
int gen_new(const struct model *m, const struct tok_ids *prompt, const struct gen_params *p, struct gen **ret);
void gen_free(struct gen *g);
/* One step. Returns 0 (see ret->done), or a negative errno. After done, do not call again. */
int gen_step(struct gen *g, struct gen_step *ret);

#endif
