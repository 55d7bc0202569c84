/* phases.h -- a cell's life as phases, and its verdict decided in one place.
 *
 * sweep.c runs one attempt of a cell as phases: launch, ready, checks, eval, bench, then
 * stop and settle. Each phase comes to a struct phase_result: on to the next phase, decided
 * (a verdict with its cause and evidence), or interrupted (a signal came: the attempt is
 * abandoned, whatever was decided). phases_run runs them in order until one is not "next";
 * phases_decide sets the attempt's verdict from the last result: the one place where a
 * launched cell's verdict is set. The producers below turn what a phase saw (a death, a
 * deadline, the checks' answers, the bench's levels) into a result; their evidence strings
 * are the journal's.
 *
 * Precedence, phase by phase:
 *   - a server found dead after a batch of requests is a crash (its log and exit status
 *     say which, or its launcher does) whatever the answers were;
 *   - a launcher's own outcome (a Slurm job's time limit) beats the log's diagnosis;
 *   - in the bench, in this order: garbage in the bench's own outputs (phases_gate_outputs),
 *     garbage in a check or an eval question under load (phases_gate_under_load_garbage),
 *     the accuracy under load significantly below alone (phases_gate_accuracy: wrong/
 *     accuracy), a check under load that answered wrong (phases_gate_under_load), then the
 *     failure gate (phases_gate_bench). Garbage first: it is the more specific finding, and
 *     garbage answers would also lower the accuracy; the accuracy before one wrong check:
 *     its evidence holds both figures and the test. The comparison with the reference's
 *     accuracy alone is the reports' (report_view_apply_eval), as the eval's is.
 */
#ifndef GAUNTLET_PHASES_H
#define GAUNTLET_PHASES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gate/attempt.h"
#include "bench/bench_metrics.h"
#include "bench/scrape.h"
#include "gate/checks.h"
#include "gate/eval.h"
#include "base/profile.h"
#include "proc/supervise.h"
#include "base/verdict.h"

/* After a connection error, how long to wait for the server's death before calling the
 * error garbage from a live server. */
#define PHASES_DEATH_GRACE (2 * USEC_PER_SEC)
/* How long to read the log of a dead server before diagnosing it. */
#define PHASES_DRAIN_TIME (1 * USEC_PER_SEC)

enum phase_step {
        STEP_NEXT,          /* the phase passed: on to the next one (after the last: pass) */
        STEP_DECIDED,       /* the cell's verdict is decided: verdict, cause, evidence */
        STEP_INTERRUPTED,   /* a signal came: the attempt is abandoned */
};

/* What a phase came to. Zero-initialised it is STEP_NEXT with nothing owned. */
struct phase_result {
        enum phase_step step;
        enum verdict verdict;       /* STEP_DECIDED only */
        char *cause;                /* owned, or NULL */
        char *evidence;             /* owned, or NULL; with STEP_NEXT a note the passing
                                       attempt keeps as its evidence (port_owner's) */
        bool unexplained;           /* decided by phases_death: an exit status its log
                                       gives no reason for (attempt.h) */
};

/* Sets *r to decided with v, cause and evidence (copied; NULLs allowed). 0 or -ENOMEM. */
int phase_result_decide(struct phase_result *r, enum verdict v, const char *cause, const char *evidence);
/* Frees what *r owns; it is STEP_NEXT again. */
void phase_result_release(struct phase_result *r);

/* One phase as phases_run runs it, on the caller's context. */
struct phase_def {
        /* Runs the phase; a result other than STEP_NEXT ends the sequence. < 0: gauntlet
         * cannot go on (out of memory, the journal unwritable). */
        int (*run)(void *ctx, struct phase_result *ret);
        /* Whether the phase is run at all (a matrix without an eval); NULL: always. */
        bool (*wanted)(const void *ctx);
};

/* Runs p[0..n) in order while *ret is STEP_NEXT (a phase not wanted is passed over).
 * Returns 0, or the first phase's error (the sequence stops there). */
int phases_run(const struct phase_def *p, size_t n, void *ctx, struct phase_result *ret);

/* The attempt's verdict from what its phases came to: STEP_NEXT after the last is a pass,
 * STEP_DECIDED its verdict, cause and evidence; STEP_INTERRUPTED leaves the attempt as it is
 * (the caller abandons it). 0 or -ENOMEM. */
int phases_decide(struct attempt *a, const struct phase_result *r);

/* The server died (or was found dead): its log drained (PHASES_DRAIN_TIME), then its
 * launcher's outcome when it decided one, else the diagnosis of the log at log_path and the
 * exit status (diagnose_exit). Decides *ret; ret->unexplained when the server exited with a
 * status and no line of its log said why (no signature, no error line), the log whole
 * (gauntlet wrote all of it). */
int phases_death(struct server *s, const char *log_path, const struct profile *p, struct phase_result *ret);

/* The server was not placed or not ready by its deadline: the launcher's outcome when it
 * decided one (not placed in time), else the log's (diagnose_deadline: timeout/startup
 * unless a fatal line names a cause). Decides *ret. */
int phases_deadline(struct server *s, const char *log_path, const struct profile *p, usec_t timeout,
                    struct phase_result *ret);

/* After a batch of requests (the checks, the eval) that ended with r: a connection refused,
 * reset or cut is garbage from a live server but the first sign of a dying one (the socket
 * closes a moment before the process is gone), so it waits up to PHASES_DEATH_GRACE for a
 * death; a dead server (or r == -ECANCELED: the batch saw it die) is phases_death whatever
 * the answers were; another failure of gauntlet's own (r < 0) is error with strerror as its
 * evidence. Returns 1 when the answers are the server's to judge (*ret untouched), 0 when
 * *ret was decided, or a negative errno. */
int phases_after_requests(struct server *s, const char *log_path, const struct profile *p, int r,
                          const struct check_result *results, size_t n, struct phase_result *ret);

/* The check suite's answers: STEP_NEXT when they pass (checks_summarize), else decided with
 * the worst one's verdict, cause and evidence. 0 or -ENOMEM. */
int phases_checks(const struct check_result *results, size_t n, struct phase_result *ret);

/* The eval's answers: a question that timed out decides timeout/request ("eval question
 * NAME: EVIDENCE"; the questions after it were not asked); wrong or garbage answers only
 * count against its accuracy (STEP_NEXT). 0 or -ENOMEM. */
int phases_eval(const struct check_result *results, size_t n, struct phase_result *ret);

/* The bench's levels (the journal's array of per-concurrency objects): the first check
 * under load, lowest level first, that did not pass decides the verdict ("under load at
 * concurrency N, NAME: EVIDENCE"; invalid reads as error). No answer at all (timeout, an
 * HTTP failure) is left to the failure gate. 1 when decided, 0 when none failed, -ENOMEM. */
int phases_gate_under_load(const json_t *levels, struct phase_result *ret);

/* The same for garbage alone: the first check under load, lowest level first, whose answer
 * a detector flagged, then the eval's answers under load (eval question NAME). 1 when
 * decided, 0 when none, -ENOMEM. */
int phases_gate_under_load_garbage(const json_t *levels, struct phase_result *ret);

/* The bench's own outputs (docs/metrics.md "The bench's own outputs"): the first level,
 * lowest first, with a flagged output decides garbage, its cause the first flagged one's,
 * "bench at concurrency N: K of R outputs flagged (CAUSE); first: EVIDENCE". One flagged
 * output is enough: the forced detectors never fire on an honest continuation (0 of the
 * outputs measured on a real llama-server, docs/metrics.md). 1 when decided, 0, -ENOMEM. */
int phases_gate_outputs(const json_t *levels, struct phase_result *ret);

/* The level object's eval_under_load (the first level that has one), or NULL. */
const json_t *phases_eval_under_load(const json_t *levels);
/* wrong/accuracy when the accuracy under load is significantly below the cell's own alone
 * (eval_significantly_below), evidence eval_under_load_evidence's. 1 when decided, 0 when
 * not (no eval under load, or not significantly below), -ENOMEM. */
int phases_gate_accuracy(const json_t *levels, const enum verdict *alone, size_t n_alone, struct phase_result *ret);

/* The failure gate: the first level with more failed requests than spec allows
 * (bench_failures_allowed) decides overload, its cause the kind of its first failure
 * (http, timeout, connect, stream, else failed), "at concurrency N: F of R requests failed;
 * first: ERROR". 1 when decided, 0 when every level passed the gate, -ENOMEM. */
int phases_gate_bench(const json_t *levels, const struct bench_spec *spec, struct phase_result *ret);

/* llama-server's KV-cache layout, from its log (the bench's /slots estimate divides by it:
 * scrape.h). The last line of text that ends with
 *     load_model: initializing, n_slots = N, n_ctx_slot = C, kv_unified = 'true'|'false'
 * (N and C whole numbers 1..2^31-1 in plain digits, nothing after the quote but blanks)
 * says it: 'true' is unified with C cells (every slot's context is the whole cache), 'false'
 * split. Unknown (cells 0) when there is no such line, when a line of the same start is
 * anything else, or when llama-server said before it, since the previous such line, that
 * "the slot context (X) exceeds the training context of the model (Y) - capping" (C is then
 * not the cache's size). Nothing else of the text is kept. */
struct phases_kv_layout {
        enum scrape_kv_layout layout;
        uint32_t cells;         /* unified: the cache's cells; else 0 */
        uint32_t slots;         /* N of the line taken; 0 when none */
};
void phases_kv_layout(const char *text, size_t len, struct phases_kv_layout *ret);
/* The most of a server's log phases_kv_layout is given (its start: the line comes before
 * the server is ready). */
#define PHASES_KV_LOG_MAX ((size_t)4 << 20)

#endif
