/* spawn.c -- starting a child process: posix_spawn with the policy spelled out as options;
 * clone3 (or fork) when the child must be born in a cgroup. */
#include "proc/spawn.h"

#include <fcntl.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#include <signal.h>
#include <spawn.h> /* the system's: src/ is on the quote path only (-iquote) */
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/loop.h"
#include "proc/procs.h"
#include "base/util.h"

extern char **environ;

static void close_pair(int p[2]) {
        for (int k = 0; k < 2; k++)
                if (p[k] >= 0)
                        close(TAKE_FD(p[k]));
}

/* The file actions for the three streams. pipes[k] is stream k's pipe (read end first),
 * made here when it is SPAWN_STDIO_PIPE: both ends close-on-exec (dup2 gives the child its
 * end without the flag), the caller's end non-blocking. */
static int stdio_actions(const struct spawn_options *o, posix_spawn_file_actions_t *fa, int pipes[3][2]) {
        for (int k = 0; k < 3; k++) {
                enum spawn_stdio how = o->stdio[k];
                int r = 0;
                if (how == SPAWN_STDIO_STDOUT && k != 2)
                        return -EINVAL;
                switch (how) {
                case SPAWN_STDIO_INHERIT:
                        break;
                case SPAWN_STDIO_NULL:
                        r = posix_spawn_file_actions_addopen(fa, k, "/dev/null", k == 0 ? O_RDONLY : O_WRONLY, 0);
                        break;
                case SPAWN_STDIO_PIPE: {
                        if (pipe2(pipes[k], O_CLOEXEC) < 0)
                                return -errno;
                        int child = pipes[k][k == 0 ? 0 : 1], mine = pipes[k][k == 0 ? 1 : 0];
                        if (fcntl(mine, F_SETFL, fcntl(mine, F_GETFL) | O_NONBLOCK) < 0)
                                return -errno;
                        r = posix_spawn_file_actions_adddup2(fa, child, k);
                        break;
                }
                case SPAWN_STDIO_STDOUT:
                        r = posix_spawn_file_actions_adddup2(fa, 1, 2);
                        break;
                default:
                        return -EINVAL;
                }
                if (r != 0)
                        return -r;
        }
        return 0;
}

/* The signals whose dispositions go back to SIG_DFL in the child. */
static void default_signals(const struct spawn_options *o, sigset_t *defaults) {
        if (o->signals == SPAWN_SIGNALS_ALL) {
                sigfillset(defaults);
        } else {
                sigemptyset(defaults);
                sigaddset(defaults, SIGINT);
                sigaddset(defaults, SIGTERM);
                sigaddset(defaults, SIGHUP);
        }
        if (o->default_sigpipe)
                sigaddset(defaults, SIGPIPE);
}

static int attr_setup(const struct spawn_options *o, posix_spawnattr_t *attr) {
        sigset_t empty, defaults;
        sigemptyset(&empty);
        default_signals(o, &defaults);
        short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        int r;
        switch (o->group) {
        case SPAWN_GROUP_INHERIT:
                break;
        case SPAWN_GROUP_NEW:
                flags |= POSIX_SPAWN_SETPGROUP;
                if ((r = posix_spawnattr_setpgroup(attr, 0)) != 0)
                        return -r;
                break;
        case SPAWN_GROUP_NEW_SESSION:
                flags |= POSIX_SPAWN_SETSID;
                break;
        default:
                return -EINVAL;
        }
        if ((r = posix_spawnattr_setsigmask(attr, &empty)) != 0 ||
            (r = posix_spawnattr_setsigdefault(attr, &defaults)) != 0 || (r = posix_spawnattr_setflags(attr, flags)) != 0)
                return -r;
        return 0;
}

/* What the child of spawn_clone does between the clone and the exec, all prepared by the
 * parent: the child is a copy of a process that may have had other threads, so it makes
 * system calls only (no allocation, no locks), in posix_spawn's order. */
struct plan {
        const char *path;
        char *const *argv, *const *env;
        const char *workdir;
        int dup_from[3];            /* the descriptor that becomes stream k; -1: inherited */
        enum spawn_group group;
        sigset_t defaults;
        int move_fd;                /* the cgroup's cgroup.procs, to write "0" to first; or -1 */
        int err_fd;                 /* the error pipe's write end (close-on-exec) */
};

static _Noreturn void child_run(const struct plan *p) {
        if (p->move_fd >= 0 && write(p->move_fd, "0", 1) != 1)
                goto fail;
        if (p->group == SPAWN_GROUP_NEW_SESSION && setsid() < 0)
                goto fail;
        if (p->group == SPAWN_GROUP_NEW && setpgid(0, 0) < 0)
                goto fail;
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        for (int sig = 1; sig < NSIG; sig++)
                if (sigismember(&p->defaults, sig) == 1)
                        (void)sigaction(sig, &dfl, NULL); /* SIGKILL, SIGSTOP: refused, harmless */
        for (int k = 0; k < 3; k++) {
                int from = p->dup_from[k];
                /* dup2 onto itself would keep close-on-exec */
                if (from >= 0 && (from == k ? fcntl(k, F_SETFD, 0) : dup2(from, k)) < 0)
                        goto fail;
        }
        if (p->workdir && chdir(p->workdir) < 0)
                goto fail;
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (strchr(p->path, '/'))
                execve(p->path, p->argv, p->env);
        else
                execvpe(p->path, p->argv, p->env);
fail:;
        int e = errno;
        ssize_t k = write(p->err_fd, &e, sizeof(e));
        _exit(k == (ssize_t)sizeof(e) ? 127 : 126);
}

/* spawn_start for a child born in a cgroup (see spawn.h). */
static int spawn_clone(const struct spawn_options *o, struct spawn *ret) {
        int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
        int err_pipe[2] = {-1, -1};
        _cleanup_close_ int null_fd = -1, move_fd = -1;
        struct plan p = {.path = o->path ? o->path : o->argv[0], .argv = o->argv, .env = o->env ? o->env : environ,
                         .workdir = o->workdir, .dup_from = {-1, -1, -1}, .group = o->group, .move_fd = -1};
        int r = 0, pidfd = -1;
        pid_t pid = -1;
        default_signals(o, &p.defaults);
        for (int k = 0; k < 3 && r == 0; k++) {
                switch (o->stdio[k]) {
                case SPAWN_STDIO_INHERIT:
                        break;
                case SPAWN_STDIO_NULL:
                        if (null_fd < 0 && (null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
                                r = -errno;
                        p.dup_from[k] = null_fd;
                        break;
                case SPAWN_STDIO_PIPE: {
                        if (pipe2(pipes[k], O_CLOEXEC) < 0) {
                                r = -errno;
                                break;
                        }
                        int mine = pipes[k][k == 0 ? 1 : 0];
                        if (fcntl(mine, F_SETFL, fcntl(mine, F_GETFL) | O_NONBLOCK) < 0)
                                r = -errno;
                        p.dup_from[k] = pipes[k][k == 0 ? 0 : 1];
                        break;
                }
                case SPAWN_STDIO_STDOUT:
                        if (k != 2)
                                r = -EINVAL;
                        p.dup_from[k] = 1;
                        break;
                default:
                        r = -EINVAL;
                }
        }
        if (r == 0 && pipe2(err_pipe, O_CLOEXEC) < 0)
                r = -errno;
        if (r < 0)
                goto out;
        p.err_fd = err_pipe[1];

        if (!o->cgroup_by_write) {
                struct clone_args ca = {.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
                                        .pidfd = (uint64_t)(uintptr_t)&pidfd,
                                        .exit_signal = SIGCHLD,
                                        .cgroup = (uint64_t)o->cgroup_fd};
                pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
                if (pid == 0)
                        child_run(&p);
                /* Refused for want of clone3 or of CLONE_INTO_CGROUP (before 5.7), or by a
                 * seccomp filter: fork instead. The cgroup's own refusals stand. */
                if (pid < 0 && errno != ENOSYS && errno != E2BIG && errno != EINVAL && errno != EPERM) {
                        r = -errno;
                        goto out;
                }
        }
        if (pid < 0) {
                pidfd = -1;
                if ((move_fd = openat(o->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0) {
                        r = -errno;
                        goto out;
                }
                p.move_fd = move_fd;
                pid = fork();
                if (pid == 0)
                        child_run(&p);
                if (pid < 0) {
                        r = -errno;
                        goto out;
                }
        }
        close(TAKE_FD(err_pipe[1]));
        /* End of file: the exec happened. An errno: it never ran the program. */
        int child_errno = 0;
        ssize_t k;
        do
                k = read(err_pipe[0], &child_errno, sizeof(child_errno));
        while (k < 0 && errno == EINTR);
        bool own_group = o->group != SPAWN_GROUP_INHERIT;
        if (k == (ssize_t)sizeof(child_errno) || (pidfd < 0 && (pidfd = pidfd_open(pid, 0)) < 0)) {
                r = k == (ssize_t)sizeof(child_errno) ? -child_errno : -errno;
                if (k != (ssize_t)sizeof(child_errno))
                        kill(own_group ? -pid : pid, SIGKILL);
                waitpid(pid, NULL, 0);
                if (pidfd >= 0)
                        close(pidfd);
                goto out;
        }
        struct spawn s = {.pid = pid, .pidfd = pidfd, .fd = {-1, -1, -1}, .own_group = own_group};
        for (int i = 0; i < 3; i++)
                if (pipes[i][0] >= 0)
                        s.fd[i] = TAKE_FD(pipes[i][i == 0 ? 1 : 0]);
        *ret = s;
        r = 0;
out:
        for (int i = 0; i < 3; i++)
                close_pair(pipes[i]);
        close_pair(err_pipe);
        return r;
}

int spawn_start(const struct spawn_options *o, struct spawn *ret) {
        if (!o->argv || !o->argv[0])
                return -EINVAL;
        if (o->into_cgroup)
                return spawn_clone(o, ret);
        const char *path = o->path ? o->path : o->argv[0];
        int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int r;

        if ((r = -posix_spawn_file_actions_init(&fa)) < 0)
                return r;
        if ((r = -posix_spawnattr_init(&attr)) < 0)
                goto destroy_fa;
        if ((r = stdio_actions(o, &fa, pipes)) < 0 || (r = attr_setup(o, &attr)) < 0)
                goto destroy;
        if (o->workdir && (r = -posix_spawn_file_actions_addchdir_np(&fa, o->workdir)) < 0)
                goto destroy;

        pid_t pid;
        char *const *env = o->env ? o->env : environ;
        if (strchr(path, '/'))
                r = -posix_spawn(&pid, path, &fa, &attr, o->argv, env);
        else
                r = -posix_spawnp(&pid, path, &fa, &attr, o->argv, env);
        if (r < 0)
                goto destroy;

        struct spawn s = {.pid = pid, .pidfd = -1, .fd = {-1, -1, -1}, .own_group = o->group != SPAWN_GROUP_INHERIT};
        s.pidfd = pidfd_open(pid, 0);
        if (s.pidfd < 0) {
                /* Without a pidfd its exit could not be waited for as an event: end it now
                 * (it has had no time to start anything that matters). */
                r = -errno;
                kill(s.own_group ? -pid : pid, SIGKILL);
                waitpid(pid, NULL, 0);
                goto destroy;
        }
        for (int k = 0; k < 3; k++) {
                if (pipes[k][0] < 0)
                        continue;
                s.fd[k] = TAKE_FD(pipes[k][k == 0 ? 1 : 0]);
                close_pair(pipes[k]); /* the child's end */
        }
        *ret = s;
        r = 0;

destroy:
        posix_spawnattr_destroy(&attr);
destroy_fa:
        posix_spawn_file_actions_destroy(&fa);
        for (int k = 0; k < 3; k++)
                close_pair(pipes[k]);
        return r;
}

void spawn_release(struct spawn *s) {
        if (s->pidfd >= 0)
                close(TAKE_FD(s->pidfd));
        for (int k = 0; k < 3; k++)
                if (s->fd[k] >= 0)
                        close(TAKE_FD(s->fd[k]));
}

void spawn_abort(struct spawn *s) {
        if (s->pid > 0) {
                if (s->own_group)
                        kill(-s->pid, SIGKILL);
                if (s->pidfd >= 0) {
                        pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
                        waitid(P_PIDFD, (id_t)s->pidfd, &(siginfo_t){0}, WEXITED);
                } else {
                        kill(s->pid, SIGKILL);
                        waitpid(s->pid, NULL, 0);
                }
        }
        spawn_release(s);
}

int spawn_die_with_parent(int sig, pid_t parent) {
        if (prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) < 0)
                return -errno;
        /* The parent may have died before the call: then this process was re-parented and
         * the signal will never come. */
        if (getppid() != parent)
                return -ESRCH;
        return 0;
}

/* ---- a command run to its end for its output ---- */

struct capture_job {
        struct spawn_capture *c;
        struct loop *loop;
        pid_t pid;                  /* 0: not started */
        int pidfd;
        int fd[2];                  /* read ends of stdout, stderr; -1 once at EOF */
        bool reaped;
};

static bool capture_done(const struct capture_job *j) {
        return j->pid <= 0 || (j->reaped && j->fd[0] < 0 && j->fd[1] < 0);
}

static void capture_close(struct capture_job *j, int k) {
        if (j->fd[k] < 0)
                return;
        loop_unwatch_fd(j->loop, j->fd[k]);
        close(TAKE_FD(j->fd[k]));
}

static void capture_on_stream(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct capture_job *j = userdata;
        int k = fd == j->fd[0] ? 0 : 1;
        char tmp[4096];
        for (;;) {
                ssize_t got = read(fd, tmp, sizeof(tmp));
                if (got > 0) {
                        (void)buf_append(&j->c->out[k], tmp, (size_t)got); /* past the cap: dropped */
                        continue;
                }
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return;
                capture_close(j, k); /* EOF or a read error */
                return;
        }
}

static void capture_reap(struct capture_job *j, int flags) {
        siginfo_t si = {0};
        if (j->reaped || waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED | flags) < 0 || si.si_pid == 0)
                return;
        j->reaped = true;
        if (si.si_code == CLD_EXITED)
                j->c->exit_code = si.si_status;
        else
                j->c->signal = si.si_status; /* CLD_KILLED, CLD_DUMPED */
        loop_unwatch_fd(j->loop, j->pidfd);
}

static void capture_on_exit(struct loop *l, int fd, uint32_t revents, void *userdata) {
        capture_reap(userdata, WNOHANG);
}

static int capture_start(struct capture_job *j) {
        struct spawn_options o = {
                .argv = j->c->argv,
                .env = j->c->env,
                .group = SPAWN_GROUP_NEW,
                .signals = SPAWN_SIGNALS_ALL,
                .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_PIPE},
        };
        struct spawn child;
        int r = spawn_start(&o, &child);
        if (r < 0)
                return r;
        j->pid = child.pid;
        /* Its status is ours to collect, not a subreaper's sweep of orphans. With the table
         * full it is still watched: only that sweep could then take it. */
        (void)procs_register_child(j->pid);
        j->pidfd = TAKE_FD(child.pidfd);
        j->fd[0] = TAKE_FD(child.fd[1]);
        j->fd[1] = TAKE_FD(child.fd[2]);
        if ((r = loop_watch_fd(j->loop, j->pidfd, EPOLLIN, capture_on_exit, j)) < 0 ||
            (r = loop_watch_fd(j->loop, j->fd[0], EPOLLIN, capture_on_stream, j)) < 0 ||
            (r = loop_watch_fd(j->loop, j->fd[1], EPOLLIN, capture_on_stream, j)) < 0)
                return r; /* started: the caller kills and reaps it */
        return 0;
}

/* Ends what is left of the job (its group, when it or something it started is still
 * there), reaps it and closes its descriptors. at_deadline: the time ran out (rather than
 * a signal or an error cutting the wait short). */
static void capture_finish(struct capture_job *j, bool at_deadline) {
        if (j->pid <= 0)
                return;
        if (!j->reaped) {
                j->c->timed_out = at_deadline;
                kill(-j->pid, SIGKILL);
                pidfd_send_signal(j->pidfd, SIGKILL, NULL, 0);
                capture_reap(j, 0); /* SIGKILLed: prompt */
        } else if (j->fd[0] >= 0 || j->fd[1] >= 0) {
                kill(-j->pid, SIGKILL); /* exited, but something it started holds the pipes */
        }
        capture_close(j, 0);
        capture_close(j, 1);
        loop_unwatch_fd(j->loop, j->pidfd);
        close(TAKE_FD(j->pidfd));
        procs_unregister_child(j->pid);
}

int spawn_run_capture(struct loop *l, struct spawn_capture *runs, size_t n, usec_t timeout,
                      enum spawn_capture_on_signal on_signal, bool *ret_interrupted) {
        for (size_t i = 0; i < n; i++) {
                struct spawn_capture *c = &runs[i];
                buf_init(&c->out[0], c->max_output);
                buf_init(&c->out[1], c->max_output);
                c->error = 0;
                c->exit_code = -1;
                c->signal = 0;
                c->timed_out = false;
        }
        if (n == 0)
                return 0;
        struct capture_job *jobs = calloc(n, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        int r = 0;
        bool interrupted = false;
        for (size_t i = 0; i < n && r == 0; i++) {
                struct capture_job *j = &jobs[i];
                *j = (struct capture_job){.c = &runs[i], .loop = l, .pidfd = -1, .fd = {-1, -1}};
                int k = capture_start(j);
                if (k < 0 && j->pid > 0)
                        r = k; /* started, but the loop cannot watch it */
                else if (k < 0)
                        runs[i].error = k;
                if (k == -ENOMEM)
                        r = k;
        }
        /* A job not reached above is zeroed by calloc: pid 0, nothing to finish. */
        usec_t deadline = now_usec() + timeout;
        while (r == 0) {
                bool all = true;
                for (size_t i = 0; i < n && all; i++)
                        all = capture_done(&jobs[i]);
                if (all)
                        break;
                int k = loop_iterate(l, deadline);
                if (k == -EINTR) {
                        interrupted = true;
                        if (on_signal == SPAWN_CAPTURE_STOP)
                                r = k;
                } else if (k == -ETIME)
                        break;
                else if (k < 0)
                        r = k;
                /* an exit the loop has not dispatched yet (or at all: a full table) */
                for (size_t i = 0; i < n; i++)
                        if (jobs[i].pid > 0)
                                capture_reap(&jobs[i], WNOHANG);
        }
        for (size_t i = 0; i < n; i++)
                capture_finish(&jobs[i], r == 0);
        free(jobs);
        if (ret_interrupted)
                *ret_interrupted = interrupted;
        return r;
}

void spawn_capture_release(struct spawn_capture *c) {
        buf_release(&c->out[0]);
        buf_release(&c->out[1]);
}

int spawn_find_on_path(const char *name, char **ret) {
        const char *path = getenv("PATH");
        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        int r = -ENOENT;
        for (const char *p = path; *p;) {
                const char *colon = strchr(p, ':');
                size_t n = colon ? (size_t)(colon - p) : strlen(p);
                _cleanup_free_ char *f = n ? strdup_printf("%.*s/%s", (int)n, p, name) : strdup_printf("./%s", name);
                if (!f)
                        return -ENOMEM;
                struct stat st;
                if (stat(f, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (access(f, X_OK) == 0) {
                                *ret = TAKE_PTR(f);
                                return 0;
                        }
                        r = -EACCES;
                }
                p += n + (colon ? 1 : 0);
        }
        return r;
}
