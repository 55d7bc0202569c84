/* loop.c -- epoll + libcurl multi-socket: the one place that waits. */
#include "io/loop.h"

#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

enum watch_kind { WATCH_NONE, WATCH_USER, WATCH_CURL, WATCH_SIGNAL };

struct watch {
        enum watch_kind kind;
        uint32_t events;
        uint64_t queued;        /* the dispatch (loop.dispatch) whose ready list holds it; 0: none */
        bool rx_stamped;        /* a libcurl socket given SO_TIMESTAMPNS (loop_rx_stamps) */
        uint16_t port;          /* a libcurl TCP socket's local port (loop_rx_stamps); 0: unknown */
        loop_io_cb cb;
        void *userdata;
};

struct transfer {
        CURL *easy;
        loop_transfer_cb done;
        void *userdata;
        struct transfer *prev, *next;
};

struct loop {
        int epfd;
        CURLM *multi;
        struct watch *watches; /* indexed by fd */
        size_t n_watches;
        usec_t curl_deadline;  /* USEC_INFINITY when curl wants no timeout */
        usec_t wake;           /* when the fd being handled was seen ready: loop_wake_time() */
        uint64_t dispatch;     /* loop_iterate's dispatches so far */
        uint64_t turn;         /* fds handled so far: loop_turn() */
        int turn_fd;           /* this turn's fd; -1: a libcurl timeout */
        bool rx_stamps;        /* loop_rx_stamps() */
        bool span_ok;          /* this turn's span_first/last are the kernel's */
        usec_t span_first, span_last;
        bool rx_known;         /* rx_covered holds for this turn (loop_rx_fresh) */
        bool rx_late;          /* this turn has read data that came after its times */
        uint64_t rx_covered;   /* the socket's received bytes that this turn's times cover */
        char *peek;            /* LOOP_PEEK_BYTES, for the peeks of a late turn */
        size_t transfers;
        struct transfer *head;  /* every transfer in flight */
        int sigfd;
        int signal;            /* first caught signal, sticky */
        bool signal_pending;   /* a signal arrived since the last loop_iterate return */
};

static struct watch *watch_get(struct loop *l, int fd, bool grow) {
        if (fd < 0)
                return NULL;
        if ((size_t)fd >= l->n_watches) {
                if (!grow)
                        return NULL;
                size_t n = l->n_watches ? l->n_watches : 64;
                while (n <= (size_t)fd)
                        n *= 2;
                struct watch *w = realloc(l->watches, n * sizeof(*w));
                if (!w)
                        return NULL;
                memset(w + l->n_watches, 0, (n - l->n_watches) * sizeof(*w));
                l->watches = w;
                l->n_watches = n;
        }
        return &l->watches[fd];
}

static int epoll_set(struct loop *l, int fd, uint32_t events, bool existed) {
        struct epoll_event ev = {.events = events, .data.fd = fd};
        if (epoll_ctl(l->epfd, existed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
                return -errno;
        return 0;
}

/* libcurl tells us which sockets to watch for what. */
static int curl_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
        struct loop *l = userp;
        struct watch *w = watch_get(l, s, true);
        if (!w)
                return -1;
        if (what == CURL_POLL_REMOVE) {
                if (w->kind == WATCH_CURL) {
                        epoll_ctl(l->epfd, EPOLL_CTL_DEL, s, NULL);
                        *w = (struct watch){0};
                }
                return 0;
        }
        uint32_t events = 0;
        if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
                events |= EPOLLIN;
        if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
                events |= EPOLLOUT;
        bool existed = w->kind == WATCH_CURL;
        if (epoll_set(l, s, events, existed) < 0)
                return -1;
        if (!existed && l->rx_stamps) {
                int one = 1;
                w->rx_stamped = setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) == 0;
                struct sockaddr_storage sa;
                socklen_t sl = sizeof(sa);
                w->port = 0;
                if (getsockname(s, (struct sockaddr *)&sa, &sl) == 0) {
                        if (sa.ss_family == AF_INET)
                                w->port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
                        else if (sa.ss_family == AF_INET6)
                                w->port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
                }
        }
        w->kind = WATCH_CURL;
        w->events = events;
        return 0;
}

static int curl_timer_cb(CURLM *multi, long timeout_ms, void *userp) {
        struct loop *l = userp;
        if (timeout_ms < 0)
                l->curl_deadline = USEC_INFINITY;
        else
                l->curl_deadline = now_usec() + (usec_t)timeout_ms * USEC_PER_MSEC;
        return 0;
}

static void transfer_unlink(struct loop *l, struct transfer *t) {
        if (t->prev)
                t->prev->next = t->next;
        else
                l->head = t->next;
        if (t->next)
                t->next->prev = t->prev;
        l->transfers--;
}

int loop_new(struct loop **ret) {
        struct loop *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->sigfd = -1;
        l->turn_fd = -1;
        l->curl_deadline = USEC_INFINITY;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = -errno;
                free(l);
                return r;
        }
        l->multi = curl_multi_init();
        if (!l->multi) {
                close(l->epfd);
                free(l);
                return -ENOMEM;
        }
        curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
        curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
        curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
        curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
        *ret = l;
        return 0;
}


void loop_free(struct loop *l) {
        if (!l)
                return;
        /* Detach every transfer still in flight; their owners clean up the handles. */
        while (l->head)
                loop_remove_transfer(l, l->head->easy);
        curl_multi_cleanup(l->multi);
        if (l->sigfd >= 0)
                close(l->sigfd);
        close(l->epfd);
        free(l->watches);
        free(l->peek);
        free(l);
}

int loop_watch_fd(struct loop *l, int fd, uint32_t events, loop_io_cb cb, void *userdata) {
        struct watch *w = watch_get(l, fd, true);
        if (!w)
                return fd < 0 ? -EBADF : -ENOMEM;
        if (w->kind != WATCH_NONE)
                return -EEXIST;
        int r = epoll_set(l, fd, events, false);
        if (r < 0)
                return r;
        *w = (struct watch){.kind = WATCH_USER, .events = events, .cb = cb, .userdata = userdata};
        return 0;
}

void loop_unwatch_fd(struct loop *l, int fd) {
        struct watch *w = watch_get(l, fd, false);
        if (!w || w->kind != WATCH_USER)
                return;
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        *w = (struct watch){0};
}

int loop_add_transfer(struct loop *l, CURL *easy, loop_transfer_cb done, void *userdata) {
        struct transfer *t = malloc(sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = (struct transfer){.easy = easy, .done = done, .userdata = userdata};
        curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
        CURLMcode mc = curl_multi_add_handle(l->multi, easy);
        if (mc != CURLM_OK) {
                free(t);
                curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
                return mc == CURLM_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
        }
        t->next = l->head;
        if (l->head)
                l->head->prev = t;
        l->head = t;
        l->transfers++;
        return 0;
}

void loop_remove_transfer(struct loop *l, CURL *easy) {
        struct transfer *t = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        if (!t)
                return; /* finished already, or never added */
        curl_multi_remove_handle(l->multi, easy);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        transfer_unlink(l, t);
        free(t);
}

size_t loop_transfers(const struct loop *l) {
        return l->transfers;
}

static void finish_transfers(struct loop *l) {
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(l->multi, &left))) {
                if (msg->msg != CURLMSG_DONE)
                        continue;
                CURL *easy = msg->easy_handle;
                CURLcode result = msg->data.result;
                struct transfer *t = NULL;
                curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
                curl_multi_remove_handle(l->multi, easy);
                curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
                if (t) {
                        transfer_unlink(l, t);
                        struct transfer copy = *t;
                        free(t);
                        if (copy.done)
                                copy.done(l, easy, result, copy.userdata);
                }
        }
}

static void read_signals(struct loop *l) {
        struct signalfd_siginfo si;
        while (read(l->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (!l->signal)
                        l->signal = (int)si.ssi_signo;
                l->signal_pending = true;
        }
}

#define MAX_EVENTS 256
/* While a batch of ready fds is handled, every RESTAMP_EVERY of them the loop asks epoll
 * again (without waiting) which have become ready since, and notes when: data that arrives
 * while a batch is handled is stamped within RESTAMP_EVERY callbacks of its coming, not when
 * the batch is over. A dispatch handles at most MAX_READY fds: an fd's data is read when its
 * turn comes and stamped with when it was seen ready, so what came in between is stamped
 * early by up to the batch's length, and a batch is kept as short as epoll's own. */
#define RESTAMP_EVERY 16
#define MAX_READY MAX_EVENTS

struct ready {
        int fd;
        uint32_t events;
        usec_t seen;
        bool covered_ok;        /* covered holds (a libcurl TCP socket, rx stamps on) */
        uint64_t covered;       /* the socket's received bytes, counted before `seen` was taken */
};

static bool tcp_received(int fd, uint64_t *ret);

/* Appends what epoll reported to the ready list, each fd once, each with the time it was
 * seen ready. A libcurl socket's received bytes are counted first, then its time taken:
 * every byte counted had come by `seen`, and a byte that comes between the two is left out
 * (it takes the time of its read, later, never one before it came). Each socket's time is
 * taken right after its own count, so a long list does not make the first ones late. */
static void take_ready(struct loop *l, const struct epoll_event *ev, int n, struct ready *ready, size_t *nr) {
        for (int i = 0; i < n && *nr < MAX_READY; i++) {
                struct watch *w = watch_get(l, ev[i].data.fd, false);
                if (!w || w->queued == l->dispatch)
                        continue;
                w->queued = l->dispatch;
                struct ready *e = &ready[(*nr)++];
                *e = (struct ready){.fd = ev[i].data.fd, .events = ev[i].events};
                if (w->kind == WATCH_CURL && l->rx_stamps && w->port && (e->events & EPOLLIN))
                        e->covered_ok = tcp_received(e->fd, &e->covered);
                e->seen = now_usec();
        }
}

static int64_t ts_nsec(const struct timespec *t) {
        return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* A monotonic instant and the wall clock's reading at it, in ns. The wall clock is read on
 * both sides of the monotonic one and the midpoint taken, the tightest of a few tries: a
 * turn preempted between two plain reads put them microseconds apart, and every stamp
 * taken back to CLOCK_MONOTONIC came that much too early (on a loaded machine the last
 * token of a stream then came before the server wrote it). */
#define CLOCK_PAIR_TRIES 4
#define CLOCK_PAIR_TIGHT_NSEC 1000
static void clock_pair(int64_t *ret_mono, int64_t *ret_real) {
        int64_t width = INT64_MAX;
        for (int i = 0; i < CLOCK_PAIR_TRIES && width > CLOCK_PAIR_TIGHT_NSEC; i++) {
                struct timespec r1, mo, r2;
                clock_gettime(CLOCK_REALTIME, &r1);
                clock_gettime(CLOCK_MONOTONIC, &mo);
                clock_gettime(CLOCK_REALTIME, &r2);
                int64_t a = ts_nsec(&r1), b = ts_nsec(&r2);
                /* the first try stands until a tighter one; a wall clock stepped back
                 * between its two readings gives no width */
                if (i == 0 || (b >= a && b - a < width)) {
                        width = b >= a ? b - a : INT64_MAX;
                        *ret_mono = ts_nsec(&mo);
                        *ret_real = a + (b - a) / 2;
                }
        }
}

usec_t loop_cmsg_rx_time(struct msghdr *m) {
        for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
                if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_TIMESTAMPNS)
                        continue;
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(h), sizeof(ts));
                int64_t mono = 0, real_now = 0;
                clock_pair(&mono, &real_now);
                int64_t ago = real_now - ts_nsec(&ts);
                /* a stamp from the future (the wall clock stepped) or none (0) is no time */
                if (ts.tv_sec == 0 || ago < 0 || ago >= mono)
                        return 0;
                return (usec_t)((mono - ago) / 1000);
        }
        return 0;
}

/* The kernel's arrival time of the unread data up to `len` bytes into fd's queue (of the
 * last segment those bytes reach), by a peek that leaves it there; 0: none. The bytes it
 * saw in *ret_len. */
static usec_t peek_rx_time(int fd, char *buf, size_t len, size_t *ret_len) {
        struct iovec iov = {.iov_base = buf, .iov_len = len};
        union {
                char buf[CMSG_SPACE(sizeof(struct timespec))];
                struct cmsghdr align;
        } ctl;
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
        ssize_t n = recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0)
                return 0;
        *ret_len = (size_t)n;
        return loop_cmsg_rx_time(&m);
}

/* The bytes a TCP socket has taken in since it connected (tcpi_bytes_received, the same
 * count whether read yet or not); false where the kernel does not say. */
static bool tcp_received(int fd, uint64_t *ret) {
        struct tcp_info ti;
        socklen_t len = sizeof(ti);
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
            len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
                return false;
        *ret = ti.tcpi_bytes_received;
        return true;
}

/* The bytes of fd's stream the application has read: what came less what waits. Data may
 * come between the two questions: asked in the order that makes it count for more than was
 * read (`upper`) or for less. */
static bool tcp_consumed(int fd, bool upper, uint64_t *ret) {
        uint64_t got = 0;
        int inq = -1;
        if (upper ? ioctl(fd, SIOCINQ, &inq) < 0 || !tcp_received(fd, &got)
                  : !tcp_received(fd, &got) || ioctl(fd, SIOCINQ, &inq) < 0)
                return false;
        if (inq < 0 || (uint64_t)inq > got)
                return false;
        *ret = got - (uint64_t)inq;
        return true;
}

/* A turn that comes RX_PEEK_AFTER or more after its fd was seen ready may read data that
 * came in the meantime: where the kernel stamps the socket, ask it when the oldest and the
 * newest unread data came. */
#define RX_PEEK_AFTER 20
#define LOOP_PEEK_BYTES ((size_t)64 << 10)

/* A turn's times hold for the data that had come when they were taken. libcurl reads what
 * is there when it reads: between the times and its recv(), and between one recv() of a turn
 * and the next (it reads again while the socket is readable), more may come, and that came
 * later. So the turn holds how many bytes the socket had taken in before its times were
 * taken: counted before the time it was seen ready (take_ready), or, for a late turn's
 * span, before the peeks (which cover at least that); a callback asks whether what has been
 * read goes beyond it. */
static void take_span(struct loop *l, int fd) {
        if (!l->peek && !(l->peek = malloc(LOOP_PEEK_BYTES)))
                return;
        uint64_t covered = 0, consumed;
        bool known = tcp_received(fd, &covered);
        size_t n = 0;
        usec_t first = peek_rx_time(fd, l->peek, 1, &n);
        usec_t last = first ? peek_rx_time(fd, l->peek, LOOP_PEEK_BYTES, &n) : 0;
        if (!first || last < first)
                return; /* no span: the time it was seen ready stands, and what it covers */
        l->span_ok = true;
        l->span_first = first;
        l->span_last = last;
        /* a full peek: the data past it may have come later than `last` */
        if (known && n == LOOP_PEEK_BYTES) {
                if (tcp_consumed(fd, false, &consumed))
                        covered = MIN(covered, consumed + n);
                else
                        known = false;
        }
        l->rx_known = known;
        l->rx_covered = covered;
}

static void dispatch_one(struct loop *l, const struct ready *e) {
        struct watch *w = watch_get(l, e->fd, false);
        if (!w)
                return;
        if (w->queued == l->dispatch)
                w->queued = 0; /* ready again after this: noted again, with its own time */
        l->wake = e->seen;
        l->turn++;
        l->turn_fd = e->fd;
        l->span_ok = false;
        l->rx_late = false;
        l->rx_known = e->covered_ok;
        l->rx_covered = e->covered;
        if (e->covered_ok && w->rx_stamped && now_usec() - e->seen >= RX_PEEK_AFTER)
                take_span(l, e->fd);
        int running;
        switch (w->kind) {
        case WATCH_CURL: {
                int flags = 0;
                if (e->events & EPOLLIN)
                        flags |= CURL_CSELECT_IN;
                if (e->events & EPOLLOUT)
                        flags |= CURL_CSELECT_OUT;
                if (e->events & (EPOLLERR | EPOLLHUP))
                        flags |= CURL_CSELECT_ERR;
                curl_multi_socket_action(l->multi, e->fd, flags, &running);
                /* the transfers it ended end now, at this fd's time */
                finish_transfers(l);
                l->span_ok = false;
                break;
        }
        case WATCH_USER:
                w->cb(l, e->fd, e->events, w->userdata);
                break;
        case WATCH_SIGNAL:
                read_signals(l);
                break;
        case WATCH_NONE:
                break; /* unwatched by an earlier callback in this batch */
        }
}

int loop_iterate(struct loop *l, usec_t until) {
        struct epoll_event events[MAX_EVENTS];
        struct ready ready[MAX_READY];
        int running;

        for (;;) {
                if (l->signal_pending) {
                        l->signal_pending = false;
                        return -EINTR;
                }
                usec_t now = now_usec();
                if (l->curl_deadline != USEC_INFINITY && l->curl_deadline <= now) {
                        l->curl_deadline = USEC_INFINITY;
                        l->wake = now;
                        l->turn++;
                        l->turn_fd = -1;
                        l->span_ok = false;
                        curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
                        finish_transfers(l);
                        return 0;
                }
                if (until != USEC_INFINITY && until <= now)
                        return -ETIME;
                usec_t wake = MIN(until, l->curl_deadline);
                int n = epoll_wait(l->epfd, events, MAX_EVENTS, usec_to_timeout_ms(wake, now));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        continue; /* a deadline passed: handled at the top */
                l->dispatch++;
                size_t nr = 0;
                take_ready(l, events, n, ready, &nr);
                for (size_t i = 0; i < nr; i++) {
                        if (i && i % RESTAMP_EVERY == 0 && nr < MAX_READY) {
                                int k = epoll_wait(l->epfd, events, MAX_EVENTS, 0);
                                if (k > 0)
                                        take_ready(l, events, k, ready, &nr);
                        }
                        dispatch_one(l, &ready[i]);
                }
                finish_transfers(l);
                if (l->signal_pending) {
                        l->signal_pending = false;
                        return -EINTR;
                }
                return 0;
        }
}

int loop_catch_signals(struct loop *l) {
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        int fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct watch *w = watch_get(l, fd, true);
        if (!w) {
                close(fd);
                return -ENOMEM;
        }
        int r = epoll_set(l, fd, EPOLLIN, false);
        if (r < 0) {
                close(fd);
                return r;
        }
        *w = (struct watch){.kind = WATCH_SIGNAL, .events = EPOLLIN};
        l->sigfd = fd;
        return 0;
}

usec_t loop_wake_time(const struct loop *l) {
        return l->wake;
}

uint64_t loop_turn(const struct loop *l) {
        return l->turn;
}

unsigned loop_turn_port(const struct loop *l) {
        const struct watch *w = l->turn_fd >= 0 && (size_t)l->turn_fd < l->n_watches ? &l->watches[l->turn_fd] : NULL;
        return w && w->kind == WATCH_CURL ? w->port : 0;
}

bool loop_rx_fresh(struct loop *l) {
        if (l->rx_late)
                return false;
        if (!l->rx_known || l->turn_fd < 0)
                return true;
        uint64_t got, consumed;
        if (!tcp_received(l->turn_fd, &got) || got <= l->rx_covered)
                return true; /* nothing has come since */
        if (tcp_consumed(l->turn_fd, true, &consumed) && consumed <= l->rx_covered)
                return true; /* it came, and waits unread */
        l->rx_late = true;
        return false;
}

bool loop_rx_span(const struct loop *l, usec_t *ret_first, usec_t *ret_last) {
        if (!l->span_ok)
                return false;
        *ret_first = l->span_first;
        *ret_last = l->span_last;
        return true;
}

void loop_rx_stamps(struct loop *l, bool on) {
        l->rx_stamps = on;
}

int loop_signal(const struct loop *l) {
        return l->signal;
}

void loop_interrupt(struct loop *l, int sig) {
        if (!l->signal)
                l->signal = sig;
        l->signal_pending = true;
}
