/* suite.c -- check suite files: YAML -> checked check specs; the eval's JSONL questions. */
#include "config/suite.h"

#include <regex.h>
#include <string.h>

#include "text/buf.h"
#include "text/text.h"
#include "gate/golden.h"

static const char *const check_keys[] = {"name",     "prompt",     "messages", "mode",   "thinking",
                                         "reasoning", "max_tokens", "stream",   "expect", NULL};
static const char *const expect_keys[] = {"equals", "contains", "regex", "number", NULL};
static const char *const roles[] = {"system", "user", "assistant", "developer", "tool", NULL};

static int parse_messages(struct ytree_ctx *c, const struct ynode *n, json_t **ret) {
        int r = y_seq(c, n, "messages");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return ytree_fail(c, n->line, "messages must not be empty");
        json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                static const char *const keys[] = {"role", "content", NULL};
                const struct ynode *m = n->items[i];
                const char *role = NULL, *content = NULL;
                if ((r = y_map(c, m, "a message")) < 0 || (r = y_check_keys(c, m, keys, "a message")) < 0)
                        goto fail;
                const struct ynode *rn = y_get(m, "role"), *cn = y_get(m, "content");
                if (!rn || !cn) {
                        r = ytree_fail(c, m->line, "a message needs both 'role' and 'content'");
                        goto fail;
                }
                if ((r = y_scalar(c, rn, "role", &role)) < 0 || (r = y_scalar(c, cn, "content", &content)) < 0)
                        goto fail;
                bool known = false;
                for (const char *const *k = roles; *k && !known; k++)
                        known = strcmp(*k, role) == 0;
                if (!known) {
                        _cleanup_free_ char *h = ytree_hint(role, roles, strv_length((char *const *)roles));
                        r = ytree_fail(c, rn->line, "unknown role '%s'%s", ytree_esc(c, role), h ? h : "");
                        goto fail;
                }
                if (json_array_append_new(a, json_pack("{s:s, s:s}", "role", role, "content", content)) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        *ret = a;
        return 0;
fail:
        json_decref(a);
        return r;
}

/* An expectation of kind with value s, checked so that what loads also matches at run
 * time; errors at line. Shared by the YAML suites and the eval's JSONL lines. */
static int expect_set(struct ytree_ctx *c, unsigned line, enum expect_kind kind, const char *s, struct expect *ret) {
        if (kind == EXPECT_REGEX) {
                _cleanup_free_ char *why = NULL;
                if (golden_regex_check(s, &why) < 0)
                        return ytree_fail(c, line, "expect: regular expression '%s' refused: %s", ytree_esc(c, s),
                                    why ? why : "too complex");
                regex_t re;
                int e = regcomp(&re, s, REG_EXTENDED | REG_NOSUB);
                if (e != 0) {
                        char msg[128]; /* regerror's own text, cut to fit */
                        regerror(e, &re, msg, sizeof(msg));
                        return ytree_fail(c, line, "expect: invalid regular expression '%s': %s", ytree_esc(c, s), msg);
                }
                regfree(&re);
        } else if (kind == EXPECT_NUMBER) {
                /* golden_match's own reading of the value, so what loads also matches at
                 * run time (strtod took ".23", "0x1p3" and "inf", which golden refuses) */
                struct expect probe = {EXPECT_NUMBER, (char *)s};
                bool match;
                int e = golden_match(&probe, "0", &match, NULL);
                if (e == -ENOMEM)
                        return e;
                if (e < 0)
                        return ytree_fail(c, line, "expect: number needs a number, not '%s'", ytree_esc(c, s));
        }
        char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        ret->kind = kind;
        ret->value = copy;
        return 0;
}

static int parse_expect(struct ytree_ctx *c, const struct ynode *n, struct expect *ret) {
        static const enum expect_kind kinds[] = {EXPECT_EQUALS, EXPECT_CONTAINS, EXPECT_REGEX, EXPECT_NUMBER};
        enum expect_kind kind = EXPECT_EQUALS;
        const struct ynode *v = n;
        if (n->kind == Y_MAP) {
                if (n->n_items != 2)
                        return ytree_fail(c, n->line, "expect must be a string or a map with one key (equals, contains, regex or number)");
                int r = y_check_keys(c, n, expect_keys, "expect");
                if (r < 0)
                        return r;
                for (size_t i = 0; expect_keys[i]; i++)
                        if (strcmp(n->items[0]->value, expect_keys[i]) == 0)
                                kind = kinds[i];
                v = n->items[1];
        }
        const char *s;
        int r = y_scalar(c, v, "expect", &s);
        if (r < 0)
                return r;
        return expect_set(c, v->line, kind, s, ret);
}

static int parse_check(struct ytree_ctx *c, const struct ynode *n, struct check_spec *spec) {
        int r = y_map(c, n, "a check");
        if (r < 0)
                return r;
        if ((r = y_check_keys(c, n, check_keys, "a check")) < 0)
                return r;
        const struct ynode *v;
        const char *name;
        if (!(v = y_get(n, "name")))
                return ytree_fail(c, n->line, "a check needs a 'name'");
        if ((r = y_name(c, v, "a check name", false, &name)) < 0)
                return r;
        if (!(spec->name = strdup(name)))
                return -ENOMEM;

        spec->mode = CHECK_CHAT;
        if ((v = y_get(n, "mode"))) {
                static const char *const modes[] = {"chat", "completion", "models", NULL};
                const char *s;
                if ((r = y_scalar(c, v, "mode", &s)) < 0)
                        return r;
                if (streq_ptr(s, "chat"))
                        spec->mode = CHECK_CHAT;
                else if (streq_ptr(s, "completion") || streq_ptr(s, "completions"))
                        spec->mode = CHECK_COMPLETION;
                else if (streq_ptr(s, "models"))
                        spec->mode = CHECK_MODELS;
                else {
                        _cleanup_free_ char *h = ytree_hint(s, modes, 3);
                        return ytree_fail(c, v->line, "unknown mode '%s'%s", ytree_esc(c, s), h ? h : "");
                }
        }

        const struct ynode *pn = y_get(n, "prompt"), *mn = y_get(n, "messages");
        if (spec->mode == CHECK_MODELS) {
                if (pn || mn || y_get(n, "expect"))
                        return ytree_fail(c, n->line, "check '%s': mode models takes no prompt, messages or expect",
                                    ytree_esc(c, name));
        } else if (pn && mn)
                return ytree_fail(c, mn->line, "check '%s': give prompt or messages, not both", ytree_esc(c, name));
        else if (!pn && !mn)
                return ytree_fail(c, n->line, "check '%s' needs a prompt (or messages)", ytree_esc(c, name));
        else if (mn && spec->mode != CHECK_CHAT)
                return ytree_fail(c, mn->line, "check '%s': messages need mode chat", ytree_esc(c, name));
        if (pn && (r = y_string(c, pn, "prompt", &spec->prompt)) < 0)
                return r;
        if (mn && (r = parse_messages(c, mn, &spec->messages)) < 0)
                return r;

        spec->thinking = THINKING_UNSET;
        if ((v = y_get(n, "thinking"))) {
                bool b;
                if ((r = y_bool(c, v, "thinking", &b)) < 0)
                        return r;
                spec->thinking = b ? THINKING_ON : THINKING_OFF;
        }
        spec->require_reasoning = spec->thinking == THINKING_ON;
        if ((v = y_get(n, "reasoning"))) {
                if ((r = y_bool(c, v, "reasoning", &spec->require_reasoning)) < 0)
                        return r;
                if (spec->require_reasoning && spec->thinking == THINKING_OFF)
                        return ytree_fail(c, v->line, "check '%s': reasoning: true needs thinking on", ytree_esc(c, name));
        }
        if ((v = y_get(n, "max_tokens")) && (r = y_int(c, v, "max_tokens", 1, 1000000, &spec->max_tokens)) < 0)
                return r;

        spec->stream = spec->mode == CHECK_MODELS ? STREAM_NO : STREAM_BOTH;
        if ((v = y_get(n, "stream"))) {
                bool b;
                if (v->kind == Y_SCALAR && streq_ptr(v->value, "both"))
                        spec->stream = STREAM_BOTH;
                else if (v->kind == Y_SCALAR && v->plain && y_bool(c, v, "stream", &b) == 0)
                        spec->stream = b ? STREAM_YES : STREAM_NO;
                else {
                        free(c->error); /* y_bool's message is the wrong one here */
                        c->error = NULL;
                        return ytree_fail(c, v->line, "stream must be true, false or both, not %s", y_describe(c, v));
                }
        }
        if ((v = y_get(n, "expect")) && (r = parse_expect(c, v, &spec->expect)) < 0)
                return r;
        return 0;
}

int suite_parse_checks(struct ytree_ctx *c, const struct ynode *n, struct check_spec **ret, size_t *ret_n) {
        int r = y_seq(c, n, "checks");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return ytree_fail(c, n->line, "the check list is empty");
        if (n->n_items > SUITE_MAX_CHECKS)
                return ytree_fail(c, n->line, "too many checks (%zu, at most %d)", n->n_items, SUITE_MAX_CHECKS);
        struct check_spec *specs = calloc(n->n_items, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                r = parse_check(c, n->items[i], &specs[i]);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (strcmp(specs[j].name, specs[i].name) == 0)
                                r = ytree_fail(c, n->items[i]->line, "check name '%s' appears twice", ytree_esc(c, specs[i].name));
                if (r < 0) {
                        checks_free_suite(specs, n->n_items);
                        return r;
                }
        }
        *ret = specs;
        *ret_n = n->n_items;
        return 0;
}

int suite_load_checks_string(const char *text, size_t len, const char *name, struct check_spec **ret, size_t *ret_n,
                             char **ret_error) {
        struct ytree_ctx c = {.name = name};
        struct ytree d = {0};
        int r = ytree_load(&c, text, len, &d);
        const struct ynode *list = d.root;
        if (r >= 0 && list->kind == Y_MAP) {
                static const char *const keys[] = {"checks", NULL};
                r = y_check_keys(&c, list, keys, "a check suite");
                if (r >= 0 && !(list = y_get(d.root, "checks")))
                        r = ytree_fail(&c, d.root->line, "a check suite needs 'checks:' with a list");
        }
        if (r >= 0)
                r = suite_parse_checks(&c, list, ret, ret_n);
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(c.error);
        ytree_release(&d);
        ytree_ctx_release(&c);
        return r;
}

int suite_load_checks_file(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = ytree_read_path(path, &text, &len, ret_error);
        if (r < 0)
                return r;
        return suite_load_checks_string(text, len, path, ret, ret_n, ret_error);
}


/* ---- the eval's JSONL files ---- */

static const char *const jsonl_keys[] = {"id", "prompt", "messages", "expect", NULL};

static const char *json_type_words(const json_t *v) {
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "a list";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
                return "null";
        }
        return "something else";
}

static int jsonl_messages(struct ytree_ctx *c, unsigned line, json_t *m, json_t **ret) {
        if (!json_is_array(m) || json_array_size(m) == 0)
                return ytree_fail(c, line, "messages must be a non-empty list of {role, content}");
        json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(m, i, e) {
                json_t *role = json_object_get(e, "role"), *content = json_object_get(e, "content");
                int r = 0;
                if (!json_is_object(e) || json_object_size(e) != 2 || !json_is_string(role) || !json_is_string(content))
                        r = ytree_fail(c, line, "message %zu must be {\"role\": ..., \"content\": ...} with two strings", i + 1);
                bool known = false;
                for (const char *const *k = roles; r >= 0 && *k && !known; k++)
                        known = strcmp(*k, json_string_value(role)) == 0;
                if (r >= 0 && !known) {
                        _cleanup_free_ char *h = ytree_hint(json_string_value(role), roles, strv_length((char *const *)roles));
                        r = ytree_fail(c, line, "unknown role '%s'%s", ytree_esc(c, json_string_value(role)), h ? h : "");
                }
                if (r >= 0 && json_array_append_new(a, json_pack("{s:s, s:s}", "role", json_string_value(role), "content",
                                                                 json_string_value(content))) < 0)
                        r = -ENOMEM;
                if (r < 0) {
                        json_decref(a);
                        return r;
                }
        }
        *ret = a;
        return 0;
}

static int jsonl_expect(struct ytree_ctx *c, unsigned line, json_t *e, struct expect *ret) {
        static const enum expect_kind kinds[] = {EXPECT_EQUALS, EXPECT_CONTAINS, EXPECT_REGEX, EXPECT_NUMBER};
        if (json_is_string(e))
                return expect_set(c, line, EXPECT_EQUALS, json_string_value(e), ret);
        if (!json_is_object(e) || json_object_size(e) != 1)
                return ytree_fail(c, line, "expect must be a string or an object with one key (equals, contains, regex or number)");
        const char *key = json_object_iter_key(json_object_iter(e));
        json_t *v = json_object_iter_value(json_object_iter(e));
        int k = -1;
        for (int i = 0; expect_keys[i]; i++)
                if (strcmp(key, expect_keys[i]) == 0)
                        k = i;
        if (k < 0) {
                _cleanup_free_ char *h = ytree_hint(key, expect_keys, 4);
                return ytree_fail(c, line, "unknown key '%s' in expect%s", ytree_esc(c, key), h ? h : "");
        }
        if (kinds[k] == EXPECT_NUMBER && json_is_integer(v)) {
                char b[32];
                snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
                return expect_set(c, line, EXPECT_NUMBER, b, ret);
        }
        if (kinds[k] == EXPECT_NUMBER && json_is_real(v)) {
                char b[64];
                snprintf(b, sizeof(b), "%.17g", json_real_value(v));
                return expect_set(c, line, EXPECT_NUMBER, b, ret);
        }
        if (!json_is_string(v))
                return ytree_fail(c, line, "expect: %s needs a string, not %s", key, json_type_words(v));
        return expect_set(c, line, kinds[k], json_string_value(v), ret);
}

static int jsonl_line(struct ytree_ctx *c, unsigned line, const char *text, size_t len, struct check_spec *spec) {
        json_error_t je;
        _cleanup_json_ json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        if (!o) {
                /* jansson quotes the bytes where it stopped: the file's, escaped to one line */
                _cleanup_buf_ struct buf why;
                buf_init(&why, sizeof(je.text) * 4 + 1);
                return ytree_fail(c, line, "not JSON: %s",
                                  text_escape(&why, je.text, 0, TEXT_TERMINAL) == 0 ? buf_str(&why) : "(unreadable)");
        }
        if (!json_is_object(o))
                return ytree_fail(c, line, "a question must be a JSON object, not %s", json_type_words(o));
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v) {
                bool known = false;
                for (const char *const *k = jsonl_keys; *k && !known; k++)
                        known = strcmp(*k, key) == 0;
                if (!known) {
                        _cleanup_free_ char *h = ytree_hint(key, jsonl_keys, 4);
                        return ytree_fail(c, line, "unknown key '%s' in a question%s", ytree_esc(c, key), h ? h : "");
                }
        }
        json_t *id = json_object_get(o, "id"), *prompt = json_object_get(o, "prompt"),
               *messages = json_object_get(o, "messages"), *expect = json_object_get(o, "expect");
        if (prompt && messages)
                return ytree_fail(c, line, "give prompt or messages, not both");
        if (!prompt && !messages)
                return ytree_fail(c, line, "a question needs a prompt (or messages)");
        if (!expect)
                return ytree_fail(c, line, "a question needs an expect (the answer it must get)");
        if (id && (!json_is_string(id) || json_string_length(id) == 0))
                return ytree_fail(c, line, "id must be a non-empty string");
        if (id) {
                for (const unsigned char *p = (const unsigned char *)json_string_value(id); *p; p++)
                        if (*p < 0x20 || *p == 0x7f)
                                return ytree_fail(c, line, "id must not contain control characters");
        }
        spec->mode = CHECK_CHAT;
        spec->thinking = THINKING_UNSET;
        spec->stream = STREAM_NO;
        spec->name = id ? strdup(json_string_value(id)) : strdup_printf("line-%u", line);
        if (!spec->name)
                return -ENOMEM;
        int r;
        if (prompt) {
                if (!json_is_string(prompt))
                        return ytree_fail(c, line, "prompt must be a string, not %s", json_type_words(prompt));
                if (!(spec->prompt = strdup(json_string_value(prompt))))
                        return -ENOMEM;
        } else if ((r = jsonl_messages(c, line, messages, &spec->messages)) < 0)
                return r;
        return jsonl_expect(c, line, expect, &spec->expect);
}

static int name_ptr_cmp(const void *a, const void *b) {
        return strcmp((*(const struct check_spec *const *)a)->name, (*(const struct check_spec *const *)b)->name);
}

int suite_parse_jsonl(const char *text, size_t len, const char *name, struct check_spec **ret, size_t *ret_n,
                      char **ret_error) {
        struct ytree_ctx c = {.name = name};
        struct check_spec *specs = NULL;
        _cleanup_free_ unsigned *lines = NULL;
        size_t n = 0, alloc = 0;
        unsigned line = 0;
        int r = 0;
        if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) { /* a byte order mark */
                text += 3;
                len -= 3;
        }
        for (size_t at = 0; at < len && r >= 0;) {
                const char *p = text + at;
                const char *nl = memchr(p, '\n', len - at);
                size_t k = nl ? (size_t)(nl - p) : len - at;
                at += k + (nl ? 1 : 0);
                line++;
                size_t w = 0;
                while (w < k && (p[w] == ' ' || p[w] == '\t' || p[w] == '\r'))
                        w++;
                if (w == k)
                        continue; /* a blank line */
                if (k > SUITE_MAX_JSONL_LINE) {
                        r = ytree_fail(&c, line, "the line is over %zu bytes", SUITE_MAX_JSONL_LINE);
                        break;
                }
                if (n == EVAL_MAX_QUESTIONS) {
                        r = ytree_fail(&c, line, "too many questions (at most %d)", EVAL_MAX_QUESTIONS);
                        break;
                }
                if (n == alloc) {
                        size_t na = alloc ? alloc * 2 : 64;
                        struct check_spec *t = realloc(specs, na * sizeof(*t));
                        if (t)
                                specs = t;
                        unsigned *tl = t ? realloc(lines, na * sizeof(*tl)) : NULL;
                        if (!t || !tl) {
                                r = -ENOMEM;
                                break;
                        }
                        lines = tl;
                        alloc = na;
                }
                specs[n] = (struct check_spec){0};
                lines[n] = line;
                r = jsonl_line(&c, line, p, k, &specs[n]);
                n++;
        }
        if (r >= 0 && n == 0)
                r = ytree_fail(&c, line ? line : 1, "the file holds no question");
        if (r >= 0) {
                /* ids are unique, as check names are */
                _cleanup_free_ struct check_spec **sorted = malloc(n * sizeof(*sorted));
                if (!sorted)
                        r = -ENOMEM;
                for (size_t i = 0; r >= 0 && i < n; i++)
                        sorted[i] = &specs[i];
                if (r >= 0)
                        qsort(sorted, n, sizeof(*sorted), name_ptr_cmp);
                for (size_t i = 1; r >= 0 && i < n; i++)
                        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
                                const struct check_spec *later = MAX(sorted[i - 1], sorted[i]);
                                r = ytree_fail(&c, lines[later - specs], "question id '%s' appears twice",
                                               ytree_esc(&c, later->name));
                        }
        }
        if (r < 0) {
                checks_free_suite(specs, n);
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ytree_ctx_release(&c);
                return r;
        }
        ytree_ctx_release(&c);
        *ret = specs;
        *ret_n = n;
        return 0;
}

int suite_load_jsonl(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_file_capped(path, SUITE_MAX_JSONL, &text, &len);
        if (r == -EFBIG) {
                if (ret_error)
                        *ret_error = strdup_printf("%s:1: the file is over %zu bytes", path, SUITE_MAX_JSONL);
                return -EINVAL;
        }
        if (r < 0) {
                if (ret_error)
                        *ret_error = strdup_printf("cannot read '%s': %s", path, file_strerror(r));
                return r == -ENOTREG ? -EINVAL : r;
        }
        return suite_parse_jsonl(text, len, path, ret, ret_n, ret_error);
}
