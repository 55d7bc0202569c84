/* http.c -- HTTP requests on the shared event loop. */
#include "io/http.h"

#include <limits.h>
#include <string.h>

struct http_transfer {
        struct loop *loop;
        CURL *easy;
        struct curl_slist *headers;
        struct http_response resp;
        http_data_cb on_data;
        void *data_userdata;
        http_done_cb done_cb;
        void *done_userdata;
        int cb_error;          /* what on_data (or an allocation) stopped the transfer with */
        bool at_cap;           /* the write callback stopped the transfer at max_body */
        bool running;          /* added to the loop and not finished */
        bool done;
        char errbuf[CURL_ERROR_SIZE];
};

static void http_response_init(struct http_response *r) {
        *r = (struct http_response){0};
        buf_init(&r->body, HTTP_DEFAULT_MAX_BODY);
}

void http_response_release(struct http_response *r) {
        free(r->content_type);
        free(r->error_message);
        buf_release(&r->body);
        *r = (struct http_response){0};
}

const char *http_strerror(int error) {
        switch (error) {
        case 0:
                return "ok";
        case -ETIMEDOUT:
                return "timed out";
        case -ECONNREFUSED:
                return "connection refused";
        case -ECONNRESET:
                return "connection closed mid-response";
        case -EHOSTUNREACH:
                return "host unreachable";
        case -EPROTO:
                return "not an HTTP response";
        case -EMSGSIZE:
                return "response headers too large";
        case -ECANCELED:
                return "cancelled";
        case -ENOMEM:
                return "out of memory";
        case -EINVAL:
                return "invalid request";
        default:
                return strerror(error < 0 ? -error : error);
        }
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *userdata) {
        struct http_transfer *t = userdata;
        usec_t now = now_usec();
        if (!t->resp.first_byte)
                t->resp.first_byte = now;
        t->resp.last_progress = now;
        return size * nmemb;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *userdata) {
        struct http_transfer *t = userdata;
        size_t n = size * nmemb;
        usec_t now = now_usec();
        if (!t->resp.first_body)
                t->resp.first_body = now;
        t->resp.last_progress = now;

        long code = 0;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
        if (t->on_data && code >= 200 && code < 300) {
                int r = t->on_data(t->data_userdata, p, n);
                if (r < 0) {
                        t->cb_error = r;
                        return 0; /* anything but n makes curl stop with CURLE_WRITE_ERROR */
                }
                return n;
        }
        int r = buf_append(&t->resp.body, p, n);
        if (r == -ENOBUFS) {
                t->resp.truncated = true;
                t->at_cap = true;
                return 0;
        }
        if (r < 0) {
                t->cb_error = r;
                return 0;
        }
        return n;
}

static int map_curl_error(struct http_transfer *t, CURLcode result) {
        switch (result) {
        case CURLE_OK:
                return 0;
        case CURLE_WRITE_ERROR:
        case CURLE_ABORTED_BY_CALLBACK:
                if (t->at_cap)
                        return 0;
                return t->cb_error ? t->cb_error : -EIO;
        case CURLE_COULDNT_CONNECT: {
                long oserr = 0;
                curl_easy_getinfo(t->easy, CURLINFO_OS_ERRNO, &oserr);
                if (oserr == ENETUNREACH || oserr == EHOSTUNREACH)
                        return -EHOSTUNREACH;
                return -ECONNREFUSED;
        }
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                return -EHOSTUNREACH;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_PARTIAL_FILE:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
                return -ECONNRESET;
        case CURLE_OUT_OF_MEMORY:
                /* curl 7.x also says this for a response header over its 100 KiB cap: once
                 * the status line has arrived, the server is to blame */
                return t->resp.first_byte ? -EMSGSIZE : -ENOMEM;
        case CURLE_UNSUPPORTED_PROTOCOL: {
                /* also "Received HTTP/0.9 when not allowed": bytes that are not HTTP from a
                 * server we reached, not a URL we got wrong */
                char *ip = NULL;
                if (curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip && *ip)
                        return -EPROTO;
                return -EINVAL;
        }
        case CURLE_URL_MALFORMAT:
                return -EINVAL;
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_BAD_CONTENT_ENCODING:
                return -EPROTO;
        default:
                return -EIO;
        }
}

/* Marks the transfer over, with the status it had got; the easy handle is off the multi
 * handle already. */
static void transfer_end(struct http_transfer *t) {
        t->running = false;
        t->done = true;
        t->resp.finished = now_usec();
        long code = 0;
        if (curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
                t->resp.status = (int)code;
}

/* Records the end of a transfer libcurl finished. */
static void transfer_settle(struct http_transfer *t, CURLcode result) {
        transfer_end(t);
        char *ct = NULL;
        if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
                t->resp.content_type = strdup(ct);
        t->resp.error = map_curl_error(t, result);
        if (t->resp.error && t->errbuf[0])
                t->resp.error_message = strdup(t->errbuf);
}

static void on_done(struct loop *l, CURL *easy, CURLcode result, void *userdata) {
        struct http_transfer *t = userdata;
        transfer_settle(t, result);
        if (t->done_cb)
                t->done_cb(t, t->done_userdata);
}

int http_start(struct loop *l, const struct http_request *req, http_done_cb done, void *userdata,
               struct http_transfer **ret) {
        if (!req->url)
                return -EINVAL;
        struct http_transfer *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        http_response_init(&t->resp);
        t->resp.body.max = req->max_body ? req->max_body : HTTP_DEFAULT_MAX_BODY;
        t->loop = l;
        t->on_data = req->on_data;
        t->data_userdata = req->userdata;
        t->done_cb = done;
        t->done_userdata = userdata;

        int r = -ENOMEM;
        t->easy = curl_easy_init();
        if (!t->easy)
                goto fail;
        CURL *e = t->easy;
        bool post = req->method ? strcmp(req->method, "POST") == 0 : req->body != NULL;
        if (req->method && !post && strcmp(req->method, "GET") != 0) {
                r = -EINVAL;
                goto fail;
        }

        /* "Expect:" stops curl from waiting for a 100-continue on bodies over 1 KiB. */
        struct curl_slist *h = curl_slist_append(NULL, "Expect:");
        if (!h)
                goto fail;
        t->headers = h;
        if (post) {
                h = curl_slist_append(t->headers, "Content-Type: application/json");
                if (!h)
                        goto fail;
                t->headers = h;
        }
        for (const char *const *p = req->headers; p && *p; p++) {
                h = curl_slist_append(t->headers, *p);
                if (!h)
                        goto fail;
                t->headers = h;
        }

        r = -EINVAL;
        if (curl_easy_setopt(e, CURLOPT_URL, req->url) != CURLE_OK)
                goto fail;
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        if (!req->use_env_proxy)
                curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
        if (req->own_connection) {
                curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
                curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
        }
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
        if (post) {
                curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
                if (curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, req->body ? req->body : "") != CURLE_OK) {
                        r = -ENOMEM;
                        goto fail;
                }
        } else {
                curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
        }
        if (req->timeout)
                curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                                 (long)MIN(req->timeout / USEC_PER_MSEC + 1, (usec_t)LONG_MAX));
        if (req->idle_timeout) {
                /* A backstop for transfers nobody drives through http_run(), which enforces
                 * the idle limit exactly. */
                usec_t s = (req->idle_timeout + USEC_PER_SEC - 1) / USEC_PER_SEC;
                curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
                curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)MIN(s, (usec_t)LONG_MAX));
        }

        t->resp.started = t->resp.last_progress = now_usec();
        r = loop_add_transfer(l, e, on_done, t);
        if (r < 0)
                goto fail;
        t->running = true;
        *ret = t;
        return 0;

fail:
        http_transfer_free(t);
        return r;
}

/* Stops a transfer in flight now; its done callback is not called; its response gets
 * error -ECANCELED unless it had finished already. */
static void http_cancel(struct http_transfer *t) {
        if (!t || !t->running)
                return;
        loop_remove_transfer(t->loop, t->easy);
        transfer_end(t);
        t->resp.error = -ECANCELED;
}

void http_transfer_free(struct http_transfer *t) {
        if (!t)
                return;
        http_cancel(t);
        if (t->easy)
                curl_easy_cleanup(t->easy);
        curl_slist_free_all(t->headers);
        http_response_release(&t->resp);
        free(t);
}

struct http_response *http_transfer_response(struct http_transfer *t) {
        return &t->resp;
}

int http_run(struct loop *l, const struct http_request *req, usec_t deadline, struct http_response *ret) {
        _cleanup_http_transfer_ struct http_transfer *t = NULL;
        int r = http_start(l, req, NULL, NULL, &t);
        if (r < 0) {
                http_response_init(ret);
                ret->error = r;
                return r;
        }

        int result = 0;
        while (!t->done) {
                usec_t until = deadline;
                if (req->idle_timeout)
                        until = MIN(until, t->resp.last_progress + req->idle_timeout);
                r = loop_iterate(l, until);
                if (t->done)
                        break;
                if (r == -EINTR) {
                        result = -EINTR;
                        break;
                }
                if (r < 0 && r != -ETIME) {
                        result = r;
                        break;
                }
                if (req->should_abort && req->should_abort(req->abort_userdata)) {
                        result = -ECANCELED;
                        break;
                }
                usec_t now = now_usec();
                if (req->idle_timeout && now >= t->resp.last_progress + req->idle_timeout) {
                        t->resp.idle_timed_out = true;
                        result = -ETIMEDOUT;
                        break;
                }
                if (deadline != USEC_INFINITY && now >= deadline) {
                        result = -ETIMEDOUT;
                        break;
                }
        }
        if (!t->done) {
                http_cancel(t);
                t->resp.error = result;
        } else if (req->should_abort && req->should_abort(req->abort_userdata) && t->resp.error) {
                /* A transfer that failed because the caller's world ended (the server died
                 * and reset the connection) is the caller's news, not the server's answer. */
                t->resp.error = -ECANCELED;
        }
        if (t->resp.error == -ETIMEDOUT && !t->resp.idle_timed_out && req->idle_timeout &&
            (!req->timeout || t->resp.finished - t->resp.started < req->timeout) &&
            t->resp.finished - t->resp.last_progress >= req->idle_timeout)
                t->resp.idle_timed_out = true; /* curl's low-speed backstop fired first */

        *ret = t->resp;
        /* The transfer gave its response away; leave it an empty one to release. */
        http_response_init(&t->resp);
        return ret->error;
}
