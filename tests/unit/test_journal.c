/* test_journal.c -- the journal: round trip, settled cells, orphans, abandon, versions, crashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "journal/journal.h"
#include "proc/procs.h"
#include "report/report.h"
#include "results/report_load.h"
#include "run/sweep_count.h"

/* A two-axis matrix built by hand: the journal only reads plain fields of it. */
static char *args_auto[] = {"--moe", "auto", NULL};
static char *args_cut[] = {"--moe", "cutlass", NULL};
static char *args_g0[] = {"--gemm", "auto", NULL};
static char *args_g1[] = {"--gemm", "cudnn", NULL};
static struct axis_value moe_values[] = {{.name = "auto", .args = args_auto, .is_default = true},
                                         {.name = "cutlass", .args = args_cut}};
static struct axis_value gemm_values[] = {{.name = "auto", .args = args_g0, .is_default = true},
                                          {.name = "cudnn", .args = args_g1}};
static struct axis axes[] = {{.name = "moe", .flag = "--moe", .values = moe_values, .n_values = 2},
                             {.name = "gemm", .flag = "--gemm", .values = gemm_values, .n_values = 2}};

static size_t ch00[] = {0, 0}, ch01[] = {0, 1}, ch10[] = {1, 0}, ch11[] = {1, 1};
static char *argv00[] = {"gauntlet-testbed", "--host", "{host}", "--port", "{port}", "--moe", "auto", "--gemm", "auto", NULL};
static char *argv01[] = {"gauntlet-testbed", "--port", "{port}", "--gemm", "cudnn", NULL};
static char *argv10[] = {"gauntlet-testbed", "--port", "{port}", "--moe", "cutlass", NULL};
static char *argv11[] = {"gauntlet-testbed", "--port", "{port}", "--moe", "cutlass", "--gemm", "cudnn", NULL};
static char *env00[] = {"HF_TOKEN=hf_secret", "NCCL_P2P_DISABLE=1", NULL};

static struct cell cells[] = {
        {.choice = ch00, .id = "00000000000000a0", .argv = argv00, .env = env00, .distance = 0},
        {.choice = ch01, .id = "00000000000000a1", .argv = argv01, .distance = 1},
        {.choice = ch10, .id = "00000000000000b0", .argv = argv10, .distance = 1, .excluded = true},
        {.choice = ch11, .id = "00000000000000b1", .argv = argv11, .distance = 2},
};

static struct matrix matrix = {
        .path = "demo.yaml",
        .text = "engine: testbed\naxes: ...\n",
        .engine = "testbed",
        .model = "tiny",
        .host = "127.0.0.1",
        .startup_timeout = 90 * USEC_PER_SEC,
        .axes = axes,
        .n_axes = 2,
        .objective = "output_tokens_per_s@1",
};

struct fixture {
        char dir[64];
        char path[128];
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/gauntlet-journal-XXXXXX");
        if (!mkdtemp(f->dir))
                return -1;
        snprintf(f->path, sizeof(f->path), "%s/j.db", f->dir);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        int r = system(cmd);
        free(f);
        return r == 0 ? 0 : -1;
}

static void settle_pass(struct journal *j, int64_t sweep, const char *cell_id, int port, double tok_s) {
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cell_id, 17);
        a.started_wall = now_wall_usec();
        a.port = port;
        a.log_path = strdup("runs/x/cell.log");
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_true(a.id > 0);
        a.verdict = VERDICT_PASS;
        a.ready_after = 2500 * USEC_PER_MSEC;
        a.phase[PHASE_READY] = 2500 * USEC_PER_MSEC;
        a.n_checks = 2;
        a.checks = calloc(2, sizeof(*a.checks));
        a.checks[0] = (struct check_result){.name = strdup("ok"), .verdict = VERDICT_PASS, .output = strdup("OK"),
                                            .finish_reason = strdup("stop"), .http_status = 200,
                                            .latency = 120 * USEC_PER_MSEC};
        a.checks[1] = (struct check_result){.name = strdup("math/stream"), .verdict = VERDICT_PASS,
                                            .output = strdup("17 * 19 = 323"), .reasoning = strdup("think"),
                                            .http_status = 200, .latency = 300 * USEC_PER_MSEC,
                                            .ttft = 40 * USEC_PER_MSEC, .streamed = true,
                                            .detail = strdup("right in 5 of 5 at temperature 0.7")};
        a.bench = json_pack("[{s:i, s:f}]", "concurrency", 1, "output_tokens_per_s", tok_s);
        a.bench_samples = json_pack("[{s:f}, {s:f}]", "latency_s", 0.5, "latency_s", 0.6);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
}

static void test_round_trip(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep = 0;
        assert_int_equal(journal_open(f->path, &j), 0);
        struct stat st;
        assert_int_equal(stat(f->path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);

        assert_int_equal(journal_begin_sweep(j, &matrix, "{\"gpus\": [{\"name\": \"H200\"}]}", &sweep), 0);
        assert_true(sweep > 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        /* Recording again is an upsert, not a duplicate. */
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);

        settle_pass(j, sweep, cells[0].id, 40001, 172.3);

        struct attempt g;
        attempt_init(&g);
        g.sweep_id = sweep;
        memcpy(g.cell_id, cells[1].id, 17);
        g.started_wall = now_wall_usec();
        g.port = 40002;
        assert_int_equal(journal_attempt_begin(j, &g), 0);
        assert_int_equal(journal_attempt_process(j, g.id, 12345, 999, "tok"), 0);
        assert_int_equal(attempt_set_verdict(&g, VERDICT_GARBAGE, "repeat", "!!!!!!!!!!!!"), 0);
        g.exit_code = -1;
        assert_int_equal(journal_attempt_settle(j, &g), 0);
        /* Settling twice is refused and changes nothing. */
        assert_int_equal(journal_attempt_settle(j, &g), -ESTALE);
        attempt_release(&g);
        assert_int_equal(journal_end_sweep(j, sweep, "finished"), 0);
        journal_close(j);

        j = NULL;
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        struct report_view *v = NULL;
        assert_int_equal(report_load_view(j, &v), 0);
        assert_string_equal(v->engine, "testbed");
        assert_string_equal(v->model, "tiny");
        assert_string_equal(v->matrix_path, "demo.yaml");
        assert_string_equal(v->matrix_text, matrix.text);
        assert_string_equal(v->sweep_how, "finished");
        assert_string_equal(v->version, GAUNTLET_VERSION);
        assert_int_equal(v->startup_timeout, 90 * USEC_PER_SEC);
        assert_int_equal(v->earlier_sweeps, 0);
        assert_non_null(v->cwd);
        assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(v->host_json, "gpus"), 0), "name")),
                            "H200");
        assert_int_equal(v->n_axes, 2);
        assert_string_equal(v->axes[0], "moe");
        assert_string_equal(v->axes[1], "gemm");
        assert_int_equal(v->n_cells, 4);

        const struct report_cell *c0 = &v->cells[0];
        assert_string_equal(c0->id, cells[0].id);
        assert_true(c0->has_attempt);
        assert_int_equal(c0->verdict, VERDICT_PASS);
        assert_null(c0->cause);
        assert_string_equal(c0->axis_values[0], "auto");
        assert_string_equal(c0->axis_values[1], "auto");
        assert_string_equal(c0->log_path, "runs/x/cell.log");
        assert_int_equal(c0->port, 40001);
        assert_int_equal(c0->ready_after, 2500 * USEC_PER_MSEC);
        assert_int_equal(c0->phase[PHASE_READY], 2500 * USEC_PER_MSEC);
        assert_true(strv_equal(c0->argv, argv00));
        assert_string_equal(c0->command[2], "127.0.0.1");
        assert_string_equal(c0->command[4], "40001");
        assert_true(strv_equal(c0->env, env00)); /* the journal keeps real values */
        assert_int_equal(c0->n_checks, 2);
        assert_string_equal(c0->checks[0].name, "ok");
        assert_string_equal(c0->checks[0].output, "OK");
        assert_string_equal(c0->checks[0].finish_reason, "stop");
        assert_int_equal(c0->checks[0].http_status, 200);
        assert_int_equal(c0->checks[0].latency, 120 * USEC_PER_MSEC);
        assert_string_equal(c0->checks[1].reasoning, "think");
        assert_true(c0->checks[1].streamed);
        assert_int_equal(c0->checks[1].ttft, 40 * USEC_PER_MSEC);
        assert_non_null(c0->bench);
        assert_true(json_real_value(json_object_get(json_array_get(c0->bench, 0), "output_tokens_per_s")) > 172.2);

        const struct report_cell *c1 = &v->cells[1];
        assert_int_equal(c1->verdict, VERDICT_GARBAGE);
        assert_string_equal(c1->cause, "repeat");
        assert_string_equal(c1->evidence, "!!!!!!!!!!!!");
        assert_string_equal(c1->axis_values[1], "cudnn");

        assert_true(v->cells[2].excluded);
        assert_string_equal(report_cell_verdict(&v->cells[2]), "skipped");
        assert_string_equal(report_cell_cause(&v->cells[2]), "excluded");
        assert_false(v->cells[3].has_attempt);
        assert_string_equal(report_cell_verdict(&v->cells[3]), "not run");
        report_view_free(v);

        /* The bench samples went in with the attempt, one row each. */
        sqlite3 *db;
        sqlite3_stmt *s;
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM bench_samples", -1, &s, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(s, 0), 2);
        sqlite3_finalize(s);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
        sqlite3_finalize(s);
        sqlite3_close(db);

        /* journal_open_existing reads only: no write goes through it */
        int64_t refused = 0;
        assert_true(journal_begin_sweep(j, &matrix, "{}", &refused) < 0);
        journal_close(j);
        assert_int_equal(journal_open(f->path, &j), 0);

        /* A second sweep: the view is of the latest, and counts the earlier one. */
        int64_t sweep2 = 0;
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep2), 0);
        assert_int_equal(journal_record_cells(j, sweep2, &matrix, cells, 2), 0);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->sweep_id, sweep2);
        assert_int_equal(v->earlier_sweeps, 1);
        assert_int_equal(v->n_cells, 2);
        assert_int_equal(v->cells[0].verdict, VERDICT_PASS); /* settled in the earlier sweep */
        assert_int_equal(v->cells[0].attempt_sweep_id, sweep);
        assert_null(v->sweep_how);
        report_view_free(v);
        journal_close(j);
}

static void test_settled_and_abandon(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep;
        bool settled = true;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        assert_int_equal(journal_cell_settled(j, cells[0].id, &settled), 0);
        assert_false(settled);

        /* Running, then abandoned: not settled, and cannot be settled any more. */
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[0].id, 17);
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_int_equal(journal_cell_settled(j, cells[0].id, &settled), 0);
        assert_false(settled);
        assert_int_equal(journal_attempt_abandon(j, a.id, "interrupted by a signal"), 0);
        assert_int_equal(journal_cell_settled(j, cells[0].id, &settled), 0);
        assert_false(settled);
        assert_int_equal(attempt_set_verdict(&a, VERDICT_PASS, NULL, NULL), 0);
        assert_int_equal(journal_attempt_settle(j, &a), -ESTALE);
        a.id = 987654;
        assert_int_equal(journal_attempt_settle(j, &a), -ENOENT);
        attempt_release(&a);

        /* A skipped (excluded) attempt does not count: lifting the exclusion runs it. */
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[2].id, 17);
        assert_int_equal(attempt_set_verdict(&a, VERDICT_SKIPPED, "excluded", NULL), 0);
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
        assert_int_equal(journal_cell_settled(j, cells[2].id, &settled), 0);
        assert_false(settled);

        /* A crash is settled: the cell is not run again without --rerun. */
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[1].id, 17);
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_int_equal(attempt_set_verdict(&a, VERDICT_CRASH, "oom", "CUDA out of memory"), 0);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
        assert_int_equal(journal_cell_settled(j, cells[1].id, &settled), 0);
        assert_true(settled);
        enum verdict vd;
        char *cause = NULL, *evidence = NULL;
        assert_int_equal(journal_cell_result(j, cells[1].id, &vd, &cause, &evidence), 0);
        assert_int_equal(vd, VERDICT_CRASH);
        assert_string_equal(cause, "oom");
        assert_string_equal(evidence, "CUDA out of memory");
        free(cause);
        free(evidence);
        assert_int_equal(journal_cell_result(j, cells[3].id, &vd, &cause, &evidence), -ENOENT);

        /* An invalid verdict never reaches the file. */
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[3].id, 17);
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        a.verdict = (enum verdict)42;
        assert_int_equal(journal_attempt_settle(j, &a), -EINVAL);
        attempt_release(&a);
        /* A cell the sweep never recorded is refused (foreign key). */
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, "ffffffffffffffff", 17);
        assert_int_equal(journal_attempt_begin(j, &a), -EINVAL);
        attempt_release(&a);
        journal_close(j);
}

static int exec_sql(const char *path, const char *sql) {
        sqlite3 *db;
        if (sqlite3_open(path, &db) != SQLITE_OK)
                return -1;
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_close(db);
        return rc == SQLITE_OK ? 0 : -1;
}

static void test_orphans(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep;
        struct journal_orphan *o = NULL;
        size_t n = 99;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 0);
        journal_orphans_free(o, n);

        struct attempt a, b;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[0].id, 17);
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        assert_int_equal(journal_attempt_process(j, a.id, 4242, 777, "0123456789abcdef0123456789abcdef"), 0);
        attempt_init(&b); /* begun, but gauntlet died before the server started */
        b.sweep_id = sweep;
        memcpy(b.cell_id, cells[1].id, 17);
        assert_int_equal(journal_attempt_begin(j, &b), 0);
        journal_close(j);

        /* The run died (here: the owner is this process, so it is not "alive elsewhere"). */
        j = NULL;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(o[0].attempt_id, a.id);
        assert_int_equal(o[0].pid, 4242);
        assert_int_equal(o[0].starttime, 777);
        assert_string_equal(o[0].token, "0123456789abcdef0123456789abcdef");
        journal_orphans_free(o, n);

        /* The attempt without a process was abandoned on the way: nothing to stop. */
        struct report_view *v = NULL;
        assert_int_equal(report_load_view(j, &v), 0);
        assert_false(v->cells[1].has_attempt);
        report_view_free(v);

        /* A sweep owned by another live gauntlet (our parent stands in for it) is never
         * handed out: its servers are not orphans. */
        uint64_t pst = 0;
        assert_int_equal(procs_starttime(getppid(), &pst), 0);
        char sql[256];
        snprintf(sql, sizeof(sql), "UPDATE sweeps SET owner_pid = %d, owner_starttime = %llu", (int)getppid(),
                 (unsigned long long)pst);
        assert_int_equal(exec_sql(f->path, sql), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 0);
        journal_orphans_free(o, n);
        /* ... nor one owned by a zombie (killed, its parent dead too, where nothing reaps
         * promptly): it owns nothing, its servers are orphans */
        pid_t zombie = fork();
        assert_true(zombie >= 0);
        if (zombie == 0)
                _exit(0);
        siginfo_t si = {0};
        uint64_t zst = 0;
        assert_int_equal(waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT), 0);
        assert_int_equal(procs_starttime(zombie, &zst), 0);
        snprintf(sql, sizeof(sql), "UPDATE sweeps SET owner_pid = %d, owner_starttime = %llu", (int)zombie,
                 (unsigned long long)zst);
        assert_int_equal(exec_sql(f->path, sql), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 1);
        journal_orphans_free(o, n);
        assert_int_equal(waitpid(zombie, NULL, 0), zombie);
        snprintf(sql, sizeof(sql), "UPDATE sweeps SET owner_pid = %d, owner_starttime = %llu", (int)getppid(),
                 (unsigned long long)pst);
        assert_int_equal(exec_sql(f->path, sql), 0);
        /* ... but the same pid with another start time is a reused pid: orphans again. */
        snprintf(sql, sizeof(sql), "UPDATE sweeps SET owner_starttime = %llu", (unsigned long long)pst + 1);
        assert_int_equal(exec_sql(f->path, sql), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 1);
        journal_orphans_free(o, n);

        assert_int_equal(journal_attempt_abandon(j, a.id, "gauntlet stopped during this attempt"), 0);
        assert_int_equal(journal_orphans(j, &o, &n), 0);
        assert_int_equal(n, 0);
        journal_orphans_free(o, n);
        attempt_release(&a);
        attempt_release(&b);
        journal_close(j);
}

static void test_versions_and_foreign_files(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        char other[160], text[160], missing[160], empty[160];
        snprintf(other, sizeof(other), "%s/other.db", f->dir);
        snprintf(text, sizeof(text), "%s/notes.txt", f->dir);
        snprintf(missing, sizeof(missing), "%s/missing.db", f->dir);
        snprintf(empty, sizeof(empty), "%s/empty.db", f->dir);

        assert_int_equal(journal_open_existing(missing, &j), -ENOENT);
        assert_null(j);

        FILE *fp = fopen(text, "w");
        assert_non_null(fp);
        for (int i = 0; i < 200; i++)
                fputs("this is not a database, it is a text file\n", fp);
        fclose(fp);
        assert_int_equal(journal_open_existing(text, &j), JOURNAL_ENOTJOURNAL);
        assert_int_equal(journal_open(text, &j), JOURNAL_ENOTJOURNAL);
        assert_string_equal(journal_strerror(JOURNAL_ENOTJOURNAL), "not a gauntlet journal");

        assert_int_equal(exec_sql(other, "CREATE TABLE t (x); INSERT INTO t VALUES (1)"), 0);
        assert_int_equal(journal_open(other, &j), JOURNAL_ENOTJOURNAL);
        assert_int_equal(journal_open_existing(other, &j), JOURNAL_ENOTJOURNAL);

        /* An empty file: a new journal for run, not a journal for report. */
        int fd = open(empty, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(journal_open_existing(empty, &j), JOURNAL_ENOTJOURNAL);
        assert_int_equal(journal_open(empty, &j), 0);
        journal_close(j);
        j = NULL;

        /* A journal from a newer gauntlet is refused, with words that say so. */
        assert_int_equal(journal_open(f->path, &j), 0);
        journal_close(j);
        j = NULL;
        assert_int_equal(exec_sql(f->path, "PRAGMA user_version = 99"), 0);
        assert_int_equal(journal_open(f->path, &j), JOURNAL_ENEWER);
        assert_int_equal(journal_open_existing(f->path, &j), JOURNAL_ENEWER);
        assert_null(j);
        assert_non_null(strstr(journal_strerror(JOURNAL_ENEWER), "newer gauntlet"));

        /* A journal with no sweep has no view. */
        assert_int_equal(journal_open_existing(empty, &j), 0);
        struct report_view *v = NULL;
        assert_int_equal(report_load_view(j, &v), -ENOENT);
        journal_close(j);
}

/* A journal of schema 1: tests/journals/v1.sql, written by gauntlet before the overload
 * verdict and the eval. */
static void make_v1(const char *path) {
        const char *src = getenv("SRCDIR");
        _cleanup_free_ char *sql_path = strdup_printf("%s/tests/journals/v1.sql", src && *src ? src : ".");
        _cleanup_free_ char *sql = NULL;
        size_t len = 0;
        assert_int_equal(read_file_capped(sql_path, 1 << 20, &sql, &len), 0);
        assert_int_equal(exec_sql(path, sql), 0);
}

/* A journal of schema 2 (the overload verdict, no eval): a current one without what
 * versions 3 to 5 added, which only add. */
/* What schema 6 added (the workload), dropped to make an older file. */
#define WORKLOAD_V6_DROP                                                                                     \
        "ALTER TABLE sweeps DROP COLUMN workload; ALTER TABLE sweeps DROP COLUMN workload_hash; "             \
        "ALTER TABLE attempts DROP COLUMN workload; ALTER TABLE sweeps DROP COLUMN against; "

static void make_v2(const char *path) {
        struct journal *j = NULL;
        int64_t sweep = 0;
        assert_int_equal(journal_open(path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        settle_pass(j, sweep, cells[0].id, 40001, 172.3);
        journal_close(j);
        assert_int_equal(exec_sql(path, "ALTER TABLE check_results DROP COLUMN detail; " WORKLOAD_V6_DROP
                                        "ALTER TABLE attempts DROP COLUMN prediction; ALTER TABLE sweeps DROP COLUMN search; "
                                        "DROP TABLE eval_results; ALTER TABLE attempts DROP COLUMN eval_set; "
                                        "ALTER TABLE attempts DROP COLUMN eval_us; ALTER TABLE sweeps DROP COLUMN eval; "
                                        "PRAGMA user_version = 2"),
                         0);
}

static int64_t user_version(const char *path) {
        sqlite3 *db;
        sqlite3_stmt *st;
        int64_t v = -1;
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
        if (sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

/* Writes an eval of three built-in questions for cells[1] in a new sweep, and reads it back. */
static void eval_round_trip(struct journal *j) {
        struct report_view *v = NULL;
        int64_t sweep = 0;
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        struct eval_options o;
        eval_options_init(&o);
        o.samples = 3;
        o.builtins = 1u << EVAL_PRODUCTS;
        struct eval_set set;
        assert_int_equal(eval_set_builtin(&o, &set), 0);
        json_t *settings = eval_settings_json(&o, &set, cells[0].id, "baseline");
        char *text = json_dumps(settings, JSON_COMPACT);
        assert_int_equal(journal_set_sweep_eval(j, sweep, text), 0);
        free(text);
        json_decref(settings);
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cells[1].id, 17);
        a.started_wall = now_wall_usec();
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        a.verdict = VERDICT_PASS;
        a.phase[PHASE_EVAL] = 700 * USEC_PER_MSEC;
        a.eval_set = &set;
        a.n_eval = 3;
        a.eval = calloc(3, sizeof(*a.eval));
        static const double lp[] = {-0.25, NAN};
        for (size_t i = 0; i < 3; i++)
                a.eval[i] = (struct check_result){.name = strdup(set.specs[i].name),
                                                  .verdict = i == 2 ? VERDICT_WRONG : VERDICT_PASS,
                                                  .output = strdup(i == 2 ? "no" : "42")};
        a.eval[0].logprobs = malloc(sizeof(lp));
        memcpy(a.eval[0].logprobs, lp, sizeof(lp));
        a.eval[0].n_logprobs = 2;
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_true(v->eval.on);
        assert_int_equal(v->eval.questions, 3);
        const struct report_cell *c = &v->cells[1];
        assert_string_equal(c->id, cells[1].id);
        assert_int_equal(c->phase[PHASE_EVAL], 700 * USEC_PER_MSEC);
        assert_true(c->eval.ran);
        assert_int_equal(c->eval.fig.n, 3);
        assert_int_equal(c->eval.fig.correct, 2);
        assert_string_equal(c->eval.answers[0].question, set.specs[0].prompt);
        assert_string_equal(c->eval.answers[0].key, set.keys[0]);
        assert_int_equal(c->eval.answers[0].n_logprobs, 2);
        assert_true(c->eval.answers[0].logprobs[0] == -0.25);
        assert_true(isnan(c->eval.answers[0].logprobs[1])); /* journaled as null */
        /* the named reference (cells[0]) has no eval of this set: the one that ran serves */
        assert_false(v->cells[0].eval.ran);
        assert_int_equal(v->eval.reference, 1);
        assert_true(v->eval.fell_back);
        report_view_free(v);
        eval_set_release(&set);
}

static void test_upgrade_v1(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct report_view *v = NULL;
        make_v1(f->path);
        assert_int_equal(user_version(f->path), 1);
        /* opened to write: upgraded through every step, the data kept */
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_schema_version(j), JOURNAL_SCHEMA_VERSION);
        assert_int_equal(user_version(f->path), JOURNAL_SCHEMA_VERSION);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->n_cells, 1);
        assert_string_equal(v->cells[0].id, "85d1e9d0c14cd30c");
        assert_int_equal(v->cells[0].verdict, VERDICT_PASS);
        assert_int_equal(v->cells[0].phase[PHASE_READY], 46302);
        assert_int_equal(v->cells[0].phase[PHASE_EVAL], 0);
        assert_int_equal(v->cells[0].phase[PHASE_BENCH], 377298);
        assert_non_null(v->cells[0].bench);
        assert_false(v->eval.on);
        report_view_free(v);
        /* no workload stored: a run adopts its own for the old figures (one attempt) */
        char *wt = (char *)1, *wh = (char *)1;
        int64_t n = -1;
        assert_int_equal(journal_workload(j, &wt, &wh), 0);
        assert_null(wt);
        assert_null(wh);
        assert_int_equal(journal_count_other_workload(j, "0123456789abcdef", &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(journal_adopt_workload(j, "{\"objective\":\"smoke\"}", "0123456789abcdef", &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(journal_count_other_workload(j, "0123456789abcdef", &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(journal_workload(j, &wt, &wh), 0);
        assert_string_equal(wt, "{\"objective\":\"smoke\"}");
        assert_string_equal(wh, "0123456789abcdef");
        free(wt);
        free(wh);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->cells[0].verdict, VERDICT_PASS);
        assert_int_equal(v->workload_left_out, 0);
        report_view_free(v);
        eval_round_trip(j);
        journal_close(j);
}

/* A journal of schema 4 (before the probes' detail): read as it is, then upgraded by a
 * writer; its checks have no detail either way. */
static void test_upgrade_v4(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct report_view *v = NULL;
        int64_t sweep = 0;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        settle_pass(j, sweep, cells[0].id, 40001, 172.3);
        /* a current journal keeps the detail */
        assert_int_equal(report_load_view(j, &v), 0);
        assert_null(v->cells[0].checks[0].detail);
        assert_string_equal(v->cells[0].checks[1].detail, "right in 5 of 5 at temperature 0.7");
        report_view_free(v);
        journal_close(j);
        assert_int_equal(exec_sql(f->path, "ALTER TABLE check_results DROP COLUMN detail; " WORKLOAD_V6_DROP "PRAGMA user_version = 4"), 0);
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        assert_int_equal(journal_schema_version(j), 4);
        assert_int_equal(journal_set_sweep_against(j, 1, "{}"), -EROFS);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->cells[0].n_checks, 2);
        assert_null(v->cells[0].checks[0].detail);
        report_view_free(v);
        journal_close(j);
        assert_int_equal(user_version(f->path), 4);
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(user_version(f->path), JOURNAL_SCHEMA_VERSION);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->cells[0].n_checks, 2);
        assert_null(v->cells[0].checks[0].detail);
        /* schema 9: a sweep run without --against has nothing; what one found reads back */
        assert_null(v->against);
        assert_int_equal(journal_set_sweep_against(j, v->sweep_id, "{\"old_winner\":\"moe=a\",\"stopped\":true}"), 0);
        assert_int_equal(journal_set_sweep_against(j, v->sweep_id + 1, "{}"), -ENOENT);
        report_view_free(v);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_string_equal(json_string_value(json_object_get(v->against, "old_winner")), "moe=a");
        assert_true(json_is_true(json_object_get(v->against, "stopped")));
        report_view_free(v);
        journal_close(j);
}

static void test_upgrade_v2(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct report_view *v = NULL;
        make_v2(f->path);
        assert_int_equal(user_version(f->path), 2);
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(user_version(f->path), JOURNAL_SCHEMA_VERSION);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->cells[0].verdict, VERDICT_PASS);
        assert_int_equal(v->cells[0].phase[PHASE_READY], 2500 * USEC_PER_MSEC);
        assert_int_equal(v->cells[0].n_checks, 2);
        assert_false(v->eval.on);
        report_view_free(v);
        eval_round_trip(j);
        journal_close(j);
}

/* The read API: what the journal hands out, row by row, with named fields. */
struct rows_seen {
        size_t n;
        char cell_ids[8][17];
        bool excluded[8];
        int distance[8];
        int64_t attempt_id;
        enum verdict verdict;
        int port;
        usec_t ready, spent;
        bool has_eval_set, has_prediction, has_bench;
        char check_names[4][32];
        bool check_detail[4];
        usec_t check_latency[4];
};

static int see_sweep(const struct journal_sweep_row *row, void *userdata) {
        struct rows_seen *r = userdata;
        assert_string_equal(row->engine, "testbed");
        assert_string_equal(row->model, "tiny");
        assert_string_equal(row->matrix_path, "demo.yaml");
        assert_string_equal(row->objective, "output_tokens_per_s@1");
        assert_string_equal(row->axes, "[\"moe\",\"gemm\"]");
        assert_int_equal(row->startup_timeout, 90 * USEC_PER_SEC);
        assert_null(row->how);
        r->n++;
        return 0;
}

static int see_cell(const struct journal_sweep_cell_row *row, void *userdata) {
        struct rows_seen *r = userdata;
        assert_int_equal(row->position, r->n);
        snprintf(r->cell_ids[r->n], 17, "%s", row->cell_id);
        r->excluded[r->n] = row->excluded;
        r->distance[r->n] = row->distance;
        r->n++;
        return 0;
}

static int see_attempt(const struct journal_attempt_row *row, void *userdata) {
        struct rows_seen *r = userdata;
        r->attempt_id = row->id;
        r->verdict = row->verdict;
        r->port = row->port;
        r->ready = row->phase[PHASE_READY];
        r->spent = row->spent;
        r->has_eval_set = row->eval_set != NULL;
        r->has_prediction = row->prediction != NULL;
        r->has_bench = row->bench != NULL;
        r->n++;
        return 0;
}

static int see_check(const struct journal_check_row *row, void *userdata) {
        struct rows_seen *r = userdata;
        snprintf(r->check_names[r->n], sizeof(r->check_names[0]), "%s", row->name);
        r->check_detail[r->n] = row->detail != NULL;
        r->check_latency[r->n] = row->latency;
        r->n++;
        return 0;
}

/* A claim of cell_id for sweep (its settled launches: launches) under budget; the attempt
 * claimed is left running (*ret_id), or the claim's error. */
static int claim(struct journal *j, int64_t sweep, const char *cell_id, unsigned launches, size_t budget,
                 int64_t *ret_id) {
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cell_id, 17);
        a.started_wall = now_wall_usec();
        a.log_path = strdup("runs/x/claimed.log");
        int r = journal_attempt_claim(j, &a, launches, budget);
        *ret_id = a.id;
        attempt_release(&a);
        return r;
}

/* A search's launches as its budget counts them (settled, abandoned, running; not skipped),
 * and a claim that would pass the budget refused in the same statement that would insert
 * it: two workers never both take the budget's last launch. */
static void test_claim_budget(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep = 0, n = -1, id = 0, id2 = 0;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        assert_int_equal(journal_sweep_launches(j, sweep, &n), 0);
        assert_int_equal(n, 0);
        settle_pass(j, sweep, cells[0].id, 40001, 100.0);
        /* one running (claimed), then abandoned: both count */
        assert_int_equal(claim(j, sweep, cells[1].id, 0, 3, &id), 0);
        assert_int_equal(journal_sweep_launches(j, sweep, &n), 0);
        assert_int_equal(n, 2);
        /* the cell is running: another claim of it is refused whatever the budget */
        assert_int_equal(claim(j, sweep, cells[1].id, 0, 0, &id2), -EALREADY);
        assert_int_equal(journal_attempt_abandon(j, id, "launched again"), 0);
        assert_int_equal(journal_sweep_launches(j, sweep, &n), 0);
        assert_int_equal(n, 2);
        /* budget 3: one more fits, then none; no budget (0): always */
        assert_int_equal(claim(j, sweep, cells[3].id, 0, 2, &id2), -EALREADY);
        assert_int_equal(claim(j, sweep, cells[3].id, 0, 3, &id2), 0);
        assert_int_equal(journal_sweep_launches(j, sweep, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(journal_attempt_abandon(j, id2, "interrupted by a signal"), 0);
        assert_int_equal(claim(j, sweep, cells[1].id, 0, 3, &id), -EALREADY);
        assert_int_equal(claim(j, sweep, cells[1].id, 0, 0, &id), 0);
        assert_int_equal(journal_sweep_launches(j, sweep, &n), 0);
        assert_int_equal(n, 4);
        /* each cell's abandoned attempts, and the latest one's reason */
        assert_int_equal(journal_attempt_abandon(j, id, "port 40002 taken by another process"), 0);
        char *why = NULL;
        assert_int_equal(journal_cell_abandoned(j, cells[1].id, NULL, &n, &why), 0);
        assert_int_equal(n, 2);
        assert_string_equal(why, "port 40002 taken by another process");
        free(why);
        assert_int_equal(journal_cell_abandoned(j, cells[3].id, NULL, &n, &why), 0);
        assert_int_equal(n, 1);
        assert_string_equal(why, "interrupted by a signal");
        free(why);
        assert_int_equal(journal_cell_abandoned(j, cells[0].id, NULL, &n, NULL), 0);
        assert_int_equal(n, 0);
        journal_close(j);
}

static int stop_early(const struct journal_sweep_cell_row *row, void *userdata) {
        (void)row;
        ++*(size_t *)userdata;
        return -ECANCELED;
}

static void test_read_api(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep = 0;
        struct rows_seen seen = {0};
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_latest_sweep(j, see_sweep, &seen), -ENOENT);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        settle_pass(j, sweep, cells[0].id, 40001, 172.3);

        assert_int_equal(journal_latest_sweep(j, see_sweep, &seen), 0);
        assert_int_equal(seen.n, 1);
        seen = (struct rows_seen){0};
        assert_int_equal(journal_sweep_cells(j, sweep, see_cell, &seen), 0);
        assert_int_equal(seen.n, ELEMENTSOF(cells));
        for (size_t i = 0; i < ELEMENTSOF(cells); i++) {
                assert_string_equal(seen.cell_ids[i], cells[i].id);
                assert_int_equal(seen.excluded[i], cells[i].excluded);
                assert_int_equal(seen.distance[i], cells[i].distance);
        }
        /* the caller's function stops the read with its own error */
        size_t calls = 0;
        assert_int_equal(journal_sweep_cells(j, sweep, stop_early, &calls), -ECANCELED);
        assert_int_equal(calls, 1);

        seen = (struct rows_seen){0};
        assert_int_equal(journal_cell_shown_attempt(j, cells[0].id, NULL, see_attempt, &seen), 0);
        assert_int_equal(seen.n, 1);
        assert_true(seen.attempt_id > 0);
        assert_int_equal(seen.verdict, VERDICT_PASS);
        assert_int_equal(seen.port, 40001);
        assert_int_equal(seen.ready, 2500 * USEC_PER_MSEC);
        assert_int_equal(seen.spent, 2500 * USEC_PER_MSEC);
        assert_true(seen.has_bench);
        assert_false(seen.has_prediction);
        int64_t attempt = seen.attempt_id;
        /* a cell never settled has no attempt to show, and no launch */
        seen = (struct rows_seen){0};
        assert_int_equal(journal_cell_shown_attempt(j, cells[1].id, NULL, see_attempt, &seen), -ENOENT);
        assert_int_equal(journal_cell_launches(j, cells[1].id, NULL, see_attempt, &seen), 0);
        assert_int_equal(seen.n, 0);
        /* another workload's figures are not this one's */
        assert_int_equal(journal_cell_launches(j, cells[0].id, "0123456789abcdef", see_attempt, &seen), 0);
        assert_int_equal(seen.n, 0);
        bool other = false;
        assert_int_equal(journal_cell_other_workload(j, cells[0].id, "0123456789abcdef", &other), 0);
        assert_true(other);
        int64_t abandoned = -1;
        char *why = (char *)"unset";
        assert_int_equal(journal_cell_abandoned(j, cells[0].id, NULL, &abandoned, &why), 0);
        assert_int_equal(abandoned, 0);
        assert_null(why);

        seen = (struct rows_seen){0};
        assert_int_equal(journal_attempt_checks(j, attempt, see_check, &seen), 0);
        assert_int_equal(seen.n, 2);
        assert_string_equal(seen.check_names[0], "ok");
        assert_string_equal(seen.check_names[1], "math/stream");
        assert_false(seen.check_detail[0]);
        assert_true(seen.check_detail[1]);
        assert_int_equal(seen.check_latency[1], 300 * USEC_PER_MSEC);
        journal_close(j);

        /* a schema 2 journal, read as it is: what it does not hold comes back NULL */
        assert_int_equal(unlink(f->path), 0);
        make_v2(f->path);
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        assert_int_equal(journal_schema_version(j), 2);
        seen = (struct rows_seen){0};
        assert_int_equal(journal_cell_shown_attempt(j, cells[0].id, NULL, see_attempt, &seen), 0);
        assert_int_equal(seen.verdict, VERDICT_PASS);
        assert_false(seen.has_eval_set);
        assert_false(seen.has_prediction);
        attempt = seen.attempt_id;
        seen = (struct rows_seen){0};
        assert_int_equal(journal_attempt_checks(j, attempt, see_check, &seen), 0);
        assert_int_equal(seen.n, 2);
        assert_false(seen.check_detail[1]);
        journal_close(j);
        assert_int_equal(user_version(f->path), 2);
}

/* No descriptor of the journal may leak into a server gauntlet spawns. */
static void test_cloexec(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        int seen = 0;
        for (int fd = 0; fd < 1024; fd++) {
                char link[64], target[512];
                snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = 0;
                if (!strstr(target, f->dir))
                        continue;
                seen++;
                int flags = fcntl(fd, F_GETFD);
                assert_true(flags >= 0 && (flags & FD_CLOEXEC));
        }
        assert_true(seen >= 2); /* the database and its WAL at least */
        journal_close(j);
}

/* A settled verdict survives gauntlet being killed right after: the child settles and
 * dies by SIGKILL without closing anything, the parent reads the verdict back. */
static void test_survives_sigkill(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        journal_close(j);

        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct journal *cj = NULL;
                if (journal_open(f->path, &cj) < 0)
                        _exit(3);
                struct attempt a;
                attempt_init(&a);
                a.sweep_id = sweep;
                memcpy(a.cell_id, cells[3].id, 17);
                if (journal_attempt_begin(cj, &a) < 0 || attempt_set_verdict(&a, VERDICT_TIMEOUT, "startup", "not ready in 90s") < 0 ||
                    journal_attempt_settle(cj, &a) < 0)
                        _exit(4);
                kill(getpid(), SIGKILL);
                _exit(5);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        j = NULL;
        bool settled = false;
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        assert_int_equal(journal_cell_settled(j, cells[3].id, &settled), 0);
        assert_true(settled);
        struct report_view *v = NULL;
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->cells[3].verdict, VERDICT_TIMEOUT);
        assert_string_equal(v->cells[3].evidence, "not ready in 90s");
        report_view_free(v);
        journal_close(j);
}

/* Another process that opens the journal while a sweep holds it, and closes it again (a
 * `gauntlet report`, a side-by-side worker), must not take it for the last connection:
 * that one checkpoints and deletes the WAL under the sweep. journal_open once dropped
 * the sweep's lock on the file by closing a descriptor of its own, and a parallel sweep
 * then read its journal as damaged. */
static void test_other_process_closes(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep, count = 0;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);

        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                if (null >= 0)
                        dup2(null, STDOUT_FILENO);
                execlp("sqlite3", "sqlite3", f->path, "SELECT count(*) FROM sweeps", (char *)NULL);
                _exit(127);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
                fail_msg("cannot run the sqlite3 program (.ci/install-deps installs it)");
        assert_int_equal(WEXITSTATUS(status), 0);

        char wal[160];
        struct stat st;
        snprintf(wal, sizeof(wal), "%s-wal", f->path);
        assert_int_equal(stat(wal, &st), 0); /* still there: the other one was not the last */
        int64_t first = sweep;
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        struct report_view *v = NULL;
        /* the latest sweep is begun but has no cells yet (side by side, another worker may
         * read it so): the view is the latest sweep whose cells are recorded */
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->sweep_id, first);
        assert_int_equal(v->n_cells, ELEMENTSOF(cells));
        report_view_free(v);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_int_equal(v->sweep_id, sweep);
        assert_int_equal(v->n_cells, ELEMENTSOF(cells));
        report_view_free(v);
        journal_close(j);

        j = NULL;
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        assert_int_equal(journal_count_sweeps(j, &count), 0);
        assert_int_equal(count, 2);
        journal_close(j);
}

/* Every journal its own run folder, whatever its name (docs/journal.md "The run folder"). */
static void test_log_root(void **state) {
        (void)state;
        static const char *const cases[][3] = {
                /* path, run folder, the folder before (NULL: none) */
                {"runs/demo.db", "runs/demo", NULL},
                {"w", "w.logs", NULL},
                {"w.logs.db", "w.logs.db.logs", "w.logs"},
                {"d/w.logs.db", "d/w.logs.db.logs", "d/w.logs"},
                {"x.sqlite", "x.sqlite.logs", NULL},
                {".db", ".db.logs", NULL},
                {"a.logs", "a.logs.logs", NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *r = journal_log_root(cases[i][0]), *b = journal_log_root_before(cases[i][0]);
                assert_string_equal(r, cases[i][1]);
                if (cases[i][2])
                        assert_string_equal(b, cases[i][2]);
                else
                        assert_null(b);
                free(r);
                free(b);
        }
}

/* ---- the rule for counting tokens, side by side ---- */

/* Settles cell_id as passing at `started`, its tokens counted by rule ("own", agreed, or
 * "bytes" from another cell) at bpt bytes a token. */
static void settle_counted(struct journal *j, int64_t sweep, const char *cell_id, usec_t started, const char *rule,
                           const char *from, double bpt) {
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cell_id, 17);
        a.started_wall = started;
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        a.verdict = VERDICT_PASS;
        json_t *count = json_pack("{s:s, s:b, s:f}", "rule", rule, "agreed", strcmp(rule, "own") == 0, "bytes_per_token", bpt);
        if (from)
                json_object_set_new(count, "from", json_string(from));
        a.bench = json_pack("[{s:i, s:i, s:f, s:o}]", "concurrency", 1, "completed", 8, "output_tokens_per_s", 100.0,
                            "count", count);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        attempt_release(&a);
}

/* Two workers whose first cells passed at once each adopted its own cell's bytes per token
 * (4.0 and 5.0): at their next cell both count by the one that started first, and stay
 * with it when that cell is measured again later. */
static void test_count_rule_side_by_side(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        int64_t sweep = 0;
        assert_int_equal(journal_open(f->path, &j), 0);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        settle_counted(j, sweep, cells[0].id, 1000, "own", NULL, 4.0);
        settle_counted(j, sweep, cells[1].id, 2000, "own", NULL, 5.0);

        /* worker B, its rule from cells[1] */
        struct sweep_count b = {0};
        json_t *own = json_pack("[{s:i, s:{s:s, s:b, s:f}}]", "concurrency", 1, "count", "rule", "own", "agreed", 1,
                                "bytes_per_token", 5.0);
        assert_int_equal(count_rule_adopt(&b.rule, own, cells[1].id), 1);
        json_decref(own);
        b.from_started = 2000;
        assert_int_equal(sweep_count_from_journal(j, &b), 1);
        assert_true(fabs(b.rule.bytes_per_token - 4.0) < 1e-9);
        assert_string_equal(b.rule.from, cells[0].id);
        assert_int_equal(sweep_count_from_journal(j, &b), 0); /* settled: no change */
        assert_true(fabs(b.rule.bytes_per_token - 4.0) < 1e-9);

        /* worker A, its rule from cells[0]: it keeps it */
        struct sweep_count a = {0};
        assert_int_equal(sweep_count_from_journal(j, &a), 0); /* a fresh sweep takes the earliest */
        assert_true(fabs(a.rule.bytes_per_token - 4.0) < 1e-9);
        assert_string_equal(a.rule.from, cells[0].id);
        assert_int_equal(a.from_started, 1000);

        /* cells[0] measured again later, counted by its own rule: neither moves */
        settle_counted(j, sweep, cells[0].id, 3000, "bytes", cells[0].id, 4.0);
        settle_counted(j, sweep, cells[3].id, 3500, "bytes", cells[0].id, 4.0);
        assert_int_equal(sweep_count_from_journal(j, &a), 0);
        assert_int_equal(sweep_count_from_journal(j, &b), 0);
        assert_true(fabs(a.rule.bytes_per_token - 4.0) < 1e-9);
        assert_true(fabs(b.rule.bytes_per_token - 4.0) < 1e-9);
        assert_string_equal(b.rule.from, cells[0].id);
        /* a run resumed: cells[0] shows its later launch (3000), cells[1] its only one
         * (2000); the rule is still cells[0]'s, whose first launch came first */
        struct sweep_count c = {0};
        assert_int_equal(sweep_count_from_journal(j, &c), 0);
        assert_true(fabs(c.rule.bytes_per_token - 4.0) < 1e-9);
        assert_string_equal(c.rule.from, cells[0].id);
        assert_int_equal(c.from_started, 1000);
        sweep_count_release(&c);
        sweep_count_release(&a);
        sweep_count_release(&b);
        journal_close(j);
}

/* ---- the verdicts: decided once, journaled, read back ---- */

/* Settles cell_id of sweep with the eval's n_right answers of set right (the rest wrong,
 * with another output), a bench figure tok_s; returns the attempt's id. */
static int64_t settle_eval(struct journal *j, int64_t sweep, const char *cell_id, const struct eval_set *set,
                           size_t n_right, double tok_s) {
        struct attempt a;
        attempt_init(&a);
        a.sweep_id = sweep;
        memcpy(a.cell_id, cell_id, 17);
        a.started_wall = now_wall_usec();
        assert_int_equal(journal_attempt_begin(j, &a), 0);
        a.verdict = VERDICT_PASS;
        a.eval_set = set;
        a.n_eval = set->n;
        a.eval = calloc(set->n, sizeof(*a.eval));
        for (size_t i = 0; i < set->n; i++)
                a.eval[i] = (struct check_result){.name = strdup(set->specs[i].name),
                                                  .verdict = i < n_right ? VERDICT_PASS : VERDICT_WRONG,
                                                  .output = strdup(i < n_right ? "right" : "no")};
        a.bench = json_pack("[{s:i, s:i, s:f}]", "concurrency", 1, "completed", 8, "output_tokens_per_s", tok_s);
        assert_int_equal(journal_attempt_settle(j, &a), 0);
        int64_t id = a.id;
        attempt_release(&a);
        return id;
}

/* A sweep with an eval of 40 questions: cells[0] answers all, cells[1] half (significantly
 * below: the gate turns it wrong/accuracy), cells[3] all; cells[2] is excluded. */
static int64_t eval_sweep(struct journal *j, struct eval_set *set, int64_t ids[4]) {
        int64_t sweep = 0;
        struct eval_options o;
        eval_options_init(&o);
        o.samples = 40;
        o.builtins = 1u << EVAL_PRODUCTS;
        assert_int_equal(eval_set_builtin(&o, set), 0);
        assert_int_equal(set->n, 40);
        assert_int_equal(journal_begin_sweep(j, &matrix, "{}", &sweep), 0);
        assert_int_equal(journal_record_cells(j, sweep, &matrix, cells, ELEMENTSOF(cells)), 0);
        json_t *settings = eval_settings_json(&o, set, NULL, NULL);
        char *text = json_dumps(settings, JSON_COMPACT);
        assert_int_equal(journal_set_sweep_eval(j, sweep, text), 0);
        free(text);
        json_decref(settings);
        ids[0] = settle_eval(j, sweep, cells[0].id, set, 40, 100);
        ids[1] = settle_eval(j, sweep, cells[1].id, set, 20, 300);
        ids[3] = settle_eval(j, sweep, cells[3].id, set, 40, 200);
        return sweep;
}

struct verdict_rows {
        size_t n;
        int64_t attempt[8];
        enum verdict verdict[8];
        char *cause[8];
};

static int keep_verdict(const struct journal_verdict_row *row, void *userdata) {
        struct verdict_rows *r = userdata;
        assert_true(r->n < 8);
        r->attempt[r->n] = row->attempt_id;
        r->verdict[r->n] = row->verdict;
        r->cause[r->n++] = row->cause ? strdup(row->cause) : NULL;
        return 0;
}

static void verdict_rows_release(struct verdict_rows *r) {
        for (size_t i = 0; i < r->n; i++)
                free(r->cause[i]);
        *r = (struct verdict_rows){0};
}

/* (a) the verdicts written when cells settle, read back through the read API */
static void test_verdicts_settle(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct eval_set set;
        int64_t ids[4] = {0};
        struct verdict_rows rows = {0};
        assert_int_equal(journal_open(f->path, &j), 0);
        int64_t sweep = eval_sweep(j, &set, ids);
        /* nothing journaled yet */
        assert_int_equal(journal_sweep_verdicts(j, sweep, keep_verdict, &rows), 0);
        assert_int_equal(rows.n, 0);
        /* one row per shown attempt (the excluded cell has none), the gate applied */
        assert_int_equal(report_settle_verdicts(j, 0), 3);
        assert_int_equal(journal_sweep_verdicts(j, sweep, keep_verdict, &rows), 0);
        assert_int_equal(rows.n, 3);
        assert_true(rows.attempt[0] == ids[0] && rows.verdict[0] == VERDICT_PASS && !rows.cause[0]);
        assert_true(rows.attempt[1] == ids[1] && rows.verdict[1] == VERDICT_WRONG);
        assert_string_equal(rows.cause[1], "accuracy");
        assert_true(rows.attempt[2] == ids[3] && rows.verdict[2] == VERDICT_PASS);
        verdict_rows_release(&rows);
        /* written again: the sweep's rows replaced, not added to */
        assert_int_equal(report_settle_verdicts(j, 0), 3);
        assert_int_equal(journal_sweep_verdicts(j, sweep, keep_verdict, &rows), 0);
        assert_int_equal(rows.n, 3);
        verdict_rows_release(&rows);
        /* another sweep's rows are its own */
        assert_int_equal(journal_sweep_verdicts(j, sweep + 1, keep_verdict, &rows), 0);
        assert_int_equal(rows.n, 0);
        journal_close(j);
        eval_set_release(&set);
}

/* (b) the journal is the truth: a report shows the journaled verdicts, over what the gate
 * would decide on load; a sweep without rows is decided on load */
static void test_verdicts_journal_wins(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct report_view *v = NULL;
        struct eval_set set;
        int64_t ids[4] = {0};
        assert_int_equal(journal_open(f->path, &j), 0);
        eval_sweep(j, &set, ids);
        /* no rows: decided on load */
        assert_int_equal(report_load_view(j, &v), 0);
        assert_string_equal(report_cell_verdict(&v->cells[1]), "wrong");
        assert_string_equal(report_cell_cause(&v->cells[1]), "accuracy");
        assert_int_equal(v->eval.gated, 1);
        assert_string_equal(report_best(v), cells[3].id);
        report_view_free(v);
        assert_int_equal(report_settle_verdicts(j, 0), 3);
        journal_close(j);
        j = NULL;
        /* the rows say otherwise: cells[1] passed, cells[3] diverged */
        char sql[512];
        snprintf(sql, sizeof(sql),
                 "UPDATE verdicts SET verdict = 'pass', cause = NULL, evidence = NULL WHERE attempt_id = %lld; "
                 "UPDATE verdicts SET verdict = 'wrong', cause = 'divergence', evidence = 'as journaled' "
                 "WHERE attempt_id = %lld",
                 (long long)ids[1], (long long)ids[3]);
        assert_int_equal(exec_sql(f->path, sql), 0);
        assert_int_equal(journal_open_existing(f->path, &j), 0);
        assert_int_equal(report_load_view(j, &v), 0);
        assert_string_equal(report_cell_verdict(&v->cells[1]), "pass");
        assert_null(report_cell_cause(&v->cells[1]));
        assert_int_equal(v->cells[1].eval.gate, EVAL_GATE_NONE);
        assert_true(v->cells[1].eval.compared); /* the figures are still shown */
        assert_string_equal(report_cell_verdict(&v->cells[3]), "wrong");
        assert_string_equal(report_cell_cause(&v->cells[3]), "divergence");
        assert_string_equal(v->cells[3].evidence, "as journaled");
        assert_int_equal(v->cells[3].eval.gate, EVAL_GATE_AGREEMENT);
        assert_int_equal(v->eval.gated, 1);
        /* the best follows: cells[1] passes with the top figure */
        assert_string_equal(report_best(v), cells[1].id);
        report_view_free(v);
        journal_close(j);
        eval_set_release(&set);
}

/* A renderer of the test's own: it prints only what the results API says of the view. */
static char *plain_render(const struct report_view *v) {
        struct buf b;
        buf_init(&b, 0);
        const char *best = report_best(v);
        buf_printf(&b, "best %s\n", best ? best : "-");
        for (size_t i = 0; i < report_cells(v); i++) {
                const char *cause = report_cell_cause(&v->cells[i]);
                buf_printf(&b, "%s %s %s\n", v->cells[i].id, report_cell_verdict(&v->cells[i]), cause ? cause : "-");
        }
        return buf_detach(&b);
}

/* The same lines from report_json's document. */
static char *json_render(const json_t *doc) {
        struct buf b;
        buf_init(&b, 0);
        const char *best = json_string_value(json_object_get(doc, "best"));
        buf_printf(&b, "best %s\n", best ? best : "-");
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(doc, "cells"), i, c) {
                const char *verdict = json_string_value(json_object_get(c, "verdict"));
                const char *cause = json_string_value(json_object_get(c, "cause"));
                buf_printf(&b, "%s %s %s\n", json_string_value(json_object_get(c, "id")), verdict ? verdict : "not run",
                           cause ? cause : "-");
        }
        return buf_detach(&b);
}

/* (c) the renderers decide nothing: a renderer swapped in that only prints the view gets
 * the same best cell and verdicts as report_json, with the journal's rows and without */
static void test_verdicts_renderer_swap(void **state) {
        struct fixture *f = *state;
        struct journal *j = NULL;
        struct eval_set set;
        int64_t ids[4] = {0};
        assert_int_equal(journal_open(f->path, &j), 0);
        eval_sweep(j, &set, ids);
        for (int round = 0; round < 2; round++) {
                if (round == 1) {
                        assert_int_equal(report_settle_verdicts(j, 0), 3);
                        char sql[160];
                        snprintf(sql, sizeof(sql), "UPDATE verdicts SET verdict = 'pass', cause = NULL WHERE attempt_id = %lld",
                                 (long long)ids[1]);
                        assert_int_equal(exec_sql(f->path, sql), 0);
                }
                struct report_view *v = NULL;
                json_t *doc = NULL;
                assert_int_equal(report_load_view(j, &v), 0);
                assert_int_equal(report_json(v, "test", &doc), 0);
                char *plain = plain_render(v), *fromjson = json_render(doc);
                assert_string_equal(plain, fromjson);
                /* and it says something: the best, the gate's verdict or the journal's */
                assert_non_null(strstr(plain, round ? "best 00000000000000a1" : "best 00000000000000b1"));
                assert_non_null(strstr(plain, round ? "00000000000000a1 pass -" : "00000000000000a1 wrong accuracy"));
                assert_non_null(strstr(plain, "00000000000000b0 skipped excluded"));
                free(plain);
                free(fromjson);
                json_decref(doc);
                report_view_free(v);
        }
        journal_close(j);
        eval_set_release(&set);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
                cmocka_unit_test_setup_teardown(test_settled_and_abandon, setup, teardown),
                cmocka_unit_test_setup_teardown(test_orphans, setup, teardown),
                cmocka_unit_test_setup_teardown(test_versions_and_foreign_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upgrade_v1, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upgrade_v4, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upgrade_v2, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_api, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cloexec, setup, teardown),
                cmocka_unit_test_setup_teardown(test_survives_sigkill, setup, teardown),
                cmocka_unit_test_setup_teardown(test_other_process_closes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_count_rule_side_by_side, setup, teardown),
                cmocka_unit_test(test_log_root),
                cmocka_unit_test_setup_teardown(test_claim_budget, setup, teardown),
                cmocka_unit_test_setup_teardown(test_verdicts_settle, setup, teardown),
                cmocka_unit_test_setup_teardown(test_verdicts_journal_wins, setup, teardown),
                cmocka_unit_test_setup_teardown(test_verdicts_renderer_swap, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
