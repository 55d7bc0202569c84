/* slurm.c -- cells as Slurm jobs: srun in the server's place, squeue, scontrol and scancel around it. */
#include "proc/slurm.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text/buf.h"
#include "proc/spawn.h"
#include "text/text.h"

/* A waiting job is asked about at these intervals, doubling from the first to the last:
 * Slurm has no event to wait for, so its controller is polled, gently. */
#define POLL_FIRST (200 * USEC_PER_MSEC)
#define POLL_MAX (2 * USEC_PER_SEC)
/* Once srun is gone, how long the job may take to reach its final state (COMPLETING ends
 * when its processes and the epilog are done). */
#define SETTLE_TIME (30 * USEC_PER_SEC)
/* What ending a job may take beyond the SIGTERM grace: Slurm's own KillWait (30 s by
 * default) and the node's epilog. The caller's deadline is set for a process here. */
#define STOP_EXTRA (120 * USEC_PER_SEC)
/* Lines of Slurm's quoted in evidence are cut here. */
#define EVIDENCE_LINE 300
/* The part of a cell's log searched for srun's and slurmstepd's own lines. */
#define LOG_TAIL ((size_t)1 << 20)

/* Variables of an enclosing Slurm job: with them srun would run a step in that job
 * instead of a job of its own (each cell is a job; docs/slurm.md). */
static const char *const enclosing_job_env[] = {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID",
                                                NULL};

/* ---- running one Slurm command on the loop ---- */

/* Runs argv (from PATH, gauntlet's environment) with its output captured, as events on
 * l (spawn_run_capture, capped at SLURM_MAX_OUTPUT a stream): 0 when it ran to its end
 * (c->exit_code, c->signal), -ETIMEDOUT when it was killed at SLURM_CMD_TIMEOUT, -ENOENT
 * when it is not installed, other negative errnos from the spawn or the loop. A signal
 * does not cut it short (a cancel must still go out): it sets *intr (when intr is given).
 * Release c with spawn_capture_release whatever the result. */
static int cmd_run(struct loop *l, char *const *argv, struct spawn_capture *c, bool *intr) {
        *c = (struct spawn_capture){.argv = argv, .max_output = SLURM_MAX_OUTPUT};
        bool interrupted = false;
        int r = spawn_run_capture(l, c, 1, SLURM_CMD_TIMEOUT, SPAWN_CAPTURE_FINISH, &interrupted);
        if (intr)
                *intr |= interrupted;
        if (r < 0)
                return r;
        if (c->error < 0)
                return c->error;
        return c->timed_out ? -ETIMEDOUT : 0;
}

/* Lets the loop serve everything else until `until` (signals too: they are the caller's
 * to look at, through loop_signal). The wait between two questions to Slurm. */
static void pause_until(struct loop *l, usec_t until) {
        while (now_usec() < until) {
                int k = loop_iterate(l, until);
                if (k < 0 && k != -EINTR)
                        return;
        }
}

/* The first line of s, cleaned for a message (Slurm's output is data). */
static char *first_line(const char *s) {
        while (*s == '\n' || *s == '\r')
                s++;
        return text_clean(s, strcspn(s, "\n"), EVIDENCE_LINE);
}

/* ---- parsing what Slurm prints ---- */

void slurm_job_info_release(struct slurm_job_info *j) {
        free(j->state);
        free(j->reason);
        free(j->nodes);
        free(j->exit_code);
        free(j->run_time);
        free(j->time_limit);
        *j = (struct slurm_job_info){0};
}

/* Whether p (inside [.., end)) starts a "Key=" token of scontrol's one-line output. */
static bool field_start(const char *p, const char *end, const char **ret_eq) {
        if (p >= end || !isalpha((unsigned char)*p))
                return false;
        const char *q = p;
        while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == ':' || *q == '/'))
                q++;
        if (q < end && *q == '=') {
                if (ret_eq)
                        *ret_eq = q;
                return true;
        }
        return false;
}

int slurm_field(const char *text, const char *key, char **ret) {
        const char *end = text + strcspn(text, "\n");
        size_t klen = strlen(key);
        const char *p = text;
        while (p < end) {
                while (p < end && *p == ' ')
                        p++;
                const char *eq = NULL;
                if (!field_start(p, end, &eq)) {
                        while (p < end && *p != ' ')
                                p++;
                        continue;
                }
                /* the value runs to the space before the next field */
                const char *v = eq + 1, *ve = v;
                for (;;) {
                        while (ve < end && *ve != ' ')
                                ve++;
                        const char *n = ve;
                        while (n < end && *n == ' ')
                                n++;
                        if (n >= end || field_start(n, end, NULL))
                                break;
                        ve = n;
                }
                if ((size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
                        char *d = strndup(v, (size_t)(ve - v));
                        if (!d)
                                return -ENOMEM;
                        *ret = d;
                        return 1;
                }
                p = ve;
        }
        return 0;
}

/* "(null)", "None", "" and "Unknown" say nothing. */
static bool says_nothing(const char *s) {
        return !s || !*s || strcmp(s, "(null)") == 0 || strcmp(s, "None") == 0 || strcmp(s, "Unknown") == 0;
}

int slurm_parse_squeue(const char *text, struct slurm_job_info *ret) {
        while (*text == '\n')
                text++;
        if (!*text)
                return 0;
        size_t len = strcspn(text, "\n");
        const char *bar[3], *p = text, *end = text + len;
        for (int k = 0; k < 3; k++) {
                bar[k] = memchr(p, '|', (size_t)(end - p));
                if (!bar[k])
                        return -EBADMSG;
                p = bar[k] + 1;
        }
        char *e = NULL;
        errno = 0;
        long id = strtol(text, &e, 10);
        if (errno || e != bar[0] || id <= 0 || bar[1] == bar[0] + 1)
                return -EBADMSG; /* an array or het job's "12_3", "12+0": not one of gauntlet's */
        struct slurm_job_info j = {.id = id};
        j.state = strndup(bar[0] + 1, (size_t)(bar[1] - bar[0] - 1));
        j.nodes = strndup(bar[1] + 1, (size_t)(bar[2] - bar[1] - 1));
        j.reason = strndup(bar[2] + 1, (size_t)(end - bar[2] - 1));
        if (!j.state || !j.nodes || !j.reason) {
                slurm_job_info_release(&j);
                return -ENOMEM;
        }
        *ret = j;
        return 1;
}

int slurm_parse_scontrol_job(const char *text, struct slurm_job_info *ret) {
        _cleanup_free_ char *id = NULL;
        int r = slurm_field(text, "JobId", &id);
        if (r <= 0)
                return r;
        char *e = NULL;
        long n = strtol(id, &e, 10);
        if (*e || n <= 0)
                return 0;
        struct slurm_job_info j = {.id = n};
        const char *keys[] = {"JobState", "Reason", "NodeList", "ExitCode", "RunTime", "TimeLimit"};
        char **dst[] = {&j.state, &j.reason, &j.nodes, &j.exit_code, &j.run_time, &j.time_limit};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (slurm_field(text, keys[i], dst[i]) < 0) {
                        slurm_job_info_release(&j);
                        return -ENOMEM;
                }
        if (!j.state) {
                slurm_job_info_release(&j);
                return 0;
        }
        *ret = j;
        return 1;
}

int slurm_parse_sacct(const char *text, struct slurm_job_info *ret) {
        while (*text == '\n')
                text++;
        size_t len = strcspn(text, "\n");
        char *f[6] = {0};
        const char *p = text, *end = text + len;
        for (int k = 0; k < 6; k++) {
                const char *b = k < 5 ? memchr(p, '|', (size_t)(end - p)) : end;
                if (!b) {
                        for (int i = 0; i < k; i++)
                                free(f[i]);
                        return 0;
                }
                f[k] = strndup(p, (size_t)(b - p));
                p = b + 1;
        }
        struct slurm_job_info j = {.id = f[0] ? strtol(f[0], NULL, 10) : 0};
        free(f[0]);
        if (f[1])
                f[1][strcspn(f[1], " ")] = '\0'; /* "CANCELLED by 0" */
        j.state = f[1];
        j.exit_code = f[2];
        j.nodes = f[3];
        j.run_time = f[4];
        j.time_limit = f[5];
        if (!j.state || !j.exit_code || !j.nodes || !j.run_time || !j.time_limit) {
                slurm_job_info_release(&j);
                return -ENOMEM;
        }
        if (j.id <= 0 || !*j.state) {
                slurm_job_info_release(&j);
                return 0;
        }
        *ret = j;
        return 1;
}

bool slurm_state_active(const char *state) {
        static const char *const active[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING",
                                             "RESIZING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING",
                                             "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "POWER_UP_NODE", NULL};
        for (const char *const *a = active; state && *a; a++)
                if (strcmp(state, *a) == 0)
                        return true;
        return false;
}

int slurm_parse_exit_code(const char *s, int *ret_status, int *ret_signal) {
        char *e = NULL;
        errno = 0;
        long st = strtol(s, &e, 10);
        if (errno || e == s || *e != ':' || st < 0 || st > 255)
                return -EINVAL;
        const char *p = e + 1;
        long sig = strtol(p, &e, 10);
        if (errno || e == p || *e || sig < 0 || sig > 127)
                return -EINVAL;
        *ret_status = (int)st;
        *ret_signal = (int)sig;
        return 0;
}

int slurm_state_outcome(const struct slurm_job_info *j, const char *stepd, struct server_outcome *ret) {
        static const struct {
                const char *state;
                enum verdict verdict;
                const char *cause, *why;
        } ends[] = {
                {"TIMEOUT", VERDICT_TIMEOUT, "time-limit", "its time limit ran out"},
                {"DEADLINE", VERDICT_TIMEOUT, "time-limit", "it reached its deadline"},
                {"PREEMPTED", VERDICT_ERROR, "preempted", "it was preempted"},
                {"NODE_FAIL", VERDICT_ERROR, "node-fail", "its node failed"},
                {"BOOT_FAIL", VERDICT_ERROR, "node-fail", "its node failed to boot"},
                {"CANCELLED", VERDICT_ERROR, "cancelled", "it was cancelled outside gauntlet"},
                {"OUT_OF_MEMORY", VERDICT_CRASH, "oom", "it ran out of the memory Slurm gave it"},
        };
        if (!j->state || strcmp(j->state, "COMPLETED") == 0 || strcmp(j->state, "FAILED") == 0)
                return 0; /* the server ended by itself: its log says why */
        size_t i = 0;
        while (i < ELEMENTSOF(ends) && strcmp(ends[i].state, j->state) != 0)
                i++;
        bool known = i < ELEMENTSOF(ends);
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        _cleanup_free_ char *state = text_clean(j->state, strlen(j->state), 64);
        _cleanup_free_ char *reason = j->reason ? text_clean(j->reason, strlen(j->reason), EVIDENCE_LINE) : NULL;
        _cleanup_free_ char *nodes = j->nodes ? text_clean(j->nodes, strlen(j->nodes), EVIDENCE_LINE) : NULL;
        if (!state)
                return -ENOMEM;
        buf_printf(&b, "Slurm job %ld %s", j->id, state);
        if (!says_nothing(reason))
                buf_printf(&b, " (reason %s)", reason);
        if (known)
                buf_printf(&b, ": %s", ends[i].why);
        else if (slurm_state_active(j->state))
                buf_puts(&b, ": srun ended while the job is still there");
        if (!says_nothing(j->run_time) && !says_nothing(j->time_limit))
                buf_printf(&b, ", after %.16s of %.16s", j->run_time, j->time_limit);
        else if (!says_nothing(j->run_time))
                buf_printf(&b, ", after %.16s", j->run_time);
        if (!says_nothing(nodes))
                buf_printf(&b, " on %s", nodes);
        if (stepd)
                buf_printf(&b, "; %s", stepd);
        char *e = buf_detach(&b);
        if (!e)
                return -ENOMEM;
        *ret = (struct server_outcome){known ? ends[i].verdict : VERDICT_ERROR, known ? ends[i].cause : "slurm", e};
        return 1;
}

/* ---- srun's command line ---- */

int slurm_build_argv(const struct slurm_settings *cfg, const char *job_name, const char *comment,
                     const char *program, char *const *argv, char ***ret) {
        _cleanup_strv_free_ char **v = NULL;
        int r = 0;
        r |= strv_push(&v, "srun");
        r |= strv_consume(&v, strdup_printf("--job-name=%s", job_name));
        r |= strv_consume(&v, strdup_printf("--comment=%s", comment));
        r |= strv_push(&v, "--nodes=1");
        r |= strv_push(&v, "--ntasks=1");
        if (cfg->partition)
                r |= strv_consume(&v, strdup_printf("--partition=%s", cfg->partition));
        if (cfg->account)
                r |= strv_consume(&v, strdup_printf("--account=%s", cfg->account));
        if (cfg->gpus_per_cell > 0)
                r |= strv_consume(&v, strdup_printf("--gres=gpu:%d", cfg->gpus_per_cell));
        if (cfg->time)
                r |= strv_consume(&v, strdup_printf("--time=%s", cfg->time));
        for (char *const *e = cfg->extra_args; e && *e; e++)
                r |= strv_push(&v, *e);
        r |= strv_push(&v, program);
        for (size_t i = 1; argv[0] && argv[i]; i++)
                r |= strv_push(&v, argv[i]);
        if (r < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(v);
        return 0;
}

/* ---- one server's job ---- */

struct slurm_server {
        const struct slurm_settings *cfg;
        char *name;                 /* gauntlet-<token>: the job's name, how it is found */
        char *log_path;
        int port;
        usec_t submitted;           /* srun spawned (about) */
        usec_t queue_deadline;
        usec_t poll;
        long id;                    /* 0 until squeue showed it */
        char *state, *reason;       /* as last seen */
        char *error;                /* the last Slurm command's failure, for evidence */
        bool queue_expired;         /* place gave up: it did not start in time */
        int place_error;            /* place failed otherwise (negative errno) */
};

static void server_state_free(void *state) {
        struct slurm_server *st = state;
        if (!st)
                return;
        free(st->name);
        free(st->log_path);
        free(st->state);
        free(st->reason);
        free(st->error);
        free(st);
}

/* Keeps a failed command's words (its first stderr line, or how it ended). */
static void note_error(struct slurm_server *st, const char *what, int r, const struct spawn_capture *c) {
        free(st->error);
        if (r == -ENOENT)
                st->error = strdup_printf("%s: not installed (not on PATH)", what);
        else if (r < 0)
                st->error = strdup_printf("%s: %s", what, strerror(-r));
        else {
                _cleanup_free_ char *line = first_line(buf_str(&c->out[1]));
                char status[64];
                st->error = line && *line ? strdup(line)
                                          : strdup_printf("%s %s", what, exit_describe(c->exit_code, c->signal, status));
        }
}

/* The job named st->name as squeue sees it: 1 and *ret, 0 none, negative when squeue
 * failed (st->error says how). *intr: a signal came meanwhile. */
static int query_name(struct slurm_server *st, struct loop *l, struct slurm_job_info *ret, bool *intr) {
        _cleanup_free_ char *name = strdup_printf("--name=%s", st->name);
        if (!name)
                return -ENOMEM;
        char *argv[] = {"squeue", "--noheader", "--states=all", name, "--format=%i|%T|%N|%r", NULL};
        struct spawn_capture c;
        int r = cmd_run(l, argv, &c, intr);
        if (r < 0 || c.exit_code != 0) {
                note_error(st, "squeue", r, &c);
                spawn_capture_release(&c);
                return r < 0 ? r : -EIO;
        }
        r = slurm_parse_squeue(buf_str(&c.out[0]), ret);
        if (r == -EBADMSG) {
                _cleanup_free_ char *line = first_line(buf_str(&c.out[0]));
                free(st->error);
                st->error = strdup_printf("squeue printed something else than asked: %s", line ? line : "");
        }
        spawn_capture_release(&c);
        if (r == 1) {
                st->id = ret->id;
                free(st->state);
                free(st->reason);
                st->state = strdup(ret->state);
                st->reason = ret->reason ? strdup(ret->reason) : NULL;
        }
        return r;
}

/* The job's record from scontrol, or from sacct once the controller has forgotten it:
 * 1 and *ret, 0 when neither knows it. */
static int query_job(struct slurm_server *st, struct loop *l, struct slurm_job_info *ret, bool *intr) {
        _cleanup_free_ char *id = strdup_printf("%ld", st->id);
        if (!id)
                return -ENOMEM;
        char *show[] = {"scontrol", "--oneliner", "show", "job", id, NULL};
        struct spawn_capture c;
        int r = cmd_run(l, show, &c, intr);
        if (r == 0 && c.exit_code == 0)
                r = slurm_parse_scontrol_job(buf_str(&c.out[0]), ret);
        else {
                note_error(st, "scontrol", r, &c);
                r = 0;
        }
        spawn_capture_release(&c);
        if (r != 0)
                return r;
        _cleanup_free_ char *jobs = strdup_printf("--jobs=%ld", st->id);
        if (!jobs)
                return -ENOMEM;
        char *acct[] = {"sacct", "--noheader", "--parsable2", "--allocations", jobs,
                        "--format=JobID,State,ExitCode,NodeList,Elapsed,Timelimit", NULL};
        r = cmd_run(l, acct, &c, intr);
        r = r == 0 && c.exit_code == 0 ? slurm_parse_sacct(buf_str(&c.out[0]), ret) : 0;
        spawn_capture_release(&c);
        return r;
}

/* Whether s can stand as the host of a URL: a host name or an IPv4 or IPv6 address, and
 * nothing else (it comes from Slurm, and the checks and the bench go there). */
static bool host_name_ok(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 253)
                return false;
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_' && *p != ':')
                        return false;
        return true;
}

/* The first host of a node list ("node[1-2]" -> "node1") and the address Slurm reaches it
 * at (NodeAddr), which is where gauntlet talks to the server. */
static int node_address(struct slurm_server *st, struct loop *l, const char *nodes, char **ret_node,
                        char **ret_addr, bool *intr) {
        _cleanup_free_ char *node = NULL;
        struct spawn_capture c;
        int r;
        if (strpbrk(nodes, "[,")) {
                char *argv[] = {"scontrol", "show", "hostnames", (char *)nodes, NULL};
                r = cmd_run(l, argv, &c, intr);
                if (r == 0 && c.exit_code == 0)
                        node = strndup(buf_str(&c.out[0]), strcspn(buf_str(&c.out[0]), "\n"));
                spawn_capture_release(&c);
        }
        if (!node && !(node = strndup(nodes, strcspn(nodes, "[,"))))
                return -ENOMEM;
        char *argv[] = {"scontrol", "--oneliner", "show", "node", node, NULL};
        char *addr = NULL;
        r = cmd_run(l, argv, &c, intr);
        if (r == 0 && c.exit_code == 0 && slurm_field(buf_str(&c.out[0]), "NodeAddr", &addr) < 0) {
                spawn_capture_release(&c);
                return -ENOMEM;
        }
        spawn_capture_release(&c);
        if (addr && !host_name_ok(addr)) {
                free(addr);
                addr = NULL;
        }
        if (!addr && !(addr = strdup(node)))
                return -ENOMEM;
        if (!host_name_ok(addr)) {
                free(addr);
                return -EBADMSG; /* neither is something to put in a URL */
        }
        *ret_node = TAKE_PTR(node);
        *ret_addr = addr;
        return 0;
}

static int scancel(struct slurm_server *st, struct loop *l, const char *name, const char *signal) {
        _cleanup_free_ char *n = strdup_printf("--name=%s", name);
        _cleanup_free_ char *s = signal ? strdup_printf("--signal=%s", signal) : NULL;
        if (!n || (signal && !s))
                return -ENOMEM;
        char *argv[] = {"scancel", n, s, NULL};
        struct spawn_capture c;
        int r = cmd_run(l, argv, &c, NULL);
        if ((r < 0 || c.exit_code != 0) && st)
                note_error(st, "scancel", r, &c);
        r = r < 0 ? r : c.exit_code == 0 ? 0 : -EIO;
        spawn_capture_release(&c);
        return r;
}

/* The last bytes of the cell's log (srun's and slurmstepd's lines are there). */
static char *log_tail(const char *path, size_t *ret_len) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        if ((size_t)st.st_size > LOG_TAIL && lseek(fd, st.st_size - (off_t)LOG_TAIL, SEEK_SET) < 0)
                return NULL;
        char *text = NULL;
        return read_fd_capped(fd, LOG_TAIL, &text, ret_len) == 0 ? text : NULL;
}

/* Lines of the log that are Slurm's own: srun's errors (up to three, joined), or the last
 * of slurmstepd's "*** JOB 12 ON node CANCELLED AT ... ***". NULL when there is none. */
static char *slurm_lines(const char *log_path, bool stepd) {
        size_t len = 0;
        _cleanup_free_ char *text = log_tail(log_path, &len);
        if (!text)
                return NULL;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 3 * EVIDENCE_LINE + 16);
        size_t found = 0;
        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                bool is_srun = n > 13 && (startswith(p, "srun: error: ") || startswith(p, "srun: fatal: "));
                bool is_stepd = startswith(p, "slurmstepd") && memmem(p, n, "***", 3);
                if ((stepd && is_stepd) || (!stepd && is_srun && found < 3)) {
                        _cleanup_free_ char *line = text_clean(p, n, EVIDENCE_LINE);
                        if (!line)
                                return NULL;
                        if (stepd)
                                buf_reset(&b);
                        buf_printf(&b, "%s%s", b.len ? "; " : "", line);
                        found++;
                }
                p += n + 1;
        }
        return b.len ? buf_detach(&b) : NULL;
}

static int slurm_prepare(const void *config, const struct server_spec *spec, char ***ret_argv, void **ret_state) {
        const struct slurm_settings *cfg = config;
        if (!spec->token || !spec->argv || !spec->argv[0] || !spec->log_path)
                return -EINVAL;
        struct slurm_server *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->cfg = cfg;
        st->port = spec->port;
        st->name = strdup_printf(SLURM_JOB_PREFIX "%s", spec->token);
        st->log_path = strdup(spec->log_path);
        _cleanup_free_ char *comment = strdup_printf("gauntlet cell %s", spec->name ? spec->name : "?");
        /* the program as it is started here: the testbed's path beside gauntlet, or argv[0] */
        const char *program = spec->path ? spec->path : spec->argv[0];
        char **argv = NULL;
        int r = st->name && st->log_path && comment ? slurm_build_argv(cfg, st->name, comment, program, spec->argv, &argv)
                                                  : -ENOMEM;
        if (r < 0) {
                server_state_free(st);
                return r;
        }
        st->submitted = now_usec();
        st->queue_deadline = st->submitted + cfg->queue_timeout;
        st->poll = POLL_FIRST;
        *ret_argv = argv;
        *ret_state = st;
        return 0;
}

static int slurm_place(void *state, struct loop *l, usec_t *ret_next, char **ret_host, char **ret_note) {
        struct slurm_server *st = state;
        struct slurm_job_info j = {0};
        bool intr = false;
        int r = query_name(st, l, &j, &intr);
        if (r == -ENOMEM) {
                st->place_error = r;
                return r;
        }
        if (r == 1 && strcmp(j.state, "RUNNING") == 0 && *j.nodes) {
                char *node = NULL, *addr = NULL;
                r = node_address(st, l, j.nodes, &node, &addr, &intr);
                if (r < 0) {
                        slurm_job_info_release(&j);
                        st->place_error = r;
                        return r;
                }
                if (intr) {
                        /* a signal consumed by the commands' waits: the caller is to stop now,
                         * not after the readiness wait */
                        free(node);
                        free(addr);
                        slurm_job_info_release(&j);
                        return -EINTR;
                }
                *ret_note = strdup_printf("Slurm job %ld runs on %s (address %s); the server listens on port %d",
                                          j.id, node, addr, st->port);
                free(node);
                slurm_job_info_release(&j);
                *ret_host = addr;
                return 1;
        }
        slurm_job_info_release(&j);
        if (intr)
                return -EINTR;
        usec_t now = now_usec();
        if (now >= st->queue_deadline) {
                char d[32];
                st->queue_expired = true;
                *ret_note = st->id ? strdup_printf("Slurm job %ld still %s after %s in the queue; cancelling it", st->id,
                                                   st->state ? st->state : "unknown",
                                                   format_duration(now - st->submitted, d))
                                   : strdup_printf("no Slurm job named %s after %s", st->name,
                                                   format_duration(now - st->submitted, d));
                return -ETIME;
        }
        *ret_next = now + st->poll;
        st->poll = MIN(st->poll * 2, POLL_MAX);
        return 0;
}

static int slurm_outcome(void *state, struct loop *l, int *exit_code, int *exit_signal, struct server_outcome *ret) {
        struct slurm_server *st = state;
        char d[32];
        bool intr = false;
        if (st->queue_expired) {
                const char *state_now = st->state ? st->state : "unknown";
                _cleanup_free_ char *reason = st->reason ? text_clean(st->reason, strlen(st->reason), EVIDENCE_LINE)
                                                         : NULL;
                char *e = st->id ? strdup_printf("Slurm job %ld did not start within slurm.queue_timeout (%s): still %s%s%s%s",
                                                 st->id, format_duration(st->cfg->queue_timeout, d), state_now,
                                                 says_nothing(reason) ? "" : " (reason ", says_nothing(reason) ? "" : reason,
                                                 says_nothing(reason) ? "" : ")")
                                 : strdup_printf("no Slurm job named %s appeared within slurm.queue_timeout (%s)%s%s",
                                                 st->name, format_duration(st->cfg->queue_timeout, d),
                                                 st->error ? "; " : "", st->error ? st->error : "");
                if (!e)
                        return -ENOMEM;
                *ret = (struct server_outcome){VERDICT_TIMEOUT, "queue", e};
                return 1;
        }
        if (st->place_error) {
                char *e = st->place_error == -EBADMSG
                                  ? strdup_printf("Slurm job %ld runs on a node without an address to reach it at", st->id)
                                  : strdup_printf("cannot follow Slurm job %s: %s", st->name, strerror(-st->place_error));
                if (!e)
                        return -ENOMEM;
                *ret = (struct server_outcome){VERDICT_ERROR, "slurm", e};
                return 1;
        }
        struct slurm_job_info j = {0};
        int r;
        if (!st->id && (r = query_name(st, l, &j, &intr)) == -ENOMEM)
                return r;
        slurm_job_info_release(&j);
        if (!st->id) {
                /* srun ended before Slurm had a job for it: it was refused */
                _cleanup_free_ char *said = slurm_lines(st->log_path, false);
                char *e = said ? strdup_printf("srun got no job: %s", said)
                               : strdup_printf("srun ended (%s %d) before Slurm had a job named %s%s%s",
                                               *exit_signal ? "signal" : "status", *exit_signal ? *exit_signal : *exit_code,
                                               st->name, st->error ? "; " : "", st->error ? st->error : "");
                if (!e)
                        return -ENOMEM;
                *ret = (struct server_outcome){VERDICT_ERROR, "slurm", e};
                return 1;
        }
        /* srun is gone; the job reaches its final state soon after */
        usec_t until = now_usec() + SETTLE_TIME, wait = 100 * USEC_PER_MSEC;
        for (;;) {
                slurm_job_info_release(&j);
                if ((r = query_job(st, l, &j, &intr)) < 0)
                        return r;
                if (r == 0 || !slurm_state_active(j.state) || now_usec() >= until)
                        break;
                pause_until(l, now_usec() + wait);
                wait = MIN(wait * 2, POLL_MAX);
        }
        if (r == 0)
                return 0; /* nobody remembers it: the log and srun's status say what they can */
        int code = 0, sig = 0;
        if (j.exit_code && slurm_parse_exit_code(j.exit_code, &code, &sig) == 0 && !slurm_state_active(j.state)) {
                /* the server's own status: srun's is 128 + signal for a killed task */
                *exit_signal = sig;
                *exit_code = sig ? -1 : code;
        }
        _cleanup_free_ char *stepd = slurm_lines(st->log_path, true);
        r = slurm_state_outcome(&j, stepd, ret);
        slurm_job_info_release(&j);
        return r;
}

/* Waits until no job named st->name holds a place (squeue), asking at growing intervals
 * while the loop serves everything else. 0, -ETIME at the deadline, or negative errno;
 * *ret_state (optional): its state as last seen, NULL when squeue showed none. */
static int wait_gone(struct slurm_server *st, struct loop *l, usec_t deadline, char **ret_state) {
        usec_t wait = 100 * USEC_PER_MSEC;
        for (;;) {
                struct slurm_job_info j = {0};
                bool intr = false;
                int r = query_name(st, l, &j, &intr);
                if (r == -ENOMEM)
                        return r;
                bool gone = r == 0 || (r == 1 && !slurm_state_active(j.state));
                if (r >= 0 && ret_state) {
                        free(*ret_state);
                        *ret_state = r == 1 ? strdup(j.state) : NULL;
                }
                slurm_job_info_release(&j);
                if (gone)
                        return 0;
                if (now_usec() >= deadline)
                        return -ETIME;
                pause_until(l, MIN(deadline, now_usec() + wait));
                wait = MIN(wait * 2, POLL_MAX);
        }
}

static int slurm_stop(void *state, struct server *s, usec_t grace, usec_t deadline) {
        struct slurm_server *st = state;
        struct loop *l = s->loop;
        deadline = MAX(deadline, now_usec() + grace + STOP_EXTRA);
        struct slurm_job_info j = {0};
        bool intr = false;
        int r = query_name(st, l, &j, &intr);
        if (r == -ENOMEM)
                return r;
        /* A running server gets SIGTERM and its grace, as one here does; srun ends with it. */
        if (r == 1 && strcmp(j.state, "RUNNING") == 0 && server_alive(s) &&
            scancel(st, l, st->name, "TERM") == 0)
                server_wait_exit(s, now_usec() + grace);
        slurm_job_info_release(&j);
        /* Then the job itself, whatever it is now: a pending one never got a signal. */
        (void)scancel(st, l, st->name, NULL);
        _cleanup_free_ char *left = NULL;
        r = wait_gone(st, l, deadline, &left);
        if (r == -ETIME && left && strcmp(left, "COMPLETING") == 0) {
                /* cancelled, its processes being ended by Slurm: nothing more gauntlet can do */
                char *note = strdup_printf("Slurm job %ld still COMPLETING after the stop: left to Slurm", st->id);
                if (note)
                        server_log_note(s, note);
                free(note);
                return 0;
        }
        _cleanup_free_ char *note = NULL;
        if (r == -ETIME)
                note = strdup_printf("Slurm job %ld still %s after scancel%s%s", st->id, left ? left : "there",
                                     st->error ? ": " : "", st->error ? st->error : "");
        else if (r == 0 && st->id && left)
                note = strdup_printf("Slurm job %ld ended %s", st->id, left);
        if (note)
                server_log_note(s, note);
        return r;
}

static int slurm_cleanup(const void *config, struct loop *l, const char *token, usec_t grace, usec_t deadline) {
        struct slurm_server st = {.cfg = config, .name = strdup_printf(SLURM_JOB_PREFIX "%s", token)};
        if (!st.name)
                return -ENOMEM;
        struct slurm_job_info j = {0};
        bool intr = false;
        int r = query_name(&st, l, &j, &intr);
        bool active = r == 1 && slurm_state_active(j.state);
        slurm_job_info_release(&j);
        if (r >= 0 && active) {
                r = scancel(&st, l, st.name, NULL);
                if (r == 0)
                        r = wait_gone(&st, l, MAX(deadline, now_usec() + grace + STOP_EXTRA), NULL);
                if (r == 0)
                        r = 1;
        } else if (r >= 0) {
                r = 0;
        }
        free(st.name);
        free(st.state);
        free(st.reason);
        free(st.error);
        return r;
}

static const struct server_launcher_ops slurm_ops = {
        .prepare = slurm_prepare,
        .place = slurm_place,
        .stop = slurm_stop,
        .outcome = slurm_outcome,
        .free_state = server_state_free,
        .cleanup = slurm_cleanup,
        .drop_env = enclosing_job_env,
};

void slurm_launcher(const struct slurm_settings *cfg, struct server_launcher *ret) {
        *ret = (struct server_launcher){.ops = &slurm_ops, .config = cfg};
}
