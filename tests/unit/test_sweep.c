/* test_sweep.c -- a cell's phases (phases.h, as sweep.c runs them): their order, the one
 * place the verdict is decided, and the precedence of what each phase saw. The server is a
 * real child (/bin/sh scripts that die, hang or never answer), spawned here or through a
 * simulated launcher that stands in for a scheduler (placing it, or deciding its outcome). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/phases.h"
#include "proc/procs.h"
#include "proc/supervise.h"
#include "base/util.h"

/* ---- the sequence and the decision, with fake phases ---- */

/* A fake phase: what it comes to, and whether it ran. */
struct fake {
        enum phase_step step;
        enum verdict verdict;
        const char *cause, *evidence;
        int error;              /* < 0: the phase fails with it */
        bool unwanted;
        int ran;                /* the order it ran in, 1-based; 0: not run */
};

struct fakes {
        struct fake f[4];
        int n_ran;
};

static int fake_run(struct fakes *fs, size_t k, struct phase_result *ret) {
        struct fake *f = &fs->f[k];
        f->ran = ++fs->n_ran;
        if (f->error < 0)
                return f->error;
        if (f->step == STEP_DECIDED)
                return phase_result_decide(ret, f->verdict, f->cause, f->evidence);
        ret->step = f->step;
        return 0;
}
static int fake0(void *ctx, struct phase_result *ret) { return fake_run(ctx, 0, ret); }
static int fake1(void *ctx, struct phase_result *ret) { return fake_run(ctx, 1, ret); }
static int fake2(void *ctx, struct phase_result *ret) { return fake_run(ctx, 2, ret); }
static int fake3(void *ctx, struct phase_result *ret) { return fake_run(ctx, 3, ret); }
static bool fake2_wanted(const void *ctx) { return !((const struct fakes *)ctx)->f[2].unwanted; }

static const struct phase_def fake_phases[] = {
        {.run = fake0}, {.run = fake1}, {.run = fake2, .wanted = fake2_wanted}, {.run = fake3},
};

/* Runs the fake phases and decides an attempt from them: what phases_run returned. */
static int run_fakes(struct fakes *fs, struct attempt *a) {
        struct phase_result res = {0};
        attempt_init(a);
        int r = phases_run(fake_phases, ELEMENTSOF(fake_phases), fs, &res);
        if (r >= 0)
                assert_int_equal(phases_decide(a, &res), 0);
        phase_result_release(&res);
        return r;
}

static void test_every_phase_passes(void **state) {
        (void)state;
        struct fakes fs = {0};
        struct attempt a;
        assert_int_equal(run_fakes(&fs, &a), 0);
        for (size_t k = 0; k < 4; k++)
                assert_int_equal(fs.f[k].ran, (int)k + 1); /* in order, each once */
        assert_int_equal(a.verdict, VERDICT_PASS);
        assert_null(a.cause);
        assert_null(a.evidence);
        attempt_release(&a);
}

/* The first phase that decides is the verdict: the later phases do not run. */
static void test_decided_phase_ends_the_sequence(void **state) {
        (void)state;
        struct fakes fs = {0};
        fs.f[1] = (struct fake){.step = STEP_DECIDED, .verdict = VERDICT_WRONG, .cause = "arith", .evidence = "said 5"};
        fs.f[3] = (struct fake){.step = STEP_DECIDED, .verdict = VERDICT_OVERLOAD, .cause = "http", .evidence = "x"};
        struct attempt a;
        assert_int_equal(run_fakes(&fs, &a), 0);
        assert_int_equal(fs.f[1].ran, 2);
        assert_int_equal(fs.f[2].ran, 0);
        assert_int_equal(fs.f[3].ran, 0);
        assert_int_equal(a.verdict, VERDICT_WRONG);
        assert_string_equal(a.cause, "arith");
        assert_string_equal(a.evidence, "said 5");
        attempt_release(&a);
}

/* An interrupted phase abandons the attempt: nothing after it runs, and no verdict is set
 * (attempt_init's stays; the sweep abandons the row). */
static void test_interrupted_phase_abandons(void **state) {
        (void)state;
        struct fakes fs = {0};
        fs.f[0].step = STEP_INTERRUPTED;
        struct attempt a;
        assert_int_equal(run_fakes(&fs, &a), 0);
        assert_int_equal(fs.f[1].ran, 0);
        assert_int_equal(a.verdict, VERDICT_ERROR);
        assert_null(a.cause);
        assert_null(a.evidence);
        attempt_release(&a);
}

/* A phase not wanted (no eval in the matrix) is passed over; an error stops everything and
 * is returned, with no verdict. */
static void test_unwanted_and_failing_phases(void **state) {
        (void)state;
        struct fakes fs = {0};
        fs.f[2].unwanted = true;
        struct attempt a;
        assert_int_equal(run_fakes(&fs, &a), 0);
        assert_int_equal(fs.f[2].ran, 0);
        assert_int_equal(fs.f[3].ran, 3);
        assert_int_equal(a.verdict, VERDICT_PASS);
        attempt_release(&a);

        struct fakes ff = {0};
        ff.f[1].error = -ENOMEM;
        assert_int_equal(run_fakes(&ff, &a), -ENOMEM);
        assert_int_equal(ff.f[2].ran, 0);
        attempt_release(&a);
}

/* ---- what a phase saw, with real children ---- */

struct env {
        struct loop *loop;
        char dir[64];
        char log[128];
        char token[33];
        const struct profile *p;
};

static int setup(void **state) {
        struct env *e = calloc(1, sizeof(*e));
        assert_non_null(e);
        assert_int_equal(loop_new(&e->loop), 0);
        strcpy(e->dir, "/tmp/gauntlet-sweep-XXXXXX");
        assert_non_null(mkdtemp(e->dir));
        snprintf(e->log, sizeof(e->log), "%s/server.log", e->dir);
        assert_int_equal(procs_new_token(e->token), 0);
        assert_int_equal(procs_become_subreaper(), 0);
        e->p = profile_find("vllm");
        assert_non_null(e->p);
        *state = e;
        return 0;
}

static int teardown(void **state) {
        struct env *e = *state;
        struct procs_query q = {.token = e->token};
        procs_terminate(e->loop, &q, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL);
        loop_free(e->loop);
        unlink(e->log);
        rmdir(e->dir);
        free(e);
        return 0;
}

/* The simulated launcher: its client is the script; it places the server at once (or never:
 * -ETIME), and decides the outcome when told to. */
struct sim_config {
        const char *script;
        bool never_placed;
        struct server_outcome outcome;  /* verdict VERDICT_INVALID: the server ended on its own */
        int exit_code;                  /* what it says the server's own status was, or -1 */
};

static int sim_prepare(const void *config, const struct server_spec *spec, char ***ret_argv, void **ret_state) {
        (void)spec;
        const struct sim_config *c = config;
        char **argv = NULL;
        if (strv_push(&argv, "/bin/sh") < 0 || strv_push(&argv, "-c") < 0 || strv_push(&argv, c->script) < 0) {
                strv_free(argv);
                return -ENOMEM;
        }
        *ret_argv = argv;
        *ret_state = (void *)c;
        return 0;
}

static int sim_place(void *state, struct loop *l, usec_t *ret_next, char **ret_host, char **ret_note) {
        (void)l;
        (void)ret_next;
        const struct sim_config *c = state;
        if (c->never_placed) {
                *ret_note = strdup("[sim: still queued]");
                return -ETIME;
        }
        *ret_host = strdup("127.0.0.1");
        return *ret_host ? 1 : -ENOMEM;
}

static int sim_stop(void *state, struct server *s, usec_t grace, usec_t deadline) {
        (void)state, (void)s, (void)grace, (void)deadline;
        return 0;
}

static int sim_outcome(void *state, struct loop *l, int *exit_code, int *exit_signal, struct server_outcome *ret) {
        (void)l, (void)exit_signal;
        const struct sim_config *c = state;
        if (c->exit_code >= 0)
                *exit_code = c->exit_code;
        if (c->outcome.verdict == VERDICT_INVALID)
                return 0;
        *ret = c->outcome;
        ret->evidence = strdup(c->outcome.evidence);
        return ret->evidence ? 1 : -ENOMEM;
}

static void sim_free_state(void *state) {
        (void)state;
}

static int sim_cleanup(const void *config, struct loop *l, const char *token, usec_t grace, usec_t deadline) {
        (void)config, (void)l, (void)token, (void)grace, (void)deadline;
        return 0;
}

static const struct server_launcher_ops sim_ops = {
        .prepare = sim_prepare,
        .place = sim_place,
        .stop = sim_stop,
        .outcome = sim_outcome,
        .free_state = sim_free_state,
        .cleanup = sim_cleanup,
};

/* A server that is never ready (its probe goes to the discard port), through the launcher
 * when one is given. */
static struct server *start(struct env *e, const char *script, const struct server_launcher *ln) {
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        struct server_spec spec = {
                .argv = argv,
                .log_path = e->log,
                .token = e->token,
                .health_url = "http://127.0.0.1:9/health",
                .ready = READY_HTTP_200,
                .launcher = ln,
                .port = 9,
                .health_path = "/health",
                .name = "cell",
        };
        struct server *s = NULL;
        assert_int_equal(server_start(e->loop, &spec, &s), 0);
        return s;
}

static void stop(struct server *s) {
        assert_int_equal(server_stop(s, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL), 0);
        server_free(s);
}

static void expect(const struct phase_result *res, enum verdict v, const char *cause, const char *evidence) {
        if (res->step != STEP_DECIDED || res->verdict != v || !streq_ptr(res->cause, cause) ||
            !streq_ptr(res->evidence, evidence))
                print_error("expected %s/%s '%s', got step %d %s/%s '%s'\n", verdict_to_string(v), cause ? cause : "-",
                            evidence ? evidence : "-", (int)res->step, verdict_to_string(res->verdict),
                            res->cause ? res->cause : "-", res->evidence ? res->evidence : "-");
        assert_int_equal(res->step, STEP_DECIDED);
        assert_int_equal(res->verdict, v);
        assert_true(streq_ptr(res->cause, cause));
        assert_true(streq_ptr(res->evidence, evidence));
}

/* Every answer right, but the server is gone: a crash, from its log and exit status. */
static void test_death_during_checks_is_a_crash(void **state) {
        struct env *e = *state;
        struct server *s = start(e, "echo 'loading the model'; echo 'all good so far'; exit 3", NULL);
        assert_true(server_wait_exit(s, now_usec() + 10 * USEC_PER_SEC));
        struct check_result results[2] = {{.name = "arith", .verdict = VERDICT_PASS},
                                          {.name = "capital", .verdict = VERDICT_PASS}};
        struct phase_result res = {0};
        assert_int_equal(phases_after_requests(s, e->log, e->p, 0, results, 2, &res), 0);
        expect(&res, VERDICT_CRASH, "exit", "exited with status 3; last log line: all good so far");
        /* and so it is when the batch itself saw the death (-ECANCELED) */
        phase_result_release(&res);
        assert_int_equal(phases_after_requests(s, e->log, e->p, -ECANCELED, results, 2, &res), 0);
        expect(&res, VERDICT_CRASH, "exit", "exited with status 3; last log line: all good so far");
        phase_result_release(&res);
        stop(s);
}

/* A connection cut is the first sign of a dying server: the phase waits for the death
 * (PHASES_DEATH_GRACE) instead of calling the answers garbage. */
static void test_transport_error_waits_for_the_death(void **state) {
        struct env *e = *state;
        struct server *s = start(e, "echo 'CUDA error: an illegal memory access was encountered'; sleep 0.3; exit 1", NULL);
        struct check_result results[1] = {{.name = "arith", .verdict = VERDICT_GARBAGE, .transport_error = -ECONNRESET}};
        struct phase_result res = {0};
        assert_true(server_alive(s));
        assert_int_equal(phases_after_requests(s, e->log, e->p, 0, results, 1, &res), 0);
        assert_int_equal(res.verdict, VERDICT_CRASH);
        assert_string_equal(res.cause, "cuda");
        phase_result_release(&res);
        stop(s);
}

/* A live server: its answers are to be judged; gauntlet's own failure is an error. */
static void test_live_server_answers_are_judged(void **state) {
        struct env *e = *state;
        struct server *s = start(e, "exec sleep 30", NULL);
        struct check_result results[1] = {{.name = "arith", .verdict = VERDICT_WRONG}};
        struct phase_result res = {0};
        assert_int_equal(phases_after_requests(s, e->log, e->p, 0, results, 1, &res), 1);
        assert_int_equal(res.step, STEP_NEXT);
        assert_int_equal(phases_after_requests(s, e->log, e->p, -EIO, results, 1, &res), 0);
        expect(&res, VERDICT_ERROR, NULL, strerror(EIO));
        phase_result_release(&res);
        stop(s);
}

/* Not ready by the deadline, no fatal line: timeout/startup with the log's last line. */
static void test_startup_timeout(void **state) {
        struct env *e = *state;
        struct server *s = start(e, "echo 'INFO loading weights'; echo 'INFO 40% done'; exec sleep 30", NULL);
        assert_int_equal(server_wait_ready(s, now_usec() + USEC_PER_SEC), SERVER_DEADLINE);
        struct phase_result res = {0};
        assert_int_equal(phases_deadline(s, e->log, e->p, USEC_PER_SEC, &res), 0);
        expect(&res, VERDICT_TIMEOUT, "startup", "not ready after 1s; last log line: INFO 40% done");
        phase_result_release(&res);
        stop(s);
}

/* Through the simulated launcher: its outcome beats the log (a job never placed, a node that
 * failed); when it decides nothing, the log and the status it reports decide. */
static void test_launcher_outcome(void **state) {
        struct env *e = *state;
        struct sim_config c = {
                .script = "echo 'INFO waiting'; exec sleep 30",
                .never_placed = true,
                .outcome = {.verdict = VERDICT_TIMEOUT, .cause = "queue", .evidence = "still pending after 1s"},
                .exit_code = -1,
        };
        struct server_launcher ln = {.ops = &sim_ops, .config = &c};
        struct server *s = start(e, c.script, &ln);
        assert_int_equal(server_wait_placed(s), SERVER_DEADLINE);
        struct phase_result res = {0};
        assert_int_equal(phases_deadline(s, e->log, e->p, USEC_PER_SEC, &res), 0);
        expect(&res, VERDICT_TIMEOUT, "queue", "still pending after 1s");
        phase_result_release(&res);
        stop(s);

        /* placed, then died: the launcher's verdict, whatever the log says */
        c = (struct sim_config){.script = "echo 'RuntimeError: boom'; sleep 0.3; exit 1",
                                .outcome = {.verdict = VERDICT_CRASH, .cause = "node", .evidence = "node n1 failed"},
                                .exit_code = -1};
        s = start(e, c.script, &ln);
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DIED);
        assert_true(s->placed);
        assert_int_equal(phases_death(s, e->log, e->p, &res), 0);
        expect(&res, VERDICT_CRASH, "node", "node n1 failed");
        phase_result_release(&res);
        stop(s);

        /* the launcher decides nothing but knows the server's own status: the log decides */
        c = (struct sim_config){.script = "echo 'INFO serving'; exit 0", .outcome = {.verdict = VERDICT_INVALID},
                                .exit_code = 7};
        s = start(e, c.script, &ln);
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DIED);
        assert_int_equal(phases_death(s, e->log, e->p, &res), 0);
        expect(&res, VERDICT_CRASH, "exit", "exited with status 7; last log line: INFO serving");
        phase_result_release(&res);
        stop(s);
}

/* ---- the answers and the bench's levels ---- */

static void test_checks_and_eval(void **state) {
        (void)state;
        struct check_result ok[2] = {{.name = "a", .verdict = VERDICT_PASS}, {.name = "b", .verdict = VERDICT_PASS}};
        struct phase_result res = {0};
        assert_int_equal(phases_checks(ok, 2, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
        /* the worst answer decides: garbage (broken numerics) over a wrong answer */
        struct check_result bad[3] = {
                {.name = "a", .verdict = VERDICT_PASS},
                {.name = "b", .verdict = VERDICT_WRONG, .cause = "b", .evidence = "said 5"},
                {.name = "c", .verdict = VERDICT_GARBAGE, .cause = "repeat", .evidence = "la la la"},
        };
        assert_int_equal(phases_checks(bad, 3, &res), 0);
        expect(&res, VERDICT_GARBAGE, "repeat", "la la la");
        phase_result_release(&res);
        /* the eval: wrong answers count against accuracy only; a hung question decides */
        assert_int_equal(phases_eval(bad, 3, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
        struct check_result hung[2] = {{.name = "q1", .verdict = VERDICT_WRONG},
                                       {.name = "q2", .verdict = VERDICT_TIMEOUT}};
        assert_int_equal(phases_eval(hung, 2, &res), 0);
        expect(&res, VERDICT_TIMEOUT, "request", "eval question q2: timed out");
        phase_result_release(&res);
}

static json_t *levels_of(const char *text) {
        json_error_t err;
        json_t *j = json_loads(text, 0, &err);
        if (!j)
                print_error("bad test JSON: %s\n", err.text);
        assert_non_null(j);
        return j;
}

/* The failure gate: more failures than allowed at a level is overload, the cause the kind of
 * the first failure; within the gate, a pass. */
static void test_bench_failure_gate(void **state) {
        (void)state;
        _cleanup_json_ json_t *levels = levels_of(
                "[{\"concurrency\": 1, \"requests\": 10, \"failed\": 1, \"first_error\": \"timeout\"},"
                " {\"concurrency\": 4, \"requests\": 40, \"failed\": 3, \"first_error\": \"http_503\"}]");
        struct bench_spec spec = {.max_failures = 1};
        struct phase_result res = {0};
        assert_int_equal(phases_gate_bench(levels, &spec, &res), 1);
        expect(&res, VERDICT_OVERLOAD, "http", "at concurrency 4: 3 of 40 requests failed; first: http_503");
        phase_result_release(&res);
        spec = (struct bench_spec){.max_failure_share = 0.1};
        assert_int_equal(phases_gate_bench(levels, &spec, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
        spec = (struct bench_spec){0};
        assert_int_equal(phases_gate_bench(levels, &spec, &res), 1);
        expect(&res, VERDICT_OVERLOAD, "timeout", "at concurrency 1: 1 of 10 requests failed; first: timeout");
        phase_result_release(&res);
        /* a request refused for the context (llama.cpp's words, then vLLM's): the bench does
         * not fit the server, as when the bench knew it before it sent anything */
        static const char *const refused[] = {
                "http_400: request (6002 tokens) exceeds the available context size (4096 tokens), try increasing it",
                "http_400: This model's maximum context length is 2048 tokens. However, you requested 6016 tokens "
                "(6000 in the messages, 16 in the completion).",
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                _cleanup_free_ char *text = strdup_printf(
                        "[{\"concurrency\": 1, \"requests\": 4, \"failed\": 4, \"first_error\": \"%s\"}]", refused[i]);
                _cleanup_json_ json_t *ctx = levels_of(text);
                assert_int_equal(phases_gate_bench(ctx, &spec, &res), 1);
                assert_int_equal(res.verdict, VERDICT_OVERLOAD);
                assert_string_equal(res.cause, "context");
                phase_result_release(&res);
        }
        /* a 5xx that says the same is the server failing, not a refusal */
        _cleanup_json_ json_t *five = levels_of("[{\"concurrency\": 1, \"requests\": 4, \"failed\": 4, "
                                                "\"first_error\": \"http_500: exceeds the available context size (4096 tokens)\"}]");
        assert_int_equal(phases_gate_bench(five, &spec, &res), 1);
        assert_string_equal(res.cause, "http");
        phase_result_release(&res);
}

/* A check under load that answered wrong decides that verdict; no answer at all (a timeout,
 * an HTTP failure) is left to the failure gate. */
static void test_wrong_answer_under_load(void **state) {
        (void)state;
        _cleanup_json_ json_t *levels = levels_of(
                "[{\"concurrency\": 1, \"checks_under_load\": ["
                "   {\"name\": \"arith\", \"verdict\": \"pass\"},"
                "   {\"name\": \"capital\", \"verdict\": \"timeout\", \"cause\": \"request\"}]},"
                " {\"concurrency\": 8, \"checks_under_load\": ["
                "   {\"name\": \"arith\", \"verdict\": \"garbage\", \"cause\": \"http\", \"evidence\": \"HTTP 503\"},"
                "   {\"name\": \"capital\", \"verdict\": \"wrong\", \"cause\": \"capital\", \"evidence\": \"Lyon\"}]}]");
        struct phase_result res = {0};
        assert_int_equal(phases_gate_under_load(levels, &res), 1);
        expect(&res, VERDICT_WRONG, "capital", "under load at concurrency 8, capital: Lyon");
        phase_result_release(&res);
        _cleanup_json_ json_t *fine = levels_of(
                "[{\"concurrency\": 2, \"checks_under_load\": [{\"name\": \"arith\", \"verdict\": \"timeout\"}]}]");
        assert_int_equal(phases_gate_under_load(fine, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
}

/* The bench's own outputs: the first level with a flagged output is garbage with its counts
 * and the first evidence; none flagged passes. */
static void test_outputs_gate(void **state) {
        (void)state;
        _cleanup_json_ json_t *levels = levels_of(
                "[{\"concurrency\": 1, \"outputs_judged\": 10, \"outputs_flagged\": 0, \"flagged\": []},"
                " {\"concurrency\": 4, \"outputs_judged\": 40, \"outputs_flagged\": 3, \"flagged\": ["
                "   {\"cause\": \"repeat\", \"evidence\": \"run of 64 x '!' at byte 0\", \"index\": 7}]}]");
        struct phase_result res = {0};
        assert_int_equal(phases_gate_outputs(levels, &res), 1);
        expect(&res, VERDICT_GARBAGE, "repeat",
               "bench at concurrency 4: 3 of 40 outputs flagged (repeat); first: run of 64 x '!' at byte 0");
        phase_result_release(&res);
        _cleanup_json_ json_t *fine = levels_of("[{\"concurrency\": 1, \"outputs_judged\": 10, \"outputs_flagged\": 0}]");
        assert_int_equal(phases_gate_outputs(fine, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
        /* a level from before the bench judged its outputs has no count: nothing to gate */
        _cleanup_json_ json_t *old = levels_of("[{\"concurrency\": 1}]");
        assert_int_equal(phases_gate_outputs(old, &res), 0);
}

/* Garbage under load first (a check, then an eval question); wrong answers are left to the
 * accuracy and the per-check gates. */
static void test_under_load_garbage(void **state) {
        (void)state;
        _cleanup_json_ json_t *levels = levels_of(
                "[{\"concurrency\": 2, \"checks_under_load\": [{\"name\": \"arith\", \"verdict\": \"wrong\", "
                "   \"cause\": \"arith\", \"evidence\": \"324\"}]},"
                " {\"concurrency\": 8, \"eval_under_load\": {\"concurrency\": 8, \"answers\": ["
                "   {\"seq\": 0, \"name\": \"products-0\", \"verdict\": \"wrong\", \"cause\": \"products-0\"},"
                "   {\"seq\": 1, \"name\": \"products-1\", \"verdict\": \"garbage\", \"cause\": \"http\"},"
                "   {\"seq\": 2, \"name\": \"products-2\", \"verdict\": \"garbage\", \"cause\": \"repeat\", "
                "    \"evidence\": \"run of 20 x '+'\"}]}}]");
        struct phase_result res = {0};
        assert_int_equal(phases_gate_under_load_garbage(levels, &res), 1);
        expect(&res, VERDICT_GARBAGE, "repeat", "under load at concurrency 8, eval question products-2: run of 20 x '+'");
        phase_result_release(&res);
        assert_int_equal(phases_gate_under_load(levels, &res), 1);
        expect(&res, VERDICT_WRONG, "arith", "under load at concurrency 2, arith: 324");
        phase_result_release(&res);
}

/* A JSON eval_under_load level with `right` of n answers right (seq 0..n-1), the rest wrong,
 * and k timeouts after them (not counted). */
static json_t *eval_level(int concurrency, int n, int right, int timeouts) {
        json_t *answers = json_array();
        for (int i = 0; i < n + timeouts; i++)
                json_array_append_new(answers, json_pack("{s:i, s:s, s:s}", "seq", i, "name", "q",
                                                         "verdict", i >= n ? "timeout" : i < right ? "pass" : "wrong"));
        return json_pack("[{s:i, s:{s:i, s:i, s:o}}]", "concurrency", concurrency, "eval_under_load", "concurrency",
                         concurrency, "asked", n + timeouts, "answers", answers);
}

/* The accuracy under load against the cell's own alone, as figures -> verdict. */
static void test_accuracy_under_load(void **state) {
        (void)state;
        enum verdict alone[60];
        for (size_t i = 0; i < 60; i++)
                alone[i] = i == 3 ? VERDICT_WRONG : VERDICT_PASS; /* 49 of the first 50 right alone */
        struct phase_result res = {0};
        /* 20/50 under load against 49/50 alone: significantly below */
        _cleanup_json_ json_t *bad = eval_level(32, 50, 20, 5);
        assert_int_equal(phases_gate_accuracy(bad, alone, 60, &res), 1);
        assert_int_equal(res.verdict, VERDICT_WRONG);
        assert_string_equal(res.cause, "accuracy");
        assert_non_null(strstr(res.evidence, "accuracy under load at concurrency 32: 0.400 ["));
        assert_non_null(strstr(res.evidence, "(20/50) below alone 0.980 ["));
        assert_non_null(strstr(res.evidence, "(49/50): two-proportion z-test z = -"));
        assert_non_null(strstr(res.evidence, "p < 0.001 (95%)"));
        phase_result_release(&res);
        /* 47/50 under load: not significantly below 49/50 */
        _cleanup_json_ json_t *close = eval_level(32, 50, 47, 0);
        assert_int_equal(phases_gate_accuracy(close, alone, 60, &res), 0);
        assert_int_equal(res.step, STEP_NEXT);
        /* no eval under load, or nothing alone to compare with */
        _cleanup_json_ json_t *none = levels_of("[{\"concurrency\": 4}]");
        assert_int_equal(phases_gate_accuracy(none, alone, 60, &res), 0);
        assert_int_equal(phases_gate_accuracy(bad, NULL, 0, &res), 0);
        /* the figures: timeouts under load and questions not asked alone count on neither side */
        alone[1] = VERDICT_SKIPPED;
        struct eval_figures load, solo;
        eval_under_load_figures(phases_eval_under_load(bad), alone, 60, &load, &solo);
        assert_int_equal(load.n, 49);
        assert_int_equal(load.correct, 19);
        assert_int_equal(solo.n, 49);
        assert_int_equal(solo.correct, 48);
        /* fewer alone verdicts than questions: only those count */
        eval_under_load_figures(phases_eval_under_load(bad), alone, 10, &load, &solo);
        assert_int_equal(load.n, 9);
}

/* ---- llama-server's KV-cache layout from its log ---- */

static struct phases_kv_layout kv_of(const char *text) {
        struct phases_kv_layout l = {.layout = SCRAPE_KV_SPLIT, .cells = 7, .slots = 7};
        phases_kv_layout(text, strlen(text), &l);
        return l;
}

static void test_kv_layout_from_log(void **state) {
        /* a real log: llama-server without --parallel, unified 4 x 256 */
        const char *src = getenv("SRCDIR");
        _cleanup_free_ char *path = strdup_printf("%s/tests/logs/llamacpp-clean.log", src ? src : ".");
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        assert_non_null(path);
        assert_int_equal(read_file_capped(path, 1 << 20, &text, &len), 0);
        struct phases_kv_layout l = {0};
        phases_kv_layout(text, len, &l);
        assert_int_equal(l.layout, SCRAPE_KV_UNIFIED);
        assert_int_equal(l.cells, 256);
        assert_int_equal(l.slots, 4);

        l = kv_of("0.00.013.817 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'false'\n");
        assert_true(l.layout == SCRAPE_KV_SPLIT && l.cells == 0 && l.slots == 4);
        /* the last line decides; CRLF and blanks after the quote are fine */
        l = kv_of("x load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'false'\n"
                  "x load_model: initializing, n_slots = 1, n_ctx_slot = 4096, kv_unified = 'true' \r\n");
        assert_true(l.layout == SCRAPE_KV_UNIFIED && l.cells == 4096 && l.slots == 1);
        /* without a newline at the end */
        l = kv_of("load_model: initializing, n_slots = 2, n_ctx_slot = 8, kv_unified = 'true'");
        assert_true(l.layout == SCRAPE_KV_UNIFIED && l.cells == 8 && l.slots == 2);

        /* capped at the training context: n_ctx_slot is not the cache's size */
        l = kv_of("0.00.013.000 W srv    load_model: the slot context (8192) exceeds the training context of "
                  "the model (2048) - capping\n"
                  "0.00.013.817 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'true'\n");
        assert_true(l.layout == SCRAPE_KV_UNKNOWN && l.cells == 0 && l.slots == 0);
        /* a capping said for an earlier load does not carry over to the next */
        l = kv_of("load_model: the slot context (8192) exceeds the training context of the model (2048) - capping\n"
                  "load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'true'\n"
                  "load_model: initializing, n_slots = 4, n_ctx_slot = 1024, kv_unified = 'true'\n");
        assert_true(l.layout == SCRAPE_KV_UNIFIED && l.cells == 1024);

        /* missing, or not the line: unknown */
        static const char *const unknown[] = {
                "",
                "0.00.013.817 I srv    load_model: loading model\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'yes'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'true'; rm -rf /\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'True'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = true\n",
                "load_model: initializing, n_slots = -4, n_ctx_slot = 256, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 0, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 0256, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 2147483648, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 99999999999999999999999, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 1e3, kv_unified = 'true'\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'true\n",
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256\n",
                "load_model: initializing, n_slots = 4,\nn_ctx_slot = 256, kv_unified = 'true'\n",
                /* a good line, then a garbled one of the same start: the last says nothing */
                "load_model: initializing, n_slots = 4, n_ctx_slot = 256, kv_unified = 'true'\n"
                "load_model: initializing, n_slots = 4, n_ctx_slot = \x1b[31m256, kv_unified = 'true'\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(unknown); i++) {
                l = kv_of(unknown[i]);
                if (l.layout != SCRAPE_KV_UNKNOWN || l.cells != 0 || l.slots != 0)
                        fail_msg("case %zu: layout %d cells %u", i, (int)l.layout, l.cells);
        }
        /* a NUL inside the text: the line stops nothing, the bytes are only compared */
        static const char nul[] = "load_model: initializing, n_slots = 4, n_ctx_slot = 2\0" "56, kv_unified = 'true'\n";
        phases_kv_layout(nul, sizeof(nul) - 1, &l);
        assert_int_equal(l.layout, SCRAPE_KV_UNKNOWN);
        phases_kv_layout(NULL, 0, &l);
        assert_int_equal(l.layout, SCRAPE_KV_UNKNOWN);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_phase_passes),
                cmocka_unit_test(test_decided_phase_ends_the_sequence),
                cmocka_unit_test(test_interrupted_phase_abandons),
                cmocka_unit_test(test_unwanted_and_failing_phases),
                cmocka_unit_test_setup_teardown(test_death_during_checks_is_a_crash, setup, teardown),
                cmocka_unit_test_setup_teardown(test_transport_error_waits_for_the_death, setup, teardown),
                cmocka_unit_test_setup_teardown(test_live_server_answers_are_judged, setup, teardown),
                cmocka_unit_test_setup_teardown(test_startup_timeout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_launcher_outcome, setup, teardown),
                cmocka_unit_test(test_checks_and_eval),
                cmocka_unit_test(test_bench_failure_gate),
                cmocka_unit_test(test_wrong_answer_under_load),
                cmocka_unit_test(test_outputs_gate),
                cmocka_unit_test(test_under_load_garbage),
                cmocka_unit_test(test_accuracy_under_load),
                cmocka_unit_test(test_kv_layout_from_log),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
