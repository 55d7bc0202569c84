/* spawn.c -- starting a child process: posix_spawn with the policy spelled out as options. */
#include "spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h> /* the system's: src/ is on the quote path only (-iquote) */
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "util.h"

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

static int attr_setup(const struct spawn_options *o, posix_spawnattr_t *attr) {
        sigset_t empty, defaults;
        sigemptyset(&empty);
        if (o->signals == SPAWN_SIGNALS_ALL) {
                sigfillset(&defaults);
        } else {
                sigemptyset(&defaults);
                sigaddset(&defaults, SIGINT);
                sigaddset(&defaults, SIGTERM);
                sigaddset(&defaults, SIGHUP);
        }
        if (o->default_sigpipe)
                sigaddset(&defaults, SIGPIPE);
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

int spawn_start(const struct spawn_options *o, struct spawn *ret) {
        if (!o->argv || !o->argv[0])
                return -EINVAL;
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
