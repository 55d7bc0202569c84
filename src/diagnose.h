/* diagnose.h -- why a server died, read from its log and its exit status.
 *
 * The innermost matching signature wins: signatures are ranked by tier (profile.h) and,
 * within a tier, the earliest line (vLLM and SGLang print wrapper lines after the real
 * error). With no signature, the exit status speaks: a signal is crash/signal, any exit
 * status (0 included: SGLang once exited 0 after a child crashed) is crash/exit.
 */
#ifndef GAUNTLET_DIAGNOSE_H
#define GAUNTLET_DIAGNOSE_H

#include <stddef.h>

#include "profile.h"
#include "verdict.h"

/* Bytes of a log read for diagnosis: the first and the last part of a bigger log. */
#define DIAGNOSE_MAX_HEAD ((size_t)8 << 20)
#define DIAGNOSE_MAX_TAIL ((size_t)8 << 20)
/* Evidence lines are cut to this many bytes. */
#define DIAGNOSE_MAX_EVIDENCE 400

struct diagnosis {
        enum verdict verdict;   /* crash or timeout */
        const char *cause;      /* static string from the signature table or "signal"/"exit" */
        char *evidence;         /* owned: the log line, or the exit status and last line */
        size_t line;            /* 1-based line number of the evidence in the log; 0 if none */
};

/* Finds the best signature in a log text. Returns 1 and fills *ret when one matched, 0 when
 * none did (ret untouched), negative errno on failure. */
int diagnose_text(const char *text, size_t len, const struct profile *p, struct diagnosis *ret);

/* Diagnoses a dead server: signature in the log at log_path first, then the exit status
 * (exit_signal != 0: killed by it; else exit_code). Always fills *ret on success. */
int diagnose_exit(const char *log_path, const struct profile *p, int exit_code, int exit_signal,
                  struct diagnosis *ret);

/* The last non-blank line of the log (cut to DIAGNOSE_MAX_EVIDENCE), or NULL. */
char *diagnose_last_line(const char *log_path);

void diagnosis_release(struct diagnosis *d);

#endif
