/* checks.c -- check specs, the built-in smoke suite, and the runner that asks a live server. */
#include "gate/checks.h"

#include <jansson.h>
#include <string.h>

#include "gate/detect.h"
#include "gate/golden.h"
#include "io/http.h"
#include "io/openai.h"
#include "io/sse.h"

void check_spec_release(struct check_spec *c) {
        free(c->name);
        free(c->prompt);
        json_decref(c->messages);
        free(c->expect.value);
        *c = (struct check_spec){0};
}

void check_result_release(struct check_result *r) {
        free(r->name);
        free(r->cause);
        free(r->evidence);
        free(r->output);
        free(r->reasoning);
        free(r->finish_reason);
        free(r->logprobs);
        free(r->detail);
        free(r->error_message);
        *r = (struct check_result){0};
}

void checks_free_suite(struct check_spec *specs, size_t n) {
        for (size_t i = 0; i < n; i++)
                check_spec_release(&specs[i]);
        free(specs);
}

int checks_default_suite(struct check_spec **ret, size_t *ret_n) {
        static const struct {
                const char *name;
                enum check_mode mode;
                const char *prompt;
                enum thinking thinking;
                bool require_reasoning;
                int max_tokens;
                enum expect_kind kind;
                const char *value;
        } suite[] = {
                {"models", CHECK_MODELS, NULL, THINKING_UNSET, false, 0, EXPECT_NONE, NULL},
                {"ok", CHECK_CHAT, "Reply with exactly: OK", THINKING_OFF, false, 16, EXPECT_EQUALS, "OK"},
                {"math", CHECK_CHAT, "What is 17 * 19?", THINKING_OFF, false, 64, EXPECT_NUMBER, "323"},
                {"math-thinking", CHECK_CHAT, "What is 17 * 19?", THINKING_ON, true, 2048, EXPECT_NUMBER, "323"},
        };
        size_t n = ELEMENTSOF(suite);
        struct check_spec *specs = calloc(n, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct check_spec *c = &specs[i];
                c->name = strdup(suite[i].name);
                c->mode = suite[i].mode;
                c->prompt = suite[i].prompt ? strdup(suite[i].prompt) : NULL;
                c->thinking = suite[i].thinking;
                c->require_reasoning = suite[i].require_reasoning;
                c->max_tokens = suite[i].max_tokens;
                c->stream = suite[i].mode == CHECK_MODELS ? STREAM_NO : STREAM_BOTH;
                c->expect.kind = suite[i].kind;
                c->expect.value = suite[i].value ? strdup(suite[i].value) : NULL;
                if (!c->name || (suite[i].prompt && !c->prompt) || (suite[i].value && !c->expect.value)) {
                        checks_free_suite(specs, n);
                        return -ENOMEM;
                }
        }
        *ret = specs;
        *ret_n = n;
        return 0;
}

/* ---- the runner ---------------------------------------------------------------------- */

void checks_free_results(struct check_result *r, size_t n) {
        for (size_t i = 0; r && i < n; i++)
                check_result_release(&r[i]);
        free(r);
}

enum verdict checks_summarize(const struct check_result *r, size_t n, const char **ret_cause,
                              const char **ret_evidence) {
        const struct check_result *worst = NULL;
        for (size_t i = 0; i < n; i++)
                if (r[i].verdict != VERDICT_SKIPPED &&
                    (!worst || verdict_severity(r[i].verdict) > verdict_severity(worst->verdict)))
                        worst = &r[i];
        enum verdict v = worst ? worst->verdict : VERDICT_PASS;
        if (ret_cause)
                *ret_cause = worst && v != VERDICT_PASS ? worst->cause : NULL;
        if (ret_evidence)
                *ret_evidence = worst && v != VERDICT_PASS ? worst->evidence : NULL;
        return v;
}

static const char *const generic_reasoning_fields[] = {"reasoning_content", "reasoning", NULL};

struct run {
        struct loop *loop;
        const struct checks_target *t;
        char *base;              /* base URL without a trailing "/" or "/v1" */
        char *model;             /* t->model, or the id /v1/models gave */
        bool models_tried;       /* the model list was asked for already */
        const char *const *reasoning_fields;
        const char *thinking_key;
        bool takes_seed;
};

/* Sets verdict, cause and evidence on r; takes ownership of evidence (NULL: -ENOMEM). */
static char *quote_excerpt(const char *s, size_t len);

int check_result_set(struct check_result *r, enum verdict v, const char *cause, char *evidence) {
        char *c = cause ? strdup(cause) : NULL;
        if (cause && !c) {
                free(evidence);
                return -ENOMEM;
        }
        free(r->cause);
        free(r->evidence);
        r->verdict = v;
        r->cause = c;
        r->evidence = evidence;
        return 0;
}

static int result_fail(struct check_result *r, enum verdict v, const char *cause, char *evidence) {
        if (!evidence)
                return -ENOMEM;
        return check_result_set(r, v, cause, evidence);
}

char *checks_quote_answer(const char *s, size_t len) {
        return quote_excerpt(s, len);
}

static char *quote_excerpt(const char *s, size_t len) {
        /* The end of a long answer is where the answer usually is: detect_excerpt starts
         * max/5 bytes before `at`, so this shows the last CHECK_EVIDENCE_EXCERPT bytes. */
        size_t at = len > CHECK_EVIDENCE_EXCERPT ? len - CHECK_EVIDENCE_EXCERPT + CHECK_EVIDENCE_EXCERPT / 5 : 0;
        _cleanup_free_ char *ex = detect_excerpt(s ? s : "", s ? len : 0, at, CHECK_EVIDENCE_EXCERPT);
        if (!ex)
                return NULL;
        return strdup_printf("\"%s\"", ex);
}

/* The answer a transfer failure leaves as evidence. */
static int fail_transport(struct check_result *res, const struct http_response *resp, int error, bool streamed,
                          usec_t timeout, const struct openai_output *out) {
        res->transport_error = error;
        if (error == -EINVAL) /* a URL or option curl refused: our fault, not the server's */
                return result_fail(res, VERDICT_ERROR, "http client",
                                   strdup_printf("cannot send the request: %s",
                                                 resp->error_message ? resp->error_message : "invalid request"));
        if (error == -ETIMEDOUT) {
                char b[32];
                _cleanup_free_ char *got = out && out->content.len ? quote_excerpt(out->content.data, out->content.len)
                                                                   : NULL;
                char *ev;
                if (resp->idle_timed_out)
                        ev = strdup_printf("no bytes for %s after %zu stream events%s%s",
                                           format_duration(resp->finished - resp->last_progress, b),
                                           out ? out->events : 0, got ? ", got so far: " : "", got ? got : "");
                else
                        ev = strdup_printf("no complete answer within %s%s%s",
                                           format_duration(timeout ? timeout : resp->finished - resp->started, b),
                                           got ? ", got so far: " : "", got ? got : "");
                return result_fail(res, VERDICT_TIMEOUT, "request", ev);
        }
        if (error == -ECONNRESET && (streamed || resp->status))
                return result_fail(res, VERDICT_GARBAGE, "http", strdup("connection closed mid-stream"));
        if (resp->error_message && error != -ECONNREFUSED)
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   strdup_printf("%s (%s)", http_strerror(error), resp->error_message));
        return result_fail(res, VERDICT_GARBAGE, "http", strdup(http_strerror(error)));
}

/* The server's own words in an error body, cut for evidence: the JSON around them would
 * take the whole excerpt. */
static char *error_body_message(const struct http_response *resp) {
        _cleanup_free_ char *m = openai_error_message(buf_str(&resp->body), resp->body.len);
        return m ? detect_excerpt(m, strlen(m), 0, CHECK_EVIDENCE_EXCERPT) : NULL;
}

static int fail_status(struct check_result *res, const struct http_response *resp) {
        free(res->error_message);
        res->error_message = openai_error_message(buf_str(&resp->body), resp->body.len);
        _cleanup_free_ char *msg = error_body_message(resp);
        if (msg)
                return result_fail(res, VERDICT_GARBAGE, "http", strdup_printf("HTTP %d: %s", resp->status, msg));
        _cleanup_free_ char *ex = detect_excerpt(buf_str(&resp->body), resp->body.len, 0, CHECK_EVIDENCE_EXCERPT);
        if (!ex)
                return -ENOMEM;
        return result_fail(res, VERDICT_GARBAGE, "http", strdup_printf("HTTP %d: %s", resp->status, ex));
}

static char *url_for(const struct run *run, const char *path) {
        return strdup_printf("%s%s", run->base, path);
}

/* GET /v1/models. With res NULL only learns the model id, silently. */
static int run_models(struct run *run, struct check_result *res) {
        run->models_tried = true;
        _cleanup_free_ char *url = url_for(run, "/v1/models");
        if (!url)
                return -ENOMEM;
        struct http_request req = {
                .method = "GET",
                .url = url,
                .timeout = run->t->request_timeout,
                .max_body = HTTP_DEFAULT_MAX_BODY,
                .should_abort = run->t->should_abort,
                .abort_userdata = run->t->abort_userdata,
        };
        _cleanup_(http_response_release) struct http_response resp;
        int r = http_run(run->loop, &req, USEC_INFINITY, &resp);
        if (r == -ECANCELED || r == -EINTR || r == -ENOMEM)
                return r;
        if (res) {
                res->latency = resp.finished - resp.started;
                res->http_status = resp.status;
        }
        if (r < 0)
                return res ? fail_transport(res, &resp, r, false, run->t->request_timeout, NULL) : 0;
        if (resp.status < 200 || resp.status >= 300)
                return res ? fail_status(res, &resp) : 0;
        _cleanup_free_ char *id = NULL, *err = NULL;
        size_t count = 0;
        r = openai_parse_models(buf_str(&resp.body), resp.body.len, &id, &count, &err);
        if (r == -ENOMEM)
                return r;
        if (!res) {
                if (r == 0 && !run->model)
                        run->model = TAKE_PTR(id);
                return 0;
        }
        if (r == -ENOENT)
                return result_fail(res, VERDICT_WRONG, res->name, strdup("no model listed by /v1/models"));
        if (r < 0)
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   err ? TAKE_PTR(err) : strdup("malformed model list"));
        res->output = strdup(id);
        if (!res->output)
                return -ENOMEM;
        if (!run->model)
                run->model = TAKE_PTR(id);
        return 0;
}

struct stream_ctx {
        struct sse sse;
        struct openai_output *out;
};

static int stream_on_event(void *userdata, const char *event, const char *data, size_t len) {
        struct stream_ctx *sc = userdata;
        int r = openai_stream_event(sc->out, data, len);
        if (r < 0)
                return r;
        /* An output at its cap has told us all we will judge: stop reading. */
        if (sc->out->content.truncated || sc->out->reasoning.truncated)
                return -ENOBUFS;
        return 0;
}

static int stream_on_data(void *userdata, const char *p, size_t n) {
        struct stream_ctx *sc = userdata;
        return sse_feed(&sc->sse, p, n);
}

static char *strdup_buf(const struct buf *b) {
        char *s = malloc(b->len + 1);
        if (!s)
                return NULL;
        if (b->len)
                memcpy(s, b->data, b->len);
        s[b->len] = '\0';
        return s;
}

static char *expect_words(const struct expect *e) {
        switch (e->kind) {
        case EXPECT_NUMBER:
                return strdup_printf("expected %s", e->value);
        case EXPECT_EQUALS:
                return strdup_printf("expected \"%s\"", e->value);
        case EXPECT_CONTAINS:
                return strdup_printf("expected to contain \"%s\"", e->value);
        case EXPECT_REGEX:
                return strdup_printf("expected to match /%s/", e->value);
        case EXPECT_NONE:
                break;
        }
        return strdup("expected nothing");
}

/* What was asked, for the detectors: the prompt, or the text of every message (string
 * contents and the text parts of array contents), one per line. NULL on ENOMEM. */
static char *spec_question(const struct check_spec *spec) {
        if (!spec->messages || !json_is_array(spec->messages))
                return strdup(spec->prompt ? spec->prompt : "");
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        size_t i;
        json_t *m;
        json_array_foreach(spec->messages, i, m) {
                json_t *c = json_object_get(m, "content");
                size_t j;
                json_t *part;
                if (json_is_string(c) && (buf_puts(&b, json_string_value(c)) < 0 || buf_puts(&b, "\n") < 0))
                        return NULL;
                json_array_foreach(c, j, part) {
                        const char *tx = json_string_value(json_object_get(part, "text"));
                        if (tx && (buf_puts(&b, tx) < 0 || buf_puts(&b, "\n") < 0))
                                return NULL;
                }
        }
        return buf_detach(&b);
}

/* The verdict on one completed output. */
static int judge_output(const struct check_spec *spec, struct check_result *res, const struct openai_output *out) {
        _cleanup_free_ char *question = spec_question(spec);
        if (!question)
                return -ENOMEM;
        struct detect_input in = {
                .text = out->content.data ? out->content.data : "",
                .len = out->content.len,
                .reasoning = out->reasoning.len ? out->reasoning.data : NULL,
                .reasoning_len = out->reasoning.len,
                .finish_reason = out->finish_reason,
                .completion_tokens = out->completion_tokens,
                .logprobs = out->logprobs,
                .n_logprobs = out->n_logprobs,
                .http_status = res->http_status,
                .error_message = out->error,
                .question = question,
                .question_len = strlen(question),
        };
        struct detect_result d = {0};
        int r = detect_output(&in, &d);
        if (r < 0)
                return r;
        if (d.verdict != VERDICT_PASS) {
                char *ev = d.evidence ? TAKE_PTR(d.evidence) : strdup("(no evidence)");
                r = result_fail(res, d.verdict, d.cause ? d.cause : "garbage", ev);
                detect_result_release(&d);
                return r;
        }
        detect_result_release(&d);
        if (out->error) {
                _cleanup_free_ char *ex = detect_excerpt(out->error, strlen(out->error), 0, CHECK_EVIDENCE_EXCERPT);
                if (!ex)
                        return -ENOMEM;
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   out->error_code ? strdup_printf("error %d from server: %s", out->error_code, ex)
                                                   : strdup_printf("error from server: %s", ex));
        }
        if (spec->expect.kind != EXPECT_NONE) {
                bool match = false;
                _cleanup_free_ char *err = NULL;
                r = golden_match(&spec->expect, res->output ? res->output : "", &match, &err);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return result_fail(res, VERDICT_ERROR, "check",
                                           strdup_printf("check '%s': %s", spec->name, err ? err : "invalid expectation"));
                if (!match) {
                        _cleanup_free_ char *want = expect_words(&spec->expect);
                        _cleanup_free_ char *got = quote_excerpt(out->content.data, out->content.len);
                        if (!want || !got)
                                return -ENOMEM;
                        return result_fail(res, VERDICT_WRONG, spec->name, strdup_printf("%s, got: %s", want, got));
                }
        }
        if (spec->require_reasoning && out->reasoning.len == 0)
                return result_fail(res, VERDICT_WRONG, spec->name, strdup("no reasoning part"));
        return 0;
}

/* One chat or completion request in flight: what it sends and what has come back. */
struct completion {
        const struct check_spec *spec;
        bool stream;
        char *body, *url;
        struct openai_output out;
        struct stream_ctx sc;
        struct http_request req;
};

static void completion_release(struct completion *c) {
        free(c->body);
        free(c->url);
        sse_release(&c->sc.sse);
        openai_output_release(&c->out);
}

/* Builds the request of spec into c (c must not move until it is released). Returns 0, 1
 * when res got a verdict instead (a check with no prompt), or -ENOMEM. */
static int completion_prepare(struct run *run, const struct check_spec *spec, bool stream, struct completion *c,
                              struct check_result *res) {
        const struct checks_target *t = run->t;
        *c = (struct completion){.spec = spec, .stream = stream};
        openai_output_init(&c->out, run->reasoning_fields, CHECK_MAX_OUTPUT);
        c->sc.out = &c->out;
        sse_init(&c->sc.sse, 0, 0, stream_on_event, &c->sc);
        bool chat = spec->mode == CHECK_CHAT;
        int max_tokens = spec->max_tokens;
        if (max_tokens <= 0)
                max_tokens = spec->thinking == THINKING_ON ? CHECK_DEFAULT_MAX_TOKENS_THINKING : CHECK_DEFAULT_MAX_TOKENS;
        /* one logprob per token asked for: what a server sends beyond is counted, not kept */
        openai_output_cap_logprobs(&c->out, max_tokens);
        struct openai_params p = {
                .chat = chat,
                .model = run->model,
                .prompt = spec->prompt,
                .messages = chat ? spec->messages : NULL,
                .max_tokens = max_tokens,
                .temperature = spec->sampling ? spec->temperature : 0,
                .has_top_p = spec->sampling,
                .top_p = spec->top_p,
                .stream = stream,
                .thinking = chat ? (int)spec->thinking : -1,
                .thinking_key = run->thinking_key,
                .has_seed = run->takes_seed,
                .seed = spec->sampling ? spec->seed : CHECK_SEED,
                .logprobs = t->logprobs,
        };
        int r = openai_build_request(&p, &c->body);
        if (r == -EINVAL) {
                r = result_fail(res, VERDICT_ERROR, "check", strdup_printf("check '%s' has no prompt", spec->name));
                return r < 0 ? r : 1;
        }
        if (r < 0)
                return r;
        c->url = url_for(run, chat ? "/v1/chat/completions" : "/v1/completions");
        if (!c->url)
                return -ENOMEM;

        static const char *const accept_sse[] = {"Accept: text/event-stream", NULL};
        c->req = (struct http_request){
                .method = "POST",
                .url = c->url,
                .body = c->body,
                .body_len = strlen(c->body),
                .headers = stream ? accept_sse : NULL,
                .timeout = t->request_timeout,
                .idle_timeout = stream ? t->idle_timeout : 0,
                .max_body = HTTP_DEFAULT_MAX_BODY,
                .on_data = stream ? stream_on_data : NULL,
                .userdata = &c->sc,
                .should_abort = t->should_abort,
                .abort_userdata = t->abort_userdata,
        };
        return 0;
}

/* The verdict on a finished request of c: r is how the transfer ended (0 or an error as
 * http_run returns it), resp what came back. -ECANCELED/-EINTR/-ENOMEM pass through. */
static int completion_judge(struct run *run, struct completion *c, int r, const struct http_response *resp,
                            struct check_result *res) {
        const struct checks_target *t = run->t;
        const struct check_spec *spec = c->spec;
        bool stream = c->stream;
        struct openai_output *out = &c->out;
        if (r == 0 && stream && resp->status >= 200 && resp->status < 300)
                r = sse_finish(&c->sc.sse);
        if (r == -ECANCELED || r == -EINTR || r == -ENOMEM)
                return r;
        if (r == -ENOBUFS)
                r = 0; /* stopped at the output cap: judge what we have */

        res->http_status = resp->status;
        res->latency = resp->started ? (resp->finished ? resp->finished : now_usec()) - resp->started : 0;
        if (stream && out->first_token)
                res->ttft = out->first_token - resp->started;

        bool parse_failed = false;
        if (r == 0 && !stream && resp->status >= 200 && resp->status < 300 && !resp->truncated) {
                r = openai_parse_response(out, buf_str(&resp->body), resp->body.len);
                if (r == -ENOMEM)
                        return r;
                parse_failed = r == -EBADMSG;
                r = 0;
        } else if (r == -EBADMSG || r == -E2BIG) {
                parse_failed = r == -EBADMSG;
        }
        if (openai_output_finish(out) < 0)
                return -ENOMEM;
        res->output = strdup_buf(&out->content);
        res->reasoning = out->reasoning.len ? strdup_buf(&out->reasoning) : NULL;
        res->finish_reason = out->finish_reason ? strdup(out->finish_reason) : NULL;
        res->truncated = out->content.truncated || out->reasoning.truncated;
        res->prompt_tokens = out->prompt_tokens > 0 ? out->prompt_tokens : 0;
        if (!res->output || (out->reasoning.len && !res->reasoning) || (out->finish_reason && !res->finish_reason))
                return -ENOMEM;
        if (t->logprobs && out->n_logprobs) {
                res->logprobs = malloc(out->n_logprobs * sizeof(*res->logprobs));
                if (!res->logprobs)
                        return -ENOMEM;
                memcpy(res->logprobs, out->logprobs, out->n_logprobs * sizeof(*res->logprobs));
                res->n_logprobs = out->n_logprobs;
                res->logprobs_dropped = out->logprobs_dropped;
        }

        if (parse_failed)
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   strdup(out->parse_error ? out->parse_error : "malformed response"));
        if (r == -E2BIG)
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   strdup("server-sent event over the size limit"));
        if (r < 0)
                return fail_transport(res, resp, r, stream, t->request_timeout, out);
        if (resp->status < 200 || resp->status >= 300)
                return fail_status(res, resp);
        if (resp->truncated)
                return result_fail(res, VERDICT_GARBAGE, "http",
                                   strdup_printf("response body over %zu bytes", (size_t)HTTP_DEFAULT_MAX_BODY));
        /* A stream that stops without finish_reason or [DONE] was cut, whatever TCP said. */
        if (stream && !out->done && !out->finish_reason && !out->error && !res->truncated) {
                /* not one event: an HTML page or a JSON body, not a stream cut short */
                if (out->events == 0) {
                        _cleanup_free_ char *ct = resp->content_type ? detect_escape(resp->content_type,
                                                                                     strlen(resp->content_type))
                                                                   : NULL;
                        return result_fail(res, VERDICT_GARBAGE, "http",
                                           strdup_printf("no server-sent events in the response (Content-Type: %s)",
                                                         ct ? ct : "none"));
                }
                return result_fail(res, VERDICT_GARBAGE, "http", strdup("connection closed mid-stream"));
        }
        r = judge_output(spec, res, out);
        if (r >= 0 && res->verdict != VERDICT_PASS && out->events_after_done > 0 && res->evidence) {
                char *e = strdup_printf("%s (%zu event%s after [DONE], ignored)", res->evidence,
                                        out->events_after_done, out->events_after_done == 1 ? "" : "s");
                if (!e)
                        return -ENOMEM;
                free(res->evidence);
                res->evidence = e;
        }
        return r;
}

/* One chat or completion request, streamed or not. Returns 0 with res filled, or
 * -ECANCELED/-EINTR/-ENOMEM. */
static int run_completion(struct run *run, const struct check_spec *spec, bool stream, struct check_result *res) {
        if (!run->model && !run->models_tried) {
                int r = run_models(run, NULL);
                if (r < 0)
                        return r;
        }
        struct completion c;
        int r = completion_prepare(run, spec, stream, &c, res);
        if (r == 0) {
                _cleanup_(http_response_release) struct http_response resp;
                r = http_run(run->loop, &c.req, USEC_INFINITY, &resp);
                r = completion_judge(run, &c, r, &resp, res);
        }
        completion_release(&c);
        return r < 0 ? r : 0;
}

/* The streamed run of a STREAM_BOTH spec must agree with the non-streamed one. */
static int compare_runs(const struct check_spec *spec, const struct check_result *plain, struct check_result *streamed) {
        if (streamed->verdict != VERDICT_PASS)
                return 0;
        if (plain->verdict != VERDICT_PASS && plain->verdict != VERDICT_WRONG)
                return 0;
        if (spec->mode == CHECK_MODELS)
                return 0;
        _cleanup_free_ char *a = NULL, *b = NULL;
        if (golden_normalize(plain->output ? plain->output : "", &a) < 0 ||
            golden_normalize(streamed->output ? streamed->output : "", &b) < 0)
                return -ENOMEM;
        if (strcmp(a, b) == 0)
                return 0;
        _cleanup_free_ char *qa = quote_excerpt(b, strlen(b)), *qb = quote_excerpt(a, strlen(a));
        if (!qa || !qb)
                return -ENOMEM;
        return result_fail(streamed, VERDICT_WRONG, spec->name,
                           strdup_printf("streamed answer differs from non-streamed: %s vs %s", qa, qb));
}

static int run_one(struct run *run, const struct check_spec *spec, bool stream, struct check_result *res) {
        *res = (struct check_result){.verdict = VERDICT_PASS, .streamed = stream};
        res->name = stream && spec->stream == STREAM_BOTH ? strdup_printf("%s/stream", spec->name) : strdup(spec->name);
        if (!res->name)
                return -ENOMEM;
        if (spec->mode == CHECK_MODELS)
                return run_models(run, res);
        return run_completion(run, spec, stream, res);
}

char *checks_base_url(const char *url) {
        size_t n = strlen(url);
        while (n > 0 && url[n - 1] == '/')
                n--;
        if (n >= 3 && memcmp(url + n - 3, "/v1", 3) == 0)
                n -= 3;
        while (n > 0 && url[n - 1] == '/')
                n--;
        return strndup(url, n);
}

static void run_init(struct run *run, struct loop *l, const struct checks_target *t) {
        const struct profile *prof = t->profile;
        *run = (struct run){
                .loop = l,
                .t = t,
                .reasoning_fields = prof && prof->reasoning_fields ? prof->reasoning_fields : generic_reasoning_fields,
                .thinking_key = t->thinking_key ? t->thinking_key
                                : prof && prof->thinking_key ? prof->thinking_key : "enable_thinking",
                .takes_seed = prof ? prof->takes_seed : false,
        };
}

int checks_run(struct loop *l, const struct checks_target *t, const struct check_spec *specs, size_t n,
               struct check_result **ret, size_t *ret_n) {
        struct run run;
        run_init(&run, l, t);
        int r = -ENOMEM;
        size_t runs = 0, count = 0;
        for (size_t i = 0; i < n; i++)
                runs += specs[i].stream == STREAM_BOTH && specs[i].mode != CHECK_MODELS ? 2 : 1;
        struct check_result *results = calloc(runs ? runs : 1, sizeof(*results));
        if (!results)
                return -ENOMEM;
        run.base = checks_base_url(t->base_url ? t->base_url : "");
        if (!run.base)
                goto finish;
        if (t->model && !(run.model = strdup(t->model)))
                goto finish;

        r = 0;
        bool hung = false;
        for (size_t i = 0; i < n && r == 0 && !hung; i++) {
                const struct check_spec *s = &specs[i];
                bool both = s->stream == STREAM_BOTH && s->mode != CHECK_MODELS;
                for (int pass = 0; pass < (both ? 2 : 1); pass++) {
                        if (t->should_abort && t->should_abort(t->abort_userdata)) {
                                r = -ECANCELED;
                                break;
                        }
                        bool stream = both ? pass == 1 : s->stream == STREAM_YES;
                        struct check_result *res = &results[count];
                        r = run_one(&run, s, stream, res);
                        if (r < 0) {
                                /* An interrupted check has no verdict: it is not reported. */
                                check_result_release(res);
                                break;
                        }
                        count++;
                        /* A server that let one request hang will hang the next one too:
                         * asking more would only multiply the wait. */
                        if (res->verdict == VERDICT_TIMEOUT) {
                                hung = true;
                                break;
                        }
                        if (both && pass == 1) {
                                r = compare_runs(s, &results[count - 2], res);
                                if (r < 0)
                                        break;
                        }
                }
        }
finish:
        if (t->ret_model)
                *t->ret_model = run.model ? strdup(run.model) : NULL;
        free(run.base);
        free(run.model);
        if (r == -ENOMEM) {
                checks_free_results(results, count);
                return r;
        }
        *ret = results;
        *ret_n = count;
        return r;
}

/* ---- checks under load: one request at a time on the loop, without waiting ---------- */

struct check_probe {
        struct run run;
        struct completion c;
        struct check_result res;
        struct http_transfer *tr;
        void (*done)(void *userdata);
        void *userdata;
        bool prepared;
        bool finished;
};

static void probe_done(struct http_transfer *tr, void *userdata) {
        struct check_probe *p = userdata;
        p->finished = true;
        if (p->done)
                p->done(p->userdata);
}

void check_probe_free(struct check_probe *p) {
        if (!p)
                return;
        http_transfer_free(p->tr);
        if (p->prepared)
                completion_release(&p->c);
        check_result_release(&p->res);
        free(p->run.base);
        free(p->run.model);
        free(p);
}

int check_probe_start(struct loop *l, const struct checks_target *t, const struct check_spec *spec, bool stream,
                      void (*done)(void *userdata), void *userdata, struct check_probe **ret) {
        if (spec->mode == CHECK_MODELS)
                return -EINVAL;
        struct check_probe *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        run_init(&p->run, l, t);
        p->run.models_tried = true; /* the model is t's: no request but this one */
        p->done = done;
        p->userdata = userdata;
        p->res = (struct check_result){.verdict = VERDICT_PASS, .streamed = stream};
        int r = -ENOMEM;
        p->res.name = stream && spec->stream == STREAM_BOTH ? strdup_printf("%s/stream", spec->name) : strdup(spec->name);
        p->run.base = checks_base_url(t->base_url ? t->base_url : "");
        if (!p->res.name || !p->run.base || (t->model && !(p->run.model = strdup(t->model))))
                goto fail;
        r = completion_prepare(&p->run, spec, stream, &p->c, &p->res);
        p->prepared = true;
        if (r < 0)
                goto fail;
        if (r == 1) {
                /* judged already (no prompt): finished, with nothing sent */
                p->finished = true;
                *ret = p;
                return 0;
        }
        if ((r = http_start(l, &p->c.req, probe_done, p, &p->tr)) < 0)
                goto fail;
        *ret = p;
        return 0;
fail:
        check_probe_free(p);
        return r;
}

bool check_probe_finished(const struct check_probe *p) {
        return p->finished;
}

int check_probe_result(struct check_probe *p, struct check_result *ret) {
        if (!p->finished)
                return -EBUSY;
        if (p->tr) {
                struct http_response *resp = http_transfer_response(p->tr);
                int r = completion_judge(&p->run, &p->c, resp->error, resp, &p->res);
                if (r < 0)
                        return r;
        }
        *ret = p->res;
        p->res = (struct check_result){0};
        return 0;
}

/* ---- many at once: the eval's batch of independent questions ------------------------ */

static int not_asked(struct check_result *res, const struct check_spec *spec, const char *why) {
        check_result_release(res);
        *res = (struct check_result){.verdict = VERDICT_SKIPPED, .streamed = spec->stream == STREAM_YES};
        if (!(res->name = strdup(spec->name)))
                return -ENOMEM;
        return result_fail(res, VERDICT_SKIPPED, "not asked", strdup(why));
}

/* The model to ask when t names none: what /v1/models lists first (NULL when it cannot
 * tell: the questions then go without one, as a check's would). */
static int lookup_model(struct loop *l, const struct checks_target *t, char **ret) {
        struct run run;
        run_init(&run, l, t);
        run.base = checks_base_url(t->base_url ? t->base_url : "");
        int r = run.base ? run_models(&run, NULL) : -ENOMEM;
        free(run.base);
        if (r < 0) {
                free(run.model);
                return r;
        }
        *ret = run.model;
        return 0;
}

int checks_run_concurrent(struct loop *l, const struct checks_target *t, const struct check_spec *specs, size_t n,
                          size_t concurrency, struct check_result **ret) {
        for (size_t i = 0; i < n; i++)
                if (specs[i].mode == CHECK_MODELS)
                        return -EINVAL;
        if (concurrency < 1)
                concurrency = 1;
        struct checks_target target = *t;
        target.ret_model = NULL;
        _cleanup_free_ char *model = NULL;
        int r = t->model ? 0 : lookup_model(l, t, &model);
        if (r < 0)
                return r;
        if (!t->model)
                target.model = model;
        if (t->ret_model)
                *t->ret_model = target.model ? strdup(target.model) : NULL;

        struct check_result *results = calloc(n ? n : 1, sizeof(*results));
        _cleanup_free_ struct check_probe **probes = calloc(n ? n : 1, sizeof(*probes));
        if (!results || !probes) {
                free(results);
                return -ENOMEM;
        }
        size_t next = 0, in_flight = 0, done = 0;
        bool hung = false;
        while (done < n) {
                /* fill the window */
                while (!hung && next < n && in_flight < concurrency) {
                        size_t i = next++;
                        bool stream = specs[i].stream == STREAM_YES;
                        r = check_probe_start(l, &target, &specs[i], stream, NULL, NULL, &probes[i]);
                        if (r == -ENOMEM)
                                goto cancel;
                        if (r < 0) {
                                /* curl refused the request: gauntlet's side, as in a check */
                                results[i] = (struct check_result){.verdict = VERDICT_PASS, .streamed = stream};
                                if (!(results[i].name = strdup(specs[i].name)) ||
                                    result_fail(&results[i], VERDICT_ERROR, "http client",
                                                strdup_printf("cannot send the request: %s", strerror(-r))) < 0) {
                                        r = -ENOMEM;
                                        goto cancel;
                                }
                                done++;
                                continue;
                        }
                        in_flight++;
                }
                if (in_flight == 0) {
                        /* nothing more is sent: the rest was never asked */
                        for (size_t i = next; i < n; i++)
                                if ((r = not_asked(&results[i], &specs[i], "not asked: an earlier request timed out")) < 0)
                                        goto cancel;
                        break;
                }
                /* a probe judged without a request (no prompt) is finished already */
                bool any = false;
                for (size_t i = 0; i < next && !any; i++)
                        any = probes[i] && check_probe_finished(probes[i]);
                if (!any) {
                        r = loop_iterate(l, USEC_INFINITY);
                        if (r < 0 && r != -ETIME)
                                goto cancel;
                }
                /* judge what ended, in spec order */
                for (size_t i = 0; i < next; i++) {
                        if (!probes[i] || !check_probe_finished(probes[i]))
                                continue;
                        r = check_probe_result(probes[i], &results[i]);
                        check_probe_free(probes[i]);
                        probes[i] = NULL;
                        in_flight--;
                        done++;
                        if (r < 0)
                                goto cancel;
                        if (results[i].verdict == VERDICT_TIMEOUT)
                                hung = true;
                }
                if (t->should_abort && t->should_abort(t->abort_userdata)) {
                        r = -ECANCELED;
                        goto cancel;
                }
        }
        *ret = results;
        return 0;

cancel:
        /* whatever is in flight or unsent has no answer */
        for (size_t i = 0; i < n; i++) {
                bool unanswered = probes[i] || i >= next;
                check_probe_free(probes[i]);
                probes[i] = NULL;
                if (unanswered && r != -ENOMEM && not_asked(&results[i], &specs[i], "not asked: stopped") < 0)
                        r = -ENOMEM;
        }
        if (r == -ENOMEM) {
                checks_free_results(results, n);
                return r;
        }
        *ret = results;
        return r;
}
