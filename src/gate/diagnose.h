/* diagnose.h -- why a server died, read from its log and its exit status.
 *
 * The innermost matching signature wins: signatures are ranked by tier (profile.h) and,
 * within a tier, the earliest line (vLLM and SGLang print wrapper lines after the real
 * error). A failed assertion (GGML_ASSERT, assert(), CHECK, an uncaught C++ exception) is a
 * signature of the lowest tier, cause "assert": any reason found beats it. With no
 * signature, the exit status names the cause: a signal is crash/signal, any exit status (0
 * included: SGLang once exited 0 after a child crashed) is crash/exit; and the evidence
 * quotes the log's first error line (diagnose_error_line), or its last line when nothing
 * in it looks like an error. Evidence is never a backtrace frame nor a wrapper line.
 */
#ifndef GAUNTLET_DIAGNOSE_H
#define GAUNTLET_DIAGNOSE_H

#include <stddef.h>

#include "base/profile.h"
#include "base/util.h"
#include "base/verdict.h"

/* Bytes of a log read for diagnosis: the first and the last part of a bigger log. */
#define DIAGNOSE_MAX_HEAD ((size_t)8 << 20)
#define DIAGNOSE_MAX_TAIL ((size_t)8 << 20)
/* Evidence lines are cut to this many bytes. */
#define DIAGNOSE_MAX_EVIDENCE 400

struct diagnosis {
        enum verdict verdict;   /* crash or timeout */
        const char *cause;      /* static string from the signature table or "signal"/"exit" */
        char *evidence;         /* owned: the log line, or the exit status and a log line */
        size_t line;            /* 1-based line number of the evidence in the log; 0 if none */
};

/* Finds the best signature in a log text. Returns 1 and fills *ret when one matched, 0 when
 * none did (ret untouched), negative errno on failure. */
int diagnose_text(const char *text, size_t len, const struct profile *p, struct diagnosis *ret);

/* The first line of a log text that looks like an error, for a log no signature explains:
 * a llama.cpp "E " line, an "error:"/"ERROR"/"fatal" line, the exception line that ends a
 * Python traceback (without the log prefix its lines repeat). Backtrace frames, lines of a
 * quieter level (INFO, W) and wrapper lines (profile_wrapper_lines) are skipped. Returns 1
 * with *ret_evidence (owned, cut to DIAGNOSE_MAX_EVIDENCE) and *ret_line (1-based), 0 when
 * no line looks like an error (ret_* untouched), -ENOMEM. */
int diagnose_error_line(const char *text, size_t len, char **ret_evidence, size_t *ret_line);

/* Whether a log line's own level says it is not an error (INFO, WARNING, llama.cpp's "W ",
 * TensorRT-LLM's "[WARNING]"): the lines diagnose_error_line skips. False when out of memory. */
bool diagnose_line_quiet(const char *line);

/* How diagnose_exit and diagnose_deadline quote the log after what gauntlet saw ("exited
 * with status 1" DIAGNOSE_FIRST_ERROR "X"): the reports and the search read them back. */
#define DIAGNOSE_FIRST_ERROR "; first error line: "
#define DIAGNOSE_LAST_LINE "; last log line: "

/* Diagnoses a dead server: signature in the log at log_path first, then the exit status
 * (exit_signal != 0: killed by it; else exit_code) with the first error line ("exited with
 * status 1; first error line: X") or else the last line ("...; last log line: X"). Always
 * fills *ret on success; .line is 0 when the evidence quotes no error line. */
int diagnose_exit(const char *log_path, const struct profile *p, int exit_code, int exit_signal,
                  struct diagnosis *ret);

/* Diagnoses a server not ready by its deadline (still running): a signature in the log
 * names the cause (a worker died, the main process hangs on); else timeout/startup, "not
 * ready after DURATION" with the first error line, else the last line, else "; the log is
 * empty". Always fills *ret on success. */
int diagnose_deadline(const char *log_path, const struct profile *p, usec_t timeout, struct diagnosis *ret);

/* The last non-blank line of the log (cut to DIAGNOSE_MAX_EVIDENCE), or NULL. */
char *diagnose_last_line(const char *log_path);

/* The port a crash/port line says was taken, or 0 when it quotes none: the number after
 * the word "port" (llama-server's "port: 8080", torch.distributed's "port: 29501", "port
 * 8000") or an address's ("('127.0.0.1', 30000)", "127.0.0.1:30000"). */
int diagnose_named_port(const char *evidence);

void diagnosis_release(struct diagnosis *d);

#endif
