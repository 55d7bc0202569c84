/* journal.c -- SQLite: sweeps, cells, attempts, processes, check results, bench samples. */
#include "journal/journal.h"

#include <ctype.h>
#include <inttypes.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/procs.h"
#include "config/workload.h"

struct journal {
        sqlite3 *db;
        char *path;
        char *error;       /* SQLite's message for the last failure */
        bool readonly;
        int64_t version;      /* the schema version of the file as open */
        /* the -wal and -shm files beside the journal as this connection made them (device,
         * inode; 0: not seen yet): the ones removed after the journal moved */
        dev_t side_dev[2];
        ino_t side_ino[2];
        int64_t until;        /* journal_read_until: attempts of sweeps up to this one; 0: all */
};

static inline void journal_finalizep(sqlite3_stmt **s) { sqlite3_finalize(*s); }
#define _cleanup_stmt_ _cleanup_(journal_finalizep)

static const char *const side_suffix[2] = {"-wal", "-shm"};

static int journal_check_path(const char *path);

/* Notes the -wal and -shm files beside the journal while it is still the file this
 * connection has open: they are its own. */
static void note_side_files(struct journal *j) {
        for (size_t i = 0; i < 2; i++) {
                if (j->side_ino[i])
                        continue;
                _cleanup_free_ char *p = strdup_printf("%s%s", j->path, side_suffix[i]);
                struct stat st;
                if (p && lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                        j->side_dev[i] = st.st_dev;
                        j->side_ino[i] = st.st_ino;
                }
        }
}

/* After a journal moved (deleted or replaced) under this connection: the -wal and -shm it
 * made are removed, but only those (same inode), so that no later open of whatever file now
 * has the journal's name replays this journal's WAL into it. */
static void remove_side_files(struct journal *j) {
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *p = j->side_ino[i] ? strdup_printf("%s%s", j->path, side_suffix[i]) : NULL;
                struct stat st;
                if (p && lstat(p, &st) == 0 && st.st_dev == j->side_dev[i] && st.st_ino == j->side_ino[i])
                        (void)unlink(p);
        }
}

static int errno_from_sqlite(sqlite3 *db, int rc) {
        int e;
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_NOTADB:
                return JOURNAL_ENOTJOURNAL;
        case SQLITE_CORRUPT:
                return -EUCLEAN;
        case SQLITE_CONSTRAINT:
        case SQLITE_MISMATCH:
        case SQLITE_RANGE:
                return -EINVAL;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_TOOBIG:
                return -E2BIG;
        case SQLITE_CANTOPEN:
        case SQLITE_IOERR:
                e = db ? sqlite3_system_errno(db) : 0;
                return e > 0 ? -e : -EIO;
        default:
                return -EIO;
        }
}

/* Remembers SQLite's message and turns rc into a negative errno. */
static int journal_fail(struct journal *j, int rc) {
        free(j->error);
        j->error = strdup(sqlite3_errmsg(j->db));
        return errno_from_sqlite(j->db, rc);
}

static int exec(struct journal *j, const char *sql) {
        int rc = sqlite3_exec(j->db, sql, NULL, NULL, NULL);
        return rc == SQLITE_OK ? 0 : journal_fail(j, rc);
}

static int journal_prepare(struct journal *j, const char *sql, sqlite3_stmt **ret) {
        int rc = sqlite3_prepare_v2(j->db, sql, -1, ret, NULL);
        return rc == SQLITE_OK ? 0 : journal_fail(j, rc);
}

/* A journal deleted (or replaced) under a run: SQLite would go on writing into a file
 * nobody can open again, and every result from then on would be lost. Checked before each
 * write, by the path's inode against the open file's (SQLITE_FCNTL_HAS_MOVED). */
static int check_not_moved(struct journal *j) {
        int moved = 0;
        if (sqlite3_file_control(j->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || !moved) {
                note_side_files(j);
                return 0;
        }
        free(j->error);
        j->error = strdup("the journal file was deleted or replaced while in use");
        return JOURNAL_EMOVED;
}

/* Steps a statement that returns no row. */
static int step_done(struct journal *j, sqlite3_stmt *s) {
        int r = check_not_moved(j);
        if (r < 0)
                return r;
        int rc = sqlite3_step(s);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : journal_fail(j, rc);
}

/* BEGIN IMMEDIATE takes the write lock at once, so a transaction never fails halfway
 * for a lock another writer holds (busy_timeout waits for it up front). */
static int begin(struct journal *j) {
        int r = check_not_moved(j);
        return r < 0 ? r : exec(j, "BEGIN IMMEDIATE");
}

static int commit_or_rollback(struct journal *j, int r) {
        if (r >= 0 && (r = exec(j, "COMMIT")) >= 0)
                return r;
        sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

static int bind_text(sqlite3_stmt *s, int i, const char *t) {
        return t ? sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i);
}

/* Binds every argument in order; a NULL string binds NULL. */
static int journal_bind(struct journal *j, sqlite3_stmt *s, const char *types, ...) {
        va_list ap;
        int rc = SQLITE_OK;
        va_start(ap, types);
        for (int i = 0; types[i] && rc == SQLITE_OK; i++) {
                switch (types[i]) {
                case 's':
                        rc = bind_text(s, i + 1, va_arg(ap, const char *));
                        break;
                case 'i':
                        rc = sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
                        break;
                default:
                        rc = SQLITE_MISUSE;
                }
        }
        va_end(ap);
        return rc == SQLITE_OK ? 0 : journal_fail(j, rc);
}

/* A copy of a text column, NULL for SQL NULL. -ENOMEM only when a copy fails. */
static int journal_col_strdup(sqlite3_stmt *s, int i, char **ret) {
        const unsigned char *t = sqlite3_column_text(s, i);
        char *c = NULL;
        if (t && !(c = strdup((const char *)t)))
                return -ENOMEM;
        *ret = c;
        return 0;
}

static const char *journal_col_str(sqlite3_stmt *s, int i) {
        const unsigned char *t = sqlite3_column_text(s, i);
        return t ? (const char *)t : NULL;
}

/* The schema of a new journal (version JOURNAL_SCHEMA_VERSION). */
static const char schema[] =
        "CREATE TABLE sweeps (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  started_wall INTEGER NOT NULL,          -- microseconds since the epoch\n"
        "  ended_wall INTEGER,\n"
        "  how TEXT,                               -- finished | interrupted | failed; NULL: running or killed\n"
        "  version TEXT NOT NULL,                  -- gauntlet's\n"
        "  matrix_path TEXT, matrix_text TEXT,\n"
        "  engine TEXT NOT NULL, model TEXT, objective TEXT,\n"
        "  bind_host TEXT, port INTEGER NOT NULL DEFAULT 0, workdir TEXT,\n"
        "  startup_timeout_us INTEGER NOT NULL DEFAULT 0,\n"
        "  axes TEXT NOT NULL DEFAULT '[]',        -- JSON array of axis names, in order\n"
        "  host_json TEXT NOT NULL DEFAULT '{}',\n"
        "  cwd TEXT,\n"
        "  owner_pid INTEGER, owner_starttime INTEGER  -- the gauntlet running it\n"
        ");\n"
        "CREATE TABLE cells (\n"
        "  id TEXT PRIMARY KEY,                    -- 16 hex digits (matrix.h)\n"
        "  argv TEXT NOT NULL,                     -- JSON array, {host}/{port} kept\n"
        "  env TEXT NOT NULL,                      -- JSON array of \"KEY=VALUE\", real values\n"
        "  first_sweep INTEGER NOT NULL REFERENCES sweeps(id)\n"
        ");\n"
        "CREATE TABLE sweep_cells (\n"
        "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),\n"
        "  cell_id TEXT NOT NULL REFERENCES cells(id),\n"
        "  position INTEGER NOT NULL,\n"
        "  axes TEXT NOT NULL,                     -- JSON object {axis: value name}\n"
        "  distance INTEGER NOT NULL,\n"
        "  excluded INTEGER NOT NULL,\n"
        "  PRIMARY KEY (sweep_id, cell_id)\n"
        ");\n"
        "CREATE TABLE attempts (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),\n"
        "  cell_id TEXT NOT NULL REFERENCES cells(id),\n"
        "  state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'settled', 'abandoned')),\n"
        "  started_wall INTEGER NOT NULL, ended_wall INTEGER,\n"
        "  port INTEGER, log_path TEXT,\n"
        "  verdict TEXT CHECK (verdict IN ('pass', 'garbage', 'wrong', 'crash', 'timeout', 'skipped', 'error',\n"
        "                                        'overload')),\n"
        "  cause TEXT, evidence TEXT, abandon_reason TEXT,\n"
        "  launch_us INTEGER, ready_us INTEGER, checks_us INTEGER, bench_us INTEGER, stop_us INTEGER,\n"
        "  ready_after_us INTEGER, exit_code INTEGER, exit_signal INTEGER, peak_gpu_mem_mib INTEGER,\n"
        "  bench TEXT                              -- JSON array, one object per concurrency\n"
        ");\n"
        "CREATE INDEX attempts_by_cell ON attempts (cell_id, state, id);\n"
        "CREATE TABLE processes (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  attempt_id INTEGER NOT NULL REFERENCES attempts(id),\n"
        "  pid INTEGER NOT NULL, starttime INTEGER NOT NULL,  -- clock ticks since boot\n"
        "  token TEXT\n"
        ");\n"
        "CREATE INDEX processes_by_attempt ON processes (attempt_id);\n"
        "CREATE TABLE check_results (\n"
        "  attempt_id INTEGER NOT NULL REFERENCES attempts(id),\n"
        "  seq INTEGER NOT NULL,\n"
        "  name TEXT NOT NULL, verdict TEXT NOT NULL, cause TEXT, evidence TEXT,\n"
        "  output TEXT, reasoning TEXT, finish_reason TEXT, http_status INTEGER,\n"
        "  latency_us INTEGER, ttft_us INTEGER, streamed INTEGER NOT NULL,\n"
        "  PRIMARY KEY (attempt_id, seq)\n"
        ");\n"
        "CREATE TABLE bench_samples (\n"
        "  attempt_id INTEGER NOT NULL REFERENCES attempts(id),\n"
        "  seq INTEGER NOT NULL,\n"
        "  sample TEXT NOT NULL,                   -- JSON object, one request\n"
        "  PRIMARY KEY (attempt_id, seq)\n"
        ");\n";

/* Version 2 adds the verdict `overload`. SQLite cannot change a CHECK constraint in place:
 * the attempts table is made anew and the rows copied (its documented way for a change a
 * plain ALTER TABLE cannot make). Foreign keys are still off here (setup turns them on
 * after the upgrade), so dropping the old table leaves the references to it alone. */
static const char upgrade_v2[] =
        "CREATE TABLE attempts_v2 (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),\n"
        "  cell_id TEXT NOT NULL REFERENCES cells(id),\n"
        "  state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'settled', 'abandoned')),\n"
        "  started_wall INTEGER NOT NULL, ended_wall INTEGER,\n"
        "  port INTEGER, log_path TEXT,\n"
        "  verdict TEXT CHECK (verdict IN ('pass', 'garbage', 'wrong', 'crash', 'timeout', 'skipped', 'error',\n"
        "                                        'overload')),\n"
        "  cause TEXT, evidence TEXT, abandon_reason TEXT,\n"
        "  launch_us INTEGER, ready_us INTEGER, checks_us INTEGER, bench_us INTEGER, stop_us INTEGER,\n"
        "  ready_after_us INTEGER, exit_code INTEGER, exit_signal INTEGER, peak_gpu_mem_mib INTEGER,\n"
        "  bench TEXT\n"
        ");\n"
        "INSERT INTO attempts_v2 SELECT * FROM attempts;\n"
        "DROP TABLE attempts;\n"
        "ALTER TABLE attempts_v2 RENAME TO attempts;\n"
        "CREATE INDEX attempts_by_cell ON attempts (cell_id, state, id);\n"
        "PRAGMA user_version=2;\n";

/* Version 3 adds the eval (docs/eval.md): its settings per sweep, the phase and the
 * question set per attempt, and every answer. A new journal is `schema` plus this step,
 * so a fresh file and an upgraded one have the same tables. */
static const char schema_v3[] =
        "ALTER TABLE sweeps ADD COLUMN eval TEXT;         -- JSON: the eval's settings and reference; NULL: none\n"
        "ALTER TABLE attempts ADD COLUMN eval_us INTEGER;\n"
        "ALTER TABLE attempts ADD COLUMN eval_set TEXT;   -- hash of the question set asked (eval.h)\n"
        "CREATE TABLE eval_results (\n"
        "  attempt_id INTEGER NOT NULL REFERENCES attempts(id),\n"
        "  seq INTEGER NOT NULL,                    -- the question's place in the set\n"
        "  qid TEXT NOT NULL, qkey TEXT NOT NULL,   -- its id; FNV-1a of what is asked and expected\n"
        "  question TEXT,                           -- the prompt, or the messages as JSON\n"
        "  verdict TEXT NOT NULL, cause TEXT, evidence TEXT,\n"
        "  output TEXT, finish_reason TEXT, http_status INTEGER, latency_us INTEGER,\n"
        "  logprobs TEXT,                           -- JSON array of the chosen tokens' logprobs, or NULL\n"
        "  PRIMARY KEY (attempt_id, seq)\n"
        ");\n";

/* Version 4 adds strategy: search (docs/search.md): its settings per sweep, and the
 * prediction that kept a pruned cell from launching. Applied after schema_v3, for a new
 * journal too. */
static const char schema_v4[] =
        "ALTER TABLE sweeps ADD COLUMN search TEXT;       -- JSON: the search's settings; NULL: another strategy\n"
        "ALTER TABLE attempts ADD COLUMN prediction TEXT; -- JSON: the search's prediction for a pruned cell\n";

/* Version 5 adds what a probe measured to its check result (docs/checks.md "Probes").
 * Applied after schema_v4, for a new journal too; an older file reads NULL. */
static const char schema_v5[] =
        "ALTER TABLE check_results ADD COLUMN detail TEXT; -- a probe's figures, one line; NULL: none\n";

/* Version 6 adds the workload (workload.h, docs/journal.md "One workload per journal"):
 * its description and hash per sweep, and the hash each attempt was measured under. An
 * older journal has neither: the next run adopts its own workload for it, with a note
 * (journal_adopt_workload). Applied after schema_v5, for a new journal too. */
static const char schema_v6[] =
        "ALTER TABLE sweeps ADD COLUMN workload TEXT;      -- JSON: workload_describe's text\n"
        "ALTER TABLE sweeps ADD COLUMN workload_hash TEXT; -- its FNV-1a, 16 hex digits\n"
        "ALTER TABLE attempts ADD COLUMN workload TEXT;    -- the hash it was measured under\n";

/* Version 7 adds the provenance (provenance.h, docs/provenance.md): what each sweep ran
 * with, one row per distinct cell environment. A table of its own, nothing else touched;
 * an older file has no such table, and the reports read none from it. */
static const char schema_v7[] =
        "CREATE TABLE IF NOT EXISTS provenance (\n"
        "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),\n"
        "  env_key TEXT NOT NULL,                   -- FNV-1a of the cell's env, 16 hex digits\n"
        "  json TEXT NOT NULL,                      -- provenance.h's object\n"
        "  PRIMARY KEY (sweep_id, env_key)\n"
        ");\n";

/* Version 8 adds the verdicts (docs/journal.md "The verdicts"): the final verdict of each
 * attempt a sweep's view shows, the eval's gate applied, written by the run as its cells
 * settle. A table of its own; an older file has none, and the reports decide on load. */
static const char schema_v8[] =
        "CREATE TABLE IF NOT EXISTS verdicts (\n"
        "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),\n"
        "  attempt_id INTEGER NOT NULL REFERENCES attempts(id),\n"
        "  verdict TEXT NOT NULL, cause TEXT, evidence TEXT,\n"
        "  PRIMARY KEY (sweep_id, attempt_id)\n"
        ");\n";

/* Version 9 adds `run --against` (docs/compare.md "Checking the winner again"): what the
 * sweep found against the old run it checked, JSON, written once it is decided. NULL: a
 * sweep run without --against. */
static const char schema_v9[] = "ALTER TABLE sweeps ADD COLUMN against TEXT;\n";

/* The steps after version 2, each in a transaction of its own with its user_version. */
static const char *const upgrade_steps[] = {
        [3] = schema_v3, [4] = schema_v4, [5] = schema_v5, [6] = schema_v6, [7] = schema_v7, [8] = schema_v8,
        [9] = schema_v9,
};

static int upgrade(struct journal *j, int64_t from) {
        int r = 0;
        if (from < 2) {
                if ((r = begin(j)) < 0)
                        return r;
                if ((r = commit_or_rollback(j, exec(j, upgrade_v2))) < 0)
                        return r;
        }
        for (int64_t v = from < 3 ? 3 : from + 1; v <= JOURNAL_SCHEMA_VERSION; v++) {
                if ((r = begin(j)) < 0)
                        return r;
                r = exec(j, upgrade_steps[v]);
                if (r >= 0) {
                        char pragma[48];
                        snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%" PRId64, v);
                        r = exec(j, pragma);
                }
                if ((r = commit_or_rollback(j, r)) < 0)
                        return r;
        }
        return r;
}

/* Steps s, prepared and bound, for the one row it must give (a count, a pragma): its first
 * column in *ret; no row is -EIO. */
static int step_int(struct journal *j, sqlite3_stmt *s, int64_t *ret) {
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return rc == SQLITE_DONE ? -EIO : journal_fail(j, rc);
        *ret = sqlite3_column_int64(s, 0);
        return 0;
}

static int pragma_int(struct journal *j, const char *sql, int64_t *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r = journal_prepare(j, sql, &s);
        return r < 0 ? r : step_int(j, s, ret);
}

/* Recognises the file, creates the schema in a fresh one (when allowed), refuses other
 * databases and newer schemas, and sets the connection up. */
static int setup(struct journal *j, bool create) {
        int64_t app = 0, version = 0, objects = 0;
        int r;

        sqlite3_busy_timeout(j->db, JOURNAL_BUSY_TIMEOUT_MS);
        sqlite3_extended_result_codes(j->db, 1);
        if ((r = pragma_int(j, "PRAGMA application_id", &app)) < 0 ||
            (r = pragma_int(j, "PRAGMA user_version", &version)) < 0 ||
            (r = pragma_int(j, "SELECT count(*) FROM sqlite_master", &objects)) < 0)
                return r;
        if (app == 0 && version == 0 && objects == 0) {
                if (!create || j->readonly)
                        return JOURNAL_ENOTJOURNAL;
                /* WAL first: the mode is stored in the file and holds for every later open.
                 * NORMAL from the start: no sync for each step of a schema that a crash
                 * would only leave to be made again. */
                if ((r = exec(j, "PRAGMA synchronous=NORMAL")) < 0 || (r = exec(j, "PRAGMA journal_mode=WAL")) < 0 ||
                    (r = begin(j)) < 0)
                        return r;
                r = exec(j, schema);
                for (int v = 3; r >= 0 && v <= JOURNAL_SCHEMA_VERSION; v++)
                        r = exec(j, upgrade_steps[v]);
                if (r >= 0) {
                        _cleanup_free_ char *pragmas =
                                strdup_printf("PRAGMA application_id=%d; PRAGMA user_version=%d", JOURNAL_APPLICATION_ID,
                                              JOURNAL_SCHEMA_VERSION);
                        r = pragmas ? exec(j, pragmas) : -ENOMEM;
                }
                if ((r = commit_or_rollback(j, r)) < 0)
                        return r;
                version = JOURNAL_SCHEMA_VERSION;
                app = JOURNAL_APPLICATION_ID;
        }
        if (app != JOURNAL_APPLICATION_ID || version < 1)
                return JOURNAL_ENOTJOURNAL;
        if (version > JOURNAL_SCHEMA_VERSION)
                return JOURNAL_ENEWER;
        /* Upgrades from older schemas, one step per version, each in a transaction, by the
         * run that will write it (journal_open) only: a report or an emit reads an older
         * journal as it is (report_load reads every version), so that reading never changes
         * a file an older gauntlet may still be writing. */
        bool upgrade_now = create && !j->readonly && version < JOURNAL_SCHEMA_VERSION;
        if (upgrade_now && (r = upgrade(j, version)) < 0)
                return r;
        j->version = upgrade_now ? JOURNAL_SCHEMA_VERSION : version;
        if (!j->readonly && ((r = exec(j, "PRAGMA journal_mode=WAL")) < 0 || (r = exec(j, "PRAGMA synchronous=NORMAL")) < 0))
                return r;
        return exec(j, "PRAGMA foreign_keys=ON");
}

/* file:PATH?immutable=1, with the path percent-encoded where a URI needs it. */
static char *journal_immutable_uri(const char *path) {
        struct buf b;
        buf_init(&b, 0);
        int r = buf_puts(&b, "file:");
        for (const unsigned char *p = (const unsigned char *)path; *p && r >= 0; p++)
                r = isalnum(*p) || strchr("/-._~", *p) ? buf_append(&b, (const char *)p, 1) : buf_printf(&b, "%%%02X", *p);
        if (r >= 0)
                r = buf_puts(&b, "?immutable=1");
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

static int open_db(const char *path, int flags, bool create, struct journal **ret) {
        struct journal *j = calloc(1, sizeof(*j));
        if (!j || !(j->path = strdup(path))) {
                free(j);
                return -ENOMEM;
        }
        j->readonly = !(flags & SQLITE_OPEN_READWRITE);
        /* SQLite opens its files with O_CLOEXEC: no server inherits the journal. */
        int rc = sqlite3_open_v2(path, &j->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
        int r = rc == SQLITE_OK ? setup(j, create) : errno_from_sqlite(j->db, rc);
        if (r < 0) {
                journal_close(j);
                return r;
        }
        *ret = j;
        return 0;
}

int journal_open(const char *path, struct journal **ret) {
        /* Created here rather than by SQLite so that it is 0600 from the first byte: the
         * journal holds the environment, keys included. Closed before SQLite opens it:
         * closing any descriptor of a file drops every POSIX lock this process holds on
         * it, SQLite's included. Without its shared lock, another process's connection
         * (a side-by-side worker, a `gauntlet report`) believes it is the last one when
         * it closes, checkpoints and resets the WAL under this one, and the journal reads
         * as damaged or is damaged. */
        int r = journal_check_path(path);
        if (r < 0)
                return r;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
        if (fd < 0)
                return -errno;
        struct stat st;
        r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : JOURNAL_ENOTFILE;
        close(fd);
        if (r < 0)
                return r;
        return open_db(path, SQLITE_OPEN_READWRITE, true, ret);
}

/* Whether a -wal or a -shm lies beside path. */
static bool journal_side_files(const char *path) {
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *p = strdup_printf("%s%s", path, side_suffix[i]);
                struct stat st;
                if (!p || lstat(p, &st) == 0 || errno != ENOENT)
                        return true; /* or cannot tell: as if there were */
        }
        return false;
}

/* Whether a run holds the journal's lock (journal_lock), asked without making the lock
 * file or following a link there; true when it cannot tell. */
static bool journal_locked(const char *path) {
        _cleanup_free_ char *lp = strdup_printf("%s.lock", path);
        if (!lp)
                return true;
        _cleanup_close_ int fd = open(lp, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno != ENOENT;
        if (flock(fd, LOCK_SH | LOCK_NB) < 0)
                return true;
        (void)flock(fd, LOCK_UN);
        return false;
}

int journal_open_existing(const char *path, struct journal **ret) {
        struct stat st;
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size == 0)
                return JOURNAL_ENOTJOURNAL;
        /* Read-only, always: a report never writes the journal (nor checkpoints a WAL into
         * it), whoever else has it open. With no -wal and no -shm beside it and no run
         * holding its lock, everything is in the file and nobody writes it: read as
         * immutable, so that SQLite makes no -wal or -shm beside it either (a read-only
         * connection otherwise creates both, and leaves them). */
        int r;
        if (!journal_side_files(path) && !journal_locked(path))
                r = -ENOENT; /* straight to the immutable open below */
        else
                r = open_db(path, SQLITE_OPEN_READONLY, false, ret);
        /* On a read-only filesystem, or in a folder this process cannot write to, SQLite
         * cannot make the WAL's -shm file even to read, and says "cannot open". Nobody can
         * write such a journal either, so it is read as immutable (no locks, no -shm); so
         * is one nobody has open (above). */
        if (r == -EACCES || r == -EROFS || r == -EPERM || r == -ENOENT) {
                _cleanup_free_ char *uri = journal_immutable_uri(path);
                r = uri ? open_db(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, false, ret) : -ENOMEM;
                if (r == 0) {
                        free((*ret)->path);
                        if (!((*ret)->path = strdup(path))) {
                                journal_close(*ret);
                                return -ENOMEM;
                        }
                }
        }
        return r;
}

/* 0 when path is a regular file or does not exist yet; JOURNAL_ENOTFILE for anything
 * else (checked before a lock file is made beside it); another negative errno when it
 * cannot be looked at. */
static int journal_check_path(const char *path) {
        struct stat st;
        if (stat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISREG(st.st_mode) ? 0 : JOURNAL_ENOTFILE;
}

int journal_lock(const char *path, bool wait, pid_t *ret_holder) {
        /* nothing is made beside a device, a FIFO or a folder */
        int r = journal_check_path(path);
        if (r < 0)
                return r;
        _cleanup_free_ char *lp = strdup_printf("%s.lock", path);
        if (!lp)
                return -ENOMEM;
        /* a symbolic link put where the lock goes is refused (-ELOOP), not followed: the
         * lock is written (the pid), as whoever runs gauntlet */
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        struct stat lst;
        if (fstat(fd, &lst) < 0 || !S_ISREG(lst.st_mode)) {
                close(fd);
                return JOURNAL_ENOTFILE;
        }
        int rc;
        do
                rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
        while (rc < 0 && errno == EINTR);
        if (rc < 0) {
                int e = errno;
                if (e == EWOULDBLOCK && ret_holder) {
                        char b[32] = "";
                        ssize_t k = pread(fd, b, sizeof(b) - 1, 0);
                        *ret_holder = k > 0 ? (pid_t)atoi(b) : 0;
                }
                close(fd);
                return -e;
        }
        /* The pid is for the message of a run that finds the lock taken; the lock itself
         * is the flock. A disk too full to take it must not stop the run here: the
         * journal's own writes say so, with the journal's name. */
        char b[32];
        int n = snprintf(b, sizeof(b), "%d\n", (int)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, b, (size_t)n, 0) != n)
                (void)ftruncate(fd, 0); /* holder unknown, rather than a wrong pid */
        return fd;
}

void journal_close(struct journal *j) {
        if (!j)
                return;
        int moved = 0;
        if (!j->readonly && j->db &&
            sqlite3_file_control(j->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved) {
                /* SQLite does not checkpoint a moved file on close, and leaves its WAL beside
                 * the name: what it holds goes into the file this connection has open (where
                 * the journal went, or nowhere), then the WAL goes */
                (void)sqlite3_exec(j->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
        }
        sqlite3_close_v2(j->db);
        if (moved)
                remove_side_files(j);
        free(j->path);
        free(j->error);
        free(j);
}

const char *journal_strerror(int r) {
        if (r == JOURNAL_ENOTJOURNAL)
                return "not a gauntlet journal";
        if (r == JOURNAL_ENEWER)
                return "written by a newer gauntlet (journal schema too new)";
        if (r == -EUCLEAN)
                return "the journal is damaged";
        if (r == JOURNAL_ENOTFILE)
                return "not a regular file (a device, a FIFO or a folder cannot be a journal)";
        if (r == JOURNAL_EMOVED)
                return "the journal file was deleted or replaced while in use; what was settled before is in "
                       "the file as it was";
        return strerror(r < 0 ? -r : r);
}

const char *journal_path(const struct journal *j) {
        return j->path;
}

const char *journal_last_error(struct journal *j) {
        return j && j->error ? j->error : "";
}

/* ---- writing ---- */

static int json_strv(char *const *v, char **ret) {
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; v && v[i]; i++) {
                json_t *s = json_string(v[i]);
                if (!s)
                        return -EILSEQ; /* not UTF-8: libyaml never gives us that */
                if (json_array_append_new(a, s) < 0)
                        return -ENOMEM;
        }
        char *t = json_dumps(a, JSON_COMPACT);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

static int self_starttime(uint64_t *ret) {
        return procs_starttime(getpid(), ret);
}

int journal_begin_sweep(struct journal *j, const struct matrix *m, const char *host_json, int64_t *ret_sweep_id) {
        _cleanup_free_ char *axes = NULL, *cwd = getcwd(NULL, 0);
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_json_ json_t *names = json_array();
        _cleanup_json_ json_t *host = NULL;
        uint64_t start = 0;
        int r;

        if (!names)
                return -ENOMEM;
        if (!host_json)
                host_json = "{}";
        host = json_loads(host_json, 0, NULL);
        if (!host || !json_is_object(host))
                return -EINVAL;
        for (size_t i = 0; i < m->n_axes; i++)
                if (json_array_append_new(names, json_string(m->axes[i].name)) < 0)
                        return -ENOMEM;
        if (!(axes = json_dumps(names, JSON_COMPACT)))
                return -ENOMEM;
        (void)self_starttime(&start);
        _cleanup_free_ char *workload = NULL;
        char hash[17];
        if ((r = workload_describe(m, NULL, &workload, hash)) < 0)
                return r;
        if ((r = journal_prepare(j,
                         "INSERT INTO sweeps (started_wall, version, matrix_path, matrix_text, engine, model, "
                         "objective, bind_host, port, workdir, startup_timeout_us, axes, host_json, cwd, owner_pid, "
                         "owner_starttime, workload, workload_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         &s)) < 0)
                return r;
        if ((r = journal_bind(j, s, "isssssssisisssiiss", (int64_t)now_wall_usec(), GAUNTLET_VERSION, m->path, m->text,
                          m->engine ? m->engine : "generic", m->model, m->objective, m->host, (int64_t)m->port,
                          m->workdir, (int64_t)m->startup_timeout, axes, host_json, cwd, (int64_t)getpid(),
                          (int64_t)start, workload, hash)) < 0 ||
            (r = step_done(j, s)) < 0)
                return r;
        *ret_sweep_id = sqlite3_last_insert_rowid(j->db);
        return 0;
}

int journal_end_sweep(struct journal *j, int64_t sweep_id, const char *how) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "UPDATE sweeps SET how = ?, ended_wall = ? WHERE id = ?", &s)) < 0 ||
            (r = journal_bind(j, s, "sii", how, (int64_t)now_wall_usec(), sweep_id)) < 0 || (r = step_done(j, s)) < 0)
                return r;
        return sqlite3_changes(j->db) > 0 ? 0 : -ENOENT;
}

static int record_cell(struct journal *j, sqlite3_stmt *ins_cell, sqlite3_stmt *ins_sc, int64_t sweep_id,
                       const struct matrix *m, const struct cell *c, size_t position) {
        _cleanup_free_ char *argv = NULL, *env = NULL, *axes = NULL;
        _cleanup_json_ json_t *o = json_object();
        int r;
        if (!o)
                return -ENOMEM;
        for (size_t i = 0; c->choice && i < m->n_axes; i++) {
                if (c->choice[i] >= m->axes[i].n_values)
                        return -EINVAL;
                json_t *v = json_string(m->axes[i].values[c->choice[i]].name);
                if (!v || json_object_set_new(o, m->axes[i].name, v) < 0)
                        return -ENOMEM;
        }
        if ((r = json_strv(c->argv, &argv)) < 0 || (r = json_strv(c->env, &env)) < 0)
                return r;
        if (!(axes = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)))
                return -ENOMEM;
        sqlite3_reset(ins_cell);
        sqlite3_reset(ins_sc);
        if ((r = journal_bind(j, ins_cell, "sssi", c->id, argv, env, sweep_id)) < 0 || (r = step_done(j, ins_cell)) < 0 ||
            (r = journal_bind(j, ins_sc, "isisii", sweep_id, c->id, (int64_t)position, axes, (int64_t)c->distance,
                          (int64_t)c->excluded)) < 0)
                return r;
        return step_done(j, ins_sc);
}

int journal_record_cells(struct journal *j, int64_t sweep_id, const struct matrix *m, const struct cell *cells,
                         size_t n) {
        _cleanup_stmt_ sqlite3_stmt *ins_cell = NULL, *ins_sc = NULL;
        int r;
        /* The id is a hash of argv and env, so an existing row already says the same. */
        if ((r = journal_prepare(j, "INSERT INTO cells (id, argv, env, first_sweep) VALUES (?,?,?,?) ON CONFLICT(id) DO NOTHING",
                         &ins_cell)) < 0 ||
            (r = journal_prepare(j,
                         "INSERT INTO sweep_cells (sweep_id, cell_id, position, axes, distance, excluded) "
                         "VALUES (?,?,?,?,?,?) ON CONFLICT(sweep_id, cell_id) DO UPDATE SET position = excluded.position, "
                         "axes = excluded.axes, distance = excluded.distance, excluded = excluded.excluded",
                         &ins_sc)) < 0)
                return r;
        if ((r = begin(j)) < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = record_cell(j, ins_cell, ins_sc, sweep_id, m, &cells[i], i);
        return commit_or_rollback(j, r);
}

/* An attempt measured under another workload than the journal's current one (the latest
 * sweep's) does not count: its cell runs again (--rerun-changed). NULL: an attempt of an
 * older journal that no run adopted yet. */
static const char latest_settled_sql[] =
        "SELECT id FROM attempts WHERE cell_id = ? AND state = 'settled' AND verdict != 'skipped' "
        "AND (workload IS NULL OR workload IS (SELECT workload_hash FROM sweeps WHERE workload_hash IS NOT NULL "
        "ORDER BY id DESC LIMIT 1)) ORDER BY id DESC LIMIT 1";

int journal_cell_settled(struct journal *j, const char *cell_id, bool *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, latest_settled_sql, &s)) < 0 || (r = journal_bind(j, s, "s", cell_id)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        *ret = rc == SQLITE_ROW;
        return 0;
}

int journal_cell_result(struct journal *j, const char *cell_id, enum verdict *ret_verdict, char **ret_cause,
                        char **ret_evidence) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *cause = NULL, *evidence = NULL;
        int r;
        if ((r = journal_prepare(j,
                         "SELECT verdict, cause, evidence FROM attempts WHERE cell_id = ? AND state = 'settled' "
                         "AND verdict != 'skipped' ORDER BY id DESC LIMIT 1",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "s", cell_id)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        if ((r = journal_col_strdup(s, 1, &cause)) < 0 || (r = journal_col_strdup(s, 2, &evidence)) < 0)
                return r;
        *ret_verdict = verdict_from_string(journal_col_str(s, 0));
        *ret_cause = TAKE_PTR(cause);
        *ret_evidence = TAKE_PTR(evidence);
        return 0;
}

int journal_attempt_begin(struct journal *j, struct attempt *a) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j,
                         "INSERT INTO attempts (sweep_id, cell_id, state, started_wall, port, log_path, workload) "
                         "VALUES (?,?,'running',?,?,?,(SELECT workload_hash FROM sweeps WHERE id = ?1))",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "isiis", a->sweep_id, a->cell_id, (int64_t)a->started_wall, (int64_t)a->port,
                          a->log_path)) < 0 ||
            (r = step_done(j, s)) < 0)
                return r;
        a->id = sqlite3_last_insert_rowid(j->db);
        return 0;
}

/* An attempt's condition of being measured under sweep ?1's workload (or before the
 * journal had workloads), for a WHERE clause: "" before schema 6. */
static const char *sweep_workload_sql(const struct journal *j) {
        return j->version >= 6 ? " AND (workload IS NULL OR workload IS (SELECT workload_hash FROM sweeps WHERE id = ?1))"
                               : "";
}

/* The attempts a search's budget counts (journal_sweep_launches), of the cells of sweep ?1
 * under its workload: SQL for a count(*). */
static char *sweep_launches_sql(const struct journal *j) {
        return strdup_printf("SELECT count(*) FROM attempts WHERE cell_id IN (SELECT cell_id FROM sweep_cells WHERE "
                             "sweep_id = ?1) AND (state IN ('abandoned', 'running') OR (state = 'settled' AND "
                             "verdict != 'skipped'))%s",
                             sweep_workload_sql(j));
}

int journal_cell_pruned_as(struct journal *j, int64_t sweep_id, const char *cell_id, const char *evidence,
                           bool *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *sql = strdup_printf("SELECT verdict = 'skipped' AND cause = 'pruned' AND evidence IS ?3 "
                                                 "FROM attempts WHERE cell_id = ?2 AND state = 'settled'%s "
                                                 "ORDER BY id DESC LIMIT 1",
                                                 sweep_workload_sql(j));
        int r;
        *ret = false;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "iss", sweep_id, cell_id, evidence)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        *ret = rc == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
        return 0;
}

int journal_attempt_claim(struct journal *j, struct attempt *a, unsigned launches, size_t budget) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *spent = sweep_launches_sql(j);
        /* one INSERT ... SELECT: SQLite runs it under the write lock, so the check and the
         * row are one step that no other worker's claim can come between */
        _cleanup_free_ char *sql = spent ? strdup_printf(
                "INSERT INTO attempts (sweep_id, cell_id, state, started_wall, port, log_path, workload) "
                "SELECT ?1,?2,'running',?3,?4,?5,(SELECT workload_hash FROM sweeps WHERE id = ?1) "
                "WHERE NOT EXISTS (SELECT 1 FROM attempts WHERE cell_id = ?2 AND state = 'running') "
                "AND (SELECT count(*) FROM attempts WHERE cell_id = ?2 AND state = 'settled' AND verdict != 'skipped'%s) = ?6 "
                "AND (?7 = 0 OR (%s) < ?7)",
                sweep_workload_sql(j), spent) : NULL;
        int r;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 ||
            (r = journal_bind(j, s, "isiisii", a->sweep_id, a->cell_id, (int64_t)a->started_wall, (int64_t)a->port,
                              a->log_path, (int64_t)launches, (int64_t)budget)) < 0 ||
            (r = step_done(j, s)) < 0)
                return r;
        if (sqlite3_changes(j->db) == 0)
                return -EALREADY;
        a->id = sqlite3_last_insert_rowid(j->db);
        return 0;
}

int journal_cell_running(struct journal *j, const char *cell_id, bool *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "SELECT 1 FROM attempts WHERE cell_id = ? AND state = 'running' LIMIT 1", &s)) < 0 ||
            (r = journal_bind(j, s, "s", cell_id)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        *ret = rc == SQLITE_ROW;
        return 0;
}

int journal_attempt_process(struct journal *j, int64_t attempt_id, int pid, uint64_t starttime, const char *token) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "INSERT INTO processes (attempt_id, pid, starttime, token) VALUES (?,?,?,?)", &s)) < 0 ||
            (r = journal_bind(j, s, "iiis", attempt_id, (int64_t)pid, (int64_t)starttime, token)) < 0)
                return r;
        return step_done(j, s);
}

static int insert_check(struct journal *j, sqlite3_stmt *s, int64_t attempt_id, size_t seq, const struct check_result *c) {
        sqlite3_reset(s);
        int r = journal_bind(j, s, "iisssssssiiiis", attempt_id, (int64_t)seq, c->name ? c->name : "",
                         verdict_to_string(c->verdict), c->cause, c->evidence, c->output, c->reasoning, c->finish_reason,
                         (int64_t)c->http_status, (int64_t)c->latency, (int64_t)c->ttft, (int64_t)c->streamed,
                         c->detail);
        return r < 0 ? r : step_done(j, s);
}

static int insert_samples(struct journal *j, int64_t attempt_id, json_t *samples) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        size_t i;
        json_t *v;
        int r;
        if (!samples || !json_is_array(samples))
                return 0;
        if ((r = journal_prepare(j, "INSERT INTO bench_samples (attempt_id, seq, sample) VALUES (?,?,?)", &s)) < 0)
                return r;
        json_array_foreach(samples, i, v) {
                _cleanup_free_ char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
                if (!t)
                        return -ENOMEM;
                sqlite3_reset(s);
                if ((r = journal_bind(j, s, "iis", attempt_id, (int64_t)i, t)) < 0 || (r = step_done(j, s)) < 0)
                        return r;
        }
        return 0;
}

/* The logprobs as a JSON array; a value JSON cannot hold (NaN, inf) as null. */
static char *logprobs_json(const double *lp, size_t n) {
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(a, isfinite(lp[i]) ? json_real(lp[i]) : json_null()) < 0)
                        return NULL;
        return json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(9));
}

static int insert_eval(struct journal *j, const struct attempt *a) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if (!a->eval || !a->eval_set)
                return 0;
        if (a->n_eval > a->eval_set->n)
                return -EINVAL;
        if ((r = journal_prepare(j,
                         "INSERT INTO eval_results (attempt_id, seq, qid, qkey, question, verdict, cause, evidence, output, "
                         "finish_reason, http_status, latency_us, logprobs) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         &s)) < 0)
                return r;
        for (size_t i = 0; i < a->n_eval; i++) {
                const struct check_result *e = &a->eval[i];
                const struct check_spec *q = &a->eval_set->specs[i];
                _cleanup_free_ char *question = q->messages ? json_dumps(q->messages, JSON_COMPACT) : NULL;
                _cleanup_free_ char *lp = e->logprobs ? logprobs_json(e->logprobs, e->n_logprobs) : NULL;
                if ((q->messages && !question) || (e->logprobs && !lp))
                        return -ENOMEM;
                sqlite3_reset(s);
                if ((r = journal_bind(j, s, "iissssssssiis", a->id, (int64_t)i, q->name ? q->name : "",
                                      a->eval_set->keys[i], question ? question : q->prompt, verdict_to_string(e->verdict),
                                      e->cause, e->evidence, e->output, e->finish_reason, (int64_t)e->http_status,
                                      (int64_t)e->latency, lp)) < 0 ||
                    (r = step_done(j, s)) < 0)
                        return r;
        }
        return 0;
}

static int settle_in_transaction(struct journal *j, const struct attempt *a) {
        _cleanup_stmt_ sqlite3_stmt *q = NULL, *u = NULL, *c = NULL;
        _cleanup_free_ char *bench = NULL;
        int r;

        if ((r = journal_prepare(j, "SELECT state FROM attempts WHERE id = ?", &q)) < 0 || (r = journal_bind(j, q, "i", a->id)) < 0)
                return r;
        int rc = sqlite3_step(q);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        if (!streq_ptr(journal_col_str(q, 0), "running"))
                return -ESTALE;
        if (a->bench && !(bench = json_dumps(a->bench, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))))
                return -ENOMEM;
        _Static_assert(_PHASE_MAX == 6, "one column per phase");
        const char *eval_set = a->eval && a->eval_set ? a->eval_set->hash : NULL;
        if ((r = journal_prepare(j,
                         "UPDATE attempts SET state = 'settled', ended_wall = ?, verdict = ?, cause = ?, evidence = ?, "
                         "launch_us = ?, ready_us = ?, checks_us = ?, bench_us = ?, stop_us = ?, ready_after_us = ?, "
                         "exit_code = ?, exit_signal = ?, peak_gpu_mem_mib = ?, bench = ?, port = ?, log_path = ?, "
                         "eval_us = ?, eval_set = ?, prediction = ? WHERE id = ?",
                         &u)) < 0 ||
            (r = journal_bind(j, u, "isssiiiiiiiiisisissi", (int64_t)now_wall_usec(), verdict_to_string(a->verdict), a->cause,
                          a->evidence, (int64_t)a->phase[PHASE_LAUNCH], (int64_t)a->phase[PHASE_READY],
                          (int64_t)a->phase[PHASE_CHECKS], (int64_t)a->phase[PHASE_BENCH],
                          (int64_t)a->phase[PHASE_STOP], (int64_t)a->ready_after, (int64_t)a->exit_code,
                          (int64_t)a->exit_signal, (int64_t)a->peak_gpu_mem_mib, bench, (int64_t)a->port, a->log_path,
                          (int64_t)a->phase[PHASE_EVAL], eval_set, a->prediction, a->id)) < 0 ||
            (r = step_done(j, u)) < 0)
                return r;
        if ((r = journal_prepare(j,
                         "INSERT INTO check_results (attempt_id, seq, name, verdict, cause, evidence, output, reasoning, "
                         "finish_reason, http_status, latency_us, ttft_us, streamed, detail) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         &c)) < 0)
                return r;
        for (size_t i = 0; i < a->n_checks; i++)
                if ((r = insert_check(j, c, a->id, i, &a->checks[i])) < 0)
                        return r;
        if ((r = insert_eval(j, a)) < 0)
                return r;
        return insert_samples(j, a->id, a->bench_samples);
}

int journal_attempt_settle(struct journal *j, const struct attempt *a) {
        if (a->verdict < 0 || a->verdict >= _VERDICT_MAX)
                return -EINVAL;
        int r = begin(j);
        if (r < 0)
                return r;
        return commit_or_rollback(j, settle_in_transaction(j, a));
}

int journal_attempt_abandon(struct journal *j, int64_t attempt_id, const char *why) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j,
                         "UPDATE attempts SET state = 'abandoned', abandon_reason = ?, ended_wall = ? "
                         "WHERE id = ? AND state = 'running'",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "sii", why, (int64_t)now_wall_usec(), attempt_id)) < 0)
                return r;
        return step_done(j, s);
}

/* Whether the gauntlet that owns a sweep is another live process: then its attempts are
 * not orphans, whatever their state says. A pid is only believed with its start time. */
static bool owner_alive_elsewhere(int64_t pid, int64_t starttime) {
        uint64_t me = 0;
        if (pid <= 0 || pid > INT32_MAX || starttime < 0)
                return false;
        if (pid == getpid() && self_starttime(&me) == 0 && (int64_t)me == starttime)
                return false;
        /* a killed worker whose parent died too may linger as a zombie: it owns nothing */
        return procs_alive((pid_t)pid, (uint64_t)starttime);
}

static int abandon_processless(struct journal *j) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        size_t n = 0;
        int r;
        if ((r = journal_prepare(j,
                         "SELECT a.id, s.owner_pid, s.owner_starttime FROM attempts a JOIN sweeps s ON s.id = a.sweep_id "
                         "WHERE a.state = 'running' AND NOT EXISTS (SELECT 1 FROM processes p WHERE p.attempt_id = a.id)",
                         &s)) < 0)
                return r;
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        break;
                if (rc != SQLITE_ROW)
                        return journal_fail(j, rc);
                if (owner_alive_elsewhere(sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2)))
                        continue;
                int64_t *t = realloc(ids, (n + 1) * sizeof(*ids));
                if (!t)
                        return -ENOMEM;
                ids = t;
                ids[n++] = sqlite3_column_int64(s, 0);
        }
        for (size_t i = 0; i < n; i++)
                if ((r = journal_attempt_abandon(j, ids[i], "gauntlet stopped before the server started")) < 0)
                        return r;
        return 0;
}

int journal_orphans(struct journal *j, struct journal_orphan **ret, size_t *ret_n) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        struct journal_orphan *o = NULL;
        size_t n = 0;
        int r;
        if ((r = journal_prepare(j,
                         "SELECT p.attempt_id, p.pid, p.starttime, p.token, s.owner_pid, s.owner_starttime "
                         "FROM processes p JOIN attempts a ON a.id = p.attempt_id JOIN sweeps s ON s.id = a.sweep_id "
                         "WHERE a.state = 'running' ORDER BY p.id",
                         &s)) < 0)
                return r;
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        break;
                if (rc != SQLITE_ROW) {
                        r = journal_fail(j, rc);
                        goto fail;
                }
                if (owner_alive_elsewhere(sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5)))
                        continue;
                struct journal_orphan *t = realloc(o, (n + 1) * sizeof(*o));
                if (!t) {
                        r = -ENOMEM;
                        goto fail;
                }
                o = t;
                o[n] = (struct journal_orphan){
                        .attempt_id = sqlite3_column_int64(s, 0),
                        .pid = (int)sqlite3_column_int64(s, 1),
                        .starttime = (uint64_t)sqlite3_column_int64(s, 2),
                };
                n++;
                if ((r = journal_col_strdup(s, 3, &o[n - 1].token)) < 0)
                        goto fail;
        }
        if (!j->readonly && (r = abandon_processless(j)) < 0)
                goto fail;
        *ret = o;
        *ret_n = n;
        return 0;
fail:
        journal_orphans_free(o, n);
        return r;
}

void journal_orphans_free(struct journal_orphan *o, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(o[i].token);
        free(o);
}

int journal_schema_version(const struct journal *j) {
        return (int)j->version;
}

int journal_set_sweep_eval(struct journal *j, int64_t sweep_id, const char *eval_json) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "UPDATE sweeps SET eval = ? WHERE id = ?", &s)) < 0 ||
            (r = journal_bind(j, s, "si", eval_json, sweep_id)) < 0 || (r = step_done(j, s)) < 0)
                return r;
        return sqlite3_changes(j->db) > 0 ? 0 : -ENOENT;
}

int journal_set_sweep_against(struct journal *j, int64_t sweep_id, const char *against_json) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if (j->version < 9)
                return -EROFS;
        if ((r = journal_prepare(j, "UPDATE sweeps SET against = ? WHERE id = ?", &s)) < 0 ||
            (r = journal_bind(j, s, "si", against_json, sweep_id)) < 0 || (r = step_done(j, s)) < 0)
                return r;
        return sqlite3_changes(j->db) > 0 ? 0 : -ENOENT;
}

int journal_set_sweep_search(struct journal *j, int64_t sweep_id, const char *search_json) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "UPDATE sweeps SET search = ? WHERE id = ?", &s)) < 0 ||
            (r = journal_bind(j, s, "si", search_json, sweep_id)) < 0 || (r = step_done(j, s)) < 0)
                return r;
        return sqlite3_changes(j->db) > 0 ? 0 : -ENOENT;
}

int journal_count_sweeps(struct journal *j, int64_t *ret) {
        return pragma_int(j, "SELECT count(*) FROM sweeps", ret);
}

static bool ends_with(const char *s, size_t n, const char *suffix) {
        size_t k = strlen(suffix);
        return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

char *journal_log_root(const char *path) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        size_t n = strlen(base);
        /* NAME.db -> NAME, unless NAME ends with ".logs" (w.logs.db would take w's
         * w.logs): every other name, that one included, -> NAME.logs. The two kinds of
         * folder never meet (one ends with ".logs", the other never does), so no two
         * journals share one. */
        if (n > 3 && ends_with(base, n, ".db") && !ends_with(base, n - 3, ".logs"))
                return strndup(path, strlen(path) - 3);
        return strdup_printf("%s.logs", path);
}

char *journal_log_root_before(const char *path) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        size_t n = strlen(base);
        if (n > 3 && ends_with(base, n, ".db") && ends_with(base, n - 3, ".logs"))
                return strndup(path, strlen(path) - 3);
        return NULL;
}

int journal_workload(struct journal *j, char **ret_text, char **ret_hash) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *text = NULL, *hash = NULL;
        int r;
        if (j->version < 6) {
                *ret_text = *ret_hash = NULL;
                return 0;
        }
        if ((r = journal_prepare(j,
                         "SELECT workload, workload_hash FROM sweeps WHERE workload_hash IS NOT NULL "
                         "ORDER BY id DESC LIMIT 1",
                         &s)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        if (rc == SQLITE_ROW && ((r = journal_col_strdup(s, 0, &text)) < 0 || (r = journal_col_strdup(s, 1, &hash)) < 0))
                return r;
        *ret_text = TAKE_PTR(text);
        *ret_hash = TAKE_PTR(hash);
        return 0;
}

int journal_adopt_workload(struct journal *j, const char *text, const char *hash, int64_t *ret_attempts) {
        _cleanup_stmt_ sqlite3_stmt *a = NULL, *w = NULL;
        int r;
        if ((r = begin(j)) < 0)
                return r;
        if ((r = journal_prepare(j, "UPDATE attempts SET workload = ? WHERE workload IS NULL", &a)) >= 0 &&
            (r = journal_bind(j, a, "s", hash)) >= 0 && (r = step_done(j, a)) >= 0) {
                *ret_attempts = sqlite3_changes(j->db);
                if ((r = journal_prepare(j, "UPDATE sweeps SET workload = ?, workload_hash = ? WHERE workload_hash IS NULL",
                                         &w)) >= 0 &&
                    (r = journal_bind(j, w, "ss", text, hash)) >= 0)
                        r = step_done(j, w);
        }
        return commit_or_rollback(j, r);
}

int journal_count_other_workload(struct journal *j, const char *hash, int64_t *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j,
                         "SELECT count(DISTINCT cell_id) FROM attempts WHERE state = 'settled' AND verdict != 'skipped' "
                         "AND workload IS NOT ?",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "s", hash)) < 0)
                return r;
        return step_int(j, s, ret);
}

/* ---- reading: the journal's rows as structs (journal.h) ---- */

/* The workload filter of the attempts read (docs/journal.md "One workload per journal"):
 * from schema 6 on, attempts measured under workload, or under none (an older journal's,
 * not adopted yet); a NULL workload reads them all. Bound as ?2. */
static const char *workload_clause(const struct journal *j) {
        return j->version >= 6 ? " AND (?2 IS NULL OR workload IS NULL OR workload = ?2)" : "";
}

static int bind_workload(struct journal *j, sqlite3_stmt *s, const char *workload) {
        if (j->version < 6)
                return 0;
        int rc = bind_text(s, 2, workload);
        return rc == SQLITE_OK ? 0 : journal_fail(j, rc);
}

/* Steps s to its end, handing each row to row(); stops at the first negative return. */
static int each_row(struct journal *j, sqlite3_stmt *s, int (*row)(sqlite3_stmt *s, void *ctx), void *ctx) {
        for (;;) {
                int rc = sqlite3_step(s);
                if (rc == SQLITE_DONE)
                        return 0;
                if (rc != SQLITE_ROW)
                        return journal_fail(j, rc);
                int r = row(s, ctx);
                if (r < 0)
                        return r;
        }
}

/* A read in progress: the caller's function for its rows, and how many it was given. */
struct visit {
        union {
                journal_sweep_fn sweep;
                journal_sweep_cell_fn sweep_cell;
                journal_attempt_fn attempt;
                journal_check_fn check;
                journal_eval_fn eval;
        } fn;
        void *userdata;
        size_t rows;
};

static int sweep_row(sqlite3_stmt *s, void *ctx) {
        struct visit *v = ctx;
        struct journal_sweep_row row = {
                .id = sqlite3_column_int64(s, 0),
                .started_wall = (usec_t)sqlite3_column_int64(s, 1),
                .how = journal_col_str(s, 2),
                .version = journal_col_str(s, 3),
                .matrix_path = journal_col_str(s, 4),
                .matrix_text = journal_col_str(s, 5),
                .engine = journal_col_str(s, 6),
                .model = journal_col_str(s, 7),
                .objective = journal_col_str(s, 8),
                .bind_host = journal_col_str(s, 9),
                .port = sqlite3_column_int(s, 10),
                .workdir = journal_col_str(s, 11),
                .startup_timeout = (usec_t)sqlite3_column_int64(s, 12),
                .axes = journal_col_str(s, 13),
                .host_json = journal_col_str(s, 14),
                .cwd = journal_col_str(s, 15),
                .eval = journal_col_str(s, 16),
                .search = journal_col_str(s, 17),
                .against = journal_col_str(s, 18),
        };
        v->rows++;
        return v->fn.sweep(&row, v->userdata);
}

/* The sweep with id, or the latest one (id 0). */
static int read_sweep(struct journal *j, int64_t id, journal_sweep_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *sql = strdup_printf(
                "SELECT id, started_wall, how, version, matrix_path, matrix_text, engine, model, objective, "
                "bind_host, port, workdir, startup_timeout_us, axes, host_json, cwd, %s, %s, %s "
                "FROM sweeps WHERE id = ?1 OR (?1 = 0 AND EXISTS (SELECT 1 FROM sweep_cells WHERE sweep_id = sweeps.id)) "
                "ORDER BY id DESC LIMIT 1",
                j->version >= 3 ? "eval" : "NULL", j->version >= 4 ? "search" : "NULL",
                j->version >= 9 ? "against" : "NULL");
        struct visit v = {.fn.sweep = fn, .userdata = userdata};
        int r;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "i", id)) < 0 ||
            (r = each_row(j, s, sweep_row, &v)) < 0)
                return r;
        return v.rows ? 0 : -ENOENT;
}

int journal_latest_sweep(struct journal *j, journal_sweep_fn fn, void *userdata) {
        return read_sweep(j, 0, fn, userdata);
}

int journal_sweep(struct journal *j, int64_t sweep_id, journal_sweep_fn fn, void *userdata) {
        return sweep_id > 0 ? read_sweep(j, sweep_id, fn, userdata) : -ENOENT;
}

void journal_read_until(struct journal *j, int64_t sweep_id) {
        j->until = sweep_id > 0 ? sweep_id : 0;
}

static int sweep_cell_row(sqlite3_stmt *s, void *ctx) {
        struct visit *v = ctx;
        struct journal_sweep_cell_row row = {
                .cell_id = journal_col_str(s, 0),
                .position = (size_t)sqlite3_column_int64(s, 1),
                .axes = journal_col_str(s, 2),
                .distance = sqlite3_column_int(s, 3),
                .excluded = sqlite3_column_int(s, 4) != 0,
                .argv = journal_col_str(s, 5),
                .env = journal_col_str(s, 6),
        };
        return v->fn.sweep_cell(&row, v->userdata);
}

int journal_sweep_cells(struct journal *j, int64_t sweep_id, journal_sweep_cell_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        struct visit v = {.fn.sweep_cell = fn, .userdata = userdata};
        int r;
        if ((r = journal_prepare(j,
                         "SELECT sc.cell_id, sc.position, sc.axes, sc.distance, sc.excluded, c.argv, c.env "
                         "FROM sweep_cells sc JOIN cells c ON c.id = sc.cell_id WHERE sc.sweep_id = ? "
                         "ORDER BY sc.position",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        return each_row(j, s, sweep_cell_row, &v);
}

/* The columns of struct journal_attempt_row, NULL where the file's schema has none. */
static char *attempt_columns(const struct journal *j) {
        bool v3 = j->version >= 3, v4 = j->version >= 4;
        return strdup_printf("id, sweep_id, verdict, cause, evidence, log_path, started_wall, port, launch_us, ready_us, "
                             "checks_us, %s, bench_us, stop_us, ready_after_us, exit_code, exit_signal, "
                             "peak_gpu_mem_mib, bench, %s, %s, %s",
                             v3 ? "eval_us" : "NULL", v3 ? "eval_set" : "NULL", v4 ? "prediction" : "NULL",
                             v3 ? "launch_us + ready_us + checks_us + eval_us + bench_us + stop_us"
                                : "launch_us + ready_us + checks_us + bench_us + stop_us");
}

static int attempt_row(sqlite3_stmt *s, void *ctx) {
        struct visit *v = ctx;
        struct journal_attempt_row row = {
                .id = sqlite3_column_int64(s, 0),
                .sweep_id = sqlite3_column_int64(s, 1),
                .verdict = verdict_from_string(journal_col_str(s, 2)),
                .cause = journal_col_str(s, 3),
                .evidence = journal_col_str(s, 4),
                .log_path = journal_col_str(s, 5),
                .started_wall = (usec_t)sqlite3_column_int64(s, 6),
                .port = sqlite3_column_int(s, 7),
                .ready_after = (usec_t)sqlite3_column_int64(s, 14),
                .exit_code = sqlite3_column_int(s, 15),
                .exit_signal = sqlite3_column_int(s, 16),
                .peak_gpu_mem_mib = (uint64_t)sqlite3_column_int64(s, 17),
                .bench = journal_col_str(s, 18),
                .eval_set = journal_col_str(s, 19),
                .prediction = journal_col_str(s, 20),
                .spent = (usec_t)MAX(sqlite3_column_int64(s, 21), 0),
        };
        _Static_assert(PHASE_LAUNCH == 0 && PHASE_READY == 1 && PHASE_CHECKS == 2 && PHASE_EVAL == 3 &&
                               PHASE_BENCH == 4 && PHASE_STOP == 5 && _PHASE_MAX == 6,
                       "the columns launch_us ... stop_us in phase order");
        for (int p = 0; p < _PHASE_MAX; p++)
                row.phase[p] = (usec_t)sqlite3_column_int64(s, 8 + p);
        v->rows++;
        return v->fn.attempt(&row, v->userdata);
}

/* The attempts of a cell of the given workload that match where, ordered by order. */
static int cell_attempts(struct journal *j, const char *cell_id, const char *workload, const char *where,
                         const char *order, journal_attempt_fn fn, void *userdata, size_t *ret_rows) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *cols = attempt_columns(j);
        _cleanup_free_ char *until = j->until ? strdup_printf(" AND sweep_id <= %" PRId64, j->until) : strdup("");
        _cleanup_free_ char *sql = cols && until ? strdup_printf("SELECT %s FROM attempts WHERE cell_id = ?1 AND %s%s%s "
                                                                 "ORDER BY %s",
                                                                 cols, where, workload_clause(j), until, order)
                                                 : NULL;
        struct visit v = {.fn.attempt = fn, .userdata = userdata};
        int r;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "s", cell_id)) < 0 ||
            (r = bind_workload(j, s, workload)) < 0 || (r = each_row(j, s, attempt_row, &v)) < 0)
                return r;
        *ret_rows = v.rows;
        return 0;
}

int journal_cell_shown_attempt(struct journal *j, const char *cell_id, const char *workload, journal_attempt_fn fn,
                               void *userdata) {
        size_t rows = 0;
        int r = cell_attempts(j, cell_id, workload,
                              j->version >= 4
                                      ? "state = 'settled' AND (verdict != 'skipped' OR cause IN ('inferred', 'pruned'))"
                                      : "state = 'settled' AND (verdict != 'skipped' OR cause = 'inferred')",
                              "id DESC LIMIT 1", fn, userdata, &rows);
        return r < 0 ? r : rows ? 0 : -ENOENT;
}

int journal_cell_launches(struct journal *j, const char *cell_id, const char *workload, journal_attempt_fn fn,
                          void *userdata) {
        size_t rows = 0;
        return cell_attempts(j, cell_id, workload, "state = 'settled' AND verdict != 'skipped'", "id", fn, userdata,
                             &rows);
}

int journal_cell_abandoned(struct journal *j, const char *cell_id, const char *workload, int64_t *ret,
                           char **ret_reason) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *until = j->until ? strdup_printf(" AND sweep_id <= %" PRId64, j->until) : strdup("");
        /* the count, and the reason of the latest (SQLite takes a bare column beside max()
         * from the row that holds the maximum) */
        _cleanup_free_ char *sql = until ? strdup_printf("SELECT count(*), abandon_reason, max(id) FROM attempts WHERE "
                                                         "cell_id = ?1 AND state = 'abandoned'%s%s",
                                                         workload_clause(j), until)
                                         : NULL;
        int r;
        if (ret_reason)
                *ret_reason = NULL;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "s", cell_id)) < 0 ||
            (r = bind_workload(j, s, workload)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return rc == SQLITE_DONE ? -EIO : journal_fail(j, rc);
        *ret = sqlite3_column_int64(s, 0);
        return ret_reason ? journal_col_strdup(s, 1, ret_reason) : 0;
}

int journal_sweep_launches(struct journal *j, int64_t sweep_id, int64_t *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        _cleanup_free_ char *sql = sweep_launches_sql(j);
        int r;
        if (!sql)
                return -ENOMEM;
        if ((r = journal_prepare(j, sql, &s)) < 0 || (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        return step_int(j, s, ret);
}

int journal_cell_other_workload(struct journal *j, const char *cell_id, const char *workload, bool *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        *ret = false;
        if (j->version < 6 || !workload)
                return 0;
        if ((r = journal_prepare(j,
                         "SELECT 1 FROM attempts WHERE cell_id = ? AND state = 'settled' AND verdict != 'skipped' "
                         "AND workload IS NOT NULL AND workload != ? LIMIT 1",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "ss", cell_id, workload)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return journal_fail(j, rc);
        *ret = rc == SQLITE_ROW;
        return 0;
}

static int check_row(sqlite3_stmt *s, void *ctx) {
        struct visit *v = ctx;
        struct journal_check_row row = {
                .name = journal_col_str(s, 0),
                .verdict = verdict_from_string(journal_col_str(s, 1)),
                .cause = journal_col_str(s, 2),
                .evidence = journal_col_str(s, 3),
                .output = journal_col_str(s, 4),
                .reasoning = journal_col_str(s, 5),
                .finish_reason = journal_col_str(s, 6),
                .http_status = sqlite3_column_int(s, 7),
                .latency = (usec_t)sqlite3_column_int64(s, 8),
                .ttft = (usec_t)sqlite3_column_int64(s, 9),
                .streamed = sqlite3_column_int(s, 10) != 0,
                .detail = journal_col_str(s, 11),
        };
        return v->fn.check(&row, v->userdata);
}

int journal_attempt_checks(struct journal *j, int64_t attempt_id, journal_check_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        struct visit v = {.fn.check = fn, .userdata = userdata};
        int r;
        if ((r = journal_prepare(j,
                         j->version >= 5
                                 ? "SELECT name, verdict, cause, evidence, output, reasoning, finish_reason, http_status, "
                                   "latency_us, ttft_us, streamed, detail FROM check_results WHERE attempt_id = ? ORDER BY seq"
                                 : "SELECT name, verdict, cause, evidence, output, reasoning, finish_reason, http_status, "
                                   "latency_us, ttft_us, streamed, NULL FROM check_results WHERE attempt_id = ? ORDER BY seq",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", attempt_id)) < 0)
                return r;
        return each_row(j, s, check_row, &v);
}

static int eval_row(sqlite3_stmt *s, void *ctx) {
        struct visit *v = ctx;
        struct journal_eval_row row = {
                .qid = journal_col_str(s, 0),
                .qkey = journal_col_str(s, 1),
                .question = journal_col_str(s, 2),
                .verdict = verdict_from_string(journal_col_str(s, 3)),
                .cause = journal_col_str(s, 4),
                .evidence = journal_col_str(s, 5),
                .output = journal_col_str(s, 6),
                .finish_reason = journal_col_str(s, 7),
                .http_status = sqlite3_column_int(s, 8),
                .latency = (usec_t)sqlite3_column_int64(s, 9),
                .logprobs = journal_col_str(s, 10),
        };
        return v->fn.eval(&row, v->userdata);
}

int journal_attempt_eval(struct journal *j, int64_t attempt_id, journal_eval_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        struct visit v = {.fn.eval = fn, .userdata = userdata};
        int r;
        if (j->version < 3)
                return 0;
        if ((r = journal_prepare(j,
                         "SELECT qid, qkey, question, verdict, cause, evidence, output, finish_reason, http_status, "
                         "latency_us, logprobs FROM eval_results WHERE attempt_id = ? ORDER BY seq",
                         &s)) < 0 ||
            (r = journal_bind(j, s, "i", attempt_id)) < 0)
                return r;
        return each_row(j, s, eval_row, &v);
}

int journal_record_provenance(struct journal *j, int64_t sweep_id, const char *env_key, const char *json) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if ((r = journal_prepare(j, "INSERT OR REPLACE INTO provenance (sweep_id, env_key, json) VALUES (?, ?, ?)",
                                 &s)) < 0 ||
            (r = journal_bind(j, s, "iss", sweep_id, env_key, json)) < 0)
                return r;
        return step_done(j, s);
}

/* Whether the journal has the provenance table (a schema-8 step; a read-only older file
 * has not). 1, 0 or -errno. */
static int has_provenance(struct journal *j) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r = journal_prepare(j, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'provenance'", &s);
        if (r < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        return sqlite3_column_int(s, 0) > 0;
}

struct provenance_visit {
        journal_provenance_fn fn;
        void *userdata;
};

static int provenance_row(sqlite3_stmt *s, void *ctx) {
        struct provenance_visit *v = ctx;
        return v->fn(journal_col_str(s, 0), v->userdata);
}

static int sample_row(sqlite3_stmt *s, void *ctx) {
        struct provenance_visit *v = ctx;
        return v->fn(journal_col_str(s, 0), v->userdata);
}

int journal_attempt_samples(struct journal *j, int64_t attempt_id, journal_provenance_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        struct provenance_visit v = {fn, userdata};
        int r;
        if ((r = journal_prepare(j, "SELECT sample FROM bench_samples WHERE attempt_id = ? ORDER BY seq", &s)) < 0 ||
            (r = journal_bind(j, s, "i", attempt_id)) < 0)
                return r;
        return each_row(j, s, sample_row, &v);
}

int journal_sweep_provenance(struct journal *j, int64_t sweep_id, journal_provenance_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r = has_provenance(j);
        if (r <= 0)
                return r;
        if ((r = journal_prepare(j, "SELECT json FROM provenance WHERE sweep_id = ? ORDER BY rowid", &s)) < 0 ||
            (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        struct provenance_visit v = {fn, userdata};
        return each_row(j, s, provenance_row, &v);
}

int journal_provenance_before(struct journal *j, int64_t sweep_id, int64_t *ret) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r = has_provenance(j);
        if (r <= 0)
                return r;
        if ((r = journal_prepare(j, "SELECT max(sweep_id) FROM provenance WHERE sweep_id < ?", &s)) < 0 ||
            (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        int rc = sqlite3_step(s);
        if (rc != SQLITE_ROW)
                return journal_fail(j, rc);
        if (sqlite3_column_type(s, 0) == SQLITE_NULL)
                return 0;
        *ret = sqlite3_column_int64(s, 0);
        return 1;
}

int journal_set_sweep_verdicts(struct journal *j, int64_t sweep_id, const struct journal_verdict_row *rows, size_t n) {
        _cleanup_stmt_ sqlite3_stmt *del = NULL, *ins = NULL;
        int r;
        if (j->version < 8)
                return -EROFS;
        if ((r = journal_prepare(j, "DELETE FROM verdicts WHERE sweep_id = ?", &del)) < 0 ||
            (r = journal_prepare(j, "INSERT INTO verdicts (sweep_id, attempt_id, verdict, cause, evidence) VALUES (?,?,?,?,?)",
                                 &ins)) < 0)
                return r;
        if ((r = begin(j)) < 0)
                return r;
        if ((r = journal_bind(j, del, "i", sweep_id)) >= 0)
                r = step_done(j, del);
        for (size_t i = 0; i < n && r >= 0; i++) {
                sqlite3_reset(ins);
                if ((r = journal_bind(j, ins, "iisss", sweep_id, rows[i].attempt_id, verdict_to_string(rows[i].verdict),
                                      rows[i].cause, rows[i].evidence)) >= 0)
                        r = step_done(j, ins);
        }
        return commit_or_rollback(j, r);
}

struct verdict_visit {
        journal_verdict_fn fn;
        void *userdata;
};

static int verdict_row(sqlite3_stmt *s, void *ctx) {
        struct verdict_visit *v = ctx;
        struct journal_verdict_row row = {
                .attempt_id = sqlite3_column_int64(s, 0),
                .verdict = verdict_from_string(journal_col_str(s, 1)),
                .cause = journal_col_str(s, 2),
                .evidence = journal_col_str(s, 3),
        };
        return v->fn(&row, v->userdata);
}

int journal_sweep_verdicts(struct journal *j, int64_t sweep_id, journal_verdict_fn fn, void *userdata) {
        _cleanup_stmt_ sqlite3_stmt *s = NULL;
        int r;
        if (j->version < 8)
                return 0;
        if ((r = journal_prepare(j, "SELECT attempt_id, verdict, cause, evidence FROM verdicts WHERE sweep_id = ? "
                                    "ORDER BY attempt_id",
                                 &s)) < 0 ||
            (r = journal_bind(j, s, "i", sweep_id)) < 0)
                return r;
        struct verdict_visit v = {fn, userdata};
        return each_row(j, s, verdict_row, &v);
}
