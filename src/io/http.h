/* http.h -- HTTP requests on the shared event loop (libcurl easy handles on loop.h).
 *
 * One struct http_transfer is one request. It runs on the caller's struct loop next to
 * everything else the loop watches (server pidfds, log pipes, other transfers), so a
 * request in flight never stops gauntlet from noticing a server dying.
 *
 * Every request is HTTP/1.1 with keep-alive (connections are pooled by the loop's multi
 * handle), ignores proxies from the environment unless asked (CURLOPT_NOPROXY "*") and
 * uses no signals (CURLOPT_NOSIGNAL).
 *
 * Caps: the stored response body is at most max_body bytes. At the cap the transfer is
 * stopped, body.truncated and response.truncated are set, and the transfer counts as
 * finished (error 0): the caller decides what a too-long answer means. With a streaming
 * callback, the bytes of a 2xx body go to the callback instead of the stored body (the
 * callback applies its own caps); a non-2xx body is still stored, for evidence.
 */
#ifndef GAUNTLET_HTTP_H
#define GAUNTLET_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "text/buf.h"
#include "io/loop.h"
#include "base/util.h"

#define HTTP_DEFAULT_MAX_BODY ((size_t)8 << 20)

/* Receives body bytes as they arrive (2xx responses only). Return 0 to go on, a negative
 * errno to stop the transfer: it then ends with that error. */
typedef int (*http_data_cb)(void *userdata, const char *p, size_t n);

struct http_request {
        const char *method;            /* "GET" or "POST"; NULL: POST with a body, else GET */
        const char *url;
        const char *body;              /* JSON body (copied at start), or NULL */
        size_t body_len;
        const char *const *headers;    /* extra "Name: value" lines, NULL-terminated, or NULL.
                                          A body gets "Content-Type: application/json". */
        usec_t timeout;                /* the whole request; 0: no limit */
        usec_t idle_timeout;           /* longest silence between received bytes; 0: none.
                                          Exact under http_run(); whole seconds (rounded
                                          up) for transfers driven only by the loop. */
        size_t max_body;               /* cap on the stored body; 0: HTTP_DEFAULT_MAX_BODY */
        http_data_cb on_data;          /* optional streaming callback */
        void *userdata;                /* for on_data */
        bool use_env_proxy;            /* honour http_proxy & co. (off by default) */
        bool own_connection;           /* a connection of its own, closed after it: never one
                                          of the loop's pooled connections that other
                                          transfers (the bench's streams) would reuse */
        /* http_run() only: polled after each loop iteration; true stops with -ECANCELED. */
        bool (*should_abort)(void *userdata);
        void *abort_userdata;
};

struct http_response {
        int status;                    /* HTTP status, 0 when none arrived */
        char *content_type;            /* owned, or NULL */
        struct buf body;               /* capped, see above */
        bool truncated;                /* the body reached max_body and the transfer stopped */
        usec_t started;                /* monotonic: request handed to the loop */
        usec_t first_byte;             /* first response byte (status line); 0 if none */
        usec_t first_body;             /* first body byte; 0 if none */
        usec_t finished;               /* transfer ended; 0 while running */
        usec_t last_progress;          /* last time bytes arrived (or started) */
        int error;                     /* 0, or how it failed: -ETIMEDOUT (see idle_timed_out),
                                          -ECONNREFUSED, -ECONNRESET (closed early or
                                          mid-body), -EHOSTUNREACH (cannot resolve/route),
                                          -EPROTO (not HTTP), -EMSGSIZE (a response header
                                          over curl's 100 KiB cap), -ECANCELED, -ENOMEM, or what
                                          on_data returned */
        bool idle_timed_out;           /* error is -ETIMEDOUT because of idle_timeout */
        char *error_message;           /* owned: curl's words for the failure, or NULL */
};

void http_response_release(struct http_response *r);

struct http_transfer;

/* Called once when the transfer ends (not when http_transfer_free cancels it first). The
 * callee may free it. */
typedef void (*http_done_cb)(struct http_transfer *t, void *userdata);

/* Starts req on l. The request's strings are copied; on_data's userdata must outlive
 * the transfer. The transfer owns its response until http_transfer_free(). */
int http_start(struct loop *l, const struct http_request *req, http_done_cb done, void *userdata,
               struct http_transfer **ret);
/* Cancels it if needed and frees it. NULL is fine. */
void http_transfer_free(struct http_transfer *t);
static inline void http_transfer_freep(struct http_transfer **t) { http_transfer_free(*t); }
#define _cleanup_http_transfer_ _cleanup_(http_transfer_freep)
struct http_response *http_transfer_response(struct http_transfer *t);

/* Runs req to its end on l, serving every other watch of the loop meanwhile. deadline is
 * an absolute monotonic limit on top of req->timeout (USEC_INFINITY: none).
 * *ret (initialised here; the caller releases it) gets whatever arrived, also on failure.
 * Returns 0 when a complete response arrived (whatever its status; see ret->truncated),
 * ret->error when the transfer failed, -ECANCELED when req->should_abort said so, -EINTR
 * when the loop caught a signal. */
int http_run(struct loop *l, const struct http_request *req, usec_t deadline, struct http_response *ret);

/* "connection refused", "timed out", ... for an http error, for people. Never NULL. */
const char *http_strerror(int error);

#endif
