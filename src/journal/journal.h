/* journal.h -- the SQLite file that remembers every sweep, cell, attempt, check and sample.
 *
 * One journal per search. `gauntlet run` writes it; report and emit only read it, so a
 * report can be rendered again and an interrupted sweep resumes where it stopped.
 *
 * Durability: WAL mode with synchronous=NORMAL. A commit in WAL mode has been written to
 * the WAL file by write(2) before sqlite3_step returns, so it survives any crash of
 * gauntlet itself (SIGKILL, abort, OOM kill): the kernel holds the pages. What NORMAL gives
 * up is the fsync per commit, so a power loss or kernel crash may roll back the last few
 * commits (never corrupt the file). That is the right trade here: a power loss also ends
 * every server we supervised, and the attempts lost are simply run again. FULL would add
 * an fsync per settled attempt and per recorded process for no gain in that case.
 *
 * Secrets: the journal keeps argv and env as given, tokens and keys included, because
 * they are needed to relaunch a cell. The file is created with mode 0600 (SQLite gives
 * the -wal and -shm files the same mode); reports and printouts mask secrets (secrets.h).
 *
 * Errors: negative errno values. Four are the journal's own:
 *   JOURNAL_ENOTJOURNAL  the file is not a gauntlet journal (another SQLite database, or
 *                        not SQLite at all);
 *   JOURNAL_ENEWER       the journal was written by a newer gauntlet (schema too new);
 *   JOURNAL_ENOTFILE     the path is not a regular file (/dev/null, /dev/full, a FIFO, a
 *                        folder): journal_open and journal_lock refuse it, leaving nothing;
 *   JOURNAL_EMOVED       every write checks first that the path still names the open file:
 *                        a journal deleted or replaced mid-run stops the run at its next write.
 * journal_strerror() turns any of these into words; journal_last_error() has SQLite's own
 * message for the last failure on a handle.
 *
 * A struct journal is one connection; it is not shared between threads. What it holds is
 * read through the functions at the end of this header, row by row as structs with named
 * fields: no other module knows a column. The results layer (results.h, report_load.h)
 * builds a sweep's view from them.
 */
#ifndef GAUNTLET_JOURNAL_H
#define GAUNTLET_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gate/attempt.h"
#include "config/cells.h"
#include "base/util.h"

/* PRAGMA user_version of the schema this code writes. Older journals are upgraded when
 * opened for writing (a read-only one is read as it is); newer ones are refused with
 * JOURNAL_ENEWER. Version 2 added the verdict overload, version 3 the eval, version 4 the
 * search's settings and predictions, version 6 the workload, version 7 the provenance
 * table, version 8 the verdicts table (docs/journal.md). */
#define JOURNAL_SCHEMA_VERSION 9
/* PRAGMA application_id: "GTLT". Marks the file as ours. */
#define JOURNAL_APPLICATION_ID 0x47544c54

#define JOURNAL_ENOTJOURNAL (-EMEDIUMTYPE)
#define JOURNAL_ENEWER (-EPROTONOSUPPORT)
#define JOURNAL_ENOTFILE (-ENOTBLK)
#define JOURNAL_EMOVED (-ESTALE)

/* How long a statement waits for another connection's lock before giving -EBUSY. */
#define JOURNAL_BUSY_TIMEOUT_MS 10000

struct journal;

/* Opens the journal at path, creating it (mode 0600) and its schema if missing. An empty
 * file counts as missing. */
int journal_open(const char *path, struct journal **ret);
/* Opens an existing journal: -ENOENT if there is no file. For report and emit: it never
 * creates a file, and falls back to read-only when the file cannot be written. */
int journal_open_existing(const char *path, struct journal **ret);

/* One run per journal: an exclusive flock(2) on PATH.lock (0600), which holds the holder's
 * pid. Returns the lock's descriptor (the lock lasts until it is closed or the process
 * ends; O_CLOEXEC, so no server inherits it), or -EWOULDBLOCK with the holder's pid in
 * *ret_holder (0 when unreadable) when another run holds it and wait is false; with wait,
 * blocks until it is free. Other errors: negative errno. Readers (report, emit) never
 * take it. A flock, not SQLite's POSIX locks: closing any descriptor of the journal drops
 * those. JOURNAL_ENOTFILE, and no lock file made, when path is not a regular file. */
int journal_lock(const char *path, bool wait, pid_t *ret_holder);
/* The run folder of the journal at path, where `run` keeps each sweep's server logs (a
 * folder per sweep) and its reports: runs/demo.db -> runs/demo; any other name gets ".logs"
 * added (x.sqlite -> x.sqlite.logs, x -> x.logs), and so does a NAME.db whose NAME ends with
 * ".logs" (w.logs.db -> w.logs.db.logs, not w's w.logs): no two journals share one (docs/
 * journal.md "The run folder"). Caller frees; NULL: ENOMEM. */
char *journal_log_root(const char *path);
/* Where journal_log_root put the run folder before it changed for NAME.logs.db (w.logs.db
 * -> w.logs): that folder, for the logs of such a journal written then; NULL for any other
 * name (its folder never moved) or ENOMEM. Caller frees. */
char *journal_log_root_before(const char *path);
void journal_close(struct journal *j);
static inline void journal_closep(struct journal **j) { if (*j) journal_close(*j); }
#define _cleanup_journal_ _cleanup_(journal_closep)

/* Words for an error returned by a journal function ("not a gauntlet journal", ...),
 * strerror() for the others. Never NULL. */
const char *journal_strerror(int r);
/* SQLite's message for the last failure on j, or "" (owned by j, valid until next call). */
const char *journal_last_error(struct journal *j);

/* One row per `gauntlet run`: matrix path and text, engine, model, objective, bind host,
 * fixed port, workdir, startup timeout, axis names, host JSON (may be "{}"; must be valid
 * JSON), gauntlet version, wall-clock start, cwd, and who runs it (pid and start time, so
 * that journal_orphans never hands out the processes of a gauntlet still running), and the
 * matrix's workload (workload.h), which every attempt of the sweep is then recorded under. */
int journal_begin_sweep(struct journal *j, const struct matrix *m, const char *host_json, int64_t *ret_sweep_id);
/* how: "finished", "interrupted" or "failed". */
int journal_end_sweep(struct journal *j, int64_t sweep_id, const char *how);

/* Upserts the cells of this sweep in one transaction: id, argv (placeholders kept), env
 * (kept in order, real values), and per sweep: axes as {axis: value-name}, distance,
 * excluded, position in the order. */
int journal_record_cells(struct journal *j, int64_t sweep_id, const struct matrix *m, const struct cell *cells,
                         size_t n);

/* *ret is true when the cell has a settled attempt in any sweep of this journal, other
 * than a skipped one, measured under the journal's current workload (the latest sweep's):
 * a cell excluded last time runs once the exclusion is lifted, and one measured under an
 * older workload runs again. */
int journal_cell_settled(struct journal *j, const char *cell_id, bool *ret);

/* The latest settled attempt of a cell (what journal_cell_settled found): verdict, cause
 * and evidence (caller frees the strings; NULLs where the journal has none). -ENOENT when
 * there is none. */
int journal_cell_result(struct journal *j, const char *cell_id, enum verdict *ret_verdict, char **ret_cause,
                        char **ret_evidence);

/* Inserts an attempt in state 'running' (a->sweep_id, cell_id, log_path, started_wall,
 * port; the cell must have been recorded) and sets a->id. */
int journal_attempt_begin(struct journal *j, struct attempt *a);
/* Whether the cell's latest settled attempt under sweep_id's workload is skipped/pruned with
 * this evidence: a search that prunes it again for the same reason (a rerun of a finished
 * search) writes no new row. */
int journal_cell_pruned_as(struct journal *j, int64_t sweep_id, const char *cell_id, const char *evidence,
                           bool *ret);
/* journal_attempt_begin for a cell that side-by-side workers of a search choose from one
 * journal: inserts the attempt only while no attempt of the cell is running, the cell has
 * `launches` settled launches of the sweep's workload (what the chooser saw) and, with a
 * budget (> 0), the sweep's launches (journal_sweep_launches) are fewer than it, in one
 * statement, so two workers never launch one cell, nor two the budget's last launch.
 * -EALREADY when another claimed it or the budget is spent. */
int journal_attempt_claim(struct journal *j, struct attempt *a, unsigned launches, size_t budget);
/* Whether an attempt of the cell is running (in flight in some worker). */
int journal_cell_running(struct journal *j, const char *cell_id, bool *ret);
/* Records a process the attempt started: pid, start time in clock ticks since boot (field
 * 22 of /proc/PID/stat) and the attempt's token. Committed at once: it is what the next
 * run uses to clean up after a SIGKILLed gauntlet. pid 0 (start time 0) records the token
 * alone, before the spawn: the cleanup then searches by the token only. */
int journal_attempt_process(struct journal *j, int64_t attempt_id, int pid, uint64_t starttime, const char *token);
/* Settles an attempt in ONE transaction: verdict, cause, evidence, phase durations,
 * ready_after, exit code/signal, peak memory, the search's prediction, every check result, every eval answer (with
 * its question's id, key and prompt), bench levels and raw bench samples; state 'settled'. -ENOENT if no such attempt, -ESTALE if it is no longer
 * 'running' (abandoned or settled already): nothing is written then. */
int journal_attempt_settle(struct journal *j, const struct attempt *a);
/* Marks a 'running' attempt 'abandoned' with a reason: not settled, the cell runs again.
 * An attempt that is not running is left alone (0). */
int journal_attempt_abandon(struct journal *j, int64_t attempt_id, const char *why);

struct journal_orphan {
        int64_t attempt_id;
        int pid;
        uint64_t starttime;
        char *token;
};
/* Processes recorded for attempts still 'running' whose gauntlet is gone (a run that died
 * before settling). Attempts of a gauntlet that is still alive (another process, same
 * pid and start time) are never listed. Running attempts of a dead gauntlet that never
 * recorded a process are marked abandoned here: nothing is left to stop. */
int journal_orphans(struct journal *j, struct journal_orphan **ret, size_t *ret_n);
void journal_orphans_free(struct journal_orphan *o, size_t n);

/* The schema version of the open file: JOURNAL_SCHEMA_VERSION, or lower for an old
 * journal opened read-only (which is read as it is, never upgraded). The reports read
 * the eval only from version 3. */
int journal_schema_version(const struct journal *j);

/* The eval's settings and reference for a sweep (JSON, eval.h's eval_settings_json), or
 * NULL for a sweep without eval. */
int journal_set_sweep_eval(struct journal *j, int64_t sweep_id, const char *eval_json);

/* The search's settings for a sweep of strategy: search (JSON, written by sweep.c, read by
 * report_load.c: budget, the axes' flags, the cell it starts from). */
int journal_set_sweep_search(struct journal *j, int64_t sweep_id, const char *search_json);

/* What a sweep run with --against found against the old run (JSON, written by cli_run.c,
 * read by report_load.c for emit: docs/compare.md "Checking the winner again"). -EROFS
 * for a journal older than schema 9 opened read-only (a run upgrades it first). */
int journal_set_sweep_against(struct journal *j, int64_t sweep_id, const char *against_json);

/* The journal's workload (workload.h): the description and hash stored with its latest
 * sweep that has one; both NULL for a journal that has none yet (new, or written by a
 * gauntlet before schema 6). Caller frees. */
int journal_workload(struct journal *j, char **ret_text, char **ret_hash);
/* An older journal's figures adopt a workload: every attempt and sweep without one gets
 * it, in one transaction; *ret_attempts says how many attempts did. */
int journal_adopt_workload(struct journal *j, const char *text, const char *hash, int64_t *ret_attempts);
/* How many cells have a settled (not skipped) attempt measured under a workload other than
 * hash: the cells --rerun-changed measures again. */
int journal_count_other_workload(struct journal *j, const char *hash, int64_t *ret);

/* What the sweep ran with for one cell environment (provenance.h): env_key names the
 * environment (16 hex digits), json is the object. A second call for the same pair
 * replaces it. */
int journal_record_provenance(struct journal *j, int64_t sweep_id, const char *env_key, const char *json);
/* The provenance objects (JSON text) of sweep_id, in the order they were recorded; none
 * from a journal without the table (before schema 7). */
typedef int (*journal_provenance_fn)(const char *json, void *userdata);
int journal_sweep_provenance(struct journal *j, int64_t sweep_id, journal_provenance_fn fn, void *userdata);
/* The latest sweep before sweep_id with a provenance: 1 and *ret, 0 when none. */
int journal_provenance_before(struct journal *j, int64_t sweep_id, int64_t *ret);

/* How many sweeps the journal holds. */
int journal_count_sweeps(struct journal *j, int64_t *ret);

/* The path the journal was opened with (owned by j). */
const char *journal_path(const struct journal *j);

/* ---- reading ----
 *
 * Rows come to a function of the caller's, one call a row, as a struct with named fields.
 * Their strings are the journal's, valid during the call only (copy what is kept); NULL where
 * the journal has none, and for what the file's schema does not hold yet (an old journal
 * opened read-only is read as it is). A function that returns a negative value stops the
 * read, which returns that value; other failures are negative errnos (journal_last_error). */

/* A sweep (the sweeps table). */
struct journal_sweep_row {
        int64_t id;
        usec_t started_wall;          /* microseconds since the epoch */
        const char *how;              /* "finished", "interrupted", "failed"; NULL: running or killed */
        const char *version;          /* gauntlet's */
        const char *matrix_path, *matrix_text, *engine, *model, *objective;
        const char *bind_host;
        int port;                     /* the matrix's fixed port; 0: free per launch */
        const char *workdir, *cwd;
        usec_t startup_timeout;
        const char *axes;             /* the axis names, a JSON array */
        const char *host_json;        /* the host fingerprint, JSON */
        const char *eval;             /* the eval's settings, JSON (eval_settings_json); schema 3 */
        const char *search;           /* the search's settings, JSON (sweep.c); schema 4 */
        const char *against;          /* run --against: what changed, JSON (cli_run.c); schema 9 */
};
typedef int (*journal_sweep_fn)(const struct journal_sweep_row *row, void *userdata);
/* The latest sweep whose cells are recorded (a sweep is begun, then its cells recorded:
 * side by side, one worker may read while another's sweep is between the two). -ENOENT
 * when the journal holds none. */
int journal_latest_sweep(struct journal *j, journal_sweep_fn fn, void *userdata);
/* The sweep with that id. -ENOENT when the journal has no such sweep. */
int journal_sweep(struct journal *j, int64_t sweep_id, journal_sweep_fn fn, void *userdata);
/* From now on, the attempt reads below see only attempts of sweeps up to sweep_id (a view
 * of the journal as it was when that sweep ended: gauntlet compare --sweeps); 0: all. */
void journal_read_until(struct journal *j, int64_t sweep_id);

/* A cell as one sweep recorded it (sweep_cells with the cell's argv and env). */
struct journal_sweep_cell_row {
        const char *cell_id;
        size_t position;              /* in the sweep's order */
        const char *axes;             /* {axis: value-name}, JSON */
        int distance;
        bool excluded;
        const char *argv, *env;       /* JSON arrays of strings, as journal_record_cells wrote them */
};
typedef int (*journal_sweep_cell_fn)(const struct journal_sweep_cell_row *row, void *userdata);
/* The cells of a sweep, in its order. */
int journal_sweep_cells(struct journal *j, int64_t sweep_id, journal_sweep_cell_fn fn, void *userdata);

/* An attempt (the attempts table). */
struct journal_attempt_row {
        int64_t id, sweep_id;
        enum verdict verdict;         /* as journaled when it settled */
        const char *cause, *evidence, *log_path;
        usec_t started_wall;
        int port;
        usec_t phase[_PHASE_MAX];     /* eval: 0 before schema 3 */
        usec_t spent;                 /* the phases in all (0 when one is missing) */
        usec_t ready_after;
        int exit_code, exit_signal;
        uint64_t peak_gpu_mem_mib;
        const char *bench;            /* JSON array, one object per level */
        const char *eval_set;         /* the eval's question set's hash; schema 3 */
        const char *prediction;       /* a pruned cell's prediction, JSON; schema 4 */
};
typedef int (*journal_attempt_fn)(const struct journal_attempt_row *row, void *userdata);
/* The attempts below read those measured under workload (workload.h) or under none (an
 * older journal's); NULL reads every one, and so does a journal before schema 6. */
/* The attempt a report shows for a cell: its latest settled one, not skipped, or skipped as
 * inferred or pruned. -ENOENT when there is none. */
int journal_cell_shown_attempt(struct journal *j, const char *cell_id, const char *workload, journal_attempt_fn fn,
                               void *userdata);
/* The cell's launches: its settled attempts that are not skipped, oldest first. */
int journal_cell_launches(struct journal *j, const char *cell_id, const char *workload, journal_attempt_fn fn,
                          void *userdata);
/* How many of the cell's attempts were abandoned (a run interrupted, a port taken), and
 * (ret_reason, may be NULL) the latest one's reason, NULL when none or none recorded. */
int journal_cell_abandoned(struct journal *j, const char *cell_id, const char *workload, int64_t *ret,
                           char **ret_reason);
/* How many launches the cells of sweep_id have had under its workload, as a search's budget
 * counts them (docs/search.md): the attempts settled with a verdict other than
 * skipped, the abandoned ones and the running ones, of this run and of the runs before it. */
int journal_sweep_launches(struct journal *j, int64_t sweep_id, int64_t *ret);
/* Whether the cell has a launch measured under a workload other than workload (false for a
 * NULL workload and before schema 6). */
int journal_cell_other_workload(struct journal *j, const char *cell_id, const char *workload, bool *ret);

/* The raw bench samples of an attempt (bench_samples), one JSON object a call, in order. */
int journal_attempt_samples(struct journal *j, int64_t attempt_id, journal_provenance_fn fn, void *userdata);

/* One check's result (check_results). */
struct journal_check_row {
        const char *name;
        enum verdict verdict;
        const char *cause, *evidence;
        const char *output, *reasoning, *finish_reason;
        int http_status;
        usec_t latency, ttft;
        bool streamed;
        const char *detail;           /* a probe's figures; schema 5 */
};
typedef int (*journal_check_fn)(const struct journal_check_row *row, void *userdata);
/* The checks of an attempt, in the order they ran. */
int journal_attempt_checks(struct journal *j, int64_t attempt_id, journal_check_fn fn, void *userdata);

/* One eval answer (eval_results). */
struct journal_eval_row {
        const char *qid, *qkey;
        const char *question;         /* the prompt, or the messages as JSON */
        enum verdict verdict;
        const char *cause, *evidence, *output, *finish_reason;
        int http_status;
        usec_t latency;
        const char *logprobs;         /* JSON array, or NULL */
};
typedef int (*journal_eval_fn)(const struct journal_eval_row *row, void *userdata);
/* The eval answers of an attempt, in the set's order (none before schema 3). */
int journal_attempt_eval(struct journal *j, int64_t attempt_id, journal_eval_fn fn, void *userdata);

/* The final verdict of an attempt as a sweep's view shows it (the verdicts table, schema 8):
 * the eval's gate applied (results.h). */
struct journal_verdict_row {
        int64_t attempt_id;
        enum verdict verdict;
        const char *cause, *evidence;
};
/* Replaces the verdicts of sweep_id with rows, in one transaction. -EROFS for a journal
 * before schema 8 (opened read-only: never upgraded). */
int journal_set_sweep_verdicts(struct journal *j, int64_t sweep_id, const struct journal_verdict_row *rows, size_t n);
typedef int (*journal_verdict_fn)(const struct journal_verdict_row *row, void *userdata);
/* The verdicts journaled for sweep_id, by attempt id; none before schema 8. */
int journal_sweep_verdicts(struct journal *j, int64_t sweep_id, journal_verdict_fn fn, void *userdata);

#endif
