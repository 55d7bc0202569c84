/* hostile.c -- gauntlet-hostile: an HTTP server that misbehaves on purpose, on plain sockets.
 *
 *   gauntlet-hostile --port P [--host H] --mode M [--everything] [--port-file F]
 *
 * It answers /health and /v1/models properly and the completion endpoints
 * (/v1/chat/completions, /v1/completions) in the way --mode says, so a client gets past
 * readiness and the model list and meets the misbehaviour where answers are read.
 * --everything applies the mode to every path. --port 0 binds a free port and writes it
 * to --port-file. The modes (tests/integration/hostile.sh says what gauntlet must make of
 * each):
 *
 *   ok              correct answers ("OK", "323", a reasoning part when asked): the control
 *   endless-line    an SSE "data:" line that never ends, as fast as the client reads
 *   endless-body    a JSON body without length that never ends
 *   invalid-utf8    a well-formed answer whose text is mostly bytes that are not UTF-8
 *   slowloris       a valid streamed answer, one byte per second, forever
 *   no-content-type a correct answer without a Content-Type header
 *   html            a 200 with an nginx-style HTML page
 *   never-close     the headers of a stream, then nothing, until the client leaves
 *   close-mid-stream  two chunks of a chunked stream (or part of a sized body), then close
 *   huge-header     a 1 MiB header line before a correct answer
 *   chunked-error   chunked encoding with a chunk size that is not hexadecimal
 *   garbage         random bytes instead of HTTP, then close
 *   after-done      a stream whose [DONE] comes first and its answer after it (a client
 *                   stops at [DONE] and sees nothing); non-streamed answers are correct
 *
 * Each connection is served by a forked child (so one endless answer never blocks the
 * next client); children die with the parent (PR_SET_PDEATHSIG) and are reaped by the
 * kernel (SIGCHLD ignored). The server is test equipment: it prints nothing on success and
 * exits on SIGTERM.
 */
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_HEAD ((size_t)64 << 10) /* request headers we accept */
#define MAX_BODY ((size_t)1 << 20)  /* request body we accept */
#define MIN_SIZE(a, b) ((a) < (b) ? (a) : (b))

enum mode {
        MODE_OK,
        MODE_ENDLESS_LINE,
        MODE_ENDLESS_BODY,
        MODE_INVALID_UTF8,
        MODE_SLOWLORIS,
        MODE_NO_CONTENT_TYPE,
        MODE_HTML,
        MODE_NEVER_CLOSE,
        MODE_CLOSE_MID_STREAM,
        MODE_HUGE_HEADER,
        MODE_CHUNKED_ERROR,
        MODE_GARBAGE,
        MODE_AFTER_DONE,
};

static const char *const mode_names[] = {
        "ok",          "endless-line",     "endless-body", "invalid-utf8",  "slowloris",     "no-content-type",
        "html",        "never-close",      "close-mid-stream", "huge-header", "chunked-error", "garbage",
        "after-done",
};

struct request {
        char method[16];
        char path[256];
        char *body; /* NUL-terminated, owned */
        size_t body_len;
};

/* Writes everything or gives up: a client that went away ends the child. */
static void send_all(int fd, const void *p, size_t n) {
        const char *c = p;
        while (n > 0) {
                ssize_t k = write(fd, c, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        _exit(0);
                c += k;
                n -= (size_t)k;
        }
}

static void send_str(int fd, const char *s) {
        send_all(fd, s, strlen(s));
}

/* Blocks until the client closes its side (or resets), then ends the child. */
static void wait_for_client_close(int fd) {
        char tmp[4096];
        for (;;) {
                ssize_t k = read(fd, tmp, sizeof tmp);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        _exit(0);
        }
}

/* Reads one request: headers up to MAX_HEAD, the body by Content-Length up to MAX_BODY.
 * Returns false when the client closed or sent something we do not take. */
static bool read_request(int fd, char *head, size_t *head_len, struct request *req) {
        size_t len = *head_len;
        char *end;
        for (;;) {
                head[len] = '\0';
                end = strstr(head, "\r\n\r\n");
                if (end)
                        break;
                if (len >= MAX_HEAD)
                        return false;
                ssize_t k = read(fd, head + len, MAX_HEAD - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                len += (size_t)k;
        }
        size_t hlen = (size_t)(end - head) + 4;
        if (sscanf(head, "%15s %255s", req->method, req->path) != 2)
                return false;
        size_t want = 0;
        for (char *line = strstr(head, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
                if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
                        want = strtoul(line + 17, NULL, 10);
        }
        if (want > MAX_BODY)
                return false;
        req->body = malloc(want + 1);
        if (!req->body)
                return false;
        size_t have = MIN_SIZE(len - hlen, want);
        memcpy(req->body, head + hlen, have);
        while (have < want) {
                ssize_t k = read(fd, req->body + have, want - have);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                have += (size_t)k;
        }
        req->body[want] = '\0';
        req->body_len = want;
        /* keep what followed (a pipelined request) for the next round */
        size_t used = hlen + MIN_SIZE(len - hlen, want);
        memmove(head, head + used, len - used);
        *head_len = len - used;
        return true;
}

/* ---- correct answers ---------------------------------------------------------------- */

struct answer {
        const char *content;
        const char *reasoning; /* NULL: none */
        bool stream;
        bool chat;
};

static struct answer answer_for(const struct request *req) {
        const char *b = req->body;
        struct answer a = {
                .content = "Hello, I am a test server.",
                .stream = strstr(b, "\"stream\":true") != NULL,
                .chat = strstr(req->path, "chat") != NULL,
        };
        if (strstr(b, "17 * 19"))
                a.content = "323";
        else if (strstr(b, "exactly: OK"))
                a.content = "OK";
        if (strstr(b, "\"enable_thinking\":true"))
                a.reasoning = "17 times 19: 17 * 20 = 340, minus 17 is 323.";
        return a;
}

/* One JSON object: a whole response or one stream chunk. Text must need no escaping. */
static void format_object(char *out, size_t size, const struct answer *a, const char *content,
                          const char *reasoning, bool chunk) {
        char msg[1024];
        if (a->chat)
                snprintf(msg, sizeof msg, "\"%s\":{\"role\":\"assistant\",\"content\":\"%s\"%s%s%s}",
                         chunk ? "delta" : "message", content, reasoning ? ",\"reasoning_content\":\"" : "",
                         reasoning ? reasoning : "", reasoning ? "\"" : "");
        else
                snprintf(msg, sizeof msg, "\"text\":\"%s\"", content);
        snprintf(out, size,
                 "{\"id\":\"hostile\",\"object\":\"%s\",\"model\":\"hostile\",\"choices\":[{\"index\":0,%s,"
                 "\"finish_reason\":%s}]%s}",
                 chunk ? "chat.completion.chunk" : "chat.completion", msg, chunk ? "null" : "\"stop\"",
                 chunk ? "" : ",\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2}");
}

/* The whole answer as a body: JSON, or the SSE events of a stream. */
static void answer_body(char *out, size_t size, const struct answer *a, const char *content) {
        char obj[2048];
        if (!a->stream) {
                format_object(out, size, a, content, a->reasoning, false);
                return;
        }
        size_t n = 0;
        if (a->reasoning) {
                format_object(obj, sizeof obj, a, "", a->reasoning, true);
                n += (size_t)snprintf(out + n, size - n, "data: %s\n\n", obj);
        }
        format_object(obj, sizeof obj, a, content, NULL, true);
        n += (size_t)snprintf(out + n, size - n, "data: %s\n\ndata: [DONE]\n\n", obj);
}

static void send_plain(int fd, const char *status, const char *type, const char *body) {
        char head[512];
        snprintf(head, sizeof head, "HTTP/1.1 %s\r\n%s%s%sContent-Length: %zu\r\n\r\n", status,
                 type ? "Content-Type: " : "", type ? type : "", type ? "\r\n" : "", strlen(body));
        send_str(fd, head);
        send_str(fd, body);
}

static void send_answer(int fd, const struct answer *a, const char *content, bool with_type) {
        char body[8192];
        answer_body(body, sizeof body, a, content);
        const char *type = a->stream ? "text/event-stream" : "application/json";
        send_plain(fd, "200 OK", with_type ? type : NULL, body);
}

/* ---- the misbehaviours -------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint8_t rng_byte(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (uint8_t)rng_state;
}

static void send_forever(int fd, char fill) {
        static char block[65536];
        memset(block, fill, sizeof block);
        for (;;)
                send_all(fd, block, sizeof block);
}

/* Returns true to keep the connection for another request. */
static bool serve(int fd, enum mode mode, const struct request *req) {
        struct answer a = answer_for(req);
        switch (mode) {
        case MODE_OK:
                send_answer(fd, &a, a.content, true);
                return true;
        case MODE_NO_CONTENT_TYPE:
                send_answer(fd, &a, a.content, false);
                return true;
        case MODE_ENDLESS_LINE:
                send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                             "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
                send_forever(fd, 'x');
                return false;
        case MODE_ENDLESS_BODY:
                send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                             "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
                send_forever(fd, 'a');
                return false;
        case MODE_INVALID_UTF8: {
                /* lone continuation bytes, overlongs, surrogates, 0xFF: nothing a tokenizer makes */
                static const char bad[] = "\xff\xfe\x80\x81\xc0\xaf\xed\xa0\x80\xf8\x88\x80\x80\x80\xbf\xc3";
                char text[2048] = "";
                for (int i = 0; i < 24; i++)
                        strcat(text, bad);
                send_answer(fd, &a, text, true);
                return true;
        }
        case MODE_SLOWLORIS: {
                char body[8192], event[2048];
                format_object(event, sizeof event, &a, "a", NULL, true);
                snprintf(body, sizeof body, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n\r\ndata: %s\n\n",
                         a.stream ? "text/event-stream" : "application/json", event);
                for (size_t i = 0;; i = (i + 1) % strlen(body)) {
                        send_all(fd, body + i, 1);
                        sleep(1);
                }
        }
        case MODE_AFTER_DONE: {
                if (!a.stream) {
                        send_answer(fd, &a, a.content, true);
                        return true;
                }
                char body[8192], obj[2048];
                format_object(obj, sizeof obj, &a, a.content, NULL, true);
                snprintf(body, sizeof body, "data: [DONE]\n\ndata: %s\n\n", obj);
                send_plain(fd, "200 OK", "text/event-stream", body);
                return true;
        }
        case MODE_HTML:
                send_plain(fd, "200 OK", "text/html",
                           "<!DOCTYPE html>\n<html>\n<head><title>Welcome to nginx!</title></head>\n"
                           "<body><h1>Welcome to nginx!</h1><p>If you see this page, the nginx web server "
                           "is successfully installed and working.</p></body>\n</html>\n");
                return true;
        case MODE_NEVER_CLOSE:
                send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
                wait_for_client_close(fd);
                return false;
        case MODE_CLOSE_MID_STREAM: {
                char obj[2048], chunk[2200];
                if (a.stream) {
                        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                     "Transfer-Encoding: chunked\r\n\r\n");
                        for (int i = 0; i < 2; i++) {
                                format_object(obj, sizeof obj, &a, i ? "answ" : "The ", NULL, true);
                                int n = snprintf(chunk, sizeof chunk, "data: %s\n\n", obj);
                                char size_line[32];
                                snprintf(size_line, sizeof size_line, "%x\r\n", n);
                                send_str(fd, size_line);
                                send_str(fd, chunk);
                                send_str(fd, "\r\n");
                        }
                } else {
                        format_object(obj, sizeof obj, &a, "The answer is 323", NULL, false);
                        snprintf(chunk, sizeof chunk,
                                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                                 strlen(obj));
                        send_str(fd, chunk);
                        send_all(fd, obj, strlen(obj) / 2);
                }
                shutdown(fd, SHUT_RDWR);
                return false;
        }
        case MODE_HUGE_HEADER: {
                send_str(fd, "HTTP/1.1 200 OK\r\nX-Huge: ");
                static char block[1 << 20];
                memset(block, 'h', sizeof block);
                send_all(fd, block, sizeof block);
                char body[8192];
                answer_body(body, sizeof body, &a, a.content);
                char head[256];
                snprintf(head, sizeof head, "\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                         strlen(body));
                send_str(fd, head);
                send_str(fd, body);
                return true;
        }
        case MODE_CHUNKED_ERROR:
                send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "zz\r\n{\"choices\":[]}\r\n0\r\n\r\n");
                return false;
        case MODE_GARBAGE: {
                char junk[4096];
                for (size_t i = 0; i < sizeof junk; i++)
                        junk[i] = (char)rng_byte();
                send_all(fd, junk, sizeof junk);
                return false;
        }
        }
        return false;
}

static bool is_completion(const char *path) {
        return strcmp(path, "/v1/chat/completions") == 0 || strcmp(path, "/v1/completions") == 0;
}

static void handle(int fd, enum mode mode, bool everything) {
        static char head[MAX_HEAD + 1];
        size_t head_len = 0;
        for (;;) {
                struct request req = {0};
                if (!read_request(fd, head, &head_len, &req))
                        _exit(0);
                bool keep;
                if (everything || is_completion(req.path))
                        keep = serve(fd, mode, &req);
                else if (strcmp(req.path, "/health") == 0)
                        send_plain(fd, "200 OK", "application/json", "{\"status\":\"ok\"}"), keep = true;
                else if (strcmp(req.path, "/v1/models") == 0)
                        send_plain(fd, "200 OK", "application/json",
                                   "{\"object\":\"list\",\"data\":[{\"id\":\"hostile\",\"object\":\"model\"}]}"),
                                keep = true;
                else
                        send_plain(fd, "404 Not Found", "application/json", "{\"error\":\"not found\"}"), keep = true;
                free(req.body);
                if (!keep)
                        break;
        }
        _exit(0);
}

static void usage(void) {
        fprintf(stderr, "usage: gauntlet-hostile --port P [--host H] --mode M [--everything] [--port-file F]\nmodes:");
        for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
                fprintf(stderr, " %s", mode_names[i]);
        fputc('\n', stderr);
}

int main(int argc, char **argv) {
        const char *host = "127.0.0.1", *port_file = NULL;
        int port = -1, mode = -1;
        bool everything = false;
        for (int i = 1; i < argc; i++) {
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(argv[i], "--everything") == 0)
                        everything = true;
                else if (strcmp(argv[i], "--port") == 0 && v)
                        port = atoi(v), i++;
                else if (strcmp(argv[i], "--host") == 0 && v)
                        host = v, i++;
                else if (strcmp(argv[i], "--port-file") == 0 && v)
                        port_file = v, i++;
                else if (strcmp(argv[i], "--mode") == 0 && v) {
                        for (size_t k = 0; k < sizeof mode_names / sizeof mode_names[0]; k++)
                                if (strcmp(mode_names[k], v) == 0)
                                        mode = (int)k;
                        i++;
                } else {
                        usage();
                        return 2;
                }
        }
        if (port < 0 || port > 65535 || mode < 0) {
                usage();
                return 2;
        }
        signal(SIGCHLD, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            inet_pton(AF_INET, host, &sa.sin_addr) != 1 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            listen(ls, 64) < 0) {
                fprintf(stderr, "gauntlet-hostile: cannot listen on %s:%d: %s\n", host, port, strerror(errno));
                return 1;
        }
        if (port_file) {
                socklen_t sl = sizeof sa;
                getsockname(ls, (struct sockaddr *)&sa, &sl);
                char tmp[4096];
                snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
                FILE *f = fopen(tmp, "we");
                if (!f || fprintf(f, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(f) != 0 || rename(tmp, port_file) < 0) {
                        fprintf(stderr, "gauntlet-hostile: cannot write '%s'\n", port_file);
                        return 1;
                }
        }
        pid_t parent = getpid();
        for (;;) {
                int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        fprintf(stderr, "gauntlet-hostile: accept: %s\n", strerror(errno));
                        return 1;
                }
                pid_t pid = fork();
                if (pid == 0) {
                        /* never outlive the server, whoever kills it */
                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(0);
                        close(ls);
                        handle(fd, (enum mode)mode, everything);
                }
                close(fd);
        }
}
