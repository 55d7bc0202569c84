/* procs.c -- finding and ending a server's processes through /proc and pidfds. */
#include "proc/procs.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "text/text.h"

struct proc_info {
        pid_t pid, ppid, sid;
        char state;
        bool match;
};

/* Reads /proc/PID/stat into buf (of size): *ret points at the space before its field 3. The
 * comm field may hold spaces and parentheses, so everything is read after the last ')'. */
static int stat_fields(pid_t pid, char *buf, size_t size, char **ret) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n <= 0)
                return n < 0 ? -errno : -EIO;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        *ret = p + 1;
        return 0;
}

/* The space before field `field` (> 3) of a stat line, from p at the one before field 3;
 * NULL when the line is shorter. */
static char *stat_field(char *p, int field) {
        for (int f = 3; f < field && p; f++)
                p = strchr(p + 1, ' ');
        return p;
}

static int read_stat(pid_t pid, struct proc_info *ret, uint64_t *ret_start) {
        char buf[1024], *p;
        int r = stat_fields(pid, buf, sizeof(buf), &p);
        if (r < 0)
                return r;
        char state;
        int ppid, pgrp, sid;
        if (sscanf(p, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
                return -EIO;
        if (ret)
                *ret = (struct proc_info){.pid = pid, .ppid = ppid, .sid = sid, .state = state};
        if (ret_start) {
                char *q = stat_field(p, 22); /* starttime */
                if (!q)
                        return -EIO;
                *ret_start = strtoull(q + 1, NULL, 10);
        }
        return 0;
}

int procs_starttime(pid_t pid, uint64_t *ret) {
        int r = read_stat(pid, NULL, ret);
        return r == -ENOENT ? -ESRCH : r;
}

bool procs_alive(pid_t pid, uint64_t starttime) {
        struct proc_info info;
        uint64_t start = 0;
        return pid > 0 && read_stat(pid, &info, &start) == 0 && start == starttime && info.state != 'Z' &&
               info.state != 'X' && info.state != 'x';
}

int procs_cpu_ticks(const pid_t *pids, size_t n, uint64_t *ret) {
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
                char buf[1024], *p;
                int r = stat_fields(pids[i], buf, sizeof(buf), &p);
                if (r == -ENOENT || r == -ESRCH || r == -EIO)
                        continue; /* gone meanwhile (a read of a dead one's file fails) */
                if (r < 0)
                        return r;
                /* utime, stime, cutime, cstime */
                if (!(p = stat_field(p, 14)))
                        return -EIO;
                for (int field = 14; field <= 17; field++) {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(p + 1, &end, 10);
                        if (errno || end == p + 1)
                                return -EIO;
                        sum += v;
                        p = end;
                }
        }
        *ret = sum;
        return 0;
}

/* Whether /proc/PID/environ holds exactly "GAUNTLET_ATTEMPT=<token>". Environments are
 * read up to 1 MiB; a larger one is searched in its first MiB only. */
static bool environ_has(pid_t pid, const char *needle, size_t needle_len) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = read_file_capped(path, 1 << 20, &data, &len);
        if (r < 0)
                return false;
        for (size_t i = 0; i < len;) {
                const char *entry = data + i;
                size_t elen = strnlen(entry, len - i);
                if (elen == needle_len && memcmp(entry, needle, needle_len) == 0)
                        return true;
                i += elen + 1;
        }
        return false;
}

static bool is_registered(pid_t pid);

int procs_find(const struct procs_query *q, pid_t **ret, size_t *ret_n) {
        if (q->cgroup)
                return cgroup_members(q->cgroup, ret, ret_n);
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        struct proc_info *all = NULL;
        size_t n = 0, cap = 0;
        pid_t self = getpid();
        _cleanup_free_ char *needle = NULL;
        if (q->token && !(needle = strdup_printf("%s=%s", PROCS_TOKEN_VAR, q->token))) {
                closedir(d);
                return -ENOMEM;
        }
        size_t needle_len = needle ? strlen(needle) : 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                pid_t pid = (pid_t)atoi(de->d_name);
                struct proc_info info;
                if (pid <= 1 || pid == self || read_stat(pid, &info, NULL) < 0)
                        continue;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 256;
                        struct proc_info *na = realloc(all, nc * sizeof(*na));
                        if (!na) {
                                free(all);
                                closedir(d);
                                return -ENOMEM;
                        }
                        all = na;
                        cap = nc;
                }
                info.match = (q->root && pid == q->root) || (q->sid && info.sid == q->sid) ||
                             (q->adopted && info.ppid == self && !is_registered(pid)) ||
                             (needle && environ_has(pid, needle, needle_len));
                all[n++] = info;
        }
        closedir(d);
        /* Descendants of a server process are server processes: mark children of marked
         * processes until nothing changes (gauntlet itself is not in the list). */
        bool changed = true;
        while (changed) {
                changed = false;
                for (size_t i = 0; i < n; i++) {
                        if (all[i].match)
                                continue;
                        for (size_t j = 0; j < n; j++)
                                if (all[j].match && all[j].pid == all[i].ppid) {
                                        all[i].match = true;
                                        changed = true;
                                        break;
                                }
                }
        }
        pid_t *out = malloc((n ? n : 1) * sizeof(pid_t));
        if (!out) {
                free(all);
                return -ENOMEM;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (all[i].match && all[i].state != 'Z' && all[i].state != 'X')
                        out[k++] = all[i].pid;
        free(all);
        *ret = out;
        *ret_n = k;
        return 0;
}

int procs_new_token(char buf[static 33]) {
        return random_hex(buf, 16);
}

/* Children registered by their owners: not reaped here. A sweep runs few servers at once. */
static pid_t registered[64];
static size_t n_registered;

int procs_register_child(pid_t pid) {
        if (n_registered == ELEMENTSOF(registered))
                return -ENOSPC;
        registered[n_registered++] = pid;
        return 0;
}

void procs_unregister_child(pid_t pid) {
        for (size_t i = 0; i < n_registered; i++)
                if (registered[i] == pid) {
                        registered[i] = registered[--n_registered];
                        return;
                }
}

static bool is_registered(pid_t pid) {
        for (size_t i = 0; i < n_registered; i++)
                if (registered[i] == pid)
                        return true;
        return false;
}

/* Reaps gauntlet's unregistered children through /proc/self/task/TID/children, each
 * thread's list of its children (an orphan is adopted by one thread of the subreaper).
 * -ENOENT without those files (a kernel without CONFIG_PROC_CHILDREN). */
static int reap_listed_children(void) {
        DIR *d = opendir("/proc/self/task");
        if (!d)
                return -errno;
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                _cleanup_free_ char *path = strdup_printf("/proc/self/task/%s/children", de->d_name);
                _cleanup_free_ char *text = NULL;
                if (!path) {
                        r = -ENOMEM;
                        break;
                }
                if ((r = read_file_capped(path, 1 << 20, &text, NULL)) < 0)
                        break;
                for (char *p = text, *end; *p; p = end) {
                        long pid = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        /* a live child gives 0: only a zombie is reaped */
                        if (pid > 0 && !is_registered((pid_t)pid))
                                waitpid((pid_t)pid, NULL, WNOHANG);
                }
        }
        closedir(d);
        return r;
}

/* Reaps zombie children of gauntlet (adopted orphans, as a subreaper) not registered. */
static void procs_reap_orphans(void) {
        if (reap_listed_children() != -ENOENT)
                return;
        /* Walk /proc for zombies whose parent is us rather than waitpid(-1): that would also
         * collect registered children whose owners want their status. */
        DIR *d = opendir("/proc");
        if (!d)
                return;
        pid_t self = getpid();
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                pid_t pid = (pid_t)atoi(de->d_name);
                struct proc_info info;
                if (read_stat(pid, &info, NULL) < 0 || info.ppid != self || info.state != 'Z')
                        continue;
                if (!is_registered(pid))
                        waitpid(pid, NULL, WNOHANG);
        }
        closedir(d);
}

int procs_become_subreaper(void) {
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

struct watched {
        int pidfd;
        bool gone;
};

static void on_pidfd(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct watched *w = userdata;
        w->gone = true;
        loop_unwatch_fd(l, fd);
}

/* Whether pid ignores SIGTERM (SigIgn in /proc/PID/status): the kernel dropped the one it
 * was sent, and waiting for it to act on it is waiting for nothing. */
static bool ignores_sigterm(pid_t pid) {
        char path[64], buf[4096];
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        const char *p = strstr(buf, "\nSigIgn:");
        if (!p)
                return false;
        unsigned long long mask = strtoull(p + strlen("\nSigIgn:"), NULL, 16);
        return (mask >> (SIGTERM - 1)) & 1;
}

/* After SIGTERM: whether every process not yet gone ignores it. */
static bool all_left_ignore(const pid_t *pids, const struct watched *w, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!w[i].gone && !ignores_sigterm(pids[i]))
                        return false;
        return true;
}

/* Signals every listed process through a pidfd and waits until all exited or `until`;
 * once `main` (when listed; 0: none) is gone, at most `straggler_grace` more (0: no
 * shortening). After SIGTERM, the wait ends as soon as every process left ignores it.
 * Returns how many it signalled. */
static int signal_and_wait(struct loop *l, const pid_t *pids, size_t n, int sig, usec_t until, pid_t main,
                           usec_t straggler_grace) {
        struct watched *w = calloc(n ? n : 1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        size_t pending = 0;
        int signalled = 0;
        ssize_t main_at = -1;
        for (size_t i = 0; i < n; i++) {
                if (main && pids[i] == main)
                        main_at = (ssize_t)i;
                w[i].pidfd = pidfd_open(pids[i], 0);
                if (w[i].pidfd < 0) {
                        w[i].gone = true; /* exited between the search and now */
                        continue;
                }
                if (pidfd_send_signal(w[i].pidfd, sig, NULL, 0) == 0)
                        signalled++;
                if (loop_watch_fd(l, w[i].pidfd, EPOLLIN, on_pidfd, &w[i]) < 0) {
                        close(w[i].pidfd);
                        w[i].pidfd = -1;
                        w[i].gone = true;
                        continue;
                }
                pending++;
        }
        /* the main process already gone: everything here is a straggler */
        if (straggler_grace && (main_at < 0 || w[main_at].gone))
                until = MIN(until, now_usec() + straggler_grace);
        bool main_gone = main_at < 0 || w[main_at].gone;
        while (pending > 0) {
                if (sig == SIGTERM && all_left_ignore(pids, w, n))
                        break;
                int r = loop_iterate(l, until);
                if (r == -ETIME)
                        break;
                /* A second Ctrl-C during shutdown does not abandon the processes: go on. */
                pending = 0;
                for (size_t i = 0; i < n; i++)
                        if (!w[i].gone)
                                pending++;
                if (straggler_grace && !main_gone && w[main_at].gone) {
                        main_gone = true;
                        until = MIN(until, now_usec() + straggler_grace);
                }
        }
        for (size_t i = 0; i < n; i++) {
                if (w[i].pidfd < 0)
                        continue;
                if (!w[i].gone)
                        loop_unwatch_fd(l, w[i].pidfd);
                close(w[i].pidfd);
        }
        free(w);
        return signalled;
}

static void on_cgroup_event(struct loop *l, int fd, uint32_t revents, void *userdata) {
        (void)cgroup_populated(userdata); /* re-arms the event; the waiter reads it again */
}

/* Waits as events until the cgroup is empty or `until`. 1: empty; 0: not yet; or -errno. */
static int cgroup_wait_empty(struct loop *l, const struct cgroup *cg, usec_t until) {
        int r = loop_watch_fd(l, cg->events_fd, EPOLLPRI, on_cgroup_event, (void *)cg);
        if (r < 0)
                return r;
        while ((r = cgroup_populated(cg)) == 1)
                if (loop_iterate(l, until) == -ETIME)
                        break;
        loop_unwatch_fd(l, cg->events_fd);
        if (r == 1)
                r = cgroup_populated(cg);
        return r < 0 ? r : r == 0;
}

/* procs_terminate's SIGKILL for a cgroup: kill it all at once, until it is empty. */
static int cgroup_terminate(struct loop *l, const struct cgroup *cg, usec_t deadline, size_t *killed) {
        for (;;) {
                procs_reap_orphans();
                int r = cgroup_populated(cg);
                if (r <= 0)
                        return r;
                if (now_usec() >= deadline)
                        return -ETIME;
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;
                if ((r = cgroup_members(cg, &pids, &n)) < 0)
                        return r;
                r = cgroup_kill(cg);
                if (r == -EOPNOTSUPP) {
                        /* Before Linux 5.14: each member; a fork in flight is caught next round. */
                        for (size_t i = 0; i < n; i++) {
                                int fd = pidfd_open(pids[i], 0);
                                if (fd >= 0) {
                                        pidfd_send_signal(fd, SIGKILL, NULL, 0);
                                        close(fd);
                                }
                        }
                } else if (r < 0)
                        return r;
                *killed += n;
                if ((r = cgroup_wait_empty(l, cg, MIN(now_usec() + 5 * USEC_PER_SEC, deadline))) < 0)
                        return r;
        }
}

int procs_terminate(struct loop *l, const struct procs_query *q, usec_t grace, usec_t deadline,
                    size_t *ret_killed) {
        size_t killed = 0;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = procs_find(q, &pids, &n);
        if (r < 0)
                return r;
        if (n > 0) {
                usec_t until = MIN(now_usec() + grace, deadline);
                r = signal_and_wait(l, pids, n, SIGTERM, until, q->main, q->straggler_grace);
                if (r < 0)
                        return r;
        }
        if (q->cgroup) {
                r = cgroup_terminate(l, q->cgroup, deadline, &killed);
                procs_reap_orphans();
                if (ret_killed)
                        *ret_killed = killed;
                return r;
        }
        /* Whatever is left (or appeared meanwhile) gets SIGKILL, until nothing is left. */
        for (;;) {
                procs_reap_orphans();
                free(pids);
                pids = NULL;
                r = procs_find(q, &pids, &n);
                if (r < 0)
                        return r;
                if (n == 0)
                        break;
                if (now_usec() >= deadline) {
                        if (ret_killed)
                                *ret_killed = killed;
                        return -ETIME;
                }
                r = signal_and_wait(l, pids, n, SIGKILL, MIN(now_usec() + 5 * USEC_PER_SEC, deadline), 0, 0);
                if (r < 0)
                        return r;
                killed += (size_t)r;
        }
        if (ret_killed)
                *ret_killed = killed;
        return 0;
}

/* ---- who listens on a port ------------------------------------------------------------ */

/* /proc/net/tcp on a busy host: about 150 bytes per socket; this is a million of them. */
#define NET_TCP_MAX ((size_t)160 << 20)
/* "socket:[" + 20 digits + "]" */
#define SOCKET_LINK_MAX 64

/* One hex word of an address as /proc/net/tcp prints it: a 32-bit value in host order,
 * whose bytes in memory are the address's bytes in network order. */
static bool parse_word(const char *p, unsigned char out[4]) {
        uint32_t x = 0;
        for (int i = 0; i < 8; i++) {
                int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                if (d < 0)
                        return false;
                x = x << 4 | (uint32_t)d;
        }
        memcpy(out, &x, 4);
        return true;
}

int procs_parse_listeners(const char *text, int family, int port, struct procs_listener **v, size_t *n) {
        size_t words = family == AF_INET6 ? 4 : 1;
        const char *line = strchr(text, '\n'); /* the header */
        while (line && *++line) {
                const char *end = strchr(line, '\n');
                /* "  N: ADDR:PORT REMADDR:PORT ST TXQ:RXQ TR:WHEN RETR UID TIMEOUT INODE ..." */
                const char *p = strchr(line, ':');
                line = end;
                if (!p)
                        continue;
                p++;
                while (*p == ' ')
                        p++;
                struct procs_listener l = {.family = family};
                size_t w;
                for (w = 0; w < words && parse_word(p + 8 * w, l.addr + 4 * w); w++)
                        ;
                if (w < words || p[8 * words] != ':')
                        continue;
                char *q;
                unsigned long lport = strtoul(p + 8 * words + 1, &q, 16);
                unsigned long state, uid, timeout;
                unsigned long long inode;
                char rem[64];
                if (sscanf(q, " %63s %lx %*s %*s %*s %lu %lu %llu", rem, &state, &uid, &timeout, &inode) != 5)
                        continue;
                if (state != 0x0A || lport != (unsigned long)port)
                        continue; /* 0x0A: TCP_LISTEN */
                l.inode = inode;
                l.uid = (uint32_t)uid;
                struct procs_listener *nv = realloc(*v, (*n + 1) * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                *v = nv;
                nv[(*n)++] = l;
        }
        return 0;
}

int procs_listeners(int port, struct procs_listener **ret, size_t *ret_n) {
        static const struct {
                const char *path;
                int family;
        } files[] = {{"/proc/net/tcp", AF_INET}, {"/proc/net/tcp6", AF_INET6}};
        struct procs_listener *v = NULL;
        size_t n = 0;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *text = NULL;
                int r = read_file_capped(files[i].path, NET_TCP_MAX, &text, NULL);
                if (r == -ENOENT && files[i].family == AF_INET6)
                        continue; /* a kernel without IPv6 */
                if (r >= 0)
                        r = procs_parse_listeners(text, files[i].family, port, &v, &n);
                if (r < 0) {
                        free(v);
                        return r;
                }
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* 1 when one of pid's descriptors is the socket `want` ("socket:[INODE]"), 0 when none is,
 * negative errno when its descriptor table cannot be read. */
static int holds_socket(pid_t pid, const char *want) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        int found = 0;
        struct dirent *de;
        while (!found && (de = readdir(d))) {
                char link[SOCKET_LINK_MAX];
                if (de->d_name[0] == '.')
                        continue;
                ssize_t k = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
                if (k <= 0)
                        continue;
                link[k] = '\0';
                found = strcmp(link, want) == 0;
        }
        closedir(d);
        return found;
}

int procs_socket_holder(const pid_t *pids, size_t n, uint64_t inode, pid_t *ret_pid) {
        char want[SOCKET_LINK_MAX];
        snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)inode);
        bool denied = false;
        if (pids) {
                for (size_t i = 0; i < n; i++) {
                        int r = holds_socket(pids[i], want);
                        if (r > 0) {
                                *ret_pid = pids[i];
                                return 1;
                        }
                        denied |= r < 0;
                }
                return denied ? -EACCES : 0;
        }
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        struct dirent *de;
        int found = 0;
        while (!found && (de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                pid_t pid = (pid_t)atoi(de->d_name);
                int r = holds_socket(pid, want);
                if (r > 0) {
                        *ret_pid = pid;
                        found = 1;
                }
                denied |= r < 0;
        }
        closedir(d);
        return found ? 1 : denied ? -EACCES : 0;
}

/* A command line as the report shows it: arguments joined by spaces, escaped, cut. */
#define DESCRIBE_MAX_CHARS 160

char *procs_describe(pid_t pid) {
        char path[64];
        _cleanup_free_ char *comm = NULL, *cmdline = NULL;
        size_t clen = 0;
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        if (read_file_capped(path, 256, &comm, NULL) >= 0)
                comm[strcspn(comm, "\n")] = '\0';
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        if (read_file_capped(path, (size_t)64 << 10, &cmdline, &clen) >= 0) {
                while (clen > 0 && cmdline[clen - 1] == '\0')
                        clen--;
                for (size_t i = 0; i < clen; i++)
                        if (cmdline[i] == '\0')
                                cmdline[i] = ' ';
                cmdline[clen] = '\0';
        }
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        int r = buf_printf(&b, "pid %d", (int)pid);
        if (r >= 0 && comm && comm[0]) {
                r = buf_puts(&b, " (");
                if (r >= 0)
                        r = text_escape(&b, comm, 32, TEXT_TERMINAL);
                if (r >= 0)
                        r = buf_puts(&b, ")");
        }
        if (r >= 0 && cmdline && cmdline[0]) {
                r = buf_puts(&b, " '");
                if (r >= 0)
                        r = text_escape(&b, cmdline, DESCRIBE_MAX_CHARS, TEXT_TERMINAL);
                if (r >= 0)
                        r = buf_puts(&b, "'");
        }
        return r < 0 ? NULL : strdup(buf_str(&b));
}

bool procs_command_is(pid_t pid, const char *name) {
        char path[64];
        _cleanup_free_ char *comm = NULL, *cmdline = NULL;
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        if (read_file_capped(path, 256, &comm, NULL) >= 0) {
                comm[strcspn(comm, "\n")] = '\0';
                if (strcmp(comm, name) == 0)
                        return true;
        }
        /* comm is cut at 15 bytes: argv[0]'s base name says the whole name */
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
        if (read_file_capped(path, (size_t)64 << 10, &cmdline, NULL) < 0)
                return false;
        const char *slash = strrchr(cmdline, '/');
        return strcmp(slash ? slash + 1 : cmdline, name) == 0;
}
