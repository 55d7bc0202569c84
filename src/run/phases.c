/* phases.c -- what each phase of a cell came to, and the verdict decided from it. */
#include "run/phases.h"

#include <stdint.h>
#include <string.h>

#include "gate/diagnose.h"
#include "gate/probes.h"
#include "base/metrics.h"

int phase_result_decide(struct phase_result *r, enum verdict v, const char *cause, const char *evidence) {
        char *c = cause ? strdup(cause) : NULL, *e = evidence ? strdup(evidence) : NULL;
        if ((cause && !c) || (evidence && !e)) {
                free(c);
                free(e);
                return -ENOMEM;
        }
        phase_result_release(r);
        *r = (struct phase_result){.step = STEP_DECIDED, .verdict = v, .cause = c, .evidence = e};
        return 0;
}

void phase_result_release(struct phase_result *r) {
        free(r->cause);
        free(r->evidence);
        *r = (struct phase_result){0};
}

int phases_run(const struct phase_def *p, size_t n, void *ctx, struct phase_result *ret) {
        for (size_t i = 0; i < n && ret->step == STEP_NEXT; i++) {
                if (p[i].wanted && !p[i].wanted(ctx))
                        continue;
                int r = p[i].run(ctx, ret);
                if (r < 0)
                        return r;
        }
        return 0;
}

int phases_decide(struct attempt *a, const struct phase_result *r) {
        switch (r->step) {
        case STEP_NEXT:
                return attempt_set_verdict(a, VERDICT_PASS, NULL, r->evidence); /* a note, or NULL */
        case STEP_DECIDED:
                a->unexplained = r->unexplained;
                return attempt_set_verdict(a, r->verdict, r->cause, r->evidence);
        case STEP_INTERRUPTED:
                break;
        }
        return 0;
}

/* What a launcher's scheduler decided (a Slurm job's time limit, its node): 1 when that
 * decides *ret, 0 when the log decides. */
static int launcher_outcome(struct server *s, struct phase_result *ret) {
        struct server_outcome o;
        int r = server_launcher_outcome(s, &o);
        if (r <= 0)
                return r;
        r = phase_result_decide(ret, o.verdict, o.cause, o.evidence);
        free(o.evidence);
        return r < 0 ? r : 1;
}

static int decide_diagnosis(struct phase_result *ret, struct diagnosis *d) {
        int r = phase_result_decide(ret, d->verdict, d->cause, d->evidence);
        diagnosis_release(d);
        return r;
}

int phases_death(struct server *s, const char *log_path, const struct profile *p, struct phase_result *ret) {
        server_drain_log(s, now_usec() + PHASES_DRAIN_TIME);
        int r = launcher_outcome(s, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        struct diagnosis d;
        if ((r = diagnose_exit(log_path, p, s->exit_code, s->exit_signal, &d)) < 0)
                return r;
        /* line 0: the evidence is the status and the log's last line, not a reason; and the
         * log is whole as the server wrote it (one gauntlet cut, a full disk, would be cut
         * again) */
        bool unexplained = d.line == 0 && s->exit_signal == 0 && s->exit_code > 0 && s->log_error == 0 &&
                           s->log_dropped == 0;
        if ((r = decide_diagnosis(ret, &d)) < 0)
                return r;
        ret->unexplained = unexplained;
        return 0;
}

int phases_deadline(struct server *s, const char *log_path, const struct profile *p, usec_t timeout,
                    struct phase_result *ret) {
        int r = launcher_outcome(s, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        struct diagnosis d;
        if ((r = diagnose_deadline(log_path, p, timeout, &d)) < 0)
                return r;
        return decide_diagnosis(ret, &d);
}

int phases_after_requests(struct server *s, const char *log_path, const struct profile *p, int r,
                          const struct check_result *results, size_t n, struct phase_result *ret) {
        bool transport = false;
        for (size_t i = 0; results && i < n; i++)
                transport |= results[i].transport_error;
        if (r == 0 && transport)
                server_wait_exit(s, now_usec() + PHASES_DEATH_GRACE);
        if (r == -ECANCELED || !server_alive(s))
                return phases_death(s, log_path, p, ret);
        if (r < 0)
                return phase_result_decide(ret, VERDICT_ERROR, NULL, strerror(-r));
        return 1;
}

int phases_checks(const struct check_result *results, size_t n, struct phase_result *ret) {
        const char *cause = NULL, *evidence = NULL;
        enum verdict v = checks_summarize(results, n, &cause, &evidence);
        if (v == VERDICT_PASS)
                return 0;
        return phase_result_decide(ret, v, cause, evidence);
}

int phases_eval(const struct check_result *results, size_t n, struct phase_result *ret) {
        for (size_t i = 0; i < n; i++)
                if (results[i].verdict == VERDICT_TIMEOUT) {
                        _cleanup_free_ char *ev = strdup_printf("eval question %s: %s", results[i].name,
                                                                results[i].evidence ? results[i].evidence : "timed out");
                        return ev ? phase_result_decide(ret, VERDICT_TIMEOUT, "request", ev) : -ENOMEM;
                }
        return 0;
}

/* An answer under load the gates judge: not a pass, and not the want of an answer (an HTTP
 * error, a cut, a timeout: the server failing a request under load, as the load's own
 * requests do, is the failure gate's to judge). */
static bool judged_under_load(enum verdict v, const char *cause) {
        return v != VERDICT_PASS && v != VERDICT_TIMEOUT && !(v == VERDICT_GARBAGE && streq_ptr(cause, "http"));
}

/* Decides *ret from answer c (checks_under_load's or eval_under_load's) of a level. */
static int decide_under_load(const json_t *level, const json_t *c, bool eval, struct phase_result *ret) {
        enum verdict v = verdict_from_string(json_string_value(json_object_get(c, "verdict")));
        const char *cause = json_string_value(json_object_get(c, "cause"));
        if (v == VERDICT_INVALID)
                v = VERDICT_ERROR;
        const char *ev = json_string_value(json_object_get(c, "evidence"));
        _cleanup_free_ char *e = strdup_printf(
                "under load at concurrency %lld, %s%s: %s",
                (long long)json_integer_value(json_object_get(level, metric_key(METRIC_CONCURRENCY))),
                eval ? "eval question " : "", json_string_value(json_object_get(c, "name")), ev ? ev : "(no evidence)");
        if (!e)
                return -ENOMEM;
        return phase_result_decide(ret, v, cause, e) < 0 ? -ENOMEM : 1;
}

static int gate_under_load(const json_t *levels, bool garbage_only, struct phase_result *ret) {
        size_t i, k;
        json_t *level, *c;
        json_array_foreach(levels, i, level) {
                json_array_foreach(json_object_get(level, metric_key(METRIC_CHECKS_UNDER_LOAD)), k, c) {
                        enum verdict v = verdict_from_string(json_string_value(json_object_get(c, "verdict")));
                        if (judged_under_load(v, json_string_value(json_object_get(c, "cause"))) &&
                            (!garbage_only || v == VERDICT_GARBAGE))
                                return decide_under_load(level, c, false, ret);
                }
                if (!garbage_only)
                        continue;
                /* the eval's answers under load: a wrong one is its accuracy's to judge
                 * (phases_gate_accuracy), garbage is garbage */
                json_array_foreach(json_object_get(json_object_get(level, metric_key(METRIC_EVAL_UNDER_LOAD)), "answers"),
                                   k, c) {
                        enum verdict v = verdict_from_string(json_string_value(json_object_get(c, "verdict")));
                        if (v == VERDICT_GARBAGE && judged_under_load(v, json_string_value(json_object_get(c, "cause"))))
                                return decide_under_load(level, c, true, ret);
                }
        }
        return 0;
}

int phases_gate_under_load(const json_t *levels, struct phase_result *ret) {
        return gate_under_load(levels, false, ret);
}

int phases_gate_under_load_garbage(const json_t *levels, struct phase_result *ret) {
        return gate_under_load(levels, true, ret);
}

int phases_gate_outputs(const json_t *levels, struct phase_result *ret) {
        size_t i;
        json_t *level;
        json_array_foreach(levels, i, level) {
                json_int_t flagged = json_integer_value(json_object_get(level, metric_key(METRIC_OUTPUTS_FLAGGED)));
                if (flagged <= 0)
                        continue;
                json_t *first = json_array_get(json_object_get(level, metric_key(METRIC_FLAGGED)), 0);
                const char *cause = json_string_value(json_object_get(first, "cause"));
                const char *ev = json_string_value(json_object_get(first, "evidence"));
                _cleanup_free_ char *e = strdup_printf(
                        "bench at concurrency %lld: %lld of %lld outputs flagged (%s); first: %s",
                        (long long)json_integer_value(json_object_get(level, metric_key(METRIC_CONCURRENCY))),
                        (long long)flagged,
                        (long long)json_integer_value(json_object_get(level, metric_key(METRIC_OUTPUTS_JUDGED))),
                        cause ? cause : "flagged", ev ? ev : "(no evidence)");
                if (!e)
                        return -ENOMEM;
                return phase_result_decide(ret, VERDICT_GARBAGE, cause ? cause : "repeat", e) < 0 ? -ENOMEM : 1;
        }
        return 0;
}

const json_t *phases_eval_under_load(const json_t *levels) {
        size_t i;
        json_t *level;
        json_array_foreach(levels, i, level) {
                json_t *e = json_object_get(level, metric_key(METRIC_EVAL_UNDER_LOAD));
                if (json_is_object(e))
                        return e;
        }
        return NULL;
}

int phases_gate_accuracy(const json_t *levels, const enum verdict *alone, size_t n_alone, struct phase_result *ret) {
        const json_t *e = phases_eval_under_load(levels);
        if (!e || !alone)
                return 0;
        struct eval_figures load, solo;
        eval_under_load_figures(e, alone, n_alone, &load, &solo);
        if (!eval_significantly_below(load.correct, load.n, solo.correct, solo.n))
                return 0;
        _cleanup_free_ char *ev = eval_under_load_evidence(
                (int)json_integer_value(json_object_get(e, "concurrency")), &load, &solo, "alone");
        if (!ev)
                return -ENOMEM;
        return phase_result_decide(ret, VERDICT_WRONG, "accuracy", ev) < 0 ? -ENOMEM : 1;
}

/* The cause of an overload verdict: what kind of failure the first one was. A request the
 * server refused (4xx) because the prompt and output do not fit its context (llama.cpp
 * "request (N tokens) exceeds the available context size (M tokens)", vLLM "maximum context
 * length is M") is the bench not fitting the server, as when the bench knew the context
 * before it sent anything: "context". */
static const char *failure_cause(const char *first_error) {
        int64_t context;
        if (first_error && startswith(first_error, "http_4") && probes_parse_context_error(first_error, &context) == 0)
                return "context";
        static const struct {
                const char *prefix, *cause;
        } kinds[] = {
                {"http_", "http"},       {"timeout", "timeout"}, {"connect", "connect"},
                {"error_event", "stream"}, {"closed", "stream"}, {"bad_event", "stream"},
                {"no_tokens", "stream"}, {"sse_limit", "stream"},
        };
        for (size_t i = 0; first_error && i < ELEMENTSOF(kinds); i++)
                if (strncmp(first_error, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
                        return kinds[i].cause;
        return "failed";
}

int phases_gate_bench(const json_t *levels, const struct bench_spec *spec, struct phase_result *ret) {
        size_t i;
        json_t *level;
        json_array_foreach(levels, i, level) {
                json_int_t failed = json_integer_value(json_object_get(level, metric_key(METRIC_FAILED)));
                json_int_t requests = json_integer_value(json_object_get(level, metric_key(METRIC_REQUESTS)));
                if (failed <= 0 || (uint64_t)failed <= bench_failures_allowed(spec, (uint64_t)requests))
                        continue;
                const char *first = json_string_value(json_object_get(level, metric_key(METRIC_FIRST_ERROR)));
                _cleanup_free_ char *ev = strdup_printf(
                        "at concurrency %lld: %lld of %lld requests failed; first: %s",
                        (long long)json_integer_value(json_object_get(level, metric_key(METRIC_CONCURRENCY))),
                        (long long)failed, (long long)requests, first ? first : "no reason recorded");
                if (!ev)
                        return -ENOMEM;
                return phase_result_decide(ret, VERDICT_OVERLOAD, failure_cause(first), ev) < 0 ? -ENOMEM : 1;
        }
        return 0;
}

/* ---- llama-server's KV-cache layout, from its log ---- */

/* Skips the literal lit at *p (within end); false when it is not there. */
static bool eat(const char **p, const char *end, const char *lit) {
        size_t n = strlen(lit);
        if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

/* A whole number 1..INT32_MAX in plain digits at *p (no sign, no leading zero). */
static bool eat_count(const char **p, const char *end, uint32_t *ret) {
        const char *q = *p;
        uint64_t v = 0;
        if (q >= end || *q < '1' || *q > '9')
                return false;
        for (; q < end && *q >= '0' && *q <= '9'; q++)
                if ((v = v * 10 + (uint64_t)(*q - '0')) > INT32_MAX)
                        return false;
        *p = q;
        *ret = (uint32_t)v;
        return true;
}

static const char kv_init[] = "load_model: initializing, n_slots = ";
static const char kv_capping[] = "exceeds the training context of the model (";

/* One line (no newline): 1 when it is an initializing line as phases_kv_layout takes it
 * (*ret set but for capping), -1 when it starts like one and is not, 0 otherwise. */
static int kv_line(const char *line, const char *end, struct phases_kv_layout *ret) {
        const char *p = memmem(line, (size_t)(end - line), kv_init, sizeof(kv_init) - 1);
        if (!p)
                return 0;
        p += sizeof(kv_init) - 1;
        uint32_t n, c;
        bool unified;
        if (!eat_count(&p, end, &n) || !eat(&p, end, ", n_ctx_slot = ") || !eat_count(&p, end, &c) ||
            !eat(&p, end, ", kv_unified = '"))
                return -1;
        if (eat(&p, end, "true'"))
                unified = true;
        else if (eat(&p, end, "false'"))
                unified = false;
        else
                return -1;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
                p++;
        if (p != end)
                return -1;
        *ret = (struct phases_kv_layout){.layout = unified ? SCRAPE_KV_UNIFIED : SCRAPE_KV_SPLIT,
                                         .cells = unified ? c : 0, .slots = n};
        return 1;
}

void phases_kv_layout(const char *text, size_t len, struct phases_kv_layout *ret) {
        struct phases_kv_layout res = {0};
        bool capped = false;
        const char *p = text, *end = text ? text + len : NULL;
        while (p && p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *stop = nl ? nl : end;
                struct phases_kv_layout l;
                int r = kv_line(p, stop, &l);
                if (r != 0) {
                        /* the last initializing line decides, with the capping said before it */
                        res = r > 0 && !capped ? l : (struct phases_kv_layout){0};
                        capped = false;
                } else if (memmem(p, (size_t)(stop - p), kv_capping, sizeof(kv_capping) - 1)) {
                        capped = true;
                }
                p = nl ? nl + 1 : end;
        }
        *ret = res;
}
