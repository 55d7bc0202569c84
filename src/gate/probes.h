/* probes.h -- the questions long, sampled, multi-turn traffic asks (docs/checks.md "Probes").
 *
 * After the golden checks passed, the probes ask the same server what short, greedy,
 * single-turn checks never ask:
 *  - long-context: a passkey hidden in filler text filling a share of the cell's context,
 *    the context read from the server (probes_parse_context), the prompt sized with the
 *    server's /tokenize where it has one; a control asks the same fact with no filler
 *    first, and a model that cannot recall even then is judged on a golden question
 *    asked after the same filler instead;
 *  - sampling: every golden question of the suite again, `runs` times at temperature 0.7,
 *    top_p 0.95, seeds 1..runs, all at once; garbage in any run is garbage, fewer than
 *    `min_right` right answers is wrong/sampling;
 *  - multi-turn: three user turns through the chat endpoint with the model's own answers
 *    as history, the last depending on the first; a single-turn control decides, as for
 *    long-context, whether turn 3 recalls or asks another golden question.
 * Each gives check_results (checks.h) judged as checks are (detectors, then expect), with
 * `detail` saying what was measured; a probe the server cannot take is `skipped` with the
 * reason as evidence, which checks_summarize shows but does not count.
 */
#ifndef GAUNTLET_PROBES_H
#define GAUNTLET_PROBES_H

#include <stdint.h>

#include "gate/checks.h"
#include "io/loop.h"
#include "base/util.h"

#define PROBES_DEFAULT_SHARE 0.75
#define PROBES_DEFAULT_LC_MAX_TOKENS 32768
#define PROBES_MAX_LC_MAX_TOKENS 1048576
#define PROBES_DEFAULT_LC_TIMEOUT (5 * 60 * USEC_PER_SEC)
#define PROBES_MAX_CONTEXT ((int64_t)1 << 24)
#define PROBES_DEFAULT_RUNS 5
#define PROBES_MAX_RUNS 50
#define PROBES_DEFAULT_MIN_RIGHT 4
#define PROBES_DEFAULT_TEMPERATURE 0.7
#define PROBES_DEFAULT_TOP_P 0.95
#define PROBES_MIN_FILLER_TOKENS 64   /* below this a context is too small to matter */
#define PROBES_ANSWER_TOKENS 32       /* max_tokens of the long-context question */
#define PROBES_TEMPLATE_ROOM 16       /* tokens left for the chat template around the prompt */
#define PROBES_GUESS_MIN_TOKENS 512 /* context unknown and refused: halved down to this */

enum probe_kind { PROBE_LONG_CONTEXT, PROBE_SAMPLING, PROBE_MULTI_TURN, _PROBE_MAX };

/* The matrix's `probes:` and smoke's flags. Adding a probe: a kind above, its options
 * here, its name in probe_names (probes.c), its key in matrix.c's parse_probes. */
struct probes_options {
        bool on[_PROBE_MAX];          /* default all on */
        struct {
                double share;         /* of the context, in (0, 1]; default 0.75 */
                int max_tokens;       /* cap on the prompt's tokens; default 32768 */
                usec_t timeout;       /* the long request's own; default 5m */
                int64_t context;      /* used when the server does not say its own; 0: none */
        } long_context;
        struct {
                int runs;             /* 1..50, default 5 */
                int min_right;        /* 1..runs, default 4 */
                double temperature;   /* (0, 2], default 0.7 */
                double top_p;         /* (0, 1], default 0.95 */
        } sampling;
        struct {
                enum stream_mode stream; /* default both */
        } multi_turn;
        uint64_t seed;                /* the passkey, its depth and the number to remember:
                                         the sweep derives it from the cell id */
};

void probes_options_init(struct probes_options *o);
/* "long_context", "sampling", "multi_turn" (the matrix's keys); NULL past the end. */
const char *probe_name(enum probe_kind k);
/* The kind of a key, accepting "-" for "_" ("long-context"), or -EINVAL. */
int probe_from_name(const char *name);
bool probes_any(const struct probes_options *o);

/* Runs the probes that are on, against the server t names (t->model set: the model the
 * checks used). suite and its results are the golden checks' (passed), whose questions the
 * sampling probe asks again and whose right answers the fallbacks use. *ret gets the
 * probes' results (caller frees with checks_free_results). Returns 0, or as checks_run:
 * -ECANCELED/-EINTR (the results so far in *ret), -ENOMEM. A request that timed out ends
 * the probes (a hung server hangs the rest). */
int probes_run(struct loop *l, const struct checks_target *t, const struct probes_options *o,
               const struct check_spec *suite, size_t n_suite, const struct check_result *suite_results,
               size_t n_suite_results, struct check_result **ret, size_t *ret_n);

/* ---- the pure parts, for tests ---- */

/* The context a server says it has, from the body of one of its endpoints: path is
 * "/v1/models" (max_model_len, context_length, max_context_length, meta.n_ctx),
 * "/get_model_info" (max_context_length, context_length), "/get_server_info"
 * (context_length, max_context_length), "/props" (default_generation_settings.n_ctx, n_ctx),
 * "/slots" (n_ctx of the first slot). -ENOENT when it says none. */
int probes_parse_context(const char *path, const char *body, size_t len, int64_t *ret);
/* The context in an error saying a prompt is too long: vLLM's "maximum context length is N
 * tokens", llama.cpp's "exceeds the available context size (N tokens)", SGLang's "longer
 * than the model's context length (N tokens)". -ENOENT when there is none. */
int probes_parse_context_error(const char *message, int64_t *ret);
/* Filler of about `chars` bytes (whole sentences, at least one), varied plain English from
 * `seed`, with `fact` inserted at `depth_pct` percent of it (0..100); caller frees. */
char *probes_filler(size_t chars, uint64_t seed, const char *fact, int depth_pct);
/* The passkey (5 digits), its depth (10..90%) and the number to remember (10..99). */
void probes_secrets(uint64_t seed, int *ret_passkey, int *ret_depth_pct, int *ret_remember);
/* The tokens to fill: share of context less the answer's room, at most cap; -ERANGE when
 * that leaves fewer than PROBES_MIN_FILLER_TOKENS. */
int probes_target_tokens(int64_t context, double share, int cap, int64_t *ret);
/* The sampling probe's verdict on runs results of one question (each judged as a check):
 * garbage, timeout or error in any run decides (the first such, evidence naming the run),
 * else fewer than min_right passes is wrong/sampling; *ret gets name, verdict, cause,
 * evidence, detail (and the output of the run the evidence is about). -ENOMEM only. */
int probes_judge_sampling(const char *name, const struct check_result *runs, size_t n, int min_right,
                          double temperature, double top_p, struct check_result *ret);

#endif
