/* test_checks.c -- http.c against a scripted raw-socket server, and the checks runner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "gate/checks.h"
#include "io/http.h"
#include "io/loop.h"
#include "base/profile.h"

/* ---- a tiny scripted HTTP server on a thread -------------------------------------- */

enum srv_mode {
        SRV_FIXED,       /* write reply, close */
        SRV_HANG,        /* read the request, say nothing until stopped */
        SRV_STALL,       /* write reply, then say nothing more until stopped */
        SRV_CLOSE_EARLY, /* write reply (a promise of more), close */
        SRV_BIG,         /* a 4 MiB body */
};

struct srv {
        int listen_fd;
        int stop_pipe[2];
        int port;
        pthread_t thread;
        enum srv_mode mode;
        const char *reply;       /* what to write (FIXED, STALL, CLOSE_EARLY) */
        const char *replies[8];  /* FIXED: one per request in order, when set */
        int requests;
        char request[8192];      /* the last request's head and body */
        size_t request_len;
};

static bool srv_wait_stop(struct srv *s, int timeout_ms) {
        struct pollfd p = {.fd = s->stop_pipe[0], .events = POLLIN};
        return poll(&p, 1, timeout_ms) > 0;
}

/* Reads one request (head + Content-Length body). false on EOF or stop. */
static bool srv_read_request(struct srv *s, int fd) {
        s->request_len = 0;
        size_t need = SIZE_MAX;
        while (s->request_len < need) {
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, 5000) <= 0 || (p[1].revents & POLLIN))
                        return false;
                ssize_t k = read(fd, s->request + s->request_len, sizeof(s->request) - 1 - s->request_len);
                if (k <= 0)
                        return false;
                s->request_len += (size_t)k;
                s->request[s->request_len] = '\0';
                char *end = strstr(s->request, "\r\n\r\n");
                if (end && need == SIZE_MAX) {
                        size_t body = 0;
                        char *cl = strcasestr(s->request, "Content-Length:");
                        if (cl && cl < end)
                                body = strtoul(cl + 15, NULL, 10);
                        need = (size_t)(end + 4 - s->request) + body;
                }
        }
        return true;
}

static void srv_write(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
                if (k <= 0)
                        return;
                p += k;
                n -= (size_t)k;
        }
}

static void *srv_main(void *userdata) {
        struct srv *s = userdata;
        for (;;) {
                struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN}, {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, -1) < 0 || (p[1].revents & POLLIN))
                        return NULL;
                int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                /* keep-alive: serve requests on this connection until it closes */
                while (srv_read_request(s, fd)) {
                        int k = MIN(s->requests, 7);
                        s->requests++;
                        const char *reply = s->replies[k] ? s->replies[k] : s->reply;
                        if (s->mode == SRV_HANG) {
                                srv_wait_stop(s, -1);
                                break;
                        }
                        if (s->mode == SRV_BIG) {
                                const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n";
                                srv_write(fd, head, strlen(head));
                                static char block[65536];
                                memset(block, 'x', sizeof(block));
                                for (int i = 0; i < 64; i++)
                                        srv_write(fd, block, sizeof(block));
                                break;
                        }
                        srv_write(fd, reply, strlen(reply));
                        if (s->mode == SRV_STALL) {
                                srv_wait_stop(s, -1);
                                break;
                        }
                        if (s->mode == SRV_CLOSE_EARLY)
                                break;
                        if (s->replies[0] && !strstr(reply, "Connection: close"))
                                continue; /* scripted keep-alive replies */
                        break;
                }
                close(fd);
        }
}

static void srv_start(struct srv *s, enum srv_mode mode, const char *reply) {
        *s = (struct srv){.mode = mode, .reply = reply};
        assert_int_equal(pipe2(s->stop_pipe, O_CLOEXEC), 0);
        s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->listen_fd >= 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
        socklen_t len = sizeof(a);
        assert_int_equal(getsockname(s->listen_fd, (struct sockaddr *)&a, &len), 0);
        s->port = ntohs(a.sin_port);
        assert_int_equal(listen(s->listen_fd, 16), 0);
}

static void srv_run(struct srv *s) {
        assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
}

static void srv_stop(struct srv *s) {
        assert_int_equal(write(s->stop_pipe[1], "x", 1), 1);
        pthread_join(s->thread, NULL);
        close(s->listen_fd);
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
}

static char *srv_url(const struct srv *s, const char *path) {
        return strdup_printf("http://127.0.0.1:%d%s", s->port, path);
}

/* ---- http.c ------------------------------------------------------------------------ */

static void test_http_get_and_post(void **state) {
        struct srv s;
        srv_start(&s, SRV_FIXED, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}");
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "/v1/models");
        struct http_request req = {.url = url, .timeout = 5 * USEC_PER_SEC};
        struct http_response resp;
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), 0);
        assert_int_equal(resp.status, 200);
        assert_string_equal(resp.content_type, "application/json");
        assert_string_equal(buf_str(&resp.body), "{\"ok\":true}");
        assert_false(resp.truncated);
        assert_true(resp.first_byte >= resp.started && resp.finished >= resp.first_byte);
        assert_true(startswith(s.request, "GET /v1/models HTTP/1.1\r\n"));
        http_response_release(&resp);

        /* a POST carries the JSON body and its type, and no Expect: 100-continue */
        static char big[4096];
        memset(big, 'a', sizeof(big) - 1);
        _cleanup_free_ char *body = strdup_printf("{\"prompt\":\"%s\"}", big);
        req = (struct http_request){.url = url, .body = body, .body_len = strlen(body), .timeout = 5 * USEC_PER_SEC};
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), 0);
        assert_int_equal(resp.status, 200);
        assert_true(startswith(s.request, "POST /v1/models HTTP/1.1\r\n"));
        assert_non_null(strcasestr(s.request, "Content-Type: application/json"));
        assert_null(strcasestr(s.request, "Expect:"));
        assert_non_null(strstr(s.request, body));
        http_response_release(&resp);
        srv_stop(&s);
}

static void test_http_cap(void **state) {
        struct srv s;
        srv_start(&s, SRV_BIG, NULL);
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "/");
        struct http_request req = {.url = url, .timeout = 5 * USEC_PER_SEC, .max_body = 1000};
        struct http_response resp;
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), 0);
        assert_true(resp.truncated);
        assert_int_equal(resp.body.len, 1000);
        http_response_release(&resp);
        srv_stop(&s);
}

static void test_http_timeouts(void **state) {
        struct srv s;
        srv_start(&s, SRV_HANG, NULL);
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "/");
        struct http_request req = {.url = url, .timeout = 200 * USEC_PER_MSEC};
        struct http_response resp;
        usec_t t0 = now_usec();
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -ETIMEDOUT);
        usec_t took = now_usec() - t0;
        assert_true(took >= 190 * USEC_PER_MSEC && took < 2 * USEC_PER_SEC);
        assert_false(resp.idle_timed_out);
        assert_int_equal(resp.status, 0);
        http_response_release(&resp);

        /* the caller's deadline works the same way */
        req.timeout = 0;
        t0 = now_usec();
        assert_int_equal(http_run(l, &req, now_usec() + 150 * USEC_PER_MSEC, &resp), -ETIMEDOUT);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        http_response_release(&resp);
        srv_stop(&s);

        /* a stream that goes silent: the idle limit, exact to the millisecond scale */
        srv_start(&s, SRV_STALL, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "6\r\ndata: \r\n");
        srv_run(&s);
        req = (struct http_request){.url = url, .timeout = 10 * USEC_PER_SEC, .idle_timeout = 250 * USEC_PER_MSEC};
        _cleanup_free_ char *url2 = srv_url(&s, "/");
        req.url = url2;
        t0 = now_usec();
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -ETIMEDOUT);
        took = now_usec() - t0;
        assert_true(took >= 240 * USEC_PER_MSEC && took < 2 * USEC_PER_SEC);
        assert_true(resp.idle_timed_out);
        assert_int_equal(resp.status, 200);
        assert_string_equal(buf_str(&resp.body), "data: ");
        http_response_release(&resp);
        srv_stop(&s);
}

static void test_http_refused_and_reset(void **state) {
        struct srv s;
        srv_start(&s, SRV_CLOSE_EARLY, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a little");
        _cleanup_free_ char *url = srv_url(&s, "/");
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        struct http_request req = {.url = url, .timeout = 5 * USEC_PER_SEC};
        struct http_response resp;
        srv_run(&s);
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -ECONNRESET);
        assert_int_equal(resp.status, 200);
        assert_string_equal(buf_str(&resp.body), "only a little");
        assert_non_null(resp.error_message);
        http_response_release(&resp);
        srv_stop(&s);

        /* nobody listens on the port any more */
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -ECONNREFUSED);
        assert_string_equal(http_strerror(resp.error), "connection refused");
        http_response_release(&resp);

        /* not a URL curl can use */
        req.url = "ftp://127.0.0.1/";
        assert_true(http_run(l, &req, USEC_INFINITY, &resp) < 0);
        http_response_release(&resp);
}

struct collect {
        struct buf b;
        int calls;
        int stop_after;
};

static int collect_data(void *userdata, const char *p, size_t n) {
        struct collect *c = userdata;
        c->calls++;
        buf_append(&c->b, p, n);
        if (c->stop_after && c->calls >= c->stop_after)
                return -EPIPE;
        return 0;
}

static void test_http_streaming(void **state) {
        struct srv s;
        srv_start(&s, SRV_FIXED, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "f\r\ndata: {\"a\":1}\n\n\r\n" "e\r\ndata: [DONE]\n\n\r\n" "0\r\n\r\n");
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "/");
        struct collect c = {0};
        buf_init(&c.b, 0);
        struct http_request req = {.url = url, .timeout = 5 * USEC_PER_SEC, .on_data = collect_data, .userdata = &c};
        struct http_response resp;
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), 0);
        assert_string_equal(buf_str(&c.b), "data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_int_equal(resp.body.len, 0); /* streamed bytes are not stored twice */
        assert_string_equal(resp.content_type, "text/event-stream");
        http_response_release(&resp);
        srv_stop(&s);
        buf_release(&c.b);

        /* an error status is stored, for evidence, not streamed */
        srv_start(&s, SRV_FIXED, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 15\r\n\r\n{\"error\":\"bad\"}");
        srv_run(&s);
        _cleanup_free_ char *url2 = srv_url(&s, "/");
        c = (struct collect){0};
        buf_init(&c.b, 0);
        req.url = url2;
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), 0);
        assert_int_equal(resp.status, 500);
        assert_string_equal(buf_str(&resp.body), "{\"error\":\"bad\"}");
        assert_int_equal(c.calls, 0);
        http_response_release(&resp);
        srv_stop(&s);
        buf_release(&c.b);

        /* the callback stops the transfer with its own error */
        srv_start(&s, SRV_STALL, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
        srv_run(&s);
        _cleanup_free_ char *url3 = srv_url(&s, "/");
        c = (struct collect){.stop_after = 1};
        buf_init(&c.b, 0);
        req.url = url3;
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -EPIPE);
        http_response_release(&resp);
        srv_stop(&s);
        buf_release(&c.b);
}

struct abort_ctx {
        bool fired;
        int polls;
};

static void on_pipe(struct loop *l, int fd, uint32_t revents, void *userdata) {
        struct abort_ctx *a = userdata;
        char c;
        if (read(fd, &c, 1) == 1)
                a->fired = true;
}

static bool should_abort(void *userdata) {
        struct abort_ctx *a = userdata;
        a->polls++;
        return a->fired;
}

static void *poke_later(void *userdata) {
        int fd = *(int *)userdata;
        struct timespec ts = {.tv_nsec = 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        assert_int_equal(write(fd, "x", 1), 1);
        return NULL;
}

static void test_http_abort_from_other_fd(void **state) {
        /* While a request hangs, another watch on the loop (in the sweep: the server's
         * pidfd) fires and should_abort stops the request at once. */
        struct srv s;
        srv_start(&s, SRV_HANG, NULL);
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        struct abort_ctx a = {0};
        assert_int_equal(loop_watch_fd(l, p[0], EPOLLIN, on_pipe, &a), 0);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, poke_later, &p[1]), 0);
        _cleanup_free_ char *url = srv_url(&s, "/");
        struct http_request req = {.url = url, .timeout = 10 * USEC_PER_SEC, .should_abort = should_abort,
                                   .abort_userdata = &a};
        struct http_response resp;
        usec_t t0 = now_usec();
        assert_int_equal(http_run(l, &req, USEC_INFINITY, &resp), -ECANCELED);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_true(a.fired);
        assert_int_equal(resp.error, -ECANCELED);
        http_response_release(&resp);
        pthread_join(th, NULL);
        loop_unwatch_fd(l, p[0]);
        close(p[0]);
        close(p[1]);
        assert_int_equal(loop_transfers(l), 0);
        srv_stop(&s);
}

/* ---- the runner --------------------------------------------------------------------- */

#define CHAT_323 "{\"choices\":[{\"message\":{\"content\":\"323\"},\"finish_reason\":\"stop\"}]}"
#define SSE_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

static struct check_spec math_spec(enum stream_mode stream) {
        return (struct check_spec){
                .name = "math",
                .mode = CHECK_CHAT,
                .prompt = "What is 17 * 19?",
                .thinking = THINKING_OFF,
                .stream = stream,
                .expect = {.kind = EXPECT_NUMBER, .value = "323"},
        };
}

static char *http_json(const char *body) {
        return strdup_printf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                             strlen(body), body);
}

static void test_runner_disagreement(void **state) {
        /* Non-streamed says "323", streamed says "It is 323": both right, but at
         * temperature 0 they must agree, so the streamed run is wrong. */
        struct srv s;
        srv_start(&s, SRV_FIXED, NULL);
        _cleanup_free_ char *plain = http_json(CHAT_323);
        s.replies[0] = plain;
        s.replies[1] = SSE_HEAD "data: {\"choices\":[{\"delta\":{\"content\":\"It is 323\"},\"finish_reason\":\"stop\"}]}\n\n"
                       "data: [DONE]\n\n";
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "");
        struct checks_target t = {.base_url = url, .model = "m", .request_timeout = 5 * USEC_PER_SEC};
        struct check_spec spec = math_spec(STREAM_BOTH);
        struct check_result *r = NULL;
        size_t n = 0;
        assert_int_equal(checks_run(l, &t, &spec, 1, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(r[0].name, "math");
        assert_int_equal(r[0].verdict, VERDICT_PASS);
        assert_false(r[0].streamed);
        assert_string_equal(r[1].name, "math/stream");
        assert_true(r[1].streamed);
        assert_int_equal(r[1].verdict, VERDICT_WRONG);
        assert_string_equal(r[1].cause, "math");
        assert_true(startswith(r[1].evidence, "streamed answer differs from non-streamed: "));
        assert_string_equal(r[1].output, "It is 323");
        assert_true(r[1].ttft > 0 && r[1].ttft <= r[1].latency);
        const char *cause, *evidence;
        assert_int_equal(checks_summarize(r, n, &cause, &evidence), VERDICT_WRONG);
        assert_ptr_equal(cause, r[1].cause);
        assert_ptr_equal(evidence, r[1].evidence);
        checks_free_results(r, n);
        srv_stop(&s);
}

static void test_runner_error_body_message(void **state) {
        /* llama-server's real answer for output its chat parser cannot read: the evidence
         * is the server's message, not the JSON around it cut at the excerpt length; a
         * body that is not JSON is quoted as it is. */
        static const char body[] =
                "{\"error\":{\"code\":500,\"message\":\"The model produced output that does not match the "
                "expected peg-native format\",\"type\":\"server_error\"}}";
        static const char *const bodies[] = {body, "upstream exploded"};
        static const char *const want[] = {
                "HTTP 500: The model produced output that does not match the expected peg-native format",
                "HTTP 500: upstream exploded"};
        for (size_t k = 0; k < 2; k++) {
                struct srv s;
                srv_start(&s, SRV_FIXED, NULL);
                _cleanup_free_ char *reply = strdup_printf(
                        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                        "Content-Length: %zu\r\n\r\n%s", strlen(bodies[k]), bodies[k]);
                s.reply = reply;
                srv_run(&s);
                _cleanup_loop_ struct loop *l = NULL;
                assert_int_equal(loop_new(&l), 0);
                _cleanup_free_ char *url = srv_url(&s, "");
                struct checks_target t = {.base_url = url, .model = "m", .request_timeout = 5 * USEC_PER_SEC};
                struct check_spec spec = math_spec(STREAM_NO);
                struct check_result *r = NULL;
                size_t n = 0;
                assert_int_equal(checks_run(l, &t, &spec, 1, &r, &n), 0);
                assert_int_equal(r[0].verdict, VERDICT_GARBAGE);
                assert_string_equal(r[0].cause, "http");
                assert_string_equal(r[0].evidence, want[k]);
                checks_free_results(r, n);
                srv_stop(&s);
        }
}

static void test_runner_request_and_think_tags(void **state) {
        /* The body carries the profile's seed and the chosen thinking key; an answer in
         * <think> tags gives the reasoning part a required-reasoning check needs. */
        struct srv s;
        srv_start(&s, SRV_FIXED, NULL);
        _cleanup_free_ char *reply = http_json("{\"choices\":[{\"message\":{\"content\":\"<think>17*20-17</think>\\n\\n**323**\"},"
                                               "\"finish_reason\":\"stop\"}]}");
        s.reply = reply;
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "/v1/");
        struct checks_target t = {.base_url = url, .model = "m", .profile = profile_find("sglang"),
                                  .thinking_key = "thinking", .request_timeout = 5 * USEC_PER_SEC};
        struct check_spec spec = math_spec(STREAM_NO);
        spec.thinking = THINKING_ON;
        spec.require_reasoning = true;
        struct check_result *r = NULL;
        size_t n = 0;
        assert_int_equal(checks_run(l, &t, &spec, 1, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(r[0].verdict, VERDICT_PASS);
        assert_string_equal(r[0].reasoning, "17*20-17");
        assert_string_equal(r[0].output, "**323**");
        assert_true(startswith(s.request, "POST /v1/chat/completions HTTP/1.1\r\n"));
        assert_non_null(strstr(s.request, "\"seed\":1234"));
        assert_non_null(strstr(s.request, "\"chat_template_kwargs\":{\"thinking\":true}"));
        assert_non_null(strstr(s.request, "\"max_tokens\":2048"));
        assert_non_null(strstr(s.request, "\"model\":\"m\""));
        checks_free_results(r, n);
        srv_stop(&s);
}

static void test_runner_question(void **state) {
        /* The detectors get the question: a whole answer of one short word said eight times
         * is garbage when the prompt asks for something else, and passes when the messages
         * (any of them) name the word. */
        struct srv s;
        srv_start(&s, SRV_FIXED, NULL);
        _cleanup_free_ char *reply = http_json("{\"choices\":[{\"message\":{\"content\":"
                                               "\"ndon ndon ndon ndon ndon ndon ndon ndon\"},\"finish_reason\":\"stop\"}]}");
        s.reply = reply;
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "");
        struct checks_target t = {.base_url = url, .model = "m", .request_timeout = 5 * USEC_PER_SEC};
        struct check_spec specs[2] = {
                {.name = "capital", .mode = CHECK_CHAT, .prompt = "What is the capital of the UK?",
                 .stream = STREAM_NO, .expect = {.kind = EXPECT_NONE}},
                {.name = "asked", .mode = CHECK_CHAT, .stream = STREAM_NO, .expect = {.kind = EXPECT_NONE}},
        };
        specs[1].messages = json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", "Say ndon when asked.",
                                      "role", "user", "content", "Go on, eight times.");
        assert_non_null(specs[1].messages);
        struct check_result *r = NULL;
        size_t n = 0;
        assert_int_equal(checks_run(l, &t, specs, 2, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(r[0].verdict, VERDICT_GARBAGE);
        assert_string_equal(r[0].cause, "repeat");
        assert_non_null(strstr(r[0].evidence, "the question names neither it nor the count"));
        assert_int_equal(r[1].verdict, VERDICT_PASS);
        checks_free_results(r, n);
        json_decref(specs[1].messages);
        srv_stop(&s);
}

static void test_runner_models(void **state) {
        /* The models check learns the model for the checks after it; an empty list is wrong. */
        struct srv s;
        srv_start(&s, SRV_FIXED, NULL);
        _cleanup_free_ char *models = http_json("{\"data\":[{\"id\":\"org/the-model\"}]}");
        _cleanup_free_ char *chat = http_json(CHAT_323);
        _cleanup_free_ char *empty = http_json("{\"data\":[]}");
        s.replies[0] = models;
        s.replies[1] = chat;
        s.replies[2] = empty;
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "");
        _cleanup_free_ char *model = NULL;
        struct checks_target t = {.base_url = url, .request_timeout = 5 * USEC_PER_SEC, .ret_model = &model};
        struct check_spec specs[3] = {
                {.name = "models", .mode = CHECK_MODELS, .stream = STREAM_NO},
                math_spec(STREAM_NO),
                {.name = "models", .mode = CHECK_MODELS, .stream = STREAM_NO},
        };
        struct check_result *r = NULL;
        size_t n = 0;
        assert_int_equal(checks_run(l, &t, specs, 3, &r, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(r[0].verdict, VERDICT_PASS);
        assert_string_equal(r[0].output, "org/the-model");
        assert_int_equal(r[1].verdict, VERDICT_PASS);
        assert_non_null(strstr(s.request, "GET /v1/models") ? s.request : "x");
        assert_int_equal(r[2].verdict, VERDICT_WRONG);
        assert_string_equal(r[2].cause, "models");
        assert_string_equal(model, "org/the-model");
        checks_free_results(r, n);
        srv_stop(&s);
}

static bool abort_after_first(void *userdata) {
        int *calls = userdata;
        return ++*calls > 1;
}

static void test_runner_abort(void **state) {
        /* should_abort stops the suite; the results so far are kept. */
        struct srv s;
        _cleanup_free_ char *chat = http_json(CHAT_323);
        srv_start(&s, SRV_FIXED, chat);
        srv_run(&s);
        _cleanup_loop_ struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        _cleanup_free_ char *url = srv_url(&s, "");
        int calls = 0;
        struct checks_target t = {.base_url = url, .model = "m", .request_timeout = 5 * USEC_PER_SEC,
                                  .should_abort = abort_after_first, .abort_userdata = &calls};
        struct check_spec specs[2] = {math_spec(STREAM_NO), math_spec(STREAM_NO)};
        struct check_result *r = NULL;
        size_t n = 0;
        int ret = checks_run(l, &t, specs, 2, &r, &n);
        assert_int_equal(ret, -ECANCELED);
        assert_true(n <= 1);
        checks_free_results(r, n);
        srv_stop(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_http_get_and_post),
                cmocka_unit_test(test_http_cap),
                cmocka_unit_test(test_http_timeouts),
                cmocka_unit_test(test_http_refused_and_reset),
                cmocka_unit_test(test_http_streaming),
                cmocka_unit_test(test_http_abort_from_other_fd),
                cmocka_unit_test(test_runner_disagreement),
                cmocka_unit_test(test_runner_request_and_think_tags),
                cmocka_unit_test(test_runner_error_body_message),
                cmocka_unit_test(test_runner_question),
                cmocka_unit_test(test_runner_models),
                cmocka_unit_test(test_runner_abort),
        };
        curl_global_init(CURL_GLOBAL_DEFAULT);
        int r = cmocka_run_group_tests(tests, NULL, NULL);
        curl_global_cleanup();
        return r;
}
