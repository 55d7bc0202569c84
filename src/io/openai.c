/* openai.c -- OpenAI-style request bodies, responses, stream deltas and model lists. */
#include "io/openai.h"
#include "base/utf8.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

static const char *const default_reasoning_fields[] = {"reasoning_content", "reasoning", NULL};

/* ---- request bodies ---------------------------------------------------------------- */

int openai_build_request(const struct openai_params *p, char **ret) {
        _cleanup_json_ json_t *root = json_object();
        if (!root)
                return -ENOMEM;
        int r = 0;
        if (p->model)
                r |= json_object_set_new(root, "model", json_string(p->model));
        if (p->chat) {
                json_t *messages;
                if (p->messages)
                        messages = json_deep_copy(p->messages);
                else if (p->prompt)
                        messages = json_pack("[{s:s, s:s}]", "role", "user", "content", p->prompt);
                else
                        return -EINVAL;
                r |= json_object_set_new(root, "messages", messages);
        } else {
                if (!p->prompt)
                        return -EINVAL;
                r |= json_object_set_new(root, "prompt", json_string(p->prompt));
        }
        if (p->max_tokens > 0)
                r |= json_object_set_new(root, "max_tokens", json_integer(p->max_tokens));
        r |= json_object_set_new(root, "temperature", json_real(p->temperature));
        if (p->has_top_p)
                r |= json_object_set_new(root, "top_p", json_real(p->top_p));
        if (p->has_seed)
                r |= json_object_set_new(root, "seed", json_integer(p->seed));
        r |= json_object_set_new(root, "stream", json_boolean(p->stream));
        if (p->stream)
                r |= json_object_set_new(root, "stream_options", json_pack("{s:b}", "include_usage", 1));
        if (p->chat && p->thinking >= 0) {
                const char *key = p->thinking_key ? p->thinking_key : "enable_thinking";
                r |= json_object_set_new(root, "chat_template_kwargs",
                                         json_pack("{s:b}", key, p->thinking ? 1 : 0));
        }
        if (p->logprobs) {
                /* chat takes a boolean, the legacy completions endpoint a count */
                if (p->chat)
                        r |= json_object_set_new(root, "logprobs", json_true());
                else
                        r |= json_object_set_new(root, "logprobs", json_integer(1));
        }
        if (r)
                return -ENOMEM;
        char *s = json_dumps(root, JSON_COMPACT);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* ---- tolerant JSON ----------------------------------------------------------------- */

/* A printable excerpt of a server's bytes for messages: at most max bytes, anything but
 * printable ASCII escaped. */
static char *excerpt(const char *s, size_t len, size_t max) {
        struct buf b;
        buf_init(&b, max * 4 + 8);
        size_t n = MIN(len, max);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\n')
                        buf_puts(&b, "\\n");
                else if (c >= 0x20 && c < 0x7f)
                        buf_append(&b, &s[i], 1);
                else
                        buf_printf(&b, "\\x%02x", c);
        }
        if (n < len)
                buf_puts(&b, "...");
        char *out = buf_detach(&b);
        buf_release(&b);
        return out;
}


static bool is_word_byte(char c) {
        return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* Rewrites what strict JSON refuses but servers send: bare NaN/Infinity outside strings
 * become strings; invalid UTF-8 and lone surrogate escapes inside strings become U+FFFD;
 * raw control bytes inside strings are escaped. Anything else is copied as is. */
static int json_sanitize(const char *s, size_t n, struct buf *out) {
        static const char *const bare[] = {"-Infinity", "Infinity", "-inf", "inf", "-nan", "NaN", "nan", NULL};
        bool in_string = false;
        size_t i = 0;
        int r = 0;
        while (i < n && r == 0) {
                char c = s[i];
                if (!in_string) {
                        if (c == '"') {
                                in_string = true;
                                r = buf_append(out, &c, 1);
                                i++;
                                continue;
                        }
                        bool replaced = false;
                        if (i == 0 || !is_word_byte(s[i - 1])) {
                                for (size_t k = 0; bare[k]; k++) {
                                        size_t kl = strlen(bare[k]);
                                        if (n - i >= kl && memcmp(s + i, bare[k], kl) == 0 &&
                                            (i + kl == n || !is_word_byte(s[i + kl]))) {
                                                r = buf_printf(out, "\"%s\"", bare[k]);
                                                i += kl;
                                                replaced = true;
                                                break;
                                        }
                                }
                        }
                        if (!replaced) {
                                r = buf_append(out, &c, 1);
                                i++;
                        }
                        continue;
                }
                unsigned char u = (unsigned char)c;
                if (c == '"') {
                        in_string = false;
                        r = buf_append(out, &c, 1);
                        i++;
                } else if (c == '\\') {
                        if (i + 1 < n && s[i + 1] == 'u') {
                                uint32_t v, w;
                                if (utf8_hex4(s + i + 2, n - i - 2, &v) < 0) {
                                        r = buf_append(out, s + i, MIN((size_t)2, n - i));
                                        i += 2;
                                        continue;
                                }
                                if (v >= 0xd800 && v <= 0xdbff && n - i >= 12 && s[i + 6] == '\\' &&
                                    s[i + 7] == 'u' && utf8_hex4(s + i + 8, n - i - 8, &w) == 0 && w >= 0xdc00 &&
                                    w <= 0xdfff) {
                                        r = buf_append(out, s + i, 12);
                                        i += 12;
                                } else if (v >= 0xd800 && v <= 0xdfff) {
                                        r = buf_puts(out, "\\ufffd");
                                        i += 6;
                                } else {
                                        r = buf_append(out, s + i, 6);
                                        i += 6;
                                }
                        } else {
                                r = buf_append(out, s + i, MIN((size_t)2, n - i));
                                i += 2;
                        }
                } else if (u < 0x20) {
                        r = buf_printf(out, "\\u%04x", u);
                        i++;
                } else if (u < 0x80) {
                        r = buf_append(out, &c, 1);
                        i++;
                } else {
                        size_t k = utf8_decode((const unsigned char *)s + i, n - i, NULL, NULL);
                        if (k) {
                                r = buf_append(out, s + i, k);
                                i += k;
                        } else {
                                r = buf_append(out, "\xef\xbf\xbd", 3);
                                i++;
                        }
                }
        }
        return r < 0 ? r : 0;
}

int openai_json_loads(const char *text, size_t len, json_t **ret, char **ret_error) {
        json_error_t err;
        json_t *j = json_loadb(text, len, JSON_ALLOW_NUL, &err);
        if (j) {
                *ret = j;
                return 0;
        }
        json_error_t first = err;
        struct buf clean;
        buf_init(&clean, len * 3 + 64);
        int r = json_sanitize(text, len, &clean);
        if (r == 0)
                j = json_loadb(buf_str(&clean), clean.len, JSON_ALLOW_NUL, &err);
        buf_release(&clean);
        if (j) {
                *ret = j;
                return 0;
        }
        if (r == -ENOMEM)
                return -ENOMEM;
        if (ret_error) {
                /* jansson quotes the offending bytes: escape its words too */
                _cleanup_free_ char *ex = excerpt(text, len, 80);
                _cleanup_free_ char *why = excerpt(first.text, strlen(first.text), 120);
                *ret_error = strdup_printf("malformed JSON from server (%s): %s", why ? why : "", ex ? ex : "");
        }
        return -EBADMSG;
}

/* ---- outputs ----------------------------------------------------------------------- */

void openai_output_init(struct openai_output *o, const char *const *reasoning_fields, size_t max) {
        *o = (struct openai_output){
                .prompt_tokens = -1,
                .completion_tokens = -1,
                .reasoning_fields = reasoning_fields ? reasoning_fields : default_reasoning_fields,
                .max_logprobs = OPENAI_MAX_LOGPROBS,
        };
        buf_init(&o->content, max ? max : (size_t)1 << 20);
        buf_init(&o->reasoning, max ? max : (size_t)1 << 20);
}

void openai_output_cap_logprobs(struct openai_output *o, int max_tokens) {
        o->max_logprobs = max_tokens > 0 ? MIN((size_t)max_tokens, OPENAI_MAX_LOGPROBS) : OPENAI_MAX_LOGPROBS;
}

void openai_output_release(struct openai_output *o) {
        buf_release(&o->content);
        buf_release(&o->reasoning);
        free(o->finish_reason);
        free(o->error);
        free(o->logprobs);
        free(o->parse_error);
        *o = (struct openai_output){0};
}

/* Appends text, cutting at the cap on a character boundary so the kept text stays valid
 * UTF-8; the cut is marked in b->truncated. */
static int append_text(struct buf *b, const char *p, size_t n) {
        if (n <= b->max - b->len)
                return buf_append(b, p, n) == -ENOMEM ? -ENOMEM : 0;
        size_t room = utf8_char_start(p, n, b->max - b->len);
        int r = buf_append(b, p, room);
        b->truncated = true;
        return r == -ENOMEM ? -ENOMEM : 0;
}

static int set_parse_error(struct openai_output *o, char *msg) {
        if (!msg)
                return -ENOMEM;
        free(o->parse_error);
        o->parse_error = msg;
        return -EBADMSG;
}

static int set_string(char **dst, const char *s) {
        char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        free(*dst);
        *dst = c;
        return 0;
}

/* {"error": {...}} / {"error": "..."} / {"object": "error", "message": ...}: true when the
 * object is an error report, which is then recorded. */
static int take_error(struct openai_output *o, json_t *root, bool *ret_is_error) {
        json_t *e = json_object_get(root, "error");
        json_t *holder = NULL;
        const char *msg = NULL;
        if (json_is_object(e))
                holder = e;
        else if (json_is_string(e))
                msg = json_string_value(e);
        else if (json_is_string(json_object_get(root, "object")) &&
                 strcmp(json_string_value(json_object_get(root, "object")), "error") == 0)
                holder = root;
        if (!holder && !msg) {
                *ret_is_error = false;
                return 0;
        }
        int code = 0;
        _cleanup_free_ char *dumped = NULL;
        if (holder) {
                json_t *c = json_object_get(holder, "code");
                if (json_is_integer(c))
                        code = (int)json_integer_value(c);
                else if (json_is_string(c))
                        code = atoi(json_string_value(c));
                msg = json_string_value(json_object_get(holder, "message"));
                if (!msg) {
                        dumped = json_dumps(holder, JSON_COMPACT);
                        if (!dumped)
                                return -ENOMEM;
                        msg = dumped;
                }
        }
        size_t len = strnlen(msg, OPENAI_MAX_ERROR);
        char *copy = strndup(msg, len);
        if (!copy)
                return -ENOMEM;
        free(o->error);
        o->error = copy;
        o->error_code = code;
        *ret_is_error = true;
        return 0;
}

static double logprob_value(json_t *v, bool *ret_ok) {
        *ret_ok = true;
        if (json_is_number(v))
                return json_number_value(v);
        if (json_is_string(v)) {
                const char *s = json_string_value(v);
                const char *t = (*s == '-' || *s == '+') ? s + 1 : s;
                double sign = *s == '-' ? -1.0 : 1.0;
                if (strcasecmp(t, "nan") == 0)
                        return NAN;
                if (strcasecmp(t, "inf") == 0 || strcasecmp(t, "infinity") == 0)
                        return sign * INFINITY;
                char *end;
                double d = strtod(s, &end);
                if (end != s && *end == '\0')
                        return d;
        }
        *ret_ok = false;
        return 0;
}

static int push_logprob(struct openai_output *o, double v) {
        if (o->n_logprobs >= MIN(o->max_logprobs, OPENAI_MAX_LOGPROBS)) {
                o->logprobs_dropped++;
                return 0;
        }
        if (o->n_logprobs == o->alloc_logprobs) {
                size_t n = o->alloc_logprobs ? o->alloc_logprobs * 2 : 64;
                double *d = realloc(o->logprobs, n * sizeof(*d));
                if (!d)
                        return -ENOMEM;
                o->logprobs = d;
                o->alloc_logprobs = n;
        }
        o->logprobs[o->n_logprobs++] = v;
        return 0;
}

/* chat: logprobs.content[].logprob; completions: logprobs.token_logprobs[] */
static int take_logprobs(struct openai_output *o, json_t *lp) {
        if (!json_is_object(lp))
                return 0;
        json_t *content = json_object_get(lp, "content");
        json_t *tokens = json_object_get(lp, "token_logprobs");
        size_t i;
        json_t *v;
        bool ok;
        if (json_is_array(content)) {
                json_array_foreach(content, i, v) {
                        double d = logprob_value(json_object_get(v, "logprob"), &ok);
                        if (ok && push_logprob(o, d) < 0)
                                return -ENOMEM;
                }
        } else if (json_is_array(tokens)) {
                json_array_foreach(tokens, i, v) {
                        double d = logprob_value(v, &ok);
                        if (ok && push_logprob(o, d) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

static void take_usage(struct openai_output *o, json_t *root) {
        json_t *u = json_object_get(root, "usage");
        if (!json_is_object(u))
                return;
        json_t *p = json_object_get(u, "prompt_tokens"), *c = json_object_get(u, "completion_tokens");
        if (json_is_integer(p))
                o->prompt_tokens = json_integer_value(p);
        if (json_is_integer(c))
                o->completion_tokens = json_integer_value(c);
}

/* Appends a text value: a string, or an array of {"type":"text","text":...} parts. */
static int append_value(struct openai_output *o, struct buf *b, json_t *v) {
        size_t before = b->len;
        int r = 0;
        if (json_is_string(v))
                r = append_text(b, json_string_value(v), json_string_length(v));
        else if (json_is_array(v)) {
                size_t i;
                json_t *part;
                json_array_foreach(v, i, part) {
                        json_t *t = json_object_get(part, "text");
                        if (json_is_string(t))
                                r = append_text(b, json_string_value(t), json_string_length(t));
                        if (r < 0)
                                break;
                }
        }
        if (r == 0 && b->len > before && !o->first_token)
                o->first_token = now_usec();
        return r;
}

/* message (whole response) or delta (stream chunk): content and the first reasoning
 * field present. */
static int take_message(struct openai_output *o, json_t *m) {
        if (!json_is_object(m))
                return 0;
        int r = append_value(o, &o->content, json_object_get(m, "content"));
        if (r < 0)
                return r;
        for (const char *const *f = o->reasoning_fields; *f; f++) {
                json_t *v = json_object_get(m, *f);
                if (json_is_string(v) || json_is_array(v))
                        return append_value(o, &o->reasoning, v);
        }
        return 0;
}

static int take_choice(struct openai_output *o, json_t *root, bool streamed) {
        json_t *choices = json_object_get(root, "choices");
        if (!json_is_array(choices))
                return streamed ? 0 : set_parse_error(o, strdup("response has no \"choices\""));
        if (json_array_size(choices) == 0)
                return streamed ? 0 : set_parse_error(o, strdup("response has an empty \"choices\""));
        /* Only the first choice (index 0) is the answer; n > 1 is never asked for. */
        json_t *c = NULL, *v;
        size_t i;
        json_array_foreach(choices, i, v) {
                json_t *idx = json_object_get(v, "index");
                if (!json_is_integer(idx) || json_integer_value(idx) == 0) {
                        c = v;
                        break;
                }
        }
        if (!json_is_object(c))
                return 0;
        int r = take_message(o, json_object_get(c, streamed ? "delta" : "message"));
        if (r < 0)
                return r;
        r = append_value(o, &o->content, json_object_get(c, "text")); /* completions */
        if (r < 0)
                return r;
        json_t *fr = json_object_get(c, "finish_reason");
        if (json_is_string(fr) && set_string(&o->finish_reason, json_string_value(fr)) < 0)
                return -ENOMEM;
        return take_logprobs(o, json_object_get(c, "logprobs"));
}

static int parse_object(struct openai_output *o, const char *text, size_t len, bool streamed,
                        json_t **ret_root) {
        char *err = NULL;
        json_t *root = NULL;
        int r = openai_json_loads(text, len, &root, &err);
        if (r == -EBADMSG)
                return set_parse_error(o, err);
        if (r < 0)
                return r;
        if (!json_is_object(root)) {
                json_decref(root);
                _cleanup_free_ char *ex = excerpt(text, len, 80);
                return set_parse_error(o, strdup_printf("not a JSON object from server: %s", ex ? ex : ""));
        }
        *ret_root = root;
        return 0;
}

/* One response object or stream chunk: an error object, else the first choice and usage. */
static int take_object(struct openai_output *o, const char *text, size_t len, bool stream) {
        _cleanup_json_ json_t *root = NULL;
        int r = parse_object(o, text, len, stream, &root);
        if (r < 0)
                return r;
        bool is_error;
        r = take_error(o, root, &is_error);
        if (r < 0 || is_error)
                return r;
        r = take_choice(o, root, stream);
        if (r < 0)
                return r;
        take_usage(o, root);
        return 0;
}

int openai_parse_response(struct openai_output *o, const char *body, size_t len) {
        return take_object(o, body, len, false);
}

int openai_stream_event(struct openai_output *o, const char *data, size_t len) {
        o->events++;
        /* [DONE] ends the stream: what a real client reads ends there too */
        if (o->done) {
                o->events_after_done++;
                return 0;
        }
        size_t a = 0, b = len;
        while (a < b && isspace((unsigned char)data[a]))
                a++;
        while (b > a && isspace((unsigned char)data[b - 1]))
                b--;
        if (b - a == 6 && memcmp(data + a, "[DONE]", 6) == 0) {
                o->done = true;
                return 0;
        }
        if (a == b)
                return 0; /* an empty keep-alive event */
        return take_object(o, data + a, b - a, true);
}

/* Moves content[from, to) to reasoning and keeps content[rest..] as the answer. */
static int split_content(struct openai_output *o, size_t from, size_t to, size_t rest) {
        int r = append_text(&o->reasoning, o->content.data + from, to - from);
        if (r < 0)
                return r;
        while (rest < o->content.len && isspace((unsigned char)o->content.data[rest]))
                rest++;
        buf_consume(&o->content, rest);
        o->think_tags = true;
        return 0;
}

int openai_output_finish(struct openai_output *o) {
        if (o->reasoning.len > 0 || o->content.len == 0)
                return 0;
        const char *s = o->content.data;
        size_t n = o->content.len, i = 0;
        while (i < n && isspace((unsigned char)s[i]))
                i++;
        static const char open[] = "<think>", close[] = "</think>";
        const char *end = memmem(s, n, close, sizeof(close) - 1);
        if (n - i >= sizeof(open) - 1 && memcmp(s + i, open, sizeof(open) - 1) == 0) {
                size_t from = i + sizeof(open) - 1;
                end = memmem(s + from, n - from, close, sizeof(close) - 1);
                if (!end) /* still thinking when it stopped: all reasoning, no answer */
                        return split_content(o, from, n, n);
                size_t to = (size_t)(end - s);
                return split_content(o, from, to, to + sizeof(close) - 1);
        }
        /* Templates that open <think> in the prompt leave only the closing tag. */
        if (end) {
                size_t to = (size_t)(end - s);
                return split_content(o, i, to, to + sizeof(close) - 1);
        }
        return 0;
}

int openai_parse_models(const char *body, size_t len, char **ret_id, size_t *ret_count, char **ret_error) {
        _cleanup_json_ json_t *root = NULL;
        char *err = NULL;
        int r = openai_json_loads(body, len, &root, &err);
        if (r < 0) {
                if (ret_error)
                        *ret_error = err;
                else
                        free(err);
                return r;
        }
        json_t *data = json_object_get(root, "data");
        if (!json_is_array(data))
                data = json_object_get(root, "models"); /* llama.cpp's own list */
        if (!json_is_array(data)) {
                if (ret_error) {
                        _cleanup_free_ char *ex = excerpt(body, len, 80);
                        *ret_error = strdup_printf("not a model list: %s", ex ? ex : "");
                }
                return -EBADMSG;
        }
        const char *first = NULL;
        size_t i, count = 0;
        json_t *m;
        json_array_foreach(data, i, m) {
                json_t *id = json_object_get(m, "id");
                if (!json_is_string(id))
                        id = json_object_get(m, "model");
                /* an id with a NUL inside cannot be sent back as the model name */
                if (!json_is_string(id) || json_string_length(id) == 0 ||
                    strlen(json_string_value(id)) != json_string_length(id))
                        continue;
                if (!first)
                        first = json_string_value(id);
                count++;
        }
        if (!first)
                return -ENOENT;
        char *copy = strdup(first);
        if (!copy)
                return -ENOMEM;
        *ret_id = copy;
        if (ret_count)
                *ret_count = count;
        return 0;
}

char *openai_error_message(const char *body, size_t len) {
        json_error_t je;
        json_t *j = json_loadb(body ? body : "", body ? len : 0, 0, &je);
        json_t *e = json_object_get(j, "error"); /* NULL-safe: NULL for a non-object */
        json_t *m = json_is_object(e) ? json_object_get(e, "message") : e;
        if (!json_is_string(m))
                m = json_object_get(j, "detail");
        if (!json_is_string(m))
                m = json_object_get(j, "message");
        char *r = json_is_string(m) && json_string_length(m) > 0 ? strndup(json_string_value(m), json_string_length(m))
                                                                 : NULL;
        json_decref(j);
        return r;
}

json_t *openai_tokenize_request(const char *text, const char *model) {
        json_t *body = json_pack("{s:s, s:s, s:b, s:b, s:b}", "content", text, "prompt", text, "add_special", 0,
                                 "add_special_tokens", 0, "parse_special", 0);
        if (body && model && json_object_set_new(body, "model", json_string(model)) < 0) {
                json_decref(body);
                return NULL;
        }
        return body;
}

int openai_token_count_of(const json_t *o, int64_t *ret) {
        json_t *n = json_object_get(o, "count"), *t = json_object_get(o, "tokens");
        if (json_is_integer(n) && json_integer_value(n) >= 0) {
                *ret = json_integer_value(n);
                return 0;
        }
        if (json_is_array(t)) {
                *ret = (int64_t)json_array_size(t);
                return 0;
        }
        return -EBADMSG;
}

/* A number read from a JSON body by of(); -EBADMSG when the body is not JSON. */
static int parse_body_number(const char *body, size_t len, int (*of)(const json_t *, int64_t *), int64_t *ret) {
        json_t *o = json_loadb(body, len, 0, NULL);
        if (!o)
                return -EBADMSG;
        int r = of(o, ret);
        json_decref(o);
        return r;
}

int openai_parse_token_count(const char *body, size_t len, int64_t *ret) {
        return parse_body_number(body, len, openai_token_count_of, ret);
}

int openai_models_context_of(const json_t *o, int64_t *ret) {
        json_t *m = json_array_get(json_object_get(o, "data"), 0);
        static const char *const keys[] = {"max_model_len", "context_length", "max_context_length"};
        json_t *n = NULL;
        for (size_t i = 0; i < ELEMENTSOF(keys) && !json_is_integer(n); i++)
                n = json_object_get(m, keys[i]);
        if (!json_is_integer(n))
                n = json_object_get(json_object_get(m, "meta"), "n_ctx");
        if (!json_is_integer(n) || json_integer_value(n) <= 0)
                return -ENOENT;
        *ret = json_integer_value(n);
        return 0;
}

int openai_parse_models_context(const char *body, size_t len, int64_t *ret) {
        return parse_body_number(body, len, openai_models_context_of, ret);
}
