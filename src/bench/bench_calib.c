/* bench_calib.c -- the bench's calibration and token counting: prompts sized in the model's
 * tokens (its tokenizer, a sweep's earlier calibration, or the server's counts), outputs
 * counted by the sweep's rule (count.h). */
#include "bench/bench_int.h"
#include "io/tokenizer.h"
#include "base/metrics.h"
#include <math.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate/detect.h"
#include "io/http.h"
#include "io/openai.h"

/* ---- prompt calibration: input_tokens in the server's own tokens ---------------------- */

/* A calibration request's limit on answers: a token count or a model list is small. */
#define CALIB_MAX_BODY ((size_t)1 << 20)
/* Prompts are searched up to this many characters per asked token. */
#define CALIB_MAX_CHARS_PER_TOKEN 64

/* One JSON request to the server; *ret gets the parsed 2xx body. -EBADMSG for an answer that
 * is not JSON or not 2xx (*ret_status says which), a transport error as http_run gives it. */
static int calib_request(struct calib *c, const char *method, const char *path, json_t *body, json_t **ret,
                         int *ret_status) {
        struct bench *b = c->b;
        const char *base = b->t->base_url;
        size_t blen = strlen(base);
        while (blen > 0 && base[blen - 1] == '/')
                blen--;
        _cleanup_free_ char *url = strdup_printf("%.*s%s", (int)blen, base, path);
        _cleanup_free_ char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
        if (!url || (body && !text))
                return -ENOMEM;
        struct http_request req = {
                .method = method,
                .url = url,
                .body = text,
                .body_len = text ? strlen(text) : 0,
                .timeout = b->t->request_timeout ? b->t->request_timeout : BENCH_DEFAULT_TIMEOUT,
                .max_body = CALIB_MAX_BODY,
                .should_abort = b->t->should_abort,
                .abort_userdata = b->t->abort_userdata,
        };
        _cleanup_(http_response_release) struct http_response resp;
        c->requests++;
        int r = http_run(b->l, &req, USEC_INFINITY, &resp);
        *ret_status = resp.status;
        if (r < 0)
                return r;
        if (resp.status < 200 || resp.status >= 300 || resp.truncated) {
                _cleanup_free_ char *m = openai_error_message(buf_str(&resp.body), resp.body.len);
                _cleanup_free_ char *ex = m ? detect_excerpt(m, strlen(m), 0, sizeof(c->message) - 8) : NULL;
                c->status = resp.status;
                snprintf(c->message, sizeof(c->message), "%s", ex ? ex : "");
                return -EBADMSG;
        }
        json_error_t je;
        *ret = json_loadb(buf_str(&resp.body), resp.body.len, 0, &je);
        return *ret ? 0 : -EBADMSG;
}

/* The context a request may use, from /v1/models: vLLM's max_model_len, llama.cpp's
 * meta.n_ctx (per slot). 0 when the server does not say. */
int64_t calib_context(struct calib *c) {
        json_t *o = NULL;
        int status;
        if (calib_request(c, "GET", "/v1/models", NULL, &o, &status) < 0)
                return 0;
        int64_t ctx = 0;
        if (openai_models_context_of(o, &ctx) < 0)
                ctx = 0;
        json_decref(o);
        return ctx;
}

/* usage.prompt_tokens of a one-token answer to text, as the bench would send it. */
static int calib_usage(struct calib *c, const char *text, int64_t *ret) {
        struct bench *b = c->b;
        json_t *body = json_pack("{s:i, s:i, s:b}", "max_tokens", 1, "temperature", 0, "stream", 0);
        if (!body)
                return -ENOMEM;
        if (b->t->model)
                json_object_set_new(body, "model", json_string(b->t->model));
        if (b->spec->chat)
                json_object_set_new(body, "messages", json_pack("[{s:s, s:s}]", "role", "user", "content", text));
        else
                json_object_set_new(body, "prompt", json_string(text));
        json_t *o = NULL;
        int status;
        int r = calib_request(c, "POST", b->spec->chat ? "/v1/chat/completions" : "/v1/completions", body, &o, &status);
        json_decref(body);
        if (r < 0)
                return r;
        json_t *n = json_object_get(json_object_get(o, "usage"), "prompt_tokens");
        r = json_is_integer(n) && json_integer_value(n) >= 0 ? 0 : -ENODATA;
        if (r == 0)
                *ret = json_integer_value(n);
        json_decref(o);
        return r;
}

/* The server's /tokenize count of text alone (no template, no special tokens): 0, -ENODATA
 * when the answer has no count, -ENOENT without a tokenize path, or as calib_request. */
static int calib_tokenize(struct calib *c, const char *text, int64_t *ret) {
        struct bench *b = c->b;
        const char *path = b->t->profile ? b->t->profile->tokenize_path : NULL;
        if (!path)
                return -ENOENT;
        json_t *body = openai_tokenize_request(text, b->t->model);
        if (!body)
                return -ENOMEM;
        json_t *o = NULL;
        int status;
        int r = calib_request(c, "POST", path, body, &o, &status);
        json_decref(body);
        if (r == 0) {
                r = openai_token_count_of(o, ret) < 0 ? -ENODATA : 0;
                json_decref(o);
        }
        return r;
}

/* The server's token count of text alone (no template, no special tokens). */
int calib_count(struct calib *c, const char *text, int64_t *ret) {
        if (strcmp(c->method, "tokenizer") == 0)
                return tokenizer_count(c->b->t->count->tokenizer, text, strlen(text), ret);
        if (strcmp(c->method, "tokenize") == 0) {
                int r = calib_tokenize(c, text, ret);
                if (r == -ECANCELED || r == -EINTR || r == -ENOMEM)
                        return r;
                if (r == 0 && (c->checked || *ret < CALIB_CHECK_TOKENS))
                        return 0;
                if (r == 0) {
                        /* the server's /tokenize is believed once its usage says the same of
                         * one text: a /tokenize that says 10x would size every prompt 10x short */
                        c->checked = true;
                        c->said_tokenize = *ret;
                        int64_t u;
                        if (c->template < 0 && (r = calib_usage(c, "", &c->template)) < 0)
                                return r;
                        if ((r = calib_usage(c, text, &u)) < 0)
                                return r;
                        c->said_usage = u - c->template;
                        if (count_agree((uint64_t)MAX(*ret, 0), (uint64_t)MAX(c->said_usage, 0), 1))
                                return 0;
                        c->method = "usage";
                        *ret = c->said_usage;
                        return 0;
                }
                c->method = "usage"; /* no tokenizer there after all: learn it from usage */
        }
        if (c->template < 0) {
                int r = calib_usage(c, "", &c->template);
                if (r < 0)
                        return r;
        }
        int64_t n;
        int r = calib_usage(c, text, &n);
        if (r < 0)
                return r;
        *ret = n - c->template;
        return 0;
}

/* The count of the calibration text of `chars` characters. A prompt the server refuses
 * (an HTTP error: longer than its context) counts as over any asked length. */
static int calib_text(struct calib *c, size_t chars, int64_t *ret) {
        _cleanup_buf_ struct buf t;
        buf_init(&t, BENCH_MAX_BODY);
        int r = bench_prompt_chars(c->b->spec->seed, 0, chars, &t);
        if (r < 0)
                return r;
        r = calib_count(c, buf_str(&t), ret);
        if (r == -EBADMSG && c->template >= 0) {
                c->refused = true;
                *ret = INT64_MAX;
                return 0;
        }
        return r;
}

int refuse(struct bench *b, const char *fmt, ...) {
        if (b->t->ret_error) {
                va_list ap;
                va_start(ap, fmt);
                char *s = NULL;
                if (vasprintf(&s, fmt, ap) < 0)
                        s = NULL;
                va_end(ap);
                free(*b->t->ret_error);
                *b->t->ret_error = s;
        }
        return -EMSGSIZE;
}

/* Finds the prompt length, in characters, that the server counts as `want` tokens: a
 * bisection on the length of bench_prompt_chars's text, each step one count by the server
 * (its tokenize endpoint, or usage.prompt_tokens less the template's share). Token counts
 * grow with the text, one token at a time or nearly; the length kept is the one whose count
 * is nearest the asked number. */
static int calib_find(struct calib *c, int64_t want, size_t *ret_chars, int64_t *ret_got) {
        struct bench *b = c->b;
        size_t lo = BENCH_PROMPT_PREFIX, hi = (size_t)want * 2;
        int64_t flo, fhi;
        int r = calib_text(c, lo, &flo);
        if (r == -EBADMSG || r == -ENODATA)
                return refuse(b, "cannot size the prompts: the server answered no token count (%s)",
                              strcmp(c->method, "tokenize") == 0 ? "tokenize endpoint" : "usage.prompt_tokens");
        if (r < 0)
                return r;
        fhi = flo;
        if (flo < want) {
                for (;;) {
                        if ((r = calib_text(c, hi, &fhi)) < 0)
                                return r;
                        if (fhi >= want)
                                break;
                        if (hi >= (size_t)want * CALIB_MAX_CHARS_PER_TOKEN || hi * 2 > BENCH_MAX_BODY / 2)
                                return refuse(b, "cannot size the prompts: %zu characters are still %lld tokens, fewer "
                                              "than the %lld asked", hi, (long long)fhi, (long long)want);
                        lo = hi;
                        flo = fhi;
                        hi *= 2;
                }
                while (hi - lo > 1) {
                        size_t mid = lo + (hi - lo) / 2;
                        int64_t f;
                        if ((r = calib_text(c, mid, &f)) < 0)
                                return r;
                        if (f < want) {
                                lo = mid;
                                flo = f;
                        } else {
                                hi = mid;
                                fhi = f;
                        }
                }
        }
        if (flo < want && fhi == INT64_MAX && c->refused)
                return refuse(b, "the server refuses prompts of %lld tokens (%lld is the longest it took): HTTP %d%s%s",
                              (long long)want, (long long)flo, c->status, c->message[0] ? ": " : "", c->message);
        bool take_hi = flo >= want || (fhi != INT64_MAX && llabs(fhi - want) <= llabs(want - flo));
        *ret_chars = take_hi && flo < want ? hi : lo;
        *ret_got = take_hi && flo < want ? fhi : flo;
        return 0;
}

/* The template's share (usage.prompt_tokens of an empty message), asked once; 0 when the
 * server does not say. */
int calib_template(struct calib *c, int64_t *ret) {
        if (c->template < 0) {
                int r = calib_usage(c, "", &c->template);
                if (r < 0 && r != -EBADMSG && r != -ENODATA)
                        return r;
        }
        *ret = c->template > 0 ? c->template : 0;
        return 0;
}

/* The lengths a sweep's earlier calibration found for the same asked lengths (the one it
 * counts by: struct count_rule), so that every cell is sent the same prompts: true when cal
 * has each of want[0..n) (the first under its top keys, all under "lengths" for several). */
static bool calib_reuse(const json_t *cal, const int64_t *want, size_t n, size_t *ret_chars, int64_t *ret_got) {
        if (!cal)
                return false;
        json_t *lengths = json_object_get(cal, "lengths");
        if (n > 1 && json_array_size(lengths) != n)
                return false;
        for (size_t i = 0; i < n; i++) {
                const json_t *e = n > 1 ? json_array_get(lengths, i) : cal;
                json_t *asked = json_object_get(e, "input_tokens"), *chars = json_object_get(e, "chars"),
                       *got = json_object_get(e, "measured");
                if (!json_is_integer(asked) || json_integer_value(asked) != want[i] || !json_is_integer(chars) ||
                    json_integer_value(chars) <= 0 || json_integer_value(chars) > (json_int_t)(BENCH_MAX_BODY / 2) ||
                    !json_is_integer(got))
                        return false;
        }
        for (size_t i = 0; i < n; i++) {
                const json_t *e = n > 1 ? json_array_get(lengths, i) : cal;
                ret_chars[i] = (size_t)json_integer_value(json_object_get(e, "chars"));
                ret_got[i] = json_integer_value(json_object_get(e, "measured"));
        }
        return true;
}

/* The server's /tokenize against its usage, when the calibration checked it. */
static int add_tokenize_check(struct bench *b, const struct calib *c) {
        if (!c->checked)
                return 0;
        return json_object_set_new(b->wl.calibration, "tokenize_check",
                                   json_pack("{s:I, s:I, s:b}", "tokenize", (json_int_t)c->said_tokenize, "usage",
                                             (json_int_t)c->said_usage, "agreed", strcmp(c->method, "tokenize") == 0));
}

/* The calibration of a workload whose lengths are the dataset's (sharegpt, multi_turn):
 * how it counted, the template's share, the context, its requests. 0 or -ENOMEM. */
int calib_describe(struct bench *b, const struct calib *c) {
        b->wl.calibration = json_pack("{s:s, s:o, s:o, s:i}", "method", c->method, "template_tokens",
                                      c->template >= 0 ? json_integer(c->template) : json_null(), "context",
                                      c->context > 0 ? json_integer(c->context) : json_null(), "requests", c->requests);
        return b->wl.calibration && add_tokenize_check(b, c) >= 0 ? 0 : -ENOMEM;
}

/* Sizes the synthetic prompts of n lengths (want[i] tokens -> ret_chars[i] characters,
 * measured ret_got[i] tokens) and says so in b->wl.calibration: the first length under the
 * keys it always had, every length under "lengths" when there are several. */
int calibrate(struct bench *b, struct calib *c, const int64_t *want, size_t n, size_t *ret_chars,
                     int64_t *ret_got) {
        int r;
        if (strcmp(c->method, "tokenizer") != 0 && b->t->count &&
            calib_reuse(b->t->count->calibration, want, n, ret_chars, ret_got))
                c->method = "sweep"; /* the same prompts as the cell that set the count's rule */
        else
                for (size_t i = 0; i < n; i++)
                        if ((r = calib_find(c, want[i], &ret_chars[i], &ret_got[i])) < 0)
                                return r;
        int64_t tmpl;
        if ((r = calib_template(c, &tmpl)) < 0)
                return r;
        b->wl.calibration = json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:i}", "method", c->method, "input_tokens",
                                   (json_int_t)want[0], "chars", (json_int_t)ret_chars[0], "measured",
                                   (json_int_t)ret_got[0], "template_tokens",
                                   c->template >= 0 ? json_integer(c->template) : json_null(), "context",
                                   c->context > 0 ? json_integer(c->context) : json_null(), "requests", c->requests);
        b->cnt.tokenize = strcmp(c->method, "tokenize") == 0; /* the output is counted the same way */
        if (!b->wl.calibration || add_tokenize_check(b, c) < 0)
                return -ENOMEM;
        if (strcmp(c->method, "sweep") == 0 &&
            json_object_set_new(b->wl.calibration, "from", json_string(b->t->count->from)) < 0)
                return -ENOMEM;
        if (n > 1) {
                json_t *a = json_array();
                if (!a || json_object_set_new(b->wl.calibration, "lengths", a) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (json_array_append_new(a, json_pack("{s:I, s:I, s:I}", "input_tokens", (json_int_t)want[i],
                                                               "chars", (json_int_t)ret_chars[i], "measured",
                                                               (json_int_t)ret_got[i])) < 0)
                                return -ENOMEM;
        }
        return 0;
}

/* Checks that the longest request, prompt tokens as measured and output as asked, fits the
 * context the server says a request has. */
int check_context(struct bench *b, struct calib *c, int64_t prompt, int64_t output) {
        int64_t tmpl = c->template > 0 ? c->template : 0;
        if (c->context > 0 && prompt + tmpl + output > c->context)
                return refuse(b, "the server's context holds %lld tokens per request; a bench request needs %lld "
                              "(%lld prompt + %lld template + %lld output)",
                              (long long)c->context, (long long)(prompt + tmpl + output), (long long)prompt,
                              (long long)tmpl, (long long)output);
        return 0;
}

/* ---- the output counted by the server's tokenizer ------------------------------------- */

void counted_clear(struct bench *b) {
        for (size_t i = 0; i < b->cnt.n_counted; i++)
                free(b->cnt.counted[i].text);
        free(b->cnt.counted);
        b->cnt.counted = NULL;
        b->cnt.n_counted = 0;
}

/* A U+FFFD in streamed text is what the server's detokenizer wrote for bytes that were not
 * UTF-8: one token it generated (a byte token, usually), which the tokenizer would count
 * as the replacement character's own encoding. The tokens to take off a count for them. */
static int64_t replacements_extra(int64_t each, const struct buf *text) {
        size_t k = 0;
        for (const char *p = text->data, *end = p ? p + text->len : NULL; p && (p = memmem(p, (size_t)(end - p), FFFD, 3));
             p += 3)
                k++;
        return each > 1 ? (int64_t)k * (each - 1) : 0;
}

/* A completed counted request's output, counted by the sweep's rule as it completes
 * (rec.counted_tokens set, 0 returned), or, with no rule (this cell's own counts decide),
 * kept until the level ends (count_deferred; 1 returned). -ENOMEM. */
int count_output(struct bench *b, struct breq *q) {
        if (!q->rec.ok)
                return 0;
        q->rec.output_bytes = q->text.len;
        const struct count_rule *rule = b->t->count;
        if (b->cnt.rule == COUNT_TOKENIZER) {
                int64_t n = 0;
                int r = tokenizer_count(rule->tokenizer, q->text.data ? q->text.data : "", q->text.len, &n);
                if (r < 0)
                        return r;
                q->rec.counted_tokens = n - replacements_extra(b->cnt.fffd_tokens, &q->text);
                return 0;
        }
        if (b->cnt.rule == COUNT_BYTES) {
                q->rec.counted_tokens = MAX(count_by_bytes(q->text.len, rule->bytes_per_token), 0);
                return 0;
        }
        size_t loops = (size_t)b->th.sh->n;
        if (b->cnt.n_counted >= BENCH_MAX_DEFERRED / loops)
                return 0;
        struct counted *v = realloc(b->cnt.counted, (b->cnt.n_counted + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        b->cnt.counted = v;
        char *text = NULL;
        if (b->cnt.tokenize && q->text.len > 0 && b->cnt.n_texts < BENCH_MAX_TOKENIZED / loops) {
                if (!(text = strndup(q->text.data, q->text.len)))
                        return -ENOMEM;
                b->cnt.n_texts++;
        }
        v[b->cnt.n_counted++] = (struct counted){.rec = q->rec, .text = text, .index = q->index, .seq = q->seq};
        v[b->cnt.n_counted - 1].rec.detail = NULL;
        return 1;
}

/* The level's deferred requests (a cell counted by its own counts): each text counted by the
 * server's /tokenize (as the calibration counts a prompt: no template, no special tokens;
 * the count's requests never share the server with the load), then the counts that agree
 * decide (count_decide), and every request is counted so and added to the level. */
int count_deferred(struct bench *b) {
        if (b->cnt.n_counted == 0)
                return 0;
        struct calib c = {.b = b, .method = "tokenize", .template = -1};
        _cleanup_free_ struct count_request *cr = calloc(b->cnt.n_counted, sizeof(*cr));
        if (!cr)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < b->cnt.n_counted; i++) {
                struct counted *d = &b->cnt.counted[i];
                cr[i] = (struct count_request){.bytes = d->rec.output_bytes, .chunks = d->rec.chunks,
                                               .usage = d->rec.output_tokens, .tokenize = -1};
                int64_t n = 0;
                int rc = b->cnt.tokenize && d->text ? calib_tokenize(&c, d->text, &n) : -ENOENT;
                if (rc == -ECANCELED || rc == -EINTR || rc == -ENOMEM) {
                        counted_clear(b);
                        return rc;
                }
                if (rc < 0 && rc != -ENOENT)
                        b->cnt.tokenize = false; /* no count there after all */
                if (rc == 0)
                        cr[i].tokenize = n;
        }
        if ((r = count_decide(cr, b->cnt.n_counted, &b->cnt.decision)) < 0) {
                counted_clear(b);
                return r;
        }
        b->cnt.decided = true;
        b->lv.count_method = count_source_name(b->cnt.decision.source);
        for (size_t i = 0; r >= 0 && i < b->cnt.n_counted; i++) {
                struct counted *d = &b->cnt.counted[i];
                d->rec.counted_tokens =
                        MAX(count_request_tokens(&cr[i], b->cnt.decision.source, b->cnt.decision.bytes_per_token), 0);
                if ((r = bench_level_add(&b->lv, &d->rec)) >= 0)
                        r = add_sample(b, &d->rec, d->index, d->seq);
        }
        counted_clear(b);
        return r;
}

/* The level's "count" (docs/metrics.md "Output tokens"): how its figures were counted, the
 * cell's own counts beside the sweep's, and a warning for each that disagrees. */
int count_level_json(const struct bench *b, json_t *o) {
        const struct bench_level *lv = &b->lv;
        const struct count_rule *rule = b->t->count;
        json_t *c = json_object();
        if (!c || json_object_set_new(o, "count", c) < 0)
                return -ENOMEM;
        json_t *warnings = json_object_get(o, metric_key(METRIC_WARNINGS));
        const char *how = b->cnt.rule == COUNT_TOKENIZER ? "tokenizer" : b->cnt.rule == COUNT_BYTES ? "bytes" : "own";
        const char *source = lv->tokenized && lv->count_method ? lv->count_method : "chunks";
        double bpt = b->cnt.rule == COUNT_BYTES ? rule->bytes_per_token
                     : b->cnt.rule == COUNT_NONE && b->cnt.decided ? b->cnt.decision.bytes_per_token
                     : lv->output_tokens > 0 ? (double)lv->output_bytes / (double)lv->output_tokens
                                             : 0;
        int r = 0;
        r |= json_object_set_new(c, "rule", json_string(how));
        r |= json_object_set_new(c, "source", json_string(source));
        r |= json_object_set_new(c, "tokens", json_integer((json_int_t)MIN(lv->output_tokens, (uint64_t)INT64_MAX)));
        r |= json_object_set_new(c, "bytes", json_integer((json_int_t)MIN(lv->output_bytes, (uint64_t)INT64_MAX)));
        r |= json_object_set_new(c, "chunks", json_integer((json_int_t)MIN(lv->chunks, (uint64_t)INT64_MAX)));
        r |= json_object_set_new(c, "requests", json_integer((json_int_t)lv->completed));
        if (bpt > 0 && isfinite(bpt))
                r |= json_object_set_new(c, "bytes_per_token", json_real(round(bpt * 1000) / 1000));
        if (b->cnt.rule == COUNT_TOKENIZER && rule->tokenizer_what)
                r |= json_object_set_new(c, "tokenizer", json_string(rule->tokenizer_what));
        if (b->cnt.rule == COUNT_BYTES && rule->from[0])
                r |= json_object_set_new(c, "from", json_string(rule->from));
        if (b->cnt.rule == COUNT_NONE && b->cnt.decided) {
                const struct count_decision *d = &b->cnt.decision;
                r |= json_object_set_new(c, "agreed", json_boolean(d->agreed));
                json_t *own = json_object();
                r |= json_object_set_new(c, "own", own);
                static const enum count_source srcs[] = {COUNT_USAGE, COUNT_TOKENIZE, COUNT_CHUNKS};
                for (size_t i = 0; own && i < ELEMENTSOF(srcs); i++)
                        if (d->requests[srcs[i]])
                                r |= json_object_set_new(own, count_source_name(srcs[i]),
                                                         json_pack("{s:I, s:I}", "tokens", (json_int_t)d->sum[srcs[i]],
                                                                   "requests", (json_int_t)d->requests[srcs[i]]));
                if (!d->agreed && lv->completed)
                        r |= json_array_append_new(warnings,
                                                   json_sprintf("this cell's own token counts disagree (usage, /tokenize "
                                                                "and chunks, as it gave them): counted by the fewest, "
                                                                "%s; its figures are unverified",
                                                                count_source_name(d->source)));
        }
        json_t *dis = json_array();
        r |= json_object_set_new(c, "disagree", dis);
        if (lv->usage_requests && !count_usage_agrees(lv->usage_tokens, lv->usage_counted, lv->usage_requests)) {
                r |= json_array_append_new(dis, json_string("usage"));
                if (!lv->usage_disagree) /* per request it was not compared (bytes per token) */
                        r |= json_array_append_new(
                                warnings, json_sprintf("usage disagrees with gauntlet's count over the level: the server "
                                                       "said %llu output tokens on %llu requests, gauntlet counted %llu "
                                                       "(%s); the figures use gauntlet's count",
                                                       (unsigned long long)lv->usage_tokens,
                                                       (unsigned long long)lv->usage_requests,
                                                       (unsigned long long)lv->usage_counted, source));
        }
        if (lv->completed && strcmp(source, "chunks") != 0 && !count_agree(lv->chunks, lv->output_tokens, lv->completed)) {
                r |= json_array_append_new(dis, json_string("chunks"));
                r |= json_array_append_new(warnings,
                                           json_sprintf("its stream carried %.2f tokens per chunk (%llu chunks for %llu "
                                                        "tokens): chunks are not its tokens, and the figures do not "
                                                        "count them",
                                                        lv->chunks ? (double)lv->output_tokens / (double)lv->chunks : 0.0,
                                                        (unsigned long long)lv->chunks,
                                                        (unsigned long long)lv->output_tokens));
        }
        return r ? -ENOMEM : 0;
}
