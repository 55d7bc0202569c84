/* attempt.h -- one launch of one cell, as the sweep produced it and the journal keeps it. */
#ifndef GAUNTLET_ATTEMPT_H
#define GAUNTLET_ATTEMPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gate/checks.h"
#include "gate/eval.h"
#include "base/util.h"
#include "base/verdict.h"

enum phase { PHASE_LAUNCH, PHASE_READY, PHASE_CHECKS, PHASE_EVAL, PHASE_BENCH, PHASE_STOP, _PHASE_MAX };

struct attempt {
        int64_t id;                /* journal row id; 0 until journal_attempt_begin */
        int64_t sweep_id;
        char cell_id[17];
        enum verdict verdict;
        char *cause;               /* NULL for pass */
        char *evidence;            /* log line, output excerpt or exit status; NULL for pass */
        char *log_path;
        usec_t started_wall;       /* wall clock, microseconds since the epoch */
        usec_t phase[_PHASE_MAX];  /* duration of each phase; 0 if not reached */
        usec_t ready_after;        /* launch to ready; 0 if never ready */
        int exit_code;             /* -1 unless the server exited by itself */
        int exit_signal;           /* 0 unless a signal killed it */
        int port;
        struct check_result *checks;
        size_t n_checks;
        /* The eval (docs/eval.md): one result per question of eval_set, in its order; NULL
         * when no eval ran. eval_set is borrowed (the matrix's): its ids, keys and prompts
         * go to the journal beside each answer. */
        struct check_result *eval;
        size_t n_eval;
        const struct eval_set *eval_set;
        json_t *bench;             /* array of per-concurrency objects (DESIGN.md shape), or NULL */
        json_t *bench_samples;     /* array of per-request sample objects, or NULL */
        uint64_t peak_gpu_mem_mib; /* 0 when unknown */
        char *prediction;          /* skipped/pruned: the search's prediction, JSON; else NULL */
        /* A crash with an exit status (no signal) whose log gave no reason: no signature
         * and no error line, only its last line. An engine that exits before its log is
         * written out leaves that (llama.cpp's logger is not flushed at exit:
         * docs/supervisor.md), so the sweep launches such a cell once more. */
        bool unexplained;
};

void attempt_init(struct attempt *a);
void attempt_release(struct attempt *a);
/* Sets verdict, cause and evidence (copies the strings; NULLs allowed). */
int attempt_set_verdict(struct attempt *a, enum verdict v, const char *cause, const char *evidence);
const char *phase_to_string(enum phase p);
/* Where a launch that died or hung did so when it had passed its checks: "in the bench,
 * after the checks passed" (or the eval's), else NULL: an engine that serves the checks
 * and dies under the bench's load is another failure than one that never starts. */
const char *attempt_where(enum verdict v, const usec_t phase[_PHASE_MAX]);

#endif
