/* supervise.c -- spawn, watch and stop one server and everything it started. */
#include "proc/supervise.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "proc/procs.h"
#include "proc/spawn.h"

extern char **environ;

#define MAX_LINE ((size_t)64 << 10)      /* longer lines are cut for matching, not in the log */
#define MAX_PROBE_BODY ((size_t)64 << 10)
#define PROBE_TIMEOUT_MS 5000L

static void collect_exit(struct server *s) {
        if (s->exited)
                return;
        siginfo_t si = {0};
        if (waitid(P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        s->exited = true;
        s->exited_at = now_usec();
        if (si.si_code == CLD_EXITED)
                s->exit_code = si.si_status;
        else
                s->exit_signal = si.si_status;
        procs_unregister_child(s->pid);
        loop_unwatch_fd(s->loop, s->pidfd);
}

static void on_pidfd(struct loop *l, int fd, uint32_t revents, void *userdata) {
        collect_exit(userdata);
}

static void scan_line(struct server *s, const char *line) {
        if (s->ready_at)
                return;
        if (s->has_ready_re) {
                if (!s->ready_line_seen && regexec(&s->ready_re, line, 0, NULL, 0) == 0) {
                        s->ready_line_seen = true;
                        /* probe at once (or once the probe in flight is answered):
                         * readiness soon after the line */
                        s->next_probe = now_usec();
                }
        } else {
                /* No ready line known: any line is a sign of progress, and servers often
                 * say when they are ready. The next probe comes SUPERVISE_PROBE_MIN after
                 * the last one started, not a whole interval. */
                s->next_probe = MIN(s->next_probe, s->probe_started + SUPERVISE_PROBE_MIN);
        }
}

static void log_write(struct server *s, const char *p, size_t n) {
        if (s->log_fd < 0)
                return;
        if (s->log_error) {
                s->log_dropped += n; /* cut at the failed write: no holes in the middle */
                return;
        }
        size_t room = s->log_bytes < SUPERVISE_MAX_LOG ? SUPERVISE_MAX_LOG - s->log_bytes : 0;
        size_t k = MIN(n, room);
        int r = k > 0 ? write_all(s->log_fd, p, k) : 0;
        if (r < 0) {
                /* Disk full or gone: the server goes on, its log stops here. The note
                 * fits in what a short write left, or it does not (nothing to do then). */
                static const char note[] = "\n[gauntlet: log cut: cannot write it]\n";
                s->log_error = r;
                s->log_dropped += n;
                (void)write_all(s->log_fd, note, sizeof(note) - 1);
                return;
        }
        s->log_bytes += k;
        if (k < n) {
                if (s->log_dropped == 0) {
                        static const char note[] = "\n[gauntlet: log cut at its size limit]\n";
                        (void)write_all(s->log_fd, note, sizeof(note) - 1);
                }
                s->log_dropped += n - k;
        }
}

static void split_lines(struct server *s, const char *p, size_t n) {
        while (n > 0) {
                const char *nl = memchr(p, '\n', n);
                size_t k = nl ? (size_t)(nl - p) : n;
                (void)buf_append(&s->line, p, k); /* a line over the cap is matched cut */
                if (!nl)
                        return;
                scan_line(s, buf_str(&s->line));
                buf_reset(&s->line);
                p += k + 1;
                n -= k + 1;
        }
}

static void read_log(struct server *s) {
        char chunk[65536];
        for (;;) {
                ssize_t k = read(s->log_pipe, chunk, sizeof(chunk));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return;
                        k = 0; /* treat errors as end of file */
                }
                if (k == 0) {
                        if (s->line.len)
                                scan_line(s, buf_str(&s->line));
                        buf_reset(&s->line);
                        loop_unwatch_fd(s->loop, s->log_pipe);
                        close(s->log_pipe);
                        s->log_pipe = -1;
                        return;
                }
                log_write(s, chunk, (size_t)k);
                split_lines(s, chunk, (size_t)k);
        }
}

static void on_log(struct loop *l, int fd, uint32_t revents, void *userdata) {
        read_log(userdata);
}

static size_t probe_write(char *p, size_t size, size_t nmemb, void *userdata) {
        struct buf *b = userdata;
        (void)buf_append(b, p, size * nmemb); /* a huge health body is cut, not an error */
        return size * nmemb;
}

static bool probe_says_ready(struct server *s, long status) {
        if (status != 200)
                return false;
        if (s->ready != READY_HTTP_200_STATUS_OK)
                return true;
        json_error_t err;
        json_t *j = json_loadb(buf_str(&s->probe_body), s->probe_body.len, 0, &err);
        const char *st = json_string_value(json_object_get(j, "status"));
        bool ok = st && strcmp(st, "ok") == 0;
        json_decref(j);
        return ok;
}

static void on_probe_done(struct loop *l, CURL *easy, CURLcode result, void *userdata) {
        struct server *s = userdata;
        long status = 0;
        s->probe_in_flight = false;
        if (result == CURLE_OK)
                curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        if (result == CURLE_OK && probe_says_ready(s, status) && !s->ready_at)
                s->ready_at = now_usec();
}

/* When the probe after one that starts now is due (SUPERVISE_PROBE_* in the header). */
static usec_t next_probe_time(const struct server *s, usec_t now) {
        usec_t since = now > s->started ? now - s->started : 0;
        return now + MAX(SUPERVISE_PROBE_MIN, MIN(SUPERVISE_PROBE_INTERVAL, since / SUPERVISE_PROBE_SHARE));
}

static int choose_address(struct server *s);
static int resolve_addrs(struct server *s, const char *host);

static int probe_start(struct server *s) {
        int r;
        /* no address the server listens on yet: nothing to ask */
        if (s->n_addrs && s->addr < 0 && (r = choose_address(s)) <= 0)
                return r < 0 ? r : -EAGAIN;
        s->foreign_since = 0;
        if (!s->probe) {
                s->probe = curl_easy_init();
                if (!s->probe)
                        return -ENOMEM;
        }
        CURL *e = s->probe;
        curl_easy_reset(e);
        buf_reset(&s->probe_body);
        curl_easy_setopt(e, CURLOPT_URL, s->health_url);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, PROBE_TIMEOUT_MS);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, probe_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &s->probe_body);
        if ((r = loop_add_transfer(s->loop, e, on_probe_done, s)) < 0)
                return r;
        s->probe_in_flight = true;
        s->probe_started = now_usec();
        s->next_probe = next_probe_time(s, s->probe_started);
        return 0;
}

/* Whether a variable of gauntlet's environment is one the launcher keeps from its client. */
static bool dropped(const struct server_spec *spec, const char *e, size_t klen) {
        const char *const *d = spec->launcher ? spec->launcher->ops->drop_env : NULL;
        for (; d && *d; d++)
                if (strlen(*d) == klen && strncmp(*d, e, klen) == 0)
                        return true;
        return false;
}

/* gauntlet's environment, then the cell's, then the token; later entries win. */
static char **build_env(const struct server_spec *spec) {
        char **env = NULL;
        char *const *layers[2] = {environ, spec->env};
        for (size_t l = 0; l < 2; l++) {
                for (char *const *e = layers[l]; e && *e; e++) {
                        const char *eq = strchr(*e, '=');
                        size_t klen = eq ? (size_t)(eq - *e) : strlen(*e);
                        if (strncmp(*e, PROCS_TOKEN_VAR "=", strlen(PROCS_TOKEN_VAR) + 1) == 0)
                                continue; /* never inherit a token from an outer run */
                        if (l == 0 && dropped(spec, *e, klen))
                                continue; /* not for the launcher's client */
                        size_t n = strv_length(env);
                        size_t i;
                        for (i = 0; i < n; i++)
                                if (strncmp(env[i], *e, klen) == 0 && env[i][klen] == '=')
                                        break;
                        if (i < n) {
                                char *c = strdup(*e);
                                if (!c)
                                        goto oom;
                                free(env[i]);
                                env[i] = c;
                        } else if (strv_push(&env, *e) < 0) {
                                goto oom;
                        }
                }
        }
        if (spec->token && strv_consume(&env, strdup_printf("%s=%s", PROCS_TOKEN_VAR, spec->token)) < 0)
                goto oom;
        return env;
oom:
        strv_free(env);
        return NULL;
}

int server_start(struct loop *l, const struct server_spec *spec, struct server **ret) {
        int r;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_strv_free_ char **client = NULL;

        if (!spec->argv || !spec->argv[0] || (spec->cgroups && !spec->token))
                return -EINVAL;
        struct server *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->loop = l;
        s->pid = -1;
        s->pidfd = -1;
        s->log_pipe = -1;
        s->log_fd = -1;
        s->exit_code = -1;
        s->ready = spec->ready;
        buf_init(&s->line, MAX_LINE);
        buf_init(&s->probe_body, MAX_PROBE_BODY);
        s->health_url = strdup(spec->health_url ? spec->health_url : "");
        s->token = spec->token ? strdup(spec->token) : NULL;
        s->straggler_grace = spec->straggler_grace;
        s->placed = !spec->launcher;
        s->port = spec->port;
        s->health_path = strdup(spec->health_path ? spec->health_path : "/health");
        if (!s->health_url || !s->health_path || (spec->token && !s->token)) {
                r = -ENOMEM;
                goto fail;
        }
        s->addr = -1;
        if (spec->port_owner) {
                s->owner_any = spec->port_owner->any;
                if (spec->port_owner->commands && !(s->owner_commands = strv_copy(spec->port_owner->commands))) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        if (!spec->launcher && spec->host && spec->port > 0 && (r = resolve_addrs(s, spec->host)) < 0)
                goto fail;
        if (spec->launcher) {
                /* the launcher's client is what runs here, the server inside it */
                if ((r = spec->launcher->ops->prepare(spec->launcher->config, spec, &client, &s->launcher_state)) < 0)
                        goto fail;
                s->launcher = spec->launcher;
        }
        if (spec->ready_line) {
                if (regcomp(&s->ready_re, spec->ready_line, REG_EXTENDED | REG_NOSUB) != 0) {
                        r = -EINVAL;
                        goto fail;
                }
                s->has_ready_re = true;
        }
        /* 0600: a server's log can hold what it was given, keys included; a symbolic link
         * put where the log goes is not followed (-ELOOP): the log is gauntlet's file */
        s->log_fd = open(spec->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND | O_NOFOLLOW, 0600);
        if (s->log_fd < 0) {
                r = -errno;
                goto fail;
        }
        env = build_env(spec);
        if (!env) {
                r = -ENOMEM;
                goto fail;
        }

        /* A session of its own: its session id is its pid, which server_stop searches by;
         * the signals gauntlet blocks (and SIGPIPE) at their defaults; stdin from
         * /dev/null, stdout and stderr on one pipe, the log's. */
        struct spawn_options so = {
                .path = client ? NULL : spec->path,
                .argv = client ? client : spec->argv,
                .env = env,
                .workdir = spec->workdir,
                .group = SPAWN_GROUP_NEW_SESSION,
                .signals = SPAWN_SIGNALS_STOP,
                .default_sigpipe = true,
                .stdio = {SPAWN_STDIO_NULL, SPAWN_STDIO_PIPE, SPAWN_STDIO_STDOUT},
        };
        /* Its own cgroup, made before the spawn and named by the token, which the journal
         * already has: what a killed gauntlet leaves is found by name (sweep.c). */
        if (spec->cgroups) {
                _cleanup_free_ char *name = cgroup_name(spec->token);
                if (!name) {
                        r = -ENOMEM;
                        goto fail;
                }
                if ((r = cgroup_create(spec->cgroups, name, &s->cgroup)) < 0)
                        goto fail;
                so.into_cgroup = true;
                so.cgroup_fd = s->cgroup->dirfd;
        }
        struct spawn child;
        if ((r = spawn_start(&so, &child)) < 0)
                goto fail;
        s->pid = child.pid;
        s->started = now_usec();
        procs_register_child(child.pid);
        (void)procs_starttime(child.pid, &s->starttime);

        if ((r = loop_watch_fd(l, child.pidfd, EPOLLIN, on_pidfd, s)) < 0 ||
            (r = loop_watch_fd(l, child.fd[1], EPOLLIN, on_log, s)) < 0) {
                loop_unwatch_fd(l, child.pidfd);
                spawn_abort(&child);
                procs_unregister_child(child.pid);
                goto fail;
        }
        s->pidfd = TAKE_FD(child.pidfd);
        s->log_pipe = TAKE_FD(child.fd[1]);
        s->next_probe = now_usec();
        *ret = s;
        return 0;

fail:
        s->pid = -1;
        server_free(s);
        return r;
}

enum server_event server_wait_placed(struct server *s) {
        for (;;) {
                collect_exit(s);
                if (s->exited)
                        return SERVER_DIED;
                if (s->placed)
                        return SERVER_READY;
                if (now_usec() < s->next_place) {
                        if (loop_iterate(s->loop, s->next_place) == -EINTR)
                                return SERVER_SIGNAL;
                        continue;
                }
                usec_t next = 0;
                char *host = NULL, *note = NULL;
                int r = s->launcher->ops->place(s->launcher_state, s->loop, &next, &host, &note);
                if (note) {
                        server_log_note(s, note);
                        free(note);
                }
                if (r == 1) {
                        char *url = strchr(host, ':') ? strdup_printf("http://[%s]:%d", host, s->port)
                                                      : strdup_printf("http://%s:%d", host, s->port);
                        char *health = url ? strdup_printf("%s%s", url, s->health_path) : NULL;
                        free(host);
                        if (!health) {
                                free(url);
                                return SERVER_DEADLINE; /* out of memory: the launcher's outcome */
                        }
                        free(s->base_url);
                        free(s->health_url);
                        s->base_url = url;
                        s->health_url = health;
                        s->placed = true;
                        s->started = now_usec(); /* the startup timeout counts from here */
                        s->next_probe = s->started;
                        continue;
                }
                free(host);
                if (r == -EINTR)
                        return SERVER_SIGNAL;
                if (r < 0)
                        return SERVER_DEADLINE;
                s->next_place = next;
        }
}

const char *server_base_url(const struct server *s) {
        return s->base_url;
}

int server_launcher_outcome(struct server *s, struct server_outcome *ret) {
        collect_exit(s);
        if (!s->launcher || (s->placed && !s->exited))
                return 0; /* a server that runs where it was placed: nothing for the launcher to say */
        return s->launcher->ops->outcome(s->launcher_state, s->loop, &s->exit_code, &s->exit_signal, ret);
}

void server_log_note(struct server *s, const char *text) {
        _cleanup_free_ char *line = strdup_printf("%s[gauntlet: %s]\n", s->line.len ? "\n" : "", text);
        if (line)
                log_write(s, line, strlen(line));
}

enum server_event server_wait_ready(struct server *s, usec_t deadline) {
        if (!s->placed) {
                enum server_event ev = server_wait_placed(s);
                if (ev != SERVER_READY)
                        return ev;
        }
        for (;;) {
                collect_exit(s);
                if (s->exited)
                        return SERVER_DIED;
                if (s->ready_at)
                        return SERVER_READY;
                usec_t now = now_usec();
                if (now >= deadline)
                        return SERVER_DEADLINE;
                if (s->foreign_since && now - s->foreign_since >= SUPERVISE_FOREIGN_GRACE)
                        return SERVER_PORT_TAKEN;
                if (!s->probe_in_flight && now >= s->next_probe && probe_start(s) < 0)
                        s->next_probe = next_probe_time(s, now);
                usec_t until = s->probe_in_flight ? deadline : MIN(deadline, s->next_probe);
                int r = loop_iterate(s->loop, until);
                if (r == -EINTR)
                        return SERVER_SIGNAL;
        }
}

/* Resolves host once: its addresses, in getaddrinfo's order, each once. -EADDRNOTAVAIL
 * when it has none. */
/* Adds a to the host's addresses unless it is there. */
static int add_addr(struct server *s, const struct server_addr *a) {
        for (size_t i = 0; i < s->n_addrs; i++)
                if (s->addrs[i].family == a->family && memcmp(s->addrs[i].addr, a->addr, 16) == 0)
                        return 0;
        struct server_addr *nv = realloc(s->addrs, (s->n_addrs + 1) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        s->addrs = nv;
        nv[s->n_addrs++] = *a;
        return 0;
}

static int add_loopbacks(struct server *s) {
        struct server_addr v4 = {.family = AF_INET, .addr = {127, 0, 0, 1}};
        struct server_addr v6 = {.family = AF_INET6};
        v6.addr[15] = 1;
        int r = add_addr(s, &v4);
        return r < 0 ? r : add_addr(s, &v6);
}

static int resolve_addrs(struct server *s, const char *host) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *ai = NULL;
        if (getaddrinfo(host, "0", &hints, &ai) != 0)
                return -EADDRNOTAVAIL;
        int r = 0;
        for (const struct addrinfo *p = ai; p; p = p->ai_next) {
                struct server_addr a = {.family = p->ai_family};
                if (p->ai_family == AF_INET)
                        memcpy(a.addr, &((const struct sockaddr_in *)p->ai_addr)->sin_addr, 4);
                else if (p->ai_family == AF_INET6)
                        memcpy(a.addr, &((const struct sockaddr_in6 *)p->ai_addr)->sin6_addr, 16);
                else
                        continue;
                if ((r = add_addr(s, &a)) < 0)
                        break;
        }
        freeaddrinfo(ai);
        /* "localhost" is both loopbacks whatever /etc/hosts says (RFC 6761; libcurl resolves
         * it so itself, ::1 first) */
        size_t hl = strlen(host);
        if (r == 0 && (strcasecmp(host, "localhost") == 0 || (hl > 10 && strcasecmp(host + hl - 10, ".localhost") == 0)))
                r = add_loopbacks(s);
        return r < 0 ? r : s->n_addrs ? 0 : -EADDRNOTAVAIL;
}

/* "127.0.0.1" or "[::1]", as a URL writes it. */
static void addr_format(const struct server_addr *a, char out[static INET6_ADDRSTRLEN + 2]) {
        char t[INET6_ADDRSTRLEN] = "?";
        inet_ntop(a->family, a->addr, t, sizeof(t));
        if (a->family == AF_INET6)
                snprintf(out, INET6_ADDRSTRLEN + 2, "[%s]", t);
        else
                snprintf(out, INET6_ADDRSTRLEN + 2, "%s", t);
}

/* Whether listener l is bound to exactly address a (an IPv4 address also as ::ffff:a.b.c.d
 * in tcp6). */
static bool listener_exact(const struct procs_listener *l, const struct server_addr *a) {
        static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
        if (l->family == a->family)
                return memcmp(l->addr, a->addr, a->family == AF_INET6 ? 16 : 4) == 0;
        return a->family == AF_INET && memcmp(l->addr, mapped, 12) == 0 && memcmp(l->addr + 12, a->addr, 4) == 0;
}

/* Whether listener l is a wildcard that takes connections to a: 0.0.0.0 for IPv4, :: for
 * both (an IPv6 wildcard takes IPv4 too unless it is IPV6_V6ONLY, which /proc does not
 * say: counted as taking it). */
static bool listener_wildcard(const struct procs_listener *l, const struct server_addr *a) {
        static const unsigned char zero[16];
        if (memcmp(l->addr, zero, l->family == AF_INET6 ? 16 : 4) != 0)
                return false;
        return l->family == AF_INET6 || a->family == AF_INET;
}

/* Whether a connection to a reaches listener l (the kernel's choice): the listeners bound
 * to exactly a when there is one, else the wildcards. */
static bool listener_reached(const struct procs_listener *l, const struct procs_listener *all, size_t n,
                             const struct server_addr *a) {
        for (size_t i = 0; i < n; i++)
                if (listener_exact(&all[i], a))
                        return listener_exact(l, a);
        return listener_wildcard(l, a);
}

static bool own_listener(const struct server *s, uint64_t inode) {
        for (size_t i = 0; i < s->n_own_listeners; i++)
                if (s->own_listeners[i] == inode)
                        return true;
        return false;
}

/* Evidence for listener l on port, held by another process than the server's. */
static char *foreign_listener(const struct procs_listener *l, const struct server_addr *a, int port) {
        char at[INET6_ADDRSTRLEN + 2];
        addr_format(a, at);
        pid_t holder = 0;
        int r = procs_socket_holder(NULL, 0, l->inode, &holder);
        if (r > 0) {
                _cleanup_free_ char *who = procs_describe(holder);
                return who ? strdup_printf("port %d is answered by %s at %s, not by a process of the server", port,
                                           who, at)
                           : NULL;
        }
        return strdup_printf("port %d is answered at %s by a process that is not the server's and that gauntlet "
                             "cannot identify (socket %llu of uid %u: another user's process, or no permission to "
                             "see its descriptors)",
                             port, at, (unsigned long long)l->inode, (unsigned)l->uid);
}

/* The server's processes here, as server_stop finds them (its exit collected first). */
static struct procs_query server_query(struct server *s) {
        collect_exit(s);
        return (struct procs_query){
                .cgroup = s->cgroup,
                .token = s->token,
                .root = s->exited ? 0 : s->pid,
                .sid = s->pid, /* spawned with setsid: its session id is its pid */
                .adopted = true,
        };
}

int server_cpu_ticks(struct server *s, uint64_t *ret) {
        if (s->launcher)
                return -EREMOTE;
        struct procs_query q = server_query(s);
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = procs_find(&q, &pids, &n);
        return r < 0 ? r : procs_cpu_ticks(pids, n, ret);
}

/* Whether listener l may answer for the server: held by one of its processes (*pids, found
 * on first need), or by one port_owner allows (then s->port_note says so). 1 yes (the
 * socket remembered), 0 no, negative errno. */
static int listener_allowed(struct server *s, const struct procs_listener *l, const struct server_addr *a,
                            pid_t **pids, size_t *n_pids, bool *found) {
        if (own_listener(s, l->inode))
                return 1;
        int r;
        if (!*found) {
                struct procs_query q = server_query(s);
                if ((r = procs_find(&q, pids, n_pids)) < 0)
                        return r;
                *found = true;
        }
        pid_t holder = 0;
        bool allowed = procs_socket_holder(*pids, *n_pids, l->inode, &holder) > 0;
        if (!allowed && (s->owner_any || s->owner_commands)) {
                bool known = procs_socket_holder(NULL, 0, l->inode, &holder) > 0;
                allowed = s->owner_any;
                for (char **c = s->owner_commands; !allowed && known && c && *c; c++)
                        allowed = procs_command_is(holder, *c);
                if (allowed && !s->port_note) {
                        char at[INET6_ADDRSTRLEN + 2];
                        addr_format(a, at);
                        _cleanup_free_ char *who = known ? procs_describe(holder) : NULL;
                        s->port_note = strdup_printf("port %d at %s: port_owner allows %s, not a process of the "
                                                     "server, to hold it",
                                                     s->port, at, who ? who : "a process gauntlet cannot identify");
                        if (!s->port_note)
                                return -ENOMEM;
                }
        }
        if (!allowed)
                return 0;
        uint64_t *nv = realloc(s->own_listeners, (s->n_own_listeners + 1) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        s->own_listeners = nv;
        nv[s->n_own_listeners++] = l->inode;
        return 1;
}

/* Before a readiness probe: the first of the host's addresses that a listener of the
 * server's (or one port_owner allows) is reached at becomes the address every request
 * goes to: health_url and base_url are made of it. 1 found, 0 not yet, negative errno. */
static int choose_address(struct server *s) {
        _cleanup_free_ struct procs_listener *ls = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, n_pids = 0;
        bool found = false;
        size_t taken = 0; /* addresses reached by another process's listener */
        int r = procs_listeners(s->port, &ls, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_addrs; i++) {
                bool other = false;
                for (size_t k = 0; k < n; k++) {
                        if (!listener_reached(&ls[k], ls, n, &s->addrs[i]))
                                continue;
                        if ((r = listener_allowed(s, &ls[k], &s->addrs[i], &pids, &n_pids, &found)) < 0)
                                return r;
                        if (r == 0) {
                                other = true;
                                continue;
                        }
                        char at[INET6_ADDRSTRLEN + 2];
                        addr_format(&s->addrs[i], at);
                        char *url = strdup_printf("http://%s:%d", at, s->port);
                        char *health = url ? strdup_printf("%s%s", url, s->health_path) : NULL;
                        if (!health) {
                                free(url);
                                return -ENOMEM;
                        }
                        free(s->base_url);
                        free(s->health_url);
                        s->base_url = url;
                        s->health_url = health;
                        s->addr = (ssize_t)i;
                        return 1;
                }
                taken += other;
        }
        if (taken < s->n_addrs)
                s->foreign_since = 0;
        else if (!s->foreign_since)
                s->foreign_since = now_usec();
        return 0;
}

int server_verify_port(struct server *s, char **ret_evidence) {
        if (s->launcher || s->port <= 0 || !s->n_addrs)
                return 0;
        _cleanup_free_ struct procs_listener *ls = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, n_pids = 0;
        bool found = false;
        int r = procs_listeners(s->port, &ls, &n);
        if (r < 0)
                return r;
        /* every address of the host, not only the one gauntlet talks to: a client of the
         * emitted unit resolves the name again, and libcurl tries ::1 before 127.0.0.1 */
        for (size_t k = 0; k < s->n_addrs; k++)
                for (size_t i = 0; i < n; i++) {
                        if (!listener_reached(&ls[i], ls, n, &s->addrs[k]))
                                continue;
                        if ((r = listener_allowed(s, &ls[i], &s->addrs[k], &pids, &n_pids, &found)) < 0)
                                return r;
                        if (r > 0)
                                continue;
                        /* another process listens where the server should */
                        char *e = foreign_listener(&ls[i], &s->addrs[k], s->port);
                        if (!e)
                                return -ENOMEM;
                        *ret_evidence = e;
                        return 1;
                }
        return 0;
}

const char *server_port_note(const struct server *s) {
        return s->port_note;
}

bool server_alive(struct server *s) {
        collect_exit(s);
        return !s->exited;
}

bool server_wait_exit(struct server *s, usec_t until) {
        while (server_alive(s))
                if (loop_iterate(s->loop, until) == -ETIME)
                        break;
        return s->exited;
}

void server_drain_log(struct server *s, usec_t until) {
        while (s->log_pipe >= 0) {
                if (loop_iterate(s->loop, until) == -ETIME)
                        break;
        }
        if (s->log_pipe >= 0)
                read_log(s); /* whatever is already there */
}

int server_stop(struct server *s, usec_t grace, usec_t deadline, size_t *ret_killed) {
        if (s->probe_in_flight) {
                loop_remove_transfer(s->loop, s->probe);
                s->probe_in_flight = false;
        }
        /* Where it runs first (the client may exit with it), then what runs here. */
        int rl = s->launcher ? s->launcher->ops->stop(s->launcher_state, s, grace, deadline) : 0;
        struct procs_query q = server_query(s);
        /* once the main process is gone, the rest are stragglers: a short grace */
        q.main = s->exited ? 0 : s->pid;
        q.straggler_grace = s->straggler_grace;
        int r = procs_terminate(s->loop, &q, grace, deadline, ret_killed);
        /* Empty now: its directory goes. One that cannot (what would stop it?) is an empty
         * directory left, not a process: no reason to stop the sweep. */
        if (r == 0 && s->cgroup)
                (void)cgroup_remove(s->cgroup);
        /* The main process is ours: its pidfd fires when it is a zombie. */
        while (!s->exited) {
                collect_exit(s);
                if (s->exited || loop_iterate(s->loop, MIN(deadline, now_usec() + USEC_PER_SEC)) == -ETIME)
                        break;
        }
        if (!s->exited) {
                /* Not seen dying: only a process in uninterruptible sleep does that. */
                pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
        }
        server_drain_log(s, MIN(deadline, now_usec() + USEC_PER_SEC));
        return r < 0 ? r : rl;
}

void server_free(struct server *s) {
        if (!s)
                return;
        if (s->probe) {
                if (s->probe_in_flight)
                        loop_remove_transfer(s->loop, s->probe);
                curl_easy_cleanup(s->probe);
        }
        if (s->pidfd >= 0) {
                loop_unwatch_fd(s->loop, s->pidfd);
                if (!s->exited)
                        waitid(P_PIDFD, (id_t)s->pidfd, &(siginfo_t){0}, WEXITED | WNOHANG);
                close(s->pidfd);
        }
        if (s->pid > 0)
                procs_unregister_child(s->pid);
        if (s->log_pipe >= 0) {
                loop_unwatch_fd(s->loop, s->log_pipe);
                close(s->log_pipe);
        }
        if (s->log_fd >= 0)
                close(s->log_fd);
        if (s->cgroup) {
                /* Never stopped (the spawn failed): empty, so it can go. */
                (void)cgroup_remove(s->cgroup);
                cgroup_free(s->cgroup);
        }
        if (s->has_ready_re)
                regfree(&s->ready_re);
        buf_release(&s->line);
        buf_release(&s->probe_body);
        if (s->launcher && s->launcher_state)
                s->launcher->ops->free_state(s->launcher_state);
        free(s->health_url);
        free(s->health_path);
        free(s->base_url);
        free(s->own_listeners);
        free(s->addrs);
        strv_free(s->owner_commands);
        free(s->port_note);
        free(s->token);
        free(s);
}

/* The first address of host to listen on; -EADDRNOTAVAIL when it has none. */
static int resolve_host(const char *host, struct addrinfo **ret) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
        return getaddrinfo(host, "0", &hints, ret) == 0 ? 0 : -EADDRNOTAVAIL;
}

/* Binds a TCP socket to ai's address and port (0: the kernel picks) the way a server
 * would, with SO_REUSEADDR, so a port held only by connections in TIME_WAIT counts as
 * free. Returns the socket with the port bound in *ret_port, or negative errno
 * (-EADDRINUSE: something listens there). */
/* ai's address with the given port, into ss; returns its length. */
static socklen_t address_with_port(const struct addrinfo *ai, int port, struct sockaddr_storage *ss) {
        socklen_t len = (socklen_t)MIN((size_t)ai->ai_addrlen, sizeof(*ss));
        *ss = (struct sockaddr_storage){0};
        memcpy(ss, ai->ai_addr, len);
        if (ss->ss_family == AF_INET6)
                ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
        else
                ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
        return len;
}

static int bind_port(const struct addrinfo *ai, int port, int *ret_port) {
        struct sockaddr_storage ss;
        socklen_t len = address_with_port(ai, port, &ss);
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1, r = 0;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&ss, len) < 0 || getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                r = -errno;
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r;
        }
        *ret_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        return fd;
}

/* How many kernel picks a slot may try before giving up: a slot takes about one port in
 * n_slots, so this many misses in a row means something else is wrong. */
#define FREE_PORT_TRIES 4096

int supervise_free_port(const char *host, size_t slot, size_t n_slots, int *ret) {
        struct addrinfo *ai = NULL;
        int r = resolve_host(host, &ai);
        for (int i = 0; r == 0 && i < FREE_PORT_TRIES; i++) {
                int port = 0;
                int fd = bind_port(ai, 0, &port);
                if (fd < 0) {
                        r = fd;
                        break;
                }
                close(fd);
                /* Pairs of ports, so the kernel's preference for odd ports on bind()
                 * still spreads them evenly over the slots. */
                if (n_slots <= 1 || (size_t)(port / 2) % n_slots == slot) {
                        *ret = port;
                        freeaddrinfo(ai);
                        return 0;
                }
        }
        if (ai)
                freeaddrinfo(ai);
        return r < 0 ? r : -EADDRNOTAVAIL;
}

/* Whether a listening socket accepts a connection at ai's address on port: 1 yes, 0 no
 * (refused, or nothing answered within a second), negative errno when it cannot tell. */
static int port_accepts(const struct addrinfo *ai, int port) {
        struct sockaddr_storage ss;
        socklen_t len = address_with_port(ai, port, &ss);
        _cleanup_close_ int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&ss, len) == 0)
                return 1;
        if (errno != EINPROGRESS)
                return errno == ECONNREFUSED || errno == ENETUNREACH || errno == EHOSTUNREACH ? 0 : -errno;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int k;
        do
                k = poll(&pfd, 1, 1000);
        while (k < 0 && errno == EINTR);
        if (k <= 0)
                return k < 0 ? -errno : 0;
        int err = 0;
        socklen_t el = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                return -errno;
        return err == 0 ? 1 : 0;
}

int supervise_port_taken(const char *host, int port) {
        struct addrinfo *ai = NULL;
        int got = 0, r = resolve_host(host, &ai);
        if (r < 0)
                return r;
        int fd = bind_port(ai, port, &got);
        /* A bind can also fail for what is left of a dead server's connections (sockets
         * in FIN_WAIT or CLOSE_WAIT that were accepted without SO_REUSEADDR): that port is
         * not taken by anyone. Only a listener that accepts a connection is another process. */
        if (fd == -EADDRINUSE)
                fd = port_accepts(ai, port) == 1 ? -EADDRINUSE : -EAGAIN;
        freeaddrinfo(ai);
        if (fd >= 0)
                close(fd);
        return fd >= 0 || fd == -EAGAIN ? 0 : fd == -EADDRINUSE ? 1 : fd;
}
