/* cli_run.c -- `gauntlet run MATRIX`: the sweep, printed as it settles. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include "text/buf.h"
#include "cli/cli.h"
#include "cli/cli_against.h"
#include "proc/gpu.h"
#include "proc/host.h"
#include "journal/journal.h"
#include "config/workload.h"
#include "config/cells.h"
#include "config/matrix.h"
#include "proc/procs.h"
#include "report/report.h"
#include "results/report_load.h"
#include "run/sweep.h"
#include "run/workers.h"

static void usage(FILE *f) {
        fputs("usage: gauntlet run MATRIX [--journal FILE] [--rerun] [--rerun-changed] [--wait] [--no-infer]\n"
              "                    [--no-prune] [--launcher local|slurm] [--against OLD [--max-slowdown PCT]]\n\n"
              "Launches every cell of the matrix under supervision, checks its answers,\n"
              "benchmarks the cells that answer right and records everything in the journal.\n"
              "Running it again on the same journal skips settled cells and retries the one a\n"
              "killed run left in flight.\n\n"
              "  --journal FILE   the journal (default: runs/<matrix name>.db)\n"
              "  --rerun          run settled cells again\n"
              "  --rerun-changed  the journal was measured with other bench, checks, eval, probes\n"
              "                   or objective: measure its cells again under the matrix's own\n"
              "                   (without it such a journal is refused)\n"
              "  --wait           if another run holds the journal, wait for it to end\n"
              "  --no-infer       also run the cells an architecture crash already decided\n"
              "  --no-prune       strategy search: launch every cell, in the search's order,\n"
              "                   whatever the budget and the predictions\n"
              "  --launcher L     where servers run: local (here), or slurm (each cell a Slurm\n"
              "                   job, the matrix's slurm: settings; docs/slurm.md)\n"
              "  --against OLD    check the winner of the journal OLD again: its winner and close\n"
              "                   rivals first; stop if it still passes and is still the best\n"
              "                   within noise, else run the rest and name the new best (the\n"
              "                   new sweep needs a journal other than OLD; docs/compare.md)\n"
              "  --max-slowdown PCT  with --against: a rival within PCT of the old winner is run\n"
              "                   first, and must beat it by more than PCT (default 5%)\n"
              "  --help           this text\n\n"
              "exit status: 0 a cell passed, 1 none passed, 2 usage or matrix error,\n"
              "129 hung up (SIGHUP), 130 interrupted (SIGINT, SIGTERM), 141 output lost\n"
              "(stdout or stderr could not be written); each time the server was stopped\n",
              f);
}

struct printer {
        const struct matrix *m;
        struct journal *j;
        /* the sweep's loop: output that cannot be written interrupts it (output_lost) */
        struct loop *loop;
        bool output_lost;
        bool progress;      /* a progress line on stderr (a terminal) */
        bool color;
        size_t width;       /* of the label column */
        size_t index, total;
        const struct cell *current;
        usec_t started;
        /* the secret values of every cell's argv and env: a key the server echoes into
         * its log, and so into the evidence, is hidden in these lines too */
        struct secrets_values secrets;
        /* The best so far, as last read from the journal, and the cells that passed then:
         * read again only when it may have changed (best_so_far). */
        char *best;
        char **passing;
        bool shared;        /* a worker: other processes settle cells in the journal too */
        /* strategy: search: the launch in flight (1-based; 0: none yet) and the budget (0:
         * none), shown instead of the cell's place in the grid */
        size_t launch, budget;
        const char *again;  /* how the launch in flight launches a cell again, or NULL */
        size_t launched;    /* cells launched in this run */
        struct against *against;  /* run --against; NULL: without */
};

/* Server and matrix text is data: secrets masked, control characters, C1 and bidi
 * controls escaped (as the text report does), cut to max characters (0: whole). */
static void put_text(const struct printer *p, FILE *f, const char *s, size_t max) {
        if (!s)
                return;
        int r;
        _cleanup_free_ char *masked = secrets_values_mask(&p->secrets, s, &r);
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (report_escape_text(&b, masked ? masked : s, max) < 0)
                return;
        fputs(buf_str(&b), f);
}

static void clear_progress(struct printer *p) {
        if (p->progress)
                fputs("\r\033[K", stderr);
}

/* After each write: output that cannot be written (a reader gone, `| head -1`; a full
 * disk) is an interruption, as SIGINT is: the server is stopped, the attempt abandoned,
 * and the run ends with 141 (interrupted_status). SIGPIPE itself is ignored. */
static void check_output(struct printer *p) {
        if (p->output_lost || !(ferror(stdout) || ferror(stderr)))
                return;
        p->output_lost = true;
        if (p->loop)
                loop_interrupt(p->loop, SIGPIPE);
}

/* stdout or stderr is a pipe whose reader has gone (`| head -1` read its line): an
 * interruption at once, not at the next line, which may come an hour later. */
static void on_output_gone(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct printer *p = userdata;
        if (!(revents & (EPOLLERR | EPOLLHUP)))
                return;
        loop_unwatch_fd(l, fd);
        if (!p->output_lost) {
                p->output_lost = true;
                loop_interrupt(l, SIGPIPE);
        }
}

/* Watches stdout and stderr when they are pipes or sockets (a terminal's hangup is
 * SIGHUP's, a file has no reader to lose). */
static void watch_output(struct printer *p) {
        for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
                struct stat st;
                if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
                        (void)loop_watch_fd(p->loop, fd, 0, on_output_gone, p);
        }
}

/* The exit status of a run that a signal (or lost output) interrupted: docs/faults.md. */
static int interrupted_status(int sig) {
        switch (sig) {
        case SIGHUP:
                return 129;
        case SIGPIPE:
                return 141;
        default:
                return 130; /* SIGINT, SIGTERM */
        }
}

static void on_started(void *userdata, const struct cell *c, size_t index, size_t total) {
        struct printer *p = userdata;
        p->current = c;
        p->index = index;
        p->total = total;
        p->started = now_usec();
        p->launched++;
        check_output(p);
}

/* run --against: the old winner and its rivals settled; whether the rest runs. */
static bool on_first_settled(void *userdata) {
        struct printer *p = userdata;
        clear_progress(p);
        bool stop = p->against && against_first_settled(p->against, p->j, p->launched);
        check_output(p);
        return stop;
}

/* "[3/12]" for a grid's cell; "[launch 17 (budget 72)]" for the search's, which chooses
 * its cells as it goes ("[launch 18 (budget 72), measured again]": a cell that served,
 * launched again because its figure is too close to the best's to tell them apart;
 * "[launch 19, launched again]": a cell that failed in a way nothing of the matrix
 * explains). */
static void put_place(const struct printer *p, FILE *f, size_t index, size_t total) {
        if (!p->launch) {
                int digits = snprintf(NULL, 0, "%zu", total);
                fprintf(f, "[%*zu/%zu]", digits, index + 1, total);
        } else if (p->budget)
                fprintf(f, "[launch %zu (budget %zu)%s%s]", p->launch, p->budget, p->again ? ", " : "",
                        p->again ? p->again : "");
        else
                fprintf(f, "[launch %zu%s%s]", p->launch, p->again ? ", " : "", p->again ? p->again : "");
        (void)total;
}

static void on_search_launch(void *userdata, size_t launch, size_t budget, const char *again) {
        struct printer *p = userdata;
        p->launch = launch;
        p->budget = budget;
        p->again = again;
}

static void on_search_stopped(void *userdata, const char *why, size_t launched, size_t budget) {
        struct printer *p = userdata;
        clear_progress(p);
        if (streq_ptr(why, "budget") && !(budget && launched >= budget) && p->m->budget_time) {
                /* the time budget, not the launches', ended it */
                char t[32];
                printf("search: time budget of %s spent after %zu launch%s; the cells not launched are pruned\n",
                       format_duration(p->m->budget_time, t), launched, launched == 1 ? "" : "es");
        } else if (streq_ptr(why, "budget"))
                printf("search: budget of %zu launch%s spent; the cells not launched are pruned\n", launched,
                       launched == 1 ? "" : "es");
        else if (streq_ptr(why, "no chance left"))
                printf("search: after %zu launch%s no cell left has a real chance to beat the best; the rest are "
                       "pruned\n", launched, launched == 1 ? "" : "es");
        else if (!why || streq_ptr(why, "no candidate left"))
                printf("search: %s after %zu launch%s\n", why ? why : "stopped", launched, launched == 1 ? "" : "es");
        else /* nothing can pass: why, and what to change */
                printf("search: stopped after %zu launch%s: %s\n", launched, launched == 1 ? "" : "es", why);
        p->launch = 0; /* the pruned cells' lines show their place in the grid */
        fflush(stdout);
        check_output(p);
}

static void on_phase(void *userdata, const struct cell *c, enum phase ph) {
        struct printer *p = userdata;
        if (!p->progress)
                return;
        _cleanup_free_ char *label = cell_label(p->m, c);
        fputs("\r\033[K", stderr);
        put_place(p, stderr, p->index, p->total);
        fputc(' ', stderr);
        put_text(p, stderr, label ? label : c->id, 0);
        fprintf(stderr, ": %s…", phase_to_string(ph));
        fflush(stderr);
        check_output(p);
}

/* "best so far: moe=a gemm=b, 172.3 tok/s @1" (or "best so far: none") as the journal's
 * best-cell rule has it now (report_best_index: the same as the report's and emit's), or
 * NULL when the journal cannot say. Caller frees. */
static char *best_text(const struct report_view *v) {
        int best = report_best_index(v, NULL);
        if (best < 0)
                return strdup("best so far: none");
        const struct report_cell *c = &v->cells[best];
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "best so far: ");
        for (size_t k = 0; k < v->n_axes; k++)
                buf_printf(&b, "%s%s=%s", k ? " " : "", v->axes[k],
                           c->axis_values && c->axis_values[k] ? c->axis_values[k] : "?");
        if (v->n_axes == 0)
                buf_printf(&b, "%.8s", c->id);
        _cleanup_free_ char *fig = report_cell_figure(v, c);
        if (fig)
                buf_printf(&b, ", %s", fig);
        return buf_detach(&b);
}

/* The best so far after cell `id` settled with verdict v (a view of the whole journal
 * costs time in proportion to its cells, so it is read again only when the best may have
 * changed: the best, and the eval's reference and gate, are chosen among the cells that
 * passed, so a cell that did not pass, and had not passed before, leaves it as it was; a
 * worker's journal changes under it). Owned by p; NULL when the journal cannot say. */
static const char *best_so_far(struct printer *p, const char *id, enum verdict v) {
        bool was_passing = false;
        for (char **c = p->passing; c && *c && !was_passing; c++)
                was_passing = strcmp(*c, id) == 0;
        if (p->best && !p->shared && v != VERDICT_PASS && !was_passing)
                return p->best;
        _cleanup_report_view_ struct report_view *view = NULL;
        free(TAKE_PTR(p->best));
        strv_free(TAKE_PTR(p->passing));
        if (report_load_view(p->j, &view) < 0)
                return NULL;
        for (size_t i = 0; i < view->n_cells; i++)
                /* as journaled: the eval's gate, against a reference among the passing
                 * cells, may have turned it wrong in the view */
                if (view->cells[i].has_attempt && !view->cells[i].excluded &&
                    (view->cells[i].verdict == VERDICT_PASS || view->cells[i].eval.journal_verdict == VERDICT_PASS) &&
                    strv_push(&p->passing, view->cells[i].id) < 0) {
                        strv_free(TAKE_PTR(p->passing));
                        return NULL;
                }
        p->best = best_text(view);
        return p->best;
}

static void print_line(struct printer *p, const struct cell *c, size_t index, size_t total, enum verdict v,
                       const char *cause, const char *evidence, usec_t took, bool from_journal, const char *best) {
        clear_progress(p);
        _cleanup_free_ char *label = cell_label(p->m, c);
        char vc[64];
        if (cause)
                snprintf(vc, sizeof(vc), "%s/%s", verdict_to_string(v), cause);
        else
                snprintf(vc, sizeof(vc), "%s", verdict_to_string(v));
        _cleanup_buf_ struct buf shown;
        buf_init(&shown, 0);
        if (report_escape_text(&shown, label ? label : c->id, 0) < 0)
                return;
        /* a cell the search did not launch shows its place in the grid */
        size_t launch = p->launch;
        if (v == VERDICT_SKIPPED)
                p->launch = 0;
        put_place(p, stdout, index, total);
        p->launch = launch;
        printf(" %-*s  ", (int)p->width, buf_str(&shown));
        if (p->color)
                printf("%s%-20s\033[0m", verdict_color(v), vc);
        else
                printf("%-20s", vc);
        if (from_journal)
                printf(" %7s", "(journal)");
        else
                printf(" %6.1fs", (double)took / USEC_PER_SEC);
        if (best) {
                fputs("  [", stdout);
                put_text(p, stdout, best, 0);
                fputc(']', stdout);
        }
        if (evidence) {
                fputs("  ", stdout);
                put_text(p, stdout, evidence, 160);
        }
        fputc('\n', stdout);
        fflush(stdout);
        check_output(p);
}

static void on_settled(void *userdata, const struct cell *c, size_t index, size_t total, const struct attempt *a,
                       bool from_journal) {
        struct printer *p = userdata;
        if (a) {
                /* a pass says how the eval went; the verdict against the reference comes
                 * once the sweep is over */
                _cleanup_free_ char *eval = NULL;
                if (a->verdict == VERDICT_PASS && a->eval) {
                        struct eval_figures f;
                        eval_figures_of(a->eval, a->n_eval, &f);
                        _cleanup_free_ char *line = eval_figures_line(&f);
                        eval = line ? strdup_printf("eval %s", line) : NULL;
                }
                /* a cell settled in this run (not one the matrix excludes): where the sweep
                 * stands now */
                const char *best = a->id ? best_so_far(p, c->id, a->verdict) : NULL;
                const char *where = attempt_where(a->verdict, a->phase);
                _cleanup_free_ char *said = where ? strdup_printf("%s: %s", where, a->evidence ? a->evidence : "")
                                                  : NULL;
                print_line(p, c, index, total, a->verdict, a->cause, eval ? eval : said ? said : a->evidence,
                           a->verdict == VERDICT_SKIPPED ? 0 : now_usec() - p->started, false, best);
                return;
        }
        enum verdict v = VERDICT_INVALID;
        _cleanup_free_ char *cause = NULL, *evidence = NULL;
        if (journal_cell_result(p->j, c->id, &v, &cause, &evidence) < 0)
                v = VERDICT_INVALID;
        print_line(p, c, index, total, v, cause, evidence, 0, true, NULL);
}

/* The eval's verdicts, decided once every cell has settled (docs/eval.md). */
static void print_eval_gate(const struct printer *p, const struct report_view *v) {
        _cleanup_free_ char *summary = report_eval_summary(v);
        if (!summary)
                return;
        fputs("eval: ", stdout);
        put_text(p, stdout, summary, 0);
        fputc('\n', stdout);
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                if (!c->eval.gate)
                        continue;
                printf("  %.8s wrong/%s  ", c->id, eval_gate_cause(c->eval.gate));
                put_text(p, stdout, c->evidence, 200);
                fputc('\n', stdout);
        }
}

static void on_notice(void *userdata, const char *message) {
        struct printer *p = userdata;
        clear_progress(p);
        fputs("gauntlet: ", stderr);
        put_text(p, stderr, message, 0);
        fputc('\n', stderr);
        check_output(p);
}

/* A fresh 0600 file renamed into place (write_file_replace): an older report of another
 * mode, or a symlink someone left at the name, never receives what this one holds. */
static int write_file(const char *path, const struct buf *b) {
        return write_file_replace(path, buf_str(b), b->len);
}

/* What a finished sweep leaves beside its logs: the report as HTML, Markdown and JSON, and for
 * the best cell the unit and launch script the matrix's `emit:` asks for. Mode 0600: the
 * reports hold server output, the unit and script the real environment. The unit and the
 * script are built from the view as journaled (they need the real keys); the reports from
 * the view with its secrets masked. Only what was written is named. */
static void write_outputs(const struct matrix *m, struct report_view *view, const char *dir) {
        int r = mkdir_p(dir, 0755);
        if (r < 0) {
                cli_error("cannot create '%s': %s", dir, strerror(-r));
                return;
        }
        static const struct {
                unsigned bit;
                bool systemd;
                const char *prefix, *suffix;
        } kinds[] = {{EMIT_SYSTEMD, true, "gauntlet-", ".service"}, {EMIT_SCRIPT, false, "launch-", ".sh"}};
        struct buf emitted[ELEMENTSOF(kinds)];
        bool built[ELEMENTSOF(kinds)] = {false};
        int best = report_best_index(view, NULL);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                buf_init(&emitted[i], 0);
                built[i] = best >= 0 && (m->emit & kinds[i].bit) &&
                           cli_emit_build(view, best, true, kinds[i].systemd, NULL, 0, &emitted[i]) == EXIT_OK;
        }
        if (report_load_logs(view) < 0)
                cli_error("cannot read the logs' excerpts for the HTML report: %s", strerror(ENOMEM));
        if (report_view_mask_secrets(view) < 0)
                cli_error("cannot mask the secrets in the reports: %s", strerror(ENOMEM));
        struct {
                const char *name;
                char *path;
                struct buf out;
                int r;
        } rep[] = {{"report.html", NULL, {0}, 0}, {"report.md", NULL, {0}, 0}, {"report.json", NULL, {0}, 0}};
        _cleanup_buf_ struct buf written;
        buf_init(&written, 0);
        for (size_t i = 0; i < ELEMENTSOF(rep); i++) {
                buf_init(&rep[i].out, 0);
                rep[i].path = strdup_printf("%s/%s", dir, rep[i].name);
                if (!rep[i].path) {
                        rep[i].r = -ENOMEM;
                        continue;
                }
                if (i == 0)
                        rep[i].r = report_html(view, &rep[i].out);
                else if (i == 1)
                        rep[i].r = report_markdown(view, &rep[i].out);
                else {
                        json_t *j = NULL;
                        rep[i].r = report_json(view, GAUNTLET_VERSION, &j);
                        char *t = rep[i].r >= 0 ? json_dumps(j, JSON_INDENT(2)) : NULL;
                        json_decref(j);
                        if (rep[i].r >= 0 && (!t || buf_puts(&rep[i].out, t) < 0 || buf_puts(&rep[i].out, "\n") < 0))
                                rep[i].r = -ENOMEM;
                        free(t);
                }
                if (rep[i].r >= 0)
                        rep[i].r = write_file(rep[i].path, &rep[i].out);
                if (rep[i].r < 0) {
                        /* a file cut short is worse than none; an older one is not this run's */
                        unlink(rep[i].path);
                        cli_error("cannot write '%s': %s", rep[i].path, strerror(-rep[i].r));
                } else
                        buf_printf(&written, "%s%s", written.len ? ", " : "", rep[i].path);
        }
        if (written.len)
                printf("reports: %s\n", buf_str(&written));
        for (size_t i = 0; i < ELEMENTSOF(rep); i++) {
                free(rep[i].path);
                buf_release(&rep[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                _cleanup_free_ char *name = built[i] ? strdup_printf("%s%s%s", kinds[i].prefix, view->engine,
                                                                     kinds[i].suffix)
                                                     : NULL;
                _cleanup_free_ char *path = name ? strdup_printf("%s/%s", dir, name) : NULL;
                if (path && (r = write_file(path, &emitted[i])) < 0) {
                        unlink(path);
                        cli_error("cannot write '%s': %s", path, strerror(-r));
                } else if (path)
                        printf("%s: %s\n", kinds[i].systemd ? "systemd unit" : "launch script", path);
                buf_release(&emitted[i]);
        }
}

/* runs/<matrix stem>.db */
static char *default_journal(const char *matrix_path) {
        _cleanup_free_ char *copy = strdup(matrix_path);
        if (!copy)
                return NULL;
        char *base = basename(copy);
        char *dot = strrchr(base, '.');
        if (dot && dot != base)
                *dot = '\0';
        return strdup_printf("runs/%s.db", base);
}

struct worker {
        bool active;          /* this process is one worker of a multi-slot sweep */
        size_t slot, n_slots;
        int parent;           /* the gauntlet that started it */
        const char *gpus;     /* "0,1": the NVML indices it watches */
        const char *visible;  /* CUDA_VISIBLE_DEVICES for its servers */
};

struct worker_args {
        const char *matrix_path, *journal_path;
        bool rerun, no_infer, no_prune;
        enum launcher_kind launcher;
};

/* A worker's command line: this program's `run` on the same matrix and journal, with the
 * internal --worker options that cli_run parses below. */
static int worker_argv(void *userdata, const struct workers_slot *ws, char ***ret) {
        const struct worker_args *a = userdata;
        _cleanup_free_ char *which = strdup_printf("%zu/%zu/%d", ws->slot, ws->n_slots, (int)ws->parent);
        if (!which)
                return -ENOMEM;
        char *argv[] = {"/proc/self/exe", "run", (char *)a->matrix_path, "--journal", (char *)a->journal_path,
                        "--worker", which, "--launcher", a->launcher == LAUNCHER_SLURM ? "slurm" : "local", NULL};
        char **v = strv_copy(argv);
        /* GPUs only for a worker of its own GPU set: Slurm gives its jobs theirs */
        bool gpus = ws->gpus && *ws->gpus, visible = ws->visible != NULL;
        if (!v || (gpus && (strv_push(&v, "--worker-gpus") < 0 || strv_push(&v, ws->gpus) < 0)) ||
            (visible && (strv_push(&v, "--worker-visible") < 0 || strv_push(&v, ws->visible) < 0)) ||
            (a->rerun && strv_push(&v, "--rerun") < 0) || (a->no_infer && strv_push(&v, "--no-infer") < 0) ||
            (a->no_prune && strv_push(&v, "--no-prune") < 0)) {
                strv_free(v);
                return -ENOMEM;
        }
        *ret = v;
        return 0;
}

/* "pid N", or "pid unknown" when the lock file could not say. */
static const char *holder_text(pid_t holder, char buf[static 32]) {
        if (holder > 0)
                snprintf(buf, 32, "pid %d", (int)holder);
        else
                snprintf(buf, 32, "pid unknown");
        return buf;
}

/* One workload per journal (docs/journal.md "One workload per journal"): a journal measured
 * under other bench, checks, eval, probes or objective is refused in one line, unless
 * rerun_changed (its cells are then measured again: journal_cell_settled no longer counts
 * them); an older journal without a stored workload adopts the matrix's, with a note. */
static int check_workload(struct journal *j, const char *jpath, const struct matrix *m, bool rerun_changed) {
        _cleanup_free_ char *text = NULL, *stored = NULL, *stored_hash = NULL, *diff = NULL;
        char hash[17];
        int64_t n = 0;
        int r;
        if ((r = workload_describe(m, NULL, &text, hash)) < 0 || (r = journal_workload(j, &stored, &stored_hash)) < 0) {
                cli_error("cannot read the journal '%s': %s", jpath, journal_strerror(r));
                return r;
        }
        if (!stored_hash) {
                if ((r = journal_count_other_workload(j, hash, &n)) < 0 ||
                    (n > 0 && (r = journal_adopt_workload(j, text, hash, &n)) < 0)) {
                        cli_error("cannot write the journal '%s': %s", jpath, journal_strerror(r));
                        return r;
                }
                if (n > 0)
                        cli_error("note: journal '%s' does not say which bench, checks, eval, probes and objective its "
                                  "%lld attempt%s measured under (written by an older gauntlet): %s taken as this "
                                  "matrix's",
                                  jpath, (long long)n, n == 1 ? " was" : "s were", n == 1 ? "it is" : "they are");
                return 0;
        }
        if (strcmp(stored_hash, hash) != 0 && (r = workload_diff(stored, text, &diff)) < 0) {
                cli_error("out of memory");
                return r;
        }
        if (diff && !rerun_changed) {
                cli_error("journal '%s' was measured with %s: use a new journal, or --rerun-changed to re-measure",
                          jpath, diff);
                return -ESTALE;
        }
        if (diff && (r = journal_count_other_workload(j, hash, &n)) >= 0 && n > 0)
                cli_error("journal '%s' was measured with %s: its %lld cell%s measured again", jpath, diff, (long long)n,
                          n == 1 ? " is" : "s are");
        return 0;
}

/* What the command line asked for. */
struct run_args {
        const char *matrix_path, *journal_path;
        const char *launcher;  /* NULL: the matrix's */
        bool rerun, wait_lock, no_infer, no_prune, rerun_changed;
        const char *against;   /* --against OLD */
        double max_slowdown;   /* --max-slowdown; < 0: not given */
        struct worker w;
        bool help;
};

/* The command line into a. Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct run_args *a) {
        /* --worker* are internal: how a sweep on several GPU slots starts its workers. */
        static const struct option opts[] = {
                {"journal", required_argument, NULL, 'j'},
                {"rerun", no_argument, NULL, 'r'},
                {"rerun-changed", no_argument, NULL, 'C'},
                {"wait", no_argument, NULL, 'w'},
                {"no-infer", no_argument, NULL, 'I'},
                {"no-prune", no_argument, NULL, 'P'},
                {"launcher", required_argument, NULL, 'L'},
                {"against", required_argument, NULL, 'A'},
                {"max-slowdown", required_argument, NULL, 'S'},
                {"help", no_argument, NULL, 'h'},
                {"worker", required_argument, NULL, 'W'},
                {"worker-gpus", required_argument, NULL, 'G'},
                {"worker-visible", required_argument, NULL, 'V'},
                {0},
        };
        struct worker *w = &a->w;
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":j:rwh", opts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        a->journal_path = optarg;
                        break;
                case 'r':
                        a->rerun = true;
                        break;
                case 'C':
                        a->rerun_changed = true;
                        break;
                case 'w':
                        a->wait_lock = true;
                        break;
                case 'I':
                        a->no_infer = true;
                        break;
                case 'P':
                        a->no_prune = true;
                        break;
                case 'L':
                        if (strcmp(optarg, "local") != 0 && strcmp(optarg, "slurm") != 0)
                                return cli_usage_error("run", "unknown launcher '%s' (local or slurm)", optarg);
                        a->launcher = optarg;
                        break;
                case 'A':
                        a->against = optarg;
                        break;
                case 'S':
                        if (cli_parse_percent(optarg, &a->max_slowdown) < 0)
                                return cli_usage_error("run", "--max-slowdown needs a percentage from 0 to 1000, as 5%%");
                        break;
                case 'W':
                        if (sscanf(optarg, "%zu/%zu/%d", &w->slot, &w->n_slots, &w->parent) != 3 || w->n_slots < 2 ||
                            w->slot >= w->n_slots || w->parent <= 0)
                                return cli_usage_error("run", "invalid --worker '%s'", optarg);
                        w->active = true;
                        break;
                case 'G':
                        w->gpus = optarg;
                        break;
                case 'V':
                        w->visible = optarg;
                        break;
                case 'h':
                        a->help = true;
                        return EXIT_OK;
                default:
                        return cli_bad_option("run", c, argv);
                }
        }
        if (optind != argc - 1)
                return cli_usage_error("run", optind >= argc ? "no matrix file given" : "more than one matrix file given");
        if (a->max_slowdown >= 0 && !a->against)
                return cli_usage_error("run", "--max-slowdown goes with --against");
        if (a->against && w->active)
                return cli_usage_error("run", "--against does not go with --worker");
        a->matrix_path = argv[optind];
        return -1;
}

/* A run of the sweep: what it holds from the matrix to the last line. */
struct run_state {
        const struct run_args *a;
        struct matrix *m;
        char *jpath, *log_root;
        int lock_fd;
        struct loop *loop;
        struct journal *j;
        struct printer p;
        struct gpu *gpu;
        struct cgroup_base *cgroups;
        char *host_json, *visible_env;
        struct against against;
};

static void run_state_release(struct run_state *s) {
        against_release(&s->against);
        if (s->j)
                journal_close(s->j);
        secrets_values_release(&s->p.secrets);
        free(s->p.best);
        strv_free(s->p.passing);
        cgroup_base_free(s->cgroups);
        free(s->host_json);
        free(s->visible_env);
        gpu_closep(&s->gpu);
        loop_freep(&s->loop);
        closep(&s->lock_fd);
        free(s->jpath);
        free(s->log_root);
        matrix_freep(&s->m);
}

/* The matrix, the command line's launcher over its own. Returns -1 to go on, or an exit code. */
static int load_matrix(struct run_state *s) {
        const struct run_args *a = s->a;
        _cleanup_free_ char *error = NULL;
        int r = cells_load_matrix(a->matrix_path, &s->m, &error);
        if (r < 0) {
                cli_error("%s", error ? error : strerror(-r));
                return EXIT_USAGE;
        }
        if (s->m->strategy == STRATEGY_SEARCH && a->rerun) {
                cli_error("--rerun does not go with strategy: search, which learns from every cell the journal "
                          "holds; give it a new --journal to search afresh");
                return EXIT_USAGE;
        }
        if (s->m->strategy != STRATEGY_SEARCH && a->no_prune)
                return cli_usage_error("run", "--no-prune needs a matrix with strategy: search");
        if (a->launcher) {
                s->m->launcher = strcmp(a->launcher, "slurm") == 0 ? LAUNCHER_SLURM : LAUNCHER_LOCAL;
                s->m->line_launcher = 0; /* the command line's, not the file's */
        }
        return -1;
}

/* The journal's path and its logs' folder, which is made. Returns -1 to go on, or an exit code. */
static int journal_paths(struct run_state *s) {
        s->jpath = s->a->journal_path ? strdup(s->a->journal_path) : default_journal(s->a->matrix_path);
        s->log_root = s->jpath ? journal_log_root(s->jpath) : NULL;
        if (!s->jpath || !s->log_root) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        _cleanup_free_ char *dir = strdup(s->jpath);
        int r = 0;
        if (!dir || (r = mkdir_p(dirname(dir), 0755)) < 0) {
                cli_error("cannot create the folder of '%s': %s", s->jpath, strerror(r < 0 ? -r : ENOMEM));
                return EXIT_USAGE;
        }
        return -1;
}

/* One run per journal (its workers share their parent's). Taken before the loop blocks
 * signals, so a Ctrl-C while --wait waits ends the wait. Returns -1 to go on, or an exit code. */
static int lock_journal(struct run_state *s) {
        const char *jpath = s->jpath;
        pid_t holder = 0;
        char hbuf[32];
        s->lock_fd = journal_lock(jpath, false, &holder);
        if (s->a->wait_lock && s->lock_fd == -EWOULDBLOCK) {
                cli_error("journal '%s' is in use by another run (%s); waiting for it", jpath, holder_text(holder, hbuf));
                s->lock_fd = journal_lock(jpath, true, NULL);
        }
        if (s->lock_fd == -EWOULDBLOCK) {
                cli_error("journal '%s' is in use by another run (%s)", jpath, holder_text(holder, hbuf));
                return EXIT_USAGE;
        }
        if (s->lock_fd == JOURNAL_ENOTFILE) {
                cli_error("journal '%s' is %s", jpath, journal_strerror(s->lock_fd));
                return EXIT_USAGE;
        }
        if (s->lock_fd == -ELOOP) {
                cli_error("cannot lock the journal '%s': its lock file '%s.lock' is a symbolic link (not "
                          "followed; remove it if it is not yours)", jpath, jpath);
                return EXIT_USAGE;
        }
        if (s->lock_fd < 0) {
                cli_error("cannot lock the journal '%s': %s", jpath, journal_strerror(s->lock_fd));
                return EXIT_USAGE;
        }
        return -1;
}

/* The loop, then the journal, checked against the matrix's workload. Returns -1 to go on,
 * or an exit code. */
static int open_journal(struct run_state *s) {
        int r;
        if ((r = loop_new(&s->loop)) < 0 || (r = loop_catch_signals(s->loop)) < 0) {
                cli_error("cannot set up the event loop: %s", strerror(-r));
                return EXIT_USAGE;
        }
        /* Workers that escape into sessions of their own become our children when their
         * parent dies, so they can be found and ended. */
        if ((r = procs_become_subreaper()) < 0)
                cli_error("warning: cannot become a child subreaper: %s", strerror(-r));
        r = journal_open(s->jpath, &s->j);
        if (r < 0) {
                if (r == JOURNAL_ENOTJOURNAL || r == JOURNAL_ENEWER || r == JOURNAL_ENOTFILE)
                        cli_error("'%s' is %s", s->jpath, journal_strerror(r));
                else
                        cli_error("cannot open the journal '%s': %s", s->jpath, journal_strerror(r));
                return EXIT_USAGE;
        }
        if (!s->a->w.active && check_workload(s->j, s->jpath, s->m, s->a->rerun_changed || s->a->rerun) < 0)
                return EXIT_USAGE;
        return -1;
}

/* The printer: the label column as wide as the widest cell's, and every cell's secrets. */
static void printer_setup(struct run_state *s) {
        struct printer *p = &s->p;
        *p = (struct printer){.m = s->m,
                              .j = s->j,
                              .loop = s->loop,
                              .progress = !s->a->w.active && cli_color(stderr),
                              .color = cli_color(stdout),
                              .width = 10,
                              .shared = s->a->w.active};
        struct cell *cells = NULL;
        size_t n = 0;
        if (cells_expand(s->m, &cells, &n) == 0) {
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *label = cell_label(s->m, &cells[i]);
                        if (label)
                                p->width = MAX(p->width, strlen(label));
                        if (secrets_values_add_argv(&p->secrets, cells[i].argv) < 0 ||
                            secrets_values_add_env(&p->secrets, cells[i].env) < 0)
                                cli_error("warning: out of memory: secrets may show in progress lines");
                }
                cells_free(cells, n);
        }
        p->width = MIN(p->width, (size_t)60);
        watch_output(p);
}

/* The GPUs, the host fingerprint that goes into the journal with the sweep (reports say
 * which GPU and architecture decided the verdicts; no GPU is normal) and the cgroups.
 * Returns -1 to go on, or an exit code. */
static int host_setup(struct run_state *s) {
        const struct worker *w = &s->a->w;
        bool slurm = s->m->launcher == LAUNCHER_SLURM;
        int r;
        if ((r = gpu_open(&s->gpu)) < 0) {
                cli_error("cannot look for GPUs: %s", strerror(-r));
                return EXIT_USAGE;
        }
        if (w->active && w->gpus && (r = workers_select_gpus(s->gpu, w->gpus)) < 0) {
                cli_error("invalid --worker-gpus '%s': %s", w->gpus ? w->gpus : "", strerror(-r));
                return EXIT_USAGE;
        }
        json_t *host = NULL;
        if (host_fingerprint_gpu(s->loop, s->m->profile, s->gpu, &host) >= 0) {
                /* this machine's, not the nodes' the cells ran on */
                if (slurm)
                        json_object_set_new(host, "launcher", json_string("slurm"));
                s->host_json = json_dumps(host, JSON_COMPACT);
                json_decref(host);
        }
        const struct gpu *g = s->gpu;
        if (w->active || slurm)
                ; /* the parent said it; a Slurm job's GPUs are its node's */
        else if (g->n_gpus == 0) {
                /* said once, and only where it matters: CPU engines run fine without one */
                if (s->m->profile->needs_gpu)
                        fprintf(stderr, "gauntlet: no GPU found (%s)\n", g->reason ? g->reason : "no NVML");
        } else
                for (size_t i = 0; i < g->n_gpus; i++)
                        fprintf(stderr, "gauntlet: GPU %u: %s (%s), %llu MiB\n", g->gpus[i].index, g->gpus[i].name,
                                g->gpus[i].arch[0] ? g->gpus[i].arch : "arch unknown",
                                (unsigned long long)g->gpus[i].memory_total_mib);
        /* A cgroup of its own for each server where the host gives us a subtree; else the
         * /proc ways (`gauntlet doctor` says which, and why). */
        (void)cgroup_base_open(&s->cgroups, NULL);
        s->visible_env = w->visible ? strdup_printf("CUDA_VISIBLE_DEVICES=%s", w->visible) : NULL;
        return -1;
}

/* The sweep: in this process, or in workers, one per disjoint GPU set, for cells that need
 * fewer GPUs than the host has (this process then only waits for them and reports). */
static int run_sweep(struct run_state *s, struct sweep_summary *sum, char **error) {
        const struct run_args *a = s->a;
        bool slurm = s->m->launcher == LAUNCHER_SLURM;
        struct sweep_callbacks cb = {
                .cell_started = on_started,
                .cell_phase = on_phase,
                .cell_settled = on_settled,
                .notice = on_notice,
                .search_launch = on_search_launch,
                .search_stopped = on_search_stopped,
                .first_settled = on_first_settled,
                .userdata = &s->p,
        };
        char *extra_env[] = {s->visible_env, NULL};
        struct sweep_options o = {.journal_path = s->jpath,
                                  .log_root = s->log_root,
                                  .rerun = a->rerun,
                                  .no_infer = a->no_infer,
                                  .no_prune = a->no_prune,
                                  .host_json = s->host_json ? s->host_json : "{}",
                                  .gpu = slurm ? NULL : s->gpu, /* no memory wait for GPUs elsewhere */
                                  .slot = a->w.slot,
                                  .n_slots = a->w.active ? a->w.n_slots : 0,
                                  .extra_env = s->visible_env ? extra_env : NULL,
                                  .cgroups = s->cgroups,
                                  .first = s->against.first,
                                  .n_first = s->against.n_first};
        struct worker_args wa = {.matrix_path = a->matrix_path, .journal_path = s->jpath, .rerun = a->rerun,
                                 .no_infer = a->no_infer, .no_prune = a->no_prune, .launcher = s->m->launcher};
        struct workers_result wr = {0};
        int r;
        /* Side by side, a search's workers choose each cell with the others' in flight
         * (sweep.c, sweep_search); --against decides after the old winner and its
         * rivals, so it runs its cells one at a time. */
        if (a->against && !a->w.active)
                r = 0;
        else
                r = a->w.active ? 0 : workers_run(s->loop, s->j, s->m, s->gpu, worker_argv, &wa, &cb, &wr, error);
        if (r == 0 && wr.slots == 0)
                r = sweep_run(s->loop, s->m, s->j, &o, &cb, sum, error);
        else
                sum->signal = wr.signal;
        clear_progress(&s->p);
        return r;
}

/* The closing lines, from the journal: cells settled in earlier runs count. */
static int print_summary(struct run_state *s) {
        struct report_view *view = NULL;
        int r = report_load_view(s->j, &view);
        if (r < 0) {
                cli_error("cannot read the journal '%s': %s", s->jpath, journal_strerror(r));
                return EXIT_USAGE;
        }
        size_t counts[_VERDICT_MAX] = {0};
        size_t pass = report_count_verdicts(view, counts);
        printf("\n%zu cells:", report_cells(view));
        bool first = true;
        for (int v = 0; v < _VERDICT_MAX; v++) {
                if (!counts[v])
                        continue;
                printf("%s %zu %s", first ? "" : ",", counts[v], verdict_to_string((enum verdict)v));
                first = false;
        }
        const char *best = report_best(view);
        if (best)
                printf("; best: %s", best);
        printf("\n");
        print_eval_gate(&s->p, view);
        printf("journal: %s\n", s->jpath);
        write_outputs(s->m, view, s->log_root);
        report_view_free(view);
        return pass > 0 ? EXIT_OK : EXIT_FAILED;
}

/* The exit code of a sweep that returned r, with its message; the summary after one that ran. */
static int finish(struct run_state *s, int r, const struct sweep_summary *sum, const char *error) {
        int status;
        if (s->a->w.active) {
                if (r < 0 && r != -EINTR)
                        cli_error("%s", error ? error : strerror(-r));
                return r == -EINTR ? interrupted_status(sum->signal) : r < 0 ? EXIT_USAGE : EXIT_OK;
        }
        if (r == -EINTR && sum->signal == SIGPIPE) {
                cli_error("output lost (stdout or stderr cannot be written): the server was stopped; run again to "
                          "resume");
                status = interrupted_status(sum->signal);
        } else if (r == -EINTR) {
                cli_error("interrupted by SIG%s: the server was stopped; run again to resume",
                          sum->signal ? sigabbrev_np(sum->signal) : "INT");
                status = interrupted_status(sum->signal);
        } else if (r < 0) {
                cli_error("%s", error ? error : strerror(-r));
                status = EXIT_USAGE;
        } else {
                if (s->a->against)
                        against_finish(&s->against, s->j);
                status = print_summary(s);
        }
        /* the sweep ended, but what it said did not all reach its reader */
        check_output(&s->p);
        if (s->p.output_lost && (status == EXIT_OK || status == EXIT_FAILED)) {
                cli_error("output lost (stdout or stderr cannot be written)");
                status = interrupted_status(SIGPIPE);
        }
        return status;
}

/* From the matrix to the closing lines. */
static int run_main(struct run_state *s) {
        const struct run_args *a = s->a;
        /* A write to a closed pipe fails with EPIPE instead of killing the run with its
         * server still up: check_output makes it an interruption. */
        signal(SIGPIPE, SIG_IGN);
        /* A worker whose parent is killed stops its server and ends (as on SIGTERM): a
         * sweep never goes on without the process that reports it. */
        if (a->w.active && workers_attach(a->w.parent) < 0)
                return 130;
        int r;
        if ((r = load_matrix(s)) >= 0 || (r = journal_paths(s)) >= 0 ||
            (a->against && (r = against_open(&s->against, a->against, s->jpath, s->m)) >= 0) ||
            (!a->w.active && (r = lock_journal(s)) >= 0) || (r = open_journal(s)) >= 0)
                return r;
        printer_setup(s);
        s->p.against = a->against ? &s->against : NULL;
        if ((r = host_setup(s)) >= 0)
                return r;
        _cleanup_free_ char *error = NULL;
        /* A server that cannot start at all stops the sweep before the first cell. */
        if (!a->w.active && (r = sweep_preflight(s->m, &error)) < 0) {
                cli_error("%s", error ? error : strerror(-r));
                return EXIT_USAGE;
        }
        struct sweep_summary sum = {0};
        r = run_sweep(s, &sum, &error);
        return finish(s, r, &sum, error);
}

int cli_run(int argc, char **argv) {
        struct run_args a = {.max_slowdown = -1};
        int r = parse_args(argc, argv, &a);
        if (a.help) {
                usage(stdout);
                return EXIT_OK;
        }
        if (r >= 0)
                return r;
        _cleanup_(run_state_release) struct run_state s = {.a = &a, .lock_fd = -1};
        compare_options_init(&s.against.opts);
        if (a.max_slowdown >= 0)
                s.against.opts.max_slowdown = a.max_slowdown;
        return run_main(&s);
}
