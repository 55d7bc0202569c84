/* results.h -- the results of a sweep: the view of a journal, and every decision on it.
 *
 * results_load_view() (results_load.h) builds a struct report_view from the journal's rows
 * (journal.h): the journal is the truth, this layer decides (the eval's verdicts, which the
 * run journals as its cells settle and which a report then reads back; the scores, the best
 * cell and its ties, the SLA, the one ordering),
 * and the renderers (report.h) only draw what it decided. The search reads the same view
 * (search_view.h). The view holds raw values exactly as journaled, secrets and server text
 * included: each renderer masks (secrets.h) and escapes for its own medium.
 */
#ifndef GAUNTLET_RESULTS_H
#define GAUNTLET_RESULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gate/attempt.h"
#include "text/buf.h"
#include "gate/eval.h"
#include "text/secrets.h"
#include "base/verdict.h"

struct report_check {
        char *name;
        enum verdict verdict;
        char *cause, *evidence;       /* NULL on pass */
        char *output, *reasoning;     /* full text as journaled (capped by checks.h) */
        char *finish_reason;
        int http_status;
        usec_t latency, ttft;
        bool streamed;
        char *detail;                 /* a probe's figures, or NULL (journals before v5: NULL) */
};

/* One eval answer, as journaled (eval_results). */
struct report_eval_answer {
        char *id, *key;
        char *question;               /* the prompt, or the messages as JSON */
        enum verdict verdict;         /* VERDICT_SKIPPED: not asked */
        char *cause, *evidence, *output, *finish_reason;
        int http_status;
        usec_t latency;
        double *logprobs;             /* NULL when the server sent none; NaN where it sent null */
        size_t n_logprobs;
};

/* A cell's eval against the view's question set (docs/eval.md). */
struct report_eval {
        bool ran;                     /* its attempt answered the view's set */
        bool other_set;               /* it answered an earlier sweep's different set */
        struct report_eval_answer *answers;  /* ran: one per question, in order */
        size_t n_answers;
        struct eval_figures fig;
        bool is_reference;
        bool compared;                /* compared with the reference: below is set */
        double z, p;                  /* two-proportion z-test against the reference */
        struct eval_diff diff;
        enum eval_gate gate;          /* not NONE: the cell's verdict was turned wrong */
        enum verdict journal_verdict; /* the verdict as journaled, before the gate */
        /* The eval under load (its bench's highest level, docs/metrics.md "Checks under
         * load"), set by report_view_apply_eval: */
        bool under_load;              /* the bench asked the eval's questions under load */
        int load_concurrency;
        struct eval_figures load_fig; /* the answers under load */
        struct eval_figures load_alone; /* the same questions, this cell alone */
        bool load_compared;           /* against the reference alone on the same questions: */
        struct eval_figures load_ref; /* the reference's answers alone to them */
        double load_z, load_p;        /* the two-proportion test of load_fig against load_ref */
        bool load_gated;              /* significantly below: the cell was turned wrong/accuracy */
};

/* A cell's evidence, parsed once from what was journaled (report_load.h): which
 * form it has, the server's line it quotes and where that line came from. Renderers show
 * the journaled text (report_cell.evidence) and use these fields; they never take the
 * text apart again. */
enum report_evidence_kind {
        REPORT_EVIDENCE_NONE,         /* none journaled */
        REPORT_EVIDENCE_WHOLE,        /* the whole evidence is the quote (a log line a signature
                                       * matched, an excerpt of an answer, gauntlet's own words) */
        REPORT_EVIDENCE_FIRST_ERROR,  /* "STATUS; first error line: LINE" (diagnose_exit, a
                                       * startup timeout) */
        REPORT_EVIDENCE_LAST_LINE,    /* "STATUS; last log line: LINE" */
};
enum report_evidence_source {
        REPORT_SOURCE_LOG,            /* the server's log: crashes, timeouts, ... */
        REPORT_SOURCE_ANSWER,         /* the server's answer: garbage and wrong verdicts */
};
/* Bytes of the quoted line kept to look for in the log (diagnosis cuts long lines). */
#define REPORT_EVIDENCE_LINE_MAX 200
struct report_evidence {
        enum report_evidence_kind kind;
        enum report_evidence_source source;
        char *line;                   /* the quoted line: its first line, blanks trimmed, up to
                                       * REPORT_EVIDENCE_LINE_MAX bytes; NULL when shorter than
                                       * 4 bytes (too short to look for) */
};
void report_evidence_release(struct report_evidence *e);

/* The excerpt of a failed cell's server log (report_load_logs): the lines around the
 * evidence's line, or the last lines when the log does not hold it. Only a file under the
 * run folder of the view's journal is read (journal_log_root): a journal is data, and a
 * log_path edited to name another file is named, never read. A log is read up to
 * REPORT_LOG_SCAN_MAX bytes (hours of serving can be gigabytes; diagnosis found its line
 * near the start or the end), and each line keeps its first REPORT_LOG_LINE_KEEP bytes. */
#define REPORT_LOG_SCAN_MAX ((size_t)64 << 20)
#define REPORT_LOG_LINE_KEEP 1024
#define REPORT_LOG_BEFORE 6
#define REPORT_LOG_AFTER 6
#define REPORT_LOG_TAIL 12
enum report_log_state {
        REPORT_LOG_NOT_LOADED,        /* report_load_logs did not look (a passing cell, or not
                                       * called: only the HTML page shows excerpts) */
        REPORT_LOG_NONE,              /* no log was recorded for the attempt */
        REPORT_LOG_READ,              /* lines below */
        REPORT_LOG_MISSING,           /* moved or deleted since the sweep */
        REPORT_LOG_UNREADABLE,        /* error says why */
        REPORT_LOG_OUTSIDE,           /* not under the journal's run folder: not read */
};
struct report_log_line {
        size_t no;                    /* 1-based */
        char *text;                   /* its first REPORT_LOG_LINE_KEEP bytes, as in the file */
};
struct report_log {
        enum report_log_state state;
        char *path;                   /* the path read or named (a relative one joined with the
                                       * sweep's cwd when that is where it was) */
        char *root;                   /* OUTSIDE: the run folder it is not under */
        int error;                    /* UNREADABLE: a negative errno */
        struct report_log_line *lines;
        size_t n_lines;
        long match;                   /* index in lines of the evidence's line, -1: none */
        bool scan_cut;                /* stopped at REPORT_LOG_SCAN_MAX */
        bool empty;                   /* the file has no line */
};
void report_log_release(struct report_log *l);

struct report_cell {
        char id[17];
        size_t position;              /* in the latest sweep's order */
        char **axis_values;           /* value name per view axis (NULL entries if unknown) */
        char **argv;                  /* as journaled: {host} and {port} kept */
        char **command;               /* argv with {host}/{port} of the attempt filled in */
        char **env;                   /* "KEY=VALUE", real values */
        int distance;
        bool excluded;
        /* The latest settled attempt; has_attempt false: never settled ("not run"), and
         * the fields below are zero (an excluded cell shows skipped/excluded either way). */
        bool has_attempt;
        bool other_workload;          /* no attempt of the view's workload, one of another */
        int64_t attempt_id, attempt_sweep_id;
        enum verdict verdict;         /* VERDICT_INVALID when not run */
        char *cause, *evidence, *log_path;
        struct report_evidence ev;    /* the evidence, parsed (report_load fills it) */
        struct report_log log;        /* the log's excerpt (report_load_logs fills it) */
        usec_t started_wall;          /* microseconds since the epoch */
        int port;
        usec_t phase[_PHASE_MAX];
        usec_t ready_after;           /* 0: never ready */
        int exit_code, exit_signal;
        uint64_t peak_gpu_mem_mib;
        struct report_check *checks;
        size_t n_checks;
        json_t *bench;                /* array of per-concurrency objects, or NULL */
        /* The cell's launches (settled attempts, not skipped), and the benches of its
         * earlier attempts that passed, oldest first (an array of arrays like bench), or
         * NULL: a search measures a close cell again before it names its best. */
        unsigned launches;
        unsigned retried;             /* of them, launches after a failed launch of the cell (a
                                         search's once more before believing) */
        unsigned abandoned;           /* attempts of the cell abandoned (a run interrupted, a
                                         port taken): a search's budget.launches counts them */
        char *abandon_reason;         /* the latest one's reason, or NULL */
        json_t *earlier;
        usec_t *earlier_started;      /* when each of earlier's attempts started, in its order */
        /* the attempt's raw bench samples (journal bench_samples), an array, or NULL: only
         * report_load_samples reads them (gauntlet compare) */
        json_t *samples;
        usec_t earlier_spent;         /* the earlier attempts' phases, in all */
        struct report_eval eval;
        /* skipped/pruned: the search's prediction when it pruned the cell, as journaled:
         * {"p_feasible", "mean", "high", "chance", "model_cells"} (mean and high in the
         * objective's units, absent while no launched cell had a figure); else NULL */
        json_t *prediction;
};

/* The latest sweep's search (strategy: search, docs/search.md): its settings as journaled,
 * and what the model makes of the view's cells now. */
struct report_view_search {
        bool on;                      /* the latest sweep's strategy was search */
        size_t budget_launches;       /* 0: none */
        usec_t budget_time;           /* 0: none */
        char **flags;                 /* per axis, "" when it has none (search.h axis_flags) */
        /* per axis (as many as flags), a strv of pairs: how a value is written after the
         * axis's flag or env key, and its name, where the two differ; NULL where none */
        char ***spellings;
        long first;                   /* the cell it starts from, -1 when unknown */
        size_t launched;              /* cells with a launched, settled attempt */
        size_t launches;              /* their launches: a cell measured again counts each,
                                         and the abandoned ones count */
        size_t abandoned;             /* of them, abandoned (report_cell.abandoned) */
        size_t retried;               /* of them, launches of a cell after it failed
                                         (report_cell.retried); a cell's other launches
                                         beyond its first measure it again */
        size_t pruned, inferred;      /* cells skipped as such */
        usec_t spent;                 /* the launched cells' time, phase by phase, in all */
        usec_t spent_failed;          /* of it, the cells that failed (failed: how many) */
        usec_t spent_served;          /* and the cells that served right */
        size_t failed;
        /* The launched cells in launch order (their attempts' start), and the best figure
         * after each launch (NAN while none had one): best_so_far[i] after order[i]. */
        size_t *order;
        double *best_so_far;
        /* What the search would launch next (-1: nothing: it stopped for want of chance or
         * of candidates), and why it stopped or would stop ("budget", "no chance left", "no
         * candidate left"; NULL while it would go on); next_why: its prediction, one line */
        long next;
        const char *stop;
        char *next_why;
        /* stop "nothing can pass": what failed and what to change, one line (search.h) */
        char *stop_why;
        /* The launched passing cell the model rates best: its figure pooled with what the
         * cells around it say, so one lucky or unlucky measurement does not decide
         * (docs/search.md "The named best"). report_best_index names it. named_estimate is
         * the model's figure for it; top, when another cell measured best, that cell, with
         * the model's figure top_estimate (-1 and NAN otherwise). */
        bool has_named;
        size_t named;
        double named_estimate;
        long top;
        double top_estimate;
};

/* The latest sweep's eval and its reference. */
struct report_view_eval {
        bool on;                      /* the latest sweep ran an eval */
        json_t *settings;             /* as journaled (eval_settings_json) */
        char *source;
        size_t questions;
        char set[17];
        struct eval_options rules;    /* min_agreement, max_logprob_diff (strings unused) */
        int reference;                /* index of the reference cell, -1: none */
        const char *reference_by;     /* "reference", "baseline", "most accurate" (static) */
        char *named;                  /* the cell `reference:`/`baseline:` named, or NULL */
        bool fell_back;               /* named had no eval figures: the most accurate serves */
        size_t gated;                 /* cells the gate turned wrong */
};

struct report_view {
        char *journal_path;
        int64_t sweep_id;             /* the latest sweep */
        usec_t sweep_started_wall;
        char *sweep_how;              /* "finished", "interrupted", "failed"; NULL: running or killed */
        int64_t earlier_sweeps;       /* sweeps before the latest one */
        char *workload_hash;          /* the latest sweep's workload (workload.h); NULL: an
                                         older journal. Only attempts measured under it are read */
        size_t workload_left_out;     /* cells whose figures are all of another workload: shown
                                         as not run, never ranked */
        char *version;                /* gauntlet version that ran the latest sweep */
        char *matrix_path, *matrix_text;
        char *engine, *model, *objective;
        char *host;                   /* bind host ({host}) */
        int port;                     /* the matrix's fixed port; 0 when free per launch */
        char *workdir;                /* the matrix's workdir, or NULL */
        char *cwd;                    /* gauntlet's cwd when the sweep began */
        usec_t startup_timeout;
        json_t *host_json;            /* the host fingerprint (an object; {} when unknown) */
        json_t *against;              /* run --against: what changed against the old run (an
                                         object, compare.h's compare_against_json); NULL: none */
        char **axes;                  /* axis names, in order */
        size_t n_axes;
        struct report_cell *cells;    /* in the latest sweep's order */
        size_t n_cells;
        struct report_view_eval eval;
        struct report_view_search search;
        /* The latest sweep's provenance (provenance.h, docs/provenance.md): an array of its
         * objects, one per cell environment, in the journal's order; NULL when it has none
         * (written before schema 7). Changes: what differs from the latest earlier sweep
         * with one (provenance_since; 0: none), first environment against first. */
        json_t *provenance;
        int64_t provenance_since;
        char **provenance_changes;    /* NULL-terminated; NULL when nothing to compare */
        /* Set by report_view_mask_secrets: the values it hid (report_html masks every
         * string it writes with them too). */
        struct secrets_values secrets;
};

void report_view_free(struct report_view *v);
/* Hides, in place, every secret value of the view's argv and env (secrets.h) wherever the
 * view repeats it: evidence, check outputs and reasoning, log excerpts, the matrix text, the
 * argv, command and env themselves. For what is shown to people (every report); the systemd unit and the
 * launch script need the real values and are built from an unmasked view. 0 or -ENOMEM. */
int report_view_mask_secrets(struct report_view *v);
static inline void report_view_freep(struct report_view **v) { if (*v) report_view_free(*v); }
#define _cleanup_report_view_ _cleanup_(report_view_freep)

/* Applies the eval's gate to a loaded view (report_load does): picks the reference, and
 * for each other cell that passed and answered the view's set computes the test and the
 * differential, turning the verdict into wrong/accuracy (significantly below the
 * reference) or wrong/divergence (a threshold of the differential crossed), with the
 * figures as evidence. Deterministic: the same journal gives the same view. -ENOMEM. */
int report_view_apply_eval(struct report_view *v);

/* A cell's final verdict as the journal holds it (the verdicts table, report_load.h), over
 * what report_view_apply_eval decided on this load: the journal wins. The gate's figures
 * stay as computed; its marks (eval.gate, eval.load_gated, eval.gated) follow the journaled
 * verdict. A cell not settled or excluded is left alone. 0 or -ENOMEM. */
int report_cell_take_verdict(struct report_view *v, struct report_cell *c, enum verdict verdict, const char *cause,
                             const char *evidence);

/* "not run" for a cell never settled, "skipped" for an excluded one, else the verdict. */
const char *report_cell_verdict(const struct report_cell *c);
/* The cause to show: "excluded" for an excluded cell, else the attempt's, or NULL. */
const char *report_cell_cause(const struct report_cell *c);

/* Whether a cell passed: settled, not excluded, verdict pass. */
bool report_cell_passed(const struct report_cell *c);

/* The objective: "METRIC@N" reads METRIC (a key of a bench entry, dots reach into
 * objects: "ttft_ms.p50") from the bench entry with concurrency N; "METRIC" alone takes
 * the best level; "smoke" (or no bench figure on any passing cell) ranks by the smoke
 * suite's time (sum of check latencies). Which way is better is the metrics table's
 * (metrics.h): the times ("_ms", "_s", and a percentile below one of those) are
 * lower-is-better, the rest higher-is-better, and so is a metric the table does not hold. */
struct report_score {
        bool by_bench;        /* value is the bench metric; else seconds of smoke suite */
        bool higher_better;
        double value;
        bool has_spread;      /* bench.repeats > 1: [lo, hi] is the figure's range over the runs */
        double lo, hi;
};
/* The score of one cell under the view's objective; -ENODATA when the cell has no figure
 * (not passing, or no checks and no bench). */
int report_cell_score(const struct report_view *v, const struct report_cell *c, bool by_bench, struct report_score *ret);
/* A cell measured more than once (a search measures close cells again): the geometric mean
 * of value (its latest score) and the scores of its earlier attempts that passed; how many
 * figures that pools in *ret_n (may be NULL). */
double report_cell_pooled(const struct report_view *v, const struct report_cell *c, bool by_bench, double value,
                          unsigned *ret_n);

/* Whether the view's cells are ranked by their bench figures (some passing cell has one),
 * else by their smoke time: the by_bench to give report_cell_score. */
bool report_by_bench(const struct report_view *v);

/* The best cell: among passing cells, the top score by the objective; scores within 1%
 * of the top tie, and ties go to the smaller distance (closer to the engine's defaults),
 * then to the earlier cell. Returns the cell's index, or -ENOENT when no cell passed.
 * *ret_score (optional) gets its score; value is NAN when no passing cell has a figure. */
int report_best_index(const struct report_view *v, struct report_score *ret_score);
/* The passing cells, other than the best, that tie with the top figure (within 1%, or, with
 * repeats, whose range over the runs overlaps the top's): up to max indices into ret.
 * Returns how many there are (0 without a best). */
size_t report_best_ties(const struct report_view *v, size_t *ret, size_t max);
/* Whether the best cell's tie is one of measured noise (ranges over repeats overlap). */
bool report_best_within_noise(const struct report_view *v);

/* The one ordering of the view's cells: every renderer that ranks them (Markdown's table
 * and failures, the HTML page's tables, charts and cell details) follows it. By rank, then:
 * passes with a figure best first, failures by verdict (the vocabulary's order) and cause,
 * and the rest (and equal figures) in the sweep's order. The text and JSON reports list
 * the cells in the sweep's order instead, as `run` printed them. */
enum report_rank {
        REPORT_RANK_BEST,     /* the best cell (report_best_index) */
        REPORT_RANK_SCORED,   /* the other passing cells with a figure under the objective */
        REPORT_RANK_PASSED,   /* passing cells without one */
        REPORT_RANK_FAILED,   /* settled, and not pass or skipped */
        REPORT_RANK_SKIPPED,  /* excluded, pruned or inferred */
        REPORT_RANK_NOT_RUN,  /* never settled */
};
struct report_ranked {
        size_t index;         /* into v->cells */
        enum report_rank rank;
};
/* The view's cells in that order: v->n_cells entries in *ret (caller frees). 0 or -ENOMEM. */
int report_order(const struct report_view *v, struct report_ranked **ret);

/* An SLA objective's figure for a cell: the highest concurrency (closed loop) or rate (open
 * loop) whose level met every constraint, and the lowest above it that did not (0: none
 * measured). -ENODATA when the objective has no constraints or the cell no bench. */
struct report_sla {
        bool by_rate;
        double met;           /* 0: no level met the constraints */
        double failed;
};
int report_cell_sla(const struct report_view *v, const struct report_cell *c, struct report_sla *ret);

/* The same as the best cell's id (owned by the view), or NULL when no cell passed. */
const char *report_best(const struct report_view *v);

/* How many cells the view holds. */
size_t report_cells(const struct report_view *v);
/* Counts cells by verdict (excluded ones as skipped; cells not run are not counted).
 * Returns the number of passing cells. */
size_t report_count_verdicts(const struct report_view *v, size_t counts[static _VERDICT_MAX]);

/* The figure a cell is ranked by, as the renderers word it (report_cell_figure): the bench
 * metric at a level, or the smoke suite's seconds. -ENODATA for a cell that is not passing
 * or has neither. */
struct report_figure {
        bool by_bench;
        double value;
        long level;           /* by_bench: the level's concurrency */
        const char *unit;     /* by_bench: the metrics table's unit for the figure, or NULL */
        const char *metric;   /* by_bench: the objective's metric (not NUL-terminated) */
        size_t metric_len;
};
int report_cell_figure_value(const struct report_view *v, const struct report_cell *c, struct report_figure *ret);

#endif
