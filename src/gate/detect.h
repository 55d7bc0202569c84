/* detect.h -- garbage detectors: tests every output must pass, whatever the question (one,
 * a whole answer of one short word said a handful of times, looks at the question when known).
 *
 * A detector looks at one output and says whether it is garbage: a run of one character
 * or token, a periodic loop, special-token names, low information, invalid text,
 * multilingual soup, tokens that print as nothing, an empty answer, NaN in logprobs, an
 * HTTP 5xx, a table of a couple of cells in ragged rows. Correct answers are often short and sometimes legitimately repetitive
 * (counting, tables, code, refrains): a detector must not cry wolf.
 * Thresholds are tuned on the corpus under tests/corpus/ (docs/detectors.md).
 */
#ifndef GAUNTLET_DETECT_H
#define GAUNTLET_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/verdict.h"

struct detect_input {
        const char *text;            /* the answer (content), may be NULL for none */
        size_t len;
        const char *reasoning;       /* the reasoning part, or NULL; judged like text */
        size_t reasoning_len;
        const char *finish_reason;   /* "stop", "length", ... or NULL */
        const double *logprobs;      /* per-token logprobs when the server returned them */
        size_t n_logprobs;
        int64_t completion_tokens;   /* tokens the server says it generated (usage); <= 0
                                        when it did not say */
        int http_status;             /* 0 when not applicable */
        const char *error_message;   /* an error object or event the server sent, or NULL */
        const char *question;        /* what was asked (the prompt, or the messages' text), or
                                        NULL when not known: a whole answer of one short word
                                        said 6-15 times is judged against it */
        size_t question_len;
        bool forced;                 /* the output was forced past its natural end (a bench
                                        request with ignore_eos / min_tokens), or continues a
                                        prompt that is not a question: only the detectors that
                                        cannot fire on an honest forced continuation run: runs
                                        of one punctuation mark ('!', '+', '?', emoji: as if
                                        the model had stopped), of one bracket or drawing
                                        character (their highest limit, or the whole output),
                                        text a fifth or more of which (8 at least) is
                                        replacement, control or invalid characters, NaN,
                                        mixed-script word salad (and the HTTP/error-event
                                        rules). Not loops, low-information, the short-word
                                        rule, runs of letters, digits or whitespace (a model
                                        stutters or pads past its end), a stray replacement
                                        character, special-token names, the reasoning end
                                        tag, hidden tokens or an empty answer
                                        (docs/detectors.md "Forced continuations") */
};

struct detect_result {
        enum verdict verdict;        /* VERDICT_PASS or VERDICT_GARBAGE */
        const char *cause;           /* static: "repeat", "loop", "low-information",
                                        "invalid-text", "empty", "nan", "http"; NULL on pass */
        char *evidence;              /* owned; short printable excerpt (<= 120 bytes of text,
                                        control bytes escaped); NULL on pass */
};

/* Runs every detector; the first that fires decides. Returns 0 (see ret->verdict) or
 * -ENOMEM. */
int detect_output(const struct detect_input *in, struct detect_result *ret);
void detect_result_release(struct detect_result *r);

/* An excerpt of s around byte offset at: it starts max/5 bytes before `at` (moved back to a
 * character boundary) and holds at most max bytes of escaped text, with "..." where cut.
 * Escaped as text.h's TEXT_QUOTED: \n \t \r \\, other controls and invalid UTF-8 bytes
 * as \xNN, hidden characters (text_hidden_control: zero-width, bidi controls, C1) as
 * \uXXXX; the result is valid UTF-8 with no control bytes. Caller frees; NULL on ENOMEM. */
char *detect_excerpt(const char *s, size_t len, size_t at, size_t max);

/* All of s escaped the same way (for file names and other untrusted text printed whole).
 * Caller frees; NULL on ENOMEM. */
char *detect_escape(const char *s, size_t len);

#endif
