/* test_slurm.c -- the Slurm launcher's pure parts: srun's command line, what squeue,
 * scontrol and sacct print, a job's end state as a verdict, the matrix's `slurm:` map, and
 * srun's lines kept out of a server's evidence. The daemons themselves are
 * tests/integration/slurm.sh's and slurm-limits.sh's.
 *
 * The scontrol lines below are Slurm 22.05's (Debian 12) output, copied from a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/diagnose.h"
#include "config/cells.h"
#include "config/matrix.h"
#include "proc/procs.h"
#include "base/profile.h"
#include "proc/slurm.h"
#include "proc/supervise.h"
#include "base/util.h"

static const char timeout_job[] =
        "JobId=9 JobName=gauntlet-14eb6eeb02f752cff1151443401d5d2d UserId=root(0) GroupId=root(0) MCS_label=N/A "
        "Priority=4294901752 Nice=0 Account=(null) QOS=(null) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) "
        "Requeue=1 Restarts=0 BatchFlag=0 Reboot=0 ExitCode=0:0 RunTime=00:01:06 TimeLimit=00:01:00 TimeMin=N/A "
        "SubmitTime=2026-12-01T13:56:30 EligibleTime=2026-12-01T13:56:30 StartTime=2026-12-01T13:56:30 "
        "EndTime=2026-12-01T13:57:36 Partition=debug AllocNode:Sid=localhost:11653 ReqNodeList=(null) "
        "ExcNodeList=(null) NodeList=gauntlet BatchHost=gauntlet NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 "
        "ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
        "Comment=gauntlet cell 3f9c0a1d Command=/usr/bin/gauntlet-testbed WorkDir=/tmp/sl Power= \n";

static const char pending_job[] =
        "JobId=6 JobName=true UserId=root(0) GroupId=root(0) JobState=PENDING Reason=ReqNodeNotAvail, "
        "UnavailableNodes:node[3-4] Dependency=(null) ExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED "
        "StartTime=Unknown NodeList= NumNodes=13 Power= \n";

static void test_field(void **state) {
        char *v = NULL;
        assert_int_equal(slurm_field(timeout_job, "JobState", &v), 1);
        assert_string_equal(v, "TIMEOUT");
        free(v);
        /* a value with spaces runs to the next Key= */
        assert_int_equal(slurm_field(timeout_job, "Comment", &v), 1);
        assert_string_equal(v, "gauntlet cell 3f9c0a1d");
        free(v);
        assert_int_equal(slurm_field(pending_job, "Reason", &v), 1);
        assert_string_equal(v, "ReqNodeNotAvail, UnavailableNodes:node[3-4]");
        free(v);
        /* an empty value, and the last key of the line */
        assert_int_equal(slurm_field(pending_job, "NodeList", &v), 1);
        assert_string_equal(v, "");
        free(v);
        assert_int_equal(slurm_field(pending_job, "Power", &v), 1);
        assert_string_equal(v, "");
        free(v);
        /* keys with ':' and '/', and a key that is only the end of another */
        assert_int_equal(slurm_field(timeout_job, "AllocNode:Sid", &v), 1);
        assert_string_equal(v, "localhost:11653");
        free(v);
        assert_int_equal(slurm_field(timeout_job, "Node", &v), 0);
        assert_int_equal(slurm_field(timeout_job, "List", &v), 0);
        assert_int_equal(slurm_field("", "JobId", &v), 0);
        assert_int_equal(slurm_field("slurm_load_jobs error: Invalid job id specified\n", "JobId", &v), 0);
        /* only the first line counts */
        assert_int_equal(slurm_field("A=1\nB=2\n", "B", &v), 0);
}

static void test_scontrol_job(void **state) {
        struct slurm_job_info j = {0};
        assert_int_equal(slurm_parse_scontrol_job(timeout_job, &j), 1);
        assert_int_equal(j.id, 9);
        assert_string_equal(j.state, "TIMEOUT");
        assert_string_equal(j.reason, "TimeLimit");
        assert_string_equal(j.nodes, "gauntlet");
        assert_string_equal(j.exit_code, "0:0");
        assert_string_equal(j.run_time, "00:01:06");
        assert_string_equal(j.time_limit, "00:01:00");
        slurm_job_info_release(&j);
        assert_int_equal(slurm_parse_scontrol_job("JobId=x JobState=RUNNING", &j), 0);
        assert_int_equal(slurm_parse_scontrol_job("JobId=4", &j), 0); /* no state: not a job record */
        assert_int_equal(slurm_parse_scontrol_job("No jobs in the system\n", &j), 0);
}

static void test_sacct(void **state) {
        struct slurm_job_info j = {0};
        assert_int_equal(slurm_parse_sacct("12|CANCELLED by 0|0:15|node1|00:00:03|01:00:00\n", &j), 1);
        assert_int_equal(j.id, 12);
        assert_string_equal(j.state, "CANCELLED");
        assert_string_equal(j.exit_code, "0:15");
        assert_string_equal(j.nodes, "node1");
        assert_string_equal(j.run_time, "00:00:03");
        assert_string_equal(j.time_limit, "01:00:00");
        slurm_job_info_release(&j);
        assert_int_equal(slurm_parse_sacct("", &j), 0);
        assert_int_equal(slurm_parse_sacct("12|TIMEOUT|0:0\n", &j), 0);
        assert_int_equal(slurm_parse_sacct("x|TIMEOUT|0:0|n|1|2\n", &j), 0);
}

static void test_squeue(void **state) {
        struct slurm_job_info j = {0};
        assert_int_equal(slurm_parse_squeue("23|RUNNING|gauntlet|None\n", &j), 1);
        assert_int_equal(j.id, 23);
        assert_string_equal(j.state, "RUNNING");
        assert_string_equal(j.nodes, "gauntlet");
        assert_string_equal(j.reason, "None");
        slurm_job_info_release(&j);
        /* a reason may hold '|'-free spaces and commas; the node list is empty while pending */
        assert_int_equal(slurm_parse_squeue("\n6|PENDING||ReqNodeNotAvail, UnavailableNodes:n1\n", &j), 1);
        assert_string_equal(j.nodes, "");
        assert_string_equal(j.reason, "ReqNodeNotAvail, UnavailableNodes:n1");
        slurm_job_info_release(&j);
        assert_int_equal(slurm_parse_squeue("", &j), 0);
        assert_int_equal(slurm_parse_squeue("\n", &j), 0);
        assert_int_equal(slurm_parse_squeue("23|RUNNING|gauntlet\n", &j), -EBADMSG);
        assert_int_equal(slurm_parse_squeue("12_3|RUNNING|n|None\n", &j), -EBADMSG);
        assert_int_equal(slurm_parse_squeue("x|RUNNING|n|None\n", &j), -EBADMSG);
        assert_int_equal(slurm_parse_squeue("5||n|None\n", &j), -EBADMSG);
}

static void test_exit_code_and_states(void **state) {
        int st = -1, sig = -1;
        assert_int_equal(slurm_parse_exit_code("3:0", &st, &sig), 0);
        assert_int_equal(st, 3);
        assert_int_equal(sig, 0);
        assert_int_equal(slurm_parse_exit_code("0:9", &st, &sig), 0);
        assert_int_equal(sig, 9);
        assert_int_equal(slurm_parse_exit_code("3", &st, &sig), -EINVAL);
        assert_int_equal(slurm_parse_exit_code("3:", &st, &sig), -EINVAL);
        assert_int_equal(slurm_parse_exit_code("300:0", &st, &sig), -EINVAL);
        assert_int_equal(slurm_parse_exit_code("1:2x", &st, &sig), -EINVAL);
        assert_true(slurm_state_active("PENDING"));
        assert_true(slurm_state_active("RUNNING"));
        assert_true(slurm_state_active("COMPLETING"));
        assert_false(slurm_state_active("COMPLETED"));
        assert_false(slurm_state_active("CANCELLED"));
        assert_false(slurm_state_active("TIMEOUT"));
        assert_false(slurm_state_active(NULL));
}

/* The verdict a job's end state gives, and its evidence. */
static void expect_outcome(const char *state, const char *reason, int want, enum verdict v, const char *cause,
                           const char *evidence) {
        struct slurm_job_info j = {.id = 23, .state = (char *)state, .reason = (char *)reason,
                                   .nodes = (char *)"gpu-07", .run_time = (char *)"00:01:02",
                                   .time_limit = (char *)"00:01:00"};
        struct server_outcome o = {0};
        int r = slurm_state_outcome(&j, "slurmstepd: error: *** STEP 23.0 ON gpu-07 CANCELLED AT x ***", &o);
        assert_int_equal(r, want);
        if (!want)
                return;
        assert_int_equal(o.verdict, v);
        assert_string_equal(o.cause, cause);
        if (strcmp(o.evidence, evidence) != 0)
                fail_msg("%s: evidence '%s', want '%s'", state, o.evidence, evidence);
        free(o.evidence);
}

static void test_outcomes(void **state) {
        const char *stepd = "; slurmstepd: error: *** STEP 23.0 ON gpu-07 CANCELLED AT x ***";
        char want[512];
        /* the server ended by itself: its log decides */
        expect_outcome("COMPLETED", "None", 0, 0, NULL, NULL);
        expect_outcome("FAILED", "NonZeroExitCode", 0, 0, NULL, NULL);
        snprintf(want, sizeof(want),
                 "Slurm job 23 TIMEOUT (reason TimeLimit): its time limit ran out, after 00:01:02 of 00:01:00 on gpu-07%s",
                 stepd);
        expect_outcome("TIMEOUT", "TimeLimit", 1, VERDICT_TIMEOUT, "time-limit", want);
        snprintf(want, sizeof(want), "Slurm job 23 PREEMPTED: it was preempted, after 00:01:02 of 00:01:00 on gpu-07%s",
                 stepd);
        expect_outcome("PREEMPTED", "None", 1, VERDICT_ERROR, "preempted", want);
        snprintf(want, sizeof(want),
                 "Slurm job 23 NODE_FAIL (reason NodeDown): its node failed, after 00:01:02 of 00:01:00 on gpu-07%s",
                 stepd);
        expect_outcome("NODE_FAIL", "NodeDown", 1, VERDICT_ERROR, "node-fail", want);
        snprintf(want, sizeof(want),
                 "Slurm job 23 CANCELLED: it was cancelled outside gauntlet, after 00:01:02 of 00:01:00 on gpu-07%s",
                 stepd);
        expect_outcome("CANCELLED", NULL, 1, VERDICT_ERROR, "cancelled", want);
        expect_outcome("OUT_OF_MEMORY", "OutOfMemory", 1, VERDICT_CRASH, "oom",
                       "Slurm job 23 OUT_OF_MEMORY (reason OutOfMemory): it ran out of the memory Slurm gave it, after "
                       "00:01:02 of 00:01:00 on gpu-07; slurmstepd: error: *** STEP 23.0 ON gpu-07 CANCELLED AT x ***");
        snprintf(want, sizeof(want), "Slurm job 23 SPECIAL_EXIT, after 00:01:02 of 00:01:00 on gpu-07%s", stepd);
        expect_outcome("SPECIAL_EXIT", "None", 1, VERDICT_ERROR, "slurm", want);
        snprintf(want, sizeof(want),
                 "Slurm job 23 RUNNING: srun ended while the job is still there, after 00:01:02 of 00:01:00 on gpu-07%s",
                 stepd);
        expect_outcome("RUNNING", "None", 1, VERDICT_ERROR, "slurm", want);
        /* Slurm's words are data: control characters never reach the evidence */
        expect_outcome("NODE_FAIL", "bad\x1b[31mnode", 1, VERDICT_ERROR, "node-fail",
                       "Slurm job 23 NODE_FAIL (reason bad?[31mnode): its node failed, after 00:01:02 of 00:01:00 on "
                       "gpu-07; slurmstepd: error: *** STEP 23.0 ON gpu-07 CANCELLED AT x ***");
}

static void test_argv(void **state) {
        struct slurm_settings none = {.max_parallel = 4};
        char *argv[] = {"gauntlet-testbed", "--port", "4000", NULL};
        char **v = NULL;
        assert_int_equal(slurm_build_argv(&none, "gauntlet-abc", "gauntlet cell 12", "/opt/bin/gauntlet-testbed", argv, &v), 0);
        const char *want[] = {"srun", "--job-name=gauntlet-abc", "--comment=gauntlet cell 12", "--nodes=1", "--ntasks=1",
                              "/opt/bin/gauntlet-testbed", "--port", "4000", NULL};
        for (size_t i = 0; want[i] || v[i]; i++) {
                assert_non_null(want[i]);
                assert_non_null(v[i]);
                assert_string_equal(v[i], want[i]);
        }
        strv_free(v);
        char *extra[] = {"--exclusive", "--constraint=h200", NULL};
        struct slurm_settings all = {.partition = "gpu", .account = "llm", .gpus_per_cell = 8, .time = "1:30:00",
                                   .extra_args = extra};
        assert_int_equal(slurm_build_argv(&all, "gauntlet-abc", "c", "python3", argv, &v), 0);
        const char *want2[] = {"srun", "--job-name=gauntlet-abc", "--comment=c", "--nodes=1", "--ntasks=1",
                               "--partition=gpu", "--account=llm", "--gres=gpu:8", "--time=1:30:00", "--exclusive",
                               "--constraint=h200", "python3", "--port", "4000", NULL};
        for (size_t i = 0; want2[i] || v[i]; i++) {
                assert_non_null(want2[i]);
                assert_non_null(v[i]);
                assert_string_equal(v[i], want2[i]);
        }
        strv_free(v);
}

static struct matrix *load(const char *yaml, char **err) {
        struct matrix *m = NULL;
        *err = NULL;
        if (cells_load_matrix_string(yaml, strlen(yaml), "m.yaml", &m, err) < 0)
                return NULL;
        return m;
}

static void test_matrix_slurm(void **state) {
        char *err = NULL;
        /* defaults, with or without the map: local, GPUs from tp, 4 at a time, 1 h in the queue */
        struct matrix *m = load("engine: sglang\nmodel: x\nargs: [--tp, 8]\n", &err);
        assert_non_null(m);
        assert_int_equal(m->launcher, LAUNCHER_LOCAL);
        assert_int_equal(m->slurm.gpus_per_cell, 8);
        assert_int_equal(m->slurm.max_parallel, 4);
        assert_int_equal(m->slurm.queue_timeout, 3600 * USEC_PER_SEC);
        assert_null(m->slurm.partition);
        assert_null(m->slurm.time);
        matrix_free(m);
        m = load("engine: sglang\nmodel: x\nargs: [--tp, 8]\nlauncher: slurm\n"
                 "slurm: {partition: gpu, account: llm, gpus_per_cell: 4, time: 90m, max_parallel: 16,\n"
                 "        queue_timeout: 2h, extra_args: [--exclusive, --constraint, h200]}\n",
                 &err);
        if (!m)
                fail_msg("%s", err);
        assert_int_equal(m->launcher, LAUNCHER_SLURM);
        assert_string_equal(m->slurm.partition, "gpu");
        assert_string_equal(m->slurm.account, "llm");
        assert_int_equal(m->slurm.gpus_per_cell, 4);
        assert_string_equal(m->slurm.time, "1:30:00");
        assert_int_equal(m->slurm.max_parallel, 16);
        assert_int_equal(m->slurm.queue_timeout, 2 * 3600 * USEC_PER_SEC);
        assert_string_equal(m->slurm.extra_args[2], "h200");
        matrix_free(m);
        /* durations become Slurm's form; Slurm's own forms are kept */
        static const struct {
                const char *in, *out;
        } times[] = {{"36h", "1-12:00:00"}, {"90s", "0:01:30"}, {"1h30m", "1:30:00"}, {"\"30:00\"", "30:00"},
                     {"\"2-00:00:00\"", "2-00:00:00"}, {"2-12", "2-12"}, {"UNLIMITED", "UNLIMITED"}};
        for (size_t i = 0; i < ELEMENTSOF(times); i++) {
                _cleanup_free_ char *y = strdup_printf("engine: testbed\nslurm: {time: %s}\n", times[i].in);
                m = load(y, &err);
                if (!m)
                        fail_msg("%s: %s", times[i].in, err);
                assert_string_equal(m->slurm.time, times[i].out);
                matrix_free(m);
        }
}

static void test_matrix_slurm_errors(void **state) {
        static const struct {
                const char *yaml, *error;
        } bad[] = {
                {"engine: testbed\nlauncher: pbs\n", "m.yaml:2: launcher: unknown launcher 'pbs' (local or slurm)"},
                {"engine: testbed\nslurm: {time: 30}\n",
                 "m.yaml:2: slurm.time '30' has no unit: Slurm reads a bare number as minutes, the matrix as seconds; "
                 "write 30m, 2h or \"0:30:00\""},
                {"engine: testbed\nslurm: {time: \"1:2:3:4\"}\n", "m.yaml:2: slurm.time '1:2:3:4' is neither"},
                {"engine: testbed\nslurm: {time: \"1-2-3\"}\n", "m.yaml:2: slurm.time '1-2-3' is neither"},
                {"engine: testbed\nslurm: {time: 0s}\n", "m.yaml:2: slurm.time must be a duration above zero"},
                {"engine: testbed\nslurm: {max_parallel: 0}\n", "m.yaml:2: slurm.max_parallel"},
                {"engine: testbed\nslurm: {partition: \"a b\"}\n", "m.yaml:2: slurm.partition 'a b' is not a Slurm name"},
                {"engine: testbed\nslurm: {partiton: gpu}\n", "m.yaml:2: "},
                {"engine: testbed\nslurm: [gpu]\n", "m.yaml:2: "},
                {"engine: testbed\nslurm:\n  extra_args: [--exclusive,\n    --job-name=mine]\n",
                 "m.yaml:4: slurm.extra_args: '--job-name=mine' is gauntlet's to set"},
                {"engine: testbed\nslurm: {extra_args: [-N2]}\n", "m.yaml:2: slurm.extra_args: '-N2' is gauntlet's"},
                {"engine: testbed\nslurm: {extra_args: [--output, x]}\n", "m.yaml:2: slurm.extra_args: '--output'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *err = NULL;
                struct matrix *m = load(bad[i].yaml, &err);
                if (m)
                        fail_msg("loaded: %s", bad[i].yaml);
                assert_non_null(err);
                if (!startswith(err, bad[i].error))
                        fail_msg("got '%s', want '%s...'", err, bad[i].error);
                free(err);
        }
        /* --ntasks-per-node is not --ntasks: allowed */
        char *err = NULL;
        struct matrix *m = load("engine: testbed\nslurm: {extra_args: [--ntasks-per-node=1, --nodelist=n1]}\n", &err);
        if (!m)
                fail_msg("%s", err);
        matrix_free(m);
}

/* srun's own lines sit between the server's in its log: never the evidence. */
static void test_srun_lines_not_evidence(void **state) {
        char path[] = "/tmp/gauntlet-slurm-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char log[] = "srun: job 12 queued and waiting for resources\n"
                           "srun: job 12 has been allocated resources\n"
                           "loading weights\n"
                           "slurmstepd-node1: error: *** STEP 12.0 ON node1 CANCELLED AT 2026-12-01T10:00:00 ***\n"
                           "srun: error: node1: task 0: Exited with exit code 1\n"
                           "srun: Force Terminated StepId=12.0\n";
        assert_int_equal(write_all(fd, log, sizeof(log) - 1), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find("vllm"), 1, 0, &d), 0);
        assert_string_equal(d.cause, "exit");
        assert_string_equal(d.evidence, "exited with status 1; last log line: loading weights");
        diagnosis_release(&d);
        /* slurmstepd's failure to start the program is the reason, and stays evidence */
        fd = open(path, O_WRONLY | O_TRUNC);
        const char log2[] = "slurmstepd-node1: error: execve(): /opt/vllm: No such file or directory\n"
                            "srun: error: node1: task 0: Exited with exit code 2\n";
        assert_int_equal(write_all(fd, log2, sizeof(log2) - 1), 0);
        close(fd);
        assert_int_equal(diagnose_exit(path, profile_find("vllm"), 2, 0, &d), 0);
        assert_string_equal(d.evidence, "exited with status 2; first error line: slurmstepd-node1: error: execve(): "
                                        "/opt/vllm: No such file or directory");
        diagnosis_release(&d);
        unlink(path);
}

/* ---- supervise.h's launcher hooks, with a launcher that runs a shell script here ---- */

struct fake {
        const char *script;      /* what the "client" runs */
        int places;              /* place() answers "not yet" this many times */
        int place_result;        /* then this: 1 placed, -ETIME gave up */
        int calls_place, calls_stop, calls_outcome, calls_free;
        bool stop_saw_alive;     /* the client still ran when stop() was asked */
};

static int fake_prepare(const void *config, const struct server_spec *spec, char ***ret_argv, void **ret_state) {
        const struct fake *f = config;
        char *argv[] = {"/bin/sh", "-c", (char *)f->script, NULL};
        *ret_argv = strv_copy(argv);
        *ret_state = (void *)f;
        return *ret_argv ? 0 : -ENOMEM;
}

static int fake_place(void *state, struct loop *l, usec_t *ret_next, char **ret_host, char **ret_note) {
        struct fake *f = state;
        f->calls_place++;
        if (f->places-- > 0) {
                *ret_next = now_usec() + 10 * USEC_PER_MSEC;
                return 0;
        }
        *ret_note = strdup("placed on node7");
        if (f->place_result == 1)
                *ret_host = strdup("10.1.2.3");
        return f->place_result;
}

static int fake_stop(void *state, struct server *s, usec_t grace, usec_t deadline) {
        struct fake *f = state;
        f->calls_stop++;
        f->stop_saw_alive = server_alive(s);
        return 0;
}

static int fake_outcome(void *state, struct loop *l, int *exit_code, int *exit_signal, struct server_outcome *ret) {
        struct fake *f = state;
        f->calls_outcome++;
        if (f->place_result != 1) {
                *ret = (struct server_outcome){VERDICT_TIMEOUT, "queue", strdup("still PENDING")};
                return 1;
        }
        *exit_code = -1;
        *exit_signal = 9; /* what the scheduler says, over the client's status */
        return 0;
}

static void fake_free(void *state) {
        ((struct fake *)state)->calls_free++;
}

static const char *const fake_drop[] = {"GAUNTLET_TEST_DROPPED", NULL};
static const struct server_launcher_ops fake_ops = {
        .prepare = fake_prepare,
        .place = fake_place,
        .stop = fake_stop,
        .outcome = fake_outcome,
        .free_state = fake_free,
        .drop_env = fake_drop,
};

static struct server *fake_start(struct loop *l, struct fake *f, struct server_launcher *ln, const char *log,
                                 const char *token) {
        *ln = (struct server_launcher){.ops = &fake_ops, .config = f};
        char *argv[] = {"never-run", NULL};
        char *env[] = {"CELL_VAR=1", NULL};
        struct server_spec spec = {.argv = argv, .env = env, .log_path = log, .token = token, .launcher = ln,
                                   .port = 4242, .health_path = "/health", .name = "cell"};
        struct server *s = NULL;
        assert_int_equal(server_start(l, &spec, &s), 0);
        return s;
}

static void test_launcher_hooks(void **state) {
        struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        char dir[] = "/tmp/gauntlet-launcher-XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *log = strdup_printf("%s/server.log", dir);
        char token[33];
        assert_int_equal(procs_new_token(token), 0);
        setenv("GAUNTLET_TEST_DROPPED", "yes", 1);

        /* placed after two "not yet": the URL is the place's, the startup clock restarts */
        struct fake f = {.script = "echo dropped=${GAUNTLET_TEST_DROPPED-no} cell=$CELL_VAR; exec sleep 30",
                         .places = 2, .place_result = 1};
        struct server_launcher ln;
        struct server *s = fake_start(l, &f, &ln, log, token);
        usec_t spawned = s->started;
        assert_null(server_base_url(s));
        assert_int_equal(server_wait_placed(s), SERVER_READY);
        assert_int_equal(f.calls_place, 3);
        assert_string_equal(server_base_url(s), "http://10.1.2.3:4242");
        assert_string_equal(s->health_url, "http://10.1.2.3:4242/health");
        assert_true(s->started >= spawned + 20 * USEC_PER_MSEC);
        assert_int_equal(server_wait_placed(s), SERVER_READY); /* once placed, at once */
        assert_int_equal(f.calls_place, 3);
        /* the launcher is asked first when stopping, while its client still runs */
        assert_int_equal(server_stop(s, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL), 0);
        assert_int_equal(f.calls_stop, 1);
        assert_true(f.stop_saw_alive);
        /* the outcome hook may say what the client's status hides */
        struct server_outcome o;
        assert_int_equal(server_launcher_outcome(s, &o), 0);
        assert_int_equal(s->exit_signal, 9);
        server_free(s);
        assert_int_equal(f.calls_free, 1);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        assert_int_equal(read_file_capped(log, 1 << 20, &text, &len), 0);
        /* the client got the cell's environment, not what the launcher keeps from it */
        assert_non_null(strstr(text, "dropped=no cell=1\n"));
        assert_non_null(strstr(text, "[gauntlet: placed on node7]\n"));

        /* the launcher gives up: a deadline, and its outcome is the verdict */
        struct fake g = {.script = "exec sleep 30", .places = 0, .place_result = -ETIME};
        s = fake_start(l, &g, &ln, log, token);
        assert_int_equal(server_wait_ready(s, now_usec() + 10 * USEC_PER_SEC), SERVER_DEADLINE);
        assert_null(server_base_url(s));
        assert_int_equal(server_launcher_outcome(s, &o), 1);
        assert_int_equal(o.verdict, VERDICT_TIMEOUT);
        assert_string_equal(o.cause, "queue");
        free(o.evidence);
        assert_int_equal(server_stop(s, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL), 0);
        assert_true(s->exited); /* the client was ended here after the launcher's stop */
        assert_int_equal(g.calls_stop, 1);
        server_free(s);

        /* the client dies before it is placed: SERVER_DIED, never a probe */
        struct fake h = {.script = "exit 3", .places = 1000, .place_result = 1};
        s = fake_start(l, &h, &ln, log, token);
        assert_int_equal(server_wait_placed(s), SERVER_DIED);
        assert_int_equal(s->exit_code, 3);
        assert_false(s->placed);
        server_stop(s, USEC_PER_SEC, now_usec() + 10 * USEC_PER_SEC, NULL);
        server_free(s);

        unsetenv("GAUNTLET_TEST_DROPPED");
        unlink(log);
        rmdir(dir);
        loop_free(l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_field),           cmocka_unit_test(test_scontrol_job),
                cmocka_unit_test(test_squeue),          cmocka_unit_test(test_sacct),
                cmocka_unit_test(test_exit_code_and_states),
                cmocka_unit_test(test_outcomes),        cmocka_unit_test(test_argv),
                cmocka_unit_test(test_matrix_slurm),    cmocka_unit_test(test_matrix_slurm_errors),
                cmocka_unit_test(test_srun_lines_not_evidence), cmocka_unit_test(test_launcher_hooks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
