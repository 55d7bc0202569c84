/* sweep.c -- the sweep: which cell next (grid or search), and each cell's life as phases,
 * launch -> ready -> checks -> eval -> bench -> stop -> settle (phases.h) -> journal. */
#include "run/sweep.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "gate/checks.h"
#include "gate/diagnose.h"
#include "gate/probes.h"
#include "gate/eval.h"
#include "run/infer.h"
#include "base/metrics.h"
#include "run/phases.h"
#include "proc/procs.h"
#include "proc/provenance.h"
#include "results/report_load.h"
#include "results/search_view.h"
#include "run/sweep_count.h"
#include "proc/slurm.h"
#include "proc/spawn.h"
#include "proc/supervise.h"

/* Beyond the SIGTERM grace, how long SIGKILL may take to be confirmed. */
#define STOP_EXTRA (30 * USEC_PER_SEC)

static char *sweep_program(const struct matrix *m, const char *argv0);

static char *base_url(const char *host, int port) {
        if (strchr(host, ':'))
                return strdup_printf("http://[%s]:%d", host, port);
        return strdup_printf("http://%s:%d", host, port);
}

void sweep_notice(const struct sweep_callbacks *cb, const char *fmt, ...) {
        if (!cb || !cb->notice)
                return;
        va_list ap;
        va_start(ap, fmt);
        char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) >= 0) {
                cb->notice(cb->userdata, msg);
                free(msg);
        }
        va_end(ap);
}

static bool server_died(void *userdata) {
        return !server_alive(userdata);
}
static int server_cpu(void *userdata, uint64_t *ret) {
        return server_cpu_ticks(userdata, ret);
}

/* Memory within this of the baseline counts as given back: drivers and other tenants
 * move a little memory all the time. */
#define MEMORY_TOLERANCE_MIB 512

/* One attempt of one cell: what its phases share (phases.h). The launch fills the middle
 * part; cell_run_release frees it. */
struct cell_run {
        struct loop *loop;
        const struct sweep_options *o;
        struct gpu_sampler *sampler;
        const struct matrix *m;
        struct journal *j;
        const struct cell *cell;
        const struct sweep_callbacks *cb;
        struct attempt *a;
        int64_t sweep_id;
        const char *log_dir;
        const struct count_rule *count; /* the sweep's rule for counting tokens */
        int launch;           /* 1, then 2... when the port was lost (PORT_TRIES) */
        unsigned measure;     /* a search measuring the cell again: its launch of the cell
                                 (2, 3...), for a log of its own; 0 otherwise */
        int claim;            /* >= 0: a search's worker claims the cell, which must still
                                 have this many settled launches (journal_attempt_claim) */
        /* the launch's */
        char token[33];
        char **argv, **env;
        char *url;            /* where gauntlet talks to a server spawned here */
        char *health, *program;
        struct server_launcher launcher; /* outlives the server */
        struct server_port_owner port_owner; /* the matrix's, for the spec */
        uint64_t *baseline;   /* GPU memory before the launch, one per GPU; NULL: no wait */
        usec_t launched;      /* when the launch began (monotonic) */
        struct server *s;     /* NULL until started, and after the stop */
        const char *at;       /* once placed: where the server answers */
        char *model;          /* the model id the checks used, for the bench */
        /* how the attempt ended besides its verdict */
        bool interrupted;
        bool journal_failed;  /* the error returned is the journal's (disk full...) */
        bool port_taken;      /* the error returned: the fixed port is someone else's */
};

static void cell_run_release(struct cell_run *cr) {
        strv_free(cr->argv);
        strv_free(cr->env);
        free(cr->url);
        free(cr->health);
        free(cr->program);
        free(cr->baseline);
        free(cr->model);
        server_free(cr->s);
}

/* Where the matrix's servers listen (and, run here, where gauntlet talks to them). A
 * Slurm job's server listens on every address of its node unless `host:` says otherwise. */
static const char *matrix_host(const struct matrix *m) {
        if (m->launcher == LAUNCHER_SLURM && !m->line_host)
                return "0.0.0.0";
        return m->host ? m->host : "127.0.0.1";
}

/* The launcher of m's servers, filled into buf: NULL for servers spawned here. */
static const struct server_launcher *sweep_launcher(const struct matrix *m, struct server_launcher *buf) {
        if (m->launcher != LAUNCHER_SLURM)
                return NULL;
        slurm_launcher(&m->slurm, buf);
        return buf;
}

/* How many times a cell is launched when the port gauntlet picked turns out to be taken
 * (another process bound it between the pick and the server's bind). */
#define PORT_TRIES 3

/* Whether a crash is the port's fault rather than the configuration's: the log says the
 * address was in use, or the server died before it was ready and its port is now held
 * by something else. Only asked when gauntlet picked the port. */
static bool lost_port(const struct attempt *a, const struct matrix *m) {
        if (a->verdict != VERDICT_CRASH)
                return false;
        if (streq_ptr(a->cause, "port"))
                return true;
        /* a server on another node: this machine's ports say nothing of its */
        return m->launcher == LAUNCHER_LOCAL && a->ready_after == 0 && supervise_port_taken(matrix_host(m), a->port) == 1;
}

/* The cell enters phase p: the callbacks hear of it; the time it began. */
static usec_t phase_enter(struct cell_run *cr, enum phase p) {
        if (cr->cb && cr->cb->cell_phase)
                cr->cb->cell_phase(cr->cb->userdata, cr->cell, p);
        return now_usec();
}

/* A signal that came while a phase waited for something else (a death after the checks)
 * was consumed by that wait; loop_signal() still has it: the attempt is interrupted. */
static void phase_signal(struct cell_run *cr, struct phase_result *res) {
        if (loop_signal(cr->loop))
                res->step = STEP_INTERRUPTED;
}

/* The matrix's check suite; *ret_owned is what the caller frees (the default suite). */
static int matrix_suite(const struct matrix *m, struct check_spec **ret, size_t *ret_n, struct check_spec **ret_owned) {
        *ret_owned = NULL;
        if (m->checks_default) {
                int r = checks_default_suite(ret_owned, ret_n);
                if (r < 0)
                        return r;
                *ret = *ret_owned;
                return 0;
        }
        *ret = m->checks;
        *ret_n = m->n_checks;
        return 0;
}

/* The launches a search may make in all: budget.launches, 0 for none (not a search, or
 * --no-prune, under which the budget is not in effect). */
static size_t launch_budget(const struct matrix *m, const struct sweep_options *o) {
        return m->strategy == STRATEGY_SEARCH && !o->no_prune ? m->budget_launches : 0;
}

/* The attempt's row, its log, its port and its token, journaled before anything starts. */
static int launch_prepare(struct cell_run *cr) {
        const struct matrix *m = cr->m;
        struct attempt *a = cr->a;
        const char *host = matrix_host(m);
        int r;
        a->sweep_id = cr->sweep_id;
        memcpy(a->cell_id, cr->cell->id, sizeof(a->cell_id));
        a->started_wall = now_wall_usec();
        /* A launch again on another port keeps the first launch's log. */
        char again[32] = "";
        if (cr->measure > 1)
                snprintf(again, sizeof(again), ".measure%u", cr->measure);
        a->log_path = cr->launch > 1 ? strdup_printf("%s/%s%s.launch%d.log", cr->log_dir, cr->cell->id, again, cr->launch)
                                     : strdup_printf("%s/%s%s.log", cr->log_dir, cr->cell->id, again);
        if (!a->log_path)
                return -ENOMEM;
        int port = m->port;
        if (!port && (r = supervise_free_port(host, cr->o->slot, cr->o->n_slots, &port)) < 0)
                return r;
        /* A fixed port that something else already listens on would have the readiness
         * probe and the checks talk to that other server: stop before the launch. */
        if (m->port && m->launcher == LAUNCHER_LOCAL && (r = supervise_port_taken(host, port)) != 0) {
                cr->port_taken = r > 0;
                return r > 0 ? -EADDRINUSE : r;
        }
        a->port = port;
        if ((r = procs_new_token(cr->token)) < 0)
                return r;
        /* The token goes in before the spawn: a gauntlet SIGKILLed between the spawn and
         * the pid's record leaves a server that the next run still finds by it. */
        /* the budget's last launch goes to one worker only */
        r = cr->claim >= 0 ? journal_attempt_claim(cr->j, a, (unsigned)cr->claim, launch_budget(cr->m, cr->o))
                           : journal_attempt_begin(cr->j, a);
        if (r == -EALREADY)
                return r;  /* another worker's now */
        if (r < 0 || (r = journal_attempt_process(cr->j, a->id, 0, 0, cr->token)) < 0)
                cr->journal_failed = true;
        return r;
}

/* What the server is started from: its argv, environment and addresses. */
static int launch_spec(struct cell_run *cr, struct server_spec *ret) {
        const struct matrix *m = cr->m;
        const char *host = matrix_host(m);
        int r;
        if ((r = cell_resolve_argv(cr->cell, host, cr->a->port, &cr->argv)) < 0)
                return r;
        cr->url = base_url(host, cr->a->port);
        cr->health = cr->url ? strdup_printf("%s%s", cr->url, m->profile->health_path) : NULL;
        if (!cr->health)
                return -ENOMEM;
        cr->env = strv_copy(cr->cell->env);
        for (char *const *e = cr->o->extra_env; cr->env && e && *e; e++)
                if (strv_push(&cr->env, *e) < 0)
                        return -ENOMEM;
        if (!cr->env)
                return -ENOMEM;
        cr->program = sweep_program(m, cr->argv[0]);
        *ret = (struct server_spec){
                .path = cr->program,
                .argv = cr->argv,
                .env = cr->env,
                .workdir = m->workdir,
                .log_path = cr->a->log_path,
                .token = cr->token,
                .health_url = cr->health,
                .ready = m->profile->ready,
                .ready_line = m->profile->ready_line,
                .straggler_grace = m->straggler_timeout,
                .cgroups = cr->o->cgroups,
                .launcher = sweep_launcher(m, &cr->launcher),
                .port = cr->a->port,
                .health_path = m->profile->health_path,
                .name = cr->cell->id,
                .host = host,
                .port_owner = &cr->port_owner,
        };
        cr->port_owner = (struct server_port_owner){.any = m->port_owner_any, .commands = m->port_owners};
        return 0;
}

/* Phase launch: the attempt prepared and journaled, GPU memory noted (the next cell starts
 * only once it is back there), the server started and its pid journaled at once (a
 * SIGKILLed gauntlet's next run finds it by its token). A server that cannot start decides
 * error; then cr->s stays NULL. */
static int cell_launch(struct cell_run *cr, struct phase_result *res) {
        struct server_spec spec;
        int r;
        if ((r = launch_prepare(cr)) < 0 || (r = launch_spec(cr, &spec)) < 0)
                return r;
        struct gpu *g = cr->o->gpu;
        if (g && g->n_gpus > 0 && gpu_sample(g) >= 0 && (cr->baseline = calloc(g->n_gpus, sizeof(uint64_t))))
                for (size_t i = 0; i < g->n_gpus; i++)
                        cr->baseline[i] = g->gpus[i].memory_used_mib;
        if (cr->sampler)
                gpu_sampler_reset(cr->sampler);

        cr->launched = phase_enter(cr, PHASE_LAUNCH);
        r = server_start(cr->loop, &spec, &cr->s);
        cr->a->phase[PHASE_LAUNCH] = now_usec() - cr->launched;
        if (r < 0) {
                _cleanup_free_ char *e = r == -ELOOP ? strdup_printf("cannot start '%s': its log '%s' is a symbolic link "
                                                                     "(not followed)", cr->argv[0], cr->a->log_path)
                                                     : strdup_printf("cannot start '%s': %s", cr->argv[0], strerror(-r));
                return phase_result_decide(res, VERDICT_ERROR, NULL, e ? e : "cannot start the server");
        }
        if ((r = journal_attempt_process(cr->j, cr->a->id, cr->s->pid, cr->s->starttime, cr->token)) < 0) {
                cr->journal_failed = true;
                server_stop(cr->s, cr->m->stop_timeout, now_usec() + cr->m->stop_timeout + STOP_EXTRA, NULL);
                server_free(TAKE_PTR(cr->s));
        }
        return r;
}

static int confirm_port(struct cell_run *cr, struct phase_result *res);

/* Phase ready: a launcher's server first waits for its place (a Slurm job in the queue:
 * part of the launch; the startup timeout counts from there), then for its readiness. */
static int cell_ready(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        struct server *s = cr->s;
        enum server_event ev = server_wait_placed(s);
        cr->a->phase[PHASE_LAUNCH] = now_usec() - cr->launched;
        cr->at = server_base_url(s) ? server_base_url(s) : cr->url;
        usec_t t = phase_enter(cr, PHASE_READY);
        if (ev == SERVER_READY)
                ev = server_wait_ready(s, s->started + cr->m->startup_timeout);
        cr->a->phase[PHASE_READY] = now_usec() - t;
        /* the address the probe found the server at: every request of the cell goes there */
        cr->at = server_base_url(s) ? server_base_url(s) : cr->url;
        int r = 0;
        switch (ev) {
        case SERVER_DIED:
                r = phases_death(s, cr->a->log_path, cr->m->profile, res);
                break;
        case SERVER_DEADLINE:
                /* not placed in time: the launcher says why; not ready in time: the log */
                r = phases_deadline(s, cr->a->log_path, cr->m->profile, cr->m->startup_timeout, res);
                break;
        case SERVER_SIGNAL:
                res->step = STEP_INTERRUPTED;
                return 0;
        case SERVER_PORT_TAKEN:
                /* below: the holder named; gone meanwhile, said without its name */
                r = phase_result_decide(res, VERDICT_CRASH, "port",
                                        "another process held every address of the server's port");
                break;
        case SERVER_READY:
                break;
        }
        /* A server that never listened where it should, while another process does: that
         * process is the cause, named (after the log's line when the log says so too). */
        if (r >= 0 && ev != SERVER_READY) {
                struct phase_result pr = {0};
                if ((r = confirm_port(cr, &pr)) >= 0 && pr.step == STEP_DECIDED) {
                        if (ev != SERVER_PORT_TAKEN && streq_ptr(res->cause, "port") && res->evidence) {
                                char *both = strdup_printf("%s; %s", res->evidence, pr.evidence);
                                if (!both)
                                        r = -ENOMEM;
                                free(pr.evidence);
                                pr.evidence = both;
                        }
                        phase_result_release(res);
                        *res = pr;
                } else
                        phase_result_release(&pr);
        }
        return r;
}

/* The server answering is the one launched (server_verify_port): another process listening
 * where the cell's requests go decides crash/port, with that process as evidence. One that
 * port_owner allows is said in the log and, for a cell that passes, as its evidence. */
static int confirm_port(struct cell_run *cr, struct phase_result *res) {
        _cleanup_free_ char *e = NULL;
        int r = server_verify_port(cr->s, &e);
        if (r < 0)
                sweep_notice(cr->cb, "cannot tell which process listens on port %d: %s", cr->s->port, strerror(-r));
        const char *note = server_port_note(cr->s);
        if (r == 0 && note && !res->evidence) {
                server_log_note(cr->s, note);
                if (!(res->evidence = strdup(note)))
                        return -ENOMEM;
        }
        if (r <= 0)
                return 0;
        server_log_note(cr->s, e);
        return phase_result_decide(res, VERDICT_CRASH, "port", e);
}

/* Phase port, before the first check: the readiness probe may have been answered by
 * another process. Only a server that answers for itself counts as ready (a picked port
 * lost so is launched again on another: lost_port). */
static int cell_port(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        int r = confirm_port(cr, res);
        if (r >= 0 && res->step == STEP_NEXT)
                cr->a->ready_after = cr->s->ready_at - cr->s->started;
        return r;
}

/* Phase port again, after the bench: a listener that changed meanwhile is asked again. */
static int cell_port_again(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        return server_alive(cr->s) ? confirm_port(cr, res) : 0;
}

/* Phase checks: the suite, asked of the server alone. */
static int cell_checks(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        const struct matrix *m = cr->m;
        usec_t t0 = phase_enter(cr, PHASE_CHECKS);
        struct check_spec *suite, *owned;
        size_t n_suite;
        int r = matrix_suite(m, &suite, &n_suite, &owned);
        if (r < 0)
                return r;
        struct checks_target t = {
                .base_url = cr->at,
                .model = NULL, /* what /v1/models serves: the path is not always the name */
                .profile = m->profile,
                .request_timeout = m->request_timeout,
                .should_abort = server_died,
                .abort_userdata = cr->s,
                .ret_model = &cr->model,
        };
        struct check_result *results = NULL;
        size_t n = 0;
        r = checks_run(cr->loop, &t, suite, n_suite, &results, &n);
        /* The probes (probes.h), after golden checks that passed: their results follow
         * the checks', judged by the same summary. The passkey and its depth vary with
         * the cell. */
        if (r == 0 && probes_any(&m->probes) && checks_summarize(results, n, NULL, NULL) == VERDICT_PASS) {
                struct probes_options po = m->probes;
                po.seed = fnv1a(FNV_SEED, cr->a->cell_id, strlen(cr->a->cell_id));
                t.model = cr->model;
                t.ret_model = NULL;
                struct check_result *pr = NULL;
                size_t n_pr = 0;
                r = probes_run(cr->loop, &t, &po, suite, n_suite, results, n, &pr, &n_pr);
                if (n_pr) {
                        struct check_result *all = realloc(results, (n + n_pr) * sizeof(*all));
                        if (!all) {
                                checks_free_results(pr, n_pr);
                                r = -ENOMEM;
                        } else {
                                memcpy(all + n, pr, n_pr * sizeof(*pr));
                                free(pr);
                                results = all;
                                n += n_pr;
                        }
                } else
                        free(pr);
        }
        checks_free_suite(owned, owned ? n_suite : 0);
        cr->a->checks = results;
        cr->a->n_checks = n;
        if (r == -ENOMEM)
                return r;
        if (r == -EINTR) {
                res->step = STEP_INTERRUPTED;
                r = 0;
        } else if ((r = phases_after_requests(cr->s, cr->a->log_path, m->profile, r, results, n, res)) == 1) {
                r = phases_checks(results, n, res);
        }
        cr->a->phase[PHASE_CHECKS] = now_usec() - t0;
        if (r >= 0)
                phase_signal(cr, res);
        return r;
}

static bool wants_eval(const void *ctx) {
        return ((const struct cell_run *)ctx)->m->has_eval;
}

/* Phase eval (docs/eval.md): every question, concurrently, judged as checks are. */
static int cell_eval(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        const struct matrix *m = cr->m;
        usec_t t0 = phase_enter(cr, PHASE_EVAL);
        struct checks_target t = {
                .base_url = cr->at,
                .model = cr->model,
                .profile = m->profile,
                .request_timeout = m->request_timeout,
                .should_abort = server_died,
                .abort_userdata = cr->s,
        };
        struct check_result *results = NULL;
        int r = eval_run(cr->loop, &t, &m->eval_set, &m->eval, &results);
        if (r == -ENOMEM || r == -EINVAL)
                return r;
        cr->a->eval = results;
        cr->a->n_eval = m->eval_set.n;
        cr->a->eval_set = &m->eval_set;
        if (r == -EINTR) {
                res->step = STEP_INTERRUPTED;
                r = 0;
        } else if ((r = phases_after_requests(cr->s, cr->a->log_path, m->profile, r, results, m->eval_set.n, res)) == 1) {
                r = phases_eval(results, m->eval_set.n, res);
        }
        cr->a->phase[PHASE_EVAL] = now_usec() - t0;
        if (r >= 0)
                phase_signal(cr, res);
        return r;
}

/* The questions asked under load: the check suite, then up to BENCH_EVAL_UNDER_LOAD of the
 * eval's that this cell answered right alone (so that a wrong answer under load is the
 * load's doing, not a question the model does not know). Shallow copies: *ret is freed
 * alone, the specs stay the suite's and the eval's. */
#define BENCH_EVAL_UNDER_LOAD 16
static int under_load_specs(const struct cell_run *cr, const struct check_spec *suite, size_t n_suite,
                            struct check_spec **ret, size_t *ret_n) {
        const struct attempt *a = cr->a;
        size_t n_eval = cr->m->has_eval && a->eval ? a->n_eval : 0;
        struct check_spec *all = calloc(n_suite + MIN(n_eval, (size_t)BENCH_EVAL_UNDER_LOAD) + 1, sizeof(*all));
        if (!all)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < n_suite; i++)
                all[n++] = suite[i];
        for (size_t i = 0, k = 0; i < n_eval && k < BENCH_EVAL_UNDER_LOAD; i++)
                if (a->eval[i].verdict == VERDICT_PASS) {
                        all[n++] = cr->m->eval_set.specs[i];
                        k++;
                }
        *ret = all;
        *ret_n = n;
        return 0;
}

/* llama-server's KV-cache layout from the start of the cell's log (phases_kv_layout), for the
 * bench's /slots estimate; unknown when the log says none or cannot be read. Whatever the
 * matrix names the engine: only llama-server prints that line, and the bench reads /slots
 * only from a server whose /metrics is llama.cpp's. */
static void log_kv_layout(const char *log_path, struct phases_kv_layout *ret) {
        *ret = (struct phases_kv_layout){0};
        _cleanup_close_ int fd = log_path ? open(log_path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (fd >= 0 && read_fd_upto(fd, PHASES_KV_LOG_MAX, &text, &len) == 0)
                phases_kv_layout(text, len, ret);
}

/* probes.under_load: with an eval that this cell answered alone. */
static bool wants_eval_under_load(const struct cell_run *cr) {
        return cr->m->has_eval && cr->m->under_load.on && cr->a->eval && cr->m->eval_set.n > 0;
}

/* The verdicts of the eval's questions alone, for phases_gate_accuracy (caller frees);
 * NULL with *ret_n 0 when there are none, and on ENOMEM (the gate then has nothing to
 * compare: -ENOMEM in *ret_err). */
static enum verdict *alone_verdicts(const struct cell_run *cr, size_t *ret_n, int *ret_err) {
        *ret_n = 0;
        *ret_err = 0;
        if (!cr->a->eval || !cr->a->n_eval)
                return NULL;
        enum verdict *v = calloc(cr->a->n_eval, sizeof(*v));
        if (!v) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        for (size_t i = 0; i < cr->a->n_eval; i++)
                v[i] = cr->a->eval[i].verdict;
        *ret_n = cr->a->n_eval;
        return v;
}

/* The bench's load, with the checks (and eval questions) asked under it; the levels and
 * samples in *ret_levels, *ret_samples (the caller's). As bench_run returns. */
static int bench_load(struct cell_run *cr, json_t **ret_levels, json_t **ret_samples, char **ret_refused) {
        struct check_spec *suite, *owned;
        size_t n_suite;
        int r = matrix_suite(cr->m, &suite, &n_suite, &owned);
        if (r < 0)
                return r;
        _cleanup_free_ struct check_spec *asked = NULL;
        size_t n_asked = 0;
        if ((r = under_load_specs(cr, suite, n_suite, &asked, &n_asked)) < 0) {
                checks_free_suite(owned, owned ? n_suite : 0);
                return r;
        }
        struct checks_target ct = {
                .base_url = cr->at,
                .model = cr->model,
                .profile = cr->m->profile,
                .request_timeout = cr->m->request_timeout,
        };
        struct bench_target t = {
                .base_url = cr->at,
                .model = cr->model ? cr->model : cr->m->model,
                .profile = cr->m->profile,
                .request_timeout = cr->m->request_timeout,
                .should_abort = server_died,
                .abort_userdata = cr->s,
                .server_cpu_ticks = server_cpu,
                .stop_when_failed = true, /* the failure gate decides the verdict (phases_gate_bench) */
                .checks = cr->m->bench.checks_under_load ? asked : NULL,
                .n_checks = n_asked,
                .checks_target = &ct,
                /* the eval under load: the first questions of the set, answered alone just before */
                .eval_checks = wants_eval_under_load(cr) ? cr->m->eval_set.specs : NULL,
                .n_eval_checks = MIN(cr->m->eval_set.n, cr->m->under_load.eval_samples),
                .ret_error = ret_refused,
        };
        struct phases_kv_layout kv;
        log_kv_layout(cr->a->log_path, &kv);
        t.kv_layout = kv.layout;
        t.kv_cells = kv.cells;
        t.count = cr->count;
        r = bench_run(cr->loop, &t, &cr->m->bench, ret_levels, ret_samples);
        checks_free_suite(owned, owned ? n_suite : 0);
        return r;
}

static bool wants_bench(const void *ctx) {
        return ((const struct cell_run *)ctx)->m->has_bench;
}

/* Phase bench: the load; a death is a crash; a check under load that did not pass, else
 * the failure gate, decides. */
static int cell_bench(void *ctx, struct phase_result *res) {
        struct cell_run *cr = ctx;
        usec_t t0 = phase_enter(cr, PHASE_BENCH);
        _cleanup_free_ char *refused = NULL;
        _cleanup_json_ json_t *levels = NULL, *samples = NULL;
        int r = bench_load(cr, &levels, &samples, &refused);
        size_t i;
        json_t *level;
        json_int_t failed = 0;
        json_array_foreach(levels, i, level) failed += json_integer_value(json_object_get(level, metric_key(METRIC_FAILED)));
        /* The bench as asked cannot run on this server (its context is too small for the
         * prompt and output): said before a request of it is sent, not as 100% failures. */
        if (r == -EMSGSIZE && server_alive(cr->s)) {
                const char *why = refused ? refused : "the bench cannot run";
                sweep_notice(cr->cb, "cell %s: %s", cr->cell->id, why);
                r = phase_result_decide(res, VERDICT_OVERLOAD, "context", why);
        } else if (r == -EINTR) {
                res->step = STEP_INTERRUPTED;
                r = 0;
        } else {
                if (r == 0 && failed > 0)
                        server_wait_exit(cr->s, now_usec() + PHASES_DEATH_GRACE); /* failures may be a death */
                if (r == -ECANCELED || !server_alive(cr->s)) {
                        r = phases_death(cr->s, cr->a->log_path, cr->m->profile, res);
                } else if (r < 0) {
                        r = phase_result_decide(res, VERDICT_ERROR, NULL, strerror(-r));
                } else {
                        cr->a->bench = TAKE_PTR(levels);
                        cr->a->bench_samples = TAKE_PTR(samples);
                        /* precedence: phases.h */
                        size_t n_alone;
                        _cleanup_free_ enum verdict *alone = alone_verdicts(cr, &n_alone, &r);
                        if (r == 0)
                                r = phases_gate_outputs(cr->a->bench, res);
                        if (r == 0)
                                r = phases_gate_under_load_garbage(cr->a->bench, res);
                        if (r == 0)
                                r = phases_gate_accuracy(cr->a->bench, alone, n_alone, res);
                        if (r == 0 && (r = phases_gate_under_load(cr->a->bench, res)) == 0)
                                r = phases_gate_bench(cr->a->bench, &cr->m->bench, res);
                }
        }
        cr->a->phase[PHASE_BENCH] = now_usec() - t0;
        return r < 0 ? r : 0;
}

/* Phase stop: whatever happened, nothing of this server outlives the attempt. Its own
 * exit status, if it ended by itself, goes to the attempt. -EBUSY when a process survived
 * SIGKILL: the sweep must not go on. */
static int cell_stop(struct cell_run *cr) {
        const struct matrix *m = cr->m;
        struct attempt *a = cr->a;
        struct server *s = cr->s;
        usec_t t = phase_enter(cr, PHASE_STOP);
        bool died_by_itself = s->exited;
        size_t killed = 0;
        int r = server_stop(s, m->stop_timeout, t + m->stop_timeout + STOP_EXTRA, &killed);
        a->phase[PHASE_STOP] = now_usec() - t;
        if (died_by_itself) {
                a->exit_code = s->exit_code;
                a->exit_signal = s->exit_signal;
        }
        /* The pipe is read whatever the disk says, so the server runs on and the attempt
         * settles; but the diagnosis reads the file, so a log cut before the fatal line
         * gives a vaguer cause (crash/exit). Say so. */
        if (s->log_error)
                sweep_notice(cr->cb, "cannot write the log '%s': %s; it is cut there", a->log_path,
                             strerror(-s->log_error));
        server_free(TAKE_PTR(cr->s));
        if (r < 0)
                return r == -ETIME ? -EBUSY : r;
        if (cr->sampler) {
                gpu_sampler_tick(cr->sampler);
                a->peak_gpu_mem_mib = cr->sampler->peak_sum_mib;
        }
        return 0;
}

/* GPU memory still held after a server stopped: say who holds it. */
static void report_holders(struct cell_run *cr, const struct gpu_holders *h, usec_t waited) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        char dur[32];
        buf_printf(&b, "GPU memory not back %s after cell %s stopped:", format_duration(waited, dur), cr->cell->id);
        for (size_t i = 0; i < h->n_gpus; i++)
                buf_printf(&b, " GPU %u uses %llu MiB (was %llu)", h->gpus[i], (unsigned long long)h->used_mib[i],
                           (unsigned long long)h->baseline_mib[i]);
        for (size_t i = 0; i < h->n_holders; i++)
                buf_printf(&b, "%s pid %d (%s) holds %lld MiB on GPU %u", i ? "," : "; held by",
                           (int)h->holders[i].process.pid,
                           h->holders[i].process.name[0] ? h->holders[i].process.name : "?",
                           (long long)h->holders[i].process.used_mib, h->holders[i].gpu);
        if (h->n_holders == 0)
                buf_puts(&b, "; no process is listed as holding it (another container, or the driver)");
        sweep_notice(cr->cb, "%s", buf_str(&b));
}

/* Phase settle: after a stop, the next cell waits until GPU memory is back where it was
 * before the launch (a signal meanwhile interrupts the attempt); then, unless gauntlet
 * cannot go on (r < 0, returned), the attempt's verdict is decided from what the phases
 * came to (phases_decide). */
static int cell_settle(struct cell_run *cr, bool stopped, int r, struct phase_result *res) {
        struct gpu *g = cr->o->gpu;
        if (stopped && cr->baseline && res->step != STEP_INTERRUPTED) {
                usec_t wait = cr->m->memory_timeout;
                struct gpu_holders h = {0};
                int rw = gpu_wait_memory_settled(cr->loop, g, cr->baseline, g->n_gpus, MEMORY_TOLERANCE_MIB,
                                                 now_usec() + wait, &h);
                if (rw == -EINTR)
                        res->step = STEP_INTERRUPTED;
                else if (rw == -ETIME)
                        report_holders(cr, &h, wait);
                gpu_holders_release(&h);
        }
        cr->interrupted = res->step == STEP_INTERRUPTED;
        return r < 0 ? r : phases_decide(cr->a, res);
}

/* What a started server goes through after its launch, in order (phases_run). */
static const struct phase_def cell_phases[] = {
        {.run = cell_ready},
        {.run = cell_port},
        {.run = cell_checks},
        {.run = cell_eval, .wanted = wants_eval},
        {.run = cell_bench, .wanted = wants_bench},
        {.run = cell_port_again},
};

/* One attempt of one cell: launch, the phases, stop, settle. Returns 0 when the attempt
 * settled (cr->interrupted tells whether it was cut short instead), negative errno when
 * gauntlet cannot go on. */
static int run_cell(struct cell_run *cr) {
        struct phase_result res = {0};
        bool stopped = false;
        int r = cell_launch(cr, &res);
        if (r >= 0 && cr->s) {
                r = phases_run(cell_phases, ELEMENTSOF(cell_phases), cr, &res);
                int rs = cell_stop(cr);
                if (rs < 0) {
                        phase_result_release(&res);
                        return rs;
                }
                stopped = true;
        }
        r = cell_settle(cr, stopped, r, &res);
        phase_result_release(&res);
        return r;
}

/* The program a server of this matrix is started from when it is not argv0 looked up on
 * PATH: for an engine whose program is built with gauntlet (the testbed), the file of that
 * name beside the running gauntlet, when there is one. NULL otherwise (or ENOMEM). */
static char *sweep_program(const struct matrix *m, const char *argv0) {
        if (!m->profile->beside_gauntlet || m->command || strchr(argv0, '/'))
                return NULL;
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        char *slash = self ? strrchr(self, '/') : NULL;
        if (!slash)
                return NULL;
        *slash = '\0';
        char *p = strdup_printf("%s/%s", self, argv0);
        if (p && access(p, X_OK) != 0) {
                free(p);
                p = NULL;
        }
        return p;
}

/* "FILE:LINE" of a matrix key, or "FILE" when the key was not written. */
static char *key_at(const struct matrix *m, unsigned line) {
        return line ? strdup_printf("%s:%u", m->path, line) : strdup(m->path);
}

int sweep_preflight(const struct matrix *m, char **ret_error) {
        _cleanup_free_ char *at_cmd = key_at(m, m->line_command), *at_wd = key_at(m, m->line_workdir),
                            *at_host = key_at(m, m->line_host);
        if (!at_cmd || !at_wd || !at_host)
                return -ENOMEM;
        const char *argv0 = m->command ? m->command[0] : m->profile->command ? m->profile->command[0] : NULL;
        char *err = NULL;
        int r = 0;
        struct stat st;
        if (m->workdir)
                r = stat(m->workdir, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
        if (r < 0) {
                err = strdup_printf("%s: workdir '%s' is not a folder: %s", at_wd, m->workdir, strerror(-r));
        } else if (m->launcher == LAUNCHER_SLURM) {
                /* The program and the host are the node's; here only srun must be there. */
                _cleanup_free_ char *found = NULL, *at_l = key_at(m, m->line_launcher);
                if ((r = spawn_find_on_path("srun", &found)) < 0)
                        err = strdup_printf("%s: launcher slurm: cannot start 'srun': %s%s", at_l ? at_l : m->path,
                                            r == -EACCES ? "not an executable file" : strerror(-r),
                                            r == -ENOENT ? " (not on PATH)" : "");
        } else if (argv0) {
                _cleanup_free_ char *found = sweep_program(m, argv0);
                if (!found && strchr(argv0, '/')) {
                        /* a relative path counts from where the server runs */
                        _cleanup_free_ char *at = argv0[0] != '/' && m->workdir ? strdup_printf("%s/%s", m->workdir, argv0)
                                                                               : strdup(argv0);
                        if (!at)
                                return -ENOMEM;
                        if (stat(at, &st) < 0)
                                r = -errno;
                        else if (!S_ISREG(st.st_mode) || access(at, X_OK) != 0)
                                r = -EACCES;
                } else if (!found) {
                        r = spawn_find_on_path(argv0, &found);
                }
                if (r < 0)
                        err = strdup_printf("%s: cannot start '%s': %s%s", at_cmd, argv0,
                                            r == -EACCES ? "not an executable file" : strerror(-r),
                                            r == -ENOENT && !strchr(argv0, '/') ? " (not on PATH)" : "");
        }
        if (!r && m->launcher == LAUNCHER_LOCAL) {
                int port = 0;
                r = supervise_free_port(matrix_host(m), 0, 1, &port);
                if (r < 0)
                        err = strdup_printf("%s: host '%s' is not an address of this machine: %s", at_host,
                                            matrix_host(m), strerror(-r));
        }
        if (r < 0 && ret_error)
                *ret_error = err;
        else
                free(err);
        return r;
}

/* Stops what a killed earlier run left behind (attempts still 'running' in the journal):
 * with launcher ln (NULL: none), the server where it runs, found by its attempt's token
 * (*ret_jobs, optional, counts the Slurm jobs cancelled); then SIGTERM, `grace`, SIGKILL,
 * to the attempt's cgroup when one is found by its name (cgroup_find: made by a run that
 * had cgroups, whether or not this one has), and to every process here found by its token
 * or recorded pid. Returns how many processes were ended, or a negative errno. */
static int sweep_cleanup_orphans(struct loop *l, struct journal *j, const struct server_launcher *ln, usec_t grace,
                          size_t *ret_jobs) {
        struct journal_orphan *o = NULL;
        size_t n = 0;
        int r = journal_orphans(j, &o, &n);
        if (r < 0)
                return r;
        size_t total = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                /* An attempt has a token-only row (written before the spawn) and, once the
                 * server started, one with its pid: the later row says all, so act once. */
                bool superseded = false;
                for (size_t k = i + 1; k < n; k++)
                        superseded |= o[k].attempt_id == o[i].attempt_id && streq_ptr(o[k].token, o[i].token);
                if (superseded)
                        continue;
                /* The token finds the server and every worker that inherited it; the pid is
                 * trusted only when its start time still matches (never a reused pid). */
                pid_t root = o[i].pid > 0 && procs_alive(o[i].pid, o[i].starttime) ? o[i].pid : 0;
                /* A launcher's server first, where it runs (a Slurm job found by its name);
                 * then its client here. */
                if (ln && o[i].token) {
                        int k = ln->ops->cleanup(ln->config, l, o[i].token, grace, now_usec() + grace + STOP_EXTRA);
                        if (k < 0) {
                                r = k;
                                break;
                        }
                        if (ret_jobs)
                                *ret_jobs += (size_t)k;
                }
                struct procs_query q = {.token = o[i].token, .root = root, .sid = root};
                size_t killed = 0;
                _cleanup_free_ pid_t *pids = NULL;
                size_t np = 0;
                /* Its cgroup first: what emptied its environment and left its session is
                 * still in there. */
                _cleanup_free_ char *name = o[i].token ? cgroup_name(o[i].token) : NULL;
                struct cgroup *cg = NULL;
                if (name && cgroup_find(name, &cg) == 0) {
                        struct procs_query qc = {.cgroup = cg};
                        if (procs_find(&qc, &pids, &np) == 0)
                                total += np;
                        free(TAKE_PTR(pids));
                        r = procs_terminate(l, &qc, grace, now_usec() + grace + STOP_EXTRA, &killed);
                        if (r >= 0)
                                (void)cgroup_remove(cg); /* empty: at worst a directory is left */
                        cgroup_free(cg);
                        if (r < 0)
                                break;
                }
                if (procs_find(&q, &pids, &np) == 0)
                        total += np;
                r = procs_terminate(l, &q, grace, now_usec() + grace + STOP_EXTRA, &killed);
                if (r >= 0)
                        r = journal_attempt_abandon(j, o[i].attempt_id, "gauntlet stopped during this attempt");
        }
        journal_orphans_free(o, n);
        return r < 0 ? r : (int)MIN(total, (size_t)INT32_MAX);
}

int sweep_clear_leftovers(struct loop *l, struct journal *j, const struct matrix *m, const struct sweep_callbacks *cb,
                          char **ret_error) {
        /* The matrix's stop_timeout: the grace its servers get from this run, too. */
        struct server_launcher ln;
        size_t jobs = 0;
        int r = sweep_cleanup_orphans(l, j, sweep_launcher(m, &ln), m->stop_timeout, &jobs);
        if (r < 0) {
                if (ret_error)
                        *ret_error = strdup_printf("cannot stop what an earlier run left behind: %s", strerror(-r));
                return r;
        }
        if (jobs > 0)
                sweep_notice(cb, "cancelled %zu Slurm job%s left behind by an earlier run that was killed", jobs,
                             jobs == 1 ? "" : "s");
        if (r > 0)
                sweep_notice(cb, "stopped %d process%s left behind by an earlier run that was killed", r,
                             r == 1 ? "" : "es");
        return 0;
}

/* Records a settled verdict for inference. */
static void infer_note(struct infer_cell *k, enum verdict v, const char *cause) {
        k->known = v != VERDICT_INVALID;
        k->arch = v == VERDICT_CRASH && streq_ptr(cause, "arch");
        k->fine = v == VERDICT_PASS || v == VERDICT_GARBAGE || v == VERDICT_WRONG;
}

/* The eval's settings and its named reference (`reference:`, else `baseline:`) for the
 * reports, which decide the accuracy gate (docs/eval.md). */
static int record_eval(struct journal *j, int64_t sweep_id, const struct matrix *m, const struct cell *cells,
                       size_t n) {
        const size_t *choice = m->reference ? m->reference : m->baseline;
        int at = choice && m->n_axes ? cells_find(cells, n, m->n_axes, choice) : -1;
        _cleanup_json_ json_t *e = eval_settings_json(&m->eval, &m->eval_set, at >= 0 ? cells[at].id : NULL,
                                                      at < 0 ? NULL : m->reference ? "reference" : "baseline");
        _cleanup_free_ char *text = e ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        if (!text)
                return -ENOMEM;
        return journal_set_sweep_eval(j, sweep_id, text);
}

/* One sweep in progress: what every cell's step needs. */
struct sweep {
        struct loop *l;
        const struct matrix *m;
        struct journal *j;
        const struct sweep_options *o;
        const struct sweep_callbacks *cb;
        struct gpu_sampler *sampler;
        struct cell *cells;
        size_t n;
        struct infer_cell *known;     /* for inference; NULL: nothing is inferred */
        int64_t sweep_id;
        char *log_dir;
        struct sweep_summary sum;
        struct sweep_count count;     /* how every cell's tokens are counted */
        char *error;                  /* why the sweep could not go on, one line */
        int claim;                    /* launch(): a search's worker claims the cell (cell_run) */
};

/* The key of a cell's environment in the provenance table: FNV-1a over its entries, each
 * followed by a NUL, 16 hex digits. */
static void env_key(char *const *env, char key[static 17]) {
        uint64_t h = FNV_SEED;
        for (size_t i = 0; env && env[i]; i++)
                h = fnv1a(h, env[i], strlen(env[i]) + 1);
        snprintf(key, 17, "%016llx", (unsigned long long)h);
}

/* Environments a sweep's provenance is gathered for at most: the commands run at once,
 * but an env axis of hundreds of values should not start hundreds of Pythons. */
#define SWEEP_PROVENANCE_MAX_ENVS 16

/* What the sweep runs with (provenance.h), once per distinct cell environment, into the
 * journal. Nothing read here fails the sweep: only the journal's own errors and a signal
 * stop it. */
static int journal_failed(struct sweep *sw, int r);
static int record_provenance(struct sweep *sw) {
        char *const *envs[SWEEP_PROVENANCE_MAX_ENVS];
        char keys[SWEEP_PROVENANCE_MAX_ENVS][17];
        size_t n = 0, more = 0;
        const char *argv0 = NULL;
        for (size_t i = 0; i < sw->n; i++) {
                if (sw->cells[i].excluded)
                        continue;
                char k[17];
                env_key(sw->cells[i].env, k);
                bool seen = false;
                for (size_t e = 0; e < n && !seen; e++)
                        seen = strcmp(keys[e], k) == 0;
                if (seen)
                        continue;
                if (n == SWEEP_PROVENANCE_MAX_ENVS) {
                        more++;
                        continue;
                }
                argv0 = argv0 ? argv0 : sw->cells[i].argv[0];
                memcpy(keys[n], k, sizeof(k));
                envs[n++] = sw->cells[i].env;
        }
        if (more)
                sweep_notice(sw->cb, "provenance: gathered for the first %d cell environments, not for %zu more",
                             SWEEP_PROVENANCE_MAX_ENVS, more);
        _cleanup_free_ char *program = argv0 ? sweep_program(sw->m, argv0) : NULL;
        /* the program as PATH finds it when the server starts: the version is that file's */
        if (!program && argv0 && !strchr(argv0, '/') && spawn_find_on_path(argv0, &program) < 0)
                program = NULL;
        struct provenance_input in = {.profile = sw->m->profile,
                                      .program = program ? program : argv0,
                                      .version_command = sw->m->version_command,
                                      .model = sw->m->model,
                                      .host_json = sw->o->host_json};
        json_t *got[SWEEP_PROVENANCE_MAX_ENVS] = {0};
        int r = n ? provenance_gather(sw->l, &in, envs, n, got) : 0;
        if (r == -EINTR)
                return r;
        if (r < 0) {
                sweep_notice(sw->cb, "provenance: not gathered: %s", strerror(-r));
                return 0;
        }
        for (size_t e = 0; e < n; e++) {
                _cleanup_free_ char *text = json_dumps(got[e], JSON_COMPACT);
                json_decref(got[e]);
                if (r >= 0 && text && (r = journal_record_provenance(sw->j, sw->sweep_id, keys[e], text)) < 0)
                        r = journal_failed(sw, r);
        }
        return r < 0 ? r : 0;
}

/* The sweep stops with err, and why (printf-style). Returns err. */
static int sweep_fail(struct sweep *sw, int err, const char *fmt, ...) _printf_(3, 4);
static int sweep_fail(struct sweep *sw, int err, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        free(sw->error);
        if (vasprintf(&sw->error, fmt, ap) < 0)
                sw->error = NULL;
        va_end(ap);
        return err;
}

static int journal_failed(struct sweep *sw, int r) {
        return sweep_fail(sw, r, "cannot write the journal '%s': %s", sw->o->journal_path, journal_strerror(r));
}

/* The verdicts as the sweep's view shows them now, journaled (report_settle_verdicts): a
 * cell that settles can change another's through the eval's gate. */
static int journal_verdicts(struct sweep *sw) {
        int r = report_settle_verdicts(sw->j, sw->sweep_id);
        return r < 0 ? journal_failed(sw, r) : 0;
}

static void settled(struct sweep *sw, size_t i, const struct attempt *a) {
        if (sw->cb && sw->cb->cell_settled)
                sw->cb->cell_settled(sw->cb->userdata, &sw->cells[i], i, sw->n, a, false);
}

/* A cell that is not launched: skipped with cause and evidence (and the search's
 * prediction), journaled unless journal is false. */
static int settle_skipped(struct sweep *sw, size_t i, const char *cause, const char *evidence, char *prediction,
                          bool journal) {
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sw->sweep_id;
        memcpy(a.cell_id, sw->cells[i].id, sizeof(a.cell_id));
        a.started_wall = now_wall_usec();
        a.prediction = prediction;
        int r = attempt_set_verdict(&a, VERDICT_SKIPPED, cause, evidence);
        if (r >= 0 && journal && ((r = journal_attempt_begin(sw->j, &a)) < 0 || (r = journal_attempt_settle(sw->j, &a)) < 0)) {
                attempt_release(&a);
                return journal_failed(sw, r);
        }
        if (r < 0) {
                attempt_release(&a);
                return sweep_fail(sw, r, "out of memory");
        }
        /* the attempt is settled: it is told even when the verdicts cannot be written */
        int vr = journal ? journal_verdicts(sw) : 0;
        sw->sum.by_verdict[VERDICT_SKIPPED]++;
        settled(sw, i, &a);
        attempt_release(&a);
        return vr;
}

/* Whether an arch crash pinned on one of its values has decided cell i (infer.h): then it
 * settles as skipped/inferred and *ret_done is set. */
static int settle_inferred(struct sweep *sw, size_t i, bool *ret_done) {
        size_t axis = 0, by[INFER_MAX_BY], n_by = 0;
        const struct matrix *m = sw->m;
        const struct cell *c = &sw->cells[i];
        *ret_done = false;
        if (sw->o->no_infer || !sw->known || m->n_axes == 0 ||
            !infer_decided(sw->known, sw->n, m->n_axes, i, &axis, by, &n_by))
                return 0;
        _cleanup_buf_ struct buf ev;
        buf_init(&ev, 4096);
        buf_printf(&ev, "an arch crash of %s=%s decided it (cell%s", m->axes[axis].name,
                   m->axes[axis].values[c->choice[axis]].name, n_by > 1 ? "s" : "");
        for (size_t k = 0; k < n_by; k++)
                buf_printf(&ev, "%s %.8s", k ? "," : "", sw->cells[by[k]].id);
        buf_puts(&ev, "); --no-infer runs it");
        *ret_done = true;
        return settle_skipped(sw, i, "inferred", buf_str(&ev), NULL, true);
}

/* Whether one more launch fits a search's launch budget now (no budget: always): its
 * launches as the journal has them, the other workers' running ones and the abandoned
 * ones included. A cell launched again (a lost port, a log that said nothing) is a launch
 * like any other, and one the budget has no room for is not made. */
static int budget_has_room(struct sweep *sw, bool *ret) {
        size_t budget = launch_budget(sw->m, sw->o);
        int64_t n = 0;
        *ret = true;
        if (!budget)
                return 0;
        int r = journal_sweep_launches(sw->j, sw->sweep_id, &n);
        if (r < 0)
                return r;
        *ret = n < (int64_t)budget;
        return 0;
}

/* Launches cell i (again on another port when the one picked was taken), settles its
 * attempt in the journal and tells the callbacks; measure: a search's launch of a cell it
 * measures again (2, 3...), else 0. 0, -EINTR (interrupted: the attempt is abandoned), or
 * another negative errno with sw->error set. */
static int launch(struct sweep *sw, size_t i, unsigned measure) {
        const struct matrix *m = sw->m;
        const struct cell *c = &sw->cells[i];
        int r = -EINVAL;
        /* A signal seen by a wait that had no use for it (the orphan cleanup, the previous
         * cell's stop) still ends the sweep before the next launch. */
        if (loop_signal(sw->l))
                return -EINTR;
        if (!sw->log_dir[0] || (r = mkdir_p(sw->log_dir, 0755)) < 0)
                return sweep_fail(sw, r, "cannot create '%s': %s", sw->log_dir, strerror(-r));
        if (sw->cb && sw->cb->cell_started)
                sw->cb->cell_started(sw->cb->userdata, c, i, sw->n);
        /* another slot may have set the rule since, or set one before this slot's own (an
         * earlier run's is read at the start) */
        if (m->has_bench && sw->o->n_slots > 1) {
                if ((r = sweep_count_from_journal(sw->j, &sw->count)) < 0)
                        return sweep_fail(sw, r, "out of memory");
                if (r > 0)
                        sweep_notice(sw->cb,
                                     "tokens: counted from now on at %.3f bytes a token, as cell %s's own counts agreed "
                                     "(it started first, beside this worker's)",
                                     sw->count.rule.bytes_per_token, sw->count.rule.from);
        }

        struct attempt a;
        struct cell_run cr;
        bool unexplained_again = false;
        for (int tries = 1;; tries++) {
                attempt_init(&a);
                cr = (struct cell_run){.loop = sw->l, .o = sw->o, .sampler = sw->sampler, .m = m, .j = sw->j,
                                       .cell = c, .cb = sw->cb, .a = &a, .sweep_id = sw->sweep_id,
                                       .log_dir = sw->log_dir, .count = &sw->count.rule, .launch = tries,
                                       .measure = measure, .claim = sw->claim};
                r = run_cell(&cr);
                cell_run_release(&cr);
                if (r < 0 || cr.interrupted)
                        break;
                bool port = !m->port && tries < PORT_TRIES && lost_port(&a, m);
                bool silent = !port && a.unexplained && !unexplained_again, room = true;
                if ((port || silent) && (r = budget_has_room(sw, &room)) < 0)
                        break;
                _cleanup_free_ char *why = NULL;
                if (!room)
                        break; /* the verdict stands: the budget has no launch left for another */
                /* the port the log's line says was taken (cause port); a port found held
                 * after the death is the HTTP port itself */
                int named = port && streq_ptr(a.cause, "port") ? diagnose_named_port(a.evidence) : 0;
                if (port && named > 0 && named != a.port)
                        /* A port of the engine's own (torch.distributed's store, a ZMQ socket):
                         * most take theirs afresh or from the HTTP port, so a new launch may
                         * well get past it. */
                        why = strdup_printf("port %d, one the server opens beside its HTTP port %d, was taken by "
                                            "another process (%s); launched again",
                                            named, a.port, a.evidence);
                else if (port)
                        /* Not the configuration's fault: the same cell again, on another port. */
                        why = strdup_printf("port %d was taken by another process (%s); launched again on another port",
                                            a.port, a.evidence ? a.evidence : "crash");
                else if (silent) {
                        /* The log may have lost its last lines (the reason among them): the
                         * same cell once more, whose log may say it; the second launch's
                         * verdict stands, whatever it is. */
                        unexplained_again = true;
                        why = strdup_printf("no line of its log says why it exited (%s), and an engine may "
                                            "exit before its log is written out; launched again",
                                            a.evidence ? a.evidence : "exit status");
                } else
                        break;
                _cleanup_free_ char *label = cell_label(m, c);
                sweep_notice(sw->cb, "%s: %s", label ? label : c->id, why ? why : "launched again");
                r = journal_attempt_abandon(sw->j, a.id, why ? why : "launched again");
                attempt_release(&a);
                if (r < 0)
                        return journal_failed(sw, r);
        }
        if (cr.port_taken) {
                attempt_release(&a);
                return sweep_fail(sw, -EADDRINUSE,
                                  "port %d on %s is taken by another process: stop it, or leave 'port' out of the "
                                  "matrix and gauntlet picks a free one",
                                  m->port, matrix_host(m));
        }
        if (r == -EALREADY && sw->claim >= 0) {
                attempt_release(&a);
                return r;
        }
        sw->sum.ran++;
        if (r == -EBUSY) {
                attempt_release(&a);
                return sweep_fail(sw, r, "a process of the server could not be ended; not starting another");
        }
        if (r < 0) {
                if (a.id)
                        journal_attempt_abandon(sw->j, a.id, strerror(-r));
                attempt_release(&a);
                if (cr.journal_failed)
                        return journal_failed(sw, r);
                return sweep_fail(sw, r, "cannot run cell %s: %s", c->id, strerror(-r));
        }
        if (cr.interrupted) {
                journal_attempt_abandon(sw->j, a.id, "interrupted by a signal");
                attempt_release(&a);
                return -EINTR;
        }
        if ((r = journal_attempt_settle(sw->j, &a)) < 0) {
                attempt_release(&a);
                return journal_failed(sw, r);
        }
        /* the attempt is settled: it is told even when the verdicts cannot be written */
        int vr = journal_verdicts(sw);
        sw->sum.by_verdict[a.verdict]++;
        /* the first passing cell whose own counts agreed sets how the others are counted */
        if (a.verdict == VERDICT_PASS && a.bench && count_rule_adopt(&sw->count.rule, a.bench, c->id) > 0) {
                sw->count.from_started = a.started_wall;
                sweep_notice(sw->cb, "tokens: counted from now on at %.3f bytes a token, as cell %s's own counts agreed",
                             sw->count.rule.bytes_per_token, c->id);
        }
        if (sw->known)
                infer_note(&sw->known[i], a.verdict, a.cause);
        settled(sw, i, &a);
        attempt_release(&a);
        return vr;
}

/* Cell i in its turn: excluded, settled before, decided by an arch crash, or launched. */
static int sweep_cell(struct sweep *sw, size_t i) {
        const struct cell *c = &sw->cells[i];
        int r;
        /* Nothing is journaled for an excluded cell: the cell row says it is excluded, and
         * lifting the exclusion later lets it run. */
        if (c->excluded)
                return settle_skipped(sw, i, "excluded", NULL, NULL, false);
        bool done = false;
        if (!sw->o->rerun && (r = journal_cell_settled(sw->j, c->id, &done)) < 0)
                return sweep_fail(sw, r, "cannot read the journal: %s", strerror(-r));
        if (done) {
                sw->sum.settled_before++;
                if (sw->cb && sw->cb->cell_settled)
                        sw->cb->cell_settled(sw->cb->userdata, c, i, sw->n, NULL, true);
                return 0;
        }
        if ((r = settle_inferred(sw, i, &done)) < 0 || done)
                return r;
        return launch(sw, i, 0);
}

/* Whether cell i is one of the cells run first (sweep_first): the strategy leaves it out. */
static bool ran_first(const struct sweep *sw, size_t i) {
        for (size_t k = 0; k < sw->o->n_first; k++)
                if (sw->o->first[k] == i)
                        return true;
        return false;
}

/* run --against: the old winner and its close rivals before the strategy's own order, then
 * the caller's word on whether the rest runs (*ret_stop). */
static int sweep_first(struct sweep *sw, bool *ret_stop) {
        *ret_stop = false;
        if (!sw->o->n_first)
                return 0;
        for (size_t k = 0; k < sw->o->n_first; k++) {
                int r = sw->o->first[k] < sw->n ? sweep_cell(sw, sw->o->first[k]) : 0;
                if (r < 0)
                        return r;
        }
        *ret_stop = sw->cb && sw->cb->first_settled && sw->cb->first_settled(sw->cb->userdata);
        return 0;
}

static int sweep_grid(struct sweep *sw) {
        for (size_t i = 0; i < sw->n; i++) {
                if (sw->o->n_slots > 1 && i % sw->o->n_slots != sw->o->slot)
                        continue; /* another slot's cell */
                if (ran_first(sw, i))
                        continue;
                int r = sweep_cell(sw, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* How value x writes what follows flag: the argument after it ("-ctk q8_0"), the rest of
 * one argument that joins them ("--kv=fp8"), or the env value of the key flag; NULL. */
static const char *value_spelling(const struct axis_value *x, const char *flag) {
        size_t n = strlen(flag);
        for (size_t i = 0; x->args && x->args[i]; i++) {
                if (strcmp(x->args[i], flag) == 0)
                        return x->args[i + 1];
                if (strncmp(x->args[i], flag, n) == 0 && x->args[i][n] == '=')
                        return x->args[i] + n + 1;
        }
        for (size_t i = 0; x->env && x->env[i]; i++)
                if (strncmp(x->env[i], flag, n) == 0 && x->env[i][n] == '=')
                        return x->env[i] + n + 1;
        return NULL;
}

/* The paths value v's argument spelled holds (search_argument_paths: a draft model's in a
 * JSON --speculative-config), as its spellings into pairs, each where no other value's
 * argument holds it. */
static int record_paths(const struct axis *ax, size_t v, const char *flag, const char *spelled, json_t *pairs) {
        const char *start[8];
        size_t len[8], n = search_argument_paths(spelled, start, len, ELEMENTSOF(start));
        for (size_t i = 0; i < n; i++) {
                if (len[i] == strlen(spelled))
                        continue; /* the argument itself, a spelling already */
                _cleanup_free_ char *path = strndup(start[i], len[i]);
                if (!path)
                        return -ENOMEM;
                bool shared = false;
                for (size_t w = 0; w < ax->n_values && !shared; w++) {
                        const char *other = w != v ? value_spelling(&ax->values[w], flag) : NULL;
                        shared = other && strstr(other, path);
                }
                if (!shared && json_array_append_new(pairs, json_pack("[ss]", path, ax->values[v].name)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The search's settings, journaled with the sweep for the reports (search_view.h): per
 * axis the flag it is read by, and the values written otherwise than named after it. */
static int record_search(struct sweep *sw) {
        const struct matrix *m = sw->m;
        _cleanup_json_ json_t *e = json_object(), *flags = json_array(), *budget = json_object(),
                              *spellings = json_array();
        if (!e || !flags || !budget || !spellings)
                return -ENOMEM;
        int r;
        for (size_t a = 0; a < m->n_axes; a++) {
                const struct axis *ax = &m->axes[a];
                char flag[256];
                if (!axis_reading_flag(ax, flag, sizeof(flag)))
                        flag[0] = '\0';
                json_t *pairs = json_array();
                if (json_array_append_new(flags, json_string(flag)) < 0 || json_array_append_new(spellings, pairs) < 0)
                        return -ENOMEM;
                for (size_t v = 0; flag[0] && v < ax->n_values; v++) {
                        const char *spelled = value_spelling(&ax->values[v], flag);
                        if (!spelled || !spelled[0] || strcasecmp(spelled, ax->values[v].name) == 0)
                                continue;
                        /* one that two values share, or another's name, tells them apart no more */
                        bool shared = false;
                        for (size_t w = 0; w < ax->n_values && !shared; w++) {
                                const char *other = w != v ? value_spelling(&ax->values[w], flag) : NULL;
                                shared = w != v && ((other && strcasecmp(other, spelled) == 0) ||
                                                    strcasecmp(ax->values[w].name, spelled) == 0);
                        }
                        if (!shared && json_array_append_new(pairs, json_pack("[ss]", spelled, ax->values[v].name)) < 0)
                                return -ENOMEM;
                        if ((r = record_paths(ax, v, flag, spelled, pairs)) < 0)
                                return r;
                }
        }
        if ((m->budget_launches && json_object_set_new(budget, "launches", json_integer((json_int_t)m->budget_launches)) < 0) ||
            (m->budget_time && json_object_set_new(budget, "time_us", json_integer((json_int_t)m->budget_time)) < 0))
                return -ENOMEM;
        /* where it starts: the baseline, else the engine's defaults (the least distance) */
        int first = m->baseline ? cells_find(sw->cells, sw->n, m->n_axes, m->baseline) : -1;
        for (size_t i = 0; first < 0 && i < sw->n; i++)
                if (!sw->cells[i].excluded)
                        first = (int)i;
        for (size_t i = 0; !m->baseline && first >= 0 && i < sw->n; i++)
                if (!sw->cells[i].excluded && sw->cells[i].distance < sw->cells[first].distance)
                        first = (int)i;
        if (json_object_set(e, "budget", budget) < 0 || json_object_set(e, "flags", flags) < 0 ||
            json_object_set(e, "spellings", spellings) < 0 ||
            (first >= 0 && json_object_set_new(e, "first", json_string(sw->cells[first].id)) < 0))
                return -ENOMEM;
        _cleanup_free_ char *text = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!text)
                return -ENOMEM;
        return journal_set_sweep_search(sw->j, sw->sweep_id, text);
}

/* The search's next step, from the journal as it stands (search_view.h): the decision, and
 * the model and view behind it for the pruning. */
static int search_step(struct sweep *sw, struct report_view **ret_view, struct search_fit **ret_fit,
                       struct search_decision *ret) {
        _cleanup_report_view_ struct report_view *v = NULL;
        _cleanup_search_fit_ struct search_fit *f = NULL;
        int r = report_load_view_current(sw->j, sw->sweep_id, &v);
        if (r < 0)
                return sweep_fail(sw, r, "cannot read the journal: %s", strerror(-r));
        if (v->n_cells != sw->n)
                return sweep_fail(sw, -EIO, "cannot read the journal: %zu cells where the matrix has %zu", v->n_cells, sw->n);
        for (size_t i = 0; i < sw->n; i++)
                if (strcmp(v->cells[i].id, sw->cells[i].id) != 0)
                        return sweep_fail(sw, -EIO, "cannot read the journal: cell %zu is %s, not %s", i, v->cells[i].id,
                                          sw->cells[i].id);
        /* side by side: the cells other workers run are in flight (search_obs.pending) */
        _cleanup_free_ bool *pending = sw->o->n_slots > 1 ? calloc(sw->n ? sw->n : 1, sizeof(bool)) : NULL;
        if (sw->o->n_slots > 1 && !pending)
                return sweep_fail(sw, -ENOMEM, "out of memory");
        for (size_t i = 0; pending && i < sw->n; i++)
                if ((r = journal_cell_running(sw->j, sw->cells[i].id, &pending[i])) < 0)
                        return sweep_fail(sw, r, "cannot read the journal: %s", journal_strerror(r));
        if ((r = search_fit_view_pending(v, pending, &f)) < 0 || (r = search_fit_decide(f, v, sw->o->no_prune, ret)) < 0)
                return sweep_fail(sw, r, "cannot fit the search's model: %s", strerror(-r));
        *ret_view = TAKE_PTR(v);
        *ret_fit = TAKE_PTR(f);
        return 0;
}

/* The search's prediction of cell k, as journaled with a pruned cell (report.h). */
static char *prediction_json(const struct search_model *model, size_t k) {
        struct search_prediction p;
        search_model_predict(model, k, &p);
        _cleanup_json_ json_t *e = json_pack("{s:f,s:f,s:I}", "p_feasible", isfinite(p.p_feasible) ? p.p_feasible : 0,
                                             "chance", isfinite(p.chance) ? p.chance : 0, "model_cells",
                                             (json_int_t)search_model_launched(model));
        /* figures only where the model has them (none before a launch had a figure) */
        if (e && isfinite(p.mean) && json_object_set_new(e, "mean", json_real(p.mean)) < 0)
                return NULL;
        if (e && isfinite(p.mean) && isfinite(p.high) && json_object_set_new(e, "high", json_real(p.high)) < 0)
                return NULL;
        return e ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
}

/* Side by side, a decision made while other workers' cells are in flight is for now:
 * wait a little, and decide again once the journal has changed. */
#define SEARCH_WAIT_USEC (500 * USEC_PER_MSEC)

/* A launch budget under one and a half times the values a speed model learns (one figure,
 * and each axis's values but one) cannot try each value once and then combine the best:
 * said once, before the first launch, with what the simulator measured of such budgets
 * (docs/search.md, "Where the hard caps are lost"). */
static void budget_notice(const struct sweep *sw) {
        const struct matrix *m = sw->m;
        size_t budget = launch_budget(m, sw->o), values = 1, cells = 0;
        for (size_t a = 0; a < m->n_axes; a++)
                values += m->axes[a].n_values - 1;
        for (size_t i = 0; i < sw->n; i++)
                cells += !sw->cells[i].excluded;
        if (budget == 0 || budget >= cells || 2 * budget >= 3 * values)
                return;
        sweep_notice(sw->cb,
                     "search: a budget of %zu launches is under 1.5 times the %zu it takes to learn each value's "
                     "effect (1 + each axis's values less one): in the simulator such budgets find the true best in "
                     "about half of the spaces, %zu launches or more in 9 of 10 (docs/search.md, \"Where the hard caps "
                     "are lost\")",
                     budget, values, 2 * values);
}

/* strategy: search: launch the cell the model chooses until it stops, then prune the rest
 * with the model's reasons. Cells excluded, settled before or inferred are reported as the
 * grid reports them. Side by side (o->n_slots > 1), every worker runs this loop on the one
 * journal: it decides with the other workers' cells in flight, claims the cell it chose
 * (another that claimed it first: it decides again), waits while a stop is only for now,
 * and worker 0 alone prunes once nothing is in flight. */
static int sweep_search(struct sweep *sw) {
        bool side = sw->o->n_slots > 1;
        int r;
        if ((r = record_search(sw)) < 0)
                return journal_failed(sw, r);
        if (!side || sw->o->slot == 0)
                budget_notice(sw);
        for (size_t i = 0; i < sw->n && (!side || sw->o->slot == 0); i++) {
                bool done = false;
                if (ran_first(sw, i))
                        continue; /* told as it settled */
                if (sw->cells[i].excluded)
                        r = settle_skipped(sw, i, "excluded", NULL, NULL, false);
                else if (!sw->o->rerun && (r = journal_cell_settled(sw->j, sw->cells[i].id, &done)) >= 0 && done) {
                        sw->sum.settled_before++;
                        if (sw->cb && sw->cb->cell_settled)
                                sw->cb->cell_settled(sw->cb->userdata, &sw->cells[i], i, sw->n, NULL, true);
                }
                if (r < 0)
                        return sweep_fail(sw, r, "cannot read the journal: %s", strerror(-r));
        }
        for (;;) {
                _cleanup_report_view_ struct report_view *v = NULL;
                _cleanup_search_fit_ struct search_fit *f = NULL;
                struct search_decision d;
                if ((r = search_step(sw, &v, &f, &d)) < 0)
                        return r;
                if (d.next < 0 && d.in_flight) {
                        if (loop_iterate(sw->l, now_usec() + SEARCH_WAIT_USEC) == -EINTR || loop_signal(sw->l))
                                return -EINTR;
                        continue;
                }
                if (d.next < 0 && side && sw->o->slot != 0)
                        return 0; /* worker 0 says why and prunes */
                if (d.next < 0) {
                        if (sw->cb && sw->cb->search_stopped)
                                sw->cb->search_stopped(sw->cb->userdata, d.why[0] ? d.why : d.stop,
                                                       search_model_launches(f->model), sw->m->budget_launches);
                        bool budget = streq_ptr(d.stop, "budget"), hopeless = streq_ptr(d.stop, "nothing can pass");
                        for (size_t i = 0; i < sw->n; i++) {
                                if (f->obs[i].state != SEARCH_UNKNOWN || sw->cells[i].excluded)
                                        continue;
                                _cleanup_free_ char *model_why = search_model_why(f->model, i, budget);
                                /* the search's own line says why nothing can pass */
                                _cleanup_free_ char *why = model_why && hopeless
                                                                   ? strdup_printf("nothing can pass (the search's line "
                                                                                   "says why); %s", model_why)
                                                                   : TAKE_PTR(model_why);
                                char *pred = prediction_json(f->model, i);
                                if (!why || !pred) {
                                        free(pred);
                                        return sweep_fail(sw, -ENOMEM, "out of memory");
                                }
                                /* pruned before for the same reason (a rerun of a finished
                                 * search): said again, not journaled again */
                                bool same = false;
                                if ((r = journal_cell_pruned_as(sw->j, sw->sweep_id, sw->cells[i].id, why, &same)) < 0) {
                                        free(pred);
                                        return journal_failed(sw, r);
                                }
                                if ((r = settle_skipped(sw, i, "pruned", why, pred, !same)) < 0)
                                        return r;
                        }
                        return 0;
                }
                size_t i = (size_t)d.next;
                bool done = false;
                if (!d.again && (r = settle_inferred(sw, i, &done)) < 0)
                        return r;
                if (done)
                        continue;
                if (sw->cb && sw->cb->search_launch)
                        sw->cb->search_launch(sw->cb->userdata, search_model_launches(f->model) + 1,
                                              launch_budget(sw->m, sw->o),
                                              !d.again                                  ? NULL
                                              : f->obs[i].state == SEARCH_FEASIBLE ? "measured again"
                                                                                   : "launched again");
                sw->claim = side ? (int)f->obs[i].launches : -1;
                r = launch(sw, i, d.again ? MAX(f->obs[i].launches, 1u) + 1 : 0);
                sw->claim = -1;
                if (r < 0 && r != -EALREADY)
                        return r;
                /* -EALREADY: another worker claimed the cell, or the budget's last launch,
                 * first: decide again once the journal has it (a moment, not a spin) */
                if (r == -EALREADY &&
                    (loop_iterate(sw->l, now_usec() + SEARCH_WAIT_USEC / 10) == -EINTR || loop_signal(sw->l)))
                        return -EINTR;
        }
}

int sweep_run(struct loop *l, const struct matrix *m, struct journal *j, const struct sweep_options *o,
              const struct sweep_callbacks *cb, struct sweep_summary *ret, char **ret_error) {
        struct sweep sw = {.l = l, .m = m, .j = j, .o = o, .cb = cb, .claim = -1};
        int r;
        char stamp[32];

        if (o->gpu && o->gpu->n_gpus > 0 && (r = gpu_sampler_start(l, o->gpu, 250 * USEC_PER_MSEC, &sw.sampler)) < 0) {
                r = sweep_fail(&sw, r, "cannot sample GPU memory: %s", strerror(-r));
                goto finish;
        }
        if ((r = sweep_clear_leftovers(l, j, m, cb, &sw.error)) < 0)
                goto finish;

        if (m->has_bench) {
                _cleanup_free_ char *why = NULL;
                if ((r = sweep_count_open(m, &sw.count, &why)) < 0) {
                        r = sweep_fail(&sw, r, "%s", why ? why : strerror(-r));
                        goto finish;
                }
                if ((r = sweep_count_from_journal(j, &sw.count)) < 0) {
                        r = sweep_fail(&sw, r, "out of memory");
                        goto finish;
                }
                if (sw.count.what)
                        sweep_notice(cb, "tokens: counted by the model's tokenizer, %s", sw.count.what);
                else if (sw.count.rule.bytes_per_token > 0)
                        sweep_notice(cb, "tokens: counted at %.3f bytes a token, as cell %s's own counts agreed",
                                     sw.count.rule.bytes_per_token, sw.count.rule.from);
                else
                        sweep_notice(cb, "tokens: no tokenizer gauntlet can read (%s): counted by bytes per token, as "
                                     "the first passing cell's own counts agree", sw.count.note);
        }
        if ((r = cells_expand(m, &sw.cells, &sw.n)) < 0) {
                r = sweep_fail(&sw, r, "cannot expand the matrix: %s", strerror(-r));
                goto finish;
        }
        /* What is known of each cell, for inference: what earlier runs settled, then this
         * run's verdicts as they come. Without it (ENOMEM) nothing is inferred. */
        sw.known = o->no_infer ? NULL : calloc(sw.n ? sw.n : 1, sizeof(*sw.known));
        for (size_t i = 0; sw.known && i < sw.n; i++) {
                sw.known[i].choice = sw.cells[i].choice;
                enum verdict v = VERDICT_INVALID;
                _cleanup_free_ char *cause = NULL, *evidence = NULL;
                if (!sw.cells[i].excluded && journal_cell_result(j, sw.cells[i].id, &v, &cause, &evidence) >= 0)
                        infer_note(&sw.known[i], v, cause);
        }
        sw.sum.cells = sw.n;
        if ((r = journal_begin_sweep(j, m, o->host_json ? o->host_json : "{}", &sw.sweep_id)) < 0 ||
            (r = journal_record_cells(j, sw.sweep_id, m, sw.cells, sw.n)) < 0 ||
            (m->has_eval && (r = record_eval(j, sw.sweep_id, m, sw.cells, sw.n)) < 0)) {
                r = journal_failed(&sw, r);
                goto finish;
        }
        /* a resumed sweep shows the cells settled before it: their verdicts, as of now */
        if ((r = record_provenance(&sw)) < 0 || (r = journal_verdicts(&sw)) < 0)
                goto finish;

        time_t now = time(NULL);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H-%M-%S", localtime(&now));
        if (!(sw.log_dir = strdup_printf("%s/%s", o->log_root, stamp))) {
                r = sweep_fail(&sw, -ENOMEM, "out of memory");
                goto finish;
        }
        bool stop = false;
        if ((r = sweep_first(&sw, &stop)) == 0 && !stop)
                r = m->strategy == STRATEGY_SEARCH && m->n_axes > 0 ? sweep_search(&sw) : sweep_grid(&sw);

finish:
        if (r == -EINTR) {
                sw.sum.interrupted = true;
                sw.sum.signal = loop_signal(l);
        }
        if (sw.sweep_id)
                journal_end_sweep(j, sw.sweep_id, r == 0 ? "finished" : r == -EINTR ? "interrupted" : "failed");
        /* once more at the end: the last word on every verdict of the sweep (after a failure
         * or a signal, as far as the journal still takes it) */
        if (sw.sweep_id && r == 0)
                r = journal_verdicts(&sw);
        else if (sw.sweep_id)
                (void)report_settle_verdicts(j, sw.sweep_id);
        if (r < 0 && r != -EINTR && ret_error)
                *ret_error = sw.error ? TAKE_PTR(sw.error) : strdup(strerror(-r));
        free(sw.error);
        free(sw.log_dir);
        free(sw.known);
        sweep_count_release(&sw.count);
        cells_free(sw.cells, sw.n);
        gpu_sampler_free(sw.sampler);
        *ret = sw.sum;
        return r;
}
