/* attempt.c -- the record of one launch. */
#include "gate/attempt.h"

#include <string.h>

void attempt_init(struct attempt *a) {
        *a = (struct attempt){.verdict = VERDICT_ERROR, .exit_code = -1};
}

void attempt_release(struct attempt *a) {
        free(a->cause);
        free(a->evidence);
        free(a->log_path);
        free(a->prediction);
        for (size_t i = 0; i < a->n_checks; i++)
                check_result_release(&a->checks[i]);
        free(a->checks);
        checks_free_results(a->eval, a->n_eval);
        json_decref(a->bench);
        json_decref(a->bench_samples);
        attempt_init(a);
}

int attempt_set_verdict(struct attempt *a, enum verdict v, const char *cause, const char *evidence) {
        char *c = NULL, *e = NULL;
        if ((cause && !(c = strdup(cause))) || (evidence && !(e = strdup(evidence)))) {
                free(c);
                return -ENOMEM;
        }
        free(a->cause);
        free(a->evidence);
        a->verdict = v;
        a->cause = c;
        a->evidence = e;
        return 0;
}

const char *attempt_where(enum verdict v, const usec_t phase[_PHASE_MAX]) {
        if (v != VERDICT_CRASH && v != VERDICT_TIMEOUT)
                return NULL;
        return phase[PHASE_BENCH] > 0  ? "in the bench, after the checks passed"
               : phase[PHASE_EVAL] > 0 ? "in the eval, after the checks passed"
                                       : NULL;
}

const char *phase_to_string(enum phase p) {
        static const char *const names[_PHASE_MAX] = {"launch", "ready", "checks", "eval", "bench", "stop"};
        return p < _PHASE_MAX ? names[p] : "invalid";
}
