/* test_spawn.c -- spawn_start's options, seen from the child: session and group, signal
 * mask and dispositions, standard streams, environment, working directory, pidfd; and
 * spawn_run_capture: exit code and signal apart, the output cap, the deadline, signals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "text/buf.h"
#include "proc/cgroup.h"
#include "io/loop.h"
#include "proc/spawn.h"
#include "base/util.h"

#define ARGV(...) ((char *const[]){__VA_ARGS__, NULL})

/* Everything the child writes on fd until EOF (the caller's end is non-blocking). */
static char *read_all(int fd) {
        struct buf b;
        buf_init(&b, 1 << 20);
        for (;;) {
                char tmp[4096];
                ssize_t k = read(fd, tmp, sizeof(tmp));
                if (k > 0) {
                        assert_int_equal(buf_append(&b, tmp, (size_t)k), 0);
                        continue;
                }
                if (k == 0)
                        break;
                assert_true(errno == EAGAIN || errno == EINTR);
                struct pollfd p = {.fd = fd, .events = POLLIN};
                assert_true(poll(&p, 1, 5000) == 1);
        }
        char *s = strdup(buf_str(&b));
        buf_release(&b);
        assert_non_null(s);
        return s;
}

/* The child's exit status through its pidfd. */
static int wait_status(struct spawn *s) {
        siginfo_t si = {0};
        assert_int_equal(waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED), 0);
        assert_int_equal(si.si_code, CLD_EXITED);
        spawn_release(s);
        return si.si_status;
}

/* Fields 5 and 6 of /proc/PID/stat: process group and session. */
static void pgrp_session(pid_t pid, pid_t *ret_pgrp, pid_t *ret_sid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        assert_int_equal(read_file_capped(path, 4096, &text, &len), 0);
        char *rp = strrchr(text, ')');
        assert_non_null(rp);
        char state;
        int ppid, pgrp, sid;
        assert_int_equal(sscanf(rp + 2, "%c %d %d %d", &state, &ppid, &pgrp, &sid), 4);
        *ret_pgrp = pgrp;
        *ret_sid = sid;
}

/* A SigBlk/SigIgn line of /proc/PID/status as a mask. */
static uint64_t status_mask(pid_t pid, const char *field) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        assert_int_equal(read_file_capped(path, 1 << 16, &text, &len), 0);
        char *p = strstr(text, field);
        assert_non_null(p);
        return strtoull(p + strlen(field), NULL, 16);
}

#define SIGBIT(s) (UINT64_C(1) << ((s) - 1))

static size_t open_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        assert_non_null(d);
        size_t n = 0;
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static void test_groups(void **state) {
        static const enum spawn_group groups[] = {SPAWN_GROUP_INHERIT, SPAWN_GROUP_NEW, SPAWN_GROUP_NEW_SESSION};
        for (size_t i = 0; i < ELEMENTSOF(groups); i++) {
                struct spawn_options o = {.argv = ARGV("sleep", "30"), .group = groups[i]};
                struct spawn s;
                assert_int_equal(spawn_start(&o, &s), 0);
                assert_true(s.pidfd >= 0);
                assert_int_equal(s.fd[0], -1);
                assert_int_equal(s.fd[1], -1);
                assert_int_equal(s.fd[2], -1);
                pid_t pgrp, sid;
                pgrp_session(s.pid, &pgrp, &sid);
                switch (groups[i]) {
                case SPAWN_GROUP_INHERIT:
                        assert_int_equal(pgrp, getpgrp());
                        assert_int_equal(sid, getsid(0));
                        assert_false(s.own_group);
                        break;
                case SPAWN_GROUP_NEW:
                        assert_int_equal(pgrp, s.pid);
                        assert_int_equal(sid, getsid(0));
                        assert_true(s.own_group);
                        break;
                case SPAWN_GROUP_NEW_SESSION:
                        assert_int_equal(pgrp, s.pid);
                        assert_int_equal(sid, s.pid);
                        assert_true(s.own_group);
                        break;
                }
                spawn_abort(&s);
                assert_int_equal(s.pidfd, -1);
                assert_true(kill(s.pid, 0) < 0); /* reaped */
        }
}

static void test_signals(void **state) {
        /* What gauntlet looks like: SIGTERM blocked, SIGPIPE and SIGUSR1 ignored. */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        assert_int_equal(sigprocmask(SIG_BLOCK, &block, &old), 0);
        struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe, old_usr1;
        assert_int_equal(sigaction(SIGPIPE, &ign, &old_pipe), 0);
        assert_int_equal(sigaction(SIGUSR1, &ign, &old_usr1), 0);

        struct {
                enum spawn_signals signals;
                bool sigpipe;
                uint64_t ignored;
        } cases[] = {
                {SPAWN_SIGNALS_STOP, false, SIGBIT(SIGPIPE) | SIGBIT(SIGUSR1)},
                {SPAWN_SIGNALS_STOP, true, SIGBIT(SIGUSR1)},
                {SPAWN_SIGNALS_ALL, false, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct spawn_options o = {
                        .argv = ARGV("sleep", "30"), .signals = cases[i].signals, .default_sigpipe = cases[i].sigpipe};
                struct spawn s;
                assert_int_equal(spawn_start(&o, &s), 0);
                assert_int_equal(status_mask(s.pid, "SigBlk:"), 0);
                assert_int_equal(status_mask(s.pid, "SigIgn:") & (SIGBIT(SIGPIPE) | SIGBIT(SIGUSR1)),
                                 cases[i].ignored);
                spawn_abort(&s);
        }
        sigaction(SIGPIPE, &old_pipe, NULL);
        sigaction(SIGUSR1, &old_usr1, NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
}

static void test_streams(void **state) {
        /* two pipes; stdin from /dev/null (cat sees EOF at once) */
        struct spawn_options o = {
                .argv = ARGV("/bin/sh", "-c", "echo out; echo err >&2; cat; exit 4"),
                .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_PIPE},
        };
        struct spawn s;
        assert_int_equal(spawn_start(&o, &s), 0);
        assert_int_equal(s.fd[0], -1);
        _cleanup_free_ char *out = read_all(s.fd[1]);
        _cleanup_free_ char *err = read_all(s.fd[2]);
        assert_string_equal(out, "out\n");
        assert_string_equal(err, "err\n");
        assert_int_equal(wait_status(&s), 4);

        /* 2>&1 on one pipe; a pipe for stdin too */
        struct spawn_options o2 = {
                .argv = ARGV("/bin/sh", "-c", "read line; echo \"got $line\"; echo err >&2"),
                .stdio = {SPAWN_STDIO_PIPE, SPAWN_STDIO_PIPE, SPAWN_STDIO_STDOUT},
        };
        assert_int_equal(spawn_start(&o2, &s), 0);
        assert_true(s.fd[0] >= 0);
        assert_int_equal(s.fd[2], -1);
        assert_int_equal(write_all(s.fd[0], "hi\n", 3), 0);
        close(TAKE_FD(s.fd[0]));
        _cleanup_free_ char *both = read_all(s.fd[1]);
        assert_string_equal(both, "got hi\nerr\n");
        assert_int_equal(wait_status(&s), 0);

        /* 2>&1 is for stderr only */
        struct spawn_options bad = {.argv = ARGV("true"), .stdio = {SPAWN_STDIO_STDOUT}};
        assert_int_equal(spawn_start(&bad, &s), -EINVAL);
}

static void test_env_workdir_path(void **state) {
        char *env[] = {"GAUNTLET_SPAWN_TEST=yes", "PATH=/usr/bin:/bin", NULL};
        struct spawn_options o = {
                .argv = ARGV("sh", "-c", "echo \"$GAUNTLET_SPAWN_TEST ${HOME:-nohome}\"; pwd"),
                .env = env,
                .workdir = "/",
                .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_INHERIT},
        };
        struct spawn s;
        assert_int_equal(spawn_start(&o, &s), 0);
        _cleanup_free_ char *out = read_all(s.fd[1]);
        assert_string_equal(out, "yes nohome\n/\n");
        assert_int_equal(wait_status(&s), 0);

        /* path apart from argv[0]: argv[0] is only the name the child sees */
        struct spawn_options p = {
                .path = "/bin/sh", .argv = ARGV("not-a-program", "-c", "exit 7")};
        assert_int_equal(spawn_start(&p, &s), 0);
        assert_int_equal(wait_status(&s), 7);
}

static void test_not_found(void **state) {
        size_t before = open_fds();
        struct spawn s = {.pid = 12345};
        struct spawn_options o = {
                .argv = ARGV("gauntlet-no-such-command-here"),
                .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_PIPE},
        };
        assert_int_equal(spawn_start(&o, &s), -ENOENT);
        struct spawn_options o2 = {.argv = ARGV("/nonexistent/gauntlet"), .stdio = {0, SPAWN_STDIO_PIPE}};
        assert_int_equal(spawn_start(&o2, &s), -ENOENT);
        struct spawn_options o3 = {.argv = ARGV("true"), .workdir = "/nonexistent/dir"};
        assert_int_equal(spawn_start(&o3, &s), -ENOENT);
        assert_int_equal(s.pid, 12345); /* untouched */
        assert_int_equal(open_fds(), before);
        /* nothing left to reap */
        assert_true(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

static void test_die_with_parent(void **state) {
        assert_int_equal(spawn_die_with_parent(SIGTERM, getppid()), 0);
        int sig = 0;
        assert_int_equal(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0), 0);
        assert_int_equal(sig, SIGTERM);
        assert_int_equal(spawn_die_with_parent(SIGTERM, getppid() + 1), -ESRCH);
        assert_int_equal(prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0), 0);
}

/* The "0::" line of /proc/PID/cgroup. */
static char *cgroup_of(pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        assert_int_equal(read_file_capped(path, 1 << 16, &text, &len), 0);
        char *p = strstr(text, "0::");
        assert_non_null(p);
        char *nl = strchr(p, '\n');
        char *r = nl ? strndup(p + 3, (size_t)(nl - p - 3)) : strdup(p + 3);
        assert_non_null(r);
        return r;
}

/* Born in a cgroup, by clone3 and by the child's own write: the child is a member before
 * it runs the program, and the other options hold as with posix_spawn. */
static void test_into_cgroup(void **state) {
        struct cgroup_base *b = NULL;
        _cleanup_free_ char *why = NULL;
        if (cgroup_base_open(&b, &why) < 0) {
                print_message("no cgroups here (%s)\n", why ? why : "?");
                skip();
        }
        for (int by_write = 0; by_write < 2; by_write++) {
                char token[33];
                assert_int_equal(random_hex(token, 16), 0);
                _cleanup_free_ char *name = cgroup_name(token);
                struct cgroup *cg = NULL;
                assert_int_equal(cgroup_create(b, name, &cg), 0);
                assert_int_equal(cgroup_populated(cg), 0);
                char *env[] = {"GAUNTLET_SPAWN_TEST=in", NULL};
                /* the child reads its own cgroup: it was there before the exec */
                struct spawn_options o = {
                        .argv = ARGV("/bin/sh", "-c", "echo $GAUNTLET_SPAWN_TEST; pwd; grep '^0::' /proc/self/cgroup; "
                                                      "echo err >&2; exec sleep 30"),
                        .env = env,
                        .workdir = "/",
                        .group = SPAWN_GROUP_NEW_SESSION,
                        .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_STDOUT},
                        .into_cgroup = true,
                        .cgroup_fd = cg->dirfd,
                        .cgroup_by_write = by_write,
                };
                struct spawn s;
                size_t before = open_fds();
                assert_int_equal(spawn_start(&o, &s), 0);
                assert_int_equal(open_fds(), before + 2); /* the pidfd and the pipe's read end */
                pid_t pgrp, sid;
                pgrp_session(s.pid, &pgrp, &sid);
                assert_int_equal(sid, s.pid);
                assert_int_equal(cgroup_populated(cg), 1);
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;
                assert_int_equal(cgroup_members(cg, &pids, &n), 0);
                bool member = false; /* with its grep, perhaps */
                for (size_t i = 0; i < n; i++)
                        member |= pids[i] == s.pid;
                assert_true(member);
                _cleanup_free_ char *in = cgroup_of(s.pid);
                assert_true(endswith(in, name));
                /* the sleep keeps the pipe open: read what came before it */
                _cleanup_buf_ struct buf out;
                buf_init(&out, 1 << 16);
                while (!strstr(buf_str(&out), "err\n")) {
                        struct pollfd p = {.fd = s.fd[1], .events = POLLIN};
                        assert_int_equal(poll(&p, 1, 5000), 1);
                        char tmp[512];
                        ssize_t k = read(s.fd[1], tmp, sizeof(tmp));
                        assert_true(k > 0);
                        assert_int_equal(buf_append(&out, tmp, (size_t)k), 0);
                }
                _cleanup_free_ char *want = strdup_printf("in\n/\n0::%s\nerr\n", in);
                assert_string_equal(buf_str(&out), want);
                /* once the shell is the sleep (a shell blocks signals around its forks) */
                char comm_path[64];
                snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)s.pid);
                for (int i = 0; i < 500; i++) {
                        _cleanup_free_ char *comm = NULL;
                        size_t len;
                        if (read_file_capped(comm_path, 64, &comm, &len) == 0 && startswith(comm, "sleep"))
                                break;
                        usleep(10000);
                }
                assert_int_equal(status_mask(s.pid, "SigBlk:"), 0);
                assert_int_equal(cgroup_remove(cg), -EBUSY);
                spawn_abort(&s);
                assert_int_equal(cgroup_populated(cg), 0);
                assert_int_equal(cgroup_remove(cg), 0);
                cgroup_free(cg);
        }

        /* A program that is not there: -ENOENT, nothing left, no descriptor leaked. */
        struct cgroup *cg = NULL;
        assert_int_equal(cgroup_create(b, "gauntlet-test-spawn-missing", &cg), 0);
        size_t before = open_fds();
        struct spawn s = {.pid = 12345};
        struct spawn_options o = {.argv = ARGV("gauntlet-no-such-command-here"),
                                  .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_STDOUT},
                                  .into_cgroup = true,
                                  .cgroup_fd = cg->dirfd};
        assert_int_equal(spawn_start(&o, &s), -ENOENT);
        struct spawn_options o2 = {.argv = ARGV("true"), .workdir = "/nonexistent/dir", .into_cgroup = true,
                                   .cgroup_fd = cg->dirfd, .cgroup_by_write = true};
        assert_int_equal(spawn_start(&o2, &s), -ENOENT);
        assert_int_equal(s.pid, 12345);
        assert_int_equal(open_fds(), before);
        assert_true(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
        assert_int_equal(cgroup_populated(cg), 0);
        assert_int_equal(cgroup_remove(cg), 0);
        cgroup_free(cg);
        cgroup_base_free(b);
}

/* ---- spawn_run_capture ---- */

static void test_capture_status(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        struct spawn_capture c[] = {
                {.argv = ARGV("sh", "-c", "echo out; echo err >&2; exit 3")},
                {.argv = ARGV("sh", "-c", "kill -TERM $$; sleep 5")},
                {.argv = ARGV("sh", "-c", "kill -KILL $$")},
                {.argv = ARGV("gauntlet-no-such-command-here")},
                {.argv = NULL},
                {.argv = ARGV("true")},
        };
        size_t before = open_fds();
        usec_t t0 = now_usec();
        assert_int_equal(spawn_run_capture(l, c, ELEMENTSOF(c), 5 * USEC_PER_SEC, SPAWN_CAPTURE_STOP, NULL), 0);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_int_equal(open_fds(), before);
        /* an exit: its code, no signal, both streams apart */
        assert_int_equal(c[0].error, 0);
        assert_int_equal(c[0].exit_code, 3);
        assert_int_equal(c[0].signal, 0);
        assert_string_equal(buf_str(&c[0].out[0]), "out\n");
        assert_string_equal(buf_str(&c[0].out[1]), "err\n");
        /* a signal: the signal, no exit code (not 128 + signal) */
        assert_int_equal(c[1].exit_code, -1);
        assert_int_equal(c[1].signal, SIGTERM);
        assert_int_equal(c[2].exit_code, -1);
        assert_int_equal(c[2].signal, SIGKILL);
        /* not started: the spawn's error, nothing else */
        assert_int_equal(c[3].error, -ENOENT);
        assert_int_equal(c[3].exit_code, -1);
        assert_int_equal(c[3].signal, 0);
        assert_string_equal(buf_str(&c[3].out[0]), "");
        assert_int_equal(c[4].error, -EINVAL);
        assert_int_equal(c[5].exit_code, 0);
        for (size_t i = 0; i < ELEMENTSOF(c); i++) {
                assert_false(c[i].timed_out);
                spawn_capture_release(&c[i]);
        }
        /* every child reaped */
        assert_true(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
        assert_int_equal(spawn_run_capture(l, NULL, 0, USEC_PER_SEC, SPAWN_CAPTURE_STOP, NULL), 0);
}

static void test_capture_cap(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        /* far more than the cap, on both streams: read to the end and dropped past the cap,
         * so the child never blocks on a full pipe */
        struct spawn_capture c = {.argv = ARGV("sh", "-c", "seq 200000; seq 200000 >&2"), .max_output = 100};
        assert_int_equal(spawn_run_capture(l, &c, 1, 5 * USEC_PER_SEC, SPAWN_CAPTURE_STOP, NULL), 0);
        assert_int_equal(c.exit_code, 0);
        assert_false(c.timed_out);
        for (int k = 0; k < 2; k++) {
                assert_int_equal(c.out[k].len, 100);
                assert_true(c.out[k].truncated);
                assert_memory_equal(buf_str(&c.out[k]), "1\n2\n3\n", 6);
        }
        spawn_capture_release(&c);
}

/* Whether pid is gone (or a zombie waiting for a parent other than this process). */
static bool process_gone(pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (read_file_capped(path, 4096, &text, &len) < 0)
                return true;
        const char *rp = strrchr(text, ')');
        return rp && rp[1] == ' ' && rp[2] == 'Z';
}

static void test_capture_timeout(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        char pidfile[] = "/tmp/test_spawn.XXXXXX";
        int fd = mkstemp(pidfile);
        assert_true(fd >= 0);
        close(fd);
        char script[256];
        /* exits at once but leaves a child of its group holding stdout: not timed out, its
         * output kept, the child killed at the deadline */
        snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; echo kept", pidfile);
        struct spawn_capture c[] = {
                {.argv = ARGV("sleep", "30")},
                {.argv = ARGV("sh", "-c", script)},
                {.argv = ARGV("sh", "-c", "sleep 0.1; echo fast")},
        };
        usec_t t0 = now_usec();
        assert_int_equal(spawn_run_capture(l, c, ELEMENTSOF(c), 400 * USEC_PER_MSEC, SPAWN_CAPTURE_STOP, NULL), 0);
        usec_t took = now_usec() - t0;
        assert_true(took >= 400 * USEC_PER_MSEC);
        assert_true(took < 1500 * USEC_PER_MSEC);
        assert_true(c[0].timed_out);
        assert_int_equal(c[0].exit_code, -1);
        assert_int_equal(c[0].signal, SIGKILL);
        assert_false(c[1].timed_out);
        assert_int_equal(c[1].exit_code, 0);
        assert_string_equal(buf_str(&c[1].out[0]), "kept\n");
        assert_false(c[2].timed_out);
        assert_string_equal(buf_str(&c[2].out[0]), "fast\n");
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                spawn_capture_release(&c[i]);

        _cleanup_free_ char *text = NULL;
        size_t len;
        assert_int_equal(read_file_capped(pidfile, 64, &text, &len), 0);
        unlink(pidfile);
        pid_t straggler = (pid_t)atoi(text);
        assert_true(straggler > 0);
        bool gone = false;
        for (int i = 0; i < 100 && !(gone = process_gone(straggler)); i++)
                usleep(20 * 1000);
        assert_true(gone);
}

/* Last: it blocks SIGTERM in this process for good (loop_catch_signals). */
static void test_capture_signal(void **state) {
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        assert_int_equal(loop_catch_signals(l), 0);
        /* FINISH: the signal is noted, the command runs to its end */
        struct spawn_capture c = {.argv = ARGV("sh", "-c", "kill -TERM $PPID; sleep 0.2; echo done")};
        bool intr = false;
        assert_int_equal(spawn_run_capture(l, &c, 1, 5 * USEC_PER_SEC, SPAWN_CAPTURE_FINISH, &intr), 0);
        assert_true(intr);
        assert_int_equal(c.exit_code, 0);
        assert_string_equal(buf_str(&c.out[0]), "done\n");
        spawn_capture_release(&c);
        /* STOP: -EINTR at once, the command killed (not a timeout) */
        struct spawn_capture d = {.argv = ARGV("sh", "-c", "kill -TERM $PPID; sleep 30")};
        intr = false;
        usec_t t0 = now_usec();
        assert_int_equal(spawn_run_capture(l, &d, 1, 5 * USEC_PER_SEC, SPAWN_CAPTURE_STOP, &intr), -EINTR);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_true(intr);
        assert_false(d.timed_out);
        assert_int_equal(d.signal, SIGKILL);
        spawn_capture_release(&d);
        assert_true(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

/* PATH as posix_spawnp reads it: the first executable file wins; a file that is there but
 * not executable is EACCES, none at all ENOENT. */
static void test_find_on_path(void **state) {
        (void)state;
        char dir[] = "/tmp/gauntlet-path-XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *a = strdup_printf("%s/a", dir), *b = strdup_printf("%s/b", dir),
                            *noexec = strdup_printf("%s/a/prog", dir), *exec = strdup_printf("%s/b/prog", dir);
        assert_int_equal(mkdir(a, 0700), 0);
        assert_int_equal(mkdir(b, 0700), 0);
        int fd = open(noexec, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        _cleanup_free_ char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
        _cleanup_free_ char *path = strdup_printf("%s:%s", a, b);
        setenv("PATH", path, 1);
        char *found = NULL;
        assert_int_equal(spawn_find_on_path("prog", &found), -EACCES);
        assert_null(found);
        fd = open(exec, O_WRONLY | O_CREAT | O_CLOEXEC, 0700);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(spawn_find_on_path("prog", &found), 0);
        assert_string_equal(found, exec);
        free(found);
        found = NULL;
        assert_int_equal(spawn_find_on_path("no-such-program", &found), -ENOENT);
        assert_null(found);
        if (old)
                setenv("PATH", old, 1);
        else
                unsetenv("PATH");
        unlink(noexec);
        unlink(exec);
        rmdir(a);
        rmdir(b);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_groups),
                cmocka_unit_test(test_signals),
                cmocka_unit_test(test_streams),
                cmocka_unit_test(test_env_workdir_path),
                cmocka_unit_test(test_not_found),
                cmocka_unit_test(test_die_with_parent),
                cmocka_unit_test(test_into_cgroup),
                cmocka_unit_test(test_capture_status),
                cmocka_unit_test(test_capture_cap),
                cmocka_unit_test(test_capture_timeout),
                cmocka_unit_test(test_capture_signal),
                cmocka_unit_test(test_find_on_path),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
