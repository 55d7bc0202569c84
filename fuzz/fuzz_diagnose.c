/* fuzz_diagnose.c -- libFuzzer target: the log diagnoser (diagnose_text and
 * diagnose_error_line), every profile.
 *
 * Input: byte 0 picks the engine profile; the rest is a server log.
 * Invariants: no crash; a match names a cause and a verdict of crash or timeout, and its
 * evidence is at most DIAGNOSE_MAX_EVIDENCE bytes, taken from a line that exists; so is a
 * first error line.
 */
#include <errno.h>

#include "gate/diagnose.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        const struct profile *p = fuzz_profile(&in);

        struct diagnosis d = {0};
        int r = diagnose_text((const char *)in.p, in.n, p, &d);
        FUZZ_ASSERT(r == 0 || r == 1, "unexpected result %d", r);
        if (r == 1) {
                size_t lines = 1;
                for (size_t i = 0; i < in.n; i++)
                        lines += in.p[i] == '\n';
                FUZZ_ASSERT(d.cause && *d.cause, "a match without a cause");
                FUZZ_ASSERT(d.verdict == VERDICT_CRASH || d.verdict == VERDICT_TIMEOUT, "verdict %d", d.verdict);
                FUZZ_ASSERT(d.evidence, "a match without evidence");
                FUZZ_ASSERT(strlen(d.evidence) <= DIAGNOSE_MAX_EVIDENCE, "evidence of %zu bytes",
                            strlen(d.evidence));
                FUZZ_ASSERT(d.line >= 1 && d.line <= lines, "line %zu of %zu", d.line, lines);
                diagnosis_release(&d);
        }

        char *first = NULL;
        size_t first_line = 0;
        r = diagnose_error_line((const char *)in.p, in.n, &first, &first_line);
        FUZZ_ASSERT(r == 0 || r == 1, "unexpected result %d", r);
        if (r == 1) {
                size_t lines = 1;
                for (size_t i = 0; i < in.n; i++)
                        lines += in.p[i] == '\n';
                FUZZ_ASSERT(first, "an error line without evidence");
                FUZZ_ASSERT(strlen(first) <= DIAGNOSE_MAX_EVIDENCE, "error line of %zu bytes", strlen(first));
                FUZZ_ASSERT(first_line >= 1 && first_line <= lines, "line %zu of %zu", first_line, lines);
        } else {
                FUZZ_ASSERT(!first && first_line == 0, "ret_* touched without a line");
        }
        free(first);
        return 0;
}
